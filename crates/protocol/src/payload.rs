//! Payloads: what a hook is told about the event it runs for (domain types).
//!
//! The JSON form hooks outside the process receive is [`crate::wire::PayloadWire`].

use std::time::Duration;

use serde_json::{Map, Value};

use crate::event::{CustomEvent, Event};

/// The fields every payload carries.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PayloadCommon {
    /// The conversation this run belongs to.
    pub session_id: String,
    /// This run (one user turn processed by one agent).
    pub run_id: String,
    /// The trace the run belongs to; a delegated sub-agent shares its caller's trace id.
    pub trace_id: String,
    /// The agent that proposed the action.
    pub agent_id: String,
    /// What started the run (`cli`, `api`, `workflow`, …), when known.
    pub source: Option<String>,
    /// Free-form run metadata (organisation id, user id, flags) set by the host.
    pub metadata: Map<String, Value>,
}

/// One event's payload: the common fields plus the event's own data.
#[derive(Debug, Clone, PartialEq)]
pub struct Payload {
    /// Fields shared by every event.
    pub common: PayloadCommon,
    /// The event and its own fields.
    pub data: EventData,
}

impl Payload {
    /// Builds a payload.
    pub fn new(common: PayloadCommon, data: impl Into<EventData>) -> Self {
        Self {
            common,
            data: data.into(),
        }
    }

    /// The event this payload is for.
    pub fn event(&self) -> Event {
        self.data.event()
    }

    /// The tool call this payload concerns, for tool events.
    pub fn tool_call(&self) -> Option<&ToolCall> {
        match &self.data {
            EventData::PreToolUse(call) => Some(call),
            EventData::PostToolUse(done) => Some(&done.call),
            EventData::PostToolUseFailure(failed) => Some(&failed.call),
            EventData::PostToolUseCancelled(cancelled) => Some(&cancelled.call),
            EventData::ApprovalCorrection(correction) => Some(&correction.call),
            EventData::PermissionRequest(request) => Some(&request.call),
            _ => None,
        }
    }

    /// What a `tools` matcher is matched against: the tool name for tool events, the
    /// agent type for sub-agent events, nothing for other events.
    pub fn match_target(&self) -> Option<&str> {
        match &self.data {
            EventData::SubagentStart(start) => Some(&start.agent_type),
            EventData::SubagentStop(stop) => Some(&stop.agent_type),
            EventData::SubagentCancel(cancel) => Some(&cancel.agent_type),
            _ => self.tool_call().map(|call| call.tool_name.as_str()),
        }
    }
}

/// The event of a payload together with the event's own fields.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum EventData {
    /// `session_start`.
    SessionStart,
    /// `session_end`.
    SessionEnd(SessionEnd),
    /// `user_turn`.
    UserTurn(UserTurn),
    /// `pre_tool_use`: the proposed call.
    PreToolUse(ToolCall),
    /// `post_tool_use`.
    PostToolUse(ToolResult),
    /// `post_tool_use_failure`.
    PostToolUseFailure(ToolFailure),
    /// `post_tool_use_cancelled`.
    PostToolUseCancelled(ToolCancelled),
    /// `subagent_start`.
    SubagentStart(SubagentStart),
    /// `subagent_stop`.
    SubagentStop(SubagentStop),
    /// `subagent_cancel`.
    SubagentCancel(SubagentCancel),
    /// `approval_correction`.
    ApprovalCorrection(ApprovalCorrection),
    /// `permission_request`.
    PermissionRequest(PermissionRequest),
    /// `notification`.
    Notification(Notification),
    /// A custom event with host-defined data.
    Custom(CustomEvent, Map<String, Value>),
}

impl EventData {
    /// The event these fields belong to.
    pub fn event(&self) -> Event {
        match self {
            Self::SessionStart => Event::SessionStart,
            Self::SessionEnd(_) => Event::SessionEnd,
            Self::UserTurn(_) => Event::UserTurn,
            Self::PreToolUse(_) => Event::PreToolUse,
            Self::PostToolUse(_) => Event::PostToolUse,
            Self::PostToolUseFailure(_) => Event::PostToolUseFailure,
            Self::PostToolUseCancelled(_) => Event::PostToolUseCancelled,
            Self::SubagentStart(_) => Event::SubagentStart,
            Self::SubagentStop(_) => Event::SubagentStop,
            Self::SubagentCancel(_) => Event::SubagentCancel,
            Self::ApprovalCorrection(_) => Event::ApprovalCorrection,
            Self::PermissionRequest(_) => Event::PermissionRequest,
            Self::Notification(_) => Event::Notification,
            Self::Custom(name, _) => Event::Custom(name.clone()),
        }
    }
}

/// How a session ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SessionEndStatus {
    /// The model answered without further tool calls.
    Completed,
    /// The run stopped on an error.
    Failed,
    /// The user or the host cancelled the run.
    Cancelled,
    /// The turn limit was reached.
    TurnLimit,
}

/// Fields of `session_end`.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionEnd {
    /// How the session ended.
    pub status: SessionEndStatus,
    /// The error, when `status` is `Failed`.
    pub error: Option<String>,
    /// The model's final answer, when the session completed with one.
    pub answer: Option<String>,
    /// How many times a hook kept this session going when it had completed (Claude Code's
    /// Stop `decision: block`); 0 the first time it ends.
    pub continued: u32,
}

/// Fields of `user_turn`.
#[derive(Debug, Clone, PartialEq)]
pub struct UserTurn {
    /// The user's message as submitted.
    pub prompt: String,
}

/// One tool call proposed by the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// The runtime tool name (`bash_code_execute_tool`, `oa__purchase_pay`, …).
    pub tool_name: String,
    /// The model's id for this call.
    pub tool_call_id: String,
    /// The call's arguments (usually a JSON object).
    pub tool_input: Value,
}

/// Fields of `post_tool_use`.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResult {
    /// The call as it ran (with the final, re-reviewed arguments).
    pub call: ToolCall,
    /// What the tool returned.
    pub tool_result: Value,
}

/// Fields of `post_tool_use_failure`.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolFailure {
    /// The call that failed.
    pub call: ToolCall,
    /// Why it failed.
    pub error: String,
}

/// Fields of `post_tool_use_cancelled`.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCancelled {
    /// The call that was cancelled.
    pub call: ToolCall,
    /// Why, when known.
    pub reason: Option<String>,
}

/// Fields of `subagent_start`. The sub-agent's `trace_id` is the common one: it shares its
/// caller's trace.
#[derive(Debug, Clone, PartialEq)]
pub struct SubagentStart {
    /// The delegation's id.
    pub task_id: String,
    /// Which agent is delegated to.
    pub agent_type: String,
    /// The task as the caller phrased it.
    pub task_description: String,
}

/// How a delegated sub-agent ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SubagentStatus {
    /// It finished and returned a result.
    Completed,
    /// It stopped on an error.
    Failed,
    /// It was cancelled (also when force-stopped after its timeout).
    Cancelled,
    /// It is paused, waiting for a human approval.
    PendingApproval,
    /// It ran past its `timeout_seconds`.
    TimedOut,
}

impl SubagentStatus {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
            Self::PendingApproval => "pending_approval",
            Self::TimedOut => "timed_out",
        }
    }
}

/// Fields of `subagent_stop`.
#[derive(Debug, Clone, PartialEq)]
pub struct SubagentStop {
    /// The delegation's id.
    pub task_id: String,
    /// Which agent ran.
    pub agent_type: String,
    /// How it ended; `success` on the wire is `status == Completed`.
    pub status: SubagentStatus,
    /// How long it ran.
    pub duration: Duration,
    /// What it returned, or why it did not.
    pub ending: SubagentEnding,
    /// How many times the caller's hooks kept this sub-agent working when it had completed
    /// (Claude Code's SubagentStop `decision: block`); 0 the first time it stops.
    pub continued: u32,
}

/// The result or the error of a sub-agent; never both.
#[derive(Debug, Clone, PartialEq)]
pub enum SubagentEnding {
    /// What it returned.
    Result(Value),
    /// Why it failed or stopped.
    Error(String),
    /// Neither yet (for example while pending approval).
    Pending,
}

/// Fields of `subagent_cancel`.
#[derive(Debug, Clone, PartialEq)]
pub struct SubagentCancel {
    /// The delegation's id.
    pub task_id: String,
    /// Which agent was cancelled.
    pub agent_type: String,
    /// Why, when known.
    pub reason: Option<String>,
}

/// Fields of `approval_correction`.
#[derive(Debug, Clone, PartialEq)]
pub struct ApprovalCorrection {
    /// The confirmation request that was answered.
    pub request_id: String,
    /// The call as proposed.
    pub call: ToolCall,
    /// The arguments as the human corrected them.
    pub corrected_input: Value,
    /// Who corrected them.
    pub corrected_by: String,
}

/// Fields of `permission_request`: a call the hooks and the permission gate ask a human
/// about, before the request is filed.
#[derive(Debug, Clone, PartialEq)]
pub struct PermissionRequest {
    /// The call, with the arguments it would run with.
    pub call: ToolCall,
    /// Why a human would be asked.
    pub reason: String,
}

/// Fields of `notification`: the run needs the person running it.
#[derive(Debug, Clone, PartialEq)]
pub struct Notification {
    /// What kind of attention: `permission_prompt` (a call waits for approval).
    pub notification_type: String,
    /// The text to show.
    pub message: String,
    /// The tool of the call that waits, when one does (`user_turn` for a prompt).
    pub tool_name: Option<String>,
    /// The confirmation request waiting, when there is one.
    pub request_id: Option<String>,
}

macro_rules! into_event_data {
    ($($ty:ty => $variant:ident),* $(,)?) => {
        $(impl From<$ty> for EventData {
            fn from(value: $ty) -> Self {
                Self::$variant(value)
            }
        })*
    };
}

into_event_data!(
    SessionEnd => SessionEnd,
    UserTurn => UserTurn,
    ToolCall => PreToolUse,
    ToolResult => PostToolUse,
    ToolFailure => PostToolUseFailure,
    ToolCancelled => PostToolUseCancelled,
    SubagentStart => SubagentStart,
    SubagentStop => SubagentStop,
    SubagentCancel => SubagentCancel,
    ApprovalCorrection => ApprovalCorrection,
    PermissionRequest => PermissionRequest,
    Notification => Notification,
);
