//! Runs over HTTP through `tollgate serve`: a run that asks pauses in its event stream until
//! someone approves through the API.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_tollgate");
pub(crate) const OPS: &str = "ops-lead-token-0123456789";
pub(crate) const CI: &str = "ci-token-0123456789abcdef";

pub(crate) struct Served {
    dir: tempfile::TempDir,
    child: Child,
    env: Vec<(String, String)>,
    pub(crate) url: String,
    pub(crate) http: reqwest::Client,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Served {
    /// A server whose agents directory holds `ops`: a shell call that needs confirmation
    /// (appending to `agents/ws/count.txt`), then an answer.
    pub(crate) fn start() -> Self {
        Self::start_with("")
    }

    /// [`Served::start`] with more top-level keys in `server.yaml`.
    pub(crate) fn start_with(extra: &str) -> Self {
        Self::start_with_env(extra, &[])
    }

    /// [`Served::start_with`], the server's environment holding `env` too.
    pub(crate) fn start_with_env(extra: &str, env: &[(&str, &str)]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let agents = dir.path().join("agents");
        std::fs::create_dir(&agents).unwrap();
        std::fs::write(
            agents.join("ops.yaml"),
            "name: ops\nmodel: scripted:ops.jsonl\ntools: [bash_code_execute_tool]\nworkspace: ws\n\
             model_config_json:\n  hooks:\n    confirmation_tools: [bash_code_execute_tool]\n",
        )
        .unwrap();
        let call = json!({"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
            "function": {"name": "bash_code_execute_tool", "arguments": {"command": "echo ran >> count.txt"}}}]});
        std::fs::write(
            agents.join("ops.jsonl"),
            format!(
                "{call}\n{}",
                json!({"role": "assistant", "content": "done"})
            ),
        )
        .unwrap();
        std::fs::write(
            dir.path().join("server.yaml"),
            format!(
                "listen: 127.0.0.1:0\ndatabase: sqlite://approvals.db\nagents_dir: agents\n\
                 tokens:\n  - {{name: ops-lead, token: {OPS}, roles: [approver]}}\n  \
                 - {{name: ci, token: {CI}, roles: [runner]}}\n{extra}"
            ),
        )
        .unwrap();
        Self::serve(dir, env)
    }

    /// `tollgate serve --config server.yaml` in `dir` with `env`, once it listens.
    pub(crate) fn serve(dir: tempfile::TempDir, env: &[(&str, &str)]) -> Self {
        let env: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        let child = spawn(dir.path(), &env);
        let mut served = Self {
            dir,
            child,
            env,
            url: String::new(),
            http: reqwest::Client::new(),
        };
        served.url = served.address();
        served
    }

    /// Kills the server with SIGKILL (nothing runs on its way out), then starts another on
    /// the same folder and database.
    pub(crate) fn kill_and_restart(&mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
        self.child = spawn(self.dir.path(), &self.env);
        self.url = self.address();
    }

    /// Stops the server with SIGTERM and waits for it (it must exit 0), then starts another
    /// on the same folder and database.
    pub(crate) fn stop_and_restart(&mut self) {
        let pid = nix::unistd::Pid::from_raw(i32::try_from(self.child.id()).unwrap());
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
        let status = self.child.wait().unwrap();
        assert!(status.success(), "{status}");
        self.child = spawn(self.dir.path(), &self.env);
        self.url = self.address();
    }

    /// The address the server prints once it listens.
    fn address(&self) -> String {
        let start = Instant::now();
        loop {
            let err = std::fs::read_to_string(self.path("serve.err")).unwrap_or_default();
            // Only a whole line: stderr may be read between the writes of one line.
            if let Some(at) = err.find("listening on ")
                && let Some((address, _)) = err[at + "listening on ".len()..].split_once('\n')
            {
                return address.trim().to_owned();
            }
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "no address: {err}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub(crate) fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    pub(crate) async fn post(&self, path: &str, token: &str, body: Value) -> (u16, Value) {
        let response = self
            .http
            .post(format!("{}{path}", self.url))
            .bearer_auth(token)
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        let text = response.text().await.unwrap();
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    /// `GET path` with `token`: the status and the JSON body.
    pub(crate) async fn get(&self, path: &str, token: &str) -> (u16, Value) {
        let response = self
            .http
            .get(format!("{}{path}", self.url))
            .bearer_auth(token)
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        let text = response.text().await.unwrap();
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    pub(crate) async fn events(&self, run_id: &str, last: Option<u64>) -> reqwest::Response {
        let mut request = self
            .http
            .get(format!("{}/v1/runs/{run_id}/events", self.url))
            .bearer_auth(CI);
        if let Some(last) = last {
            request = request.header("Last-Event-ID", last.to_string());
        }
        request.send().await.unwrap()
    }
}

/// `tollgate serve --config server.yaml` in `dir`, its stderr in `serve.err`.
fn spawn(dir: &std::path::Path, env: &[(String, String)]) -> Child {
    Command::new(BIN)
        .args(["serve", "--config", "server.yaml"])
        .current_dir(dir)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.join("serve.err")).unwrap())
        .spawn()
        .unwrap()
}

/// Reads SSE events (name, id, data) from `response` until `until` names one, or it ends.
pub(crate) async fn read_until(
    response: &mut reqwest::Response,
    buffer: &mut String,
    until: &str,
    seen: &mut Vec<(String, u64, Value)>,
) -> bool {
    loop {
        while let Some(end) = buffer.find("\n\n") {
            let block: String = buffer.drain(..end + 2).collect();
            let (mut name, mut id, mut data) = (String::new(), 0, String::new());
            for line in block.lines() {
                if let Some(v) = line.strip_prefix("event: ") {
                    name = v.to_owned();
                } else if let Some(v) = line.strip_prefix("id: ") {
                    id = v.parse().unwrap();
                } else if let Some(v) = line.strip_prefix("data: ") {
                    data.push_str(v);
                }
            }
            if name.is_empty() {
                continue; // a keep-alive comment
            }
            let found = name == until;
            seen.push((name, id, serde_json::from_str(&data).unwrap()));
            if found {
                return true;
            }
        }
        match response.chunk().await.unwrap() {
            Some(bytes) => buffer.push_str(std::str::from_utf8(&bytes).unwrap()),
            None => return false,
        }
    }
}

pub(crate) fn names(seen: &[(String, u64, Value)]) -> Vec<&str> {
    seen.iter().map(|(n, _, _)| n.as_str()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_over_http_pauses_in_its_stream_until_approved_through_the_api() {
    let served = Served::start();
    let (status, created) = served
        .post("/v1/runs", CI, json!({"agent": "ops", "prompt": "go"}))
        .await;
    assert_eq!(status, 201, "{created}");
    let run_id = created["run_id"].as_str().unwrap().to_owned();
    // Built from the address the server listens on (its config says port 0).
    assert_eq!(
        created["events_url"].as_str().unwrap(),
        format!("{}/v1/runs/{run_id}/events", served.url)
    );

    let mut stream = served.events(&run_id, None).await;
    assert_eq!(stream.status().as_u16(), 200);
    let (mut buffer, mut seen) = (String::new(), Vec::new());
    assert!(read_until(&mut stream, &mut buffer, "approval.waiting", &mut seen).await);
    let waiting = seen.last().unwrap().2.clone();
    let approval_id = waiting["approval_id"].as_str().unwrap().to_owned();
    assert!(
        waiting["approve_url"]
            .as_str()
            .unwrap()
            .ends_with(&format!("/v1/approvals/{approval_id}/approve"))
    );
    let order = names(&seen);
    let call = order.iter().position(|n| *n == "tool.call").unwrap();
    assert!(call < order.len() - 1, "{order:?}");
    // Nothing more while it waits: no result for a second.
    let more = tokio::time::timeout(
        Duration::from_secs(1),
        read_until(&mut stream, &mut buffer, "tool.result", &mut seen),
    )
    .await;
    assert!(
        more.is_err(),
        "the stream went on without a decision: {:?}",
        names(&seen)
    );
    assert!(!served.path("agents/ws/count.txt").exists());
    let (shown, run) = {
        let response = served
            .http
            .get(format!("{}/v1/runs/{run_id}", served.url))
            .bearer_auth(CI)
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        let text = response.text().await.unwrap();
        (status, serde_json::from_str::<Value>(&text).unwrap())
    };
    assert_eq!(
        (shown, run["status"].as_str()),
        (200, Some("waiting")),
        "{run}"
    );
    assert_eq!(run["pending_approval"], approval_id.as_str());

    let (status, decided) = served
        .post(
            &format!("/v1/approvals/{approval_id}/approve"),
            OPS,
            json!({}),
        )
        .await;
    assert_eq!(status, 200, "{decided}");
    assert!(read_until(&mut stream, &mut buffer, "run.ended", &mut seen).await);
    let order = names(&seen);
    let decided_at = order.iter().position(|n| *n == "approval.decided").unwrap();
    let result_at = order.iter().position(|n| *n == "tool.result").unwrap();
    assert!(decided_at < result_at, "{order:?}");
    assert_eq!(seen[result_at].2["status"], "ok", "{}", seen[result_at].2);
    assert_eq!(
        std::fs::read_to_string(served.path("agents/ws/count.txt")).unwrap(),
        "ran\n",
        "the tool ran once"
    );
    // The stream ends after run.ended.
    assert!(!read_until(&mut stream, &mut buffer, "anything", &mut seen).await);

    // A late client gets the whole history; a reconnect gets what it missed.
    let mut late = served.events(&run_id, None).await;
    let (mut buffer, mut history) = (String::new(), Vec::new());
    assert!(read_until(&mut late, &mut buffer, "run.ended", &mut history).await);
    assert_eq!(history[0].0, "run.started");
    assert_eq!(history.len(), seen.len());
    let resume_after = history[3].1;
    let mut again = served.events(&run_id, Some(resume_after)).await;
    let (mut buffer, mut rest) = (String::new(), Vec::new());
    assert!(read_until(&mut again, &mut buffer, "run.ended", &mut rest).await);
    assert_eq!(rest.len(), history.len() - 4);
    assert!(rest.iter().all(|(_, id, _)| *id > resume_after));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_refuse_bad_requests_and_the_server_keeps_serving() {
    let served = Served::start();
    let (status, body) = served
        .post("/v1/runs", CI, json!({"agent": "nobody", "prompt": "go"}))
        .await;
    assert_eq!(status, 404, "{body}");
    for agent in ["../agents/ops", "/etc/passwd", ".hidden", ""] {
        let (status, body) = served
            .post("/v1/runs", CI, json!({"agent": agent, "prompt": "go"}))
            .await;
        assert_eq!(status, 400, "{agent}: {body}");
    }
    let (status, body) = served
        .post(
            "/v1/runs",
            CI,
            json!({"agent": "ops", "prompt": "go", "model": "scripted:/etc/passwd"}),
        )
        .await;
    assert_eq!(status, 400, "{body}");
    let (status, body) = served
        .post("/v1/runs", OPS, json!({"agent": "ops", "prompt": "go"}))
        .await;
    assert_eq!(status, 403, "an approver token cannot start runs: {body}");
    let (status, _) = served
        .post(
            "/v1/runs",
            CI,
            json!({"agent": "ops", "prompt": "go", "extra": 1}),
        )
        .await;
    assert_eq!(status, 400);
    let (status, body) = served
        .post(
            "/v1/runs",
            CI,
            json!({"agent": "ops", "prompt": "go", "skills": ["no-such-skill"]}),
        )
        .await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["error"], "unknown_skill", "{body}");
    assert!(
        body["message"].as_str().unwrap().contains("no-such-skill"),
        "{body}"
    );
    let unknown = served.events("run_nope", None).await;
    assert_eq!(unknown.status().as_u16(), 404);
    let (status, body) = served
        .post("/v1/runs", CI, json!({"agent": "ops", "prompt": "go"}))
        .await;
    assert_eq!(status, 201, "{body}");
}

/// Copies `from` into `to`, folders included.
fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_example_pauses_a_run_until_an_approver_decides() {
    let dir = tempfile::tempdir().unwrap();
    let example = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/server");
    copy_tree(&example, dir.path());
    // The example's port may be taken here: any free one.
    let config = std::fs::read_to_string(dir.path().join("server.yaml"))
        .unwrap()
        .replace("listen: 127.0.0.1:8080", "listen: 127.0.0.1:0");
    std::fs::write(dir.path().join("server.yaml"), config).unwrap();
    let (ops, ci) = ("ops-lead-demo-token-0001", "ci-demo-token-000000001");
    let served = Served::serve(dir, &[("OPS_LEAD_TOKEN", ops), ("CI_TOKEN", ci)]);
    let (url, start) = (served.url.clone(), Instant::now());
    let http = served.http.clone();
    let created: Value = serde_json::from_str(
        &http
            .post(format!("{url}/v1/runs"))
            .bearer_auth(ci)
            .header("content-type", "application/json")
            .body(json!({"agent": "deploy", "prompt": "ship v2.4.1"}).to_string())
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap(),
    )
    .unwrap();
    let run_id = created["run_id"].as_str().unwrap().to_owned();
    let run = |http: reqwest::Client, url: String, run_id: String| async move {
        let text = http
            .get(format!("{url}/v1/runs/{run_id}"))
            .bearer_auth(ci)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        serde_json::from_str::<Value>(&text).unwrap()
    };
    let pending = loop {
        let view = run(http.clone(), url.clone(), run_id.clone()).await;
        if let Some(id) = view["pending_approval"].as_str() {
            break id.to_owned();
        }
        assert!(start.elapsed() < Duration::from_secs(120), "{view}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let approved = Command::new(BIN)
        .args(["approvals", "approve", &pending, "--server", &url])
        .env("TOLLGATE_TOKEN", ops)
        .output()
        .unwrap();
    assert!(
        approved.status.success(),
        "{}",
        String::from_utf8_lossy(&approved.stderr)
    );
    let done = loop {
        let view = run(http.clone(), url.clone(), run_id.clone()).await;
        if view["status"] == "completed" {
            break view;
        }
        assert!(start.elapsed() < Duration::from_secs(120), "{view}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(done["turns"], 2);
    assert!(served.path("state/tollgate.db").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_servers_approval_timeout_applies_to_its_runs() {
    let served = Served::start_with("approval: {timeout_seconds: 1}\n");
    let (status, created) = served
        .post("/v1/runs", CI, json!({"agent": "ops", "prompt": "go"}))
        .await;
    assert_eq!(status, 201, "{created}");
    let run_id = created["run_id"].as_str().unwrap().to_owned();
    let mut stream = served.events(&run_id, None).await;
    let (mut buffer, mut seen) = (String::new(), Vec::new());
    assert!(read_until(&mut stream, &mut buffer, "run.ended", &mut seen).await);
    let decided = seen
        .iter()
        .find(|(name, _, _)| name == "approval.decided")
        .unwrap();
    assert_eq!(decided.2["status"], "expired", "{}", decided.2);
    assert!(!served.path("agents/ws/count.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_count_a_runs_sandboxed_hook_runs_and_its_end() {
    let served = Served::start();
    // An agent whose own hook file's hooks run in the OS sandbox (the binary is its launcher).
    std::fs::write(
        served.path("agents/linted.yaml"),
        "name: linted\nmodel: scripted:linted.jsonl\ntools: [write_file]\nworkspace: ws2\n\
         hooks: [linted-hooks.yaml]\n",
    )
    .unwrap();
    std::fs::write(
        served.path("agents/linted-hooks.yaml"),
        "hooks:\n  PreToolUse:\n    - name: lint\n      script: \"exit 0\"\n    \
         - name: flaky-lint\n      failure_mode: fail_open\n      script: \"exit 1\"\n",
    )
    .unwrap();
    let call = json!({"role": "assistant", "content": null, "tool_calls": [{"id": "w1", "type": "function",
        "function": {"name": "write_file", "arguments": {"path": "x.txt", "content": "x"}}}]});
    let answer = json!({"role": "assistant", "content": "done"});
    std::fs::write(
        served.path("agents/linted.jsonl"),
        format!("{call}\n{answer}\n"),
    )
    .unwrap();
    let metrics = |token: Option<&str>| {
        let mut request = served.http.get(format!("{}/metrics", served.url));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        async move {
            let response = request.send().await.unwrap();
            (response.status().as_u16(), response.text().await.unwrap())
        }
    };
    assert_eq!(metrics(None).await.0, 401);

    let (status, created) = served
        .post("/v1/runs", CI, json!({"agent": "linted", "prompt": "go"}))
        .await;
    assert_eq!(status, 201, "{created}");
    let mut stream = served
        .events(created["run_id"].as_str().unwrap(), None)
        .await;
    let (mut buffer, mut seen) = (String::new(), Vec::new());
    assert!(read_until(&mut stream, &mut buffer, "run.ended", &mut seen).await);
    assert_eq!(seen.last().unwrap().2["status"], "completed");

    let (status, text) = metrics(Some(OPS)).await;
    assert_eq!(status, 200, "{text}");
    for line in [
        "tollgate_hook_runs_total{kind=\"command\",status=\"completed\"} 1",
        "tollgate_hook_runs_total{kind=\"command\",status=\"errored\"} 1",
        "tollgate_runs_started_total 1",
        "tollgate_runs_ended_total{status=\"completed\"} 1",
        "tollgate_runs_in_progress{status=\"running\"} 0",
    ] {
        assert!(text.lines().any(|l| l == line), "{line}:\n{text}");
    }
}
