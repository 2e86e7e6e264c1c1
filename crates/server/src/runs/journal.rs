//! The journal writer: every run's trace lines go to the database in batches, one
//! transaction each, and only then to the run's watchers.
//!
//! Publishing after the commit means an SSE client never sees a line the database does not
//! hold: after a crash and a restart, the `seq` it last saw is still the journal's, and the
//! resumed run numbers its new lines after it.

use std::sync::Arc;

use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tollgate_approval::{JournalLine, RunChange, Store};
use tollgate_runtime::BoxFuture;
use tollgate_runtime::trace::{TraceLine, TraceSink};

use super::Runs;

/// Most lines written in one transaction.
const BATCH: usize = 512;

enum Item {
    Line(JournalLine, Option<RunChange>),
    Flush(oneshot::Sender<Result<(), String>>),
}

/// Where a server's runs send their lines. Cheap to clone.
#[derive(Clone)]
pub(crate) struct Journal {
    sender: mpsc::UnboundedSender<Item>,
}

impl std::fmt::Debug for Journal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Journal").finish_non_exhaustive()
    }
}

impl Journal {
    /// Starts the writer task over `store`; committed lines are announced through `runs`.
    /// The task ends when every clone of the journal is dropped.
    pub(crate) fn start(store: Store, runs: Arc<Runs>) -> Self {
        let (sender, receiver) = mpsc::unbounded_channel();
        tokio::spawn(write(store, runs, receiver));
        Self { sender }
    }

    /// The sink for run `run_id`.
    pub(crate) fn sink(&self, run_id: &str) -> Arc<RunSink> {
        Arc::new(RunSink {
            run_id: run_id.to_owned(),
            journal: self.clone(),
        })
    }

    /// Appends one line that did not come from a session (a run that cannot be resumed).
    pub(crate) fn append(&self, line: JournalLine, change: Option<RunChange>) {
        let _ = self.sender.send(Item::Line(line, change));
    }

    /// Resolves once every line sent so far is committed.
    ///
    /// # Errors
    /// The batch holding them could not be written, or the writer is gone.
    pub(crate) fn flush(&self) -> BoxFuture<'static, Result<(), String>> {
        let (done, wait) = oneshot::channel();
        let sent = self.sender.send(Item::Flush(done));
        Box::pin(async move {
            sent.map_err(|_| "the journal writer has stopped".to_owned())?;
            wait.await
                .map_err(|_| "the journal writer has stopped".to_owned())?
        })
    }
}

/// One run's trace, into the journal.
pub(crate) struct RunSink {
    run_id: String,
    journal: Journal,
}

impl TraceSink for RunSink {
    fn record(&self, line: &TraceLine) {
        let change = change(&self.run_id, line);
        let line = JournalLine {
            run_id: self.run_id.clone(),
            seq: line.seq,
            kind: line.step.kind.to_owned(),
            line: line.to_json().to_string(),
        };
        self.journal.append(line, change);
    }

    fn flush(&self) -> BoxFuture<'static, Result<(), String>> {
        self.journal.flush()
    }
}

/// What a line changes in its run's row: a call starts or stops waiting, the run ends.
fn change(run_id: &str, line: &TraceLine) -> Option<RunChange> {
    let text = |key: &str| line.get(key).and_then(Value::as_str).map(str::to_owned);
    let (status, pending, turns, error) = match line.step.kind {
        "approval_waiting" => ("waiting".to_owned(), text("request_id"), None, None),
        "approval" => ("running".to_owned(), None, None, None),
        "session_end" if line.origin.depth == 0 => {
            let turns = line.get("turns").and_then(Value::as_u64);
            (
                text("status").unwrap_or_else(|| "failed".into()),
                None,
                turns.and_then(|t| u32::try_from(t).ok()),
                text("error"),
            )
        }
        _ => return None,
    };
    Some(RunChange {
        run_id: run_id.to_owned(),
        status,
        pending_approval: pending,
        turns,
        error,
    })
}

async fn write(store: Store, runs: Arc<Runs>, mut receiver: mpsc::UnboundedReceiver<Item>) {
    let mut batch = Vec::with_capacity(BATCH);
    while receiver.recv_many(&mut batch, BATCH).await > 0 {
        let mut lines = Vec::new();
        let mut changes = Vec::new();
        let mut flushes = Vec::new();
        for item in batch.drain(..) {
            match item {
                Item::Line(line, change) => {
                    lines.push(line);
                    changes.extend(change);
                }
                Item::Flush(done) => flushes.push(done),
            }
        }
        let written = store
            .append_lines(&lines, &changes)
            .await
            .map_err(|e| e.to_string());
        match &written {
            Ok(()) => {
                for line in &lines {
                    runs.committed(&line.run_id, line.seq);
                }
            }
            Err(e) => {
                tracing::error!(error = %e, lines = lines.len(), "cannot write runs' journal");
            }
        }
        for done in flushes {
            let _ = done.send(written.clone());
        }
    }
}
