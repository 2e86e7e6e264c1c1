//! `tollgate check AGENT_FILE`: an agent file of `tollgate run` (YAML or JSON), shown as a run
//! would build it: the agent, its permission gate, its hooks (class hooks, hook files) and the
//! hooks each of its skills adds when a run selects it. Its sub-agents' files are checked after
//! it, each once.

use std::path::{Path, PathBuf};

use serde::Serialize;
use tollgate_config::{Assembler, Warning, unmatched_tools};
use tollgate_core::ToolMatcher;
use tollgate_runtime::{AgentDef, ConfigShape, ModelSpec, config_shape_of};

use super::{Context, FileReport, HookReport, WarningReport, with_verdict};

/// What the agent is, beside its hooks.
#[derive(Debug, Serialize)]
pub(super) struct AgentReport {
    name: String,
    /// `scripted:FILE`, `openai:MODEL`, `direct`, or `null` when the run must name one.
    model: Option<String>,
    tools: Vec<String>,
    /// The hook files it loads (source `user_config`).
    hook_files: Vec<String>,
    /// Its skills, which add their hooks only to runs that select them.
    skills: Vec<SkillReport>,
    gate: GateReport,
    /// Who decides its asks and how long they wait (the admin files' `approval:` keys over
    /// the agent file's).
    approval: ApprovalReport,
    /// The shell tool's sandbox as the agent file sets it (admin files may change it).
    shell_sandbox: SandboxReport,
    subagents: Vec<SubagentReport>,
}

#[derive(Debug, Serialize)]
struct SandboxReport {
    /// HTTP(S) through the guarded egress proxy.
    network: bool,
    /// Writable paths besides the workspace and `/tmp`.
    writable: Vec<String>,
}

#[derive(Debug, Serialize)]
struct ApprovalReport {
    timeout_seconds: u64,
    /// `name`, or `name (agents …; tools …)`; `null`: the OS user running the agent.
    approvers: Option<Vec<String>>,
}

#[derive(Debug, Serialize)]
struct SkillReport {
    name: String,
    path: String,
}

/// The permission gate: the shell analyzer on the shell tool and the confirmation settings.
#[derive(Debug, Serialize)]
struct GateReport {
    /// Whether the shell analyzer (`agent` profile) reviews `bash_code_execute_tool` calls
    /// (the agent has the tool).
    shell_analyzer: bool,
    require_confirmation_for_all: bool,
    confirmation_tools: Vec<String>,
}

#[derive(Debug, Serialize)]
struct SubagentReport {
    name: String,
    file: String,
    timeout_seconds: u64,
}

/// Whether `path` holds an agent file rather than a hook file or a skill
/// ([`tollgate_runtime::config_shape`]), whatever its extension (`*.md` files are skills).
pub(super) fn is_agent_file(path: &Path) -> bool {
    let markdown = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("md"));
    !markdown && path.is_file() && config_shape_of(path) == ConfigShape::Agent
}

/// Reports the agent file at `path` and then, once each, the files of its sub-agents.
pub(super) fn reports(path: &Path, context: &Context) -> Vec<FileReport> {
    let mut seen: Vec<PathBuf> = Vec::new();
    let mut pending = vec![path.to_owned()];
    let mut files = Vec::new();
    while let Some(path) = pending.pop() {
        let real = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
        if seen.contains(&real) {
            continue;
        }
        seen.push(real);
        let report = match AgentDef::load(&path) {
            Ok(def) => {
                let mut subagents: Vec<PathBuf> = def
                    .subagents
                    .keys()
                    .filter_map(|name| def.subagent_file(name))
                    .collect();
                subagents.reverse();
                pending.extend(subagents);
                report(&path, &def, context)
            }
            Err(error) => FileReport {
                path: path.display().to_string(),
                agent: None,
                hooks: Vec::new(),
                warnings: Vec::new(),
                errors: vec![error.to_string()],
            },
        };
        files.push(report);
    }
    files
}

fn report(path: &Path, def: &AgentDef, context: &Context) -> FileReport {
    let (classes, policy) = (&context.classes, &context.policy);
    let mut errors = Vec::new();
    let mut warnings: Vec<Warning> = def.warnings.clone();
    for file in &def.hook_files {
        warnings.extend(unmatched_tools(&file.hooks, &context.tools));
    }
    for name in def.skills.names() {
        let hooks = def.skills.hooks_for(&[name.to_owned()]);
        warnings.extend(unmatched_tools(&hooks, &context.tools));
    }
    let mut own = Assembler::new(classes, policy.clone());
    if let Err(error) = own.add_agent(&def.config) {
        errors.push(error.to_string());
    }
    for file in &def.hook_files {
        own.add_specs(&file.hooks);
    }
    let own = own.finish();
    warnings.extend(own.warnings);
    let mut hooks: Vec<HookReport> = own.hooks.into_iter().map(with_verdict).collect();
    let mut skills = Vec::new();
    for name in def.skills.names() {
        let mut assembler = Assembler::new(classes, policy.clone());
        assembler.add_specs(&def.skills.hooks_for(&[name.to_owned()]));
        let assembled = assembler.finish();
        warnings.extend(assembled.warnings);
        hooks.extend(assembled.hooks.into_iter().map(|hook| HookReport {
            skill: Some(name.to_owned()),
            ..with_verdict(hook)
        }));
    }
    for skill_path in def.skills.paths() {
        let name = def
            .skills
            .names()
            .into_iter()
            .find(|n| def.skills.get(n).is_some_and(|s| s.path == skill_path))
            .unwrap_or_default()
            .to_owned();
        skills.push(SkillReport {
            name,
            path: skill_path.to_owned(),
        });
    }
    if !def.config.confirmation_tools.is_empty()
        && let Err(error) = ToolMatcher::new(&def.config.confirmation_tools)
    {
        errors.push(format!(
            "model_config_json.hooks.confirmation_tools: {error}"
        ));
    }
    let agent = AgentReport {
        name: def.name.clone(),
        model: def.model.as_ref().map(model_text),
        tools: def.tools.clone(),
        hook_files: def.hook_files.iter().map(|f| f.path.clone()).collect(),
        skills,
        gate: GateReport {
            shell_analyzer: def
                .tools
                .iter()
                .any(|t| t == tollgate_runtime::tools::BASH_TOOL),
            require_confirmation_for_all: def.config.require_confirmation_for_all,
            confirmation_tools: def.config.confirmation_tools.clone(),
        },
        approval: approval_report(&def.approval.overridden_by(&context.approval)),
        shell_sandbox: SandboxReport {
            network: def.sandbox.network,
            writable: def
                .sandbox
                .writable
                .iter()
                .map(|p| p.display().to_string())
                .collect(),
        },
        subagents: def
            .subagents
            .iter()
            .map(|(name, sub)| SubagentReport {
                name: name.clone(),
                file: sub.file.clone(),
                timeout_seconds: sub.timeout_seconds,
            })
            .collect(),
    };
    let file = path.display().to_string();
    FileReport {
        path: file.clone(),
        agent: Some(agent),
        hooks,
        warnings: warnings
            .into_iter()
            .map(|w| WarningReport {
                // Warnings of the agent's hook files and skills name their own file.
                entry: if w.file == file {
                    w.entry
                } else {
                    format!("{}: {}", w.file, w.entry)
                },
                message: w.message,
            })
            .collect(),
        errors,
    }
}

/// The approval settings a run of the agent uses (admin keys over the agent file's).
fn approval_report(settings: &tollgate_config::ApprovalSettings) -> ApprovalReport {
    ApprovalReport {
        timeout_seconds: settings
            .timeout_seconds
            .unwrap_or(tollgate_runtime::approval::DEFAULT_APPROVAL_TIMEOUT_SECS),
        approvers: settings.approvers.as_ref().map(|entries| {
            entries
                .iter()
                .map(|e| {
                    let mut limits = Vec::new();
                    if !e.agents.is_empty() {
                        limits.push(format!("agents {}", e.agents.join(", ")));
                    }
                    if !e.tools.is_empty() {
                        limits.push(format!("tools {}", e.tools.join(", ")));
                    }
                    if limits.is_empty() {
                        e.name.clone()
                    } else {
                        format!("{} ({})", e.name, limits.join("; "))
                    }
                })
                .collect()
        }),
    }
}

/// `scripted:FILE`, `openai:MODEL` or `direct`.
fn model_text(model: &ModelSpec) -> String {
    match model {
        ModelSpec::Direct => "direct".into(),
        ModelSpec::Scripted(path) => format!("scripted:{}", path.display()),
        ModelSpec::OpenAi(name) => format!("openai:{name}"),
    }
}

/// The agent's lines of the text report.
pub(super) fn print_agent(
    agent: &AgentReport,
    out: &mut impl std::io::Write,
) -> std::io::Result<()> {
    use tollgate_handlers::text::escape_controls;
    let list = |items: &[String]| {
        if items.is_empty() {
            "none".to_owned()
        } else {
            items.join(", ")
        }
    };
    let mut lines = vec![format!(
        "agent `{}`: model {}; tools: {}",
        agent.name,
        agent.model.as_deref().unwrap_or("(none: pass --model)"),
        list(&agent.tools)
    )];
    let gate = &agent.gate;
    let confirmation = if gate.require_confirmation_for_all {
        "for every tool call".to_owned()
    } else if gate.confirmation_tools.is_empty() {
        "for no tool".to_owned()
    } else {
        format!("for calls of {}", gate.confirmation_tools.join(", "))
    };
    lines.push(format!(
        "permission gate: {}human confirmation {confirmation}",
        if gate.shell_analyzer {
            "the shell analyzer (agent profile) on bash_code_execute_tool; "
        } else {
            ""
        }
    ));
    let approvers = match &agent.approval.approvers {
        None => "the OS user running the agent".to_owned(),
        Some(names) if names.is_empty() => "nobody (asks are denied at once)".to_owned(),
        Some(names) => names.join(", "),
    };
    lines.push(format!(
        "asks wait {} s for a decision by {approvers}",
        agent.approval.timeout_seconds
    ));
    if gate.shell_analyzer {
        let mut writes = vec!["the workspace".to_owned(), "/tmp".to_owned()];
        writes.extend(agent.shell_sandbox.writable.iter().cloned());
        lines.push(format!(
            "shell tool sandbox: network {}; writes only {} (admin files may change it)",
            if agent.shell_sandbox.network {
                "through the guarded proxy"
            } else {
                "off"
            },
            writes.join(", ")
        ));
    }
    lines.push(format!("hook files: {}", list(&agent.hook_files)));
    let skills: Vec<String> = agent
        .skills
        .iter()
        .map(|s| format!("{} ({})", s.name, s.path))
        .collect();
    lines.push(format!(
        "skills (hooks only in runs that select them): {}",
        list(&skills)
    ));
    let subagents: Vec<String> = agent
        .subagents
        .iter()
        .map(|s| format!("{} ({}, timeout {} s)", s.name, s.file, s.timeout_seconds))
        .collect();
    lines.push(format!("sub-agents: {}", list(&subagents)));
    for line in lines {
        writeln!(out, "  {}", escape_controls(&line))?;
    }
    Ok(())
}
