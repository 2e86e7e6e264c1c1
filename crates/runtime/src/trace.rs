//! The run's trace: one JSON object per step, written as JSON Lines and streamed to watchers.
//!
//! Every line has `seq` (0, 1, 2, … across the whole run, sub-agents included), `elapsed_ms`
//! since the run began, `run_id`, `session_id`, `agent`, `depth` (0 for the top agent, 1 for
//! its sub-agents, …) and `type`, plus the fields of its type:
//!
//! | `type` | fields |
//! |---|---|
//! | `session_start` | `model`, `hooks` (`enforce` or `bypass`), `hook_count`, `skills`, `tools`, `workspace`, `metadata` (copied into every payload) |
//! | `session_resumed` | as `session_start`: a run goes on from its journal after a restart (the lines before it are the earlier attempt's) |
//! | `warning` | `file`, `entry`, `message`: a hook entry or skill that was skipped |
//! | `user_turn` | `prompt` |
//! | `model_turn` | `turn`, `content`, `tool_calls` (`[{id, name, arguments}]`) |
//! | `tool_call` | `tool_call_id`, `tool_name`, `arguments` (as the model proposed them) |
//! | `hook_run` | the hook's record (`tollgate schema hook-run`) plus `tool_call_id` / `task_id`; a fire-and-forget hook's record says `detached`, and a second line with `"detached": true` gives its final status once it ended (possibly after `session_end`) |
//! | `dispatch` | one per emitted event: `event`, `decision`, `reason`, `decided_by`, `bypassed`, `hooks` (how many ran), `modified_args`, `modified_result`, `additional_context`, `side_effects`, `tool_call_id` / `task_id` |
//! | `approval_waiting` | `tool_call_id`, `tool_name`, `arguments`, `reason`, `asked_by`, `request_id`, `expires_at_ms`, `approvers`, `attached`, `status` |
//! | `approval` | `tool_call_id`, `tool_name`, `reason`, `asked_by`, `approved`, `status` (`approved`, `rejected`, `expired`, `cancelled`, `already_run`, `error`; `approved_by_hook` / `denied_by_hook` when a `permission_request` hook decided, `by` naming it), `by`, `note`, `request_id`, `channel`, `edited_arguments` |
//! | `approval_correction` | `tool_call_id`, `request_id`, `original`, `corrected`, `by` |
//! | `approval_refused` | `tool_call_id`, `request_id`, `reason` |
//! | `tool_started` | `tool_call_id`, `tool_name`, `arguments` (the final, re-reviewed ones) |
//! | `observation` | `tool_call_id`, `tool_name`, `status` (`ok`, `failed`, `denied`, `cancelled`), `content` |
//! | `subagent_start` | `task_id`, `agent_type`, `task_description` |
//! | `subagent_stop` | `task_id`, `agent_type`, `status`, `duration_seconds`, `result` or `error` |
//! | `answer` | `content`: the model's final answer |
//! | `keep_working` | `reason`, `continued`: a hook kept the completed session going (Claude Code's `Stop` block); the reason is the next user message |
//! | `hook_ended_session` | `event`, `reason`: a hook ended the session after that event (Claude Code's `continue: false`); no further model turn or tool call, the session completes |
//! | `session_end` | `status` (`completed`, `failed`, `cancelled`, `turn_limit`, `timed_out`), `turns`, `error` |
//!
//! When a cancel races a sub-agent's stop, a task can have two `subagent_stop` lines: the last
//! one per `task_id` is the one that counts.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tollgate_core::BoxFuture;
use tollgate_handlers::text::escape_controls_json;

use serde::Serialize;
use serde_json::{Map, Value};

/// One trace line before its common fields are added.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// The `type`.
    pub kind: &'static str,
    /// The type's fields.
    pub fields: Map<String, Value>,
}

impl Step {
    /// A step of type `kind` with `fields` (a JSON object; anything else adds no fields).
    pub fn new(kind: &'static str, fields: Value) -> Self {
        let fields = match fields {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        Self { kind, fields }
    }
}

/// Who is speaking: the common fields of a line.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Origin {
    /// The run (shared by a run's sub-agents).
    pub run_id: String,
    /// The agent's session (each sub-agent has its own).
    pub session_id: String,
    /// The agent's name.
    pub agent: String,
    /// 0 for the top agent, +1 per delegation.
    pub depth: u32,
}

/// One finished trace line.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceLine {
    /// Position in the run.
    pub seq: u64,
    /// Milliseconds since the run began.
    pub elapsed_ms: u64,
    /// Who wrote it.
    pub origin: Origin,
    /// What happened.
    pub step: Step,
}

impl TraceLine {
    /// The line as a JSON object (common fields first).
    pub fn to_json(&self) -> Value {
        let mut map = Map::new();
        map.insert("seq".into(), self.seq.into());
        map.insert("elapsed_ms".into(), self.elapsed_ms.into());
        map.insert("run_id".into(), self.origin.run_id.clone().into());
        map.insert("session_id".into(), self.origin.session_id.clone().into());
        map.insert("agent".into(), self.origin.agent.clone().into());
        map.insert("depth".into(), self.origin.depth.into());
        map.insert("type".into(), self.step.kind.into());
        for (k, v) in &self.step.fields {
            map.insert(k.clone(), v.clone());
        }
        Value::Object(map)
    }

    /// A field of the step.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.step.fields.get(key)
    }
}

/// Where trace lines go. Called in `seq` order, synchronously, from the run's tasks: keep it
/// short (a buffered write, a channel send).
pub trait TraceSink: Send + Sync {
    /// Takes one line.
    fn record(&self, line: &TraceLine);

    /// Resolves once every line recorded so far is durable (a journal that writes in the
    /// background); the default has nothing to wait for. The session awaits it after
    /// `tool_started` and before the tool runs, so a restarted run knows the tool may have run
    /// and never runs it again.
    ///
    /// # Errors
    /// Why the lines could not be made durable; the tool then does not run.
    fn flush(&self) -> BoxFuture<'static, Result<(), String>> {
        Box::pin(std::future::ready(Ok(())))
    }
}

/// Writes JSON Lines to a file, flushing after every line (a crash loses at most the line
/// being written).
pub struct JsonlFile {
    out: Mutex<BufWriter<File>>,
}

impl JsonlFile {
    /// Creates (truncates) `path`.
    ///
    /// # Errors
    /// When the file cannot be created.
    pub fn create(path: &Path) -> std::io::Result<Self> {
        Ok(Self {
            out: Mutex::new(BufWriter::new(File::create(path)?)),
        })
    }
}

impl TraceSink for JsonlFile {
    fn record(&self, line: &TraceLine) {
        let Ok(mut out) = self.out.lock() else { return };
        // Names and reasons come from files and hooks: the line keeps its values but has no raw
        // bidirectional or C1 controls, so `cat trace.jsonl` shows what is there.
        let text = escape_controls_json(&line.to_json().to_string());
        let written = out
            .write_all(text.as_bytes())
            .and_then(|()| out.write_all(b"\n"))
            .and_then(|()| out.flush());
        if let Err(e) = written {
            tracing::warn!("cannot write the trace: {e}");
        }
    }
}

/// Keeps every line in memory (tests, embedding hosts).
#[derive(Default)]
pub struct Collect {
    lines: Mutex<Vec<TraceLine>>,
}

impl Collect {
    /// The lines so far.
    pub fn lines(&self) -> Vec<TraceLine> {
        self.lines.lock().map(|l| l.clone()).unwrap_or_default()
    }
}

impl TraceSink for Collect {
    fn record(&self, line: &TraceLine) {
        if let Ok(mut lines) = self.lines.lock() {
            lines.push(line.clone());
        }
    }
}

impl<F: Fn(&TraceLine) + Send + Sync> TraceSink for F {
    fn record(&self, line: &TraceLine) {
        self(line);
    }
}

struct Shared {
    started: Instant,
    sinks: Vec<Arc<dyn TraceSink>>,
    seq: Mutex<u64>,
}

/// The trace of one run: hands out `seq` numbers and fans lines out to its sinks. Cheap to
/// clone; a sub-agent gets a clone with its own [`Origin`].
#[derive(Clone)]
pub struct Trace {
    shared: Arc<Shared>,
    origin: Arc<Origin>,
}

impl Trace {
    /// A trace feeding `sinks`, speaking as `origin`.
    pub fn new(origin: Origin, sinks: Vec<Arc<dyn TraceSink>>) -> Self {
        Self::continuing(origin, sinks, 0, 0)
    }

    /// A trace that goes on from an earlier attempt of the run: its next line is `next_seq`,
    /// and `elapsed_ms` counts on from `elapsed_ms`.
    pub fn continuing(
        origin: Origin,
        sinks: Vec<Arc<dyn TraceSink>>,
        next_seq: u64,
        elapsed_ms: u64,
    ) -> Self {
        let now = Instant::now();
        let started = now
            .checked_sub(std::time::Duration::from_millis(elapsed_ms))
            .unwrap_or(now);
        Self {
            shared: Arc::new(Shared {
                started,
                sinks,
                seq: Mutex::new(next_seq),
            }),
            origin: Arc::new(origin),
        }
    }

    /// Resolves once every sink has made the lines so far durable (see [`TraceSink::flush`]).
    /// Cancel safe: dropping it loses nothing, the lines stay recorded.
    ///
    /// # Errors
    /// The first sink's failure.
    pub async fn flush(&self) -> Result<(), String> {
        let waits: Vec<_> = self.shared.sinks.iter().map(|s| s.flush()).collect();
        for wait in waits {
            wait.await?;
        }
        Ok(())
    }

    /// The same trace, speaking as another agent (a sub-agent).
    pub fn with_origin(&self, origin: Origin) -> Self {
        Self {
            shared: Arc::clone(&self.shared),
            origin: Arc::new(origin),
        }
    }

    /// Who this trace speaks as.
    pub fn origin(&self) -> &Origin {
        &self.origin
    }

    /// Records one step.
    pub fn emit(&self, step: Step) {
        // One lock for numbering and delivery keeps every sink in `seq` order.
        let Ok(mut seq) = self.shared.seq.lock() else {
            return;
        };
        let line = TraceLine {
            seq: *seq,
            elapsed_ms: u64::try_from(self.shared.started.elapsed().as_millis())
                .unwrap_or(u64::MAX),
            origin: (*self.origin).clone(),
            step,
        };
        *seq += 1;
        for sink in &self.shared.sinks {
            sink.record(&line);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn regression_the_trace_file_kept_raw_bidirectional_controls() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("trace.jsonl");
        let file = JsonlFile::create(&path).unwrap();
        let name = "evil\u{202e}gnp.exe\u{9b}";
        file.record(&TraceLine {
            seq: 0,
            elapsed_ms: 0,
            origin: Origin {
                run_id: "r".into(),
                session_id: "s".into(),
                agent: "a".into(),
                depth: 0,
            },
            step: Step::new("hook_run", serde_json::json!({ "name": name })),
        });
        drop(file);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            !text.contains('\u{202e}') && !text.contains('\u{9b}'),
            "{text}"
        );
        // The value is unchanged: the escapes mean the same characters.
        let line: Value = serde_json::from_str(text.trim()).unwrap();
        assert_eq!(line["name"], name);
    }
}
