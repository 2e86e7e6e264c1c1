//! Hooks in Claude Code's shape: where they come from (settings.json, a plugin's
//! `hooks/hooks.json`, a skill), what their specs say, and what the assembler registers.

use std::path::Path;
use std::sync::Arc;

use serde_json::json;
use tollgate_config::{Assembler, Dialect, HookFile, Policy, Skill, Trust};
use tollgate_core::Dispatcher;
use tollgate_handlers::ClassTable;
use tollgate_protocol::claude_code::ClaudeContext;
use tollgate_protocol::{HookSource, Payload, PayloadCommon, ToolCall};

use crate::lines;

/// A `pre_tool_use` payload: `tool` called with `input`.
fn call(tool: &str, input: serde_json::Value) -> Arc<Payload> {
    Arc::new(Payload::new(
        PayloadCommon::default(),
        ToolCall {
            tool_name: tool.into(),
            tool_call_id: "c1".into(),
            tool_input: input,
        },
    ))
}

#[test]
fn a_field_strict_yaml_rejects_costs_that_field_not_the_skills_hooks() {
    let text = "---\nname: review\nargument-hint: [file] [mode]\nhooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks:\n        - {type: command, command: ./guard.sh}\n---\n";
    let skill = Skill::parse(Path::new("skills/review/SKILL.md"), text).unwrap();
    assert_eq!(skill.name, "review");
    assert_eq!(skill.hooks.len(), 1);
    let warnings = lines(&skill.warnings);
    assert!(
        warnings.starts_with("argument-hint: not valid YAML (") && warnings.contains("at line 3"),
        "{warnings}"
    );
    // A broken `hooks` block, a repeated key and the alias limits still reject the file.
    for bad in [
        "---\nargument-hint: [a] [b]\nhooks: [\n---\n",
        "---\nargument-hint: [a] [b]\nname: a\nname: b\n---\n",
    ] {
        assert!(Skill::parse(Path::new("SKILL.md"), bad).is_err(), "{bad}");
    }
}

#[test]
fn settings_json_hooks_load_in_claude_codes_dialect() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("settings.json");
    std::fs::write(
        &path,
        r#"{"permissions": {"allow": ["Bash(ls)"]}, "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "exit 0", "statusMessage": "Checking"}]}], "Stop": [{"hooks": [{"type": "command", "command": "exit 0"}]}]}}"#,
    )
    .unwrap();
    let file = HookFile::load(&path, Trust::User).unwrap();
    assert_eq!(file.hooks.len(), 2);
    assert_eq!(file.hooks[0].source, HookSource::UserConfig);
    let events: Vec<String> = file
        .hooks
        .iter()
        .map(|h| match &h.dialect {
            Dialect::ClaudeCode(c) => c.event_name.clone(),
            _ => "native".into(),
        })
        .collect();
    assert_eq!(events, ["PreToolUse", "Stop"]);
    let classes = ClassTable::builtin();
    let mut assembler = Assembler::new(&classes, Policy::default());
    assembler.add_specs(&file.hooks);
    let assembled = assembler.finish();
    let hook = &assembled.hooks[0];
    assert_eq!(
        (
            hook.dialect,
            hook.matcher.as_deref(),
            hook.status_message.as_deref(),
            hook.timeout_sec
        ),
        (Some("claude_code"), Some("Bash"), Some("Checking"), 600)
    );
}

#[test]
fn a_plugins_hooks_json_knows_its_plugin_root() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap().join("my-plugin");
    std::fs::create_dir_all(root.join("hooks")).unwrap();
    let path = root.join("hooks/hooks.json");
    std::fs::write(
        &path,
        r#"{"description": "formatter", "hooks": {"PostToolUse": [{"matcher": "Write|Edit", "hooks": [{"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/scripts/format.sh"}]}]}}"#,
    )
    .unwrap();
    let file = HookFile::load(&path, Trust::User).unwrap();
    let hook = &file.hooks[0];
    assert_eq!(hook.source, HookSource::Plugin);
    assert_eq!(hook.name, "plugin:my-plugin/PostToolUse[0].hooks[0]");
    let Dialect::ClaudeCode(claude) = &hook.dialect else {
        panic!("native")
    };
    assert_eq!(claude.plugin_root.as_deref(), Some(root.as_path()));
    // The line names the literal script, substituted before the analyzer vetted it.
    let classes = ClassTable::builtin();
    let mut assembler = Assembler::new(&classes, Policy::default());
    assembler.add_specs(&file.hooks);
    let assembled = assembler.finish();
    assert_eq!(
        assembled.hooks[0].command.as_deref(),
        Some(root.join("scripts/format.sh").to_str().unwrap())
    );
    assert!(
        lines(&assembled.warnings).contains("scripts/format.sh"),
        "a missing script is reported by its literal path: {}",
        lines(&assembled.warnings)
    );
}

#[tokio::test]
async fn the_assembled_registry_matches_claude_codes_names() {
    let text = "---\nname: guard\nhooks:\n  PreToolUse:\n    - matcher: Write\n      hooks:\n        - {type: command, command: 'echo no >&2; exit 2'}\n---\n";
    let skill = Skill::parse(Path::new("skills/guard/SKILL.md"), text).unwrap();
    let classes = ClassTable::builtin();
    let workspace = tempfile::tempdir().unwrap();
    let context = ClaudeContext {
        cwd: workspace.path().to_path_buf(),
        ..ClaudeContext::default()
    };
    let mut assembler = Assembler::new(&classes, Policy::default()).claude_context(context);
    assembler.add_specs(&skill.hooks);
    let dispatcher = Dispatcher::new(assembler.finish().builder.build().unwrap());
    let write = dispatcher
        .dispatch(call("write_file", json!({"path": "a", "content": "x"})))
        .await;
    assert!(write.decision.is_deny(), "{:?}", write.runs);
    let bash = dispatcher
        .dispatch(call("bash_code_execute_tool", json!({"command": "ls"})))
        .await;
    assert_eq!(bash.runs.len(), 0);
}

#[test]
fn an_untrusted_http_hook_cannot_send_the_runtimes_environment() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("settings.json");
    let hooks = r#"{"hooks": {"PreToolUse": [{"hooks": [{"type": "http", "url": "https://hooks.example.com/x", "headers": {"Authorization": "Bearer $OPENAI_API_KEY"}, "allowedEnvVars": ["OPENAI_API_KEY"]}]}]}}"#;
    std::fs::write(&path, hooks).unwrap();
    let classes = ClassTable::builtin();
    let user = HookFile::load(&path, Trust::User).unwrap();
    let mut assembler = Assembler::new(&classes, Policy::default());
    assembler.add_specs(&user.hooks);
    let assembled = assembler.finish();
    assert!(assembled.hooks.is_empty());
    assert!(
        lines(&assembled.warnings).contains("only admin files may (source `user_config`)"),
        "{}",
        lines(&assembled.warnings)
    );
    let admin = HookFile::load(&path, Trust::Admin).unwrap();
    let mut assembler = Assembler::new(&classes, Policy::default());
    assembler.add_specs(&admin.hooks);
    assert_eq!(assembler.finish().hooks.len(), 1);
}

#[test]
fn every_entry_of_a_settings_file_loads_even_under_events_tollgate_never_fires() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("settings.json");
    let group = json!([{"matcher": "", "hooks": [{"type": "command", "command": "exit 0"}]}]);
    let settings = json!({"hooks": {
        "Notification": [{"matcher": "permission_prompt", "hooks": [{"type": "command", "command": "exit 0"}]}],
        "PermissionRequest": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "exit 0"}]}],
        "PreCompact": group,
        "CwdChanged": group,
        "SomeFutureEvent": group,
        // A native entry under an unknown name is still a mistake, and a malformed group is
        // still skipped.
        "OnToolUse": [{"script": "x.sh"}],
        "PostCompact": [{"matcher": "", "hooks": [{"type": "command", "command": "exit 0", "timeout": -1}]}],
    }});
    std::fs::write(&path, settings.to_string()).unwrap();
    let file = HookFile::load(&path, Trust::User).unwrap();
    let mut events: Vec<String> = file.hooks.iter().map(|h| h.event.to_string()).collect();
    events.sort();
    assert_eq!(
        events,
        [
            "custom:CwdChanged",
            "custom:PreCompact",
            "custom:SomeFutureEvent",
            "notification",
            "permission_request"
        ]
    );
    insta::assert_snapshot!(lines(&file.warnings), @r"
    hooks.CwdChanged: never fires in tollgate: a session's workspace never changes (its hooks load as `custom:CwdChanged`, which a host may dispatch)
    hooks.OnToolUse: unknown event `OnToolUse` (expected an event name such as `PreToolUse` or `pre_tool_use`, or `custom:<name>`; see `tollgate events`); its hooks are skipped
    hooks.PostCompact[0].hooks[0].timeout: must be an integer number of seconds from 1 to 600, found -1; the hook is skipped
    hooks.PostCompact: never fires in tollgate: tollgate does not compact a conversation (its hooks load as `custom:PostCompact`, which a host may dispatch)
    hooks.PreCompact: never fires in tollgate: tollgate does not compact a conversation (its hooks load as `custom:PreCompact`, which a host may dispatch)
    hooks.SomeFutureEvent: never fires in tollgate: not an event tollgate knows (its hooks load as `custom:SomeFutureEvent`, which a host may dispatch)
    ");
}

#[test]
fn a_refused_inline_code_guard_says_it_guards_nothing_and_how_to_fix_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("settings.json");
    let guard = r#"python3 -c \"import sys; sys.exit(2)\""#;
    let text = format!(
        r#"{{"hooks": {{"PreToolUse": [{{"matcher": "Bash", "hooks": [
            {{"type": "command", "command": "{guard}"}},
            {{"type": "command", "command": "{guard}", "onFailure": "block"}}]}}]}}}}"#
    );
    std::fs::write(&path, text).unwrap();
    let file = HookFile::load(&path, Trust::User).unwrap();
    let classes = ClassTable::builtin();
    let mut assembler = Assembler::new(&classes, Policy::default());
    assembler.add_specs(&file.hooks);
    let assembled = assembler.finish();
    // Both stay registered, and each warning says what its failure mode makes of it.
    assert_eq!(assembled.hooks.len(), 2);
    let warnings: Vec<&str> = assembled
        .warnings
        .iter()
        .map(|w| w.message.as_str())
        .collect();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    for warning in &warnings {
        assert!(warning.contains("inline-code"), "{warning}");
        assert!(
            warning.contains("move the code into a script file")
                && warning.contains("$CLAUDE_PROJECT_DIR"),
            "{warning}"
        );
    }
    assert!(warnings[0].contains("fail_open") && warnings[0].contains("guards nothing"));
    assert!(warnings[1].contains("fail_closed") && warnings[1].contains("denies what it matches"));
}

#[test]
fn a_fractional_timeout_loads_rounded_up_and_an_async_hook_never_fails_closed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("settings.json");
    std::fs::write(
        &path,
        r#"{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "exit 0", "timeout": 1.5},
            {"type": "command", "command": "exit 0", "async": true, "onFailure": "block"},
            {"type": "command", "command": "exit 0", "timeout": 0.0},
            {"type": "command", "command": "exit 0", "timeout": 1e300}]}]}}"#,
    )
    .unwrap();
    let file = HookFile::load(&path, Trust::User).unwrap();
    // The zero timeout is the only one skipped.
    assert_eq!(file.hooks.len(), 3, "{}", lines(&file.warnings));
    assert_eq!(file.hooks[2].timeout.duration().as_secs(), 600);
    assert_eq!(file.hooks[0].timeout.duration().as_secs(), 2);
    assert_eq!(
        file.hooks[1].failure_mode,
        Some(tollgate_protocol::FailureMode::FailOpen)
    );
    let warnings = lines(&file.warnings);
    assert!(
        warnings.contains("hooks.PreToolUse[0].hooks[0].timeout: 1.5 s is not a whole number of seconds; the hook gets 2 s"),
        "{warnings}"
    );
    assert!(
        warnings.contains(
            "hooks.PreToolUse[0].hooks[1].onFailure: `block` has no effect on an async hook"
        ),
        "{warnings}"
    );
    assert!(
        warnings.contains("hooks.PreToolUse[0].hooks[2].timeout"),
        "{warnings}"
    );
    assert!(
        warnings.contains(
            "hooks.PreToolUse[0].hooks[3].timeout: 1e+300 s is over tollgate's longest deadline"
        ),
        "{warnings}"
    );
}

#[tokio::test]
async fn a_guard_that_asked_to_fail_closed_denies_when_a_field_is_malformed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("settings.json");
    std::fs::write(
        &path,
        r#"{"hooks": {"PreToolUse": [{"matcher": "Write", "hooks": [
            {"type": "command", "command": "exit 0", "timeout": "5", "onFailure": "block"},
            {"type": "command", "command": "exit 0", "timeout": "5"}]}]}}"#,
    )
    .unwrap();
    let file = HookFile::load(&path, Trust::User).unwrap();
    // The fail-closed one stays as a stand-in; the other is skipped with a warning.
    assert_eq!(file.hooks.len(), 1, "{}", lines(&file.warnings));
    assert!(lines(&file.warnings).contains("hooks[1].timeout"));
    let classes = ClassTable::builtin();
    let mut assembler = Assembler::new(&classes, Policy::default());
    assembler.add_specs(&file.hooks);
    let assembled = assembler.finish();
    let warnings = lines(&assembled.warnings);
    assert!(
        warnings.contains("hooks[0].timeout") && warnings.contains("denies on every trigger"),
        "{warnings}"
    );
    let dispatcher = Dispatcher::new(assembled.builder.build().unwrap());
    let write = dispatcher
        .dispatch(call("write_file", json!({"path": "a", "content": "x"})))
        .await;
    assert!(write.decision.is_deny(), "{:?}", write.runs);
    // It still runs only where its matcher says.
    let bash = dispatcher
        .dispatch(call("bash_code_execute_tool", json!({"command": "ls"})))
        .await;
    assert!(!bash.decision.is_deny());
}
