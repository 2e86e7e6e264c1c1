//! What hooks report outside their dispatch's record: how a detached one ended (into the
//! trace; the context an advisory one left, Claude Code's `async` hooks, waits for the model's
//! next observation), and a Claude Code hook's `statusMessage` when it starts.

use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Map, Value, json};
use tollgate_core::{DetachedObserver, NamedRun};
use tollgate_handlers::claude::{StatusSink, WAKE};
use tollgate_protocol::{Outcome, Payload};

use crate::trace::{Step, Trace};

/// Context detached hooks left for the model, oldest first, and whether one of them asks to
/// wake the session (an `asyncRewake` block). Cloning shares it.
#[derive(Clone, Debug, Default)]
pub(super) struct Deferred(Arc<Mutex<Inbox>>);

#[derive(Debug, Default)]
struct Inbox {
    context: Vec<String>,
    wake: bool,
}

impl Deferred {
    fn inbox(&self) -> std::sync::MutexGuard<'_, Inbox> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn push(&self, context: String, wake: bool) {
        let mut inbox = self.inbox();
        inbox.context.push(context);
        inbox.wake |= wake;
    }

    /// Everything left so far; what arrives later waits for the next call.
    pub(super) fn take(&self) -> Vec<String> {
        let mut inbox = self.inbox();
        inbox.wake = false;
        std::mem::take(&mut inbox.context)
    }

    /// Everything left so far when one of it asks to wake the session, else nothing (and the
    /// context stays for a later call).
    pub(super) fn take_wake(&self) -> Option<Vec<String>> {
        let mut inbox = self.inbox();
        if !inbox.wake {
            return None;
        }
        inbox.wake = false;
        Some(std::mem::take(&mut inbox.context))
    }
}

/// Writes how a fire-and-forget hook run ended, once it has: a second `hook_run` line for the
/// run, with `"detached": true`, its final status and the context it left (the dispatch's own
/// line says only `detached`); the context is kept for the model.
pub(super) struct DetachedToTrace {
    pub(super) trace: Trace,
    pub(super) deferred: Deferred,
}

impl DetachedObserver for DetachedToTrace {
    fn finished(&self, payload: &Payload, run: NamedRun<'_>, answer: Option<&Outcome>) {
        let context = answer.and_then(Outcome::additional_context);
        let wake = answer.is_some_and(|a| a.side_effects().iter().any(|e| e.kind == WAKE));
        let mut line = match serde_json::to_value(run.to_wire(&payload.event())) {
            Ok(Value::Object(map)) => map,
            _ => Map::new(),
        };
        line.insert("detached".into(), Value::Bool(true));
        if let Some(call) = payload.tool_call() {
            line.insert("tool_call_id".into(), call.tool_call_id.clone().into());
        }
        let context = context.filter(|c| !c.trim().is_empty());
        if let Some(context) = context {
            line.insert("additional_context".into(), context.into());
        }
        self.trace.emit(Step::new("hook_run", Value::Object(line)));
        if let Some(context) = context {
            self.deferred.push(context.to_owned(), wake);
        }
    }
}

/// Writes a `hook_status` line when a hook with a `statusMessage` starts: `{hook, message}`,
/// and the call's `tool_call_id` on tool events. `tollgate run` prints it at once; the server
/// streams it.
pub(super) struct StatusToTrace(pub(super) Trace);

impl StatusSink for StatusToTrace {
    fn started(&self, hook: &str, message: &str, payload: &Payload) {
        let mut line =
            json!({"hook": hook, "message": message, "event": payload.event().to_string()});
        if let Some(call) = payload.tool_call() {
            line["tool_call_id"] = call.tool_call_id.clone().into();
        }
        self.0.emit(Step::new("hook_status", line));
    }
}
