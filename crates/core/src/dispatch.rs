//! The dispatcher: runs the hooks of a registry for one event and folds their outcomes.
//!
//! See the crate documentation for the rules and a worked example.

mod chain;
mod gate;
pub(crate) mod outcome;
pub(crate) mod run;
mod runs;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use tollgate_protocol::Payload;

use crate::background::{Background, DetachedObserver, RunCount};
use crate::registry::{DispatchMode, Registry};

use chain::Chain;
pub use gate::PermissionGate;
pub use outcome::{
    DecidedBy, DispatchObserver, DispatchOutcome, GateReview, RecordedSideEffect, ReviewedArgs,
};
pub use runs::{HookNames, HookRun, HookRuns, Iter as HookRunsIter, NamedRun};

/// Whether hooks run: an explicit run option, recorded in every [`DispatchOutcome`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum HooksMode {
    /// Hooks run (the default).
    #[default]
    Enforce,
    /// Evaluation bypass: no hook runs and every dispatch says `bypassed: true`. The permission
    /// gate still reviews tool calls: bypass turns off hooks, not policy.
    Bypass,
}

/// Runs the hooks of one run's registry. Owns the registry; dropping the dispatcher drops
/// every hook of the run.
pub struct Dispatcher {
    registry: Registry,
    gate: Option<Arc<dyn PermissionGate>>,
    mode: HooksMode,
    background: Background,
    detached: Option<Arc<dyn DetachedObserver>>,
    awaited: RunCount,
}

impl Dispatcher {
    /// A dispatcher over `registry`, enforcing hooks, with no permission gate.
    pub fn new(registry: Registry) -> Self {
        Self {
            registry,
            gate: None,
            mode: HooksMode::Enforce,
            background: Background::default(),
            detached: None,
            awaited: RunCount::default(),
        }
    }

    /// Waits until every detached run of an `awaited` hook ([`HookOptions::awaited`]) this
    /// dispatcher started has ended and its [`DetachedObserver`] has heard how: at once when
    /// none is running. Each run keeps its own deadline, so this waits at most the longest
    /// deadline. Runs detached meanwhile are waited for too.
    ///
    /// # Cancel safety
    /// Cancel safe: dropping the future only stops the wait.
    ///
    /// [`HookOptions::awaited`]: crate::HookOptions::awaited
    pub async fn awaited_idle(&self) {
        self.awaited.idle().await;
    }

    /// Detaches fire-and-forget hooks onto `background` (shared with other dispatchers) instead
    /// of this dispatcher's own queue.
    #[must_use]
    pub fn with_background(mut self, background: Background) -> Self {
        self.background = background;
        self
    }

    /// Reports how each fire-and-forget hook run of this dispatcher ended (see
    /// [`DetachedObserver`]).
    #[must_use]
    pub fn with_detached_observer(mut self, observer: Arc<dyn DetachedObserver>) -> Self {
        self.detached = Some(observer);
        self
    }

    /// Attaches the permission gate that reviews `pre_tool_use` calls.
    #[must_use]
    pub fn with_permission_gate(mut self, gate: Arc<dyn PermissionGate>) -> Self {
        self.gate = Some(gate);
        self
    }

    /// Sets whether hooks run.
    #[must_use]
    pub fn with_hooks_mode(mut self, mode: HooksMode) -> Self {
        self.mode = mode;
        self
    }

    /// The registry.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// Dispatches one event and folds the hooks' outcomes. Never fails: every hook failure
    /// (deadline, panic, error, invalid output) is recorded and resolved by the hook's failure
    /// mode.
    ///
    /// Must run inside a Tokio runtime with the time driver enabled (hook deadlines). Allocates
    /// nothing when no hook matches.
    ///
    /// # Cancel safety
    /// Dropping the future stops the hook that is running at that moment (its future is
    /// dropped); hooks that have not started never start. No decision is returned, so the
    /// caller must treat a cancelled `pre_tool_use` dispatch as "do not run the tool".
    pub async fn dispatch(&self, payload: Arc<Payload>) -> DispatchOutcome {
        let event = payload.event();
        let bypassed = self.mode == HooksMode::Bypass;
        let mut outcome = DispatchOutcome::new(event, bypassed);
        if !bypassed && let Some(hooks) = self.registry.hooks(&outcome.event) {
            let mut chain = Chain::new(
                &mut outcome,
                payload.clone(),
                &self.background,
                self.detached.as_ref(),
                &self.awaited,
            );
            match hooks.mode {
                DispatchMode::Notification => chain.run_concurrently(hooks).await,
                DispatchMode::Blocking | DispatchMode::Result => {
                    chain.run_sequentially(hooks).await
                }
            }
        }
        if let Some(gate) = &self.gate {
            gate::review(gate.as_ref(), &payload, &mut outcome).await;
        }
        self.notify_observers(&payload, &outcome);
        outcome
    }

    fn notify_observers(&self, payload: &Payload, outcome: &DispatchOutcome) {
        for observer in &self.registry.observers {
            let observed = catch_unwind(AssertUnwindSafe(|| observer.observe(payload, outcome)));
            if let Err(panic) = observed {
                let message = run::panic_message(panic);
                tracing::warn!(error = %message, "dispatch observer panicked");
            }
        }
    }
}
