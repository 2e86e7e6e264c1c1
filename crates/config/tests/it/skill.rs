use std::path::Path;
use std::sync::Arc;

use tollgate_config::{Assembler, Dialect, Policy, Skill, SkillSet, SpecKind, selected_skills};
use tollgate_handlers::ClassTable;
use tollgate_protocol::{Event, FailureMode, HookSource};

use crate::{lines, skill};

fn only_warning_entry(front: &str) -> (usize, String) {
    let s = skill(front);
    (s.hooks.len(), lines(&s.warnings))
}

#[test]
fn native_entries_load_with_defaults() {
    let s = skill(
        "hooks:\n  BeforeToolUse:\n    - script: ./guard.sh\n      tools: [bash_*, sql_*]\n      failure_mode: fail_closed\n      timeout: 5\n      priority: -3\n  SessionEnd:\n    - url: https://hooks.example.com/end\n      fire_and_forget: true\n",
    );
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    let pre = s
        .hooks
        .iter()
        .find(|h| h.event == Event::PreToolUse)
        .unwrap();
    assert_eq!(pre.name, "skill:deploy/BeforeToolUse[0]");
    assert_eq!(pre.source, HookSource::Skill);
    assert_eq!(
        pre.kind,
        SpecKind::Command {
            line: "./guard.sh".into()
        }
    );
    assert_eq!(pre.failure_mode, Some(FailureMode::FailClosed));
    assert_eq!((pre.timeout.duration().as_secs(), pre.priority), (5, -3));
    let end = s
        .hooks
        .iter()
        .find(|h| h.event == Event::SessionEnd)
        .unwrap();
    assert!(end.fire_and_forget && end.tools.is_none());
    assert_eq!(end.timeout.duration().as_secs(), 10);
}

#[test]
fn bad_tools_skip_the_hook_never_match_all() {
    for tools in ["42", "[]", "{a: 1}", "~", "[bash, 1]", "'tool_[a'"] {
        let (n, warnings) = only_warning_entry(&format!(
            "hooks:\n  PreToolUse:\n    - script: ./a.sh\n      tools: {tools}\n    - script: ./b.sh\n      tools: ok\n"
        ));
        assert_eq!(n, 1, "tools: {tools}");
        assert!(
            warnings.starts_with("hooks.PreToolUse[0].tools: "),
            "{warnings}"
        );
    }
}

#[test]
fn a_mistyped_tools_key_skips_the_hook() {
    let (n, w) =
        only_warning_entry("hooks:\n  PreToolUse:\n    - script: ./a.sh\n      tool: bash\n");
    assert_eq!(n, 0);
    assert!(
        w.contains("hooks.PreToolUse[0].tool: unknown key `tool`"),
        "{w}"
    );
}

#[test]
fn an_event_that_is_not_a_list_is_skipped_others_load() {
    let s = skill("hooks:\n  BeforeToolUse: {script: x}\n  SessionEnd:\n    - script: ./end.sh\n");
    assert_eq!(s.hooks.len(), 1);
    assert_eq!(s.hooks[0].event, Event::SessionEnd);
    assert!(lines(&s.warnings).starts_with("hooks.BeforeToolUse: must be a list"));
}

#[test]
fn unknown_events_are_skipped_with_a_warning() {
    let s = skill("hooks:\n  OnToolUse:\n    - script: x\n  PreToolUse:\n    - script: y\n");
    assert_eq!(s.hooks.len(), 1);
    assert!(lines(&s.warnings).contains("hooks.OnToolUse: unknown event `OnToolUse`"));
}

#[test]
fn bad_timeouts_skip_the_hook() {
    for timeout in ["0", "601", "'10s'", "10s", "2.5"] {
        let (n, w) = only_warning_entry(&format!(
            "hooks:\n  PreToolUse:\n    - script: x\n      timeout: {timeout}\n"
        ));
        assert_eq!(n, 0, "timeout: {timeout}");
        assert!(w.starts_with("hooks.PreToolUse[0].timeout: "), "{w}");
    }
}

#[test]
fn a_failure_mode_typo_is_loud() {
    let (n, w) = only_warning_entry(
        "hooks:\n  PreToolUse:\n    - script: x\n      failure_mode: fail-closed\n",
    );
    assert_eq!(n, 0);
    assert!(w.contains("unknown failure mode `fail-closed`"), "{w}");
}

#[test]
fn two_kinds_are_ambiguous() {
    let (n, w) = only_warning_entry(
        "hooks:\n  PreToolUse:\n    - script: x\n      url: https://a.example\n",
    );
    assert_eq!(n, 0);
    assert!(w.contains("ambiguous"), "{w}");
}

#[test]
fn warnings_snapshot() {
    let s = skill(
        "hooks:\n  OnToolUse: [{script: a}]\n  BeforeToolUse: {script: x}\n  PreToolUse:\n    - {script: a, tools: 42}\n    - {script: a, tools: []}\n    - {script: a, tools: {a: 1}}\n    - {script: a, timeout: 0}\n    - {script: a, timeout: 601}\n    - {script: a, timeout: \"10s\"}\n    - {script: a, failure_mode: fail-closed}\n    - {script: a, url: 'https://x.example'}\n    - {url: 'https://x.example', secret: hunter2}\n    - {llm: judge, secret: '${X}'}\n    - {llm: judge, model: gpt}\n    - {script: a, priority: high}\n    - {tools: bash}\n    - {script: ''}\n",
    );
    assert!(s.hooks.is_empty(), "{:?}", s.hooks);
    insta::assert_snapshot!(lines(&s.warnings));
}

#[test]
fn claude_code_shape_is_accepted() {
    let s = skill(
        "hooks:\n  PreToolUse:\n    - matcher: \"Bash|Write\"\n      hooks:\n        - type: command\n          command: ./check.sh\n          timeout: 30\n    - matcher: \"*\"\n      hooks:\n        - {type: command, command: ./all.sh}\n    - matcher: \"mcp__.*\"\n      hooks:\n        - {type: command, command: ./mcp.sh}\n",
    );
    assert_eq!(s.hooks.len(), 3, "{:?}", s.warnings);
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    // Claude Code's matchers are kept for the hook to match Claude Code's tool names; `tools`
    // (tollgate's names) stays empty.
    let matchers: Vec<Option<&str>> = s
        .hooks
        .iter()
        .map(|h| match &h.dialect {
            Dialect::ClaudeCode(c) => c.matcher.as_deref(),
            _ => panic!("not in Claude Code's dialect"),
        })
        .collect();
    assert_eq!(matchers, [Some("Bash|Write"), Some("*"), Some("mcp__.*")]);
    assert!(s.hooks.iter().all(|h| h.tools.is_none()));
    assert_eq!(s.hooks[0].timeout.duration().as_secs(), 30);
    // Claude Code's default deadline for commands.
    assert_eq!(s.hooks[1].timeout.duration().as_secs(), 600);
    assert_eq!(s.hooks[0].name, "skill:deploy/PreToolUse[0].hooks[0]");
    let Dialect::ClaudeCode(first) = &s.hooks[0].dialect else {
        unreachable!()
    };
    assert_eq!(first.event_name, "PreToolUse");
    assert_eq!(first.skill_dir.as_deref(), Some(s.hooks[0].dir.as_path()));
}

#[test]
fn claude_code_matchers_tollgate_cannot_read_skip_their_group() {
    let s = skill(
        "hooks:\n  PreToolUse:\n    - matcher: \"(?=Bash)\"\n      hooks:\n        - {type: command, command: ./x.sh}\n",
    );
    assert!(s.hooks.is_empty());
    assert!(
        lines(&s.warnings)
            .starts_with("hooks.PreToolUse[0].matcher: `(?=Bash)` is not a regular expression"),
        "{}",
        lines(&s.warnings)
    );
}

#[test]
fn claude_code_keys_load_and_unknown_keys_are_ignored_as_claude_code_ignores_them() {
    let s = skill(concat!(
        "hooks:\n",
        "  PreToolUse:\n",
        "    - matcher: Bash\n",
        "      description: guards\n",
        "      hooks:\n",
        "        - {type: command, command: ./a.sh, statusMessage: Checking, once: true, if: 'Bash(git *)', timeout: 900}\n",
        "        - {type: command, command: ./b.sh, async: true, comment: logs}\n",
        "        - {type: command, command: ./c.sh, blocking: true}\n",
        "        - {type: http, url: 'https://hooks.example.com/x', headers: {Authorization: 'Bearer $TOKEN'}, allowedEnvVars: [TOKEN]}\n",
        "        - {type: prompt, prompt: 'Is this safe? $ARGUMENTS'}\n",
        "        - {type: agent, prompt: 'Verify the tests pass'}\n",
        "  SessionStart:\n",
        "    - hooks:\n",
        "        - {type: command, command: ./d.sh, if: 'Bash(ls)'}\n",
    ));
    let names: Vec<&str> = s.hooks.iter().map(|h| h.entry.as_str()).collect();
    assert_eq!(
        names,
        [
            "hooks.PreToolUse[0].hooks[0]",
            "hooks.PreToolUse[0].hooks[1]",
            "hooks.PreToolUse[0].hooks[2]",
            "hooks.PreToolUse[0].hooks[3]",
            "hooks.PreToolUse[0].hooks[4]"
        ]
    );
    let claude = |i: usize| match &s.hooks[i].dialect {
        Dialect::ClaudeCode(c) => c.clone(),
        _ => panic!("native"),
    };
    assert_eq!(
        (
            claude(0).status_message.as_deref(),
            claude(0).once,
            claude(0).rule.as_deref()
        ),
        (Some("Checking"), true, Some("Bash(git *)"))
    );
    assert_eq!(s.hooks[0].timeout.duration().as_secs(), 600);
    assert!(s.hooks[1].fire_and_forget && claude(1).record_only);
    assert_eq!(
        claude(3).headers,
        [("Authorization".to_owned(), "Bearer $TOKEN".to_owned())]
    );
    assert_eq!(s.hooks[3].timeout.duration().as_secs(), 30);
    assert!(matches!(s.hooks[4].kind, SpecKind::Llm { .. }));
    insta::assert_snapshot!(lines(&s.warnings), @r"
    hooks.PreToolUse[0].hooks[5].type: `type: agent` hooks verify with tools (reading files, running commands); tollgate's llm hooks judge the payload alone, so the hook is not translated; the hook is skipped
    hooks.PreToolUse[0].description: `description` is not read by tollgate; ignored (the hook loads)
    hooks.PreToolUse[0].hooks[0].timeout: 900 s is over tollgate's longest deadline; the hook gets 600 s
    hooks.PreToolUse[0].hooks[1].comment: `comment` is not read by tollgate; ignored (the hook loads)
    hooks.PreToolUse[0].hooks[2].blocking: unknown key `blocking`; ignored, as Claude Code ignores it
    hooks.SessionStart[0].hooks[0].if: `if` tests a tool call, and `SessionStart` has none; the hook is skipped
    ");
}

#[test]
fn name_falls_back_to_the_directory() {
    let s = Skill::parse(
        Path::new("skills/release/SKILL.md"),
        "---\ndescription: x\n---\n",
    )
    .unwrap();
    assert_eq!(s.name, "release");
    let s = Skill::parse(Path::new("skills/release/SKILL.md"), "# no frontmatter\n").unwrap();
    assert!(s.hooks.is_empty());
}

fn deploy_set() -> SkillSet {
    SkillSet::new([skill("hooks:\n  PreToolUse:\n    - script: ./guard.sh\n")])
}

#[test]
fn a_model_loaded_skill_registers_no_hooks() {
    // The model loading `deploy` by itself is not a selection: the user's message and the
    // explicit list select nothing.
    let selected = selected_skills("deploy the app", &[]);
    assert!(deploy_set().hooks_for(&selected).is_empty());
    assert_eq!(
        deploy_set()
            .hooks_for(&selected_skills("[use deploy] go", &[]))
            .len(),
        1
    );
}

#[test]
fn an_unset_secret_skips_the_hook_naming_the_variable() {
    let s = skill(
        "hooks:\n  PreToolUse:\n    - url: https://hooks.example.com/pre\n      secret: ${TOLLGATE_TEST_UNSET_SECRET_5}\n    - script: ./ok.sh\n",
    );
    assert!(s.warnings.is_empty());
    let classes = ClassTable::builtin();
    let mut assembler = Assembler::new(&classes, Policy::default());
    assembler.add_specs(&s.hooks);
    let out = assembler.finish();
    assert_eq!(out.hooks.len(), 1);
    let w = lines(&out.warnings);
    assert!(w.starts_with("hooks.PreToolUse[0]: "), "{w}");
    assert!(w.contains("TOLLGATE_TEST_UNSET_SECRET_5"), "{w}");
}

#[test]
fn concurrent_runs_see_only_their_own_selection() {
    let set = Arc::new(deploy_set());
    let run = |message: &'static str| {
        let set = Arc::clone(&set);
        std::thread::spawn(move || {
            let classes = ClassTable::builtin();
            let mut assembler = Assembler::new(&classes, Policy::default());
            assembler.add_specs(&set.hooks_for(&selected_skills(message, &[])));
            let registry = assembler.finish().builder.build().unwrap();
            registry
                .hook_names(&Event::PreToolUse)
                .iter()
                .map(|s| s.to_string())
                .collect::<Vec<_>>()
        })
    };
    let (selected, plain) = (run("[use deploy] ship"), run("ship"));
    assert_eq!(selected.join().unwrap(), ["skill:deploy/PreToolUse[0]"]);
    assert!(plain.join().unwrap().is_empty());
}

#[test]
fn refused_urls_skip_skill_hooks_even_when_the_admin_allows_the_network() {
    let s = skill("hooks:\n  PreToolUse:\n    - url: http://127.0.0.1:9/pre\n");
    let classes = ClassTable::builtin();
    let mut assembler = Assembler::new(&classes, Policy::default());
    assembler.add_specs(&s.hooks);
    assert!(assembler.finish().hooks.is_empty());
    let policy = Policy {
        allow_cidrs: vec!["127.0.0.0/8".parse().unwrap()],
        ..Policy::default()
    };
    let mut assembler = Assembler::new(&classes, policy);
    assembler.add_specs(&s.hooks);
    // The admin allow-list is for trusted hooks: a skill never reaches loopback through it.
    assert!(assembler.finish().hooks.is_empty());
}

#[test]
fn regression_skills_sharing_a_name_are_all_selected() {
    let a = Skill::parse(
        std::path::Path::new("a/SKILL.md"),
        "---\nname: dup\nhooks:\n  PreToolUse:\n    - script: ./a.sh\n---\n",
    )
    .unwrap();
    let b = Skill::parse(
        std::path::Path::new("b/SKILL.md"),
        "---\nname: dup\nhooks:\n  PreToolUse:\n    - script: ./b.sh\n      failure_mode: fail_closed\n---\n",
    )
    .unwrap();
    let set = SkillSet::new([a, b]);
    let selected = vec!["dup".to_owned(), "dup".to_owned()];
    let lines: Vec<String> = set
        .hooks_for(&selected)
        .iter()
        .map(|h| match &h.kind {
            SpecKind::Command { line } => line.clone(),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(
        lines,
        ["./a.sh", "./b.sh"],
        "each skill's hooks once, none lost"
    );
    assert_eq!(
        set.duplicates(),
        [("dup", vec!["a/SKILL.md", "b/SKILL.md"])]
    );
}

#[test]
fn regression_a_skill_cannot_declare_class_hooks() {
    let s = skill(
        "hooks:\n  PostToolUse:\n    - class: AuditLogHook\n      params: {path: /tmp/victim.sh}\n    - script: ./ok.sh\n",
    );
    assert_eq!(
        s.hooks.len(),
        1,
        "the class entry is skipped, its sibling loads"
    );
    assert!(crate::lines(&s.warnings).contains("not allowed in SKILL.md"));
}

#[test]
fn claude_code_on_failure_block_is_fail_closed_a_typo_never_loosens_it_and_the_exec_form_loads() {
    let s = skill(concat!(
        "hooks:\n",
        "  PreToolUse:\n",
        "    - hooks:\n",
        "        - {type: command, command: ./a.sh, onFailure: block}\n",
        "        - {type: command, command: ./b.sh, onFailure: continue, shell: bash}\n",
        "        - {type: command, command: ./c.sh, onFailure: blok}\n",
        "        - {type: command, command: ./d.sh, shell: powershell}\n",
        "        - {type: command, command: node, args: [x.js]}\n",
    ));
    let modes: Vec<_> = s.hooks.iter().map(|h| h.failure_mode).collect();
    assert_eq!(
        modes,
        [
            Some(FailureMode::FailClosed),
            Some(FailureMode::FailOpen),
            Some(FailureMode::FailClosed),
            None
        ]
    );
    // The exec form: one literal word per element.
    assert!(matches!(&s.hooks[3].kind, SpecKind::Command { line } if line == "node x.js"));
    insta::assert_snapshot!(lines(&s.warnings), @r#"
    hooks.PreToolUse[0].hooks[3].shell: `shell: "powershell"`: tollgate runs hooks with bash only; the hook is skipped
    hooks.PreToolUse[0].hooks[2].onFailure: expected `continue` or `block`; read as `block` (fail_closed)
    "#);
}
