//! How fast `tollgate serve` answers a Feishu/Lark card click, whose reply the platform drops
//! after 3 s.
//!
//! ```text
//! cargo build --release -p tollgate --bin tollgate --example feishu_callback_latency
//! target/release/examples/feishu_callback_latency            # 1000 clicks
//! target/release/examples/feishu_callback_latency --quick    # 100
//! ```
//!
//! Starts the Feishu open platform's stand-in in this process and `tollgate serve` (the
//! binary built beside this example, or `$TOLLGATE_BIN`) on 127.0.0.1, with a SQLite
//! database in a temporary folder and one Feishu channel with an Encrypt Key. Files the
//! requests through `POST /v1/approvals`, waits until the channel has sent a card for each,
//! then clicks Approve on each card, one click after the other. Each click is built,
//! encrypted (AES-256-CBC) and signed (SHA-256) as the platform does it before the clock
//! starts; the clock runs from sending `POST /v1/channels/feishu/callback` to reading the end
//! of the reply (the toast and the replacement card), over a kept-alive loopback connection.
//! That is the server's whole path (signature, decryption, token, the event id recorded, the
//! nonce, one transition, the click audited, the message marked closed, the reply) plus the
//! loopback round trip. Every click must decide its request. Prints one JSON line:
//! `{"clicks":…,"decided":…,"measured":"…","min_ms":…,"p50_ms":…,"p90_ms":…,"p99_ms":…,
//! "max_ms":…,"target_p99_ms":50}`.

use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use serde::Serialize;
use serde_json::{Value, json};
use tollgate_standins::feishu::{self, Callbacks, Message};

#[allow(dead_code)]
#[path = "support/served.rs"]
mod served;

use served::{CI, Served, ms, percentile};

const APP_ID: &str = "cli_bench";
const APP_SECRET: &str = "bench-app-secret";
const VERIFICATION_TOKEN: &str = "bench-verification-token";
const ENCRYPT_KEY: &str = "bench-encrypt-key";
/// The Feishu user who clicks; decides as `ops-lead`.
const OPERATOR: &str = "ou_bench_approver";
/// Clicks measured; `--quick` makes it 100.
const CLICKS: usize = 1000;
/// Clicks before the measured ones, not counted.
const WARM_UP: usize = 20;
/// The target for the 99th percentile.
const TARGET_P99_MS: u64 = 50;

/// The line printed, in this key order.
#[derive(Serialize)]
struct Report {
    clicks: usize,
    decided: usize,
    measured: &'static str,
    min_ms: f64,
    p50_ms: f64,
    p90_ms: f64,
    p99_ms: f64,
    max_ms: f64,
    target_p99_ms: u64,
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<()> {
    let quick = std::env::args().any(|a| a == "--quick");
    let clicks = if quick { 100 } else { CLICKS };
    let platform = feishu::start(APP_ID, APP_SECRET)?;
    let channel = format!(
        "approval:\n  channels:\n    - feishu: {{base_url: {}, app_id: {APP_ID}, \
         app_secret: \"${{FEISHU_APP_SECRET}}\", verification_token: \"${{FEISHU_TOKEN}}\", \
         encrypt_key: \"${{FEISHU_ENCRYPT_KEY}}\", receive_id_type: open_id, \
         receive_id: ou_bench_room, approvers: {{{OPERATOR}: ops-lead}}}}\n",
        platform.base_url()
    );
    let served = Served::start_with(
        &[],
        &channel,
        &[
            ("FEISHU_APP_SECRET", APP_SECRET),
            ("FEISHU_TOKEN", VERIFICATION_TOKEN),
            ("FEISHU_ENCRYPT_KEY", ENCRYPT_KEY),
        ],
    )?;
    let total = WARM_UP + clicks;
    let mut ids = Vec::with_capacity(total);
    for n in 0..total {
        ids.push(file(&served, n).await?);
    }
    let cards = cards(&platform, &ids).await?;
    let callbacks = Callbacks::new(VERIFICATION_TOKEN, Some(ENCRYPT_KEY));
    let url = format!("{}/v1/channels/feishu/callback", served.url);
    let mut latencies = Vec::with_capacity(clicks);
    let mut decided = 0;
    for (n, card) in cards.iter().enumerate() {
        let value = approve_value(card)?;
        let encoded = callbacks.click(&value, OPERATOR).encode();
        let mut request = served.http.post(&url).body(encoded.body);
        for (name, value) in &encoded.headers {
            request = request.header(name, value);
        }
        let start = Instant::now();
        let response = request.send().await?;
        let status = response.status().as_u16();
        let body = response.bytes().await?;
        let took = start.elapsed();
        let answer: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        if status != 200 || answer["toast"]["type"] != "success" {
            bail!("click {n}: {status} {answer}");
        }
        if n >= WARM_UP {
            latencies.push(took);
            decided += 1;
        }
    }
    latencies.sort_unstable();
    let report = Report {
        clicks,
        decided,
        measured: "POST /v1/channels/feishu/callback sent → reply read (toast + card), one click at a time, encrypted and signed",
        min_ms: ms(latencies.first().copied().unwrap_or_default()),
        p50_ms: ms(percentile(&latencies, 0.50)),
        p90_ms: ms(percentile(&latencies, 0.90)),
        p99_ms: ms(percentile(&latencies, 0.99)),
        max_ms: ms(latencies.last().copied().unwrap_or_default()),
        target_p99_ms: TARGET_P99_MS,
    };
    println!("{}", serde_json::to_string(&report)?);
    Ok(())
}

/// Files request number `n` through the API (the runner's token); its id.
async fn file(served: &Served, n: usize) -> Result<String> {
    let body = json!({
        "agent": "bench", "session_id": "bench-session", "tool_name": "sql_execute",
        "tool_use_id": format!("call-{n}"), "arguments": {"sql": format!("DELETE FROM t WHERE id = {n}")},
        "reasons": ["calls of `sql_execute` need confirmation"], "approvers": ["ops-lead"],
        "timeout_seconds": 3600,
    });
    let (status, filed) = served.post("/v1/approvals", CI, &body).await?;
    if status != 201 {
        bail!("filing {n}: {status} {filed}");
    }
    match filed["request"]["id"].as_str() {
        Some(id) => Ok(id.to_owned()),
        None => bail!("no request id in {filed}"),
    }
}

/// The card of each request, in order, once the channel has sent them all.
async fn cards(platform: &feishu::OpenPlatform, ids: &[String]) -> Result<Vec<Message>> {
    let start = Instant::now();
    loop {
        let messages = platform.messages();
        if messages.len() >= ids.len() {
            return ids
                .iter()
                .map(|id| {
                    messages
                        .iter()
                        .find(|m| m.uuid.as_deref() == Some(id))
                        .cloned()
                        .ok_or_else(|| anyhow::anyhow!("no card for {id}"))
                })
                .collect();
        }
        if start.elapsed() > Duration::from_secs(300) {
            bail!("{} of {} cards sent after 5 min", messages.len(), ids.len());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The value of a card's Approve button.
fn approve_value(card: &Message) -> Result<Value> {
    feishu::buttons(card.card())
        .into_iter()
        .find(|b| b.label == "Approve")
        .map(|b| b.value)
        .ok_or_else(|| anyhow::anyhow!("no Approve button on {}", card.message_id))
}
