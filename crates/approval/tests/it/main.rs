//! The confirmation store on real SQLite files: the state machine, concurrent deciders from
//! separate stores, and random interleavings.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod concurrency;
mod properties;
mod store;
