//! tollgate's core: the [hook trait](Hook), function hooks ([async](hook_fn) and [answering at
//! once](hook_sync)), the [registry](Registry) and the [dispatcher](Dispatcher), plus [payload
//! truncation](truncate) and [output spill](spill).
//!
//! # Dispatch rules
//!
//! 1. **Order.** Hooks run in ascending priority (lower first); ties run in registration order.
//! 2. **Matching** happens before anything runs: the registration's `tools` globs (see
//!    [`ToolMatcher`]), then the hook's [`Hook::should_trigger`].
//! 3. **Blocking events** (`pre_tool_use`, `user_turn`, `subagent_start`, custom events declared
//!    blocking) run hooks one after the other. Each sees the arguments as rewritten before it
//!    (waterfall). The first `deny` stops the chain; an `ask` is remembered and the chain goes
//!    on, so a later `deny` still wins. An `allow` with no rewrite never erases an earlier rewrite.
//! 4. **Re-review.** With a [`PermissionGate`] attached, the gate reviews the original call and,
//!    if the arguments were rewritten, the rewritten one; the strictest verdict wins. A rewrite
//!    can never turn a refused call into an allowed one.
//! 5. **Result events** (`post_tool_use`) run one after the other; `modified_result` chains and
//!    the last one is what the model observes.
//! 6. **Notification events** (every other event) run all matching hooks concurrently; their
//!    decisions are recorded but not folded. Hooks registered `fire_and_forget` are detached
//!    onto a bounded [`Background`] queue instead and never delay the agent.
//! 7. **Failures** (deadline, panic, returned error, invalid output such as `modified_result`
//!    on `pre_tool_use`) are recorded as `timed_out`, `crashed`, `errored` or `invalid_output`
//!    and resolved by the hook's [`FailureMode`](tollgate_protocol::FailureMode): `fail_open`
//!    skips the hook, `fail_closed` denies with the failure as the reason. The dispatcher
//!    itself never fails.
//! 8. **Trace.** Every run leaves a [`HookRun`] record and its side effects, in order.
//! 9. **Denial as observation.** [`DispatchOutcome::observation`] is what the model sees instead
//!    of the tool's result.
//! 10. **Isolation.** A [`Registry`] belongs to one run's [`Dispatcher`] and is dropped with it.
//! 11. **Evaluation bypass** is explicit: [`HooksMode::Bypass`], recorded as `bypassed: true`.
//!
//! # Worked example
//!
//! Hooks registered in the order `guard` (priority 9, denies `rm`), `reviewer` (priority 5,
//! asks), `audit` (priority 0) and `dry-run` (priority 5, adds `"dry_run": true`):
//!
//! ```
//! use std::sync::Arc;
//! use serde_json::json;
//! use tollgate_core::{Dispatcher, RegistryBuilder, hook_fn};
//! use tollgate_protocol::{Decision, Event, Outcome, Payload, PayloadCommon, ToolCall};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let mut hooks = RegistryBuilder::new();
//! hooks.register(Event::PreToolUse, hook_fn("guard", |ctx| async move {
//!     let command = ctx.payload().tool_call().map(|c| c.tool_input["command"].clone());
//!     Ok(match command.and_then(|c| c.as_str().map(str::to_owned)) {
//!         Some(c) if c.starts_with("rm ") => Outcome::deny("rm is not allowed"),
//!         _ => Outcome::allow(),
//!     })
//! }).priority(9));
//! hooks.register(Event::PreToolUse, hook_fn("reviewer", |_| async {
//!     Ok(Outcome::ask("a human should look"))
//! }).priority(5));
//! hooks.register(Event::PreToolUse, hook_fn("audit", |_| async { Ok(Outcome::allow()) }));
//! hooks.register(Event::PreToolUse, hook_fn("dry-run", |ctx| async move {
//!     let mut args = ctx.payload().tool_call().map(|c| c.tool_input.clone()).unwrap_or_default();
//!     args["dry_run"] = json!(true);
//!     Ok(Outcome::allow().with_args(args))
//! }).priority(5));
//! let dispatcher = Dispatcher::new(hooks.build().unwrap());
//!
//! let call = |command: &str| Arc::new(Payload::new(PayloadCommon::default(), ToolCall {
//!     tool_name: "bash".into(), tool_call_id: "c1".into(), tool_input: json!({"command": command}),
//! }));
//!
//! // audit (0), then reviewer and dry-run (5, in registration order), then guard (9).
//! let ls = dispatcher.dispatch(call("ls")).await;
//! let order: Vec<&str> = ls.runs.iter().map(|r| r.name).collect();
//! assert_eq!(order, ["audit", "reviewer", "dry-run", "guard"]);
//! assert_eq!(ls.decision, Decision::ask("a human should look")); // ask, nobody denied
//! assert_eq!(ls.modified_args, Some(json!({"command": "ls", "dry_run": true})));
//!
//! let rm = dispatcher.dispatch(call("rm -rf /")).await;
//! assert_eq!(rm.decision, Decision::deny("rm is not allowed")); // deny beats the earlier ask
//! assert_eq!(rm.observation().unwrap(), "Tool call denied by hook `guard`: rm is not allowed");
//! # }
//! ```

mod background;
mod candidates;
mod dispatch;
pub mod error;
mod hook;
mod matcher;
mod registry;
pub mod spill;
pub mod truncate;

pub use background::{Background, DetachedObserver};
pub use dispatch::{
    DecidedBy, DispatchObserver, DispatchOutcome, Dispatcher, GateReview, HookNames, HookRun,
    HookRuns, HookRunsIter, HooksMode, NamedRun, PermissionGate, RecordedSideEffect, ReviewedArgs,
};
pub use error::CoreError;
pub use hook::{
    BoxFuture, FailureKind, FnHook, Hook, HookContext, HookError, SyncFnHook, hook_fn, hook_sync,
};
pub use matcher::ToolMatcher;
pub use registry::{
    DispatchMode, HookOptions, HookTimeout, Registry, RegistryBuilder, builtin_mode,
};
