//! The channel hub: announces pending requests on the channels their route picks, retries
//! failed sends with backoff, and replaces the message of a request that ended without a
//! click on that channel.
//!
//! Everything the hub does is driven by the store, so a restarted server (or a second one
//! on the same database) picks up where the last left off: a request whose message has a
//! message id is never sent again, one whose send was in flight when the server died is
//! sent again (Feishu de-duplicates it by the request id), and a message still showing
//! buttons for an ended request is updated.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use globset::{Glob, GlobSet, GlobSetBuilder};
use tokio::task::JoinSet;

use super::{Channel, ChannelError};
use crate::error::StoreError;
use crate::model::Request;
use crate::store::{Outgoing, Retry, Store};

/// How often the hub looks at the store when nothing in this process woke it (requests
/// filed by another process, retries coming due).
pub const TICK: Duration = Duration::from_secs(2);
/// The first retry of a failed send waits this long; each further one twice as long.
const FIRST_RETRY_MS: i64 = 1_000;
/// No retry waits longer than this.
const MAX_RETRY_MS: i64 = 5 * 60 * 1_000;
/// How long a claimed send is leased to this server before another may try it.
const LEASE_MS: i64 = 60 * 1_000;
/// Updates of one message are tried this many times before the hub gives up on it.
const MAX_UPDATE_ATTEMPTS: u32 = 8;
/// Rows handled per query.
const BATCH: u32 = 64;

/// Which requests a channel gets: agents and tools matching glob patterns (none: all).
#[derive(Debug, Clone, Default)]
pub struct Route {
    agents: Option<GlobSet>,
    tools: Option<GlobSet>,
}

impl Route {
    /// A route for requests whose agent matches one of `agents` and whose tool matches one
    /// of `tools` (an empty list matches every one).
    ///
    /// # Errors
    /// A pattern that is not a valid glob, named in the message.
    pub fn new(agents: &[String], tools: &[String]) -> Result<Self, String> {
        Ok(Self {
            agents: globs("agents", agents)?,
            tools: globs("tools", tools)?,
        })
    }

    /// Whether `request` goes to this route's channel.
    pub fn matches(&self, request: &Request) -> bool {
        self.agents
            .as_ref()
            .is_none_or(|set| set.is_match(&request.agent))
            && self
                .tools
                .as_ref()
                .is_none_or(|set| set.is_match(&request.tool_name))
    }
}

fn globs(key: &str, patterns: &[String]) -> Result<Option<GlobSet>, String> {
    if patterns.is_empty() {
        return Ok(None);
    }
    let mut builder = GlobSetBuilder::new();
    for pattern in patterns {
        let glob =
            Glob::new(pattern).map_err(|e| format!("`{key}`: bad pattern `{pattern}`: {e}"))?;
        builder.add(glob);
    }
    builder
        .build()
        .map(Some)
        .map_err(|e| format!("`{key}`: {e}"))
}

/// A configured channel: built, or not built and why.
#[derive(Clone)]
pub enum Slot {
    /// Ready to send.
    Ready(Arc<dyn Channel>),
    /// Configured but not built (a secret's variable is unset, a bad value): every request
    /// routed to it is audited as not sent, and with `fail_closed` cancelled.
    Broken {
        /// The channel's kind.
        kind: String,
        /// Why it was not built (names the variable or key, never a secret).
        reason: String,
    },
}

impl Slot {
    /// The channel's kind.
    pub fn kind(&self) -> &str {
        match self {
            Self::Ready(channel) => channel.kind(),
            Self::Broken { kind, .. } => kind,
        }
    }
}

/// One configured channel with its route.
#[derive(Clone)]
pub struct Entry {
    /// The channel.
    pub slot: Slot,
    /// Which requests it gets.
    pub route: Route,
}

/// The hub. Cheap to clone.
#[derive(Clone)]
pub struct Hub {
    store: Store,
    entries: Arc<[Entry]>,
    fail_closed: bool,
}

impl std::fmt::Debug for Hub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kinds: Vec<&str> = self.entries.iter().map(|e| e.slot.kind()).collect();
        f.debug_struct("Hub")
            .field("channels", &kinds)
            .field("fail_closed", &self.fail_closed)
            .finish()
    }
}

/// Where the hub is between passes.
#[derive(Debug, Default)]
pub struct Cursor {
    /// The last request position routed.
    position: i64,
    /// Failed updates, by (request, channel): attempts so far and when to try again.
    updates: HashMap<(String, String), (u32, i64)>,
}

impl Hub {
    /// A hub over `store` for `entries`. With `fail_closed`, a request routed to a channel
    /// that is not built is cancelled (its call denied) instead of waiting for the other
    /// channels.
    pub fn new(store: Store, entries: Vec<Entry>, fail_closed: bool) -> Self {
        Self {
            store,
            entries: entries.into(),
            fail_closed,
        }
    }

    /// The built channel of kind `kind`, for its callback route.
    pub fn channel(&self, kind: &str) -> Option<Arc<dyn Channel>> {
        self.entries.iter().find_map(|entry| match &entry.slot {
            Slot::Ready(channel) if channel.kind() == kind => Some(Arc::clone(channel)),
            _ => None,
        })
    }

    /// Whether any channel is configured.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Runs passes until `stop` resolves: after every change this process commits, and every
    /// [`TICK`] otherwise. A failing pass is logged and tried again on the next tick.
    ///
    /// # Cancel safety
    /// May be dropped at any point: what was sent is recorded before the next send starts,
    /// and a send cut short is tried again by the next server (see the module docs).
    pub async fn run(self, stop: impl std::future::Future<Output = ()>) {
        if self.entries.is_empty() {
            return;
        }
        let mut changes = self.store.changes();
        let mut cursor = Cursor::default();
        tokio::pin!(stop);
        loop {
            changes.borrow_and_update();
            if let Err(e) = self.pass(&mut cursor).await {
                tracing::warn!(error = %e, "approval channels: a pass failed; trying again");
            }
            tokio::select! {
                () = &mut stop => return,
                _ = changes.changed() => {}
                () = tokio::time::sleep(TICK) => {}
            }
        }
    }

    /// One pass: expire overdue requests, route new ones, send what is due, update what
    /// ended.
    ///
    /// # Errors
    /// The store fails; what was done before the failure stays done.
    pub async fn pass(&self, cursor: &mut Cursor) -> Result<(), StoreError> {
        self.store.sweep().await?;
        self.route_new(cursor).await?;
        for entry in self.entries.iter() {
            if let Slot::Ready(channel) = &entry.slot {
                self.send_due(channel).await?;
                self.update_ended(channel, cursor).await?;
            }
        }
        Ok(())
    }

    async fn route_new(&self, cursor: &mut Cursor) -> Result<(), StoreError> {
        loop {
            let (requests, position) = self.store.pending_after(cursor.position, BATCH).await?;
            for request in &requests {
                self.route(request).await?;
            }
            cursor.position = position;
            if requests.len() < BATCH as usize {
                return Ok(());
            }
        }
    }

    async fn route(&self, request: &Request) -> Result<(), StoreError> {
        for entry in self.entries.iter().filter(|e| e.route.matches(request)) {
            match &entry.slot {
                Slot::Ready(channel) => {
                    self.store
                        .enqueue_message(&request.id, channel.kind())
                        .await?;
                }
                Slot::Broken { kind, reason } => {
                    let actor = format!("channel:{kind}");
                    let why = format!("channel {kind} is not available: {reason}");
                    tracing::error!(request = %request.id, channel = %kind, "{why}");
                    self.store
                        .note(&request.id, &actor, "send", false, Some(kind), &why)
                        .await?;
                    if self.fail_closed {
                        // Already decided elsewhere: nothing to deny.
                        let _ = self.store.cancel(&request.id, &actor, &why).await;
                    }
                }
            }
        }
        Ok(())
    }

    async fn send_due(&self, channel: &Arc<dyn Channel>) -> Result<(), StoreError> {
        let due = self
            .store
            .claim_unsent(channel.kind(), LEASE_MS, BATCH)
            .await?;
        let mut sends = JoinSet::new();
        for (message, request) in due {
            let channel = Arc::clone(channel);
            sends.spawn(async move {
                let sent = channel.send(&request, &message.nonce).await;
                (message, request, sent)
            });
        }
        while let Some(joined) = sends.join_next().await {
            let Ok((message, request, sent)) = joined else {
                // A send that panicked: its lease runs out and the next pass tries again.
                tracing::error!(channel = channel.kind(), "a channel send panicked");
                continue;
            };
            match sent {
                Ok(message_id) => {
                    self.store
                        .message_sent(&request.id, channel.kind(), &message_id)
                        .await?;
                }
                Err(error) => {
                    let retry = Retry::At(self.store.now_ms() + backoff(message.attempts, &error));
                    tracing::warn!(request = %request.id, channel = channel.kind(),
                        %error, "approval channel send failed; will retry");
                    self.store
                        .message_failed(&request.id, channel.kind(), &error.to_string(), retry)
                        .await?;
                }
            }
        }
        Ok(())
    }

    async fn update_ended(
        &self,
        channel: &Arc<dyn Channel>,
        cursor: &mut Cursor,
    ) -> Result<(), StoreError> {
        let now = self.store.now_ms();
        let ended: Vec<Outgoing> = self
            .store
            .unclosed_messages(channel.kind(), BATCH)
            .await?
            .into_iter()
            .filter(|(message, _)| {
                let key = (message.request_id.clone(), message.channel.clone());
                cursor.updates.get(&key).is_none_or(|(_, at)| *at <= now)
            })
            .collect();
        for (message, request) in ended {
            let Some(message_id) = message.message_id.as_deref() else {
                continue;
            };
            let key = (message.request_id.clone(), message.channel.clone());
            match channel.update(&request, message_id).await {
                Ok(()) => {
                    cursor.updates.remove(&key);
                    self.store
                        .message_closed(&request.id, channel.kind(), request.status, Some(Ok(())))
                        .await?;
                }
                Err(error) => {
                    let attempts = cursor.updates.get(&key).map_or(0, |(n, _)| *n) + 1;
                    let text = error.to_string();
                    tracing::warn!(request = %request.id, channel = channel.kind(),
                        %error, attempts, "approval channel update failed");
                    self.store
                        .message_closed(
                            &request.id,
                            channel.kind(),
                            request.status,
                            Some(Err(&text)),
                        )
                        .await?;
                    if attempts >= MAX_UPDATE_ATTEMPTS {
                        // Stop trying: the message keeps its buttons, and a click on them
                        // gets an answer saying how the request ended.
                        cursor.updates.remove(&key);
                        self.store
                            .message_closed(&request.id, channel.kind(), request.status, None)
                            .await?;
                    } else {
                        let at = now + backoff(attempts - 1, &error);
                        cursor.updates.insert(key, (attempts, at));
                    }
                }
            }
        }
        Ok(())
    }
}

/// How long to wait before the next try after `attempts` failed ones.
fn backoff(attempts: u32, error: &ChannelError) -> i64 {
    if !error.is_transient() {
        // A refusal needs the configuration changed: try rarely.
        return MAX_RETRY_MS;
    }
    let factor = 1_i64.checked_shl(attempts.min(20)).unwrap_or(i64::MAX);
    FIRST_RETRY_MS.saturating_mul(factor).min(MAX_RETRY_MS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_from_a_second_up_to_five_minutes() {
        let transient = ChannelError::Transient("503".into());
        assert_eq!(backoff(0, &transient), 1_000);
        assert_eq!(backoff(1, &transient), 2_000);
        assert_eq!(backoff(5, &transient), 32_000);
        assert_eq!(backoff(30, &transient), MAX_RETRY_MS);
        assert_eq!(
            backoff(0, &ChannelError::Rejected("bad token".into())),
            MAX_RETRY_MS
        );
    }
}
