//! Command names that are not what they look like: `hash -p`, aliases once they expand,
//! `enable -f`, `/proc/self/exe`, the dynamic loader, copies of programs run from a new
//! path; and the variables `env NAME=VALUE` / `sudo NAME=VALUE` set (see `variables`).

use super::{at, code, first_operand, parse_args, wrapped};
use crate::paths;
use crate::rules::RuleId;
use crate::walk::{Analyzer, Call, Cx};
use crate::word::{UNKNOWN, Word};

/// Directories whose files are programs: a copy of one is a copy of a program.
const PROGRAM_DIRS: &[&str] = &[
    "/bin",
    "/sbin",
    "/usr/bin",
    "/usr/sbin",
    "/usr/local/bin",
    "/usr/local/sbin",
    "/usr/libexec",
    "/usr/lib",
    "/lib",
    "/lib64",
    "/opt/homebrew/bin",
];

/// Options of the dynamic loader (`ld.so [OPTION]… PROGRAM [ARG]…`) that take a value.
const LOADER_VALUES: &[&str] = &[
    "--library-path",
    "--inhibit-rpath",
    "--audit",
    "--preload",
    "--argv0",
    "--glibc-hwcaps-prefix",
    "--glibc-hwcaps-mask",
];

/// Checks the command name (`words[0]`) and the builtins that change what names run;
/// returns whether the command was handled as a wrapper (the loader) and needs no other
/// check.
pub(super) fn check(
    a: &mut Analyzer,
    cx: Cx<'_, '_>,
    base: &str,
    words: &[Word<'_>],
    call: &Call<'_>,
) -> bool {
    let Some(name) = words.first().and_then(Word::lit) else {
        return false;
    };
    if is_loader(base) {
        loader(a, cx, words, call);
        return true;
    }
    if let Some(why) = proc_program(name) {
        masquerade(a, call, format!("`{name}` runs {why}, not a named program"));
    }
    if name.contains('/') && copied_program(a, cx, name, words, call) {
        return true;
    }
    if a.tracked.aliases.contains(name) {
        masquerade(
            a,
            call,
            format!(
                "`{name}` is an alias this text set: where aliases expand, it runs the alias's \
                 value, not a program named `{name}`"
            ),
        );
    }
    super::scripts::call(a, cx, name, words, call);
    let args = &words[1..];
    match base {
        "hash" if cluster_has(args, 'p') => masquerade(
            a,
            call,
            "`hash -p` makes a command name run another program".to_owned(),
        ),
        "enable" if cluster_has(args, 'f') => masquerade(
            a,
            call,
            "`enable -f` loads a builtin from a shared object, which then runs as that name"
                .to_owned(),
        ),
        "shopt" => shopt(a, args, call),
        "alias" => aliases(a, cx, args),
        "env" | "sudo" | "doas" | "run0" => environment(a, cx, args, call),
        "cp" | "ln" | "install" | "rsync" | "mv" => record_copies(a, cx, args),
        "cat" | "dd" => record_stream_copy(a, cx, base, args, call),
        _ => {}
    }
    false
}

fn masquerade(a: &mut Analyzer, call: &Call<'_>, why: String) {
    a.report(RuleId::CommandMasquerade, call.span.clone(), why);
}

/// Whether some option cluster among `args` (up to `--`) has the letter `letter`.
fn cluster_has(args: &[Word<'_>], letter: char) -> bool {
    args.iter()
        .map_while(|w| w.lit().filter(|t| *t != "--"))
        .any(|t| t.starts_with('-') && !t.starts_with("--") && t.contains(letter))
}

/// What a program path under `/proc` or `/dev/fd` really runs, if it is one: the running
/// shell's own binary, or whatever file a descriptor holds.
fn proc_program(name: &str) -> Option<&'static str> {
    if !name.contains("/proc/") && !name.contains("/dev/") {
        return None;
    }
    let n = paths::normalize(name);
    let parts: Vec<&str> = n.split('/').collect();
    match parts.as_slice() {
        ["", "proc", _, "exe"] => Some("a process's own executable (the shell itself)"),
        ["", "proc", _, "fd" | "map_files", ..] | ["", "dev", "fd", ..] => {
            Some("the file behind a descriptor or mapping")
        }
        _ => None,
    }
}

/// `ld-linux-x86-64.so.2`, `ld-linux.so.2`, `ld.so`, `ld64.so.1`, `ld-musl-x86_64.so.1`.
fn is_loader(base: &str) -> bool {
    base == "ld.so"
        || ((base.starts_with("ld-") || base.starts_with("ld64")) && base.contains(".so"))
}

/// `ld.so [OPTION]… PROGRAM [ARG]…`: runs PROGRAM past its file's exec permission and
/// `noexec` mounts; the program is checked in its own right.
fn loader(a: &mut Analyzer, cx: Cx<'_, '_>, words: &[Word<'_>], call: &Call<'_>) {
    masquerade(
        a,
        call,
        "the dynamic loader runs a program without executing its file (past exec permissions and `noexec` mounts)"
            .to_owned(),
    );
    if let Some(i) = first_operand(words, "", LOADER_VALUES) {
        let program = &words[i..];
        wrapped(a, cx, program, &at(call, &program[0]));
    }
}

/// A command run by a path where the text put a copy of or link to a program: reported,
/// and checked as that program. Returns whether it was one.
fn copied_program(
    a: &mut Analyzer,
    cx: Cx<'_, '_>,
    name: &str,
    words: &[Word<'_>],
    call: &Call<'_>,
) -> bool {
    let path = paths::normalize(&a.resolve(name));
    let Some(program) = a.tracked.copies.get(&path).cloned() else {
        return false;
    };
    let shown = program.replace(UNKNOWN, "…");
    masquerade(
        a,
        call,
        format!("`{name}` is a copy of or link to `{shown}` made earlier in the command"),
    );
    let mut renamed = words.to_vec();
    renamed[0].text = program;
    renamed[0].plain = true;
    wrapped(a, cx, &renamed, call);
    true
}

/// `cp|ln|install|rsync|mv SOURCE… DEST`: remembers where copies of programs land.
fn record_copies(a: &mut Analyzer, cx: Cx<'_, '_>, args: &[Word<'_>]) {
    let p = super::writes::parse_copy(args);
    let target = p.value('t', "target-directory").map(str::to_owned);
    let (dest, sources) = match (&target, p.operands.split_last()) {
        (Some(dir), _) => (dir.clone(), &p.operands[..]),
        (None, Some((last, rest))) => (last.text.clone(), rest),
        (None, None) => return,
    };
    if dest.contains(UNKNOWN) {
        return;
    }
    let dest = paths::normalize(&a.resolve(&dest));
    for source in sources {
        let looked_up = source
            .node
            .is_some_and(|n| looks_up_program(&cx.src.text[n.byte_range()]));
        let Some(program) = program_name(&source.text, looked_up) else {
            continue;
        };
        let inside = format!("{dest}/{}", program.rsplit('/').next().unwrap_or_default());
        if target.is_none() {
            a.tracked.copies.insert(dest.clone(), program.clone());
        }
        a.tracked.copies.insert(paths::normalize(&inside), program);
    }
}

/// `cat PROGRAM > DEST`, `dd if=PROGRAM of=DEST`: a copy of a program's bytes.
fn record_stream_copy(
    a: &mut Analyzer,
    cx: Cx<'_, '_>,
    base: &str,
    args: &[Word<'_>],
    call: &Call<'_>,
) {
    let (source, dest) = if base == "dd" {
        let value = |key: &str| {
            args.iter()
                .find_map(|w| w.text.strip_prefix(key).map(str::to_owned))
        };
        (value("if="), value("of="))
    } else {
        let output = call.redirects.iter().rev().find_map(|r| {
            let op = crate::syntax::redirect_operator(&cx.src.text, *r)?;
            let dest = r.child_by_field_name("destination")?;
            matches!(op, ">" | ">|").then(|| Word::read(cx.src, dest).text)
        });
        let source = match args {
            [one] => Some(one.text.clone()),
            _ => None,
        };
        (source, output)
    };
    let (Some(source), Some(dest)) = (source, dest) else {
        return;
    };
    if let Some(program) = program_name(&source, false).filter(|_| !dest.contains(UNKNOWN)) {
        let dest = paths::normalize(&a.resolve(&dest));
        a.tracked.copies.insert(dest, program);
    }
}

/// Whether a word as written finds a program's path at run time: `$(which rm)`,
/// `` `command -v rm` ``, `$(type -P rm)`.
fn looks_up_program(raw: &str) -> bool {
    (raw.contains("$(") || raw.contains('`'))
        && [
            "which ",
            "command -v",
            "command -V",
            "type -p",
            "type -P",
            "whereis ",
        ]
        .iter()
        .any(|lookup| raw.contains(lookup))
}

/// The program a copy source is, when it is one: a file in a program directory
/// (`/usr/bin/rm` is `rm`), or a program's path looked up at run time (`$(which rm)`).
fn program_name(source: &str, looked_up: bool) -> Option<String> {
    if looked_up {
        return Some(UNKNOWN.to_string());
    }
    let n = paths::normalize(source);
    let (dir, file) = n.rsplit_once('/')?;
    let in_program_dir = PROGRAM_DIRS.contains(&dir) || (dir.is_empty() && n.starts_with('/'));
    (in_program_dir && !file.is_empty()).then(|| file.to_owned())
}

/// `shopt -s expand_aliases` (aliases then replace command names) and `extdebug` (a
/// `DEBUG` trap then decides which commands run).
fn shopt(a: &mut Analyzer, args: &[Word<'_>], call: &Call<'_>) {
    let p = parse_args(args, "", &[]);
    if !p.short.contains('s') || p.short.contains(['p', 'q']) {
        return;
    }
    for option in p.operands.iter().map(|w| w.text.as_str()) {
        shell_option(a, option, call);
    }
}

/// A shell option being turned on (`shopt -s NAME`, `bash -O NAME`).
pub(super) fn shell_option(a: &mut Analyzer, option: &str, call: &Call<'_>) {
    match option {
        "expand_aliases" => masquerade(
            a,
            call,
            "`expand_aliases` makes aliases replace command names".to_owned(),
        ),
        "extdebug" => a.report(
            RuleId::HiddenCode,
            call.span.clone(),
            "`extdebug` lets a `DEBUG` trap skip or replace the commands that follow",
        ),
        "cdable_vars" => a.report(
            RuleId::SearchPathChange,
            call.span.clone(),
            "`cdable_vars` makes `cd NAME` go to the directory in variable NAME",
        ),
        _ => {}
    }
}

/// `alias NAME=VALUE…`: the value is shell code (run in place of NAME once aliases expand).
fn aliases(a: &mut Analyzer, cx: Cx<'_, '_>, args: &[Word<'_>]) {
    for word in args {
        let Some(eq) = word.lit().and_then(|t| t.find('=')) else {
            continue;
        };
        if let Some(name) = word.lit().and_then(|t| t.get(..eq)) {
            a.tracked.aliases.insert(name.to_owned());
        }
        if let Some(mut m) = word.mapped(cx.src) {
            let at = (eq + 1).min(m.text.len());
            m.text.drain(..at);
            m.map.drain(..at.min(m.map.len()));
            code::nested(a, cx, m, word.span.clone());
        }
    }
}

/// `env NAME=VALUE… COMMAND`, `sudo NAME=VALUE… COMMAND`: the variables before the command
/// are checked like assignments.
fn environment(a: &mut Analyzer, cx: Cx<'_, '_>, args: &[Word<'_>], call: &Call<'_>) {
    let mut skip = false;
    for word in args {
        let t = word.text.as_str();
        if std::mem::take(&mut skip) {
            continue;
        }
        if t.starts_with('-') {
            skip = matches!(t, "-u" | "-C" | "-P" | "-g" | "-D" | "-S");
            continue;
        }
        let Some((name, value)) = t.split_once('=') else {
            return;
        };
        if !(crate::word::is_name(name) || name.starts_with("BASH_FUNC_")) {
            return;
        }
        let raw = word.node.map_or(t, |n| &cx.src.text[n.byte_range()]);
        let raw_value = raw.split_once('=').map_or("", |(_, v)| v);
        let value = Word {
            text: value.to_owned(),
            ..word.clone()
        };
        super::variables::variable(a, cx, name, &value, raw_value, call.span.clone());
    }
}
