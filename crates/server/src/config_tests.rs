use super::*;

const OPS: &str = "0123456789abcdef-ops-lead";

fn env(name: &str) -> Option<String> {
    match name {
        "OPS_LEAD_TOKEN" => Some(OPS.into()),
        "EMPTY" => Some(String::new()),
        "PORT" => Some("9090".into()),
        _ => None,
    }
}

fn parse(text: &str) -> Result<ServerConfig, String> {
    ServerConfig::parse(text, Path::new("/etc/tollgate"), &env)
}

#[test]
fn the_documented_example_parses() {
    let hashed = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(
        b"auditor-secret-long",
    ));
    let config = parse(&format!(
        "listen: 127.0.0.1:${{PORT}}\n\
         database: sqlite://tollgate.db\n\
         agents_dir: ./agents\n\
         admin_hooks: [admin.yaml]\n\
         public_url: http://127.0.0.1:8080\n\
         tokens:\n\
         \x20 - {{name: ops-lead, token: \"${{OPS_LEAD_TOKEN}}\", roles: [approver]}}\n\
         \x20 - {{name: auditor, token_sha256: \"{hashed}\", roles: [admin]}}\n\
         approval: {{timeout_seconds: 600}}\n"
    ))
    .unwrap();
    assert_eq!(config.listen.to_string(), "127.0.0.1:9090");
    assert_eq!(config.database, Path::new("/etc/tollgate/tollgate.db"));
    assert_eq!(
        config.agents_dir.as_deref(),
        Some(Path::new("/etc/tollgate/./agents"))
    );
    assert_eq!(config.admin_hooks, [Path::new("/etc/tollgate/admin.yaml")]);
    assert_eq!(config.approval_timeout, Duration::from_secs(600));
    assert_eq!(config.tokens.find(OPS).unwrap().name(), "ops-lead");
    assert_eq!(
        config.tokens.find("auditor-secret-long").unwrap().name(),
        "auditor"
    );
}

#[test]
fn defaults_fill_what_is_left_out() {
    let config = parse(&format!(
        "tokens: [{{name: a, token: {OPS}, roles: [admin]}}]"
    ))
    .unwrap();
    assert_eq!(config.listen.to_string(), DEFAULT_LISTEN);
    assert_eq!(config.database, Path::new("/etc/tollgate/tollgate.db"));
    assert_eq!(config.approval_timeout, DEFAULT_APPROVAL_TIMEOUT);
    assert!(config.public_url.is_none() && config.agents_dir.is_none());
}

#[test]
fn database_forms() {
    let with = |db: &str| {
        parse(&format!(
            "database: \"{db}\"\ntokens: [{{name: a, token: {OPS}, roles: [admin]}}]"
        ))
        .map(|c| c.database)
    };
    assert_eq!(
        with("sqlite:///var/lib/t.db").unwrap(),
        Path::new("/var/lib/t.db")
    );
    assert_eq!(
        with("sqlite:t.db").unwrap(),
        Path::new("/etc/tollgate/t.db")
    );
    assert_eq!(
        with("data/t.db").unwrap(),
        Path::new("/etc/tollgate/data/t.db")
    );
    assert!(with("sqlite::memory:").unwrap_err().contains("in-memory"));
    assert!(with("postgres://db/x").unwrap_err().contains("only SQLite"));
}

#[test]
fn an_unset_variable_names_the_key_and_the_variable() {
    let err =
        parse("tokens:\n  - {name: ci, token: \"${CI_TOKEN}\", roles: [runner]}\n").unwrap_err();
    assert_eq!(
        err,
        "`tokens[0].token`: the environment variable `CI_TOKEN` is not set"
    );
    let err = parse("public_url: \"${bad-name}\"").unwrap_err();
    assert!(err.starts_with("`public_url`:"), "{err}");
    let err = parse("public_url: \"http://${HOST\"").unwrap_err();
    assert!(err.contains("closing"), "{err}");
}

#[test]
fn an_empty_or_short_token_is_refused_without_showing_it() {
    let err = parse("tokens: [{name: ci, token: \"${EMPTY}\", roles: [runner]}]").unwrap_err();
    assert!(
        err.contains("`tokens[0].token` of `ci`: too short"),
        "{err}"
    );
    let err = parse("tokens: [{name: ci, token: hunter2, roles: [runner]}]").unwrap_err();
    assert!(!err.contains("hunter2"), "{err}");
}

#[test]
fn unknown_keys_suggest_the_key_meant() {
    let err = parse("listn: 127.0.0.1:1").unwrap_err();
    assert_eq!(err, "unknown key `listn` (did you mean `listen`?)");
    let err = parse(&format!(
        "tokens: [{{name: a, tokn: {OPS}, roles: [admin]}}]"
    ))
    .unwrap_err();
    assert_eq!(err, "unknown key `tokens[0].tokn` (did you mean `token`?)");
    let err = parse("approval: {timeout: 5}").unwrap_err();
    assert!(err.starts_with("unknown key `approval.timeout`"), "{err}");
    let err = parse("zzz: 1").unwrap_err();
    assert_eq!(err, "unknown key `zzz`");
}

#[test]
fn bad_values_name_their_key_and_never_quote_the_value() {
    let token = |t: &str| format!("tokens: [{{name: a, token: {OPS}, roles: [admin]}}]\n{t}");
    let err = parse(&token("listen: \"${OPS_LEAD_TOKEN}\"")).unwrap_err();
    assert!(err.starts_with("`listen`:") && !err.contains(OPS), "{err}");
    let err = parse("tokens: [{name: a, token: 5, roles: [admin]}]").unwrap_err();
    assert!(err.starts_with("`tokens[0].token`: wrong type"), "{err}");
    let err = parse(&format!(
        "tokens: [{{name: a, token: {OPS}, roles: \"${{OPS_LEAD_TOKEN}}\"}}]"
    ))
    .unwrap_err();
    assert!(
        err.starts_with("`tokens[0].roles`: wrong type") && !err.contains(OPS),
        "{err}"
    );
    let err = parse(&token("approval: {timeout_seconds: 0}")).unwrap_err();
    assert!(err.contains("approval.timeout_seconds"), "{err}");
    let err = parse(&token("public_url: ftp://x")).unwrap_err();
    assert!(err.contains("public_url"), "{err}");
    let err = parse(&format!(
        "tokens: [{{name: a, token: {OPS}, roles: [aprover]}}]"
    ))
    .unwrap_err();
    assert!(
        err.contains("`tokens[0].roles[0]`") && err.contains("did you mean `approver`"),
        "{err}"
    );
}

#[test]
fn a_token_needs_exactly_one_form_and_the_file_needs_a_token() {
    let both = format!(
        "tokens: [{{name: a, token: {OPS}, token_sha256: \"{}\", roles: [admin]}}]",
        "0".repeat(64)
    );
    assert!(parse(&both).unwrap_err().contains("exactly one"));
    assert!(
        parse("tokens: [{name: a, roles: [admin]}]")
            .unwrap_err()
            .contains("exactly one")
    );
    assert!(
        parse("listen: 127.0.0.1:0")
            .unwrap_err()
            .contains("no tokens")
    );
    assert!(parse("").unwrap_err().contains("no tokens"));
    assert!(parse("- a\n- b").unwrap_err().contains("mapping"));
}
