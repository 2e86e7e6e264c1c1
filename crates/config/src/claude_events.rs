//! Claude Code's hook events that have no moment in tollgate.
//!
//! A settings file is loaded whole: hooks declared (in Claude Code's shape) under one of these
//! events, or under an event name neither Claude Code nor tollgate has yet, load as the custom
//! event of that name, with a note saying why tollgate's runtime never fires it. A host may
//! still dispatch it (`tollgate dispatch --event custom:PreCompact`).

/// Claude Code's events without a counterpart, each with why it never fires here.
const NEVER_FIRE: [(&str, &str); 23] = [
    ("PreCompact", "tollgate does not compact a conversation"),
    ("PostCompact", "tollgate does not compact a conversation"),
    ("CwdChanged", "a session's workspace never changes"),
    ("FileChanged", "tollgate watches no files"),
    ("DirectoryAdded", "a session's workspace never changes"),
    (
        "PermissionDenied",
        "it follows a denial by Claude Code's auto mode, which tollgate does not have",
    ),
    (
        "Elicitation",
        "tollgate's MCP tools never ask the user for input",
    ),
    (
        "ElicitationResult",
        "tollgate's MCP tools never ask the user for input",
    ),
    ("WorktreeCreate", "tollgate creates no worktrees"),
    ("WorktreeRemove", "tollgate creates no worktrees"),
    (
        "ConfigChange",
        "configuration is read once, when the run starts",
    ),
    (
        "InstructionsLoaded",
        "tollgate loads no CLAUDE.md or rule files",
    ),
    ("Setup", "tollgate has no repository setup step"),
    ("PreModelSwitch", "a run's model never changes"),
    ("PostModelSwitch", "a run's model never changes"),
    ("UserPromptExpansion", "tollgate has no slash commands"),
    (
        "PreSkillShellCommand",
        "a skill's text runs no inline shell commands",
    ),
    (
        "PostToolBatch",
        "tollgate has no event for a batch of calls",
    ),
    (
        "StopFailure",
        "a failed model call ends the session (`session_end`, status `failed`)",
    ),
    ("MessageDisplay", "tollgate displays no messages"),
    ("TaskCreated", "tollgate has no task list"),
    ("TaskCompleted", "tollgate has no task list"),
    ("TeammateIdle", "tollgate has no teammates"),
];

/// Why hooks under the event `key` never fire in tollgate, when `key` is one of Claude Code's
/// events tollgate lacks.
pub(crate) fn never_fires(key: &str) -> Option<&'static str> {
    NEVER_FIRE
        .iter()
        .find(|(name, _)| *name == key)
        .map(|(_, why)| *why)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn none_of_them_is_an_event_tollgate_fires() {
        for (name, _) in NEVER_FIRE {
            assert!(name.parse::<tollgate_protocol::Event>().is_err(), "{name}");
            assert!(tollgate_protocol::Event::custom(name).is_ok(), "{name}");
        }
    }
}
