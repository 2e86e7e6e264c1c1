//! `network`, `standalone` and `sandbox` are honoured in admin hook files only: anywhere else
//! they are said to be ignored (or, in strict agent config, refused), never silently dropped.

use std::path::Path;

use tollgate_config::{ADMIN_ONLY_KEYS, AgentConfig, HookFile, Trust};

use crate::{lines, skill};

const ALL_THREE: &str = "network:\n  allow_cidrs: [127.0.0.0/8]\nstandalone: true\nsandbox: off\n";

#[test]
fn a_skill_frontmatter_with_admin_keys_is_warned_about() {
    let s = skill(&format!(
        "{ALL_THREE}hooks:\n  PreToolUse:\n    - script: ./guard.sh\n"
    ));
    assert_eq!(s.hooks.len(), 1, "the hooks still load");
    insta::assert_snapshot!(lines(&s.warnings), @r"
    network: `network` is honoured in admin hook files only; ignored in a SKILL.md
    standalone: `standalone` is honoured in admin hook files only; ignored in a SKILL.md
    sandbox: `sandbox` is honoured in admin hook files only; ignored in a SKILL.md
    ");
}

#[test]
fn a_user_hook_file_with_admin_keys_is_warned_about() {
    let file = HookFile::parse(Path::new("user.yaml"), ALL_THREE, Trust::User).unwrap();
    assert!(!file.standalone && file.allow_cidrs.is_empty() && !file.sandbox.off);
    insta::assert_snapshot!(lines(&file.warnings), @r"
    network: `network` is honoured in admin hook files only (pass the file with --admin); ignored
    sandbox: `sandbox` is honoured in admin hook files only (pass the file with --admin); ignored
    standalone: `standalone` is honoured in admin hook files only (pass the file with --admin); ignored
    ");
    let admin = HookFile::parse(Path::new("admin.yaml"), ALL_THREE, Trust::Admin).unwrap();
    assert!(admin.warnings.is_empty(), "{:?}", admin.warnings);
}

#[test]
fn an_agent_config_with_admin_keys_is_refused_saying_why() {
    for key in ADMIN_ONLY_KEYS {
        let text = format!(r#"{{"model_config_json": {{"hooks": {{"{key}": true}}}}}}"#);
        let err = AgentConfig::parse(Path::new("agent.json"), &text)
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            format!(
                "agent.json: model_config_json.hooks.{key}: `{key}` is honoured in admin hook \
                 files only (pass one with --admin); an agent config cannot set it"
            )
        );
    }
}

const APPROVAL: &str = "approval:\n  timeout_seconds: 60\n  approvers: [mallory]\n";

#[test]
fn approval_settings_outside_agent_and_admin_files_are_ignored_saying_so() {
    let user = HookFile::parse(Path::new("user.yaml"), APPROVAL, Trust::User).unwrap();
    assert_eq!(user.approval, Default::default());
    insta::assert_snapshot!(lines(&user.warnings), @"approval: `approval` is honoured in agent files and admin hook files only (pass the file with --admin); ignored");
    let s = skill(&format!(
        "{APPROVAL}hooks:\n  PreToolUse:\n    - script: ./guard.sh\n"
    ));
    insta::assert_snapshot!(lines(&s.warnings), @"approval: `approval` is honoured in agent files and admin hook files only; ignored in a SKILL.md");
    let admin = HookFile::parse(Path::new("admin.yaml"), APPROVAL, Trust::Admin).unwrap();
    assert!(admin.warnings.is_empty(), "{:?}", admin.warnings);
    assert_eq!(admin.approval.timeout_seconds, Some(60));
    assert_eq!(admin.approval.approvers.unwrap()[0].name, "mallory");
}
