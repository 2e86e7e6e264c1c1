//! Changes to the running system that disarm or take over the machine without stopping it:
//! kernel modules loaded or removed (`insmod`, `modprobe`, `rmmod`), firewalls flushed or
//! disabled (`iptables -F`, `ufw disable`, `nft flush ruleset`), mandatory access control and
//! auditing switched off (`setenforce 0`, `aa-teardown`, `auditctl -D`), security or remote
//! access services stopped or killed (`systemctl stop sshd`, `service auditd stop`, `pkill
//! sshd`), files made undeletable (`chattr +i`), the root file system unmounted or remounted,
//! swap turned off, boot entries changed (`efibootmgr -B`). Reported as `system-tamper`.

use crate::rules::RuleId;
use crate::walk::{Analyzer, Call};
use crate::word::Word;

/// Services whose stop leaves the machine unguarded or unreachable.
const GUARDS: &[&str] = &[
    "ssh",
    "sshd",
    "openssh-server",
    "firewalld",
    "ufw",
    "iptables",
    "ip6tables",
    "nftables",
    "auditd",
    "apparmor",
    "selinux",
    "fail2ban",
    "crowdsec",
    "clamav-daemon",
    "clamd",
    "falco",
    "osqueryd",
    "wazuh-agent",
    "ossec",
    "rsyslog",
    "syslog",
    "syslog-ng",
    "systemd-journald",
    "NetworkManager",
    "networking",
    "systemd-networkd",
    "cron",
    "crond",
];

/// The commands this module knows (checked first: this runs for every command).
const NAMES: &[&str] = &[
    "insmod",
    "rmmod",
    "modprobe",
    "kmod",
    "iptables",
    "ip6tables",
    "iptables-legacy",
    "iptables-nft",
    "ebtables",
    "arptables",
    "nft",
    "ufw",
    "firewall-cmd",
    "setenforce",
    "aa-teardown",
    "aa-disable",
    "aa-complain",
    "auditctl",
    "chattr",
    "systemctl",
    "service",
    "umount",
    "umount2",
    "mount",
    "swapoff",
    "efibootmgr",
    "journalctl",
    "dmesg",
    "setfacl",
    "loginctl",
    "systemd-run",
    "killall",
    "pkill",
];

pub(super) fn check(a: &mut Analyzer, base: &str, args: &[Word<'_>], call: &Call<'_>) {
    if !NAMES.contains(&base) {
        return;
    }
    if let Some(why) = tampers(base, args) {
        a.report(RuleId::SystemTamper, call.span.clone(), why);
    }
    if base == "setfacl" && acl_on_system(a, args) {
        a.report(
            RuleId::RecursivePermissionChange,
            call.span.clone(),
            "`setfacl` grants access to system files",
        );
    }
    if let Some((rule, why)) = lingers(base, args) {
        a.report(rule, call.span.clone(), why);
    }
}

/// `setfacl` of a system file, or `-R` of a protected tree (`/`, a home).
fn acl_on_system(a: &Analyzer, args: &[Word<'_>]) -> bool {
    let recursive = args.iter().filter_map(Word::lit).any(|t| {
        t == "--recursive" || (t.starts_with('-') && !t.starts_with("--") && t.contains('R'))
    });
    // The ACL spec follows `-m|-x|-M|-X|--set|--modify|…`; the files are the other operands.
    let mut files = Vec::new();
    let mut skip = false;
    for w in args {
        let t = w.text.as_str();
        if std::mem::take(&mut skip) {
            continue;
        }
        if t.starts_with('-') {
            skip = matches!(
                t,
                "-m" | "-x"
                    | "-M"
                    | "-X"
                    | "--set"
                    | "--set-file"
                    | "--modify"
                    | "--remove"
                    | "--modify-file"
                    | "--remove-file"
            );
            continue;
        }
        files.push(t);
    }
    files.iter().any(|f| {
        crate::commands::deletes::in_system_tree(a, f)
            || (recursive
                && crate::paths::is_protected_tree(&crate::paths::normalize(&a.resolve(f))))
    })
}

/// Things that keep running after the session: `loginctl enable-linger` (the user's
/// services start at boot) and `systemd-run --on-calendar|--on-boot|…` timers.
fn lingers(base: &str, args: &[Word<'_>]) -> Option<(RuleId, &'static str)> {
    let lits: Vec<&str> = args.iter().filter_map(Word::lit).collect();
    match base {
        "loginctl" if lits.contains(&"enable-linger") => Some((
            RuleId::Persistence,
            "`loginctl enable-linger` starts the user's services at boot, without a login",
        )),
        "systemd-run"
            if lits.iter().any(|t| {
                [
                    "--on-calendar",
                    "--on-boot",
                    "--on-startup",
                    "--on-unit-active",
                    "--on-unit-inactive",
                    "--on-active",
                ]
                .iter()
                .any(|o| t.starts_with(o))
            }) =>
        {
            Some((
                RuleId::ScheduledJob,
                "`systemd-run --on-…` schedules a command for later",
            ))
        }
        _ => None,
    }
}

fn tampers(base: &str, args: &[Word<'_>]) -> Option<String> {
    let lits: Vec<&str> = args.iter().filter_map(Word::lit).collect();
    let has = |t: &str| lits.contains(&t);
    let first = lits
        .iter()
        .find(|t| !t.starts_with('-'))
        .copied()
        .unwrap_or_default();
    let has_word = |t: &str| lits.iter().any(|l| l.split_whitespace().any(|x| x == t));
    let why = match base {
        "insmod" | "rmmod" => format!("`{base}` changes the kernel's code"),
        "modprobe" if !lits.iter().any(|t| is_query(t)) => {
            "`modprobe` loads or removes kernel code".to_owned()
        }
        "kmod" if matches!(first, "insert" | "remove" | "load" | "unload") => {
            "`kmod` changes the kernel's code".to_owned()
        }
        "iptables" | "ip6tables" | "iptables-legacy" | "iptables-nft" | "ebtables"
        | "arptables"
            if lits.iter().any(|t| flushes(t)) =>
        {
            format!("`{base}` flushes or opens the firewall")
        }
        "nft" if has_word("flush") || (has_word("delete") && has_word("table")) => {
            "`nft` flushes the firewall".to_owned()
        }
        "ufw" if matches!(first, "disable" | "reset") => {
            format!("`ufw {first}` opens the firewall")
        }
        "firewall-cmd"
            if lits
                .iter()
                .any(|t| t.starts_with("--panic") || *t == "--set-default-zone=trusted") =>
        {
            "`firewall-cmd` opens or closes every port".to_owned()
        }
        "setenforce" if matches!(first, "0" | "Permissive" | "permissive") => {
            "`setenforce 0` turns SELinux off".to_owned()
        }
        "aa-teardown" | "aa-disable" | "aa-complain" => format!("`{base}` turns AppArmor off"),
        "auditctl" if lits.iter().any(|t| matches!(*t, "-D" | "-e")) => {
            "`auditctl` removes audit rules or turns auditing off".to_owned()
        }
        "chattr"
            if lits
                .iter()
                .any(|t| t.starts_with('+') && t.contains(['i', 'a'])) =>
        {
            "`chattr +i` makes files impossible to change or delete".to_owned()
        }
        "systemctl" => return systemctl(&lits),
        // The process names of the guards (`sshd`, `auditd`, `rsyslogd`, …); `ssh` alone is
        // the client, which a user may kill.
        "killall" | "pkill" => {
            let name = lits.iter().filter(|t| !t.starts_with('-')).find(|t| {
                let daemon = t.strip_suffix('d').unwrap_or(t);
                **t != "ssh" && (GUARDS.contains(t) || GUARDS.contains(&daemon))
            })?;
            format!("`{base}` kills a guard of the machine (`{name}`)")
        }
        "service"
            if lits.len() >= 2
                && GUARDS.contains(&lits[0])
                && matches!(lits[1], "stop" | "disable") =>
        {
            format!("`service {} stop` stops a guard of the machine", lits[0])
        }
        "umount" | "umount2"
            if lits
                .iter()
                .any(|t| *t == "/" || *t == "-a" || *t == "--all" || t.starts_with("-a")) =>
        {
            "`umount` of the root or every file system".to_owned()
        }
        "mount" if lits.iter().any(|t| t.contains("remount")) && has("/") => {
            "`mount -o remount /` changes the root file system".to_owned()
        }
        "swapoff" if lits.iter().any(|t| matches!(*t, "-a" | "--all")) => {
            "`swapoff -a` takes the machine's swap away".to_owned()
        }
        "journalctl"
            if lits
                .iter()
                .any(|t| t.starts_with("--vacuum") || *t == "--rotate") =>
        {
            "`journalctl --vacuum-*` deletes the system's logs".to_owned()
        }
        "dmesg"
            if lits
                .iter()
                .any(|t| matches!(*t, "-C" | "-c" | "--clear" | "--read-clear")) =>
        {
            "`dmesg -C` clears the kernel's log".to_owned()
        }
        "mount" if mounts_over_system(&lits) => {
            "`mount` over a system directory replaces what programs find there".to_owned()
        }
        "efibootmgr" if lits.iter().any(|t| boot_change(t)) => {
            "`efibootmgr` changes the machine's boot entries".to_owned()
        }
        _ => return None,
    };
    Some(why)
}

/// `modprobe` options that only query.
fn is_query(t: &str) -> bool {
    matches!(
        t,
        "-n" | "--dry-run"
            | "--show"
            | "-c"
            | "--showconfig"
            | "-D"
            | "--show-depends"
            | "--show-modversions"
            | "--dump-modversions"
            | "--show-exports"
            | "-V"
            | "--version"
            | "-h"
            | "--help"
    ) || (t.starts_with('-') && !t.starts_with("--") && t.contains('n'))
}

/// `iptables` options that flush rules, delete chains or set a chain's policy.
fn flushes(t: &str) -> bool {
    matches!(
        t,
        "-F" | "--flush" | "-X" | "--delete-chain" | "-P" | "--policy"
    ) || (t.starts_with('-') && !t.starts_with("--") && t.len() > 2 && t.contains(['F', 'P']))
}

fn systemctl(lits: &[&str]) -> Option<String> {
    let verb = lits
        .iter()
        .position(|t| matches!(*t, "stop" | "disable" | "mask" | "kill"))?;
    let unit = lits[verb + 1..]
        .iter()
        .filter(|t| !t.starts_with('-'))
        .find(|t| GUARDS.contains(&t.trim_end_matches(".service").trim_end_matches(".socket")))?;
    Some(format!(
        "`systemctl {} {unit}` stops a guard of the machine",
        lits[verb]
    ))
}

/// `efibootmgr` options that delete, create or reorder boot entries.
fn boot_change(t: &str) -> bool {
    matches!(
        t,
        "-B" | "--delete-bootnum"
            | "-c"
            | "--create"
            | "-o"
            | "--bootorder"
            | "-O"
            | "--delete-bootorder"
            | "-n"
            | "--bootnext"
            | "-A"
            | "--inactive"
    )
}

/// `mount … DIR` (bind, tmpfs, overlay, …) whose mount point is `/` or a system directory.
fn mounts_over_system(lits: &[&str]) -> bool {
    let Some(target) = lits.iter().rev().find(|t| !t.starts_with('-')) else {
        return false;
    };
    let operands = lits.iter().filter(|t| !t.starts_with('-')).count();
    let n = crate::paths::normalize(target);
    let system = [
        "/",
        "/etc",
        "/bin",
        "/sbin",
        "/usr",
        "/usr/bin",
        "/usr/sbin",
        "/usr/lib",
        "/lib",
        "/lib64",
        "/boot",
        "/root",
        "/home",
    ];
    operands >= 2 && system.contains(&n.as_str())
}
