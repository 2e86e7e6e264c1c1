//! Interpreters given code inline (`python -c`, `node -e`, `perl -e`, …) or on standard input,
//! and awk programs that run commands.

use super::first_operand;
use super::producers::{Reader, stdin_code};
use crate::rules::RuleId;
use crate::walk::{Analyzer, Call, Cx};
use crate::word::Word;

/// Handles `base` if it is an interpreter or awk; returns whether it was.
pub(super) fn check(
    a: &mut Analyzer,
    cx: Cx<'_, '_>,
    base: &str,
    w: &[Word<'_>],
    call: &Call<'_>,
) -> bool {
    match base {
        "awk" | "gawk" | "mawk" | "nawk" => awk(a, w, call),
        b => match interpreter(b) {
            Some(family) => interpret(a, cx, b, family, w, call),
            None => return false,
        },
    }
    true
}

/// Interpreter families, for their inline-code options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Family {
    Python,
    Node,
    Bun,
    Deno,
    Perl,
    Ruby,
    Php,
    Lua,
    Osascript,
    R,
    Pwsh,
}

pub(super) fn interpreter(base: &str) -> Option<Family> {
    let versioned = |prefix: &str| {
        base.strip_prefix(prefix)
            .is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'))
    };
    Some(match base {
        _ if versioned("python") || versioned("pypy") => Family::Python,
        "node" | "nodejs" => Family::Node,
        "bun" => Family::Bun,
        "deno" => Family::Deno,
        _ if versioned("perl") => Family::Perl,
        _ if versioned("ruby") => Family::Ruby,
        _ if versioned("php") => Family::Php,
        _ if versioned("lua") || base == "luajit" => Family::Lua,
        "osascript" => Family::Osascript,
        "Rscript" | "R" => Family::R,
        "pwsh" | "powershell" | "powershell.exe" | "pwsh.exe" => Family::Pwsh,
        _ => return None,
    })
}

/// How an interpreter's arguments were read.
#[derive(Debug, Default)]
pub(super) struct Interp {
    /// Inline code was given (`-c`, `-e`, …): the option as written.
    pub(super) inline: Option<String>,
    /// Reads its program from standard input (no script, or `-`).
    pub(super) stdin: bool,
    /// Edits files in place (`perl -i`).
    pub(super) in_place: bool,
    /// Runs a module (`python -m`), not a script file.
    pub(super) module: bool,
    /// Index of the first operand.
    pub(super) operands: usize,
}

fn interpret(
    a: &mut Analyzer,
    cx: Cx<'_, '_>,
    base: &str,
    family: Family,
    w: &[Word<'_>],
    call: &Call<'_>,
) {
    let read = read_interpreter(family, w);
    if let Some(script) = script_operand(base, family, &read, w) {
        a.script_program(cx, script);
    }
    let notifies = family == Family::Osascript && super::applescript::only_notifies(w);
    if let Some(option) = read.inline.as_ref().filter(|_| !notifies) {
        a.report(
            RuleId::InlineCode,
            call.span.clone(),
            format!("`{base} {option}` runs inline code"),
        );
        downloaded_code(a, cx, base, w);
    } else if read.stdin {
        stdin_code(a, cx, call, Reader::Interpreter, base);
    }
    if read.in_place {
        for file in w.iter().skip(read.operands) {
            a.written_word(call.span.clone(), file, &format!("`{base} -i`"));
        }
    }
}

/// The script file the interpreter runs, when it runs one (not inline code, standard input
/// or a module) and its family takes the script as its first operand.
fn script_operand<'w, 't>(
    base: &str,
    family: Family,
    read: &Interp,
    w: &'w [Word<'t>],
) -> Option<&'w Word<'t>> {
    let takes_file = match family {
        Family::Bun | Family::Deno | Family::Pwsh => false,
        Family::R => base == "Rscript",
        _ => true,
    };
    let runs_file = read.inline.is_none() && !read.stdin && !read.module;
    w.get(read.operands).filter(|_| takes_file && runs_file)
}

/// Inline code whose text is a download or a decoder's output (`python3 -c "$(curl …)"`):
/// remote or hidden code for every profile, whatever the profile thinks of inline code.
fn downloaded_code(a: &mut Analyzer, cx: Cx<'_, '_>, base: &str, w: &[Word<'_>]) {
    for word in w.iter().skip(1).filter(|x| x.unknown) {
        let Some(node) = word.node else { continue };
        let (rule, what) = match super::producers::producer(cx, &[node]) {
            super::producers::Producer::Fetcher(f) => (RuleId::RemoteScriptExec, f),
            super::producers::Producer::Decoder(d) => (RuleId::DecodeToShell, d),
            super::producers::Producer::Other => continue,
        };
        a.report(
            rule,
            word.span.clone(),
            format!("`{base}` runs inline code made by `{what}`"),
        );
        return;
    }
}

pub(super) fn read_interpreter(family: Family, w: &[Word<'_>]) -> Interp {
    let mut read = Interp::default();
    let mut i = 1;
    while let Some(t) = w.get(i).and_then(Word::lit) {
        i += 1;
        if t == "-" {
            read.stdin = true;
            break;
        }
        let info = matches!(t, "--version" | "--help" | "-V" | "-h" | "-help")
            || (t == "-v" && family != Family::Python);
        if info {
            // Prints and exits: reads no program.
            read.operands = w.len();
            return read;
        }
        if t == "--" || !t.starts_with('-') || t.len() < 2 {
            if !t.starts_with('-') {
                i -= 1;
            }
            break;
        }
        let consumed = match family {
            Family::Python => python_option(t, &mut read),
            Family::Node | Family::Bun => node_option(t, &mut read),
            Family::Perl | Family::Ruby => perl_option(family, t, &mut read),
            Family::Php => letter_option(
                t,
                &["-r", "-R", "-B", "-E", "--run"],
                &["-c", "-d", "-z", "-t"],
                &mut read,
            ),
            Family::Lua => letter_option(t, &["-e"], &["-l"], &mut read),
            Family::Osascript => letter_option(t, &["-e"], &["-l", "-s"], &mut read),
            Family::R => letter_option(t, &["-e"], &[], &mut read),
            Family::Pwsh => pwsh_option(t, &mut read),
            Family::Deno => Step::Next,
        };
        match consumed {
            Step::Next => {}
            Step::Value => i += 1,
            Step::Stop => break,
        }
    }
    if family == Family::Deno && w.get(1).and_then(Word::lit) == Some("eval") {
        read.inline = Some("eval".to_owned());
    }
    read.operands = i;
    let no_script = i >= w.len()
        && !matches!(
            family,
            Family::Bun | Family::Deno | Family::R | Family::Pwsh
        );
    read.stdin |= no_script;
    read
}

enum Step {
    /// The option is done.
    Next,
    /// The option takes the next word as its value.
    Value,
    /// Options end here (the rest are the program's arguments).
    Stop,
}

fn python_option(t: &str, read: &mut Interp) -> Step {
    if t.starts_with("--") {
        return if t == "--check-hash-based-pycs" {
            Step::Value
        } else {
            Step::Next
        };
    }
    for (k, c) in t[1..].char_indices() {
        let last = k + 2 == t.len();
        match c {
            'c' => {
                read.inline = Some(t.to_owned());
                return Step::Stop;
            }
            'm' => {
                read.module = true;
                return Step::Stop;
            }
            'W' | 'X' => return if last { Step::Value } else { Step::Next },
            _ => {}
        }
    }
    Step::Next
}

fn node_option(t: &str, read: &mut Interp) -> Step {
    if matches!(t, "--eval" | "--print") || t.starts_with("--eval=") || t.starts_with("--print=") {
        read.inline = Some(t.to_owned());
        return Step::Stop;
    }
    if t.starts_with("--") {
        let takes = matches!(
            t,
            "--require"
                | "--import"
                | "--loader"
                | "--experimental-loader"
                | "--conditions"
                | "--input-type"
                | "--title"
                | "--env-file"
                | "--cwd"
                | "--preload"
                | "--config"
        );
        return if takes { Step::Value } else { Step::Next };
    }
    if t[1..].contains(['e', 'p']) {
        read.inline = Some(t.to_owned());
        return Step::Stop;
    }
    if matches!(t, "-r" | "-C") {
        Step::Value
    } else {
        Step::Next
    }
}

fn perl_option(family: Family, t: &str, read: &mut Interp) -> Step {
    if t.starts_with("--") {
        return Step::Next;
    }
    let (code, stop_letters) = match family {
        Family::Perl => (&['e', 'E'][..], "IMmxCdDV"),
        _ => (&['e'][..], "rICExKW0FT"),
    };
    let mut chars = t[1..].char_indices().peekable();
    while let Some((k, c)) = chars.next() {
        if code.contains(&c) {
            read.inline = Some(t.to_owned());
            return if k + 2 == t.len() {
                Step::Value
            } else {
                Step::Next
            };
        }
        if c == 'i' {
            read.in_place = true;
            return Step::Next;
        }
        if family == Family::Perl && (c == 'l' || c == '0') {
            while chars
                .peek()
                .is_some_and(|(_, d)| d.is_ascii_hexdigit() || *d == 'x')
            {
                chars.next();
            }
            continue;
        }
        if stop_letters.contains(c) {
            return if k + 2 == t.len()
                && matches!(c, 'I' | 'r' | 'C' | 'E' | 'x')
                && family == Family::Ruby
            {
                Step::Value
            } else {
                Step::Next
            };
        }
    }
    Step::Next
}

fn letter_option(t: &str, inline: &[&str], values: &[&str], read: &mut Interp) -> Step {
    if let Some(option) = inline
        .iter()
        .find(|o| t == **o || (o.len() == 2 && t.starts_with(**o)))
    {
        read.inline = Some((*option).to_owned());
        return Step::Stop;
    }
    if values.contains(&t) {
        Step::Value
    } else {
        Step::Next
    }
}

fn pwsh_option(t: &str, read: &mut Interp) -> Step {
    let lower = t.to_ascii_lowercase();
    let lower = lower.trim_start_matches('-');
    let is_prefix = |full: &str, min: usize| lower.len() >= min && full.starts_with(lower);
    if is_prefix("command", 1)
        || is_prefix("commandwithargs", 8)
        || is_prefix("encodedcommand", 1)
        || lower == "ec"
    {
        read.inline = Some(t.to_owned());
        return Step::Stop;
    }
    if is_prefix("file", 1) {
        return Step::Stop;
    }
    Step::Next
}

/// `awk PROGRAM`: a program that runs commands (`system()`, pipes to or from commands).
fn awk(a: &mut Analyzer, w: &[Word<'_>], call: &Call<'_>) {
    let Some(i) = first_operand(w, "Fvf", &["--field-separator", "--assign", "--file"]) else {
        return;
    };
    let uses_file = w[1..i].iter().any(|x| {
        x.lit()
            .is_some_and(|t| t == "-f" || t.starts_with("--file"))
    });
    if uses_file {
        return;
    }
    if awk_runs_commands(&w[i].text) {
        a.report(
            RuleId::InlineCode,
            call.span.clone(),
            "the awk program runs commands (`system()` or a pipe)",
        );
    }
}

/// An awk program that runs commands: `system()`, or a pipe to or from a command (`print |
/// "sh"`, `"cmd" | getline`, `|&`).
pub(crate) fn awk_runs_commands(program: &str) -> bool {
    let compact: String = program.chars().filter(|c| !c.is_whitespace()).collect();
    compact.contains("system(")
        || compact.contains("|\"")
        || compact.contains("|getline")
        || compact.contains("|&")
}
