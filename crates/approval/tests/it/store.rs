//! The confirmation store's state machine on a real SQLite file.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tollgate_approval::{
    Decision, ManualClock, NewRequest, Refused, Status, Store, Verdict, args_hash,
};

fn asking(call: &str, timeout_seconds: u64) -> NewRequest {
    NewRequest {
        run_id: "run-1".into(),
        session_id: "session-1".into(),
        scope: "t1:pre_tool_use".into(),
        agent: "ops".into(),
        tool_name: "sql_execute".into(),
        tool_call_id: call.into(),
        arguments: json!({"sql": "DELETE FROM users"}),
        reasons: vec!["calls of `sql_execute` need confirmation".into()],
        asked_by: "permission_gate".into(),
        approvers: vec!["ops-lead".into(), "dba".into()],
        timeout_seconds,
    }
}

fn approve(by: &str) -> Decision {
    Decision {
        verdict: Verdict::Approve { edit: None },
        by: by.into(),
        channel: "cli".into(),
        note: None,
    }
}

fn reject(by: &str, note: &str) -> Decision {
    Decision {
        verdict: Verdict::Reject,
        by: by.into(),
        channel: "cli".into(),
        note: Some(note.into()),
    }
}

async fn store(dir: &tempfile::TempDir) -> Store {
    Store::open(&dir.path().join("approvals.db")).await.unwrap()
}

async fn manual(dir: &tempfile::TempDir) -> (Store, Arc<ManualClock>) {
    let clock = Arc::new(ManualClock::at(1_800_000_000_000));
    let store = Store::open_with_clock(&dir.path().join("approvals.db"), clock.clone())
        .await
        .unwrap();
    (store, clock)
}

#[tokio::test]
async fn a_request_is_filed_pending_with_its_hash_and_audited() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir).await;
    let filed = store.file(&asking("call-1", 60)).await.unwrap();
    assert!(!filed.attached);
    let request = filed.request;
    assert!(request.id.starts_with("cr_"), "{}", request.id);
    assert_eq!(request.status, Status::Pending);
    assert_eq!(
        request.args_hash,
        args_hash(&json!({"sql": "DELETE FROM users"}))
    );
    assert_eq!(request.expires_at - request.created_at, 60_000);
    let history = store.history(&request.id).await.unwrap();
    assert_eq!(history.len(), 1);
    assert_eq!(
        (history[0].action.as_str(), history[0].outcome.as_str()),
        ("create", "applied")
    );
}

#[tokio::test]
async fn filing_the_same_call_again_attaches_to_its_row() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir).await;
    let first = store.file(&asking("call-1", 60)).await.unwrap();
    store
        .decide(&first.request.id, &approve("ops-lead"))
        .await
        .unwrap();
    // A second process (the resumed run) opens the same file.
    let again = Store::open(store.path()).await.unwrap();
    let second = again.file(&asking("call-1", 60)).await.unwrap();
    assert!(second.attached);
    assert_eq!(second.request.id, first.request.id);
    assert_eq!(second.request.status, Status::Approved);
    assert_eq!(again.list(None).await.unwrap().len(), 1);
    let other = again.file(&asking("call-2", 60)).await.unwrap();
    assert_ne!(other.request.id, first.request.id);
}

#[tokio::test]
async fn the_first_decision_wins_and_the_loser_is_told_by_whom() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir).await;
    let id = store.file(&asking("call-1", 60)).await.unwrap().request.id;
    let approved = store.decide(&id, &approve("ops-lead")).await.unwrap();
    assert_eq!(approved.status, Status::Approved);
    assert_eq!(approved.responded_by.as_deref(), Some("ops-lead"));
    let late = store.decide(&id, &reject("dba", "no")).await.unwrap_err();
    let message = late.to_string();
    assert!(
        matches!(
            late,
            Refused::AlreadyDecided {
                status: Status::Approved,
                ..
            }
        ),
        "{late:?}"
    );
    assert!(
        message.contains("already approved by ops-lead at 20"),
        "{message}"
    );
    let history = store.history(&id).await.unwrap();
    let outcomes: Vec<(&str, &str, &str)> = history
        .iter()
        .map(|e| (e.action.as_str(), e.outcome.as_str(), e.actor.as_str()))
        .collect();
    assert_eq!(
        outcomes,
        [
            ("create", "applied", "agent:ops"),
            ("approve", "applied", "ops-lead"),
            ("reject", "refused", "dba")
        ]
    );
    assert_eq!(
        store.get(&id).await.unwrap().unwrap().status,
        Status::Approved
    );
}

#[tokio::test]
async fn someone_not_on_the_list_is_refused_and_audited() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir).await;
    let id = store.file(&asking("call-1", 60)).await.unwrap().request.id;
    let refused = store.decide(&id, &approve("mallory")).await.unwrap_err();
    assert!(matches!(refused, Refused::NotAllowed { .. }), "{refused:?}");
    assert!(refused.to_string().contains("ops-lead, dba"), "{refused}");
    assert_eq!(
        store.get(&id).await.unwrap().unwrap().status,
        Status::Pending
    );
    let last = store.history(&id).await.unwrap().pop().unwrap();
    assert_eq!(
        (last.actor.as_str(), last.outcome.as_str()),
        ("mallory", "refused")
    );
}

#[tokio::test]
async fn approve_after_expiry_is_refused_and_the_row_stays_expired() {
    let dir = tempfile::tempdir().unwrap();
    let (store, clock) = manual(&dir).await;
    let id = store.file(&asking("call-1", 30)).await.unwrap().request.id;
    clock.advance(30_000);
    let refused = store.decide(&id, &approve("ops-lead")).await.unwrap_err();
    assert!(
        matches!(
            refused,
            Refused::AlreadyDecided {
                status: Status::Expired,
                ..
            }
        ),
        "{refused:?}"
    );
    let row = store.get(&id).await.unwrap().unwrap();
    assert_eq!(row.status, Status::Expired);
    assert_eq!(row.responded_by.as_deref(), Some("timeout"));
    let actions: Vec<(String, String)> = store
        .history(&id)
        .await
        .unwrap()
        .into_iter()
        .map(|e| (e.action, e.outcome))
        .collect();
    assert_eq!(
        actions,
        [
            ("create".into(), "applied".into()),
            ("expire".into(), "applied".into()),
            ("approve".into(), "refused".into())
        ]
    );
}

#[tokio::test]
async fn expire_before_the_deadline_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (store, clock) = manual(&dir).await;
    let id = store.file(&asking("call-1", 30)).await.unwrap().request.id;
    assert!(matches!(
        store.expire(&id).await.unwrap_err(),
        Refused::NotOverdue { .. }
    ));
    clock.advance(29_999);
    assert!(store.sweep().await.unwrap().is_empty());
    clock.advance(1);
    let swept = store.sweep().await.unwrap();
    assert_eq!(swept.len(), 1);
    assert_eq!(swept[0].status, Status::Expired);
}

#[tokio::test]
async fn an_approval_is_consumed_once_and_only_for_its_arguments() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir).await;
    let id = store.file(&asking("call-1", 60)).await.unwrap().request.id;
    let args = json!({"sql": "DELETE FROM users"});
    assert!(matches!(
        store.consume(&id, "ops", &args).await.unwrap_err(),
        Refused::NotApproved {
            status: Status::Pending,
            ..
        }
    ));
    store.decide(&id, &approve("dba")).await.unwrap();
    let changed = store
        .consume(&id, "ops", &json!({"sql": "DROP TABLE users"}))
        .await
        .unwrap_err();
    assert!(
        matches!(changed, Refused::ArgumentsChanged { .. }),
        "{changed:?}"
    );
    // Key order does not matter, values do.
    let consumed = store.consume(&id, "ops", &args).await.unwrap();
    assert!(consumed.consumed_at.is_some());
    let again = store.consume(&id, "ops", &args).await.unwrap_err();
    assert!(
        matches!(
            again,
            Refused::AlreadyConsumed {
                finished: false,
                ..
            }
        ),
        "{again:?}"
    );
    assert!(
        again.to_string().contains("its end is not recorded"),
        "{again}"
    );
    store.finish(&id, "ops").await.unwrap();
    assert!(matches!(
        store.finish(&id, "ops").await.unwrap_err(),
        Refused::NotRunning { .. }
    ));
    assert!(matches!(
        store.consume(&id, "ops", &args).await.unwrap_err(),
        Refused::AlreadyConsumed { finished: true, .. }
    ));
}

#[tokio::test]
async fn an_edited_approval_runs_only_with_the_edit() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir).await;
    let id = store.file(&asking("call-1", 60)).await.unwrap().request.id;
    let edit = json!({"sql": "DELETE FROM users WHERE id = 7"});
    let decided = store
        .decide(
            &id,
            &Decision {
                verdict: Verdict::Approve {
                    edit: Some(edit.clone()),
                },
                ..approve("dba")
            },
        )
        .await
        .unwrap();
    assert_eq!(decided.arguments_to_run(), &edit);
    assert!(matches!(
        store
            .consume(&id, "ops", &json!({"sql": "DELETE FROM users"}))
            .await
            .unwrap_err(),
        Refused::ArgumentsChanged { .. }
    ));
    store.consume(&id, "ops", &edit).await.unwrap();
}

#[tokio::test]
async fn a_rejection_keeps_its_note_and_cannot_be_consumed() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir).await;
    let id = store.file(&asking("call-1", 60)).await.unwrap().request.id;
    let row = store
        .decide(&id, &reject("ops-lead", "use the staging DB"))
        .await
        .unwrap();
    assert_eq!(row.status, Status::Rejected);
    assert_eq!(row.response_note.as_deref(), Some("use the staging DB"));
    assert!(
        store
            .consume(&id, "ops", &json!({"sql": "DELETE FROM users"}))
            .await
            .is_err()
    );
    let cancelled = store.cancel(&id, "ops", "the run was cancelled").await;
    assert!(matches!(cancelled, Err(Refused::AlreadyDecided { .. })));
}

#[tokio::test]
async fn a_waiter_wakes_on_a_decision_from_this_process() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir).await;
    let id = store.file(&asking("call-1", 60)).await.unwrap().request.id;
    // A long poll: only the notification can wake the waiter in time.
    let waiting = tokio::spawn({
        let (store, id) = (store.clone(), id.clone());
        async move { store.wait(&id, Duration::from_secs(3600)).await }
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    store.decide(&id, &approve("ops-lead")).await.unwrap();
    let decided = tokio::time::timeout(Duration::from_secs(30), waiting)
        .await
        .expect("the waiter was not woken")
        .unwrap()
        .unwrap();
    assert_eq!(decided.status, Status::Approved);
}

#[tokio::test]
async fn a_waiter_sees_a_decision_written_by_another_connection() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir).await;
    let id = store.file(&asking("call-1", 60)).await.unwrap().request.id;
    let waiting = tokio::spawn({
        let (store, id) = (store.clone(), id.clone());
        async move { store.wait(&id, Duration::from_millis(20)).await }
    });
    // Another store on the same file: no shared notification, as from another process.
    let other = Store::open(store.path()).await.unwrap();
    other
        .decide(&id, &reject("dba", "not today"))
        .await
        .unwrap();
    let decided = waiting.await.unwrap().unwrap();
    assert_eq!(decided.status, Status::Rejected);
    assert_eq!(decided.response_note.as_deref(), Some("not today"));
}

#[tokio::test]
async fn a_waiter_expires_its_request_at_the_deadline() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir).await;
    let id = store.file(&asking("call-1", 0)).await.unwrap().request.id;
    let expired = store.wait(&id, Duration::from_millis(10)).await.unwrap();
    assert_eq!(expired.status, Status::Expired);
    assert_eq!(expired.responded_by.as_deref(), Some("timeout"));
}

#[tokio::test]
async fn the_audit_cannot_be_rewritten_and_requests_cannot_be_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir).await;
    let id = store.file(&asking("call-1", 60)).await.unwrap().request.id;
    store.decide(&id, &approve("ops-lead")).await.unwrap();
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", store.path().display()))
        .await
        .unwrap();
    for sql in [
        "UPDATE confirmation_event SET actor = 'someone-else'",
        "DELETE FROM confirmation_event",
        "DELETE FROM confirmation_request",
        "UPDATE confirmation_request SET status = 'rejected'",
        "UPDATE confirmation_request SET responded_by = 'someone-else'",
        "UPDATE confirmation_request SET arguments = '{}'",
    ] {
        let err = sqlx::query(sql).execute(&pool).await.unwrap_err();
        assert!(
            err.to_string().contains("append-only")
                || err.to_string().contains("cannot change")
                || err.to_string().contains("never deleted"),
            "{sql}: {err}"
        );
    }
    let row = store.get(&id).await.unwrap().unwrap();
    assert_eq!(row.status, Status::Approved);
    assert_eq!(store.history(&id).await.unwrap()[1].actor, "ops-lead");
}

#[tokio::test]
async fn a_file_that_is_not_a_database_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("approvals.db");
    std::fs::write(
        &path,
        "this is not SQLite, it is a text file of some length",
    )
    .unwrap();
    let err = Store::open(&path).await.unwrap_err().to_string();
    assert!(err.contains("cannot open the approval database"), "{err}");
    assert!(err.contains("approvals.db"), "{err}");
}

#[tokio::test]
async fn unknown_ids_are_not_found() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir).await;
    let refused = store
        .decide("cr_nope", &approve("ops-lead"))
        .await
        .unwrap_err();
    assert!(matches!(refused, Refused::NotFound { .. }));
    assert!(store.get("cr_nope").await.unwrap().is_none());
}

/// Regression: when a transition's audit row could not be written, the store committed the
/// transaction anyway, so the request changed with no record of who changed it.
#[tokio::test]
async fn a_transition_whose_audit_row_failed_was_committed_without_it() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir).await;
    let id = store.file(&asking("call-1", 60)).await.unwrap().request.id;
    // Another program makes the audit insert fail, as a full disk or an I/O error would.
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", store.path().display()))
        .await
        .unwrap();
    sqlx::query(
        "CREATE TRIGGER fail_approval_audit BEFORE INSERT ON confirmation_event \
         WHEN NEW.action = 'approve' AND NEW.outcome = 'applied' \
         BEGIN SELECT RAISE(ABORT, 'the audit cannot be written'); END",
    )
    .execute(&pool)
    .await
    .unwrap();
    let failed = store.decide(&id, &approve("ops-lead")).await.unwrap_err();
    assert!(matches!(failed, Refused::Store(_)), "{failed:?}");
    let row = store.get(&id).await.unwrap().unwrap();
    assert_eq!(
        (row.status, row.responded_by),
        (Status::Pending, None),
        "the approval was committed without its audit row"
    );
    assert_eq!(store.history(&id).await.unwrap().len(), 1);
    // Once the audit can be written again, the same decision goes through, on record.
    sqlx::query("DROP TRIGGER fail_approval_audit")
        .execute(&pool)
        .await
        .unwrap();
    store.decide(&id, &approve("ops-lead")).await.unwrap();
    let last = store.history(&id).await.unwrap().pop().unwrap();
    assert_eq!(
        (last.action.as_str(), last.outcome.as_str()),
        ("approve", "applied")
    );
}

#[tokio::test]
async fn another_programs_database_is_never_migrated() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("other.db");
    {
        let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}?mode=rwc", path.display()))
            .await
            .unwrap();
        sqlx::query("CREATE TABLE precious (x)")
            .execute(&pool)
            .await
            .unwrap();
        pool.close().await;
    }
    let before = std::fs::read(&path).unwrap();
    let err = Store::open(&path).await.unwrap_err().to_string();
    assert!(err.contains("another program's SQLite database"), "{err}");
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "the file is unchanged"
    );
    assert!(!dir.path().join("other.db.lock").exists());
    let folder = Store::open(dir.path()).await.unwrap_err().to_string();
    assert!(folder.contains("it is a directory"), "{folder}");
}

#[tokio::test]
async fn a_new_database_is_readable_by_its_owner_only() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state/tollgate/approvals.db");
    let store = Store::open(&path).await.unwrap();
    store.file(&asking("call-1", 60)).await.unwrap();
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&path), 0o600);
    assert_eq!(mode(path.parent().unwrap()), 0o700);
    let wal = dir.path().join("state/tollgate/approvals.db-wal");
    assert_eq!(mode(&wal), 0o600);
}

#[tokio::test]
async fn count_pending_counts_what_waits_and_nothing_overdue_or_decided() {
    let dir = tempfile::tempdir().unwrap();
    let (store, clock) = manual(&dir).await;
    assert_eq!(store.count_pending().await.unwrap(), 0);
    let short = store.file(&asking("call-1", 30)).await.unwrap().request.id;
    store.file(&asking("call-2", 60)).await.unwrap();
    let decided = store.file(&asking("call-3", 60)).await.unwrap().request.id;
    assert_eq!(store.count_pending().await.unwrap(), 3);
    store.decide(&decided, &approve("dba")).await.unwrap();
    assert_eq!(store.count_pending().await.unwrap(), 2);
    clock.advance(30_000);
    assert_eq!(
        store.count_pending().await.unwrap(),
        1,
        "overdue, not yet swept"
    );
    let row = store.get(&short).await.unwrap().unwrap();
    assert_eq!(row.status, Status::Pending, "counting writes nothing");
}

/// Regression: a click's decision commits before its callback marks the message closed; a
/// hub pass in between took the message for one still showing buttons and replaced it a
/// second time (an extra platform call and `update` row). A request a click on a channel
/// decided is never that channel's to update; one decided elsewhere, or expired, is.
#[tokio::test]
async fn a_message_whose_request_a_click_on_it_decided_was_taken_for_one_to_update() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir).await;
    let mut ids = Vec::new();
    for (call, channel) in [
        ("by-click", "feishu"),
        ("elsewhere", "api"),
        ("on-slack", "slack"),
    ] {
        let id = store.file(&asking(call, 600)).await.unwrap().request.id;
        for kind in ["feishu", "slack"] {
            store.enqueue_message(&id, kind).await.unwrap();
            store
                .message_sent(&id, kind, &format!("m-{call}-{kind}"))
                .await
                .unwrap();
        }
        let decision = Decision {
            channel: channel.into(),
            ..approve("ops-lead")
        };
        store.decide(&id, &decision).await.unwrap();
        ids.push(id);
    }
    let to_update = |kind: &'static str| {
        let store = store.clone();
        async move {
            let mut ids: Vec<String> = store
                .unclosed_messages(kind, 64)
                .await
                .unwrap()
                .into_iter()
                .map(|(message, _)| message.request_id)
                .collect();
            ids.sort();
            ids
        }
    };
    let sorted = |mut v: Vec<String>| {
        v.sort();
        v
    };
    assert_eq!(
        to_update("feishu").await,
        sorted(vec![ids[1].clone(), ids[2].clone()])
    );
    assert_eq!(
        to_update("slack").await,
        sorted(vec![ids[0].clone(), ids[1].clone()])
    );
}
