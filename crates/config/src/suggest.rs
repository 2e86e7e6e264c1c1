//! "Did you mean …?" for unknown keys, values and event names: a mistyped `tool:` or
//! `failure-mode:` skips its hook, and the warning should say which word was meant.
//!
//! Words are compared after normalising the usual spelling variants to snake case
//! (`failureMode`, `failure-mode`, `Failure Mode` → `failure_mode`). An exact match after that
//! wins. Otherwise a near miss is a known word similar enough by Jaro–Winkler similarity
//! ([`strsim`], the measure clap uses for its own suggestions) that is also a few edits away or
//! shares its first letters; the one fewest edits away is suggested, and none when two are
//! equally few edits away. A few words other tools use
//! as keys for what is a value here (`fail_closed: true`) have fixed suggestions.
//!
//! ```text
//! tool             → tools
//! fail-closed      → failure_mode: fail_closed   (written as a key)
//! timeout_seconds  → timeout
//! PreToolUsee      → PreToolUse
//! ```

/// Least Jaro–Winkler similarity (0 to 1) between a word and the known word it is taken for.
const MIN_SIMILARITY: f64 = 0.8;

/// Longest word compared, in bytes: keys are short, and comparing costs the product of the
/// lengths, so a huge key in a hostile file gets no suggestion instead of a slow one.
const MAX_WORD: usize = 64;

/// Values written as keys, normalised, with the setting they stand for and the key that
/// setting needs among the known words for the suggestion to apply.
const VALUES_AS_KEYS: [(&str, &str, &str); 2] = [
    ("fail_closed", "failure_mode: fail_closed", "failure_mode"),
    ("fail_open", "failure_mode: fail_open", "failure_mode"),
];

/// The known word `word` most likely stands for: the one equal to it once both are
/// normalised, else the most similar one if similar enough; `None` for a word that is already
/// known as written, or is like none of them.
pub(crate) fn closest<'a>(word: &str, known: &[&'a str]) -> Option<&'a str> {
    if word.len() > MAX_WORD || known.contains(&word) {
        return None;
    }
    let word = normalise(word);
    if word.is_empty() {
        return None;
    }
    let normalised: Vec<String> = known.iter().map(|k| normalise(k)).collect();
    if let Some(i) = normalised.iter().position(|k| *k == word) {
        return Some(known[i]);
    }
    // Near misses as (edits, -similarity, index), fewest edits first.
    let mut near_misses: Vec<(usize, f64, usize)> = normalised
        .iter()
        .enumerate()
        .filter_map(|(i, normal)| {
            let similarity = strsim::jaro_winkler(&word, normal);
            (similarity >= MIN_SIMILARITY && near(&word, normal))
                .then(|| (strsim::osa_distance(&word, normal), -similarity, i))
        })
        .collect();
    near_misses.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
    let (edits, _, best) = *near_misses.first()?;
    // Another word as few edits away (`OnToolUse`: `PreToolUse` or `PostToolUse`?) is no
    // suggestion: a wrong one could move a guard to an event where it cannot block.
    let tied = near_misses
        .iter()
        .any(|&(e, _, i)| e == edits && normalised[i] != normalised[best]);
    (!tied).then_some(known[best])
}

/// Jaro–Winkler rates a word high when it merely holds the other (`description` holds
/// `script`): a near miss must also be a few edits away, or share a prefix of a few letters
/// (`prio`, `timeout_seconds`).
fn near(a: &str, b: &str) -> bool {
    let longer = a.chars().count().max(b.chars().count());
    let prefix = a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
    strsim::osa_distance(a, b) <= (longer / 3).max(1) || prefix >= 4
}

/// ` (did you mean `WORD`?)` for the known word `word` most likely stands for, or an empty
/// string.
pub(crate) fn hint(word: &str, known: &[&str]) -> String {
    closest(word, known).map_or_else(String::new, did_you_mean)
}

/// `unknown key `KEY`` plus a [`hint`]; a value written as a key (`fail-closed:`) is told the
/// setting it stands for (`failure_mode: fail_closed`) when that key is among `known`.
pub(crate) fn unknown_key(key: &str, known: &[&str]) -> String {
    let as_value = (key.len() <= MAX_WORD)
        .then(|| normalise(key))
        .and_then(|normal| {
            VALUES_AS_KEYS
                .iter()
                .find(|(value, _, needs)| *value == normal && known.contains(needs))
        });
    let hint = match as_value {
        Some((_, setting, _)) => did_you_mean(setting),
        None => hint(key, known),
    };
    format!("unknown key `{key}`{hint}")
}

fn did_you_mean(word: &str) -> String {
    format!(" (did you mean `{word}`?)")
}

/// Snake case: `-`, blanks and `.` become `_`, a capital after a lower-case letter or digit
/// starts a new `_` word, and everything is lower case.
fn normalise(word: &str) -> String {
    let mut out = String::with_capacity(word.len() + 4);
    let mut after_lower = false;
    for c in word.trim().chars() {
        if matches!(c, '-' | ' ' | '.' | '_') {
            out.push('_');
            after_lower = false;
            continue;
        }
        if c.is_uppercase() && after_lower {
            out.push('_');
        }
        after_lower = c.is_lowercase() || c.is_ascii_digit();
        out.extend(c.to_lowercase());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const ENTRY: [&str; 11] = [
        "script",
        "command",
        "url",
        "llm",
        "class",
        "name",
        "tools",
        "failure_mode",
        "timeout",
        "priority",
        "fire_and_forget",
    ];

    #[test]
    fn spelling_variants_and_near_misses_find_the_key() {
        for (written, meant) in [
            ("tool", "tools"),
            ("Tools", "tools"),
            ("failure-mode", "failure_mode"),
            ("failureMode", "failure_mode"),
            ("FailureMode", "failure_mode"),
            ("failure_mod", "failure_mode"),
            ("fire-and-forget", "fire_and_forget"),
            ("fireAndForget", "fire_and_forget"),
            ("timeout_seconds", "timeout"),
            ("timeoutSeconds", "timeout"),
            ("prio", "priority"),
            ("scrpt", "script"),
        ] {
            assert_eq!(closest(written, &ENTRY), Some(meant), "{written}");
        }
    }

    #[test]
    fn unrelated_or_known_words_get_no_suggestion() {
        for written in ["matcher", "description", "x", "", "hooks", "env", "tools"] {
            assert_eq!(closest(written, &ENTRY), None, "{written}");
        }
        assert_eq!(closest(&"tool".repeat(100), &ENTRY), None);
        // As close to two events: no guess.
        let events = ["PreToolUse", "PostToolUse", "pre_tool_use", "post_tool_use"];
        assert_eq!(closest("OnToolUse", &events), None);
    }

    #[test]
    fn values_written_as_keys_name_the_setting() {
        assert_eq!(
            unknown_key("fail-closed", &ENTRY),
            "unknown key `fail-closed` (did you mean `failure_mode: fail_closed`?)"
        );
        assert_eq!(
            unknown_key("failOpen", &ENTRY),
            "unknown key `failOpen` (did you mean `failure_mode: fail_open`?)"
        );
        // Only where `failure_mode` is a key at all.
        assert_eq!(
            unknown_key("fail_closed", &["hooks"]),
            "unknown key `fail_closed`"
        );
    }

    #[test]
    fn values_and_events_are_suggested_too() {
        assert_eq!(
            closest("fail-closed", &["fail_open", "fail_closed"]),
            Some("fail_closed")
        );
        assert_eq!(
            closest(
                "PreToolUsee",
                &["PreToolUse", "PostToolUse", "pre_tool_use"]
            ),
            Some("PreToolUse")
        );
        assert_eq!(
            closest("pre-tool-use", &["PreToolUse", "pre_tool_use"]),
            Some("PreToolUse")
        );
    }

    #[test]
    fn normalising_makes_snake_case() {
        assert_eq!(normalise("failureMode"), "failure_mode");
        assert_eq!(normalise("fire-and-forget"), "fire_and_forget");
        assert_eq!(normalise("PreToolUse"), "pre_tool_use");
        assert_eq!(normalise(" Base URL "), "base_url");
        assert_eq!(normalise("TIMEOUT"), "timeout");
    }
}
