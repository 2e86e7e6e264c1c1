//! An agent's hooks for one session, as [`run`](super::run) builds them: the admin files', the
//! agent config's class hooks, its hook files' and the selected skills', and the permission
//! gate.

use std::path::{Path, PathBuf};

use tollgate_config::{Assembler, HookFile, Policy, SandboxSettings, Warning};
use tollgate_core::{Registry, ToolMatcher};
use tollgate_handlers::ClassTable;
use tollgate_handlers::claude::StatusBoard;
use tollgate_protocol::claude_code::ClaudeContext;
use tollgate_sandbox::{Network, Policy as SandboxPolicy};

use crate::agent::AgentDef;
use crate::gate::RuntimeGate;

/// An agent's hooks for one session: its registry and permission gate, as [`run`] builds them.
pub struct Assembly {
    /// The hooks: the admin files', the agent config's class hooks, the agent's hook files',
    /// then the selected skills', in that registration order.
    pub registry: Registry,
    /// The permission gate: the shell analyzer on the bash tool and the agent's confirmation
    /// settings.
    pub gate: RuntimeGate,
    /// The selected skills the agent has, in selection order.
    pub skills: Vec<String>,
    /// The selected names the agent has no skill for (nothing was selected for them).
    pub unknown_skills: Vec<String>,
    /// Hook entries that were skipped while building, with the reason.
    pub warnings: Vec<Warning>,
    /// The shell tool's sandbox policy (the session adds its workspace); `None` when an admin
    /// file turned the sandbox off.
    pub shell: Option<SandboxPolicy>,
    /// Variables the admin files pass through to the shell tool.
    pub shell_env: Vec<String>,
    /// Where the `statusMessage`s of Claude Code hooks go when they start (a session sends
    /// them to its trace as `hook_status` lines).
    pub status: StatusBoard,
}

/// The first configuration file of the run (agent file, its hook files and skill folders, its
/// sub-agents' files, the admin files) that lies inside `workspace`.
pub(super) fn config_inside(
    def: &AgentDef,
    admin: &[HookFile],
    workspace: &Path,
) -> Option<PathBuf> {
    let skill_dirs = def
        .skills
        .paths()
        .map(|p| Path::new(p).parent().unwrap_or(Path::new(p)).to_path_buf());
    let subagents = def
        .subagents
        .keys()
        .filter_map(|name| def.subagent_file(name));
    std::iter::once(PathBuf::from(&def.path))
        .chain(def.hook_files.iter().map(|f| PathBuf::from(&f.path)))
        .chain(admin.iter().map(|f| PathBuf::from(&f.path)))
        .chain(skill_dirs)
        .chain(subagents)
        .find(|path| std::fs::canonicalize(path).is_ok_and(|real| real.starts_with(workspace)))
}

/// The shell tool's sandbox: the agent file's `sandbox:`, then the admin files' `shell_tool`
/// (whose `network` wins) and `hidden`; `None` when an admin file says `sandbox: off`.
pub(super) fn shell_policy(def: &AgentDef, settings: &SandboxSettings) -> Option<SandboxPolicy> {
    if settings.off {
        return None;
    }
    let admin = &settings.shell_tool;
    // The agent file may open HTTP(S) through the guarded proxy; only an admin file may give
    // the host's network.
    let network = match admin.network {
        Some(choice) => choice.into(),
        None if def.sandbox.network => Network::Proxy,
        None => Network::Off,
    };
    let mut policy = SandboxPolicy::new(network);
    policy.hidden.extend(settings.hidden.iter().cloned());
    policy.writable.extend(def.sandbox.writable.iter().cloned());
    policy.writable.extend(admin.writable.iter().cloned());
    Some(policy)
}

/// Builds `def`'s registry and permission gate with the skills named in `selected` (the
/// agent file's own load warnings are in `def.warnings`, not repeated here). `admin` files are
/// the operator's policy: their hooks come first and their `network` / `standalone` settings
/// apply to every file.
///
/// # Errors
/// A message when a class hook cannot be built (unknown class, bad params), the registry cannot
/// be built, or `confirmation_tools` is not a valid glob list: the agent must not run.
pub fn assemble(
    def: &AgentDef,
    selected: &[String],
    classes: &ClassTable,
    admin: &[HookFile],
) -> Result<Assembly, String> {
    assemble_for(def, selected, classes, admin, ClaudeContext::default())
}

/// [`assemble`] for a session whose hooks declared in Claude Code's shape see `claude` (its
/// workspace, transcript, permission mode, sub-agent).
///
/// # Errors
/// As [`assemble`].
pub fn assemble_for(
    def: &AgentDef,
    selected: &[String],
    classes: &ClassTable,
    admin: &[HookFile],
    claude: ClaudeContext,
) -> Result<Assembly, String> {
    let unknown: Vec<String> = def
        .skills
        .unknown(selected)
        .into_iter()
        .map(str::to_owned)
        .collect();
    let skills: Vec<String> = selected
        .iter()
        .filter(|s| !unknown.contains(s))
        .cloned()
        .collect();
    let policy = Policy::from_admin(admin);
    let shell = shell_policy(def, &policy.sandbox);
    let shell_env = policy.sandbox.shell_tool.env.clone();
    let mut assembler = Assembler::new(classes, policy).claude_context(claude);
    for file in admin {
        assembler.add_specs(&file.hooks);
    }
    assembler
        .add_agent(&def.config)
        .map_err(|e| format!("the agent's hooks cannot be built: {e}"))?;
    for file in &def.hook_files {
        assembler.add_specs(&file.hooks);
    }
    assembler.add_specs(&def.skills.hooks_for(&skills));
    let assembled = assembler.finish();
    let registry = assembled
        .builder
        .build()
        .map_err(|e| format!("the agent's hooks cannot be built: {e}"))?;
    let confirm = if def.config.confirmation_tools.is_empty() {
        None
    } else {
        let matcher = ToolMatcher::new(&def.config.confirmation_tools)
            .map_err(|e| format!("confirmation_tools: {e}"))?;
        Some(matcher)
    };
    Ok(Assembly {
        registry,
        gate: RuntimeGate::new(def.config.require_confirmation_for_all, confirm),
        skills,
        unknown_skills: unknown,
        warnings: assembled.warnings,
        shell,
        shell_env,
        status: assembled.status,
    })
}
