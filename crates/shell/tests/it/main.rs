//! tollgate-shell driven through its public API.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod benign;
mod bypass;
mod corpus;
mod deletes;
mod expansion_code;
mod headline;
mod hidden_arguments;
mod limits;
mod masquerade;
mod props;
mod red_team;
mod rules;
mod tools;
mod writes;

use tollgate_shell::{Analysis, Profile, Verdict, analyze};

/// The verdict for every profile: (trusted, external, agent).
fn verdicts(command: &str) -> (Verdict, Verdict, Verdict) {
    (
        analyze(command, Profile::Trusted).verdict,
        analyze(command, Profile::External).verdict,
        analyze(command, Profile::Agent).verdict,
    )
}

fn rule_ids(analysis: &Analysis) -> Vec<&'static str> {
    analysis.findings.iter().map(|f| f.rule).collect()
}

/// `command` gets `verdict` under every profile, with a finding of `rule` among others.
#[track_caller]
fn assert_rule(command: &str, rule: &str, verdict: Verdict) {
    for profile in Profile::ALL {
        let a = analyze(command, profile);
        assert_eq!(
            a.verdict, verdict,
            "{profile}: {command:?} → {:?}",
            a.findings
        );
        assert!(
            rule_ids(&a).contains(&rule),
            "{profile}: {command:?} → {:?}",
            a.findings
        );
    }
}

#[track_caller]
fn assert_blocked(command: &str) {
    for profile in Profile::ALL {
        let a = analyze(command, profile);
        assert_eq!(
            a.verdict,
            Verdict::Block,
            "{profile}: {command:?} → {:?}",
            a.findings
        );
        assert!(a.refused());
    }
}

#[track_caller]
fn assert_allowed(command: &str) {
    for profile in Profile::ALL {
        let a = analyze(command, profile);
        assert_eq!(
            a.verdict,
            Verdict::Allow,
            "{profile}: {command:?} → {:?}",
            a.findings
        );
    }
}
