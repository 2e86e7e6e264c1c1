//! Load-time warnings: what was skipped or ignored, and why.

use std::fmt;

use serde::Serialize;

/// One skipped or ignored piece of configuration. Loading goes on: siblings of a bad entry
/// still load, and nothing is ever loosened to make an entry valid.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Warning {
    /// The file, as given.
    pub file: String,
    /// Where in the file, like `hooks.PreToolUse[1].tools`.
    pub entry: String,
    /// What was wrong and what was done about it.
    pub message: String,
}

impl Warning {
    /// A warning about `entry` of `file`.
    pub fn new(file: &str, entry: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            file: file.to_owned(),
            entry: entry.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}: {}", self.file, self.entry, self.message)
    }
}
