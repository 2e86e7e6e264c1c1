//! Code run by expansions and shell options: arithmetic on run-time values, `${x@P}`,
//! `mapfile -C`, prompt strings, `BASH_ENV`, `--rcfile`, `shopt -s extdebug`, `set -k`.

use tollgate_shell::{Profile, Verdict, analyze};

use super::{assert_allowed, assert_blocked, assert_rule};

#[test]
fn arithmetic_on_values_only_known_at_run_time_escalates() {
    for command in [
        "echo $((X + 1))",
        "echo $(( $1 * 2 ))",
        "(( $1 > 2 ))",
        "((n = HOOK_COUNT))",
        "let \"n = $1\"",
        "let n=count+1",
        "[[ $N -eq 1 ]]",
        "[[ x -lt y ]]",
        "echo ${a[$I]}",
        "a[$i]=1",
        "declare -i n; n=$1",
        "local -i n=\"$2\"",
        "x=$(cat f); echo $((x))",
        "(( $(jq .n <<< \"$HOOK_PAYLOAD\") > 0 ))",
        "unset \"$name\"",
        "printf -v \"$name\" %s x",
    ] {
        assert_rule(command, "arithmetic-eval", Verdict::Escalate);
    }
}

#[test]
fn code_inside_arithmetic_values_runs_and_is_checked() {
    for command in [
        "x='a[$(rm -rf /)]'; echo $((x))",
        "x='a[$(rm -rf /)]'; (( x ))",
        "x='a[$(rm -rf /)]'; [[ x -eq 0 ]]",
        "y='a[$(sudo id)]'; x=y; echo $((x + 1))",
        "let 'a[$(rm -rf /)]'",
        "declare -i n; n='a[$(rm -rf ~)]'",
        "unset 'a[$(rm -rf /)]'",
        "read 'a[$(rm -rf /)]' <<< x",
        "[[ -v 'a[$(rm -rf /)]' ]]",
        "test -v 'a[$(rm -rf /)]'",
        "printf -v 'a[$(rm -rf /)]' %s x",
        "set -- 'a[$(sudo id)]'; echo $(( $1 ))",
    ] {
        assert_blocked(command);
    }
}

#[test]
fn prompt_expansion_and_callbacks_run_code() {
    for command in [
        "x='$(rm -rf /)'; echo ${x@P}",
        "PS4='$(rm -rf /)' bash -x -c ls",
        "export PS1='`sudo id`'",
        "PROMPT_COMMAND='rm -rf /'",
        "mapfile -C 'rm -rf /' -c 1 a < f",
        "readarray -t -C 'sudo id' a < f",
        "compgen -C 'rm -rf /' x",
        "trap -- 'rm -rf /' EXIT",
    ] {
        assert_blocked(command);
    }
    for command in [
        "echo ${x@P}",
        "echo \"${HOOK_PAYLOAD@P}\"",
        "mapfile -C \"$CB\" a < f",
        "PS4=\"$X\" bash -xc ls",
        "export PROMPT_COMMAND=\"$(cat f)\"",
        "PROMPT_COMMAND=(x 'rm -rf /')",
    ] {
        assert_rule(command, "hidden-code", Verdict::Block);
    }
}

#[test]
fn options_and_variables_that_make_the_shell_run_unseen_code_block() {
    for command in [
        "BASH_ENV=/tmp/x bash -c ls",
        "export BASH_ENV=./env.sh",
        "env -i BASH_ENV=/tmp/x bash -c :",
        "ENV=/tmp/x sh -i",
        "env SHELLOPTS=xtrace PS4='x' bash -c ls",
        "BASHOPTS=extdebug bash -c ls",
        "bash --rcfile /tmp/x -i",
        "bash --init-file /tmp/x",
        "shopt -s extdebug",
        "bash -O extdebug -c 'ls'",
        "set -k",
        "set -euk",
        "set -o keyword",
        "bash -k -c ls",
    ] {
        assert_rule(command, "hidden-code", Verdict::Block);
    }
}

#[test]
fn ordinary_arithmetic_prompts_and_options_stay_allowed() {
    for command in [
        "n=0; echo $((n + 1))",
        "for ((i = 0; i < 3; i++)); do echo $i; done",
        "for i in 1 2 3; do echo $((i * 2)); done",
        "for i in $(seq 1 10); do echo $((i*2)); done",
        "(( $# > 0 ))",
        "[[ $# -gt 0 ]] && echo args",
        "[ \"$N\" -eq 1 ]",
        "test \"$N\" -eq 0 && echo zero",
        "n=$(wc -l < f); echo $((n * 2))",
        "n=$(git diff --name-only | wc -l); if (( n > 10 )); then echo big; fi",
        "start=$(date +%s); make; echo \"took $(( $(date +%s) - start ))s\"",
        "status=$?; [[ $status -ne 0 ]] && exit $status",
        "size=${#str}; echo $((size+1))",
        "for i in \"${!arr[@]}\"; do echo \"${arr[$i]}\"; done",
        "for ((i=0; i<${#arr[@]}; i++)); do echo \"${arr[i]}\"; done",
        "declare -A map; map[$key]=1; echo \"${map[$key]}\"",
        "if (( $(git rev-list --count HEAD) > 100 )); then echo old; fi",
        "(( EUID == 0 )) && echo root",
        "[[ $(id -u) -eq 0 ]] && echo root",
        "echo $((RANDOM % 100))",
        "declare -i total=0; total+=5",
        "count=0; for f in *.rs; do count=$((count + 1)); done; echo $count",
        "echo ${x@Q}",
        "PS4='+ ${BASH_SOURCE}:${LINENO}: ' bash -x ./build.sh",
        "PS4='+ $(date +%T) ' bash -x script.sh",
        "export PS1='\\u@\\h:\\w\\$ '",
        "export PROMPT_COMMAND='history -a'",
        "mapfile -t lines < list.txt; echo \"${#lines[@]}\"",
        "set -euo pipefail; make test",
        "set -x; cargo build",
        "shopt -s nullglob globstar",
        "trap 'echo done' EXIT",
        "ENV=production npm start",
    ] {
        assert_allowed(command);
    }
    let agent = analyze("x=$(cat n); echo $((x + 1))", Profile::Agent);
    assert_eq!(agent.verdict, Verdict::Escalate, "the agent asks a human");
}
