//! Privileges and accounts: setuid/setgid modes in every notation (`chmod 04755`, `=4755`,
//! `104755`, `u=rwxs`, `--reference=/usr/bin/sudo`, `install -m 4755`, `rsync --chmod=u+s`)
//! and account tools (`useradd -o -u 0`, `usermod -aG sudo`, `passwd -d`, `chpasswd`,
//! `gpasswd -a`, `visudo`, `vipw`, `adduser … sudo`, `dscl`, `sysadminctl`, …).

use crate::rules::RuleId;
use crate::walk::{Analyzer, Call};
use crate::word::Word;

/// Groups whose members are root or can become root.
const ADMIN_GROUPS: &[&str] = &[
    "root", "sudo", "wheel", "admin", "adm", "docker", "lxd", "lxc", "disk", "shadow", "sudoers",
    "libvirt", "kvm", "staff", "0",
];

/// Programs that are setuid root on common systems (a mode copied from them is setuid).
const SETUID_PROGRAMS: &[&str] = &[
    "sudo",
    "su",
    "passwd",
    "mount",
    "umount",
    "pkexec",
    "chsh",
    "chfn",
    "newgrp",
    "gpasswd",
    "fusermount",
    "fusermount3",
    "ssh-keysign",
    "doas",
    "at",
    "crontab",
    "pppd",
    "Xorg",
    "polkit-agent-helper-1",
    "dbus-daemon-launch-helper",
    "unix_chkpwd",
    "ping",
];

pub(super) fn check(a: &mut Analyzer, base: &str, args: &[Word<'_>], call: &Call<'_>) {
    match base {
        "chmod" => chmod(a, args, call),
        "install" | "ginstall" => {
            if let Some(mode) = option_value(args, "-m", "--mode").filter(|m| sets_setuid(m)) {
                privileged(
                    a,
                    call,
                    &format!("`install -m {mode}` installs a setuid/setgid program"),
                );
            }
        }
        "rsync" => {
            if let Some(mode) = option_value(args, "", "--chmod") {
                let setuid = mode
                    .split(',')
                    .any(|c| sets_setuid(c.trim_start_matches(['D', 'F'])));
                if setuid {
                    privileged(a, call, "`rsync --chmod` sets the setuid/setgid bit");
                }
            }
        }
        _ => accounts(a, base, args, call),
    }
}

fn chmod(a: &mut Analyzer, args: &[Word<'_>], call: &Call<'_>) {
    let setuid = args
        .iter()
        .filter_map(Word::lit)
        .filter(|t| !t.starts_with('-'))
        .any(sets_setuid);
    if setuid {
        privileged(a, call, "`chmod` sets the setuid/setgid bit");
    }
    if let Some(reference) = option_value(args, "", "--reference") {
        let n = crate::paths::normalize(reference);
        let system = [
            "/bin/",
            "/sbin/",
            "/usr/bin/",
            "/usr/sbin/",
            "/usr/local/bin/",
            "/usr/lib",
            "/usr/libexec/",
            "/lib",
        ]
        .iter()
        .any(|d| n.starts_with(d));
        if system
            || SETUID_PROGRAMS.contains(&super::base_of(&n))
            || reference.contains(crate::word::UNKNOWN)
        {
            privileged(
                a,
                call,
                &format!(
                    "`chmod --reference={}` copies the mode of a setuid program",
                    super::shown(reference)
                ),
            );
        }
    }
}

/// A mode (octal or symbolic) that sets the setuid or setgid bit.
pub(super) fn sets_setuid(mode: &str) -> bool {
    let m = mode.trim_start_matches('=');
    if !m.is_empty() && m.chars().all(|c| c.is_digit(8)) {
        let digits = m.as_bytes();
        return digits.len() >= 4 && (digits[digits.len() - 4] - b'0') & 6 != 0;
    }
    mode.split(',').any(|clause| {
        let who: String = clause
            .chars()
            .take_while(|c| matches!(c, 'u' | 'g' | 'o' | 'a'))
            .collect();
        let mut adds = false;
        for c in clause[who.len()..].chars() {
            match c {
                '+' | '=' => adds = true,
                '-' => adds = false,
                's' if adds && who != "o" => return true,
                _ => {}
            }
        }
        false
    })
}

/// The value of `short` (`-m MODE`, `-mMODE`) or `long` (`--mode MODE`, `--mode=MODE`).
fn option_value<'w>(args: &'w [Word<'_>], short: &str, long: &str) -> Option<&'w str> {
    for (k, word) in args.iter().enumerate() {
        let t = word.text.as_str();
        let next = || args.get(k + 1).map(|x| x.text.as_str());
        if t == long || (!short.is_empty() && t == short) {
            return next();
        }
        if let Some(v) = t.strip_prefix(long).and_then(|r| r.strip_prefix('=')) {
            return Some(v);
        }
        if !short.is_empty()
            && t.len() > short.len()
            && t.starts_with(short)
            && !t.starts_with("--")
        {
            return Some(&t[short.len()..]);
        }
    }
    None
}

fn privileged(a: &mut Analyzer, call: &Call<'_>, why: &str) {
    a.report(RuleId::PrivilegeEscalation, call.span.clone(), why);
}

/// Account tools: `account-change`, and `privilege-escalation` for uid or gid 0, duplicate
/// uids, administrative groups, deleted passwords and sudoers edits.
fn accounts(a: &mut Analyzer, base: &str, args: &[Word<'_>], call: &Call<'_>) {
    let words: Vec<&str> = args.iter().map(|w| w.text.as_str()).collect();
    let info = words
        .iter()
        .any(|t| matches!(*t, "--help" | "-h" | "--version" | "-V" | "--usage"));
    let changes = match base {
        "useradd" | "adduser" | "usermod" | "userdel" | "deluser" | "groupadd" | "addgroup"
        | "groupmod" | "groupdel" | "delgroup" | "gpasswd" | "chpasswd" | "chgpasswd"
        | "newusers" | "chfn" | "vipw" | "vigr" | "visudo" | "pwconv" | "pwunconv" | "grpconv"
        | "grpunconv" | "luseradd" | "lusermod" | "luserdel" | "lgroupadd" | "lgroupmod"
        | "lpasswd" | "lchsh" | "lchfn" => !info,
        "passwd" => {
            !info
                && !words
                    .iter()
                    .any(|t| matches!(*t, "-S" | "--status" | "-a" | "--all"))
        }
        "chage" => !info && !words.iter().any(|t| matches!(*t, "-l" | "--list")),
        "chsh" => !info && !words.iter().any(|t| matches!(*t, "-l" | "--list-shells")),
        "pw" => words
            .first()
            .is_some_and(|v| !v.ends_with("show") && !v.ends_with("next")),
        "dscl" => words.iter().any(|t| {
            matches!(
                *t,
                "-create" | "-append" | "-merge" | "-passwd" | "-delete" | "-change" | "-createpl"
            )
        }),
        "sysadminctl" => words.iter().any(|t| {
            matches!(
                *t,
                "-addUser" | "-deleteUser" | "-resetPasswordFor" | "-secureTokenOn" | "-adminUser"
            )
        }),
        "dseditgroup" => words
            .windows(2)
            .any(|p| p[0] == "-o" && matches!(p[1], "edit" | "create" | "delete")),
        _ => return,
    };
    if !changes {
        return;
    }
    a.report(
        RuleId::AccountChange,
        call.span.clone(),
        format!("`{base}` creates or changes user accounts, groups or passwords"),
    );
    if let Some(why) = admin_change(base, &words) {
        privileged(a, call, why);
    }
}

/// Account changes that grant root: uid or gid 0, a duplicate uid, an administrative group, a
/// deleted password, the sudoers file.
fn admin_change(base: &str, words: &[&str]) -> Option<&'static str> {
    let value = |short: &str, long: &str| -> Vec<&str> {
        let mut out = Vec::new();
        for (k, t) in words.iter().enumerate() {
            let next = words.get(k + 1).copied().unwrap_or_default();
            if *t == long || *t == short {
                out.push(next);
            } else if let Some(v) = t.strip_prefix(long).and_then(|r| r.strip_prefix('=')) {
                out.push(v);
            } else if t.starts_with('-') && !t.starts_with("--") && t.len() > 2 {
                // A cluster ending in the option (`-aG GROUP`, `-ou 0`) or carrying its value.
                let letter = short.trim_start_matches('-');
                if let Some(at) = t.find(letter) {
                    let rest = &t[at + letter.len()..];
                    out.push(if rest.is_empty() { next } else { rest });
                }
            }
        }
        out
    };
    let zero = |v: &str| v.trim_start_matches('0').is_empty() && !v.is_empty();
    let uid0 =
        value("-u", "--uid").into_iter().any(zero) || value("-g", "--gid").into_iter().any(zero);
    let non_unique = words.iter().any(|t| {
        *t == "--non-unique"
            || (t.starts_with('-')
                && !t.starts_with("--")
                && t.contains('o')
                && matches!(base, "useradd" | "usermod" | "groupadd" | "groupmod"))
    });
    let groups = value("-G", "--groups")
        .into_iter()
        .chain(value("-g", "--gid"))
        .chain(
            value("-a", "--add")
                .into_iter()
                .filter(|_| base == "gpasswd"),
        )
        .flat_map(|v| v.split(','))
        .any(|g| ADMIN_GROUPS.contains(&g));
    let group_operand = matches!(
        base,
        "adduser" | "gpasswd" | "addgroup" | "usermod" | "dseditgroup" | "dscl"
    ) && words.iter().any(|t| {
        ADMIN_GROUPS.contains(t) || t.ends_with("/Groups/admin") || t.ends_with("/Groups/wheel")
    });
    let no_password = base == "passwd" && words.iter().any(|t| matches!(*t, "-d" | "--delete"));
    let sudoers = matches!(base, "visudo");
    let uid_key = base == "dscl"
        && words
            .windows(2)
            .any(|p| matches!(p[0], "UniqueID" | "PrimaryGroupID") && zero(p[1]));
    (uid0 || non_unique || groups || group_operand || no_password || sudoers || uid_key)
        .then_some("the account change grants root (uid or gid 0, an administrative group, no password, sudoers)")
}

#[cfg(test)]
mod tests {
    use super::sets_setuid;

    #[test]
    fn setuid_and_setgid_modes_in_every_notation() {
        for mode in [
            "4755", "04755", "104755", "2755", "6755", "7755", "=4755", "u+s", "+s", "g+s", "a+s",
            "ug=rwxs", "u+rwxs", "o+x,u+s", "u-x+s",
        ] {
            assert!(sets_setuid(mode), "{mode}");
        }
        for mode in [
            "755", "0644", "1755", "u+x", "u-s", "o+s", "a=rwx", "g-s,u+x", "+t",
        ] {
            assert!(!sets_setuid(mode), "{mode}");
        }
    }
}
