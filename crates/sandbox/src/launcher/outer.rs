//! The outer launcher: new namespaces, identity maps, the filesystem view, then the host.

use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::process::{Command, ExitCode, Stdio};

use caps::{CapSet, Capability};
use nix::sched::{CloneFlags, unshare};
use nix::unistd::{getgid, getuid};

use super::{LAUNCHER_ARG, mounts};
use crate::fdpass::{read_frame, write_frame};
use crate::policy::{Network, Policy};
use crate::wire::{Hello, Setup};

/// Environment variable carrying the resolved policy (JSON) to the host.
pub(super) const POLICY_ENV: &str = "TOLLGATE_SANDBOX_POLICY";
/// Environment variable telling the host that pseudo-terminals work (`1`).
pub(super) const DEVPTS_ENV: &str = "TOLLGATE_SANDBOX_DEVPTS";

/// A setup step that failed: which feature, and the system's answer.
#[derive(Debug)]
pub(super) struct Failure {
    pub feature: &'static str,
    pub detail: String,
}

impl Failure {
    pub(super) fn new(feature: &'static str, detail: impl std::fmt::Display) -> Self {
        Self {
            feature,
            detail: detail.to_string(),
        }
    }
}

/// Tells the client that setup failed.
pub(super) fn report(control: &UnixStream, failure: Failure) -> ExitCode {
    let _ = write_frame(
        control,
        &Setup::Failed {
            feature: failure.feature.to_owned(),
            detail: failure.detail,
        },
    );
    ExitCode::from(1)
}

/// The control socket: the launcher's standard input.
pub(super) fn control_socket() -> Option<UnixStream> {
    std::io::stdin()
        .as_fd()
        .try_clone_to_owned()
        .ok()
        .map(UnixStream::from)
}

/// Closes every descriptor above the standard three that this process inherited: whatever the
/// runtime's own parent left open (a log file, a directory, a socket) must not reach a command.
pub(super) fn close_inherited() {
    let open: Vec<i32> = match std::fs::read_dir("/proc/self/fd") {
        Ok(dir) => dir
            .flatten()
            .filter_map(|entry| entry.file_name().to_str()?.parse().ok())
            .collect(),
        // Without /proc, the common range.
        Err(_) => (3..1024).collect(),
    };
    for fd in open.into_iter().filter(|fd| *fd > 2) {
        // EBADF (the directory listing's own descriptor, already closed) is expected.
        let _ = nix::unistd::close(fd);
    }
}

pub(super) fn main() -> ExitCode {
    close_inherited();
    let Some(control) = control_socket() else {
        return ExitCode::from(2);
    };
    let (policy, egress) = match read_frame::<Hello>(&control) {
        Ok(Some(hello)) => (hello.policy, hello.egress),
        _ => return ExitCode::from(2),
    };
    match prepare(&policy, egress.as_deref()) {
        Ok(devpts) => start_host(&control, &policy, devpts),
        Err(failure) => report(&control, failure),
    }
}

/// Namespaces, maps and mounts; `Ok(true)` when pseudo-terminals work.
fn prepare(policy: &Policy, egress: Option<&std::path::Path>) -> Result<bool, Failure> {
    enter_namespaces(policy.network)?;
    if policy.network == Network::Proxy {
        super::loopback::up().map_err(|e| Failure::new("network_namespace", e))?;
    }
    let egress = match (policy.network, egress) {
        (Network::Proxy, None) => {
            return Err(Failure::new(
                "launcher",
                "a proxied network needs the egress socket",
            ));
        }
        (Network::Proxy, socket) => socket,
        _ => None,
    };
    let built = mounts::build(policy, egress).map_err(|e| Failure::new("filesystem", e.0))?;
    let _ = nix::unistd::sethostname("tollgate-sandbox");
    keep_capabilities_across_exec()?;
    Ok(built.devpts)
}

fn enter_namespaces(network: Network) -> Result<(), Failure> {
    let (uid, gid) = (getuid(), getgid());
    unshare(CloneFlags::CLONE_NEWUSER).map_err(|e| Failure::new("user_namespace", e))?;
    // The same ids inside as outside: files keep their owners, `id` tells the truth.
    std::fs::write("/proc/self/setgroups", "deny")
        .and_then(|()| std::fs::write("/proc/self/uid_map", format!("{uid} {uid} 1\n")))
        .and_then(|()| std::fs::write("/proc/self/gid_map", format!("{gid} {gid} 1\n")))
        .map_err(|e| Failure::new("user_namespace", format!("writing the id maps: {e}")))?;
    let mut wanted = vec![
        (CloneFlags::CLONE_NEWNS, "mount_namespace"),
        (CloneFlags::CLONE_NEWPID, "pid_namespace"),
        (CloneFlags::CLONE_NEWIPC, "ipc_namespace"),
        (CloneFlags::CLONE_NEWUTS, "uts_namespace"),
    ];
    if network != Network::On {
        wanted.push((CloneFlags::CLONE_NEWNET, "network_namespace"));
    }
    for (flag, feature) in wanted {
        unshare(flag).map_err(|e| Failure::new(feature, e))?;
    }
    Ok(())
}

/// The host needs `CAP_SYS_ADMIN` (to mount `/proc`) and `CAP_SETPCAP` (to empty its
/// bounding set); a non-root user loses capabilities at `execve` unless they are ambient.
fn keep_capabilities_across_exec() -> Result<(), Failure> {
    for cap in [Capability::CAP_SYS_ADMIN, Capability::CAP_SETPCAP] {
        caps::raise(None, CapSet::Inheritable, cap)
            .and_then(|()| caps::raise(None, CapSet::Ambient, cap))
            .map_err(|e| Failure::new("capabilities", e))?;
    }
    Ok(())
}

fn start_host(control: &UnixStream, policy: &Policy, devpts: bool) -> ExitCode {
    let spawned = serde_json::to_string(policy)
        .map_err(std::io::Error::other)
        .and_then(|json| {
            let stdin = control.try_clone()?;
            Command::new("/proc/self/exe")
                .arg(LAUNCHER_ARG)
                .arg("host")
                .env_clear()
                .env(POLICY_ENV, json)
                .env(DEVPTS_ENV, if devpts { "1" } else { "0" })
                .stdin(Stdio::from(std::os::fd::OwnedFd::from(stdin)))
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
        });
    let mut host = match spawned {
        Ok(host) => host,
        Err(e) => {
            return report(
                control,
                Failure::new("launcher", format!("starting the host: {e}")),
            );
        }
    };
    match host.wait() {
        Ok(status) if status.success() => ExitCode::SUCCESS,
        _ => ExitCode::from(1),
    }
}
