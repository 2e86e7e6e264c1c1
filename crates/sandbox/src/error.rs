//! Errors of the sandbox client.

/// What can go wrong when running a command in a sandbox.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SandboxError {
    /// This machine cannot build the sandbox: the kernel lacks (or forbids) a required
    /// feature, or no launcher program was found. `feature` names it (`user_namespace`,
    /// `mount_namespace`, `pid_namespace`, `network_namespace`, `proc`, `filesystem`,
    /// `launcher`, …); `detail` is the system's answer.
    #[error("sandbox unavailable ({feature}): {detail}")]
    Unavailable {
        /// The missing feature.
        feature: String,
        /// What the system said.
        detail: String,
    },
    /// The command could not be started inside the sandbox (no such program, no such
    /// directory).
    #[error("cannot start the command in the sandbox: {0}")]
    Spawn(String),
    /// The sandbox's host stopped answering or broke the protocol.
    #[error("the sandbox failed: {0}")]
    Host(String),
    /// An I/O error on the client's side (pipes, sockets).
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl SandboxError {
    /// Whether the error means "this machine cannot sandbox" (as opposed to one command
    /// failing).
    pub fn is_unavailable(&self) -> bool {
        matches!(self, Self::Unavailable { .. })
    }
}

/// `Result` with [`SandboxError`].
pub type Result<T, E = SandboxError> = std::result::Result<T, E>;
