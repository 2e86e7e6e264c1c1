#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;
use crate::payload::{
    EventData, Notification, Payload, PayloadCommon, PermissionRequest, SessionEnd,
    SessionEndStatus, ToolCall, ToolResult,
};
use crate::tools::RUNTIME_TOOLS;
use crate::{BUILTIN_EVENTS, Event, ProtocolError};

fn tollgate(name: &str, input: Value) -> (String, Value) {
    let (name, input) = to_tollgate(name, &input, None).unwrap().unwrap();
    (name.to_owned(), input)
}

#[test]
fn bash_keeps_the_command_and_converts_the_timeout_to_seconds() {
    let input = json!({"command": "rm -rf build", "description": "clean", "timeout": 120000});
    assert_eq!(
        tollgate("Bash", input),
        (
            "bash_code_execute_tool".into(),
            json!({"command": "rm -rf build", "timeout_seconds": 120})
        )
    );
    // Whole seconds from 1 to 600: rounded up and clamped; 0 is none.
    let seconds = |ms: Value| tollgate("Bash", json!({"command": "ls", "timeout": ms})).1;
    assert_eq!(
        seconds(json!(1500)),
        json!({"command": "ls", "timeout_seconds": 2})
    );
    assert_eq!(
        seconds(json!(1_200_000)),
        json!({"command": "ls", "timeout_seconds": 600})
    );
    assert_eq!(seconds(json!(0)), json!({"command": "ls"}));
}

#[test]
fn file_tools_become_read_file_and_write_file_with_path() {
    assert_eq!(
        tollgate("Read", json!({"file_path": "/a", "limit": 5})),
        ("read_file".into(), json!({"path": "/a"}))
    );
    assert_eq!(
        tollgate("Write", json!({"file_path": "/a", "content": "x"})),
        ("write_file".into(), json!({"path": "/a", "content": "x"}))
    );
    let edit =
        json!({"file_path": "/a", "old_string": "o", "new_string": "n", "replace_all": true});
    assert_eq!(
        tollgate("Edit", edit),
        (
            "write_file".into(),
            json!({"path": "/a", "content": "n", "old_string": "o", "replace_all": true})
        )
    );
    let edits =
        json!([{"old_string": "a", "new_string": "b"}, {"old_string": "c", "new_string": "d"}]);
    assert_eq!(
        tollgate("MultiEdit", json!({"file_path": "/a", "edits": edits})),
        (
            "write_file".into(),
            json!({"path": "/a", "content": "b\nd", "edits": edits})
        )
    );
}

#[test]
fn task_and_agent_become_call_agent() {
    let input = json!({"description": "d", "prompt": "find it", "subagent_type": "Explore"});
    assert_eq!(
        tollgate("Task", input),
        (
            "call_agent".into(),
            json!({"agent": "Explore", "task": "find it"})
        )
    );
    assert_eq!(
        tollgate("Agent", json!({"prompt": "p"})),
        (
            "call_agent".into(),
            json!({"agent": "general-purpose", "task": "p"})
        )
    );
}

#[test]
fn unmapped_tools_stay_and_input_that_does_not_fit_names_the_field() {
    assert_eq!(
        to_tollgate("Glob", &json!({"pattern": "*"}), None),
        Ok(None)
    );
    assert_eq!(to_tollgate("mcp__db__query", &json!({}), None), Ok(None));
    for (name, input, field) in [
        ("Bash", json!({"cmd": "ls"}), "`command`"),
        (
            "Bash",
            json!({"command": "ls", "timeout": "1s"}),
            "`timeout`",
        ),
        (
            "Edit",
            json!({"file_path": "/a", "new_string": "n"}),
            "`old_string`",
        ),
        ("Task", json!({"description": "d"}), "`prompt`"),
        (
            "MultiEdit",
            json!({"file_path": "/a", "edits": [{}]}),
            "`new_string`",
        ),
        ("Read", json!("not an object"), "object"),
    ] {
        let why = to_tollgate(name, &input, None).unwrap_err();
        assert!(why.starts_with(name) && why.contains(field), "{why}");
    }
}

#[test]
fn tollgate_calls_get_claude_codes_names_and_fields() {
    let root = Some(Path::new("/ws"));
    let cases = [
        (
            "bash_code_execute_tool",
            json!({"command": "ls", "timeout_seconds": 5}),
            "Bash",
            json!({"command": "ls", "timeout": 5000}),
        ),
        (
            "read_file",
            json!({"path": "src/a.rs"}),
            "Read",
            json!({"file_path": "/ws/src/a.rs"}),
        ),
        (
            "write_file",
            json!({"path": "a", "content": "x"}),
            "Write",
            json!({"file_path": "/ws/a", "content": "x"}),
        ),
        (
            "write_file",
            json!({"path": "a", "content": "n", "old_string": "o"}),
            "Edit",
            json!({"file_path": "/ws/a", "new_string": "n", "old_string": "o"}),
        ),
        (
            "call_agent",
            json!({"agent": "analyst", "task": "count orders\nper region"}),
            "Agent",
            json!({"subagent_type": "analyst", "prompt": "count orders\nper region", "description": "count orders"}),
        ),
        (
            "sql_query",
            json!({"sql": "SELECT 1"}),
            "sql_query",
            json!({"sql": "SELECT 1"}),
        ),
        ("mcp__db__q", json!({"q": 1}), "mcp__db__q", json!({"q": 1})),
    ];
    for (ours, input, claude, expected) in cases {
        assert_eq!(
            to_claude(ours, &input, root),
            (claude.to_owned(), expected),
            "{ours}"
        );
    }
    // An absolute path stays; without a root, paths are copied.
    let (_, input) = to_claude("read_file", &json!({"path": "/etc/x"}), root);
    assert_eq!(input, json!({"file_path": "/etc/x"}));
    let (_, input) = to_claude("read_file", &json!({"path": "a"}), None);
    assert_eq!(input, json!({"file_path": "a"}));
}

#[test]
fn file_paths_under_the_root_come_back_relative() {
    let root = Some(Path::new("/ws"));
    let back = |p: &str| {
        to_tollgate("Read", &json!({"file_path": p}), root)
            .unwrap()
            .unwrap()
            .1
    };
    assert_eq!(back("/ws/a/b.txt"), json!({"path": "a/b.txt"}));
    assert_eq!(back("/wsx/a"), json!({"path": "/wsx/a"}));
    assert_eq!(back("/etc/passwd"), json!({"path": "/etc/passwd"}));
    assert_eq!(back("/ws"), json!({"path": "/ws"}));
}

/// `tollgate check` names Claude Code tools' counterparts from the same table: every row must
/// say what the mapping does.
#[test]
fn the_table_is_the_mapping() {
    let input = json!({
        "command": "ls", "file_path": "/a", "content": "c", "old_string": "o",
        "new_string": "n", "edits": [{"old_string": "o", "new_string": "n"}], "prompt": "p",
    });
    for (claude, ours) in CLAUDE_CODE_TOOLS {
        let mapped = to_tollgate(claude, &input, None).unwrap().map(|(n, _)| n);
        assert_eq!(mapped, ours, "{claude}");
        if let Some(ours) = ours {
            assert!(RUNTIME_TOOLS.contains(&ours), "{ours}");
        }
    }
    assert_eq!(aliases("Task"), ["Agent"]);
    assert_eq!(aliases("Bash"), [] as [&str; 0]);
}

fn segment() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9_-][a-zA-Z0-9_.-]{0,8}".prop_filter("not a dot step", |s| s != "." && s != "..")
}

fn relative_path() -> impl Strategy<Value = String> {
    prop::collection::vec(segment(), 1..4).prop_map(|parts| parts.join("/"))
}

/// Well-formed calls of the runtime's tools, as the runtime's tools take them.
fn tollgate_call() -> impl Strategy<Value = (String, Value)> {
    let edits = prop::collection::vec((any::<String>(), any::<String>()), 1..4);
    prop_oneof![
        (any::<String>(), prop::option::of(1_u64..=600)).prop_map(|(command, secs)| {
            let mut input = json!({"command": command});
            if let Some(secs) = secs {
                input["timeout_seconds"] = json!(secs);
            }
            ("bash_code_execute_tool".to_owned(), input)
        }),
        relative_path().prop_map(|p| ("read_file".to_owned(), json!({"path": p}))),
        (relative_path(), any::<String>())
            .prop_map(|(p, c)| ("write_file".to_owned(), json!({"path": p, "content": c}))),
        (
            relative_path(),
            any::<String>(),
            any::<String>(),
            prop::option::of(any::<bool>())
        )
            .prop_map(|(p, c, old, all)| {
                let mut input = json!({"path": p, "content": c, "old_string": old});
                if let Some(all) = all {
                    input["replace_all"] = json!(all);
                }
                ("write_file".to_owned(), input)
            }),
        (relative_path(), edits).prop_map(|(p, edits)| {
            let content: Vec<&str> = edits.iter().map(|(_, new)| new.as_str()).collect();
            let list: Vec<Value> = edits
                .iter()
                .map(|(old, new)| json!({"old_string": old, "new_string": new}))
                .collect();
            let input = json!({"path": p, "content": content.join("\n"), "edits": list});
            ("write_file".to_owned(), input)
        }),
        ("[a-z][a-z_-]{0,12}", any::<String>()).prop_map(|(agent, task)| (
            "call_agent".to_owned(),
            json!({"agent": agent, "task": task})
        )),
        any::<String>().prop_map(|sql| ("sql_query".to_owned(), json!({"sql": sql}))),
    ]
}

proptest! {
    /// tollgate → Claude Code → tollgate gives back the call, with a root and without one.
    #[test]
    fn tollgate_calls_round_trip_through_claude_code(
        (name, input) in tollgate_call(),
        root in prop::option::of(relative_path().prop_map(|p| PathBuf::from("/").join(p))),
    ) {
        let root = root.as_deref();
        let (claude, claude_input) = to_claude(&name, &input, root);
        let back = to_tollgate(&claude, &claude_input, root).map_err(TestCaseError::fail)?;
        let back = back.map_or((claude.clone(), claude_input), |(n, i)| (n.to_owned(), i));
        prop_assert_eq!(back, (name, input));
    }

    /// Any input, however malformed, maps without panicking in either direction.
    #[test]
    fn any_input_maps_without_panicking(name in "[A-Za-z_]{1,24}", input in any_json()) {
        let (claude, claude_input) = to_claude(&name, &input, Some(Path::new("/w")));
        let _ = to_tollgate(&claude, &claude_input, Some(Path::new("/w")));
        let _ = to_tollgate(&name, &input, None);
    }
}

fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        ".{0,8}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        let keys = prop_oneof![
            Just("command".to_owned()),
            Just("path".to_owned()),
            Just("file_path".to_owned()),
            Just("content".to_owned()),
            Just("edits".to_owned()),
            Just("timeout".to_owned()),
            Just("timeout_seconds".to_owned()),
            "[a-z]{1,4}",
        ];
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(keys, inner, 0..5)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn common() -> PayloadCommon {
    PayloadCommon {
        session_id: "s1".into(),
        run_id: "r1".into(),
        trace_id: "r1".into(),
        agent_id: "ops".into(),
        source: Some("cli".into()),
        metadata: Default::default(),
    }
}

fn context() -> ClaudeContext {
    ClaudeContext {
        cwd: PathBuf::from("/ws"),
        transcript_path: "/tmp/trace.jsonl".into(),
        permission_mode: "default".into(),
        agent: None,
    }
}

#[test]
fn a_pre_tool_use_payload_has_claude_codes_common_and_tool_fields() {
    let call = ToolCall {
        tool_name: "bash_code_execute_tool".into(),
        tool_call_id: "call_1".into(),
        tool_input: json!({"command": "rm -rf build"}),
    };
    let payload = Payload::new(common(), call);
    assert_eq!(
        to_claude_payload(&payload, "PreToolUse", &context()),
        json!({
            "session_id": "s1", "transcript_path": "/tmp/trace.jsonl", "cwd": "/ws",
            "permission_mode": "default", "hook_event_name": "PreToolUse",
            "tool_name": "Bash", "tool_input": {"command": "rm -rf build"}, "tool_use_id": "call_1",
        })
    );
}

#[test]
fn post_tool_use_has_the_tool_response_and_sub_agents_name_themselves() {
    let done = ToolResult {
        call: ToolCall {
            tool_name: "bash_code_execute_tool".into(),
            tool_call_id: "c".into(),
            tool_input: json!({"command": "ls"}),
        },
        tool_result: json!({"exit_code": 0, "stdout": "a\n", "stderr": ""}),
    };
    let mut ctx = context();
    ctx.agent = Some(SubAgent {
        id: "task-1".into(),
        agent_type: "analyst".into(),
    });
    let json = to_claude_payload(&Payload::new(common(), done), "PostToolUse", &ctx);
    assert_eq!(
        json["tool_response"],
        json!({"stdout": "a\n", "stderr": "", "interrupted": false, "isImage": false})
    );
    assert_eq!(
        (json["agent_id"].as_str(), json["agent_type"].as_str()),
        (Some("task-1"), Some("analyst"))
    );
}

#[test]
fn stop_tells_whether_a_hook_already_kept_the_session_going() {
    let end = |continued| {
        Payload::new(
            common(),
            SessionEnd {
                status: SessionEndStatus::Completed,
                error: None,
                answer: Some("done".into()),
                continued,
            },
        )
    };
    let first = to_claude_payload(&end(0), "Stop", &context());
    assert_eq!(
        (
            first["stop_hook_active"].clone(),
            first["last_assistant_message"].clone()
        ),
        (json!(false), json!("done"))
    );
    assert_eq!(
        to_claude_payload(&end(1), "Stop", &context())["stop_hook_active"],
        json!(true)
    );
    let session_end = to_claude_payload(&end(0), "SessionEnd", &context());
    assert_eq!(session_end["reason"], json!("other"));
    assert!(session_end.get("stop_hook_active").is_none());
}

#[test]
fn event_names_are_the_declared_claude_name_or_claude_codes_name_of_the_event() {
    assert_eq!(hook_event_name(&Event::SessionEnd, "Stop"), "Stop");
    assert_eq!(
        hook_event_name(&Event::SessionEnd, "SessionEnd"),
        "SessionEnd"
    );
    assert_eq!(
        hook_event_name(&Event::SessionEnd, "session_end"),
        "SessionEnd"
    );
    assert_eq!(
        hook_event_name(&Event::PreToolUse, "BeforeToolUse"),
        "PreToolUse"
    );
    assert_eq!(
        hook_event_name(&Event::PostToolUseCancelled, "post_tool_use_cancelled"),
        "PostToolUseFailure"
    );
    // A Claude name declared for another event does not leak.
    assert_eq!(
        hook_event_name(&Event::UserTurn, "Stop"),
        "UserPromptSubmit"
    );
    for event in BUILTIN_EVENTS {
        assert!(
            !hook_event_name(&event, event.as_str()).contains('_'),
            "{event}"
        );
    }
}

#[test]
fn a_claude_code_payload_reads_back_as_tollgates() {
    let stdin = json!({
        "session_id": "abc", "transcript_path": "/t.jsonl", "cwd": "/ws", "permission_mode": "plan",
        "hook_event_name": "PreToolUse", "tool_name": "Write",
        "tool_input": {"file_path": "/ws/notes/a.md", "content": "x"}, "tool_use_id": "toolu_1",
        "some_future_field": 1,
    });
    let (payload, ctx) = from_claude_payload(stdin).unwrap();
    assert_eq!(payload.event(), Event::PreToolUse);
    let call = payload.tool_call().unwrap();
    assert_eq!(
        (
            call.tool_name.as_str(),
            &call.tool_input,
            call.tool_call_id.as_str()
        ),
        (
            "write_file",
            &json!({"path": "notes/a.md", "content": "x"}),
            "toolu_1"
        )
    );
    assert_eq!(
        (ctx.cwd, ctx.permission_mode.as_str()),
        (PathBuf::from("/ws"), "plan")
    );
    let (stop, _) = from_claude_payload(json!({
        "hook_event_name": "Stop", "stop_hook_active": true, "last_assistant_message": "ok",
    }))
    .unwrap();
    let EventData::SessionEnd(end) = stop.data else {
        panic!("not session_end")
    };
    assert_eq!((end.answer.as_deref(), end.continued), (Some("ok"), 1));
    // The call as sent rides along, for hooks in Claude Code's shape.
    assert_eq!(
        payload.common.metadata[SENT_CALL],
        json!({"tool_name": "Write", "tool_input": {"file_path": "/ws/notes/a.md", "content": "x"}})
    );
    let seen = to_claude_payload(&payload, "PreToolUse", &ctx_of("/ws"));
    assert_eq!(
        seen["tool_input"],
        json!({"file_path": "/ws/notes/a.md", "content": "x"})
    );
    for bad in [
        json!([]),
        json!({}),
        json!({"hook_event_name": "Notification"}),
        json!({"hook_event_name": "PreCompact", "trigger": "manual"}),
        json!({"hook_event_name": "PreToolUse"}),
    ] {
        assert!(from_claude_payload(bad.clone()).is_err(), "{bad}");
    }
}

fn ctx_of(cwd: &str) -> ClaudeContext {
    ClaudeContext {
        cwd: PathBuf::from(cwd),
        ..ClaudeContext::default()
    }
}

/// The regression: a call whose input does not fit its tool was passed on under Claude Code's
/// name, where no policy written for the runtime's tool could see it.
#[test]
fn a_mapped_tools_call_that_does_not_fit_is_an_error_naming_the_field() {
    for (input, field) in [
        (json!({"command": "rm -rf /", "timeout": -1}), "`timeout`"),
        (json!({"command": "rm -rf /", "timeout": "30"}), "`timeout`"),
        (json!({"cmd": "rm -rf /"}), "`command`"),
    ] {
        let stdin = json!({"session_id": "s", "cwd": "/tmp", "hook_event_name": "PreToolUse",
            "tool_name": "Bash", "tool_use_id": "t", "tool_input": input});
        match from_claude_payload(stdin) {
            Err(ProtocolError::UnfitToolInput(why)) => assert!(why.contains(field), "{why}"),
            other => panic!("{other:?}"),
        }
    }
    let stdin = json!({"session_id": "s", "cwd": "/tmp", "hook_event_name": "PreToolUse",
        "tool_name": "Bash", "tool_use_id": "t", "tool_input": {"command": "ls", "timeout": null}});
    let (payload, _) = from_claude_payload(stdin).unwrap();
    assert_eq!(
        payload.tool_call().unwrap().tool_input,
        json!({"command": "ls"})
    );
}

#[test]
fn the_ask_events_carry_claude_codes_fields_both_ways() {
    let ctx = ClaudeContext {
        cwd: PathBuf::from("/ws"),
        ..ClaudeContext::default()
    };
    let request = Payload::new(
        PayloadCommon::default(),
        PermissionRequest {
            call: ToolCall {
                tool_name: "write_file".into(),
                tool_call_id: "c1".into(),
                tool_input: json!({"path": "a.txt", "content": "x"}),
            },
            reason: "confirmation_tools".into(),
        },
    );
    let name = hook_event_name(&request.event(), "PermissionRequest");
    let claude = to_claude_payload(&request, &name, &ctx);
    assert_eq!(claude["hook_event_name"], "PermissionRequest");
    assert_eq!(claude["tool_name"], "Write");
    assert_eq!(claude["tool_input"]["file_path"], "/ws/a.txt");
    assert_eq!(claude["permission_suggestions"], json!([]));
    let (back, _) = from_claude_payload(claude).unwrap();
    assert_eq!(back.match_target(), Some("write_file"));

    let notice = Payload::new(
        PayloadCommon::default(),
        Notification {
            notification_type: "permission_prompt".into(),
            message: "agent `a` needs approval to call `write_file`".into(),
            tool_name: Some("write_file".into()),
            request_id: Some("r1".into()),
        },
    );
    let claude = to_claude_payload(&notice, "Notification", &ctx);
    assert_eq!(
        (&claude["notification_type"], &claude["message"]),
        (
            &json!("permission_prompt"),
            &json!("Claude needs your permission to use Write")
        )
    );
    let (back, _) = from_claude_payload(claude).unwrap();
    assert_eq!(back.event(), Event::Notification);
}
