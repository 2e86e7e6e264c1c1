//! `osascript -e` scripts that only show a notification or make a sound: the most common
//! desktop-notification hook (`osascript -e 'display notification "Done" with title
//! "Claude"'`). Such a script is data, not code to hide: it is read completely here, and
//! anything else (`do shell script`, handlers, variables, `&`, `tell`, other languages with
//! `-l`, a script file, text only known at run time such as payload text spliced in by
//! `xargs -I{}`) stays `inline-code`.
//!
//! The statements read are `display notification "…"` with optional `with title "…"`,
//! `subtitle "…"` and `sound name "…"` clauses, `say "…"` and `beep [N]`. Strings hold no
//! `"` or `\` (no escapes, so a string cannot end early) and no control characters.

use crate::word::Word;

/// Whether `words` (`osascript` first) run only notification statements given with `-e`.
pub(super) fn only_notifies(words: &[Word<'_>]) -> bool {
    let mut scripts = 0;
    let mut args = words.iter().skip(1);
    while let Some(option) = args.next() {
        if option.lit() != Some("-e") {
            return false;
        }
        let Some(script) = args.next().filter(|w| !w.unknown && !w.any) else {
            return false;
        };
        let Some(text) = script.lit() else {
            return false;
        };
        if !text.lines().all(|line| statement(&tokens(line))) {
            return false;
        }
        scripts += 1;
    }
    scripts > 0
}

#[derive(Debug, PartialEq)]
enum Token<'s> {
    Word(&'s str),
    Text,
    Number,
    /// Anything else: an operator, a parenthesis, a string with quotes or escapes in it.
    Other,
}

fn tokens(line: &str) -> Vec<Token<'_>> {
    let mut out = Vec::new();
    let mut rest = line.trim();
    while let Some(c) = rest.chars().next() {
        let len = if c == '"' {
            let Some(end) = rest[1..].find('"') else {
                out.push(Token::Other);
                break;
            };
            let body = &rest[1..=end];
            let clean = !body.contains('\\') && !body.chars().any(char::is_control);
            out.push(if clean { Token::Text } else { Token::Other });
            end + 2
        } else if c.is_ascii_alphabetic() {
            let end = rest
                .find(|c: char| !c.is_ascii_alphabetic())
                .unwrap_or(rest.len());
            out.push(Token::Word(&rest[..end]));
            end
        } else if c.is_ascii_digit() {
            let end = rest
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(rest.len());
            out.push(Token::Number);
            end
        } else if c == ' ' || c == '\t' {
            1
        } else {
            out.push(Token::Other);
            c.len_utf8()
        };
        rest = &rest[len..];
    }
    out
}

/// One statement: a notification, `say`, `beep` (or an empty line).
fn statement(t: &[Token<'_>]) -> bool {
    use Token::{Number, Text, Word};
    match t {
        [] | [Word("beep")] | [Word("beep"), Number] | [Word("say"), Text] => true,
        [Word("display"), Word("notification"), Text, clauses @ ..] => notification(clauses),
        _ => false,
    }
}

/// The optional clauses of `display notification`.
fn notification(mut t: &[Token<'_>]) -> bool {
    use Token::{Text, Word};
    while !t.is_empty() {
        t = match t {
            [Word("with"), Word("title"), Text, rest @ ..]
            | [Word("subtitle"), Text, rest @ ..]
            | [Word("sound"), Word("name"), Text, rest @ ..] => rest,
            _ => return false,
        };
    }
    true
}

#[cfg(test)]
mod tests {
    use super::{statement, tokens};

    #[test]
    fn notifications_sounds_and_speech_are_statements_read_whole() {
        for line in [
            r#"display notification "Claude Code needs your attention" with title "Claude Code""#,
            r#"display notification "Done" with title "Build" subtitle "ok" sound name "Glass""#,
            r#"say "Task complete""#,
            "beep",
            "beep 2",
        ] {
            assert!(statement(&tokens(line)), "{line}");
        }
    }

    #[test]
    fn anything_that_can_run_code_is_not() {
        for line in [
            r#"do shell script "rm -rf ~""#,
            r#"display notification (do shell script "id")"#,
            r#"display notification "a" & (do shell script "id")"#,
            r#"display notification "a\" & (do shell script \"id\") & \"" with title "x""#,
            r#"display notification "a" with title "b" & x"#,
            r#"tell application "Terminal" to do script "id""#,
            r#"display notification x"#,
            r#"say "unterminated"#,
            r#"run script "beep""#,
        ] {
            assert!(!statement(&tokens(line)), "{line}");
        }
    }
}
