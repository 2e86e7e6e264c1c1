//! The SSRF guard of http hooks as the egress policy of a sandbox whose network is proxied
//! ([`tollgate_sandbox::Network::Proxy`]): a command reaches over HTTP(S) only what an http
//! hook from the same source could reach.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use ipnet::IpNet;
use tollgate_sandbox::{AdmitFuture, Egress};

use super::resolve::check_all;

/// How long a name may take to resolve.
const LOOKUP_TIMEOUT: Duration = Duration::from_secs(10);

/// Admits a destination when its host (an address, or a name resolved by the system
/// resolver) has only addresses the SSRF guard accepts ([`check_ip`](super::check_ip) with
/// `allow`); the proxy then connects to exactly those addresses.
#[derive(Debug, Clone, Default)]
pub struct GuardedEgress {
    allow: Arc<[IpNet]>,
}

impl GuardedEgress {
    /// The guard with extra allowed networks (admin config's `network.allow_cidrs`, for
    /// trusted sources only).
    pub fn new(allow: &[IpNet]) -> Self {
        Self {
            allow: Arc::from(allow),
        }
    }
}

impl Egress for GuardedEgress {
    fn admit<'a>(&'a self, host: &'a str, port: u16) -> AdmitFuture<'a> {
        Box::pin(async move {
            let addrs: Vec<SocketAddr> = match host.parse::<IpAddr>() {
                Ok(ip) => vec![SocketAddr::new(ip, port)],
                Err(_) => {
                    tokio::time::timeout(LOOKUP_TIMEOUT, tokio::net::lookup_host((host, port)))
                        .await
                        .map_err(|_| format!("`{host}` did not resolve within 10 s"))?
                        .map_err(|e| format!("`{host}` does not resolve: {e}"))?
                        .collect()
                }
            };
            check_all(host, &addrs, &self.allow).map_err(|e| e.to_string())?;
            Ok(addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[tokio::test]
    async fn internal_addresses_are_refused_unless_allowed() {
        let guard = GuardedEgress::default();
        for host in [
            "127.0.0.1",
            "169.254.169.254",
            "10.0.0.1",
            "::1",
            "localhost",
        ] {
            let refused = guard.admit(host, 80).await.unwrap_err();
            assert!(refused.contains("SSRF guard"), "{host}: {refused}");
        }
        let open = GuardedEgress::new(&["127.0.0.0/8".parse().unwrap()]);
        let admitted = open.admit("127.0.0.1", 8080).await.unwrap();
        assert_eq!(admitted, [SocketAddr::from(([127, 0, 0, 1], 8080))]);
        assert!(open.admit("169.254.169.254", 80).await.is_err());
    }
}
