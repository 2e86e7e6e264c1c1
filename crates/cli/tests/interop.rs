//! The real agent CLIs (Claude Code, Codex) against loopback stand-ins of their model APIs
//! (`tollgate-standins`), with their own hook mechanisms: the ground truth that tollgate's
//! Claude Code compatibility and its `hook` bridge are measured against.
//!
//! The CLIs are not built here: `tests/interop/install.sh` installs the versions pinned in
//! `tests/interop/versions.env` and prints the folder to put in `TOLLGATE_INTEROP_BIN`. Without
//! it these tests fail and say so (docs/interop-tests.md).

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "interop/bridge.rs"]
mod bridge;
#[path = "interop/claude_code.rs"]
mod claude_code;
#[path = "interop/codex.rs"]
mod codex;
#[path = "interop/compat.rs"]
mod compat;
#[path = "interop/hook_exit.rs"]
mod hook_exit;
#[path = "common/served.rs"]
mod served;
#[path = "interop/support.rs"]
mod support;
