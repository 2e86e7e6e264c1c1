//! `sandbox:` in admin files widens or turns off the OS sandbox of command hooks; anywhere else
//! it only warns.

use std::path::Path;
use std::sync::Arc;

use serde_json::json;
use tollgate_config::{Assembled, Assembler, HookFile, HookSandbox, Policy, Trust};
use tollgate_core::Dispatcher;
use tollgate_handlers::ClassTable;
use tollgate_protocol::{Payload, PayloadCommon, RunStatus, ToolCall};

use crate::{lines, skill};

fn assemble(admin: &[HookFile], others: &[HookFile]) -> Assembled {
    let classes = ClassTable::builtin();
    let mut assembler = Assembler::new(&classes, Policy::from_admin(admin));
    for file in admin.iter().chain(others) {
        assembler.add_specs(&file.hooks);
    }
    assembler.finish()
}

fn file(name: &str, text: &str, trust: Trust) -> HookFile {
    HookFile::parse(Path::new(name), text, trust).unwrap()
}

#[test]
fn admin_settings_widen_the_sandbox_of_a_source() {
    let admin = file(
        "/etc/tollgate/admin.yaml",
        "sandbox:\n  hidden: [secrets.env]\n  sources:\n    user_config: {writable: [/var/log/hooks], network: true, env: [AUDIT_TOKEN]}\n",
        Trust::Admin,
    );
    assert!(admin.warnings.is_empty(), "{:?}", admin.warnings);
    let user = file(
        "hooks.yaml",
        "hooks:\n  PreToolUse:\n    - script: 'true'\n",
        Trust::User,
    );
    let assembled = assemble(&[admin], &[user]);
    assert_eq!(
        assembled.hooks[0].sandbox,
        Some(json!({"network": "proxy", "writable": ["/var/log/hooks"]}))
    );
}

#[test]
fn an_admin_hook_entry_turns_its_own_sandbox_off() {
    let admin = file(
        "admin.yaml",
        "hooks:\n  PreToolUse:\n    - script: 'true'\n      sandbox: off\n    - script: 'true'\n",
        Trust::Admin,
    );
    assert_eq!(admin.hooks[0].sandbox, Some(HookSandbox::Off));
    let assembled = assemble(&[admin], &[]);
    assert_eq!(assembled.hooks[0].sandbox, Some(json!("off")));
    assert_eq!(
        assembled.hooks[1].sandbox,
        Some(json!({"network": "host", "writable": []})),
        "trusted hooks keep the host's network by default"
    );
}

#[test]
fn sandbox_keys_outside_admin_files_only_warn() {
    let user = file(
        "user.yaml",
        "sandbox: off\nhooks:\n  PreToolUse:\n    - script: 'true'\n      sandbox: off\n",
        Trust::User,
    );
    insta::assert_snapshot!(lines(&user.warnings), @r"
    hooks.PreToolUse[0].sandbox: `sandbox` is honoured in admin hook files only (pass the file with --admin); ignored, the hook runs in the default sandbox
    sandbox: `sandbox` is honoured in admin hook files only (pass the file with --admin); ignored
    ");
    let s = skill("hooks:\n  PreToolUse:\n    - script: 'true'\n      sandbox: {writable: [/]}\n");
    assert_eq!(s.hooks.len(), 1, "the hook still loads");
    assert_eq!(s.hooks[0].sandbox, None);
    assert_eq!(s.warnings.len(), 1, "{:?}", s.warnings);
    let assembled = assemble(&[], &[user]);
    assert_eq!(
        assembled.hooks[0].sandbox,
        Some(json!({"network": "off", "writable": []}))
    );
}

#[test]
fn a_top_level_off_in_an_admin_file_turns_off_every_command_hook() {
    let admin = file("admin.yaml", "sandbox: off\n", Trust::Admin);
    let user = file(
        "hooks.yaml",
        "hooks:\n  PreToolUse:\n    - script: 'true'\n",
        Trust::User,
    );
    assert_eq!(
        assemble(&[admin], &[user]).hooks[0].sandbox,
        Some(json!("off"))
    );
}

fn tool_call() -> Arc<Payload> {
    Arc::new(Payload::new(
        PayloadCommon::default(),
        ToolCall {
            tool_name: "bash_code_execute_tool".into(),
            tool_call_id: "call_1".into(),
            tool_input: json!({"command": "rm -r build"}),
        },
    ))
}

#[tokio::test]
async fn the_classic_audit_hook_works_once_its_directory_is_writable() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let log = dir.path().join("audit.log");
    let hook = format!(
        "hooks:\n  PreToolUse:\n    - script: echo \"$ARGUMENTS\" >> {}\n",
        log.display()
    );
    let granted = format!(
        "sandbox:\n  sources:\n    user_config: {{writable: [{}]}}\n",
        dir.path().display()
    );
    let user = file("hooks.yaml", &hook, Trust::User);
    let denied = assemble(&[], std::slice::from_ref(&user))
        .builder
        .build()
        .unwrap();
    let outcome = Dispatcher::new(denied).dispatch(tool_call()).await;
    assert_eq!(
        outcome.runs[0].status,
        RunStatus::Errored,
        "{:?}",
        outcome.runs
    );
    assert!(
        !log.exists(),
        "the sandbox let the hook write an ungranted path"
    );
    let admin = file("admin.yaml", &granted, Trust::Admin);
    let allowed = assemble(&[admin], &[user]).builder.build().unwrap();
    let outcome = Dispatcher::new(allowed).dispatch(tool_call()).await;
    assert_eq!(
        outcome.runs[0].status,
        RunStatus::Completed,
        "{:?}",
        outcome.runs
    );
    assert!(
        std::fs::read_to_string(&log)
            .unwrap()
            .contains("rm -r build")
    );
}

#[test]
fn a_skill_cannot_open_its_own_sandbox() {
    let s = skill(
        "sandbox: off\nnetwork:\n  allow_cidrs: [0.0.0.0/0]\nhooks:\n  PreToolUse:\n    - script: 'true'\n",
    );
    assert_eq!(s.hooks.len(), 1);
    insta::assert_snapshot!(lines(&s.warnings), @r"
    network: `network` is honoured in admin hook files only; ignored in a SKILL.md
    sandbox: `sandbox` is honoured in admin hook files only; ignored in a SKILL.md
    ");
}
