//! Commands that write to files named in their arguments: `tee`, `cp`, `mv`, `install`,
//! `ln`, `rsync`, `sed -i`, `dd of=`, `curl -o`, `wget -O`, `truncate`, `shred`.

use super::parse_args;
use crate::paths;
use crate::rules::RuleId;
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
                a.written_word(span.clone(), file, &how);
                a.dynamic_write(span.clone(), file, &how);
            }
        }
        "cp" | "mv" | "install" | "ln" | "rsync" | "scp" => copy(a, base, args, call),
        "sed" | "gsed" => sed(a, args, call),
        "dd" => {
            for arg in args {
                if let Some(file) = arg.text.strip_prefix("of=") {
                    if !arg.unknown {
                        a.note_write(file);
                    }
                    a.written(span.clone(), file, "`dd of=`");
                    if arg.unknown {
                        super::destructive::dynamic_target(a, &[arg], call, "`dd of=`");
                    }
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
                    "output-dir",
                ],
            );
            let dir = p.value('\0', "output-dir");
            if let Some(file) = p.value('o', "output") {
                a.written(span.clone(), &joined(dir, file), "`curl -o`");
            }
            if p.has('O', "remote-name") || p.has('\0', "remote-name-all") {
                for url in &p.operands {
                    let file = joined(dir, &url_file_name(&url.text));
                    a.written(span.clone(), &file, "`curl -O`");
                }
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
            } else if let Some(dir) = p.value('P', "directory-prefix") {
                for url in &p.operands {
                    let file = joined(Some(dir), &url_file_name(&url.text));
                    a.written(span.clone(), &file, "`wget -P`");
                }
            }
        }
        "tar" | "bsdtar" | "gtar" => {
            let p = parse_args(
                args,
                "fCbTXgKNVLH",
                &[
                    "file",
                    "directory",
                    "exclude",
                    "files-from",
                    "exclude-from",
                    "format",
                    "owner",
                    "group",
                    "mode",
                ],
            );
            let old_style = args
                .first()
                .and_then(Word::lit)
                .is_some_and(|t| !t.starts_with('-') && t.contains('x'));
            let extract = old_style || p.has('x', "extract") || p.has('\0', "get");
            if extract {
                let dir = p.value('C', "directory").unwrap_or(".");
                entries_into(a, span, dir, "`tar -x`");
            }
        }
        "unzip" => {
            let mut dir = ".";
            for (k, word) in args.iter().enumerate() {
                match word.lit() {
                    Some("-d") => {
                        dir = args.get(k + 1).map_or(".", |w| w.text.as_str());
                    }
                    Some(t) if t.starts_with("-d") => dir = &word.text[2..],
                    _ => {}
                }
            }
            entries_into(a, span, dir, "`unzip`");
        }
        "truncate" | "shred" => {
            let p = parse_args(
                args,
                "srn",
                &["size", "reference", "iterations", "random-source"],
            );
            for file in &p.operands {
                a.written(span.clone(), &file.text, &how);
            }
            if base == "shred" {
                super::destructive::dynamic_target(a, &p.operands, call, "`shred`");
            }
        }
        _ => {}
    }
}

/// The arguments of `cp`, `mv`, `install`, `ln`, `rsync` or `scp`, with the options that take
/// a value known (`-t DIR`, `-S SUFFIX`, `-m MODE`, …).
pub(super) fn parse_copy<'w, 't>(args: &'w [Word<'t>]) -> super::Parsed<'w, 't> {
    parse_args(
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
    )
}

fn copy(a: &mut Analyzer, base: &str, args: &[Word<'_>], call: &Call<'_>) {
    let p = parse_copy(args);
    let target = p.value('t', "target-directory").map(str::to_owned);
    let (dest, sources) = match (&target, p.operands.split_last()) {
        (Some(dir), _) => (dir.clone(), &p.operands[..]),
        (None, Some((last, rest))) => {
            if !last.unknown {
                a.note_write(&last.text);
            }
            (last.text.clone(), rest)
        }
        (None, None) => return,
    };
    let how = format!("`{base}`");
    a.written(call.span.clone(), &dest, &how);
    let contents = match base {
        // `rsync dir/ dest` copies dir's entries.
        "rsync" => |s: &str| s.ends_with('/') || is_dot(s),
        // `cp -r dir/. dest` too; `cp -rT dir dest` merges dir into dest.
        "cp" if p.has('T', "no-target-directory") => |_: &str| true,
        "cp" => is_dot,
        _ => |_: &str| false,
    };
    let recursive = base == "rsync" || p.has('r', "recursive") || p.has('R', "archive");
    let archive = p.short.contains('a');
    if (recursive || archive) && sources.iter().any(|s| contents(&s.text)) {
        entries_into(a, call.span.clone(), &dest, &how);
    }
    let dest = a.resolve(&dest);
    for source in sources {
        if let Some(file) = paths::copied_into(&dest, &source.text) {
            a.written(call.span.clone(), &file, &how);
        }
    }
}

/// `.`, `dir/.`, `dir/./`: a directory named so that a copy takes its entries.
fn is_dot(source: &str) -> bool {
    let s = source.trim_end_matches('/');
    s == "." || s.ends_with("/.")
}

/// `file` inside `dir`, when given.
fn joined(dir: Option<&str>, file: &str) -> String {
    match dir {
        Some(dir) if !file.starts_with(['/', '~']) => format!("{dir}/{file}"),
        _ => file.to_owned(),
    }
}

/// The file name a download of `url` is saved under (`curl -O`, `wget`): the last path
/// segment, `index.html` when there is none.
fn url_file_name(url: &str) -> String {
    let path = url.split(['?', '#']).next().unwrap_or(url);
    let path = path.split_once("://").map_or(path, |(_, rest)| rest);
    match path.split_once('/') {
        Some((_, p)) if !p.rsplit('/').next().unwrap_or_default().is_empty() => {
            p.rsplit('/').next().unwrap_or_default().to_owned()
        }
        _ => "index.html".to_owned(),
    }
}

/// `how` places entries it does not name (an archive's, a directory's contents) in `dir`:
/// into a home directory they can overwrite start-up files and `.ssh`; into `/` or `/etc`,
/// system configuration; elsewhere, a protected directory (`~/.ssh`, `/etc/cron.d`) blocks.
pub(super) fn entries_into(a: &mut Analyzer, span: std::ops::Range<usize>, dir: &str, how: &str) {
    let d = paths::normalize(&a.resolve(dir));
    if d.contains(crate::word::UNKNOWN) {
        return;
    }
    if paths::is_home_dir(&d) {
        a.report(
            RuleId::ShellStartupWrite,
            span,
            format!(
                "{how} places entries it does not name in a home directory (`{d}`): they can overwrite shell start-up files and `.ssh/authorized_keys`"
            ),
        );
    } else if d == "/" || d == "/etc" {
        a.report(
            RuleId::SystemAuthWrite,
            span,
            format!("{how} places entries it does not name in `{d}`, over system configuration"),
        );
    } else if !d.is_empty() {
        a.written(span, &format!("{d}/x"), how);
    }
}

/// `sed -i` (also `-i.bak`, `--in-place`, `-ni`): the files after the script are rewritten.
fn sed(a: &mut Analyzer, args: &[Word<'_>], call: &Call<'_>) {
    let mut in_place = false;
    let mut script_given = false;
    let mut scripts: Vec<String> = Vec::new();
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
                if long.starts_with("expression") {
                    match long.split_once('=') {
                        Some((_, v)) => scripts.push(v.to_owned()),
                        None => scripts.extend(args.get(i).map(|w| w.text.clone())),
                    }
                }
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
                        if c == 'e' {
                            let value = if last {
                                args.get(i).map(|w| w.text.clone())
                            } else {
                                Some(t[k + 2..].to_owned())
                            };
                            scripts.extend(value);
                        }
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
    if !script_given {
        scripts.extend(files.first().map(|w| w.text.clone()));
    }
    if scripts.iter().any(|script| sed_executes(script)) {
        a.report(
            RuleId::InlineCode,
            call.span.clone(),
            "the sed program runs shell commands (GNU `e` command or `s///e` flag)",
        );
    }
    if !in_place {
        return;
    }
    let skip = usize::from(!script_given);
    for file in files.iter().skip(skip) {
        a.written_word(call.span.clone(), file, "`sed -i`");
    }
}

/// Whether a sed program uses GNU sed's `e` command or the `e` flag of `s///`, which run
/// shell commands.
fn sed_executes(script: &str) -> bool {
    let chars: Vec<char> = script.chars().collect();
    let mut i = 0;
    // Reads a regex or replacement delimited by `delim` from `i`; returns the index after it.
    let delimited = |mut i: usize, delim: char| {
        while let Some(&c) = chars.get(i) {
            if c == '\\' {
                i += 2;
                continue;
            }
            i += 1;
            if c == delim {
                break;
            }
        }
        // A backslash ending the program steps past its end.
        i.min(chars.len())
    };
    let to_end = |mut i: usize, stop_at_semicolon: bool| {
        while let Some(&c) = chars.get(i) {
            if c == '\n' || (stop_at_semicolon && c == ';') {
                break;
            }
            i += 1;
        }
        i
    };
    while let Some(&c) = chars.get(i) {
        match c {
            _ if c.is_whitespace()
                || matches!(c, ';' | '{' | '}' | '!' | ',' | '$' | '~' | '+') =>
            {
                i += 1
            }
            _ if c.is_ascii_digit() => i += 1,
            '/' => i = delimited(i + 1, '/'),
            '\\' => match chars.get(i + 1) {
                Some(&d) => i = delimited(i + 2, d),
                None => i += 1,
            },
            'e' => return true,
            's' | 'y' => {
                let Some(&delim) = chars.get(i + 1) else {
                    return false;
                };
                i = delimited(i + 2, delim);
                i = delimited(i, delim);
                let end = to_end(i, true);
                let flags: String = chars[i.min(end)..end].iter().collect();
                let flags = flags.split(['w', '}']).next().unwrap_or_default();
                if c == 's' && flags.contains('e') {
                    return true;
                }
                i = end;
            }
            'a' | 'i' | 'c' => i = to_end(i, false),
            _ => i = to_end(i + 1, true),
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::sed_executes;

    #[test]
    fn regression_a_backslash_ending_a_sed_program_indexed_past_its_end() {
        // Found by the `analyze` fuzz target: `y` and `s` read their two parts, and a
        // backslash as the last character skipped two.
        assert!(!sed_executes("ys-_u-Kr=\0\\\\6\u{7}nnF\\\\"));
        assert!(!sed_executes("s/a/b\\"));
        assert!(!sed_executes("y/a\\"));
        assert!(sed_executes("s/a/b/e"));
    }

    proptest::proptest! {
        #[test]
        fn any_sed_program_is_read_without_panicking(script in "[sy/\\\\e;{}!aic0-9 \n-]{0,24}") {
            let _ = sed_executes(&script);
        }
    }

    #[test]
    fn sed_programs_that_run_commands() {
        for script in [
            "1e rm -rf ~",
            "s/x/id/e",
            "e",
            "/a/,/b/ { s|x|y|ge }",
            "2!e id",
            "s/a\\/b/c/e",
        ] {
            assert!(sed_executes(script), "{script}");
        }
        for script in [
            "s/e/E/g",
            "/e/d",
            "s/x/y/w out.txt",
            "a echo e",
            "y/abc/efg/",
            "1d;$d",
            "s/a/b/;p",
        ] {
            assert!(!sed_executes(script), "{script}");
        }
    }
}
