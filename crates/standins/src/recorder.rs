//! Every request a stand-in got, in arrival order.

use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;

/// One request as the stand-in received it, with the status it answered.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RecordedRequest {
    /// `GET`, `POST`, …
    pub method: String,
    /// The path without the query (`/v1/messages`).
    pub path: String,
    /// The query string without `?` (`beta=true`), if any.
    pub query: Option<String>,
    /// Header names (lower case) and values, in arrival order; values that are not UTF-8 are
    /// converted lossily.
    pub headers: Vec<(String, String)>,
    /// The body as text (lossy UTF-8).
    pub body: String,
    /// The body parsed as JSON, or `None` when it is empty or not JSON.
    pub json: Option<Value>,
    /// The HTTP status the stand-in answered.
    pub status: u16,
}

impl RecordedRequest {
    /// The first value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    /// `METHOD /path?query -> status`, for listing what a CLI asked.
    pub fn summary(&self) -> String {
        let query = self
            .query
            .as_deref()
            .map(|query| format!("?{query}"))
            .unwrap_or_default();
        format!("{} {}{query} -> {}", self.method, self.path, self.status)
    }
}

/// The shared list the server appends to and the test reads.
#[derive(Debug, Clone, Default)]
pub(crate) struct Recorder {
    requests: Arc<Mutex<Vec<RecordedRequest>>>,
}

impl Recorder {
    pub(crate) fn push(&self, request: RecordedRequest) {
        self.requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(request);
    }

    pub(crate) fn snapshot(&self) -> Vec<RecordedRequest> {
        self.requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}
