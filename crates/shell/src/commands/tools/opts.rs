//! A small getopt for the tools' checks: clusters of short options, GNU long options with
//! unambiguous prefixes (`--to-com=…`), values glued (`-Icmd`, `--rsh=cmd`) or in the next
//! word, options after operands (GNU permutation), `--` ending the options.

use crate::word::Word;

/// How one tool's options take values.
#[derive(Debug, Clone, Copy)]
pub(super) struct Spec {
    /// Short options that take a value.
    pub short: &'static str,
    /// Long options (without `--`) and whether each takes a value. A name that a listed name
    /// starts with must be listed too (`checkpoint` beside `checkpoint-action`), so that
    /// abbreviations resolve the way the tool resolves them.
    pub long: &'static [(&'static str, bool)],
}

/// The value of an option: `word.text[at..]`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Val<'w, 't> {
    /// The word holding the value.
    pub word: &'w Word<'t>,
    /// Byte offset of the value in the word's text (after `-I`, `--rsh=`, …).
    pub at: usize,
}

impl<'w, 't> Val<'w, 't> {
    /// The value's text (unknown parts marked as in [`Word::text`]).
    pub fn text(&self) -> &'w str {
        self.word.text.get(self.at..).unwrap_or_default()
    }

    /// The whole word as a value.
    pub fn of(word: &'w Word<'t>) -> Self {
        Val { word, at: 0 }
    }
}

/// One argument, read.
#[derive(Debug, Clone, Copy)]
pub(super) enum Arg<'w, 't> {
    /// A short option and its value, when it takes one.
    Short(char, Option<Val<'w, 't>>),
    /// A long option, by its full name when the spec knows it (else as written), and its
    /// value (given with `=`, or the next word when it takes one).
    Long(&'w str, Option<Val<'w, 't>>),
    /// An operand.
    Operand(&'w Word<'t>),
}

/// Reads `args` (the words after the command name) with `spec`.
pub(super) fn scan<'w, 't>(args: &'w [Word<'t>], spec: &Spec) -> Vec<Arg<'w, 't>> {
    let mut out = Vec::with_capacity(args.len());
    let mut options = true;
    let mut i = 0;
    while let Some(word) = args.get(i) {
        i += 1;
        let text = word.text.as_str();
        // A word with unknown parts is still read as an option when it starts as one
        // (`--rsh="$X"`); its value is then dynamic.
        if !options || text.len() < 2 || !text.starts_with('-') {
            out.push(Arg::Operand(word));
            continue;
        }
        if text == "--" {
            options = false;
        } else if let Some(long) = text.strip_prefix("--") {
            let (written, glued) = match long.split_once('=') {
                Some((n, _)) => (
                    n,
                    Some(Val {
                        word,
                        at: 3 + n.len(),
                    }),
                ),
                None => (long, None),
            };
            let (name, takes) = resolve(spec, written);
            let value = glued.or_else(|| {
                let next = takes.then(|| args.get(i)).flatten()?;
                i += 1;
                Some(Val::of(next))
            });
            out.push(Arg::Long(name, value));
        } else {
            i += cluster(word, args.get(i), spec, &mut out);
        }
    }
    out
}

/// Pushes the options of a short cluster (`-xvf`, `-Icmd`); returns how many following
/// words it took as a value (0 or 1).
fn cluster<'w, 't>(
    word: &'w Word<'t>,
    next: Option<&'w Word<'t>>,
    spec: &Spec,
    out: &mut Vec<Arg<'w, 't>>,
) -> usize {
    for (k, c) in word.text[1..].char_indices() {
        if !spec.short.contains(c) {
            out.push(Arg::Short(c, None));
            continue;
        }
        let at = 1 + k + c.len_utf8();
        if at < word.text.len() {
            out.push(Arg::Short(c, Some(Val { word, at })));
            return 0;
        }
        out.push(Arg::Short(c, next.map(Val::of)));
        return usize::from(next.is_some());
    }
    0
}

/// The full name of the long option written `written`, and whether it takes a value: the
/// exact name, else the one listed name it abbreviates.
fn resolve<'w>(spec: &Spec, written: &'w str) -> (&'w str, bool) {
    if let Some((name, takes)) = spec.long.iter().find(|(n, _)| *n == written) {
        return (name, *takes);
    }
    let mut candidates = spec
        .long
        .iter()
        .filter(|(n, _)| !written.is_empty() && n.starts_with(written));
    match (candidates.next(), candidates.next()) {
        (Some((name, takes)), None) => (name, *takes),
        _ => (written, false),
    }
}

/// The values of every option named `short` or `long` in `args`.
pub(super) fn values<'w, 't>(
    args: &[Arg<'w, 't>],
    short: Option<char>,
    long: &[&str],
) -> Vec<Val<'w, 't>> {
    args.iter()
        .filter_map(|arg| match *arg {
            Arg::Short(c, v) if Some(c) == short => v,
            Arg::Long(n, v) if long.contains(&n) => v,
            _ => None,
        })
        .collect()
}

/// Whether option `short` or one of `long` is present.
pub(super) fn has(args: &[Arg<'_, '_>], short: Option<char>, long: &[&str]) -> bool {
    args.iter().any(|arg| match *arg {
        Arg::Short(c, _) => Some(c) == short,
        Arg::Long(n, _) => long.contains(&n),
        Arg::Operand(_) => false,
    })
}

/// The operands in `args`.
pub(super) fn operands<'w, 't>(args: &[Arg<'w, 't>]) -> Vec<&'w Word<'t>> {
    args.iter()
        .filter_map(|arg| match *arg {
            Arg::Operand(w) => Some(w),
            _ => None,
        })
        .collect()
}

/// Index (in `words`, name first) of the first operand at or after `from`, reading options
/// the POSIX way (they end at the first operand), or `None` when there is none.
pub(super) fn operand_from(words: &[Word<'_>], from: usize, spec: &Spec) -> Option<usize> {
    let mut i = from;
    while let Some(word) = words.get(i) {
        let Some(t) = word.lit() else {
            return Some(i);
        };
        if t == "--" {
            return (i + 1 < words.len()).then_some(i + 1);
        }
        if t.len() < 2 || !t.starts_with('-') {
            return Some(i);
        }
        i += 1;
        if let Some(long) = t.strip_prefix("--") {
            if !long.contains('=') && resolve(spec, long).1 {
                i += 1;
            }
        } else if let Some((k, c)) = t[1..].char_indices().find(|(_, c)| spec.short.contains(*c))
            && 1 + k + c.len_utf8() == t.len()
        {
            i += 1;
        }
    }
    None
}
