//! Hooks written for Claude Code (`.claude/settings.json`, a plugin's `hooks/hooks.json`), through
//! `tollgate check`, `tollgate dispatch --protocol claude-code` and `tollgate run`.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

fn tollgate(args: &[&str], dir: &Path, stdin: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tollgate"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    std::io::Write::write_all(&mut input, stdin.unwrap_or_default().as_bytes()).unwrap();
    drop(input);
    child.wait_with_output().unwrap()
}

fn text(output: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// A `tollgate run` in a fresh folder: `hooks.json` in Claude Code's shape, the scripted
/// model's turns in `script.jsonl`, the workspace `ws` and the trace `trace.jsonl`.
struct Scripted {
    _dir: tempfile::TempDir,
    base: std::path::PathBuf,
}

impl Scripted {
    fn new(hooks: &Value, turns: &[Value]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(base.join("ws")).unwrap();
        std::fs::write(base.join("hooks.json"), hooks.to_string()).unwrap();
        let script: Vec<String> = turns.iter().map(Value::to_string).collect();
        std::fs::write(base.join("script.jsonl"), script.join("\n")).unwrap();
        Self { _dir: dir, base }
    }

    fn trace_path(&self) -> std::path::PathBuf {
        self.base.join("trace.jsonl")
    }

    /// `tollgate run`'s arguments.
    fn args(&self) -> Vec<String> {
        let trace = self.trace_path().display().to_string();
        [
            "run",
            "--hooks",
            "hooks.json",
            "--model",
            "scripted:script.jsonl",
            "--workspace",
            "ws",
            "--trace",
            &trace,
            "--no-approvals",
            "go",
        ]
        .map(str::to_owned)
        .to_vec()
    }

    fn run(&self) -> Output {
        let args = self.args();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        tollgate(&args, &self.base, None)
    }

    /// The trace's lines.
    fn trace(&self) -> Vec<Value> {
        std::fs::read_to_string(self.trace_path())
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

/// A model turn calling the shell tool with `command`.
fn bash_call(id: &str, command: &str) -> Value {
    let arguments = json!({"command": command}).to_string();
    json!({"role": "assistant", "content": null, "tool_calls": [{"id": id, "type": "function",
        "function": {"name": "bash_code_execute_tool", "arguments": arguments}}]})
}

/// A model turn answering `text`.
fn final_answer(text: &str) -> Value {
    json!({"role": "assistant", "content": text})
}

/// A project as Claude Code users have it: `.claude/settings.json` with a Python guard for
/// `Bash` (`"$CLAUDE_PROJECT_DIR"/.claude/hooks/guard.py`, the documented form).
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let claude = dir.path().join(".claude");
    std::fs::create_dir_all(claude.join("hooks")).unwrap();
    std::fs::write(
        claude.join("hooks/guard.py"),
        "import json, sys\nevent = json.load(sys.stdin)\nif event['tool_name'] == 'Bash' and event['tool_input']['command'].startswith('rm '):\n    print('no rm in ' + event['cwd'], file=sys.stderr)\n    sys.exit(2)\n",
    )
    .unwrap();
    let settings = json!({
        "permissions": {"allow": ["Bash(ls)"]},
        "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{
            "type": "command",
            "command": "python3 \"$CLAUDE_PROJECT_DIR\"/.claude/hooks/guard.py",
            "statusMessage": "Checking the command",
            "timeout": 30
        }]}]}
    });
    std::fs::write(claude.join("settings.json"), settings.to_string()).unwrap();
    dir
}

#[test]
fn check_shows_the_hooks_of_a_claude_code_settings_json() {
    let dir = project();
    let root = dir.path().canonicalize().unwrap();
    let output = tollgate(&["check", ".claude/settings.json"], &root, None);
    let out = text(&output);
    assert!(output.status.success(), "{out}");
    assert!(!out.contains("no hooks"), "{out}");
    assert!(
        out.contains("matcher: Bash; priority 0; timeout 30 s"),
        "{out}"
    );
    assert!(
        out.contains("status message: Checking the command"),
        "{out}"
    );
    // `$CLAUDE_PROJECT_DIR` (the directory check runs in) was substituted before vetting.
    let guard = root.join(".claude/hooks/guard.py");
    assert!(
        out.contains(&format!(
            "command: python3 {}  [analyzer: allow]",
            guard.display()
        )),
        "{out}"
    );
    assert!(
        !out.contains("matches none of this runtime's tools"),
        "{out}"
    );

    let output = tollgate(&["check", "--json", ".claude/settings.json"], &root, None);
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let hook = &report["files"][0]["hooks"][0];
    assert_eq!(
        (&hook["dialect"], &hook["matcher"], &hook["status_message"]),
        (
            &json!("claude_code"),
            &json!("Bash"),
            &json!("Checking the command")
        )
    );
}

#[test]
fn check_shows_a_plugins_hooks_json_with_its_literal_script() {
    let dir = tempfile::tempdir().unwrap();
    let plugin = dir.path().canonicalize().unwrap().join("fmt-plugin");
    std::fs::create_dir_all(plugin.join("hooks")).unwrap();
    std::fs::write(
        plugin.join("hooks/hooks.json"),
        r#"{"description": "formats files", "hooks": {"PostToolUse": [{"matcher": "Write|Edit", "hooks": [{"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/scripts/format.sh", "async": true}]}]}}"#,
    )
    .unwrap();
    let output = tollgate(&["check", "fmt-plugin/hooks/hooks.json"], dir.path(), None);
    let out = text(&output);
    assert!(out.contains("(command, source plugin)"), "{out}");
    assert!(
        out.contains(&format!("command: {}/scripts/format.sh", plugin.display())),
        "{out}"
    );
    assert!(out.contains("fire and forget"), "{out}");
    // The literal path is what the missing-program check looks up.
    assert!(
        out.contains(&format!("script `{}/scripts/format.sh`", plugin.display()))
            || out.contains(&format!(
                "`{}/scripts/format.sh` not found",
                plugin.display()
            )),
        "{out}"
    );
}

#[test]
fn dispatch_reads_a_claude_code_payload_as_is() {
    let dir = project();
    let root = dir.path().canonicalize().unwrap();
    let stdin = |command: &str| {
        json!({
            "session_id": "abc", "transcript_path": "/tmp/t.jsonl", "cwd": root,
            "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "Bash",
            "tool_input": {"command": command, "description": "x"}, "tool_use_id": "toolu_1"
        })
        .to_string()
    };
    let args = [
        "dispatch",
        "--protocol",
        "claude-code",
        "--payload",
        "@-",
        "--hooks",
        ".claude/settings.json",
    ];
    let output = tollgate(&args, &root, Some(&stdin("rm -rf build")));
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    let line: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(line["event"], "pre_tool_use");
    assert_eq!(line["decision"], "deny");
    assert_eq!(line["reason"], format!("no rm in {}", root.display()));
    let output = tollgate(&args, &root, Some(&stdin("ls")));
    let line: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(line["decision"], "allow");

    let mut wrong = args.to_vec();
    wrong.extend(["--event", "PostToolUse"]);
    let output = tollgate(&wrong, &root, Some(&stdin("ls")));
    assert_eq!(output.status.code(), Some(2), "{}", text(&output));
    let output = tollgate(&args, &root, Some(r#"{"hook_event_name": "Notification"}"#));
    assert_eq!(output.status.code(), Some(2), "{}", text(&output));
}

#[test]
fn a_run_shows_status_messages_and_a_stop_hook_keeping_it_working() {
    let hooks = json!({"hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{
            "type": "command", "statusMessage": "Looking at the command",
            "command": "jq -c '{hookSpecificOutput: {hookEventName: .hook_event_name, additionalContext: (.permission_mode + \" \" + .transcript_path)}}'"
        }]}],
        "Stop": [{"hooks": [{"type": "command",
            "command": "jq -e .stop_hook_active >/dev/null; case $? in 0) exit 0;; 1) echo '{\"decision\": \"block\", \"reason\": \"check the output first\", \"systemMessage\": \"asked for one more turn\"}';; *) exit 3;; esac"
        }]}]
    }});
    let run = Scripted::new(
        &hooks,
        &[
            final_answer("done"),
            bash_call("c1", "echo checked"),
            final_answer("checked, done"),
        ],
    );
    let trace = run.trace_path();
    let output = run.run();
    let out = text(&output);
    assert_eq!(output.status.code(), Some(0), "{out}");
    assert!(out.contains("· Looking at the command"), "{out}");
    assert!(
        out.contains("↻ a hook keeps the session working: check the output first"),
        "{out}"
    );
    assert!(
        out.contains("ℹ user_config:hooks.json/Stop[0].hooks[0]: asked for one more turn"),
        "{out}"
    );
    // The hook saw the run's permission mode and trace file.
    assert!(
        out.contains(&format!("[hook context] dontAsk {}", trace.display())),
        "{out}"
    );
    assert!(out.contains("checked, done"), "{out}");
}

#[test]
fn an_async_hook_never_holds_a_call_and_its_context_reaches_a_later_turn() {
    // The hook waits until the second call has started, then blocks with exit 2: waited for,
    // it would hold the first call forever, and its block would deny it.
    let hooks = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{
        "type": "command", "asyncRewake": true, "if": "Bash(echo one)",
        "command": "while [ ! -e \"$CLAUDE_PROJECT_DIR/go\" ]; do sleep 0.05; done; echo '3 tests failed' >&2; exit 2"
    }]}]}});
    let run = Scripted::new(
        &hooks,
        &[
            bash_call("c1", "echo one"),
            bash_call("c2", "touch go; sleep 2; echo two"),
            bash_call("c3", "echo three"),
            final_answer("done"),
        ],
    );
    let output = run.run();
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    let lines = run.trace();
    let observations: Vec<(&str, &str, &str)> = lines
        .iter()
        .filter(|l| l["type"] == "observation")
        .map(|l| {
            (
                l["tool_call_id"].as_str().unwrap(),
                l["status"].as_str().unwrap(),
                l["content"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(observations.len(), 3, "{observations:?}");
    // The first call ran although the hook blocked, and nothing of the hook was in its result.
    assert_eq!(observations[0].1, "ok", "{observations:?}");
    assert!(observations[0].2.contains("one"), "{observations:?}");
    let told: Vec<&str> = observations
        .iter()
        .filter(|o| o.2.contains("[hook context] 3 tests failed"))
        .map(|o| o.0)
        .collect();
    assert!(told == ["c2"] || told == ["c3"], "{observations:?}");
    // The dispatch recorded the run as detached; its end came in a second line.
    let runs: Vec<&Value> = lines
        .iter()
        .filter(|l| l["type"] == "hook_run" && l["tool_call_id"] == "c1")
        .collect();
    assert!(runs.iter().any(|r| r["status"] == "detached"), "{runs:?}");
    assert!(
        runs.iter().any(|r| r["detached"] == true
            && r["decision"] == "allow"
            && r["additional_context"] == "3 tests failed"),
        "{runs:?}"
    );
}

#[test]
fn a_status_message_shows_while_its_hook_runs() {
    use std::io::BufRead;

    // The hook runs until the test has seen its message: shown only once it ended, the message
    // would come after the hook's deadline, and its run would be `timed_out`.
    let hooks = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{
        "type": "command", "statusMessage": "Waiting for the go", "timeout": 20,
        "command": "while [ ! -e \"$CLAUDE_PROJECT_DIR/go\" ]; do sleep 0.05; done"
    }]}]}});
    let run = Scripted::new(&hooks, &[bash_call("c1", "echo hi"), final_answer("done")]);
    let mut child = Command::new(env!("CARGO_BIN_EXE_tollgate"))
        .args(run.args())
        .current_dir(&run.base)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut seen = String::new();
    loop {
        let mut line = String::new();
        let read = stdout.read_line(&mut line).unwrap();
        assert!(read > 0, "the run ended without the message: {seen}");
        seen.push_str(&line);
        if line.contains("· Waiting for the go") {
            break;
        }
    }
    std::fs::write(run.base.join("ws/go"), "").unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut rest).unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "{seen}{rest}");
    let runs: Vec<Value> = run
        .trace()
        .into_iter()
        .filter(|l| l["type"] == "hook_run")
        .collect();
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(runs[0]["status"], "completed", "{runs:?}");
    assert!(rest.contains("done"), "{rest}");
}

#[test]
fn a_run_says_it_waits_for_background_hooks_and_ctrl_c_stops_the_wait() {
    use std::io::BufRead;

    // A session-end hook that never ends (fire_and_forget, in a hook file's own shape) is
    // waited for; an `async` hook that never ends is not.
    let never = "while [ ! -e \"$CLAUDE_PROJECT_DIR/never\" ]; do sleep 0.05; done";
    let hooks = json!({"hooks": {
        "SessionEnd": [{"script": "while [ ! -e never ]; do sleep 0.05; done",
            "fire_and_forget": true, "timeout": 20}],
        "PostToolUse": [{"matcher": "Bash", "hooks": [{
            "type": "command", "async": true, "command": never
        }]}]
    }});
    let run = Scripted::new(&hooks, &[bash_call("c1", "echo hi"), final_answer("done")]);
    let mut child = Command::new(env!("CARGO_BIN_EXE_tollgate"))
        .args(run.args())
        .current_dir(&run.base)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut seen = String::new();
    loop {
        let mut line = String::new();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "{seen}");
        seen.push_str(&line);
        if line.contains("waiting for background hooks to finish") {
            break;
        }
    }
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap());
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    let status = child.wait().unwrap();
    // The session had completed; the hooks were stopped, so neither reported an end.
    assert!(status.success(), "{status:?}");
    let ended: Vec<Value> = run
        .trace()
        .into_iter()
        .filter(|l| l["type"] == "hook_run" && l["detached"] == true)
        .collect();
    assert!(ended.is_empty(), "{ended:?}");
}

#[test]
fn a_run_does_not_wait_for_an_async_hook_after_the_session() {
    let never = "while [ ! -e \"$CLAUDE_PROJECT_DIR/never\" ]; do sleep 0.05; done";
    let hooks = json!({"hooks": {"PostToolUse": [{"matcher": "Bash", "hooks": [{
        "type": "command", "async": true, "command": never
    }]}]}});
    let run = Scripted::new(&hooks, &[bash_call("c1", "echo hi"), final_answer("done")]);
    // Waited for, the hook would hold the run for its 600 s and the test would hang.
    let output = run.run();
    let out = text(&output);
    assert_eq!(output.status.code(), Some(0), "{out}");
    assert!(!out.contains("waiting for background hooks"), "{out}");
}

#[test]
fn an_async_rewake_block_wakes_a_session_that_finished_meanwhile() {
    // The hook of the first call blocks a second after the second call ran: by then the model
    // has answered, and the session waits for it before it ends.
    let hooks = json!({"hooks": {"PostToolUse": [{"matcher": "Bash", "hooks": [{
        "type": "command", "asyncRewake": true, "if": "Bash(echo one)",
        "command": "while [ ! -e \"$CLAUDE_PROJECT_DIR/go\" ]; do sleep 0.05; done; sleep 1; echo 'the tests fail' >&2; exit 2"
    }]}]}});
    let run = Scripted::new(
        &hooks,
        &[
            bash_call("c1", "echo one"),
            bash_call("c2", "touch go"),
            final_answer("done"),
            final_answer("fixed the tests"),
        ],
    );
    let output = run.run();
    let out = text(&output);
    assert_eq!(output.status.code(), Some(0), "{out}");
    assert!(
        out.contains("⋯ waiting: asyncRewake hooks still run"),
        "{out}"
    );
    assert!(
        out.contains("↻ a hook keeps the session working: the tests fail"),
        "{out}"
    );
    let lines = run.trace();
    let answers: Vec<&Value> = lines
        .iter()
        .filter(|l| l["type"] == "answer")
        .map(|l| &l["content"])
        .collect();
    assert_eq!(answers, [&json!("done"), &json!("fixed the tests")]);
    // The context reached no observation: it came with the wake.
    assert!(
        lines
            .iter()
            .filter(|l| l["type"] == "observation")
            .all(|l| !l["content"].as_str().unwrap().contains("the tests fail")),
        "{lines:?}"
    );
}
