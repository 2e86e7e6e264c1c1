//! YAML through serde-saphyr, with duplicate keys and alias bombs rejected.
//!
//! Errors never quote the document: a file given as config may be anything the path reaches
//! (a symlink to `~/.ssh/id_rsa`, `/etc/shadow`), and serde-saphyr's own messages show the
//! offending lines as a snippet and some name the key or value they choke on. An error here is
//! `REASON at line L, column C`, where REASON is the parser's fixed description of the problem
//! (`mapping values are not allowed in this context`, an alias budget exceeded, …), `duplicate
//! key `tools`` (the key named only when it is a word of tollgate's own formats), or
//! `invalid YAML` when the library's text could carry the document's. None of the library's
//! advice (which names its own option types) is passed on.

use std::borrow::Cow;

use serde_json::Value;
use serde_saphyr::options::DuplicateKeyPolicy;
use serde_saphyr::{DefaultMessageFormatter, Error, MessageFormatter, SnippetMode};

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
/// `REASON at line L, column C` for invalid YAML, a duplicate mapping key, more than one document,
/// or a document over the alias or event budget; never a piece of `text` (see the module doc).
pub fn parse(text: &str) -> Result<Value, String> {
    parse_from_line(text, 1)
}

/// [`parse`] of YAML that starts on line `first_line` of its file (a SKILL.md frontmatter
/// starts on line 2), so that error lines are the file's.
///
/// # Errors
/// As [`parse`].
pub fn parse_from_line(text: &str, first_line: u64) -> Result<Value, String> {
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
        with_snippet: false,
    };
    serde_saphyr::from_str_with_options::<Lenient>(text, options)
        .map(|lenient| lenient.0)
        .map_err(|e| content_free(&e, first_line.saturating_sub(1)))
}

/// The error as `REASON at line L, column C`, with nothing of the document in it.
fn content_free(error: &Error, line_offset: u64) -> String {
    let text = error.render_with_options(serde_saphyr::render_options! {
        formatter: &ContentFree,
        snippets: SnippetMode::Off,
        line_offset: line_offset,
    });
    // Rendering neutralises control characters already; this also keeps the message one line.
    tollgate_handlers::text::escape_controls(&text)
}

/// Lets through only the messages that are fixed texts: the parser's own descriptions and the
/// variants that carry nothing but a location or a budget. Everything else (serde messages
/// naming a value, duplicate keys with the key, unknown tags, …) becomes a fixed text too.
struct ContentFree;

impl MessageFormatter for ContentFree {
    fn format_message<'a>(&self, err: &'a Error) -> Cow<'a, str> {
        match err {
            Error::ExternalMessage { .. }
            | Error::Eof { .. }
            | Error::Budget { .. }
            | Error::UnknownAnchor { .. }
            | Error::ContainerEndMismatch { .. }
            | Error::UnexpectedSequenceEnd { .. }
            | Error::UnexpectedMappingEnd { .. }
            | Error::InvalidUtf8Input
            | Error::AliasReplayLimitExceeded { .. }
            | Error::AliasExpansionLimitExceeded { .. }
            | Error::AliasReplayStackDepthExceeded { .. } => {
                DefaultMessageFormatter.format_message(err)
            }
            Error::DuplicateMappingKey { key: Some(key), .. } if nameable(key) => {
                Cow::Owned(format!("duplicate key `{key}`"))
            }
            Error::DuplicateMappingKey { .. } => Cow::Borrowed("duplicate key"),
            Error::MultipleDocuments { .. } => Cow::Borrowed("more than one YAML document"),
            _ => Cow::Borrowed("invalid YAML"),
        }
    }
}

/// Keys of tollgate's formats besides hook entries' and event names: hook and agent files,
/// SKILL.md, agent config, sandbox settings, Claude Code's hook shape, hook sources.
const FORMAT_KEYS: [&str; 38] = [
    "hooks",
    "network",
    "standalone",
    "sandbox",
    "allow_cidrs",
    "hidden",
    "sources",
    "shell_tool",
    "writable",
    "env",
    "matcher",
    "type",
    "class_hooks",
    "require_confirmation_for_all",
    "confirmation_tools",
    "model_config_json",
    "description",
    "api_key_env",
    "system_prompt",
    "max_turns",
    "workspace",
    "database",
    "seed",
    "bash_timeout_seconds",
    "metadata",
    "skills",
    "subagents",
    "file",
    "timeout_seconds",
    "skill",
    "plugin",
    "user_config",
    "admin_config",
    "agent_config",
    "builtin",
    "license",
    "version",
    "allowed-tools",
];

/// Whether an error may name `key`: only words of tollgate's own formats (see [`FORMAT_KEYS`],
/// hook entry keys and event names). Any other key may belong to a file that is not config at
/// all (an `/etc/shadow` line reads as a YAML key).
fn nameable(key: &str) -> bool {
    FORMAT_KEYS.contains(&key)
        || crate::entry::ALL_KEYS.contains(&key)
        || key
            .parse::<tollgate_protocol::Event>()
            .is_ok_and(|event| !matches!(event, tollgate_protocol::Event::Custom(_)))
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
