//! The validated form: one [`HookSpec`] per hook that passed validation.

use std::path::{Component, Path, PathBuf};

use serde_json::Value;
use tollgate_core::HookTimeout;
use tollgate_handlers::llm::{Depth, EndpointOverride};
use tollgate_protocol::{Event, FailureMode, HookKind, HookSource};

/// What a hook is, with the parameters of its kind.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum SpecKind {
    /// `script:` / `command:`: one shell line.
    Command {
        /// The line as written.
        line: String,
    },
    /// `url:`: an http hook.
    Http {
        /// The URL as written (checked by the SSRF guard when built).
        url: String,
        /// A `${NAME}` reference to the signing secret, resolved when built.
        secret: Option<String>,
    },
    /// `llm:`: a natural-language condition.
    Llm {
        /// The condition.
        condition: String,
        /// `depth:`, `quick` by default.
        depth: Depth,
        /// `base_url` / `model` / `api_key` (admin files only).
        endpoint: Option<EndpointOverride>,
    },
    /// `class:` + `params:`: a named class from the class table.
    Class {
        /// The class name.
        class: String,
        /// Its params (`null` when none are given).
        params: Value,
    },
}

impl SpecKind {
    /// The hook kind.
    pub fn hook_kind(&self) -> HookKind {
        match self {
            Self::Command { .. } => HookKind::Command,
            Self::Http { .. } => HookKind::Http,
            Self::Llm { .. } => HookKind::Llm,
            Self::Class { .. } => HookKind::Class,
        }
    }
}

/// One validated hook entry, bound to one event.
#[derive(Debug, Clone, PartialEq)]
pub struct HookSpec {
    /// The event it runs on.
    pub event: Event,
    /// `name:`, or a generated one like `skill:deploy/PreToolUse[0]`.
    pub name: String,
    /// The kind and its parameters.
    pub kind: SpecKind,
    /// Where it came from.
    pub source: HookSource,
    /// `tools:` globs; `None` matches every call. Never an empty list.
    pub tools: Option<Vec<String>>,
    /// `priority:` (lower runs first), 0 by default.
    pub priority: i32,
    /// `timeout:`, 1–600 s, 10 s by default.
    pub timeout: HookTimeout,
    /// `failure_mode:` as written; `None` takes the default (see
    /// [`HookSpec::resolved_failure_mode`]).
    pub failure_mode: Option<FailureMode>,
    /// `fire_and_forget:`, false by default.
    pub fire_and_forget: bool,
    /// `sandbox:` of a command hook in an admin file (ignored with a warning elsewhere).
    pub sandbox: Option<crate::sandbox::HookSandbox>,
    /// The file it was read from.
    pub file: String,
    /// The folder of that file, absolute (made so against the current directory when the file
    /// was parsed): relative paths in the entry (a command's `./hooks/guard.sh`, a class's
    /// `path`) are taken from it.
    pub dir: PathBuf,
    /// Its entry path, like `hooks.PreToolUse[0]`.
    pub entry: String,
    /// Whose conventions the hook follows: tollgate's, or Claude Code's (an entry in Claude
    /// Code's shape), which decides how it matches, what it receives and how its answer reads.
    pub dialect: Dialect,
    /// Why the entry could not be read, for an entry that asked to fail closed (Claude Code's
    /// `onFailure: "block"`) and has a malformed field: it is registered only to deny every
    /// call it would have seen, never skipped (a guard never vanishes by a typo).
    pub unreadable: Option<String>,
}

/// Whose conventions a hook follows.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub enum Dialect {
    /// tollgate's: `tools` globs on tollgate's tool names, the native payload and answers.
    #[default]
    Tollgate,
    /// Claude Code's (`docs/claude-code.md`): declared as `{matcher, hooks: [{type, …}]}`.
    ClaudeCode(ClaudeSpec),
}

/// What a hook declared in Claude Code's shape adds to its spec.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClaudeSpec {
    /// `hook_event_name`: the event key as declared when it is Claude Code's (`Stop`), else
    /// Claude Code's name of the event.
    pub event_name: String,
    /// The group's `matcher`, checked when parsed; `None` matches everything.
    pub matcher: Option<String>,
    /// `if`: a permission rule the tool call must match, checked when parsed.
    pub rule: Option<String>,
    /// `once`: the hook runs at most once per session.
    pub once: bool,
    /// `async` / `asyncRewake`: detached on every event; its answer never decides, and its
    /// context reaches the model on a later turn.
    pub record_only: bool,
    /// `asyncRewake`: a block (exit 2) reaches the model as context instead of being dropped.
    pub rewake: bool,
    /// `statusMessage`, shown while the hook runs in `tollgate run`.
    pub status_message: Option<String>,
    /// The plugin folder, for a plugin's `hooks/hooks.json` (`CLAUDE_PLUGIN_ROOT`).
    pub plugin_root: Option<PathBuf>,
    /// The skill folder, for a SKILL.md's hooks (`CLAUDE_SKILL_DIR`).
    pub skill_dir: Option<PathBuf>,
    /// `headers` of an http hook, values as written (`$VAR` / `${VAR}` resolved when built).
    pub headers: Vec<(String, String)>,
    /// `allowedEnvVars` of an http hook: the variables its headers may name.
    pub allowed_env: Vec<String>,
}

impl HookSpec {
    /// The failure mode that applies: the one written, else `fail_closed` for external hooks
    /// (skill, plugin, user config) in standalone mode, else `fail_open`. An explicit
    /// `failure_mode` wins over standalone mode.
    pub fn resolved_failure_mode(&self, standalone: bool) -> FailureMode {
        match self.failure_mode {
            Some(mode) => mode,
            None if standalone && !self.source.is_trusted() => FailureMode::FailClosed,
            None => FailureMode::FailOpen,
        }
    }
}

/// The folder of `file` (a path as given), absolute against the current directory, without
/// `.` steps. Where the current directory cannot be read, the folder as given.
pub(crate) fn declaring_dir(file: &str) -> PathBuf {
    let parent = Path::new(file).parent().unwrap_or(Path::new(""));
    // The real folder when it exists: `ag/../sk` must not need `ag` where the hook runs (a
    // sandbox shows only some paths, and `..` is resolved by the kernel through each step).
    let looked_up = if parent.as_os_str().is_empty() {
        Path::new(".")
    } else {
        parent
    };
    if let Ok(real) = std::fs::canonicalize(looked_up) {
        return real;
    }
    let base = if parent.is_absolute() {
        PathBuf::new()
    } else {
        std::env::current_dir().unwrap_or_default()
    };
    base.join(parent)
        .components()
        .filter(|c| *c != Component::CurDir)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_declaring_folder_is_absolute() {
        let cwd = std::env::current_dir().unwrap();
        assert_eq!(
            declaring_dir("/etc/tollgate/hooks.yaml"),
            Path::new("/etc/tollgate")
        );
        assert_eq!(declaring_dir("hooks.yaml"), cwd);
        assert_eq!(
            declaring_dir("./skills/deploy/SKILL.md"),
            cwd.join("skills/deploy")
        );
        assert_eq!(declaring_dir("../x/a.yaml"), cwd.join("../x"));
    }
}
