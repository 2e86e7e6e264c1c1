//! The `tollgate` binary, run as a user would.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

fn tollgate(args: &[&str]) -> (bool, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_tollgate"))
        .args(args)
        .output()
        .unwrap();
    (
        output.status.success(),
        String::from_utf8(output.stdout).unwrap(),
    )
}

#[test]
fn version_prints_the_crate_version() {
    let (ok, out) = tollgate(&["--version"]);
    assert!(ok);
    assert_eq!(
        out.trim(),
        format!("tollgate {}", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn help_names_the_subcommands() {
    let (ok, out) = tollgate(&["--help"]);
    assert!(ok);
    for word in ["events", "schema", "hook engine"] {
        assert!(out.contains(word), "--help lacks {word}:\n{out}");
    }
}

#[test]
fn events_lists_canonical_names_with_aliases_and_modes() {
    let (ok, out) = tollgate(&["events"]);
    assert!(ok);
    let line = |name: &str| {
        out.lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_default()
            .to_owned()
    };
    assert!(line("pre_tool_use ").contains("sequentially"));
    assert!(line("pre_tool_use ").contains("PreToolUse, BeforeToolUse"));
    assert!(line("session_end ").contains("concurrently"));
    assert!(line("session_end ").contains("Stop"));
}

#[test]
fn schema_prints_the_committed_payload_schema() {
    let (ok, out) = tollgate(&["schema", "payload"]);
    assert!(ok);
    let printed: serde_json::Value = serde_json::from_str(&out).unwrap();
    let committed = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../schemas/payload.schema.json"
    ))
    .unwrap();
    assert_eq!(
        printed,
        serde_json::from_str::<serde_json::Value>(&committed).unwrap()
    );
}

#[test]
fn unknown_subcommands_fail_with_usage() {
    let output = Command::new(env!("CARGO_BIN_EXE_tollgate"))
        .arg("frobnicate")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("Usage"));
}
