//! Queries on tree-sitter syntax trees, all without recursion (trees can be as deep as the
//! text is long) and without `Node::parent` or sibling lookups in loops (tree-sitter finds a
//! parent by descending from the root, so such loops are quadratic on wide trees).

use std::collections::{HashMap, HashSet};
use std::ops::Range;

use tree_sitter::Node;

use crate::limits::Budget;
use crate::source::{Mapped, Source};

/// `node` and everything below it, in document order. (The depth is counted here:
/// `TreeCursor::depth` walks the cursor's whole stack, quadratic on deep trees.)
pub(crate) fn descendants<'t>(node: Node<'t>) -> impl Iterator<Item = Node<'t>> {
    let mut cursor = node.walk();
    let mut depth = 0usize;
    let mut started = false;
    let mut done = false;
    std::iter::from_fn(move || {
        if done {
            return None;
        }
        if !started {
            started = true;
            return Some(cursor.node());
        }
        if cursor.goto_first_child() {
            depth += 1;
            return Some(cursor.node());
        }
        loop {
            if depth == 0 {
                done = true;
                return None;
            }
            if cursor.goto_next_sibling() {
                return Some(cursor.node());
            }
            if !cursor.goto_parent() {
                done = true;
                return None;
            }
            depth -= 1;
        }
    })
}

/// The children of `node` with their field names, in order. (`Node::field_name_for_child`
/// walks the children up to the index every time.)
pub(crate) fn fields<'t>(node: Node<'t>) -> impl Iterator<Item = (Option<&'t str>, Node<'t>)> {
    let mut cursor = node.walk();
    let mut started = false;
    std::iter::from_fn(move || {
        let moved = if started {
            cursor.goto_next_sibling()
        } else {
            started = true;
            cursor.goto_first_child()
        };
        moved.then(|| (cursor.field_name(), cursor.node()))
    })
}

/// The named children of `node`, collected (the walk pushes them on its stack in reverse).
pub(crate) fn named_children(node: Node<'_>) -> Vec<Node<'_>> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor).collect()
}

/// The destinations of a file redirect after the first: words of the command in bash.
pub(crate) fn extra_destinations(node: Node<'_>) -> Vec<Node<'_>> {
    let mut cursor = node.walk();
    node.children_by_field_name("destination", &mut cursor)
        .skip(1)
        .collect()
}

/// The operator of a redirect node (`>`, `>>`, `<`, `>&`, …).
pub(crate) fn redirect_operator<'s>(text: &'s str, node: Node<'_>) -> Option<&'s str> {
    let mut cursor = node.walk();
    node.children(&mut cursor)
        .find(|c| !c.is_named())
        .map(|c| &text[c.byte_range()])
}

/// Whether the argument `node` is really a redirection's file descriptor: digits glued to
/// `<` or `>` (`sh 0</tmp/f`), which bash reads as a descriptor and tree-sitter-bash
/// sometimes as an argument followed by a redirection.
pub(crate) fn glued_descriptor(text: &str, node: Node<'_>) -> bool {
    node.kind() == "number"
        && text[node.byte_range()].bytes().all(|b| b.is_ascii_digit())
        && matches!(text.as_bytes().get(node.end_byte()), Some(b'<' | b'>'))
}

/// Whether the redirect `node` reads a file (`<`).
pub(crate) fn reads_file(text: &str, node: Node<'_>) -> bool {
    redirect_operator(text, node) == Some("<")
}

/// The index of the backtick closing one opened before `from`; `None` when there is none or
/// an escaped backtick (a nested substitution) comes first.
pub(crate) fn closing_backtick(bytes: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if bytes.get(i + 1) == Some(&b'`') => return None,
            b'\\' => i += 2,
            b'`' => return Some(i),
            _ => i += 1,
        }
    }
    None
}

/// The index of the `)` closing a `$(` opened before `from`, counting parentheses.
pub(crate) fn closing_paren(bytes: &[u8], from: usize) -> Option<usize> {
    let mut depth = 1usize;
    let mut i = from;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 1,
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// For each of `positions` (ascending byte offsets), the verdict of the innermost node around
/// it for which `decide` answers (`None`: this kind of node does not decide), or `outside`
/// when there is none. Node ranges of one tree nest or are disjoint, so one sweep over the
/// deciding nodes in document order answers every position.
pub(crate) fn innermost<T: Copy>(
    root: Node<'_>,
    positions: &[usize],
    decide: impl Fn(&str) -> Option<T>,
    outside: T,
) -> Vec<T> {
    let mut deciders: Vec<(usize, usize, T)> = descendants(root)
        .filter_map(|n| decide(n.kind()).map(|d| (n.start_byte(), n.end_byte(), d)))
        .collect();
    deciders.sort_by_key(|&(start, end, _)| (start, std::cmp::Reverse(end)));
    let mut open: Vec<(usize, T)> = Vec::new();
    let mut next = deciders.into_iter().peekable();
    positions
        .iter()
        .map(|&at| {
            while let Some(&(start, end, d)) = next.peek() {
                if start > at {
                    break;
                }
                while open.last().is_some_and(|(e, _)| *e <= start) {
                    open.pop();
                }
                open.push((end, d));
                next.next();
            }
            while open.last().is_some_and(|(e, _)| *e <= at) {
                open.pop();
            }
            open.last().map_or(outside, |&(_, d)| d)
        })
        .collect()
}

/// The text with every line continuation (`\<newline>`) that bash removes before splitting
/// words taken out, or `None` when there is none. Bash keeps them in single quotes, `$'…'`,
/// comments and heredoc bodies (an unquoted heredoc's continuations are decoded with its
/// words); a backslash that is itself escaped (`\\<newline>`) does not continue the line.
pub(crate) fn join_continuations(
    src: &Source<'_>,
    root: Node<'_>,
    budget: &Budget,
) -> Option<Mapped> {
    let text = src.text.as_ref();
    if !text.contains("\\\n") {
        return None;
    }
    budget.charge(text.len(), src.orig(0..text.len()));
    let backslashes: Vec<usize> = text
        .bytes()
        .enumerate()
        .filter_map(|(i, b)| (b == b'\\').then_some(i))
        .collect();
    let literal = innermost(root, &backslashes, literal_kind, false);
    let bytes = text.as_bytes();
    let mut cut = Vec::new();
    let mut skip_to = 0;
    for (&i, &literal) in backslashes.iter().zip(&literal) {
        if i < skip_to || literal || i + 1 >= bytes.len() {
            continue;
        }
        if bytes[i + 1] == b'\n' {
            cut.push(i);
        }
        // Skip the escaped character: `\\` is one escaped backslash.
        skip_to = i + 2;
    }
    if cut.is_empty() {
        return None;
    }
    let mut out = Mapped::default();
    let mut pos = 0;
    for at in cut.into_iter().chain(std::iter::once(text.len())) {
        for (k, c) in text[pos..at].char_indices() {
            let start = pos + k;
            let end = start + c.len_utf8();
            out.push(&text[start..end], src.orig(start..end));
        }
        pos = at + 2;
    }
    Some(out)
}

/// Whether bash takes backslashes literally (or decodes them later) inside a node of `kind`:
/// `Some(true)`; `Some(false)` for substitutions, which start code again.
fn literal_kind(kind: &str) -> Option<bool> {
    match kind {
        "raw_string" | "ansi_c_string" | "comment" | "heredoc_body" | "heredoc_content" => {
            Some(true)
        }
        "command_substitution" | "process_substitution" => Some(false),
        _ => None,
    }
}

/// A comment that tree-sitter-bash starts in the middle of a word (`[ 1 ]#; rm -rf /`):
/// bash starts a comment only at the start of a word, so it runs what follows.
pub(crate) fn glued_comment<'t>(text: &str, root: Node<'t>) -> Option<Node<'t>> {
    if !text.contains('#') {
        return None;
    }
    let bytes = text.as_bytes();
    descendants(root)
        .filter(|n| n.kind() == "comment")
        .find(|n| {
            let before = n.start_byte().checked_sub(1).and_then(|i| bytes.get(i));
            before.is_some_and(|b| {
                !b.is_ascii_whitespace()
                    && !matches!(b, b';' | b'&' | b'|' | b'(' | b')' | b'<' | b'>')
            })
        })
}

/// tree-sitter-bash 0.25 reads a heredoc whose first line starts with `\` as arguments on the
/// `<<EOF` line (and an empty body), without an error node. Such a word starts with the
/// newline that ends the `<<EOF` line, which no correct parse produces.
pub(crate) fn misread_heredoc<'t>(text: &str, root: Node<'t>) -> Option<Node<'t>> {
    if !text.contains("<<") {
        return None;
    }
    descendants(root)
        .filter(|n| n.kind() == "heredoc_redirect")
        .find_map(|redirect| {
            let mut cursor = redirect.walk();
            redirect
                .named_children(&mut cursor)
                .find(|c| text[c.byte_range()].starts_with('\n'))
        })
}

/// The first `ERROR` or `MISSING` node under `node`.
pub(crate) fn first_error(node: Node<'_>) -> Option<Node<'_>> {
    descendants(node).find(|n| n.is_error() || n.is_missing())
}

/// The function definitions under `root` that call themselves in a pipeline or in the
/// background (`:(){ :|:& };:`), by node id: a function whose body holds a command of its
/// name some ancestor of which, below the body, is a pipeline stage or followed by `&`.
///
/// One walk over the tree, whatever the nesting of functions: on the way down it keeps the
/// enclosing functions (by name) and the depths of the ancestors that run concurrently; a
/// command of a function's name marks, once, every enclosing function of that name whose body
/// lies above the deepest such ancestor. Each node costs a unit of `budget`.
pub(crate) fn fork_bombs(
    text: &str,
    root: Node<'_>,
    budget: &Budget,
    span: Range<usize>,
) -> HashSet<usize> {
    let mut found = HashSet::new();
    let mut enclosing: HashMap<&str, Enclosing> = HashMap::new();
    let mut concurrent: Vec<usize> = Vec::new();
    let mut stack = vec![Step::Enter(root, 0, false)];
    let mut cursor = root.walk();
    let mut children = Vec::new();
    while let Some(step) = stack.pop() {
        let (node, depth, induced) = match step {
            Step::Enter(node, depth, induced) => (node, depth, induced),
            Step::Leave(name, induced) => {
                if induced {
                    concurrent.pop();
                }
                if let Some((functions, done)) = name.and_then(|n| enclosing.get_mut(n)) {
                    functions.pop();
                    *done = (*done).min(functions.len());
                }
                continue;
            }
        };
        if !budget.charge(1, span.clone()) {
            break;
        }
        if induced {
            concurrent.push(depth);
        }
        let mut defines = None;
        match node.kind() {
            "function_definition" => {
                if let Some(name) = node.child_by_field_name("name") {
                    let name = &text[name.byte_range()];
                    let entry = enclosing.entry(name).or_default();
                    entry.0.push((depth + 1, node.id()));
                    defines = Some(name);
                }
            }
            "command" => {
                let name = node
                    .child_by_field_name("name")
                    .map(|n| &text[n.byte_range()]);
                let deepest = concurrent.last().copied();
                if let (Some((functions, done)), Some(deepest)) =
                    (name.and_then(|n| enclosing.get_mut(n)), deepest)
                {
                    while *done < functions.len() && functions[*done].0 < deepest {
                        found.insert(functions[*done].1);
                        *done += 1;
                    }
                }
            }
            _ => {}
        }
        stack.push(Step::Leave(defines, induced));
        let piped = node.kind() == "pipeline";
        children.clear();
        cursor.reset(node);
        if cursor.goto_first_child() {
            children.push(cursor.node());
            while cursor.goto_next_sibling() {
                children.push(cursor.node());
            }
        }
        for (i, child) in children.iter().enumerate().rev() {
            let backgrounded = children.get(i + 1).is_some_and(|s| s.kind() == "&");
            stack.push(Step::Enter(*child, depth + 1, piped || backgrounded));
        }
    }
    found
}

/// Per function name: the enclosing functions (body depth, node id), outermost first, and
/// how many of them (from the outermost) are already found.
type Enclosing = (Vec<(usize, usize)>, usize);

/// A step of [`fork_bombs`]' walk.
enum Step<'t, 's> {
    /// Enter a node at a depth; whether it runs concurrently with its parent.
    Enter(Node<'t>, usize, bool),
    /// Leave a node: the function name it defines, and whether it ran concurrently.
    Leave(Option<&'s str>, bool),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse;

    #[test]
    fn innermost_decider_wins() {
        let text = "echo 'a\\b' \"$(x\\y)\" \\z # c\\d";
        let tree = parse(text, &Budget::default()).unwrap();
        let at: Vec<usize> = text.match_indices('\\').map(|(i, _)| i).collect();
        let got = innermost(tree.root_node(), &at, literal_kind, false);
        assert_eq!(got, [true, false, false, true]);
    }

    #[test]
    fn fields_name_the_children() {
        let text = "rm -rf / > out";
        let tree = parse(text, &Budget::default()).unwrap();
        let statement = tree.root_node().named_child(0).unwrap();
        let got: Vec<Option<&str>> = fields(statement).map(|(f, _)| f).collect();
        assert_eq!(got, [Some("body"), Some("redirect")]);
        let command = statement.named_child(0).unwrap();
        let got: Vec<Option<&str>> = fields(command).map(|(f, _)| f).collect();
        assert_eq!(got, [Some("name"), Some("argument"), Some("argument")]);
    }

    #[test]
    fn functions_spawning_themselves_are_found_in_one_walk() {
        let budget = Budget::default();
        for (text, spawns) in [
            (":(){ :|:& };:", vec![":"]),
            ("f(){ f & }", vec!["f"]),
            ("f(){ f; }", vec![]),
            ("f(){ g | h; f; }", vec![]),
            ("f(){ g(){ f | x; }; }", vec!["f"]),
            ("f(){ f(){ f | x; }; }", vec!["f", "f"]),
            ("f(){ x; }; f | f", vec![]),
            ("f(){ (f) & }", vec!["f"]),
        ] {
            let tree = parse(text, &budget).unwrap();
            let root = tree.root_node();
            let found = fork_bombs(text, root, &budget, 0..1);
            let names: Vec<&str> = descendants(root)
                .filter(|n| found.contains(&n.id()))
                .map(|n| &text[n.child_by_field_name("name").unwrap().byte_range()])
                .collect();
            assert_eq!(names, spawns, "{text}");
        }
    }
}
