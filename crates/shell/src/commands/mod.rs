//! Checks on one command: the name must be a plain word; wrappers are unwrapped and the
//! wrapped command checked in its own right; then the rules for the command's name.

mod applescript;
mod code;
mod deletes;
mod destructive;
mod environment_path;
mod git;
mod hidden;
mod interpreters;
mod names;
mod producers;
mod scripts;
mod tools;
mod upstream;
mod values;
pub(crate) mod variables;
mod wrappers;
mod writes;

pub(crate) use producers::command_words;
pub(crate) use tools::assignment as tool_variable;
pub(crate) use upstream::Upstream;

use crate::limits::MAX_WRAPPERS;
use crate::rules::RuleId;
use crate::walk::{Analyzer, Call, Cx};
use crate::word::Word;

/// Work units one word costs besides its bytes: the rules normalise and compare every
/// argument (paths against protected trees, options against tables) a few times.
const WORD_COST: usize = 8;

/// Checks the command `words` (name first). Costs [`WORD_COST`] units of work per word and
/// one per byte of word text (the rules look at every word a bounded number of times).
pub(crate) fn check(a: &mut Analyzer, cx: Cx<'_, '_>, words: &[Word<'_>], call: &Call<'_>) {
    let Some(name_word) = words.first() else {
        return;
    };
    let size: usize = words.iter().map(|w| w.text.len() + WORD_COST).sum();
    if !a.budget.charge(size, call.span.clone()) || a.halted() {
        return;
    }
    let renamed;
    let mut words = words;
    let written_plainly = name_word.plain;
    if !name_word.plain {
        if let Some(text) = environment_path::program(a, cx, name_word) {
            renamed = static_name(words, text);
            words = &renamed;
        } else {
            let why = obfuscation(cx, name_word);
            a.report(RuleId::ObfuscatedCommand, name_word.span.clone(), why);
        }
    }
    let name_word = &words[0];
    let Some(name) = name_word.lit() else {
        return;
    };
    let base = name.rsplit('/').next().unwrap_or(name);
    if written_plainly {
        a.command_program(cx, name_word, name);
    }
    if base.is_empty() || names::check(a, cx, base, words, call) {
        return;
    }
    tools::check(a, cx, base, words, call);
    values::check(a, cx, base, words, call);
    hidden::check(a, cx, base, words, call);
    if wrappers::check(a, cx, base, words, call) || tools::launcher(a, cx, base, words, call) {
        return;
    }
    let args = &words[1..];
    if code::check(a, cx, base, words, call) {
        return;
    }
    destructive::check(a, base, args, call);
    deletes::check(a, cx, base, args, call);
    if base == "git" {
        git::check(a, args, call);
    }
    writes::check(a, base, args, call);
}

/// `words` with the name read as the static `text`.
fn static_name<'t>(words: &[Word<'t>], text: String) -> Vec<Word<'t>> {
    let mut renamed = words.to_vec();
    let name = &mut renamed[0];
    name.text = text;
    (name.plain, name.dynamic, name.unknown, name.unknown_name) = (true, false, false, false);
    renamed
}

fn obfuscation(cx: Cx<'_, '_>, word: &Word<'_>) -> String {
    let Some(node) = word.node else {
        return "the command name is run-time input".to_owned();
    };
    let raw = &cx.src.text[node.byte_range()];
    let why = match node.kind() {
        "word" if raw.contains('\\') => "a backslash inside it",
        "word" if raw.contains(['*', '?', '[']) => "a glob",
        "word" => "brace expansion",
        "ansi_c_string" => "ANSI-C `$'…'` quoting",
        "string" | "raw_string" | "translated_string" if !word.dynamic => "quotes",
        "simple_expansion" | "expansion" => "a variable",
        "command_substitution" => "a command substitution",
        "arithmetic_expansion" => "an arithmetic substitution",
        _ if word.dynamic => "expansions or substitutions",
        _ => "quotes or escapes",
    };
    let shown: String = raw.chars().take(60).collect();
    format!("command name `{shown}` is not a plain word: {why}")
}

/// Checks the command a wrapper runs (`words`, name first), one wrapper deeper: past
/// [`MAX_WRAPPERS`] it blocks as `analysis-limit` instead (this is the only recursion of
/// the rules, so it bounds their stack).
fn wrapped(a: &mut Analyzer, cx: Cx<'_, '_>, words: &[Word<'_>], call: &Call<'_>) {
    if a.wrappers >= MAX_WRAPPERS {
        a.report(
            RuleId::AnalysisLimit,
            call.span.clone(),
            format!(
                "more than {MAX_WRAPPERS} wrappers (`env`, `sudo`, `xargs`, …) around one command"
            ),
        );
        return;
    }
    a.wrappers += 1;
    check(a, cx, words, call);
    a.wrappers -= 1;
}

/// The same call, for the command that starts at `word` (a wrapped command).
fn at<'t>(call: &Call<'t>, word: &Word<'_>) -> Call<'t> {
    let start = word.span.start.min(call.span.end);
    Call {
        span: start.max(call.span.start)..call.span.end,
        stdin: call.stdin,
        redirects: call.redirects.clone(),
        prefix: call.prefix.clone(),
    }
}

/// Options and operands of a command line, GNU style (options may follow operands).
#[derive(Debug, Default)]
struct Parsed<'w, 't> {
    /// Every short option letter seen.
    short: String,
    /// Long options (without `--`) and their values.
    long: Vec<(&'w str, Option<String>)>,
    /// Short options that took a value, and the value.
    values: Vec<(char, String)>,
    /// Operands, in order.
    operands: Vec<&'w Word<'t>>,
    /// Some word in option position is only known at run time (it might be an option).
    dynamic: bool,
    /// Per entry of `long`: the name is spelled out in full as one of the options that take a
    /// value (so it is not a prefix of another option).
    complete: Vec<bool>,
}

impl Parsed<'_, '_> {
    fn has(&self, short: char, long: &str) -> bool {
        self.short.contains(short) || self.long_index(long).is_some()
    }

    fn value(&self, short: char, long: &str) -> Option<&str> {
        self.values
            .iter()
            .find(|(c, _)| *c == short)
            .map(|(_, v)| v.as_str())
            .or_else(|| {
                self.long_index(long)
                    .and_then(|i| self.long[i].1.as_deref())
            })
    }

    /// The entry of `long` for the option `--long`: spelled out, else an unambiguous prefix
    /// of it (`--rec` for `--recursive`) that is not another option spelled out.
    fn long_index(&self, long: &str) -> Option<usize> {
        let exact = self.long.iter().position(|(n, _)| *n == long);
        exact.or_else(|| {
            let complete = |i: usize| self.complete.get(i).copied().unwrap_or(false);
            (0..self.long.len()).find(|&i| long_matches(self.long[i].0, long) && !complete(i))
        })
    }
}

/// Parses `args`; `short_values` are the short options that take a value, `long_values` the
/// long ones (which may also be written `--name=value`).
fn parse_args<'w, 't>(
    args: &'w [Word<'t>],
    short_values: &str,
    long_values: &[&str],
) -> Parsed<'w, 't> {
    let mut p = Parsed::default();
    let mut options = true;
    let mut i = 0;
    while let Some(w) = args.get(i) {
        i += 1;
        // A word whose value is known (`--directory=$HOME`) is read as that value.
        let text = (!w.unknown).then_some(w.text.as_str()).filter(|_| options);
        let Some(t) = text else {
            p.dynamic |= options && w.dynamic && !w.any;
            p.operands.push(w);
            continue;
        };
        if t == "--" {
            options = false;
        } else if let Some(long) = t.strip_prefix("--") {
            let (name, mut value) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_owned())),
                None => (long, None),
            };
            if value.is_none() && takes_value(name, long_values) {
                value = args.get(i).map(|v| v.text.clone());
                i += 1;
            }
            p.long.push((name, value));
            p.complete.push(long_values.contains(&name));
        } else if t.len() > 1 && t.starts_with('-') {
            for (k, c) in t[1..].char_indices() {
                p.short.push(c);
                if short_values.contains(c) {
                    let rest = &t[1 + k + c.len_utf8()..];
                    let value = if rest.is_empty() {
                        i += 1;
                        args.get(i - 1).map(|v| v.text.clone())
                    } else {
                        Some(rest.to_owned())
                    };
                    p.values.push((c, value.unwrap_or_default()));
                    break;
                }
            }
        } else {
            p.operands.push(w);
        }
    }
    p
}

/// Whether the long option written `--written` is `--full`: GNU getopt_long (and git) take any
/// unambiguous prefix (`rm --rec --for`). An ambiguous prefix makes the command fail, so
/// reading it as every option it starts is safe.
pub(super) fn long_matches(written: &str, full: &str) -> bool {
    !written.is_empty() && full.starts_with(written)
}

/// Whether the long option `--written` (a prefix of one, see [`long_matches`]) is one of
/// `long_values`, the options that take a value (written with or without their `--`).
fn takes_value(written: &str, long_values: &[&str]) -> bool {
    long_values
        .iter()
        .any(|full| long_matches(written, full.trim_start_matches('-')))
}

/// Index of the first operand of a wrapper-style command (options first, no permutation),
/// or `None` when there is none.
fn first_operand(words: &[Word<'_>], short_values: &str, long_values: &[&str]) -> Option<usize> {
    let mut i = 1;
    while let Some(w) = words.get(i) {
        let Some(t) = w.lit() else {
            return Some(i);
        };
        if t == "--" {
            return (i + 1 < words.len()).then_some(i + 1);
        }
        if let Some(long) = t.strip_prefix("--") {
            i += if !long.contains('=') && takes_value(long, long_values) {
                2
            } else {
                1
            };
            continue;
        }
        if t.len() > 1 && t.starts_with('-') {
            let takes = t[1..]
                .char_indices()
                .find(|(_, c)| short_values.contains(*c))
                .is_some_and(|(k, c)| 1 + k + c.len_utf8() == t.len());
            i += if takes { 2 } else { 1 };
            continue;
        }
        return Some(i);
    }
    None
}
