//! Which files a command hook writes that its sandbox does not let it write.
//!
//! The shell analyzer lists the files a command line writes whose path it knows statically
//! (`Analysis::writes`: redirection targets, `tee`, `cp` destinations, …). Each is compared
//! with the writable paths of the hook's sandbox (its scratch directory, the private `/tmp`,
//! what admin files grant): a write elsewhere fails at run time, since everything else is
//! read-only, and a write to `/tmp` lands in the sandbox's own `/tmp`, which the host never
//! sees. Paths the analyzer cannot see (`> "$LOG"`, a script's own writes) are not judged.

use std::path::{Component, Path, PathBuf};

use serde::Serialize;

/// A file a hook's command writes, and whether its sandbox lets it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Write {
    /// The path as the analyzer read it (`~` for the home directory; relative paths are
    /// relative to the directory tollgate runs in).
    pub path: String,
    /// `writable`, `read_only` (the write fails) or `private_tmp` (it works, in the
    /// sandbox's own `/tmp`).
    pub access: Access,
    /// The directory an admin file would grant for it (`read_only` only; none for a file
    /// right under `/` or the home directory).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grant: Option<String>,
}

/// Whether a sandbox lets a command write a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Access {
    /// Under a writable path.
    Writable,
    /// Read-only in the sandbox: the write fails.
    ReadOnly,
    /// Under `/tmp` (or `/var/tmp`, `/dev/shm`): the sandbox's own, empty at its start and
    /// never seen by the host.
    PrivateTmp,
}

/// The files `command` writes, judged against `sandbox` (the hook's summary from
/// `ResolvedHook::sandbox`: `"off"` or `{"network", "writable": [...]}`); empty when the
/// hook is not sandboxed or writes nothing the analyzer can name.
pub fn judge(
    command: &str,
    profile: tollgate_shell::Profile,
    sandbox: &serde_json::Value,
) -> Vec<Write> {
    let Some(granted) = sandbox["writable"].as_array() else {
        return Vec::new();
    };
    let granted: Vec<PathBuf> = granted
        .iter()
        .filter_map(|p| p.as_str())
        .map(|p| lexical(Path::new(p)))
        .collect();
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    tollgate_shell::analyze(command, profile)
        .writes
        .into_iter()
        .map(|path| {
            let absolute = absolute(&path, home.as_deref(), &cwd);
            let access = access(&absolute, &granted);
            let grant = match access {
                Access::ReadOnly => grant_for(&path, &absolute, home.as_deref()),
                _ => None,
            };
            Write {
                path,
                access,
                grant,
            }
        })
        .collect()
}

fn access(path: &Path, granted: &[PathBuf]) -> Access {
    if granted.iter().any(|g| path.starts_with(g)) {
        Access::Writable
    } else if ["/tmp", "/var/tmp", "/dev/shm"]
        .iter()
        .any(|t| path.starts_with(t))
    {
        Access::PrivateTmp
    } else {
        Access::ReadOnly
    }
}

/// `path` from the analyzer made absolute: `~` is `home`, relative paths are under `cwd`.
fn absolute(path: &str, home: Option<&Path>, cwd: &Path) -> PathBuf {
    let joined = match (path.strip_prefix('~'), home) {
        (Some(rest), Some(home)) if rest.is_empty() || rest.starts_with('/') => {
            home.join(rest.trim_start_matches('/'))
        }
        _ => cwd.join(path),
    };
    lexical(&joined)
}

/// `path` with `.` and `..` resolved by name (the file may not exist yet).
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The directory to grant for a write to `path` (as the analyzer read it, `absolute` once
/// resolved): its parent, or itself for a directory a tool fills (`…/`); `~` kept for the
/// home, relative paths shown absolute. `None` for a file right under `/` or the home: a
/// writable path is a directory (it is created when missing), and granting `/` or the whole
/// home would hand over every start-up file.
pub fn grant_for(path: &str, absolute: &Path, home: Option<&Path>) -> Option<String> {
    if let Some(dir) = path.strip_suffix('/') {
        return Some(dir.to_owned());
    }
    let parent = absolute.parent()?;
    if parent == Path::new("/") || Some(parent) == home {
        return None;
    }
    match path.rsplit_once('/') {
        Some((dir, _)) if path.starts_with("~/") => Some(dir.to_owned()),
        _ => Some(parent.display().to_string()),
    }
}

/// `paths` as a YAML flow sequence of double-quoted strings (a JSON string is one), so a
/// path with `,`, `: `, `[`, `#` or a leading `~` pastes as itself.
pub fn yaml_list(paths: &[&str]) -> String {
    let quoted: Vec<String> = paths
        .iter()
        .map(|p| serde_json::Value::from(*p).to_string())
        .collect();
    format!("[{}]", quoted.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_and_home_paths_are_made_absolute() {
        let home = Path::new("/home/u");
        let cwd = Path::new("/srv/project");
        assert_eq!(
            absolute("~/.myrm/a.log", Some(home), cwd),
            Path::new("/home/u/.myrm/a.log")
        );
        assert_eq!(absolute("~", Some(home), cwd), Path::new("/home/u"));
        assert_eq!(
            absolute("log/a.txt", Some(home), cwd),
            Path::new("/srv/project/log/a.txt")
        );
        assert_eq!(absolute("../x", Some(home), cwd), Path::new("/srv/x"));
        assert_eq!(
            absolute("~x/y", Some(home), cwd),
            Path::new("/srv/project/~x/y")
        );
    }

    #[test]
    fn a_climb_out_of_a_granted_directory_is_not_granted() {
        let granted = [PathBuf::from("/var/log/tollgate")];
        let path = lexical(Path::new("/var/log/tollgate/../syslog"));
        assert_eq!(access(&path, &granted), Access::ReadOnly);
        assert_eq!(
            access(Path::new("/var/log/tollgate/a.log"), &granted),
            Access::Writable
        );
        assert_eq!(
            access(Path::new("/tmp/a.log"), &granted),
            Access::PrivateTmp
        );
        assert_eq!(access(Path::new("/tmpx/a.log"), &granted), Access::ReadOnly);
    }

    #[test]
    fn the_grant_is_the_parent_directory_never_the_home_or_the_root() {
        let home = Some(Path::new("/home/u"));
        let grant = |path: &str, absolute: &str| grant_for(path, Path::new(absolute), home);
        let some = |s: &str| Some(s.to_owned());
        assert_eq!(
            grant("~/.myrm/audit.log", "/home/u/.myrm/audit.log"),
            some("~/.myrm")
        );
        assert_eq!(grant("/var/log/app/", "/var/log/app"), some("/var/log/app"));
        assert_eq!(
            grant("audit.log", "/srv/project/audit.log"),
            some("/srv/project")
        );
        assert_eq!(grant("/x", "/x"), None);
        assert_eq!(grant("~/audit.log", "/home/u/audit.log"), None);
    }

    #[test]
    fn grants_paste_as_yaml_whatever_the_path_holds() {
        assert_eq!(yaml_list(&["~/.myrm"]), r#"["~/.myrm"]"#);
        assert_eq!(
            yaml_list(&["/a,b", "/e: f", "~/[x]"]),
            r#"["/a,b", "/e: f", "~/[x]"]"#
        );
        assert_eq!(yaml_list(&["/q\"x"]), r#"["/q\"x"]"#);
    }
}
