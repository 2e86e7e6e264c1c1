//! Concurrent runs with different selected skills never see each other's hooks.

use std::collections::BTreeSet;

use serde_json::json;
use tollgate_runtime::{CancellationToken, EndStatus, Services};

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_concurrent_runs_keep_their_skills_apart() {
    let (_tmp, dir) = agent_dir();
    let skills = ["alpha", "beta", "gamma", "delta"];
    let mut files = Vec::new();
    for skill in skills {
        files.push((
            format!("skills/{skill}/SKILL.md"),
            format!(
                "---\nname: {skill}\nhooks:\n  PreToolUse:\n    - name: guard-{skill}\n      script: \"echo 'denied by {skill}' >&2; exit 2\"\n---\n"
            ),
        ));
    }
    files.push((
        "agent.yaml".into(),
        format!(
            "name: worker\nmodel: scripted:script.jsonl\ntools: [bash_code_execute_tool]\nskills: [{}]\n",
            skills.iter().map(|s| format!("skills/{s}/SKILL.md")).collect::<Vec<_>>().join(", ")
        ),
    ));
    let script = [
        call(
            "c1",
            "bash_code_execute_tool",
            json!({"command": "echo ran"}),
        ),
        answer("done"),
    ]
    .join("\n");
    files.push(("script.jsonl".into(), script));
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    write(&dir, &refs);

    let services = Services::default();
    let mut runs = Vec::new();
    for i in 0..100usize {
        let services = services.clone();
        let path = dir.join("agent.yaml");
        // Run i selects skill i % 5 (4 = none): half by `[use …]`, half explicitly.
        let skill = skills.get(i % 5).map(|s| (*s).to_owned());
        runs.push(tokio::spawn(async move {
            let (prompt, explicit) = match (&skill, i % 2) {
                (Some(s), 0) => (format!("[use {s}] go"), vec![]),
                (Some(s), _) => ("go".to_owned(), vec![s.clone()]),
                (None, _) => ("go".to_owned(), vec![]),
            };
            let ws = tempfile::tempdir().unwrap();
            let collect = std::sync::Arc::new(tollgate_runtime::trace::Collect::default());
            let request = tollgate_runtime::RunRequest {
                agent: tollgate_runtime::AgentDef::load(&path).unwrap(),
                prompt,
                skills: explicit,
                model: None,
                workspace: Some(ws.path().to_owned()),
                run_id: None,
            };
            let report = tollgate_runtime::run(
                request,
                &services,
                vec![collect.clone()],
                CancellationToken::new(),
            )
            .await;
            let lines: Vec<_> = collect.lines().iter().map(|l| l.to_json()).collect();
            (skill, report, lines)
        }));
    }
    for run in runs {
        let (skill, report, lines) = run.await.unwrap();
        assert_eq!(report.status, EndStatus::Completed);
        let hooks: BTreeSet<String> = of(&lines, "hook_run")
            .iter()
            .map(|h| h["hook"].as_str().unwrap().to_owned())
            .collect();
        let observation = of(&lines, "observation")[0].clone();
        match skill {
            Some(s) => {
                assert_eq!(
                    hooks,
                    BTreeSet::from([format!("guard-{s}")]),
                    "run with {s}"
                );
                assert_eq!(
                    observation["content"],
                    format!("Tool call denied by hook `guard-{s}`: denied by {s}")
                );
                assert_eq!(of(&lines, "session_start")[0]["skills"], json!([s]));
            }
            None => {
                assert!(hooks.is_empty(), "a run without skills ran {hooks:?}");
                assert_eq!(observation["status"], "ok");
            }
        }
    }
}
