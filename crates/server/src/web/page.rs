//! The page's HTML. maud escapes every value it interpolates, so a tool's arguments, a reason
//! or a note written by a model shows as text and never as markup. Every answer also carries a
//! Content-Security-Policy that runs no script at all, in case something slipped through.

use axum::http::header::{CACHE_CONTROL, CONTENT_SECURITY_POLICY, REFERRER_POLICY};
use axum::http::{HeaderName, HeaderValue, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use maud::{DOCTYPE, Markup, html};
use tollgate_approval::{Request, format_ms, format_span};

use super::session::Flash;

/// No script, no outside resource; styles only inline; forms only to this server; never in a
/// frame.
const CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; \
                   frame-ancestors 'none'; base-uri 'none'";

const STYLE: &str = "
body{font:15px/1.45 system-ui,sans-serif;margin:0 auto;max-width:60rem;padding:1rem;color:#222}
header{display:flex;gap:1rem;align-items:center;border-bottom:1px solid #ccc;margin-bottom:1rem}
header h1{flex:1;font-size:1.3rem}
article{border:1px solid #ccc;border-radius:6px;padding:.5rem 1rem;margin:1rem 0}
pre{background:#f5f5f5;padding:.5rem;overflow-x:auto;white-space:pre-wrap;word-break:break-all}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.1rem 1rem;margin:.5rem 0}
dt{color:#666}dd{margin:0}
textarea{width:100%;box-sizing:border-box}
button{padding:.3rem 1rem;margin:.3rem .5rem .3rem 0;cursor:pointer}
.approve{background:#1a7f37;color:#fff;border:0;border-radius:4px}
.reject{background:#cf222e;color:#fff;border:0;border-radius:4px}
.flash{padding:.5rem 1rem;border-radius:4px}.done{background:#dafbe1}.refused{background:#ffebe9}
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ddd;padding:.3rem;text-align:left}
.muted{color:#666}
";

/// What the approvals page shows.
pub(crate) struct View<'a> {
    /// The signed-in token's name.
    pub who: &'a str,
    /// The session's CSRF token, for every form.
    pub csrf: &'a str,
    /// What the last form did.
    pub flash: Option<Flash>,
    /// Pending requests, newest first.
    pub pending: &'a [Request],
    /// Decided requests, newest first.
    pub decided: &'a [Request],
    /// Now, in milliseconds since the Unix epoch.
    pub now_ms: i64,
}

/// An HTML answer with `status` and the page's security headers.
pub(crate) fn respond(status: StatusCode, markup: Markup) -> Response {
    let mut response = (status, Html(markup.into_string())).into_response();
    let headers = response.headers_mut();
    headers.insert(CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    // Not `no-referrer`: under it a browser sends `Origin: null` with the page's own forms,
    // and the same-origin check refuses them.
    headers.insert(REFERRER_POLICY, HeaderValue::from_static("same-origin"));
    headers.insert(
        HeaderName::from_static("x-content-type-options"),
        HeaderValue::from_static("nosniff"),
    );
    response
}

/// A page that only says `text` under `title`, with a link to sign in.
pub(crate) fn message(status: StatusCode, title: &str, text: &str) -> Response {
    let body = html! {
        h1 { (title) }
        p { (text) }
        p { a href=(super::LOGIN) { "Sign in" } " · " a href=(super::PAGE) { "Approvals" } }
    };
    respond(status, layout(title, body))
}

/// The sign-in form, with `error` above it when the last attempt failed.
pub(crate) fn login(error: Option<&str>) -> Markup {
    layout(
        "Sign in",
        html! {
            h1 { "tollgate approvals: sign in" }
            @if let Some(error) = error { p.flash.refused { (error) } }
            form method="post" action=(super::LOGIN) {
                p { label for="token" { "Token (an approver's or an admin's)" } }
                p { input #token type="password" name="token" autocomplete="off" required size="50"; }
                button type="submit" { "Sign in" }
            }
        },
    )
}

/// The approvals page.
pub(crate) fn approvals(view: &View<'_>) -> Markup {
    layout(
        "Approvals",
        html! {
            header {
                h1 { "tollgate approvals" }
                span { "Signed in as " strong #who { (view.who) } }
                form method="post" action=(super::LOGOUT) {
                    (csrf_field(view.csrf))
                    button type="submit" { "Sign out" }
                }
            }
            @match &view.flash {
                Some(Flash::Done(text)) => p.flash.done #flash { (text) },
                Some(Flash::Refused(text)) => p.flash.refused #flash { (text) },
                None => {},
            }
            section #pending {
                h2 { "Waiting for a decision (" (view.pending.len()) ")" }
                @if view.pending.is_empty() { p.muted { "Nothing is waiting." } }
                @for request in view.pending { (pending(request, view)) }
            }
            section #decided {
                h2 { "Decided" }
                (decided(view.decided))
            }
        },
    )
}

fn pending(request: &Request, view: &View<'_>) -> Markup {
    let age = (view.now_ms - request.created_at) / 1000;
    let left = (request.expires_at - view.now_ms) / 1000;
    let may_decide = request.approvers.iter().any(|a| a == view.who);
    html! {
        article.request id=(request.id) {
            h3 { code { (request.tool_name) } " " small.muted { (request.id) } }
            dl {
                dt { "Agent" } dd { (request.agent) }
                dt { "Run" } dd { code { (request.run_id) } }
                dt { "Asked by" } dd { (request.asked_by) }
                dt { "Why" } dd { @for reason in &request.reasons { div { (reason) } } }
                dt { "Filed" } dd { (format_span(age)) " ago" }
                dt { "Expires in" } dd { (format_span(left)) }
                dt { "Approvers" } dd { (request.approvers.join(", ")) }
            }
            pre.arguments { (pretty(&request.arguments)) }
            @if may_decide {
                form method="post" action=(decide_url(&request.id, "approve")) {
                    (csrf_field(view.csrf))
                    label { "Note (optional; the model reads a rejection's note)"
                        textarea name="note" rows="2" {} }
                    button.approve type="submit" { "Approve" }
                    button.reject type="submit" formaction=(decide_url(&request.id, "reject")) { "Reject" }
                }
            } @else {
                p.muted { "You (" (view.who) ") are not among its approvers." }
            }
        }
    }
}

fn decided(requests: &[Request]) -> Markup {
    html! {
        @if requests.is_empty() { p.muted { "Nothing decided yet." } }
        @else {
            table {
                tr { th { "Request" } th { "Tool" } th { "Status" } th { "By" } th { "At" } th { "Channel" } th { "Note" } }
                @for r in requests {
                    tr.decided id=(r.id) {
                        td { code { (r.id) } }
                        td { code { (r.tool_name) } }
                        td { (r.status.as_str()) }
                        td { (r.responded_by.as_deref().unwrap_or("")) }
                        td { (r.responded_at.map(format_ms).unwrap_or_default()) }
                        td { (r.channel.as_deref().unwrap_or("")) }
                        td { (r.response_note.as_deref().unwrap_or("")) }
                    }
                }
            }
        }
    }
}

fn layout(title: &str, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " · tollgate" }
                style { (maud::PreEscaped(STYLE)) }
            }
            body { (body) }
        }
    }
}

fn csrf_field(csrf: &str) -> Markup {
    html! { input type="hidden" name="csrf" value=(csrf); }
}

fn decide_url(id: &str, verb: &str) -> String {
    format!("{}/{id}/{verb}", super::PAGE)
}

fn pretty(arguments: &serde_json::Value) -> String {
    serde_json::to_string_pretty(arguments).unwrap_or_else(|_| arguments.to_string())
}
