//! The `hooks:` mapping: `{<Event>: [entry, …]}` into specs and warnings.

use std::str::FromStr;

use serde_json::Value;
use tollgate_protocol::{ALIASES, BUILTIN_EVENTS, Event, HookSource};

use crate::entry::{self, EntryCtx};
use crate::spec::HookSpec;
use crate::warning::Warning;
use crate::{claude, claude_events, fields, suggest};

/// Where a `hooks:` mapping comes from.
pub(crate) struct Origin<'a> {
    /// The file, as given.
    pub file: &'a str,
    /// The hooks' source.
    pub source: HookSource,
    /// Prefix of generated names.
    pub name_prefix: &'a str,
    /// Whether the file is admin config.
    pub admin: bool,
    /// The plugin folder, when the file is a plugin's `hooks/hooks.json`.
    pub plugin_root: Option<std::path::PathBuf>,
}

/// Validates a `hooks:` value; bad events and entries become warnings.
pub(crate) fn parse(
    origin: &Origin<'_>,
    hooks: &Value,
    specs: &mut Vec<HookSpec>,
    warnings: &mut Vec<Warning>,
) {
    let Some(map) = hooks.as_object() else {
        if !hooks.is_null() {
            warnings.push(Warning::new(
                origin.file,
                "hooks",
                format!(
                    "must be a mapping of event names to lists of hooks, found {}; no hooks loaded",
                    fields::type_name(hooks)
                ),
            ));
        }
        return;
    };
    for (key, entries) in map {
        match parse_event(origin, key, entries) {
            Ok(results) => {
                for result in results {
                    match result {
                        Ok(spec) => specs.push(spec),
                        Err(warning) => warnings.push(warning),
                    }
                }
            }
            Err(warning) => warnings.push(warning),
        }
    }
}

/// Every event name and alias; in the style of `written` first (`pre_tool_usee` is told
/// `pre_tool_use`, `PreToolUsee` `PreToolUse`).
fn event_names(written: &str) -> Vec<&'static str> {
    static EVENTS: [Event; BUILTIN_EVENTS.len()] = BUILTIN_EVENTS;
    let aliases = ALIASES.iter().map(|(alias, _)| *alias);
    let canonical = EVENTS.iter().map(Event::as_str);
    if written.starts_with(char::is_uppercase) {
        aliases.chain(canonical).collect()
    } else {
        canonical.chain(aliases).collect()
    }
}

fn parse_event(
    origin: &Origin<'_>,
    key: &str,
    entries: &Value,
) -> Result<Vec<Result<HookSpec, Warning>>, Warning> {
    let path = format!("hooks.{key}");
    let mut never = None;
    let event = match Event::from_str(key) {
        Ok(event) => event,
        Err(_) => match claude_only(key, entries) {
            Some((event, note)) => {
                never = Some(Warning::new(origin.file, &path, note));
                event
            }
            None => return Err(unknown_event(origin, &path, key)),
        },
    };
    let Value::Array(entries) = entries else {
        return Err(Warning::new(
            origin.file,
            &path,
            format!(
                "must be a list of hook entries, found {}; its hooks are skipped",
                fields::type_name(entries)
            ),
        ));
    };
    let ctx = EntryCtx {
        file: origin.file,
        dir: crate::spec::declaring_dir(origin.file),
        source: origin.source,
        event: &event,
        event_key: key,
        name_prefix: origin.name_prefix,
        admin: origin.admin,
        notes: Default::default(),
        plugin_root: origin.plugin_root.clone(),
    };
    let mut results = Vec::new();
    for (i, value) in entries.iter().enumerate() {
        let at = ctx.path(i);
        if claude::is_claude_group(value) {
            results.extend(claude::parse_group(&ctx, &at, value));
        } else {
            results.push(entry::parse(&ctx, &at, value));
        }
    }
    results.extend(ctx.notes.take().into_iter().map(Err));
    results.extend(never.map(Err));
    Ok(results)
}

/// An event tollgate does not have, whose entries are all in Claude Code's shape: one of
/// Claude Code's events without a counterpart, or a name newer than this table. Its hooks load
/// as the custom event of that name (which tollgate's runtime never fires), with a note that
/// says so; `None` for any other unknown event.
fn claude_only(key: &str, entries: &Value) -> Option<(Event, String)> {
    let groups = entries.as_array()?;
    if groups.is_empty() || !groups.iter().all(claude::is_claude_group) {
        return None;
    }
    let event = Event::custom(key).ok()?;
    let why = match claude_events::never_fires(key) {
        Some(why) => why.to_owned(),
        None => match suggest::closest(key, &event_names(key)) {
            Some(meant) => format!("not an event tollgate knows (did you mean `{meant}`?)"),
            None => "not an event tollgate knows".to_owned(),
        },
    };
    Some((
        event.clone(),
        format!(
            "never fires in tollgate: {why} (its hooks load as `{event}`, which a host may \
             dispatch)"
        ),
    ))
}

fn unknown_event(origin: &Origin<'_>, path: &str, key: &str) -> Warning {
    Warning::new(
        origin.file,
        path,
        match suggest::closest(key, &event_names(key)) {
            Some(meant) => format!(
                "unknown event `{key}` (did you mean `{meant}`? see `tollgate events`); its \
                 hooks are skipped"
            ),
            None => format!(
                "unknown event `{key}` (expected an event name such as `PreToolUse` or \
                 `pre_tool_use`, or `custom:<name>`; see `tollgate events`); its hooks are \
                 skipped"
            ),
        },
    )
}
