//! `tollgate doctor`: the sandbox's kernel features and containment, tried for real.

use std::process::Command;

use serde_json::Value;

fn doctor(launcher: Option<&str>) -> (Option<i32>, Value) {
    doctor_with(launcher, &[])
}

fn doctor_with(launcher: Option<&str>, env: &[(&str, &str)]) -> (Option<i32>, Value) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tollgate"));
    command.args(["doctor", "--json"]);
    if let Some(launcher) = launcher {
        command.env("TOLLGATE_SANDBOX_LAUNCHER", launcher);
    }
    command.envs(env.iter().copied());
    let output = command.output().unwrap();
    let report = serde_json::from_slice(&output.stdout).unwrap();
    (output.status.code(), report)
}

#[test]
fn doctor_reports_every_containment_check_passing_here() {
    let (code, report) = doctor(None);
    assert_eq!(code, Some(0), "{report:#}");
    assert_eq!(report["verdict"], "contained", "{report:#}");
    assert_eq!(report["launcher"], env!("CARGO_BIN_EXE_tollgate"));
    let checks = report["checks"].as_array().unwrap();
    assert_eq!(checks.len(), 5);
    assert!(checks.iter().all(|c| c["ok"] == true), "{report:#}");
    assert_eq!(report["features"]["seccomp"], true);
}

#[test]
fn doctor_names_what_is_missing_and_exits_1() {
    let (code, report) = doctor(Some("/bin/true"));
    assert_eq!(code, Some(1));
    assert_eq!(report["verdict"], "unavailable");
    let why = report["unavailable"].as_str().unwrap();
    assert!(
        why.contains("launcher") && why.contains("/bin/true"),
        "{why}"
    );
    let (code, report) = doctor(Some("/no/such/launcher"));
    assert_eq!(code, Some(1));
    assert!(
        report["unavailable"]
            .as_str()
            .unwrap()
            .contains("/no/such/launcher")
    );
}

#[test]
fn regression_a_missing_home_made_doctor_call_a_working_sandbox_unavailable() {
    // A service account's home (`nobody`: /nonexistent) need not exist.
    let (code, report) = doctor_with(None, &[("HOME", "/nonexistent/tollgate-doctor")]);
    assert_eq!(code, Some(0), "{report:#}");
    assert_eq!(report["verdict"], "contained", "{report:#}");
}

#[test]
fn regression_a_fake_cat_earlier_in_path_answered_the_credential_probe() {
    // Outside /tmp, which is the sandbox's own: the fake must be visible inside.
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let cat = dir.path().join("cat");
    std::fs::write(&cat, "#!/bin/sh\necho 'cat: x: Permission denied'\n").unwrap();
    let mode = std::os::unix::fs::PermissionsExt::from_mode(0o755);
    std::fs::set_permissions(&cat, mode).unwrap();
    let path = format!(
        "{}:{}",
        dir.path().display(),
        std::env::var("PATH").unwrap()
    );
    let (_, report) = doctor_with(None, &[("PATH", &path)]);
    let hidden = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "hidden files are unreadable")
        .unwrap_or_else(|| panic!("{report:#}"));
    // The system's cat ran: it names the planted file it could not read.
    let detail = hidden["detail"].as_str().unwrap();
    assert!(detail.contains(".tollgate-doctor-"), "{report:#}");
    assert_eq!(hidden["ok"], true, "{report:#}");
}
