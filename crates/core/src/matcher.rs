//! The `tools` matcher: fnmatch-style globs over the runtime tool name.

use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};

use crate::error::{CoreError, Result};

/// One glob or a list of globs, matched against the runtime tool name (on sub-agent events,
/// against the agent type).
///
/// Semantics are [globset](https://docs.rs/globset)'s, close to fnmatch without
/// `FNM_PATHNAME`: `*` matches any run of characters (also `/`), `?` one character, `[abc]` /
/// `[!abc]` a class, `{a,b}` alternatives, `\` escapes; matching is case-sensitive and anchored
/// at both ends (`sql_*` matches `sql_query`, not `my_sql_query`). A name matches when any glob
/// matches. An empty list matches nothing: a matcher is never widened to match-all.
///
/// Where globset differs from POSIX fnmatch: matching works on UTF-8 **bytes**, so `?` and a
/// class match one byte and do not match a non-ASCII character (`deploy_?` does not match
/// `deploy_日`; write `deploy_*`); `**` also matches zero segments (`**/b` matches `b`); `[^a]`
/// negates like `[!a]`; `{}` matches the empty string.
#[derive(Debug, Clone)]
pub struct ToolMatcher {
    patterns: Vec<String>,
    globs: Vec<Glob>,
    set: GlobSet,
}

impl ToolMatcher {
    /// Compiles a list of globs.
    ///
    /// # Errors
    /// [`CoreError::InvalidPattern`] naming the first pattern that does not compile (for
    /// example an unclosed `[` or `{`).
    pub fn new<I, S>(patterns: I) -> Result<Self>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let patterns: Vec<String> = patterns
            .into_iter()
            .map(|p| p.as_ref().to_owned())
            .collect();
        let globs = patterns
            .iter()
            .map(|pattern| compile(pattern))
            .collect::<Result<Vec<_>>>()?;
        let set = build_set(&globs)?;
        Ok(Self {
            patterns,
            globs,
            set,
        })
    }

    /// Compiles one glob.
    ///
    /// # Errors
    /// As [`ToolMatcher::new`].
    pub fn one(pattern: &str) -> Result<Self> {
        Self::new([pattern])
    }

    /// Whether `name` matches any of the globs.
    pub fn is_match(&self, name: &str) -> bool {
        self.set.is_match(name)
    }

    /// The globs as written.
    pub fn patterns(&self) -> &[String] {
        &self.patterns
    }

    pub(crate) fn globs(&self) -> &[Glob] {
        &self.globs
    }
}

fn compile(pattern: &str) -> Result<Glob> {
    GlobBuilder::new(pattern)
        .case_insensitive(false)
        .literal_separator(false)
        .backslash_escape(true)
        .empty_alternates(true)
        .build()
        .map_err(|error| CoreError::InvalidPattern {
            pattern: pattern.to_owned(),
            message: error.kind().to_string(),
        })
}

pub(crate) fn build_set(globs: &[Glob]) -> Result<GlobSet> {
    let mut builder = GlobSetBuilder::new();
    for glob in globs {
        builder.add(glob.clone());
    }
    builder.build().map_err(|error| CoreError::InvalidPattern {
        pattern: error.glob().unwrap_or_default().to_owned(),
        message: error.kind().to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matcher(patterns: &[&str]) -> ToolMatcher {
        ToolMatcher::new(patterns).unwrap()
    }

    #[test]
    fn globs_are_anchored_and_case_sensitive() {
        let m = matcher(&["sql_*"]);
        assert!(m.is_match("sql_query"));
        assert!(m.is_match("sql_"));
        assert!(!m.is_match("my_sql_query"));
        assert!(!m.is_match("SQL_query"));
    }

    #[test]
    fn a_list_matches_when_any_glob_matches() {
        let m = matcher(&["bash_*", "read_file", "oa__*_pay"]);
        assert!(m.is_match("bash_code_execute_tool"));
        assert!(m.is_match("read_file"));
        assert!(m.is_match("oa__purchase_pay"));
        assert!(!m.is_match("write_file"));
    }

    #[test]
    fn fnmatch_classes_alternates_and_single_chars() {
        let m = matcher(&["tool_[ab]?", "{read,write}_file"]);
        assert!(m.is_match("tool_a1"));
        assert!(!m.is_match("tool_c1"));
        assert!(!m.is_match("tool_a12"));
        assert!(m.is_match("write_file"));
        assert!(matcher(&["mcp__*"]).is_match("mcp__github/create_issue"));
    }

    #[test]
    fn empty_list_matches_nothing() {
        let m = matcher(&[]);
        assert!(!m.is_match(""));
        assert!(!m.is_match("anything"));
    }

    #[test]
    fn malformed_patterns_are_errors_not_match_all() {
        for bad in ["tool_[a", "{read,write", "a\\"] {
            assert!(ToolMatcher::one(bad).is_err(), "{bad}");
        }
    }
}
