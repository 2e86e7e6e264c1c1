//! Spawning the shell (in the sandbox or unconfined), feeding it the payload, draining its
//! output, and killing what it started.

use std::io;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::process::{Child, Command};
use tollgate_core::truncate::{HOOK_PAYLOAD_MAX_BYTES, truncate_payload};
use tollgate_core::{FailureKind, HookError};
use tollgate_sandbox::{Sandbox, SandboxCommand, SandboxError};

use super::confine::{CONFIG_DIR_ENV, SCRATCH_ENV, environment};
use crate::process_group::GroupKiller;

/// How long output pipes may stay open after an unconfined shell exited (a background job
/// holding them) before the hook's process group is killed.
const EXIT_GRACE: Duration = Duration::from_millis(200);

/// What to run.
pub(super) struct Invocation<'a> {
    pub(super) shell: &'a Path,
    pub(super) line: &'a str,
    pub(super) payload: &'a Value,
    pub(super) event: &'a str,
    pub(super) output_cap: usize,
    pub(super) cwd: &'a Path,
    /// Variables of the runtime's environment passed through by name.
    pub(super) passthrough: &'a [String],
    /// The hook's scratch directory, when sandboxed.
    pub(super) scratch: Option<&'a Path>,
    /// The folder of the file that declared the hook, when known.
    pub(super) config_dir: Option<&'a Path>,
    /// Variables of the hook's dialect (Claude Code's `CLAUDE_*`).
    pub(super) extra_env: &'a [(String, String)],
}

/// A process that ran to its end.
pub(super) struct Finished {
    pub(super) status: ExitStatus,
    pub(super) stdout: Vec<u8>,
    pub(super) stderr: Vec<u8>,
}

/// Why a sandboxed run did not finish.
pub(super) enum Sandboxed {
    /// This machine cannot build the sandbox: the caller decides what to do.
    Unavailable(SandboxError),
    /// The run failed (spawn error, output over the cap, the host failed).
    Failed(HookError),
}

impl Invocation<'_> {
    /// The whole environment of the shell.
    fn environment(&self) -> Result<Vec<(String, String)>, HookError> {
        let env_payload =
            serde_json::to_string(&truncate_payload(self.payload, HOOK_PAYLOAD_MAX_BYTES))?;
        let mut extra = vec![
            // `ARGUMENTS` too, so a reference the rewrite could not see still expands to the
            // payload (as data), never to something inherited.
            ("ARGUMENTS".to_owned(), env_payload.clone()),
            ("HOOK_PAYLOAD".to_owned(), env_payload),
            ("HOOK_EVENT".to_owned(), self.event.to_owned()),
        ];
        extra.extend(self.extra_env.iter().cloned());
        if let Some(dir) = self.config_dir {
            let dir = dir.to_string_lossy().into_owned();
            extra.push((CONFIG_DIR_ENV.to_owned(), dir));
        }
        if let Some(scratch) = self.scratch {
            extra.push((
                SCRATCH_ENV.to_owned(),
                scratch.to_string_lossy().into_owned(),
            ));
            // The sandbox's /tmp is private; the runtime's TMPDIR may not exist inside.
            extra.push(("TMPDIR".to_owned(), "/tmp".to_owned()));
        }
        Ok(environment(self.passthrough, extra))
    }
}

/// Runs the invocation in `sandbox` to its end.
///
/// # Errors
/// [`Sandboxed::Unavailable`] when this machine cannot build the sandbox; otherwise a
/// [`HookError`]: `errored` when the command cannot start, when stdout or stderr exceeds the
/// cap (the command is killed first) or when the sandbox fails.
///
/// # Cancel safety
/// Dropping the future kills the command and everything it started.
pub(super) async fn run_sandboxed(
    invocation: &Invocation<'_>,
    sandbox: &Sandbox,
) -> Result<Finished, Sandboxed> {
    let failed = |e: HookError| Sandboxed::Failed(e);
    let mut command = SandboxCommand::new(invocation.shell.to_string_lossy())
        .arg("-c")
        .arg(invocation.line)
        .current_dir(invocation.cwd);
    for (key, value) in invocation.environment().map_err(failed)? {
        command = command.env(key, value);
    }
    let mut child = match sandbox.spawn(&command).await {
        Ok(child) => child,
        Err(e) if e.is_unavailable() => return Err(Sandboxed::Unavailable(e)),
        Err(e) => return Err(failed(HookError::msg(e.to_string()))),
    };
    if let Some(stdin) = child.stdin.take() {
        feed(
            stdin,
            serde_json::to_vec(invocation.payload).map_err(|e| failed(e.into()))?,
        );
    }
    let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
        return Err(failed(HookError::msg(
            "the hook's output pipes are missing",
        )));
    };
    // When the shell ends, the sandbox kills everything else: the pipes then reach their end.
    let (output, status) = tokio::try_join!(drain(stdout, stderr, invocation.output_cap), async {
        child
            .wait()
            .await
            .map_err(|e| HookError::msg(e.to_string()))
    })
    .map_err(failed)?;
    let (stdout, stderr) = output;
    Ok(Finished {
        status,
        stdout,
        stderr,
    })
}

/// Runs the invocation unconfined (admin config turned the sandbox off, or a trusted hook on
/// a machine without it) to its end.
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
    if let Some(stdin) = child.stdin.take() {
        feed(stdin, serde_json::to_vec(invocation.payload)?);
    }
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
    let mut command = Command::new(invocation.shell);
    command
        .env_clear()
        .envs(invocation.environment()?)
        .arg("-c")
        .arg(invocation.line)
        .current_dir(invocation.cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
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
fn feed(mut stdin: impl AsyncWrite + Unpin + Send + 'static, payload: Vec<u8>) {
    tokio::spawn(async move {
        let _ = stdin.write_all(&payload).await;
        let _ = stdin.shutdown().await;
    });
}

/// Reads stdout and stderr to their ends, concurrently, each up to `cap` bytes.
async fn drain(
    stdout: impl AsyncRead + Unpin,
    stderr: impl AsyncRead + Unpin,
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
