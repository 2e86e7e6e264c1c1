//! Reading rows and writing one accepted change with its audit row.

use serde_json::Value;
use sqlx::sqlite::SqliteRow;
use sqlx::{Row, Sqlite, Transaction};

use super::{Attempt, Change};
use crate::error::StoreError;
use crate::hash::args_hash;
use crate::model::{Request, Status};

/// The request columns, in [`decode`]'s order; a macro so queries stay `&'static str`.
macro_rules! select_request {
    ($($tail:literal)*) => {
        concat!(
            "SELECT id, idempotency_key, run_id, session_id, agent, tool_name, tool_call_id, \
             arguments, args_hash, reasons, asked_by, approvers, status, channel, \
             channel_message_id, created_at, expires_at, responded_at, responded_by, \
             response_note, edited_arguments, edited_args_hash, consumed_at, finished_at \
             FROM confirmation_request ",
            $($tail),*
        )
    };
}

pub(super) const SELECT_BY_ID: &str = select_request!("WHERE id = $1");

pub(super) async fn by_id(
    tx: &mut Transaction<'static, Sqlite>,
    id: &str,
) -> Result<Option<Request>, StoreError> {
    let row = sqlx::query(SELECT_BY_ID)
        .bind(id)
        .fetch_optional(&mut **tx)
        .await?;
    row.as_ref().map(decode).transpose()
}

pub(super) async fn by_key(
    tx: &mut Transaction<'static, Sqlite>,
    key: &str,
) -> Result<Option<Request>, StoreError> {
    let row = sqlx::query(select_request!("WHERE idempotency_key = $1"))
        .bind(key)
        .fetch_optional(&mut **tx)
        .await?;
    row.as_ref().map(decode).transpose()
}

/// Writes an accepted change with its conditional `UPDATE` and audit row; returns the row
/// as it now stands.
pub(super) async fn apply(
    tx: &mut Transaction<'static, Sqlite>,
    row: &Request,
    attempt: &Attempt<'_>,
    change: &Change,
    now: i64,
) -> Result<Request, StoreError> {
    let (updated, detail) = match change {
        Change::Leave { to, note, edit } => {
            let edit_text = edit.as_ref().map(Value::to_string);
            let edit_hash = edit.as_ref().map(args_hash);
            let updated = sqlx::query(
                "UPDATE confirmation_request SET status = $1, responded_at = $2, \
                 responded_by = $3, response_note = $4, channel = COALESCE($5, channel), \
                 edited_arguments = $6, edited_args_hash = $7 \
                 WHERE id = $8 AND status = 'pending'",
            )
            .bind(to.as_str())
            .bind(now)
            .bind(attempt.actor)
            .bind(note)
            .bind(attempt.channel)
            .bind(&edit_text)
            .bind(&edit_hash)
            .bind(&row.id)
            .execute(&mut **tx)
            .await?
            .rows_affected();
            let detail = match (note, &edit_text) {
                (Some(note), Some(edit)) => Some(format!("note: {note}; edited arguments: {edit}")),
                (Some(note), None) => Some(format!("note: {note}")),
                (None, Some(edit)) => Some(format!("edited arguments: {edit}")),
                (None, None) => None,
            };
            (updated, detail)
        }
        Change::Consume { hash } => {
            let updated = sqlx::query(
                "UPDATE confirmation_request SET consumed_at = $1 \
                 WHERE id = $2 AND status = 'approved' AND consumed_at IS NULL \
                 AND COALESCE(edited_args_hash, args_hash) = $3",
            )
            .bind(now)
            .bind(&row.id)
            .bind(hash)
            .execute(&mut **tx)
            .await?
            .rows_affected();
            (updated, Some(format!("args_hash {hash}")))
        }
        Change::Finish => {
            let updated = sqlx::query(
                "UPDATE confirmation_request SET finished_at = $1 \
                 WHERE id = $2 AND consumed_at IS NOT NULL AND finished_at IS NULL",
            )
            .bind(now)
            .bind(&row.id)
            .execute(&mut **tx)
            .await?
            .rows_affected();
            (updated, None)
        }
    };
    if updated != 1 {
        // The row was read under the writer lock, so this cannot happen on SQLite; on a
        // store without that lock the conditional UPDATE is what keeps one transition.
        return Err(StoreError::Corrupt(format!(
            "request {} changed while it was being {}d",
            row.id, attempt.action
        )));
    }
    let after = by_id(tx, &row.id)
        .await?
        .ok_or_else(|| StoreError::Corrupt(format!("request {} vanished", row.id)))?;
    audit(
        tx,
        &row.id,
        now,
        attempt.actor,
        attempt.action,
        (true, row.status.as_str(), after.status.as_str()),
        attempt.channel,
        detail.as_deref(),
    )
    .await?;
    Ok(after)
}

#[allow(clippy::too_many_arguments)]
pub(super) async fn audit(
    tx: &mut Transaction<'static, Sqlite>,
    request_id: &str,
    at: i64,
    actor: &str,
    action: &str,
    (applied, from, to): (bool, &str, &str),
    channel: Option<&str>,
    detail: Option<&str>,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO confirmation_event (request_id, at, actor, action, outcome, from_status, \
         to_status, channel, detail) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
    )
    .bind(request_id)
    .bind(at)
    .bind(actor)
    .bind(action)
    .bind(if applied { "applied" } else { "refused" })
    .bind(from)
    .bind(to)
    .bind(channel)
    .bind(detail)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

fn json_column(row: &SqliteRow, column: &str) -> Result<Value, StoreError> {
    let text: String = row.try_get(column)?;
    serde_json::from_str(&text)
        .map_err(|e| StoreError::Corrupt(format!("column {column} is not JSON: {e}")))
}

fn strings_column(row: &SqliteRow, column: &str) -> Result<Vec<String>, StoreError> {
    let text: String = row.try_get(column)?;
    serde_json::from_str(&text)
        .map_err(|e| StoreError::Corrupt(format!("column {column} is not a JSON list: {e}")))
}

pub(super) fn decode(row: &SqliteRow) -> Result<Request, StoreError> {
    let status: String = row.try_get("status")?;
    let edited: Option<String> = row.try_get("edited_arguments")?;
    Ok(Request {
        id: row.try_get("id")?,
        idempotency_key: row.try_get("idempotency_key")?,
        run_id: row.try_get("run_id")?,
        session_id: row.try_get("session_id")?,
        agent: row.try_get("agent")?,
        tool_name: row.try_get("tool_name")?,
        tool_call_id: row.try_get("tool_call_id")?,
        arguments: json_column(row, "arguments")?,
        args_hash: row.try_get("args_hash")?,
        reasons: strings_column(row, "reasons")?,
        asked_by: row.try_get("asked_by")?,
        approvers: strings_column(row, "approvers")?,
        status: Status::parse(&status)
            .ok_or_else(|| StoreError::Corrupt(format!("unknown status `{status}`")))?,
        channel: row.try_get("channel")?,
        channel_message_id: row.try_get("channel_message_id")?,
        created_at: row.try_get("created_at")?,
        expires_at: row.try_get("expires_at")?,
        responded_at: row.try_get("responded_at")?,
        responded_by: row.try_get("responded_by")?,
        response_note: row.try_get("response_note")?,
        edited_arguments: edited
            .map(|t| serde_json::from_str(&t))
            .transpose()
            .map_err(|e| StoreError::Corrupt(format!("edited_arguments is not JSON: {e}")))?,
        edited_args_hash: row.try_get("edited_args_hash")?,
        consumed_at: row.try_get("consumed_at")?,
        finished_at: row.try_get("finished_at")?,
    })
}
