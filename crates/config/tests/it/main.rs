//! Integration tests of tollgate-config through its public API.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod admin_only;
mod agent;
mod claude;
mod hints;
mod hook_file;
mod paths;
mod sandbox;
mod skill;
mod tools;
mod yaml;

use std::path::Path;

use tollgate_config::{Skill, Warning};

/// Parses a SKILL.md whose frontmatter is `front`.
pub fn skill(front: &str) -> Skill {
    let text = format!("---\nname: deploy\n{front}---\n# Deploy\n");
    Skill::parse(Path::new("skills/deploy/SKILL.md"), &text).unwrap()
}

/// `entry: message` lines, for snapshots.
pub fn lines(warnings: &[Warning]) -> String {
    warnings
        .iter()
        .map(|w| format!("{}: {}", w.entry, w.message))
        .collect::<Vec<_>>()
        .join("\n")
}
