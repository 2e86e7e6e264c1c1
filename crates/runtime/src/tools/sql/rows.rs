//! A query's rows as the model sees them, capped while they are read.
//!
//! Each cell is decoded from SQLite's own buffer (nothing is copied whole): text longer than
//! [`MAX_CELL_BYTES`] keeps its first bytes and ends in `… [N more bytes]`, a blob is shown as
//! `<N bytes>`. Rows are kept until [`MAX_ROWS`] or until they reach [`MAX_RESULT_BYTES`] of
//! JSON; the next row is then not read at all. The result says what was cut in `cut`.

use serde_json::{Map, Value, json};

/// Most rows `sql_query` returns; `truncated` and `cut` say when there were more.
pub const MAX_ROWS: usize = 200;
/// Most bytes of one text value the model sees; the rest is replaced by `… [N more bytes]`.
pub const MAX_CELL_BYTES: usize = 4 * 1024;
/// Most bytes of JSON the returned rows take together (column names included).
pub const MAX_RESULT_BYTES: usize = 256 * 1024;

/// Rows kept so far, and what was cut.
#[derive(Debug)]
pub(super) struct CappedRows {
    columns: Vec<String>,
    rows: Vec<Value>,
    bytes: usize,
    cut_cells: usize,
    stopped: Option<Stop>,
}

#[derive(Debug, Clone, Copy)]
enum Stop {
    Rows,
    Bytes,
}

impl CappedRows {
    /// Rows of a result whose columns are named `columns`; a repeated name (`SELECT a.id,
    /// b.id` gives `id` twice) becomes `id:2`, `id:3`, …, since each row is a JSON object and
    /// would otherwise keep one of them only.
    pub(super) fn new(columns: Vec<String>) -> Self {
        Self {
            columns: distinct(columns),
            rows: Vec::new(),
            bytes: 0,
            cut_cells: 0,
            stopped: None,
        }
    }

    /// Takes one row; `false` when the result is full and no further row should be read.
    ///
    /// # Errors
    /// SQLite's, when a cell cannot be read.
    pub(super) fn push(&mut self, row: &rusqlite::Row<'_>) -> rusqlite::Result<bool> {
        if self.rows.len() == MAX_ROWS {
            // This row exists: there were more than MAX_ROWS.
            self.stopped = Some(Stop::Rows);
            return Ok(false);
        }
        let mut object = Map::new();
        let mut cut = 0;
        for (i, name) in self.columns.iter().enumerate() {
            let (value, was_cut) = cell(row.get_ref(i)?);
            cut += usize::from(was_cut);
            object.insert(name.clone(), value);
        }
        let object = Value::Object(object);
        let size = object.to_string().len() + 1;
        if self.bytes + size > MAX_RESULT_BYTES {
            self.stopped = Some(Stop::Bytes);
            return Ok(false);
        }
        self.bytes += size;
        self.cut_cells += cut;
        self.rows.push(object);
        Ok(true)
    }

    /// `{"columns", "rows", "truncated", "cut"?}`.
    pub(super) fn finish(self) -> Value {
        let mut cut: Vec<String> = Vec::new();
        if self.cut_cells > 0 {
            cut.push(format!(
                "{} value(s) longer than {MAX_CELL_BYTES} bytes are cut, each ending in \
                 `… [N more bytes]`",
                self.cut_cells
            ));
        }
        match self.stopped {
            Some(Stop::Rows) => cut.push(format!(
                "the query has more than {MAX_ROWS} rows: the first {MAX_ROWS} are shown, the \
                 rest were not read"
            )),
            Some(Stop::Bytes) => cut.push(format!(
                "the rows reached {} KiB: the first {} are shown, the rest were not read",
                MAX_RESULT_BYTES / 1024,
                self.rows.len()
            )),
            None => {}
        }
        let mut result = json!({
            "columns": self.columns,
            "rows": self.rows,
            "truncated": !cut.is_empty(),
        });
        if !cut.is_empty() {
            result["cut"] = Value::String(cut.join("; "));
        }
        result
    }
}

/// `columns` with every repeated name made distinct by a `:N` suffix (the first keeps its
/// name; a suffix already taken by another column is skipped).
fn distinct(columns: Vec<String>) -> Vec<String> {
    use std::collections::{HashMap, HashSet};
    let mut taken: HashSet<String> = columns.iter().cloned().collect();
    // The next suffix to try per name, so many equal names stay linear.
    let mut next: HashMap<String, usize> = HashMap::new();
    let mut seen: HashSet<String> = HashSet::new();
    let mut out = Vec::with_capacity(columns.len());
    for name in columns {
        if seen.insert(name.clone()) {
            out.push(name);
            continue;
        }
        let n = next.entry(name.clone()).or_insert(2);
        let mut unique = format!("{name}:{n}");
        while taken.contains(&unique) {
            *n += 1;
            unique = format!("{name}:{n}");
        }
        *n += 1;
        taken.insert(unique.clone());
        out.push(unique);
    }
    out
}

/// A cell as JSON, by SQLite storage class, and whether it was cut.
fn cell(value: rusqlite::types::ValueRef<'_>) -> (Value, bool) {
    use rusqlite::types::ValueRef;
    match value {
        ValueRef::Null => (Value::Null, false),
        ValueRef::Integer(i) => (Value::from(i), false),
        ValueRef::Real(f) => (Value::from(f), false),
        ValueRef::Text(bytes) => text(bytes),
        ValueRef::Blob(bytes) => (Value::String(format!("<{} bytes>", bytes.len())), false),
    }
}

/// At most [`MAX_CELL_BYTES`] of `bytes` as text, cut on a character boundary, with the count
/// of what was left out. SQLite text need not be UTF-8: invalid bytes become U+FFFD.
fn text(bytes: &[u8]) -> (Value, bool) {
    if bytes.len() <= MAX_CELL_BYTES {
        return (
            Value::String(String::from_utf8_lossy(bytes).into_owned()),
            false,
        );
    }
    let head = &bytes[..MAX_CELL_BYTES];
    // A character split by the cut is left out whole.
    let end = match std::str::from_utf8(head) {
        Err(e) if e.error_len().is_none() => e.valid_up_to(),
        _ => MAX_CELL_BYTES,
    };
    let shown = String::from_utf8_lossy(&head[..end]);
    let more = bytes.len() - end;
    (Value::String(format!("{shown}… [{more} more bytes]")), true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regression_columns_sharing_a_name_kept_one_value_per_row() {
        let names = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            distinct(names(&["id", "id", "name", "id"])),
            ["id", "id:2", "name", "id:3"]
        );
        // A suffix another column already has is skipped, whichever comes first.
        assert_eq!(distinct(names(&["x", "x:2", "x"])), ["x", "x:2", "x:3"]);
        assert_eq!(distinct(names(&["x", "x", "x:2"])), ["x", "x:3", "x:2"]);
    }

    #[test]
    fn long_text_keeps_its_head_and_says_how_much_is_left() {
        let long = "é".repeat(MAX_CELL_BYTES);
        let (value, cut) = text(long.as_bytes());
        assert!(cut);
        let shown = value.as_str().unwrap();
        let head = "é".repeat(MAX_CELL_BYTES / 2);
        assert_eq!(
            shown,
            format!("{head}… [{} more bytes]", long.len() - head.len())
        );
        // Cut inside a two-byte character: the character is left out whole.
        let odd = format!("x{}", "é".repeat(MAX_CELL_BYTES));
        let (value, _) = text(odd.as_bytes());
        let shown = value.as_str().unwrap();
        assert!(
            shown.starts_with('x') && !shown.contains('\u{fffd}'),
            "{shown}"
        );
        assert!(shown.ends_with(&format!("[{} more bytes]", odd.len() - MAX_CELL_BYTES + 1)));
        let (value, cut) = text(b"short");
        assert_eq!((value, cut), (json!("short"), false));
    }
}
