//! A proxied network: the only way out is the egress proxy, and its policy decides.

use std::io::{Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tollgate_sandbox::{AdmitFuture, Egress, Network, Policy};

use super::*;

/// Admits loopback destinations on one port only, counting what it was asked.
#[derive(Debug)]
struct OnlyPort {
    port: u16,
    asked: AtomicUsize,
}

impl Egress for OnlyPort {
    fn admit<'a>(&'a self, host: &'a str, port: u16) -> AdmitFuture<'a> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        Box::pin(async move {
            let ip: IpAddr = host
                .parse()
                .map_err(|_| format!("{host} is not an address"))?;
            if port == self.port && ip.is_loopback() {
                Ok(vec![SocketAddr::new(ip, port)])
            } else {
                Err(format!("{host}:{port} is not admitted"))
            }
        })
    }
}

/// An HTTP server answering every request with `body`, on a thread.
fn http_server(body: &'static str) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut stream = stream;
            let mut buf = [0_u8; 4096];
            let _ = stream.read(&mut buf);
            let reply = format!(
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = stream.write_all(reply.as_bytes());
        }
    });
    port
}

#[tokio::test]
async fn a_proxied_sandbox_reaches_what_its_egress_admits_and_nothing_else() {
    let port = http_server("through the proxy");
    let denied = http_server("must not be reached");
    let egress = Arc::new(OnlyPort {
        port,
        asked: AtomicUsize::new(0),
    });
    let work = tempfile::tempdir().unwrap();
    let sb = sandbox(Policy::new(Network::Proxy).writable(work.path())).with_egress(egress.clone());
    let line = format!(
        "curl -sS http://127.0.0.1:{port}/; echo; \
         curl -sS -o /dev/null -w '%{{http_code}}' http://127.0.0.1:{denied}/; echo; \
         curl -sS --noproxy '*' http://127.0.0.1:{port}/ 2>&1 | head -c 80; echo; \
         echo x > /dev/tcp/127.0.0.1/{denied} 2>&1; env | grep -c '^https_proxy='"
    );
    let ran = bash(&sb, work.path(), work.path(), &line).await;
    let lines: Vec<&str> = ran.stdout.lines().collect();
    assert_eq!(
        lines[0], "through the proxy",
        "{}\n{}",
        ran.stdout, ran.stderr
    );
    assert_eq!(lines[1], "403", "{}", ran.stdout);
    assert!(
        lines[2].contains("Failed to connect") || lines[2].contains("Couldn't connect"),
        "{}",
        ran.stdout
    );
    assert_eq!(lines.last(), Some(&"1"));
    assert!(
        ran.stderr.contains("Connection refused") || ran.stderr.contains("unreachable"),
        "{}",
        ran.stderr
    );
    assert_eq!(egress.asked.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn without_an_egress_policy_a_proxied_sandbox_reaches_nothing() {
    let port = http_server("must not be reached");
    let work = tempfile::tempdir().unwrap();
    let sb = sandbox(Policy::new(Network::Proxy).writable(work.path()));
    let line = format!("curl -sS -o /dev/null -w '%{{http_code}}' http://127.0.0.1:{port}/");
    let ran = bash(&sb, work.path(), work.path(), &line).await;
    assert_eq!(ran.stdout, "403", "{}", ran.stderr);
}

#[tokio::test]
async fn https_goes_through_connect_tunnels_admitted_like_the_rest() {
    // A TLS handshake needs no real server to show the tunnel: the CONNECT answer is the
    // proxy's decision.
    let port = http_server("not tls");
    let egress = Arc::new(OnlyPort {
        port,
        asked: AtomicUsize::new(0),
    });
    let work = tempfile::tempdir().unwrap();
    let sb = sandbox(Policy::new(Network::Proxy).writable(work.path())).with_egress(egress);
    let line = format!(
        "curl -sS -v https://127.0.0.1:{port}/ 2>&1 | grep -o 'HTTP/1.1 200 Connection established' ; \
         curl -sS -v https://127.0.0.1:1/ 2>&1 | grep -o 'CONNECT tunnel failed, response 403' | head -1"
    );
    let ran = bash(&sb, work.path(), work.path(), &line).await;
    assert_eq!(
        ran.stdout, "HTTP/1.1 200 Connection established\nCONNECT tunnel failed, response 403\n",
        "{}",
        ran.stderr
    );
}
