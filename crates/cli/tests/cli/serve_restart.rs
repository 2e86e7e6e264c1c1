//! Durable runs: a `tollgate serve` killed with SIGKILL loses nothing. The restarted server
//! resumes its runs from the database: a waiting call is approved once and runs once, a tool
//! that was running is reported interrupted and never run again, and the event stream's
//! history stays whole across the restart.

use serde_json::{Value, json};

use crate::serve_runs::{CI, OPS, Served, names, read_until};

/// An agent `name` in the server's agents directory: a bash tool, the scripted `turns` (bash
/// commands, one call per turn, then `done`), every call confirmed when `confirm`.
fn agent(served: &Served, name: &str, commands: &[&str], confirm: bool) {
    let confirm = if confirm {
        "model_config_json:\n  hooks:\n    confirmation_tools: [bash_code_execute_tool]\n"
    } else {
        ""
    };
    std::fs::write(
        served.path(&format!("agents/{name}.yaml")),
        format!(
            "name: {name}\nmodel: scripted:{name}.jsonl\ntools: [bash_code_execute_tool]\n\
             workspace: ws\n{confirm}"
        ),
    )
    .unwrap();
    let mut script: Vec<String> = commands
        .iter()
        .enumerate()
        .map(|(i, command)| {
            json!({"role": "assistant", "content": null, "tool_calls": [{"id": format!("c{}", i + 1),
                "type": "function", "function": {"name": "bash_code_execute_tool",
                "arguments": {"command": command}}}]})
            .to_string()
        })
        .collect();
    script.push(json!({"role": "assistant", "content": "done"}).to_string());
    std::fs::write(
        served.path(&format!("agents/{name}.jsonl")),
        script.join("\n"),
    )
    .unwrap();
}

async fn start_run(served: &Served, agent: &str) -> String {
    let (status, created) = served
        .post("/v1/runs", CI, json!({"agent": agent, "prompt": "go"}))
        .await;
    assert_eq!(status, 201, "{created}");
    created["run_id"].as_str().unwrap().to_owned()
}

async fn approve(served: &Served, waiting: &Value) {
    let id = waiting["approval_id"].as_str().unwrap();
    let (status, body) = served
        .post(&format!("/v1/approvals/{id}/approve"), OPS, json!({}))
        .await;
    assert_eq!(status, 200, "{body}");
}

/// The whole history of `run_id`, from the start through `run.ended`.
async fn history(served: &Served, run_id: &str) -> Vec<(String, u64, Value)> {
    let mut stream = served.events(run_id, None).await;
    let (mut buffer, mut seen) = (String::new(), Vec::new());
    assert!(
        read_until(&mut stream, &mut buffer, "run.ended", &mut seen).await,
        "{:?}",
        names(&seen)
    );
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_server_resumes_a_waiting_run_and_its_call_runs_once() {
    let mut served = Served::start();
    agent(
        &served,
        "two",
        &["echo one >> count.txt", "echo two >> count.txt"],
        true,
    );
    let run_id = start_run(&served, "two").await;
    let mut stream = served.events(&run_id, None).await;
    let (mut buffer, mut seen) = (String::new(), Vec::new());
    assert!(read_until(&mut stream, &mut buffer, "approval.waiting", &mut seen).await);
    approve(&served, &seen.last().unwrap().2).await;
    assert!(read_until(&mut stream, &mut buffer, "approval.waiting", &mut seen).await);
    let first_ask = seen.last().unwrap().2.clone();
    let last_seen = seen.last().unwrap().1;
    assert_eq!(
        std::fs::read_to_string(served.path("agents/ws/count.txt")).unwrap(),
        "one\n"
    );
    drop(stream);

    served.kill_and_restart();
    let (status, run) = served.get(&format!("/v1/runs/{run_id}"), CI).await;
    assert_eq!(
        (status, run["status"].as_str()),
        (200, Some("waiting")),
        "{run}"
    );

    // A client that saw everything up to the ask reconnects: the resumed run asks again on
    // the same request (re-attached), and nothing it saw comes twice.
    let mut stream = served.events(&run_id, Some(last_seen)).await;
    let (mut buffer, mut after) = (String::new(), Vec::new());
    assert!(read_until(&mut stream, &mut buffer, "approval.waiting", &mut after).await);
    assert!(after.iter().all(|(_, id, _)| *id > last_seen));
    assert_eq!(after[0].0, "run.resumed", "{:?}", names(&after));
    let ask = after.last().unwrap().2.clone();
    assert_eq!(ask["approval_id"], first_ask["approval_id"]);
    assert_eq!(ask["attached"], true, "{ask}");
    approve(&served, &ask).await;
    assert!(read_until(&mut stream, &mut buffer, "run.ended", &mut after).await);
    assert_eq!(after.last().unwrap().2["status"], "completed");

    assert_eq!(
        std::fs::read_to_string(served.path("agents/ws/count.txt")).unwrap(),
        "one\ntwo\n",
        "each tool ran exactly once"
    );
    let (_, all) = served.get("/v1/approvals?status=all", OPS).await;
    let rows: Vec<&Value> = all["requests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["run_id"] == run_id.as_str())
        .collect();
    assert_eq!(rows.len(), 2, "no second request row: {all}");
    let (_, run) = served.get(&format!("/v1/runs/{run_id}"), CI).await;
    assert_eq!(run["status"], "completed", "{run}");

    // The history is whole: every id once, in order, both attempts.
    let whole = history(&served, &run_id).await;
    let ids: Vec<u64> = whole.iter().map(|(_, id, _)| *id).collect();
    assert_eq!(ids, (0..ids.len() as u64).collect::<Vec<_>>());
    let order = names(&whole);
    assert_eq!(order.iter().filter(|n| **n == "run.started").count(), 1);
    assert_eq!(order.iter().filter(|n| **n == "run.resumed").count(), 1);
    assert_eq!(order.iter().filter(|n| **n == "tool.started").count(), 2);
    let results: Vec<&Value> = whole
        .iter()
        .filter(|(n, _, _)| n == "tool.result")
        .map(|(_, _, v)| v)
        .collect();
    assert_eq!(results.len(), 2);
    assert!(results.iter().all(|r| r["status"] == "ok"), "{results:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_running_when_the_server_died_is_reported_interrupted_and_not_run_again() {
    let mut served = Served::start();
    agent(
        &served,
        "slow",
        &["echo start >> slow.txt; sleep 3; echo end >> slow.txt"],
        false,
    );
    let run_id = start_run(&served, "slow").await;
    let mut stream = served.events(&run_id, None).await;
    let (mut buffer, mut seen) = (String::new(), Vec::new());
    assert!(read_until(&mut stream, &mut buffer, "tool.started", &mut seen).await);
    drop(stream);
    // The command is under way once its first line is written.
    let log = served.path("agents/ws/slow.txt");
    let begun = std::time::Instant::now();
    while !log.exists() {
        assert!(begun.elapsed().as_secs() < 30, "the tool never started");
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }

    served.kill_and_restart();
    let whole = history(&served, &run_id).await;
    let result = whole
        .iter()
        .find(|(n, _, _)| n == "tool.result")
        .map(|(_, _, v)| v)
        .unwrap();
    assert_eq!(result["status"], "cancelled", "{result}");
    assert!(
        result["content"].as_str().unwrap().contains("interrupted"),
        "{result}"
    );
    assert!(
        whole
            .iter()
            .any(|(n, _, v)| n == "hook.dispatch" && v["event"] == "post_tool_use_cancelled"),
        "{:?}",
        names(&whole)
    );
    let end = &whole.last().unwrap().2;
    assert_eq!(end["status"], "completed", "the model went on: {end}");
    // Long enough for a second run of the tool to have begun.
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let log = std::fs::read_to_string(log).unwrap();
    assert_eq!(
        log.matches("start").count(),
        1,
        "the tool ran again: {log:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_ends_the_streams_and_leaves_a_waiting_run_waiting() {
    let mut served = Served::start();
    let run_id = start_run(&served, "ops").await;
    let mut stream = served.events(&run_id, None).await;
    let (mut buffer, mut seen) = (String::new(), Vec::new());
    assert!(read_until(&mut stream, &mut buffer, "approval.waiting", &mut seen).await);
    // The open stream does not hold the server up; it ends without `run.ended`.
    served.stop_and_restart();
    assert!(!read_until(&mut stream, &mut buffer, "run.ended", &mut seen).await);

    let (_, run) = served.get(&format!("/v1/runs/{run_id}"), CI).await;
    assert_eq!(run["status"], "waiting", "{run}");
    let mut stream = served.events(&run_id, Some(seen.last().unwrap().1)).await;
    let (mut buffer, mut after) = (String::new(), Vec::new());
    assert!(read_until(&mut stream, &mut buffer, "approval.waiting", &mut after).await);
    approve(&served, &after.last().unwrap().2).await;
    assert!(read_until(&mut stream, &mut buffer, "run.ended", &mut after).await);
    assert_eq!(after.last().unwrap().2["status"], "completed");
    assert_eq!(
        std::fs::read_to_string(served.path("agents/ws/count.txt")).unwrap(),
        "ran\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_that_cannot_be_resumed_ends_failed_and_its_request_is_cancelled() {
    let mut served = Served::start();
    agent(&served, "gone", &["echo ran >> gone.txt"], true);
    let run_id = start_run(&served, "gone").await;
    let mut stream = served.events(&run_id, None).await;
    let (mut buffer, mut seen) = (String::new(), Vec::new());
    assert!(read_until(&mut stream, &mut buffer, "approval.waiting", &mut seen).await);
    let ask = seen.last().unwrap().2.clone();
    drop(stream);

    std::fs::remove_file(served.path("agents/gone.yaml")).unwrap();
    served.kill_and_restart();
    let whole = history(&served, &run_id).await;
    let end = &whole.last().unwrap().2;
    assert_eq!(end["status"], "failed", "{end}");
    assert!(
        end["error"].as_str().unwrap().contains("cannot be resumed"),
        "{end}"
    );
    assert_eq!(end["session_id"], seen[0].2["session_id"], "{end}");
    // The request is cancelled: an approval now would start nothing, so none is taken.
    let id = ask["approval_id"].as_str().unwrap();
    let (_, shown) = served.get(&format!("/v1/approvals/{id}"), OPS).await;
    assert_eq!(shown["request"]["status"], "cancelled", "{shown}");
    let (status, _) = served
        .post(&format!("/v1/approvals/{id}/approve"), OPS, json!({}))
        .await;
    assert_eq!(status, 409);
    assert!(!served.path("agents/ws/gone.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_the_server_died_before_starting_starts_afresh_after_a_restart() {
    let mut served = Served::start();
    agent(&served, "early", &["echo ran >> early.txt"], false);
    // A run row with no line yet, as a server that died right after creating it leaves it.
    let store = tollgate_approval::Store::open(&served.path("approvals.db"))
        .await
        .unwrap();
    store
        .create_run(
            "run_early",
            "early",
            &json!({"agent": "early", "prompt": "go"}),
        )
        .await
        .unwrap();
    drop(store);
    served.kill_and_restart();
    let whole = history(&served, "run_early").await;
    assert_eq!(whole[0].0, "run.started", "{:?}", names(&whole));
    assert!(
        !names(&whole).contains(&"run.resumed"),
        "{:?}",
        names(&whole)
    );
    assert_eq!(whole.last().unwrap().2["status"], "completed");
    assert_eq!(
        std::fs::read_to_string(served.path("agents/ws/early.txt")).unwrap(),
        "ran\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_runs_list_refuses_an_unknown_status() {
    let served = Served::start();
    let (status, body) = served.get("/v1/runs?status=bogus", CI).await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body["message"].as_str().unwrap().contains("waiting"),
        "{body}"
    );
    let (status, body) = served.get("/v1/runs?status=waiting&limit=5", CI).await;
    assert_eq!(
        (status, body["runs"].as_array().map(Vec::len)),
        (200, Some(0))
    );
}
