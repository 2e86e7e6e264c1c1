//! Guard hooks written the way the docs teach (`docs/command-hooks.md`): they read the payload
//! on stdin and allow only on an explicit "no match", so a payload padded past the 96 KiB of
//! `HOOK_PAYLOAD` and a machine without `jq` both end in a deny. Run through `tollgate
//! dispatch` on the repository's own example files, as a user runs them.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

/// The guard docs/command-hooks.md shows, as a hook file.
const NO_DROP: &str = r#"hooks:
  PreToolUse:
    - name: no-drop
      tools: "sql_*"
      failure_mode: fail_closed
      script: >-
        jq -e '.tool_input.sql | test("\\bdrop\\b"; "i")' >/dev/null;
        s=$?; case $s in
        0) echo "DROP is not allowed" >&2; exit 2;;
        1) exit 0;;
        *) echo "no-drop could not check the statement (jq exit $s)" >&2; exit 2;;
        esac
"#;

/// The same guard in the style the examples used before: it reads the environment copy.
const NO_DROP_FROM_ENV: &str = r#"hooks:
  PreToolUse:
    - name: no-drop
      tools: "sql_*"
      failure_mode: fail_closed
      script: >-
        jq -e '.tool_input.sql | test("\\bdrop\\b"; "i")' <<<"$HOOK_PAYLOAD" >/dev/null
        && { echo "DROP is not allowed" >&2; exit 2; } || exit 0
"#;

/// More than `HOOK_PAYLOAD` holds (96 KiB), put before the dangerous part.
const PADDING: usize = 100 * 1024;

fn repo(path: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path)
        .display()
        .to_string()
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

fn bash(command: &str) -> Value {
    json!({"tool_name": "bash_code_execute_tool", "tool_input": {"command": command}})
}

fn sql(tool: &str, statement: &str) -> Value {
    json!({"tool_name": tool, "tool_input": {"sql": statement}})
}

/// Dispatches `pre_tool_use` with `payload` on stdin (`--payload @-`) through the hooks `args`
/// name; `path`, when given, is the `PATH` of tollgate and so of its hooks. Returns the
/// dispatch's JSON line.
fn dispatch(args: &[&str], payload: &Value, path: Option<&Path>) -> Value {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tollgate"));
    command
        .arg("dispatch")
        .args(args)
        .args(["--event", "PreToolUse", "--payload", "@-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(path) = path {
        command.env("PATH", path);
    }
    let mut child = command.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(payload.to_string().as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    serde_json::from_slice(&output.stdout).unwrap()
}

fn assert_denied_by(out: &Value, hook: &str) {
    assert_eq!(out["decision"], "deny", "{out}");
    assert_eq!(out["decided_by"], hook, "{out}");
}

/// The ops example's guards with every payload they are given in the tests below: (hook file
/// flag, file, payload of a harmless call, the guard's name).
fn ops_guards() -> [(&'static str, String, Value, &'static str); 3] {
    [
        (
            "--hooks",
            repo("examples/ops/hooks.yaml"),
            bash("ls releases"),
            "no-recursive-rm",
        ),
        (
            "--hooks",
            repo("examples/ops/analyst-hooks.yaml"),
            sql("sql_query", "SELECT id, region FROM orders"),
            "analyst-no-select-star",
        ),
        (
            "--skill",
            repo("examples/ops/skills/deploy/SKILL.md"),
            bash("bash deploy.sh v2.4.1"),
            "deploy-dry-run",
        ),
    ]
}

#[test]
fn ops_guards_deny_harmless_calls_when_jq_is_missing() {
    let empty = tempfile::tempdir().unwrap();
    for (flag, file, payload, guard) in ops_guards() {
        let out = dispatch(&[flag, &file], &payload, Some(empty.path()));
        assert_denied_by(&out, guard);
    }
}

#[test]
fn ops_guards_let_harmless_calls_through_when_jq_runs() {
    for (flag, file, payload, guard) in ops_guards() {
        let out = dispatch(&[flag, &file], &payload, None);
        assert_eq!(out["decision"], "allow", "{guard}: {out}");
    }
    let deploy = dispatch(
        &["--skill", &repo("examples/ops/skills/deploy/SKILL.md")],
        &bash("bash deploy.sh v2.4.1"),
        None,
    );
    assert_eq!(
        deploy["modified_args"]["command"],
        "bash deploy.sh v2.4.1 --dry-run"
    );
}

#[test]
fn the_ops_guards_deny_what_they_guard_against() {
    let ops = repo("examples/ops/hooks.yaml");
    let out = dispatch(&["--hooks", &ops], &bash("rm -rf releases/old"), None);
    assert_denied_by(&out, "no-recursive-rm");
    assert_eq!(
        out["reason"],
        "recursive rm is not allowed in ops runs; archive old releases instead"
    );
    let analyst = repo("examples/ops/analyst-hooks.yaml");
    let out = dispatch(
        &["--hooks", &analyst],
        &sql("sql_query", "select * from orders"),
        None,
    );
    assert_denied_by(&out, "analyst-no-select-star");
}

#[test]
fn regression_a_guard_reading_hook_payload_missed_a_drop_past_96_kib() {
    let dir = tempfile::tempdir().unwrap();
    let statement = format!("SELECT '{}'; DROP TABLE orders", "x".repeat(PADDING));
    let payload = sql("sql_execute", &statement);

    let from_env = write(dir.path(), "env.yaml", NO_DROP_FROM_ENV);
    let out = dispatch(&["--hooks", &from_env], &payload, None);
    assert_eq!(
        out["decision"], "allow",
        "the environment copy is cut before the DROP, so the old style missed it: {out}"
    );

    let from_stdin = write(dir.path(), "stdin.yaml", NO_DROP);
    let out = dispatch(&["--hooks", &from_stdin], &payload, None);
    assert_denied_by(&out, "no-drop");
    assert_eq!(out["reason"], "DROP is not allowed");
}

#[test]
fn regression_the_ops_guard_missed_a_recursive_rm_past_96_kib() {
    let command = format!("echo {} && rm -rf /srv/releases", "x".repeat(PADDING));
    let ops = repo("examples/ops/hooks.yaml");
    let out = dispatch(&["--hooks", &ops], &bash(&command), None);
    assert_denied_by(&out, "no-recursive-rm");
}

#[test]
fn the_documented_guard_denies_when_jq_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let hooks = write(dir.path(), "hooks.yaml", NO_DROP);
    let empty = tempfile::tempdir().unwrap();
    let harmless = sql("sql_query", "SELECT 1");
    let out = dispatch(&["--hooks", &hooks], &harmless, Some(empty.path()));
    assert_denied_by(&out, "no-drop");
    let reason = out["reason"].as_str().unwrap();
    assert!(reason.contains("jq exit 127"), "{reason}");
    let out = dispatch(&["--hooks", &hooks], &harmless, None);
    assert_eq!(out["decision"], "allow", "{out}");
}

#[test]
fn the_tested_guard_is_the_documented_one() {
    let doc = std::fs::read_to_string(repo("docs/command-hooks.md")).unwrap();
    assert!(
        doc.contains(&format!("```yaml\n{NO_DROP}```")),
        "docs/command-hooks.md no longer shows the guard these tests run"
    );
}

#[test]
fn the_readme_skill_is_the_tested_fixture() {
    let readme = std::fs::read_to_string(repo("README.md")).unwrap();
    let skill =
        std::fs::read_to_string(repo("crates/cli/tests/fixtures/skills/no-rm/SKILL.md")).unwrap();
    assert!(
        readme.contains(&format!("```markdown\n{skill}```")),
        "README.md no longer shows fixtures/skills/no-rm/SKILL.md"
    );
}

#[test]
fn the_readme_skill_denies_when_grep_is_missing() {
    let skill = repo("crates/cli/tests/fixtures/skills/no-rm/SKILL.md");
    let empty = tempfile::tempdir().unwrap();
    let out = dispatch(&["--skill", &skill], &bash("ls"), Some(empty.path()));
    assert_denied_by(&out, "skill:no-rm/PreToolUse[0]");
    let out = dispatch(&["--skill", &skill], &bash("ls"), None);
    assert_eq!(out["decision"], "allow", "{out}");
}
