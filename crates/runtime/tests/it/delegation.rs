//! `call_agent`: separate registries, sub-agent events, timeouts.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::json;
use tollgate_runtime::{EndStatus, Services};

use crate::support::*;

fn recorder(name: &str, events: &str) -> String {
    format!(
        "model_config_json:\n  hooks:\n    class_hooks:\n      - class: Recorder\n        params: {{name: {name}, events: [{events}]}}\n"
    )
}

/// A parent delegating to `child` (timeout `timeout` s), then answering.
fn family(dir: &std::path::Path, timeout: u64, child_script: &[String], child_extra: &str) {
    let parent = format!(
        "name: parent\nmodel: scripted:parent.jsonl\ntools: [call_agent, bash_code_execute_tool]\n\
         subagents:\n  child: {{file: child.yaml, timeout_seconds: {timeout}}}\n{}",
        recorder(
            "parent-rec",
            "pre_tool_use, post_tool_use, post_tool_use_failure, post_tool_use_cancelled, subagent_start, subagent_stop, subagent_cancel, session_end"
        )
    );
    let child = format!(
        "name: child\nmodel: scripted:child.jsonl\ntools: [bash_code_execute_tool]\n{child_extra}{}",
        recorder(
            "child-rec",
            "pre_tool_use, post_tool_use, post_tool_use_cancelled, session_start, session_end"
        )
    );
    let parent_script = [
        call(
            "p1",
            "call_agent",
            json!({"agent": "child", "task": "say hi"}),
        ),
        answer("parent done"),
    ];
    write(
        dir,
        &[
            ("parent.yaml", &parent),
            ("child.yaml", &child),
            ("parent.jsonl", &parent_script.join("\n")),
            ("child.jsonl", &child_script.join("\n")),
        ],
    );
}

fn services() -> (Services, Seen, Arc<AtomicUsize>) {
    let seen: Seen = Arc::default();
    let dropped = Arc::new(AtomicUsize::new(0));
    let services = Services {
        classes: Arc::new(recording_classes(Arc::clone(&seen), Arc::clone(&dropped))),
        ..Services::default()
    };
    (services, seen, dropped)
}

#[tokio::test]
async fn the_child_builds_its_own_registry_and_both_are_dropped() {
    let (_tmp, dir) = agent_dir();
    let child_script = [
        call(
            "k1",
            "bash_code_execute_tool",
            json!({"command": "echo hi"}),
        ),
        answer("hi from child"),
    ];
    family(&dir, 30, &child_script, "");
    let (services, seen, dropped) = services();
    let (report, lines) = run_agent(&dir.join("parent.yaml"), "go", &services).await;
    assert_eq!(report.status, EndStatus::Completed, "{report:?}");

    let seen = seen.lock().unwrap().clone();
    // The parent's hook saw only the parent's payloads; the child's only the child's.
    for (agent, hook, payload) in &seen {
        let expected = if hook == "parent-rec" {
            "parent"
        } else {
            "child"
        };
        assert_eq!(agent, expected, "{hook} fired in {agent}: {payload}");
    }
    let child_pre: Vec<_> = seen
        .iter()
        .filter(|(_, h, p)| h == "child-rec" && p["event"] == "pre_tool_use")
        .collect();
    assert_eq!(
        child_pre.len(),
        1,
        "the child's own hook fired for its call"
    );
    assert_eq!(child_pre[0].2["tool_input"]["command"], "echo hi");
    let parent_pre: Vec<_> = seen
        .iter()
        .filter(|(_, h, p)| h == "parent-rec" && p["event"] == "pre_tool_use")
        .collect();
    assert_eq!(
        parent_pre.len(),
        1,
        "the parent's hook fired for call_agent only"
    );
    assert_eq!(parent_pre[0].2["tool_name"], "call_agent");

    // subagent_start / subagent_stop went through the parent's hooks with the payload's common fields.
    let start = seen
        .iter()
        .find(|(_, _, p)| p["event"] == "subagent_start")
        .unwrap()
        .2
        .clone();
    let stop = seen
        .iter()
        .find(|(_, _, p)| p["event"] == "subagent_stop")
        .unwrap()
        .2
        .clone();
    assert_eq!(start["agent_type"], "child");
    assert_eq!(start["task_description"], "say hi");
    assert_eq!(stop["task_id"], start["task_id"]);
    assert_eq!(stop["status"], "completed");
    assert_eq!(stop["success"], true);
    assert_eq!(stop["result"], "hi from child");
    assert!(stop["duration_seconds"].as_f64().unwrap() >= 0.0);
    assert_eq!(stop["trace_id"], start["trace_id"]);

    // The child's trace lines speak as the child, one level down.
    let child_lines: Vec<_> = lines.iter().filter(|l| l["agent"] == "child").collect();
    assert!(child_lines.iter().all(|l| l["depth"] == 1));
    let observation = of(&lines, "observation")
        .into_iter()
        .find(|o| o["tool_call_id"] == "p1")
        .unwrap()
        .clone();
    assert_eq!(observation["content"], "hi from child");
    // Both Recorder instances (one per registry) are gone with their runs.
    assert_eq!(dropped.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_sub_agent_past_three_timeouts_is_force_stopped() {
    let (_tmp, dir) = agent_dir();
    let child_script = [
        call(
            "k1",
            "bash_code_execute_tool",
            json!({"command": "sleep 60", "timeout_seconds": 120}),
        ),
        answer("never"),
    ];
    family(&dir, 1, &child_script, "");
    let (services, seen, dropped) = services();
    let (report, lines) = run_agent(&dir.join("parent.yaml"), "go", &services).await;
    assert_eq!(report.status, EndStatus::Completed);

    // The parent observes timed_out.
    let observation = of(&lines, "observation")
        .into_iter()
        .find(|o| o["tool_call_id"] == "p1")
        .unwrap()
        .clone();
    assert_eq!(observation["status"], "failed");
    assert!(
        observation["content"]
            .as_str()
            .unwrap()
            .contains("timed_out"),
        "{observation}"
    );
    // The hook payloads say cancelled.
    let seen = seen.lock().unwrap().clone();
    let stops: Vec<_> = seen
        .iter()
        .filter(|(_, _, p)| p["event"] == "subagent_stop")
        .collect();
    assert_eq!(stops.last().unwrap().2["status"], "cancelled");
    assert_eq!(stops.last().unwrap().2["success"], false);
    assert!(seen.iter().any(|(_, _, p)| p["event"] == "subagent_cancel"));
    // The child's own session still ended once, through its own hooks.
    let child_ends: Vec<_> = seen
        .iter()
        .filter(|(a, _, p)| a == "child" && p["event"] == "session_end")
        .collect();
    assert_eq!(child_ends.len(), 1);
    assert_eq!(child_ends[0].2["status"], "cancelled");
    // The child's running tool was killed and still got its post event.
    let child_cancelled: Vec<_> = seen
        .iter()
        .filter(|(a, _, p)| a == "child" && p["event"] == "post_tool_use_cancelled")
        .collect();
    assert_eq!(child_cancelled.len(), 1);
    assert_eq!(child_cancelled[0].2["tool_input"]["command"], "sleep 60");
    // The parent's post_tool_use_failure names the timeout.
    let failure = seen
        .iter()
        .find(|(_, _, p)| p["event"] == "post_tool_use_failure")
        .unwrap()
        .2
        .clone();
    assert!(
        failure["error"].as_str().unwrap().contains("force-stopped"),
        "{failure}"
    );
    assert_eq!(dropped.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_sub_agent_past_its_timeout_stops_after_its_step() {
    let (_tmp, dir) = agent_dir();
    let child_script = [
        call(
            "k1",
            "bash_code_execute_tool",
            json!({"command": "sleep 1.5"}),
        ),
        call(
            "k2",
            "bash_code_execute_tool",
            json!({"command": "touch should-not-run"}),
        ),
        answer("never"),
    ];
    family(&dir, 1, &child_script, "");
    let (services, seen, _) = services();
    let (report, lines) = run_agent(&dir.join("parent.yaml"), "go", &services).await;
    assert_eq!(report.status, EndStatus::Completed);
    let stop = seen
        .lock()
        .unwrap()
        .iter()
        .rfind(|(_, _, p)| p["event"] == "subagent_stop")
        .unwrap()
        .2
        .clone();
    assert_eq!(stop["status"], "timed_out");
    assert!(!report.workspace.join("should-not-run").exists());
    let child_end = lines
        .iter()
        .find(|l| l["type"] == "session_end" && l["agent"] == "child")
        .unwrap();
    assert_eq!(child_end["status"], "timed_out");
}

#[tokio::test]
async fn a_denied_delegation_never_starts_the_child() {
    let (_tmp, dir) = agent_dir();
    family(&dir, 30, &[answer("child ran")], "");
    // A SubagentStart hook in the parent's own hook file refuses every delegation.
    let parent = std::fs::read_to_string(dir.join("parent.yaml")).unwrap();
    write(
        &dir,
        &[
            ("parent.yaml", &format!("{parent}hooks: [hooks.yaml]\n")),
            (
                "hooks.yaml",
                "hooks:\n  SubagentStart:\n    - name: no-delegation\n      script: \"echo 'not today' >&2; exit 2\"\n",
            ),
        ],
    );
    let (services, _, _) = services();
    let (_, lines) = run_agent(&dir.join("parent.yaml"), "go", &services).await;
    assert!(
        lines.iter().all(|l| l["agent"] != "child"),
        "the child started"
    );
    let observation = of(&lines, "observation")
        .into_iter()
        .find(|o| o["tool_call_id"] == "p1")
        .unwrap()
        .clone();
    assert!(
        observation["content"]
            .as_str()
            .unwrap()
            .contains("not today"),
        "{observation}"
    );
    assert_eq!(
        dispatches(&lines, "subagent_stop").len(),
        1,
        "a start is always paired with a stop"
    );
}

#[tokio::test]
async fn unknown_or_broken_sub_agents_fail_the_call_not_the_run() {
    let (_tmp, dir) = agent_dir();
    family(&dir, 30, &[answer("x")], "");
    write(&dir, &[("child.yaml", "name: child\nbogus_key: 1\n")]);
    let (services, _, _) = services();
    let (report, lines) = run_agent(&dir.join("parent.yaml"), "go", &services).await;
    assert_eq!(report.status, EndStatus::Completed);
    let observation = of(&lines, "observation")[0].clone();
    assert_eq!(observation["status"], "failed");
    assert!(
        observation["content"]
            .as_str()
            .unwrap()
            .contains("bogus_key"),
        "{observation}"
    );
    let stop = dispatches(&lines, "subagent_stop");
    assert_eq!(stop.len(), 1);
}

#[tokio::test]
async fn cancelling_while_a_sub_agent_works_closes_every_event_once() {
    use tollgate_runtime::trace::TraceLine;
    let (_tmp, dir) = agent_dir();
    let child_script = [
        call(
            "k1",
            "bash_code_execute_tool",
            json!({"command": "sleep 60"}),
        ),
        answer("never"),
    ];
    family(&dir, 30, &child_script, "");
    let (services, seen, dropped) = services();
    let cancel = tollgate_runtime::CancellationToken::new();
    let on_start = cancel.clone();
    let canceller = move |line: &TraceLine| {
        if line.step.kind == "tool_started" && line.origin.agent == "child" {
            on_start.cancel();
        }
    };
    let parent = dir.join("parent.yaml");
    let (report, collect) =
        run_traced(&parent, "go", &services, cancel, vec![Arc::new(canceller)]).await;
    assert_eq!(report.status, EndStatus::Cancelled);
    let seen = seen.lock().unwrap().clone();
    let count = |agent: &str, event: &str| {
        seen.iter()
            .filter(|(a, _, p)| a == agent && p["event"] == event)
            .count()
    };
    assert_eq!(count("child", "post_tool_use_cancelled"), 1);
    assert_eq!(count("child", "session_end"), 1);
    assert_eq!(count("parent", "subagent_cancel"), 1);
    assert_eq!(count("parent", "subagent_stop"), 1);
    assert_eq!(
        count("parent", "post_tool_use_cancelled"),
        1,
        "call_agent was cancelled"
    );
    assert_eq!(count("parent", "post_tool_use_failure"), 0);
    assert_eq!(count("parent", "session_end"), 1);
    let stop = seen
        .iter()
        .find(|(_, _, p)| p["event"] == "subagent_stop")
        .unwrap()
        .2
        .clone();
    assert_eq!(stop["status"], "cancelled");
    let lines = json_lines(&collect);
    assert_eq!(of(&lines, "subagent_stop").len(), 1);
    assert_eq!(dropped.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn the_child_gets_the_confirmation_gate_with_its_own_settings() {
    let (_tmp, dir) = agent_dir();
    let child_script = [
        call(
            "k1",
            "bash_code_execute_tool",
            json!({"command": "touch child-made"}),
        ),
        answer("child done"),
    ];
    family(
        &dir,
        30,
        &child_script,
        "model_config_json:\n  hooks:\n    require_confirmation_for_all: true\n",
    );
    // `family` gives the child a Recorder under model_config_json too; merge both settings.
    let child = std::fs::read_to_string(dir.join("child.yaml")).unwrap();
    let child = child.replacen(
        "model_config_json:\n  hooks:\n    require_confirmation_for_all: true\nmodel_config_json:\n  hooks:\n",
        "model_config_json:\n  hooks:\n    require_confirmation_for_all: true\n",
        1,
    );
    write(&dir, &[("child.yaml", &child)]);
    let (services, _, _) = services();
    let (report, lines) = run_agent(&dir.join("parent.yaml"), "go", &services).await;
    assert_eq!(report.status, EndStatus::Completed, "{report:?}");
    // The child's call asked (and nobody could approve); the parent's call_agent did not ask.
    let approvals = of(&lines, "approval");
    assert_eq!(approvals.len(), 1, "{approvals:?}");
    assert_eq!(approvals[0]["agent"], "child");
    assert_eq!(approvals[0]["approved"], false);
    assert!(!report.workspace.join("child-made").exists());
}

#[tokio::test]
async fn a_cancel_racing_the_stop_hooks_leaves_a_last_cancelled_stop() {
    use tollgate_runtime::trace::TraceLine;
    let (_tmp, dir) = agent_dir();
    family(&dir, 30, &[answer("child done")], "");
    let parent = std::fs::read_to_string(dir.join("parent.yaml")).unwrap();
    write(
        &dir,
        &[
            ("parent.yaml", &format!("{parent}hooks: [hooks.yaml]\n")),
            (
                "hooks.yaml",
                // Slow only for the first (completed) stop, so the racing cancel has something to race.
                "hooks:\n  SubagentStop:\n    - name: slow-stop\n      timeout: 30\n      script: >-\n        jq -e '.status == \"completed\"' >/dev/null && sleep 20; exit 0\n",
            ),
        ],
    );
    let (services, seen, _) = services();
    let cancel = tollgate_runtime::CancellationToken::new();
    let on_stop = cancel.clone();
    // Cancel while the first subagent_stop's hooks run.
    let canceller = move |line: &TraceLine| {
        if line.step.kind == "subagent_stop" {
            let on_stop = on_stop.clone();
            tokio::spawn(async move {
                tokio::time::sleep(std::time::Duration::from_millis(300)).await;
                on_stop.cancel();
            });
        }
    };
    let parent = dir.join("parent.yaml");
    let (_, collect) =
        run_traced(&parent, "go", &services, cancel, vec![Arc::new(canceller)]).await;
    let lines = json_lines(&collect);
    let stops = of(&lines, "subagent_stop");
    assert_eq!(stops.len(), 2, "{stops:?}");
    assert_eq!(stops[0]["status"], "completed");
    assert_eq!(stops[1]["status"], "cancelled");
    assert_eq!(stops[0]["task_id"], stops[1]["task_id"]);
    let seen = seen.lock().unwrap().clone();
    let last = seen
        .iter()
        .rfind(|(_, _, p)| p["event"] == "subagent_stop")
        .unwrap()
        .2
        .clone();
    assert_eq!(
        last["status"], "cancelled",
        "the last stop hooks saw is the cancelled one"
    );
    assert!(seen.iter().any(|(_, _, p)| p["event"] == "subagent_cancel"));
}
