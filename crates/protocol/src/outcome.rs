//! Outcomes: what one hook answers (domain types).
//!
//! The JSON form hooks outside the process answer with is [`crate::wire::OutcomeWire`].

use serde_json::Value;

/// A hook's verdict on the action. Ordered by strictness: `Allow < Ask < Deny`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Decision {
    /// No objection (also what a hook with no opinion answers).
    #[default]
    Allow,
    /// A human must approve the action first.
    Ask {
        /// Shown to the human who is asked.
        reason: String,
    },
    /// The action must not happen.
    Deny {
        /// Shown to the model as the observation, and recorded.
        reason: String,
    },
}

impl Decision {
    /// `Deny` with a reason.
    pub fn deny(reason: impl Into<String>) -> Self {
        Self::Deny {
            reason: reason.into(),
        }
    }

    /// `Ask` with a reason.
    pub fn ask(reason: impl Into<String>) -> Self {
        Self::Ask {
            reason: reason.into(),
        }
    }

    /// 0 for allow, 1 for ask, 2 for deny: the fold keeps the highest.
    pub fn strictness(&self) -> u8 {
        match self {
            Self::Allow => 0,
            Self::Ask { .. } => 1,
            Self::Deny { .. } => 2,
        }
    }

    /// The wire spelling: `allow`, `ask` or `deny`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Allow => "allow",
            Self::Ask { .. } => "ask",
            Self::Deny { .. } => "deny",
        }
    }

    /// The reason of an `ask` or `deny`.
    pub fn reason(&self) -> Option<&str> {
        match self {
            Self::Allow => None,
            Self::Ask { reason } | Self::Deny { reason } => Some(reason),
        }
    }

    /// Whether this is `Deny`.
    pub fn is_deny(&self) -> bool {
        matches!(self, Self::Deny { .. })
    }
}

/// A rewrite a hook asks for. One outcome carries at most one: arguments can only be rewritten
/// before a call (`pre_tool_use`), results only after it (`post_tool_use`); the dispatcher refuses
/// a rewrite on any other event as a hook failure.
#[derive(Debug, Clone, PartialEq)]
pub enum Rewrite {
    /// Replace the tool call's arguments (`modified_args` on the wire).
    Args(Value),
    /// Replace the tool's result (`modified_result` on the wire).
    Result(Value),
}

/// Something a hook did besides deciding, recorded in the run's trace
/// (for example `{"kind": "audit_log", "detail": {"path": "audit.jsonl"}}`).
#[derive(Debug, Clone, PartialEq)]
pub struct SideEffect {
    /// A short machine-readable label.
    pub kind: String,
    /// Anything worth recording about it.
    pub detail: Value,
}

impl SideEffect {
    /// Builds a side effect.
    pub fn new(kind: impl Into<String>, detail: Value) -> Self {
        Self {
            kind: kind.into(),
            detail,
        }
    }
}

/// One hook's answer. `Outcome::default()` is "no opinion": allow, no rewrite, no context.
///
/// Only the decision is stored inline; the rest (rewrite, context, side effects) sits behind one
/// pointer that stays empty for a plain verdict, so the common answer is small to move and
/// allocates nothing. Build it with the `with_*` methods, read it with the accessors.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outcome {
    /// The verdict.
    pub decision: Decision,
    /// `None` whenever the extras would be empty, so that equality ignores how an outcome was
    /// built.
    extras: Option<Box<OutcomeExtras>>,
}

/// What an [`Outcome`] carries besides its decision.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OutcomeExtras {
    /// A rewrite of the arguments or of the result.
    pub rewrite: Option<Rewrite>,
    /// Text added to the model's context.
    pub additional_context: Option<String>,
    /// What the hook did besides deciding.
    pub side_effects: Vec<SideEffect>,
}

impl OutcomeExtras {
    fn is_empty(&self) -> bool {
        self.rewrite.is_none() && self.additional_context.is_none() && self.side_effects.is_empty()
    }
}

impl Outcome {
    /// No opinion.
    pub fn allow() -> Self {
        Self::default()
    }

    /// Deny with a reason.
    pub fn deny(reason: impl Into<String>) -> Self {
        Self::from(Decision::deny(reason))
    }

    /// Ask a human, with a reason.
    pub fn ask(reason: impl Into<String>) -> Self {
        Self::from(Decision::ask(reason))
    }

    /// An outcome from its parts (the inverse of [`Outcome::into_parts`]).
    pub fn from_parts(decision: Decision, extras: OutcomeExtras) -> Self {
        Self {
            decision,
            extras: (!extras.is_empty()).then(|| Box::new(extras)),
        }
    }

    /// The decision and, unless the outcome is a plain verdict, the rest.
    pub fn into_parts(self) -> (Decision, Option<OutcomeExtras>) {
        (self.decision, self.extras.map(|extras| *extras))
    }

    /// Whether this is `allow` with nothing else: no rewrite, no added context, no side effect.
    pub fn is_plain_allow(&self) -> bool {
        matches!(self.decision, Decision::Allow) && self.extras.is_none()
    }

    /// The rewrite of the arguments or of the result, if any.
    pub fn rewrite(&self) -> Option<&Rewrite> {
        self.extras.as_ref()?.rewrite.as_ref()
    }

    /// The text added to the model's context, if any.
    pub fn additional_context(&self) -> Option<&str> {
        self.extras.as_ref()?.additional_context.as_deref()
    }

    /// What the hook did besides deciding, in order.
    pub fn side_effects(&self) -> &[SideEffect] {
        self.extras
            .as_ref()
            .map_or(&[], |extras| extras.side_effects.as_slice())
    }

    /// Replaces the tool call's arguments (valid on `pre_tool_use` only). An outcome carries one
    /// rewrite: this replaces an earlier [`Outcome::with_result`].
    #[must_use]
    pub fn with_args(mut self, args: Value) -> Self {
        self.extras_mut().rewrite = Some(Rewrite::Args(args));
        self
    }

    /// Replaces the tool's result (valid on `post_tool_use` only). An outcome carries one
    /// rewrite: this replaces an earlier [`Outcome::with_args`].
    #[must_use]
    pub fn with_result(mut self, result: Value) -> Self {
        self.extras_mut().rewrite = Some(Rewrite::Result(result));
        self
    }

    /// Adds text to the model's context.
    #[must_use]
    pub fn with_context(mut self, context: impl Into<String>) -> Self {
        self.extras_mut().additional_context = Some(context.into());
        self
    }

    /// Records a side effect.
    #[must_use]
    pub fn with_side_effect(mut self, effect: SideEffect) -> Self {
        self.extras_mut().side_effects.push(effect);
        self
    }

    /// Every `with_*` method stores something, so the extras never stay empty.
    fn extras_mut(&mut self) -> &mut OutcomeExtras {
        self.extras.get_or_insert_with(Box::default)
    }
}

impl From<Decision> for Outcome {
    fn from(decision: Decision) -> Self {
        Self {
            decision,
            extras: None,
        }
    }
}

/// The kind of a hook (`docs/architecture.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum HookKind {
    /// An in-process async Rust function.
    Function,
    /// One shell line.
    Command,
    /// An HTTP webhook.
    Http,
    /// A natural-language condition judged by a model.
    Llm,
    /// A named class instantiated from config.
    Class,
}

impl HookKind {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Function => "function",
            Self::Command => "command",
            Self::Http => "http",
            Self::Llm => "llm",
            Self::Class => "class",
        }
    }
}

/// Where a hook came from (`docs/architecture.md`). The first three are trusted, the rest external.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum HookSource {
    /// Registered in code by the host.
    #[default]
    Builtin,
    /// From an agent's JSON config.
    AgentConfig,
    /// From an admin hook file.
    AdminConfig,
    /// From a selected skill's SKILL.md.
    Skill,
    /// From a plugin.
    Plugin,
    /// From a user hook file.
    UserConfig,
}

impl HookSource {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Builtin => "builtin",
            Self::AgentConfig => "agent_config",
            Self::AdminConfig => "admin_config",
            Self::Skill => "skill",
            Self::Plugin => "plugin",
            Self::UserConfig => "user_config",
        }
    }

    /// Whether hooks from this source are trusted (built-in, agent config, admin config).
    pub fn is_trusted(self) -> bool {
        matches!(self, Self::Builtin | Self::AgentConfig | Self::AdminConfig)
    }
}

/// What a hook failure (timeout, crash, error, refusal) turns into.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum FailureMode {
    /// Skip the hook: the action proceeds; the failure is recorded and logged at WARN.
    #[default]
    FailOpen,
    /// Deny the action, with the failure as the reason.
    FailClosed,
}

impl FailureMode {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::FailOpen => "fail_open",
            Self::FailClosed => "fail_closed",
        }
    }
}

/// How one hook run ended, as recorded in the trace. Only `Completed` carries the hook's own
/// decision; `Detached` means the hook was handed to the background queue (fire-and-forget);
/// every other status is a hook failure, resolved by the hook's failure mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RunStatus {
    /// The hook answered.
    Completed,
    /// Its deadline passed.
    TimedOut,
    /// It panicked (or its process died).
    Crashed,
    /// It returned an error.
    Errored,
    /// A vetting rule refused it (shell analyzer, SSRF guard).
    Refused,
    /// It answered something that is not a valid outcome for the event.
    InvalidOutput,
    /// It was detached onto the background queue (fire-and-forget); its outcome is logged.
    Detached,
    /// It was to be detached, but the background queue was full.
    Dropped,
}

impl RunStatus {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Completed => "completed",
            Self::TimedOut => "timed_out",
            Self::Crashed => "crashed",
            Self::Errored => "errored",
            Self::Refused => "refused",
            Self::InvalidOutput => "invalid_output",
            Self::Detached => "detached",
            Self::Dropped => "dropped",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strictness_orders_deny_over_ask_over_allow() {
        let allow = Decision::Allow;
        let ask = Decision::ask("a");
        let deny = Decision::deny("d");
        assert!(allow.strictness() < ask.strictness());
        assert!(ask.strictness() < deny.strictness());
    }

    #[test]
    fn only_an_allow_with_nothing_else_is_plain() {
        assert!(Outcome::allow().is_plain_allow());
        assert!(Outcome::from_parts(Decision::Allow, OutcomeExtras::default()).is_plain_allow());
        assert!(!Outcome::ask("a").is_plain_allow());
        assert!(!Outcome::deny("d").is_plain_allow());
        assert!(!Outcome::allow().with_context("c").is_plain_allow());
        assert!(!Outcome::allow().with_args(Value::Null).is_plain_allow());
        let effect = SideEffect::new("k", Value::Null);
        assert!(!Outcome::allow().with_side_effect(effect).is_plain_allow());
    }

    #[test]
    fn outcomes_from_parts_compare_by_content_not_by_storage() {
        let plain = Outcome::from_parts(Decision::Allow, OutcomeExtras::default());
        assert_eq!(plain, Outcome::allow());
        assert_eq!(plain.into_parts(), (Decision::Allow, None));
        let noted = Outcome::deny("no").with_context("why");
        let (decision, extras) = noted.clone().into_parts();
        let rebuilt = Outcome::from_parts(decision, extras.unwrap_or_default());
        assert_eq!(rebuilt, noted);
        assert_eq!(rebuilt.additional_context(), Some("why"));
        assert!(rebuilt.side_effects().is_empty() && rebuilt.rewrite().is_none());
    }

    #[test]
    fn builders_set_one_rewrite() {
        let outcome = Outcome::allow()
            .with_args(serde_json::json!({"a": 1}))
            .with_result(serde_json::json!("r"));
        assert_eq!(
            outcome.rewrite(),
            Some(&Rewrite::Result(serde_json::json!("r")))
        );
    }
}
