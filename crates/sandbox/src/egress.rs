//! The way out of a sandbox whose network is [`Network::Proxy`](crate::Network::Proxy): an
//! HTTP proxy on a Unix socket in the runtime's process, which the sandbox reaches as
//! `http://127.0.0.1:3128` (`http_proxy`, `https_proxy` are set for every command). It serves
//! `CONNECT host:port` (HTTPS and any TLS) and absolute-form `http://` requests, and asks an
//! [`Egress`] policy before every connection: the policy resolves the host and says which
//! addresses may be reached (tollgate's SSRF guard, for one). The connection goes to an address
//! the policy returned, so a name that resolves differently later (DNS rebinding) changes
//! nothing. Anything else (no route exists from inside the sandbox) is unreachable.

use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpStream, UnixListener, UnixStream};

/// The port the proxy listens on inside a sandbox (on its own loopback).
pub const PROXY_PORT: u16 = 3128;

/// Longest request head the proxy reads, in bytes.
const MAX_HEAD: usize = 64 * 1024;

/// A boxed future, as [`Egress::admit`] returns.
pub type AdmitFuture<'a> =
    Pin<Box<dyn Future<Output = Result<Vec<SocketAddr>, String>> + Send + 'a>>;

/// Which destinations a proxied sandbox may reach.
pub trait Egress: Send + Sync + std::fmt::Debug {
    /// Resolves `host:port` and returns the addresses that may be connected to, or why none
    /// may. Called once per connection.
    fn admit<'a>(&'a self, host: &'a str, port: u16) -> AdmitFuture<'a>;
}

/// An egress policy that admits nothing (the default when none is given: fail closed).
#[derive(Debug, Clone, Copy)]
pub struct NoEgress;

impl Egress for NoEgress {
    fn admit<'a>(&'a self, host: &'a str, port: u16) -> AdmitFuture<'a> {
        Box::pin(async move { Err(format!("no egress policy admits {host}:{port}")) })
    }
}

/// A running proxy: its socket, removed (and the proxy stopped) when dropped.
#[derive(Debug)]
pub(crate) struct Proxy {
    dir: tempfile::TempDir,
    task: tokio::task::JoinHandle<()>,
}

impl Proxy {
    /// Starts a proxy for `egress` on a Unix socket in a new private directory.
    pub(crate) fn start(egress: Arc<dyn Egress>) -> std::io::Result<Self> {
        let dir = tempfile::Builder::new()
            .prefix("tollgate-egress-")
            .tempdir()?;
        let listener = UnixListener::bind(dir.path().join("egress.sock"))?;
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let egress = Arc::clone(&egress);
                tokio::spawn(async move {
                    let _ = serve(client, egress.as_ref()).await;
                });
            }
        });
        Ok(Self { dir, task })
    }

    /// The socket's path.
    pub(crate) fn socket(&self) -> PathBuf {
        self.dir.path().join("egress.sock")
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// What a request asks for.
#[derive(Debug, PartialEq, Eq)]
struct Target {
    host: String,
    port: u16,
    /// `CONNECT`: a tunnel. Otherwise the request head to send on, in origin form.
    forward: Option<Vec<u8>>,
}

async fn serve(mut client: UnixStream, egress: &dyn Egress) -> std::io::Result<()> {
    let (head, rest) = read_head(&mut client).await?;
    let target = match parse(&head) {
        Ok(target) => target,
        Err(why) => return refuse(&mut client, "400 Bad Request", &why).await,
    };
    let addrs = match egress.admit(&target.host, target.port).await {
        Ok(addrs) if !addrs.is_empty() => addrs,
        Ok(_) => return refuse(&mut client, "403 Forbidden", "no address admitted").await,
        Err(why) => return refuse(&mut client, "403 Forbidden", &why).await,
    };
    let Ok(mut upstream) = TcpStream::connect(&addrs[..]).await else {
        return refuse(&mut client, "502 Bad Gateway", "cannot connect").await;
    };
    match &target.forward {
        None => {
            client
                .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                .await?
        }
        Some(head) => upstream.write_all(head).await?,
    }
    upstream.write_all(&rest).await?;
    tokio::io::copy_bidirectional(&mut client, &mut upstream).await?;
    Ok(())
}

async fn refuse(client: &mut UnixStream, status: &str, why: &str) -> std::io::Result<()> {
    let body = format!("tollgate sandbox egress: {why}\n");
    let reply = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    client.write_all(reply.as_bytes()).await
}

/// Reads up to the end of the request head; returns the head and whatever came after it.
async fn read_head(client: &mut UnixStream) -> std::io::Result<(Vec<u8>, Vec<u8>)> {
    let mut buf = Vec::with_capacity(4096);
    let mut chunk = [0_u8; 4096];
    loop {
        if let Some(end) = find_end(&buf) {
            let rest = buf.split_off(end);
            return Ok((buf, rest));
        }
        if buf.len() > MAX_HEAD {
            return Err(std::io::Error::other("request head too long"));
        }
        let n = client.read(&mut chunk).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

fn find_end(buf: &[u8]) -> Option<usize> {
    buf.windows(4).position(|w| w == b"\r\n\r\n").map(|i| i + 4)
}

/// The target of a request head: `CONNECT host:port`, or `METHOD http://host[:port]/path`
/// rewritten to origin form with `Connection: close` and no `Proxy-*` headers.
fn parse(head: &[u8]) -> Result<Target, String> {
    let mut headers = [httparse::EMPTY_HEADER; 128];
    let mut request = httparse::Request::new(&mut headers);
    match request.parse(head) {
        Ok(httparse::Status::Complete(_)) => {}
        _ => return Err("not an HTTP request".into()),
    }
    let (Some(method), Some(uri)) = (request.method, request.path) else {
        return Err("not an HTTP request".into());
    };
    if method == "CONNECT" {
        let (host, port) = host_port(uri, None)?;
        return Ok(Target {
            host,
            port,
            forward: None,
        });
    }
    let Some(rest) = uri.strip_prefix("http://") else {
        return Err("only CONNECT and absolute http:// requests are proxied".into());
    };
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let (host, port) = host_port(authority, Some(80))?;
    let path = if path.is_empty() { "/" } else { path };
    let mut out = format!("{method} {path} HTTP/1.1\r\n").into_bytes();
    for header in request.headers.iter() {
        let name = header.name.to_ascii_lowercase();
        if name.starts_with("proxy-") || name == "connection" || name == "keep-alive" {
            continue;
        }
        out.extend_from_slice(header.name.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(header.value);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"Connection: close\r\n\r\n");
    Ok(Target {
        host,
        port,
        forward: Some(out),
    })
}

/// `host:port`, `[v6]:port`, or `host` with `default` port.
fn host_port(authority: &str, default: Option<u16>) -> Result<(String, u16), String> {
    let bad = || format!("bad authority {authority:?}");
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let (host, after) = v6.split_once(']').ok_or_else(bad)?;
        (host, after.strip_prefix(':'))
    } else {
        match authority.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        }
    };
    let port = match port {
        Some(p) => p.parse().map_err(|_| bad())?,
        None => default.ok_or_else(bad)?,
    };
    if host.is_empty() || host.contains(['@', '/', ' ']) {
        return Err(bad());
    }
    Ok((host.to_owned(), port))
}

/// Where the sandbox sees the proxy's socket.
pub(crate) const SOCKET_IN_SANDBOX: &str = "/run/tollgate/egress.sock";

/// The proxy variables every command of a proxied sandbox gets (unless set by the caller).
pub(crate) fn proxy_env() -> [(&'static str, String); 5] {
    let url = format!("http://127.0.0.1:{PROXY_PORT}");
    [
        ("http_proxy", url.clone()),
        ("https_proxy", url.clone()),
        ("HTTP_PROXY", url.clone()),
        ("HTTPS_PROXY", url),
        ("no_proxy", String::new()),
    ]
}

/// Whether `path` is the proxy socket's directory (for tests).
#[cfg(test)]
fn is_socket_dir(path: &std::path::Path) -> bool {
    path.join("egress.sock").exists()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connect_and_absolute_requests_name_their_target() {
        let t =
            parse(b"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n").unwrap();
        assert_eq!(
            (t.host.as_str(), t.port, t.forward),
            ("example.com", 443, None)
        );
        let t = parse(
            b"GET http://[::1]:8080/a?b HTTP/1.1\r\nHost: x\r\nProxy-Authorization: s\r\nConnection: keep-alive\r\n\r\n",
        )
        .unwrap();
        assert_eq!((t.host.as_str(), t.port), ("::1", 8080));
        let head = String::from_utf8(t.forward.unwrap()).unwrap();
        assert_eq!(
            head,
            "GET /a?b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        );
        assert_eq!(parse(b"GET http://h HTTP/1.1\r\n\r\n").unwrap().port, 80);
    }

    #[test]
    fn other_requests_and_bad_authorities_are_refused() {
        for head in [
            &b"GET /local HTTP/1.1\r\n\r\n"[..],
            b"GET https://h/ HTTP/1.1\r\n\r\n",
            b"CONNECT h HTTP/1.1\r\n\r\n",
            b"CONNECT user@h:443 HTTP/1.1\r\n\r\n",
            b"CONNECT h:99999 HTTP/1.1\r\n\r\n",
            b"garbage\r\n\r\n",
        ] {
            assert!(parse(head).is_err(), "{}", String::from_utf8_lossy(head));
        }
    }

    #[tokio::test]
    async fn the_socket_lives_in_a_private_directory_removed_with_the_proxy() {
        let proxy = Proxy::start(Arc::new(NoEgress)).unwrap();
        let socket = proxy.socket();
        let dir = socket.parent().unwrap().to_owned();
        assert!(is_socket_dir(&dir));
        drop(proxy);
        assert!(!dir.exists());
    }
}
