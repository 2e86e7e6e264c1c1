//! Inside a proxied sandbox: `127.0.0.1:3128` on the sandbox's own loopback, relayed to the
//! egress proxy's socket (the runtime's side decides what may be reached).

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::egress::{PROXY_PORT, SOCKET_IN_SANDBOX};

/// Connections relayed at once; more are closed at once.
const MAX_RELAYS: usize = 64;

/// Starts listening and relaying on threads of their own.
pub(super) fn start() -> std::io::Result<()> {
    let listener = TcpListener::bind(("127.0.0.1", PROXY_PORT))?;
    let active = Arc::new(AtomicUsize::new(0));
    std::thread::Builder::new()
        .name("egress".into())
        .spawn(move || {
            for client in listener.incoming().flatten() {
                if active.fetch_add(1, Ordering::SeqCst) >= MAX_RELAYS {
                    active.fetch_sub(1, Ordering::SeqCst);
                    continue;
                }
                let active = Arc::clone(&active);
                let spawned = std::thread::Builder::new().spawn(move || {
                    relay(client);
                    active.fetch_sub(1, Ordering::SeqCst);
                });
                if spawned.is_err() {
                    // The closure (and its decrement) was dropped with the failed spawn.
                    continue;
                }
            }
        })?;
    Ok(())
}

fn relay(client: TcpStream) {
    let Ok(proxy) = UnixStream::connect(SOCKET_IN_SANDBOX) else {
        return;
    };
    let (Ok(client_in), Ok(proxy_out)) = (client.try_clone(), proxy.try_clone()) else {
        return;
    };
    let upstream = std::thread::Builder::new().spawn(move || {
        copy(client_in, proxy_out.try_clone().ok());
        let _ = proxy_out.shutdown(Shutdown::Write);
    });
    copy(proxy, client.try_clone().ok());
    let _ = client.shutdown(Shutdown::Write);
    if let Ok(upstream) = upstream {
        let _ = upstream.join();
    }
}

fn copy(mut from: impl Read, to: Option<impl Write>) {
    if let Some(mut to) = to {
        let _ = std::io::copy(&mut from, &mut to);
    }
}
