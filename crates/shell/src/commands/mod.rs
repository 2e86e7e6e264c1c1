//! Checks on one command: the name must be a plain word; wrappers are unwrapped and the
//! wrapped command checked in its own right; then the rules for the command's name.

mod code;
mod destructive;
mod git;
mod interpreters;
mod producers;
mod tools;
mod upstream;
mod wrappers;
mod writes;

pub(crate) use tools::assignment as tool_variable;
pub(crate) use upstream::Upstream;

use crate::limits::MAX_WRAPPERS;
use crate::rules::RuleId;
use crate::walk::{Analyzer, Call, Cx};
use crate::word::Word;

/// Checks the command `words` (name first). Costs a unit of work per word and byte of word
/// text (the rules look at every word a bounded number of times).
pub(crate) fn check(a: &mut Analyzer, cx: Cx<'_, '_>, words: &[Word<'_>], call: &Call<'_>) {
    let Some(name_word) = words.first() else {
        return;
    };
    let size: usize = words.iter().map(|w| w.text.len() + 1).sum();
    if !a.budget.charge(size, call.span.clone()) || a.halted() {
        return;
    }
    if !name_word.plain {
        let why = obfuscation(cx, name_word);
        a.report(RuleId::ObfuscatedCommand, name_word.span.clone(), why);
    }
    let Some(name) = name_word.lit() else {
        return;
    };
    let base = name.rsplit('/').next().unwrap_or(name);
    if !base.is_empty() {
        tools::check(a, cx, base, words, call);
    }
    if base.is_empty()
        || wrappers::check(a, cx, base, words, call)
        || tools::launcher(a, cx, base, words, call)
    {
        return;
    }
    let args = &words[1..];
    if code::check(a, cx, base, words, call) {
        return;
    }
    destructive::check(a, base, args, call);
    if base == "git" {
        git::check(a, args, call);
    }
    writes::check(a, base, args, call);
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
}

impl Parsed<'_, '_> {
    fn has(&self, short: char, long: &str) -> bool {
        self.short.contains(short) || self.long.iter().any(|(n, _)| *n == long)
    }

    fn value(&self, short: char, long: &str) -> Option<&str> {
        self.values
            .iter()
            .find(|(c, _)| *c == short)
            .map(|(_, v)| v.as_str())
            .or_else(|| {
                self.long
                    .iter()
                    .find(|(n, _)| *n == long)
                    .and_then(|(_, v)| v.as_deref())
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
            if value.is_none() && long_values.contains(&name) {
                value = args.get(i).map(|v| v.text.clone());
                i += 1;
            }
            p.long.push((name, value));
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
            i += if !long.contains('=') && long_values.contains(&long) {
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
