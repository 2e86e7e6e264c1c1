//! The registry measured by the `dispatch` bench and the `dispatch_bench` example: 100 no-op
//! function hooks on `pre_tool_use`, of which `matching` have a `tools` glob that matches
//! `bash_code_execute_tool`; the others have globs for other tools.

use std::sync::Arc;

use serde_json::json;
use tollgate_core::{Dispatcher, HookOptions, RegistryBuilder, ToolMatcher, hook_fn};
use tollgate_protocol::{Event, Outcome, Payload, PayloadCommon, ToolCall};

/// Builds the dispatcher. Matching hooks are spread evenly among the others.
pub fn dispatcher(hooks: usize, matching: usize) -> Dispatcher {
    let mut builder = RegistryBuilder::new();
    let every = hooks / matching.max(1);
    for i in 0..hooks {
        let pattern = if matching > 0 && i % every == 0 && i / every < matching {
            "bash_*".to_owned()
        } else {
            format!("other_{i}_*")
        };
        let tools = ToolMatcher::one(&pattern).unwrap_or_else(|e| panic!("{e}"));
        let options = HookOptions::default().tools(tools).priority((i % 7) as i32);
        builder.register_with(
            Event::PreToolUse,
            hook_fn(format!("noop-{i}"), |_| async { Ok(Outcome::allow()) }),
            options,
        );
    }
    Dispatcher::new(builder.build().unwrap_or_else(|e| panic!("{e}")))
}

/// A `pre_tool_use` payload for `tool`.
pub fn payload(tool: &str) -> Arc<Payload> {
    Arc::new(Payload::new(
        PayloadCommon::default(),
        ToolCall {
            tool_name: tool.into(),
            tool_call_id: "call_1".into(),
            tool_input: json!({"command": "ls"}),
        },
    ))
}
