//! The programs a command line runs ([`Analysis::programs`](crate::Analysis::programs)): the
//! command names bash looks up (not its builtins and keywords, not functions the text
//! defines) and the script files shells, `source` and interpreters are given.

use std::collections::HashSet;

use crate::limits::MAX_PROGRAMS;
use crate::model::{Program, ProgramKind};
use crate::paths;
use crate::walk::{Analyzer, Cx};
use crate::word::Word;

/// Bash builtins and reserved words: names bash never looks up as files.
const BUILTINS: &[&str] = &[
    ".",
    ":",
    "[",
    "[[",
    "]]",
    "{",
    "}",
    "!",
    "alias",
    "bg",
    "bind",
    "break",
    "builtin",
    "caller",
    "case",
    "cd",
    "command",
    "compgen",
    "complete",
    "compopt",
    "continue",
    "coproc",
    "declare",
    "dirs",
    "disown",
    "do",
    "done",
    "echo",
    "elif",
    "else",
    "enable",
    "esac",
    "eval",
    "exec",
    "exit",
    "export",
    "false",
    "fc",
    "fg",
    "fi",
    "for",
    "function",
    "getopts",
    "hash",
    "help",
    "history",
    "if",
    "in",
    "jobs",
    "kill",
    "let",
    "local",
    "logout",
    "mapfile",
    "popd",
    "printf",
    "pushd",
    "pwd",
    "read",
    "readarray",
    "readonly",
    "return",
    "select",
    "set",
    "shift",
    "shopt",
    "source",
    "suspend",
    "test",
    "then",
    "time",
    "times",
    "trap",
    "true",
    "type",
    "typeset",
    "ulimit",
    "umask",
    "unalias",
    "unset",
    "until",
    "wait",
    "while",
];

/// Whether bash runs `name` without looking up a file (a builtin or a reserved word).
pub(crate) fn is_builtin(name: &str) -> bool {
    BUILTINS.contains(&name)
}

/// What [`Analyzer`] gathers about programs while it walks.
#[derive(Debug, Default)]
pub(crate) struct Programs {
    /// What was found, in walk order.
    pub found: Vec<Program>,
    /// Names of every function the text defines (nested ones too).
    pub functions: HashSet<String>,
    /// A `cd`, `pushd` or `popd` was seen.
    pub changed_dir: bool,
}

impl Programs {
    /// The programs of the analysis: functions the text defines are not programs, and each
    /// program and place is listed once.
    pub fn finish(self) -> Vec<Program> {
        let functions = self.functions;
        let mut out: Vec<Program> = Vec::with_capacity(self.found.len());
        for program in self.found {
            let defined = program.kind == ProgramKind::Command && functions.contains(&program.name);
            if !defined && !out.contains(&program) {
                out.push(program);
            }
        }
        out
    }
}

impl Analyzer {
    /// Notes the command `name` (the static value of `word`, written as a plain word):
    /// a program unless it is a builtin or a reserved word.
    pub(crate) fn command_program(&mut self, cx: Cx<'_, '_>, word: &Word<'_>, name: &str) {
        if matches!(name, "cd" | "pushd" | "popd") {
            self.programs.changed_dir = true;
        }
        if !is_builtin(name) {
            self.note_program(cx, word, name, ProgramKind::Command);
        }
    }

    /// Notes the script file `word` that a shell, `source` or an interpreter runs, when its
    /// name is static.
    pub(crate) fn script_program(&mut self, cx: Cx<'_, '_>, word: &Word<'_>) {
        let Some(name) = word.lit() else { return };
        let device = ["/dev/", "/proc/"].iter().any(|d| name.starts_with(d));
        let substituted = word
            .node
            .is_some_and(|n| n.kind() == "process_substitution");
        if !(name.is_empty() || device || substituted) {
            self.note_program(cx, word, name, ProgramKind::Script);
        }
    }

    fn note_program(&mut self, cx: Cx<'_, '_>, word: &Word<'_>, name: &str, kind: ProgramKind) {
        if self.programs.found.len() >= MAX_PROGRAMS || self.made_here(name) {
            return;
        }
        let replaceable = cx.src.own_text && word.node.is_some();
        self.programs.found.push(Program {
            kind,
            name: name.to_owned(),
            span: replaceable.then(|| word.span.clone()),
            after_cd: self.programs.changed_dir,
        });
    }

    /// Whether the text writes the file `name` before running it (`echo … > x.sh; sh x.sh`):
    /// it need not exist before the line runs.
    fn made_here(&self, name: &str) -> bool {
        let path = paths::normalize(&self.resolve(name));
        self.writes.contains(&path) || self.tracked.scripts.contains_key(&path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_are_not_programs_and_tools_are() {
        for name in ["cd", "echo", "[", "exit", "source", "printf", "true"] {
            assert!(is_builtin(name), "{name}");
        }
        for name in ["jq", "env", "timeout", "bash", "python3", "./x.sh"] {
            assert!(!is_builtin(name), "{name}");
        }
    }
}
