//! Everything a command starts dies with it.

use std::time::Duration;

use tollgate_sandbox::{Network, Policy};

use super::*;

/// Global process ids whose command line contains `marker`.
fn pids_with(marker: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(marker))
        })
        .collect()
}

/// Waits (up to 20 s) until `done` holds.
async fn eventually(mut done: impl FnMut() -> bool) -> bool {
    for _ in 0..400 {
        if done() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

/// Starts background sleeps in every escaping style, each with `marker` in its arguments.
fn escapes(marker: &str) -> String {
    format!(
        "set -m; sleep {marker}1 & setsid sleep {marker}2 & (sleep {marker}3 &) ; \
         nohup sleep {marker}4 >/dev/null 2>&1 & disown; \
         bash -c 'sleep {marker}5 & exit 0' ; setsid -f sleep {marker}6"
    )
}

#[tokio::test]
async fn background_jobs_die_when_the_command_ends() {
    let work = tempfile::tempdir().unwrap();
    let sb = sandbox(Policy::new(Network::Off).writable(work.path()));
    let marker = "86400.31415";
    let line = format!("{}; sleep 0.3; echo started", escapes(marker));
    let ran = bash(&sb, work.path(), work.path(), &line).await;
    assert_eq!(ran.stdout, "started\n", "{}", ran.stderr);
    assert!(
        eventually(|| pids_with(marker).is_empty()).await,
        "survivors: {:?}",
        pids_with(marker)
    );
}

#[tokio::test]
async fn a_killed_command_takes_everything_it_started_with_it() {
    let work = tempfile::tempdir().unwrap();
    let sb = sandbox(Policy::new(Network::Off).writable(work.path()));
    let marker = "86400.27182";
    let line = format!("{}; sleep {marker}0", escapes(marker));
    let mut child = sb
        .spawn(&bash_command(&line, work.path(), work.path()))
        .await
        .unwrap();
    assert!(
        eventually(|| pids_with(marker).len() >= 7).await,
        "not all started: {:?}",
        pids_with(marker)
    );
    // What a deadline or a cancel does: the command is dropped.
    child.kill();
    assert!(
        eventually(|| pids_with(marker).is_empty()).await,
        "survivors: {:?}",
        pids_with(marker)
    );
    // The sandbox still runs the next command.
    let ran = bash(&sb, work.path(), work.path(), "echo next").await;
    assert_eq!(ran.stdout, "next\n");
}

#[tokio::test]
async fn a_dropped_wait_kills_the_command() {
    let work = tempfile::tempdir().unwrap();
    let sb = sandbox(Policy::new(Network::Off).writable(work.path()));
    let marker = "86400.16180";
    let line = format!("sleep {marker}0 & setsid sleep {marker}1");
    let mut child = sb
        .spawn(&bash_command(&line, work.path(), work.path()))
        .await
        .unwrap();
    assert!(eventually(|| pids_with(marker).len() >= 2).await);
    let waited = tokio::time::timeout(Duration::from_millis(200), child.wait()).await;
    assert!(waited.is_err(), "the command ended on its own");
    assert!(
        eventually(|| pids_with(marker).is_empty()).await,
        "survivors: {:?}",
        pids_with(marker)
    );
}

#[tokio::test]
async fn exit_codes_and_signals_are_reported() {
    let work = tempfile::tempdir().unwrap();
    let sb = sandbox(Policy::new(Network::Off).writable(work.path()));
    let ran = bash(&sb, work.path(), work.path(), "exit 7").await;
    assert_eq!(ran.status.code(), Some(7));
    let ran = bash(&sb, work.path(), work.path(), "kill -TERM $$").await;
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(
        ran.status.signal(),
        Some(15),
        "a signal death is reported as such"
    );
    let ran = bash(
        &sb,
        work.path(),
        work.path(),
        "sh -c 'kill -KILL $$'; echo $?",
    )
    .await;
    assert_eq!(ran.stdout, "137\n");
    let err = sb
        .spawn(&SandboxCommand::new("/no/such/program").current_dir(work.path()))
        .await
        .unwrap()
        .wait()
        .await
        .unwrap_err();
    assert!(err.to_string().contains("/no/such/program"), "{err}");
}

#[tokio::test]
async fn there_is_no_controlling_terminal() {
    let work = tempfile::tempdir().unwrap();
    let sb = sandbox(Policy::new(Network::Off).writable(work.path()));
    let ran = bash(
        &sb,
        work.path(),
        work.path(),
        "echo x > /dev/tty; ps -o sid=,tty= -p $$",
    )
    .await;
    assert!(ran.stderr.contains("/dev/tty"), "{}", ran.stderr);
    assert!(ran.stdout.contains('?'), "{}", ran.stdout);
}
