//! Command hooks run as real `/bin/sh -c` processes through the real dispatcher.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tollgate_core::{DispatchOutcome, Dispatcher, HookOptions, HookTimeout, RegistryBuilder};
use tollgate_handlers::CommandHook;
use tollgate_handlers::command::{Containment, Network, Policy};
use tollgate_protocol::wire::PayloadWire;
use tollgate_protocol::{
    Decision, Event, FailureMode, HookSource, Payload, PayloadCommon, RunStatus, ToolCall, UserTurn,
};

fn tool_call(args: Value) -> Arc<Payload> {
    let common = PayloadCommon {
        session_id: "s1".into(),
        run_id: "r1".into(),
        trace_id: "t1".into(),
        agent_id: "a1".into(),
        ..Default::default()
    };
    Arc::new(Payload::new(
        common,
        ToolCall {
            tool_name: "bash_code_execute_tool".into(),
            tool_call_id: "call_1".into(),
            tool_input: args,
        },
    ))
}

struct Setup {
    dir: tempfile::TempDir,
}

impl Setup {
    fn new() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn path(&self, name: &str) -> std::path::PathBuf {
        self.dir.path().join(name)
    }

    fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.path(name)).unwrap_or_default()
    }

    /// A trusted hook running in the setup's directory, which its sandbox may write (as an
    /// admin's `sandbox: {writable: [...]}` grants).
    fn hook(&self, line: &str) -> CommandHook {
        self.hook_from(HookSource::AdminConfig, line)
    }

    fn hook_from(&self, source: HookSource, line: &str) -> CommandHook {
        let network = if source.is_trusted() {
            Network::On
        } else {
            Network::Off
        };
        CommandHook::new("cmd", line, source)
            .with_cwd(self.dir.path())
            .with_containment(Containment::Sandbox(
                Policy::new(network).writable(self.dir.path()),
            ))
    }

    async fn dispatch(
        &self,
        hooks: Vec<(CommandHook, HookOptions)>,
        payload: Arc<Payload>,
    ) -> DispatchOutcome {
        let mut registry = RegistryBuilder::new();
        for (hook, options) in hooks {
            registry.register_with(payload.event(), hook, options);
        }
        Dispatcher::new(registry.build().unwrap())
            .dispatch(payload)
            .await
    }

    async fn one(&self, line: &str, payload: Arc<Payload>) -> DispatchOutcome {
        self.dispatch(vec![(self.hook(line), HookOptions::default())], payload)
            .await
    }
}

fn wire_json(payload: &Payload) -> String {
    serde_json::to_string(&PayloadWire::from(payload).to_json()).unwrap()
}

#[tokio::test]
async fn arguments_reach_the_hook_as_data_never_as_shell_text() {
    let setup = Setup::new();
    let payload = tool_call(json!({"command": "$(touch pwned)"}));
    let hooks = vec![
        (
            setup.hook(r#"echo "$ARGUMENTS" >> log"#),
            HookOptions::default().priority(1),
        ),
        (
            setup.hook(r#"printf "%s\n" $ARGUMENTS >> log"#),
            HookOptions::default().priority(2),
        ),
        (
            setup.hook(r#"printf '%s\n' ${ARGUMENTS} >> log"#),
            HookOptions::default().priority(3),
        ),
        (
            setup.hook(r#"echo '$ARGUMENTS' >> literal"#),
            HookOptions::default().priority(4),
        ),
    ];
    let outcome = setup.dispatch(hooks, payload.clone()).await;
    assert!(
        outcome
            .runs
            .iter()
            .all(|r| r.status == RunStatus::Completed),
        "{:?}",
        outcome.runs
    );
    let expected = wire_json(&payload);
    assert_eq!(
        setup.read("log"),
        format!("{expected}\n{expected}\n{expected}\n")
    );
    assert!(
        !setup.path("pwned").exists(),
        "the payload was executed as shell text"
    );
    assert_eq!(setup.read("literal"), "$ARGUMENTS\n");
}

#[tokio::test]
async fn large_payloads_are_truncated_in_the_env_and_whole_on_stdin() {
    let setup = Setup::new();
    let payload = tool_call(json!({"text": "漢字".repeat(50_000)})); // 300 KB
    let line = r#"printf '%s' "$HOOK_PAYLOAD" > env.json; cat > stdin.json; /bin/echo "$HOOK_EVENT" > started"#;
    let outcome = setup.one(line, payload.clone()).await;
    assert_eq!(
        outcome.runs[0].status,
        RunStatus::Completed,
        "{:?}",
        outcome.runs[0].error
    );
    let env = setup.read("env.json");
    assert!(
        env.len() <= 96 * 1024,
        "HOOK_PAYLOAD is {} bytes",
        env.len()
    );
    let env: Value = serde_json::from_str(&env).unwrap();
    assert_eq!(env["payload_truncated"], json!(true));
    assert_eq!(env["tool_name"], json!("bash_code_execute_tool"));
    assert_eq!(setup.read("stdin.json"), wire_json(&payload));
    assert_eq!(
        setup.read("started"),
        "pre_tool_use\n",
        "a program started by the hook failed to start"
    );
}

#[tokio::test]
async fn a_hook_that_never_reads_a_2_mb_stdin_finishes() {
    let setup = Setup::new();
    let payload = tool_call(json!({"blob": "x".repeat(2 * 1024 * 1024)}));
    let outcome = setup.one("true", payload).await;
    assert_eq!(outcome.runs[0].status, RunStatus::Completed);
    assert_eq!(outcome.decision, Decision::Allow);
}

/// Global ids of the processes whose command line contains `marker` (the sandbox's PID
/// namespace numbers its processes its own way, so they are found from outside).
fn pids_with(marker: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(marker))
        })
        .collect()
}

async fn wait_until_gone(marker: &str) -> bool {
    for _ in 0..200 {
        if pids_with(marker).is_empty() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

/// A hook whose script starts background sleeps in every escaping style (the analyzer
/// refuses `setsid` in a hook's line, but it cannot read a script) and outlives its
/// deadline; `started` is whether they were all running before the deadline.
async fn sleeper(setup: &Setup, mode: FailureMode, marker: &str) -> (DispatchOutcome, bool) {
    let script = format!(
        "set -m; sleep {marker}1 & setsid sleep {marker}2 & (sleep {marker}3 &) ; \
         nohup sleep {marker}4 >/dev/null 2>&1 & sleep {marker}5\n"
    );
    std::fs::write(setup.path("escape.sh"), script).unwrap();
    let line = "bash ./escape.sh";
    let options = HookOptions::default()
        .timeout(HookTimeout::from_secs(3).unwrap())
        .failure_mode(mode);
    let dispatch = setup.dispatch(vec![(setup.hook(line), options)], tool_call(json!({})));
    let watch = async {
        for _ in 0..100 {
            if pids_with(marker).len() >= 5 {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        false
    };
    tokio::join!(dispatch, watch)
}

#[tokio::test]
async fn a_hook_past_its_deadline_is_killed_with_everything_it_started() {
    let (open, closed) = (Setup::new(), Setup::new());
    let started = Instant::now();
    let (open_marker, closed_marker) = ("86400.101", "86400.202");
    let ((open_outcome, open_started), (closed_outcome, closed_started)) = tokio::join!(
        sleeper(&open, FailureMode::FailOpen, open_marker),
        sleeper(&closed, FailureMode::FailClosed, closed_marker)
    );
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "the deadline did not stop the hook"
    );
    for (outcome, started, marker) in [
        (&open_outcome, open_started, open_marker),
        (&closed_outcome, closed_started, closed_marker),
    ] {
        assert_eq!(outcome.runs[0].status, RunStatus::TimedOut);
        assert!(started, "the hook's processes did not all start");
        assert!(
            wait_until_gone(marker).await,
            "processes {:?} outlived the hook",
            pids_with(marker)
        );
    }
    assert_eq!(open_outcome.decision, Decision::Allow);
    assert_eq!(open_outcome.runs[0].decision, None);
    assert!(closed_outcome.is_denied());
    assert!(
        closed_outcome
            .decision
            .reason()
            .unwrap()
            .contains("timed_out")
    );
}

#[tokio::test]
async fn missing_or_non_executable_scripts_are_failures_not_allows() {
    let setup = Setup::new();
    std::fs::write(setup.path("not-exec.sh"), "#!/bin/sh\nexit 0\n").unwrap();
    for line in ["./missing.sh", "./not-exec.sh"] {
        let options = HookOptions::default().failure_mode(FailureMode::FailClosed);
        let outcome = setup
            .dispatch(vec![(setup.hook(line), options)], tool_call(json!({})))
            .await;
        assert_eq!(outcome.runs[0].status, RunStatus::Errored, "{line}");
        assert!(outcome.is_denied(), "{line}");
    }
}

async fn decision_of(line: &str) -> DispatchOutcome {
    Setup::new()
        .one(line, tool_call(json!({"command": "ls"})))
        .await
}

#[tokio::test]
async fn exit_codes_and_outputs_map_to_decisions() {
    let silent = decision_of("exit 2").await;
    assert!(silent.is_denied());
    assert!(silent.decision.reason().unwrap().contains("exit 2"));
    let reasoned = decision_of("echo 'not on prod' >&2; exit 2").await;
    assert_eq!(reasoned.decision, Decision::deny("not on prod"));
    let native = decision_of(r#"echo '{"allow":false,"error":"no"}'"#).await;
    assert_eq!(native.decision, Decision::deny("no"));
    let cc_deny = decision_of(
        r#"echo '{"hookSpecificOutput":{"permissionDecision":"deny","permissionDecisionReason":"no"}}'"#,
    )
    .await;
    assert_eq!(cc_deny.decision, Decision::deny("no"));
    let cc_ask = decision_of(
        r#"echo '{"hookSpecificOutput":{"permissionDecision":"ask","permissionDecisionReason":"sure?"}}'"#,
    )
    .await;
    assert_eq!(cc_ask.decision, Decision::ask("sure?"));
    let rewrite =
        decision_of(r#"echo '{"hookSpecificOutput":{"updatedInput":{"command":"ls -la"}}}'"#).await;
    assert_eq!(rewrite.modified_args, Some(json!({"command": "ls -la"})));
    assert_eq!(rewrite.decision, Decision::Allow);
}

#[tokio::test]
async fn exit_1_is_a_failure_never_an_allow_or_a_deny() {
    let outcome = decision_of("echo oops >&2; exit 1").await;
    let run = &outcome.runs[0];
    assert_eq!(run.status, RunStatus::Errored);
    assert_eq!(run.decision, None);
    assert!(
        run.error
            .as_deref()
            .unwrap()
            .contains("exit status 1: oops")
    );
    assert_eq!(
        outcome.decision,
        Decision::Allow,
        "fail_open: the call proceeds"
    );
    assert!(
        outcome
            .side_effects
            .iter()
            .any(|s| s.effect.kind == "hook_failure")
    );
}

#[tokio::test]
async fn malformed_or_oversized_output_is_a_failure() {
    for line in [
        r#"printf 'ready\n{"allow":false}\n'"#,
        r#"echo '{"allow":"false"}'"#,
        "echo '{} {}'",
    ] {
        let outcome = decision_of(line).await;
        assert_eq!(outcome.runs[0].status, RunStatus::InvalidOutput, "{line}");
    }
    let started = Instant::now();
    let flood = decision_of("head -c 50000000 /dev/zero").await;
    assert_eq!(flood.runs[0].status, RunStatus::Errored);
    assert!(
        flood.runs[0]
            .error
            .as_deref()
            .unwrap()
            .contains("exceeded the cap")
    );
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn plain_text_is_context_on_user_turn() {
    let payload = Arc::new(Payload::new(
        PayloadCommon::default(),
        UserTurn {
            prompt: "hi".into(),
        },
    ));
    let outcome = Setup::new().one("echo 'the repo uses pnpm'", payload).await;
    assert_eq!(outcome.additional_context, ["the repo uses pnpm"]);
}

#[tokio::test]
async fn refused_commands_never_run_and_fail_on_every_trigger() {
    let setup = Setup::new();
    let line = r#"eval "touch ran""#;
    let external =
        CommandHook::new("skill-hook", line, HookSource::Skill).with_cwd(setup.dir.path());
    assert!(external.refusal().is_some());
    let closed = HookOptions::default().failure_mode(FailureMode::FailClosed);
    let mut registry = RegistryBuilder::new();
    registry.register_with(Event::PreToolUse, external, closed);
    let dispatcher = Dispatcher::new(registry.build().unwrap());
    for _ in 0..2 {
        let outcome = dispatcher.dispatch(tool_call(json!({}))).await;
        assert_eq!(outcome.runs[0].status, RunStatus::Refused);
        assert!(outcome.is_denied());
    }
    assert!(!setup.path("ran").exists());

    let trusted = setup.hook(line);
    assert!(
        trusted.refusal().is_none(),
        "escalate is allowed for trusted sources"
    );
    let mut registry = RegistryBuilder::new();
    registry.register(Event::PreToolUse, trusted);
    let outcome = Dispatcher::new(registry.build().unwrap())
        .dispatch(tool_call(json!({})))
        .await;
    assert_eq!(outcome.runs[0].status, RunStatus::Completed);
    assert!(setup.path("ran").exists());
}

#[tokio::test]
async fn a_failing_command_is_logged_at_warn() {
    let captured = crate::logs::Captured::default();
    let _guard = captured.install();
    let outcome = decision_of("echo boom >&2; exit 1").await;
    assert_eq!(outcome.runs[0].status, RunStatus::Errored);
    let log = captured.text();
    assert!(log.contains("WARN"), "{log}");
    assert!(
        log.contains("hook failed") && log.contains("exit status 1: boom"),
        "{log}"
    );
}

#[tokio::test]
async fn bash_forms_the_analyzer_vets_also_run() {
    // The analyzer parses bash; the runner must run bash, or `<<<` would be a syntax error
    // (exit 2, read as a deny) under dash.
    let outcome = decision_of(r#"grep -q '"tool_name":"bash_' <<<"$HOOK_PAYLOAD" && echo '{"decision":"deny","reason":"bash tool"}'"#).await;
    assert_eq!(
        outcome.runs[0].status,
        RunStatus::Completed,
        "{:?}",
        outcome.runs[0].error
    );
    assert_eq!(outcome.decision, Decision::deny("bash tool"));
}

#[tokio::test]
async fn echo_keeps_json_escapes_in_the_payload_intact() {
    let setup = Setup::new();
    let payload = tool_call(json!({"command": "printf 'a\\nb' \\\\ done"}));
    setup
        .one(r#"echo "$ARGUMENTS" >> audit.log"#, payload.clone())
        .await;
    let line = setup.read("audit.log");
    assert_eq!(line, format!("{}\n", wire_json(&payload)));
    assert!(serde_json::from_str::<Value>(line.trim_end()).is_ok());
}

#[tokio::test]
async fn no_hook_inherits_the_runtimes_environment_unless_named() {
    // Cargo sets CARGO_PKG_NAME for the test process: a stand-in for an API key.
    assert!(std::env::var_os("CARGO_PKG_NAME").is_some());
    let setup = Setup::new();
    let run = |hook: CommandHook| {
        let mut registry = RegistryBuilder::new();
        registry.register(Event::PreToolUse, hook);
        Dispatcher::new(registry.build().unwrap())
    };
    run(setup.hook_from(HookSource::Skill, "env > skill.env"))
        .dispatch(tool_call(json!({})))
        .await;
    run(setup.hook("env > admin.env"))
        .dispatch(tool_call(json!({})))
        .await;
    run(setup.hook("env > named.env").with_env(["CARGO_PKG_NAME"]))
        .dispatch(tool_call(json!({})))
        .await;
    let (skill, admin) = (setup.read("skill.env"), setup.read("admin.env"));
    for env in [&skill, &admin] {
        assert!(!env.contains("CARGO_PKG_NAME="), "{env}");
        assert!(
            env.contains("PATH=") && env.contains("HOOK_PAYLOAD="),
            "{env}"
        );
        assert!(env.contains("HOOK_SCRATCH_DIR="), "{env}");
    }
    assert!(
        setup
            .read("named.env")
            .contains("CARGO_PKG_NAME=tollgate-handlers")
    );
}

#[tokio::test]
async fn an_answer_is_not_lost_to_a_background_job_holding_stdout() {
    let started = Instant::now();
    let outcome = decision_of(r#"echo '{"allow":false,"error":"no"}'; sleep 30 &"#).await;
    assert_eq!(
        outcome.runs[0].status,
        RunStatus::Completed,
        "{:?}",
        outcome.runs[0].error
    );
    assert_eq!(outcome.decision, Decision::deny("no"));
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn arguments_in_a_tab_indented_heredoc_still_expand_to_the_payload() {
    let setup = Setup::new();
    let payload = tool_call(json!({"command": "ls"}));
    setup
        .one("cat <<-EOF > out\n\t$ARGUMENTS\n\tEOF", payload.clone())
        .await;
    assert_eq!(setup.read("out"), format!("{}\n", wire_json(&payload)));
}

#[tokio::test]
async fn the_documented_jq_example_runs_as_an_external_hook() {
    let setup = Setup::new();
    let line = r#"jq -r .tool_name <<<"$HOOK_PAYLOAD" | grep -q '^bash_' && echo '{}'"#;
    let hook = CommandHook::new("jq", line, HookSource::Skill).with_cwd(setup.dir.path());
    assert!(hook.refusal().is_none(), "{:?}", hook.refusal());
    let mut registry = RegistryBuilder::new();
    registry.register(Event::PreToolUse, hook);
    let outcome = Dispatcher::new(registry.build().unwrap())
        .dispatch(tool_call(json!({})))
        .await;
    assert_eq!(
        outcome.runs[0].status,
        RunStatus::Completed,
        "{:?}",
        outcome.runs[0].error
    );
    assert_eq!(outcome.decision, Decision::Allow);
}
