//! Property test of hook selection: for random `tools` globs and tool names, the hooks that
//! run are exactly those whose globs match (checked against `ToolMatcher::is_match`), in
//! priority order, on the first dispatch and on repeated ones (cached selections).

use proptest::prelude::*;
use serde_json::json;
use tollgate_core::{Dispatcher, HookOptions, RegistryBuilder, ToolMatcher, hook_fn};
use tollgate_protocol::{Event, Outcome};

use crate::support::pre_tool_use;

fn pattern() -> impl Strategy<Value = String> {
    prop::string::string_regex("[ab_]{0,3}(\\*|\\?|\\[ab\\]|\\{a,b_\\})?[ab_]{0,2}\\*?").unwrap()
}

fn name() -> impl Strategy<Value = String> {
    prop::string::string_regex("[abAB_/]{0,6}").unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn selected_hooks_are_exactly_the_matching_ones(
        hooks in prop::collection::vec(
            (prop::option::of(prop::collection::vec(pattern(), 0..3)), -3i32..3),
            0..12,
        ),
        names in prop::collection::vec(name(), 1..6),
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
        let mut builder = RegistryBuilder::new();
        let mut matchers = Vec::new();
        for (i, (patterns, priority)) in hooks.iter().enumerate() {
            let mut options = HookOptions::default().priority(*priority);
            let matcher = patterns.as_ref().map(|p| ToolMatcher::new(p).unwrap());
            if let Some(m) = &matcher {
                options = options.tools(m.clone());
            }
            matchers.push((format!("h{i}"), *priority, matcher));
            builder.register_with(Event::PreToolUse, hook_fn(format!("h{i}"), |_| async { Ok(Outcome::allow()) }), options);
        }
        let dispatcher = Dispatcher::new(builder.build().unwrap());
        let mut ordered = matchers.clone();
        ordered.sort_by_key(|(_, priority, _)| *priority);
        for name in names.iter().chain(names.iter()) {
            let outcome = runtime.block_on(dispatcher.dispatch(pre_tool_use(name, json!({}))));
            let ran: Vec<&str> = outcome.runs.iter().map(|r| r.name).collect();
            let expected: Vec<&str> = ordered
                .iter()
                .filter(|(_, _, m)| m.as_ref().is_none_or(|m| m.is_match(name)))
                .map(|(n, _, _)| n.as_str())
                .collect();
            prop_assert_eq!(ran, expected, "tool name {:?}", name);
        }
    }
}
