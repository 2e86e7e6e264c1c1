//! Downloaded code run in two steps: a file a download wrote earlier in the same text
//! (`curl -o x.sh URL`, `curl URL > x.py`, `wget URL`, `wget -O x URL`) run by a shell, an
//! interpreter, `source`, or by its path (`chmod +x x.sh && ./x.sh`) is `remote-script-exec`,
//! like `curl … | sh`.

use crate::commands::code::is_shell;
use crate::commands::interpreters::{interpreter, read_interpreter};
use crate::paths::normalize;
use crate::rules::RuleId;
use crate::syntax;
use crate::walk::{Analyzer, Call, Cx};
use crate::word::{UNKNOWN, Word};

/// Downloads remembered per text: enough for any real command line.
const MAX_DOWNLOADS: usize = 64;

pub(super) fn check(a: &mut Analyzer, cx: Cx<'_, '_>, base: &str, w: &[Word<'_>], call: &Call<'_>) {
    if matches!(
        base,
        "curl" | "wget" | "fetch" | "aria2c" | "http" | "https" | "xh" | "lwp-download"
    ) {
        for file in downloaded(cx, base, &w[1..], call) {
            remember(cx, &a.resolve(&file));
        }
        return;
    }
    if cx.src.downloads.borrow().is_empty() {
        return;
    }
    let mut run = Vec::new();
    if w[0].text.contains('/') {
        run.push(&w[0]);
    }
    run.extend(script(base, w));
    for word in run {
        let path = normalize(&a.resolve(&word.text));
        let cost = cx.src.downloads.borrow().len();
        if a.budget.charge(cost, word.span.clone()) && cx.src.downloads.borrow().contains(&path) {
            a.report(
                RuleId::RemoteScriptExec,
                call.span.clone(),
                format!(
                    "`{base}` runs `{}`, downloaded earlier in the command",
                    super::shown(&word.text)
                ),
            );
        }
    }
}

fn remember(cx: Cx<'_, '_>, file: &str) {
    let mut downloads = cx.src.downloads.borrow_mut();
    if downloads.len() < MAX_DOWNLOADS && !file.contains(UNKNOWN) {
        downloads.push(normalize(file));
    }
}

/// The script a shell, an interpreter or `source` runs.
fn script<'w, 't>(base: &str, w: &'w [Word<'t>]) -> Option<&'w Word<'t>> {
    if matches!(base, "source" | ".") {
        return w.get(1);
    }
    if is_shell(base) {
        let mut i = 1;
        while let Some(t) = w.get(i).and_then(Word::lit) {
            if t.contains('c') && t.starts_with('-') && !t.starts_with("--") {
                return None;
            }
            if !t.starts_with(['-', '+']) {
                break;
            }
            i += if t.starts_with('-') && t.contains('o') && !t.starts_with("--") {
                2
            } else {
                1
            };
        }
        return w.get(i);
    }
    let read = read_interpreter(interpreter(base)?, w);
    if read.inline.is_some() || read.stdin {
        return None;
    }
    w.get(read.operands)
}

/// The files a download writes: `-o`/`-O`/`--output-document`, the URL's file name, and
/// `>`/`>>` redirections.
fn downloaded(cx: Cx<'_, '_>, base: &str, args: &[Word<'_>], call: &Call<'_>) -> Vec<String> {
    let mut out = Vec::new();
    let urls: Vec<&str> = args
        .iter()
        .map(|x| x.text.as_str())
        .filter(|t| t.contains("://"))
        .collect();
    let value = |names: &[&str]| {
        args.windows(2)
            .find(|p| names.contains(&p[0].text.as_str()))
            .map(|p| p[1].text.clone())
            .or_else(|| {
                args.iter().find_map(|x| {
                    names
                        .iter()
                        .filter(|n| n.starts_with("--"))
                        .find_map(|n| x.text.strip_prefix(&format!("{n}=")).map(str::to_owned))
                })
            })
    };
    match base {
        "curl" => {
            out.extend(value(&["-o", "--output"]));
            if args
                .iter()
                .any(|x| matches!(x.text.as_str(), "-O" | "--remote-name" | "-JO" | "-OJ"))
            {
                let dir = value(&["--output-dir"]);
                out.extend(
                    urls.iter()
                        .map(|u| joined(dir.as_deref(), &url_file_name(u))),
                );
            }
        }
        "wget" => match value(&["-O", "--output-document"]) {
            Some(file) => out.push(file),
            None => {
                let dir = value(&["-P", "--directory-prefix"]);
                out.extend(
                    urls.iter()
                        .map(|u| joined(dir.as_deref(), &url_file_name(u))),
                );
            }
        },
        _ => out.extend(value(&["-o", "--output", "--out"])),
    }
    for redirect in &call.redirects {
        let writes = syntax::redirect_operator(&cx.src.text, *redirect)
            .is_some_and(|op| op.contains('>') && !op.contains('&'));
        let mut cursor = redirect.walk();
        let dest = redirect
            .children_by_field_name("destination", &mut cursor)
            .next();
        if let Some(dest) = dest.filter(|_| writes) {
            out.push(Word::read(cx.src, dest).text);
        }
    }
    out
}

fn joined(dir: Option<&str>, file: &str) -> String {
    match dir {
        Some(d) => format!("{d}/{file}"),
        None => file.to_owned(),
    }
}

/// The file name a download of `url` is saved under: the last path segment, `index.html`
/// when there is none.
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
