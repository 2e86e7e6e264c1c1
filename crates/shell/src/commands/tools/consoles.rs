//! Interactive consoles whose commands run shell commands: `gdb -ex 'shell …'|'!…'|'pipe …'|
//! python`, `gdb -x FILE`, `gdb --args PROG`, `lldb -o 'platform shell …'`, `sqlite3
//! .shell|.system|.once '|…'|.load`, `load_extension()`, `edit()`, `writefile()`, `dc !`,
//! `psql \!`, `mysql \!|system`; their commands from a literal standard input are checked the
//! same way, other input is code from elsewhere.

use std::ops::Range;

use super::opts::Val;
use super::text::{self, lines, skip_blanks};
use super::{expect, option_exec, run_option};
use crate::commands::producers::{Reader, stdin_code};
use crate::source::Mapped;
use crate::walk::{Analyzer, Call, Cx};
use crate::word::Word;

pub(super) fn check(a: &mut Analyzer, cx: Cx<'_, '_>, base: &str, w: &[Word<'_>], call: &Call<'_>) {
    let lang = match base {
        "gdb" | "gdb-multiarch" | "cgdb" | "gdbtui" => Console::Gdb,
        "lldb" => Console::Lldb,
        "sqlite3" | "sqlite" => Console::Sqlite,
        "dc" => Console::Dc,
        "psql" => Console::Psql,
        "mysql" | "mariadb" => Console::Mysql,
        _ => return,
    };
    let read = read_args(lang, w);
    for v in &read.commands {
        match text::of_val(cx, *v) {
            Some(m) => lines_of(a, cx, call, lang, &m),
            None => option_exec(
                a,
                call,
                &format!("`{base}` with a command built at run time"),
                v.text(),
            ),
        }
    }
    for (why, script) in &read.scripts {
        option_exec(a, call, why, script);
    }
    for v in &read.pagers {
        run_option(a, cx, call, *v, expect::PAGER, &format!("`{base} --pager`"));
    }
    if let Some(program) = read.program {
        let rest = &w[program..];
        super::super::wrapped(a, cx, rest, &super::super::at(call, &rest[0]));
    }
    if read.stdin {
        match text::static_input(cx, call) {
            Some(m) => lines_of(a, cx, call, lang, &m),
            None => stdin_code(a, cx, call, Reader::Interpreter, base),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Console {
    Gdb,
    Lldb,
    Sqlite,
    Dc,
    Psql,
    Mysql,
}

/// What a console's arguments hold.
#[derive(Default)]
struct Read<'w, 't> {
    /// Console commands given as arguments.
    commands: Vec<Val<'w, 't>>,
    /// Script files read as commands: why, and the file.
    scripts: Vec<(String, String)>,
    /// Pager commands.
    pagers: Vec<Val<'w, 't>>,
    /// Index of the program `gdb --args` runs.
    program: Option<usize>,
    /// Reads commands from standard input.
    stdin: bool,
}

fn read_args<'w, 't>(lang: Console, w: &'w [Word<'t>]) -> Read<'w, 't> {
    let mut read = Read::default();
    let mut operands = 0;
    let mut batch = false;
    let mut i = 1;
    while let Some(word) = w.get(i) {
        i += 1;
        let t = word.text.as_str();
        if !t.starts_with('-') || t == "-" {
            operands += 1;
            if lang == Console::Sqlite && operands > 1 {
                read.commands.push(Val::of(word));
            }
            continue;
        }
        let dashes = if t.starts_with("--") { 2 } else { 1 };
        let (name, glued) = match t[dashes..].split_once('=') {
            Some((n, _)) => (
                n,
                Some(Val {
                    word,
                    at: dashes + n.len() + 1,
                }),
            ),
            None => (&t[dashes..], None),
        };
        let (kind, takes) = option(lang, name, dashes);
        // Short options with a glued value (`-cCMD`, `-eSQL`).
        let (kind, glued) = match (kind, glued) {
            (Opt::Other, None) if dashes == 1 && t.len() > 2 && t.is_char_boundary(2) => {
                match option(lang, &t[1..2], 1) {
                    (k @ (Opt::Command | Opt::Script | Opt::Pager), true) => {
                        (k, Some(Val { word, at: 2 }))
                    }
                    _ => (kind, None),
                }
            }
            _ => (kind, glued),
        };
        let value = glued.or_else(|| {
            let next = takes.then(|| w.get(i)).flatten()?;
            i += 1;
            Some(Val::of(next))
        });
        match (kind, value) {
            (Opt::Command, Some(v)) => read.commands.push(v),
            (Opt::Script, Some(v)) => read.scripts.push((
                format!("`{t}` reads console commands from a file"),
                v.text().to_owned(),
            )),
            (Opt::Pager, Some(v)) => read.pagers.push(v),
            (Opt::Batch, _) => batch = true,
            (Opt::Args, _) => {
                read.program = (i < w.len()).then_some(i);
                break;
            }
            (Opt::Skip2, _) => i += 1,
            _ => {}
        }
    }
    read.stdin = match lang {
        Console::Gdb => !batch,
        Console::Sqlite => operands <= 1,
        Console::Dc => operands == 0 && read.commands.is_empty() && read.scripts.is_empty(),
        Console::Psql | Console::Mysql => read.commands.is_empty() && read.scripts.is_empty(),
        Console::Lldb => false,
    };
    read
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Opt {
    Command,
    Script,
    Pager,
    Batch,
    Args,
    /// Takes two values.
    Skip2,
    Other,
}

/// What option `name` (written with `dashes` dashes) is, and whether it takes a value.
fn option(lang: Console, name: &str, dashes: usize) -> (Opt, bool) {
    use Console::*;
    let kind = match (lang, name) {
        (Gdb, "ex" | "eval-command" | "iex" | "init-eval-command") => Opt::Command,
        (Gdb, "x" | "command" | "ix" | "init-command") => Opt::Script,
        (Gdb, "batch") => Opt::Batch,
        (Gdb, "args") => Opt::Args,
        (Lldb, "o" | "one-line" | "O" | "one-line-before-file" | "k" | "one-line-on-crash") => {
            Opt::Command
        }
        (Lldb, "s" | "source" | "S" | "source-before-file") => Opt::Script,
        (Sqlite, "cmd") => Opt::Command,
        (Sqlite, "lookaside" | "pagecache") => Opt::Skip2,
        (Dc, "e" | "expression") => Opt::Command,
        (Dc, "f" | "file") => Opt::Script,
        (Psql, "c" | "command") => Opt::Command,
        (Psql, "f" | "file") => Opt::Script,
        (Mysql, "e" | "execute") => Opt::Command,
        (Mysql, "pager") if dashes == 2 => Opt::Pager,
        _ => Opt::Other,
    };
    let takes = match (lang, kind) {
        (_, Opt::Command | Opt::Script | Opt::Pager | Opt::Skip2) => true,
        (Gdb, _) => matches!(
            name,
            "p" | "pid"
                | "cd"
                | "data-directory"
                | "core"
                | "c"
                | "exec"
                | "e"
                | "se"
                | "symbols"
                | "s"
                | "tty"
                | "directory"
                | "d"
        ),
        (Sqlite, _) => matches!(
            name,
            "separator"
                | "newline"
                | "nullvalue"
                | "escape"
                | "vfs"
                | "mmap"
                | "heap"
                | "maxsize"
                | "init"
                | "key"
                | "A"
                | "archive"
        ),
        (Psql, _) => matches!(
            name,
            "d" | "dbname"
                | "h"
                | "host"
                | "p"
                | "port"
                | "U"
                | "username"
                | "v"
                | "set"
                | "variable"
                | "o"
                | "output"
                | "L"
                | "log-file"
                | "F"
                | "field-separator"
                | "R"
                | "record-separator"
                | "P"
                | "pset"
                | "T"
                | "table-attr"
        ),
        (Mysql, _) => dashes == 1 && matches!(name, "u" | "h" | "P" | "D" | "S"),
        _ => false,
    };
    (kind, takes)
}

/// Checks the console commands in `m`, line by line.
fn lines_of(a: &mut Analyzer, cx: Cx<'_, '_>, call: &Call<'_>, lang: Console, m: &Mapped) {
    if !a.budget.charge(m.text.len(), text::span(m, &call.span)) {
        return;
    }
    for line in lines(&m.text) {
        let at = skip_blanks(&m.text, line.start);
        let r = at.max(line.start)..line.end;
        match lang {
            Console::Gdb | Console::Lldb => debugger(a, cx, call, m, r),
            Console::Sqlite => sqlite(a, cx, call, m, r),
            Console::Dc => dc(a, cx, call, m, r),
            Console::Psql | Console::Mysql => sql_client(a, cx, call, m, r),
        }
    }
}

fn debugger(a: &mut Analyzer, cx: Cx<'_, '_>, call: &Call<'_>, m: &Mapped, r: Range<usize>) {
    let line = &m.text[r.clone()];
    let word = line.split([' ', '\t']).next().unwrap_or_default();
    let shell_at = if let Some(cmd) = line.strip_prefix('!') {
        Some(line.len() - cmd.len())
    } else if matches!(word, "shell" | "she") {
        Some(word.len())
    } else if line.starts_with("platform shell") {
        Some("platform shell".len())
    } else if matches!(word, "pipe" | "|") {
        // `pipe [COMMAND] | SHELL_COMMAND`
        line[word.len()..].find('|').map(|k| word.len() + k + 1)
    } else {
        None
    };
    if let Some(k) = shell_at {
        text::shell(
            a,
            cx,
            call,
            m,
            r.start + k..r.end,
            "a debugger's shell command",
        );
        return;
    }
    let lower = line.to_ascii_lowercase();
    let code = matches!(
        word,
        "python"
            | "py"
            | "python-interactive"
            | "pi"
            | "guile"
            | "gu"
            | "source"
            | "script"
            | "compile"
    ) || ["system(", "popen(", "execve(", "execl(", "dlopen("]
        .iter()
        .any(|c| lower.contains(c));
    if code {
        option_exec(a, call, "a debugger command that runs code", line);
    }
}

fn sqlite(a: &mut Analyzer, cx: Cx<'_, '_>, call: &Call<'_>, m: &Mapped, r: Range<usize>) {
    let line = &m.text[r.clone()];
    let Some(command) = line.strip_prefix('.') else {
        return sql_functions(a, call, line);
    };
    let name = command.split([' ', '\t']).next().unwrap_or_default();
    let arg_at = skip_blanks(line, 1 + name.len());
    let arg = line[arg_at..].trim_start_matches(['\'', '"']);
    let arg_at = line.len() - arg.len();
    let prefix_of = |full: &str| name.len() >= 2 && full.starts_with(name);
    if prefix_of("shell") || prefix_of("system") {
        text::shell(
            a,
            cx,
            call,
            m,
            r.start + arg_at..r.end,
            "sqlite3's `.shell`",
        );
    } else if ["once", "output", "import", "read", "excel", "o"].contains(&name)
        && arg.starts_with('|')
    {
        text::shell(
            a,
            cx,
            call,
            m,
            r.start + arg_at + 1..r.end,
            "a sqlite3 pipe",
        );
    } else if name == "load" {
        option_exec(a, call, "sqlite3's `.load` (a shared library)", arg);
    } else if ["once", "output", "save", "backup", "clone", "o"].contains(&name) {
        let file = arg.split_whitespace().last().unwrap_or_default();
        let file = file.trim_end_matches(['\'', '"']);
        if !file.is_empty() && !file.starts_with('-') {
            a.written(call.span.clone(), file, &format!("sqlite3's `.{name}`"));
        }
    }
}

/// SQL functions of the sqlite3 shell that load code, run an editor or write files.
fn sql_functions(a: &mut Analyzer, call: &Call<'_>, line: &str) {
    let lower = line.to_ascii_lowercase();
    if lower.contains("load_extension(") {
        option_exec(a, call, "SQL `load_extension()` (a shared library)", line);
    }
    if lower.contains("edit(") {
        option_exec(
            a,
            call,
            "the sqlite3 shell's `edit()` (runs an editor command)",
            line,
        );
    }
    if let Some(k) = lower.find("writefile(") {
        let rest = line[k + "writefile(".len()..].trim_start();
        if let Some(quoted) = rest.strip_prefix('\'') {
            let file = quoted.split('\'').next().unwrap_or_default();
            a.written(call.span.clone(), file, "SQL `writefile()`");
        }
    }
}

/// `dc`'s `!` runs the rest of the line (`!<`, `!>`, `!=` are comparisons).
fn dc(a: &mut Analyzer, cx: Cx<'_, '_>, call: &Call<'_>, m: &Mapped, r: Range<usize>) {
    let line = &m.text[r.clone()];
    let bytes = line.as_bytes();
    let bang = (0..bytes.len())
        .find(|&k| bytes[k] == b'!' && !matches!(bytes.get(k + 1), Some(b'<' | b'>' | b'=')));
    if let Some(k) = bang {
        text::shell(a, cx, call, m, r.start + k + 1..r.end, "dc's `!`");
    }
}

/// `psql`/`mysql`: `\! CMD`, `system CMD`, `\o |CMD`, `\g |CMD`, `COPY … PROGRAM`.
fn sql_client(a: &mut Analyzer, cx: Cx<'_, '_>, call: &Call<'_>, m: &Mapped, r: Range<usize>) {
    let line = &m.text[r.clone()];
    let lower = line.to_ascii_lowercase();
    let shell_at = if let Some(k) = line.find("\\!") {
        Some(k + 2)
    } else if lower.starts_with("system ") {
        Some("system ".len())
    } else if line.starts_with("\\o") || line.starts_with("\\g") {
        line.find('|').map(|k| k + 1)
    } else {
        None
    };
    if let Some(k) = shell_at {
        text::shell(
            a,
            cx,
            call,
            m,
            r.start + k..r.end,
            "a SQL client's shell command",
        );
    } else if lower.contains(" program ") || lower.contains(" program'") {
        option_exec(a, call, "`COPY … PROGRAM` runs a command", line);
    }
}
