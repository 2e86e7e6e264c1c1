//! Variables that change what a command name runs or where it is looked up, or that hold
//! code the shell runs unseen: `PATH`, `CDPATH`, `LD_LIBRARY_PATH`, `LD_PRELOAD`,
//! exported functions, `BASH_ENV`, `SHELLOPTS`, prompt strings and `PROMPT_COMMAND`,
//! interpreter options that preload modules.

use std::ops::Range;

use super::code;
use crate::paths;
use crate::rules::RuleId;
use crate::walk::{Analyzer, Cx};
use crate::word::{UNKNOWN, Word};

/// Directories anyone may write to: a `PATH` entry there runs whatever was put there.
const TEMP_DIRS: &[&str] = &["/tmp", "/var/tmp", "/dev/shm", "/run/shm", "/private/tmp"];

/// Checks the assignment `name=value` (also `export`, a prefix `NAME=VALUE cmd`, `env
/// NAME=VALUE`); `raw` is the value as written, `span` where the assignment is.
pub(crate) fn variable(
    a: &mut Analyzer,
    cx: Cx<'_, '_>,
    name: &str,
    value: &Word<'_>,
    raw: &str,
    span: Range<usize>,
) {
    let name = name.trim_end_matches('+');
    match name {
        "PATH" | "LD_LIBRARY_PATH" => search_path(a, cx, name, raw, span),
        "CDPATH" if !value.text.is_empty() || value.unknown => a.report(
            RuleId::SearchPathChange,
            span,
            "`CDPATH` makes `cd` go to a directory the text does not name",
        ),
        "LD_PRELOAD" | "LD_AUDIT" if !value.text.is_empty() || value.unknown => a.report(
            RuleId::CommandMasquerade,
            span,
            format!("`{name}` loads a library's code into every program that runs"),
        ),
        _ if name.starts_with("BASH_FUNC_") => a.report(
            RuleId::CommandMasquerade,
            span,
            "an exported function (`BASH_FUNC_…`) replaces a command name in the shells started next",
        ),
        "BASH_ENV" | "SHELLOPTS" | "BASHOPTS" if !value.text.is_empty() || value.unknown => {
            a.report(
                RuleId::HiddenCode,
                span,
                format!("`{name}` makes every shell started next run code the text does not show"),
            )
        }
        "ENV" if value.text.contains('/') || value.text.contains(UNKNOWN) => a.report(
            RuleId::HiddenCode,
            span,
            "`ENV` names a file every interactive `sh` runs first",
        ),
        "NODE_OPTIONS" | "PERL5OPT" | "RUBYOPT" if preloads(&value.text) || value.unknown => a.report(
            RuleId::SearchPathChange,
            span,
            format!("`{name}` makes the interpreter load a module before the program"),
        ),
        "PROMPT_COMMAND" => prompt(a, cx, name, value, span, true),
        "PS0" | "PS1" | "PS2" | "PS3" | "PS4" => prompt(a, cx, name, value, span, false),
        _ => {}
    }
}

/// Interpreter options that load code before the program: `--require`, `--import`,
/// `--loader` (node), `-M` (perl), `-r` (node, ruby).
fn preloads(options: &str) -> bool {
    options.split_whitespace().any(|o| {
        [
            "--require",
            "--import",
            "--loader",
            "--experimental-loader",
            "-r",
            "-M",
            "-m",
        ]
        .iter()
        .any(|p| o.starts_with(p))
    })
}

/// A prompt string (its substitutions run whenever it is shown; `PS4` with `set -x`) or
/// `PROMPT_COMMAND` (shell code): checked as code when literal, refused when built at run
/// time.
fn prompt(
    a: &mut Analyzer,
    cx: Cx<'_, '_>,
    name: &str,
    value: &Word<'_>,
    span: Range<usize>,
    command: bool,
) {
    match value.mapped(cx.src) {
        Some(m) if command => code::nested(a, cx, m, span),
        Some(m) => a.prompt_code(cx, m),
        None => a.report(
            RuleId::HiddenCode,
            span,
            format!("`{name}` is built at run time: the shell runs the code in it unseen"),
        ),
    }
}

/// `PATH=…` or `LD_LIBRARY_PATH=…` (as written, `raw`): an entry ahead of the inherited
/// value (or any entry, when the value is replaced) that is empty, relative, temporary, or
/// only known at run time lets a file the text does not name answer to a command name.
fn search_path(a: &mut Analyzer, cx: Cx<'_, '_>, name: &str, raw: &str, span: Range<usize>) {
    let unquoted: String = raw.chars().filter(|c| !matches!(c, '"' | '\'')).collect();
    let entries: Vec<&str> = unquoted.split(':').collect();
    let inherited = entries.iter().position(|e| is_reference(e, name));
    let ahead = &entries[..inherited.unwrap_or(entries.len())];
    if let Some(bad) = ahead.iter().find(|e| !trusted_entry(cx, e)) {
        let shown = if bad.is_empty() {
            "(empty: the current directory)"
        } else {
            bad
        };
        a.report(
            RuleId::SearchPathChange,
            span,
            format!("`{name}` looks in `{shown}` first, a directory whose contents the text does not show"),
        );
    }
}

/// `$PATH`, `${PATH}`, `${PATH:+…}`: the inherited value.
fn is_reference(entry: &str, name: &str) -> bool {
    let rest = entry
        .strip_prefix("${")
        .or_else(|| entry.strip_prefix('$'))
        .unwrap_or_default();
    rest.strip_prefix(name)
        .is_some_and(|after| after.is_empty() || after.starts_with(['}', ':']))
}

/// A search-path entry whose contents are not the text's to choose: an absolute directory
/// outside the temporary ones, a home directory's, or one under a variable the text does
/// not set (the environment's, like `$CLAUDE_PROJECT_DIR/bin`).
fn trusted_entry(cx: Cx<'_, '_>, entry: &str) -> bool {
    if entry.contains("$(") || entry.contains('`') {
        return false;
    }
    if let Some(rest) = entry.strip_prefix('$') {
        let braced = rest.strip_prefix('{');
        let name_len = braced
            .unwrap_or(rest)
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(braced.unwrap_or(rest).len());
        let var = &braced.unwrap_or(rest)[..name_len];
        let after = &braced.unwrap_or(rest)[name_len..];
        let after = if braced.is_some() {
            match after.strip_prefix('}') {
                Some(a) => a,
                None => return false,
            }
        } else {
            after
        };
        if var == "HOME" {
            return !after.contains('$');
        }
        return match cx.src.vars.borrow().get(var) {
            None => !after.contains('$'),
            Some(Some(value)) => static_entry(&format!("{value}{after}")),
            Some(None) => false,
        };
    }
    static_entry(entry)
}

/// A static entry: absolute (or in a home) and not under a temporary directory.
fn static_entry(entry: &str) -> bool {
    if entry.contains('$') || entry.contains(UNKNOWN) {
        return false;
    }
    if entry.starts_with('~') {
        return true;
    }
    if !entry.starts_with('/') {
        return false;
    }
    let n = paths::normalize(entry);
    !TEMP_DIRS
        .iter()
        .any(|t| n == *t || n.strip_prefix(t).is_some_and(|r| r.starts_with('/')))
}
