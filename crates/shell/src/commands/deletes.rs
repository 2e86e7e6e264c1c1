//! Destruction without `rm -r`: deleting, shredding, truncating, moving away or overwriting
//! files of protected places (`rm /etc/*`, `shred -u ~/.ssh/id_rsa`, `truncate -s0
//! /bin/bash`, `mv ~ /dev/null`), deleting every file `find` lists (`-exec rm`, `| xargs
//! rm`), `rsync --delete` into a protected directory, `git clean` of a home, and recursive
//! deletes of sensitive subtrees (`~/.ssh`, `/etc/ssh`, `/lib/modules`) or of an ancestor
//! of the current directory (`../../..`).

use tree_sitter::Node;

use super::{Parsed, parse_args, wrappers};
use crate::paths;
use crate::rules::RuleId;
use crate::walk::{Analyzer, Call, Cx, Stdin};
use crate::word::{UNKNOWN, Word};

/// Directories whose every file and subdirectory belongs to the system (programs,
/// libraries, kernels, configuration, the administrator's home).
const SYSTEM_TREES: &[&str] = &[
    "/bin",
    "/sbin",
    "/boot",
    "/etc",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/usr/bin",
    "/usr/sbin",
    "/usr/lib",
    "/usr/lib32",
    "/usr/lib64",
    "/usr/libexec",
    "/root",
    "/var/log",
    "/var/lib/dpkg",
    "/var/lib/rpm",
    "/var/lib/pacman",
    "/var/spool/cron",
    "/System",
    "/private/etc",
];

/// Directories of a home whose contents are keys and whole-desktop configuration.
const HOME_TREES: &[&str] = &[
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".kube",
    ".password-store",
    ".config/gcloud",
    ".local/share/keyrings",
];

/// Directories of a home that hold every application's configuration and data (their
/// subdirectories are fair game, the whole is not).
const HOME_ROOTS: &[&str] = &[".config", ".local", ".local/share"];

/// Commands that delete, empty or move away the files they are given.
const DELETERS: &[&str] = &["rm", "unlink", "shred", "srm", "truncate", "mv", "wipe"];

/// Checks `base` if it destroys files.
pub(super) fn check(
    a: &mut Analyzer,
    cx: Cx<'_, '_>,
    base: &str,
    args: &[Word<'_>],
    call: &Call<'_>,
) {
    match base {
        "rm" | "unlink" | "srm" | "wipe" => {
            let p = parse_args(args, "", &[]);
            destroys(a, &p.operands, base, "deletes", call);
        }
        "shred" => {
            let p = parse_args(args, "srn", &["size", "random-source", "iterations"]);
            destroys(a, &p.operands, base, "overwrites", call);
        }
        "truncate" => {
            let p = parse_args(args, "sr", &["size", "reference"]);
            destroys(a, &p.operands, base, "empties", call);
        }
        "mv" | "cp" | "install" | "ln" => copies(a, base, args, call),
        "dd" => {
            for arg in args {
                if let Some(file) = arg.text.strip_prefix("of=") {
                    let target = Word {
                        text: file.to_owned(),
                        ..arg.clone()
                    };
                    overwrites(a, &target, "dd", call);
                }
            }
        }
        "rsync" => rsync(a, args, call),
        "git" => git_clean(a, cx, args, call),
        _ => {}
    }
}

/// Why deleting, emptying or moving away `path` is refused, if it is: a protected place
/// ([`refused_place`]) or a shell start-up or ssh file of a home (`~/.bashrc`). History
/// files are left to `history-tamper`.
fn refused(a: &Analyzer, path: &str) -> Option<String> {
    // Only names that could be a history file are matched (globs are compiled to match).
    let last = path.rsplit('/').next().unwrap_or(path);
    let history = (last.contains("hist") || last.starts_with(".z") || last.starts_with(".bash_"))
        && matches!(paths::sensitive(path), Ok(Some(paths::Sensitive::History)));
    if history {
        return None;
    }
    if path.contains(UNKNOWN) {
        return inside_system(a, path);
    }
    let n = paths::normalize(&a.resolve(path));
    refused_at(a, path, &n).or_else(|| home_file(&n))
}

/// Why destroying `path` is refused when it is a protected place: a protected tree or a glob
/// at its top (`/etc/*`, `~/*`), anything in a system tree (`/etc/ssh`, `/bin/bash`,
/// `/lib/modules`), a home's `.ssh`/`.gnupg`, `.config` or `.local` as a whole, an ancestor
/// of the current directory (`..`, `../*`), or everything in it after `cd` to a protected
/// directory.
fn refused_place(a: &Analyzer, path: &str) -> Option<String> {
    if path.contains(UNKNOWN) {
        return inside_system(a, path);
    }
    refused_at(a, path, &paths::normalize(&a.resolve(path)))
}

/// Whether `path` is a system file (`/bin/bash`, `/etc/shadow`, `/lib/modules`; not under
/// `/root`, where a root user's projects live, nor `/var/log`).
pub(super) fn in_system_tree(a: &Analyzer, path: &str) -> bool {
    let known = path.find(UNKNOWN).map_or(path, |k| &path[..k]);
    let n = paths::normalize(&a.resolve(known));
    SYSTEM_TREES
        .iter()
        .filter(|t| !matches!(**t, "/root" | "/var/log"))
        .any(|t| under(&n, t) && (known == path || known.ends_with('/') || n.len() > t.len()))
}

/// Why deleting `path` (recursively) is refused, for deletes written in other languages
/// (`shutil.rmtree("/")`).
pub(super) fn refused_tree(a: &Analyzer, path: &str) -> Option<String> {
    refused_place(a, path).or_else(|| {
        let n = paths::normalize(&a.resolve(path));
        (paths::is_home_dir(&n) || n == "/").then(|| format!("`{n}`"))
    })
}

/// For a path with a part only known at run time: refused when the directory before that
/// part is already in a system tree or a home's keys (`/lib/modules/$(uname -r)`,
/// `~/.ssh/$KEY`).
fn inside_system(a: &Analyzer, path: &str) -> Option<String> {
    let known = &path[..path.find(UNKNOWN)?];
    let dir = &known[..known.rfind('/')?];
    let n = paths::normalize(&a.resolve(dir));
    let system = SYSTEM_TREES.iter().any(|t| under(&n, t));
    let keys = home_part(&n).is_some_and(|home| HOME_TREES.iter().any(|t| under(home, t)));
    (system || keys).then(|| format!("a path inside `{n}`"))
}

/// [`refused_place`] for `path`, `n` being it resolved and normalised.
fn refused_at(a: &Analyzer, path: &str, n: &str) -> Option<String> {
    // An empty argument (`"$F"` with `F` unset) names no file, not the current directory.
    if path.is_empty() {
        return None;
    }
    if a.cwd_protected && whole_directory(path) {
        return Some(format!("`{path}` after `cd` to a protected directory"));
    }
    // Only a path with `..` climbs (cheap test first: this runs for every target).
    let climbs = a.cwd.is_none() && path.contains("..");
    if climbs && is_ancestor(path) {
        return Some(format!(
            "`{path}`, an ancestor of the current directory (possibly `/` or a home)"
        ));
    }
    if climbs
        && let Some(why) = climbed(path).and_then(|(climbs, rest)| climbed_place(climbs, &rest))
    {
        return Some(format!("`{path}`: {why}"));
    }
    if paths::is_protected_tree(n) {
        return Some(format!("`{n}`, a protected directory"));
    }
    if let Some(tree) = SYSTEM_TREES.iter().find(|t| under(n, t)) {
        return Some(format!("`{n}`, part of the system (`{tree}`)"));
    }
    let home = home_part(n)?;
    (HOME_TREES.iter().any(|t| under(home, t)) || HOME_ROOTS.contains(&home))
        .then(|| format!("`{n}`, keys or configuration of a home directory"))
}

/// Why destroying `n` (resolved and normalised) is refused when it is a home's shell start-up
/// or ssh file (`~/.bashrc`, `/home/bob/.ssh/config`; not globs, which would be compiled).
fn home_file(n: &str) -> Option<String> {
    if home_part(n).is_none() || n.contains(['*', '?', '[', UNKNOWN]) {
        return None;
    }
    matches!(
        paths::sensitive(n),
        Ok(Some(paths::Sensitive::Ssh | paths::Sensitive::Startup))
    )
    .then(|| format!("`{n}`, a shell start-up or ssh file"))
}

/// A relative path naming the whole current directory or all its entries (`.`, `*`,
/// `./*`, also spelled `/proc/self/cwd`). An empty argument (`"$F"` with `F` unset) names
/// no file at all: `rm ""` fails.
fn whole_directory(path: &str) -> bool {
    if path.is_empty() {
        return false;
    }
    let n = paths::normalize(path);
    paths::is_whole_directory(path) || (!n.starts_with(['/', '~']) && paths::is_whole_directory(&n))
}

/// `n` (normalised) is `tree` or inside it.
fn under(n: &str, tree: &str) -> bool {
    n.strip_prefix(tree)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// The part of a home path after the home (`.ssh/id_rsa` of `~/.ssh/id_rsa` or
/// `/home/bob/.ssh/id_rsa`).
fn home_part(n: &str) -> Option<&str> {
    if n.starts_with('~') {
        return n.split_once('/').map(|(_, rest)| rest);
    }
    let rest = n
        .strip_prefix("/root/")
        .or_else(|| {
            n.strip_prefix("/home/")
                .and_then(|r| r.split_once('/').map(|x| x.1))
        })
        .or_else(|| {
            n.strip_prefix("/Users/")
                .and_then(|r| r.split_once('/').map(|x| x.1))
        })?;
    Some(rest)
}

/// A relative path that climbs to an ancestor and names it whole or all its entries:
/// `..`, `../..`, `../*`, `../../.*`. Which directory it is depends on where the command
/// runs; a few levels up from a project is a home or `/`.
pub(super) fn is_ancestor(path: &str) -> bool {
    if path.starts_with(['/', '~']) {
        return false;
    }
    let n = paths::normalize(path);
    let mut parts = n.split('/').peekable();
    let mut climbs = 0;
    while parts.peek() == Some(&"..") {
        parts.next();
        climbs += 1;
    }
    let rest: Vec<&str> = parts.collect();
    climbs > 0
        && match rest.as_slice() {
            [] => true,
            [glob] => glob.chars().all(|c| matches!(c, '*' | '?' | '.')),
            _ => false,
        }
}

/// A relative path that climbs first (`../../etc`, `./../.ssh`): how many levels, and the
/// rest of the path.
fn climbed(path: &str) -> Option<(usize, String)> {
    if path.starts_with(['/', '~']) {
        return None;
    }
    let n = paths::normalize(path);
    let rest = n.trim_start_matches("../");
    let climbs = (n.len() - rest.len()) / 3 + usize::from(rest == "..");
    (climbs > 0 && rest != "..").then(|| (climbs, rest.to_owned()))
}

/// Levels a climb needs to surely reach `/` from where hooks and agents run (a project a few
/// directories deep); climbing further stops at `/`.
const ROOT_CLIMBS: usize = 3;

/// Why destroying `rest` after climbing `climbs` levels is refused: keys or start-up files
/// of a home one level up or more (`../.ssh`), a protected place when the climb reaches `/`
/// (`../../../../etc/*`).
fn climbed_place(climbs: usize, rest: &str) -> Option<String> {
    let home = format!("~/{rest}");
    if HOME_TREES.iter().any(|t| under(rest, t)) || home_file(&home).is_some() {
        return Some(format!("`{rest}` of a home directory a few levels up"));
    }
    if climbs < ROOT_CLIMBS {
        return None;
    }
    let rooted = paths::normalize(&format!("/{rest}"));
    let system = SYSTEM_TREES.iter().any(|t| under(&rooted, t));
    (system || paths::is_protected_tree(&rooted))
        .then(|| format!("`{rooted}` once the climb reaches `/`"))
}

fn report(a: &mut Analyzer, call: &Call<'_>, who: &str, how: &str, why: &str) {
    a.report(
        RuleId::DestructiveDelete,
        call.span.clone(),
        format!("`{who}` {how} {why}"),
    );
}

/// `who` deletes (empties, overwrites) each of `targets`.
fn destroys(a: &mut Analyzer, targets: &[&Word<'_>], who: &str, how: &str, call: &Call<'_>) {
    if let Some(why) = targets.iter().find_map(|t| refused(a, &t.text)) {
        report(a, call, who, how, &why);
    }
}

/// `mv SOURCE… DEST` moves its sources away; `mv`/`cp`/`install`/`ln` overwrite DEST when
/// it is a file.
fn copies(a: &mut Analyzer, base: &str, args: &[Word<'_>], call: &Call<'_>) {
    let p: Parsed<'_, '_> = parse_args(
        args,
        "tSmogeB",
        &[
            "target-directory",
            "suffix",
            "mode",
            "owner",
            "group",
            "backup",
        ],
    );
    let into_dir = p.value('t', "target-directory").is_some();
    let (dest, sources) = match p.operands.split_last() {
        Some((dest, sources)) if !into_dir => (Some(*dest), sources),
        _ => (None, &p.operands[..]),
    };
    if base == "mv" {
        destroys(a, sources, base, "moves away", call);
    }
    if base == "install" && p.has('d', "directory") {
        return;
    }
    let Some(dest) = dest.filter(|d| !d.text.ends_with('/') && sources.len() == 1) else {
        return;
    };
    overwrites(a, dest, base, call);
}

/// `who` replaces the file `target` (a write the write rules do not already report).
fn overwrites(a: &mut Analyzer, target: &Word<'_>, who: &str, call: &Call<'_>) {
    let Some(why) = refused_place(a, &target.text) else {
        return;
    };
    let n = paths::normalize(&a.resolve(&target.text));
    let reported = n.contains(['*', '?', '[']) || written_elsewhere(&n);
    if !reported && !paths::is_protected_tree(&n) && !is_directory_name(&n) {
        report(a, call, who, "overwrites", &why);
    }
}

/// A write to `n` (normalised) already has its own finding from the write rules, which
/// makes destroying it no news. Command shims (`/bin/bash`) are the exception: replacing one
/// is both an `autorun-write` and the destruction of a program.
fn written_elsewhere(n: &str) -> bool {
    !matches!(
        paths::sensitive(n),
        Ok(None | Some(paths::Sensitive::Autorun))
    )
}

/// Paths that are directories in any system (`/etc/ssh`, `/usr/lib/modules`): a copy into
/// them adds a file rather than replacing one.
fn is_directory_name(n: &str) -> bool {
    matches!(
        n,
        "/etc/ssh" | "/lib/modules" | "/usr/lib/modules" | "/etc/systemd" | "/boot/grub"
    )
}

/// `rsync --delete SRC DEST` deletes what DEST has and SRC does not; `--remove-source-files`
/// deletes the sources.
fn rsync(a: &mut Analyzer, args: &[Word<'_>], call: &Call<'_>) {
    let p = parse_args(
        args,
        "e",
        &["rsh", "exclude", "include", "filter", "backup-dir"],
    );
    let Some((dest, sources)) = p.operands.split_last() else {
        return;
    };
    let deletes = p
        .long
        .iter()
        .any(|(n, _)| n.len() >= 3 && n.starts_with("del"));
    if let Some(why) = refused(a, &dest.text).filter(|_| deletes) {
        report(a, call, "rsync --delete", "deletes files of", &why);
    }
    if p.long
        .iter()
        .any(|(n, _)| super::long_matches(n, "remove-source-files"))
    {
        destroys(a, sources, "rsync --remove-source-files", "deletes", call);
    }
}

/// `find ROOT… -delete | -exec rm …`: every file under the roots goes.
pub(super) fn find(a: &mut Analyzer, w: &[Word<'_>], call: &Call<'_>) {
    let (roots, expression) = find_roots(w);
    let deletes = expression
        .iter()
        .enumerate()
        .any(|(i, word)| match word.lit() {
            Some("-delete") => true,
            Some("-exec" | "-execdir" | "-ok" | "-okdir") => expression
                .get(i + 1..)
                .and_then(wrappers::unwrap)
                .is_some_and(|(base, _)| DELETERS.contains(&base)),
            _ => false,
        });
    if deletes {
        let why = roots.iter().find_map(|r| refused(a, r));
        if let Some(why) = why {
            report(a, call, "find", "deletes every file under", &why);
        }
    }
}

/// The start paths of `find` (`.` when none) and the words of its expression.
fn find_roots<'w, 't>(w: &'w [Word<'t>]) -> (Vec<String>, &'w [Word<'t>]) {
    let mut i = 1;
    while let Some(t) = w.get(i).and_then(Word::lit) {
        match t {
            "-H" | "-L" | "-P" => i += 1,
            "-D" => i += 2,
            _ if t.starts_with("-O") => i += 1,
            _ => break,
        }
    }
    let start = i.min(w.len());
    while let Some(word) = w.get(i) {
        if word
            .lit()
            .is_some_and(|t| t.starts_with('-') || matches!(t, "(" | "!" | ","))
        {
            break;
        }
        i += 1;
    }
    let end = i.min(w.len());
    let mut roots: Vec<String> = w[start..end].iter().map(|r| r.text.clone()).collect();
    if roots.is_empty() {
        roots.push(".".to_owned());
    }
    (roots, &w[end..])
}

/// `find ROOT … | xargs rm`: xargs deletes every file find lists (also `echo ~/* | xargs
/// rm`).
pub(super) fn xargs(a: &mut Analyzer, cx: Cx<'_, '_>, w: &[Word<'_>], call: &Call<'_>) {
    let Stdin::Pipe { from, .. } = call.stdin else {
        return;
    };
    let mut i = 1;
    while let Some(t) = w.get(i).and_then(Word::lit).filter(|t| t.starts_with('-')) {
        i += if matches!(t, "-a" | "-d" | "-E" | "-I" | "-L" | "-n" | "-P" | "-s") {
            2
        } else {
            1
        };
    }
    let deletes = w
        .get(i..)
        .and_then(wrappers::unwrap)
        .is_some_and(|(base, _)| DELETERS.contains(&base));
    if !deletes {
        return;
    }
    let Some(words) = stage_words(cx, from) else {
        return;
    };
    let Some((base, args)) = wrappers::unwrap(&words) else {
        return;
    };
    let listed: Vec<String> = match base {
        "find" => find_roots(&words[words.len() - args.len() - 1..]).0,
        "echo" | "printf" => args.iter().map(|x| x.text.clone()).collect(),
        // `ls DIR` lists names xargs then finds in the current directory: as conservative,
        // both.
        "ls" => {
            let named: Vec<String> = args
                .iter()
                .filter(|x| !x.text.starts_with('-'))
                .map(|x| x.text.clone())
                .collect();
            if named.is_empty() {
                vec![".".to_owned()]
            } else {
                named
            }
        }
        _ => return,
    };
    if let Some(why) = listed.iter().find_map(|r| refused(a, r)) {
        report(a, call, "xargs", "deletes every file listed under", &why);
    }
}

/// The words of a pipeline stage that is a simple command (maybe with redirections).
fn stage_words<'t>(cx: Cx<'_, '_>, stage: Node<'t>) -> Option<Vec<Word<'t>>> {
    let command = match stage.kind() {
        "command" => stage,
        "redirected_statement" => stage
            .child_by_field_name("body")
            .filter(|b| b.kind() == "command")?,
        _ => return None,
    };
    Some(super::command_words(cx, command))
}

/// `git [-C DIR|--work-tree=DIR]… clean …` in a protected directory (or after `cd` to one):
/// deletes every untracked file of a home that is a repository (dotfiles).
fn git_clean(a: &mut Analyzer, cx: Cx<'_, '_>, args: &[Word<'_>], call: &Call<'_>) {
    let mut dir: Option<String> = None;
    let mut i = 0;
    let mut clean = false;
    while let Some(t) = args.get(i).filter(|w| !w.unknown).map(|w| w.text.as_str()) {
        i += 1;
        let value = || args.get(i).map(|w| w.text.clone());
        match t {
            "-C" => {
                let next = value().unwrap_or_default();
                dir = Some(match dir {
                    Some(d) if !next.starts_with(['/', '~']) => format!("{d}/{next}"),
                    _ => next,
                });
                i += 1;
            }
            "--work-tree" => {
                dir = value();
                i += 1;
            }
            "-c" | "--git-dir" | "--namespace" | "--config-env" => i += 1,
            _ if t.starts_with("--work-tree=") => dir = t.split_once('=').map(|x| x.1.to_owned()),
            "clean" => {
                clean = true;
                break;
            }
            _ if t.starts_with('-') => {}
            _ => return,
        }
    }
    if !clean {
        return;
    }
    let p = parse_args(&args[i..], "eE", &["exclude"]);
    if p.has('n', "dry-run") {
        return;
    }
    let env_tree = call.prefix.iter().find_map(|assignment| {
        let name = assignment.child_by_field_name("name")?;
        (&cx.src.text[name.byte_range()] == "GIT_WORK_TREE")
            .then(|| {
                assignment
                    .child_by_field_name("value")
                    .map(|v| Word::read(cx.src, v).text)
            })
            .flatten()
    });
    let tree = dir.or(env_tree).unwrap_or_else(|| ".".to_owned());
    let targets = std::iter::once(tree.clone()).chain(
        p.operands
            .iter()
            .filter(|w| w.text.starts_with(['/', '~']))
            .map(|w| w.text.clone()),
    );
    for target in targets {
        let whole = a.cwd_protected && whole_directory(&target);
        let n = paths::normalize(&a.resolve(&target));
        if whole || paths::is_protected_tree(&n) {
            report(
                a,
                call,
                "git clean",
                "deletes every untracked file of",
                &format!("`{}`, a protected directory", if whole { "." } else { &n }),
            );
            return;
        }
    }
}

impl Analyzer {
    /// A redirection `op` to `path`: `>` empties the file first (`> /bin/bash`).
    pub(crate) fn truncated(&mut self, span: std::ops::Range<usize>, path: &str, op: &str) {
        if !matches!(op, ">" | ">|" | "&>" | ">&") || path.starts_with("/dev/") {
            return;
        }
        let Some(why) = refused_place(self, path) else {
            return;
        };
        let n = paths::normalize(&self.resolve(path));
        let glob = n.contains(['*', '?', '[']);
        if glob || written_elsewhere(&n) || n.starts_with("/proc/") {
            return;
        }
        self.report(
            RuleId::DestructiveDelete,
            span,
            format!("redirection `{op}` empties {why}"),
        );
    }
}
