//! Runtime tests: real sessions with real hooks, processes, SQLite files and HTTP.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod approval;
mod claude;
mod contained;
mod delegation;
mod isolation;
mod lifecycle;
mod openai;
mod resume;
mod subagent_stop;
mod support;
