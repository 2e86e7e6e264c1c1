//! The Block Kit limits the stand-in holds messages to, as Slack's reference states them
//! (<https://docs.slack.dev/reference/block-kit/blocks>): a message Slack would refuse with
//! `invalid_blocks` is refused here too.

use std::collections::HashSet;

use serde_json::Value;

const MAX_BLOCKS: usize = 50;
const MAX_HEADER: usize = 150;
const MAX_SECTION: usize = 3000;
const MAX_FIELDS: usize = 10;
const MAX_FIELD: usize = 2000;
const MAX_BUTTON_TEXT: usize = 75;
const MAX_VALUE: usize = 2000;
const MAX_ACTION_ID: usize = 255;
const MAX_ELEMENTS: usize = 25;

/// Checks `blocks`; the error says which rule it breaks.
pub(super) fn check(blocks: &Value) -> Result<(), String> {
    let blocks = blocks.as_array().ok_or("blocks is not an array")?;
    if blocks.len() > MAX_BLOCKS {
        return Err(format!("more than {MAX_BLOCKS} blocks"));
    }
    blocks.iter().try_for_each(block)
}

fn block(block: &Value) -> Result<(), String> {
    match block.get("type").and_then(Value::as_str) {
        Some("header") => text(block.get("text"), &["plain_text"], MAX_HEADER),
        Some("section") => section(block),
        Some("actions") => actions(block),
        Some("context") => Ok(()),
        Some("divider") => Ok(()),
        Some(other) => Err(format!("the stand-in does not know block type {other:?}")),
        None => Err("a block has no type".to_owned()),
    }
}

fn section(block: &Value) -> Result<(), String> {
    let text_ = block.get("text");
    let fields = block.get("fields").and_then(Value::as_array);
    if text_.is_none() && fields.is_none() {
        return Err("a section has neither text nor fields".to_owned());
    }
    if text_.is_some() {
        text(text_, &["plain_text", "mrkdwn"], MAX_SECTION)?;
    }
    let fields = fields.map(Vec::as_slice).unwrap_or_default();
    if fields.len() > MAX_FIELDS {
        return Err(format!("a section has more than {MAX_FIELDS} fields"));
    }
    fields
        .iter()
        .try_for_each(|field| text(Some(field), &["plain_text", "mrkdwn"], MAX_FIELD))
}

fn actions(block: &Value) -> Result<(), String> {
    let elements = block
        .get("elements")
        .and_then(Value::as_array)
        .ok_or("an actions block has no elements")?;
    if elements.is_empty() || elements.len() > MAX_ELEMENTS {
        return Err(format!(
            "an actions block needs 1 to {MAX_ELEMENTS} elements"
        ));
    }
    let mut ids = HashSet::new();
    for element in elements {
        button(element)?;
        if let Some(id) = element.get("action_id").and_then(Value::as_str)
            && !ids.insert(id)
        {
            return Err(format!("action_id {id:?} appears twice in one block"));
        }
    }
    Ok(())
}

fn button(element: &Value) -> Result<(), String> {
    if element.get("type").and_then(Value::as_str) != Some("button") {
        return Err("the stand-in's actions blocks hold buttons only".to_owned());
    }
    text(element.get("text"), &["plain_text"], MAX_BUTTON_TEXT)?;
    let limited = |key: &str, max: usize| match element.get(key) {
        None => Ok(()),
        Some(Value::String(s)) if s.chars().count() <= max && !s.is_empty() => Ok(()),
        Some(_) => Err(format!(
            "a button's {key} is not a string of 1 to {max} characters"
        )),
    };
    limited("value", MAX_VALUE)?;
    limited("action_id", MAX_ACTION_ID)?;
    match element.get("style").and_then(Value::as_str) {
        None | Some("primary" | "danger") => Ok(()),
        Some(other) => Err(format!(
            "a button's style {other:?} is neither primary nor danger"
        )),
    }
}

fn text(object: Option<&Value>, kinds: &[&str], max: usize) -> Result<(), String> {
    let object = object.ok_or("a text object is missing")?;
    let kind = object
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if !kinds.contains(&kind) {
        return Err(format!("a text object of type {kind:?} where {kinds:?} go"));
    }
    let text = object
        .get("text")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if text.is_empty() || text.chars().count() > max {
        return Err(format!(
            "a text of {} characters (1 to {max})",
            text.chars().count()
        ));
    }
    Ok(())
}
