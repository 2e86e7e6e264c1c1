//! Payload truncation for the `HOOK_PAYLOAD` environment variable.
//!
//! A command hook receives its payload twice: in full on stdin, and in the env var
//! `HOOK_PAYLOAD`. Environment variables share a kernel limit with the argument list (and Linux
//! caps one string at 128 KiB), so `HOOK_PAYLOAD` holds at most [`HOOK_PAYLOAD_MAX_BYTES`]
//! (96 KiB) of compact JSON. A hook that needs every byte, and every guard, reads stdin: a long
//! string can push what a guard looks for out of the shortened copy.
//!
//! # The rule
//!
//! Size is the byte length of the compact serialization (`serde_json::to_string`), escapes
//! included. A payload that fits is passed on untouched. Otherwise [`truncate_payload`]:
//!
//! 1. marks the payload: `"payload_truncated": true` is set at the top level of an object; any
//!    other value becomes `{"value": <value>, "payload_truncated": true}`;
//! 2. shortens string values (never keys) longer than one cap, the largest cap that fits (binary
//!    search). A shortened string keeps its first bytes up to a char boundary and ends with
//!    `…[truncated N bytes]`, `N` being the UTF-8 bytes removed;
//! 3. if even the smallest cap does not fit (say 50 000 tiny keys), keeps only the first `K`
//!    entries of every array and object, for the largest `K >= 1` that fits (so the biggest
//!    containers lose most). A cut array ends with the string `…[N more items]`; a cut object
//!    gets the entry `"…": "[N more entries]"`. `event`, `tool_name`, `session_id` and `run_id`
//!    are kept first. Strings are then shortened again, as in 2, with the room left;
//! 4. as a last resort returns `{"payload_truncated": true}` plus those of the top-level string
//!    fields `event`, `tool_name`, `session_id`, `run_id` that fit whole.
//!
//! Worked example, with `max_bytes = 100`:
//!
//! ```
//! use serde_json::json;
//! use tollgate_core::truncate::truncate_payload;
//!
//! let payload = json!({"event": "pre_tool_use", "tool_input": {"sql": "x".repeat(100)}});
//! let out = truncate_payload(&payload, 100);
//! assert!(serde_json::to_string(&out).unwrap().len() <= 100);
//! assert_eq!(out["payload_truncated"], true);
//! assert_eq!(out["event"], "pre_tool_use");
//! let sql = out["tool_input"]["sql"].as_str().unwrap();
//! assert!(sql.starts_with("xxx") && sql.ends_with(" bytes]"));
//! ```

use std::borrow::Cow;

use serde_json::{Map, Value};

/// The most bytes of compact JSON that `HOOK_PAYLOAD` holds (96 KiB).
pub const HOOK_PAYLOAD_MAX_BYTES: usize = 96 * 1024;

/// The key set to `true` on a payload that was shortened.
pub const TRUNCATED_FLAG: &str = "payload_truncated";

/// The smallest `max_bytes` that [`truncate_payload`] always honours: the length of
/// `{"payload_truncated":true}`.
pub const MIN_MAX_BYTES: usize = 26;

/// Top-level string fields kept first when entries must go.
const PRIORITY_KEYS: [&str; 4] = ["event", "tool_name", "session_id", "run_id"];

const MARKER_HEAD: &str = "…[truncated ";
const MARKER_TAIL: &str = " bytes]";

/// Shortens `value` so that its compact JSON takes at most `max_bytes` bytes (see the
/// [module docs](self) for the rule).
///
/// Returns `Cow::Borrowed(value)`, unchanged and without the flag, when it already fits;
/// otherwise an owned, shortened copy carrying `"payload_truncated": true` (a non-object value
/// is wrapped as `{"value": …, "payload_truncated": true}`). An existing top-level
/// `payload_truncated` entry is overwritten. Strings are cut on char boundaries, so the result
/// is always valid UTF-8 JSON.
///
/// The output is at most `max_bytes` long whenever `max_bytes >= MIN_MAX_BYTES` (26). Below
/// that, an oversized payload yields `{"payload_truncated":true}` (26 bytes), which exceeds
/// `max_bytes`.
///
/// Cost: a few serializations of the payload plus ~20 cheap size evaluations per phase.
///
/// # Panics
///
/// Never.
#[must_use]
pub fn truncate_payload(value: &Value, max_bytes: usize) -> Cow<'_, Value> {
    if fits(value, max_bytes) {
        return Cow::Borrowed(value);
    }
    let shortened = fit_strings(value, max_bytes)
        .or_else(|| fit_entries(value, max_bytes))
        .unwrap_or_else(|| last_resort(value, max_bytes));
    Cow::Owned(shortened)
}

/// Whether the compact serialization takes at most `max_bytes`, measured by serde_json itself.
fn fits(value: &Value, max_bytes: usize) -> bool {
    json_len_upto(value, max_bytes) <= max_bytes
}

/// Bytes of the compact serialization; serializing stops early once past `limit`, and any
/// value above `limit` may then be returned.
fn json_len_upto(value: &Value, limit: usize) -> usize {
    struct Counter(usize, usize);
    impl std::io::Write for Counter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            if self.0 > self.1 {
                return Err(std::io::Error::other("over the limit"));
            }
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter(0, limit);
    match serde_json::to_writer(&mut counter, value) {
        Ok(()) => counter.0,
        Err(_) => usize::MAX,
    }
}

/// Sets the flag (object) or wraps the value (anything else).
fn flagged(value: Value) -> Value {
    let mut map = match value {
        Value::Object(map) => map,
        other => Map::from_iter([("value".to_owned(), other)]),
    };
    map.insert(TRUNCATED_FLAG.to_owned(), Value::Bool(true));
    Value::Object(map)
}

// ---- phase 1: shorten strings -------------------------------------------------------------

/// A flagged copy of `value` with every string cut to the largest common cap that fits. Only
/// the kept bytes are copied.
fn fit_strings(value: &Value, max_bytes: usize) -> Option<Value> {
    let cap = best_cap(&StrSizes::of_flagged(value), max_bytes)?;
    let shortened = flagged(cut_copy(value, cap));
    fits(&shortened, max_bytes).then_some(shortened)
}

/// Largest cap (bytes) whose predicted size fits, or `None` when even cap 0 is too big.
fn best_cap(sizes: &StrSizes<'_>, max_bytes: usize) -> Option<usize> {
    if sizes.size_at(0) > max_bytes {
        return None;
    }
    let (mut lo, mut hi) = (0, sizes.longest);
    if sizes.size_at(hi) <= max_bytes {
        return Some(hi);
    }
    // Invariant: `lo` fits, `hi` does not.
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if sizes.size_at(mid) <= max_bytes {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Some(lo)
}

/// Where a string cut at `cap` would end, and how many bytes it would lose, if cutting it
/// makes it shorter (the marker costs bytes too).
fn cut_point(s: &str, cap: usize) -> Option<(usize, usize)> {
    if s.len() <= cap {
        return None;
    }
    let cut = s.floor_char_boundary(cap);
    let removed = s.len() - cut;
    (removed > marker_len(removed)).then_some((cut, removed))
}

fn marker_len(removed: usize) -> usize {
    MARKER_HEAD.len() + removed.to_string().len() + MARKER_TAIL.len()
}

/// A copy of `value` with every string cut at `cap` (plus a marker), copying only what is kept.
fn cut_copy(value: &Value, cap: usize) -> Value {
    match value {
        Value::String(s) => Value::String(match cut_point(s, cap) {
            Some((cut, removed)) => format!("{}{MARKER_HEAD}{removed}{MARKER_TAIL}", &s[..cut]),
            None => s.clone(),
        }),
        Value::Array(items) => Value::Array(items.iter().map(|v| cut_copy(v, cap)).collect()),
        Value::Object(map) => {
            let entries = map.iter().map(|(k, v)| (k.clone(), cut_copy(v, cap)));
            Value::Object(entries.collect())
        }
        other => other.clone(),
    }
}

/// Predicts the serialized size for any string cap without re-serializing: the size of the
/// tree with every string value emptied, plus each string's own escaped size.
struct StrSizes<'a> {
    skeleton: usize,
    longest: usize,
    strings: Vec<StrInfo<'a>>,
}

/// One string value and where JSON escaping adds bytes to it.
struct StrInfo<'a> {
    s: &'a str,
    /// `blocks[k]`: escape bytes added by `s[..k * ESCAPE_BLOCK]`. One `usize` per block keeps
    /// the memory at an eighth of the string, however many bytes need escaping.
    blocks: Vec<usize>,
}

/// Granularity of the escape prefix sums, in bytes.
const ESCAPE_BLOCK: usize = 64;

impl<'a> StrSizes<'a> {
    /// Sizes of `flagged(value)` (the flag or the wrapper is part of the skeleton).
    fn of_flagged(value: &'a Value) -> Self {
        let mut strings = Vec::new();
        collect_strings(value, &mut strings);
        let longest = strings.iter().map(|i| i.s.len()).max().unwrap_or(0);
        Self {
            skeleton: json_len_upto(&flagged(skeleton(value)), usize::MAX),
            longest,
            strings,
        }
    }

    fn size_at(&self, cap: usize) -> usize {
        let strings: usize = self.strings.iter().map(|i| i.size_at(cap)).sum();
        self.skeleton.saturating_add(strings)
    }
}

/// A copy of `value` with every string value emptied (keys kept).
fn skeleton(value: &Value) -> Value {
    match value {
        Value::String(_) => Value::String(String::new()),
        Value::Array(items) => Value::Array(items.iter().map(skeleton).collect()),
        Value::Object(map) => {
            let entries = map.iter().map(|(k, v)| (k.clone(), skeleton(v)));
            Value::Object(entries.collect())
        }
        other => other.clone(),
    }
}

fn collect_strings<'a>(value: &'a Value, out: &mut Vec<StrInfo<'a>>) {
    match value {
        Value::String(s) => out.push(StrInfo::new(s)),
        Value::Array(items) => items.iter().for_each(|v| collect_strings(v, out)),
        Value::Object(map) => map.values().for_each(|v| collect_strings(v, out)),
        _ => {}
    }
}

impl<'a> StrInfo<'a> {
    fn new(s: &'a str) -> Self {
        let mut blocks = Vec::with_capacity(s.len() / ESCAPE_BLOCK + 2);
        let mut sum = 0;
        blocks.push(sum);
        for chunk in s.as_bytes().chunks(ESCAPE_BLOCK) {
            sum += escape_extra_of(chunk);
            blocks.push(sum);
        }
        Self { s, blocks }
    }

    /// Escape bytes added by the bytes before `end`.
    fn extra_before(&self, end: usize) -> usize {
        let block = end / ESCAPE_BLOCK;
        let start = block * ESCAPE_BLOCK;
        let tail = self.s.as_bytes().get(start..end).map_or(0, escape_extra_of);
        self.blocks.get(block).copied().unwrap_or(0) + tail
    }

    /// Bytes the string adds to the skeleton (which already holds its quotes) at `cap`.
    fn size_at(&self, cap: usize) -> usize {
        match cut_point(self.s, cap) {
            Some((cut, removed)) => cut + self.extra_before(cut) + marker_len(removed),
            None => self.s.len() + self.extra_before(self.s.len()),
        }
    }
}

fn escape_extra_of(bytes: &[u8]) -> usize {
    bytes.iter().map(|&b| escape_extra(b)).sum()
}

/// Bytes serde_json's escaping adds to one byte of a string (`\n` → 2 bytes, `\u0000` → 6).
fn escape_extra(byte: u8) -> usize {
    match byte {
        b'"' | b'\\' | 0x08 | 0x09 | 0x0A | 0x0C | 0x0D => 1,
        0x00..=0x1F => 5,
        _ => 0,
    }
}

// ---- phase 2: drop trailing entries -------------------------------------------------------

/// Keeps the first `K` entries of every container, for the largest `K` that fits.
fn fit_entries(value: &Value, max_bytes: usize) -> Option<Value> {
    let fits = |k| best_cap(&StrSizes::of_flagged(&trim(value, k)), max_bytes).is_some();
    // With `K = 0` nothing but markers would be left: the last resort says more.
    if !fits(1) {
        return None;
    }
    let (mut lo, mut hi) = (1, widest(value));
    // Invariant: `lo` fits, `hi` does not (the untrimmed value failed phase 1).
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if fits(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    fit_strings(&trim(value, lo), max_bytes)
}

/// Entries of the largest array or object in the tree.
fn widest(value: &Value) -> usize {
    match value {
        Value::Array(items) => items.iter().map(widest).fold(items.len(), usize::max),
        Value::Object(map) => map.values().map(widest).fold(map.len(), usize::max),
        _ => 0,
    }
}

/// A copy of `value` with every container cut to its first `k` entries plus a marker.
fn trim(value: &Value, k: usize) -> Value {
    match value {
        Value::Array(items) => {
            let mut kept: Vec<Value> = items.iter().take(k).map(|v| trim(v, k)).collect();
            if items.len() > k {
                kept.push(Value::String(format!("…[{} more items]", items.len() - k)));
            }
            Value::Array(kept)
        }
        Value::Object(map) => Value::Object(trim_map(map, k)),
        other => other.clone(),
    }
}

fn trim_map(map: &Map<String, Value>, k: usize) -> Map<String, Value> {
    let priority = PRIORITY_KEYS
        .iter()
        .filter_map(|&key| map.get_key_value(key));
    let rest = map
        .iter()
        .filter(|(key, _)| !PRIORITY_KEYS.contains(&key.as_str()));
    let mut kept: Map<String, Value> = priority
        .chain(rest)
        .take(k)
        .map(|(key, v)| (key.clone(), trim(v, k)))
        .collect();
    if map.len() > k {
        let note = Value::String(format!("[{} more entries]", map.len() - k));
        kept.entry("…").or_insert(note);
    }
    kept
}

// ---- phase 3: last resort -----------------------------------------------------------------

/// `{"payload_truncated": true}` plus whichever identifying string fields fit whole.
fn last_resort(value: &Value, max_bytes: usize) -> Value {
    let mut map = Map::from_iter([(TRUNCATED_FLAG.to_owned(), Value::Bool(true))]);
    for key in PRIORITY_KEYS {
        if let Some(field @ Value::String(_)) = value.get(key) {
            map.insert(key.to_owned(), field.clone());
            if serde_json::to_string(&map).map_or(true, |json| json.len() > max_bytes) {
                map.remove(key);
            }
        }
    }
    Value::Object(map)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marker_len_matches_the_marker() {
        for removed in [1, 9, 10, 99, 100, 123_456] {
            let marker = format!("{MARKER_HEAD}{removed}{MARKER_TAIL}");
            assert_eq!(marker_len(removed), marker.len());
        }
    }

    #[test]
    fn escape_model_matches_serde_json() {
        for b in 0u8..=0x7F {
            let s = char::from(b).to_string();
            let measured = serde_json::to_string(&s).unwrap().len() - 2;
            assert_eq!(1 + escape_extra(b), measured, "byte {b:#04x}");
        }
    }

    #[test]
    fn predicted_size_matches_measured_size() {
        let value = serde_json::json!({
            "a": "\u{0}\"\\\n😀漢字".repeat(50), "b": ["x".repeat(300), "\t".repeat(70)],
        });
        let sizes = StrSizes::of_flagged(&value);
        for cap in [0, 1, 3, 7, 40, 100, 299, 1000] {
            let cut = flagged(cut_copy(&value, cap));
            assert_eq!(
                sizes.size_at(cap),
                json_len_upto(&cut, usize::MAX),
                "cap {cap}"
            );
        }
    }
}
