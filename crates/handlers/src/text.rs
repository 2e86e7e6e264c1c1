//! Text that goes into error messages, logs and side effects: URLs with their secrets left
//! out, and remote text with its control characters escaped.

use std::fmt::Write as _;

use url::Url;

/// `text` with every character that could forge or hide a log line escaped the way
/// [`char::escape_default`] writes it (`\n`, `\r`, `\t`, `\u{1b}`, `\u{2028}`): C0 and C1
/// controls and DEL (newlines, carriage returns, ANSI escapes), the Unicode line and paragraph
/// separators U+2028/U+2029, and the bidirectional controls (U+200E, U+200F, U+061C,
/// U+202A–U+202E, U+2066–U+2069). Everything else is kept as is.
///
/// For every excerpt of text a remote server chose (HTTP error bodies, `Location` headers,
/// model answers) that ends up in an error message: those become WARN log lines, side effects
/// and deny reasons. Also what the CLI uses for everything it shows on a terminal.
pub fn escape_controls(text: &str) -> String {
    if !text.chars().any(needs_escape) {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if needs_escape(c) {
            let _ = write!(out, "{}", c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// Serialized JSON text with the characters [`escape_controls`] escapes written as JSON
/// `\uXXXX` escapes, so that JSON printed on a terminal stays valid JSON and can neither move
/// the cursor nor reorder what is shown. serde_json already escapes C0 controls inside strings;
/// DEL, C1 controls, the line separators and the bidirectional controls it writes raw. Raw tab,
/// newline and carriage return can only be JSON whitespace (pretty printing) and are kept; every
/// other such character can only be inside a string, where its escape means the same character,
/// so no value changes.
pub fn escape_controls_json(json: &str) -> String {
    let escaped = |c: char| needs_escape(c) && !matches!(c, '\t' | '\n' | '\r');
    if !json.chars().any(escaped) {
        return json.to_owned();
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if escaped(c) {
            // Every character needs_escape accepts is in the Basic Multilingual Plane.
            let _ = write!(out, "\\u{:04x}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    out
}

fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{2028}'
                | '\u{2029}'
                | '\u{200e}'
                | '\u{200f}'
                | '\u{061c}'
                | '\u{202a}'..='\u{202e}'
                | '\u{2066}'..='\u{2069}'
        )
}

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

/// At most `max` bytes of remote or child-process text for a message: trimmed, cut on a char
/// boundary with a count of what was left out, control characters escaped.
pub(crate) fn excerpt(bytes: &[u8], max: usize) -> String {
    let text = String::from_utf8_lossy(bytes);
    let text = text.trim();
    if text.len() <= max {
        return escape_controls(text);
    }
    let end = text.floor_char_boundary(max);
    format!(
        "{}… [{} more bytes]",
        escape_controls(&text[..end]),
        text.len() - end
    )
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

    #[test]
    fn regression_control_characters_in_remote_text_are_escaped() {
        let forged = "oops\n2099-01-01T00:00:00Z  INFO decision=\"allow\"\r\u{1b}[2K\u{85}\u{2028}\u{202e}\u{2066}x\ty";
        let escaped = escape_controls(forged);
        assert_eq!(
            escaped,
            "oops\\n2099-01-01T00:00:00Z  INFO decision=\"allow\"\\r\\u{1b}[2K\\u{85}\\u{2028}\\u{202e}\\u{2066}x\\ty"
        );
        assert!(!escaped.chars().any(needs_escape));
        assert_eq!(escape_controls("plain é ✓ text"), "plain é ✓ text");
    }

    #[test]
    fn json_keeps_its_values_and_loses_its_raw_controls() {
        let value = serde_json::json!({
            "reason": "a\u{1b}]0;pwned\u{7}b\u{9b}2J\u{7f}\u{202e}x\u{2028}é ✓",
            "n": 1
        });
        for json in [
            serde_json::to_string(&value).unwrap(),
            serde_json::to_string_pretty(&value).unwrap(),
        ] {
            let shown = escape_controls_json(&json);
            assert!(
                !shown.chars().any(|c| needs_escape(c) && c != '\n'),
                "{shown:?}"
            );
            assert!(shown.contains("\\u009b"), "{shown}");
            assert_eq!(
                serde_json::from_str::<serde_json::Value>(&shown).unwrap(),
                value
            );
        }
    }
}
