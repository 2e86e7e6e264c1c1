//! Known variables in a hook's line replaced by their values before the analyzer vets it, so
//! that `"${CLAUDE_PLUGIN_ROOT}/hooks/guard.sh"` is vetted, shown and run as the literal path.

use std::ops::Range;

use tree_sitter::Node;

use crate::limits::{Budget, MAX_COMMAND_BYTES};
use crate::parse::parse;

/// Replaces the plain expansions (`$NAME`, `${NAME}`) of the variables in `values` with their
/// values, so the line names the files it runs.
///
/// - A value that is one plain word (letters, digits and `/._-+@%,:`) replaces the
///   expansion as it is; a double-quoted word left holding only plain text loses its quotes
///   (`"${ROOT}/x.sh"` → `/srv/p/x.sh`), since the analyzer vets a quoted command name as
///   obfuscated.
/// - Another value is shell-quoted: single quotes outside double quotes, backslash escapes
///   inside them. In a command name or a here-document it stays a reference instead: the
///   analyzer reads `"$NAME"/x.sh` as a fixed path under a directory the environment names,
///   and a quoted command name as obfuscated. (The variable must then be set when the line
///   runs.)
/// - Single quotes, `$'…'`, quoted here-documents and escapes (`\$NAME`) keep the text
///   literal, as the shell would; expansions with operators (`${NAME:-x}`, `${#NAME}`) and
///   other names are left alone.
///
/// A line the parser cannot read, or longer than [`MAX_COMMAND_BYTES`], is returned
/// unchanged. No recursion follows the syntax tree.
///
/// [`MAX_COMMAND_BYTES`]: crate::MAX_COMMAND_BYTES
///
/// ```
/// use tollgate_shell::substitute_variables;
/// let root = [("CLAUDE_PLUGIN_ROOT", "/srv/plugin")];
/// assert_eq!(substitute_variables(r#""${CLAUDE_PLUGIN_ROOT}/hooks/x.sh" --fast"#, &root), "/srv/plugin/hooks/x.sh --fast");
/// let spaced = [("CLAUDE_PROJECT_DIR", "/srv/my project")];
/// assert_eq!(substitute_variables(r#"bash "$CLAUDE_PROJECT_DIR/x.sh""#, &spaced), r#"bash "/srv/my project/x.sh""#);
/// assert_eq!(substitute_variables("echo '$CLAUDE_PROJECT_DIR'", &spaced), "echo '$CLAUDE_PROJECT_DIR'");
/// ```
pub fn substitute_variables(command: &str, values: &[(&str, &str)]) -> String {
    let mentioned = values.iter().any(|(name, _)| command.contains(name));
    if !mentioned || command.len() > MAX_COMMAND_BYTES {
        return command.to_owned();
    }
    let Ok(tree) = parse(command, &Budget::default()) else {
        return command.to_owned();
    };
    let lookup = |name: &str| values.iter().find(|(n, _)| *n == name).map(|(_, v)| *v);
    let mut edits = collect(tree.root_node(), command, &lookup);
    edits.sort_by_key(|(range, _)| range.start);
    let mut out = String::with_capacity(command.len() + 64);
    let mut pos = 0;
    for (range, text) in edits {
        if range.start < pos {
            continue;
        }
        out.push_str(&command[pos..range.start]);
        out.push_str(&text);
        pos = range.end;
    }
    out.push_str(&command[pos..]);
    out
}

/// Where an expansion sits.
#[derive(Clone, Copy, PartialEq)]
enum Place {
    Unquoted,
    DoubleQuoted,
    HereDocument,
}

type Edit = (Range<usize>, String);

/// The edits under `root`: one per expansion of a known variable, or one per double-quoted
/// word that becomes plain text. An explicit stack: trees can be deep.
fn collect<'v>(
    root: Node<'_>,
    source: &str,
    lookup: &impl Fn(&str) -> Option<&'v str>,
) -> Vec<Edit> {
    let mut edits = Vec::new();
    let mut stack = vec![(root, Place::Unquoted, false)];
    while let Some((node, place, in_name)) = stack.pop() {
        if node.kind() == "string"
            && let Some(plain) = plain_string(node, source, lookup)
        {
            edits.push((node.byte_range(), plain));
            continue;
        }
        if let Some(value) = known_expansion(node, source, lookup) {
            if let Some(text) = replacement(value, place, in_name) {
                edits.push((node.byte_range(), text));
            }
            continue;
        }
        let place = match node.kind() {
            "string" => Place::DoubleQuoted,
            "heredoc_body" => Place::HereDocument,
            "command_substitution" | "process_substitution" | "program" => Place::Unquoted,
            _ => place,
        };
        let in_name = match node.kind() {
            "command_name" => true,
            "command_substitution" | "process_substitution" => false,
            _ => in_name,
        };
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
        stack.extend(children.into_iter().rev().map(|c| (c, place, in_name)));
    }
    edits
}

/// The value of the variable `node` expands, when it is `$NAME` or `${NAME}` (exactly) of a
/// variable with a value.
fn known_expansion<'v>(
    node: Node<'_>,
    source: &str,
    lookup: &impl Fn(&str) -> Option<&'v str>,
) -> Option<&'v str> {
    let text = &source[node.byte_range()];
    let name = match node.kind() {
        "simple_expansion" => text.strip_prefix('$')?,
        "expansion" => text.strip_prefix("${")?.strip_suffix('}')?,
        _ => return None,
    };
    lookup(name)
}

/// What replaces an expansion of a variable whose value is `value`; `None` keeps the reference.
fn replacement(value: &str, place: Place, in_name: bool) -> Option<String> {
    if is_plain(value) {
        return Some(value.to_owned());
    }
    if in_name {
        return None;
    }
    match place {
        Place::HereDocument => None,
        Place::Unquoted => Some(format!("'{}'", value.replace('\'', r"'\''"))),
        Place::DoubleQuoted => {
            let mut escaped = String::with_capacity(value.len() + 8);
            for c in value.chars() {
                if matches!(c, '\\' | '"' | '$' | '`') {
                    escaped.push('\\');
                }
                escaped.push(c);
            }
            Some(escaped)
        }
    }
}

/// The unquoted text of a double-quoted word that holds only literal text and expansions of
/// known variables, when the result is plain (one word with no special character); `None`
/// when the word mentions no known variable or cannot lose its quotes.
fn plain_string<'v>(
    node: Node<'_>,
    source: &str,
    lookup: &impl Fn(&str) -> Option<&'v str>,
) -> Option<String> {
    let mut text = String::new();
    let mut substituted = false;
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        match child.kind() {
            "\"" => {}
            "string_content" => text.push_str(&source[child.byte_range()]),
            _ => {
                let value = known_expansion(child, source, lookup)?;
                text.push_str(value);
                substituted = true;
            }
        }
    }
    (substituted && is_plain(&text)).then_some(text)
}

/// One shell word that needs no quoting.
fn is_plain(text: &str) -> bool {
    !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+@%,:".contains(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROOT: [(&str, &str); 2] = [
        ("CLAUDE_PLUGIN_ROOT", "/srv/plugin"),
        ("CLAUDE_PROJECT_DIR", "/srv/my project"),
    ];

    fn sub(line: &str) -> String {
        substitute_variables(line, &ROOT)
    }

    #[test]
    fn plain_values_replace_the_reference_and_quotes_that_become_useless_go() {
        assert_eq!(
            sub("${CLAUDE_PLUGIN_ROOT}/hooks/x.sh"),
            "/srv/plugin/hooks/x.sh"
        );
        assert_eq!(sub("$CLAUDE_PLUGIN_ROOT/x.sh a b"), "/srv/plugin/x.sh a b");
        assert_eq!(sub(r#""$CLAUDE_PLUGIN_ROOT"/x.sh"#), "/srv/plugin/x.sh");
        assert_eq!(
            sub(r#"node "${CLAUDE_PLUGIN_ROOT}/a.js" && echo "$CLAUDE_PLUGIN_ROOT is $HOME""#),
            r#"node /srv/plugin/a.js && echo "/srv/plugin is $HOME""#
        );
    }

    #[test]
    fn other_values_are_quoted_or_stay_references_where_quoting_would_be_refused() {
        assert_eq!(
            sub("bash $CLAUDE_PROJECT_DIR/x.sh"),
            "bash '/srv/my project'/x.sh"
        );
        assert_eq!(
            sub(r#"bash "$CLAUDE_PROJECT_DIR/x.sh""#),
            r#"bash "/srv/my project/x.sh""#
        );
        assert_eq!(
            sub(r#""$CLAUDE_PROJECT_DIR"/x.sh"#),
            r#""$CLAUDE_PROJECT_DIR"/x.sh"#
        );
        assert_eq!(sub("$CLAUDE_PROJECT_DIR/x.sh"), "$CLAUDE_PROJECT_DIR/x.sh");
        let tricky = [("V", "a'b\"c$d`e\\f")];
        assert_eq!(
            substitute_variables("echo $V", &tricky),
            r#"echo 'a'\''b"c$d`e\f'"#
        );
        assert_eq!(
            substitute_variables(r#"echo "$V""#, &tricky),
            r#"echo "a'b\"c\$d\`e\\f""#
        );
    }

    #[test]
    fn literal_text_operators_and_other_names_are_left_alone() {
        for line in [
            "echo '$CLAUDE_PLUGIN_ROOT'",
            "echo $'$CLAUDE_PLUGIN_ROOT'",
            "echo \\$CLAUDE_PLUGIN_ROOT",
            "cat <<'EOF'\n$CLAUDE_PLUGIN_ROOT\nEOF",
            "echo ${CLAUDE_PLUGIN_ROOT:-x}",
            "echo $CLAUDE_PLUGIN_ROOTS",
            "echo $OTHER",
        ] {
            assert_eq!(sub(line), line);
        }
    }

    #[test]
    fn command_substitutions_and_here_documents_are_reached() {
        assert_eq!(
            sub(r#"x="$(cat "$CLAUDE_PLUGIN_ROOT/v")""#),
            r#"x="$(cat /srv/plugin/v)""#
        );
        assert_eq!(
            sub("cat <<EOF\n$CLAUDE_PLUGIN_ROOT\nEOF"),
            "cat <<EOF\n/srv/plugin\nEOF"
        );
    }

    proptest::proptest! {
        /// Any line is read without panicking; a line that never names a known variable comes
        /// back unchanged.
        #[test]
        fn any_line_is_safe_and_unrelated_lines_are_untouched(line in ".{0,200}") {
            let out = sub(&line);
            if !line.contains("CLAUDE_") {
                proptest::prop_assert_eq!(out, line);
            }
        }
    }
}
