//! One agent file for every command: `run --agent`, `check`, `dispatch --agent` and `replay
//! --agent` read the same file, and `run --hooks` works without one (the default agent).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

fn example(file: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/ops")
        .join(file)
        .display()
        .to_string()
}

fn tollgate(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tollgate"))
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

const NO_RM: &str = r#"hooks:
  PreToolUse:
    - name: no-rm
      tools: bash_code_execute_tool
      failure_mode: fail_closed
      script: >-
        jq -e '.tool_input.command | test("(^|[;&|[:space:]])rm[[:space:]]")' >/dev/null
        && { echo "rm is not allowed here" >&2; exit 2; } || exit 0
"#;

#[test]
fn run_with_hooks_and_no_agent_file_denies_through_the_default_agent() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("hooks.yaml"), NO_RM).unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    std::fs::write(ws.join("keep.txt"), "x").unwrap();
    let ws_arg = ws.display().to_string();
    let denied = tollgate(
        &[
            "run",
            "--hooks",
            "hooks.yaml",
            "--workspace",
            &ws_arg,
            "rm -f keep.txt",
        ],
        dir.path(),
    );
    let out = stdout(&denied);
    assert_eq!(denied.status.code(), Some(0), "{out}\n{}", stderr(&denied));
    assert!(out.contains("agent `default`"), "{out}");
    assert!(
        out.contains("deny by hook `no-rm`: rm is not allowed here"),
        "{out}"
    );
    assert!(ws.join("keep.txt").exists(), "the denied command ran");

    let allowed = tollgate(
        &[
            "run",
            "--hooks",
            "hooks.yaml",
            "--workspace",
            &ws_arg,
            "echo made > made.txt",
        ],
        dir.path(),
    );
    let out = stdout(&allowed);
    assert!(out.contains("✓ allow"), "{out}\n{}", stderr(&allowed));
    assert_eq!(
        std::fs::read_to_string(ws.join("made.txt")).unwrap().trim(),
        "made"
    );
}

#[test]
fn run_without_an_agent_file_selects_a_skill_given_as_a_folder() {
    let dir = tempfile::tempdir().unwrap();
    let skill = dir.path().join("no-select-star");
    std::fs::create_dir(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: no-select-star\ndescription: name your columns\nhooks:\n  PreToolUse:\n    \
         - tools: sql_query\n      script: >-\n        jq -e '.tool_input.sql | test(\"\\\\*\")' \
         >/dev/null && { echo \"name your columns\" >&2; exit 2; } || exit 0\n---\n",
    )
    .unwrap();
    let output = tollgate(
        &[
            "run",
            "--skill",
            "no-select-star",
            r#"sql_query {"sql": "SELECT * FROM sqlite_master"}"#,
        ],
        dir.path(),
    );
    let out = stdout(&output);
    let header = out.lines().next().unwrap_or_default();
    assert!(
        header.contains("skills") && header.contains("no-select-star"),
        "{out}\n{}",
        stderr(&output)
    );
    assert!(out.contains("name your columns"), "{out}");
}

#[test]
fn check_on_the_ops_agent_file_lists_its_hooks_gate_and_skills_without_warnings() {
    let output = tollgate(&["check", "--json", &example("agent.yaml")], Path::new("/"));
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    let json: Value = serde_json::from_slice(&output.stdout).unwrap();
    let ops = &json["files"][0];
    assert_eq!(ops["agent"]["name"], "ops");
    assert_eq!(ops["agent"]["gate"]["shell_analyzer"], true);
    assert_eq!(ops["agent"]["skills"][0]["name"], "deploy");
    assert_eq!(ops["warnings"], json!([]), "{ops:#}");
    let hooks: Vec<(&str, &str, Option<&str>)> = ops["hooks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                h["name"].as_str().unwrap(),
                h["source"].as_str().unwrap(),
                h["skill"].as_str(),
            )
        })
        .collect();
    assert_eq!(
        hooks,
        [
            ("ReadOnlyGuard", "agent_config", None),
            ("no-recursive-rm", "user_config", None),
            ("ops-sql-audit", "user_config", None),
            ("deploy-dry-run", "skill", Some("deploy")),
        ]
    );
    // The sub-agent's own file follows, with its own hooks.
    let analyst = &json["files"][1];
    assert!(analyst["path"].as_str().unwrap().ends_with("analyst.yaml"));
    assert_eq!(analyst["hooks"][0]["name"], "analyst-no-select-star");
}

#[test]
fn check_text_on_the_ops_agent_file_shows_the_agent() {
    let output = tollgate(&["check", &example("agent.yaml")], Path::new("/"));
    let out = stdout(&output);
    assert!(out.contains("agent `ops`"), "{out}");
    assert!(
        out.contains("only in runs that select skill `deploy`"),
        "{out}"
    );
    assert!(!out.contains("warning"), "{out}");
}

#[test]
fn dispatch_with_the_ops_agent_file_applies_its_class_hooks_and_metadata() {
    let payload = json!({
        "tool_name": "sql_execute",
        "tool_input": {"sql": "UPDATE orders SET status = 'closed' WHERE id = 3"},
    });
    let output = tollgate(
        &[
            "dispatch",
            "--agent",
            &example("agent.yaml"),
            "--event",
            "pre_tool_use",
            "--payload",
            &payload.to_string(),
        ],
        Path::new("/"),
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let line: Value = serde_json::from_slice(&output.stdout).unwrap();
    // org_id comes from the agent file's metadata, as in a run.
    assert_eq!(line["decision"], "deny", "{line:#}");
    assert_eq!(line["decided_by"], "ReadOnlyGuard");
}

#[test]
fn dispatch_selects_an_agent_skill_by_name() {
    let payload = json!({
        "tool_name": "bash_code_execute_tool",
        "tool_input": {"command": "bash deploy.sh v1"},
    });
    let output = tollgate(
        &[
            "dispatch",
            "--agent",
            &example("agent.yaml"),
            "--skill",
            "deploy",
            "--event",
            "pre_tool_use",
            "--payload",
            &payload.to_string(),
        ],
        Path::new("/"),
    );
    let line: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        line["modified_args"]["command"],
        "bash deploy.sh v1 --dry-run",
        "{line:#}\n{}",
        stderr(&output)
    );
}

#[test]
fn replay_takes_the_agent_file_under_both_flag_names() {
    let dir = tempfile::tempdir().unwrap();
    let transcript = dir.path().join("t.jsonl");
    let call = json!({"seq": 3, "elapsed_ms": 1, "run_id": "r", "agent": "ops", "depth": 0,
        "type": "tool_call", "tool_call_id": "c1", "tool_name": "sql_execute",
        "arguments": {"sql": "DELETE FROM orders"}});
    std::fs::write(&transcript, format!("{call}\n")).unwrap();
    let transcript = transcript.display().to_string();
    for flag in ["--agent", "--agent-file"] {
        let output = tollgate(
            &[
                "replay",
                &transcript,
                flag,
                &example("agent.yaml"),
                "--json",
            ],
            Path::new("/"),
        );
        assert_eq!(output.status.code(), Some(0), "{flag}: {}", stderr(&output));
        let json: Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(json["calls"][0]["decision"], "deny", "{flag}: {json:#}");
    }
}

#[test]
fn a_seed_style_agent_config_without_a_name_is_an_agent_file() {
    let dir = tempfile::tempdir().unwrap();
    let config = json!({"model_config_json": json!({"temperature": 0.2, "hooks": {"class_hooks": [
        {"class": "ReadOnlyGuard", "params": {"readonly_orgs": ["org-7"]}}]}}).to_string()});
    std::fs::write(dir.path().join("buyer.json"), config.to_string()).unwrap();
    let output = tollgate(&["check", "--json", "buyer.json"], dir.path());
    let json: Value = serde_json::from_slice(&output.stdout).unwrap();
    let file = &json["files"][0];
    assert_eq!(file["agent"]["name"], "buyer", "{file:#}");
    assert_eq!(file["hooks"][0]["name"], "ReadOnlyGuard");
    // The model's own settings are not tollgate's: a warning, not an error.
    assert_eq!(
        file["warnings"][0]["entry"],
        "model_config_json.temperature"
    );
}

#[test]
fn run_and_dispatch_warn_about_a_claude_code_tool_name_in_tools() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("hooks.yaml"),
        "hooks:\n  PreToolUse:\n    - tools: Bash\n      script: exit 2\n",
    )
    .unwrap();
    let payload = json!({"tool_name": "bash_code_execute_tool", "tool_input": {"command": "ls"}});
    let dispatched = tollgate(
        &[
            "dispatch",
            "--hooks",
            "hooks.yaml",
            "--event",
            "pre_tool_use",
            "--payload",
            &payload.to_string(),
        ],
        dir.path(),
    );
    let ran = tollgate(&["run", "--hooks", "hooks.yaml", "ls"], dir.path());
    for (command, output) in [("dispatch", &dispatched), ("run", &ran)] {
        let said = format!("{}{}", stdout(output), stderr(output));
        assert!(
            said.contains("`Bash`") && said.contains("bash_code_execute_tool"),
            "{command}: {said}"
        );
    }
}

#[test]
fn an_agent_file_given_as_a_hook_file_and_the_reverse_are_refused_with_the_right_flag() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("hooks.yaml"), NO_RM).unwrap();
    let agent = example("agent.yaml");
    let as_hooks = tollgate(&["run", "--hooks", &agent, "rm -rf build"], dir.path());
    assert_eq!(as_hooks.status.code(), Some(2));
    assert!(
        stderr(&as_hooks).contains("pass it with --agent"),
        "{}",
        stderr(&as_hooks)
    );
    let as_agent = tollgate(&["run", "--agent", "hooks.yaml", "ls"], dir.path());
    assert_eq!(as_agent.status.code(), Some(1));
    assert!(
        stderr(&as_agent).contains("pass it with --hooks"),
        "{}",
        stderr(&as_agent)
    );
}

#[test]
fn a_hook_file_or_skill_given_twice_registers_its_hooks_once() {
    let payload = json!({"tool_name": "bash_code_execute_tool", "tool_input": {"command": "bash deploy.sh v1"}});
    let output = tollgate(
        &[
            "dispatch",
            "--agent",
            &example("agent.yaml"),
            "--hooks",
            &example("hooks.yaml"),
            "--skill",
            &example("skills/deploy"),
            "--skill",
            "deploy",
            "--event",
            "pre_tool_use",
            "--payload",
            &payload.to_string(),
        ],
        Path::new("/"),
    );
    let line: Value = serde_json::from_slice(&output.stdout).unwrap();
    let names: Vec<&str> = line["hook_runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["no-recursive-rm", "deploy-dry-run"],
        "{}",
        stderr(&output)
    );
    assert!(
        stderr(&output).contains("its hooks load once"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn a_trace_path_that_is_a_config_file_is_refused_and_the_file_kept() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("hooks.yaml"), NO_RM).unwrap();
    let output = tollgate(
        &[
            "run",
            "--hooks",
            "hooks.yaml",
            "--trace",
            "./hooks.yaml",
            "ls",
        ],
        dir.path(),
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("configuration file"),
        "{}",
        stderr(&output)
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("hooks.yaml")).unwrap(),
        NO_RM
    );
}

#[test]
fn check_and_run_agree_on_an_agent_file_without_a_name_or_an_extension() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("hooks.yaml"), NO_RM).unwrap();
    std::fs::write(
        dir.path().join("ops-agent"),
        "model: direct\ntools: [bash_code_execute_tool]\nhooks: [hooks.yaml]\n",
    )
    .unwrap();
    let checked = tollgate(&["check", "--json", "ops-agent"], dir.path());
    let json: Value = serde_json::from_slice(&checked.stdout).unwrap();
    assert_eq!(json["files"][0]["agent"]["name"], "ops-agent", "{json:#}");
    assert_eq!(json["files"][0]["hooks"][0]["name"], "no-rm");
    let ran = tollgate(&["run", "--agent", "ops-agent", "rm -rf x"], dir.path());
    assert!(
        stdout(&ran).contains("deny by hook `no-rm`"),
        "{}",
        stdout(&ran)
    );
}

#[test]
fn check_shows_who_decides_an_agents_asks() {
    let dir = tempfile::tempdir().unwrap();
    let agent = dir.path().join("agent.yaml");
    std::fs::write(
        &agent,
        "name: ops\nmodel: direct\ntools: [sql_execute]\napproval:\n  timeout_seconds: 600\n  \
         approvers: [ops-lead, {name: dba, tools: [\"sql_*\"]}]\n",
    )
    .unwrap();
    let output = tollgate(&["check", &agent.display().to_string()], Path::new("/"));
    let out = stdout(&output);
    assert!(
        out.contains("asks wait 600 s for a decision by ops-lead, dba (tools sql_*)"),
        "{out}"
    );
    std::fs::write(
        &agent,
        "name: ops\nmodel: direct\ntools: [sql_execute]\napproval:\n  approvers: [{name: dba, tool: x}]\n",
    )
    .unwrap();
    let output = tollgate(&["check", &agent.display().to_string()], Path::new("/"));
    assert!(!output.status.success());
    let err = format!(
        "{}{}",
        stdout(&output),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(err.contains("approval.approvers[0]"), "{err}");
    assert!(err.contains("did you mean `tools`"), "{err}");
}

#[test]
fn check_shows_the_admin_files_approval_settings_over_the_agents() {
    let dir = tempfile::tempdir().unwrap();
    let agent = dir.path().join("agent.yaml");
    std::fs::write(
        &agent,
        "name: ops\nmodel: direct\ntools: [sql_execute]\napproval:\n  timeout_seconds: 600\n  approvers: [dev]\n",
    )
    .unwrap();
    let admin = dir.path().join("admin.yaml");
    std::fs::write(&admin, "approval:\n  approvers: [secops]\n").unwrap();
    let output = tollgate(
        &[
            "check",
            "--admin",
            &admin.display().to_string(),
            &agent.display().to_string(),
        ],
        Path::new("/"),
    );
    let out = stdout(&output);
    assert!(
        out.contains("asks wait 600 s for a decision by secops"),
        "{out}"
    );
}
