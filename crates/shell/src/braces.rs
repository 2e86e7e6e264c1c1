//! Bash brace expansion of arguments (`rm {-rf,/}` is `rm -rf /`): comma lists and `a..b`
//! sequences, nested, bounded.

/// Most words one word may expand into; beyond it the analysis stops (`analysis-limit`).
pub(crate) const MAX_BRACE_WORDS: usize = 256;

/// Whether `raw` (a word's source text) has a `{` outside quotes and not after `$`.
pub(crate) fn has_unquoted_brace(raw: &str) -> bool {
    let bytes = raw.as_bytes();
    let mut i = 0;
    let mut quote: Option<u8> = None;
    while let Some(&b) = bytes.get(i) {
        match (quote, b) {
            (Some(b'\''), b'\'') | (Some(b'"'), b'"') => quote = None,
            (Some(b'\''), _) => {}
            (_, b'\\') => i += 1,
            (None, b'\'' | b'"') => quote = Some(b),
            (None, b'{') if i == 0 || bytes[i - 1] != b'$' => return true,
            _ => {}
        }
        i += 1;
    }
    false
}

/// The words `text` expands into (empty words dropped), or `None` when there would be more
/// than [`MAX_BRACE_WORDS`].
pub(crate) fn expand(text: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    expand_into(text, &mut out, 0)?;
    out.retain(|w| !w.is_empty());
    Some(out)
}

fn expand_into(text: &str, out: &mut Vec<String>, depth: usize) -> Option<()> {
    if depth > 32 {
        return None;
    }
    let Some((open, close, alts)) = first_expansion(text)? else {
        if out.len() >= MAX_BRACE_WORDS {
            return None;
        }
        out.push(text.to_owned());
        return Some(());
    };
    let (pre, post) = (&text[..open], &text[close + 1..]);
    for alt in alts {
        expand_into(&format!("{pre}{alt}{post}"), out, depth + 1)?;
    }
    Some(())
}

/// The first valid brace expression: its `{` and `}` and its alternatives. `Some(None)` when
/// there is none, `None` when a sequence is too long.
#[allow(clippy::type_complexity)]
fn first_expansion(text: &str) -> Option<Option<(usize, usize, Vec<String>)>> {
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(k) = text[from..].find('{') {
        let open = from + k;
        from = open + 1;
        if open > 0 && bytes[open - 1] == b'$' {
            continue;
        }
        let mut depth = 0usize;
        let mut commas = Vec::new();
        let mut close = None;
        let mut i = open + 1;
        while let Some(&b) = bytes.get(i) {
            match b {
                b'\\' => i += 1,
                b'{' => depth += 1,
                b'}' if depth == 0 => {
                    close = Some(i);
                    break;
                }
                b'}' => depth -= 1,
                b',' if depth == 0 => commas.push(i),
                _ => {}
            }
            i += 1;
        }
        let Some(close) = close else { continue };
        if !commas.is_empty() {
            let mut alts = Vec::new();
            let mut start = open + 1;
            for c in commas.into_iter().chain(std::iter::once(close)) {
                alts.push(text[start..c].to_owned());
                start = c + 1;
            }
            return Some(Some((open, close, alts)));
        }
        if let Some(seq) = sequence(&text[open + 1..close]) {
            return Some(Some((open, close, seq?)));
        }
    }
    Some(None)
}

/// `a..b[..step]` over integers or single letters: `Some(None)` when too long.
fn sequence(body: &str) -> Option<Option<Vec<String>>> {
    let parts: Vec<&str> = body.split("..").collect();
    if !(2..=3).contains(&parts.len()) {
        return None;
    }
    let step: i64 = match parts.get(2) {
        Some(s) => s.parse::<i64>().ok()?.checked_abs()?.max(1),
        None => 1,
    };
    let (a, b) = (parts[0], parts[1]);
    let (start, end, letters) = match (a.parse::<i64>(), b.parse::<i64>()) {
        (Ok(x), Ok(y)) => (x, y, false),
        _ => {
            let (mut x, mut y) = (a.chars(), b.chars());
            match (x.next(), x.next(), y.next(), y.next()) {
                (Some(p), None, Some(q), None) if p.is_ascii() && q.is_ascii() => {
                    (i64::from(p as u8), i64::from(q as u8), true)
                }
                _ => return None,
            }
        }
    };
    let count = start.abs_diff(end) / step.unsigned_abs() + 1;
    if count > MAX_BRACE_WORDS as u64 {
        return Some(None);
    }
    let dir = if end >= start { step } else { -step };
    let mut out = Vec::new();
    let mut v = start;
    for _ in 0..count {
        out.push(if letters {
            u8::try_from(v)
                .map(|c| char::from(c).to_string())
                .unwrap_or_default()
        } else {
            v.to_string()
        });
        v += dir;
    }
    Some(Some(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expands_like_bash() {
        let e = |t: &str| expand(t).unwrap();
        assert_eq!(e("{-rf,/}"), ["-rf", "/"]);
        assert_eq!(e("{-c,}"), ["-c"]);
        assert_eq!(e("a{b,c{d,e}}f"), ["abf", "acdf", "acef"]);
        assert_eq!(e("{1..3}"), ["1", "2", "3"]);
        assert_eq!(e("{a..c}x"), ["ax", "bx", "cx"]);
        assert_eq!(e("{5..1..2}"), ["5", "3", "1"]);
        assert_eq!(e("{}"), ["{}"]);
        assert_eq!(e("{x}"), ["{x}"]);
        assert_eq!(e("${X}"), ["${X}"]);
        assert!(expand("{1..1000}").is_none());
        assert!(expand("{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}").is_none());
        assert!(has_unquoted_brace("x{a,b}"));
        assert!(!has_unquoted_brace("'{a,b}'"));
        assert!(!has_unquoted_brace("\"{a,b}\""));
        assert!(!has_unquoted_brace("${X}"));
    }
}
