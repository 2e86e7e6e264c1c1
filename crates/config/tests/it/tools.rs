//! `tools` patterns that match none of the runtime's tools.

use tollgate_config::{KnownTools, unmatched_tools};

use crate::{lines, skill};

fn check(front: &str, known: &KnownTools) -> (usize, String) {
    let s = skill(front);
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    (s.hooks.len(), lines(&unmatched_tools(&s.hooks, known)))
}

#[test]
fn claude_code_names_are_told_the_runtime_name_and_the_hook_still_loads() {
    let (hooks, warnings) = check(
        "hooks:\n  PreToolUse:\n    - script: ./guard.sh\n      tools: Bash\n",
        &KnownTools::runtime(),
    );
    assert_eq!(hooks, 1);
    insta::assert_snapshot!(warnings, @"hooks.PreToolUse[0].tools: `Bash` matches none of this runtime's tools (bash_code_execute_tool, sql_query, sql_execute, read_file, write_file, call_agent); Claude Code's `Bash` is `bash_code_execute_tool` here; as written the hook never runs");
}

#[test]
fn permission_rule_syntax_is_told_that_arguments_belong_in_the_hook() {
    let (hooks, warnings) = check(
        "hooks:\n  PreToolUse:\n    - script: ./guard.sh\n      tools: ['Bash(rm *)']\n",
        &KnownTools::runtime(),
    );
    assert_eq!(hooks, 1);
    insta::assert_snapshot!(warnings, @r"
    hooks.PreToolUse[0].tools: `Bash(rm *)` matches none of this runtime's tools (bash_code_execute_tool, sql_query, sql_execute, read_file, write_file, call_agent); Claude Code's `Bash` is `bash_code_execute_tool` here; `tools` matches tool names only, never arguments: match the tool here and test its arguments (`rm *`) in the hook itself (its script reads the call from the payload; an `llm` hook states it as its condition); as written the hook never runs
    ");
}

#[test]
fn each_pattern_is_judged_and_near_misses_are_named() {
    let (_, warnings) = check(
        "hooks:\n  PostToolUse:\n    - script: ./a.sh\n      tools: [bash_*, sql_querry, WebFetch]\n",
        &KnownTools::runtime(),
    );
    insta::assert_snapshot!(warnings, @r"
    hooks.PostToolUse[0].tools: `sql_querry` matches none of this runtime's tools (bash_code_execute_tool, sql_query, sql_execute, read_file, write_file, call_agent) (did you mean `sql_query`?); this pattern never matches
    hooks.PostToolUse[0].tools: `WebFetch` matches none of this runtime's tools (bash_code_execute_tool, sql_query, sql_execute, read_file, write_file, call_agent); `WebFetch` is a Claude Code tool with no counterpart here; this pattern never matches
    ");
}

#[test]
fn a_claude_code_matcher_is_reported_once_per_group() {
    let (hooks, warnings) = check(
        "hooks:\n  PreToolUse:\n    - matcher: Grep|WebFetch\n      hooks:\n        - {type: command, command: ./a.sh}\n        - {type: command, command: ./b.sh}\n",
        &KnownTools::runtime(),
    );
    assert_eq!(hooks, 2);
    insta::assert_snapshot!(warnings, @"hooks.PreToolUse[0].matcher: `Grep|WebFetch` matches none of this runtime's tools as Claude Code names them (Bash, sql_query, sql_execute, Read, Write, Edit, MultiEdit, Agent, Task); Claude Code's `Grep`, `WebFetch` have no counterpart here; as written the hook never runs");
}

/// Claude Code's matchers are matched against Claude Code's names of the runtime's tools:
/// `Bash|Write` runs; `Grep` has no counterpart here, so a matcher naming only it never does.
#[test]
fn claude_code_matchers_are_checked_against_claude_codes_names() {
    let group = |matcher: &str| {
        format!(
            "hooks:\n  PreToolUse:\n    - matcher: '{matcher}'\n      hooks:\n        - {{type: command, command: ./a.sh}}\n"
        )
    };
    for runs in [
        "Bash|Write",
        "Edit",
        "Task",
        "^(?:Read|Agent)$",
        "sql_query",
        "mcp__db__.*",
        "*",
    ] {
        let (_, warnings) = check(&group(runs), &KnownTools::runtime());
        assert_eq!(warnings, "", "{runs}");
    }
    let (_, warnings) = check(&group("Grep|Glob"), &KnownTools::runtime());
    assert!(
        warnings.contains("Claude Code's `Grep`, `Glob` have no counterpart here"),
        "{warnings}"
    );
    let (_, warnings) = check(&group("bash_code_execute_tool"), &KnownTools::runtime());
    assert!(
        warnings.ends_with("as written the hook never runs"),
        "{warnings}"
    );
}

#[test]
fn matching_extra_and_mcp_style_patterns_pass() {
    let front = "hooks:\n  PreToolUse:\n    - script: ./a.sh\n      tools: [sql_*, '*_file', deploy, 'mcp__github__*', connector__crm_write]\n  SubagentStart:\n    - script: ./b.sh\n      tools: analyst\n  SessionEnd:\n    - script: ./c.sh\n";
    let (_, warnings) = check(front, &KnownTools::runtime().with(["deploy"]));
    assert_eq!(warnings, "");
    let (_, warnings) = check(front, &KnownTools::runtime());
    assert!(
        warnings.starts_with("hooks.PreToolUse[0].tools: `deploy` matches none"),
        "{warnings}"
    );
    assert!(
        warnings.ends_with("this pattern never matches"),
        "{warnings}"
    );
}
