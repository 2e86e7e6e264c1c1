//! Text being analysed, with the map from its bytes back to the original command string.
//!
//! The top-level command maps onto itself. A shell string found inside it (`sh -c '…'`, a
//! heredoc fed to a shell, literal `eval` arguments) is decoded into a new [`Source`] whose
//! every byte remembers the byte range of the original command it came from, so findings deep
//! inside nested strings still point at the original text.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::HashMap;
use std::ops::Range;
use std::rc::Rc;

use crate::limits::Budget;

/// One text to parse, and where its bytes came from.
pub(crate) struct Source<'a> {
    /// The text.
    pub text: Cow<'a, str>,
    /// Per byte of `text`: the original byte range it was decoded from; `None` for identity.
    map: Option<Vec<(usize, usize)>>,
    /// `$0`, `$1`, … when the text is the code of `sh -c CODE NAME ARG…` (`$0` is `NAME`).
    /// Shared: texts found inside this one see the same parameters.
    pub args: Rc<[Positional]>,
    /// Variables assigned earlier in this text (`X=/; rm -rf "$X"`): name and value (as in
    /// [`Word::text`](crate::word::Word::text)), `None` when the value is not static.
    pub vars: RefCell<HashMap<String, Option<String>>>,
    /// The budgets of the analysis, shared by every text in it.
    pub budget: Rc<Budget>,
    /// Files a download earlier in this text wrote (`curl -o F`, `wget URL`), normalised:
    /// running one of them runs downloaded code.
    pub downloads: RefCell<Vec<String>>,
    /// The text is the command's own (the original, or it with line continuations joined),
    /// not code decoded from a word of it: its words can be replaced in the original.
    pub own_text: bool,
}

/// The value of a positional parameter (`$1`…) of a shell string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Positional {
    /// The value, as in [`Word::text`](crate::word::Word::text).
    pub text: String,
    /// Run-time input that may be anything.
    pub any: bool,
    /// The value is not statically known.
    pub unknown: bool,
}

impl<'a> Source<'a> {
    /// The original command: every byte maps to itself. It starts the budgets of an analysis.
    pub fn top(text: &'a str) -> Self {
        Source {
            text: Cow::Borrowed(text),
            map: None,
            args: Rc::from([]),
            vars: RefCell::default(),
            budget: Rc::default(),
            downloads: RefCell::default(),
            own_text: true,
        }
    }

    /// A shell string decoded from this text, whose positional parameters are `args`; it
    /// shares this text's budgets.
    pub fn nested(&self, mapped: Mapped, args: Rc<[Positional]>) -> Source<'static> {
        Source {
            text: Cow::Owned(mapped.text),
            map: Some(mapped.map),
            args,
            vars: RefCell::default(),
            budget: Rc::clone(&self.budget),
            downloads: RefCell::default(),
            own_text: false,
        }
    }

    /// Whether this is the original command, not a shell string decoded from it.
    pub fn is_top(&self) -> bool {
        self.map.is_none()
    }

    /// Records `name=value` (`None`: not static) for later words of this text.
    pub fn assign(&self, name: &str, value: Option<String>) {
        self.vars.borrow_mut().insert(name.to_owned(), value);
    }

    /// The original byte range of `range` (a range of this source's text).
    pub fn orig(&self, range: Range<usize>) -> Range<usize> {
        let Some(map) = &self.map else {
            return range;
        };
        let Some(last) = map.last() else {
            return 0..0;
        };
        let start = map.get(range.start).map_or(last.1, |m| m.0);
        let end = if range.end > range.start {
            map.get(range.end - 1).map_or(last.1, |m| m.1)
        } else {
            start
        };
        start..end.max(start)
    }
}

/// Decoded text with, per byte, the original byte range it came from.
#[derive(Debug, Default, Clone)]
pub(crate) struct Mapped {
    /// The decoded text.
    pub text: String,
    /// Per byte of `text`: original `(start, end)`.
    pub map: Vec<(usize, usize)>,
}

impl Mapped {
    /// Appends `text`, decoded from `orig` (a range in the original command). When both have
    /// the same length the bytes map one to one, otherwise every byte maps to all of `orig`.
    pub fn push(&mut self, text: &str, orig: Range<usize>) {
        if text.len() == orig.len() {
            self.map.extend((orig.start..orig.end).map(|i| (i, i + 1)));
        } else {
            self.map
                .extend(std::iter::repeat_n((orig.start, orig.end), text.len()));
        }
        self.text.push_str(text);
    }

    /// Appends `other`.
    pub fn append(&mut self, other: &Mapped) {
        self.text.push_str(&other.text);
        self.map.extend_from_slice(&other.map);
    }

    /// The original range of the first byte, or `fallback` when empty.
    pub fn first_orig(&self, fallback: Range<usize>) -> Range<usize> {
        self.map.first().map_or(fallback, |m| m.0..m.1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_sources_map_back_through_escapes() {
        let mut m = Mapped::default();
        m.push("r", 10..12); // from `\r`
        m.push("m -rf", 12..17);
        let src = Source::top("").nested(m, Rc::from([]));
        assert_eq!(src.orig(0..2), 10..13);
        assert_eq!(src.orig(2..6), 13..17);
        assert_eq!(src.orig(6..6), 17..17);
    }
}
