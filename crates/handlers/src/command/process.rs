//! Spawning `/bin/sh -c`, feeding it the payload, draining its output, and killing its process
//! group.

use std::io;
use std::path::Path;
use std::process::{ExitStatus, Stdio};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, Command};
use tollgate_core::truncate::{HOOK_PAYLOAD_MAX_BYTES, truncate_payload};
use tollgate_core::{FailureKind, HookError};

/// What to run.
pub(super) struct Invocation<'a> {
    pub(super) line: &'a str,
    pub(super) payload: &'a Value,
    pub(super) event: &'a str,
    pub(super) output_cap: usize,
    pub(super) cwd: Option<&'a Path>,
}

/// A process that ran to its end.
pub(super) struct Finished {
    pub(super) status: ExitStatus,
    pub(super) stdout: Vec<u8>,
    pub(super) stderr: Vec<u8>,
}

/// Kills the process group when dropped: on success, on failure, and when the hook's future is
/// dropped at its deadline.
struct GroupKiller(Option<Pid>);

impl Drop for GroupKiller {
    fn drop(&mut self) {
        if let Some(group) = self.0 {
            // ESRCH (the group is already gone) is the common, harmless case.
            let _ = killpg(group, Signal::SIGKILL);
        }
    }
}

/// Runs the invocation to its end.
///
/// # Errors
/// A [`HookError`]: `errored` when the shell cannot be spawned or its output cannot be read,
/// `errored` when stdout or stderr exceeds the cap (the group is killed first).
///
/// # Cancel safety
/// Dropping the future kills the process group; Tokio reaps the direct child.
pub(super) async fn run(invocation: &Invocation<'_>) -> Result<Finished, HookError> {
    let full = serde_json::to_vec(invocation.payload)?;
    let env_payload = serde_json::to_string(&truncate_payload(
        invocation.payload,
        HOOK_PAYLOAD_MAX_BYTES,
    ))?;
    let mut command = Command::new("/bin/sh");
    command
        .arg("-c")
        .arg(invocation.line)
        .env("HOOK_PAYLOAD", env_payload)
        .env("HOOK_EVENT", invocation.event)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    if let Some(dir) = invocation.cwd {
        command.current_dir(dir);
    }
    let mut child = command
        .spawn()
        .map_err(|e| HookError::msg(format!("cannot spawn /bin/sh: {e}")))?;
    let killer = GroupKiller(
        child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .map(Pid::from_raw),
    );
    feed_stdin(&mut child, full);
    // On an early return the killer and then the child are dropped: the group is killed and
    // Tokio reaps the shell.
    let (stdout, stderr) = drain(&mut child, invocation.output_cap).await?;
    let status = child
        .wait()
        .await
        .map_err(|e| HookError::msg(format!("cannot wait for the hook: {e}")))?;
    // Background jobs the hook left behind die with it.
    drop(killer);
    Ok(Finished {
        status,
        stdout,
        stderr,
    })
}

/// Writes the whole payload to stdin from its own task, then closes it. Errors (the hook exited
/// or closed stdin without reading) are expected and ignored.
fn feed_stdin(child: &mut Child, payload: Vec<u8>) {
    if let Some(mut stdin) = child.stdin.take() {
        tokio::spawn(async move {
            let _ = stdin.write_all(&payload).await;
            let _ = stdin.shutdown().await;
        });
    }
}

/// Reads stdout and stderr to their ends, concurrently, each up to `cap` bytes.
async fn drain(child: &mut Child, cap: usize) -> Result<(Vec<u8>, Vec<u8>), HookError> {
    let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
        return Err(HookError::msg("the hook's output pipes are missing"));
    };
    tokio::try_join!(
        read_capped(stdout, cap, "stdout"),
        read_capped(stderr, cap, "stderr")
    )
}

async fn read_capped(
    mut pipe: impl AsyncRead + Unpin,
    cap: usize,
    which: &str,
) -> Result<Vec<u8>, HookError> {
    let mut buffer = Vec::new();
    let mut chunk = vec![0_u8; 64 * 1024];
    loop {
        let read = pipe.read(&mut chunk).await.map_err(|e: io::Error| {
            HookError::msg(format!("cannot read the hook's {which}: {e}"))
        })?;
        if read == 0 {
            return Ok(buffer);
        }
        if buffer.len() + read > cap {
            return Err(HookError::new(
                FailureKind::Errored,
                format!("{which} exceeded the cap of {cap} bytes; the hook was killed"),
            ));
        }
        buffer.extend_from_slice(&chunk[..read]);
    }
}
