//! The sandbox works for an unprivileged user. When the tests run as root, the launcher is
//! started as `nobody` through `setpriv`, from a copy of the binary that user can read.

use std::os::unix::fs::PermissionsExt;

use tollgate_sandbox::{Launcher, Network, Policy, Sandbox};

use super::*;

/// A launcher that runs as an unprivileged user: this crate's binary itself when the tests
/// already run unprivileged, else a wrapper script dropping to `nobody`.
fn unprivileged_launcher(dir: &Path) -> Launcher {
    if !std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .any(|l| l.starts_with("Uid:\t0\t"))
    {
        return launcher();
    }
    let binary = dir.join("tollgate-sandbox");
    std::fs::copy(env!("CARGO_BIN_EXE_tollgate-sandbox"), &binary).unwrap();
    let script = dir.join("as-nobody");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nexec setpriv --reuid=65534 --regid=65534 --clear-groups {} \"$@\"\n",
            binary.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    Launcher::new(script)
}

#[tokio::test]
async fn an_unprivileged_user_gets_the_same_walls() {
    let dir = tempfile::tempdir().unwrap();
    let launcher = unprivileged_launcher(dir.path());
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    std::fs::set_permissions(&work, std::fs::Permissions::from_mode(0o777)).unwrap();
    let home = outside_dir();
    std::fs::set_permissions(home.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let keep = canary(home.path(), "keep");
    std::fs::set_permissions(&keep, std::fs::Permissions::from_mode(0o666)).unwrap();
    let sb = Sandbox::with_launcher(Policy::new(Network::Off).writable(&work), Some(launcher));
    let line = "echo ok > inside && cat inside; rm -rf ~; echo x >> ~/keep; \
                cat /proc/self/status | grep -E '^(Uid|CapEff|NoNewPrivs)'; \
                exec 3<>/dev/tcp/127.0.0.1/9; sleep 86400.57721 & setsid sleep 86400.57722 &";
    let ran = bash(&sb, &work, home.path(), line).await;
    assert!(
        ran.stdout.starts_with("ok\n"),
        "{}\n{}",
        ran.stdout,
        ran.stderr
    );
    assert!(
        !ran.stdout.contains("Uid:\t0\t"),
        "ran as root: {}",
        ran.stdout
    );
    assert!(
        ran.stdout.contains("CapEff:\t0000000000000000"),
        "{}",
        ran.stdout
    );
    assert!(ran.stdout.contains("NoNewPrivs:\t1"), "{}", ran.stdout);
    assert!(
        ran.stderr.contains("Network is unreachable"),
        "{}",
        ran.stderr
    );
    assert_untouched(&keep);
    let features = sb.features().await.unwrap();
    assert!(features.missing().is_empty(), "{features:?}");
}
