//! Signatures verified by a real receiver on 127.0.0.1, over the raw bytes it got.

use std::time::{Duration, SystemTime};

use axum::http::StatusCode;
use axum::response::IntoResponse;
use tollgate_handlers::HttpHook;
use tollgate_handlers::http::{
    DEFAULT_TOLERANCE, HttpError, SIGNATURE_HEADER, Secret, SignatureError, verify_signature,
};
use tollgate_protocol::{Decision, RunStatus};

use super::{Receiver, Seen, dispatch_one, loopback};

const KEY: &[u8] = b"receiver-and-hook-share-this";

fn verify(seen: &Seen, key: &[u8], body: &[u8], now: SystemTime) -> Result<(), SignatureError> {
    let header = seen.header(SIGNATURE_HEADER).unwrap_or("");
    verify_signature(key, header, body, now, DEFAULT_TOLERANCE)
}

/// A receiver that accepts only requests signed with [`KEY`].
async fn verifying_receiver() -> Receiver {
    Receiver::start(|seen| async move {
        match verify(&seen, KEY, &seen.body, SystemTime::now()) {
            Ok(()) => (StatusCode::OK, r#"{"decision":"allow"}"#).into_response(),
            Err(e) => (StatusCode::UNAUTHORIZED, e.to_string()).into_response(),
        }
    })
    .await
}

fn signed_hook(url: String, key: &[u8]) -> HttpHook {
    HttpHook::builder("signed", url)
        .allow_cidrs(&loopback())
        .secret(Secret::new(key).unwrap())
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_signed_delivery_verifies_and_any_change_fails() {
    let receiver = verifying_receiver().await;
    let outcome = dispatch_one(signed_hook(receiver.url(), KEY)).await;
    assert_eq!(
        outcome.runs[0].status,
        RunStatus::Completed,
        "{:?}",
        outcome.runs[0].error
    );
    assert_eq!(outcome.decision, Decision::Allow);

    let seen = &receiver.seen()[0];
    let header = seen.header(SIGNATURE_HEADER).unwrap().to_owned();
    let t: u64 = header[2..header.find(',').unwrap()].parse().unwrap();
    let sent_at = SystemTime::UNIX_EPOCH + Duration::from_secs(t);
    assert_eq!(verify(seen, KEY, &seen.body, sent_at), Ok(()));

    let mut tampered = seen.body.to_vec();
    let at = tampered.iter().position(|&b| b == b'1').unwrap(); // one digit changed
    tampered[at] = b'2';
    assert_eq!(
        verify(seen, KEY, &tampered, sent_at),
        Err(SignatureError::Mismatch)
    );

    let stale = sent_at + Duration::from_secs(301);
    assert_eq!(
        verify(seen, KEY, &seen.body, stale),
        Err(SignatureError::OutsideTolerance { skew_secs: 301 })
    );

    let empty_v1 = format!("t={t},v1=");
    assert_eq!(
        verify_signature(KEY, &empty_v1, &seen.body, sent_at, DEFAULT_TOLERANCE),
        Err(SignatureError::BadSignature)
    );

    assert_eq!(
        verify(seen, b"some-other-secret", &seen.body, sent_at),
        Err(SignatureError::Mismatch)
    );
}

#[tokio::test]
async fn the_receiver_refuses_a_hook_with_the_wrong_secret() {
    let receiver = verifying_receiver().await;
    let outcome = dispatch_one(signed_hook(receiver.url(), b"wrong")).await;
    let run = &outcome.runs[0];
    assert_eq!(run.status, RunStatus::Errored);
    assert!(
        run.error.as_deref().unwrap().contains("401"),
        "{:?}",
        run.error
    );

    let unsigned = HttpHook::new("unsigned", &receiver.url(), &loopback()).unwrap();
    let outcome = dispatch_one(unsigned).await;
    assert_eq!(outcome.runs[0].status, RunStatus::Errored);
    assert_eq!(receiver.hits(), 2);
}

#[tokio::test]
async fn a_secret_from_the_environment_signs() {
    // Cargo sets CARGO_PKG_NAME for every test binary.
    let receiver = Receiver::replying(204, "").await;
    let hook = HttpHook::builder("env", receiver.url())
        .allow_cidrs(&loopback())
        .secret_env("${CARGO_PKG_NAME}")
        .build()
        .unwrap();
    assert!(hook.is_signed());
    dispatch_one(hook).await;
    let seen = &receiver.seen()[0];
    let key = env!("CARGO_PKG_NAME").as_bytes();
    assert_eq!(verify(seen, key, &seen.body, SystemTime::now()), Ok(()));
}

#[test]
fn an_unset_secret_skips_the_hook_at_load_naming_the_variable() {
    let error = HttpHook::builder("h", "https://hooks.example.com/pre")
        .secret_env("${TOLLGATE_IT_SECRET_NEVER_SET}")
        .build()
        .unwrap_err();
    assert!(
        matches!(&error, HttpError::SecretUnset(name) if name == "TOLLGATE_IT_SECRET_NEVER_SET")
    );
    assert!(error.to_string().contains("TOLLGATE_IT_SECRET_NEVER_SET"));

    let literal = HttpHook::builder("h", "https://hooks.example.com/pre")
        .secret_env("hunter2")
        .build()
        .unwrap_err();
    assert!(matches!(literal, HttpError::SecretNotEnvReference));
    assert!(
        !literal.to_string().contains("hunter2"),
        "a literal secret is never echoed"
    );
}
