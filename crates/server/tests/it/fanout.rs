//! One run's event stream read by 200 clients at once: every client sees the same steps, in
//! the same order, with the same ids, across a pause for approval.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::{CI, OPS, Server};

/// SSE clients on the one run.
const CLIENTS: usize = 200;

/// An agent whose one call (`write_file`) waits for an approver, then answers.
const AGENT: &str = "name: ops\nmodel: scripted:ops.jsonl\ntools: [write_file]\n\
                     model_config_json:\n  hooks:\n    confirmation_tools: [write_file]\n";

fn script() -> String {
    let call = json!({"role": "assistant", "content": null, "tool_calls": [{"id": "c1",
        "type": "function", "function": {"name": "write_file",
        "arguments": {"path": "out.txt", "content": "ran"}}}]});
    format!(
        "{call}\n{}\n",
        json!({"role": "assistant", "content": "done"})
    )
}

/// One SSE event: its name, its `id:` and its `data:`.
#[derive(Debug, Clone, PartialEq)]
struct Sse {
    name: String,
    id: u64,
    data: Value,
}

/// Reads the events of a stream, one at a time.
struct Reader {
    response: reqwest::Response,
    buffer: Vec<u8>,
}

impl Reader {
    /// The next event, skipping keep-alive comments; `None` once the stream ends.
    async fn next(&mut self) -> Option<Sse> {
        loop {
            if let Some(end) = self.buffer.windows(2).position(|w| w == b"\n\n") {
                let block: Vec<u8> = self.buffer.drain(..end + 2).collect();
                if let Some(event) = parse(std::str::from_utf8(&block).unwrap()) {
                    return Some(event);
                }
                continue;
            }
            let chunk = self.response.chunk().await.unwrap()?;
            self.buffer.extend_from_slice(&chunk);
        }
    }
}

fn parse(block: &str) -> Option<Sse> {
    let (mut name, mut id, mut data) = (None, None, String::new());
    for line in block.lines() {
        if let Some(v) = line.strip_prefix("event: ") {
            name = Some(v.to_owned());
        } else if let Some(v) = line.strip_prefix("id: ") {
            id = Some(v.parse().unwrap());
        } else if let Some(v) = line.strip_prefix("data: ") {
            data.push_str(v);
        }
    }
    Some(Sse {
        name: name?,
        id: id.unwrap(),
        data: serde_json::from_str(&data).unwrap(),
    })
}

/// Connects to the run's stream, reads until `approval.waiting` (and reports it on `waiting`),
/// then reads to the end; every event it saw.
async fn client(
    http: reqwest::Client,
    url: String,
    waiting: mpsc::UnboundedSender<String>,
) -> Vec<Sse> {
    let response = http.get(url).bearer_auth(CI).send().await.unwrap();
    assert_eq!(response.status().as_u16(), 200);
    let mut reader = Reader {
        response,
        buffer: Vec::new(),
    };
    let mut seen = Vec::new();
    while let Some(event) = reader.next().await {
        if event.name == "approval.waiting" {
            waiting
                .send(event.data["approval_id"].as_str().unwrap().to_owned())
                .unwrap();
        }
        seen.push(event);
    }
    seen
}

/// More descriptors than the test needs (each client holds a socket, and so does the server
/// for it): raises the soft limit towards the hard one where it is lower.
fn enough_descriptors() {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let wanted = 4 * CLIENTS as u64 + 256;
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).unwrap();
    if soft < wanted {
        setrlimit(Resource::RLIMIT_NOFILE, wanted.min(hard), hard).unwrap();
    }
}

async fn start_run(server: &Server, http: &reqwest::Client) -> String {
    let response = http
        .post(format!("{}/v1/runs", server.url))
        .bearer_auth(CI)
        .header("content-type", "application/json")
        .body(json!({"agent": "ops", "prompt": "go"}).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 201);
    let created: Value = serde_json::from_str(&response.text().await.unwrap()).unwrap();
    // From the server's bound address: with `listen: 127.0.0.1:0` the answer's `events_url`
    // names port 0.
    let run_id = created["run_id"].as_str().unwrap();
    format!("{}/v1/runs/{run_id}/events", server.url)
}

/// Where each of `names` first appears in `events`, in that order (panics on a missing one).
fn positions(events: &[Sse], names: &[&str]) -> Vec<usize> {
    names
        .iter()
        .map(|name| {
            events
                .iter()
                .position(|e| e.name == *name)
                .unwrap_or_else(|| panic!("no {name} in {:?}", names_of(events)))
        })
        .collect()
}

fn names_of(events: &[Sse]) -> Vec<&str> {
    events.iter().map(|e| e.name.as_str()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_clients_of_one_run_see_the_same_events_across_an_approval() {
    enough_descriptors();
    let script = script();
    let server = Server::start_with(|dir| {
        let agents = dir.join("agents");
        std::fs::create_dir_all(&agents).unwrap();
        std::fs::write(agents.join("ops.yaml"), AGENT).unwrap();
        std::fs::write(agents.join("ops.jsonl"), &script).unwrap();
        "agents_dir: agents\n".into()
    })
    .await;
    let http = reqwest::Client::new();
    let events_url = start_run(&server, &http).await;

    let (waiting, mut waited) = mpsc::unbounded_channel();
    let clients: Vec<_> = (0..CLIENTS)
        .map(|_| tokio::spawn(client(http.clone(), events_url.clone(), waiting.clone())))
        .collect();
    drop(waiting);
    // A guard against a hang, not a speed check: the pause lasts until the approval below.
    let mut approval_ids = Vec::with_capacity(CLIENTS);
    let all_waiting = tokio::time::timeout(Duration::from_secs(120), async {
        while approval_ids.len() < CLIENTS {
            approval_ids.push(
                waited
                    .recv()
                    .await
                    .expect("a client ended before the pause"),
            );
        }
    });
    assert!(
        all_waiting.await.is_ok(),
        "only {} of {CLIENTS} clients saw approval.waiting",
        approval_ids.len()
    );
    approval_ids.dedup();
    assert_eq!(approval_ids.len(), 1, "one request for the one call");

    let approved = http
        .post(format!(
            "{}/v1/approvals/{}/approve",
            server.url, approval_ids[0]
        ))
        .bearer_auth(OPS)
        .header("content-type", "application/json")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(approved.status().as_u16(), 200);

    let mut seen = Vec::with_capacity(CLIENTS);
    for client in clients {
        seen.push(client.await.unwrap());
    }
    let first = &seen[0];
    assert_eq!(first.last().map(|e| e.name.as_str()), Some("run.ended"));
    assert!(
        first.windows(2).all(|w| w[0].id < w[1].id),
        "ids not strictly increasing: {:?}",
        first.iter().map(|e| e.id).collect::<Vec<_>>()
    );
    let at = positions(
        first,
        &["tool.call", "approval.waiting", "tool.result", "run.ended"],
    );
    assert!(at.windows(2).all(|w| w[0] < w[1]), "{:?}", names_of(first));
    assert_eq!(first[at[2]].data["status"], "ok", "{}", first[at[2]].data);
    for (n, events) in seen.iter().enumerate() {
        assert_eq!(events, first, "client {n} saw other events than client 0");
    }

    let health = http
        .get(format!("{}/healthz", server.url))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status().as_u16(), 200);
}
