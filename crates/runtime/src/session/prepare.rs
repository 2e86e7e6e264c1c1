//! Building a session: its hooks (with the skills it selected), permission gate, model, tools,
//! sandbox and workspace, and the trace lines that say how it went.

use std::sync::atomic::AtomicU32;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use serde_json::json;
use tollgate_core::{Dispatcher, HooksMode};
use tollgate_handlers::http::GuardedEgress;
use tollgate_protocol::PayloadCommon;
use tollgate_sandbox::Sandbox;

use super::assembly::{assemble_for, config_inside};
use super::delegate::call_agent_spec;
use super::detached::{Deferred, DetachedToTrace, StatusToTrace};
use super::protect::protected_writable;
use super::{Services, Session, SessionSetup, claude, unknown_skill, warning_step};
use crate::approval::ApprovalPolicy;
use crate::model::ToolSpec;
use crate::tools::{self, BashTool, CALL_AGENT_TOOL, ShellContainment, Tool, ToolEnv};
use crate::trace::{Step, Trace};

impl<'s> Session<'s> {
    /// Builds the session's registry, model, tools and workspace. On failure the error comes
    /// back with the trace so the caller can record the ending.
    pub(super) async fn prepare(
        services: &'s Services,
        setup: SessionSetup,
    ) -> Result<Self, (Trace, String)> {
        let SessionSetup {
            def,
            model,
            workspace,
            skills,
            trace,
            depth,
            scope,
            cancel,
            soft_deadline,
            cancel_cause,
            resumed,
        } = setup;
        let fail = |trace: &Trace, e: String| (trace.clone(), e);
        for warning in &def.warnings {
            trace.emit(warning_step(
                &warning.file,
                &warning.entry,
                &warning.message,
            ));
        }
        let origin = trace.origin().clone();
        let context = claude::context(services, &workspace, depth, &origin.session_id, &def.name);
        let assembly = assemble_for(&def, &skills, &services.classes, &services.admin, context)
            .map_err(|e| fail(&trace, e))?;
        for name in &assembly.unknown_skills {
            trace.emit(warning_step(
                &def.path,
                "skills",
                &unknown_skill(&def, name),
            ));
        }
        for warning in &assembly.warnings {
            trace.emit(warning_step(
                &warning.file,
                &warning.entry,
                &warning.message,
            ));
        }
        let approval = ApprovalPolicy::resolve(&def.approval, &services.admin);
        for problem in &approval.problems {
            trace.emit(warning_step(&def.path, "approval.approvers", problem));
        }
        let gate = Arc::new(assembly.gate);
        let skills = assembly.skills;
        let registry = assembly.registry;
        let (shell, shell_env) = (assembly.shell, assembly.shell_env);
        assembly
            .status
            .attach(Arc::new(StatusToTrace(trace.clone())));
        let deferred = Deferred::default();
        let detached = DetachedToTrace {
            trace: trace.clone(),
            deferred: deferred.clone(),
        };
        let dispatcher = Dispatcher::new(registry)
            .with_background(services.background.clone())
            .with_hooks_mode(services.hooks_mode)
            .with_detached_observer(Arc::new(detached))
            .with_permission_gate(gate.clone());
        let spec = model.or_else(|| def.model.clone()).ok_or_else(|| {
            fail(
                &trace,
                format!(
                    "agent `{}` names no model (set `model:` or pass --model)",
                    def.name
                ),
            )
        })?;
        let model = spec
            .build(
                def.base_url
                    .as_deref()
                    .map(|url| (url, def.api_key_env.as_deref())),
            )
            .map_err(|e| fail(&trace, e.to_string()))?;
        std::fs::create_dir_all(&workspace).map_err(|e| {
            fail(
                &trace,
                format!("cannot create the workspace {}: {e}", workspace.display()),
            )
        })?;
        // Absolute from here on: `TOLLGATE_WORKSPACE` and traces must not depend on the
        // shell's working directory.
        let workspace = std::fs::canonicalize(&workspace).unwrap_or(workspace);
        if let Some(config) = config_inside(&def, &services.admin, &workspace) {
            return Err(fail(
                &trace,
                format!(
                    "the workspace {} holds this run's configuration ({}): the agent's tools \
                     write the workspace, so the model could rewrite its own hooks; use a \
                     workspace apart from the agent, hook and skill files",
                    workspace.display(),
                    config.display()
                ),
            ));
        }
        if let Some(why) = protected_writable(&services.protected, &workspace, shell.as_ref()) {
            return Err(fail(&trace, why));
        }
        if shell.is_none() && !services.protected.is_empty() {
            trace.emit(warning_step(
                "(admin files)",
                "sandbox",
                "the sandbox is off: the agent's shell tool can read and write the approval \
                 database, so it could approve its own calls",
            ));
        }
        let shell = shell.map(|mut policy| {
            // Hidden where the shell tool could see them (its /tmp is private anyway).
            policy.hidden.extend(
                services
                    .protected
                    .iter()
                    .filter_map(|p| std::path::absolute(p).ok())
                    .filter(|p| !p.starts_with("/tmp")),
            );
            policy
        });
        let shell = match shell {
            Some(policy) => ShellContainment::Sandbox(
                Sandbox::new(policy.writable(&workspace))
                    .with_egress(Arc::new(GuardedEgress::default())),
            ),
            None => ShellContainment::Off,
        };
        let hook_env: Arc<OnceLock<Vec<(String, String)>>> = Arc::default();
        let bash = BashTool::new(shell)
            .with_env(shell_env)
            .with_session_env(Arc::clone(&hook_env));
        let database = def.database.as_ref().map(|d| workspace.join(d));
        if let (Some(path), Some(seed)) = (&database, &def.seed) {
            tools::sql::seed_database(path, seed).await.map_err(|e| {
                fail(
                    &trace,
                    format!("cannot seed the database {}: {e}", path.display()),
                )
            })?;
        }
        let tools: Vec<Box<dyn Tool>> = def
            .tools
            .iter()
            .filter_map(|t| tools::builtin(t, &bash))
            .collect();
        let mut specs: Vec<ToolSpec> = tools.iter().map(|t| t.spec()).collect();
        if def.tools.iter().any(|t| t == CALL_AGENT_TOOL) {
            specs.push(call_agent_spec(&def));
        }
        let common = PayloadCommon {
            session_id: origin.session_id.clone(),
            run_id: origin.run_id.clone(),
            trace_id: origin.run_id.clone(),
            agent_id: def.name.clone(),
            source: Some(services.source.clone()),
            metadata: def.metadata.clone(),
        };
        trace.emit(Step::new(
            if resumed { "session_resumed" } else { "session_start" },
            json!({
                "model": model.describe(),
                "hooks": if services.hooks_mode == HooksMode::Bypass { "bypass" } else { "enforce" },
                "skills": skills,
                "tools": def.tools,
                "workspace": workspace.display().to_string(),
                "hook_count": dispatcher.registry().len(),
                "metadata": def.metadata,
            }),
        ));
        Ok(Self {
            services,
            env: ToolEnv {
                workspace,
                database,
                tool_timeout: Duration::from_secs(def.bash_timeout_seconds),
            },
            def,
            dispatcher,
            model,
            tools,
            specs,
            trace,
            common,
            depth,
            scope,
            turn: AtomicU32::new(0),
            gate,
            approval,
            cancel,
            soft_deadline,
            cancel_cause,
            tasks: AtomicU32::new(0),
            hook_env,
            kept: AtomicU32::new(0),
            ended_by_hook: OnceLock::new(),
            deferred,
        })
    }
}
