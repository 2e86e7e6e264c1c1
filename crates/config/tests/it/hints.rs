//! "Did you mean …?" on unknown keys, values and events, wherever they are reported.

use std::path::Path;

use tollgate_config::{AgentConfig, HookFile, Trust};

use crate::{lines, skill};

fn user_file(text: &str) -> HookFile {
    HookFile::parse(Path::new("hooks.yaml"), text, Trust::User).unwrap()
}

fn admin_file(text: &str) -> HookFile {
    HookFile::parse(Path::new("admin.yaml"), text, Trust::Admin).unwrap()
}

#[test]
fn mistyped_entry_keys_name_the_key_meant() {
    let entry = |key: &str, value: &str| {
        let s = skill(&format!(
            "hooks:\n  PreToolUse:\n    - script: ./guard.sh\n      {key}: {value}\n"
        ));
        assert!(s.hooks.is_empty(), "{key}: the hook must still be skipped");
        lines(&s.warnings)
    };
    insta::assert_snapshot!(
        [
            entry("tool", "bash_*"),
            entry("failure-mode", "fail_closed"),
            entry("failureMode", "fail_closed"),
            entry("fail-closed", "true"),
            entry("fire-and-forget", "true"),
            entry("timeout_seconds", "5"),
            entry("prio", "1"),
            entry("matchers", "x"),
        ]
        .join("\n"),
        @r"
    hooks.PreToolUse[0].tool: unknown key `tool` (did you mean `tools`?); the hook is skipped
    hooks.PreToolUse[0].failure-mode: unknown key `failure-mode` (did you mean `failure_mode`?); the hook is skipped
    hooks.PreToolUse[0].failureMode: unknown key `failureMode` (did you mean `failure_mode`?); the hook is skipped
    hooks.PreToolUse[0].fail-closed: unknown key `fail-closed` (did you mean `failure_mode: fail_closed`?); the hook is skipped
    hooks.PreToolUse[0].fire-and-forget: unknown key `fire-and-forget` (did you mean `fire_and_forget`?); the hook is skipped
    hooks.PreToolUse[0].timeout_seconds: unknown key `timeout_seconds` (did you mean `timeout`?); the hook is skipped
    hooks.PreToolUse[0].prio: unknown key `prio` (did you mean `priority`?); the hook is skipped
    hooks.PreToolUse[0].matchers: unknown key `matchers`; the hook is skipped
    "
    );
}

#[test]
fn mistyped_values_name_the_value_meant() {
    let s = skill(
        "hooks:\n  PreToolUse:\n    - script: ./guard.sh\n      failure_mode: fail-closed\n    - llm: judge\n      depth: Thorough\n    - script: ./x.sh\n      failure_mode: sometimes\n",
    );
    assert!(s.hooks.is_empty());
    insta::assert_snapshot!(lines(&s.warnings), @r"
    hooks.PreToolUse[0].failure_mode: unknown failure mode `fail-closed` (did you mean `fail_closed`?); the hook is skipped
    hooks.PreToolUse[1].depth: unknown llm depth `Thorough` (did you mean `thorough`?); the hook is skipped
    hooks.PreToolUse[2].failure_mode: unknown failure mode `sometimes` (expected `fail_open` or `fail_closed`); the hook is skipped
    ");
}

#[test]
fn a_missing_kind_names_a_mistyped_kind_key() {
    let s = skill("hooks:\n  PreToolUse:\n    - scrpt: ./guard.sh\n");
    insta::assert_snapshot!(lines(&s.warnings), @r"
    hooks.PreToolUse[0]: no hook kind: expected one of `script`, `command`, `url`, `llm`, `class` (`scrpt`: did you mean `script`?); skipped
    ");
}

#[test]
fn mistyped_event_names_name_the_event_meant() {
    let s = skill(
        "hooks:\n  PreToolUsee:\n    - script: a\n  pre-tool-use:\n    - script: b\n  OnToolUse:\n    - script: c\n",
    );
    insta::assert_snapshot!(lines(&s.warnings), @r"
    hooks.OnToolUse: unknown event `OnToolUse` (expected an event name such as `PreToolUse` or `pre_tool_use`, or `custom:<name>`; see `tollgate events`); its hooks are skipped
    hooks.PreToolUsee: unknown event `PreToolUsee` (did you mean `PreToolUse`? see `tollgate events`); its hooks are skipped
    hooks.pre-tool-use: unknown event `pre-tool-use` (did you mean `pre_tool_use`? see `tollgate events`); its hooks are skipped
    ");
}

#[test]
fn claude_code_groups_name_the_key_meant() {
    let s = skill(
        "hooks:\n  PreToolUse:\n    - matcher: bash_code_execute_tool\n      hook: []\n    - matcher: '*'\n      hooks:\n        - type: command\n          comand: ./x.sh\n",
    );
    insta::assert_snapshot!(lines(&s.warnings), @r"
    hooks.PreToolUse[0].hooks: must be a list of hooks; skipped
    hooks.PreToolUse[1].hooks[0].command: missing; the hook is skipped
    hooks.PreToolUse[0].hook: unknown key `hook` (did you mean `hooks`?); ignored, as Claude Code ignores it
    hooks.PreToolUse[1].hooks[0].comand: unknown key `comand` (did you mean `command`?); ignored, as Claude Code ignores it
    ");
}

#[test]
fn a_skill_with_hook_instead_of_hooks_is_told() {
    let s = skill("hook:\n  PreToolUse:\n    - script: ./guard.sh\n");
    assert!(s.hooks.is_empty());
    insta::assert_snapshot!(lines(&s.warnings), @r"
    hook: `hook` is not read by tollgate (did you mean `hooks`?); no hooks are loaded from it
    ");
    // Keys far from `hooks` are a skill's own business.
    assert!(skill("description: x\nlicense: MIT\n").warnings.is_empty());
}

#[test]
fn hook_file_top_level_network_and_sandbox_keys_name_the_key_meant() {
    let user = user_file("hooks: {}\nhook: {}\n");
    insta::assert_snapshot!(lines(&user.warnings), @r"
    hook: unknown key `hook` (did you mean `hooks`?); ignored
    ");
    let admin = admin_file(
        "network:\n  allow_cidr: [10.0.0.0/8]\nsandbox:\n  source: {}\n  sources:\n    user-config: {}\n    user_config: {writeable: [/srv]}\n",
    );
    insta::assert_snapshot!(lines(&admin.warnings), @r"
    network.allow_cidr: unknown key `allow_cidr` (did you mean `allow_cidrs`?); ignored
    sandbox.source: unknown key `source` (did you mean `sources`?); ignored
    sandbox.sources.user-config: unknown hook source `user-config` (did you mean `user_config`?); ignored
    sandbox.sources.user_config.writeable: unknown key `writeable` (did you mean `writable`?); ignored
    ");
    let entry =
        admin_file("hooks:\n  PreToolUse:\n    - script: ./x.sh\n      sandbox: {netwrk: true}\n");
    insta::assert_snapshot!(lines(&entry.warnings), @"hooks.PreToolUse[0].sandbox.netwrk: unknown key `netwrk` (did you mean `network`?); ignored");
}

#[test]
fn a_file_that_is_not_a_hook_file_hints_at_a_typo_without_showing_its_keys() {
    let err = HookFile::parse(Path::new("h.yaml"), "hoooks:\n  CANARY: 1\n", Trust::User)
        .unwrap_err()
        .to_string();
    assert!(err.contains("not a hook file"), "{err}");
    assert!(err.contains("one of them is close to `hooks`"), "{err}");
    assert!(!err.contains("hoooks"), "{err}");
    let err = HookFile::parse(Path::new("h.yaml"), "token: CANARY\n", Trust::User)
        .unwrap_err()
        .to_string();
    assert!(!err.contains("close to"), "{err}");
}

#[test]
fn agent_config_keys_name_the_key_meant() {
    let parse = |text: &str| {
        AgentConfig::parse(Path::new("agent.json"), text)
            .unwrap_err()
            .to_string()
    };
    insta::assert_snapshot!(
        [
            parse(r#"{"model_config_json": {"hooks": {"confirmation_tool": ["x"]}}}"#),
            parse(r#"{"model_config_json": {"hooks": {"class_hooks": [{"class": "A", "param": {}}]}}}"#),
        ]
        .join("\n"),
        @r"
    agent.json: model_config_json.hooks.confirmation_tool: unknown key `confirmation_tool` (did you mean `confirmation_tools`?)
    agent.json: model_config_json.hooks.class_hooks[0].param: unknown key `param` (did you mean `params`?)
    "
    );
}
