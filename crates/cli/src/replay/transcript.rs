//! Reading a transcript: Claude Code session JSONL or a tollgate trace, told apart per line.
//!
//! - A **Claude Code entry** is an object with a string `type` (`assistant`, `user`,
//!   `progress`, `summary`, …). Tool calls are the `tool_use` blocks of `assistant` entries'
//!   `message.content`: `{"type":"tool_use","id","name","input":{…}}`.
//! - A **tollgate trace line** is an object with `seq` and `type`; tool calls are the lines of
//!   type `tool_call`: `{"tool_call_id","tool_name","arguments":{…}}` plus `run_id`, `agent`,
//!   `depth`.
//!
//! Every other entry is ignored. A line that is not JSON, not an object, longer than the line
//! limit, with more than [`MAX_LINE_VALUES`] JSON values, or a tool call that does not have the
//! fields above, is a [`LineWarning`] and is skipped; the lines around it are read as usual.
//!
//! A UTF-8 byte order mark before the first line is skipped. A file that is no transcript at
//! all stops the reading with one [`ReadError::NotATranscript`] instead of a warning per line:
//! before any line could be read, a line holding a NUL byte or invalid UTF-8 (a binary or
//! UTF-16 file), or [`MAX_BAD_LINES_FIRST`] unreadable lines in a row (some other text).
//!
//! Memory is bounded per line: an overlong line is never held (only its first
//! `max_line_bytes + 1` bytes are buffered, the rest is skipped as it streams by), and a line is
//! parsed only when it has at most [`MAX_LINE_VALUES`] values: parsed JSON costs 30 to 100
//! bytes per value, so a 60 MB line of `[0,0,…]` would otherwise take about a gigabyte.

use std::collections::HashMap;
use std::fmt;
use std::io::{self, BufRead, Read};

use serde::Deserialize;
use serde_json::{Map, Value};

/// One tool call found in a transcript.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedCall {
    /// The 1-based line it was found on.
    pub line: u64,
    /// The model's id for the call (`tool_use.id` or `tool_call_id`).
    pub tool_call_id: String,
    /// Where the call came from, with its recorded name and input.
    pub origin: Origin,
}

/// The format a call was recorded in.
#[derive(Debug, Clone, PartialEq)]
pub enum Origin {
    /// A `tool_use` block of a Claude Code `assistant` entry.
    ClaudeCode(ClaudeCall),
    /// A `tool_call` line of a tollgate trace.
    Trace(TraceCall),
}

/// A `tool_use` block and the entry fields around it.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaudeCall {
    /// Claude Code's tool name (`Bash`, `Edit`, `mcp__github__create_issue`, …).
    pub name: String,
    /// The block's `input`, as recorded.
    pub input: Map<String, Value>,
    /// The entry's `sessionId`.
    pub session_id: Option<String>,
    /// The entry's `agentId` (sub-agent transcripts).
    pub agent_id: Option<String>,
    /// The entry's `cwd`.
    pub cwd: Option<String>,
    /// The entry's `isSidechain` (a sub-agent's call).
    pub is_sidechain: bool,
}

/// A trace `tool_call` line.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceCall {
    /// The runtime tool name.
    pub tool_name: String,
    /// The arguments as the model proposed them.
    pub arguments: Map<String, Value>,
    /// The run the call belongs to.
    pub run_id: Option<String>,
    /// The session (agent) the call belongs to.
    pub session_id: Option<String>,
    /// That session's payload metadata, from its `session_start` line.
    pub metadata: Map<String, Value>,
    /// The agent that proposed it.
    pub agent: Option<String>,
    /// 0 for the top-level agent, ≥ 1 for delegated sub-agents.
    pub depth: u32,
    /// The line's sequence number.
    pub seq: u64,
}

/// A line (or a tool call on it) that was skipped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineWarning {
    /// The 1-based line number.
    pub line: u64,
    /// Why it was skipped.
    pub message: String,
}

impl fmt::Display for LineWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

/// Everything read from one transcript.
#[derive(Debug, Default)]
pub struct Transcript {
    /// The tool calls, in file order.
    pub calls: Vec<RecordedCall>,
    /// Skipped lines and calls, in file order.
    pub warnings: Vec<LineWarning>,
    /// Tool calls that were recognised as such but could not be read (bad fields).
    pub skipped_calls: usize,
    /// Lines read, blank ones included.
    pub lines: u64,
    /// Payload metadata per trace session id.
    pub session_metadata: std::collections::HashMap<String, Map<String, Value>>,
    /// Notes about lines that were read (not skipped): shown like warnings, counted nowhere.
    pub notes: Vec<LineWarning>,
}

impl Transcript {
    /// Lines skipped whole (not JSON, not an entry, over the size limit, …): each may have held
    /// tool calls nobody can count.
    pub fn skipped_lines(&self) -> usize {
        self.warnings.len().saturating_sub(self.skipped_calls)
    }
}

impl Transcript {
    fn warn(&mut self, line: u64, message: impl Into<String>) {
        self.warnings.push(LineWarning {
            line,
            message: message.into(),
        });
    }

    fn skip_call(&mut self, line: u64, message: impl Into<String>) {
        self.skipped_calls += 1;
        self.warn(line, message);
    }
}

/// Why a transcript could not be read at all.
#[derive(Debug)]
pub enum ReadError {
    /// Reading failed.
    Io(io::Error),
    /// The file is not JSON Lines: nothing of it was read.
    NotATranscript(String),
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Io(e) => write!(f, "{e}"),
            Self::NotATranscript(why) => write!(f, "not a transcript (JSON Lines): {why}"),
        }
    }
}

impl From<io::Error> for ReadError {
    fn from(e: io::Error) -> Self {
        Self::Io(e)
    }
}

/// Unreadable lines in a row, before any readable one, after which a file is taken for
/// something other than a transcript.
pub const MAX_BAD_LINES_FIRST: u64 = 5;

/// Most JSON values (counted as the `[`, `{` and `,` outside strings) a line may hold to be
/// parsed: about 100 MB of parsed JSON at worst. A Claude Code line holding a written file or an
/// image keeps it in one string, which counts once.
pub const MAX_LINE_VALUES: usize = 1_000_000;

/// Reads a whole transcript. Lines longer than `max_line_bytes` (newline excluded) are skipped
/// with a warning without being held in memory.
///
/// # Errors
/// I/O errors of `reader`, and [`ReadError::NotATranscript`] for a file that is plainly not
/// one (see the module docs); bad lines in a transcript are warnings.
pub fn read(mut reader: impl BufRead, max_line_bytes: usize) -> Result<Transcript, ReadError> {
    let mut transcript = Transcript::default();
    let mut start = Start::default();
    let mut seen: HashMap<String, u64> = HashMap::new();
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let limit = u64::try_from(max_line_bytes)
            .unwrap_or(u64::MAX)
            .saturating_add(1);
        let n = reader.by_ref().take(limit).read_until(b'\n', &mut buf)?;
        if n == 0 {
            return Ok(transcript);
        }
        transcript.lines += 1;
        let line = transcript.lines;
        if buf.last() != Some(&b'\n') && buf.len() > max_line_bytes {
            start.check_bytes(line, &buf[..buf.len().min(1 << 16)])?;
            let rest = reader.skip_until(b'\n')?;
            // `skip_until` counts the newline it consumed, if any.
            let total = buf.len() + rest.saturating_sub(1);
            transcript.warn(
                line,
                format!(
                    "{total} bytes, over the limit of {max_line_bytes} bytes per line; skipped"
                ),
            );
            start.count(line, true)?;
            continue;
        }
        let text = buf.strip_suffix(b"\n").unwrap_or(&buf);
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        let text = match line {
            1 => text.strip_prefix(BOM).unwrap_or(text),
            _ => text,
        };
        if text.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        start.check_bytes(line, text)?;
        let first_call = transcript.calls.len();
        let skipped_before = transcript.skipped_lines();
        read_line(line, text, &mut transcript);
        start.count(line, transcript.skipped_lines() > skipped_before)?;
        for call in &transcript.calls[first_call..] {
            if let Some(earlier) = seen.insert(call.tool_call_id.clone(), line) {
                transcript.warnings.push(LineWarning {
                    line,
                    message: format!(
                        "tool call id `{}` was already seen on line {earlier}; replayed again",
                        call.tool_call_id
                    ),
                });
            }
        }
    }
}

/// The UTF-8 byte order mark, which some editors write before the first line.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Whether the file has shown itself to be a transcript yet, and the unreadable lines so far.
#[derive(Default)]
struct Start {
    read_one: bool,
    bad_in_a_row: u64,
}

impl Start {
    /// Until a line was read, a NUL byte or invalid UTF-8 means a binary or UTF-16 file. (A
    /// sequence cut off at the end of `text` is not judged: `text` may be a prefix.)
    fn check_bytes(&self, line: u64, text: &[u8]) -> Result<(), ReadError> {
        if self.read_one {
            return Ok(());
        }
        let why = if text.starts_with(b"\xFF\xFE") || text.starts_with(b"\xFE\xFF") {
            "is UTF-16 text; save the file as UTF-8"
        } else if text.contains(&0) {
            "holds NUL bytes (a binary file?)"
        } else if std::str::from_utf8(text).is_err_and(|e| e.error_len().is_some()) {
            "is not UTF-8 text (a binary file?)"
        } else {
            return Ok(());
        };
        Err(ReadError::NotATranscript(format!("line {line} {why}")))
    }

    /// Counts one non-blank line; too many unreadable ones before any readable one stop.
    fn count(&mut self, line: u64, unreadable: bool) -> Result<(), ReadError> {
        if self.read_one {
            return Ok(());
        }
        if !unreadable {
            self.read_one = true;
            return Ok(());
        }
        self.bad_in_a_row += 1;
        if self.bad_in_a_row < MAX_BAD_LINES_FIRST {
            return Ok(());
        }
        Err(ReadError::NotATranscript(format!(
            "none of its first {} non-blank lines (to line {line}) is a Claude Code entry or a \
             tollgate trace line",
            self.bad_in_a_row
        )))
    }
}

fn read_line(line: u64, text: &[u8], out: &mut Transcript) {
    if more_values_than(text, MAX_LINE_VALUES) {
        return out.warn(
            line,
            format!("more than {MAX_LINE_VALUES} JSON values on one line; skipped"),
        );
    }
    let value: Value = match serde_json::from_slice(text) {
        Ok(value) => value,
        Err(e) => return out.warn(line, format!("not JSON ({e}); skipped")),
    };
    let Value::Object(entry) = value else {
        return out.warn(line, "not a JSON object; skipped");
    };
    // A trace line has `seq`; a Claude Code entry that happens to carry a `seq` too is still a
    // Claude Code entry (it has a `message`).
    if entry.contains_key("seq") && !entry.contains_key("message") {
        trace_line(line, entry, out);
    } else if entry.get("type").is_some_and(Value::is_string) {
        claude_entry(line, &entry, out);
    } else {
        out.warn(
            line,
            "neither a Claude Code entry (a string `type`) nor a tollgate trace line (`seq` and \
             `type`); skipped",
        );
    }
}

/// Whether `text` holds more than `max` JSON values, counted as the `[`, `{` and `,` outside
/// strings: an upper bound of the values and members a parser would build, found without
/// building any.
fn more_values_than(text: &[u8], max: usize) -> bool {
    let (mut count, mut in_string, mut escaped) = (0usize, false, false);
    for &b in text {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
        } else if b == b'"' {
            in_string = true;
        } else if matches!(b, b'[' | b'{' | b',') {
            count += 1;
            if count > max {
                return true;
            }
        }
    }
    false
}

// ---- tollgate traces -------------------------------------------------------------------------

#[derive(Deserialize)]
struct TraceHead {
    seq: u64,
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    session_id: Option<String>,
    #[serde(default)]
    metadata: Option<Map<String, Value>>,
}

#[derive(Deserialize)]
struct TraceToolCall {
    seq: u64,
    #[serde(default)]
    run_id: Option<String>,
    #[serde(default)]
    session_id: Option<String>,
    #[serde(default)]
    agent: Option<String>,
    #[serde(default)]
    depth: u32,
    tool_call_id: String,
    tool_name: String,
    arguments: Map<String, Value>,
}

fn trace_line(line: u64, entry: Map<String, Value>, out: &mut Transcript) {
    let entry = Value::Object(entry);
    let head = match TraceHead::deserialize(&entry) {
        Ok(head) => head,
        Err(e) => return out.warn(line, format!("bad tollgate trace line: {e}; skipped")),
    };
    if head.kind == "session_start" {
        // The session's payload metadata (e.g. `org_id`), for its tool calls' payloads.
        if let (Some(session), Some(metadata)) = (head.session_id, head.metadata) {
            out.session_metadata.insert(session, metadata);
        }
        return;
    }
    if head.kind != "tool_call" {
        return;
    }
    let call = match TraceToolCall::deserialize(&entry) {
        Ok(call) => call,
        Err(e) => {
            return out.skip_call(
                line,
                format!("bad tool_call (seq {}): {e}; skipped", head.seq),
            );
        }
    };
    let metadata = session_metadata(line, call.session_id.as_deref(), out);
    out.calls.push(RecordedCall {
        line,
        tool_call_id: call.tool_call_id,
        origin: Origin::Trace(TraceCall {
            tool_name: call.tool_name,
            arguments: call.arguments,
            metadata,
            run_id: call.run_id,
            session_id: call.session_id,
            agent: call.agent,
            depth: call.depth,
            seq: call.seq,
        }),
    });
}

/// The recorded metadata of `session`, with a note (once per session) when its
/// `session_start` line was not seen: hooks that key on metadata (`org_id`) judge without it.
fn session_metadata(line: u64, session: Option<&str>, out: &mut Transcript) -> Map<String, Value> {
    let Some(session) = session else {
        return Map::new();
    };
    if let Some(metadata) = out.session_metadata.get(session) {
        return metadata.clone();
    }
    out.session_metadata.insert(session.to_owned(), Map::new());
    out.notes.push(LineWarning {
        line,
        message: format!(
            "no session_start line for session `{session}` before its first tool call: its \
             metadata (org_id, …) is unknown, and its calls are judged without it"
        ),
    });
    Map::new()
}

// ---- Claude Code transcripts -----------------------------------------------------------------

#[derive(Deserialize)]
struct ToolUse {
    id: String,
    name: String,
    input: Map<String, Value>,
}

fn claude_entry(line: u64, entry: &Map<String, Value>, out: &mut Transcript) {
    if entry.get("type").and_then(Value::as_str) != Some("assistant") {
        return;
    }
    let content = match entry.get("message") {
        Some(Value::Object(message)) => message.get("content"),
        _ => return out.warn(line, "assistant entry without a `message` object; skipped"),
    };
    let blocks = match content {
        Some(Value::Array(blocks)) => blocks,
        Some(Value::String(_)) => return,
        _ => {
            return out.warn(
                line,
                "assistant `message.content` is neither a list nor a string; skipped",
            );
        }
    };
    let text = |key: &str| entry.get(key).and_then(Value::as_str).map(str::to_owned);
    for (i, block) in blocks.iter().enumerate() {
        if block.get("type").and_then(Value::as_str) != Some("tool_use") {
            continue;
        }
        let tool_use = match ToolUse::deserialize(block) {
            Ok(tool_use) => tool_use,
            Err(e) => {
                out.skip_call(
                    line,
                    format!("bad tool_use block (content[{i}]): {e}; skipped"),
                );
                continue;
            }
        };
        out.calls.push(RecordedCall {
            line,
            tool_call_id: tool_use.id,
            origin: Origin::ClaudeCode(ClaudeCall {
                name: tool_use.name,
                input: tool_use.input,
                session_id: text("sessionId"),
                agent_id: text("agentId"),
                cwd: text("cwd"),
                is_sidechain: entry.get("isSidechain").and_then(Value::as_bool) == Some(true),
            }),
        });
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn read_str(text: &str, max: usize) -> Transcript {
        read(text.as_bytes(), max).unwrap()
    }

    #[test]
    fn over_long_lines_are_skipped_and_the_next_line_is_read() {
        let long = format!("{{\"type\":\"user\",\"pad\":\"{}\"}}", "x".repeat(120));
        let call = r#"{"seq":1,"run_id":"r","type":"tool_call","tool_call_id":"c","tool_name":"t","arguments":{}}"#;
        let t = read_str(&format!("{long}\n{call}\n"), 100);
        assert_eq!(t.lines, 2);
        assert_eq!(t.calls.len(), 1);
        assert_eq!(t.calls[0].line, 2);
        assert_eq!(t.warnings.len(), 1);
        assert_eq!(t.warnings[0].line, 1);
        assert!(
            t.warnings[0].message.contains("144 bytes, over the limit"),
            "{:?}",
            t.warnings
        );
    }

    #[test]
    fn values_are_counted_outside_strings_only() {
        assert!(!more_values_than(b"[1,2,3]", 4));
        assert!(more_values_than(b"[1,2,3,4,5]", 4));
        assert!(!more_values_than(br#"{"a":"[,,,,{{{{,,,,"}"#, 4));
        assert!(!more_values_than(br#"{"a":"\",[,,,,{{{{,,,,"}"#, 4));
        assert!(more_values_than(br#"{"a":"\\",[,,,,{{{{,,,,"}"#, 4));
    }

    #[test]
    fn regression_a_line_of_many_small_values_took_a_gigabyte_to_parse() {
        let many = format!("[{}0]", "0,".repeat(MAX_LINE_VALUES));
        let call = r#"{"seq":1,"run_id":"r","type":"tool_call","tool_call_id":"c","tool_name":"t","arguments":{}}"#;
        let t = read_str(&format!("{many}\n{call}\n"), 64 << 20);
        assert_eq!(t.calls.len(), 1);
        assert_eq!(t.skipped_lines(), 1);
        assert_eq!(t.warnings[0].line, 1);
        assert!(
            t.warnings[0].message.contains("JSON values"),
            "{:?}",
            t.warnings
        );
    }

    #[test]
    fn a_line_exactly_at_the_limit_is_read() {
        let call = r#"{"seq":1,"run_id":"r","type":"tool_call","tool_call_id":"c","tool_name":"t","arguments":{}}"#;
        let t = read_str(&format!("{call}\n{call}"), call.len());
        assert_eq!(t.calls.len(), 2, "{:?}", t.warnings);
        assert!(
            t.warnings
                .iter()
                .all(|w| w.message.contains("already seen"))
        );
    }

    #[test]
    fn damage_after_a_readable_line_is_warned_not_fatal() {
        let call = r#"{"seq":1,"run_id":"r","type":"tool_call","tool_call_id":"c","tool_name":"t","arguments":{}}"#;
        let mut text = format!("{call}\n").into_bytes();
        text.extend(b"\0\xff\nx\ny\nz\nw\nv\n");
        let t = read(&text[..], 1 << 20).unwrap();
        assert_eq!(t.calls.len(), 1);
        assert_eq!(t.skipped_lines(), 6);
    }

    #[test]
    fn unreadable_lines_before_any_readable_one_stop_at_the_fifth() {
        let four = "a\nb\n\nc\nd\n";
        let call = r#"{"seq":1,"run_id":"r","type":"tool_call","tool_call_id":"c","tool_name":"t","arguments":{}}"#;
        let t = read(format!("{four}{call}\n").as_bytes(), 1 << 20).unwrap();
        assert_eq!((t.calls.len(), t.skipped_lines()), (1, 4));
        let err = read(format!("{four}e\n{call}\n").as_bytes(), 1 << 20).unwrap_err();
        assert!(
            matches!(&err, ReadError::NotATranscript(why) if why.contains("to line 6")),
            "{err}"
        );
    }

    #[test]
    fn a_bad_tool_use_block_does_not_lose_its_siblings() {
        let entry = r#"{"type":"assistant","message":{"content":[
            {"type":"tool_use","id":"a","name":"Bash","input":"rm -rf /"},
            {"type":"tool_use","id":"b","name":"Bash","input":{"command":"ls"}}]}}"#
            .replace('\n', "");
        let t = read_str(&entry, 1 << 20);
        assert_eq!(t.calls.len(), 1);
        assert_eq!(t.calls[0].tool_call_id, "b");
        assert_eq!(t.skipped_calls, 1);
        assert!(
            t.warnings[0].message.contains("content[0]"),
            "{:?}",
            t.warnings
        );
    }
}
