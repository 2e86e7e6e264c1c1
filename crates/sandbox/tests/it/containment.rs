//! Filesystem, network and environment containment.

use std::io::ErrorKind;
use std::net::TcpListener;

use tollgate_sandbox::{Network, Policy};

use super::*;

#[tokio::test]
async fn rm_rf_home_inside_the_sandbox_leaves_the_home_intact() {
    let work = tempfile::tempdir().unwrap();
    let home = outside_dir();
    let canary = canary(home.path(), "keep");
    let sb = sandbox(Policy::new(Network::Off).writable(work.path()));
    let ran = bash(
        &sb,
        work.path(),
        home.path(),
        "rm -rf ~; rm -rf \"$HOME\"/*",
    )
    .await;
    assert!(!ran.status.success());
    assert!(
        ran.stderr.contains("Read-only file system"),
        "{}",
        ran.stderr
    );
    assert_untouched(&canary);
}

#[tokio::test]
async fn writes_reach_the_workspace_and_tmp_only() {
    let work = tempfile::tempdir().unwrap();
    let home = outside_dir();
    let bashrc = canary(home.path(), ".bashrc");
    let sb = sandbox(Policy::new(Network::Off).writable(work.path()));
    let line = "echo ws > inside; echo t > /tmp/t && cat /tmp/t; echo 'curl x|sh' >> ~/.bashrc; \
                touch /etc/tollgate-x /usr/tollgate-x /var/tmp/tollgate-x";
    let ran = bash(&sb, work.path(), home.path(), line).await;
    assert_eq!(ran.stdout, "t\n");
    assert_eq!(
        std::fs::read_to_string(work.path().join("inside")).unwrap(),
        "ws\n"
    );
    assert_untouched(&bashrc);
    assert_eq!(
        ran.stderr.matches("Read-only file system").count(),
        4,
        "{}",
        ran.stderr
    );
    for path in ["/etc/tollgate-x", "/usr/tollgate-x", "/var/tmp/tollgate-x"] {
        assert!(!Path::new(path).exists());
    }
}

#[tokio::test]
async fn hard_links_symlinks_and_proc_root_cannot_write_outside() {
    let work = tempfile::tempdir().unwrap();
    let outside = outside_dir();
    let target = canary(outside.path(), "target");
    let sb = sandbox(Policy::new(Network::Off).writable(work.path()));
    let t = target.display();
    let line = format!(
        "ln {t} hard; echo x >> hard; ln -s {t} soft; echo x >> soft; \
         echo x >> /proc/self/root{t}; echo x >> /proc/1/root{t}; \
         cp --remove-destination /dev/null soft; mv soft {t}"
    );
    let ran = bash(&sb, work.path(), outside.path(), &line).await;
    assert!(
        ran.stderr.contains("Invalid cross-device link"),
        "{}",
        ran.stderr
    );
    assert_untouched(&target);
}

#[tokio::test]
async fn secrets_are_unreadable_and_unlistable() {
    let work = tempfile::tempdir().unwrap();
    let home = outside_dir();
    std::fs::create_dir(home.path().join(".ssh")).unwrap();
    canary(&home.path().join(".ssh"), "id_ed25519");
    let token = canary(home.path(), ".netrc");
    let sb = sandbox(
        Policy::new(Network::Off)
            .writable(work.path())
            .hidden(home.path().join(".ssh"))
            .hidden(&token),
    );
    let ran = bash(
        &sb,
        work.path(),
        home.path(),
        "cat ~/.ssh/id_ed25519; ls ~/.ssh; cat ~/.netrc; cat /etc/shadow; echo done",
    )
    .await;
    assert!(!ran.stdout.contains("canary"), "{}", ran.stdout);
    assert!(ran.stdout.ends_with("done\n"));
    assert_eq!(
        ran.stderr.matches("Permission denied").count(),
        4,
        "{}",
        ran.stderr
    );
}

#[tokio::test]
async fn the_network_is_off_even_for_a_local_listener() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let work = tempfile::tempdir().unwrap();
    let sb = sandbox(Policy::new(Network::Off).writable(work.path()));
    let line = format!(
        "bash -i >& /dev/tcp/127.0.0.1/{port} 0>&1; exec 3<>/dev/tcp/127.0.0.1/{port}; \
         echo done"
    );
    let ran = bash(&sb, work.path(), work.path(), &line).await;
    assert!(
        ran.stderr.contains("Network is unreachable"),
        "{}",
        ran.stderr
    );
    assert_eq!(
        listener.accept().map(|_| ()).unwrap_err().kind(),
        ErrorKind::WouldBlock,
        "the listener saw a connection"
    );
}

#[tokio::test]
async fn with_the_network_on_a_local_listener_is_reached() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let work = tempfile::tempdir().unwrap();
    let sb = sandbox(Policy::new(Network::On).writable(work.path()));
    let line = format!("echo hello > /dev/tcp/127.0.0.1/{port}");
    let ran = bash(&sb, work.path(), work.path(), &line).await;
    assert!(ran.status.success(), "{}", ran.stderr);
    let (mut stream, _) = listener.accept().unwrap();
    let mut got = String::new();
    std::io::Read::read_to_string(&mut stream, &mut got).unwrap();
    assert_eq!(got, "hello\n");
}

#[tokio::test]
async fn other_processes_environments_are_out_of_sight() {
    let work = tempfile::tempdir().unwrap();
    let sb = sandbox(Policy::new(Network::Off).writable(work.path()));
    let me = std::process::id();
    let line = format!(
        "cat /proc/{me}/environ; for f in /proc/[0-9]*/environ; do cat \"$f\"; done \
         | tr '\\0' '\\n'; env; echo; ls /proc | grep -c '^[0-9]'"
    );
    let ran = bash(&sb, work.path(), work.path(), &line).await;
    // The test process runs with Cargo's variables; none may be readable inside.
    assert!(!ran.stdout.contains("CARGO"), "{}", ran.stdout);
    assert!(ran.stderr.contains("No such file"), "{}", ran.stderr);
    let visible: usize = ran.stdout.lines().last().unwrap().trim().parse().unwrap();
    assert!(visible < 10, "{visible} processes visible");
}

#[tokio::test]
async fn setuid_copies_gain_nothing() {
    let work = tempfile::tempdir().unwrap();
    let sb = sandbox(Policy::new(Network::Off).writable(work.path()));
    let line = "cp /bin/cat ./cat && chmod u+s ./cat && ls -l ./cat | cut -c1-10 && \
                ./cat /proc/self/status | grep -E '^(Uid|CapEff|CapPrm|NoNewPrivs)'";
    let ran = bash(&sb, work.path(), work.path(), line).await;
    assert!(ran.status.success(), "{}", ran.stderr);
    let uid = nix_uid();
    assert!(ran.stdout.starts_with("-rwsr"), "{}", ran.stdout);
    assert!(
        ran.stdout.contains("CapEff:\t0000000000000000"),
        "{}",
        ran.stdout
    );
    assert!(
        ran.stdout.contains("CapPrm:\t0000000000000000"),
        "{}",
        ran.stdout
    );
    assert!(ran.stdout.contains("NoNewPrivs:\t1"), "{}", ran.stdout);
    assert!(
        ran.stdout
            .contains(&format!("Uid:\t{uid}\t{uid}\t{uid}\t{uid}")),
        "{}",
        ran.stdout
    );
}

/// The test process's user id, from its own `/proc` status.
fn nix_uid() -> String {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("Uid:")).unwrap();
    line.split_whitespace().nth(1).unwrap().to_owned()
}

#[tokio::test]
async fn mounts_and_namespaces_cannot_be_undone_from_inside() {
    let work = tempfile::tempdir().unwrap();
    let home = outside_dir();
    let bashrc = canary(home.path(), ".bashrc");
    let sb = sandbox(Policy::new(Network::Off).writable(work.path()));
    let line = format!(
        "mount -o remount,rw / ; umount /etc; unshare -Urm sh -c 'mount -o remount,rw {h}; echo x >> {h}/.bashrc'; \
         echo 1 > /proc/sys/kernel/core_pattern; echo done",
        h = home.path().display()
    );
    let ran = bash(&sb, work.path(), home.path(), &line).await;
    assert!(ran.stdout.ends_with("done\n"), "{}", ran.stdout);
    assert_untouched(&bashrc);
    let pattern = std::fs::read_to_string("/proc/sys/kernel/core_pattern").unwrap();
    assert_ne!(pattern.trim(), "1");
}

#[tokio::test]
async fn readable_paths_under_tmp_stay_visible_read_only() {
    let work = tempfile::tempdir().unwrap();
    let config = tempfile::tempdir().unwrap();
    let script = canary(config.path(), "guard.sh");
    let sb = sandbox(
        Policy::new(Network::Off)
            .writable(work.path())
            .readable(config.path()),
    );
    let line = format!("cat {s}; echo x >> {s}", s = script.display());
    let ran = bash(&sb, config.path(), work.path(), &line).await;
    assert_eq!(ran.stdout, "canary");
    assert!(
        ran.stderr.contains("Read-only file system"),
        "{}",
        ran.stderr
    );
    assert_untouched(&script);
}
