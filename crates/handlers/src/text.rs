//! Text that goes into error messages, logs and side effects: URLs with their secrets left
//! out.

use url::Url;

/// `scheme://host[:port]` of `url`, with `/…` standing for any path, query or fragment, and
/// never the userinfo: the form of a URL that errors, logs and `Debug` output may show.
/// Webhook URLs often carry their credential in the path (`/services/T000/B000/XXXX`) or the
/// query (`?token=…`).
pub(crate) fn redact_url(url: &Url) -> String {
    let host = url.host().map(|h| h.to_string()).unwrap_or_default();
    let port = url.port().map(|p| format!(":{p}")).unwrap_or_default();
    let rest = if url.path() == "/" && url.query().is_none() && url.fragment().is_none() {
        "/"
    } else {
        "/…"
    };
    format!("{}://{host}{port}{rest}", url.scheme())
}

/// [`redact_url`] of a URL given as text; text that does not parse is not shown at all.
pub(crate) fn redact_url_text(url: &str) -> String {
    Url::parse(url.trim()).map_or_else(|_| "<not a valid URL>".to_owned(), |u| redact_url(&u))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn only_scheme_host_and_port_are_shown() {
        for (url, shown) in [
            (
                "http://127.0.0.1:9/services/T000/B000/XXXXSECRETTOKEN?token=SEKRET",
                "http://127.0.0.1:9/…",
            ),
            ("http://user:hunter2@example.com/", "http://example.com/"),
            ("https://example.com", "https://example.com/"),
            ("https://example.com/#frag", "https://example.com/…"),
            ("http://[::1]:8080/x", "http://[::1]:8080/…"),
            ("https://h/v1?api-key=sk-SECRET", "https://h/…"),
        ] {
            assert_eq!(redact_url_text(url), shown, "{url}");
        }
        assert_eq!(redact_url_text("not a url SEKRET"), "<not a valid URL>");
    }
}
