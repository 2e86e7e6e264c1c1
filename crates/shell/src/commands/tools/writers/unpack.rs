//! Writers of entries they do not name (archives, patches, clones) and `tar -xP`.

use super::super::opts::{self, Spec};
use crate::commands::writes::entries_into;
use crate::rules::RuleId;
use crate::walk::{Analyzer, Call};
use crate::word::Word;

/// `tar -x` with `-P`/`--absolute-names`: entries land wherever their names say.
pub(super) fn absolute_extract(a: &mut Analyzer, args: &[Word<'_>], call: &Call<'_>) {
    let old = args
        .first()
        .and_then(Word::lit)
        .filter(|t| !t.starts_with('-') && t.chars().all(|c| c.is_ascii_alphabetic()))
        .unwrap_or_default();
    let clusters = || {
        args.iter()
            .filter_map(Word::lit)
            .filter(|t| t.starts_with('-') && !t.starts_with("--"))
    };
    let long = |name: &str| {
        args.iter()
            .filter_map(Word::lit)
            .any(|t| t.len() > 4 && t.starts_with("--") && name.starts_with(&t[2..]))
    };
    let extract =
        old.contains('x') || clusters().any(|t| t.contains('x')) || long("extract") || long("get");
    let absolute =
        old.contains('P') || clusters().any(|t| t.contains('P')) || long("absolute-names");
    if extract && absolute {
        a.report(
            RuleId::SystemAuthWrite,
            call.span.clone(),
            "`tar -xP` extracts entries with absolute names, anywhere (start-up files, `/etc`, `.ssh`)",
        );
    }
}

/// `patch [ORIGFILE [PATCHFILE]]`, `-o OUT`, `-r REJECT`; without a file, the files named in
/// the patch, inside `-d DIR` or the current directory.
pub(super) fn patch(a: &mut Analyzer, args: &[Word<'_>], call: &Call<'_>) -> Vec<String> {
    let spec = Spec {
        short: "dioprBzDFVYg",
        long: &[
            ("directory", true),
            ("input", true),
            ("output", true),
            ("reject-file", true),
            ("strip", true),
            ("prefix", true),
            ("suffix", true),
            ("ifdef", true),
            ("fuzz", true),
            ("version-control", true),
            ("basename-prefix", true),
            ("get", true),
            ("quoting-style", true),
            ("backup", false),
        ],
    };
    let read = opts::scan(args, &spec);
    let mut out: Vec<String> = opts::values(&read, Some('o'), &["output"])
        .iter()
        .chain(&opts::values(&read, Some('r'), &["reject-file"]))
        .map(|v| v.text().to_owned())
        .collect();
    match opts::operands(&read).first() {
        Some(file) => out.push(file.text.clone()),
        None => {
            let dir = opts::values(&read, Some('d'), &["directory"])
                .first()
                .map_or_else(|| ".".to_owned(), |v| v.text().to_owned());
            entries_into(a, call.span.clone(), &dir, "`patch`");
        }
    }
    out
}

/// `7z x|e ARCHIVE -oDIR`: the entries land in DIR (else the current directory).
pub(super) fn seven_zip(a: &mut Analyzer, args: &[Word<'_>], call: &Call<'_>) {
    if !matches!(args.first().and_then(Word::lit), Some("x" | "e")) {
        return;
    }
    let dir = args
        .iter()
        .find_map(|w| w.text.strip_prefix("-o"))
        .unwrap_or(".");
    entries_into(a, call.span.clone(), dir, "`7z x`");
}

/// `cpio -i [-D DIR]`, `pax -r`, `jar x`: entries land in the current directory.
pub(super) fn unpack_here(a: &mut Analyzer, base: &str, args: &[Word<'_>], call: &Call<'_>) {
    let flags = |c: char| {
        args.iter()
            .filter_map(Word::lit)
            .any(|t| t.starts_with('-') && !t.starts_with("--") && t.contains(c))
    };
    let extract = match base {
        "cpio" => flags('i') || args.iter().any(|w| w.lit() == Some("--extract")),
        "pax" => flags('r'),
        _ => args
            .first()
            .and_then(Word::lit)
            .is_some_and(|t| t.trim_start_matches('-').starts_with('x')),
    };
    if !extract {
        return;
    }
    let dir = args
        .windows(2)
        .find(|p| matches!(p[0].lit(), Some("-D" | "--directory")))
        .map(|p| p[1].text.as_str())
        .or_else(|| {
            args.iter()
                .find_map(|w| w.text.strip_prefix("--directory="))
        })
        .unwrap_or(".");
    entries_into(a, call.span.clone(), dir, &format!("`{base}`"));
}

/// `git clone URL DIR`: the repository's files land in DIR.
pub(super) fn git_clone(a: &mut Analyzer, args: &[Word<'_>], call: &Call<'_>) -> Vec<String> {
    let mut k = 0;
    while let Some(t) = args.get(k).and_then(Word::lit) {
        match t {
            "-C" | "-c" | "--git-dir" | "--work-tree" | "--namespace" | "--config-env" => k += 2,
            _ if t.starts_with('-') => k += 1,
            _ => break,
        }
    }
    if args.get(k).and_then(Word::lit) != Some("clone") {
        return Vec::new();
    }
    let spec = Spec {
        short: "obcjuC",
        long: &[
            ("origin", true),
            ("branch", true),
            ("config", true),
            ("depth", true),
            ("reference", true),
            ("separate-git-dir", true),
            ("jobs", true),
            ("upload-pack", true),
            ("template", true),
            ("filter", true),
            ("shallow-since", true),
            ("shallow-exclude", true),
            ("server-option", true),
            ("bundle-uri", true),
            ("ref-format", true),
        ],
    };
    let read = opts::scan(&args[k + 1..], &spec);
    if let Some(dir) = opts::operands(&read).get(1) {
        entries_into(a, call.span.clone(), &dir.text, "`git clone`");
    }
    Vec::new()
}
