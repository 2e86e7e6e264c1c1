//! What can go wrong: the configuration file, and every error the API answers.
//!
//! Every error leaves the server as a JSON body `{"error": KIND, "message": TEXT}` with a
//! fitting status; a 409 also says who decided and when.

use std::path::PathBuf;

use axum::Json;
use axum::http::header::WWW_AUTHENTICATE;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use tollgate_approval::{Refused, StoreError, format_ms};

use crate::wire::ErrorBody;

/// The configuration file cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// It cannot be read.
    #[error("cannot read {}: {reason}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// It is not a valid server configuration.
    #[error("{}: {reason}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong, naming the key.
        reason: String,
    },
}

/// The crate's result.
pub type Result<T, E = ConfigError> = std::result::Result<T, E>;

/// An error answer of the API: a status and its JSON body.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    body: ErrorBody,
}

impl ApiError {
    /// An error with `status`, kind `error` and `message`.
    pub fn new(status: StatusCode, error: &str, message: impl Into<String>) -> Self {
        Self {
            status,
            body: ErrorBody {
                error: error.to_owned(),
                message: message.into(),
                status: None,
                by: None,
                at: None,
            },
        }
    }

    /// 400 `bad_request`.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "bad_request", message)
    }

    /// 401 `unauthorized` (with `WWW-Authenticate: Bearer`).
    pub fn unauthorized(message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, "unauthorized", message)
    }

    /// 403 `forbidden`.
    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(StatusCode::FORBIDDEN, "forbidden", message)
    }

    /// 404 `not_found`.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, "not_found", message)
    }

    /// 500 `store_failed`; the cause is logged, not sent.
    pub fn store(error: &StoreError) -> Self {
        tracing::error!(%error, "the approval database failed");
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "store_failed",
            "the approval database failed; the server's log says why",
        )
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.body.message
    }

    /// The status.
    pub fn status(&self) -> StatusCode {
        self.status
    }
}

impl From<Refused> for ApiError {
    fn from(refused: Refused) -> Self {
        let message = refused.to_string();
        match refused {
            Refused::NotFound { .. } => Self::not_found(message),
            Refused::NotAllowed { .. } => Self::forbidden(message),
            Refused::AlreadyDecided { status, by, at, .. } => {
                let mut error = Self::new(StatusCode::CONFLICT, "already_decided", message);
                error.body.status = Some(status);
                error.body.by = by;
                error.body.at = at.map(format_ms);
                error
            }
            Refused::Store(e) => Self::store(&e),
            _ => Self::new(StatusCode::CONFLICT, "conflict", message),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (self.status, Json(self.body)).into_response();
        if self.status == StatusCode::UNAUTHORIZED {
            response
                .headers_mut()
                .insert(WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        response
    }
}
