//! A fail-closed keyword scan of SQL text: which statements would write?
//!
//! This is not a parser. It splits the text into statements on every `;` outside string
//! literals, quoted identifiers and comments, finds each statement's leading keyword (after
//! `(`, `WITH … AS (…)` common table expressions and `EXPLAIN` options) and checks it against an
//! allow-list of read statements. Everything it cannot place is a write, and text it cannot read
//! (an unterminated literal or comment, a malformed `WITH`) is [`Verdict::Unreadable`].
//!
//! Dialects disagree about backslashes in literals (MySQL escapes, standard SQL does not), about
//! `#` (a MySQL comment, a PostgreSQL operator), nested block comments (PostgreSQL) and `/*! … */`
//! (executed by MySQL). Text can hide a statement under one reading and show it under the other,
//! so the text is scanned under both readings and the stricter verdict wins.
//!
//! Known gaps (a keyword scan cannot see them): functions with side effects called from a
//! `SELECT` (`SELECT nextval('s')`, `SELECT pg_terminate_backend(1)`), and procedures reached
//! through views or triggers.

/// What the scan found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Only read statements (or none at all).
    Read,
    /// A statement that writes (or that is not known to be a read), by its keyword.
    Write(String),
    /// The text could not be read; why.
    Unreadable(&'static str),
}

/// Classifies `sql` under both dialect readings; the stricter verdict wins. A text both
/// readings call a read is still a write when a write keyword stands anywhere in it as a word
/// (comments and literals included): dialects disagree on what a comment or a literal is in
/// more ways than two readings can model (`--x` in MySQL, `E'\''` strings, `[bracket]`
/// identifiers, `BEGIN … END` blocks), and a read-only guard prefers a false deny to a write.
pub(crate) fn classify(sql: &str) -> Verdict {
    let standard = classify_with(sql, Dialect::Standard);
    if standard != Verdict::Read {
        return standard;
    }
    let mysql = classify_with(sql, Dialect::MySql);
    if mysql != Verdict::Read {
        return mysql;
    }
    raw_write(sql).map_or(Verdict::Read, |keyword| Verdict::Write(keyword.to_owned()))
}

/// Write keywords that deny wherever they stand as a word, unless called like a function
/// (`replace(…)`).
const RAW_WRITES: &[&str] = &[
    "INSERT", "UPDATE", "DELETE", "MERGE", "UPSERT", "REPLACE", "CREATE", "ALTER", "DROP",
    "TRUNCATE", "GRANT", "REVOKE",
];

fn raw_write(sql: &str) -> Option<&'static str> {
    let mut rest = sql;
    while let Some(start) = rest.find(|c: char| c.is_ascii_alphabetic()) {
        let after = &rest[start..];
        let end = after
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(after.len());
        let (word, tail) = after.split_at(end);
        let preceded_by_word = rest[..start]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_');
        let called = tail.trim_start().starts_with('(');
        if !preceded_by_word
            && !called
            && let Some(keyword) = RAW_WRITES.iter().find(|k| k.eq_ignore_ascii_case(word))
        {
            return Some(keyword);
        }
        rest = tail;
    }
    None
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dialect {
    /// `''` escapes, no backslash escapes, nested `/* */`, `#` is an operator.
    Standard,
    /// Backslash escapes, `#` comments, flat `/* */`, `/*! … */` is code.
    MySql,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    /// A bare word, upper-cased.
    Word(String),
    /// A quoted identifier or a literal (contents dropped).
    Quoted,
    /// Any other character.
    Punct(char),
}

fn classify_with(sql: &str, dialect: Dialect) -> Verdict {
    let tokens = match tokenize(sql, dialect) {
        Ok(tokens) => tokens,
        Err(why) => return Verdict::Unreadable(why),
    };
    tokens
        .split(|t| *t == Token::Punct(';'))
        .filter(|statement| !statement.is_empty())
        .map(statement_verdict)
        .find(|verdict| *verdict != Verdict::Read)
        .unwrap_or(Verdict::Read)
}

const READS: &[&str] = &[
    "SELECT", "VALUES", "TABLE", "SHOW", "DESCRIBE", "DESC", "BEGIN", "COMMIT", "ROLLBACK", "END",
];

/// Statement keywords that write even when they open a parenthesis (`WITH d AS (DELETE …)`).
const NESTED_WRITES: &[&str] = &["INSERT", "UPDATE", "DELETE", "MERGE", "UPSERT"];

/// PRAGMAs that change something even without `=`.
const PRAGMA_WRITES: &[&str] = &[
    "OPTIMIZE",
    "WAL_CHECKPOINT",
    "INCREMENTAL_VACUUM",
    "SHRINK_MEMORY",
];

fn statement_verdict(tokens: &[Token]) -> Verdict {
    if let Some(keyword) = nested_write(tokens) {
        return Verdict::Write(keyword);
    }
    match leading_keyword(tokens) {
        Ok(Some((keyword, rest))) => keyword_verdict(&keyword, rest),
        Ok(None) => Verdict::Read,
        Err(why) => Verdict::Unreadable(why),
    }
}

/// A data-modifying statement right after a `(` (not a function call such as `replace(…)`).
fn nested_write(tokens: &[Token]) -> Option<String> {
    tokens.windows(3).find_map(|w| match w {
        [Token::Punct('('), Token::Word(word), next]
            if NESTED_WRITES.contains(&word.as_str()) && *next != Token::Punct('(') =>
        {
            Some(word.clone())
        }
        _ => None,
    })
}

fn keyword_verdict(keyword: &str, rest: &[Token]) -> Verdict {
    match keyword {
        "EXPLAIN" => explained(rest),
        "PRAGMA" => pragma(rest),
        "START" if rest.first() == Some(&Token::Word("TRANSACTION".into())) => Verdict::Read,
        "SELECT" if rest.contains(&Token::Word("INTO".into())) => {
            Verdict::Write("SELECT … INTO".into())
        }
        read if READS.contains(&read) => Verdict::Read,
        write => Verdict::Write(write.to_owned()),
    }
}

/// `EXPLAIN [options] <statement>`: the verdict of the statement (`EXPLAIN ANALYZE` runs it).
fn explained(rest: &[Token]) -> Verdict {
    let start = rest.iter().position(|t| match t {
        Token::Word(w) => READS.contains(&w.as_str()) || is_statement_keyword(w),
        _ => false,
    });
    match start {
        Some(start) => statement_verdict(&rest[start..]),
        None => Verdict::Unreadable("EXPLAIN without a statement"),
    }
}

fn is_statement_keyword(word: &str) -> bool {
    const OTHERS: &[&str] = &[
        "WITH", "REPLACE", "CREATE", "ALTER", "DROP", "TRUNCATE", "CALL",
    ];
    NESTED_WRITES.contains(&word) || OTHERS.contains(&word)
}

/// `PRAGMA name = value` and a few side-effecting names write; other PRAGMAs read.
fn pragma(rest: &[Token]) -> Verdict {
    let assigns = rest.contains(&Token::Punct('='));
    let name = rest.iter().find_map(|t| match t {
        Token::Word(w) => Some(w.as_str()),
        _ => None,
    });
    if assigns || name.is_none_or(|name| PRAGMA_WRITES.contains(&name)) {
        Verdict::Write("PRAGMA".into())
    } else {
        Verdict::Read
    }
}

/// The statement's keyword and the tokens after it, skipping `(` and a `WITH` clause;
/// `None` for a statement with no keyword at all.
fn leading_keyword(tokens: &[Token]) -> Result<Option<(String, &[Token])>, &'static str> {
    let mut rest = tokens;
    while let [Token::Punct('('), tail @ ..] = rest {
        rest = tail;
    }
    match rest {
        [] => Ok(None),
        [Token::Word(w), tail @ ..] if w == "WITH" => after_ctes(tail).and_then(leading_keyword),
        [Token::Word(w), tail @ ..] => Ok(Some((w.clone(), tail))),
        _ => Err("a statement that does not start with a keyword"),
    }
}

/// Skips `[RECURSIVE] name [(cols)] AS [[NOT] MATERIALIZED] (body) [, …]`.
fn after_ctes(tokens: &[Token]) -> Result<&[Token], &'static str> {
    const MALFORMED: &str = "a WITH clause that could not be read";
    let mut rest = skip_word(tokens, "RECURSIVE");
    loop {
        rest = match rest {
            [Token::Word(_) | Token::Quoted, tail @ ..] => tail,
            _ => return Err(MALFORMED),
        };
        if let [Token::Punct('('), ..] = rest {
            rest = skip_parens(rest).ok_or(MALFORMED)?;
        }
        rest = match rest {
            [Token::Word(w), tail @ ..] if w == "AS" => tail,
            _ => return Err(MALFORMED),
        };
        rest = skip_word(skip_word(rest, "NOT"), "MATERIALIZED");
        rest = skip_parens(rest).ok_or(MALFORMED)?;
        match rest {
            [Token::Punct(','), tail @ ..] => rest = tail,
            _ => return Ok(rest),
        }
    }
}

fn skip_word<'t>(tokens: &'t [Token], word: &str) -> &'t [Token] {
    match tokens {
        [Token::Word(w), tail @ ..] if w == word => tail,
        _ => tokens,
    }
}

/// Skips one balanced `( … )` group at the start of `tokens`.
fn skip_parens(tokens: &[Token]) -> Option<&[Token]> {
    if tokens.first() != Some(&Token::Punct('(')) {
        return None;
    }
    let mut depth = 0usize;
    for (i, token) in tokens.iter().enumerate() {
        match token {
            Token::Punct('(') => depth += 1,
            Token::Punct(')') => depth -= 1,
            _ => continue,
        }
        if depth == 0 {
            return Some(&tokens[i + 1..]);
        }
    }
    None
}

mod lex;

use lex::tokenize;

#[cfg(test)]
mod tests;
