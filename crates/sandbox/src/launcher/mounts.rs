//! The filesystem view of a sandbox, built by the outer launcher in its new mount namespace.
//!
//! In order: stop mount propagation; open what will be bound later (while the original tree is
//! still visible); a private `/tmp`; a fresh minimal `/dev`; an empty `/run` (sockets such as
//! the Docker, D-Bus, systemd and SSH-agent ones live there); the readable paths those hid
//! and the writable paths bound onto themselves; the hidden paths covered by empty, unreadable stand-ins; then every other mount
//! remounted read-only. Paths keep their outside names, so a command sees its workspace where
//! the runtime has it.

use std::fs;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use nix::fcntl::OFlag;
use nix::mount::{MsFlags, mount};
use nix::sys::stat::{Mode, SFlag, fstat};

use super::mountinfo;
use crate::policy::{Network, Policy};

/// Where the launcher prepares `/dev` and the stand-ins for hidden paths; removed before any
/// command runs.
const STAGING: &str = "/tmp/.tollgate-sandbox";

/// Device nodes a sandbox keeps (bound from the host's `/dev`).
const DEVICES: &[&str] = &["null", "zero", "full", "random", "urandom", "tty"];

/// A step of the build that failed.
#[derive(Debug)]
pub(super) struct MountError(pub String);

type Result<T> = std::result::Result<T, MountError>;

fn fail(step: impl std::fmt::Display, err: impl std::fmt::Display) -> MountError {
    MountError(format!("{step}: {err}"))
}

/// What the view offers beyond the required parts.
#[derive(Debug, Default)]
pub(super) struct Built {
    /// A private `devpts` instance (pseudo-terminals work).
    pub devpts: bool,
}

/// Something to bind later, opened while its path was still reachable.
struct Source {
    path: PathBuf,
    fd: OwnedFd,
    dir: bool,
}

/// Builds the view for `policy` (already [resolved](Policy::resolve)); `egress` is the egress
/// proxy's socket, bound at [`SOCKET_IN_SANDBOX`](crate::egress::SOCKET_IN_SANDBOX).
pub(super) fn build(policy: &Policy, egress: Option<&Path>) -> Result<Built> {
    // Private, not slave: a mount the host makes later (a home, removable media) must not
    // appear inside, writable and over the stand-ins.
    mount(
        None::<&str>,
        "/",
        None::<&str>,
        MsFlags::MS_REC | MsFlags::MS_PRIVATE,
        None::<&str>,
    )
    .map_err(|e| fail("making / a private mount", e))?;
    let open_all = |paths: &[PathBuf]| {
        paths
            .iter()
            .map(|p| open_pinned(p, policy))
            .collect::<Result<Vec<_>>>()
    };
    let writable = open_all(&policy.writable)?;
    let readable = open_all(&policy.readable)?;
    let mut devices: Vec<(&str, Source)> = DEVICES
        .iter()
        .filter_map(|name| Some((*name, open_source(&Path::new("/dev").join(name)).ok()?)))
        .collect();
    if let Some(log) = socket_target("/dev/log").and_then(|p| open_source(&p).ok()) {
        devices.push(("log", log));
    }
    let resolv = match policy.network {
        Network::On => run_target("/etc/resolv.conf").and_then(|p| open_source(&p).ok()),
        // A proxied sandbox resolves nothing itself: the proxy does.
        Network::Off | Network::Proxy => None,
    };
    let egress = egress.map(open_source).transpose()?;
    tmpfs("/tmp", &format!("mode=1777,size={}", policy.tmp_bytes))?;
    let staging = Staging::create()?;
    let built = staging.dev(&devices)?;
    mask_run(resolv.as_ref())?;
    if let Some(socket) = &egress {
        bind_onto(socket, Path::new(crate::egress::SOCKET_IN_SANDBOX))?;
    }
    // Readable first: a writable path inside a readable one stays writable.
    for source in readable.iter().chain(&writable) {
        bind_onto(source, &source.path)?;
    }
    for path in &policy.hidden {
        staging.hide(path, policy)?;
    }
    drop(staging);
    read_only(&writable)?;
    Ok(built)
}

/// Opens `path` and checks it is still the file the policy pinned (a command may have renamed
/// a parent directory or swapped in a symlink since).
fn open_pinned(path: &Path, policy: &Policy) -> Result<Source> {
    let source = open_source(path)?;
    check_pin(path, &source.fd, policy)?;
    Ok(source)
}

fn check_pin(path: &Path, fd: &OwnedFd, policy: &Policy) -> Result<()> {
    let Some((dev, ino)) = policy.pinned(path) else {
        return Ok(());
    };
    let stat = fstat(fd).map_err(|e| fail(format!("inspecting {}", path.display()), e))?;
    if (stat.st_dev, stat.st_ino) == (dev, ino) {
        Ok(())
    } else {
        Err(fail(
            path.display(),
            "no longer names the file it named when the sandbox was first built (renamed or \
             replaced); refusing to build a sandbox around it",
        ))
    }
}

fn open_source(path: &Path) -> Result<Source> {
    let fd = nix::fcntl::open(path, OFlag::O_PATH | OFlag::O_CLOEXEC, Mode::empty())
        .map_err(|e| fail(format!("opening {}", path.display()), e))?;
    let stat = fstat(&fd).map_err(|e| fail(format!("inspecting {}", path.display()), e))?;
    let dir = SFlag::from_bits_truncate(stat.st_mode) & SFlag::S_IFMT == SFlag::S_IFDIR;
    Ok(Source {
        path: path.to_owned(),
        fd,
        dir,
    })
}

/// `/dev/log` when it is (a symlink to) a socket: syslog stays usable (`logger`).
fn socket_target(path: &str) -> Option<PathBuf> {
    use std::os::unix::fs::FileTypeExt;
    let real = fs::canonicalize(path).ok()?;
    fs::metadata(&real)
        .ok()
        .filter(|m| m.file_type().is_socket())
        .map(|_| real)
}

/// Where `path` really is, when that is under `/run` (which the view empties).
fn run_target(path: &str) -> Option<PathBuf> {
    fs::canonicalize(path)
        .ok()
        .filter(|real| real.starts_with("/run"))
}

fn tmpfs(at: &str, options: &str) -> Result<()> {
    mount(
        Some("tmpfs"),
        at,
        Some("tmpfs"),
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
        Some(options),
    )
    .map_err(|e| fail(format!("mounting a tmpfs on {at}"), e))
}

/// Binds `source` onto `target`, creating `target` (in a tmpfs of the view) when missing.
fn bind_onto(source: &Source, target: &Path) -> Result<()> {
    if fs::symlink_metadata(target).is_err() {
        create_mount_point(target, source.dir)?;
    }
    let from = format!("/proc/self/fd/{}", source.fd.as_raw_fd());
    mount(
        Some(from.as_str()),
        target,
        None::<&str>,
        MsFlags::MS_BIND | MsFlags::MS_REC,
        None::<&str>,
    )
    .map_err(|e| fail(format!("binding {}", source.path.display()), e))
}

fn create_mount_point(target: &Path, dir: bool) -> Result<()> {
    let made = if dir {
        fs::create_dir_all(target)
    } else {
        target
            .parent()
            .map_or(Ok(()), fs::create_dir_all)
            .and_then(|()| fs::File::create(target).map(drop))
    };
    made.map_err(|e| fail(format!("creating the mount point {}", target.display()), e))
}

/// An empty `/run` (read-only later), with the resolver file bound back when the network is
/// on.
fn mask_run(resolv: Option<&Source>) -> Result<()> {
    for run in ["/run", "/var/run"] {
        let real_dir = fs::symlink_metadata(run).is_ok_and(|m| m.is_dir());
        if real_dir {
            tmpfs(run, "mode=755,size=1m")?;
        }
    }
    if let Some(resolv) = resolv {
        bind_onto(resolv, &resolv.path)?;
    }
    Ok(())
}

/// The staging directory in the private `/tmp`: stand-ins for hidden paths and the new
/// `/dev`, removed when dropped (what was bound from it stays bound).
struct Staging {
    root: PathBuf,
    empty_dir: PathBuf,
    empty_file: PathBuf,
}

impl Staging {
    fn create() -> Result<Self> {
        let root = PathBuf::from(STAGING);
        let empty_dir = root.join("empty-dir");
        let empty_file = root.join("empty-file");
        let made = fs::DirBuilder::new()
            .mode(0o700)
            .create(&root)
            .and_then(|()| fs::DirBuilder::new().mode(0o000).create(&empty_dir))
            .and_then(|()| {
                fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .mode(0o000)
                    .open(&empty_file)
                    .map(drop)
            });
        made.map_err(|e| fail("creating the staging directory", e))?;
        Ok(Self {
            root,
            empty_dir,
            empty_file,
        })
    }

    /// Covers `path` with an empty, unreadable directory or file (read-only later).
    fn hide(&self, path: &Path, policy: &Policy) -> Result<()> {
        let meta = match fs::symlink_metadata(path) {
            Ok(meta) => meta,
            Err(e)
                if e.kind() == std::io::ErrorKind::NotFound
                    && policy.pinned(path).is_some()
                    && in_view(path, policy) =>
            {
                // It existed when the policy was resolved: it was moved, maybe by a command.
                return Err(fail(
                    path.display(),
                    "was hidden, and is gone or moved; refusing",
                ));
            }
            // Not in the view (under the private /tmp), or out of this user's reach anyway.
            Err(_) => return Ok(()),
        };
        if let Ok(fd) = nix::fcntl::open(path, OFlag::O_PATH | OFlag::O_CLOEXEC, Mode::empty()) {
            check_pin(path, &fd, policy)?;
        }
        let stand_in = if meta.is_dir() {
            &self.empty_dir
        } else {
            &self.empty_file
        };
        mount(
            Some(stand_in.as_path()),
            path,
            None::<&str>,
            MsFlags::MS_BIND,
            None::<&str>,
        )
        .map_err(|e| fail(format!("hiding {}", path.display()), e))
    }

    /// Builds the new `/dev` in the staging directory and moves it onto `/dev`.
    fn dev(&self, devices: &[(&str, Source)]) -> Result<Built> {
        let dev = self.root.join("dev");
        create_mount_point(&dev, true)?;
        tmpfs(&dev.to_string_lossy(), "mode=755,size=64k")?;
        for (name, device) in devices {
            bind_onto(device, &dev.join(name))?;
        }
        let links = [
            ("fd", "/proc/self/fd"),
            ("stdin", "/proc/self/fd/0"),
            ("stdout", "/proc/self/fd/1"),
            ("stderr", "/proc/self/fd/2"),
            ("ptmx", "pts/ptmx"),
        ];
        for (name, target) in links {
            std::os::unix::fs::symlink(target, dev.join(name))
                .map_err(|e| fail(format!("creating /dev/{name}"), e))?;
        }
        create_mount_point(&dev.join("shm"), true)?;
        tmpfs(&dev.join("shm").to_string_lossy(), "mode=1777,size=64m")?;
        create_mount_point(&dev.join("pts"), true)?;
        let devpts = mount(
            Some("devpts"),
            &dev.join("pts"),
            Some("devpts"),
            MsFlags::MS_NOSUID | MsFlags::MS_NOEXEC,
            Some("newinstance,ptmxmode=0666,mode=620"),
        )
        .is_ok();
        fs::set_permissions(&dev, fs::Permissions::from_mode(0o755))
            .map_err(|e| fail("setting /dev's mode", e))?;
        mount(
            Some(dev.as_path()),
            "/dev",
            None::<&str>,
            MsFlags::MS_MOVE,
            None::<&str>,
        )
        .map_err(|e| fail("moving the new /dev into place", e))?;
        Ok(Built { devpts })
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        // What was bound from here stays bound; the names go.
        let _ = fs::remove_dir_all(&self.root);
    }
}

/// Whether `path` is in the view at its outside name: everywhere but the private `/tmp`,
/// unless a writable or readable path brings it in.
fn in_view(path: &Path, policy: &Policy) -> bool {
    !path.starts_with("/tmp")
        || policy
            .writable
            .iter()
            .chain(&policy.readable)
            .any(|bound| path.starts_with(bound))
}

/// Remounts every mount read-only but the writable ones, the private `/tmp` and `/dev/shm`.
fn read_only(writable: &[Source]) -> Result<()> {
    let text = fs::read_to_string("/proc/self/mountinfo")
        .map_err(|e| fail("reading /proc/self/mountinfo", e))?;
    let keep_writable = |point: &Path| {
        writable.iter().any(|w| w.path == point)
            || [
                Path::new("/tmp"),
                Path::new("/dev/shm"),
                Path::new("/dev/pts"),
            ]
            .contains(&point)
    };
    for mount_entry in mountinfo::parse(&text) {
        if keep_writable(&mount_entry.point) {
            continue;
        }
        let flags = MsFlags::MS_REMOUNT | MsFlags::MS_BIND | MsFlags::MS_RDONLY | mount_entry.keep;
        if let Err(e) = mount(
            None::<&str>,
            &mount_entry.point,
            None::<&str>,
            flags,
            None::<&str>,
        ) {
            // A mount point under a hidden path is no longer reachable: nothing to protect.
            if e == nix::errno::Errno::ENOENT || e == nix::errno::Errno::EACCES {
                continue;
            }
            return Err(fail(
                format!("remounting {} read-only", mount_entry.point.display()),
                e,
            ));
        }
    }
    Ok(())
}
