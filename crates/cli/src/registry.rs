//! The hook files a run is built from (`--admin`, `--hooks`, `--skill`, `--agent`), shared by
//! `tollgate dispatch` and `tollgate replay`, and the registry built from them exactly as a run
//! builds it.
//!
//! Registration order, which decides ties in priority: `--admin` files (source
//! `admin_config`; their `network.allow_cidrs` and `standalone` are the policy of every file),
//! the `--agent` config's class hooks (`agent_config`), `--hooks` files (`user_config`), then the
//! `--skill` files, which count as selected by the user (`skill`).

use std::path::{Path, PathBuf};

use clap::Args;
use tollgate_config::{AgentConfig, Assembler, HookFile, Policy, Skill, SkillSet, Trust, Warning};
use tollgate_core::Registry;
use tollgate_handlers::ClassTable;
use tollgate_handlers::text::escape_controls;

/// The hook sources of a run, as command-line flags.
#[derive(Debug, Args)]
pub struct HookSources {
    /// An admin (trusted) hook file; repeat for several.
    #[arg(long = "admin", value_name = "FILE")]
    admin: Vec<PathBuf>,
    /// A user hook file (*.yaml); repeat for several.
    #[arg(long = "hooks", value_name = "FILE")]
    hooks: Vec<PathBuf>,
    /// A SKILL.md the user selected for this run; repeat for several.
    #[arg(long = "skill", value_name = "SKILL.md")]
    skills: Vec<PathBuf>,
    /// An agent config (JSON) whose class hooks are added.
    #[arg(long, value_name = "AGENT.json")]
    agent: Option<PathBuf>,
}

impl HookSources {
    /// Loads the `--admin` files.
    ///
    /// # Errors
    /// A message naming the file when one cannot be read or parsed.
    pub fn admin_files(&self) -> Result<Vec<HookFile>, String> {
        load_all(&self.admin, |p| HookFile::load(p, Trust::Admin))
    }

    /// Whether no hook source was given at all.
    pub fn is_empty(&self) -> bool {
        self.admin.is_empty()
            && self.hooks.is_empty()
            && self.skills.is_empty()
            && self.agent.is_none()
    }
}

/// Loads every file of `sources` and builds the run's registry. Load warnings are printed to
/// stderr as `warning: FILE: ENTRY: MESSAGE`.
///
/// # Errors
/// A message naming the file or class when a file cannot be read or parsed, an agent class is
/// unknown or has bad params, or the registry cannot be built.
pub fn build_registry(sources: &HookSources) -> Result<Registry, String> {
    let admin = load_all(&sources.admin, |p| HookFile::load(p, Trust::Admin))?;
    let user = load_all(&sources.hooks, |p| HookFile::load(p, Trust::User))?;
    let skills = load_all(&sources.skills, Skill::load)?;
    let agent = sources
        .agent
        .as_deref()
        .map(AgentConfig::load)
        .transpose()
        .map_err(|e| e.to_string())?;
    let classes = ClassTable::builtin();
    let mut assembler = Assembler::new(&classes, Policy::from_admin(&admin));
    let mut warnings: Vec<Warning> = Vec::new();
    for file in admin.iter() {
        warnings.extend(file.warnings.iter().cloned());
        assembler.add_specs(&file.hooks);
    }
    if let Some(agent) = &agent {
        assembler.add_agent(agent).map_err(|e| e.to_string())?;
    }
    for file in &user {
        warnings.extend(file.warnings.iter().cloned());
        assembler.add_specs(&file.hooks);
    }
    warnings.extend(skills.iter().flat_map(|s| s.warnings.iter().cloned()));
    let selected: Vec<String> = skills.iter().map(|s| s.name.clone()).collect();
    let set = SkillSet::new(skills);
    for (name, paths) in set.duplicates() {
        let message = format!(
            "skills {} share the name `{name}`; all of them are selected",
            paths.join(", ")
        );
        warnings.push(Warning::new(paths[0], "name", message));
    }
    assembler.add_specs(&set.hooks_for(&selected));
    let assembled = assembler.finish();
    warnings.extend(assembled.warnings);
    for warning in &warnings {
        warn(warning);
    }
    assembled.builder.build().map_err(|e| e.to_string())
}

fn load_all<T, E: std::fmt::Display>(
    paths: &[PathBuf],
    load: impl Fn(&Path) -> Result<T, E>,
) -> Result<Vec<T>, String> {
    paths
        .iter()
        .map(|p| load(p).map_err(|e| e.to_string()))
        .collect()
}

/// WARN-level logs (hook failures) on stderr; `RUST_LOG=info|debug|…` raises the level. Log
/// lines name hooks after their files and skills, so they are escaped like everything else the
/// CLI prints ([`TerminalSafe`]).
pub fn init_logging() {
    init(false);
}

/// [`init_logging`] without the dispatcher's log line for each failed hook run: `tollgate run`
/// shows every failure in its own output (from the trace), and must not show it twice.
pub fn init_run_logging() {
    init(true);
}

fn init(skip_hook_failures: bool) {
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;
    let level = std::env::var("RUST_LOG")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(tracing_subscriber::filter::LevelFilter::WARN);
    let shown = tracing_subscriber::filter::filter_fn(move |meta| {
        !(skip_hook_failures && is_hook_failure_log(meta))
    });
    // Only fails when a subscriber is already set.
    let _ = tracing_subscriber::fmt()
        .with_writer(|| TerminalSafe(std::io::stderr()))
        .with_max_level(level)
        .with_target(false)
        .finish()
        .with(shown)
        .try_init();
}

/// The dispatcher's events for a failed hook run (inline or fire-and-forget): they carry the
/// hook, its status and the error, which the run's trace records too.
fn is_hook_failure_log(meta: &tracing::Metadata<'_>) -> bool {
    let fields = meta.fields();
    meta.is_event()
        && meta.target().starts_with("tollgate_core")
        && ["hook", "status", "error"]
            .iter()
            .all(|name| fields.field(name).is_some())
}

/// A writer that escapes control characters, line separators and bidirectional controls in
/// what it is given, keeping its newlines. The log formatter writes each event whole, with no
/// colours of its own (its `ansi` feature is off), so nothing it means is lost.
pub struct TerminalSafe<W>(pub W);

impl<W: std::io::Write> std::io::Write for TerminalSafe<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        let escaped: Vec<String> = text.split('\n').map(escape_controls).collect();
        self.0.write_all(escaped.join("\n").as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

/// Prints `error: MESSAGE` to stderr, control characters escaped (paths, names and reasons come
/// from files and hooks), and returns exit status `code`.
pub fn fail(code: u8, message: &str) -> std::process::ExitCode {
    eprintln!("error: {}", escape_controls(message));
    std::process::ExitCode::from(code)
}

/// Prints `warning: WARNING` to stderr, control characters escaped: a file or hook must not
/// be able to rewrite the terminal.
pub fn warn(warning: impl std::fmt::Display) {
    eprintln!("warning: {}", escape_controls(&warning.to_string()));
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::io::Write as _;

    use super::*;

    #[test]
    fn log_lines_keep_their_newlines_and_lose_their_controls() {
        let mut out = TerminalSafe(Vec::new());
        out.write_all("WARN hook=w\u{1b}[31m\u{9b}x error=a\u{202e}\n".as_bytes())
            .unwrap();
        assert_eq!(
            String::from_utf8(out.0).unwrap(),
            "WARN hook=w\\u{1b}[31m\\u{9b}x error=a\\u{202e}\n"
        );
    }
}
