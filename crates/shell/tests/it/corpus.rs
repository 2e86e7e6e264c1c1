//! The verdict corpus (`tests/corpus.txt`): expectations per line, and an insta snapshot of
//! the whole verdict table.

use std::fmt::Write as _;

use tollgate_shell::{Profile, Verdict, analyze};

use super::{rule_ids, verdicts};

const CORPUS: &str = include_str!("../corpus.txt");

fn entries() -> impl Iterator<Item = (usize, &'static str, &'static str)> {
    CORPUS.lines().enumerate().filter_map(|(i, line)| {
        if line.trim().is_empty() || line.starts_with('#') {
            return None;
        }
        let (expect, command) = line.split_once(' ')?;
        Some((i + 1, expect, command.trim_start()))
    })
}

#[test]
fn every_corpus_line_gets_its_expected_verdict_for_every_profile() {
    use Verdict::{Allow, Block, Escalate};
    let mut failures = Vec::new();
    for (line, expect, command) in entries() {
        let want = match expect {
            "allow" => (Allow, Allow, Allow),
            "escalate" => (Escalate, Escalate, Escalate),
            "block" => (Block, Block, Block),
            "inline" => (Block, Block, Allow),
            "detach" => (Block, Block, Escalate),
            "ask" => (Block, Block, Escalate),
            "hooks" => (Block, Block, Allow),
            other => panic!("corpus line {line}: unknown expectation `{other}`"),
        };
        let got = verdicts(command);
        if got != want {
            let findings = rule_ids(&analyze(command, Profile::External));
            failures.push(format!(
                "line {line}: {command:?}: want {want:?}, got {got:?} {findings:?}"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn corpus_verdict_table() {
    let mut table = String::new();
    for (_, _, command) in entries() {
        let (t, e, a) = verdicts(command);
        let external = analyze(command, Profile::External);
        let rules = rule_ids(&external).join(",");
        writeln!(
            table,
            "{:<8} {:<8} {:<8} {:<40} {command}",
            t.as_str(),
            e.as_str(),
            a.as_str(),
            if rules.is_empty() { "-" } else { &rules },
        )
        .unwrap();
    }
    insta::assert_snapshot!(table);
}
