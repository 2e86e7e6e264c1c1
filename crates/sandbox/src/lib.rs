//! tollgate's OS containment for the shell commands it runs (command hooks and the agent's
//! shell tool): the wall behind the static shell analyzer.
//!
//! On Linux a command runs in a sandbox built from the kernel's own mechanisms, with no
//! privileges needed:
//!
//! - **Filesystem**: new user and mount namespaces; everything is read-only but the policy's
//!   writable paths and a private `/tmp`; credential paths ([`default_hidden`] and any the
//!   policy adds) are covered by empty, unreadable stand-ins; `/dev` holds only `null`,
//!   `zero`, `full`, `random`, `urandom`, `tty`, pseudo-terminals and `log`; `/run` is empty
//!   (no Docker, D-Bus, systemd or agent sockets). Landlock repeats the write rules in the
//!   kernel's access checks where the kernel has it.
//! - **Processes**: a new PID namespace whose PID 1 is the sandbox's host: when a command's
//!   first process ends, or it is killed (deadline, cancel), every process it started is
//!   killed too. A new session without controlling terminal; no new privileges; no
//!   capabilities; a seccomp filter refuses new namespaces, mounts, keyrings, BPF, io_uring
//!   and terminal input injection.
//! - **Network**: with [`Network::Off`] a network namespace of its own with no interface up;
//!   with [`Network::Proxy`] the same, plus an HTTP proxy on the sandbox's loopback whose
//!   every connection an [`Egress`] policy admits or refuses ([`egress`]); with
//!   [`Network::On`] the host's network.
//! - **Environment**: exactly what [`SandboxCommand::env`] sets; the launcher itself starts
//!   with an empty environment, and other processes' `/proc/<pid>/environ` are out of sight.
//!
//! ```no_run
//! # async fn demo() -> tollgate_sandbox::Result<()> {
//! use tokio::io::AsyncReadExt;
//! use tollgate_sandbox::{Network, Policy, Sandbox, SandboxCommand};
//!
//! let sandbox = Sandbox::new(Policy::new(Network::Off).writable("/tmp/work"));
//! let command = SandboxCommand::new("/bin/bash")
//!     .arg("-c")
//!     .arg("echo hi > /tmp/work/out; touch ~/x")
//!     .env("PATH", "/usr/bin:/bin")
//!     .current_dir("/tmp/work");
//! let mut child = sandbox.spawn(&command).await?;
//! let mut stderr = String::new();
//! child.stderr.take().unwrap().read_to_string(&mut stderr).await?;
//! let status = child.wait().await?;
//! assert!(stderr.contains("Read-only file system"));
//! # Ok(()) }
//! ```
//!
//! The sandbox is built by a **launcher** process (see [`launcher`]): the `tollgate` binary,
//! or this crate's `tollgate-sandbox` binary, found by [`Launcher::find`]. A [`Sandbox`]
//! keeps idle launchers ("hosts") for its next commands, so only the first command pays for
//! building the namespaces.
//!
//! Where the kernel lacks a required feature (user, mount or PID namespaces, or a network
//! namespace when the network is off) [`Sandbox::spawn`] fails with
//! [`SandboxError::Unavailable`], naming it; callers decide whether to refuse the command or
//! run it unconfined. Landlock and seccomp are a second layer: their absence is reported in
//! [`Features`], not refused.

#![cfg_attr(not(target_os = "linux"), allow(dead_code, unused_imports))]

mod child;
#[cfg(target_os = "linux")]
mod client;
mod discover;
#[cfg(target_os = "linux")]
pub mod egress;
mod error;
#[cfg(target_os = "linux")]
mod fdpass;
pub mod launcher;
mod policy;
mod wire;

pub use child::SandboxChild;
pub use client::{Sandbox, SandboxCommand};
pub use discover::{LAUNCHER_BIN, LAUNCHER_ENV, Launcher};
#[cfg(target_os = "linux")]
pub use egress::{AdmitFuture, Egress, NoEgress, PROXY_PORT};
pub use error::{Result, SandboxError};
pub use launcher::{LAUNCHER_ARG, main_if_launcher};
pub use policy::{
    DEFAULT_TMP_BYTES, HOME_SECRETS, Network, Policy, SYSTEM_SECRETS, default_hidden,
};

use serde::{Deserialize, Serialize};

/// What a running sandbox offers beyond the required namespaces.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Features {
    /// Whether Landlock enforces the write rules (and scopes signals and abstract sockets).
    pub landlock: LandlockStatus,
    /// Whether the seccomp filter is installed.
    pub seccomp: bool,
    /// Whether the sandbox has a network namespace of its own (the policy's network is off or
    /// proxied).
    pub network_namespace: bool,
    /// Whether pseudo-terminals work inside.
    pub pseudo_terminals: bool,
}

impl Features {
    /// The second-layer protections this machine does not give, for a warning; empty when
    /// the sandbox is complete.
    pub fn missing(&self) -> Vec<&'static str> {
        let mut missing = Vec::new();
        match self.landlock {
            LandlockStatus::Full => {}
            LandlockStatus::Partial => missing.push("landlock (partial: older kernel ABI)"),
            LandlockStatus::Unsupported => missing.push("landlock"),
        }
        if !self.seccomp {
            missing.push("seccomp");
        }
        missing
    }
}

/// How far Landlock is enforced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LandlockStatus {
    /// Every rule is enforced.
    Full,
    /// The kernel's Landlock ABI is older: some rights are not restricted.
    Partial,
    /// The kernel has no Landlock (or it is disabled).
    Unsupported,
}
