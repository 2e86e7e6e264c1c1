//! Code that expansions run: arithmetic evaluates variable values and substitution output as
//! expressions (and `a[$(cmd)]` in one runs `cmd`); `${x@P}` and prompt strings expand
//! command substitutions in a value.
//!
//! Arithmetic contexts: `$((…))`, `((…))`, the header of `for ((…))`, `let` arguments, the
//! operands of `[[ … -eq … ]]` (and `-ne`, `-lt`, `-le`, `-gt`, `-ge`), subscripts of
//! indexed arrays, and assignments to variables declared `-i`. A value in one is fine when
//! it is a number or known to hold one; a static value is checked as the expression bash
//! makes of it; a value only known at run time is `arithmetic-eval`.

use std::rc::Rc;

use tree_sitter::Node;

use super::values::counts;
use super::{Analyzer, Cx};
use crate::rules::RuleId;
use crate::source::Mapped;
use crate::syntax::named_children;
use crate::word::{FIELD, is_name};

/// Variables bash keeps numeric (or that the hook runner sets to numbers).
pub(super) const NUMERIC_SPECIALS: &[&str] = &[
    "#",
    "?",
    "$",
    "!",
    "RANDOM",
    "SRANDOM",
    "SECONDS",
    "LINENO",
    "BASHPID",
    "PPID",
    "UID",
    "EUID",
    "EPOCHSECONDS",
    "EPOCHREALTIME",
    "OPTIND",
    "BASH_SUBSHELL",
    "SHLVL",
    "COLUMNS",
    "LINES",
    "HISTCMD",
    "GROUPS",
];

/// Static values followed through other variables' names (`x=y; y=z; $((x))`).
const MAX_FOLLOW: usize = 4;

/// `-eq` and the other operators that make `[[ … ]]` evaluate both sides as arithmetic.
const ARITHMETIC_TESTS: &[&str] = &["-eq", "-ne", "-lt", "-le", "-gt", "-ge"];

/// What a value used in arithmetic is.
enum Operand {
    /// A number, or known to hold one.
    Number,
    /// A static expression (to be checked as code).
    Expression(String),
    /// Only known at run time.
    Unknown,
}

impl Analyzer {
    /// An arithmetic context: `$((…))`, `((…))`, a `for ((…))` header.
    pub(super) fn arithmetic(&mut self, cx: Cx<'_, '_>, node: Node<'_>) {
        let parts = match node.kind() {
            "c_style_for_statement" => named_children(node)
                .into_iter()
                .filter(|c| c.kind() != "do_group" && c.kind() != "compound_statement")
                .collect(),
            _ => vec![node],
        };
        for part in parts {
            self.expression(cx, part, node);
        }
    }

    /// `[[ A -eq B ]]`: both operands are arithmetic.
    pub(super) fn test_arithmetic(&mut self, cx: Cx<'_, '_>, node: Node<'_>) {
        // `[ -v NAME ]` evaluates a subscript of NAME as `[[ -v NAME ]]` does; only `[[`
        // evaluates the operands of `-eq`… as arithmetic.
        let double = cx.src.text[node.byte_range()].starts_with("[[");
        let tests = crate::syntax::descendants(node)
            .filter(|_| double)
            .take_while(|n| self.budget.charge(1, cx.src.orig(n.byte_range())))
            .filter(|n| n.kind() == "binary_expression")
            .filter(|n| {
                n.child_by_field_name("operator")
                    .is_some_and(|op| ARITHMETIC_TESTS.contains(&&cx.src.text[op.byte_range()]))
            })
            .collect::<Vec<_>>();
        let names = crate::syntax::descendants(node)
            .take(1024)
            .filter(|n| n.kind() == "unary_expression")
            .filter(|n| {
                n.child_by_field_name("operator")
                    .is_some_and(|op| &cx.src.text[op.byte_range()] == "-v")
            })
            .filter_map(|n| named_children(n).last().copied())
            .collect::<Vec<_>>();
        for name in names {
            let word = crate::word::Word::read(cx.src, name);
            self.name_argument(cx, &word);
        }
        for test in tests {
            for side in ["left", "right"] {
                if let Some(operand) = test.child_by_field_name(side) {
                    self.expression(cx, operand, test);
                }
            }
        }
    }

    /// The subscript `name[index]` of an expansion or assignment: arithmetic, unless `name`
    /// is an associative array or the index is `@`/`*`.
    pub(super) fn subscript(&mut self, cx: Cx<'_, '_>, node: Node<'_>) {
        let array = node
            .child_by_field_name("name")
            .map_or("", |n| &cx.src.text[n.byte_range()]);
        if self.tracked.associative.contains(array) {
            return;
        }
        if let Some(index) = node.child_by_field_name("index") {
            let raw = &cx.src.text[index.byte_range()];
            if raw != "@" && raw != "*" {
                self.expression(cx, index, node);
            }
        }
    }

    /// The value `node` assigned to a variable declared integer.
    pub(super) fn integer_value(&mut self, cx: Cx<'_, '_>, node: Node<'_>) {
        let word = crate::word::Word::read(cx.src, node);
        let span = cx.src.orig(node.byte_range());
        self.let_expressions(cx, std::slice::from_ref(&word), span);
    }

    /// `let EXPR…`: each word is an arithmetic expression.
    pub(crate) fn let_expressions(
        &mut self,
        cx: Cx<'_, '_>,
        words: &[crate::word::Word<'_>],
        span: std::ops::Range<usize>,
    ) {
        for word in words {
            if word.unknown {
                self.report_arithmetic(span.clone(), &word.text);
            } else if !word.text.trim().is_empty() && word.text.trim().parse::<i64>().is_err() {
                self.nested_expression(cx, &word.text, word.span.clone());
            }
        }
    }

    /// A variable name given as an argument (`unset NAME`, `read NAME`, `[[ -v NAME ]]`,
    /// `printf -v NAME`): a subscript in it is arithmetic (`unset 'a[$(cmd)]'` runs `cmd`),
    /// and a name only known at run time may hold one.
    pub(crate) fn name_argument(&mut self, cx: Cx<'_, '_>, word: &crate::word::Word<'_>) {
        if word.unknown {
            self.report_arithmetic(word.span.clone(), &word.text);
            return;
        }
        let Some((_, rest)) = word.text.split_once('[') else {
            return;
        };
        let index = rest.strip_suffix(']').unwrap_or(rest);
        if !matches!(index, "@" | "*") {
            let index = crate::word::Word {
                text: index.to_owned(),
                ..word.clone()
            };
            self.let_expressions(cx, std::slice::from_ref(&index), word.span.clone());
        }
    }

    /// `unset NAME…`: subscripts in the names are arithmetic.
    pub(super) fn unset_subscripts(&mut self, cx: Cx<'_, '_>, node: Node<'_>) {
        for child in named_children(node) {
            let word = crate::word::Word::read(cx.src, child);
            if !word.text.starts_with('-') {
                self.name_argument(cx, &word);
            }
        }
    }

    /// Checks the arithmetic expression `node` (within the context `context`, whose span the
    /// findings get): every variable it reads, expansion it splices and substitution whose
    /// output it evaluates.
    fn expression(&mut self, cx: Cx<'_, '_>, node: Node<'_>, context: Node<'_>) {
        let span = cx.src.orig(context.byte_range());
        let mut stack = vec![node];
        while let Some(n) = stack.pop() {
            if !self.budget.charge(1, span.clone()) {
                return;
            }
            let name = match n.kind() {
                "variable_assignment" => {
                    // `for ((i = 0; …))`: `i` is written, its value read.
                    if let Some(target) = n.child_by_field_name("name") {
                        self.tracked
                            .assigned(&cx.src.text[target.byte_range()], true);
                    }
                    stack.extend(n.child_by_field_name("value"));
                    None
                }
                "variable_name" | "word" if !is_assigned(cx, n) => {
                    Some(cx.src.text[n.byte_range()].to_owned())
                }
                "variable_name" | "word" => {
                    self.tracked.assigned(&cx.src.text[n.byte_range()], true);
                    None
                }
                "simple_expansion" | "expansion" => {
                    match expansion_name(&cx.src.text[n.byte_range()]) {
                        Some(name) => Some(name),
                        None => {
                            self.report_arithmetic(span.clone(), &cx.src.text[n.byte_range()]);
                            return;
                        }
                    }
                }
                "command_substitution" => {
                    if !counts(cx, n) {
                        self.report_arithmetic(span.clone(), &cx.src.text[n.byte_range()]);
                        return;
                    }
                    None
                }
                _ => {
                    stack.extend(named_children(n));
                    None
                }
            };
            let Some(name) = name.filter(|t| starts_identifier(t)) else {
                continue;
            };
            match self.operand(cx, &name) {
                Operand::Number => {}
                Operand::Expression(text) => {
                    self.nested_expression(cx, &text, span.clone());
                }
                Operand::Unknown => {
                    self.report_arithmetic(span.clone(), &name);
                    return;
                }
            }
        }
    }

    /// What the variable `name` holds, for arithmetic: its static value followed through
    /// other names.
    fn operand(&self, cx: Cx<'_, '_>, name: &str) -> Operand {
        let mut name = name.to_owned();
        for _ in 0..MAX_FOLLOW {
            if NUMERIC_SPECIALS.contains(&name.as_str()) || self.tracked.numeric.contains(&name) {
                return Operand::Number;
            }
            let Some(value) = static_value(cx, &name) else {
                return Operand::Unknown;
            };
            let value = value.trim().to_owned();
            if value.is_empty() || value.parse::<i64>().is_ok() {
                return Operand::Number;
            }
            if !starts_identifier(&value) || !is_name(&value) {
                return Operand::Expression(value);
            }
            name = value;
        }
        Operand::Unknown
    }

    /// Parses `text` as the arithmetic expression `((text))` and checks it (the substitutions
    /// in it run); findings point at `span`.
    fn nested_expression(&mut self, cx: Cx<'_, '_>, text: &str, span: std::ops::Range<usize>) {
        let mut code = Mapped::default();
        code.push(&format!("(({text}))"), span.clone());
        let src = cx.src.nested(code, Rc::clone(&cx.src.args));
        // The expression reads the variables of the text it came from.
        let vars = cx.src.vars.borrow().clone();
        if !self.budget.charge(vars.len(), span.clone()) {
            return;
        }
        *src.vars.borrow_mut() = vars;
        self.source(&src, cx.nesting + 1, span);
    }

    fn report_arithmetic(&mut self, span: std::ops::Range<usize>, what: &str) {
        let shown: String = what.chars().take(60).collect();
        self.report(
            RuleId::ArithmeticEval,
            span,
            format!(
                "arithmetic evaluates `{shown}`, a value only known at run time, as an expression: `a[$(cmd)]` in it would run `cmd`"
            ),
        );
    }

    /// `${x@P}`: the value of `x` is expanded like a prompt, command substitutions included.
    pub(super) fn prompt_expansion(&mut self, cx: Cx<'_, '_>, node: Node<'_>) {
        let raw = &cx.src.text[node.byte_range()];
        let Some(inner) = raw.strip_prefix("${").and_then(|r| r.strip_suffix("@P}")) else {
            return;
        };
        let span = cx.src.orig(node.byte_range());
        let value = is_name(inner)
            .then(|| cx.src.vars.borrow().get(inner).cloned().flatten())
            .flatten();
        match value {
            Some(text) => {
                let mut code = Mapped::default();
                code.push(&text, span);
                self.prompt_code(cx, code);
            }
            None => self.report(
                RuleId::HiddenCode,
                span,
                format!(
                    "`{raw}` expands a run-time value like a prompt: the command substitutions in it run"
                ),
            ),
        }
    }

    /// The command substitutions in a prompt string (`PS1`, `PS4`, a `${x@P}` value), checked
    /// as code.
    pub(crate) fn prompt_code(&mut self, cx: Cx<'_, '_>, code: Mapped) {
        if !code.text.contains("$(") && !code.text.contains('`') {
            return;
        }
        let len = code.text.len();
        let src = cx.src.nested(code, Rc::clone(&cx.src.args));
        let inner = Cx {
            src: &src,
            nesting: cx.nesting,
        };
        self.unparsed_substitutions(inner, 0..len);
    }
}

/// The static value of the variable or positional parameter `name` (of an array, its first
/// element), when known.
fn static_value(cx: Cx<'_, '_>, name: &str) -> Option<String> {
    let vars = cx.src.vars.borrow();
    if let Ok(n) = name.parse::<usize>() {
        if let (Some(set), true) = (vars.get("@"), n > 0) {
            let list = set.as_deref()?;
            return Some(list.split(FIELD).nth(n - 1).unwrap_or_default().to_owned());
        }
        let arg = cx.src.args.get(n)?;
        return (!arg.unknown && !arg.any).then(|| arg.text.clone());
    }
    let value = vars.get(name)?.as_deref()?;
    Some(value.split(FIELD).next().unwrap_or_default().to_owned())
}

/// Whether the name node `n` is the target of an `=` assignment in arithmetic
/// (`(( total = a + b ))`), which it does not read.
fn is_assigned(cx: Cx<'_, '_>, n: Node<'_>) -> bool {
    let Some(parent) = n.parent() else {
        return false;
    };
    let left = parent
        .child_by_field_name("left")
        .is_some_and(|l| l.id() == n.id());
    let operator = parent
        .child(1)
        .filter(|op| !op.is_named())
        .map(|op| &cx.src.text[op.byte_range()]);
    left && parent.kind() == "binary_expression" && operator == Some("=")
}

/// The variable an arithmetic `$x` / `${x}` reads (`None` for other expansions, whose value
/// is not known: `${x:-…}`, `${#x}` is fine though).
fn expansion_name(raw: &str) -> Option<String> {
    if let Some(name) = raw.strip_prefix("${").and_then(|r| r.strip_suffix('}')) {
        if name.starts_with('#') {
            return Some("#".to_owned());
        }
        return is_name(name)
            .then(|| name.to_owned())
            .or_else(|| NUMERIC_SPECIALS.contains(&name).then(|| name.to_owned()));
    }
    let name = raw.strip_prefix('$')?;
    Some(name.to_owned())
}

/// Whether `text` starts like a variable name (a letter or `_`), or is a special parameter.
fn starts_identifier(text: &str) -> bool {
    text.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        || NUMERIC_SPECIALS.contains(&text)
        || text.parse::<usize>().is_ok_and(|_| !text.is_empty())
}
