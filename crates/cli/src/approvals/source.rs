//! Where `tollgate approvals` reads and decides requests: the database file, or a `tollgate
//! serve` through its API. Both give the same rows and the same exit statuses.

use std::process::ExitCode;
use std::time::Duration;

use reqwest::{StatusCode, Url};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tollgate_approval::{
    AuditEvent, Decision, Refused, Request, Status, Store, SystemClock, Verdict,
};
use tollgate_handlers::text::escape_controls;
use tollgate_server::wire::{
    ApproveBody, Decided, ErrorBody, RejectBody, RequestDetail, RequestList,
};

use crate::registry::fail;

/// How long one API call may take.
const HTTP_TIMEOUT: Duration = Duration::from_secs(60);

/// Why a command fails, and its exit status: 1 not found, not allowed, unreachable; 2 bad
/// arguments; 3 already decided.
#[derive(Debug)]
pub struct Failure {
    code: u8,
    message: String,
}

impl Failure {
    /// A failure exiting `code`.
    pub fn new(code: u8, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }

    /// Prints `error: MESSAGE` and gives the exit status.
    pub fn exit(self) -> ExitCode {
        fail(self.code, &escape_controls(&self.message))
    }
}

impl From<Refused> for Failure {
    fn from(refused: Refused) -> Self {
        let code = if matches!(refused, Refused::AlreadyDecided { .. }) {
            3
        } else {
            1
        };
        Self::new(code, refused.to_string())
    }
}

/// The database file or a server.
pub enum Source {
    /// The approval database, opened.
    Db(Store),
    /// A `tollgate serve`.
    Server(Client),
}

impl Source {
    /// Requests with `status` (`pending`, …, or `all`), newest first; overdue ones expired
    /// first.
    pub async fn list(&self, status: &str) -> Result<Vec<Request>, Failure> {
        match self {
            Self::Db(store) => {
                let store_failed =
                    |e: tollgate_approval::StoreError| Failure::new(1, e.to_string());
                store.sweep().await.map_err(store_failed)?;
                store
                    .list(Status::parse(status))
                    .await
                    .map_err(store_failed)
            }
            Self::Server(client) => {
                let list: RequestList = client.get(&["v1", "approvals"], Some(status)).await?;
                Ok(list.requests)
            }
        }
    }

    /// One request and its audit history.
    pub async fn show(&self, id: &str) -> Result<(Request, Vec<AuditEvent>), Failure> {
        match self {
            Self::Db(store) => {
                let store_failed =
                    |e: tollgate_approval::StoreError| Failure::new(1, e.to_string());
                let request = store
                    .get(id)
                    .await
                    .map_err(store_failed)?
                    .ok_or_else(|| Refused::NotFound { id: id.into() })?;
                Ok((request, store.history(id).await.map_err(store_failed)?))
            }
            Self::Server(client) => {
                let detail: RequestDetail = client.get(&["v1", "approvals", id], None).await?;
                Ok((detail.request, detail.history))
            }
        }
    }

    /// Approves or rejects; through a server, as the token's name (`decision.by` unused).
    pub async fn decide(&self, id: &str, decision: &Decision) -> Result<Request, Failure> {
        match self {
            Self::Db(store) => Ok(store.decide(id, decision).await?),
            Self::Server(client) => {
                let decided: Decided = match &decision.verdict {
                    Verdict::Approve { edit } => {
                        let body = ApproveBody {
                            note: decision.note.clone(),
                            edit: edit.clone(),
                        };
                        client
                            .post(&["v1", "approvals", id, "approve"], &body)
                            .await?
                    }
                    Verdict::Reject => {
                        let body = RejectBody {
                            note: decision.note.clone(),
                        };
                        client
                            .post(&["v1", "approvals", id, "reject"], &body)
                            .await?
                    }
                };
                Ok(decided.request)
            }
        }
    }

    /// Now, in milliseconds since the Unix epoch (the store's clock for a file).
    pub fn now_ms(&self) -> i64 {
        match self {
            Self::Db(store) => store.now_ms(),
            Self::Server(_) => tollgate_approval::Clock::now_ms(&SystemClock),
        }
    }
}

/// A client of the approvals API.
pub struct Client {
    http: reqwest::Client,
    base: Url,
    token: String,
}

impl Client {
    /// A client of the server at `server` (`http://host:port`, maybe with a path prefix).
    pub fn new(server: &str, token: String) -> Result<Self, Failure> {
        let base = Url::parse(server)
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https") && !u.cannot_be_a_base())
            .ok_or_else(|| Failure::new(2, "--server: must be an http:// or https:// URL"))?;
        let http = reqwest::Client::builder()
            .timeout(HTTP_TIMEOUT)
            // The token must reach this server only.
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| Failure::new(1, format!("cannot start the HTTP client: {e}")))?;
        Ok(Self { http, base, token })
    }

    /// The URL of the path `segments` under the base, each segment escaped (an id is data).
    fn url(&self, segments: &[&str]) -> Url {
        let mut url = self.base.clone();
        if let Ok(mut path) = url.path_segments_mut() {
            path.pop_if_empty().extend(segments);
        }
        url
    }

    async fn get<T: DeserializeOwned>(
        &self,
        segments: &[&str],
        status: Option<&str>,
    ) -> Result<T, Failure> {
        let mut url = self.url(segments);
        if let Some(status) = status {
            url.query_pairs_mut().append_pair("status", status);
        }
        self.send(self.http.get(url)).await
    }

    async fn post<T: DeserializeOwned>(
        &self,
        segments: &[&str],
        body: &impl Serialize,
    ) -> Result<T, Failure> {
        let body = serde_json::to_vec(body).map_err(|e| Failure::new(2, e.to_string()))?;
        let request = self
            .http
            .post(self.url(segments))
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body);
        self.send(request).await
    }

    async fn send<T: DeserializeOwned>(
        &self,
        request: reqwest::RequestBuilder,
    ) -> Result<T, Failure> {
        let unreachable =
            |e: reqwest::Error| Failure::new(1, format!("cannot reach {}: {e}", self.base));
        let response = request
            .bearer_auth(&self.token)
            .send()
            .await
            .map_err(unreachable)?;
        let status = response.status();
        let bytes = response.bytes().await.map_err(unreachable)?;
        if status.is_success() {
            return serde_json::from_slice(&bytes).map_err(|e| {
                Failure::new(1, format!("the server answered an unexpected body: {e}"))
            });
        }
        let message = serde_json::from_slice::<ErrorBody>(&bytes)
            .map_or_else(|_| format!("the server answered {status}"), |e| e.message);
        let code = match status {
            StatusCode::CONFLICT => 3,
            StatusCode::BAD_REQUEST => 2,
            _ => 1,
        };
        Err(Failure::new(code, message))
    }
}
