//! Approval channels under `tollgate serve`: a run pauses on a call that needs confirmation,
//! its card (Feishu/Lark) or message (Slack) reaches the platform's stand-in, and a click on
//! it resumes the run; across a restart, on expiry, and with a channel that cannot be built.

use std::future::Future;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tollgate_standins::feishu::{self, Callbacks, Message, OpenPlatform};
use tollgate_standins::slack::{self, SlackUser};

use crate::serve_runs::{CI, OPS, Served, names, read_until};

const APP_ID: &str = "cli_tollgate_test";
const APP_SECRET: &str = "feishu-app-secret-0123";
const VERIFICATION_TOKEN: &str = "feishu-verification-token";
const ENCRYPT_KEY: &str = "feishu-encrypt-key-4567";
/// The Feishu user who decides as `ops-lead`, the server's approver token (the default
/// approver of its runs).
const ALICE: &str = "ou_alice";
const BOT_TOKEN: &str = "xoxb-standin-bot-token";
const SIGNING_SECRET: &str = "slack-signing-secret-89ab";
const SLACK_ALICE: &str = "U0ALICE";
/// Feishu drops a callback's reply that takes longer than this: the platform's deadline.
const FEISHU_REPLY_DEADLINE: Duration = Duration::from_secs(3);
/// How long a background effect may take before a test gives up (a deadline for a hang).
const PATIENCE: Duration = Duration::from_secs(60);

const FEISHU_ENV: [(&str, &str); 3] = [
    ("FEISHU_APP_SECRET", APP_SECRET),
    ("FEISHU_VERIFICATION_TOKEN", VERIFICATION_TOKEN),
    ("FEISHU_ENCRYPT_KEY", ENCRYPT_KEY),
];

/// The `approval:` section: `settings` (`timeout_seconds: 2`, `fail_closed: true`) and one
/// encrypted Feishu channel on `platform`, ALICE deciding as `ops-lead`.
fn feishu_config(platform: &OpenPlatform, settings: &str) -> String {
    format!(
        "approval:\n  {settings}\n  channels:\n    - feishu:\n        base_url: {}\n        \
         app_id: {APP_ID}\n        app_secret: \"${{FEISHU_APP_SECRET}}\"\n        \
         verification_token: \"${{FEISHU_VERIFICATION_TOKEN}}\"\n        \
         encrypt_key: \"${{FEISHU_ENCRYPT_KEY}}\"\n        receive_id_type: open_id\n        \
         receive_id: ou_ops_room\n        approvers: {{{ALICE}: ops-lead}}\n",
        platform.base_url()
    )
}

async fn eventually<T, F, Fut>(what: &str, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let start = Instant::now();
    loop {
        if let Some(found) = probe().await {
            return found;
        }
        assert!(start.elapsed() < PATIENCE, "gave up waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A run's event stream and the events read from it so far.
struct Watch {
    stream: reqwest::Response,
    buffer: String,
    seen: Vec<(String, u64, Value)>,
}

impl Watch {
    /// Reads on until an event `name` (`false` when the stream ended first).
    async fn until(&mut self, name: &str) -> bool {
        read_until(&mut self.stream, &mut self.buffer, name, &mut self.seen).await
    }
}

/// Starts a run of `ops` and watches it until its call waits for approval: the run's id,
/// the watch, and the request's id.
async fn paused_run(served: &Served) -> (String, Watch, String) {
    let run_id = start_run(served).await;
    let mut watch = Watch {
        stream: served.events(&run_id, None).await,
        buffer: String::new(),
        seen: Vec::new(),
    };
    assert!(watch.until("approval.waiting").await);
    let id = watch.seen.last().unwrap().2["approval_id"]
        .as_str()
        .unwrap()
        .to_owned();
    (run_id, watch, id)
}

async fn start_run(served: &Served) -> String {
    let (status, created) = served
        .post("/v1/runs", CI, json!({"agent": "ops", "prompt": "go"}))
        .await;
    assert_eq!(status, 201, "{created}");
    created["run_id"].as_str().unwrap().to_owned()
}

/// The card the platform holds for request `id`.
async fn card_of(platform: &OpenPlatform, id: &str) -> Message {
    eventually(&format!("the card of {id}"), || async {
        platform
            .messages()
            .into_iter()
            .find(|m| m.uuid.as_deref() == Some(id))
    })
    .await
}

fn button(message: &Message, label: &str) -> Value {
    feishu::buttons(message.card())
        .into_iter()
        .find(|b| b.label == label)
        .unwrap()
        .value
}

/// Posts a Feishu click on `value` by `open_id`, encrypted and signed: the status, the JSON
/// answer and how long it took.
async fn click(served: &Served, value: &Value, open_id: &str) -> (u16, Value, Duration) {
    let encoded = Callbacks::new(VERIFICATION_TOKEN, Some(ENCRYPT_KEY))
        .click(value, open_id)
        .encode();
    let mut request = served
        .http
        .post(format!("{}/v1/channels/feishu/callback", served.url))
        .body(encoded.body);
    for (name, value) in &encoded.headers {
        request = request.header(name, value);
    }
    let start = Instant::now();
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    let took = start.elapsed();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::Null),
        took,
    )
}

/// The history of request `id`, as `(action, outcome)`.
async fn history(served: &Served, id: &str) -> Vec<(String, String)> {
    let (status, detail) = served.get(&format!("/v1/approvals/{id}"), OPS).await;
    assert_eq!(status, 200, "{detail}");
    detail["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["action"].as_str().unwrap().to_owned(),
                e["outcome"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn count_file(served: &Served) -> Option<String> {
    std::fs::read_to_string(served.path("agents/ws/count.txt")).ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_paused_on_a_feishu_card_is_approved_by_a_click_and_its_tool_runs_once() {
    let platform = feishu::start(APP_ID, APP_SECRET).unwrap();
    let served =
        Served::start_with_env(&feishu_config(&platform, "fail_closed: false"), &FEISHU_ENV);
    let (_, mut watch, id) = paused_run(&served).await;

    // One card, to the configured receiver; its buttons carry id, decision and nonce only.
    let card = card_of(&platform, &id).await;
    assert_eq!(card.receive_id, "ou_ops_room");
    assert_eq!(
        card.card()["header"]["title"]["content"],
        "Approve bash_code_execute_tool?"
    );
    assert!(card.card().to_string().contains("echo ran >> count.txt"));
    let buttons = feishu::buttons(card.card());
    assert_eq!(buttons.len(), 2);
    for b in &buttons {
        let keys: Vec<&String> = b.value.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["decision", "nonce", "request_id"], "{}", b.value);
        assert_eq!(b.value["request_id"], id.as_str());
        assert!(!b.value.to_string().contains("echo"), "{}", b.value);
    }
    assert!(count_file(&served).is_none(), "the tool waits");

    let (status, answer, took) = click(&served, &button(&card, "Approve"), ALICE).await;
    assert_eq!(status, 200, "{answer}");
    assert!(
        took < FEISHU_REPLY_DEADLINE,
        "Feishu drops a reply after 3 s; this one took {took:?}"
    );
    assert_eq!(
        answer["toast"],
        json!({"type": "success", "content": "Approved: bash_code_execute_tool may run."})
    );
    assert!(
        feishu::buttons(&answer["card"]["data"]).is_empty(),
        "{answer}"
    );

    assert!(watch.until("run.ended").await);
    assert_eq!(watch.seen.last().unwrap().2["status"], "completed");
    let decided = watch
        .seen
        .iter()
        .find(|(name, _, _)| name == "approval.decided")
        .unwrap();
    assert_eq!(decided.2["status"], "approved", "{}", decided.2);
    assert_eq!(
        count_file(&served).as_deref(),
        Some("ran\n"),
        "the tool ran once"
    );
    assert_eq!(platform.creates(&id), 1);
    let actions = history(&served, &id).await;
    for row in [
        ("send", "applied"),
        ("approve", "applied"),
        ("click", "applied"),
    ] {
        assert!(
            actions.contains(&(row.0.into(), row.1.into())),
            "{row:?}: {actions:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_server_sends_no_second_card_and_a_click_on_the_first_resumes_the_run() {
    let platform = feishu::start(APP_ID, APP_SECRET).unwrap();
    let mut served =
        Served::start_with_env(&feishu_config(&platform, "fail_closed: false"), &FEISHU_ENV);
    let (run_id, watch, id) = paused_run(&served).await;
    let card = card_of(&platform, &id).await;
    // The send is recorded before the server dies.
    eventually("the send recorded", || async {
        history(&served, &id)
            .await
            .contains(&("send".into(), "applied".into()))
            .then_some(())
    })
    .await;
    let last_seen = watch.seen.last().unwrap().1;
    drop(watch);

    served.kill_and_restart();
    let mut stream = served.events(&run_id, Some(last_seen)).await;
    let (mut buffer, mut after) = (String::new(), Vec::new());
    assert!(read_until(&mut stream, &mut buffer, "approval.waiting", &mut after).await);
    let ask = &after.last().unwrap().2;
    assert_eq!(ask["approval_id"], id.as_str(), "re-attached: {ask}");

    let (status, answer, _) = click(&served, &button(&card, "Approve"), ALICE).await;
    assert_eq!(
        (status, &answer["toast"]["type"]),
        (200, &json!("success")),
        "{answer}"
    );
    assert!(read_until(&mut stream, &mut buffer, "run.ended", &mut after).await);
    assert_eq!(
        after.last().unwrap().2["status"],
        "completed",
        "{:?}",
        names(&after)
    );
    assert_eq!(count_file(&served).as_deref(), Some("ran\n"));
    assert_eq!(platform.creates(&id), 1, "no second card");
    assert_eq!(platform.messages().len(), 1);
    let sends = history(&served, &id)
        .await
        .into_iter()
        .filter(|(action, _)| action == "send")
        .count();
    assert_eq!(sends, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_request_denies_the_call_and_its_card_says_so() {
    let platform = feishu::start(APP_ID, APP_SECRET).unwrap();
    let served =
        Served::start_with_env(&feishu_config(&platform, "timeout_seconds: 2"), &FEISHU_ENV);
    let (_, mut watch, id) = paused_run(&served).await;
    let card = card_of(&platform, &id).await;

    assert!(watch.until("run.ended").await);
    let decided = watch
        .seen
        .iter()
        .find(|(name, _, _)| name == "approval.decided")
        .unwrap();
    assert_eq!(decided.2["status"], "expired", "{}", decided.2);
    assert!(count_file(&served).is_none(), "the call was denied");

    let updated = eventually("the card updated", || async {
        platform.message(&card.message_id)?.updates.last().cloned()
    })
    .await;
    assert!(feishu::buttons(&updated).is_empty(), "{updated}");
    assert_eq!(
        updated["header"]["title"]["content"],
        "Expired: bash_code_execute_tool"
    );
    assert!(
        updated
            .to_string()
            .contains("nobody decided, so the call was denied."),
        "{updated}"
    );
}

/// A server whose Feishu entry names a variable that is not set.
fn without_the_app_secret(platform: &OpenPlatform, settings: &str) -> Served {
    let env: Vec<(&str, &str)> = FEISHU_ENV
        .into_iter()
        .filter(|(name, _)| *name != "FEISHU_APP_SECRET")
        .collect();
    Served::start_with_env(&feishu_config(platform, settings), &env)
}

async fn logged_not_built(served: &Served) {
    let line = eventually("the error logged", || async {
        let log = std::fs::read_to_string(served.path("serve.err")).unwrap();
        log.lines()
            .find(|l| l.contains("approval channel feishu not built"))
            .map(str::to_owned)
    })
    .await;
    assert!(line.contains("ERROR"), "{line}");
    assert!(line.contains("FEISHU_APP_SECRET"), "{line}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unset_secret_is_logged_by_name_and_the_run_waits_for_the_api() {
    let platform = feishu::start(APP_ID, APP_SECRET).unwrap();
    let served = without_the_app_secret(&platform, "fail_closed: false");
    logged_not_built(&served).await;
    let (_, mut watch, id) = paused_run(&served).await;
    eventually("the send refused", || async {
        history(&served, &id)
            .await
            .contains(&("send".into(), "refused".into()))
            .then_some(())
    })
    .await;
    let (status, body) = served
        .post(&format!("/v1/approvals/{id}/approve"), OPS, json!({}))
        .await;
    assert_eq!(status, 200, "{body}");
    assert!(watch.until("run.ended").await);
    assert_eq!(count_file(&served).as_deref(), Some("ran\n"));
    assert!(platform.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_fail_closed_an_unset_secret_denies_the_call_with_a_reason_naming_the_channel() {
    let platform = feishu::start(APP_ID, APP_SECRET).unwrap();
    let served = without_the_app_secret(&platform, "fail_closed: true");
    logged_not_built(&served).await;
    let run_id = start_run(&served).await;
    let mut watch = Watch {
        stream: served.events(&run_id, None).await,
        buffer: String::new(),
        seen: Vec::new(),
    };
    assert!(watch.until("run.ended").await);
    let decided = watch
        .seen
        .iter()
        .find(|(name, _, _)| name == "approval.decided")
        .unwrap_or_else(|| panic!("{:?}", names(&watch.seen)));
    assert_eq!(decided.2["status"], "cancelled", "{}", decided.2);
    let id = decided.2["request_id"].as_str().unwrap();
    let (_, detail) = served.get(&format!("/v1/approvals/{id}"), OPS).await;
    let note = detail["request"]["response_note"].as_str().unwrap();
    assert!(
        note.contains("channel feishu is not available") && note.contains("FEISHU_APP_SECRET"),
        "{note}"
    );
    assert!(count_file(&served).is_none(), "the call was denied");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_paused_on_a_slack_message_is_approved_by_a_click() {
    let api = slack::start(BOT_TOKEN).unwrap();
    let served = Served::start_with_env(
        &format!(
            "approval:\n  channels:\n    - slack: {{base_url: {}, bot_token: \"${{SLACK_BOT_TOKEN}}\", \
             signing_secret: \"${{SLACK_SIGNING_SECRET}}\", channel: C0APPROVALS, \
             approvers: {{{SLACK_ALICE}: ops-lead}}}}\n",
            api.api_url()
        ),
        &[
            ("SLACK_BOT_TOKEN", BOT_TOKEN),
            ("SLACK_SIGNING_SECRET", SIGNING_SECRET),
        ],
    );
    let (_, mut watch, id) = paused_run(&served).await;
    let message = eventually("the Slack message", || async {
        api.messages()
            .into_iter()
            .find(|m| m.body.to_string().contains(&id))
    })
    .await;

    let alice = SlackUser::new(SLACK_ALICE, SIGNING_SECRET);
    let payload = alice
        .press(&message, "tollgate_approve", &api.response_url("run-click"))
        .unwrap();
    let signed = alice.sign_now(&payload);
    let (status, _) = signed
        .post(&format!("{}/v1/channels/slack/interactions", served.url))
        .await
        .unwrap();
    assert_eq!(status, 200);
    let replies = api.wait_for_responses("run-click", 1).await;
    assert_eq!(replies[0]["replace_original"], true, "{replies:?}");

    assert!(watch.until("run.ended").await);
    assert_eq!(watch.seen.last().unwrap().2["status"], "completed");
    assert_eq!(count_file(&served).as_deref(), Some("ran\n"));
    assert_eq!(api.messages().len(), 1);
}
