//! The compatibility suite's fixtures: `tests/compat/cases.json` and the project, plugin and
//! skills it runs against, copied into a scene of their own.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{Value, json};
use tollgate_standins::{Script, ToolUse};

use crate::support::Scene;

/// The fixtures' folder, `tests/compat` at the repository root.
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/compat")
}

/// `tests/compat/cases.json`.
#[derive(Debug, Deserialize)]
pub struct Table {
    pub runs: Vec<Run>,
}

/// One `claude -p` session.
#[derive(Debug, Deserialize)]
pub struct Run {
    pub name: String,
    pub prompt: String,
    /// What the prompt's `UserPromptSubmit` hooks decide, when it is not `allow`.
    #[serde(default)]
    pub prompt_expect: Option<Decision>,
    pub turns: Vec<Turn>,
}

/// A model turn: an answer, or tool calls made together.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum Turn {
    Text(String),
    Calls(Vec<Call>),
}

/// One tool call of a turn.
#[derive(Debug, Deserialize)]
pub struct Call {
    /// The case's name; a call without one (a `Skill` call) is not compared.
    #[serde(default)]
    pub case: Option<String>,
    pub tool: String,
    pub input: Value,
    /// What Claude Code does with the call.
    #[serde(default)]
    pub expect: Option<Decision>,
    /// What tollgate does, where it deliberately differs (docs/claude-code.md says why).
    #[serde(default)]
    pub tollgate: Option<Decision>,
    /// Both decide alike, each giving its own reason (a failed `onFailure: block` hook).
    #[serde(default)]
    pub own_reason: bool,
    /// A hook's `continue: false` ends the session after this call.
    #[serde(default)]
    pub ends_session: bool,
    /// The skill a `Skill` call puts in use: its hooks decide the calls after it.
    #[serde(default)]
    pub activates: Option<String>,
}

/// A decision, as the table names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    Allow,
    Deny,
    Ask,
    Rewrite,
}

impl Table {
    pub fn load() -> Self {
        let text = std::fs::read_to_string(fixtures().join("cases.json")).unwrap();
        serde_json::from_str(&text).unwrap()
    }

    pub fn run(name: &str) -> Run {
        let table = Self::load();
        table
            .runs
            .into_iter()
            .find(|run| run.name == name)
            .unwrap_or_else(|| panic!("tests/compat/cases.json has no run `{name}`"))
    }
}

impl Run {
    /// The stand-in's script, with `{project}` and `{home}` filled in.
    pub fn script(&self, places: &Places) -> Script {
        self.turns
            .iter()
            .fold(Script::new(), |script, turn| match turn {
                Turn::Text(text) => script.text(text.as_str()),
                Turn::Calls(calls) => script.tools(
                    calls
                        .iter()
                        .map(|call| ToolUse::new(&call.tool, places.fill(&call.input))),
                ),
            })
    }
}

/// Where a scene's fixtures are.
pub struct Places {
    pub project: PathBuf,
    pub home: PathBuf,
    pub plugin: PathBuf,
    /// Every hook payload Claude Code wrote, one JSON object a line (the recorder's log).
    pub payloads: PathBuf,
}

impl Places {
    /// Copies the project (settings, hooks, skills) and the plugin into `scene`, and registers
    /// the recorder in the user's settings (`$CLAUDE_CONFIG_DIR/settings.json`): tollgate is
    /// given the project's files only, so the recorder never runs there.
    pub fn new(scene: &Scene) -> Self {
        copy_tree(&fixtures().join("project"), &scene.project);
        let plugin = scene.home.join("plugins/compat-guards");
        copy_tree(&fixtures().join("plugin"), &plugin);
        let payloads = scene.home.join("compat-payloads.jsonl");
        let record = json!([{"hooks": [{
            "type": "command",
            "command": format!("jq -c . >> '{}'", payloads.display())
        }]}]);
        let events = [
            "SessionStart",
            "UserPromptSubmit",
            "PreToolUse",
            "PostToolUse",
            "PostToolUseFailure",
            "Stop",
            "PermissionRequest",
            "Notification",
        ];
        let hooks: serde_json::Map<String, Value> = events
            .iter()
            .map(|event| ((*event).to_owned(), record.clone()))
            .collect();
        let settings = scene.home.join(".claude/settings.json");
        std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
        std::fs::write(&settings, json!({"hooks": hooks}).to_string()).unwrap();
        Self {
            project: scene.project.clone(),
            home: scene.home.clone(),
            plugin,
            payloads,
        }
    }

    /// `value` with `{project}` and `{home}` in its strings replaced.
    pub fn fill(&self, value: &Value) -> Value {
        match value {
            Value::String(text) => Value::String(
                text.replace("{project}", &self.project.display().to_string())
                    .replace("{home}", &self.home.display().to_string()),
            ),
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(key, value)| (key.clone(), self.fill(value)))
                    .collect(),
            ),
            Value::Array(items) => Value::Array(items.iter().map(|v| self.fill(v)).collect()),
            other => other.clone(),
        }
    }

    /// Every payload the recorder got, in order.
    pub fn payloads(&self) -> Vec<Value> {
        let text = std::fs::read_to_string(&self.payloads).unwrap_or_default();
        text.lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    }

    /// The skill `name`'s SKILL.md in the project.
    pub fn skill(&self, name: &str) -> PathBuf {
        self.project
            .join(".claude/skills")
            .join(name)
            .join("SKILL.md")
    }
}

/// Copies `from` into `to` (files keep their mode bits: the hook scripts stay executable).
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}
