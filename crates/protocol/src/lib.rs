//! tollgate's vocabulary: lifecycle [events](event::Event), [payloads](payload::Payload) and hook
//! [outcomes](outcome::Outcome), plus their JSON [wire form](wire) and its [JSON Schemas](schema).
//!
//! Domain types (this crate's root modules) are what Rust code works with; wire types are what
//! crosses a process or network boundary. They are kept apart so the engine's types can change
//! shape without changing what hooks receive, and so that wire input is validated once, at the
//! boundary.
//!
//! ```
//! use tollgate_protocol::{Event, Payload, PayloadCommon, ToolCall, wire::PayloadWire};
//!
//! let payload = Payload::new(
//!     PayloadCommon { session_id: "s1".into(), ..Default::default() },
//!     ToolCall {
//!         tool_name: "bash_code_execute_tool".into(),
//!         tool_call_id: "call_1".into(),
//!         tool_input: serde_json::json!({"command": "ls"}),
//!     },
//! );
//! assert_eq!(payload.event(), "PreToolUse".parse::<Event>()?);
//! let json = PayloadWire::from(&payload).to_json();
//! assert_eq!(json["event"], "pre_tool_use");
//! assert_eq!(json["tool_input"]["command"], "ls");
//! # Ok::<(), tollgate_protocol::ProtocolError>(())
//! ```

pub mod claude_code;
pub mod error;
pub mod event;
pub mod outcome;
pub mod payload;
pub mod schema;
pub mod tools;
pub mod wire;

pub use error::ProtocolError;
pub use event::{ALIASES, BUILTIN_EVENTS, CustomEvent, Event};
pub use outcome::{
    Decision, FailureMode, HookKind, HookSource, Outcome, OutcomeExtras, Rewrite, RunStatus,
    SideEffect,
};
pub use payload::{
    ApprovalCorrection, EventData, Notification, Payload, PayloadCommon, PermissionRequest,
    SessionEnd, SessionEndStatus, SubagentCancel, SubagentEnding, SubagentStart, SubagentStatus,
    SubagentStop, ToolCall, ToolCancelled, ToolFailure, ToolResult, UserTurn,
};
