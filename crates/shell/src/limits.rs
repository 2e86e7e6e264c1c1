//! The analyzer's bounds. Every analysis stays within them whatever the input, so that its
//! time and memory are bounded; what lies past one is not analysed and blocks with an
//! `analysis-limit` finding. The table with the reasons is in `docs/shell-analyzer.md`.
//!
//! Structural bounds (nesting, syntax depth, wrappers, brace words) stop the analysis of the
//! part that exceeds them, which is reported where it is. Budgets ([`MAX_PARSE_STEPS`],
//! [`MAX_LEXED_BYTES`], [`MAX_WORK`], [`MAX_EXPANSION_BYTES`], [`MAX_FINDINGS`]) are shared
//! by every text of one analysis (the command and the shell strings inside it); when one runs
//! out the whole analysis stops.

use std::cell::Cell;
use std::ops::Range;

/// Longest command analysed, in bytes (32 KiB); longer ones are not parsed.
pub const MAX_COMMAND_BYTES: usize = 32 * 1024;

/// Shell strings nested inside each other (`sh -c`, `eval`, heredocs fed to shells, `$(…)`
/// the parser left as text) that are followed.
pub const MAX_NESTING: usize = 8;

/// Syntax-tree levels followed, counted across nested shell strings.
pub const MAX_TREE_DEPTH: usize = 200;

/// Wrappers (`env`, `nice`, `timeout`, `sudo`, `xargs`, `find -exec`, …) unwrapped around one
/// command, counted across nested shell strings.
pub const MAX_WRAPPERS: usize = 16;

/// Pipe characters (`|`, `||`, `|&`, and `|` inside quotes) in one text beyond which it is not
/// parsed: tree-sitter-bash needs time quadratic in the length of a long pipeline.
pub const MAX_PIPES: usize = 512;

/// Parser work across all parses of one analysis, in steps of 100 tree-sitter operations.
pub const MAX_PARSE_STEPS: u64 = 512;

/// Bytes the parser reads across all parses of one analysis, re-reads included (the
/// tree-sitter-bash scanner can re-read the rest of the text for every token of some
/// malformed inputs).
pub const MAX_LEXED_BYTES: usize = 9 * MAX_COMMAND_BYTES / 2;

/// Rounds of line-continuation joining (`\<newline>`) of one text.
pub const MAX_JOIN_ROUNDS: usize = 4;

/// Analysis work across one analysis, in units of about one syntax node visited or one byte
/// of word text decoded or checked, plus 8 per command word, 16 per redirection target and
/// 64 per parse (compiling a write target's glob costs 2048). Ordinary hook commands need
/// about 4 units per byte, so scripts up to about 18 KB fit; with [`MAX_PARSE_STEPS`] it
/// stops the costliest 32 KiB inputs within about 40 ms on a 2-core development VM.
pub const MAX_WORK: u64 = 72 * 1024;

/// Bytes of variable values and positional parameters substituted into words across one
/// analysis (`X=$X$X` doubles a value with every assignment).
pub const MAX_EXPANSION_BYTES: usize = 128 * 1024;

/// Findings of one analysis; past it the analysis stops (its verdict is already `block` or
/// `escalate` by then, and becomes `block`).
pub const MAX_FINDINGS: usize = 128;

/// Static write targets listed in [`Analysis::writes`](crate::Analysis::writes); more are
/// not listed (nothing else changes).
pub const MAX_WRITES: usize = 32;

/// Programs listed in [`Analysis::programs`](crate::Analysis::programs); more are not listed
/// (nothing else changes).
pub const MAX_PROGRAMS: usize = 64;

/// Longest finding message, in bytes (longer ones are cut, with `…`).
pub const MAX_MESSAGE_BYTES: usize = 1024;

/// Words one word may brace-expand into, and words of one command after brace expansion.
pub const MAX_BRACE_WORDS: usize = 256;

/// Words of one command after word splitting (`"$@"`, `"${a[@]}"`, unquoted `$X`).
pub const MAX_SPLIT_WORDS: usize = 4096;

/// Bytes one word may brace-expand into.
pub const MAX_BRACE_BYTES: usize = 64 * 1024;

/// The budgets of one analysis, shared by every text in it. Interior mutability because word
/// reading (which sees only the text) charges it too.
#[derive(Debug, Default)]
pub(crate) struct Budget {
    work: Cell<u64>,
    parse_steps: Cell<u64>,
    lexed: Cell<usize>,
    expanded: Cell<usize>,
    /// The first budget that ran out: where and why. Once set, the analysis stops.
    exceeded: Cell<Option<Exceeded>>,
}

/// A budget that ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Exceeded {
    /// Original byte range of what was being analysed.
    pub span: (usize, usize),
    /// Which budget.
    pub what: Limit,
}

/// The budgets, for the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Limit {
    Work,
    ParseSteps,
    Lexed,
    Expansion,
    Findings,
}

impl Limit {
    /// Why the analysis stopped, for the finding.
    pub fn message(self) -> String {
        match self {
            Limit::Work => format!("the analysis needs more than {MAX_WORK} steps"),
            Limit::ParseSteps => format!(
                "parsing needs more than {} parser operations",
                MAX_PARSE_STEPS * 100
            ),
            Limit::Lexed => format!("parsing reads more than {MAX_LEXED_BYTES} bytes"),
            Limit::Expansion => format!(
                "variables and parameters expand into more than {MAX_EXPANSION_BYTES} bytes"
            ),
            Limit::Findings => format!("more than {MAX_FINDINGS} findings"),
        }
    }
}

impl Budget {
    /// Whether some budget ran out: the analysis stops.
    pub fn exhausted(&self) -> bool {
        self.exceeded.get().is_some()
    }

    /// The first budget that ran out.
    pub fn exceeded(&self) -> Option<Exceeded> {
        self.exceeded.get()
    }

    /// Work units spent so far.
    pub fn work(&self) -> u64 {
        self.work.get()
    }

    /// Records that `what` ran out while analysing `span` (the first one counts).
    pub fn exceed(&self, what: Limit, span: Range<usize>) {
        if self.exceeded.get().is_none() {
            self.exceeded.set(Some(Exceeded {
                span: (span.start, span.end),
                what,
            }));
        }
    }

    /// Spends `units` of analysis work on `span`; false (and the analysis stops) once
    /// [`MAX_WORK`] is spent. One unit is about one syntax node visited or one byte of word
    /// text decoded or matched.
    pub fn charge(&self, units: usize, span: Range<usize>) -> bool {
        if self.exhausted() {
            return false;
        }
        let work = self.work.get().saturating_add(units as u64);
        self.work.set(work);
        if work > MAX_WORK {
            self.exceed(Limit::Work, span);
        }
        !self.exhausted()
    }

    /// Spends one parse step (100 parser operations); false once [`MAX_PARSE_STEPS`] is spent.
    pub fn parse_step(&self) -> bool {
        let steps = self.parse_steps.get() + 1;
        self.parse_steps.set(steps);
        steps <= MAX_PARSE_STEPS
    }

    /// Spends `bytes` of parser reading; false once [`MAX_LEXED_BYTES`] is spent.
    pub fn lex(&self, bytes: usize) -> bool {
        let lexed = self.lexed.get().saturating_add(bytes);
        self.lexed.set(lexed);
        lexed <= MAX_LEXED_BYTES
    }

    /// Spends `bytes` of substituted values; false (and the analysis stops) once
    /// [`MAX_EXPANSION_BYTES`] is spent.
    pub fn expand(&self, bytes: usize, span: Range<usize>) -> bool {
        if self.exhausted() {
            return false;
        }
        let expanded = self.expanded.get().saturating_add(bytes);
        self.expanded.set(expanded);
        if expanded > MAX_EXPANSION_BYTES {
            self.exceed(Limit::Expansion, span);
        }
        !self.exhausted()
    }
}

/// `message` cut to [`MAX_MESSAGE_BYTES`] on a `char` boundary, with `…` when cut.
pub(crate) fn bounded_message(mut message: String) -> String {
    if message.len() > MAX_MESSAGE_BYTES {
        let mut end = MAX_MESSAGE_BYTES - '…'.len_utf8();
        while !message.is_char_boundary(end) {
            end -= 1;
        }
        message.truncate(end);
        message.push('…');
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_exhausted_budget_is_kept() {
        let budget = Budget::default();
        assert!(budget.charge(10, 0..1));
        assert!(!budget.charge(MAX_WORK as usize, 2..3));
        assert!(!budget.expand(MAX_EXPANSION_BYTES + 1, 4..5));
        let exceeded = budget.exceeded().unwrap();
        assert_eq!((exceeded.what, exceeded.span), (Limit::Work, (2, 3)));
        // Nothing more is spent once the analysis stopped.
        assert!(!budget.charge(5, 6..7));
        assert_eq!(budget.work(), MAX_WORK + 10);
    }

    #[test]
    fn long_messages_are_cut_on_a_char_boundary() {
        let cut = bounded_message("é".repeat(MAX_MESSAGE_BYTES));
        assert!(cut.len() <= MAX_MESSAGE_BYTES);
        assert!(cut.ends_with('…'));
        assert_eq!(bounded_message("short".to_owned()), "short");
    }
}
