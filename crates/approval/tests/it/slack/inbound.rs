//! Interactions as the Slack user stand-in sends them, read by `Slack::inbound`: clicks,
//! forged and replayed requests, payloads tollgate does not handle, and random bodies.

use proptest::prelude::*;
use serde_json::{Value, json};
use tollgate_approval::channel::slack::{APPROVE_ACTION, REJECT_ACTION, Slack, SlackConfig};
use tollgate_approval::channel::{Channel, Click, HeaderMap, Inbound, Refusal};
use tollgate_standins::slack::{self, PostedMessage, Signed, SlackUser};

use super::{ALICE, CHANNEL, NONCE, SECRET, TOKEN, channel, config, request};

/// When the stand-in user clicks, in Unix seconds (the server's clock in these tests).
const NOW: i64 = 1_796_160_600;

fn headers(signed: &Signed) -> HeaderMap {
    let mut map = HeaderMap::new();
    for (name, value) in signed.headers() {
        map.insert(name, value.parse().unwrap());
    }
    map
}

fn inbound(slack: &Slack, signed: &Signed) -> Result<Inbound, Refusal> {
    slack.inbound(&headers(signed), signed.body.as_bytes(), NOW * 1000)
}

/// The message tollgate posted for `request()`, from the stand-in.
async fn posted() -> (Slack, PostedMessage, String) {
    let api = slack::start(TOKEN).unwrap();
    let slack = channel(&api);
    slack.send(&request(), NONCE).await.unwrap();
    let response_url = api.response_url("click");
    (slack, api.messages().remove(0), response_url)
}

#[tokio::test]
async fn a_click_on_approve_or_reject_reads_as_that_verdict() {
    let (slack, message, response_url) = posted().await;
    let alice = SlackUser::new(ALICE, SECRET);
    for (action, approve) in [(APPROVE_ACTION, true), (REJECT_ACTION, false)] {
        let payload = alice.press(&message, action, &response_url).unwrap();
        let Ok(Inbound::Click(click)) = inbound(&slack, &alice.sign(&payload, NOW)) else {
            panic!("not a click");
        };
        assert_eq!(
            click,
            Click {
                event_id: payload["trigger_id"].as_str().unwrap().to_owned(),
                request_id: request().id,
                approve,
                nonce: NONCE.into(),
                operator: ALICE.into(),
                operator_aliases: Vec::new(),
                message_id: Some(format!("{CHANNEL}:{}", message.ts)),
                response_url: Some(response_url.clone()),
            }
        );
    }
}

#[tokio::test]
async fn without_a_trigger_id_the_event_id_is_the_message_and_action_timestamps() {
    let (slack, message, response_url) = posted().await;
    let alice = SlackUser::new(ALICE, SECRET);
    let mut payload = alice
        .press(&message, APPROVE_ACTION, &response_url)
        .unwrap();
    payload.as_object_mut().unwrap().remove("trigger_id");
    let action_ts = payload["actions"][0]["action_ts"]
        .as_str()
        .unwrap()
        .to_owned();
    let Ok(Inbound::Click(click)) = inbound(&slack, &alice.sign(&payload, NOW)) else {
        panic!("not a click");
    };
    assert_eq!(click.event_id, format!("{}:{action_ts}", message.ts));
}

fn status(result: Result<Inbound, Refusal>) -> u16 {
    match result {
        Ok(inbound) => panic!("accepted: {inbound:?}"),
        Err(refusal) => refusal.status,
    }
}

#[tokio::test]
async fn forged_and_replayed_requests_are_unauthorized() {
    let (slack, message, response_url) = posted().await;
    let alice = SlackUser::new(ALICE, SECRET);
    let payload = alice
        .press(&message, APPROVE_ACTION, &response_url)
        .unwrap();

    let forged = alice.sign(&payload, NOW).with_bad_signature();
    assert_eq!(status(inbound(&slack, &forged)), 401);
    let other_secret = SlackUser::new(ALICE, "another-apps-secret").sign(&payload, NOW);
    assert_eq!(status(inbound(&slack, &other_secret)), 401);
    let mut tampered = alice.sign(&payload, NOW);
    tampered.body = tampered.body.replace("approve", "reject");
    assert_eq!(status(inbound(&slack, &tampered)), 401);

    for off in [301, -301, 86_400, -86_400] {
        let replayed = alice.sign(&payload, NOW - off);
        let refusal = inbound(&slack, &replayed).unwrap_err();
        assert_eq!(refusal.status, 401, "{off}: {refusal:?}");
        assert!(
            refusal.message.contains("off the server's clock"),
            "{refusal:?}"
        );
    }
    for off in [300, -300, 0] {
        let inside = alice.sign(&payload, NOW - off);
        assert!(
            inbound(&slack, &inside).is_ok(),
            "{off} s off is inside the window"
        );
    }
}

#[tokio::test]
async fn missing_or_unreadable_headers_are_unauthorized() {
    let (slack, message, response_url) = posted().await;
    let alice = SlackUser::new(ALICE, SECRET);
    let signed = alice.sign(
        &alice
            .press(&message, APPROVE_ACTION, &response_url)
            .unwrap(),
        NOW,
    );
    let body = signed.body.as_bytes();
    for name in ["x-slack-request-timestamp", "x-slack-signature"] {
        let mut map = headers(&signed);
        map.remove(name);
        let refusal = slack.inbound(&map, body, NOW * 1000).unwrap_err();
        assert_eq!(refusal.status, 401, "{refusal:?}");
        assert!(refusal.message.contains(name), "{refusal:?}");
    }
    let broken = [
        ("x-slack-request-timestamp", "yesterday"),
        ("x-slack-signature", "v1=00"),
        ("x-slack-signature", "v0=zz"),
    ];
    for (name, value) in broken {
        let mut map = headers(&signed);
        map.insert(name, value.parse().unwrap());
        assert_eq!(
            status(slack.inbound(&map, body, NOW * 1000)),
            401,
            "{name}: {value}"
        );
    }
}

#[tokio::test]
async fn malformed_bodies_are_bad_requests() {
    let (slack, message, response_url) = posted().await;
    let alice = SlackUser::new(ALICE, SECRET);
    let click = alice
        .press(&message, APPROVE_ACTION, &response_url)
        .unwrap();

    let bodies = [
        "".to_owned(),
        "payload=not%20json".to_owned(),
        "token=x&trigger_id=1".to_owned(),
        format!("payload={0}&payload={0}", url_encoded(&click)),
    ];
    for body in bodies {
        assert_eq!(
            status(inbound(&slack, &alice.sign_body(body.clone(), NOW))),
            400,
            "{body}"
        );
    }
    let mut wrong_value = click.clone();
    wrong_value["actions"][0]["value"] = json!("cr_01:approve:nonce");
    let mut swapped = click.clone();
    swapped["actions"][0]["action_id"] = json!(REJECT_ACTION);
    let mut no_user = click.clone();
    no_user.as_object_mut().unwrap().remove("user");
    let mut no_type = click;
    no_type.as_object_mut().unwrap().remove("type");
    for payload in [wrong_value, swapped, no_user, no_type] {
        assert_eq!(
            status(inbound(&slack, &alice.sign(&payload, NOW))),
            400,
            "{payload}"
        );
    }
}

fn url_encoded(payload: &Value) -> String {
    let body = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("p", &payload.to_string())
        .finish();
    body.trim_start_matches("p=").to_owned()
}

#[tokio::test]
async fn other_interactions_are_ignored() {
    let (slack, message, response_url) = posted().await;
    let alice = SlackUser::new(ALICE, SECRET);
    let submission = json!({"type": "view_submission", "user": {"id": ALICE}, "view": {}});
    assert_eq!(
        inbound(&slack, &alice.sign(&submission, NOW)),
        Ok(Inbound::Ignore)
    );
    let mut foreign = alice
        .press(&message, APPROVE_ACTION, &response_url)
        .unwrap();
    foreign["actions"][0]["action_id"] = json!("another_apps_button");
    assert_eq!(
        inbound(&slack, &alice.sign(&foreign, NOW)),
        Ok(Inbound::Ignore)
    );
}

/// Payloads close to Slack's shape, with every part liable to be missing or wrong.
fn payloads() -> impl Strategy<Value = Value> {
    let text = prop_oneof![
        Just(Value::Null),
        Just(json!(42)),
        ".{0,12}".prop_map(Value::from),
    ];
    let action_id = prop_oneof![
        Just(json!(APPROVE_ACTION)),
        Just(json!(REJECT_ACTION)),
        text.clone()
    ];
    let value = prop_oneof![
        Just(json!(
            r#"{"request":"cr_1","decision":"approve","nonce":"n"}"#
        )),
        Just(json!(
            r#"{"request":"cr_1","decision":"reject","nonce":"n"}"#
        )),
        text.clone()
    ];
    let action = (action_id, value, text.clone()).prop_map(
        |(action_id, value, ts)| json!({"action_id": action_id, "value": value, "action_ts": ts}),
    );
    let kind = prop_oneof![Just(json!("block_actions")), text.clone()];
    (
        kind,
        text.clone(),
        text.clone(),
        text,
        prop::collection::vec(action, 0..3),
    )
        .prop_map(|(kind, user, trigger, ts, actions)| {
            json!({"type": kind, "user": {"id": user}, "trigger_id": trigger,
                   "container": {"message_ts": ts, "channel_id": "C1"}, "actions": actions})
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn unsigned_random_bytes_never_panic_and_never_pass(body in prop::collection::vec(any::<u8>(), 0..512)) {
        let slack = Slack::new(config("https://slack.com/api")).unwrap();
        let refusal = slack.inbound(&HeaderMap::new(), &body, NOW * 1000).unwrap_err();
        prop_assert_eq!(refusal.status, 401);
    }

    #[test]
    fn signed_random_bodies_never_panic(body in prop::collection::vec(any::<u8>(), 0..512)) {
        let slack = Slack::new(config("https://slack.com/api")).unwrap();
        let body = String::from_utf8_lossy(&body).into_owned();
        let signed = SlackUser::new(ALICE, SECRET).sign_body(body, NOW);
        if let Err(refusal) = inbound(&slack, &signed) {
            prop_assert_eq!(refusal.status, 400);
        }
    }

    #[test]
    fn signed_random_payloads_never_panic(payload in payloads(), extra in "[a-z=&%0-9]{0,20}") {
        let slack = Slack::new(config("https://slack.com/api")).unwrap();
        let alice = SlackUser::new(ALICE, SECRET);
        let mut signed = alice.sign(&payload, NOW);
        signed = alice.sign_body(format!("{}&{extra}", signed.body), NOW);
        match inbound(&slack, &signed) {
            Ok(Inbound::Click(click)) => {
                prop_assert_eq!(click.request_id, "cr_1");
                prop_assert!(!click.operator.is_empty() && !click.event_id.is_empty());
            }
            Ok(_) => {}
            Err(refusal) => prop_assert_eq!(refusal.status, 400),
        }
    }
}

#[test]
fn slacks_published_example_passes_the_signature_check() {
    // The worked example in "Verifying requests from Slack" (a slash command, no payload).
    let body = "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c";
    let slack = Slack::new(SlackConfig {
        signing_secret: "8f742231b10e8888abcd99yyyzzz85a5".into(),
        ..config("https://slack.com/api")
    })
    .unwrap();
    let mut map = HeaderMap::new();
    map.insert("x-slack-request-timestamp", "1531420618".parse().unwrap());
    let signature = "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503";
    map.insert("x-slack-signature", signature.parse().unwrap());
    let now_ms = 1_531_420_618_000 + 59_000;
    let refusal = slack.inbound(&map, body.as_bytes(), now_ms).unwrap_err();
    assert_eq!(
        refusal.status, 400,
        "past the signature, no payload: {refusal:?}"
    );
    let altered = body.replace("foobar", "foobaz");
    assert_eq!(
        slack
            .inbound(&map, altered.as_bytes(), now_ms)
            .unwrap_err()
            .status,
        401
    );
}
