//! More tools that write files named in their arguments, so that start-up files, `.ssh`,
//! devices and hook directories are protected whatever tool writes them: `time -o`,
//! `script FILE`, `find -fprintf|-fprint|-fls`, sed `w FILE`, `sort -o`, `uniq IN OUT`,
//! `openssl -out`, `gpg -o`, `tar -xP`, `patch`, `sponge`, `xxd -r IN OUT`, `iconv -o`,
//! `7z x -o`, `cpio -i`, awk `print > "FILE"`, `pandoc -o`, `yq -i`, `ddrescue`, `dcfldd of=`,
//! `logsave`, `rsync --log-file`, `strace|ltrace -o`, `aria2c -o`, `git clone URL DIR`.

mod sed;
mod unpack;

use super::opts::{self, Arg, Spec};
use crate::walk::{Analyzer, Call, Cx};
use crate::word::Word;
use sed::sed;
use unpack::{absolute_extract, git_clone, patch, seven_zip, unpack_here};

pub(super) fn check(
    a: &mut Analyzer,
    cx: Cx<'_, '_>,
    base: &str,
    args: &[Word<'_>],
    call: &Call<'_>,
) {
    let files: Vec<String> = match base {
        "time" => option_values(
            args,
            "fo",
            &[("output", true), ("format", true)],
            'o',
            "output",
        ),
        "script" => script(args),
        "find" => find(args),
        "sed" | "gsed" => sed(args),
        "sort" => sort(a, cx, args, call),
        "uniq" => {
            let read = opts::scan(
                args,
                &Spec {
                    short: "fsw",
                    long: &[
                        ("skip-fields", true),
                        ("skip-chars", true),
                        ("check-chars", true),
                    ],
                },
            );
            opts::operands(&read)
                .get(1)
                .map(|w| w.text.clone())
                .into_iter()
                .collect()
        }
        "openssl" => single_dash_values(args, &["-out", "-keyout", "-certout", "-signer-out"]),
        "gpg" | "gpg2" => option_values(
            args,
            "or",
            &[
                ("output", true),
                ("recipient", true),
                ("local-user", true),
                ("homedir", true),
            ],
            'o',
            "output",
        ),
        "tar" | "gtar" | "bsdtar" => {
            absolute_extract(a, args, call);
            Vec::new()
        }
        "patch" => patch(a, args, call),
        "sponge" => args
            .iter()
            .filter(|w| !w.text.starts_with('-'))
            .map(|w| w.text.clone())
            .collect(),
        "xxd"
            if args.iter().any(|w| {
                w.lit()
                    .is_some_and(|t| t.starts_with('-') && t.contains('r'))
            }) =>
        {
            let read = opts::scan(
                args,
                &Spec {
                    short: "cglsonCR",
                    long: &[],
                },
            );
            opts::operands(&read)
                .get(1)
                .map(|w| w.text.clone())
                .into_iter()
                .collect()
        }
        "iconv" => option_values(
            args,
            "oft",
            &[("output", true), ("from-code", true), ("to-code", true)],
            'o',
            "output",
        ),
        "pandoc" => option_values(
            args,
            "oftrwAHBcM",
            &[("output", true), ("from", true), ("to", true)],
            'o',
            "output",
        ),
        "yq" if args
            .iter()
            .any(|w| matches!(w.lit(), Some("-i" | "--inplace"))) =>
        {
            args.iter()
                .filter(|w| !w.text.starts_with('-'))
                .skip(1)
                .map(|w| w.text.clone())
                .collect()
        }
        "ddrescue" | "gddrescue" => {
            let read = opts::scan(
                args,
                &Spec {
                    short: "bcimMsx",
                    long: &[],
                },
            );
            opts::operands(&read)
                .get(1)
                .map(|w| w.text.clone())
                .into_iter()
                .collect()
        }
        "dcfldd" | "dc3dd" | "sg_dd" | "ddpt" | "sdd" => args
            .iter()
            .filter_map(|w| {
                ["of=", "hof=", "ofs=", "wipe=", "hwipe=", "of1="]
                    .iter()
                    .find_map(|p| w.text.strip_prefix(p))
            })
            .map(str::to_owned)
            .collect(),
        "logsave" => args
            .iter()
            .find(|w| !w.text.starts_with('-'))
            .map(|w| w.text.clone())
            .into_iter()
            .collect(),
        "rsync" => args
            .iter()
            .filter_map(|w| w.text.strip_prefix("--log-file="))
            .map(str::to_owned)
            .collect(),
        "strace" | "ltrace" => strace(args),
        "aria2c" => option_values(args, "od", &[("out", true), ("dir", true)], 'o', "out"),
        "7z" | "7za" | "7zr" | "7zz" => {
            seven_zip(a, args, call);
            Vec::new()
        }
        "cpio" | "pax" | "jar" => {
            unpack_here(a, base, args, call);
            Vec::new()
        }
        "git" => git_clone(a, args, call),
        "awk" | "gawk" | "mawk" | "nawk" => awk(args),
        _ => return,
    };
    let how = format!("`{base}`");
    for file in files {
        a.written(call.span.clone(), &file, &how);
    }
}

/// Values of option `short`/`long` in `args` read with a spec of value-taking options.
fn option_values(
    args: &[Word<'_>],
    short: &'static str,
    long: &'static [(&'static str, bool)],
    want: char,
    want_long: &str,
) -> Vec<String> {
    let read = opts::scan(args, &Spec { short, long });
    opts::values(&read, Some(want), &[want_long])
        .iter()
        .map(|v| v.text().to_owned())
        .collect()
}

/// Single-dash long options (`openssl … -out FILE`): their values.
fn single_dash_values(args: &[Word<'_>], names: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for (k, word) in args.iter().enumerate() {
        let t = word.text.as_str();
        for name in names {
            if t == *name {
                out.extend(args.get(k + 1).map(|x| x.text.clone()));
            } else if let Some(v) = t.strip_prefix(name).and_then(|r| r.strip_prefix('=')) {
                out.push(v.to_owned());
            }
        }
    }
    out
}

/// `script [options] [FILE]`: the typescript and the log files.
fn script(args: &[Word<'_>]) -> Vec<String> {
    let spec = Spec {
        short: "cITOBEmo",
        long: &[
            ("command", true),
            ("log-in", true),
            ("log-out", true),
            ("log-io", true),
            ("log-timing", true),
            ("timing", false),
            ("echo", true),
            ("logging-format", true),
            ("output-limit", true),
        ],
    };
    let read = opts::scan(args, &spec);
    let mut out: Vec<String> = opts::operands(&read)
        .first()
        .map(|w| w.text.clone())
        .into_iter()
        .collect();
    for arg in &read {
        match *arg {
            Arg::Short('I' | 'O' | 'B' | 'T', Some(v)) => out.push(v.text().to_owned()),
            Arg::Long("log-in" | "log-out" | "log-io" | "log-timing" | "timing", Some(v)) => {
                out.push(v.text().to_owned())
            }
            _ => {}
        }
    }
    out
}

/// `find … -fprintf FILE FORMAT`, `-fprint FILE`, `-fprint0 FILE`, `-fls FILE`.
fn find(args: &[Word<'_>]) -> Vec<String> {
    args.windows(2)
        .filter(|p| {
            matches!(
                p[0].lit(),
                Some("-fprintf" | "-fprint" | "-fprint0" | "-fls")
            )
        })
        .map(|p| p[1].text.clone())
        .collect()
}

/// `sort -o FILE`; `sort --compress-program=PROG` runs a program.
fn sort(a: &mut Analyzer, cx: Cx<'_, '_>, args: &[Word<'_>], call: &Call<'_>) -> Vec<String> {
    let spec = Spec {
        short: "kotST",
        long: &[
            ("key", true),
            ("output", true),
            ("field-separator", true),
            ("buffer-size", true),
            ("temporary-directory", true),
            ("batch-size", true),
            ("compress-program", true),
            ("files0-from", true),
            ("parallel", true),
            ("random-source", true),
            ("sort", true),
        ],
    };
    let read = opts::scan(args, &spec);
    for v in opts::values(&read, None, &["compress-program"]) {
        super::run_option(
            a,
            cx,
            call,
            v,
            super::expect::COMPRESSOR,
            "`sort --compress-program`",
        );
    }
    opts::values(&read, Some('o'), &["output"])
        .iter()
        .map(|v| v.text().to_owned())
        .collect()
}

fn strace(args: &[Word<'_>]) -> Vec<String> {
    let spec = Spec {
        short: "abeEIoOpPsSuUX",
        long: &[("output", true)],
    };
    let end = opts::operand_from(args, 0, &spec).unwrap_or(args.len());
    let read = opts::scan(&args[..end], &spec);
    opts::values(&read, Some('o'), &["output"])
        .iter()
        .map(|v| v.text())
        .filter(|t| !t.starts_with(['|', '!']))
        .map(str::to_owned)
        .collect()
}

/// Files an inline awk program prints to (`print > "FILE"`, `printf … >> "FILE"`).
fn awk(args: &[Word<'_>]) -> Vec<String> {
    if args
        .iter()
        .any(|w| matches!(w.lit(), Some("-f" | "--file")))
    {
        return Vec::new();
    }
    let spec = Spec {
        short: "Fvf",
        long: &[("field-separator", true), ("assign", true), ("file", true)],
    };
    let end = opts::operand_from(args, 0, &spec);
    let Some(program) = end.and_then(|i| args.get(i)) else {
        return Vec::new();
    };
    let p = program.text.as_str();
    let mut out = Vec::new();
    let mut rest = p;
    while let Some(k) = rest.find('>') {
        let after = rest[k + 1..].trim_start_matches('>').trim_start();
        if let Some(quoted) = after.strip_prefix('"') {
            let file = quoted.split('"').next().unwrap_or_default();
            if !file.is_empty() {
                out.push(file.to_owned());
            }
        }
        // Past the `>`s and blanks just read: each byte is looked at a bounded number of times.
        rest = after;
    }
    out
}
