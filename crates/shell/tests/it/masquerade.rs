//! Command names that run something else than they say, and search paths that make a name
//! run a file the command line does not show.

use tollgate_shell::{Profile, Verdict, analyze};

use super::{assert_allowed, assert_blocked, assert_rule, rule_ids};

#[test]
fn command_names_that_run_another_program_block() {
    for command in [
        "hash -p /bin/rm ls; ls -rf /",
        "hash -rp /tmp/x git",
        "builtin hash -p /tmp/x ls",
        "shopt -s expand_aliases; alias ls='echo'; ls",
        "shopt -s nullglob expand_aliases",
        "bash -O expand_aliases -c 'ls'",
        "enable -f /tmp/evil.so rm",
        "env 'BASH_FUNC_ls%%=() { id; }' bash -c ls",
        "sudo LD_PRELOAD=/tmp/x.so ls",
        "LD_PRELOAD=/tmp/x.so ls",
        "export LD_AUDIT=./a.so",
        "env LD_PRELOAD=x.so make",
        "/proc/self/exe -c 'id'",
        "/proc/1/exe",
        "/proc/self/fd/3 -c id",
        "/dev/fd/3",
    ] {
        assert_rule(command, "command-masquerade", Verdict::Block);
    }
}

#[test]
fn the_dynamic_loader_is_a_wrapper_and_blocks() {
    for command in [
        "/lib64/ld-linux-x86-64.so.2 /bin/rm -rf /",
        "/lib/ld-linux-aarch64.so.1 /bin/true",
        "ld.so --library-path /tmp /bin/ls",
        "/lib/ld-musl-x86_64.so.1 --preload x.so /usr/bin/id",
        "/proc/self/root/lib64/ld-linux-x86-64.so.2 ./x",
    ] {
        assert_rule(command, "command-masquerade", Verdict::Block);
    }
    // The program it runs is checked in its own right.
    let a = analyze("ld.so --argv0 ls /bin/rm -rf ~", Profile::Agent);
    assert!(
        rule_ids(&a).contains(&"destructive-delete"),
        "{:?}",
        a.findings
    );
}

#[test]
fn copies_and_links_of_programs_run_from_a_new_path_block_as_the_program() {
    for (command, inner) in [
        ("cp /bin/rm x; ./x -rf /", "destructive-delete"),
        ("ln -s /bin/rm /tmp/r && /tmp/r -rf ~", "destructive-delete"),
        ("cp /usr/bin/sudo ./s; ./s id", "privilege-escalation"),
        (
            "install -m755 /bin/rm bin/x; bin/x -rf /",
            "destructive-delete",
        ),
        ("cp -t /tmp /bin/rm; /tmp/rm -rf ~", "destructive-delete"),
        (
            "cat /bin/rm > x; chmod +x x; ./x -rf /",
            "destructive-delete",
        ),
        (
            "dd if=/bin/bash of=/tmp/b; /tmp/b -c 'rm -rf /'",
            "destructive-delete",
        ),
        (
            "cd /tmp && cp /bin/rm r; /tmp/r -rf /",
            "destructive-delete",
        ),
        ("busybox cp /sbin/reboot x; ./x", "system-shutdown"),
    ] {
        assert_blocked(command);
        let found = rule_ids(&analyze(command, Profile::External));
        assert!(
            found.contains(&"command-masquerade"),
            "{command}: {found:?}"
        );
        assert!(found.contains(&inner), "{command}: {found:?}");
    }
    // A program looked up at run time is still a program.
    assert_rule(
        "cp \"$(which rm)\" /tmp/r; /tmp/r -rf /",
        "command-masquerade",
        Verdict::Block,
    );
    assert_rule(
        "cp `command -v sudo` s; ./s id",
        "command-masquerade",
        Verdict::Block,
    );
}

#[test]
fn search_paths_that_let_a_file_answer_to_a_command_name_escalate() {
    for command in [
        "PATH=.:$PATH; ls",
        "PATH=.:$PATH ls",
        "export PATH=/tmp/evil:$PATH",
        "PATH=\"/dev/shm:${PATH}\" git status",
        "PATH=bin:$PATH make",
        "PATH=:$PATH make",
        "PATH= ls",
        "env PATH=.:/usr/bin ls",
        "declare -x PATH=./x:$PATH",
        "export PATH=$(pwd):$PATH",
        "D=$(mktemp -d); PATH=\"$D:$PATH\" ls",
        "X=/tmp/e; PATH=$X:$PATH ls",
        "PATH=/tmp/e ls",
        "CDPATH=/ cd etc",
        "export CDPATH=.:~",
        "shopt -s cdable_vars",
        "LD_LIBRARY_PATH=. ./app",
        "NODE_OPTIONS='--require /tmp/x.js' node app.js",
        "PERL5OPT=-MEvil perl x.pl",
    ] {
        assert_rule(command, "search-path-change", Verdict::Escalate);
        assert!(analyze(command, Profile::External).refused());
    }
}

#[test]
fn functions_are_checked_with_the_arguments_of_each_call() {
    for command in [
        "f(){ rm -rf \"$1\"; }; f /",
        "f(){ rm \"$@\"; }; f -rf /",
        "ls() { command rm -rf \"$@\"; }; ls ~",
        "g(){ sudo \"$1\"; }; g id",
        "f(){ local d=$1; rm -rf \"$d\"/*; }; f \"\"",
    ] {
        assert_blocked(command);
    }
    // A recursive function is followed once.
    assert_allowed("f(){ f; }; f");
    assert_allowed("log(){ printf '%s\\n' \"$*\" >> /tmp/hook.log; }; log start; log done");
}

#[test]
fn scripts_the_command_line_writes_are_checked_when_it_runs_them() {
    for command in [
        "echo 'rm -rf ~' > x.sh; sh x.sh",
        "printf '#!/bin/sh\\nrm -rf ~\\n' > ls; chmod +x ls; ./ls",
        "cat > /tmp/s <<'EOF'\nrm -rf /\nEOF\nbash /tmp/s",
        "echo ls > a.sh; echo 'sudo id' >> a.sh; . a.sh",
        "cd /tmp && echo 'rm -rf ~' > x && sh /tmp/x",
        "echo 'rm -rf \"$1\"' > d.sh; bash d.sh / ",
    ] {
        assert_blocked(command);
    }
    assert_allowed("echo 'echo hi' > /tmp/t.sh; bash /tmp/t.sh");
    assert_allowed("cat > run.sh <<'EOF'\n#!/bin/sh\nmake test\nEOF\nsh run.sh");
}

#[test]
fn ordinary_names_and_search_paths_stay_allowed() {
    for command in [
        "hash -r",
        "hash ls",
        "alias ll='ls -la'",
        "shopt -s nullglob; for f in *.md; do echo \"$f\"; done",
        "ldd /bin/ls",
        "cp /bin/ls backup/ls",
        "cp target/release/tool ~/.local/bin/",
        "./scripts/lint.sh --fix",
        "export PATH=\"$HOME/.local/bin:$PATH\"",
        "export PATH=\"$HOME/.cargo/bin:$PATH\"; cargo fmt",
        "PATH=/usr/local/bin:/usr/bin:/bin make",
        "export PATH=\"$CLAUDE_PROJECT_DIR/node_modules/.bin:$PATH\"",
        "PATH=\"$PATH:$HOME/go/bin\" go test ./...",
        "export PATH=$PATH:./node_modules/.bin",
        "PATH=\"/opt/homebrew/bin:$PATH\" brew list",
        "export PATH=\"$VIRTUAL_ENV/bin:$PATH\"",
        "NODE_OPTIONS=--max-old-space-size=4096 npm run build",
        "ENV=production npm start",
        "f() { echo \"$1\"; }; f hello; f world",
        "usage() { echo usage; exit 1; }; [ $# -eq 0 ] && usage",
        "go build -o bin/app ./cmd/app && ./bin/app --version",
    ] {
        assert_allowed(command);
    }
}
