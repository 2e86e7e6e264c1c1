//! Build tools and interpreters that load code through options: `make --eval|-E`, `make -f -`
//! (recipes are shell code and are checked), `make SHELL=…|.SHELLFLAGS=…`, `perl -M'X;code'`,
//! `perl|ruby -I`, `python -m timeit|pdb|code`, `node --require|--import|--loader`, gawk
//! `--source|--load`.

use super::opts::Val;
use super::text::{self, lines, slice};
use super::{in_temp_dir, option_exec};
use crate::commands::producers::{Reader, stdin_code};
use crate::rules::RuleId;
use crate::source::Mapped;
use crate::walk::{Analyzer, Call, Cx};
use crate::word::Word;

pub(super) fn check(a: &mut Analyzer, cx: Cx<'_, '_>, base: &str, w: &[Word<'_>], call: &Call<'_>) {
    match base {
        "make" | "gmake" | "remake" | "bmake" => make(a, cx, w, call),
        "awk" | "gawk" | "mawk" | "nawk" => awk(a, w, call),
        "node" | "nodejs" | "bun" => node(a, w, call),
        "expect" | "tclsh" | "wish" => {
            let inline = w[1..]
                .iter()
                .filter_map(Word::lit)
                .any(|t| t == "-c" || (base == "expect" && t.starts_with("-c")));
            if inline {
                a.report(
                    RuleId::InlineCode,
                    call.span.clone(),
                    format!("`{base} -c` runs inline code"),
                );
            }
        }
        _ if versioned(base, "perl") || versioned(base, "ruby") => perl_ruby(a, base, w, call),
        _ if versioned(base, "python") || versioned(base, "pypy") => python(a, cx, base, w, call),
        _ => {}
    }
}

fn versioned(base: &str, prefix: &str) -> bool {
    base.strip_prefix(prefix)
        .is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

/// `make`: `--eval TEXT`/`-E TEXT` and a makefile read from standard input are makefile text
/// given inline (their recipes are checked as shell code); `SHELL=`/`.SHELLFLAGS=` arguments
/// change the program recipes run with.
fn make(a: &mut Analyzer, cx: Cx<'_, '_>, w: &[Word<'_>], call: &Call<'_>) {
    let mut i = 1;
    while let Some(word) = w.get(i) {
        i += 1;
        let t = word.text.as_str();
        let eval = if let Some(rest) = t.strip_prefix("--eval") {
            match rest.strip_prefix('=') {
                Some(_) => Some(Val { word, at: 7 }),
                None if rest.is_empty() => {
                    i += 1;
                    w.get(i - 1).map(Val::of)
                }
                None => None,
            }
        } else if t == "-E" {
            i += 1;
            w.get(i - 1).map(Val::of)
        } else {
            None
        };
        if let Some(v) = eval {
            inline_makefile(a, cx, call, text::of_val(cx, v), "`make --eval`");
            continue;
        }
        if matches!(t, "-f" | "--file" | "--makefile")
            || t.starts_with("--file=")
            || t.starts_with("--makefile=")
        {
            let file = match t.split_once('=') {
                Some((_, f)) => f,
                None if i == w.len() && text::lost_dash(cx, call, w) => "-",
                None => {
                    i += 1;
                    w.get(i - 1).map_or("", |x| x.text.as_str())
                }
            };
            if matches!(file, "-" | "/dev/stdin" | "/dev/fd/0" | "/proc/self/fd/0") {
                match text::static_input(cx, call) {
                    Some(m) => inline_makefile(a, cx, call, Some(m), "`make -f -`"),
                    None => stdin_code(a, cx, call, Reader::Interpreter, "make"),
                }
            }
            continue;
        }
        if matches!(
            t,
            "-C" | "-I" | "-o" | "-W" | "-j" | "-l" | "--directory" | "--include-dir"
        ) {
            i += 1;
            continue;
        }
        make_variable(a, cx, word, call);
    }
}

/// `SHELL=PROGRAM`, `.SHELLFLAGS=FLAGS`, `MAKEFLAGS=…--eval…` on make's command line.
fn make_variable(a: &mut Analyzer, cx: Cx<'_, '_>, word: &Word<'_>, call: &Call<'_>) {
    let t = word.text.as_str();
    let Some((name, value)) = t.split_once('=') else {
        return;
    };
    let name = name.trim_end_matches([':', '?', '+', '!']);
    match name {
        "SHELL" => {
            let shells = ["sh", "bash", "dash", "zsh", "ksh"];
            let known = shells.contains(&super::base_of(value)) && !value.contains(' ');
            if !known {
                let v = Val {
                    word,
                    at: t.len() - value.len(),
                };
                super::run_option(a, cx, call, v, &[], "make's `SHELL=`");
            }
        }
        ".SHELLFLAGS" => {
            let flags = value
                .split_whitespace()
                .all(|f| f.starts_with('-') || matches!(f, "pipefail" | "errexit" | "nounset"));
            if !flags {
                option_exec(a, call, "make's `.SHELLFLAGS=`", value);
            }
        }
        "MAKEFLAGS" | "MFLAGS"
            if value.contains("--eval") || value.split_whitespace().any(|f| f == "-E") =>
        {
            option_exec(a, call, "`MAKEFLAGS` with `--eval`", value);
        }
        _ => {}
    }
}

/// Makefile text given inline: `inline-code` for hooks, `option-exec` for everyone, and its
/// recipes checked as shell code (`None`: built at run time).
pub(super) fn inline_makefile(
    a: &mut Analyzer,
    cx: Cx<'_, '_>,
    call: &Call<'_>,
    m: Option<Mapped>,
    what: &str,
) {
    a.report(
        RuleId::InlineCode,
        call.span.clone(),
        format!("{what} runs makefile text given inline"),
    );
    let Some(m) = m else {
        option_exec(a, call, what, "text built at run time");
        return;
    };
    option_exec(a, call, what, &m.text);
    if !a.budget.charge(m.text.len(), text::span(&m, &call.span)) {
        return;
    }
    for recipe in recipes(&m.text) {
        let code = make_to_shell(&slice(&m, recipe));
        let whole = text::span(&code, &call.span);
        super::super::code::nested(a, cx, code, whole);
    }
}

/// The recipe parts of a makefile: lines starting with a tab, the text after `;` on a rule
/// line, and `$(shell …)` calls (as whole lines, for [`make_to_shell`]).
fn recipes(text: &str) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    for line in lines(text) {
        let s = &text[line.clone()];
        if let Some(body) = s.strip_prefix('\t') {
            out.push(line.end - body.len()..line.end);
        } else if let Some(colon) = s.find(':').filter(|_| !s.starts_with('#')) {
            if let Some(k) = s[colon..].find(';') {
                out.push(line.start + colon + k + 1..line.end);
            } else if s.contains("$(shell") {
                out.push(line.clone());
            }
        } else if s.contains("$(shell") {
            out.push(line.clone());
        }
    }
    out
}

/// A recipe as the shell sees it: `$$` is `$`, `$(shell CMD)` becomes `$(CMD)`, a leading `@`,
/// `-` or `+` is dropped.
fn make_to_shell(recipe: &Mapped) -> Mapped {
    let s = recipe.text.as_str();
    let mut out = Mapped::default();
    let lead = s.len() - s.trim_start_matches(['@', '-', '+', ' ', '\t']).len();
    let mut i = lead;
    while i < s.len() {
        let rest = &s[i..];
        let (take, emit) = if rest.starts_with("$$") {
            (2, "$")
        } else if rest.starts_with("$(shell ") {
            (8, "$(")
        } else if let Some(name) = make_variable_name(rest) {
            // `$(CC)`: a make variable, which the shell never sees as a substitution.
            (name.len() + 3, name)
        } else {
            let n = rest.chars().next().map_or(1, char::len_utf8);
            (n, &rest[..n])
        };
        let from = recipe.map.get(i).map_or(0, |m| m.0);
        let to = recipe.map.get(i + take - 1).map_or(from, |m| m.1);
        out.push(emit, from..to.max(from));
        i += take;
    }
    out
}

/// The name in a leading `$(NAME)` or `${NAME}` make variable reference.
fn make_variable_name(s: &str) -> Option<&str> {
    let close = match s.get(..2)? {
        "$(" => ')',
        "${" => '}',
        _ => return None,
    };
    // Bounded: a run of `$($($(…` must not scan to the end for every `$(`.
    let end = s.bytes().skip(2).take(64).position(|b| b == close as u8)? + 2;
    let name = &s[2..end];
    let plain = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.'));
    plain.then_some(name)
}

/// gawk `--source=PROGRAM` / `-e PROGRAM` (checked like the program operand), `-l|--load
/// EXT` (a shared library), `-E|--exec FILE`, `-f` of standard input.
fn awk(a: &mut Analyzer, w: &[Word<'_>], call: &Call<'_>) {
    for (k, word) in w.iter().enumerate().skip(1) {
        let t = word.text.as_str();
        let next = || w.get(k + 1).map_or("", |x| x.text.as_str());
        let program = match t {
            "-e" | "--source" => Some(next()),
            _ => t.strip_prefix("--source="),
        };
        if program.is_some_and(crate::commands::interpreters::awk_runs_commands) {
            a.report(
                RuleId::InlineCode,
                call.span.clone(),
                "the awk program runs commands (`system()` or a pipe)",
            );
        }
        let library = match t {
            "-l" | "--load" => Some(next()),
            _ => t
                .strip_prefix("--load=")
                .or_else(|| t.strip_prefix("-l").filter(|l| !l.is_empty())),
        };
        if let Some(lib) = library {
            option_exec(a, call, "gawk `--load` (a shared library)", lib);
        }
    }
}

/// `node --require|-r|--import|--loader MODULE`: a `data:` URL is inline code, a module in a
/// temporary directory was dropped there by someone.
fn node(a: &mut Analyzer, w: &[Word<'_>], call: &Call<'_>) {
    for (k, word) in w.iter().enumerate().skip(1) {
        let t = word.text.as_str();
        let names = [
            "--require",
            "--import",
            "--loader",
            "--experimental-loader",
            "--preload",
            "-r",
        ];
        let module = if names.contains(&t) {
            w.get(k + 1).map(|x| x.text.as_str())
        } else {
            names
                .iter()
                .find_map(|n| t.strip_prefix(n).and_then(|r| r.strip_prefix('=')))
        };
        let Some(module) = module else {
            continue;
        };
        if module.starts_with("data:") {
            a.report(
                RuleId::InlineCode,
                call.span.clone(),
                format!("`node {t}` loads inline code from a `data:` URL"),
            );
        } else if in_temp_dir(module) || module.starts_with("http:") || module.starts_with("https:")
        {
            option_exec(a, call, &format!("`node {t}`"), module);
        }
    }
}

/// `perl -M'Mod;code'` injects code; `perl|ruby -I DIR` of a temporary directory loads what
/// anyone dropped there.
fn perl_ruby(a: &mut Analyzer, base: &str, w: &[Word<'_>], call: &Call<'_>) {
    for (k, word) in w.iter().enumerate().skip(1) {
        let Some(t) = word.lit() else { continue };
        if t == "--" || !t.starts_with('-') {
            break;
        }
        let value = |prefix: &str| {
            t.strip_prefix(prefix).map(|rest| {
                if rest.is_empty() {
                    w.get(k + 1).map_or("", |x| x.text.as_str())
                } else {
                    rest
                }
            })
        };
        if let Some(module) = value("-M")
            .or_else(|| value("-m"))
            .filter(|_| base.starts_with("perl"))
        {
            let plain = module.chars().all(|c| {
                c.is_ascii_alphanumeric() || matches!(c, '_' | ':' | '=' | ',' | '-' | '.')
            });
            if !plain {
                a.report(
                    RuleId::InlineCode,
                    call.span.clone(),
                    format!("`{base} -M{module}` injects code into the module import"),
                );
            }
        }
        if let Some(dir) = value("-I").filter(|d| in_temp_dir(d)) {
            option_exec(
                a,
                call,
                &format!("`{base} -I` of a temporary directory"),
                dir,
            );
        }
    }
}

/// `python -m timeit|pdb|cProfile … CODE`: modules that run code given as arguments;
/// `python -m code|pdb` without a script reads its program from standard input.
fn python(a: &mut Analyzer, cx: Cx<'_, '_>, base: &str, w: &[Word<'_>], call: &Call<'_>) {
    let Some(m) = w.iter().position(|x| x.lit() == Some("-m")) else {
        return;
    };
    let module = w.get(m + 1).and_then(Word::lit).unwrap_or_default();
    let rest = w.get(m + 2..).unwrap_or_default();
    let code_args = match module {
        "timeit" => {
            rest.iter().any(|x| !x.text.starts_with('-'))
                || rest.iter().any(|x| x.text.starts_with("-s"))
        }
        "pdb" | "cProfile" | "profile" => rest.iter().any(|x| x.lit() == Some("-c")),
        _ => false,
    };
    if code_args {
        a.report(
            RuleId::InlineCode,
            call.span.clone(),
            format!("`{base} -m {module}` runs code given as arguments"),
        );
    }
    let repl = matches!(module, "code" | "pdb" | "asyncio" | "idlelib")
        && rest.iter().all(|x| x.text.starts_with('-'));
    if repl {
        stdin_code(a, cx, call, Reader::Interpreter, base);
    }
}
