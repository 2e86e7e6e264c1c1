//! The records of a dispatch's hook runs. A record refers to its hook by position; the list
//! holds one shared handle to the hooks' names, so recording a run touches no reference count.

use std::ops::{Deref, Index};
use std::sync::Arc;
use std::time::Duration;

use tollgate_protocol::wire::HookRunWire;
use tollgate_protocol::{Decision, Event, FailureMode, HookKind, HookSource, RunStatus};

/// The names of one event's hooks, in run order (the order of
/// [`Registry::hook_names`](crate::Registry::hook_names)); shared by the registry and every
/// outcome of that event.
pub type HookNames = Arc<[Arc<str>]>;

/// The record of one hook run. Its hook is [`hook`](Self::hook), a position among the event's
/// hooks; the name is read through the [`HookRuns`] it belongs to (as a [`NamedRun`]).
#[derive(Debug, Clone, PartialEq)]
pub struct HookRun {
    /// The hook's position among the event's hooks, in run order (an index into
    /// [`Registry::hook_names`](crate::Registry::hook_names) for the event).
    pub hook: u32,
    /// Its kind.
    pub kind: HookKind,
    /// Where it came from.
    pub source: HookSource,
    /// How the run ended. Anything but `Completed` is a hook failure.
    pub status: RunStatus,
    /// What the run counted as: the hook's answer; `Deny` for a `fail_closed` failure on a
    /// blocking or result event; `None` for any other failure (skipped, or on a notification
    /// event where nothing can be denied). A failure never shows as `Allow`.
    pub decision: Option<Decision>,
    /// The failure, for every status but `Completed`.
    pub error: Option<String>,
    /// The hook's failure mode.
    pub failure_mode: FailureMode,
    /// Wall time of the run. For hooks that answered at once (`Hook::execute_now`, or a
    /// future ready on its first poll) in a row on a blocking or result event, the dispatcher
    /// reads the clock once before the first and once after the last (`fail_closed` hooks are
    /// timed alone): each record of such a group holds an even share of the group's time,
    /// which also counts the matchers that declined in between. So a duration is the hook's
    /// own time when it was timed alone (a `fail_closed` hook, a hook that had to wait, or a
    /// group of one), and an average over its group otherwise; either way the durations of a
    /// dispatch add up to about the time its hooks took. Zero for a hook whose matcher panicked
    /// and for detached or dropped runs. Notification hooks are each timed alone.
    pub duration: Duration,
    /// Whether the hook rewrote the arguments or the result.
    pub rewrote: bool,
}

/// A record with its hook's name: what readers of a run (traces, audit lines) take. Derefs to
/// the [`HookRun`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NamedRun<'a> {
    /// The hook's name.
    pub name: &'a str,
    /// The record.
    pub run: &'a HookRun,
}

impl Deref for NamedRun<'_> {
    type Target = HookRun;

    fn deref(&self) -> &HookRun {
        self.run
    }
}

impl NamedRun<'_> {
    /// The trace line for this run.
    pub fn to_wire(&self, event: &Event) -> HookRunWire {
        let run = self.run;
        HookRunWire {
            hook: self.name.to_owned(),
            kind: run.kind.as_str().into(),
            source: run.source.as_str().into(),
            event: event.to_string(),
            status: run.status.as_str().into(),
            decision: run.decision.as_ref().map(|d| d.as_str().into()),
            reason: run
                .decision
                .as_ref()
                .and_then(|d| d.reason())
                .map(Into::into),
            error: run.error.clone(),
            failure_mode: run.failure_mode.as_str().into(),
            duration_ms: u64::try_from(run.duration.as_millis()).unwrap_or(u64::MAX),
            rewrote: run.rewrote,
        }
    }
}

/// One dispatch's records, in run order, with the names they refer to. `runs[i]` is the
/// `i`-th record (panics out of range, like a slice); [`get`](Self::get) and
/// [`iter`](Self::iter) give records with their names.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HookRuns {
    /// Set with the first record, so that a dispatch where no hook ran touches nothing.
    names: Option<HookNames>,
    records: Vec<HookRun>,
}

impl HookRuns {
    /// Before the first record: records for runs of the hooks named in `names`, with room for
    /// `capacity` of them.
    pub(crate) fn begin(&mut self, names: &HookNames, capacity: usize) {
        if self.names.is_none() {
            self.names = Some(names.clone());
        }
        if capacity > 0 && self.records.capacity() == 0 {
            // Cheaper than growing an empty list.
            self.records = Vec::with_capacity(capacity);
        }
    }

    /// Adds a record; [`begin`](Self::begin) came first.
    pub(crate) fn push(&mut self, run: HookRun) {
        self.records.push(run);
    }

    pub(crate) fn records_mut(&mut self) -> &mut [HookRun] {
        &mut self.records
    }

    /// Number of records.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// Whether no hook ran.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// The records alone, in run order.
    pub fn records(&self) -> &[HookRun] {
        &self.records
    }

    /// The `i`-th record with its hook's name.
    pub fn get(&self, i: usize) -> Option<NamedRun<'_>> {
        self.records.get(i).map(|run| named(self.names(), run))
    }

    /// The records with their hooks' names, in run order.
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            names: self.names(),
            records: self.records.iter(),
        }
    }

    fn names(&self) -> &[Arc<str>] {
        self.names.as_deref().unwrap_or_default()
    }
}

fn named<'a>(names: &'a [Arc<str>], run: &'a HookRun) -> NamedRun<'a> {
    let name = usize::try_from(run.hook)
        .ok()
        .and_then(|i| names.get(i))
        .map_or("", |name| &**name); // "" is not reached: records name the hooks of `names`
    NamedRun { name, run }
}

/// The records of a [`HookRuns`] with their hooks' names, in run order.
#[derive(Debug, Clone)]
pub struct Iter<'a> {
    names: &'a [Arc<str>],
    records: std::slice::Iter<'a, HookRun>,
}

impl<'a> Iterator for Iter<'a> {
    type Item = NamedRun<'a>;

    fn next(&mut self) -> Option<NamedRun<'a>> {
        self.records.next().map(|run| named(self.names, run))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.records.size_hint()
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.records.next_back().map(|run| named(self.names, run))
    }
}

impl ExactSizeIterator for Iter<'_> {}

impl Index<usize> for HookRuns {
    type Output = HookRun;

    fn index(&self, i: usize) -> &HookRun {
        &self.records[i]
    }
}

impl<'a> IntoIterator for &'a HookRuns {
    type Item = NamedRun<'a>;
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}
