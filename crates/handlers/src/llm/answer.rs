//! Reading a Chat Completions response and the verdict inside it.
//!
//! Unknown envelope fields are ignored (servers add fields of their own: `system_fingerprint`,
//! `service_tier`, `reasoning_content`, …), but what it says is read strictly: exactly one
//! choice, no top-level `error`, `object` `"chat.completion"` when present. The verdict is read
//! strictly.

use serde::Deserialize;
use serde_json::{Value, json};
use tollgate_core::{FailureKind, HookError};

use super::Depth;
use crate::text::{escape_controls, excerpt};

/// Longest excerpt of a model answer or an error body kept in a message, in bytes.
pub(super) const EXCERPT: usize = 512;

/// A [chat completion object](https://platform.openai.com/docs/api-reference/chat/object),
/// the fields tollgate reads.
/// `object` and `error` are checked on the raw JSON first (a `null` `object` must not pass as
/// absent).
#[derive(Deserialize)]
struct Completion {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    model: Option<String>,
    choices: Vec<Choice>,
    #[serde(default)]
    usage: Option<Value>,
}

#[derive(Deserialize)]
struct Choice {
    message: Message,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct Message {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    refusal: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<Value>>,
    #[serde(default)]
    function_call: Option<Value>,
}

/// The model's verdict, parsed from the answer's `content`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// `true`: allow; `false`: deny.
    pub ok: bool,
    /// Why, in the model's words (the deny reason).
    pub reason: String,
    /// The model's analysis (`thorough` only).
    pub reasoning: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct QuickWire {
    ok: bool,
    reason: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ThoroughWire {
    reasoning: String,
    ok: bool,
    reason: String,
}

/// A verdict and what the trace keeps about the answer it came from.
pub(super) struct Judged {
    pub verdict: Verdict,
    /// `{"id", "model", "usage"}` of the response.
    pub record: Value,
}

/// Reads a 2xx response body.
///
/// # Errors
/// [`FailureKind::InvalidOutput`] for a body that is not a chat completion (an `object` other
/// than `"chat.completion"`, `null` included, when present; a top-level `error` that is not
/// `null`, even beside choices; anything but exactly one choice), and for every answer that is
/// not a clean verdict (see [`parse_verdict`] and [`read_content`]).
pub(super) fn read_completion(body: &[u8], depth: Depth) -> Result<Judged, HookError> {
    let not_a_completion = |why: String| {
        invalid(format!(
            "the response is not a chat completion ({why}): {}",
            excerpt(body, EXCERPT)
        ))
    };
    let envelope: Value =
        serde_json::from_slice(body).map_err(|e| not_a_completion(e.to_string()))?;
    let Some(fields) = envelope.as_object() else {
        return Err(not_a_completion("not a JSON object".to_owned()));
    };
    // A server that reports an error, even next to choices, has not judged.
    if let Some(error) = fields.get("error").filter(|e| !e.is_null()) {
        return Err(invalid(format!(
            "the response carries an error: {}",
            excerpt(error.to_string().as_bytes(), EXCERPT)
        )));
    }
    match fields.get("object") {
        None => {}
        Some(Value::String(object)) if object == "chat.completion" => {}
        Some(other) => {
            return Err(invalid(format!(
                "the response object is `{}`, not `chat.completion`",
                excerpt(other.to_string().as_bytes(), EXCERPT)
            )));
        }
    }
    let completion: Completion =
        serde_json::from_value(envelope).map_err(|e| not_a_completion(e.to_string()))?;
    // tollgate asks for one choice; several that could disagree are not one verdict.
    let count = completion.choices.len();
    let Some(choice) = completion.choices.into_iter().next().filter(|_| count == 1) else {
        return Err(invalid(format!(
            "the response has {count} choices, not exactly one"
        )));
    };
    let content = read_content(choice)?;
    let verdict = parse_verdict(&content, depth)?;
    let record = json!({"id": completion.id, "model": completion.model, "usage": completion.usage});
    Ok(Judged { verdict, record })
}

/// The text of a finished, plain answer.
fn read_content(choice: Choice) -> Result<String, HookError> {
    let message = choice.message;
    if let Some(refusal) = message.refusal.filter(|r| !r.is_empty()) {
        return Err(invalid(format!(
            "the model refused to judge: {}",
            excerpt(refusal.as_bytes(), EXCERPT)
        )));
    }
    if message.tool_calls.is_some_and(|calls| !calls.is_empty()) || message.function_call.is_some()
    {
        return Err(invalid("the model called a tool instead of answering"));
    }
    match choice.finish_reason.as_deref() {
        Some("stop") => {}
        Some("length") => return Err(invalid("the answer was cut off by the token limit")),
        Some(other) => return Err(invalid(format!("the answer ended with `{other}`"))),
        None => return Err(invalid("the answer has no finish_reason")),
    }
    match message.content {
        Some(content) if !content.trim().is_empty() => Ok(content),
        _ => Err(invalid("the answer is empty")),
    }
}

/// Parses a model's answer as a verdict: exactly one JSON object (whitespace around it is
/// allowed, nothing else), `{"ok": bool, "reason": string}` for [`Depth::Quick`] and
/// `{"reasoning": string, "ok": bool, "reason": string}` for [`Depth::Thorough`], keys in any
/// order.
///
/// # Errors
/// [`FailureKind::InvalidOutput`] for anything else: a code fence, text around the object, an
/// array, a missing, extra or duplicated key, a value of the wrong type (`"ok": "yes"`,
/// `"reason": null`), and for [`Depth::Thorough`] an empty or whitespace-only `reasoning`
/// (the reasoning is what `thorough` asks for).
pub fn parse_verdict(content: &str, depth: Depth) -> Result<Verdict, HookError> {
    // serde would also read a struct from an array (`[true, "r"]`): only an object is a verdict.
    if !content.trim_start().starts_with('{') {
        return Err(not_a_verdict("it is not a bare JSON object", content));
    }
    let parsed = match depth {
        Depth::Quick => serde_json::from_str(content).map(|w: QuickWire| Verdict {
            ok: w.ok,
            reason: w.reason,
            reasoning: None,
        }),
        Depth::Thorough => serde_json::from_str(content).map(|w: ThoroughWire| Verdict {
            ok: w.ok,
            reason: w.reason,
            reasoning: Some(w.reasoning),
        }),
    };
    let verdict = parsed.map_err(|e| not_a_verdict(&e.to_string(), content))?;
    if verdict
        .reasoning
        .as_deref()
        .is_some_and(|r| r.trim().is_empty())
    {
        return Err(not_a_verdict("`reasoning` is empty", content));
    }
    Ok(verdict)
}

fn not_a_verdict(why: &str, content: &str) -> HookError {
    invalid(format!(
        "the answer is not a clean verdict ({why}): {}",
        excerpt(content.as_bytes(), EXCERPT)
    ))
}

/// An `invalid_output` failure. The message is escaped whole: it may quote what the server
/// sent (a `finish_reason`, an `object`, field names in a parse error).
pub(super) fn invalid(message: impl std::fmt::Display) -> HookError {
    HookError::new(
        FailureKind::InvalidOutput,
        escape_controls(&message.to_string()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quick(content: &str) -> Result<Verdict, HookError> {
        parse_verdict(content, Depth::Quick)
    }

    #[test]
    fn clean_verdicts_parse() {
        let verdict = quick(" {\"reason\": \"r\", \"ok\": false}\n").unwrap();
        assert_eq!((verdict.ok, verdict.reason.as_str()), (false, "r"));
        let thorough = r#"{"reasoning": "a, then b", "ok": true, "reason": "fine"}"#;
        let verdict = parse_verdict(thorough, Depth::Thorough).unwrap();
        assert_eq!(verdict.reasoning.as_deref(), Some("a, then b"));
    }

    #[test]
    fn anything_but_a_clean_verdict_is_invalid_output() {
        for content in [
            "```json\n{\"ok\": true, \"reason\": \"r\"}\n```",
            "Sure! {\"ok\": true, \"reason\": \"r\"}",
            "{\"ok\": true, \"reason\": \"r\"} Hope this helps.",
            "{\"ok\": true, \"reason\": \"r\"}{\"ok\": false, \"reason\": \"r\"}",
            "[true, \"r\"]",
            "{\"ok\": \"yes\", \"reason\": \"r\"}",
            "{\"ok\": 1, \"reason\": \"r\"}",
            "{\"ok\": true, \"reason\": null}",
            "{\"ok\": true}",
            "{\"ok\": true, \"reason\": \"r\", \"confidence\": 0.9}",
            "{\"ok\": true, \"ok\": false, \"reason\": \"r\"}",
            "{\"reasoning\": \"x\", \"ok\": true, \"reason\": \"r\"}",
            "{\"ok\": true, \"reason\": \"r\"",
            "true",
        ] {
            let err = quick(content).unwrap_err();
            assert_eq!(err.kind(), FailureKind::InvalidOutput, "{content}");
        }
        let missing_reasoning = parse_verdict(r#"{"ok": true, "reason": "r"}"#, Depth::Thorough);
        assert!(missing_reasoning.is_err());
    }

    #[test]
    fn long_answers_are_excerpted() {
        let message = not_a_verdict("x", &"é".repeat(10_000)).to_string();
        assert!(message.len() < 2 * EXCERPT, "{}", message.len());
        assert!(message.ends_with("more bytes]"));
    }

    fn envelope(extra: Value, choices: Value) -> Vec<u8> {
        let mut body =
            json!({"id": "c1", "object": "chat.completion", "model": "m", "choices": choices});
        for (k, v) in extra.as_object().unwrap() {
            body[k] = v.clone();
        }
        serde_json::to_vec(&body).unwrap()
    }

    fn choice(content: &str) -> Value {
        json!({"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"})
    }

    const ALLOW: &str = r#"{"ok":true,"reason":"fine"}"#;
    const DENY: &str = r#"{"ok":false,"reason":"no"}"#;

    #[test]
    fn regression_several_choices_are_not_one_verdict() {
        for choices in [
            json!([choice(ALLOW), choice(DENY)]),
            json!([choice(ALLOW), choice(ALLOW)]),
            json!([]),
        ] {
            let err = read_completion(&envelope(json!({}), choices), Depth::Quick)
                .err()
                .unwrap();
            assert_eq!(err.kind(), FailureKind::InvalidOutput);
            assert!(err.to_string().contains("not exactly one"), "{err}");
        }
        assert!(
            read_completion(&envelope(json!({}), json!([choice(ALLOW)])), Depth::Quick).is_ok()
        );
    }

    #[test]
    fn regression_a_top_level_error_beside_choices_is_a_failure() {
        let body = envelope(
            json!({"error": {"message": "overloaded"}}),
            json!([choice(ALLOW)]),
        );
        let err = read_completion(&body, Depth::Quick).err().unwrap();
        assert_eq!(err.kind(), FailureKind::InvalidOutput);
        assert!(err.to_string().contains("overloaded"), "{err}");
        let null_error = envelope(json!({"error": null}), json!([choice(ALLOW)]));
        assert!(read_completion(&null_error, Depth::Quick).is_ok());
    }

    #[test]
    fn regression_object_must_be_chat_completion_when_present() {
        for object in [Value::Null, json!("chat.completion.chunk"), json!(1)] {
            let body = envelope(json!({"object": object}), json!([choice(ALLOW)]));
            let err = read_completion(&body, Depth::Quick).err().unwrap();
            assert_eq!(err.kind(), FailureKind::InvalidOutput, "{object}");
        }
        let mut absent: Value =
            serde_json::from_slice(&envelope(json!({}), json!([choice(ALLOW)]))).unwrap();
        absent.as_object_mut().unwrap().remove("object");
        assert!(read_completion(&serde_json::to_vec(&absent).unwrap(), Depth::Quick).is_ok());
    }

    #[test]
    fn regression_thorough_requires_non_empty_reasoning() {
        for reasoning in ["", "  \n"] {
            let content = json!({"reasoning": reasoning, "ok": true, "reason": "fine"}).to_string();
            let err = parse_verdict(&content, Depth::Thorough).unwrap_err();
            assert_eq!(err.kind(), FailureKind::InvalidOutput, "{reasoning:?}");
        }
    }
}
