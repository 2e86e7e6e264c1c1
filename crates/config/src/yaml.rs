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
        // `.inf` / `.nan` reach the visitor as strings, so validation refuses just that entry.
        non_finite_float_policy: serde_saphyr::NonFiniteFloatPolicy::AsString,
    };
    serde_saphyr::from_str_with_options::<Lenient>(text, options)
        .map(|lenient| lenient.0)
        .map_err(|e| e.to_string())
}

/// A JSON value read from YAML without failing on what YAML allows and JSON does not, so that
/// one odd value costs only its own entry (validation then refuses it with a warning) instead
/// of the whole file: non-finite floats (`.inf`, `.nan`) become strings, and mapping keys that
/// are not strings (`null:`, `? [a, b]`, `1:`) become their JSON text.
struct Lenient(Value);

impl<'de> serde::Deserialize<'de> for Lenient {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(LenientVisitor).map(Lenient)
    }
}

struct LenientVisitor;

impl<'de> serde::de::Visitor<'de> for LenientVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any YAML value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v)
            .map_or_else(|| Value::String(v.to_string()), Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(Lenient(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = serde_json::Map::new();
        while let Some((Lenient(key), Lenient(value))) = map.next_entry()? {
            let key = match key {
                Value::String(key) => key,
                other => other.to_string(),
            };
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}
