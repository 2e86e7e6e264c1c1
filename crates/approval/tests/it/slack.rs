//! The Slack channel against the Slack stand-in over real HTTP: the message it posts, how it
//! reports Slack's failures, the final message, the configuration; the interaction checks are
//! in `slack/inbound.rs`.

mod inbound;

use std::collections::BTreeMap;

use serde_json::{Value, json};
use tollgate_approval::channel::slack::{
    APPROVE_ACTION, REJECT_ACTION, Slack, SlackApprovers, SlackConfig,
};
use tollgate_approval::channel::{Answer, Channel, ChannelError, Click, ClickOutcome};
use tollgate_approval::{Request, Status};
use tollgate_standins::slack::{self, Fault, SlackApi};

const TOKEN: &str = "xoxb-standin-bot-token";
const SECRET: &str = "8f742231b10e8888abcd99yyyzzz85a5";
const CHANNEL: &str = "C0APPROVALS";
const ALICE: &str = "U0ALICE";
const NONCE: &str = "n0nce-4f1c";
/// 2026-12-01T21:29:27.123Z.
const CREATED: i64 = 1_796_160_567_123;

fn config(base_url: &str) -> SlackConfig {
    SlackConfig {
        base_url: base_url.to_owned(),
        bot_token: TOKEN.to_owned(),
        signing_secret: SECRET.to_owned(),
        channel: CHANNEL.to_owned(),
        approvers: SlackApprovers::Names(BTreeMap::from([(ALICE.to_owned(), "alice".to_owned())])),
        agents: Vec::new(),
        tools: Vec::new(),
    }
}

fn channel(api: &SlackApi) -> Slack {
    Slack::new(config(&api.api_url())).unwrap()
}

/// A pending request whose every text tries to ping the channel or a user.
fn request() -> Request {
    Request {
        id: "cr_01JFSLACK0000000000000000".into(),
        idempotency_key: "[]".into(),
        run_id: "run_1".into(),
        session_id: "s1".into(),
        agent: "ops <!here>".into(),
        tool_name: "sql_execute".into(),
        tool_call_id: "call_1".into(),
        arguments: json!({"sql": "DELETE FROM orders -- <!channel> <@U123> & <https://evil.example|click>"}),
        args_hash: "0".repeat(64),
        reasons: vec!["calls of `sql_execute` need confirmation <!everyone>".into()],
        asked_by: "permission_gate".into(),
        approvers: vec!["alice".into()],
        status: Status::Pending,
        channel: None,
        channel_message_id: None,
        created_at: CREATED,
        expires_at: CREATED + 600_000,
        responded_at: None,
        responded_by: None,
        response_note: None,
        edited_arguments: None,
        edited_args_hash: None,
        consumed_at: None,
        finished_at: None,
    }
}

fn ended(status: Status, by: Option<&str>, via: &str) -> Request {
    Request {
        status,
        responded_at: Some(CREATED + 60_000),
        responded_by: by.map(str::to_owned),
        channel: Some(via.to_owned()),
        ..request()
    }
}

/// The buttons of an actions block in `blocks`.
fn buttons(blocks: &Value) -> Vec<Value> {
    blocks
        .as_array()
        .unwrap()
        .iter()
        .filter(|block| block["type"] == "actions")
        .flat_map(|block| block["elements"].as_array().unwrap().clone())
        .collect()
}

#[tokio::test]
async fn send_posts_two_buttons_whose_values_carry_only_id_verdict_and_nonce() {
    let api = slack::start(TOKEN).unwrap();
    let request = request();
    let id = channel(&api).send(&request, NONCE).await.unwrap();

    let messages = api.messages();
    assert_eq!(messages.len(), 1);
    assert_eq!(id, format!("{CHANNEL}:{}", messages[0].ts));
    let call = &api.calls("chat.postMessage")[0];
    assert_eq!(
        call.header("authorization"),
        Some(format!("Bearer {TOKEN}").as_str())
    );
    let body = call.json.as_ref().unwrap();
    assert_eq!(body["channel"], CHANNEL);
    assert!(body["text"].as_str().unwrap().contains("sql_execute"));

    let buttons = buttons(&body["blocks"]);
    assert_eq!(buttons.len(), 2, "{buttons:?}");
    let ids: Vec<&str> = buttons
        .iter()
        .map(|b| b["action_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [APPROVE_ACTION, REJECT_ACTION]);
    assert_eq!(buttons[0]["style"], "primary");
    assert_eq!(buttons[1]["style"], "danger");
    for (button, decision) in buttons.iter().zip(["approve", "reject"]) {
        let text = button["value"].as_str().unwrap();
        assert!(text.len() <= 2000);
        let value: Value = serde_json::from_str(text).unwrap();
        assert_eq!(
            value,
            json!({"request": request.id, "decision": decision, "nonce": NONCE})
        );
        assert!(
            !text.contains("DELETE") && !text.contains("orders"),
            "{text}"
        );
    }
}

#[tokio::test]
async fn request_text_is_escaped_so_nobody_is_pinged_and_no_link_is_made() {
    let api = slack::start(TOKEN).unwrap();
    channel(&api).send(&request(), NONCE).await.unwrap();
    let raw = &api.calls("chat.postMessage")[0].body;
    for hostile in [
        "<!channel>",
        "<@U123>",
        "<!here>",
        "<!everyone>",
        "<https://evil",
    ] {
        assert!(
            !raw.contains(hostile),
            "{hostile} reached Slack unescaped: {raw}"
        );
    }
    for shown in [
        "&lt;!channel&gt;",
        "&lt;@U123&gt;",
        "&amp;",
        "&lt;!everyone&gt;",
        "ops &lt;!here&gt;",
    ] {
        assert!(raw.contains(shown), "{shown} missing from {raw}");
    }
}

#[tokio::test]
async fn a_request_beyond_slacks_limits_is_cut_to_fit_them() {
    let api = slack::start(TOKEN).unwrap();
    let huge = Request {
        agent: "a".repeat(5000),
        tool_name: "<".repeat(400),
        arguments: json!({"sql": "<&>".repeat(10_000)}),
        reasons: (0..60)
            .map(|i| format!("reason {i} {}", "&".repeat(500)))
            .collect(),
        asked_by: ">".repeat(1000),
        ..request()
    };
    // The stand-in refuses blocks beyond Block Kit's limits with `invalid_blocks`.
    let slack = channel(&api);
    slack.send(&huge, NONCE).await.unwrap();
    let id = format!("{CHANNEL}:{}", api.messages()[0].ts);
    let mut approved = ended(Status::Approved, Some("alice"), "web");
    approved.response_note = Some("<".repeat(5000));
    approved.edited_arguments = Some(json!({"sql": ">".repeat(10_000)}));
    let approved = Request {
        arguments: huge.arguments.clone(),
        reasons: huge.reasons.clone(),
        ..approved
    };
    slack.update(&approved, &id).await.unwrap();
    let blocks = api.calls("chat.postMessage")[0].json.as_ref().unwrap()["blocks"].to_string();
    assert!(blocks.contains("… and 50 more"), "{blocks}");
}

#[tokio::test]
async fn rate_limits_and_server_errors_are_transient_and_the_next_send_goes_through() {
    let api = slack::start(TOKEN).unwrap();
    let slack = channel(&api);
    api.fail_next(Fault::RateLimited {
        retry_after_seconds: 7,
    });
    api.fail_next(Fault::Status(503));
    api.fail_next(Fault::Error("internal_error".into()));

    let error = slack.send(&request(), NONCE).await.unwrap_err();
    assert!(error.is_transient(), "{error:?}");
    assert!(error.to_string().contains("retry after 7 s"), "{error}");
    let error = slack.send(&request(), NONCE).await.unwrap_err();
    assert!(
        error.is_transient() && error.to_string().contains("503"),
        "{error:?}"
    );
    let error = slack.send(&request(), NONCE).await.unwrap_err();
    assert!(
        error.is_transient() && error.to_string().contains("internal_error"),
        "{error:?}"
    );

    slack.send(&request(), NONCE).await.unwrap();
    assert_eq!(api.messages().len(), 1);
}

#[tokio::test]
async fn slack_refusals_are_rejected_with_their_error_code() {
    let api = slack::start(TOKEN).unwrap();
    api.fail_next(Fault::Error("channel_not_found".into()));
    let error = channel(&api).send(&request(), NONCE).await.unwrap_err();
    assert!(
        matches!(&error, ChannelError::Rejected(m) if m.contains("channel_not_found")),
        "{error:?}"
    );

    let wrong_token = Slack::new(SlackConfig {
        bot_token: "xoxb-another".into(),
        ..config(&api.api_url())
    })
    .unwrap();
    let error = wrong_token.send(&request(), NONCE).await.unwrap_err();
    assert!(
        matches!(&error, ChannelError::Rejected(m) if m.contains("invalid_auth")),
        "{error:?}"
    );
    assert!(!error.to_string().contains("xoxb"), "{error}");
    assert!(api.messages().is_empty());
}

#[tokio::test]
async fn an_unreachable_slack_is_transient() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let slack = Slack::new(config(&format!("http://127.0.0.1:{port}/api"))).unwrap();
    let error = slack.send(&request(), NONCE).await.unwrap_err();
    assert!(error.is_transient(), "{error:?}");
}

/// Posts the request's message, then ends the request `ended` and updates the message.
async fn updated(ended: Request) -> (Value, String) {
    let api = slack::start(TOKEN).unwrap();
    let slack = channel(&api);
    let id = slack.send(&request(), NONCE).await.unwrap();
    slack.update(&ended, &id).await.unwrap();
    let call = api.calls("chat.update").pop().unwrap();
    let body = call.json.unwrap();
    assert_eq!(
        format!(
            "{}:{}",
            body["channel"].as_str().unwrap(),
            body["ts"].as_str().unwrap()
        ),
        id
    );
    assert!(
        buttons(&body["blocks"]).is_empty(),
        "a final message has no buttons"
    );
    (body.clone(), body["blocks"].to_string())
}

#[tokio::test]
async fn update_replaces_the_message_with_how_the_request_ended() {
    let (body, blocks) = updated(ended(Status::Approved, Some("alice"), "web")).await;
    assert!(
        blocks.contains("Approved by <@U0ALICE> at 2026-12-01T21:30:27.123Z (via web)"),
        "{blocks}"
    );
    assert!(body["text"].as_str().unwrap().contains("Approved"));

    let mut rejected = ended(Status::Rejected, Some("bob"), "cli");
    rejected.response_note = Some("use <!channel> staging".into());
    let (_, blocks) = updated(rejected).await;
    assert!(blocks.contains("Rejected by bob at"), "{blocks}");
    assert!(blocks.contains("use &lt;!channel&gt; staging"), "{blocks}");

    let (_, blocks) = updated(ended(Status::Expired, Some("timeout"), "timeout")).await;
    assert!(
        blocks.contains("Expired at 2026-12-01T21:30:27.123Z"),
        "{blocks}"
    );

    let (_, blocks) = updated(ended(Status::Cancelled, Some("me"), "cli")).await;
    assert!(blocks.contains("Cancelled by me at"), "{blocks}");
}

#[tokio::test]
async fn update_refuses_a_pending_request_and_reports_an_unknown_message() {
    let api = slack::start(TOKEN).unwrap();
    let slack = channel(&api);
    let error = slack
        .update(&request(), &format!("{CHANNEL}:1.2"))
        .await
        .unwrap_err();
    assert!(matches!(error, ChannelError::Rejected(_)), "{error:?}");
    assert!(api.calls("chat.update").is_empty());

    let approved = ended(Status::Approved, Some("alice"), "slack");
    let error = slack
        .update(&approved, &format!("{CHANNEL}:1.2"))
        .await
        .unwrap_err();
    assert!(
        matches!(&error, ChannelError::Rejected(m) if m.contains("message_not_found")),
        "{error:?}"
    );
    let error = slack.update(&approved, "no-colon").await.unwrap_err();
    assert!(matches!(error, ChannelError::Rejected(_)), "{error:?}");
}

fn click(api: &SlackApi, response: &str) -> Click {
    Click {
        event_id: "trigger-1".into(),
        request_id: request().id,
        approve: true,
        nonce: NONCE.into(),
        operator: ALICE.into(),
        operator_aliases: Vec::new(),
        message_id: None,
        response_url: Some(api.response_url(response)),
    }
}

const EMPTY_200: Answer = Answer {
    status: 200,
    body: None,
};

#[tokio::test]
async fn a_decided_click_replaces_the_message_through_its_response_url() {
    let api = slack::start(TOKEN).unwrap();
    let slack = channel(&api);
    let outcome = ClickOutcome::Decided(ended(Status::Approved, Some("alice"), "slack"));
    assert_eq!(slack.answer(&click(&api, "r1"), &outcome).await, EMPTY_200);

    let posted = api.wait_for_responses("r1", 1).await;
    assert_eq!(posted.len(), 1, "{posted:?}");
    assert_eq!(posted[0]["replace_original"], true);
    let blocks = posted[0]["blocks"].to_string();
    assert!(
        blocks.contains("Approved by <@U0ALICE> at 2026-12-01T21:30:27.123Z"),
        "{blocks}"
    );
    assert!(!blocks.contains("via slack"), "{blocks}");
    assert!(buttons(&posted[0]["blocks"]).is_empty());
}

#[tokio::test]
async fn a_late_click_keeps_the_final_message_and_tells_the_clicker_alone() {
    let api = slack::start(TOKEN).unwrap();
    let slack = channel(&api);
    let outcome = ClickOutcome::AlreadyDecided(ended(Status::Rejected, Some("alice"), "web"));
    assert_eq!(slack.answer(&click(&api, "r2"), &outcome).await, EMPTY_200);

    let posted = api.wait_for_responses("r2", 2).await;
    assert_eq!(posted.len(), 2, "{posted:?}");
    assert_eq!(posted[0]["replace_original"], true);
    assert!(
        posted[0]["blocks"]
            .to_string()
            .contains("Rejected by <@U0ALICE>")
    );
    assert_eq!(posted[1]["response_type"], "ephemeral");
    assert_eq!(posted[1]["replace_original"], false);
    assert!(
        posted[1]["text"]
            .as_str()
            .unwrap()
            .contains("already decided"),
        "{posted:?}"
    );
}

#[tokio::test]
async fn refused_clicks_get_a_note_only_the_clicker_sees() {
    let api = slack::start(TOKEN).unwrap();
    let slack = channel(&api);
    let cases = [
        (
            "not",
            ClickOutcome::NotApprover(request()),
            "not an approver",
        ),
        ("unknown", ClickOutcome::Unknown, "no longer valid"),
        ("failed", ClickOutcome::Failed, "could not record"),
    ];
    for (id, outcome, says) in cases {
        assert_eq!(slack.answer(&click(&api, id), &outcome).await, EMPTY_200);
        let posted = api.wait_for_responses(id, 1).await;
        assert_eq!(posted.len(), 1, "{id}: {posted:?}");
        assert_eq!(posted[0]["response_type"], "ephemeral");
        assert_eq!(posted[0]["replace_original"], false);
        assert!(
            posted[0]["text"].as_str().unwrap().contains(says),
            "{posted:?}"
        );
        assert!(posted[0].get("blocks").is_none());
    }
}

#[test]
fn approvers_map_user_ids_to_approver_names() {
    let by_map = Slack::new(config("https://slack.com/api")).unwrap();
    assert_eq!(by_map.approver(ALICE), Some("alice".to_owned()));
    assert_eq!(by_map.approver("alice"), None);
    assert_eq!(by_map.approver("U0MALLORY"), None);

    let listed: SlackConfig = serde_json::from_value(json!({
        "bot_token": TOKEN, "signing_secret": SECRET, "channel": CHANNEL,
        "approvers": [ALICE, "W0BOB"],
    }))
    .unwrap();
    assert_eq!(listed.base_url, "https://slack.com/api");
    let by_list = Slack::new(listed).unwrap();
    assert_eq!(by_list.approver("W0BOB"), Some("W0BOB".to_owned()));
    assert_eq!(by_list.approver("U0MALLORY"), None);
    assert_eq!(by_list.kind(), "slack");
}

#[test]
fn configuration_is_checked_and_never_shows_its_secrets() {
    let parse = |extra: Value| {
        let mut raw = json!({"bot_token": TOKEN, "signing_secret": SECRET, "channel": CHANNEL,
                             "approvers": {ALICE: "alice"}, "tools": ["sql_*"]});
        raw.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        serde_json::from_value::<SlackConfig>(raw)
    };
    let config = parse(json!({})).unwrap();
    assert_eq!(config.tools, ["sql_*"]);
    let shown = format!("{:?}", Slack::new(config.clone()).unwrap());
    assert!(!shown.contains(TOKEN) && !shown.contains(SECRET), "{shown}");
    assert!(shown.contains("<redacted>"), "{shown}");

    assert!(parse(json!({"verification_token": "x"})).is_err());
    assert!(parse(json!({"approvers": 3})).is_err());

    let refused = |config: SlackConfig| Slack::new(config).unwrap_err();
    let base = config;
    assert!(
        refused(SlackConfig {
            bot_token: String::new(),
            ..base.clone()
        })
        .contains("bot_token")
    );
    assert!(
        refused(SlackConfig {
            signing_secret: String::new(),
            ..base.clone()
        })
        .contains("signing_secret")
    );
    assert!(
        refused(SlackConfig {
            channel: " ".into(),
            ..base.clone()
        })
        .contains("channel")
    );
    assert!(
        refused(SlackConfig {
            base_url: "ftp://x".into(),
            ..base.clone()
        })
        .contains("base_url")
    );
    let nobody = SlackConfig {
        approvers: SlackApprovers::Ids(Vec::new()),
        ..base.clone()
    };
    assert!(refused(nobody).contains("approvers"));
    let bad_id = SlackConfig {
        approvers: SlackApprovers::Ids(vec!["<!channel>".into()]),
        ..base.clone()
    };
    assert!(refused(bad_id).contains("not a Slack user id"));
    let leaked = refused(SlackConfig {
        bot_token: "xoxb secret with spaces".into(),
        ..base
    });
    assert!(!leaked.contains("secret with spaces"), "{leaked}");
}
