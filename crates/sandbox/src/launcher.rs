//! The launcher: the program a [`Sandbox`](crate::Sandbox) starts to build one sandbox and
//! run commands in it. It runs as two processes:
//!
//! 1. **outer** (`<program> __tollgate-sandbox outer`): reads the [`Policy`](crate::Policy)
//!    from its standard input (the control socket), enters new user, mount, PID, IPC, UTS and
//!    (network off) network namespaces, builds the filesystem view and starts the host;
//! 2. **host** (`/proc/self/exe __tollgate-sandbox host`): PID 1 of the new PID namespace.
//!    It mounts a fresh `/proc`, hardens itself (no new privileges, no capabilities, Landlock,
//!    seccomp; all inherited by what it starts), reports [`Features`](crate::Features), then
//!    runs one command at a time as the client asks. When a command's first process ends, or
//!    the client goes away, every other process in the namespace is killed.
//!
//! A program becomes a launcher by calling [`main_if_launcher`] first thing in `main`, before
//! it starts threads (a process with threads cannot enter a new user namespace). The
//! `tollgate` binary does; so does the small `tollgate-sandbox` binary of this crate.

#[cfg(target_os = "linux")]
mod forward;
#[cfg(target_os = "linux")]
mod harden;
#[cfg(target_os = "linux")]
mod host;
#[cfg(target_os = "linux")]
mod loopback;
#[cfg(target_os = "linux")]
mod mountinfo;
#[cfg(target_os = "linux")]
mod mounts;
#[cfg(target_os = "linux")]
mod outer;

use std::process::ExitCode;

/// The first argument that turns a program into the launcher.
pub const LAUNCHER_ARG: &str = "__tollgate-sandbox";

/// Runs the launcher when this process was started as one (`argv[1]` is [`LAUNCHER_ARG`]),
/// and returns its exit code; `None` otherwise. Call it before anything starts a thread.
pub fn main_if_launcher() -> Option<ExitCode> {
    let mut args = std::env::args_os().skip(1);
    if args.next()? != LAUNCHER_ARG {
        return None;
    }
    let role = args.next();
    Some(run(role.as_ref().and_then(|r| r.to_str()).unwrap_or("")))
}

#[cfg(target_os = "linux")]
fn run(role: &str) -> ExitCode {
    match role {
        "outer" => outer::main(),
        "host" => host::main(),
        _ => {
            eprintln!("tollgate sandbox launcher: unknown role {role:?}");
            ExitCode::from(2)
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn run(_role: &str) -> ExitCode {
    eprintln!("tollgate sandbox launcher: only Linux is supported");
    ExitCode::from(2)
}
