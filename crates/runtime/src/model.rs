//! The model port: what the ReAct loop asks a model, and the two providers.
//!
//! Messages use the [OpenAI Chat Completions message shape][chat] (`role`, `content`,
//! `tool_calls[].function.{name, arguments}`, `tool_call_id`), the lingua franca of tool-calling
//! servers (OpenAI, vLLM, Ollama, llama.cpp), so a recorded conversation can be replayed as is.
//!
//! [chat]: https://platform.openai.com/docs/api-reference/chat/create

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tollgate_core::BoxFuture;

pub mod direct;
pub mod openai;
pub mod scripted;

pub use direct::DirectModel;
pub use openai::{OpenAiConfig, OpenAiModel};
pub use scripted::ScriptedModel;

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The agent's instructions.
    System,
    /// The person (or the delegating agent).
    User,
    /// The model.
    Assistant,
    /// A tool's observation, answering one tool call.
    Tool,
}

/// One chat message, in the OpenAI shape.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Who wrote it.
    pub role: Role,
    /// Its text; `None` for an assistant turn that only calls tools. Read from a string, `null`
    /// or an array of content parts (`[{"type": "text", "text": …}]`, whose texts are joined).
    #[serde(default, deserialize_with = "content_text")]
    pub content: Option<String>,
    /// The tool calls of an assistant turn (`null` reads as none).
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "null_as_empty"
    )]
    pub tool_calls: Vec<ModelToolCall>,
    /// For a `tool` message: the call it answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

impl Message {
    /// A message with text only.
    pub fn text(role: Role, content: impl Into<String>) -> Self {
        Self {
            role,
            content: Some(content.into()),
            tool_calls: Vec::new(),
            tool_call_id: None,
        }
    }

    /// A tool's observation for `tool_call_id`.
    pub fn tool(tool_call_id: impl Into<String>, content: impl Into<String>) -> Self {
        Self {
            role: Role::Tool,
            content: Some(content.into()),
            tool_calls: Vec::new(),
            tool_call_id: Some(tool_call_id.into()),
        }
    }
}

/// One tool call of an assistant turn: `{"id", "type": "function", "function": {"name",
/// "arguments"}}`, where `arguments` is a JSON text (as the API sends it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelToolCall {
    /// The model's id for the call; observations answer it. (Missing in some servers'
    /// answers: the OpenAI provider then makes one up.)
    #[serde(default)]
    pub id: String,
    /// Always `function`.
    #[serde(rename = "type", default = "function_type")]
    pub kind: String,
    /// The function called.
    pub function: FunctionCall,
}

fn null_as_empty<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<ModelToolCall>, D::Error> {
    Ok(Option::<Vec<ModelToolCall>>::deserialize(d)?.unwrap_or_default())
}

fn content_text<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    use serde::de::Error;
    match Value::deserialize(d)? {
        Value::Null => Ok(None),
        Value::String(text) => Ok(Some(text)),
        Value::Array(parts) => {
            let mut text = String::new();
            for part in parts {
                match part.get("text").and_then(Value::as_str) {
                    Some(t) => text.push_str(t),
                    None if part.get("type").and_then(Value::as_str) == Some("refusal") => {
                        text.push_str(part.get("refusal").and_then(Value::as_str).unwrap_or(""));
                    }
                    None => return Err(D::Error::custom("a content part without `text`")),
                }
            }
            Ok(Some(text))
        }
        other => Err(D::Error::custom(format!(
            "content must be a string, null or parts, not {other}"
        ))),
    }
}

fn function_type() -> String {
    "function".into()
}

/// The function part of a [`ModelToolCall`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionCall {
    /// The tool name.
    pub name: String,
    /// The arguments as a JSON text. (Scripts may write an object; it is kept as its text.)
    #[serde(deserialize_with = "arguments_text")]
    pub arguments: String,
}

fn arguments_text<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::String(text) => text,
        other => other.to_string(),
    })
}

/// A tool the model may call, as announced to it (`tools[]` of the request).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolSpec {
    /// The tool name.
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// JSON Schema of its arguments.
    pub parameters: Value,
}

/// What the loop asks for: the conversation so far and the tools on offer.
#[derive(Debug, Clone, Copy)]
pub struct ModelRequest<'a> {
    /// The conversation, system prompt first.
    pub messages: &'a [Message],
    /// The tools the model may call.
    pub tools: &'a [ToolSpec],
}

/// Why a model turn could not be had.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// The scripted provider has no turn left.
    #[error("the script {path} has no assistant turn left (it has {turns})")]
    ScriptExhausted {
        /// The script file.
        path: String,
        /// How many turns it has.
        turns: usize,
    },
    /// The endpoint could not be reached or answered with an error.
    #[error("model request failed: {0}")]
    Request(String),
    /// The answer was not a Chat Completions response with one assistant message.
    #[error("model answer not understood: {0}")]
    Answer(String),
    /// A provider could not be set up (bad script file, missing key).
    #[error("{0}")]
    Setup(String),
}

/// A model: one assistant turn per call.
pub trait Model: Send + Sync {
    /// The provider and model, for traces (`scripted:ops.json`, `openai:gpt-4o-mini`).
    fn describe(&self) -> String;

    /// Asks for the next assistant turn.
    ///
    /// # Cancel safety
    /// The future may be dropped (the run was cancelled); a scripted turn is then not consumed
    /// twice, an HTTP request is aborted.
    fn complete<'a>(
        &'a self,
        request: ModelRequest<'a>,
    ) -> BoxFuture<'a, Result<Message, ModelError>>;
}

/// Which model an agent uses: `scripted:FILE`, `openai:MODEL` or `direct`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelSpec {
    /// The user's message is the tool call ([`DirectModel`]).
    Direct,
    /// Replay the assistant turns of a file.
    Scripted(PathBuf),
    /// An OpenAI-compatible Chat Completions endpoint with this model name.
    OpenAi(String),
}

impl ModelSpec {
    /// Parses `scripted:FILE` (relative to `base`), `openai:MODEL` or `direct`.
    ///
    /// # Errors
    /// A message naming the accepted forms.
    pub fn parse(text: &str, base: &Path) -> Result<Self, String> {
        if text.trim() == "direct" {
            return Ok(Self::Direct);
        }
        match text.split_once(':') {
            Some(("scripted", file)) if !file.trim().is_empty() => {
                Ok(Self::Scripted(base.join(file.trim())))
            }
            Some(("openai", model)) if !model.trim().is_empty() => {
                Ok(Self::OpenAi(model.trim().to_owned()))
            }
            _ => Err(format!(
                "model `{text}` is none of `scripted:FILE`, `openai:MODEL`, `direct`"
            )),
        }
    }

    /// Builds the provider. `endpoint` is an agent file's `base_url` and `api_key_env`; without
    /// it the endpoint and key come from the environment ([`OpenAiConfig::from_env`]).
    ///
    /// # Errors
    /// [`ModelError::Setup`] when the script cannot be read or parsed, or the base URL is not
    /// http(s).
    pub fn build(
        &self,
        endpoint: Option<(&str, Option<&str>)>,
    ) -> Result<Box<dyn Model>, ModelError> {
        Ok(match self {
            Self::Direct => Box::new(DirectModel),
            Self::Scripted(path) => Box::new(ScriptedModel::load(path)?),
            Self::OpenAi(model) => Box::new(OpenAiModel::new(OpenAiConfig::from_env(
                model,
                endpoint,
                |name| std::env::var(name).ok(),
            ))?),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_read_the_shapes_servers_send() {
        let null_calls: Message =
            serde_json::from_str(r#"{"role":"assistant","content":"hi","tool_calls":null}"#)
                .unwrap();
        assert!(null_calls.tool_calls.is_empty());
        let parts: Message = serde_json::from_str(
            r#"{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}"#,
        )
        .unwrap();
        assert_eq!(parts.content.as_deref(), Some("ab"));
        assert!(serde_json::from_str::<Message>(r#"{"role":"assistant","content":5}"#).is_err());
        // What goes out has no `tool_calls` when there are none.
        let out = serde_json::to_value(Message::text(Role::User, "x")).unwrap();
        assert_eq!(out, serde_json::json!({"role": "user", "content": "x"}));
    }
}
