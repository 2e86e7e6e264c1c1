//! The Slack channel through the real server: the hub posts to the Web API's stand-in, a
//! Slack user presses a button and the signed `block_actions` interaction reaches
//! `POST /v1/channels/slack/interactions`; the final message goes through the click's
//! `response_url`, or through `chat.update` when the request ended another way.

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};
use tollgate_approval::channel::slack::{APPROVE_ACTION, REJECT_ACTION};
use tollgate_approval::{Clock, ManualClock, Status, SystemClock};
use tollgate_standins::slack::{Fault, PostedMessage, Signed, SlackUser};

use crate::channels::{
    SLACK_ALICE, SLACK_BOB, SLACK_MALLORY, WithSlack, actions, approve_via_api, detail, eventually,
    post, transitions,
};

fn unix_seconds() -> i64 {
    let since = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    i64::try_from(since.as_secs()).unwrap()
}

/// Posts `signed` to `url`: the status and the body as text.
async fn send(url: &str, signed: &Signed) -> (u16, Value) {
    let headers: Vec<(String, String)> = signed
        .headers()
        .into_iter()
        .map(|(name, value)| (name.to_owned(), value))
        .collect();
    let (status, body, _) = post(url, &headers, signed.body.clone().into_bytes()).await;
    (status, body)
}

/// `user` pressing `action` on `message`, answering through the stand-in's response URL
/// `reply`.
fn press(
    f: &WithSlack,
    user: &SlackUser,
    message: &PostedMessage,
    action: &str,
    reply: &str,
) -> Value {
    user.press(message, action, &f.api.response_url(reply))
        .unwrap_or_else(|| panic!("no {action} button: {:?}", message.body))
}

/// Whether a message's blocks still hold buttons.
fn has_buttons(body: &Value) -> bool {
    body["blocks"]
        .as_array()
        .is_some_and(|blocks| blocks.iter().any(|b| b["type"] == "actions"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_click_approves_and_the_message_is_replaced_through_its_response_url() {
    let f = WithSlack::start(None).await;
    let (id, message) = f.file_and_wait_for_message().await;
    assert_eq!(message.channel, "C0APPROVALS");
    let nonce = f
        .server
        .store
        .channel_message(&id, "slack")
        .await
        .unwrap()
        .unwrap()
        .nonce;
    let actions_block = message.body["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["type"] == "actions")
        .unwrap();
    let values: Vec<Value> = actions_block["elements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|button| serde_json::from_str(button["value"].as_str().unwrap()).unwrap())
        .collect();
    assert_eq!(
        values,
        [
            json!({"request": id, "decision": "approve", "nonce": nonce}),
            json!({"request": id, "decision": "reject", "nonce": nonce}),
        ]
    );
    assert!(
        message.body.to_string().contains("zz-arguments-zz"),
        "the message shows them"
    );

    let alice = WithSlack::user(SLACK_ALICE);
    let signed = alice.sign_now(&press(&f, &alice, &message, APPROVE_ACTION, "r1"));
    let (status, body) = send(&f.url(), &signed).await;
    assert_eq!((status, body), (200, Value::Null), "an empty 200 at once");
    let replies = f.api.wait_for_responses("r1", 1).await;
    assert_eq!(replies.len(), 1, "{replies:?}");
    assert_eq!(replies[0]["replace_original"], true);
    assert!(!has_buttons(&replies[0]), "{}", replies[0]);
    assert!(
        replies[0]["text"].as_str().unwrap().contains("Approved"),
        "{}",
        replies[0]
    );

    let (request, history) = detail(&f.server, &id).await;
    assert_eq!(
        (
            &request["status"],
            &request["responded_by"],
            &request["channel"]
        ),
        (&json!("approved"), &json!("ops-lead"), &json!("slack"))
    );
    assert_eq!(
        actions(&history),
        [
            ("create".into(), "applied".into()),
            ("send".into(), "applied".into()),
            ("approve".into(), "applied".into()),
            ("click".into(), "applied".into()),
        ]
    );
    assert_eq!(f.api.messages().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replayed_interaction_at_two_replicas_makes_one_transition() {
    let f = WithSlack::start(None).await;
    let replica = f.server.replica(None).await;
    let (id, message) = f.file_and_wait_for_message().await;
    let alice = WithSlack::user(SLACK_ALICE);
    let signed = alice.sign_now(&press(&f, &alice, &message, APPROVE_ACTION, "r2"));
    let there = format!("{}/v1/channels/slack/interactions", replica.url);
    let here = f.url();
    let (a, b) = tokio::join!(send(&here, &signed), send(&there, &signed));
    let again = send(&here, &signed).await;
    for (status, _) in [a, b, again] {
        assert_eq!(status, 200);
    }
    // The first decides (one reply); each repeat shows the final message and tells the
    // clicker it was already decided (two replies each).
    let replies = f.api.wait_for_responses("r2", 5).await;
    assert_eq!(replies.len(), 5, "{replies:?}");
    let already: Vec<&Value> = replies
        .iter()
        .filter(|r| r["response_type"] == "ephemeral")
        .collect();
    assert_eq!(already.len(), 2, "{replies:?}");
    for reply in already {
        assert!(
            reply["text"]
                .as_str()
                .unwrap()
                .starts_with("This request was already decided"),
            "{reply}"
        );
    }

    let (request, history) = detail(&replica, &id).await;
    assert_eq!(request["status"], "approved");
    assert_eq!(transitions(&history), 1, "{history:?}");
    let clicks: Vec<&Value> = history.iter().filter(|e| e["action"] == "click").collect();
    assert_eq!(clicks.len(), 3, "{history:?}");
    assert_eq!(
        clicks
            .iter()
            .filter(|e| e["detail"].as_str().unwrap().contains("(a repeat)"))
            .count(),
        2
    );
    assert_eq!(f.api.messages().len(), 1, "two hubs, one message");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forged_stale_and_unauthorised_interactions_leave_the_request_pending() {
    let f = WithSlack::start(None).await;
    let (id, message) = f.file_and_wait_for_message().await;
    let alice = WithSlack::user(SLACK_ALICE);
    let payload = press(&f, &alice, &message, APPROVE_ACTION, "r3");

    let forged = alice.sign_now(&payload).with_bad_signature();
    assert_eq!(send(&f.url(), &forged).await.0, 401);
    let stale = alice.sign(&payload, unix_seconds() - 600);
    assert_eq!(send(&f.url(), &stale).await.0, 401);
    let ahead = alice.sign(&payload, unix_seconds() + 600);
    assert_eq!(send(&f.url(), &ahead).await.0, 401);
    let outsider = SlackUser::new(SLACK_ALICE, "another-apps-signing-secret");
    assert_eq!(send(&f.url(), &outsider.sign_now(&payload)).await.0, 401);
    let not_slack = alice.sign_body("payload=%7Bnot%20json".into(), unix_seconds());
    assert_eq!(send(&f.url(), &not_slack).await.0, 400);

    // Signed, but by people who may not decide, or with a nonce that was never sent.
    let cases = [
        (
            SLACK_MALLORY,
            "r-mallory",
            None,
            "You are not an approver of this request.",
        ),
        (
            SLACK_BOB,
            "r-bob",
            None,
            "You are not an approver of this request.",
        ),
        (
            SLACK_ALICE,
            "r-nonce",
            Some("0000"),
            "This button is no longer valid",
        ),
    ];
    for (who, reply, nonce, text) in cases {
        let user = WithSlack::user(who);
        let mut payload = press(&f, &user, &message, REJECT_ACTION, reply);
        if let Some(nonce) = nonce {
            let mut value: Value =
                serde_json::from_str(payload["actions"][0]["value"].as_str().unwrap()).unwrap();
            value["nonce"] = json!(nonce);
            payload["actions"][0]["value"] = json!(value.to_string());
        }
        assert_eq!(send(&f.url(), &user.sign_now(&payload)).await.0, 200);
        let replies = f.api.wait_for_responses(reply, 1).await;
        assert_eq!(replies.len(), 1, "{who}: {replies:?}");
        assert_eq!(replies[0]["response_type"], "ephemeral", "{who}");
        assert_eq!(replies[0]["replace_original"], false, "{who}");
        assert!(
            replies[0]["text"].as_str().unwrap().starts_with(text),
            "{who}: {}",
            replies[0]
        );
    }

    let (request, history) = detail(&f.server, &id).await;
    assert_eq!(request["status"], "pending");
    assert_eq!(transitions(&history), 0, "{history:?}");
    // Still decidable by the approver.
    let signed = alice.sign_now(&press(&f, &alice, &message, APPROVE_ACTION, "r3-ok"));
    assert_eq!(send(&f.url(), &signed).await.0, 200);
    let request = eventually("the approval", || async {
        let request = f.server.store.get(&id).await.unwrap()?;
        (request.status == Status::Approved).then_some(request)
    })
    .await;
    assert_eq!(request.responded_by.as_deref(), Some("ops-lead"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_request_gets_its_message_replaced_with_chat_update() {
    let clock = Arc::new(ManualClock::at(SystemClock.now_ms()));
    let f = WithSlack::start(Some(Arc::clone(&clock))).await;
    let (id, message) = f.file_and_wait_for_message().await;
    clock.advance(601_000);
    let update = eventually("chat.update", || async {
        f.api.calls("chat.update").into_iter().next()
    })
    .await;
    let body = update.json.unwrap();
    assert_eq!(
        (&body["channel"], &body["ts"]),
        (&json!(message.channel), &json!(message.ts))
    );
    assert!(!has_buttons(&body), "{body}");
    assert!(
        body.to_string().contains("Expired at ")
            && body.to_string().contains("nobody decided in time"),
        "{body}"
    );
    assert_eq!(
        f.server.store.get(&id).await.unwrap().unwrap().status,
        Status::Expired
    );
    let (_, history) = detail(&f.server, &id).await;
    assert!(
        actions(&history).contains(&("update".into(), "applied".into())),
        "{history:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_post_is_retried_and_a_decision_through_the_api_updates_the_message() {
    let f = WithSlack::start(None).await;
    f.api.fail_next(Fault::Status(503));
    let (id, message) = f.file_and_wait_for_message().await;
    let (request, history) = detail(&f.server, &id).await;
    assert_eq!(request["status"], "pending");
    let sends: Vec<&str> = history
        .iter()
        .filter(|e| e["action"] == "send")
        .map(|e| e["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(sends, ["refused", "applied"], "{history:?}");

    let (status, body) = approve_via_api(&f.server, &id).await;
    assert_eq!(status, 200, "{body}");
    let update = eventually("chat.update", || async {
        f.api.calls("chat.update").into_iter().next()
    })
    .await;
    let body = update.json.unwrap();
    assert_eq!(body["ts"], json!(message.ts));
    assert!(!has_buttons(&body), "{body}");
    assert!(body.to_string().contains("(via api)"), "{body}");
}
