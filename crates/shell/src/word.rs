//! Words: the static value of a shell word node, as far as it can be known without running
//! anything.
//!
//! Quotes are removed and escapes decoded (also ANSI-C `$'…'`). What cannot be known is
//! marked: `$HOME`/`${HOME}` become `~` (so paths compare in one spelling), other variables
//! become the empty string (they may be unset), `${X:?}` and substitutions (`$(…)`, `` `…` ``,
//! `$((…))`, `<(…)`) become a NUL byte (unknown, not empty).

use std::collections::HashMap;
use std::ops::Range;

use tree_sitter::Node;

use crate::limits::Budget;
use crate::source::{Mapped, Positional, Source};

mod fields;

pub(crate) use fields::is_name;

/// Marker for an unknown, non-empty part of a word.
pub(crate) const UNKNOWN: char = '\0';

/// Separates the elements of an array in a value of [`Source::vars`] (`a=(rm -rf /)`, and
/// the positional parameters `set -- …` gives, stored under `@`).
pub(crate) const FIELD: char = '\u{1}';

/// The separators bash splits unquoted expansions on when `IFS` is not set.
const DEFAULT_IFS: &str = " \t\n";

/// One of the words a word expands into when bash splits it (`"$@"`, `"${a[@]}"`, an
/// unquoted variable whose value holds blanks): its bytes in [`Word::text`] and whether
/// they hold run-time parts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Field {
    pub range: Range<usize>,
    pub unknown: bool,
    pub any: bool,
}

/// A word of a command line: its node, where it is, and its static value.
#[derive(Debug, Clone)]
pub(crate) struct Word<'t> {
    /// The node it was read from; `None` for run-time input (what `xargs` appends).
    pub node: Option<Node<'t>>,
    /// Original byte range.
    pub span: Range<usize>,
    /// The value, with unknown parts marked (see the module docs).
    pub text: String,
    /// Some part is only known at run time.
    pub dynamic: bool,
    /// Run-time input that may be anything (the arguments `xargs` appends).
    pub any: bool,
    /// Some part's value is not statically known (an unset-or-unknown variable, a
    /// substitution, a positional parameter without a known value). Variables assigned a
    /// static value earlier in the same text, and `$HOME`, are known.
    pub unknown: bool,
    /// The part after the last `/` (the file name) is not statically known: `"$LOG"`, but not
    /// `"$DIR/hook.log"`.
    pub unknown_name: bool,
    /// A plain word: no quotes, escapes, expansions, globs or braces.
    pub plain: bool,
    /// Holds ANSI-C byte escapes (`\x..`, octal, `\u`, `\c`).
    pub escaped: bool,
    /// The words bash splits this one into, when it splits it (else empty); in `text`
    /// they are separated by one blank.
    pub fields: Vec<Field>,
}

impl<'t> Word<'t> {
    /// Reads the word `node` of `src`, charging its length to the analysis work and the
    /// values it substitutes to the expansion budget (past which they are left out and the
    /// word counts as unknown).
    pub fn read(src: &Source<'_>, node: Node<'t>) -> Self {
        let span = src.orig(node.byte_range());
        src.budget.charge(node.byte_range().len() + 1, span.clone());
        let vars = src.vars.borrow();
        let mut sink = TextSink {
            args: &src.args,
            vars: &vars,
            budget: &src.budget,
            span: span.clone(),
            text: String::new(),
            dynamic: false,
            any: false,
            unknown: false,
            unknown_name: false,
            escaped: false,
            ifs: vars
                .get("IFS")
                .and_then(|v| v.as_deref())
                .unwrap_or(DEFAULT_IFS),
            quoted: false,
            fields: Vec::new(),
            field: Field {
                range: 0..0,
                unknown: false,
                any: false,
            },
        };
        decode(src.text.as_ref(), node, &mut sink, 0);
        let raw = &src.text[node.byte_range()];
        let fields = sink.finish_fields();
        Word {
            node: Some(node),
            span,
            plain: node.kind() == "word" && is_plain(raw),
            text: sink.text,
            dynamic: sink.dynamic,
            any: sink.any,
            unknown: sink.unknown,
            unknown_name: sink.unknown_name,
            escaped: sink.escaped,
            fields,
        }
    }

    /// The words bash makes of this one by word splitting (itself when it is not split).
    /// Split words are run-time values: not plain, no node.
    pub fn split(self) -> Vec<Word<'t>> {
        if self.fields.is_empty() {
            return vec![self];
        }
        self.fields
            .iter()
            .filter(|f| !f.range.is_empty() || f.unknown)
            .map(|f| Word {
                node: None,
                span: self.span.clone(),
                text: self.text[f.range.clone()].to_owned(),
                dynamic: true,
                any: f.any,
                unknown: f.unknown,
                unknown_name: f.unknown,
                plain: false,
                escaped: self.escaped,
                fields: Vec::new(),
            })
            .collect()
    }

    /// Run-time input that may be anything, attributed to `span`.
    pub fn input(span: Range<usize>) -> Self {
        Word {
            node: None,
            span,
            text: UNKNOWN.to_string(),
            dynamic: true,
            any: true,
            unknown: true,
            unknown_name: true,
            plain: false,
            escaped: false,
            fields: Vec::new(),
        }
    }

    /// A literal value (`PATH=` has the empty one), attributed to `span`.
    pub fn literal(text: &str, span: Range<usize>) -> Self {
        Word {
            node: None,
            span,
            text: text.to_owned(),
            dynamic: false,
            any: false,
            unknown: false,
            unknown_name: false,
            plain: true,
            escaped: false,
            fields: Vec::new(),
        }
    }

    /// The value when fully static.
    pub fn lit(&self) -> Option<&str> {
        (!self.dynamic).then_some(self.text.as_str())
    }

    /// The static value with its original byte ranges, or `None` when it is dynamic.
    pub fn mapped(&self, src: &Source<'_>) -> Option<Mapped> {
        mapped_node(src, self.node.filter(|_| !self.dynamic)?)
    }
}

fn is_plain(raw: &str) -> bool {
    let brace = raw.contains('{') && (raw.contains(',') || raw.contains(".."));
    !brace && !raw.contains(['\\', '*', '?', '[', '\'', '"', '$', '`'])
}

/// Whether the word `node` holds an unquoted `$IFS` expansion: word splitting that hides the
/// blanks between words (`rm -rf${IFS}/`).
/// Each node looked at costs one unit of `budget` (charged to `span`).
pub(crate) fn unquoted_ifs(
    text: &str,
    node: Node<'_>,
    budget: &Budget,
    span: Range<usize>,
) -> bool {
    if !text[node.byte_range()].contains("IFS") || !budget.charge(node.descendant_count(), span) {
        return false;
    }
    let mut stack = vec![(node, false)];
    while let Some((n, quoted)) = stack.pop() {
        let quoted = quoted || matches!(n.kind(), "string" | "translated_string");
        if n.kind() == "variable_name" && &text[n.byte_range()] == "IFS" && !quoted {
            return true;
        }
        let mut cursor = n.walk();
        stack.extend(n.children(&mut cursor).map(|c| (c, quoted)));
    }
    false
}

/// The value of a node with unknown parts, as [`Mapped`] text when static.
pub(crate) fn mapped_node(src: &Source<'_>, node: Node<'_>) -> Option<Mapped> {
    let mut sink = MapSink {
        src,
        out: Mapped::default(),
        dynamic: false,
    };
    decode(src.text.as_ref(), node, &mut sink, 0);
    (!sink.dynamic).then_some(sink.out)
}

/// What a run-time part of a word is.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Dynamic<'x> {
    /// `$HOME`, `${HOME}`, `${HOME%/}`.
    Home,
    /// A variable with a well-known value: `$HISTFILE` is the history file.
    Fixed(&'static str),
    /// A variable (also `$0`, `$1`, …) that may be unset or empty unless its value is known;
    /// of an array, its first element.
    Var(&'x str),
    /// `${NAME:-WORD}` (also `-`, `:=`, `=`): the variable, or the static `WORD` when unset.
    Default(&'x str, String),
    /// An expansion that may be empty and whose value is not known (`${X#…}`, `${#X}`).
    Empty,
    /// A value known to be non-empty but unknown: `${X:?}`, substitutions.
    Unknown,
    /// All positional parameters: `$@` (`false`) or `$*` (`true`, one word when quoted).
    All(bool),
    /// Every element of an array: `${a[@]}` (`false`) or `${a[*]}` (`true`).
    Elements(&'x str, bool),
    /// One element of an array, `${a[N]}`.
    Element(&'x str, usize),
    /// `${!NAME}`: the variable whose name is the value of `NAME`.
    Indirect(&'x str),
}

/// Receives the decoded pieces of a word.
trait Sink {
    /// Literal text, decoded from `at` (a range of the current source).
    fn lit(&mut self, text: &str, at: Range<usize>);
    /// A part only known at run time.
    fn dynamic(&mut self, what: Dynamic<'_>);
    /// The word holds ANSI-C byte escapes.
    fn escaped(&mut self) {}
    /// The pieces that follow are inside double quotes (`true`) or not: expansions in them
    /// are not split into words.
    fn quote(&mut self, _quoted: bool) {}
}

struct TextSink<'s> {
    args: &'s [Positional],
    vars: &'s HashMap<String, Option<String>>,
    budget: &'s Budget,
    /// The word's original range, for the budget.
    span: Range<usize>,
    text: String,
    dynamic: bool,
    any: bool,
    unknown: bool,
    unknown_name: bool,
    escaped: bool,
    /// The characters unquoted expansions are split on.
    ifs: &'s str,
    /// Inside double quotes.
    quoted: bool,
    /// The fields before the current one, when the word is split.
    fields: Vec<Field>,
    /// The field being read.
    field: Field,
}

/// A value looked up: (text, unknown, any).
type Value<'s> = (&'s str, bool, bool);

impl<'s> TextSink<'s> {
    /// The known value of variable or positional parameter `name` (of an array, the whole
    /// array, elements separated by [`FIELD`]).
    fn lookup(&self, name: &str) -> Option<Value<'s>> {
        let vars: &'s HashMap<String, Option<String>> = self.vars;
        if let Some(n) = name.parse::<usize>().ok().filter(|_| !name.is_empty()) {
            // `set -- …` replaced the parameters of this text.
            if let (Some(set), true) = (vars.get("@"), n > 0) {
                return match set {
                    Some(list) => Some((list.split(FIELD).nth(n - 1).unwrap_or(""), false, false)),
                    None => None,
                };
            }
            return self
                .args
                .get(n)
                .map(|a| (a.text.as_str(), a.unknown, a.any));
        }
        vars.get(name)
            .and_then(|v| v.as_deref())
            .map(|v| (v, false, false))
    }

    fn mark_unknown(&mut self) {
        self.unknown = true;
        self.unknown_name = true;
        self.field.unknown = true;
    }

    fn mark_any(&mut self, any: bool) {
        self.any |= any;
        self.field.any |= any;
    }

    /// Whether `bytes` more of substituted values fit the expansion budget; when not, the
    /// word counts as unknown (and the analysis stops).
    fn fits(&mut self, bytes: usize) -> bool {
        let fits = self.budget.expand(bytes, self.span.clone());
        if !fits {
            self.mark_unknown();
        }
        fits
    }
}

impl Sink for TextSink<'_> {
    fn lit(&mut self, text: &str, _at: Range<usize>) {
        self.text.push_str(text);
        if text.contains('/') {
            self.unknown_name = false;
        }
    }
    fn dynamic(&mut self, what: Dynamic<'_>) {
        self.dynamic = true;
        match what {
            Dynamic::Home => self.text.push('~'),
            Dynamic::Fixed(value) => self.lit(value, 0..0),
            Dynamic::Var(name) => match self.lookup(name) {
                Some(v) => self.value(v),
                None => self.mark_unknown(),
            },
            Dynamic::Default(name, default) => match self.lookup(name) {
                Some(v) => self.value(v),
                None => {
                    self.substitute(&default, false, false);
                    self.mark_unknown();
                }
            },
            Dynamic::Empty => self.mark_unknown(),
            Dynamic::Unknown => {
                self.text.push(UNKNOWN);
                self.mark_unknown();
            }
            Dynamic::All(joined) => self.positional(joined),
            Dynamic::Elements(name, joined) => match self.lookup(name) {
                Some((list, _, _)) => {
                    let values = list.split(FIELD).map(|v| (v, false, false));
                    self.substitute_all(values, joined);
                }
                None => self.mark_unknown(),
            },
            Dynamic::Element(name, n) => match self.lookup(name) {
                Some((list, _, _)) => {
                    let element = list.split(FIELD).nth(n).unwrap_or_default();
                    self.substitute(element, false, false);
                }
                None => self.mark_unknown(),
            },
            Dynamic::Indirect(name) => match self.lookup(name) {
                Some((target, false, _)) if is_name(target) => match variable(target) {
                    Dynamic::Indirect(_) => self.mark_unknown(),
                    resolved => self.dynamic(resolved),
                },
                _ => self.mark_unknown(),
            },
        }
    }
    fn escaped(&mut self) {
        self.escaped = true;
    }
    fn quote(&mut self, quoted: bool) {
        self.quoted = quoted;
    }
}

struct MapSink<'s, 'a> {
    src: &'s Source<'a>,
    out: Mapped,
    dynamic: bool,
}

impl Sink for MapSink<'_, '_> {
    fn lit(&mut self, text: &str, at: Range<usize>) {
        if text.len() == at.len() {
            // Byte for byte: keep the finest mapping the source has.
            for (i, b) in text.char_indices() {
                let o = self.src.orig(at.start + i..at.start + i + b.len_utf8());
                self.out.push(&text[i..i + b.len_utf8()], o);
            }
        } else {
            self.out.push(text, self.src.orig(at));
        }
    }
    fn dynamic(&mut self, _what: Dynamic<'_>) {
        self.dynamic = true;
    }
}

/// How backslashes are read in a stretch of literal text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Quoting {
    /// Unquoted word: `\x` is `x`.
    Bare,
    /// Inside `"…"`: only `\$`, `` \` ``, `\"`, `\\` and line continuations.
    Double,
    /// Heredoc body with an unquoted delimiter: `\$`, `` \` ``, `\\`, line continuations.
    Heredoc,
    /// Taken as is.
    Raw,
}

/// Nodes of one word nested deeper than this (the grammar nests strings and concatenations
/// only a few levels) are taken as unknown.
const MAX_WORD_DEPTH: usize = 16;

fn decode(text: &str, node: Node<'_>, sink: &mut dyn Sink, depth: usize) {
    let range = node.byte_range();
    if depth > MAX_WORD_DEPTH {
        return sink.dynamic(Dynamic::Unknown);
    }
    match node.kind() {
        "word" => unescape(text, range, Quoting::Bare, sink),
        "number" | "heredoc_content" | "special_variable_name" | "variable_name" => {
            sink.lit(&text[range.clone()], range)
        }
        "raw_string" if range.len() >= 2 => {
            let inner = range.start + 1..range.end - 1;
            sink.lit(&text[inner.clone()], inner);
        }
        "ansi_c_string" if range.len() >= 3 => ansi_c(text, range.start + 2..range.end - 1, sink),
        "string" | "translated_string" => {
            sink.quote(true);
            sequence(text, node, Quoting::Double, sink, depth);
            sink.quote(false);
        }
        "concatenation" => sequence(text, node, Quoting::Bare, sink, depth),
        "heredoc_body" => {
            // Reached only when a body is decoded without its redirect (see `mapped_heredoc`).
            let quoting = node
                .parent()
                .map_or(Quoting::Heredoc, |redirect| heredoc_quoting(text, redirect));
            sequence(text, node, quoting, sink, depth)
        }
        "string_content" => unescape(text, range, Quoting::Double, sink),
        "brace_expression" => sink.lit(&text[range.clone()], range),
        "simple_expansion" => {
            let name = node.named_child(0).map_or("", |n| &text[n.byte_range()]);
            sink.dynamic(variable(name));
        }
        "expansion" => sink.dynamic(expansion(&text[range])),
        _ => sink.dynamic(Dynamic::Unknown),
    }
}

/// `$NAME`.
fn variable(name: &str) -> Dynamic<'_> {
    match name {
        "HOME" => Dynamic::Home,
        "HISTFILE" => Dynamic::Fixed("~/.bash_history"),
        "@" => Dynamic::All(false),
        "*" => Dynamic::All(true),
        _ => Dynamic::Var(name),
    }
}

/// `${…}`: the name, then an operator.
fn expansion(raw: &str) -> Dynamic<'_> {
    let inner = raw
        .strip_prefix("${")
        .and_then(|r| r.strip_suffix('}'))
        .unwrap_or_default();
    let len = match inner.chars().next() {
        Some(c) if c.is_ascii_digit() => inner
            .find(|d: char| !d.is_ascii_digit())
            .unwrap_or(inner.len()),
        Some(c) if c.is_ascii_alphabetic() || c == '_' => inner
            .find(|d: char| !(d.is_ascii_alphanumeric() || d == '_'))
            .unwrap_or(inner.len()),
        Some('@' | '*') if inner.len() == 1 => return variable(inner),
        Some('!') if is_name(&inner[1..]) => return Dynamic::Indirect(&inner[1..]),
        _ => return Dynamic::Empty, // `${#X}`, `${!X[@]}`, `${?}`, …
    };
    let (name, rest) = inner.split_at(len);
    if rest.is_empty() {
        return variable(name);
    }
    if let Some(index) = rest.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
        return match index {
            "@" => Dynamic::Elements(name, false),
            "*" => Dynamic::Elements(name, true),
            _ => index
                .parse()
                .map_or(Dynamic::Empty, |n| Dynamic::Element(name, n)),
        };
    }
    if name == "HOME" && (rest.starts_with('%') || rest.starts_with([':', '-', '=', '?'])) {
        // `${HOME%/}`, `${HOME:-/}`, `${HOME:?}`: still the home directory.
        return Dynamic::Home;
    }
    let default = [":-", ":=", "-", "="]
        .iter()
        .find_map(|op| rest.strip_prefix(op));
    if let Some(word) = default {
        let word = word.replace("${HOME}", "~").replace("$HOME", "~");
        if word.contains(['$', '`']) {
            return Dynamic::Unknown;
        }
        let value: String = word
            .chars()
            .filter(|c| !matches!(c, '"' | '\'' | '\\'))
            .collect();
        return Dynamic::Default(name, value);
    }
    if rest.starts_with([':', '?']) && rest.trim_start_matches(':').starts_with('?') {
        return Dynamic::Unknown;
    }
    Dynamic::Empty
}

/// Whether the heredoc `redirect` has a quoted delimiter (`<<'EOF'`): no expansions.
pub(crate) fn heredoc_is_quoted(text: &str, redirect: Node<'_>) -> bool {
    heredoc_quoting(text, redirect) == Quoting::Raw
}

fn heredoc_quoting(text: &str, redirect: Node<'_>) -> Quoting {
    let start = {
        let mut cursor = redirect.walk();
        redirect
            .children(&mut cursor)
            .find(|c| c.kind() == "heredoc_start")
            .map(|n| &text[n.byte_range()])
    };
    match start {
        Some(delim) if delim.contains(['\'', '"', '\\']) => Quoting::Raw,
        _ => Quoting::Heredoc,
    }
}

/// The value of the heredoc `body` of `redirect`, as [`Mapped`] text when static.
pub(crate) fn mapped_heredoc(
    src: &Source<'_>,
    redirect: Node<'_>,
    body: Node<'_>,
) -> Option<Mapped> {
    let mut sink = MapSink {
        src,
        out: Mapped::default(),
        dynamic: false,
    };
    let text = src.text.as_ref();
    sequence(text, body, heredoc_quoting(text, redirect), &mut sink, 0);
    (!sink.dynamic).then_some(sink.out)
}

/// A node whose children are pieces of one word (`"…"`, concatenations, heredoc bodies):
/// text between the children is literal too.
fn sequence(text: &str, node: Node<'_>, quoting: Quoting, sink: &mut dyn Sink, depth: usize) {
    let mut pos = node.start_byte();
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        let r = child.byte_range();
        if r.start > pos {
            unescape(text, pos..r.start, quoting, sink);
        }
        pos = pos.max(r.end);
        let raw = &text[r.clone()];
        if !child.is_named() {
            if raw != "\"" && raw != "$\"" {
                unescape(text, r, quoting, sink);
            }
        } else if matches!(child.kind(), "string_content" | "heredoc_content") {
            unescape(text, r, quoting, sink);
        } else {
            decode(text, child, sink, depth + 1);
        }
    }
    if node.end_byte() > pos && node.kind() != "string" {
        unescape(text, pos..node.end_byte(), quoting, sink);
    }
}

fn unescape(text: &str, range: Range<usize>, quoting: Quoting, sink: &mut dyn Sink) {
    let s = &text[range.clone()];
    if quoting == Quoting::Raw || !s.contains('\\') {
        sink.lit(s, range);
        return;
    }
    let base = range.start;
    let mut run = 0;
    let mut chars = s.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c != '\\' {
            continue;
        }
        let Some(&(j, next)) = chars.peek() else {
            break;
        };
        let special = match quoting {
            Quoting::Bare => true,
            Quoting::Double => matches!(next, '$' | '`' | '"' | '\\' | '\n'),
            Quoting::Heredoc => matches!(next, '$' | '`' | '\\' | '\n'),
            Quoting::Raw => false,
        };
        if !special {
            continue;
        }
        chars.next();
        if i > run {
            sink.lit(&s[run..i], base + run..base + i);
        }
        let end = j + next.len_utf8();
        if next != '\n' {
            sink.lit(&s[j..end], base + i..base + end);
        }
        run = end;
    }
    if s.len() > run {
        sink.lit(&s[run..], base + run..range.end);
    }
}

/// Decodes the inside of `$'…'` (bash's escapes).
fn ansi_c(text: &str, range: Range<usize>, sink: &mut dyn Sink) {
    let s = &text[range.clone()];
    let base = range.start;
    let bytes = s.as_bytes();
    let mut i = 0;
    let mut run = 0;
    while i < bytes.len() {
        if bytes[i] != b'\\' || i + 1 >= bytes.len() {
            i += 1;
            continue;
        }
        if i > run {
            sink.lit(&s[run..i], base + run..base + i);
        }
        let (ch, len, byte_escape) = ansi_escape(&s[i + 1..]);
        let end = i + 1 + len;
        if byte_escape {
            sink.escaped();
        }
        let mut buf = [0u8; 4];
        sink.lit(ch.encode_utf8(&mut buf), base + i..base + end);
        i = end;
        run = end;
    }
    if s.len() > run {
        sink.lit(&s[run..], base + run..range.end);
    }
}

/// One escape after the backslash: (decoded char, bytes consumed, was a byte/char-code
/// escape). Bytes above 0x7f that do not form a character decode as U+FFFD.
fn ansi_escape(rest: &str) -> (char, usize, bool) {
    let mut chars = rest.chars();
    let Some(c) = chars.next() else {
        return ('\\', 0, false);
    };
    let simple = match c {
        'a' => Some('\u{7}'),
        'b' => Some('\u{8}'),
        'e' | 'E' => Some('\u{1b}'),
        'f' => Some('\u{c}'),
        'n' => Some('\n'),
        'r' => Some('\r'),
        't' => Some('\t'),
        'v' => Some('\u{b}'),
        '\\' | '\'' | '"' | '?' => Some(c),
        _ => None,
    };
    if let Some(ch) = simple {
        return (ch, 1, false);
    }
    let code = |radix: u32, skip: usize, max: usize| {
        let digits: String = rest[skip..]
            .chars()
            .take(max)
            .take_while(|d| d.is_digit(radix))
            .collect();
        let value = u32::from_str_radix(&digits, radix).ok();
        (value, skip + digits.len())
    };
    let (value, len) = match c {
        '0'..='7' => code(8, 0, 3),
        'x' => code(16, 1, 2),
        'u' => code(16, 1, 4),
        'U' => code(16, 1, 8),
        'c' => match chars.next() {
            Some(x) => (Some(u32::from(x) & 0x1f), 1 + x.len_utf8()),
            None => (None, 1),
        },
        _ => return ('\\', 0, false),
    };
    let ch = value.map_or('\u{fffd}', |v| {
        if c == 'x' || c.is_ascii_digit() {
            if v < 0x80 {
                char::from_u32(v).unwrap_or('\u{fffd}')
            } else {
                '\u{fffd}'
            }
        } else {
            char::from_u32(v).unwrap_or('\u{fffd}')
        }
    });
    (ch, len, true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse;

    fn words(cmd: &str) -> Vec<(String, bool, bool)> {
        let src = Source::top(cmd);
        let tree = parse(cmd, &Budget::default()).unwrap();
        let command = tree.root_node().named_child(0).unwrap();
        let mut cursor = command.walk();
        let nodes: Vec<_> = command.named_children(&mut cursor).collect();
        nodes
            .into_iter()
            .map(|n| {
                let n = if n.kind() == "command_name" {
                    n.named_child(0).unwrap()
                } else {
                    n
                };
                let w = Word::read(&src, n);
                (w.text, w.dynamic, w.plain)
            })
            .collect()
    }

    #[test]
    fn words_decode_quotes_escapes_and_expansions() {
        let got = words(r#"r\m "a\"b\$c\q" 'x\y' $'\x72\x6d\n' $HOME/"${HOME}" ${X:?}/$Y ~/a"#);
        let texts: Vec<&str> = got.iter().map(|w| w.0.as_str()).collect();
        assert_eq!(
            texts,
            ["rm", "a\"b$c\\q", "x\\y", "rm\n", "~/~", "\0/", "~/a"]
        );
        assert!(!got[0].2, "an escaped name is not plain");
        assert!(got[4].1 && got[5].1 && !got[6].1);
    }

    #[test]
    fn mapped_text_points_back_at_the_original_bytes() {
        let cmd = r#"sh -c "a\"b /""#;
        let src = Source::top(cmd);
        let tree = parse(cmd, &Budget::default()).unwrap();
        let command = tree.root_node().named_child(0).unwrap();
        let arg = command.named_child(2).unwrap();
        let m = Word::read(&src, arg).mapped(&src).unwrap();
        assert_eq!(m.text, "a\"b /");
        assert_eq!(m.map[0], (7, 8));
        assert_eq!(m.map[1], (8, 10));
        assert_eq!(m.map[4], (12, 13));
    }
}
