//! Checks on nodes other than commands: assignments, `unset`, function definitions,
//! substitutions, and substitutions tree-sitter left as text.

use std::ops::Range;
use std::rc::Rc;

use tree_sitter::Node;

use super::{Analyzer, Cx};
use crate::rules::RuleId;
use crate::source::Mapped;
use crate::syntax::{closing_backtick, closing_paren, named_children};
use crate::word::Word;

impl Analyzer {
    /// `standalone`: not the `X=/ cmd` prefix form of a command.
    pub(super) fn assignment(&mut self, cx: Cx<'_, '_>, node: Node<'_>, standalone: bool) {
        let name = node
            .child_by_field_name("name")
            .map(|n| &cx.src.text[n.byte_range()]);
        let word = node
            .child_by_field_name("value")
            .map(|v| Word::read(cx.src, v));
        let value = word.as_ref().map(|w| w.text.clone()).unwrap_or_default();
        let handled = self.assigned(cx, node, standalone, word.as_ref());
        // `X=/; rm -rf "$X"`: remember the value for later words (not for `X=/ cmd`, whose
        // own words see the old value).
        if let Some(name) = name.filter(|_| standalone && !handled) {
            let known = word.as_ref().is_none_or(|w| !w.unknown);
            cx.src.assign(name, known.then(|| value.clone()));
        }
        let tampers = match name {
            Some("HISTFILE" | "HISTIGNORE" | "HISTCONTROL") => true,
            Some("HISTSIZE" | "HISTFILESIZE" | "SAVEHIST") => value == "0",
            _ => false,
        };
        if tampers {
            self.report(
                RuleId::HistoryTamper,
                cx.src.orig(node.byte_range()),
                "changing the history file or size hides what the shell ran",
            );
        }
        crate::commands::tool_variable(self, cx, node);
    }

    pub(super) fn unset(&mut self, cx: Cx<'_, '_>, node: Node<'_>) {
        let hist = named_children(node)
            .iter()
            .any(|n| &cx.src.text[n.byte_range()] == "HISTFILE");
        if hist {
            self.report(
                RuleId::HistoryTamper,
                cx.src.orig(node.byte_range()),
                "`unset HISTFILE` stops the shell from recording history",
            );
        }
    }

    /// A function whose body calls itself in a pipeline or in the background (found for the
    /// whole tree before the walk, see [`syntax::fork_bombs`]).
    pub(super) fn fork_bomb(&mut self, cx: Cx<'_, '_>, node: Node<'_>) {
        if !self.fork_bombs.contains(&node.id()) {
            return;
        }
        let name = node
            .child_by_field_name("name")
            .map_or("", |n| &cx.src.text[n.byte_range()]);
        self.report(
            RuleId::ForkBomb,
            cx.src.orig(node.byte_range()),
            format!("function `{name}` calls itself in a pipeline or in the background"),
        );
    }

    /// `$(…)`, `` `…` ``, `<(…)`: escaped backticks inside backticks are not read reliably.
    pub(super) fn substitution(&mut self, cx: Cx<'_, '_>, node: Node<'_>) {
        let raw = &cx.src.text[node.byte_range()];
        if raw.starts_with('`') && raw.contains("\\`") {
            self.report(
                RuleId::ParseError,
                cx.src.orig(node.byte_range()),
                "escaped backticks inside backticks (nested substitutions) cannot be read reliably",
            );
        }
    }

    /// tree-sitter leaves substitutions in some operator words of `${…}` as plain text
    /// (`${x:-`cmd`}`, `${x#$(cmd)}`).
    pub(super) fn expansion_operands(&mut self, cx: Cx<'_, '_>, node: Node<'_>) {
        for leaf in named_children(node) {
            if leaf.named_child_count() == 0 {
                self.unparsed_substitutions(cx, leaf.byte_range());
            }
        }
    }

    /// The text of an unquoted heredoc body that tree-sitter did not parse (`<<-` bodies,
    /// backticks).
    pub(super) fn heredoc_text(&mut self, cx: Cx<'_, '_>, node: Node<'_>) {
        let mut pos = node.start_byte();
        for child in named_children(node) {
            if child.start_byte() > pos {
                self.unparsed_substitutions(cx, pos..child.start_byte());
            }
            if child.kind() == "heredoc_content" {
                self.unparsed_substitutions(cx, child.byte_range());
            }
            pos = pos.max(child.end_byte());
        }
        if node.end_byte() > pos {
            self.unparsed_substitutions(cx, pos..node.end_byte());
        }
    }

    /// Finds `` `…` `` and `$(…)` in `range`, text that tree-sitter did not parse, and analyses
    /// their code; blocks when one is unterminated or nests escaped backticks.
    pub(super) fn unparsed_substitutions(&mut self, cx: Cx<'_, '_>, range: Range<usize>) {
        let text = &cx.src.text[range.clone()];
        if !text.contains(['`', '$']) || !self.budget.charge(text.len(), cx.src.orig(range.clone()))
        {
            return;
        }
        let bytes = text.as_bytes();
        let mut i = 0;
        while i < bytes.len() && !self.halted() {
            let (open, inner_start) = match bytes[i] {
                b'\\' => {
                    i += 2;
                    continue;
                }
                b'`' => (b'`', i + 1),
                b'$' if bytes.get(i + 1) == Some(&b'(') => (b')', i + 2),
                _ => {
                    i += 1;
                    continue;
                }
            };
            let close = if open == b'`' {
                closing_backtick(bytes, inner_start)
            } else {
                closing_paren(bytes, inner_start)
            };
            let at = range.start + i;
            let Some(end) = close else {
                self.report(
                    RuleId::ParseError,
                    cx.src.orig(at..range.end),
                    "a substitution the parser left as text is unterminated or nests backticks",
                );
                return;
            };
            let inner = range.start + inner_start..range.start + end;
            let mut code = Mapped::default();
            for (k, c) in cx.src.text[inner.clone()].char_indices() {
                let b = inner.start + k..inner.start + k + c.len_utf8();
                code.push(&cx.src.text[b.clone()], cx.src.orig(b));
            }
            let src = cx.src.nested(code, Rc::clone(&cx.src.args));
            self.source(&src, cx.nesting + 1, cx.src.orig(at..range.start + end + 1));
            i = end + 1;
        }
    }
}
