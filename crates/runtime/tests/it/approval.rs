//! Asks through the durable approver: one request per ask, wherever it sits in the run.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tollgate_approval::{Decision, Request, Status, Store, Verdict, os_user};
use tollgate_core::HooksMode;
use tollgate_runtime::{CancellationToken, DurableApprover, EndStatus, Services};

use crate::support::*;

/// Approves every pending request of `db` from a store of its own (as another process would)
/// until `stop` fires.
fn approve_all(db: PathBuf, stop: CancellationToken) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let store = loop {
            if let Ok(store) = Store::open(&db).await {
                break store;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        loop {
            for request in store.list(Some(Status::Pending)).await.unwrap() {
                let decision = Decision {
                    verdict: Verdict::Approve { edit: None },
                    by: os_user(),
                    channel: "test".into(),
                    note: None,
                };
                let _ = store.decide(&request.id, &decision).await;
            }
            tokio::select! {
                () = stop.cancelled() => return,
                () = tokio::time::sleep(Duration::from_millis(20)) => {}
            }
        }
    })
}

async fn durable(dir: &Path, mode: HooksMode) -> (Services, PathBuf) {
    let db = dir.join("state/approvals.db");
    let approver = DurableApprover::new(db.clone(), os_user(), CancellationToken::new());
    let services = Services {
        approver: Arc::new(approver),
        hooks_mode: mode,
        ..Services::default()
    };
    (services, db)
}

async fn requests(db: &Path) -> Vec<Request> {
    let mut all = Store::open(db).await.unwrap().list(None).await.unwrap();
    all.sort_by(|a, b| a.id.cmp(&b.id));
    all
}

const CONFIRM_WRITES: &str =
    "model_config_json:\n  hooks:\n    confirmation_tools: [\"write_file\"]\n";

fn writer(dir: &Path, script: &[String]) -> PathBuf {
    let text = format!(
        "name: writer\nmodel: scripted:script.jsonl\ntools: [write_file, read_file]\n{CONFIRM_WRITES}"
    );
    write(
        dir,
        &[("agent.yaml", &text), ("script.jsonl", &script.join("\n"))],
    );
    dir.join("agent.yaml")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn evaluation_bypass_never_approves_by_itself() {
    let (_tmp, dir) = agent_dir();
    let script = [
        call("c1", "write_file", json!({"path": "a.txt", "content": "a"})),
        answer("ok"),
    ];
    let agent = writer(&dir, &script);
    let (services, db) = durable(&dir, HooksMode::Bypass).await;
    let stop = CancellationToken::new();
    let decider = approve_all(db.clone(), stop.clone());
    let (report, lines) = run_agent(&agent, "go", &services).await;
    stop.cancel();
    decider.await.unwrap();
    assert_eq!(report.status, EndStatus::Completed);
    let filed = requests(&db).await;
    assert_eq!(
        filed.len(),
        1,
        "the gate's ask went to the store: {lines:#?}"
    );
    assert!(filed[0].consumed_at.is_some());
    assert_eq!(of(&lines, "approval")[0]["approved"], true);
    assert!(dir.join("ws/a.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_id_reused_in_a_later_turn_gets_its_own_request() {
    let (_tmp, dir) = agent_dir();
    let script = [
        call("c1", "write_file", json!({"path": "a.txt", "content": "a"})),
        call("c1", "write_file", json!({"path": "b.txt", "content": "b"})),
        answer("ok"),
    ];
    let agent = writer(&dir, &script);
    let (services, db) = durable(&dir, HooksMode::Enforce).await;
    let stop = CancellationToken::new();
    let decider = approve_all(db.clone(), stop.clone());
    let (report, _lines) = run_agent(&agent, "go", &services).await;
    stop.cancel();
    decider.await.unwrap();
    assert_eq!(report.status, EndStatus::Completed);
    assert!(dir.join("ws/a.txt").exists() && dir.join("ws/b.txt").exists());
    let filed = requests(&db).await;
    assert_eq!(filed.len(), 2);
    assert!(filed.iter().all(|r| r.consumed_at.is_some()));
    assert_ne!(filed[0].idempotency_key, filed[1].idempotency_key);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_delegation_files_its_sub_agents_asks_apart() {
    let (_tmp, dir) = agent_dir();
    let delegate = |id: &str| call(id, "call_agent", json!({"agent": "child", "task": "write"}));
    let parent = "name: parent\nmodel: scripted:parent.jsonl\ntools: [call_agent]\n\
                  subagents:\n  child: {file: child.yaml, timeout_seconds: 60}\n";
    let child =
        format!("name: child\nmodel: scripted:child.jsonl\ntools: [write_file]\n{CONFIRM_WRITES}");
    let parent_script = [delegate("d1"), delegate("d2"), answer("parent done")].join("\n");
    // Each child session replays the same script: the same call id both times.
    let child_script = [
        call("w1", "write_file", json!({"path": "c.txt", "content": "c"})),
        answer("child done"),
    ]
    .join("\n");
    write(
        &dir,
        &[
            ("parent.yaml", parent),
            ("child.yaml", &child),
            ("parent.jsonl", &parent_script),
            ("child.jsonl", &child_script),
        ],
    );
    let (services, db) = durable(&dir, HooksMode::Enforce).await;
    let stop = CancellationToken::new();
    let decider = approve_all(db.clone(), stop.clone());
    let (report, lines) = run_agent(&dir.join("parent.yaml"), "go", &services).await;
    stop.cancel();
    decider.await.unwrap();
    assert_eq!(report.status, EndStatus::Completed);
    let filed = requests(&db).await;
    assert_eq!(filed.len(), 2, "one request per delegation");
    assert!(
        filed
            .iter()
            .all(|r| r.agent == "child" && r.consumed_at.is_some())
    );
    let ran = of(&lines, "observation")
        .iter()
        .filter(|o| o["tool_name"] == "write_file" && o["status"] == "ok")
        .count();
    assert_eq!(ran, 2, "both delegations wrote");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_that_cannot_be_opened_denies() {
    let (_tmp, dir) = agent_dir();
    let script = [
        call("c1", "write_file", json!({"path": "a.txt", "content": "a"})),
        answer("ok"),
    ];
    let agent = writer(&dir, &script);
    // A directory where the database file should be.
    std::fs::create_dir_all(dir.join("state/approvals.db")).unwrap();
    let (services, _db) = durable(&dir, HooksMode::Enforce).await;
    let (report, lines) = run_agent(&agent, "go", &services).await;
    assert_eq!(report.status, EndStatus::Completed);
    let observation = of(&lines, "observation")[0];
    assert_eq!(observation["status"], "denied");
    assert!(
        observation["content"]
            .as_str()
            .unwrap()
            .contains("the approval store failed"),
        "{observation}"
    );
    assert!(!dir.join("ws/a.txt").exists());
}

/// Grants writes of `a.txt`, denies `b.txt` (Claude Code's `PermissionRequest` answers) and
/// says nothing about any other file.
const PERMISSION_HOOK: &str = r#"import json, sys

event = json.load(sys.stdin)
path = event["tool_input"].get("file_path", "")
def answer(decision):
    print(json.dumps({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": decision}}))
if event["tool_name"] == "Write" and path.endswith("/a.txt"):
    answer({"behavior": "allow"})
elif path.endswith("/b.txt"):
    answer({"behavior": "deny", "message": "b.txt is frozen"})
"#;

/// Answers with what it was told, as context the trace records.
const NOTIFICATION_HOOK: &str = r#"import json, sys

event = json.load(sys.stdin)
told = event["notification_type"] + "|" + event["message"]
print(json.dumps({"hookSpecificOutput": {"hookEventName": "Notification", "additionalContext": told}}))
"#;

fn claude_hooks(dir: &Path, event: &str, matcher: &str, script: &str) -> String {
    let file = dir.join(format!("{event}.py"));
    std::fs::write(&file, script).unwrap();
    let settings = json!({"hooks": {event: [{"matcher": matcher, "hooks": [
        {"type": "command", "command": format!("python3 {}", file.display())}
    ]}]}});
    std::fs::write(dir.join("settings.json"), settings.to_string()).unwrap();
    "hooks: [settings.json]\n".to_owned()
}

/// A `PreToolUse` hook that asks about every write.
const ASK_HOOK: &str = r#"import json
print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask", "permissionDecisionReason": "writes need a look"}}))
"#;

/// `claude_hooks` with a `PreToolUse` hook that asks about every `Write` before `event`'s.
fn asked_then(dir: &Path, event: &str, matcher: &str, script: &str) -> String {
    let ask = dir.join("ask.py");
    std::fs::write(&ask, ASK_HOOK).unwrap();
    let file = dir.join(format!("{event}.py"));
    std::fs::write(&file, script).unwrap();
    let group = |matcher: &str, file: &Path| {
        json!([{"matcher": matcher, "hooks": [
            {"type": "command", "command": format!("python3 {}", file.display())}
        ]}])
    };
    let settings =
        json!({"hooks": {"PreToolUse": group("Write", &ask), event: group(matcher, &file)}});
    std::fs::write(dir.join("settings.json"), settings.to_string()).unwrap();
    "hooks: [settings.json]\n".to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_permission_request_hook_decides_an_ask_or_leaves_it_to_the_human() {
    let (_tmp, dir) = agent_dir();
    let hooks = asked_then(&dir, "PermissionRequest", "Write", PERMISSION_HOOK);
    let script = [
        call("c1", "write_file", json!({"path": "a.txt", "content": "a"})),
        call("c2", "write_file", json!({"path": "b.txt", "content": "b"})),
        call("c3", "write_file", json!({"path": "c.txt", "content": "c"})),
        answer("ok"),
    ];
    let text = format!("name: writer\nmodel: scripted:script.jsonl\ntools: [write_file]\n{hooks}");
    write(
        &dir,
        &[("agent.yaml", &text), ("script.jsonl", &script.join("\n"))],
    );
    // No human can answer here: only the hook can approve.
    let (report, lines) = run_agent(&dir.join("agent.yaml"), "go", &Services::default()).await;
    assert_eq!(report.status, EndStatus::Completed, "{report:?}");
    let decided: Vec<_> = of(&lines, "approval")
        .iter()
        .map(|a| {
            (
                a["status"].as_str().unwrap_or_default(),
                a["approved"] == true,
            )
        })
        .collect();
    assert_eq!(
        decided,
        [
            ("approved_by_hook", true),
            ("denied_by_hook", false),
            ("rejected", false)
        ],
        "{lines:#?}"
    );
    assert!(
        of(&lines, "approval")[0]["by"]
            .as_str()
            .is_some_and(|by| by.contains("PermissionRequest")),
        "the approval names the hook: {:?}",
        of(&lines, "approval")[0]
    );
    assert!(dir.join("ws/a.txt").exists());
    assert!(!dir.join("ws/b.txt").exists() && !dir.join("ws/c.txt").exists());
    let denied = of(&lines, "observation")[1]["content"]
        .as_str()
        .unwrap_or_default();
    assert!(denied.contains("b.txt is frozen"), "{denied}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_permission_request_hook_cannot_grant_what_the_permission_gate_asks() {
    let (_tmp, dir) = agent_dir();
    let hooks = claude_hooks(&dir, "PermissionRequest", "Write", PERMISSION_HOOK);
    let script = [
        call("c1", "write_file", json!({"path": "a.txt", "content": "a"})),
        answer("ok"),
    ];
    // The agent's confirmation settings ask (the permission gate), and the hook grants.
    let text = format!(
        "name: writer\nmodel: scripted:script.jsonl\ntools: [write_file]\n{CONFIRM_WRITES}{hooks}"
    );
    write(
        &dir,
        &[("agent.yaml", &text), ("script.jsonl", &script.join("\n"))],
    );
    let (report, lines) = run_agent(&dir.join("agent.yaml"), "go", &Services::default()).await;
    assert_eq!(report.status, EndStatus::Completed, "{report:?}");
    let approval = &of(&lines, "approval")[0];
    assert_eq!(approval["approved"], false, "{approval}");
    assert_ne!(approval["status"], "approved_by_hook", "{approval}");
    assert!(
        !dir.join("ws/a.txt").exists(),
        "the gate's ask was granted by a hook"
    );
    assert!(
        of(&lines, "warning").iter().any(|w| w["message"]
            .as_str()
            .is_some_and(|m| m.contains("permission gate"))),
        "the ignored grant is not on record: {lines:#?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_notification_hook_hears_of_a_call_waiting_for_a_human() {
    let (_tmp, dir) = agent_dir();
    let hooks = claude_hooks(&dir, "Notification", "permission_prompt", NOTIFICATION_HOOK);
    let script = [
        call("c1", "write_file", json!({"path": "a.txt", "content": "a"})),
        answer("ok"),
    ];
    let text = format!(
        "name: writer\nmodel: scripted:script.jsonl\ntools: [write_file]\n{CONFIRM_WRITES}{hooks}"
    );
    write(
        &dir,
        &[("agent.yaml", &text), ("script.jsonl", &script.join("\n"))],
    );
    let (services, db) = durable(&dir, HooksMode::Enforce).await;
    let stop = CancellationToken::new();
    let decider = approve_all(db.clone(), stop.clone());
    let (report, lines) = run_agent(&dir.join("agent.yaml"), "go", &services).await;
    stop.cancel();
    decider.await.unwrap();
    assert_eq!(report.status, EndStatus::Completed, "{report:?}");
    assert!(dir.join("ws/a.txt").exists(), "the ask went on: {lines:#?}");
    let told = dispatches(&lines, "notification");
    assert_eq!(told.len(), 1, "{lines:#?}");
    assert_eq!(
        told[0]["additional_context"],
        json!(["permission_prompt|Claude needs your permission to use Write"])
    );
    assert_eq!(told[0]["decision"], "allow");
}
