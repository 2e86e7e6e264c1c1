//! `ConnectorRateLimitHook`: a token bucket per (organisation, connector) on `pre_tool_use`.
//!
//! The connector is the tool-name prefix before the first `__` (`oa__purchase_pay` → `oa`);
//! tools without `__` are not limited. The organisation is `metadata.org_id` (a run without one
//! shares the bucket of organisation `unknown`). Each bucket holds `burst` tokens (default: the
//! rate per minute, at least 1) and refills at `per_minute` tokens a minute (or `rate` a
//! second); `connectors` overrides the limit per connector. A call finding its bucket empty is
//! denied with the time until the next token: `rate limit for connector oa in org-7 exceeded;
//! retry after 1.2 s`.
//!
//! The buckets live in the hook instance, so each registry built from config limits on its
//! own. A process-wide limit needs one shared instance (build it once and register the same
//! `Arc` in every registry). Buckets of keys idle long enough to be full again are dropped
//! once more than [`RETAIN_ABOVE`] keys are tracked.

use std::collections::BTreeMap;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;

use governor::clock::{Clock, DefaultClock};
use governor::state::keyed::DefaultKeyedStateStore;
use governor::{Quota, RateLimiter};
use serde::Deserialize;
use serde_json::Value;
use tollgate_core::{BoxFuture, Hook, HookContext, HookError};
use tollgate_protocol::{Event, HookKind, Outcome};

use super::{ClassError, ClassInstance, parse_params};

/// The class name.
pub(super) const CLASS: &str = "ConnectorRateLimitHook";

/// Tracked keys above which idle buckets are dropped.
const RETAIN_ABOVE: usize = 10_000;

/// One limit: `per_minute` or `rate` (per second), with an optional `burst`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct LimitParams {
    per_minute: Option<u32>,
    rate: Option<f64>,
    burst: Option<u32>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Params {
    per_minute: Option<u32>,
    rate: Option<f64>,
    burst: Option<u32>,
    #[serde(default)]
    connectors: BTreeMap<String, LimitParams>,
}

type Keyed = RateLimiter<(String, String), DefaultKeyedStateStore<(String, String)>, DefaultClock>;

/// Builds the class from its params.
pub(super) fn instantiate(params: &Value) -> Result<ClassInstance, ClassError> {
    let params: Params = parse_params(CLASS, params)?;
    let default = LimitParams {
        per_minute: params.per_minute,
        rate: params.rate,
        burst: params.burst,
    };
    let default = RateLimiter::keyed(quota(&default, "")?);
    let overrides = params
        .connectors
        .iter()
        .map(|(name, limit)| {
            let quota = quota(limit, &format!("connectors.{name}."))?;
            Ok((name.clone(), RateLimiter::keyed(quota)))
        })
        .collect::<Result<_, ClassError>>()?;
    let hook = ConnectorRateLimitHook { default, overrides };
    Ok(ClassInstance {
        hook: Some(Arc::new(hook)),
        events: vec![Event::PreToolUse],
        tools: None,
        observer: None,
    })
}

/// The quota of one limit; `path` prefixes field names in errors.
fn quota(limit: &LimitParams, path: &str) -> Result<Quota, ClassError> {
    let bad = |message: String| ClassError::bad_params(CLASS, format!("{path}{message}"));
    let (period, per_minute) = match (limit.per_minute, limit.rate) {
        (Some(_), Some(_)) => return Err(bad("per_minute, rate: give one, not both".into())),
        (None, None) => return Err(bad("per_minute: required (or rate)".into())),
        (Some(0), None) => return Err(bad("per_minute: must be at least 1".into())),
        (Some(n), None) => (Duration::from_secs(60) / n, f64::from(n)),
        // At least one token a day: slower rates overflow nothing but are surely a typo.
        (None, Some(rate)) if (1.0 / 86_400.0..=1e9).contains(&rate) => {
            let period = Duration::try_from_secs_f64(1.0 / rate)
                .map_err(|_| bad(format!("rate: {rate} is out of range")))?;
            (period, rate * 60.0)
        }
        (None, Some(rate)) => {
            return Err(bad(format!(
                "rate: must be between 1/86400 (one a day) and 1e9 per second, not {rate}"
            )));
        }
    };
    let burst = match limit.burst {
        Some(burst) => {
            NonZeroU32::new(burst).ok_or_else(|| bad("burst: must be at least 1".into()))?
        }
        // Saturating float-to-int cast; at least 1.
        None => NonZeroU32::new(per_minute as u32).unwrap_or(NonZeroU32::MIN),
    };
    let quota = Quota::with_period(period).ok_or_else(|| bad("rate: too high".into()))?;
    Ok(quota.allow_burst(burst))
}

struct ConnectorRateLimitHook {
    default: Keyed,
    overrides: BTreeMap<String, Keyed>,
}

/// The connector of a tool: the prefix before the first `__`, if there is one.
fn connector(tool: &str) -> Option<&str> {
    tool.split_once("__")
        .map(|(prefix, _)| prefix)
        .filter(|prefix| !prefix.is_empty())
}

impl ConnectorRateLimitHook {
    /// Takes a token for (org, connector); `Err(wait)` when the bucket is empty.
    fn take(&self, org: &str, connector: &str) -> Result<(), Duration> {
        let limiter = self.overrides.get(connector).unwrap_or(&self.default);
        if limiter.len() > RETAIN_ABOVE {
            limiter.retain_recent();
        }
        let key = (org.to_owned(), connector.to_owned());
        limiter
            .check_key(&key)
            .map_err(|not_until| not_until.wait_time_from(limiter.clock().now()))
    }
}

impl Hook for ConnectorRateLimitHook {
    fn name(&self) -> &str {
        CLASS
    }

    fn kind(&self) -> HookKind {
        HookKind::Class
    }

    fn should_trigger(&self, ctx: &HookContext) -> bool {
        ctx.event() == Event::PreToolUse && ctx.tool_name().and_then(connector).is_some()
    }

    fn execute(&self, ctx: HookContext) -> BoxFuture<'_, Result<Outcome, HookError>> {
        let payload = ctx.payload();
        let org = payload
            .common
            .metadata
            .get("org_id")
            .and_then(Value::as_str);
        let org = org.unwrap_or("unknown");
        let outcome = match ctx.tool_name().and_then(connector) {
            Some(connector) => match self.take(org, connector) {
                Ok(()) => Outcome::allow(),
                Err(wait) => Outcome::deny(format!(
                    "rate limit for connector {connector} in {org} exceeded; retry after {:.1} s",
                    // Rounded up, so the model never retries too early.
                    (wait.as_secs_f64() * 10.0).ceil() / 10.0
                )),
            },
            None => Outcome::allow(),
        };
        Box::pin(std::future::ready(Ok(outcome)))
    }
}
