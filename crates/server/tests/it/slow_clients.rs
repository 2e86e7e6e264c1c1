//! Clients that connect and do not send a whole request header are disconnected, so idle or
//! trickling connections cannot hold the server's descriptors.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tollgate_server::HEADER_READ_TIMEOUT;

use crate::Server;

/// Reads until the server closes the connection; what it sent, or `None` when it kept the
/// connection open for `limit`.
async fn until_closed(stream: &mut TcpStream, limit: Duration) -> Option<String> {
    let mut received = Vec::new();
    let read = tokio::time::timeout(limit, stream.read_to_end(&mut received)).await;
    read.ok()
        .map(|_| String::from_utf8_lossy(&received).into_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_that_sends_nothing_is_closed() {
    let server = Server::start(None).await;
    let mut idle = TcpStream::connect(server.url.trim_start_matches("http://"))
        .await
        .unwrap();
    let closed = until_closed(&mut idle, HEADER_READ_TIMEOUT * 3).await;
    assert!(closed.is_some(), "an idle connection was kept open");
    // The server still answers.
    let health = reqwest::get(format!("{}/healthz", server.url))
        .await
        .unwrap();
    assert_eq!(health.status(), 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_header_trickled_a_line_at_a_time_is_cut_off() {
    let server = Server::start(None).await;
    let mut slow = TcpStream::connect(server.url.trim_start_matches("http://"))
        .await
        .unwrap();
    slow.write_all(b"GET /healthz HTTP/1.1\r\n").await.unwrap();
    // One more header line every second, never the blank line that ends the header.
    let trickle = async {
        for i in 0.. {
            tokio::time::sleep(Duration::from_secs(1)).await;
            if slow
                .write_all(format!("X-Slow-{i}: a\r\n").as_bytes())
                .await
                .is_err()
            {
                return i;
            }
        }
        unreachable!()
    };
    let lines = tokio::time::timeout(HEADER_READ_TIMEOUT * 3, trickle).await;
    assert!(
        lines.is_ok(),
        "a trickled header was read for {:?}",
        HEADER_READ_TIMEOUT * 3
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kept_alive_connection_serves_requests_until_it_idles() {
    let server = Server::start(None).await;
    let mut client = TcpStream::connect(server.url.trim_start_matches("http://"))
        .await
        .unwrap();
    for _ in 0..2 {
        client
            .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            .await
            .unwrap();
        let mut buffer = vec![0u8; 1024];
        let n = client.read(&mut buffer).await.unwrap();
        assert!(String::from_utf8_lossy(&buffer[..n]).starts_with("HTTP/1.1 200"));
    }
    let closed = until_closed(&mut client, HEADER_READ_TIMEOUT * 3).await;
    assert!(
        closed.is_some(),
        "an idle kept-alive connection was kept open"
    );
}
