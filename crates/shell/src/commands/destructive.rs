//! Rules on a command's name and arguments: destructive, privileged, persistent or
//! network-exposing commands.

use super::{Parsed, parse_args};
use crate::paths;
use crate::rules::RuleId;
use crate::walk::{Analyzer, Call};
use crate::word::{UNKNOWN, Word};

/// Checks the command `base` with arguments `args`.
pub(super) fn check(a: &mut Analyzer, base: &str, args: &[Word<'_>], call: &Call<'_>) {
    match base {
        "rm" => rm(a, args, call),
        "cd" | "pushd" => cd(a, args),
        "popd" => a.cwd = None,
        "chmod" | "chown" | "chgrp" => {
            if base == "chmod" && setuid_mode(args) {
                privileged(a, "`chmod` sets the setuid/setgid bit", call);
            }
            permissions(a, base, args, call)
        }
        "mke2fs" | "mkswap" | "mkdosfs" | "mkntfs" | "blkdiscard" => disk(a, base, call),
        _ if base.starts_with("mkfs") || base.starts_with("newfs") => disk(a, base, call),
        "wipefs" => {
            let p = parse_args(args, "ot", &["offset", "types", "backup"]);
            if p.has('a', "all") || p.has('o', "offset") {
                disk(a, base, call);
            }
        }
        "diskutil" => {
            let verb = args.first().and_then(Word::lit).unwrap_or_default();
            if verb.starts_with("erase")
                || matches!(
                    verb,
                    "zeroDisk" | "secureErase" | "partitionDisk" | "randomDisk"
                )
            {
                disk(a, base, call);
            }
        }
        "history" => {
            let p = parse_args(args, "d", &[]);
            // `-c` erases, `-d` deletes entries, `-w`/`-a`/`-r`/`-n FILE` swap the file.
            let file_op = p.short.contains(['w', 'a', 'r', 'n']) && !p.operands.is_empty();
            if p.short.contains(['c', 'd']) || file_op {
                a.report(
                    RuleId::HistoryTamper,
                    call.span.clone(),
                    "`history` with `-c`, `-d` or a file erases or rewrites the shell history",
                );
            }
        }
        "setcap" => privileged(a, "`setcap` grants file capabilities", call),
        "capsh" | "please" | "calife" | "ksu" => privileged(
            a,
            &format!("`{base}` runs a command with other privileges"),
            call,
        ),
        "machinectl" if matches!(args.first().and_then(Word::lit), Some("shell" | "login")) => {
            privileged(a, "`machinectl shell` opens a shell as another user", call)
        }
        "sgdisk" | "sfdisk" | "fdisk" | "gdisk" | "cfdisk" | "parted" | "partprobe"
            if !disk_listing(base, args) =>
        {
            disk(a, base, call)
        }
        "cryptsetup"
            if args.iter().any(|w| {
                matches!(
                    w.lit(),
                    Some("luksFormat" | "luksErase" | "erase" | "reencrypt" | "luksKillSlot")
                )
            }) =>
        {
            disk(a, base, call)
        }
        "killall5" => shutdown(a, base, call),
        "set" => {
            let off = args
                .windows(2)
                .any(|w| w[0].lit() == Some("+o") && w[1].lit() == Some("history"));
            if off {
                a.report(
                    RuleId::HistoryTamper,
                    call.span.clone(),
                    "`set +o history` stops recording history",
                );
            }
        }
        "shutdown" | "reboot" | "halt" | "poweroff" => shutdown(a, base, call),
        "init" | "telinit" if matches!(args.first().and_then(Word::lit), Some("0" | "6")) => {
            shutdown(a, base, call)
        }
        "systemctl" => systemctl(a, args, call),
        "kill" => kill(a, args, call),
        "crontab" => crontab(a, args, call),
        "at" | "batch" => at(a, base, args, call),
        "launchctl"
            if matches!(
                args.first().and_then(Word::lit),
                Some("load" | "bootstrap" | "enable" | "submit")
            ) =>
        {
            service(a, "launchctl", call);
        }
        "update-rc.d"
            if args
                .iter()
                .any(|w| matches!(w.lit(), Some("defaults" | "enable"))) =>
        {
            service(a, base, call)
        }
        "chkconfig" if args.iter().any(|w| w.lit() == Some("on")) => service(a, base, call),
        "nc" | "ncat" | "netcat" | "nc.traditional" | "nc.openbsd" => netcat(a, base, args, call),
        "socat" => {
            let exec = args.iter().filter_map(Word::lit).any(|t| {
                let upper = t.to_ascii_uppercase();
                upper.starts_with("EXEC:") || upper.starts_with("SYSTEM:")
            });
            if exec {
                a.report(
                    RuleId::ReverseShell,
                    call.span.clone(),
                    "`socat` connects a program to a socket (`EXEC:`/`SYSTEM:`)",
                );
            }
        }
        _ => {}
    }
}

/// `path` names everything in the current directory; an empty argument (`"$F"` with `F`
/// unset) names no file at all (`rm -rf ""` fails).
fn whole_directory(path: &str) -> bool {
    !path.is_empty() && paths::is_whole_directory(path)
}

/// A target whose recursive deletion or permission change is refused: run-time input, a
/// protected tree, or everything in the current directory after `cd` to a protected one.
fn protected(a: &Analyzer, target: &Word<'_>) -> bool {
    target.any
        || paths::is_protected_tree(&target.text)
        || (a.cwd_protected && whole_directory(&target.text))
        || (a.cwd.is_none() && super::deletes::is_ancestor(&target.text))
}

/// `cd` / `pushd`: remember when the shell may now sit in a protected directory, and the
/// directory itself when it is static.
fn cd(a: &mut Analyzer, args: &[Word<'_>]) {
    let p = parse_args(args, "", &[]);
    let home = p.operands.is_empty();
    let climbs = |t: &&Word<'_>| a.cwd.is_none() && super::deletes::is_ancestor(&t.text);
    if home
        || p.operands
            .iter()
            .any(|t| paths::is_protected_tree(&t.text) || climbs(t))
    {
        a.cwd_protected = true;
    }
    let dir = match p.operands.first() {
        None => Some("~".to_owned()),
        Some(w) if w.text.contains(UNKNOWN) || w.text == "-" => None,
        Some(w) => Some(w.text.clone()),
    };
    a.cwd = dir.and_then(|dir| chdir(a.cwd.as_deref(), &dir));
    // `cd /tmp && cd ..` reaches `/` through a relative step.
    a.cwd_protected |= a.cwd.as_deref().is_some_and(paths::is_protected_tree);
}

/// The directory `cd DIR` goes to from `cwd` (`None`: not known statically).
pub(super) fn chdir(cwd: Option<&str>, dir: &str) -> Option<String> {
    if dir.starts_with(['/', '~']) {
        Some(paths::normalize(dir))
    } else {
        cwd.map(|cwd| paths::normalize(&format!("{cwd}/{dir}")))
    }
}

fn shown(path: &str) -> String {
    path.replace(UNKNOWN, "…")
}

/// `rm` with `-r`: refused when a target is protected, or run-time input (`xargs`).
fn rm(a: &mut Analyzer, args: &[Word<'_>], call: &Call<'_>) {
    let p = parse_args(args, "", &[]);
    let recursive = p.has('r', "recursive") || p.short.contains('R') || p.dynamic;
    for target in &p.operands {
        if paths::sensitive(&target.text) == Ok(Some(paths::Sensitive::History)) {
            a.report(
                RuleId::HistoryTamper,
                call.span.clone(),
                format!(
                    "`rm` deletes a shell history file (`{}`)",
                    shown(&target.text)
                ),
            );
        }
    }
    if !recursive {
        return;
    }
    let hit = p.operands.iter().find(|t| protected(a, t));
    // A dynamic word alone may be `-r`; only a spelled-out `-r` makes the targets matter.
    if hit.is_none() && (p.has('r', "recursive") || p.short.contains('R')) {
        dynamic_target(a, &p.operands, call, "recursive delete");
    }
    if let Some(target) = hit {
        let what = if target.any {
            "arguments only known at run time (`xargs` input)".to_owned()
        } else if !paths::is_protected_tree(&target.text) {
            format!(
                "`{}` after `cd` to a protected directory",
                shown(&target.text)
            )
        } else {
            format!("`{}`", shown(&target.text))
        };
        a.report(
            RuleId::DestructiveDelete,
            call.span.clone(),
            format!("recursive delete of {what}"),
        );
    }
}

fn permissions(a: &mut Analyzer, base: &str, args: &[Word<'_>], call: &Call<'_>) {
    let p: Parsed<'_, '_> = parse_args(args, "", &["reference", "from"]);
    if !(p.has('R', "recursive") || p.dynamic) {
        system_files(a, base, &p, call);
        return;
    }
    let hit = p.operands.iter().find(|t| protected(a, t));
    if hit.is_none() && p.has('R', "recursive") {
        // The first operand is the mode or owner.
        let targets = p.operands.get(1..).unwrap_or_default();
        dynamic_target(a, targets, call, &format!("`{base} -R`"));
    }
    if let Some(target) = hit {
        a.report(
            RuleId::RecursivePermissionChange,
            call.span.clone(),
            format!("`{base} -R` on `{}`", shown(&target.text)),
        );
    }
}

/// A target only known at run time: the analyzer cannot tell it is not `/` or a home.
pub(super) fn dynamic_target(a: &mut Analyzer, targets: &[&Word<'_>], call: &Call<'_>, what: &str) {
    if let Some(t) = targets.iter().find(|t| t.unknown && !t.any) {
        a.report(
            RuleId::DynamicTarget,
            call.span.clone(),
            format!(
                "{what} of a path only known at run time (`{}`): it could be `/` or a home directory",
                shown(&t.text)
            ),
        );
    }
}

fn privileged(a: &mut Analyzer, why: &str, call: &Call<'_>) {
    a.report(RuleId::PrivilegeEscalation, call.span.clone(), why);
}

/// A `chmod` mode that sets the setuid or setgid bit: `u+s`, `+s`, `g=s`, `4755`, `2755`.
fn setuid_mode(args: &[Word<'_>]) -> bool {
    args.iter().filter_map(Word::lit).any(|t| {
        let symbolic = !t.starts_with('-')
            && t.split(',').any(|clause| {
                clause.split_once(['+', '=']).is_some_and(|(who, perms)| {
                    who.chars().all(|c| matches!(c, 'u' | 'g' | 'a' | 'o')) && perms.contains('s')
                })
            });
        let octal = t.len() == 4
            && t.chars().all(|c| c.is_digit(8))
            && t.starts_with(['2', '3', '4', '5', '6', '7']);
        symbolic || octal
    })
}

/// Partitioning tools that only list: `fdisk -l`, `sfdisk -l|-d`, `parted -l`, `… print`.
fn disk_listing(base: &str, args: &[Word<'_>]) -> bool {
    args.iter().filter_map(Word::lit).any(|t| {
        matches!(
            t,
            "-l" | "--list" | "print" | "-p" | "--print" | "--version" | "-v"
        ) || (base == "sfdisk" && matches!(t, "-d" | "--dump"))
    })
}

fn disk(a: &mut Analyzer, base: &str, call: &Call<'_>) {
    a.report(
        RuleId::DiskFormat,
        call.span.clone(),
        format!("`{base}` creates or erases a file system"),
    );
}

fn shutdown(a: &mut Analyzer, base: &str, call: &Call<'_>) {
    a.report(
        RuleId::SystemShutdown,
        call.span.clone(),
        format!("`{base}` stops or restarts the machine"),
    );
}

fn service(a: &mut Analyzer, base: &str, call: &Call<'_>) {
    a.report(
        RuleId::ServiceEnable,
        call.span.clone(),
        format!("`{base}` makes a service start on its own"),
    );
}

fn systemctl(a: &mut Analyzer, args: &[Word<'_>], call: &Call<'_>) {
    let p = parse_args(
        args,
        "HMtpsn",
        &[
            "host", "machine", "type", "property", "signal", "lines", "root", "output",
        ],
    );
    let Some(verb) = p.operands.first().and_then(|w| w.lit()) else {
        return;
    };
    match verb {
        "poweroff" | "reboot" | "halt" | "kexec" | "soft-reboot" | "emergency" | "rescue" => {
            shutdown(a, "systemctl", call)
        }
        "enable" | "reenable" | "link" | "edit" | "set-default" | "preset" | "preset-all"
        | "add-wants" | "add-requires" => {
            service(a, "systemctl", call);
        }
        _ => {}
    }
}

/// `kill … -1`: every process the user may signal.
fn kill(a: &mut Analyzer, args: &[Word<'_>], call: &Call<'_>) {
    let mut i = 0;
    let mut signal_given = false;
    while let Some(t) = args.get(i).and_then(Word::lit) {
        if t == "--" {
            i += 1;
            break;
        }
        if matches!(t, "-s" | "-n") {
            i += 2;
            signal_given = true;
            continue;
        }
        if t.starts_with('-') && !signal_given && i + 1 < args.len() {
            signal_given = true;
            i += 1;
            continue;
        }
        break;
    }
    if args.iter().skip(i).any(|w| w.lit() == Some("1")) {
        a.report(
            RuleId::SystemShutdown,
            call.span.clone(),
            "`kill … 1` signals init, which stops the machine",
        );
    }
    if args.iter().skip(i).any(|w| w.lit() == Some("-1")) {
        a.report(
            RuleId::SystemShutdown,
            call.span.clone(),
            "`kill -1` signals every process",
        );
    }
}

/// Anything but listing (`-l`, optionally with `-u USER`) changes a crontab.
fn crontab(a: &mut Analyzer, args: &[Word<'_>], call: &Call<'_>) {
    let p = parse_args(args, "u", &[]);
    let listing = p.short.chars().all(|c| matches!(c, 'l' | 'u'))
        && p.short.contains('l')
        && p.operands.is_empty()
        && p.long.is_empty()
        && !p.dynamic;
    if !listing {
        a.report(
            RuleId::CrontabChange,
            call.span.clone(),
            "`crontab` changes scheduled jobs",
        );
    }
}

fn at(a: &mut Analyzer, base: &str, args: &[Word<'_>], call: &Call<'_>) {
    let listing = base == "at"
        && !args.is_empty()
        && args.iter().all(|w| matches!(w.lit(), Some("-l" | "-V")));
    if !listing {
        a.report(
            RuleId::ScheduledJob,
            call.span.clone(),
            format!("`{base}` schedules a job to run later"),
        );
        a.report(
            RuleId::EscapeSupervision,
            call.span.clone(),
            format!("`{base}` runs a job later, outside the hook's process group"),
        );
    }
}

fn netcat(a: &mut Analyzer, base: &str, args: &[Word<'_>], call: &Call<'_>) {
    let exec = args.iter().filter_map(Word::lit).any(|t| {
        if let Some(long) = t.strip_prefix("--") {
            return ["exec", "sh-exec", "lua-exec"]
                .iter()
                .any(|o| long == *o || long.starts_with(&format!("{o}=")));
        }
        t.len() > 1
            && t.starts_with('-')
            && t[1..].chars().all(|c| c.is_ascii_alphanumeric())
            && t[1..].contains(['e', 'c'])
    });
    if exec {
        a.report(
            RuleId::ReverseShell,
            call.span.clone(),
            format!("`{base}` runs a program for a network peer (`-e`/`-c`)"),
        );
    }
}

/// `chmod|chown|chgrp` (not recursive) of files in a system tree (`chmod 000 /bin/bash`,
/// `chmod 777 /etc/shadow`, `chown x /etc/sudoers`): programs broken or secrets opened.
fn system_files(a: &mut Analyzer, base: &str, p: &Parsed<'_, '_>, call: &Call<'_>) {
    // Without `--reference`, the first operand is the mode or owner (a mode may also have
    // been read as options: `chmod -x FILE`).
    let mode_first = p.operands.first().is_some_and(|w| {
        base != "chmod"
            || w.text
                .chars()
                .all(|c| "0123456789ugoarwxXst+-=,".contains(c))
    });
    let skip = usize::from(p.value('\0', "reference").is_none() && mode_first);
    let hit = p
        .operands
        .iter()
        .skip(skip)
        .find(|t| super::deletes::in_system_tree(a, &t.text));
    if let Some(target) = hit {
        a.report(
            RuleId::RecursivePermissionChange,
            call.span.clone(),
            format!("`{base}` on `{}`, a system file", shown(&target.text)),
        );
    }
}
