//! More programs that run a command, load code or run inline code given in an option or an
//! operand (the escapes public collections of such tricks list): `split --filter`,
//! `aria2c --on-download-*`, `openvpn --up`, `tcpdump -z`, `wget --use-askpass`, `scrot -e`,
//! `nano -s`, `gcc -wrapper`, `ssh-keygen -D`, `openssl -engine FILE`, `busctl
//! --address=unixexec:`, `csvtool call`, `xdotool exec`, TeX `--shell-escape`, `rpm --eval
//! '%(…)'`, `tshark -X lua_script:`, `nmap --script FILE`, `run-parts --regex`, `service
//! ../PATH`, `!COMMAND` in the commands of `smbclient|lftp|ftp|sftp -c`, and interpreters
//! whose `-e`/`--eval` is inline code (`julia`, `ghc`, `octave`, `rake`, `puppet apply`, …).
//!
//! A literal command is checked as shell code; a command that does not name an expected
//! program is `option-exec`; inline code of another language is `inline-code`.

use super::opts::{self, Arg, Spec, Val};
use super::{option_exec, run_option};
use crate::rules::RuleId;
use crate::walk::{Analyzer, Call, Cx};
use crate::word::Word;

/// How one option's value is used.
#[derive(Clone, Copy)]
enum Use {
    /// A shell command (checked as code).
    Command,
    /// Code of the program's own language, or a file of it (`nmap --script`, `-engine`).
    Loads,
    /// Inline code of the program's language.
    Inline,
}

/// The options of `base` that run something, with the spec to read them.
fn options(base: &str) -> Option<(Spec, &'static [(&'static str, Use)])> {
    const fn spec(short: &'static str, long: &'static [(&'static str, bool)]) -> Spec {
        Spec { short, long }
    }
    Some(match base {
        "split" | "gsplit" => (
            spec("abCdlnt", &[("filter", true)]),
            &[("filter", Use::Command)],
        ),
        "aria2c" => (
            spec(
                "d",
                &[
                    ("on-download-complete", true),
                    ("on-download-error", true),
                    ("on-download-pause", true),
                    ("on-download-start", true),
                    ("on-download-stop", true),
                    ("on-bt-download-complete", true),
                ],
            ),
            &[
                ("on-download-complete", Use::Command),
                ("on-download-error", Use::Command),
                ("on-download-pause", Use::Command),
                ("on-download-start", Use::Command),
                ("on-download-stop", Use::Command),
                ("on-bt-download-complete", Use::Command),
            ],
        ),
        "openvpn" => (
            spec(
                "",
                &[
                    ("up", true),
                    ("down", true),
                    ("route-up", true),
                    ("route-pre-down", true),
                    ("ipchange", true),
                    ("client-connect", true),
                    ("client-disconnect", true),
                    ("learn-address", true),
                    ("auth-user-pass-verify", true),
                    ("tls-verify", true),
                    ("plugin", true),
                ],
            ),
            &[
                ("up", Use::Command),
                ("down", Use::Command),
                ("route-up", Use::Command),
                ("route-pre-down", Use::Command),
                ("ipchange", Use::Command),
                ("client-connect", Use::Command),
                ("client-disconnect", Use::Command),
                ("learn-address", Use::Command),
                ("auth-user-pass-verify", Use::Command),
                ("tls-verify", Use::Command),
                ("plugin", Use::Loads),
            ],
        ),
        "tcpdump" => (spec("zZwWGCcirsFBEMTyQ", &[]), &[("z", Use::Command)]),
        "wget" | "wget2" => (
            spec("OoaPeiU", &[("use-askpass", true)]),
            &[("use-askpass", Use::Command)],
        ),
        "scrot" => (
            spec("e", &[("exec", true)]),
            &[("e", Use::Command), ("exec", Use::Command)],
        ),
        "nano" | "rnano" | "pico" => (
            spec("sYTrCoQ", &[("speller", true)]),
            &[("s", Use::Command), ("speller", Use::Command)],
        ),
        "gcc" | "g++" | "cc" | "c++" | "clang" | "clang++" => {
            (spec("", &[("wrapper", true)]), &[("wrapper", Use::Loads)])
        }
        "ssh-keygen" => (spec("DfNCtbIOnZ", &[]), &[("D", Use::Loads)]),
        "tshark" | "wireshark" => (spec("Xior", &[]), &[("X", Use::Loads)]),
        "nmap" => (spec("", &[("script", true)]), &[("script", Use::Loads)]),
        "julia" => (spec("eE", &[("eval", true), ("print", true)]), INLINE_E),
        "ghc" | "ghci" | "runghc" => (spec("e", &[]), &[("e", Use::Inline)]),
        "octave" | "octave-cli" => (spec("", &[("eval", true)]), &[("eval", Use::Inline)]),
        "slsh" | "jrunscript" | "jjs" | "latexmk" | "ciao" => {
            (spec("e", &[]), &[("e", Use::Inline)])
        }
        "knife" => (
            spec("E", &[("exec", true)]),
            &[("E", Use::Inline), ("exec", Use::Inline)],
        ),
        "mail" | "mailx" | "mail.mailutils" => (
            spec("Easbcr", &[("exec", true)]),
            &[("E", Use::Loads), ("exec", Use::Loads)],
        ),
        "tmate" => (spec("cLSf", &[]), &[("c", Use::Command)]),
        "cowsay" | "cowthink" => (spec("feT", &[]), &[("f", Use::Loads)]),
        "rake" => (
            spec(
                "epE",
                &[
                    ("execute", true),
                    ("execute-print", true),
                    ("execute-continue", true),
                ],
            ),
            &[
                ("e", Use::Inline),
                ("p", Use::Inline),
                ("E", Use::Inline),
                ("execute", Use::Inline),
                ("execute-print", Use::Inline),
                ("execute-continue", Use::Inline),
            ],
        ),
        "gimp" | "gimp-console" => (
            spec("b", &[("batch", true), ("batch-interpreter", true)]),
            &[("b", Use::Inline), ("batch", Use::Inline)],
        ),
        _ => return None,
    })
}

const INLINE_E: &[(&str, Use)] = &[
    ("e", Use::Inline),
    ("E", Use::Inline),
    ("eval", Use::Inline),
    ("print", Use::Inline),
];

pub(super) fn check(a: &mut Analyzer, cx: Cx<'_, '_>, base: &str, w: &[Word<'_>], call: &Call<'_>) {
    let args = &w[1..];
    if let Some((spec, uses)) = options(base) {
        let read = opts::scan(args, &spec);
        for arg in &read {
            let (name, v) = match *arg {
                Arg::Short(c, Some(v)) => (c.to_string(), v),
                Arg::Long(n, Some(v)) => (n.to_owned(), v),
                _ => continue,
            };
            if let Some((_, how)) = uses.iter().find(|(n, _)| *n == name) {
                used(a, cx, call, base, &name, *how, v);
            }
        }
    }
    operands(a, cx, base, args, call);
}

fn used(
    a: &mut Analyzer,
    cx: Cx<'_, '_>,
    call: &Call<'_>,
    base: &str,
    name: &str,
    how: Use,
    v: Val<'_, '_>,
) {
    let dash = if name.len() == 1 { "-" } else { "--" };
    let what = format!("`{base} {dash}{name}`");
    match how {
        Use::Command => run_option(a, cx, call, v, &[], &what),
        Use::Loads if loads_file(base, v.text()) => option_exec(a, call, &what, v.text()),
        Use::Loads => {}
        Use::Inline => a.report(
            RuleId::InlineCode,
            call.span.clone(),
            format!("{what} runs inline code"),
        ),
    }
}

/// Whether a code-loading option's value names code from a file rather than a built-in
/// (`nmap --script=vuln` is a category, `--script=./x.nse` a file).
fn loads_file(base: &str, text: &str) -> bool {
    match base {
        "nmap" => text.contains('/') || text.contains(".nse") || text.contains(UNKNOWN_MARK),
        "tshark" | "wireshark" => text.starts_with("lua_script"),
        "cowsay" | "cowthink" => text.contains('/'),
        _ => true,
    }
}

const UNKNOWN_MARK: char = crate::word::UNKNOWN;

/// Operands and option shapes the table cannot express.
fn operands(a: &mut Analyzer, cx: Cx<'_, '_>, base: &str, args: &[Word<'_>], call: &Call<'_>) {
    let lit = |i: usize| args.get(i).and_then(Word::lit);
    let any = |f: &dyn Fn(&str) -> bool| args.iter().filter_map(Word::lit).any(f);
    match base {
        "openssl" => {
            let engine_file = lit(0) == Some("engine")
                && args[1..]
                    .iter()
                    .any(|w| w.text.contains('/') || w.text.ends_with(".so"));
            let loads = engine_file
                || args.windows(2).any(|p| {
                    matches!(p[0].lit(), Some("-engine" | "-provider-path" | "-provider"))
                        && (p[1].text.contains('/') || p[1].text.ends_with(".so") || p[1].unknown)
                });
            if loads {
                option_exec(a, call, "`openssl -engine FILE`", "a shared library");
            }
        }
        "gcc" | "g++" | "cc" | "c++" | "clang" | "clang++" if any(&|t| t == "-wrapper") => {
            option_exec(
                a,
                call,
                &format!("`{base} -wrapper`"),
                "a program around every pass",
            )
        }
        "npm" | "pnpm" | "yarn" | "bun" => package_config(a, args, call),
        "busctl" if any(&|t| t.contains("unixexec:")) => {
            option_exec(a, call, "`busctl --address=unixexec:`", "a program")
        }
        "csvtool" => {
            if let Some(i) = args.iter().position(|x| x.lit() == Some("call"))
                && let Some(cmd) = args.get(i + 1)
            {
                run_option(a, cx, call, Val::of(cmd), &[], "`csvtool call`");
            }
        }
        "xdotool" if lit(0) == Some("exec") => {
            if let Some(rest) = args.get(1..).filter(|r| !r.is_empty()) {
                let i = usize::from(rest[0].lit().is_some_and(|t| t.starts_with("--")));
                if let Some(rest) = rest.get(i..).filter(|r| !r.is_empty()) {
                    crate::commands::wrapped(a, cx, rest, &crate::commands::at(call, &rest[0]));
                }
            }
        }
        "latex" | "pdflatex" | "xelatex" | "lualatex" | "tex" | "pdftex" | "luatex" | "xetex"
        | "etex" | "context" | "latexmk" | "lualatex-dev" | "pdflatex-dev"
            if any(&|t| {
                let t = t.trim_start_matches('-');
                t == "shell-escape" || t == "enable-write18" || t.starts_with("shell-restricted=")
            }) =>
        {
            option_exec(
                a,
                call,
                &format!("`{base} --shell-escape`"),
                "\\write18 commands",
            )
        }
        "rpm" | "rpmquery" | "rpmdb" | "rpmverify" | "rpmspec" | "rpmbuild" => {
            rpm_eval(a, args, call)
        }
        "run-parts" if any(&|t| t.starts_with("--regex") || t == "--new-session") => option_exec(
            a,
            call,
            "`run-parts --regex`",
            "programs picked from a directory",
        ),
        "service" if lit(0).is_some_and(|t| t.contains('/')) => a.report(
            RuleId::CommandMasquerade,
            call.span.clone(),
            "`service PATH` runs a program by path as a service script",
        ),
        "smbclient" | "lftp" | "ftp" | "sftp" | "tftp" | "pftp" | "ncftp" => {
            bang_commands(a, cx, base, args, call)
        }
        "puppet"
            if lit(0) == Some("apply") && any(&|t| t == "-e" || t.starts_with("--execute")) =>
        {
            a.report(
                RuleId::InlineCode,
                call.span.clone(),
                "`puppet apply -e` runs inline code",
            )
        }
        _ => {}
    }
}

/// `rpm --eval|-E EXPR`: macros `%(…)` and `%{lua:…}` run shell and Lua code.
fn rpm_eval(a: &mut Analyzer, args: &[Word<'_>], call: &Call<'_>) {
    let runs = args
        .iter()
        .any(|w| w.text.contains("%(") || w.text.contains("%{lua:"))
        && args.iter().filter_map(Word::lit).any(|t| {
            t == "-E" || t.starts_with("--eval") || t.starts_with("--define") || t == "-D"
        });
    if runs {
        option_exec(a, call, "an rpm macro", "`%(…)` or `%{lua:…}`");
    }
}

/// `CLIENT -c 'CMD; !SHELL-COMMAND'`: a `!` command of a file-transfer console runs a shell
/// command; it is checked as code.
fn bang_commands(a: &mut Analyzer, cx: Cx<'_, '_>, base: &str, args: &[Word<'_>], call: &Call<'_>) {
    for pair in args.windows(2) {
        if !matches!(pair[0].lit(), Some("-c" | "-e" | "--command")) {
            continue;
        }
        let text = pair[1].text.as_str();
        let mut at = 0;
        for part in text.split(';') {
            let lead = part.len() - part.trim_start().len();
            if part.trim_start().starts_with('!') {
                let v = Val {
                    word: &pair[1],
                    at: at + lead + 1,
                };
                let what = format!("a `!` command of `{base} -c`");
                // The rest of the word is the command up to the next `;`: checked whole
                // (a `;` there is also a shell separator).
                run_option(a, cx, call, v, &[], &what);
                return;
            }
            at += part.len() + 1;
        }
    }
}

/// `npm|pnpm|yarn config set KEY VALUE` (also `npm set`) of a setting that names a program
/// every later run uses.
fn package_config(a: &mut Analyzer, args: &[Word<'_>], call: &Call<'_>) {
    let lits: Vec<&str> = args.iter().filter_map(Word::lit).collect();
    let set = match lits.as_slice() {
        ["config", "set", rest @ ..] | ["set", rest @ ..] => rest,
        _ => return,
    };
    let key = set
        .iter()
        .find(|t| !t.starts_with('-'))
        .map(|t| t.split('=').next().unwrap_or_default().to_ascii_lowercase());
    let runs = key.is_some_and(|k| {
        matches!(
            k.as_str(),
            "script-shell"
                | "shell"
                | "git"
                | "editor"
                | "browser"
                | "node-options"
                | "onload-script"
                | "init-module"
                | "yarn-path"
                | "yarnpath"
        )
    });
    if runs {
        a.report(
            RuleId::Persistence,
            call.span.clone(),
            "a package-manager setting that makes every later run use another program or source",
        );
    }
}
