//! A command running in a sandbox.

use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;

use tokio::net::unix::pipe;

use crate::client::{Host, InnerRef, park};
use crate::error::{Result, SandboxError};
use crate::wire::Done;

/// A command started by [`Sandbox::spawn`](crate::Sandbox::spawn), with pipes to its
/// standard streams.
///
/// Dropping it before [`wait`](SandboxChild::wait) returned kills the command and every
/// process it started.
#[derive(Debug)]
pub struct SandboxChild {
    /// The command's standard input (drop it to close the stream).
    pub stdin: Option<pipe::Sender>,
    /// The command's standard output.
    pub stdout: Option<pipe::Receiver>,
    /// The command's standard error.
    pub stderr: Option<pipe::Receiver>,
    host: Option<Host>,
    sandbox: InnerRef,
}

impl SandboxChild {
    pub(crate) fn new(
        stdin: pipe::Sender,
        stdout: pipe::Receiver,
        stderr: pipe::Receiver,
        host: Host,
        sandbox: InnerRef,
    ) -> Self {
        Self {
            stdin: Some(stdin),
            stdout: Some(stdout),
            stderr: Some(stderr),
            host: Some(host),
            sandbox,
        }
    }

    /// Waits until the command's first process ends. By then every other process it started
    /// has been killed, so its output pipes reach their end once drained.
    ///
    /// # Errors
    /// [`SandboxError::Host`] when the sandbox's host failed, or when called again after the
    /// command ended or was killed.
    ///
    /// # Cancel safety
    /// Not cancel safe: dropping the future kills the command (as [`SandboxChild::kill`]).
    pub async fn wait(&mut self) -> Result<ExitStatus> {
        let mut host = self
            .host
            .take()
            .ok_or_else(|| SandboxError::Host("the command already ended".into()))?;
        match host.done().await? {
            Done::Exited { wait_status } => {
                park(&self.sandbox, host);
                Ok(ExitStatus::from_raw(wait_status))
            }
            Done::SpawnFailed { error } => {
                park(&self.sandbox, host);
                Err(SandboxError::Spawn(error))
            }
        }
    }

    /// Kills the command and everything it started, now (the host is stopped).
    pub fn kill(&mut self) {
        self.host = None;
    }
}
