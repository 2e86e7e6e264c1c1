//! The SSRF guard: literals refused at load, names refused at resolution, redirects never
//! followed.

use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use tokio::net::TcpListener;
use tollgate_core::HookOptions;
use tollgate_handlers::HttpHook;
use tollgate_handlers::http::HttpError;
use tollgate_protocol::{Decision, FailureMode, RunStatus};

use super::{Receiver, dispatch, dispatch_one, hook, loopback, tool_call};

#[test]
fn refused_urls_fail_at_load_naming_the_url_and_the_reason() {
    let cases = [
        // Loopback in every IPv4 notation, and IPv4-embedded IPv6 forms of it.
        ("http://2130706433/", "loopback"),
        ("http://0x7f.1/", "loopback"),
        ("http://0177.0.0.1/", "loopback"),
        ("http://127.1:8080/", "loopback"),
        ("http://[::ffff:127.0.0.1]/", "loopback"),
        ("http://[::ffff:7f00:1]/", "loopback"),
        ("http://[64:ff9b::7f00:1]/", "loopback"),
        ("http://[::127.0.0.1]/", "IPv4-compatible"),
        ("http://[2002:7f00:1::1]/", "6to4"),
        ("http://[::1]/", "loopback"),
        // Unspecified, private, shared, link-local, unique-local.
        ("http://0.0.0.0:6379/", "unspecified"),
        ("http://[::]:6379/", "unspecified"),
        ("http://10.0.0.5/", "private"),
        ("http://172.16.0.1/", "private"),
        ("http://192.168.1.1/", "private"),
        ("http://100.64.0.1/", "CGNAT"),
        ("http://[fe80::1]/", "link-local"),
        ("http://[fd12::1]/", "unique local"),
        // Cloud metadata, also behind an allow-list entry that does not name it.
        ("http://169.254.169.254/latest/meta-data/", "metadata"),
        ("http://[fd00:ec2::254]/latest/meta-data/", "metadata"),
        ("http://100.100.100.200/latest/meta-data/", "metadata"),
        // Not http.
        ("file:///etc/passwd", "scheme `file`"),
        ("gopher://127.0.0.1:6379/_INFO", "scheme `gopher`"),
        ("http://", "not a valid URL"),
    ];
    for (url, reason) in cases {
        let error = HttpHook::new("h", url, &[]).unwrap_err();
        let message = error.to_string();
        let shown = match &error {
            HttpError::RefusedUrl { url, .. } => url.clone(),
            other => panic!("{url}: {other:?}"),
        };
        assert!(
            message.contains(&format!("`{shown}`")) && message.contains(reason),
            "{url}: {message}"
        );
        assert!(
            !message.contains("meta-data") && !message.contains("_INFO"),
            "{message}"
        );
    }
    let link_local = ["169.254.0.0/16".parse().unwrap()];
    assert!(HttpHook::new("h", "http://169.254.169.254/", &link_local).is_err());
    assert!(HttpHook::new("h", "http://169.254.1.1/", &link_local).is_ok());
}

#[test]
fn a_refused_local_address_says_how_an_admin_file_allows_it() {
    for (url, range) in [
        ("http://127.0.0.1:8787/x", "127.0.0.0/8"),
        ("http://[::1]/", "::1/128"),
        ("http://10.0.0.5/", "10.0.0.0/8"),
        ("http://localhost:3000/", "127.0.0.0/8"),
    ] {
        let message = HttpHook::new("h", url, &[]).unwrap_err().to_string();
        let advice = format!(
            "an admin file can allow it for admin and agent-config hooks with \
             `network: {{allow_cidrs: [\"{range}\"]}}`"
        );
        assert!(message.ends_with(&advice), "{url}: {message}");
        let allow = [range.parse().unwrap()];
        assert!(
            HttpHook::new("h", url, &allow).is_ok(),
            "{url}: the advice works"
        );
    }
    let metadata = HttpHook::new("h", "http://169.254.169.254/", &[]).unwrap_err();
    assert!(!metadata.to_string().contains("allow_cidrs"), "{metadata}");
}

#[tokio::test]
async fn a_name_resolving_to_loopback_is_refused_at_dispatch_and_never_contacted() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let receiver = Receiver::on(listener, |_| async { StatusCode::OK.into_response() });
    // The literal check cannot see through a name: with some loopback address allowed (`::1`
    // only), `localhost` builds, and its 127.0.0.1 is refused when it is resolved.
    let only_v6_loopback = ["::1/128".parse().unwrap()];
    let url = format!("http://localhost:{port}/");
    let localhost = HttpHook::new("h", &url, &only_v6_loopback).unwrap();
    let options = HookOptions::default().failure_mode(FailureMode::FailClosed);
    let outcome = dispatch(localhost, options, tool_call()).await;
    let run = &outcome.runs[0];
    assert_eq!(run.status, RunStatus::Refused, "{:?}", run.error);
    let error = run.error.as_deref().unwrap();
    assert!(
        error.contains("`localhost` resolves to") && error.contains("loopback"),
        "{error}"
    );
    assert!(
        outcome.is_denied(),
        "fail_closed turns the refusal into a deny"
    );
    assert_eq!(receiver.hits(), 0);

    // The same receiver is reachable by its literal address once loopback is allowed.
    let outcome = dispatch_one(hook(&receiver.url())).await;
    assert_eq!(outcome.runs[0].status, RunStatus::Completed);
    assert_eq!(receiver.hits(), 1);
}

#[tokio::test]
async fn redirects_are_never_followed() {
    let receiver = Receiver::start(|_| async {
        (StatusCode::FOUND, [(header::LOCATION, "http://10.0.0.5/")]).into_response()
    })
    .await;
    let outcome = dispatch_one(hook(&receiver.url())).await;
    let run = &outcome.runs[0];
    assert_eq!(run.status, RunStatus::Errored);
    assert_eq!(run.decision, None, "a failure never reads as allow");
    let error = run.error.as_deref().unwrap();
    assert!(
        error.contains("302")
            && error.contains("http://10.0.0.5/")
            && error.contains("not followed"),
        "{error}"
    );
    assert_eq!(receiver.hits(), 1, "nothing followed the redirect");

    let onto_itself = Receiver::start(|_| async {
        (
            StatusCode::TEMPORARY_REDIRECT,
            [(header::LOCATION, "/again")],
        )
            .into_response()
    })
    .await;
    let outcome = dispatch_one(hook(&onto_itself.url())).await;
    assert_eq!(outcome.runs[0].status, RunStatus::Errored);
    assert_eq!(onto_itself.hits(), 1);
    assert_eq!(
        outcome.decision,
        Decision::Allow,
        "fail_open skips the hook"
    );
}

#[tokio::test]
async fn the_allow_list_is_what_lets_tests_reach_loopback() {
    let receiver = Receiver::replying(200, "").await;
    let error = HttpHook::new("h", &receiver.url(), &[]).unwrap_err();
    assert!(error.to_string().contains("loopback"), "{error}");
    assert!(HttpHook::new("h", &receiver.url(), &loopback()).is_ok());
    assert_eq!(receiver.hits(), 0);
}

/// Webhook URLs carry their credential in the path or query; reqwest's error text, the deny
/// reason shown to the model, the run record and `Debug` output once showed it verbatim.
#[tokio::test]
async fn regression_url_tokens_never_reach_errors_reasons_or_debug() {
    let url = "http://127.0.0.1:9/services/T000/B000/XXXXSECRETTOKEN?token=SEKRET";
    let hook = HttpHook::new("h", url, &loopback()).unwrap();
    let debug = format!("{hook:?}");
    assert!(debug.contains("http://127.0.0.1:9/…"), "{debug}");
    let options = HookOptions::default().failure_mode(FailureMode::FailClosed);
    let outcome = dispatch(hook, options, tool_call()).await;
    assert_eq!(outcome.runs[0].status, RunStatus::Errored);
    assert!(outcome.is_denied());
    let everything = format!("{outcome:?} {debug}");
    for secret in ["XXXXSECRETTOKEN", "SEKRET", "services/T000"] {
        assert!(
            !everything.contains(secret),
            "{secret} leaked: {everything}"
        );
    }
    let builder = format!("{:?}", HttpHook::builder("h", url));
    assert!(!builder.contains("SEKRET"), "{builder}");
}

/// `http://user:hunter2@…` silently sent Basic auth, and Debug and the refused-URL error
/// printed the password.
#[test]
fn regression_userinfo_urls_are_refused_at_build_without_echoing_the_password() {
    for url in [
        "http://user:hunter2@127.0.0.1:9/hook",
        "http://hunter2@example.com/",
    ] {
        let error = HttpHook::new("h", url, &loopback()).unwrap_err();
        let message = format!("{error} {error:?}");
        assert!(message.contains("credentials"), "{message}");
        assert!(!message.contains("hunter2"), "{message}");
    }
}
