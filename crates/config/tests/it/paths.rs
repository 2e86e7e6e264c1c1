//! Relative paths in hook entries resolve against the folder of the declaring file, and
//! missing programs are load warnings naming the file, the entry and the program.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::Arc;

use tollgate_config::{AgentConfig, Assembled, Assembler, HookFile, Policy, Trust};
use tollgate_core::{DispatchOutcome, Dispatcher};
use tollgate_handlers::ClassTable;
use tollgate_protocol::{Payload, RunStatus, ToolCall};

use crate::lines;

fn assemble(file: &HookFile) -> Assembled {
    let classes = ClassTable::builtin();
    let mut assembler = Assembler::new(&classes, Policy::default());
    assembler.add_specs(&file.hooks);
    assembler.finish()
}

async fn decide(assembled: Assembled) -> DispatchOutcome {
    let dispatcher = Dispatcher::new(assembled.builder.build().unwrap());
    let call = ToolCall {
        tool_name: "bash_code_execute_tool".into(),
        tool_call_id: "c".into(),
        tool_input: serde_json::json!({"command": "ls"}),
    };
    dispatcher
        .dispatch(Arc::new(Payload::new(Default::default(), call)))
        .await
}

/// A folder holding `hooks.yaml` (with `text`) and an executable `hooks/guard.sh` that denies.
fn folder(text: &str) -> (tempfile::TempDir, HookFile) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("hooks")).unwrap();
    let guard = dir.path().join("hooks/guard.sh");
    std::fs::write(&guard, "#!/bin/sh\necho guarded >&2\nexit 2\n").unwrap();
    std::fs::set_permissions(&guard, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = dir.path().join("hooks.yaml");
    std::fs::write(&path, text).unwrap();
    let file = HookFile::load(&path, Trust::User).unwrap();
    (dir, file)
}

#[tokio::test]
async fn a_relative_script_runs_from_the_hook_files_folder() {
    let text =
        "hooks:\n  PreToolUse:\n    - script: ./hooks/guard.sh\n      failure_mode: fail_closed\n";
    let (dir, file) = folder(text);
    assert_eq!(file.hooks[0].dir, dir.path());
    let assembled = assemble(&file);
    assert!(assembled.warnings.is_empty(), "{:?}", assembled.warnings);
    let shown = assembled.hooks[0].command.clone().unwrap();
    assert_eq!(shown, format!("{}/hooks/guard.sh", dir.path().display()));
    let outcome = decide(assembled).await;
    assert_eq!(outcome.decision.reason(), Some("guarded"));
}

#[test]
fn a_file_given_by_a_relative_path_has_an_absolute_folder() {
    let text = "hooks:\n  PreToolUse:\n    - script: ./a.sh\n";
    let file = HookFile::parse(Path::new("conf/hooks.yaml"), text, Trust::User).unwrap();
    let cwd = std::env::current_dir().unwrap();
    assert_eq!(file.hooks[0].dir, cwd.join("conf"));
}

#[tokio::test]
async fn a_missing_program_is_a_warning_and_a_fail_closed_guard_denies() {
    let text = "hooks:\n  PreToolUse:\n    - script: definitely-not-installed-xyz . && exit 2 || exit 0\n      failure_mode: fail_closed\n    - script: ./hooks/gone.sh\n";
    let (dir, file) = folder(text);
    let assembled = assemble(&file);
    assert_eq!(assembled.hooks.len(), 2, "both stay registered");
    let warnings = &assembled.warnings;
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert_eq!(warnings[0].file, file.path);
    assert_eq!(warnings[0].entry, "hooks.PreToolUse[0]");
    assert!(
        warnings[0]
            .message
            .starts_with("program `definitely-not-installed-xyz` not found on the hook's PATH ("),
        "{}",
        warnings[0].message
    );
    assert!(
        warnings[0].message.contains("fail_closed"),
        "{}",
        lines(warnings)
    );
    assert_eq!(warnings[1].entry, "hooks.PreToolUse[1]");
    let gone = format!("script `{}/hooks/gone.sh` not found", dir.path().display());
    assert!(
        warnings[1].message.starts_with(&gone),
        "{}",
        lines(warnings)
    );
    assert!(
        warnings[1].message.contains("fail_open"),
        "{}",
        lines(warnings)
    );

    let outcome = decide(assembled).await;
    assert!(outcome.is_denied(), "{:?}", outcome.runs);
    assert_eq!(outcome.runs[0].status, RunStatus::Errored);
    let error = outcome.runs[0].error.clone().unwrap_or_default();
    assert!(error.contains("definitely-not-installed-xyz"), "{error}");
}

#[test]
fn class_path_params_resolve_against_the_declaring_file() {
    let text =
        "hooks:\n  PreToolUse:\n    - class: AuditLogHook\n      params: {path: audit.jsonl}\n";
    let (dir, file) = folder(text);
    let assembled = assemble(&file);
    assert!(assembled.warnings.is_empty(), "{:?}", assembled.warnings);
    assert!(dir.path().join("audit.jsonl").is_file());

    let agent_dir = tempfile::tempdir().unwrap();
    let agent_path = agent_dir.path().join("agent.json");
    let json = r#"{"model_config_json": {"hooks": {"class_hooks": [{"class": "AuditLogHook", "params": {"path": "logs.jsonl"}}]}}}"#;
    std::fs::write(&agent_path, json).unwrap();
    let agent = AgentConfig::load(&agent_path).unwrap();
    let classes = ClassTable::builtin();
    let mut assembler = Assembler::new(&classes, Policy::default());
    assembler.add_agent(&agent).unwrap();
    assert!(agent_dir.path().join("logs.jsonl").is_file());
}
