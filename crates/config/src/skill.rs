//! SKILL.md: hooks in the YAML frontmatter, and which skills a run selected.

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;
use tollgate_protocol::HookSource;

use crate::error::{ConfigError, Result};
use crate::hooks_map::{self, Origin};
use crate::spec::HookSpec;
use crate::warning::Warning;
use crate::{read, suggest, yaml};

/// One skill's hooks, as declared in its SKILL.md frontmatter.
#[derive(Debug, Clone)]
pub struct Skill {
    /// `name:` from the frontmatter, else the name of the directory holding SKILL.md.
    pub name: String,
    /// The file, as given.
    pub path: String,
    /// The hooks that passed validation, with source `skill`.
    pub hooks: Vec<HookSpec>,
    /// What was skipped, and why.
    pub warnings: Vec<Warning>,
}

impl Skill {
    /// Reads and parses a SKILL.md.
    ///
    /// # Errors
    /// As [`Skill::parse`], plus [`ConfigError::Read`].
    pub fn load(path: &Path) -> Result<Self> {
        Self::parse(path, &read(path)?)
    }

    /// Parses a SKILL.md's text. A file that does not start with a `---` line has no
    /// frontmatter and no hooks.
    ///
    /// # Errors
    /// [`ConfigError::UnclosedFrontmatter`] when the opening `---` has no closing `---` line;
    /// [`ConfigError::Yaml`] when the frontmatter is not valid YAML (duplicate keys and alias
    /// bombs included) or not a mapping.
    pub fn parse(path: &Path, text: &str) -> Result<Self> {
        let file = path.display().to_string();
        let front = match frontmatter(text) {
            Some(Ok(front)) => front,
            Some(Err(())) => return Err(ConfigError::UnclosedFrontmatter { path: file }),
            None => "",
        };
        // The frontmatter starts on line 2, after the opening `---`.
        let (value, field_warnings) = match yaml::parse_from_line(front, 2) {
            Ok(value) => (value, Vec::new()),
            Err(message) => lenient(front, &file, &message).ok_or_else(|| ConfigError::Yaml {
                path: file.clone(),
                message,
            })?,
        };
        if !matches!(value, Value::Object(_) | Value::Null) {
            return Err(ConfigError::Yaml {
                path: file,
                message: "the frontmatter must be a mapping".into(),
            });
        }
        let name = skill_name(&value, path);
        let mut skill = Self {
            name,
            path: file,
            hooks: Vec::new(),
            warnings: field_warnings,
        };
        let prefix = format!("skill:{}", skill.name);
        let origin = Origin {
            file: &skill.path,
            source: HookSource::Skill,
            name_prefix: &prefix,
            admin: false,
            plugin_root: None,
        };
        match value.get("hooks") {
            Some(hooks) => hooks_map::parse(&origin, hooks, &mut skill.hooks, &mut skill.warnings),
            None => skill.warnings.extend(misspelt_hooks(&value, &skill.path)),
        }
        // A skill cannot open the sandbox or the network of its own hooks: say so rather than
        // let an author believe it did.
        if value.get("approval").is_some() {
            skill.warnings.push(Warning::new(
                &skill.path,
                "approval",
                "`approval` is honoured in agent files and admin hook files only; ignored in a SKILL.md",
            ));
        }
        for key in crate::ADMIN_ONLY_KEYS {
            if value.get(key).is_some() {
                skill.warnings.push(Warning::new(
                    &skill.path,
                    key,
                    format!("`{key}` is honoured in admin hook files only; ignored in a SKILL.md"),
                ));
            }
        }
        Ok(skill)
    }
}

/// A frontmatter strict YAML rejects, read one top-level field at a time: a field that does
/// not parse (Claude Code's skills often have `argument-hint: [file] [mode]`, which YAML reads
/// as a sequence followed by junk) is skipped with a warning instead of costing the skill its
/// hooks. `None` (the file's error stands) when the fields cannot be told apart, a key repeats,
/// the field that does not parse is `hooks`, or the error is one of the limits (aliases,
/// anchors, budgets, duplicate keys, documents), which a field-by-field reading must never
/// sidestep.
fn lenient(front: &str, file: &str, error: &str) -> Option<(Value, Vec<Warning>)> {
    let structural = |message: &str| {
        [
            "alias",
            "anchor",
            "limit",
            "budget",
            "duplicate",
            "document",
        ]
        .iter()
        .any(|word| message.contains(word))
    };
    if structural(error) {
        return None;
    }
    let mut blocks: Vec<(usize, String, String)> = Vec::new();
    for (n, line) in front.split_inclusive('\n').enumerate() {
        let blank = line.trim().is_empty() || line.trim_start().starts_with('#');
        if line.starts_with([' ', '\t']) || blank {
            blocks.last_mut()?.2.push_str(line);
            continue;
        }
        let key = line
            .split_once(':')?
            .0
            .trim()
            .trim_matches(['"', '\''])
            .to_owned();
        if key.is_empty() || blocks.iter().any(|(_, k, _)| *k == key) {
            return None;
        }
        blocks.push((n, key, line.to_owned()));
    }
    let mut map = serde_json::Map::new();
    let mut warnings = Vec::new();
    for (n, key, text) in blocks {
        // The frontmatter's first line is the file's line 2.
        match yaml::parse_from_line(&text, n as u64 + 2) {
            Ok(Value::Object(mut one)) if one.len() == 1 && one.contains_key(&key) => {
                map.extend(one.remove(&key).map(|v| (key, v)));
            }
            Ok(_) => return None,
            Err(message) if key == "hooks" || structural(&message) => return None,
            Err(message) => warnings.push(Warning::new(
                file,
                key.as_str(),
                format!(
                    "not valid YAML ({message}); this field is ignored, the skill's hooks and \
                     other fields load (quote the value: `{key}: \"…\"`)"
                ),
            )),
        }
    }
    Some((Value::Object(map), warnings))
}

/// A frontmatter may hold any key a skill format defines, but one close to `hooks` (`hook:`,
/// `Hooks:`) is almost surely meant to declare hooks, which would silently not exist.
fn misspelt_hooks(front: &Value, file: &str) -> Option<Warning> {
    let key = front
        .as_object()?
        .keys()
        .find(|k| suggest::closest(k, &["hooks"]).is_some())?;
    Some(Warning::new(
        file,
        key.as_str(),
        format!(
            "`{key}` is not read by tollgate (did you mean `hooks`?); no hooks are loaded from it"
        ),
    ))
}

/// The frontmatter text: `None` without an opening `---` line, `Some(Err(()))` when it is
/// never closed.
fn frontmatter(text: &str) -> Option<std::result::Result<&str, ()>> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split_inclusive('\n');
    let first = lines.next()?;
    if first.trim_end() != "---" {
        return None;
    }
    let start = first.len();
    let mut offset = start;
    for line in lines {
        if line.trim_end() == "---" {
            return Some(Ok(&text[start..offset]));
        }
        offset += line.len();
    }
    Some(Err(()))
}

fn skill_name(front: &Value, path: &Path) -> String {
    front
        .get("name")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(str::to_owned)
        .or_else(|| {
            let dir = path.parent()?.file_name()?;
            Some(dir.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "unnamed".to_owned())
}

/// The skills available to an agent. Skills contribute hooks only when a run selects them:
/// [`SkillSet::hooks_for`] takes the run's selection, so a skill the model loads by itself
/// (not selected) registers nothing. The set is immutable and can be shared between
/// concurrent runs; each run asks for its own selection.
#[derive(Debug, Clone, Default)]
pub struct SkillSet {
    skills: Vec<Arc<Skill>>,
}

impl SkillSet {
    /// A set of parsed skills.
    pub fn new(skills: impl IntoIterator<Item = Skill>) -> Self {
        Self {
            skills: skills.into_iter().map(Arc::new).collect(),
        }
    }

    /// The set with `skill` added after the others.
    #[must_use]
    pub fn with(mut self, skill: Skill) -> Self {
        self.skills.push(Arc::new(skill));
        self
    }

    /// The skill named `name`.
    pub fn get(&self, name: &str) -> Option<&Skill> {
        self.skills.iter().map(|s| &**s).find(|s| s.name == name)
    }

    /// The hooks of the selected skills, in selection order (a name selected twice counts
    /// once). Two skills that share a name are both selected by it: neither's hooks may vanish
    /// behind the other's (see [`SkillSet::duplicates`]). Unknown names select nothing (see
    /// [`SkillSet::unknown`]).
    pub fn hooks_for(&self, selected: &[String]) -> Vec<HookSpec> {
        let mut seen: Vec<&str> = Vec::new();
        let mut hooks = Vec::new();
        for name in selected {
            if seen.contains(&name.as_str()) {
                continue;
            }
            seen.push(name);
            let same_name = self.skills.iter().filter(|skill| skill.name == *name);
            hooks.extend(same_name.flat_map(|skill| skill.hooks.iter().cloned()));
        }
        hooks
    }

    /// The skills' files (`SKILL.md`), as given.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.skills.iter().map(|s| s.path.as_str())
    }

    /// The skills' names, sorted, without repeats.
    pub fn names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.skills.iter().map(|s| s.name.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        names
    }

    /// Names carried by more than one skill of the set, with their files.
    pub fn duplicates(&self) -> Vec<(&str, Vec<&str>)> {
        self.names()
            .into_iter()
            .filter_map(|name| {
                let paths: Vec<_> = self
                    .skills
                    .iter()
                    .filter(|s| s.name == name)
                    .map(|s| s.path.as_str())
                    .collect();
                (paths.len() > 1).then_some((name, paths))
            })
            .collect()
    }

    /// The selected names that are not in the set.
    pub fn unknown<'a>(&self, selected: &'a [String]) -> Vec<&'a str> {
        selected
            .iter()
            .filter(|name| self.get(name).is_none())
            .map(String::as_str)
            .collect()
    }
}

/// The skills a user selected for a run: the `explicit` list (UI choice, API field, CLI flag)
/// plus the names of `[use <skill-name>]` tags the message starts with (`[use deploy] [use
/// db] ship it` selects `deploy` and `db`; `use` in any case, `[Use deploy]` too). A skill
/// mentioned anywhere else in the message, or loaded by the model, is not selected. No
/// duplicates; explicit names first.
pub fn selected_skills(message: &str, explicit: &[String]) -> Vec<String> {
    let mut selected: Vec<String> = Vec::new();
    let mut push = |name: &str| {
        if !name.is_empty() && !selected.iter().any(|s| s == name) {
            selected.push(name.to_owned());
        }
    };
    explicit.iter().for_each(|name| push(name.trim()));
    let mut rest = message.trim_start();
    while let Some(tag) = strip_use_tag(rest) {
        let Some(end) = tag.find(']') else { break };
        let name = tag[..end].trim();
        if name.is_empty() || name.contains(char::is_whitespace) {
            break;
        }
        push(name);
        rest = tag[end + 1..].trim_start();
    }
    selected
}

/// `text` after a leading `[use ` (`use` in any case).
fn strip_use_tag(text: &str) -> Option<&str> {
    const TAG: &str = "[use ";
    let head = text.get(..TAG.len())?;
    head.eq_ignore_ascii_case(TAG).then(|| &text[TAG.len()..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frontmatter_needs_both_fences() {
        assert_eq!(frontmatter("---\na: 1\n---\nbody"), Some(Ok("a: 1\n")));
        assert_eq!(frontmatter("---\r\na: 1\r\n---\r\n"), Some(Ok("a: 1\r\n")));
        assert_eq!(frontmatter("---\na: 1\n"), Some(Err(())));
        assert_eq!(frontmatter("# Title\n---\n"), None);
        assert_eq!(frontmatter("---\n---\n"), Some(Ok("")));
    }

    #[test]
    fn selection_is_explicit_or_a_leading_use_tag() {
        let none: &[String] = &[];
        assert_eq!(selected_skills("[use deploy] ship it", none), ["deploy"]);
        assert_eq!(selected_skills("  [use a][use b] go", none), ["a", "b"]);
        assert!(selected_skills("please [use deploy]", none).is_empty());
        assert!(selected_skills("[use ] x", none).is_empty());
        assert!(selected_skills("[use deploy", none).is_empty());
        assert_eq!(
            selected_skills("[Use deploy] [USE db] go", none),
            ["deploy", "db"]
        );
        assert!(selected_skills("[usé deploy] go", none).is_empty());
        assert_eq!(
            selected_skills("[use deploy] x", &["db".into(), "deploy".into()]),
            ["db", "deploy"]
        );
    }
}
