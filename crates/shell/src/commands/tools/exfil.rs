//! Secrets sent off the machine: private keys, cloud and registry credentials, password
//! hashes, `.env` files and the environment itself uploaded by `curl -F|-d|-T @FILE`, `wget
//! --post-file`, copied to a remote host (`scp ~/.ssh/id_rsa host:`), piped or redirected into
//! a network client (`cat ~/.aws/credentials | nc …`, `nc … < /etc/shadow`, `> /dev/tcp/…`),
//! or spliced into a request (`curl "…$(cat ~/.ssh/id_rsa)"`, `dig $(cat /etc/shadow).x`).
//! Reported as `data-exfiltration`.

use tree_sitter::Node;

use crate::commands::producers::command_words;
use crate::commands::wrappers::unwrap;
use crate::paths;
use crate::rules::RuleId;
use crate::syntax::named_children;
use crate::walk::{Analyzer, Call, Cx, Stdin};
use crate::word::{UNKNOWN, Word};

/// Files of a home that hold credentials (home-relative, whole components; a trailing `/`
/// means anything inside).
const HOME_SECRETS: &[&str] = &[
    ".ssh/",
    ".gnupg/",
    ".aws/",
    ".azure/",
    ".config/gcloud/",
    ".kube/config",
    ".docker/config.json",
    ".netrc",
    ".git-credentials",
    ".password-store/",
    ".local/share/keyrings/",
    ".vault-token",
    ".npmrc",
    ".pypirc",
    ".config/gh/hosts.yml",
    ".bash_history",
    ".zsh_history",
];

/// System files that hold secrets.
const SYSTEM_SECRETS: &[&str] = &[
    "/etc/shadow",
    "/etc/passwd",
    "/etc/gshadow",
    "/etc/shadow-",
    "/etc/sudoers",
    "/etc/ssh/",
    "/root/",
    "/var/lib/kubelet/",
    "/etc/kubernetes/",
];

/// Commands that send what they read (their standard input or a file) over the network.
const CLIENTS: &[&str] = &[
    "nc",
    "ncat",
    "netcat",
    "nc.traditional",
    "nc.openbsd",
    "socat",
    "telnet",
    "cryptcat",
    "curl",
    "wget",
    "http",
    "https",
    "xh",
    "ssh",
    "openssl",
    "gnutls-cli",
    "websocat",
    "mail",
    "mailx",
    "sendmail",
];

/// Programs that look a name up on the network (a secret in the name leaks).
const RESOLVERS: &[&str] = &[
    "dig",
    "nslookup",
    "host",
    "ping",
    "ping6",
    "drill",
    "traceroute",
];

/// Commands that read (and may re-encode) the files they are given.
const READERS: &[&str] = &[
    "cat", "tac", "head", "tail", "base64", "base32", "basenc", "xxd", "od", "hexdump", "gzip",
    "bzip2", "xz", "zstd", "tar", "zip", "strings", "nl", "less", "more", "gpg", "openssl", "sed",
    "awk", "grep", "cut", "sort", "uniq", "jq", "cp", "dd", "rev", "tr", "7z", "python3", "perl",
];

/// Whether the normalised path `n` is a secret.
fn secret(n: &str) -> bool {
    if n.contains(UNKNOWN) {
        return false;
    }
    let name = n.rsplit('/').next().unwrap_or(n);
    if name.ends_with(".pub") || name == "known_hosts" {
        return false;
    }
    if name == ".env" || name.starts_with(".env.") && !name.ends_with(".example") {
        return true;
    }
    if n.starts_with("/proc/") && name == "environ" {
        return true;
    }
    let home = home_part(n);
    let listed = |list: &[&str], p: &str| {
        list.iter().any(|s| match s.strip_suffix('/') {
            Some(dir) => p == dir || p.starts_with(s),
            None => p == *s,
        })
    };
    home.is_some_and(|h| listed(HOME_SECRETS, h)) || listed(SYSTEM_SECRETS, n)
}

/// The part of a home path after the home.
fn home_part(n: &str) -> Option<&str> {
    if n.starts_with('~') {
        return n.split_once('/').map(|(_, rest)| rest);
    }
    ["/home/", "/Users/"]
        .iter()
        .find_map(|h| n.strip_prefix(h))
        .and_then(|r| r.split_once('/').map(|x| x.1))
}

fn is_secret(a: &Analyzer, text: &str) -> bool {
    secret(&paths::normalize(&a.resolve(text)))
}

pub(super) fn check(
    a: &mut Analyzer,
    cx: Cx<'_, '_>,
    base: &str,
    args: &[Word<'_>],
    call: &Call<'_>,
) {
    let client = CLIENTS.contains(&base);
    let why = if client {
        uploads(a, base, args)
            .or_else(|| stdin_secret(a, cx, call))
            .or_else(|| spliced(a, cx, args))
    } else if RESOLVERS.contains(&base) {
        spliced(a, cx, args)
    } else if matches!(base, "scp" | "rsync" | "sftp" | "rclone") {
        copies_out(a, args)
    } else {
        None
    };
    let why = why
        .or_else(|| socket_redirect(a, cx, base, args, call))
        .or_else(|| serves_root(a, base, args));
    if let Some(why) = why {
        a.report(RuleId::DataExfiltration, call.span.clone(), why);
    }
}

/// `curl -F x=@FILE|-d @FILE|-T FILE`, `wget --post-file=FILE`: an uploaded secret file.
fn uploads(a: &Analyzer, base: &str, args: &[Word<'_>]) -> Option<String> {
    let mut i = 0;
    while let Some(w) = args.get(i) {
        i += 1;
        let t = w.text.as_str();
        let (opt, glued) = match t.split_once('=') {
            Some((o, v)) if o.starts_with("--") => (o, Some(v)),
            _ => (t, None),
        };
        let file_option = matches!(
            opt,
            "-T" | "--upload-file"
                | "--post-file"
                | "--body-file"
                | "--data-binary"
                | "--data"
                | "-d"
                | "--data-raw"
                | "--data-urlencode"
                | "--data-ascii"
                | "-F"
                | "--form"
                | "--json"
                | "--form-string"
        ) || (opt.starts_with("-T") && opt.len() > 2)
            || (opt.starts_with("-d") && opt.len() > 2 && !opt.starts_with("--"))
            || (opt.starts_with("-F") && opt.len() > 2);
        if !file_option {
            // httpie and friends: `field@FILE`, `field=@FILE`.
            if matches!(base, "http" | "https" | "xh")
                && let Some((_, f)) = t.split_once('@')
                && is_secret(a, f)
            {
                return Some(format!("`{base}` uploads the secret `{f}`"));
            }
            continue;
        }
        let value = match glued {
            Some(v) => v.to_owned(),
            None if opt.len() > 2 && !opt.starts_with("--") => opt[2..].to_owned(),
            None => {
                i += 1;
                args.get(i - 1).map(|v| v.text.clone()).unwrap_or_default()
            }
        };
        let file = value
            .rsplit_once(['@', '<'])
            .map_or(value.as_str(), |(_, f)| f)
            .split(';')
            .next()
            .unwrap_or_default();
        let whole = matches!(opt, "-T" | "--upload-file" | "--post-file" | "--body-file")
            || opt.starts_with("-T");
        let named = whole || value.contains(['@', '<']);
        if named && is_secret(a, file) {
            return Some(format!("`{base}` uploads the secret `{file}`"));
        }
    }
    None
}

/// A client whose standard input is a secret file or what an earlier stage made of one.
fn stdin_secret(a: &mut Analyzer, cx: Cx<'_, '_>, call: &Call<'_>) -> Option<String> {
    if let Some(f) = redirected_input(a, cx, call) {
        return Some(format!("a network client reads the secret `{f}`"));
    }
    let Stdin::Pipe { from, pipeline, .. } = call.stdin else {
        return None;
    };
    let stages: Vec<Node<'_>> = match pipeline {
        Some((p, index)) => {
            let all = named_children(p);
            let end = (index + 1).min(all.len());
            all[end.saturating_sub(4)..end].to_vec()
        }
        None => vec![from],
    };
    stages
        .into_iter()
        .rev()
        .find_map(|s| stage_reads_secret(a, cx, s))
        .map(|f| format!("a network client sends `{f}` read earlier in the pipeline"))
}

/// `< FILE` on the command, when FILE is a secret.
fn redirected_input(a: &Analyzer, cx: Cx<'_, '_>, call: &Call<'_>) -> Option<String> {
    call.redirects.iter().find_map(|r| {
        if !crate::syntax::reads_file(&cx.src.text, *r) {
            return None;
        }
        let destination = r.child_by_field_name("destination")?;
        let file = Word::read(cx.src, destination).text;
        is_secret(a, &file).then_some(file)
    })
}

/// The secret a pipeline stage (or substitution) reads, or `env` when it dumps the
/// environment.
fn stage_reads_secret(a: &mut Analyzer, cx: Cx<'_, '_>, stage: Node<'_>) -> Option<String> {
    let span = cx.src.orig(stage.byte_range());
    let commands = super::commands_within(a, cx, stage, 16);
    commands.into_iter().find_map(|c| {
        let words = command_words(cx, c);
        let (base, args) = unwrap(&words)?;
        if matches!(base, "env" | "printenv" | "set" | "export" | "declare") && args.is_empty() {
            return Some("the environment".to_owned());
        }
        if !READERS.contains(&base) {
            return None;
        }
        let file = args.iter().find_map(|w| {
            let t = w.text.strip_prefix("if=").unwrap_or(&w.text);
            is_secret(a, t).then(|| t.to_owned())
        });
        file.or_else(|| {
            let redirects: Vec<Node<'_>> = crate::syntax::fields(c)
                .filter(|(f, _)| *f == Some("redirect"))
                .map(|(_, n)| n)
                .collect();
            let call = Call {
                span: span.clone(),
                stdin: Stdin::Opaque,
                redirects,
                prefix: Vec::new(),
            };
            redirected_input(a, cx, &call)
        })
    })
}

/// A command substitution in an argument that reads a secret (`-d "$(cat ~/.ssh/id_rsa)"`,
/// `dig $(cat /etc/shadow | base64).x`).
fn spliced(a: &mut Analyzer, cx: Cx<'_, '_>, args: &[Word<'_>]) -> Option<String> {
    args.iter()
        .filter(|w| w.unknown)
        .filter_map(|w| w.node)
        .find_map(|node| stage_reads_secret(a, cx, node))
        .map(|f| format!("a request carries `{f}`"))
}

/// `scp|rsync SECRET… HOST:DEST`: a secret copied to another machine.
fn copies_out(a: &Analyzer, args: &[Word<'_>]) -> Option<String> {
    let operands: Vec<&Word<'_>> = args.iter().filter(|w| !w.text.starts_with('-')).collect();
    let (dest, sources) = operands.split_last()?;
    let remote = dest.text.contains(':') || dest.text.contains('@');
    if !remote {
        return None;
    }
    sources
        .iter()
        .find(|s| !s.text.contains(':') && is_secret(a, &s.text))
        .map(|s| format!("the secret `{}` is copied to another host", s.text))
}

/// Output redirected to `/dev/tcp|udp/…` from a command that reads a secret.
fn socket_redirect(
    a: &mut Analyzer,
    cx: Cx<'_, '_>,
    base: &str,
    args: &[Word<'_>],
    call: &Call<'_>,
) -> Option<String> {
    let to_socket = call.redirects.iter().any(|r| {
        let text = &cx.src.text[r.byte_range()];
        text.contains('>') && (text.contains("/dev/tcp/") || text.contains("/dev/udp/"))
    });
    if !to_socket {
        return None;
    }
    if matches!(base, "env" | "printenv" | "set") && args.is_empty() {
        return Some("the environment is sent to a socket".to_owned());
    }
    // A file's contents written into a raw socket is never a port check.
    let file = args
        .iter()
        .find(|w| READERS.contains(&base) && !w.text.starts_with('-'))
        .map(|w| w.text.clone())
        .or_else(|| redirected_input(a, cx, call));
    file.map(|f| format!("`{f}` is sent to a socket"))
}

/// A web server publishing `/`, a home or a secret directory to the network: `python3 -m
/// http.server -d /`, `php -S … -t ~`, `busybox httpd -h /`, `ruby -run -e httpd /`.
fn serves_root(a: &Analyzer, base: &str, args: &[Word<'_>]) -> Option<String> {
    if !(base.starts_with("python")
        || base.starts_with("php")
        || matches!(base, "busybox" | "httpd"))
    {
        return None;
    }
    let lits: Vec<&str> = args.iter().filter_map(Word::lit).collect();
    let server = match base {
        _ if base.starts_with("python") => lits.windows(2).any(|p| p == ["-m", "http.server"]),
        _ if base.starts_with("php") => lits.iter().any(|t| t.starts_with("-S")),
        "busybox" => lits.first() == Some(&"httpd"),
        "httpd" => true,
        _ => false,
    };
    if !server {
        return None;
    }
    let dir = lits.windows(2).find_map(|p| {
        matches!(p[0], "-d" | "--directory" | "-t" | "-h" | "--docroot").then_some(p[1])
    })?;
    let n = paths::normalize(&a.resolve(dir));
    (n == "/" || paths::is_home_dir(&n) || secret(&n))
        .then(|| format!("a web server publishes `{n}` to the network"))
}
