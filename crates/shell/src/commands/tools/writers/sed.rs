//! The files a sed program writes (`w FILE`, `W FILE`, `s///w FILE`).

use super::super::opts::{self, Spec};
use crate::word::Word;

/// The files a sed program writes with `w FILE`, `W FILE` and the `w FILE` flag of `s///`.
pub(super) fn sed(args: &[Word<'_>]) -> Vec<String> {
    if args.iter().any(|w| w.lit() == Some("--sandbox")) {
        return Vec::new();
    }
    let spec = Spec {
        short: "efl",
        long: &[
            ("expression", true),
            ("file", true),
            ("line-length", true),
            ("in-place", false),
        ],
    };
    let read = opts::scan(args, &spec);
    let mut scripts: Vec<String> = opts::values(&read, Some('e'), &["expression"])
        .iter()
        .map(|v| v.text().to_owned())
        .collect();
    if scripts.is_empty() && opts::values(&read, Some('f'), &["file"]).is_empty() {
        scripts.extend(opts::operands(&read).first().map(|w| w.text.clone()));
    }
    scripts.iter().flat_map(|s| sed_write_files(s)).collect()
}

/// Files named by `w`/`W` commands and `s///w` flags in a sed program.
fn sed_write_files(script: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in script.split('\n') {
        let mut rest = line;
        while !rest.is_empty() {
            let body = skip_sed_address(rest);
            let (file, next) = sed_command(body);
            out.extend(file);
            if next.len() >= rest.len() {
                break;
            }
            rest = next;
        }
    }
    out
}

/// Skips blanks, `;`, braces, `!` and an address (`1`, `$`, `/re/`, `\%re%`, `1,5`, `1~2`).
fn skip_sed_address(s: &str) -> &str {
    let mut rest = s;
    loop {
        let trimmed = rest.trim_start_matches(|c: char| {
            c.is_whitespace()
                || matches!(c, ';' | '{' | '}' | '!' | ',' | '~' | '+' | '$')
                || c.is_ascii_digit()
        });
        let (delim, body) = if let Some(b) = trimmed.strip_prefix('/') {
            ('/', b)
        } else if let Some(b) = trimmed.strip_prefix('\\') {
            match b.chars().next() {
                Some(d) => (d, &b[d.len_utf8()..]),
                None => return "",
            }
        } else {
            return trimmed;
        };
        rest = after_delimited(body, delim);
    }
}

/// The text after the next unescaped `delim` in `s`.
fn after_delimited(s: &str, delim: char) -> &str {
    let mut escaped = false;
    for (k, c) in s.char_indices() {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == delim {
            return &s[k + c.len_utf8()..];
        }
    }
    ""
}

/// One sed command at the start of `s`: the file it writes, if any, and the rest.
fn sed_command(s: &str) -> (Option<String>, &str) {
    let mut chars = s.chars();
    let Some(c) = chars.next() else {
        return (None, "");
    };
    let rest = chars.as_str();
    match c {
        'w' | 'W' => (Some(rest.trim().to_owned()).filter(|f| !f.is_empty()), ""),
        // These take the rest of the line as text or a file name.
        'a' | 'i' | 'c' | 'r' | 'R' | 'e' | 'b' | 't' | 'T' | ':' | '#' | 'q' | 'Q' | 'l' | 'L' => {
            (None, "")
        }
        's' | 'y' => {
            let Some(delim) = rest.chars().next() else {
                return (None, "");
            };
            let after = after_delimited(after_delimited(&rest[delim.len_utf8()..], delim), delim);
            let end = after.find([';', '}']).unwrap_or(after.len());
            let flags = &after[..end];
            match flags.find('w').filter(|_| c == 's') {
                Some(k) => (
                    Some(after[k + 1..].trim().to_owned()).filter(|f| !f.is_empty()),
                    "",
                ),
                None => (None, &after[end..]),
            }
        }
        _ => (None, rest),
    }
}

#[cfg(test)]
mod tests {
    use super::sed_write_files;

    #[test]
    fn files_sed_programs_write() {
        for (script, files) in [
            ("w out.txt", &["out.txt"][..]),
            ("1w /home/u/.bashrc", &["/home/u/.bashrc"]),
            ("/x/W ~/.profile", &["~/.profile"]),
            ("s/a/b/gw ~/.zshrc", &["~/.zshrc"]),
            ("p;s|a|b|w f1\n$w f2", &["f1", "f2"]),
            ("\\%a%w f", &["f"]),
        ] {
            assert_eq!(sed_write_files(script), files, "{script}");
        }
        for script in ["s/w/W/g", "/w/d", "a w x", "y/w/x/", "s/x/y/;p", "r w.txt"] {
            assert!(sed_write_files(script).is_empty(), "{script}");
        }
    }
}
