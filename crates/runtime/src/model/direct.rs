//! The direct provider: the user's message is the tool call. It lets a hook file be tried in a
//! real run without writing a script or reaching a model (`tollgate run --hooks FILE "rm -rf
//! build"`), and is the model of the default agent.

use serde_json::Value;
use tollgate_core::BoxFuture;

use super::{FunctionCall, Message, Model, ModelError, ModelRequest, ModelToolCall, Role};
use crate::tools::BASH_TOOL;

/// How much of the observation the final answer repeats, in characters.
const ANSWER_CHARS: usize = 2_000;

/// Makes one tool call out of the user's message, then answers with what the call returned.
///
/// The message (after its `[use NAME]` tags) is read as:
/// - `TOOL {JSON object}`, where `TOOL` is one of the tools on offer: that call with those
///   arguments (`sql_query {"sql": "SELECT 1"}`, `write_file {"path": "a.txt", "content":
///   "hi"}`);
/// - anything else: a shell command for `bash_code_execute_tool` (`{"command": MESSAGE}`), when
///   the agent has that tool.
///
/// The first turn proposes the call, so every hook of `pre_tool_use` (and after it the
/// tool's own events) sees it exactly as it would see a model's; the second turn is the final
/// answer: the call's observation, cut at 2,000 characters. A message that fits neither form
/// gets a final answer saying which forms are accepted, and no call.
#[derive(Debug, Default)]
pub struct DirectModel;

impl Model for DirectModel {
    fn describe(&self) -> String {
        "direct".into()
    }

    fn complete<'a>(
        &'a self,
        request: ModelRequest<'a>,
    ) -> BoxFuture<'a, Result<Message, ModelError>> {
        Box::pin(std::future::ready(Ok(answer(request))))
    }
}

fn answer(request: ModelRequest<'_>) -> Message {
    let answered = request.messages.iter().any(|m| m.role == Role::Assistant);
    if answered {
        let observation = request
            .messages
            .iter()
            .rev()
            .find(|m| m.role == Role::Tool)
            .and_then(|m| m.content.as_deref())
            .unwrap_or("no tool call was made");
        let cut: String = observation.chars().take(ANSWER_CHARS).collect();
        let more = if cut.len() < observation.len() {
            " …"
        } else {
            ""
        };
        return Message::text(Role::Assistant, format!("{cut}{more}"));
    }
    let prompt = request
        .messages
        .iter()
        .rev()
        .find(|m| m.role == Role::User)
        .and_then(|m| m.content.as_deref())
        .unwrap_or("");
    let tools: Vec<&str> = request.tools.iter().map(|t| t.name.as_str()).collect();
    match call_of(without_tags(prompt), &tools) {
        Some((name, arguments)) => Message {
            role: Role::Assistant,
            content: None,
            tool_calls: vec![ModelToolCall {
                id: "call_1".into(),
                kind: "function".into(),
                function: FunctionCall { name, arguments },
            }],
            tool_call_id: None,
        },
        None => Message::text(
            Role::Assistant,
            format!(
                "The direct model makes one tool call from the message: `TOOL {{JSON \
                 arguments}}` with TOOL one of {}, or a shell command when the agent has \
                 `{BASH_TOOL}`.",
                if tools.is_empty() {
                    "(none: this agent has no tools)".to_owned()
                } else {
                    tools.join(", ")
                }
            ),
        ),
    }
}

/// The message without the `[use NAME]` tags it starts with.
fn without_tags(message: &str) -> &str {
    let mut rest = message.trim_start();
    while rest
        .get(..5)
        .is_some_and(|t| t.eq_ignore_ascii_case("[use "))
    {
        match rest.find(']') {
            Some(end) => rest = rest[end + 1..].trim_start(),
            None => break,
        }
    }
    rest.trim()
}

/// `(tool name, arguments as JSON text)` for `message`.
fn call_of(message: &str, tools: &[&str]) -> Option<(String, String)> {
    if message.is_empty() {
        return None;
    }
    if let Some((first, rest)) = message.split_once(char::is_whitespace)
        && tools.contains(&first)
        && let Ok(Value::Object(arguments)) = serde_json::from_str::<Value>(rest.trim())
    {
        return Some((first.to_owned(), Value::Object(arguments).to_string()));
    }
    tools.contains(&BASH_TOOL).then(|| {
        let arguments = serde_json::json!({ "command": message });
        (BASH_TOOL.to_owned(), arguments.to_string())
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::model::ToolSpec;

    fn tools(names: &[&str]) -> Vec<ToolSpec> {
        names
            .iter()
            .map(|n| ToolSpec {
                name: (*n).into(),
                description: String::new(),
                parameters: Value::Null,
            })
            .collect()
    }

    fn first_turn(prompt: &str, names: &[&str]) -> Message {
        let messages = [Message::text(Role::User, prompt)];
        let tools = tools(names);
        answer(ModelRequest {
            messages: &messages,
            tools: &tools,
        })
    }

    #[test]
    fn a_named_tool_with_a_json_object_is_that_call() {
        let turn = first_turn(
            r#"[use deploy] sql_query {"sql": "SELECT 1"}"#,
            &["sql_query", BASH_TOOL],
        );
        let call = &turn.tool_calls[0].function;
        assert_eq!(call.name, "sql_query");
        assert_eq!(
            serde_json::from_str::<Value>(&call.arguments).unwrap(),
            serde_json::json!({"sql": "SELECT 1"})
        );
    }

    #[test]
    fn anything_else_is_a_shell_command() {
        for prompt in ["rm -rf build", "sql_query not json", "[Use x] rm -rf build"] {
            let turn = first_turn(prompt, &["sql_query", BASH_TOOL]);
            let call = &turn.tool_calls[0].function;
            assert_eq!(call.name, BASH_TOOL, "{prompt}");
            let command = serde_json::from_str::<Value>(&call.arguments).unwrap()["command"]
                .as_str()
                .unwrap()
                .to_owned();
            assert!(prompt.ends_with(&command), "{prompt} → {command}");
        }
    }

    #[test]
    fn without_the_shell_tool_a_command_gets_an_explanation_not_a_call() {
        let turn = first_turn("rm -rf build", &["sql_query"]);
        assert!(turn.tool_calls.is_empty());
        assert!(turn.content.unwrap().contains("sql_query"));
    }

    #[test]
    fn the_second_turn_answers_with_the_observation() {
        let messages = [
            Message::text(Role::User, "ls"),
            first_turn("ls", &[BASH_TOOL]),
            Message::tool("call_1", "x".repeat(ANSWER_CHARS + 10)),
        ];
        let turn = answer(ModelRequest {
            messages: &messages,
            tools: &tools(&[BASH_TOOL]),
        });
        assert!(turn.tool_calls.is_empty());
        let content = turn.content.unwrap();
        assert!(content.starts_with(&"x".repeat(ANSWER_CHARS)) && content.ends_with(" …"));
    }
}
