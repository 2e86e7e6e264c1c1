//! The Feishu channel's callbacks, built, encrypted and signed by the stand-in's platform
//! side: what `inbound` accepts and refuses, and what `answer` replies.

use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use proptest::prelude::*;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tollgate_approval::channel::feishu::Feishu;
use tollgate_approval::channel::{Channel, Click, ClickOutcome, Inbound, Refusal};
use tollgate_approval::{Status, format_ms};
use tollgate_standins::feishu::{Callbacks, Delivery, buttons};

use crate::feishu::{ENCRYPT_KEY, VERIFICATION_TOKEN, config, ended, pending, texts};

fn channel(encrypt_key: Option<&str>) -> Feishu {
    Feishu::new(config("https://open.feishu.cn", encrypt_key)).unwrap()
}

fn now_ms() -> i64 {
    let since = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    i64::try_from(since.as_millis()).unwrap()
}

fn value(decision: &str) -> Value {
    json!({"request_id": "cr_01CLICK", "decision": decision, "nonce": "nonce-0123"})
}

fn headers(pairs: &[(String, String)]) -> HeaderMap {
    let mut map = HeaderMap::new();
    for (name, value) in pairs {
        map.insert(
            HeaderName::from_bytes(name.as_bytes()).unwrap(),
            HeaderValue::from_str(value).unwrap(),
        );
    }
    map
}

fn inbound(channel: &Feishu, delivery: &Delivery) -> Result<Inbound, Refusal> {
    let encoded = delivery.encode();
    channel.inbound(&headers(&encoded.headers), &encoded.body, now_ms())
}

fn refused(channel: &Feishu, delivery: &Delivery) -> u16 {
    match inbound(channel, delivery) {
        Err(refusal) => refusal.status,
        Ok(read) => panic!("accepted: {read:?}"),
    }
}

fn click(read: Result<Inbound, Refusal>) -> Click {
    match read {
        Ok(Inbound::Click(click)) => click,
        other => panic!("not a click: {other:?}"),
    }
}

#[test]
fn a_click_reads_the_same_plain_and_encrypted() {
    for key in [None, Some(ENCRYPT_KEY)] {
        let delivery = Callbacks::new(VERIFICATION_TOKEN, key)
            .click(&value("approve"), "ou_alice")
            .union_id("on_alice")
            .message_id("om_card");
        let event_id = delivery.payload()["header"]["event_id"].as_str().unwrap();
        let read = click(inbound(&channel(key), &delivery));
        assert_eq!(
            read,
            Click {
                event_id: event_id.to_owned(),
                request_id: "cr_01CLICK".into(),
                approve: true,
                nonce: "nonce-0123".into(),
                operator: "ou_alice".into(),
                operator_aliases: vec!["on_alice".into()],
                message_id: Some("om_card".into()),
                response_url: None,
            },
            "encrypt key {key:?}"
        );
    }
    let reject = Callbacks::new(VERIFICATION_TOKEN, None).click(&value("reject"), "ou_bob");
    assert!(!click(inbound(&channel(None), &reject)).approve);
}

#[test]
fn the_encrypted_body_is_what_the_platform_sends() {
    let encoded = Callbacks::new(VERIFICATION_TOKEN, Some(ENCRYPT_KEY))
        .click(&value("approve"), "ou_alice")
        .encode();
    let body: Value = serde_json::from_slice(&encoded.body).unwrap();
    let field = body["encrypt"].as_str().unwrap();
    assert_eq!(body.as_object().unwrap().len(), 1);
    assert!(!String::from_utf8_lossy(&encoded.body).contains("ou_alice"));
    assert!(STANDARD.decode(field).unwrap().len().is_multiple_of(16));
    for header in [
        "x-lark-request-timestamp",
        "x-lark-request-nonce",
        "x-lark-signature",
    ] {
        assert!(encoded.header(header).is_some(), "{header}");
    }
}

#[test]
fn the_url_check_is_answered_with_its_challenge_exactly() {
    let cases = [
        (
            None,
            Callbacks::new(VERIFICATION_TOKEN, None).url_verification("ch-1"),
        ),
        (
            Some(ENCRYPT_KEY),
            Callbacks::new(VERIFICATION_TOKEN, Some(ENCRYPT_KEY)).url_verification("ch-1"),
        ),
        (
            Some(ENCRYPT_KEY),
            Callbacks::new(VERIFICATION_TOKEN, Some(ENCRYPT_KEY))
                .url_verification("ch-1")
                .unsigned(),
        ),
    ];
    for (key, delivery) in cases {
        let read = inbound(&channel(key), &delivery).unwrap();
        assert_eq!(
            read,
            Inbound::Reply(json!({"challenge": "ch-1"})),
            "{key:?}"
        );
        assert_eq!(refused(&channel(key), &delivery.clone().wrong_token()), 401);
    }
}

#[test]
fn every_broken_encrypted_callback_is_refused() {
    let channel = channel(Some(ENCRYPT_KEY));
    let platform = Callbacks::new(VERIFICATION_TOKEN, Some(ENCRYPT_KEY));
    let good = || platform.click(&value("approve"), "ou_alice");
    let now = now_ms() / 1000;
    let cases: [(&str, Delivery, u16); 10] = [
        ("wrong signature", good().bad_signature(), 401),
        ("no signature headers", good().unsigned(), 401),
        ("timestamp 301 s old", good().at(now - 301), 401),
        ("timestamp 400 s ahead", good().at(now + 400), 401),
        ("wrong verification token", good().wrong_token(), 401),
        ("bad base64", good().bad_base64(), 400),
        ("not whole blocks", good().bad_ciphertext(), 400),
        ("bad padding", good().bad_padding(), 400),
        ("another encrypt key", good().wrong_encrypt_key(), 400),
        (
            "plain body",
            Callbacks::new(VERIFICATION_TOKEN, None).click(&value("approve"), "ou_alice"),
            400,
        ),
    ];
    for (what, delivery, status) in cases {
        let refusal = inbound(&channel, &delivery).unwrap_err();
        assert_eq!(refusal.status, status, "{what}: {refusal}");
        assert!(
            !refusal.message.contains("never-logged"),
            "{what}: {refusal}"
        );
    }
    // Inside the window, either way, is fine.
    assert!(inbound(&channel, &good().at(now - 290)).is_ok());
    assert!(inbound(&channel, &good().at(now + 290)).is_ok());
}

#[test]
fn a_partial_set_of_signature_headers_is_refused() {
    let channel = channel(Some(ENCRYPT_KEY));
    let encoded = Callbacks::new(VERIFICATION_TOKEN, Some(ENCRYPT_KEY))
        .click(&value("approve"), "ou_alice")
        .encode();
    let without_nonce: Vec<(String, String)> = encoded
        .headers
        .iter()
        .filter(|(name, _)| name != "x-lark-request-nonce")
        .cloned()
        .collect();
    let refusal = channel
        .inbound(&headers(&without_nonce), &encoded.body, now_ms())
        .unwrap_err();
    assert_eq!(refusal.status, 401, "{refusal}");
}

#[test]
fn plain_callbacks_are_checked_by_their_token() {
    let channel = channel(None);
    let platform = Callbacks::new(VERIFICATION_TOKEN, None);
    let wrong = platform.click(&value("approve"), "ou_alice").wrong_token();
    assert_eq!(refused(&channel, &wrong), 401);
    let encrypted =
        Callbacks::new(VERIFICATION_TOKEN, Some(ENCRYPT_KEY)).click(&value("approve"), "ou_alice");
    assert_eq!(refused(&channel, &encrypted), 400);
    for body in [&b"not json"[..], b"[1,2]", b"{}", b"{\"schema\":\"2.0\"}"] {
        let refusal = channel
            .inbound(&HeaderMap::new(), body, now_ms())
            .unwrap_err();
        assert_eq!(refusal.status, 400, "{}", String::from_utf8_lossy(body));
    }
}

#[test]
fn other_events_and_foreign_buttons_are_ignored_once_authenticated() {
    for key in [None, Some(ENCRYPT_KEY)] {
        let channel = channel(key);
        let platform = Callbacks::new(VERIFICATION_TOKEN, key);
        let event = platform.event("im.message.receive_v1");
        assert_eq!(inbound(&channel, &event).unwrap(), Inbound::Ignore);
        assert_eq!(refused(&channel, &event.wrong_token()), 401);
        let foreign = platform.click(&json!({"action": "open_dashboard"}), "ou_alice");
        assert_eq!(inbound(&channel, &foreign).unwrap(), Inbound::Ignore);
    }
}

#[test]
fn the_legacy_flat_shape_is_accepted_when_signed() {
    for key in [None, Some(ENCRYPT_KEY)] {
        let channel = channel(key);
        let platform = Callbacks::new(VERIFICATION_TOKEN, key);
        let delivery = platform
            .legacy_click(&value("reject"), "ou_bob")
            .event_id("c-update-token-1")
            .message_id("om_legacy");
        let read = click(inbound(&channel, &delivery));
        assert_eq!(read.event_id, "c-update-token-1");
        assert_eq!(read.operator, "ou_bob");
        assert_eq!(read.message_id.as_deref(), Some("om_legacy"));
        assert!(!read.approve);
        assert_eq!(
            refused(&channel, &delivery.clone().unsigned()),
            401,
            "{key:?}"
        );
        assert_eq!(refused(&channel, &delivery.clone().bad_signature()), 401);
    }
    // Without an Encrypt Key, the legacy signature is keyed with the verification token.
    let wrong = Callbacks::new(VERIFICATION_TOKEN, None)
        .legacy_click(&value("approve"), "ou_bob")
        .wrong_token();
    assert_eq!(refused(&channel(None), &wrong), 401);
}

#[tokio::test]
async fn a_decided_click_gets_a_success_toast_and_the_final_card() {
    let channel = channel(None);
    let click = click(inbound(
        &channel,
        &Callbacks::new(VERIFICATION_TOKEN, None).click(&value("approve"), "ou_alice"),
    ));
    let decided = ended("cr_01CLICK", Status::Approved, "alice", "feishu");
    let answer = channel
        .answer(&click, &ClickOutcome::Decided(decided.clone()))
        .await;
    assert_eq!(answer.status, 200);
    let body = answer.body.unwrap();
    assert_eq!(body["toast"]["type"], "success");
    assert_eq!(body["card"]["type"], "raw");
    let card = &body["card"]["data"];
    assert!(buttons(card).is_empty(), "{card}");
    let line = texts(card, "markdown").join("\n");
    let when = format_ms(1_800_000_100_000);
    assert_eq!(line, format!("Approved by <at id=ou_alice></at> at {when}"));

    let mut rejected = ended("cr_01CLICK", Status::Rejected, "alice", "feishu");
    rejected.response_note = Some("use the staging DB".into());
    let answer = channel
        .answer(&click, &ClickOutcome::Decided(rejected))
        .await;
    let body = answer.body.unwrap();
    let card = &body["card"]["data"];
    assert!(texts(card, "markdown")[0].starts_with("Rejected by <at id=ou_alice></at>"));
    assert!(
        texts(card, "plain_text")
            .iter()
            .any(|t| t == "Note: use the staging DB")
    );
}

#[tokio::test]
async fn a_late_click_names_who_decided_and_when() {
    let channel = channel(None);
    let click = click(inbound(
        &channel,
        &Callbacks::new(VERIFICATION_TOKEN, None).click(&value("reject"), "ou_bob"),
    ));
    let when = format_ms(1_800_000_100_000);
    let cases = [
        (
            Status::Approved,
            "alice",
            format!("Already approved by alice at {when}."),
        ),
        (
            Status::Expired,
            "timeout",
            format!("Already expired at {when}."),
        ),
    ];
    for (status, by, says) in cases {
        let request = ended("cr_01CLICK", status, by, "feishu");
        let outcome = ClickOutcome::AlreadyDecided(request);
        let body = channel.answer(&click, &outcome).await.body.unwrap();
        assert_eq!(body["toast"], json!({"type": "info", "content": says}));
        assert!(buttons(&body["card"]["data"]).is_empty());
    }
    let request = ended("cr_01CLICK", Status::Approved, "alice", "feishu");
    let body = channel
        .answer(&click, &ClickOutcome::AlreadyDecided(request))
        .await
        .body
        .unwrap();
    let line = texts(&body["card"]["data"], "markdown").join("");
    assert!(
        line.starts_with("Approved by <at id=ou_alice></at>"),
        "{line}"
    );
}

#[tokio::test]
async fn refused_clicks_get_an_error_toast_and_keep_the_card() {
    let channel = channel(None);
    let click = click(inbound(
        &channel,
        &Callbacks::new(VERIFICATION_TOKEN, None).click(&value("approve"), "ou_mallory"),
    ));
    let outcomes = [
        ClickOutcome::NotApprover(pending("cr_01CLICK")),
        ClickOutcome::Unknown,
        ClickOutcome::Failed,
    ];
    for outcome in outcomes {
        let answer = channel.answer(&click, &outcome).await;
        assert_eq!(answer.status, 200);
        let body = answer.body.unwrap();
        assert_eq!(body["toast"]["type"], "error", "{outcome:?}");
        assert!(body.get("card").is_none(), "{outcome:?}: {body}");
    }
    let body = channel
        .answer(&click, &ClickOutcome::NotApprover(pending("cr_01CLICK")))
        .await
        .body
        .unwrap();
    assert!(
        body["toast"]["content"]
            .as_str()
            .unwrap()
            .contains("not an approver")
    );
}

fn signed_headers(body: &[u8], timestamp: &str) -> HeaderMap {
    let mut digest = Sha256::new();
    digest.update(format!("{timestamp}nonce{ENCRYPT_KEY}").as_bytes());
    digest.update(body);
    let pairs = [
        ("x-lark-request-timestamp".to_owned(), timestamp.to_owned()),
        ("x-lark-request-nonce".to_owned(), "nonce".to_owned()),
        (
            "x-lark-signature".to_owned(),
            hex::encode(digest.finalize()),
        ),
    ];
    headers(&pairs)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_bodies_are_refused_without_panicking(
        body in proptest::collection::vec(any::<u8>(), 0..512),
        signed in any::<bool>(),
    ) {
        let now = 1_800_000_000_000;
        let headers = if signed { signed_headers(&body, "1800000000") } else { HeaderMap::new() };
        for key in [None, Some(ENCRYPT_KEY)] {
            let refusal = channel(key).inbound(&headers, &body, now);
            prop_assert!(matches!(&refusal, Err(r) if r.status == 400 || r.status == 401), "{refusal:?}");
        }
    }

    #[test]
    fn random_ciphertexts_are_refused_without_panicking(
        data in proptest::collection::vec(any::<u8>(), 0..256),
        signed in any::<bool>(),
    ) {
        let now = 1_800_000_000_000;
        let body = json!({"encrypt": STANDARD.encode(&data)}).to_string().into_bytes();
        let headers = if signed { signed_headers(&body, "1800000000") } else { HeaderMap::new() };
        let refusal = channel(Some(ENCRYPT_KEY)).inbound(&headers, &body, now);
        prop_assert!(matches!(&refusal, Err(r) if r.status == 400 || r.status == 401), "{refusal:?}");
    }
}
