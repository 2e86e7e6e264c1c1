//! One agent session: the ReAct loop with every lifecycle event dispatched through the
//! session's own registry, and delegation to sub-agents.
//!
//! # Emission points (each exactly once per occurrence)
//!
//! | event | when | through |
//! |---|---|---|
//! | `session_start` | the session begins (hooks built) | the session's registry |
//! | `user_turn` | the prompt (or the delegated task) arrives; a deny ends the session | 〃 |
//! | `pre_tool_use` | the model proposed a call of a known tool, before it runs | 〃 |
//! | `post_tool_use` | the tool returned; `modified_result` is what the model observes | 〃 |
//! | `post_tool_use_failure` | the tool failed (error, non-zero exit, timeout) | 〃 |
//! | `post_tool_use_cancelled` | the run was cancelled while the tool ran | 〃 |
//! | `subagent_start` | before a delegated agent starts; a deny stops the delegation | the caller's registry |
//! | `subagent_stop` | the delegated agent completed (before its session ends: a block keeps it working) or ended otherwise (last one per `task_id` counts) | the caller's registry |
//! | `subagent_cancel` | the delegated agent was force-stopped or cancelled | the caller's registry |
//! | `session_end` | the session ended, however it ended | the session's registry |
//!
//! A call of a tool the agent does not have, or with arguments that are not a JSON object,
//! never reaches hooks: the model observes the error and may try again.
//!
//! # Delegation
//!
//! `call_agent {agent, task}` starts a sub-agent named in the agent file's `subagents`. It
//! builds its own registry from its own file (plus the run's admin files, which are the
//! operator's policy for every agent); the caller's hooks never fire inside it, and no skill is
//! selected for it (its task comes from a model, not a user). At `timeout_seconds` it is asked
//! to stop after its current step (it ends `timed_out`); at three times that it is
//! force-stopped: the caller observes `timed_out`, `subagent_cancel` fires and its
//! `subagent_stop` says `cancelled`.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value, json};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tollgate_config::{HookFile, selected_skills};
use tollgate_core::{Background, BoxFuture, DecidedBy, DispatchOutcome, Dispatcher, HooksMode};
use tollgate_handlers::ClassTable;
use tollgate_protocol::wire::SideEffectWire;
use tollgate_protocol::{
    EventData, Payload, PayloadCommon, SessionEnd, SessionEndStatus, UserTurn,
};

use crate::agent::AgentDef;
use crate::approval::ApprovalPolicy;
use crate::gate::{Approver, DenyApprover, RuntimeGate};
use crate::model::{Message, Model, ModelRequest, ModelSpec, Role, ToolSpec};
use crate::tools::{Tool, ToolEnv};
use crate::trace::{Origin, Step, Trace, TraceSink};

mod admit;
mod assembly;
mod call;
mod claude;
mod delegate;
mod detached;
mod permission;
mod prepare;
mod protect;
mod resume;

pub use assembly::{Assembly, assemble, assemble_for};
use detached::Deferred;
pub use permission::grant_refusal;
pub use resume::Journal;

/// Deepest delegation chain (the top agent is depth 0).
pub const MAX_DEPTH: u32 = 4;
/// How long a force-stopped sub-agent may take to wind down (its running tool is killed at
/// once; its cancel hooks run under their own deadlines) before it is dropped where it stands.
pub const FORCE_STOP_GRACE: Duration = Duration::from_secs(10);

/// What every session of a run shares.
#[derive(Clone)]
pub struct Services {
    /// Classes for `class` hooks.
    pub classes: Arc<ClassTable>,
    /// Where `ask` decisions go.
    pub approver: Arc<dyn Approver>,
    /// Admin (trusted) hook files: the operator's policy, applied to every agent of the run.
    pub admin: Arc<[HookFile]>,
    /// Whether hooks run (evaluation bypass is explicit).
    pub hooks_mode: HooksMode,
    /// Where fire-and-forget hooks go.
    pub background: Background,
    /// `source` of every payload (`cli`, `api`, …).
    pub source: String,
    /// Files the agent's tools must neither write nor read: the approval database and its
    /// companions (absolute, their folders existing). A session whose workspace or shell-tool
    /// writable paths hold one does not start (its tools could approve their own calls); the
    /// shell tool's sandbox hides them.
    pub protected: Vec<PathBuf>,
    /// Who may decide an ask when neither the agent file nor an admin file lists approvers
    /// (a server: its approver tokens); empty: the OS user running the agent.
    pub default_approvers: Vec<String>,
    /// The run's trace file, which hooks declared in Claude Code's shape get as
    /// `transcript_path` (empty when the run writes none).
    pub transcript: Option<PathBuf>,
    /// Claude Code's `permission_mode` for those hooks: `default`, or `dontAsk` when asks are
    /// denied at once.
    pub permission_mode: String,
}

impl Default for Services {
    fn default() -> Self {
        Self {
            classes: Arc::new(ClassTable::builtin()),
            approver: Arc::new(DenyApprover),
            admin: Arc::from(Vec::new()),
            hooks_mode: HooksMode::Enforce,
            background: Background::default(),
            source: "runtime".into(),
            protected: Vec::new(),
            default_approvers: Vec::new(),
            transcript: None,
            permission_mode: "default".into(),
        }
    }
}

/// One run to do.
#[derive(Debug, Clone)]
pub struct RunRequest {
    /// The agent.
    pub agent: AgentDef,
    /// The user's message (a leading `[use <skill>]` selects that skill).
    pub prompt: String,
    /// Skills the user selected explicitly (UI, API field, `--skill`).
    pub skills: Vec<String>,
    /// Overrides the agent file's model.
    pub model: Option<ModelSpec>,
    /// Overrides the agent file's workspace.
    pub workspace: Option<PathBuf>,
    /// Resumes run `run_id`: its asks re-attach to the approval requests an earlier attempt
    /// of the run filed (a decision given meanwhile is applied once). `None`: a new run.
    pub run_id: Option<String>,
}

/// How a session ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndStatus {
    /// The model answered without tool calls.
    Completed,
    /// The session could not go on (build error, model error, denied prompt).
    Failed,
    /// The run was cancelled.
    Cancelled,
    /// `max_turns` model turns were used up.
    TurnLimit,
    /// A sub-agent ran past its `timeout_seconds`.
    TimedOut,
}

impl EndStatus {
    /// The status a trace spelling names.
    pub fn parse(text: &str) -> Option<Self> {
        [
            Self::Completed,
            Self::Failed,
            Self::Cancelled,
            Self::TurnLimit,
            Self::TimedOut,
        ]
        .into_iter()
        .find(|s| s.as_str() == text)
    }

    /// The trace spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
            Self::TurnLimit => "turn_limit",
            Self::TimedOut => "timed_out",
        }
    }
}

/// What a run produced.
#[derive(Debug, Clone, PartialEq)]
pub struct RunReport {
    /// The run's id.
    pub run_id: String,
    /// How the top session ended.
    pub status: EndStatus,
    /// The model's final answer, when it gave one.
    pub answer: Option<String>,
    /// Why it failed, when it did.
    pub error: Option<String>,
    /// Where the tools worked.
    pub workspace: PathBuf,
    /// Model turns used.
    pub turns: u32,
}

#[derive(Debug, Clone)]
struct Ending {
    status: EndStatus,
    answer: Option<String>,
    error: Option<String>,
    turns: u32,
    /// `session_end` was already dispatched (a completed session asks its hooks whether to
    /// keep working before it ends).
    dispatched: bool,
    /// A completed sub-agent's conversation, its answer last: its caller's `subagent_stop`
    /// hooks may keep it working ([`Session::keep_working`]).
    conversation: Option<Vec<Message>>,
}

impl Ending {
    fn new(status: EndStatus, turns: u32) -> Self {
        Self {
            status,
            answer: None,
            error: None,
            turns,
            dispatched: false,
            conversation: None,
        }
    }

    fn failed(error: impl Into<String>, turns: u32) -> Self {
        Self {
            error: Some(error.into()),
            ..Self::new(EndStatus::Failed, turns)
        }
    }
}

static IDS: AtomicU64 = AtomicU64::new(0);

fn new_id(prefix: &str) -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let n = IDS.fetch_add(1, Ordering::Relaxed);
    format!(
        "{prefix}-{:x}-{:x}-{n}",
        nanos & 0xffff_ffff_ffff,
        std::process::id()
    )
}

/// Runs one agent session to its end, writing every step to `sinks`. Cancelling `cancel`
/// stops it: a running tool is abandoned (its process group killed), `post_tool_use_cancelled`
/// and `session_end` fire, and the report says `cancelled`.
///
/// Never fails: every failure ends the session with status `failed` and the reason.
pub async fn run(
    request: RunRequest,
    services: &Services,
    sinks: Vec<Arc<dyn TraceSink>>,
    cancel: CancellationToken,
) -> RunReport {
    start(request, None, services, sinks, cancel).await
}

/// Goes on with run `request.run_id` from `journal`, the trace lines its earlier attempt
/// recorded (see [`Journal`] for what is replayed and what runs again). The new lines continue
/// its `seq` numbering and go to `sinks`; the workspace is the one the earlier attempt used.
/// A journal whose top session already ended is reported as it ended, and nothing runs.
///
/// Never fails, as [`run`].
pub async fn resume(
    request: RunRequest,
    journal: &Journal,
    services: &Services,
    sinks: Vec<Arc<dyn TraceSink>>,
    cancel: CancellationToken,
) -> RunReport {
    start(request, Some(journal), services, sinks, cancel).await
}

async fn start(
    request: RunRequest,
    journal: Option<&Journal>,
    services: &Services,
    sinks: Vec<Arc<dyn TraceSink>>,
    cancel: CancellationToken,
) -> RunReport {
    let run_id = request.run_id.clone().unwrap_or_else(|| new_id("run"));
    let recorded = journal.map(Journal::recorded);
    let origin = Origin {
        run_id: run_id.clone(),
        session_id: recorded
            .as_ref()
            .and_then(|r| r.session_id.clone())
            .unwrap_or_else(|| new_id("session")),
        agent: request.agent.name.clone(),
        depth: 0,
    };
    let trace = match journal {
        Some(journal) => Trace::continuing(origin, sinks, journal.next_seq(), journal.elapsed_ms()),
        None => Trace::new(origin, sinks),
    };
    let recorded_workspace = recorded
        .as_ref()
        .and_then(|r| r.workspace.clone())
        .map(PathBuf::from);
    if let Some((status, turns, error)) = recorded.as_ref().and_then(|r| r.ended.clone()) {
        return RunReport {
            run_id,
            status: EndStatus::parse(&status).unwrap_or(EndStatus::Failed),
            answer: recorded.and_then(|r| r.answer),
            error,
            workspace: recorded_workspace.unwrap_or_default(),
            turns,
        };
    }
    let workspace = match recorded_workspace
        .or_else(|| request.workspace.clone())
        .or_else(|| request.agent.workspace.clone())
    {
        Some(dir) => dir,
        // A fresh directory with a random name, mode 0700, kept after the run.
        None => match tempfile::Builder::new().prefix("tollgate-run-").tempdir() {
            Ok(dir) => dir.keep(),
            Err(e) => {
                let error = format!("cannot create a workspace under the temp dir: {e}");
                trace.emit(Step::new(
                    "session_end",
                    json!({"status": "failed", "turns": 0, "error": error}),
                ));
                return RunReport {
                    run_id,
                    status: EndStatus::Failed,
                    answer: None,
                    error: Some(error),
                    workspace: std::env::temp_dir(),
                    turns: 0,
                };
            }
        },
    };
    let selected = selected_skills(&request.prompt, &request.skills);
    let setup = SessionSetup {
        def: Arc::new(request.agent),
        model: request.model,
        workspace: workspace.clone(),
        skills: selected,
        trace,
        depth: 0,
        scope: String::new(),
        cancel,
        soft_deadline: None,
        cancel_cause: Arc::default(),
        resumed: recorded.is_some(),
    };
    // Boxed, as the body is: what only runs at the start need not stay reserved in the
    // run's future while the run waits.
    let ending = match Box::pin(Session::prepare(services, setup)).await {
        Ok(session) => {
            let ending = match recorded {
                Some(recorded) => Box::pin(session.resume_body(&request.prompt, recorded)).await,
                None => session.run_body(&request.prompt).await,
            };
            Box::pin(session.end(&ending)).await;
            ending
        }
        Err((trace, error)) => {
            let ending = Ending::failed(error, 0);
            trace.emit(Step::new(
                "session_end",
                json!({"status": "failed", "turns": 0, "error": ending.error}),
            ));
            ending
        }
    };
    RunReport {
        run_id,
        status: ending.status,
        answer: ending.answer,
        error: ending.error,
        workspace,
        turns: ending.turns,
    }
}

struct SessionSetup {
    def: Arc<AgentDef>,
    model: Option<ModelSpec>,
    workspace: PathBuf,
    skills: Vec<String>,
    trace: Trace,
    depth: u32,
    /// Where the session sits in the run (`t2/call_7/` for a sub-agent started by call
    /// `call_7` of the caller's second turn); empty for the top session.
    scope: String,
    cancel: CancellationToken,
    soft_deadline: Option<Instant>,
    /// Set before `cancel` fires when the caller force-stops this session.
    cancel_cause: Arc<OnceLock<String>>,
    /// Whether this session goes on from a journal (it writes `session_resumed`, not
    /// `session_start`).
    resumed: bool,
}

struct Session<'s> {
    services: &'s Services,
    def: Arc<AgentDef>,
    dispatcher: Dispatcher,
    model: Box<dyn Model>,
    tools: Vec<Box<dyn Tool>>,
    specs: Vec<ToolSpec>,
    env: ToolEnv,
    trace: Trace,
    common: PayloadCommon,
    depth: u32,
    scope: String,
    /// The model turn in progress (1-based).
    turn: AtomicU32,
    gate: Arc<RuntimeGate>,
    approval: ApprovalPolicy,
    cancel: CancellationToken,
    soft_deadline: Option<Instant>,
    cancel_cause: Arc<OnceLock<String>>,
    tasks: AtomicU32,
    /// What `SessionStart` hooks' `CLAUDE_ENV_FILE`s set for the shell tool.
    hook_env: Arc<OnceLock<Vec<(String, String)>>>,
    /// How many times hooks kept this completed session working.
    kept: AtomicU32,
    /// Why a hook ended the session (Claude Code's `continue: false`), once one did.
    ended_by_hook: OnceLock<String>,
    /// Context detached (`async`) hooks left: added to the next observation.
    deferred: Deferred,
}

/// Ids a trace line is about.
#[derive(Clone, Copy)]
enum About<'a> {
    Session,
    Call(&'a str),
    Task(&'a str, &'a str),
}

impl About<'_> {
    fn fields(self) -> Map<String, Value> {
        let mut map = Map::new();
        match self {
            About::Session => {}
            About::Call(call) => {
                map.insert("tool_call_id".into(), call.into());
            }
            About::Task(call, task) => {
                map.insert("tool_call_id".into(), call.into());
                map.insert("task_id".into(), task.into());
            }
        }
        map
    }
}

fn decided_by(outcome: &DispatchOutcome) -> Option<String> {
    outcome.decided_by.as_ref().map(|d| match d {
        DecidedBy::Hook(name) => name.to_string(),
        DecidedBy::PermissionGate => "permission_gate".to_owned(),
    })
}

impl<'s> Session<'s> {
    /// Dispatches one event and records its hook runs and folded decision.
    async fn emit(&self, data: impl Into<EventData>, about: About<'_>) -> DispatchOutcome {
        let payload = Arc::new(Payload::new(self.common.clone(), data));
        // Boxed: a dispatch's future is large, and every future awaiting `emit` would
        // otherwise reserve room for it for as long as it lives (a call waiting for approval
        // waits for hours).
        let outcome = Box::pin(self.dispatcher.dispatch(payload)).await;
        let ids = about.fields();
        for run in &outcome.runs {
            let mut line = match serde_json::to_value(run.to_wire(&outcome.event)) {
                Ok(Value::Object(map)) => map,
                _ => Map::new(),
            };
            line.extend(ids.clone());
            self.trace.emit(Step::new("hook_run", Value::Object(line)));
        }
        let side_effects: Vec<Value> = outcome
            .side_effects
            .iter()
            .map(|s| {
                let mut v =
                    serde_json::to_value(SideEffectWire::from(&s.effect)).unwrap_or(Value::Null);
                v["hook"] = s.hook.to_string().into();
                v
            })
            .collect();
        let mut line = json!({
            "event": outcome.event.to_string(),
            "decision": outcome.decision.as_str(),
            "reason": outcome.decision.reason(),
            "decided_by": decided_by(&outcome),
            "bypassed": outcome.bypassed,
            "hooks": outcome.runs.len(),
            "modified_args": outcome.modified_args,
            "modified_result": outcome.modified_result,
            "additional_context": outcome.additional_context,
            "side_effects": side_effects,
        });
        if let Value::Object(map) = &mut line {
            map.extend(ids);
        }
        self.trace.emit(Step::new("dispatch", line));
        if let Some(reason) = claude::end_session(&outcome)
            && self.ended_by_hook.set(reason.clone()).is_ok()
        {
            self.trace.emit(Step::new(
                "hook_ended_session",
                json!({"event": outcome.event.to_string(), "reason": reason}),
            ));
        }
        outcome
    }

    /// Why the cancel token fired: a force-stop by the caller, or the run's cancel.
    fn cancel_cause(&self) -> String {
        self.cancel_cause
            .get()
            .cloned()
            .unwrap_or_else(|| "the run was cancelled".to_owned())
    }

    /// Why the session must stop now, if it must. A session a hook ended (`continue: false`)
    /// completes: no further model turn, no further tool call.
    fn stopping(&self) -> Option<EndStatus> {
        if self.cancel.is_cancelled() {
            Some(EndStatus::Cancelled)
        } else if self.soft_deadline.is_some_and(|d| Instant::now() >= d) {
            Some(EndStatus::TimedOut)
        } else if self.ended_by_hook.get().is_some() {
            Some(EndStatus::Completed)
        } else {
            None
        }
    }

    /// Everything from `session_start` to the last model turn (not `session_end`).
    fn run_body<'a>(&'a self, prompt: &'a str) -> BoxFuture<'a, Ending> {
        Box::pin(async move {
            let start = self.emit(EventData::SessionStart, About::Session).await;
            let _ = self.hook_env.set(claude::session_env(&start));
            if let Some(status) = self.stopping() {
                return Ending::new(status, 0);
            }
            self.trace
                .emit(Step::new("user_turn", json!({"prompt": prompt})));
            let turn = self
                .emit(
                    UserTurn {
                        prompt: prompt.to_owned(),
                    },
                    About::Session,
                )
                .await;
            if let Some(why) = self.prompt_refused(&turn).await {
                return Ending::failed(format!("the prompt was refused: {why}"), 0);
            }
            let mut messages = Vec::new();
            if !self.def.system_prompt.is_empty() {
                messages.push(Message::text(Role::System, self.def.system_prompt.clone()));
            }
            let mut context = start.additional_context;
            context.extend(turn.additional_context);
            self.react(self.opening(prompt, &context), 0).await
        })
    }

    /// The conversation's start: the system prompt and the user's message with the context
    /// `user_turn` hooks added.
    fn opening(&self, prompt: &str, context: &[String]) -> Vec<Message> {
        let mut messages = Vec::new();
        if !self.def.system_prompt.is_empty() {
            messages.push(Message::text(Role::System, self.def.system_prompt.clone()));
        }
        messages.push(Message::text(
            Role::User,
            with_context(prompt.to_owned(), context),
        ));
        messages
    }

    /// The loop from model turn `turns + 1` on.
    async fn react(&self, mut messages: Vec<Message>, mut turns: u32) -> Ending {
        loop {
            if let Some(status) = self.stopping() {
                return Ending::new(status, turns);
            }
            if turns >= self.def.max_turns {
                return Ending::new(EndStatus::TurnLimit, turns);
            }
            turns += 1;
            self.turn.store(turns, Ordering::Relaxed);
            let request = ModelRequest {
                messages: &messages,
                tools: &self.specs,
            };
            let answer = tokio::select! {
                answer = self.model.complete(request) => answer,
                () = self.cancel.cancelled() => return Ending::new(EndStatus::Cancelled, turns),
            };
            let answer = match answer {
                Ok(answer) => answer,
                Err(e) => return Ending::failed(e.to_string(), turns),
            };
            let calls: Vec<Value> = answer
                .tool_calls
                .iter()
                .map(|c| json!({"id": c.id, "name": c.function.name, "arguments": c.function.arguments}))
                .collect();
            self.trace.emit(Step::new(
                "model_turn",
                json!({"turn": turns, "content": answer.content, "tool_calls": calls}),
            ));
            if answer.tool_calls.is_empty() {
                let text = answer.content.clone().unwrap_or_default();
                self.trace
                    .emit(Step::new("answer", json!({"content": text})));
                let ending = Ending {
                    answer: Some(text),
                    dispatched: true,
                    ..Ending::new(EndStatus::Completed, turns)
                };
                messages.push(answer);
                match self.completed(&ending).await {
                    Some(reason) => {
                        messages.push(claude::feedback(&reason));
                        continue;
                    }
                    None if self.depth > 0 => {
                        return Ending {
                            conversation: Some(messages),
                            ..ending
                        };
                    }
                    None => return ending,
                }
            }
            let calls = answer.tool_calls.clone();
            messages.push(answer);
            let mut ids = std::collections::HashSet::new();
            for call in &calls {
                // A call the run can no longer make is still answered, so the conversation
                // stays well-formed for whoever resumes it.
                let content = if let Some(reason) = self.ended_by_hook.get() {
                    format!("not run: a hook ended the session ({reason})")
                } else if let Some(status) = self.stopping() {
                    format!("not run: the session is stopping ({})", status.as_str())
                } else if call.id.trim().is_empty() || !ids.insert(call.id.as_str()) {
                    // Hooks, approvals and the trace tell calls apart by id.
                    self.refuse_call(
                        &call.id,
                        &call.function.name,
                        "the tool call id is empty or repeats an earlier call of this turn",
                    )
                } else {
                    self.propose(&call.id, &call.function.name, &call.function.arguments);
                    self.tool_call(&call.id, &call.function.name, &call.function.arguments)
                        .await
                };
                messages.push(Message::tool(call.id.clone(), content));
            }
        }
    }

    /// `session_end` for this session.
    async fn end(&self, ending: &Ending) {
        let status = match ending.status {
            EndStatus::Completed => SessionEndStatus::Completed,
            EndStatus::Failed => SessionEndStatus::Failed,
            EndStatus::Cancelled | EndStatus::TimedOut => SessionEndStatus::Cancelled,
            EndStatus::TurnLimit => SessionEndStatus::TurnLimit,
        };
        let error = ending
            .error
            .clone()
            .or_else(|| (ending.status == EndStatus::TimedOut).then(|| "timed out".to_owned()));
        if !ending.dispatched {
            let end = SessionEnd {
                status,
                error: error.clone(),
                answer: ending.answer.clone(),
                continued: self.kept.load(Ordering::Relaxed),
            };
            self.emit(end, About::Session).await;
        }
        self.trace.emit(Step::new(
            "session_end",
            json!({"status": ending.status.as_str(), "turns": ending.turns, "error": error}),
        ));
    }
}

/// The warning for a selected skill the agent does not have, naming the ones it has.
fn unknown_skill(def: &AgentDef, name: &str) -> String {
    let known = def.skills.names();
    let known = if known.is_empty() {
        "it has none".to_owned()
    } else {
        format!("its skills: {}", known.join(", "))
    };
    format!(
        "no skill named `{name}` is available to this agent ({known}); nothing was selected for it"
    )
}

fn warning_step(file: &str, entry: &str, message: &str) -> Step {
    Step::new(
        "warning",
        json!({"file": file, "entry": entry, "message": message}),
    )
}

fn with_context(mut text: String, context: &[String]) -> String {
    for line in context {
        text.push_str("\n\n[hook context] ");
        text.push_str(line);
    }
    text
}
