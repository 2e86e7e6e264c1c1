//! Validation of single values: each returns the typed value or why it was refused.

use serde_json::Value;
use tollgate_core::{HookTimeout, ToolMatcher};
use tollgate_protocol::FailureMode;

/// A short description of a value's YAML/JSON type, for messages.
pub(crate) fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

/// A non-empty string.
pub(crate) fn text(value: &Value) -> Result<String, String> {
    match value {
        Value::String(s) if !s.trim().is_empty() => Ok(s.clone()),
        Value::String(_) => Err("must not be empty".into()),
        other => Err(format!("must be a string, found {}", type_name(other))),
    }
}

/// `tools:`: one glob or a non-empty list of globs, each of which compiles. Anything else is
/// refused, never widened to match-all.
pub(crate) fn tools(value: &Value) -> Result<Vec<String>, String> {
    let globs = match value {
        Value::String(s) => vec![s.clone()],
        Value::Array(items) if items.is_empty() => {
            return Err(
                "is an empty list, which would match no tool; remove `tools` to match \
                 every tool, or list globs"
                    .into(),
            );
        }
        Value::Array(items) => items
            .iter()
            .map(|item| match item {
                Value::String(s) => Ok(s.clone()),
                other => Err(format!(
                    "must list glob strings, found {} in the list",
                    type_name(other)
                )),
            })
            .collect::<Result<_, _>>()?,
        other => {
            return Err(format!(
                "must be a glob or a list of globs, found {}",
                type_name(other)
            ));
        }
    };
    // Tool names have no blanks: an empty glob or one with surrounding blanks matches no tool,
    // so the hook would silently never run (for a fail_closed guard, a gate that is not there).
    if let Some(glob) = globs
        .iter()
        .find(|g| g.is_empty() || g.trim() != g.as_str())
    {
        return Err(format!(
            "glob {glob:?} is empty or has surrounding blanks, which would match no tool"
        ));
    }
    ToolMatcher::new(&globs).map_err(|e| e.to_string())?;
    Ok(globs)
}

/// `failure_mode:`: `fail_open` or `fail_closed`, exactly.
pub(crate) fn failure_mode(value: &Value) -> Result<FailureMode, String> {
    match value.as_str() {
        Some("fail_open") => Ok(FailureMode::FailOpen),
        Some("fail_closed") => Ok(FailureMode::FailClosed),
        Some(other) => Err(
            match crate::suggest::closest(other, &["fail_open", "fail_closed"]) {
                Some(meant) => format!("unknown failure mode `{other}` (did you mean `{meant}`?)"),
                None => format!(
                    "unknown failure mode `{other}` (expected `fail_open` or `fail_closed`)"
                ),
            },
        ),
        None => Err(format!(
            "must be `fail_open` or `fail_closed`, found {}",
            type_name(value)
        )),
    }
}

/// `timeout:`: an integer number of seconds, 1–600.
pub(crate) fn timeout(value: &Value) -> Result<HookTimeout, String> {
    let range = format!(
        "an integer number of seconds from {} to {}",
        HookTimeout::MIN_SECS,
        HookTimeout::MAX_SECS
    );
    match value.as_u64() {
        Some(secs) => HookTimeout::from_secs(secs)
            .map_err(|_| format!("{secs} is out of range: must be {range}")),
        None => Err(format!("must be {range}, found {}", shown(value))),
    }
}

/// `priority:`: an integer that fits in 32 bits.
pub(crate) fn priority(value: &Value) -> Result<i32, String> {
    value
        .as_i64()
        .and_then(|p| i32::try_from(p).ok())
        .ok_or_else(|| format!("must be a 32-bit integer, found {}", shown(value)))
}

/// A boolean. The value is not quoted in the error, only its type: top-level keys of an admin
/// file are read before anything says the file is a hook file at all.
pub(crate) fn boolean(value: &Value) -> Result<bool, String> {
    value
        .as_bool()
        .ok_or_else(|| format!("must be true or false, found {}", type_name(value)))
}

/// `secret:`: exactly one `${NAME}` environment reference (literal secrets are refused and
/// not echoed).
pub(crate) fn secret(value: &Value) -> Result<String, String> {
    let spec = value.as_str().unwrap_or_default();
    let name = spec
        .strip_prefix("${")
        .and_then(|rest| rest.strip_suffix('}'))
        .unwrap_or_default();
    let valid = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if valid {
        Ok(spec.to_owned())
    } else {
        Err(
            "must be an environment reference like `${HOOK_SECRET}`; literal secrets are refused"
                .into(),
        )
    }
}

/// A value for a message: strings quoted, others as JSON (shortened).
fn shown(value: &Value) -> String {
    let mut text = value.to_string();
    if text.len() > 40 {
        let cut = (0..=40)
            .rev()
            .find(|&i| text.is_char_boundary(i))
            .unwrap_or(0);
        text.truncate(cut);
        text.push('…');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tools_never_widen() {
        assert_eq!(tools(&json!("bash_*")).unwrap(), ["bash_*"]);
        assert_eq!(tools(&json!(["a", "b"])).unwrap(), ["a", "b"]);
        for bad in [
            json!(42),
            json!([]),
            json!({"a": 1}),
            json!(null),
            json!(["a", 1]),
            json!(""),
            json!([""]),
            json!([" "]),
            json!("bash_* "),
        ] {
            assert!(tools(&bad).is_err(), "{bad}");
        }
        assert!(tools(&json!("tool_[a")).is_err());
    }

    #[test]
    fn timeouts_are_whole_seconds_in_range() {
        assert_eq!(timeout(&json!(5)).unwrap().duration().as_secs(), 5);
        assert_eq!(timeout(&json!(600)).unwrap().duration().as_secs(), 600);
        for bad in [json!(0), json!(601), json!("10s"), json!(1.5), json!(-3)] {
            assert!(timeout(&bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn secrets_are_env_references_only() {
        assert!(secret(&json!("${HOOK_SECRET}")).is_ok());
        for bad in [
            json!("hunter2"),
            json!("${}"),
            json!("${1X}"),
            json!("$X"),
            json!(3),
        ] {
            let err = secret(&bad).unwrap_err();
            assert!(!err.contains("hunter2"));
        }
    }

    #[test]
    fn failure_mode_typos_are_refused() {
        assert_eq!(
            failure_mode(&json!("fail_closed")),
            Ok(FailureMode::FailClosed)
        );
        assert!(failure_mode(&json!("fail-closed")).is_err());
    }
}
