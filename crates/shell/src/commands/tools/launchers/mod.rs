//! Launchers: programs that run their operands as a command (`setarch`, `prlimit`,
//! `logsave`, `ssh-agent`, `dbus-launch`, `numactl`, `cgexec`, `firejail`, `proot`, `capsh --`,
//! `chronic`, `faketime`, `gosu`, `bwrap`, `perf stat`, `uv run`, `ip netns exec`, …) or their
//! operands as shell code (`nix-shell --run`, `hyperfine`, `pee`, `entr -s`, `watchexec`,
//! `sem`). The command is checked like any wrapped command; launchers that switch users are
//! `privilege-escalation`, those that detach are `escape-supervision`.

mod special;
mod table;

use super::opts::operand_from;
use crate::commands::code::{code_word, code_words};
use crate::commands::{at, wrapped};
use crate::rules::RuleId;
use crate::walk::{Analyzer, Call, Cx};
use crate::word::Word;
use table::table;

/// Where a launcher's command is.
pub(super) enum Target {
    /// The words from this index are a command and its arguments.
    Words(usize),
    /// The words from this index, joined, are one shell command.
    Joined(usize),
    /// Each of these words is a shell command.
    Strings(Vec<usize>),
    /// The words from this index are the arguments of a shell (`capsh -- -c CODE`).
    ShellArgs(usize),
}

/// The index of the command a launcher runs (for seeing through launchers elsewhere).
pub(in crate::commands) fn inner(words: &[Word<'_>]) -> Option<usize> {
    let name = words.first()?.lit()?;
    let base = super::base_of(name);
    match target(base, words)? {
        Target::Words(i) => Some(i),
        _ => None,
    }
}

/// Handles `base` if it is a launcher; returns whether it was.
pub(in crate::commands) fn check(
    a: &mut Analyzer,
    cx: Cx<'_, '_>,
    base: &str,
    w: &[Word<'_>],
    call: &Call<'_>,
) -> bool {
    let Some(found) = target(base, w) else {
        return known(base, w);
    };
    side_effects(a, base, w, call);
    match found {
        Target::Words(i) => {
            if let Some(rest) = w.get(i..).filter(|r| !r.is_empty()) {
                wrapped(a, cx, rest, &at(call, &rest[0]));
            }
        }
        Target::Joined(i) => {
            if let Some(rest) = w.get(i..).filter(|r| !r.is_empty()) {
                code_words(a, cx, rest, &format!("the `{base}` command"));
            }
        }
        Target::Strings(indices) => {
            for i in indices {
                if let Some(word) = w.get(i) {
                    code_word(a, cx, word, &format!("the `{base}` command"));
                }
            }
        }
        Target::ShellArgs(i) => {
            let mut words = vec![shell_word(w, i)];
            words.extend(w.get(i..).unwrap_or_default().iter().cloned());
            let span = words[0].span.clone();
            let mut inner = call.clone();
            inner.span = span.start.min(call.span.end)..call.span.end;
            wrapped(a, cx, &words, &inner);
        }
    }
    true
}

/// Launchers without a command to check (`ssh-agent -s`): handled, nothing to do.
fn known(base: &str, _w: &[Word<'_>]) -> bool {
    table(base).is_some()
}

/// A synthetic `bash` word standing where capsh starts its shell.
fn shell_word<'t>(w: &[Word<'t>], i: usize) -> Word<'t> {
    let anchor = w.get(i.saturating_sub(1)).or(w.first());
    let span = anchor.map_or(0..0, |x| x.span.clone());
    Word {
        node: None,
        span,
        text: "bash".to_owned(),
        dynamic: false,
        any: false,
        unknown: false,
        unknown_name: false,
        plain: true,
        escaped: false,
        fields: Vec::new(),
    }
}

/// Users switched and processes detached by a launcher.
fn side_effects(a: &mut Analyzer, base: &str, w: &[Word<'_>], call: &Call<'_>) {
    let flag = |c: char| {
        w[1..]
            .iter()
            .filter_map(Word::lit)
            .any(|t| t.starts_with('-') && !t.starts_with("--") && t.contains(c))
    };
    let switches = matches!(
        base,
        "gosu" | "su-exec" | "setuidgid" | "s6-setuidgid" | "capsh"
    ) || (base == "chpst" && (flag('u') || flag('U')))
        || (base == "schroot" && flag('u'));
    if switches {
        a.report(
            RuleId::PrivilegeEscalation,
            call.span.clone(),
            format!("`{base}` runs a command as another user or with other privileges"),
        );
    }
    let detaches = matches!(base, "daemon" | "dtach" | "abduco" | "tsp" | "pueue")
        || (base == "ts" && !w.get(1).is_some_and(|x| x.text.contains('%')));
    if detaches {
        a.report(
            RuleId::EscapeSupervision,
            call.span.clone(),
            format!("`{base}` starts a process outside the hook's process group"),
        );
    }
}

fn target(base: &str, w: &[Word<'_>]) -> Option<Target> {
    if let Some(found) = special::special(base, w) {
        return found;
    }
    let shape = table(base)?;
    let mut from = 1;
    if !shape.verbs.is_empty() {
        let k = w.iter().skip(1).position(|x| !x.text.starts_with('-'))? + 1;
        if !w[k].lit().is_some_and(|v| shape.verbs.contains(&v)) {
            return None;
        }
        from = k + 1;
    }
    if shape.dashes
        && let Some(k) = w[from..].iter().position(|x| x.lit() == Some("--"))
    {
        return (from + k + 1 < w.len()).then_some(Target::Words(from + k + 1));
    }
    let mut i = operand_from(w, from, &shape.spec)?;
    for _ in 0..shape.skip {
        i = operand_from(w, i + 1, &shape.spec)?;
    }
    Some(Target::Words(i))
}
