//! Commands that run another command: the wrapped command is checked in its own right.

use std::borrow::Cow;
use std::ops::Range;

use super::{at, first_operand, long_matches, wrapped};
use crate::paths;
use crate::rules::RuleId;
use crate::walk::{Analyzer, Call, Cx};
use crate::word::Word;

/// Handles `base` if it is a wrapper (or `find`); returns whether it did.
pub(super) fn check(
    a: &mut Analyzer,
    cx: Cx<'_, '_>,
    base: &str,
    words: &[Word<'_>],
    call: &Call<'_>,
) -> bool {
    if matches!(
        base,
        "sudo" | "su" | "doas" | "pkexec" | "run0" | "sudoedit" | "runuser" | "please"
    ) {
        a.report(
            RuleId::PrivilegeEscalation,
            call.span.clone(),
            format!("`{base}` runs a command as another user"),
        );
    }
    supervision(a, base, words, call);
    match base {
        "env" => env(a, cx, words, call),
        "xargs" => {
            super::deletes::xargs(a, cx, words, call);
            xargs(a, cx, words, call);
        }
        "find" => {
            super::deletes::find(a, words, call);
            find(a, cx, words, call);
        }
        "watch" => watch(a, cx, words),
        "su" | "runuser" => {
            code_option(a, cx, words, "c", "command");
        }
        "flock" => {
            if !code_option(a, cx, words, "c", "command") {
                let index = first_operand(words, "wE", &["--timeout", "--conflict-exit-code"]);
                inner(a, cx, words, call, index.map(|i| i + 1));
            }
        }
        "sg" => {
            // `sg GROUP [-c] COMMAND`: the command is a shell string.
            let from = if w_lit(words, 2) == Some("-c") { 3 } else { 2 };
            if let Some(rest) = words.get(from..).filter(|r| !r.is_empty()) {
                super::code::code_words(a, cx, rest, "the `sg` command");
            }
        }
        "tmux" => tmux(a, cx, words),
        "parallel" => parallel(a, cx, words, call),
        "script" => {
            if !code_option(a, cx, words, "c", "command") {
                // Without `-c`, `script` starts an interactive shell on the same input.
                use super::producers::{Reader, stdin_code};
                stdin_code(a, cx, call, Reader::Shell, "script");
            }
        }
        _ => match inner_index(base, words) {
            Some(index) => inner(a, cx, words, call, index),
            None => return false,
        },
    }
    true
}

fn inner(
    a: &mut Analyzer,
    cx: Cx<'_, '_>,
    words: &[Word<'_>],
    call: &Call<'_>,
    index: Option<usize>,
) {
    if let Some(rest) = index.and_then(|i| words.get(i..)).filter(|r| !r.is_empty()) {
        let coproc = words.first().and_then(Word::lit) == Some("coproc");
        let rest = group_body(rest, coproc);
        if !rest.is_empty() {
            wrapped(a, cx, rest, &at(call, &rest[0]));
        }
    }
}

/// tree-sitter-bash reads `time { rm -rf /; }` and `coproc NAME { …; }` as a command whose
/// arguments are `{ rm -rf /`: skip the opening `{` (and the coprocess name) to reach the
/// command inside.
fn group_body<'w, 't>(mut rest: &'w [Word<'t>], coproc: bool) -> &'w [Word<'t>] {
    loop {
        let opens = |w: Option<&Word<'_>>| w.and_then(Word::lit).is_some_and(|t| t == "{");
        if opens(rest.first())
            || (coproc && rest.first().is_some_and(|w| w.plain) && opens(rest.get(1)))
        {
            let skip = if opens(rest.first()) { 1 } else { 2 };
            rest = &rest[skip..];
        } else if rest.first().and_then(Word::lit) == Some("!") {
            rest = &rest[1..];
        } else {
            return rest;
        }
    }
}

/// For simple wrappers: `Some(index of the wrapped command)` (inner `None`: no command).
fn inner_index(base: &str, w: &[Word<'_>]) -> Option<Option<usize>> {
    let index = match base {
        "nice" => first_operand(w, "n", &["--adjustment"]),
        "timeout" => first_operand(w, "sk", &["--signal", "--kill-after"]).map(|i| i + 1),
        "nohup" | "builtin" | "unbuffer" | "torsocks" | "catchsegv" | "coproc" | "setsid" => {
            first_operand(w, "", &[])
        }
        "command" => {
            let listing = w[1..]
                .iter()
                .map_while(|x| x.lit().filter(|t| t.starts_with('-') && *t != "--"))
                .any(|t| t.contains(['v', 'V']));
            if listing {
                None
            } else {
                first_operand(w, "", &[])
            }
        }
        "exec" => first_operand(w, "a", &[]),
        "time" => first_operand(w, "fo", &["--format", "--output"]),
        "stdbuf" => first_operand(w, "ioe", &["--input", "--output", "--error"]),
        "ionice" => first_operand(
            w,
            "cnpPu",
            &["--class", "--classdata", "--pid", "--pgid", "--uid"],
        ),
        "chrt" => first_operand(w, "T", &["--sched-runtime"]).map(|i| i + 1),
        "taskset" => first_operand(w, "", &[]).map(|i| i + 1),
        "chroot" => first_operand(w, "", &["--userspec", "--groups"]).map(|i| i + 1),
        "strace" | "ltrace" => first_operand(w, "oepsuEPIbaSX", &[]),
        "proxychains" | "proxychains4" => first_operand(w, "f", &[]),
        "busybox" | "toybox" | "fakeroot" | "eatmydata" | "valgrind" => first_operand(w, "", &[]),
        "setpriv" => first_operand(
            w,
            "",
            &[
                "--reuid",
                "--regid",
                "--groups",
                "--inh-caps",
                "--ambient-caps",
                "--bounding-set",
                "--securebits",
                "--pdeathsig",
            ],
        ),
        "unshare" => first_operand(w, "SGRw", &["--setuid", "--setgid", "--root", "--wd"]),
        "nsenter" => first_operand(w, "tSGrw", &["--target", "--setuid", "--setgid"]),
        "xvfb-run" => first_operand(w, "nsfpe", &["--server-num", "--server-args"]),
        "systemd-run" => first_operand(
            w,
            "upEHM",
            &[
                "--unit",
                "--property",
                "--setenv",
                "--host",
                "--machine",
                "--description",
                "--slice",
                "--uid",
                "--gid",
                "--nice",
                "--working-directory",
                "--on-calendar",
                "--on-active",
            ],
        ),
        "screen" => first_operand(w, "ScehpTt", &[]),
        "sudo" => first_operand(
            w,
            "ugCDhprtTUR",
            &[
                "--user",
                "--group",
                "--chdir",
                "--close-from",
                "--host",
                "--prompt",
                "--role",
                "--type",
                "--command-timeout",
                "--other-user",
                "--chroot",
            ],
        ),
        "doas" => first_operand(w, "uC", &[]),
        "please" => first_operand(w, "tgudcr", &["--target", "--group", "--dir"]),
        "pkexec" => first_operand(w, "", &["--user"]),
        "run0" => first_operand(
            w,
            "ugD",
            &[
                "--user",
                "--group",
                "--chdir",
                "--description",
                "--slice",
                "--property",
                "--setenv",
                "--nice",
                "--machine",
                "--unit",
            ],
        ),
        "sudoedit" => None,
        _ => return None,
    };
    Some(index)
}

/// The command a chain of simple wrappers finally runs: its name and arguments.
pub(super) fn unwrap<'w, 't>(mut words: &'w [Word<'t>]) -> Option<(&'w str, &'w [Word<'t>])> {
    loop {
        let name = words.first()?.lit()?;
        let base = name.rsplit('/').next().unwrap_or(name);
        let index = match base {
            "env" => Some(env_command(words).0),
            _ => inner_index(base, words)
                .flatten()
                .or_else(|| super::tools::launched(words)),
        };
        match index.and_then(|i| words.get(i..)).filter(|r| !r.is_empty()) {
            Some(rest) => words = rest,
            None => return Some((base, &words[1..])),
        }
    }
}

fn is_assignment(text: &str) -> bool {
    text.split_once('=').is_some_and(|(name, _)| {
        let mut chars = name.chars();
        chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// Commands that start a process outside the hook's process group, which the hook runner
/// kills at the deadline: the process keeps running unsupervised.
fn supervision(a: &mut Analyzer, base: &str, w: &[Word<'_>], call: &Call<'_>) {
    let escapes = match base {
        "setsid" | "daemonize" | "disown" | "start-stop-daemon" | "systemd-run" => true,
        // `screen -d -m` / `-dmS NAME`: a detached session.
        "screen" => {
            let end = first_operand(w, "ScehpTt", &[]).unwrap_or(w.len());
            let flags: String = w[1..end.max(1)]
                .iter()
                .filter_map(Word::lit)
                .filter(|t| t.starts_with('-') && !t.starts_with("--"))
                .collect();
            flags.contains('d') && flags.contains('m')
        }
        // Every session or window tmux creates belongs to its daemonised server.
        "tmux" => w.iter().any(|x| {
            matches!(
                x.lit(),
                Some("new" | "new-session" | "new-window" | "neww" | "split-window" | "splitw")
            )
        }),
        _ => false,
    };
    if escapes {
        a.report(
            RuleId::EscapeSupervision,
            call.span.clone(),
            format!(
                "`{base}` starts a process outside the hook's process group, which outlives the hook's deadline"
            ),
        );
    }
}

/// `env [-i] [-u NAME] [-C DIR] [-S STRING] [NAME=VALUE]… COMMAND…`.
fn env(a: &mut Analyzer, cx: Cx<'_, '_>, w: &[Word<'_>], call: &Call<'_>) {
    let (i, split) = env_command(w);
    // `env -C DIR CMD` runs CMD in DIR, like `cd DIR && CMD`.
    let saved = (a.cwd_protected, a.cwd.clone());
    if let Some(dir) = env_chdir(&w[..i.min(w.len())]) {
        a.cwd_protected |= paths::is_protected_tree(&dir);
        a.cwd = super::destructive::chdir(a.cwd.as_deref(), &dir);
    }
    env_inner(a, cx, w, call, i, split);
    (a.cwd_protected, a.cwd) = saved;
}

/// The directory of `env -C DIR`, `-CDIR`, `--chdir DIR`, `--chdir=DIR` among `env`'s options.
fn env_chdir(options: &[Word<'_>]) -> Option<String> {
    let mut found = None;
    for (k, word) in options.iter().enumerate().skip(1) {
        let Some(t) = word.lit() else { continue };
        let next = || options.get(k + 1).map(|x| x.text.clone());
        if long_option(t, "chdir") {
            found = match t.split_once('=') {
                Some((_, dir)) => Some(dir.to_owned()),
                None => next(),
            };
        } else if !t.starts_with("--")
            && t.starts_with('-')
            && let Some(at) = t.find('C').filter(|_| !t[1..].contains(['u', 'P', 'S']))
        {
            let rest = &t[at + 1..];
            found = if rest.is_empty() {
                next()
            } else {
                Some(rest.to_owned())
            };
        }
    }
    found
}

fn env_inner(
    a: &mut Analyzer,
    cx: Cx<'_, '_>,
    w: &[Word<'_>],
    call: &Call<'_>,
    i: usize,
    split: Option<usize>,
) {
    match split.and_then(|s| w.get(s).map(|word| (s, word))) {
        Some((s, word)) => {
            let t = word.text.as_str();
            let prefix = if t.starts_with("--") {
                t.find('=').map_or(t.len(), |k| k + 1)
            } else {
                // `-S…` or a cluster of flags ending in it (`-iS'…'`).
                t.find('S').map_or(t.len(), |k| k + 1)
            };
            if t.len() > prefix {
                split_string(a, cx, word, prefix);
            } else if let Some(next) = w.get(s + 1) {
                super::code::code_word(a, cx, next, "the `env -S` string");
            }
        }
        None => inner(a, cx, w, call, Some(i)),
    }
}

/// Index of the command `env` runs, and of its `-S`/`--split-string` option if any.
fn env_command(w: &[Word<'_>]) -> (usize, Option<usize>) {
    let mut i = 1;
    let mut options = true;
    while let Some(word) = w.get(i) {
        let Some(t) = word.lit() else { break };
        if options && t == "--" {
            options = false;
        } else if options && (long_option(t, "split-string") || short_cluster_with(t, 'S', "uCP")) {
            return (i, Some(i));
        } else if options && t.starts_with("--") {
            let takes = !t.contains('=') && (long_option(t, "unset") || long_option(t, "chdir"));
            i += usize::from(takes);
        } else if options && t.len() > 1 && t.starts_with('-') {
            let takes = t[1..]
                .char_indices()
                .find(|(_, c)| matches!(c, 'u' | 'C' | 'P'))
                .is_some_and(|(k, _)| k + 2 == t.len());
            i += usize::from(takes);
        } else if !is_assignment(t) {
            break;
        }
        i += 1;
    }
    (i, None)
}

fn split_string(a: &mut Analyzer, cx: Cx<'_, '_>, word: &Word<'_>, prefix: usize) {
    match word.mapped(cx.src) {
        Some(mut m) => {
            m.text.drain(..prefix.min(m.text.len()));
            m.map.drain(..prefix.min(m.map.len()));
            super::code::nested(a, cx, m, word.span.clone());
        }
        None => super::code::code_word(a, cx, word, "the `env -S` string"),
    }
}

/// Whether `t` is the long option `--full` (or `--full=…`), spelled out or abbreviated to
/// an unambiguous prefix as getopt_long allows.
fn long_option(t: &str, full: &str) -> bool {
    t.strip_prefix("--")
        .map(|l| l.split_once('=').map_or(l, |(name, _)| name))
        .is_some_and(|name| long_matches(name, full))
}

/// Whether `t` is a cluster of short options (`-iS…`) in which `letter` appears, with no
/// value-taking option (`values`) before it.
fn short_cluster_with(t: &str, letter: char, values: &str) -> bool {
    let Some(flags) = t.strip_prefix('-').filter(|f| !f.starts_with('-')) else {
        return false;
    };
    for c in flags.chars() {
        if c == letter {
            return true;
        }
        if values.contains(c) || !c.is_ascii_alphanumeric() {
            return false;
        }
    }
    false
}

/// `-c CODE` / `--command=CODE` of `su`, `flock`, `script`: checked as shell code. The option
/// may end a cluster (`-qc CODE`) or carry its value (`-cCODE`, `-qcCODE`); a value glued
/// to it is checked and so is the next word (whichever getopt took).
fn code_option(a: &mut Analyzer, cx: Cx<'_, '_>, w: &[Word<'_>], short: &str, long: &str) -> bool {
    let letter = short.chars().next().unwrap_or('c');
    let short = format!("-{short}");
    for (i, word) in w.iter().enumerate().skip(1) {
        let Some(t) = word.lit() else { continue };
        if t != short && short_cluster_with(t, letter, "") {
            let at = t.find(letter).map_or(t.len(), |k| k + 1);
            if at < t.len() {
                split_string(a, cx, word, at);
            }
            if let Some(code) = w.get(i + 1) {
                super::code::code_word(a, cx, code, &format!("the `{t}` string"));
            }
            return true;
        }
        if t == short || (long_option(t, long) && !t.contains('=')) {
            if let Some(code) = w.get(i + 1) {
                super::code::code_word(a, cx, code, &format!("the `{t}` string"));
            }
            return true;
        }
        if long_option(t, long) {
            let at = t.find('=').map_or(t.len(), |k| k + 1);
            split_string(a, cx, word, at);
            return true;
        }
    }
    false
}

/// `watch [options] COMMAND…`: the words are joined and run by `sh -c` (unless `-x`).
fn watch(a: &mut Analyzer, cx: Cx<'_, '_>, w: &[Word<'_>]) {
    let Some(i) = first_operand(w, "dngq", &["--interval", "--differences", "--equexit"]) else {
        return;
    };
    let exec = w[1..i]
        .iter()
        .any(|x| x.lit().is_some_and(|t| t == "-x" || t == "--exec"));
    let call = Call {
        span: w[i].span.start..w[w.len() - 1].span.end,
        stdin: crate::walk::Stdin::Opaque,
        redirects: Vec::new(),
        prefix: Vec::new(),
    };
    if exec {
        wrapped(a, cx, &w[i..], &call);
    } else {
        super::code::code_words(a, cx, &w[i..], "the `watch` command");
    }
}

/// `xargs [options] [COMMAND [ARG]…]`: the command gets run-time input as arguments.
fn xargs(a: &mut Analyzer, cx: Cx<'_, '_>, w: &[Word<'_>], call: &Call<'_>) {
    let mut i = 1;
    let mut replace: Option<String> = None;
    while let Some(word) = w.get(i) {
        let Some(t) = word.lit() else { break };
        i += 1;
        if t == "--" {
            break;
        }
        if let Some(long) = t.strip_prefix("--") {
            let name = long.split_once('=').map_or(long, |(n, _)| n);
            if long_matches(name, "replace") {
                let value = long.split_once('=').map_or("{}", |(_, r)| r);
                replace = Some(value.to_owned());
            } else if !long.contains('=')
                && [
                    "arg-file",
                    "delimiter",
                    "max-args",
                    "max-procs",
                    "max-chars",
                    "process-slot-var",
                ]
                .iter()
                .any(|full| long_matches(name, full))
            {
                i += 1;
            }
            continue;
        }
        if t.len() < 2 || !t.starts_with('-') {
            i -= 1;
            break;
        }
        for (k, c) in t[1..].char_indices() {
            let rest = &t[2 + k..];
            match c {
                'I' if rest.is_empty() => {
                    replace = w.get(i).map(|x| x.text.clone());
                    i += 1;
                }
                'I' => replace = Some(rest.to_owned()),
                'i' => replace = Some(if rest.is_empty() { "{}" } else { rest }.to_owned()),
                'a' | 'd' | 'E' | 'L' | 'n' | 'P' | 's' if rest.is_empty() => i += 1,
                'a' | 'd' | 'E' | 'L' | 'n' | 'P' | 's' | 'e' | 'l' => {}
                _ => continue,
            }
            break;
        }
    }
    let Some(command) = w.get(i..).filter(|r| !r.is_empty()) else {
        return;
    };
    let inner = match replace.filter(|r| !r.is_empty()) {
        Some(r) if command.iter().any(|word| word.text.contains(&r)) => {
            let replaced = command.iter().map(|word| {
                if word.text.contains(&r) {
                    Word::input(word.span.clone())
                } else {
                    word.clone()
                }
            });
            Cow::Owned(replaced.collect())
        }
        Some(_) => Cow::Borrowed(command),
        None => with_input(command, call.span.clone()),
    };
    let mut inner_call = at(call, &command[0]);
    inner_call.stdin = crate::walk::Stdin::Opaque;
    if let Some(inner) = charged(a, inner, call) {
        wrapped(a, cx, &inner, &inner_call);
    }
}

/// `words` with run-time input appended (what `xargs` and `parallel` give the command),
/// borrowed as they are when they already end with such input (a chain of `xargs`, where
/// each level would only add more of the same).
fn with_input<'w, 't>(words: &'w [Word<'t>], span: Range<usize>) -> Cow<'w, [Word<'t>]> {
    if words.last().is_some_and(|w| w.any && w.node.is_none()) {
        Cow::Borrowed(words)
    } else {
        let mut owned = words.to_vec();
        owned.push(Word::input(span));
        Cow::Owned(owned)
    }
}

/// `words`, once their copy (only made when words change) is charged; `None` when the budget
/// ran out.
fn charged<'w, 't>(
    a: &mut Analyzer,
    words: Cow<'w, [Word<'t>]>,
    call: &Call<'_>,
) -> Option<Cow<'w, [Word<'t>]>> {
    let bytes: usize = match &words {
        Cow::Borrowed(_) => 0,
        Cow::Owned(owned) => owned.iter().map(|w| w.text.len() + 1).sum(),
    };
    a.budget.charge(bytes, call.span.clone()).then_some(words)
}

/// `find [-H|-L|-P] ROOT… EXPRESSION`: `-exec`/`-execdir`/`-ok`/`-okdir` commands, with `{}`
/// standing for the roots, and `-delete`.
fn find(a: &mut Analyzer, cx: Cx<'_, '_>, w: &[Word<'_>], call: &Call<'_>) {
    let mut i = 1;
    while let Some(t) = w.get(i).and_then(Word::lit) {
        match t {
            "-H" | "-L" | "-P" => i += 1,
            "-D" => i += 2,
            _ if t.starts_with("-O") => i += 1,
            _ => break,
        }
    }
    let start = i;
    while let Some(word) = w.get(i) {
        if word
            .lit()
            .is_some_and(|t| t.starts_with('-') || matches!(t, "(" | "!" | ","))
        {
            break;
        }
        i += 1;
    }
    let roots = &w[start.min(i)..i];
    let protected = roots
        .iter()
        .find(|r| r.any || paths::is_protected_tree(&r.text));
    let root = protected.or(roots.first());
    while let Some(word) = w.get(i) {
        match word.lit() {
            Some("-delete") => {
                if let Some(r) = protected {
                    a.report(
                        RuleId::DestructiveDelete,
                        call.span.clone(),
                        format!(
                            "`find {} -delete` deletes a protected tree",
                            r.text.replace('\0', "…")
                        ),
                    );
                }
            }
            Some("-exec" | "-execdir" | "-ok" | "-okdir") => {
                let from = i + 1;
                let mut end = from;
                while w
                    .get(end)
                    .is_some_and(|x| !matches!(x.lit(), Some(";" | "+")))
                {
                    end += 1;
                }
                let words = &w[from..end.min(w.len())];
                let inner: Cow<'_, [Word<'_>]> = if words.iter().any(|x| x.text.contains("{}")) {
                    Cow::Owned(words.iter().map(|x| placeholder(x, root)).collect())
                } else {
                    Cow::Borrowed(words)
                };
                if let Some(inner) = charged(a, inner, call).filter(|w| !w.is_empty()) {
                    wrapped(a, cx, &inner, &at(call, &inner[0]));
                }
                i = end;
            }
            _ => {}
        }
        i += 1;
    }
}

/// `word` with `{}` replaced by the value of `root` (`.` without roots).
fn placeholder<'t>(word: &Word<'t>, root: Option<&Word<'_>>) -> Word<'t> {
    if !word.text.contains("{}") {
        return word.clone();
    }
    let mut out = word.clone();
    let value = root.map_or(".", |r| r.text.as_str());
    out.text = word.text.replace("{}", value);
    out.node = None;
    out.dynamic = true;
    out.any = root.is_some_and(|r| r.any);
    out
}

fn w_lit<'w>(w: &'w [Word<'_>], i: usize) -> Option<&'w str> {
    w.get(i).and_then(Word::lit)
}

/// `tmux new[-session]|new-window|split-window|respawn-pane … [SHELL-COMMAND…]`: a shell
/// string.
fn tmux(a: &mut Analyzer, cx: Cx<'_, '_>, w: &[Word<'_>]) {
    let Some(verb) = w.iter().position(|x| {
        matches!(
            x.lit(),
            Some("new" | "new-session" | "new-window" | "neww" | "split-window" | "splitw")
                | Some("respawn-pane" | "respawnp" | "respawn-window" | "respawnw")
        )
    }) else {
        return;
    };
    let rest = &w[verb..];
    if let Some(i) = first_operand(rest, "sncteFxyEtl", &[])
        && let Some(code) = rest.get(i..).filter(|r| !r.is_empty())
    {
        super::code::code_words(a, cx, code, "the `tmux` command");
    }
}

/// `parallel [OPTIONS] COMMAND… ::: ARG…`: the command runs (through a shell) with the
/// arguments after `:::`, or with run-time input when there are none.
fn parallel(a: &mut Analyzer, cx: Cx<'_, '_>, w: &[Word<'_>], call: &Call<'_>) {
    let Some(start) = first_operand(w, "jSaIdEnNsX", &["--jobs", "--sshlogin", "--arg-file"])
    else {
        return;
    };
    let sep = w[start..]
        .iter()
        .position(|x| matches!(x.lit(), Some(":::" | "::::" | ":::+" | "::::+")))
        .map_or(w.len(), |k| start + k);
    let command = &w[start..sep];
    if command.is_empty() {
        return;
    }
    let inner = match w.get(sep + 1..).filter(|r| !r.is_empty()) {
        Some(args) => {
            let args = args
                .iter()
                .filter(|x| !matches!(x.lit(), Some(":::" | "::::" | ":::+" | "::::+")));
            Cow::Owned(command.iter().chain(args).cloned().collect())
        }
        None => with_input(command, call.span.clone()),
    };
    if let Some(inner) = charged(a, inner, call) {
        wrapped(a, cx, &inner, &at(call, &command[0]));
    }
}
