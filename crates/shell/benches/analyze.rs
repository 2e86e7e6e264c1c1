//! Criterion bench of the analyzer: the whole test corpus, and a few typical hook commands.

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use tollgate_shell::{Profile, analyze};

#[path = "corpus.rs"]
mod corpus;

fn analyze_corpus(c: &mut Criterion) {
    let commands = corpus::commands();
    let mut group = c.benchmark_group("analyze");
    group.throughput(Throughput::Elements(commands.len() as u64));
    group.bench_function("corpus", |b| {
        b.iter(|| {
            for command in &commands {
                std::hint::black_box(analyze(command, Profile::External));
            }
        })
    });
    group.finish();
    for (name, command) in [
        (
            "simple",
            "jq -r .tool_name <<<\"$HOOK_PAYLOAD\" | grep -q '^bash_' && echo '{}'",
        ),
        ("nested", "bash -c 'sh -c \"echo hi; ls -la | wc -l\"'"),
        ("blocked", "env A=1 nice timeout 5 rm -rf /"),
    ] {
        c.bench_function(&format!("analyze/{name}"), |b| {
            b.iter(|| analyze(std::hint::black_box(command), Profile::External))
        });
    }
}

criterion_group!(benches, analyze_corpus);
criterion_main!(benches);
