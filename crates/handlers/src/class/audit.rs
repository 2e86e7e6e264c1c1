//! `AuditLogHook`: one JSON line per dispatch, with the folded decision, appended to a file.
//!
//! It is a [`DispatchObserver`], not a hook: it sees every dispatch of the registry (also those
//! a hook denied, which later hooks never see) after the fold and the permission gate. Each line:
//!
//! ```json
//! {"at":"2025-01-02T03:04:05.678Z","event":"pre_tool_use","session_id":"s1","run_id":"r1",
//!  "tool_name":"sql_execute","decision":"deny","reason":"…","decided_by":"ReadOnlyGuard",
//!  "hook_runs":[{"hook":"ReadOnlyGuard","kind":"class",…}]}
//! ```
//!
//! `tool_name` (tool events), `reason` (ask, deny) and `decided_by` (a hook's name, or
//! `permission_gate`) are left out when absent; `bypassed: true` is added under evaluation
//! bypass; `hook_runs` are [`HookRunWire`] records.
//!
//! The file (param `path`, required) is opened at instantiation with append + create and is
//! never truncated. Each line goes out in one `write_all` on an `O_APPEND` descriptor without a
//! user-space buffer, so it reaches the kernel before `observe` returns and lines of concurrent
//! runs do not interleave (a short write on a full disk could split one). There is no `fsync`.
//! The write is a blocking `std::fs` call on the dispatching thread: one small write to a local
//! file, kept deliberately simple; do not point `path` at a slow network file system. A failed
//! write is logged at WARN and the dispatch goes on.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::SystemTime;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tollgate_core::{DecidedBy, DispatchObserver, DispatchOutcome};
use tollgate_protocol::Payload;
use tollgate_protocol::wire::HookRunWire;

use super::{ClassError, ClassInstance, parse_params};

mod time;

/// The class name.
pub(super) const CLASS: &str = "AuditLogHook";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Params {
    path: PathBuf,
}

/// Builds the class from its params.
pub(super) fn instantiate(params: &Value) -> Result<ClassInstance, ClassError> {
    let params: Params = parse_params(CLASS, params)?;
    let file = OpenOptions::new()
        .append(true)
        .create(true)
        .open(&params.path)
        .map_err(|e| {
            let path = params.path.display();
            ClassError::bad_params(CLASS, format!("path: cannot open {path}: {e}"))
        })?;
    let observer = AuditLog {
        path: params.path,
        file,
    };
    Ok(ClassInstance {
        observer: Some(Arc::new(observer)),
        ..ClassInstance::default()
    })
}

struct AuditLog {
    path: PathBuf,
    file: File,
}

/// One line of the audit log.
#[derive(Serialize)]
struct AuditLineWire<'a> {
    at: String,
    event: String,
    session_id: &'a str,
    run_id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_name: Option<&'a str>,
    decision: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    decided_by: Option<&'a str>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    bypassed: bool,
    hook_runs: Vec<HookRunWire>,
}

fn line<'a>(payload: &'a Payload, outcome: &'a DispatchOutcome) -> AuditLineWire<'a> {
    AuditLineWire {
        at: time::rfc3339(SystemTime::now()),
        event: outcome.event.to_string(),
        session_id: &payload.common.session_id,
        run_id: &payload.common.run_id,
        tool_name: payload.tool_call().map(|call| call.tool_name.as_str()),
        decision: outcome.decision.as_str(),
        reason: outcome.decision.reason(),
        decided_by: outcome.decided_by.as_ref().map(|by| match by {
            DecidedBy::Hook(name) => &**name,
            DecidedBy::PermissionGate => "permission_gate",
        }),
        bypassed: outcome.bypassed,
        hook_runs: outcome
            .runs
            .iter()
            .map(|run| run.to_wire(&outcome.event))
            .collect(),
    }
}

impl DispatchObserver for AuditLog {
    fn observe(&self, payload: &Payload, outcome: &DispatchOutcome) {
        let mut bytes = match serde_json::to_vec(&line(payload, outcome)) {
            Ok(bytes) => bytes,
            Err(e) => return tracing::warn!(error = %e, "audit line not serializable"),
        };
        bytes.push(b'\n');
        if let Err(e) = (&self.file).write_all(&bytes) {
            tracing::warn!(path = %self.path.display(), error = %e, "audit line not written");
        }
    }
}
