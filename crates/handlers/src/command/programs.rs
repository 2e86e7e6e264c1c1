//! Whether the programs a command hook's line runs are there, as the hook will see them: the
//! names looked up on the hook's `PATH` (the runtime's, which the hook inherits), paths and
//! scripts opened from its working directory, all inside its sandbox, which replaces `/tmp`
//! with a private one, empties `/run` and hides credential paths.
//!
//! A missing program does not stop a line: bash prints `command not found`, the command exits
//! 127, and `jq … && exit 2 || exit 0` allows everything. So a hook whose program is missing
//! fails instead, and config reports it when it loads the hook.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use tollgate_sandbox::Policy;
use tollgate_shell::{Program, ProgramKind};

use super::resolve::join;

/// The search path bash uses when the hook's environment has none (bash's built-in default).
pub(super) const DEFAULT_PATH: &str =
    "/usr/local/bin:/usr/local/sbin:/usr/bin:/usr/sbin:/bin:/sbin";

/// Where a hook looks for its programs.
pub(super) struct Lookup<'a> {
    /// The hook's `PATH` (`None`: unset, bash's default applies).
    pub search_path: Option<String>,
    /// The hook's working directory.
    pub cwd: &'a Path,
    /// The folder of the file that declared the hook, when known (for messages: a script not
    /// found there stayed relative to the working directory).
    pub config_dir: Option<&'a Path>,
    /// The hook's sandbox (`None`: unconfined).
    pub sandbox: Option<&'a Policy>,
    /// Paths the sandbox binds in although they lie under its private `/tmp` (the working
    /// directory, the config folder).
    pub bound: Vec<&'a Path>,
    /// The line sets `PATH` itself: names are not looked up.
    pub own_search_path: bool,
}

impl Lookup<'_> {
    /// One message per program of `programs` that the hook will not find or cannot run.
    pub(super) fn missing(&self, programs: &[Program]) -> Vec<String> {
        let mut messages: Vec<String> = Vec::new();
        for program in programs {
            if let Some(message) = self.check(program)
                && !messages.contains(&message)
            {
                messages.push(message);
            }
        }
        messages
    }

    fn check(&self, program: &Program) -> Option<String> {
        let expanded = self.expand(&program.name);
        let name = expanded.as_str();
        let relative = !name.starts_with('/');
        if relative && program.after_cd {
            // Relative to a directory the line chose: not knowable here.
            return None;
        }
        match program.kind {
            ProgramKind::Command if name.contains('/') => self.file(name, true),
            ProgramKind::Command if self.own_search_path => None,
            ProgramKind::Command => self.on_search_path(name),
            ProgramKind::Script => self.script(name),
            _ => None,
        }
    }

    /// `name` with what bash expands in a command word before it looks the file up:
    /// `"$HOOK_CONFIG_DIR"/…` (how a folder that needs quoting is written) and `~/…`.
    fn expand(&self, name: &str) -> String {
        let config = [
            "\"$HOOK_CONFIG_DIR\"/",
            "$HOOK_CONFIG_DIR/",
            "${HOOK_CONFIG_DIR}/",
        ];
        if let Some(dir) = self.config_dir
            && let Some(tail) = config.iter().find_map(|p| name.strip_prefix(p))
        {
            return dir.join(tail).display().to_string();
        }
        if let Some(tail) = name.strip_prefix("~/")
            && let Some(home) = std::env::var_os("HOME")
        {
            return Path::new(&home).join(tail).display().to_string();
        }
        name.to_owned()
    }

    /// `name` (a path) must be a file, executable when `run` is set, that the sandbox shows.
    fn file(&self, name: &str, run: bool) -> Option<String> {
        let path = join(self.cwd, name);
        let shown = if name.starts_with('/') {
            format!("`{name}`")
        } else {
            format!("`{name}` ({})", path.display())
        };
        let Ok(meta) = std::fs::metadata(&path) else {
            return Some(format!("script {shown} not found"));
        };
        if !meta.is_file() {
            return Some(format!("{shown} is not a file"));
        }
        if run && meta.permissions().mode() & 0o111 == 0 {
            return Some(format!(
                "script {shown} is not executable (`chmod +x` it, or run it with its interpreter)"
            ));
        }
        let why = self.unseen(&path)?;
        Some(format!("script {shown} is {why}"))
    }

    /// A script given to a shell, `source` or an interpreter: a readable file from the working
    /// directory; a name without `/` may also come from `PATH` (shells and `source`).
    fn script(&self, name: &str) -> Option<String> {
        let problem = self.file(name, false)?;
        if !name.contains('/') && self.on_search_path(name).is_none() {
            return None;
        }
        match self.config_dir {
            Some(dir) if !name.starts_with('/') && !join(self.cwd, name).exists() => Some(format!(
                "script `{name}` not found, neither in the hook's folder ({}) nor in its \
                     working directory ({})",
                dir.display(),
                self.cwd.display()
            )),
            _ => Some(problem),
        }
    }

    fn on_search_path(&self, name: &str) -> Option<String> {
        let value = self.search_path.as_deref().unwrap_or(DEFAULT_PATH);
        let mut unseen = None;
        for dir in value.split(':') {
            // An empty entry is the working directory, as for the shell.
            let candidate = join(self.cwd, dir).join(name);
            if !executable(&candidate) {
                continue;
            }
            match self.unseen(&candidate) {
                None => return None,
                Some(why) => unseen = unseen.or(Some((candidate, why))),
            }
        }
        let mut message = format!("program `{name}` not found on the hook's PATH ({value})");
        if let Some((path, why)) = unseen {
            message.push_str(&format!(" inside its sandbox: {} is {why}", path.display()));
        }
        Some(message)
    }

    /// Why the sandbox does not show `path`; `None` when it does (or there is no sandbox).
    fn unseen(&self, path: &Path) -> Option<&'static str> {
        let policy = self.sandbox?;
        let real = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        let bound = |p: &Path| {
            self.bound
                .iter()
                .copied()
                .chain(policy.writable.iter().map(PathBuf::as_path))
                .chain(policy.readable.iter().map(PathBuf::as_path))
                .any(|b| p.starts_with(b))
        };
        for p in [path, real.as_path()] {
            if policy.hidden.iter().any(|h| p.starts_with(h)) {
                return Some("in a credentials path the hook's sandbox hides");
            }
            if p.starts_with("/tmp") && !bound(p) {
                return Some("under /tmp, which the hook's sandbox replaces with a private one");
            }
            if p.starts_with("/run") || p.starts_with("/var/run") {
                return Some("under /run, which the hook's sandbox empties");
            }
        }
        None
    }
}

/// Whether `path` is a file with an execute bit.
fn executable(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Whether `line` may set its own `PATH` (`PATH=…`, `PATH+=…`, `export PATH=…`): only then are
/// names not looked up. A line that merely reads it (`$PATH`, `${PATH}`) or names it in a
/// comment is looked up as usual, so a mention cannot switch the check off.
pub(super) fn sets_search_path(line: &str) -> bool {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    line.match_indices("PATH").any(|(at, _)| {
        let before = line[..at].chars().next_back();
        let after = &line[at + 4..];
        !before.is_some_and(|c| ident(c) || c == '$' || c == '{')
            && (after.starts_with('=') || after.starts_with("+="))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tollgate_sandbox::Network;
    use tollgate_shell::{Profile, analyze};

    fn missing(lookup: &Lookup<'_>, line: &str) -> Vec<String> {
        lookup.missing(&analyze(line, Profile::Trusted).programs)
    }

    fn unconfined<'a>(cwd: &'a Path, search_path: &str) -> Lookup<'a> {
        Lookup {
            search_path: Some(search_path.to_owned()),
            cwd,
            config_dir: None,
            sandbox: None,
            bound: Vec::new(),
            own_search_path: false,
        }
    }

    fn tool(dir: &Path, name: &str, mode: u32) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        path
    }

    #[test]
    fn a_name_missing_from_the_search_path_is_named_with_the_path() {
        let dir = tempfile::tempdir().unwrap();
        tool(dir.path(), "jq", 0o755);
        let lookup = unconfined(dir.path(), "/nonexistent");
        assert_eq!(
            missing(&lookup, "jq . && exit 2 || exit 0"),
            ["program `jq` not found on the hook's PATH (/nonexistent)"]
        );
        let here = format!("/nonexistent:{}", dir.path().display());
        assert!(missing(&unconfined(dir.path(), &here), "jq . && exit 2").is_empty());
    }

    #[test]
    fn scripts_must_exist_and_commands_be_executable() {
        let dir = tempfile::tempdir().unwrap();
        tool(dir.path(), "plain.sh", 0o644);
        tool(dir.path(), "guard.py", 0o644);
        let lookup = unconfined(dir.path(), "/usr/bin:/bin");
        let found = missing(
            &lookup,
            "./gone.sh; ./plain.sh; bash plain.sh; python3 guard.py",
        );
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found[0].starts_with("script `./gone.sh` ("), "{found:?}");
        assert!(found[0].ends_with("gone.sh) not found"), "{found:?}");
        assert!(found[1].contains("is not executable"), "{found:?}");
        assert_eq!(
            missing(&lookup, "python3 nope.py").len(),
            1,
            "a missing interpreter script"
        );
        let folder = Path::new("/etc/hooks");
        let declared = Lookup {
            config_dir: Some(folder),
            ..unconfined(dir.path(), "/usr/bin:/bin")
        };
        let found = missing(&declared, "bash nope.sh");
        assert!(
            found[0].contains("neither in the hook's folder (/etc/hooks)"),
            "{found:?}"
        );
    }

    #[test]
    fn a_tool_only_in_the_private_tmp_is_missing_inside_the_sandbox() {
        let dir = tempfile::Builder::new().tempdir_in("/tmp").unwrap();
        tool(dir.path(), "only-here", 0o755);
        let policy = Policy::new(Network::Off);
        let mut lookup = unconfined(Path::new("/"), &dir.path().display().to_string());
        lookup.sandbox = Some(&policy);
        let found = missing(&lookup, "only-here");
        assert_eq!(found.len(), 1);
        assert!(
            found[0].contains("replaces with a private one"),
            "{found:?}"
        );
        lookup.bound = vec![dir.path()];
        assert!(missing(&lookup, "only-here").is_empty());
    }

    #[test]
    fn lines_that_set_their_own_search_path_are_not_looked_up() {
        assert!(sets_search_path("PATH=/opt/bin:$PATH jq ."));
        assert!(sets_search_path("export PATH=/opt/bin; jq"));
        assert!(sets_search_path("PATH+=:/opt/bin; jq"));
        // Reading it, or a comment, sets nothing: a mention must not switch the check off.
        assert!(!sets_search_path("jq . # PATH"));
        assert!(!sets_search_path("echo \"$PATH\" >&2; jq ."));
        assert!(!sets_search_path("test -n \"${PATH}\"; jq ."));
        assert!(!sets_search_path("export PATH; jq"));
        assert!(!sets_search_path("echo \"$HOOK_PAYLOAD\" | jq ."));
        assert!(!sets_search_path("MYPATHS=1 jq"));
    }

    #[test]
    fn names_after_a_cd_are_not_judged() {
        let lookup = unconfined(Path::new("/"), "/nonexistent");
        assert!(missing(&lookup, "cd /srv && ./deploy.sh").is_empty());
    }
}
