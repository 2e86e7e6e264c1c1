//! `tollgate run` on the ops example and on small agents, as a user runs it.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use serde_json::Value;

const PROMPT: &str = "[use deploy] Close order 3, clean up old releases and ship v2.4.1";

fn example(file: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/ops")
        .join(file)
        .display()
        .to_string()
}

fn tollgate_run(args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tollgate"))
        .arg("run")
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// Runs the ops example into `dir` (workspace `dir/ws`, trace `dir/trace.jsonl`), its admin
/// file's webhook posting to `webhook` instead of the example's port.
fn run_example(
    dir: &Path,
    prompt: &str,
    extra: &[&str],
    env: &[(&str, &str)],
    webhook: SocketAddr,
) -> (Output, Vec<Value>) {
    let ws = dir.join("ws").display().to_string();
    let trace = dir.join("trace.jsonl").display().to_string();
    let agent = example("agent.yaml");
    let admin = admin_posting_to(dir, webhook);
    let mut args = vec![
        "--agent",
        &agent,
        "--admin",
        &admin,
        "--workspace",
        &ws,
        "--trace",
        &trace,
    ];
    args.extend_from_slice(extra);
    args.push(prompt);
    let output = tollgate_run(&args, env);
    (output, read_trace(&dir.join("trace.jsonl")))
}

/// The example's admin file, written to `dir/admin.yaml` with its webhook posting to `addr`:
/// tests never depend on a fixed port (a receiver the README starts may hold 8787).
fn admin_posting_to(dir: &Path, addr: SocketAddr) -> String {
    let text = std::fs::read_to_string(example("admin.yaml")).unwrap();
    let fixed = "http://127.0.0.1:8787/";
    assert!(text.contains(fixed), "the example's webhook URL moved");
    let path = dir.join("admin.yaml");
    std::fs::write(&path, text.replace(fixed, &format!("http://{addr}/"))).unwrap();
    path.display().to_string()
}

/// An address nothing listens on: the port of a listener bound to port 0, then closed.
fn closed_port() -> SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap()
}

fn read_trace(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn of<'a>(lines: &'a [Value], kind: &str) -> Vec<&'a Value> {
    lines.iter().filter(|l| l["type"] == kind).collect()
}

fn by_call<'a>(lines: &'a [Value], kind: &str, call: &str) -> Option<&'a Value> {
    lines.iter().find(|l| {
        l["type"] == kind
            && l["tool_call_id"] == call
            && (kind != "dispatch" || l["event"] == "pre_tool_use")
    })
}

fn text(output: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// A webhook receiver on a free port of 127.0.0.1 that keeps the payloads whose signature
/// verifies under `secret`: its address and the payloads.
fn receiver(secret: &'static str) -> (SocketAddr, Arc<Mutex<Vec<Value>>>) {
    use axum::body::Bytes;
    use axum::http::{HeaderMap, StatusCode};
    let got: Arc<Mutex<Vec<Value>>> = Arc::default();
    let keep = Arc::clone(&got);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    listener.set_nonblocking(true).unwrap();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let app = axum::Router::new().route(
                "/tollgate/session-end",
                axum::routing::post(move |headers: HeaderMap, body: Bytes| {
                    let keep = Arc::clone(&keep);
                    async move {
                        let signature = headers
                            .get("x-webhook-signature")
                            .and_then(|v| v.to_str().ok())
                            .unwrap_or("");
                        let verified = tollgate_handlers::http::verify_signature(
                            secret.as_bytes(),
                            signature,
                            &body,
                            SystemTime::now(),
                            Duration::from_secs(300),
                        );
                        if verified.is_err() {
                            return StatusCode::UNAUTHORIZED;
                        }
                        keep.lock()
                            .unwrap()
                            .push(serde_json::from_slice(&body).unwrap());
                        StatusCode::NO_CONTENT
                    }
                }),
            );
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            axum::serve(listener, app).await.unwrap();
        });
    });
    (addr, got)
}

#[test]
fn the_ops_example_runs_with_every_kind_of_decision() {
    let dir = tempfile::tempdir().unwrap();
    let (addr, deliveries) = receiver("example-secret");
    let (output, lines) = run_example(
        dir.path(),
        PROMPT,
        &[],
        &[("OPS_WEBHOOK_SECRET", "example-secret")],
        addr,
    );
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    let ws = dir.path().join("ws");

    // allow: the read ran.
    assert_eq!(
        by_call(&lines, "dispatch", "call_1").unwrap()["decision"],
        "allow"
    );
    assert_eq!(
        by_call(&lines, "observation", "call_1").unwrap()["status"],
        "ok"
    );
    // deny: the UPDATE under a read-only organisation, by the agent config's ReadOnlyGuard.
    let update = by_call(&lines, "dispatch", "call_2").unwrap();
    assert_eq!(
        (update["decision"].as_str(), update["decided_by"].as_str()),
        (Some("deny"), Some("ReadOnlyGuard"))
    );
    assert!(by_call(&lines, "tool_started", "call_2").is_none());
    // deny: the recursive rm, by the user hook; its side effect never happened.
    let rm = by_call(&lines, "dispatch", "call_3").unwrap();
    assert_eq!(
        (rm["decision"].as_str(), rm["decided_by"].as_str()),
        (Some("deny"), Some("no-recursive-rm"))
    );
    assert!(ws.is_dir());
    assert!(!ws.join("releases-wiped.marker").exists());
    // rewrite: the deploy skill's hook made the deploy a dry run, and the tool ran that.
    let deploy = by_call(&lines, "dispatch", "call_5").unwrap();
    assert_eq!(
        deploy["modified_args"]["command"],
        "bash deploy.sh v2.4.1 --dry-run"
    );
    let started = by_call(&lines, "tool_started", "call_5").unwrap();
    assert_eq!(
        started["arguments"]["command"],
        "bash deploy.sh v2.4.1 --dry-run"
    );
    let observed = by_call(&lines, "observation", "call_5").unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        observed.contains("DRY RUN: would deploy v2.4.1"),
        "{observed}"
    );
    assert!(!ws.join("deployed.txt").exists());
    assert_eq!(
        of(&lines, "session_start")[0]["skills"],
        serde_json::json!(["deploy"])
    );
    // delegation: the analyst ran with its own hooks, none of the ops agent's.
    let analyst_hooks: Vec<&str> = of(&lines, "hook_run")
        .into_iter()
        .filter(|h| h["agent"] == "analyst")
        .map(|h| h["hook"].as_str().unwrap())
        .collect();
    assert!(
        analyst_hooks.contains(&"analyst-no-select-star"),
        "{analyst_hooks:?}"
    );
    for parent_hook in [
        "no-recursive-rm",
        "ops-sql-audit",
        "ReadOnlyGuard",
        "deploy-dry-run",
    ] {
        assert!(
            !analyst_hooks.contains(&parent_hook),
            "{parent_hook} fired inside the analyst"
        );
    }
    let stop = of(&lines, "subagent_stop");
    assert_eq!(stop.len(), 1);
    assert_eq!(stop[0]["status"], "completed");
    assert_eq!(
        by_call(&lines, "observation", "call_6").unwrap()["status"],
        "ok"
    );
    // http: the admin webhook delivered both sessions' ends, signed.
    let got = deliveries.lock().unwrap().clone();
    let mut agents: Vec<&str> = got
        .iter()
        .map(|p| p["agent_id"].as_str().unwrap())
        .collect();
    agents.sort_unstable();
    assert_eq!(agents, ["analyst", "ops"]);
    assert!(got.iter().all(|p| p["event"] == "session_end"));
    // The terminal shows the decisions with the deciding hook.
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("deny by hook `no-recursive-rm`"),
        "{stdout}"
    );
    assert!(stdout.contains("arguments rewritten by hooks"), "{stdout}");
    assert!(stdout.contains("■ completed"), "{stdout}");

    // Every emission point fired exactly once per occurrence, counted independently from the
    // steps the trace records.
    let mut dispatched: BTreeMap<(String, String), usize> = BTreeMap::new();
    for d in of(&lines, "dispatch") {
        *dispatched
            .entry((
                d["agent"].as_str().unwrap().into(),
                d["event"].as_str().unwrap().into(),
            ))
            .or_default() += 1;
    }
    for agent in ["ops", "analyst"] {
        let mine = |kind: &str| {
            lines
                .iter()
                .filter(|l| l["type"] == kind && l["agent"] == agent)
                .count()
        };
        let observed = |status: &str| {
            lines
                .iter()
                .filter(|l| {
                    l["type"] == "observation" && l["agent"] == agent && l["status"] == status
                })
                .filter(|o| {
                    by_call(&lines, "tool_started", o["tool_call_id"].as_str().unwrap()).is_some()
                })
                .count()
        };
        let count = |event: &str| {
            dispatched
                .get(&(agent.to_owned(), event.to_owned()))
                .copied()
                .unwrap_or(0)
        };
        assert_eq!(count("session_start"), 1, "{agent}");
        assert_eq!(count("user_turn"), 1, "{agent}");
        assert_eq!(count("session_end"), 1, "{agent}");
        assert_eq!(count("pre_tool_use"), mine("tool_call"), "{agent}");
        assert_eq!(count("post_tool_use"), observed("ok"), "{agent}");
        assert_eq!(
            count("post_tool_use_failure"),
            observed("failed"),
            "{agent}"
        );
        assert_eq!(count("subagent_start"), mine("subagent_start"), "{agent}");
        assert_eq!(count("subagent_stop"), mine("subagent_stop"), "{agent}");
    }
    assert_eq!(
        dispatched.get(&("ops".into(), "subagent_start".into())),
        Some(&1)
    );
}

#[test]
fn without_the_skill_its_hook_does_not_exist() {
    let dir = tempfile::tempdir().unwrap();
    let (output, lines) = run_example(
        dir.path(),
        "Close order 3, clean up old releases and ship v2.4.1",
        &[],
        &[],
        closed_port(),
    );
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    assert!(
        of(&lines, "hook_run")
            .iter()
            .all(|h| h["hook"] != "deploy-dry-run")
    );
    assert_eq!(
        by_call(&lines, "tool_started", "call_5").unwrap()["arguments"]["command"],
        "bash deploy.sh v2.4.1"
    );
    assert!(
        dir.path().join("ws/deployed.txt").exists(),
        "the real deploy ran"
    );
    // The admin webhook's secret is unset: a warning names the file and entry, the run goes on.
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("admin.yaml: hooks.SessionEnd[0]"),
        "{stderr}"
    );
}

#[test]
fn bypass_hooks_fires_no_hook_and_the_trace_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let (output, lines) = run_example(dir.path(), PROMPT, &["--bypass-hooks"], &[], closed_port());
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    assert!(
        of(&lines, "hook_run").is_empty(),
        "a hook ran under --bypass-hooks"
    );
    assert!(
        of(&lines, "session_start")
            .iter()
            .all(|s| s["hooks"] == "bypass")
    );
    let dispatches = of(&lines, "dispatch");
    assert!(!dispatches.is_empty());
    assert!(
        dispatches
            .iter()
            .all(|d| d["bypassed"] == true && d["hooks"] == 0)
    );
    // With no hook, the UPDATE and the rm ran.
    assert_eq!(
        by_call(&lines, "observation", "call_2").unwrap()["status"],
        "ok"
    );
    assert!(dir.path().join("ws/releases-wiped.marker").exists());
}

fn small_agent(dir: &Path, extra: &str, script: &str) -> String {
    std::fs::write(dir.join("script.jsonl"), script).unwrap();
    let path = dir.join("agent.yaml");
    std::fs::write(&path, format!("name: small\nmodel: scripted:script.jsonl\ntools: [bash_code_execute_tool, write_file]\n{extra}")).unwrap();
    path.display().to_string()
}

#[test]
fn an_ask_with_no_approvals_is_denied_as_approval_required() {
    let dir = tempfile::tempdir().unwrap();
    let script = r#"{"role":"assistant","content":null,"tool_calls":[{"id":"w1","type":"function","function":{"name":"write_file","arguments":{"path":"x.txt","content":"x"}}}]}
{"role":"assistant","content":"ok"}"#;
    let agent = small_agent(
        dir.path(),
        "model_config_json:\n  hooks:\n    require_confirmation_for_all: true\n",
        script,
    );
    let ws = dir.path().join("ws").display().to_string();
    let trace = dir.path().join("t.jsonl").display().to_string();
    let output = tollgate_run(
        &[
            "--agent",
            &agent,
            "--workspace",
            &ws,
            "--trace",
            &trace,
            "--no-approvals",
            "go",
        ],
        &[],
    );
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    let lines = read_trace(&dir.path().join("t.jsonl"));
    let observation = by_call(&lines, "observation", "w1").unwrap();
    assert_eq!(observation["status"], "denied");
    assert!(
        observation["content"]
            .as_str()
            .unwrap()
            .contains("approval required"),
        "{observation}"
    );
    assert!(!dir.path().join("ws/x.txt").exists());
}

#[test]
fn regression_a_failed_fail_open_hook_showed_only_on_stderr_and_twice() {
    let dir = tempfile::tempdir().unwrap();
    let script = r#"{"role":"assistant","content":null,"tool_calls":[{"id":"w1","type":"function","function":{"name":"write_file","arguments":{"path":"x.txt","content":"x"}}}]}
{"role":"assistant","content":"ok"}"#;
    std::fs::write(
        dir.path().join("hooks.yaml"),
        "hooks:\n  PreToolUse:\n    - name: flaky-lint\n      failure_mode: fail_open\n      script: \"echo lint crashed >&2; exit 1\"\n",
    )
    .unwrap();
    let agent = small_agent(dir.path(), "hooks: [hooks.yaml]\n", script);
    let ws = dir.path().join("ws").display().to_string();
    let output = tollgate_run(&["--agent", &agent, "--workspace", &ws, "go"], &[]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let lines: Vec<&str> = stdout.lines().collect();
    let call = lines
        .iter()
        .position(|l| l.starts_with("→ write_file"))
        .unwrap();
    assert_eq!(
        lines[call + 2],
        "  ⚠ 1 hook failed, skipped (fail_open): `flaky-lint` errored: exit status 1: lint crashed",
        "under the call and its decision:\n{stdout}"
    );
    assert!(lines[call + 1].starts_with("  ✓ allow"), "{stdout}");
    assert_eq!(stdout.matches("flaky-lint").count(), 1, "{stdout}");
    assert!(
        !stderr.contains("flaky-lint"),
        "printed once, not also on stderr: {stderr}"
    );
    assert!(
        dir.path().join("ws/x.txt").exists(),
        "fail_open: the call ran"
    );
}

#[test]
fn bad_agents_and_arguments_are_refused_with_a_message() {
    let dir = tempfile::tempdir().unwrap();
    let agent = small_agent(dir.path(), "tools_typo: []\n", "");
    let output = tollgate_run(&["--agent", &agent, "go"], &[]);
    assert_eq!(output.status.code(), Some(1));
    assert!(text(&output).contains("tools_typo"), "{}", text(&output));
    let output = tollgate_run(&["--agent", &example("agent.yaml"), "  "], &[]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output).contains("prompt is empty"),
        "{}",
        text(&output)
    );
    let output = tollgate_run(
        &["--agent", &example("agent.yaml"), "--model", "gpt-4", "go"],
        &[],
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output).contains("scripted:FILE"), "{}", text(&output));
    let agent = small_agent(dir.path(), "", "{\"role\":\"user\",\"content\":\"x\"}");
    let output = tollgate_run(
        &[
            "--agent",
            &agent,
            "--workspace",
            &dir.path().join("ws").display().to_string(),
            "go",
        ],
        &[],
    );
    assert_eq!(output.status.code(), Some(1));
    assert!(
        text(&output).contains("role `assistant`"),
        "{}",
        text(&output)
    );
}

#[test]
fn ctrl_c_cancels_the_running_tool_and_still_ends_the_session() {
    for signal in ["-INT", "-TERM"] {
        cancel_with(signal);
    }
}

/// Runs a session whose tool sleeps, sends `signal` once the tool runs, checks the ending.
fn cancel_with(signal: &str) {
    let dir = tempfile::tempdir().unwrap();
    let script = r#"{"role":"assistant","content":null,"tool_calls":[{"id":"s1","type":"function","function":{"name":"bash_code_execute_tool","arguments":{"command":"sleep 30"}}}]}
{"role":"assistant","content":"never"}"#;
    let agent = small_agent(dir.path(), "", script);
    let trace = dir.path().join("t.jsonl");
    // Wait until the tool runs, then interrupt as a terminal's Ctrl-C would.
    let child = spawn_until(&agent, dir.path(), "\"tool_started\"");
    let pid = child.id().to_string();
    assert!(
        Command::new("kill")
            .args([signal, &pid])
            .status()
            .unwrap()
            .success()
    );
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(130), "{}", text(&output));
    let lines = read_trace(&trace);
    let events: Vec<&str> = of(&lines, "dispatch")
        .iter()
        .map(|d| d["event"].as_str().unwrap())
        .collect();
    assert!(events.contains(&"post_tool_use_cancelled"), "{events:?}");
    assert!(!events.contains(&"post_tool_use"));
    assert_eq!(events.last(), Some(&"session_end"));
    assert_eq!(of(&lines, "session_end")[0]["status"], "cancelled");
}

#[test]
fn an_unknown_skill_flag_is_refused() {
    let output = tollgate_run(
        &["--agent", &example("agent.yaml"), "--skill", "deploi", "go"],
        &[],
    );
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("`deploi`") && stderr.contains("deploy"),
        "{stderr}"
    );
}

#[test]
fn regression_a_capitalised_use_tag_was_ignored_without_a_word() {
    let dir = tempfile::tempdir().unwrap();
    let (output, lines) = run_example(
        dir.path(),
        "[Use deploy] ship v2.4.1",
        &["--bypass-hooks"],
        &[],
        closed_port(),
    );
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    assert_eq!(
        of(&lines, "session_start")[0]["skills"],
        serde_json::json!(["deploy"])
    );

    let dir = tempfile::tempdir().unwrap();
    let (output, lines) = run_example(
        dir.path(),
        "[USE Deploi] ship v2.4.1",
        &["--bypass-hooks"],
        &[],
        closed_port(),
    );
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    assert_eq!(
        of(&lines, "session_start")[0]["skills"],
        serde_json::json!([])
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.lines().any(|l| l
            == "⚠ no skill named `Deploi` is available to this agent (its skills: deploy); \
                nothing was selected for it"),
        "{stdout}"
    );
}

#[test]
fn escape_sequences_from_the_model_and_tools_never_reach_the_terminal_raw() {
    let dir = tempfile::tempdir().unwrap();
    let script = serde_json::json!([
        {"role": "assistant", "content": "\u{1b}]0;pwned\u{7}", "tool_calls": [
            {"id": "e1", "type": "function", "function": {"name": "no\u{1b}[31m_such_tool", "arguments": "{}"}},
            {"id": "e2", "type": "function", "function": {"name": "bash_code_execute_tool",
                "arguments": "{\"command\": \"printf '\\\\033[2J\\\\033]8;;http://x\\\\a'\"}"}}
        ]},
        {"role": "assistant", "content": "done \u{1b}[31mred\u{1b}[0m\nsecond line \u{202e}desrever"}
    ])
    .to_string();
    let agent = small_agent(dir.path(), "", &script);
    let ws = dir.path().join("ws").display().to_string();
    let output = tollgate_run(&["--agent", &agent, "--workspace", &ws, "go"], &[]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    let shown = text(&output);
    assert!(
        !shown.contains('\u{1b}') && !shown.contains('\u{7}'),
        "{shown:?}"
    );
    assert!(
        !shown.contains('\u{202e}'),
        "bidi controls are escaped: {shown:?}"
    );
    assert!(
        shown.contains("second line"),
        "the answer keeps its lines: {shown}"
    );
}

#[test]
fn a_run_trace_replays_with_the_runs_metadata() {
    let dir = tempfile::tempdir().unwrap();
    let (output, lines) = run_example(dir.path(), PROMPT, &["--bypass-hooks"], &[], closed_port());
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    // The agent config's ReadOnlyGuard alone, as a policy to backtest: it keys on
    // `metadata.org_id`, which the trace recorded per session.
    let agent = dir.path().join("guard.json");
    std::fs::write(
        &agent,
        r#"{"model_config_json": {"hooks": {"class_hooks": [{"class": "ReadOnlyGuard", "params": {"readonly_orgs": ["org-7"]}}]}}}"#,
    )
    .unwrap();
    let replayed = Command::new(env!("CARGO_BIN_EXE_tollgate"))
        .args([
            "replay",
            &dir.path().join("trace.jsonl").display().to_string(),
        ])
        .args(["--agent", &agent.display().to_string(), "--json"])
        .output()
        .unwrap();
    assert_eq!(replayed.status.code(), Some(0), "{}", text(&replayed));
    let report: Value = serde_json::from_slice(&replayed.stdout).unwrap();
    let calls = report["calls"].as_array().unwrap();
    let update = calls
        .iter()
        .find(|c| c["tool_call_id"] == "call_2")
        .unwrap();
    assert_eq!(update["decision"], "deny", "{update}");
    assert_eq!(update["hook"], "ReadOnlyGuard");
    // Every recorded call, the analyst's included, was replayed.
    assert_eq!(calls.len(), of(&lines, "tool_call").len());
    assert_eq!(report["summary"]["total"], calls.len());
    // Without the session_start lines the metadata is unknown: said, and not counted as skipped.
    let stripped: String = std::fs::read_to_string(dir.path().join("trace.jsonl"))
        .unwrap()
        .lines()
        .filter(|l| !l.contains("\"type\":\"session_start\""))
        .map(|l| format!("{l}\n"))
        .collect();
    let bare = dir.path().join("bare.jsonl");
    std::fs::write(&bare, stripped).unwrap();
    let replayed = Command::new(env!("CARGO_BIN_EXE_tollgate"))
        .args(["replay", &bare.display().to_string()])
        .args(["--agent", &agent.display().to_string(), "--json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&replayed.stderr);
    assert!(stderr.contains("no session_start line"), "{stderr}");
    let report: Value = serde_json::from_slice(&replayed.stdout).unwrap();
    assert_eq!(report["summary"]["skipped_lines"], 0);
}

#[test]
fn a_second_signal_quits_at_once_and_leaves_no_hook_running() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("hooks.yaml"),
        "hooks:\n  PreToolUse:\n    - name: slow-judge\n      timeout: 60\n      script: \"sleep 47.25\"\n",
    )
    .unwrap();
    let script = r#"{"role":"assistant","content":null,"tool_calls":[{"id":"s1","type":"function","function":{"name":"bash_code_execute_tool","arguments":{"command":"echo hi"}}}]}
{"role":"assistant","content":"never"}"#;
    let agent = small_agent(dir.path(), "hooks: [hooks.yaml]\n", script);
    let child = spawn_until(&agent, dir.path(), "\"tool_call\"");
    std::thread::sleep(Duration::from_millis(300)); // the hook's process is running
    let pid = child.id().to_string();
    for signal in ["-TERM", "-INT"] {
        assert!(
            Command::new("kill")
                .args([signal, &pid])
                .status()
                .unwrap()
                .success()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(130), "{}", text(&output));
    let left = Command::new("pgrep")
        .args(["-f", "sleep 47.25"])
        .output()
        .unwrap();
    assert!(
        left.stdout.is_empty(),
        "a hook process outlived tollgate: {}",
        String::from_utf8_lossy(&left.stdout)
    );
}

/// Starts `tollgate run` on `agent` (workspace `dir/ws`, trace `dir/t.jsonl`) and returns once
/// the trace contains `marker`.
fn spawn_until(agent: &str, dir: &Path, marker: &str) -> std::process::Child {
    let trace = dir.join("t.jsonl");
    let child = Command::new(env!("CARGO_BIN_EXE_tollgate"))
        .args(["run", "--agent", agent, "--workspace"])
        .arg(dir.join("ws"))
        .args(["--trace", &trace.display().to_string(), "go"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut waited = 0;
    while !std::fs::read_to_string(&trace)
        .unwrap_or_default()
        .contains(marker)
    {
        std::thread::sleep(Duration::from_millis(50));
        waited += 1;
        assert!(waited < 400, "{marker} never appeared in the trace");
    }
    child
}

#[test]
fn a_run_trace_replays_against_an_agent_files_whole_policy() {
    let dir = tempfile::tempdir().unwrap();
    // Record a session with no hooks at all, then ask what the ops policy would have done.
    let (output, _) = run_example(dir.path(), PROMPT, &["--bypass-hooks"], &[], closed_port());
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    let trace = dir.path().join("trace.jsonl").display().to_string();
    let replay = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_tollgate"))
            .args([
                "replay",
                &trace,
                "--agent-file",
                &example("agent.yaml"),
                "--json",
            ])
            .args(extra)
            .output()
            .unwrap()
    };
    let decided = |output: &Output, call: &str| -> (String, String, bool) {
        let report: Value = serde_json::from_slice(&output.stdout).unwrap();
        let row = report["calls"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["tool_call_id"] == call)
            .unwrap()
            .clone();
        (
            row["decision"].as_str().unwrap().to_owned(),
            row["hook"].as_str().unwrap_or("-").to_owned(),
            row["rewritten"].as_bool().unwrap(),
        )
    };
    let with_skill = replay(&["--use", "deploy"]);
    assert_eq!(with_skill.status.code(), Some(0), "{}", text(&with_skill));
    assert_eq!(
        decided(&with_skill, "call_2"),
        ("deny".into(), "ReadOnlyGuard".into(), false)
    );
    assert_eq!(
        decided(&with_skill, "call_3"),
        ("deny".into(), "no-recursive-rm".into(), false)
    );
    assert!(
        decided(&with_skill, "call_5").2,
        "the deploy skill rewrites"
    );
    let without = replay(&[]);
    assert!(!decided(&without, "call_5").2, "no skill, no rewrite");
    let unknown = replay(&["--use", "deploi"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(text(&unknown).contains("deploi"), "{}", text(&unknown));
}

#[test]
fn regression_the_file_tools_used_a_hard_link_to_a_file_outside_the_workspace() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    let secret = dir.path().join("id_rsa");
    std::fs::write(&secret, "CANARY-HARDLINK-SECRET").unwrap();
    std::fs::hard_link(&secret, ws.join("key")).unwrap();
    std::fs::write(
        dir.path().join("script.jsonl"),
        r#"{"role":"assistant","content":null,"tool_calls":[{"id":"w1","type":"function","function":{"name":"write_file","arguments":{"path":"key","content":"pwned"}}},{"id":"r1","type":"function","function":{"name":"read_file","arguments":{"path":"key"}}}]}
{"role":"assistant","content":"ok"}"#,
    )
    .unwrap();
    let agent = dir.path().join("agent.yaml");
    std::fs::write(
        &agent,
        "name: files\nmodel: scripted:script.jsonl\ntools: [write_file, read_file]\n",
    )
    .unwrap();
    let trace = dir.path().join("t.jsonl");
    let output = tollgate_run(
        &[
            "--agent",
            &agent.display().to_string(),
            "--workspace",
            &ws.display().to_string(),
            "--trace",
            &trace.display().to_string(),
            "go",
        ],
        &[],
    );
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    let lines = read_trace(&trace);
    for call in ["w1", "r1"] {
        let observation = by_call(&lines, "observation", call).unwrap();
        assert_eq!(observation["status"], "failed", "{observation}");
        assert!(
            observation["content"]
                .as_str()
                .unwrap()
                .contains("hard links"),
            "{observation}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(&secret).unwrap(),
        "CANARY-HARDLINK-SECRET"
    );
    assert!(!text(&output).contains("CANARY-HARDLINK-SECRET"));
    assert!(
        !std::fs::read_to_string(&trace)
            .unwrap()
            .contains("CANARY-HARDLINK-SECRET")
    );
}

#[test]
fn regression_an_agents_hook_file_symlinked_to_a_secret_echoed_its_lines() {
    let secrets = [
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjE: CANARY\n  bad: [x\n-----END OPENSSH PRIVATE KEY-----\n",
        "root:$y$j9T$CANARY:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n",
        "token: CANARY\n",
    ];
    for secret in secrets {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("shadow");
        std::fs::write(&target, secret).unwrap();
        std::os::unix::fs::symlink(&target, dir.path().join("hooks.yaml")).unwrap();
        std::os::unix::fs::symlink(&target, dir.path().join("linked-agent.yaml")).unwrap();
        let agent = small_agent(dir.path(), "hooks: [hooks.yaml]\n", "");
        let ws = dir.path().join("ws").display().to_string();
        let linked = dir.path().join("linked-agent.yaml").display().to_string();
        for agent in [&agent, &linked] {
            let output = tollgate_run(&["--agent", agent, "--workspace", &ws, "go"], &[]);
            assert_eq!(output.status.code(), Some(1), "{}", text(&output));
            assert!(
                !text(&output).contains("CANARY"),
                "{secret:?}: {}",
                text(&output)
            );
        }
        let output = Command::new(env!("CARGO_BIN_EXE_tollgate"))
            .args(["dispatch", "--hooks"])
            .arg(dir.path().join("hooks.yaml"))
            .args(["--event", "PreToolUse", "--payload"])
            .arg(r#"{"tool_name":"read_file","tool_input":{"path":"a"}}"#)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(1), "{}", text(&output));
        assert!(
            !text(&output).contains("CANARY"),
            "{secret:?}: {}",
            text(&output)
        );
    }
}

#[test]
fn regression_a_900_mb_sql_cell_reached_the_model() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("seed.sql"), "CREATE TABLE t (x TEXT);").unwrap();
    let call = serde_json::json!({"role": "assistant", "content": null, "tool_calls": [
        {"id": "q1", "type": "function", "function": {"name": "sql_query", "arguments": {"sql":
            "SELECT printf('%.*c', 900000000, 'x') AS huge, printf('%.*c', 100000, 'y') AS big"}}},
        {"id": "q2", "type": "function", "function": {"name": "sql_query", "arguments": {"sql":
            "SELECT replace(printf('%.*c', 4000000, 'x'), 'x', 'xx')"}}}
    ]});
    std::fs::write(
        dir.path().join("script.jsonl"),
        format!("{call}\n{{\"role\":\"assistant\",\"content\":\"ok\"}}\n"),
    )
    .unwrap();
    let agent = dir.path().join("agent.yaml");
    std::fs::write(
        &agent,
        "name: sql\nmodel: scripted:script.jsonl\ntools: [sql_query]\ndatabase: t.db\nseed: seed.sql\n",
    )
    .unwrap();
    let trace = dir.path().join("t.jsonl");
    let output = tollgate_run(
        &[
            "--agent",
            &agent.display().to_string(),
            "--workspace",
            &dir.path().join("ws").display().to_string(),
            "--trace",
            &trace.display().to_string(),
            "go",
        ],
        &[],
    );
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    let lines = read_trace(&trace);
    let q1 = by_call(&lines, "observation", "q1").unwrap();
    assert_eq!(q1["status"], "ok", "{q1}");
    let result: Value = serde_json::from_str(q1["content"].as_str().unwrap()).unwrap();
    assert_eq!(result["rows"][0]["huge"], Value::Null);
    assert!(
        result["rows"][0]["big"]
            .as_str()
            .unwrap()
            .ends_with("… [95904 more bytes]"),
        "{result}"
    );
    assert_eq!(result["truncated"], true);
    let q2 = by_call(&lines, "observation", "q2").unwrap();
    assert_eq!(q2["status"], "failed", "{q2}");
    assert!(
        q2["content"]
            .as_str()
            .unwrap()
            .contains("string or blob too big")
    );
    assert!(std::fs::metadata(&trace).unwrap().len() < 64 * 1024);
}
