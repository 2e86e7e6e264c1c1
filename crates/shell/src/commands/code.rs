//! Commands that run code given as data: shells (`sh -c`, code on stdin), `eval`, `source`,
//! `trap`, and interpreters with inline code.

use std::ops::Range;
use std::rc::Rc;

use tree_sitter::Node;

use super::first_operand;
use super::interpreters;
use super::producers::{Producer, Reader, producer, report_producer, stdin_code};
use crate::rules::RuleId;
use crate::source::{Mapped, Positional};
use crate::walk::{Analyzer, Call, Cx};
use crate::word::Word;

const SHELLS: &[&str] = &[
    "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "rbash", "posh", "yash", "fish", "csh",
    "tcsh", "pdksh", "oksh", "loksh",
];

/// Whether `base` is a shell.
pub(super) fn is_shell(base: &str) -> bool {
    SHELLS.contains(&base)
}

/// Handles shells, `eval`, `source`/`.`, `trap` and interpreters; returns whether `base` was
/// one of them.
pub(super) fn check(
    a: &mut Analyzer,
    cx: Cx<'_, '_>,
    base: &str,
    w: &[Word<'_>],
    call: &Call<'_>,
) -> bool {
    match base {
        b if is_shell(b) => shell(a, cx, b, w, call),
        "eval" => eval(a, cx, w, call),
        "source" | "." => source(a, cx, base, w, call),
        "trap" => trap(a, cx, w, call),
        _ => return interpreters::check(a, cx, base, w, call),
    }
    true
}

/// Checks `word` as shell code.
pub(super) fn code_word(a: &mut Analyzer, cx: Cx<'_, '_>, word: &Word<'_>, what: &str) {
    shell_code(a, cx, word, what, Rc::from([]));
}

/// Checks `word` as shell code whose positional parameters are `args` (`sh -c CODE NAME ARG…`).
fn shell_code(
    a: &mut Analyzer,
    cx: Cx<'_, '_>,
    word: &Word<'_>,
    what: &str,
    args: Rc<[Positional]>,
) {
    if word.escaped {
        a.report(
            RuleId::DecodeToShell,
            word.span.clone(),
            format!("{what} is written with ANSI-C byte escapes"),
        );
    }
    match word.mapped(cx.src) {
        Some(m) => {
            let src = cx.src.nested(m, args);
            a.source(&src, cx.nesting + 1, word.span.clone());
        }
        None => a.report(
            RuleId::DynamicShellCode,
            word.span.clone(),
            format!("{what} is built at run time, so it cannot be checked"),
        ),
    }
}

/// Checks `words` joined by spaces as shell code; returns false (and reports nothing) when
/// some word is dynamic.
pub(super) fn code_words(a: &mut Analyzer, cx: Cx<'_, '_>, words: &[Word<'_>], what: &str) -> bool {
    match joined(cx, words) {
        Some(m) => {
            let span =
                words.first().map_or(0, |w| w.span.start)..words.last().map_or(0, |w| w.span.end);
            nested(a, cx, m, span);
            true
        }
        None => {
            if let Some(dynamic) = words.iter().find(|w| w.dynamic) {
                a.report(
                    RuleId::DynamicShellCode,
                    dynamic.span.clone(),
                    format!("{what} is built at run time, so it cannot be checked"),
                );
            }
            false
        }
    }
}

pub(super) fn joined(cx: Cx<'_, '_>, words: &[Word<'_>]) -> Option<Mapped> {
    let mut out = Mapped::default();
    for (i, word) in words.iter().enumerate() {
        let m = word.mapped(cx.src)?;
        if i > 0 {
            out.push(" ", m.first_orig(word.span.clone()).start..word.span.start);
        }
        out.append(&m);
    }
    Some(out)
}

/// Parses and checks decoded shell code one level deeper.
pub(super) fn nested(a: &mut Analyzer, cx: Cx<'_, '_>, code: Mapped, whole: Range<usize>) {
    let src = cx.src.nested(code, Rc::from([]));
    a.source(&src, cx.nesting + 1, whole);
}

/// `sh [options] [-c CODE | -s | SCRIPT] …`.
fn shell(a: &mut Analyzer, cx: Cx<'_, '_>, base: &str, w: &[Word<'_>], call: &Call<'_>) {
    let mut i = 1;
    let (mut code, mut stdin) = (false, false);
    while let Some(t) = w.get(i).and_then(Word::lit) {
        if t == "--" || t == "-" {
            stdin |= t == "-";
            i += 1;
            break;
        }
        if t.starts_with("--") {
            i += if matches!(t, "--rcfile" | "--init-file") {
                2
            } else {
                1
            };
            continue;
        }
        if t.len() < 2 || !(t.starts_with('-') || t.starts_with('+')) {
            break;
        }
        if t.starts_with('-') {
            code |= t.contains('c');
            stdin |= t.contains('s');
        }
        i += if t.contains(['o', 'O']) { 2 } else { 1 };
    }
    network_redirect(a, cx, base, call);
    if code {
        if let Some(word) = w.get(i) {
            // `sh -c CODE NAME ARG…`: `$0` is NAME, `$1`… the words after it.
            let args = w
                .iter()
                .skip(i + 1)
                .map(|x| Positional {
                    text: x.text.clone(),
                    any: x.any,
                    unknown: x.unknown,
                })
                .collect();
            shell_code(a, cx, word, &format!("the `{base} -c` string"), args);
        }
        return;
    }
    match w.get(i).filter(|_| !stdin) {
        None => stdin_code(a, cx, call, Reader::Shell, base),
        Some(script) => {
            a.script_program(cx, script);
            script_operand(a, cx, script, call, base);
            super::scripts::run_file(a, cx, &w[i..], call.span.clone(), false);
        }
    }
}

/// A script operand of a shell or `source`: a process substitution or `/dev/stdin` is code
/// from another command.
fn script_operand(a: &mut Analyzer, cx: Cx<'_, '_>, script: &Word<'_>, call: &Call<'_>, who: &str) {
    if let Some(node) = script.node.filter(|n| n.kind() == "process_substitution") {
        let producer = producer(cx, &[node]);
        report_producer(a, producer, script.span.start..call.span.end, who, || {
            (
                RuleId::PipedShell,
                format!("`{who}` runs code produced by another command"),
            )
        });
    } else if matches!(
        script.lit(),
        Some("/dev/stdin" | "/proc/self/fd/0" | "/dev/fd/0")
    ) {
        stdin_code(a, cx, call, Reader::Shell, who);
    }
}

/// `bash -i >& /dev/tcp/…`.
fn network_redirect(a: &mut Analyzer, cx: Cx<'_, '_>, who: &str, call: &Call<'_>) {
    for redirect in &call.redirects {
        let mut cursor = redirect.walk();
        let to_network = redirect
            .children_by_field_name("destination", &mut cursor)
            .any(|d| {
                let text = Word::read(cx.src, d).text;
                text.starts_with("/dev/tcp/") || text.starts_with("/dev/udp/")
            });
        if to_network {
            a.report(
                RuleId::ReverseShell,
                call.span.clone(),
                format!("`{who}` with its input or output on a network socket (`/dev/tcp`)"),
            );
            return;
        }
    }
}

/// `eval ARG…`: escalate; literal arguments are checked as code.
fn eval(a: &mut Analyzer, cx: Cx<'_, '_>, w: &[Word<'_>], call: &Call<'_>) {
    a.report(
        RuleId::Eval,
        call.span.clone(),
        "`eval` runs a string as shell code",
    );
    let args = &w[1..];
    if args.iter().all(|x| !x.dynamic) {
        code_words(a, cx, args, "the `eval` string");
        return;
    }
    let nodes: Vec<Node<'_>> = args.iter().filter_map(|x| x.node).collect();
    let producer = producer(cx, &nodes);
    if producer != Producer::Other {
        report_producer(a, producer, call.span.clone(), "eval", || {
            (
                RuleId::Eval,
                "`eval` runs a string as shell code".to_owned(),
            )
        });
    }
}

/// `source FILE` / `. FILE`.
fn source(a: &mut Analyzer, cx: Cx<'_, '_>, base: &str, w: &[Word<'_>], call: &Call<'_>) {
    if let Some(script) = w.get(1) {
        a.script_program(cx, script);
        script_operand(a, cx, script, call, base);
        super::scripts::run_file(a, cx, &w[1..], call.span.clone(), true);
    }
}

/// `trap CODE SIGNAL…`: the code runs later.
fn trap(a: &mut Analyzer, cx: Cx<'_, '_>, w: &[Word<'_>], call: &Call<'_>) {
    let Some(i) = first_operand(w, "", &[]) else {
        return;
    };
    let code = &w[i];
    if w.len() <= i + 1 || code.lit() == Some("-") {
        return;
    }
    match code.mapped(cx.src) {
        Some(m) => nested(a, cx, m, code.span.clone()),
        None => a.report(
            RuleId::Eval,
            call.span.clone(),
            "`trap` with code built at run time works like `eval`",
        ),
    }
}
