//! A `tollgate serve` on a free port of 127.0.0.1 for the tests of `tollgate hook --server`
//! (shared by the `cli` and `interop` test binaries): a runner token for the hook, an
//! approver token for the test, and the API calls a person's decision takes.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// The hook's token (role runner).
pub const RUNNER: &str = "ci-bridge-token-0123456789";
/// A person's token (role approver), named `ops-lead`.
pub const APPROVER: &str = "ops-lead-token-0123456789";

/// The server; killed when dropped.
pub struct Served {
    dir: tempfile::TempDir,
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    http: reqwest::Client,
}

impl Served {
    /// Starts `tollgate serve` with a database of its own.
    pub fn start() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("server.yaml"),
            format!(
                "listen: 127.0.0.1:0\n\
                 database: sqlite://approvals.db\n\
                 tokens:\n\
                 \x20 - {{name: ops-lead, token: {APPROVER}, roles: [approver]}}\n\
                 \x20 - {{name: ci, token: {RUNNER}, roles: [runner]}}\n"
            ),
        )
        .unwrap();
        std::fs::write(dir.path().join("runner.token"), format!("{RUNNER}\n")).unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_tollgate"))
            .args(["serve", "--config", "server.yaml"])
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.path().join("serve.err")).unwrap())
            .spawn()
            .unwrap();
        let mut served = Self {
            dir,
            child,
            url: String::new(),
            http: reqwest::Client::new(),
        };
        served.url = served.address();
        served
    }

    fn address(&mut self) -> String {
        let start = Instant::now();
        loop {
            let err =
                std::fs::read_to_string(self.dir.path().join("serve.err")).unwrap_or_default();
            // Only a whole line: stderr may be read between the writes of one line.
            if let Some(at) = err.find("listening on ")
                && let Some((address, _)) = err[at + "listening on ".len()..].split_once('\n')
            {
                return address.trim().to_owned();
            }
            if let Some(status) = self.child.try_wait().unwrap() {
                panic!("the server exited ({status}): {err}");
            }
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "no address: {err}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// A file holding the runner's token, for `--token-file`.
    pub fn token_file(&self) -> PathBuf {
        self.dir.path().join("runner.token")
    }

    /// `METHOD path` with `token` and a JSON `body`: the status and the body as JSON.
    pub async fn call(
        &self,
        method: &str,
        path: &str,
        token: &str,
        body: Option<&Value>,
    ) -> (u16, Value) {
        let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        let mut request = self
            .http
            .request(method, format!("{}{path}", self.url))
            .bearer_auth(token);
        if let Some(body) = body {
            request = request
                .header("content-type", "application/json")
                .body(body.to_string());
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        let text = response.text().await.unwrap();
        let value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{status}: not JSON ({e}): {text}"));
        (status, value)
    }

    /// The first pending request, once there is one (waits up to 90 s).
    pub async fn first_pending(&self) -> Value {
        let start = Instant::now();
        loop {
            let (status, list) = self.call("GET", "/v1/approvals", APPROVER, None).await;
            assert_eq!(status, 200, "{list}");
            if let Some(request) = list["requests"].as_array().and_then(|r| r.first()) {
                return request.clone();
            }
            assert!(
                start.elapsed() < Duration::from_secs(90),
                "no request was filed"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Approves (or with `reject`, rejects) `id` as `ops-lead` with `body`.
    pub async fn decide(&self, id: &str, verdict: &str, body: &Value) -> Value {
        let path = format!("/v1/approvals/{id}/{verdict}");
        let (status, answer) = self.call("POST", &path, APPROVER, Some(body)).await;
        assert_eq!(status, 200, "{answer}");
        answer
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
