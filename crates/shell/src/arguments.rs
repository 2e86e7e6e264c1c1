//! `$ARGUMENTS` in a command hook's line: rewritten to a quoted reference to the variable that
//! holds the payload, so the payload is never spliced into the line as shell text.

use tree_sitter::Node;

use crate::limits::{Budget, MAX_COMMAND_BYTES};
use crate::parse::parse;

/// The placeholder command hooks use for their payload (as in Claude Code skills).
pub const ARGUMENTS: &str = "ARGUMENTS";

/// Rewrites every expansion of `$ARGUMENTS` in `command` to expand `variable` instead, quoted
/// so that the value is one word: no word splitting, no globbing.
///
/// - `$ARGUMENTS` / `${ARGUMENTS}` outside quotes → `"${variable}"`;
/// - inside double quotes or an unquoted here-document → `${variable}` (already one word);
/// - other parameter expansions keep their operator (`${ARGUMENTS:-{}}` →
///   `"${variable:-{}}"`);
/// - inside single quotes, `$'…'`, a quoted here-document, or escaped (`\$ARGUMENTS`) the text
///   stays literal, as the shell would leave it;
/// - `$ARGUMENTS_X` and other names are untouched.
///
/// A line the parser cannot read, or longer than [`MAX_COMMAND_BYTES`], is returned unchanged
/// (the analyzer blocks such a line anyway). The analyzer vets the line as written, before
/// this rewrite. Time is linear in the line (within the analyzer's parse limits), and no
/// recursion follows the syntax tree.
///
/// [`MAX_COMMAND_BYTES`]: crate::MAX_COMMAND_BYTES
///
/// ```
/// use tollgate_shell::rewrite_arguments;
/// assert_eq!(rewrite_arguments(r#"printf %s $ARGUMENTS"#, "HOOK_PAYLOAD"), r#"printf %s "${HOOK_PAYLOAD}""#);
/// assert_eq!(rewrite_arguments(r#"echo "got $ARGUMENTS""#, "HOOK_PAYLOAD"), r#"echo "got ${HOOK_PAYLOAD}""#);
/// assert_eq!(rewrite_arguments("echo '$ARGUMENTS'", "HOOK_PAYLOAD"), "echo '$ARGUMENTS'");
/// ```
pub fn rewrite_arguments(command: &str, variable: &str) -> String {
    if !command.contains(ARGUMENTS) || command.len() > MAX_COMMAND_BYTES {
        return command.to_owned();
    }
    let Ok(tree) = parse(command, &Budget::default()) else {
        return command.to_owned();
    };
    // Edits come in document order and do not overlap.
    let mut out = String::with_capacity(command.len());
    let mut pos = 0;
    for edit in collect(tree.root_node(), command) {
        out.push_str(&command[pos..edit.node.start]);
        out.push_str(&rewritten(command, &edit, variable));
        pos = edit.node.end;
    }
    out.push_str(&command[pos..]);
    out
}

struct Edit {
    /// The whole expansion (`$ARGUMENTS`, `${ARGUMENTS…}`).
    node: std::ops::Range<usize>,
    /// The variable name inside it.
    name: std::ops::Range<usize>,
    quoted: bool,
}

/// The expansions of `$ARGUMENTS` under `root`, in document order, each with whether it sits
/// inside double quotes or a here-document body of the same command level (a command
/// substitution starts a new quoting context). An explicit stack: trees can be deep.
fn collect(root: Node<'_>, source: &str) -> Vec<Edit> {
    let mut edits = Vec::new();
    let mut stack = vec![(root, false)];
    while let Some((node, quoted)) = stack.pop() {
        if matches!(node.kind(), "simple_expansion" | "expansion")
            && let Some(name) = variable_name(node)
            && &source[name.byte_range()] == ARGUMENTS
        {
            edits.push(Edit {
                node: node.byte_range(),
                name: name.byte_range(),
                quoted,
            });
            continue;
        }
        let quoted = match node.kind() {
            "string" | "heredoc_body" => true,
            "command_substitution" | "process_substitution" | "program" => false,
            _ => quoted,
        };
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
        stack.extend(children.into_iter().rev().map(|c| (c, quoted)));
    }
    edits
}

fn variable_name(expansion: Node<'_>) -> Option<Node<'_>> {
    let mut cursor = expansion.walk();
    // Bound to a local: the iterator borrows the cursor, which must outlive it.
    #[allow(clippy::let_and_return)]
    let found = expansion
        .children(&mut cursor)
        .find(|child| child.kind() == "variable_name");
    found
}

fn rewritten(source: &str, edit: &Edit, variable: &str) -> String {
    let expansion = &source[edit.node.clone()];
    let (name_start, name_end) = (
        edit.name.start - edit.node.start,
        edit.name.end - edit.node.start,
    );
    let braced = if expansion.starts_with("${") {
        format!(
            "{}{variable}{}",
            &expansion[..name_start],
            &expansion[name_end..]
        )
    } else {
        format!("${{{variable}}}")
    };
    if edit.quoted {
        braced
    } else {
        format!("\"{braced}\"")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rewrite(line: &str) -> String {
        rewrite_arguments(line, "HOOK_PAYLOAD")
    }

    #[test]
    fn unquoted_expansions_become_one_quoted_word() {
        assert_eq!(
            rewrite("printf '%s' $ARGUMENTS >> log"),
            r#"printf '%s' "${HOOK_PAYLOAD}" >> log"#
        );
        assert_eq!(rewrite("echo ${ARGUMENTS}"), r#"echo "${HOOK_PAYLOAD}""#);
        assert_eq!(rewrite("echo x$ARGUMENTS"), r#"echo x"${HOOK_PAYLOAD}""#);
        assert_eq!(
            rewrite("jq . <<< $ARGUMENTS"),
            r#"jq . <<< "${HOOK_PAYLOAD}""#
        );
    }

    #[test]
    fn expansions_in_double_quotes_and_heredocs_stay_unquoted() {
        assert_eq!(
            rewrite(r#"echo "$ARGUMENTS" >> log"#),
            r#"echo "${HOOK_PAYLOAD}" >> log"#
        );
        assert_eq!(
            rewrite("cat <<EOF\n$ARGUMENTS\nEOF"),
            "cat <<EOF\n${HOOK_PAYLOAD}\nEOF"
        );
    }

    #[test]
    fn single_quotes_ansi_c_quoted_heredocs_and_escapes_stay_literal() {
        for line in [
            "echo '$ARGUMENTS'",
            "echo $'$ARGUMENTS'",
            "echo \\$ARGUMENTS",
            "cat <<'EOF'\n$ARGUMENTS\nEOF",
        ] {
            assert_eq!(rewrite(line), line);
        }
    }

    #[test]
    fn other_names_are_untouched_and_operators_are_kept() {
        assert_eq!(rewrite("echo $ARGUMENTS_X"), "echo $ARGUMENTS_X");
        assert_eq!(
            rewrite("echo ${ARGUMENTS:-none}"),
            r#"echo "${HOOK_PAYLOAD:-none}""#
        );
        assert_eq!(rewrite("echo ${#ARGUMENTS}"), r#"echo "${#HOOK_PAYLOAD}""#);
    }

    #[test]
    fn regression_deeply_nested_lines_are_rewritten_without_recursion() {
        // The recursive walk overflowed the stack on this line.
        let deep = format!("echo {}$ARGUMENTS{}", "$(".repeat(3_000), ")".repeat(3_000));
        let rewritten = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(move || rewrite(&deep))
            .unwrap()
            .join()
            .unwrap();
        assert!(rewritten.contains("\"${HOOK_PAYLOAD}\""));
        let many = "echo $ARGUMENTS; ".repeat(1500);
        assert_eq!(rewrite(&many), r#"echo "${HOOK_PAYLOAD}"; "#.repeat(1500));
    }

    #[test]
    fn command_substitutions_inside_quotes_start_a_new_context() {
        assert_eq!(
            rewrite(r#"echo "a$(printf %s $ARGUMENTS)b""#),
            r#"echo "a$(printf %s "${HOOK_PAYLOAD}")b""#
        );
    }
}
