//! Claude Code's `SubagentStop` block in a delegation: the caller's hook keeps the sub-agent
//! working, with the reason as its next message, `stop_hook_active` set, and a cap.

use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};
use tollgate_runtime::trace::{TraceLine, TraceSink};
use tollgate_runtime::{CancellationToken, EndStatus, Services};

use crate::support::*;

/// A parent with a Claude Code `SubagentStop` hook (`command`) delegating to `child`, whose
/// model answers `child_answers` in turn.
fn family(dir: &Path, command: &str, child_answers: &[&str]) {
    family_with(dir, command, child_answers, 60);
}

/// [`family`] with the sub-agent's `timeout_seconds`; the hook says `Stopping` as it starts.
fn family_with(dir: &Path, command: &str, child_answers: &[&str], timeout: u64) {
    let hook = json!({"type": "command", "command": command, "statusMessage": "Stopping"});
    let hooks = json!({"hooks": {"SubagentStop": [{"hooks": [hook]}]}});
    let parent = format!(
        "name: parent\nmodel: scripted:parent.jsonl\ntools: [call_agent]\n\
         subagents:\n  child: {{file: child.yaml, timeout_seconds: {timeout}}}\nhooks: [hooks.json]\n"
    );
    let child = "name: child\nmodel: scripted:child.jsonl\ntools: [bash_code_execute_tool]\n";
    let parent_script = [
        call(
            "p1",
            "call_agent",
            json!({"agent": "child", "task": "list"}),
        ),
        answer("parent done"),
    ];
    let child_script: Vec<String> = child_answers.iter().map(|a| answer(a)).collect();
    write(
        dir,
        &[
            ("hooks.json", &hooks.to_string()),
            ("parent.yaml", &parent),
            ("child.yaml", child),
            ("parent.jsonl", &parent_script.join("\n")),
            ("child.jsonl", &child_script.join("\n")),
        ],
    );
}

/// What the parent's `call_agent` observed.
fn delegation_result(lines: &[Value]) -> String {
    of(lines, "observation")
        .iter()
        .find(|o| o["tool_call_id"] == "p1")
        .and_then(|o| o["content"].as_str())
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn a_subagent_stop_block_keeps_the_sub_agent_working_once() {
    let (_tmp, dir) = agent_dir();
    // Blocks unless the sub-agent was already kept working, as Claude Code's docs advise.
    let command = "jq -e .stop_hook_active >/dev/null && exit 0; \
                   echo '{\"decision\": \"block\", \"reason\": \"also count them\"}'";
    family(&dir, command, &["three files", "three files, 3 in all"]);
    let (report, lines) = run_agent(&dir.join("parent.yaml"), "go", &Services::default()).await;
    assert_eq!(report.status, EndStatus::Completed, "{report:?}");
    assert!(
        delegation_result(&lines).contains("three files, 3 in all"),
        "{lines:#?}"
    );
    let stops = dispatches(&lines, "subagent_stop");
    assert_eq!(stops.len(), 2, "{stops:#?}");
    let kept = of(&lines, "keep_working");
    assert_eq!(kept.len(), 1, "{kept:#?}");
    assert_eq!(kept[0]["reason"], "also count them");
    assert_eq!(kept[0]["continued"], 1);
    assert!(kept[0]["task_id"].as_str().is_some(), "{kept:#?}");
    // The sub-agent answered twice, the second time after the reason.
    let child_turns: Vec<_> = of(&lines, "model_turn")
        .into_iter()
        .filter(|t| t["agent"] == "child")
        .collect();
    assert_eq!(child_turns.len(), 2, "{child_turns:#?}");
    // The last `subagent_stop` step says it completed after one continuation.
    let steps = of(&lines, "subagent_stop");
    let last = steps.last().unwrap();
    assert_eq!(
        (&last["status"], &last["continued"], &last["result"]),
        (
            &json!("completed"),
            &json!(1),
            &json!("three files, 3 in all")
        )
    );
}

#[tokio::test]
async fn a_subagent_stop_hook_that_always_blocks_is_capped() {
    let (_tmp, dir) = agent_dir();
    let answers: Vec<String> = (1..=12).map(|n| format!("answer {n}")).collect();
    let answers: Vec<&str> = answers.iter().map(String::as_str).collect();
    family(
        &dir,
        "echo '{\"decision\": \"block\", \"reason\": \"more\"}'",
        &answers,
    );
    let (report, lines) = run_agent(&dir.join("parent.yaml"), "go", &Services::default()).await;
    assert_eq!(report.status, EndStatus::Completed, "{report:?}");
    // One answer, then eight continuations: the ninth answer is the result.
    assert!(
        delegation_result(&lines).contains("answer 9"),
        "{}",
        delegation_result(&lines)
    );
    assert_eq!(of(&lines, "keep_working").len(), 8);
    let warnings = of(&lines, "warning");
    assert!(
        warnings.iter().any(|w| w["entry"] == "hooks.SubagentStop"
            && w["message"].as_str().unwrap().contains("9 times in a row")),
        "{warnings:#?}"
    );
}

/// The caller's hook blocks once, unless the sub-agent was kept working already.
const BLOCK_ONCE: &str = "jq -e .stop_hook_active >/dev/null && exit 0; \
                          echo '{\"decision\": \"block\", \"reason\": \"again\"}'";

#[tokio::test]
async fn a_sub_agent_that_fails_after_a_block_still_says_it_was_kept_working() {
    let (_tmp, dir) = agent_dir();
    // One answer only: kept working, the sub-agent's model has nothing more to say and fails.
    family(&dir, BLOCK_ONCE, &["first"]);
    let (report, lines) = run_agent(&dir.join("parent.yaml"), "go", &Services::default()).await;
    assert_eq!(report.status, EndStatus::Completed, "{report:?}");
    let steps = of(&lines, "subagent_stop");
    let last = steps.last().unwrap();
    assert_eq!(
        (&last["status"], &last["continued"]),
        (&json!("failed"), &json!(1)),
        "{steps:#?}"
    );
}

#[tokio::test]
async fn a_force_stop_drops_the_stop_hooks_it_interrupts_and_keeps_the_answer() {
    let (_tmp, dir) = agent_dir();
    // Force-stopped at 3 s (3 × timeout_seconds): the hook would block at 4 s, within the
    // force-stop's grace. The sub-agent had answered: the answer stands.
    let command = "[ -e \"$HOOK_SCRATCH_DIR/seen\" ] && exit 0; touch \"$HOOK_SCRATCH_DIR/seen\"; \
                   sleep 4; echo '{\"decision\": \"block\", \"reason\": \"again\"}'";
    family_with(&dir, command, &["first", "second"], 1);
    let (report, lines) = run_agent(&dir.join("parent.yaml"), "go", &Services::default()).await;
    assert_eq!(report.status, EndStatus::Completed, "{report:?}");
    assert!(of(&lines, "keep_working").is_empty(), "{lines:#?}");
    assert!(
        delegation_result(&lines).contains("first"),
        "{}",
        delegation_result(&lines)
    );
    let steps = of(&lines, "subagent_stop");
    assert_eq!(steps.last().unwrap()["status"], "completed", "{steps:#?}");
}

/// Cancels the run when a hook says it starts.
struct CancelOnStatus(CancellationToken);

impl TraceSink for CancelOnStatus {
    fn record(&self, line: &TraceLine) {
        if line.step.kind == "hook_status" {
            self.0.cancel();
        }
    }
}

#[tokio::test]
async fn a_cancel_during_the_stop_hooks_cancels_the_delegation() {
    let (_tmp, dir) = agent_dir();
    let command = "[ \"$(jq -r .last_assistant_message)\" = \"\" ] && exit 0; sleep 30";
    family(&dir, command, &["first"]);
    let cancel = CancellationToken::new();
    let sink: Arc<dyn TraceSink> = Arc::new(CancelOnStatus(cancel.clone()));
    let (report, collect) = run_traced(
        &dir.join("parent.yaml"),
        "go",
        &Services::default(),
        cancel,
        vec![sink],
    )
    .await;
    let lines = json_lines(&collect);
    assert_eq!(report.status, EndStatus::Cancelled, "{report:?}");
    let observation = of(&lines, "observation")
        .into_iter()
        .find(|o| o["tool_call_id"] == "p1")
        .cloned()
        .unwrap();
    assert_eq!(observation["status"], "cancelled", "{observation:#?}");
    let steps = of(&lines, "subagent_stop");
    assert_eq!(steps.last().unwrap()["status"], "cancelled", "{steps:#?}");
    assert_eq!(dispatches(&lines, "post_tool_use_cancelled").len(), 1);
}
