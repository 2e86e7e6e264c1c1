//! Output spill: full text to a file, bounded preview inline.

use std::path::Path;

use tollgate_core::CoreError;
use tollgate_core::spill::{SpillConfig, spill};

/// About 1 MB of numbered lines with multi-byte chars, so head and tail are recognisable.
fn big_output() -> String {
    (0..25_000)
        .map(|i| format!("line {i:06}: é漢字🦀 {}\n", "x".repeat(i % 37)))
        .collect()
}

/// Splits a preview into head, marker line and tail.
#[allow(clippy::unwrap_used)]
fn split_preview(preview: &str) -> (&str, &str, &str) {
    let start = preview.find("\n… [").unwrap();
    let end = preview.find("] …\n").unwrap() + "] …\n".len();
    (&preview[..start], &preview[start..end], &preview[end..])
}

#[allow(clippy::unwrap_used)]
fn dir_entries(dir: &Path) -> usize {
    std::fs::read_dir(dir).unwrap().count()
}

#[test]
fn megabyte_output_is_spilled_whole_and_previewed_within_limit() {
    let dir = tempfile::tempdir().unwrap();
    let text = big_output();
    assert!(text.len() > 1_000_000);
    let spilled = spill(&text, &SpillConfig::new(dir.path(), 4096)).unwrap();

    let file = spilled.file.unwrap();
    assert!(file.is_absolute());
    assert!(file.starts_with(dir.path()));
    let name = file.file_name().unwrap().to_str().unwrap();
    assert!(
        name.starts_with("spill-") && name.ends_with(".txt"),
        "{name}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
    assert_eq!(spilled.original_bytes, text.len());

    let preview = &spilled.text;
    assert!(preview.len() <= 4096, "{} bytes", preview.len());
    let (head, marker, tail) = split_preview(preview);
    assert!(text.starts_with(head) && head.starts_with("line 000000: é漢字🦀"));
    assert!(text.ends_with(tail) && tail.ends_with("\n"));
    assert!(
        head.len() > 2 * tail.len() - 8,
        "head {} tail {}",
        head.len(),
        tail.len()
    );
    let omitted = text.len() - head.len() - tail.len();
    let expected = format!(
        "{omitted} bytes omitted; full output ({} bytes) in ",
        text.len()
    );
    assert!(marker.contains(&expected), "{marker}");
    assert!(marker.contains(&file.display().to_string()), "{marker}");
    assert!(
        preview.len() > 4096 - 8,
        "preview should use the room: {}",
        preview.len()
    );
}

#[test]
fn text_within_limit_is_returned_unchanged_without_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let text = "é".repeat(2048); // exactly 4096 bytes
    let spilled = spill(&text, &SpillConfig::new(dir.path(), 4096)).unwrap();
    assert_eq!(spilled.text, text);
    assert_eq!(spilled.file, None);
    assert_eq!(spilled.original_bytes, 4096);
    assert_eq!(dir_entries(dir.path()), 0);
}

#[test]
fn missing_nested_dir_is_created() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("a/b/c");
    let spilled = spill(&"z".repeat(1000), &SpillConfig::new(&dir, 400)).unwrap();
    let file = spilled.file.unwrap();
    assert_eq!(file.parent().unwrap(), dir);
    assert_eq!(std::fs::read_to_string(file).unwrap(), "z".repeat(1000));
    assert!(spilled.text.len() <= 400, "{}", spilled.text);
    assert!(spilled.text.starts_with("zzz") && spilled.text.ends_with("zzz"));
}

#[test]
fn dir_that_is_a_regular_file_gives_io_error_naming_it() {
    let root = tempfile::tempdir().unwrap();
    let not_a_dir = root.path().join("plain-file");
    std::fs::write(&not_a_dir, "occupied").unwrap();
    let err = spill(&"z".repeat(1000), &SpillConfig::new(&not_a_dir, 100)).unwrap_err();
    assert!(
        matches!(&err, CoreError::Io { path, .. } if *path == not_a_dir),
        "{err:?}"
    );
    assert!(
        err.to_string().contains(&not_a_dir.display().to_string()),
        "{err}"
    );
}

#[test]
fn limit_smaller_than_marker_yields_marker_alone() {
    let dir = tempfile::tempdir().unwrap();
    let text = "head-and-tail".repeat(100);
    let spilled = spill(&text, &SpillConfig::new(dir.path(), 10)).unwrap();
    let file = spilled.file.unwrap();
    let (head, marker, tail) = split_preview(&spilled.text);
    assert_eq!((head, tail), ("", ""));
    assert!(marker.contains(&format!(
        "{0} bytes omitted; full output ({0} bytes)",
        text.len()
    )));
    assert!(marker.contains(&file.display().to_string()));
    assert_eq!(std::fs::read_to_string(file).unwrap(), text);
}
