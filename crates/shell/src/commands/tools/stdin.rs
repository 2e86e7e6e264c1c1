//! Programs read from another command's output or the command line's standard input by more
//! readers and in more spellings: an interpreter's script operand `/dev/stdin`, `/dev/fd/0`,
//! `/proc/self/fd/0` or `<(…)` (`python3 <(curl …)`, `curl … | node /dev/stdin`), `awk -f -`,
//! `awk|make|sqlite3 -init` of such a file, and input redirected from a process substitution
//! (`bash < <(curl …)`, `sqlite3 db < <(curl …)`).

use tree_sitter::Node;

use crate::commands::code::is_shell;
use crate::commands::interpreters::{interpreter, read_interpreter};
use crate::commands::producers::{Reader, producer, report_producer, stdin_code};
use crate::rules::RuleId;
use crate::syntax;
use crate::walk::{Analyzer, Call, Cx};
use crate::word::Word;

pub(super) fn check(a: &mut Analyzer, cx: Cx<'_, '_>, base: &str, w: &[Word<'_>], call: &Call<'_>) {
    if let Some(family) = interpreter(base) {
        let read = read_interpreter(family, w);
        if read.inline.is_none()
            && !read.stdin
            && let Some(script) = w.get(read.operands)
        {
            script_source(a, cx, script, call, Reader::Interpreter, base);
        }
    }
    if matches!(
        base,
        "awk" | "gawk" | "mawk" | "nawk" | "make" | "gmake" | "sqlite3" | "sed" | "gsed"
    ) {
        for file in program_files(base, w) {
            script_source(a, cx, file, call, Reader::Interpreter, base);
        }
        let awk = base.ends_with("awk");
        let last = w.last().and_then(Word::lit);
        if awk && matches!(last, Some("-f" | "--file")) && super::text::lost_dash(cx, call, w) {
            stdin_code(a, cx, call, Reader::Interpreter, base);
        }
    }
    if !call.redirects.is_empty() {
        redirected_input(a, cx, base, w, call);
    }
    let more = matches!(
        base,
        "tclsh"
            | "wish"
            | "expect"
            | "jshell"
            | "irb"
            | "guile"
            | "sbcl"
            | "clisp"
            | "racket"
            | "ghci"
            | "julia"
            | "octave"
            | "gnuplot"
            | "scala"
            | "groovysh"
            | "jrunscript"
    );
    if more && w.len() == 1 {
        stdin_code(a, cx, call, Reader::Interpreter, base);
    }
}

/// `-f FILE` of awk and make, `-init FILE` of sqlite3: files read as programs.
fn program_files<'w, 't>(base: &str, w: &'w [Word<'t>]) -> Vec<&'w Word<'t>> {
    let names: &[&str] = match base {
        "sqlite3" => &["-init", "--init"],
        "make" | "gmake" => &["-f", "--file", "--makefile"],
        "sed" | "gsed" => &["-f", "--file"],
        _ => &["-f", "--file", "-E", "--exec"],
    };
    w.windows(2)
        .filter(|p| p[0].lit().is_some_and(|t| names.contains(&t)))
        .map(|p| &p[1])
        .collect()
}

/// A program file that is really a pipe: a process substitution (code from another
/// command), standard input, or another inherited descriptor.
fn script_source(
    a: &mut Analyzer,
    cx: Cx<'_, '_>,
    script: &Word<'_>,
    call: &Call<'_>,
    reader: Reader,
    who: &str,
) {
    if let Some(node) = script.node.filter(|n| n.kind() == "process_substitution") {
        let found = producer(cx, &[node]);
        report_producer(a, found, script.span.start..call.span.end, who, || {
            other(reader, who)
        });
        return;
    }
    let Some(path) = script.lit() else {
        return;
    };
    let n = crate::paths::normalize(path);
    if matches!(
        n.as_str(),
        "-" | "/dev/stdin" | "/dev/fd/0" | "/proc/self/fd/0" | "/proc/thread-self/fd/0"
    ) {
        // Standard input redirected from a process substitution (`python3 /dev/stdin <
        // <(curl …)`) is that command's output.
        let subs = input_substitutions(cx, call);
        if subs.is_empty() {
            stdin_code(a, cx, call, reader, who);
        } else {
            let found = producer(cx, &subs);
            report_producer(a, found, call.span.clone(), who, || other(reader, who));
        }
    } else if n.starts_with("/dev/fd/") || (n.starts_with("/proc/") && n.contains("/fd/")) {
        let subs = input_substitutions(cx, call);
        let found = producer(cx, &subs);
        report_producer(a, found, call.span.clone(), who, || other(reader, who));
    }
}

fn other(reader: Reader, who: &str) -> (RuleId, String) {
    match reader {
        Reader::Shell => (
            RuleId::PipedShell,
            format!("`{who}` runs code produced by another command"),
        ),
        Reader::Interpreter => (
            RuleId::InlineCode,
            format!("`{who}` runs a program produced by another command"),
        ),
    }
}

/// Whether `base` reads a program from its standard input: a shell without `-c` or script, an
/// interpreter without script, a console without commands.
fn reads_stdin(base: &str, w: &[Word<'_>]) -> Option<Reader> {
    let args = &w[1..];
    let flags: Vec<&str> = args
        .iter()
        .filter_map(Word::lit)
        .take_while(|t| t.starts_with(['-', '+']) && *t != "-")
        .collect();
    let operands = args.len() - flags.len();
    let cluster = |c: char| {
        flags
            .iter()
            .any(|t| t.starts_with('-') && !t.starts_with("--") && t.contains(c))
    };
    if is_shell(base) {
        return (!cluster('c') && (operands == 0 || cluster('s'))).then_some(Reader::Shell);
    }
    if let Some(family) = interpreter(base) {
        let read = read_interpreter(family, w);
        return (read.stdin && read.inline.is_none()).then_some(Reader::Interpreter);
    }
    let console = match base {
        "sqlite3" => operands <= 1,
        "ed" | "ex" | "dc" | "tclsh" | "wish" | "expect" => {
            operands <= 1 && !cluster('e') && !cluster('c')
        }
        "gdb" => !flags.iter().any(|t| t.trim_start_matches('-') == "batch"),
        "psql" | "mysql" | "mariadb" => {
            !cluster('c')
                && !cluster('e')
                && !flags
                    .iter()
                    .any(|t| t.starts_with("--command") || t.starts_with("--execute"))
        }
        _ => false,
    };
    console.then_some(Reader::Interpreter)
}

/// Input redirected from a process substitution into a program reader (`bash < <(curl …)`):
/// code from that command.
fn redirected_input(a: &mut Analyzer, cx: Cx<'_, '_>, base: &str, w: &[Word<'_>], call: &Call<'_>) {
    let subs = input_substitutions(cx, call);
    if subs.is_empty() {
        return;
    }
    let Some(reader) = reads_stdin(base, w) else {
        return;
    };
    let found = producer(cx, &subs);
    report_producer(a, found, call.span.clone(), base, || other(reader, base));
}

/// The process substitutions the command's input redirections read (`< <(…)`, `3< <(…)`).
fn input_substitutions<'t>(cx: Cx<'_, '_>, call: &Call<'t>) -> Vec<Node<'t>> {
    call.redirects
        .iter()
        .filter(|r| {
            syntax::redirect_operator(&cx.src.text, **r)
                .is_some_and(|op| op.contains('<') && !op.contains('&'))
        })
        .flat_map(|r| {
            let mut cursor = r.walk();
            r.children_by_field_name("destination", &mut cursor)
                .filter(|d| d.kind() == "process_substitution")
                .collect::<Vec<_>>()
        })
        .collect()
}
