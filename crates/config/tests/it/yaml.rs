use std::path::Path;

use tollgate_config::{ConfigError, HookFile, Skill, Trust};

#[test]
fn duplicate_keys_reject_the_frontmatter() {
    let text = "---\nname: deploy\nhooks:\n  PreToolUse:\n    - script: a\n      tools: bash\n      tools: '*'\n---\n";
    let err = Skill::parse(Path::new("SKILL.md"), text).unwrap_err();
    assert!(matches!(err, ConfigError::Yaml { .. }), "{err}");
    assert!(
        err.to_string().to_lowercase().contains("duplicate"),
        "{err}"
    );
}

#[test]
fn duplicate_top_level_keys_reject_a_hook_file() {
    let text = "hooks: {}\nhooks: {PreToolUse: [{script: x}]}\n";
    let err = HookFile::parse(Path::new("h.yaml"), text, Trust::User).unwrap_err();
    assert!(
        err.to_string().to_lowercase().contains("duplicate"),
        "{err}"
    );
}

fn alias_bomb() -> String {
    let mut text =
        String::from("---\nname: deploy\na0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    for i in 1..10 {
        let prev = format!("*a{}", i - 1);
        let items = [prev.as_str(); 9].join(", ");
        text.push_str(&format!("a{i}: &a{i} [{items}]\n"));
    }
    text.push_str("---\n");
    text
}

#[test]
fn an_alias_bomb_rejects_the_frontmatter() {
    let err = Skill::parse(Path::new("SKILL.md"), &alias_bomb()).unwrap_err();
    assert!(matches!(err, ConfigError::Yaml { .. }), "{err}");
    assert!(err.to_string().contains("alias replay limit"), "{err}");
}

#[test]
fn a_few_aliases_are_fine() {
    let text = "---\nname: deploy\nx: &globs [bash_*, sql_*]\nhooks:\n  PreToolUse:\n    - script: ./a.sh\n      tools: *globs\n---\n";
    let skill = Skill::parse(Path::new("SKILL.md"), text).unwrap();
    assert_eq!(
        skill.hooks[0].tools.as_deref().unwrap(),
        ["bash_*", "sql_*"]
    );
}

#[test]
fn unclosed_frontmatter_is_an_error() {
    let err = Skill::parse(Path::new("SKILL.md"), "---\nname: x\nhooks: {}\n").unwrap_err();
    assert!(matches!(err, ConfigError::UnclosedFrontmatter { .. }));
    assert!(err.to_string().contains("never closed"), "{err}");
}

#[test]
fn unparsable_frontmatter_is_an_error() {
    let err = Skill::parse(Path::new("SKILL.md"), "---\nhooks: [\n---\n").unwrap_err();
    assert!(matches!(err, ConfigError::Yaml { .. }), "{err}");
}

#[test]
fn yaml_1_1_booleans_stay_strings() {
    let text =
        "---\nname: deploy\nhooks:\n  PreToolUse:\n    - script: y\n      tools: [no, on]\n---\n";
    let skill = Skill::parse(Path::new("SKILL.md"), text).unwrap();
    assert_eq!(skill.hooks[0].tools.as_deref().unwrap(), ["no", "on"]);
}

/// Texts that are not config, each holding the canary `CANARY`: a private key, `/etc/shadow`
/// (whose lines read as YAML keys), an INI credentials file, an unclosed quote, a duplicate
/// key, a YAML mapping of secrets.
const NOT_CONFIG: [&str; 7] = [
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjE: CANARY\n  bad: [x\n-----END OPENSSH PRIVATE KEY-----\n",
    "root:$y$j9T$CANARY:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n",
    "[default]\naws_secret_access_key = CANARY\n",
    "API_KEY: \"CANARY\n",
    "CANARY: 1\nCANARY: 2\n",
    "token: CANARY\nuser: x\n",
    "- CANARY\n- x\n",
];

#[test]
fn regression_errors_quoted_the_lines_of_a_file_that_is_not_config() {
    for text in NOT_CONFIG {
        let err = HookFile::parse(Path::new("h.yaml"), text, Trust::Admin)
            .unwrap_err()
            .to_string();
        assert!(!err.contains("CANARY"), "{text:?}: {err}");
        assert!(!err.contains('\n'), "{text:?}: {err}");
        let front = format!("---\nname: x\n{text}---\n");
        if let Err(err) = Skill::parse(Path::new("SKILL.md"), &front) {
            assert!(!err.to_string().contains("CANARY"), "{text:?}: {err}");
        }
    }
}

#[test]
fn syntax_errors_give_the_line_and_column_of_the_file() {
    let err = HookFile::parse(Path::new("h.yaml"), NOT_CONFIG[0], Trust::User).unwrap_err();
    assert_eq!(
        err.to_string(),
        "h.yaml: invalid YAML: mapping values are not allowed in this context at line 2, column 20"
    );
    // A frontmatter's lines are counted from the top of SKILL.md.
    let err = Skill::parse(Path::new("SKILL.md"), "---\nname: x\nhooks: [\n---\n").unwrap_err();
    assert!(err.to_string().contains("at line 3, column 8"), "{err}");
    let err = HookFile::parse(Path::new("h.yaml"), NOT_CONFIG[4], Trust::User).unwrap_err();
    assert!(
        err.to_string()
            .ends_with("invalid YAML: duplicate key at line 2, column 1"),
        "{err}"
    );
}

#[test]
fn a_mapping_without_a_hook_file_key_is_not_a_hook_file() {
    let err = HookFile::parse(Path::new("h.yaml"), NOT_CONFIG[1], Trust::User).unwrap_err();
    assert!(err.to_string().contains("not a hook file"), "{err}");
    // One known key makes it a hook file; its other keys are named in warnings.
    let file = HookFile::parse(Path::new("h.yaml"), "hooks: {}\nextra: 1\n", Trust::User).unwrap();
    assert_eq!(file.warnings[0].message, "unknown key `extra`; ignored");
    assert!(HookFile::parse(Path::new("h.yaml"), "{}", Trust::User).is_ok());
    assert!(HookFile::parse(Path::new("a.yaml"), "sandbox: off\n", Trust::Admin).is_ok());
}

#[test]
fn duplicate_keys_name_a_key_of_the_format_and_nothing_of_the_library() {
    let text = "---\nname: deploy\nhooks:\n  PreToolUse:\n    - script: a\n      tools: bash\n      tools: '*'\n---\n";
    let err = Skill::parse(Path::new("SKILL.md"), text).unwrap_err();
    assert_eq!(
        err.to_string(),
        "SKILL.md: invalid YAML: duplicate key `tools` at line 7, column 7"
    );
    let text = "hooks: {}\nstandalone: true\nstandalone: false\n";
    let err = HookFile::parse(Path::new("a.yaml"), text, Trust::Admin).unwrap_err();
    assert_eq!(
        err.to_string(),
        "a.yaml: invalid YAML: duplicate key `standalone` at line 3, column 1"
    );
    let text = "hooks:\n  PreToolUse: []\n  PreToolUse: []\n";
    let err = HookFile::parse(Path::new("h.yaml"), text, Trust::User).unwrap_err();
    assert!(
        err.to_string()
            .contains("duplicate key `PreToolUse` at line 3"),
        "{err}"
    );
    for text in ["hooks: {}\nx: 1\nx: 2\n", "hooks: {}\ntools: 1\ntools: 2\n"] {
        let err = HookFile::parse(Path::new("h.yaml"), text, Trust::User)
            .unwrap_err()
            .to_string();
        for library_words in ["DuplicateKeyPolicy", "Options", "allow", "set "] {
            assert!(!err.contains(library_words), "{err}");
        }
    }
}

#[test]
fn skill_syntax_errors_are_on_the_files_lines() {
    // Line 1 is the opening `---`; the unclosed flow sequence is on line 6 of the file.
    let text = "---\nname: deploy\ndescription: x\nhooks:\n  PreToolUse:\n    - {script: a, tools: [bash\n---\n# Deploy\n";
    let err = Skill::parse(Path::new("SKILL.md"), text)
        .unwrap_err()
        .to_string();
    assert!(err.contains("at line 6, column"), "{err}");
    // A bad indent on line 7.
    let text = "---\nname: deploy\ndescription: x\nhooks:\n  PreToolUse:\n    - script: a\n   tools: x\n---\n";
    let err = Skill::parse(Path::new("SKILL.md"), text)
        .unwrap_err()
        .to_string();
    assert!(err.contains("at line 7, column 4"), "{err}");
    // The same text as a hook file (no `---` line before it) is a line earlier.
    let err = HookFile::parse(Path::new("h.yaml"), &text[4..], Trust::User)
        .unwrap_err()
        .to_string();
    assert!(err.contains("at line 6, column 4"), "{err}");
}
