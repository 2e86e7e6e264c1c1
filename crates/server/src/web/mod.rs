//! The approvals page for people: `/approvals`, server-rendered HTML that works without
//! JavaScript.
//!
//! ```text
//! GET  /approvals               the page (pending requests, then decided ones); → login without a session
//! GET  /approvals/login         the sign-in form
//! POST /approvals/login         token=… → session cookie, 303 to /approvals
//! POST /approvals/logout        csrf=… → session ended, 303 to the sign-in form
//! POST /approvals/{id}/approve  note=…&csrf=… → decided through channel `web`, 303 to /approvals
//! POST /approvals/{id}/reject   likewise
//! ```
//!
//! Signing in takes a token with the `approver` or `admin` role, checked against the same
//! table as the API; the browser then holds only a random session id ([`session`]). Every
//! post is checked three ways, in this order: its `Origin` (403 from another site), its
//! session (401 without one), its CSRF field (403 unless it is the session's).

mod guard;
mod page;
mod session;

use axum::Router;
use axum::extract::rejection::FormRejection;
use axum::extract::{Form, Path, State};
use axum::http::StatusCode;
use axum::http::header::SET_COOKIE;
use axum::middleware;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use serde::Deserialize;
use tollgate_approval::{Decision, Refused, Status, Verdict};

use crate::AppState;
use crate::auth::Role;
use guard::SignedIn;
use session::Flash;

pub use session::{SESSION_TTL, Sessions};

/// The channel page decisions are recorded under.
pub const WEB_CHANNEL: &str = "web";
/// Most decided requests the page lists.
const DECIDED_SHOWN: usize = 50;

const PAGE: &str = "/approvals";
const LOGIN: &str = "/approvals/login";
const LOGOUT: &str = "/approvals/logout";

/// The page's routes, every post behind the same-origin check.
pub(crate) fn routes(state: &AppState) -> Router<AppState> {
    Router::new()
        .route(PAGE, get(show))
        .route(LOGIN, get(login_form).post(login))
        .route(LOGOUT, post(logout))
        .route("/approvals/{id}/approve", post(approve))
        .route("/approvals/{id}/reject", post(reject))
        .route_layer(middleware::from_fn_with_state(
            state.clone(),
            guard::same_origin,
        ))
}

#[derive(Debug, Deserialize)]
struct LoginForm {
    token: String,
}

#[derive(Debug, Deserialize)]
struct DecideForm {
    #[serde(default)]
    note: Option<String>,
    #[serde(default)]
    csrf: Option<String>,
}

/// `GET /approvals`.
async fn show(State(state): State<AppState>, signed: SignedIn) -> Response {
    if let Err(e) = state.store.sweep().await {
        return store_failed(&e);
    }
    let requests = match state.store.list(None).await {
        Ok(requests) => requests,
        Err(e) => return store_failed(&e),
    };
    let (pending, mut decided): (Vec<_>, Vec<_>) = requests
        .into_iter()
        .partition(|r| r.status == Status::Pending);
    decided.truncate(DECIDED_SHOWN);
    let view = page::View {
        who: signed.session.token.name(),
        csrf: &signed.session.csrf,
        flash: state.sessions.take_flash(&signed.id),
        pending: &pending,
        decided: &decided,
        now_ms: state.store.now_ms(),
    };
    page::respond(StatusCode::OK, page::approvals(&view))
}

/// `GET /approvals/login`.
async fn login_form() -> Response {
    page::respond(StatusCode::OK, page::login(None))
}

/// `POST /approvals/login`: a known approver's or admin's token starts a session.
async fn login(
    State(state): State<AppState>,
    form: Result<Form<LoginForm>, FormRejection>,
) -> Response {
    let Ok(Form(form)) = form else {
        return page::respond(StatusCode::BAD_REQUEST, page::login(Some("Send the form.")));
    };
    let Some(token) = state.tokens.find(form.token.trim()) else {
        return page::respond(
            StatusCode::UNAUTHORIZED,
            page::login(Some("Unknown token.")),
        );
    };
    if !token.has(Role::Approver) {
        let text = format!(
            "The token `{}` lacks the approver role: only approvers and admins may sign in.",
            token.name()
        );
        return page::respond(StatusCode::FORBIDDEN, page::login(Some(&text)));
    }
    let (id, _) = match state.sessions.open(token.clone()) {
        Ok(opened) => opened,
        Err(e) => {
            tracing::error!(error = %e, "no random bytes for a session id");
            return page::message(
                StatusCode::INTERNAL_SERVER_ERROR,
                "Cannot sign in",
                "The server could not make a session id; its log says why.",
            );
        }
    };
    let cookie = guard::session_cookie(&id, state.sessions.ttl().as_secs(), https(&state));
    ([(SET_COOKIE, cookie)], Redirect::to(PAGE)).into_response()
}

/// `POST /approvals/logout`.
async fn logout(
    State(state): State<AppState>,
    signed: SignedIn,
    form: Result<Form<DecideForm>, FormRejection>,
) -> Response {
    if let Err(refused) = check_csrf(&signed, &form) {
        return refused.into_response();
    }
    state.sessions.close(&signed.id);
    let cleared = guard::session_cookie("", 0, https(&state));
    ([(SET_COOKIE, cleared)], Redirect::to(LOGIN)).into_response()
}

/// `POST /approvals/{id}/approve`.
async fn approve(
    State(state): State<AppState>,
    signed: SignedIn,
    Path(id): Path<String>,
    form: Result<Form<DecideForm>, FormRejection>,
) -> Response {
    decide(&state, &signed, &id, form, Verdict::Approve { edit: None }).await
}

/// `POST /approvals/{id}/reject`.
async fn reject(
    State(state): State<AppState>,
    signed: SignedIn,
    Path(id): Path<String>,
    form: Result<Form<DecideForm>, FormRejection>,
) -> Response {
    decide(&state, &signed, &id, form, Verdict::Reject).await
}

/// Records the decision under the session's token name, leaves what happened as the next
/// page's flash, and sends the browser back to the page.
async fn decide(
    state: &AppState,
    signed: &SignedIn,
    id: &str,
    form: Result<Form<DecideForm>, FormRejection>,
    verdict: Verdict,
) -> Response {
    let form = match check_csrf(signed, &form) {
        Ok(form) => form,
        Err(refused) => return refused.into_response(),
    };
    let decision = Decision {
        verdict,
        by: signed.session.token.name().to_owned(),
        channel: WEB_CHANNEL.into(),
        note: form
            .note
            .as_deref()
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map(str::to_owned),
    };
    let flash = match state.store.decide(id, &decision).await {
        Ok(request) => {
            state.metrics.decided(&request, WEB_CHANNEL);
            Flash::Done(format!("{id} {}.", request.status.as_str()))
        }
        Err(Refused::Store(e)) => {
            tracing::error!(error = %e, "the approval database failed");
            Flash::Refused("The approval database failed; the server's log says why.".into())
        }
        Err(refused) => Flash::Refused(refused.to_string()),
    };
    state.sessions.set_flash(&signed.id, flash);
    Redirect::to(PAGE).into_response()
}

/// Why a posted form is refused before it is acted on.
enum FormRefused {
    /// Not a form this page sends: 400.
    NotAForm,
    /// Without this session's CSRF token: 403.
    Csrf,
}

impl IntoResponse for FormRefused {
    fn into_response(self) -> Response {
        match self {
            Self::NotAForm => page::message(
                StatusCode::BAD_REQUEST,
                "Bad form",
                "The request is not a form this page sends.",
            ),
            Self::Csrf => page::message(
                StatusCode::FORBIDDEN,
                "Refused",
                "This form does not carry this session's CSRF token. Reload the page and try \
                 again.",
            ),
        }
    }
}

/// The form, when it carries the session's CSRF token.
fn check_csrf<'f>(
    signed: &SignedIn,
    form: &'f Result<Form<DecideForm>, FormRejection>,
) -> Result<&'f DecideForm, FormRefused> {
    let Ok(Form(form)) = form else {
        return Err(FormRefused::NotAForm);
    };
    match &form.csrf {
        Some(csrf) if signed.session.csrf_matches(csrf) => Ok(form),
        _ => Err(FormRefused::Csrf),
    }
}

/// Whether people reach the server over https (`public_url`): then the cookie is `Secure`.
fn https(state: &AppState) -> bool {
    state
        .config
        .public_url
        .as_ref()
        .is_some_and(|u| u.scheme() == "https")
}

fn store_failed(error: &tollgate_approval::StoreError) -> Response {
    tracing::error!(%error, "the approval database failed");
    page::message(
        StatusCode::INTERNAL_SERVER_ERROR,
        "The approval database failed",
        "The server's log says why.",
    )
}
