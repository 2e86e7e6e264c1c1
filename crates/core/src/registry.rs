//! The registry: the immutable, ordered set of hooks for one run.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use tollgate_protocol::{BUILTIN_EVENTS, CustomEvent, Event, FailureMode, HookKind, HookSource};

use crate::candidates::EventHooks;
use crate::dispatch::outcome::DispatchObserver;
use crate::error::{CoreError, Result};
use crate::hook::Hook;
use crate::matcher::ToolMatcher;

/// A hook's deadline: 1 to 600 seconds, 10 by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HookTimeout(Duration);

impl HookTimeout {
    /// The default, 10 s.
    pub const DEFAULT: Self = Self(Duration::from_secs(10));
    /// Shortest allowed deadline, in seconds.
    pub const MIN_SECS: u64 = 1;
    /// Longest allowed deadline, in seconds.
    pub const MAX_SECS: u64 = 600;

    /// A deadline in whole seconds.
    ///
    /// # Errors
    /// [`CoreError::InvalidTimeout`] outside 1–600.
    pub fn from_secs(secs: u64) -> Result<Self> {
        if (Self::MIN_SECS..=Self::MAX_SECS).contains(&secs) {
            Ok(Self(Duration::from_secs(secs)))
        } else {
            Err(CoreError::InvalidTimeout(secs))
        }
    }

    /// The deadline.
    pub fn duration(self) -> Duration {
        self.0
    }
}

impl Default for HookTimeout {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// How the hooks of one event run (blocking, result and notification events; `docs/architecture.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DispatchMode {
    /// Sequential waterfall; the first deny stops the chain (`pre_tool_use`, `user_turn`,
    /// `subagent_start`, `permission_request`, custom events declared blocking).
    Blocking,
    /// Sequential; `modified_result` chains (`post_tool_use`).
    Result,
    /// Concurrent; decisions are ignored (every other event).
    Notification,
}

/// The dispatch mode of a built-in event. Custom events are notifications unless declared
/// blocking with [`RegistryBuilder::declare_blocking`].
pub fn builtin_mode(event: &Event) -> DispatchMode {
    match event {
        Event::PreToolUse | Event::UserTurn | Event::SubagentStart | Event::PermissionRequest => {
            DispatchMode::Blocking
        }
        Event::PostToolUse => DispatchMode::Result,
        _ => DispatchMode::Notification,
    }
}

/// Per-registration settings: what belongs to the deployment rather than to the hook's code.
#[derive(Debug, Clone, Default)]
pub struct HookOptions {
    /// Overrides [`Hook::priority`]. Lower runs first; ties run in registration order.
    pub priority: Option<i32>,
    /// Restricts the hook to matching tool names (agent types on sub-agent events). `None`
    /// matches every call. On events with neither a tool nor an agent, the globs do not apply.
    pub tools: Option<ToolMatcher>,
    /// The hook's deadline.
    pub timeout: HookTimeout,
    /// What a failure of this hook turns into.
    pub failure_mode: FailureMode,
    /// Where the hook came from.
    pub source: HookSource,
    /// On notification events, detach the hook onto the dispatcher's [`Background`] queue
    /// instead of waiting for it; its outcome is logged, not recorded. On other events the hook
    /// runs as usual (its decision is needed).
    ///
    /// [`Background`]: crate::Background
    pub fire_and_forget: bool,
    /// The hook only advises: its answer is recorded and its context kept, but the hook itself
    /// never decides nor rewrites (Claude Code's `async` hooks; the hook must answer
    /// accordingly). An advisory fire-and-forget hook is detached on every event, blocking and
    /// result events too: nothing waits for an answer that cannot change the call. Its
    /// [`additional_context`](tollgate_protocol::OutcomeExtras::additional_context) reaches the
    /// dispatcher's [`DetachedObserver`](crate::DetachedObserver) when it ends.
    pub advisory: bool,
    /// With `fire_and_forget`: the dispatcher counts the hook's detached runs until they ended
    /// and its [`DetachedObserver`](crate::DetachedObserver) heard them, so its caller can wait
    /// for their answers before it finishes ([`Dispatcher::awaited_idle`](crate::Dispatcher::awaited_idle);
    /// Claude Code's `asyncRewake` hooks, which may wake a finished session).
    pub awaited: bool,
}

impl HookOptions {
    /// Sets fire-and-forget.
    #[must_use]
    pub fn fire_and_forget(mut self, detached: bool) -> Self {
        self.fire_and_forget = detached;
        self
    }

    /// Sets whether the caller may wait for the hook's detached runs (see
    /// [`HookOptions::awaited`]).
    #[must_use]
    pub fn awaited(mut self, awaited: bool) -> Self {
        self.awaited = awaited;
        self
    }

    /// Sets whether the hook only advises (see [`HookOptions::advisory`]).
    #[must_use]
    pub fn advisory(mut self, advisory: bool) -> Self {
        self.advisory = advisory;
        self
    }

    /// Sets the priority.
    #[must_use]
    pub fn priority(mut self, priority: i32) -> Self {
        self.priority = Some(priority);
        self
    }

    /// Sets the `tools` matcher.
    #[must_use]
    pub fn tools(mut self, tools: ToolMatcher) -> Self {
        self.tools = Some(tools);
        self
    }

    /// Sets the deadline.
    #[must_use]
    pub fn timeout(mut self, timeout: HookTimeout) -> Self {
        self.timeout = timeout;
        self
    }

    /// Sets the failure mode.
    #[must_use]
    pub fn failure_mode(mut self, mode: FailureMode) -> Self {
        self.failure_mode = mode;
        self
    }

    /// Sets the source.
    #[must_use]
    pub fn source(mut self, source: HookSource) -> Self {
        self.source = source;
        self
    }
}

/// One registered hook, as the dispatcher sees it.
pub(crate) struct Entry {
    pub(crate) hook: Arc<dyn Hook>,
    /// Its position among its event's hooks, in run order (what a record refers to it by).
    pub(crate) index: u32,
    pub(crate) name: Arc<str>,
    pub(crate) kind: HookKind,
    pub(crate) priority: i32,
    pub(crate) timeout: Duration,
    pub(crate) failure_mode: FailureMode,
    pub(crate) source: HookSource,
    pub(crate) fire_and_forget: bool,
    /// Detached on blocking and result events too (an advisory fire-and-forget hook).
    pub(crate) detached_everywhere: bool,
    /// Its detached runs are counted for [`Dispatcher::awaited_idle`](crate::Dispatcher::awaited_idle).
    pub(crate) awaited: bool,
}

/// Collects hooks for one run; [`RegistryBuilder::build`] freezes them into a [`Registry`].
#[derive(Default)]
pub struct RegistryBuilder {
    pending: Vec<(Event, Arc<dyn Hook>, HookOptions)>,
    blocking_custom: HashSet<CustomEvent>,
    observers: Vec<Arc<dyn DispatchObserver>>,
}

impl RegistryBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers `hook` for `event` with default options.
    pub fn register(&mut self, event: Event, hook: impl Hook) -> &mut Self {
        self.register_with(event, hook, HookOptions::default())
    }

    /// Registers `hook` for `event` with `options`.
    pub fn register_with(
        &mut self,
        event: Event,
        hook: impl Hook,
        options: HookOptions,
    ) -> &mut Self {
        self.register_shared(event, Arc::new(hook), options)
    }

    /// Registers a shared hook (for example one instance for several events).
    pub fn register_shared(
        &mut self,
        event: Event,
        hook: Arc<dyn Hook>,
        options: HookOptions,
    ) -> &mut Self {
        self.pending.push((event, hook, options));
        self
    }

    /// Adds an observer that sees every dispatch's folded outcome (see [`DispatchObserver`]).
    pub fn observe(&mut self, observer: Arc<dyn DispatchObserver>) -> &mut Self {
        self.observers.push(observer);
        self
    }

    /// Declares a custom event blocking: its hooks run sequentially and a deny stops the chain.
    pub fn declare_blocking(&mut self, event: CustomEvent) -> &mut Self {
        self.blocking_custom.insert(event);
        self
    }

    /// Freezes the registry: hooks are ordered by priority, ties by registration order.
    ///
    /// # Errors
    /// [`CoreError::InvalidPattern`] if the `tools` globs of one event cannot be combined
    /// (they each compiled alone, so this is not expected in practice).
    pub fn build(self) -> Result<Registry> {
        let mut grouped: HashMap<Event, Vec<(Entry, Option<ToolMatcher>)>> = HashMap::new();
        for (event, hook, options) in self.pending {
            let entry = Entry {
                name: Arc::from(hook.name()),
                index: 0, // numbered once sorted
                kind: hook.kind(),
                priority: options.priority.unwrap_or_else(|| hook.priority()),
                timeout: options.timeout.duration(),
                failure_mode: options.failure_mode,
                source: options.source,
                fire_and_forget: options.fire_and_forget,
                detached_everywhere: options.fire_and_forget && options.advisory,
                awaited: options.fire_and_forget && options.awaited,
                hook,
            };
            grouped
                .entry(event)
                .or_default()
                .push((entry, options.tools));
        }
        let mut registry = Registry::empty();
        registry.observers = self.observers;
        for (event, mut entries) in grouped {
            let mode = match &event {
                Event::Custom(custom) if self.blocking_custom.contains(custom) => {
                    DispatchMode::Blocking
                }
                other => builtin_mode(other),
            };
            // A stable sort keeps registration order among equal priorities.
            entries.sort_by_key(|(entry, _)| entry.priority);
            registry.len += entries.len();
            registry.insert(event, event_hooks(mode, entries)?);
        }
        Ok(registry)
    }
}

fn event_hooks(
    mode: DispatchMode,
    sorted: Vec<(Entry, Option<ToolMatcher>)>,
) -> Result<EventHooks> {
    let (entries, tools): (Vec<Entry>, Vec<Option<ToolMatcher>>) = sorted.into_iter().unzip();
    EventHooks::new(mode, entries, &tools)
}

/// The immutable, ordered set of hooks for one run. Owned by the run's
/// [`Dispatcher`](crate::Dispatcher) and dropped with it, hooks included.
pub struct Registry {
    builtin: [Option<EventHooks>; BUILTIN_EVENTS.len()],
    custom: HashMap<CustomEvent, EventHooks>,
    len: usize,
    pub(crate) observers: Vec<Arc<dyn DispatchObserver>>,
}

impl Registry {
    /// An empty registry.
    pub fn empty() -> Self {
        Self {
            builtin: Default::default(),
            custom: HashMap::new(),
            len: 0,
            observers: Vec::new(),
        }
    }

    /// Number of registrations over all events.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no hook is registered.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Names of the hooks registered for `event`, in run order.
    pub fn hook_names(&self, event: &Event) -> Vec<&str> {
        self.hooks(event)
            .map(|hooks| hooks.entries.iter().map(|e| &*e.name).collect())
            .unwrap_or_default()
    }

    pub(crate) fn hooks(&self, event: &Event) -> Option<&EventHooks> {
        match event {
            Event::Custom(custom) => self.custom.get(custom),
            builtin => builtin_index(builtin).and_then(|i| self.builtin[i].as_ref()),
        }
    }

    fn insert(&mut self, event: Event, hooks: EventHooks) {
        match event {
            Event::Custom(custom) => {
                self.custom.insert(custom, hooks);
            }
            builtin => {
                if let Some(i) = builtin_index(&builtin) {
                    self.builtin[i] = Some(hooks);
                }
            }
        }
    }
}

fn builtin_index(event: &Event) -> Option<usize> {
    BUILTIN_EVENTS.iter().position(|e| e == event)
}
