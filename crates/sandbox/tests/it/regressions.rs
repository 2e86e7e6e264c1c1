//! Regressions from the adversarial review of the sandbox.

use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use tollgate_sandbox::{Launcher, Network, Policy, Sandbox};

use super::*;

/// An executable shell script at `path`.
fn script(path: &Path, body: &str) -> Launcher {
    std::fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    Launcher::new(path)
}

fn real_launcher() -> &'static str {
    env!("CARGO_BIN_EXE_tollgate-sandbox")
}

#[tokio::test]
async fn regression_descriptors_the_runtime_inherited_reached_sandboxed_commands() {
    let dir = tempfile::tempdir().unwrap();
    let outside = outside_dir();
    let log = canary(outside.path(), "log");
    std::fs::create_dir(outside.path().join("secret")).unwrap();
    canary(&outside.path().join("secret"), "creds");
    // What a supervisor or a shell wrapper around tollgate leaves open.
    let launcher = script(
        &dir.path().join("leaky"),
        &format!(
            "exec 9>>{} 7<{}\nexec {} \"$@\"",
            log.display(),
            outside.path().display(),
            real_launcher()
        ),
    );
    let work = tempfile::tempdir().unwrap();
    let sb = Sandbox::with_launcher(
        Policy::new(Network::Off)
            .writable(work.path())
            .hidden(outside.path().join("secret")),
        Some(launcher),
    );
    let ran = bash(
        &sb,
        work.path(),
        work.path(),
        "echo pwned >&9; cat /proc/self/fd/7/secret/creds; ls /proc/self/fd",
    )
    .await;
    assert!(!ran.stdout.contains("canary"), "{}", ran.stdout);
    assert!(ran.stderr.contains("Bad file descriptor"), "{}", ran.stderr);
    assert_untouched(&log);
    let fds: Vec<&str> = ran.stdout.lines().collect();
    assert_eq!(
        fds,
        ["0", "1", "2", "3"],
        "only the standard streams (and ls's own)"
    );
}

/// Ends the current host the way a deadline does: a command that is dropped.
async fn drop_a_running_command(sb: &Sandbox, work: &Path) {
    let mut child = sb
        .spawn(&bash_command("sleep 30", work, work))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    child.kill();
}

#[tokio::test]
async fn regression_a_renamed_parent_moved_a_writable_path_to_the_outside() {
    let work = tempfile::tempdir().unwrap();
    let outside = outside_dir();
    std::fs::create_dir_all(work.path().join("link/victim")).unwrap();
    std::fs::create_dir(outside.path().join("victim")).unwrap();
    let sb = sandbox(
        Policy::new(Network::Off)
            .writable(work.path())
            .writable(work.path().join("link/victim")),
    );
    let swap = format!(
        "mv link link.old && ln -s {} link",
        outside.path().display()
    );
    assert!(
        bash(&sb, work.path(), work.path(), &swap)
            .await
            .status
            .success()
    );
    drop_a_running_command(&sb, work.path()).await;
    let err = sb
        .spawn(&bash_command(
            "echo x > link/victim/planted",
            work.path(),
            work.path(),
        ))
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("no longer names the file"),
        "{err}"
    );
    assert!(!outside.path().join("victim/planted").exists());
}

#[tokio::test]
async fn regression_a_renamed_parent_revealed_a_hidden_file_in_the_workspace() {
    let work = tempfile::tempdir().unwrap();
    std::fs::create_dir(work.path().join("cfg")).unwrap();
    let secret = canary(&work.path().join("cfg"), "secret.env");
    let sb = sandbox(
        Policy::new(Network::Off)
            .writable(work.path())
            .hidden(&secret),
    );
    let first = bash(
        &sb,
        work.path(),
        work.path(),
        "cat cfg/secret.env; mv cfg cfg2",
    )
    .await;
    assert!(!first.stdout.contains("canary"));
    drop_a_running_command(&sb, work.path()).await;
    let err = sb
        .spawn(&bash_command(
            "cat cfg2/secret.env",
            work.path(),
            work.path(),
        ))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("gone or moved"), "{err}");
}

#[tokio::test]
async fn regression_a_launcher_under_a_writable_path_could_be_replaced() {
    let work = tempfile::tempdir().unwrap();
    let copy = work.path().join("tollgate-sandbox");
    std::fs::copy(real_launcher(), &copy).unwrap();
    let sb = Sandbox::with_launcher(
        Policy::new(Network::Off).writable(work.path()),
        Some(Launcher::new(&copy)),
    );
    let err = sb
        .spawn(&bash_command("true", work.path(), work.path()))
        .await
        .unwrap_err();
    assert!(err.is_unavailable());
    assert!(err.to_string().contains("could replace it"), "{err}");
}

#[tokio::test]
async fn regression_one_failed_launcher_start_disabled_the_sandbox_for_good() {
    let dir = tempfile::tempdir().unwrap();
    let once = dir.path().join("failed-once");
    let flaky = script(
        &dir.path().join("flaky"),
        &format!(
            "if [ ! -e {o} ]; then touch {o}; exit 1; fi\nexec {} \"$@\"",
            real_launcher(),
            o = once.display()
        ),
    );
    let work = tempfile::tempdir().unwrap();
    let sb = Sandbox::with_launcher(Policy::new(Network::Off).writable(work.path()), Some(flaky));
    let first = sb
        .spawn(&bash_command("true", work.path(), work.path()))
        .await;
    assert!(first.unwrap_err().is_unavailable());
    let again = bash(&sb, work.path(), work.path(), "echo second").await;
    assert_eq!(again.stdout, "second\n");
}

#[tokio::test]
async fn a_program_that_is_not_a_launcher_is_always_named_as_such() {
    let work = tempfile::tempdir().unwrap();
    for program in ["/bin/true", "/bin/false", "/bin/cat"] {
        for _ in 0..5 {
            let sb = Sandbox::with_launcher(
                Policy::new(Network::Off).writable(work.path()),
                Some(Launcher::new(program)),
            );
            let err = sb
                .spawn(&bash_command("true", work.path(), work.path()))
                .await
                .unwrap_err();
            assert!(err.is_unavailable(), "{program}: {err}");
            assert!(err.to_string().contains(program), "{err}");
        }
    }
}

#[tokio::test]
async fn regression_a_working_directory_under_run_read_as_a_missing_bash() {
    // `/run` is the sandbox's own, empty: a working directory there is out of its view.
    let Ok(dir) = tempfile::tempdir_in("/run") else {
        eprintln!("skipped: /run is not writable for this user");
        return;
    };
    let home = outside_dir();
    let sb = sandbox(Policy::new(Network::Off));
    // The host reports a failed start when it is asked to, or at the first wait.
    let text = match sb
        .spawn(&bash_command("true", dir.path(), home.path()))
        .await
    {
        Err(error) => error.to_string(),
        Ok(mut child) => match child.wait().await {
            Err(error) => error.to_string(),
            Ok(status) => panic!("a command ran in {}: {status}", dir.path().display()),
        },
    };
    assert!(
        text.contains(&format!(
            "the working directory {} is not visible in the sandbox",
            dir.path().display()
        )),
        "{text}"
    );
}
