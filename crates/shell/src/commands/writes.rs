//! Commands that write to files named in their arguments: `tee`, `cp`, `mv`, `install`,
//! `ln`, `rsync`, `sed -i`, `dd of=`, `curl -o`, `wget -O`, `truncate`, `shred`.

use super::parse_args;
use crate::paths;
use crate::walk::{Analyzer, Call};
use crate::word::Word;

/// Checks the files `base` writes.
pub(super) fn check(a: &mut Analyzer, base: &str, args: &[Word<'_>], call: &Call<'_>) {
    let how = format!("`{base}`");
    let span = call.span.clone();
    match base {
        "tee" => {
            let p = parse_args(args, "", &[]);
            for file in &p.operands {
                a.written(span.clone(), &file.text, &how);
            }
        }
        "cp" | "mv" | "install" | "ln" | "rsync" | "scp" => copy(a, base, args, call),
        "sed" | "gsed" => sed(a, args, call),
        "dd" => {
            for arg in args {
                if let Some(file) = arg.text.strip_prefix("of=") {
                    a.written(span.clone(), file, "`dd of=`");
                }
            }
        }
        "curl" => {
            let p = parse_args(
                args,
                "oHdXuAeEKrTwzbcFmQ",
                &[
                    "output",
                    "header",
                    "data",
                    "request",
                    "user",
                    "config",
                    "url",
                    "user-agent",
                ],
            );
            if let Some(file) = p.value('o', "output") {
                a.written(span, file, "`curl -o`");
            }
        }
        "wget" => {
            let p = parse_args(
                args,
                "OoaPeUtTwQ",
                &["output-document", "output-file", "directory-prefix"],
            );
            if let Some(file) = p.value('O', "output-document") {
                a.written(span, file, "`wget -O`");
            }
        }
        "truncate" | "shred" => {
            let p = parse_args(
                args,
                "srnu",
                &["size", "reference", "iterations", "random-source"],
            );
            for file in &p.operands {
                a.written(span.clone(), &file.text, &how);
            }
        }
        _ => {}
    }
}

fn copy(a: &mut Analyzer, base: &str, args: &[Word<'_>], call: &Call<'_>) {
    let p = parse_args(
        args,
        "tSmogeB",
        &[
            "target-directory",
            "suffix",
            "mode",
            "owner",
            "group",
            "rsh",
            "backup-dir",
        ],
    );
    let target = p.value('t', "target-directory").map(str::to_owned);
    let (dest, sources) = match (&target, p.operands.split_last()) {
        (Some(dir), _) => (dir.clone(), &p.operands[..]),
        (None, Some((last, rest))) => (last.text.clone(), rest),
        (None, None) => return,
    };
    let how = format!("`{base}`");
    a.written(call.span.clone(), &dest, &how);
    for source in sources {
        if let Some(file) = paths::copied_into(&dest, &source.text) {
            a.written(call.span.clone(), &file, &how);
        }
    }
}

/// `sed -i` (also `-i.bak`, `--in-place`, `-ni`): the files after the script are rewritten.
fn sed(a: &mut Analyzer, args: &[Word<'_>], call: &Call<'_>) {
    let mut in_place = false;
    let mut script_given = false;
    let mut files = Vec::new();
    let mut i = 0;
    while let Some(word) = args.get(i) {
        i += 1;
        let Some(t) = word.lit() else {
            files.push(word);
            continue;
        };
        if let Some(long) = t.strip_prefix("--") {
            in_place |= long.starts_with("in-place");
            if long.starts_with("expression") || long.starts_with("file") {
                script_given = true;
                i += usize::from(!long.contains('='));
            }
            continue;
        }
        if t.len() > 1 && t.starts_with('-') {
            for (k, c) in t[1..].char_indices() {
                let last = k + 2 == t.len();
                match c {
                    'i' => {
                        in_place = true;
                        break;
                    }
                    'e' | 'f' => {
                        script_given = true;
                        i += usize::from(last);
                        break;
                    }
                    'l' => {
                        i += usize::from(last);
                        break;
                    }
                    _ => {}
                }
            }
            continue;
        }
        files.push(word);
    }
    if !in_place {
        return;
    }
    let skip = usize::from(!script_given);
    for file in files.iter().skip(skip) {
        a.written(call.span.clone(), &file.text, "`sed -i`");
    }
}
