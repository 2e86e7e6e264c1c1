//! Integration tests of tollgate-handlers with real child processes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod command;
