//! What the stand-in model says, turn by turn.

use serde_json::Value;

/// One model turn.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Step {
    /// Call the CLI's shell tool with this command line (Claude Code's `Bash`, Codex's
    /// `exec_command`), then stop for the tool result.
    Shell(String),
    /// Answer with this text and end the turn.
    Text(String),
    /// Answer with the text of the conversation's latest tool result and end the turn (so the
    /// CLI's final output shows what the model saw).
    EchoToolResult,
    /// Call these tools, in this order, in one turn (parallel tool calls), then stop for their
    /// results. Only the Messages API stand-in plays it (Claude Code's tools by name: `Bash`,
    /// `Write`, `Edit`, `Skill`, …); the Responses stand-in answers 400.
    Tools(Vec<ToolUse>),
}

/// One tool call of a [`Step::Tools`] turn.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ToolUse {
    /// The tool's name, as the CLI offers it.
    pub name: String,
    /// Its input, in the tool's own fields.
    pub input: Value,
}

impl ToolUse {
    /// A call of `name` with `input`.
    pub fn new(name: impl Into<String>, input: Value) -> Self {
        Self {
            name: name.into(),
            input,
        }
    }
}

/// The turns a stand-in plays, in order.
///
/// A request gets the turn whose index is the number of model turns its conversation already
/// holds: the first request gets turn 0, the request carrying turn 0's outcome gets turn 1, and
/// so on, so a retried request gets the same turn again. The Messages API stand-in counts the
/// conversation's assistant messages (a turn of parallel tool calls is one; an answer that a
/// Stop hook sent back for more work is one too); the Responses stand-in counts tool outputs
/// (Codex makes one call per turn). A request past the last turn gets [`Script::FINISHED`] as
/// text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Script {
    steps: Vec<Step>,
}

impl Script {
    /// What a request past the script's end is answered.
    pub const FINISHED: &'static str = "(the stand-in's script has no more turns)";

    /// An empty script: every request gets [`Script::FINISHED`].
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a turn that calls the shell tool with `command`.
    pub fn shell(self, command: impl Into<String>) -> Self {
        self.then(Step::Shell(command.into()))
    }

    /// Adds a turn that answers `text` and ends.
    pub fn text(self, text: impl Into<String>) -> Self {
        self.then(Step::Text(text.into()))
    }

    /// Adds a turn that answers with the latest tool result's text and ends.
    pub fn echo_tool_result(self) -> Self {
        self.then(Step::EchoToolResult)
    }

    /// Adds a turn that calls `tools` together (see [`Step::Tools`]).
    pub fn tools(self, tools: impl IntoIterator<Item = ToolUse>) -> Self {
        self.then(Step::Tools(tools.into_iter().collect()))
    }

    /// Adds `step`.
    pub fn then(mut self, step: Step) -> Self {
        self.steps.push(step);
        self
    }

    /// The turn for a request whose conversation already holds `turns` model turns, or `None`
    /// past the end.
    pub fn step(&self, turns: usize) -> Option<&Step> {
        self.steps.get(turns)
    }
}

/// What a turn resolves to once the request is known: the wire modules render this.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Turn {
    /// A shell tool call.
    Shell(String),
    /// A final text answer.
    Text(String),
    /// Several tool calls in one turn.
    Tools(Vec<ToolUse>),
}

impl Turn {
    /// Resolves the turn for a conversation that already holds `turns` model turns and these
    /// tool results (texts, oldest first).
    pub(crate) fn resolve(script: &Script, turns: usize, tool_results: &[String]) -> Self {
        match script.step(turns) {
            Some(Step::Shell(command)) => Turn::Shell(command.clone()),
            Some(Step::Tools(tools)) => Turn::Tools(tools.clone()),
            Some(Step::Text(text)) => Turn::Text(text.clone()),
            Some(Step::EchoToolResult) => Turn::Text(
                tool_results
                    .last()
                    .cloned()
                    .unwrap_or_else(|| "(no tool result yet)".to_owned()),
            ),
            None => Turn::Text(Script::FINISHED.to_owned()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_turn_is_chosen_by_the_number_of_turns_so_far() {
        let script = Script::new().shell("ls").echo_tool_result();
        assert_eq!(Turn::resolve(&script, 0, &[]), Turn::Shell("ls".into()));
        assert_eq!(
            Turn::resolve(&script, 1, &["a.txt".into()]),
            Turn::Text("a.txt".into())
        );
        assert_eq!(
            Turn::resolve(&script, 2, &["a".into(), "b".into()]),
            Turn::Text(Script::FINISHED.into())
        );
    }

    #[test]
    fn echo_answers_the_latest_result() {
        let script = Script::new().shell("a").shell("b").echo_tool_result();
        assert_eq!(
            Turn::resolve(&script, 2, &["first".into(), "second".into()]),
            Turn::Text("second".into())
        );
    }
}
