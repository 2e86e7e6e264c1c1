//! YAML through serde-saphyr, with duplicate keys and alias bombs rejected.

use serde_json::Value;
use serde_saphyr::options::DuplicateKeyPolicy;

/// Most alias (`*ref`) uses in one document. Hook config needs few, if any.
pub const MAX_ALIASES: usize = 64;
/// Most parser events replayed from aliases in one document: a billion-laughs document
/// exceeds it after a few levels.
pub const MAX_REPLAYED_EVENTS: usize = 10_000;
/// Most parser events in one document.
pub const MAX_EVENTS: usize = 200_000;

/// Parses one YAML document into a JSON value (the raw, lenient form validation starts from).
/// An empty document is `null`.
///
/// # Errors
/// The parser's message for invalid YAML, a duplicate mapping key, more than one document, or
/// a document over the alias or event budget.
pub fn parse(text: &str) -> Result<Value, String> {
    if text.trim().is_empty() {
        return Ok(Value::Null);
    }
    let options = serde_saphyr::options! {
        budget: serde_saphyr::budget! {
            max_aliases: MAX_ALIASES,
            max_anchors: MAX_ALIASES,
            max_events: MAX_EVENTS,
            max_documents: 1,
        },
        alias_limits: serde_saphyr::alias_limits! {
            max_total_replayed_events: MAX_REPLAYED_EVENTS,
            max_replay_stack_depth: 16,
        },
        duplicate_keys: DuplicateKeyPolicy::Error,
        // YAML 1.1 booleans would turn `script: y` or a tool named `no` into a boolean.
        strict_booleans: true,
    };
    serde_saphyr::from_str_with_options::<Value>(text, options).map_err(|e| e.to_string())
}
