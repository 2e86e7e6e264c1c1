//! Property test of the decision fold over random chains of answers and failures.

use proptest::prelude::*;
use serde_json::json;
use tollgate_core::{Dispatcher, HookError, HookOptions, RegistryBuilder, hook_fn};
use tollgate_protocol::{Decision, Event, FailureMode, Outcome, RunStatus};

use crate::support::pre_tool_use;

#[derive(Debug, Clone)]
enum Answer {
    Allow,
    Rewrite(i64),
    Ask,
    Deny,
    Fail(FailureMode),
}

fn answer() -> impl Strategy<Value = Answer> {
    prop_oneof![
        Just(Answer::Allow),
        any::<i64>().prop_map(Answer::Rewrite),
        Just(Answer::Ask),
        Just(Answer::Deny),
        Just(Answer::Fail(FailureMode::FailOpen)),
        Just(Answer::Fail(FailureMode::FailClosed)),
    ]
}

/// What the rules say the fold of `answers` is: (decision word, runs, final rewrite).
fn model(answers: &[Answer]) -> (&'static str, usize, Option<i64>) {
    let (mut asked, mut rewrite) = (false, None);
    for (i, answer) in answers.iter().enumerate() {
        match answer {
            Answer::Deny | Answer::Fail(FailureMode::FailClosed) => {
                return ("deny", i + 1, rewrite);
            }
            Answer::Ask => asked = true,
            Answer::Rewrite(n) => rewrite = Some(*n),
            Answer::Allow | Answer::Fail(FailureMode::FailOpen) => {}
        }
    }
    (if asked { "ask" } else { "allow" }, answers.len(), rewrite)
}

async fn dispatch(answers: Vec<Answer>) -> tollgate_core::DispatchOutcome {
    let mut hooks = RegistryBuilder::new();
    for (i, answer) in answers.into_iter().enumerate() {
        let mode = match answer {
            Answer::Fail(mode) => mode,
            _ => FailureMode::FailOpen,
        };
        let hook = hook_fn(format!("h{i}"), move |_| {
            let answer = answer.clone();
            async move {
                match answer {
                    Answer::Allow => Ok(Outcome::allow()),
                    Answer::Rewrite(n) => Ok(Outcome::allow().with_args(json!({"n": n}))),
                    Answer::Ask => Ok(Outcome::ask("ask")),
                    Answer::Deny => Ok(Outcome::deny("deny")),
                    Answer::Fail(_) => Err(HookError::msg("failed")),
                }
            }
        });
        hooks.register_with(
            Event::PreToolUse,
            hook,
            HookOptions::default().failure_mode(mode),
        );
    }
    Dispatcher::new(hooks.build().unwrap())
        .dispatch(pre_tool_use("t", json!({})))
        .await
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn fold_is_strictest_wins_with_deny_short_circuit(answers in prop::collection::vec(answer(), 0..12)) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
        let (word, runs, rewrite) = model(&answers);
        let outcome = runtime.block_on(dispatch(answers.clone()));
        prop_assert_eq!(outcome.decision.as_str(), word);
        prop_assert_eq!(outcome.runs.len(), runs);
        prop_assert_eq!(outcome.modified_args, rewrite.map(|n| json!({"n": n})));
        for (run, answer) in outcome.runs.iter().zip(&answers) {
            let failed = matches!(answer, Answer::Fail(_));
            prop_assert_eq!(run.status == RunStatus::Errored, failed);
            if failed {
                prop_assert!(run.decision != Some(Decision::Allow));
            }
        }
    }
}
