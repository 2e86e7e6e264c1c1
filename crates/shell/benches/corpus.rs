//! The test corpus (`tests/corpus.txt`) as a list of commands, shared by the benches.

/// Every command of the corpus, without its expected verdict.
pub fn commands() -> Vec<&'static str> {
    include_str!("../tests/corpus.txt")
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .filter_map(|l| l.split_once(' ').map(|(_, c)| c.trim_start()))
        .collect()
}
