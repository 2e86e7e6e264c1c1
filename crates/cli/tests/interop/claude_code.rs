//! Claude Code in print mode (`claude -p`) with a PreToolUse hook on `Bash` registered in the
//! project's `.claude/settings.json`, its model played by the Messages API stand-in.

use std::process::{Command, Output, Stdio};

use serde_json::json;
use tollgate_standins::{Script, StandIn, anthropic};

use crate::support::{ALLOWED_OUTPUT, Cli, DENY_REASON, DENY_WORD, Deny, Scene, context, run};

/// Registers the guard for `Bash` the way a project does, with the path form the hooks
/// documentation gives.
fn register_guard(scene: &Scene, deny: Deny) {
    scene.write_guard(&scene.project.join(".claude/hooks/guard.sh"), deny);
    let settings = json!({"hooks": {"PreToolUse": [{
        "matcher": "Bash",
        "hooks": [{"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/guard.sh"}]
    }]}});
    std::fs::write(
        scene.project.join(".claude/settings.json"),
        serde_json::to_string_pretty(&settings).unwrap(),
    )
    .unwrap();
}

/// `claude` in the scene's project against `api`, with no arguments yet.
pub fn claude_command(scene: &Scene, api: &StandIn) -> Command {
    let mut command = scene.command(&Cli::ClaudeCode.executable());
    command
        .env("CLAUDE_CONFIG_DIR", scene.home.join(".claude"))
        .env("ANTHROPIC_BASE_URL", api.base_url())
        .env("ANTHROPIC_API_KEY", "sk-ant-standin")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1");
    command
}

/// `claude -p` in the scene's project against `api`. `--allowedTools Bash` lets the tool run
/// without a prompt; `--dangerously-skip-permissions` would refuse to start as root.
pub fn claude(scene: &Scene, api: &StandIn) -> Output {
    let mut command = claude_command(scene, api);
    command.args(["-p", "Run the scripted command.", "--allowedTools", "Bash"]);
    run(&mut command)
}

#[test]
fn claude_code_runs_an_allowed_bash_call_and_its_hook_gets_the_pre_tool_use_payload() {
    let scene = Scene::new();
    register_guard(&scene, Deny::Exit2);
    let command = format!("touch allowed.marker && echo {ALLOWED_OUTPUT}");
    let api = anthropic::start(Script::new().shell(&command).echo_tool_result()).unwrap();

    let output = claude(&scene, &api);

    let requests = api.requests();
    let context = context(&output, &requests);
    assert!(output.status.success(), "{context}");
    assert!(scene.project.join("allowed.marker").exists(), "{context}");
    let results = anthropic::tool_results(&requests);
    assert_eq!(results.len(), 1, "{context}");
    assert!(!results[0].is_error, "{context}");
    assert_eq!(results[0].text.trim(), ALLOWED_OUTPUT, "{context}");
    assert!(
        String::from_utf8_lossy(&output.stdout).contains(ALLOWED_OUTPUT),
        "{context}"
    );

    let payloads = scene.payloads();
    assert_eq!(payloads.len(), 1, "{context}");
    let payload = &payloads[0];
    assert_eq!(payload["hook_event_name"], "PreToolUse", "{payload}");
    assert_eq!(payload["tool_name"], "Bash", "{payload}");
    assert_eq!(
        payload["tool_input"]["command"],
        command.as_str(),
        "{payload}"
    );
    assert_eq!(
        payload["tool_use_id"],
        results[0].tool_use_id.as_str(),
        "{payload}"
    );
    assert_eq!(payload["cwd"], scene.project.to_str().unwrap(), "{payload}");
    for field in ["session_id", "transcript_path", "permission_mode"] {
        assert!(payload[field].is_string(), "{field} missing: {payload}");
    }
    // tollgate takes the payload as Claude Code wrote it, and the same guard lets it through.
    let decided = dispatch_in_tollgate(&scene, payload);
    assert_eq!(decided["decision"], "allow", "{decided}");
    assert_eq!(decided["hook_runs"][0]["status"], "completed", "{decided}");
}

/// What the real Claude Code wrote to its hook's stdin, given as it is to `tollgate dispatch
/// --protocol claude-code` with the project's settings file: tollgate's decision.
fn dispatch_in_tollgate(scene: &Scene, payload: &serde_json::Value) -> serde_json::Value {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tollgate"))
        .args(["dispatch", "--protocol", "claude-code", "--payload", "@-"])
        .args(["--hooks", ".claude/settings.json"])
        .current_dir(&scene.project)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    std::io::Write::write_all(&mut stdin, payload.to_string().as_bytes()).unwrap();
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

fn assert_denied(deny: Deny) {
    let scene = Scene::new();
    register_guard(&scene, deny);
    let command = format!("touch denied.marker && echo {DENY_WORD}");
    let api = anthropic::start(Script::new().shell(&command).echo_tool_result()).unwrap();

    let output = claude(&scene, &api);

    let requests = api.requests();
    let context = context(&output, &requests);
    assert!(output.status.success(), "{context}");
    assert!(!scene.project.join("denied.marker").exists(), "{context}");
    assert_eq!(scene.payloads().len(), 1, "{context}");
    let results = anthropic::tool_results(&requests);
    assert_eq!(results.len(), 1, "{context}");
    assert!(results[0].is_error, "{context}");
    assert!(results[0].text.contains(DENY_REASON), "{context}");
    assert!(
        String::from_utf8_lossy(&output.stdout).contains(DENY_REASON),
        "{context}"
    );
    // The payload Claude Code wrote, given to tollgate as it is: the same guard, read with
    // Claude Code's rules, denies the same call for the same reason.
    let decided = dispatch_in_tollgate(&scene, &scene.payloads()[0]);
    assert_eq!(decided["decision"], "deny", "{decided}");
    let reason = decided["reason"].as_str().unwrap_or_default();
    assert!(reason.contains(DENY_REASON), "{decided}");
}

#[test]
fn claude_code_hook_exit_2_blocks_bash_and_the_model_sees_the_reason() {
    assert_denied(Deny::Exit2);
}

#[test]
fn claude_code_hook_json_deny_blocks_bash_and_the_model_sees_the_reason() {
    assert_denied(Deny::Json);
}

#[test]
fn claude_code_calls_only_the_messages_api_of_its_base_url() {
    let scene = Scene::new();
    let api = anthropic::start(Script::new().text("hello from the stand-in")).unwrap();

    let output = claude(&scene, &api);

    let requests = api.requests();
    let context = context(&output, &requests);
    assert!(output.status.success(), "{context}");
    assert!(String::from_utf8_lossy(&output.stdout).contains("hello from the stand-in"));
    let asked: Vec<String> = requests.iter().map(|r| r.summary()).collect();
    assert_eq!(asked, ["POST /v1/messages?beta=true -> 200"], "{context}");
    let body = requests[0].json.as_ref().unwrap();
    assert_eq!(body["stream"], true, "{context}");
    assert_eq!(requests[0].header("x-api-key"), Some("sk-ant-standin"));
}
