//! `kill … $p` inside a loop whose variable takes every process id in turn: `for p in
//! $(pgrep .); do kill $p; done`, `ps -e -o pid= | while read p; do kill $p; done`.

use tree_sitter::Node;

use super::lists_everything;
use crate::commands::producers::command_words;
use crate::syntax::descendants;
use crate::walk::{Analyzer, Cx};
use crate::word::Word;

/// How many levels above a `kill` argument a loop over process ids is looked for.
const LOOP_LEVELS: usize = 8;

/// Work units charged per level climbed (tree-sitter finds a parent from the root down).
const PARENT_COST: usize = 8;

/// `kill … $p` inside a loop whose variable takes every process id: `for p in $(pgrep .)`,
/// `ps -e -o pid= | while read p`.
pub(super) fn kills_in_loop(a: &mut Analyzer, cx: Cx<'_, '_>, args: &[Word<'_>]) -> bool {
    for word in args.iter().filter(|w| w.unknown) {
        let Some(node) = word.node else {
            continue;
        };
        let Some(name) = expanded_name(&cx.src.text[node.byte_range()]) else {
            continue;
        };
        let span = cx.src.orig(node.byte_range());
        let mut up = node.parent();
        for _ in 0..LOOP_LEVELS {
            let Some(level) = up else {
                break;
            };
            // `parent` walks down from the root: charged as a few nodes visited.
            if !a.budget.charge(PARENT_COST, span.clone()) {
                return false;
            }
            if loops_over_every_process(a, cx, level, name) {
                return true;
            }
            up = level.parent();
        }
    }
    false
}

/// `$p`, `"$p"`, `${p}`, `"${p}"`: the variable's name.
fn expanded_name(text: &str) -> Option<&str> {
    let text = text.trim_matches('"').strip_prefix('$')?;
    let name = text
        .strip_prefix('{')
        .and_then(|t| t.strip_suffix('}'))
        .unwrap_or(text);
    let valid = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    valid.then_some(name)
}

/// `node` is a loop whose variable `name` takes every process id.
fn loops_over_every_process(a: &mut Analyzer, cx: Cx<'_, '_>, node: Node<'_>, name: &str) -> bool {
    match node.kind() {
        "for_statement" => {
            let variable = node.child_by_field_name("variable");
            if variable.map(|v| &cx.src.text[v.byte_range()]) != Some(name) {
                return false;
            }
            let mut cursor = node.walk();
            let values: Vec<Node<'_>> = node.children_by_field_name("value", &mut cursor).collect();
            values.into_iter().any(|v| lists_everything(a, cx, v))
        }
        "while_statement" => {
            let piped = node.parent().is_some_and(|p| p.kind() == "pipeline");
            let upstream = node.prev_named_sibling().filter(|_| piped);
            reads_into(cx, node, name) && upstream.is_some_and(|s| lists_everything(a, cx, s))
        }
        _ => false,
    }
}

/// The condition of the `while` loop `node` is `read … name`.
fn reads_into(cx: Cx<'_, '_>, node: Node<'_>, name: &str) -> bool {
    let Some(condition) = node.child_by_field_name("condition") else {
        return false;
    };
    let command = std::iter::once(condition)
        .chain(descendants(condition))
        .take(8)
        .find(|n| n.kind() == "command");
    command.is_some_and(|command| {
        let words = command_words(cx, command);
        words.first().and_then(Word::lit) == Some("read")
            && words[1..].iter().any(|w| w.lit() == Some(name))
    })
}
