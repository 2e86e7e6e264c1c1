//! HTTP hooks: the payload POSTed as JSON to a webhook (DESIGN.md §3).
//!
//! [`check_ip`] is the SSRF guard: which addresses an http hook may connect to.
//! [`verify_signature`] checks a delivery's `X-Webhook-Signature` for receivers; [`Secret`]
//! resolves and holds the signing key.

mod error;
mod guard;
mod signature;

pub use error::HttpError;
pub use guard::{Embedding, Reason, check_ip};
pub use signature::{
    DEFAULT_TOLERANCE, EVENT_HEADER, ID_HEADER, SIGNATURE_HEADER, Secret, SignatureError,
    verify_signature,
};
