//! Arguments hidden from the reader: positional parameters set with `set --`, arrays, word
//! splitting, namerefs, `printf -v`, `read`, loop variables, GNU long-option prefixes and
//! `/proc/*/root` spellings of `/`.

use tollgate_shell::{Profile, Verdict, analyze};

use super::{assert_allowed, assert_blocked};

#[test]
fn arguments_assembled_from_parameters_arrays_and_splitting_are_seen() {
    for command in [
        "set -- -rf /; rm \"$@\"",
        "set -- /; rm -rf \"$1\"",
        "set -- a -rf ~; shift; rm $@",
        "set -- x -rf /; shift 1; rm $*",
        "a=(rm -rf /); \"${a[@]}\"",
        "a=(-rf /); rm \"${a[@]}\"",
        "a=(-rf); a+=(/); rm ${a[*]}",
        "a[0]=-rf; a[1]=/; rm \"${a[@]}\"",
        "a=(x /); rm -rf \"${a[1]}\"",
        "declare -a a=(-r -f ~); rm \"${a[@]}\"",
        "X='-rf /'; rm $X",
        "X='-rf ~'; Y=$X; rm $Y",
        "IFS=,; X='-rf,/'; rm $X",
        "rm ${X:--rf /}",
        "declare -n r=HOME; rm -rf \"$r\"",
        "X=HOME; declare -n r=$X; rm -rf \"$r\"",
        "X=HOME; rm -rf \"${!X}\"",
        "printf -v X /; rm -rf \"$X\"",
        "printf -v X '%s' ~; rm -rf \"$X\"",
        "read X <<< /; rm -rf \"$X\"",
        "read -r X Y <<< '-rf /'; rm $X $Y",
        "IFS=, read -r a b <<< \"-rf,/\"; rm $a $b",
        "read -a A <<< '-rf /'; rm \"${A[@]}\"",
        "read -r X <<EOF\n/\nEOF\nrm -rf \"$X\"",
        "for d in /; do rm -rf \"$d\"; done",
        "X=build; for X in ~; do rm -rf \"$X\"; done",
        "X=build; X+=/../..; rm -rf ~/\"$X\"",
    ] {
        assert_blocked(command);
    }
}

#[test]
fn values_replaced_at_run_time_are_no_longer_the_static_ones() {
    // `read`, `mapfile`, a loop over several values or `getopts` replace an earlier static
    // value: the target is only known at run time.
    for command in [
        "X=build; read X < list; rm -rf \"$X\"",
        "X=build; mapfile -t X < list; rm -rf \"$X\"",
        "X=build; for X in a /; do rm -rf \"$X\"; done",
        "X=build; getopts ab X; rm -rf \"$X\"",
        "X=build; echo / | read X; rm -rf \"$X\"",
    ] {
        let a = analyze(command, Profile::External);
        assert_ne!(a.verdict, Verdict::Allow, "{command}: {:?}", a.findings);
        assert!(a.refused());
    }
}

#[test]
fn gnu_long_option_prefixes_are_read_as_the_options() {
    for command in [
        "rm --rec --for /",
        "rm --r /",
        "rm --recursive --no-preserve-ro /",
        "chmod --rec 777 /",
        "chown --recu nobody ~",
        "env --unse HOME rm -rf /",
        "env --split 'rm -rf /'",
        "env --ch=/ rm -rf *",
        "timeout --signal KILL 5 rm -rf /",
        "timeout --sig KILL 5 rm -rf /",
        "nice --adj 5 rm -rf /",
        "su --comm 'rm -rf /'",
        "tar --dir ~ -xf x.tar",
        "xargs --repl=X rm -rf X",
    ] {
        assert_blocked(command);
    }
}

#[test]
fn proc_root_and_cwd_spell_the_root_directory() {
    for command in [
        "rm -rf /proc/self/root/",
        "rm -rf /proc/1/root",
        "rm -rf /proc/self/root/etc",
        "rm -rf /proc/thread-self/root/..",
        "rm -rf /proc/1/cwd/*",
        "chmod -R 777 /proc/self/root//./",
        "echo x >> /proc/self/root/etc/sudoers",
        "cd / && rm -rf /proc/self/cwd",
    ] {
        assert_blocked(command);
    }
}

#[test]
fn ordinary_parameters_arrays_and_reads_stay_allowed() {
    for command in [
        "set -- \"$@\" --verbose",
        "set -euo pipefail",
        "a=(one two); for x in \"${a[@]}\"; do echo \"$x\"; done",
        "args=(--quiet --no-color); cargo test \"${args[@]}\"",
        "files=(*.md); wc -l \"${files[@]}\"",
        "declare -a files=(a.txt b.txt); ls \"${files[@]}\"",
        "read -r line < VERSION; echo \"$line\"",
        "IFS=, read -r a b <<< \"x,y\"; echo \"$a\"",
        "X='-la'; ls $X",
        "printf -v now '%(%s)T' -1; echo \"$now\"",
        "while read -r f; do echo \"$f\"; done < files.txt",
        "rm --force build.log",
        "cp --recursive src/ dst/",
        "grep --rec pattern .",
        "cat /proc/self/status",
    ] {
        assert_allowed(command);
    }
}
