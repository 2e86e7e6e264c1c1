//! The scripted provider: replays a file of assistant turns, one per model call.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;
use tollgate_core::BoxFuture;

use super::{Message, Model, ModelError, ModelRequest, Role};

/// Replays assistant turns from a file, in order, whatever the conversation says.
///
/// The file holds assistant messages in the [OpenAI message shape][msg], either as one JSON
/// array or as JSON Lines (one message per line; blank lines and lines starting with `//` are
/// skipped):
///
/// ```json
/// {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
///   "function": {"name": "sql_query", "arguments": "{\"sql\": \"SELECT 1\"}"}}]}
/// {"role": "assistant", "content": "Done."}
/// ```
///
/// `arguments` may also be written as a JSON object. Each run needs its own instance (the
/// position in the script is per instance). A conversation that already holds `k` assistant
/// turns (a resumed run) goes on with turn `k + 1`. When the script runs out the call fails
/// with [`ModelError::ScriptExhausted`].
///
/// [msg]: https://platform.openai.com/docs/api-reference/chat/object
#[derive(Debug)]
pub struct ScriptedModel {
    path: String,
    turns: Vec<Message>,
    next: AtomicUsize,
}

impl ScriptedModel {
    /// Reads a script file.
    ///
    /// # Errors
    /// [`ModelError::Setup`] naming the file (and the line) when it cannot be read, is not
    /// JSON, or holds a message that is not an assistant turn.
    pub fn load(path: &Path) -> Result<Self, ModelError> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            ModelError::Setup(format!("cannot read the script {}: {e}", path.display()))
        })?;
        Self::parse(&path.display().to_string(), &text)
    }

    /// Parses a script's text; `path` names it in errors.
    ///
    /// # Errors
    /// As [`ScriptedModel::load`].
    pub fn parse(path: &str, text: &str) -> Result<Self, ModelError> {
        let setup =
            |at: String, why: String| ModelError::Setup(format!("script {path}{at}: {why}"));
        let items: Vec<(String, Value)> = if text.trim_start().starts_with('[') {
            let array: Vec<Value> =
                serde_json::from_str(text).map_err(|e| setup(String::new(), e.to_string()))?;
            array
                .into_iter()
                .enumerate()
                .map(|(i, v)| (format!(" item {}", i + 1), v))
                .collect()
        } else {
            let mut items = Vec::new();
            for (i, line) in text.lines().enumerate() {
                let line = line.trim();
                if line.is_empty() || line.starts_with("//") {
                    continue;
                }
                let value = serde_json::from_str(line)
                    .map_err(|e| setup(format!(" line {}", i + 1), e.to_string()))?;
                items.push((format!(" line {}", i + 1), value));
            }
            items
        };
        let mut turns = Vec::with_capacity(items.len());
        for (at, value) in items {
            let message: Message = serde_path_to_error::deserialize(value)
                .map_err(|e| setup(at.clone(), e.to_string()))?;
            if message.role != Role::Assistant {
                return Err(setup(
                    at,
                    "every scripted message must have role `assistant`".into(),
                ));
            }
            for call in &message.tool_calls {
                serde_json::from_str::<Value>(&call.function.arguments).map_err(|e| {
                    setup(
                        at.clone(),
                        format!("tool call `{}`: arguments are not JSON: {e}", call.id),
                    )
                })?;
            }
            turns.push(message);
        }
        if turns.is_empty() {
            return Err(setup(String::new(), "no assistant turns".into()));
        }
        Ok(Self {
            path: path.to_owned(),
            turns,
            next: AtomicUsize::new(0),
        })
    }

    /// How many turns the script has.
    pub fn len(&self) -> usize {
        self.turns.len()
    }

    /// Whether the script has no turns (never true for a loaded script).
    pub fn is_empty(&self) -> bool {
        self.turns.is_empty()
    }
}

impl Model for ScriptedModel {
    fn describe(&self) -> String {
        format!("scripted:{}", self.path)
    }

    fn complete<'a>(
        &'a self,
        request: ModelRequest<'a>,
    ) -> BoxFuture<'a, Result<Message, ModelError>> {
        let answered = request
            .messages
            .iter()
            .filter(|m| m.role == Role::Assistant)
            .count();
        let turn = self.next.fetch_add(1, Ordering::Relaxed).max(answered);
        self.next.store(turn + 1, Ordering::Relaxed);
        let answer = self
            .turns
            .get(turn)
            .cloned()
            .ok_or_else(|| ModelError::ScriptExhausted {
                path: self.path.clone(),
                turns: self.turns.len(),
            });
        Box::pin(std::future::ready(answer))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jsonl_and_array_scripts_parse_alike() {
        let line = r#"{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"t","arguments":{"a":1}}}]}"#;
        let jsonl = ScriptedModel::parse("s", &format!("// a comment\n{line}\n\n")).unwrap();
        let array = ScriptedModel::parse("s", &format!("[{line}]")).unwrap();
        assert_eq!(jsonl.turns, array.turns);
        assert_eq!(
            jsonl.turns[0].tool_calls[0].function.arguments,
            r#"{"a":1}"#
        );
    }

    #[test]
    fn bad_scripts_name_the_line() {
        let err = ScriptedModel::parse(
            "s.jsonl",
            "{\"role\":\"assistant\",\"content\":\"x\"}\n{oops",
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("s.jsonl line 2"), "{err}");
        let err = ScriptedModel::parse("s", r#"{"role":"user","content":"x"}"#)
            .unwrap_err()
            .to_string();
        assert!(err.contains("role `assistant`"), "{err}");
        let bad_args = r#"{"role":"assistant","tool_calls":[{"id":"c","function":{"name":"t","arguments":"{"}}]}"#;
        assert!(
            ScriptedModel::parse("s", bad_args)
                .unwrap_err()
                .to_string()
                .contains("not JSON")
        );
        assert!(ScriptedModel::parse("s", "\n").is_err());
    }

    #[tokio::test]
    async fn turns_replay_in_order_then_run_out() {
        let model = ScriptedModel::parse(
            "s",
            "{\"role\":\"assistant\",\"content\":\"one\"}\n{\"role\":\"assistant\",\"content\":\"two\"}",
        )
        .unwrap();
        let request = ModelRequest {
            messages: &[],
            tools: &[],
        };
        assert_eq!(
            model.complete(request).await.unwrap().content.as_deref(),
            Some("one")
        );
        assert_eq!(
            model.complete(request).await.unwrap().content.as_deref(),
            Some("two")
        );
        assert!(matches!(
            model.complete(request).await,
            Err(ModelError::ScriptExhausted { turns: 2, .. })
        ));
    }
}
