//! Which program to start as the launcher.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Environment variable naming the launcher program (a binary that calls
/// [`main_if_launcher`](crate::main_if_launcher)).
pub const LAUNCHER_ENV: &str = "TOLLGATE_SANDBOX_LAUNCHER";

/// Name of this crate's launcher binary.
pub const LAUNCHER_BIN: &str = "tollgate-sandbox";

static DEFAULT: OnceLock<Launcher> = OnceLock::new();

/// A program that acts as the sandbox launcher when started with
/// [`LAUNCHER_ARG`](crate::LAUNCHER_ARG).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launcher {
    program: PathBuf,
    /// What is executed: `program`, or `/proc/self/exe` for the running program itself (the
    /// file it was started from, even if something replaced the path since).
    exec: PathBuf,
}

impl Launcher {
    /// The launcher at `program`.
    pub fn new(program: impl Into<PathBuf>) -> Self {
        let program = program.into();
        Self {
            exec: program.clone(),
            program,
        }
    }

    /// The running program itself: for binaries that call
    /// [`main_if_launcher`](crate::main_if_launcher) at the top of `main`. It is executed as
    /// `/proc/self/exe`, so replacing the file at its path (a command writing the directory it
    /// lies in) changes nothing.
    ///
    /// # Errors
    /// When the path of the running program cannot be read.
    pub fn current_exe() -> std::io::Result<Self> {
        Ok(Self {
            program: std::env::current_exe()?,
            exec: PathBuf::from("/proc/self/exe"),
        })
    }

    /// The program's path (for messages).
    pub fn program(&self) -> &Path {
        &self.program
    }

    /// What is executed.
    pub(crate) fn exec(&self) -> &Path {
        &self.exec
    }

    /// Whether the file executed can be replaced by a command that writes `writable`.
    pub(crate) fn replaceable_through(&self, writable: &[PathBuf]) -> bool {
        if self.exec == Path::new("/proc/self/exe") {
            return false;
        }
        let real = self
            .program
            .canonicalize()
            .unwrap_or_else(|_| self.program.clone());
        writable.iter().any(|w| real.starts_with(w))
    }

    /// Makes `launcher` the one [`Launcher::find`] returns first (after the environment
    /// variable). Only the first call has an effect; returns whether it did.
    pub fn set_default(launcher: Launcher) -> bool {
        DEFAULT.set(launcher).is_ok()
    }

    /// The launcher to use: `$TOLLGATE_SANDBOX_LAUNCHER`, else the default set with
    /// [`Launcher::set_default`], else a `tollgate-sandbox` binary next to the running program
    /// or one directory up (Cargo's test binaries live in `target/<profile>/deps/`), else
    /// `tollgate-sandbox` on `PATH`. `None` when there is none.
    pub fn find() -> Option<Self> {
        if let Some(path) = std::env::var_os(LAUNCHER_ENV).filter(|p| !p.is_empty()) {
            return Some(Self::new(path));
        }
        if let Some(launcher) = DEFAULT.get() {
            return Some(launcher.clone());
        }
        let exe = std::env::current_exe().ok();
        let beside = exe
            .iter()
            .flat_map(|exe| exe.ancestors().skip(1).take(2))
            .map(|dir| dir.join(LAUNCHER_BIN));
        let on_path = std::env::var_os("PATH")
            .into_iter()
            .flat_map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
            .map(|dir| dir.join(LAUNCHER_BIN));
        beside.chain(on_path).find(|p| p.is_file()).map(Self::new)
    }
}
