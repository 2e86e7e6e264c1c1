//! The confirmation store on real SQLite files: the state machine, concurrent deciders from
//! separate stores, and random interleavings; the Slack channel against its stand-in.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod concurrency;
mod properties;
mod slack;
mod store;
