//! The HTTP client's DNS resolver: host names are resolved here and every address is checked
//! by the SSRF guard before the client may connect to any of them.
//!
//! The client connects only to addresses this resolver returns, so the address checked is the
//! address connected to: a second lookup that answers differently (DNS rebinding) never happens
//! between the check and the connect. IP literals never reach a resolver (the client connects
//! to them directly); they are checked when the hook is built.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use ipnet::IpNet;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};

use super::guard::{Reason, allow_advice, check_ip};

/// Resolves with the system resolver ([`tokio::net::lookup_host`]) and refuses the whole
/// lookup when **any** address is refused by the guard: a name that mixes public and internal
/// addresses is either a rebinding setup or a split-horizon mistake, and which address the
/// client would pick must not decide whether the hook reaches an internal service.
#[derive(Debug, Clone)]
pub(super) struct GuardedResolver {
    allow: Arc<[IpNet]>,
}

/// A host name refused by the SSRF guard at resolution. Surfaces as a `refused` hook failure.
#[derive(Debug, thiserror::Error)]
#[error("`{host}` resolves to {ip}, a {reason}: refused by the SSRF guard{advice}")]
pub(super) struct Refused {
    host: String,
    ip: IpAddr,
    reason: Reason,
    /// How an operator may allow it (see [`allow_advice`]), or empty.
    advice: String,
}

impl GuardedResolver {
    pub(super) fn new(allow: Arc<[IpNet]>) -> Self {
        Self { allow }
    }
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let allow = self.allow.clone();
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let addrs: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            check_all(&host, &addrs, &allow)?;
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}

/// Checks every resolved address; the first refused one refuses the lookup.
pub(super) fn check_all(host: &str, addrs: &[SocketAddr], allow: &[IpNet]) -> Result<(), Refused> {
    for addr in addrs {
        check_ip(addr.ip(), allow).map_err(|reason| Refused {
            host: host.to_owned(),
            ip: addr.ip(),
            reason,
            advice: allow_advice(addr.ip(), reason),
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn addrs(ips: &[&str]) -> Vec<SocketAddr> {
        ips.iter()
            .map(|ip| SocketAddr::new(ip.parse().unwrap(), 0))
            .collect()
    }

    #[test]
    fn one_refused_address_refuses_the_lookup() {
        let mixed = addrs(&["93.184.215.14", "127.0.0.1"]);
        let error = check_all("rebind.example", &mixed, &[]).unwrap_err();
        assert_eq!(
            error.to_string(),
            "`rebind.example` resolves to 127.0.0.1, a loopback address: refused by the SSRF \
             guard; an admin file can allow it for admin and agent-config hooks with \
             `network: {allow_cidrs: [\"127.0.0.0/8\"]}`"
        );
        assert!(
            check_all(
                "ok.example",
                &addrs(&["93.184.215.14", "2606:4700::1"]),
                &[]
            )
            .is_ok()
        );
        let allow = ["127.0.0.0/8".parse().unwrap()];
        assert!(check_all("localhost", &addrs(&["127.0.0.1"]), &allow).is_ok());
        assert!(check_all("localhost", &addrs(&["127.0.0.1", "::1"]), &allow).is_err());
    }

    #[tokio::test]
    async fn localhost_is_refused_in_the_resolver() {
        let resolver = GuardedResolver::new(Arc::from(Vec::new()));
        let error = match resolver.resolve("localhost".parse().unwrap()).await {
            Ok(_) => panic!("localhost was not refused"),
            Err(error) => error,
        };
        assert!(error.downcast_ref::<Refused>().is_some(), "{error}");
    }
}
