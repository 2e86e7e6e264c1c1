//! Command names that are a fixed path under a directory the environment names:
//! `"$CLAUDE_PROJECT_DIR"/.claude/hooks/check.sh`, `${CLAUDE_PLUGIN_ROOT}/hooks/stop.sh`,
//! `$HOME/bin/tool`. Hook runtimes hand hooks their project and plugin directories this way,
//! and most hook commands run a script under one of them.
//!
//! Such a name is not obfuscated: the program is the file named by the literal tail, in a
//! directory the text did not choose. It is accepted only when the text cannot have chosen
//! the directory either: the variable is not one the shell itself sets (`PWD` after `cd`,
//! `REPLY` after `read`, `_`), its name is written nowhere in the text but in expansions (so
//! no `D=…`, `read D`, `for D in`, `n=D; declare "$n=…"`, `${D:=…}`), the text runs no code
//! that could assign it unseen (`eval`, `source`, `.`, builtins that assign a name given at
//! run time), and the text made no program, script or download with the tail's file name
//! (`cp /bin/sh /tmp/x; $TMPDIR/x`). The command is then checked as the word's value (the
//! variable read as the other rules read it), so `$D/rm -rf /` is still `rm -rf /`.

use std::collections::HashSet;

use crate::walk::{Analyzer, Cx};
use crate::word::Word;

/// Variables the shell sets or changes while the text runs (so the text steers them without
/// writing an assignment), and special parameters.
const SHELL_SET: &[&str] = &[
    "_",
    "PWD",
    "OLDPWD",
    "DIRSTACK",
    "REPLY",
    "OPTARG",
    "OPTIND",
    "MAPFILE",
    "COPROC",
    "BASH_REMATCH",
    "BASH_COMMAND",
    "BASH_SOURCE",
    "BASH_ARGV",
    "BASH_ARGV0",
    "BASH_EXECUTION_STRING",
    "FUNCNAME",
    "READLINE_LINE",
    "PIPESTATUS",
];

/// Builtins that assign variables whose names may be given at run time, or run code that
/// may assign any variable: a text that uses one may set the directory unseen.
const ASSIGNERS: &[&str] = &[
    "eval",
    "source",
    "declare",
    "typeset",
    "local",
    "export",
    "readonly",
    "read",
    "mapfile",
    "readarray",
    "printf",
    "getopts",
    "let",
    "wait",
    "unset",
];

/// The value to check the command name `word` as, when it is a fixed path under a
/// directory the environment names (see the module docs); `None` otherwise.
pub(super) fn program(a: &mut Analyzer, cx: Cx<'_, '_>, word: &Word<'_>) -> Option<String> {
    let node = word.node?;
    if !cx.src.is_top() || word.any || word.escaped {
        return None;
    }
    let (name, tail) = split(&cx.src.text[node.byte_range()])?;
    if SHELL_SET.contains(&name) {
        return None;
    }
    let written = written_names(a, cx)?;
    let assigns = ASSIGNERS.iter().any(|b| written.contains(*b));
    if written.contains(name) || assigns || written.contains(".") || made_here(a, cx, tail) {
        return None;
    }
    Some(word.text.clone())
}

/// `$NAME/tail`, `${NAME}/tail`, `"$NAME"/tail`, `"${NAME}/tail"`, …: the variable's name
/// and the literal tail (from its `/`), when the word is exactly that.
fn split(raw: &str) -> Option<(&str, &str)> {
    let (quoted, rest) = match raw.strip_prefix('"') {
        Some(rest) => (true, rest),
        None => (false, raw),
    };
    let rest = rest.strip_prefix('$')?;
    let (name, mut tail) = match rest.strip_prefix('{') {
        Some(braced) => braced.split_once('}')?,
        None => {
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            rest.split_at(end)
        }
    };
    if quoted {
        // The closing quote ends the word or directly follows the variable.
        tail = match tail.strip_prefix('"') {
            Some(after) => after,
            None => tail.strip_suffix('"')?,
        };
    }
    let named = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    let literal = tail.len() > 1
        && tail.starts_with('/')
        && tail
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+@%,:".contains(c));
    (named && literal && !tail.ends_with('/')).then_some((name, tail))
}

/// Every name-like run of the text (letters, digits, `_`) that is not the name of an
/// expansion (`$NAME`, `${NAME}`, `${NAME:-…}`), and `.` if a `.` word sources a file; once
/// per analysis. A name assigned by an expansion (`${NAME:=…}`, `${NAME=…}`) counts as
/// written. `None` when the work budget ran out.
fn written_names<'a>(a: &'a mut Analyzer, cx: Cx<'_, '_>) -> Option<&'a HashSet<String>> {
    if a.tracked.written_names.is_none() {
        let text = &cx.src.text;
        if !a.budget.charge(text.len(), 0..text.len()) {
            return None;
        }
        a.tracked.written_names = Some(scan(text));
    }
    a.tracked.written_names.as_ref()
}

fn scan(text: &str) -> HashSet<String> {
    let bytes = text.as_bytes();
    let is_name_byte = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut names = HashSet::new();
    let mut i = 0;
    while i < bytes.len() {
        if !is_name_byte(bytes[i]) {
            if dot_word(bytes, i) {
                names.insert(".".to_owned());
            }
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && is_name_byte(bytes[i]) {
            i += 1;
        }
        let before = &text[..start];
        let expanded = before.ends_with('$') || before.ends_with("${");
        let rest = &text[i..];
        let assigned_by_expansion =
            before.ends_with("${") && (rest.starts_with(":=") || rest.starts_with('='));
        if !expanded || assigned_by_expansion {
            names.insert(text[start..i].to_owned());
        }
    }
    names
}

/// A `.` word at byte `i` (possibly the `.` command, which sources a file that may assign
/// anything; also `find .`, counted the same to stay simple).
fn dot_word(bytes: &[u8], i: usize) -> bool {
    let starts = i == 0 || b" \t\n;&|({".contains(&bytes[i - 1]);
    let ends = bytes.get(i + 1).is_none_or(|n| b" \t\n;&|)".contains(n));
    bytes[i] == b'.' && starts && ends
}

/// The text put a copy of a program, a script or a download at a path with the same file
/// name as `tail`: running `$DIR/NAME` may run it.
fn made_here(a: &mut Analyzer, cx: Cx<'_, '_>, tail: &str) -> bool {
    let file = tail.rsplit('/').next().unwrap_or(tail);
    let named = |path: &String| path.rsplit('/').next() == Some(file);
    let downloads = cx.src.downloads.borrow();
    let cost = a.tracked.copies.len() + a.tracked.scripts.len() + downloads.len();
    !a.budget.charge(cost, 0..0)
        || a.tracked.copies.keys().any(named)
        || a.tracked.scripts.keys().any(named)
        || downloads.iter().any(named)
}

#[cfg(test)]
mod tests {
    use super::{scan, split};

    #[test]
    fn splits_the_spellings_of_a_variable_directory() {
        let hook = Some(("D", "/hooks/x.sh"));
        for raw in [
            "$D/hooks/x.sh",
            "${D}/hooks/x.sh",
            "\"$D\"/hooks/x.sh",
            "\"${D}\"/hooks/x.sh",
            "\"$D/hooks/x.sh\"",
            "\"${D}/hooks/x.sh\"",
        ] {
            assert_eq!(split(raw), hook, "{raw}");
        }
    }

    #[test]
    fn refuses_what_is_not_a_fixed_tail() {
        for raw in [
            "${X}m",
            "$D",
            "$D/",
            "$D/r\\m",
            "$D/*",
            "$D/$E",
            "${D:-/tmp}/x",
            "$1/x",
            "$D/x\"",
            "\"$D/x",
            "$D/a b",
        ] {
            assert_eq!(split(raw), None, "{raw}");
        }
    }

    #[test]
    fn expansions_are_not_written_names_but_assignments_are() {
        let names = scan("D=/x; read E; echo \"$F\" ${G:-y} ${H:=z} n=I");
        for written in ["D", "read", "E", "echo", "H", "n", "I", "x", "y", "z"] {
            assert!(names.contains(written), "{written}");
        }
        for read in ["F", "G"] {
            assert!(!names.contains(read), "{read}");
        }
    }

    #[test]
    fn a_dot_command_sources_a_file() {
        assert!(scan(". ./env.sh; $D/x").contains("."));
        assert!(scan("set -a; . .env").contains("."));
        assert!(!scan("cat ./x a.b ~/.x").contains("."));
    }
}
