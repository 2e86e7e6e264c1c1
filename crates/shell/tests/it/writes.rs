//! `Analysis::writes`: the files a command writes whose path is known statically.

use tollgate_shell::{MAX_WRITES, Profile, analyze};

fn writes(command: &str) -> Vec<String> {
    analyze(command, Profile::Trusted).writes
}

#[test]
fn redirections_and_writing_tools_list_their_targets() {
    let cases: &[(&str, &[&str])] = &[
        (
            r#"echo "$ARGUMENTS" >> ~/.myrm/audit.log"#,
            &["~/.myrm/audit.log"],
        ),
        ("printf '%s\\n' x >> /tmp/hook.log 2>&1", &["/tmp/hook.log"]),
        (
            "jq -r .tool_name | tee -a log/tools.txt",
            &["log/tools.txt"],
        ),
        (
            "cp report.json \"$HOME/reports/last.json\"",
            &["~/reports/last.json"],
        ),
        (
            "cd /var/lib/app && echo ok > status",
            &["/var/lib/app/status"],
        ),
        ("sed -i 's/a/b/' src/main.c", &["src/main.c"]),
        ("dd if=/dev/zero of=disk.img bs=1M count=1", &["disk.img"]),
        ("echo a > x; echo b >> x", &["x"]),
    ];
    for (command, want) in cases {
        assert_eq!(writes(command), *want, "{command}");
    }
}

#[test]
fn devices_descriptors_reads_and_run_time_paths_are_not_listed() {
    for command in [
        "echo x > /dev/null 2>&1",
        "echo x >&2",
        "cat < input.txt",
        "echo x > \"$LOG_FILE\"",
        "echo x > \"$HOOK_SCRATCH_DIR/out.json\"",
        "tee $D/x < in",
        "cp a \"$(mktemp -d)/b\"",
        "echo x >> \"$CLAUDE_PROJECT_DIR/.claude/log/$(date +%F).log\"",
        "grep -q foo bar.txt",
    ] {
        assert_eq!(writes(command), Vec::<String>::new(), "{command}");
    }
}

#[test]
fn the_list_is_capped() {
    let command: String = (0..100).map(|i| format!("echo {i} > f{i}; ")).collect();
    let listed = writes(&command);
    assert_eq!(listed.len(), MAX_WRITES);
    assert_eq!(listed[0], "f0");
}
