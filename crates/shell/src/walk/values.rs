//! Variable values a plain word reading misses: arrays (`a=(rm -rf /)`), appends (`X+=…`),
//! array elements, `declare` flags (namerefs `-n`, integers `-i`, associative arrays `-A`),
//! loop variables; and which variables hold numbers (for the arithmetic rule).

use tree_sitter::Node;

use super::{Analyzer, Cx};
use crate::commands::variables;
use crate::syntax::{fields, named_children};
use crate::word::{FIELD, Word};

/// Namerefs remembered per analysis (more are declared as usual, only not followed).
const MAX_NAMEREFS: usize = 64;

/// Commands whose output is a number (a count, a time, an id): a variable assigned their
/// output holds a number.
const COUNTERS: &[&str] = &[
    "wc", "date", "nproc", "id", "expr", "getconf", "tput", "seq", "stat",
];

impl Analyzer {
    /// For [`Analyzer::assignment`]: what else the assignment `node` means (arrays,
    /// appends, elements, `declare` flags, special variables, numbers). `standalone`: not
    /// the `X=/ cmd` prefix form (whose value the command's own words do not see); `word`:
    /// the value as read. Returns whether it recorded the variable's value itself.
    pub(super) fn assigned(
        &mut self,
        cx: Cx<'_, '_>,
        node: Node<'_>,
        standalone: bool,
        word: Option<&Word<'_>>,
    ) -> bool {
        let Some(name_node) = node.child_by_field_name("name") else {
            return false;
        };
        let value = node.child_by_field_name("value");
        let flags = declaration_flags(cx, node);
        if name_node.kind() == "subscript" {
            self.element_assigned(cx, name_node, word.filter(|_| standalone));
            return true;
        }
        let name = &cx.src.text[name_node.byte_range()];
        let span = cx.src.orig(node.byte_range());
        let raw = value.map_or("", |v| &cx.src.text[v.byte_range()]);
        let empty = Word::literal("", span.clone());
        if flags.contains('n') && standalone {
            self.nameref_declared(name, word);
        } else {
            let target = self.nameref_target(name);
            variables::variable(self, cx, &target, word.unwrap_or(&empty), raw, span);
        }
        if !standalone {
            return false;
        }
        if flags.contains('i') {
            self.tracked.integers.insert(name.to_owned());
        }
        if flags.contains('A') {
            self.tracked.associative.insert(name.to_owned());
        }
        let append = is_append(cx, node, name_node);
        let stored = match value {
            _ if flags.contains('n') => Some(nameref(cx, word)),
            Some(v) if v.kind() == "array" => Some(array(cx, v)),
            Some(_) if append => word.map(scalar),
            _ => None,
        };
        let handled = stored.is_some();
        if let Some(new) = stored {
            let old = cx.src.vars.borrow().get(name).cloned();
            let value = match (append, old, new) {
                (true, Some(Some(old)), Some(new))
                    if value.is_some_and(|v| v.kind() == "array") =>
                {
                    Some(join([old, new]))
                }
                (true, Some(Some(old)), Some(new)) => Some(old + &new),
                (true, Some(None), _) | (_, _, None) => None,
                (_, _, new) => new,
            };
            cx.src.assign(name, value);
        }
        let numeric = value.is_some_and(|v| is_number(cx, v));
        self.tracked.assigned(name, numeric);
        if let (Some(v), true) = (value, self.tracked.integers.contains(name)) {
            self.integer_value(cx, v);
        }
        handled
    }

    /// `declare -n NAME=TARGET`: assignments to NAME set TARGET from now on (a TARGET only
    /// known at run time is not followed: `local -n list=$1` is how functions take arrays).
    fn nameref_declared(&mut self, name: &str, target: Option<&Word<'_>>) {
        let target = target.filter(|w| !w.unknown).map(|w| w.text.clone());
        if self.tracked.namerefs.len() < MAX_NAMEREFS || self.tracked.namerefs.contains_key(name) {
            self.tracked.namerefs.insert(name.to_owned(), target);
        }
    }

    /// The variable an assignment to `name` sets: `name`, or what the nameref `name` points
    /// to (followed a few times).
    fn nameref_target(&self, name: &str) -> String {
        let mut current = name;
        for _ in 0..8 {
            match self.tracked.namerefs.get(current) {
                Some(Some(next)) if next != current => current = next,
                _ => break,
            }
        }
        current.to_owned()
    }

    /// `a[N]=x`: the element changes (a subscript or value not known statically forgets the
    /// array); the subscript is arithmetic.
    fn element_assigned(&mut self, cx: Cx<'_, '_>, subscript: Node<'_>, value: Option<&Word<'_>>) {
        let Some(array) = subscript.child_by_field_name("name") else {
            return;
        };
        let name = cx.src.text[array.byte_range()].to_owned();
        self.subscript(cx, subscript);
        let index = subscript
            .child_by_field_name("index")
            .and_then(|i| cx.src.text[i.byte_range()].parse::<usize>().ok())
            .filter(|_| !self.tracked.associative.contains(&name));
        let old = cx.src.vars.borrow().get(&name).cloned();
        let elements = match old {
            None => Some(Vec::new()),
            Some(Some(list)) => Some(list.split(FIELD).map(str::to_owned).collect()),
            Some(None) => None,
        };
        let updated = match (elements, index, value.filter(|v| !v.unknown)) {
            (Some(mut elements), Some(i), Some(v)) if i < 1024 => {
                if elements.len() <= i {
                    elements.resize(i + 1, String::new());
                }
                elements[i] = v.text.clone();
                Some(join(elements))
            }
            _ => None,
        };
        cx.src.assign(&name, updated);
        self.tracked.assigned(&name, false);
    }

    /// `declare|local|typeset|export|readonly [-flags] NAME…`: names declared without a value.
    pub(super) fn declaration(&mut self, cx: Cx<'_, '_>, node: Node<'_>) {
        let flags = flags_of(cx, node);
        let keyword = cx.src.text[node.byte_range()]
            .split_whitespace()
            .next()
            .unwrap_or_default();
        for child in named_children(node) {
            if child.kind() != "variable_name" {
                continue;
            }
            let name = &cx.src.text[child.byte_range()];
            if flags.contains('i') {
                self.tracked.integers.insert(name.to_owned());
            }
            if flags.contains('A') {
                self.tracked.associative.insert(name.to_owned());
            }
            if flags.contains('n') {
                cx.src.assign(name, None);
            } else if keyword == "local" {
                // A new local variable starts empty.
                cx.src.assign(name, Some(String::new()));
            }
        }
    }

    /// `for NAME in WORD…` (and `select`): NAME takes each value in turn; one static value is
    /// kept, several (or `for NAME; do`, over `"$@"`) are unknown. Numbers stay numbers.
    pub(super) fn loop_variable(&mut self, cx: Cx<'_, '_>, node: Node<'_>) {
        let mut name = None;
        let mut values = Vec::new();
        let mut numeric = true;
        for (field, child) in fields(node) {
            match field {
                Some("variable") => name = Some(&cx.src.text[child.byte_range()]),
                Some("value") => {
                    numeric &=
                        is_number(cx, child) || is_number_range(&cx.src.text[child.byte_range()]);
                    values.extend(Word::read(cx.src, child).split());
                }
                _ => {}
            }
        }
        let Some(name) = name else { return };
        let numeric = numeric && !values.is_empty();
        let single = match values.as_slice() {
            [one] if !one.unknown => Some(one.text.clone()),
            _ => None,
        };
        cx.src.assign(name, single);
        self.tracked.assigned(name, numeric);
    }
}

/// The flags of the `declare`-like command around the assignment `node`, if any.
fn declaration_flags(cx: Cx<'_, '_>, node: Node<'_>) -> String {
    node.parent()
        .filter(|p| p.kind() == "declaration_command")
        .map(|p| flags_of(cx, p))
        .unwrap_or_default()
}

/// The option letters of a `declare`-like command (`-n`, `-ia`, …).
fn flags_of(cx: Cx<'_, '_>, declaration: Node<'_>) -> String {
    named_children(declaration)
        .into_iter()
        .filter(|c| c.kind() == "word")
        .map(|c| &cx.src.text[c.byte_range()])
        .filter_map(|t| t.strip_prefix('-'))
        .collect()
}

/// `NAME+=VALUE`.
fn is_append(cx: Cx<'_, '_>, node: Node<'_>, name: Node<'_>) -> bool {
    cx.src.text[name.end_byte()..node.end_byte()].starts_with("+=")
}

/// The value of `declare -n NAME=TARGET`: TARGET's value when it is known.
fn nameref(cx: Cx<'_, '_>, target: Option<&Word<'_>>) -> Option<String> {
    let target = target.filter(|w| !w.unknown)?.text.as_str();
    if target == "HOME" {
        return Some("~".to_owned());
    }
    cx.src.vars.borrow().get(target).cloned().flatten()
}

/// The elements of `(WORD…)`, each split as bash splits it, when all are static.
fn array(cx: Cx<'_, '_>, node: Node<'_>) -> Option<String> {
    let mut elements = Vec::new();
    for child in named_children(node) {
        let raw = &cx.src.text[child.byte_range()];
        if raw.starts_with('[') {
            return None; // `([0]=x)`
        }
        for word in Word::read(cx.src, child).split() {
            if word.unknown {
                return None;
            }
            elements.push(word.text);
        }
    }
    Some(join(elements))
}

/// The value of a scalar word, when static.
fn scalar(word: &Word<'_>) -> Option<String> {
    (!word.unknown).then(|| word.text.clone())
}

fn join(parts: impl IntoIterator<Item = String>) -> String {
    let mut out = String::new();
    for (i, part) in parts.into_iter().enumerate() {
        if i > 0 {
            out.push(FIELD);
        }
        out.push_str(&part);
    }
    out
}

/// `{1..5}` as a word (before brace expansion, as a loop value is read here).
fn is_number_range(t: &str) -> bool {
    t.strip_prefix('{')
        .and_then(|r| r.strip_suffix('}'))
        .and_then(|r| r.split_once(".."))
        .is_some_and(|(a, b)| a.parse::<i64>().is_ok() && b.parse::<i64>().is_ok())
}

/// Whether the value `node` is a number: a literal, arithmetic, or the output of a counting
/// command.
pub(super) fn is_number(cx: Cx<'_, '_>, node: Node<'_>) -> bool {
    match node.kind() {
        "number" | "arithmetic_expansion" => true,
        "word" => cx.src.text[node.byte_range()].parse::<i64>().is_ok(),
        "string" => {
            let children = named_children(node);
            children.len() == 1 && is_number(cx, children[0])
        }
        "command_substitution" => counts(cx, node),
        "simple_expansion" | "expansion" => {
            let raw = &cx.src.text[node.byte_range()];
            // `$?`, `$#`, `${#x}`, the keys of an indexed array `${!a[@]}`.
            let special = raw
                .trim_start_matches('$')
                .trim_start_matches('{')
                .trim_end_matches('}');
            super::expansions::NUMERIC_SPECIALS.contains(&special)
                || raw.starts_with("${#")
                || (raw.starts_with("${!") && raw.ends_with("[@]}"))
        }
        _ => false,
    }
}

/// Whether the substitution `node` prints a number: its last command counts or tells time
/// (`wc -l`, `date +%s`, `grep -c`, `git rev-list --count`).
pub(super) fn counts(cx: Cx<'_, '_>, node: Node<'_>) -> bool {
    let Some(last) = crate::syntax::descendants(node)
        .take(256)
        .filter(|n| n.kind() == "command")
        .last()
    else {
        return false;
    };
    let words = crate::commands::command_words(cx, last);
    let Some(name) = words.first().and_then(Word::lit) else {
        return false;
    };
    let base = name.rsplit('/').next().unwrap_or(name);
    let flag = |f: &str| words.iter().any(|w| w.lit() == Some(f));
    COUNTERS.contains(&base)
        || (base == "grep" && (flag("-c") || flag("--count")))
        || (base == "git" && flag("--count"))
}
