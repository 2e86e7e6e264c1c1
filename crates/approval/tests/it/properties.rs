//! Random interleavings of attempts on a few requests (decide, expire, cancel, consume,
//! finish, the clock moving), checked against the database rows and audit histories after
//! every step: what the store answers, what the row becomes, and the invariants that must hold
//! whatever the order.

use std::sync::Arc;

use proptest::prelude::*;
use serde_json::{Value, json};
use tollgate_approval::{
    AuditEvent, Decision, ManualClock, NewRequest, Refused, Request, Status, Store, Verdict,
    args_hash,
};

/// One request per timeout, in seconds.
const TIMEOUTS: [u64; 3] = [10, 30, 60];
/// The actions that take a request out of `pending`.
const LEAVING: [&str; 4] = ["approve", "reject", "expire", "cancel"];

#[derive(Debug, Clone)]
enum Op {
    Approve {
        target: usize,
        allowed: bool,
        edit: bool,
    },
    Reject {
        target: usize,
        allowed: bool,
    },
    Expire {
        target: usize,
    },
    Cancel {
        target: usize,
    },
    Consume {
        target: usize,
        right: bool,
    },
    Finish {
        target: usize,
    },
    Advance {
        ms: i64,
    },
}

/// A filed request, or now and then one that does not exist.
fn target() -> impl Strategy<Value = usize> {
    prop_oneof![12 => 0..TIMEOUTS.len(), 1 => Just(TIMEOUTS.len())]
}

fn op() -> impl Strategy<Value = Op> {
    // Mostly allowed deciders and honest arguments, so that runs reach consume and finish.
    let mostly = || prop::bool::weighted(0.8);
    prop_oneof![
        4 => (target(), mostly(), any::<bool>())
            .prop_map(|(target, allowed, edit)| Op::Approve { target, allowed, edit }),
        1 => (target(), mostly()).prop_map(|(target, allowed)| Op::Reject { target, allowed }),
        1 => target().prop_map(|target| Op::Expire { target }),
        1 => target().prop_map(|target| Op::Cancel { target }),
        3 => (target(), mostly()).prop_map(|(target, right)| Op::Consume { target, right }),
        2 => target().prop_map(|target| Op::Finish { target }),
        2 => (0..=20_000_i64).prop_map(|ms| Op::Advance { ms }),
    ]
}

impl Op {
    fn target(&self) -> Option<usize> {
        match *self {
            Self::Approve { target, .. }
            | Self::Reject { target, .. }
            | Self::Expire { target }
            | Self::Cancel { target }
            | Self::Consume { target, .. }
            | Self::Finish { target } => Some(target),
            Self::Advance { .. } => None,
        }
    }

    /// The audit's action and actor for this attempt.
    fn action_and_actor(&self) -> (&'static str, &'static str) {
        match *self {
            Self::Approve { allowed, .. } => ("approve", decider(allowed)),
            Self::Reject { allowed, .. } => ("reject", decider(allowed)),
            Self::Expire { .. } => ("expire", "timeout"),
            Self::Cancel { .. } => ("cancel", "run"),
            Self::Consume { .. } => ("consume", "ops"),
            Self::Finish { .. } => ("finish", "ops"),
            Self::Advance { .. } => unreachable!("advancing the clock is no attempt"),
        }
    }
}

fn decider(allowed: bool) -> &'static str {
    if allowed { "dba" } else { "mallory" }
}

fn asked() -> Value {
    json!({"sql": "DELETE FROM users"})
}

fn edited() -> Value {
    json!({"sql": "DELETE FROM users WHERE id = 7"})
}

fn tampered() -> Value {
    json!({"sql": "DROP TABLE users"})
}

const REJECT_NOTE: &str = "use the staging DB";
const CANCEL_REASON: &str = "the run was cancelled";

/// Runs `op` on `id`; `to_run` is what an honest runtime would consume with.
async fn run(store: &Store, op: &Op, id: &str, to_run: &Value) -> Result<Request, Refused> {
    let (_, by) = op.action_and_actor();
    let decision = |verdict, note: Option<&str>| Decision {
        verdict,
        by: by.into(),
        channel: "cli".into(),
        note: note.map(str::to_owned),
    };
    match *op {
        Op::Approve { edit, .. } => {
            let edit = edit.then(edited);
            store
                .decide(id, &decision(Verdict::Approve { edit }, None))
                .await
        }
        Op::Reject { .. } => {
            store
                .decide(id, &decision(Verdict::Reject, Some(REJECT_NOTE)))
                .await
        }
        Op::Expire { .. } => store.expire(id).await,
        Op::Cancel { .. } => store.cancel(id, by, CANCEL_REASON).await,
        Op::Consume { right, .. } => {
            let arguments = if right { to_run.clone() } else { tampered() };
            store.consume(id, by, &arguments).await
        }
        Op::Finish { .. } => store.finish(id, by).await,
        Op::Advance { .. } => unreachable!("advancing the clock is no attempt"),
    }
}

/// The answer's name; a database error is never an acceptable answer.
fn answer(result: &Result<Request, Refused>) -> &'static str {
    match result {
        Ok(_) => "applied",
        Err(Refused::NotFound { .. }) => "not_found",
        Err(Refused::NotAllowed { .. }) => "not_allowed",
        Err(Refused::AlreadyDecided { .. }) => "already_decided",
        Err(Refused::NotOverdue { .. }) => "not_overdue",
        Err(Refused::NotApproved { .. }) => "not_approved",
        Err(Refused::AlreadyConsumed { .. }) => "already_consumed",
        Err(Refused::ArgumentsChanged { .. }) => "arguments_changed",
        Err(Refused::NotRunning { .. }) => "not_running",
        Err(e) => panic!("the store failed: {e}"),
    }
}

/// The state machine's answer to `op` on `row` (after any automatic expiry) at `now`.
fn expected_answer(op: &Op, row: &Request, now: i64) -> &'static str {
    let decided = row.status.is_terminal();
    match *op {
        Op::Approve { allowed, .. } | Op::Reject { allowed, .. } if !decided && !allowed => {
            "not_allowed"
        }
        Op::Approve { .. } | Op::Reject { .. } | Op::Cancel { .. } | Op::Expire { .. }
            if decided =>
        {
            "already_decided"
        }
        Op::Expire { .. } if now < row.expires_at => "not_overdue",
        Op::Consume { .. } if row.status != Status::Approved => "not_approved",
        Op::Consume { .. } if row.consumed_at.is_some() => "already_consumed",
        Op::Consume { right: false, .. } => "arguments_changed",
        Op::Finish { .. } if row.consumed_at.is_none() || row.finished_at.is_some() => {
            "not_running"
        }
        _ => "applied",
    }
}

/// `row` moved out of `pending` to `to` by `by` at `now`.
fn left(row: &Request, to: Status, by: &str, now: i64) -> Request {
    Request {
        status: to,
        responded_at: Some(now),
        responded_by: Some(by.into()),
        ..row.clone()
    }
}

/// The row after `op` was applied to `row` at `now`.
fn applied(op: &Op, row: &Request, now: i64) -> Request {
    let (_, by) = op.action_and_actor();
    match *op {
        Op::Approve { edit, .. } => Request {
            channel: Some("cli".into()),
            edited_arguments: edit.then(edited),
            edited_args_hash: edit.then(|| args_hash(&edited())),
            ..left(row, Status::Approved, by, now)
        },
        Op::Reject { .. } => Request {
            channel: Some("cli".into()),
            response_note: Some(REJECT_NOTE.into()),
            ..left(row, Status::Rejected, by, now)
        },
        Op::Expire { .. } => left(row, Status::Expired, by, now),
        Op::Cancel { .. } => Request {
            response_note: Some(CANCEL_REASON.into()),
            ..left(row, Status::Cancelled, by, now)
        },
        Op::Consume { .. } => Request {
            consumed_at: Some(now),
            ..row.clone()
        },
        Op::Finish { .. } => Request {
            finished_at: Some(now),
            ..row.clone()
        },
        Op::Advance { .. } => unreachable!("advancing the clock is no attempt"),
    }
}

/// The store, its requests and what the test expects of them.
struct World {
    store: Store,
    clock: Arc<ManualClock>,
    ids: Vec<String>,
    /// Each request as the last step left it (checked against the database).
    rows: Vec<Request>,
    /// Audit rows each request must have: its `create`, one per attempt, one per automatic
    /// expiry.
    audit_rows: Vec<usize>,
}

impl World {
    async fn new(dir: &tempfile::TempDir) -> Self {
        let clock = Arc::new(ManualClock::at(1_800_000_000_000));
        let store = Store::open_with_clock(&dir.path().join("approvals.db"), clock.clone())
            .await
            .unwrap();
        let mut rows = Vec::new();
        for (n, timeout_seconds) in TIMEOUTS.into_iter().enumerate() {
            let new = NewRequest {
                run_id: "run-1".into(),
                session_id: "session-1".into(),
                scope: "t1:pre_tool_use".into(),
                agent: "ops".into(),
                tool_name: "sql_execute".into(),
                tool_call_id: format!("call-{n}"),
                arguments: asked(),
                reasons: vec!["calls of `sql_execute` need confirmation".into()],
                asked_by: "permission_gate".into(),
                approvers: vec!["ops-lead".into(), "dba".into()],
                timeout_seconds,
            };
            rows.push(store.file(&new).await.unwrap().request);
        }
        Self {
            ids: rows.iter().map(|r| r.id.clone()).collect(),
            audit_rows: vec![1; rows.len()],
            store,
            clock,
            rows,
        }
    }

    async fn step(&mut self, op: &Op) {
        match op.target() {
            None => {
                if let Op::Advance { ms } = *op {
                    self.clock.advance(ms);
                }
            }
            Some(target) if target >= self.ids.len() => {
                let result = run(&self.store, op, "cr_missing", &asked()).await;
                assert_eq!(answer(&result), "not_found");
            }
            Some(target) => self.attempt(op, target).await,
        }
        self.check_all().await;
    }

    /// Runs `op` on request `target` and checks the answer, the row and the new audit rows
    /// against the state machine.
    async fn attempt(&mut self, op: &Op, target: usize) {
        let before = &self.rows[target];
        let now = self.store.now_ms();
        let overdue = before.status == Status::Pending && now >= before.expires_at;
        let auto_expired = overdue && !matches!(op, Op::Expire { .. });
        let seen = if auto_expired {
            left(before, Status::Expired, "timeout", now)
        } else {
            before.clone()
        };
        let want = expected_answer(op, &seen, now);
        let id = &self.ids[target];
        let result = run(&self.store, op, id, seen.arguments_to_run()).await;
        assert_eq!(answer(&result), want, "{op:?} on {seen:?}");
        let after = self.store.get(id).await.unwrap().unwrap();
        // A refused attempt changes nothing beyond the automatic expiry.
        let model = match want {
            "applied" => applied(op, &seen, now),
            _ => seen.clone(),
        };
        assert_eq!(after, model, "{op:?}");
        if let Ok(returned) = &result {
            assert_eq!(returned, &after);
        }
        self.audit_rows[target] += 1 + usize::from(auto_expired);
        let history = self.store.history(id).await.unwrap();
        let fresh = &history[history.len() - 1 - usize::from(auto_expired)..];
        if auto_expired {
            assert_eq!(
                summary(&fresh[0]),
                ("expire", "applied", "timeout", "pending", "expired", now)
            );
        }
        let (action, actor) = op.action_and_actor();
        let outcome = if result.is_ok() { "applied" } else { "refused" };
        assert_eq!(
            summary(fresh.last().unwrap()),
            (
                action,
                outcome,
                actor,
                seen.status.as_str(),
                after.status.as_str(),
                now
            )
        );
    }

    /// Every request against the last step's copy and its own history.
    async fn check_all(&mut self) {
        for (n, id) in self.ids.iter().enumerate() {
            let row = self.store.get(id).await.unwrap().unwrap();
            let history = self.store.history(id).await.unwrap();
            invariants(&self.rows[n], &row, &history, self.audit_rows[n]);
            self.rows[n] = row;
        }
    }
}

fn summary(event: &AuditEvent) -> (&str, &str, &str, &str, &str, i64) {
    (
        &event.action,
        &event.outcome,
        &event.actor,
        &event.from_status,
        &event.to_status,
        event.at,
    )
}

/// What holds for any request whatever happened: `prev` is the row one step earlier.
fn invariants(prev: &Request, row: &Request, history: &[AuditEvent], audit_rows: usize) {
    // A terminal status, a consumption and a finish never change once set.
    if prev.status.is_terminal() {
        assert_eq!(row.status, prev.status);
    }
    if prev.consumed_at.is_some() {
        assert_eq!(row.consumed_at, prev.consumed_at);
    }
    if prev.finished_at.is_some() {
        assert_eq!(row.finished_at, prev.finished_at);
    }
    assert!(row.consumed_at.is_none() || row.status == Status::Approved);
    assert!(row.finished_at.is_none() || row.consumed_at.is_some());
    assert_eq!(
        row.responded_by.as_deref() == Some("timeout"),
        row.status == Status::Expired,
        "{row:?}"
    );
    assert_eq!(row.responded_at.is_some(), row.status.is_terminal());
    // At most one transition out of pending, and it is the one the row shows.
    let leaves: Vec<&AuditEvent> = applied_rows(history, &LEAVING);
    assert_eq!(leaves.len(), usize::from(row.status.is_terminal()));
    if let Some(leave) = leaves.first() {
        assert_eq!(leave.to_status, row.status.as_str());
    }
    // Consumed at most once, finished only after that.
    let consumes = applied_rows(history, &["consume"]);
    let finishes = applied_rows(history, &["finish"]);
    assert_eq!(consumes.len(), usize::from(row.consumed_at.is_some()));
    assert_eq!(finishes.len(), usize::from(row.finished_at.is_some()));
    if let (Some(consume), Some(finish)) = (consumes.first(), finishes.first()) {
        assert!(consume.id < finish.id);
    }
    // Every attempt is on record; a refusal records no change.
    assert_eq!(history.len(), audit_rows, "{history:#?}");
    for event in history.iter().filter(|e| e.outcome == "refused") {
        assert_eq!(event.from_status, event.to_status);
    }
}

fn applied_rows<'a>(history: &'a [AuditEvent], actions: &[&str]) -> Vec<&'a AuditEvent> {
    history
        .iter()
        .filter(|e| e.outcome == "applied" && actions.contains(&e.action.as_str()))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn any_interleaving_keeps_the_state_machine_and_the_audit(
        ops in prop::collection::vec(op(), 1..=30)
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let dir = tempfile::tempdir().unwrap();
            let mut world = World::new(&dir).await;
            for op in &ops {
                world.step(op).await;
            }
        });
    }
}
