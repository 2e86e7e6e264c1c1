//! Worst-case benchmark of the analyzer: hostile input classes up to the size limit, each
//! analysed for every profile. Prints one JSON line per class, then a summary line naming the
//! slowest:
//!
//! `{"class":…,"bytes":N,"verdict":…,"findings":N,"work":N,"ms_min":X,"ms_median":X,
//! "peak_heap_bytes":N,"peak_rss_kib":N}` and
//! `{"summary":true,"slowest":…,"ms":X,"peak_heap_bytes":N,"peak_rss_kib":N,"target_ms":50}`.
//!
//! `ms_*`: wall time of one `analyze` call (the slowest profile), over `ANALYZER_WORST_RUNS`
//! runs (default 5). `peak_heap_bytes`: the most Rust heap the call held at once, measured by
//! dhat. `peak_rss_kib`: growth of the resident set of a child process running the call once
//! (Linux only, else null); unlike dhat it includes tree-sitter's C allocations.
//!
//! Run with `cargo run --release -p tollgate-shell --example analyzer_worst` (add a class
//! name to run only the classes whose name contains it).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Instant;

use tollgate_shell::{MAX_COMMAND_BYTES, Profile, analyze};

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

#[path = "../benches/corpus.rs"]
mod corpus;

/// `unit` repeated to just under the size limit, after `head` and before `tail`.
fn fill(head: &str, unit: &str, tail: &str) -> String {
    let n = (MAX_COMMAND_BYTES - head.len() - tail.len()) / unit.len();
    format!("{head}{}{tail}", unit.repeat(n))
}

/// `open` n times, `middle`, `close` n times, within the size limit.
fn nest(open: &str, middle: &str, close: &str) -> String {
    let n = (MAX_COMMAND_BYTES - middle.len()) / (open.len() + close.len());
    format!("{}{middle}{}", open.repeat(n), close.repeat(n))
}

/// Deterministic pseudo-random bytes from `alphabet` (xorshift).
fn random(alphabet: &[u8], seed: u64) -> String {
    let mut x = seed;
    (0..MAX_COMMAND_BYTES)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            char::from(alphabet[(x % alphabet.len() as u64) as usize])
        })
        .collect()
}

fn realistic() -> String {
    let lines = corpus::commands();
    let mut out = String::new();
    for line in lines.iter().cycle() {
        if out.len() + line.len() + 1 > MAX_COMMAND_BYTES {
            break;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

fn sh_c_nested() -> String {
    let mut code = fill("", "ls -la; ", "");
    code.truncate(MAX_COMMAND_BYTES / 2);
    for _ in 0..9 {
        code = format!("sh -c '{}'", code.replace('\'', r"'\''"));
    }
    code.truncate(MAX_COMMAND_BYTES);
    code
}

/// An input class: name and generator.
type Class = (&'static str, Box<dyn Fn() -> String>);

/// Every input class.
fn classes() -> Vec<Class> {
    let glob_targets = || {
        let mut s = String::from("tee");
        let mut i = 0;
        while s.len() < MAX_COMMAND_BYTES - 20 {
            s.push_str(&format!(" ~/.*[ab]x{i}"));
            i += 1;
        }
        s
    };
    vec![
        ("realistic_script", Box::new(realistic)),
        ("long_pipeline", Box::new(|| fill("", "true|", "true"))),
        ("long_pipeline_spaced", Box::new(|| fill("", "ls | ", "ls"))),
        ("broken_pipeline", Box::new(|| fill("", "a|", ""))),
        (
            "pipeline_of_readers",
            Box::new(|| fill("echo x | ", "sh | ", "sh")),
        ),
        ("scanner_rescan_parens", Box::new(|| fill("", ")", ""))),
        ("scanner_rescan_functions", Box::new(|| fill("", "f()", ""))),
        (
            "error_recovery_subshells",
            Box::new(|| fill("", "(a) ", "")),
        ),
        ("open_braces", Box::new(|| fill("echo ", "{", ""))),
        ("many_words", Box::new(|| fill("echo ", "a ", ""))),
        ("many_statements", Box::new(|| fill("", "ls;", ""))),
        ("many_assignments", Box::new(|| fill("", "a=1;", ""))),
        ("left_nested_list", Box::new(|| fill("", "true && ", "ls"))),
        ("deep_subshells", Box::new(|| nest("(", "ls", ")"))),
        (
            "deep_substitutions",
            Box::new(|| nest("echo $(", "ls", ")")),
        ),
        (
            "deep_quoted_substitutions",
            Box::new(|| nest("\"$(echo ", "x", ")\"")),
        ),
        ("deep_expansions", Box::new(|| nest("${a:-", "x", "}"))),
        ("deep_arithmetic", Box::new(|| nest("$((1+(", "1", "))"))),
        ("deep_functions", Box::new(|| nest("f(){ ", "ls", "; }"))),
        (
            "deep_ifs",
            Box::new(|| nest("if true; then ", "ls", "; fi")),
        ),
        ("wrapper_chain_env", Box::new(|| fill("", "env ", "ls"))),
        ("wrapper_chain_xargs", Box::new(|| fill("", "xargs ", "ls"))),
        (
            "wrapper_chain_find",
            Box::new(|| fill("", "find . -exec ", "ls")),
        ),
        (
            "wrapper_chain_mixed",
            Box::new(|| fill("", "env A=1 nice timeout 5 sudo -u x ", "ls")),
        ),
        ("eval_chain", Box::new(|| fill("", "eval ", "ls"))),
        ("sh_c_nested", Box::new(sh_c_nested)),
        (
            "variable_doubling",
            Box::new(|| fill("X=aaaaaaaa; ", "X=$X$X; ", "echo $X")),
        ),
        (
            "variable_references",
            Box::new(|| fill(&format!("X={}; echo ", "a".repeat(4000)), "$X", "")),
        ),
        (
            "positional_expansion",
            Box::new(|| format!("sh -c '{}' _ {}", "$@ ".repeat(6000), "aaa ".repeat(11000))),
        ),
        (
            "brace_expansion",
            Box::new(|| fill("echo ", "{a,b}{c,d}{e,f}{g,h} ", "")),
        ),
        ("glob_targets", Box::new(glob_targets)),
        ("rm_targets", Box::new(|| fill("rm -rf ", "a ", ""))),
        ("redirections", Box::new(|| fill("echo ", ">a ", ""))),
        ("heredocs", Box::new(|| fill("", "cat <<E\n$(ls)\nE\n", ""))),
        (
            "heredoc_to_shell",
            Box::new(|| fill("bash <<E\n", "echo \"$HOME $(date)\"\n", "E\n")),
        ),
        (
            "expansion_operands",
            Box::new(|| fill("echo ", "${a:-$(ls)}", "")),
        ),
        (
            "line_continuations",
            Box::new(|| fill("", "echo a\\\n", "")),
        ),
        (
            "continuations_in_comments",
            Box::new(|| fill("a\\\n", "#b\\\n", "")),
        ),
        ("ifs_words", Box::new(|| fill("echo ", "${IFS}", ""))),
        ("fork_bombs", Box::new(|| fill("", "f(){ :|:& }; ", ""))),
        ("findings_flood", Box::new(|| fill("", "sudo x; ", ""))),
        (
            "function_calls",
            Box::new(|| fill("f(){ rm -rf \"$1\"; }; ", "f a$RANDOM; ", "")),
        ),
        (
            "arithmetic_values",
            Box::new(|| fill("x=y+1; echo ", "$((x)) ", "")),
        ),
        (
            "written_scripts",
            Box::new(|| fill("", "echo ls >> s; sh s; ", "")),
        ),
        (
            "split_arrays",
            Box::new(|| fill("a=(x y z); ", "rm -f \"${a[@]}\"; ", "")),
        ),
        (
            "random_shell_bytes",
            Box::new(|| random(b"ab |;&()<>{}$`'\"\\\n=*?[]#~!-/", 7)),
        ),
        (
            "random_printable",
            Box::new(|| random(&(b' '..=b'~').collect::<Vec<u8>>(), 11)),
        ),
        // Commands in tools' options, console input and inline code, each parsed as code.
        (
            "tool_option_commands",
            Box::new(|| fill("tar -cf a x", " --to-command=ls", "")),
        ),
        ("ex_command_bars", Box::new(|| fill("vim -c '", "a|", "'"))),
        (
            "ex_address_regexes",
            Box::new(|| fill("vim -c '", "/|", "'")),
        ),
        (
            "console_heredoc_lines",
            Box::new(|| fill("sqlite3 db <<'EOF'\n", ".shell ls\n", "EOF")),
        ),
        (
            "makefile_recipes",
            Box::new(|| fill("make -f - <<'EOF'\nall:\n", "\t@ls $(CC) $$x\n", "EOF")),
        ),
        (
            "make_variable_opens",
            Box::new(|| fill("make --eval 'x:;", "$(", "'")),
        ),
        (
            "inline_code_strings",
            Box::new(|| fill("python3 -c '", "os.system(\"ls\");", "'")),
        ),
        ("awk_redirections", Box::new(|| fill("awk '", ">", "'"))),
        (
            "launcher_chain",
            Box::new(|| fill("", "setarch x86_64 numactl -N 0 prlimit ", "ls")),
        ),
        (
            "env_command_variables",
            Box::new(|| fill("", "GIT_SSH_COMMAND='ssh -p 1' ", "git fetch")),
        ),
        (
            "network_pipeline",
            Box::new(|| fill("", "nc x 1 | sh | ", "sh")),
        ),
        (
            "printf_into_ed",
            Box::new(|| fill("printf '%s\\n'", " '!ls'", " | ed f")),
        ),
    ]
}

/// Resident set (KiB) of this process: current, then peak since the last reset.
fn rss_kib() -> Option<(u64, u64)> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse::<u64>().ok())
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}

/// In the child: run `class` once and print how much the resident set grew (KiB).
fn child_rss(class: &str) {
    let Some((_, make)) = classes().into_iter().find(|(name, _)| *name == class) else {
        return;
    };
    let input = make();
    // Reset the peak so that it measures the analysis only.
    let reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
    let before = rss_kib();
    for profile in Profile::ALL {
        std::hint::black_box(analyze(&input, profile));
    }
    if let (true, Some((rss, _)), Some((_, peak))) = (reset, before, rss_kib()) {
        println!("{}", peak.saturating_sub(rss));
    }
}

fn peak_rss_kib(class: &str) -> Option<u64> {
    let exe = std::env::current_exe().ok()?;
    let out = std::process::Command::new(exe)
        .args(["--rss", class])
        .output()
        .ok()?;
    String::from_utf8_lossy(&out.stdout).trim().parse().ok()
}

fn runs() -> usize {
    std::env::var("ANALYZER_WORST_RUNS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(5)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--rss") {
        return child_rss(args.get(1).map_or("", String::as_str));
    }
    let filter = args.first().cloned().unwrap_or_default();
    let mut slowest: Option<(String, f64, usize, Option<u64>)> = None;
    for (name, make) in classes() {
        if !name.contains(&filter) {
            continue;
        }
        let input = make();
        let mut times = Vec::new();
        let mut last = None;
        for _ in 0..runs() {
            let mut worst = 0.0f64;
            for profile in Profile::ALL {
                let start = Instant::now();
                let a = analyze(std::hint::black_box(&input), profile);
                worst = worst.max(start.elapsed().as_secs_f64() * 1000.0);
                last = Some(a);
            }
            times.push(worst);
        }
        times.sort_by(f64::total_cmp);
        let peak_heap = {
            let _profiler = dhat::Profiler::builder().testing().build();
            for profile in Profile::ALL {
                std::hint::black_box(analyze(&input, profile));
            }
            dhat::HeapStats::get().max_bytes
        };
        let rss = peak_rss_kib(name);
        let a = last.unwrap();
        println!(
            "{{\"class\":\"{name}\",\"bytes\":{},\"verdict\":\"{}\",\"findings\":{},\"work\":{},\"ms_min\":{:.2},\"ms_median\":{:.2},\"peak_heap_bytes\":{peak_heap},\"peak_rss_kib\":{}}}",
            input.len(),
            a.verdict,
            a.findings.len(),
            a.work,
            times[0],
            times[times.len() / 2],
            rss.map_or("null".to_owned(), |r| r.to_string()),
        );
        let median = times[times.len() / 2];
        if slowest.as_ref().is_none_or(|s| median > s.1) {
            slowest = Some((name.to_owned(), median, peak_heap, rss));
        }
    }
    if let Some((name, ms, heap, rss)) = slowest {
        println!(
            "{{\"summary\":true,\"slowest\":\"{name}\",\"ms\":{ms:.2},\"peak_heap_bytes\":{heap},\"peak_rss_kib\":{},\"target_ms\":50}}",
            rss.map_or("null".to_owned(), |r| r.to_string()),
        );
    }
}
