//! Where an `ask` goes: the host's own prompt (Claude Code), a denial (Codex, whose hooks
//! cannot ask; a prompt of either host), or, with `--server`, tollgate's durable approval.
//!
//! With a server the hook files the call (`POST /v1/approvals`, keyed by host, session, tool
//! and call id, so a retried hook re-attaches instead of filing twice) and long-polls `GET /v1/approvals/{id}?wait=…` until a person decides
//! on the server's page or API, the request expires, or the hook's own deadline (within the
//! host's hook timeout) passes. The request expires when the hook stops waiting, so an
//! approval can never arrive after the host moved on. Anything that goes wrong (the server
//! unreachable, a token refused) denies: an ask never becomes an allow by failing.

use std::time::Duration;

use reqwest::Url;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::time::Instant;
use tollgate_approval::{Request, Status};
use tollgate_server::wire::{ErrorBody, FiledApproval, NewApproval, RequestDetail};

/// The longest single long poll the server grants.
const LONG_POLL_SECONDS: u64 = 25;

/// Less than this left before the deadline: no request is filed.
const MIN_WAIT: Duration = Duration::from_secs(5);

/// How long to wait before trying the server again after it failed to answer.
const RETRY: Duration = Duration::from_secs(1);

/// How many times filing is tried against a server that does not answer (a server that
/// stops answering while the hook waits is tried until the deadline).
const FILE_ATTEMPTS: u32 = 3;

/// A `tollgate serve` asks are filed with.
pub struct Server {
    http: reqwest::Client,
    base: Url,
    token: String,
}

/// How a filed request ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Settled {
    /// Approved by `by`, maybe with an edit (in the host's field names).
    Approved {
        /// The request.
        id: String,
        /// Who approved.
        by: String,
        /// The approver's edit, if any.
        edit: Option<Value>,
    },
    /// Not approved: rejected, expired, cancelled, or the server failed; why.
    Denied {
        /// The request, when one was filed.
        id: Option<String>,
        /// For the host (and the model).
        reason: String,
    },
}

impl Server {
    /// A client of the server at `url` with `token`.
    ///
    /// # Errors
    /// `url` is not an http(s) URL, or the HTTP client cannot start.
    pub fn new(url: &str, token: String) -> Result<Self, String> {
        let base = Url::parse(url)
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https") && !u.cannot_be_a_base())
            .ok_or("--server must be an http:// or https:// URL")?;
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(LONG_POLL_SECONDS + 30))
            // The token must reach this server only.
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| format!("cannot start the HTTP client: {e}"))?;
        Ok(Self { http, base, token })
    }

    /// Files `body` (the call in the host's names; its `timeout_seconds` is cut to the time
    /// left before `deadline`) and waits for its decision until `deadline`.
    ///
    /// # Cancel safety
    /// Dropping the future stops waiting; the request stays pending until it expires.
    pub async fn settle(&self, mut body: NewApproval, deadline: Instant) -> Settled {
        let left = deadline.saturating_duration_since(Instant::now());
        if left < MIN_WAIT {
            return denied(None, "no time was left within the host's hook timeout to wait for a human; raise the hook's timeout (docs/hook-bridge.md)".into());
        }
        let cap = body.timeout_seconds.unwrap_or(u64::MAX);
        body.timeout_seconds = Some(left.as_secs().min(cap).max(1));
        let filed = match self.file(&body, deadline).await {
            Ok(filed) => filed,
            Err(reason) => return denied(None, reason),
        };
        if filed.request.arguments != body.arguments {
            // The same call id filed before with other arguments: that request was not
            // about this call, so its decision must not apply to it.
            let id = filed.request.id;
            return denied(
                Some(id.clone()),
                format!("{id} was filed for this call with other arguments; it is not approved"),
            );
        }
        self.wait(filed.request, deadline).await
    }

    async fn file(&self, body: &NewApproval, deadline: Instant) -> Result<FiledApproval, String> {
        let url = self.url(&["v1", "approvals"]);
        let bytes = serde_json::to_vec(body).map_err(|e| e.to_string())?;
        let mut attempt = 1;
        loop {
            let request = self
                .http
                .post(url.clone())
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(bytes.clone());
            match self.send(request).await {
                Ok(filed) => return Ok(filed),
                Err(Failure::Refused(reason)) => return Err(reason),
                Err(Failure::Unreachable(reason))
                    if attempt >= FILE_ATTEMPTS || Instant::now() + RETRY >= deadline =>
                {
                    return Err(reason);
                }
                Err(Failure::Unreachable(_)) => tokio::time::sleep(RETRY).await,
            }
            attempt += 1;
        }
    }

    async fn wait(&self, mut request: Request, deadline: Instant) -> Settled {
        let id = request.id.clone();
        loop {
            if request.status != Status::Pending {
                return settled(&request);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return denied(
                    Some(id.clone()),
                    format!("nobody decided on approval {id} within the hook's timeout"),
                );
            }
            let mut url = self.url(&["v1", "approvals", &id]);
            let wait = left.as_secs().clamp(1, LONG_POLL_SECONDS);
            url.query_pairs_mut().append_pair("wait", &wait.to_string());
            match self.send::<RequestDetail>(self.http.get(url)).await {
                Ok(detail) => request = detail.request,
                Err(Failure::Refused(reason)) => return denied(Some(id), reason),
                Err(Failure::Unreachable(_)) => {
                    tokio::time::sleep(RETRY.min(left)).await;
                }
            }
        }
    }

    fn url(&self, segments: &[&str]) -> Url {
        let mut url = self.base.clone();
        if let Ok(mut path) = url.path_segments_mut() {
            path.pop_if_empty().extend(segments);
        }
        url
    }

    async fn send<T: DeserializeOwned>(
        &self,
        request: reqwest::RequestBuilder,
    ) -> Result<T, Failure> {
        let unreachable = |e: reqwest::Error| {
            Failure::Unreachable(format!(
                "cannot reach the approval server {}: {e}",
                self.base
            ))
        };
        let response = request
            .bearer_auth(&self.token)
            .send()
            .await
            .map_err(unreachable)?;
        let status = response.status();
        let bytes = response.bytes().await.map_err(unreachable)?;
        if status.is_success() {
            return serde_json::from_slice(&bytes).map_err(|e| {
                Failure::Refused(format!(
                    "the approval server answered an unexpected body: {e}"
                ))
            });
        }
        let message = serde_json::from_slice::<ErrorBody>(&bytes)
            .map_or_else(|_| format!("answered {status}"), |e| e.message);
        let failure = format!("the approval server refused the request: {message}");
        if status.is_server_error() {
            Err(Failure::Unreachable(failure))
        } else {
            Err(Failure::Refused(failure))
        }
    }
}

/// Why a server call failed: worth trying again, or not.
enum Failure {
    Unreachable(String),
    Refused(String),
}

fn denied(id: Option<String>, reason: String) -> Settled {
    Settled::Denied { id, reason }
}

/// What a decided request means for the call.
fn settled(request: &Request) -> Settled {
    let id = request.id.clone();
    let by = request.responded_by.clone().unwrap_or_else(|| "?".into());
    let note = request
        .response_note
        .as_deref()
        .map_or_else(String::new, |n| format!(". Note from {by}: {n}"));
    match request.status {
        Status::Approved => Settled::Approved {
            id,
            by,
            edit: request.edited_arguments.clone(),
        },
        Status::Rejected => denied(
            Some(id.clone()),
            format!("{by} rejected the call ({id}){note}"),
        ),
        Status::Expired => denied(
            Some(id.clone()),
            format!("the approval request {id} expired: nobody decided in time"),
        ),
        Status::Cancelled | Status::Pending => denied(
            Some(id.clone()),
            format!("the approval request {id} was cancelled{note}"),
        ),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;

    use super::*;

    fn request(status: &str, by: Option<&str>, note: Option<&str>, edit: Option<Value>) -> Request {
        serde_json::from_value(json!({
            "id": "cr_1", "idempotency_key": "[]", "run_id": "r", "session_id": "s",
            "agent": "claude-code", "tool_name": "Bash", "tool_call_id": "c", "arguments": {},
            "args_hash": "h", "reasons": [], "asked_by": "x", "approvers": [],
            "status": status, "channel": null, "channel_message_id": null, "created_at": 0,
            "expires_at": 1, "responded_at": null, "responded_by": by, "response_note": note,
            "edited_arguments": edit, "edited_args_hash": null, "consumed_at": null,
            "finished_at": null
        }))
        .unwrap()
    }

    #[test]
    fn decisions_become_allow_or_a_reason_the_model_reads() {
        let edit = json!({"command": "ls"});
        assert_eq!(
            settled(&request("approved", Some("ops"), None, Some(edit.clone()))),
            Settled::Approved {
                id: "cr_1".into(),
                by: "ops".into(),
                edit: Some(edit)
            }
        );
        let Settled::Denied { reason, .. } =
            settled(&request("rejected", Some("ops"), Some("use staging"), None))
        else {
            panic!("not denied")
        };
        assert_eq!(
            reason,
            "ops rejected the call (cr_1). Note from ops: use staging"
        );
        let Settled::Denied { reason, .. } =
            settled(&request("expired", Some("timeout"), None, None))
        else {
            panic!("not denied")
        };
        assert!(reason.contains("expired"), "{reason}");
    }
}
