//! Killing everything, stopping the machine, wiping disks: `kill -9 $(pgrep .)`,
//! `for p in $(pgrep .); do kill $p; done`, `pgrep . | xargs kill`, `pkill -u USER`, `pkill .`, `killall -u USER`, `skill -u`,
//! `systemctl isolate|suspend|start poweroff.target`, `loginctl poweroff|terminate-*`,
//! `busctl`/`dbus-send`/`gdbus` power calls, `init|telinit 1|s`, `sysctl -w`, `kexec -e`,
//! `rtcwake -m off`, `badblocks -w`, `nvme format|sanitize`, `hdparm --security-erase`,
//! `zpool destroy`, `lvremove`, `vgremove`, `mdadm --zero-superblock`, `flashrom -w`, ….

use tree_sitter::Node;

mod loops;

use super::opts::{self, Arg, Spec};
use crate::commands::producers::command_words;
use crate::commands::wrappers::unwrap;
use crate::rules::RuleId;
use crate::walk::{Analyzer, Call, Cx, Stdin};
use crate::word::Word;

pub(super) fn check(
    a: &mut Analyzer,
    cx: Cx<'_, '_>,
    base: &str,
    args: &[Word<'_>],
    call: &Call<'_>,
) {
    let what = match base {
        "kill" => kill(a, cx, args),
        "pkill" if selects_everything(args) => {
            Some("`pkill` signals every process (or every process of a user)")
        }
        "killall" if killall_everything(args) => Some("`killall` signals every process of a user"),
        "skill" | "snice" if args.iter().any(|w| w.lit() == Some("-u")) => {
            Some("`skill -u` signals every process of a user")
        }
        "slay" => Some("`slay` kills every process of a user"),
        "xargs" if kills(args) && lister_upstream(a, cx, call) => {
            Some("`xargs kill` of every process listed upstream")
        }
        "systemctl" => systemctl(args),
        "loginctl" => loginctl(args),
        "busctl" | "dbus-send" | "gdbus" | "qdbus" | "qdbus6" | "qdbus-qt5" => power_call(args),
        "init" | "telinit"
            if matches!(
                args.first().and_then(Word::lit),
                Some("1" | "s" | "S" | "single" | "emergency" | "rescue")
            ) =>
        {
            Some("`init 1` stops every service (single-user mode)")
        }
        "sysctl" if sysctl_writes(args) => Some("`sysctl` changes kernel settings"),
        "kexec" if has_short_or_long(args, &['e', 'f'], &["--exec", "--force"]) => {
            Some("`kexec -e` reboots into another kernel")
        }
        "rtcwake" if rtcwake_off(args) => Some("`rtcwake -m off` powers the machine off"),
        "pm-suspend" | "pm-hibernate" | "pm-suspend-hybrid" | "zzz" | "ZZZ" => {
            Some("suspends the machine")
        }
        "gnome-session-quit"
            if args
                .iter()
                .any(|w| matches!(w.lit(), Some("--power-off" | "--reboot"))) =>
        {
            Some("`gnome-session-quit` powers the machine off")
        }
        _ => None,
    };
    if let Some(why) = what {
        a.report(RuleId::SystemShutdown, call.span.clone(), why);
    }
    if let Some(why) = wipes(base, args) {
        a.report(RuleId::DiskFormat, call.span.clone(), why);
    }
}

/// `kill` of the PIDs a substitution lists, when it lists every process, or of a loop
/// variable that takes every process id in turn.
fn kill(a: &mut Analyzer, cx: Cx<'_, '_>, args: &[Word<'_>]) -> Option<&'static str> {
    let every = args
        .iter()
        .filter_map(|w| w.node.filter(|_| w.unknown))
        .any(|node| lists_everything(a, cx, node));
    if every {
        return Some("`kill` of every process (a substitution lists them all)");
    }
    loops::kills_in_loop(a, cx, args).then_some("`kill` in a loop over every process")
}

/// Whether the commands inside `node` list every process (`pgrep .`, `pgrep -u USER`,
/// `ps -e` with no filter after it).
pub(super) fn lists_everything(a: &mut Analyzer, cx: Cx<'_, '_>, node: Node<'_>) -> bool {
    let commands = super::commands_within(a, cx, node, usize::MAX);
    let mut lister = false;
    let mut filtered = false;
    for command in commands {
        let words = command_words(cx, command);
        let Some((base, args)) = unwrap(&words) else {
            continue;
        };
        match base {
            "pgrep" => lister |= selects_everything(args),
            "ps" => {
                let selects = args.iter().any(|w| w.unknown)
                    || args.iter().filter_map(Word::lit).any(|t| {
                        t.starts_with("-C")
                            || t.starts_with("-p")
                            || t.starts_with("--pid")
                            || t.starts_with("-q")
                            || t.starts_with("--ppid")
                            || t.starts_with("--sid")
                    });
                lister |= !selects;
            }
            "grep" | "egrep" | "fgrep" | "rg" | "ag" | "sed" | "head" | "tail" | "pidof" => {
                filtered = true
            }
            "awk" | "gawk" | "mawk" => {
                filtered |= args.iter().filter_map(Word::lit).any(|p| {
                    let p = p.trim_start();
                    p.starts_with('/') || p.contains('~') || p.contains("==") || p.contains("NR")
                })
            }
            _ => {}
        }
    }
    lister && !filtered
}

/// `xargs … kill …`.
fn kills(args: &[Word<'_>]) -> bool {
    args.iter()
        .filter_map(Word::lit)
        .any(|t| matches!(super::base_of(t), "kill" | "pkill"))
}

/// The stages piped into this one list every process: the adjacent stage, or one at most
/// [`PASS_THROUGH`] stages further back with only reformatting stages between (`ps -ef | grep
/// -v grep | awk '{print $2}' | xargs kill`); a bounded look-back keeps a long pipeline's cost
/// linear.
fn lister_upstream(a: &mut Analyzer, cx: Cx<'_, '_>, call: &Call<'_>) -> bool {
    let Stdin::Pipe { from, pipeline, .. } = call.stdin else {
        return false;
    };
    let stages = match pipeline {
        Some((p, index)) => {
            let all = crate::syntax::named_children(p);
            let end = (index + 1).min(all.len());
            all[end.saturating_sub(PASS_THROUGH + 1)..end].to_vec()
        }
        None => vec![from],
    };
    for stage in stages.into_iter().rev() {
        if lists_everything(a, cx, stage) {
            return true;
        }
        if !reformats(cx, stage) {
            return false;
        }
    }
    false
}

/// Stages between a process list and `xargs kill` that are looked through.
const PASS_THROUGH: usize = 3;

/// A stage that reformats lines without selecting among them: `awk '{print $2}'`, `cut`,
/// `tr`, `sort`, `uniq`, `grep -v PATTERN`, `tail -n +2`.
fn reformats(cx: Cx<'_, '_>, stage: Node<'_>) -> bool {
    if stage.kind() != "command" {
        return false;
    }
    let words = command_words(cx, stage);
    let Some((base, args)) = unwrap(&words) else {
        return false;
    };
    let lits: Vec<&str> = args.iter().filter_map(Word::lit).collect();
    match base {
        "cut" | "tr" | "sort" | "uniq" | "column" | "xargs" => true,
        "grep" | "egrep" => lits
            .iter()
            .any(|t| *t == "-v" || (t.starts_with('-') && !t.starts_with("--") && t.contains('v'))),
        "tail" => lits.iter().any(|t| t.starts_with('+')),
        "awk" | "gawk" | "mawk" | "nawk" => lits.iter().all(|p| {
            let p = p.trim_start();
            // `NR>1` only drops a header line.
            let p = ["NR>1", "NR > 1", "NR!=1", "FNR>1"]
                .iter()
                .find_map(|h| p.strip_prefix(h))
                .unwrap_or(p)
                .trim_start();
            p.starts_with('-') || (p.starts_with('{') && !p.contains("if"))
        }),
        _ => false,
    }
}

const PGREP: Spec = Spec {
    short: "dgGPstuUFO",
    long: &[
        ("delimiter", true),
        ("pgroup", true),
        ("group", true),
        ("parent", true),
        ("session", true),
        ("terminal", true),
        ("euid", true),
        ("uid", true),
        ("pidfile", true),
        ("ns", true),
        ("nslist", true),
        ("signal", true),
        ("older", true),
        ("runstates", true),
        ("cgroup", true),
        ("env", true),
        ("inverse", false),
        ("exact", false),
        ("full", false),
    ],
};

/// `pgrep`/`pkill` arguments that select every process, or every process of a user or of
/// init's children: no pattern but a user selector, a pattern that matches any name, or
/// `-v` (everything else).
fn selects_everything(args: &[Word<'_>]) -> bool {
    // `pkill -9 …`, `pkill -KILL …`: a signal, not options.
    let args: Vec<Word<'_>> = args
        .iter()
        .filter(|w| !w.lit().is_some_and(is_signal))
        .cloned()
        .collect();
    let read = opts::scan(&args, &PGREP);
    let patterns = opts::operands(&read);
    if patterns.iter().any(|p| p.unknown) {
        return false;
    }
    let inverse = opts::has(&read, Some('v'), &["inverse"]);
    let exact = opts::has(&read, Some('x'), &["exact"]);
    let selector = read.iter().any(|arg| {
        matches!(
            arg,
            Arg::Short('u' | 'U' | 'G' | 'P', _)
                | Arg::Long("euid" | "uid" | "group" | "parent", _)
        )
    });
    match patterns.as_slice() {
        [] => selector,
        [p] => inverse || (!exact && matches_everything(&p.text)),
        _ => false,
    }
}

/// A signal option: `-9`, `-KILL`, `-SIGTERM` (single upper-case letters are options).
fn is_signal(t: &str) -> bool {
    let Some(name) = t.strip_prefix('-') else {
        return false;
    };
    let digits = !name.is_empty() && name.chars().all(|c| c.is_ascii_digit());
    digits || (name.len() >= 2 && name.chars().all(|c| c.is_ascii_uppercase()))
}

/// A regular expression that matches (nearly) every process name: fewer than two literal
/// characters (`.`, `.*`, `''`, `^`, `[a-z]+`).
fn matches_everything(pattern: &str) -> bool {
    let mut literal = 0;
    let mut skip_until = None;
    for c in pattern.chars() {
        if let Some(end) = skip_until {
            if c == end {
                skip_until = None;
            }
            continue;
        }
        match c {
            '[' => skip_until = Some(']'),
            '{' => skip_until = Some('}'),
            '.' | '*' | '+' | '?' | '^' | '$' | '|' | '(' | ')' | '\\' => {}
            _ => literal += 1,
        }
    }
    literal < 2
}

/// `killall -u USER` without names, `killall -r REGEX` matching everything.
fn killall_everything(args: &[Word<'_>]) -> bool {
    let spec = Spec {
        short: "suoyZn",
        long: &[
            ("signal", true),
            ("user", true),
            ("older-than", true),
            ("younger-than", true),
            ("context", true),
            ("ns", true),
            ("regexp", false),
        ],
    };
    let filtered: Vec<Word<'_>> = args
        .iter()
        .filter(|w| !w.lit().is_some_and(is_signal))
        .cloned()
        .collect();
    let read = opts::scan(&filtered, &spec);
    let names = opts::operands(&read);
    let user = opts::has(&read, Some('u'), &["user"]);
    let regex = opts::has(&read, Some('r'), &["regexp"]);
    (names.is_empty() && user)
        || (regex
            && !names.is_empty()
            && names
                .iter()
                .all(|n| !n.unknown && matches_everything(&n.text)))
}

const SHUTDOWN_TARGETS: &[&str] = &[
    "poweroff.target",
    "reboot.target",
    "halt.target",
    "kexec.target",
    "shutdown.target",
    "rescue.target",
    "emergency.target",
    "suspend.target",
    "hibernate.target",
    "hybrid-sleep.target",
    "suspend-then-hibernate.target",
    "sleep.target",
    "soft-reboot.target",
    "ctrl-alt-del.target",
    "exit.target",
    "final.target",
    "systemd-poweroff.service",
    "systemd-reboot.service",
    "systemd-halt.service",
    "systemd-kexec.service",
    "systemd-suspend.service",
    "systemd-hibernate.service",
];

/// `systemctl isolate|default|suspend|…` and starting a shutdown target; stopping every unit.
fn systemctl(args: &[Word<'_>]) -> Option<&'static str> {
    let spec = Spec {
        short: "HMtpsnoP",
        long: &[
            ("host", true),
            ("machine", true),
            ("type", true),
            ("property", true),
            ("signal", true),
            ("lines", true),
            ("root", true),
            ("output", true),
            ("state", true),
            ("job-mode", true),
            ("kill-whom", true),
            ("what", true),
        ],
    };
    let read = opts::scan(args, &spec);
    let operands = opts::operands(&read);
    let verb = operands.first().and_then(|w| w.lit())?;
    let units = &operands[1..];
    let target = |u: &&Word<'_>| {
        let t = u.text.as_str();
        SHUTDOWN_TARGETS.contains(&t) || t.contains('*') || t == "-.slice" || t == "init.scope"
    };
    match verb {
        "isolate"
        | "default"
        | "switch-root"
        | "suspend"
        | "hibernate"
        | "hybrid-sleep"
        | "suspend-then-hibernate"
        | "sleep" => Some("`systemctl isolate|suspend` stops the running system"),
        "start" | "restart" | "reload-or-restart" | "try-restart" | "stop" | "kill" | "mask"
            if units.iter().any(target) =>
        {
            Some("`systemctl` starts a shutdown target or stops every unit")
        }
        _ => None,
    }
}

fn loginctl(args: &[Word<'_>]) -> Option<&'static str> {
    let verb = args
        .iter()
        .filter_map(Word::lit)
        .find(|t| !t.starts_with('-'))?;
    matches!(
        verb,
        "poweroff"
            | "reboot"
            | "halt"
            | "suspend"
            | "hibernate"
            | "hybrid-sleep"
            | "suspend-then-hibernate"
            | "kexec"
            | "sleep"
            | "terminate-user"
            | "terminate-session"
            | "terminate-seat"
            | "kill-user"
            | "kill-session"
    )
    .then_some("`loginctl` powers off or ends sessions")
}

/// D-Bus calls of login1/systemd/session-manager methods that power off or end sessions.
fn power_call(args: &[Word<'_>]) -> Option<&'static str> {
    let methods = [
        "poweroff",
        "reboot",
        "halt",
        "kexec",
        "suspend",
        "hibernate",
        "hybridsleep",
        "suspendthenhibernate",
        "softreboot",
        "rebootwithflags",
        "poweroffwithflags",
        "haltwithflags",
        "kexecwithflags",
        "suspendwithflags",
        "hibernatewithflags",
        "terminateuser",
        "terminatesession",
        "terminateseat",
        "killuser",
        "killsession",
        "shutdown",
        "requestshutdown",
        "requestreboot",
    ];
    let calls = args.iter().filter_map(Word::lit).any(|t| {
        let last = t
            .rsplit(['.', ':'])
            .next()
            .unwrap_or(t)
            .to_ascii_lowercase();
        methods.contains(&last.as_str())
    });
    let starts_target = args.iter().filter_map(Word::lit).any(|t| {
        SHUTDOWN_TARGETS
            .iter()
            .any(|s| t.trim_start_matches("string:") == *s)
    });
    (calls || starts_target).then_some("a D-Bus call that powers off or ends sessions")
}

fn sysctl_writes(args: &[Word<'_>]) -> bool {
    args.iter().filter_map(Word::lit).any(|t| {
        (!t.starts_with('-') && t.contains('='))
            || (t.starts_with('-') && !t.starts_with("--") && t.contains(['w', 'p']))
            || matches!(t, "--write" | "--load" | "--system")
            || t.starts_with("--load=")
    })
}

fn rtcwake_off(args: &[Word<'_>]) -> bool {
    let offs = ["off", "disk", "mem", "standby", "freeze"];
    args.iter().enumerate().any(|(k, w)| {
        let t = w.text.as_str();
        let value = match t {
            "-m" | "--mode" => args.get(k + 1).map(|x| x.text.as_str()),
            _ => t.strip_prefix("--mode=").or_else(|| t.strip_prefix("-m")),
        };
        value.is_some_and(|v| offs.contains(&v))
    })
}

fn has_short_or_long(args: &[Word<'_>], short: &[char], long: &[&str]) -> bool {
    args.iter().filter_map(Word::lit).any(|t| {
        long.contains(&t) || (t.starts_with('-') && !t.starts_with("--") && t[1..].contains(short))
    })
}

/// Tools that erase disks, partitions, volumes or firmware.
fn wipes(base: &str, args: &[Word<'_>]) -> Option<&'static str> {
    let first = args
        .iter()
        .filter_map(Word::lit)
        .find(|t| !t.starts_with('-'));
    let any = |names: &[&str]| {
        args.iter()
            .filter_map(Word::lit)
            .any(|t| names.contains(&t))
    };
    let wipes = match base {
        "badblocks" => has_short_or_long(args, &['w'], &[]),
        "nvme" => {
            matches!(
                first,
                Some(
                    "format"
                        | "sanitize"
                        | "delete-ns"
                        | "detach-ns"
                        | "write-zeroes"
                        | "write-uncor"
                        | "security-send"
                        | "fw-download"
                        | "fw-commit"
                        | "fw-activate"
                )
            ) || (first == Some("dsm") && any(&["-d", "--ad", "--deallocate"]))
        }
        "hdparm" => args.iter().filter_map(Word::lit).any(|t| {
            t.starts_with("--security-erase")
                || t.starts_with("--security-set-pass")
                || t.starts_with("--trim-sector-ranges")
                || t.starts_with("--write-sector")
                || t.starts_with("--make-bad-sector")
                || t.starts_with("--fwdownload")
                || t.starts_with("--dco-restore")
        }),
        "zpool" => matches!(first, Some("destroy" | "labelclear")),
        "zfs" => matches!(first, Some("destroy")),
        "lvremove" | "vgremove" | "pvremove" | "lvreduce" | "pvcreate" => true,
        "dmsetup" => matches!(
            first,
            Some("remove_all" | "remove" | "wipe_table" | "clear")
        ),
        "mdadm" => {
            any(&["--zero-superblock", "--create", "--build"])
                || has_short_or_long(args, &['C', 'B'], &[])
        }
        "flashrom" => has_short_or_long(args, &['w', 'E'], &["--write", "--erase"]),
        "flash_erase" | "flash_eraseall" | "flashcp" | "nandwrite" | "sg_format"
        | "sg_sanitize" => true,
        "mtd_debug" => matches!(first, Some("erase" | "write")),
        "mkexfatfs" | "mkudffs" | "mkreiserfs" | "mkjfs" | "mkfatfs" | "mkexfat" => true,
        _ => return None,
    };
    wipes.then_some("erases a disk, a volume or firmware")
}

#[cfg(test)]
mod tests {
    use super::{is_signal, matches_everything};

    #[test]
    fn patterns_that_match_every_process() {
        for p in ["", ".", ".*", "^", "^.*$", "[a-z]+", "a", ".+|x"] {
            assert!(matches_everything(p), "{p}");
        }
        for p in ["node", "my-server", "python.*8080", "sshd", "ab"] {
            assert!(!matches_everything(p), "{p}");
        }
    }

    #[test]
    fn signals_and_options() {
        for t in ["-9", "-KILL", "-SIGTERM", "-HUP"] {
            assert!(is_signal(t), "{t}");
        }
        for t in ["-u", "-U", "-f", "--full", "9", "-"] {
            assert!(!is_signal(t), "{t}");
        }
    }
}
