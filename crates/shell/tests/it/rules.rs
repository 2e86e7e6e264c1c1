//! The rule table's own examples.

use tollgate_shell::{Profile, Severity, analyze, rules};

#[test]
fn every_rule_matches_its_examples_and_none_of_its_counter_examples() {
    let mut failures = Vec::new();
    for rule in rules() {
        assert!(!rule.matches.is_empty(), "{} has no examples", rule.id);
        for example in rule.matches {
            let a = analyze(example, Profile::External);
            if !a.findings.iter().any(|f| f.rule == rule.id) {
                failures.push(format!(
                    "{}: must match {example:?}, got {:?}",
                    rule.id, a.findings
                ));
            }
        }
        for example in rule.non_matches {
            let a = analyze(example, Profile::External);
            if a.findings.iter().any(|f| f.rule == rule.id) {
                failures.push(format!(
                    "{}: must not match {example:?}, got {:?}",
                    rule.id, a.findings
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn rule_ids_are_unique_and_kebab_case() {
    let mut ids: Vec<&str> = rules().iter().map(|r| r.id).collect();
    for id in &ids {
        assert!(
            id.chars().all(|c| c.is_ascii_lowercase() || c == '-'),
            "{id}"
        );
    }
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), rules().len());
}

#[test]
fn inline_code_is_reported_for_hooks_only() {
    let rule = rules().iter().find(|r| r.id == "inline-code").unwrap();
    assert_eq!(rule.severity, Severity::BlockForHooks);
    for example in rule.matches {
        assert!(
            analyze(example, Profile::Agent)
                .findings
                .iter()
                .all(|f| f.rule != "inline-code")
        );
        assert!(
            analyze(example, Profile::Trusted)
                .findings
                .iter()
                .any(|f| f.rule == "inline-code")
        );
    }
}
