//! `HOOK_PAYLOAD` truncation: size bound, validity, what survives.

use std::borrow::Cow;

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use tollgate_core::truncate::{HOOK_PAYLOAD_MAX_BYTES, MIN_MAX_BYTES, truncate_payload};

/// Compact JSON of `value`, the size `truncate_payload` bounds.
#[allow(clippy::unwrap_used)]
fn compact(value: &Value) -> String {
    serde_json::to_string(value).unwrap()
}

/// Checks the invariants every truncated payload must hold and returns its compact JSON.
#[allow(clippy::unwrap_used)]
fn assert_valid_within(out: &Value, max_bytes: usize) -> String {
    let text = compact(out);
    assert!(
        text.len() <= max_bytes,
        "{} bytes > {max_bytes}",
        text.len()
    );
    assert!(std::str::from_utf8(text.as_bytes()).is_ok());
    assert_eq!(&serde_json::from_str::<Value>(&text).unwrap(), out);
    text
}

fn pre_tool_use(tool_input: Value) -> Value {
    json!({
        "event": "pre_tool_use", "session_id": "s1", "run_id": "r1",
        "tool_name": "bash_code_execute_tool", "tool_call_id": "call_1",
        "tool_input": tool_input,
    })
}

// serde_json::Value cannot hold a lone surrogate: `"\ud800"` in raw JSON is rejected by
// serde_json at parse time, and a Rust `String` cannot contain one. What can reach a Value is
// the escape's text, these 6 characters, which must pass through untouched.
const LONE_SURROGATE_TEXT: &str = "\\ud800";
const TRICKY: [&str; 3] = ["nul:\u{0}:end", "rtl:\u{202E}:end", LONE_SURROGATE_TEXT];

#[test]
fn cjk_string_of_300_kb_is_cut_to_the_limit_and_stays_valid_json() {
    let payload = pre_tool_use(json!({"command": "漢字".repeat(50_000)}));
    assert!(compact(&payload).len() > 290_000);
    let out = truncate_payload(&payload, HOOK_PAYLOAD_MAX_BYTES);
    let text = assert_valid_within(&out, HOOK_PAYLOAD_MAX_BYTES);
    assert!(
        text.len() > HOOK_PAYLOAD_MAX_BYTES - 100,
        "cap should be close to the limit"
    );
    assert_eq!(out["payload_truncated"], true);
    assert_eq!(out["event"], "pre_tool_use");
    assert_eq!(out["tool_name"], "bash_code_execute_tool");
    assert_eq!(out["session_id"], "s1");
    let command = out["tool_input"]["command"].as_str().unwrap();
    assert!(command.starts_with("漢字漢字"));
    assert!(
        command.contains("…[truncated "),
        "{}",
        &command[command.len() - 40..]
    );
}

#[test]
fn payload_that_fits_is_returned_borrowed_and_without_flag() {
    let payload = pre_tool_use(json!({"command": "ls"}));
    let out = truncate_payload(&payload, HOOK_PAYLOAD_MAX_BYTES);
    assert!(matches!(out, Cow::Borrowed(_)));
    assert_eq!(*out, payload);
    assert!(out.get("payload_truncated").is_none());
}

#[test]
fn tricky_short_strings_survive_when_another_field_is_cut() {
    let mut input = Map::new();
    for (i, s) in TRICKY.iter().enumerate() {
        input.insert(format!("tricky{i}"), json!(s));
    }
    input.insert("long".into(), json!("x".repeat(10_000)));
    let payload = pre_tool_use(Value::Object(input));
    let out = truncate_payload(&payload, 2_000);
    assert_valid_within(&out, 2_000);
    assert_eq!(out["payload_truncated"], true);
    for (i, s) in TRICKY.iter().enumerate() {
        assert_eq!(out["tool_input"][format!("tricky{i}")], *s);
    }
    assert!(out["tool_input"]["long"].as_str().unwrap().len() < 2_000);
}

#[test]
fn tricky_chars_in_the_kept_prefix_of_a_cut_string_survive() {
    let prefix = TRICKY.concat();
    let long = format!("{prefix}{}", "y".repeat(10_000));
    let payload = pre_tool_use(json!({"command": long}));
    let out = truncate_payload(&payload, 2_000);
    assert_valid_within(&out, 2_000);
    let command = out["tool_input"]["command"].as_str().unwrap();
    assert!(command.starts_with(&prefix));
    assert!(command.ends_with(" bytes]"));
}

#[test]
fn nul_heavy_string_is_measured_with_its_escapes() {
    // Each NUL serializes as `\u0000`: 6 bytes per input byte.
    let payload = pre_tool_use(json!({"command": "\u{0}".repeat(60_000)}));
    let out = truncate_payload(&payload, HOOK_PAYLOAD_MAX_BYTES);
    let text = assert_valid_within(&out, HOOK_PAYLOAD_MAX_BYTES);
    assert!(text.len() > HOOK_PAYLOAD_MAX_BYTES - 100);
}

#[test]
fn emoji_at_every_cut_offset_keep_utf8_intact() {
    for pad in 0..4 {
        let long = format!("{}{}", "a".repeat(pad), "😀".repeat(5_000));
        let payload = json!({"event": "post_tool_use", "result": long});
        for max_bytes in (1_000..1_016).chain([4_097, 9_999]) {
            let out = truncate_payload(&payload, max_bytes);
            assert_valid_within(&out, max_bytes);
            let result = out["result"].as_str().unwrap();
            let kept = result.split('…').next().unwrap();
            assert!(kept.trim_start_matches('a').chars().all(|c| c == '😀'));
        }
    }
}

#[test]
fn fifty_thousand_one_char_keys_are_dropped_down_to_the_limit() {
    let keys: Map<String, Value> = (0x4E00..)
        .filter_map(char::from_u32)
        .take(50_000)
        .map(|c| (c.to_string(), json!(1)))
        .collect();
    assert_eq!(keys.len(), 50_000);
    let payload = pre_tool_use(Value::Object(keys));
    assert!(compact(&payload).len() > 300_000);
    let out = truncate_payload(&payload, HOOK_PAYLOAD_MAX_BYTES);
    let text = assert_valid_within(&out, HOOK_PAYLOAD_MAX_BYTES);
    assert!(
        text.len() > HOOK_PAYLOAD_MAX_BYTES / 2,
        "kept too little: {}",
        text.len()
    );
    assert_eq!(out["payload_truncated"], true);
    assert_eq!(out["event"], "pre_tool_use");
    assert_eq!(out["tool_name"], "bash_code_execute_tool");
    assert!(
        out["tool_input"]["…"]
            .as_str()
            .unwrap()
            .ends_with(" more entries]")
    );
}

#[test]
fn huge_array_of_numbers_is_cut_with_a_count_marker() {
    let payload = json!({"event": "post_tool_use", "result": (0..100_000).collect::<Vec<_>>()});
    let out = truncate_payload(&payload, 1_000);
    assert_valid_within(&out, 1_000);
    let items = out["result"].as_array().unwrap();
    assert_eq!(items[0], 0);
    assert!(
        items
            .last()
            .unwrap()
            .as_str()
            .unwrap()
            .ends_with(" more items]")
    );
}

#[test]
fn non_object_payload_is_wrapped_with_the_flag() {
    let payload = json!("z".repeat(5_000));
    let out = truncate_payload(&payload, 500);
    assert_valid_within(&out, 500);
    assert_eq!(out["payload_truncated"], true);
    assert!(out["value"].as_str().unwrap().starts_with("zzz"));
}

#[test]
fn tiny_limits_fall_back_to_flag_and_identifying_fields() {
    let payload = pre_tool_use(json!({"command": "q".repeat(5_000)}));
    for max_bytes in MIN_MAX_BYTES..200 {
        let out = truncate_payload(&payload, max_bytes);
        assert_valid_within(&out, max_bytes);
        assert_eq!(out["payload_truncated"], true);
    }
    let out = truncate_payload(&payload, 60);
    assert_eq!(
        *out,
        json!({"payload_truncated": true, "event": "pre_tool_use"})
    );
}

#[test]
fn limit_below_minimum_yields_the_bare_flag() {
    let payload = json!({"a": "b".repeat(100)});
    let out = truncate_payload(&payload, 10);
    assert_eq!(*out, json!({"payload_truncated": true}));
    assert_eq!(compact(&out).len(), MIN_MAX_BYTES);
}

fn arb_string() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z]{0,8}",
        any::<String>(),
        "[\\x00-\\x1f\"\\\\é漢😀\u{202E}a]{0,300}",
        (1usize..3_000).prop_map(|n| "ab\"\n漢😀".repeat(n)),
    ]
}

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        arb_string().prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 200, 12, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..12).prop_map(Value::Array),
            prop::collection::vec(("[a-z_]{1,6}", inner), 0..12)
                .prop_map(|entries| Value::Object(entries.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn any_value_is_bounded_valid_and_untouched_when_it_fits(
        value in arb_json(), max_bytes in 64usize..20_000,
    ) {
        let fits = compact(&value).len() <= max_bytes;
        let out = truncate_payload(&value, max_bytes);
        let text = compact(&out);
        prop_assert!(text.len() <= max_bytes, "{} > {}", text.len(), max_bytes);
        prop_assert_eq!(&serde_json::from_str::<Value>(&text).unwrap(), &*out);
        if fits {
            prop_assert_eq!(&*out, &value);
        } else {
            prop_assert_eq!(out.get("payload_truncated"), Some(&Value::Bool(true)));
        }
    }
}
