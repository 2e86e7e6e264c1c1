//! The tokenizer behind [`super::classify`]: words, opaque literals and punctuation, with
//! comments dropped, under one [`Dialect`] reading.

use super::{Dialect, Token};

const UNTERMINATED_LITERAL: &str = "an unterminated string literal or quoted identifier";
const UNTERMINATED_COMMENT: &str = "an unterminated block comment";

/// Splits `sql` into tokens.
///
/// # Errors
///
/// Why the text cannot be read: an unterminated literal, quoted identifier or block comment.
pub(super) fn tokenize(sql: &str, dialect: Dialect) -> Result<Vec<Token>, &'static str> {
    let chars: Vec<char> = sql.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        i = step(&chars, i, dialect, &mut tokens)?;
    }
    Ok(tokens)
}

/// Reads one token (or skips one comment or whitespace character) at `i`; returns the next
/// index.
fn step(
    chars: &[char],
    i: usize,
    dialect: Dialect,
    tokens: &mut Vec<Token>,
) -> Result<usize, &'static str> {
    let c = chars[i];
    let next = chars.get(i + 1).copied();
    match (c, next) {
        (c, _) if c.is_whitespace() => Ok(i + 1),
        ('-', Some('-')) => Ok(line_end(chars, i)),
        ('#', _) if dialect == Dialect::MySql => Ok(line_end(chars, i)),
        ('/', Some('*')) => block_comment(chars, i, dialect),
        ('\'' | '"' | '`', _) => {
            tokens.push(Token::Quoted);
            quoted(chars, i, dialect)
        }
        ('$', _) if dialect == Dialect::Standard && dollar_tag(chars, i).is_some() => {
            tokens.push(Token::Quoted);
            dollar_quoted(chars, i)
        }
        (c, _) if is_word_char(c) => Ok(word(chars, i, tokens)),
        (c, _) => {
            tokens.push(Token::Punct(c));
            Ok(i + 1)
        }
    }
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

fn word(chars: &[char], i: usize, tokens: &mut Vec<Token>) -> usize {
    let end = (i..chars.len())
        .find(|&j| !is_word_char(chars[j]))
        .unwrap_or(chars.len());
    let word: String = chars[i..end].iter().collect();
    tokens.push(Token::Word(word.to_uppercase()));
    end
}

fn line_end(chars: &[char], i: usize) -> usize {
    (i..chars.len())
        .find(|&j| chars[j] == '\n')
        .unwrap_or(chars.len())
}

/// Skips a `/* … */` comment (nested under the standard reading). Under the MySQL reading
/// `/*! … */` is code: only its opening marker is skipped.
fn block_comment(chars: &[char], i: usize, dialect: Dialect) -> Result<usize, &'static str> {
    if dialect == Dialect::MySql && chars.get(i + 2) == Some(&'!') {
        let digits = chars[i + 3..].iter().take_while(|c| c.is_ascii_digit());
        return Ok(i + 3 + digits.count());
    }
    let mut depth = 0usize;
    let mut j = i;
    while j + 1 < chars.len() {
        match (chars[j], chars[j + 1]) {
            ('/', '*') if depth == 0 || dialect == Dialect::Standard => depth += 1,
            ('*', '/') => depth -= 1,
            _ => {
                j += 1;
                continue;
            }
        }
        j += 2;
        if depth == 0 {
            return Ok(j);
        }
    }
    Err(UNTERMINATED_COMMENT)
}

/// Skips a literal or quoted identifier opened by `chars[i]`; a doubled quote is an escaped
/// quote, and under the MySQL reading so is a backslash followed by anything.
fn quoted(chars: &[char], i: usize, dialect: Dialect) -> Result<usize, &'static str> {
    let quote = chars[i];
    let mut j = i + 1;
    while j < chars.len() {
        match chars[j] {
            '\\' if dialect == Dialect::MySql && quote != '`' => j += 2,
            c if c == quote && chars.get(j + 1) == Some(&quote) => j += 2,
            c if c == quote => return Ok(j + 1),
            _ => j += 1,
        }
    }
    Err(UNTERMINATED_LITERAL)
}

/// The length of a PostgreSQL dollar-quote tag (`$$` or `$tag$`) starting at `i`, if one
/// starts there.
fn dollar_tag(chars: &[char], i: usize) -> Option<usize> {
    // `$1` is a parameter, and `a$b$` is one word.
    if i > 0 && is_word_char(chars[i - 1]) {
        return None;
    }
    let len = chars[i + 1..]
        .iter()
        .take_while(|c| c.is_alphanumeric() || **c == '_')
        .count();
    let tag_ok = chars.get(i + 1).is_none_or(|c| !c.is_ascii_digit());
    (tag_ok && chars.get(i + 1 + len) == Some(&'$')).then_some(len + 2)
}

fn dollar_quoted(chars: &[char], i: usize) -> Result<usize, &'static str> {
    let tag_len = dollar_tag(chars, i).ok_or(UNTERMINATED_LITERAL)?;
    let tag = &chars[i..i + tag_len];
    (i + tag_len..chars.len())
        .find(|&j| chars[j..].starts_with(tag))
        .map(|j| j + tag_len)
        .ok_or(UNTERMINATED_LITERAL)
}
