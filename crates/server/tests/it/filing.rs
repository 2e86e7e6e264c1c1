//! `POST /v1/approvals` and `GET /v1/approvals/{id}?wait=…`: a runner (`tollgate hook` for
//! Claude Code and Codex) files a call that asks a human, re-attaches to it when it files the
//! same call again, and long-polls for the decision; it sees no other token's requests.

use serde_json::{Value, json};

use crate::{CI, DBA, OPS, Server};

/// `METHOD path` with `token` and `body`: the status and the JSON answer.
async fn call(
    server: &Server,
    method: reqwest::Method,
    path: &str,
    token: Option<&str>,
    body: Option<Value>,
) -> (u16, Value) {
    let mut request = reqwest::Client::new().request(method, format!("{}{path}", server.url));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    if let Some(body) = body {
        request = request
            .header("content-type", "application/json")
            .body(body.to_string());
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    (
        status,
        serde_json::from_str(&response.text().await.unwrap()).unwrap(),
    )
}

async fn file(server: &Server, token: &str, body: Value) -> (u16, Value) {
    call(
        server,
        reqwest::Method::POST,
        "/v1/approvals",
        Some(token),
        Some(body),
    )
    .await
}

async fn show(server: &Server, token: &str, id: &str, query: &str) -> (u16, Value) {
    let path = format!("/v1/approvals/{id}{query}");
    call(server, reqwest::Method::GET, &path, Some(token), None).await
}

fn bash_call(tool_use_id: &str) -> Value {
    json!({
        "agent": "claude-code", "session_id": "s-1", "tool_name": "Bash",
        "tool_use_id": tool_use_id, "arguments": {"command": "deploy v2", "description": "d"},
        "reasons": ["deploys need a human"], "asked_by": "deploy-guard"
    })
}

#[tokio::test]
async fn a_runner_files_a_call_and_filing_it_again_re_attaches() {
    let server = Server::start(None).await;
    let (status, filed) = file(&server, CI, bash_call("toolu_1")).await;
    assert_eq!(status, 201, "{filed}");
    assert_eq!(filed["attached"], false);
    let request = &filed["request"];
    assert_eq!(request["status"], "pending");
    assert_eq!(request["agent"], "claude-code");
    assert_eq!(request["run_id"], "s-1");
    assert_eq!(request["tool_name"], "Bash");
    assert_eq!(request["tool_call_id"], "toolu_1");
    assert_eq!(request["asked_by"], "deploy-guard");
    assert_eq!(request["reasons"], json!(["deploys need a human"]));
    // The server's approver and admin tokens decide when the body names nobody.
    assert_eq!(request["approvers"], json!(["ops-lead", "dba"]));

    let (status, again) = file(&server, CI, bash_call("toolu_1")).await;
    assert_eq!((status, &again["attached"]), (200, &json!(true)), "{again}");
    assert_eq!(again["request"]["id"], request["id"]);
    let (status, other) = file(&server, CI, bash_call("toolu_2")).await;
    assert_eq!(status, 201);
    assert_ne!(other["request"]["id"], request["id"]);
}

#[tokio::test]
async fn the_body_may_name_the_approvers_and_the_expiry() {
    let server = Server::start(None).await;
    let mut body = bash_call("toolu_1");
    body["approvers"] = json!(["dba"]);
    body["timeout_seconds"] = json!(90);
    let (status, filed) = file(&server, CI, body).await;
    assert_eq!(status, 201, "{filed}");
    let request = &filed["request"];
    assert_eq!(request["approvers"], json!(["dba"]));
    let expires = request["expires_at"].as_i64().unwrap() - request["created_at"].as_i64().unwrap();
    assert_eq!(expires, 90_000);
}

#[tokio::test]
async fn only_runners_and_admins_file() {
    let server = Server::start(None).await;
    let (status, body) = file(&server, OPS, bash_call("toolu_1")).await;
    assert_eq!(status, 403, "an approver may not file");
    assert!(body["message"].as_str().unwrap().contains("runner role"));
    let (status, _) = file(&server, DBA, bash_call("toolu_1")).await;
    assert_eq!(status, 201, "an admin may");
    let (status, _) = call(
        &server,
        reqwest::Method::POST,
        "/v1/approvals",
        None,
        Some(bash_call("toolu_1")),
    )
    .await;
    assert_eq!(status, 401);
}

#[tokio::test]
async fn malformed_filings_are_refused_400() {
    let server = Server::start(None).await;
    let mut cases = Vec::new();
    for (key, value) in [
        ("agent", json!("")),
        ("session_id", json!(" ")),
        ("tool_use_id", json!("")),
        ("arguments", json!("rm -rf /")),
        ("timeout_seconds", json!(0)),
        ("timeout_seconds", json!(604_801)),
        ("approved_by", json!("me")),
    ] {
        let mut body = bash_call("toolu_1");
        body[key] = value;
        cases.push((key, body));
    }
    let mut missing = bash_call("toolu_1");
    missing.as_object_mut().unwrap().remove("tool_name");
    cases.push(("tool_name", missing));
    for (key, body) in cases {
        let (status, answer) = file(&server, CI, body).await;
        assert_eq!(status, 400, "{key}: {answer}");
        assert_eq!(answer["error"], "bad_request");
    }
    assert_eq!(server.store.list(None).await.unwrap().len(), 0);
}

#[tokio::test]
async fn a_runner_sees_the_requests_it_filed_and_no_others() {
    let server = Server::start(None).await;
    let (_, mine) = file(&server, CI, bash_call("toolu_1")).await;
    let mine = mine["request"]["id"].as_str().unwrap().to_owned();
    let (status, shown) = show(&server, CI, &mine, "").await;
    assert_eq!(status, 200, "{shown}");
    assert_eq!(shown["history"][0]["action"], "create");
    assert_eq!(shown["history"][0]["actor"], "agent:claude-code");

    let (_, admins) = file(&server, DBA, bash_call("toolu_1")).await;
    let admins = admins["request"]["id"].as_str().unwrap().to_owned();
    assert_ne!(admins, mine, "another token's filing is another request");
    let by_a_run = server
        .file(json!({"sql": "DELETE FROM t"}), &["ops-lead"])
        .await;
    for other in [admins, by_a_run] {
        let (status, body) = show(&server, CI, &other, "").await;
        assert_eq!(status, 403, "{body}");
        let (status, _) = show(&server, OPS, &other, "").await;
        assert_eq!(status, 200, "an approver sees every request");
    }
}

#[tokio::test]
async fn a_long_poll_answers_with_the_decision() {
    let server = Server::start(None).await;
    let (_, filed) = file(&server, CI, bash_call("toolu_1")).await;
    let id = filed["request"]["id"].as_str().unwrap().to_owned();

    // Nobody decides: the wait ends and the request is still pending.
    let (status, shown) = show(&server, CI, &id, "?wait=1").await;
    assert_eq!(
        (status, &shown["request"]["status"]),
        (200, &json!("pending"))
    );

    let poll = {
        let url = format!("{}/v1/approvals/{id}?wait=25", server.url);
        tokio::spawn(async move {
            let response = reqwest::Client::new()
                .get(url)
                .bearer_auth(CI)
                .send()
                .await
                .unwrap();
            serde_json::from_str::<Value>(&response.text().await.unwrap()).unwrap()
        })
    };
    let path = format!("/v1/approvals/{id}/approve");
    let body = json!({"note": "ship it", "edit": {"command": "deploy v2 --canary"}});
    let (status, _) = call(&server, reqwest::Method::POST, &path, Some(OPS), Some(body)).await;
    assert_eq!(status, 200);
    let polled = poll.await.unwrap();
    assert_eq!(polled["request"]["status"], "approved");
    assert_eq!(polled["request"]["responded_by"], "ops-lead");
    assert_eq!(
        polled["request"]["edited_arguments"],
        json!({"command": "deploy v2 --canary"})
    );
}

#[tokio::test]
async fn a_long_poll_sees_the_request_expire() {
    let server = Server::start(None).await;
    let mut body = bash_call("toolu_1");
    body["timeout_seconds"] = json!(1);
    let (_, filed) = file(&server, CI, body).await;
    let id = filed["request"]["id"].as_str().unwrap().to_owned();
    let (status, shown) = show(&server, CI, &id, "?wait=10").await;
    assert_eq!(status, 200);
    assert_eq!(shown["request"]["status"], "expired");
    assert_eq!(shown["request"]["responded_by"], "timeout");
}

#[tokio::test]
async fn a_wait_that_is_no_number_or_another_parameter_is_refused_400() {
    let server = Server::start(None).await;
    let (_, filed) = file(&server, CI, bash_call("toolu_1")).await;
    let id = filed["request"]["id"].as_str().unwrap().to_owned();
    for query in ["?wait=soon", "?wait=-1", "?timeout=5"] {
        let (status, body) = show(&server, CI, &id, query).await;
        assert_eq!(status, 400, "{query}: {body}");
    }
}
