//! `tollgate dispatch` on fixture files and generated hook files, as a user runs it.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

fn fixture(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
        .display()
        .to_string()
}

struct Run {
    code: i32,
    lines: Vec<Value>,
    stderr: String,
}

fn dispatch(args: &[&str]) -> Run {
    let output = Command::new(env!("CARGO_BIN_EXE_tollgate"))
        .arg("dispatch")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    Run {
        code: output.status.code().unwrap(),
        lines: stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect(),
        stderr: String::from_utf8(output.stderr).unwrap(),
    }
}

fn bash(command: &str) -> String {
    json!({"tool_name": "bash_code_execute_tool", "tool_input": {"command": command}}).to_string()
}

fn sql(org: &str, statement: &str) -> String {
    json!({"tool_name": "sql_execute", "tool_input": {"sql": statement}, "metadata": {"org_id": org}})
        .to_string()
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

#[test]
fn a_skill_command_hook_denies_rm_with_its_reason() {
    let skill = fixture("skills/no-rm/SKILL.md");
    let run = dispatch(&[
        "--skill",
        &skill,
        "--event",
        "PreToolUse",
        "--payload",
        &bash("rm -rf build"),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let out = &run.lines[0];
    assert_eq!(out["event"], "pre_tool_use");
    assert_eq!(out["decision"], "deny");
    assert_eq!(out["reason"], "rm is not allowed here");
    assert_eq!(out["decided_by"], "skill:no-rm/PreToolUse[0]");
    let runs = out["hook_runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0]["name"], "skill:no-rm/PreToolUse[0]");
    assert_eq!(runs[0]["kind"], "command");
    assert_eq!(runs[0]["source"], "skill");
    assert_eq!(runs[0]["status"], "completed");
    assert_eq!(runs[0]["decision"], "deny");
}

#[test]
fn a_skill_command_hook_allows_ls() {
    let skill = fixture("skills/no-rm/SKILL.md");
    let run = dispatch(&[
        "--skill",
        &skill,
        "--event",
        "pre_tool_use",
        "--payload",
        &bash("ls"),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let out = &run.lines[0];
    assert_eq!(out["decision"], "allow");
    assert_eq!(out["reason"], Value::Null);
    assert_eq!(out["hook_runs"][0]["status"], "completed");
    assert_eq!(out["hook_runs"][0]["decision"], "allow");
    for key in [
        "modified_args",
        "modified_result",
        "additional_context",
        "side_effects",
    ] {
        assert!(out.get(key).is_some(), "{key} missing: {out}");
    }
}

#[test]
fn a_refused_fail_closed_skill_hook_denies_as_refused() {
    let skill = fixture("skills/sudo/SKILL.md");
    let run = dispatch(&[
        "--skill",
        &skill,
        "--event",
        "PreToolUse",
        "--payload",
        &bash("ls"),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.contains("warning:"), "{}", run.stderr);
    let out = &run.lines[0];
    assert_eq!(out["decision"], "deny", "{out}");
    assert_eq!(out["hook_runs"][0]["status"], "refused");
    assert_eq!(out["hook_runs"][0]["decision"], "deny");
}

#[test]
fn read_only_guard_denies_a_delete_and_allows_a_select() {
    let hooks = fixture("read_only.yaml");
    let go = |payload: &str| {
        let run = dispatch(&[
            "--hooks",
            &hooks,
            "--event",
            "PreToolUse",
            "--payload",
            payload,
        ]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        run.lines[0].clone()
    };
    let delete = go(&sql("org-7", "DELETE FROM orders"));
    assert_eq!(delete["decision"], "deny");
    let reason = delete["reason"].as_str().unwrap();
    assert!(reason.contains("org-7 is read-only"), "{reason}");
    assert_eq!(delete["hook_runs"][0]["kind"], "class");
    assert_eq!(delete["hook_runs"][0]["source"], "user_config");
    assert_eq!(
        go(&sql("org-7", "SELECT * FROM orders"))["decision"],
        "allow"
    );
    assert_eq!(go(&sql("org-8", "DELETE FROM orders"))["decision"], "allow");
}

#[test]
fn audit_log_gets_one_line_per_dispatch() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("audit.jsonl");
    let hooks = write(
        dir.path(),
        "audit.yaml",
        &format!(
            "hooks:\n  SessionEnd:\n    - class: AuditLogHook\n      params: {{path: {}}}\n",
            serde_json::to_string(&log.display().to_string()).unwrap()
        ),
    );
    for command in ["ls", "rm -rf build"] {
        let run = dispatch(&[
            "--hooks",
            &hooks,
            "--skill",
            &fixture("skills/no-rm/SKILL.md"),
            "--event",
            "PreToolUse",
            "--payload",
            &bash(command),
        ]);
        assert_eq!(run.code, 0, "{}", run.stderr);
    }
    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert_eq!(lines[0]["decision"], "allow");
    assert_eq!(lines[1]["decision"], "deny");
    assert_eq!(lines[1]["tool_name"], "bash_code_execute_tool");
}

#[test]
fn result_truncate_spills_a_big_result_and_returns_a_preview() {
    let dir = tempfile::tempdir().unwrap();
    let spill = dir.path().join("spill");
    let hooks = write(
        dir.path(),
        "truncate.yaml",
        &format!(
            "hooks:\n  PostToolUse:\n    - class: ResultTruncateHook\n      params: {{max_bytes: 512, spill_dir: {}}}\n",
            serde_json::to_string(&spill.display().to_string()).unwrap()
        ),
    );
    let big: String = (0..500).map(|i| format!("row {i}\n")).collect();
    let payload = json!({
        "tool_name": "sql_execute",
        "tool_input": {"sql": "SELECT * FROM t"},
        "tool_result": big,
    });
    let run = dispatch(&[
        "--hooks",
        &hooks,
        "--event",
        "PostToolUse",
        "--payload",
        &payload.to_string(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let out = &run.lines[0];
    let preview = out["modified_result"].as_str().unwrap();
    assert!(preview.len() <= 512, "{preview}");
    let files: Vec<PathBuf> = std::fs::read_dir(&spill)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1);
    let name = files[0].file_name().unwrap().to_str().unwrap();
    assert!(preview.contains(name), "{preview}");
    assert_eq!(std::fs::read_to_string(&files[0]).unwrap(), big);
    assert_eq!(out["side_effects"][0]["kind"], "result_spilled");
    assert_eq!(out["hook_runs"][0]["rewrote"], true);
}

#[test]
fn rate_limit_denies_the_second_call_of_one_registry() {
    let payload = json!({
        "tool_name": "oa__purchase_pay",
        "tool_input": {"amount": 10},
        "metadata": {"org_id": "org-7"},
    });
    let run = dispatch(&[
        "--agent",
        &fixture("agent_rate_limit.json"),
        "--event",
        "PreToolUse",
        "--payload",
        &payload.to_string(),
        "--repeat",
        "2",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.lines.len(), 2);
    assert_eq!(run.lines[0]["decision"], "allow");
    assert_eq!(run.lines[1]["decision"], "deny");
    let reason = run.lines[1]["reason"].as_str().unwrap();
    assert!(
        reason.contains("oa") && reason.contains("retry after"),
        "{reason}"
    );
    assert_eq!(run.lines[1]["hook_runs"][0]["source"], "agent_config");
}

#[test]
fn payload_from_a_file_and_an_agreeing_event_field() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "payload.json",
        &json!({"event": "pre_tool_use", "tool_name": "bash_x", "tool_input": {"command": "rm -rf /tmp/x"}})
            .to_string(),
    );
    let run = dispatch(&[
        "--skill",
        &fixture("skills/no-rm/SKILL.md"),
        "--event",
        "BeforeToolUse",
        "--payload",
        &format!("@{path}"),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.lines[0]["decision"], "deny");
}

#[test]
fn an_unknown_agent_class_exits_1_naming_it() {
    let run = dispatch(&[
        "--agent",
        &fixture("agent_unknown_class.json"),
        "--event",
        "PreToolUse",
        "--payload",
        &bash("ls"),
    ]);
    assert_eq!(run.code, 1);
    assert!(run.lines.is_empty());
    assert!(run.stderr.contains("NoSuchGuard"), "{}", run.stderr);
}

#[test]
fn bad_payloads_exit_2_with_a_message() {
    let skill = fixture("skills/no-rm/SKILL.md");
    let cases = [
        ("PreToolUse", "{\"tool_name\": ", "not valid JSON"),
        ("PreToolUse", "[1, 2]", "expected a JSON object"),
        ("PreToolUse", "{\"tool_input\": {}}", "tool_name"),
        (
            "PostToolUse",
            "{\"event\": \"PreToolUse\", \"tool_name\": \"x\", \"tool_input\": {}}",
            "disagrees",
        ),
    ];
    for (event, payload, message) in cases {
        let run = dispatch(&["--skill", &skill, "--event", event, "--payload", payload]);
        assert_eq!(run.code, 2, "{payload}: {}", run.stderr);
        assert!(run.stderr.contains("bad payload"), "{}", run.stderr);
        assert!(run.stderr.contains(message), "{payload}: {}", run.stderr);
    }
    let missing = dispatch(&[
        "--skill",
        &skill,
        "--event",
        "PreToolUse",
        "--payload",
        "@/nonexistent.json",
    ]);
    assert_eq!(missing.code, 2);
    assert!(missing.stderr.contains("cannot read"), "{}", missing.stderr);
}

#[test]
fn an_unknown_event_is_a_usage_error() {
    let run = dispatch(&["--event", "OnToolUse", "--payload", "{}"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("unknown event"), "{}", run.stderr);
}

#[test]
fn a_missing_hook_file_exits_1() {
    let run = dispatch(&[
        "--hooks",
        "/nonexistent/hooks.yaml",
        "--event",
        "PreToolUse",
        "--payload",
        &bash("ls"),
    ]);
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("cannot read"), "{}", run.stderr);
}

#[test]
fn regression_a_hook_could_rewrite_the_terminal_through_dispatch() {
    let dir = tempfile::tempdir().unwrap();
    // The hook answers a deny whose reason holds raw controls once its JSON is decoded.
    let hooks = write(
        dir.path(),
        "hooks.yaml",
        "hooks:\n  PreToolUse:\n    - script: 'echo ''{\"decision\":\"deny\",\"reason\":\"a\\u009b2J\\u202eb\\u001b]0;x\\u0007c\\u007f\"}'''\n      failure_mode: fail_closed\n  \"Pre\\e[2JToolUse\\x9b\": []\n",
    );
    // A failing hook whose name (from its file name) holds controls: the WARN log line names it.
    let failing = write(
        dir.path(),
        "fail\u{1b}[31m\u{9b}.yaml",
        "hooks:\n  PreToolUse:\n    - script: exit 1\n",
    );
    let output = Command::new(env!("CARGO_BIN_EXE_tollgate"))
        .args(["dispatch", "--hooks", &failing, "--hooks", &hooks])
        .args(["--event", "PreToolUse"])
        .args(["--payload", &bash("ls")])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    );
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    for shown in [&stdout, &stderr] {
        assert!(
            !shown
                .chars()
                .any(|c| matches!(c, '\u{1b}' | '\u{7}' | '\u{7f}' | '\u{9b}' | '\u{202e}')),
            "{shown:?}"
        );
    }
    assert!(stderr.contains("hook failed"), "{stderr}");
    assert!(stderr.contains("fail\\u{1b}[31m\\u{9b}.yaml"), "{stderr}");
    // The warning about the bad event name is shown, escaped.
    assert!(stderr.contains("Pre\\u{1b}[2JToolUse\\u{9b}"), "{stderr}");
    // The JSON line keeps the hook's reason exactly.
    let line: Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(line["decision"], "deny");
    assert_eq!(line["reason"], "a\u{9b}2J\u{202e}b\u{1b}]0;x\u{7}c\u{7f}");
}
