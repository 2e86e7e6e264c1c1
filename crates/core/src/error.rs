//! The error type of this crate.

use std::path::PathBuf;

/// What can go wrong when building a registry or spilling output.
///
/// Dispatch itself never fails: every hook failure becomes a recorded
/// [`RunStatus`](tollgate_protocol::RunStatus) resolved by the hook's failure mode.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CoreError {
    /// A `tools` glob that does not compile. The hook is not registered (never widened to
    /// match-all).
    #[error("invalid tools pattern `{pattern}`: {message}")]
    InvalidPattern {
        /// The pattern as written.
        pattern: String,
        /// Why it was refused.
        message: String,
    },
    /// A hook timeout outside 1–600 seconds.
    #[error("hook timeout must be 1-600 seconds, got {0} s")]
    InvalidTimeout(u64),
    /// A file could not be written or read.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory concerned.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
}

/// `Result` with this crate's error.
pub type Result<T, E = CoreError> = std::result::Result<T, E>;
