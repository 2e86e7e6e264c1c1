//! Launchers with a syntax of their own (`capsh --`, `bwrap`, `runcon`, `ip netns exec`,
//! terminals, `hyperfine`, `entr`, `watchexec`, …).

use super::super::opts::{Spec, operand_from};
use super::Target;
use crate::word::Word;

/// Launchers with their own syntax: `Some(None)` when one has no command.
pub(super) fn special(base: &str, w: &[Word<'_>]) -> Option<Option<Target>> {
    let found = match base {
        "capsh" => w
            .iter()
            .position(|x| x.lit() == Some("--"))
            .map(|k| Target::ShellArgs(k + 1)),
        "bwrap" => bwrap(w).map(Target::Words),
        "runcon" => {
            let options = w[1..]
                .iter()
                .any(|x| x.lit().is_some_and(|t| t.starts_with('-')));
            let spec = Spec {
                short: "urtl",
                long: &[
                    ("user", true),
                    ("role", true),
                    ("type", true),
                    ("range", true),
                ],
            };
            let first = operand_from(w, 1, &spec);
            let i = if options {
                first
            } else {
                first.and_then(|i| operand_from(w, i + 1, &spec))
            };
            i.map(Target::Words)
        }
        "keyctl" if w.get(1).and_then(Word::lit) == Some("session") => {
            (w.len() > 3).then_some(Target::Words(3))
        }
        "ip" => {
            let k = w
                .iter()
                .position(|x| matches!(x.lit(), Some("netns" | "vrf")))?;
            (w.get(k + 1).and_then(Word::lit) == Some("exec") && w.len() > k + 3)
                .then_some(Target::Words(k + 3))
        }
        "nix-shell" => w
            .iter()
            .position(|x| matches!(x.lit(), Some("--run" | "--command")))
            .filter(|k| k + 1 < w.len())
            .map(|k| Target::Strings(vec![k + 1])),
        "nix" => {
            let sub = w.get(1).and_then(Word::lit);
            let k = w
                .iter()
                .position(|x| matches!(x.lit(), Some("-c" | "--command")));
            match (sub, k) {
                (Some("develop" | "shell"), Some(k)) if k + 1 < w.len() => {
                    Some(Target::Words(k + 1))
                }
                _ => None,
            }
        }
        "ts" | "tsp" => {
            let spec = Spec {
                short: "LDSwtcpoisruU",
                long: &[],
            };
            operand_from(w, 1, &spec)
                .filter(|i| !w[*i].text.contains('%'))
                .map(Target::Words)
        }
        "xterm"
        | "uxterm"
        | "urxvt"
        | "rxvt"
        | "alacritty"
        | "st"
        | "x-terminal-emulator"
        | "konsole"
        | "kitty" => w
            .iter()
            .position(|x| matches!(x.lit(), Some("-e" | "--exec" | "--")))
            .filter(|k| k + 1 < w.len())
            .map(|k| Target::Words(k + 1)),
        "gnome-terminal" | "xfce4-terminal" | "terminator" | "tilix" | "mate-terminal" => {
            terminal(w)
        }
        "hyperfine" => Some(Target::Strings(hyperfine(w))),
        "pee" => Some(Target::Strings(
            (1..w.len())
                .filter(|i| !w[*i].text.starts_with('-'))
                .collect(),
        )),
        "entr" => {
            let i = operand_from(
                w,
                1,
                &Spec {
                    short: "",
                    long: &[],
                },
            )?;
            let shell = w[1..i].iter().any(|x| {
                x.lit()
                    .is_some_and(|t| t.starts_with('-') && t.contains('s'))
            });
            Some(if shell {
                Target::Strings(vec![i])
            } else {
                Target::Words(i)
            })
        }
        "watchexec" => {
            let spec = Spec {
                short: "wefisdEWpo",
                long: &[
                    ("watch", true),
                    ("exts", true),
                    ("filter", true),
                    ("ignore", true),
                    ("signal", true),
                    ("debounce", true),
                    ("env", true),
                    ("shell", true),
                    ("workdir", true),
                    ("on-busy-update", true),
                    ("project-origin", true),
                    ("delay-run", true),
                ],
            };
            let raw = w
                .iter()
                .any(|x| matches!(x.lit(), Some("--shell=none" | "-n")));
            operand_from(w, 1, &spec).map(|i| {
                if raw {
                    Target::Words(i)
                } else {
                    Target::Joined(i)
                }
            })
        }
        "sem" => {
            let spec = Spec {
                short: "jP",
                long: &[
                    ("jobs", true),
                    ("id", true),
                    ("semaphorename", true),
                    ("timeout", true),
                    ("st", true),
                    ("semaphoretimeout", true),
                ],
            };
            operand_from(w, 1, &spec).map(Target::Joined)
        }
        "pueue" if w.get(1).and_then(Word::lit) == Some("add") => {
            let spec = Spec {
                short: "wdgal",
                long: &[
                    ("working-directory", true),
                    ("delay", true),
                    ("group", true),
                    ("after", true),
                    ("label", true),
                    ("priority", true),
                ],
            };
            operand_from(w, 2, &spec).map(Target::Joined)
        }
        _ => return None,
    };
    Some(found)
}

/// `bwrap [options] COMMAND`: many options take one or two values.
fn bwrap(w: &[Word<'_>]) -> Option<usize> {
    let two = [
        "--bind",
        "--ro-bind",
        "--dev-bind",
        "--bind-try",
        "--ro-bind-try",
        "--dev-bind-try",
        "--symlink",
        "--setenv",
        "--chmod",
        "--file",
        "--bind-data",
        "--ro-bind-data",
        "--overlay-src",
    ];
    let mut i = 1;
    while let Some(t) = w.get(i).and_then(Word::lit) {
        if t == "--" {
            return (i + 1 < w.len()).then_some(i + 1);
        }
        if !t.starts_with("--") {
            return Some(i);
        }
        let flag = t.starts_with("--unshare")
            || t.starts_with("--share")
            || t.contains('=')
            || matches!(
                t,
                "--die-with-parent"
                    | "--new-session"
                    | "--as-pid-1"
                    | "--clearenv"
                    | "--disable-userns"
                    | "--assert-userns-disabled"
            );
        i += 1 + if flag {
            0
        } else if two.contains(&t) {
            2
        } else {
            1
        };
    }
    None
}

/// `gnome-terminal -- CMD`, `-x CMD`, `-e STRING`, `--command=STRING`.
fn terminal(w: &[Word<'_>]) -> Option<Target> {
    for (k, word) in w.iter().enumerate().skip(1) {
        match word.lit() {
            Some("--" | "-x" | "--execute") => {
                return (k + 1 < w.len()).then_some(Target::Words(k + 1));
            }
            Some("-e" | "--command") => {
                return (k + 1 < w.len()).then_some(Target::Strings(vec![k + 1]));
            }
            _ => {}
        }
    }
    None
}

/// `hyperfine [options] COMMAND…`: every command and the `--prepare`, `--setup`, `--cleanup`,
/// `--conclude` values are shell commands.
fn hyperfine(w: &[Word<'_>]) -> Vec<usize> {
    let code = [
        "-p",
        "--prepare",
        "-s",
        "--setup",
        "-c",
        "--cleanup",
        "--conclude",
    ];
    let one = [
        "-w",
        "--warmup",
        "-m",
        "--min-runs",
        "-M",
        "--max-runs",
        "-r",
        "--runs",
        "-S",
        "--shell",
        "-u",
        "--time-unit",
        "-n",
        "--command-name",
        "--export-csv",
        "--export-json",
        "--export-markdown",
        "--export-asciidoc",
        "--export-orgmode",
        "--style",
        "--sort",
        "--input",
        "--output",
    ];
    let mut out = Vec::new();
    let mut i = 1;
    while let Some(word) = w.get(i) {
        let t = word.text.as_str();
        i += 1;
        if code.contains(&t) {
            out.push(i);
            i += 1;
        } else if one.contains(&t) {
            i += 1;
        } else if matches!(t, "-L" | "--parameter-list") {
            i += 2;
        } else if matches!(t, "-P" | "--parameter-scan") {
            i += 3;
        } else if !t.starts_with('-') {
            out.push(i - 1);
        }
    }
    out.retain(|k| *k < w.len());
    out
}
