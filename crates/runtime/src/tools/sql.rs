//! `sql_query` and `sql_execute` on the agent's SQLite database file.
//!
//! # Limits
//!
//! Set on every connection, so that SQLite itself refuses what would not fit:
//!
//! - no string or blob over [`MAX_VALUE_BYTES`] (`SQLITE_LIMIT_LENGTH`): `printf('%.*c',
//!   900000000, 'x')`, `zeroblob(1e9)`, a `replace` or `group_concat` that grows past it, or a
//!   stored value that large, fails the statement with "string or blob too big" instead of
//!   being built;
//! - at most [`MAX_COLUMNS`] columns in a result, table, index or `ORDER BY`
//!   (`SQLITE_LIMIT_COLUMN`), so one result row holds at most about `MAX_COLUMNS ×
//!   MAX_VALUE_BYTES` (1 GiB); 500 columns of 3 MB values took 2.9 GB before;
//! - SQL text at most [`MAX_SQL_BYTES`] (`SQLITE_LIMIT_SQL_LENGTH`); no attached database
//!   (`SQLITE_LIMIT_ATTACHED` 0, behind the word check below);
//! - a deadline: the progress handler interrupts a statement past the agent's
//!   `bash_timeout_seconds`.
//!
//! What the model sees of a query is capped while its rows are read (`sql/rows.rs`): each text
//! value at [`MAX_CELL_BYTES`], at most [`MAX_ROWS`] rows and [`MAX_RESULT_BYTES`] of them,
//! with `truncated` and a `cut` text saying what was left out.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rusqlite::limits::Limit;
use rusqlite::{Connection, ErrorCode, OpenFlags};
use serde_json::{Value, json};
use tollgate_core::BoxFuture;

use super::{Tool, ToolEnv, ToolError, string_arg};
use crate::model::ToolSpec;

mod rows;

pub use rows::{MAX_CELL_BYTES, MAX_RESULT_BYTES, MAX_ROWS};

/// Largest string or blob SQLite builds or reads for the SQL tools (`SQLITE_LIMIT_LENGTH`).
pub const MAX_VALUE_BYTES: usize = 4 * 1024 * 1024;
/// Longest SQL text the SQL tools accept (`SQLITE_LIMIT_SQL_LENGTH`).
pub const MAX_SQL_BYTES: usize = 1024 * 1024;
/// Most columns of a result, table, index or `ORDER BY` (`SQLITE_LIMIT_COLUMN`; SQLite's
/// default is 2000).
pub const MAX_COLUMNS: usize = 256;

/// How long a statement waits for another connection's lock.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

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
/// any file) and `VACUUM INTO` (writes one). This scan is on words, so a string literal
/// containing `attach` is refused too (documented, and a false refusal, never a false pass);
/// `SQLITE_LIMIT_ATTACHED` 0 refuses `ATTACH` in SQLite as well.
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

/// Opens the agent's database (never creating it) with the limits of the module doc.
fn connect(env: &ToolEnv, read_only: bool, cancel: &Cancel) -> Result<Connection, ToolError> {
    let Some(path) = &env.database else {
        return Err(ToolError::new("this agent has no database"));
    };
    let access = if read_only {
        OpenFlags::SQLITE_OPEN_READ_ONLY
    } else {
        OpenFlags::SQLITE_OPEN_READ_WRITE
    };
    reached_directly(path)?;
    let cannot = |e: rusqlite::Error| ToolError::new(format!("cannot open the database: {e}"));
    let flags = access | OpenFlags::SQLITE_OPEN_NO_MUTEX | OpenFlags::SQLITE_OPEN_NOFOLLOW;
    let conn = Connection::open_with_flags(path, flags).map_err(cannot)?;
    limit(&conn, Limit::SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES).map_err(cannot)?;
    limit(&conn, Limit::SQLITE_LIMIT_SQL_LENGTH, MAX_SQL_BYTES).map_err(cannot)?;
    limit(&conn, Limit::SQLITE_LIMIT_COLUMN, MAX_COLUMNS).map_err(cannot)?;
    limit(&conn, Limit::SQLITE_LIMIT_ATTACHED, 0).map_err(cannot)?;
    conn.busy_timeout(BUSY_TIMEOUT).map_err(cannot)?;
    // SQLite calls this every few thousand steps and interrupts the statement past the
    // deadline (a runaway recursive CTE ends instead of running for ever) or once the call
    // was dropped (the run was cancelled).
    let deadline = Instant::now() + env.tool_timeout;
    let cancelled = Arc::clone(&cancel.0);
    let stop = move || cancelled.load(Ordering::Relaxed) || Instant::now() >= deadline;
    conn.progress_handler(10_000, Some(stop)).map_err(cannot)?;
    Ok(conn)
}

/// Stops the call's statement when dropped: the statement runs on a blocking thread, which
/// dropping the tool call's future (a cancelled run) would otherwise leave running until its
/// deadline, holding the database's write lock.
#[derive(Default)]
struct Cancel(Arc<AtomicBool>);

impl Cancel {
    fn share(&self) -> Cancel {
        Cancel(Arc::clone(&self.0))
    }
}

impl Drop for Cancel {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// The database file is reached without symbolic links: its directory is its own canonical
/// path, and SQLite refuses a symlink as the file (`SQLITE_OPEN_NOFOLLOW`; its journals are
/// opened with `O_NOFOLLOW` anyway). The shell tool can write the workspace: a link it planted
/// must not aim these in-process tools at a file outside it, hidden or not.
fn reached_directly(path: &std::path::Path) -> Result<(), ToolError> {
    let parent = path.parent().unwrap_or(std::path::Path::new("/"));
    match parent.canonicalize() {
        Ok(real) if real == parent => Ok(()),
        _ => Err(ToolError::new(format!(
            "refusing the database {}: its directory is missing or reached through a symbolic link",
            path.display()
        ))),
    }
}

fn limit(conn: &Connection, which: Limit, value: usize) -> rusqlite::Result<()> {
    conn.set_limit(which, i32::try_from(value).unwrap_or(i32::MAX))
        .map(|_| ())
}

fn sql_error(e: &rusqlite::Error, env: &ToolEnv) -> ToolError {
    match e.sqlite_error_code() {
        Some(ErrorCode::OperationInterrupted) => ToolError::new(format!(
            "SQL error: the statement ran past {} s and was interrupted",
            env.tool_timeout.as_secs()
        )),
        Some(ErrorCode::TooBig) => ToolError::new(format!(
            "SQL error: a string or blob over {} MiB (the most the SQL tools build or read) or \
             SQL text over {} MiB (string or blob too big)",
            MAX_VALUE_BYTES / (1024 * 1024),
            MAX_SQL_BYTES / (1024 * 1024)
        )),
        _ => ToolError::new(format!("SQL error: {e}")),
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
            let sql = string_arg(args, "sql")?.to_owned();
            confined(&sql)?;
            let env = env.clone();
            let cancel = Cancel::default();
            let shared = cancel.share();
            let result = blocking(move || {
                let conn = connect(&env, true, &shared)?;
                query(&conn, &sql).map_err(|e| sql_error(&e, &env))
            })
            .await;
            drop(cancel);
            result
        })
    }
}

/// Runs one statement, keeping what [`rows::CappedRows`] keeps; rows past the caps are never
/// read.
fn query(conn: &Connection, sql: &str) -> rusqlite::Result<Value> {
    let mut statement = conn.prepare(sql)?;
    let columns = statement
        .column_names()
        .into_iter()
        .map(str::to_owned)
        .collect();
    let mut kept = rows::CappedRows::new(columns);
    let mut rows = statement.query([])?;
    while let Some(row) = rows.next()? {
        if !kept.push(row)? {
            break;
        }
    }
    Ok(kept.finish())
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
            let sql = string_arg(args, "sql")?.to_owned();
            confined(&sql)?;
            let env = env.clone();
            let cancel = Cancel::default();
            let shared = cancel.share();
            let result = blocking(move || {
                let conn = connect(&env, false, &shared)?;
                let before = conn.total_changes();
                conn.execute_batch(&sql).map_err(|e| sql_error(&e, &env))?;
                // Rows inserted, updated or deleted, by the statements and their triggers.
                Ok(json!({"rows_affected": conn.total_changes() - before}))
            })
            .await;
            drop(cancel);
            result
        })
    }
}

/// Creates `path` from the statements of `seed` when it does not exist yet.
///
/// # Errors
/// When the database cannot be created or a seed statement fails (the half-made file is
/// removed). SQLite's message is not shown, only its error code: it quotes the SQL (`near
/// "…"`, `no such table: …`), and the seed file may be any file an agent file names.
///
/// # Cancel safety
/// Dropping the future leaves the seeding to finish in the background.
pub async fn seed_database(path: &std::path::Path, seed: &str) -> Result<(), ToolError> {
    let (path, seed) = (path.to_owned(), seed.to_owned());
    blocking(move || {
        reached_directly(&path)?;
        // symlink_metadata: a dangling link planted where the database goes must not be
        // followed to create a file elsewhere (SQLite refuses it below).
        if std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file()) {
            return Ok(());
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_NOFOLLOW;
        let made = Connection::open_with_flags(&path, flags)
            .map_err(|e| ToolError::new(format!("cannot create the database: {e}")))
            .and_then(|conn| {
                conn.execute_batch(&seed).map_err(|e| {
                    let code = e
                        .sqlite_error()
                        .map_or_else(|| "not SQL".to_owned(), ToString::to_string);
                    ToolError::new(format!(
                        "the seed SQL fails (SQLite: {code}; its message is not shown because \
                         it quotes the file: run the seed in the sqlite3 shell to see it)"
                    ))
                })
            });
        if made.is_err() && std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file()) {
            let _ = std::fs::remove_file(&path);
        }
        made
    })
    .await
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ToolError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ToolError::new(format!("the SQL task failed: {e}")))?
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn regression_a_cancelled_query_ran_on_holding_its_lock() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("t.db");
        let seed = "CREATE TABLE t (id INTEGER); INSERT INTO t VALUES (0);";
        seed_database(&db, seed).await.unwrap();
        let env = ToolEnv {
            workspace: dir.path().into(),
            database: Some(db),
            // Longer than the busy timeout: only the cancellation frees the lock in time.
            tool_timeout: Duration::from_secs(20),
        };
        // A query that never ends holds a shared lock, which keeps any writer from committing.
        let endless = json!({"sql": "SELECT count(*) FROM \
            (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c), t"});
        let call = SqlQueryTool.call(&endless, &env);
        let cancelled = tokio::time::timeout(Duration::from_millis(300), call).await;
        assert!(cancelled.is_err(), "the endless query ended on its own");
        // The query stopped with its call: a write gets through within the busy timeout
        // instead of failing with `database is locked`.
        let one = json!({"sql": "INSERT INTO t (id) VALUES (1)"});
        let done = SqlExecuteTool.call(&one, &env).await.unwrap();
        assert_eq!(done, json!({"rows_affected": 1}));
    }

    #[tokio::test]
    async fn a_join_shows_both_columns_of_the_same_name() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("t.db");
        let seed = "CREATE TABLE a (id INTEGER); CREATE TABLE b (id INTEGER); \
                    INSERT INTO a VALUES (1); INSERT INTO b VALUES (2);";
        seed_database(&db, seed).await.unwrap();
        let env = ToolEnv {
            workspace: dir.path().into(),
            database: Some(db),
            tool_timeout: Duration::from_secs(5),
        };
        let sql = json!({"sql": "SELECT a.id, b.id FROM a, b"});
        let result = SqlQueryTool.call(&sql, &env).await.unwrap();
        assert_eq!(result["columns"], json!(["id", "id:2"]));
        assert_eq!(result["rows"], json!([{"id": 1, "id:2": 2}]));
    }

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
        assert!(
            cut["cut"].as_str().unwrap().contains("more than 200 rows"),
            "{cut}"
        );
        let bad = SqlQueryTool
            .call(&json!({"sql": "SELECT nope FROM t"}), &env)
            .await
            .unwrap_err();
        assert!(bad.0.starts_with("SQL error"), "{bad}");
    }

    async fn seeded(dir: &std::path::Path) -> ToolEnv {
        let db = dir.join("t.db");
        seed_database(&db, "CREATE TABLE t (id INTEGER, body TEXT);")
            .await
            .unwrap();
        ToolEnv {
            workspace: dir.into(),
            database: Some(db),
            tool_timeout: Duration::from_secs(20),
        }
    }

    #[tokio::test]
    async fn regression_a_900_mb_printf_cell_reached_the_model() {
        let dir = tempfile::tempdir().unwrap();
        let env = seeded(dir.path()).await;
        // SQLite refuses to build values past MAX_VALUE_BYTES, whichever function builds them:
        // printf gives NULL, the others fail the statement.
        let printf = SqlQueryTool
            .call(
                &json!({"sql": "SELECT printf('%.*c', 900000000, 'x') AS v"}),
                &env,
            )
            .await
            .unwrap();
        assert_eq!(printf["rows"], json!([{"v": null}]));
        for huge in [
            "SELECT zeroblob(900000000)",
            "SELECT replace(printf('%.*c', 4000000, 'x'), 'x', 'xx')",
            "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 5000) \
             SELECT group_concat(printf('%.*c', 1000, 'x'), '') FROM c",
            "SELECT printf('%.*c', 3000000, 'x') || printf('%.*c', 3000000, 'x')",
        ] {
            let query = SqlQueryTool.call(&json!({"sql": huge}), &env).await;
            let execute = SqlExecuteTool.call(&json!({"sql": huge}), &env).await;
            for refused in [query.unwrap_err(), execute.unwrap_err()] {
                assert!(
                    refused.0.contains("string or blob too big"),
                    "{huge}: {refused}"
                );
            }
        }
        let stored =
            "INSERT INTO t SELECT 1, printf('%.*c', 3000000, 'x') || printf('%.*c', 3000000, 'x')";
        let refused = SqlExecuteTool
            .call(&json!({"sql": stored}), &env)
            .await
            .unwrap_err();
        assert!(refused.0.contains("string or blob too big"), "{refused}");
        // Many large values in one row: at most MAX_COLUMNS of them.
        let columns: Vec<String> = (0..=MAX_COLUMNS)
            .map(|i| format!("printf('%.*c', 3000000, 'x') AS c{i}"))
            .collect();
        let wide = format!("SELECT {}", columns.join(", "));
        let refused = SqlQueryTool
            .call(&json!({"sql": wide}), &env)
            .await
            .unwrap_err();
        assert!(refused.0.contains("too many columns"), "{refused}");
        // A stored value under the limit is read in place and cut for the model.
        let stored = "INSERT INTO t SELECT 1, printf('%.*c', 3000000, 'x') || 'y'";
        let done = SqlExecuteTool
            .call(&json!({"sql": stored}), &env)
            .await
            .unwrap();
        assert_eq!(done, json!({"rows_affected": 1}));
        let read = SqlQueryTool
            .call(&json!({"sql": "SELECT body FROM t"}), &env)
            .await
            .unwrap();
        assert!(
            read["rows"][0]["body"]
                .as_str()
                .unwrap()
                .ends_with("… [2995905 more bytes]"),
            "{read}"
        );
        // A value under that limit reaches the model as its first MAX_CELL_BYTES bytes.
        let big = SqlQueryTool
            .call(
                &json!({"sql": "SELECT printf('%.*c', 3000000, 'x') AS big, 1 AS n"}),
                &env,
            )
            .await
            .unwrap();
        let cell = big["rows"][0]["big"].as_str().unwrap();
        assert_eq!(
            cell,
            format!(
                "{}… [{} more bytes]",
                "x".repeat(MAX_CELL_BYTES),
                3_000_000 - MAX_CELL_BYTES
            )
        );
        assert_eq!(big["rows"][0]["n"], 1);
        assert_eq!(big["truncated"], true);
        assert!(
            big["cut"]
                .as_str()
                .unwrap()
                .contains("1 value(s) longer than 4096 bytes"),
            "{big}"
        );
        // A small result says nothing was cut.
        let small = SqlQueryTool
            .call(&json!({"sql": "SELECT 'a' AS x"}), &env)
            .await
            .unwrap();
        assert_eq!(
            small,
            json!({"columns": ["x"], "rows": [{"x": "a"}], "truncated": false})
        );
    }

    #[tokio::test]
    async fn the_rows_stop_at_the_result_cap_without_reading_further() {
        let dir = tempfile::tempdir().unwrap();
        let env = seeded(dir.path()).await;
        // 100 rows of 4 KiB cells: the 256 KiB cap stops after about 60 of them.
        let sql = "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 100) \
                   SELECT n, printf('%.*c', 4000, 'x') AS body FROM c";
        let result = SqlQueryTool.call(&json!({"sql": sql}), &env).await.unwrap();
        let rows = result["rows"].as_array().unwrap();
        assert!(rows.len() < 100 && rows.len() > 50, "{}", rows.len());
        assert!(result.to_string().len() <= MAX_RESULT_BYTES + 1024);
        assert_eq!(result["truncated"], true);
        let cut = result["cut"].as_str().unwrap();
        assert_eq!(
            cut,
            format!(
                "the rows reached 256 KiB: the first {} are shown, the rest were not read",
                rows.len()
            )
        );
        // The cap is applied while reading: an endless query of big rows still ends at once.
        let endless = "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) \
                       SELECT printf('%.*c', 100000, 'x') FROM c";
        let result = SqlQueryTool
            .call(&json!({"sql": endless}), &env)
            .await
            .unwrap();
        assert_eq!(result["truncated"], true);
    }

    #[tokio::test]
    async fn regression_a_planted_symlink_aimed_the_sql_tools_at_a_file_outside() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let victim = outside.path().join("victim.db");
        seed_database(&victim, "CREATE TABLE t (id INTEGER, body TEXT);")
            .await
            .unwrap();
        let env = seeded(dir.path()).await;
        let db = dir.path().join("t.db");
        std::fs::remove_file(&db).unwrap();
        std::os::unix::fs::symlink(&victim, &db).unwrap();
        let insert = json!({"sql": "INSERT INTO t VALUES (1, 'planted')"});
        let err = SqlExecuteTool.call(&insert, &env).await.unwrap_err();
        assert!(err.0.contains("cannot open the database"), "{err}");
        let read = json!({"sql": "SELECT * FROM t"});
        assert!(SqlQueryTool.call(&read, &env).await.is_err());
        // A symlinked directory on the way is refused too.
        std::fs::remove_file(&db).unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("data")).unwrap();
        let via_dir = ToolEnv {
            database: Some(dir.path().join("data/victim.db")),
            ..env.clone()
        };
        let err = SqlExecuteTool.call(&insert, &via_dir).await.unwrap_err();
        assert!(err.0.contains("symbolic link"), "{err}");
        let rows: i64 = Connection::open(&victim)
            .unwrap()
            .query_row("SELECT COUNT(*) FROM t", [], |r| r.get(0))
            .unwrap();
        assert_eq!(rows, 0, "the outside database was written");
        // Seeding does not create a file where a dangling link points.
        let target = outside.path().join("planted");
        std::os::unix::fs::symlink(&target, dir.path().join("new.db")).unwrap();
        assert!(
            seed_database(&dir.path().join("new.db"), "CREATE TABLE x (a)")
                .await
                .is_err()
        );
        assert!(!target.exists());
    }

    #[tokio::test]
    async fn a_seed_error_does_not_quote_the_seed() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("s.db");
        let err = seed_database(&db, "-----BEGIN OPENSSH PRIVATE KEY-----\nCANARY\n")
            .await
            .unwrap_err();
        assert!(
            !err.0.contains("CANARY") && !err.0.contains("BEGIN"),
            "{err}"
        );
        assert!(err.0.contains("seed SQL fails"), "{err}");
        assert!(!db.exists());
    }
}
