//! `tollgate_shell::analyze` on arbitrary text, for every profile: it must not panic, crash,
//! hang or balloon, and its answer must be consistent (the verdict is the strictest finding's,
//! spans are in bounds, findings stay within the limit). The same text also goes through
//! `rewrite_arguments`, which parses it too.

#![no_main]

use libfuzzer_sys::fuzz_target;
use tollgate_shell::limits::MAX_FINDINGS;
use tollgate_shell::{Profile, Verdict, analyze, rewrite_arguments};

fuzz_target!(|data: &[u8]| {
    let Ok(command) = std::str::from_utf8(data) else {
        return;
    };
    for profile in Profile::ALL {
        let a = analyze(command, profile);
        let strictest = a.findings.iter().map(|f| f.verdict).max();
        assert_eq!(a.verdict, strictest.unwrap_or(Verdict::Allow));
        assert!(a.findings.len() <= MAX_FINDINGS + 1, "{} findings", a.findings.len());
        for f in &a.findings {
            assert!(command.get(f.span.clone()).is_some(), "{f:?}");
        }
        if a.findings.iter().any(|f| f.rule == "analysis-limit") {
            assert_eq!(a.verdict, Verdict::Block);
        }
    }
    std::hint::black_box(rewrite_arguments(command, "HOOK_PAYLOAD"));
});
