//! `tollgate doctor`: the sandbox's kernel features and containment, tried for real.

use std::process::Command;

use serde_json::Value;

fn doctor(launcher: Option<&str>) -> (Option<i32>, Value) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tollgate"));
    command.args(["doctor", "--json"]);
    if let Some(launcher) = launcher {
        command.env("TOLLGATE_SANDBOX_LAUNCHER", launcher);
    }
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
