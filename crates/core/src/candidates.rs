//! Selecting the hooks of one event that a payload's match target (tool name or agent type)
//! selects through their `tools` globs, with a per-registry cache of the results.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use globset::{Candidate, GlobSet};

use crate::error::Result;
use crate::matcher::{ToolMatcher, build_set};
use crate::registry::{DispatchMode, Entry};

/// Most match targets whose selection is remembered per event; more are matched every time.
const CACHE_CAPACITY: usize = 256;
/// Longest match target remembered, in bytes (tool names are short; longer ones are matched
/// every time, so a hostile name cannot pin memory).
const CACHE_MAX_KEY: usize = 128;

/// The hooks of one event, in run order, with their globs compiled into one set.
pub(crate) struct EventHooks {
    pub(crate) mode: DispatchMode,
    pub(crate) entries: Vec<Entry>,
    globs: GlobSet,
    /// For each glob of `globs`, the index of the entry it belongs to (ascending).
    glob_owner: Vec<u32>,
    /// Indexes of the entries without `tools` globs (ascending).
    untooled: Vec<u32>,
    /// Non-empty selections by match target. The registry is immutable, so a selection never
    /// goes stale; empty ones are not kept, so the no-match path never allocates.
    cache: RwLock<HashMap<Box<str>, Arc<[u32]>>>,
}

/// The entries a payload selects, in run order.
pub(crate) enum Candidates<'a> {
    /// No entry.
    None,
    /// Every entry (the event's payloads have no match target, or no entry has globs).
    All(&'a [Entry]),
    /// The entries at these indexes.
    Listed(&'a [Entry], Arc<[u32]>),
}

impl<'a> Candidates<'a> {
    pub(crate) fn len(&self) -> usize {
        match self {
            Self::None => 0,
            Self::All(entries) => entries.len(),
            Self::Listed(_, indexes) => indexes.len(),
        }
    }

    pub(crate) fn get(&self, n: usize) -> Option<&'a Entry> {
        match self {
            Self::None => None,
            Self::All(entries) => entries.get(n),
            Self::Listed(entries, indexes) => {
                let index = *indexes.get(n)?;
                entries.get(usize::try_from(index).ok()?)
            }
        }
    }
}

thread_local! {
    /// Scratch space for glob hits, reused so that matching allocates at most once per thread.
    static GLOB_HITS: std::cell::Cell<Vec<usize>> = const { std::cell::Cell::new(Vec::new()) };
}

impl EventHooks {
    /// Compiles the globs of `entries` (sorted in run order; `tools[i]` belongs to `entries[i]`).
    pub(crate) fn new(
        mode: DispatchMode,
        entries: Vec<Entry>,
        tools: &[Option<ToolMatcher>],
    ) -> Result<Self> {
        let mut globs = Vec::new();
        let (mut glob_owner, mut untooled) = (Vec::new(), Vec::new());
        for (index, tools) in (0u32..).zip(tools) {
            match tools {
                None => untooled.push(index),
                Some(matcher) => {
                    for glob in matcher.globs() {
                        globs.push(glob.clone());
                        glob_owner.push(index);
                    }
                }
            }
        }
        Ok(Self {
            mode,
            entries,
            globs: build_set(&globs)?,
            glob_owner,
            untooled,
            cache: RwLock::new(HashMap::new()),
        })
    }

    /// The entries to consider for a payload whose match target is `target`: those whose
    /// globs match it and those without globs, in run order. Globs do not apply when there is
    /// no target. Allocates nothing when no entry is selected.
    pub(crate) fn candidates(&self, target: Option<&str>) -> Candidates<'_> {
        // An entry whose `tools` list is empty has no glob but must still be filtered out.
        let filtered = self.untooled.len() < self.entries.len();
        let Some(target) = target.filter(|_| filtered) else {
            return match self.entries.is_empty() {
                true => Candidates::None,
                false => Candidates::All(&self.entries),
            };
        };
        if let Some(listed) = self.cached(target) {
            return Candidates::Listed(&self.entries, listed);
        }
        let selected = self.select(target);
        if selected.is_empty() {
            return Candidates::None;
        }
        let listed: Arc<[u32]> = Arc::from(selected);
        self.remember(target, &listed);
        Candidates::Listed(&self.entries, listed)
    }

    fn cached(&self, target: &str) -> Option<Arc<[u32]>> {
        let cache = self
            .cache
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        cache.get(target).cloned()
    }

    fn remember(&self, target: &str, listed: &Arc<[u32]>) {
        let mut cache = self
            .cache
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if cache.len() < CACHE_CAPACITY && target.len() <= CACHE_MAX_KEY {
            cache.insert(target.into(), listed.clone());
        }
    }

    /// Merges the glob hits for `target` with the entries without globs, in run order.
    fn select(&self, target: &str) -> Vec<u32> {
        let mut hits = GLOB_HITS.take();
        self.globs
            .matches_candidate_into(&Candidate::from_bytes(target.as_bytes()), &mut hits);
        let mut owners = hits.iter().map(|&glob| self.glob_owner[glob]).peekable();
        let mut untooled = self.untooled.iter().copied().peekable();
        let mut selected = Vec::new();
        // Both index lists ascend: merge them, skipping an entry matched by several globs.
        loop {
            let next = match (owners.peek(), untooled.peek()) {
                (Some(owner), Some(plain)) if owner > plain => untooled.next(),
                (Some(_), _) => owners.next(),
                (None, _) => untooled.next(),
            };
            let Some(index) = next else { break };
            if selected.last() != Some(&index) {
                selected.push(index);
            }
        }
        GLOB_HITS.set(hits);
        selected
    }
}
