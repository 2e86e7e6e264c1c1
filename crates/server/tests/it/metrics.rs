//! `GET /metrics`: the token it needs, and the values it shows after requests are filed and
//! decided and after runs (with hooks, with a wait for approval) end.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Value, json};
use tollgate_approval::NewRequest;

use crate::{CI, OPS, Server};

const LATENCY: &str = "tollgate_approval_decision_latency_seconds";

/// `GET /metrics` with `token`: the status, the content type and the text.
pub async fn get_metrics(server: &Server, token: Option<&str>) -> (u16, String, String) {
    let mut request = reqwest::Client::new().get(format!("{}/metrics", server.url));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let kind = response
        .headers()
        .get("content-type")
        .map_or("", |v| v.to_str().unwrap())
        .to_owned();
    (status, kind, response.text().await.unwrap())
}

/// The metrics text, scraped with a runner's token.
pub async fn scrape(server: &Server) -> String {
    let (status, _, text) = get_metrics(server, Some(CI)).await;
    assert_eq!(status, 200, "{text}");
    text
}

/// The value of the series `name` with exactly `labels` (in any order), if shown.
pub fn sample(text: &str, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    let wanted: BTreeMap<&str, &str> = labels.iter().copied().collect();
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .find_map(|line| {
            let (series, value) = line.rsplit_once(' ')?;
            let (series_name, shown) = match series.split_once('{') {
                Some((n, rest)) => (n, parse_labels(rest.strip_suffix('}')?)),
                None => (series, BTreeMap::new()),
            };
            (series_name == name && shown == wanted).then(|| value.parse().unwrap())
        })
}

fn parse_labels(text: &str) -> BTreeMap<&str, &str> {
    text.split("\",")
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (key, value) = pair.split_once("=\"").unwrap();
            (key, value.trim_end_matches('"'))
        })
        .collect()
}

async fn send(request: reqwest::RequestBuilder) -> (u16, Value) {
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

async fn post(server: &Server, path: &str, token: &str, body: Value) -> (u16, Value) {
    let request = reqwest::Client::new()
        .post(format!("{}{path}", server.url))
        .bearer_auth(token)
        .header("content-type", "application/json")
        .body(body.to_string());
    send(request).await
}

async fn get(server: &Server, path: &str, token: &str) -> (u16, Value) {
    let request = reqwest::Client::new()
        .get(format!("{}{path}", server.url))
        .bearer_auth(token);
    send(request).await
}

/// The run's view once `done` holds for it; waits at most a minute (a guard against a hang,
/// not a timing assertion).
async fn run_until(server: &Server, run_id: &str, done: impl Fn(&Value) -> bool) -> Value {
    for _ in 0..3000 {
        let (status, view) = get(server, &format!("/v1/runs/{run_id}"), CI).await;
        assert_eq!(status, 200, "{view}");
        if done(&view) {
            return view;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    panic!("run {run_id} never got there");
}

/// Writes agent `ops`: one `write_file` call, then an answer; `extra` adds keys.
fn ops_agent(dir: &Path, extra: &str) -> String {
    let agents = dir.join("agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(
        agents.join("ops.yaml"),
        format!(
            "name: ops\nmodel: scripted:ops.jsonl\ntools: [write_file]\nworkspace: ws\n{extra}"
        ),
    )
    .unwrap();
    let call = json!({"role": "assistant", "content": null, "tool_calls": [{"id": "c1",
        "type": "function", "function": {"name": "write_file",
        "arguments": {"path": "x.txt", "content": "x"}}}]});
    let answer = json!({"role": "assistant", "content": "done"});
    std::fs::write(agents.join("ops.jsonl"), format!("{call}\n{answer}\n")).unwrap();
    "agents_dir: agents\n".into()
}

async fn start_run(server: &Server) -> String {
    let (status, created) = post(
        server,
        "/v1/runs",
        CI,
        json!({"agent": "ops", "prompt": "go"}),
    )
    .await;
    assert_eq!(status, 201, "{created}");
    created["run_id"].as_str().unwrap().to_owned()
}

fn in_progress(text: &str) -> (f64, f64) {
    let of = |status| sample(text, "tollgate_runs_in_progress", &[("status", status)]).unwrap();
    (of("running"), of("waiting"))
}

#[tokio::test]
async fn metrics_need_a_token_and_any_token_will_do() {
    let server = Server::start(None).await;
    let (status, _, body) = get_metrics(&server, None).await;
    assert_eq!(status, 401, "{body}");
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap()["error"],
        "unauthorized"
    );
    let (status, _, _) = get_metrics(&server, Some("not-a-token-of-this-server")).await;
    assert_eq!(status, 401);
    // A runner's token has no approver role, and still may scrape.
    let (status, kind, text) = get_metrics(&server, Some(CI)).await;
    assert_eq!(status, 200, "{text}");
    assert!(kind.starts_with("text/plain; version=0.0.4"), "{kind}");
    assert!(
        text.contains("# TYPE tollgate_approvals_pending gauge"),
        "{text}"
    );
    assert_eq!(sample(&text, "tollgate_runs_started_total", &[]), Some(0.0));
    assert_eq!(
        sample(
            &text,
            "tollgate_runs_ended_total",
            &[("status", "completed")]
        ),
        Some(0.0)
    );
}

#[tokio::test]
async fn the_pending_gauge_is_read_from_the_database_at_scrape_time() {
    let server = Server::start(None).await;
    assert_eq!(
        sample(&scrape(&server).await, "tollgate_approvals_pending", &[]),
        Some(0.0)
    );
    let first = server.file(json!({"sql": "DELETE"}), &["ops-lead"]).await;
    server.file(json!({"sql": "DROP"}), &["ops-lead"]).await;
    // Overdue at once: it no longer waits for anybody.
    let overdue = NewRequest {
        run_id: "run-8".into(),
        session_id: "s".into(),
        scope: "overdue".into(),
        agent: "ops".into(),
        tool_name: "sql_execute".into(),
        tool_call_id: "c9".into(),
        arguments: json!({}),
        reasons: vec![],
        asked_by: "permission_gate".into(),
        approvers: vec!["ops-lead".into()],
        timeout_seconds: 0,
    };
    server.store.file(&overdue).await.unwrap();
    assert_eq!(
        sample(&scrape(&server).await, "tollgate_approvals_pending", &[]),
        Some(2.0)
    );
    let (status, body) = post(
        &server,
        &format!("/v1/approvals/{first}/approve"),
        OPS,
        json!({}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        sample(&scrape(&server).await, "tollgate_approvals_pending", &[]),
        Some(1.0)
    );
}

#[tokio::test]
async fn an_api_decision_adds_its_wait_to_the_latency_histogram() {
    let server = Server::start(None).await;
    let approved = server.file(json!({"sql": "DELETE"}), &["ops-lead"]).await;
    let rejected = server.file(json!({"sql": "DROP"}), &["ops-lead"]).await;
    let text = scrape(&server).await;
    let api_approved = [("decision", "approved"), ("channel", "api")];
    assert_eq!(
        sample(&text, &format!("{LATENCY}_count"), &api_approved),
        None
    );

    let path = format!("/v1/approvals/{approved}/approve");
    let (status, body) = post(&server, &path, OPS, json!({"note": "ok"})).await;
    assert_eq!(status, 200, "{body}");
    let request = &body["request"];
    let waited = (request["responded_at"].as_i64().unwrap()
        - request["created_at"].as_i64().unwrap()) as f64
        / 1000.0;
    let path = format!("/v1/approvals/{rejected}/reject");
    assert_eq!(post(&server, &path, OPS, json!({})).await.0, 200);
    // A refused second decision is no decision.
    assert_eq!(post(&server, &path, OPS, json!({})).await.0, 409);

    let text = scrape(&server).await;
    assert_eq!(
        sample(&text, &format!("{LATENCY}_count"), &api_approved),
        Some(1.0)
    );
    assert_eq!(
        sample(&text, &format!("{LATENCY}_sum"), &api_approved),
        Some(waited)
    );
    let api_rejected = [("decision", "rejected"), ("channel", "api")];
    assert_eq!(
        sample(&text, &format!("{LATENCY}_count"), &api_rejected),
        Some(1.0)
    );
    // Buckets: the approval waited less than the 10 minutes it had, so the 600 s bucket
    // holds it, and the +Inf one too.
    let bucket = |le| {
        let mut labels = api_approved.to_vec();
        labels.push(("le", le));
        sample(&text, &format!("{LATENCY}_bucket"), &labels)
    };
    assert_eq!(bucket("600"), Some(1.0), "{text}");
    assert_eq!(bucket("+Inf"), Some(1.0), "{text}");
}

#[tokio::test]
async fn two_servers_in_one_process_count_apart() {
    let one = Server::start(None).await;
    let other = Server::start(None).await;
    let id = one.file(json!({}), &["ops-lead"]).await;
    let (status, _) = post(&one, &format!("/v1/approvals/{id}/approve"), OPS, json!({})).await;
    assert_eq!(status, 200);
    let count = format!("{LATENCY}_count");
    let labels = [("decision", "approved"), ("channel", "api")];
    assert_eq!(sample(&scrape(&one).await, &count, &labels), Some(1.0));
    assert_eq!(sample(&scrape(&other).await, &count, &labels), None);
}

/// An admin hook file's hooks run outside the OS sandbox (an agent file's need the
/// `tollgate` binary as its launcher: `crates/cli/tests/cli/serve_runs.rs` runs those).
#[tokio::test]
async fn a_run_with_hooks_counts_its_hook_runs_and_its_end() {
    let server = Server::start_with(|dir| {
        std::fs::write(
            dir.join("admin.yaml"),
            "hooks:\n  PreToolUse:\n    - name: lint\n      script: \"exit 0\"\n    \
             - name: flaky-lint\n      failure_mode: fail_open\n      script: \"exit 1\"\n",
        )
        .unwrap();
        ops_agent(dir, "") + "admin_hooks: [admin.yaml]\n"
    })
    .await;
    let run_id = start_run(&server).await;
    let view = run_until(&server, &run_id, |v| v["status"] != "running").await;
    assert_eq!(view["status"], "completed", "{view}");

    let text = scrape(&server).await;
    let hooks = |status| {
        sample(
            &text,
            "tollgate_hook_runs_total",
            &[("kind", "command"), ("status", status)],
        )
    };
    assert_eq!(hooks("completed"), Some(1.0), "{text}");
    assert_eq!(hooks("errored"), Some(1.0), "{text}");
    assert_eq!(sample(&text, "tollgate_runs_started_total", &[]), Some(1.0));
    assert_eq!(
        sample(
            &text,
            "tollgate_runs_ended_total",
            &[("status", "completed")]
        ),
        Some(1.0)
    );
    assert_eq!(in_progress(&text), (0.0, 0.0));
}

#[tokio::test]
async fn a_run_shows_as_waiting_until_its_call_is_approved() {
    let server = Server::start_with(|dir| {
        ops_agent(
            dir,
            "model_config_json:\n  hooks:\n    confirmation_tools: [write_file]\n",
        )
    })
    .await;
    let run_id = start_run(&server).await;
    let view = run_until(&server, &run_id, |v| v["status"] == "waiting").await;
    let request_id = view["pending_approval"].as_str().unwrap().to_owned();

    let text = scrape(&server).await;
    assert_eq!(in_progress(&text), (0.0, 1.0), "{text}");
    assert_eq!(sample(&text, "tollgate_approvals_pending", &[]), Some(1.0));
    // The database's count agrees.
    assert_eq!(
        sample(&text, "tollgate_runs", &[("status", "waiting")]),
        Some(1.0),
        "{text}"
    );
    assert_eq!(
        sample(&text, "tollgate_runs", &[("status", "completed")]),
        Some(0.0)
    );

    let path = format!("/v1/approvals/{request_id}/approve");
    assert_eq!(post(&server, &path, OPS, json!({})).await.0, 200);
    let view = run_until(&server, &run_id, |v| {
        v["status"] != "waiting" && v["status"] != "running"
    })
    .await;
    assert_eq!(view["status"], "completed", "{view}");

    let text = scrape(&server).await;
    assert_eq!(in_progress(&text), (0.0, 0.0), "{text}");
    assert_eq!(sample(&text, "tollgate_approvals_pending", &[]), Some(0.0));
    assert_eq!(
        sample(
            &text,
            "tollgate_runs_ended_total",
            &[("status", "completed")]
        ),
        Some(1.0)
    );
    assert_eq!(
        sample(
            &text,
            &format!("{LATENCY}_count"),
            &[("decision", "approved"), ("channel", "api")]
        ),
        Some(1.0)
    );
}
