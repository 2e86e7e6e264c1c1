//! Claude Code's hook shape: `{matcher: "Bash|Write", hooks: [{type: command, command, timeout}]}`.

use serde_json::{Map, Value};

use crate::entry::EntryCtx;
use crate::spec::{HookSpec, SpecKind};
use crate::warning::Warning;
use crate::{fields, suggest};

/// Whether an entry is in Claude Code's shape (it has `matcher` or `hooks`).
pub(crate) fn is_claude_group(value: &Value) -> bool {
    value
        .as_object()
        .is_some_and(|m| m.contains_key("matcher") || m.contains_key("hooks"))
}

/// Translates a Claude Code matcher into `tools` globs: `""`/`*`/absent match every tool
/// (`None`), `A|B` becomes `[A, B]`. Anything with other regex syntax is refused rather than
/// guessed at.
pub(crate) fn matcher_globs(matcher: Option<&Value>) -> Result<Option<Vec<String>>, String> {
    let text = match matcher {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::String(s)) => s.trim(),
        Some(other) => {
            return Err(format!(
                "must be a string, found {}",
                fields::type_name(other)
            ));
        }
    };
    if text.is_empty() || text == "*" {
        return Ok(None);
    }
    let names: Vec<String> = text.split('|').map(|n| n.trim().to_owned()).collect();
    let plain = |n: &String| {
        !n.is_empty()
            && n.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'))
    };
    if names.iter().all(plain) {
        Ok(Some(names))
    } else {
        Err(format!(
            "`{text}` uses regex syntax tollgate does not translate (only `A|B` alternations of \
             tool names, `*` or empty); use `tools` globs instead"
        ))
    }
}

/// Validates one Claude Code group at `path`: one spec or one warning per inner hook.
pub(crate) fn parse_group(
    ctx: &EntryCtx<'_>,
    path: &str,
    value: &Value,
) -> Vec<Result<HookSpec, Warning>> {
    let skip_all = |at: String, why: String| vec![Err(ctx.warn(at, format!("{why}; skipped")))];
    let Some(map) = value.as_object() else {
        return skip_all(path.to_owned(), "not a mapping".into());
    };
    if let Some(key) = map
        .keys()
        .find(|k| !matches!(k.as_str(), "matcher" | "hooks"))
    {
        let why = suggest::unknown_key(key, &["matcher", "hooks"]);
        return skip_all(format!("{path}.{key}"), why);
    }
    let tools = match matcher_globs(map.get("matcher")) {
        Ok(tools) => tools,
        Err(why) => return skip_all(format!("{path}.matcher"), why),
    };
    let Some(Value::Array(hooks)) = map.get("hooks") else {
        return skip_all(format!("{path}.hooks"), "must be a list of hooks".into());
    };
    hooks
        .iter()
        .enumerate()
        .map(|(i, hook)| parse_hook(ctx, &format!("{path}.hooks[{i}]"), hook, &tools))
        .collect()
}

fn parse_hook(
    ctx: &EntryCtx<'_>,
    path: &str,
    value: &Value,
    tools: &Option<Vec<String>>,
) -> Result<HookSpec, Warning> {
    let skip = |at: String, why: String| ctx.warn(at, format!("{why}; the hook is skipped"));
    let empty = Map::new();
    let map = value.as_object().unwrap_or(&empty);
    if let Some(key) = map
        .keys()
        .find(|k| !matches!(k.as_str(), "type" | "command" | "timeout"))
    {
        return Err(skip(
            format!("{path}.{key}"),
            suggest::unknown_key(key, &["type", "command", "timeout"]),
        ));
    }
    match map.get("type").and_then(Value::as_str) {
        Some("command") => {}
        Some(other) => {
            return Err(skip(
                format!("{path}.type"),
                format!("hook type `{other}` is not supported (only `command`)"),
            ));
        }
        None => return Err(skip(path.to_owned(), "needs `type: command`".into())),
    }
    let line = map
        .get("command")
        .ok_or_else(|| "missing".to_owned())
        .and_then(fields::text)
        .map_err(|e| skip(format!("{path}.command"), e))?;
    let timeout = match map.get("timeout") {
        None => Default::default(),
        Some(v) => fields::timeout(v).map_err(|e| skip(format!("{path}.timeout"), e))?,
    };
    let suffix = &path[path.find('[').unwrap_or(path.len())..];
    Ok(HookSpec {
        sandbox: None,
        event: ctx.event.clone(),
        name: ctx.default_name(suffix),
        kind: SpecKind::Command { line },
        source: ctx.source,
        tools: tools.clone(),
        priority: 0,
        timeout,
        failure_mode: None,
        fire_and_forget: false,
        file: ctx.file.to_owned(),
        dir: ctx.dir.clone(),
        entry: path.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn matchers_translate_or_are_refused() {
        assert_eq!(matcher_globs(None).unwrap(), None);
        assert_eq!(matcher_globs(Some(&json!("*"))).unwrap(), None);
        assert_eq!(matcher_globs(Some(&json!(""))).unwrap(), None);
        assert_eq!(
            matcher_globs(Some(&json!("Bash|Write"))).unwrap(),
            Some(vec!["Bash".to_owned(), "Write".to_owned()])
        );
        for bad in ["mcp__.*", "Bash(git:*)", "^Bash$", "Write|", "Edit|[ab]"] {
            assert!(matcher_globs(Some(&json!(bad))).is_err(), "{bad}");
        }
    }
}
