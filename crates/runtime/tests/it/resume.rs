//! Resuming a run from its journal: whatever line the earlier attempt stopped at, no model
//! turn is asked twice, no tool starts twice, every call is answered, and the run ends as it
//! would have.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Value, json};
use tollgate_runtime::trace::{Collect, TraceSink};
use tollgate_runtime::{
    AgentDef, CancellationToken, EndStatus, Journal, RunRequest, Services, resume,
};

use crate::support::{agent_dir, answer, call, json_lines, run_agent, write};

fn request(agent: &std::path::Path, run_id: &str) -> RunRequest {
    RunRequest {
        agent: AgentDef::load(agent).unwrap(),
        prompt: "go".into(),
        skills: vec![],
        model: None,
        workspace: Some(agent.parent().unwrap().join("ws")),
        run_id: Some(run_id.into()),
    }
}

/// An agent that writes with three shell calls, then answers.
fn three_calls() -> (tempfile::TempDir, std::path::PathBuf) {
    let (dir, path) = agent_dir();
    let script: Vec<String> = (1..=3)
        .map(|n| {
            call(
                &format!("c{n}"),
                "bash_code_execute_tool",
                json!({"command": format!("echo {n} >> count.txt")}),
            )
        })
        .chain([answer("done")])
        .collect();
    write(
        &path,
        &[
            (
                "agent.yaml",
                "name: worker\nmodel: scripted:script.jsonl\ntools: [bash_code_execute_tool]\n",
            ),
            ("script.jsonl", &script.join("\n")),
        ],
    );
    let agent = path.join("agent.yaml");
    (dir, agent)
}

fn count(lines: &[Value], kind: &str, key: &str) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    for line in lines
        .iter()
        .filter(|l| l["type"] == kind && l["depth"] == 0)
    {
        *counts.entry(line[key].to_string()).or_default() += 1;
    }
    counts
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_resumed_from_any_line_asks_no_turn_twice_and_starts_no_tool_twice() {
    let (_dir, agent) = three_calls();
    let (report, full) = run_agent(&agent, "go", &Services::default()).await;
    assert_eq!(report.status, EndStatus::Completed);
    let run_id = report.run_id.clone();
    for cut in 0..=full.len() {
        let earlier = full[..cut].to_vec();
        let journal = Journal::new(earlier.clone());
        let collect = Arc::new(Collect::default());
        let sinks: Vec<Arc<dyn TraceSink>> = vec![collect.clone()];
        let resumed = resume(
            request(&agent, &run_id),
            &journal,
            &Services::default(),
            sinks,
            CancellationToken::new(),
        )
        .await;
        let later = json_lines(&collect);
        assert_eq!(
            resumed.status,
            EndStatus::Completed,
            "cut {cut}: {later:#?}"
        );
        assert_eq!(resumed.answer.as_deref(), Some("done"), "cut {cut}");
        // The numbering goes on where the journal stopped.
        let seqs: Vec<u64> = later.iter().map(|l| l["seq"].as_u64().unwrap()).collect();
        assert_eq!(
            seqs,
            (cut as u64..(cut + later.len()) as u64).collect::<Vec<_>>()
        );
        let whole: Vec<Value> = earlier.into_iter().chain(later).collect();
        let turns = count(&whole, "model_turn", "turn");
        assert_eq!(turns.len(), 4, "cut {cut}: {turns:?}");
        assert!(turns.values().all(|n| *n == 1), "cut {cut}: {turns:?}");
        let started = count(&whole, "tool_started", "tool_call_id");
        assert!(started.values().all(|n| *n == 1), "cut {cut}: {started:?}");
        let observed = count(&whole, "observation", "tool_call_id");
        assert_eq!(observed.len(), 3, "cut {cut}: {observed:?}");
        assert!(
            observed.values().all(|n| *n == 1),
            "cut {cut}: {observed:?}"
        );
        // A tool that started but was not observed was interrupted, never run again.
        let cut_mid_tool = full[..cut].iter().any(|l| l["type"] == "tool_started")
            && full[..cut]
                .last()
                .is_some_and(|l| l["type"] == "tool_started");
        if cut_mid_tool {
            assert!(
                whole.iter().any(|l| l["type"] == "observation"
                    && l["status"] == "cancelled"
                    && l["content"].as_str().unwrap().contains("interrupted")),
                "cut {cut}"
            );
        }
        let ends: Vec<&Value> = whole
            .iter()
            .filter(|l| l["type"] == "session_end" && l["depth"] == 0)
            .collect();
        assert_eq!(ends.len(), 1, "cut {cut}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_run_answers_on_the_conversation_it_had() {
    // The model is asked with the recorded turns and observations before it, in order.
    let (_dir, agent) = three_calls();
    let (report, full) = run_agent(&agent, "go", &Services::default()).await;
    let second_turn = full
        .iter()
        .position(|l| l["type"] == "model_turn" && l["turn"] == 2)
        .unwrap();
    let journal = Journal::new(full[..=second_turn].to_vec());
    let collect = Arc::new(Collect::default());
    let sinks: Vec<Arc<dyn TraceSink>> = vec![collect.clone()];
    let resumed = resume(
        request(&agent, &report.run_id),
        &journal,
        &Services::default(),
        sinks,
        CancellationToken::new(),
    )
    .await;
    assert_eq!(resumed.turns, 4);
    let later = json_lines(&collect);
    assert_eq!(later[0]["type"], "session_resumed");
    assert_eq!(later[0]["session_id"], full[0]["session_id"]);
    // The second turn's call runs now (it had not started), then turns 3 and 4 are new.
    let started: Vec<&Value> = later
        .iter()
        .filter(|l| l["type"] == "tool_started")
        .map(|l| &l["tool_call_id"])
        .collect();
    assert_eq!(started, [&json!("c2"), &json!("c3")]);
}
