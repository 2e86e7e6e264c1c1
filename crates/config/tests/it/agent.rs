use std::path::Path;

use tollgate_config::{AgentConfig, Assembler, ConfigError, Policy};
use tollgate_handlers::ClassTable;

#[test]
fn agent_hooks_parse() {
    let text = r#"{"name": "buyer", "model_config_json": {"model": "x", "hooks": {
        "class_hooks": [{"class": "AuditLogHook", "priority": 5, "params": {}}],
        "require_confirmation_for_all": false,
        "confirmation_tools": ["oa__*_pay"]}}}"#;
    let agent = AgentConfig::parse(Path::new("agent.json"), text).unwrap();
    assert_eq!(agent.class_hooks[0].class, "AuditLogHook");
    assert_eq!(agent.class_hooks[0].priority, 5);
    assert_eq!(agent.confirmation_tools, ["oa__*_pay"]);
    assert!(!agent.require_confirmation_for_all);
}

#[test]
fn model_config_json_may_be_a_string() {
    let text = r#"{"model_config_json": "{\"hooks\": {\"require_confirmation_for_all\": true}}"}"#;
    assert!(
        AgentConfig::parse(Path::new("a.json"), text)
            .unwrap()
            .require_confirmation_for_all
    );
}

#[test]
fn an_unknown_class_fails_the_build_naming_the_class() {
    let text = r#"{"model_config_json": {"hooks": {"class_hooks": [{"class": "NoSuchGuard"}]}}}"#;
    let agent = AgentConfig::parse(Path::new("agent.json"), text).unwrap();
    let classes = ClassTable::builtin();
    let mut assembler = Assembler::new(&classes, Policy::default());
    let err = assembler.add_agent(&agent).err().unwrap();
    assert!(matches!(err, ConfigError::Class { .. }), "{err}");
    assert!(err.to_string().contains("NoSuchGuard"), "{err}");
    assert!(err.to_string().contains("class_hooks[0]"), "{err}");
}

#[test]
fn bad_agent_entries_are_errors_not_warnings() {
    for (text, entry) in [
        (
            r#"{"model_config_json": {"hooks": {"class_hook": []}}}"#,
            "hooks.class_hook",
        ),
        (
            r#"{"model_config_json": {"hooks": {"class_hooks": [{"class": "A", "priority": "1"}]}}}"#,
            "class_hooks[0].priority",
        ),
        (
            r#"{"model_config_json": {"hooks": {"confirmation_tools": []}}}"#,
            "confirmation_tools",
        ),
        (
            r#"{"model_config_json": {"hooks": {"require_confirmation_for_all": "yes"}}}"#,
            "require_confirmation_for_all",
        ),
    ] {
        let err = AgentConfig::parse(Path::new("a.json"), text).unwrap_err();
        assert!(err.to_string().contains(entry), "{err}");
    }
}

#[test]
fn regression_a_misshapen_agent_config_is_an_error_not_an_agent_without_hooks() {
    for text in [
        r#"{"model_config_json": 42}"#,
        r#"{"model_config_json": [1, 2]}"#,
        r#"{"model_config_json": "[1,2]"}"#,
        r#"[{"model_config_json": {}}]"#,
    ] {
        assert!(
            AgentConfig::parse(std::path::Path::new("a.json"), text).is_err(),
            "{text}"
        );
    }
    assert!(AgentConfig::parse(std::path::Path::new("a.json"), r#"{"name": "x"}"#).is_ok());
}
