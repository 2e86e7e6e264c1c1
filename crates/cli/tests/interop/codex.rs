//! Codex (`codex exec`) with a PreToolUse hook in `$CODEX_HOME/hooks.json`, its model played by
//! the Responses API stand-in through a custom model provider.

use std::process::Output;

use serde_json::json;
use tollgate_standins::{Script, StandIn, openai};

use crate::support::{ALLOWED_OUTPUT, Cli, DENY_REASON, DENY_WORD, Deny, Scene, context, run};

const API_KEY: &str = "sk-standin";

/// Codex's home inside the scene's home.
pub fn codex_home(scene: &Scene) -> std::path::PathBuf {
    scene.home.join(".codex")
}

/// `config.toml`: the stand-in as the model provider, no retries (a stand-in error fails
/// at once), and no update check, analytics, feedback or telemetry export.
fn write_config(scene: &Scene, api: &StandIn) {
    let config = format!(
        "model = \"standin-model\"\n\
         model_provider = \"standin\"\n\
         check_for_update_on_startup = false\n\
         [analytics]\nenabled = false\n\
         [feedback]\nenabled = false\n\
         [otel]\nexporter = \"none\"\n\
         [model_providers.standin]\n\
         name = \"tollgate stand-in\"\n\
         base_url = \"{}/v1\"\n\
         wire_api = \"responses\"\n\
         env_key = \"STANDIN_API_KEY\"\n\
         request_max_retries = 0\n\
         stream_max_retries = 0\n",
        api.base_url()
    );
    std::fs::create_dir_all(codex_home(scene)).unwrap();
    std::fs::write(codex_home(scene).join("config.toml"), config).unwrap();
}

/// Registers the guard for the shell tool (Codex matches it as `Bash`) in the user layer's
/// `hooks.json`, which has Claude Code's shape.
fn register_guard(scene: &Scene, deny: Deny) {
    let guard = codex_home(scene).join("hooks/guard.sh");
    scene.write_guard(&guard, deny);
    let hooks = json!({"hooks": {"PreToolUse": [{
        "matcher": "Bash",
        "hooks": [{"type": "command", "command": guard, "timeout": 30}]
    }]}});
    std::fs::write(
        codex_home(scene).join("hooks.json"),
        serde_json::to_string_pretty(&hooks).unwrap(),
    )
    .unwrap();
}

/// `codex exec` in the scene's project against `api`. Hooks of the user layer run only once
/// trusted (a hash stored by the TUI's review) or with `--dangerously-bypass-hook-trust`;
/// `danger-full-access` keeps Codex's own sandbox out of the picture; `--strict-config` fails
/// on a config key this version does not know.
pub fn codex(scene: &Scene, api: &StandIn) -> Output {
    write_config(scene, api);
    let mut command = scene.command(&Cli::Codex.executable());
    command
        .env("CODEX_HOME", codex_home(scene))
        .env("STANDIN_API_KEY", API_KEY)
        .args([
            "exec",
            "--strict-config",
            "--skip-git-repo-check",
            "--sandbox",
            "danger-full-access",
            "--dangerously-bypass-hook-trust",
            "--color",
            "never",
            "-C",
        ])
        .arg(&scene.project)
        .arg("Run the scripted command.");
    run(&mut command)
}

#[test]
fn codex_runs_an_allowed_shell_call_and_its_hook_gets_the_pre_tool_use_payload() {
    let scene = Scene::new();
    register_guard(&scene, Deny::Exit2);
    let command = format!("touch allowed.marker && echo {ALLOWED_OUTPUT}");
    let api = openai::start(Script::new().shell(&command).echo_tool_result()).unwrap();

    let output = codex(&scene, &api);

    let requests = api.requests();
    let context = context(&output, &requests);
    assert!(output.status.success(), "{context}");
    assert!(scene.project.join("allowed.marker").exists(), "{context}");
    let outputs = openai::tool_outputs(&requests);
    assert_eq!(outputs.len(), 1, "{context}");
    assert!(outputs[0].text.contains(ALLOWED_OUTPUT), "{context}");
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
        payload["tool_input"],
        json!({"command": command}),
        "{payload}"
    );
    assert_eq!(
        payload["tool_use_id"],
        outputs[0].call_id.as_str(),
        "{payload}"
    );
    assert_eq!(payload["cwd"], scene.project.to_str().unwrap(), "{payload}");
    assert_eq!(payload["model"], "standin-model", "{payload}");
    for field in [
        "session_id",
        "turn_id",
        "transcript_path",
        "permission_mode",
    ] {
        assert!(payload[field].is_string(), "{field} missing: {payload}");
    }
}

fn assert_denied(deny: Deny) {
    let scene = Scene::new();
    register_guard(&scene, deny);
    let command = format!("touch denied.marker && echo {DENY_WORD}");
    let api = openai::start(Script::new().shell(&command).echo_tool_result()).unwrap();

    let output = codex(&scene, &api);

    let requests = api.requests();
    let context = context(&output, &requests);
    assert!(output.status.success(), "{context}");
    assert!(!scene.project.join("denied.marker").exists(), "{context}");
    assert_eq!(scene.payloads().len(), 1, "{context}");
    let outputs = openai::tool_outputs(&requests);
    assert_eq!(outputs.len(), 1, "{context}");
    assert!(outputs[0].text.contains(DENY_REASON), "{context}");
    assert!(
        String::from_utf8_lossy(&output.stdout).contains(DENY_REASON),
        "{context}"
    );
}

#[test]
fn codex_hook_exit_2_blocks_the_shell_call_and_the_model_sees_the_reason() {
    assert_denied(Deny::Exit2);
}

#[test]
fn codex_hook_json_deny_blocks_the_shell_call_and_the_model_sees_the_reason() {
    assert_denied(Deny::Json);
}

/// Why `tollgate hook` denies an ask for Codex: Codex reports a hook's `ask` as a failed hook
/// and runs the call.
#[test]
fn codex_runs_the_call_when_its_hook_answers_ask() {
    let scene = Scene::new();
    register_guard(&scene, Deny::Ask);
    let command = format!("touch asked.marker && echo {DENY_WORD}");
    let api = openai::start(Script::new().shell(&command).echo_tool_result()).unwrap();

    let output = codex(&scene, &api);

    let requests = api.requests();
    let context = context(&output, &requests);
    assert!(output.status.success(), "{context}");
    assert_eq!(scene.payloads().len(), 1, "{context}");
    assert!(scene.project.join("asked.marker").exists(), "{context}");
}

#[test]
fn codex_calls_only_the_responses_api_of_its_provider() {
    let scene = Scene::new();
    let api = openai::start(Script::new().text("hello from the stand-in")).unwrap();

    let output = codex(&scene, &api);

    let requests = api.requests();
    let context = context(&output, &requests);
    assert!(output.status.success(), "{context}");
    assert!(String::from_utf8_lossy(&output.stdout).contains("hello from the stand-in"));
    let asked: Vec<String> = requests.iter().map(|r| r.summary()).collect();
    assert_eq!(asked, ["POST /v1/responses -> 200"], "{context}");
    assert_eq!(
        requests[0].json.as_ref().unwrap()["stream"],
        true,
        "{context}"
    );
    let bearer = format!("Bearer {API_KEY}");
    assert_eq!(requests[0].header("authorization"), Some(bearer.as_str()));
}
