//! What feeds a pipeline stage's reader: every earlier stage, folded once per walk.

use std::collections::HashMap;

use tree_sitter::Node;

use super::producers::{Producer, producer};
use crate::syntax::named_children;
use crate::walk::{Analyzer, Cx};

/// What feeds a reader of `from`'s output: `from` itself and every earlier stage of its
/// pipeline (`curl | tee | sh`), nearest first, then the heredoc `here`; the first decoder,
/// else the first download.
pub(super) fn upstream(
    a: &mut Analyzer,
    cx: Cx<'_, '_>,
    from: Node<'_>,
    here: Option<Node<'_>>,
    pipeline: Option<(Node<'_>, usize)>,
) -> Producer {
    let stages = match pipeline {
        Some((pipeline, index)) => a.upstream.of(cx, pipeline, index, from),
        None => producer(cx, &[from]),
    };
    let here = here.map_or(Producer::Other, |h| producer(cx, &[h]));
    Producer::first(stages, here)
}

/// What pipeline stages produce, remembered while their tree is walked, so that a pipeline
/// of readers (`x | sh | sh | …`) scans each stage once and folds each prefix once.
#[derive(Debug, Default)]
pub(crate) struct Upstream {
    /// By stage node id.
    stages: HashMap<usize, Producer>,
    /// By pipeline node id and stage index: what stages `index`, `index - 1`, …, 0 produce.
    prefixes: HashMap<(usize, usize), Producer>,
    /// Keys in the order they were added: (stage id) or (pipeline id, index).
    log: Vec<(usize, Option<usize>)>,
}

impl Upstream {
    /// A mark to [`forget`](Self::forget) back to.
    pub fn mark(&self) -> usize {
        self.log.len()
    }

    /// Forgets what was learnt since `mark` (node ids are addresses, reused once a tree is
    /// freed).
    pub fn forget(&mut self, mark: usize) {
        for key in self.log.drain(mark.min(self.log.len())..) {
            match key {
                (stage, None) => self.stages.remove(&stage),
                (pipeline, Some(index)) => self.prefixes.remove(&(pipeline, index)),
            };
        }
    }

    /// What stages `index` (which is `stage`) down to 0 of `pipeline` produce.
    fn of(
        &mut self,
        cx: Cx<'_, '_>,
        pipeline: Node<'_>,
        index: usize,
        stage: Node<'_>,
    ) -> Producer {
        let key = (pipeline.id(), index);
        if let Some(known) = self.prefixes.get(&key) {
            return known.clone();
        }
        let below = match index.checked_sub(1) {
            None => Producer::Other,
            Some(prev) => match self.prefixes.get(&(pipeline.id(), prev)) {
                Some(known) => known.clone(),
                None => self.fold(cx, pipeline, prev),
            },
        };
        let found = Producer::first(self.stage(cx, stage), below);
        self.remember_prefix(key, found.clone());
        found
    }

    /// Folds stages 0 to `last` of `pipeline`, remembering every prefix.
    fn fold(&mut self, cx: Cx<'_, '_>, pipeline: Node<'_>, last: usize) -> Producer {
        let mut found = Producer::Other;
        for (i, stage) in named_children(pipeline)
            .into_iter()
            .take(last + 1)
            .enumerate()
        {
            found = Producer::first(self.stage(cx, stage), found);
            self.remember_prefix((pipeline.id(), i), found.clone());
        }
        found
    }

    fn remember_prefix(&mut self, key: (usize, usize), found: Producer) {
        if self.prefixes.insert(key, found).is_none() {
            self.log.push((key.0, Some(key.1)));
        }
    }

    fn stage(&mut self, cx: Cx<'_, '_>, stage: Node<'_>) -> Producer {
        if let Some(known) = self.stages.get(&stage.id()) {
            return known.clone();
        }
        let found = producer(cx, &[stage]);
        self.stages.insert(stage.id(), found.clone());
        self.log.push((stage.id(), None));
        found
    }
}

impl Producer {
    /// What `first`, then `then` produce together: the first decoder, else the first
    /// download.
    fn first(first: Producer, then: Producer) -> Producer {
        match (&first, &then) {
            (Producer::Decoder(_), _) => first,
            (_, Producer::Decoder(_)) => then,
            (Producer::Fetcher(_), _) => first,
            _ => then,
        }
    }
}
