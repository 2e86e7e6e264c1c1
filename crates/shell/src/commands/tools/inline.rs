//! Shell commands written as string literals inside inline interpreter code: `os.system("…")`,
//! `subprocess.run("…", shell=True)`, perl/ruby/php `system "…"` and backticks, `qx(…)`,
//! `%x(…)`, `shell_exec('…')`, node `execSync('…')`, lua `os.execute("…")`, and awk's
//! `system("…")`, `print | "…"` and `"…" | getline`. Each literal is checked as shell code (so
//! `python3 -c 'import os; os.system("rm -rf ~")'` blocks for every profile); an awk program
//! that pipes into a shell or runs a command built at run time (`system($0)`) is
//! `option-exec`.

use super::option_exec;
use super::text::{self, slice};
use crate::commands::code::is_shell;
use crate::commands::interpreters::interpreter;
use crate::source::Mapped;
use crate::walk::{Analyzer, Call, Cx};
use crate::word::Word;

/// Calls whose first argument is a shell command line (or a program run by one).
const RUNNERS: &[&str] = &[
    "system",
    "popen",
    "exec",
    "execSync",
    "shell_exec",
    "passthru",
    "proc_open",
    "execute",
    "check_output",
    "check_call",
    "call",
    "run",
    "Popen",
    "getoutput",
    "getstatusoutput",
    "capture2",
    "capture2e",
    "capture3",
    "popen3",
    "spawn",
    "spawnSync",
];

#[derive(Clone, Copy, PartialEq, Eq)]
enum Lang {
    Awk,
    /// Backticks are strings (JavaScript).
    Js,
    /// Backticks, `qx`, `%x` run commands (perl, ruby, php).
    Backticks,
    Other,
}

pub(super) fn check(a: &mut Analyzer, cx: Cx<'_, '_>, base: &str, w: &[Word<'_>], call: &Call<'_>) {
    let versioned = |p: &str| {
        base.strip_prefix(p)
            .is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'))
    };
    let lang = match base {
        "awk" | "gawk" | "mawk" | "nawk" => Lang::Awk,
        "node" | "nodejs" | "bun" | "deno" => Lang::Js,
        _ if versioned("perl") || versioned("ruby") || versioned("php") => Lang::Backticks,
        _ if versioned("python") || versioned("pypy") || versioned("lua") || base == "luajit" => {
            Lang::Other
        }
        _ => return,
    };
    for word in &w[1..] {
        if !word.text.contains(['(', '`', '"', '\'', '|']) {
            continue;
        }
        let Some(m) = word.mapped(cx.src).filter(|m| m.map.len() == m.text.len()) else {
            continue;
        };
        if !a.budget.charge(m.text.len(), word.span.clone()) {
            return;
        }
        for found in commands(&m.text, lang) {
            match found {
                Found::Literal(range) => {
                    literal(a, cx, &m, range, &word.span);
                }
                Found::PipeTo(range) => {
                    let shown = literal(a, cx, &m, range, &word.span);
                    if feeds_code(&shown) {
                        option_exec(a, call, "an awk program piping its output into", &shown);
                    }
                }
                Found::Dynamic => {
                    option_exec(a, call, "an awk program", "a command built at run time");
                }
            }
        }
    }
}

/// Checks bytes `range` of `m` as shell code; returns the text.
fn literal(
    a: &mut Analyzer,
    cx: Cx<'_, '_>,
    m: &Mapped,
    range: std::ops::Range<usize>,
    span: &std::ops::Range<usize>,
) -> String {
    let code = slice(m, range);
    let shown = code.text.clone();
    if !code.text.trim().is_empty() {
        let whole = text::span(&code, span);
        super::super::code::nested(a, cx, code, whole);
    }
    shown
}

/// A command that runs what it reads as code: a shell or an interpreter.
fn feeds_code(command: &str) -> bool {
    let first = command.split_whitespace().next().unwrap_or_default();
    let base = super::base_of(first);
    is_shell(base) || interpreter(base).is_some() || matches!(base, "source" | "." | "eval")
}

/// A command found in inline code.
enum Found {
    /// A string literal that is a shell command line.
    Literal(std::ops::Range<usize>),
    /// An awk `print | "cmd"` literal: `cmd` reads the program's output.
    PipeTo(std::ops::Range<usize>),
    /// An awk command built at run time (`system($0)`, `cmd | getline`, `print | cmd`).
    Dynamic,
}

/// The commands in `code`.
fn commands(code: &str, lang: Lang) -> Vec<Found> {
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if !code.is_char_boundary(i) {
            i += 1;
            continue;
        }
        let b = bytes[i];
        if b == b'"' || (b == b'\'' && lang != Lang::Awk) {
            let end = closing(bytes, i + 1, b);
            if lang == Lang::Awk && piped_from(code, end + 1) {
                out.push(Found::Literal(i + 1..end));
            }
            i = end + 1;
            continue;
        }
        if lang == Lang::Awk && b == b'/' && regex_start(code, i) {
            i = closing(bytes, i + 1, b'/') + 1;
            continue;
        }
        if b == b'`' && lang == Lang::Backticks {
            let end = closing(bytes, i + 1, b'`');
            out.push(Found::Literal(i + 1..end));
            i = end + 1;
            continue;
        }
        if let Some((start, close)) = quote_operator(code, i, lang) {
            let end = closing(bytes, start, close);
            out.push(Found::Literal(start..end));
            i = end + 1;
            continue;
        }
        if b == b'|' && lang == Lang::Awk {
            i = awk_pipe(code, i, &mut out);
            continue;
        }
        let awk_call = lang != Lang::Awk || code[i..].starts_with("system");
        if let Some(arg) = runner_argument(code, i).filter(|_| awk_call) {
            match arg {
                Argument::Literal(at) => {
                    let end = closing(bytes, at + 1, bytes[at]);
                    out.push(Found::Literal(at + 1..end));
                    i = end + 1;
                }
                Argument::Other(next) => {
                    if lang == Lang::Awk {
                        out.push(Found::Dynamic);
                    }
                    i = next;
                }
            }
            continue;
        }
        i += 1;
    }
    out
}

/// An awk `|` at `i` (not `||`): `| "cmd"` pipes to a literal command, `| getline` after a
/// non-literal, or `| expr`, runs a command built at run time. Returns where to go on.
fn awk_pipe(code: &str, i: usize, out: &mut Vec<Found>) -> usize {
    let bytes = code.as_bytes();
    if bytes.get(i + 1) == Some(&b'|') {
        return i + 2;
    }
    let rest = &code[i + 1..];
    let rest = rest.strip_prefix('&').unwrap_or(rest);
    let after = rest.trim_start();
    let at = code.len() - after.len();
    if after.starts_with('"') {
        if after.starts_with("\"/inet") {
            return at + 1;
        }
        let end = closing(bytes, at + 1, b'"');
        out.push(Found::PipeTo(at + 1..end));
        return end + 1;
    }
    // `"cmd" | getline` was taken with its literal; anything else before `| getline`, or a
    // non-literal after `|`, is a command built at run time.
    out.push(Found::Dynamic);
    at
}

/// Whether a `/` at `i` starts an awk regular expression (not a division): it follows an
/// operator, a bracket or nothing.
fn regex_start(code: &str, i: usize) -> bool {
    let before = code[..i].trim_end().chars().next_back();
    !before.is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | ')' | ']' | '$' | '.'))
}

/// The index of the closing `quote` at or after `from` (skipping backslash escapes), or the
/// end of `bytes`.
fn closing(bytes: &[u8], from: usize, quote: u8) -> usize {
    let mut k = from;
    while k < bytes.len() {
        match bytes[k] {
            b'\\' => k += 2,
            c if c == quote => return k,
            _ => k += 1,
        }
    }
    bytes.len()
}

/// awk `"cmd" | getline`: the literal ending before `at` is piped from.
fn piped_from(code: &str, at: usize) -> bool {
    let rest = code.get(at..).unwrap_or_default().trim_start();
    rest.strip_prefix('|').is_some_and(|r| {
        r.trim_start_matches('&')
            .trim_start()
            .starts_with("getline")
    })
}

/// `qx(…)`, `qx{…}`, `qx/…/` (perl), `%x(…)` (ruby) at `i`: the start of the command and its
/// closing delimiter.
fn quote_operator(code: &str, i: usize, lang: Lang) -> Option<(usize, u8)> {
    if lang != Lang::Backticks {
        return None;
    }
    let rest = &code[i..];
    let open = if let Some(r) = rest.strip_prefix("qx") {
        let before = code[..i].chars().next_back();
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            return None;
        }
        r.bytes().next()?
    } else {
        rest.strip_prefix("%x")?.bytes().next()?
    };
    let close = match open {
        b'(' => b')',
        b'{' => b'}',
        b'[' => b']',
        b'<' => b'>',
        b'/' | b'|' | b'!' | b'#' => open,
        _ => return None,
    };
    Some((i + 3, close))
}

/// The first argument of a call of one of [`RUNNERS`].
enum Argument {
    /// A string literal, at this quote.
    Literal(usize),
    /// Something else; the call's text ends before this index.
    Other(usize),
}

/// A call of one of [`RUNNERS`] at `i`, and its first argument.
fn runner_argument(code: &str, i: usize) -> Option<Argument> {
    let before = code[..i].chars().next_back();
    if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
        return None;
    }
    let rest = &code[i..];
    let name = RUNNERS.iter().find(|n| {
        rest.starts_with(**n)
            && !rest[n.len()..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
    })?;
    let after_name = rest[name.len()..].trim_start();
    let paren = after_name.starts_with('(');
    let after = after_name
        .strip_prefix('(')
        .unwrap_or(after_name)
        .trim_start();
    let at = code.len() - after.len();
    if after.starts_with(['"', '\'']) {
        Some(Argument::Literal(at))
    } else if paren {
        Some(Argument::Other(at))
    } else {
        None
    }
}
