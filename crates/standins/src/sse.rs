//! Server-Sent Events bodies, as both APIs stream them: `event: NAME` then `data: JSON`.

use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

/// Builds a stream from `(event name, data)` pairs.
#[derive(Debug, Default)]
pub(crate) struct EventStream {
    body: String,
}

impl EventStream {
    pub(crate) fn event(&mut self, name: &str, data: &Value) {
        self.body.push_str("event: ");
        self.body.push_str(name);
        self.body.push_str("\ndata: ");
        self.body.push_str(&data.to_string());
        self.body.push_str("\n\n");
    }
}

impl IntoResponse for EventStream {
    fn into_response(self) -> Response {
        (
            StatusCode::OK,
            [
                (header::CONTENT_TYPE, "text/event-stream; charset=utf-8"),
                (header::CACHE_CONTROL, "no-cache"),
            ],
            self.body,
        )
            .into_response()
    }
}
