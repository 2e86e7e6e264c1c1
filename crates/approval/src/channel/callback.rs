//! One callback from a channel's platform, from raw bytes to the reply: checked by the
//! channel, de-duplicated by event id, matched against the nonce sent, applied through the
//! store's one transition, and answered by the channel.

use serde_json::json;
use subtle::ConstantTimeEq;

use super::{Answer, Channel, Click, ClickOutcome, HeaderMap, Inbound};
use crate::error::Refused;
use crate::model::{Decision, Verdict};
use crate::store::Store;

/// Handles one callback request for `channel`: `headers` and `body` exactly as received.
///
/// A click is applied at most once however often it is delivered and however many servers
/// receive it: the store's conditional transition decides, a repeat is answered with the
/// request as it stands ("already approved by … at …"), and every attempt is in the
/// request's audit history.
///
/// # Cancel safety
/// Dropping the future leaves the request as the store last wrote it: either decided with
/// its audit row, or untouched.
pub async fn receive(
    store: &Store,
    channel: &dyn Channel,
    headers: &HeaderMap,
    body: &[u8],
) -> Answer {
    let inbound = match channel.inbound(headers, body, store.now_ms()) {
        Ok(inbound) => inbound,
        Err(refusal) => {
            tracing::warn!(channel = channel.kind(), status = refusal.status,
                reason = %refusal.message, "channel callback refused");
            return Answer {
                status: refusal.status,
                body: Some(json!({"error": "refused", "message": refusal.message})),
            };
        }
    };
    match inbound {
        Inbound::Reply(body) => Answer {
            status: 200,
            body: Some(body),
        },
        Inbound::Ignore => Answer {
            status: 200,
            body: Some(json!({})),
        },
        Inbound::Click(click) => {
            let outcome = apply(store, channel, &click).await;
            channel.answer(&click, &outcome).await
        }
    }
}

async fn apply(store: &Store, channel: &dyn Channel, click: &Click) -> ClickOutcome {
    let kind = channel.kind();
    let first = match store
        .record_event(kind, &click.event_id, Some(&click.request_id))
        .await
    {
        Ok(first) => first,
        Err(e) => {
            tracing::error!(channel = kind, error = %e, "cannot record a channel callback");
            return ClickOutcome::Failed;
        }
    };
    let message = match store.channel_message(&click.request_id, kind).await {
        Ok(message) => message,
        Err(e) => {
            tracing::error!(channel = kind, error = %e, "cannot read a channel message");
            return ClickOutcome::Failed;
        }
    };
    let Some(message) = message else {
        tracing::warn!(channel = kind, request = %click.request_id,
            "a click on a request never sent on this channel");
        return ClickOutcome::Unknown;
    };
    if !bool::from(message.nonce.as_bytes().ct_eq(click.nonce.as_bytes())) {
        let actor = format!("{kind}:{}", click.operator);
        let _ = store
            .note(
                &click.request_id,
                &actor,
                verb(click),
                false,
                Some(kind),
                "the button's nonce is not the one sent with this request",
            )
            .await;
        return ClickOutcome::Unknown;
    }
    let Some(approver) = channel.approver(&click.operator) else {
        let actor = format!("{kind}:{}", click.operator);
        let _ = store
            .note(
                &click.request_id,
                &actor,
                verb(click),
                false,
                Some(kind),
                &format!("{} is not an approver on this channel", who(click)),
            )
            .await;
        return current(store, &click.request_id, ClickOutcome::NotApprover).await;
    };
    let decision = Decision {
        verdict: if click.approve {
            Verdict::Approve { edit: None }
        } else {
            Verdict::Reject
        },
        by: approver,
        channel: kind.to_owned(),
        note: None,
    };
    let outcome = match store.decide(&click.request_id, &decision).await {
        Ok(request) => ClickOutcome::Decided(request),
        Err(Refused::AlreadyDecided { .. }) => {
            current(store, &click.request_id, ClickOutcome::AlreadyDecided).await
        }
        Err(Refused::NotAllowed { .. }) => {
            current(store, &click.request_id, ClickOutcome::NotApprover).await
        }
        Err(Refused::NotFound { .. }) => ClickOutcome::Unknown,
        Err(e) => {
            tracing::error!(channel = kind, error = %e, "a channel click could not be applied");
            ClickOutcome::Failed
        }
    };
    let detail = format!(
        "click delivery {}{} by {}",
        click.event_id,
        if first { "" } else { " (a repeat)" },
        who(click)
    );
    let _ = store
        .note(
            &click.request_id,
            &format!("{kind}:{}", click.operator),
            "click",
            matches!(outcome, ClickOutcome::Decided(_)),
            Some(kind),
            &detail,
        )
        .await;
    if let ClickOutcome::Decided(request) | ClickOutcome::AlreadyDecided(request) = &outcome {
        // The reply replaces the message: the hub need not update it.
        let _ = store
            .message_closed(&request.id, kind, request.status, None)
            .await;
    }
    outcome
}

/// The request as it now stands, as `outcome`.
async fn current(
    store: &Store,
    id: &str,
    outcome: fn(crate::model::Request) -> ClickOutcome,
) -> ClickOutcome {
    match store.get(id).await {
        Ok(Some(request)) => outcome(request),
        Ok(None) => ClickOutcome::Unknown,
        Err(_) => ClickOutcome::Failed,
    }
}

fn verb(click: &Click) -> &'static str {
    if click.approve { "approve" } else { "reject" }
}

/// The operator with the aliases the platform gave, for the audit.
fn who(click: &Click) -> String {
    if click.operator_aliases.is_empty() {
        click.operator.clone()
    } else {
        format!("{} ({})", click.operator, click.operator_aliases.join(", "))
    }
}
