//! The Feishu channel against the open-platform stand-in: the token, sending cards, updating
//! them, and the configuration. Callbacks and answers are in `feishu_callbacks.rs`.

use serde_json::{Value, json};
use tollgate_approval::channel::feishu::{Feishu, FeishuConfig};
use tollgate_approval::channel::{Channel, ChannelError};
use tollgate_approval::{Request, Status, format_ms};
use tollgate_standins::feishu::{self, OpenPlatform, buttons};

pub(crate) const APP_ID: &str = "cli_tollgate_test";
pub(crate) const APP_SECRET: &str = "app-secret-that-is-never-logged";
pub(crate) const VERIFICATION_TOKEN: &str = "verification-token-never-logged";
pub(crate) const ENCRYPT_KEY: &str = "encrypt-key-never-logged";

/// Arguments no button value may carry, with markup a card must not interpret.
const SECRET_ARGUMENT: &str = "DROP TABLE users; -- <at id=all></at> **bold** [x](https://evil)";

pub(crate) fn config(base_url: &str, encrypt_key: Option<&str>) -> FeishuConfig {
    serde_json::from_value(json!({
        "base_url": base_url,
        "app_id": APP_ID,
        "app_secret": APP_SECRET,
        "verification_token": VERIFICATION_TOKEN,
        "encrypt_key": encrypt_key,
        "receive_id_type": "open_id",
        "receive_id": "ou_receiver",
        "approvers": {"ou_alice": "alice", "ou_bob": "bob"},
    }))
    .unwrap()
}

pub(crate) fn pending(id: &str) -> Request {
    Request {
        id: id.into(),
        idempotency_key: format!("[\"ops\",\"run-1\",\"t1\",\"sql_execute\",\"{id}\"]"),
        run_id: "run-1".into(),
        session_id: "session-1".into(),
        agent: "ops".into(),
        tool_name: "sql_execute".into(),
        tool_call_id: "call_1".into(),
        arguments: json!({"sql": SECRET_ARGUMENT}),
        args_hash: "0".repeat(64),
        reasons: vec!["calls of `sql_execute` need confirmation".into()],
        asked_by: "permission_gate".into(),
        approvers: vec!["alice".into(), "bob".into()],
        status: Status::Pending,
        channel: Some("feishu".into()),
        channel_message_id: None,
        created_at: 1_800_000_000_000,
        expires_at: 1_800_000_300_000,
        responded_at: None,
        responded_by: None,
        response_note: None,
        edited_arguments: None,
        edited_args_hash: None,
        consumed_at: None,
        finished_at: None,
    }
}

pub(crate) fn ended(id: &str, status: Status, by: &str, channel: &str) -> Request {
    Request {
        status,
        responded_at: Some(1_800_000_100_000),
        responded_by: Some(by.into()),
        channel: Some(channel.into()),
        ..pending(id)
    }
}

fn platform() -> (OpenPlatform, Feishu) {
    let platform = feishu::start(APP_ID, APP_SECRET).unwrap();
    let channel = Feishu::new(config(&platform.base_url(), None)).unwrap();
    (platform, channel)
}

/// The `content` of every element with `tag` anywhere in `card`.
pub(crate) fn texts(card: &Value, tag: &str) -> Vec<String> {
    let mut found = Vec::new();
    walk(card, &mut |node| {
        let content = node.get("content").and_then(Value::as_str);
        match node.get("tag").and_then(Value::as_str) {
            Some(t) if t == tag => found.extend(content.map(str::to_owned)),
            _ => {}
        }
    });
    found
}

fn walk(node: &Value, visit: &mut dyn FnMut(&Value)) {
    visit(node);
    match node {
        Value::Object(map) => map.values().for_each(|child| walk(child, visit)),
        Value::Array(items) => items.iter().for_each(|child| walk(child, visit)),
        _ => {}
    }
}

fn message_posts(platform: &OpenPlatform) -> Vec<tollgate_standins::RecordedRequest> {
    let posts = platform.requests().into_iter();
    posts
        .filter(|r| r.method == "POST" && r.path == "/open-apis/im/v1/messages")
        .collect()
}

#[tokio::test]
async fn a_card_is_sent_as_an_interactive_message_keyed_by_the_request_id() {
    let (platform, channel) = platform();
    let request = pending("cr_01SEND");
    let message_id = channel.send(&request, "nonce-0123").await.unwrap();

    let messages = platform.messages();
    assert_eq!(messages.len(), 1);
    assert_eq!(messages[0].message_id, message_id);
    let post = &message_posts(&platform)[0];
    assert_eq!(post.query.as_deref(), Some("receive_id_type=open_id"));
    assert_eq!(post.header("authorization"), Some("Bearer t-standin-1"));
    let body = post.json.as_ref().unwrap();
    assert_eq!(body["msg_type"], "interactive");
    assert_eq!(body["uuid"], "cr_01SEND");
    assert_eq!(body["receive_id"], "ou_receiver");
    let card: Value = serde_json::from_str(body["content"].as_str().unwrap()).unwrap();
    assert_eq!(card, messages[0].content);
    assert_eq!(card["schema"], "2.0");

    let values: Vec<Value> = buttons(&card).into_iter().map(|b| b.value).collect();
    assert_eq!(
        values,
        [
            json!({"request_id": "cr_01SEND", "decision": "approve", "nonce": "nonce-0123"}),
            json!({"request_id": "cr_01SEND", "decision": "reject", "nonce": "nonce-0123"}),
        ]
    );
    assert!(!values.iter().any(|v| v.to_string().contains("DROP TABLE")));
}

#[tokio::test]
async fn the_card_shows_the_call_as_plain_text_and_never_as_markup() {
    let (platform, channel) = platform();
    let mut request = pending("cr_01TEXT");
    // Canonical JSON sorts keys: `sql` shows, the long `zpad` after it is cut.
    request.arguments = json!({"sql": SECRET_ARGUMENT, "zpad": "x".repeat(5000)});
    channel.send(&request, "n").await.unwrap();
    let card = platform.messages()[0].content.clone();

    let plain = texts(&card, "plain_text").join("\n");
    assert!(plain.contains("sql_execute"), "{plain}");
    assert!(plain.contains("Agent: ops"), "{plain}");
    assert!(plain.contains("need confirmation"), "{plain}");
    assert!(plain.contains(&format!("Expires at {}", format_ms(request.expires_at))));
    // The arguments are there, escaped only as JSON, and cut.
    assert!(
        plain.contains("DROP TABLE users; -- <at id=all></at> **bold**"),
        "{plain}"
    );
    assert!(plain.contains("(cut; "), "{plain}");
    assert!(!plain.contains(&"x".repeat(1000)));
    // No markdown element carries request text.
    assert!(texts(&card, "markdown").is_empty());
}

#[tokio::test]
async fn the_token_is_fetched_once_and_cached() {
    let (platform, channel) = platform();
    channel.send(&pending("cr_1"), "n").await.unwrap();
    channel.send(&pending("cr_2"), "n").await.unwrap();
    assert_eq!(platform.token_requests(), 1);
    let token = &platform.requests()[0];
    assert_eq!(
        token.json,
        Some(json!({"app_id": APP_ID, "app_secret": APP_SECRET}))
    );
    for post in message_posts(&platform) {
        assert_eq!(post.header("authorization"), Some("Bearer t-standin-1"));
    }
}

#[tokio::test]
async fn a_token_close_to_its_expiry_is_renewed() {
    let (platform, channel) = platform();
    platform.set_token_expire(120);
    channel.send(&pending("cr_1"), "n").await.unwrap();
    channel.send(&pending("cr_2"), "n").await.unwrap();
    assert_eq!(platform.token_requests(), 2);
    platform.set_token_expire(7200);
    channel.send(&pending("cr_3"), "n").await.unwrap();
    channel.send(&pending("cr_4"), "n").await.unwrap();
    assert_eq!(platform.token_requests(), 3);
    let last = message_posts(&platform).pop().unwrap();
    assert_eq!(last.header("authorization"), Some("Bearer t-standin-3"));
}

#[tokio::test]
async fn an_auth_error_code_renews_the_token_and_retries_once() {
    let (platform, channel) = platform();
    channel.send(&pending("cr_1"), "n").await.unwrap();
    platform.refuse_token_once();
    channel.send(&pending("cr_2"), "n").await.unwrap();
    assert_eq!(platform.token_requests(), 2);
    let posts = message_posts(&platform);
    let statuses: Vec<u16> = posts.iter().map(|p| p.status).collect();
    assert_eq!(statuses, [200, 400, 200]);
    assert_eq!(posts[2].header("authorization"), Some("Bearer t-standin-2"));
    assert_eq!(platform.messages().len(), 2);

    // A revoked token is refused by the platform itself, then renewed the same way.
    platform.revoke_tokens();
    channel.send(&pending("cr_3"), "n").await.unwrap();
    assert_eq!(platform.token_requests(), 3);
}

#[tokio::test]
async fn a_second_auth_error_is_a_refusal_not_a_loop() {
    let (platform, channel) = platform();
    platform.refuse_token_once();
    platform.refuse_token_once();
    let error = channel.send(&pending("cr_1"), "n").await.unwrap_err();
    assert!(matches!(error, ChannelError::Rejected(_)), "{error:?}");
    assert!(error.to_string().contains("99991663"), "{error}");
    assert_eq!(message_posts(&platform).len(), 2);
    assert_eq!(platform.token_requests(), 2);
}

#[tokio::test]
async fn a_resend_after_a_crash_is_deduplicated_by_the_platform() {
    let platform = feishu::start(APP_ID, APP_SECRET).unwrap();
    let request = pending("cr_01AGAIN");
    let first = Feishu::new(config(&platform.base_url(), None)).unwrap();
    let id = first.send(&request, "n").await.unwrap();
    drop(first);
    let restarted = Feishu::new(config(&platform.base_url(), None)).unwrap();
    assert_eq!(restarted.send(&request, "n").await.unwrap(), id);
    assert_eq!(platform.messages().len(), 1);
    assert_eq!(platform.creates("cr_01AGAIN"), 2);
}

#[tokio::test]
async fn server_errors_and_unreachable_platforms_are_transient() {
    let (platform, channel) = platform();
    for status in [500, 503, 429] {
        platform.fail_next(status);
        let error = channel.send(&pending("cr_1"), "n").await.unwrap_err();
        assert!(error.is_transient(), "{status}: {error:?}");
    }
    platform.refuse_next(99_991_400, "request trigger frequency limit");
    let error = channel.send(&pending("cr_1"), "n").await.unwrap_err();
    assert!(error.is_transient(), "{error:?}");

    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let nowhere = Feishu::new(config(&url, None)).unwrap();
    let error = nowhere.send(&pending("cr_1"), "n").await.unwrap_err();
    assert!(error.is_transient(), "{error:?}");
}

#[tokio::test]
async fn platform_refusals_are_rejections_that_never_quote_the_secret() {
    let (platform, channel) = platform();
    platform.refuse_next(230_001, "invalid receive_id");
    let error = channel.send(&pending("cr_1"), "n").await.unwrap_err();
    assert!(matches!(error, ChannelError::Rejected(_)), "{error:?}");
    assert!(error.to_string().contains("230001"), "{error}");

    let mut wrong = config(&platform.base_url(), None);
    wrong.app_secret = "a-wrong-secret-also-never-logged".into();
    let error = Feishu::new(wrong)
        .unwrap()
        .send(&pending("cr_1"), "n")
        .await
        .unwrap_err();
    assert!(matches!(error, ChannelError::Rejected(_)), "{error:?}");
    assert!(error.to_string().contains("10014"), "{error}");
    assert!(!error.to_string().contains("never-logged"), "{error}");
}

#[tokio::test]
async fn update_replaces_the_card_with_a_final_one_per_status() {
    let (platform, channel) = platform();
    let cases = [
        (Status::Expired, "timeout", "tollgate", "Expired at"),
        (Status::Cancelled, "run", "tollgate", "Cancelled at"),
        (
            Status::Approved,
            "alice",
            "web",
            "Approved by <at id=ou_alice></at> (via web) at",
        ),
        (
            Status::Rejected,
            "carol",
            "cli",
            "Rejected by carol (via cli) at",
        ),
    ];
    for (i, (status, by, via, says)) in cases.into_iter().enumerate() {
        let id = format!("cr_{i}");
        let message_id = channel.send(&pending(&id), "n").await.unwrap();
        let request = ended(&id, status, by, via);
        channel.update(&request, &message_id).await.unwrap();

        let message = platform.message(&message_id).unwrap();
        assert_eq!(message.updates.len(), 1);
        let card = message.card();
        assert!(buttons(card).is_empty(), "{status}: {card}");
        let line = texts(card, "markdown").join("\n");
        assert!(line.contains(says), "{status}: {line}");
        assert!(line.contains(&format_ms(1_800_000_100_000)), "{line}");
        let patch = platform.requests().pop().unwrap();
        assert_eq!(patch.method, "PATCH");
        assert_eq!(
            patch.path,
            format!("/open-apis/im/v1/messages/{message_id}")
        );
    }
}

#[tokio::test]
async fn updating_a_message_the_platform_does_not_have_is_refused() {
    let (_platform, channel) = platform();
    let request = ended("cr_1", Status::Expired, "timeout", "tollgate");
    let error = channel.update(&request, "om_missing").await.unwrap_err();
    assert!(matches!(error, ChannelError::Rejected(_)), "{error:?}");
}

#[test]
fn the_config_reads_both_approver_forms_and_refuses_unknown_keys() {
    let list: FeishuConfig = serde_json::from_value(json!({
        "app_id": APP_ID, "app_secret": APP_SECRET, "verification_token": VERIFICATION_TOKEN,
        "receive_id_type": "chat_id", "receive_id": "oc_ops",
        "approvers": ["ou_alice"], "agents": ["ops*"], "tools": ["sql_*"],
    }))
    .unwrap();
    assert_eq!(list.base_url, "https://open.feishu.cn");
    assert_eq!(list.agents, ["ops*"]);
    let channel = Feishu::new(list).unwrap();
    assert_eq!(channel.approver("ou_alice").as_deref(), Some("ou_alice"));
    assert_eq!(channel.approver("ou_mallory"), None);

    let mapped = Feishu::new(config("https://open.larksuite.com", Some(ENCRYPT_KEY))).unwrap();
    assert_eq!(mapped.approver("ou_alice").as_deref(), Some("alice"));
    assert_eq!(mapped.approver("alice"), None);
    assert_eq!(mapped.kind(), "feishu");

    let mut unknown = serde_json::to_value(json!({
        "app_id": APP_ID, "app_secret": APP_SECRET, "verification_token": VERIFICATION_TOKEN,
        "receive_id_type": "open_id", "receive_id": "ou_x", "approvers": ["ou_x"],
    }))
    .unwrap();
    unknown["app_secert"] = json!("typo");
    let error = serde_json::from_value::<FeishuConfig>(unknown.clone()).unwrap_err();
    assert!(error.to_string().contains("app_secert"), "{error}");
    unknown.as_object_mut().unwrap().remove("app_secert");
    unknown["receive_id_type"] = json!("phone");
    assert!(serde_json::from_value::<FeishuConfig>(unknown.clone()).is_err());
    unknown["receive_id_type"] = json!("email");
    unknown["approvers"] = json!(42);
    let error = serde_json::from_value::<FeishuConfig>(unknown).unwrap_err();
    assert!(error.to_string().contains("a list of user ids"), "{error}");
}

#[test]
fn bad_configs_are_refused_by_name() {
    let refused = |edit: &dyn Fn(&mut FeishuConfig), key: &str| {
        let mut config = config("https://open.feishu.cn", None);
        edit(&mut config);
        let error = Feishu::new(config).unwrap_err();
        assert!(error.contains(key), "{key}: {error}");
    };
    refused(&|c| c.base_url = "http://open.feishu.cn".into(), "base_url");
    refused(&|c| c.base_url = "not a url".into(), "base_url");
    refused(&|c| c.app_id = String::new(), "app_id");
    refused(&|c| c.app_secret = " ".into(), "app_secret");
    refused(
        &|c| c.verification_token = String::new(),
        "verification_token",
    );
    refused(&|c| c.encrypt_key = Some(String::new()), "encrypt_key");
    refused(&|c| c.receive_id = String::new(), "receive_id");
    refused(
        &|c| c.approvers = serde_json::from_value(json!([])).unwrap(),
        "approvers",
    );
}

#[test]
fn debug_output_never_shows_a_secret() {
    let config = config("https://open.feishu.cn", Some(ENCRYPT_KEY));
    let channel = Feishu::new(config.clone()).unwrap();
    for shown in [format!("{config:?}"), format!("{channel:?}")] {
        assert!(!shown.contains("never-logged"), "{shown}");
        assert!(shown.contains("<redacted>"), "{shown}");
        assert!(shown.contains(APP_ID), "{shown}");
    }
}
