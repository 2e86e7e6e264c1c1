//! `Analysis::programs`: the command names and script files a command line runs.

use tollgate_shell::{MAX_PROGRAMS, Profile, ProgramKind, analyze};

/// `(kind, name, the text its span covers, after_cd)` for every program of `command`; kind
/// is `c` (command) or `s` (script).
fn programs(command: &str) -> Vec<(char, String, Option<String>, bool)> {
    analyze(command, Profile::Trusted)
        .programs
        .into_iter()
        .map(|p| {
            let kind = match p.kind {
                ProgramKind::Command => 'c',
                _ => 's',
            };
            let written = p.span.map(|s| command[s].to_owned());
            (kind, p.name, written, p.after_cd)
        })
        .collect()
}

/// The names alone.
fn names(command: &str) -> Vec<String> {
    programs(command).into_iter().map(|p| p.1).collect()
}

fn at(kind: char, name: &str) -> (char, String, Option<String>, bool) {
    (kind, name.to_owned(), Some(name.to_owned()), false)
}

#[test]
fn command_names_anywhere_in_a_list_are_programs_and_builtins_are_not() {
    let line = r#"jq -e '.tool_input.command | test("rm")' <<< "$HOOK_PAYLOAD" >/dev/null && exit 2 || exit 0"#;
    assert_eq!(programs(line), [at('c', "jq")]);
    assert_eq!(
        programs("./hooks/guard.sh --flag"),
        [at('c', "./hooks/guard.sh")]
    );
    assert_eq!(
        names("echo ok | tee -a log | grep -q x; [ -f a ] && true"),
        ["tee", "grep"]
    );
}

#[test]
fn interpreters_name_their_script_files() {
    assert_eq!(
        programs("bash hooks/guard.sh"),
        [at('c', "bash"), at('s', "hooks/guard.sh")]
    );
    assert_eq!(
        programs("python3 -u ./guard.py --strict"),
        [at('c', "python3"), at('s', "./guard.py")]
    );
    assert_eq!(programs("node x.js"), [at('c', "node"), at('s', "x.js")]);
    assert_eq!(programs(". ./lib.sh"), [at('s', "./lib.sh")]);
    let quoted = programs(r#"sh -e "hooks/my guard.sh""#);
    assert_eq!(
        quoted[1],
        (
            's',
            "hooks/my guard.sh".to_owned(),
            Some(r#""hooks/my guard.sh""#.to_owned()),
            false
        )
    );
}

#[test]
fn interpreters_without_a_script_file_name_none() {
    assert_eq!(names("python3 -m http.server 8000"), ["python3"]);
    assert_eq!(names("bash -c 'exit 0'"), ["bash"]);
    assert_eq!(names("node --version"), ["node"]);
    assert_eq!(names("bash < <(printf x)"), ["bash"]);
}

#[test]
fn wrapped_commands_are_programs_too() {
    assert_eq!(
        names("env FOO=1 timeout 5 jq . | xargs -r grep -l x"),
        ["env", "timeout", "jq", "xargs", "grep"]
    );
    assert!(names("command -v jq >/dev/null || exit 0").is_empty());
    assert_eq!(names("exec jq ."), ["jq"]);
}

#[test]
fn names_inside_shell_strings_are_listed_without_a_place() {
    assert_eq!(
        programs("sh -c 'jq . && ./x.sh'"),
        [
            at('c', "sh"),
            ('c', "jq".to_owned(), None, false),
            ('c', "./x.sh".to_owned(), None, false)
        ]
    );
}

#[test]
fn functions_the_line_defines_and_files_it_writes_are_not_programs() {
    // `jq` is met where it is written and again where `f` runs it (without a place).
    assert_eq!(
        programs("f() { jq .; }; f; g"),
        [
            at('c', "jq"),
            ('c', "jq".to_owned(), None, false),
            at('c', "g")
        ]
    );
    assert_eq!(names("echo 'jq .' > x.sh; sh x.sh"), ["sh", "jq"]);
}

#[test]
fn names_after_a_cd_say_so() {
    assert_eq!(
        programs("cd /srv && ./deploy.sh"),
        [(
            'c',
            "./deploy.sh".to_owned(),
            Some("./deploy.sh".to_owned()),
            true
        )]
    );
}

#[test]
fn a_continued_line_keeps_its_places() {
    let line = "./a.sh \\\n  --flag && b";
    assert_eq!(programs(line), [at('c', "./a.sh"), at('c', "b")]);
}

#[test]
fn the_list_is_bounded() {
    let line: String = (0..3 * MAX_PROGRAMS).map(|i| format!("p{i}; ")).collect();
    assert_eq!(names(&line).len(), MAX_PROGRAMS);
}

#[test]
fn a_program_fed_to_a_shell_or_interpreter_from_a_file_is_a_script() {
    for (line, file) in [
        ("bash < hooks/g.sh", "hooks/g.sh"),
        ("python3 <hooks/g.py", "hooks/g.py"),
        ("sh -s < hooks/g.sh x", "hooks/g.sh"),
    ] {
        let scripts: Vec<(char, String, Option<String>, bool)> =
            programs(line).into_iter().filter(|p| p.0 == 's').collect();
        assert_eq!(
            scripts,
            [('s', file.to_owned(), Some(file.to_owned()), false)],
            "{line}"
        );
    }
}
