//! What every interop test needs: the pinned CLI, an isolated home and project, a guard hook
//! that records its payloads, and a run that cannot hang the suite.

use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::Value;
use tollgate_standins::RecordedRequest;

/// The folder holding the `claude` and `codex` executables.
pub const BIN_VAR: &str = "TOLLGATE_INTEROP_BIN";

/// A command naming this word is denied by the guard.
pub const DENY_WORD: &str = "tollgate-deny-me";

/// What the guard says when it denies.
pub const DENY_REASON: &str = "the interop guard refuses commands naming tollgate-deny-me";

/// Printed by the command the guard lets through.
pub const ALLOWED_OUTPUT: &str = "interop-allowed-output";

/// A run of a CLI that takes longer than this is killed and fails the test (a hang guard: the
/// runs here take about a second).
const RUN_LIMIT: Duration = Duration::from_secs(120);

const VERSIONS: &str = include_str!("../../../../tests/interop/versions.env");

/// The agent CLIs under test.
#[derive(Debug, Clone, Copy)]
pub enum Cli {
    ClaudeCode,
    Codex,
}

impl Cli {
    fn executable_name(self) -> &'static str {
        match self {
            Cli::ClaudeCode => "claude",
            Cli::Codex => "codex",
        }
    }

    fn pin_key(self) -> &'static str {
        match self {
            Cli::ClaudeCode => "CLAUDE_CODE_VERSION",
            Cli::Codex => "CODEX_VERSION",
        }
    }

    /// The executable, after checking once that it is there and reports the pinned version.
    pub fn executable(self) -> PathBuf {
        static CLAUDE: OnceLock<Result<PathBuf, String>> = OnceLock::new();
        static CODEX: OnceLock<Result<PathBuf, String>> = OnceLock::new();
        let checked = match self {
            Cli::ClaudeCode => &CLAUDE,
            Cli::Codex => &CODEX,
        };
        match checked.get_or_init(|| self.find()) {
            Ok(path) => path.clone(),
            Err(message) => panic!("{message}"),
        }
    }

    fn find(self) -> Result<PathBuf, String> {
        let install = format!(
            "install the pinned CLIs with `export {BIN_VAR}=\"$(tests/interop/install.sh)\"` \
             from the repository root (needs npm; docs/interop-tests.md)"
        );
        let dir = match std::env::var_os(BIN_VAR) {
            Some(dir) => PathBuf::from(dir),
            None => installed().clone().map_err(|e| format!("{e}; {install}"))?,
        };
        let path = dir.join(self.executable_name());
        let pinned = pinned_version(self.pin_key());
        let version = Command::new(&path)
            .arg("--version")
            .stdin(Stdio::null())
            .output()
            .map_err(|error| format!("cannot run {}: {error}; {install}", path.display()))?;
        let version = String::from_utf8_lossy(&version.stdout).into_owned();
        if !version.contains(&pinned) {
            return Err(format!(
                "{} reports `{}`, but tests/interop/versions.env pins {pinned}: {install}",
                path.display(),
                version.trim()
            ));
        }
        Ok(path)
    }
}

/// Without `TOLLGATE_INTEROP_BIN`, the pinned CLIs are installed (once per test process, into
/// `tests/interop/install.sh`'s cache) so that `cargo test` works on a fresh machine with npm.
fn installed() -> &'static Result<PathBuf, String> {
    static INSTALLED: std::sync::OnceLock<Result<PathBuf, String>> = std::sync::OnceLock::new();
    INSTALLED.get_or_init(|| {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/interop/install.sh");
        let output = Command::new("bash")
            .arg(&script)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("cannot run {}: {e}", script.display()))?;
        if !output.status.success() {
            return Err(format!(
                "{} failed: {}",
                script.display(),
                String::from_utf8_lossy(&output.stderr).trim()
            ));
        }
        let bin = String::from_utf8_lossy(&output.stdout);
        let bin = bin.lines().last().unwrap_or_default().trim();
        Ok(PathBuf::from(bin))
    })
}

fn pinned_version(key: &str) -> String {
    VERSIONS
        .lines()
        .find_map(|line| line.strip_prefix(key)?.strip_prefix('='))
        .map(|value| value.trim().to_owned())
        .unwrap_or_else(|| panic!("tests/interop/versions.env has no {key}"))
}

/// How the guard denies.
#[derive(Debug, Clone, Copy)]
pub enum Deny {
    /// Exit 2 with the reason on stderr.
    Exit2,
    /// Exit 0 with `hookSpecificOutput.permissionDecision: "deny"` on stdout.
    Json,
    /// Exit 0 with `permissionDecision: "ask"` instead: what the CLI makes of an ask.
    Ask,
}

/// A home and a project folder of their own for one CLI run, under the target directory (not
/// `/tmp`, where Codex refuses to put its helper binaries), removed when dropped.
pub struct Scene {
    _root: tempfile::TempDir,
    pub home: PathBuf,
    pub project: PathBuf,
    payloads: PathBuf,
}

impl Scene {
    pub fn new() -> Self {
        let root = tempfile::Builder::new()
            .prefix("interop-")
            .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
            .unwrap();
        let home = root.path().join("home");
        let project = root.path().join("project");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&project).unwrap();
        let payloads = root.path().join("hook-payloads.jsonl");
        Self {
            _root: root,
            home,
            project,
            payloads,
        }
    }

    /// Writes the guard to `path`: a PreToolUse hook that appends its stdin to this scene's
    /// payload log and denies a command naming [`DENY_WORD`] the `deny` way.
    pub fn write_guard(&self, path: &Path, deny: Deny) {
        let log = self.payloads.display().to_string();
        assert!(!log.contains('\''), "unquotable path {log}");
        let denial = match deny {
            Deny::Exit2 => format!("echo '{DENY_REASON}' >&2; exit 2"),
            Deny::Json => format!(
                "printf '%s\\n' '{{\"hookSpecificOutput\":{{\"hookEventName\":\"PreToolUse\",\
                 \"permissionDecision\":\"deny\",\"permissionDecisionReason\":\"{DENY_REASON}\"}}}}'; exit 0"
            ),
            Deny::Ask => format!(
                "printf '%s\\n' '{{\"hookSpecificOutput\":{{\"hookEventName\":\"PreToolUse\",\
                 \"permissionDecision\":\"ask\",\"permissionDecisionReason\":\"{DENY_REASON}\"}}}}'; exit 0"
            ),
        };
        let script = format!(
            "#!/bin/bash\n\
             # PreToolUse guard of the interop tests: records the payload, denies {DENY_WORD}.\n\
             payload=$(cat)\n\
             printf '%s\\n' \"$payload\" >> '{log}'\n\
             command=$(jq -r '.tool_input.command' <<<\"$payload\") || \
             {{ echo 'guard: cannot read the payload' >&2; exit 2; }}\n\
             case \"$command\" in\n  *{DENY_WORD}*) {denial};;\nesac\n\
             exit 0\n"
        );
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, script).unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    /// Every payload the guard received, in order.
    pub fn payloads(&self) -> Vec<Value> {
        let text = std::fs::read_to_string(&self.payloads).unwrap_or_default();
        text.lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    }

    /// `program` with an environment of this scene's alone: the caller's `PATH` (bash, jq and
    /// node), a home and XDG folders here, and nothing else of the caller's (no API keys).
    pub fn command(&self, program: &Path) -> Command {
        let mut command = Command::new(program);
        command
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", self.home.join(".config"))
            .env("XDG_CACHE_HOME", self.home.join(".cache"))
            .env("XDG_DATA_HOME", self.home.join(".local/share"))
            .env("XDG_STATE_HOME", self.home.join(".local/state"))
            .env("LANG", "C.UTF-8")
            .current_dir(&self.project);
        command
    }
}

/// Runs `command` with no stdin to its end, or kills it at [`RUN_LIMIT`] and fails.
pub fn run(command: &mut Command) -> Output {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().unwrap();
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let deadline = Instant::now() + RUN_LIMIT;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            child.kill().unwrap();
            child.wait().unwrap();
            let stderr = String::from_utf8_lossy(&stderr.join().unwrap()).into_owned();
            panic!("{command:?} did not finish within {RUN_LIMIT:?}; stderr:\n{stderr}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
    }
}

fn drain(pipe: Option<impl Read + Send + 'static>) -> JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(mut pipe) = pipe {
            pipe.read_to_end(&mut bytes).unwrap();
        }
        bytes
    })
}

/// What a failed assertion should show: the CLI's output and the requests it made.
pub fn context(output: &Output, requests: &[RecordedRequest]) -> String {
    let asked: Vec<String> = requests.iter().map(RecordedRequest::summary).collect();
    format!(
        "exit: {}\nstdout:\n{}\nstderr:\n{}\nrequests: {asked:#?}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}
