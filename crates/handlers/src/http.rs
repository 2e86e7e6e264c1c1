//! HTTP hooks: the payload POSTed as JSON to a webhook (DESIGN.md §3).
//!
//! [`check_ip`] is the SSRF guard: which addresses an http hook may connect to.

mod guard;

pub use guard::{Embedding, Reason, check_ip};
