//! Command hooks: one shell line, run as `/bin/bash -c <line>` (not `/bin/sh`;
//! see below).
//!
//! The payload reaches the process as data only:
//! - `HOOK_PAYLOAD`: the wire payload as compact JSON, at most 96 KiB
//!   ([`truncate_payload`](tollgate_core::truncate::truncate_payload): long strings are shortened
//!   and `"payload_truncated": true` is added);
//! - stdin: the whole payload, written from its own task, so a hook that never reads stdin
//!   cannot deadlock. Guards read it here: a long string can push the part they look for out
//!   of the shortened `HOOK_PAYLOAD` (`docs/command-hooks.md` shows a guard that reads stdin
//!   and fails closed);
//! - `HOOK_EVENT`: the event's canonical name.
//!
//! `$ARGUMENTS` / `${ARGUMENTS}` in the line stand for the payload: outside single quotes they
//! are rewritten to a quoted reference to `HOOK_PAYLOAD` (never spliced as text, so no word
//! splitting or globbing); inside single quotes they stay literal. The line is vetted by the
//! static shell analyzer ([`tollgate_shell`]) **as written**, once, when the hook is built, with
//! the profile of the hook's source: a refused line makes a hook that fails (`refused`) on every
//! trigger, resolved by its failure mode.
//!
//! Output protocol (compatible with [Claude Code command
//! hooks](https://code.claude.com/docs/en/hooks#hook-output)):
//! - exit 0, empty stdout: no opinion;
//! - exit 0, stdout one JSON object: an outcome ([`OutcomeWire`](tollgate_protocol::wire::OutcomeWire): native and
//!   Claude-Code-compatible fields);
//! - exit 0, other stdout: additional context on `user_turn` and `session_start`, a hook
//!   failure (`invalid_output`) on every other event;
//! - exit 2: deny, with stderr as the reason (a default reason when stderr is empty);
//! - any other exit: a hook failure (`errored`); death by a signal: `crashed`.
//!
//! **Paths.** A hook built with [`CommandHook::declared_in`] (config does, with the folder of
//! the file that declares it) runs its relative paths from that folder, not from the directory
//! tollgate started in: a command name with a `/` (`./hooks/guard.sh`, `hooks/guard.sh
//! --flag`) and the script of a shell, `source` or an interpreter when that file exists in the
//! folder (`bash hooks/guard.sh`, `python3 ./guard.py`, `node x.js`) are replaced by absolute
//! paths before the analyzer vets the line, so what is vetted, shown and run is the same
//! file. The working directory is not changed (hooks may rely on it), words inside shell
//! strings (`sh -c './x'`) and after a `cd` stay as written, and the folder is in
//! `HOOK_CONFIG_DIR` ([`CONFIG_DIR_ENV`]), readable (not writable) in the sandbox.
//!
//! **Programs.** A program the line runs that is not there ([`CommandHook::missing_programs`]:
//! a name not on the hook's `PATH` as its sandbox shows it, a script that does not exist or is
//! not executable) makes the hook fail (`errored`, naming the program) before anything runs,
//! instead of letting bash print `command not found` while `jq … && exit 2 || exit 0` allows
//! everything. Once every program was found, runs do not look again.
//!
//! **Shell.** The analyzer vets the line as bash (tree-sitter-bash), so the line runs under
//! `/bin/bash`: running another dialect (dash as `/bin/sh` on Debian) would vet one language and
//! run another, and bash-only forms such as `<<<` would fail at run time. Where `/bin/bash` is
//! missing, `/bin/sh` is used.
//!
//! **Containment.** The shell runs inside the OS sandbox of [`tollgate_sandbox`]: everything
//! read-only but the hook's own scratch directory (`$HOOK_SCRATCH_DIR`, created at the first
//! run, removed with the hook) and a private `/tmp`; credential paths unreadable; a PID
//! namespace of its own, so when the shell exits, or the hook is dropped (its deadline passed,
//! the run was cancelled), every process it started is killed at once, `setsid` and double
//! forks included; no capabilities, no new privileges; the network off for hooks from external
//! sources (the host's network for trusted ones; admin config may give a hook HTTP(S) through
//! an egress proxy that the SSRF guard of http hooks polices, [`Network::Proxy`]). [`CommandHook::with_containment`] widens or narrows that
//! (admin config does, per source or per hook), or turns it off ([`Containment::Off`], admin
//! config only). When this machine cannot build the sandbox, hooks from external sources do
//! not run (a `refused` failure naming the missing kernel feature) and trusted ones run
//! unconfined with a warning.
//!
//! **Environment.** Every hook gets only `PATH`, `HOME`, `USER`, `LOGNAME`, `LANG`, `LC_ALL`,
//! `LC_CTYPE`, `TZ`, `TMPDIR` and `TERM` from the runtime's environment ([`MINIMAL_ENV`]),
//! plus the variables config passes through by name ([`CommandHook::with_env`]), so the
//! runtime's API keys and secrets never reach a hook. All get `HOOK_PAYLOAD`, `HOOK_EVENT`,
//! `HOOK_SCRATCH_DIR` (sandboxed) and `ARGUMENTS` (the same value as `HOOK_PAYLOAD`, so a
//! reference the rewrite could not see still expands to the payload as data).
//!
//! stdout and stderr are drained concurrently, each capped ([`CommandHook::DEFAULT_OUTPUT_CAP`]);
//! past the cap the hook is killed and the run is a failure. Unconfined, the hook runs in its
//! own process group, killed with `SIGKILL` when it finishes, fails or is dropped; a background
//! job still holding the output gets 200 ms after the shell exits.

mod confine;
mod output;
mod process;
mod programs;
mod resolve;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use tollgate_core::{BoxFuture, FailureKind, Hook, HookContext, HookError};
use tollgate_protocol::wire::PayloadWire;
use tollgate_protocol::{HookKind, HookSource, Outcome, SideEffect};
use tollgate_sandbox::{Launcher, SandboxError};
use tollgate_shell::{Analysis, Profile, Program};

pub use confine::{CONFIG_DIR_ENV, Containment, MINIMAL_ENV, SCRATCH_ENV};

use crate::claude::{self, CLAUDE_ENV, ClaudeCode};
pub use output::parse_output;
pub use tollgate_sandbox::{Network, Policy};

/// What a hook in Claude Code's shape adds to building its line: the `CLAUDE_*` values to
/// substitute, and the project folder its relative paths are taken from.
struct ClaudeCodeLine<'a> {
    vars: &'a [(&'static str, String)],
    project: &'a Path,
}

/// A command hook, vetted at construction.
#[derive(Debug)]
pub struct CommandHook {
    name: String,
    shell: PathBuf,
    source: HookSource,
    confinement: confine::Confinement,
    env_passthrough: Vec<String>,
    command: String,
    line: String,
    to_run: String,
    analysis: Analysis,
    refusal: Option<String>,
    output_cap: usize,
    cwd: Option<PathBuf>,
    config_dir: Option<PathBuf>,
    /// Every program of the line was found once: runs no longer look.
    /// The programs of the line as bash will look them up (see [`CommandHook::missing_programs`]).
    programs: Vec<Program>,
    programs_found: AtomicBool,
    /// Declared in Claude Code's shape: its matching, payload, environment and answers.
    claude: Option<ClaudeCode>,
    /// The folder of a Claude Code `SessionStart` hook's `CLAUDE_ENV_FILE`, made when the
    /// hook is built so that the line names the file literally.
    env_dir: Option<tempfile::TempDir>,
}

/// The analyzer profile for hooks from `source`: `trusted` for built-in, agent-config and
/// admin-config hooks, `external` for the rest.
pub fn profile_for(source: HookSource) -> Profile {
    if source.is_trusted() {
        Profile::Trusted
    } else {
        Profile::External
    }
}

impl CommandHook {
    /// Cap on each of stdout and stderr, in bytes (1 MiB).
    pub const DEFAULT_OUTPUT_CAP: usize = 1024 * 1024;

    /// Builds a hook running `command` (one shell line), vetted with the profile of `source`.
    /// Never fails: a refused command yields a hook that fails with `refused` on every trigger
    /// (see [`CommandHook::refusal`]).
    pub fn new(name: impl Into<String>, command: impl Into<String>, source: HookSource) -> Self {
        Self::build(name.into(), command.into(), source, None)
    }

    /// Builds a hook declared in a file in the folder `dir`: relative paths of the line are
    /// taken from `dir` (see the module docs, "Paths"), then the line is vetted as
    /// [`CommandHook::new`] does. A relative `dir` is made absolute against the current
    /// directory.
    pub fn declared_in(
        name: impl Into<String>,
        command: impl Into<String>,
        source: HookSource,
        dir: impl Into<PathBuf>,
    ) -> Self {
        let dir = dir.into();
        let dir = std::path::absolute(&dir).unwrap_or(dir);
        Self::build(name.into(), command.into(), source, Some(dir))
    }

    /// Builds a hook declared in Claude Code's shape in the folder `dir` (see
    /// [`crate::claude`]): the known values of its `CLAUDE_*` variables are substituted in the
    /// line ([`tollgate_shell::substitute_variables`]) before its relative paths are resolved
    /// and the analyzer vets it, so `"${CLAUDE_PLUGIN_ROOT}/hooks/x.sh"` is vetted, shown and
    /// run as the literal path. Relative paths are taken from the project's folder
    /// (`CLAUDE_PROJECT_DIR`), where Claude Code runs every hook, whichever file declares it:
    /// `.claude/hooks/x.sh` in a settings file or a skill is the project's. `dir` stays the
    /// hook's `HOOK_CONFIG_DIR`.
    pub fn claude_code(
        name: impl Into<String>,
        command: impl Into<String>,
        source: HookSource,
        dir: impl Into<PathBuf>,
        claude: ClaudeCode,
    ) -> Self {
        let dir = dir.into();
        let dir = std::path::absolute(&dir).unwrap_or(dir);
        // Without the folder the hook runs without CLAUDE_ENV_FILE; a write to it then fails
        // loudly (an empty name).
        let env_dir = claude
            .takes_env_file()
            .then(|| {
                tempfile::Builder::new()
                    .prefix("tollgate-claude-env-")
                    .tempdir()
                    .ok()
            })
            .flatten();
        let mut vars = claude.variables();
        if let Some(env) = &env_dir {
            vars.push((
                ENV_FILE_VAR,
                env.path().join(ENV_FILE).display().to_string(),
            ));
        }
        let project = claude.context().cwd.clone();
        let project = std::path::absolute(&project).unwrap_or(project);
        let claude_code = ClaudeCodeLine {
            vars: &vars,
            project: &project,
        };
        let mut hook = Self::build_with(
            name.into(),
            command.into(),
            source,
            Some(dir),
            Some(claude_code),
        );
        hook.claude = Some(claude);
        hook.env_dir = env_dir;
        hook
    }

    fn build(name: String, command: String, source: HookSource, dir: Option<PathBuf>) -> Self {
        Self::build_with(name, command, source, dir, None)
    }

    fn build_with(
        name: String,
        command: String,
        source: HookSource,
        dir: Option<PathBuf>,
        claude_code: Option<ClaudeCodeLine<'_>>,
    ) -> Self {
        let profile = profile_for(source);
        let substituted = match &claude_code {
            Some(claude_code) => {
                let values: Vec<(&str, &str)> = claude_code
                    .vars
                    .iter()
                    .map(|(k, v)| (*k, v.as_str()))
                    .collect();
                tollgate_shell::substitute_variables(&command, &values)
            }
            None => command.clone(),
        };
        let written = tollgate_shell::analyze(&substituted, profile);
        let resolve_from = match &claude_code {
            Some(claude_code) => Some(claude_code.project.to_path_buf()),
            None => dir.clone(),
        };
        let line = match &resolve_from {
            Some(from) => resolve::resolve(&substituted, &written.programs, from),
            None => substituted.clone(),
        };
        // What bash will look up: the written programs with the rewritten names absolute (a
        // word written as `"$HOOK_CONFIG_DIR"/…` is no static name the analyzer could list).
        let programs: Vec<Program> = match &resolve_from {
            Some(dir) => written
                .programs
                .iter()
                .map(|p| resolve::resolved(p, dir))
                .collect(),
            None => written.programs.clone(),
        };
        let analysis = if line == substituted {
            written
        } else {
            tollgate_shell::analyze(&line, profile)
        };
        let refusal = analysis.refused().then(|| refusal_message(&analysis));
        let to_run = tollgate_shell::rewrite_arguments(&line, "HOOK_PAYLOAD");
        let shell = ["/bin/bash", "/bin/sh"]
            .into_iter()
            .map(PathBuf::from)
            .find(|path| path.exists())
            .unwrap_or_else(|| PathBuf::from("/bin/sh"));
        Self {
            name,
            shell,
            source,
            confinement: confine::Confinement::new(Containment::default_for(source)),
            env_passthrough: Vec::new(),
            command,
            line,
            to_run,
            analysis,
            refusal,
            output_cap: Self::DEFAULT_OUTPUT_CAP,
            cwd: None,
            config_dir: dir,
            programs,
            programs_found: AtomicBool::new(false),
            claude: None,
            env_dir: None,
        }
    }

    /// Sets the cap on each of stdout and stderr, in bytes.
    #[must_use]
    pub fn with_output_cap(mut self, bytes: usize) -> Self {
        self.output_cap = bytes;
        self
    }

    /// Runs the command in `dir` instead of the current directory.
    #[must_use]
    pub fn with_cwd(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cwd = Some(dir.into());
        *self.programs_found.get_mut() = false;
        self
    }

    /// Sets how the hook is contained (default: [`Containment::default_for`] its source).
    /// [`Containment::Off`] is for admin config only.
    #[must_use]
    pub fn with_containment(mut self, containment: Containment) -> Self {
        self.confinement = confine::Confinement::new(containment);
        *self.programs_found.get_mut() = false;
        self
    }

    /// Networks a proxied hook ([`Network::Proxy`]) may reach although the SSRF guard refuses
    /// them (admin config's `network.allow_cidrs`, for trusted sources).
    #[must_use]
    pub fn with_egress_allow(mut self, allow: &[ipnet::IpNet]) -> Self {
        self.confinement.egress_allow = allow.to_vec();
        self
    }

    /// Starts the sandbox through `launcher` instead of [`Launcher::find`].
    #[must_use]
    pub fn with_launcher(mut self, launcher: Launcher) -> Self {
        self.confinement.launcher = Some(launcher);
        self
    }

    /// Passes these variables of the runtime's environment to the hook (besides
    /// [`MINIMAL_ENV`]).
    #[must_use]
    pub fn with_env(mut self, names: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.env_passthrough = names.into_iter().map(Into::into).collect();
        self
    }

    /// How the hook is contained.
    pub fn containment(&self) -> &Containment {
        &self.confinement.containment
    }

    /// The command as written.
    pub fn command(&self) -> &str {
        &self.command
    }

    /// The line as it runs and as the analyzer vetted it: the command with its relative paths
    /// taken from the config folder (see [`CommandHook::declared_in`]); the command itself
    /// otherwise. `$ARGUMENTS` is still as written.
    pub fn line(&self) -> &str {
        &self.line
    }

    /// The folder of the file that declared the hook, when it was built with
    /// [`CommandHook::declared_in`].
    pub fn config_dir(&self) -> Option<&Path> {
        self.config_dir.as_deref()
    }

    /// What is wrong with the programs the line runs, one message each (empty when nothing
    /// is): a name not on the hook's `PATH` (`program `jq` not found on the hook's PATH
    /// (/usr/bin:/bin)`), a script path that does not exist or is not executable, a script
    /// given to an interpreter that does not exist, or a program only under a path the hook's
    /// sandbox does not show (`/tmp`, `/run`, credential paths). Looked up now, in the
    /// runtime's `PATH` and the hook's working directory, as a run would. Names inside the
    /// line's own `PATH` changes are not looked up, nor relative names after a `cd`.
    pub fn missing_programs(&self) -> Vec<String> {
        let cwd = confine::working_dir(self.cwd.as_deref());
        let sandbox = match &self.confinement.containment {
            Containment::Sandbox(policy) => Some(policy),
            Containment::Off => None,
        };
        let lookup = programs::Lookup {
            search_path: std::env::var("PATH").ok(),
            cwd: &cwd,
            config_dir: self.config_dir.as_deref(),
            sandbox,
            bound: std::iter::once(cwd.as_path())
                .chain(self.config_dir.as_deref())
                .collect(),
            own_search_path: programs::sets_search_path(&self.line),
        };
        lookup.missing(&self.programs)
    }

    /// Fails when a program of the line is missing; once all were found, no longer looks.
    fn check_programs(&self) -> Result<(), HookError> {
        if self.programs_found.load(Ordering::Relaxed) {
            return Ok(());
        }
        let missing = self.missing_programs();
        if missing.is_empty() {
            self.programs_found.store(true, Ordering::Relaxed);
            return Ok(());
        }
        Err(HookError::new(FailureKind::Errored, missing.join("; ")))
    }

    /// The analyzer's verdict on the line as it runs ([`CommandHook::line`]).
    pub fn analysis(&self) -> &Analysis {
        &self.analysis
    }

    /// Why the analyzer refused the command, when it did.
    pub fn refusal(&self) -> Option<&str> {
        self.refusal.as_deref()
    }

    async fn run(&self, ctx: HookContext) -> Result<Outcome, HookError> {
        if let Some(refusal) = &self.refusal {
            return Err(HookError::new(FailureKind::Refused, refusal));
        }
        self.check_programs()?;
        let event = ctx.event();
        let payload = match &self.claude {
            Some(claude) => {
                claude.started(&self.name, ctx.payload());
                claude.payload(ctx.payload())
            }
            None => PayloadWire::from(ctx.payload()).to_json(),
        };
        let cwd = confine::working_dir(self.cwd.as_deref());
        let config_dir = self.config_dir.as_deref();
        let env_dir = self.env_dir.as_ref().map(tempfile::TempDir::path);
        let prepared = match self.confinement.sandbox(&cwd, config_dir, env_dir) {
            None => None,
            Some(Err(e)) => return Err(HookError::msg(e)),
            Some(Ok(prepared)) => Some(prepared),
        };
        let env_file = self.env_file()?;
        let mut extra_env: Vec<(String, String)> = self
            .claude
            .iter()
            .flat_map(ClaudeCode::variables)
            .map(|(k, v)| (k.to_owned(), v))
            .collect();
        if let Some(file) = &env_file {
            extra_env.push((ENV_FILE_VAR.into(), file.display().to_string()));
        }
        let invocation = process::Invocation {
            shell: &self.shell,
            line: &self.to_run,
            payload: &payload,
            event: &event.to_string(),
            output_cap: self.output_cap,
            cwd: &cwd,
            passthrough: &self.env_passthrough,
            scratch: prepared.as_ref().map(|p| p.scratch.path()),
            config_dir,
            extra_env: &extra_env,
        };
        let finished = match &prepared {
            None => process::run(&invocation).await?,
            Some(prepared) => match process::run_sandboxed(&invocation, &prepared.sandbox).await {
                Err(process::Sandboxed::Unavailable(e)) => self.unconfined(&invocation, &e).await?,
                Err(process::Sandboxed::Failed(e)) => return Err(e),
                Ok(finished) => finished,
            },
        };
        let outcome = match &self.claude {
            Some(claude) => claude.interpret(
                ctx.payload(),
                finished.status.code(),
                &finished.stdout,
                &finished.stderr,
            ),
            None => output::interpret(&self.name, &event, finished),
        }?;
        Ok(match env_file {
            Some(file) => with_env_file(outcome, &file),
            None => outcome,
        })
    }

    /// The `CLAUDE_ENV_FILE` of a Claude Code `SessionStart` hook, emptied for this run.
    fn env_file(&self) -> Result<Option<PathBuf>, HookError> {
        let Some(dir) = &self.env_dir else {
            return Ok(None);
        };
        let path = dir.path().join(ENV_FILE);
        std::fs::write(&path, b"")
            .map_err(|e| HookError::msg(format!("cannot empty CLAUDE_ENV_FILE: {e}")))?;
        Ok(Some(path))
    }

    /// The sandbox cannot be built here: trusted hooks run unconfined (with a warning),
    /// external ones are refused.
    async fn unconfined(
        &self,
        invocation: &process::Invocation<'_>,
        error: &SandboxError,
    ) -> Result<process::Finished, HookError> {
        if !self.source.is_trusted() {
            return Err(HookError::new(
                FailureKind::Refused,
                format!(
                    "hooks from {} sources run only inside the OS sandbox, and this machine \
                     cannot build it: {error}",
                    self.source.as_str()
                ),
            ));
        }
        tracing::warn!(
            hook = %self.name,
            "running a trusted command hook without the OS sandbox: {error}"
        );
        process::run(invocation).await
    }
}

fn refusal_message(analysis: &Analysis) -> String {
    let findings: Vec<String> = analysis
        .findings
        .iter()
        .map(|f| format!("{}: {}", f.rule, f.message))
        .collect();
    format!(
        "command refused by the shell analyzer ({}): {}",
        analysis.verdict.as_str(),
        findings.join("; ")
    )
}

/// The variable naming a Claude Code `SessionStart` hook's env file, and the file's name.
const ENV_FILE_VAR: &str = "CLAUDE_ENV_FILE";
const ENV_FILE: &str = "claude-env";

/// `outcome` with what the hook wrote to its env file as a [`CLAUDE_ENV`] side effect, when it
/// wrote anything.
fn with_env_file(outcome: Outcome, path: &Path) -> Outcome {
    use std::io::Read;
    let mut text = Vec::new();
    let read = std::fs::File::open(path).and_then(|f| {
        f.take(claude::env::MAX_ENV_FILE as u64 + 1)
            .read_to_end(&mut text)
    });
    let parsed = match read {
        Ok(_) => claude::env::parse(&String::from_utf8_lossy(&text)),
        Err(e) => claude::env::EnvFile {
            vars: Vec::new(),
            skipped: vec![format!("cannot read CLAUDE_ENV_FILE: {e}")],
        },
    };
    if parsed.vars.is_empty() && parsed.skipped.is_empty() {
        return outcome;
    }
    let set: serde_json::Map<String, serde_json::Value> = parsed
        .vars
        .into_iter()
        .map(|(k, v)| (k, v.into()))
        .collect();
    let detail = serde_json::json!({"set": set, "skipped": parsed.skipped});
    outcome.with_side_effect(SideEffect::new(CLAUDE_ENV, detail))
}

impl Hook for CommandHook {
    fn name(&self) -> &str {
        &self.name
    }

    fn kind(&self) -> HookKind {
        HookKind::Command
    }

    fn should_trigger(&self, ctx: &HookContext) -> bool {
        self.claude
            .as_ref()
            .is_none_or(|c| c.triggers(ctx.payload()))
    }

    fn execute(&self, ctx: HookContext) -> BoxFuture<'_, Result<Outcome, HookError>> {
        Box::pin(self.run(ctx))
    }
}
