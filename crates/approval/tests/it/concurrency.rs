//! Several stores on one SQLite file racing for the same request. Each store is its own
//! `Store::open` (its own connection pool and notification), as separate processes would be.

use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};
use tokio::sync::Barrier;
use tollgate_approval::{Decision, NewRequest, Refused, Request, Status, Store, Verdict};

fn asking(call: &str) -> NewRequest {
    NewRequest {
        run_id: "run-1".into(),
        session_id: "session-1".into(),
        scope: "t1:pre_tool_use".into(),
        agent: "ops".into(),
        tool_name: "sql_execute".into(),
        tool_call_id: call.into(),
        arguments: arguments(),
        reasons: vec!["calls of `sql_execute` need confirmation".into()],
        asked_by: "permission_gate".into(),
        approvers: vec!["ops-lead".into(), "dba".into()],
        timeout_seconds: 3600,
    }
}

fn arguments() -> Value {
    json!({"sql": "DELETE FROM users"})
}

fn decision(verdict: Verdict, by: &str) -> Decision {
    Decision {
        verdict,
        by: by.into(),
        channel: "cli".into(),
        note: None,
    }
}

/// `n` stores on the file at `path`, each opened on its own.
async fn stores(path: &Path, n: usize) -> Vec<Store> {
    let mut stores = Vec::with_capacity(n);
    for _ in 0..n {
        stores.push(Store::open(path).await.unwrap());
    }
    stores
}

/// The audit rows of `id` for `action`, as `(outcome, actor)`.
async fn attempts(store: &Store, id: &str, action: &str) -> Vec<(String, String)> {
    store
        .history(id)
        .await
        .unwrap()
        .into_iter()
        .filter(|e| e.action == action)
        .map(|e| (e.outcome, e.actor))
        .collect()
}

/// Exactly one `Ok` among `results`; every other one refused as `loser` accepts. Returns the
/// winner.
fn one_winner(
    results: Vec<Result<Request, Refused>>,
    loser: impl Fn(&Refused, &Request) -> bool,
) -> Request {
    let (won, lost): (Vec<_>, Vec<_>) = results.into_iter().partition(Result::is_ok);
    let won: Vec<Request> = won.into_iter().map(Result::unwrap).collect();
    assert_eq!(won.len(), 1, "{} attempts succeeded: {won:?}", won.len());
    let winner = won.into_iter().next().unwrap();
    for refusal in lost.into_iter().map(Result::unwrap_err) {
        assert!(loser(&refusal, &winner), "{refusal:?} (winner {winner:?})");
    }
    winner
}

fn told_who_won(refusal: &Refused, winner: &Request) -> bool {
    matches!(
        refusal,
        Refused::AlreadyDecided { id, status, by, at }
            if *id == winner.id
                && *status == winner.status
                && *by == winner.responded_by
                && *at == winner.responded_at
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approve_and_reject_from_two_stores_make_one_transition() {
    let dir = tempfile::tempdir().unwrap();
    let [approver, rejecter]: [Store; 2] = stores(&dir.path().join("approvals.db"), 2)
        .await
        .try_into()
        .unwrap();
    for round in 0..30 {
        let id = approver
            .file(&asking(&format!("call-{round}")))
            .await
            .unwrap()
            .request
            .id;
        let start = Arc::new(Barrier::new(2));
        let approving = tokio::spawn({
            let (store, id, start) = (approver.clone(), id.clone(), start.clone());
            async move {
                start.wait().await;
                let approve = decision(Verdict::Approve { edit: None }, "ops-lead");
                store.decide(&id, &approve).await
            }
        });
        let rejecting = tokio::spawn({
            let (store, id, start) = (rejecter.clone(), id.clone(), start.clone());
            async move {
                start.wait().await;
                store.decide(&id, &decision(Verdict::Reject, "dba")).await
            }
        });
        let results = vec![approving.await.unwrap(), rejecting.await.unwrap()];
        let winner = one_winner(results, told_who_won);
        let (won, lost) = match winner.status {
            Status::Approved => (("approve", "ops-lead"), ("reject", "dba")),
            Status::Rejected => (("reject", "dba"), ("approve", "ops-lead")),
            other => panic!("round {round}: the winner left pending for {other}"),
        };
        assert_eq!(winner.responded_by.as_deref(), Some(won.1));
        // Both stores read the same final row.
        for store in [&approver, &rejecter] {
            assert_eq!(store.get(&id).await.unwrap().unwrap(), winner);
        }
        let history: Vec<(String, String, String)> = rejecter
            .history(&id)
            .await
            .unwrap()
            .into_iter()
            .map(|e| (e.action, e.outcome, e.actor))
            .collect();
        let row = |(action, actor): (&str, &str), outcome: &str| {
            (action.to_owned(), outcome.to_owned(), actor.to_owned())
        };
        assert_eq!(
            history,
            [
                row(("create", "agent:ops"), "applied"),
                row(won, "applied"),
                row(lost, "refused")
            ],
            "round {round}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_approves_from_five_stores_make_one_transition_and_fifty_audit_rows() {
    let dir = tempfile::tempdir().unwrap();
    let stores = stores(&dir.path().join("approvals.db"), 5).await;
    let id = stores[0].file(&asking("call-1")).await.unwrap().request.id;
    let start = Arc::new(Barrier::new(50));
    let mut tasks = Vec::new();
    for (s, store) in stores.iter().enumerate() {
        for t in 0..10 {
            let (store, id, start) = (store.clone(), id.clone(), start.clone());
            let by = if (s + t) % 2 == 0 { "ops-lead" } else { "dba" };
            tasks.push(tokio::spawn(async move {
                start.wait().await;
                let approve = decision(Verdict::Approve { edit: None }, by);
                store.decide(&id, &approve).await
            }));
        }
    }
    let mut results = Vec::new();
    for task in tasks {
        results.push(task.await.unwrap());
    }
    // Contention waits on the busy timeout: no `database is locked` reaches a caller.
    for result in &results {
        assert!(!matches!(result, Err(Refused::Store(_))), "{result:?}");
    }
    let winner = one_winner(results, told_who_won);
    assert_eq!(winner.status, Status::Approved);
    let approves = attempts(&stores[4], &id, "approve").await;
    assert_eq!(approves.len(), 50);
    let applied: Vec<_> = approves.iter().filter(|(o, _)| o == "applied").collect();
    assert_eq!(applied.len(), 1, "{approves:?}");
    assert_eq!(Some(&applied[0].1), winner.responded_by.as_ref());
    assert_eq!(approves.iter().filter(|(o, _)| o == "refused").count(), 49);
    assert_eq!(
        approves[0].0, "applied",
        "the winner's row is written first"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_consumed_from_several_stores_runs_once() {
    let dir = tempfile::tempdir().unwrap();
    let stores = stores(&dir.path().join("approvals.db"), 4).await;
    let id = stores[0].file(&asking("call-1")).await.unwrap().request.id;
    let approve = decision(Verdict::Approve { edit: None }, "ops-lead");
    stores[1].decide(&id, &approve).await.unwrap();
    let start = Arc::new(Barrier::new(12));
    let mut tasks = Vec::new();
    for store in &stores {
        for _ in 0..3 {
            let (store, id, start) = (store.clone(), id.clone(), start.clone());
            tasks.push(tokio::spawn(async move {
                start.wait().await;
                store.consume(&id, "ops", &arguments()).await
            }));
        }
    }
    let mut results = Vec::new();
    for task in tasks {
        results.push(task.await.unwrap());
    }
    let winner = one_winner(results, |refusal, winner| {
        matches!(
            refusal,
            Refused::AlreadyConsumed { at, finished: false, .. } if Some(*at) == winner.consumed_at
        )
    });
    assert!(winner.consumed_at.is_some());
    assert_eq!(stores[3].get(&id).await.unwrap().unwrap(), winner);
    let consumes = attempts(&stores[2], &id, "consume").await;
    assert_eq!(consumes.len(), 12);
    assert_eq!(consumes.iter().filter(|(o, _)| o == "applied").count(), 1);
}

/// Regression: sqlx takes no migration lock on SQLite, so stores opening a fresh file at the
/// same time each applied the first migration and all but one failed with `table
/// confirmation_request already exists`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opening_a_fresh_file_from_several_stores_at_once_failed_with_table_already_exists() {
    for round in 0..20 {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("approvals.db");
        let start = Arc::new(Barrier::new(4));
        let mut opening = Vec::new();
        for _ in 0..4 {
            let (path, start) = (path.clone(), start.clone());
            opening.push(tokio::spawn(async move {
                start.wait().await;
                Store::open(&path).await
            }));
        }
        let mut opened = Vec::new();
        for task in opening {
            match task.await.unwrap() {
                Ok(store) => opened.push(store),
                Err(e) => panic!("round {round}: {e}"),
            }
        }
        // One schema, usable from every store.
        let id = opened[0].file(&asking("call-1")).await.unwrap().request.id;
        for store in &opened {
            assert_eq!(store.get(&id).await.unwrap().unwrap().id, id);
        }
    }
}

/// Regression: a store opening the file while another was creating the schema saw a
/// half-made schema (`_sqlx_migrations` without tollgate's tables) and took the file for
/// another program's database.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_opening_while_another_creates_the_schema_took_it_for_a_foreign_database() {
    for round in 0..30 {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("approvals.db");
        let opening: Vec<_> = (0..6u64)
            .map(|i| {
                let path = path.clone();
                tokio::spawn(async move {
                    tokio::time::sleep(std::time::Duration::from_micros(i * 700)).await;
                    Store::open(&path).await.map(drop)
                })
            })
            .collect();
        for task in opening {
            if let Err(e) = task.await.unwrap() {
                panic!("round {round}: {e}");
            }
        }
    }
}

/// Regression: `pending_after` read the pending rows, then the highest position, in two
/// statements; a request filed between them was counted as seen, so the channel hub never
/// announced it. Another process files requests while this one follows them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pending_after_skipped_a_request_filed_between_its_two_reads() {
    const FILED: usize = 300;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("approvals.db");
    let [filer, reader]: [Store; 2] = stores(&path, 2).await.try_into().unwrap();
    let filing = tokio::spawn(async move {
        let mut ids = Vec::with_capacity(FILED);
        for n in 0..FILED {
            ids.push(
                filer
                    .file(&asking(&format!("call-{n}")))
                    .await
                    .unwrap()
                    .request
                    .id,
            );
        }
        ids
    });
    let (mut position, mut seen) = (0, std::collections::BTreeSet::new());
    while !filing.is_finished() {
        let (requests, next) = reader.pending_after(position, 1_000).await.unwrap();
        seen.extend(requests.into_iter().map(|r| r.id));
        position = next;
    }
    let (requests, _) = reader.pending_after(position, 1_000).await.unwrap();
    seen.extend(requests.into_iter().map(|r| r.id));
    let filed = filing.await.unwrap();
    let missed: Vec<&String> = filed.iter().filter(|id| !seen.contains(*id)).collect();
    assert!(missed.is_empty(), "never seen: {missed:?}");
}
