//! Hooks declared in Claude Code's shape, run as real processes through the real dispatcher:
//! they match, see and answer as Claude Code's hooks do.

use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};
use tollgate_core::{DispatchOutcome, Dispatcher, HookOptions, RegistryBuilder};
use tollgate_handlers::CommandHook;
use tollgate_handlers::claude::{CLAUDE_ENV, ClaudeCode, Matcher, Rule};
use tollgate_protocol::claude_code::ClaudeContext;
use tollgate_protocol::{Decision, Event, HookSource, Payload, PayloadCommon, RunStatus, ToolCall};

fn call(tool: &str, input: Value) -> Arc<Payload> {
    Arc::new(Payload::new(
        PayloadCommon {
            session_id: "s1".into(),
            ..Default::default()
        },
        ToolCall {
            tool_name: tool.into(),
            tool_call_id: "call_1".into(),
            tool_input: input,
        },
    ))
}

fn context(workspace: &Path) -> Arc<ClaudeContext> {
    Arc::new(ClaudeContext {
        cwd: workspace.to_path_buf(),
        transcript_path: "/tmp/trace.jsonl".into(),
        permission_mode: "default".into(),
        agent: None,
    })
}

fn hook(dir: &Path, line: &str, claude: ClaudeCode) -> CommandHook {
    CommandHook::claude_code("cc", line, HookSource::UserConfig, dir, claude)
}

async fn dispatch(hook: CommandHook, payload: Arc<Payload>) -> DispatchOutcome {
    let mut registry = RegistryBuilder::new();
    registry.register_with(payload.event(), hook, HookOptions::default());
    Dispatcher::new(registry.build().unwrap())
        .dispatch(payload)
        .await
}

/// The guard of the issue: written for Claude Code, it reads `tool_name` and
/// `tool_input.command` from stdin and blocks with exit 2.
const GUARD: &str = r#"jq -e '.tool_name == "Bash" and (.tool_input.command | test("^rm "))' >/dev/null; s=$?; case $s in 0) echo "rm is blocked" >&2; exit 2;; 1) exit 0;; *) exit 3;; esac"#;

#[tokio::test]
async fn a_claude_code_guard_sees_bash_and_blocks_the_runtimes_shell_tool() {
    let dir = tempfile::tempdir().unwrap();
    let claude = ClaudeCode::new("PreToolUse", context(dir.path()))
        .matcher(Matcher::parse(Some("Bash")).unwrap());
    let outcome = dispatch(
        hook(dir.path(), GUARD, claude),
        call("bash_code_execute_tool", json!({"command": "rm -rf build"})),
    )
    .await;
    assert_eq!(outcome.decision, Decision::deny("rm is blocked"));

    let claude = ClaudeCode::new("PreToolUse", context(dir.path()))
        .matcher(Matcher::parse(Some("Bash")).unwrap());
    let ls = dispatch(
        hook(dir.path(), GUARD, claude),
        call("bash_code_execute_tool", json!({"command": "ls"})),
    )
    .await;
    assert_eq!(ls.decision, Decision::Allow);
    assert_eq!(ls.runs.iter().count(), 1);
}

#[tokio::test]
async fn the_payload_on_stdin_is_claude_codes() {
    let dir = tempfile::tempdir().unwrap();
    let seen = dir.path().join("seen.json");
    let line = format!("cat > {}", seen.display());
    let claude = ClaudeCode::new("PreToolUse", context(Path::new("/ws")));
    let hook = hook(dir.path(), &line, claude).with_containment(
        tollgate_handlers::command::Containment::Sandbox(
            tollgate_handlers::command::Policy::new(tollgate_handlers::command::Network::Off)
                .writable(dir.path()),
        ),
    );
    let outcome = dispatch(
        hook,
        call("write_file", json!({"path": "a.md", "content": "x"})),
    )
    .await;
    assert_eq!(
        outcome.runs.iter().next().unwrap().status,
        RunStatus::Completed
    );
    let payload: Value = serde_json::from_str(&std::fs::read_to_string(seen).unwrap()).unwrap();
    assert_eq!(
        payload,
        json!({
            "session_id": "s1", "transcript_path": "/tmp/trace.jsonl", "cwd": "/ws",
            "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "Write",
            "tool_input": {"file_path": "/ws/a.md", "content": "x"}, "tool_use_id": "call_1",
        })
    );
}

#[tokio::test]
async fn matchers_and_if_rules_decide_whether_the_hook_runs_at_all() {
    let dir = tempfile::tempdir().unwrap();
    let claude = |matcher: &str| {
        ClaudeCode::new("PreToolUse", context(dir.path()))
            .matcher(Matcher::parse(Some(matcher)).unwrap())
    };
    let bash = || call("bash_code_execute_tool", json!({"command": "git push"}));
    let write = || call("write_file", json!({"path": "a", "content": "x"}));
    let deny = "exit 2";
    assert_eq!(
        dispatch(hook(dir.path(), deny, claude("Edit|Write")), bash())
            .await
            .runs
            .len(),
        0
    );
    assert!(
        dispatch(hook(dir.path(), deny, claude("Edit|Write")), write())
            .await
            .decision
            .is_deny()
    );
    assert!(
        dispatch(hook(dir.path(), deny, claude("^(?:Bash|Read)$")), bash())
            .await
            .decision
            .is_deny()
    );
    let rule = |text: &str| Rule::parse(text, dir.path(), None).unwrap();
    let push = claude("Bash").rule(rule("Bash(git push *)"));
    assert!(
        dispatch(hook(dir.path(), deny, push), bash())
            .await
            .decision
            .is_deny()
    );
    let commit = claude("Bash").rule(rule("Bash(git commit *)"));
    assert_eq!(
        dispatch(hook(dir.path(), deny, commit), bash())
            .await
            .runs
            .len(),
        0
    );
}

#[tokio::test]
async fn once_hooks_run_once_per_registry() {
    let dir = tempfile::tempdir().unwrap();
    let claude = ClaudeCode::new("PreToolUse", context(dir.path())).once(true);
    let mut registry = RegistryBuilder::new();
    registry.register(Event::PreToolUse, hook(dir.path(), "exit 2", claude));
    let dispatcher = Dispatcher::new(registry.build().unwrap());
    let payload = call("bash_code_execute_tool", json!({"command": "ls"}));
    assert!(
        dispatcher
            .dispatch(payload.clone())
            .await
            .decision
            .is_deny()
    );
    assert_eq!(dispatcher.dispatch(payload).await.decision, Decision::Allow);
}

#[tokio::test]
async fn updated_input_in_claude_codes_fields_rewrites_the_tools_arguments() {
    let dir = tempfile::tempdir().unwrap();
    let line = r#"jq -c '{hookSpecificOutput: {hookEventName: "PreToolUse", permissionDecision: "allow", updatedInput: {command: (.tool_input.command + " --dry-run")}}}'"#;
    let claude = ClaudeCode::new("PreToolUse", context(dir.path()));
    let outcome = dispatch(
        hook(dir.path(), line, claude),
        call(
            "bash_code_execute_tool",
            json!({"command": "deploy.sh", "timeout_seconds": 5}),
        ),
    )
    .await;
    assert_eq!(
        outcome.modified_args,
        Some(json!({"command": "deploy.sh --dry-run"}))
    );
}

#[tokio::test]
async fn plugin_root_is_substituted_before_the_analyzer_vets_the_line() {
    let plugin = tempfile::tempdir().unwrap();
    let root = plugin.path().canonicalize().unwrap();
    std::fs::create_dir(root.join("hooks")).unwrap();
    let script = root.join("hooks/x.sh");
    std::fs::write(
        &script,
        "#!/bin/bash\necho \"blocked by $(basename \"$0\") in $CLAUDE_PLUGIN_ROOT\" >&2\nexit 2\n",
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let claude = ClaudeCode::new("PreToolUse", context(Path::new("/ws"))).plugin_root(&root);
    let hook = hook(
        &root.join("hooks"),
        r#""${CLAUDE_PLUGIN_ROOT}/hooks/x.sh""#,
        claude,
    );
    assert_eq!(hook.line(), script.display().to_string());
    assert_eq!(
        hook.analysis().programs[0].name,
        script.display().to_string()
    );
    assert!(
        hook.missing_programs().is_empty(),
        "{:?}",
        hook.missing_programs()
    );
    let outcome = dispatch(
        hook,
        call("bash_code_execute_tool", json!({"command": "ls"})),
    )
    .await;
    assert_eq!(
        outcome.decision,
        Decision::deny(format!("blocked by x.sh in {}", root.display()))
    );
}

/// Claude Code runs every hook in the project's folder: a relative command is the project's,
/// whichever file declares it; a skill's hooks get its folder as `CLAUDE_PLUGIN_ROOT`.
#[test]
fn relative_commands_are_the_projects_and_a_skill_is_its_hooks_plugin_root() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let project = base.join("project");
    let skill = project.join(".claude/skills/deploy");
    std::fs::create_dir_all(project.join(".claude/hooks")).unwrap();
    std::fs::create_dir_all(skill.join(".claude/hooks")).unwrap();
    for script in [
        project.join(".claude/hooks/x.sh"),
        skill.join(".claude/hooks/x.sh"),
        skill.join("y.sh"),
    ] {
        std::fs::write(
            &script,
            "#!/bin/sh
exit 0
",
        )
        .unwrap();
        std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
    }
    let claude = || ClaudeCode::new("PreToolUse", context(&project)).skill_dir(&skill);
    let relative = hook(&skill, ".claude/hooks/x.sh", claude());
    assert_eq!(
        relative.line(),
        project.join(".claude/hooks/x.sh").display().to_string()
    );
    assert_eq!(relative.config_dir(), Some(skill.as_path()));
    let rooted = hook(&skill, r#""${CLAUDE_PLUGIN_ROOT}/y.sh""#, claude());
    assert_eq!(rooted.line(), skill.join("y.sh").display().to_string());
}

#[tokio::test]
async fn a_session_start_hooks_env_file_becomes_a_side_effect() {
    let dir = tempfile::tempdir().unwrap();
    let line = r#"printf 'export NODE_ENV=production\nexport PATH=/evil\n' >> "$CLAUDE_ENV_FILE""#;
    let claude = ClaudeCode::new("SessionStart", context(dir.path()));
    let start = Arc::new(Payload::new(
        PayloadCommon::default(),
        tollgate_protocol::EventData::SessionStart,
    ));
    let hook = hook(dir.path(), line, claude);
    assert!(hook.line().contains("/claude-env"), "{}", hook.line());
    let outcome = dispatch(hook, start).await;
    let effect = outcome
        .side_effects
        .iter()
        .find(|e| e.effect.kind == CLAUDE_ENV);
    let effect = effect.unwrap_or_else(|| panic!("{:?} {:?}", outcome.runs, outcome.side_effects));
    assert_eq!(
        effect.effect.detail["set"],
        json!({"NODE_ENV": "production"})
    );
    assert_eq!(effect.effect.detail["skipped"].as_array().unwrap().len(), 1);
}

#[test]
fn an_async_hooks_answer_is_context_and_never_a_decision() {
    let payload = call("bash_code_execute_tool", json!({"command": "make"}));
    let blocked = br#"{"decision": "block", "reason": "stop", "systemMessage": "lint ran",
        "hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": "2 warnings",
        "updatedInput": {"command": "make -n"}}}"#;
    let plain = ClaudeCode::new("PreToolUse", context(Path::new("/ws")));
    let answer = plain.interpret(&payload, Some(0), blocked, b"").unwrap();
    assert!(answer.decision.is_deny(), "{answer:?}");

    let asynchronous = ClaudeCode::new("PreToolUse", context(Path::new("/ws"))).record_only(true);
    let answer = asynchronous
        .interpret(&payload, Some(0), blocked, b"")
        .unwrap();
    assert_eq!(answer.decision, Decision::Allow);
    assert_eq!(answer.rewrite(), None);
    assert_eq!(answer.additional_context(), Some("2 warnings\nlint ran"));
    // A plain `async` hook's exit 2 is dropped; `asyncRewake` hands its stderr to the model.
    let answer = asynchronous
        .interpret(&payload, Some(2), b"", b"3 tests failed")
        .unwrap();
    assert_eq!(
        (answer.decision.clone(), answer.additional_context()),
        (Decision::Allow, None)
    );
    let rewake = ClaudeCode::new("PreToolUse", context(Path::new("/ws"))).rewake(true);
    let answer = rewake
        .interpret(&payload, Some(2), b"", b"3 tests failed")
        .unwrap();
    assert_eq!(
        (answer.decision.clone(), answer.additional_context()),
        (Decision::Allow, Some("3 tests failed"))
    );
    let wake: Vec<_> = answer
        .side_effects()
        .iter()
        .filter(|e| e.kind == tollgate_handlers::claude::WAKE)
        .collect();
    assert_eq!(wake.len(), 1, "{answer:?}");
    assert_eq!(wake[0].detail["reason"], "3 tests failed");
    // On any event, also where exit 2 is not a block (PostToolUse), and from stdout when
    // stderr is empty.
    let post = ClaudeCode::new("PostToolUse", context(Path::new("/ws"))).rewake(true);
    let answer = post
        .interpret(&payload, Some(2), b"lint failed\n", b"")
        .unwrap();
    assert_eq!(answer.additional_context(), Some("lint failed"));
    assert!(
        answer
            .side_effects()
            .iter()
            .any(|e| e.kind == tollgate_handlers::claude::WAKE)
    );
    // `SessionEnd` cannot keep a session going: no wake there.
    let end = ClaudeCode::new("SessionEnd", context(Path::new("/ws"))).rewake(true);
    let answer = end.interpret(&payload, Some(2), b"", b"late").unwrap();
    assert!(
        !answer
            .side_effects()
            .iter()
            .any(|e| e.kind == tollgate_handlers::claude::WAKE)
    );
}
