//! The hook sources of a run (`--agent`, `--admin`, `--hooks`, `--skill`), shared by `tollgate
//! run`, `tollgate dispatch` and `tollgate replay`, and the registry built from them exactly as a
//! run builds it.
//!
//! `--agent` takes the agent file of `tollgate run` (YAML or JSON, `docs/runtime.md`); without
//! one the run's agent is the default agent (no hooks of its own, the standard tools, the
//! `direct` model). Registration order, which decides ties in priority: `--admin` files (source
//! `admin_config`; their `network.allow_cidrs`, `standalone` and `sandbox` are the policy of
//! every file), the agent's class hooks (`agent_config`), the agent's hook files then the
//! `--hooks` files (`user_config`), then the selected skills (`skill`): the agent's skills named
//! with `--skill NAME` (or `[use NAME]` in a run's prompt) and the `--skill PATH` files and
//! folders, which count as selected.

use std::path::{Path, PathBuf};

use clap::Args;
use tollgate_config::{HookFile, KnownTools, Skill, Trust, Warning, unmatched_tools};
use tollgate_core::Registry;
use tollgate_handlers::ClassTable;
use tollgate_handlers::text::escape_controls;
use tollgate_protocol::claude_code::ClaudeContext;
use tollgate_runtime::{AgentDef, ConfigShape, RuntimeGate, assemble_for, config_shape_of};

/// The hook sources of a run, as command-line flags.
#[derive(Debug, Args)]
pub struct HookSources {
    /// An admin (trusted) hook file; repeat for several.
    #[arg(long = "admin", value_name = "FILE")]
    pub admin: Vec<PathBuf>,
    /// A user hook file (YAML); repeat for several. Its hooks come after the agent's own.
    #[arg(long = "hooks", value_name = "FILE")]
    pub hooks: Vec<PathBuf>,
    /// Select a skill: the name of one of the agent's skills, or a SKILL.md file or the folder
    /// holding one; repeat for several.
    #[arg(long = "skill", visible_alias = "use", value_name = "NAME|PATH")]
    pub skills: Vec<String>,
    /// The agent file (YAML or JSON) of `tollgate run`: its class hooks, hook files, skills and
    /// confirmation settings. Default: the default agent (docs/runtime.md).
    #[arg(long, visible_alias = "agent-file", value_name = "FILE")]
    pub agent: Option<PathBuf>,
}

/// A run's policy built from [`HookSources`].
pub struct Policy {
    /// The hooks.
    pub registry: Registry,
    /// The agent's permission gate (the shell analyzer on the shell tool, the confirmation
    /// settings); `None` without `--agent`, so hooks are tried on their own.
    pub gate: Option<RuntimeGate>,
    /// With `--agent`: the agent's name and `metadata`, which a run puts in every payload
    /// (`agent_id`, `metadata.org_id`, …).
    pub agent: Option<AgentInfo>,
}

/// What a run of an agent puts in every payload.
pub struct AgentInfo {
    /// `agent_id`.
    pub name: String,
    /// Default `metadata` keys.
    pub metadata: serde_json::Map<String, serde_json::Value>,
}

impl AgentInfo {
    /// Puts the agent's `metadata` keys a payload lacks into it, as a run of the agent would
    /// (keys the payload has win).
    pub fn fill_metadata(&self, metadata: &mut serde_json::Map<String, serde_json::Value>) {
        for (key, value) in &self.metadata {
            metadata.entry(key).or_insert_with(|| value.clone());
        }
    }
}

impl HookSources {
    /// Whether no hook source was given at all.
    pub fn is_empty(&self) -> bool {
        self.admin.is_empty()
            && self.hooks.is_empty()
            && self.skills.is_empty()
            && self.agent.is_none()
    }

    /// Loads every source and builds the run's registry and gate. Load warnings are printed to
    /// stderr as `warning: FILE: ENTRY: MESSAGE`.
    ///
    /// # Errors
    /// The exit status and a message: 1 when a file cannot be read or parsed or the hooks
    /// cannot be built, 2 for a `--skill` that is neither a skill of the agent nor a file.
    pub fn build(&self) -> Result<Policy, (u8, String)> {
        self.build_for(ClaudeContext::default())
    }

    /// [`HookSources::build`] for hooks declared in Claude Code's shape that see `claude` (the
    /// workspace, transcript and permission mode of a Claude Code payload).
    ///
    /// # Errors
    /// As [`HookSources::build`].
    pub fn build_for(&self, claude: ClaudeContext) -> Result<Policy, (u8, String)> {
        let admin = load_admin(&self.admin).map_err(|e| (1, e))?;
        let (def, selected) = agent_for_run(self.agent.as_deref(), &self.hooks, &self.skills)?;
        for warning in admin.iter().flat_map(|f| &f.warnings).chain(&def.warnings) {
            warn(warning);
        }
        let assembly = assemble_for(&def, &selected, &ClassTable::builtin(), &admin, claude)
            .map_err(|e| (1, format!("{}: {e}", def.path)))?;
        for warning in &assembly.warnings {
            warn(warning);
        }
        Ok(Policy {
            registry: assembly.registry,
            gate: self.agent.is_some().then_some(assembly.gate),
            agent: self.agent.is_some().then(|| AgentInfo {
                name: def.name.clone(),
                metadata: def.metadata.clone(),
            }),
        })
    }
}

/// Loads admin hook files, with a warning for each `tools` pattern that matches none of the
/// runtime's tools.
///
/// # Errors
/// A message naming the file when one cannot be read or parsed.
pub fn load_admin(paths: &[PathBuf]) -> Result<Vec<HookFile>, String> {
    let known = KnownTools::runtime();
    paths
        .iter()
        .map(|p| {
            let mut file = HookFile::load(p, Trust::Admin).map_err(|e| e.to_string())?;
            let unmatched = unmatched_tools(&file.hooks, &known);
            file.warnings.extend(unmatched);
            Ok(file)
        })
        .collect()
}

/// The agent of a run: the agent file at `agent` (or the default agent), with the `hooks`
/// files added after its own and the `skills` resolved; returns it with the names to select.
///
/// # Errors
/// As [`HookSources::build`].
pub fn agent_for_run(
    agent: Option<&Path>,
    hooks: &[PathBuf],
    skills: &[String],
) -> Result<(AgentDef, Vec<String>), (u8, String)> {
    let mut def = match agent {
        Some(path) => AgentDef::load(path).map_err(|e| (1, e.to_string()))?,
        None => AgentDef::default_agent(),
    };
    for path in hooks {
        if config_shape_of(path) == ConfigShape::Agent {
            return Err((
                2,
                format!(
                    "--hooks {}: this is an agent file, not a hook file; pass it with --agent",
                    path.display()
                ),
            ));
        }
        if let Some(twice) = def
            .hook_files
            .iter()
            .find(|f| same_file(Path::new(&f.path), path))
        {
            let message = format!(
                "{} is already a hook file of this run ({}); its hooks load once",
                path.display(),
                twice.path
            );
            def.warnings.push(Warning::new(
                &path.display().to_string(),
                "--hooks",
                message,
            ));
            continue;
        }
        let file = HookFile::load(path, Trust::User).map_err(|e| (1, e.to_string()))?;
        def.add_hook_file(file);
    }
    let mut selected: Vec<String> = Vec::new();
    for skill in skills {
        let name = select_skill(&mut def, skill)?;
        if !selected.contains(&name) {
            selected.push(name);
        }
    }
    // `tools: Bash` (Claude Code's name) would never run here: say so in every command that
    // builds a run, not only in `check`.
    let known = KnownTools::runtime();
    let all_skills: Vec<String> = def.skills.names().into_iter().map(str::to_owned).collect();
    let mut unmatched: Vec<Warning> = def
        .hook_files
        .iter()
        .flat_map(|file| unmatched_tools(&file.hooks, &known))
        .collect();
    unmatched.extend(unmatched_tools(&def.skills.hooks_for(&all_skills), &known));
    def.warnings.extend(unmatched);
    Ok((def, selected))
}

/// Whether `a` and `b` name the same file (after resolving links), or the same path when either
/// cannot be resolved.
pub fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// `--skill ARG`: the agent's skill named `ARG`, else the SKILL.md at `ARG` (a file, or a folder
/// holding one), added to the agent.
fn select_skill(def: &mut AgentDef, arg: &str) -> Result<String, (u8, String)> {
    if def.skills.get(arg).is_some() {
        return Ok(arg.to_owned());
    }
    let path = Path::new(arg);
    let file = if path.is_dir() {
        path.join("SKILL.md")
    } else {
        path.to_owned()
    };
    if file.is_file() {
        // A skill the agent already has, named by its path: select it, do not add it twice.
        let known = def.skills.names().into_iter().find(|name| {
            def.skills
                .get(name)
                .is_some_and(|s| same_file(Path::new(&s.path), &file))
        });
        if let Some(name) = known {
            return Ok(name.to_owned());
        }
        let skill = Skill::load(&file).map_err(|e| (1, e.to_string()))?;
        return Ok(def.add_skill(skill));
    }
    let known = def.skills.names();
    Err((
        2,
        format!(
            "--skill `{arg}`: not a skill of {} (its skills: {}) and no SKILL.md at that path",
            def.path,
            if known.is_empty() {
                "none".to_owned()
            } else {
                known.join(", ")
            }
        ),
    ))
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
/// what it is given, newlines too but the one that ends it. The log formatter writes each
/// event whole, as one line ending in a newline, with no colours of its own (its `ansi`
/// feature is off), so nothing it means is lost, and a newline inside a field (a hook named
/// `a\nWARN …`) cannot start a forged log line.
pub struct TerminalSafe<W>(pub W);

impl<W: std::io::Write> std::io::Write for TerminalSafe<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        let (line, end) = match text.strip_suffix('\n') {
            Some(line) => (line, "\n"),
            None => (&*text, ""),
        };
        self.0.write_all(escape_controls(line).as_bytes())?;
        self.0.write_all(end.as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

/// Prints `error: MESSAGE` to stderr, control characters escaped (paths, names and reasons come
/// from files and hooks), and returns exit status `code`.
pub fn fail(code: u8, message: &str) -> std::process::ExitCode {
    // Never `eprintln!`: it panics when stderr is gone.
    let _ = std::io::Write::write_fmt(
        &mut std::io::stderr(),
        format_args!("error: {}\n", escape_controls(message)),
    );
    std::process::ExitCode::from(code)
}

/// Prints `warning: WARNING` to stderr, control characters escaped: a file or hook must not
/// be able to rewrite the terminal.
pub fn warn(warning: impl std::fmt::Display) {
    let _ = std::io::Write::write_fmt(
        &mut std::io::stderr(),
        format_args!("warning: {}\n", escape_controls(&warning.to_string())),
    );
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

    #[test]
    fn regression_a_hook_name_with_a_newline_forged_a_log_line() {
        let mut out = TerminalSafe(Vec::new());
        out.write_all(b"WARN hook failed hook=a\nINFO all good\n")
            .unwrap();
        assert_eq!(
            String::from_utf8(out.0).unwrap(),
            "WARN hook failed hook=a\\nINFO all good\n"
        );
    }
}
