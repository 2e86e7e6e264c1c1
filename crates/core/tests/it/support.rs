//! Builders shared by the dispatcher tests.

use std::sync::Arc;

use serde_json::{Value, json};
use tollgate_protocol::{Payload, PayloadCommon, ToolCall, ToolResult};

pub fn common(run_id: &str) -> PayloadCommon {
    PayloadCommon {
        session_id: "session-1".into(),
        run_id: run_id.into(),
        trace_id: "trace-1".into(),
        agent_id: "agent-1".into(),
        source: Some("test".into()),
        metadata: Default::default(),
    }
}

pub fn call(tool: &str, args: Value) -> ToolCall {
    ToolCall {
        tool_name: tool.into(),
        tool_call_id: "call-1".into(),
        tool_input: args,
    }
}

pub fn pre_tool_use(tool: &str, args: Value) -> Arc<Payload> {
    Arc::new(Payload::new(common("run-1"), call(tool, args)))
}

pub fn post_tool_use(tool: &str, result: Value) -> Arc<Payload> {
    Arc::new(Payload::new(
        common("run-1"),
        ToolResult {
            call: call(tool, json!({})),
            tool_result: result,
        },
    ))
}
