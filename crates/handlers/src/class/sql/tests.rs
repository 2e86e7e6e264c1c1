use super::{Verdict, classify};

fn write(keyword: &str) -> Verdict {
    Verdict::Write(keyword.into())
}

#[test]
fn reads_pass() {
    for sql in [
        "SELECT * FROM t",
        "  select 1",
        "(SELECT 1) UNION (SELECT 2)",
        "SELECT replace(name, 'a', 'b') FROM t",
        "WITH a AS (SELECT 1), b(x) AS (SELECT 2) SELECT * FROM a, b",
        "WITH RECURSIVE r AS NOT MATERIALIZED (SELECT 1 UNION SELECT 2) SELECT * FROM r",
        "EXPLAIN QUERY PLAN SELECT 1",
        "SHOW TABLES; DESCRIBE t;",
        "PRAGMA table_info(t)",
        "",
        ";;",
        "BEGIN; SELECT 1; COMMIT",
    ] {
        assert_eq!(classify(sql), Verdict::Read, "{sql}");
    }
}

#[test]
fn writes_are_found() {
    for (sql, keyword) in [
        ("DELETE FROM t", "DELETE"),
        ("  insert into t values (1)", "INSERT"),
        ("/* hi */ -- x\n UPDATE t SET a = 1", "UPDATE"),
        ("SELECT 1; DROP TABLE t", "DROP"),
        ("WITH a AS (SELECT 1) DELETE FROM t", "DELETE"),
        (
            "WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d",
            "DELETE",
        ),
        ("EXPLAIN ANALYZE DELETE FROM t", "DELETE"),
        ("MERGE INTO t USING s ON true", "MERGE"),
        ("REPLACE INTO t VALUES (1)", "REPLACE"),
        ("TRUNCATE t", "TRUNCATE"),
        ("GRANT ALL ON t TO u", "GRANT"),
        ("ATTACH DATABASE 'x' AS y", "ATTACH"),
        ("VACUUM", "VACUUM"),
        ("PRAGMA journal_mode = WAL", "PRAGMA"),
        ("PRAGMA optimize", "PRAGMA"),
        ("COPY t FROM '/etc/passwd'", "COPY"),
        ("SELECT * INTO new_t FROM t", "SELECT … INTO"),
        ("CALL do_things()", "CALL"),
        ("SET ROLE admin", "SET"),
    ] {
        assert_eq!(classify(sql), write(keyword), "{sql}");
    }
}

#[test]
fn a_statement_hidden_under_one_dialect_reading_is_found() {
    // MySQL ends the literal at `\'` + `'`; standard SQL at the second quote.
    assert_eq!(
        classify(r"SELECT 'a\''; DELETE FROM t; -- '"),
        write("DELETE")
    );
    assert_eq!(
        classify(r"SELECT 'a\'; DELETE FROM t; --'"),
        write("DELETE")
    );
    // `#` is a PostgreSQL operator, a MySQL comment.
    assert_eq!(classify("SELECT 1 # 2; DELETE FROM t"), write("DELETE"));
    // MySQL runs the body of `/*! … */`.
    assert_eq!(
        classify("SELECT 1 /*!50000 ; DROP TABLE t */"),
        write("DROP")
    );
    // PostgreSQL nests block comments; MySQL ends at the first `*/`.
    assert_eq!(
        classify("/* /* */ DROP TABLE t; */ SELECT 1"),
        write("DROP")
    );
}

#[test]
fn unreadable_text_fails_closed() {
    for sql in [
        "SELECT 'unterminated",
        "SELECT 1 /* no end",
        "WITH a SELECT 1",
        "WITH a AS (SELECT 1",
        ") SELECT 1",
        "EXPLAIN",
    ] {
        assert!(
            matches!(classify(sql), Verdict::Unreadable(_)),
            "{sql}: {:?}",
            classify(sql)
        );
    }
}

#[test]
fn regression_writes_hidden_by_dialect_differences_are_found() {
    for sql in [
        "select 1 --1; DELETE FROM t",
        "SELECT E'\\'', 1 # 2 ; DELETE FROM t; --'",
        "SELECT [a'b] FROM t; DELETE FROM t; --']",
        "BEGIN DELETE FROM t END",
        "BEGIN NOT ATOMIC DELETE FROM t; END",
        "DESC ANALYZE DELETE FROM t",
        "DESCRIBE DELETE FROM t",
        "select 1 /* drop */",
    ] {
        assert!(matches!(classify(sql), Verdict::Write(_)), "{sql}");
    }
}

#[test]
fn function_calls_and_longer_words_are_not_write_keywords() {
    for sql in [
        "SELECT replace(name, 'a', 'b') FROM t",
        "SELECT updated_at, created_by FROM t",
        "SELECT dropout_rate FROM t",
    ] {
        assert_eq!(classify(sql), Verdict::Read, "{sql}");
    }
}

#[test]
fn write_keywords_in_comments_literals_and_quoted_names_deny_by_design() {
    // Fail closed: the raw word scan does not trust any dialect's idea of a comment or literal.
    for sql in [
        "-- DELETE FROM t\nSELECT 1",
        "/* DROP TABLE t; */ SELECT 1",
        "SELECT 'DELETE FROM t; DROP TABLE x'",
        "SELECT \"update\" FROM t",
        "SELECT $$DELETE$$",
        "SELECT 1 FOR UPDATE",
    ] {
        assert!(matches!(classify(sql), Verdict::Write(_)), "{sql}");
    }
}
