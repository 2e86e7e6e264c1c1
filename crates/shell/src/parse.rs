//! The bash parser: one tree-sitter parser per thread, reused for every parse, held to the
//! analysis budgets.
//!
//! Non-ASCII text reaches tree-sitter through a custom decoder that turns every non-ASCII
//! character into the same Latin-1 letter (`à`), keeping its byte length. Bash itself treats
//! non-ASCII characters as ordinary word characters (it splits words on ASCII blanks only), so
//! this is also the faithful reading; and tree-sitter-bash 0.25's scanner passes the lookahead
//! character to C `isdigit`, which reads out of bounds for code points above 255 (`{` followed
//! by such a character crashed the process).
//!
//! tree-sitter's own cost is not linear in every input: its scanner re-reads the rest of the
//! text for every token of some malformed inputs (`)))…`), and a long pipeline that holds a
//! syntax error costs time quadratic in its length, in one step that cannot be interrupted.
//! Hence the text is handed over in chunks whose bytes are counted ([`MAX_LEXED_BYTES`]),
//! parser operations are counted through the progress callback ([`MAX_PARSE_STEPS`]), and a
//! text with more than [`MAX_PIPES`] pipe characters is not parsed at all (a valid pipeline of
//! thousands of stages also costs tree-sitter far more than its length).
//!
//! [`MAX_LEXED_BYTES`]: crate::limits::MAX_LEXED_BYTES
//! [`MAX_PARSE_STEPS`]: crate::limits::MAX_PARSE_STEPS

use std::cell::{Cell, RefCell};
use std::ops::ControlFlow;

use tree_sitter::{Decode, ParseOptions, ParseState, Parser, Tree};

use crate::limits::{Budget, Limit, MAX_PIPES};

/// Bytes handed to tree-sitter per read (ends moved forward to a `char` boundary).
const CHUNK: usize = 256;

thread_local! {
    static PARSER: RefCell<Option<Parser>> = RefCell::new(new_parser());
}

/// Why a text has no syntax tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unparsed {
    /// The grammar could not be loaded or the parser gave up: treated as a parse error.
    Failed,
    /// A parse budget of the analysis ran out.
    Budget(Limit),
    /// More than [`MAX_PIPES`] pipe characters.
    Pipes,
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

/// One parse of `text` within `budget`.
fn run(parser: &mut Parser, text: &str, budget: &Budget) -> Result<Tree, Unparsed> {
    let stopped: Cell<Option<Limit>> = Cell::new(None);
    let mut read = |offset: usize, _| {
        let chunk = chunk(text, offset);
        if stopped.get().is_none() && !budget.lex(chunk.len()) {
            stopped.set(Some(Limit::Lexed));
        }
        // Past the budget the text ends here; the progress callback then stops the parse.
        if stopped.get().is_some() { "" } else { chunk }
    };
    let mut progress = |_: &ParseState| {
        if stopped.get().is_none() && !budget.parse_step() {
            stopped.set(Some(Limit::ParseSteps));
        }
        match stopped.get() {
            Some(_) => ControlFlow::Break(()),
            None => ControlFlow::Continue(()),
        }
    };
    let options = ParseOptions::new().progress_callback(&mut progress);
    let tree = if text.is_ascii() {
        parser.parse_with_options(&mut read, None, Some(options))
    } else {
        parser.parse_custom_encoding::<AsciiWords, _, _>(&mut read, None, Some(options))
    };
    match (stopped.get(), tree) {
        (None, Some(tree)) => Ok(tree),
        (stopped, _) => {
            // A cancelled parse would otherwise be resumed by the next call.
            parser.reset();
            Err(stopped.map_or(Unparsed::Failed, Unparsed::Budget))
        }
    }
}

/// The bytes of `text` from `offset`: at most about [`CHUNK`], ending on a `char` boundary.
fn chunk(text: &str, offset: usize) -> &str {
    let Some(rest) = text.get(offset..) else {
        return "";
    };
    let mut end = CHUNK.min(rest.len());
    while !rest.is_char_boundary(end) {
        end += 1;
    }
    &rest[..end]
}

/// Parses `text` as bash within `budget` (shared by every parse of one analysis). Node
/// boundaries always fall on `char` boundaries of `text`.
///
/// # Errors
///
/// [`Unparsed`]: the grammar could not be loaded, a parse budget ran out, or the text has
/// more than [`MAX_PIPES`] pipe characters.
pub(crate) fn parse(text: &str, budget: &Budget) -> Result<Tree, Unparsed> {
    PARSER.with(|cell| {
        // A parse never re-enters itself, but stay correct if it ever did: use a fresh parser.
        match cell.try_borrow_mut() {
            Ok(mut slot) => parse_with(slot.as_mut().ok_or(Unparsed::Failed)?, text, budget),
            Err(_) => parse_with(&mut new_parser().ok_or(Unparsed::Failed)?, text, budget),
        }
    })
}

fn parse_with(parser: &mut Parser, text: &str, budget: &Budget) -> Result<Tree, Unparsed> {
    if text.bytes().filter(|b| *b == b'|').count() > MAX_PIPES {
        return Err(Unparsed::Pipes);
    }
    run(parser, text, budget)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_free(text: &str) -> Tree {
        parse(text, &Budget::default()).unwrap()
    }

    #[test]
    fn regression_brace_before_a_wide_character_does_not_crash_the_scanner() {
        for text in ["{\u{1F600}", "echo {\u{4e00}..", "{é", "a {\u{10FFFF}"] {
            let tree = parse_free(text);
            assert_eq!(tree.root_node().end_byte(), text.len());
        }
    }

    #[test]
    fn non_ascii_characters_are_word_characters() {
        let text = "echo \u{a0}x\u{3000}y";
        let tree = parse_free(text);
        let command = tree.root_node().named_child(0).unwrap();
        assert_eq!(
            command.named_child_count(),
            2,
            "{}",
            tree.root_node().to_sexp()
        );
    }

    #[test]
    fn wide_characters_across_chunk_boundaries_stay_whole() {
        let text = format!("echo {}", "é".repeat(CHUNK * 3));
        let tree = parse_free(&text);
        let word = tree
            .root_node()
            .named_child(0)
            .unwrap()
            .named_child(1)
            .unwrap();
        assert_eq!(&text[word.byte_range()], "é".repeat(CHUNK * 3));
    }

    #[test]
    fn regression_a_long_pipeline_is_not_parsed() {
        // Parsing these took seconds (quadratic in the stages) before the pipe check.
        for text in [
            "a|".repeat(MAX_PIPES + 1),
            format!("{}a", "a|".repeat(MAX_PIPES + 1)),
        ] {
            assert_eq!(
                parse(&text, &Budget::default()).err(),
                Some(Unparsed::Pipes)
            );
        }
        let at_the_limit = format!("{}a", "a|".repeat(MAX_PIPES));
        assert!(parse(&at_the_limit, &Budget::default()).is_ok());
    }

    #[test]
    fn a_spent_budget_stops_the_parse_and_the_next_parse_starts_afresh() {
        let budget = Budget::default();
        let text = "ls; ".repeat(crate::MAX_COMMAND_BYTES / 4);
        let mut stopped = None;
        for _ in 0..100 {
            if let Err(e) = parse(&text, &budget) {
                stopped = Some(e);
                break;
            }
        }
        assert!(matches!(stopped, Some(Unparsed::Budget(_))), "{stopped:?}");
        let tree = parse_free("echo ok");
        assert_eq!(
            tree.root_node().to_sexp(),
            parse_free("echo ok").root_node().to_sexp()
        );
        assert!(!tree.root_node().has_error());
    }
}
