//! Claude Code's hook shape: `{matcher, hooks: [{type, command | url | prompt, timeout, if,
//! async, once, statusMessage, …}]}` groups (settings.json, a plugin's `hooks/hooks.json`, a
//! skill's frontmatter). Every hook of such a group follows Claude Code's conventions
//! ([`Dialect::ClaudeCode`]): it matches Claude Code's tool names, receives Claude Code's
//! payload and answers as Claude Code's hooks do (`docs/claude-code.md`).

use serde_json::{Map, Value};
use tollgate_core::HookTimeout;
use tollgate_handlers::claude::{Matcher, Rule};
use tollgate_handlers::llm::Depth;
use tollgate_protocol::claude_code::hook_event_name;
use tollgate_protocol::{FailureMode, HookSource};

use crate::entry::EntryCtx;
use crate::spec::{ClaudeSpec, Dialect, HookSpec, SpecKind};
use crate::warning::Warning;
use crate::{fields, suggest};

/// Keys a group may have.
const GROUP_KEYS: [&str; 2] = ["matcher", "hooks"];
/// Keys every hook of a group may have.
const HOOK_KEYS: [&str; 9] = [
    "type",
    "timeout",
    "statusMessage",
    "async",
    "asyncRewake",
    "once",
    "if",
    "onFailure",
    "shell",
];
/// Keys of Claude Code's that change nothing tollgate decides: the hook loads, with a note.
const CLAUDE_CODE_ONLY: [&str; 4] = ["holdsTools", "rewakeMessage", "rewakeSummary", "cloud"];
/// Unknown keys that only describe an entry: they are reported and the entry loads.
const COSMETIC: [&str; 12] = [
    "description",
    "name",
    "comment",
    "$comment",
    "_comment",
    "note",
    "notes",
    "title",
    "label",
    "displayName",
    "icon",
    "tags",
];

/// Whether an entry is in Claude Code's shape (it has `matcher` or `hooks`).
pub(crate) fn is_claude_group(value: &Value) -> bool {
    value
        .as_object()
        .is_some_and(|m| m.contains_key("matcher") || m.contains_key("hooks"))
}

/// Validates one Claude Code group at `path`: one spec or one warning per inner hook (plus
/// notes about keys that are reported but do not stop the hook, in `ctx.notes`).
pub(crate) fn parse_group(
    ctx: &EntryCtx<'_>,
    path: &str,
    value: &Value,
) -> Vec<Result<HookSpec, Warning>> {
    let skip_all = |at: String, why: String| vec![Err(ctx.warn(at, format!("{why}; skipped")))];
    let Some(map) = value.as_object() else {
        return skip_all(path.to_owned(), "not a mapping".into());
    };
    check_keys(ctx, path, map, &GROUP_KEYS);
    let matcher = match map.get("matcher") {
        None | Some(Value::Null) => None,
        Some(Value::String(text)) => Some(text.clone()),
        Some(other) => {
            let why = format!("must be a string, found {}", fields::type_name(other));
            return skip_all(format!("{path}.matcher"), why);
        }
    };
    if let Err(why) = Matcher::parse(matcher.as_deref()) {
        return skip_all(format!("{path}.matcher"), why);
    }
    let Some(Value::Array(hooks)) = map.get("hooks") else {
        return skip_all(format!("{path}.hooks"), "must be a list of hooks".into());
    };
    hooks
        .iter()
        .enumerate()
        .map(|(i, hook)| {
            let at = format!("{path}.hooks[{i}]");
            parse_hook(ctx, &at, hook, &matcher)
                .or_else(|skipped| stand_in(ctx, &at, hook, &matcher, skipped))
        })
        .collect()
}

/// A hook that asked to fail closed (`onFailure: "block"`, not `async`) but cannot be read
/// becomes a stand-in that denies every call it would have seen; any other stays skipped.
fn stand_in(
    ctx: &EntryCtx<'_>,
    path: &str,
    value: &Value,
    matcher: &Option<String>,
    skipped: Warning,
) -> Result<HookSpec, Warning> {
    let blocks = value
        .get("onFailure")
        .is_some_and(|v| v.as_str() != Some("continue"));
    let detached = ["async", "asyncRewake"]
        .iter()
        .any(|k| value.get(*k) == Some(&Value::Bool(true)));
    if !blocks || detached {
        return Err(skipped);
    }
    let reason = skipped
        .message
        .strip_suffix("; the hook is skipped")
        .unwrap_or(&skipped.message);
    let suffix = &path[path.find('[').unwrap_or(path.len())..];
    Ok(HookSpec {
        sandbox: None,
        event: ctx.event.clone(),
        name: ctx.default_name(suffix),
        kind: SpecKind::Command {
            line: String::new(),
        },
        source: ctx.source,
        tools: None,
        priority: 0,
        timeout: HookTimeout::default(),
        failure_mode: Some(FailureMode::FailClosed),
        fire_and_forget: false,
        file: ctx.file.to_owned(),
        dir: ctx.dir.clone(),
        entry: skipped.entry.clone(),
        dialect: Dialect::ClaudeCode(ClaudeSpec {
            event_name: hook_event_name(ctx.event, ctx.event_key),
            matcher: matcher.clone(),
            ..ClaudeSpec::default()
        }),
        unreadable: Some(format!("`{}`: {reason}", skipped.entry)),
    })
}

/// Unknown keys become notes and the entry loads, as Claude Code loads an entry whatever keys
/// it does not define (its settings schema drops them): skipping it would leave a guard Claude
/// Code runs unregistered. A mistyped key is named with the key meant.
fn check_keys(ctx: &EntryCtx<'_>, path: &str, map: &Map<String, Value>, known: &[&str]) {
    for key in map.keys().filter(|k| !known.contains(&k.as_str())) {
        let why = if COSMETIC.contains(&key.as_str()) {
            format!("`{key}` is not read by tollgate; ignored (the hook loads)")
        } else if CLAUDE_CODE_ONLY.contains(&key.as_str()) {
            format!(
                "`{key}` is a Claude Code option tollgate has no use for; ignored (the hook loads)"
            )
        } else {
            format!(
                "{}; ignored, as Claude Code ignores it",
                suggest::unknown_key(key, known)
            )
        };
        ctx.notes
            .borrow_mut()
            .push(ctx.warn(format!("{path}.{key}"), why));
    }
}

/// What a hook's `type` makes of it.
enum Kind {
    Command(String),
    Http {
        url: String,
        headers: Vec<(String, String)>,
        allowed_env: Vec<String>,
    },
    Prompt(String),
}

fn parse_hook(
    ctx: &EntryCtx<'_>,
    path: &str,
    value: &Value,
    matcher: &Option<String>,
) -> Result<HookSpec, Warning> {
    let skip = |at: String, why: String| ctx.warn(at, format!("{why}; the hook is skipped"));
    let Some(map) = value.as_object() else {
        let why = format!(
            "a hook must be a mapping, found {}",
            fields::type_name(value)
        );
        return Err(skip(path.to_owned(), why));
    };
    let kind_keys: &[&str] = match map.get("type").and_then(Value::as_str) {
        Some("command") => &["command", "args"],
        Some("http") => &["url", "headers", "allowedEnvVars"],
        Some("prompt") => &["prompt", "model"],
        Some("agent") => {
            return Err(skip(
                format!("{path}.type"),
                "`type: agent` hooks verify with tools (reading files, running commands); \
                 tollgate's llm hooks judge the payload alone, so the hook is not translated"
                    .into(),
            ));
        }
        Some(other) => {
            let why =
                format!("hook type `{other}` is not one of `command`, `http`, `prompt`, `agent`");
            return Err(skip(format!("{path}.type"), why));
        }
        None => {
            return Err(skip(
                path.to_owned(),
                "needs `type` (`command`, `http` or `prompt`)".into(),
            ));
        }
    };
    let known: Vec<&str> = HOOK_KEYS.iter().chain(kind_keys).copied().collect();
    check_keys(ctx, path, map, &known);
    if let Some(shell) = map.get("shell")
        && shell.as_str() != Some("bash")
    {
        let why = format!("`shell: {shell}`: tollgate runs hooks with bash only");
        return Err(skip(format!("{path}.shell"), why));
    }
    let failure_mode = on_failure(ctx, path, map);
    let field = |key: &str| map.get(key).map(|v| (format!("{path}.{key}"), v));
    let kind = kind(ctx, path, map)?;
    let mut claude = ClaudeSpec {
        event_name: hook_event_name(ctx.event, ctx.event_key),
        matcher: matcher.clone(),
        plugin_root: ctx.plugin_root.clone(),
        skill_dir: (ctx.source == HookSource::Skill).then(|| ctx.dir.clone()),
        ..ClaudeSpec::default()
    };
    let flag = |key: &str| -> Result<bool, Warning> {
        field(key).map_or(Ok(false), |(at, v)| {
            fields::boolean(v).map_err(|e| skip(at, e))
        })
    };
    claude.once = flag("once")?;
    claude.rewake = flag("asyncRewake")?;
    let detached = flag("async")? || claude.rewake;
    claude.record_only = detached;
    // An async hook never decides: a failure cannot deny anything, so it is never fail_closed.
    let failure_mode = match failure_mode {
        Some(FailureMode::FailClosed) if detached => {
            ctx.notes.borrow_mut().push(ctx.warn(
                format!("{path}.onFailure"),
                "`block` has no effect on an async hook, which never decides; it fails open \
                 (the hook loads)",
            ));
            Some(FailureMode::FailOpen)
        }
        other => other,
    };
    if let Some((at, v)) = field("if") {
        claude.rule = Some(rule(ctx, v).map_err(|e| skip(at, e))?);
    }
    if let Some((at, v)) = field("statusMessage") {
        match fields::text(v) {
            Ok(text) => claude.status_message = Some(text),
            Err(e) => ctx
                .notes
                .borrow_mut()
                .push(ctx.warn(at, format!("{e}; ignored (the hook loads)"))),
        }
    }
    let timeout = match field("timeout") {
        None => default_timeout(&kind),
        Some((at, v)) => timeout(ctx, &at, v).map_err(|e| skip(at, e))?,
    };
    let kind = match kind {
        Kind::Command(line) => SpecKind::Command { line },
        Kind::Http {
            url,
            headers,
            allowed_env,
        } => {
            claude.headers = headers;
            claude.allowed_env = allowed_env;
            SpecKind::Http { url, secret: None }
        }
        Kind::Prompt(condition) => SpecKind::Llm {
            condition,
            depth: Depth::Quick,
            endpoint: None,
        },
    };
    let suffix = &path[path.find('[').unwrap_or(path.len())..];
    Ok(HookSpec {
        sandbox: None,
        event: ctx.event.clone(),
        name: ctx.default_name(suffix),
        kind,
        source: ctx.source,
        tools: None,
        priority: 0,
        timeout,
        failure_mode,
        fire_and_forget: detached,
        file: ctx.file.to_owned(),
        dir: ctx.dir.clone(),
        entry: path.to_owned(),
        dialect: Dialect::ClaudeCode(claude),
        unreadable: None,
    })
}

/// Claude Code's `onFailure`: `continue` (the default) is tollgate's `fail_open`, `block` its
/// `fail_closed`. Any other value reads as `block`, as it does for Claude Code's MCP hooks: a
/// guard is never loosened by a typo.
fn on_failure(ctx: &EntryCtx<'_>, path: &str, map: &Map<String, Value>) -> Option<FailureMode> {
    match map.get("onFailure")?.as_str() {
        Some("continue") => Some(FailureMode::FailOpen),
        Some("block") => Some(FailureMode::FailClosed),
        _ => {
            ctx.notes.borrow_mut().push(ctx.warn(
                format!("{path}.onFailure"),
                "expected `continue` or `block`; read as `block` (fail_closed)",
            ));
            Some(FailureMode::FailClosed)
        }
    }
}

fn kind(ctx: &EntryCtx<'_>, path: &str, map: &Map<String, Value>) -> Result<Kind, Warning> {
    let skip = |key: &str, why: String| {
        ctx.warn(
            format!("{path}.{key}"),
            format!("{why}; the hook is skipped"),
        )
    };
    let text = |key: &str| {
        map.get(key)
            .ok_or_else(|| "missing".to_owned())
            .and_then(fields::text)
            .map_err(|e| skip(key, e))
    };
    match map.get("type").and_then(Value::as_str) {
        Some("http") => {
            let headers = match map.get("headers") {
                None => Vec::new(),
                Some(Value::Object(h)) => h
                    .iter()
                    .map(|(k, v)| match v {
                        Value::String(v) => Ok((k.clone(), v.clone())),
                        _ => Err(skip("headers", format!("`{k}` must be a string"))),
                    })
                    .collect::<Result<_, _>>()?,
                Some(other) => {
                    return Err(skip(
                        "headers",
                        format!("must be a mapping, found {}", fields::type_name(other)),
                    ));
                }
            };
            let allowed_env = match map.get("allowedEnvVars") {
                None => Vec::new(),
                Some(v) => string_list(v).map_err(|e| skip("allowedEnvVars", e))?,
            };
            Ok(Kind::Http {
                url: text("url")?,
                headers,
                allowed_env,
            })
        }
        Some("prompt") => {
            if map.contains_key("model") {
                ctx.notes.borrow_mut().push(ctx.warn(
                    format!("{path}.model"),
                    "ignored: llm hooks use the endpoint's model (TOLLGATE_LLM_MODEL, or an admin \
                     file's `model`); the hook loads",
                ));
            }
            Ok(Kind::Prompt(text("prompt")?))
        }
        _ => {
            let command = text("command")?;
            match map.get("args") {
                None => Ok(Kind::Command(command)),
                Some(args) => {
                    let args = strings(args).map_err(|e| skip("args", e))?;
                    Ok(Kind::Command(exec_line(&command, &args)))
                }
            }
        }
    }
}

/// Claude Code's placeholders, substituted in each element of the exec form.
const PLACEHOLDERS: [&str; 3] = [
    "${CLAUDE_PROJECT_DIR}",
    "${CLAUDE_PLUGIN_ROOT}",
    "${CLAUDE_PLUGIN_DATA}",
];

/// Claude Code's exec form (`command` with `args`, run without a shell) as one shell line:
/// each element one word, taken literally (no expansion, no splitting: `$HOME` stays `$HOME`),
/// except Claude Code's placeholders, left as quoted references for the line's substitution
/// (`"${CLAUDE_PROJECT_DIR}"/x.py`), which the analyzer then vets as a literal path.
fn exec_line(command: &str, args: &[String]) -> String {
    std::iter::once(command)
        .chain(args.iter().map(String::as_str))
        .map(exec_word)
        .collect::<Vec<_>>()
        .join(" ")
}

fn exec_word(element: &str) -> String {
    if element.is_empty() {
        return "''".to_owned();
    }
    let mut word = String::new();
    let mut rest = element;
    while !rest.is_empty() {
        if let Some(placeholder) = PLACEHOLDERS.iter().find(|p| rest.starts_with(**p)) {
            word.push('"');
            word.push_str(placeholder);
            word.push('"');
            rest = &rest[placeholder.len()..];
            continue;
        }
        let end = PLACEHOLDERS
            .iter()
            .filter_map(|p| rest.find(p))
            .min()
            .unwrap_or(rest.len());
        let (text, after) = rest.split_at(end);
        let plain = text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:,+@%".contains(c));
        if plain {
            word.push_str(text);
        } else {
            word.push('\'');
            word.push_str(&text.replace('\'', "'\\''"));
            word.push('\'');
        }
        rest = after;
    }
    word
}

fn strings(value: &Value) -> Result<Vec<String>, String> {
    let items = value.as_array().ok_or("must be a list of strings")?;
    items
        .iter()
        .map(|item| {
            item.as_str()
                .map(str::to_owned)
                .ok_or("must be a list of strings".to_owned())
        })
        .collect()
}

fn string_list(value: &Value) -> Result<Vec<String>, String> {
    let items = value.as_array().ok_or("must be a list of variable names")?;
    items
        .iter()
        .map(|i| {
            i.as_str()
                .map(str::to_owned)
                .ok_or_else(|| "must list strings".to_owned())
        })
        .collect()
}

/// An `if` rule, checked now (against the current directory; the hook compiles it again
/// against its run's workspace). Only tool events have a call to test.
fn rule(ctx: &EntryCtx<'_>, value: &Value) -> Result<String, String> {
    let text = fields::text(value)?;
    if !ctx.event.is_tool_event() {
        return Err(format!(
            "`if` tests a tool call, and `{}` has none",
            ctx.event_key
        ));
    }
    let cwd = std::env::current_dir().unwrap_or_default();
    Rule::parse(&text, &cwd, None).map(|_| text)
}

/// Claude Code's defaults: 600 s for commands, 30 s for http and prompt hooks.
fn default_timeout(kind: &Kind) -> HookTimeout {
    let secs = match kind {
        Kind::Command(_) => HookTimeout::MAX_SECS,
        Kind::Http { .. } | Kind::Prompt(_) => 30,
    };
    HookTimeout::from_secs(secs).unwrap_or_default()
}

/// `timeout` in whole seconds; over 600 is cut to 600 with a note (a shorter deadline makes a
/// slow hook fail, which its failure mode resolves: nothing is loosened).
fn timeout(ctx: &EntryCtx<'_>, at: &str, value: &Value) -> Result<HookTimeout, String> {
    let fraction = value
        .as_f64()
        .filter(|s| value.as_u64().is_none() && s.is_finite() && *s > 0.0);
    if let Some(secs) = fraction {
        if secs > HookTimeout::MAX_SECS as f64 {
            ctx.notes.borrow_mut().push(ctx.warn(
                at,
                format!(
                    "{value} s is over tollgate's longest deadline; the hook gets {} s",
                    HookTimeout::MAX_SECS
                ),
            ));
            return HookTimeout::from_secs(HookTimeout::MAX_SECS).map_err(|e| e.to_string());
        }
        // Claude Code takes any positive number of seconds; tollgate's deadlines are whole.
        let whole = secs.ceil().min(HookTimeout::MAX_SECS as f64);
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "a whole number from 1 to MAX_SECS"
        )]
        let whole = whole as u64;
        ctx.notes.borrow_mut().push(ctx.warn(
            at,
            format!("{value} s is not a whole number of seconds; the hook gets {whole} s"),
        ));
        return HookTimeout::from_secs(whole).map_err(|e| e.to_string());
    }
    match value.as_u64() {
        Some(secs) if secs > HookTimeout::MAX_SECS => {
            ctx.notes.borrow_mut().push(ctx.warn(
                at,
                format!(
                    "{secs} s is over tollgate's longest deadline; the hook gets {} s",
                    HookTimeout::MAX_SECS
                ),
            ));
            HookTimeout::from_secs(HookTimeout::MAX_SECS).map_err(|e| e.to_string())
        }
        _ => fields::timeout(value),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exec_form_is_one_literal_word_per_element() {
        let args = |a: &[&str]| a.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            exec_line(
                "python3",
                &args(&[
                    "${CLAUDE_PROJECT_DIR}/.claude/x.py",
                    "--mode",
                    "strict mode",
                    "$HOME"
                ])
            ),
            r#"python3 "${CLAUDE_PROJECT_DIR}"/.claude/x.py --mode 'strict mode' '$HOME'"#
        );
        assert_eq!(
            exec_line("${CLAUDE_PLUGIN_ROOT}/bin/run", &args(&["it's", "", "a=b"])),
            r#""${CLAUDE_PLUGIN_ROOT}"/bin/run 'it'\''s' '' 'a=b'"#
        );
    }
}
