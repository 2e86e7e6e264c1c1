//! The Claude Code compatibility suite: hook scripts, settings, a plugin and skills in the
//! styles public Claude Code projects use (`tests/compat/`), run by the real Claude Code on the
//! calls of `tests/compat/cases.json`, then given to tollgate as Claude Code gave them to its
//! hooks. Every call and every event must be decided the same way: allowed, denied, asked,
//! rewritten to the same command, with the same reason and the same context for the model.

#[path = "compat/compare.rs"]
mod compare;
#[path = "compat/table.rs"]
mod table;

use std::path::PathBuf;
use std::process::Command;

use serde_json::{Value, json};
use tollgate_standins::anthropic;

use crate::claude_code::claude_command;
use crate::support::{Scene, context, run};
use compare::{Evidence, Seen, contexts, decided, dispatch, dispatch_all, side_effects};
use table::{Decision, Places, Table, Turn};

/// What one run of the suite found: every disagreement, so one failure lists them all.
#[derive(Default)]
struct Findings(Vec<String>);

impl Findings {
    fn check(
        &mut self,
        what: &str,
        claude_code: impl std::fmt::Debug,
        tollgate: impl std::fmt::Debug,
        same: bool,
    ) {
        if !same {
            self.0.push(format!(
                "{what}:\n    Claude Code: {claude_code:?}\n    tollgate:    {tollgate:?}"
            ));
        }
    }
}

/// Runs `name` of the table through Claude Code, then every payload through tollgate; returns
/// the scene (alive while it is held) and what Claude Code left, for more checks.
fn suite(name: &str) -> (Scene, Places, Evidence) {
    let run_spec = Table::run(name);
    let scene = Scene::new();
    let places = Places::new(&scene);
    let api = anthropic::start(run_spec.script(&places)).unwrap();
    let mut command = claude_command(&scene, &api);
    command
        .args(["-p", &run_spec.prompt, "--allowedTools"])
        .args(["Bash", "Read", "Write", "Edit", "Skill"])
        .arg("--plugin-dir")
        .arg(&places.plugin);
    let output = run(&mut command);
    let evidence = Evidence::new(&places, api.requests());
    let context = format!(
        "{}\nhook payloads:\n{}",
        context(&output, &evidence.requests),
        evidence
            .payloads
            .iter()
            .map(|p| format!(
                "{} {} {} {}",
                p["hook_event_name"], p["tool_use_id"], p["tool_name"], p["tool_input"]
            ))
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(output.status.success(), "{context}");

    let mut findings = Findings::default();
    let skills = calls(&run_spec, &places, &evidence, &mut findings);
    prompt(&run_spec, &places, &evidence, &output, &mut findings);
    events(&places, &evidence, &skills, &mut findings);
    assert!(
        findings.0.is_empty(),
        "{} disagreement(s) in run `{name}`:\n{}\n\n{context}",
        findings.0.len(),
        findings.0.join("\n")
    );
    (scene, places, evidence)
}

/// Every call of the run: Claude Code's decision is the table's, and tollgate's is Claude
/// Code's (or the table's `tollgate`, where it differs on purpose). Returns the skills in use
/// at the end.
fn calls(
    run_spec: &table::Run,
    places: &Places,
    evidence: &Evidence,
    findings: &mut Findings,
) -> Vec<PathBuf> {
    // The payload of each case, with the skills in use when Claude Code asked about it.
    let mut skills: Vec<PathBuf> = Vec::new();
    let mut jobs: Vec<(usize, &table::Call, &Value, Vec<PathBuf>)> = Vec::new();
    for (turn, calls) in run_spec.turns.iter().enumerate() {
        let Turn::Calls(calls) = calls else { continue };
        for call in calls {
            if let Some(skill) = &call.activates {
                skills.push(places.skill(skill));
            }
            let Some(case) = &call.case else { continue };
            match evidence.pre_tool_use(call, places) {
                Some(payload) => jobs.push((turn, call, payload, skills.clone())),
                None => findings.0.push(format!(
                    "{case}: Claude Code never asked its hooks about it"
                )),
            }
        }
    }
    let asks: Vec<(&Value, &[PathBuf])> = jobs
        .iter()
        .map(|(_, _, payload, skills)| (*payload, skills.as_slice()))
        .collect();
    let reports = dispatch_all(places, &asks);
    for ((turn, call, payload, _), report) in jobs.iter().zip(&reports) {
        compare_call(
            *turn,
            call,
            evidence.seen(payload),
            report,
            evidence,
            findings,
        );
    }
    skills
}

/// One case: Claude Code did what the table says, and tollgate decided the same.
fn compare_call(
    turn: usize,
    call: &table::Call,
    claude_code: Seen,
    report: &Value,
    evidence: &Evidence,
    findings: &mut Findings,
) {
    let case = call.case.as_deref().unwrap_or_default();
    let expected = call.expect.unwrap_or(Decision::Allow);
    findings.check(
        &format!("{case}: Claude Code is not doing what the table says ({expected:?})"),
        &claude_code,
        "(not compared)",
        claude_code.decision() == expected,
    );
    let tollgate = decided(report);
    let why = (&tollgate, &report["stderr"]);
    match call.tollgate {
        Some(differs) => findings.check(
            &format!("{case}: tollgate should decide {differs:?} (a documented difference)"),
            &claude_code,
            why,
            tollgate.decision() == differs,
        ),
        None if call.own_reason => findings.check(
            &format!("{case} (the decision)"),
            &claude_code,
            why,
            tollgate.decision() == claude_code.decision(),
        ),
        None => findings.check(case, &claude_code, why, tollgate == claude_code),
    }
    if call.ends_session {
        let asked = evidence.model_requests();
        findings.check(
            &format!("{case}: Claude Code should end the session after turn {turn}"),
            asked,
            turn + 1,
            asked == turn + 1,
        );
        findings.check(
            &format!("{case}: tollgate should end the session"),
            "ended",
            &report["side_effects"],
            side_effects(report, "end_session").len() == 1,
        );
    }
}

/// A prompt that `UserPromptSubmit` hooks block never reaches the model, in either.
fn prompt(
    run_spec: &table::Run,
    places: &Places,
    evidence: &Evidence,
    output: &std::process::Output,
    findings: &mut Findings,
) {
    let Some(expected) = run_spec.prompt_expect else {
        return;
    };
    let Some(payload) = evidence.of("UserPromptSubmit").first().copied() else {
        findings.0.push("UserPromptSubmit: no payload".into());
        return;
    };
    let report = dispatch(places, payload, &[]);
    let tollgate = decided(&report);
    let shown = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let asked = evidence.model_requests();
    let claude_code = match asked {
        0 => Seen::Deny(shown.trim().to_owned()),
        _ => Seen::Allow,
    };
    findings.check(
        "UserPromptSubmit: Claude Code blocks the prompt",
        &claude_code,
        expected,
        claude_code.decision() == expected,
    );
    let same = match (&claude_code, &tollgate) {
        (Seen::Deny(shown), Seen::Deny(reason)) => shown.contains(reason.as_str()),
        (a, b) => a == b,
    };
    findings.check(
        "UserPromptSubmit",
        &claude_code,
        (&tollgate, &report["stderr"]),
        same,
    );
}

/// `SessionStart` and `UserPromptSubmit` context, `PostToolUse` feedback, and `Stop` blocks:
/// what the model was told, in both.
fn events(places: &Places, evidence: &Evidence, skills: &[PathBuf], findings: &mut Findings) {
    let mut compare =
        |event: &str, claude_code: Vec<String>, pick: &dyn Fn(&Value) -> Vec<String>| {
            let asks: Vec<(&Value, &[PathBuf])> = evidence
                .of(event)
                .into_iter()
                .map(|p| (p, skills))
                .collect();
            let tollgate: Vec<String> = dispatch_all(places, &asks).iter().flat_map(pick).collect();
            let (mut a, mut b) = (claude_code, tollgate);
            a.sort();
            b.sort();
            findings.check(event, &a, &b, a == b);
        };
    // The context reaches the model with its first request; a blocked prompt makes none.
    if evidence.model_requests() > 0 {
        let mut starts = evidence.after("SessionStart:startup hook success: ");
        starts.extend(evidence.after("SessionStart hook additional context: "));
        compare("SessionStart", starts, &|r| contexts(r));
        let mut prompts = evidence.after("UserPromptSubmit hook success: ");
        prompts.extend(evidence.after("UserPromptSubmit hook additional context: "));
        compare("UserPromptSubmit", prompts, &|r| contexts(r));
    }
    let mut tools: Vec<String> = evidence
        .of("PostToolUse")
        .iter()
        .filter_map(|p| p["tool_name"].as_str().map(str::to_owned))
        .collect();
    tools.sort();
    tools.dedup();
    let feedback = tools
        .iter()
        .flat_map(|tool| evidence.blocking_errors(&format!("PostToolUse:{tool}")))
        .collect();
    compare("PostToolUse", feedback, &|r| contexts(r));
    let keep_working = |r: &Value| {
        side_effects(r, "keep_working")
            .into_iter()
            .filter_map(|detail| detail["reason"].as_str().map(|s| s.trim().to_owned()))
            .collect()
    };
    compare("Stop", evidence.blocking_errors("Stop"), &keep_working);
}

/// Every hook entry of the fixtures, all of which Claude Code runs, loads in tollgate as a
/// hook in Claude Code's dialect, and the analyzer lets its line run: nothing is skipped.
#[test]
fn compat_every_hook_entry_claude_code_runs_loads_in_tollgate() {
    let scene = Scene::new();
    let places = Places::new(&scene);
    let skills = std::fs::read_dir(places.project.join(".claude/skills"))
        .unwrap()
        .map(|entry| entry.unwrap().path().join("SKILL.md"));
    let output = Command::new(env!("CARGO_BIN_EXE_tollgate"))
        .args(["check", "--json", ".claude/settings.json"])
        .arg(places.plugin.join("hooks/hooks.json"))
        .args(skills)
        .current_dir(&places.project)
        .env("HOME", &places.home)
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let files = report["files"].as_array().unwrap();
    assert_eq!(files.len(), 5, "{report:#}");
    let mut hooks = 0;
    for file in files {
        assert_eq!(file["errors"], json!([]), "{file:#}");
        for warning in file["warnings"].as_array().unwrap() {
            let message = warning["message"].as_str().unwrap();
            assert!(!message.contains("skipped"), "{file:#}");
            assert!(!message.contains("not found"), "{file:#}");
        }
        for hook in file["hooks"].as_array().unwrap() {
            assert_eq!(hook["dialect"], "claude_code", "{hook:#}");
            assert_eq!(hook["verdict"], "allow", "{hook:#}");
            hooks += 1;
        }
    }
    // 19 in settings.json (PreCompact's, which never fires in tollgate, included), 3 in the
    // plugin, one per skill.
    assert_eq!(hooks, 25, "{report:#}");
}

#[test]
fn compat_hook_scripts_decide_in_tollgate_as_in_claude_code() {
    suite("main");
}

#[test]
fn compat_skill_hooks_decide_once_the_skill_is_in_use_as_in_claude_code() {
    suite("skills");
}

/// The `Stop` hook that blocks once, in a real `tollgate run` of the project's settings: the
/// session goes on once with the reason Claude Code gave its model, then ends, as Claude
/// Code's did.
#[test]
fn compat_a_stop_hook_keeps_a_tollgate_run_working_once_as_in_claude_code() {
    let (scene, places, evidence) = suite("stop-once");
    let told = evidence.blocking_errors("Stop");
    assert_eq!(told.len(), 1, "{}", evidence.conversation);
    assert_eq!(evidence.model_requests(), 2);

    // A run refuses a workspace holding its own configuration: the workspace is a copy of the
    // project's hook scripts ($CLAUDE_PROJECT_DIR is the workspace), the settings stay put.
    let workspace = scene.home.join("workspace");
    copy_hooks(
        &places.project.join(".claude/hooks"),
        &workspace.join(".claude/hooks"),
    );
    let script = scene.home.join("script.jsonl");
    let turns: Vec<String> = ["Everything is tidy.", "The tests pass; done."]
        .iter()
        .map(|text| json!({"role": "assistant", "content": text}).to_string())
        .collect();
    std::fs::write(&script, turns.join("\n")).unwrap();
    let trace = scene.home.join("trace.jsonl");
    let output = Command::new(env!("CARGO_BIN_EXE_tollgate"))
        .arg("run")
        .arg("--hooks")
        .arg(places.project.join(".claude/settings.json"))
        .arg("--model")
        .arg(format!("scripted:{}", script.display()))
        .arg("--workspace")
        .arg(&workspace)
        .arg("--trace")
        .arg(&trace)
        .args(["--no-approvals", "Wrap up."])
        .env("HOME", &scene.home)
        .output()
        .unwrap();
    let shown = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{shown}");
    let steps: Vec<Value> = std::fs::read_to_string(&trace)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let kept: Vec<&str> = steps
        .iter()
        .filter(|step| step["type"] == "keep_working")
        .filter_map(|step| step["reason"].as_str())
        .collect();
    assert_eq!(kept, [told[0].as_str()], "{shown}");
    let turns = steps
        .iter()
        .filter(|step| step["type"] == "model_turn")
        .count();
    assert_eq!(turns, evidence.model_requests(), "{shown}");
    assert!(shown.contains("The tests pass; done."), "{shown}");
}

/// Copies the hook scripts (mode bits kept).
fn copy_hooks(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

#[test]
fn compat_continue_false_ends_the_session_in_both() {
    suite("halt");
}

#[test]
fn compat_a_blocked_prompt_never_reaches_the_model_in_both() {
    suite("prompt-block");
}

/// What became of a call Claude Code would have asked its user about.
#[derive(Debug, PartialEq)]
enum Dialog {
    /// A `PermissionRequest` hook granted it.
    Granted,
    /// A hook refused it; what the model reads.
    Refused(String),
    /// No hook answered: the user is asked (print mode refuses).
    Asked,
}

/// `PermissionRequest` hooks answer the permission dialog of calls outside `--allowedTools`
/// (`WebFetch` here): Claude Code fires them in print mode too. Each payload it wrote is
/// dispatched in tollgate, whose answer must be the same. `Notification` does not fire in print
/// mode (no dialog is shown), so its counterpart is tested in tollgate's runs
/// (`crates/runtime/tests/it/approval.rs`).
#[test]
fn compat_permission_hooks_decide_a_permission_dialog_in_both() {
    let (_scene, places, evidence) = suite("permission");
    let asked = evidence.of("PermissionRequest");
    assert_eq!(asked.len(), 3, "{}", evidence.conversation);
    for payload in asked {
        let url = &payload["tool_input"]["url"];
        let call = evidence
            .of("PreToolUse")
            .into_iter()
            .find(|p| p["tool_input"]["url"] == *url)
            .unwrap();
        let claude_code = match evidence.seen(call) {
            compare::Seen::Allow => Dialog::Granted,
            compare::Seen::Ask(text) if text.contains("haven't granted") => Dialog::Asked,
            compare::Seen::Ask(text) | compare::Seen::Deny(text) => Dialog::Refused(text),
            other => panic!("{other:?}"),
        };
        let report = dispatch(&places, payload, &[]);
        let tollgate = match report["decision"].as_str() {
            Some("deny") => Dialog::Refused(report["reason"].as_str().unwrap().to_owned()),
            _ if !side_effects(&report, "permission_granted").is_empty() => Dialog::Granted,
            _ => Dialog::Asked,
        };
        assert_eq!(tollgate, claude_code, "{url}: {report:#}");
    }
    assert!(
        !places.project.join("notified.log").exists(),
        "print mode shows no dialog and sends no Notification"
    );
}
