//! `git config` settings that make git run a program later (`core.fsmonitor`, `core.pager`,
//! `alias.x=!…`, `include.path`, …), and `git -c` with the same settings.

use super::parse_args;
use crate::rules::RuleId;
use crate::walk::{Analyzer, Call};
use crate::word::{UNKNOWN, Word};

/// Checks `git ARGS`.
pub(super) fn check(a: &mut Analyzer, args: &[Word<'_>], call: &Call<'_>) {
    let mut i = 0;
    while let Some(word) = args.get(i) {
        let Some(t) = word.lit() else { return };
        i += 1;
        match t {
            "-c" => {
                if let Some(setting) = args.get(i) {
                    let (key, value) = setting.text.split_once('=').unwrap_or((&setting.text, ""));
                    if runs_program(key, Some(value)) {
                        report(a, call, key, "`git -c` runs");
                    }
                }
                i += 1;
            }
            "-C" | "--git-dir" | "--work-tree" | "--namespace" | "--config-env" => i += 1,
            "config" => return config(a, &args[i..], call),
            _ if t.starts_with('-') => {}
            _ => return,
        }
    }
}

/// `git config [--global|--system|--file F] KEY VALUE`, `git config set KEY VALUE`.
fn config(a: &mut Analyzer, args: &[Word<'_>], call: &Call<'_>) {
    let p = parse_args(
        args,
        "f",
        &["file", "blob", "type", "default", "comment", "value", "url"],
    );
    let reads = [
        "get",
        "get-all",
        "get-regexp",
        "get-urlmatch",
        "get-color",
        "get-colorbool",
        "list",
        "unset",
        "unset-all",
        "remove-section",
        "rename-section",
        "edit",
    ];
    if p.short.contains(['l', 'e']) || p.long.iter().any(|(n, _)| reads.contains(n)) {
        return;
    }
    let mut operands = p.operands.iter().map(|w| w.text.as_str());
    let mut key = operands.next();
    if key == Some("set") {
        key = operands.next();
    } else if key.is_some_and(|k| reads.contains(&k)) {
        return;
    }
    let (Some(key), Some(value)) = (key, operands.next()) else {
        return;
    };
    if runs_program(key, Some(value)) {
        report(a, call, key, "`git config` makes git run");
    }
}

fn report(a: &mut Analyzer, call: &Call<'_>, key: &str, how: &str) {
    let key = key.replace(UNKNOWN, "…");
    a.report(
        RuleId::Persistence,
        call.span.clone(),
        format!("{how} a program or shell command from the setting `{key}` on later git calls"),
    );
}

/// Whether git runs the value of `key` as a program or shell command (or loads more
/// configuration from it).
pub(crate) fn runs_program(key: &str, value: Option<&str>) -> bool {
    let key = key.to_ascii_lowercase();
    if key.contains(UNKNOWN) {
        return true;
    }
    let section = key.split('.').next().unwrap_or_default();
    let var = key.rsplit('.').next().unwrap_or_default();
    match section {
        // An alias starting with `!` is a shell command.
        "alias" => value.is_none_or(|v| v.contains(UNKNOWN) || v.trim_start().starts_with('!')),
        "core" => matches!(
            var,
            "fsmonitor" | "pager" | "sshcommand" | "hookspath" | "editor" | "askpass" | "gitproxy"
        ),
        // Hooks in a template directory are copied into every new repository.
        "init" => var == "templatedir",
        "include" | "includeif" => var == "path",
        "filter" => matches!(var, "clean" | "smudge" | "process"),
        "diff" => matches!(var, "external" | "textconv" | "command"),
        "merge" | "mergetool" | "difftool" => matches!(var, "driver" | "cmd" | "path"),
        "credential" => var == "helper",
        "gpg" => var == "program",
        "sequence" => var == "editor",
        "pager" => true,
        "uploadpack" => var == "packobjectshook",
        "remote" => matches!(var, "uploadpack" | "receivepack" | "vcs"),
        _ => false,
    }
}
