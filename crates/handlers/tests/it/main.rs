//! Integration tests of tollgate-handlers with real child processes and real HTTP servers on
//! 127.0.0.1.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod class;
mod claude;
mod command;
mod contained;
mod declared;
mod http;
mod llm;
mod logs;
