//! `ReadOnlyGuard`: denies SQL writes on `sql_*` tools for read-only organisations.
//!
//! A run's organisation is read-only when `metadata.org_id` is one of `readonly_orgs`, or when
//! the metadata flag `readonly_flag` (default `readonly`) is JSON `true`. For such runs, every
//! `pre_tool_use` call of a matching tool has its SQL (the first string among `sql_args`,
//! default `sql`, then `query`) scanned by a fail-closed keyword scan ([`super::sql`]): any
//! statement that is not a known read denies the call, and so does SQL that cannot be read or
//! is missing. Other organisations' calls pass untouched.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Map, Value};
use tollgate_core::{BoxFuture, Hook, HookContext, HookError, ToolMatcher};
use tollgate_protocol::{Event, HookKind, Outcome};

use super::sql::{self, Verdict};
use super::{ClassError, ClassInstance, parse_params};

/// The class name.
pub(super) const CLASS: &str = "ReadOnlyGuard";

/// Params of `ReadOnlyGuard`; all optional.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct Params {
    /// Tool-name globs the guard checks.
    tools: Vec<String>,
    /// Organisation ids (`metadata.org_id`) that are read-only.
    readonly_orgs: Vec<String>,
    /// Metadata key of a boolean read-only flag.
    readonly_flag: String,
    /// Argument names that may hold the SQL, first string wins.
    sql_args: Vec<String>,
}

impl Default for Params {
    fn default() -> Self {
        Self {
            tools: vec!["sql_*".into()],
            readonly_orgs: Vec::new(),
            readonly_flag: "readonly".into(),
            sql_args: vec!["sql".into(), "query".into()],
        }
    }
}

/// Builds the class from its params.
pub(super) fn instantiate(params: &Value) -> Result<ClassInstance, ClassError> {
    let params: Params = parse_params(CLASS, params)?;
    let matcher = ToolMatcher::new(&params.tools)
        .map_err(|e| ClassError::bad_params(CLASS, format!("tools: {e}")))?;
    let tools = params.tools.clone();
    let guard = ReadOnlyGuard { params, matcher };
    Ok(ClassInstance {
        hook: Some(Arc::new(guard)),
        events: vec![Event::PreToolUse],
        tools: Some(tools),
        observer: None,
    })
}

struct ReadOnlyGuard {
    params: Params,
    matcher: ToolMatcher,
}

impl ReadOnlyGuard {
    /// How the reason names the organisation (`organisation org-7`), when the run is
    /// read-only.
    fn readonly_org(&self, metadata: &Map<String, Value>) -> Option<String> {
        let org = metadata.get("org_id").and_then(Value::as_str);
        let listed = org.is_some_and(|org| self.params.readonly_orgs.iter().any(|o| o == org));
        let flagged = metadata.get(&self.params.readonly_flag) == Some(&Value::Bool(true));
        (listed || flagged).then(|| match org {
            Some(org) => format!("organisation {org}"),
            None => "this run's organisation".to_owned(),
        })
    }

    fn verdict(&self, args: &Value, org: &str) -> Outcome {
        let sql = self
            .params
            .sql_args
            .iter()
            .find_map(|name| args.get(name).and_then(Value::as_str));
        let Some(sql) = sql else {
            let names = self.params.sql_args.join("` or `");
            return Outcome::deny(format!(
                "{org} is read-only and the SQL could not be checked: no string `{names}` argument"
            ));
        };
        match sql::classify(sql) {
            Verdict::Read => Outcome::allow(),
            Verdict::Write(keyword) => Outcome::deny(format!(
                "{org} is read-only: {keyword} statements are not allowed"
            )),
            Verdict::Unreadable(why) => Outcome::deny(format!(
                "{org} is read-only and the SQL could not be checked: {why}"
            )),
        }
    }
}

impl Hook for ReadOnlyGuard {
    fn name(&self) -> &str {
        CLASS
    }

    fn kind(&self) -> HookKind {
        HookKind::Class
    }

    fn should_trigger(&self, ctx: &HookContext) -> bool {
        ctx.event() == Event::PreToolUse
            && ctx.tool_name().is_some_and(|t| self.matcher.is_match(t))
    }

    fn execute(&self, ctx: HookContext) -> BoxFuture<'_, Result<Outcome, HookError>> {
        let payload = ctx.payload();
        let outcome = match (
            self.readonly_org(&payload.common.metadata),
            payload.tool_call(),
        ) {
            (Some(org), Some(call)) => self.verdict(&call.tool_input, &org),
            _ => Outcome::allow(),
        };
        Box::pin(std::future::ready(Ok(outcome)))
    }
}
