//! The error type of this crate.

/// What can go wrong when reading or building protocol values.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProtocolError {
    /// A name that is neither a canonical event name, an alias, nor `custom:<name>`.
    #[error(
        "unknown event `{0}` (expected a canonical name such as `pre_tool_use`, an alias such as `PreToolUse`, or `custom:<name>`)"
    )]
    UnknownEvent(String),
    /// A custom event name that is empty, too long, or holds a character outside `[A-Za-z0-9_.:-]`.
    #[error(
        "invalid custom event name `{0}` (1-128 bytes of [A-Za-z0-9_.:-], not a built-in event's name)"
    )]
    InvalidEventName(String),
    /// A wire payload or outcome whose JSON does not have the documented shape.
    #[error("invalid {what}: {message}")]
    InvalidWire {
        /// Which wire type was being read (`payload`, `outcome`).
        what: &'static str,
        /// Why it was refused.
        message: String,
    },
    /// A call of a tool [`TOOLS`](crate::claude_code::TOOLS) maps whose input does not fit the
    /// tool's fields (`Bash` without a string `command`, a `timeout` that is no non-negative
    /// number): it cannot be mapped to the runtime's tool, so the policy for that tool cannot
    /// vet it. The message names the tool and the field.
    #[error("{0}")]
    UnfitToolInput(String),
}

impl ProtocolError {
    pub(crate) fn payload(message: impl std::fmt::Display) -> Self {
        Self::InvalidWire {
            what: "payload",
            message: message.to_string(),
        }
    }

    pub(crate) fn outcome(message: impl std::fmt::Display) -> Self {
        Self::InvalidWire {
            what: "outcome",
            message: message.to_string(),
        }
    }
}

/// `Result` with this crate's error.
pub type Result<T, E = ProtocolError> = std::result::Result<T, E>;
