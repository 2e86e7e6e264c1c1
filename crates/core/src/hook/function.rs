//! Hooks built from closures: async ones ([`hook_fn`]) and ones that answer at once
//! ([`hook_sync`]).

use std::future::{Future, ready};

use tollgate_protocol::Outcome;

use super::{BoxFuture, Hook, HookContext, HookError};

type Predicate = Box<dyn Fn(&HookContext) -> bool + Send + Sync>;

/// What both kinds of closure hook carry besides the closure: name, priority, code matcher.
struct Settings {
    name: String,
    priority: i32,
    when: Option<Predicate>,
}

impl Settings {
    fn new(name: String) -> Self {
        Self {
            name,
            priority: 0,
            when: None,
        }
    }

    fn triggers(&self, ctx: &HookContext) -> bool {
        self.when.as_ref().is_none_or(|predicate| predicate(ctx))
    }
}

/// A hook built from an async closure; see [`hook_fn`].
pub struct FnHook<F> {
    settings: Settings,
    f: F,
}

/// A hook built from a closure that answers without awaiting; see [`hook_sync`].
pub struct SyncFnHook<F> {
    settings: Settings,
    f: F,
}

/// Builds a function hook from an async closure taking the [`HookContext`] by value.
///
/// Every run boxes the closure's future. A hook that never awaits is cheaper as
/// [`hook_sync`].
///
/// ```
/// use tollgate_core::hook_fn;
/// use tollgate_protocol::Outcome;
///
/// let dry_run = hook_fn("dry-run", |ctx| async move {
///     let mut args = ctx.payload().tool_call().map(|c| c.tool_input.clone()).unwrap_or_default();
///     args["dry_run"] = serde_json::Value::Bool(true);
///     Ok(Outcome::allow().with_args(args))
/// })
/// .priority(5)
/// .when(|ctx| ctx.tool_name().is_some_and(|t| t.starts_with("deploy_")));
/// ```
pub fn hook_fn<F, Fut>(name: impl Into<String>, f: F) -> FnHook<F>
where
    F: Fn(HookContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Outcome, HookError>> + Send + 'static,
{
    FnHook {
        settings: Settings::new(name.into()),
        f,
    }
}

/// Builds a function hook from a closure that answers at once, borrowing the [`HookContext`].
///
/// The dispatcher calls it through [`Hook::execute_now`]: no boxed future, no context clone,
/// no timer. Same rules otherwise as [`hook_fn`] (deadline, panics, failure mode); the closure
/// must not block, since nothing can interrupt it.
///
/// ```
/// use tollgate_core::hook_sync;
/// use tollgate_protocol::Outcome;
///
/// let no_drop = hook_sync("no-drop", |ctx| {
///     let sql = ctx.payload().tool_call().and_then(|c| c.tool_input["sql"].as_str());
///     Ok(match sql {
///         Some(s) if s.to_uppercase().contains("DROP") => Outcome::deny("DROP is not allowed"),
///         _ => Outcome::allow(),
///     })
/// })
/// .when(|ctx| ctx.tool_name().is_some_and(|t| t.starts_with("sql_")));
/// ```
pub fn hook_sync<F>(name: impl Into<String>, f: F) -> SyncFnHook<F>
where
    F: Fn(&HookContext) -> Result<Outcome, HookError> + Send + Sync + 'static,
{
    SyncFnHook {
        settings: Settings::new(name.into()),
        f,
    }
}

macro_rules! builder_methods {
    ($hook:ident) => {
        impl<F> $hook<F> {
            /// Sets the default priority (lower runs first).
            #[must_use]
            pub fn priority(mut self, priority: i32) -> Self {
                self.settings.priority = priority;
                self
            }

            /// Sets a code matcher: the hook runs only when `predicate` returns true.
            #[must_use]
            pub fn when(
                mut self,
                predicate: impl Fn(&HookContext) -> bool + Send + Sync + 'static,
            ) -> Self {
                self.settings.when = Some(Box::new(predicate));
                self
            }
        }
    };
}

builder_methods!(FnHook);
builder_methods!(SyncFnHook);

impl<F, Fut> Hook for FnHook<F>
where
    F: Fn(HookContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Outcome, HookError>> + Send + 'static,
{
    fn name(&self) -> &str {
        &self.settings.name
    }

    fn priority(&self) -> i32 {
        self.settings.priority
    }

    fn should_trigger(&self, ctx: &HookContext) -> bool {
        self.settings.triggers(ctx)
    }

    fn execute(&self, ctx: HookContext) -> BoxFuture<'_, Result<Outcome, HookError>> {
        Box::pin((self.f)(ctx))
    }
}

impl<F> Hook for SyncFnHook<F>
where
    F: Fn(&HookContext) -> Result<Outcome, HookError> + Send + Sync + 'static,
{
    fn name(&self) -> &str {
        &self.settings.name
    }

    fn priority(&self) -> i32 {
        self.settings.priority
    }

    fn should_trigger(&self, ctx: &HookContext) -> bool {
        self.settings.triggers(ctx)
    }

    fn execute_now(&self, ctx: &HookContext) -> Option<Result<Outcome, HookError>> {
        Some((self.f)(ctx))
    }

    /// The same answer, for callers that only know [`Hook::execute`].
    fn execute(&self, ctx: HookContext) -> BoxFuture<'_, Result<Outcome, HookError>> {
        Box::pin(ready((self.f)(&ctx)))
    }
}
