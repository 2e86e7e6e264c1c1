//! Environment variables that make programs run a command or load code: `GIT_SSH_COMMAND`,
//! `GIT_PAGER`, `PAGER`, `EDITOR`, `GIT_EXTERNAL_DIFF`, `LESSOPEN`,
//! `PYTHONSTARTUP`, `PERL5OPT`, `NODE_OPTIONS=--require`, `GIT_CONFIG_*`,
//! `TAR_OPTIONS`, `MAKEFLAGS=--eval`, module search paths into temporary directories, …, in every
//! assignment form (`X=v cmd`, `export X=v`, `env X=v cmd`). A literal command value is also
//! checked as shell code. `LD_PRELOAD`, `BASH_ENV`, prompt strings and `PATH` belong to the
//! `command-masquerade`, `hidden-code` and `search-path-change` checks (`commands/names.rs`,
//! `commands/hidden.rs`).

use tree_sitter::Node;

use super::opts::Val;
use super::{expect, in_temp_dir, option_exec, run_option};
use crate::commands::git::runs_program;
use crate::walk::{Analyzer, Call, Cx, Stdin};
use crate::word::Word;

/// How a variable's value is used.
#[derive(Clone, Copy)]
enum Kind {
    /// A command (run through a shell), fine when it names one of these programs.
    Command(&'static [&'static str]),
    /// `LESSOPEN`/`LESSCLOSE`: `|cmd %s`, `||cmd %s`, `cmd %s`.
    LessPipe,
    /// Code loaded into every program of a kind: suspicious whatever its value (but empty or
    /// `/dev/null`).
    Loader,
    /// Options of a program that may load code (`NODE_OPTIONS`, `PERL5OPT`, `RUBYOPT`,
    /// `TAR_OPTIONS`, `MAKEFLAGS`, `MANOPT`): the option prefixes that do.
    Options(&'static [&'static str]),
    /// A search path (`PYTHONPATH`, `PATH`): suspicious when it names a temporary directory.
    SearchPath,
    /// `GIT_CONFIG_KEY_<n>`: the key of a setting.
    GitKey,
    /// `GIT_CONFIG_PARAMETERS`: `'key'='value'` settings.
    GitParameters,
}

const ASKPASS: &[&str] = &[
    "ssh-askpass",
    "ksshaskpass",
    "x11-ssh-askpass",
    "gnome-ssh-askpass",
    "git-gui--askpass",
    "true",
    "echo",
];
const BROWSERS: &[&str] = &[
    "firefox",
    "chromium",
    "chromium-browser",
    "google-chrome",
    "xdg-open",
    "open",
    "w3m",
    "lynx",
    "true",
    "echo",
    "none",
];
const SHELLS: &[&str] = &["sh", "bash", "dash", "zsh", "ksh", "fish", "mksh"];

fn kind(name: &str) -> Option<Kind> {
    Some(match name {
        "GIT_SSH_COMMAND" | "GIT_SSH" | "RSYNC_RSH" | "CVS_RSH" => Kind::Command(expect::SSH),
        "PAGER" | "GIT_PAGER" | "MANPAGER" | "SYSTEMD_PAGER" | "BAT_PAGER" | "DELTA_PAGER"
        | "PSQL_PAGER" | "GH_PAGER" | "AWS_PAGER" | "MYSQL_PAGER" => Kind::Command(expect::PAGER),
        "EDITOR"
        | "VISUAL"
        | "GIT_EDITOR"
        | "GIT_SEQUENCE_EDITOR"
        | "SUDO_EDITOR"
        | "FCEDIT"
        | "KUBE_EDITOR"
        | "GH_EDITOR" => Kind::Command(expect::EDITOR),
        "GIT_PROXY_COMMAND" => Kind::Command(expect::PROXY),
        "GIT_ASKPASS" | "SSH_ASKPASS" | "SUDO_ASKPASS" => Kind::Command(ASKPASS),
        "BROWSER" => Kind::Command(BROWSERS),
        "SHELL" => Kind::Command(SHELLS),
        "GIT_EXTERNAL_DIFF" | "RSYNC_CONNECT_PROG" | "GIT_DIFF_PATH_COUNTER" => Kind::Command(&[]),
        "LESSOPEN" | "LESSCLOSE" => Kind::LessPipe,
        "DYLD_INSERT_LIBRARIES"
        | "PYTHONSTARTUP"
        | "PERL5DB"
        | "ZDOTDIR"
        | "GIT_CONFIG_GLOBAL"
        | "GIT_CONFIG_SYSTEM"
        | "GIT_CONFIG"
        | "GIT_EXEC_PATH"
        | "GIT_TEMPLATE_DIR"
        | "LESSKEYIN"
        | "LESSKEY"
        | "GCONV_PATH"
        | "VIMINIT"
        | "GVIMINIT"
        | "EXINIT"
        | "NEXINIT"
        | "PYTHONUSERBASE"
        | "IPYTHONDIR"
        | "WGETRC"
        | "CURL_HOME"
        | "PSQLRC"
        | "R_PROFILE_USER"
        | "R_PROFILE"
        | "LUA_INIT" => Kind::Loader,
        "LESS" => Kind::Options(&["+!", "+|", "-+!", "+s!"]),
        "JAVA_TOOL_OPTIONS" | "_JAVA_OPTIONS" | "JDK_JAVA_OPTIONS" | "JAVA_OPTS" | "MAVEN_OPTS"
        | "GRADLE_OPTS" | "SBT_OPTS" | "ANT_OPTS" => Kind::Options(&[
            "-javaagent",
            "-agentpath",
            "-agentlib",
            "-XX:OnError",
            "-XX:OnOutOfMemoryError",
            "-Xbootclasspath",
        ]),
        "NODE_OPTIONS" => Kind::Options(&[
            "--require",
            "-r",
            "--import",
            "--loader",
            "--experimental-loader",
            "--experimental-preload",
            "--eval",
            "-e",
        ]),
        "PERL5OPT" => Kind::Options(&["-M", "-m", "-d", "-e"]),
        "RUBYOPT" => Kind::Options(&["-r", "--require"]),
        "TAR_OPTIONS" => Kind::Options(&[
            "--to-command",
            "--checkpoint-action",
            "--use-compress",
            "-I",
            "--info-script",
            "--new-volume-script",
            "--rsh-command",
            "-F",
        ]),
        "MAKEFLAGS" | "MFLAGS" | "GNUMAKEFLAGS" => Kind::Options(&["--eval", "-E", "SHELL="]),
        "MANOPT" => Kind::Options(&["-P", "--pager", "-H", "--html"]),
        "PYTHONPATH" | "PERL5LIB" | "PERLLIB" | "RUBYLIB" | "NODE_PATH" | "XDG_CONFIG_HOME"
        | "XDG_DATA_HOME" | "LUA_PATH" | "LUA_CPATH" | "GEM_PATH" | "GEM_HOME" | "CLASSPATH" => {
            Kind::SearchPath
        }
        "GIT_CONFIG_PARAMETERS" => Kind::GitParameters,
        _ if name.starts_with("GIT_CONFIG_KEY_") => Kind::GitKey,
        _ => return None,
    })
}

/// Checks the assignment `node` (`NAME=VALUE`, also in `export`, `declare`, `X=v cmd`).
pub(crate) fn assignment(a: &mut Analyzer, cx: Cx<'_, '_>, node: Node<'_>) {
    let Some(name) = node.child_by_field_name("name") else {
        return;
    };
    let name = &cx.src.text[name.byte_range()];
    let Some(kind) = kind(name) else {
        return;
    };
    let Some(value) = node.child_by_field_name("value") else {
        return;
    };
    let word = Word::read(cx.src, value);
    let call = Call {
        span: cx.src.orig(node.byte_range()),
        stdin: Stdin::Opaque,
        redirects: Vec::new(),
        prefix: Vec::new(),
    };
    variable(a, cx, &call, name, kind, Val::of(&word));
}

/// `env [options] NAME=VALUE… COMMAND`: the assignments.
pub(super) fn env_words(a: &mut Analyzer, cx: Cx<'_, '_>, args: &[Word<'_>], call: &Call<'_>) {
    for word in args {
        let t = word.text.as_str();
        if t.starts_with('-') {
            continue;
        }
        let Some((name, _)) = t.split_once('=') else {
            break;
        };
        if let Some(kind) = kind(name) {
            variable(
                a,
                cx,
                call,
                name,
                kind,
                Val {
                    word,
                    at: name.len() + 1,
                },
            );
        }
    }
}

fn variable(
    a: &mut Analyzer,
    cx: Cx<'_, '_>,
    call: &Call<'_>,
    name: &str,
    kind: Kind,
    v: Val<'_, '_>,
) {
    let text = v.text();
    if text.is_empty() && !v.word.unknown {
        return;
    }
    let what = format!("`{name}`");
    match kind {
        Kind::Command(programs) => run_option(a, cx, call, v, programs, &what),
        Kind::LessPipe => {
            let at = text.len() - text.trim_start_matches(['|', '-']).len();
            let cmd = Val {
                word: v.word,
                at: v.at + at,
            };
            let pipes = [
                "lesspipe",
                "lesspipe.sh",
                "lessfile",
                "src-hilite-lesspipe.sh",
                "lesspipe.pl",
            ];
            run_option(a, cx, call, cmd, &pipes, &what);
        }
        Kind::Loader => {
            if text != "/dev/null" {
                option_exec(a, call, &format!("{what} (code loaded on its own)"), text);
            }
        }
        Kind::Options(risky) => {
            let hit = text
                .split_whitespace()
                .any(|o| risky.iter().any(|r| o.starts_with(r)));
            if hit {
                option_exec(
                    a,
                    call,
                    &format!("{what} with an option that loads code"),
                    text,
                );
            }
        }
        Kind::SearchPath => {
            if text.split(':').any(|d| !d.is_empty() && in_temp_dir(d)) {
                option_exec(a, call, &format!("{what} with a temporary directory"), text);
            }
        }
        Kind::GitKey => {
            if runs_program(text, None) {
                option_exec(a, call, &format!("{what} (a setting git runs)"), text);
            }
        }
        Kind::GitParameters => {
            let runs = text.split_whitespace().any(|s| {
                let s = s.replace('\'', "");
                let (key, value) = s.split_once('=').unwrap_or((&s, ""));
                runs_program(key, Some(value))
            });
            if runs {
                option_exec(a, call, &format!("{what} (settings git runs)"), text);
            }
        }
    }
}
