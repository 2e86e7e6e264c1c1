//! What a sandbox lets its commands do: which paths they may write, which they may not even
//! read, and whether they reach the network.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Paths under a home directory that hold credentials: hidden from every sandboxed command.
///
/// Relative to the home directory (`~`). A path that does not exist when the sandbox starts
/// is not hidden (there is nothing to mount over).
pub const HOME_SECRETS: &[&str] = &[
    ".ssh",
    ".claude/.credentials.json",
    ".codex/auth.json",
    ".config/anthropic",
    ".config/openai",
    ".bash_history",
    ".zsh_history",
    ".local/share/fish/fish_history",
    ".python_history",
    ".psql_history",
    ".mysql_history",
    ".node_repl_history",
    ".sqlite_history",
    ".gnupg",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".config/gh",
    ".config/hub",
    ".config/op",
    ".config/tollgate",
    ".docker",
    ".kube",
    ".netrc",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".password-store",
    ".vault-token",
    ".terraform.d/credentials.tfrc.json",
    ".local/share/keyrings",
    ".pgpass",
    ".my.cnf",
];

/// System files that hold credentials: hidden from every sandboxed command (a process mapped
/// to root could otherwise read them).
pub const SYSTEM_SECRETS: &[&str] = &[
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/ssh",
    "/etc/sudoers",
    "/etc/sudoers.d",
    "/var/backups/shadow.bak",
    "/var/backups/gshadow.bak",
];

/// Where the view empties or replaces what is there: a readable path under one of them would
/// bring the host's sockets and devices back, so it is not bound.
const REPLACED: &[&str] = &["/run", "/var/run", "/dev", "/proc"];

/// Default size of a sandbox's private `/tmp`, in bytes (512 MiB).
pub const DEFAULT_TMP_BYTES: u64 = 512 * 1024 * 1024;

/// Network access of a sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Network {
    /// A network namespace of its own with no interface up: nothing is reachable, not even
    /// the host's loopback.
    Off,
    /// A network namespace of its own whose only way out is an HTTP proxy in the runtime
    /// ([`crate::egress`]): `http://` requests and `CONNECT` tunnels to destinations an
    /// [`Egress`](crate::Egress) policy admits. Nothing else is reachable.
    Proxy,
    /// The host's network, as the runtime has it.
    On,
}

/// The containment of one sandbox.
///
/// Everything is read-only but the `writable` paths and a private `/tmp`; `hidden` paths are
/// replaced by empty, unreadable ones. Paths must be absolute; [`Policy::resolve`] makes them
/// canonical (symlinks resolved) the way the launcher needs them.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Policy {
    /// Directories (or existing files) commands may write, at the same paths as outside.
    pub writable: Vec<PathBuf>,
    /// Paths commands must see read-only although the view would hide them (they lie under
    /// the private `/tmp` or the emptied `/run`): a hook's working directory, say. Elsewhere
    /// everything is readable already. Missing paths are skipped.
    #[serde(default)]
    pub readable: Vec<PathBuf>,
    /// Files and directories commands may not read.
    pub hidden: Vec<PathBuf>,
    /// Network access.
    pub network: Network,
    /// Size cap of the private `/tmp`, in bytes.
    pub tmp_bytes: u64,
    /// What each resolved path was when it was resolved (device and inode): the launcher
    /// refuses to build a sandbox where one of them now names another file (a command renamed
    /// a parent directory or swapped in a symlink).
    #[serde(default)]
    pub(crate) pins: Vec<Pin>,
}

/// A path and the file it named when the policy was resolved.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub(crate) struct Pin {
    pub path: PathBuf,
    pub dev: u64,
    pub ino: u64,
}

impl Policy {
    /// A policy with nothing writable but the private `/tmp`, the default secrets hidden
    /// ([`default_hidden`]) and the given network access.
    pub fn new(network: Network) -> Self {
        Self {
            writable: Vec::new(),
            readable: Vec::new(),
            hidden: default_hidden(),
            network,
            tmp_bytes: DEFAULT_TMP_BYTES,
            pins: Vec::new(),
        }
    }

    /// Adds a writable path.
    #[must_use]
    pub fn writable(mut self, path: impl Into<PathBuf>) -> Self {
        self.writable.push(path.into());
        self
    }

    /// Adds a path that must stay visible (read-only) under the private `/tmp` or `/run`.
    #[must_use]
    pub fn readable(mut self, path: impl Into<PathBuf>) -> Self {
        self.readable.push(path.into());
        self
    }

    /// Adds a hidden path.
    #[must_use]
    pub fn hidden(mut self, path: impl Into<PathBuf>) -> Self {
        self.hidden.push(path.into());
        self
    }

    /// The policy the launcher applies: writable paths canonical (created as directories when
    /// missing), readable and hidden paths canonical and only those that exist (readable ones
    /// under `/run`, `/dev` or `/proc` dropped), all sorted and without duplicates, and every
    /// one pinned to the file it names now. A hidden path that is also writable, or lies under
    /// a writable one, stays hidden.
    ///
    /// # Errors
    /// A relative path, or a writable path that cannot be created or resolved.
    pub fn resolve(&self) -> std::io::Result<Policy> {
        let mut writable = Vec::with_capacity(self.writable.len());
        for path in &self.writable {
            require_absolute(path)?;
            if !path.exists() {
                std::fs::create_dir_all(path)?;
            }
            writable.push(path.canonicalize()?);
        }
        // A missing secret has nothing to hide; a symlink hides what it points to.
        let mut hidden = existing(&self.hidden)?;
        let mut readable = existing(&self.readable)?;
        readable.retain(|p| !REPLACED.iter().any(|r| p.starts_with(r)));
        for list in [&mut writable, &mut readable, &mut hidden] {
            list.sort();
            list.dedup();
        }
        let pins = writable
            .iter()
            .chain(&readable)
            .chain(&hidden)
            .map(|path| pin(path))
            .collect::<std::io::Result<_>>()?;
        Ok(Policy {
            writable,
            readable,
            hidden,
            network: self.network,
            tmp_bytes: self.tmp_bytes,
            pins,
        })
    }

    /// The device and inode `path` was pinned to, if it was.
    pub(crate) fn pinned(&self, path: &Path) -> Option<(u64, u64)> {
        self.pins
            .iter()
            .find(|p| p.path == path)
            .map(|p| (p.dev, p.ino))
    }
}

fn pin(path: &Path) -> std::io::Result<Pin> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path)?;
    Ok(Pin {
        path: path.to_owned(),
        dev: meta.dev(),
        ino: meta.ino(),
    })
}

/// The canonical forms of the paths that exist.
fn existing(paths: &[PathBuf]) -> std::io::Result<Vec<PathBuf>> {
    let mut found = Vec::with_capacity(paths.len());
    for path in paths {
        require_absolute(path)?;
        if let Ok(real) = path.canonicalize() {
            found.push(real);
        }
    }
    Ok(found)
}

fn require_absolute(path: &Path) -> std::io::Result<()> {
    if path.is_absolute() {
        Ok(())
    } else {
        Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("sandbox paths must be absolute: {}", path.display()),
        ))
    }
}

/// The secrets every sandbox hides: [`HOME_SECRETS`] under the runtime's `$HOME`, under
/// `/root` and under every directory in `/home`, plus [`SYSTEM_SECRETS`].
pub fn default_hidden() -> Vec<PathBuf> {
    let mut homes: Vec<PathBuf> = std::env::var_os("HOME")
        .map(PathBuf::from)
        .into_iter()
        .collect();
    homes.push(PathBuf::from("/root"));
    if let Ok(entries) = std::fs::read_dir("/home") {
        homes.extend(entries.flatten().map(|entry| entry.path()));
    }
    homes.sort();
    homes.dedup();
    let mut hidden: Vec<PathBuf> = homes
        .iter()
        .filter(|home| home.is_absolute())
        .flat_map(|home| HOME_SECRETS.iter().map(move |rel| home.join(rel)))
        .collect();
    hidden.extend(SYSTEM_SECRETS.iter().map(PathBuf::from));
    hidden
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolve_creates_missing_writable_directories_and_drops_missing_secrets() {
        let dir = tempfile::tempdir().unwrap();
        let wanted = dir.path().join("a/b");
        let policy = Policy {
            writable: vec![wanted.clone()],
            readable: vec![dir.path().join("gone")],
            hidden: vec![dir.path().join("missing"), dir.path().to_owned()],
            network: Network::Off,
            tmp_bytes: 1,
            pins: Vec::new(),
        }
        .resolve()
        .unwrap();
        assert!(wanted.is_dir());
        assert_eq!(policy.writable, [wanted.canonicalize().unwrap()]);
        assert_eq!(policy.hidden, [dir.path().canonicalize().unwrap()]);
        assert!(policy.readable.is_empty());
    }

    #[test]
    fn readable_paths_where_the_view_replaces_the_tree_are_dropped() {
        let policy = Policy::new(Network::Off)
            .readable("/run")
            .readable("/dev/shm")
            .readable("/usr")
            .resolve()
            .unwrap();
        assert_eq!(policy.readable, [PathBuf::from("/usr")]);
        assert!(policy.pinned(Path::new("/usr")).is_some());
    }

    #[test]
    fn relative_paths_are_refused() {
        let policy = Policy::new(Network::Off).writable("relative/dir");
        assert!(policy.resolve().is_err());
    }

    #[test]
    fn the_default_secrets_cover_the_runtime_home_and_root() {
        let hidden = default_hidden();
        assert!(hidden.contains(&PathBuf::from("/root/.ssh")));
        assert!(hidden.contains(&PathBuf::from("/etc/shadow")));
        assert!(hidden.contains(&PathBuf::from("/etc/shadow-")));
        assert!(hidden.contains(&PathBuf::from("/root/.claude/.credentials.json")));
        if let Some(home) = std::env::var_os("HOME") {
            assert!(hidden.contains(&PathBuf::from(home).join(".aws")));
        }
    }
}
