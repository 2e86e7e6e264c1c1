//! Inline interpreter code that hides what it runs or destroys what the shell rules protect:
//! code that decodes a string and runs it (`exec(base64.b64decode(…))`, `eval(pack("H*",
//! …))`, `eval(Buffer.from(…, "base64"))`) is `decode-to-shell`; recursive deletes of a
//! protected tree through the language's own library (`shutil.rmtree("/")`,
//! `FileUtils.rm_rf(Dir.home)`, `fs.rmSync("/", {recursive: true})`, `remove_tree("/etc")`)
//! are `destructive-delete`. Reported for every profile: the agent may run inline code, not
//! hidden or destructive code.

use crate::commands::deletes::refused_tree;
use crate::rules::RuleId;
use crate::walk::{Analyzer, Call};
use crate::word::Word;

/// Calls that run a string as code.
const RUNS: &[&str] = &[
    "exec(",
    "eval(",
    "eval ",
    "Function(",
    "instance_eval",
    "class_eval",
    "loadstring(",
    "create_function(",
    "runInThisContext",
    "runInNewContext",
    "system(",
    "popen(",
];

/// Calls that decode a string.
const DECODES: &[&str] = &[
    "b64decode",
    "b32decode",
    "a85decode",
    "base64_decode",
    "decode_base64",
    "decode64",
    "unpack1(",
    "unpack(\"m",
    "pack(\"H",
    "pack('H",
    "pack(\"m",
    "\"base64\")",
    "'base64')",
    "\"hex\")",
    "'hex')",
    "atob(",
    "fromhex(",
    "unhexlify(",
    "codecs.decode",
    "zlib.decompress",
    "gzinflate",
    "str_rot13",
    "marshal.loads",
    "pickle.loads",
    "[::-1]",
    "chr(",
    "fromCharCode",
];

/// Delete calls looked at per name in one piece of code.
const MAX_CALLS: usize = 32;

/// Library calls that delete a tree, by language.
const TREE_DELETES: &[&str] = &[
    "rmtree(",
    "remove_tree(",
    "rm_rf(",
    "rm_r(",
    "remove_dir_all(",
    "rmSync(",
    "rmdirSync(",
    "rimraf(",
    "RemoveAll(",
    "deleteRecursively(",
    "rm(",
];

pub(super) fn check(a: &mut Analyzer, base: &str, w: &[Word<'_>], call: &Call<'_>) {
    if !is_interpreter(base) {
        return;
    }
    for word in &w[1..] {
        let code = word.text.as_str();
        if code.len() < 6 || !code.contains('(') {
            continue;
        }
        if !a.budget.charge(code.len(), call.span.clone()) {
            return;
        }
        if RUNS.iter().any(|r| code.contains(r)) && DECODES.iter().any(|d| code.contains(d)) {
            a.report(
                RuleId::DecodeToShell,
                word.span.clone(),
                format!("`{base}` code decodes a string and runs it, so what it runs is hidden"),
            );
        }
        if let Some(why) = deleted_tree(a, code) {
            a.report(
                RuleId::DestructiveDelete,
                word.span.clone(),
                format!("`{base}` code deletes {why}"),
            );
        }
    }
}

fn is_interpreter(base: &str) -> bool {
    let versioned = |p: &str| {
        base.strip_prefix(p)
            .is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'))
    };
    ["python", "pypy", "perl", "ruby", "php", "lua", "node"]
        .iter()
        .any(|p| versioned(p))
        || matches!(
            base,
            "nodejs" | "bun" | "deno" | "luajit" | "jruby" | "osascript"
        )
}

/// The protected tree a library delete in `code` names with a string literal (or a home
/// expression: `Dir.home`, `os.homedir()`, `expanduser("~")`, `Path.home()`).
fn deleted_tree(a: &Analyzer, code: &str) -> Option<String> {
    for call in TREE_DELETES {
        let mut from = 0;
        // A bounded number of calls, each looked at over a bounded window: linear in `code`.
        for _ in 0..MAX_CALLS {
            let Some(k) = code[from..].find(call) else {
                break;
            };
            let args = &code[from + k + call.len()..];
            from += k + call.len();
            let Some(path) = first_path(args) else {
                continue;
            };
            // `rm(` alone is too common a name: only with a recursive flag.
            let window: String = args.chars().take(200).collect();
            if *call == "rm(" && !window.contains("recursive") {
                continue;
            }
            if let Some(why) = refused_tree(a, &path) {
                return Some(why);
            }
        }
    }
    None
}

/// The path the first argument names: a string literal, or a home expression.
fn first_path(args: &str) -> Option<String> {
    let head: String = args.chars().take(80).collect();
    let homes = [
        "Dir.home",
        "os.homedir()",
        "Path.home()",
        "ENV['HOME']",
        "ENV[\"HOME\"]",
        "os.environ['HOME']",
        "os.environ[\"HOME\"]",
        "$ENV{HOME}",
        "$ENV{'HOME'}",
        "getenv(\"HOME\")",
        "getenv('HOME')",
        "process.env.HOME",
    ];
    let trimmed = head.trim_start();
    if homes.iter().any(|h| trimmed.starts_with(h)) || trimmed.starts_with("expanduser(\"~\")") {
        return Some("~".to_owned());
    }
    let quote = trimmed.chars().next().filter(|c| matches!(c, '"' | '\''))?;
    let body = &trimmed[1..];
    let end = body.find(quote)?;
    Some(body[..end].to_owned())
}
