//! Builtins that give variables or positional parameters values: `set --`, `shift`, `read`,
//! `printf -v`, `mapfile`, `getopts`. What they assign is recorded like an assignment (a
//! static value when it can be known, else unknown), so that later words see it.

use super::parse_args;
use crate::source::Positional;
use crate::walk::{Analyzer, Call, Cx, Stdin};
use crate::word::{FIELD, UNKNOWN, Word, is_name};

/// Records what `base` assigns, if it is one of these builtins.
pub(super) fn check(
    a: &mut Analyzer,
    cx: Cx<'_, '_>,
    base: &str,
    words: &[Word<'_>],
    call: &Call<'_>,
) {
    let args = &words[1..];
    match base {
        "set" => set(cx, args),
        "shift" => shift(cx, args),
        "read" => read(a, cx, args, call),
        "printf" => printf(a, cx, args),
        "mapfile" | "readarray" => {
            let p = parse_args(args, "dnOsuCc", &[]);
            let name = p.operands.last().map_or("MAPFILE", |w| w.text.as_str());
            forget(a, cx, name);
        }
        "getopts" => {
            if let Some(name) = args.get(1) {
                forget(a, cx, &name.text);
            }
        }
        _ => {}
    }
}

/// The variable `name` now holds something only known at run time.
fn forget(a: &mut Analyzer, cx: Cx<'_, '_>, name: &str) {
    let name = name.split('[').next().unwrap_or_default();
    if is_name(name) {
        cx.src.assign(name, None);
        a.tracked.assigned(name, false);
    }
}

/// `set [OPTION]… [--] [ARG]…`: with arguments (or `--`), they become `$1`, `$2`, ….
fn set(cx: Cx<'_, '_>, args: &[Word<'_>]) {
    let mut i = 0;
    let mut given = false;
    while let Some(w) = args.get(i) {
        let t = w.text.as_str();
        if w.unknown || !(t.starts_with('-') || t.starts_with('+')) {
            given = true;
            break;
        }
        i += 1;
        if t == "--" || t == "-" {
            given = true;
            break;
        }
        if t == "-o" || t == "+o" {
            i += 1;
        }
    }
    if !given {
        return;
    }
    let params = &args[i.min(args.len())..];
    let value = params
        .iter()
        .all(|w| !w.unknown)
        .then(|| join(params.iter().map(|w| w.text.as_str())));
    cx.src.assign("@", value);
}

/// `shift [N]`: drops the first N positional parameters.
fn shift(cx: Cx<'_, '_>, args: &[Word<'_>]) {
    let n = match args.first() {
        None => Some(1),
        Some(w) => w.lit().and_then(|t| t.parse::<usize>().ok()),
    };
    let current: Option<Vec<String>> = match cx.src.vars.borrow().get("@") {
        Some(Some(list)) => Some(list.split(FIELD).map(str::to_owned).collect()),
        Some(None) => None,
        None => from_args(&cx.src.args),
    };
    let shifted = current
        .zip(n)
        .map(|(list, n)| join(list.iter().skip(n).map(String::as_str)));
    cx.src.assign("@", shifted);
}

/// The parameters of a `sh -c CODE NAME ARG…` text, when all are static.
fn from_args(args: &[Positional]) -> Option<Vec<String>> {
    let params = args.get(1..).unwrap_or_default();
    params
        .iter()
        .all(|p| !p.unknown && !p.any)
        .then(|| params.iter().map(|p| p.text.clone()).collect())
}

fn join<'v>(values: impl Iterator<Item = &'v str>) -> String {
    values.collect::<Vec<_>>().join(&FIELD.to_string())
}

/// `read [-r] [-a ARRAY] [NAME]…`: from a static here-string or heredoc the names get its
/// words (split on `IFS`, the last name taking the rest); from anything else they are
/// unknown.
fn read(a: &mut Analyzer, cx: Cx<'_, '_>, args: &[Word<'_>], call: &Call<'_>) {
    let p = parse_args(args, "adinNptu", &[]);
    let array = p.value('a', "");
    let names: Vec<&str> = match (array, p.operands.is_empty()) {
        (Some(array), _) => vec![array],
        (None, true) => vec!["REPLY"],
        (None, false) => p.operands.iter().map(|w| w.text.as_str()).collect(),
    };
    for name in &p.operands {
        a.name_argument(cx, name);
    }
    let input = here_input(cx, call).filter(|_| !p.short.contains('d'));
    let Some(line) = input else {
        for name in names {
            forget(a, cx, name);
        }
        return;
    };
    let ifs = prefix_ifs(cx, call).unwrap_or_else(|| {
        cx.src
            .vars
            .borrow()
            .get("IFS")
            .cloned()
            .flatten()
            .unwrap_or_else(|| " \t\n".to_owned())
    });
    let fields: Vec<&str> = line
        .split(|c| ifs.contains(c))
        .filter(|f| !f.is_empty())
        .collect();
    if array.is_some() {
        assign(a, cx, names[0], Some(join(fields.iter().copied())));
        return;
    }
    for (k, name) in names.iter().enumerate() {
        let value = if k + 1 == names.len() {
            // The last name takes the rest of the line (approximately: rejoined by blanks).
            fields.get(k..).map_or(String::new(), |rest| rest.join(" "))
        } else {
            fields.get(k).map_or(String::new(), |f| (*f).to_owned())
        };
        assign(a, cx, name, Some(value));
    }
}

fn assign(a: &mut Analyzer, cx: Cx<'_, '_>, name: &str, value: Option<String>) {
    if is_name(name) {
        let numeric = value.as_deref().is_some_and(|v| v.parse::<i64>().is_ok());
        cx.src.assign(name, value);
        a.tracked.assigned(name, numeric);
    } else {
        forget(a, cx, name);
    }
}

/// The first line of a static here-string or heredoc the command reads.
fn here_input(cx: Cx<'_, '_>, call: &Call<'_>) -> Option<String> {
    let Stdin::Here(node) = call.stdin else {
        return None;
    };
    let text = if node.kind() == "herestring_redirect" {
        let word = Word::read(cx.src, node.named_child(0)?);
        (!word.unknown).then_some(word.text)?
    } else {
        let body = crate::syntax::named_children(node)
            .into_iter()
            .find(|c| c.kind() == "heredoc_body")?;
        crate::word::mapped_heredoc(cx.src, node, body)?.text
    };
    Some(text.lines().next().unwrap_or_default().to_owned())
}

/// The value of an `IFS=… cmd` prefix of the command, when static.
fn prefix_ifs(cx: Cx<'_, '_>, call: &Call<'_>) -> Option<String> {
    call.prefix.iter().rev().find_map(|assignment| {
        let name = assignment.child_by_field_name("name")?;
        if &cx.src.text[name.byte_range()] != "IFS" {
            return None;
        }
        match assignment.child_by_field_name("value") {
            None => Some(String::new()),
            Some(v) => {
                let word = Word::read(cx.src, v);
                Some(if word.unknown {
                    UNKNOWN.to_string()
                } else {
                    word.text
                })
            }
        }
    })
}

/// `printf -v NAME FORMAT [ARG]…`: NAME gets the formatted text when the format only holds
/// `%s` (and `%%`) and everything is static; else it is unknown. A subscript in NAME is
/// arithmetic.
fn printf(a: &mut Analyzer, cx: Cx<'_, '_>, args: &[Word<'_>]) {
    let mut i = 0;
    let mut name = None;
    while let Some(t) = args.get(i).and_then(Word::lit) {
        if t == "--" {
            i += 1;
            break;
        }
        match t.strip_prefix("-v") {
            Some("") => {
                name = args.get(i + 1);
                i += 2;
            }
            Some(_) => break,
            None => break,
        }
    }
    let Some(name) = name else { return };
    a.name_argument(cx, name);
    if name.unknown {
        return;
    }
    let value = format(args.get(i..).unwrap_or_default());
    assign(a, cx, &name.text, value);
}

/// The output of `printf FORMAT ARG…` when the format holds only `%s` and `%%` and all is
/// static (the format is reused while arguments remain, as printf does).
fn format(args: &[Word<'_>]) -> Option<String> {
    let (format, rest) = args.split_first()?;
    if format.unknown || rest.iter().any(|w| w.unknown) || format.text.contains('\\') {
        return None;
    }
    let f = format.text.as_str();
    let specs = f.matches("%s").count();
    if f.replace("%s", "").replace("%%", "").contains('%') {
        return None;
    }
    let mut out = String::new();
    let mut values = rest.iter().map(|w| w.text.as_str());
    loop {
        let mut pieces = f.split("%s");
        out.push_str(&pieces.next().unwrap_or_default().replace("%%", "%"));
        for piece in pieces {
            out.push_str(values.next().unwrap_or_default());
            out.push_str(&piece.replace("%%", "%"));
        }
        if specs == 0 || values.len() == 0 {
            return Some(out);
        }
    }
}
