//! Tools that run commands, kill everything, wipe disks, change accounts or write start-up
//! files through their options and arguments (`tar --to-command`, `ssh -o ProxyCommand`,
//! `vim -c '!…'`, `pkill -u`, `nvme format`, `useradd -o -u 0`, `sort -o ~/.bashrc`, …),
//! reverse shells built from pipelines, code read from standard input by more interpreters,
//! and launchers that run their operands as a command (`setarch`, `prlimit`, `firejail`, …).
//!
//! Every submodule matches a family of tools by name and only reports; a command an option
//! holds is parsed and checked as shell code in its own right (findings point into the
//! option's word), and a launcher's command is checked like any wrapped command.

mod accounts;
mod consoles;
mod downloads;
mod editors;
mod envvars;
mod escapes;
mod exfil;
mod gitexec;
mod inline;
mod launchers;
mod machine;
mod netshell;
mod obscured;
mod opts;
mod privileged;
mod programs;
mod runners;
mod stdin;
mod tamper;
mod text;
mod writers;

pub(crate) use envvars::assignment;
pub(super) use launchers::{check as launcher, inner as launched};

use opts::Val;

use crate::rules::RuleId;
use crate::walk::{Analyzer, Call, Cx};
use crate::word::{UNKNOWN, Word};

/// Checks `words` (name first, `base` its file name) against the tool families. Reports
/// only; the caller goes on with the other checks.
pub(super) fn check(
    a: &mut Analyzer,
    cx: Cx<'_, '_>,
    base: &str,
    words: &[Word<'_>],
    call: &Call<'_>,
) {
    let args = &words[1..];
    runners::check(a, cx, base, args, call);
    if base == "git" {
        gitexec::check(a, cx, args, call);
    }
    editors::check(a, cx, base, words, call);
    programs::check(a, cx, base, words, call);
    machine::check(a, cx, base, args, call);
    accounts::check(a, base, args, call);
    writers::check(a, cx, base, args, call);
    netshell::check(a, cx, base, words, call);
    inline::check(a, cx, base, words, call);
    downloads::check(a, cx, base, words, call);
    stdin::check(a, cx, base, words, call);
    escapes::check(a, cx, base, words, call);
    privileged::check(a, base, args, call);
    tamper::check(a, base, args, call);
    exfil::check(a, cx, base, args, call);
    obscured::check(a, base, words, call);
    if base == "env" {
        envvars::env_words(a, cx, args, call);
    }
}

/// Programs a command option may name without comment, by kind of option.
mod expect {
    /// Remote shells (`rsync -e`, `GIT_SSH_COMMAND`, `scp -S`).
    pub const SSH: &[&str] = &[
        "ssh", "plink", "autossh", "rsh", "dbclient", "sshpass", "tsh",
    ];
    /// `ProxyCommand` helpers.
    pub const PROXY: &[&str] = &[
        "ssh",
        "nc",
        "ncat",
        "netcat",
        "socat",
        "connect",
        "connect-proxy",
        "corkscrew",
        "proxytunnel",
        "cloudflared",
        "aws",
        "gcloud",
        "sshpass",
        "websocat",
    ];
    /// Pagers.
    pub const PAGER: &[&str] = &[
        "less",
        "more",
        "most",
        "cat",
        "bat",
        "batcat",
        "delta",
        "diff-so-fancy",
        "diff-highlight",
        "tee",
        "head",
        "tail",
    ];
    /// Editors.
    pub const EDITOR: &[&str] = &[
        "vi",
        "vim",
        "nvim",
        "nano",
        "pico",
        "emacs",
        "emacsclient",
        "code",
        "subl",
        "micro",
        "hx",
        "helix",
        "kak",
        "gedit",
        "kate",
        "mate",
        "true",
        ":",
        "cat",
        "sed",
    ];
    /// Compression programs (`tar -I`).
    pub const COMPRESSOR: &[&str] = &[
        "gzip", "gunzip", "pigz", "unpigz", "bzip2", "pbzip2", "lbzip2", "xz", "pixz", "unxz",
        "zstd", "unzstd", "pzstd", "lz4", "lzip", "plzip", "lzop", "lzma", "brotli", "compress",
    ];
}

/// An option whose value a tool runs as a command (`tar --to-command=…`, `rsync -e …`): a
/// literal value is analysed as shell code; one not naming a program of `expect` is
/// `option-exec` (a value only known at run time, `dynamic-shell-code`).
fn run_option(
    a: &mut Analyzer,
    cx: Cx<'_, '_>,
    call: &Call<'_>,
    v: Val<'_, '_>,
    expect: &[&str],
    what: &str,
) {
    let text = v.text();
    if text.trim().is_empty() && !v.word.unknown {
        return;
    }
    let analysed = code_of(a, cx, v);
    if expected(text, expect) {
        return;
    }
    if analysed {
        option_exec(a, call, what, text);
    } else {
        a.report(
            RuleId::DynamicShellCode,
            v.word.span.clone(),
            format!("{what} runs a command built at run time, so it cannot be checked"),
        );
    }
}

/// Reports `option-exec`: `what` runs `text`.
fn option_exec(a: &mut Analyzer, call: &Call<'_>, what: &str, text: &str) {
    a.report(
        RuleId::OptionExec,
        call.span.clone(),
        format!(
            "{what} runs `{}`, a command the analyzer cannot vouch for",
            shown(text)
        ),
    );
}

/// Parses the value `v` as shell code and checks it one level deeper; false when it is not
/// static (nothing is checked then).
fn code_of(a: &mut Analyzer, cx: Cx<'_, '_>, v: Val<'_, '_>) -> bool {
    let Some(mut m) = v.word.mapped(cx.src) else {
        return false;
    };
    // The decoded text is the word's text for a static word; anything else is not trusted.
    if m.text != v.word.text || !m.text.is_char_boundary(v.at) || m.map.len() != m.text.len() {
        return false;
    }
    m.text.drain(..v.at);
    m.map.drain(..v.at);
    super::code::nested(a, cx, m, v.word.span.clone());
    true
}

/// Whether `text` is one plain command of `expect` (first word's file name), with no shell
/// syntax that could chain another.
fn expected(text: &str, expect: &[&str]) -> bool {
    let Some(first) = text.split_whitespace().next() else {
        return false;
    };
    let base = first.rsplit('/').next().unwrap_or(first);
    let chained = text.contains([';', '|', '&', '`', '$', '(', ')', '<', '>', '\n']);
    !chained && !first.contains(UNKNOWN) && expect.contains(&base)
}

/// `text` for a message: at most 60 characters, unknown parts as `…`.
fn shown(text: &str) -> String {
    let mut out: String = text.chars().take(60).collect();
    if out.len() < text.len() {
        out.push('…');
    }
    out.replace(UNKNOWN, "…")
}

/// The file name of a command word's value.
fn base_of(text: &str) -> &str {
    text.rsplit('/').next().unwrap_or(text)
}

/// Whether a directory value is a world-writable temporary directory (modules loaded from
/// there may have been dropped by anyone).
fn in_temp_dir(path: &str) -> bool {
    let n = crate::paths::normalize(path);
    ["/tmp", "/var/tmp", "/dev/shm", "/run/shm"]
        .iter()
        .any(|d| n == *d || n.strip_prefix(d).is_some_and(|r| r.starts_with('/')))
}

/// The first `limit` command nodes inside `node`, a work unit charged per node walked; fewer
/// when the analysis budget runs out.
pub(super) fn commands_within<'t>(
    a: &mut Analyzer,
    cx: Cx<'_, '_>,
    node: tree_sitter::Node<'t>,
    limit: usize,
) -> Vec<tree_sitter::Node<'t>> {
    let span = cx.src.orig(node.byte_range());
    let mut within = true;
    crate::syntax::descendants(node)
        .take_while(|_| {
            within = within && a.budget.charge(1, span.clone());
            within
        })
        .filter(|n| n.kind() == "command")
        .take(limit)
        .collect()
}
