//! `tollgate hook` through the binary: the stdin payloads Claude Code 2.1.332 and Codex
//! 0.171.0 send (docs/interop-tests.md) in, the exact answer out; the audit file and `hook
//! log`; `hook install`; and asks filed with a real `tollgate serve`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use crate::served::{APPROVER, Served};

const BIN: &str = env!("CARGO_BIN_EXE_tollgate");

/// The admin hook file of these tests: `rm -rf` denied, `deploy …` rewritten to a dry run,
/// `curl` asked about, on tollgate's shell tool.
const ADMIN: &str = r#"hooks:
  PreToolUse:
    - name: no-rm-rf
      tools: ["bash_*"]
      failure_mode: fail_closed
      script: |-
        jq -e '.tool_input.command | test("rm -rf")' >/dev/null; s=$?
        case $s in
          0) echo "rm -rf is not allowed here" >&2; exit 2;;
          1) exit 0;;
          *) echo "no-rm-rf: jq exit $s" >&2; exit 2;;
        esac
    - name: dry-run-deploy
      tools: ["bash_*"]
      failure_mode: fail_closed
      script: |-
        jq -c 'if (.tool_input.command | startswith("deploy ")) then {modified_args: {command: (.tool_input.command + " --dry-run")}} else empty end'
    - name: ask-curl
      tools: ["bash_*"]
      failure_mode: fail_closed
      script: |-
        jq -c 'if (.tool_input.command | startswith("curl ")) then {decision: "ask", reason: "downloads need a person"} else empty end'
  UserPromptSubmit:
    - name: no-secrets
      failure_mode: fail_closed
      script: |-
        jq -e '.prompt | test("password")' >/dev/null; s=$?
        case $s in 0) echo "prompts may not hold passwords" >&2; exit 2;; 1) exit 0;; *) exit 2;; esac
  SessionStart:
    - name: house-rules
      script: "echo '{\"additional_context\": \"house rules: no force pushes\"}'"
"#;

/// A folder with the admin file and an audit path.
struct Setup {
    dir: tempfile::TempDir,
}

impl Setup {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("admin.yaml"), ADMIN).unwrap();
        Self { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn audit(&self) -> Vec<Value> {
        std::fs::read_to_string(self.path("audit.jsonl"))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// `tollgate hook --protocol PROTOCOL --admin admin.yaml --audit audit.jsonl ARGS` with
    /// `stdin`.
    fn hook(&self, protocol: &str, args: &[&str], stdin: &Value) -> Output {
        let mut command = Command::new(BIN);
        command
            .args(["hook", "--protocol", protocol, "--admin"])
            .arg(self.path("admin.yaml"))
            .arg("--audit")
            .arg(self.path("audit.jsonl"))
            .args(args);
        feed(&mut command, stdin.to_string().as_bytes())
    }
}

fn feed(command: &mut Command, stdin: &[u8]) -> Output {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

/// Claude Code 2.1.332's PreToolUse payload for `Bash`, as recorded.
fn claude_bash(command: &str) -> Value {
    json!({"session_id": "3f2b", "transcript_path": "/home/u/.claude/projects/p/3f2b.jsonl",
        "cwd": "/work/p", "prompt_id": "p-1", "permission_mode": "default",
        "effort": {"level": "medium"}, "hook_event_name": "PreToolUse", "tool_name": "Bash",
        "tool_input": {"command": command, "description": "scripted"},
        "tool_use_id": "toolu_01"})
}

/// Codex 0.171.0's.
fn codex_bash(command: &str) -> Value {
    json!({"session_id": "019a", "turn_id": "t-1",
        "transcript_path": "/home/u/.codex/sessions/rollout-1.jsonl", "cwd": "/work/p",
        "hook_event_name": "PreToolUse", "model": "gpt-5", "permission_mode": "bypassPermissions",
        "tool_name": "Bash", "tool_input": {"command": command}, "tool_use_id": "call_01"})
}

fn out(output: &Output) -> (Option<i32>, String, String) {
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn an_allowed_call_gets_no_answer_from_either_host_protocol() {
    let setup = Setup::new();
    for (protocol, payload) in [
        ("claude-code", claude_bash("ls -la")),
        ("codex", codex_bash("ls -la")),
    ] {
        let (code, stdout, stderr) = out(&setup.hook(protocol, &[], &payload));
        assert_eq!(
            (code, stdout.as_str()),
            (Some(0), ""),
            "{protocol}: {stderr}"
        );
    }
}

#[test]
fn claude_code_gets_a_deny_decision_with_tollgates_reason() {
    let setup = Setup::new();
    let (code, stdout, _) = out(&setup.hook("claude-code", &[], &claude_bash("rm -rf build")));
    assert_eq!(code, Some(0));
    assert_eq!(
        stdout,
        "{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"deny\",\
         \"permissionDecisionReason\":\"tollgate: Tool call denied by hook `no-rm-rf`: rm -rf is \
         not allowed here\"}}\n"
    );
}

#[test]
fn codex_gets_exit_2_and_tollgates_reason_on_stderr() {
    let setup = Setup::new();
    let (code, stdout, stderr) = out(&setup.hook("codex", &[], &codex_bash("rm -rf build")));
    assert_eq!((code, stdout.as_str()), (Some(2), ""));
    assert_eq!(
        stderr,
        "tollgate: Tool call denied by hook `no-rm-rf`: rm -rf is not allowed here\n"
    );
}

#[test]
fn a_rewrite_is_updated_input_in_each_hosts_names_and_shape() {
    let setup = Setup::new();
    let (code, stdout, _) = out(&setup.hook("claude-code", &[], &claude_bash("deploy v2")));
    assert_eq!(code, Some(0));
    assert_eq!(
        stdout,
        "{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"updatedInput\":\
         {\"command\":\"deploy v2 --dry-run\",\"description\":\"scripted\"}}}\n"
    );
    let (code, stdout, _) = out(&setup.hook("codex", &[], &codex_bash("deploy v2")));
    assert_eq!(code, Some(0));
    assert_eq!(
        stdout,
        "{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\
         \"allow\",\"updatedInput\":{\"command\":\"deploy v2 --dry-run\"}}}\n"
    );
}

#[test]
fn a_hook_in_claude_codes_shape_sees_claude_codes_names_through_the_bridge() {
    let dir = tempfile::tempdir().unwrap();
    let guard = "jq -e '.tool_name == \"Bash\" and (.tool_input.command | test(\"rm -rf\"))' \
                 >/dev/null; s=$?; case $s in 0) echo 'no rm -rf (Claude Code shape)' >&2; \
                 exit 2;; 1) exit 0;; *) exit 2;; esac";
    let file = json!({"hooks": {"PreToolUse": [{"matcher": "Bash",
        "hooks": [{"type": "command", "command": guard}]}]}});
    std::fs::write(dir.path().join("settings.json"), file.to_string()).unwrap();
    let mut command = Command::new(BIN);
    command
        .args(["hook", "--protocol", "codex", "--hooks"])
        .arg(dir.path().join("settings.json"))
        .arg("--audit")
        .arg(dir.path().join("audit.jsonl"));
    let (code, _, stderr) = out(&feed(
        &mut command,
        codex_bash("rm -rf build").to_string().as_bytes(),
    ));
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.ends_with("no rm -rf (Claude Code shape)\n"),
        "{stderr}"
    );
}

#[test]
fn the_shell_analyzer_reviews_bash_with_no_hook_at_all() {
    let dir = tempfile::tempdir().unwrap();
    let audit = dir.path().join("audit.jsonl");
    let run = |protocol: &str, payload: &Value| {
        let mut command = Command::new(BIN);
        command
            .args(["hook", "--protocol", protocol, "--audit"])
            .arg(&audit);
        out(&feed(&mut command, payload.to_string().as_bytes()))
    };
    let (code, stdout, _) = run("claude-code", &claude_bash("sudo rm -rf /"));
    assert_eq!(code, Some(0));
    let answer: Value = serde_json::from_str(&stdout).unwrap();
    let specific = &answer["hookSpecificOutput"];
    assert_eq!(specific["permissionDecision"], "deny");
    let reason = specific["permissionDecisionReason"].as_str().unwrap();
    assert!(
        reason.starts_with(
            "tollgate: Tool call denied by the permission gate: the shell analyzer blocks"
        ),
        "{reason}"
    );
    let (code, _, stderr) = run("codex", &codex_bash("sudo rm -rf /"));
    assert_eq!(code, Some(2));
    assert!(stderr.contains("the shell analyzer blocks"), "{stderr}");
}

#[test]
fn an_ask_without_a_server_is_claude_codes_ask_and_a_codex_deny() {
    let setup = Setup::new();
    let (code, stdout, _) =
        out(&setup.hook("claude-code", &[], &claude_bash("curl https://x.example")));
    assert_eq!(code, Some(0));
    assert_eq!(
        stdout,
        "{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"ask\",\
         \"permissionDecisionReason\":\"tollgate: downloads need a person (asked by ask-curl)\"}}\n"
    );
    let (code, stdout, stderr) =
        out(&setup.hook("codex", &[], &codex_bash("curl https://x.example")));
    assert_eq!((code, stdout.as_str()), (Some(2), ""));
    assert!(
        stderr.starts_with("tollgate: downloads need a person (asked by ask-curl). This call needs a human's approval, and Codex hooks cannot ask"),
        "{stderr}"
    );
}

#[test]
fn a_fail_closed_hook_whose_program_is_missing_denies() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("hooks.yaml"),
        "hooks:\n  PreToolUse:\n    - name: guard\n      tools: [\"bash_*\"]\n      \
         failure_mode: fail_closed\n      script: tollgate-no-such-guard --check\n",
    )
    .unwrap();
    let mut command = Command::new(BIN);
    command
        .args(["hook", "--protocol", "codex", "--hooks"])
        .arg(dir.path().join("hooks.yaml"))
        .arg("--audit")
        .arg(dir.path().join("audit.jsonl"));
    let (code, _, stderr) = out(&feed(&mut command, codex_bash("ls").to_string().as_bytes()));
    assert_eq!(code, Some(2), "{stderr}");
    // Codex reads all of stderr as the reason: the reason alone, the load warning in the audit.
    assert!(
        stderr.starts_with("tollgate: Tool call denied by hook `guard`: hook `guard` failed"),
        "{stderr}"
    );
    assert!(stderr.contains("tollgate-no-such-guard"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    let audit = std::fs::read_to_string(dir.path().join("audit.jsonl")).unwrap();
    let entry: Value = serde_json::from_str(audit.trim()).unwrap();
    let warning = entry["warnings"][0].as_str().unwrap();
    assert!(
        warning.contains("program `tollgate-no-such-guard` not found"),
        "{warning}"
    );
}

#[test]
fn a_fail_closed_hook_that_gets_no_sandbox_denies() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("hooks.yaml"),
        "hooks:\n  PreToolUse:\n    - name: user-guard\n      tools: [\"bash_*\"]\n      \
         failure_mode: fail_closed\n      script: exit 0\n",
    )
    .unwrap();
    let mut command = Command::new(BIN);
    command
        .args(["hook", "--protocol", "claude-code", "--hooks"])
        .arg(dir.path().join("hooks.yaml"))
        .arg("--audit")
        .arg(dir.path().join("audit.jsonl"))
        // A launcher that builds no sandbox: hooks of user files are refused, not run bare.
        .env("TOLLGATE_SANDBOX_LAUNCHER", "/bin/true");
    let (code, stdout, _) = out(&feed(
        &mut command,
        claude_bash("ls").to_string().as_bytes(),
    ));
    assert_eq!(code, Some(0));
    let answer: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "deny");
    let reason = answer["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap();
    assert!(
        reason.contains("failed (refused)") && reason.contains("sandbox unavailable"),
        "{reason}"
    );
}

#[test]
fn a_configuration_that_does_not_load_blocks_tool_calls_and_fails_other_events() {
    let dir = tempfile::tempdir().unwrap();
    let run = |payload: &Value| {
        let mut command = Command::new(BIN);
        command
            .args(["hook", "--protocol", "claude-code", "--admin"])
            .arg(dir.path().join("missing.yaml"))
            .arg("--audit")
            .arg(dir.path().join("audit.jsonl"));
        out(&feed(&mut command, payload.to_string().as_bytes()))
    };
    let (code, stdout, stderr) = run(&claude_bash("ls"));
    assert_eq!((code, stdout.as_str()), (Some(2), ""));
    assert!(
        stderr.starts_with("tollgate: ") && stderr.contains("missing.yaml"),
        "{stderr}"
    );
    let start = json!({"session_id": "s", "hook_event_name": "SessionStart", "source": "startup"});
    let (code, _, stderr) = run(&start);
    assert_eq!(code, Some(1), "{stderr}");
}

#[test]
fn stdin_that_is_no_hook_payload_blocks() {
    let setup = Setup::new();
    let mut command = Command::new(BIN);
    command
        .args(["hook", "--protocol", "claude-code", "--audit"])
        .arg(setup.path("audit.jsonl"));
    let (code, stdout, stderr) = out(&feed(&mut command, b"not json"));
    assert_eq!((code, stdout.as_str()), (Some(2), ""));
    assert!(
        stderr.starts_with("tollgate: stdin is not a JSON object"),
        "{stderr}"
    );
    assert_eq!(setup.audit()[0]["decision"], "error");
}

#[test]
fn an_event_the_bridge_does_not_map_gets_no_answer_and_is_audited_as_ignored() {
    let setup = Setup::new();
    let compact = json!({"session_id": "s", "hook_event_name": "PreCompact", "trigger": "auto"});
    let (code, stdout, _) = out(&setup.hook("claude-code", &[], &compact));
    assert_eq!((code, stdout.as_str()), (Some(0), ""));
    assert_eq!(setup.audit()[0]["decision"], "ignored");
}

#[test]
fn a_notification_is_dispatched_and_gets_no_answer() {
    let setup = Setup::new();
    let notification = json!({"session_id": "s", "hook_event_name": "Notification",
        "message": "Claude needs your permission to use Bash",
        "notification_type": "permission_prompt"});
    let (code, stdout, _) = out(&setup.hook("claude-code", &[], &notification));
    assert_eq!((code, stdout.as_str()), (Some(0), ""));
    let audit = setup.audit();
    assert_eq!(
        (&audit[0]["event"], &audit[0]["decision"]),
        (&json!("notification"), &json!("allow"))
    );
}

#[test]
fn a_denied_prompt_is_blocked_and_session_start_context_reaches_the_host() {
    let setup = Setup::new();
    let prompt = json!({"session_id": "s", "turn_id": "t", "cwd": "/p", "model": "m",
        "permission_mode": "default", "hook_event_name": "UserPromptSubmit",
        "prompt": "my password is hunter2", "transcript_path": null});
    for protocol in ["claude-code", "codex"] {
        let (code, stdout, _) = out(&setup.hook(protocol, &[], &prompt));
        assert_eq!(code, Some(0));
        assert_eq!(
            stdout,
            "{\"decision\":\"block\",\"reason\":\"tollgate: Denied by hook `no-secrets`: prompts \
             may not hold passwords\"}\n",
            "{protocol}"
        );
    }
    let start = json!({"session_id": "s", "hook_event_name": "SessionStart", "source": "startup"});
    let (code, stdout, _) = out(&setup.hook("codex", &[], &start));
    assert_eq!(code, Some(0));
    assert_eq!(
        stdout,
        "{\"hookSpecificOutput\":{\"additionalContext\":\"house rules: no force pushes\",\
         \"hookEventName\":\"SessionStart\"}}\n"
    );
}

#[test]
fn hooks_that_outlast_the_hosts_timeout_deny() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("admin.yaml"),
        "hooks:\n  PreToolUse:\n    - name: slow\n      timeout: 60\n      script: sleep 30\n",
    )
    .unwrap();
    let mut command = Command::new(BIN);
    command
        .args(["hook", "--protocol", "codex", "--timeout", "15", "--admin"])
        .arg(dir.path().join("admin.yaml"))
        .arg("--audit")
        .arg(dir.path().join("audit.jsonl"));
    let (code, _, stderr) = out(&feed(&mut command, codex_bash("ls").to_string().as_bytes()));
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("did not answer within the host's hook timeout"),
        "{stderr}"
    );
}

#[test]
fn every_call_is_audited_and_hook_log_shows_why() {
    let setup = Setup::new();
    setup.hook("claude-code", &[], &claude_bash("ls"));
    setup.hook("codex", &[], &codex_bash("rm -rf build"));
    let audit = setup.audit();
    assert_eq!(audit.len(), 2);
    assert_eq!(audit[0]["decision"], "allow");
    assert_eq!(audit[0]["host"], "claude-code");
    assert_eq!(audit[0]["tool_input"]["command"], "ls");
    assert_eq!(audit[0]["tollgate_tool"], "bash_code_execute_tool");
    let deny = &audit[1];
    assert_eq!(
        (
            &deny["host"],
            &deny["decision"],
            &deny["decided_by"],
            &deny["exit_code"]
        ),
        (
            &json!("codex"),
            &json!("deny"),
            &json!("no-rm-rf"),
            &json!(2)
        )
    );
    assert_eq!(deny["hook_runs"][0]["hook"], "no-rm-rf");

    let log = |args: &[&str]| {
        let output = Command::new(BIN)
            .args(["hook", "log", "--audit"])
            .arg(setup.path("audit.jsonl"))
            .args(args)
            .output()
            .unwrap();
        assert!(output.status.success());
        String::from_utf8(output.stdout).unwrap()
    };
    let all = log(&[]);
    assert_eq!(all.lines().count(), 2, "{all}");
    let denied = log(&["--decision", "deny"]);
    assert_eq!(denied.lines().count(), 1, "{denied}");
    assert!(
        denied.contains("codex") && denied.contains("[no-rm-rf]"),
        "{denied}"
    );
    assert!(denied.contains("rm -rf is not allowed here"), "{denied}");
    let json_lines = log(&["--json", "-n", "1"]);
    let last: Value = serde_json::from_str(json_lines.trim()).unwrap();
    assert_eq!(last["decision"], "deny");
}

// ---- install ---------------------------------------------------------------------------

fn install(args: &[&str], env: &[(&str, &Path)]) -> Output {
    let mut command = Command::new(BIN);
    command.args(["hook", "install"]).args(args);
    for (key, value) in env {
        command.env(key, value);
    }
    command.output().unwrap()
}

fn backups(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".bak"))
        .collect();
    names.sort();
    names
}

#[test]
fn install_writes_claude_codes_settings_and_a_second_install_changes_nothing() {
    let project = tempfile::tempdir().unwrap();
    let admin = project.path().join("admin.yaml");
    std::fs::write(&admin, "hooks: {}\n").unwrap();
    let args = [
        "--claude-code",
        "--project",
        project.path().to_str().unwrap(),
        "--admin",
        admin.to_str().unwrap(),
    ];
    let first = install(&args, &[]);
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let settings_path = project.path().join(".claude/settings.json");
    let written = std::fs::read_to_string(&settings_path).unwrap();
    let settings: Value = serde_json::from_str(&written).unwrap();
    let expected_command = format!(
        "{BIN} hook --protocol claude-code --admin {} --timeout 600",
        admin.display()
    );
    for (event, suffix) in [
        ("PreToolUse", " || exit 2"),
        ("PostToolUse", ""),
        ("PostToolUseFailure", ""),
        ("UserPromptSubmit", " || exit 2"),
        ("SessionStart", ""),
        ("SessionEnd", ""),
    ] {
        let command = format!("{expected_command}{suffix}");
        assert_eq!(
            settings["hooks"][event],
            json!([{"hooks": [{"type": "command", "command": command, "timeout": 600}]}]),
            "{event}"
        );
    }

    let second = install(&args, &[]);
    assert!(second.status.success());
    assert!(
        String::from_utf8_lossy(&second.stdout).contains("nothing changed"),
        "{}",
        String::from_utf8_lossy(&second.stdout)
    );
    assert_eq!(std::fs::read_to_string(&settings_path).unwrap(), written);
    assert!(backups(&project.path().join(".claude")).is_empty());
}

#[test]
fn install_merges_with_the_users_hooks_after_a_backup() {
    let home = tempfile::tempdir().unwrap();
    let codex_home = home.path().join(".codex");
    std::fs::create_dir_all(&codex_home).unwrap();
    let theirs = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "/opt/guard.sh", "timeout": 30}]}],
        "Notification": [{"hooks": [{"type": "command", "command": "notify-send hi"}]}]}});
    let original = serde_json::to_string_pretty(&theirs).unwrap();
    std::fs::write(codex_home.join("hooks.json"), &original).unwrap();

    let output = install(
        &["--codex", "--timeout", "900"],
        &[("CODEX_HOME", &codex_home)],
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );

    assert_eq!(backups(&codex_home), ["hooks.json.bak"]);
    assert_eq!(
        std::fs::read_to_string(codex_home.join("hooks.json.bak")).unwrap(),
        original
    );
    let merged: Value =
        serde_json::from_str(&std::fs::read_to_string(codex_home.join("hooks.json")).unwrap())
            .unwrap();
    let pre = merged["hooks"]["PreToolUse"].as_array().unwrap();
    assert_eq!(pre.len(), 2);
    assert_eq!(
        pre[0], theirs["hooks"]["PreToolUse"][0],
        "the user's hook stays first"
    );
    let ours = &pre[1]["hooks"][0];
    assert_eq!(ours["timeout"], 900);
    assert!(
        ours["command"]
            .as_str()
            .unwrap()
            .ends_with(" hook --protocol codex --timeout 900 || exit 2"),
        "{ours}"
    );
    assert_eq!(
        merged["hooks"]["Notification"],
        theirs["hooks"]["Notification"]
    );
    for event in ["PostToolUse", "UserPromptSubmit", "SessionStart", "Stop"] {
        assert_eq!(
            merged["hooks"][event].as_array().unwrap().len(),
            1,
            "{event}"
        );
    }

    // Another timeout: tollgate's hooks are replaced in place, after a second backup.
    let output = install(
        &["--codex", "--timeout", "600"],
        &[("CODEX_HOME", &codex_home)],
    );
    assert!(output.status.success());
    assert_eq!(backups(&codex_home), ["hooks.json.bak", "hooks.json.bak.1"]);
    let again: Value =
        serde_json::from_str(&std::fs::read_to_string(codex_home.join("hooks.json")).unwrap())
            .unwrap();
    assert_eq!(again["hooks"]["PreToolUse"].as_array().unwrap().len(), 2);
    assert_eq!(again["hooks"]["PreToolUse"][1]["hooks"][0]["timeout"], 600);
}

#[test]
fn install_leaves_a_file_that_is_not_json_alone() {
    let project = tempfile::tempdir().unwrap();
    let settings = project.path().join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(&settings, "{ not json").unwrap();
    let output = install(
        &[
            "--claude-code",
            "--project",
            project.path().to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("is not JSON"));
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), "{ not json");
    assert!(backups(settings.parent().unwrap()).is_empty());
}

#[test]
fn install_never_writes_a_token_into_the_settings() {
    let project = tempfile::tempdir().unwrap();
    let output = install(
        &[
            "--claude-code",
            "--project",
            project.path().to_str().unwrap(),
            "--server",
            "http://127.0.0.1:8080",
            "--token",
            "ci-secret-token-0123456789",
        ],
        &[],
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("--token-file"));
    assert!(!project.path().join(".claude").exists());
}

// ---- asks on a server ------------------------------------------------------------------

/// The hook with `--server`, run in the background; its output once it ends.
fn hook_on_server(
    setup: &Setup,
    served: &Served,
    protocol: &str,
    payload: &Value,
) -> std::thread::JoinHandle<Output> {
    let mut command = Command::new(BIN);
    command
        .args(["hook", "--protocol", protocol, "--admin"])
        .arg(setup.path("admin.yaml"))
        .arg("--audit")
        .arg(setup.path("audit.jsonl"))
        .args(["--server", &served.url, "--token-file"])
        .arg(served.token_file());
    let stdin = payload.to_string();
    std::thread::spawn(move || feed(&mut command, stdin.as_bytes()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ask_waits_on_the_server_until_a_person_approves() {
    let setup = Setup::new();
    let served = Served::start();
    let hook = hook_on_server(
        &setup,
        &served,
        "claude-code",
        &claude_bash("curl https://x.example"),
    );
    let request = served.first_pending().await;
    assert_eq!(request["agent"], "claude-code");
    assert_eq!(request["tool_name"], "Bash");
    assert_eq!(request["tool_call_id"], "toolu_01");
    assert_eq!(
        request["arguments"],
        json!({"command": "curl https://x.example", "description": "scripted"})
    );
    assert_eq!(request["asked_by"], "ask-curl");
    assert_eq!(request["approvers"], json!(["ops-lead"]));
    let id = request["id"].as_str().unwrap();
    assert!(!hook.is_finished(), "the hook waits for the decision");
    served.decide(id, "approve", &json!({})).await;

    let (code, stdout, stderr) = out(&hook.join().unwrap());
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(
        stdout,
        format!(
            "{{\"hookSpecificOutput\":{{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\
             \"allow\",\"permissionDecisionReason\":\"tollgate: approved by ops-lead ({id})\"}}}}\n"
        )
    );
    assert_eq!(
        stderr, "",
        "stderr is a block's reason, so nothing else goes there"
    );
    let audit = setup.audit();
    assert_eq!(
        (&audit[0]["decision"], &audit[0]["approval_id"]),
        (&json!("approved"), &json!(id))
    );

    // The host retries the same call: the hook re-attaches to the decided request.
    let again = hook_on_server(
        &setup,
        &served,
        "claude-code",
        &claude_bash("curl https://x.example"),
    );
    let (code, stdout, _) = out(&again.join().unwrap());
    assert_eq!(code, Some(0));
    assert!(stdout.contains(id), "{stdout}");
    let (_, all) = served
        .call("GET", "/v1/approvals?status=all", APPROVER, None)
        .await;
    assert_eq!(all["requests"].as_array().unwrap().len(), 1, "{all}");

    // Another command under the same call id is not what was approved.
    let other = hook_on_server(
        &setup,
        &served,
        "claude-code",
        &claude_bash("curl https://y.example"),
    );
    let (code, stdout, _) = out(&other.join().unwrap());
    assert_eq!(code, Some(0));
    let answer: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "deny");
    assert!(
        stdout.contains("was filed for this call with other arguments"),
        "{stdout}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejection_denies_with_the_approvers_note() {
    let setup = Setup::new();
    let served = Served::start();
    let hook = hook_on_server(
        &setup,
        &served,
        "codex",
        &codex_bash("curl https://x.example"),
    );
    let request = served.first_pending().await;
    let id = request["id"].as_str().unwrap();
    served
        .decide(id, "reject", &json!({"note": "use the mirror"}))
        .await;
    let (code, stdout, stderr) = out(&hook.join().unwrap());
    assert_eq!((code, stdout.as_str()), (Some(2), ""));
    assert!(
        stderr.ends_with(&format!(
            "tollgate: ops-lead rejected the call ({id}). Note from ops-lead: use the mirror\n"
        )),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approvers_edit_is_reviewed_again_and_runs_as_updated_input() {
    let setup = Setup::new();
    let served = Served::start();
    let hook = hook_on_server(
        &setup,
        &served,
        "codex",
        &codex_bash("curl https://x.example"),
    );
    let id = served.first_pending().await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let edit = json!({"command": "curl https://mirror.example"});
    served.decide(&id, "approve", &json!({"edit": edit})).await;
    let (code, stdout, _) = out(&hook.join().unwrap());
    assert_eq!(code, Some(0));
    assert_eq!(
        stdout,
        "{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\
         \"allow\",\"updatedInput\":{\"command\":\"curl https://mirror.example\"}}}\n"
    );

    // An edit the policy denies stays denied, approved or not.
    let mut payload = codex_bash("curl https://x.example");
    payload["tool_use_id"] = json!("call_02");
    let hook = hook_on_server(&setup, &served, "codex", &payload);
    let id = served.first_pending().await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let edit = json!({"command": "curl https://x.example && rm -rf /srv"});
    served.decide(&id, "approve", &json!({"edit": edit})).await;
    let (code, _, stderr) = out(&hook.join().unwrap());
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains("is denied: Tool call denied by hook `no-rm-rf`"),
        "{stderr}"
    );
}

#[test]
fn an_unreachable_server_denies_the_ask() {
    let setup = Setup::new();
    let token = setup.path("token");
    std::fs::write(&token, "ci-bridge-token-0123456789").unwrap();
    let args = [
        "--server",
        "http://127.0.0.1:9",
        "--token-file",
        token.to_str().unwrap(),
    ];
    let (code, _, stderr) = out(&setup.hook("codex", &args, &codex_bash("curl https://x.example")));
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains("cannot reach the approval server"),
        "{stderr}"
    );
}

/// Claude Code's `PermissionRequest` for a fetch, as its print mode sends it.
fn claude_permission_request(url: &str) -> Value {
    json!({"session_id": "s", "cwd": "/p", "permission_mode": "default",
        "hook_event_name": "PermissionRequest", "tool_name": "WebFetch",
        "tool_input": {"url": url, "prompt": "Summarize."},
        "permission_suggestions": [{"type": "addRules", "behavior": "allow",
            "destination": "localSettings", "rules": [{"toolName": "WebFetch"}]}]})
}

#[test]
fn a_permission_request_hook_answers_claude_codes_dialog_through_the_bridge() {
    let setup = Setup::new();
    let guard = r#"u=$(jq -r .tool_input.url)
case "$u" in
  *docs*) echo '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}';;
  *tracker*) echo '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"no tracker"}}}';;
esac"#;
    std::fs::write(setup.path("guard.sh"), guard).unwrap();
    let settings = json!({"hooks": {"PermissionRequest": [{"matcher": "WebFetch", "hooks": [
        {"type": "command", "command": format!("bash {}", setup.path("guard.sh").display())}]}]}});
    std::fs::write(setup.path("settings.json"), settings.to_string()).unwrap();
    let hooks = setup.path("settings.json");
    let args = ["--hooks", hooks.to_str().unwrap()];
    let answer = |url: &str| {
        let (code, stdout, stderr) =
            out(&setup.hook("claude-code", &args, &claude_permission_request(url)));
        assert_eq!(code, Some(0), "{stderr}");
        stdout
    };
    let granted: Value = serde_json::from_str(&answer("https://docs.invalid/")).unwrap();
    assert_eq!(
        granted["hookSpecificOutput"]["decision"],
        json!({"behavior": "allow"})
    );
    let refused: Value = serde_json::from_str(&answer("https://tracker.invalid/")).unwrap();
    assert_eq!(
        refused["hookSpecificOutput"]["decision"]["behavior"],
        "deny"
    );
    assert!(
        refused["hookSpecificOutput"]["decision"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("no tracker"))
    );
    // No answer from the hooks: Claude Code shows its dialog.
    assert_eq!(answer("https://other.invalid/"), "");
    let decisions: Vec<Value> = setup
        .audit()
        .iter()
        .map(|e| e["decision"].clone())
        .collect();
    assert_eq!(
        decisions,
        [json!("approved"), json!("deny"), json!("allow")]
    );
}
