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
