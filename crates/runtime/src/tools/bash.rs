//! `bash_code_execute_tool`: one shell line in the workspace, inside the OS sandbox (see
//! [`tollgate_sandbox`]), under a deadline.
//!
//! In the sandbox the workspace and a private `/tmp` are the only writable places (the agent
//! file's and admin files' `sandbox:` may add more), credential paths are unreadable, the
//! network is off unless config allows it, and every process the command started dies when it
//! ends or times out. Where this machine cannot build the sandbox, the tool refuses to run
//! anything (the model observes why) unless an admin file says `sandbox: off`; then the
//! command runs unconfined in its own process group, as a fallback for machines without
//! user namespaces.

use std::process::Stdio;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::Command;
use tollgate_core::BoxFuture;
use tollgate_handlers::process_group::GroupKiller;
use tollgate_sandbox::{Sandbox, SandboxCommand};

use super::{BASH_TOOL, Tool, ToolEnv, ToolError, string_arg};
use crate::model::ToolSpec;

/// Output kept per stream; the rest is counted and dropped.
pub const OUTPUT_CAP: usize = 64 * 1024;
/// How long the output pipes may stay open after the shell exited.
const EXIT_GRACE: Duration = Duration::from_millis(200);
/// Longest deadline a call may ask for.
pub const MAX_TIMEOUT_SECS: u64 = 600;

/// Environment the shell keeps; the runtime's secrets (model and webhook keys) stay out.
const KEPT_ENV: [&str; 8] = [
    "PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "TZ", "TMPDIR",
];

/// Where the shell tool runs its commands.
#[derive(Debug, Clone)]
pub enum ShellContainment {
    /// In this sandbox (its policy makes the workspace writable).
    Sandbox(Sandbox),
    /// Unconfined: an admin file said `sandbox: off`.
    Off,
}

/// Runs `command` with `/bin/bash -c` (the dialect the shell analyzer vets) in the workspace.
/// The permission gate has already reviewed it with the analyzer's `agent` profile.
#[derive(Debug, Clone)]
pub struct BashTool {
    containment: ShellContainment,
    passthrough: Vec<String>,
    session_env: Arc<OnceLock<Vec<(String, String)>>>,
}

impl BashTool {
    /// A shell tool running its commands as `containment` says.
    pub fn new(containment: ShellContainment) -> Self {
        Self {
            containment,
            passthrough: Vec::new(),
            session_env: Arc::default(),
        }
    }

    /// Sets these variables for every command once the session has them: what Claude Code
    /// `SessionStart` hooks wrote to their `CLAUDE_ENV_FILE` (already checked: no `PATH`,
    /// `LD_*`, … that would change what the analyzer vetted).
    #[must_use]
    pub fn with_session_env(mut self, vars: Arc<OnceLock<Vec<(String, String)>>>) -> Self {
        self.session_env = vars;
        self
    }

    /// Passes these variables of the runtime's environment to commands (besides `PATH`,
    /// `HOME`, `USER`, `LOGNAME`, `LANG`, `LC_ALL`, `TZ` and `TMPDIR`).
    #[must_use]
    pub fn with_env(mut self, names: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.passthrough = names.into_iter().map(Into::into).collect();
        self
    }

    /// The command's environment: the kept variables, the passed-through ones, the workspace.
    fn environment(&self, env: &ToolEnv) -> Vec<(String, String)> {
        let mut vars: Vec<(String, String)> = std::env::vars_os()
            .filter(|(k, _)| {
                KEPT_ENV.iter().any(|n| k == n) || self.passthrough.iter().any(|n| k == n.as_str())
            })
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
            .collect();
        for (name, value) in self.session_env.get().into_iter().flatten() {
            vars.retain(|(n, _)| n != name);
            vars.push((name.clone(), value.clone()));
        }
        vars.push((
            "TOLLGATE_WORKSPACE".into(),
            env.workspace.to_string_lossy().into_owned(),
        ));
        vars
    }
}

impl Tool for BashTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: BASH_TOOL.into(),
            description: "Run one bash command line in the workspace directory. Returns exit \
                          code, stdout and stderr."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "command": {"type": "string", "description": "The command line."},
                    "timeout_seconds": {"type": "integer", "minimum": 1, "maximum": MAX_TIMEOUT_SECS}
                },
                "required": ["command"]
            }),
        }
    }

    fn call<'a>(
        &'a self,
        args: &'a Value,
        env: &'a ToolEnv,
    ) -> BoxFuture<'a, Result<Value, ToolError>> {
        Box::pin(async move {
            let command = string_arg(args, "command")?;
            let timeout = match args.get("timeout_seconds") {
                None | Some(Value::Null) => env.tool_timeout,
                Some(v) => match v.as_u64() {
                    // A call may shorten the agent's deadline, never extend it.
                    Some(secs @ 1..=MAX_TIMEOUT_SECS) => {
                        Duration::from_secs(secs).min(env.tool_timeout)
                    }
                    _ => {
                        return Err(ToolError::new(format!(
                            "`timeout_seconds` must be an integer from 1 to {MAX_TIMEOUT_SECS}"
                        )));
                    }
                },
            };
            let vars = self.environment(env);
            match &self.containment {
                ShellContainment::Sandbox(sandbox) => {
                    run_sandboxed(command, env, vars, timeout, sandbox).await
                }
                ShellContainment::Off => run(command, env, vars, timeout).await,
            }
        })
    }
}

/// Runs `command` in the sandbox; everything it started is killed when it ends or times out
/// (dropping the child does that).
async fn run_sandboxed(
    command: &str,
    env: &ToolEnv,
    mut vars: Vec<(String, String)>,
    timeout: Duration,
    sandbox: &Sandbox,
) -> Result<Value, ToolError> {
    // The sandbox's /tmp is private; the runtime's TMPDIR may not exist inside.
    vars.retain(|(k, _)| k != "TMPDIR");
    vars.push(("TMPDIR".into(), "/tmp".into()));
    let mut cmd = SandboxCommand::new("/bin/bash")
        .arg("-c")
        .arg(command)
        .current_dir(&env.workspace);
    for (key, value) in vars {
        cmd = cmd.env(key, value);
    }
    let mut child = sandbox.spawn(&cmd).await.map_err(|e| {
        if e.is_unavailable() {
            ToolError::new(format!(
                "the shell tool runs commands only inside the OS sandbox, and this machine \
                 cannot build it: {e}. Nothing was run. (An admin file can turn the sandbox \
                 off with `sandbox: off`.)"
            ))
        } else {
            ToolError::new(format!("cannot start the command: {e}"))
        }
    })?;
    drop(child.stdin.take());
    let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
        return Err(ToolError::new("cannot capture the shell's output"));
    };
    let finished = async { tokio::join!(capped(stdout), capped(stderr), child.wait()) };
    let Ok((stdout, stderr, status)) = tokio::time::timeout(timeout, finished).await else {
        return Err(timed_out(timeout));
    };
    let status = status.map_err(|e| ToolError::new(format!("the sandbox failed: {e}")))?;
    outcome(status.code(), stdout, stderr)
}

fn timed_out(timeout: Duration) -> ToolError {
    ToolError::new(format!(
        "the command timed out after {} s and was killed",
        timeout.as_secs()
    ))
}

/// Runs `command` unconfined, in its own process group.
async fn run(
    command: &str,
    env: &ToolEnv,
    vars: Vec<(String, String)>,
    timeout: Duration,
) -> Result<Value, ToolError> {
    let mut cmd = Command::new("/bin/bash");
    cmd.arg("-c")
        .arg(command)
        .current_dir(&env.workspace)
        .env_clear()
        .envs(vars)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let mut child = cmd
        .spawn()
        .map_err(|e| ToolError::new(format!("cannot start /bin/bash: {e}")))?;
    let killer = GroupKiller::of(&child);
    let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
        return Err(ToolError::new("cannot capture the shell's output"));
    };
    // One task drains both pipes while the shell runs (a full pipe would stall it).
    let mut drain = tokio::spawn(async move { tokio::join!(capped(stdout), capped(stderr)) });
    let Ok(status) = tokio::time::timeout(timeout, child.wait()).await else {
        return Err(timed_out(timeout));
    };
    // A background job may hold the pipes after the shell exited: it gets EXIT_GRACE, then
    // its process group is killed and the output read so far is kept.
    let drained = match tokio::time::timeout(EXIT_GRACE, &mut drain).await {
        Ok(drained) => drained,
        Err(_) => {
            killer.kill();
            drain.await
        }
    };
    let (stdout, stderr) = drained.unwrap_or_default();
    let status = status.map_err(|e| ToolError::new(format!("cannot wait for the shell: {e}")))?;
    outcome(status.code(), stdout, stderr)
}

/// The result the model observes: success on exit 0, else a failure quoting the output.
fn outcome(code: Option<i32>, stdout: String, stderr: String) -> Result<Value, ToolError> {
    let result = json!({"exit_code": code, "stdout": stdout, "stderr": stderr});
    if code == Some(0) {
        Ok(result)
    } else {
        let how = code.map_or_else(
            || "was killed by a signal".to_owned(),
            |c| format!("exited with {c}"),
        );
        Err(ToolError::new(format!(
            "the command {how}\n{}",
            super::observation_text(&result)
        )))
    }
}

/// Reads a stream to its end, keeping [`OUTPUT_CAP`] bytes (as lossy UTF-8).
async fn capped(mut stream: impl AsyncRead + Unpin) -> String {
    let mut kept = Vec::new();
    let mut dropped = 0usize;
    let mut buf = [0u8; 8192];
    loop {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = OUTPUT_CAP.saturating_sub(kept.len());
                kept.extend_from_slice(&buf[..n.min(room)]);
                dropped += n.saturating_sub(room);
            }
        }
    }
    let mut text = String::from_utf8_lossy(&kept).into_owned();
    if dropped > 0 {
        text.push_str(&format!("\n[… {dropped} more bytes not shown]"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use tollgate_sandbox::{Network, Policy};

    /// The tool as a session builds it: the workspace writable, no network.
    fn tool(dir: &std::path::Path) -> BashTool {
        let policy = Policy::new(Network::Off).writable(dir);
        BashTool::new(ShellContainment::Sandbox(Sandbox::new(policy)))
    }

    fn env(dir: &std::path::Path, secs: u64) -> ToolEnv {
        ToolEnv {
            workspace: dir.to_owned(),
            database: None,
            tool_timeout: Duration::from_secs(secs),
        }
    }

    #[tokio::test]
    async fn a_background_job_holding_the_pipes_does_not_time_the_call_out() {
        let dir = tempfile::tempdir().unwrap();
        let ran = tool(dir.path())
            .call(
                &json!({"command": "sleep 30 & echo started"}),
                &env(dir.path(), 5),
            )
            .await
            .unwrap();
        assert_eq!(ran["stdout"], "started\n");
        assert_eq!(ran["exit_code"], 0);
    }

    #[tokio::test]
    async fn a_call_cannot_extend_the_agents_deadline() {
        let dir = tempfile::tempdir().unwrap();
        let slow = json!({"command": "sleep 5", "timeout_seconds": 600});
        let err = tool(dir.path())
            .call(&slow, &env(dir.path(), 1))
            .await
            .unwrap_err();
        assert!(err.0.contains("timed out after 1 s"), "{err}");
        let bad = json!({"command": "true", "timeout_seconds": 0});
        assert!(
            tool(dir.path())
                .call(&bad, &env(dir.path(), 1))
                .await
                .is_err()
        );
    }

    #[tokio::test]
    async fn output_is_capped_and_the_environment_is_minimal() {
        let dir = tempfile::tempdir().unwrap();
        let flood = tool(dir.path())
            .call(
                &json!({"command": "head -c 200000 /dev/zero | tr '\\0' a; env"}),
                &env(dir.path(), 5),
            )
            .await
            .unwrap();
        let stdout = flood["stdout"].as_str().unwrap();
        assert!(stdout.len() < OUTPUT_CAP + 100, "{}", stdout.len());
        assert!(stdout.contains("more bytes not shown"));
        // SAFETY of the assertion: the test process's own environment has CARGO_* variables;
        // none reaches the shell.
        let env_out = tool(dir.path())
            .call(&json!({"command": "env"}), &env(dir.path(), 5))
            .await
            .unwrap();
        let env_text = env_out["stdout"].as_str().unwrap();
        assert!(!env_text.contains("CARGO"), "{env_text}");
        assert!(env_text.contains("TOLLGATE_WORKSPACE="));
    }
}
