//! Compression where it helps: JSON lists shrink with gzip; small bodies and event streams
//! are sent as they are.

use serde_json::json;

use crate::{OPS, Server};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lists_are_gzipped_for_clients_that_ask_and_small_bodies_are_not() {
    let server = Server::start(None).await;
    for n in 0..20 {
        server
            .file(json!({"sql": format!("DELETE FROM t WHERE id = {n}")}), &[])
            .await;
    }
    // reqwest here has no gzip decoder: the raw answer shows what the server sent.
    let http = reqwest::Client::new();
    let list = http
        .get(format!("{}/v1/approvals?status=all", server.url))
        .bearer_auth(OPS)
        .header("accept-encoding", "gzip")
        .send()
        .await
        .unwrap();
    assert_eq!(list.status().as_u16(), 200);
    assert_eq!(
        list.headers()
            .get("content-encoding")
            .map(|v| v.to_str().unwrap()),
        Some("gzip")
    );
    let body = list.bytes().await.unwrap();
    assert_eq!(&body[..2], &[0x1f, 0x8b], "a gzip stream");

    let plain = http
        .get(format!("{}/v1/approvals?status=all", server.url))
        .bearer_auth(OPS)
        .send()
        .await
        .unwrap();
    assert!(plain.headers().get("content-encoding").is_none());
    let text = plain.text().await.unwrap();
    assert!(text.contains("DELETE FROM t WHERE id = 19"), "{text}");

    let health = http
        .get(format!("{}/healthz", server.url))
        .header("accept-encoding", "gzip")
        .send()
        .await
        .unwrap();
    assert!(health.headers().get("content-encoding").is_none());
}
