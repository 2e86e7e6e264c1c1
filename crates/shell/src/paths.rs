//! Path classification on word values (see [`crate::word`]: `~` stands for any home directory,
//! NUL for an unknown part).

use crate::word::UNKNOWN;

/// Top-level directories whose recursive deletion or permission change breaks the machine.
const SYSTEM_DIRS: &[&str] = &[
    "/bin",
    "/boot",
    "/dev",
    "/etc",
    "/home",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/opt",
    "/proc",
    "/root",
    "/sbin",
    "/srv",
    "/sys",
    "/usr",
    "/var",
    "/snap",
    "/Users",
    "/System",
    "/Library",
    "/Applications",
    "/private",
    "/usr/bin",
    "/usr/sbin",
    "/usr/lib",
    "/usr/lib64",
    "/usr/local",
    "/usr/share",
    "/usr/include",
    "/var/lib",
    "/var/log",
    "/var/spool",
];

/// File names that a login or interactive shell runs at start-up.
const STARTUP_FILES: &[&str] = &[
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".bash_aliases",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".zlogout",
    ".kshrc",
    ".mkshrc",
    ".cshrc",
    ".tcshrc",
    ".login",
    ".logout",
    ".xprofile",
    ".xsession",
    ".xinitrc",
    "config.fish",
];

const ETC_STARTUP: &[&str] = &[
    "/etc/profile",
    "/etc/bash.bashrc",
    "/etc/bashrc",
    "/etc/zshrc",
    "/etc/zprofile",
    "/etc/zshenv",
    "/etc/zlogin",
    "/etc/zlogout",
    "/etc/environment",
    "/etc/csh.cshrc",
    "/etc/csh.login",
    "/etc/ksh.kshrc",
    "/etc/mkshrc",
];

const ETC_STARTUP_DIRS: &[&str] = &[
    "/etc/profile.d/",
    "/etc/zsh/",
    "/etc/fish/",
    "/etc/bash_completion.d/",
];

const HISTORY_FILES: &[&str] = &[
    ".bash_history",
    ".zsh_history",
    ".zhistory",
    ".sh_history",
    ".history",
    "fish_history",
];

const AUTH_FILES: &[&str] = &[
    "/etc/sudoers",
    "/etc/passwd",
    "/etc/shadow",
    "/etc/group",
    "/etc/gshadow",
    "/etc/ld.so.preload",
    "/etc/crontab",
    "/etc/anacrontab",
    "/etc/doas.conf",
    "/etc/rc.local",
    "/etc/gitconfig",
];

/// Directories (under a home) whose files are run later on their own: user services,
/// desktop autostart entries, launch agents.
const PERSISTENCE_DIRS: &[&str] = &[
    ".config/systemd/user",
    ".config/autostart",
    "Library/LaunchAgents",
    ".local/share/systemd/user",
];

/// Files (under a home) that make programs run later: git's global configuration.
const PERSISTENCE_FILES: &[&str] = &[".gitconfig", ".config/git/config"];

const AUTH_DIRS: &[&str] = &[
    "/etc/sudoers.d/",
    "/etc/pam.d/",
    "/etc/cron.d/",
    "/etc/cron.daily/",
    "/etc/cron.hourly/",
    "/etc/cron.weekly/",
    "/etc/cron.monthly/",
    "/var/spool/cron/",
    "/etc/systemd/",
    "/etc/init.d/",
    "/etc/init/",
    "/etc/cron.yearly/",
    "/etc/xdg/autostart/",
    "/lib/systemd/system/",
    "/usr/lib/systemd/",
    "/Library/LaunchAgents/",
    "/Library/LaunchDaemons/",
    "/etc/security/",
];

/// Device nodes that are fine to write to.
const SAFE_DEVICES: &[&str] = &[
    "null", "zero", "full", "random", "urandom", "stdin", "stdout", "stderr", "tty", "console",
    "ptmx",
];
const SAFE_DEVICE_DIRS: &[&str] = &["fd/", "pts/", "shm/", "tcp/", "udp/", "tty", "mqueue/"];

/// A file whose modification the analyzer refuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sensitive {
    /// A block, memory or other raw device.
    Device,
    /// Inside an `.ssh` directory or `/etc/ssh`.
    Ssh,
    /// A shell start-up file.
    Startup,
    /// A shell history file.
    History,
    /// Authentication or system start-up configuration.
    Auth,
    /// A kernel control file (`/proc/sysrq-trigger`, `/proc/sys/*`).
    Kernel,
    /// A user service, autostart entry, launch agent or global git configuration.
    Persistence,
    /// A start-up file of another program, a command shim or a system hook directory (see
    /// [`crate::autorun`]).
    Autorun,
}

/// Lexically normalised path: no empty or `.` components, `..` resolved, no trailing `/`.
/// Absolute paths start with `/`, home paths with `~` (also `~user`), others are relative.
pub(crate) fn normalize(path: &str) -> String {
    let (mut anchor, rest) = if let Some(rest) = path.strip_prefix('/') {
        ("/", rest)
    } else if path.starts_with('~') {
        let end = path.find('/').unwrap_or(path.len());
        (&path[..end], &path[end..])
    } else {
        ("", path)
    };
    let mut parts: Vec<&str> = Vec::new();
    for part in rest.split('/') {
        match part {
            "" | "." => {}
            ".." if !parts.is_empty() && parts.last() != Some(&"..") => {
                parts.pop();
            }
            // `~/..` is the directory of all homes: as bad as the root.
            ".." if anchor.starts_with('~') => return "/".to_owned(),
            ".." if anchor == "/" => {}
            other => {
                parts.push(other);
                if anchor == "/"
                    && let Some(dir) = proc_directory(&parts)
                {
                    // A link to another directory: what follows (`..` too) starts there.
                    parts.clear();
                    anchor = dir;
                }
            }
        }
    }
    let body = parts.join("/");
    match anchor {
        "/" => format!("/{body}"),
        "" => body,
        home if body.is_empty() => home.to_owned(),
        home => format!("{home}/{body}"),
    }
}

/// The directory `/proc/<pid>/root` (a process's root directory: `/` for every process the
/// analyzer cares about) or `/proc/<pid>/cwd` (its current directory) link to, when
/// `parts` are the components of one: `/` (`""` for the shell's own current directory,
/// `/proc/self/cwd`, whose contents are relative paths).
fn proc_directory(parts: &[&str]) -> Option<&'static str> {
    match parts {
        ["proc", _, "root"] => Some("/"),
        ["proc", "self" | "thread-self", "cwd"] => Some(""),
        ["proc", _, "cwd"] => Some("/"),
        _ => None,
    }
}

/// Expands `{a,b}` and `{1..3}`-free comma braces, at most 64 results; other text unchanged.
pub(crate) fn expand_braces(text: &str) -> Vec<String> {
    let mut out = vec![text.to_owned()];
    for _ in 0..4 {
        let mut next = Vec::new();
        let mut changed = false;
        for item in &out {
            match split_brace(item) {
                Some((pre, alts, post)) => {
                    changed = true;
                    next.extend(alts.iter().map(|a| format!("{pre}{a}{post}")));
                }
                None => next.push(item.clone()),
            }
            if next.len() > 64 {
                return out;
            }
        }
        out = next;
        if !changed {
            break;
        }
    }
    out
}

fn split_brace(text: &str) -> Option<(&str, Vec<&str>, &str)> {
    let open = text.find('{')?;
    let close = open + text[open..].find('}')?;
    let inner = &text[open + 1..close];
    if !inner.contains(',') || inner.contains('{') {
        return None;
    }
    Some((
        &text[..open],
        inner.split(',').collect(),
        &text[close + 1..],
    ))
}

fn has_glob(s: &str) -> bool {
    s.contains(['*', '?', '['])
}

/// Whether a recursive delete or permission change of `path` is destructive: the root, a home
/// directory, a system directory, or a glob at their top level (`/*`, `~/*`, `/u*`).
pub(crate) fn is_protected_tree(path: &str) -> bool {
    expand_braces(path).iter().any(|alt| {
        let n = normalize(alt);
        // Cut at the first component with a glob: `/usr/*` is as bad as `/usr`.
        let cut = match n.split('/').position(has_glob) {
            Some(0) if n.starts_with('~') => return true,
            Some(0) => return false,
            Some(k) => {
                let kept: Vec<&str> = n.split('/').take(k).collect();
                let joined = kept.join("/");
                if joined.is_empty() {
                    "/".to_owned()
                } else {
                    joined
                }
            }
            None => n,
        };
        is_protected_dir(&cut)
    })
}

/// A relative path that names the whole current directory or all of its entries: `.`, `./`,
/// `*`, `./*`, `.*`.
pub(crate) fn is_whole_directory(path: &str) -> bool {
    if path.starts_with(['/', '~']) || path.contains(UNKNOWN) {
        return false;
    }
    let n = normalize(path);
    n.is_empty()
        || n.split('/')
            .next()
            .is_some_and(|first| first.chars().all(|c| matches!(c, '*' | '.' | '?')))
}

fn is_protected_dir(n: &str) -> bool {
    if n.contains(UNKNOWN) {
        return false;
    }
    if n == "/" || (n.starts_with('~') && !n.contains('/')) {
        return true;
    }
    if SYSTEM_DIRS.contains(&n) {
        return true;
    }
    is_home_dir(n)
}

/// `~`, `~user`, `/root`, `/home/<name>`, `/Users/<name>`.
pub(crate) fn is_home_dir(n: &str) -> bool {
    if n.starts_with('~') {
        return !n.contains('/');
    }
    if n == "/root" {
        return true;
    }
    ["/home/", "/Users/"].iter().any(|p| {
        n.strip_prefix(p)
            .is_some_and(|user| !user.is_empty() && !user.contains('/'))
    })
}

/// Path components with glob characters compiled for one [`sensitive`] question, over all
/// its brace alternatives; a path needing more is [`TooComplex`].
pub(crate) const MAX_GLOB_PARTS: usize = 16;

/// A write target whose glob components are too many to match ([`MAX_GLOB_PARTS`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TooComplex;

/// What kind of sensitive file `path` is, if any.
///
/// # Errors
///
/// [`TooComplex`] when answering would compile more than [`MAX_GLOB_PARTS`] globs.
pub(crate) fn sensitive(path: &str) -> Result<Option<Sensitive>, TooComplex> {
    let alts: Vec<String> = expand_braces(path).iter().map(|a| normalize(a)).collect();
    if glob_parts(&alts) > MAX_GLOB_PARTS {
        return Err(TooComplex);
    }
    Ok(alts.iter().find_map(|n| {
        sensitive_one(n).or_else(|| if has_glob(n) { sensitive_glob(n) } else { None })
    }))
}

/// How many globs [`sensitive`] compiles for `path` (each costs some microseconds).
pub(crate) fn globs(path: &str) -> usize {
    if !has_glob(path) {
        return 0;
    }
    let alts: Vec<String> = expand_braces(path).iter().map(|a| normalize(a)).collect();
    glob_parts(&alts)
}

/// Glob components of the normalised alternatives that are matched as globs.
fn glob_parts(alts: &[String]) -> usize {
    alts.iter()
        .filter(|n| has_glob(n) && sensitive_one(n).is_none())
        .map(|n| n.split('/').filter(|p| has_glob(p)).count())
        .sum()
}

/// Files outside homes whose modification is refused, as examples a glob is tried against
/// (`/etc/sudoer?`, `/e*/profile`).
const GLOB_FILES: &[&str] = &[
    "/etc/ssh/sshd_config",
    "/dev/sda",
    "/dev/sda1",
    "/dev/nvme0n1",
    "/dev/mem",
    "/proc/sysrq-trigger",
];

/// What a write target with glob characters (bash expands them in redirections and
/// arguments) could name: it is compiled as a glob and tried, component by component, against
/// the protected names (`.ssh` anywhere, start-up and history file names as the last
/// component) and the protected files and directories outside homes. Bash's default
/// `*`/`?` do not match a leading `.`, so `*` cannot name `.bashrc` but `.*rc` can.
fn sensitive_glob(n: &str) -> Option<Sensitive> {
    let parts: Vec<Component<'_>> = n.split('/').map(Component::new).collect();
    if parts.iter().any(|p| p.matches(".ssh")) {
        return Some(Sensitive::Ssh);
    }
    let last = parts.last()?;
    let fish_dir = parts.len() > 1 && parts[parts.len() - 2].matches("fish");
    let startup = STARTUP_FILES
        .iter()
        .any(|f| last.matches(f) && (f.starts_with('.') || fish_dir));
    if startup {
        return Some(Sensitive::Startup);
    }
    let history = HISTORY_FILES
        .iter()
        .any(|f| last.matches(f) && (f.starts_with('.') || fish_dir));
    if history {
        return Some(Sensitive::History);
    }
    let files = ETC_STARTUP.iter().chain(AUTH_FILES).chain(GLOB_FILES);
    for file in files {
        let want: Vec<&str> = file.split('/').collect();
        if want.len() == parts.len() && parts.iter().zip(&want).all(|(p, w)| p.matches(w)) {
            return sensitive_one(file);
        }
    }
    let dirs = ETC_STARTUP_DIRS
        .iter()
        .chain(AUTH_DIRS)
        .chain(&["/etc/ssh/", "/proc/sys/"]);
    for dir in dirs {
        let want: Vec<&str> = dir.trim_end_matches('/').split('/').collect();
        if parts.len() > want.len() && parts.iter().zip(&want).all(|(p, w)| p.matches(w)) {
            return sensitive_one(&format!("{dir}x"));
        }
    }
    None
}

/// One path component of a glob, compiled when it has glob characters.
struct Component<'a> {
    text: &'a str,
    glob: Option<globset::GlobMatcher>,
}

impl<'a> Component<'a> {
    fn new(text: &'a str) -> Self {
        let glob = has_glob(text)
            .then(|| {
                globset::GlobBuilder::new(text)
                    .literal_separator(true)
                    .backslash_escape(true)
                    .build()
                    .ok()
            })
            .flatten()
            .map(|g| g.compile_matcher());
        Component { text, glob }
    }

    /// Whether bash could expand this component to `name`.
    fn matches(&self, name: &str) -> bool {
        match &self.glob {
            None => self.text == name,
            // Without `dotglob`, a leading `.` must be matched literally.
            Some(_) if name.starts_with('.') && !self.text.starts_with('.') => false,
            Some(glob) => glob.is_match(name),
        }
    }
}

fn sensitive_one(n: &str) -> Option<Sensitive> {
    if n == "/proc/sysrq-trigger" || n.starts_with("/proc/sys/") {
        return Some(Sensitive::Kernel);
    }
    if let Some(dev) = n.strip_prefix("/dev/") {
        let safe =
            SAFE_DEVICES.contains(&dev) || SAFE_DEVICE_DIRS.iter().any(|d| dev.starts_with(d));
        return (!safe).then_some(Sensitive::Device);
    }
    let mut components = n.split('/');
    let name = n.rsplit('/').next().unwrap_or(n);
    if components.any(|c| c == ".ssh") || n == "/etc/ssh" || n.starts_with("/etc/ssh/") {
        return Some(Sensitive::Ssh);
    }
    let etc_startup = ETC_STARTUP.contains(&n) || ETC_STARTUP_DIRS.iter().any(|d| n.starts_with(d));
    if STARTUP_FILES.contains(&name) || etc_startup || n.contains(".config/fish/") {
        return Some(Sensitive::Startup);
    }
    if HISTORY_FILES.contains(&name) {
        return Some(Sensitive::History);
    }
    let auth_dir = AUTH_DIRS
        .iter()
        .any(|d| n.starts_with(d) || n == &d[..d.len() - 1]);
    if AUTH_FILES.contains(&n) || auth_dir {
        return Some(Sensitive::Auth);
    }
    // `n` is `tail` or ends with `/tail`; `n` has `dir` as a whole component sequence.
    let under = |tail: &str| {
        n.strip_suffix(tail)
            .is_some_and(|head| head.is_empty() || head.ends_with('/'))
    };
    let inside = |dir: &str| {
        let mut from = 0;
        while let Some(k) = n[from..].find(dir) {
            let at = from + k;
            if (at == 0 || n[..at].ends_with('/')) && n[at + dir.len()..].starts_with('/') {
                return true;
            }
            // Occurrences may overlap; the dirs start with an ASCII character.
            from = at + 1;
        }
        under(dir)
    };
    if PERSISTENCE_DIRS.iter().any(|d| inside(d)) || PERSISTENCE_FILES.iter().any(|f| under(f)) {
        return Some(Sensitive::Persistence);
    }
    crate::autorun::classify(n)
}

/// The file a copy of `source` into directory `dest` creates, when `dest` is a home or `.ssh`
/// directory (`cp .bashrc ~`), else `None`.
pub(crate) fn copied_into(dest: &str, source: &str) -> Option<String> {
    let d = normalize(dest);
    let into = is_home_dir(&d) || d.ends_with("/.ssh") || d == "/etc" || d == "/etc/ssh";
    let into = into || crate::autorun::is_shim_dir(&d);
    let name = normalize(source);
    let name = name.rsplit('/').next().unwrap_or(&name);
    (into && !name.is_empty()).then(|| format!("{d}/{name}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_collapses_spellings() {
        assert_eq!(normalize("//usr/./lib/.."), "/usr");
        assert_eq!(normalize("/.."), "/");
        assert_eq!(normalize("~/"), "~");
        assert_eq!(normalize("~/.."), "/");
        assert_eq!(normalize("a/../../b"), "../b");
    }

    #[test]
    fn proc_root_and_cwd_links_are_followed() {
        assert_eq!(normalize("/proc/self/root"), "/");
        assert_eq!(normalize("/proc/1/root/etc/"), "/etc");
        assert_eq!(normalize("/proc/self/root/proc/self/root/usr"), "/usr");
        assert_eq!(normalize("/proc/self/root/.."), "/");
        assert_eq!(normalize("/proc/42/cwd/x"), "/x");
        assert_eq!(normalize("/proc/self/cwd/x"), "x");
        assert_eq!(normalize("/proc/self/cwd/.."), "..");
        assert_eq!(normalize("/proc/self/status"), "/proc/self/status");
        assert_eq!(normalize("/proc/sys/kernel"), "/proc/sys/kernel");
    }

    #[test]
    fn protected_trees() {
        for p in [
            "/",
            "//",
            "/.",
            "/*",
            "~",
            "~/",
            "~/*",
            "~root",
            "/etc/",
            "/usr/*",
            "/u*",
            "/home/bob",
            "/{tmp,etc}",
            "/usr/lib/..",
        ] {
            assert!(is_protected_tree(p), "{p}");
        }
        for p in [
            "build",
            "./*",
            "/tmp/x",
            "/usr/lib/x",
            "~/project",
            "*",
            ".",
            "\0",
            "\0/x",
            "",
        ] {
            assert!(!is_protected_tree(p), "{p}");
        }
    }

    #[test]
    fn whole_directory() {
        for p in [".", "./", "*", "./*", ".*", "*/"] {
            assert!(is_whole_directory(p), "{p}");
        }
        for p in ["build", "*.o", "src/*", "/", "~"] {
            assert!(!is_whole_directory(p), "{p}");
        }
    }

    fn sensitive_ok(path: &str) -> Option<Sensitive> {
        sensitive(path).unwrap()
    }

    #[test]
    fn paths_with_too_many_globs_are_not_matched() {
        let deep = "/a*".repeat(MAX_GLOB_PARTS + 1);
        assert_eq!(sensitive(&deep), Err(TooComplex));
        assert_eq!(sensitive_ok(&"/a*".repeat(MAX_GLOB_PARTS)), None);
    }

    #[test]
    fn sensitive_files() {
        assert_eq!(sensitive_ok("~/.ssh/authorized_keys"), Some(Sensitive::Ssh));
        assert_eq!(sensitive_ok("/home/x/.bashrc"), Some(Sensitive::Startup));
        assert_eq!(
            sensitive_ok("/etc/profile.d/a.sh"),
            Some(Sensitive::Startup)
        );
        assert_eq!(sensitive_ok("/dev/sda"), Some(Sensitive::Device));
        assert_eq!(sensitive_ok("/dev/null"), None);
        assert_eq!(sensitive_ok("/dev/fd/3"), None);
        assert_eq!(sensitive_ok("/etc/sudoers.d/x"), Some(Sensitive::Auth));
        assert_eq!(sensitive_ok("audit.log"), None);
        assert_eq!(sensitive_ok("~/.ss?/authorized_keys"), Some(Sensitive::Ssh));
        assert_eq!(sensitive_ok("~/.bash[r]c"), Some(Sensitive::Startup));
        assert_eq!(sensitive_ok("/home/*/.*rc"), Some(Sensitive::Startup));
        assert_eq!(sensitive_ok("/etc/sudoer?"), Some(Sensitive::Auth));
        assert_eq!(sensitive_ok("/e*/profile.d/*.sh"), Some(Sensitive::Startup));
        assert_eq!(sensitive_ok("/dev/sd?"), Some(Sensitive::Device));
        assert_eq!(sensitive_ok("~/*"), None);
        assert_eq!(sensitive_ok("build/*.log"), None);
        assert_eq!(sensitive_ok("/tmp/x?"), None);
        assert_eq!(
            copied_into("~", "dotfiles/.bashrc").as_deref(),
            Some("~/.bashrc")
        );
        assert_eq!(copied_into("backup/", ".bashrc"), None);
    }
}
