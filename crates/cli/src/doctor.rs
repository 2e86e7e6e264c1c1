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

/// A property: a command line and what its output must show.
struct Probe {
    name: &'static str,
    line: &'static str,
    expect: fn(&str) -> bool,
}

const PROBES: &[Probe] = &[
    Probe {
        name: "everything outside the workspace is read-only",
        line: "touch /etc/.tollgate-doctor /usr/.tollgate-doctor ~/.tollgate-doctor 2>&1; \
               touch inside && echo wrote-workspace",
        // A home this user cannot enter answers "Permission denied": refused either way.
        expect: |out| {
            let refused = out.matches("Read-only file system").count()
                + out.matches("Permission denied").count();
            refused == 3 && out.contains("wrote-workspace")
        },
    },
    Probe {
        name: "credential files are unreadable",
        line: "cat /etc/shadow 2>&1 | head -c 200",
        expect: |out| out.contains("Permission denied") || out.contains("No such file"),
    },
    Probe {
        name: "the network is off",
        line: "(echo > /dev/tcp/127.0.0.1/9) 2>&1",
        expect: |out| out.contains("Network is unreachable"),
    },
    Probe {
        name: "only the command's own processes are visible",
        line: "ls /proc | grep -c '^[0-9]'",
        expect: |out| out.trim().parse::<u32>().is_ok_and(|n| n <= 6),
    },
    Probe {
        name: "no capabilities, no new privileges",
        line: "grep -E '^(CapEff|NoNewPrivs)' /proc/self/status",
        expect: |out| out.contains("CapEff:\t0000000000000000") && out.contains("NoNewPrivs:\t1"),
    },
];

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
    let sandbox = Sandbox::with_launcher(
        Policy::new(Network::Off).writable(workspace.path()),
        launcher,
    );
    let features = match sandbox.features().await {
        Ok(features) => features,
        Err(e) => {
            report.unavailable = Some(e.to_string());
            return report;
        }
    };
    for probe in PROBES {
        let output = output(&sandbox, workspace.path(), probe.line).await;
        let ok = output.as_deref().is_ok_and(probe.expect);
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
    for key in ["PATH", "HOME"] {
        if let Ok(value) = std::env::var(key) {
            command = command.env(key, value);
        }
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
