//! The error type of this crate.

/// What can go wrong when reading analyzer settings.
///
/// Analysis itself never fails: input that cannot be analysed is a [`Verdict::Block`]
/// (rule `parse-error` or `analysis-limit`).
///
/// [`Verdict::Block`]: crate::Verdict::Block
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ShellError {
    /// A profile name other than `trusted`, `external` or `agent`.
    #[error("unknown profile `{0}` (expected `trusted`, `external` or `agent`)")]
    UnknownProfile(String),
}

/// `Result` with this crate's error.
pub type Result<T, E = ShellError> = std::result::Result<T, E>;
