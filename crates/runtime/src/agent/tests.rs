//! Agent files: loading, shapes, the default agent.

use super::*;

fn load(text: &str) -> Result<AgentDef, AgentError> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("agent.yaml");
    std::fs::write(&path, text).unwrap();
    AgentDef::load(&path)
}

#[test]
fn a_seed_style_agent_config_is_an_agent_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("buyer.json");
    // As stored in a database row: `model_config_json` is a JSON text holding the model's
    // own settings beside `hooks`.
    let text = serde_json::json!({"model_config_json": serde_json::json!({
        "temperature": 0.2,
        "webhook_url": "https://example.com/h",
        "hooks": {"class_hooks": [{"class": "ReadOnlyGuard"}], "require_confirmation_for_all": true}
    }).to_string()});
    std::fs::write(&path, text.to_string()).unwrap();
    let def = AgentDef::load(&path).unwrap();
    assert_eq!(def.name, "buyer");
    assert_eq!(def.config.class_hooks[0].class, "ReadOnlyGuard");
    assert!(def.config.require_confirmation_for_all);
    let warnings: Vec<&str> = def.warnings.iter().map(|w| w.entry.as_str()).collect();
    // `webhook_url` contains "hook" but is no near miss of `hooks`: a setting, not a typo.
    assert_eq!(
        warnings,
        [
            "model_config_json.temperature",
            "model_config_json.webhook_url"
        ]
    );
    let misspelt = r#"{"model_config_json": "{\"Hook\": {}}"}"#;
    std::fs::write(&path, misspelt).unwrap();
    let err = AgentDef::load(&path).unwrap_err().to_string();
    assert!(err.contains("did you mean `hooks`"), "{err}");
}

#[test]
fn agent_files_and_hook_files_are_told_apart_by_their_keys() {
    let shape = |text: &str| config_shape(&tollgate_config::yaml::parse(text).unwrap());
    assert_eq!(shape("name: a\n"), ConfigShape::Agent);
    // An agent file that forgot its name is still one.
    assert_eq!(
        shape("model: direct\ntools: [sql_query]\nhooks: [h.yaml]\n"),
        ConfigShape::Agent
    );
    assert_eq!(shape("model_config_json: {}\n"), ConfigShape::Agent);
    // A hook file with a stray `name` is still a hook file: its `hooks` maps events.
    assert_eq!(
        shape("name: x\nhooks: {PreToolUse: []}\n"),
        ConfigShape::HookFile
    );
    assert_eq!(shape("network: {allow_cidrs: []}\n"), ConfigShape::HookFile);
    assert_eq!(shape("password: x\n"), ConfigShape::Neither);
    assert_eq!(shape("[1, 2]"), ConfigShape::Neither);
    let err = load("hooks: {PreToolUse: []}\n").unwrap_err().to_string();
    assert!(err.contains("pass it with --hooks"), "{err}");
}

#[test]
fn the_default_agent_has_the_standard_tools_and_the_direct_model() {
    let def = AgentDef::default_agent();
    assert_eq!(def.model, Some(ModelSpec::Direct));
    assert!(def.tools.iter().any(|t| t == crate::tools::BASH_TOOL));
    assert!(!def.tools.iter().any(|t| t == crate::tools::CALL_AGENT_TOOL));
    assert!(def.hook_files.is_empty() && def.skills.names().is_empty());
    assert!(def.database.is_some() && def.seed.is_some());
}

#[test]
fn strict_keys_refuse_the_agent() {
    let cases = [
        ("name: a\ntoolz: []\n", "toolz"),
        ("name: a\ntools: [rm_rf]\n", "unknown tool `rm_rf`"),
        ("name: a\nname: b\n", "duplicate"),
        ("{\"name\": \"a\", \"name\": \"b\"}", "duplicate"),
        (
            "name: a\nmodel_config_json: {hook: {class_hooks: []}}\n",
            "model_config_json.hook",
        ),
        (
            "name: a\nmodel_config_json: {hooks: {class_hook: []}}\n",
            "class_hook",
        ),
        ("name: a\nmodel: gpt-4\n", "scripted:FILE"),
        ("name: a\nmax_turns: 0\n", "max_turns"),
        (
            "name: a\nsandbox: off\n",
            "only an admin file can turn the sandbox off",
        ),
        ("name: a\nsandbox: {netwrk: true}\n", "netwrk"),
        ("name: a\nhooks: [missing.yaml]\n", "hooks[0]"),
        ("name: ' '\n", "name"),
        (
            "name: a\nbase_url: http://x/v1\napi_key_env: OPENAI_API_KEY\n",
            "api_key_env",
        ),
    ];
    for (text, expected) in cases {
        let err = load(text).unwrap_err().to_string();
        assert!(err.contains(expected), "{text:?}: {err}");
    }
    let json = load(
        r#"{"name": "j", "model": "openai:m", "tools": ["sql_query"], "subagents": {"x": {"file": "x.json"}},
            "model_config_json": {"hooks": {"confirmation_tools": ["sql_*"]}}}"#,
    )
    .unwrap();
    assert_eq!(json.tools, ["sql_query"]);
    assert_eq!(json.model, Some(ModelSpec::OpenAi("m".into())));
    assert_eq!(
        json.subagents["x"].timeout_seconds,
        DEFAULT_SUBAGENT_TIMEOUT_SECS
    );
    assert_eq!(json.config.confirmation_tools, ["sql_*"]);
    let ok = load("name: a\nmodel: scripted:s.jsonl\nmodel_config_json: {hooks: {require_confirmation_for_all: true}}\n").unwrap();
    assert!(ok.config.require_confirmation_for_all);
}

#[test]
fn admin_only_keys_are_refused_saying_why() {
    for key in ["network", "standalone"] {
        let err = load(&format!("name: a\n{key}: true\n"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(&format!(
                "{key}: `{key}` is honoured in admin hook files only (pass one with --admin)"
            )),
            "{err}"
        );
    }
    // The agent's `sandbox` is its shell tool's; turning it off is an admin's.
    let err = load("name: a\nsandbox: off\n").unwrap_err().to_string();
    assert!(err.contains("only an admin file"), "{err}");
}

#[test]
fn admin_only_keys_in_an_agents_hook_file_are_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("hooks.yaml"),
        "standalone: true\nnetwork: {allow_cidrs: [127.0.0.0/8]}\nhooks: {}\n",
    )
    .unwrap();
    let path = dir.path().join("agent.yaml");
    std::fs::write(&path, "name: a\nhooks: [hooks.yaml]\n").unwrap();
    let agent = AgentDef::load(&path).unwrap();
    let warned: Vec<&str> = agent.warnings.iter().map(|w| w.entry.as_str()).collect();
    assert_eq!(warned, ["network", "standalone"]);
    assert!(
        agent.warnings[0]
            .message
            .contains("honoured in admin hook files only"),
        "{:?}",
        agent.warnings
    );
    assert!(!agent.hook_files[0].standalone);
}

#[test]
fn regression_agent_file_errors_quoted_a_file_that_is_not_an_agent_file() {
    for text in [
        "root:$y$j9T$CANARY:19000:0:99999:7:::\n",
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn: CANARY\n  x: [\n",
        "token: CANARY\n",
        "- CANARY\n",
        "name: a\ntools: CANARY\n",
        "name: a\nmax_turns: CANARY\n",
        "name: a\nmax_turns: 1.5e300\n",
        "{\"name\": \"a\", \"hooks\": \"CANARY\"}",
        "name: a\nsandbox: CANARY\n",
    ] {
        let err = load(text).unwrap_err().to_string();
        assert!(!err.contains("CANARY"), "{text:?}: {err}");
    }
    let err = load("token: CANARY\n").unwrap_err().to_string();
    assert!(err.contains("not an agent file"), "{err}");
    let err = load("name: a\ntools: CANARY\n").unwrap_err().to_string();
    assert!(
        err.contains("tools: invalid type: string, expected a sequence"),
        "{err}"
    );
}

#[test]
fn serde_messages_keep_the_kind_and_lose_the_value() {
    for (message, kept) in [
        (
            "invalid type: string \"s, expected x\", expected u32",
            "invalid type: string, expected u32",
        ),
        (
            "invalid type: floating point `1.5`, expected u32",
            "invalid type: floating point, expected u32",
        ),
        (
            "invalid value: integer `-1`, expected u32",
            "invalid value: integer, expected u32",
        ),
        (
            "invalid type: map, expected a string",
            "invalid type: map, expected a string",
        ),
        (
            "unknown variant `secret`, expected `a` or `b`",
            "unknown variant, expected `a` or `b`",
        ),
        ("missing field `name`", "missing field `name`"),
    ] {
        assert_eq!(without_values(message), kept);
    }
}
