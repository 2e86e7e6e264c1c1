//! `GET /v1/openapi.json`: the OpenAPI document of the API, derived from the wire types and
//! the handlers' `#[utoipa::path]` annotations. It holds no secret, so it needs no token.
//!
//! The runs routes are described here, on stand-in functions, so `runs.rs` carries only
//! the derives of its bodies. The crate's `it` tests check that every route of the router is
//! in the document and that the document's routes are served.

use axum::Json;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{IntoParams, Modify, OpenApi};

use crate::runs::{NewRun, RunView};
use crate::wire::{
    ApproveBody, Cancelled, Decided, ErrorBody, FiledApproval, Health, NewApproval, RejectBody,
    RequestDetail, RequestList, RunCreated, RunList,
};

/// The `{id}` of an approvals route.
#[derive(Debug, IntoParams)]
#[into_params(names("id"), parameter_in = Path)]
pub(crate) struct Id(
    /// The request id, `cr_` and a ULID.
    #[allow(dead_code)]
    String,
);

/// The `{id}` of a runs route.
#[derive(Debug, IntoParams)]
#[into_params(names("id"), parameter_in = Path)]
pub(crate) struct RunId(
    /// The run id, `run_` and a ULID.
    #[allow(dead_code)]
    String,
);

/// The document.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "tollgate server",
        description = "The approvals and runs API of `tollgate serve`. Every route but \
                       `/healthz`, `/v1/openapi.json` and the channel callbacks (signed by \
                       their platforms) takes `Authorization: Bearer TOKEN`."
    ),
    paths(
        crate::healthz,
        document,
        crate::metrics::scrape,
        crate::approvals::list,
        crate::approvals::file::file,
        crate::approvals::show,
        crate::approvals::approve,
        crate::approvals::reject,
        create_run,
        list_runs,
        show_run,
        cancel_run,
        run_events,
        crate::channels::feishu,
        crate::channels::slack,
    ),
    components(schemas(
        ApproveBody, RejectBody, RequestList, RequestDetail, Decided, ErrorBody, Health,
        NewApproval, FiledApproval, NewRun, RunView, RunCreated, RunList, Cancelled
    )),
    modifiers(&BearerScheme),
    tags(
        (name = "approvals", description = "Confirmation requests: file, list, show (and wait on), decide"),
        (name = "runs", description = "Agent runs started over HTTP and their event streams"),
        (name = "channels", description = "Callbacks of the approval channels' platforms (Feishu/Lark, Slack)"),
        (name = "server", description = "Health, metrics and this document"),
    )
)]
struct ApiDoc;

/// Adds the `bearer` security scheme the routes name.
struct BearerScheme;

impl Modify for BearerScheme {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some(
                        "A token of the server's configuration; the route says which role it needs",
                    ))
                    .build(),
            ),
        );
    }
}

/// The OpenAPI document of the server's API (OpenAPI 3.1).
pub fn openapi() -> utoipa::openapi::OpenApi {
    ApiDoc::openapi()
}

/// `GET /v1/openapi.json` (no token).
#[utoipa::path(get, path = "/v1/openapi.json", operation_id = "openapi", tag = "server",
    responses((status = 200, description = "This document", content_type = "application/json")))]
pub(crate) async fn document() -> Json<utoipa::openapi::OpenApi> {
    Json(openapi())
}

// The runs routes, described on stand-ins (their handlers are in `runs.rs`); the stand-ins
// are never called, only read by the `OpenApi` derive.

/// Start an agent run (role `runner` or `admin`).
///
/// The run starts at once, in the background; its asks wait in the server's database.
#[utoipa::path(post, path = "/v1/runs", tag = "runs", security(("bearer" = [])),
    request_body = NewRun,
    responses(
        (status = 201, description = "Started", body = RunCreated),
        (status = 400, description = "A bad body, an agent name that is not a plain name, or a `model` naming a file", body = ErrorBody),
        (status = 401, description = "No token, or an unknown one", body = ErrorBody),
        (status = 403, description = "The token lacks the runner role", body = ErrorBody),
        (status = 404, description = "No such agent, or no `agents_dir`", body = ErrorBody),
        (status = 413, description = "A body over 64 KiB", body = ErrorBody),
        (status = 415, description = "A body that is not `application/json`", body = ErrorBody),
        (status = 422, description = "The agent file does not load (`bad_agent`), or has no skill the request names (`unknown_skill`)", body = ErrorBody),
        (status = 500, description = "An admin hook file does not load (`bad_admin_hooks`)", body = ErrorBody),
    ))]
#[allow(dead_code)]
fn create_run() {}

/// The runs the server's database holds, newest first (any token).
#[utoipa::path(get, path = "/v1/runs", tag = "runs", security(("bearer" = [])),
    params(crate::runs::ListQuery),
    responses(
        (status = 200, description = "The runs", body = RunList),
        (status = 400, description = "A bad query", body = ErrorBody),
        (status = 401, description = "No token, or an unknown one", body = ErrorBody),
    ))]
#[allow(dead_code)]
fn list_runs() {}

/// One run (any token).
#[utoipa::path(get, path = "/v1/runs/{id}", tag = "runs", params(RunId),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The run", body = RunView),
        (status = 401, description = "No token, or an unknown one", body = ErrorBody),
        (status = 404, description = "No such run on this server", body = ErrorBody),
    ))]
#[allow(dead_code)]
fn show_run() {}

/// Cancel a run (role `runner` or `admin`); a request it waits on becomes `cancelled`.
#[utoipa::path(post, path = "/v1/runs/{id}/cancel", tag = "runs", params(RunId),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The run was told to stop", body = Cancelled),
        (status = 401, description = "No token, or an unknown one", body = ErrorBody),
        (status = 403, description = "The token lacks the runner role", body = ErrorBody),
        (status = 404, description = "No such run on this server", body = ErrorBody),
        (status = 409, description = "The run already ended (`conflict`)", body = ErrorBody),
    ))]
#[allow(dead_code)]
fn cancel_run() {}

/// The run's trace as Server-Sent Events (any token).
///
/// One event per trace step: `id:` is the step's `seq`, `event:` its name (`run.started`,
/// `tool.call`, `approval.waiting`, …, `run.ended`), `data:` the step as JSON. Send
/// `Last-Event-ID` to get the steps after it. The stream ends after `run.ended`.
#[utoipa::path(get, path = "/v1/runs/{id}/events", tag = "runs", params(RunId,
        ("Last-Event-ID" = Option<u64>, Header, description = "Resume after this step's `seq`")),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The event stream", content_type = "text/event-stream", body = String),
        (status = 401, description = "No token, or an unknown one", body = ErrorBody),
        (status = 404, description = "No such run on this server", body = ErrorBody),
    ))]
#[allow(dead_code)]
fn run_events() {}
