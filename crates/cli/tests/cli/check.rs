//! `tollgate check` on fixture files.

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

fn fixture(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
        .display()
        .to_string()
}

fn check(args: &[&str]) -> (i32, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_tollgate"))
        .arg("check")
        .args(args)
        .output()
        .unwrap();
    (
        output.status.code().unwrap(),
        String::from_utf8(output.stdout).unwrap(),
    )
}

fn check_json(args: &[&str]) -> (i32, Value) {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let (code, out) = check(&all);
    (code, serde_json::from_str(&out).unwrap())
}

#[test]
fn a_skill_shows_its_hooks_and_warnings() {
    let (code, json) = check_json(&[&fixture("skills/deploy/SKILL.md")]);
    assert_eq!(code, 0);
    let file = &json["files"][0];
    let hooks = file["hooks"].as_array().unwrap();
    assert_eq!(hooks.len(), 2, "{file:#}");
    let pre = |e: &str| hooks.iter().find(|h| h["event"] == e).unwrap();
    let (post, hooks) = (pre("post_tool_use"), [pre("pre_tool_use")]);
    assert_eq!(hooks[0]["event"], "pre_tool_use");
    assert_eq!(hooks[0]["name"], "skill:deploy/PreToolUse[0]");
    assert_eq!(hooks[0]["source"], "skill");
    assert_eq!(hooks[0]["tools"], serde_json::json!(["bash_*"]));
    assert_eq!(hooks[0]["timeout_sec"], 5);
    assert_eq!(hooks[0]["priority"], 10);
    assert_eq!(hooks[0]["failure_mode"], "fail_open");
    assert_eq!(hooks[0]["verdict"], "allow");
    // Claude Code's shape: its matcher on Claude Code's names, not `tools` globs.
    assert_eq!(post["tools"], Value::Null);
    assert_eq!(post["matcher"], "Bash|Write");
    assert_eq!(post["dialect"], "claude_code");
    assert_eq!(post["timeout_sec"], 30);
    let entries: Vec<&str> = file["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["entry"].as_str().unwrap())
        .collect();
    assert_eq!(entries, ["hooks.OnToolUse", "hooks.PreToolUse[1].tools",]);
}

#[test]
fn text_output_is_readable() {
    let (code, out) = check(&[&fixture("skills/deploy/SKILL.md")]);
    assert_eq!(code, 0);
    assert!(
        out.contains("pre_tool_use skill:deploy/PreToolUse[0] (command, source skill)"),
        "{out}"
    );
    assert!(out.contains("[analyzer: allow]"), "{out}");
    assert!(
        out.contains("warning: hooks.PreToolUse[1].tools: must be a glob"),
        "{out}"
    );
}

#[test]
fn an_unclosed_frontmatter_fails_the_check() {
    let (code, json) = check_json(&[
        &fixture("skills/deploy/SKILL.md"),
        &fixture("skills/broken/SKILL.md"),
    ]);
    assert_eq!(code, 1);
    assert!(json["files"][0]["errors"].as_array().unwrap().is_empty());
    let error = json["files"][1]["errors"][0].as_str().unwrap();
    assert!(error.contains("never closed"), "{error}");
}

#[test]
fn admin_files_set_policy_user_files_cannot() {
    let (code, json) = check_json(&["--admin", &fixture("admin.yaml"), &fixture("user.yaml")]);
    assert_eq!(code, 0, "{json:#}");
    let admin = &json["files"][0];
    assert_eq!(admin["hooks"][0]["source"], "admin_config");
    assert_eq!(admin["hooks"][0]["failure_mode"], "fail_open");
    let user = &json["files"][1];
    let hooks = user["hooks"].as_array().unwrap();
    // The admin allow-list admits 127.0.0.1; standalone makes user defaults fail closed.
    assert_eq!(hooks[0]["kind"], "http");
    assert!(
        hooks.iter().all(|h| h["failure_mode"] == "fail_closed"),
        "{hooks:#?}"
    );
    assert_eq!(hooks[1]["verdict"], "block");
    let warnings = user["warnings"].to_string();
    assert!(warnings.contains("admin hook files only"), "{warnings}");
    assert!(warnings.contains("refused"), "{warnings}");
}

#[test]
fn without_admin_the_loopback_url_is_skipped() {
    let (code, json) = check_json(&[&fixture("user.yaml")]);
    assert_eq!(code, 0);
    let hooks = json["files"][0]["hooks"].as_array().unwrap();
    assert!(hooks.iter().all(|h| h["kind"] == "command"));
    assert!(
        json["files"][0]["warnings"]
            .to_string()
            .contains("127.0.0.1")
    );
}

#[test]
fn an_agent_with_an_unknown_class_fails() {
    let (code, json) = check_json(&[&fixture("agent_unknown_class.json")]);
    assert_eq!(code, 1);
    let error = json["files"][0]["errors"][0].as_str().unwrap();
    assert!(error.contains("NoSuchGuard"), "{error}");
}

#[test]
fn unknown_file_kinds_and_missing_files_fail() {
    let (code, out) = check(&["Cargo.toml", "/nonexistent/x.yaml"]);
    assert_eq!(code, 1);
    assert!(out.contains("unknown file kind"), "{out}");
    assert!(out.contains("cannot read"), "{out}");
}

#[test]
fn check_without_files_is_a_usage_error() {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_tollgate"))
        .arg("check")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn check_shows_each_command_hooks_sandbox_as_admin_files_set_it() {
    let dir = tempfile::tempdir().unwrap();
    let user = dir.path().join("hooks.yaml");
    std::fs::write(
        &user,
        "hooks:\n  PreToolUse:\n    - script: echo \"$ARGUMENTS\" >> /var/log/tollgate/audit.log\n",
    )
    .unwrap();
    let admin = dir.path().join("admin.yaml");
    std::fs::write(
        &admin,
        "sandbox:\n  sources:\n    user_config: {writable: [/var/log/tollgate], network: true}\n",
    )
    .unwrap();
    let (user, admin) = (user.display().to_string(), admin.display().to_string());
    let (code, text) = check(&[&user]);
    assert_eq!(code, 0);
    assert!(
        text.contains("sandbox: network off; writes only its scratch directory, /tmp\n"),
        "{text}"
    );
    let (code, json) = check_json(&["--admin", &admin, &user]);
    assert_eq!(code, 0);
    assert_eq!(
        json["files"][1]["hooks"][0]["sandbox"],
        serde_json::json!({"network": "proxy", "writable": ["/var/log/tollgate"]}),
        "{json:#}"
    );
}

/// Raw terminal controls: ESC, BEL, CSI (C1), DEL, backspace, carriage return, a bidi override.
fn raw_controls(text: &str) -> Vec<char> {
    text.chars()
        .filter(|c| {
            matches!(
                c,
                '\u{1b}' | '\u{7}' | '\u{8}' | '\u{d}' | '\u{7f}' | '\u{9b}' | '\u{202e}'
            )
        })
        .collect()
}

#[test]
fn regression_a_skill_could_rewrite_the_terminal_through_check() {
    let dir = tempfile::tempdir().unwrap();
    let skill = dir.path().join("SKILL.md");
    std::fs::write(
        &skill,
        "---\nname: \"ev\\e]0;pwned\\ail\\x9b2J\"\nhooks:\n  PreToolUse:\n    - tools: [\"bash_\\e]2;*\"]\n      script: \"echo '\\e[31mred\\b\\r\\x7f\\u202e' >&2; exit 2\"\n  \"On\\e[2JTool\\u202e\": []\n---\n",
    )
    .unwrap();
    let skill = skill.display().to_string();
    let (code, text) = check(&[&skill]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(raw_controls(&text), [] as [char; 0], "{text:?}");
    assert!(
        text.contains("skill:ev\\u{1b}]0;pwned\\u{7}il\\u{9b}2J/PreToolUse[0]"),
        "{text}"
    );
    assert!(text.contains("On\\u{1b}[2JTool\\u{202e}"), "{text}");
    let (code, out) = check(&["--json", &skill]);
    assert_eq!(code, 0);
    assert_eq!(raw_controls(&out), [] as [char; 0], "{out:?}");
    // Still JSON, with the file's values.
    let json: Value = serde_json::from_str(&out).unwrap();
    let hook = &json["files"][0]["hooks"][0];
    assert_eq!(
        hook["name"],
        "skill:ev\u{1b}]0;pwned\u{7}il\u{9b}2J/PreToolUse[0]"
    );
    assert_eq!(
        hook["command"],
        "echo '\u{1b}[31mred\u{8}\r\u{7f}\u{202e}' >&2; exit 2"
    );
}

/// Secret files a config path could reach, each holding `CANARY`: a private key, shadow lines
/// (which read as YAML keys), INI credentials, a YAML mapping of secrets, a JSON key file.
pub const SECRETS: [&str; 7] = [
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjE: CANARY\n  bad: [x\n-----END OPENSSH PRIVATE KEY-----\n",
    "root:$y$j9T$CANARY:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n",
    "[default]\naws_secret_access_key = CANARY\n",
    "token: CANARY\nuser: CANARY\n",
    "---\ntoken: CANARY\n---\nCANARY\n",
    "{\"private_key\": \"CANARY\", \"model_config_json\": \"CANARY\"}\n",
    // Top-level keys an admin file reads, holding secrets.
    "hooks: x\nstandalone: CANARY\nnetwork: CANARY\nsandbox: CANARY\n",
];

#[test]
fn regression_a_config_symlink_to_a_secret_file_echoed_its_lines() {
    for secret in SECRETS {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("id_rsa");
        std::fs::write(&target, secret).unwrap();
        std::fs::create_dir(dir.path().join("skill")).unwrap();
        let links = ["hooks.yaml", "skill/SKILL.md", "agent.json", "admin.yaml"].map(|name| {
            let link = dir.path().join(name);
            std::os::unix::fs::symlink(&target, &link).unwrap();
            link.display().to_string()
        });
        for json in [false, true] {
            let mut args = vec![
                "check", "--admin", &links[3], &links[0], &links[1], &links[2],
            ];
            if json {
                args.insert(1, "--json");
            }
            let output = Command::new(env!("CARGO_BIN_EXE_tollgate"))
                .args(&args)
                .output()
                .unwrap();
            let shown = format!(
                "{}{}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            );
            assert!(!shown.contains("CANARY"), "{secret:?}:\n{shown}");
        }
    }
}

/// A project directory and a home, outside `/tmp` (the sandbox's own), for `check` to run in.
struct Place {
    _base: tempfile::TempDir,
    home: PathBuf,
    project: PathBuf,
}

impl Place {
    fn new() -> Self {
        let base = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
        let (home, project) = (base.path().join("home"), base.path().join("project"));
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&project).unwrap();
        Place {
            _base: base,
            home,
            project,
        }
    }

    /// `tollgate check ARGS` run in the project, `HOME` the home: its stdout.
    fn check(&self, args: &[&str]) -> String {
        let output = Command::new(env!("CARGO_BIN_EXE_tollgate"))
            .arg("check")
            .args(args)
            .current_dir(&self.project)
            .env("HOME", &self.home)
            .output()
            .unwrap();
        String::from_utf8(output.stdout).unwrap()
    }
}

#[test]
fn check_names_the_files_a_hook_writes_that_its_sandbox_keeps_read_only() {
    let place = Place::new();
    let project = &place.project;
    std::fs::write(
        project.join("hooks.yaml"),
        "hooks:\n  PreToolUse:\n\
         \x20   - script: echo \"$ARGUMENTS\" >> ~/.myrm/audit.log\n\
         \x20   - script: printf '%s\\n' \"$HOOK_TOOL_NAME\" >> /tmp/tools.log\n\
         \x20   - script: jq -r .tool_name | tee -a log/tools.txt\n\
         \x20   - script: jq . > \"$HOOK_SCRATCH_DIR/last.json\"\n",
    )
    .unwrap();
    std::fs::write(
        project.join("admin.yaml"),
        "sandbox:\n  sources:\n    user_config: {writable: [~/.myrm]}\n",
    )
    .unwrap();
    let run = |args: &[&str]| place.check(args);

    let text = run(&["hooks.yaml"]);
    assert!(
        text.contains(
            "warning: the command writes `~/.myrm/audit.log`, which its sandbox keeps read-only, \
             so the hook will fail; an admin file can grant its directory: \
             `sandbox: {sources: {user_config: {writable: [\"~/.myrm\"]}}}`"
        ),
        "{text}"
    );
    assert!(
        text.contains("note: the command writes `/tmp/tools.log` in the sandbox's private /tmp"),
        "{text}"
    );
    let log_dir = project.join("log").display().to_string();
    assert!(
        text.contains(&format!("writable: [\"{log_dir}\"]")),
        "{text}"
    );

    let json: Value =
        serde_json::from_str(&run(&["--json", "--admin", "admin.yaml", "hooks.yaml"])).unwrap();
    let hooks = json["files"][1]["hooks"].as_array().unwrap();
    let writes: Vec<&Value> = hooks.iter().map(|h| &h["writes"]).collect();
    assert_eq!(
        writes,
        [
            &serde_json::json!([{"path": "~/.myrm/audit.log", "access": "writable"}]),
            &serde_json::json!([{"path": "/tmp/tools.log", "access": "private_tmp"}]),
            &serde_json::json!([{"path": "log/tools.txt", "access": "read_only", "grant": log_dir}]),
            &Value::Null,
        ],
        "{json:#}"
    );
}

#[test]
fn the_grant_check_suggests_pastes_into_an_admin_file_as_is() {
    let place = Place::new();
    let project = &place.project;
    // A directory name YAML would split or misread unquoted.
    let odd = project.join("a,b: [c] #d");
    let hooks = format!(
        "hooks:\n  PreToolUse:\n    - script: |\n        echo hi >> '{}/log'\n    - script: echo hi >> ~/audit.log\n",
        odd.display()
    );
    std::fs::write(project.join("hooks.yaml"), hooks).unwrap();
    let run = |args: &[&str]| place.check(args);
    let text = run(&["hooks.yaml"]);
    let suggested = text
        .lines()
        .find_map(|l| l.split_once("an admin file can grant its directory: `"))
        .map(|(_, rest)| rest.trim_end_matches('`').to_owned())
        .unwrap_or_else(|| panic!("no suggestion in {text}"));
    assert!(
        text.contains(
            "writes `~/audit.log`, which its sandbox keeps read-only, so the hook will fail; \
             an admin file grants directories, not files right under `/` or the home"
        ),
        "{text}"
    );
    std::fs::write(project.join("admin.yaml"), format!("{suggested}\n")).unwrap();
    let json: Value =
        serde_json::from_str(&run(&["--json", "--admin", "admin.yaml", "hooks.yaml"])).unwrap();
    assert_eq!(
        json["files"][0]["warnings"],
        serde_json::json!([]),
        "{json:#}"
    );
    let granted = &json["files"][1]["hooks"][0];
    assert_eq!(
        granted["sandbox"]["writable"],
        serde_json::json!([odd]),
        "{json:#}"
    );
    assert_eq!(granted["writes"][0]["access"], "writable", "{json:#}");
}

#[test]
fn strict_fails_on_any_warning() {
    let dir = tempfile::tempdir().unwrap();
    let clean = dir.path().join("clean.yaml");
    std::fs::write(
        &clean,
        "hooks:\n  PreToolUse:\n    - script: 'true'\n      tools: bash_code_execute_tool\n",
    )
    .unwrap();
    let typo = dir.path().join("typo.yaml");
    std::fs::write(
        &typo,
        "hooks:\n  PreToolUse:\n    - script: ./guard.sh\n      tool: bash_*\n",
    )
    .unwrap();
    let (clean, typo) = (clean.display().to_string(), typo.display().to_string());
    // Without --strict a warning passes; with it, only a file without warnings does.
    assert_eq!(check(&[&typo]).0, 0);
    let (code, out) = check(&["--strict", &typo]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("1 warning(s); --strict fails on warnings"),
        "{out}"
    );
    let (code, out) = check(&["--strict", &clean]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(check_json(&["--strict", &typo]).0, 1);
}

#[test]
fn strict_counts_a_write_the_sandbox_keeps_read_only() {
    let dir = tempfile::tempdir().unwrap();
    let hooks = dir.path().join("hooks.yaml");
    std::fs::write(
        &hooks,
        "hooks:\n  PreToolUse:\n    - script: echo x >> /var/log/tollgate/audit.log\n",
    )
    .unwrap();
    let hooks = hooks.display().to_string();
    let (code, json) = check_json(&["--strict", &hooks]);
    assert!(json["files"][0]["warnings"].as_array().unwrap().is_empty());
    assert_eq!(
        json["files"][0]["hooks"][0]["writes"][0]["access"],
        "read_only"
    );
    assert_eq!(code, 1);
}

#[test]
fn tools_that_match_no_runtime_tool_are_warned_about_unless_named_with_tool() {
    let dir = tempfile::tempdir().unwrap();
    let skill = dir.path().join("SKILL.md");
    std::fs::write(
        &skill,
        "---\nname: guard\nhooks:\n  PreToolUse:\n    - script: 'true'\n      tools: Bash\n    - script: 'true'\n      tools: ['Bash(rm *)']\n    - script: 'true'\n      tools: [deploy, 'mcp__github__*']\n---\n",
    )
    .unwrap();
    let skill = skill.display().to_string();
    let (code, out) = check(&[&skill]);
    assert_eq!(code, 0, "{out}");
    // Still loaded: a warning, not an error.
    assert_eq!(out.matches("pre_tool_use skill:guard/").count(), 3, "{out}");
    assert!(
        out.contains(
            "warning: hooks.PreToolUse[0].tools: `Bash` matches none of this runtime's tools \
             (bash_code_execute_tool, sql_query, sql_execute, read_file, write_file, call_agent); \
             Claude Code's `Bash` is `bash_code_execute_tool` here"
        ),
        "{out}"
    );
    assert!(
        out.contains("hooks.PreToolUse[1].tools: `Bash(rm *)` matches none")
            && out.contains("`tools` matches tool names only, never arguments"),
        "{out}"
    );
    assert!(
        out.contains("hooks.PreToolUse[2].tools: `deploy` matches none"),
        "{out}"
    );
    let (code, json) = check_json(&["--strict", "--tool", "deploy", &skill]);
    assert_eq!(code, 1);
    let entries: Vec<&str> = json["files"][0]["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["entry"].as_str().unwrap())
        .collect();
    assert_eq!(
        entries,
        ["hooks.PreToolUse[0].tools", "hooks.PreToolUse[1].tools"]
    );
}

#[test]
fn unknown_keys_suggest_the_key_meant() {
    let dir = tempfile::tempdir().unwrap();
    let hooks = dir.path().join("hooks.yaml");
    std::fs::write(
        &hooks,
        "hooks:\n  PreToolUse:\n    - script: ./guard.sh\n      tool: bash_*\n    - script: ./b.sh\n      failure-mode: fail_closed\n    - script: ./c.sh\n      failure_mode: fail-closed\n",
    )
    .unwrap();
    let (code, out) = check(&["--strict", &hooks.display().to_string()]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("no hooks"), "{out}");
    for expected in [
        "hooks.PreToolUse[0].tool: unknown key `tool` (did you mean `tools`?); the hook is skipped",
        "hooks.PreToolUse[1].failure-mode: unknown key `failure-mode` (did you mean `failure_mode`?)",
        "hooks.PreToolUse[2].failure_mode: unknown failure mode `fail-closed` (did you mean `fail_closed`?)",
    ] {
        assert!(out.contains(expected), "{expected}\n{out}");
    }
}

#[test]
fn yaml_errors_name_the_files_line_and_a_duplicate_key_plainly() {
    let dir = tempfile::tempdir().unwrap();
    let duplicate = dir.path().join("dup").join("SKILL.md");
    let syntax = dir.path().join("syntax").join("SKILL.md");
    for path in [&duplicate, &syntax] {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    }
    std::fs::write(
        &duplicate,
        "---\nname: deploy\nhooks:\n  PreToolUse:\n    - script: a\n      tools: bash_*\n      tools: '*'\n---\n",
    )
    .unwrap();
    std::fs::write(
        &syntax,
        "---\nname: deploy\ndescription: x\nhooks:\n  PreToolUse:\n    - script: a\n   tools: x\n---\n",
    )
    .unwrap();
    let (duplicate, syntax) = (
        duplicate.display().to_string(),
        syntax.display().to_string(),
    );
    let (code, out) = check(&[&duplicate, &syntax]);
    assert_eq!(code, 1);
    assert!(
        out.contains(&format!(
            "error: {duplicate}: invalid YAML: duplicate key `tools` at line 7, column 7\n"
        )),
        "{out}"
    );
    assert!(!out.contains("DuplicateKeyPolicy"), "{out}");
    assert!(out.contains("at line 7, column 4"), "{out}");
}
