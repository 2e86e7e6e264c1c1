//! What can go wrong when starting a stand-in.

/// A stand-in could not be started.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No loopback port could be bound.
    #[error("cannot listen on 127.0.0.1: {0}")]
    Bind(std::io::Error),
    /// The server's runtime or thread could not be created.
    #[error("cannot start the stand-in's server thread: {0}")]
    Start(std::io::Error),
}

/// The crate's result.
pub type Result<T, E = Error> = std::result::Result<T, E>;
