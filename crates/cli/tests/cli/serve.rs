//! `tollgate serve` through the binary: a real server on 127.0.0.1 (port 0), requests filed
//! into its database by the store (or by a `tollgate run` that asks), decided over HTTP and by
//! `tollgate approvals --server`.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use sha2::Digest;
use tollgate_approval::{NewRequest, Store};

use crate::approvals::{Case, finish};

const BIN: &str = env!("CARGO_BIN_EXE_tollgate");
const OPS: &str = "ops-lead-token-0123456789";
const DBA: &str = "dba-token-0123456789abcdef";
const CI: &str = "ci-token-0123456789abcdef";
const AUDITOR: &str = "auditor-token-0123456789";

/// A `tollgate serve` on a free port, its files in `dir`; killed when dropped.
struct Server {
    dir: PathBuf,
    child: Child,
    url: String,
    http: reqwest::Client,
}

impl Server {
    /// Starts a server in `dir` whose database is `dir/approvals.db`.
    fn start(dir: &Path) -> Self {
        let auditor = hex::encode(sha2::Sha256::digest(AUDITOR.as_bytes()));
        std::fs::write(
            dir.join("server.yaml"),
            format!(
                "listen: 127.0.0.1:0\n\
                 database: sqlite://approvals.db\n\
                 tokens:\n\
                 \x20 - {{name: ops-lead, token: \"${{OPS_LEAD_TOKEN}}\", roles: [approver]}}\n\
                 \x20 - {{name: dba, token: {DBA}, roles: [approver]}}\n\
                 \x20 - {{name: ci, token: {CI}, roles: [runner]}}\n\
                 \x20 - {{name: auditor, token_sha256: \"{auditor}\", roles: [admin]}}\n"
            ),
        )
        .unwrap();
        let child = Command::new(BIN)
            .args(["serve", "--config", "server.yaml"])
            .current_dir(dir)
            .env("OPS_LEAD_TOKEN", OPS)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.join("serve.err")).unwrap())
            .spawn()
            .unwrap();
        let mut server = Self {
            dir: dir.to_path_buf(),
            child,
            url: String::new(),
            http: reqwest::Client::new(),
        };
        server.url = server.address();
        server
    }

    /// The `http://…` address the server printed once bound.
    fn address(&mut self) -> String {
        let start = Instant::now();
        loop {
            let err = self.stderr();
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

    fn stderr(&self) -> String {
        std::fs::read_to_string(self.dir.join("serve.err")).unwrap_or_default()
    }

    fn db(&self) -> PathBuf {
        self.dir.join("approvals.db")
    }

    /// Files a request that `approvers` may decide; its id.
    async fn file(&self, approvers: &[&str]) -> String {
        let store = Store::open(&self.db()).await.unwrap();
        let new = NewRequest {
            run_id: "run-1".into(),
            session_id: "s".into(),
            scope: ulid_like(),
            agent: "ops".into(),
            tool_name: "sql_execute".into(),
            tool_call_id: "c1".into(),
            arguments: json!({"sql": "UPDATE orders SET status = 1 WHERE id = 3"}),
            reasons: vec!["calls of `sql_execute` need confirmation".into()],
            asked_by: "permission_gate".into(),
            approvers: approvers.iter().map(|a| (*a).to_owned()).collect(),
            timeout_seconds: 600,
        };
        store.file(&new).await.unwrap().request.id
    }

    /// `METHOD path` with `token` and a JSON `body`: (status, body as JSON, headers).
    async fn call(
        &self,
        method: &str,
        path: &str,
        token: Option<&str>,
        body: Option<&str>,
    ) -> (u16, Value, reqwest::header::HeaderMap) {
        let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        let mut request = self.http.request(method, format!("{}{path}", self.url));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        if let Some(body) = body {
            request = request
                .header("content-type", "application/json")
                .body(body.to_owned());
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let text = response.text().await.unwrap();
        let value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{status}: not JSON ({e}): {text}"));
        (status, value, headers)
    }

    async fn approve(&self, id: &str, token: &str, body: &str) -> (u16, Value) {
        let path = format!("/v1/approvals/{id}/approve");
        let (status, body, _) = self.call("POST", &path, Some(token), Some(body)).await;
        (status, body)
    }

    /// `tollgate approvals ARGS --server URL`, with `env` set.
    fn approvals(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        Command::new(BIN)
            .arg("approvals")
            .args(args)
            .args(["--server", &self.url])
            .envs(env.iter().copied())
            .env_remove("TOLLGATE_DB")
            .output()
            .unwrap()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A scope unique to each filing, so each filing is its own request.
fn ulid_like() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    format!("t{}:pre_tool_use", NEXT.fetch_add(1, Ordering::Relaxed))
}

fn text(output: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_lists_shows_and_approves_over_http() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());
    let (status, health, _) = server.call("GET", "/healthz", None, None).await;
    assert_eq!((status, health), (200, json!({"status": "ok"})));
    let id = server.file(&["ops-lead"]).await;

    let (status, list, _) = server.call("GET", "/v1/approvals", Some(OPS), None).await;
    assert_eq!(status, 200);
    assert_eq!(list["requests"][0]["id"], id.as_str());
    assert_eq!(list["requests"][0]["status"], "pending");
    let (status, shown, _) = server
        .call("GET", &format!("/v1/approvals/{id}"), Some(OPS), None)
        .await;
    assert_eq!(status, 200);
    assert_eq!(shown["request"]["tool_name"], "sql_execute");
    assert_eq!(shown["history"][0]["action"], "create");

    let (status, decided) = server
        .approve(&id, OPS, r#"{"note": "ticket OPS-12"}"#)
        .await;
    assert_eq!(status, 200, "{decided}");
    assert_eq!(decided["request"]["status"], "approved");
    assert_eq!(decided["request"]["responded_by"], "ops-lead");
    assert_eq!(decided["request"]["channel"], "api");
    assert_eq!(decided["request"]["response_note"], "ticket OPS-12");

    let (_, pending, _) = server.call("GET", "/v1/approvals", Some(OPS), None).await;
    assert_eq!(pending["requests"], json!([]));
    let (_, approved, _) = server
        .call("GET", "/v1/approvals?status=approved", Some(OPS), None)
        .await;
    assert_eq!(approved["requests"][0]["id"], id.as_str());
    let (_, shown, _) = server
        .call("GET", &format!("/v1/approvals/{id}"), Some(OPS), None)
        .await;
    let last = shown["history"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(
        (
            &last["action"],
            &last["outcome"],
            &last["actor"],
            &last["channel"]
        ),
        (
            &json!("approve"),
            &json!("applied"),
            &json!("ops-lead"),
            &json!("api")
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_with_an_edit_records_the_edited_arguments() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());
    let id = server.file(&["ops-lead"]).await;
    let (status, decided) = server
        .approve(&id, OPS, r#"{"edit": {"sql": "SELECT 1"}}"#)
        .await;
    assert_eq!(status, 200, "{decided}");
    assert_eq!(
        decided["request"]["edited_arguments"],
        json!({"sql": "SELECT 1"})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_approvals_at_once_give_one_200_and_one_409() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());
    let id = server.file(&["ops-lead"]).await;
    let (a, b) = tokio::join!(server.approve(&id, OPS, ""), server.approve(&id, OPS, ""));
    let mut answers = [a, b];
    answers.sort_by_key(|(status, _)| *status);
    assert_eq!((answers[0].0, answers[1].0), (200, 409));
    let conflict = &answers[1].1;
    assert_eq!(conflict["error"], "already_decided");
    assert_eq!(conflict["status"], "approved");
    assert_eq!(conflict["by"], "ops-lead");
    assert!(
        conflict["at"].as_str().unwrap().ends_with('Z'),
        "{conflict}"
    );
    let message = conflict["message"].as_str().unwrap();
    assert!(
        message.contains(&format!("{id} is already approved by ops-lead at")),
        "{message}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approve_against_reject_gives_one_200_and_one_409() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());
    let id = server.file(&["ops-lead", "dba"]).await;
    let reject = async {
        let path = format!("/v1/approvals/{id}/reject");
        let (status, body, _) = server
            .call("POST", &path, Some(DBA), Some(r#"{"note": "no"}"#))
            .await;
        (status, body)
    };
    let (approved, rejected) = tokio::join!(server.approve(&id, OPS, "{}"), reject);
    let statuses = [approved.0, rejected.0];
    assert!(
        statuses == [200, 409] || statuses == [409, 200],
        "{statuses:?}"
    );
    let (winner, loser) = if approved.0 == 200 {
        (&approved.1, &rejected.1)
    } else {
        (&rejected.1, &approved.1)
    };
    assert_eq!(loser["error"], "already_decided");
    assert_eq!(loser["status"], winner["request"]["status"]);
    assert_eq!(loser["by"], winner["request"]["responded_by"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_and_roles_are_checked() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());
    let id = server.file(&["ops-lead"]).await;
    let list = "/v1/approvals";

    let (status, body, headers) = server.call("GET", list, None, None).await;
    assert_eq!((status, &body["error"]), (401, &json!("unauthorized")));
    assert_eq!(headers["www-authenticate"], "Bearer");
    let (status, _, headers) = server.call("GET", list, Some("not-a-token"), None).await;
    assert_eq!(status, 401);
    assert_eq!(headers["www-authenticate"], "Bearer");
    let response = server
        .http
        .get(format!("{}{list}", server.url))
        .header("authorization", format!("Basic {OPS}"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 401, "only the Bearer scheme");

    let (status, body, _) = server.call("GET", list, Some(CI), None).await;
    assert_eq!((status, &body["error"]), (403, &json!("forbidden")));
    let (status, _) = server.approve(&id, CI, "").await;
    assert_eq!(status, 403, "a runner token may not decide");

    let (status, body) = server.approve(&id, DBA, "").await;
    assert_eq!(status, 403, "dba is not among this request's approvers");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("its approvers: ops-lead"),
        "{body}"
    );
    // A hashed admin token lists; the request is still pending after the refusals.
    let (status, body, _) = server.call("GET", list, Some(AUDITOR), None).await;
    assert_eq!(status, 200);
    assert_eq!(body["requests"][0]["status"], "pending");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_requests_get_json_errors_and_the_server_keeps_serving() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());
    let id = server.file(&["ops-lead"]).await;
    let big = format!(r#"{{"note": "{}"}}"#, "x".repeat(70 * 1024));
    for (body, status, error) in [
        ("{not json", 400, "bad_request"),
        (r#"{"edit": "DROP TABLE orders"}"#, 400, "bad_request"),
        (r#"{"edit": [1, 2]}"#, 400, "bad_request"),
        (r#"{"note": "x", "by": "someone-else"}"#, 400, "bad_request"),
        (r#"{"note": 5}"#, 400, "bad_request"),
        (big.as_str(), 413, "payload_too_large"),
    ] {
        let (got, answer) = server.approve(&id, OPS, body).await;
        assert_eq!((got, &answer["error"]), (status, &json!(error)), "{answer}");
    }
    let (status, body) = server.approve("cr_unknown", OPS, "").await;
    assert_eq!((status, &body["error"]), (404, &json!("not_found")));
    let (status, body, _) = server
        .call("GET", "/v1/approvals/cr_unknown", Some(OPS), None)
        .await;
    assert_eq!((status, &body["error"]), (404, &json!("not_found")));
    let (status, _, _) = server
        .call("GET", "/v1/approvals?status=maybe", Some(OPS), None)
        .await;
    assert_eq!(status, 400);
    let (status, _, _) = server
        .call("GET", "/v1/approvals?state=pending", Some(OPS), None)
        .await;
    assert_eq!(status, 400, "an unknown query parameter");
    let (status, body, _) = server.call("GET", "/v2/nothing", Some(OPS), None).await;
    assert_eq!((status, &body["error"]), (404, &json!("not_found")));
    let (status, body, _) = server.call("DELETE", "/healthz", None, None).await;
    assert_eq!(
        (status, &body["error"]),
        (405, &json!("method_not_allowed"))
    );
    let plain = server
        .http
        .post(format!("{}/v1/approvals/{id}/approve", server.url))
        .bearer_auth(OPS)
        .header("content-type", "text/plain")
        .body(r#"{"note": "x"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(plain.status().as_u16(), 415);

    // Still serving, and nothing above decided the request.
    let (status, decided) = server.approve(&id, OPS, "").await;
    assert_eq!(status, 200, "{decided}");
    assert_eq!(decided["request"]["response_note"], Value::Null);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approvals_cli_through_the_server_exits_0_then_3() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());
    let id = server.file(&["ops-lead"]).await;
    let other = server.file(&["ops-lead"]).await;

    let listed = server.approvals(&["list", "--token", OPS], &[]);
    assert!(listed.status.success(), "{}", text(&listed));
    let listed = String::from_utf8_lossy(&listed.stdout);
    assert!(
        listed.contains(&id) && listed.contains("sql_execute"),
        "{listed}"
    );

    let approved = server.approvals(
        &["approve", &id, "--note", "ok"],
        &[("TOLLGATE_TOKEN", OPS)],
    );
    assert_eq!(approved.status.code(), Some(0), "{}", text(&approved));
    let said = String::from_utf8_lossy(&approved.stdout);
    assert!(
        said.starts_with(&format!("{id} approved by ops-lead at ")),
        "{said}"
    );

    let again = server.approvals(&["approve", &id, "--token", OPS], &[]);
    assert_eq!(again.status.code(), Some(3), "{}", text(&again));
    let said = String::from_utf8_lossy(&again.stderr);
    assert!(said.contains("already approved by ops-lead at"), "{said}");

    let shown = server.approvals(&["show", &id, "--json", "--token", OPS], &[]);
    assert!(shown.status.success(), "{}", text(&shown));
    let shown: Value = serde_json::from_slice(&shown.stdout).unwrap();
    assert_eq!(shown["request"]["channel"], "api");
    assert_eq!(shown["request"]["response_note"], "ok");

    let rejected = server.approvals(&["reject", &other, "--note", "no", "--token", OPS], &[]);
    assert_eq!(rejected.status.code(), Some(0), "{}", text(&rejected));
    assert!(String::from_utf8_lossy(&rejected.stdout).contains("rejected by ops-lead"));

    let unknown = server.approvals(&["approve", "cr_unknown", "--token", OPS], &[]);
    assert_eq!(unknown.status.code(), Some(1), "{}", text(&unknown));
    let runner = server.approvals(&["list", "--token", CI], &[]);
    assert_eq!(runner.status.code(), Some(1), "{}", text(&runner));
    assert!(String::from_utf8_lossy(&runner.stderr).contains("lacks the approver role"));
    let no_token = server.approvals(&["list"], &[("TOLLGATE_TOKEN", "")]);
    assert_eq!(no_token.status.code(), Some(2), "{}", text(&no_token));
    let as_other = server.approvals(&["approve", &id, "--as", "dba", "--token", OPS], &[]);
    assert_eq!(as_other.status.code(), Some(2), "{}", text(&as_other));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_waiting_on_the_servers_database_completes_after_an_http_approve() {
    let case = Case::new(
        &[("c1", "echo ran >> count.txt")],
        "approval:\n  approvers: [ops-lead]\n",
    );
    let server = Server::start(case.path("").as_path());
    let mut run = case.spawn(&[]);
    let start = Instant::now();
    let id = loop {
        let (_, list, _) = server.call("GET", "/v1/approvals", Some(OPS), None).await;
        if let Some(id) = list["requests"][0]["id"].as_str() {
            break id.to_owned();
        }
        assert!(run.try_wait().unwrap().is_none(), "{}", case.output());
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "{}",
            case.output()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(case.count(), 0, "nothing runs before the decision");
    let (status, decided) = server.approve(&id, OPS, "").await;
    assert_eq!(status, 200, "{decided}");
    assert_eq!(finish(&mut run, &case), Some(0), "{}", case.output());
    assert_eq!(case.count(), 1);
    let approval = &case.of("approval")[0];
    assert_eq!(approval["by"], "ops-lead");
    assert_eq!(approval["channel"], "api");
}

#[test]
fn serve_stops_on_sigterm_with_exit_0() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path());
    let pid = nix::unistd::Pid::from_raw(i32::try_from(server.child.id()).unwrap());
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let status = server.child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{}", server.stderr());
    assert!(
        server.stderr().contains("tollgate serve: stopped"),
        "{}",
        server.stderr()
    );
}

#[test]
fn a_bad_config_names_the_key_and_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let serve = |yaml: &str| {
        std::fs::write(dir.path().join("server.yaml"), yaml).unwrap();
        let out = Command::new(BIN)
            .args(["serve", "--config"])
            .arg(dir.path().join("server.yaml"))
            .env_remove("NOT_SET_ANYWHERE")
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, err) = serve("listn: 127.0.0.1:0\n");
    assert_eq!(code, Some(1));
    assert!(
        err.contains("unknown key `listn` (did you mean `listen`?)"),
        "{err}"
    );
    let (code, err) =
        serve("tokens: [{name: ci, token: \"${NOT_SET_ANYWHERE}\", roles: [runner]}]\n");
    assert_eq!(code, Some(1));
    assert!(
        err.contains("`tokens[0].token`: the environment variable `NOT_SET_ANYWHERE` is not set"),
        "{err}"
    );
}
