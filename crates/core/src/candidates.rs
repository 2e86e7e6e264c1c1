//! Selecting the hooks of one event that a payload's match target (tool name or agent type)
//! selects through their `tools` globs, with a per-registry cache of the results.

use std::borrow::Cow;
use std::hash::BuildHasher;
use std::sync::OnceLock;

use foldhash::fast::RandomState;
use globset::{Candidate, GlobSet};

use crate::dispatch::HookNames;
use crate::error::Result;
use crate::matcher::{ToolMatcher, build_set};
use crate::registry::{DispatchMode, Entry};

/// Slots of the per-event selection cache: at most this many match targets are remembered;
/// more are matched every time. An empty slot is one word and a lock state (16 bytes): a
/// registry lives as long as its session, and a server holds thousands of sessions waiting.
const CACHE_CAPACITY: usize = 128;
/// Slots looked at for one target before giving up (open addressing, linear probing).
const CACHE_PROBES: usize = 8;
/// Longest match target remembered, in bytes (tool names are short; longer ones are matched
/// every time, so a hostile name cannot pin memory).
const CACHE_MAX_KEY: usize = 128;

/// The hooks of one event, in run order, with their globs compiled into one set.
pub(crate) struct EventHooks {
    pub(crate) mode: DispatchMode,
    pub(crate) entries: Vec<Entry>,
    /// The entries' names, in the same order: what the outcome's records refer to.
    pub(crate) names: HookNames,
    globs: GlobSet,
    /// For each glob of `globs`, the index of the entry it belongs to (ascending).
    glob_owner: Vec<u32>,
    /// Indexes of the entries without `tools` globs (ascending).
    untooled: Vec<u32>,
    /// `0..entries.len()`: the selection of every entry.
    every: Box<[u32]>,
    /// Non-empty selections by match target, when globs apply.
    cache: Option<SelectionCache>,
}

/// Remembered selections. The registry is immutable, so a selection never goes stale and a
/// filled slot is never emptied: readers take no lock and clone nothing (a selection is
/// borrowed for as long as the registry lives). Empty selections are not kept, so the no-match
/// path never allocates.
struct SelectionCache {
    /// Seeded per registry. foldhash rather than SipHash: hashing the target was a tenth of a
    /// dispatch, and a name crafted to collide can only crowd targets out of the cache (probing
    /// is bounded), never slow a lookup down.
    hasher: RandomState,
    slots: Box<[Slot]>,
}

/// One remembered selection: the match target and the indexes of the entries it selects.
type Slot = OnceLock<Box<(Box<str>, Box<[u32]>)>>;

/// The entries a payload selects, in run order: indexes into the event's entries, borrowed
/// (every entry, or a remembered selection) or owned (a selection the cache had no room for).
/// One shape for all cases, so that walking it costs no branch on where the indexes live.
pub(crate) struct Candidates<'a> {
    entries: &'a [Entry],
    names: &'a HookNames,
    indexes: Cow<'a, [u32]>,
}

impl<'a> Candidates<'a> {
    /// The event's entries and the indexes of the selected ones, in run order.
    pub(crate) fn split(&self) -> (&'a [Entry], &[u32]) {
        (self.entries, &self.indexes)
    }

    /// The names of the event's entries.
    pub(crate) fn names(&self) -> &'a HookNames {
        self.names
    }

    /// The selected entries, in run order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &'a Entry> + '_ {
        let entries = self.entries;
        self.indexes
            .iter()
            .filter_map(move |&index| entries.get(usize::try_from(index).ok()?))
    }
}

impl SelectionCache {
    fn new() -> Self {
        Self {
            hasher: RandomState::default(),
            slots: (0..CACHE_CAPACITY).map(|_| OnceLock::new()).collect(),
        }
    }

    /// The slots `target` may sit in, in probing order.
    fn probe(&self, target: &str) -> impl Iterator<Item = &Slot> {
        // Truncating the hash is fine: it only picks a slot.
        #[allow(clippy::cast_possible_truncation)]
        let start = self.hasher.hash_one(target) as usize;
        (0..CACHE_PROBES).map(move |i| &self.slots[(start + i) % CACHE_CAPACITY])
    }

    fn get(&self, target: &str) -> Option<&[u32]> {
        for slot in self.probe(target) {
            // Slots fill in probing order and are never emptied: an empty one ends the search.
            let (key, selection) = &**slot.get()?;
            if **key == *target {
                return Some(selection);
            }
        }
        None
    }

    /// Remembers `selection` for `target`; gives it back when there is no room.
    fn remember(&self, target: &str, selection: Vec<u32>) -> Result<&[u32], Vec<u32>> {
        if target.len() > CACHE_MAX_KEY {
            return Err(selection);
        }
        let mut value = Some(Box::new((Box::from(target), selection.into_boxed_slice())));
        for slot in self.probe(target) {
            // Our value goes into the first free slot, and then the key matches: it is taken
            // at most once, just before returning.
            let (key, selection) = &**slot.get_or_init(|| value.take().unwrap_or_default());
            if **key == *target {
                return Ok(selection);
            }
        }
        Err(value
            .map(|remembered| remembered.1.into_vec())
            .unwrap_or_default())
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
        mut entries: Vec<Entry>,
        tools: &[Option<ToolMatcher>],
    ) -> Result<Self> {
        for (index, entry) in (0u32..).zip(&mut entries) {
            entry.index = index;
        }
        let names = entries.iter().map(|entry| entry.name.clone()).collect();
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
        // An entry whose `tools` list is empty has no glob but must still be filtered out.
        let filtered = untooled.len() < entries.len();
        let every = (0u32..).take(entries.len()).collect();
        Ok(Self {
            mode,
            entries,
            names,
            globs: build_set(&globs)?,
            glob_owner,
            untooled,
            every,
            cache: filtered.then(SelectionCache::new),
        })
    }

    /// The entries to consider for a payload whose match target is `target`: those whose
    /// globs match it and those without globs, in run order. Globs do not apply when there is
    /// no target. Allocates nothing when no entry is selected or the selection is remembered.
    pub(crate) fn candidates(&self, target: Option<&str>) -> Candidates<'_> {
        let (Some(target), Some(cache)) = (target, &self.cache) else {
            return self.listed(&self.every);
        };
        if let Some(listed) = cache.get(target) {
            return self.listed(listed);
        }
        let selected = self.select(target);
        if selected.is_empty() {
            return self.listed(&[]);
        }
        match cache.remember(target, selected) {
            Ok(listed) => self.listed(listed),
            Err(selected) => Candidates {
                entries: &self.entries,
                names: &self.names,
                indexes: Cow::Owned(selected),
            },
        }
    }

    fn listed<'a>(&'a self, indexes: &'a [u32]) -> Candidates<'a> {
        Candidates {
            entries: &self.entries,
            names: &self.names,
            indexes: Cow::Borrowed(indexes),
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
