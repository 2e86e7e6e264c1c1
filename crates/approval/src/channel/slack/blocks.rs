//! The messages tollgate posts to Slack (Block Kit JSON) and the buttons' values.
//!
//! Everything a request carries (tool, agent, arguments, reasons, notes) is text someone else
//! wrote, so it goes into `mrkdwn` only after [`escape`]: with `&`, `<` and `>` replaced by
//! their entities, a `<!channel>` or `<@U…>` in the arguments shows as text instead of
//! pinging anyone, and no link can be smuggled in. Header texts are `plain_text`, which Slack
//! never parses.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::config::SlackApprovers;
use crate::model::{Request, Status};
use crate::time::format_ms;

/// The `action_id` of the Approve button.
pub const APPROVE_ACTION: &str = "tollgate_approve";
/// The `action_id` of the Reject button.
pub const REJECT_ACTION: &str = "tollgate_reject";
/// The `block_id` of the block holding the two buttons.
const ACTIONS_BLOCK: &str = "tollgate_decision";

/// Slack's limits: a button's `value`, a header's text, a section's text.
pub const MAX_VALUE_CHARS: usize = 2000;
const MAX_HEADER_CHARS: usize = 150;
const MAX_FIELD_CHARS: usize = 1900;
/// What the arguments may take of a section (3000 characters), escaped.
const MAX_ARGUMENTS_CHARS: usize = 2800;
/// Reasons listed before the rest are counted, so a section stays within its 3000 characters.
const MAX_REASONS: usize = 10;
/// A name (agent, tool) in the notification text.
const MAX_NAME_CHARS: usize = 200;

/// What a button's `value` carries: the request, the verdict and the nonce, nothing else.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ButtonValue {
    /// The request id.
    pub request: String,
    /// `approve` or `reject`.
    pub decision: String,
    /// The per-request nonce the hub stored when it sent the message.
    pub nonce: String,
}

impl ButtonValue {
    /// The value as compact JSON, or an error when it exceeds Slack's 2000 characters.
    fn encode(&self) -> Result<String, String> {
        let text = serde_json::to_string(self).map_err(|e| e.to_string())?;
        if text.chars().count() > MAX_VALUE_CHARS {
            return Err(format!(
                "a button value would exceed Slack's {MAX_VALUE_CHARS} characters"
            ));
        }
        Ok(text)
    }

    /// Reads a value written by [`pending`]; `None` for anything else.
    pub fn decode(text: &str) -> Option<Self> {
        let value: Self = serde_json::from_str(text).ok()?;
        matches!(value.decision.as_str(), "approve" | "reject").then_some(value)
    }
}

/// A message: the notification text and the blocks.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    /// The fallback text (notifications, screen readers); mrkdwn, escaped.
    pub text: String,
    /// The Block Kit blocks.
    pub blocks: Value,
}

/// The message asking to approve `request`, with Approve and Reject buttons carrying `nonce`.
///
/// # Errors
/// When a button value would exceed Slack's limit (an absurdly long nonce or request id).
pub fn pending(request: &Request, nonce: &str) -> Result<Message, String> {
    let button = |decision: &str| ButtonValue {
        request: request.id.clone(),
        decision: decision.to_owned(),
        nonce: nonce.to_owned(),
    };
    let approve = button("approve").encode()?;
    let reject = button("reject").encode()?;
    let mut blocks = body_blocks(request, &format!("Approval needed: {}", request.tool_name));
    blocks.push(
        json!({"type": "actions", "block_id": ACTIONS_BLOCK, "elements": [
            {"type": "button", "action_id": APPROVE_ACTION, "style": "primary",
             "text": {"type": "plain_text", "text": "Approve"}, "value": approve},
            {"type": "button", "action_id": REJECT_ACTION, "style": "danger",
             "text": {"type": "plain_text", "text": "Reject"}, "value": reject},
        ]}),
    );
    let text = format!(
        "Approval needed: {} wants to call {} ({})",
        escape_limited(&request.agent, MAX_NAME_CHARS),
        escape_limited(&request.tool_name, MAX_NAME_CHARS),
        request.id
    );
    Ok(Message {
        text,
        blocks: Value::Array(blocks),
    })
}

/// The final message of a request that left `pending`: what was asked and how it ended, no
/// buttons. `approvers` turns the decider's approver name back into a Slack mention.
pub fn final_message(request: &Request, approvers: &SlackApprovers) -> Message {
    let outcome = outcome_line(request, approvers);
    let title = format!("{}: {}", title_word(request.status), request.tool_name);
    let mut blocks = body_blocks(request, &title);
    if let Some(edited) = &request.edited_arguments {
        blocks.push(section(&format!(
            "*Arguments as approved (edited)*\n{}",
            code_block(edited)
        )));
    }
    let mut line = outcome.clone();
    if let Some(note) = request.response_note.as_deref().filter(|n| !n.is_empty()) {
        line.push_str(&format!(
            "\n*Note:* {}",
            escape_limited(note, MAX_FIELD_CHARS)
        ));
    }
    blocks.push(section(&line));
    Message {
        text: format!(
            "{} ({}): {outcome}",
            escape_limited(&title, MAX_NAME_CHARS),
            request.id
        ),
        blocks: Value::Array(blocks),
    }
}

/// A short line telling the clicker how the request already ended.
pub fn already_decided(request: &Request, approvers: &SlackApprovers) -> String {
    format!(
        "This request was already decided: {}",
        outcome_line(request, approvers)
    )
}

/// `Approved by <@U…> at …`, `Rejected by …`, `Expired at …`, `Cancelled by … at …`.
fn outcome_line(request: &Request, approvers: &SlackApprovers) -> String {
    let at = format_ms(request.responded_at.unwrap_or(request.expires_at));
    let who = request
        .responded_by
        .as_deref()
        .map(|name| mention(name, approvers));
    let via = request
        .channel
        .as_deref()
        .filter(|channel| *channel != "slack")
        .map(|channel| format!(" (via {})", escape(channel)))
        .unwrap_or_default();
    match (request.status, who) {
        (Status::Approved, Some(who)) => {
            format!(":white_check_mark: Approved by {who} at {at}{via}")
        }
        (Status::Rejected, Some(who)) => format!(":x: Rejected by {who} at {at}{via}"),
        (Status::Expired, _) => format!(":hourglass: Expired at {at}: nobody decided in time"),
        (Status::Cancelled, Some(who)) => format!(":no_entry_sign: Cancelled by {who} at {at}"),
        (Status::Cancelled, None) => format!(":no_entry_sign: Cancelled at {at}"),
        (Status::Approved, None) => format!(":white_check_mark: Approved at {at}{via}"),
        (Status::Rejected, None) => format!(":x: Rejected at {at}{via}"),
        (Status::Pending, _) => "Still waiting for a decision".to_owned(),
    }
}

fn title_word(status: Status) -> &'static str {
    match status {
        Status::Pending => "Approval needed",
        Status::Approved => "Approved",
        Status::Rejected => "Rejected",
        Status::Expired => "Expired",
        Status::Cancelled => "Cancelled",
    }
}

/// `<@U…>` for an approver name a Slack user decides as; the escaped name otherwise.
fn mention(name: &str, approvers: &SlackApprovers) -> String {
    match approvers.id_of(name) {
        Some(id) => format!("<@{id}>"),
        None => escape(name),
    }
}

/// The header and what was asked: agent, tool, request, expiry, arguments, reasons.
fn body_blocks(request: &Request, title: &str) -> Vec<Value> {
    let field = |label: &str, text: &str| json!({"type": "mrkdwn", "text": format!("*{label}*\n{}", escape_limited(text, MAX_FIELD_CHARS))});
    vec![
        json!({"type": "header", "text": {"type": "plain_text", "text": truncate(title, MAX_HEADER_CHARS)}}),
        json!({"type": "section", "fields": [
            field("Agent", &request.agent),
            field("Tool", &request.tool_name),
            field("Request", &request.id),
            field("Expires", &format_ms(request.expires_at)),
        ]}),
        section(&format!("*Arguments*\n{}", code_block(&request.arguments))),
        section(&reasons_text(request)),
    ]
}

fn reasons_text(request: &Request) -> String {
    let mut text = String::from("*Why*");
    if request.reasons.is_empty() {
        text.push_str("\n(no reason given)");
    }
    let shown = request.reasons.len().min(MAX_REASONS);
    let budget = MAX_FIELD_CHARS / shown.max(1);
    for reason in &request.reasons[..shown] {
        text.push_str(&format!("\n• {}", escape_limited(reason, budget)));
    }
    if request.reasons.len() > shown {
        text.push_str(&format!("\n• … and {} more", request.reasons.len() - shown));
    }
    text.push_str(&format!(
        "\n_asked by {}_",
        escape_limited(&request.asked_by, 200)
    ));
    text
}

fn section(text: &str) -> Value {
    json!({"type": "section", "text": {"type": "mrkdwn", "text": text}})
}

/// `arguments` as compact JSON in a code block, escaped and cut to fit a section. Runs of
/// backticks are broken up so the arguments cannot close the block early.
fn code_block(arguments: &Value) -> String {
    let compact = arguments.to_string().replace("``", "`\u{200b}`");
    format!("```{}```", escape_limited(&compact, MAX_ARGUMENTS_CHARS))
}

/// `text` with Slack's three control characters replaced by their entities.
pub fn escape(text: &str) -> String {
    escape_limited(text, usize::MAX)
}

/// [`escape`], cut (at a character, never inside an entity) so the result holds at most
/// `limit` characters, ending in `…` when cut.
fn escape_limited(text: &str, limit: usize) -> String {
    let full = text
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    if full.chars().count() <= limit {
        return full;
    }
    let mut out = String::with_capacity(limit);
    let mut used = 0usize;
    for c in text.chars() {
        let piece: &str = match c {
            '&' => "&amp;",
            '<' => "&lt;",
            '>' => "&gt;",
            _ => "",
        };
        let width = if piece.is_empty() { 1 } else { piece.len() };
        if used + width > limit.saturating_sub(1) {
            out.push('…');
            return out;
        }
        used += width;
        if piece.is_empty() {
            out.push(c);
        } else {
            out.push_str(piece);
        }
    }
    out
}

/// `text` cut to at most `limit` characters, ending in `…` when cut.
fn truncate(text: &str, limit: usize) -> String {
    if text.chars().count() <= limit {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(limit.saturating_sub(1)).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_become_entities() {
        assert_eq!(
            escape("<!channel> & <@U1>"),
            "&lt;!channel&gt; &amp; &lt;@U1&gt;"
        );
        assert_eq!(escape("plain *bold*"), "plain *bold*");
    }

    #[test]
    fn a_cut_never_splits_an_entity() {
        let cut = escape_limited("ab<<<<", 6);
        assert_eq!(cut, "ab…");
        let cut = escape_limited("abcdef", 4);
        assert_eq!(cut, "abc…");
        assert_eq!(escape_limited("abcd", 4), "abcd");
        assert_eq!(escape_limited("a&", 6), "a&amp;");
    }

    #[test]
    fn button_values_round_trip_and_refuse_other_shapes() {
        let value = ButtonValue {
            request: "cr_1".into(),
            decision: "approve".into(),
            nonce: "n".into(),
        };
        assert_eq!(ButtonValue::decode(&value.encode().unwrap()), Some(value));
        assert_eq!(
            ButtonValue::decode(r#"{"request":"cr_1","decision":"maybe","nonce":"n"}"#),
            None
        );
        assert_eq!(
            ButtonValue::decode(r#"{"request":"cr_1","decision":"approve"}"#),
            None
        );
        assert_eq!(ButtonValue::decode("cr_1:approve:n"), None);
    }

    #[test]
    fn backtick_runs_cannot_close_the_code_block() {
        let block = code_block(&json!({"cmd": "```<!here>```"}));
        assert_eq!(block.matches("```").count(), 2, "{block}");
        assert!(block.contains("&lt;!here&gt;"));
    }
}
