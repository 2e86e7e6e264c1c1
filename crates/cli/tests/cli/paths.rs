//! Relative paths in hook files resolve against the file's folder, whatever directory
//! tollgate runs in, and a missing program makes a fail-closed guard deny: through the binary.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

/// Denies a payload that mentions `rm -rf`, with the folder it was found in.
const GUARD: &str = "#!/bin/sh\nif grep -q 'rm -rf'; then echo \"no rm -rf ($HOOK_CONFIG_DIR)\" >&2; exit 2; fi\nexit 0\n";

/// A folder under `/tmp` (which the hook's sandbox replaces with its own) with an executable
/// `hooks/guard.sh` and `hooks.yaml` holding `yaml`.
fn folder(yaml: &str) -> tempfile::TempDir {
    let dir = tempfile::Builder::new().tempdir_in("/tmp").unwrap();
    std::fs::create_dir(dir.path().join("hooks")).unwrap();
    let guard = dir.path().join("hooks/guard.sh");
    std::fs::write(&guard, GUARD).unwrap();
    std::fs::set_permissions(&guard, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(dir.path().join("hooks.yaml"), yaml).unwrap();
    dir
}

fn bash(command: &str) -> String {
    json!({"tool_name": "bash_code_execute_tool", "tool_input": {"command": command}}).to_string()
}

fn tollgate(args: &[&str], cwd: &Path, env: &[(&str, &str)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tollgate"))
        .args(args)
        .current_dir(cwd)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// `tollgate dispatch --hooks HOOKS --event pre_tool_use --payload PAYLOAD` from `cwd`: the
/// decision line and stderr.
fn dispatch(hooks: &Path, payload: &str, cwd: &Path, env: &[(&str, &str)]) -> (Value, String) {
    let hooks = hooks.display().to_string();
    let args = [
        "dispatch",
        "--hooks",
        &hooks,
        "--event",
        "pre_tool_use",
        "--payload",
        payload,
    ];
    let output = tollgate(&args, cwd, env);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let stdout = String::from_utf8(output.stdout).unwrap();
    (serde_json::from_str(stdout.trim()).unwrap(), stderr)
}

#[test]
fn dispatch_from_the_root_decides_as_from_the_hooks_folder() {
    for script in [
        "./hooks/guard.sh",
        "hooks/guard.sh --flag",
        "bash hooks/guard.sh",
    ] {
        let yaml = format!(
            "hooks:\n  PreToolUse:\n    - script: {script}\n      failure_mode: fail_closed\n"
        );
        let dir = folder(&yaml);
        let hooks = dir.path().join("hooks.yaml");
        let mut seen = Vec::new();
        for cwd in [Path::new("/"), dir.path()] {
            let (denied, stderr) = dispatch(&hooks, &bash("rm -rf /srv"), cwd, &[]);
            assert!(!stderr.contains("warning"), "{script}: {stderr}");
            let reason = format!("no rm -rf ({})", dir.path().display());
            assert_eq!(
                denied["decision"], "deny",
                "{script} from {cwd:?}: {denied}"
            );
            assert_eq!(denied["reason"], reason.as_str(), "{script}");
            let (allowed, _) = dispatch(&hooks, &bash("ls"), cwd, &[]);
            assert_eq!(
                allowed["decision"], "allow",
                "{script} from {cwd:?}: {allowed}"
            );
            seen.push((denied["decision"].clone(), allowed["decision"].clone()));
        }
        assert_eq!(seen[0], seen[1], "{script}");
    }
}

#[test]
fn a_missing_script_under_fail_closed_denies_and_is_named_on_stderr() {
    let dir = folder(
        "hooks:\n  PreToolUse:\n    - script: ./hooks/gone.sh\n      failure_mode: fail_closed\n",
    );
    let hooks = dir.path().join("hooks.yaml");
    let (outcome, stderr) = dispatch(&hooks, &bash("ls"), Path::new("/"), &[]);
    assert_eq!(outcome["decision"], "deny", "{outcome}");
    assert_eq!(outcome["hook_runs"][0]["status"], "errored");
    let gone = format!("script `{}/hooks/gone.sh` not found", dir.path().display());
    let warning = format!("warning: {}: hooks.PreToolUse[0]: {gone}", hooks.display());
    assert!(stderr.contains(&warning), "{stderr}");
}

#[test]
fn regression_jq_missing_from_the_hooks_path_let_a_fail_closed_guard_allow() {
    // Without jq, `jq … && exit 2 || exit 0` exits 0: a guard that allows everything.
    let line = r#"jq -e '.tool_input.command | test("rm -rf")' <<<"$HOOK_PAYLOAD" >/dev/null && exit 2 || exit 0"#;
    let yaml = format!(
        "hooks:\n  PreToolUse:\n    - script: |-\n        {line}\n      failure_mode: fail_closed\n"
    );
    let dir = folder(&yaml);
    let hooks = dir.path().join("hooks.yaml");
    let path = [("PATH", "/nonexistent-tollgate-bin")];
    let (outcome, stderr) = dispatch(&hooks, &bash("rm -rf /srv"), Path::new("/"), &path);
    assert_eq!(outcome["decision"], "deny", "{outcome}");
    let error = outcome["hook_runs"][0]["error"].as_str().unwrap();
    assert_eq!(
        error,
        "program `jq` not found on the hook's PATH (/nonexistent-tollgate-bin)"
    );
    assert!(
        stderr.contains("hooks.PreToolUse[0]: program `jq` not found"),
        "{stderr}"
    );
}

#[test]
fn a_fail_open_hook_with_a_missing_program_fails_open_loudly() {
    let yaml =
        "hooks:\n  PreToolUse:\n    - script: definitely-not-installed-xyz --check || exit 0\n";
    let dir = folder(yaml);
    let hooks = dir.path().join("hooks.yaml");
    let (outcome, stderr) = dispatch(&hooks, &bash("ls"), Path::new("/"), &[]);
    assert_eq!(outcome["decision"], "allow");
    assert_eq!(outcome["hook_runs"][0]["status"], "errored", "{outcome}");
    assert!(
        stderr.contains("program `definitely-not-installed-xyz` not found on the hook's PATH"),
        "{stderr}"
    );
    assert!(stderr.contains("WARN hook failed"), "{stderr}");
}

#[test]
fn check_reports_the_missing_program_with_its_file_and_entry() {
    let yaml = "hooks:\n  PreToolUse:\n    - script: ./hooks/guard.sh\n    - script: echo x | definitely-not-installed-xyz && exit 2\n      failure_mode: fail_closed\n";
    let dir = folder(yaml);
    let hooks = dir.path().join("hooks.yaml").display().to_string();
    let output = tollgate(&["check", "--json", &hooks], Path::new("/"), &[]);
    assert_eq!(output.status.code(), Some(0));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let file = &report["files"][0];
    assert_eq!(file["path"], hooks.as_str());
    let guard = format!("{}/hooks/guard.sh", dir.path().display());
    assert_eq!(
        file["hooks"][0]["command"],
        guard.as_str(),
        "the line as it runs"
    );
    let warnings = file["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert_eq!(warnings[0]["entry"], "hooks.PreToolUse[1]");
    let message = warnings[0]["message"].as_str().unwrap();
    assert!(
        message.starts_with("program `definitely-not-installed-xyz` not found on the hook's PATH"),
        "{message}"
    );
}

#[test]
fn run_prints_a_missing_program_and_resolves_the_agents_hook_paths() {
    let dir = folder(
        "hooks:\n  PreToolUse:\n    - script: ./hooks/guard.sh\n      failure_mode: fail_closed\n    - script: definitely-not-installed-xyz\n      tools: [write_file]\n",
    );
    let call = json!({"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "bash_code_execute_tool", "arguments": {"command": "rm -rf build"}}}]});
    let script = format!(
        "{call}\n{}\n",
        json!({"role": "assistant", "content": "done"})
    );
    std::fs::write(dir.path().join("script.jsonl"), script).unwrap();
    let agent = dir.path().join("agent.yaml");
    let text = "name: small\nmodel: scripted:script.jsonl\ntools: [bash_code_execute_tool, write_file]\nhooks: [hooks.yaml]\n";
    std::fs::write(&agent, text).unwrap();
    let (agent, ws) = (
        agent.display().to_string(),
        dir.path().join("ws").display().to_string(),
    );
    let trace = dir.path().join("trace.jsonl");
    let trace_arg = trace.display().to_string();
    let args = [
        "run",
        "--agent",
        &agent,
        "--workspace",
        &ws,
        "--trace",
        &trace_arg,
        "go",
    ];
    let output = tollgate(&args, Path::new("/"), &[]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("hooks.PreToolUse[1]: program `definitely-not-installed-xyz` not found"),
        "{stderr}"
    );
    let lines: Vec<Value> = std::fs::read_to_string(&trace)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let observation = lines
        .iter()
        .find(|l| l["type"] == "observation" && l["tool_call_id"] == "c1")
        .unwrap();
    assert_eq!(observation["status"], "denied", "{observation}");
    let content = observation["content"].as_str().unwrap();
    assert!(content.contains("no rm -rf"), "{content}");
}

#[test]
fn regression_a_mention_of_path_switched_the_missing_program_check_off() {
    let dir = folder(
        "hooks:\n  PreToolUse:\n    - failure_mode: fail_closed\n      \
         script: 'definitely-not-installed-xyz -e . && exit 2 || exit 0 # PATH'\n",
    );
    let (line, stderr) = dispatch(
        &dir.path().join("hooks.yaml"),
        &bash("ls"),
        Path::new("/"),
        &[],
    );
    assert_eq!(line["decision"], "deny", "{line:#}");
    assert!(stderr.contains("definitely-not-installed-xyz"), "{stderr}");
}

#[test]
fn regression_a_missing_script_in_a_folder_with_a_space_let_a_fail_closed_guard_allow() {
    let dir = tempfile::Builder::new()
        .prefix("sp ace")
        .tempdir_in("/tmp")
        .unwrap();
    std::fs::write(
        dir.path().join("hooks.yaml"),
        "hooks:\n  PreToolUse:\n    - failure_mode: fail_closed\n      \
         script: ./hooks/missing.sh && exit 2 || exit 0\n",
    )
    .unwrap();
    let (line, stderr) = dispatch(
        &dir.path().join("hooks.yaml"),
        &bash("ls"),
        Path::new("/"),
        &[],
    );
    assert_eq!(line["decision"], "deny", "{line:#}");
    assert!(stderr.contains("hooks/missing.sh"), "{stderr}");
}

#[test]
fn regression_a_hook_folder_reached_through_dotdot_failed_in_the_sandbox() {
    let dir = folder(
        "hooks:\n  PreToolUse:\n    - failure_mode: fail_closed\n      script: ./hooks/guard.sh\n",
    );
    std::fs::create_dir(dir.path().join("other")).unwrap();
    let through = dir.path().join("other/../hooks.yaml");
    let (line, stderr) = dispatch(&through, &bash("rm -rf x"), Path::new("/"), &[]);
    assert_eq!(line["decision"], "deny", "{line:#}\n{stderr}");
    assert!(
        line["reason"].as_str().unwrap().contains("no rm -rf"),
        "{line:#}"
    );
}

#[test]
fn regression_a_script_fed_to_bash_on_stdin_stayed_relative_to_the_cwd() {
    let dir = folder(
        "hooks:\n  PreToolUse:\n    - failure_mode: fail_closed\n      script: bash < hooks/guard.sh\n",
    );
    let hooks = dir.path().join("hooks.yaml");
    let (from_folder, _) = dispatch(&hooks, &bash("ls"), dir.path(), &[]);
    let (from_root, stderr) = dispatch(&hooks, &bash("ls"), Path::new("/"), &[]);
    assert_eq!(
        from_root["hook_runs"][0]["status"], "completed",
        "{from_root:#}\n{stderr}"
    );
    assert_eq!(from_root["decision"], from_folder["decision"]);
    assert!(!stderr.contains("not found"), "{stderr}");
}
