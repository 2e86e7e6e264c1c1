//! The URL an http hook posts to, checked at load time.

use std::net::IpAddr;

use ipnet::IpNet;
use url::{Host, Url};

use super::error::HttpError;
use super::guard::{Reason, allow_advice, check_ip};
use crate::text::redact_url_text;

/// Longest host name DNS can carry (RFC 1035: 253 characters in text form).
const MAX_HOST_LEN: usize = 253;

/// Parses `url` and refuses it when its scheme is not `http` or `https`, it has no host, it
/// carries credentials (`user:password@`: the client would send them as Basic auth, and they
/// would show up wherever the URL is printed), its host name is longer than 253 bytes, it names
/// `localhost` (or a `*.localhost` name, which resolve only to loopback) while the allow-list
/// admits no loopback address, or its host is an IP literal the guard refuses.
///
/// The `url` crate parses hosts the WHATWG way, so every IPv4 notation (`2130706433`,
/// `0x7f.1`, `0177.0.0.1`, `127.1`) comes out as the same [`Host::Ipv4`] and the HTTP client
/// is handed that canonical form; other host names are checked later, in the resolver.
///
/// Errors name the URL only in its redacted form: `scheme://host:port/…`.
pub(super) fn parse(url: &str, allow: &[IpNet]) -> Result<Url, HttpError> {
    let parsed = Url::parse(url).map_err(|e| refused(url, format!("not a valid URL: {e}")))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(refused(
            url,
            format!("scheme `{}` is not http or https", parsed.scheme()),
        ));
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(refused(
            url,
            "credentials in the URL (`user:password@`) are refused; use a signing secret"
                .to_owned(),
        ));
    }
    let ip = match parsed.host() {
        None => return Err(refused(url, "the URL has no host".to_owned())),
        Some(Host::Domain(name)) => {
            check_name(name, allow).map_err(|reason| refused(url, reason))?;
            return Ok(parsed);
        }
        Some(Host::Ipv4(ip)) => IpAddr::V4(ip),
        Some(Host::Ipv6(ip)) => IpAddr::V6(ip),
    };
    check_ip(ip, allow).map_err(|reason| {
        let advice = allow_advice(ip, reason);
        refused(url, format!("{ip} is a {reason}{advice}"))
    })?;
    Ok(parsed)
}

/// The checks a host name gets before any lookup.
fn check_name(name: &str, allow: &[IpNet]) -> Result<(), String> {
    if name.len() > MAX_HOST_LEN {
        return Err(format!(
            "the host name is {} bytes long, over the {MAX_HOST_LEN} DNS allows",
            name.len()
        ));
    }
    let name = name.trim_end_matches('.').to_ascii_lowercase();
    let loopback_allowed = [
        IpAddr::from([127, 0, 0, 1]),
        IpAddr::from([0, 0, 0, 0, 0, 0, 0, 1]),
    ]
    .into_iter()
    .any(|ip| check_ip(ip, allow).is_ok());
    if (name == "localhost" || name.ends_with(".localhost")) && !loopback_allowed {
        let advice = allow_advice(IpAddr::from([127, 0, 0, 1]), Reason::Loopback);
        return Err(format!(
            "`{name}` resolves only to loopback, which the SSRF guard refuses{advice}"
        ));
    }
    Ok(())
}

fn refused(url: &str, reason: String) -> HttpError {
    HttpError::RefusedUrl {
        url: redact_url_text(url),
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
            assert!(
                reason(url).starts_with("127.0.0.1 is a loopback address;"),
                "{url}"
            );
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
            parse("http://hooks.internal.example:9/", &[]).is_ok(),
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

    #[test]
    fn regression_credentials_in_the_url_are_refused_and_not_echoed() {
        let error = parse("http://user:hunter2@example.com/hook?token=SEKRET", &[]).unwrap_err();
        let message = error.to_string();
        assert!(message.contains("credentials"), "{message}");
        assert!(
            !message.contains("hunter2") && !message.contains("SEKRET"),
            "{message}"
        );
        assert!(message.contains("`http://example.com/…`"), "{message}");
        assert!(parse("http://user@example.com/", &[]).is_err());
        assert!(parse("http://:pw@example.com/", &[]).is_err());
    }

    #[test]
    fn regression_refused_urls_are_shown_redacted() {
        let message = parse(
            "http://10.0.0.5:9/services/T000/B000/XXXXSECRETTOKEN?token=SEKRET",
            &[],
        )
        .unwrap_err()
        .to_string();
        assert!(
            !message.contains("SECRETTOKEN") && !message.contains("SEKRET"),
            "{message}"
        );
        assert!(message.contains("`http://10.0.0.5:9/…`"), "{message}");
    }

    #[test]
    fn regression_overlong_host_names_are_refused() {
        let long = format!("http://{}.example.com/", "a".repeat(100_000));
        let message = reason(&long);
        assert!(message.contains("over the 253"), "{message}");
        assert!(reason(&format!("http://{}/", "a".repeat(254))).contains("253"));
    }

    #[test]
    fn regression_localhost_is_refused_at_build_unless_loopback_is_allowed() {
        for url in [
            "http://localhost:9/",
            "http://LocalHost./",
            "http://api.localhost/",
        ] {
            assert!(reason(url).contains("resolves only to loopback"), "{url}");
        }
        let allow = ["127.0.0.0/8".parse().unwrap()];
        assert!(parse("http://localhost:9/", &allow).is_ok());
    }
}
