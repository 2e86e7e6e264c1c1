//! Command hooks declared in a config folder: relative paths run from that folder wherever
//! tollgate runs, and a program that is not there fails the hook instead of letting the line
//! allow everything.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::Arc;

use serde_json::json;
use tollgate_core::{DispatchOutcome, Dispatcher, HookOptions, RegistryBuilder};
use tollgate_handlers::CommandHook;
use tollgate_protocol::{
    Decision, Event, FailureMode, HookSource, Payload, PayloadCommon, RunStatus, ToolCall,
};

fn payload() -> Arc<Payload> {
    Arc::new(Payload::new(
        PayloadCommon::default(),
        ToolCall {
            tool_name: "bash_code_execute_tool".into(),
            tool_call_id: "call_1".into(),
            tool_input: json!({"command": "ls"}),
        },
    ))
}

fn dispatcher(hook: CommandHook, mode: FailureMode) -> Dispatcher {
    let mut registry = RegistryBuilder::new();
    registry.register_with(
        Event::PreToolUse,
        hook,
        HookOptions::default().failure_mode(mode),
    );
    Dispatcher::new(registry.build().unwrap())
}

async fn dispatch(hook: CommandHook, mode: FailureMode) -> DispatchOutcome {
    dispatcher(hook, mode).dispatch(payload()).await
}

fn script(dir: &Path, name: &str, text: &str) {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A config folder under `/tmp`, which the sandbox replaces with its own: the hook must still
/// read its scripts there.
fn config_folder() -> tempfile::TempDir {
    let dir = tempfile::Builder::new().tempdir_in("/tmp").unwrap();
    let deny = "#!/bin/sh\necho \"denied from $HOOK_CONFIG_DIR\" >&2\nexit 2\n";
    script(dir.path(), "hooks/guard.sh", deny);
    dir
}

#[tokio::test]
async fn relative_scripts_run_from_the_declaring_folder_not_the_current_directory() {
    let dir = config_folder();
    let folder = dir.path().display().to_string();
    for line in [
        "./hooks/guard.sh",
        "hooks/guard.sh --flag",
        "bash hooks/guard.sh",
        "sh ./hooks/guard.sh && exit 0",
    ] {
        let hook = CommandHook::declared_in("guard", line, HookSource::Skill, dir.path());
        assert!(
            hook.line().contains(&format!("{folder}/hooks/guard.sh")),
            "{}",
            hook.line()
        );
        assert_eq!(hook.command(), line);
        assert!(
            hook.missing_programs().is_empty(),
            "{:?}",
            hook.missing_programs()
        );
        let outcome = dispatch(hook, FailureMode::FailClosed).await;
        assert!(outcome.is_denied(), "{line}: {:?}", outcome.runs[0]);
        assert_eq!(
            outcome.runs[0].status,
            RunStatus::Completed,
            "{line}: {:?}",
            outcome.runs[0].error
        );
        assert_eq!(
            outcome.decision.reason(),
            Some(format!("denied from {folder}").as_str()),
            "{line}"
        );
    }
}

#[tokio::test]
async fn a_missing_script_fails_and_a_fail_closed_guard_denies() {
    let dir = config_folder();
    let hook = CommandHook::declared_in("guard", "./hooks/gone.sh", HookSource::Skill, dir.path());
    let missing = hook.missing_programs();
    assert_eq!(missing.len(), 1);
    assert!(
        missing[0].contains("hooks/gone.sh` not found"),
        "{missing:?}"
    );
    let outcome = dispatch(hook, FailureMode::FailClosed).await;
    assert_eq!(outcome.runs[0].status, RunStatus::Errored);
    assert!(outcome.is_denied());
    let error = outcome.runs[0].error.as_deref().unwrap_or_default();
    assert!(error.contains("hooks/gone.sh` not found"), "{error}");
}

#[tokio::test]
async fn regression_a_missing_program_let_a_fail_closed_guard_allow() {
    // bash says `command not found` (127) and `|| exit 0` turns that into an allow.
    let line = "definitely-not-installed-xyz -e .x <<<\"$HOOK_PAYLOAD\" && exit 2 || exit 0";
    let hook = CommandHook::new("guard", line, HookSource::Skill);
    let missing = hook.missing_programs();
    assert_eq!(missing.len(), 1);
    assert!(
        missing[0]
            .starts_with("program `definitely-not-installed-xyz` not found on the hook's PATH ("),
        "{missing:?}"
    );
    let outcome = dispatch(hook, FailureMode::FailClosed).await;
    assert_eq!(outcome.runs[0].status, RunStatus::Errored);
    assert!(outcome.is_denied());

    let open = CommandHook::new("guard", line, HookSource::Skill);
    let outcome = dispatch(open, FailureMode::FailOpen).await;
    assert_eq!(outcome.runs[0].status, RunStatus::Errored, "fails, loudly");
    assert_eq!(outcome.decision, Decision::Allow);
}

#[tokio::test]
async fn a_script_that_appears_later_is_found_on_the_next_run() {
    let dir = tempfile::Builder::new().tempdir_in("/tmp").unwrap();
    let hook = CommandHook::declared_in("late", "./late.sh", HookSource::Skill, dir.path());
    let dispatcher = dispatcher(hook, FailureMode::FailClosed);
    let first = dispatcher.dispatch(payload()).await;
    assert_eq!(first.runs[0].status, RunStatus::Errored);
    script(dir.path(), "late.sh", "#!/bin/sh\nexit 0\n");
    let second = dispatcher.dispatch(payload()).await;
    assert_eq!(
        second.runs[0].status,
        RunStatus::Completed,
        "{:?}",
        second.runs[0].error
    );
    assert_eq!(second.decision, Decision::Allow);
}

#[tokio::test]
async fn the_config_folder_is_readable_but_not_writable_in_the_sandbox() {
    let dir = config_folder();
    let line = "touch \"$HOOK_CONFIG_DIR/written\" 2>/dev/null || test -x \"$HOOK_CONFIG_DIR\"/hooks/guard.sh";
    let hook = CommandHook::declared_in("probe", line, HookSource::Skill, dir.path());
    let outcome = dispatch(hook, FailureMode::FailClosed).await;
    assert_eq!(
        outcome.runs[0].status,
        RunStatus::Completed,
        "{:?}",
        outcome.runs[0].error
    );
    assert!(!dir.path().join("written").exists());
}
