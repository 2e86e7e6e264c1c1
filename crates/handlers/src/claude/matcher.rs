//! Claude Code's `matcher`: which tool calls (or sub-agent types, session sources) a group of
//! hooks runs for.
//!
//! | matcher | matches |
//! |---|---|
//! | absent, `""`, `*` | everything |
//! | only letters, digits, `_` and `\|` (`Bash`, `Edit\|Write`, `mcp__db__query`) | exactly one of the names |
//! | anything else (`mcp__db__.*`, `^Notebook`, `^(?:Read\|Write)$`) | a regular expression, searched anywhere in the name unless anchored |
//!
//! Matching is case-sensitive. Regular expressions are Rust's `regex` syntax, which covers
//! what Claude Code's JavaScript expressions use in matchers except look-around and
//! backreferences: those are refused when the hook is loaded, never guessed at.

use regex::{Regex, RegexBuilder};

/// Largest compiled regular expression a matcher may build, in bytes (a matcher comes from a
/// file; a pathological pattern must not take the process's memory).
const REGEX_SIZE_LIMIT: usize = 1 << 20;

/// A compiled `matcher`.
#[derive(Debug, Clone)]
pub enum Matcher {
    /// Absent, empty or `*`: everything.
    All,
    /// Exact names (`Bash`, `Edit|Write`).
    Names(Vec<String>),
    /// A regular expression, searched in the name.
    Regex(Regex),
}

impl Matcher {
    /// Compiles a matcher; `None` (no `matcher` key) matches everything.
    ///
    /// # Errors
    /// Why a regular expression cannot be used (syntax Rust's `regex` lacks, such as
    /// look-around, or a pattern over the size limit).
    pub fn parse(text: Option<&str>) -> Result<Self, String> {
        let text = match text {
            None => return Ok(Self::All),
            Some(text) if text.is_empty() || text == "*" => return Ok(Self::All),
            Some(text) => text,
        };
        let exact = text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '|');
        if exact {
            return Ok(Self::Names(
                text.split('|')
                    .filter(|n| !n.is_empty())
                    .map(str::to_owned)
                    .collect(),
            ));
        }
        RegexBuilder::new(text)
            .size_limit(REGEX_SIZE_LIMIT)
            .dfa_size_limit(REGEX_SIZE_LIMIT)
            .build()
            .map(Self::Regex)
            .map_err(|e| {
                format!(
                    "`{text}` is not a regular expression tollgate can use ({}): look-around \
                     and backreferences are not supported",
                    first_line(&e.to_string())
                )
            })
    }

    /// Whether `name` matches.
    pub fn is_match(&self, name: &str) -> bool {
        match self {
            Self::All => true,
            Self::Names(names) => names.iter().any(|n| n == name),
            Self::Regex(regex) => regex.is_match(name),
        }
    }

    /// Whether any of `names` matches.
    pub fn matches_any<'a>(&self, names: impl IntoIterator<Item = &'a str>) -> bool {
        names.into_iter().any(|name| self.is_match(name))
    }
}

/// The regex crate's messages span lines (the pattern, a caret, the reason): keep the reason.
fn first_line(message: &str) -> String {
    message
        .lines()
        .rev()
        .find(|l| l.trim_start().starts_with("error:"))
        .unwrap_or_else(|| message.lines().next().unwrap_or_default())
        .trim()
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matchers_match_claude_codes_tool_names_as_claude_code_does() {
        // matcher, tool name, match?
        let table: &[(Option<&str>, &str, bool)] = &[
            (None, "Bash", true),
            (Some(""), "mcp__db__query", true),
            (Some("*"), "Write", true),
            (Some("Bash"), "Bash", true),
            (Some("Bash"), "bash", false),
            (Some("Bash"), "BashOutput", false),
            (Some("Edit|Write"), "Write", true),
            (Some("Edit|Write"), "Edit", true),
            (Some("Edit|Write"), "MultiEdit", false),
            (Some("Edit|Write"), "NotebookEdit", false),
            (Some("Notebook.*"), "NotebookEdit", true),
            (Some("Notebook.*"), "Bash", false),
            (Some("Edit.*"), "MultiEdit", true),
            (Some("^Edit"), "MultiEdit", false),
            (Some("^(?:Read|Write)$"), "Write", true),
            (Some("^(?:Read|Write)$"), "WriteFile", false),
            (Some("^(Bash|Read)$"), "Bash", true),
            (
                Some("mcp__memory__create_entities"),
                "mcp__memory__create_entities",
                true,
            ),
            (
                Some("mcp__memory__create_entities"),
                "mcp__memory__delete",
                false,
            ),
            (Some("mcp__memory__.*"), "mcp__memory__delete", true),
            (Some("mcp__memory__.*"), "mcp__github__delete", false),
            (Some("mcp__.*__write.*"), "mcp__fs__write_file", true),
            (Some("mcp__my-server__q"), "mcp__my-server__q", true),
            (Some("Task|Agent"), "Agent", true),
        ];
        for (matcher, name, expected) in table {
            let compiled = Matcher::parse(*matcher).unwrap();
            assert_eq!(compiled.is_match(name), *expected, "{matcher:?} × {name}");
        }
    }

    #[test]
    fn patterns_rust_cannot_read_are_refused_not_widened() {
        for bad in ["(?=Bash)", "(a)\\1", "Bash(", "[z-a]"] {
            let err = Matcher::parse(Some(bad)).unwrap_err();
            assert!(err.contains("not a regular expression"), "{bad}: {err}");
            assert!(!err.contains('\n'), "{err}");
        }
        assert!(Matcher::parse(Some("a{1000}{1000}")).is_err());
    }
}
