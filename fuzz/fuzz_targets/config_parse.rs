//! tollgate-config's parsers on arbitrary text: a SKILL.md (frontmatter), a hook file as user
//! and as admin, and an agent config. They may refuse the text, never panic, crash or hang.

#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use tollgate_config::{AgentConfig, HookFile, Skill, Trust};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = std::hint::black_box(Skill::parse(Path::new("skills/fuzz/SKILL.md"), text));
    for trust in [Trust::User, Trust::Admin] {
        let _ = std::hint::black_box(HookFile::parse(Path::new("hooks.yaml"), text, trust));
    }
    let _ = std::hint::black_box(AgentConfig::parse(Path::new("agent.json"), text));
});
