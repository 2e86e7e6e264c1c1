use std::path::Path;

use tollgate_config::{Assembler, HookFile, Policy, SpecKind, Trust};
use tollgate_handlers::ClassTable;
use tollgate_protocol::{FailureMode, HookSource};

use crate::lines;

/// The hook file example of docs/config.md, without its `sandbox:` part.
const HOOK_FILE_EXAMPLE: &str = r#"
network:
  allow_cidrs: ["127.0.0.0/8"]
standalone: true
hooks:
  PreToolUse:
    - script: './hooks/guard.sh'
      tools: ["bash_*"]
      failure_mode: fail_closed
      timeout: 5
      priority: 10
    - url: https://hooks.example.com/pre
      secret: ${HOOK_SECRET}
    - llm: "Deny any SQL statement that modifies data outside the staging schema"
      depth: quick
      tools: "sql_*"
    - class: ReadOnlyGuard
      params: {readonly_orgs: ["org-7"]}
  SessionEnd:
    - url: https://hooks.example.com/end
      fire_and_forget: true
"#;

#[test]
fn the_documented_hook_file_parses_as_admin() {
    let file = HookFile::parse(Path::new("admin.yaml"), HOOK_FILE_EXAMPLE, Trust::Admin).unwrap();
    assert!(file.warnings.is_empty(), "{:?}", file.warnings);
    assert_eq!(file.hooks.len(), 5);
    assert!(file.standalone);
    assert_eq!(file.allow_cidrs, ["127.0.0.0/8".parse().unwrap()]);
    assert!(
        file.hooks
            .iter()
            .all(|h| h.source == HookSource::AdminConfig)
    );
    assert!(
        matches!(&file.hooks[3].kind, SpecKind::Class { class, .. } if class == "ReadOnlyGuard")
    );
    assert_eq!(file.hooks[0].name, "admin_config:admin.yaml/PreToolUse[0]");
}

#[test]
fn a_user_file_cannot_set_network_or_standalone() {
    let file = HookFile::parse(Path::new("user.yaml"), HOOK_FILE_EXAMPLE, Trust::User).unwrap();
    assert!(file.allow_cidrs.is_empty() && !file.standalone);
    assert!(
        file.hooks
            .iter()
            .all(|h| h.source == HookSource::UserConfig)
    );
    insta::assert_snapshot!(lines(&file.warnings), @r"
    network: `network` is honoured in admin hook files only (pass the file with --admin); ignored
    standalone: `standalone` is honoured in admin hook files only (pass the file with --admin); ignored
    ");
}

#[test]
fn admin_only_llm_keys_skip_user_hooks() {
    let text = "hooks:\n  PreToolUse:\n    - llm: judge\n      model: small\n";
    let user = HookFile::parse(Path::new("u.yaml"), text, Trust::User).unwrap();
    assert!(user.hooks.is_empty());
    assert!(lines(&user.warnings).starts_with("hooks.PreToolUse[0].model: "));
    let admin = HookFile::parse(Path::new("a.yaml"), text, Trust::Admin).unwrap();
    assert_eq!(admin.hooks.len(), 1);
}

#[test]
fn standalone_makes_external_defaults_fail_closed() {
    let admin = HookFile::parse(Path::new("a.yaml"), "standalone: true\n", Trust::Admin).unwrap();
    let user = HookFile::parse(
        Path::new("u.yaml"),
        "hooks:\n  PreToolUse:\n    - script: ./a.sh\n    - script: ./b.sh\n      failure_mode: fail_open\n",
        Trust::User,
    )
    .unwrap();
    let policy = Policy::from_admin(&[admin, user.clone()]);
    assert!(policy.standalone);
    assert_eq!(
        user.hooks[0].resolved_failure_mode(true),
        FailureMode::FailClosed
    );
    assert_eq!(
        user.hooks[1].resolved_failure_mode(true),
        FailureMode::FailOpen
    );
    let classes = ClassTable::builtin();
    let mut assembler = Assembler::new(&classes, policy);
    assembler.add_specs(&user.hooks);
    let modes: Vec<_> = assembler
        .finish()
        .hooks
        .iter()
        .map(|h| h.failure_mode)
        .collect();
    assert_eq!(modes, ["fail_closed", "fail_open"]);
}

#[test]
fn a_user_file_is_never_admin_by_content() {
    let text = "admin: true\nhooks:\n  PreToolUse:\n    - script: ./a.sh\n";
    let file = HookFile::parse(Path::new("u.yaml"), text, Trust::User).unwrap();
    assert_eq!(file.hooks[0].source, HookSource::UserConfig);
    assert_eq!(lines(&file.warnings), "admin: unknown key `admin`; ignored");
}

#[test]
fn an_unknown_class_in_a_file_is_a_warning() {
    let text = "hooks:\n  PreToolUse:\n    - class: NoSuchGuard\n    - script: ./a.sh\n";
    let file = HookFile::parse(Path::new("u.yaml"), text, Trust::User).unwrap();
    let classes = ClassTable::builtin();
    let mut assembler = Assembler::new(&classes, Policy::default());
    assembler.add_specs(&file.hooks);
    let out = assembler.finish();
    assert_eq!(out.hooks.len(), 1);
    assert!(lines(&out.warnings).contains("NoSuchGuard"));
}

#[test]
fn llm_hooks_take_their_endpoint_from_the_given_env() {
    let text = "hooks:\n  PreToolUse:\n    - llm: Deny deletes\n      depth: thorough\n";
    let file = HookFile::parse(Path::new("u.yaml"), text, Trust::User).unwrap();
    let classes = ClassTable::builtin();
    let mut none = Assembler::new(&classes, Policy::default()).llm_env(|_| None);
    none.add_specs(&file.hooks);
    let out = none.finish();
    assert!(out.hooks.is_empty());
    assert!(
        lines(&out.warnings).contains("no model"),
        "{:?}",
        out.warnings
    );
    let mut some = Assembler::new(&classes, Policy::default())
        .llm_env(|n| (n == "TOLLGATE_LLM_MODEL").then(|| "m".to_owned()));
    some.add_specs(&file.hooks);
    assert_eq!(some.finish().hooks[0].kind, "llm");
}

fn assemble(policy: Policy, files: &[&HookFile]) -> tollgate_config::Assembled {
    let classes = ClassTable::builtin();
    let mut assembler = Assembler::new(&classes, policy);
    for file in files {
        assembler.add_specs(&file.hooks);
    }
    assembler.finish()
}

async fn decide(assembled: tollgate_config::Assembled) -> tollgate_core::DispatchOutcome {
    let dispatcher = tollgate_core::Dispatcher::new(assembled.builder.build().unwrap());
    let call = tollgate_protocol::ToolCall {
        tool_name: "bash_code_execute_tool".into(),
        tool_call_id: "c".into(),
        tool_input: serde_json::json!({"command": "ls"}),
    };
    let payload = tollgate_protocol::Payload::new(Default::default(), call);
    dispatcher.dispatch(std::sync::Arc::new(payload)).await
}

#[tokio::test]
async fn regression_an_unbuildable_fail_closed_hook_denies_instead_of_disappearing() {
    let text = "hooks:\n  PreToolUse:\n    - url: https://hooks.example.com/pre\n      secret: ${TOLLGATE_TEST_SURELY_UNSET_SECRET}\n      failure_mode: fail_closed\n";
    let file = HookFile::parse(Path::new("a.yaml"), text, Trust::Admin).unwrap();
    let assembled = assemble(Policy::default(), &[&file]);
    let warnings = lines(&assembled.warnings);
    assert!(
        warnings.contains("TOLLGATE_TEST_SURELY_UNSET_SECRET"),
        "{warnings}"
    );
    assert!(warnings.contains("denies on every trigger"), "{warnings}");
    let outcome = decide(assembled).await;
    assert!(outcome.is_denied(), "{:?}", outcome.decision);
    assert!(
        outcome
            .decision
            .reason()
            .unwrap()
            .contains("could not be built")
    );

    let open = text.replace("fail_closed", "fail_open");
    let file = HookFile::parse(Path::new("a.yaml"), &open, Trust::Admin).unwrap();
    let assembled = assemble(Policy::default(), &[&file]);
    assert!(
        assembled.hooks.is_empty(),
        "a broken fail_open hook is skipped"
    );
}

#[test]
fn regression_the_admin_allow_list_does_not_open_networks_for_user_hooks() {
    let admin_text = "network:\n  allow_cidrs: [\"127.0.0.0/8\"]\nhooks:\n  PreToolUse:\n    - url: http://127.0.0.1:9/admin\n";
    let admin = HookFile::parse(Path::new("admin.yaml"), admin_text, Trust::Admin).unwrap();
    let user_text = "hooks:\n  PreToolUse:\n    - url: http://127.0.0.1:9/redis\n";
    let user = HookFile::parse(Path::new("user.yaml"), user_text, Trust::User).unwrap();
    let policy = Policy::from_admin(std::slice::from_ref(&admin));
    let assembled = assemble(policy, &[&admin, &user]);
    let sources: Vec<_> = assembled.hooks.iter().map(|h| h.source).collect();
    assert_eq!(
        sources,
        ["admin_config"],
        "only the admin hook may reach loopback"
    );
    assert!(
        lines(&assembled.warnings).contains("user.yaml")
            || lines(&assembled.warnings).contains("refused")
    );
}

#[test]
fn regression_a_value_json_cannot_hold_costs_only_its_entry() {
    let text = "hooks:\n  PreToolUse:\n    - script: ./a.sh\n      priority: .inf\n    - script: ./b.sh\n    - script: ./c.sh\n      null: 1\n";
    let file = HookFile::parse(Path::new("u.yaml"), text, Trust::User).unwrap();
    let lines_: Vec<_> = file
        .hooks
        .iter()
        .map(|h| match &h.kind {
            SpecKind::Command { line } => line.clone(),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(lines_, ["./b.sh"], "{:?}", file.warnings);
    let warnings = lines(&file.warnings);
    assert!(
        warnings.contains("priority") && warnings.contains("null"),
        "{warnings}"
    );
}
