//! Code that a shell or interpreter reads from another command: pipes, process
//! substitutions, heredocs and here-strings; what produced it decides the rule.

use std::ops::Range;

use tree_sitter::Node;

use super::code::{joined, nested};
use super::upstream::upstream;
use super::wrappers::unwrap as wrappers_unwrap;
use crate::rules::RuleId;
use crate::source::Mapped;
use crate::syntax::{self, descendants, fields};
use crate::walk::{Analyzer, Call, Cx, Stdin};
use crate::word::{Word, mapped_heredoc, mapped_node};

/// Who reads code from standard input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Reader {
    Shell,
    Interpreter,
}

/// What produces the code a shell or interpreter reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Producer {
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
        Stdin::Opaque => {
            // `bash < FILE`, `python3 < FILE`: FILE is the program, looked up (and resolved
            // against a hook's folder) like a script operand.
            for redirect in &call.redirects {
                if syntax::reads_file(&cx.src.text, *redirect)
                    && let Some(file) = redirect.child_by_field_name("destination")
                {
                    a.script_program(cx, &Word::read(cx.src, file));
                }
            }
        }
        Stdin::Inherited => {
            let what = match reader {
                Reader::Shell => "shell code",
                Reader::Interpreter => "a program",
            };
            a.report(
                RuleId::StdinCode,
                call.span.clone(),
                format!(
                    "`{who}` reads {what} from standard input, which for a hook is the payload"
                ),
            );
        }
        Stdin::Here(node) => here_code(a, cx, node, call, reader, who),
        Stdin::Pipe {
            from,
            here,
            pipeline,
        } => {
            let span = cx.src.orig(from.byte_range()).start..call.span.end;
            let producer = upstream(a, cx, from, here, pipeline);
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

pub(super) fn report_producer(
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
pub(super) fn here_text(cx: Cx<'_, '_>, node: Node<'_>) -> Option<Mapped> {
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
        Some(body) => mapped_heredoc(cx.src, node, *body),
        None => Some(Mapped::default()),
    }
}

/// What the commands in `nodes` (and everything inside them) do to their output. Every node
/// looked at costs a unit of work.
pub(super) fn producer(cx: Cx<'_, '_>, nodes: &[Node<'_>]) -> Producer {
    let mut found = Producer::Other;
    for node in nodes {
        let span = cx.src.orig(node.byte_range());
        let mut within = true;
        let commands = descendants(*node)
            .take_while(|_| {
                within = within && cx.src.budget.charge(1, span.clone());
                within
            })
            .filter(|n| n.kind() == "command");
        for command in commands {
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

pub(crate) fn command_words<'t>(cx: Cx<'_, '_>, command: Node<'t>) -> Vec<Word<'t>> {
    let mut words = Vec::new();
    for (field, child) in fields(command) {
        match field {
            Some("name") => {
                if let Some(word) = child.named_child(0) {
                    words.push(Word::read(cx.src, word));
                }
            }
            Some("argument")
                if child.is_named() && !syntax::glued_descriptor(&cx.src.text, child) =>
            {
                words.push(Word::read(cx.src, child))
            }
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
pub(super) fn static_output(
    cx: Cx<'_, '_>,
    from: Node<'_>,
    here: Option<Node<'_>>,
) -> Option<Mapped> {
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
