//! The cards (JSON 2.0) and callback replies the channel shows.
//!
//! Text that comes from the request (tool, agent, arguments, reasons, notes, names) goes into
//! `plain_text` elements, which the client never reads as markup, so an argument holding
//! `<at id=all></at>` or `[link](…)` shows as those characters. The only `markdown` element
//! is the final status line, built from a checked platform id (`<at id=…></at>`) and escaped
//! names.

use serde_json::{Value, json};

use super::config::FeishuApprovers;
use crate::channel::{Answer, Click, ClickOutcome};
use crate::model::{Request, Status};
use crate::{canonical_json, format_ms};

/// At most this many characters of the arguments' canonical JSON show on a card.
pub(super) const ARGUMENTS_SHOWN: usize = 600;
/// At most this many characters of one reason, note, tool or agent name.
const LINE_SHOWN: usize = 300;
/// At most this many reasons.
const REASONS_SHOWN: usize = 5;

/// Renders cards for one channel's approvers.
pub(super) struct Cards<'a> {
    pub(super) approvers: &'a FeishuApprovers,
}

impl Cards<'_> {
    /// The card for a pending request: what asks, why, until when, and Approve / Reject
    /// buttons whose values hold only the request id, the decision and `nonce`.
    pub(super) fn pending(&self, request: &Request, nonce: &str) -> Value {
        let mut elements = facts(request);
        elements.push(plain(format!(
            "Expires at {}",
            format_ms(request.expires_at)
        )));
        elements.push(json!({"tag": "hr"}));
        elements.push(json!({
            "tag": "column_set",
            "columns": [
                column(button(&request.id, "approve", nonce)),
                column(button(&request.id, "reject", nonce)),
            ],
        }));
        card(
            format!("Approve {}?", clip(&request.tool_name, LINE_SHOWN)),
            "orange",
            elements,
        )
    }

    /// The card for a request that left `pending`: the same facts, how it ended, no buttons.
    /// `clicked_by` is the platform id of the operator whose click decided it, if one did.
    pub(super) fn last(&self, request: &Request, clicked_by: Option<&str>) -> Value {
        let mut elements = facts(request);
        elements.push(json!({"tag": "hr"}));
        elements.push(json!({
            "tag": "markdown",
            "content": self.outcome_line(request, clicked_by),
        }));
        if let Some(note) = request.response_note.as_deref().filter(|n| !n.is_empty()) {
            elements.push(plain(format!("Note: {}", clip(note, LINE_SHOWN))));
        }
        if request.edited_arguments.is_some() {
            elements.push(plain("The approver edited the arguments before approving."));
        }
        let (word, template) = match request.status {
            Status::Pending => ("Waiting", "orange"),
            Status::Approved => ("Approved", "green"),
            Status::Rejected => ("Rejected", "red"),
            Status::Expired => ("Expired", "grey"),
            Status::Cancelled => ("Cancelled", "grey"),
        };
        let title = format!("{word}: {}", clip(&request.tool_name, LINE_SHOWN));
        card(title, template, elements)
    }

    /// `Approved by <at id=ou_…></at> at 2026-…Z`, or `Expired at …`, as card markdown.
    fn outcome_line(&self, request: &Request, clicked_by: Option<&str>) -> String {
        let at = request.responded_at.map(format_ms).unwrap_or_default();
        match request.status {
            Status::Pending => "Waiting for a decision.".to_owned(),
            Status::Approved | Status::Rejected => {
                let verb = if request.status == Status::Approved {
                    "Approved"
                } else {
                    "Rejected"
                };
                let who = self.mention(request, clicked_by);
                format!("{verb} by {who}{} at {at}", self.via(request))
            }
            Status::Expired => format!("Expired at {at}: nobody decided, so the call was denied."),
            Status::Cancelled => {
                format!("Cancelled at {at}: the run stopped waiting, so the call was denied.")
            }
        }
    }

    /// The decider as a mention when their platform id is known, else their escaped name.
    fn mention(&self, request: &Request, clicked_by: Option<&str>) -> String {
        let name = request.responded_by.as_deref().unwrap_or("someone");
        let id = clicked_by.or_else(|| self.approvers.id_of(name));
        match id.filter(|id| is_plain_id(id)) {
            Some(id) => format!("<at id={id}></at>"),
            None => escape_markdown(&clip(name, LINE_SHOWN)),
        }
    }

    fn via(&self, request: &Request) -> String {
        match request.channel.as_deref() {
            Some("feishu") | None => String::new(),
            Some(channel) => format!(" (via {})", escape_markdown(&clip(channel, 40))),
        }
    }

    /// The reply to `click` once the server applied it.
    pub(super) fn answer(&self, click: &Click, outcome: &ClickOutcome) -> Answer {
        let body = match outcome {
            ClickOutcome::Decided(request) => reply(
                toast("success", &decided_toast(request)),
                Some(self.last(request, Some(&click.operator))),
            ),
            ClickOutcome::AlreadyDecided(request) => reply(
                toast("info", &already_toast(request)),
                Some(self.last(request, None)),
            ),
            ClickOutcome::NotApprover(_) => reply(
                toast("error", "You are not an approver of this request."),
                None,
            ),
            ClickOutcome::Unknown => reply(
                toast(
                    "error",
                    "tollgate does not know this request, or this card is out of date.",
                ),
                None,
            ),
            ClickOutcome::Failed => reply(
                toast(
                    "error",
                    "tollgate could not record the decision. Try again in a moment.",
                ),
                None,
            ),
        };
        Answer {
            status: 200,
            body: Some(body),
        }
    }
}

fn decided_toast(request: &Request) -> String {
    let tool = clip(&request.tool_name, 60);
    match request.status {
        Status::Approved => format!("Approved: {tool} may run."),
        Status::Rejected => format!("Rejected: {tool} will not run."),
        other => format!("The request is {other}."),
    }
}

fn already_toast(request: &Request) -> String {
    let at = request.responded_at.map(format_ms).unwrap_or_default();
    let by = clip(request.responded_by.as_deref().unwrap_or("someone"), 60);
    match request.status {
        Status::Approved => format!("Already approved by {by} at {at}."),
        Status::Rejected => format!("Already rejected by {by} at {at}."),
        Status::Expired => format!("Already expired at {at}."),
        Status::Cancelled => format!("Already cancelled at {at}."),
        Status::Pending => "Still waiting for a decision.".to_owned(),
    }
}

fn reply(toast: Value, card: Option<Value>) -> Value {
    match card {
        Some(card) => json!({"toast": toast, "card": {"type": "raw", "data": card}}),
        None => json!({ "toast": toast }),
    }
}

fn toast(kind: &str, content: &str) -> Value {
    json!({"type": kind, "content": content})
}

/// What every card shows: the tool, the agent, the request, the arguments, the reasons.
fn facts(request: &Request) -> Vec<Value> {
    let mut elements = vec![
        plain(format!(
            "Tool: {}\nAgent: {}\nRequest: {}",
            clip(&request.tool_name, LINE_SHOWN),
            clip(&request.agent, LINE_SHOWN),
            request.id
        )),
        plain(format!("Arguments: {}", summary(&request.arguments))),
    ];
    let reasons: Vec<String> = request
        .reasons
        .iter()
        .take(REASONS_SHOWN)
        .map(|reason| format!("• {}", clip(reason, LINE_SHOWN)))
        .collect();
    if !reasons.is_empty() {
        elements.push(plain(format!("Why:\n{}", reasons.join("\n"))));
    }
    elements
}

/// The arguments' canonical JSON, cut to [`ARGUMENTS_SHOWN`] characters.
pub(super) fn summary(arguments: &Value) -> String {
    let text = canonical_json(arguments);
    if text.chars().count() <= ARGUMENTS_SHOWN {
        return text;
    }
    format!(
        "{} (cut; {} bytes in all)",
        clip(&text, ARGUMENTS_SHOWN),
        text.len()
    )
}

fn card(title: String, template: &str, elements: Vec<Value>) -> Value {
    json!({
        "schema": "2.0",
        "config": {"update_multi": true},
        "header": {
            "title": {"tag": "plain_text", "content": title},
            "subtitle": {"tag": "plain_text", "content": "tollgate approval"},
            "template": template,
        },
        "body": {"elements": elements},
    })
}

fn plain(content: impl Into<String>) -> Value {
    json!({"tag": "div", "text": {"tag": "plain_text", "content": content.into()}})
}

fn column(element: Value) -> Value {
    json!({"tag": "column", "width": "auto", "elements": [element]})
}

fn button(request_id: &str, decision: &str, nonce: &str) -> Value {
    let (label, style) = if decision == "approve" {
        ("Approve", "primary_filled")
    } else {
        ("Reject", "danger")
    };
    json!({
        "tag": "button",
        "text": {"tag": "plain_text", "content": label},
        "type": style,
        "behaviors": [{
            "type": "callback",
            "value": {"request_id": request_id, "decision": decision, "nonce": nonce},
        }],
    })
}

/// `text` cut to `max` characters (an ellipsis marks the cut), on one line.
fn clip(text: &str, max: usize) -> String {
    let one_line: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if one_line.chars().count() <= max {
        return one_line;
    }
    let mut cut: String = one_line.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// Platform ids (`ou_…`, `on_…`) are letters, digits, `_` and `-`; anything else (and
/// `all`, which mentions everyone) is not put inside an `<at>` tag.
fn is_plain_id(id: &str) -> bool {
    !id.is_empty()
        && id != "all"
        && id.len() <= 128
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Card markdown with every character that could start markup written as an HTML entity.
fn escape_markdown(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_ascii_punctuation() {
            out.push_str(&format!("&#{};", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_escapes_every_punctuation_mark() {
        assert_eq!(escape_markdown("a<b>*c*"), "a&#60;b&#62;&#42;c&#42;");
        assert_eq!(escape_markdown("web:bob"), "web&#58;bob");
        assert_eq!(escape_markdown("張三"), "張三");
    }

    #[test]
    fn clips_keep_one_line() {
        assert_eq!(clip("a\nb", 10), "a b");
        assert_eq!(clip("abcdef", 4), "abc…");
        assert_eq!(clip("abcd", 4), "abcd");
    }

    #[test]
    fn only_plain_ids_are_mentioned() {
        assert!(is_plain_id("ou_3c14f3a59eaf2825dbe25359f15"));
        assert!(!is_plain_id("all></at><at id=all"));
        assert!(!is_plain_id("all"));
        assert!(!is_plain_id(""));
    }
}
