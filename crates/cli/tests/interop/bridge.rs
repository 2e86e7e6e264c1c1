//! `tollgate hook` as the hook of the real Claude Code and Codex: installed with `tollgate hook
//! install` for every event, deciding the CLIs' shell calls with an admin hook file (a command
//! hook that denies, one that rewrites, one that asks) and, for asks, waiting on a real
//! `tollgate serve` until the test approves through its API.

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::{Value, json};
use tollgate_standins::{RecordedRequest, Script, StandIn, anthropic, openai};

use crate::claude_code::{claude, claude_command};
use crate::codex::{codex, codex_home};
use crate::served::Served;
use crate::support::{ALLOWED_OUTPUT, DENY_REASON, DENY_WORD, Scene, context, run};

/// A command naming this word is asked about.
const ASK_WORD: &str = "tollgate-ask-me";

/// The command the rewriting hook rewrites, and what it rewrites it to.
const ORIGINAL: &str = "touch original.marker && echo interop-original";
const REWRITTEN: &str = "touch rewritten.marker && echo interop-rewritten";

/// The admin hook file: the deny, rewrite and ask hooks, on tollgate's shell tool (which the
/// CLIs' `Bash` maps to).
fn admin_file(scene: &Scene) -> PathBuf {
    let path = scene.home.join("tollgate/admin.yaml");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let yaml = format!(
        r#"hooks:
  PreToolUse:
    - name: interop-deny
      tools: ["bash_*"]
      failure_mode: fail_closed
      script: |-
        jq -e '.tool_input.command | contains("{DENY_WORD}")' >/dev/null; s=$?
        case $s in
          0) echo '{DENY_REASON}' >&2; exit 2;;
          1) exit 0;;
          *) echo "interop-deny: jq exit $s" >&2; exit 2;;
        esac
    - name: interop-rewrite
      tools: ["bash_*"]
      failure_mode: fail_closed
      script: |-
        jq -c 'if .tool_input.command == "{ORIGINAL}" then {{modified_args: {{command: "{REWRITTEN}"}}}} else empty end'
    - name: interop-ask
      tools: ["bash_*"]
      failure_mode: fail_closed
      script: |-
        jq -c 'if (.tool_input.command | contains("{ASK_WORD}")) then {{decision: "ask", reason: "a person must approve {ASK_WORD}"}} else empty end'
"#
    );
    std::fs::write(&path, yaml).unwrap();
    path
}

/// The host a test drives.
#[derive(Clone, Copy)]
enum Host {
    ClaudeCode,
    Codex,
}

impl Host {
    fn api(self, script: Script) -> StandIn {
        match self {
            Host::ClaudeCode => anthropic::start(script).unwrap(),
            Host::Codex => openai::start(script).unwrap(),
        }
    }

    fn run(self, scene: &Scene, api: &StandIn) -> Output {
        match self {
            Host::ClaudeCode => claude(scene, api),
            Host::Codex => codex(scene, api),
        }
    }

    /// What the model saw of each tool call: (text, is_error).
    fn results(self, requests: &[RecordedRequest]) -> Vec<(String, bool)> {
        match self {
            Host::ClaudeCode => anthropic::tool_results(requests)
                .into_iter()
                .map(|r| (r.text, r.is_error))
                .collect(),
            Host::Codex => openai::tool_outputs(requests)
                .into_iter()
                .map(|o| (o.text, false))
                .collect(),
        }
    }

    /// `tollgate hook install` for this host: Claude Code's project settings, Codex's user
    /// `hooks.json` (in the scene's `CODEX_HOME`).
    fn install(self, scene: &Scene, extra: &[String]) {
        let admin = admin_file(scene);
        let mut command = Command::new(env!("CARGO_BIN_EXE_tollgate"));
        command
            .env("CODEX_HOME", codex_home(scene))
            .args(["hook", "install"]);
        match self {
            Host::ClaudeCode => command
                .arg("--claude-code")
                .arg("--project")
                .arg(&scene.project),
            Host::Codex => command.arg("--codex"),
        };
        command
            .arg("--admin")
            .arg(&admin)
            .arg("--audit")
            .arg(audit_path(scene))
            .args(["--timeout", "100"])
            .args(extra);
        let output = command.output().unwrap();
        assert!(
            output.status.success(),
            "install failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

fn audit_path(scene: &Scene) -> PathBuf {
    scene.home.join("tollgate/audit.jsonl")
}

/// The audit lines of the scene's PreToolUse calls.
fn audited(scene: &Scene) -> Vec<Value> {
    std::fs::read_to_string(audit_path(scene))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["host_event"] == "PreToolUse")
        .collect()
}

fn denied_command_never_runs(host: Host) {
    let scene = Scene::new();
    host.install(&scene, &[]);
    let command = format!("touch denied.marker && echo {DENY_WORD}");
    let api = host.api(Script::new().shell(&command).echo_tool_result());

    let output = host.run(&scene, &api);

    let requests = api.requests();
    let context = context(&output, &requests);
    assert!(output.status.success(), "{context}");
    assert!(!scene.project.join("denied.marker").exists(), "{context}");
    let results = host.results(&requests);
    assert_eq!(results.len(), 1, "{context}");
    assert!(results[0].0.contains(DENY_REASON), "{context}");
    assert!(results[0].0.contains("interop-deny"), "{context}");
    assert!(
        String::from_utf8_lossy(&output.stdout).contains(DENY_REASON),
        "{context}"
    );
    let audit = audited(&scene);
    assert_eq!(audit.len(), 1, "{audit:?}");
    assert_eq!(audit[0]["decision"], "deny");
    assert_eq!(audit[0]["decided_by"], "interop-deny");
}

fn allowed_command_runs(host: Host) {
    let scene = Scene::new();
    host.install(&scene, &[]);
    let command = format!("touch allowed.marker && echo {ALLOWED_OUTPUT}");
    let api = host.api(Script::new().shell(&command).echo_tool_result());

    let output = host.run(&scene, &api);

    let requests = api.requests();
    let context = context(&output, &requests);
    assert!(output.status.success(), "{context}");
    assert!(scene.project.join("allowed.marker").exists(), "{context}");
    let results = host.results(&requests);
    assert_eq!(results.len(), 1, "{context}");
    assert!(results[0].0.contains(ALLOWED_OUTPUT), "{context}");
    assert!(!results[0].1, "{context}");
    let events: Vec<String> = std::fs::read_to_string(audit_path(&scene))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["host_event"].to_string())
        .collect();
    let last = match host {
        Host::ClaudeCode => "SessionEnd",
        Host::Codex => "Stop",
    };
    let expected = [
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        last,
    ];
    assert_eq!(events, expected.map(|e| format!("\"{e}\"")), "{context}");
    let audit = audited(&scene);
    assert_eq!(audit.len(), 1, "{audit:?}");
    assert_eq!(audit[0]["decision"], "allow");
    assert_eq!(audit[0]["tollgate_tool"], "bash_code_execute_tool");
}

fn rewritten_command_runs(host: Host) {
    let scene = Scene::new();
    host.install(&scene, &[]);
    let api = host.api(Script::new().shell(ORIGINAL).echo_tool_result());

    let output = host.run(&scene, &api);

    let requests = api.requests();
    let context = context(&output, &requests);
    assert!(output.status.success(), "{context}");
    assert!(scene.project.join("rewritten.marker").exists(), "{context}");
    assert!(!scene.project.join("original.marker").exists(), "{context}");
    let results = host.results(&requests);
    assert_eq!(results.len(), 1, "{context}");
    assert!(results[0].0.contains("interop-rewritten"), "{context}");
    let audit = audited(&scene);
    assert_eq!(audit[0]["updated_input"]["command"], REWRITTEN, "{audit:?}");
}

fn asked_command_waits_for_an_approval(host: Host) {
    let served = Served::start();
    let scene = Scene::new();
    let server = vec![
        "--server".to_owned(),
        served.url.clone(),
        "--token-file".to_owned(),
        served.token_file().display().to_string(),
    ];
    host.install(&scene, &server);
    let command = format!("touch approved.marker && echo {ASK_WORD}");
    let api = host.api(Script::new().shell(&command).echo_tool_result());
    let http = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();

    let (output, request) = std::thread::scope(|s| {
        let running = s.spawn(|| host.run(&scene, &api));
        let request = http.block_on(served.first_pending());
        // Nothing ran while the request waited.
        assert!(!scene.project.join("approved.marker").exists());
        let id = request["id"].as_str().unwrap().to_owned();
        http.block_on(served.decide(&id, "approve", &json!({"note": "ok"})));
        (running.join().unwrap(), request)
    });

    let requests = api.requests();
    let context = context(&output, &requests);
    assert_eq!(request["tool_name"], "Bash", "{request}");
    assert_eq!(
        request["arguments"]["command"],
        command.as_str(),
        "{request}"
    );
    assert_eq!(request["asked_by"], "interop-ask", "{request}");
    assert!(output.status.success(), "{context}");
    assert!(scene.project.join("approved.marker").exists(), "{context}");
    let results = host.results(&requests);
    assert_eq!(results.len(), 1, "{context}");
    assert!(results[0].0.contains(ASK_WORD), "{context}");
    let audit = audited(&scene);
    assert_eq!(audit[0]["decision"], "approved", "{audit:?}");
    assert_eq!(audit[0]["approval_id"], request["id"], "{audit:?}");
}

/// Without `--server` an ask goes to Claude Code's own prompt, which nobody answers in print
/// mode, and Codex (whose hooks cannot ask) is told to deny: either way the command does not
/// run and the model reads why.
fn asked_command_without_a_server_does_not_run(host: Host) {
    let scene = Scene::new();
    host.install(&scene, &[]);
    let command = format!("touch asked.marker && echo {ASK_WORD}");
    let api = host.api(Script::new().shell(&command).echo_tool_result());

    let output = host.run(&scene, &api);

    let requests = api.requests();
    let context = context(&output, &requests);
    assert!(output.status.success(), "{context}");
    assert!(!scene.project.join("asked.marker").exists(), "{context}");
    let results = host.results(&requests);
    assert_eq!(results.len(), 1, "{context}");
    assert!(
        results[0]
            .0
            .contains(&format!("a person must approve {ASK_WORD}")),
        "{context}"
    );
    let expected = match host {
        Host::ClaudeCode => "ask",
        Host::Codex => "deny",
    };
    assert_eq!(audited(&scene)[0]["decision"], expected);
}

#[test]
fn claude_code_through_tollgate_hook_never_runs_a_denied_command_and_shows_the_reason() {
    denied_command_never_runs(Host::ClaudeCode);
}

#[test]
fn claude_code_through_tollgate_hook_runs_an_allowed_command() {
    allowed_command_runs(Host::ClaudeCode);
}

#[test]
fn claude_code_through_tollgate_hook_runs_the_command_a_hook_rewrote() {
    rewritten_command_runs(Host::ClaudeCode);
}

#[test]
fn claude_code_through_tollgate_hook_waits_for_an_approval_on_the_server_then_runs() {
    asked_command_waits_for_an_approval(Host::ClaudeCode);
}

#[test]
fn claude_code_through_tollgate_hook_without_a_server_leaves_an_ask_to_claude_code() {
    asked_command_without_a_server_does_not_run(Host::ClaudeCode);
}

#[test]
fn codex_through_tollgate_hook_without_a_server_denies_an_ask() {
    asked_command_without_a_server_does_not_run(Host::Codex);
}

#[test]
fn codex_through_tollgate_hook_never_runs_a_denied_command_and_shows_the_reason() {
    denied_command_never_runs(Host::Codex);
}

#[test]
fn codex_through_tollgate_hook_runs_an_allowed_command() {
    allowed_command_runs(Host::Codex);
}

#[test]
fn codex_through_tollgate_hook_runs_the_command_a_hook_rewrote() {
    rewritten_command_runs(Host::Codex);
}

#[test]
fn codex_through_tollgate_hook_waits_for_an_approval_on_the_server_then_runs() {
    asked_command_waits_for_an_approval(Host::Codex);
}

/// The executable the settings name is gone (moved, uninstalled): the shell exits 127, which
/// both hosts would go past, but the installed command ends in `|| exit 2` on the events that
/// let something happen, so the prompt is blocked and the model is never asked.
fn missing_tollgate_blocks(host: Host) {
    let scene = Scene::new();
    let gone = scene.home.join("moved-away/tollgate");
    host.install(
        &scene,
        &["--executable".to_owned(), gone.display().to_string()],
    );
    let command = format!("touch allowed.marker && echo {ALLOWED_OUTPUT}");
    let api = host.api(Script::new().shell(&command).echo_tool_result());

    let output = host.run(&scene, &api);

    let requests = api.requests();
    let context = context(&output, &requests);
    assert!(!scene.project.join("allowed.marker").exists(), "{context}");
    let asked: Vec<&RecordedRequest> = requests
        .iter()
        .filter(|r| r.path.ends_with("/messages") || r.path.ends_with("/responses"))
        .collect();
    assert!(asked.is_empty(), "{context}");
    let shown = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(shown.contains("not found"), "{context}");
}

#[test]
fn claude_code_with_tollgate_hook_installed_but_gone_blocks_the_prompt() {
    missing_tollgate_blocks(Host::ClaudeCode);
}

#[test]
fn codex_with_tollgate_hook_installed_but_gone_blocks_the_prompt() {
    missing_tollgate_blocks(Host::Codex);
}

/// A rewrite is `updatedInput` without `permissionDecision`: Claude Code's own permission
/// check still reviews the rewritten call (without `--allowedTools Bash`, print mode refuses
/// it), so tollgate can make a call stricter but never skips the host's rules.
#[test]
fn claude_code_through_tollgate_hook_checks_its_own_permissions_on_a_rewritten_command() {
    let scene = Scene::new();
    Host::ClaudeCode.install(&scene, &[]);
    let api = Host::ClaudeCode.api(Script::new().shell(ORIGINAL).echo_tool_result());
    let mut command = claude_command(&scene, &api);
    command.args(["-p", "Run the scripted command."]);

    let output = run(&mut command);

    let requests = api.requests();
    let context = context(&output, &requests);
    assert!(
        !scene.project.join("rewritten.marker").exists(),
        "{context}"
    );
    assert!(!scene.project.join("original.marker").exists(), "{context}");
    let results = Host::ClaudeCode.results(&requests);
    assert_eq!(results.len(), 1, "{context}");
    assert!(results[0].1, "{context}");
    assert!(results[0].0.contains("rewritten.marker"), "{context}");
    assert!(results[0].0.contains("needs approval"), "{context}");
}

/// A hook file in Claude Code's shape, given to `tollgate hook` with `--hooks`, with an
/// `async` hook on `Bash` that waits for a file nobody creates (within Claude Code's default
/// 600 s). The CLIs go on only when `tollgate hook` exits (`hook_exit.rs`): a bridge that
/// waited for its detached hooks would hold the call past the run's limit.
fn async_hook_does_not_hold_the_call(host: Host) {
    let scene = Scene::new();
    let never = scene.home.join("never-created");
    let settings = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{
        "type": "command", "async": true,
        "command": format!("while [ ! -e '{}' ]; do sleep 0.05; done", never.display()),
    }]}]}});
    let path = scene.home.join("tollgate/async.json");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, settings.to_string()).unwrap();
    host.install(&scene, &["--hooks".to_owned(), path.display().to_string()]);
    let command = format!("touch allowed.marker && echo {ALLOWED_OUTPUT}");
    let api = host.api(Script::new().shell(&command).echo_tool_result());

    let output = host.run(&scene, &api);

    let requests = api.requests();
    let context = context(&output, &requests);
    assert!(output.status.success(), "{context}");
    assert!(scene.project.join("allowed.marker").exists(), "{context}");
    let audit = audited(&scene);
    assert_eq!(audit[0]["decision"], "allow", "{audit:?}");
    let detached = audit[0]["hook_runs"].as_array().unwrap();
    assert!(
        detached.iter().any(|r| r["status"] == "detached"),
        "{audit:?}"
    );
}

#[test]
fn claude_code_through_tollgate_hook_is_not_held_by_an_async_hook() {
    async_hook_does_not_hold_the_call(Host::ClaudeCode);
}

#[test]
fn codex_through_tollgate_hook_is_not_held_by_an_async_hook() {
    async_hook_does_not_hold_the_call(Host::Codex);
}
