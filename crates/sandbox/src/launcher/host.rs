//! The host: PID 1 of the sandbox's PID namespace. It finishes the view (`/proc`), hardens
//! itself, then runs commands one at a time. After each command's first process ends, and
//! when the client goes away, every other process in the namespace is killed and reaped, so
//! nothing a command started (`setsid`, `nohup`, double forks) outlives it.

use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::{Command, ExitCode, Stdio};

use nix::errno::Errno;
use nix::mount::{MsFlags, mount};
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::signal::{SigSet, Signal, kill};
use nix::sys::signalfd::{SfdFlags, SignalFd};
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::Pid;

use super::harden;
use super::outer::{DEVPTS_ENV, Failure, POLICY_ENV, close_inherited, control_socket, report};
use crate::fdpass::{REQUEST_FDS, read_frame, recv_fds, write_frame};
use crate::policy::Policy;
use crate::wire::{Done, Request, Setup};

/// Parts of `/proc` that must never be written, even by a process mapped to root outside.
const PROC_READ_ONLY: &[&str] = &[
    "/proc/sys",
    "/proc/sysrq-trigger",
    "/proc/irq",
    "/proc/bus",
    "/proc/fs",
];

pub(super) fn main() -> ExitCode {
    close_inherited();
    let Some(control) = control_socket() else {
        return ExitCode::from(2);
    };
    // Dies with the outer launcher; nothing here may be read through /proc by a command.
    let _ = nix::sys::prctl::set_pdeathsig(Signal::SIGKILL);
    let _ = nix::sys::prctl::set_dumpable(false);
    let (features, proxied) = match prepare() {
        Ok(prepared) => prepared,
        Err(failure) => return report(&control, failure),
    };
    if write_frame(&control, &Setup::Ready(features)).is_err() {
        return ExitCode::from(1);
    }
    match serve(&control, proxied) {
        Ok(()) => ExitCode::SUCCESS,
        Err(_) => ExitCode::from(1),
    }
}

/// The view finished and the host hardened; also whether the network is proxied.
fn prepare() -> Result<(crate::Features, bool), Failure> {
    let policy: Policy = std::env::var(POLICY_ENV)
        .ok()
        .and_then(|json| serde_json::from_str(&json).ok())
        .ok_or_else(|| Failure::new("launcher", "the host got no policy"))?;
    let pseudo_terminals = std::env::var(DEVPTS_ENV).is_ok_and(|v| v == "1");
    mount_proc()?;
    nix::unistd::setsid().map_err(|e| Failure::new("session", e))?;
    let features = harden::apply(&policy, pseudo_terminals)?;
    Ok((features, policy.network == crate::Network::Proxy))
}

/// A `/proc` of this PID namespace, with the kernel's tunables read-only.
fn mount_proc() -> Result<(), Failure> {
    let fail = |e: Errno| Failure::new("proc", e);
    mount(
        Some("proc"),
        "/proc",
        Some("proc"),
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC,
        None::<&str>,
    )
    .map_err(fail)?;
    for path in PROC_READ_ONLY {
        if std::fs::symlink_metadata(path).is_err() {
            continue;
        }
        mount(
            Some(*path),
            *path,
            None::<&str>,
            MsFlags::MS_BIND | MsFlags::MS_REC,
            None::<&str>,
        )
        .and_then(|()| {
            mount(
                None::<&str>,
                *path,
                None::<&str>,
                MsFlags::MS_BIND
                    | MsFlags::MS_REMOUNT
                    | MsFlags::MS_RDONLY
                    | MsFlags::MS_NOSUID
                    | MsFlags::MS_NODEV
                    | MsFlags::MS_NOEXEC,
                None::<&str>,
            )
        })
        .map_err(fail)?;
    }
    Ok(())
}

/// How a command's wait ended.
enum Waited {
    Exited(i32),
    ClientGone,
}

fn serve(control: &UnixStream, proxied: bool) -> std::io::Result<()> {
    let mut mask = SigSet::empty();
    mask.add(Signal::SIGCHLD);
    mask.thread_block()?;
    let children = SignalFd::with_flags(&mask, SfdFlags::SFD_CLOEXEC | SfdFlags::SFD_NONBLOCK)?;
    // After SIGCHLD is blocked: the relay threads inherit the mask, so the signal stays for
    // the signalfd.
    if proxied {
        super::forward::start()?;
    }
    loop {
        let Some(fds) = recv_fds(control.as_fd())? else {
            return Ok(());
        };
        let Some(request) = read_frame::<Request>(control)? else {
            return Ok(());
        };
        let mut request = request;
        if proxied {
            for (key, value) in crate::egress::proxy_env() {
                if !request.env.iter().any(|(k, _)| k == key) {
                    request.env.push((key.to_owned(), value));
                }
            }
        }
        let done = match run(request, fds, control, &children)? {
            Some(done) => done,
            None => return Ok(()),
        };
        write_frame(control, &done)?;
    }
}

/// Runs one command; `None` when the client went away (everything was killed).
fn run(
    request: Request,
    fds: Vec<OwnedFd>,
    control: &UnixStream,
    children: &SignalFd,
) -> std::io::Result<Option<Done>> {
    let child = match spawn(request, fds) {
        Ok(child) => child,
        Err(error) => {
            return Ok(Some(Done::SpawnFailed { error }));
        }
    };
    let first = Pid::from_raw(i32::try_from(child.id()).unwrap_or(i32::MAX));
    let waited = wait_first(first, control, children)?;
    kill_everything();
    Ok(match waited {
        Waited::Exited(wait_status) => Some(Done::Exited { wait_status }),
        Waited::ClientGone => None,
    })
}

fn spawn(request: Request, fds: Vec<OwnedFd>) -> Result<std::process::Child, String> {
    let Ok([stdin, stdout, stderr]) = <[OwnedFd; REQUEST_FDS]>::try_from(fds) else {
        return Err("the request did not carry three standard streams".to_owned());
    };
    Command::new(&request.program)
        .args(&request.args)
        .env_clear()
        .envs(request.env)
        .current_dir(&request.cwd)
        .stdin(Stdio::from(stdin))
        .stdout(Stdio::from(stdout))
        .stderr(Stdio::from(stderr))
        .spawn()
        .map_err(|e| {
            if !Path::new(&request.cwd).is_dir() {
                // The sandbox's `/run` and `/dev` are its own: a working directory there is not
                // in its view.
                format!(
                    "the working directory {} is not visible in the sandbox (its /run and /dev \
                     are its own); run from a directory elsewhere",
                    request.cwd
                )
            } else {
                format!("cannot start {} in {}: {e}", request.program, request.cwd)
            }
        })
}

/// Waits until `first` ends (reaping whatever else ends meanwhile) or the client goes away.
fn wait_first(first: Pid, control: &UnixStream, children: &SignalFd) -> std::io::Result<Waited> {
    loop {
        if let Some(status) = reap(first) {
            return Ok(Waited::Exited(status));
        }
        let mut polled = [
            PollFd::new(control.as_fd(), PollFlags::POLLIN),
            PollFd::new(children.as_fd(), PollFlags::POLLIN),
        ];
        match poll(&mut polled, PollTimeout::NONE) {
            Ok(_) | Err(Errno::EINTR) => {}
            Err(e) => return Err(e.into()),
        }
        let client = polled[0].revents().unwrap_or(PollFlags::empty());
        if !client.is_empty() {
            // The protocol sends nothing while a command runs: data or hang-up means the
            // client gave up on it.
            return Ok(Waited::ClientGone);
        }
        while let Ok(Some(_)) = children.read_signal() {}
    }
}

/// Reaps every ended child; the raw wait status of `first` if it was among them.
fn reap(first: Pid) -> Option<i32> {
    let mut found = None;
    loop {
        match waitpid(None, Some(WaitPidFlag::WNOHANG)) {
            Ok(WaitStatus::Exited(pid, code)) if pid == first => found = Some((code & 0xff) << 8),
            Ok(WaitStatus::Signaled(pid, signal, core)) if pid == first => {
                found = Some(signal as i32 | if core { 0x80 } else { 0 });
            }
            Ok(WaitStatus::StillAlive) | Err(_) => return found,
            Ok(_) => {}
        }
    }
}

/// Kills every other process of the namespace and reaps them all.
fn kill_everything() {
    loop {
        // From PID 1, -1 means every process of this namespace but itself. Sent again each
        // round, so a process forked while the first signal went out dies too.
        let _ = kill(Pid::from_raw(-1), Signal::SIGKILL);
        match waitpid(None, Some(WaitPidFlag::WNOHANG)) {
            Ok(WaitStatus::StillAlive) => std::thread::sleep(std::time::Duration::from_millis(1)),
            Ok(_) | Err(Errno::EINTR) => {}
            Err(_) => return,
        }
    }
}
