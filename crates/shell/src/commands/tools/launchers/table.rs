//! The launchers with a regular syntax: options, a few operands, then the command.

use super::super::opts::Spec;

/// Options and operands before a launcher's command.
pub(super) struct Shape {
    /// Subcommand words that must come first (`run`, `exec`), if any.
    pub(super) verbs: &'static [&'static str],
    /// Value-taking options.
    pub(super) spec: Spec,
    /// Operands before the command (`logsave LOGFILE CMD`).
    pub(super) skip: usize,
    /// The command may follow a `--` after options the spec does not know.
    pub(super) dashes: bool,
}

const fn shape(short: &'static str, long: &'static [(&'static str, bool)], skip: usize) -> Shape {
    Shape {
        verbs: &[],
        spec: Spec { short, long },
        skip,
        dashes: false,
    }
}

const fn verb(verbs: &'static [&'static str], short: &'static str, skip: usize) -> Shape {
    Shape {
        verbs,
        spec: Spec { short, long: &[] },
        skip,
        dashes: true,
    }
}

const fn dashes(verbs: &'static [&'static str], skip: usize) -> Shape {
    Shape {
        verbs,
        spec: Spec {
            short: "",
            long: &[],
        },
        skip,
        dashes: true,
    }
}

/// The launchers that run their operands as a command, by name.
pub(super) fn table(base: &str) -> Option<Shape> {
    Some(match base {
        "setarch" => shape("", &[], 1),
        "linux32" | "linux64" | "i386" | "x86_64" | "i686" | "ppc32" | "ppc64" | "uname26" => {
            shape("", &[], 0)
        }
        "prlimit" => shape("po", &[("pid", true), ("output", true)], 0),
        "logsave" | "with-lock-ex" | "lckdo" | "setlock" | "envdir" | "s6-envdir" | "envuidgid"
        | "gosu" | "su-exec" | "setuidgid" | "s6-setuidgid" | "envchain" => shape("", &[], 1),
        "ssh-agent" => shape("aEOPt", &[], 0),
        "dbus-launch"
        | "chronic"
        | "tsocks"
        | "run-one"
        | "run-this-one"
        | "keep-one-running"
        | "run-one-constantly"
        | "run-one-until-success"
        | "run-one-until-failure"
        | "aoss"
        | "ifne"
        | "rootlesskit"
        | "fakeroot-ng"
        | "firejail"
        | "flatpak-spawn"
        | "pgrphack"
        | "fghack"
        | "torify"
        | "pexec" => shape("", &[], 0),
        "torsocks" => shape("uiPpaT", &[], 0),
        "proxychains" | "proxychains4" => shape("f", &[], 0),
        "multitime" => shape("niq", &[], 0),
        "dbus-run-session" => shape("", &[("config-file", true), ("dbus-daemon", true)], 0),
        "numactl" => shape(
            "ipmNCLoSfw",
            &[
                ("interleave", true),
                ("preferred", true),
                ("membind", true),
                ("cpunodebind", true),
                ("physcpubind", true),
                ("length", true),
                ("offset", true),
                ("shm", true),
                ("file", true),
                ("shmid", true),
                ("weighted-interleave", true),
                ("preferred-many", true),
            ],
            0,
        ),
        "cgexec" => shape("g", &[], 0),
        "proot" => shape(
            "rbmqwvkiRS",
            &[
                ("rootfs", true),
                ("bind", true),
                ("mount", true),
                ("qemu", true),
                ("cwd", true),
                ("pwd", true),
                ("verbose", true),
                ("kernel-release", true),
            ],
            0,
        ),
        "faketime" => shape("p", &[("date-prog", true)], 1),
        "nocache" => shape("n", &[], 0),
        "trickle" => shape("duwtln", &[], 0),
        "padsp" => shape("snm", &[], 0),
        "pasuspender" => shape("s", &[("server", true)], 0),
        "sandbox" => shape("lHTIWwit", &[], 0),
        "systemd-inhibit" => shape(
            "",
            &[("what", true), ("who", true), ("why", true), ("mode", true)],
            0,
        ),
        "systemd-cat" => shape(
            "tp",
            &[
                ("identifier", true),
                ("priority", true),
                ("stderr-priority", true),
                ("level-prefix", true),
                ("namespace", true),
            ],
            0,
        ),
        "tini" => shape("pe", &[], 0),
        "dumb-init" => shape("r", &[("rewrite", true)], 0),
        "chpst" => shape("uUbe/nlLmdopfc", &[], 0),
        "softlimit" => shape("acdflmoprst", &[], 0),
        "fakechroot" => shape(
            "ldeb",
            &[
                ("lib", true),
                ("elfloader", true),
                ("environment", true),
                ("bindir", true),
            ],
            0,
        ),
        "cpulimit" => shape(
            "lcpPe",
            &[
                ("limit", true),
                ("cpu", true),
                ("pid", true),
                ("exe", true),
                ("path", true),
            ],
            0,
        ),
        "caffeinate" => shape("tw", &[], 0),
        "sshpass" => shape("fdpP", &[], 0),
        "rlwrap" => shape("bCDfFgHlPSwz", &[], 0),
        "ccache" | "sccache" | "distcc" | "icecc" | "buildcache" => shape("MFdoX", &[], 0),
        "gtimeout" => shape("sk", &[("signal", true), ("kill-after", true)], 1),
        "dtach" => shape("cnAaper", &[], 0),
        "abduco" => shape("cnAae", &[], 0),
        "daemon" | "schroot" | "distrobox-enter" | "lxc-attach" | "lxc-execute" | "minijail0"
        | "nsjail" | "landrun" => {
            let mut s = shape(
                "nucdDRPCS",
                &[
                    ("name", true),
                    ("user", true),
                    ("chroot", true),
                    ("directory", true),
                ],
                0,
            );
            s.dashes = true;
            s
        }
        "poetry" | "pipenv" | "pdm" | "hatch" | "rye" | "devbox" | "pixi" => {
            verb(&["run"], "CP", 0)
        }
        "uv" => Shape {
            verbs: &["run"],
            spec: Spec {
                short: "pw",
                long: &[
                    ("with", true),
                    ("python", true),
                    ("project", true),
                    ("directory", true),
                    ("env-file", true),
                    ("extra", true),
                    ("group", true),
                    ("package", true),
                    ("index", true),
                    ("index-url", true),
                    ("extra-index-url", true),
                    ("with-requirements", true),
                    ("with-editable", true),
                    ("only-group", true),
                    ("no-group", true),
                    ("config-file", true),
                    ("cache-dir", true),
                ],
            },
            skip: 0,
            dashes: true,
        },
        "bundle" | "pnpm" | "rbenv" | "pyenv" | "asdf" | "opam" | "stack" | "cabal" | "mise"
        | "rtx" => verb(&["exec", "x"], "", 0),
        "conda" | "mamba" | "micromamba" => verb(&["run"], "np", 0),
        "direnv" => verb(&["exec"], "", 1),
        "podman" | "buildah" => verb(&["unshare"], "", 0),
        "toolbox" => verb(&["run"], "cdr", 0),
        "npm" => dashes(&["exec"], 0),
        "aws-vault" => dashes(&["exec"], 1),
        "op" | "doppler" | "infisical" | "teller" | "dotenv" => dashes(&["run"], 0),
        "chamber" => dashes(&["exec"], 0),
        "perf" => verb(
            &["stat", "record", "trace", "ftrace"],
            "eopCrGItxDMcFmuj",
            0,
        ),
        _ => return None,
    })
}
