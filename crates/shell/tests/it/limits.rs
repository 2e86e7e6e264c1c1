//! The analyzer's bounds: hostile inputs that used to crash, hang or balloon it, each pinned
//! by a regression test, and the whole set run on a thread with a small stack.
//!
//! Time is not asserted (tests do not time); `Analysis::work` and the findings are.

use tollgate_shell::limits::{
    MAX_COMMAND_BYTES, MAX_EXPANSION_BYTES, MAX_FINDINGS, MAX_NESTING, MAX_PIPES, MAX_WORK,
    MAX_WRAPPERS,
};
use tollgate_shell::{Analysis, Profile, Verdict, analyze};

/// `unit` repeated to just under `bytes`, after `head` and before `tail`.
fn fill(head: &str, unit: &str, tail: &str, bytes: usize) -> String {
    let n = (bytes - head.len() - tail.len()) / unit.len();
    format!("{head}{}{tail}", unit.repeat(n))
}

#[track_caller]
fn assert_limited(a: &Analysis) {
    assert_eq!(a.verdict, Verdict::Block, "{:?}", a.findings);
    assert!(
        a.findings.iter().any(|f| f.rule == "analysis-limit"),
        "{:?}",
        a.findings
    );
}

/// The work counter's ceiling: the budget plus the one step that overran it.
fn work_ceiling() -> u64 {
    (MAX_WORK as usize + MAX_EXPANSION_BYTES + 2 * MAX_COMMAND_BYTES) as u64
}

/// Inputs that exceed a bound, with no deep recursion left to overflow the stack.
fn hostile() -> Vec<String> {
    let size = MAX_COMMAND_BYTES / 4;
    let mut sh_c = "env ".repeat(8) + "rm {1..1}{1..1}{1..1}{1..1}{1..1}{1..1}{1..1}{1..1} -rf /";
    for _ in 0..=MAX_NESTING {
        sh_c = format!("nice env xargs sh -c '{}'", sh_c.replace('\'', r"'\''"));
    }
    vec![
        fill("", "env ", "ls", size),
        fill("", "xargs ", "ls", size),
        fill("", "find . -exec ", "ls", size),
        fill("", "sudo -u x nice timeout 5 ", "ls", size),
        fill("", "eval ", "ls", size),
        format!("{}ls{}", "(".repeat(size / 2), ")".repeat(size / 2)),
        format!("echo {}ls{}", "$(".repeat(size / 3), ")".repeat(size / 3)),
        format!("{}x{}", "${a:-".repeat(size / 6), "}".repeat(size / 6)),
        format!("{}ls{}", "f(){ ".repeat(size / 8), "; }".repeat(size / 8)),
        format!(
            "{}ls{}",
            "if true; then ".repeat(size / 18),
            "; fi".repeat(size / 18)
        ),
        fill("", "true && ", "ls", size),
        fill("", "a|", "", size),
        sh_c,
    ]
}

#[test]
fn hostile_inputs_run_on_a_thread_with_a_small_stack() {
    // A tokio worker has 2 MiB; this thread has 256 KiB (debug builds use several times the
    // stack of release builds). A recursion that follows the input would overflow it.
    let analyses = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(|| {
            hostile()
                .iter()
                .map(|input| analyze(input, Profile::External))
                .collect::<Vec<_>>()
        })
        .unwrap()
        .join()
        .unwrap();
    for a in &analyses {
        assert_limited(a);
        assert!(a.findings.len() <= MAX_FINDINGS + 1);
        assert!(a.work <= work_ceiling());
    }
}

#[test]
fn regression_wrapper_chains_no_longer_overflow_the_stack() {
    // `env env env … ls` (32 KB) recursed once per wrapper and aborted the process.
    let chain = fill("", "env ", "ls", 32 * 1024);
    assert_limited(&analyze(&chain, Profile::Agent));
    let at_limit = format!("{}rm -rf /", "env ".repeat(MAX_WRAPPERS));
    let a = analyze(&at_limit, Profile::Agent);
    assert!(a.findings.iter().any(|f| f.rule == "destructive-delete"));
    assert!(a.findings.iter().all(|f| f.rule != "analysis-limit"));
    let past = format!("env {at_limit}");
    assert_limited(&analyze(&past, Profile::Agent));
}

#[test]
fn regression_xargs_and_find_chains_copy_words_at_most_max_wrappers_times() {
    for unit in ["xargs ", "find . -exec ", "parallel "] {
        let chain = fill("", unit, "ls", MAX_COMMAND_BYTES);
        let a = analyze(&chain, Profile::External);
        assert_limited(&a);
        assert!(a.work <= work_ceiling(), "{unit}: {}", a.work);
    }
}

#[test]
fn regression_variable_doubling_no_longer_balloons() {
    // `X=$X$X` doubled the value with every assignment: 2^60 bytes.
    let doubling = format!("X=aaaaaaaa; {}echo $X", "X=$X$X; ".repeat(60));
    let a = analyze(&doubling, Profile::External);
    assert_limited(&a);
    assert!(a.findings.iter().any(|f| f.message.contains("expand")));
    // Ordinary use of variables stays analysed.
    let a = analyze("X=/; Y=$X; rm -rf \"$Y\"", Profile::External);
    assert!(a.findings.iter().any(|f| f.rule == "destructive-delete"));
}

#[test]
fn regression_positional_parameters_no_longer_balloon() {
    // Every `$@` copied all the arguments of `sh -c CODE NAME ARG…`.
    let code = "$@ ".repeat(6000);
    let command = format!("sh -c '{code}' _ {}", "aaa ".repeat(8000));
    assert_limited(&analyze(&command, Profile::External));
}

#[test]
fn regression_findings_are_capped() {
    // One finding per `sudo` made the answer as large as the input.
    // 512 of them: small enough to parse within the budget, many more than MAX_FINDINGS.
    let flood = fill("", "sudo x; ", "", 4096);
    let a = analyze(&flood, Profile::External);
    assert_limited(&a);
    assert_eq!(a.findings.len(), MAX_FINDINGS + 1);
    let few = "sudo a; sudo b";
    assert_eq!(analyze(few, Profile::External).findings.len(), 2);
}

#[test]
fn regression_long_pipelines_are_not_parsed() {
    // tree-sitter-bash needs seconds for `a|a|…|` (quadratic in the stages), and hundreds of
    // milliseconds for a valid 13,000-stage pipeline.
    let broken = fill("", "a|", "", MAX_COMMAND_BYTES);
    let valid = format!("{}rm -rf /", "true | ".repeat(MAX_PIPES + 10));
    for text in [broken, valid] {
        let a = analyze(&text, Profile::Agent);
        assert_limited(&a);
        assert!(a.findings[0].message.contains(&MAX_PIPES.to_string()));
    }
    // Up to the limit a pipeline is parsed and analysed.
    let long = format!("{}rm -rf /", "true | ".repeat(MAX_PIPES - 1));
    let a = analyze(&long, Profile::Agent);
    assert!(a.findings.iter().any(|f| f.rule == "destructive-delete"));
}

#[test]
fn regression_scanner_rescans_are_cut_by_the_parse_budget() {
    // The scanner re-read the rest of the text for every `)`: seconds per 64 KB.
    for unit in [")", "f()", "||", ">", "(a) "] {
        let text = fill("", unit, "", MAX_COMMAND_BYTES);
        assert_eq!(
            analyze(&text, Profile::Agent).verdict,
            Verdict::Block,
            "{unit}"
        );
    }
}

#[test]
fn regression_pipelines_of_readers_scan_each_stage_once() {
    // Every reader rescanned all the stages before it (the agent profile does not report
    // interpreters reading a pipe, so nothing stops the walk early).
    let readers = format!("echo x{}", " | python3".repeat(MAX_PIPES));
    let a = analyze(&readers, Profile::Agent);
    assert!(a.findings.is_empty(), "{:?}", a.findings);
    assert!(a.work < 50 * readers.len() as u64, "{}", a.work);
    let decoded = format!(
        "echo x | base64 -d |{} sh",
        " tee f |".repeat(MAX_PIPES - 2)
    );
    let a = analyze(&decoded, Profile::Agent);
    assert!(a.findings.iter().any(|f| f.rule == "decode-to-shell"));
}

#[test]
fn regression_nested_functions_are_scanned_for_fork_bombs_once() {
    // Every function rescanned its whole body, nested functions included.
    let nested = format!("{}:|:&{}", "f(){ ".repeat(150), "; }".repeat(150));
    let a = analyze(&nested, Profile::Agent);
    assert!(a.work < 50 * nested.len() as u64, "{}", a.work);
    for spelled in [
        ": ( ) { :|:& };:",
        "function f { f | f & }; f",
        "f ()\n{ f|f& }",
    ] {
        assert!(
            analyze(spelled, Profile::Agent)
                .findings
                .iter()
                .any(|f| f.rule == "fork-bomb"),
            "{spelled}"
        );
    }
    let bomb = format!("{}:(){{ :|:& }};:{}", "g(){ ".repeat(20), "; }".repeat(20));
    assert!(
        analyze(&bomb, Profile::Agent)
            .findings
            .iter()
            .any(|f| f.rule == "fork-bomb")
    );
}

#[test]
fn regression_line_continuations_are_joined_a_bounded_number_of_times() {
    // Every join could un-comment the next line's continuation: one re-parse per line.
    let chain = format!("a\\\n#b{}", "\\\n#b".repeat(2000));
    assert_eq!(analyze(&chain, Profile::Agent).verdict, Verdict::Block);
    assert_eq!(
        analyze("docker run \\\n  --rm \\\n  img", Profile::Agent).verdict,
        Verdict::Allow
    );
}

#[test]
fn long_messages_are_cut() {
    let target = format!("/tmp/{}", "x".repeat(4000));
    let a = analyze(&format!("echo > ~/.ssh/{target}"), Profile::Agent);
    assert!(a.findings.iter().all(|f| f.message.len() <= 1024));
}

#[test]
fn regression_sed_programs_ending_in_a_backslash_crashed_the_analyzer() {
    // Inputs of the `analyze` fuzz target.
    for command in [
        "sed -n -eys-_u-Kr=\u{0}\\\\6\u{7}nnF\\\\",
        "sed -n -eys-_u-Kr=%\\\\\\\\\\\\&\\\\\\\\\\KK--ssh vc\u{0}\u{0}ct",
        "sed -i 's/a/b\\' f",
    ] {
        for profile in tollgate_shell::Profile::ALL {
            let _ = tollgate_shell::analyze(command, profile);
        }
    }
}
