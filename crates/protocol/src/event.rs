//! Lifecycle events: canonical names, accepted aliases and custom events.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use crate::error::ProtocolError;

/// A lifecycle point at which hooks run.
///
/// The canonical name of each event is its `snake_case` spelling (see [`Event::as_str`]).
/// [`Event::from_str`] also accepts the aliases listed in `docs/architecture.md`, which follow
/// [Claude Code's hook event names](https://code.claude.com/docs/en/hooks):
///
/// | alias | event |
/// |---|---|
/// | `PreToolUse`, `BeforeToolUse` | `pre_tool_use` |
/// | `PostToolUse`, `AfterToolUse` | `post_tool_use` |
/// | `PostToolUseFailure` | `post_tool_use_failure` |
/// | `SessionStart` | `session_start` |
/// | `SessionEnd`, `Stop` | `session_end` |
/// | `UserPromptSubmit` | `user_turn` |
/// | `SubagentStart`, `SubagentStop` | `subagent_start`, `subagent_stop` |
/// | `PermissionRequest` | `permission_request` |
/// | `Notification` | `notification` |
///
/// Any other key is a custom event, written `custom:<name>` on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Event {
    /// A session began.
    SessionStart,
    /// A session ended (normally, on error, or cancelled).
    SessionEnd,
    /// The user submitted a message.
    UserTurn,
    /// The model proposed a tool call; it has not run yet.
    PreToolUse,
    /// A tool call returned a result.
    PostToolUse,
    /// A tool call failed.
    PostToolUseFailure,
    /// The user cancelled a running tool call.
    PostToolUseCancelled,
    /// A delegated sub-agent is about to start.
    SubagentStart,
    /// A delegated sub-agent stopped.
    SubagentStop,
    /// A delegated sub-agent was cancelled.
    SubagentCancel,
    /// A human corrected the arguments of a call while approving it.
    ApprovalCorrection,
    /// A call is about to be asked of a human; a hook may decide on the human's behalf.
    PermissionRequest,
    /// The run needs the person running it (a call waits for approval).
    Notification,
    /// An event defined by the host application.
    Custom(CustomEvent),
}

/// The name of a custom event: non-empty, at most 128 bytes of `[A-Za-z0-9_.:-]`.
///
/// Cloning is cheap (the name is reference counted).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CustomEvent(Arc<str>);

impl CustomEvent {
    /// Longest accepted name, in bytes.
    pub const MAX_LEN: usize = 128;

    /// Validates a custom event name (without the `custom:` prefix).
    ///
    /// # Errors
    /// [`ProtocolError::InvalidEventName`] when the name is empty, longer than
    /// [`Self::MAX_LEN`] bytes, holds a character outside `[A-Za-z0-9_.:-]`, starts with
    /// `custom:` again, or is the canonical name or an alias of a built-in event (a custom
    /// event must never be mistaken for one).
    pub fn new(name: &str) -> Result<Self, ProtocolError> {
        let valid_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':' | '-');
        let builtin = BUILTIN_EVENTS.iter().any(|e| e.as_str() == name)
            || ALIASES.iter().any(|(alias, _)| *alias == name);
        if name.is_empty()
            || name.len() > Self::MAX_LEN
            || !name.chars().all(valid_char)
            || name.starts_with(CUSTOM_PREFIX)
            || builtin
        {
            return Err(ProtocolError::InvalidEventName(name.to_owned()));
        }
        Ok(Self(Arc::from(name)))
    }

    /// The name, without the `custom:` prefix.
    pub fn name(&self) -> &str {
        &self.0
    }
}

/// Prefix of custom event names on the wire.
pub const CUSTOM_PREFIX: &str = "custom:";

/// Every built-in event, in lifecycle order.
pub const BUILTIN_EVENTS: [Event; 13] = [
    Event::SessionStart,
    Event::UserTurn,
    Event::PreToolUse,
    Event::PostToolUse,
    Event::PostToolUseFailure,
    Event::PostToolUseCancelled,
    Event::SubagentStart,
    Event::SubagentStop,
    Event::SubagentCancel,
    Event::PermissionRequest,
    Event::Notification,
    Event::ApprovalCorrection,
    Event::SessionEnd,
];

/// Accepted alias spellings and the event each one names.
pub const ALIASES: [(&str, Event); 13] = [
    ("PreToolUse", Event::PreToolUse),
    ("BeforeToolUse", Event::PreToolUse),
    ("PostToolUse", Event::PostToolUse),
    ("AfterToolUse", Event::PostToolUse),
    ("PostToolUseFailure", Event::PostToolUseFailure),
    ("SessionStart", Event::SessionStart),
    ("SessionEnd", Event::SessionEnd),
    ("Stop", Event::SessionEnd),
    ("UserPromptSubmit", Event::UserTurn),
    ("SubagentStart", Event::SubagentStart),
    ("SubagentStop", Event::SubagentStop),
    ("PermissionRequest", Event::PermissionRequest),
    ("Notification", Event::Notification),
];

impl Event {
    /// The canonical name of a built-in event; for a custom event, its name without prefix.
    ///
    /// Use [`fmt::Display`] for the full wire form (`custom:<name>`).
    pub fn as_str(&self) -> &str {
        match self {
            Self::SessionStart => "session_start",
            Self::SessionEnd => "session_end",
            Self::UserTurn => "user_turn",
            Self::PreToolUse => "pre_tool_use",
            Self::PostToolUse => "post_tool_use",
            Self::PostToolUseFailure => "post_tool_use_failure",
            Self::PostToolUseCancelled => "post_tool_use_cancelled",
            Self::SubagentStart => "subagent_start",
            Self::SubagentStop => "subagent_stop",
            Self::SubagentCancel => "subagent_cancel",
            Self::ApprovalCorrection => "approval_correction",
            Self::PermissionRequest => "permission_request",
            Self::Notification => "notification",
            Self::Custom(custom) => custom.name(),
        }
    }

    /// Builds a custom event.
    ///
    /// # Errors
    /// As [`CustomEvent::new`].
    pub fn custom(name: &str) -> Result<Self, ProtocolError> {
        CustomEvent::new(name).map(Self::Custom)
    }

    /// Whether this event concerns one tool call (it has a `tool_name`).
    pub fn is_tool_event(&self) -> bool {
        matches!(
            self,
            Self::PreToolUse
                | Self::PostToolUse
                | Self::PostToolUseFailure
                | Self::PostToolUseCancelled
                | Self::ApprovalCorrection
                | Self::PermissionRequest
        )
    }

    /// Whether this event concerns a delegated sub-agent (it has an `agent_type`).
    pub fn is_subagent_event(&self) -> bool {
        matches!(
            self,
            Self::SubagentStart | Self::SubagentStop | Self::SubagentCancel
        )
    }
}

impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Self::Custom(custom) = self {
            f.write_str(CUSTOM_PREFIX)?;
            return f.write_str(custom.name());
        }
        f.write_str(self.as_str())
    }
}

impl FromStr for Event {
    type Err = ProtocolError;

    /// Parses a canonical name, an alias, or `custom:<name>`.
    ///
    /// Matching is exact (case-sensitive): `pretooluse` is not an event. A bare unknown name is an
    /// error rather than a custom event, so that a typo in a config file is reported instead of
    /// silently creating an event nobody fires.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if let Some(name) = s.strip_prefix(CUSTOM_PREFIX) {
            return Self::custom(name);
        }
        BUILTIN_EVENTS
            .iter()
            .find(|event| event.as_str() == s)
            .or_else(|| {
                ALIASES
                    .iter()
                    .find(|(alias, _)| *alias == s)
                    .map(|(_, e)| e)
            })
            .cloned()
            .ok_or_else(|| ProtocolError::UnknownEvent(s.to_owned()))
    }
}

impl serde::Serialize for Event {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Event {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_names_round_trip() {
        for event in BUILTIN_EVENTS {
            assert_eq!(event.to_string().parse::<Event>().ok(), Some(event));
        }
    }

    #[test]
    fn every_alias_resolves() {
        for (alias, event) in ALIASES {
            assert_eq!(alias.parse::<Event>().ok(), Some(event), "{alias}");
        }
        assert_eq!("Stop".parse::<Event>().ok(), Some(Event::SessionEnd));
        assert_eq!(
            "UserPromptSubmit".parse::<Event>().ok(),
            Some(Event::UserTurn)
        );
    }

    #[test]
    fn custom_events_use_the_prefix() {
        let event: Event = "custom:deploy.started".parse().unwrap_or(Event::SessionEnd);
        assert_eq!(event.to_string(), "custom:deploy.started");
        assert_eq!(event.as_str(), "deploy.started");
    }

    #[test]
    fn unknown_and_malformed_names_are_errors() {
        for bad in [
            "pretooluse",
            "PRE_TOOL_USE",
            "",
            "custom:",
            "custom:a b",
            "custom:é",
        ] {
            assert!(bad.parse::<Event>().is_err(), "{bad:?} parsed");
        }
    }
}
