//! Program text of command languages (ex, ed, gdb, sqlite3, psql, make) with the original
//! byte ranges of its bytes: from an option's value or from a literal standard input.

use std::ops::Range;

use super::opts::Val;
use crate::commands::producers::{command_words, here_text, static_output};
use crate::commands::wrappers::unwrap;
use crate::source::Mapped;
use crate::walk::{Analyzer, Call, Cx, Stdin};
use crate::word::Word;

/// The value `v` as mapped text, when it is static.
pub(super) fn of_val(cx: Cx<'_, '_>, v: Val<'_, '_>) -> Option<Mapped> {
    let m = v.word.mapped(cx.src)?;
    if m.text != v.word.text || !m.text.is_char_boundary(v.at) || m.map.len() != m.text.len() {
        return None;
    }
    Some(slice(&m, v.at..m.text.len()))
}

/// The static text a command reads on its standard input: a heredoc, a here-string, or a
/// literal `echo`/`printf`/`cat <<EOF` piped in.
pub(super) fn static_input(cx: Cx<'_, '_>, call: &Call<'_>) -> Option<Mapped> {
    match call.stdin {
        Stdin::Here(node) => here_text(cx, node),
        Stdin::Pipe { from, here, .. } => {
            static_output(cx, from, here).or_else(|| printf_output(cx, from))
        }
        Stdin::Opaque | Stdin::Inherited => None,
    }
}

/// The output of a literal `printf FORMAT [ARG]…` whose format has only `%s` conversions and
/// `\n`, `\t`, `\\` escapes (`printf 'a\nx\n.\nw\n' | ed f`, `printf '%s\n' '!id' | ed`).
fn printf_output(cx: Cx<'_, '_>, from: tree_sitter::Node<'_>) -> Option<Mapped> {
    if from.kind() != "command" {
        return None;
    }
    let words = command_words(cx, from);
    let (name, args) = unwrap(&words)?;
    let (format, args) = args.split_first().filter(|_| name == "printf")?;
    let format = format
        .mapped(cx.src)
        .filter(|m| m.map.len() == m.text.len())?;
    let args: Vec<Mapped> = args
        .iter()
        .map(|w| w.mapped(cx.src))
        .collect::<Option<_>>()?;
    let conversions = format.text.matches('%').count();
    if format.text.matches("%s").count() != conversions {
        return None;
    }
    let mut out = Mapped::default();
    let mut next = args.iter();
    loop {
        printf_once(&format, &mut next, &mut out)?;
        if conversions == 0 || next.len() == 0 {
            return Some(out);
        }
    }
}

/// One pass of `format` over the arguments `next` (`%s` takes one, or nothing).
fn printf_once<'a>(
    format: &Mapped,
    next: &mut impl Iterator<Item = &'a Mapped>,
    out: &mut Mapped,
) -> Option<()> {
    let bytes = format.text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let orig = |k: usize| format.map.get(k).map_or(0..0, |m| m.0..m.1);
        match (bytes[i], bytes.get(i + 1)) {
            (b'\\', Some(&c)) => {
                let decoded = match c {
                    b'n' => "\n",
                    b't' => "\t",
                    b'\\' => "\\",
                    _ => return None,
                };
                out.push(decoded, orig(i).start..orig(i + 1).end);
                i += 2;
            }
            (b'%', Some(b's')) => {
                if let Some(arg) = next.next() {
                    out.append(arg);
                }
                i += 2;
            }
            _ => {
                let n = format.text[i..].chars().next().map_or(1, char::len_utf8);
                out.push(&format.text[i..i + n], orig(i).start..orig(i + n - 1).end);
                i += n;
            }
        }
    }
    Some(())
}

/// Bytes `r` of `m` (clamped to char boundaries of `m.text`; empty when they are not).
pub(super) fn slice(m: &Mapped, r: Range<usize>) -> Mapped {
    let end = r.end.min(m.text.len());
    let start = r.start.min(end);
    match (m.text.get(start..end), m.map.get(start..end)) {
        (Some(text), Some(map)) => Mapped {
            text: text.to_owned(),
            map: map.to_vec(),
        },
        _ => Mapped::default(),
    }
}

/// The original range `m` covers.
pub(super) fn span(m: &Mapped, fallback: &Range<usize>) -> Range<usize> {
    match (m.map.first(), m.map.last()) {
        (Some(first), Some(last)) => first.0..last.1.max(first.0),
        _ => fallback.clone(),
    }
}

/// The byte ranges of the lines of `text` (without their newlines).
pub(super) fn lines(text: &str) -> impl Iterator<Item = Range<usize>> + '_ {
    let mut start = 0;
    text.split('\n').map(move |line| {
        let r = start..start + line.len();
        start = r.end + 1;
        r
    })
}

/// Bytes `r` of `m` are a shell command that `what` runs: checked as code, and reported as
/// `option-exec`.
pub(super) fn shell(
    a: &mut Analyzer,
    cx: Cx<'_, '_>,
    call: &Call<'_>,
    m: &Mapped,
    r: Range<usize>,
    what: &str,
) {
    let code = slice(m, r);
    let shown = code.text.clone();
    if !code.text.trim().is_empty() {
        let whole = span(&code, &call.span);
        super::super::code::nested(a, cx, code, whole);
    }
    super::option_exec(a, call, what, &shown);
}

/// Byte offset in `s` after leading blanks.
pub(super) fn skip_blanks(s: &str, from: usize) -> usize {
    let rest = s.get(from..).unwrap_or_default();
    from + rest.len() - rest.trim_start_matches([' ', '\t']).len()
}

/// Whether a lone `-` argument stood between the last word and a heredoc (`make -f - <<EOF`):
/// tree-sitter-bash drops that word.
pub(super) fn lost_dash(cx: Cx<'_, '_>, call: &Call<'_>, words: &[Word<'_>]) -> bool {
    let (Stdin::Here(here), Some(last)) = (call.stdin, words.last().and_then(|w| w.node)) else {
        return false;
    };
    cx.src
        .text
        .get(last.end_byte()..here.start_byte())
        .is_some_and(|gap| gap.trim() == "-")
}
