//! Reading a receiver's answer: status and body into an outcome.

use std::error::Error as _;

use reqwest::{Response, StatusCode, header};
use tollgate_core::{FailureKind, HookError};
use tollgate_protocol::Outcome;
use tollgate_protocol::wire::OutcomeWire;

use super::resolve::Refused;
use crate::text::{escape_controls, excerpt};

/// Longest excerpt of a refused body kept in an error, in bytes.
const EXCERPT: usize = 1024;

/// Turns a response into an outcome: a 2xx with an empty body (or only whitespace) is no
/// opinion, a 2xx with one JSON object is that outcome; anything else is a failure.
pub(super) async fn interpret(
    response: Response,
    cap: usize,
    parse: impl FnOnce(&[u8]) -> Result<Outcome, HookError>,
) -> Result<Outcome, HookError> {
    let status = response.status();
    if status.is_redirection() {
        return Err(HookError::msg(redirect_message(&response)));
    }
    if !status.is_success() {
        return Err(HookError::msg(status_message(status, response).await));
    }
    parse(&read_capped(response, cap).await?)
}

/// Parses a 2xx body.
///
/// # Errors
/// [`FailureKind::InvalidOutput`] for a body that is not UTF-8, not exactly one JSON object,
/// or not a valid outcome.
pub(super) fn parse_body(body: &[u8]) -> Result<Outcome, HookError> {
    let text = std::str::from_utf8(body)
        .map_err(|_| invalid("the response body is not valid UTF-8".to_owned()))?
        .trim();
    if text.is_empty() {
        return Ok(Outcome::allow());
    }
    if !text.starts_with('{') {
        // serde would read a JSON array as a struct's fields in order.
        return Err(invalid(format!(
            "the response body is neither empty nor one JSON object: {}",
            excerpt(text.as_bytes(), EXCERPT)
        )));
    }
    let wire: OutcomeWire = serde_json::from_str(text).map_err(|e| {
        invalid(format!(
            "the response body is not one valid outcome object ({e}): {}",
            excerpt(text.as_bytes(), EXCERPT)
        ))
    })?;
    Outcome::try_from(wire).map_err(|e| invalid(e.to_string()))
}

/// A transport failure: `refused` when the SSRF guard refused the host at resolution,
/// `errored` otherwise. The message never shows the URL (reqwest's own message would, with
/// the path and query where webhook URLs keep their tokens).
pub(super) fn transport_error(error: reqwest::Error) -> HookError {
    let error = error.without_url();
    let mut source = error.source();
    let mut chain = error.to_string();
    while let Some(cause) = source {
        if let Some(refused) = cause.downcast_ref::<Refused>() {
            return HookError::new(FailureKind::Refused, refused);
        }
        chain = format!("{chain}: {cause}");
        source = cause.source();
    }
    HookError::msg(escape_controls(&chain))
}

/// Reads the body up to `cap` bytes; a longer body is a failure.
///
/// # Cancel safety
/// Dropping the future drops the response and with it the connection.
async fn read_capped(mut response: Response, cap: usize) -> Result<Vec<u8>, HookError> {
    let too_long = || invalid(format!("the response body exceeds the cap of {cap} bytes"));
    if response
        .content_length()
        .is_some_and(|len| len > cap as u64)
    {
        return Err(too_long());
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(transport_error)? {
        if body.len() + chunk.len() > cap {
            return Err(too_long());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

fn redirect_message(response: &Response) -> String {
    let location = response
        .headers()
        .get(header::LOCATION)
        .and_then(|value| value.to_str().ok())
        .map_or_else(
            || "?".to_owned(),
            |location| excerpt(location.as_bytes(), EXCERPT),
        );
    format!(
        "answered {} (redirect to {location}); redirects are not followed",
        response.status()
    )
}

async fn status_message(status: StatusCode, response: Response) -> String {
    match read_capped(response, EXCERPT).await {
        Ok(body) if !body.is_empty() => {
            format!("answered {status}: {}", excerpt(&body, EXCERPT))
        }
        _ => format!("answered {status}"),
    }
}

/// An `invalid_output` failure. The message is escaped whole: parse errors quote field names
/// the receiver chose.
fn invalid(message: String) -> HookError {
    HookError::new(FailureKind::InvalidOutput, escape_controls(&message))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use tollgate_protocol::Decision;

    use super::*;

    #[test]
    fn bodies_are_empty_or_one_outcome_object() {
        assert_eq!(parse_body(b"").unwrap(), Outcome::allow());
        assert_eq!(parse_body(b" \n").unwrap(), Outcome::allow());
        assert_eq!(
            parse_body(br#"{"decision":"deny","reason":"x"}"#)
                .unwrap()
                .decision,
            Decision::deny("x")
        );
        for bad in [
            &b"ok"[..],
            b"[]",
            b"null",
            b"\"deny\"",
            b"{}{}",
            br#"{"decison":"deny"}"#,
            b"\xff\xfe",
        ] {
            let error = parse_body(bad).unwrap_err();
            assert_eq!(error.kind(), FailureKind::InvalidOutput, "{bad:?}");
        }
    }
}
