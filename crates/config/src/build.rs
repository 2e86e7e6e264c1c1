//! From specs to a [`RegistryBuilder`]: construct each hook; in files a hook that cannot be
//! built is skipped with a warning, in agent config it is an error.

use std::sync::Arc;

use ipnet::IpNet;
use serde::Serialize;
use serde_json::Value;
use tollgate_core::{
    BoxFuture, Hook, HookContext, HookError, HookOptions, RegistryBuilder, ToolMatcher,
};
use tollgate_handlers::claude::{ClaudeCode, ClaudeCodeHook, Matcher, Rule, StatusBoard};
use tollgate_handlers::llm::Endpoint;
use tollgate_handlers::{ClassTable, CommandHook, HttpHook, LlmHook};
use tollgate_protocol::claude_code::ClaudeContext;
use tollgate_protocol::{Event, FailureMode, HookKind, HookSource, Outcome};

use crate::agent::AgentConfig;
use crate::error::{ConfigError, Result};
use crate::hook_file::{HookFile, Trust};
use crate::sandbox::SandboxSettings;
use crate::spec::{ClaudeSpec, Dialect, HookSpec, SpecKind};
use crate::warning::Warning;

mod containment;

use containment::{containment, containment_summary};

/// Deployment policy from admin hook files.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Policy {
    /// Networks http hooks may reach although the SSRF guard refuses them by default.
    pub allow_cidrs: Vec<IpNet>,
    /// Standalone mode: external hooks without an explicit `failure_mode` fail closed.
    pub standalone: bool,
    /// How the OS sandbox of command hooks and the shell tool is widened or turned off.
    pub sandbox: SandboxSettings,
}

impl Policy {
    /// The union of the admin files' allow-lists; standalone when any admin file says so. User
    /// files contribute nothing.
    pub fn from_admin(files: &[HookFile]) -> Self {
        let admin = files.iter().filter(|f| f.trust == Trust::Admin);
        let mut policy = Self::default();
        for file in admin {
            policy.allow_cidrs.extend(file.allow_cidrs.iter().copied());
            policy.standalone |= file.standalone;
            policy.sandbox.merge(&file.sandbox);
        }
        policy
    }
}

/// One registered hook, as `tollgate check` shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ResolvedHook {
    /// Canonical event name.
    pub event: String,
    /// The hook's name.
    pub name: String,
    /// `command`, `http`, `llm` or `class`.
    pub kind: &'static str,
    /// `skill`, `user_config`, `admin_config`, `agent_config`, ….
    pub source: &'static str,
    /// `tools` globs; `None` matches every call.
    pub tools: Option<Vec<String>>,
    /// Lower runs first.
    pub priority: i32,
    /// Deadline in seconds.
    pub timeout_sec: u64,
    /// `fail_open` or `fail_closed`, as resolved.
    pub failure_mode: &'static str,
    /// Detached on notification events.
    pub fire_and_forget: bool,
    /// The shell line as it runs, for command hooks: relative program paths are taken from the
    /// folder of the declaring file (`CommandHook::line`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// How a command hook is contained: `off`, or the sandbox's network and the paths it may
    /// write besides its scratch directory and `/tmp`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<Value>,
    /// `claude_code` for a hook declared in Claude Code's shape (it matches Claude Code's tool
    /// names with `matcher` and `if`, and receives Claude Code's payload); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dialect: Option<&'static str>,
    /// A Claude Code hook's `matcher` (`None`: everything).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matcher: Option<String>,
    /// A Claude Code hook's `if` rule.
    #[serde(rename = "if", skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// A Claude Code hook's `statusMessage`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
}

type EnvLookup = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// Builds one run's [`RegistryBuilder`] from specs, agent config and a class table.
pub struct Assembler<'a> {
    classes: &'a ClassTable,
    policy: Policy,
    env: EnvLookup,
    claude: Arc<ClaudeContext>,
    status: StatusBoard,
    builder: RegistryBuilder,
    resolved: Vec<ResolvedHook>,
    warnings: Vec<Warning>,
}

/// What an [`Assembler`] produced.
pub struct Assembled {
    /// The hooks, ready to [`build`](RegistryBuilder::build) (more may be registered first).
    pub builder: RegistryBuilder,
    /// What was registered, in registration order.
    pub hooks: Vec<ResolvedHook>,
    /// Hooks skipped because they could not be built.
    pub warnings: Vec<Warning>,
    /// Where the `statusMessage`s of the hooks declared in Claude Code's shape go when they
    /// start: attach a sink to show them.
    pub status: StatusBoard,
}

impl<'a> Assembler<'a> {
    /// An assembler resolving `class` entries through `classes`, applying `policy`. llm hooks
    /// read their endpoint from the process environment unless [`Assembler::llm_env`] says
    /// otherwise.
    pub fn new(classes: &'a ClassTable, policy: Policy) -> Self {
        Self {
            classes,
            policy,
            env: Arc::new(|name| std::env::var(name).ok()),
            claude: Arc::new(ClaudeContext::default()),
            status: StatusBoard::default(),
            builder: RegistryBuilder::new(),
            resolved: Vec::new(),
            warnings: Vec::new(),
        }
    }

    /// Where llm hooks read `TOLLGATE_LLM_*` / `OPENAI_*` (see [`Endpoint::resolve`]).
    #[must_use]
    pub fn llm_env(mut self, env: impl Fn(&str) -> Option<String> + Send + Sync + 'static) -> Self {
        self.env = Arc::new(env);
        self
    }

    /// The session hooks declared in Claude Code's shape see: its workspace (`cwd`,
    /// `CLAUDE_PROJECT_DIR`), transcript, permission mode and sub-agent. Default: the current
    /// directory, no transcript, `default`.
    #[must_use]
    pub fn claude_context(mut self, context: ClaudeContext) -> Self {
        self.claude = Arc::new(context);
        self
    }

    /// Registers the hooks of file specs (SKILL.md, hook files). A hook that cannot be built
    /// (refused URL, unset secret, no llm model, unknown class or bad params) is reported with a
    /// warning; the others load. A `fail_open` one is skipped. A `fail_closed` one stays
    /// registered as a hook that fails on every trigger, so a broken gate denies instead of
    /// silently disappearing.
    ///
    /// Command hooks run their relative paths from the folder of their file
    /// ([`CommandHook::declared_in`]); one the analyzer refuses, or whose programs are missing
    /// ([`CommandHook::missing_programs`]: a script that does not exist, `jq` not on the
    /// hook's `PATH`), is registered and reported with a warning naming the program; it fails
    /// on every trigger (a `fail_closed` one denies) until the program is there.
    pub fn add_specs(&mut self, specs: &[HookSpec]) -> &mut Self {
        for spec in specs {
            let Err(message) = self.add_spec(spec) else {
                continue;
            };
            let mode = spec.resolved_failure_mode(self.policy.standalone);
            let consequence = match mode {
                FailureMode::FailOpen => "the hook is skipped",
                FailureMode::FailClosed => {
                    self.register_unbuildable(spec, &message);
                    "the hook is fail_closed, so it stays registered and denies on every trigger"
                }
            };
            self.warnings.push(Warning::new(
                &spec.file,
                &spec.entry,
                format!("{message}; {consequence}"),
            ));
        }
        self
    }

    fn register_unbuildable(&mut self, spec: &HookSpec, reason: &str) {
        let mut hook: Arc<dyn Hook> = Arc::new(Unbuildable {
            name: spec.name.clone(),
            kind: spec.kind.hook_kind(),
            reason: reason.to_owned(),
        });
        // A Claude Code hook that cannot be built still runs only where it would have.
        if let Dialect::ClaudeCode(claude) = &spec.dialect
            && let Ok(dialect) = self.claude_code(claude)
        {
            hook = Arc::new(ClaudeCodeHook::new(hook, dialect));
        }
        let tools = spec.tools.as_ref().and_then(|t| ToolMatcher::new(t).ok());
        let options = HookOptions {
            priority: Some(spec.priority),
            tools,
            timeout: spec.timeout,
            failure_mode: FailureMode::FailClosed,
            source: spec.source,
            fire_and_forget: false,
            advisory: false,
            awaited: false,
        };
        self.register(spec.event.clone(), hook, options, None, claude_of(spec));
    }

    /// Registers an agent's class hooks on the events each class declares.
    ///
    /// # Errors
    /// [`ConfigError::Class`] naming the class when one is unknown or its params are bad;
    /// [`ConfigError::Invalid`] when a class has a hook but no events, or bad default `tools`.
    /// The agent must not run then.
    pub fn add_agent(&mut self, agent: &AgentConfig) -> Result<&mut Self> {
        for spec in &agent.class_hooks {
            let invalid = |message: String| ConfigError::Invalid {
                path: agent.path.clone(),
                entry: spec.entry.clone(),
                message,
            };
            let instance = self
                .classes
                .instantiate_in(&spec.class, &spec.params, &agent.dir)
                .map_err(|source| ConfigError::Class {
                    path: agent.path.clone(),
                    entry: spec.entry.clone(),
                    source,
                })?;
            if let Some(observer) = instance.observer {
                self.builder.observe(observer);
            }
            let Some(hook) = instance.hook else { continue };
            if instance.events.is_empty() {
                return Err(invalid(format!(
                    "class `{}` declares no events",
                    spec.class
                )));
            }
            let tools = instance.tools.map(ToolMatcher::new).transpose();
            let tools = tools.map_err(|e| invalid(e.to_string()))?;
            for event in instance.events {
                let mut options = HookOptions::default()
                    .priority(spec.priority)
                    .source(HookSource::AgentConfig);
                options.tools = tools.clone();
                self.register(event, Arc::clone(&hook), options, None, None);
            }
        }
        Ok(self)
    }

    /// The registry builder, what was registered, and the warnings.
    pub fn finish(self) -> Assembled {
        Assembled {
            builder: self.builder,
            hooks: self.resolved,
            warnings: self.warnings,
            status: self.status,
        }
    }

    fn add_spec(&mut self, spec: &HookSpec) -> std::result::Result<(), String> {
        if let Some(why) = &spec.unreadable {
            return Err(why.clone());
        }
        let mut tools = spec.tools.clone();
        let mut contained = None;
        let hook: Arc<dyn Hook> = match &spec.kind {
            SpecKind::Command { line } => {
                let (containment, env) = containment(&self.policy.sandbox, spec);
                let summary = containment_summary(&containment);
                // A proxied hook reaches what an http hook of its source could.
                let allow: &[IpNet] = if spec.source.is_trusted() {
                    &self.policy.allow_cidrs
                } else {
                    &[]
                };
                let hook = match &spec.dialect {
                    Dialect::ClaudeCode(claude) => CommandHook::claude_code(
                        &spec.name,
                        line,
                        spec.source,
                        &spec.dir,
                        self.claude_code(claude)?,
                    ),
                    _ => CommandHook::declared_in(&spec.name, line, spec.source, &spec.dir),
                };
                let hook = hook
                    .with_containment(containment)
                    .with_env(env)
                    .with_egress_allow(allow);
                contained = Some((hook.line().to_owned(), summary));
                self.command_warnings(spec, &hook);
                Arc::new(hook)
            }
            SpecKind::Http { url, secret } => Arc::new(self.http(spec, url, secret.as_deref())?),
            SpecKind::Llm {
                condition,
                depth,
                endpoint,
            } => {
                let overrides = endpoint
                    .as_ref()
                    .filter(|_| spec.source == HookSource::AdminConfig);
                let endpoint =
                    Endpoint::resolve(|n| (self.env)(n), overrides).map_err(|e| e.to_string())?;
                let judge: Arc<dyn Hook> = Arc::new(
                    LlmHook::with_endpoint(&spec.name, condition, *depth, endpoint)
                        .map_err(|e| e.to_string())?,
                );
                match &spec.dialect {
                    Dialect::ClaudeCode(claude) => {
                        Arc::new(ClaudeCodeHook::new(judge, self.claude_code(claude)?))
                    }
                    _ => judge,
                }
            }
            SpecKind::Class { class, params } => {
                let instance = self
                    .classes
                    .instantiate_in(class, params, &spec.dir)
                    .map_err(|e| e.to_string())?;
                if !instance.events.is_empty() && !instance.events.contains(&spec.event) {
                    return Err(format!(
                        "class `{class}` does not handle `{}` (it handles {})",
                        spec.event,
                        instance
                            .events
                            .iter()
                            .map(Event::to_string)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ));
                }
                if let Some(observer) = instance.observer {
                    self.builder.observe(observer);
                }
                tools = tools.or(instance.tools);
                match instance.hook {
                    Some(hook) => hook,
                    None => return Ok(()),
                }
            }
        };
        let matcher = tools.as_ref().map(ToolMatcher::new).transpose();
        let options = HookOptions {
            priority: Some(spec.priority),
            tools: matcher.map_err(|e| e.to_string())?,
            timeout: spec.timeout,
            failure_mode: spec.resolved_failure_mode(self.policy.standalone),
            source: spec.source,
            fire_and_forget: spec.fire_and_forget,
            // Claude Code's `async` hooks: their answers never decide, so nothing waits for them.
            advisory: matches!(&spec.dialect, Dialect::ClaudeCode(c) if c.record_only),
            // `asyncRewake`: a block may wake the session, which waits for it before it ends.
            awaited: matches!(&spec.dialect,
                Dialect::ClaudeCode(c) if c.rewake && c.event_name != "SessionEnd"),
        };
        self.register(
            spec.event.clone(),
            hook,
            options,
            contained,
            claude_of(spec),
        );
        Ok(())
    }

    /// A Claude Code hook's dialect in this assembler's session.
    fn claude_code(&self, spec: &ClaudeSpec) -> std::result::Result<ClaudeCode, String> {
        let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
        let mut claude = ClaudeCode::new(&spec.event_name, Arc::clone(&self.claude))
            .matcher(Matcher::parse(spec.matcher.as_deref())?)
            .once(spec.once)
            .record_only(spec.record_only)
            .rewake(spec.rewake);
        if let Some(message) = &spec.status_message {
            claude = claude.status_message(message, self.status.clone());
        }
        if let Some(rule) = &spec.rule {
            claude = claude.rule(Rule::parse(rule, &self.claude.cwd, home.as_deref())?);
        }
        if let Some(root) = &spec.plugin_root {
            claude = claude.plugin_root(root);
        }
        if let Some(dir) = &spec.skill_dir {
            claude = claude.skill_dir(dir);
        }
        Ok(claude)
    }

    /// Warns about a command hook the analyzer refused, or whose programs are missing: both
    /// stay registered and fail on every trigger (resolved by their failure mode).
    fn command_warnings(&mut self, spec: &HookSpec, hook: &CommandHook) {
        let warn = |message: String| Warning::new(&spec.file, &spec.entry, message);
        let mode = spec.resolved_failure_mode(self.policy.standalone);
        if let Some(refusal) = hook.refusal() {
            let consequence = match mode {
                FailureMode::FailClosed => {
                    "the hook stays registered and fails as `refused` on every trigger; it is \
                     fail_closed, so it denies what it matches"
                }
                FailureMode::FailOpen => {
                    "the hook stays registered and fails as `refused` on every trigger; it is \
                     fail_open, so it lets through what it matches and guards nothing"
                }
            };
            // Inline code is never vetted; the same code in a file the hook runs is a script.
            let hint = match &spec.dialect {
                _ if !refusal.contains("inline-code") => "",
                Dialect::ClaudeCode(_) => {
                    "; move the code into a script file and run that, for example \
                     `python3 \"$CLAUDE_PROJECT_DIR\"/.claude/hooks/check.py`"
                }
                _ => "; move the code into a script file and run that, for example `./check.py`",
            };
            self.warnings
                .push(warn(format!("{refusal}; {consequence}{hint}")));
            return;
        }
        let consequence = match mode {
            FailureMode::FailClosed => {
                "the hook is fail_closed, so it stays registered and denies on every trigger \
                 until the program is there"
            }
            FailureMode::FailOpen => {
                "the hook stays registered and fails (fail_open: skipped, with a warning) on \
                 every trigger until the program is there"
            }
        };
        for missing in hook.missing_programs() {
            self.warnings
                .push(warn(format!("{missing}; {consequence}")));
        }
    }

    fn http(
        &self,
        spec: &HookSpec,
        url: &str,
        secret: Option<&str>,
    ) -> std::result::Result<HttpHook, String> {
        // The admin allow-list opens networks for trusted hooks only: an admin reaching its own
        // receiver on loopback must not open loopback to skills and user files.
        let allow: &[IpNet] = if spec.source.is_trusted() {
            &self.policy.allow_cidrs
        } else {
            &[]
        };
        let mut builder = HttpHook::builder(&spec.name, url).allow_cidrs(allow);
        if let Some(secret) = secret {
            builder = builder.secret_env(secret);
        }
        if let Dialect::ClaudeCode(claude) = &spec.dialect {
            // The runtime's environment reaches no external hook (docs/command-hooks.md): a
            // skill, plugin or user file must not send `$OPENAI_API_KEY` to its own URL.
            if !spec.source.is_trusted() && !claude.allowed_env.is_empty() {
                return Err(format!(
                    "`allowedEnvVars` ({}) would send the runtime's environment to the hook's \
                     URL; only admin files may (source `{}`)",
                    claude.allowed_env.join(", "),
                    spec.source.as_str()
                ));
            }
            for (name, value) in &claude.headers {
                let value = interpolate(value, &claude.allowed_env, &*self.env);
                builder = builder.header(name, value);
            }
            builder = builder.claude_code(self.claude_code(claude)?);
        }
        builder.build().map_err(|e| e.to_string())
    }

    fn register(
        &mut self,
        event: Event,
        hook: Arc<dyn Hook>,
        options: HookOptions,
        command: Option<(String, Value)>,
        claude: Option<&ClaudeSpec>,
    ) {
        let (command, sandbox) = command.unzip();
        self.resolved.push(ResolvedHook {
            event: event.to_string(),
            name: hook.name().to_owned(),
            kind: hook.kind().as_str(),
            source: options.source.as_str(),
            tools: options.tools.as_ref().map(|t| t.patterns().to_vec()),
            priority: options.priority.unwrap_or_else(|| hook.priority()),
            timeout_sec: options.timeout.duration().as_secs(),
            failure_mode: failure_mode_str(options.failure_mode),
            fire_and_forget: options.fire_and_forget,
            sandbox,
            command,
            dialect: claude.map(|_| "claude_code"),
            matcher: claude.and_then(|c| c.matcher.clone()),
            rule: claude.and_then(|c| c.rule.clone()),
            status_message: claude.and_then(|c| c.status_message.clone()),
        });
        self.builder.register_shared(event, hook, options);
    }
}

fn claude_of(spec: &HookSpec) -> Option<&ClaudeSpec> {
    match &spec.dialect {
        Dialect::ClaudeCode(claude) => Some(claude),
        _ => None,
    }
}

/// `$NAME` and `${NAME}` in a Claude Code http hook's header value: the variable's value when
/// `allowed` lists it, else nothing (as Claude Code does; a header never reads a variable it
/// was not given).
fn interpolate(
    value: &str,
    allowed: &[String],
    env: &(dyn Fn(&str) -> Option<String> + Send + Sync),
) -> String {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let (name, tail) = match after.strip_prefix('{').and_then(|a| a.split_once('}')) {
            Some((name, tail)) => (name, tail),
            None => {
                let end = after
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(after.len());
                (&after[..end], &after[end..])
            }
        };
        if name.is_empty() {
            out.push('$');
            rest = after;
            continue;
        }
        if allowed.iter().any(|a| a == name) {
            out.push_str(&env(name).unwrap_or_default());
        }
        rest = tail;
    }
    out.push_str(rest);
    out
}

/// A fail-closed hook whose config could not be built: it fails on every trigger.
struct Unbuildable {
    name: String,
    kind: HookKind,
    reason: String,
}

impl Hook for Unbuildable {
    fn name(&self) -> &str {
        &self.name
    }

    fn kind(&self) -> HookKind {
        self.kind
    }

    fn execute(&self, _ctx: HookContext) -> BoxFuture<'_, std::result::Result<Outcome, HookError>> {
        let message = format!("the hook could not be built: {}", self.reason);
        Box::pin(async move { Err(HookError::msg(message)) })
    }
}

fn failure_mode_str(mode: FailureMode) -> &'static str {
    mode.as_str()
}
