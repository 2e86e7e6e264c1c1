//! What the server benchmarks share: `tollgate serve` as a child process in a temporary
//! folder, calls of its API, its event streams read as they arrive, and its memory.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use serde_json::Value;
use tokio::sync::mpsc;

/// The approver's token.
pub const OPS: &str = "ops-lead-token-0123456789";
/// The runner's token.
pub const CI: &str = "ci-token-0123456789abcdef";

/// `tollgate serve` in a temporary folder with a SQLite database there; killed when dropped.
pub struct Served {
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    /// A client of the server.
    pub http: reqwest::Client,
    child: Child,
    _dir: tempfile::TempDir,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Served {
    /// Starts the binary with `agents` (file name, contents) in its agents directory, and
    /// returns once it listens.
    pub fn start(agents: &[(&str, String)]) -> Result<Self> {
        Self::start_with(agents, "", &[])
    }

    /// [`Served::start`] with `extra` top-level keys in its configuration (`approval: …`)
    /// and `env` in its environment.
    pub fn start_with(
        agents: &[(&str, String)],
        extra: &str,
        env: &[(&str, &str)],
    ) -> Result<Self> {
        let dir = tempfile::tempdir()?;
        let agents_dir = dir.path().join("agents");
        std::fs::create_dir(&agents_dir)?;
        for (name, contents) in agents {
            std::fs::write(agents_dir.join(name), contents)?;
        }
        std::fs::write(
            dir.path().join("server.yaml"),
            format!(
                "listen: 127.0.0.1:0\ndatabase: sqlite://approvals.db\nagents_dir: agents\n\
                 tokens:\n  - {{name: ops-lead, token: {OPS}, roles: [approver]}}\n  \
                 - {{name: ci, token: {CI}, roles: [runner]}}\n{extra}"
            ),
        )?;
        let errors = dir.path().join("serve.err");
        let child = Command::new(binary()?)
            .args(["serve", "--config", "server.yaml"])
            .current_dir(dir.path())
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&errors)?)
            .spawn()?;
        let url = listening(&errors)?;
        Ok(Self {
            url,
            http: reqwest::Client::new(),
            child,
            _dir: dir,
        })
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `POST path` with a JSON `body` and `token`; the status and the JSON answer.
    pub async fn post(&self, path: &str, token: &str, body: &Value) -> Result<(u16, Value)> {
        let response = self
            .http
            .post(format!("{}{path}", self.url))
            .bearer_auth(token)
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await?;
        let status = response.status().as_u16();
        let text = response.text().await?;
        Ok((status, serde_json::from_str(&text).unwrap_or(Value::Null)))
    }

    /// `GET path` with `token`; the JSON answer (an error unless 200).
    pub async fn get(&self, path: &str, token: &str) -> Result<Value> {
        Ok(serde_json::from_str(&self.get_text(path, token).await?)?)
    }

    /// `GET path` with `token`; the text answer (an error unless 200).
    pub async fn get_text(&self, path: &str, token: &str) -> Result<String> {
        let response = self
            .http
            .get(format!("{}{path}", self.url))
            .bearer_auth(token)
            .send()
            .await?;
        if !response.status().is_success() {
            bail!("GET {path}: {}", response.status());
        }
        Ok(response.text().await?)
    }

    /// Starts a run of `agent`; its id.
    pub async fn start_run(&self, agent: &str) -> Result<String> {
        let body = serde_json::json!({"agent": agent, "prompt": "go"});
        let (status, created) = self.post("/v1/runs", CI, &body).await?;
        if status != 201 {
            bail!("POST /v1/runs: {status} {created}");
        }
        created["run_id"]
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| anyhow!("no run_id in {created}"))
    }

    /// Approves request `id`.
    pub async fn approve(&self, id: &str) -> Result<()> {
        let path = format!("/v1/approvals/{id}/approve");
        let (status, body) = self.post(&path, OPS, &serde_json::json!({})).await?;
        if status != 200 {
            bail!("approving {id}: {status} {body}");
        }
        Ok(())
    }

    /// The events of run `id` as they arrive, each with the instant its bytes were read. The
    /// channel closes when the stream ends.
    pub async fn events(&self, id: &str) -> Result<mpsc::UnboundedReceiver<(Event, Instant)>> {
        let mut response = self
            .http
            .get(format!("{}/v1/runs/{id}/events", self.url))
            .bearer_auth(CI)
            .send()
            .await?;
        if !response.status().is_success() {
            bail!("GET events of {id}: {}", response.status());
        }
        let (sender, receiver) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            let mut buffer = Vec::new();
            while let Ok(Some(chunk)) = response.chunk().await {
                let at = Instant::now();
                buffer.extend_from_slice(&chunk);
                while let Some(end) = buffer.windows(2).position(|w| w == b"\n\n") {
                    let block: Vec<u8> = buffer.drain(..end + 2).collect();
                    if let Some(event) = Event::parse(&String::from_utf8_lossy(&block))
                        && sender.send((event, at)).is_err()
                    {
                        return;
                    }
                }
            }
        });
        Ok(receiver)
    }
}

/// One SSE event.
#[derive(Debug, Clone)]
pub struct Event {
    /// `event:`, such as `tool.started`.
    pub name: String,
    /// `data:`, as JSON.
    pub data: Value,
}

impl Event {
    /// The event of one block; `None` for a keep-alive comment.
    fn parse(block: &str) -> Option<Self> {
        let (mut name, mut data) = (None, String::new());
        for line in block.lines() {
            if let Some(v) = line.strip_prefix("event: ") {
                name = Some(v.to_owned());
            } else if let Some(v) = line.strip_prefix("data: ") {
                data.push_str(v);
            }
        }
        Some(Self {
            name: name?,
            data: serde_json::from_str(&data).unwrap_or(Value::Null),
        })
    }
}

/// Reads `events` until one named `name`; it and when it arrived.
pub async fn until(
    events: &mut mpsc::UnboundedReceiver<(Event, Instant)>,
    name: &str,
) -> Result<(Event, Instant)> {
    while let Some((event, at)) = events.recv().await {
        if event.name == name {
            return Ok((event, at));
        }
    }
    bail!("the stream ended before {name}")
}

/// The `tollgate` binary: `$TOLLGATE_BIN`, else the one built beside this example
/// (`target/release/tollgate` for `target/release/examples/NAME`).
fn binary() -> Result<PathBuf> {
    if let Some(path) = std::env::var_os("TOLLGATE_BIN") {
        return Ok(path.into());
    }
    let exe = std::env::current_exe()?;
    let path = exe
        .parent()
        .and_then(Path::parent)
        .map(|dir| dir.join("tollgate"))
        .context("no folder above this example")?;
    if !path.is_file() {
        bail!(
            "{} is missing: build it first (`cargo build --release -p tollgate`), or set \
             TOLLGATE_BIN",
            path.display()
        );
    }
    Ok(path)
}

/// Waits for `tollgate serve: listening on URL` in the server's stderr; the URL.
fn listening(errors: &Path) -> Result<String> {
    let start = Instant::now();
    loop {
        let text = std::fs::read_to_string(errors).unwrap_or_default();
        if let Some(at) = text.find("listening on ") {
            let rest = &text[at + "listening on ".len()..];
            return Ok(rest.lines().next().unwrap_or_default().trim().to_owned());
        }
        if start.elapsed() > Duration::from_secs(30) {
            bail!("the server did not start: {text}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The `VmRSS` of process `pid`, in bytes.
pub fn rss_bytes(pid: u32) -> Result<u64> {
    status_field(pid, "VmRSS:").map(|kib| kib * 1024)
}

/// A numeric field of `/proc/PID/status` (`VmRSS:` in KiB, `Threads:` a count).
pub fn status_field(pid: u32, field: &str) -> Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    status
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .with_context(|| format!("no {field} in /proc/{pid}/status"))
}

/// How many descriptors process `pid` holds open.
pub fn open_fds(pid: u32) -> Result<usize> {
    Ok(std::fs::read_dir(format!("/proc/{pid}/fd"))?.count())
}

/// The nearest-rank percentile `p` (0..=1) of sorted `values`.
pub fn percentile(values: &[Duration], p: f64) -> Duration {
    let rank = (p * values.len() as f64).ceil() as usize;
    values
        .get(rank.saturating_sub(1))
        .copied()
        .unwrap_or_default()
}

/// Milliseconds, to 0.01 ms.
pub fn ms(d: Duration) -> f64 {
    (d.as_secs_f64() * 100_000.0).round() / 100.0
}
