//! Files that programs load and run on their own later, beyond the shell start-up files of
//! [`crate::paths`]: start-up files of editors, terminals, debuggers and readline, Python's
//! start-up hooks, shims of common commands ahead in `PATH`, system hook directories; and
//! settings that make tools run programs when a human uses them (git hooks, `.envrc`,
//! package-manager configuration).
//!
//! Paths are normalised word values (see [`crate::paths::normalize`]): `~` stands for any
//! home directory.

use crate::paths::Sensitive;

/// File names that an X session sources as shell code.
const SESSION_FILES: &[&str] = &[".xsessionrc"];

/// Start-up files of interactive programs (matched by file name anywhere).
const TOOL_STARTUP_FILES: &[&str] = &[
    ".vimrc",
    ".gvimrc",
    ".exrc",
    ".nvimrc",
    ".tmux.conf",
    ".screenrc",
    ".inputrc",
    ".gdbinit",
    ".lldbinit",
    ".emacs",
    ".pythonrc",
    ".pythonstartup",
    ".irbrc",
    ".pryrc",
    ".perldb",
    ".xbindkeysrc",
    ".lesskey",
    ".bash_completion",
    ".pam_environment",
    "sitecustomize.py",
    "usercustomize.py",
    ".wgetrc",
    ".curlrc",
    ".Rprofile",
    ".pdbrc",
    ".psqlrc",
    ".sqliterc",
    ".ghci",
    ".octaverc",
    ".tclshrc",
    ".wishrc",
    ".mavenrc",
    ".mailcap",
    ".muttrc",
    ".xsession",
    ".xprofile",
    ".xinitrc",
    ".Xclients",
];

/// Directories (under a home, as whole components) whose files programs load at start-up.
const TOOL_STARTUP_DIRS: &[&str] = &[
    ".config/nvim",
    ".vim/plugin",
    ".vim/autoload",
    ".vim/ftplugin",
    ".vim/after",
    ".vim/pack",
    ".config/tmux",
    ".emacs.d",
    ".config/emacs",
    ".config/gdb",
    ".config/environment.d",
    ".config/plasma-workspace/env",
    ".config/plasma-workspace/shutdown",
    ".config/autostart-scripts",
    ".kde/Autostart",
    ".config/i3",
    ".i3",
    ".config/sway",
    ".config/hypr",
    ".config/openbox",
    ".config/lxsession",
    ".ipython",
    ".config/ipython",
    ".jupyter",
    ".gradle/init.d",
    ".config/powershell",
    ".julia/config",
    ".local/share/applications",
];

/// System directories and files whose contents run on their own (prefixes of normalised
/// absolute paths; a trailing `/` means "inside").
const SYSTEM_HOOKS: &[&str] = &[
    "/etc/apt/apt.conf.d/",
    "/etc/apt/apt.conf",
    "/etc/update-motd.d/",
    "/etc/udev/rules.d/",
    "/lib/udev/rules.d/",
    "/usr/lib/udev/rules.d/",
    "/run/udev/rules.d/",
    "/etc/modprobe.d/",
    "/lib/modprobe.d/",
    "/usr/lib/modprobe.d/",
    "/etc/modules-load.d/",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d/",
    "/etc/NetworkManager/dispatcher.d/",
    "/etc/network/if-up.d/",
    "/etc/network/if-down.d/",
    "/etc/network/if-pre-up.d/",
    "/etc/network/if-post-down.d/",
    "/etc/dhcp/dhclient-enter-hooks.d/",
    "/etc/dhcp/dhclient-exit-hooks.d/",
    "/etc/ppp/ip-up.d/",
    "/etc/X11/Xsession.d/",
    "/etc/X11/xinit/",
    "/etc/logrotate.conf",
    "/etc/logrotate.d/",
    "/etc/sysctl.conf",
    "/etc/sysctl.d/",
    "/run/systemd/",
    "/usr/local/lib/systemd/",
    "/etc/rc.d/",
    "/etc/rcS.d/",
    "/etc/rc0.d/",
    "/etc/rc1.d/",
    "/etc/rc2.d/",
    "/etc/rc3.d/",
    "/etc/rc4.d/",
    "/etc/rc5.d/",
    "/etc/rc6.d/",
    "/etc/inputrc",
    "/etc/vimrc",
    "/etc/vim/",
    "/etc/tmux.conf",
    "/etc/gdb/",
    "/etc/polkit-1/",
    "/usr/share/polkit-1/rules.d/",
    "/etc/dbus-1/",
    "/usr/share/dbus-1/",
    "/etc/kernel/postinst.d/",
    "/etc/initramfs-tools/hooks/",
    "/etc/grub.d/",
    "/usr/share/bash-completion/completions/",
    "/etc/needrestart/",
];

/// Directories every user's `PATH` holds: any file written there is a program others run.
const SYSTEM_BIN_DIRS: &[&str] = &["/bin", "/sbin", "/usr/bin", "/usr/sbin"];

/// Command names a shim in an earlier `PATH` directory would catch: the system's own commands,
/// those that handle credentials or privileges, shells and interpreters. Tools people install
/// into `~/.local/bin` themselves (`jq`, `gh`, `kubectl`, `uv`, …) are not in it.
const COMMON_COMMANDS: &[&str] = &[
    "sudo",
    "su",
    "doas",
    "pkexec",
    "login",
    "passwd",
    "ssh",
    "scp",
    "sftp",
    "ssh-add",
    "ssh-agent",
    "ssh-keygen",
    "git",
    "gpg",
    "openssl",
    "python",
    "python3",
    "pip",
    "pip3",
    "node",
    "npm",
    "npx",
    "perl",
    "ruby",
    "php",
    "sh",
    "bash",
    "zsh",
    "dash",
    "fish",
    "ksh",
    "env",
    "make",
    "gcc",
    "cc",
    "curl",
    "wget",
    "tar",
    "unzip",
    "grep",
    "sed",
    "awk",
    "find",
    "xargs",
    "id",
    "whoami",
    "ps",
    "kill",
    "top",
    "less",
    "more",
    "man",
    "vi",
    "vim",
    "nvim",
    "nano",
    "emacs",
    "systemctl",
    "apt",
    "apt-get",
    "yum",
    "dnf",
    "brew",
    "chmod",
    "chown",
    "mount",
    "umount",
    "ls",
    "cat",
    "cp",
    "mv",
    "rm",
    "ln",
    "mkdir",
    "touch",
    "echo",
    "printf",
    "test",
    "head",
    "tail",
    "sort",
    "wc",
    "date",
    "uname",
    "hostname",
    "which",
    "tmux",
    "screen",
    "rsync",
    "dd",
    "true",
    "false",
];

/// What `n` (a normalised path) is, when it is one of this module's places.
pub(crate) fn classify(n: &str) -> Option<Sensitive> {
    let name = n.rsplit('/').next().unwrap_or(n);
    if SESSION_FILES.contains(&name) {
        return Some(Sensitive::Startup);
    }
    // Cheap tests first: this runs for every write target.
    let dotted = n.starts_with('.') || n.as_bytes().windows(2).any(|w| w == b"/.");
    let system = ["/etc/", "/lib/", "/usr/", "/run/"]
        .iter()
        .any(|d| n.starts_with(d));
    let autorun = TOOL_STARTUP_FILES.contains(&name)
        || (dotted && TOOL_STARTUP_DIRS.iter().any(|d| inside(n, d)))
        || python_path_hook(n, name)
        || shim(n, name)
        || (system && SYSTEM_HOOKS.iter().any(|h| system_hook(n, h)));
    if autorun {
        return Some(Sensitive::Autorun);
    }
    runs_programs(n, name, dotted).then_some(Sensitive::Persistence)
}

/// Whether a copy into directory `d` (normalised) lands a program by its own name in a `PATH`
/// directory (`cp ls ~/.local/bin/`), so the copied file's name must be checked.
pub(crate) fn is_shim_dir(d: &str) -> bool {
    SYSTEM_BIN_DIRS.contains(&d) || shim_dir(d)
}

/// Settings that make a tool run a program when someone uses it next: git hooks and
/// repository configuration, direnv files, package-manager configuration.
fn runs_programs(n: &str, name: &str, dotted: bool) -> bool {
    if !dotted && name != "pip.conf" {
        return false;
    }
    let parent = n.rsplit('/').nth(1).unwrap_or_default();
    inside(n, ".git/hooks")
        || inside(n, ".husky")
        || ends_with_components(n, ".git/config")
        || matches!(
            name,
            ".envrc"
                | ".direnvrc"
                | ".npmrc"
                | ".yarnrc"
                | ".yarnrc.yml"
                | ".condarc"
                | ".hgrc"
                | ".my.cnf"
                | ".gemrc"
                | ".bunfig.toml"
        )
        || ends_with_components(n, ".cargo/config.toml")
        || ends_with_components(n, ".cargo/config")
        || ends_with_components(n, ".gradle/gradle.properties")
        || inside(n, ".config/direnv")
        || ends_with_components(n, ".docker/config.json")
        || ends_with_components(n, ".kube/config")
        || ends_with_components(n, ".aws/config")
        || (name == "pip.conf" && matches!(parent, ".pip" | "pip" | "etc"))
}

/// `.pth` files in a `site-packages` or `dist-packages` directory run their `import` lines at
/// every Python start.
fn python_path_hook(n: &str, name: &str) -> bool {
    name.ends_with(".pth")
        && n.split('/')
            .any(|c| c == "site-packages" || c == "dist-packages")
}

/// A common command's name in a `PATH` directory that comes before the system's.
fn shim(n: &str, name: &str) -> bool {
    let Some((dir, _)) = n.rsplit_once('/') else {
        return false;
    };
    SYSTEM_BIN_DIRS.contains(&dir) || (shim_dir(dir) && COMMON_COMMANDS.contains(&name))
}

fn shim_dir(dir: &str) -> bool {
    if matches!(dir, "/usr/local/bin" | "/usr/local/sbin") {
        return true;
    }
    let home = crate::paths::is_home_dir;
    match dir.rsplit_once('/') {
        Some((head, "bin")) => home(head) || head.strip_suffix("/.local").is_some_and(home),
        _ => false,
    }
}

fn system_hook(n: &str, hook: &str) -> bool {
    match hook.strip_suffix('/') {
        Some(dir) => n == dir || n.starts_with(hook),
        None => n == hook,
    }
}

/// `n` lies inside directory `dir` (a sequence of whole components, anywhere in `n`).
fn inside(n: &str, dir: &str) -> bool {
    // Component starts: byte comparisons only, this runs for every write target.
    std::iter::once(0)
        .chain(n.match_indices('/').map(|(k, _)| k + 1))
        .any(|at| {
            n[at..]
                .strip_prefix(dir)
                .is_some_and(|rest| rest.starts_with('/'))
        })
}

/// `n` is `tail` or ends with `/tail`.
fn ends_with_components(n: &str, tail: &str) -> bool {
    n.strip_suffix(tail)
        .is_some_and(|head| head.is_empty() || head.ends_with('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_that_run_programs_later() {
        for (path, want) in [
            ("~/.vimrc", Sensitive::Autorun),
            ("/home/a/.config/nvim/init.lua", Sensitive::Autorun),
            (
                "~/.local/lib/python3.12/site-packages/x.pth",
                Sensitive::Autorun,
            ),
            (
                "venv/lib/python3.12/site-packages/sitecustomize.py",
                Sensitive::Autorun,
            ),
            ("~/.local/bin/sudo", Sensitive::Autorun),
            ("/usr/local/bin/git", Sensitive::Autorun),
            ("/usr/bin/anything", Sensitive::Autorun),
            ("/etc/apt/apt.conf.d/99x", Sensitive::Autorun),
            ("/etc/ld.so.conf", Sensitive::Autorun),
            ("~/.xsessionrc", Sensitive::Startup),
            (".git/hooks/pre-commit", Sensitive::Persistence),
            ("repo/.git/config", Sensitive::Persistence),
            ("~/.npmrc", Sensitive::Persistence),
            ("~/.pip/pip.conf", Sensitive::Persistence),
        ] {
            assert_eq!(classify(path), Some(want), "{path}");
        }
        for path in [
            "~/.local/bin/mytool",
            "site-packages.txt",
            "docs/x.pth",
            "/etc/apt/sources.list.bak.txt",
            "~/.vim/undo/x",
            "build/bin/tool",
            ".git/HEAD",
            "config",
        ] {
            assert_eq!(classify(path), None, "{path}");
        }
    }

    #[test]
    fn shim_directories() {
        assert!(is_shim_dir("~/.local/bin"));
        assert!(is_shim_dir("/usr/bin"));
        assert!(is_shim_dir("~/bin"));
        assert!(!is_shim_dir("build/bin"));
        assert!(!is_shim_dir("/tmp"));
    }
}
