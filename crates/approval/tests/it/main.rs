//! The confirmation store on real SQLite files: the state machine, concurrent deciders from
//! separate stores, and random interleavings; the Slack and Feishu channels against their
//! stand-ins.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod concurrency;
mod feishu;
mod feishu_callbacks;
mod properties;
mod slack;
mod store;
