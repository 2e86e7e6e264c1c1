//! Control characters in hook names and file names never reach the terminal raw, whichever
//! command prints them: `check` (text and JSON), `dispatch`, `replay` and `run`.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

/// A hook name with an ANSI colour sequence and a newline (which could forge a line of output).
const NAME: &str = "ev\u{1b}[31mil\nguard";
/// How every command shows it in text.
const SHOWN: &str = r"ev\u{1b}[31mil\nguard";
/// A failing hook's name, which WARN logs on stderr show.
const FAILING: &str = "bro\u{1b}[31mken\nhook";
const FAILING_SHOWN: &str = r"bro\u{1b}[31mken\nhook";

/// A hook file, itself named with controls, whose first hook fails (a WARN log) and whose
/// second denies every shell call.
fn hooks(dir: &Path) -> String {
    let path = dir.join("hooks\u{1b}[2J\n.yaml");
    std::fs::write(
        &path,
        "hooks:\n  PreToolUse:\n    - name: \"bro\\e[31mken\\nhook\"\n      script: exit 1\n    - name: \"ev\\e[31mil\\nguard\"\n      script: echo no >&2; exit 2\n      tools: bash_code_execute_tool\n",
    )
    .unwrap();
    path.display().to_string()
}

fn tollgate(args: &[&str]) -> (Output, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_tollgate"))
        .args(args)
        .env_remove("COLUMNS")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8(output.stdout.clone()).unwrap();
    let stderr = String::from_utf8(output.stderr.clone()).unwrap();
    (output, stdout, stderr)
}

/// Fails when `text` holds ESC or the names' raw newline.
fn assert_escaped(text: &str) {
    assert!(!text.contains('\u{1b}'), "raw ESC: {text:?}");
    for name in [NAME, FAILING] {
        let (head, _) = name.split_once('\n').unwrap();
        let raw = format!("{}\n", head.replace('\u{1b}', "\\u{1b}"));
        assert!(!text.contains(&raw), "raw newline after {head:?}: {text:?}");
    }
}

#[test]
fn check_escapes_hook_and_file_names_in_text_and_keeps_them_in_json() {
    let dir = tempfile::tempdir().unwrap();
    let file = hooks(dir.path());
    let (output, text, _) = tollgate(&["check", &file]);
    assert_eq!(output.status.code(), Some(0), "{text}");
    assert_escaped(&text);
    assert!(
        text.contains(&format!("pre_tool_use {SHOWN} (command")),
        "{text}"
    );
    assert!(text.contains(r"hooks\u{1b}[2J\n.yaml"), "{text}");
    let (output, json, _) = tollgate(&["check", "--json", &file]);
    assert_eq!(output.status.code(), Some(0));
    assert_escaped(&json);
    let json: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(json["files"][0]["path"], file);
    assert_eq!(json["files"][0]["hooks"][1]["name"], NAME);
}

#[test]
fn dispatch_escapes_hook_names_on_stdout_and_in_logs() {
    let dir = tempfile::tempdir().unwrap();
    let file = hooks(dir.path());
    let payload = r#"{"tool_name":"bash_code_execute_tool","tool_input":{"command":"ls"}}"#;
    let (output, stdout, stderr) = tollgate(&[
        "dispatch",
        "--hooks",
        &file,
        "--event",
        "PreToolUse",
        "--payload",
        payload,
    ]);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_escaped(&stdout);
    assert_escaped(&stderr);
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    let line: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(line["decided_by"], NAME);
    assert_eq!(line["hook_runs"][0]["name"], FAILING);
    assert!(stderr.contains(FAILING_SHOWN), "{stderr}");
}

#[test]
fn replay_escapes_hook_names_in_the_table_and_in_logs() {
    let dir = tempfile::tempdir().unwrap();
    let file = hooks(dir.path());
    let transcript = dir.path().join("session.jsonl");
    std::fs::write(
        &transcript,
        r#"{"type":"assistant","sessionId":"s","message":{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}}]}}"#,
    )
    .unwrap();
    let transcript = transcript.display().to_string();
    let (output, stdout, stderr) = tollgate(&["replay", &transcript, "--hooks", &file]);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_escaped(&stdout);
    assert_escaped(&stderr);
    assert!(stdout.contains(SHOWN), "{stdout}");
    assert_eq!(
        stdout.lines().count(),
        4,
        "header, 1 row, blank, summary: {stdout}"
    );
    assert!(stderr.contains(FAILING_SHOWN), "{stderr}");
    let (_, json, _) = tollgate(&["replay", &transcript, "--hooks", &file, "--json"]);
    assert_escaped(&json);
    let json: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(json["calls"][0]["hook"], NAME);
}

#[test]
fn run_escapes_hook_names_and_the_paths_it_was_given() {
    let dir = tempfile::tempdir().unwrap();
    hooks(dir.path());
    std::fs::write(
        dir.path().join("script.jsonl"),
        r#"{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"bash_code_execute_tool","arguments":{"command":"ls"}}}]}
{"role":"assistant","content":"done"}"#,
    )
    .unwrap();
    let agent = dir.path().join("agent.yaml");
    std::fs::write(
        &agent,
        "name: small\nmodel: scripted:script.jsonl\ntools: [bash_code_execute_tool]\nhooks: [\"hooks\\e[2J\\n.yaml\"]\n",
    )
    .unwrap();
    let ws = dir.path().join("ws\u{1b}[31m\nx").display().to_string();
    let trace = dir
        .path()
        .join("trace\u{1b}[31m\n.jsonl")
        .display()
        .to_string();
    let (output, stdout, stderr) = tollgate(&[
        "run",
        "--agent",
        &agent.display().to_string(),
        "--workspace",
        &ws,
        "--trace",
        &trace,
        "go",
    ]);
    assert_eq!(output.status.code(), Some(0), "{stdout}\n{stderr}");
    assert_escaped(&stdout);
    assert_escaped(&stderr);
    // `run` shows line breaks in names and reasons as ` ⏎ `.
    assert!(
        stdout.contains(r"deny by hook `ev\u{1b}[31mil ⏎ guard`"),
        "{stdout}"
    );
    // The failed hook is shown once, under its dispatch.
    assert!(stdout.contains(r"bro\u{1b}[31mken ⏎ hook"), "{stdout}");
    // The closing line names the workspace and the trace, escaped.
    assert!(stdout.contains(r"ws\u{1b}[31m\nx"), "{stdout}");
    assert!(stdout.contains(r"trace\u{1b}[31m\n.jsonl"), "{stdout}");
}
