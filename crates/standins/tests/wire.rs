//! The stand-ins over real HTTP, as a client sees them: events, ids, scripts and recordings;
//! Slack's Web API refusals and faults, and the signed clicks of its user; the Feishu
//! platform's tokens, messages and faults, and a callback posted as encoded.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use tollgate_standins::slack::{self, Fault, SlackUser};
use tollgate_standins::{Script, ToolUse, anthropic, feishu, openai};

async fn post(url: &str, body: &Value) -> (u16, String, String) {
    let response = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let kind = response
        .headers()
        .get("content-type")
        .map(|value| value.to_str().unwrap().to_owned())
        .unwrap_or_default();
    (status, kind, response.text().await.unwrap())
}

/// `(event name, data)` of each event in an SSE body.
fn sse_events(body: &str) -> Vec<(String, Value)> {
    body.split("\n\n")
        .filter(|block| !block.trim().is_empty())
        .map(|block| {
            let name = block
                .lines()
                .find_map(|l| l.strip_prefix("event: "))
                .unwrap();
            let data = block
                .lines()
                .find_map(|l| l.strip_prefix("data: "))
                .unwrap();
            (name.to_owned(), serde_json::from_str(data).unwrap())
        })
        .collect()
}

fn claude_request(messages: Value) -> Value {
    json!({"model": "claude-x", "stream": true, "max_tokens": 100, "messages": messages,
           "tools": [{"name": "Bash", "input_schema": {"type": "object"}}]})
}

#[tokio::test]
async fn messages_stream_a_bash_call_then_echo_its_result() {
    let api = anthropic::start(Script::new().shell("echo hi").echo_tool_result()).unwrap();
    let url = format!("{}/v1/messages?beta=true", api.base_url());
    let first = claude_request(json!([{"role": "user", "content": "go"}]));
    let (status, kind, body) = post(&url, &first).await;
    assert_eq!(status, 200);
    assert!(kind.starts_with("text/event-stream"), "{kind}");
    let events = sse_events(&body);
    let names: Vec<&str> = events.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(
        names,
        [
            "message_start",
            "ping",
            "content_block_start",
            "content_block_delta",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop"
        ]
    );
    for (name, data) in &events {
        assert_eq!(data["type"], name.as_str());
    }
    let block = &events[2].1["content_block"];
    assert_eq!(block["type"], "tool_use");
    assert_eq!(block["name"], "Bash");
    let input: String = events[3..5]
        .iter()
        .map(|(_, data)| data["delta"]["partial_json"].as_str().unwrap())
        .collect();
    let input: Value = serde_json::from_str(&input).unwrap();
    assert_eq!(input["command"], "echo hi");
    assert_eq!(events[6].1["delta"]["stop_reason"], "tool_use");

    let id = block["id"].as_str().unwrap();
    let second = claude_request(json!([
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [block]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": "hi\n"}]}
    ]));
    let (_, _, body) = post(&url, &second).await;
    let events = sse_events(&body);
    assert_eq!(
        events[3].1["delta"],
        json!({"type": "text_delta", "text": "hi\n"})
    );
    let (name, message_delta) = &events[events.len() - 2];
    assert_eq!(name, "message_delta");
    assert_eq!(message_delta["delta"]["stop_reason"], "end_turn");

    let requests = api.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].path, "/v1/messages");
    assert_eq!(requests[0].query.as_deref(), Some("beta=true"));
    assert_eq!(requests[1].json.as_ref(), Some(&second));
    let results = anthropic::tool_results(&requests);
    assert_eq!(results.len(), 1);
    assert_eq!(
        (results[0].tool_use_id.as_str(), results[0].text.as_str()),
        (id, "hi\n")
    );
}

#[tokio::test]
async fn messages_play_parallel_tool_calls_and_count_turns_by_assistant_messages() {
    let script = Script::new()
        .tools([
            ToolUse::new("Read", json!({"file_path": "/p/a.txt"})),
            ToolUse::new("Skill", json!({"skill": "deploy"})),
        ])
        .text("first answer")
        .text("second answer");
    let api = anthropic::start(script).unwrap();
    let url = format!("{}/v1/messages", api.base_url());
    let mut request = claude_request(json!([{"role": "user", "content": "go"}]));
    request["tools"] = json!([{"name": "Read"}, {"name": "Skill"}]);
    let (status, _, body) = post(&url, &request).await;
    assert_eq!(status, 200, "{body}");
    let events = sse_events(&body);
    let starts: Vec<&Value> = events
        .iter()
        .filter(|(name, _)| name == "content_block_start")
        .map(|(_, data)| data)
        .collect();
    assert_eq!(starts.len(), 2);
    assert_eq!(starts[0]["index"], 0);
    assert_eq!(starts[1]["index"], 1);
    assert_eq!(starts[1]["content_block"]["name"], "Skill");
    let ids: Vec<&str> = starts
        .iter()
        .map(|s| s["content_block"]["id"].as_str().unwrap())
        .collect();
    assert_ne!(ids[0], ids[1]);

    // A conversation holding one assistant turn gets turn 1, one holding two gets turn 2
    // (an answer a Stop hook sent back counts as a turn).
    let next = |messages: Value| {
        let mut body = claude_request(messages);
        body["stream"] = json!(false);
        body
    };
    let after_tools = next(json!([
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "text", "text": "calling"}]},
    ]));
    let (_, _, body) = post(&url, &after_tools).await;
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap()["content"][0]["text"],
        "first answer"
    );
    let after_feedback = next(json!([
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "text", "text": "calling"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "first answer"}]},
        {"role": "user", "content": "Stop hook feedback: run the tests"},
    ]));
    let (_, _, body) = post(&url, &after_feedback).await;
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap()["content"][0]["text"],
        "second answer"
    );
}

#[tokio::test]
async fn messages_refuse_a_tools_turn_calling_a_tool_not_offered() {
    let api = anthropic::start(Script::new().tools([ToolUse::new("Skill", json!({}))])).unwrap();
    let url = format!("{}/v1/messages", api.base_url());
    let (status, _, body) = post(
        &url,
        &claude_request(json!([{"role": "user", "content": "go"}])),
    )
    .await;
    assert_eq!(status, 400);
    assert!(body.contains("`Skill`"), "{body}");
}

#[tokio::test]
async fn messages_answer_json_when_not_streaming_and_errors_in_the_api_shape() {
    let api = anthropic::start(Script::new().text("done")).unwrap();
    let mut request = claude_request(json!([{"role": "user", "content": "go"}]));
    request["stream"] = json!(false);
    let (status, _, body) = post(&format!("{}/v1/messages", api.base_url()), &request).await;
    assert_eq!(status, 200);
    let message: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        message["content"],
        json!([{"type": "text", "text": "done"}])
    );
    assert_eq!(message["stop_reason"], "end_turn");

    let (status, _, body) = post(&format!("{}/v1/nothing", api.base_url()), &request).await;
    assert_eq!(status, 404);
    let error: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(error["type"], "error");
    assert_eq!(error["error"]["type"], "not_found_error");
    assert_eq!(api.requests()[1].summary(), "POST /v1/nothing -> 404");
}

#[tokio::test]
async fn the_messages_stand_in_answers_claude_codes_startup_calls() {
    let api = anthropic::start(Script::new()).unwrap();
    let client = reqwest::Client::new();
    let hello = client
        .head(format!("{}/api/hello", api.base_url()))
        .send()
        .await
        .unwrap();
    assert_eq!(hello.status().as_u16(), 200);
    let count = json!({"model": "m", "messages": [{"role": "user", "content": "12345678"}]});
    let url = format!("{}/v1/messages/count_tokens", api.base_url());
    let (status, _, body) = post(&url, &count).await;
    assert_eq!(status, 200);
    let tokens: Value = serde_json::from_str(&body).unwrap();
    assert!(tokens["input_tokens"].as_u64().unwrap() > 0, "{body}");
    let models = client
        .get(format!("{}/v1/models", api.base_url()))
        .send()
        .await
        .unwrap();
    let models: Value = serde_json::from_str(&models.text().await.unwrap()).unwrap();
    assert_eq!(models["data"][0]["type"], "model");
}

#[tokio::test]
async fn messages_refuse_a_shell_turn_when_bash_is_not_offered() {
    let api = anthropic::start(Script::new().shell("ls")).unwrap();
    let request = json!({"model": "m", "stream": true, "messages": [], "tools": []});
    let (status, _, body) = post(&format!("{}/v1/messages", api.base_url()), &request).await;
    assert_eq!(status, 400);
    assert!(body.contains("does not offer"), "{body}");
}

fn codex_request(input: Value) -> Value {
    json!({"model": "m", "stream": true, "input": input,
           "tools": [{"type": "function", "name": "exec_command", "parameters": {}}]})
}

#[tokio::test]
async fn responses_stream_an_exec_command_call_then_echo_its_output() {
    let api = openai::start(Script::new().shell("ls").echo_tool_result()).unwrap();
    let url = format!("{}/v1/responses", api.base_url());
    let user = json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]});
    let (status, kind, body) = post(&url, &codex_request(json!([user]))).await;
    assert_eq!(status, 200);
    assert!(kind.starts_with("text/event-stream"), "{kind}");
    let events = sse_events(&body);
    for (index, (name, data)) in events.iter().enumerate() {
        assert_eq!(data["type"], name.as_str());
        assert_eq!(data["sequence_number"], index);
    }
    assert_eq!(events[0].0, "response.created");
    assert_eq!(events.last().unwrap().0, "response.completed");
    let done = events
        .iter()
        .find(|(name, _)| name == "response.output_item.done")
        .map(|(_, data)| data["item"].clone())
        .unwrap();
    assert_eq!(done["type"], "function_call");
    assert_eq!(done["name"], "exec_command");
    assert_eq!(done["arguments"], json!({"cmd": "ls"}).to_string());

    let output =
        json!({"type": "function_call_output", "call_id": done["call_id"], "output": "a.txt"});
    let (_, _, body) = post(&url, &codex_request(json!([user, done, output]))).await;
    let events = sse_events(&body);
    let completed = &events.last().unwrap().1["response"];
    assert_eq!(completed["status"], "completed");
    assert_eq!(completed["output"][0]["content"][0]["text"], "a.txt");

    let outputs = openai::tool_outputs(&api.requests());
    assert_eq!(outputs.len(), 1);
    assert_eq!(outputs[0].call_id, done["call_id"].as_str().unwrap());
    assert_eq!(outputs[0].text, "a.txt");
}

#[tokio::test]
async fn responses_refuse_a_compressed_body() {
    let api = openai::start(Script::new().text("x")).unwrap();
    let response = reqwest::Client::new()
        .post(format!("{}/v1/responses", api.base_url()))
        .header("content-encoding", "zstd")
        .body("(zstd bytes)")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 400);
    let error: Value = serde_json::from_str(&response.text().await.unwrap()).unwrap();
    assert_eq!(error["error"]["type"], "invalid_request_error");
    assert_eq!(api.requests()[0].header("Content-Encoding"), Some("zstd"));
}

/// Slack's worked example in "Verifying requests from Slack": a slash command's body, its
/// timestamp, the signing secret and the signature Slack sent.
const SLACK_DOC_SECRET: &str = "8f742231b10e8888abcd99yyyzzz85a5";
const SLACK_DOC_BODY: &str = "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c";
const SLACK_DOC_SIGNATURE: &str =
    "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503";

#[test]
fn the_slack_user_signs_as_slacks_published_example() {
    let user = SlackUser::new("U2CERLKJA", SLACK_DOC_SECRET);
    let signed = user.sign_body(SLACK_DOC_BODY.to_owned(), 1_531_420_618);
    assert_eq!(signed.timestamp, "1531420618");
    assert_eq!(signed.signature, SLACK_DOC_SIGNATURE);
    assert_ne!(signed.with_bad_signature().signature, SLACK_DOC_SIGNATURE);
}

async fn slack_call(url: &str, token: &str, body: &Value) -> (u16, Option<String>, Value) {
    let response = reqwest::Client::new()
        .post(url)
        .header("authorization", format!("Bearer {token}"))
        .header("content-type", "application/json; charset=utf-8")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let retry = response
        .headers()
        .get("retry-after")
        .map(|v| v.to_str().unwrap().to_owned());
    (
        status,
        retry,
        serde_json::from_str(&response.text().await.unwrap()).unwrap(),
    )
}

#[tokio::test]
async fn slack_checks_the_token_and_the_blocks_and_fails_on_demand() {
    let api = slack::start("xoxb-right").unwrap();
    let post = format!("{}/chat.postMessage", api.api_url());
    let message = json!({"channel": "C1", "text": "hi", "blocks": [
        {"type": "actions", "elements": [{"type": "button", "action_id": "a", "value": "v",
                                          "text": {"type": "plain_text", "text": "Go"}}]}]});

    let (status, _, answer) = slack_call(&post, "xoxb-wrong", &message).await;
    assert_eq!(
        (status, answer),
        (200, json!({"ok": false, "error": "invalid_auth"}))
    );
    let mut too_long = message.clone();
    too_long["blocks"][0]["elements"][0]["value"] = json!("v".repeat(2001));
    let (_, _, answer) = slack_call(&post, "xoxb-right", &too_long).await;
    assert_eq!(answer["error"], "invalid_blocks");

    api.fail_next(Fault::RateLimited {
        retry_after_seconds: 3,
    });
    let (status, retry, answer) = slack_call(&post, "xoxb-right", &message).await;
    assert_eq!(
        (status, retry.as_deref(), &answer["error"]),
        (429, Some("3"), &json!("ratelimited"))
    );
    let (status, _, answer) = slack_call(&post, "xoxb-right", &message).await;
    assert_eq!(
        (status, &answer["ok"], &answer["channel"]),
        (200, &json!(true), &json!("C1"))
    );
    let ts = answer["ts"].as_str().unwrap();
    assert_eq!(api.messages().len(), 1);

    let update = format!("{}/chat.update", api.api_url());
    let (_, _, answer) = slack_call(
        &update,
        "xoxb-right",
        &json!({"channel": "C1", "ts": ts, "text": "done"}),
    )
    .await;
    assert_eq!(answer["ok"], true);
    let (_, _, answer) = slack_call(
        &update,
        "xoxb-right",
        &json!({"channel": "C1", "ts": "9.9", "text": "x"}),
    )
    .await;
    assert_eq!(answer["error"], "message_not_found");
    assert_eq!(api.calls("chat.update").len(), 2);
}

#[tokio::test]
async fn a_slack_user_presses_a_button_and_posts_the_signed_interaction() {
    let api = slack::start("xoxb-right").unwrap();
    let message = json!({"channel": "C1", "text": "hi", "blocks": [
        {"type": "actions", "block_id": "b", "elements": [
            {"type": "button", "action_id": "yes", "value": "42", "style": "primary",
             "text": {"type": "plain_text", "text": "Yes"}}]}]});
    slack_call(
        &format!("{}/chat.postMessage", api.api_url()),
        "xoxb-right",
        &message,
    )
    .await;
    let posted = api.messages().remove(0);
    let user = SlackUser::new("U1", "secret");
    assert!(user.press(&posted, "no", "http://x").is_none());
    let payload = user.press(&posted, "yes", &api.response_url("r")).unwrap();
    assert_eq!(payload["type"], "block_actions");
    assert_eq!(payload["user"]["id"], "U1");
    assert_eq!(payload["container"]["message_ts"], posted.ts.as_str());
    assert_eq!(payload["channel"]["id"], "C1");
    assert_eq!(payload["actions"][0]["value"], "42");
    assert_eq!(payload["actions"][0]["block_id"], "b");
    let again = user.press(&posted, "yes", &api.response_url("r")).unwrap();
    assert_ne!(again["trigger_id"], payload["trigger_id"]);

    // The response_url wants JSON, so the form post is refused, and recorded as sent.
    let signed = user.sign(&payload, 1_800_000_000);
    let (status, _) = signed.post(&api.response_url("r")).await.unwrap();
    assert_eq!(status, 400);
    let sent = api.requests().pop().unwrap();
    assert_eq!(sent.header("x-slack-request-timestamp"), Some("1800000000"));
    assert_eq!(
        sent.header("x-slack-signature"),
        Some(signed.signature.as_str())
    );
    let form: Vec<(String, String)> = url::form_urlencoded::parse(sent.body.as_bytes())
        .into_owned()
        .collect();
    assert_eq!(form.len(), 1);
    assert_eq!(form[0].0, "payload");
    assert_eq!(serde_json::from_str::<Value>(&form[0].1).unwrap(), payload);
}

async fn feishu_call(
    method: reqwest::Method,
    url: &str,
    token: &str,
    body: &Value,
) -> (u16, Value) {
    let response = reqwest::Client::new()
        .request(method, url)
        .bearer_auth(token)
        .header("content-type", "application/json; charset=utf-8")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap())
}

#[tokio::test]
async fn the_feishu_platform_issues_tokens_and_keeps_messages() {
    let platform = feishu::start("cli_a", "secret").unwrap();
    let base = platform.base_url();
    let token_url = format!("{base}/open-apis/auth/v3/tenant_access_token/internal");
    let (status, _, body) = post(&token_url, &json!({"app_id": "cli_a", "app_secret": "no"})).await;
    assert_eq!(status, 400);
    assert_eq!(serde_json::from_str::<Value>(&body).unwrap()["code"], 10014);
    platform.set_token_expire(600);
    let (_, _, body) = post(
        &token_url,
        &json!({"app_id": "cli_a", "app_secret": "secret"}),
    )
    .await;
    let answer: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(answer["code"], 0);
    assert_eq!(answer["expire"], 600);
    let token = answer["tenant_access_token"].as_str().unwrap();

    let create = format!("{base}/open-apis/im/v1/messages?receive_id_type=chat_id");
    let card = json!({"schema": "2.0", "body": {"elements": [{"tag": "button",
        "text": {"tag": "plain_text", "content": "Go"},
        "behaviors": [{"type": "callback", "value": {"k": 1}}]}]}});
    let message = json!({"receive_id": "oc_1", "msg_type": "interactive",
                         "content": card.to_string(), "uuid": "u-1"});
    let post_message = reqwest::Method::POST;
    let (status, first) = feishu_call(post_message.clone(), &create, token, &message).await;
    assert_eq!(status, 200, "{first}");
    let (_, again) = feishu_call(post_message.clone(), &create, token, &message).await;
    let id = first["data"]["message_id"].as_str().unwrap();
    assert_eq!(again["data"]["message_id"], id);
    assert_eq!(platform.messages().len(), 1);
    assert_eq!(platform.creates("u-1"), 2);
    let buttons = feishu::buttons(platform.message(id).unwrap().card());
    assert_eq!(buttons.len(), 1);
    assert_eq!(buttons[0].label, "Go");
    assert_eq!(buttons[0].value, json!({"k": 1}));

    let (status, refused) = feishu_call(post_message.clone(), &create, "t-forged", &message).await;
    assert_eq!(
        (status, refused["code"].clone()),
        (400, json!(feishu::INVALID_TOKEN))
    );
    let not_json = json!({"receive_id": "oc_1", "msg_type": "interactive", "content": "{"});
    let (status, _) = feishu_call(post_message.clone(), &create, token, &not_json).await;
    assert_eq!(status, 400);
    platform.fail_next(502);
    let response = reqwest::Client::new()
        .post(&create)
        .bearer_auth(token)
        .header("content-type", "application/json")
        .body(message.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 502);

    let patch = format!("{base}/open-apis/im/v1/messages/{id}");
    let done = json!({"content": json!({"schema": "2.0", "body": {"elements": []}}).to_string()});
    let (status, _) = feishu_call(reqwest::Method::PATCH, &patch, token, &done).await;
    assert_eq!(status, 200);
    let message = platform.message(id).unwrap();
    assert_eq!(message.updates.len(), 1);
    assert!(feishu::buttons(message.card()).is_empty());
    let missing = format!("{base}/open-apis/im/v1/messages/om_nope");
    let (status, _) = feishu_call(reqwest::Method::PATCH, &missing, token, &done).await;
    assert_eq!(status, 400);
}

#[tokio::test]
async fn a_feishu_callback_is_posted_exactly_as_encoded() {
    let platform = feishu::start("cli_a", "secret").unwrap();
    let delivery = feishu::Callbacks::new("vt", Some("ek")).click(&json!({"k": 1}), "ou_a");
    let encoded = delivery.encode();
    let url = format!("{}/callback", platform.base_url());
    let (status, _) = delivery.post(&url).await.unwrap();
    assert_eq!(status, 404);
    let received = platform.requests().pop().unwrap();
    assert_eq!(received.body.as_bytes(), encoded.body);
    for (name, value) in &encoded.headers {
        assert_eq!(received.header(name), Some(value.as_str()), "{name}");
    }
    assert!(received.json.unwrap().get("encrypt").is_some());
}
