//! Writing agents into temp dirs, recording classes, running sessions.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tollgate_core::hook_fn;
use tollgate_handlers::{ClassInstance, ClassTable};
use tollgate_protocol::wire::PayloadWire;
use tollgate_protocol::{Event, Outcome};
use tollgate_runtime::trace::{Collect, TraceSink};
use tollgate_runtime::{AgentDef, CancellationToken, RunReport, RunRequest, Services, run};

/// Writes `files` (name → text) into `dir`.
pub fn write(dir: &Path, files: &[(&str, &str)]) {
    for (name, text) in files {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}

/// One assistant turn calling `tool` with `args`.
pub fn call(id: &str, tool: &str, args: Value) -> String {
    json!({"role": "assistant", "content": null, "tool_calls": [
        {"id": id, "type": "function", "function": {"name": tool, "arguments": args.to_string()}}
    ]})
    .to_string()
}

/// One final assistant answer.
pub fn answer(text: &str) -> String {
    json!({"role": "assistant", "content": text}).to_string()
}

/// What a `Recorder` hook saw: (agent_id, hook name, payload).
pub type Seen = Arc<Mutex<Vec<(String, String, Value)>>>;

/// A class table with the built-ins plus `Recorder` (params `{name, events}`): records every
/// payload it sees and counts its drops in `dropped`.
pub fn recording_classes(seen: Seen, dropped: Arc<AtomicUsize>) -> ClassTable {
    struct DropProbe(Arc<AtomicUsize>);
    impl Drop for DropProbe {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    let mut table = ClassTable::builtin();
    table.register(
        "Recorder",
        Arc::new(move |params: &Value| {
            let name = params["name"].as_str().unwrap_or("recorder").to_owned();
            let events: Vec<Event> = params["events"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .map(|e| e.as_str().unwrap().parse().unwrap())
                        .collect()
                })
                .unwrap_or_default();
            let seen = Arc::clone(&seen);
            let probe = Arc::new(DropProbe(Arc::clone(&dropped)));
            let hook_name = name.clone();
            let hook = hook_fn(name, move |ctx| {
                let _alive = Arc::clone(&probe);
                let seen = Arc::clone(&seen);
                let hook_name = hook_name.clone();
                async move {
                    let payload = ctx.payload();
                    let wire = PayloadWire::from(payload).to_json();
                    seen.lock()
                        .unwrap()
                        .push((payload.common.agent_id.clone(), hook_name, wire));
                    Ok(Outcome::allow())
                }
            });
            Ok(ClassInstance {
                hook: Some(Arc::new(hook)),
                events,
                tools: None,
                observer: None,
            })
        }),
    );
    table
}

/// Runs `agent` with `prompt` and returns the report and the trace as JSON lines.
pub async fn run_agent(agent: &Path, prompt: &str, services: &Services) -> (RunReport, Vec<Value>) {
    let (report, collect) =
        run_traced(agent, prompt, services, CancellationToken::new(), vec![]).await;
    (report, json_lines(&collect))
}

/// Runs `agent` with `prompt`, a cancel token and more trace sinks; the trace stays readable
/// afterwards (fire-and-forget hooks may add lines after the run).
pub async fn run_traced(
    agent: &Path,
    prompt: &str,
    services: &Services,
    cancel: CancellationToken,
    extra: Vec<Arc<dyn TraceSink>>,
) -> (RunReport, Arc<Collect>) {
    let collect = Arc::new(Collect::default());
    let request = RunRequest {
        agent: AgentDef::load(agent).unwrap(),
        prompt: prompt.into(),
        skills: vec![],
        model: None,
        workspace: Some(agent.parent().unwrap().join("ws")),
        run_id: None,
    };
    let mut sinks: Vec<Arc<dyn TraceSink>> = vec![collect.clone()];
    sinks.extend(extra);
    let report = run(request, services, sinks, cancel).await;
    (report, collect)
}

/// The trace as JSON objects.
pub fn json_lines(collect: &Collect) -> Vec<Value> {
    collect.lines().iter().map(|l| l.to_json()).collect()
}

/// The trace lines of `kind`.
pub fn of<'a>(lines: &'a [Value], kind: &str) -> Vec<&'a Value> {
    lines.iter().filter(|l| l["type"] == kind).collect()
}

/// The `dispatch` lines for `event`.
pub fn dispatches<'a>(lines: &'a [Value], event: &str) -> Vec<&'a Value> {
    lines
        .iter()
        .filter(|l| l["type"] == "dispatch" && l["event"] == event)
        .collect()
}

/// A temp dir holding an agent.
pub fn agent_dir() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_owned();
    (dir, path)
}
