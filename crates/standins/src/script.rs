//! What the stand-in model says, turn by turn.

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
}

/// The turns a stand-in plays, in order.
///
/// A request gets the turn whose index is the number of tool results in its conversation: the
/// first request (no result yet) gets turn 0, the request carrying the first result gets turn
/// 1, and so on. A request past the last turn gets [`Script::FINISHED`] as text.
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

    /// Adds `step`.
    pub fn then(mut self, step: Step) -> Self {
        self.steps.push(step);
        self
    }

    /// The turn for a request whose conversation holds `tool_results` tool results, or `None`
    /// past the end.
    pub fn step(&self, tool_results: usize) -> Option<&Step> {
        self.steps.get(tool_results)
    }
}

/// What a turn resolves to once the request is known: the wire modules render this.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Turn {
    /// A shell tool call.
    Shell(String),
    /// A final text answer.
    Text(String),
}

impl Turn {
    /// Resolves the turn for a conversation with these tool results (texts, oldest first).
    pub(crate) fn resolve(script: &Script, tool_results: &[String]) -> Self {
        match script.step(tool_results.len()) {
            Some(Step::Shell(command)) => Turn::Shell(command.clone()),
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
    fn the_turn_is_chosen_by_the_number_of_tool_results() {
        let script = Script::new().shell("ls").echo_tool_result();
        assert_eq!(Turn::resolve(&script, &[]), Turn::Shell("ls".into()));
        assert_eq!(
            Turn::resolve(&script, &["a.txt".into()]),
            Turn::Text("a.txt".into())
        );
        assert_eq!(
            Turn::resolve(&script, &["a".into(), "b".into()]),
            Turn::Text(Script::FINISHED.into())
        );
    }

    #[test]
    fn echo_answers_the_latest_result() {
        let script = Script::new().shell("a").shell("b").echo_tool_result();
        assert_eq!(
            Turn::resolve(&script, &["first".into(), "second".into()]),
            Turn::Text("second".into())
        );
    }
}
