//! The runtime's side: a [`Sandbox`] keeps hosts (one launcher each) for one policy and runs
//! commands in them.

use std::os::fd::{AsFd, OwnedFd};
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt, Interest};
use tokio::net::UnixStream;
use tokio::net::unix::pipe;

use crate::child::SandboxChild;
use crate::discover::Launcher;
use crate::egress::{Egress, NoEgress, Proxy};
use crate::error::{Result, SandboxError};
use crate::fdpass::send_fds;
use crate::policy::{Network, Policy};
use crate::wire::{self, Done, Hello, Request, Setup};
use crate::{Features, LAUNCHER_ARG};

/// How long a new host may take to report ready.
const START_TIMEOUT: Duration = Duration::from_secs(10);
/// Idle hosts kept per sandbox.
const POOL: usize = 4;

/// One command to run in a sandbox: a program, its arguments, its whole environment and its
/// working directory. Its standard streams are always pipes (see [`SandboxChild`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxCommand {
    program: String,
    args: Vec<String>,
    env: Vec<(String, String)>,
    cwd: PathBuf,
}

impl SandboxCommand {
    /// Runs `program` (a path, or a name looked up on the command's `PATH`) in `/`.
    pub fn new(program: impl Into<String>) -> Self {
        Self {
            program: program.into(),
            args: Vec::new(),
            env: Vec::new(),
            cwd: PathBuf::from("/"),
        }
    }

    /// Adds an argument.
    #[must_use]
    pub fn arg(mut self, arg: impl Into<String>) -> Self {
        self.args.push(arg.into());
        self
    }

    /// Sets an environment variable (the command gets only what is set here).
    #[must_use]
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        let key = key.into();
        self.env.retain(|(k, _)| *k != key);
        self.env.push((key, value.into()));
        self
    }

    /// Sets the working directory (as seen inside the sandbox: the same path as outside).
    #[must_use]
    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cwd = dir.into();
        self
    }
}

/// A sandbox for one [`Policy`]: commands run in it one per host, each host a launcher
/// process with its own namespaces; idle hosts are kept for the next command, so only the
/// first command pays for building the sandbox.
///
/// Cheap to clone (the clones share hosts). Dropping the last clone stops every host.
#[derive(Debug, Clone)]
pub struct Sandbox {
    inner: Arc<Inner>,
}

#[derive(Debug)]
pub(crate) struct Inner {
    policy: Policy,
    launcher: Option<Launcher>,
    idle: Mutex<Vec<Host>>,
    /// Set once this machine proved it cannot build the sandbox.
    unavailable: Mutex<Option<(String, String)>>,
    /// Set once a host reported its features.
    features: Mutex<Option<Features>>,
    /// The policy resolved once, at the first host: later hosts keep its paths and pins, so a
    /// command cannot move what they name.
    resolved: Mutex<Option<Policy>>,
    /// Who admits the destinations of a proxied network ([`NoEgress`] when unset).
    egress: std::sync::OnceLock<Arc<dyn Egress>>,
    /// The egress proxy, started with the first host of a proxied sandbox.
    proxy: Mutex<Option<Proxy>>,
}

impl Sandbox {
    /// A sandbox for `policy`, started through [`Launcher::find`].
    pub fn new(policy: Policy) -> Self {
        Self::with_launcher(policy, Launcher::find())
    }

    /// A sandbox for `policy` started through `launcher` (`None`: unavailable).
    pub fn with_launcher(policy: Policy, launcher: Option<Launcher>) -> Self {
        Self {
            inner: Arc::new(Inner {
                policy,
                launcher,
                idle: Mutex::new(Vec::new()),
                unavailable: Mutex::new(None),
                features: Mutex::new(None),
                resolved: Mutex::new(None),
                egress: std::sync::OnceLock::new(),
                proxy: Mutex::new(None),
            }),
        }
    }

    /// Sets the policy that admits the destinations of a [`Network::Proxy`] sandbox (by
    /// default nothing is admitted). Only the first call on a sandbox has an effect.
    #[must_use]
    pub fn with_egress(self, egress: Arc<dyn Egress>) -> Self {
        let _ = self.inner.egress.set(egress);
        self
    }

    /// The policy, as given.
    pub fn policy(&self) -> &Policy {
        &self.inner.policy
    }

    /// What the sandbox offers on this machine, starting a host when none ran yet.
    ///
    /// # Errors
    /// [`SandboxError::Unavailable`] when this machine cannot build it; other errors when the
    /// launcher could not be started.
    pub async fn features(&self) -> Result<Features> {
        if let Some(features) = lock(&self.inner.features).clone() {
            return Ok(features);
        }
        let host = self.host().await?;
        let features = host.features.clone();
        self.inner.park(host);
        Ok(features)
    }

    /// Starts `command` in the sandbox.
    ///
    /// # Errors
    /// [`SandboxError::Unavailable`] when this machine cannot build the sandbox (remembered:
    /// later calls fail at once), [`SandboxError::Spawn`] when the command cannot start
    /// inside it, [`SandboxError::Host`] or [`SandboxError::Io`] when the host fails.
    ///
    /// # Cancel safety
    /// Dropping the future before it completes stops the host it was using.
    pub async fn spawn(&self, command: &SandboxCommand) -> Result<SandboxChild> {
        let mut host = self.host().await?;
        let (stdin_child, stdin) = pipe_pair()?;
        let (stdout, stdout_child) = pipe_pair()?;
        let (stderr, stderr_child) = pipe_pair()?;
        let request = Request {
            program: command.program.clone(),
            args: command.args.clone(),
            env: command.env.clone(),
            cwd: command.cwd.to_string_lossy().into_owned(),
        };
        host.send(&[stdin_child, stdout_child, stderr_child], &request)
            .await?;
        Ok(SandboxChild::new(
            pipe::Sender::from_owned_fd(stdin)?,
            pipe::Receiver::from_owned_fd(stdout)?,
            pipe::Receiver::from_owned_fd(stderr)?,
            host,
            Arc::downgrade(&self.inner),
        ))
    }

    /// An idle host, or a new one.
    async fn host(&self) -> Result<Host> {
        if let Some(host) = lock(&self.inner.idle).pop() {
            return Ok(host);
        }
        if let Some((feature, detail)) = lock(&self.inner.unavailable).clone() {
            return Err(SandboxError::Unavailable { feature, detail });
        }
        let Some(launcher) = &self.inner.launcher else {
            return Err(self.inner.remember_unavailable(
                "launcher",
                "no launcher program found: the tollgate binary is its own launcher; a program \
                 embedding tollgate needs the tollgate-sandbox binary next to it or named by \
                 TOLLGATE_SANDBOX_LAUNCHER (cargo build -p tollgate-sandbox)",
            ));
        };
        let policy = self.inner.resolved()?;
        if launcher.replaceable_through(&policy.writable) {
            return Err(SandboxError::Unavailable {
                feature: "launcher".into(),
                detail: format!(
                    "{} lies under a path the sandbox makes writable: a command could replace it",
                    launcher.program().display()
                ),
            });
        }
        let egress = self.inner.egress_socket(&policy)?;
        match Host::start(launcher, &policy, egress).await {
            Ok(host) => {
                let first = lock(&self.inner.features)
                    .replace(host.features.clone())
                    .is_none();
                let missing = host.features.missing();
                if first && !missing.is_empty() {
                    tracing::warn!(
                        "the OS sandbox runs without {}: commands are contained by namespaces \
                         and read-only mounts only",
                        missing.join(", ")
                    );
                }
                Ok(host)
            }
            // The kernel's answer does not change within a run; a launcher that failed once may
            // work next time.
            Err(SandboxError::Unavailable { feature, detail }) if feature != "launcher" => {
                Err(self.inner.remember_unavailable(&feature, &detail))
            }
            Err(e) => Err(e),
        }
    }
}

impl Inner {
    /// The policy, resolved at the first call and kept.
    fn resolved(&self) -> Result<Policy> {
        let mut resolved = lock(&self.resolved);
        if let Some(policy) = &*resolved {
            return Ok(policy.clone());
        }
        let policy = self.policy.resolve()?;
        *resolved = Some(policy.clone());
        Ok(policy)
    }

    fn remember_unavailable(&self, feature: &str, detail: &str) -> SandboxError {
        *lock(&self.unavailable) = Some((feature.to_owned(), detail.to_owned()));
        SandboxError::Unavailable {
            feature: feature.to_owned(),
            detail: detail.to_owned(),
        }
    }

    /// The egress proxy's socket when the network is proxied (the proxy starts at the first
    /// call).
    fn egress_socket(&self, policy: &Policy) -> Result<Option<PathBuf>> {
        if policy.network != Network::Proxy {
            return Ok(None);
        }
        let mut proxy = lock(&self.proxy);
        if proxy.is_none() {
            let egress = self
                .egress
                .get()
                .cloned()
                .unwrap_or_else(|| Arc::new(NoEgress));
            *proxy = Some(Proxy::start(egress)?);
        }
        Ok(proxy.as_ref().map(Proxy::socket))
    }

    /// Keeps an idle host for the next command (up to [`POOL`]).
    pub(crate) fn park(&self, host: Host) {
        let mut idle = lock(&self.idle);
        if idle.len() < POOL {
            idle.push(host);
        }
    }
}

pub(crate) fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Parks `host` in the sandbox `inner` points to, if it still exists.
pub(crate) fn park(inner: &std::sync::Weak<Inner>, host: Host) {
    if let Some(inner) = inner.upgrade() {
        inner.park(host);
    }
}

pub(crate) type InnerRef = std::sync::Weak<Inner>;

/// A pipe as (read end, write end), both close-on-exec.
fn pipe_pair() -> std::io::Result<(OwnedFd, OwnedFd)> {
    Ok(rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?)
}

/// One launcher process and its control socket. Dropping it kills the launcher, and with it
/// every process in its sandbox.
#[derive(Debug)]
pub(crate) struct Host {
    _launcher: tokio::process::Child,
    control: UnixStream,
    features: Features,
}

impl Host {
    async fn start(launcher: &Launcher, policy: &Policy, egress: Option<PathBuf>) -> Result<Host> {
        let (ours, theirs) = std::os::unix::net::UnixStream::pair()?;
        let child = tokio::process::Command::new(launcher.exec())
            .arg(LAUNCHER_ARG)
            .arg("outer")
            .env_clear()
            .stdin(Stdio::from(OwnedFd::from(theirs)))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| SandboxError::Unavailable {
                feature: "launcher".into(),
                detail: format!("cannot start {}: {e}", launcher.program().display()),
            })?;
        ours.set_nonblocking(true)?;
        let mut control = UnixStream::from_std(ours)?;
        let hello = Hello {
            policy: policy.clone(),
            egress,
        };
        let not_a_launcher = |e: &dyn std::fmt::Display| SandboxError::Unavailable {
            feature: "launcher".into(),
            detail: format!(
                "{} did not set up a sandbox ({e}); is it a tollgate sandbox launcher?",
                launcher.program().display()
            ),
        };
        // A program that is not a launcher may exit before it reads the policy.
        control
            .write_all(&wire::frame(&hello)?)
            .await
            .map_err(|e| not_a_launcher(&e))?;
        let setup = tokio::time::timeout(START_TIMEOUT, read_frame::<Setup>(&mut control))
            .await
            .map_err(|_| not_a_launcher(&"no answer within 10 s"))?;
        match setup {
            Ok(Setup::Ready(features)) => Ok(Host {
                _launcher: child,
                control,
                features,
            }),
            Ok(Setup::Failed { feature, detail }) => {
                Err(SandboxError::Unavailable { feature, detail })
            }
            Err(e) => Err(not_a_launcher(&e)),
        }
    }

    async fn send(&mut self, fds: &[OwnedFd; 3], request: &Request) -> Result<()> {
        let borrowed = [fds[0].as_fd(), fds[1].as_fd(), fds[2].as_fd()];
        let control = &self.control;
        let sent = control
            .async_io(Interest::WRITABLE, || send_fds(control.as_fd(), &borrowed))
            .await?;
        if sent != 1 {
            return Err(SandboxError::Host("the host closed its socket".into()));
        }
        self.control.write_all(&wire::frame(request)?).await?;
        Ok(())
    }

    /// Waits for the end of the running command.
    pub(crate) async fn done(&mut self) -> Result<Done> {
        read_frame(&mut self.control).await
    }
}

async fn read_frame<T: for<'de> serde::Deserialize<'de>>(control: &mut UnixStream) -> Result<T> {
    let mut header = [0_u8; 4];
    control
        .read_exact(&mut header)
        .await
        .map_err(|e| SandboxError::Host(format!("the sandbox host went away: {e}")))?;
    let mut body = vec![0_u8; wire::body_len(header)?];
    control.read_exact(&mut body).await?;
    Ok(wire::decode(&body)?)
}
