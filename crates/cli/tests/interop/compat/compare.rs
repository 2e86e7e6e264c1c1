//! What Claude Code did with a call or an event, read from what it left behind (the recorder's
//! payloads, the tool results and messages it sent the model), and what tollgate decides for
//! the same payload with the same files (`tollgate dispatch --protocol claude-code`).

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;
use tollgate_standins::{RecordedRequest, anthropic};

use super::table::{Call, Decision, Places};

/// A decision about one tool call, with what the model is told.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen {
    /// The call ran as proposed.
    Allow,
    /// The call ran with this `command` instead.
    Rewrite(String),
    /// Refused by a hook; the reason the model reads.
    Deny(String),
    /// Asked about (Claude Code's print mode refuses it, telling the model the reason).
    Ask(String),
}

impl Seen {
    pub fn decision(&self) -> Decision {
        match self {
            Seen::Allow => Decision::Allow,
            Seen::Rewrite(_) => Decision::Rewrite,
            Seen::Deny(_) => Decision::Deny,
            Seen::Ask(_) => Decision::Ask,
        }
    }
}

/// What one Claude Code run left behind.
pub struct Evidence {
    pub payloads: Vec<Value>,
    pub requests: Vec<RecordedRequest>,
    /// Every message of the last conversation sent to the model, as JSON text.
    pub conversation: String,
}

impl Evidence {
    pub fn new(places: &Places, requests: Vec<RecordedRequest>) -> Self {
        let conversation = requests
            .iter()
            .rev()
            .filter(|request| request.path == "/v1/messages")
            .find_map(|request| request.json.as_ref())
            .map(|body| texts(&body["messages"]).join("\n\n"))
            .unwrap_or_default();
        Self {
            payloads: places.payloads(),
            requests,
            conversation,
        }
    }

    /// The payloads of `event`, in order.
    pub fn of(&self, event: &str) -> Vec<&Value> {
        self.payloads
            .iter()
            .filter(|payload| payload["hook_event_name"] == event)
            .collect()
    }

    /// The `PreToolUse` payload Claude Code wrote for `call`: same tool, and every field of the
    /// call's input as proposed.
    pub fn pre_tool_use(&self, call: &Call, places: &Places) -> Option<&Value> {
        let input = places.fill(&call.input);
        self.of("PreToolUse").into_iter().find(|payload| {
            payload["tool_name"] == call.tool.as_str()
                && input
                    .as_object()
                    .into_iter()
                    .flatten()
                    .all(|(key, value)| payload["tool_input"][key] == *value)
        })
    }

    /// What Claude Code did with the call `payload` asked about.
    pub fn seen(&self, payload: &Value) -> Seen {
        let id = &payload["tool_use_id"];
        let ran = self.payloads.iter().find(|p| {
            p["tool_use_id"] == *id
                && matches!(
                    p["hook_event_name"].as_str(),
                    Some("PostToolUse" | "PostToolUseFailure")
                )
        });
        if let Some(ran) = ran {
            let proposed = &payload["tool_input"]["command"];
            let command = &ran["tool_input"]["command"];
            return match command.as_str() {
                Some(command) if *proposed != command => Seen::Rewrite(command.to_owned()),
                _ => Seen::Allow,
            };
        }
        let result = anthropic::tool_results(&self.requests)
            .into_iter()
            .find(|result| Some(result.tool_use_id.as_str()) == id.as_str());
        let Some(result) = result else {
            panic!("Claude Code neither ran nor answered the call of {payload}");
        };
        let prefix = format!(
            "PreToolUse:{} hook error: ",
            payload["tool_name"].as_str().unwrap()
        );
        match result.text.strip_prefix(&prefix) {
            Some(rest) => Seen::Deny(reason_of(rest)),
            None => Seen::Ask(result.text.trim().to_owned()),
        }
    }

    /// The texts that follow `prefix` in the conversation, each up to the end of its paragraph.
    pub fn after(&self, prefix: &str) -> Vec<String> {
        self.conversation
            .match_indices(prefix)
            .map(|(at, _)| {
                let rest = &self.conversation[at + prefix.len()..];
                rest.split("\n\n")
                    .next()
                    .unwrap_or_default()
                    .trim()
                    .to_owned()
            })
            .collect()
    }

    /// The reasons of Claude Code's `<what> hook blocking error from command: "CMD": REASON`
    /// messages.
    pub fn blocking_errors(&self, what: &str) -> Vec<String> {
        self.after(&format!("{what} hook blocking error from command: "))
            .into_iter()
            .map(|text| match text.find("\": ") {
                Some(at) => text[at + 3..].to_owned(),
                None => text,
            })
            .collect()
    }

    /// How many requests Claude Code made of the model.
    pub fn model_requests(&self) -> usize {
        self.requests
            .iter()
            .filter(|request| request.path == "/v1/messages")
            .count()
    }
}

/// The texts of a conversation's messages, in order: string contents, `text` blocks and the
/// text of tool results.
fn texts(messages: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for message in messages.as_array().into_iter().flatten() {
        collect(&message["content"], &mut out);
    }
    out
}

fn collect(content: &Value, out: &mut Vec<String>) {
    match content {
        Value::String(text) => out.push(text.clone()),
        Value::Array(blocks) => {
            for block in blocks {
                match block.get("text") {
                    Some(Value::String(text)) => out.push(text.clone()),
                    _ => collect(&block["content"], out),
                }
            }
        }
        _ => {}
    }
}

/// The reason of a `PreToolUse` block as the model reads it: without the `[COMMAND]: ` Claude
/// Code puts before an exit-2 hook's stderr, and without the note naming a plugin.
fn reason_of(text: &str) -> String {
    let text = match (text.starts_with('['), text.find("]: ")) {
        (true, Some(at)) => &text[at + 3..],
        _ => text,
    };
    let text = match text.find("\n\nThis hook comes from the ") {
        Some(at) => &text[..at],
        None => text,
    };
    text.trim().to_owned()
}

/// tollgate's decision for a payload Claude Code wrote: `tollgate dispatch --protocol
/// claude-code`, with the project's settings, the plugin's `hooks.json` and the skills in use,
/// from the project's folder.
pub fn dispatch(places: &Places, payload: &Value, skills: &[PathBuf]) -> Value {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tollgate"));
    command
        .args(["dispatch", "--protocol", "claude-code", "--payload", "@-"])
        .args(["--hooks", ".claude/settings.json", "--hooks"])
        .arg(places.plugin.join("hooks/hooks.json"));
    for skill in skills {
        command.arg("--skill").arg(skill);
    }
    let mut child = command
        .current_dir(&places.project)
        .env("HOME", &places.home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    std::io::Write::write_all(&mut stdin, payload.to_string().as_bytes()).unwrap();
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "tollgate dispatch failed: {stderr}"
    );
    let mut report: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("tollgate dispatch printed no report ({e}): {stderr}"));
    // What explains a disagreement: the hooks that failed, and why.
    let failures: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("hook failed"))
        .collect();
    report["stderr"] = Value::String(failures.join("\n"));
    report
}

/// [`dispatch`] for each `(payload, skills)`, a few at a time (most of a dispatch is waiting
/// on hook processes), in order.
pub fn dispatch_all(places: &Places, asks: &[(&Value, &[PathBuf])]) -> Vec<Value> {
    const WORKERS: usize = 4;
    let next = AtomicUsize::new(0);
    let done: Mutex<Vec<Option<Value>>> = Mutex::new(vec![None; asks.len()]);
    std::thread::scope(|scope| {
        for _ in 0..WORKERS.min(asks.len()) {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some((payload, skills)) = asks.get(i) else {
                        break;
                    };
                    let report = dispatch(places, payload, skills);
                    done.lock().unwrap()[i] = Some(report);
                }
            });
        }
    });
    done.into_inner()
        .unwrap()
        .into_iter()
        .map(Option::unwrap)
        .collect()
}

/// tollgate's decision about a tool call, from its dispatch report.
pub fn decided(report: &Value) -> Seen {
    let reason = report["reason"]
        .as_str()
        .unwrap_or_default()
        .trim()
        .to_owned();
    match report["decision"].as_str() {
        Some("deny") => Seen::Deny(reason),
        Some("ask") => Seen::Ask(reason),
        Some("allow") => match report["modified_args"]["command"].as_str() {
            Some(command) => Seen::Rewrite(command.to_owned()),
            None => Seen::Allow,
        },
        other => panic!("unknown decision {other:?} in {report}"),
    }
}

/// The additional context a dispatch gathered.
pub fn contexts(report: &Value) -> Vec<String> {
    report["additional_context"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .flat_map(|text| text.split('\n'))
        .map(|text| text.trim().to_owned())
        .filter(|text| !text.is_empty())
        .collect()
}

/// The detail of every side effect of `kind` in a dispatch report.
pub fn side_effects<'a>(report: &'a Value, kind: &str) -> Vec<&'a Value> {
    report["side_effects"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|effect| effect["kind"] == kind)
        .map(|effect| &effect["detail"])
        .collect()
}
