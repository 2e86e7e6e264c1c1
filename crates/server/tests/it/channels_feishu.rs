//! The Feishu/Lark channel through the real server: the hub sends a card to the open
//! platform's stand-in, the platform's side posts encrypted and signed clicks to
//! `POST /v1/channels/feishu/callback`, and the store makes one transition however often and
//! wherever a click arrives.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};
use tollgate_approval::{Clock, ManualClock, Status};
use tollgate_standins::feishu::{self, Callbacks};

use crate::channels::{
    ALICE, BOB, ENCRYPT_KEY, MALLORY, VERIFICATION_TOKEN, WithFeishu, actions, approve_via_api,
    arguments, detail, eventually, feishu_env, feishu_yaml, post, transitions,
};
use crate::{Server, Setup};

/// Feishu drops a callback's reply that takes longer than this: the platform's deadline.
const FEISHU_REPLY_DEADLINE: Duration = Duration::from_secs(3);

fn unix_seconds() -> i64 {
    let since = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    i64::try_from(since.as_secs()).unwrap()
}

fn toast(answer: &Value) -> (&str, &str) {
    (
        answer["toast"]["type"].as_str().unwrap_or_default(),
        answer["toast"]["content"].as_str().unwrap_or_default(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pending_request_gets_one_card_and_an_encrypted_signed_click_approves_it() {
    let f = WithFeishu::start(None).await;
    let (id, message) = f.file_and_wait_for_card().await;

    // The card: sent to the configured receiver, buttons carrying id, decision and nonce.
    assert_eq!(message.msg_type, "interactive");
    assert_eq!(
        (
            message.receive_id_type.as_str(),
            message.receive_id.as_str()
        ),
        ("open_id", "ou_ops_room")
    );
    let nonce = f
        .server
        .store
        .channel_message(&id, "feishu")
        .await
        .unwrap()
        .unwrap()
        .nonce;
    let buttons = feishu::buttons(message.card());
    let shown: Vec<(&str, &Value)> = buttons
        .iter()
        .map(|b| (b.label.as_str(), &b.value))
        .collect();
    assert_eq!(
        shown,
        [
            (
                "Approve",
                &json!({"request_id": id, "decision": "approve", "nonce": nonce})
            ),
            (
                "Reject",
                &json!({"request_id": id, "decision": "reject", "nonce": nonce})
            ),
        ]
    );
    let card = message.card().to_string();
    assert!(
        card.contains("zz-arguments-zz"),
        "the card shows the arguments: {card}"
    );
    for button in &buttons {
        let value = button.value.to_string();
        assert!(
            !value.contains("zz-arguments-zz") && !value.contains("DELETE"),
            "arguments travel in a button: {value}"
        );
    }

    // The click, encrypted and signed as the platform sends it.
    let encoded = f
        .callbacks
        .click(&WithFeishu::button(&message, "Approve"), ALICE)
        .encode();
    assert!(!String::from_utf8_lossy(&encoded.body).contains(ALICE));
    let url = WithFeishu::callback_url(&f.server);
    let (status, answer, took) = post(&url, &encoded.headers, encoded.body).await;
    assert_eq!(status, 200, "{answer}");
    assert!(
        took < FEISHU_REPLY_DEADLINE,
        "Feishu drops a reply after 3 s; this one took {took:?}"
    );
    assert_eq!(
        toast(&answer),
        ("success", "Approved: sql_execute may run.")
    );
    assert_eq!(answer["card"]["type"], "raw", "{answer}");
    let replaced = &answer["card"]["data"];
    assert!(feishu::buttons(replaced).is_empty(), "{replaced}");
    assert_eq!(
        replaced["header"]["title"]["content"],
        "Approved: sql_execute"
    );
    assert!(
        replaced
            .to_string()
            .contains("Approved by <at id=ou_alice></at> at "),
        "{replaced}"
    );

    // One transition, through the channel, by the approver the operator maps to.
    let (request, history) = detail(&f.server, &id).await;
    assert_eq!(request["status"], "approved");
    assert_eq!(request["responded_by"], "ops-lead");
    assert_eq!(request["channel"], "feishu");
    assert_eq!(
        actions(&history),
        [
            ("create".into(), "applied".into()),
            ("send".into(), "applied".into()),
            ("approve".into(), "applied".into()),
            ("click".into(), "applied".into()),
        ]
    );
    assert_eq!(history[1]["actor"], "channel:feishu");
    assert_eq!(
        history[1]["detail"],
        format!("message {}", message.message_id)
    );
    assert_eq!(history[3]["actor"], "feishu:ou_alice");
    assert!(
        history[3]["detail"]
            .as_str()
            .unwrap()
            .contains("ou_alice (on_ou_alice)"),
        "{}",
        history[3]
    );
    // The reply replaced the card: the hub has nothing to update, and sent one card.
    let row = f.server.store.channel_message(&id, "feishu").await.unwrap();
    assert_eq!(row.unwrap().closed_status, Some(Status::Approved));
    assert_eq!(f.platform.creates(&id), 1);
    assert_eq!(f.platform.messages().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_click_twice_and_at_two_replicas_at_once_makes_one_transition() {
    let f = WithFeishu::start(None).await;
    let replica = f.server.replica(None).await;
    let (id, message) = f.file_and_wait_for_card().await;
    let encoded = f
        .callbacks
        .click(&WithFeishu::button(&message, "Approve"), ALICE)
        .encode();
    let (here, there) = (
        WithFeishu::callback_url(&f.server),
        WithFeishu::callback_url(&replica),
    );
    // The platform retries a delivery it thinks was lost: the same bytes, at both replicas
    // at once, then once more.
    let (a, b) = tokio::join!(
        post(&here, &encoded.headers, encoded.body.clone()),
        post(&there, &encoded.headers, encoded.body.clone())
    );
    let again = post(&here, &encoded.headers, encoded.body.clone()).await;
    let answers = [a, b, again];
    assert!(
        answers.iter().all(|(status, ..)| *status == 200),
        "{answers:?}"
    );
    let kinds: Vec<&str> = answers.iter().map(|(_, body, _)| toast(body).0).collect();
    assert_eq!(
        kinds.iter().filter(|k| **k == "success").count(),
        1,
        "{answers:?}"
    );
    assert_eq!(
        toast(&answers[2].1).0,
        "info",
        "the repeat: {:?}",
        answers[2]
    );
    for (_, body, _) in &answers {
        if toast(body).0 == "info" {
            assert!(
                toast(body)
                    .1
                    .starts_with("Already approved by ops-lead at "),
                "{body}"
            );
            // The repeat shows the final card too.
            assert!(feishu::buttons(&body["card"]["data"]).is_empty(), "{body}");
        }
    }

    let (request, history) = detail(&replica, &id).await;
    assert_eq!(request["status"], "approved");
    assert_eq!(transitions(&history), 1, "{history:?}");
    let clicks: Vec<&Value> = history.iter().filter(|e| e["action"] == "click").collect();
    assert_eq!(clicks.len(), 3, "every delivery is audited: {history:?}");
    assert_eq!(
        clicks.iter().filter(|e| e["outcome"] == "applied").count(),
        1
    );
    let repeats = clicks
        .iter()
        .filter(|e| e["detail"].as_str().unwrap().contains("(a repeat)"))
        .count();
    assert_eq!(repeats, 2, "{clicks:?}");
    // Two hubs on one database sent one card.
    assert_eq!(f.platform.creates(&id), 1);
    assert_eq!(f.platform.messages().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forged_broken_and_unauthorised_clicks_are_refused_and_the_request_stays_pending() {
    let f = WithFeishu::start(None).await;
    let (id, message) = f.file_and_wait_for_card().await;
    let approve = WithFeishu::button(&message, "Approve");
    let url = WithFeishu::callback_url(&f.server);
    let click = || f.callbacks.click(&approve, ALICE);
    let refusals = [
        ("a wrong signature", click().bad_signature(), 401),
        ("no signature", click().unsigned(), 401),
        ("a stale timestamp", click().at(unix_seconds() - 600), 401),
        (
            "a timestamp from the future",
            click().at(unix_seconds() + 600),
            401,
        ),
        ("a wrong verification token", click().wrong_token(), 401),
        ("bad base64", click().bad_base64(), 400),
        ("bad ciphertext", click().bad_ciphertext(), 400),
        ("bad padding", click().bad_padding(), 400),
        ("another encrypt key", click().wrong_encrypt_key(), 400),
        (
            "a plain body to an encrypted channel",
            Callbacks::new(VERIFICATION_TOKEN, None).click(&approve, ALICE),
            400,
        ),
    ];
    for (what, delivery, expected) in refusals {
        let encoded = delivery.encode();
        let (status, answer, _) = post(&url, &encoded.headers, encoded.body).await;
        assert_eq!(status, expected, "{what}: {answer}");
        assert_eq!(answer["error"], "refused", "{what}: {answer}");
        assert!(answer["message"].as_str().is_some(), "{what}: {answer}");
    }

    let mut other_nonce = approve.clone();
    other_nonce["nonce"] = json!("00000000000000000000000000000000");
    let mut other_request = approve.clone();
    other_request["request_id"] = json!("cr_01NOSUCHREQUEST0000000000");
    let toasts = [
        (
            "an unknown nonce",
            f.callbacks.click(&other_nonce, ALICE),
            "tollgate does not know this request, or this card is out of date.",
        ),
        (
            "an unknown request",
            f.callbacks.click(&other_request, ALICE),
            "tollgate does not know this request, or this card is out of date.",
        ),
        (
            "an operator who is no approver of the channel",
            f.callbacks.click(&approve, MALLORY),
            "You are not an approver of this request.",
        ),
        (
            "an approver of the channel who is not one of the request",
            f.callbacks.click(&approve, BOB),
            "You are not an approver of this request.",
        ),
    ];
    for (what, delivery, text) in toasts {
        let encoded = delivery.encode();
        let (status, answer, _) = post(&url, &encoded.headers, encoded.body).await;
        assert_eq!(status, 200, "{what}: {answer}");
        assert_eq!(toast(&answer), ("error", text), "{what}");
        assert!(
            answer.get("card").is_none(),
            "{what}: the card stays: {answer}"
        );
    }

    let (request, history) = detail(&f.server, &id).await;
    assert_eq!(request["status"], "pending");
    assert_eq!(transitions(&history), 0, "{history:?}");
    // The attempts that got as far as the request are audited as refused.
    let refused: Vec<(&str, &str)> = history
        .iter()
        .filter(|e| e["outcome"] == "refused")
        .map(|e| (e["action"].as_str().unwrap(), e["actor"].as_str().unwrap()))
        .collect();
    assert!(
        refused.contains(&("approve", "feishu:ou_alice")),
        "{refused:?}"
    );
    assert!(
        refused.contains(&("approve", "feishu:ou_mallory")),
        "{refused:?}"
    );
    assert!(refused.contains(&("approve", "dba")), "{refused:?}");

    // Nothing broke: the right click still decides.
    let encoded = click().encode();
    let (status, answer, _) = post(&url, &encoded.headers, encoded.body).await;
    assert_eq!((status, toast(&answer).0), (200, "success"), "{answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn url_verification_is_answered_with_the_challenge_exactly_plain_and_encrypted() {
    let encrypted = WithFeishu::start(None).await;
    let platform = feishu::start(crate::channels::APP_ID, crate::channels::APP_SECRET).unwrap();
    let plain = Server::start_setup(Setup {
        extra: feishu_yaml(&platform, false, false),
        env: feishu_env(),
        clock: None,
    })
    .await;
    let cases = [
        (
            &encrypted.server,
            Callbacks::new(VERIFICATION_TOKEN, Some(ENCRYPT_KEY)).url_verification("ch-enc-7f3a"),
            "ch-enc-7f3a",
        ),
        (
            // The platform's URL check may come unsigned; it must still decrypt.
            &encrypted.server,
            Callbacks::new(VERIFICATION_TOKEN, Some(ENCRYPT_KEY))
                .url_verification("ch-unsigned-11")
                .unsigned(),
            "ch-unsigned-11",
        ),
        (
            &plain,
            Callbacks::new(VERIFICATION_TOKEN, None).url_verification("ch-plain-90b1"),
            "ch-plain-90b1",
        ),
    ];
    for (server, delivery, challenge) in cases {
        let encoded = delivery.encode();
        let (status, answer, _) = post(
            &WithFeishu::callback_url(server),
            &encoded.headers,
            encoded.body,
        )
        .await;
        assert_eq!(status, 200, "{answer}");
        assert_eq!(answer, json!({"challenge": challenge}));
    }
    let forged = Callbacks::new(VERIFICATION_TOKEN, None)
        .url_verification("ch-forged")
        .wrong_token()
        .encode();
    let (status, answer, _) = post(
        &WithFeishu::callback_url(&plain),
        &forged.headers,
        forged.body,
    )
    .await;
    assert_eq!(status, 401, "{answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_send_in_flight_when_the_server_died_is_sent_again_and_the_platform_keeps_one_card() {
    let clock = Arc::new(ManualClock::at(tollgate_approval::SystemClock.now_ms()));
    let f = WithFeishu::start(Some(Arc::clone(&clock))).await;
    // The platform takes the card, but holds its answer back for a second: the server dies
    // before it arrives.
    f.platform.hold_next_create(Duration::from_secs(1));
    let id = f.server.file(arguments(), &["ops-lead"]).await;
    let first = f.created_for(&id).await;
    let row = f.server.store.channel_message(&id, "feishu").await.unwrap();
    assert_eq!(row.unwrap().message_id, None, "the server never heard back");

    // The next server, a minute later (the dead one's claim on the send has run out).
    let later = Arc::new(ManualClock::at(clock.now_ms() + 61_000));
    let WithFeishu {
        server, platform, ..
    } = f;
    let dead = server.crash().await;
    // The held answer is out by now: a hub that outlived its server would have recorded it.
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    let server = dead.restart(Some(later)).await;
    let sent = eventually("the card sent again", || async {
        let row = server.store.channel_message(&id, "feishu").await.unwrap()?;
        row.message_id
    })
    .await;
    assert_eq!(
        sent, first.message_id,
        "the platform answered with the first card"
    );
    assert_eq!(platform.creates(&id), 2, "sent twice, with the same uuid");
    assert_eq!(platform.messages().len(), 1, "one card in the chat");
    let (_, history) = detail(&server, &id).await;
    let sends: Vec<(String, String)> = actions(&history)
        .into_iter()
        .filter(|(action, _)| action == "send")
        .collect();
    assert_eq!(sends, [("send".into(), "applied".into())]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_send_is_retried_and_audited_and_a_decision_elsewhere_updates_the_card() {
    let f = WithFeishu::start(None).await;
    f.platform.fail_next(503);
    let id = f.server.file(arguments(), &["ops-lead"]).await;
    let history = eventually("a refused send in the history", || async {
        let (_, history) = detail(&f.server, &id).await;
        history
            .iter()
            .any(|e| e["action"] == "send" && e["outcome"] == "refused")
            .then_some(history)
    })
    .await;
    let refused = history.iter().find(|e| e["action"] == "send").unwrap();
    let why = refused["detail"].as_str().unwrap();
    assert!(why.contains("503") && why.contains("next try in"), "{why}");
    assert_eq!(refused["to_status"], "pending");

    // The retry goes through.
    let message = f.card_of(&id).await;
    let (request, history) = detail(&f.server, &id).await;
    assert_eq!(request["status"], "pending");
    let sends: Vec<&str> = history
        .iter()
        .filter(|e| e["action"] == "send")
        .map(|e| e["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(sends, ["refused", "applied"]);

    // Decided through the API: the card is replaced.
    let (status, body) = approve_via_api(&f.server, &id).await;
    assert_eq!(status, 200, "{body}");
    let updated = eventually("the card updated", || async {
        let message = f.platform.message(&message.message_id)?;
        message.updates.last().cloned()
    })
    .await;
    assert!(feishu::buttons(&updated).is_empty(), "{updated}");
    assert_eq!(
        updated["header"]["title"]["content"],
        "Approved: sql_execute"
    );
    assert!(
        updated
            .to_string()
            .contains("Approved by <at id=ou_alice></at> (via api) at "),
        "{updated}"
    );
    let (_, history) = detail(&f.server, &id).await;
    let update = history.iter().find(|e| e["action"] == "update").unwrap();
    assert_eq!(
        (update["outcome"].as_str(), update["detail"].as_str()),
        (Some("applied"), Some("message shows approved"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_whose_card_the_platform_refuses_is_still_decided_through_the_api() {
    let f = WithFeishu::start(None).await;
    f.platform
        .refuse_next(230_002, "the bot is not in the chat");
    let id = f.server.file(arguments(), &["ops-lead"]).await;
    eventually("a refused send", || async {
        let (_, history) = detail(&f.server, &id).await;
        history
            .iter()
            .any(|e| {
                e["action"] == "send"
                    && e["outcome"] == "refused"
                    && e["detail"].as_str().unwrap().contains("230002")
            })
            .then_some(())
    })
    .await;
    let (status, body) = approve_via_api(&f.server, &id).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["request"]["status"], "approved");
    assert!(f.platform.messages().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_request_gets_its_card_replaced() {
    let clock = Arc::new(ManualClock::at(tollgate_approval::SystemClock.now_ms()));
    let f = WithFeishu::start(Some(Arc::clone(&clock))).await;
    let (id, message) = f.file_and_wait_for_card().await;
    clock.advance(601_000);
    let updated = eventually("the card updated", || async {
        f.platform
            .message(&message.message_id)?
            .updates
            .last()
            .cloned()
    })
    .await;
    assert!(feishu::buttons(&updated).is_empty(), "{updated}");
    assert_eq!(
        updated["header"]["title"]["content"],
        "Expired: sql_execute"
    );
    assert!(
        updated
            .to_string()
            .contains("nobody decided, so the call was denied."),
        "{updated}"
    );
    let request = f.server.store.get(&id).await.unwrap().unwrap();
    assert_eq!(request.status, Status::Expired);
    // A click on the old card now says how it ended (dated by this server's clock).
    let encoded = f
        .callbacks
        .click(&WithFeishu::button(&message, "Approve"), ALICE)
        .at(clock.now_ms() / 1000)
        .encode();
    let (status, answer, _) = post(
        &WithFeishu::callback_url(&f.server),
        &encoded.headers,
        encoded.body,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(toast(&answer).0, "info", "{answer}");
    assert!(
        toast(&answer).1.starts_with("Already expired at "),
        "{answer}"
    );
}

/// A Feishu entry whose App Secret variable is unset.
async fn without_the_app_secret(
    fail_closed: bool,
) -> (Server, tollgate_standins::feishu::OpenPlatform) {
    let platform = feishu::start(crate::channels::APP_ID, crate::channels::APP_SECRET).unwrap();
    let mut env = feishu_env();
    env.remove("FEISHU_APP_SECRET");
    let server = Server::start_setup(Setup {
        extra: feishu_yaml(&platform, true, fail_closed),
        env,
        clock: None,
    })
    .await;
    (server, platform)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unset_secret_costs_the_channel_and_its_requests_wait_for_the_api() {
    let (server, platform) = without_the_app_secret(false).await;
    // The server runs; the channel does not exist.
    let health = reqwest::get(format!("{}/healthz", server.url))
        .await
        .unwrap();
    assert_eq!(health.status().as_u16(), 200);
    let encoded = Callbacks::new(VERIFICATION_TOKEN, Some(ENCRYPT_KEY))
        .url_verification("ch")
        .encode();
    let (status, answer, _) = post(
        &WithFeishu::callback_url(&server),
        &encoded.headers,
        encoded.body,
    )
    .await;
    assert_eq!(status, 404, "{answer}");

    let id = server.file(arguments(), &["ops-lead"]).await;
    let note = eventually("the send refused", || async {
        let (_, history) = detail(&server, &id).await;
        history
            .into_iter()
            .find(|e| e["action"] == "send" && e["outcome"] == "refused")
    })
    .await;
    let why = note["detail"].as_str().unwrap();
    assert!(
        why.contains("channel feishu is not available") && why.contains("FEISHU_APP_SECRET"),
        "{why}"
    );
    assert_eq!(
        server.store.get(&id).await.unwrap().unwrap().status,
        Status::Pending
    );
    let (status, body) = approve_via_api(&server, &id).await;
    assert_eq!(
        (status, body["request"]["status"].as_str()),
        (200, Some("approved"))
    );
    assert!(
        platform.requests().is_empty(),
        "nothing reached the platform"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_fail_closed_a_request_routed_to_a_channel_that_is_not_built_is_cancelled() {
    let (server, _platform) = without_the_app_secret(true).await;
    let id = server.file(arguments(), &["ops-lead"]).await;
    let request = eventually("the request cancelled", || async {
        let request = server.store.get(&id).await.unwrap()?;
        (request.status == Status::Cancelled).then_some(request)
    })
    .await;
    let why = request.response_note.unwrap_or_default();
    assert!(
        why.contains("channel feishu is not available") && why.contains("FEISHU_APP_SECRET"),
        "{why}"
    );
    assert_eq!(request.responded_by.as_deref(), Some("channel:feishu"));
}
