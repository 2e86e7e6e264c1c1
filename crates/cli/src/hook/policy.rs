//! The policy one hook call is decided by: the hooks `tollgate dispatch` would build from the
//! same `--admin`, `--agent`, `--hooks` and `--skill` sources (every hook kind), the runtime's
//! permission gate (the shell analyzer's `agent` profile on the shell tool, which Claude Code's
//! and Codex's `Bash` map to, and an agent file's confirmation settings), and the admin and
//! agent files' `approval:` settings for asks.

use std::sync::Arc;

use tollgate_core::{Background, DispatchOutcome, Dispatcher};
use tollgate_handlers::ClassTable;
use tollgate_protocol::Payload;
use tollgate_protocol::claude_code::ClaudeContext;
use tollgate_runtime::{ApprovalPolicy, RuntimeGate, assemble_for};

use crate::registry::{HookSources, agent_for_run, load_admin};

/// The hooks, the gate and the approval settings of the bridge.
pub struct Policy {
    dispatcher: Dispatcher,
    /// The permission gate the dispatcher reviews `pre_tool_use` with.
    gate: Arc<RuntimeGate>,
    /// Where its fire-and-forget hooks run.
    background: Background,
    /// Who may approve asks and how long they may wait (admin keys over the agent file's).
    pub approval: ApprovalPolicy,
    /// What loading skipped or found missing (`FILE: ENTRY: MESSAGE`), for the audit: the
    /// hosts read a hook's stderr as its deny reason, so nothing else may go there.
    pub warnings: Vec<String>,
}

impl Policy {
    /// Loads `sources` as `tollgate dispatch` does, keeping the load warnings; hooks declared
    /// in Claude Code's shape see `claude` (the host's `cwd`, transcript and permission mode).
    ///
    /// # Errors
    /// A file cannot be read or parsed, a `--skill` is no skill, or the hooks cannot be built:
    /// the message says which.
    pub fn build(sources: &HookSources, claude: ClaudeContext) -> Result<Self, String> {
        let admin = load_admin(&sources.admin)?;
        let (def, selected) =
            agent_for_run(sources.agent.as_deref(), &sources.hooks, &sources.skills)
                .map_err(|(_, message)| message)?;
        let claude_cwd = claude.cwd.clone();
        let assembly = assemble_for(&def, &selected, &ClassTable::builtin(), &admin, claude)
            .map_err(|e| format!("{}: {e}", def.path))?;
        let warnings = admin
            .iter()
            .flat_map(|f| &f.warnings)
            .chain(&def.warnings)
            .chain(&assembly.warnings)
            .map(ToString::to_string)
            .collect();
        // The host's commands run in its real folder, not a confined workspace.
        let gate = match claude_cwd.to_str() {
            Some(dir) if claude_cwd.is_absolute() => assembly.gate.with_working_dir(dir),
            _ => assembly.gate,
        };
        let gate = Arc::new(gate);
        let background = Background::default();
        let dispatcher = Dispatcher::new(assembly.registry)
            .with_background(background.clone())
            .with_permission_gate(gate.clone());
        Ok(Self {
            dispatcher,
            gate,
            background,
            approval: ApprovalPolicy::resolve(&def.approval, &admin),
            warnings,
        })
    }

    /// Whether the permission gate asks about or refuses `tool_name` called with `args` itself
    /// (the shell analyzer, confirmation settings): then no hook may grant it for a person.
    pub fn gate_objects(&self, tool_name: &str, args: &serde_json::Value) -> bool {
        self.gate.verdict(tool_name, args) != tollgate_protocol::Decision::Allow
    }

    /// Waits until the fire-and-forget hooks that are not advisory (a session-end webhook,
    /// not Claude Code's `async` hooks) ended.
    ///
    /// # Cancel safety
    /// Cancel safe: dropping the future only stops the wait.
    pub async fn settled(&self) {
        self.background.settled().await;
    }

    /// Dispatches `payload` through the hooks and the gate.
    ///
    /// # Cancel safety
    /// Dropping the future stops waiting; hooks still running are killed with their process.
    pub async fn dispatch(&self, payload: Payload) -> DispatchOutcome {
        self.dispatcher.dispatch(Arc::new(payload)).await
    }
}
