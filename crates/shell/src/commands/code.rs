//! Commands that run code given as data: shells (`sh -c`, code on stdin), `eval`, `source`,
//! `trap`, and interpreters with inline code.

use std::ops::Range;

use tree_sitter::Node;

use super::first_operand;
use super::wrappers::unwrap as wrappers_unwrap;
use crate::rules::RuleId;
use crate::source::{Mapped, Source};
use crate::walk::{Analyzer, Call, Cx, Stdin, descendants};
use crate::word::{Word, mapped_node};

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
        "awk" | "gawk" | "mawk" | "nawk" => awk(a, w, call),
        b => match interpreter(b) {
            Some(family) => interpret(a, cx, b, family, w, call),
            None => return false,
        },
    }
    true
}

/// Checks `word` as shell code.
pub(super) fn code_word(a: &mut Analyzer, cx: Cx<'_, '_>, word: &Word<'_>, what: &str) {
    if word.escaped {
        a.report(
            RuleId::DecodeToShell,
            word.span.clone(),
            format!("{what} is written with ANSI-C byte escapes"),
        );
    }
    match word.mapped(cx.src) {
        Some(m) => nested(a, cx, m, word.span.clone()),
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

fn joined(cx: Cx<'_, '_>, words: &[Word<'_>]) -> Option<Mapped> {
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
    let src = Source::nested(code);
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
            code_word(a, cx, word, &format!("the `{base} -c` string"));
        }
        return;
    }
    match w.get(i).filter(|_| !stdin) {
        None => stdin_code(a, cx, call, Reader::Shell, base),
        Some(script) => script_operand(a, cx, script, call, base),
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

/// Who reads code from standard input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Reader {
    Shell,
    Interpreter,
}

/// What produces the code a shell or interpreter reads.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Producer {
    /// A decoder (`base64 -d`, …), named.
    Decoder(String),
    /// A download (`curl`, …), named.
    Fetcher(String),
    /// Something else.
    Other,
}

/// The shell or interpreter `who` reads its code from standard input.
pub(super) fn stdin_code(
    a: &mut Analyzer,
    cx: Cx<'_, '_>,
    call: &Call<'_>,
    reader: Reader,
    who: &str,
) {
    match call.stdin {
        Stdin::Opaque => {}
        Stdin::Here(node) => here_code(a, cx, node, call, reader, who),
        Stdin::Pipe { from, here } => {
            // Every earlier stage of the pipeline, not only the last one (`curl | tee | sh`).
            let mut nodes: Vec<Node<'_>> =
                std::iter::successors(Some(from), |n| n.prev_named_sibling())
                    .filter(|_| from.parent().is_some_and(|p| p.kind() == "pipeline"))
                    .collect();
            nodes.push(from);
            nodes.extend(here);
            let span = cx.src.orig(from.byte_range()).start..call.span.end;
            let producer = producer(cx, &nodes);
            let text = (producer == Producer::Other)
                .then(|| static_output(cx, from, here))
                .flatten();
            match (text, reader) {
                (Some(code), Reader::Shell) => nested(a, cx, code, span),
                _ => report_producer(a, producer, span, who, || match reader {
                    Reader::Shell => (
                        RuleId::PipedShell,
                        format!("`{who}` runs code piped from another command"),
                    ),
                    Reader::Interpreter => (
                        RuleId::InlineCode,
                        format!("`{who}` runs a program piped from another command"),
                    ),
                }),
            }
        }
    }
}

fn report_producer(
    a: &mut Analyzer,
    producer: Producer,
    span: Range<usize>,
    who: &str,
    other: impl FnOnce() -> (RuleId, String),
) {
    let (rule, message) = match producer {
        Producer::Decoder(d) => (
            RuleId::DecodeToShell,
            format!("`{who}` runs code decoded by `{d}`"),
        ),
        Producer::Fetcher(f) => (
            RuleId::RemoteScriptExec,
            format!("`{who}` runs code downloaded by `{f}`"),
        ),
        Producer::Other => other(),
    };
    a.report(rule, span, message);
}

/// Code from a here-string or heredoc.
fn here_code(
    a: &mut Analyzer,
    cx: Cx<'_, '_>,
    node: Node<'_>,
    call: &Call<'_>,
    reader: Reader,
    who: &str,
) {
    let span = call.span.start.min(cx.src.orig(node.byte_range()).start)
        ..call.span.end.max(cx.src.orig(node.byte_range()).end);
    match (here_text(cx, node), reader) {
        (Some(code), Reader::Shell) => nested(a, cx, code, span),
        (Some(_), Reader::Interpreter) => a.report(
            RuleId::InlineCode,
            span,
            format!("`{who}` runs a program given inline (heredoc or here-string)"),
        ),
        (None, _) => {
            let producer = producer(cx, &[node]);
            report_producer(a, producer, span, who, || match reader {
                Reader::Shell => (
                    RuleId::DynamicShellCode,
                    format!(
                        "the code fed to `{who}` is built at run time, so it cannot be checked"
                    ),
                ),
                Reader::Interpreter => (
                    RuleId::InlineCode,
                    format!("`{who}` runs a program given inline (heredoc or here-string)"),
                ),
            });
        }
    }
}

/// The static text of a here-string (with its trailing newline) or heredoc body.
fn here_text(cx: Cx<'_, '_>, node: Node<'_>) -> Option<Mapped> {
    let mut cursor = node.walk();
    let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
    if node.kind() == "herestring_redirect" {
        let word = children.first()?;
        let mut m = mapped_node(cx.src, *word)?;
        let end = cx.src.orig(word.byte_range()).end;
        m.push("\n", end..end);
        return Some(m);
    }
    match children.iter().find(|c| c.kind() == "heredoc_body") {
        Some(body) => mapped_node(cx.src, *body),
        None => Some(Mapped::default()),
    }
}

/// What the commands in `nodes` (and everything inside them) do to their output.
fn producer(cx: Cx<'_, '_>, nodes: &[Node<'_>]) -> Producer {
    let mut found = Producer::Other;
    for node in nodes {
        for command in descendants(*node).filter(|n| n.kind() == "command") {
            let words = command_words(cx, command);
            let Some((base, args)) = wrappers_unwrap(&words) else {
                continue;
            };
            if is_decoder(base, args) {
                return Producer::Decoder(base.to_owned());
            }
            if found == Producer::Other && is_fetcher(base) {
                found = Producer::Fetcher(base.to_owned());
            }
        }
    }
    found
}

pub(super) fn command_words<'t>(cx: Cx<'_, '_>, command: Node<'t>) -> Vec<Word<'t>> {
    let mut words = Vec::new();
    let mut cursor = command.walk();
    for (i, child) in command.children(&mut cursor).enumerate() {
        match command.field_name_for_child(i as u32) {
            Some("name") => {
                if let Some(word) = child.named_child(0) {
                    words.push(Word::read(cx.src, word));
                }
            }
            Some("argument") if child.is_named() => words.push(Word::read(cx.src, child)),
            _ => {}
        }
    }
    words
}

fn is_fetcher(base: &str) -> bool {
    matches!(
        base,
        "curl"
            | "wget"
            | "fetch"
            | "aria2c"
            | "http"
            | "https"
            | "xh"
            | "curlie"
            | "lwp-request"
            | "lwp-download"
            | "GET"
            | "nc"
            | "ncat"
            | "netcat"
            | "socat"
            | "telnet"
            | "ftp"
            | "tftp"
    )
}

fn is_decoder(base: &str, args: &[Word<'_>]) -> bool {
    let flag = |short: char, long: &str| {
        args.iter()
            .filter_map(Word::lit)
            .any(|t| t == long || (t.starts_with('-') && !t.starts_with("--") && t.contains(short)))
    };
    let escapes = |t: &str| {
        t.contains("\\x")
            || t.contains("\\0")
            || t.contains("\\u")
            || t.contains("%b")
            || t.char_indices()
                .any(|(i, c)| c == '\\' && t[i + 1..].starts_with(|d: char| d.is_ascii_digit()))
    };
    match base {
        "base64" | "base32" | "basenc" | "gbase64" => {
            flag('d', "--decode") || flag('D', "--decode")
        }
        "xxd" => flag('r', "--revert"),
        "openssl" => args.iter().any(|w| {
            w.lit() == Some("-d") || w.lit() == Some("-base64") || w.lit() == Some("base64")
        }),
        "rev" | "tr" | "uudecode" | "gunzip" | "zcat" | "bzcat" | "bunzip2" | "xzcat" | "unxz"
        | "zstdcat" | "unzstd" | "uncompress" | "lzcat" | "unlzma" => true,
        "gzip" | "bzip2" | "xz" | "zstd" | "lzma" => flag('d', "--decompress"),
        "printf" => args.iter().any(|w| w.escaped || escapes(&w.text)),
        "echo" => {
            args.iter().any(|w| w.escaped)
                || (args
                    .iter()
                    .filter_map(Word::lit)
                    .any(|t| t.starts_with('-') && t.contains('e'))
                    && args.iter().any(|w| w.text.contains('\\')))
        }
        _ => false,
    }
}

/// The output of `from` when it is a static `echo`, `printf` or `cat` of a literal heredoc or
/// here-string.
fn static_output(cx: Cx<'_, '_>, from: Node<'_>, here: Option<Node<'_>>) -> Option<Mapped> {
    let (command, here) = match from.kind() {
        "command" => (from, here),
        "redirected_statement" => {
            let body = from
                .child_by_field_name("body")
                .filter(|b| b.kind() == "command")?;
            let mut cursor = from.walk();
            let here = from
                .children_by_field_name("redirect", &mut cursor)
                .find(|r| matches!(r.kind(), "herestring_redirect" | "heredoc_redirect"));
            (body, here)
        }
        _ => return None,
    };
    let words = command_words(cx, command);
    let (name, args) = wrappers_unwrap(&words)?;
    match (name, here) {
        ("cat", Some(here)) if args.is_empty() => here_text(cx, here),
        ("echo", _) => {
            let skip = args
                .iter()
                .take_while(|w| w.lit().is_some_and(|t| t == "-n" || t == "-E"))
                .count();
            let mut m = joined(cx, &args[skip..])?;
            let end = cx.src.orig(command.byte_range()).end;
            m.push("\n", end..end);
            Some(m)
        }
        ("printf", _) if args.len() == 1 && !args[0].text.contains(['%', '\\']) => {
            args[0].mapped(cx.src)
        }
        _ => None,
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
        script_operand(a, cx, script, call, base);
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

/// Interpreter families, for their inline-code options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    Python,
    Node,
    Bun,
    Deno,
    Perl,
    Ruby,
    Php,
    Lua,
    Osascript,
    R,
    Pwsh,
}

fn interpreter(base: &str) -> Option<Family> {
    let versioned = |prefix: &str| {
        base.strip_prefix(prefix)
            .is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'))
    };
    Some(match base {
        _ if versioned("python") || versioned("pypy") => Family::Python,
        "node" | "nodejs" => Family::Node,
        "bun" => Family::Bun,
        "deno" => Family::Deno,
        _ if versioned("perl") => Family::Perl,
        _ if versioned("ruby") => Family::Ruby,
        _ if versioned("php") => Family::Php,
        _ if versioned("lua") || base == "luajit" => Family::Lua,
        "osascript" => Family::Osascript,
        "Rscript" | "R" => Family::R,
        "pwsh" | "powershell" | "powershell.exe" | "pwsh.exe" => Family::Pwsh,
        _ => return None,
    })
}

/// How an interpreter's arguments were read.
#[derive(Debug, Default)]
struct Interp {
    /// Inline code was given (`-c`, `-e`, …): the option as written.
    inline: Option<String>,
    /// Reads its program from standard input (no script, or `-`).
    stdin: bool,
    /// Edits files in place (`perl -i`).
    in_place: bool,
    /// Index of the first operand.
    operands: usize,
}

fn interpret(
    a: &mut Analyzer,
    cx: Cx<'_, '_>,
    base: &str,
    family: Family,
    w: &[Word<'_>],
    call: &Call<'_>,
) {
    let read = read_interpreter(family, w);
    if let Some(option) = &read.inline {
        a.report(
            RuleId::InlineCode,
            call.span.clone(),
            format!("`{base} {option}` runs inline code"),
        );
    } else if read.stdin {
        stdin_code(a, cx, call, Reader::Interpreter, base);
    }
    if read.in_place {
        for file in w.iter().skip(read.operands) {
            a.written(call.span.clone(), &file.text, &format!("`{base} -i`"));
        }
    }
}

fn read_interpreter(family: Family, w: &[Word<'_>]) -> Interp {
    let mut read = Interp::default();
    let mut i = 1;
    while let Some(t) = w.get(i).and_then(Word::lit) {
        i += 1;
        if t == "-" {
            read.stdin = true;
            break;
        }
        if t == "--" || !t.starts_with('-') || t.len() < 2 {
            if !t.starts_with('-') {
                i -= 1;
            }
            break;
        }
        let consumed = match family {
            Family::Python => python_option(t, &mut read),
            Family::Node | Family::Bun => node_option(t, &mut read),
            Family::Perl | Family::Ruby => perl_option(family, t, &mut read),
            Family::Php => letter_option(
                t,
                &["-r", "-R", "-B", "-E", "--run"],
                &["-c", "-d", "-z", "-t"],
                &mut read,
            ),
            Family::Lua => letter_option(t, &["-e"], &["-l"], &mut read),
            Family::Osascript => letter_option(t, &["-e"], &["-l", "-s"], &mut read),
            Family::R => letter_option(t, &["-e"], &[], &mut read),
            Family::Pwsh => pwsh_option(t, &mut read),
            Family::Deno => Step::Next,
        };
        match consumed {
            Step::Next => {}
            Step::Value => i += 1,
            Step::Stop => break,
        }
    }
    if family == Family::Deno && w.get(1).and_then(Word::lit) == Some("eval") {
        read.inline = Some("eval".to_owned());
    }
    read.operands = i;
    let no_script = i >= w.len()
        && !matches!(
            family,
            Family::Bun | Family::Deno | Family::R | Family::Pwsh
        );
    read.stdin |= no_script;
    read
}

enum Step {
    /// The option is done.
    Next,
    /// The option takes the next word as its value.
    Value,
    /// Options end here (the rest are the program's arguments).
    Stop,
}

fn python_option(t: &str, read: &mut Interp) -> Step {
    if t.starts_with("--") {
        return if t == "--check-hash-based-pycs" {
            Step::Value
        } else {
            Step::Next
        };
    }
    for (k, c) in t[1..].char_indices() {
        let last = k + 2 == t.len();
        match c {
            'c' => {
                read.inline = Some(t.to_owned());
                return Step::Stop;
            }
            'm' => return Step::Stop,
            'W' | 'X' => return if last { Step::Value } else { Step::Next },
            _ => {}
        }
    }
    Step::Next
}

fn node_option(t: &str, read: &mut Interp) -> Step {
    if matches!(t, "--eval" | "--print") || t.starts_with("--eval=") || t.starts_with("--print=") {
        read.inline = Some(t.to_owned());
        return Step::Stop;
    }
    if t.starts_with("--") {
        let takes = matches!(
            t,
            "--require"
                | "--import"
                | "--loader"
                | "--experimental-loader"
                | "--conditions"
                | "--input-type"
                | "--title"
                | "--env-file"
                | "--cwd"
                | "--preload"
                | "--config"
        );
        return if takes { Step::Value } else { Step::Next };
    }
    if t[1..].contains(['e', 'p']) {
        read.inline = Some(t.to_owned());
        return Step::Stop;
    }
    if matches!(t, "-r" | "-C") {
        Step::Value
    } else {
        Step::Next
    }
}

fn perl_option(family: Family, t: &str, read: &mut Interp) -> Step {
    if t.starts_with("--") {
        return Step::Next;
    }
    let (code, stop_letters) = match family {
        Family::Perl => (&['e', 'E'][..], "IMmxCdDV"),
        _ => (&['e'][..], "rICExKW0FT"),
    };
    let mut chars = t[1..].char_indices().peekable();
    while let Some((k, c)) = chars.next() {
        if code.contains(&c) {
            read.inline = Some(t.to_owned());
            return if k + 2 == t.len() {
                Step::Value
            } else {
                Step::Next
            };
        }
        if c == 'i' {
            read.in_place = true;
            return Step::Next;
        }
        if family == Family::Perl && (c == 'l' || c == '0') {
            while chars
                .peek()
                .is_some_and(|(_, d)| d.is_ascii_hexdigit() || *d == 'x')
            {
                chars.next();
            }
            continue;
        }
        if stop_letters.contains(c) {
            return if k + 2 == t.len()
                && matches!(c, 'I' | 'r' | 'C' | 'E' | 'x')
                && family == Family::Ruby
            {
                Step::Value
            } else {
                Step::Next
            };
        }
    }
    Step::Next
}

fn letter_option(t: &str, inline: &[&str], values: &[&str], read: &mut Interp) -> Step {
    if let Some(option) = inline
        .iter()
        .find(|o| t == **o || (o.len() == 2 && t.starts_with(**o)))
    {
        read.inline = Some((*option).to_owned());
        return Step::Stop;
    }
    if values.contains(&t) {
        Step::Value
    } else {
        Step::Next
    }
}

fn pwsh_option(t: &str, read: &mut Interp) -> Step {
    let lower = t.to_ascii_lowercase();
    let lower = lower.trim_start_matches('-');
    let is_prefix = |full: &str, min: usize| lower.len() >= min && full.starts_with(lower);
    if is_prefix("command", 1)
        || is_prefix("commandwithargs", 8)
        || is_prefix("encodedcommand", 1)
        || lower == "ec"
    {
        read.inline = Some(t.to_owned());
        return Step::Stop;
    }
    if is_prefix("file", 1) {
        return Step::Stop;
    }
    Step::Next
}

/// `awk PROGRAM`: a program that runs commands (`system()`, pipes to or from commands).
fn awk(a: &mut Analyzer, w: &[Word<'_>], call: &Call<'_>) {
    let Some(i) = first_operand(w, "Fvf", &["--field-separator", "--assign", "--file"]) else {
        return;
    };
    let uses_file = w[1..i].iter().any(|x| {
        x.lit()
            .is_some_and(|t| t == "-f" || t.starts_with("--file"))
    });
    if uses_file {
        return;
    }
    let program = &w[i].text;
    let compact: String = program.chars().filter(|c| !c.is_whitespace()).collect();
    if compact.contains("system(")
        || compact.contains("|\"")
        || compact.contains("|getline")
        || compact.contains("|&")
    {
        a.report(
            RuleId::InlineCode,
            call.span.clone(),
            "the awk program runs commands (`system()` or a pipe)",
        );
    }
}
