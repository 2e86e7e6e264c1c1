//! `statusMessage`: what a hook declared in Claude Code's shape says while it runs. Claude Code
//! shows it as a spinner line; tollgate hands it to whoever shows the run live (`tollgate run`
//! prints it, the server streams it) the moment the hook starts.

use std::fmt;
use std::sync::{Arc, OnceLock};

use tollgate_protocol::Payload;

/// Told when a hook with a `statusMessage` starts.
///
/// `started` runs on the dispatch's task, before the hook's process or request starts: keep it
/// short and non-blocking.
pub trait StatusSink: Send + Sync + 'static {
    /// The hook named `hook` starts for `payload`; `message` is its `statusMessage`.
    fn started(&self, hook: &str, message: &str, payload: &Payload);
}

/// Where a registry's status messages go, attached after the hooks are built (the sink may
/// need what is made from them). Cloning shares it; until a sink is attached, messages go
/// nowhere.
#[derive(Clone, Default)]
pub struct StatusBoard(Arc<OnceLock<Arc<dyn StatusSink>>>);

impl StatusBoard {
    /// Sends the messages to `sink` from now on. Returns `false`, changing nothing, when a sink
    /// was attached already.
    pub fn attach(&self, sink: Arc<dyn StatusSink>) -> bool {
        self.0.set(sink).is_ok()
    }

    pub(super) fn show(&self, hook: &str, message: &str, payload: &Payload) {
        if let Some(sink) = self.0.get() {
            sink.started(hook, message, payload);
        }
    }
}

impl fmt::Debug for StatusBoard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StatusBoard")
            .field("attached", &self.0.get().is_some())
            .finish()
    }
}
