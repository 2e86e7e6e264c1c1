//! Killing a child's whole process group: the shell and everything it started.

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::process::Child;

/// Kills a process group with SIGKILL when dropped (on success, on failure, and when the future
/// that owns it is dropped at a deadline or on cancel), or earlier with [`GroupKiller::kill`].
///
/// The child must have been spawned as the leader of its own group
/// (`Command::process_group(0)`); otherwise nothing is killed. A process that left the group
/// (`setsid`) survives.
#[derive(Debug)]
pub struct GroupKiller(Option<Pid>);

impl GroupKiller {
    /// A guard for the group `child` leads (none when the child has already been reaped).
    pub fn of(child: &Child) -> Self {
        Self(
            child
                .id()
                .and_then(|id| i32::try_from(id).ok())
                .map(Pid::from_raw),
        )
    }

    /// Kills the group now. Killing an already-ended group is harmless.
    pub fn kill(&self) {
        if let Some(group) = self.0 {
            // ESRCH (the group is already gone) is the common, harmless case.
            let _ = killpg(group, Signal::SIGKILL);
        }
    }
}

impl Drop for GroupKiller {
    fn drop(&mut self) {
        self.kill();
    }
}
