//! Agent files (YAML or JSON): what an agent is, which tools and sub-agents it has, and which
//! hook files and skills it loads.
//!
//! ```yaml
//! name: ops                              # required
//! description: Keeps the shop running    # shown to a delegating agent
//! model: scripted:ops.script.jsonl       # or openai:gpt-4o-mini (see ModelSpec)
//! base_url: http://127.0.0.1:11434/v1    # optional OpenAI-compatible endpoint
//! api_key_env: OLLAMA_KEY                # the variable holding that endpoint's key (optional;
//!                                        # the environment's model keys never go to it)
//! system_prompt: You are the operations agent.
//! tools: [bash_code_execute_tool, sql_query, sql_execute, read_file, write_file, call_agent]
//! max_turns: 16                          # model turns per session (default 16)
//! workspace: ./work                      # default: a fresh directory per run
//! database: ops.db                       # SQLite file, relative to the workspace
//! seed: seed.sql                         # creates the database when it does not exist
//! bash_timeout_seconds: 30               # the shell tool's default deadline (1–600)
//! metadata: {org_id: org-7}              # copied into every hook payload's `metadata`
//! hooks: [hooks.yaml]                    # user hook files (source user_config)
//! skills: [skills/deploy/SKILL.md]       # skills a user may select for a run
//! subagents:                             # agents `call_agent` may delegate to
//!   analyst: {file: analyst.yaml, timeout_seconds: 60}
//! approval:                              # asks: wait 30 min, then deny; who may decide
//!   timeout_seconds: 1800                #   (default: the OS user running the agent)
//!   approvers: [ops-lead, {name: dba, tools: ["sql_*"]}]
//! sandbox:                               # the shell tool's OS sandbox (default: network off,
//!   network: true                        #   only the workspace and /tmp writable); true: HTTP(S)
//!                                        #   to public addresses through a guarded proxy
//!   writable: [~/.cache/pip]
//! model_config_json:                     # the agent config (docs/config.md)
//!   hooks:
//!     class_hooks: [{class: ReadOnlyGuard, params: {readonly_orgs: [org-7]}}]
//!     require_confirmation_for_all: false
//!     confirmation_tools: ["sql_execute"]
//! ```
//!
//! Paths are relative to the agent file (the database to the workspace). The file is parsed
//! strictly: an unknown key, a wrong type, an unknown tool or an unreadable hook file is an
//! error, because an agent whose hooks cannot be built must not run. Duplicate keys are
//! refused (also in JSON). Bad entries *inside* hook files and skills are skipped with
//! warnings, as everywhere else.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{Map, Value};
use tollgate_config::{AgentConfig, ApprovalSettings, HookFile, Skill, SkillSet, Trust, Warning};

use crate::model::ModelSpec;

mod shape;

use crate::tools::BUILTIN_TOOLS;
pub use shape::{ConfigShape, config_shape, config_shape_of};
use shape::{admin_only, model_config_keys, recognised, without_values};

/// Variables holding the environment's model keys, which an agent file's `api_key_env` may
/// not name.
const GLOBAL_MODEL_KEYS: [&str; 2] = ["OPENAI_API_KEY", "TOLLGATE_MODEL_API_KEY"];

/// [`AgentDef::path`] of [`AgentDef::default_agent`].
pub const DEFAULT_AGENT_PATH: &str = "(default agent)";

/// Default model turns per session.
pub const DEFAULT_MAX_TURNS: u32 = 16;
/// Default sub-agent timeout.
pub const DEFAULT_SUBAGENT_TIMEOUT_SECS: u64 = 300;

/// Why an agent file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// The file cannot be read.
    #[error("cannot read the agent file {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not a valid agent definition.
    #[error("agent file {path}: {message}")]
    Invalid {
        /// The file.
        path: String,
        /// What is wrong, naming the key.
        message: String,
    },
}

/// A sub-agent the agent may delegate to.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SubagentRef {
    /// Its agent file, relative to this one.
    pub file: String,
    /// Soft deadline in seconds; at three times this it is force-stopped.
    #[serde(default = "default_subagent_timeout")]
    pub timeout_seconds: u64,
}

fn default_subagent_timeout() -> u64 {
    DEFAULT_SUBAGENT_TIMEOUT_SECS
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct AgentFileWire {
    /// Without it (an agent config as stored in a database row), the file's stem.
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    base_url: Option<String>,
    #[serde(default)]
    api_key_env: Option<String>,
    #[serde(default)]
    system_prompt: Option<String>,
    #[serde(default)]
    tools: Vec<String>,
    #[serde(default)]
    max_turns: Option<u32>,
    #[serde(default)]
    workspace: Option<String>,
    #[serde(default)]
    database: Option<String>,
    #[serde(default)]
    seed: Option<String>,
    #[serde(default)]
    bash_timeout_seconds: Option<u64>,
    #[serde(default)]
    metadata: Map<String, Value>,
    #[serde(default)]
    hooks: Vec<String>,
    #[serde(default)]
    skills: Vec<String>,
    #[serde(default)]
    subagents: BTreeMap<String, SubagentRef>,
    #[serde(default, deserialize_with = "shell_sandbox")]
    sandbox: ShellSandbox,
    #[serde(default)]
    approval: Option<Value>,
    /// Read by [`AgentConfig::parse`] from the same document; named here so the strict
    /// shape accepts it.
    #[serde(default)]
    #[expect(dead_code, reason = "parsed by AgentConfig::parse")]
    model_config_json: Value,
}

/// `sandbox:` of an agent file: what the shell tool's OS sandbox adds to its defaults (the
/// workspace and a private `/tmp` writable, no network). Admin files may add more, or turn the
/// sandbox off.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShellSandbox {
    /// HTTP(S) for the shell tool, through the sandbox's egress proxy, which the SSRF guard of
    /// http hooks polices (public addresses only). Nothing else is reachable either way.
    #[serde(default)]
    pub network: bool,
    /// More writable paths: `~/…` is under `$HOME`, relative paths are relative to the agent
    /// file (resolved by [`AgentDef::load`]).
    #[serde(default)]
    pub writable: Vec<PathBuf>,
}

/// `sandbox:` of an agent file, with a word for `sandbox: off`, which only admin files may say.
fn shell_sandbox<'de, D: serde::Deserializer<'de>>(d: D) -> Result<ShellSandbox, D::Error> {
    use serde::de::Error;
    match Value::deserialize(d)? {
        Value::String(text) => Err(D::Error::custom(format!(
            "`sandbox: {}` is not for agent files: only an admin file can turn the sandbox \
             off; an agent file may set `network` and `writable`",
            if text == "off" { "off" } else { "<text>" }
        ))),
        value => ShellSandbox::deserialize(value).map_err(D::Error::custom),
    }
}

/// A loaded agent file.
#[derive(Debug, Clone)]
pub struct AgentDef {
    /// The file, as given.
    pub path: String,
    /// The directory relative paths start from.
    pub dir: PathBuf,
    /// `name`.
    pub name: String,
    /// `description`.
    pub description: String,
    /// `model`, parsed; `None` when the file names none (the run must supply one).
    pub model: Option<ModelSpec>,
    /// `base_url`.
    pub base_url: Option<String>,
    /// `api_key_env`: the variable holding `base_url`'s key.
    pub api_key_env: Option<String>,
    /// `system_prompt`.
    pub system_prompt: String,
    /// `tools`, in order, validated.
    pub tools: Vec<String>,
    /// `max_turns`.
    pub max_turns: u32,
    /// `workspace`, resolved.
    pub workspace: Option<PathBuf>,
    /// `database` (relative to the workspace unless absolute).
    pub database: Option<PathBuf>,
    /// The contents of `seed`.
    pub seed: Option<String>,
    /// `bash_timeout_seconds`.
    pub bash_timeout_seconds: u64,
    /// `metadata`.
    pub metadata: Map<String, Value>,
    /// The hook settings of `model_config_json`.
    pub config: AgentConfig,
    /// `hooks`, loaded as user hook files.
    pub hook_files: Vec<HookFile>,
    /// `skills`, loaded.
    pub skills: SkillSet,
    /// What was skipped while loading hook files and skills.
    pub warnings: Vec<Warning>,
    /// `subagents`.
    pub subagents: BTreeMap<String, SubagentRef>,
    /// `sandbox`, its paths resolved.
    pub sandbox: ShellSandbox,
    /// `approval`: how long asks wait and who may decide them (admin files' keys win).
    pub approval: ApprovalSettings,
}

impl AgentDef {
    /// Loads an agent file and the hook files and skills it names.
    ///
    /// # Errors
    /// [`AgentError`] naming the file and the key.
    pub fn load(path: &Path) -> Result<Self, AgentError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| AgentError::Read {
            path: file.clone(),
            source,
        })?;
        let invalid = |message: String| AgentError::Invalid {
            path: file.clone(),
            message,
        };
        // The YAML reader also reads JSON, and refuses duplicate keys in both.
        let value = tollgate_config::yaml::parse(&text).map_err(&invalid)?;
        recognised(&value).map_err(&invalid)?;
        admin_only(&value).map_err(&invalid)?;
        let wire: AgentFileWire = serde_path_to_error::deserialize(value.clone()).map_err(|e| {
            let at = e.path().to_string();
            let message = without_values(&e.inner().to_string());
            invalid(if at == "." {
                message
            } else {
                format!("{at}: {message}")
            })
        })?;
        let mut warnings = model_config_keys(&value, &file).map_err(&invalid)?;
        let config =
            AgentConfig::parse(path, &value.to_string()).map_err(|e| invalid(e.to_string()))?;
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let name = wire.name.clone().unwrap_or_else(|| {
            path.file_stem()
                .map_or_else(|| "agent".to_owned(), |s| s.to_string_lossy().into_owned())
        });
        if name.trim().is_empty() {
            return Err(invalid("name: must not be empty".into()));
        }
        for (i, tool) in wire.tools.iter().enumerate() {
            if !BUILTIN_TOOLS.contains(&tool.as_str()) {
                return Err(invalid(format!(
                    "tools[{i}]: unknown tool `{tool}` (known: {})",
                    BUILTIN_TOOLS.join(", ")
                )));
            }
        }
        let model = wire
            .model
            .as_deref()
            .map(|m| ModelSpec::parse(m, &dir))
            .transpose()
            .map_err(|e| invalid(format!("model: {e}")))?;
        if let Some(name) = wire.api_key_env.as_deref()
            && GLOBAL_MODEL_KEYS.contains(&name)
        {
            // The environment's model keys go only to the environment's endpoints; an agent
            // file names a variable of its own for its `base_url`.
            return Err(invalid(format!(
                "api_key_env: `{name}` is the environment's model key; name a variable of this endpoint's own"
            )));
        }
        let max_turns = wire.max_turns.unwrap_or(DEFAULT_MAX_TURNS);
        if max_turns == 0 {
            return Err(invalid("max_turns: must be at least 1".into()));
        }
        let bash_timeout_seconds = wire.bash_timeout_seconds.unwrap_or(30);
        if !(1..=600).contains(&bash_timeout_seconds) {
            return Err(invalid(
                "bash_timeout_seconds: must be from 1 to 600".into(),
            ));
        }
        for (name, sub) in &wire.subagents {
            if !(1..=86_400).contains(&sub.timeout_seconds) {
                return Err(invalid(format!(
                    "subagents.{name}.timeout_seconds: must be from 1 to 86400"
                )));
            }
        }
        let approval = match &wire.approval {
            Some(value) => {
                // Strict, as everything in an agent file: a bad entry must not leave the
                // agent with approvers nobody meant.
                let mut problems = Vec::new();
                let settings = tollgate_config::approval::parse(value, &mut |entry, message| {
                    problems.push(format!("{entry}: {message}"));
                });
                if let Some(first) = problems.into_iter().next() {
                    return Err(invalid(
                        first.replace("; skipped", "").replace("; ignored", ""),
                    ));
                }
                settings
            }
            None => ApprovalSettings::default(),
        };
        let seed = wire
            .seed
            .as_deref()
            .map(|s| {
                std::fs::read_to_string(dir.join(s)).map_err(|e| {
                    invalid(format!("seed: cannot read {}: {e}", dir.join(s).display()))
                })
            })
            .transpose()?;
        let mut hook_files = Vec::new();
        for (i, hooks) in wire.hooks.iter().enumerate() {
            if config_shape_of(&dir.join(hooks)) == ConfigShape::Agent {
                return Err(invalid(format!(
                    "hooks[{i}]: {hooks} is an agent file, not a hook file (sub-agents go under \
                     `subagents`)"
                )));
            }
            let loaded = HookFile::load(&dir.join(hooks), Trust::User)
                .map_err(|e| invalid(format!("hooks[{i}]: {e}")))?;
            warnings.extend(loaded.warnings.iter().cloned());
            hook_files.push(loaded);
        }
        let mut skills = Vec::new();
        for (i, skill) in wire.skills.iter().enumerate() {
            // A skill is its SKILL.md, or the folder holding one.
            let mut file = dir.join(skill);
            if file.is_dir() {
                file.push("SKILL.md");
            }
            let loaded = Skill::load(&file).map_err(|e| invalid(format!("skills[{i}]: {e}")))?;
            warnings.extend(loaded.warnings.iter().cloned());
            skills.push(loaded);
        }
        let skills = SkillSet::new(skills);
        for (name, paths) in skills.duplicates() {
            warnings.push(Warning::new(
                paths[0],
                "name",
                format!(
                    "skills {} share the name `{name}`; selecting it selects all",
                    paths.join(", ")
                ),
            ));
        }
        Ok(Self {
            path: file,
            name,
            description: wire.description.unwrap_or_default(),
            model,
            base_url: wire.base_url,
            api_key_env: wire.api_key_env,
            system_prompt: wire.system_prompt.unwrap_or_default(),
            tools: wire.tools,
            max_turns,
            workspace: wire.workspace.map(|w| dir.join(w)),
            database: wire.database.map(PathBuf::from),
            seed,
            bash_timeout_seconds,
            metadata: wire.metadata,
            config,
            hook_files,
            skills,
            warnings,
            subagents: wire.subagents,
            sandbox: ShellSandbox {
                network: wire.sandbox.network,
                writable: wire
                    .sandbox
                    .writable
                    .iter()
                    .map(|p| resolve_path(p, &dir))
                    .collect(),
            },
            approval,
            dir,
        })
    }

    /// The agent of a run that names no agent file (`tollgate run --hooks FILE`), so that a
    /// hook file can be tried in a real run in one command:
    ///
    /// ```yaml
    /// name: default
    /// model: direct          # the prompt is the tool call (see DirectModel)
    /// tools: [bash_code_execute_tool, sql_query, sql_execute, read_file, write_file]
    /// database: agent.db     # in the run's workspace, created empty
    /// max_turns: 16
    /// bash_timeout_seconds: 30
    /// ```
    ///
    /// It has no hooks, skills or sub-agents of its own: add them with
    /// [`AgentDef::add_hook_file`] and [`AgentDef::add_skill`]. Relative paths start from the
    /// current directory.
    pub fn default_agent() -> Self {
        Self {
            path: DEFAULT_AGENT_PATH.into(),
            dir: std::env::current_dir().unwrap_or_default(),
            name: "default".into(),
            description: "tollgate's default agent (no agent file)".into(),
            model: Some(ModelSpec::Direct),
            base_url: None,
            api_key_env: None,
            system_prompt: "You are a helpful assistant. Use the tools to do what the user asks."
                .into(),
            tools: BUILTIN_TOOLS
                .iter()
                .filter(|t| **t != crate::tools::CALL_AGENT_TOOL)
                .map(|t| (*t).to_owned())
                .collect(),
            max_turns: DEFAULT_MAX_TURNS,
            workspace: None,
            database: Some(PathBuf::from("agent.db")),
            // An empty seed creates the database on first use, so `sql_query` finds one.
            seed: Some(String::new()),
            bash_timeout_seconds: 30,
            metadata: Map::new(),
            config: AgentConfig::default(),
            hook_files: Vec::new(),
            skills: SkillSet::default(),
            warnings: Vec::new(),
            subagents: BTreeMap::new(),
            sandbox: ShellSandbox::default(),
            approval: ApprovalSettings::default(),
        }
    }

    /// Adds a user hook file (source `user_config`) after the agent's own, with its warnings.
    pub fn add_hook_file(&mut self, file: HookFile) {
        self.warnings.extend(file.warnings.iter().cloned());
        self.hook_files.push(file);
    }

    /// Adds a skill to the agent's set (a run still selects it by name to get its hooks), with
    /// its warnings; returns its name.
    pub fn add_skill(&mut self, skill: Skill) -> String {
        self.warnings.extend(skill.warnings.iter().cloned());
        let name = skill.name.clone();
        self.skills = std::mem::take(&mut self.skills).with(skill);
        name
    }

    /// The file of sub-agent `name`, resolved.
    pub fn subagent_file(&self, name: &str) -> Option<PathBuf> {
        self.subagents.get(name).map(|s| self.dir.join(&s.file))
    }
}

/// `~` and `~/…` are under `$HOME`; other relative paths are relative to `dir`.
fn resolve_path(path: &Path, dir: &Path) -> PathBuf {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    match (path.strip_prefix("~"), home) {
        (Ok(rest), Some(home)) => home.join(rest),
        _ if path.is_absolute() => path.to_owned(),
        _ => std::path::absolute(dir.join(path)).unwrap_or_else(|_| dir.join(path)),
    }
}

#[cfg(test)]
mod tests;
