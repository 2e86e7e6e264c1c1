//! Resuming a run from its journal: the trace lines an earlier attempt recorded.
//!
//! The journal is the run's log. The top session is rebuilt from it: its conversation comes
//! from the recorded `user_turn` dispatch (the prompt's added context), `model_turn` lines and
//! `observation` lines, so no model turn is requested again and no tool result is produced
//! again. Of the calls of the last recorded turn:
//!
//! - an observed call keeps its recorded observation;
//! - a call whose tool had started (`tool_started`) but has no observation was running when
//!   the earlier attempt died: it is reported as interrupted (`post_tool_use_cancelled`
//!   fires, the model observes `cancelled`) and never run again;
//! - a call that had not started goes through hooks and approval again; an ask re-attaches to
//!   the request the earlier attempt filed (same run, turn and call), so a decision given
//!   meanwhile is applied once, and an approved call that was already consumed is not run
//!   twice.
//!
//! Sub-agents are not rebuilt: a delegation that was running counts as an interrupted tool.

use std::collections::HashMap;
use std::sync::atomic::Ordering;

use serde_json::{Value, json};
use tollgate_protocol::{ToolCall, ToolCancelled};

use super::{About, EndStatus, Ending, Session};
use crate::model::{FunctionCall, Message, ModelToolCall, Role};
use crate::trace::Step;

/// What the model observes about a call whose tool was running when the earlier attempt died.
const INTERRUPTED: &str = "interrupted: the run stopped while the tool ran, so it may or may not \
                           have finished; it was not run again";

/// The trace lines of an earlier attempt of one run (each the JSON object a
/// [`TraceLine`](crate::trace::TraceLine) serializes to), in any order.
#[derive(Debug, Clone, Default)]
pub struct Journal {
    lines: Vec<Value>,
}

/// One call of a recorded model turn.
#[derive(Debug, Clone)]
pub(super) struct RecordedCall {
    pub(super) id: String,
    pub(super) name: String,
    /// The arguments as the model wrote them (a JSON text).
    pub(super) arguments: String,
    /// Whether its `tool_call` line was written.
    pub(super) proposed: bool,
    /// The final arguments, when its tool started.
    pub(super) started: Option<Value>,
    /// What the model observed, when it was recorded.
    pub(super) observation: Option<String>,
}

/// One recorded model turn.
#[derive(Debug, Clone)]
pub(super) struct RecordedTurn {
    pub(super) content: Option<String>,
    pub(super) calls: Vec<RecordedCall>,
    /// Why a hook kept the session working after this answer, when one did.
    pub(super) feedback: Option<String>,
}

impl RecordedTurn {
    /// The assistant message as the model sent it.
    pub(super) fn message(&self) -> Message {
        Message {
            role: Role::Assistant,
            content: self.content.clone(),
            tool_calls: self
                .calls
                .iter()
                .map(|c| ModelToolCall {
                    id: c.id.clone(),
                    kind: "function".into(),
                    function: FunctionCall {
                        name: c.name.clone(),
                        arguments: c.arguments.clone(),
                    },
                })
                .collect(),
            tool_call_id: None,
        }
    }
}

/// The top session as the journal recorded it.
#[derive(Debug, Clone, Default)]
pub(super) struct Recorded {
    pub(super) session_id: Option<String>,
    pub(super) workspace: Option<String>,
    /// The context hooks added to the prompt; `Some` once `user_turn` was dispatched.
    pub(super) user_context: Option<Vec<String>>,
    /// The context `session_start` hooks added, and the variables their env files set.
    pub(super) start_context: Vec<String>,
    pub(super) start_env: Vec<(String, String)>,
    pub(super) turns: Vec<RecordedTurn>,
    /// The session's recorded end: `(status, turns, error)`.
    pub(super) ended: Option<(String, u32, Option<String>)>,
    pub(super) answer: Option<String>,
}

fn strings(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

fn text(line: &Value, key: &str) -> Option<String> {
    line.get(key).and_then(Value::as_str).map(str::to_owned)
}

impl Journal {
    /// A journal of `lines`; they are put in `seq` order.
    pub fn new(mut lines: Vec<Value>) -> Self {
        lines.sort_by_key(seq);
        Self { lines }
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// The `seq` the next line gets.
    pub fn next_seq(&self) -> u64 {
        self.lines.last().map_or(0, |l| seq(l) + 1)
    }

    /// The id of the top session (depth 0), once a line of it was recorded.
    pub fn top_session(&self) -> Option<&str> {
        self.lines
            .iter()
            .find(|l| l.get("depth").and_then(Value::as_u64) == Some(0))
            .and_then(|l| l.get("session_id"))
            .and_then(Value::as_str)
    }

    /// Milliseconds the earlier attempt ran (its last line's `elapsed_ms`).
    pub fn elapsed_ms(&self) -> u64 {
        self.lines
            .iter()
            .filter_map(|l| l.get("elapsed_ms").and_then(Value::as_u64))
            .max()
            .unwrap_or(0)
    }

    /// The top session (depth 0) as recorded.
    pub(super) fn recorded(&self) -> Recorded {
        let mut recorded = Recorded::default();
        let top = |l: &&Value| l.get("depth").and_then(Value::as_u64) == Some(0);
        // Calls of the turn in progress, by id: a model may reuse ids across turns.
        let mut calls: HashMap<String, usize> = HashMap::new();
        for line in self.lines.iter().filter(top) {
            if recorded.session_id.is_none() {
                recorded.session_id = text(line, "session_id");
            }
            let kind = line.get("type").and_then(Value::as_str).unwrap_or_default();
            let call_id = text(line, "tool_call_id").unwrap_or_default();
            let at = calls.get(&call_id).copied();
            let call = match (at, recorded.turns.last_mut()) {
                (Some(i), Some(turn)) => turn.calls.get_mut(i),
                _ => None,
            };
            match kind {
                "tool_call" | "tool_started" | "observation" => {
                    if let Some(call) = call {
                        match kind {
                            "tool_call" => call.proposed = true,
                            "tool_started" => {
                                call.started =
                                    Some(line.get("arguments").cloned().unwrap_or(Value::Null));
                            }
                            _ => call.observation = text(line, "content"),
                        }
                    }
                }
                "session_start" => recorded.workspace = text(line, "workspace"),
                "keep_working" => {
                    if let Some(turn) = recorded.turns.last_mut() {
                        turn.feedback = text(line, "reason");
                    }
                }
                "dispatch" if text(line, "event").as_deref() == Some("session_start") => {
                    recorded.start_context = strings(line.get("additional_context"));
                    let effects = line.get("side_effects").and_then(Value::as_array);
                    recorded.start_env =
                        super::claude::recorded_env(effects.map_or(&[], Vec::as_slice));
                }
                "dispatch" if text(line, "event").as_deref() == Some("user_turn") => {
                    let context = line
                        .get("additional_context")
                        .and_then(Value::as_array)
                        .map(|a| a.iter().filter_map(Value::as_str).map(str::to_owned))
                        .map(Iterator::collect)
                        .unwrap_or_default();
                    recorded.user_context = Some(context);
                }
                "model_turn" => {
                    let turn = recorded_turn(line);
                    calls = turn
                        .calls
                        .iter()
                        .enumerate()
                        .map(|(i, c)| (c.id.clone(), i))
                        .collect();
                    recorded.turns.push(turn);
                }
                "answer" => recorded.answer = text(line, "content"),
                "session_end" => {
                    let turns = line.get("turns").and_then(Value::as_u64).unwrap_or(0);
                    recorded.ended = Some((
                        text(line, "status").unwrap_or_default(),
                        u32::try_from(turns).unwrap_or(u32::MAX),
                        text(line, "error"),
                    ));
                }
                _ => {}
            }
        }
        recorded
    }
}

impl Session<'_> {
    /// Goes on from `recorded`: the conversation is rebuilt from it, the last turn's calls are
    /// settled (recorded, interrupted, or admitted again), then the loop continues. A journal
    /// that stopped before the prompt was admitted starts over from the prompt.
    pub(super) async fn resume_body(&self, prompt: &str, recorded: Recorded) -> Ending {
        let Some(turn_context) = recorded.user_context else {
            return self.run_body(prompt).await;
        };
        let _ = self.hook_env.set(recorded.start_env);
        let mut context = recorded.start_context;
        context.extend(turn_context);
        let mut messages = self.opening(prompt, &context);
        let turns = u32::try_from(recorded.turns.len()).unwrap_or(u32::MAX);
        let Some((last, earlier)) = recorded.turns.split_last() else {
            return self.react(messages, 0).await;
        };
        let kept = recorded
            .turns
            .iter()
            .filter(|t| t.feedback.is_some())
            .count();
        self.kept
            .store(u32::try_from(kept).unwrap_or(u32::MAX), Ordering::Relaxed);
        for turn in earlier {
            messages.push(turn.message());
            for call in &turn.calls {
                let content = call
                    .observation
                    .clone()
                    .unwrap_or_else(|| INTERRUPTED.into());
                messages.push(Message::tool(call.id.clone(), content));
            }
            messages.extend(turn.feedback.as_deref().map(super::claude::feedback));
        }
        messages.push(last.message());
        if let Some(reason) = &last.feedback {
            messages.push(super::claude::feedback(reason));
            return self.react(messages, turns).await;
        }
        if last.calls.is_empty() {
            let text = last.content.clone().unwrap_or_default();
            if recorded.answer.is_none() {
                self.trace
                    .emit(Step::new("answer", json!({"content": text})));
            }
            return Ending {
                answer: Some(text),
                ..Ending::new(EndStatus::Completed, turns)
            };
        }
        self.turn.store(turns, Ordering::Relaxed);
        for call in &last.calls {
            let content = self.settle(call).await;
            messages.push(Message::tool(call.id.clone(), content));
        }
        self.react(messages, turns).await
    }

    /// One call of the last recorded turn; returns what the model observes.
    async fn settle(&self, call: &RecordedCall) -> String {
        if let Some(content) = &call.observation {
            return content.clone();
        }
        if let Some(arguments) = &call.started {
            return self.interrupted(call, arguments.clone()).await;
        }
        if let Some(status) = self.stopping() {
            return format!("not run: the session is stopping ({})", status.as_str());
        }
        if !call.proposed {
            self.propose(&call.id, &call.name, &call.arguments);
        }
        self.tool_call(&call.id, &call.name, &call.arguments).await
    }

    /// Reports a call whose tool was running when the earlier attempt died.
    async fn interrupted(&self, call: &RecordedCall, arguments: Value) -> String {
        let tool_call = ToolCall {
            tool_name: call.name.clone(),
            tool_call_id: call.id.clone(),
            tool_input: arguments,
        };
        self.emit(
            ToolCancelled {
                call: tool_call,
                reason: Some(INTERRUPTED.into()),
            },
            About::Call(&call.id),
        )
        .await;
        self.trace.emit(Step::new(
            "observation",
            json!({"tool_call_id": call.id, "tool_name": call.name, "status": "cancelled",
                   "content": INTERRUPTED}),
        ));
        INTERRUPTED.to_owned()
    }
}

fn seq(line: &Value) -> u64 {
    line.get("seq").and_then(Value::as_u64).unwrap_or(0)
}

fn recorded_turn(line: &Value) -> RecordedTurn {
    let calls = line
        .get("tool_calls")
        .and_then(Value::as_array)
        .map(|calls| {
            calls
                .iter()
                .map(|c| RecordedCall {
                    id: text(c, "id").unwrap_or_default(),
                    name: text(c, "name").unwrap_or_default(),
                    arguments: match c.get("arguments") {
                        Some(Value::String(s)) => s.clone(),
                        Some(other) => other.to_string(),
                        None => String::new(),
                    },
                    proposed: false,
                    started: None,
                    observation: None,
                })
                .collect()
        })
        .unwrap_or_default();
    RecordedTurn {
        content: text(line, "content"),
        calls,
        feedback: None,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;

    use super::*;

    fn line(seq: u64, depth: u32, kind: &str, fields: Value) -> Value {
        let mut line = json!({"seq": seq, "elapsed_ms": seq * 10, "run_id": "r",
            "session_id": if depth == 0 { "top" } else { "sub" }, "agent": "a", "depth": depth,
            "type": kind});
        if let (Value::Object(map), Value::Object(more)) = (&mut line, fields) {
            map.extend(more);
        }
        line
    }

    #[test]
    fn hook_context_env_and_kept_answers_are_read_back() {
        let journal = Journal::new(vec![
            line(0, 0, "session_start", json!({"workspace": "/w"})),
            line(
                1,
                0,
                "dispatch",
                json!({"event": "session_start", "additional_context": ["ctx"], "side_effects": [
                    {"kind": "claude_env", "detail": {"set": {"A": "1", "PATH": "/evil"}, "skipped": []}, "hook": "h"},
                    {"kind": "other", "detail": {"set": {"B": "2"}}, "hook": "h"}
                ]}),
            ),
            line(
                2,
                0,
                "dispatch",
                json!({"event": "user_turn", "additional_context": []}),
            ),
            line(
                3,
                0,
                "model_turn",
                json!({"turn": 1, "content": "done?", "tool_calls": []}),
            ),
            line(4, 0, "answer", json!({"content": "done?"})),
            line(
                5,
                0,
                "keep_working",
                json!({"reason": "run the tests", "continued": 1}),
            ),
        ]);
        let recorded = journal.recorded();
        assert_eq!(recorded.start_context, ["ctx"]);
        assert_eq!(recorded.start_env, [("A".to_owned(), "1".to_owned())]);
        assert_eq!(recorded.turns[0].feedback.as_deref(), Some("run the tests"));
    }

    #[test]
    fn calls_are_told_apart_per_turn_and_sub_agents_are_ignored() {
        let call =
            |id: &str| json!({"id": id, "name": "bash", "arguments": "{\"command\":\"ls\"}"});
        let journal = Journal::new(vec![
            line(9, 0, "tool_call", json!({"tool_call_id": "c1"})),
            line(0, 0, "session_start", json!({"workspace": "/w"})),
            line(
                1,
                0,
                "dispatch",
                json!({"event": "user_turn", "additional_context": ["x"]}),
            ),
            line(
                2,
                0,
                "model_turn",
                json!({"turn": 1, "content": null, "tool_calls": [call("c1")]}),
            ),
            line(3, 0, "tool_call", json!({"tool_call_id": "c1"})),
            line(
                4,
                0,
                "tool_started",
                json!({"tool_call_id": "c1", "arguments": {"command": "ls"}}),
            ),
            line(
                5,
                1,
                "observation",
                json!({"tool_call_id": "c1", "content": "from a sub-agent"}),
            ),
            line(
                6,
                0,
                "observation",
                json!({"tool_call_id": "c1", "content": "done"}),
            ),
            line(
                7,
                0,
                "model_turn",
                json!({"turn": 2, "content": "again", "tool_calls": [call("c1")]}),
            ),
            line(
                8,
                0,
                "tool_started",
                json!({"tool_call_id": "c1", "arguments": {}}),
            ),
        ]);
        assert_eq!(journal.next_seq(), 10);
        assert_eq!(journal.elapsed_ms(), 90);
        let recorded = journal.recorded();
        assert_eq!(recorded.session_id.as_deref(), Some("top"));
        assert_eq!(recorded.workspace.as_deref(), Some("/w"));
        assert_eq!(recorded.user_context, Some(vec!["x".to_owned()]));
        assert_eq!(recorded.turns.len(), 2);
        let first = &recorded.turns[0].calls[0];
        assert_eq!(first.observation.as_deref(), Some("done"));
        let second = &recorded.turns[1].calls[0];
        assert!(second.proposed && second.started.is_some() && second.observation.is_none());
        assert_eq!(
            recorded.turns[1].message().content.as_deref(),
            Some("again")
        );
        assert_eq!(
            recorded.turns[1].message().tool_calls[0].function.arguments,
            "{\"command\":\"ls\"}"
        );
        assert!(recorded.ended.is_none());
    }

    #[test]
    fn hostile_lines_read_as_nothing_rather_than_failing() {
        let journal = Journal::new(vec![
            json!("not an object"),
            json!({"depth": 0, "type": "model_turn", "tool_calls": "nope"}),
            json!({"depth": 0, "type": "observation", "tool_call_id": 7}),
            json!({"depth": 0, "type": "session_end", "turns": -1}),
        ]);
        let recorded = journal.recorded();
        assert_eq!(recorded.turns.len(), 1);
        assert!(recorded.turns[0].calls.is_empty());
        assert_eq!(recorded.ended, Some((String::new(), 0, None)));
    }
}
