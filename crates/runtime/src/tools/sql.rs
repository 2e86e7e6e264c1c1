//! `sql_query` and `sql_execute` on the agent's SQLite database file.

use std::time::Instant;

use futures::TryStreamExt;
use serde_json::{Map, Value, json};
use sqlx::sqlite::{SqliteConnectOptions, SqliteRow};
use sqlx::{Column, ConnectOptions, Row, SqliteConnection, TypeInfo, ValueRef};
use tollgate_core::BoxFuture;

use super::{Tool, ToolEnv, ToolError, string_arg};
use crate::model::ToolSpec;

/// Most rows `sql_query` returns; `truncated` says when there were more.
pub const MAX_ROWS: usize = 200;

/// Runs one read-only statement: the connection is opened read-only, so a write fails in
/// SQLite itself, whatever the hooks said.
#[derive(Debug, Clone, Copy)]
pub struct SqlQueryTool;

/// Runs one or more statements that may write.
#[derive(Debug, Clone, Copy)]
pub struct SqlExecuteTool;

fn spec(name: &str, description: &str) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: description.into(),
        parameters: json!({
            "type": "object",
            "properties": {"sql": {"type": "string"}},
            "required": ["sql"]
        }),
    }
}

/// Refuses SQL that reaches files other than the agent's database: `ATTACH` (opens or creates
/// any file) and `VACUUM INTO` (writes one). SQLite's authorizer would be the precise tool, but
/// sqlx does not expose it; this scan is on words, so a string literal containing `attach`
/// is refused too (documented, and a false refusal, never a false pass).
fn confined(sql: &str) -> Result<(), ToolError> {
    let words: Vec<String> = sql
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_uppercase)
        .collect();
    let attach = words.iter().any(|w| w == "ATTACH");
    // `VACUUM [schema] INTO file`: both words anywhere is enough to refuse.
    let vacuum_into = words.iter().any(|w| w == "VACUUM") && words.iter().any(|w| w == "INTO");
    if attach || vacuum_into {
        return Err(ToolError::new(
            "ATTACH and VACUUM INTO are refused: they reach files outside the agent's database",
        ));
    }
    Ok(())
}

async fn connect(env: &ToolEnv, read_only: bool) -> Result<SqliteConnection, ToolError> {
    let Some(path) = &env.database else {
        return Err(ToolError::new("this agent has no database"));
    };
    let mut conn = SqliteConnectOptions::new()
        .filename(path)
        .read_only(read_only)
        .create_if_missing(false)
        .connect()
        .await
        .map_err(|e| ToolError::new(format!("cannot open the database: {e}")))?;
    // SQLite checks the deadline every few thousand steps and interrupts the statement past it
    // (a runaway recursive CTE ends instead of running for ever).
    let deadline = Instant::now() + env.tool_timeout;
    conn.lock_handle()
        .await
        .map_err(|e| ToolError::new(format!("cannot open the database: {e}")))?
        .set_progress_handler(10_000, move || Instant::now() < deadline);
    Ok(conn)
}

fn sql_error(e: &sqlx::Error, env: &ToolEnv) -> ToolError {
    match e {
        sqlx::Error::Database(db) if db.message().contains("interrupted") => {
            ToolError::new(format!(
                "SQL error: the statement ran past {} s and was interrupted",
                env.tool_timeout.as_secs()
            ))
        }
        sqlx::Error::Database(db) => ToolError::new(format!("SQL error: {}", db.message())),
        other => ToolError::new(format!("SQL error: {other}")),
    }
}

impl Tool for SqlQueryTool {
    fn spec(&self) -> ToolSpec {
        spec(
            "sql_query",
            "Run one read-only SQL query on the SQLite database; returns rows.",
        )
    }

    fn call<'a>(
        &'a self,
        args: &'a Value,
        env: &'a ToolEnv,
    ) -> BoxFuture<'a, Result<Value, ToolError>> {
        Box::pin(async move {
            let sql = string_arg(args, "sql")?;
            confined(sql)?;
            let mut conn = connect(env, true).await?;
            // Rows stream in; at most MAX_ROWS + 1 are kept, whatever the query would return.
            let mut stream = sqlx::query(sqlx::AssertSqlSafe(sql.to_owned())).fetch(&mut conn);
            let mut rows = Vec::new();
            while rows.len() <= MAX_ROWS {
                match stream.try_next().await.map_err(|e| sql_error(&e, env))? {
                    Some(row) => rows.push(row),
                    None => break,
                }
            }
            drop(stream);
            let columns: Vec<String> = rows
                .first()
                .map(|r| r.columns().iter().map(|c| c.name().to_owned()).collect())
                .unwrap_or_default();
            let truncated = rows.len() > MAX_ROWS;
            let rows: Vec<Value> = rows.iter().take(MAX_ROWS).map(row_json).collect();
            Ok(json!({"columns": columns, "rows": rows, "truncated": truncated}))
        })
    }
}

impl Tool for SqlExecuteTool {
    fn spec(&self) -> ToolSpec {
        spec(
            "sql_execute",
            "Run SQL statements that change the SQLite database.",
        )
    }

    fn call<'a>(
        &'a self,
        args: &'a Value,
        env: &'a ToolEnv,
    ) -> BoxFuture<'a, Result<Value, ToolError>> {
        Box::pin(async move {
            let sql = string_arg(args, "sql")?;
            confined(sql)?;
            let mut conn = connect(env, false).await?;
            let done = sqlx::raw_sql(sqlx::AssertSqlSafe(sql.to_owned()))
                .execute(&mut conn)
                .await
                .map_err(|e| sql_error(&e, env))?;
            Ok(json!({"rows_affected": done.rows_affected()}))
        })
    }
}

/// A row as `{column: value}`, by SQLite storage class.
fn row_json(row: &SqliteRow) -> Value {
    let mut map = Map::new();
    for (i, column) in row.columns().iter().enumerate() {
        let class = row
            .try_get_raw(i)
            .map(|raw| {
                if raw.is_null() {
                    "NULL".to_owned()
                } else {
                    raw.type_info().name().to_owned()
                }
            })
            .unwrap_or_default();
        let value = match class.as_str() {
            "INTEGER" => row.try_get::<i64, _>(i).map(Value::from).ok(),
            "REAL" => row.try_get::<f64, _>(i).map(Value::from).ok(),
            "TEXT" => row.try_get::<String, _>(i).map(Value::from).ok(),
            "BLOB" => row
                .try_get::<Vec<u8>, _>(i)
                .map(|b| Value::String(format!("<{} bytes>", b.len())))
                .ok(),
            _ => None,
        };
        map.insert(column.name().to_owned(), value.unwrap_or(Value::Null));
    }
    Value::Object(map)
}

/// Creates `path` from the statements of `seed` when it does not exist yet.
///
/// # Errors
/// When the database cannot be created or a seed statement fails (the half-made file is
/// removed).
pub async fn seed_database(path: &std::path::Path, seed: &str) -> Result<(), ToolError> {
    if path.exists() {
        return Ok(());
    }
    let made = async {
        let mut conn = SqliteConnectOptions::new()
            .filename(path)
            .create_if_missing(true)
            .connect()
            .await
            .map_err(|e| ToolError::new(format!("cannot create the database: {e}")))?;
        sqlx::raw_sql(sqlx::AssertSqlSafe(seed.to_owned()))
            .execute(&mut conn)
            .await
            .map_err(|e| ToolError::new(format!("SQL error: {e}")))?;
        Ok(())
    }
    .await;
    if made.is_err() {
        let _ = std::fs::remove_file(path);
    }
    made
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn query_reads_and_refuses_writes_execute_writes() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("t.db");
        seed_database(
            &db,
            "CREATE TABLE t (id INTEGER, name TEXT, score REAL, b BLOB); \
                            INSERT INTO t VALUES (1, 'a', 1.5, x'00ff'), (2, NULL, NULL, NULL);",
        )
        .await
        .unwrap();
        let env = ToolEnv {
            workspace: dir.path().into(),
            database: Some(db),
            tool_timeout: Duration::from_secs(5),
        };
        let rows = SqlQueryTool
            .call(&json!({"sql": "SELECT * FROM t ORDER BY id"}), &env)
            .await
            .unwrap();
        assert_eq!(rows["columns"], json!(["id", "name", "score", "b"]));
        assert_eq!(
            rows["rows"][0],
            json!({"id": 1, "name": "a", "score": 1.5, "b": "<2 bytes>"})
        );
        assert_eq!(rows["rows"][1]["name"], Value::Null);
        let refused = SqlQueryTool
            .call(&json!({"sql": "DELETE FROM t"}), &env)
            .await
            .unwrap_err();
        assert!(refused.0.contains("readonly"), "{refused}");
        let done = SqlExecuteTool
            .call(&json!({"sql": "DELETE FROM t WHERE id = 2"}), &env)
            .await
            .unwrap();
        assert_eq!(done, json!({"rows_affected": 1}));
        for escape in [
            "ATTACH DATABASE '/tmp/elsewhere.db' AS x",
            "attach/**/'../x.db' as y",
            "VACUUM INTO '/tmp/copy.db'",
            "vacuum main\ninto '/tmp/copy.db'",
        ] {
            let refused = SqlExecuteTool
                .call(&json!({"sql": escape}), &env)
                .await
                .unwrap_err();
            assert!(
                refused.0.contains("ATTACH and VACUUM INTO"),
                "{escape}: {refused}"
            );
            assert!(
                SqlQueryTool
                    .call(&json!({"sql": escape}), &env)
                    .await
                    .is_err()
            );
        }
        // Runaway statements end at the deadline; huge results are cut, not loaded.
        let quick = ToolEnv {
            tool_timeout: Duration::from_secs(1),
            ..env.clone()
        };
        let forever = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c";
        let stopped = SqlQueryTool
            .call(&json!({"sql": forever}), &quick)
            .await
            .unwrap_err();
        assert!(stopped.0.contains("interrupted"), "{stopped}");
        let endless =
            "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c";
        let cut = SqlQueryTool
            .call(&json!({"sql": endless}), &env)
            .await
            .unwrap();
        assert_eq!(cut["rows"].as_array().unwrap().len(), MAX_ROWS);
        assert_eq!(cut["truncated"], true);
        let bad = SqlQueryTool
            .call(&json!({"sql": "SELECT nope FROM t"}), &env)
            .await
            .unwrap_err();
        assert!(bad.0.starts_with("SQL error"), "{bad}");
    }
}
