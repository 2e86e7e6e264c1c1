//! Hooks declared in Claude Code's shape: they see a run as [Claude Code's
//! hooks](https://code.claude.com/docs/en/hooks) would.
//!
//! A [`ClaudeCode`] dialect, given to a [`CommandHook`](crate::CommandHook) or an
//! [`HttpHook`](crate::HttpHook), changes four things and nothing else (the dispatcher, the
//! sandbox and the analyzer are the same for every hook):
//!
//! - **matching**: the group's `matcher` ([`Matcher`]) is matched against Claude Code's tool
//!   names (`Bash`, `Write`, `mcp__db__query`), sub-agent types, or the session's source, and
//!   the hook's `if` ([`Rule`]) against the call's arguments; `once` hooks run once per
//!   registry (one session);
//! - **the payload**: Claude Code's ([`tollgate_protocol::claude_code::to_claude_payload`]):
//!   `hook_event_name`, `tool_name: "Bash"`, `tool_input: {command}`, `tool_use_id`, …;
//! - **the environment** of command hooks: `CLAUDE_PROJECT_DIR` (the workspace),
//!   `CLAUDE_PLUGIN_ROOT` and `CLAUDE_PLUGIN_DATA` (a plugin's folder), `CLAUDE_SKILL_DIR` (a
//!   skill's folder), and `CLAUDE_ENV_FILE` on `SessionStart` (see [`env`]); known values are
//!   substituted in the line before the analyzer vets it;
//! - **the answer**, read with Claude Code's rules for the event ([`output`]); an `async` hook
//!   ([`ClaudeCode::record_only`]) is recorded but never decides or rewrites.

pub mod env;
mod matcher;
pub mod output;
mod rule;
mod status;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{Value, json};
use tollgate_core::{BoxFuture, Hook, HookContext, HookError};
use tollgate_protocol::claude_code::{ClaudeContext, aliases, claude_call, to_claude_payload};
use tollgate_protocol::{EventData, HookKind, Outcome, Payload, SideEffect};

pub use matcher::Matcher;
pub use output::{
    END_SESSION, IGNORED_KEYS, KEEP_WORKING, PERMISSION_GRANTED, SYSTEM_MESSAGE, UPDATED_INPUT,
};
pub use rule::Rule;
pub use status::{StatusBoard, StatusSink};

/// The side effect a `SessionStart` hook's `CLAUDE_ENV_FILE` becomes: `{"set": {NAME: VALUE},
/// "skipped": [why]}` (see [`env`]).
pub const CLAUDE_ENV: &str = "claude_env";

/// The side effect of an `asyncRewake` hook's exit 2: `{"reason": …}`. Its reason is in the answer's context too; a session that finished meanwhile wakes up
/// with it, as Claude Code wakes its model.
pub const WAKE: &str = "wake";

/// How one hook declared in Claude Code's shape matches, sees and answers.
#[derive(Debug)]
pub struct ClaudeCode {
    event_name: String,
    matcher: Matcher,
    rule: Option<Rule>,
    once: Option<AtomicBool>,
    record_only: bool,
    rewake: bool,
    /// The `statusMessage`, and where it goes.
    status: Option<(String, StatusBoard)>,
    context: Arc<ClaudeContext>,
    plugin_root: Option<PathBuf>,
    skill_dir: Option<PathBuf>,
}

impl ClaudeCode {
    /// A hook whose `hook_event_name` is `event_name` (see
    /// [`hook_event_name`](tollgate_protocol::claude_code::hook_event_name)), in the session
    /// `context`, matching everything.
    pub fn new(event_name: impl Into<String>, context: Arc<ClaudeContext>) -> Self {
        Self {
            event_name: event_name.into(),
            matcher: Matcher::All,
            rule: None,
            once: None,
            record_only: false,
            rewake: false,
            status: None,
            context,
            plugin_root: None,
            skill_dir: None,
        }
    }

    /// Runs only for what `matcher` matches.
    #[must_use]
    pub fn matcher(mut self, matcher: Matcher) -> Self {
        self.matcher = matcher;
        self
    }

    /// Runs only for tool calls `rule` matches (Claude Code's `if`).
    #[must_use]
    pub fn rule(mut self, rule: Rule) -> Self {
        self.rule = Some(rule);
        self
    }

    /// Runs at most once (Claude Code's `once`): the first time it matches.
    #[must_use]
    pub fn once(mut self, once: bool) -> Self {
        self.once = once.then(|| AtomicBool::new(false));
        self
    }

    /// Claude Code's `async`: the answer is recorded but never decides nor rewrites; its
    /// `additionalContext` and `systemMessage` become the outcome's context, for the caller to
    /// give the model on its next turn (the hook runs detached, see
    /// [`HookOptions::advisory`](tollgate_core::HookOptions::advisory)).
    #[must_use]
    pub fn record_only(mut self, record_only: bool) -> Self {
        self.record_only = record_only;
        self
    }

    /// Claude Code's `asyncRewake` (implies `async`): its exit 2 is not dropped but wakes the
    /// model with its stderr (see [`ClaudeCode::interpret`]).
    #[must_use]
    pub fn rewake(mut self, rewake: bool) -> Self {
        self.rewake = rewake;
        self.record_only |= rewake;
        self
    }

    /// Claude Code's `statusMessage`: shown on `board` each time the hook starts
    /// ([`ClaudeCode::started`]).
    #[must_use]
    pub fn status_message(mut self, message: impl Into<String>, board: StatusBoard) -> Self {
        self.status = Some((message.into(), board));
        self
    }

    /// The hook named `hook` starts for `payload`: its `statusMessage`, if it has one, goes to
    /// its board. Hook kinds call this right before they run.
    pub fn started(&self, hook: &str, payload: &Payload) {
        if let Some((message, board)) = &self.status {
            board.show(hook, message, payload);
        }
    }

    /// The plugin the hook comes from (`CLAUDE_PLUGIN_ROOT`, `CLAUDE_PLUGIN_DATA`).
    #[must_use]
    pub fn plugin_root(mut self, dir: impl Into<PathBuf>) -> Self {
        self.plugin_root = Some(dir.into());
        self
    }

    /// The skill the hook comes from (`CLAUDE_SKILL_DIR`).
    #[must_use]
    pub fn skill_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.skill_dir = Some(dir.into());
        self
    }

    /// The hook's `hook_event_name`.
    pub fn event_name(&self) -> &str {
        &self.event_name
    }

    /// The session the hook sees.
    pub fn context(&self) -> &ClaudeContext {
        &self.context
    }

    /// The `CLAUDE_*` variables the hook gets, with their values (`CLAUDE_ENV_FILE` aside).
    pub fn variables(&self) -> Vec<(&'static str, String)> {
        let text = |p: &Path| p.display().to_string();
        let mut vars = vec![("CLAUDE_PROJECT_DIR", text(&self.context.cwd))];
        if let Some(root) = &self.plugin_root {
            vars.push(("CLAUDE_PLUGIN_ROOT", text(root)));
            vars.push(("CLAUDE_PLUGIN_DATA", text(root)));
        }
        if let Some(dir) = &self.skill_dir {
            // Claude Code gives a skill's hooks its folder as the plugin root.
            if self.plugin_root.is_none() {
                vars.push(("CLAUDE_PLUGIN_ROOT", text(dir)));
            }
            vars.push(("CLAUDE_SKILL_DIR", text(dir)));
        }
        vars
    }

    /// Whether the hook gets a `CLAUDE_ENV_FILE` (`SessionStart` hooks).
    pub fn takes_env_file(&self) -> bool {
        self.event_name == "SessionStart"
    }

    /// Whether the hook runs for `payload`: its matcher, its `if`, and `once`.
    pub fn triggers(&self, payload: &Payload) -> bool {
        if !self.matches(payload) {
            return false;
        }
        match &self.once {
            Some(fired) => !fired.swap(true, Ordering::Relaxed),
            None => true,
        }
    }

    fn matches(&self, payload: &Payload) -> bool {
        if let Some(call) = payload.tool_call() {
            let metadata = &payload.common.metadata;
            let (name, input) = claude_call(call, metadata, Some(&self.context.cwd));
            let names = std::iter::once(name.as_str()).chain(aliases(&name).iter().copied());
            return self.matcher.matches_any(names)
                && self.rule.as_ref().is_none_or(|r| r.matches(&name, &input));
        }
        if self.rule.is_some() {
            // An `if` tests a tool call; there is none.
            return false;
        }
        let target = match &payload.data {
            EventData::SessionStart => Some("startup"),
            EventData::SessionEnd(_) if self.event_name == "SessionEnd" => Some("other"),
            EventData::Notification(notice) => Some(notice.notification_type.as_str()),
            _ => payload.match_target(),
        };
        target.is_none_or(|t| self.matcher.is_match(t))
    }

    /// The payload the hook receives.
    pub fn payload(&self, payload: &Payload) -> Value {
        to_claude_payload(payload, &self.event_name, &self.context)
    }

    /// Reads a command's end with Claude Code's rules (see [`output`]). An `asyncRewake`
    /// hook's exit 2, on any event, is a wake: an allow whose context is its stderr (its stdout
    /// when stderr is empty) and which carries a [`WAKE`] side effect.
    ///
    /// # Errors
    /// A hook failure: `invalid_output` for an answer that is not Claude Code's, `errored` for
    /// an exit status other than 0 and 2, `crashed` for a signal.
    pub fn interpret(
        &self,
        payload: &Payload,
        code: Option<i32>,
        stdout: &[u8],
        stderr: &[u8],
    ) -> Result<Outcome, HookError> {
        // `SessionEnd` cannot keep a session going: there, exit 2 is only recorded.
        if self.rewake && code == Some(2) && self.event_name != "SessionEnd" {
            let said = if stderr.trim_ascii().is_empty() {
                stdout
            } else {
                stderr
            };
            let said = String::from_utf8_lossy(said).trim().to_owned();
            let reason = if said.is_empty() {
                "an asyncRewake hook exited 2".to_owned()
            } else {
                said
            };
            let wake = SideEffect::new(WAKE, json!({"reason": reason}));
            return Ok(Outcome::allow().with_context(reason).with_side_effect(wake));
        }
        let exit = output::Exit {
            code,
            stdout,
            stderr,
        };
        output::interpret(&self.event_name, payload, &self.context.cwd, &exit)
            .map(|o| self.filtered(o))
    }

    /// Reads an http hook's 2xx body with Claude Code's rules.
    ///
    /// # Errors
    /// As [`ClaudeCode::interpret`] for exit 0.
    pub fn interpret_body(&self, payload: &Payload, body: &[u8]) -> Result<Outcome, HookError> {
        output::read_stdout(&self.event_name, payload, &self.context.cwd, body)
            .map(|o| self.filtered(o))
    }

    /// An `async` hook's answer: an allow whose context carries what Claude Code would show
    /// the model on its next turn (`additionalContext`, `systemMessage`).
    fn filtered(&self, outcome: Outcome) -> Outcome {
        if !self.record_only {
            return outcome;
        }
        let (_, extras) = outcome.into_parts();
        let mut extras = extras.unwrap_or_default();
        extras.rewrite = None;
        extras
            .side_effects
            .retain(|e| ![KEEP_WORKING, END_SESSION, UPDATED_INPUT].contains(&e.kind.as_str()));
        let mut lines: Vec<String> = extras.additional_context.take().into_iter().collect();
        let messages = extras
            .side_effects
            .iter()
            .filter(|e| e.kind == SYSTEM_MESSAGE);
        lines.extend(messages.filter_map(|e| e.detail.as_str().map(str::to_owned)));
        extras.additional_context = (!lines.is_empty()).then(|| lines.join("\n"));
        Outcome::from_parts(tollgate_protocol::Decision::Allow, extras)
    }
}

/// A hook of another kind in Claude Code's dialect: an llm judge for a `type: prompt` hook, or
/// a hook that could not be built. It runs where the group's matcher and `if` say, sees the
/// payload its own kind sends, and its deny on `Stop` (`SubagentStop`) keeps the session (the
/// sub-agent) working, as a Claude Code prompt hook's `ok: false` does.
pub struct ClaudeCodeHook {
    inner: Arc<dyn Hook>,
    claude: ClaudeCode,
}

impl ClaudeCodeHook {
    /// `inner`, matched and answered in `claude`'s dialect.
    pub fn new(inner: Arc<dyn Hook>, claude: ClaudeCode) -> Self {
        Self { inner, claude }
    }
}

impl std::fmt::Debug for ClaudeCodeHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClaudeCodeHook")
            .field("name", &self.inner.name())
            .field("claude", &self.claude)
            .finish_non_exhaustive()
    }
}

impl Hook for ClaudeCodeHook {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn kind(&self) -> HookKind {
        self.inner.kind()
    }

    fn priority(&self) -> i32 {
        self.inner.priority()
    }

    fn should_trigger(&self, ctx: &HookContext) -> bool {
        self.claude.triggers(ctx.payload()) && self.inner.should_trigger(ctx)
    }

    fn execute(&self, ctx: HookContext) -> BoxFuture<'_, Result<Outcome, HookError>> {
        Box::pin(async move {
            self.claude.started(self.inner.name(), ctx.payload());
            let outcome = self.inner.execute(ctx).await?;
            let stop = matches!(self.claude.event_name.as_str(), "Stop" | "SubagentStop");
            let kept = outcome
                .side_effects()
                .iter()
                .any(|e| e.kind == KEEP_WORKING);
            let outcome = match outcome.decision.reason() {
                Some(reason) if stop && outcome.decision.is_deny() && !kept => {
                    let effect = SideEffect::new(KEEP_WORKING, json!({"reason": reason}));
                    outcome.with_side_effect(effect)
                }
                _ => outcome,
            };
            Ok(self.claude.filtered(outcome))
        })
    }
}
