//! Spawning the shell, feeding it the payload, draining its output, and killing its process
//! group.

use std::io;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStderr, ChildStdout, Command};
use tollgate_core::truncate::{HOOK_PAYLOAD_MAX_BYTES, truncate_payload};
use tollgate_core::{FailureKind, HookError};

use crate::process_group::GroupKiller;

/// How long output pipes may stay open after the shell exited (a background job holding them)
/// before the hook's process group is killed.
const EXIT_GRACE: Duration = Duration::from_millis(200);

/// Environment variables an external (untrusted) hook still gets; everything else the runtime
/// has (API keys, webhook secrets) is withheld.
const EXTERNAL_ENV: [&str; 10] = [
    "PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "TERM",
];

/// What to run.
pub(super) struct Invocation<'a> {
    pub(super) shell: &'a Path,
    pub(super) line: &'a str,
    pub(super) payload: &'a Value,
    pub(super) event: &'a str,
    pub(super) output_cap: usize,
    pub(super) cwd: Option<&'a Path>,
    /// Whether the hook inherits the runtime's whole environment (trusted sources) or only
    /// [`EXTERNAL_ENV`].
    pub(super) inherit_env: bool,
}

/// A process that ran to its end.
pub(super) struct Finished {
    pub(super) status: ExitStatus,
    pub(super) stdout: Vec<u8>,
    pub(super) stderr: Vec<u8>,
}

/// Runs the invocation to its end.
///
/// # Errors
/// A [`HookError`]: `errored` when the shell cannot be spawned or its output cannot be read,
/// when stdout or stderr exceeds the cap (the group is killed first), or when a process that
/// left the hook's process group keeps its output open after the shell exited.
///
/// # Cancel safety
/// Dropping the future kills the process group; Tokio reaps the direct child.
pub(super) async fn run(invocation: &Invocation<'_>) -> Result<Finished, HookError> {
    let mut child = spawn(invocation)?;
    let killer = GroupKiller::of(&child);
    feed_stdin(&mut child, serde_json::to_vec(invocation.payload)?);
    let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
        return Err(HookError::msg("the hook's output pipes are missing"));
    };
    let drain = drain(stdout, stderr, invocation.output_cap);
    tokio::pin!(drain);
    // On an early return the killer and then the child are dropped: the group is killed and
    // Tokio reaps the shell.
    let (output, status) = tokio::select! {
        output = &mut drain => (output?, wait(&mut child).await?),
        status = wait(&mut child) => (after_exit(&mut drain, &killer).await?, status?),
    };
    // Background jobs the hook left behind die with it.
    drop(killer);
    let (stdout, stderr) = output;
    Ok(Finished {
        status,
        stdout,
        stderr,
    })
}

fn spawn(invocation: &Invocation<'_>) -> Result<Child, HookError> {
    let env_payload = serde_json::to_string(&truncate_payload(
        invocation.payload,
        HOOK_PAYLOAD_MAX_BYTES,
    ))?;
    let mut command = Command::new(invocation.shell);
    if !invocation.inherit_env {
        command.env_clear();
        for (key, value) in
            std::env::vars_os().filter(|(key, _)| EXTERNAL_ENV.iter().any(|k| key == k))
        {
            command.env(key, value);
        }
    }
    command
        .arg("-c")
        .arg(invocation.line)
        // `ARGUMENTS` too, so a reference the rewrite could not see still expands to the
        // payload (as data), never to something inherited.
        .env("ARGUMENTS", &env_payload)
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
    command
        .spawn()
        .map_err(|e| HookError::msg(format!("cannot spawn {}: {e}", invocation.shell.display())))
}

async fn wait(child: &mut Child) -> Result<ExitStatus, HookError> {
    child
        .wait()
        .await
        .map_err(|e| HookError::msg(format!("cannot wait for the hook: {e}")))
}

/// The shell exited while its output is still open: give a background job a moment, then kill
/// the group and read what is left.
async fn after_exit(
    drain: &mut (impl Future<Output = Result<(Vec<u8>, Vec<u8>), HookError>> + Unpin),
    killer: &GroupKiller,
) -> Result<(Vec<u8>, Vec<u8>), HookError> {
    if let Ok(output) = tokio::time::timeout(EXIT_GRACE, &mut *drain).await {
        return output;
    }
    killer.kill();
    match tokio::time::timeout(EXIT_GRACE, drain).await {
        Ok(output) => output,
        Err(_) => Err(HookError::msg(
            "the hook exited, but a process it started outside its process group (setsid?) \
             keeps its output open",
        )),
    }
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
async fn drain(
    stdout: ChildStdout,
    stderr: ChildStderr,
    cap: usize,
) -> Result<(Vec<u8>, Vec<u8>), HookError> {
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
