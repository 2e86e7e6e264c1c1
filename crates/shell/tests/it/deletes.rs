//! Destruction without `rm -r`, and of sensitive subtrees: `find -delete|-exec rm`, `xargs
//! rm` of listed trees, `shred`, `truncate`, `rm` of globs and system files, `mv` away,
//! `rsync --delete`, climbs to ancestors, `git clean` of a home.

use tollgate_shell::{Profile, analyze};

use super::{assert_allowed, assert_blocked, rule_ids};

#[track_caller]
fn assert_deletes(command: &str) {
    assert_blocked(command);
    let found = rule_ids(&analyze(command, Profile::External));
    assert!(
        found.contains(&"destructive-delete"),
        "{command}: {found:?}"
    );
}

#[test]
fn deleting_every_file_find_or_xargs_lists_blocks() {
    for command in [
        "find / -delete",
        "find ~ -type f -delete",
        "cd ~ && find . -delete",
        "cd ~ && find -delete",
        "find /etc -exec rm {} +",
        "find / -execdir rm -f {} \\;",
        "find ~ -type f -exec shred -u {} \\;",
        "find /usr/lib -name '*.so' -exec truncate -s0 {} +",
        "find ~/.ssh -ok rm {} \\;",
        "find ~ -type f | xargs rm",
        "find ~ -print0 | xargs -0 -n1 rm -f",
        "find / -name '*.conf' | xargs -I{} rm {}",
        "printf '%s\\n' ~/* | xargs rm",
        "echo /etc/* | xargs rm -f",
        "cd ~ && ls | xargs rm -f",
        "ls ~ | xargs rm",
    ] {
        assert_deletes(command);
    }
}

#[test]
fn deleting_emptying_or_moving_protected_files_without_recursion_blocks() {
    for command in [
        "rm /etc/*",
        "rm ~/*",
        "rm -f /bin/*",
        "rm -f /*",
        "rm /etc/passwd",
        "unlink /etc/shadow",
        "rm ~/.ssh/id_rsa",
        "rm -f ~/.bashrc",
        "cd / && rm *",
        "cd ~; rm -f *",
        "shred -u ~/.ssh/id_rsa",
        "shred --remove /usr/bin/sudo",
        "shred -zun3 /boot/vmlinuz",
        "truncate -s 0 /etc/passwd",
        "truncate -s0 /bin/bash",
        "truncate --size=0 /usr/lib/x86_64-linux-gnu/libc.so.6",
        "> /bin/bash",
        ": > /usr/bin/python3",
        ": > /var/log/auth.log",
        "rm -rf /lib/modules/$(uname -r)",
        "rm -f ~/.ssh/\"$KEY\"",
        "cp /dev/null /bin/ls",
        "dd if=/dev/zero of=/boot/vmlinuz",
        "ln -sf /tmp/x /usr/bin/python3",
        "mv ~ /dev/null",
        "mv /etc /tmp/x",
        "mv ~/.ssh /tmp",
        "mv /bin/ls /tmp/",
        "mv -t /tmp ~/.gnupg",
        "mv ~/.bashrc /tmp",
        "rsync -a --delete empty/ ~/",
        "rsync --del x/ /etc/",
        "rsync -a --remove-source-files ~/ /tmp/backup",
    ] {
        assert_deletes(command);
    }
}

#[test]
fn climbing_to_an_ancestor_counts_as_a_protected_directory() {
    for command in [
        "rm -rf ../../../../../../../../",
        "rm -rf ../*",
        "rm -r ../..",
        "cd ../../../../../../..; rm -rf *",
        "cd .. && rm -rf *",
        "cd /tmp && cd .. && rm -rf *",
        "cd /tmp; cd ..; chmod -R 777 .",
        "chmod -R 000 ../..",
        "find ../.. -delete",
    ] {
        assert_blocked(command);
    }
}

#[test]
fn deleting_sensitive_subtrees_blocks() {
    for command in [
        "rm -rf ~/.ssh",
        "rm -rf ~/.ssh/",
        "rm -rf $HOME/.gnupg",
        "rm -rf /home/bob/.ssh",
        "rm -rf ~/.config",
        "rm -rf ~/.local",
        "rm -rf /etc/ssh",
        "rm -rf /etc/nginx",
        "rm -rf /lib/modules",
        "rm -rf /usr/lib/modules/6.1.0",
        "rm -rf /boot/grub",
        "rm -rf /root/.ssh",
        "rm -rf /usr/bin/python3*",
        "git -C ~ clean -ffdx",
        "git -C / clean -fdx",
        "cd ~ && git clean -ffdx",
        "cd && git clean -fdx",
        "git --work-tree=$HOME clean -fdx",
        "GIT_WORK_TREE=~ git clean -fdx",
        "git clean -ffdx ~",
    ] {
        assert_deletes(command);
    }
}

#[test]
fn ordinary_cleanups_stay_allowed() {
    for command in [
        "rm -f /tmp/hook.lock",
        "rm -rf node_modules/.cache",
        "rm -f *.pyc",
        "rm -f \"$TMPFILE\"",
        "rm -rf ~/.cache/pip",
        "rm -rf ~/.config/myapp",
        "rm -rf ~/.local/share/Trash/files",
        "rm -rf ../build",
        "rm -rf /var/lib/apt/lists/*",
        "rm -rf /opt/myapp/cache",
        "find . -name '*.orig' -delete",
        "find . -type f -name '*.log' -mtime +7 -exec rm {} \\;",
        "find . -name node_modules -prune -exec rm -rf {} +",
        "git ls-files -z --deleted | xargs -0 git rm",
        "find . -name '*.bak' | xargs rm -f",
        "mv build/app dist/app",
        "mv ~/Downloads/x.zip .",
        "cp .env.example .env",
        "cp ~/.bashrc ~/.bashrc.bak",
        "ln -sf \"$(pwd)/bin/tool\" ~/.local/bin/tool",
        "install -m 755 build/tool /usr/local/bin/tool",
        "truncate -s 0 /tmp/out.log",
        "shred -u secrets.txt",
        "dd if=/dev/zero of=./disk.img bs=1M count=10",
        "echo \"127.0.0.1 x\" >> /etc/hosts",
        "rsync -a --delete src/ build/",
        "git clean -fdx",
        "git clean -fd build/",
        "git clean -n ~",
        "cd .. && ls",
        "ls | xargs rm -f",
        "rm -f /tmp/\"$X\"/cache",
        "cd ../.. && git status",
    ] {
        assert_allowed(command);
    }
}

#[test]
fn regression_an_unset_variable_after_cd_home_read_as_the_whole_home() {
    // Bash passes `""` for `"$F"` with `F` unset, which names no file: not `rm -f *`.
    for command in [
        "cd ~ && rm -f \"$F\"",
        "cd \"$HOME\" && rm -f \"$TMP_FILE\"",
        "cd ~; : > \"$LOG\"",
    ] {
        let found = rule_ids(&analyze(command, Profile::External));
        assert!(
            !found.contains(&"destructive-delete"),
            "{command}: {found:?}"
        );
    }
    // Still the whole home: an empty variable before a slash is `/`, and globs are all.
    for command in [
        "cd ~ && rm -rf \"$F\"/",
        "cd ~ && rm -rf ./*",
        "cd ~ && rm -f *",
    ] {
        assert_deletes(command);
    }
}
