//! `approval.channels`: where pending requests are announced besides the web page.
//!
//! ```yaml
//! approval:
//!   fail_closed: true            # a request routed to a channel that is not built is denied
//!   channels:
//!     - feishu: {app_id: cli_a1, app_secret: "${FEISHU_APP_SECRET}", …}
//!     - slack: {bot_token: "${SLACK_BOT_TOKEN}", …, tools: ["sql_*"]}
//! ```
//!
//! Each entry is a mapping with one key, the channel's kind, and each kind appears at most
//! once. Its secrets must come from the environment (`${NAME}`), never be written in the
//! file. An entry that cannot be used (an unset variable, a secret written in the file) does
//! not stop the server: the channel is not built, the error names the entry and the
//! variable, and requests routed to it are audited as not sent (denied with
//! `approval.fail_closed`). An entry that is not a mapping of one known kind, or a second
//! entry of a kind, is an error of the whole file.

use serde_json::Value;
use tollgate_approval::channel::Route;

/// The channel kinds, and the keys of each that hold secrets.
pub const KINDS: [(&str, &[&str]); 2] = [
    (
        "feishu",
        &["app_secret", "verification_token", "encrypt_key"],
    ),
    ("slack", &["bot_token", "signing_secret"]),
];

/// One `approval.channels` entry.
#[derive(Debug, Clone)]
pub struct ChannelConfig {
    /// Where it is in the file (`approval.channels[0].feishu`), for messages.
    pub at: String,
    /// The kind: `feishu` or `slack`.
    pub kind: &'static str,
    /// The entry's settings with `${NAME}` replaced, or why they cannot be used (names the
    /// variable or key; never quotes a value).
    pub settings: Result<Value, String>,
    /// Which requests it gets: `agents:` and `tools:`, glob patterns of the agents and tools
    /// whose requests go to this channel (none: all).
    pub route: Route,
}

/// Reads `approval.channels` (taken out of the file before the rest is expanded: an unset
/// variable here costs one channel, not the server).
///
/// # Errors
/// The list or an entry is not of the documented shape.
pub fn parse(
    channels: Value,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<ChannelConfig>, String> {
    let Value::Array(entries) = channels else {
        return Err(
            "`approval.channels`: must be a list of `- feishu: {…}` / `- slack: {…}` entries"
                .into(),
        );
    };
    let parsed: Vec<ChannelConfig> = entries
        .into_iter()
        .enumerate()
        .map(|(i, entry)| one(i, entry, env))
        .collect::<Result<_, _>>()?;
    // A request has one message per kind, and each kind one callback route checked with one
    // entry's secrets: a second entry of a kind would never send nor receive a click.
    for (i, entry) in parsed.iter().enumerate() {
        if let Some(first) = parsed[..i].iter().find(|e| e.kind == entry.kind) {
            return Err(format!(
                "`{}`: a second {} entry (the first is `{}`); one entry per kind",
                entry.at, entry.kind, first.at
            ));
        }
    }
    Ok(parsed)
}

fn one(
    index: usize,
    entry: Value,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<ChannelConfig, String> {
    let at = format!("approval.channels[{index}]");
    let Value::Object(map) = entry else {
        return Err(format!(
            "`{at}`: must be a mapping with one key, `feishu` or `slack`"
        ));
    };
    let mut items = map.into_iter();
    let (Some((key, settings)), None) = (items.next(), items.next()) else {
        return Err(format!(
            "`{at}`: must have exactly one key, `feishu` or `slack`"
        ));
    };
    let Some((kind, secrets)) = KINDS.iter().find(|(kind, _)| *kind == key) else {
        return Err(format!(
            "`{at}`: unknown channel `{key}` (known: feishu, slack)"
        ));
    };
    let at = format!("{at}.{kind}");
    let agents = patterns(&settings, "agents", &at)?;
    let tools = patterns(&settings, "tools", &at)?;
    let route = Route::new(&agents, &tools).map_err(|reason| format!("`{at}`: {reason}"))?;
    let settings = match settings {
        Value::Object(mut settings) => {
            let checked = secrets
                .iter()
                .filter_map(|secret| settings.get(*secret).map(|v| (*secret, v)))
                .try_for_each(|(secret, value)| from_env_only(&at, secret, value));
            checked.and_then(|()| {
                for (key, value) in &mut settings {
                    super::expand(value, &format!("{at}.{key}"), env)?;
                }
                Ok(Value::Object(settings))
            })
        }
        _ => {
            return Err(format!(
                "`{at}`: must be a mapping of the channel's settings"
            ));
        }
    };
    Ok(ChannelConfig {
        at,
        kind,
        settings,
        route,
    })
}

/// The routing list `key` of an entry (plain strings, read before expansion: a route is not
/// a secret, and a broken channel still needs it to know which requests it fails).
fn patterns(settings: &Value, key: &str, at: &str) -> Result<Vec<String>, String> {
    match settings.get(key) {
        None => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| {
                item.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| format!("`{at}.{key}`: must be a list of glob patterns"))
            })
            .collect(),
        Some(_) => Err(format!("`{at}.{key}`: must be a list of glob patterns")),
    }
}

/// A secret must be exactly `${NAME}`: a secret written in the file would end up in
/// backups, diffs and screenshots.
fn from_env_only(at: &str, key: &str, value: &Value) -> Result<(), String> {
    let whole_variable = value.as_str().is_some_and(|text| {
        text.starts_with("${") && text.ends_with('}') && text[2..].find('}') == Some(text.len() - 3)
    });
    if whole_variable {
        Ok(())
    } else {
        Err(format!(
            "`{at}.{key}`: a secret must come from the environment, written as `${{NAME}}`"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn env(name: &str) -> Option<String> {
        (name == "SET").then(|| "s3cret".to_owned())
    }

    #[test]
    fn secrets_are_expanded_from_the_environment() {
        let parsed = parse(
            json!([{"slack": {"bot_token": "${SET}", "signing_secret": "${SET}", "channel": "C1"}}]),
            &env,
        )
        .unwrap();
        assert_eq!(parsed.len(), 1);
        assert_eq!(parsed[0].kind, "slack");
        assert_eq!(
            parsed[0].settings,
            Ok(json!({"bot_token": "s3cret", "signing_secret": "s3cret", "channel": "C1"}))
        );
    }

    #[test]
    fn an_unset_variable_costs_the_channel_and_names_the_variable() {
        let parsed = parse(json!([{"feishu": {"app_secret": "${UNSET_ONE}"}}]), &env).unwrap();
        let Err(reason) = &parsed[0].settings else {
            panic!("built with an unset variable: {parsed:?}");
        };
        assert!(reason.contains("UNSET_ONE"), "{reason}");
        assert!(
            reason.contains("approval.channels[0].feishu.app_secret"),
            "{reason}"
        );
    }

    #[test]
    fn a_secret_written_in_the_file_is_refused_without_quoting_it() {
        for written in [
            json!("xoxb-literal"),
            json!("pre${SET}"),
            json!("${SET}${SET}"),
            json!(7),
        ] {
            let parsed = parse(json!([{"slack": {"bot_token": written}}]), &env).unwrap();
            let Err(reason) = &parsed[0].settings else {
                panic!("a literal secret was accepted: {parsed:?}");
            };
            assert!(reason.contains("bot_token"), "{reason}");
            assert!(!reason.contains("xoxb-literal"), "{reason}");
        }
    }

    /// Regression: a second entry of one kind was accepted, but it shared the first's
    /// message row and callback route, so it never sent a message nor took a click.
    #[test]
    fn a_second_entry_of_one_kind_was_accepted_and_never_worked() {
        let slack =
            json!({"slack": {"bot_token": "${SET}", "signing_secret": "${SET}", "channel": "C1"}});
        let feishu = json!({"feishu": {"app_secret": "${SET}"}});
        let Err(reason) = parse(json!([slack, feishu, slack]), &env) else {
            panic!("two slack entries accepted");
        };
        assert_eq!(
            reason,
            "`approval.channels[2].slack`: a second slack entry (the first is \
             `approval.channels[0].slack`); one entry per kind"
        );
        assert!(parse(json!([slack, feishu]), &env).is_ok());
    }

    #[test]
    fn entries_of_the_wrong_shape_are_errors_of_the_file() {
        for bad in [
            json!({"feishu": {}}),
            json!([{"teams": {}}]),
            json!([{"feishu": {}, "slack": {}}]),
            json!([{}]),
            json!(["feishu"]),
            json!([{"slack": "C1"}]),
            json!([{"slack": {"tools": "sql_*"}}]),
            json!([{"slack": {"agents": [1]}}]),
            json!([{"slack": {"tools": ["sql_[*"]}}]),
        ] {
            assert!(parse(bad.clone(), &env).is_err(), "accepted {bad}");
        }
    }
}
