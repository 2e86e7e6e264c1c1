//! Code the text defines and then runs under a name: functions (`f(){ rm -rf "$1"; }; f /`
//! is checked with the call's arguments) and script files it writes with static contents
//! (`echo 'rm -rf ~' > x.sh; sh x.sh`, `printf '…' > ls; ./ls`).

use std::ops::Range;
use std::rc::Rc;

use tree_sitter::Node;

use crate::paths;
use crate::source::{Mapped, Positional};
use crate::syntax::redirect_operator;
use crate::walk::{Analyzer, Call, Cx, Stdin};
use crate::word::{Word, mapped_heredoc, mapped_node};

impl Analyzer {
    /// Remembers the function definition `node` (its body, as code). Only functions not
    /// nested in another are remembered (so that copying bodies stays linear in the text): a
    /// nested one is remembered when the outer one's body is checked at a call.
    pub(crate) fn define_function(&mut self, cx: Cx<'_, '_>, node: Node<'_>) {
        let (Some(name), Some(body)) = (
            node.child_by_field_name("name"),
            node.child_by_field_name("body"),
        ) else {
            return;
        };
        let defined = &cx.src.text[name.byte_range()];
        if !self.programs.functions.contains(defined) {
            self.programs.functions.insert(defined.to_owned());
        }
        let mut up = node.parent();
        while let Some(ancestor) = up {
            if ancestor.kind() == "function_definition" {
                return;
            }
            up = ancestor.parent();
        }
        let range = body.byte_range();
        if !self.budget.charge(range.len(), cx.src.orig(range.clone())) {
            return;
        }
        let mut code = Mapped::default();
        for (k, c) in cx.src.text[range.clone()].char_indices() {
            let b = range.start + k..range.start + k + c.len_utf8();
            code.push(&cx.src.text[b.clone()], cx.src.orig(b));
        }
        let name = cx.src.text[name.byte_range()].to_owned();
        self.tracked.functions.insert(name, code);
    }

    /// Remembers the file an `echo`, `printf` or `cat <<EOF` command writes (`>`, `>>`) when
    /// the text is static: running it later runs that text.
    pub(crate) fn script_written(&mut self, cx: Cx<'_, '_>, words: &[Word<'_>], call: &Call<'_>) {
        let Some(name) = words.first().and_then(Word::lit) else {
            return;
        };
        let Some((file, append)) = output_file(cx, call) else {
            return;
        };
        let path = paths::normalize(&self.resolve(&file));
        let text = match name {
            "echo" => echo_text(&words[1..]),
            "printf" => printf_text(&words[1..]),
            "cat" if words.len() == 1 => here_text(cx, call),
            _ => None,
        };
        let Some(text) = text else {
            self.tracked.scripts.remove(&path);
            return;
        };
        if !self.budget.charge(text.len(), call.span.clone()) {
            return;
        }
        let mut code = if append {
            self.tracked.scripts.remove(&path).unwrap_or_default().0
        } else {
            Mapped::default()
        };
        code.push(&text, call.span.clone());
        self.tracked.writes += 1;
        let version = self.tracked.writes;
        self.tracked.scripts.insert(path, (code, version));
    }
}

/// The file a command's output goes to (`> FILE`, `>> FILE`: whether it appends), when its
/// name is static.
fn output_file(cx: Cx<'_, '_>, call: &Call<'_>) -> Option<(String, bool)> {
    call.redirects.iter().rev().find_map(|r| {
        let op = redirect_operator(&cx.src.text, *r)?;
        if !matches!(op, ">" | ">>" | ">|") {
            return None;
        }
        let dest = r.child_by_field_name("destination")?;
        let word = Word::read(cx.src, dest);
        (!word.unknown).then(|| (word.text, op == ">>"))
    })
}

/// What `echo ARG…` prints, when static (`-n`, `-e`, `-E` understood).
fn echo_text(args: &[Word<'_>]) -> Option<String> {
    let flags = args
        .iter()
        .take_while(|w| {
            w.lit()
                .is_some_and(|t| matches!(t, "-n" | "-e" | "-E" | "-ne" | "-en"))
        })
        .count();
    let (options, rest) = args.split_at(flags);
    if rest.iter().any(|w| w.unknown) {
        return None;
    }
    let has = |c: char| options.iter().any(|w| w.text.contains(c));
    let mut text = rest
        .iter()
        .map(|w| w.text.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    if has('e') {
        text = unescape(&text);
    }
    if !has('n') {
        text.push('\n');
    }
    Some(text)
}

/// What `printf FORMAT ARG…` prints, when static and the format holds only `%s`, `%%` and
/// `\n`-style escapes.
fn printf_text(args: &[Word<'_>]) -> Option<String> {
    let (format, rest) = args.split_first()?;
    if format.unknown || rest.iter().any(|w| w.unknown) {
        return None;
    }
    let f = unescape(&format.text);
    if f.replace("%s", "").replace("%%", "").contains('%') {
        return None;
    }
    let mut out = String::new();
    let mut values = rest.iter().map(|w| w.text.as_str());
    loop {
        let mut pieces = f.split("%s");
        out.push_str(&pieces.next().unwrap_or_default().replace("%%", "%"));
        let mut used = false;
        for piece in pieces {
            used = true;
            out.push_str(values.next().unwrap_or_default());
            out.push_str(&piece.replace("%%", "%"));
        }
        if !used || values.len() == 0 {
            return Some(out);
        }
    }
}

/// `\n`, `\t`, `\\` decoded (what `echo -e` and printf formats do with them).
fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('\\') => out.push('\\'),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// The static text of the heredoc or here-string a `cat` reads.
fn here_text(cx: Cx<'_, '_>, call: &Call<'_>) -> Option<String> {
    let Stdin::Here(node) = call.stdin else {
        return None;
    };
    if node.kind() == "herestring_redirect" {
        let mut m = mapped_node(cx.src, node.named_child(0)?)?;
        m.text.push('\n');
        return Some(m.text);
    }
    let body = crate::syntax::named_children(node)
        .into_iter()
        .find(|c| c.kind() == "heredoc_body");
    match body {
        Some(body) => Some(mapped_heredoc(cx.src, node, body)?.text),
        None => Some(String::new()),
    }
}

/// A command named like a function defined earlier, or run by the path of a script written
/// earlier: the body or script is checked with the call's arguments as `$1`…. Returns
/// whether it was one.
pub(super) fn call(
    a: &mut Analyzer,
    cx: Cx<'_, '_>,
    name: &str,
    words: &[Word<'_>],
    call: &Call<'_>,
) -> bool {
    let (key, code, shared) = if name.contains('/') {
        let path = paths::normalize(&a.resolve(name));
        match a.tracked.scripts.get(&path) {
            Some((code, version)) => (format!("{path}\u{1}{version}"), code.clone(), false),
            None => return false,
        }
    } else {
        match a.tracked.functions.get(name) {
            Some(code) => (name.to_owned(), code.clone(), true),
            None => return false,
        }
    };
    run(a, cx, key, code, words, call.span.clone(), shared);
    true
}

/// `sh FILE ARG…`, `source FILE ARG…` (`words`, FILE first): a script written earlier is
/// checked with the arguments; `shared`: it runs in the same shell (`source`).
pub(super) fn run_file(
    a: &mut Analyzer,
    cx: Cx<'_, '_>,
    words: &[Word<'_>],
    span: Range<usize>,
    shared: bool,
) {
    let Some(file) = words.first().filter(|w| !w.unknown) else {
        return;
    };
    let path = paths::normalize(&a.resolve(&file.text));
    if let Some((code, version)) = a.tracked.scripts.get(&path).cloned() {
        run(
            a,
            cx,
            format!("{path}\u{1}{version}"),
            code,
            words,
            span,
            shared,
        );
    }
}

/// Checks `code` (a function body or script) called with `words` (name first); `shared`:
/// it runs in the same shell and sees its variables.
fn run(
    a: &mut Analyzer,
    cx: Cx<'_, '_>,
    key: String,
    code: Mapped,
    words: &[Word<'_>],
    span: Range<usize>,
    shared: bool,
) {
    let call_key = words
        .iter()
        .skip(1)
        .fold(key.clone(), |k, w| format!("{k}\u{1}{}", w.text));
    if a.tracked.running.contains(&key) || !a.tracked.calls.insert(call_key) {
        return;
    }
    let args: Rc<[Positional]> = words
        .iter()
        .map(|w| Positional {
            text: w.text.clone(),
            any: w.any,
            unknown: w.unknown,
        })
        .collect();
    let src = cx.src.nested(code, args);
    if shared {
        let vars = cx.src.vars.borrow().clone();
        if !a.budget.charge(vars.len(), span.clone()) {
            return;
        }
        *src.vars.borrow_mut() = vars;
    }
    a.tracked.running.push(key);
    a.source(&src, cx.nesting + 1, span);
    a.tracked.running.pop();
}
