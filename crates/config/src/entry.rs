//! One native hook entry (`{script|url|llm|class, tools, …}`) into a [`HookSpec`].

use serde_json::{Map, Value};
use tollgate_handlers::llm::{Depth, EndpointOverride};
use tollgate_protocol::{Event, HookSource};

use crate::spec::{HookSpec, SpecKind};
use crate::warning::Warning;
use crate::{fields, suggest};

/// Keys that name the hook's kind; exactly one must be present.
const KIND_KEYS: [&str; 5] = ["script", "command", "url", "llm", "class"];
/// Keys every kind takes.
const COMMON_KEYS: [&str; 6] = [
    "name",
    "tools",
    "failure_mode",
    "timeout",
    "priority",
    "fire_and_forget",
];
/// Keys only admin files may set on llm hooks.
const ADMIN_LLM_KEYS: [&str; 3] = ["base_url", "model", "api_key"];
/// Every key an entry may have, for "did you mean" hints.
pub(crate) const ALL_KEYS: [&str; 18] = [
    "script",
    "command",
    "url",
    "llm",
    "class",
    "name",
    "tools",
    "failure_mode",
    "timeout",
    "priority",
    "fire_and_forget",
    "secret",
    "depth",
    "base_url",
    "model",
    "api_key",
    "params",
    "sandbox",
];

/// Where an entry sits and what it inherits.
pub(crate) struct EntryCtx<'a> {
    /// The file, as given.
    pub file: &'a str,
    /// Its folder, absolute (see [`HookSpec::dir`]).
    pub dir: std::path::PathBuf,
    /// The hooks' source.
    pub source: HookSource,
    /// The event.
    pub event: &'a Event,
    /// The event key as written (for names and paths).
    pub event_key: &'a str,
    /// Prefix of generated names, like `skill:deploy`.
    pub name_prefix: &'a str,
    /// Whether the file is admin (trusted) config.
    pub admin: bool,
    /// Warnings about entries that still load (an ignored or partly ignored key).
    pub notes: std::cell::RefCell<Vec<Warning>>,
    /// The plugin folder, when the file is a plugin's `hooks/hooks.json`.
    pub plugin_root: Option<std::path::PathBuf>,
}

impl EntryCtx<'_> {
    /// `hooks.<Event>[i]`.
    pub(crate) fn path(&self, index: usize) -> String {
        format!("hooks.{}[{index}]", self.event_key)
    }

    /// A generated name, like `skill:deploy/PreToolUse[0]`.
    pub(crate) fn default_name(&self, suffix: &str) -> String {
        format!("{}/{}{suffix}", self.name_prefix, self.event_key)
    }

    pub(crate) fn warn(&self, entry: impl Into<String>, message: impl Into<String>) -> Warning {
        Warning::new(self.file, entry, message)
    }
}

/// Validates one native entry at `path`.
pub(crate) fn parse(ctx: &EntryCtx<'_>, path: &str, value: &Value) -> Result<HookSpec, Warning> {
    let Some(map) = value.as_object() else {
        return Err(ctx.warn(
            path,
            format!(
                "a hook entry must be a mapping, found {}; skipped",
                fields::type_name(value)
            ),
        ));
    };
    check_keys(ctx, path, map)?;
    let field = |key: &str| map.get(key).map(|v| (format!("{path}.{key}"), v));
    let skip = |at: String, why: String| ctx.warn(at, format!("{why}; the hook is skipped"));
    let kind = kind(ctx, path, map)?;
    let mut spec = HookSpec {
        event: ctx.event.clone(),
        name: ctx.default_name(&path[path.find('[').unwrap_or(path.len())..]),
        kind,
        source: ctx.source,
        tools: None,
        priority: 0,
        timeout: Default::default(),
        failure_mode: None,
        fire_and_forget: false,
        sandbox: None,
        file: ctx.file.to_owned(),
        dir: ctx.dir.clone(),
        entry: path.to_owned(),
        dialect: Default::default(),
        unreadable: None,
    };
    if let Some((at, v)) = field("name") {
        spec.name = fields::text(v).map_err(|e| skip(at, e))?;
    }
    if let Some((at, v)) = field("tools") {
        spec.tools = Some(fields::tools(v).map_err(|e| skip(at, e))?);
    }
    if let Some((at, v)) = field("failure_mode") {
        spec.failure_mode = Some(fields::failure_mode(v).map_err(|e| skip(at, e))?);
    }
    if let Some((at, v)) = field("timeout") {
        spec.timeout = fields::timeout(v).map_err(|e| skip(at, e))?;
    }
    if let Some((at, v)) = field("priority") {
        spec.priority = fields::priority(v).map_err(|e| skip(at, e))?;
    }
    if let Some((at, v)) = field("fire_and_forget") {
        spec.fire_and_forget = fields::boolean(v).map_err(|e| skip(at, e))?;
    }
    if let Some((at, v)) = field("sandbox") {
        spec.sandbox = sandbox(ctx, &at, v);
    }
    Ok(spec)
}

/// A command hook's own `sandbox:`: honoured in admin files; elsewhere ignored with a note
/// (the hook still loads, in the default sandbox: a skill cannot widen its own).
fn sandbox(ctx: &EntryCtx<'_>, at: &str, value: &Value) -> Option<crate::sandbox::HookSandbox> {
    let mut notes = ctx.notes.borrow_mut();
    if !ctx.admin {
        notes.push(ctx.warn(
            at,
            "`sandbox` is honoured in admin hook files only (pass the file with --admin); \
             ignored, the hook runs in the default sandbox",
        ));
        return None;
    }
    let dir = std::path::Path::new(ctx.file)
        .parent()
        .unwrap_or(std::path::Path::new("."));
    let mut warn = |entry: String, message: String| notes.push(ctx.warn(entry, message));
    Some(crate::sandbox::parse_hook(value, dir, at, &mut warn))
}

/// Refuses unknown keys (a mistyped `tools` must never become match-all), keys of another
/// kind, and admin-only keys outside admin files.
fn check_keys(ctx: &EntryCtx<'_>, path: &str, map: &Map<String, Value>) -> Result<(), Warning> {
    let kinds: Vec<&str> = KIND_KEYS
        .into_iter()
        .filter(|k| map.contains_key(*k))
        .collect();
    match kinds.as_slice() {
        [] => {
            let typo = map
                .keys()
                .find_map(|key| Some((key, suggest::closest(key, &KIND_KEYS)?)))
                .map(|(key, meant)| format!(" (`{key}`: did you mean `{meant}`?)"))
                .unwrap_or_default();
            return Err(ctx.warn(
                path,
                format!(
                    "no hook kind: expected one of `script`, `command`, `url`, `llm`, \
                     `class`{typo}; skipped"
                ),
            ));
        }
        [_] => {}
        many => {
            return Err(ctx.warn(
                path,
                format!(
                    "ambiguous entry: it has {}; one kind per entry; skipped",
                    many.iter()
                        .map(|k| format!("`{k}`"))
                        .collect::<Vec<_>>()
                        .join(" and ")
                ),
            ));
        }
    }
    let kind = kinds[0];
    // Skills declare `script`, `url` or `llm` hooks (docs/config.md). A class runs in-process with
    // the runtime's rights (it opens files, keeps state), which an untrusted skill must not get.
    if kind == "class" && ctx.source == HookSource::Skill {
        return Err(ctx.warn(
            path,
            "`class` hooks are not allowed in SKILL.md (they run in-process with the runtime's \
             rights); declare them in a hook file or the agent config; skipped",
        ));
    }
    for key in map.keys() {
        let owner = kind_only_key(key);
        let allowed = KIND_KEYS.contains(&key.as_str())
            || COMMON_KEYS.contains(&key.as_str())
            || owner == Some(kind)
            || (kind == "command" && owner == Some("script"));
        if allowed && ADMIN_LLM_KEYS.contains(&key.as_str()) && !ctx.admin {
            return Err(ctx.warn(
                format!("{path}.{key}"),
                format!("`{key}` is allowed in admin hook files only; the hook is skipped"),
            ));
        }
        if !allowed {
            let why = match owner {
                Some(owner) => format!("`{key}` belongs to `{owner}` hooks, not `{kind}` hooks"),
                None => suggest::unknown_key(key, &ALL_KEYS),
            };
            return Err(ctx.warn(
                format!("{path}.{key}"),
                format!("{why}; the hook is skipped"),
            ));
        }
    }
    Ok(())
}

/// The kind a kind-specific key belongs to.
fn kind_only_key(key: &str) -> Option<&'static str> {
    match key {
        "secret" => Some("url"),
        "depth" | "base_url" | "model" | "api_key" => Some("llm"),
        "params" => Some("class"),
        "sandbox" => Some("script"),
        _ => None,
    }
}

/// The kind and its parameters; [`check_keys`] has made sure there is exactly one.
fn kind(ctx: &EntryCtx<'_>, path: &str, map: &Map<String, Value>) -> Result<SpecKind, Warning> {
    let text = |key: &str| -> Result<Option<String>, Warning> {
        map.get(key)
            .map(fields::text)
            .transpose()
            .map_err(|e| ctx.warn(format!("{path}.{key}"), format!("{e}; the hook is skipped")))
    };
    if let Some(line) = text("script")?.or(text("command")?) {
        return Ok(SpecKind::Command { line });
    }
    if let Some(url) = text("url")? {
        let secret = map
            .get("secret")
            .map(fields::secret)
            .transpose()
            .map_err(|e| {
                ctx.warn(
                    format!("{path}.secret"),
                    format!("{e}; the hook is skipped"),
                )
            })?;
        return Ok(SpecKind::Http { url, secret });
    }
    if let Some(condition) = text("llm")? {
        let depth = match text("depth")? {
            None => Depth::default(),
            Some(d) => d.parse().map_err(|e: tollgate_handlers::llm::LlmError| {
                let why = match suggest::closest(&d, &["quick", "thorough"]) {
                    Some(meant) => format!("unknown llm depth `{d}` (did you mean `{meant}`?)"),
                    None => e.to_string(),
                };
                ctx.warn(
                    format!("{path}.depth"),
                    format!("{why}; the hook is skipped"),
                )
            })?,
        };
        let endpoint = endpoint(ctx, path, map)?;
        return Ok(SpecKind::Llm {
            condition,
            depth,
            endpoint,
        });
    }
    let class = text("class")?.unwrap_or_default();
    let params = map.get("params").cloned().unwrap_or(Value::Null);
    Ok(SpecKind::Class { class, params })
}

/// `base_url` / `model` / `api_key` of an admin llm hook; `api_key` is a `${NAME}` reference
/// resolved from the environment here.
fn endpoint(
    ctx: &EntryCtx<'_>,
    path: &str,
    map: &Map<String, Value>,
) -> Result<Option<EndpointOverride>, Warning> {
    if !ADMIN_LLM_KEYS.iter().any(|k| map.contains_key(*k)) {
        return Ok(None);
    }
    let bad = |key: &str, e: String| {
        ctx.warn(format!("{path}.{key}"), format!("{e}; the hook is skipped"))
    };
    let get = |key: &str| {
        map.get(key)
            .map(fields::text)
            .transpose()
            .map_err(|e| bad(key, e))
    };
    let api_key = match map.get("api_key") {
        None => None,
        Some(v) => {
            let spec = fields::secret(v).map_err(|e| bad("api_key", e))?;
            let name = &spec[2..spec.len() - 1];
            let key = std::env::var(name)
                .ok()
                .filter(|k| !k.is_empty())
                .ok_or_else(|| bad("api_key", format!("variable `{name}` is unset or empty")))?;
            Some(key)
        }
    };
    Ok(Some(EndpointOverride {
        base_url: get("base_url")?,
        model: get("model")?,
        api_key,
    }))
}
