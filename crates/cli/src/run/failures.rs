//! Hook failures as `tollgate run` shows them: on stdout, once each, under the dispatch they
//! belong to.
//!
//! A failed hook's `hook_run` line comes before its `dispatch` line; the failure is kept until
//! that dispatch is shown, then printed under it, grouped by failure mode:
//!
//! ```text
//! → write_file {"content":"x","path":"x.txt"}
//!   ✓ allow (1 hook(s)) [pre_tool_use]
//!   ⚠ 1 hook failed, skipped (fail_open): `flaky-lint` errored: exit status 1: lint crashed
//! ```
//!
//! A `fail_closed` failure that denied the call is not repeated: the deny line names it. A
//! fire-and-forget hook reports its end later (a `hook_run` line with `"detached": true`),
//! long after its dispatch was shown: that failure is printed when it arrives, with the
//! sub-agent's name when it is one's (`⚠ [analyst] 1 hook failed on session_end, …`).

use std::collections::HashMap;
use std::sync::Mutex;

use serde_json::Value;
use tollgate_runtime::trace::TraceLine;

use super::shorten;

/// One failed hook run.
struct Failure {
    hook: String,
    status: String,
    error: String,
    mode: String,
}

impl Failure {
    /// The failure of a `hook_run` line; `None` when the run did not fail.
    fn of(line: &TraceLine) -> Option<Self> {
        let field = |key: &str| {
            line.get(key)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        let status = field("status");
        if status == "completed" || status == "detached" {
            return None;
        }
        Some(Self {
            hook: field("hook"),
            status,
            error: field("error"),
            mode: field("failure_mode"),
        })
    }

    fn describe(&self) -> String {
        format!(
            "`{}` {}: {}",
            shorten(&self.hook, 200),
            shorten(&self.status, 40),
            shorten(&self.error, 200)
        )
    }
}

/// Failed hook runs waiting for their dispatch line, per session.
#[derive(Default)]
pub(super) struct Failures(Mutex<HashMap<String, Vec<Failure>>>);

impl Failures {
    /// Takes note of a `hook_run` line. Returns the line to print now: only for the late
    /// report of a fire-and-forget hook that failed. `pad` indents it, `tag` names its agent.
    pub(super) fn hook_run(&self, line: &TraceLine, pad: &str, tag: &str) -> Option<String> {
        let failure = Failure::of(line)?;
        if line.get("detached").and_then(Value::as_bool) == Some(true) {
            let event = line
                .get("event")
                .and_then(Value::as_str)
                .unwrap_or_default();
            return summary(&[failure], event, &format!("{pad}  ⚠ {tag}"));
        }
        if let Ok(mut pending) = self.0.lock() {
            let session = line.origin.session_id.clone();
            pending.entry(session).or_default().push(failure);
        }
        None
    }

    /// The lines to print under a `dispatch` line: its session's failed hooks, one line per
    /// failure mode, without the `fail_closed` failure the deny line already names.
    pub(super) fn dispatch(&self, line: &TraceLine, pad: &str) -> Vec<String> {
        let Some(failures) = self
            .0
            .lock()
            .ok()
            .and_then(|mut pending| pending.remove(&line.origin.session_id))
        else {
            return Vec::new();
        };
        let event = line
            .get("event")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let decided_by = line.get("decided_by").and_then(Value::as_str);
        let (open, closed): (Vec<Failure>, Vec<Failure>) = failures
            .into_iter()
            .filter(|f| !(f.mode == "fail_closed" && decided_by == Some(f.hook.as_str())))
            .partition(|f| f.mode != "fail_closed");
        let lead = format!("{pad}  ⚠ ");
        [summary(&open, event, &lead), summary(&closed, event, &lead)]
            .into_iter()
            .flatten()
            .collect()
    }
}

/// `LEAD N hook(s) failed[ on EVENT], skipped (MODE): `a` STATUS: ERROR; `b` …`, or `None`
/// for no failures. All of `failures` share one failure mode. `fail_closed` failures that did
/// not deny (a notification event cannot be blocked) are not "skipped" but shown as failed.
fn summary(failures: &[Failure], event: &str, lead: &str) -> Option<String> {
    let first = failures.first()?;
    let count = match failures.len() {
        1 => "1 hook failed".to_owned(),
        n => format!("{n} hooks failed"),
    };
    let on = match event {
        "pre_tool_use" => String::new(),
        event => format!(" on {}", shorten(event, 80)),
    };
    let mode = shorten(&first.mode, 40);
    let outcome = if first.mode == "fail_closed" {
        format!(" ({mode})")
    } else {
        format!(", skipped ({mode})")
    };
    let each: Vec<String> = failures.iter().map(Failure::describe).collect();
    Some(format!("{lead}{count}{on}{outcome}: {}", each.join("; ")))
}
