//! The README's example: one function hook that denies `DROP` statements on `sql_*` tools.
//!
//! Run with `cargo run -p tollgate-core --example quickstart`.

use std::sync::Arc;

use tollgate_core::{Dispatcher, HookOptions, RegistryBuilder, ToolMatcher, hook_fn};
use tollgate_protocol::{Event, Outcome, Payload, PayloadCommon, ToolCall};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut hooks = RegistryBuilder::new();
    hooks.register_with(
        Event::PreToolUse,
        hook_fn("no-drop", |ctx| async move {
            let call = ctx.payload().tool_call();
            let sql = call.and_then(|c| c.tool_input["sql"].as_str().map(str::to_owned));
            Ok(match sql {
                Some(s) if s.to_uppercase().contains("DROP") => {
                    Outcome::deny("DROP is not allowed")
                }
                _ => Outcome::allow(),
            })
        }),
        HookOptions::default().tools(ToolMatcher::one("sql_*")?),
    );
    let dispatcher = Dispatcher::new(hooks.build()?); // one registry per run

    for sql in ["SELECT 1", "DROP TABLE orders"] {
        let call = ToolCall {
            tool_name: "sql_execute".into(),
            tool_call_id: "call_1".into(),
            tool_input: serde_json::json!({ "sql": sql }),
        };
        let payload = Arc::new(Payload::new(PayloadCommon::default(), call));
        let outcome = dispatcher.dispatch(payload).await;
        match outcome.observation() {
            Some(observation) => println!("{sql:<20} -> {observation}"),
            None => println!("{sql:<20} -> {}", outcome.decision.as_str()),
        }
    }
    Ok(())
}
