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
