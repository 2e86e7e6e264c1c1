//! git options and URLs that run programs: `--upload-pack`, `--receive-pack`, `--exec`,
//! `ext::` URLs, `clone --template|--config`, `rebase --exec`, `submodule foreach`,
//! `bisect run`, `filter-branch --*-filter`, `difftool --extcmd`, `grep -O`,
//! `send-email --*-cmd`, `--exec-path`, `--config-env`, glued `-ckey=value`; the command in a
//! `-c` setting git runs is analysed as shell code.

use super::opts::{self, Arg, Spec, Val};
use super::{code_of, option_exec, run_option};
use crate::commands::git::runs_program;
use crate::rules::RuleId;
use crate::walk::{Analyzer, Call, Cx};
use crate::word::{UNKNOWN, Word};

/// Checks `git ARGS`.
pub(super) fn check(a: &mut Analyzer, cx: Cx<'_, '_>, args: &[Word<'_>], call: &Call<'_>) {
    for word in args {
        if let Some(k) = word.text.find("ext::") {
            let url = &word.text[k..];
            option_exec(a, call, "a git `ext::` URL", url);
        }
    }
    let mut i = 0;
    while let Some(word) = args.get(i) {
        i += 1;
        let t = word.text.as_str();
        match t {
            "-c" => {
                if let Some(setting) = args.get(i) {
                    setting_code(a, cx, call, Val::of(setting));
                }
                i += 1;
            }
            "--config-env" => {
                if let Some(setting) = args.get(i) {
                    config_env(a, call, setting.text.as_str());
                }
                i += 1;
            }
            "-C" | "--git-dir" | "--work-tree" | "--namespace" | "--super-prefix" => i += 1,
            _ if t.starts_with("-c") && !t.starts_with("--") => {
                let v = Val { word, at: 2 };
                glued_setting(a, call, v.text());
                setting_code(a, cx, call, v);
            }
            _ if t.starts_with("--config-env=") => config_env(a, call, &t["--config-env=".len()..]),
            _ if t.starts_with("--exec-path=") => {
                option_exec(a, call, "`git --exec-path`", &t["--exec-path=".len()..])
            }
            _ if t.starts_with('-') => {}
            _ => return subcommand(a, cx, t, &args[i..], call),
        }
    }
}

/// `git -cKEY=VALUE` (glued), which git reads like `-c KEY=VALUE`.
fn glued_setting(a: &mut Analyzer, call: &Call<'_>, setting: &str) {
    let (key, value) = setting.split_once('=').unwrap_or((setting, ""));
    if runs_program(key, Some(value)) {
        a.report(
            RuleId::Persistence,
            call.span.clone(),
            format!(
                "`git -c` runs a program or shell command from the setting `{}`",
                super::shown(key)
            ),
        );
    }
}

/// `--config-env=KEY=ENVVAR`: a setting whose value comes from the environment.
fn config_env(a: &mut Analyzer, call: &Call<'_>, setting: &str) {
    let key = setting.split_once('=').map_or(setting, |(k, _)| k);
    if runs_program(key, None) {
        option_exec(a, call, "`git --config-env`", setting);
    }
}

/// The shell command in a `-c KEY=VALUE` setting git runs (`core.pager`, `alias.x=!…`), checked
/// as code.
fn setting_code(a: &mut Analyzer, cx: Cx<'_, '_>, call: &Call<'_>, v: Val<'_, '_>) {
    let text = v.text();
    let Some((key, value)) = text.split_once('=') else {
        return;
    };
    let lower = key.to_ascii_lowercase();
    if matches!(lower.as_str(), "protocol.ext.allow" | "protocol.allow") && value == "always" {
        option_exec(a, call, "`git -c protocol.ext.allow=always`", text);
    }
    if !runs_program(key, Some(value)) || key.contains(UNKNOWN) {
        return;
    }
    let bang = usize::from(value.starts_with('!'));
    let at = v.at + key.len() + 1 + bang;
    code_of(a, cx, Val { word: v.word, at });
}

const CLONE: Spec = Spec {
    short: "uobcjC",
    long: &[
        ("upload-pack", true),
        ("receive-pack", true),
        ("exec", true),
        ("template", true),
        ("config", true),
        ("origin", true),
        ("branch", true),
        ("depth", true),
        ("reference", true),
        ("separate-git-dir", true),
        ("jobs", true),
        ("remote", true),
        ("output", true),
        ("prefix", true),
        ("format", true),
        ("filter", true),
        ("shallow-since", true),
        ("shallow-exclude", true),
        ("server-option", true),
        ("bundle-uri", true),
        ("ref-format", true),
    ],
};

fn subcommand(a: &mut Analyzer, cx: Cx<'_, '_>, sub: &str, args: &[Word<'_>], call: &Call<'_>) {
    match sub {
        "clone" | "fetch" | "pull" | "ls-remote" | "push" | "archive" | "send-pack"
        | "fetch-pack" => transport(a, cx, sub, args, call),
        "rebase" => {
            let spec = Spec {
                short: "xsX",
                long: &[
                    ("exec", true),
                    ("strategy", true),
                    ("strategy-option", true),
                    ("onto", true),
                ],
            };
            let read = opts::scan(args, &spec);
            for v in opts::values(&read, Some('x'), &["exec"]) {
                run_option(a, cx, call, v, &[], "`git rebase --exec`");
            }
        }
        "submodule" => {
            let Some(k) = args.iter().position(|w| w.lit() == Some("foreach")) else {
                return;
            };
            let rest = &args[k + 1..];
            let from = rest.iter().take_while(|w| w.text.starts_with("--")).count();
            if let Some(code) = rest.get(from..).filter(|c| !c.is_empty()) {
                super::super::code::code_words(a, cx, code, "the `git submodule foreach` command");
            }
        }
        "bisect" if args.first().and_then(Word::lit) == Some("run") => {
            if let Some(rest) = args.get(1..).filter(|r| !r.is_empty()) {
                super::super::wrapped(a, cx, rest, &super::super::at(call, &rest[0]));
            }
        }
        "filter-branch" => {
            for (k, word) in args.iter().enumerate() {
                let filter = word
                    .lit()
                    .is_some_and(|t| t.starts_with("--") && t.ends_with("-filter"));
                if let Some(code) = args.get(k + 1).filter(|_| filter) {
                    code_of(a, cx, Val::of(code));
                }
            }
        }
        "difftool" => {
            let spec = Spec {
                short: "xtgy",
                long: &[("extcmd", true), ("tool", true)],
            };
            let read = opts::scan(args, &spec);
            let tools = [
                "diff", "meld", "vimdiff", "nvim", "vim", "kdiff3", "code", "opendiff", "delta",
                "difft",
            ];
            for v in opts::values(&read, Some('x'), &["extcmd"]) {
                run_option(a, cx, call, v, &tools, "`git difftool --extcmd`");
            }
        }
        "grep" => {
            for word in args {
                let t = word.text.as_str();
                let at = if let Some(rest) = t.strip_prefix("--open-files-in-pager=") {
                    t.len() - rest.len()
                } else if t.starts_with("-O") && !t.starts_with("--") && t.len() > 2 {
                    2
                } else {
                    continue;
                };
                run_option(
                    a,
                    cx,
                    call,
                    Val { word, at },
                    super::expect::PAGER,
                    "`git grep -O`",
                );
            }
        }
        "send-email" => {
            let spec = Spec {
                short: "",
                long: &[
                    ("sendmail-cmd", true),
                    ("smtp-server", true),
                    ("to-cmd", true),
                    ("cc-cmd", true),
                    ("header-cmd", true),
                ],
            };
            let read = opts::scan(args, &spec);
            for arg in &read {
                // `--smtp-server` names a program when it is an absolute path.
                if let Arg::Long(name, Some(v)) = *arg
                    && (name != "smtp-server" || v.text().starts_with('/'))
                {
                    run_option(a, cx, call, v, &[], &format!("`git send-email --{name}`"));
                }
            }
        }
        "daemon" => {
            for word in args {
                if let Some(hook) = word.text.strip_prefix("--access-hook=") {
                    option_exec(a, call, "`git daemon --access-hook`", hook);
                }
            }
        }
        _ => {}
    }
}

/// `clone|fetch|pull|ls-remote|push|archive`: the program run on the other side of a local
/// or ssh transport, the template whose hooks a clone installs, and settings a clone writes.
fn transport(a: &mut Analyzer, cx: Cx<'_, '_>, sub: &str, args: &[Word<'_>], call: &Call<'_>) {
    let read = opts::scan(args, &CLONE);
    let uploads = ["git-upload-pack", "git-receive-pack", "git-upload-archive"];
    for arg in &read {
        let (name, v) = match *arg {
            Arg::Short('u', Some(v)) if sub != "push" => ("upload-pack", v),
            Arg::Short('c', Some(v)) if sub == "clone" => ("config", v),
            Arg::Long(name, Some(v)) => (name, v),
            _ => continue,
        };
        match name {
            "upload-pack" | "receive-pack" | "exec" => {
                run_option(a, cx, call, v, &uploads, &format!("`git {sub} --{name}`"))
            }
            "template" => option_exec(a, call, "`git clone --template` (hooks)", v.text()),
            "config" if sub == "clone" => {
                glued_setting(a, call, v.text());
                setting_code(a, cx, call, v);
            }
            _ => {}
        }
    }
}
