//! `CLAUDE_ENV_FILE`: what a `SessionStart` hook writes there sets variables for the shell
//! commands of the rest of the session.
//!
//! The file is read as data, never run: one assignment per line, `export NAME=VALUE` or
//! `NAME=VALUE`, the value bare, in single quotes, or in double quotes with only `\"`, `\\`,
//! `\$` and `` \` `` escapes. Blank lines and `#` comments are skipped. A line of any other
//! shape (an expansion, a command) is skipped with a note, and so is a variable that would
//! change what the shell analyzer vetted: how commands are found (`PATH`, `CDPATH`), what runs
//! before them (`BASH_ENV`, `ENV`, `PROMPT_COMMAND`, `BASH_FUNC_*`, `LD_*`, `DYLD_*`,
//! `NODE_OPTIONS`, `PYTHONSTARTUP`, `PERL5OPT`, `RUBYOPT`, `GIT_*`), how words split (`IFS`,
//! `SHELLOPTS`, `BASHOPTS`, `GLOBIGNORE`), where `~` is (`HOME`), and tollgate's own
//! (`TOLLGATE_*`, `HOOK_*`).

/// Longest env file read, in bytes; the rest is ignored with a note.
pub const MAX_ENV_FILE: usize = 64 * 1024;

/// The variables an env file sets, in order, and a note per line it skipped.
#[derive(Debug, Default, PartialEq)]
pub struct EnvFile {
    /// `NAME`, `VALUE` pairs; a name set twice keeps its last value.
    pub vars: Vec<(String, String)>,
    /// Why lines were skipped (`line 3: PATH is not set from CLAUDE_ENV_FILE: …`).
    pub skipped: Vec<String>,
}

/// Reads an env file's text.
pub fn parse(text: &str) -> EnvFile {
    let mut file = EnvFile::default();
    let text = if text.len() > MAX_ENV_FILE {
        file.skipped.push(format!(
            "the file is over {MAX_ENV_FILE} bytes; the rest is ignored"
        ));
        let cut = (0..=MAX_ENV_FILE)
            .rev()
            .find(|&i| text.is_char_boundary(i))
            .unwrap_or(0);
        // The last line may be cut in two: drop it.
        let head = &text[..cut];
        head.rfind('\n').map_or("", |end| &head[..end])
    } else {
        text
    };
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        match assignment(line) {
            Ok((name, value)) => {
                file.vars.retain(|(n, _)| *n != name);
                file.vars.push((name, value));
            }
            Err(why) => file.skipped.push(format!("line {}: {why}", n + 1)),
        }
    }
    file
}

fn assignment(line: &str) -> Result<(String, String), String> {
    let rest = line.strip_prefix("export ").map_or(line, str::trim_start);
    let (name, value) = rest
        .split_once('=')
        .ok_or("not an assignment (`export NAME=VALUE`)")?;
    let valid = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !valid {
        return Err("not an assignment (`export NAME=VALUE`)".into());
    }
    if let Some(why) = refused(name) {
        return Err(format!("{name} is not set from CLAUDE_ENV_FILE: {why}"));
    }
    Ok((name.to_owned(), value_of(value)?))
}

/// Whether the shell tool may be given `NAME=value` from a hook: a variable name, not one of
/// the refused names above, a value without NUL. The runtime checks again what it applies,
/// since any hook may report a `claude_env` side effect.
pub fn settable(name: &str, value: &str) -> bool {
    let valid = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    valid && refused(name).is_none() && !value.contains('\0')
}

fn refused(name: &str) -> Option<&'static str> {
    let prefixes = ["LD_", "DYLD_", "BASH_FUNC_", "GIT_", "TOLLGATE_", "HOOK_"];
    let names = [
        "PATH",
        "CDPATH",
        "BASH_ENV",
        "ENV",
        "PROMPT_COMMAND",
        "NODE_OPTIONS",
        "PYTHONSTARTUP",
        "PERL5OPT",
        "RUBYOPT",
        "IFS",
        "SHELLOPTS",
        "BASHOPTS",
        "GLOBIGNORE",
        "HOME",
    ];
    (names.contains(&name) || prefixes.iter().any(|p| name.starts_with(p)))
        .then_some("it would change what the shell analyzer vetted")
}

fn value_of(value: &str) -> Result<String, String> {
    let unsupported = || "the value is not a literal (quotes, `$`, `` ` `` or spaces)".to_owned();
    if let Some(inner) = value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')) {
        return if inner.contains('\'') {
            Err(unsupported())
        } else {
            Ok(inner.to_owned())
        };
    }
    if let Some(inner) = value.strip_prefix('"').and_then(|v| v.strip_suffix('"')) {
        let mut out = String::with_capacity(inner.len());
        let mut chars = inner.chars();
        while let Some(c) = chars.next() {
            match c {
                '\\' => match chars.next() {
                    Some(e @ ('"' | '\\' | '$' | '`')) => out.push(e),
                    _ => return Err(unsupported()),
                },
                '"' | '$' | '`' => return Err(unsupported()),
                c => out.push(c),
            }
        }
        return Ok(out);
    }
    let bare = value
        .chars()
        .all(|c| !c.is_whitespace() && !"'\"$`\\;&|<>(){}*?[]~#".contains(c));
    if bare {
        Ok(value.to_owned())
    } else {
        Err(unsupported())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_assignments_are_read_and_everything_else_is_skipped_with_a_note() {
        let file = parse(
            "# set by the hook\nexport NODE_ENV=production\nexport A='x y'\nB=\"q\\\"t\"\n\n\
             export PATH=/evil:$PATH\nC=$(id)\nexport LD_PRELOAD=/x.so\nrm -rf /\nA=second\n",
        );
        assert_eq!(
            file.vars,
            [
                ("NODE_ENV".to_owned(), "production".to_owned()),
                ("B".into(), "q\"t".into()),
                ("A".into(), "second".into()),
            ]
        );
        assert_eq!(file.skipped.len(), 4, "{:?}", file.skipped);
        assert!(
            file.skipped[0].starts_with("line 6: PATH is not set"),
            "{:?}",
            file.skipped
        );
    }

    #[test]
    fn a_huge_file_is_cut() {
        let file = parse(&"A=1\n".repeat(MAX_ENV_FILE));
        assert_eq!(file.vars, [("A".to_owned(), "1".to_owned())]);
        assert!(file.skipped[0].contains("over"));
    }
}
