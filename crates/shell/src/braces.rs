//! Bash brace expansion of arguments (`rm {-rf,/}` is `rm -rf /`): comma lists and `a..b`
//! sequences, nested, bounded, in time linear in the word per expansion step.

use crate::limits::{MAX_BRACE_BYTES, MAX_BRACE_WORDS};

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
/// than [`MAX_BRACE_WORDS`] words or [`MAX_BRACE_BYTES`] bytes.
pub(crate) fn expand(text: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut bytes = 0;
    expand_into(text, &mut out, &mut bytes, 0)?;
    out.retain(|w| !w.is_empty());
    Some(out)
}

fn expand_into(text: &str, out: &mut Vec<String>, bytes: &mut usize, depth: usize) -> Option<()> {
    if depth > 32 {
        return None;
    }
    let Some((open, close, alts)) = first_expansion(text)? else {
        *bytes += text.len();
        if out.len() >= MAX_BRACE_WORDS || *bytes > MAX_BRACE_BYTES {
            return None;
        }
        out.push(text.to_owned());
        return Some(());
    };
    let (pre, post) = (&text[..open], &text[close + 1..]);
    for alt in alts {
        expand_into(&format!("{pre}{alt}{post}"), out, bytes, depth + 1)?;
    }
    Some(())
}

/// The first valid brace expression: its `{` and `}` and its alternatives. `Some(None)` when
/// there is none, `None` when a sequence is too long.
///
/// Every `{` not after `$` is a candidate, in order; its `}` is the first one at its level
/// (braces after a backslash do not count), and it is valid with a comma at that level or a
/// sequence inside. One pass computes the levels, the next higher level and the next comma
/// at the same level for every byte, so this is linear, not a scan per candidate.
#[allow(clippy::type_complexity)]
fn first_expansion(text: &str) -> Option<Option<(usize, usize, Vec<String>)>> {
    let bytes = text.as_bytes();
    if !bytes.contains(&b'{') {
        return Some(None);
    }
    let (level, comma) = levels(bytes);
    let closes = next_higher(&level);
    let commas = next_comma_at_level(&level, &comma);
    for open in (0..bytes.len()).filter(|&i| bytes[i] == b'{') {
        if open > 0 && bytes[open - 1] == b'$' {
            continue;
        }
        let Some(close) = closes[open] else { continue };
        if commas[open].is_some_and(|c| c < close) {
            let mut alts = Vec::new();
            let mut start = open + 1;
            let at_level = (open + 1..close).filter(|&c| comma[c] && level[c] == level[open]);
            for c in at_level.chain(std::iter::once(close)) {
                alts.push(text[start..c].to_owned());
                start = c + 1;
            }
            return Some(Some((open, close, alts)));
        }
        let body = &text[open + 1..close];
        if could_be_sequence(body)
            && let Some(seq) = sequence(body)
        {
            return Some(Some((open, close, seq?)));
        }
    }
    Some(None)
}

/// Per byte: closing minus opening braces up to and including it (escaped ones and the
/// backslashes escaping them do not count), and whether it is an unescaped comma.
fn levels(bytes: &[u8]) -> (Vec<i64>, Vec<bool>) {
    let mut level = Vec::with_capacity(bytes.len());
    let mut comma = vec![false; bytes.len()];
    let mut d = 0i64;
    let mut escaped = false;
    for (i, &b) in bytes.iter().enumerate() {
        if escaped {
            escaped = false;
        } else {
            match b {
                b'\\' => escaped = true,
                b'{' => d -= 1,
                b'}' => d += 1,
                b',' => comma[i] = true,
                _ => {}
            }
        }
        level.push(d);
    }
    (level, comma)
}

/// Per byte: the first later byte at a higher level (the `}` closing a `{` there).
fn next_higher(level: &[i64]) -> Vec<Option<usize>> {
    let mut next = vec![None; level.len()];
    let mut stack: Vec<usize> = Vec::new();
    for i in (0..level.len()).rev() {
        while stack.last().is_some_and(|&j| level[j] <= level[i]) {
            stack.pop();
        }
        next[i] = stack.last().copied();
        stack.push(i);
    }
    next
}

/// Per byte: the first later unescaped comma at the same level.
fn next_comma_at_level(level: &[i64], comma: &[bool]) -> Vec<Option<usize>> {
    let mut next = vec![None; level.len()];
    let mut nearest: std::collections::HashMap<i64, usize> = std::collections::HashMap::new();
    for i in (0..level.len()).rev() {
        next[i] = nearest.get(&level[i]).copied();
        if comma[i] {
            nearest.insert(level[i], i);
        }
    }
    next
}

/// Whether `body` may be a sequence (`1..5`, `a..e..2`) at all: only then is it split. Cheap:
/// it stops at the first character no number sequence has, and letter sequences are short.
fn could_be_sequence(body: &str) -> bool {
    body.len() <= 32
        || body
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'+' | b'-' | b'.'))
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

    /// The former scan from every `{` (quadratic): the reference the linear one must match.
    #[allow(clippy::type_complexity)]
    fn first_expansion_by_scanning(text: &str) -> Option<Option<(usize, usize, Vec<String>)>> {
        let bytes = text.as_bytes();
        let mut from = 0;
        while let Some(k) = text[from..].find('{') {
            let open = from + k;
            from = open + 1;
            if open > 0 && bytes[open - 1] == b'$' {
                continue;
            }
            let (mut depth, mut commas, mut close) = (0usize, Vec::new(), None);
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

    proptest::proptest! {
        #[test]
        fn linear_first_expansion_matches_the_scan(text in r"[{},.\\$a1-]{0,40}") {
            proptest::prop_assert_eq!(first_expansion(&text), first_expansion_by_scanning(&text));
        }
    }

    #[test]
    fn regression_unclosed_braces_expand_in_linear_time() {
        // 60,000 `{` took seconds: every one was scanned to the end.
        let text = "{".repeat(60_000);
        assert_eq!(expand(&text).unwrap(), std::slice::from_ref(&text));
        let nested = format!("{}{}", "{0".repeat(20_000), "}".repeat(20_000));
        assert_eq!(expand(&nested).unwrap(), std::slice::from_ref(&nested));
    }

    #[test]
    fn expansions_past_the_byte_limit_are_refused() {
        let long = "x".repeat(MAX_BRACE_BYTES / 2 - 8);
        assert!(expand(&format!("{long}{{a,b,c}}")).is_none());
        assert_eq!(expand(&format!("{{a,b}}{long}")).unwrap().len(), 2);
    }
}
