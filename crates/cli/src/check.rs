//! `tollgate check`: load config files as the engine would and show the resolved hooks and
//! the warnings.
//!
//! Each FILE is loaded by its kind: `SKILL.md` (or any `*.md`) as a skill (treated as
//! selected); a YAML or JSON file whose top level has a `name` or a `model_config_json` as an
//! agent file of `tollgate run` (its gate, its hooks and each skill's, then its sub-agents'
//! files); any other `*.yaml`/`*.yml`/`*.json` as a user hook file; files after `--admin` as
//! admin hook files, whose `network.allow_cidrs`, `standalone` and `sandbox` apply to every file
//! of the run. Hooks are built as for a run (command hooks are vetted by the shell
//! analyzer, http URLs by the SSRF guard, secrets and the llm endpoint are read from the
//! environment); a hook that cannot be built is a warning.
//!
//! A `tools` pattern of a tool event that matches none of the runtime's tools (nor any given
//! with `--tool NAME`) is a warning naming them, with Claude Code's name for the tool where it
//! has one (`Bash` is `bash_code_execute_tool` here); patterns with `__` (MCP-style names) are
//! not checked.
//!
//! For a sandboxed command hook, the files its command writes (as far as the shell analyzer
//! can tell) are compared with what its sandbox lets it write: a write to a read-only path
//! is a warning (the hook will fail), a write to `/tmp` a note (it lands in the sandbox's
//! private `/tmp`).
//!
//! `--json` prints `{"files":[{"path","agent"?:{"name","model","tools","hook_files",
//! "skills":[{"name","path"}],"gate":{"shell_analyzer","require_confirmation_for_all",
//! "confirmation_tools"},"shell_sandbox":{"network","writable"},"subagents":[{"name","file","timeout_seconds"}]},"hooks":[{"event",
//! "name","kind","source","tools","priority","timeout_sec","failure_mode","fire_and_forget",
//! "command"?,"verdict"?,"sandbox"?,"writes"?:[{"path","access":"writable"|"read_only"|
//! "private_tmp","grant"?}],"skill"?}],"warnings":[{"entry","message"}],"errors":[…]}]}`
//! (`skill`: the hook comes from that skill of the agent and runs only when a run selects it). Exit status: 0 when every file parsed
//! (warnings allowed), 1 otherwise; with `--strict` (for CI) also 1 when there is any warning,
//! including a command's write its sandbox keeps read-only (notes do not count).
//!
//! Everything printed comes from files (paths, names, commands, warnings), so control
//! characters, line separators and bidirectional controls are escaped: in text as `\u{1b}`,
//! in JSON as `\u001b` (still valid JSON, with the same values). What errors and warnings may
//! quote from a file at all is decided where they are made (`docs/config.md`).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use serde::Serialize;
use tollgate_config::{
    Assembler, ConfigError, HookFile, KnownTools, Policy, ResolvedHook, Skill, Trust, Warning,
    unmatched_tools,
};
use tollgate_handlers::ClassTable;
use tollgate_handlers::command::profile_for;
use tollgate_handlers::text::{escape_controls, escape_controls_json};
use tollgate_protocol::HookSource;
use tollgate_runtime::ConfigShape;

mod agent;
mod writes;

use writes::Access;

/// Arguments of `tollgate check`.
#[derive(Debug, Args)]
pub struct Check {
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    /// Exit 1 when there is any warning, not only when a file cannot be loaded (for CI: a
    /// skipped entry or a mistyped key must not pass unnoticed).
    #[arg(long)]
    strict: bool,
    /// A tool the run has besides the runtime's own (an agent's or a host's custom tool);
    /// repeat for several. A `tools` pattern that matches none of the known tools is a warning.
    #[arg(long = "tool", value_name = "NAME")]
    tools: Vec<String>,
    /// An admin (trusted) hook file; repeat for several.
    #[arg(long = "admin", value_name = "FILE")]
    admin: Vec<PathBuf>,
    /// SKILL.md, agent files (YAML or JSON, as `tollgate run --agent` takes them) or user hook
    /// files (*.yaml, *.yml, *.json).
    #[arg(value_name = "FILE", required_unless_present = "admin")]
    files: Vec<PathBuf>,
}

#[derive(Debug, Serialize)]
struct Report {
    files: Vec<FileReport>,
}

#[derive(Debug, Serialize)]
struct FileReport {
    path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    agent: Option<agent::AgentReport>,
    hooks: Vec<HookReport>,
    warnings: Vec<WarningReport>,
    errors: Vec<String>,
}

impl FileReport {
    /// Its warnings, counting a command's write that its sandbox keeps read-only (the hook
    /// will fail there) but not notes.
    fn warning_count(&self) -> usize {
        let writes = self
            .hooks
            .iter()
            .flat_map(|h| &h.writes)
            .filter(|w| w.access == Access::ReadOnly)
            .count();
        self.warnings.len() + writes
    }
}

#[derive(Debug, Serialize)]
struct HookReport {
    #[serde(flatten)]
    hook: ResolvedHook,
    #[serde(skip_serializing_if = "Option::is_none")]
    verdict: Option<&'static str>,
    /// The files the command writes (as far as the analyzer can tell) and whether its
    /// sandbox lets it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    writes: Vec<writes::Write>,
    /// In an agent file's report: the skill the hook comes from (it runs only when a run
    /// selects that skill).
    #[serde(skip_serializing_if = "Option::is_none")]
    skill: Option<String>,
}

#[derive(Debug, Serialize)]
struct WarningReport {
    entry: String,
    message: String,
}

/// Runs `tollgate check`.
///
/// # Errors
/// Only when writing to `out` fails.
pub fn run(args: Check, out: &mut impl Write) -> Result<ExitCode> {
    let admin: Vec<(PathBuf, Result<HookFile, ConfigError>)> = args
        .admin
        .iter()
        .map(|p| (p.clone(), HookFile::load(p, Trust::Admin)))
        .collect();
    let parsed: Vec<HookFile> = admin
        .iter()
        .filter_map(|(_, r)| r.as_ref().ok().cloned())
        .collect();
    let policy = Policy::from_admin(&parsed);
    let context = Context {
        classes: ClassTable::builtin(),
        policy,
        tools: KnownTools::runtime().with(args.tools.iter().cloned()),
        approval: parsed.iter().fold(
            Default::default(),
            |acc: tollgate_config::ApprovalSettings, f| acc.overridden_by(&f.approval),
        ),
    };
    let mut files: Vec<FileReport> = admin
        .into_iter()
        .map(|(path, loaded)| report(&path, loaded.map(Loaded::Hooks), &context))
        .collect();
    for path in &args.files {
        if agent::is_agent_file(path) {
            files.extend(agent::reports(path, &context));
        } else {
            files.push(report(path, load(path), &context));
        }
    }
    let loaded = files.iter().all(|f| f.errors.is_empty());
    let warnings: usize = files.iter().map(FileReport::warning_count).sum();
    let ok = loaded && !(args.strict && warnings > 0);
    let report = Report { files };
    if args.json {
        let json = serde_json::to_string_pretty(&report)?;
        writeln!(out, "{}", escape_controls_json(&json))?;
    } else {
        print_text(&report, out)?;
        if loaded && !ok {
            writeln!(out, "{warnings} warning(s); --strict fails on warnings")?;
        }
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// What every file is checked against.
struct Context {
    classes: ClassTable,
    policy: Policy,
    /// The tools `tools` patterns should match.
    tools: KnownTools,
    /// The admin files' `approval:` (their keys win over an agent file's).
    approval: tollgate_config::ApprovalSettings,
}

enum Loaded {
    Skill(Skill),
    Hooks(HookFile),
}

fn load(path: &Path) -> Result<Loaded, ConfigError> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    let ext = Path::new(&name)
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or_default();
    let skill_dir = path.join("SKILL.md");
    if path.is_dir() && skill_dir.is_file() {
        return Skill::load(&skill_dir).map(Loaded::Skill);
    }
    let hook_shaped = || tollgate_runtime::config_shape_of(path) == ConfigShape::HookFile;
    match ext {
        "md" => Skill::load(path).map(Loaded::Skill),
        "yaml" | "yml" | "json" => HookFile::load(path, Trust::User).map(Loaded::Hooks),
        _ if hook_shaped() => HookFile::load(path, Trust::User).map(Loaded::Hooks),
        _ => Err(ConfigError::UnknownKind {
            path: path.display().to_string(),
        }),
    }
}

fn report(path: &Path, loaded: Result<Loaded, ConfigError>, context: &Context) -> FileReport {
    let mut report = FileReport {
        path: path.display().to_string(),
        agent: None,
        hooks: Vec::new(),
        warnings: Vec::new(),
        errors: Vec::new(),
    };
    let mut assembler = Assembler::new(&context.classes, context.policy.clone());
    let mut warnings: Vec<Warning> = Vec::new();
    match loaded {
        Err(error) => report.errors.push(error.to_string()),
        Ok(Loaded::Skill(skill)) => {
            warnings.extend(skill.warnings);
            warnings.extend(unmatched_tools(&skill.hooks, &context.tools));
            assembler.add_specs(&skill.hooks);
        }
        Ok(Loaded::Hooks(file)) => {
            warnings.extend(file.warnings);
            warnings.extend(unmatched_tools(&file.hooks, &context.tools));
            assembler.add_specs(&file.hooks);
        }
    }
    let assembled = assembler.finish();
    warnings.extend(assembled.warnings);
    report.hooks = assembled.hooks.into_iter().map(with_verdict).collect();
    report.warnings = warnings
        .into_iter()
        .map(|w| WarningReport {
            entry: w.entry,
            message: w.message,
        })
        .collect();
    report
}

fn with_verdict(hook: ResolvedHook) -> HookReport {
    let source = match hook.source {
        "builtin" => HookSource::Builtin,
        "agent_config" => HookSource::AgentConfig,
        "admin_config" => HookSource::AdminConfig,
        _ => HookSource::UserConfig,
    };
    let profile = profile_for(source);
    let verdict = hook
        .command
        .as_deref()
        .map(|line| tollgate_shell::analyze(line, profile).verdict.as_str());
    let writes = match (&hook.command, &hook.sandbox) {
        (Some(line), Some(sandbox)) => writes::judge(line, profile, sandbox),
        _ => Vec::new(),
    };
    HookReport {
        hook,
        verdict,
        writes,
        skill: None,
    }
}

fn print_text(report: &Report, out: &mut impl Write) -> Result<()> {
    for file in &report.files {
        writeln!(out, "{}", escape_controls(&file.path))?;
        for error in &file.errors {
            writeln!(out, "  error: {}", escape_controls(error))?;
        }
        if let Some(agent) = &file.agent {
            agent::print_agent(agent, out)?;
        }
        if file.errors.is_empty() && file.hooks.is_empty() {
            writeln!(out, "  no hooks")?;
        }
        for h in &file.hooks {
            print_hook(h, out)?;
        }
        for w in &file.warnings {
            let warning = format!("{}: {}", w.entry, w.message);
            writeln!(out, "  warning: {}", escape_controls(&warning))?;
        }
    }
    Ok(())
}

fn print_hook(report: &HookReport, out: &mut impl Write) -> Result<()> {
    let h = &report.hook;
    let tools = match h.dialect {
        // Claude Code's matcher, on Claude Code's tool names (`Bash`, `Write`, …).
        Some(_) => {
            let mut text = format!("matcher: {}", h.matcher.as_deref().unwrap_or("*"));
            if let Some(rule) = &h.rule {
                text.push_str(&format!("; if: {rule}"));
            }
            text
        }
        None => format!(
            "tools: {}",
            h.tools.as_ref().map_or("*".to_owned(), |t| t.join(", "))
        ),
    };
    let mut line = format!("{} {} ({}, source {})", h.event, h.name, h.kind, h.source);
    if let Some(skill) = &report.skill {
        line.push_str(&format!(" — only in runs that select skill `{skill}`"));
    }
    if h.dialect.is_some() {
        line.push_str(" — Claude Code's shape: Claude Code's tool names and payload");
    }
    writeln!(out, "  {}", escape_controls(&line))?;
    let settings = format!(
        "{tools}; priority {}; timeout {} s; {}{}",
        h.priority,
        h.timeout_sec,
        h.failure_mode,
        if h.fire_and_forget {
            "; fire and forget"
        } else {
            ""
        }
    );
    writeln!(out, "    {}", escape_controls(&settings))?;
    if let Some(message) = &h.status_message {
        writeln!(out, "    status message: {}", escape_controls(message))?;
    }
    if let (Some(command), Some(verdict)) = (&h.command, report.verdict) {
        let command = escape_controls(command);
        writeln!(out, "    command: {command}  [analyzer: {verdict}]")?;
    }
    if let Some(sandbox) = &h.sandbox {
        writeln!(
            out,
            "    sandbox: {}",
            escape_controls(&sandbox_text(sandbox))
        )?;
    }
    for write in &report.writes {
        let line = match (write.access, &write.grant) {
            (Access::ReadOnly, Some(grant)) => format!(
                "warning: the command writes `{}`, which its sandbox keeps read-only, so the \
                 hook will fail; an admin file can grant its directory: `sandbox: {{sources: \
                 {{{}: {{writable: {}}}}}}}`",
                write.path,
                h.source,
                writes::yaml_list(&[grant])
            ),
            (Access::ReadOnly, None) => format!(
                "warning: the command writes `{}`, which its sandbox keeps read-only, so the \
                 hook will fail; an admin file grants directories, not files right under `/` \
                 or the home: write it into a directory of its own and grant that",
                write.path
            ),
            (Access::PrivateTmp, _) => format!(
                "note: the command writes `{}` in the sandbox's private /tmp, which the host \
                 never sees",
                write.path
            ),
            _ => continue,
        };
        writeln!(out, "    {}", escape_controls(&line))?;
    }
    Ok(())
}

/// `off`, or `network off; writes: scratch, /tmp, …`.
fn sandbox_text(sandbox: &serde_json::Value) -> String {
    if let Some(text) = sandbox.as_str() {
        return text.to_owned();
    }
    let network = sandbox["network"].as_str().unwrap_or("?");
    let mut writes = vec!["its scratch directory".to_owned(), "/tmp".to_owned()];
    if let Some(paths) = sandbox["writable"].as_array() {
        writes.extend(paths.iter().filter_map(|p| p.as_str()).map(str::to_owned));
    }
    format!("network {network}; writes only {}", writes.join(", "))
}
