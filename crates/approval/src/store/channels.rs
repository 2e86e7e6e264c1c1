//! What the approval channels keep in the store: one row per request and channel it is sent
//! to (`channel_message`), and the callback deliveries seen (`channel_event`).
//!
//! Sends and updates are audited in `confirmation_event` (actions `send` and `update`,
//! `applied` or `refused`, with the channel and the platform's answer), beside the
//! transitions, so a request's history shows where it was announced and what failed.

use sqlx::sqlite::SqliteRow;
use sqlx::{Row, Sqlite, Transaction};

use super::Store;
use super::rows::{audit, by_id, decode};
use crate::error::StoreError;
use crate::model::{Request, Status};

/// One request's message on one channel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChannelMessage {
    /// The request.
    pub request_id: String,
    /// The channel's kind (`feishu`, `slack`).
    pub channel: String,
    /// The random nonce the message's buttons carry; a click must bring it back.
    pub nonce: String,
    /// The platform's message id, once the platform accepted the message.
    pub message_id: Option<String>,
    /// Sends tried so far.
    pub attempts: u32,
    /// When the next send may be tried (ms since the Unix epoch).
    pub next_try_at: i64,
    /// Why the last send failed.
    pub last_error: Option<String>,
    /// When the platform accepted the message.
    pub sent_at: Option<i64>,
    /// The terminal status the message shows, once replaced (by a click reply or an update).
    pub closed_status: Option<Status>,
}

/// A failed send: when to try again, if at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retry {
    /// Try again at this time (ms since the Unix epoch).
    At(i64),
    /// Give up: the message is never sent (the request stays reachable elsewhere).
    Never,
}

/// A message row joined with its request.
pub type Outgoing = (ChannelMessage, Request);

/// The message columns, in [`decode_message`]'s names (a macro: queries stay `&'static str`).
macro_rules! message_columns {
    () => {
        "m.request_id AS m_request_id, m.channel AS m_channel, \
     m.nonce AS m_nonce, m.message_id AS m_message_id, m.attempts AS m_attempts, \
     m.next_try_at AS m_next_try_at, m.last_error AS m_last_error, m.sent_at AS m_sent_at, \
     m.closed_status AS m_closed_status"
    };
}

/// The request columns prefixed `r.`, in `decode`'s names.
macro_rules! request_columns {
    () => {
        "r.id, r.idempotency_key, r.run_id, r.session_id, r.agent, \
     r.tool_name, r.tool_call_id, r.arguments, r.args_hash, r.reasons, r.asked_by, \
     r.approvers, r.status, r.channel, r.channel_message_id, r.created_at, r.expires_at, \
     r.responded_at, r.responded_by, r.response_note, r.edited_arguments, \
     r.edited_args_hash, r.consumed_at, r.finished_at"
    };
}

/// Message rows joined with their requests, then `$tail` (a macro: queries stay
/// `&'static str`).
macro_rules! select_outgoing {
    ($tail:literal) => {
        concat!(
            "SELECT ",
            message_columns!(),
            ", ",
            request_columns!(),
            " FROM channel_message m JOIN confirmation_request r ON r.id = m.request_id ",
            $tail
        )
    };
}

fn decode_message(row: &SqliteRow) -> Result<ChannelMessage, StoreError> {
    let attempts: i64 = row.try_get("m_attempts")?;
    let closed: Option<String> = row.try_get("m_closed_status")?;
    let closed_status = match closed {
        None => None,
        Some(text) => Some(Status::parse(&text).ok_or_else(|| {
            StoreError::Corrupt(format!("channel_message.closed_status `{text}` is unknown"))
        })?),
    };
    Ok(ChannelMessage {
        request_id: row.try_get("m_request_id")?,
        channel: row.try_get("m_channel")?,
        nonce: row.try_get("m_nonce")?,
        message_id: row.try_get("m_message_id")?,
        attempts: u32::try_from(attempts).unwrap_or(u32::MAX),
        next_try_at: row.try_get("m_next_try_at")?,
        last_error: row.try_get("m_last_error")?,
        sent_at: row.try_get("m_sent_at")?,
        closed_status,
    })
}

fn decode_outgoing(row: &SqliteRow) -> Result<Outgoing, StoreError> {
    Ok((decode_message(row)?, decode(row)?))
}

/// A fresh nonce: 128 random bits from the OS, as hex.
fn nonce() -> Result<String, StoreError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| StoreError::Random(e.to_string()))?;
    Ok(hex::encode(bytes))
}

impl Store {
    /// Pending requests filed after position `after` (0: from the start), oldest first, at
    /// most `limit`, with the position to pass next time. Positions only grow, so a caller
    /// that remembers the last one sees each request once.
    ///
    /// # Errors
    /// The database fails.
    pub async fn pending_after(
        &self,
        after: i64,
        limit: u32,
    ) -> Result<(Vec<Request>, i64), StoreError> {
        // The highest position first: a request filed after this read has a higher one
        // (one writer at a time), so it cannot be counted as seen before it was read.
        let top: i64 =
            sqlx::query_scalar("SELECT COALESCE(MAX(rowid), 0) FROM confirmation_request")
                .fetch_one(&self.pool)
                .await?;
        let rows = sqlx::query(concat!(
            "SELECT r.rowid AS position, ",
            request_columns!(),
            " FROM confirmation_request r \
             WHERE r.rowid > $1 AND r.rowid <= $2 AND r.status = 'pending' \
             ORDER BY r.rowid LIMIT $3"
        ))
        .bind(after)
        .bind(top)
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?;
        let mut last = after;
        let mut requests = Vec::with_capacity(rows.len());
        for row in &rows {
            last = row.try_get("position")?;
            requests.push(decode(row)?);
        }
        if rows.len() < limit as usize {
            // Nothing pending up to `top` beyond the last row read.
            last = last.max(top);
        }
        Ok((requests, last))
    }

    /// Records that `request_id` is to be sent on `channel`, with a fresh nonce; a request
    /// already recorded keeps its row (and nonce). Returns the row.
    ///
    /// # Errors
    /// The database fails, or the request does not exist.
    pub async fn enqueue_message(
        &self,
        request_id: &str,
        channel: &str,
    ) -> Result<ChannelMessage, StoreError> {
        let now = self.now_ms();
        sqlx::query(
            "INSERT INTO channel_message (request_id, channel, nonce, next_try_at, created_at) \
             VALUES ($1, $2, $3, $4, $4) ON CONFLICT (request_id, channel) DO NOTHING",
        )
        .bind(request_id)
        .bind(channel)
        .bind(nonce()?)
        .bind(now)
        .execute(&self.pool)
        .await?;
        self.channel_message(request_id, channel)
            .await?
            .ok_or_else(|| {
                StoreError::Corrupt(format!("channel message {request_id}/{channel} vanished"))
            })
    }

    /// The message of `request_id` on `channel`, if it was enqueued.
    ///
    /// # Errors
    /// The database fails.
    pub async fn channel_message(
        &self,
        request_id: &str,
        channel: &str,
    ) -> Result<Option<ChannelMessage>, StoreError> {
        let row = sqlx::query(concat!(
            "SELECT ",
            message_columns!(),
            " FROM channel_message m \
             WHERE m.request_id = $1 AND m.channel = $2"
        ))
        .bind(request_id)
        .bind(channel)
        .fetch_optional(&self.pool)
        .await?;
        row.as_ref().map(decode_message).transpose()
    }

    /// Every channel message of `request_id`.
    ///
    /// # Errors
    /// The database fails.
    pub async fn channel_messages(
        &self,
        request_id: &str,
    ) -> Result<Vec<ChannelMessage>, StoreError> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            message_columns!(),
            " FROM channel_message m WHERE m.request_id = $1 \
             ORDER BY m.channel"
        ))
        .bind(request_id)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(decode_message).collect()
    }

    /// Claims up to `limit` messages of `channel` that are due to be sent (no message id,
    /// request still pending, retry time reached): each is leased for `lease_ms`, so another
    /// server on the same database does not send it at the same time.
    ///
    /// # Errors
    /// The database fails.
    pub async fn claim_unsent(
        &self,
        channel: &str,
        lease_ms: i64,
        limit: u32,
    ) -> Result<Vec<Outgoing>, StoreError> {
        let now = self.now_ms();
        let due = sqlx::query(select_outgoing!(
            "WHERE m.channel = $1 AND m.message_id IS NULL AND m.next_try_at <= $2 \
             AND r.status = 'pending' ORDER BY m.next_try_at LIMIT $3"
        ))
        .bind(channel)
        .bind(now)
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?;
        let mut claimed = Vec::with_capacity(due.len());
        for row in &due {
            let (message, request) = decode_outgoing(row)?;
            let taken = sqlx::query(
                "UPDATE channel_message SET next_try_at = $1 WHERE request_id = $2 \
                 AND channel = $3 AND message_id IS NULL AND next_try_at = $4",
            )
            .bind(now + lease_ms)
            .bind(&message.request_id)
            .bind(channel)
            .bind(message.next_try_at)
            .execute(&self.pool)
            .await?
            .rows_affected();
            if taken == 1 {
                claimed.push((message, request));
            }
        }
        Ok(claimed)
    }

    /// Records that the platform accepted the message of `request_id` on `channel` as
    /// `message_id` (audited as `send`, applied).
    ///
    /// # Errors
    /// The database fails.
    pub async fn message_sent(
        &self,
        request_id: &str,
        channel: &str,
        message_id: &str,
    ) -> Result<(), StoreError> {
        let mut tx = self.begin().await?;
        let now = self.now_ms();
        sqlx::query(
            "UPDATE channel_message SET message_id = $1, sent_at = $2, attempts = attempts + 1, \
             last_error = NULL WHERE request_id = $3 AND channel = $4",
        )
        .bind(message_id)
        .bind(now)
        .bind(request_id)
        .bind(channel)
        .execute(&mut *tx)
        .await?;
        sqlx::query(
            "UPDATE confirmation_request SET channel = COALESCE(channel, $1), \
             channel_message_id = COALESCE(channel_message_id, $2) WHERE id = $3",
        )
        .bind(channel)
        .bind(message_id)
        .bind(request_id)
        .execute(&mut *tx)
        .await?;
        let detail = format!("message {message_id}");
        note_in(&mut tx, request_id, now, channel, "send", true, &detail).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Records a failed send of `request_id` on `channel` (audited as `send`, refused, with
    /// `error`) and when to try again.
    ///
    /// # Errors
    /// The database fails.
    pub async fn message_failed(
        &self,
        request_id: &str,
        channel: &str,
        error: &str,
        retry: Retry,
    ) -> Result<(), StoreError> {
        let mut tx = self.begin().await?;
        let now = self.now_ms();
        let next = match retry {
            Retry::At(at) => at,
            Retry::Never => i64::MAX,
        };
        sqlx::query(
            "UPDATE channel_message SET attempts = attempts + 1, last_error = $1, \
             next_try_at = $2 WHERE request_id = $3 AND channel = $4 AND message_id IS NULL",
        )
        .bind(error)
        .bind(next)
        .bind(request_id)
        .bind(channel)
        .execute(&mut *tx)
        .await?;
        let detail = match retry {
            Retry::At(at) => format!("{error} (next try in {} ms)", (at - now).max(0)),
            Retry::Never => format!("{error} (not retried)"),
        };
        note_in(&mut tx, request_id, now, channel, "send", false, &detail).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Sent messages of `channel` whose request has ended but which still show buttons, at
    /// most `limit`. A request that a click on `channel` decided is left out even before its
    /// callback marks the message closed: the click's reply replaces the message.
    ///
    /// # Errors
    /// The database fails.
    pub async fn unclosed_messages(
        &self,
        channel: &str,
        limit: u32,
    ) -> Result<Vec<Outgoing>, StoreError> {
        let rows = sqlx::query(select_outgoing!(
            "WHERE m.channel = $1 AND m.message_id IS NOT NULL AND m.closed_status IS NULL \
             AND r.status <> 'pending' \
             AND NOT (r.status IN ('approved', 'rejected') AND r.channel = m.channel) \
             ORDER BY r.responded_at LIMIT $2"
        ))
        .bind(channel)
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(decode_outgoing).collect()
    }

    /// Records that the message of `request_id` on `channel` now shows `status` (a click
    /// reply or an update replaced it). With `audit`, the update is audited (`update`,
    /// applied or, with an error, refused); a refused update leaves the message open.
    ///
    /// # Errors
    /// The database fails.
    pub async fn message_closed(
        &self,
        request_id: &str,
        channel: &str,
        status: Status,
        audit: Option<Result<(), &str>>,
    ) -> Result<(), StoreError> {
        let mut tx = self.begin().await?;
        let now = self.now_ms();
        match audit {
            Some(Err(error)) => {
                note_in(&mut tx, request_id, now, channel, "update", false, error).await?;
            }
            closed => {
                sqlx::query(
                    "UPDATE channel_message SET closed_status = $1, closed_at = $2 \
                     WHERE request_id = $3 AND channel = $4",
                )
                .bind(status.as_str())
                .bind(now)
                .bind(request_id)
                .bind(channel)
                .execute(&mut *tx)
                .await?;
                if closed.is_some() {
                    let detail = format!("message shows {}", status.as_str());
                    note_in(&mut tx, request_id, now, channel, "update", true, &detail).await?;
                }
            }
        }
        tx.commit().await?;
        Ok(())
    }

    /// Records callback delivery `event_id` of `channel`; `true` when it is the first
    /// delivery of that id, `false` for a repeat.
    ///
    /// # Errors
    /// The database fails.
    pub async fn record_event(
        &self,
        channel: &str,
        event_id: &str,
        request_id: Option<&str>,
    ) -> Result<bool, StoreError> {
        let inserted = sqlx::query(
            "INSERT INTO channel_event (channel, event_id, request_id, received_at) \
             VALUES ($1, $2, $3, $4) ON CONFLICT (channel, event_id) DO NOTHING",
        )
        .bind(channel)
        .bind(event_id)
        .bind(request_id)
        .bind(self.now_ms())
        .execute(&self.pool)
        .await?
        .rows_affected();
        Ok(inserted == 1)
    }

    /// Appends an audit row about `request_id` that changes nothing (its status stays):
    /// `actor` did `action` through `channel`, `applied` or refused, and why.
    ///
    /// # Errors
    /// The database fails, or the request does not exist.
    pub async fn note(
        &self,
        request_id: &str,
        actor: &str,
        action: &str,
        applied: bool,
        channel: Option<&str>,
        detail: &str,
    ) -> Result<(), StoreError> {
        let mut tx = self.begin().await?;
        let now = self.now_ms();
        let row = by_id(&mut tx, request_id)
            .await?
            .ok_or_else(|| StoreError::Corrupt(format!("no request {request_id} to audit")))?;
        let status = row.status.as_str();
        audit(
            &mut tx,
            request_id,
            now,
            actor,
            action,
            (applied, status, status),
            channel,
            Some(detail),
        )
        .await?;
        tx.commit().await?;
        Ok(())
    }
}

/// An audit row by channel `channel` about `request_id`, in `tx`, keeping its status.
async fn note_in(
    tx: &mut Transaction<'static, Sqlite>,
    request_id: &str,
    now: i64,
    channel: &str,
    action: &str,
    applied: bool,
    detail: &str,
) -> Result<(), StoreError> {
    let Some(row) = by_id(tx, request_id).await? else {
        return Err(StoreError::Corrupt(format!(
            "no request {request_id} to audit"
        )));
    };
    let status = row.status.as_str();
    audit(
        tx,
        request_id,
        now,
        &format!("channel:{channel}"),
        action,
        (applied, status, status),
        Some(channel),
        Some(detail),
    )
    .await
}
