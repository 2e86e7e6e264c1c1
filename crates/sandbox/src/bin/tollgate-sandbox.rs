//! The sandbox launcher as a program of its own, for hosts that are not the `tollgate` binary
//! (tests, embedders): `tollgate-sandbox __tollgate-sandbox outer`, started by
//! `tollgate_sandbox::Sandbox`.

use std::process::ExitCode;

fn main() -> ExitCode {
    tollgate_sandbox::main_if_launcher().unwrap_or_else(|| {
        eprintln!(
            "tollgate-sandbox is started by tollgate to build a sandbox; it takes no commands \
             of its own (see `tollgate doctor`)"
        );
        ExitCode::from(2)
    })
}
