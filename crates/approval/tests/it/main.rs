//! The confirmation store on real SQLite files: the state machine, concurrent deciders from
//! separate stores, and random interleavings; the Feishu channel against the open-platform
//! stand-in.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod concurrency;
mod feishu;
mod feishu_callbacks;
mod properties;
mod store;
