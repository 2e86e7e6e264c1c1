//! Integration tests of tollgate-core, driving the public API as a user would.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod advisory;
mod background;
mod dispatch;
mod failures;
mod fold_props;
mod isolation;
mod matcher_props;
mod spill;
mod support;
mod sync_groups;
mod sync_hooks;
mod truncate;
