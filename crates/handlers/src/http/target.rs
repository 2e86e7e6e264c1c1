//! The URL an http hook posts to, checked at load time.

use std::net::IpAddr;

use ipnet::IpNet;
use url::{Host, Url};

use super::error::HttpError;
use super::guard::check_ip;

/// Parses `url` and refuses it when its scheme is not `http` or `https`, it has no host, or
/// its host is an IP literal the guard refuses.
///
/// The `url` crate parses hosts the WHATWG way, so every IPv4 notation (`2130706433`,
/// `0x7f.1`, `0177.0.0.1`, `127.1`) comes out as the same [`Host::Ipv4`] and the HTTP client
/// is handed that canonical form; host names are checked later, in the resolver.
pub(super) fn parse(url: &str, allow: &[IpNet]) -> Result<Url, HttpError> {
    let parsed = Url::parse(url).map_err(|e| refused(url, format!("not a valid URL: {e}")))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(refused(
            url,
            format!("scheme `{}` is not http or https", parsed.scheme()),
        ));
    }
    let ip = match parsed.host() {
        None => return Err(refused(url, "the URL has no host".to_owned())),
        Some(Host::Domain(_)) => return Ok(parsed),
        Some(Host::Ipv4(ip)) => IpAddr::V4(ip),
        Some(Host::Ipv6(ip)) => IpAddr::V6(ip),
    };
    check_ip(ip, allow).map_err(|reason| refused(url, format!("{ip} is a {reason}")))?;
    Ok(parsed)
}

fn refused(url: &str, reason: String) -> HttpError {
    HttpError::RefusedUrl {
        url: url.to_owned(),
        reason,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn reason(url: &str) -> String {
        match parse(url, &[]) {
            Err(HttpError::RefusedUrl { reason, .. }) => reason,
            other => panic!("{url} was not refused: {other:?}"),
        }
    }

    #[test]
    fn every_ipv4_notation_is_normalized_before_the_check() {
        for url in [
            "http://2130706433/",
            "http://0x7f.1/",
            "http://0177.0.0.1/",
            "http://127.1/",
            "http://0x7f000001/",
            "http://127.0.0.1./",
            "http://%31%32%37.0.0.1/",
            "http://１２７.０.０.１/",
        ] {
            assert_eq!(
                Url::parse(url).unwrap().host(),
                Some(Host::Ipv4([127, 0, 0, 1].into())),
                "{url}"
            );
            assert_eq!(reason(url), "127.0.0.1 is a loopback address", "{url}");
        }
    }

    #[test]
    fn hostile_literals_are_refused_with_the_reason() {
        for (url, expected) in [
            ("http://[::ffff:127.0.0.1]/", "loopback"),
            ("http://[::ffff:7f00:1]:8080/x", "loopback"),
            ("http://0.0.0.0:6379/", "unspecified"),
            ("http://0/", "unspecified"),
            ("http://[::]/", "unspecified"),
            ("http://[::1]/", "loopback"),
            ("http://100.64.0.1/", "CGNAT"),
            ("http://169.254.169.254/latest/meta-data/", "metadata"),
            ("http://[fd00:ec2::254]/latest/meta-data/", "metadata"),
            ("http://10.0.0.5/", "private"),
            ("http://[fe80::1]/", "link-local"),
            ("http://[2002:7f00:1::]/", "6to4"),
            ("http://255.255.255.255/", "broadcast"),
            ("https://224.0.0.1/", "multicast"),
        ] {
            let reason = reason(url);
            assert!(reason.contains(expected), "{url}: {reason}");
        }
    }

    #[test]
    fn only_http_and_https_are_accepted() {
        for url in [
            "file:///etc/passwd",
            "ftp://example.com/",
            "gopher://example.com/",
            "ws://example.com/",
            "data:text/plain,hi",
        ] {
            assert!(reason(url).starts_with("scheme"), "{url}");
        }
        assert!(reason("not a url").starts_with("not a valid URL"));
        assert!(parse("https://hooks.example.com/pre", &[]).is_ok());
        assert!(
            parse("http://localhost:9/", &[]).is_ok(),
            "names are checked later"
        );
    }

    #[test]
    fn the_allow_list_admits_literals() {
        let allow = ["127.0.0.0/8".parse().unwrap()];
        assert!(parse("http://127.0.0.1:8080/hook", &allow).is_ok());
        assert!(parse("http://2130706433/", &allow).is_ok());
        assert!(parse("http://10.0.0.5/", &allow).is_err());
    }
}
