//! What a receiver's answer turns into.

use std::time::Duration;

use axum::http::StatusCode;
use axum::response::IntoResponse;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tollgate_core::{HookOptions, HookTimeout};
use tollgate_handlers::HttpHook;
use tollgate_protocol::wire::PayloadWire;
use tollgate_protocol::{Decision, FailureMode, RunStatus};

use super::{Receiver, dispatch, dispatch_one, hook, loopback, tool_call};

async fn answer(status: u16, body: &'static str) -> tollgate_core::DispatchOutcome {
    let receiver = Receiver::replying(status, body).await;
    dispatch_one(hook(&receiver.url())).await
}

#[tokio::test]
async fn the_request_is_the_wire_payload_with_its_headers() {
    let receiver = Receiver::replying(204, "").await;
    let payload = tool_call();
    dispatch(
        hook(&receiver.url()),
        HookOptions::default(),
        payload.clone(),
    )
    .await;
    dispatch(
        hook(&receiver.url()),
        HookOptions::default(),
        payload.clone(),
    )
    .await;
    let seen = receiver.seen();
    let body: Value = serde_json::from_slice(&seen[0].body).unwrap();
    assert_eq!(body, PayloadWire::from(&*payload).to_json());
    assert_eq!(seen[0].header("content-type"), Some("application/json"));
    assert_eq!(seen[0].header("x-webhook-event"), Some("pre_tool_use"));
    assert_eq!(seen[0].header("x-webhook-signature"), None, "unsigned hook");
    let ids: Vec<&str> = seen
        .iter()
        .map(|s| s.header("x-webhook-id").unwrap())
        .collect();
    assert_eq!(ids[0].len(), 36);
    assert_ne!(ids[0], ids[1], "a fresh id per delivery");
}

#[tokio::test]
async fn an_empty_2xx_is_no_opinion() {
    for status in [200, 204] {
        let outcome = answer(status, "").await;
        assert_eq!(outcome.runs[0].status, RunStatus::Completed);
        assert_eq!(outcome.decision, Decision::Allow);
    }
}

#[tokio::test]
async fn a_2xx_outcome_object_is_the_answer() {
    let outcome = answer(200, r#"{"decision":"deny","reason":"x"}"#).await;
    assert_eq!(outcome.runs[0].status, RunStatus::Completed);
    assert_eq!(outcome.decision, Decision::deny("x"));

    let claude_code = r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse",
        "permissionDecision":"deny","permissionDecisionReason":"not on prod"}}"#;
    let outcome = answer(200, claude_code).await;
    assert_eq!(outcome.decision, Decision::deny("not on prod"));

    let outcome = answer(200, r#"{"decision":"ask","reason":"check"}"#).await;
    assert_eq!(outcome.decision, Decision::ask("check"));

    let outcome = answer(201, r#"{"modified_args":{"sql":"select 1 limit 10"}}"#).await;
    assert_eq!(
        outcome.modified_args,
        Some(json!({"sql": "select 1 limit 10"}))
    );
}

#[tokio::test]
async fn any_other_status_is_an_errored_failure() {
    for status in [500, 404, 401, 418, 304] {
        let outcome = answer(status, "receiver says no").await;
        let run = &outcome.runs[0];
        assert_eq!(run.status, RunStatus::Errored, "{status}");
        assert_eq!(
            run.decision, None,
            "{status}: a failure never reads as allow"
        );
        assert!(
            run.error.as_deref().unwrap().contains(&status.to_string()),
            "{:?}",
            run.error
        );
    }
    let receiver = Receiver::replying(500, "boom").await;
    let closed = HookOptions::default().failure_mode(FailureMode::FailClosed);
    let outcome = dispatch(hook(&receiver.url()), closed, tool_call()).await;
    assert!(outcome.is_denied());
}

#[tokio::test]
async fn a_2xx_body_that_is_not_one_outcome_object_is_invalid_output() {
    for body in [
        "ok",
        "<html>accepted</html>",
        "[]",
        r#"{"decision":"deny"}{"decision":"allow"}"#,
        r#"{"decison":"deny"}"#,
    ] {
        let outcome = answer(200, body).await;
        assert_eq!(outcome.runs[0].status, RunStatus::InvalidOutput, "{body}");
    }
}

#[tokio::test]
async fn a_body_over_the_cap_is_a_failure() {
    let receiver = Receiver::start(|_| async {
        let big = format!(r#"{{"additional_context":"{}"}}"#, "x".repeat(4096));
        (StatusCode::OK, big).into_response()
    })
    .await;
    let capped = HttpHook::builder("h", receiver.url())
        .allow_cidrs(&loopback())
        .response_cap(1024)
        .build()
        .unwrap();
    let outcome = dispatch_one(capped).await;
    let run = &outcome.runs[0];
    assert_eq!(run.status, RunStatus::InvalidOutput);
    assert!(run.error.as_deref().unwrap().contains("cap of 1024 bytes"));
    // Under the default cap the same body is an answer.
    let outcome = dispatch_one(hook(&receiver.url())).await;
    assert_eq!(outcome.runs[0].status, RunStatus::Completed);
}

/// A raw HTTP/1.1 server that streams an endless chunked body (no Content-Length).
async fn endless_chunked_receiver() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut request = [0_u8; 4096];
        let _ = socket.read(&mut request).await;
        let head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
        socket.write_all(head.as_bytes()).await.unwrap();
        let chunk = format!("{:x}\r\n{}\r\n", 8192, " ".repeat(8192));
        while socket.write_all(chunk.as_bytes()).await.is_ok() {}
    });
    format!("http://{addr}/")
}

#[tokio::test]
async fn a_streamed_body_is_cut_off_at_the_cap() {
    let url = endless_chunked_receiver().await;
    let outcome = dispatch_one(hook(&url)).await;
    let run = &outcome.runs[0];
    assert_eq!(run.status, RunStatus::InvalidOutput, "{:?}", run.error);
    assert!(
        run.error.as_deref().unwrap().contains("exceeds the cap"),
        "{:?}",
        run.error
    );
}

#[tokio::test]
async fn a_receiver_slower_than_the_deadline_times_out() {
    let receiver = Receiver::start(|_| async {
        tokio::time::sleep(Duration::from_secs(30)).await;
        StatusCode::OK.into_response()
    })
    .await;
    let options = HookOptions::default()
        .timeout(HookTimeout::from_secs(1).unwrap())
        .failure_mode(FailureMode::FailClosed);
    let outcome = dispatch(hook(&receiver.url()), options, tool_call()).await;
    let run = &outcome.runs[0];
    assert_eq!(run.status, RunStatus::TimedOut);
    assert!(outcome.is_denied(), "fail_closed");
    assert!(run.duration < Duration::from_secs(10));
    assert_eq!(receiver.hits(), 1);
}

#[tokio::test]
async fn a_refused_connection_is_an_errored_failure() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let closed = HttpHook::new("h", &format!("http://{addr}/"), &loopback()).unwrap();
    let outcome = dispatch_one(closed).await;
    let run = &outcome.runs[0];
    assert_eq!(run.status, RunStatus::Errored);
    assert!(
        run.error
            .as_deref()
            .unwrap()
            .contains("error sending request"),
        "{:?}",
        run.error
    );
}

/// Text the receiver chose went verbatim into the error, and from there into WARN log lines,
/// side effects and deny reasons: a newline and an ANSI escape forged a log line.
#[tokio::test]
async fn regression_remote_text_cannot_forge_log_lines() {
    const FORGED: &str =
        "oops\n2099-01-01T00:00:00Z  INFO tollgate: decision=\"allow\"\r\u{1b}[2K\u{2028}\u{202e}";
    let redirect = Receiver::start(|_| async {
        (
            StatusCode::FOUND,
            [(axum::http::header::LOCATION, "/x\u{1b}[2Kok")],
        )
            .into_response()
    })
    .await;
    let outcomes = [
        answer(500, FORGED).await,
        answer(200, FORGED).await,
        dispatch_one(hook(&redirect.url())).await,
    ];
    for (i, outcome) in outcomes.iter().enumerate() {
        let error = outcome.runs[0].error.as_deref().unwrap();
        assert!(
            !error
                .chars()
                .any(|c| c.is_control() || matches!(c, '\u{2028}' | '\u{202e}')),
            "{error:?}"
        );
        // (A `Location` with control characters is not text at all: it is shown as `?`.)
        assert!(i == 2 || error.contains("oops\\n2099"), "{error}");
    }
}
