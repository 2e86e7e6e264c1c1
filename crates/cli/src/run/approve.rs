//! A waiting call at the run's own terminal: a live line (request id, tool, reason, elapsed,
//! time left, the command that approves it) and, when stdin is a terminal, an inline answer
//! (`y`, `n [note]`, `e` then the edited arguments as JSON), recorded through channel `tty`
//! as a decision by the OS user. Decisions from anywhere else (`tollgate approvals approve`)
//! end the wait just the same.

use std::io::{BufRead, Write};
use std::path::Path;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::mpsc;
use tollgate_approval::{Request, Verdict, format_span};
use tollgate_core::BoxFuture;
use tollgate_runtime::{InlineAnswer, InlineChannel};

use super::{Console, shorten};

/// The command that approves `id` in `db`, ready to paste into a shell.
pub(super) fn approve_command(id: &str, db: &Path) -> String {
    format!(
        "tollgate approvals approve {} --db {}",
        quote(id),
        quote(&db.display().to_string())
    )
}

/// `text` as one shell word.
fn quote(text: &str) -> String {
    if !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:@%,=".contains(c))
    {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

/// The run's terminal as an approval channel.
pub(super) struct Terminal {
    console: Arc<Console>,
    db: std::path::PathBuf,
    interactive: bool,
    /// Lines typed on stdin, read by one thread for the whole run (started on first use).
    lines: OnceLock<tokio::sync::Mutex<mpsc::UnboundedReceiver<String>>>,
}

impl Terminal {
    /// The channel; `interactive` when stdin is a terminal the person can answer on.
    pub(super) fn new(console: Arc<Console>, db: &Path, interactive: bool) -> Self {
        Self {
            console,
            db: db.to_path_buf(),
            interactive,
            lines: OnceLock::new(),
        }
    }

    fn lines(&self) -> &tokio::sync::Mutex<mpsc::UnboundedReceiver<String>> {
        self.lines.get_or_init(|| {
            // Answers typed ahead must not approve a request nobody has seen yet.
            let _ =
                nix::sys::termios::tcflush(std::io::stdin(), nix::sys::termios::FlushArg::TCIFLUSH);
            let (tx, rx) = mpsc::unbounded_channel();
            std::thread::spawn(move || {
                for line in std::io::stdin().lock().lines() {
                    let Ok(line) = line else { break };
                    if tx.send(line).is_err() {
                        break;
                    }
                }
            });
            tokio::sync::Mutex::new(rx)
        })
    }

    fn status(&self, request: &Request, interactive: bool) -> String {
        let left = (request.expires_at - now_ms()) / 1000;
        let answer = if interactive {
            " · answer here: y / n [note] / e"
        } else {
            ""
        };
        format!(
            "waiting for approval {} · {} · {} · expires in {} · {}{answer}",
            request.id,
            shorten(&request.tool_name, 60),
            shorten(&request.reasons.join("; "), 120),
            format_span(left),
            approve_command(&request.id, &self.db),
        )
    }
}

/// Reads one inline answer from `rx`; `None` when stdin closed.
async fn read_answer(
    console: &Console,
    rx: &mut mpsc::UnboundedReceiver<String>,
) -> Option<InlineAnswer> {
    loop {
        let line = rx.recv().await?;
        let line = line.trim();
        let (word, rest) = line.split_once(' ').unwrap_or((line, ""));
        let note = (!rest.trim().is_empty()).then(|| rest.trim().to_owned());
        match word {
            "y" | "Y" | "yes" => {
                return Some(InlineAnswer {
                    verdict: Verdict::Approve { edit: None },
                    note,
                });
            }
            "n" | "N" | "no" => {
                return Some(InlineAnswer {
                    verdict: Verdict::Reject,
                    note,
                });
            }
            "e" | "E" | "edit" => {
                // `e {"command": "…"}` on one line, or `e` and the JSON on the next.
                let edit = if rest.trim().is_empty() {
                    console.warn("edited arguments (one line of JSON, an object):");
                    rx.recv().await?
                } else {
                    rest.to_owned()
                };
                let note = None;
                match serde_json::from_str::<Value>(&edit) {
                    Ok(value @ Value::Object(_)) => {
                        return Some(InlineAnswer {
                            verdict: Verdict::Approve { edit: Some(value) },
                            note,
                        });
                    }
                    _ => console.warn("not a JSON object; nothing decided (answer y, n or e)"),
                }
            }
            "" => {}
            _ => console.warn("answer y (approve), n [note] (reject) or e (edit)"),
        }
    }
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

impl InlineChannel for Terminal {
    fn tell(&self, message: &str) {
        self.console
            .warn(&format!("not recorded: {}", shorten(message, 300)));
    }

    fn answer<'a>(&'a self, request: &'a Request) -> BoxFuture<'a, Option<InlineAnswer>> {
        Box::pin(async move {
            let mut tick = tokio::time::interval(Duration::from_secs(1));
            let mut rx = match self.interactive {
                true => Some(self.lines().lock().await),
                false => None,
            };
            // Lines typed while nothing waited must not answer a request nobody has seen.
            if let Some(rx) = rx.as_mut() {
                while rx.try_recv().is_ok() {}
            }
            let interactive = rx.is_some();
            loop {
                tokio::select! {
                    _ = tick.tick() => self.console.spin(self.status(request, interactive)),
                    answer = async {
                        match rx.as_mut() {
                            Some(rx) => read_answer(&self.console, rx).await,
                            None => std::future::pending().await,
                        }
                    } => {
                        if answer.is_some() {
                            let _ = std::io::stderr().flush();
                            return answer;
                        }
                        // stdin closed: only other channels can answer now.
                        rx = None;
                    }
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_approve_command_is_one_shell_word_per_argument() {
        assert_eq!(
            approve_command(
                "cr_01J",
                Path::new("/home/a/.local/state/tollgate/tollgate.db")
            ),
            "tollgate approvals approve cr_01J --db /home/a/.local/state/tollgate/tollgate.db"
        );
        assert_eq!(
            approve_command("cr_01J", Path::new("/tmp/my dir/it's.db")),
            r"tollgate approvals approve cr_01J --db '/tmp/my dir/it'\''s.db'"
        );
    }
}
