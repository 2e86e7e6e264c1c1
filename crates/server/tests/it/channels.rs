//! What the channel tests share: a server with a Feishu or Slack channel pointed at the
//! platform's stand-in, raw callback posts, and waiting for what the hub does in the
//! background.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tollgate_approval::ManualClock;
use tollgate_standins::feishu::{self, Callbacks, Message, OpenPlatform};
use tollgate_standins::slack::{self, SlackApi, SlackUser};

use crate::{OPS, Server, Setup};

pub const APP_ID: &str = "cli_tollgate_test";
pub const APP_SECRET: &str = "feishu-app-secret-0123";
pub const VERIFICATION_TOKEN: &str = "feishu-verification-token";
pub const ENCRYPT_KEY: &str = "feishu-encrypt-key-4567";
/// Decides as `ops-lead`, an approver of the requests these tests file.
pub const ALICE: &str = "ou_alice";
/// Decides as `dba`, who is not.
pub const BOB: &str = "ou_bob";
/// Not on the channel's approvers at all.
pub const MALLORY: &str = "ou_mallory";

pub const BOT_TOKEN: &str = "xoxb-standin-bot-token";
pub const SIGNING_SECRET: &str = "slack-signing-secret-89ab";
/// Slack's ids of the same three people.
pub const SLACK_ALICE: &str = "U0ALICE";
pub const SLACK_BOB: &str = "U0BOB";
pub const SLACK_MALLORY: &str = "U0MALLORY";

/// How long a background effect may take before a test gives up on it (a deadline for a
/// hang, not a speed check).
const PATIENCE: Duration = Duration::from_secs(30);

/// The arguments every filed request carries; none of it may travel in a button.
pub fn arguments() -> Value {
    json!({"sql": "DELETE FROM users WHERE id = 3", "secret_marker": "zz-arguments-zz"})
}

/// The `approval:` section with one Feishu channel on `platform`; encrypted callbacks when
/// `encrypt`.
pub fn feishu_yaml(platform: &OpenPlatform, encrypt: bool, fail_closed: bool) -> String {
    let encrypt = if encrypt {
        "\n        encrypt_key: \"${FEISHU_ENCRYPT_KEY}\""
    } else {
        ""
    };
    format!(
        "approval:\n  fail_closed: {fail_closed}\n  channels:\n    - feishu:\n        \
         base_url: {}\n        app_id: {APP_ID}\n        \
         app_secret: \"${{FEISHU_APP_SECRET}}\"\n        \
         verification_token: \"${{FEISHU_VERIFICATION_TOKEN}}\"{encrypt}\n        \
         receive_id_type: open_id\n        receive_id: ou_ops_room\n        \
         approvers: {{{ALICE}: ops-lead, {BOB}: dba}}\n",
        platform.base_url()
    )
}

/// The variables the Feishu entry reads.
pub fn feishu_env() -> HashMap<String, String> {
    HashMap::from([
        ("FEISHU_APP_SECRET".into(), APP_SECRET.into()),
        (
            "FEISHU_VERIFICATION_TOKEN".into(),
            VERIFICATION_TOKEN.into(),
        ),
        ("FEISHU_ENCRYPT_KEY".into(), ENCRYPT_KEY.into()),
    ])
}

/// A server with an encrypted Feishu channel, the platform it talks to, and the platform's
/// side of callbacks.
pub struct WithFeishu {
    pub server: Server,
    pub platform: OpenPlatform,
    pub callbacks: Callbacks,
}

impl WithFeishu {
    pub async fn start(clock: Option<Arc<ManualClock>>) -> Self {
        let platform = feishu::start(APP_ID, APP_SECRET).unwrap();
        let server = Server::start_setup(Setup {
            extra: feishu_yaml(&platform, true, false),
            env: feishu_env(),
            clock,
        })
        .await;
        Self {
            server,
            platform,
            callbacks: Callbacks::new(VERIFICATION_TOKEN, Some(ENCRYPT_KEY)),
        }
    }

    /// The callback URL of `server`.
    pub fn callback_url(server: &Server) -> String {
        format!("{}/v1/channels/feishu/callback", server.url)
    }

    /// Files a request `ops-lead` may decide and waits for its card; the request id and the
    /// card's message.
    pub async fn file_and_wait_for_card(&self) -> (String, Message) {
        let id = self.server.file(arguments(), &["ops-lead"]).await;
        let message = self.card_of(&id).await;
        (id, message)
    }

    /// The message created for request `id` (its `uuid`), once the platform has it and the
    /// server has recorded it as sent.
    pub async fn card_of(&self, id: &str) -> Message {
        let message = self.created_for(id).await;
        sent(&self.server, id, "feishu", &message.message_id).await;
        message
    }

    /// The message created for request `id`, once the platform has it (the server may not
    /// know yet).
    pub async fn created_for(&self, id: &str) -> Message {
        eventually(&format!("a card for {id}"), || async {
            self.platform
                .messages()
                .into_iter()
                .find(|m| m.uuid.as_deref() == Some(id))
        })
        .await
    }

    /// The value of the button labelled `label` on the card of `message`.
    pub fn button(message: &Message, label: &str) -> Value {
        feishu::buttons(message.card())
            .into_iter()
            .find(|b| b.label == label)
            .unwrap_or_else(|| panic!("no {label} button on {}", message.card()))
            .value
    }
}

/// A server with a Slack channel, the Web API it talks to, and three Slack users.
pub struct WithSlack {
    pub server: Server,
    pub api: SlackApi,
}

impl WithSlack {
    pub async fn start(clock: Option<Arc<ManualClock>>) -> Self {
        let api = slack::start(BOT_TOKEN).unwrap();
        let server = Server::start_setup(Setup {
            extra: format!(
                "approval:\n  channels:\n    - slack:\n        base_url: {}\n        \
                 bot_token: \"${{SLACK_BOT_TOKEN}}\"\n        \
                 signing_secret: \"${{SLACK_SIGNING_SECRET}}\"\n        channel: C0APPROVALS\n        \
                 approvers: {{{SLACK_ALICE}: ops-lead, {SLACK_BOB}: dba}}\n",
                api.api_url()
            ),
            env: HashMap::from([
                ("SLACK_BOT_TOKEN".into(), BOT_TOKEN.into()),
                ("SLACK_SIGNING_SECRET".into(), SIGNING_SECRET.into()),
            ]),
            clock,
        })
        .await;
        Self { server, api }
    }

    pub fn user(id: &str) -> SlackUser {
        SlackUser::new(id, SIGNING_SECRET)
    }

    /// The interactions URL of the server.
    pub fn url(&self) -> String {
        format!("{}/v1/channels/slack/interactions", self.server.url)
    }

    /// Files a request `ops-lead` may decide and waits for its message; the request id and
    /// the message.
    pub async fn file_and_wait_for_message(&self) -> (String, slack::PostedMessage) {
        let id = self.server.file(arguments(), &["ops-lead"]).await;
        let message = eventually(&format!("a Slack message for {id}"), || async {
            self.api
                .messages()
                .into_iter()
                .find(|m| m.body.to_string().contains(&id))
        })
        .await;
        let message_id = format!("{}:{}", message.channel, message.ts);
        sent(&self.server, &id, "slack", &message_id).await;
        (id, message)
    }
}

/// Waits until `server` has recorded request `id`'s message on `channel` as `message_id`.
async fn sent(server: &Server, id: &str, channel: &str, message_id: &str) {
    eventually(&format!("{id} recorded as sent on {channel}"), || async {
        let row = server.store.channel_message(id, channel).await.unwrap()?;
        (row.message_id.as_deref() == Some(message_id)).then_some(())
    })
    .await;
}

/// Waits until `probe` returns something; panics after [`PATIENCE`].
pub async fn eventually<T, F, Fut>(what: &str, mut probe: F) -> T
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

/// Posts `body` with `headers` to `url`: the status, the body as JSON (`Null` when empty or
/// not JSON) and how long the answer took.
pub async fn post(
    url: &str,
    headers: &[(String, String)],
    body: Vec<u8>,
) -> (u16, Value, Duration) {
    let mut request = reqwest::Client::new().post(url).body(body);
    for (name, value) in headers {
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

/// `GET /v1/approvals/{id}`: the request and its history.
pub async fn detail(server: &Server, id: &str) -> (Value, Vec<Value>) {
    let response = reqwest::Client::new()
        .get(format!("{}/v1/approvals/{id}", server.url))
        .bearer_auth(OPS)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 200);
    let body: Value = serde_json::from_str(&response.text().await.unwrap()).unwrap();
    let history = body["history"].as_array().unwrap().clone();
    (body["request"].clone(), history)
}

/// `(action, outcome)` of each history row, in order.
pub fn actions(history: &[Value]) -> Vec<(String, String)> {
    history
        .iter()
        .map(|e| {
            (
                e["action"].as_str().unwrap().to_owned(),
                e["outcome"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// How many history rows are transitions (a status changed).
pub fn transitions(history: &[Value]) -> usize {
    history
        .iter()
        .filter(|e| e["from_status"] != e["to_status"])
        .count()
}

/// `POST /v1/approvals/{id}/approve` as `ops-lead`: the status and body.
pub async fn approve_via_api(server: &Server, id: &str) -> (u16, Value) {
    let response = reqwest::Client::new()
        .post(format!("{}/v1/approvals/{id}/approve", server.url))
        .bearer_auth(OPS)
        .header("content-type", "application/json")
        .body("{}")
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}
