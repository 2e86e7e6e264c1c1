//! Why a configuration file or an agent's hooks cannot be loaded.

use tollgate_handlers::ClassError;

/// Why a file cannot be loaded at all, or why an agent's registry cannot be built. A bad
/// *entry* in a SKILL.md or hook file is not an error: it becomes a [`Warning`](crate::Warning)
/// and its siblings load.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file cannot be read.
    #[error("cannot read `{path}`: {source}")]
    Read {
        /// The file.
        path: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A SKILL.md frontmatter is opened by `---` but never closed.
    #[error("{path}: frontmatter opened by `---` on line 1 is never closed by a `---` line")]
    UnclosedFrontmatter {
        /// The file.
        path: String,
    },
    /// The YAML does not parse, has a duplicate key, or exceeds the alias/size budget.
    #[error("{path}: invalid YAML: {message}")]
    Yaml {
        /// The file.
        path: String,
        /// The parser's message.
        message: String,
    },
    /// The agent config JSON does not parse.
    #[error("{path}: invalid JSON: {message}")]
    Json {
        /// The file.
        path: String,
        /// The parser's message.
        message: String,
    },
    /// The file's shape is wrong as a whole (for example a top level that is not a mapping), or
    /// an agent-config entry is invalid (agent config is strict: the agent must not run).
    #[error("{path}: {entry}: {message}")]
    Invalid {
        /// The file.
        path: String,
        /// The entry path, like `model_config_json.hooks.class_hooks[0].priority`.
        entry: String,
        /// What is wrong.
        message: String,
    },
    /// An agent-config class hook cannot be instantiated (unknown class, bad params).
    #[error("{path}: {entry}: {source}")]
    Class {
        /// The file.
        path: String,
        /// The entry path, like `model_config_json.hooks.class_hooks[0]`.
        entry: String,
        /// The class table's error; it names the class.
        #[source]
        source: ClassError,
    },
    /// The file kind cannot be told from its name (`SKILL.md`/`*.md`, `*.json`, `*.yaml`,
    /// `*.yml`).
    #[error("{path}: unknown file kind (expected SKILL.md, *.json, *.yaml or *.yml)")]
    UnknownKind {
        /// The file.
        path: String,
    },
}

/// `Result` with [`ConfigError`].
pub type Result<T, E = ConfigError> = std::result::Result<T, E>;
