//! Class hooks: named hooks built from config (`class:` entries, agent-config `class_hooks`).
//!
//! A [`ClassTable`] maps a class name to a [`ClassFactory`] that turns JSON params (from YAML or
//! agent JSON) into a [`ClassInstance`]: a hook, the events it registers for by default, its
//! default `tools` globs, and/or a [`DispatchObserver`]. [`ClassTable::builtin`] holds:
//!
//! | class | kind | default events | does |
//! |---|---|---|---|
//! | `ReadOnlyGuard` | hook | `pre_tool_use` | denies SQL writes for read-only organisations |
//! | `AuditLogHook` | observer | — | appends every dispatch's folded decision to a JSONL file |
//! | `ResultTruncateHook` | hook | `post_tool_use` | spills oversized tool results, keeps a preview |
//! | `ConnectorRateLimitHook` | hook | `pre_tool_use` | token bucket per (organisation, connector) |
//!
//! Params that are paths (`AuditLogHook`'s `path`, `ResultTruncateHook`'s `spill_dir`) are
//! relative to the folder of the file that declares the hook when it is built with
//! [`ClassTable::instantiate_in`] (config files do that), not to the process's working
//! directory; a factory registered with [`ClassTable::register_with_paths`] names its own.
//!
//! Params are parsed strictly: an unknown key or a value of the wrong type is a
//! [`ClassError::BadParams`] naming the class and the field, never silently ignored. `null`
//! params mean the class defaults (an error for classes with a required param). An unknown
//! class or bad params make the agent fail to build (fail closed).
//!
//! Params of each class, with examples: `docs/class-hooks.md`.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Component, Path};
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::Value;
use tollgate_core::{DispatchObserver, Hook};
use tollgate_protocol::Event;

/// What a class factory builds from its params.
#[derive(Clone, Default)]
pub struct ClassInstance {
    /// The hook to register, if the class has one.
    pub hook: Option<Arc<dyn Hook>>,
    /// The events the hook registers for when the config does not name one (agent-config
    /// `class_hooks` have no event). Empty for observer-only classes.
    pub events: Vec<Event>,
    /// Default `tools` globs of the hook (e.g. `["sql_*"]` for `ReadOnlyGuard`), if any. The
    /// config's own `tools` replaces them.
    pub tools: Option<Vec<String>>,
    /// An observer to add to the registry (`AuditLogHook`), if any.
    pub observer: Option<Arc<dyn DispatchObserver>>,
}

impl fmt::Debug for ClassInstance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClassInstance")
            .field("hook", &self.hook.as_ref().map(|h| h.name().to_owned()))
            .field("events", &self.events)
            .field("tools", &self.tools)
            .field("observer", &self.observer.is_some())
            .finish()
    }
}

/// Builds a [`ClassInstance`] from JSON params (`Value::Null` when the config gave none).
///
/// # Errors
///
/// [`ClassError::BadParams`] when the params do not fit the class.
pub type ClassFactory = Arc<dyn Fn(&Value) -> Result<ClassInstance, ClassError> + Send + Sync>;

/// Why a class could not be instantiated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ClassError {
    /// No class of that name is registered.
    #[error("unknown hook class `{name}` (known: {})", known.join(", "))]
    UnknownClass {
        /// The name asked for.
        name: String,
        /// The registered names, sorted.
        known: Vec<String>,
    },
    /// The params do not fit the class (unknown key, wrong type, missing required key, bad
    /// value). The message names the field.
    #[error("bad params for hook class `{class}`: {message}")]
    BadParams {
        /// The class.
        class: String,
        /// What is wrong, naming the field (`readonly_orgs: invalid type: …`).
        message: String,
    },
}

impl ClassError {
    /// A [`ClassError::BadParams`] for `class`.
    pub fn bad_params(class: &str, message: impl fmt::Display) -> Self {
        Self::BadParams {
            class: class.to_owned(),
            message: message.to_string(),
        }
    }
}

/// Class name → factory. Cloning is cheap (factories are shared).
#[derive(Clone, Default)]
pub struct ClassTable {
    factories: BTreeMap<String, Class>,
}

/// A registered class: its factory and the names of its params that are paths.
#[derive(Clone)]
struct Class {
    factory: ClassFactory,
    paths: Vec<String>,
}

impl fmt::Debug for ClassTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClassTable")
            .field("names", &self.names())
            .finish()
    }
}

impl ClassTable {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// The built-in classes: `ReadOnlyGuard`, `AuditLogHook`, `ResultTruncateHook`,
    /// `ConnectorRateLimitHook`.
    pub fn builtin() -> Self {
        let mut table = Self::new();
        table.register(read_only::CLASS, Arc::new(read_only::instantiate));
        table.register_with_paths(audit::CLASS, Arc::new(audit::instantiate), &["path"]);
        table.register_with_paths(
            truncate::CLASS,
            Arc::new(truncate::instantiate),
            &["spill_dir"],
        );
        table.register(rate_limit::CLASS, Arc::new(rate_limit::instantiate));
        table
    }

    /// Registers (or replaces) the class `name`, none of whose params is a path.
    pub fn register(&mut self, name: &str, factory: ClassFactory) {
        self.register_with_paths(name, factory, &[]);
    }

    /// Registers (or replaces) the class `name` whose top-level params `paths` are file or
    /// directory paths: [`ClassTable::instantiate_in`] resolves them when relative.
    pub fn register_with_paths(&mut self, name: &str, factory: ClassFactory, paths: &[&str]) {
        let paths = paths.iter().map(|p| (*p).to_owned()).collect();
        self.factories
            .insert(name.to_owned(), Class { factory, paths });
    }

    /// Builds an instance of class `name` from `params` (`Value::Null` for none). Relative
    /// path params are left as they are: relative to the process's working directory.
    ///
    /// # Errors
    ///
    /// [`ClassError::UnknownClass`] when `name` is not registered (the names are
    /// case-sensitive); whatever the factory returns, usually [`ClassError::BadParams`].
    pub fn instantiate(&self, name: &str, params: &Value) -> Result<ClassInstance, ClassError> {
        (self.class(name)?.factory)(params)
    }

    /// Builds an instance of class `name` declared in a file in the folder `dir` (absolute):
    /// its relative path params (`path: audit.jsonl`, `spill_dir: ./spill`) are taken from
    /// `dir`, as the author of the file meant them. `~` paths and absolute ones are left alone.
    ///
    /// # Errors
    ///
    /// As [`ClassTable::instantiate`].
    pub fn instantiate_in(
        &self,
        name: &str,
        params: &Value,
        dir: &Path,
    ) -> Result<ClassInstance, ClassError> {
        let class = self.class(name)?;
        let mut params = params.clone();
        if let Value::Object(map) = &mut params {
            for key in &class.paths {
                if let Some(Value::String(path)) = map.get_mut(key)
                    && let Some(resolved) = resolve_in(dir, path)
                {
                    *path = resolved;
                }
            }
        }
        (class.factory)(&params)
    }

    fn class(&self, name: &str) -> Result<&Class, ClassError> {
        self.factories
            .get(name)
            .ok_or_else(|| ClassError::UnknownClass {
                name: name.to_owned(),
                known: self.names().into_iter().map(str::to_owned).collect(),
            })
    }

    /// The registered class names, sorted.
    pub fn names(&self) -> Vec<&str> {
        self.factories.keys().map(String::as_str).collect()
    }
}

/// `path` joined to `dir` when it is relative (`./` steps dropped); `None` for an empty,
/// absolute or `~` path, or a `dir` that is not UTF-8.
fn resolve_in(dir: &Path, path: &str) -> Option<String> {
    if path.is_empty() || path.starts_with('~') || Path::new(path).is_absolute() {
        return None;
    }
    let mut joined = dir.to_path_buf();
    for part in Path::new(path).components() {
        if part != Component::CurDir {
            joined.push(part);
        }
    }
    joined.to_str().map(str::to_owned)
}

/// Parses `params` (a JSON object) into a class's params struct; `null` means the defaults.
///
/// Errors name the field (`path: message`, e.g. `max_bytes: invalid type: string "x",
/// expected usize`; an unknown key reads `unknown field `x`, expected one of …`).
///
/// # Errors
///
/// [`ClassError::BadParams`] for `class`.
pub fn parse_params<T: DeserializeOwned>(class: &str, params: &Value) -> Result<T, ClassError> {
    let params = match params {
        Value::Null => Value::Object(serde_json::Map::new()),
        Value::Object(_) => params.clone(),
        other => {
            let message = format!("params must be a map of named fields, not {other}");
            return Err(ClassError::bad_params(class, message));
        }
    };
    serde_path_to_error::deserialize(params).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if path == "." {
            ClassError::bad_params(class, inner)
        } else {
            ClassError::bad_params(class, format!("{path}: {inner}"))
        }
    })
}

mod audit;
mod rate_limit;
mod read_only;
mod sql;
mod truncate;
