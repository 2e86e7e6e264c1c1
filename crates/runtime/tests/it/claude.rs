//! Hooks written for Claude Code, in real runs with the scripted model: they see `Bash` and
//! `tool_input.command`, block and rewrite the runtime's calls, run from a plugin's folder,
//! set the shell's environment, and live next to native hooks that keep the native payload.

use std::path::Path;

use serde_json::json;
use tollgate_runtime::{EndStatus, Services};

use crate::support::*;

/// A Claude Code guard as people write them: stdin JSON, `tool_name == "Bash"`, exit 2.
const PY_GUARD: &str = r#"import json, sys

event = json.load(sys.stdin)
if event.get("tool_name") == "Bash" and "rm -rf" in event["tool_input"].get("command", ""):
    print("rm -rf is not allowed: " + event["hook_event_name"], file=sys.stderr)
    sys.exit(2)
sys.exit(0)
"#;

fn agent(dir: &Path, extra: &str, script: &[String]) -> std::path::PathBuf {
    let text = format!(
        "name: worker\nmodel: scripted:script.jsonl\ntools: [bash_code_execute_tool, read_file, write_file]\n{extra}"
    );
    write(
        dir,
        &[("agent.yaml", &text), ("script.jsonl", &script.join("\n"))],
    );
    dir.join("agent.yaml")
}

fn observations(lines: &[serde_json::Value]) -> Vec<(String, String)> {
    of(lines, "observation")
        .iter()
        .map(|o| {
            (
                o["status"].as_str().unwrap_or_default().to_owned(),
                o["content"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

#[tokio::test]
async fn a_python_guard_in_a_skills_frontmatter_blocks_the_shell_tool() {
    let (_tmp, dir) = agent_dir();
    write(
        &dir,
        &[
            (
                "skills/guard/SKILL.md",
                "---\nname: guard\nargument-hint: [path] [mode]\nhooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks:\n        - type: command\n          command: python3 \"${CLAUDE_SKILL_DIR}/guard.py\"\n---\n# Guard\n",
            ),
            ("skills/guard/guard.py", PY_GUARD),
            ("ws/keep.txt", "precious"),
        ],
    );
    let script = [
        call(
            "c1",
            "bash_code_execute_tool",
            json!({"command": "rm -rf keep.txt"}),
        ),
        call(
            "c2",
            "bash_code_execute_tool",
            json!({"command": "cat keep.txt"}),
        ),
        answer("done"),
    ];
    let path = agent(&dir, "skills: [skills/guard/SKILL.md]\n", &script);
    let (report, lines) = run_agent(&path, "[use guard] clean up", &Services::default()).await;
    assert_eq!(report.status, EndStatus::Completed, "{report:?}");
    let seen = observations(&lines);
    assert_eq!(seen[0].0, "denied", "{seen:?}");
    assert!(
        seen[0].1.contains("rm -rf is not allowed: PreToolUse"),
        "{seen:?}"
    );
    assert_eq!(seen[1], ("ok".to_owned(), seen[1].1.clone()));
    assert!(seen[1].1.contains("precious"), "{seen:?}");
    assert_eq!(
        std::fs::read_to_string(dir.join("ws/keep.txt")).unwrap(),
        "precious"
    );
    // The frontmatter's broken `argument-hint` cost only that field.
    let warnings = of(&lines, "warning");
    assert!(
        warnings.iter().any(|w| w["entry"] == "argument-hint"),
        "{warnings:?}"
    );
}

#[tokio::test]
async fn a_jq_hook_rewrites_the_command_through_updated_input() {
    let (_tmp, dir) = agent_dir();
    write(
        &dir,
        &[(
            "hooks.json",
            r#"{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command",
               "command": "jq -c '{hookSpecificOutput: {hookEventName: \"PreToolUse\", permissionDecision: \"allow\", updatedInput: {command: (.tool_input.command | sub(\"original\"; \"rewritten\"))}}}'"}]}]}}"#,
        )],
    );
    let script = [
        call(
            "c1",
            "bash_code_execute_tool",
            json!({"command": "echo original"}),
        ),
        answer("done"),
    ];
    let path = agent(&dir, "hooks: [hooks.json]\n", &script);
    let (report, lines) = run_agent(&path, "go", &Services::default()).await;
    assert_eq!(report.status, EndStatus::Completed, "{report:?}");
    let pre = dispatches(&lines, "pre_tool_use");
    assert_eq!(
        pre[0]["modified_args"],
        json!({"command": "echo rewritten"})
    );
    let seen = observations(&lines);
    assert!(
        seen[0].1.contains("\"stdout\":\"rewritten\\n\""),
        "{seen:?}"
    );
}

#[tokio::test]
async fn a_plugins_hook_runs_from_its_root_vetted_as_the_literal_path() {
    let (_tmp, dir) = agent_dir();
    write(
        &dir,
        &[
            (
                "plugin/hooks/hooks.json",
                r#"{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "\"${CLAUDE_PLUGIN_ROOT}/hooks/x.sh\""}]}]}}"#,
            ),
            (
                "plugin/hooks/x.sh",
                "#!/bin/bash\necho \"x.sh ran as $0 for $CLAUDE_PLUGIN_ROOT\" >&2\nexit 2\n",
            ),
        ],
    );
    let script_path = dir.join("plugin/hooks/x.sh");
    std::fs::set_permissions(
        &script_path,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let script = [
        call("c1", "bash_code_execute_tool", json!({"command": "ls"})),
        answer("done"),
    ];
    let path = agent(&dir, "hooks: [plugin/hooks/hooks.json]\n", &script);
    let (_, lines) = run_agent(&path, "go", &Services::default()).await;
    let root = dir.canonicalize().unwrap().join("plugin");
    let seen = observations(&lines);
    assert_eq!(seen[0].0, "denied", "{seen:?}");
    // bash ran the substituted, literal path (`$0`), not a variable the analyzer never saw.
    let expected = format!(
        "x.sh ran as {}/hooks/x.sh for {}",
        root.display(),
        root.display()
    );
    assert!(seen[0].1.contains(&expected), "{seen:?}");
    let runs = of(&lines, "hook_run");
    assert!(runs.iter().any(|r| r["hook"] == "plugin:plugin/PreToolUse[0].hooks[0]" && r["source"] == "plugin"), "{runs:?}");
}

#[tokio::test]
async fn native_and_claude_code_hooks_each_see_their_own_payload_in_one_run() {
    let (_tmp, dir) = agent_dir();
    write(
        &dir,
        &[(
            "hooks.yaml",
            concat!(
                "hooks:\n",
                "  PreToolUse:\n",
                "    - name: native\n",
                "      tools: [bash_*]\n",
                "      script: |-\n",
                "        jq -c '{additional_context: (\"native saw \" + .tool_name + \" \" + .tool_input.command)}'\n",
                "    - matcher: Bash\n",
                "      hooks:\n",
                "        - type: command\n",
                "          command: |-\n",
                "            jq -c '{hookSpecificOutput: {hookEventName: .hook_event_name, additionalContext: (\"claude saw \" + .tool_name + \" \" + .tool_input.command)}}'\n",
            ),
        )],
    );
    let script = [
        call(
            "c1",
            "bash_code_execute_tool",
            json!({"command": "echo hi"}),
        ),
        answer("done"),
    ];
    let path = agent(&dir, "hooks: [hooks.yaml]\n", &script);
    let (report, lines) = run_agent(&path, "go", &Services::default()).await;
    assert_eq!(report.status, EndStatus::Completed, "{report:?}");
    let pre = dispatches(&lines, "pre_tool_use");
    assert_eq!(
        pre[0]["additional_context"],
        json!([
            "native saw bash_code_execute_tool echo hi",
            "claude saw Bash echo hi"
        ])
    );
}

#[tokio::test]
async fn a_session_start_hooks_env_file_reaches_later_shell_commands() {
    let (_tmp, dir) = agent_dir();
    write(
        &dir,
        &[(
            "hooks.yaml",
            concat!(
                "hooks:\n",
                "  SessionStart:\n",
                "    - hooks:\n",
                "        - type: command\n",
                "          command: echo 'export GREETING=hello-from-hook' >> \"$CLAUDE_ENV_FILE\"; echo 'export PATH=/nowhere' >> \"$CLAUDE_ENV_FILE\"; echo 'the deploy window is closed'\n",
            ),
        )],
    );
    let script = [
        call(
            "c1",
            "bash_code_execute_tool",
            json!({"command": "echo \"$GREETING\"; command -v ls"}),
        ),
        answer("done"),
    ];
    let path = agent(&dir, "hooks: [hooks.yaml]\n", &script);
    let (report, lines) = run_agent(&path, "go", &Services::default()).await;
    assert_eq!(report.status, EndStatus::Completed, "{report:?}");
    let seen = observations(&lines);
    assert!(seen[0].1.contains("hello-from-hook"), "{seen:?}");
    // `PATH` is refused: the analyzer vetted `ls` as the system's.
    assert!(seen[0].1.contains("/bin/ls"), "{seen:?}");
    let start = dispatches(&lines, "session_start");
    assert_eq!(
        start[0]["additional_context"],
        json!(["the deploy window is closed"])
    );
}

/// A Stop hook in Claude Code's style: block once, then let the session end when
/// `stop_hook_active` says it already did.
const STOP_ONCE: &str = r#"hooks:
  Stop:
    - hooks:
        - type: command
          command: |-
            jq -e .stop_hook_active >/dev/null; case $? in 0) exit 0;; 1) echo '{"decision": "block", "reason": "run the tests first"}';; *) exit 3;; esac
"#;

#[tokio::test]
async fn a_stop_hook_that_blocks_once_keeps_the_run_going_one_more_turn() {
    let (_tmp, dir) = agent_dir();
    write(&dir, &[("hooks.yaml", STOP_ONCE)]);
    let script = [
        answer("done, I think"),
        call(
            "c1",
            "bash_code_execute_tool",
            json!({"command": "echo tests pass"}),
        ),
        answer("tests pass, done"),
    ];
    let path = agent(&dir, "hooks: [hooks.yaml]\n", &script);
    let (report, lines) = run_agent(&path, "go", &Services::default()).await;
    assert_eq!(report.status, EndStatus::Completed, "{report:?}");
    assert_eq!(report.turns, 3);
    assert_eq!(report.answer.as_deref(), Some("tests pass, done"));
    let kept = of(&lines, "keep_working");
    assert_eq!(kept.len(), 1);
    assert_eq!(kept[0]["reason"], "run the tests first");
    // session_end fired for each ending the model reached: the one a hook refused, then the
    // real one; the trace's own `session_end` step is written once.
    let ends = dispatches(&lines, "session_end");
    assert_eq!(ends.len(), 2);
    assert_eq!(of(&lines, "session_end").len(), 1);
    assert_eq!(of(&lines, "observation").len(), 1);
}

#[tokio::test]
async fn a_stop_hook_that_always_blocks_is_capped() {
    let (_tmp, dir) = agent_dir();
    write(
        &dir,
        &[(
            "hooks.yaml",
            "hooks:\n  Stop:\n    - hooks:\n        - {type: command, command: 'echo never done >&2; exit 2'}\n",
        )],
    );
    let script: Vec<String> = (0..12).map(|i| answer(&format!("answer {i}"))).collect();
    let path = agent(&dir, "max_turns: 20\nhooks: [hooks.yaml]\n", &script);
    let (report, lines) = run_agent(&path, "go", &Services::default()).await;
    assert_eq!(report.status, EndStatus::Completed, "{report:?}");
    assert_eq!(of(&lines, "keep_working").len(), 8);
    assert_eq!(report.turns, 9);
    let warnings = of(&lines, "warning");
    assert!(
        warnings.iter().any(|w| w["message"]
            .as_str()
            .unwrap_or_default()
            .contains("9 times in a row")),
        "{warnings:?}"
    );
}

/// Claude Code's `continue: false` on a tool call: the call is withheld and the session ends
/// there (no further model turn), whatever the model had planned.
#[tokio::test]
async fn a_pre_tool_use_continue_false_ends_the_session_after_the_call() {
    let (_tmp, dir) = agent_dir();
    write(
        &dir,
        &[(
            "hooks.yaml",
            "hooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks:\n        - type: command\n          command: |-\n            jq -e '.tool_input.command | contains(\"halt\")' >/dev/null && echo '{\"continue\": false, \"stopReason\": \"emergency stop\"}'; exit 0\n",
        )],
    );
    let script = [
        call(
            "c1",
            "bash_code_execute_tool",
            json!({"command": "echo halt > halted.txt"}),
        ),
        answer("never asked for"),
    ];
    let path = agent(&dir, "hooks: [hooks.yaml]\n", &script);
    let (report, lines) = run_agent(&path, "go", &Services::default()).await;
    assert_eq!(report.status, EndStatus::Completed, "{report:?}");
    assert_eq!(report.turns, 1, "{lines:#?}");
    assert_eq!(report.answer, None);
    let seen = observations(&lines);
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].0, "denied");
    assert!(seen[0].1.ends_with(": emergency stop"), "{seen:?}");
    let ended = of(&lines, "hook_ended_session");
    assert_eq!(ended.len(), 1);
    assert_eq!(ended[0]["reason"], "emergency stop");
    assert_eq!(ended[0]["event"], "pre_tool_use");
    assert!(!dir.join("ws/halted.txt").exists());
}

/// A `Stop` hook's `continue: false` ends the session even when another `Stop` hook blocks.
#[tokio::test]
async fn a_stop_hooks_continue_false_wins_over_another_stop_hooks_block() {
    let (_tmp, dir) = agent_dir();
    write(
        &dir,
        &[(
            "hooks.yaml",
            "hooks:\n  Stop:\n    - hooks:\n        - {type: command, command: 'echo not yet >&2; exit 2'}\n        - {type: command, command: 'echo {\\\"continue\\\": false}'}\n",
        )],
    );
    let script = [answer("first"), answer("second")];
    let path = agent(&dir, "hooks: [hooks.yaml]\n", &script);
    let (report, lines) = run_agent(&path, "go", &Services::default()).await;
    assert_eq!(report.status, EndStatus::Completed, "{report:?}");
    assert_eq!(report.turns, 1);
    assert_eq!(report.answer.as_deref(), Some("first"));
    assert!(of(&lines, "keep_working").is_empty());
    assert_eq!(of(&lines, "hook_ended_session").len(), 1);
}
