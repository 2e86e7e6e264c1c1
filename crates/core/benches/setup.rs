//! The registry measured by the `dispatch` bench and the `dispatch_bench` example: 100 no-op
//! function hooks on `pre_tool_use`, of which `matching` have a `tools` glob that matches
//! `bash_code_execute_tool`; the others have globs for other tools. The hooks are async
//! closures ([`hook_fn`], [`Path::Async`]) or closures that answer at once ([`hook_sync`],
//! [`Path::Sync`]).

use std::sync::Arc;

use serde_json::json;
use tollgate_core::{Dispatcher, HookOptions, RegistryBuilder, ToolMatcher, hook_fn, hook_sync};
use tollgate_protocol::{Event, Outcome, Payload, PayloadCommon, ToolCall};

/// How the no-op hooks are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(dead_code)] // each user of this file builds the paths it measures
pub enum Path {
    /// `hook_fn(name, |_| async { Ok(Outcome::allow()) })`: a boxed future per run.
    Async,
    /// `hook_sync(name, |_| Ok(Outcome::allow()))`: answered at once.
    Sync,
}

impl Path {
    /// The name printed with a figure.
    #[allow(dead_code)]
    pub fn label(self) -> &'static str {
        match self {
            Self::Async => "hook_fn",
            Self::Sync => "hook_sync",
        }
    }
}

/// Builds the dispatcher over async hooks. Matching hooks are spread evenly among the others.
#[allow(dead_code)]
pub fn dispatcher(hooks: usize, matching: usize) -> Dispatcher {
    dispatcher_on(Path::Async, hooks, matching)
}

/// Builds the dispatcher over hooks written as `path` says. Matching hooks are spread evenly
/// among the others.
pub fn dispatcher_on(path: Path, hooks: usize, matching: usize) -> Dispatcher {
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
        let name = format!("noop-{i}");
        match path {
            Path::Async => builder.register_with(
                Event::PreToolUse,
                hook_fn(name, |_| async { Ok(Outcome::allow()) }),
                options,
            ),
            Path::Sync => builder.register_with(
                Event::PreToolUse,
                hook_sync(name, |_| Ok(Outcome::allow())),
                options,
            ),
        };
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
