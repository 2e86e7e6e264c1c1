//! The bash parser: one tree-sitter parser per thread, reused for every parse.
//!
//! Text reaches tree-sitter through a custom decoder that turns every non-ASCII character into
//! the same Latin-1 letter (`à`), keeping its byte length. Bash itself treats non-ASCII
//! characters as ordinary word characters (it splits words on ASCII blanks only), so this is
//! also the faithful reading; and tree-sitter-bash 0.25's scanner passes the lookahead
//! character to C `isdigit`, which reads out of bounds for code points above 255 (`{` followed
//! by such a character crashed the process).

use std::cell::RefCell;

use tree_sitter::{Decode, Parser, Tree};

thread_local! {
    static PARSER: RefCell<Option<Parser>> = RefCell::new(new_parser());
}

fn new_parser() -> Option<Parser> {
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_bash::LANGUAGE.into())
        .ok()?;
    Some(parser)
}

/// UTF-8 with every non-ASCII character read as `à` (U+00E0).
struct AsciiWords;

impl Decode for AsciiWords {
    fn decode(bytes: &[u8]) -> (i32, u32) {
        let Some(&first) = bytes.first() else {
            return (-1, 0);
        };
        if first.is_ascii() {
            return (i32::from(first), 1);
        }
        let len = match first {
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF7 => 4,
            _ => 1,
        };
        (0xE0, len.min(bytes.len()) as u32)
    }
}

fn run(parser: &mut Parser, text: &str) -> Option<Tree> {
    let bytes = text.as_bytes();
    let mut read = |offset: usize, _| bytes.get(offset..).unwrap_or_default();
    parser.parse_custom_encoding::<AsciiWords, _, _>(&mut read, None, None)
}

/// Parses `text` as bash. `None` only if the grammar could not be loaded or the parser gave
/// up; callers treat that like a parse error. Node boundaries always fall on `char`
/// boundaries of `text`.
pub(crate) fn parse(text: &str) -> Option<Tree> {
    PARSER.with(|cell| {
        // A parse never re-enters itself, but stay correct if it ever did: use a fresh parser.
        match cell.try_borrow_mut() {
            Ok(mut slot) => run(slot.as_mut()?, text),
            Err(_) => run(&mut new_parser()?, text),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regression_brace_before_a_wide_character_does_not_crash_the_scanner() {
        for text in ["{\u{1F600}", "echo {\u{4e00}..", "{é", "a {\u{10FFFF}"] {
            let tree = parse(text).unwrap();
            assert_eq!(tree.root_node().end_byte(), text.len());
        }
    }

    #[test]
    fn non_ascii_characters_are_word_characters() {
        let text = "echo \u{a0}x\u{3000}y";
        let tree = parse(text).unwrap();
        let command = tree.root_node().named_child(0).unwrap();
        assert_eq!(
            command.named_child_count(),
            2,
            "{}",
            tree.root_node().to_sexp()
        );
    }
}
