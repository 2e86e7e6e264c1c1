//! Durable approval through the binary: `tollgate run` waits on a confirmation request while
//! other processes run `tollgate approvals …`.

use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_tollgate");

/// A small agent whose shell calls need confirmation, in a fresh folder.
pub(crate) struct Case {
    dir: tempfile::TempDir,
}

impl Case {
    /// `calls`: (id, command) of shell calls, one model turn each, then an answer.
    pub(crate) fn new(calls: &[(&str, &str)], approval: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let case = Self { dir };
        case.script(calls);
        std::fs::write(
            case.path("agent.yaml"),
            format!(
                "name: ops\nmodel: scripted:script.jsonl\ntools: [bash_code_execute_tool]\n\
                 {approval}model_config_json:\n  hooks:\n    confirmation_tools: [bash_code_execute_tool]\n"
            ),
        )
        .unwrap();
        std::fs::create_dir(case.path("ws")).unwrap();
        case
    }

    fn script(&self, calls: &[(&str, &str)]) {
        let mut lines: Vec<String> = calls
            .iter()
            .map(|(id, command)| {
                json!({"role": "assistant", "content": null, "tool_calls": [{"id": id, "type": "function",
                    "function": {"name": "bash_code_execute_tool", "arguments": {"command": command}}}]})
                .to_string()
            })
            .collect();
        lines.push(json!({"role": "assistant", "content": "done"}).to_string());
        std::fs::write(self.path("script.jsonl"), lines.join("\n")).unwrap();
    }

    pub(crate) fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn db(&self) -> String {
        self.path("approvals.db").display().to_string()
    }

    /// `tollgate run` in the background, stdin closed, output to files.
    pub(crate) fn spawn(&self, extra: &[&str]) -> Child {
        self.spawn_with(extra, Stdio::null(), Stdio::from(self.file("err.txt")))
    }

    /// `tollgate run` with `stdin` and `stderr` as given, stdout to `out.txt`.
    fn spawn_with(&self, extra: &[&str], stdin: Stdio, stderr: Stdio) -> Child {
        Command::new(BIN)
            .arg("run")
            .args(["--agent", &self.path("agent.yaml").display().to_string()])
            .args(["--workspace", &self.path("ws").display().to_string()])
            .args(["--trace", &self.path("trace.jsonl").display().to_string()])
            .args(["--db", &self.db()])
            .args(extra)
            .arg("go")
            .stdin(stdin)
            .stdout(self.file("out.txt"))
            .stderr(stderr)
            .spawn()
            .unwrap()
    }

    /// `tollgate run` on a pseudo-terminal: the run and the keyboard that types into it.
    fn spawn_on_a_terminal(&self) -> (Child, std::fs::File) {
        let pty = nix::pty::openpty(None, None).unwrap();
        let run = self.spawn_with(
            &[],
            Stdio::from(pty.slave),
            Stdio::from(self.file("err.txt")),
        );
        (run, std::fs::File::from(pty.master))
    }

    /// Types `line` into `keyboard` until `run` ends (an answer typed before the question is
    /// discarded, so it is typed again until taken); the run's exit code.
    fn type_until_done(
        &self,
        run: &mut Child,
        keyboard: &mut std::fs::File,
        line: &[u8],
    ) -> Option<i32> {
        use std::io::Write;
        let start = Instant::now();
        while run.try_wait().unwrap().is_none() {
            assert!(
                start.elapsed() < Duration::from_secs(120),
                "{}",
                self.output()
            );
            keyboard.write_all(line).unwrap();
            std::thread::sleep(Duration::from_millis(200));
        }
        run.wait().unwrap().code()
    }

    fn file(&self, name: &str) -> std::fs::File {
        std::fs::File::create(self.path(name)).unwrap()
    }

    fn approvals(&self, args: &[&str]) -> Output {
        Command::new(BIN)
            .arg("approvals")
            .args(args)
            .args(["--db", &self.db()])
            .output()
            .unwrap()
    }

    /// All requests in the database.
    fn requests(&self) -> Vec<Value> {
        let out = self.approvals(&["list", "--status", "all", "--json"]);
        assert!(out.status.success(), "{}", text(&out));
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// Waits until a pending request exists; its id.
    fn pending(&self, child: &mut Child) -> String {
        let start = Instant::now();
        loop {
            if self.path("approvals.db").exists() {
                let out = self.approvals(&["list", "--json"]);
                if let Some(line) = String::from_utf8_lossy(&out.stdout).lines().next() {
                    let request: Value = serde_json::from_str(line).unwrap();
                    return request["id"].as_str().unwrap().to_owned();
                }
            }
            if let Some(status) = child.try_wait().unwrap() {
                panic!(
                    "the run ended ({status}) before it asked: {}",
                    self.output()
                );
            }
            assert!(
                start.elapsed() < Duration::from_secs(120),
                "no request was filed: {}",
                self.output()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub(crate) fn output(&self) -> String {
        format!(
            "{}\n{}",
            std::fs::read_to_string(self.path("out.txt")).unwrap_or_default(),
            std::fs::read_to_string(self.path("err.txt")).unwrap_or_default()
        )
    }

    pub(crate) fn trace(&self) -> Vec<Value> {
        std::fs::read_to_string(self.path("trace.jsonl"))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    pub(crate) fn of(&self, kind: &str) -> Vec<Value> {
        self.trace()
            .into_iter()
            .filter(|l| l["type"] == kind)
            .collect()
    }

    /// Lines of the side-effect counter the shell calls append to.
    pub(crate) fn count(&self) -> usize {
        std::fs::read_to_string(self.path("ws/count.txt"))
            .map(|t| t.lines().count())
            .unwrap_or(0)
    }
}

fn text(output: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

fn me() -> String {
    nix::unistd::User::from_uid(nix::unistd::getuid())
        .unwrap()
        .map_or_else(|| format!("uid-{}", nix::unistd::getuid()), |u| u.name)
}

pub(crate) fn finish(child: &mut Child, case: &Case) -> Option<i32> {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code();
        }
        if start.elapsed() > Duration::from_secs(120) {
            child.kill().unwrap();
            panic!("the run did not end: {}", case.output());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_run_waits_until_another_process_approves_and_the_tool_runs_once() {
    let case = Case::new(&[("c1", "echo ran >> count.txt")], "");
    let mut run = case.spawn(&[]);
    let id = case.pending(&mut run);
    assert_eq!(case.count(), 0, "nothing runs before the decision");
    assert!(case.output().contains(&format!(
        "tollgate approvals approve {id} --db {}",
        case.db()
    )));
    let approved = case.approvals(&["approve", &id, "--note", "looks fine"]);
    assert!(approved.status.success(), "{}", text(&approved));
    assert_eq!(finish(&mut run, &case), Some(0), "{}", case.output());
    assert_eq!(case.count(), 1);
    let approval = &case.of("approval")[0];
    assert_eq!(approval["approved"], true);
    assert_eq!(approval["by"], me());
    assert_eq!(approval["request_id"], id.as_str());
    assert_eq!(approval["channel"], "cli");
    let request = &case.requests()[0];
    assert_eq!(request["status"], "approved");
    assert!(request["consumed_at"].is_i64() && request["finished_at"].is_i64());
}

#[test]
fn a_rejection_note_reaches_the_model_and_nothing_runs() {
    let case = Case::new(&[("c1", "echo ran >> count.txt")], "");
    let mut run = case.spawn(&[]);
    let id = case.pending(&mut run);
    let rejected = case.approvals(&["reject", &id, "--note", "use the staging DB"]);
    assert!(rejected.status.success(), "{}", text(&rejected));
    assert_eq!(finish(&mut run, &case), Some(0), "{}", case.output());
    assert_eq!(case.count(), 0);
    // The observation is the tool message the model reads on its next turn.
    let observation = &case.of("observation")[0];
    assert_eq!(observation["status"], "denied");
    let content = observation["content"].as_str().unwrap();
    assert!(content.contains("use the staging DB"), "{content}");
    assert!(
        content.contains(&format!("{} rejected it", me())),
        "{content}"
    );
}

#[test]
fn kill_9_while_waiting_then_resume_reuses_the_request_and_runs_once() {
    let case = Case::new(&[("c1", "echo ran >> count.txt")], "");
    let mut run = case.spawn(&[]);
    let id = case.pending(&mut run);
    let run_id = case.trace()[0]["run_id"].as_str().unwrap().to_owned();
    run.kill().unwrap();
    run.wait().unwrap();
    // Approved while the run was dead.
    assert!(case.approvals(&["approve", &id]).status.success());
    assert_eq!(case.count(), 0);
    let mut resumed = case.spawn(&["--resume", &run_id]);
    assert_eq!(finish(&mut resumed, &case), Some(0), "{}", case.output());
    assert_eq!(case.count(), 1, "{}", case.output());
    assert_eq!(case.requests().len(), 1, "the same row was reused");
    let waiting = &case.of("approval_waiting")[0];
    assert_eq!(waiting["request_id"], id.as_str());
    assert_eq!(waiting["attached"], true);
    // Resumed once more: the approval was used, the call does not run again.
    let mut again = case.spawn(&["--resume", &run_id]);
    assert_eq!(finish(&mut again, &case), Some(0), "{}", case.output());
    assert_eq!(case.count(), 1);
    let observation = &case.of("observation")[0];
    assert_eq!(observation["status"], "denied");
    assert!(
        observation["content"]
            .as_str()
            .unwrap()
            .contains("already used to run the call"),
        "{observation}"
    );
}

#[test]
fn an_approval_whose_arguments_no_longer_match_is_not_run() {
    let case = Case::new(&[("c1", "echo ran >> count.txt")], "");
    let mut run = case.spawn(&[]);
    let id = case.pending(&mut run);
    let run_id = case.trace()[0]["run_id"].as_str().unwrap().to_owned();
    run.kill().unwrap();
    run.wait().unwrap();
    assert!(case.approvals(&["approve", &id]).status.success());
    // The resumed model proposes other arguments under the same call id.
    case.script(&[("c1", "echo other >> count.txt; echo x >> count.txt")]);
    let mut resumed = case.spawn(&["--resume", &run_id]);
    assert_eq!(finish(&mut resumed, &case), Some(0), "{}", case.output());
    assert_eq!(case.count(), 0, "{}", case.output());
    let observation = &case.of("observation")[0];
    assert!(
        observation["content"]
            .as_str()
            .unwrap()
            .contains("asked before with other arguments"),
        "{observation}"
    );
    assert!(case.requests()[0]["consumed_at"].is_null());

    // Still pending when the run died: the old request is cancelled, nobody waits for it.
    let case = Case::new(&[("c1", "echo ran >> count.txt")], "");
    let mut run = case.spawn(&[]);
    case.pending(&mut run);
    let run_id = case.trace()[0]["run_id"].as_str().unwrap().to_owned();
    run.kill().unwrap();
    run.wait().unwrap();
    case.script(&[("c1", "echo other >> count.txt")]);
    let mut resumed = case.spawn(&["--resume", &run_id]);
    assert_eq!(finish(&mut resumed, &case), Some(0), "{}", case.output());
    assert_eq!(case.count(), 0);
    let requests = case.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0]["status"], "cancelled");
}

#[test]
fn an_ask_nobody_may_approve_is_denied_at_once() {
    let case = Case::new(
        &[("c1", "echo ran >> count.txt")],
        "approval:\n  approvers: []\n",
    );
    let mut run = case.spawn(&[]);
    assert_eq!(finish(&mut run, &case), Some(0), "{}", case.output());
    assert_eq!(case.count(), 0);
    let observation = &case.of("observation")[0];
    assert!(
        observation["content"]
            .as_str()
            .unwrap()
            .contains("nobody may approve"),
        "{observation}"
    );
    assert!(!case.path("approvals.db").exists(), "no request was filed");
}

#[test]
fn a_decider_name_or_id_that_cannot_be_is_refused() {
    let case = Case::new(&[("c1", "echo ran >> count.txt")], "");
    for args in [
        vec!["approve", "cr_x", "--as", ""],
        vec!["approve", ""],
        vec!["reject", "cr_\u{1b}[2J"],
    ] {
        let out = case.approvals(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
    }
    let long = "x".repeat(100_000);
    let out = case.approvals(&["show", &long]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stderr.len() < 1000, "the id is not echoed whole");
}

#[test]
fn an_edited_approval_is_reviewed_again_and_fires_approval_correction() {
    // An edit the permission gate blocks stays blocked.
    let case = Case::new(&[("c1", "echo ran >> count.txt")], "");
    let mut run = case.spawn(&[]);
    let id = case.pending(&mut run);
    let edited = case.approvals(&["approve", &id, "--edit", r#"{"command": "rm -rf /"}"#]);
    assert!(edited.status.success(), "{}", text(&edited));
    assert_eq!(finish(&mut run, &case), Some(0), "{}", case.output());
    let observation = &case.of("observation")[0];
    assert_eq!(observation["status"], "denied");
    assert!(
        observation["content"]
            .as_str()
            .unwrap()
            .contains("refused by the permission gate"),
        "{observation}"
    );
    assert!(case.of("tool_started").is_empty());

    // An edit the gate accepts runs instead of the original, and is recorded with it.
    let case = Case::new(&[("c1", "echo ran >> count.txt")], "");
    let mut run = case.spawn(&[]);
    let id = case.pending(&mut run);
    let edit = r#"{"command": "echo edited >> count.txt"}"#;
    assert!(
        case.approvals(&["approve", &id, "--edit", edit])
            .status
            .success()
    );
    assert_eq!(finish(&mut run, &case), Some(0), "{}", case.output());
    assert_eq!(
        std::fs::read_to_string(case.path("ws/count.txt")).unwrap(),
        "edited\n"
    );
    let corrections = case.of("approval_correction");
    assert_eq!(corrections.len(), 1);
    assert_eq!(
        corrections[0]["original"]["command"],
        "echo ran >> count.txt"
    );
    assert_eq!(
        corrections[0]["corrected"]["command"],
        "echo edited >> count.txt"
    );
    let dispatched: Vec<Value> = case
        .of("dispatch")
        .into_iter()
        .filter(|d| d["event"] == "approval_correction")
        .collect();
    assert_eq!(dispatched.len(), 1, "approval_correction fires once");
}

#[test]
fn fifty_processes_approve_at_once_and_exactly_one_wins() {
    let case = Case::new(&[("c1", "echo ran >> count.txt")], "");
    let mut run = case.spawn(&[]);
    let id = case.pending(&mut run);
    let deciders: Vec<Child> = (0..50)
        .map(|_| {
            Command::new(BIN)
                .args(["approvals", "approve", &id, "--db", &case.db()])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let codes: Vec<Option<i32>> = deciders
        .into_iter()
        .map(|c| c.wait_with_output().unwrap().status.code())
        .collect();
    assert_eq!(
        codes.iter().filter(|c| **c == Some(0)).count(),
        1,
        "{codes:?}"
    );
    assert_eq!(
        codes.iter().filter(|c| **c == Some(3)).count(),
        49,
        "{codes:?}"
    );
    assert_eq!(finish(&mut run, &case), Some(0), "{}", case.output());
    assert_eq!(case.count(), 1);
    let shown = case.approvals(&["show", &id, "--json"]);
    let shown: Value = serde_json::from_slice(&shown.stdout).unwrap();
    let approves: Vec<&Value> = shown["history"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["action"] == "approve")
        .collect();
    assert_eq!(approves.len(), 50, "every attempt is audited");
    assert_eq!(
        approves
            .iter()
            .filter(|e| e["outcome"] == "applied")
            .count(),
        1
    );
}

#[test]
fn ctrl_c_while_waiting_cancels_the_run_and_the_request() {
    let case = Case::new(&[("c1", "echo ran >> count.txt")], "");
    let mut run = case.spawn(&[]);
    let id = case.pending(&mut run);
    let pid = nix::unistd::Pid::from_raw(i32::try_from(run.id()).unwrap());
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    assert_eq!(finish(&mut run, &case), Some(130), "{}", case.output());
    let request = &case.requests()[0];
    assert_eq!(request["status"], "cancelled");
    assert_eq!(case.count(), 0);
    let late = case.approvals(&["approve", &id]);
    assert_eq!(late.status.code(), Some(3), "{}", text(&late));
    assert!(String::from_utf8_lossy(&late.stderr).contains("already cancelled"));
}

#[test]
fn an_unanswered_request_expires_and_a_late_approval_is_refused() {
    let case = Case::new(
        &[("c1", "echo ran >> count.txt")],
        "approval:\n  timeout_seconds: 1\n",
    );
    let mut run = case.spawn(&[]);
    assert_eq!(finish(&mut run, &case), Some(0), "{}", case.output());
    assert_eq!(case.count(), 0);
    let observation = &case.of("observation")[0];
    assert!(
        observation["content"].as_str().unwrap().contains("expired"),
        "{observation}"
    );
    let request = &case.requests()[0];
    assert_eq!(request["status"], "expired");
    assert_eq!(request["responded_by"], "timeout");
    let id = request["id"].as_str().unwrap();
    let late = case.approvals(&["approve", id]);
    assert_eq!(late.status.code(), Some(3), "{}", text(&late));
    assert_eq!(case.requests()[0]["status"], "expired");
}

#[test]
fn only_listed_approvers_may_decide() {
    let case = Case::new(
        &[("c1", "echo ran >> count.txt")],
        "approval:\n  approvers: [ops-lead, {name: dba, tools: [\"sql_*\"]}]\n",
    );
    let mut run = case.spawn(&[]);
    let id = case.pending(&mut run);
    let mine = case.approvals(&["approve", &id]);
    assert_eq!(mine.status.code(), Some(1), "{}", text(&mine));
    let dba = case.approvals(&["approve", &id, "--as", "dba"]);
    assert_eq!(dba.status.code(), Some(1), "the dba covers sql tools only");
    assert!(String::from_utf8_lossy(&dba.stderr).contains("its approvers: ops-lead"));
    let lead = case.approvals(&["approve", &id, "--as", "ops-lead"]);
    assert!(lead.status.success(), "{}", text(&lead));
    assert_eq!(finish(&mut run, &case), Some(0), "{}", case.output());
    assert_eq!(case.of("approval")[0]["by"], "ops-lead");
    let shown = case.approvals(&["show", &id]);
    let shown = String::from_utf8_lossy(&shown.stdout);
    assert!(shown.contains("refused by"), "{shown}");
}

#[test]
fn approvals_without_a_database_say_where_they_looked() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("none.db");
    let out = Command::new(BIN)
        .args(["approvals", "list", "--db", &db.display().to_string()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no approval database at"));
    assert!(!db.exists(), "looking does not create it");
}

#[test]
fn a_database_the_agents_tools_could_write_is_refused() {
    let case = Case::new(&[("c1", "echo ran >> count.txt")], "");
    std::fs::create_dir(case.path("writable")).unwrap();
    let agent = case.path("agent.yaml");
    let original = std::fs::read_to_string(&agent).unwrap();
    std::fs::write(
        &agent,
        format!(
            "{original}sandbox:\n  writable: [{}]\n",
            case.path("writable").display()
        ),
    )
    .unwrap();
    let ws = case.path("ws").display().to_string();
    for db in [
        case.path("ws/approvals.db"),
        // Through a folder that does not exist yet, then `..`.
        case.path("nothing-yet/../ws/approvals.db"),
        // A path the agent file makes writable for its shell tool.
        case.path("writable/approvals.db"),
    ] {
        let out = Command::new(BIN)
            .arg("run")
            .args(["--agent", &agent.display().to_string()])
            .args(["--workspace", &ws])
            .args(["--db", &db.display().to_string()])
            .arg("go")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(1),
            "{}: {}",
            db.display(),
            text(&out)
        );
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("could approve their own calls"),
            "{}",
            text(&out)
        );
        assert!(!db.exists(), "{}", db.display());
    }
    assert_eq!(case.count(), 0);
}

#[test]
fn a_person_at_the_runs_terminal_may_answer_inline() {
    let case = Case::new(&[("c1", "echo ran >> count.txt")], "");
    let (mut run, mut keyboard) = case.spawn_on_a_terminal();
    case.pending(&mut run);
    let code = case.type_until_done(&mut run, &mut keyboard, b"y\n");
    assert_eq!(code, Some(0), "{}", case.output());
    assert_eq!(case.count(), 1);
    let approval = &case.of("approval")[0];
    assert_eq!(approval["by"], me());
    assert_eq!(approval["channel"], "tty");
}

#[test]
fn regression_signals_did_nothing_once_stderr_was_gone() {
    let case = Case::new(&[("c1", "echo ran >> count.txt")], "");
    let mut run = case.spawn_with(&[], Stdio::null(), Stdio::piped());
    // The terminal went away: nobody reads stderr any more.
    drop(run.stderr.take());
    case.pending(&mut run);
    let pid = nix::unistd::Pid::from_raw(i32::try_from(run.id()).unwrap());
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    assert_eq!(finish(&mut run, &case), Some(130), "{}", case.output());
    assert_eq!(case.requests()[0]["status"], "cancelled");
}

#[test]
fn an_edit_goes_through_the_hooks_again() {
    let case = Case::new(&[("c1", "echo ran >> count.txt")], "hooks: [hooks.yaml]\n");
    std::fs::write(
        case.path("hooks.yaml"),
        "hooks:\n  PreToolUse:\n    - script: \"if grep -q 'rm -r'; then echo 'no recursive rm' >&2; exit 2; fi\"\n      \
         tools: [bash_code_execute_tool]\n      failure_mode: fail_closed\n",
    )
    .unwrap();
    std::fs::create_dir(case.path("ws/keep")).unwrap();
    let mut run = case.spawn(&[]);
    let id = case.pending(&mut run);
    let edit = r#"{"command": "rm -r keep"}"#;
    assert!(
        case.approvals(&["approve", &id, "--edit", edit])
            .status
            .success()
    );
    assert_eq!(finish(&mut run, &case), Some(0), "{}", case.output());
    assert!(case.path("ws/keep").exists(), "the hook's deny stands");
    let observation = &case.of("observation")[0];
    assert_eq!(observation["status"], "denied");
    assert!(
        observation["content"]
            .as_str()
            .unwrap()
            .contains("were refused"),
        "{observation}"
    );
}

/// A parent whose delegations ask (a `SubagentStart` hook answers `ask`); the child appends to
/// `count.txt`.
fn delegating_case() -> Case {
    let case = Case::new(&[("c1", "echo ran >> count.txt")], "");
    let delegate = json!({"role": "assistant", "content": null, "tool_calls": [{"id": "d1", "type": "function",
        "function": {"name": "call_agent", "arguments": {"agent": "child", "task": "count"}}}]});
    std::fs::write(
        case.path("parent.jsonl"),
        format!(
            "{delegate}\n{}",
            json!({"role": "assistant", "content": "parent done"})
        ),
    )
    .unwrap();
    std::fs::write(
        case.path("parent.yaml"),
        "name: parent\nmodel: scripted:parent.jsonl\ntools: [call_agent]\nhooks: [hooks.yaml]\n\
         subagents:\n  child: {file: child.yaml, timeout_seconds: 60}\n",
    )
    .unwrap();
    std::fs::write(
        case.path("hooks.yaml"),
        "hooks:\n  SubagentStart:\n    - script: \"echo '{\\\"decision\\\": \\\"ask\\\", \\\"reason\\\": \\\"check the delegation\\\"}'\"\n",
    )
    .unwrap();
    std::fs::write(
        case.path("child.yaml"),
        "name: child\nmodel: scripted:script.jsonl\ntools: [bash_code_execute_tool]\n",
    )
    .unwrap();
    // The parent is the agent the case runs.
    std::fs::rename(case.path("parent.yaml"), case.path("agent.yaml")).unwrap();
    case
}

#[test]
fn an_approved_delegation_starts_once_and_cannot_be_edited() {
    let case = delegating_case();
    let mut run = case.spawn(&[]);
    let id = case.pending(&mut run);
    let run_id = case.trace()[0]["run_id"].as_str().unwrap().to_owned();
    assert!(case.approvals(&["approve", &id]).status.success());
    assert_eq!(finish(&mut run, &case), Some(0), "{}", case.output());
    assert_eq!(case.count(), 1);
    assert!(case.requests()[0]["consumed_at"].is_i64());
    // Resumed: the approval was used, the child does not start again.
    let mut again = case.spawn(&["--resume", &run_id]);
    assert_eq!(finish(&mut again, &case), Some(0), "{}", case.output());
    assert_eq!(case.count(), 1, "{}", case.output());

    let case = delegating_case();
    let mut run = case.spawn(&[]);
    let id = case.pending(&mut run);
    let edit = r#"{"agent": "child", "task": "something else"}"#;
    assert!(
        case.approvals(&["approve", &id, "--edit", edit])
            .status
            .success()
    );
    assert_eq!(finish(&mut run, &case), Some(0), "{}", case.output());
    assert_eq!(case.count(), 0, "an edited delegation does not start");
    assert!(
        case.output().contains("a delegation runs as asked"),
        "{}",
        case.output()
    );
}

#[test]
fn an_inline_answer_from_someone_not_listed_is_said_and_the_wait_goes_on() {
    use std::io::Write;
    let case = Case::new(
        &[("c1", "echo ran >> count.txt")],
        "approval:\n  approvers: [ops-lead]\n",
    );
    let (mut run, mut keyboard) = case.spawn_on_a_terminal();
    let id = case.pending(&mut run);
    let start = Instant::now();
    while !case.output().contains("not recorded") {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "{}",
            case.output()
        );
        keyboard.write_all(b"y\n").unwrap();
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(
        case.output().contains("may not decide"),
        "{}",
        case.output()
    );
    assert!(run.try_wait().unwrap().is_none(), "the run still waits");
    // The listed approver decides from elsewhere; the inline `e {json}` form is for them too.
    let lead = case.approvals(&["approve", &id, "--as", "ops-lead"]);
    assert!(lead.status.success(), "{}", text(&lead));
    assert_eq!(finish(&mut run, &case), Some(0), "{}", case.output());
    assert_eq!(case.count(), 1);
}

#[test]
fn an_inline_edit_may_come_on_one_line() {
    let case = Case::new(&[("c1", "echo ran >> count.txt")], "");
    let (mut run, mut keyboard) = case.spawn_on_a_terminal();
    case.pending(&mut run);
    let edit = b"e {\"command\": \"echo edited >> count.txt\"}\n";
    let code = case.type_until_done(&mut run, &mut keyboard, edit);
    assert_eq!(code, Some(0), "{}", case.output());
    assert_eq!(
        std::fs::read_to_string(case.path("ws/count.txt")).unwrap(),
        "edited\n"
    );
    assert_eq!(case.of("approval")[0]["channel"], "tty");
}
