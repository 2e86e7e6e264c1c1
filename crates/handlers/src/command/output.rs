//! Interpreting a finished command: exit status and stdout into an outcome.

use std::os::unix::process::ExitStatusExt;

use tollgate_core::{FailureKind, HookError};
use tollgate_protocol::wire::OutcomeWire;
use tollgate_protocol::{Decision, Event, Outcome};

use super::process::Finished;
use crate::text::excerpt;

/// Longest stderr excerpt kept in a reason or an error, in bytes.
const STDERR_EXCERPT: usize = 4096;

pub(super) fn interpret(
    name: &str,
    event: &Event,
    finished: Finished,
) -> Result<Outcome, HookError> {
    let stderr = excerpt(&finished.stderr, STDERR_EXCERPT);
    match finished.status.code() {
        Some(0) => parse_output(event, &finished.stdout),
        Some(2) => Ok(Outcome::from(Decision::deny(if stderr.is_empty() {
            format!("blocked by command hook `{name}` (exit 2)")
        } else {
            stderr
        }))),
        Some(code) => Err(HookError::msg(with_stderr(
            format!("exit status {code}"),
            &stderr,
        ))),
        None => {
            let signal = finished.status.signal().unwrap_or_default();
            Err(HookError::new(
                FailureKind::Crashed,
                with_stderr(format!("killed by signal {signal}"), &stderr),
            ))
        }
    }
}

/// Reads the stdout of a command hook that exited 0.
///
/// Empty (or only whitespace): no opinion. One JSON object: an outcome, with native and
/// Claude-Code-compatible fields ([`OutcomeWire`]). Anything else: additional context on events
/// that take context (`user_turn`, `session_start`), as Claude Code does; elsewhere an error.
///
/// # Errors
/// [`FailureKind::InvalidOutput`] for stdout that is not valid UTF-8, not exactly one JSON object
/// where one is required, or an object that is not a valid outcome (unknown key, wrong type,
/// conflicting rewrites).
pub fn parse_output(event: &Event, stdout: &[u8]) -> Result<Outcome, HookError> {
    let text = std::str::from_utf8(stdout)
        .map_err(|_| HookError::new(FailureKind::InvalidOutput, "stdout is not valid UTF-8"))?
        .trim();
    if text.is_empty() {
        return Ok(Outcome::allow());
    }
    if text.starts_with('{') {
        let wire: OutcomeWire = serde_json::from_str(text)
            .map_err(|e| invalid(format!("stdout is not one valid outcome object: {e}")))?;
        return Outcome::try_from(wire).map_err(|e| invalid(e.to_string()));
    }
    if matches!(event, Event::UserTurn | Event::SessionStart) {
        return Ok(Outcome::allow().with_context(text));
    }
    Err(invalid(format!(
        "stdout must be empty or one JSON object on {event}, got: {}",
        excerpt(text.as_bytes(), STDERR_EXCERPT)
    )))
}

fn invalid(message: String) -> HookError {
    HookError::new(FailureKind::InvalidOutput, message)
}

fn with_stderr(what: String, stderr: &str) -> String {
    if stderr.is_empty() {
        what
    } else {
        format!("{what}: {stderr}")
    }
}
