//! Output spill: long text goes to a file, a preview stays inline.
//!
//! Hook output (a command's stdout, a tool result) can be far larger than what is worth keeping
//! in a trace or handing back to the model. [`spill`] writes text longer than
//! [`SpillConfig::limit_bytes`] in full to a new file `spill-*.txt` under
//! [`SpillConfig::dir`] and returns a preview of at most `limit_bytes` bytes: the head (about
//! two thirds of the room), a marker line naming the file, and the tail (about one third):
//!
//! ```text
//! <head>
//! … [N bytes omitted; full output (M bytes) in /abs/dir/spill-a1B2c3.txt] …
//! <tail>
//! ```
//!
//! Head and tail are cut on char boundaries, so the preview is valid UTF-8. Spill files are
//! created with the permissions of [`tempfile`] (`0600` on Unix) and are never deleted by
//! tollgate.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::CoreError;

/// Where and above which size output is spilled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpillConfig {
    /// Directory for spill files; created (with parents) on first spill. A relative path is
    /// resolved against the current directory at spill time.
    pub dir: PathBuf,
    /// Text longer than this many bytes (UTF-8) is spilled; the preview is at most this long.
    pub limit_bytes: usize,
}

impl SpillConfig {
    /// A config spilling text longer than `limit_bytes` bytes into `dir`.
    #[must_use]
    pub fn new(dir: impl Into<PathBuf>, limit_bytes: usize) -> Self {
        Self {
            dir: dir.into(),
            limit_bytes,
        }
    }
}

/// The result of [`spill`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spilled {
    /// The text itself when it was within the limit, otherwise the preview.
    pub text: String,
    /// The absolute path of the file holding the full text, when it was spilled.
    pub file: Option<PathBuf>,
    /// Length of the original text in bytes.
    pub original_bytes: usize,
}

/// Spills `text` to a file under `config.dir` when it is longer than `config.limit_bytes`.
///
/// Text of at most `limit_bytes` bytes comes back unchanged with `file: None`, and nothing is
/// touched on disk. Longer text is written in full to a new, uniquely named
/// `<dir>/spill-XXXXXX.txt` (`dir` is created if missing) and replaced by a preview of at most
/// `limit_bytes` bytes (see the [module docs](self)).
///
/// When `limit_bytes` is too small to hold even the marker line (well under 200 bytes, it names
/// the file), the preview is the marker line alone, without head or tail, and is then longer
/// than `limit_bytes`: a preview that does not say where the output went would be useless.
///
/// This does blocking `std::fs` I/O; async callers should run it in
/// `tokio::task::spawn_blocking`.
///
/// # Errors
///
/// [`CoreError::Io`] with the path concerned when the directory cannot be resolved or created,
/// or the file cannot be created or written. No partial file is left behind on a write error.
///
/// # Panics
///
/// Never.
pub fn spill(text: &str, config: &SpillConfig) -> crate::error::Result<Spilled> {
    let original_bytes = text.len();
    if original_bytes <= config.limit_bytes {
        return Ok(Spilled {
            text: text.to_owned(),
            file: None,
            original_bytes,
        });
    }
    let file = write_spill_file(text, &config.dir)?;
    let text = preview(text, &file, config.limit_bytes);
    Ok(Spilled {
        text,
        file: Some(file),
        original_bytes,
    })
}

/// Writes `text` to a new `spill-*.txt` file under `dir`; returns its absolute path.
fn write_spill_file(text: &str, dir: &Path) -> crate::error::Result<PathBuf> {
    let io_err = |path: &Path| {
        let path = path.to_owned();
        move |source| CoreError::Io { path, source }
    };
    let dir = std::path::absolute(dir).map_err(io_err(dir))?;
    std::fs::create_dir_all(&dir).map_err(io_err(&dir))?;
    let mut file = tempfile::Builder::new()
        .prefix("spill-")
        .suffix(".txt")
        .tempfile_in(&dir)
        .map_err(io_err(&dir))?;
    let path = file.path().to_owned();
    file.write_all(text.as_bytes())
        .and_then(|()| file.flush())
        .map_err(io_err(&path))?;
    // Dropping the file on error above deletes it; from here on it stays.
    file.keep().map_err(|e| CoreError::Io {
        path: path.clone(),
        source: e.error,
    })?;
    Ok(path)
}

/// Head, marker line naming `file`, tail; at most `limit` bytes unless the marker alone is
/// longer.
fn preview(text: &str, file: &Path, limit: usize) -> String {
    let total = text.len();
    // `omitted <= total`, so a marker built with `total` is at least as long as the real one.
    let room = limit.saturating_sub(marker(total, total, file).len());
    let head_room = room * 2 / 3;
    let head = &text[..text.floor_char_boundary(head_room)];
    let tail = &text[text.ceil_char_boundary(total - (room - head_room))..];
    let omitted = total - head.len() - tail.len();
    format!("{head}{}{tail}", marker(omitted, total, file))
}

fn marker(omitted: usize, total: usize, file: &Path) -> String {
    let file = file.display();
    format!("\n… [{omitted} bytes omitted; full output ({total} bytes) in {file}] …\n")
}
