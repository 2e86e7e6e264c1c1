//! Archivers, remote shells, tracers and pagers that run a command given in an option:
//! `tar --to-command|--checkpoint-action=exec=|-I|-F|--rsh-command`, `zip -TT`,
//! `ssh|scp|sftp|sshfs -o ProxyCommand|LocalCommand|KnownHostsCommand`, `scp|sftp -S`,
//! `rsync -e|--rsh|--rsync-path`, `mosh --ssh`, `strace -o '|…'`, `less +!…`,
//! `man -P|--pager|-H`.

use super::opts::{self, Arg, Spec, Val};
use super::{expect, option_exec, run_option};
use crate::walk::{Analyzer, Call, Cx};
use crate::word::Word;

pub(super) fn check(
    a: &mut Analyzer,
    cx: Cx<'_, '_>,
    base: &str,
    args: &[Word<'_>],
    call: &Call<'_>,
) {
    match base {
        "tar" | "gtar" | "bsdtar" => tar(a, cx, args, call),
        "zip" => zip(a, cx, args, call),
        "ssh" | "slogin" | "autossh" | "scp" | "sftp" | "sshfs" | "check_by_ssh" => {
            ssh(a, cx, base, args, call)
        }
        "rsync" => rsync(a, cx, args, call),
        "mosh" => {
            let read = opts::scan(
                args,
                &Spec {
                    short: "p",
                    long: &[("ssh", true), ("port", true)],
                },
            );
            for v in opts::values(&read, None, &["ssh"]) {
                run_option(a, cx, call, v, expect::SSH, "`mosh --ssh`");
            }
        }
        "strace" => strace(a, cx, args, call),
        "less" | "more" | "most" | "pg" => pager(a, cx, base, args, call),
        "man" => man(a, cx, args, call),
        _ => {}
    }
}

const TAR: Spec = Spec {
    short: "fCbTXgKNVLHIFs",
    long: &[
        ("to-command", true),
        ("checkpoint", false),
        ("checkpoint-action", true),
        ("use-compress-program", true),
        ("info-script", true),
        ("new-volume-script", true),
        ("rsh-command", true),
        ("file", true),
        ("directory", true),
        ("exclude", true),
        ("files-from", true),
        ("exclude-from", true),
        ("format", true),
        ("owner", true),
        ("group", true),
        ("mode", true),
        ("transform", true),
        ("xform", true),
        ("index-file", true),
        ("label", true),
        ("listed-incremental", true),
        ("newer", true),
        ("after-date", true),
        ("blocking-factor", true),
        ("record-size", true),
        ("suffix", true),
        ("to-stdout", false),
        ("totals", false),
        ("touch", false),
    ],
};

/// `tar`: the commands its options run, also in the old style (`tar xIf CMD a.tar`), and in
/// `TAR_OPTIONS`.
fn tar(a: &mut Analyzer, cx: Cx<'_, '_>, args: &[Word<'_>], call: &Call<'_>) {
    let read = opts::scan(args, &TAR);
    tar_options(a, cx, &read, call);
    for (letter, v) in old_style(args, &TAR) {
        if matches!(letter, 'I' | 'F') {
            tar_option(a, cx, call, letter, v);
        }
    }
}

pub(super) fn tar_options(a: &mut Analyzer, cx: Cx<'_, '_>, read: &[Arg<'_, '_>], call: &Call<'_>) {
    for arg in read {
        match *arg {
            Arg::Short(c @ ('I' | 'F'), Some(v)) => tar_option(a, cx, call, c, v),
            Arg::Long(name, Some(v)) => match name {
                "to-command" | "info-script" | "new-volume-script" => {
                    run_option(a, cx, call, v, &[], &format!("`tar --{name}`"))
                }
                "use-compress-program" => tar_option(a, cx, call, 'I', v),
                "rsh-command" => run_option(a, cx, call, v, expect::SSH, "`tar --rsh-command`"),
                "checkpoint-action" => {
                    if let Some(rest) = v.text().strip_prefix("exec=") {
                        let at = v.at + v.text().len() - rest.len();
                        let cmd = Val { word: v.word, at };
                        run_option(a, cx, call, cmd, &[], "`tar --checkpoint-action=exec=`");
                    }
                }
                _ => {}
            },
            _ => {}
        }
    }
}

fn tar_option(a: &mut Analyzer, cx: Cx<'_, '_>, call: &Call<'_>, letter: char, v: Val<'_, '_>) {
    match letter {
        'I' => run_option(a, cx, call, v, expect::COMPRESSOR, "`tar -I`"),
        _ => run_option(a, cx, call, v, &[], "`tar -F`"),
    }
}

/// The values of an old-style first argument (`tar cfI a.tar CMD`): each value-taking letter
/// takes the next word in turn.
pub(super) fn old_style<'w, 't>(args: &'w [Word<'t>], spec: &Spec) -> Vec<(char, Val<'w, 't>)> {
    let Some(first) = args.first().and_then(Word::lit) else {
        return Vec::new();
    };
    if first.starts_with('-') || !first.chars().all(|c| c.is_ascii_alphabetic()) {
        return Vec::new();
    }
    let mut next = args[1..].iter();
    first
        .chars()
        .filter(|c| spec.short.contains(*c))
        .filter_map(|c| next.next().map(|w| (c, Val::of(w))))
        .collect()
}

/// `zip -TT CMD` / `--unzip-command CMD`: the command that tests the archive (`-T`).
fn zip(a: &mut Analyzer, cx: Cx<'_, '_>, args: &[Word<'_>], call: &Call<'_>) {
    let testers = ["unzip", "7z", "7za", "bsdtar"];
    for (i, word) in args.iter().enumerate() {
        let t = word.text.as_str();
        let value = if t == "-TT" || (t.len() > 7 && "--unzip-command".starts_with(t)) {
            args.get(i + 1).map(Val::of)
        } else if let Some(rest) = t.strip_prefix("-TT") {
            Some(Val {
                word,
                at: 3 + usize::from(rest.starts_with('=')),
            })
        } else if let Some((name, _)) = t.split_once('=').filter(|(n, _)| n.len() > 7) {
            "--unzip-command".starts_with(name).then_some(Val {
                word,
                at: name.len() + 1,
            })
        } else {
            None
        };
        if let Some(v) = value {
            run_option(a, cx, call, v, &testers, "`zip -TT`");
        }
    }
}

const SSH: Spec = Spec {
    short: "BbcDEeFIiJLlmOoPpQRSWwsX",
    long: &[],
};

/// `ssh -o KEY=VALUE` (also `-oKEY VALUE`, `-o 'KEY VALUE'`) settings that run local
/// commands; `scp`/`sftp -S PROGRAM`, `sftp -D PROGRAM`, `sshfs -o ssh_command=…`.
fn ssh(a: &mut Analyzer, cx: Cx<'_, '_>, base: &str, args: &[Word<'_>], call: &Call<'_>) {
    let read = opts::scan(args, &SSH);
    for arg in &read {
        let Arg::Short(c, Some(v)) = *arg else {
            continue;
        };
        match (c, base) {
            ('o', _) => {
                for setting in ssh_settings(v, base == "sshfs") {
                    ssh_setting(a, cx, call, setting, base);
                }
            }
            ('S', "scp" | "sftp") => {
                run_option(a, cx, call, v, expect::SSH, &format!("`{base} -S`"))
            }
            ('D', "sftp") => run_option(a, cx, call, v, &[], "`sftp -D`"),
            ('F', _) if super::in_temp_dir(v.text()) || v.word.unknown => option_exec(
                a,
                call,
                &format!("`{base} -F` (a configuration that may hold `ProxyCommand`)"),
                v.text(),
            ),
            _ => {}
        }
    }
}

/// The `KEY=VALUE` settings of one `-o` value: one for ssh, comma-separated for sshfs.
fn ssh_settings<'w, 't>(v: Val<'w, 't>, fuse: bool) -> Vec<Val<'w, 't>> {
    if !fuse {
        return vec![v];
    }
    let mut out = Vec::new();
    let mut at = v.at;
    for part in v.text().split(',') {
        out.push(Val { word: v.word, at });
        at += part.len() + 1;
    }
    out
}

fn ssh_setting(a: &mut Analyzer, cx: Cx<'_, '_>, call: &Call<'_>, v: Val<'_, '_>, base: &str) {
    let text = v.text();
    let split = text.find(['=', ' ', '\t']).unwrap_or(text.len());
    let key = text[..split].to_ascii_lowercase();
    let rest = &text[split..];
    let skip = rest.len() - rest.trim_start_matches(['=', ' ', '\t']).len();
    let value = Val {
        word: v.word,
        at: v.at + split + skip,
    };
    let value_text = value.text();
    let what = format!("`{base} -o {}`", &text[..split]);
    match key.as_str() {
        "proxycommand" if value_text != "none" => {
            run_option(a, cx, call, value, expect::PROXY, &what)
        }
        "localcommand" | "knownhostscommand" | "ssh_command" | "sftp_server" => {
            run_option(a, cx, call, value, expect::SSH, &what)
        }
        _ => {}
    }
}

const RSYNC: Spec = Spec {
    short: "eBfTM",
    long: &[
        ("rsh", true),
        ("rsync-path", true),
        ("remote-option", true),
        ("filter", true),
        ("exclude", true),
        ("include", true),
        ("exclude-from", true),
        ("include-from", true),
        ("files-from", true),
        ("temp-dir", true),
        ("backup-dir", true),
        ("compare-dest", true),
        ("copy-dest", true),
        ("link-dest", true),
        ("log-file", true),
        ("log-file-format", true),
        ("out-format", true),
        ("password-file", true),
        ("partial-dir", true),
        ("suffix", true),
        ("chmod", true),
        ("chown", true),
        ("usermap", true),
        ("groupmap", true),
        ("timeout", true),
        ("port", true),
        ("sockopts", true),
        ("block-size", true),
        ("max-size", true),
        ("min-size", true),
        ("bwlimit", true),
        ("info", true),
        ("debug", true),
        ("checksum-choice", true),
        ("compress-choice", true),
        ("skip-compress", true),
        ("modify-window", true),
        ("contimeout", true),
        ("address", true),
        ("iconv", true),
        ("write-batch", true),
        ("read-batch", true),
        ("only-write-batch", true),
        ("protocol", true),
        ("max-delete", true),
        ("stop-after", true),
        ("stop-at", true),
    ],
};

/// `rsync -e|--rsh CMD`: the remote shell; `--rsync-path CMD`: the program run on the other
/// side (which may be this machine).
fn rsync(a: &mut Analyzer, cx: Cx<'_, '_>, args: &[Word<'_>], call: &Call<'_>) {
    let read = opts::scan(args, &RSYNC);
    for v in opts::values(&read, Some('e'), &["rsh"]) {
        run_option(a, cx, call, v, expect::SSH, "`rsync -e`");
    }
    for v in opts::values(&read, None, &["rsync-path"]) {
        // Run on the remote side: not analysed here, only named.
        if !super::expected(v.text(), &["rsync", "sudo", "doas"]) {
            option_exec(a, call, "`rsync --rsync-path`", v.text());
        }
    }
}

/// `strace -o '|CMD'` / `-o '!CMD'` pipes the trace into a shell command.
fn strace(a: &mut Analyzer, cx: Cx<'_, '_>, args: &[Word<'_>], call: &Call<'_>) {
    let spec = Spec {
        short: "abeEIoOpPsSuUX",
        long: &[("output", true)],
    };
    // Options end at the traced command.
    let end = opts::operand_from(args, 0, &spec).unwrap_or(args.len());
    let read = opts::scan(&args[..end], &spec);
    for v in opts::values(&read, Some('o'), &["output"]) {
        if v.text().starts_with(['|', '!']) {
            let cmd = Val {
                word: v.word,
                at: v.at + 1,
            };
            run_option(a, cx, call, cmd, &[], "`strace -o |`");
        }
    }
}

/// `less '+!CMD'`, `less '+|mCMD'`: start-up commands that run shell commands;
/// `less -k|--lesskey-file|--lesskey-src|--lesskey-content`: key bindings and `#env`
/// settings (`LESSOPEN`) from elsewhere.
fn pager(a: &mut Analyzer, cx: Cx<'_, '_>, base: &str, args: &[Word<'_>], call: &Call<'_>) {
    for word in args {
        let t = word.text.as_str();
        let lesskey = ["-k", "--lesskey-file", "--lesskey-src", "--lesskey-content"]
            .iter()
            .any(|o| t == *o || t.starts_with(&format!("{o}=")))
            || (t.starts_with("-k") && t.len() > 2);
        if lesskey && base == "less" {
            option_exec(a, call, "`less` with a lesskey file", t);
            continue;
        }
        let Some(commands) = t.strip_prefix('+') else {
            continue;
        };
        if let Some(k) = commands.find(['!', '|']) {
            let skip = if commands[k..].starts_with('|') { 2 } else { 1 };
            let at = 1 + k + skip;
            if at <= t.len() && t.is_char_boundary(at) {
                let v = Val { word, at };
                run_option(a, cx, call, v, &[], &format!("`{base} +!`"));
            }
        }
    }
}

/// `man -P PAGER` / `--pager=PAGER`, `man -H[BROWSER]` / `--html=BROWSER`.
fn man(a: &mut Analyzer, cx: Cx<'_, '_>, args: &[Word<'_>], call: &Call<'_>) {
    let spec = Spec {
        short: "CRLmMSsepPrE",
        long: &[("pager", true), ("html", false), ("config-file", true)],
    };
    let read = opts::scan(args, &spec);
    for v in opts::values(&read, Some('P'), &["pager"]) {
        run_option(a, cx, call, v, expect::PAGER, "`man -P`");
    }
    for v in opts::values(&read, None, &["html"]) {
        run_option(a, cx, call, v, &[], "`man --html`");
    }
    for word in args {
        if let Some(browser) = word
            .lit()
            .and_then(|t| t.strip_prefix("-H"))
            .filter(|b| !b.is_empty())
        {
            option_exec(a, call, "`man -H`", browser);
        }
    }
}
