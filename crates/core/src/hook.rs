//! The hook trait, the context a hook runs with, and hooks built from closures.

mod function;

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use tollgate_protocol::{Event, HookKind, Outcome, Payload, RunStatus};

pub use function::{FnHook, SyncFnHook, hook_fn, hook_sync};

/// A boxed, `Send` future, as returned by [`Hook::execute`].
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What a hook sees: the event's payload, as rewritten by the hooks before it.
///
/// Cloning is cheap (the payload is reference counted).
#[derive(Debug, Clone)]
pub struct HookContext {
    payload: Arc<Payload>,
}

impl HookContext {
    /// Wraps a payload.
    pub fn new(payload: Arc<Payload>) -> Self {
        Self { payload }
    }

    /// The payload. On `pre_tool_use` its `tool_input` holds the arguments as rewritten by the
    /// hooks that ran before this one (waterfall); on `post_tool_use` its `tool_result` holds the
    /// result as rewritten so far.
    pub fn payload(&self) -> &Payload {
        &self.payload
    }

    /// The shared payload, for hooks that keep it beyond the call.
    pub fn payload_arc(&self) -> &Arc<Payload> {
        &self.payload
    }

    /// The event.
    pub fn event(&self) -> Event {
        self.payload.event()
    }

    /// The tool name, on tool events.
    pub fn tool_name(&self) -> Option<&str> {
        self.payload.tool_call().map(|call| call.tool_name.as_str())
    }
}

/// Why a hook could not answer. The dispatcher records it as a failed run with the error's
/// [`FailureKind`] as the status and applies the hook's failure mode; it never reaches the agent
/// loop as an error.
///
/// Any `std::error::Error` converts into it (as [`FailureKind::Errored`]), so hooks can use `?`;
/// for error types that do not implement it (such as `anyhow::Error`) use
/// `.map_err(HookError::msg)`.
pub struct HookError {
    kind: FailureKind,
    message: String,
}

/// How a hook failed, as reported by the hook itself. (Deadlines and panics are detected by the
/// dispatcher.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FailureKind {
    /// It could not do its job (spawn error, non-zero exit, transport error): `errored`.
    Errored,
    /// Its process died from a signal: `crashed`.
    Crashed,
    /// A vetting rule refused to run it (shell analyzer, SSRF guard): `refused`.
    Refused,
    /// It answered something that is not a valid outcome: `invalid_output`.
    InvalidOutput,
}

impl From<FailureKind> for RunStatus {
    fn from(kind: FailureKind) -> Self {
        match kind {
            FailureKind::Errored => Self::Errored,
            FailureKind::Crashed => Self::Crashed,
            FailureKind::Refused => Self::Refused,
            FailureKind::InvalidOutput => Self::InvalidOutput,
        }
    }
}

impl HookError {
    /// An [`FailureKind::Errored`] failure with a message.
    pub fn msg(message: impl fmt::Display) -> Self {
        Self::new(FailureKind::Errored, message)
    }

    /// A failure of the given kind.
    pub fn new(kind: FailureKind, message: impl fmt::Display) -> Self {
        Self {
            kind,
            message: message.to_string(),
        }
    }

    /// How the hook failed.
    pub fn kind(&self) -> FailureKind {
        self.kind
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl<E: std::error::Error + Send + Sync + 'static> From<E> for HookError {
    fn from(error: E) -> Self {
        Self::msg(error)
    }
}

impl fmt::Debug for HookError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HookError")
            .field("kind", &self.kind)
            .field("message", &self.message)
            .finish()
    }
}

impl fmt::Display for HookError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// One hook: a named handler the dispatcher runs for the events it is registered on.
///
/// Registration ([`crate::RegistryBuilder`]) adds what belongs to the deployment rather than
/// to the code: the `tools` matcher, timeout, failure mode and source.
///
/// ```
/// use tollgate_core::{BoxFuture, Hook, HookContext, HookError};
/// use tollgate_protocol::Outcome;
///
/// struct NoDeletes;
///
/// impl Hook for NoDeletes {
///     fn name(&self) -> &str {
///         "no-deletes"
///     }
///     fn should_trigger(&self, ctx: &HookContext) -> bool {
///         ctx.tool_name() == Some("sql_execute")
///     }
///     fn execute(&self, ctx: HookContext) -> BoxFuture<'_, Result<Outcome, HookError>> {
///         Box::pin(async move {
///             let sql = ctx.payload().tool_call().and_then(|c| c.tool_input["sql"].as_str());
///             if sql.is_some_and(|s| s.to_ascii_uppercase().contains("DELETE")) {
///                 return Ok(Outcome::deny("DELETE is not allowed here"));
///             }
///             Ok(Outcome::allow())
///         })
///     }
/// }
/// ```
pub trait Hook: Send + Sync + 'static {
    /// The name shown in traces and denials. Need not be unique.
    fn name(&self) -> &str;

    /// The kind recorded in traces. In-process hooks keep the default, `function`.
    fn kind(&self) -> HookKind {
        HookKind::Function
    }

    /// Default priority (lower runs first); registration may override it.
    fn priority(&self) -> i32 {
        0
    }

    /// A code matcher, checked after the registration's `tools` globs. Must be cheap and must
    /// not block; a panic here is recorded as a crashed run.
    fn should_trigger(&self, _ctx: &HookContext) -> bool {
        true
    }

    /// Answers at once, without awaiting, when the hook can; `None` (the default) means the
    /// hook answers through [`execute`](Self::execute).
    ///
    /// The dispatcher asks this first, with the context it shares among the hooks of the
    /// dispatch, and calls `execute` only on `None`: a hook that answers here costs no boxed
    /// future, no context clone and no timer. It must not block: it runs on the dispatcher's
    /// thread and cannot be interrupted (an answer that took longer than the deadline is
    /// recorded as `timed_out`, as for [`execute`](Self::execute)). Hooks answering at once in
    /// a row are timed together (see [`HookRun::duration`](crate::HookRun::duration)): when such
    /// a group overruns, its plain allows are all recorded as `timed_out`, though the fold is
    /// what it would have been. A panic is recorded as a crashed run. [`hook_sync`](crate::hook_sync) builds such a hook from a closure.
    fn execute_now(&self, _ctx: &HookContext) -> Option<Result<Outcome, HookError>> {
        None
    }

    /// Runs the hook.
    ///
    /// The dispatcher runs the returned future under the hook's deadline and drops it when the
    /// deadline passes, so it must be cancel safe: it may be stopped at any `.await`. A hook that
    /// blocks its thread instead of awaiting cannot be timed out.
    fn execute(&self, ctx: HookContext) -> BoxFuture<'_, Result<Outcome, HookError>>;
}
