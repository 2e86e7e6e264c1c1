//! Random callbacks at both channel routes, over HTTP: raw bytes, random headers, bodies that
//! pass the signature and decryption checks but carry random JSON, clicks with random values.
//! None may crash the server, answer 5xx, or change the request the channels announced.

use std::collections::HashMap;
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use proptest::collection::{btree_map, vec};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tollgate_approval::Status;
use tollgate_standins::feishu::{self, Callbacks};
use tollgate_standins::slack::{self, SlackUser};

use crate::channels::{
    ALICE, APP_ID, APP_SECRET, BOB, BOT_TOKEN, ENCRYPT_KEY, MALLORY, SIGNING_SECRET, SLACK_ALICE,
    VERIFICATION_TOKEN, arguments, detail, eventually, feishu_env, feishu_yaml, post, transitions,
};
use crate::{Server, Setup};

fn unix_seconds() -> i64 {
    let since = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    i64::try_from(since.as_secs()).unwrap()
}

/// One random callback: which route, its headers and its body.
#[derive(Debug, Clone)]
struct Random {
    feishu: bool,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "request_id",
            "request",
            "decision",
            "nonce",
            "schema",
            "header",
            "event",
            "event_id",
            "event_type",
            "token",
            "type",
            "challenge",
            "action",
            "actions",
            "value",
            "operator",
            "open_id",
            "user",
            "id",
            "trigger_id",
            "encrypt",
        ])
        .prop_map(str::to_owned),
        "[a-z_]{1,10}",
    ]
}

fn json_value(id: String) -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(|f| json!(f)),
        ".{0,24}".prop_map(Value::from),
        prop::sample::select(vec![
            "2.0",
            "approve",
            "reject",
            "card.action.trigger",
            "url_verification",
            "block_actions",
            "button",
        ])
        .prop_map(Value::from),
        Just(Value::from(id)),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..4).prop_map(Value::Array),
            btree_map(key(), inner, 0..6).prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A button value: random JSON, or the channel's shape (`id_key`: Feishu's `request_id`,
/// Slack's `request`) with the real request id and a random nonce and decision.
fn button_value(id: String, id_key: &'static str) -> impl Strategy<Value = Value> {
    prop_oneof![
        json_value(id.clone()),
        (
            prop::sample::select(vec!["approve", "reject", "maybe", ""]),
            "[0-9a-f]{0,40}"
        )
            .prop_map(move |(decision, nonce)| {
                json!({id_key: id, "decision": decision, "nonce": nonce})
            }),
    ]
}

fn operator() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![ALICE, BOB, MALLORY, SLACK_ALICE]).prop_map(str::to_owned),
        ".{0,16}",
    ]
}

fn header_name() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "x-lark-request-timestamp",
            "x-lark-request-nonce",
            "x-lark-signature",
            "x-slack-request-timestamp",
            "x-slack-signature",
            "content-type",
        ])
        .prop_map(str::to_owned),
        "x-[a-z]{1,8}",
    ]
}

fn header_value() -> impl Strategy<Value = String> {
    prop_oneof![
        "[ -~]{0,64}",
        (-1_000_i64..1_000).prop_map(|d| (unix_seconds() + d).to_string()),
        "v0=[0-9a-f]{64}",
        "[0-9a-f]{64}",
    ]
}

/// A Feishu body under the channel's keys, signed as the platform signs.
fn signed_feishu(body: Vec<u8>) -> Vec<(String, String)> {
    let (timestamp, nonce) = (unix_seconds().to_string(), "n0nce".to_owned());
    let mut digest = Sha256::new();
    digest.update(format!("{timestamp}{nonce}{ENCRYPT_KEY}").as_bytes());
    digest.update(&body);
    vec![
        ("x-lark-request-timestamp".into(), timestamp),
        ("x-lark-request-nonce".into(), nonce),
        ("x-lark-signature".into(), hex::encode(digest.finalize())),
    ]
}

fn random_callback(id: String) -> impl Strategy<Value = Random> {
    let callbacks = Callbacks::new(VERIFICATION_TOKEN, Some(ENCRYPT_KEY));
    let clicker = SlackUser::new(SLACK_ALICE, SIGNING_SECRET);
    let slack_signer = SlackUser::new(SLACK_ALICE, SIGNING_SECRET);
    prop_oneof![
        // Anything at all, with random headers, at either route.
        (
            any::<bool>(),
            vec((header_name(), header_value()), 0..5),
            vec(any::<u8>(), 0..1024)
        )
            .prop_map(|(feishu, headers, body)| Random { feishu, headers, body }),
        // A signed `encrypt` field holding random text or random whole blocks: the
        // decryption path.
        prop_oneof![
            ".{0,64}",
            (0_usize..8)
                .prop_flat_map(|blocks| vec(any::<u8>(), blocks * 16))
                .prop_map(|bytes| STANDARD.encode(bytes)),
        ]
        .prop_map(|text| {
            let body = json!({"encrypt": text}).to_string().into_bytes();
            Random { feishu: true, headers: signed_feishu(body.clone()), body }
        }),
        // A click encrypted and signed correctly, carrying a random value and operator.
        (button_value(id.clone(), "request_id"), operator()).prop_map(move |(value, open_id)| {
            let encoded = callbacks.click(&value, &open_id).encode();
            Random { feishu: true, headers: encoded.headers, body: encoded.body }
        }),
        // A Slack interaction signed correctly, carrying a random payload.
        json_value(id.clone()).prop_map(move |payload| {
            let signed = slack_signer.sign_now(&json!(payload));
            slack_random(&signed)
        }),
        // A signed `block_actions` click whose button value is random.
        (button_value(id, "request"), operator()).prop_map(move |(value, user)| {
            let payload = json!({
                "type": "block_actions",
                "user": {"id": user},
                "trigger_id": format!("t-{}", hex::encode(user.as_bytes())),
                "actions": [{"action_id": "tollgate_approve", "type": "button", "value": value.to_string()}],
            });
            slack_random(&clicker.sign_now(&payload))
        }),
    ]
}

fn slack_random(signed: &slack::Signed) -> Random {
    Random {
        feishu: false,
        headers: signed
            .headers()
            .into_iter()
            .map(|(name, value)| (name.to_owned(), value))
            .collect(),
        body: signed.body.clone().into_bytes(),
    }
}

#[test]
fn random_callbacks_at_both_routes_never_crash_the_server_nor_change_a_request() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let platform = feishu::start(APP_ID, APP_SECRET).unwrap();
    let slack_api = slack::start(BOT_TOKEN).unwrap();
    let mut env = feishu_env();
    env.extend(HashMap::from([
        ("SLACK_BOT_TOKEN".to_owned(), BOT_TOKEN.to_owned()),
        ("SLACK_SIGNING_SECRET".to_owned(), SIGNING_SECRET.to_owned()),
    ]));
    let extra = format!(
        "{}    - slack: {{base_url: {}, bot_token: \"${{SLACK_BOT_TOKEN}}\", \
         signing_secret: \"${{SLACK_SIGNING_SECRET}}\", channel: C0APPROVALS, \
         approvers: {{{SLACK_ALICE}: ops-lead}}}}\n",
        feishu_yaml(&platform, true, false),
        slack_api.api_url()
    );
    let (server, id) = runtime.block_on(async {
        let server = Server::start_setup(Setup {
            extra,
            env,
            clock: None,
        })
        .await;
        let id = server.file(arguments(), &["ops-lead"]).await;
        // Announced on both channels, so both have a message and a nonce to guess.
        eventually("both messages", || async {
            let messages = server.store.channel_messages(&id).await.unwrap();
            (messages.iter().filter(|m| m.message_id.is_some()).count() == 2).then_some(())
        })
        .await;
        (server, id)
    });
    let (feishu_url, slack_url) = (
        format!("{}/v1/channels/feishu/callback", server.url),
        format!("{}/v1/channels/slack/interactions", server.url),
    );

    let mut runner = TestRunner::new(Config {
        cases: 300,
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&random_callback(id.clone()), |random| {
            let url = if random.feishu {
                &feishu_url
            } else {
                &slack_url
            };
            let (status, body, _) = runtime.block_on(post(url, &random.headers, random.body));
            prop_assert!(
                status == 200 || (400..500).contains(&status),
                "{status} {body}"
            );
            Ok(())
        })
        .unwrap();

    runtime.block_on(async move {
        let health = reqwest::get(format!("{}/healthz", server.url))
            .await
            .unwrap();
        assert_eq!(health.status().as_u16(), 200);
        let (request, history) = detail(&server, &id).await;
        assert_eq!(request["status"], "pending");
        assert_eq!(transitions(&history), 0, "{history:?}");
        assert_eq!(
            server.store.get(&id).await.unwrap().unwrap().status,
            Status::Pending
        );
        drop(server);
    });
}
