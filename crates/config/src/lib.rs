//! tollgate's declarative configuration (`docs/config.md`): SKILL.md frontmatter, agent config
//! JSON and hook files (YAML) into typed [`HookSpec`]s plus [`Warning`]s, and from specs to a
//! [`RegistryBuilder`](tollgate_core::RegistryBuilder) with an [`Assembler`].
//!
//! # Raw, then validated
//!
//! YAML is parsed with serde-saphyr into a lenient raw value (duplicate keys, multiple
//! documents and alias bombs are rejected there: see [`yaml`]), then every entry is validated
//! on its own. In SKILL.md and hook files one bad entry is skipped with a warning naming the
//! file, the entry path (`hooks.PreToolUse[1].tools`) and the reason; its siblings load, and
//! nothing is ever loosened to make an entry valid (a malformed `tools` never becomes
//! match-all, an unknown key skips its entry). Agent config is strict: an invalid entry, an
//! unknown class or bad params are errors, because an agent whose hooks cannot be built must
//! not run.
//!
//! # Example
//!
//! ```
//! use std::path::Path;
//! use tollgate_config::{Assembler, Policy, Skill, SkillSet, selected_skills};
//! use tollgate_handlers::ClassTable;
//!
//! let text = "---\nname: deploy\nhooks:\n  PreToolUse:\n    - script: ./guard.sh\n      tools: bash_*\n---\n# Deploy\n";
//! let skills = SkillSet::new([Skill::parse(Path::new("deploy/SKILL.md"), text).unwrap()]);
//!
//! // Only a run that selected the skill gets its hooks.
//! let selected = selected_skills("[use deploy] ship it", &[]);
//! let classes = ClassTable::builtin();
//! let mut assembler = Assembler::new(&classes, Policy::default());
//! assembler.add_specs(&skills.hooks_for(&selected));
//! let assembled = assembler.finish();
//! assert_eq!(assembled.hooks[0].name, "skill:deploy/PreToolUse[0]");
//! let registry = assembled.builder.build().unwrap();
//! assert_eq!(registry.len(), 1);
//! ```

#![forbid(unsafe_code)]

mod agent;
pub mod approval;
mod build;
mod claude;
mod claude_events;
mod entry;
pub mod error;
mod fields;
mod hook_file;
mod hooks_map;
mod sandbox;
mod skill;
mod spec;
mod suggest;
mod tools;
mod warning;
pub mod yaml;

use std::path::Path;

pub use agent::{AgentConfig, ClassHookSpec};
pub use approval::{ApprovalSettings, ApproverEntry};
pub use build::{Assembled, Assembler, Policy, ResolvedHook};
pub use error::{ConfigError, Result};
pub use hook_file::{HookFile, Trust};
pub use sandbox::{HookSandbox, NetworkChoice, SandboxSettings, Widening};
pub use skill::{Skill, SkillSet, selected_skills};
pub use spec::{ClaudeSpec, Dialect, HookSpec, SpecKind};
pub use tools::{KnownTools, unmatched_tools};
pub use warning::Warning;

/// Top-level keys only admin hook files may set (the network http hooks may reach, standalone
/// mode, the OS sandbox). A user hook file or a SKILL.md that has one gets a warning and the
/// key is ignored; an agent config that has one is refused.
pub const ADMIN_ONLY_KEYS: [&str; 3] = ["network", "standalone", "sandbox"];

fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.display().to_string(),
        source,
    })
}
