//! tollgate-sandbox driven through its public API, with real launchers, real commands and
//! canaries outside the allowed paths that must stay untouched.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod containment;
mod egress;
mod processes;
mod regressions;
mod unprivileged;

use std::path::{Path, PathBuf};
use std::process::ExitStatus;

use tokio::io::AsyncReadExt;
use tollgate_sandbox::{Launcher, Policy, Sandbox, SandboxCommand};

/// This crate's launcher binary.
fn launcher() -> Launcher {
    Launcher::new(env!("CARGO_BIN_EXE_tollgate-sandbox"))
}

fn sandbox(policy: Policy) -> Sandbox {
    Sandbox::with_launcher(policy, Some(launcher()))
}

/// A directory outside `/tmp` (the sandbox's `/tmp` is private, so a canary there would be
/// out of sight rather than protected).
fn outside_dir() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap()
}

/// What a finished command printed, and how it ended.
struct Ran {
    status: ExitStatus,
    stdout: String,
    stderr: String,
}

/// A bash command line with a minimal environment; `HOME` is `home`.
fn bash_command(line: &str, cwd: &Path, home: &Path) -> SandboxCommand {
    SandboxCommand::new("/bin/bash")
        .arg("-c")
        .arg(line)
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", home.to_string_lossy())
        .current_dir(cwd)
}

/// Runs `command` in `sandbox` to its end.
async fn run(sandbox: &Sandbox, command: &SandboxCommand) -> Ran {
    let mut child = sandbox.spawn(command).await.unwrap();
    drop(child.stdin.take());
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let (mut out, mut err) = (String::new(), String::new());
    let (a, b, status) = tokio::join!(
        stdout.read_to_string(&mut out),
        stderr.read_to_string(&mut err),
        child.wait()
    );
    a.unwrap();
    b.unwrap();
    Ran {
        status: status.unwrap(),
        stdout: out,
        stderr: err,
    }
}

/// Runs `line` with bash from `cwd`, `HOME` set to `home`.
async fn bash(sandbox: &Sandbox, cwd: &Path, home: &Path, line: &str) -> Ran {
    run(sandbox, &bash_command(line, cwd, home)).await
}

/// A file holding `text`, to check later that nothing changed it.
fn canary(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, "canary").unwrap();
    path
}

#[track_caller]
fn assert_untouched(path: &Path) {
    assert_eq!(
        std::fs::read_to_string(path).unwrap(),
        "canary",
        "{} was changed",
        path.display()
    );
}
