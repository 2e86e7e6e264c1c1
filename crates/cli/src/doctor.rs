//! `tollgate doctor`: what this machine gives the OS sandbox of shell commands, checked by
//! running commands in one.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Result;
use serde::Serialize;
use tokio::io::AsyncReadExt;
use tollgate_sandbox::{Features, Launcher, Network, Policy, Sandbox, SandboxCommand};

/// Options of `tollgate doctor`.
#[derive(Debug, clap::Args)]
pub struct Doctor {
    /// Print one JSON object instead of the table.
    #[arg(long)]
    json: bool,
}

/// What `doctor` found.
#[derive(Debug, Serialize)]
struct Report {
    /// `contained`, `degraded` (a second layer is missing) or `unavailable`.
    verdict: &'static str,
    /// The launcher program.
    launcher: Option<String>,
    /// What the sandbox offers, when it could be built.
    features: Option<Features>,
    /// Why it could not be built.
    unavailable: Option<String>,
    /// Each containment property, tried for real.
    checks: Vec<Check>,
}

#[derive(Debug, Serialize)]
struct Check {
    name: &'static str,
    ok: bool,
    detail: String,
}

/// What the probes look at on this machine: outside paths that exist, and a secret planted
/// for the occasion.
struct Host {
    /// Existing directories outside the workspace the probe tries to write in.
    outside: Vec<String>,
    /// A file doctor wrote outside the workspace and listed as hidden, and its content.
    secret: Option<(std::path::PathBuf, String)>,
}

/// A property: a command line and what its output must show.
struct Probe {
    name: &'static str,
    line: fn(&Host) -> String,
    expect: fn(&str, &Host) -> bool,
}

const PROBES: &[Probe] = &[
    Probe {
        name: "everything outside the workspace is read-only",
        line: |host| {
            let targets: Vec<String> = host
                .outside
                .iter()
                .map(|dir| format!("'{dir}/.tollgate-doctor'"))
                .collect();
            format!(
                "touch {} 2>&1; touch inside && echo wrote-workspace",
                targets.join(" ")
            )
        },
        // A directory this user cannot enter answers "Permission denied": refused either way.
        expect: |out, host| {
            let refused = out.matches("Read-only file system").count()
                + out.matches("Permission denied").count();
            refused == host.outside.len() && out.contains("wrote-workspace")
        },
    },
    Probe {
        name: "hidden files are unreadable",
        line: |host| match &host.secret {
            Some((path, _)) => format!("cat '{}' 2>&1 | head -c 200", path.display()),
            None => "echo no-secret-planted".to_owned(),
        },
        expect: |out, host| {
            host.secret.as_ref().is_some_and(|(_, content)| {
                !out.contains(content.as_str()) && out.contains("Permission denied")
            })
        },
    },
    Probe {
        name: "the network is off",
        line: |_| "(echo > /dev/tcp/127.0.0.1/9) 2>&1".to_owned(),
        expect: |out, _| out.contains("Network is unreachable"),
    },
    Probe {
        name: "only the command's own processes are visible",
        line: |_| "ls /proc | grep -c '^[0-9]'".to_owned(),
        expect: |out, _| out.trim().parse::<u32>().is_ok_and(|n| n <= 6),
    },
    Probe {
        name: "no capabilities, no new privileges",
        line: |_| "grep -E '^(CapEff|NoNewPrivs)' /proc/self/status".to_owned(),
        expect: |out, _| {
            out.contains("CapEff:\t0000000000000000") && out.contains("NoNewPrivs:\t1")
        },
    },
];

/// The programs the probes run come from the system's directories only: a `cat` earlier in
/// the caller's `PATH` must not answer for the sandbox.
const PROBE_PATH: &str = "/usr/bin:/bin";

/// Directories outside the workspace the write probe tries: system ones and the home, those
/// that exist (a service account's home may not).
fn outside_dirs() -> Vec<String> {
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    ["/etc", "/usr"]
        .into_iter()
        .map(std::path::PathBuf::from)
        .chain(home)
        .filter(|dir| dir.is_dir())
        .map(|dir| dir.display().to_string())
        .collect()
}

/// A directory outside `/tmp` (which is the sandbox's own) where doctor can plant a secret:
/// `/var/tmp`, the home or the current directory, the first that takes a file.
fn plant_secret() -> Option<(tempfile::TempDir, std::path::PathBuf, String)> {
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let candidates = [
        Some(std::path::PathBuf::from("/var/tmp")),
        home,
        std::env::current_dir().ok(),
    ];
    candidates.into_iter().flatten().find_map(|dir| {
        let holder = tempfile::Builder::new()
            .prefix(".tollgate-doctor-")
            .tempdir_in(dir)
            .ok()?;
        let path = holder.path().join("secret");
        let content = format!("tollgate-doctor-secret-{}", std::process::id());
        std::fs::write(&path, &content).ok()?;
        Some((holder, path, content))
    })
}

pub fn run(args: Doctor, out: &mut impl Write) -> Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let report = runtime.block_on(examine());
    if args.json {
        writeln!(out, "{}", serde_json::to_string(&report)?)?;
    } else {
        print_text(&report, out)?;
    }
    Ok(if report.verdict == "unavailable" {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

async fn examine() -> Report {
    let launcher = Launcher::find();
    let workspace = tempfile::tempdir().ok();
    let mut report = Report {
        verdict: "unavailable",
        launcher: launcher.as_ref().map(|l| l.program().display().to_string()),
        features: None,
        unavailable: None,
        checks: Vec::new(),
    };
    let Some(workspace) = workspace else {
        report.unavailable = Some("cannot create a temporary workspace".into());
        return report;
    };
    let planted = plant_secret();
    let host = Host {
        outside: outside_dirs(),
        secret: planted.as_ref().map(|(_, p, c)| (p.clone(), c.clone())),
    };
    let mut policy = Policy::new(Network::Off).writable(workspace.path());
    if let Some((path, _)) = &host.secret {
        policy = policy.hidden(path);
    }
    let sandbox = Sandbox::with_launcher(policy, launcher);
    let features = match sandbox.features().await {
        Ok(features) => features,
        Err(e) => {
            report.unavailable = Some(e.to_string());
            return report;
        }
    };
    for probe in PROBES {
        let output = output(&sandbox, workspace.path(), &(probe.line)(&host)).await;
        let ok = output
            .as_deref()
            .is_ok_and(|out| (probe.expect)(out, &host));
        let detail = output.unwrap_or_else(|e| e);
        report.checks.push(Check {
            name: probe.name,
            ok,
            detail: detail.trim().to_owned(),
        });
    }
    report.verdict = if report.checks.iter().any(|c| !c.ok) {
        "unavailable"
    } else if features.missing().is_empty() {
        "contained"
    } else {
        "degraded"
    };
    report.features = Some(features);
    report
}

/// stdout of `line` run with bash in the sandbox.
async fn output(sandbox: &Sandbox, cwd: &std::path::Path, line: &str) -> Result<String, String> {
    let mut command = SandboxCommand::new("/bin/bash")
        .arg("-c")
        .arg(line)
        .current_dir(cwd);
    command = command.env("PATH", PROBE_PATH);
    if let Ok(home) = std::env::var("HOME") {
        command = command.env("HOME", home);
    }
    let mut child = sandbox.spawn(&command).await.map_err(|e| e.to_string())?;
    drop(child.stdin.take());
    let mut stdout = child.stdout.take().ok_or("no stdout")?;
    let mut text = String::new();
    let (read, status) = tokio::join!(stdout.read_to_string(&mut text), child.wait());
    read.map_err(|e| e.to_string())?;
    status.map_err(|e| e.to_string())?;
    Ok(text)
}

fn print_text(report: &Report, out: &mut impl Write) -> Result<()> {
    writeln!(
        out,
        "OS sandbox for shell commands (command hooks, the agent's shell tool)"
    )?;
    let launcher = report.launcher.as_deref().unwrap_or("(none found)");
    writeln!(out, "  launcher           {launcher}")?;
    if let Some(why) = &report.unavailable {
        writeln!(out, "  ✗ unavailable: {why}")?;
        writeln!(out, "{}", hint(why))?;
    }
    if let Some(f) = &report.features {
        writeln!(
            out,
            "  namespaces         user, mount, pid, ipc, uts, network: ok"
        )?;
        let landlock = serde_json::to_value(f.landlock)?;
        let landlock = landlock.as_str().unwrap_or("unknown");
        writeln!(out, "  landlock           {landlock}")?;
        writeln!(
            out,
            "  seccomp            {}",
            if f.seccomp { "ok" } else { "missing" }
        )?;
        let ptys = if f.pseudo_terminals { "ok" } else { "missing" };
        writeln!(out, "  pseudo-terminals   {ptys}")?;
    }
    for check in &report.checks {
        let mark = if check.ok { "✓" } else { "✗" };
        writeln!(out, "  {mark} {}", check.name)?;
        if !check.ok {
            writeln!(out, "      got: {}", check.detail.replace('\n', " | "))?;
        }
    }
    let verdict = match report.verdict {
        "contained" => "commands run contained",
        "degraded" => "commands run contained, without a second layer (see above)",
        _ => {
            "commands cannot be contained here: hooks from skills, plugins and user files will \
             not run; trusted hooks run unconfined with a warning; the agent's shell tool runs \
             nothing unless an admin file says `sandbox: off`"
        }
    };
    writeln!(out, "verdict: {verdict}")?;
    Ok(())
}

/// What usually forbids the failing feature, and what to do about it.
fn hint(why: &str) -> &'static str {
    if why.contains("user_namespace") {
        "  hint: unprivileged user namespaces are off. Check `sysctl kernel.unprivileged_userns_clone` \
         (Debian), `kernel.apparmor_restrict_unprivileged_userns` (Ubuntu 24.04+), \
         `user.max_user_namespaces`, or a container's seccomp profile."
    } else if why.contains("launcher") {
        "  hint: the launcher is the tollgate binary itself or `tollgate-sandbox`; set \
         TOLLGATE_SANDBOX_LAUNCHER to its path."
    } else {
        "  hint: run with RUST_LOG=debug, or see docs/sandbox.md."
    }
}
