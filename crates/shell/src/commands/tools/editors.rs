//! Editors that run shell commands or write files from commands given on the command line
//! or on standard input: `vim|vi|nvim|ex -c|+|--cmd` (`:!cmd`, `:r !cmd`, `:w !cmd`,
//! `:shell`, `:py3`, `system()`, `:w ~/.bashrc`), `vim -S|-u|-s FILE`, ex mode and `ed`
//! reading commands from a heredoc (`!cmd`, `w FILE`), `emacs --eval|-l|--script|-f`.
//! The consoles (gdb, sqlite3, psql, …) are in [`super::consoles`].

use super::opts::Val;
use super::text::{self, lines, skip_blanks};
use super::{consoles, option_exec};
use crate::commands::producers::{Reader, stdin_code};
use crate::source::Mapped;
use crate::walk::{Analyzer, Call, Cx};
use crate::word::Word;

pub(super) fn check(a: &mut Analyzer, cx: Cx<'_, '_>, base: &str, w: &[Word<'_>], call: &Call<'_>) {
    match base {
        "vim" | "vi" | "nvim" | "view" | "vimdiff" | "gvim" | "evim" | "ex" | "vim.basic"
        | "vim.tiny" | "vim.nox" | "vim.gtk3" | "nex" | "nvi" | "elvis" => {
            vim(a, cx, base, w, call)
        }
        "ed" | "red" => ed(a, cx, base, w, call),
        "emacs" | "emacsclient" | "xemacs" | "emacs-nox" => emacs(a, w, call),
        _ => consoles::check(a, cx, base, w, call),
    }
}

/// Which command language a text is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Lang {
    /// vi's ex commands (also `|`-separated, with vim's script commands).
    Ex,
    /// ed's commands.
    Ed,
}

/// `vim [options] [files]`: `-c CMD`, `+CMD`, `--cmd CMD` are ex commands; `-S`, `-u`,
/// `-s` (outside ex mode) read commands from a file; `-e`/`-E`/`ex` read ex commands from
/// standard input.
fn vim(a: &mut Analyzer, cx: Cx<'_, '_>, base: &str, w: &[Word<'_>], call: &Call<'_>) {
    let args = &w[1..];
    let ex_mode = base == "ex"
        || base == "nex"
        || args
            .iter()
            .filter_map(Word::lit)
            .any(|t| t.starts_with('-') && !t.starts_with("--") && t[1..].contains(['e', 'E']));
    let mut commands: Vec<Val<'_, '_>> = Vec::new();
    let mut files: Vec<&Word<'_>> = Vec::new();
    let mut i = 0;
    let mut options = true;
    while let Some(word) = args.get(i) {
        i += 1;
        let t = word.text.as_str();
        if !options || !t.starts_with(['-', '+']) || t.len() < 2 {
            files.push(word);
            continue;
        }
        if t == "--" {
            options = false;
        } else if t == "--cmd" {
            commands.extend(args.get(i).map(Val::of));
            i += 1;
        } else if t.starts_with("--") {
            i += usize::from(matches!(t, "--startuptime" | "--remote" | "--servername"));
        } else if let Some(cmd) = t.strip_prefix('+') {
            let position = cmd.chars().all(|c| c.is_ascii_digit()) || cmd.starts_with(['/', '?']);
            if !position {
                commands.push(Val { word, at: 1 });
            }
        } else {
            i += vim_cluster(a, call, word, args.get(i), ex_mode, &mut commands);
        }
    }
    for v in commands {
        match text::of_val(cx, v) {
            Some(m) => commands_in(a, cx, call, Lang::Ex, &m, &files, false),
            None => option_exec(
                a,
                call,
                &format!("`{base} -c` with a command built at run time"),
                v.text(),
            ),
        }
    }
    if ex_mode {
        stdin_commands(a, cx, call, Lang::Ex, &files, base);
    }
}

/// One short cluster of vim: returns how many following words it took.
fn vim_cluster<'w, 't>(
    a: &mut Analyzer,
    call: &Call<'_>,
    word: &'w Word<'t>,
    next: Option<&'w Word<'t>>,
    ex_mode: bool,
    commands: &mut Vec<Val<'w, 't>>,
) -> usize {
    let t = word.text.as_str();
    for (k, c) in t[1..].char_indices() {
        let at = 1 + k + c.len_utf8();
        let glued = (at < t.len()).then_some(Val { word, at });
        let value = glued.or(next.map(Val::of));
        let took = usize::from(glued.is_none() && next.is_some());
        match c {
            'c' => {
                commands.extend(value);
                return took;
            }
            'S' | 'u' | 'U' | 's' => {
                if c == 's' && ex_mode {
                    continue;
                }
                let script = value.map(|v| v.text()).unwrap_or("Session.vim");
                let harmless = matches!(script, "NONE" | "NORC" | "DEFAULTS");
                if script.starts_with('-') {
                    return 0;
                }
                if !harmless {
                    option_exec(
                        a,
                        call,
                        &format!("`vim -{c}` reads commands from a file"),
                        script,
                    );
                }
                return took;
            }
            'T' | 'i' | 'q' | 't' | 'w' | 'W' | 'r' => return took,
            _ => {}
        }
    }
    0
}

/// `ed [-s] [-p PROMPT] [FILE]`: commands from standard input; a file operand starting with
/// `!` is a command whose output is read.
fn ed(a: &mut Analyzer, cx: Cx<'_, '_>, base: &str, w: &[Word<'_>], call: &Call<'_>) {
    let mut files = Vec::new();
    let mut i = 1;
    while let Some(word) = w.get(i) {
        i += 1;
        let t = word.text.as_str();
        if t == "-p" {
            i += 1;
        } else if t.starts_with('!') && base == "ed" {
            super::run_option(a, cx, call, Val { word, at: 1 }, &[], "`ed !COMMAND`");
        } else if !t.starts_with('-') || t == "-" {
            files.push(word);
        }
    }
    stdin_commands(a, cx, call, Lang::Ed, &files, base);
}

/// Commands read from standard input: a literal text is checked command by command, other
/// input is code from elsewhere (see [`stdin_code`]).
fn stdin_commands(
    a: &mut Analyzer,
    cx: Cx<'_, '_>,
    call: &Call<'_>,
    lang: Lang,
    files: &[&Word<'_>],
    who: &str,
) {
    match text::static_input(cx, call) {
        Some(m) => commands_in(a, cx, call, lang, &m, files, true),
        None => stdin_code(a, cx, call, Reader::Interpreter, who),
    }
}

/// Checks the ex or ed commands in `m`; `files` are the files being edited (what a bare `w`
/// writes). `script`: a text of lines where `a`/`i`/`c` start text input ended by `.`.
pub(super) fn commands_in(
    a: &mut Analyzer,
    cx: Cx<'_, '_>,
    call: &Call<'_>,
    lang: Lang,
    m: &Mapped,
    files: &[&Word<'_>],
    script: bool,
) {
    if !a.budget.charge(m.text.len(), text::span(m, &call.span)) {
        return;
    }
    let mut input = false;
    for line in lines(&m.text) {
        if input {
            input = m.text[line.clone()].trim_end() != ".";
            continue;
        }
        let mut start = line.start;
        // vim reads `|` as a command separator, except in `!` commands (the shell gets it).
        while start <= line.end {
            let end = if lang == Lang::Ex {
                bar(&m.text, start, line.end)
            } else {
                line.end
            };
            let step = command(a, cx, call, lang, m, start..end, files);
            input |= script && step == Step::Input;
            if step == Step::Rest {
                break;
            }
            start = end + 1;
        }
    }
}

/// The end of the ex command starting at `start`: the next `|`, unless the command takes the
/// rest of the line (`!cmd`, `r !cmd`, `:normal`, `:global`, `:execute`), whose `|` belong to
/// it. Reads the command's head once, so a line of many commands costs linear time.
fn bar(text: &str, start: usize, end: usize) -> usize {
    let s = &text[..end];
    let mut at = skip_blanks(s, start);
    while s[at..].starts_with(':') {
        at = skip_blanks(s, at + 1);
    }
    at = skip_address(s, at);
    let rest = &s[at..];
    let name_len = rest
        .find(|c: char| !c.is_ascii_alphabetic())
        .unwrap_or(rest.len());
    let name = &rest[..name_len];
    let whole_line = rest.starts_with('!')
        || bang_argument(name, &rest[name_len..]).is_some()
        || matches!(
            name,
            "g" | "global" | "v" | "vglobal" | "norm" | "normal" | "exe" | "execute"
        );
    if whole_line {
        return end;
    }
    let from = at + name_len;
    s[from..].find('|').map_or(end, |k| from + k)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    /// Go on with the next command.
    Next,
    /// The command took the rest of the line.
    Rest,
    /// Text input follows (`a`, `i`, `c`) until a line with a single `.`.
    Input,
}

/// Checks one ex or ed command, bytes `r` of `m`.
fn command(
    a: &mut Analyzer,
    cx: Cx<'_, '_>,
    call: &Call<'_>,
    lang: Lang,
    m: &Mapped,
    r: std::ops::Range<usize>,
    files: &[&Word<'_>],
) -> Step {
    let s = &m.text[..r.end];
    let mut at = skip_blanks(s, r.start);
    while s[at..].starts_with(':') {
        at = skip_blanks(s, at + 1);
    }
    at = skip_address(s, at);
    let rest = &s[at..];
    if let Some(cmd) = rest.strip_prefix('!') {
        let from = at + 1 + usize::from(cmd.starts_with('!'));
        text::shell(a, cx, call, m, from..r.end, "an editor's `!` command");
        return Step::Rest;
    }
    let name_len = rest
        .find(|c: char| !c.is_ascii_alphabetic())
        .unwrap_or(rest.len());
    let name = &rest[..name_len];
    let after = at + name_len;
    let args = &s[after..];
    if let Some(shell_at) = bang_argument(name, args) {
        text::shell(
            a,
            cx,
            call,
            m,
            after + shell_at..r.end,
            &format!("an editor's `{name} !` command"),
        );
        return Step::Rest;
    }
    if let Some(why) = runs_code(lang, name, &rest[name_len..]) {
        option_exec(a, call, why, rest);
        return Step::Next;
    }
    if is_write(lang, name) {
        written(a, call, m, after..r.end, files);
        return Step::Next;
    }
    let input = matches!(name, "a" | "i" | "c")
        || (lang == Lang::Ex && matches!(name, "append" | "insert" | "change"));
    if input && args.trim().is_empty() {
        return Step::Input;
    }
    Step::Next
}

/// `r !cmd`, `w !cmd`, `e !cmd`, `read !cmd`: where the shell command starts in `args`.
fn bang_argument(name: &str, args: &str) -> Option<usize> {
    let reads = matches!(
        name,
        "r" | "read" | "w" | "write" | "e" | "edit" | "E" | "W" | "new" | "vnew" | "sp" | "split"
    );
    // `w!` forces a write; `w !cmd` (with a blank) pipes to a command.
    let blank = args.starts_with([' ', '\t']) || !matches!(name, "w" | "write" | "W");
    let k = skip_blanks(args, 0);
    (reads && blank && args[k..].starts_with('!')).then_some(k + 1)
}

/// Ex commands that run code other than through `!`.
fn runs_code(lang: Lang, name: &str, args: &str) -> Option<&'static str> {
    if lang == Lang::Ed {
        return None;
    }
    let lower = args.to_ascii_lowercase();
    let calls = [
        "system(",
        "systemlist(",
        "libcall",
        "job_start(",
        "jobstart(",
        "termopen(",
        "term_start(",
        "execute(",
        "os.execute",
        "io.popen",
        "vim.fn.system",
        "vim.system",
    ];
    match name {
        "sh" | "shell" | "ter" | "term" | "terminal" => Some("an editor's `:shell` command"),
        "py" | "python" | "py3" | "python3" | "pyx" | "pythonx" | "pydo" | "py3do" | "pyf"
        | "pyfile" | "py3f" | "py3file" | "lua" | "luado" | "luafile" | "perl" | "perldo"
        | "ruby" | "rubydo" | "rubyfile" | "rub" | "tcl" | "tcldo" | "tclfile" | "mz"
        | "mzscheme" | "mzfile" => Some("an editor's script-language command"),
        "so" | "source" | "ru" | "runtime" => Some("an editor's `:source` of a script file"),
        "exe" | "execute" | "norm" | "normal" if args.contains('!') => {
            Some("an editor's `:execute`/`:normal` of a `!` command")
        }
        _ if calls.iter().any(|c| lower.contains(c)) => Some("an editor's call of `system()`"),
        _ => None,
    }
}

fn is_write(lang: Lang, name: &str) -> bool {
    match lang {
        Lang::Ed => matches!(name, "w" | "wq" | "W"),
        Lang::Ex => matches!(
            name,
            "w" | "write"
                | "wq"
                | "x"
                | "xit"
                | "exi"
                | "exit"
                | "wa"
                | "wall"
                | "wqa"
                | "wqall"
                | "xa"
                | "xall"
                | "up"
                | "update"
                | "sav"
                | "saveas"
                | "wn"
                | "wnext"
                | "wN"
                | "wp"
                | "W"
        ),
    }
}

/// A write command with arguments `r`: the named file, else every file being edited.
fn written(
    a: &mut Analyzer,
    call: &Call<'_>,
    m: &Mapped,
    r: std::ops::Range<usize>,
    files: &[&Word<'_>],
) {
    let arg = m.text[r]
        .trim_start_matches('!')
        .trim_start_matches(">>")
        .trim();
    if arg.is_empty() {
        for file in files {
            a.written(call.span.clone(), &file.text, "an editor's write command");
        }
    } else {
        a.written(call.span.clone(), arg, "an editor's write command");
    }
}

/// Skips an ex or ed address (`%`, `1,$`, `.`, `'a`, `/re/`, `?re?`, `+3`).
fn skip_address(s: &str, mut at: usize) -> usize {
    let bytes = s.as_bytes();
    while let Some(&b) = bytes.get(at) {
        match b {
            b'0'..=b'9' | b'.' | b'$' | b'%' | b',' | b';' | b'+' | b'-' | b' ' | b'\t' => at += 1,
            b'\'' => at += 2,
            b'/' | b'?' => {
                at += 1;
                while let Some(&c) = bytes.get(at) {
                    at += if c == b'\\' { 2 } else { 1 };
                    if c == b {
                        break;
                    }
                }
            }
            _ => break,
        }
    }
    let mut at = at.min(s.len());
    while !s.is_char_boundary(at) {
        at += 1;
    }
    at
}

/// `emacs --eval EXPR`, `-l|--load FILE`, `--script FILE`, `-f|--funcall FUNC`,
/// `emacsclient -e|--eval EXPR`: Lisp that can run anything.
fn emacs(a: &mut Analyzer, w: &[Word<'_>], call: &Call<'_>) {
    for (k, word) in w.iter().enumerate().skip(1) {
        let t = word.text.as_str();
        let name = t.trim_start_matches('-');
        let (name, glued) = match name.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (name, None),
        };
        if t == name {
            continue;
        }
        let value = || {
            glued
                .or_else(|| w.get(k + 1).map(|x| x.text.as_str()))
                .unwrap_or_default()
        };
        let why = match name {
            "eval" | "execute" => "`emacs --eval` runs Lisp",
            "e" if base_is_client(w) => "`emacsclient --eval` runs Lisp",
            "l" | "load" | "script" | "x" => "`emacs --load` runs a Lisp file",
            "f" | "funcall" => "`emacs --funcall` calls a Lisp function",
            _ => continue,
        };
        option_exec(a, call, why, value());
    }
}

fn base_is_client(w: &[Word<'_>]) -> bool {
    w.first()
        .map(|x| super::base_of(&x.text))
        .is_some_and(|b| b == "emacsclient")
}
