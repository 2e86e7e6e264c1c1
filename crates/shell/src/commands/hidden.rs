//! Builtins and shell options that run code no command names: `let` (arithmetic),
//! `mapfile -C` callbacks, `compgen -C` commands, `set -k` (assignments anywhere become
//! environment), `test -v NAME[…]` subscripts, and a shell's `--rcfile`/`--init-file`/`-O
//! OPTION` start-up options.

use super::{code, names};
use crate::rules::RuleId;
use crate::walk::{Analyzer, Call, Cx};
use crate::word::Word;

/// Checks `base` if it is one of these.
pub(super) fn check(
    a: &mut Analyzer,
    cx: Cx<'_, '_>,
    base: &str,
    words: &[Word<'_>],
    call: &Call<'_>,
) {
    let args = &words[1..];
    match base {
        "let" => a.let_expressions(cx, args, call.span.clone()),
        "mapfile" | "readarray" => callback(a, cx, args, call),
        "set" if keyword_on(args) => hidden(
            a,
            call,
            "`set -k` makes assignments anywhere in a command line environment of the command (`bash BASH_ENV=x …`)",
        ),
        b if code::is_shell(b) => shell_options(a, args, call),
        "test" | "[" => {
            for pair in args.windows(2) {
                if pair[0].lit() == Some("-v") {
                    a.name_argument(cx, &pair[1]);
                }
            }
        }
        "compgen" | "complete" => completion_command(a, cx, args, call),
        _ => {}
    }
}

/// `compgen -C COMMAND` runs COMMAND to list completions (`complete -C` when completing).
fn completion_command(a: &mut Analyzer, cx: Cx<'_, '_>, args: &[Word<'_>], call: &Call<'_>) {
    for (i, word) in args.iter().enumerate() {
        if word.lit() != Some("-C") {
            continue;
        }
        match args.get(i + 1) {
            Some(command) if !command.dynamic => {
                code::code_word(a, cx, command, "the `-C` completion command")
            }
            _ => hidden(a, call, "the `-C` completion command is built at run time"),
        }
    }
}

fn hidden(a: &mut Analyzer, call: &Call<'_>, why: &str) {
    a.report(RuleId::HiddenCode, call.span.clone(), why);
}

/// The static option words at the start of `args` (up to `--` or the first operand), with
/// the value of `-o`/`-O`.
fn options<'w>(args: &'w [Word<'_>]) -> impl Iterator<Item = &'w str> {
    let mut value = false;
    args.iter().map_while(move |w| {
        let t = w.lit()?;
        let take =
            std::mem::take(&mut value) || (t.len() > 1 && t.starts_with(['-', '+']) && t != "--");
        value = matches!(t, "-o" | "+o" | "-O" | "+O");
        take.then_some(t)
    })
}

/// Whether `set`'s `-k` / `-o keyword` is being turned on (not `+k`).
fn keyword_on(args: &[Word<'_>]) -> bool {
    let mut previous = "";
    for t in options(args) {
        let cluster = t.starts_with('-') && !t.starts_with("--") && t != "-o";
        if (cluster && t.contains('k')) || (t == "keyword" && previous == "-o") {
            return true;
        }
        previous = t;
    }
    false
}

/// `mapfile -C CALLBACK`: the callback is shell code, run for every few lines read.
fn callback(a: &mut Analyzer, cx: Cx<'_, '_>, args: &[Word<'_>], call: &Call<'_>) {
    for (i, word) in args.iter().enumerate() {
        let Some(t) = word.lit() else { continue };
        if t == "--" || !t.starts_with('-') {
            return;
        }
        let Some(at) = t.find('C') else { continue };
        let takes_before = t[1..at].contains(['d', 'n', 'O', 's', 'u', 'c']);
        if takes_before {
            continue;
        }
        if at + 1 < t.len() {
            // `-Ccode`: the value is glued; its text is the code.
            hidden(
                a,
                call,
                "a `mapfile -C` callback glued to its option cannot be checked",
            );
            return;
        }
        match args.get(i + 1) {
            Some(code_word) if !code_word.dynamic => {
                code::code_word(a, cx, code_word, "the `mapfile -C` callback")
            }
            _ => hidden(
                a,
                call,
                "the `mapfile -C` callback is built at run time: it runs for the lines read",
            ),
        }
        return;
    }
}

/// A shell's options before its code or script: `--rcfile FILE` / `--init-file FILE` (code
/// run first, unseen), `-O extdebug|expand_aliases`, `-k`.
fn shell_options(a: &mut Analyzer, args: &[Word<'_>], call: &Call<'_>) {
    let mut i = 0;
    while let Some(t) = args.get(i).and_then(Word::lit) {
        i += 1;
        match t {
            "--rcfile" | "--init-file" => hidden(
                a,
                call,
                "`--rcfile`/`--init-file` makes the shell run a file of code first",
            ),
            "-O" => {
                if let Some(option) = args.get(i).and_then(Word::lit) {
                    names::shell_option(a, option, call);
                }
                i += 1;
            }
            "--" | "-" => return,
            _ if t.starts_with("--") => {}
            _ if t.starts_with('-') && t.len() > 1 => {
                if t.contains('k') {
                    hidden(
                        a,
                        call,
                        "`-k` makes assignments anywhere in a command line environment of the command",
                    );
                }
                if t.contains('c') {
                    return;
                }
                if t.contains(['o', 'O']) {
                    let option = args.get(i).and_then(Word::lit).unwrap_or_default();
                    if t.contains('O') {
                        names::shell_option(a, option, call);
                    } else if option == "keyword" {
                        hidden(
                            a,
                            call,
                            "`-o keyword` makes assignments anywhere in a command line environment of the command",
                        );
                    }
                    i += 1;
                }
            }
            _ if t.starts_with('+') => {}
            _ => return,
        }
    }
}
