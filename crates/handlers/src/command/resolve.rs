//! Relative paths of a command hook's line, taken from the folder of the file that declares
//! the hook: `./hooks/guard.sh` and `hooks/guard.sh --flag` (a command name with a `/`), and
//! the script of a shell, `source` or an interpreter (`bash hooks/guard.sh`, `python3
//! guard.py`) when that file exists in the folder. Each such word is replaced by the absolute
//! path, so the analyzer vets, `tollgate check` shows and the shell runs the same file from
//! whatever directory tollgate started in.

use std::ops::Range;
use std::path::{Component, Path, PathBuf};

use tollgate_shell::{Program, ProgramKind};

use super::confine::CONFIG_DIR_ENV;

/// `line` with the relative program words of `programs` (from the analysis of `line`)
/// replaced by absolute paths under `dir` (absolute). Words inside shell strings
/// (`sh -c './x.sh'`), after a `cd`, or only known at run time are left alone; so is every
/// word when `dir` is not UTF-8.
pub(super) fn resolve(line: &str, programs: &[Program], dir: &Path) -> String {
    let mut edits: Vec<(Range<usize>, String)> =
        programs.iter().filter_map(|p| edit(p, dir)).collect();
    edits.sort_by_key(|(range, _)| (range.start, range.end));
    let mut out = String::with_capacity(line.len() + 64 * edits.len());
    let mut at = 0;
    for (range, word) in edits {
        // The same word met twice (a function body and its call) is edited once.
        let (Some(before), true) = (line.get(at..range.start), line.get(range.clone()).is_some())
        else {
            continue;
        };
        out.push_str(before);
        out.push_str(&word);
        at = range.end;
    }
    out.push_str(&line[at..]);
    out
}

/// `program` as bash finds it after [`resolve`]: a name that was rewritten, made absolute.
pub(super) fn resolved(program: &Program, dir: &Path) -> Program {
    let mut program = program.clone();
    if edit(&program, dir).is_some() {
        program.name = join(dir, &program.name).display().to_string();
    }
    program
}

/// The replacement of `program`'s word, when it is a relative path to resolve.
fn edit(program: &Program, dir: &Path) -> Option<(Range<usize>, String)> {
    let span = program.span.clone()?;
    let name = program.name.as_str();
    if program.after_cd || name.starts_with(['/', '~']) || dir.to_str().is_none() {
        return None;
    }
    let path = join(dir, name);
    let word = match program.kind {
        ProgramKind::Command if name.contains('/') => command_word(&path, name)?,
        ProgramKind::Script if path.is_file() => quote(path.to_str()?),
        _ => return None,
    };
    Some((span, word))
}

/// `dir` joined with the relative `name`, `.` steps dropped (`..` kept: the kernel resolves
/// it, through symlinks).
pub(super) fn join(dir: &Path, name: &str) -> PathBuf {
    let mut path = dir.to_path_buf();
    path.extend(
        Path::new(name)
            .components()
            .filter(|c| *c != Component::CurDir),
    );
    path
}

/// A command name for `path` that the analyzer takes as a plain name: the path itself when it
/// needs no quoting, else `"$HOOK_CONFIG_DIR"/<tail>` (a fixed path under a directory the
/// environment names), else the quoted path (which the analyzer refuses as obfuscated, loudly).
fn command_word(path: &Path, name: &str) -> Option<String> {
    let text = path.to_str()?;
    if text.chars().all(plain) {
        return Some(text.to_owned());
    }
    let tail = join(Path::new(""), name);
    let tail = tail.to_str()?;
    if tail.chars().all(plain) {
        return Some(format!("\"${CONFIG_DIR_ENV}\"/{tail}"));
    }
    Some(quote(text))
}

/// Characters a path may have and stay one plain shell word.
fn plain(c: char) -> bool {
    c.is_ascii_alphanumeric() || "/._-+@%,:".contains(c)
}

/// `text` as one shell word: as is when plain, else single-quoted.
fn quote(text: &str) -> String {
    if !text.is_empty() && text.chars().all(plain) {
        return text.to_owned();
    }
    format!("'{}'", text.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tollgate_shell::{Profile, analyze};

    fn resolved(line: &str, dir: &Path) -> String {
        resolve(line, &analyze(line, Profile::Trusted).programs, dir)
    }

    #[test]
    fn relative_command_paths_become_absolute() {
        let dir = Path::new("/etc/hooks");
        assert_eq!(resolved("./guard.sh", dir), "/etc/hooks/guard.sh");
        assert_eq!(
            resolved("bin/guard.sh --flag && ./b.sh", dir),
            "/etc/hooks/bin/guard.sh --flag && /etc/hooks/b.sh"
        );
        assert_eq!(resolved("../shared/x.sh", dir), "/etc/hooks/../shared/x.sh");
    }

    #[test]
    fn names_on_the_search_path_absolute_paths_and_shell_strings_stay() {
        let dir = Path::new("/etc/hooks");
        for line in [
            "jq . && exit 2",
            "/usr/bin/env jq .",
            "sh -c './x.sh'",
            "cd /srv && ./deploy.sh",
            "\"$D\"/x.sh",
        ] {
            assert_eq!(resolved(line, dir), line);
        }
    }

    #[test]
    fn scripts_are_resolved_only_when_the_file_is_there() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        std::fs::write(base.join("guard.py"), "").unwrap();
        assert_eq!(
            resolved("python3 guard.py --strict", &base),
            format!("python3 {}/guard.py --strict", base.display())
        );
        assert_eq!(resolved("python3 manage.py", &base), "python3 manage.py");
    }

    #[test]
    fn folders_that_need_quoting_go_through_the_config_dir_variable() {
        let dir = Path::new("/srv/My Hooks");
        assert_eq!(
            resolved("./hooks/guard.sh x", dir),
            "\"$HOOK_CONFIG_DIR\"/hooks/guard.sh x"
        );
        assert_eq!(quote("/srv/it's"), r"'/srv/it'\''s'");
    }
}
