//! Reading one callback request: encryption, signature and timestamp window, verification
//! token, then the body's shape (`url_verification`, a schema 2.0 `card.action.trigger`, the
//! legacy flat card callback, any other event).
//!
//! Which check authenticates what:
//!
//! | body | Encrypt Key set | no Encrypt Key |
//! |---|---|---|
//! | `{"encrypt": …}` | SHA-256 signature headers, then decrypt, then the token inside | refused |
//! | plain JSON | refused | the token inside; legacy card callbacks: SHA-1 signature headers |
//!
//! An encrypted `url_verification` may come without signature headers (the platform's URL
//! check); every other encrypted callback must be signed.

use serde_json::{Map, Value, json};

use super::crypto::{self, DecryptError};
use crate::channel::{Click, HeaderMap, Inbound, Refusal};

/// How far a request's timestamp may be from the server's clock, in seconds.
pub(super) const WINDOW_SECONDS: i64 = 300;

const TIMESTAMP: &str = "x-lark-request-timestamp";
const NONCE: &str = "x-lark-request-nonce";
const SIGNATURE: &str = "x-lark-signature";

/// The event type of a card button click.
const CARD_ACTION: &str = "card.action.trigger";

/// The secrets a callback is checked with.
pub(super) struct Keys<'a> {
    pub(super) verification_token: &'a str,
    pub(super) encrypt_key: Option<&'a str>,
}

/// One request as received.
struct Received<'a> {
    headers: &'a HeaderMap,
    body: &'a [u8],
    now_ms: i64,
}

/// Checks and reads one callback. See the module docs for which check applies.
///
/// # Errors
/// [`Refusal`]: 400 for a body that is malformed or in the wrong form for the configuration,
/// 401 for a failed signature, timestamp or token check.
pub(super) fn read(
    keys: &Keys<'_>,
    headers: &HeaderMap,
    body: &[u8],
    now_ms: i64,
) -> Result<Inbound, Refusal> {
    let received = Received {
        headers,
        body,
        now_ms,
    };
    let outer = object(body, "the body is not a JSON object")?;
    match (keys.encrypt_key, outer.get("encrypt")) {
        (Some(key), Some(field)) => encrypted(keys, key, field, &received),
        (Some(_), None) => Err(Refusal::bad_request(
            "an Encrypt Key is configured, so callbacks must arrive encrypted",
        )),
        (None, Some(_)) => Err(Refusal::bad_request(
            "the callback is encrypted, but no `encrypt_key` is configured",
        )),
        (None, None) => payload(keys, &outer, &received, false),
    }
}

fn encrypted(
    keys: &Keys<'_>,
    key: &str,
    field: &Value,
    received: &Received<'_>,
) -> Result<Inbound, Refusal> {
    let Some(text) = field.as_str() else {
        return Err(Refusal::bad_request("the `encrypt` field is not a string"));
    };
    if signed(received, |ts, nonce, sig| {
        crypto::signature_matches(ts, nonce, key, received.body, sig)
    })? {
        let plain = crypto::decrypt(key, text).map_err(refuse_decrypt)?;
        let inner = object(&plain, "the decrypted body is not a JSON object")?;
        return payload(keys, &inner, received, true);
    }
    // Unsigned: only the URL check. Every way it fails reads the same, so the answers say
    // nothing about the ciphertext.
    let inner = crypto::decrypt(key, text)
        .ok()
        .and_then(|plain| object(&plain, "").ok());
    match inner {
        Some(inner) if kind(&inner) == Some("url_verification") => challenge(keys, &inner),
        _ => Err(Refusal::unauthorized(
            "the callback carries no X-Lark-Signature headers",
        )),
    }
}

fn refuse_decrypt(error: DecryptError) -> Refusal {
    Refusal::bad_request(error.describe())
}

/// Reads a decrypted or plain payload. `signed`: its signature was checked already.
fn payload(
    keys: &Keys<'_>,
    payload: &Map<String, Value>,
    received: &Received<'_>,
    signed: bool,
) -> Result<Inbound, Refusal> {
    if kind(payload) == Some("url_verification") {
        return challenge(keys, payload);
    }
    if payload.get("schema").and_then(Value::as_str) == Some("2.0") {
        return schema2(keys, payload);
    }
    if is_legacy_card(payload) {
        if !signed {
            legacy_signature(keys, received)?;
        }
        return Ok(legacy_click(payload)?.map_or(Inbound::Ignore, Inbound::Click));
    }
    if kind(payload) == Some("event_callback") {
        check_token(payload.get("token"), keys)?;
        return Ok(Inbound::Ignore);
    }
    Err(Refusal::bad_request("the body is not a Feishu callback"))
}

fn challenge(keys: &Keys<'_>, payload: &Map<String, Value>) -> Result<Inbound, Refusal> {
    check_token(payload.get("token"), keys)?;
    let Some(challenge) = payload.get("challenge").and_then(Value::as_str) else {
        return Err(Refusal::bad_request(
            "url_verification without a `challenge`",
        ));
    };
    Ok(Inbound::Reply(json!({ "challenge": challenge })))
}

fn schema2(keys: &Keys<'_>, payload: &Map<String, Value>) -> Result<Inbound, Refusal> {
    let Some(header) = payload.get("header").and_then(Value::as_object) else {
        return Err(Refusal::bad_request(
            "a schema 2.0 callback without a `header`",
        ));
    };
    check_token(header.get("token"), keys)?;
    if header.get("event_type").and_then(Value::as_str) != Some(CARD_ACTION) {
        return Ok(Inbound::Ignore);
    }
    let event_id = text(header.get("event_id"), "header.event_id")?;
    let event = payload.get("event").and_then(Value::as_object);
    let Some(event) = event else {
        return Err(Refusal::bad_request(
            "card.action.trigger without an `event`",
        ));
    };
    let operator = event.get("operator").and_then(Value::as_object);
    let open_id = text(
        operator.and_then(|o| o.get("open_id")),
        "event.operator.open_id",
    )?;
    let union_id = operator.and_then(|o| o.get("union_id"));
    let context = event.get("context").and_then(Value::as_object);
    let message_id = context.and_then(|c| c.get("open_message_id"));
    let value = event
        .get("action")
        .and_then(Value::as_object)
        .and_then(|action| action.get("value"));
    Ok(
        button(value).map_or(Inbound::Ignore, |(request_id, approve, nonce)| {
            Inbound::Click(Click {
                event_id,
                request_id,
                approve,
                nonce,
                operator: open_id,
                operator_aliases: optional(union_id).into_iter().collect(),
                message_id: optional(message_id),
                response_url: None,
            })
        }),
    )
}

/// The flat card callback of the message card request URL (`card.action.trigger_v1`).
fn is_legacy_card(payload: &Map<String, Value>) -> bool {
    payload.get("action").is_some_and(Value::is_object)
        && (payload.contains_key("open_message_id") || payload.contains_key("open_id"))
}

/// The legacy shape carries no event id; its card-update `token` is unique per click and
/// the same when the platform retries, so it stands in.
fn legacy_click(payload: &Map<String, Value>) -> Result<Option<Click>, Refusal> {
    let event_id = text(payload.get("token"), "token")?;
    let open_id = text(payload.get("open_id"), "open_id")?;
    let value = payload
        .get("action")
        .and_then(Value::as_object)
        .and_then(|action| action.get("value"));
    Ok(button(value).map(|(request_id, approve, nonce)| Click {
        event_id,
        request_id,
        approve,
        nonce,
        operator: open_id,
        operator_aliases: optional(payload.get("union_id")).into_iter().collect(),
        message_id: optional(payload.get("open_message_id")),
        response_url: None,
    }))
}

/// Reads a button's value: `{request_id, decision: approve|reject, nonce}` (an object, or
/// that object as a JSON string). `None` for any other value: a click tollgate did not make.
fn button(value: Option<&Value>) -> Option<(String, bool, String)> {
    let parsed;
    let value = match value? {
        Value::String(text) => {
            parsed = serde_json::from_str::<Value>(text).ok()?;
            &parsed
        }
        other => other,
    };
    let field = |key: &str| {
        value
            .get(key)
            .and_then(Value::as_str)
            .filter(|text| !text.is_empty())
    };
    let approve = match field("decision")? {
        "approve" => true,
        "reject" => false,
        _ => return None,
    };
    Some((
        field("request_id")?.to_owned(),
        approve,
        field("nonce")?.to_owned(),
    ))
}

fn check_token(token: Option<&Value>, keys: &Keys<'_>) -> Result<(), Refusal> {
    let given = token.and_then(Value::as_str).unwrap_or_default();
    if crypto::same_secret(given, keys.verification_token) {
        Ok(())
    } else {
        Err(Refusal::unauthorized(
            "the verification token does not match",
        ))
    }
}

fn legacy_signature(keys: &Keys<'_>, received: &Received<'_>) -> Result<(), Refusal> {
    let checked = signed(received, |ts, nonce, sig| {
        crypto::legacy_signature_matches(ts, nonce, keys.verification_token, received.body, sig)
    })?;
    if checked {
        Ok(())
    } else {
        Err(Refusal::unauthorized(
            "a legacy card callback needs its X-Lark-Signature headers",
        ))
    }
}

/// Checks the signature headers with `matches`. `Ok(false)` when none of the three is
/// present; a partial set, a timestamp outside the window or a wrong signature is refused.
fn signed(
    received: &Received<'_>,
    matches: impl Fn(&str, &str, &str) -> bool,
) -> Result<bool, Refusal> {
    let header = |name| received.headers.get(name).map(|value| value.to_str());
    match (header(TIMESTAMP), header(NONCE), header(SIGNATURE)) {
        (None, None, None) => Ok(false),
        (Some(Ok(ts)), Some(Ok(nonce)), Some(Ok(sig))) => {
            in_window(ts, received.now_ms)?;
            if matches(ts, nonce, sig) {
                Ok(true)
            } else {
                Err(Refusal::unauthorized("the X-Lark-Signature does not match"))
            }
        }
        _ => Err(Refusal::unauthorized(
            "the X-Lark-Request-Timestamp, X-Lark-Request-Nonce and X-Lark-Signature headers \
             come together",
        )),
    }
}

fn in_window(timestamp: &str, now_ms: i64) -> Result<(), Refusal> {
    let Ok(seconds) = timestamp.trim().parse::<i64>() else {
        return Err(Refusal::unauthorized(
            "X-Lark-Request-Timestamp is not a number of seconds",
        ));
    };
    let age = now_ms.div_euclid(1000).saturating_sub(seconds);
    if age > WINDOW_SECONDS {
        return Err(Refusal::unauthorized(format!(
            "the request is {age} s old (at most {WINDOW_SECONDS} s)"
        )));
    }
    if age < -WINDOW_SECONDS {
        return Err(Refusal::unauthorized(format!(
            "the request is dated {} s ahead of this server's clock",
            age.saturating_neg()
        )));
    }
    Ok(())
}

fn object(bytes: &[u8], refusal: &str) -> Result<Map<String, Value>, Refusal> {
    match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Object(map)) => Ok(map),
        _ => Err(Refusal::bad_request(refusal)),
    }
}

fn kind(payload: &Map<String, Value>) -> Option<&str> {
    payload.get("type").and_then(Value::as_str)
}

fn text(value: Option<&Value>, name: &str) -> Result<String, Refusal> {
    optional(value).ok_or_else(|| Refusal::bad_request(format!("the callback has no `{name}`")))
}

fn optional(value: Option<&Value>) -> Option<String> {
    value
        .and_then(Value::as_str)
        .filter(|text| !text.is_empty())
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_is_five_minutes_either_way() {
        let now = 1_800_000_000_000;
        assert!(in_window("1800000000", now).is_ok());
        assert!(in_window("1799999700", now).is_ok());
        assert!(in_window("1799999699", now).is_err());
        assert!(in_window("1800000300", now).is_ok());
        assert!(in_window("1800000301", now).is_err());
        assert!(in_window("-9223372036854775808", now).is_err());
        assert!(in_window("soon", now).is_err());
    }

    #[test]
    fn button_values_are_ours_or_nothing() {
        let ours = json!({"request_id": "cr_1", "decision": "reject", "nonce": "n"});
        assert_eq!(
            button(Some(&ours)),
            Some(("cr_1".into(), false, "n".into()))
        );
        let as_text = Value::String(ours.to_string());
        assert_eq!(
            button(Some(&as_text)),
            Some(("cr_1".into(), false, "n".into()))
        );
        assert_eq!(
            button(Some(
                &json!({"request_id": "cr_1", "decision": "maybe", "nonce": "n"})
            )),
            None
        );
        assert_eq!(
            button(Some(
                &json!({"request_id": "", "decision": "approve", "nonce": "n"})
            )),
            None
        );
        assert_eq!(button(Some(&json!("plain"))), None);
        assert_eq!(button(None), None);
    }
}
