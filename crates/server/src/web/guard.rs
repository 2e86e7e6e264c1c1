//! What stands in front of the page's handlers: the session cookie, and the check that a form
//! was posted from this server's own pages.

use axum::extract::{FromRequestParts, Request, State};
use axum::http::header::{COOKIE, HOST, ORIGIN};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};

use super::LOGIN;
use super::page;
use super::session::Session;
use crate::AppState;

/// The session cookie's name.
pub(crate) const COOKIE_NAME: &str = "tollgate_session";

/// A request from a signed-in browser. Without a live session, a `GET` is sent to the sign-in
/// page and anything else is refused with 401.
#[derive(Debug)]
pub(crate) struct SignedIn {
    /// The session's id (from the cookie).
    pub id: String,
    /// The session.
    pub session: Session,
}

impl FromRequestParts<AppState> for SignedIn {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Response> {
        let found = cookie(&parts.headers, COOKIE_NAME)
            .and_then(|id| Some((id.to_owned(), state.sessions.get(id)?)));
        match found {
            Some((id, session)) => Ok(Self { id, session }),
            None if parts.method == Method::GET || parts.method == Method::HEAD => {
                Err(Redirect::to(LOGIN).into_response())
            }
            None => Err(page::message(
                StatusCode::UNAUTHORIZED,
                "Not signed in",
                "This browser has no live session (it expired, signed out, or the server \
                 restarted). Sign in again.",
            )),
        }
    }
}

/// The value of cookie `name` among the request's `Cookie` headers.
pub(crate) fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|h| h.to_str().ok())
        .flat_map(|h| h.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(key, _)| *key == name)
        .map(|(_, value)| value)
}

/// `Set-Cookie` for session `id`: HttpOnly, SameSite=Strict, Path=/, for `max_age_secs`;
/// Secure when the page is served over https.
pub(crate) fn session_cookie(id: &str, max_age_secs: u64, secure: bool) -> HeaderValue {
    let secure = if secure { "; Secure" } else { "" };
    let text = format!(
        "{COOKIE_NAME}={id}; HttpOnly; SameSite=Strict; Path=/; Max-Age={max_age_secs}{secure}"
    );
    // The id is hex, so the value is always a valid header.
    HeaderValue::from_str(&text).unwrap_or_else(|_| HeaderValue::from_static(""))
}

/// Refuses with 403 a form posted from another site: a request other than `GET`/`HEAD` whose
/// `Origin` is not this server's (the origin of `public_url`, else the `Host` it was sent to).
/// A request without `Origin` passes: the CSRF token still guards it.
pub(crate) async fn same_origin(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    let safe = request.method() == Method::GET || request.method() == Method::HEAD;
    if !safe && let Some(origin) = request.headers().get(ORIGIN) {
        let public = state.config.public_url.as_ref();
        if !origin_allowed(origin, public, request.headers().get(HOST)) {
            return page::message(
                StatusCode::FORBIDDEN,
                "Refused",
                "This form was sent from another site.",
            );
        }
    }
    next.run(request).await
}

/// Whether `origin` is this server's.
fn origin_allowed(
    origin: &HeaderValue,
    public: Option<&url::Url>,
    host: Option<&HeaderValue>,
) -> bool {
    let Some(origin) = origin.to_str().ok().and_then(|o| url::Url::parse(o).ok()) else {
        return false; // `null`, or not a URL
    };
    if let Some(public) = public {
        return origin.origin() == public.origin();
    }
    let (Some(host), Some(name)) = (host.and_then(|h| h.to_str().ok()), origin.host_str()) else {
        return false;
    };
    let authority = match origin.port() {
        Some(port) => format!("{name}:{port}"),
        None => name.to_owned(),
    };
    matches!(origin.scheme(), "http" | "https") && authority.eq_ignore_ascii_case(host)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allowed(origin: &str, public: Option<&str>, host: Option<&str>) -> bool {
        let public = public.map(|p| url::Url::parse(p).unwrap());
        let host = host.map(HeaderValue::from_str).map(Result::unwrap);
        origin_allowed(
            &HeaderValue::from_str(origin).unwrap(),
            public.as_ref(),
            host.as_ref(),
        )
    }

    #[test]
    fn only_this_servers_origin_may_post() {
        let public = Some("https://approvals.example.com/");
        assert!(allowed("https://approvals.example.com", public, None));
        assert!(!allowed("http://approvals.example.com", public, None));
        assert!(!allowed("https://evil.example.com", public, None));
        assert!(!allowed("https://approvals.example.com:8443", public, None));
        assert!(!allowed("null", public, None));
        let host = Some("127.0.0.1:8080");
        assert!(allowed("http://127.0.0.1:8080", None, host));
        assert!(!allowed("http://127.0.0.1:8081", None, host));
        assert!(!allowed("http://localhost:8080", None, host));
        assert!(!allowed("http://127.0.0.1:8080", None, None));
    }

    #[test]
    fn cookies_are_found_by_exact_name() {
        let mut headers = HeaderMap::new();
        headers.append(COOKIE, HeaderValue::from_static("a=1; tollgate_sessionx=2"));
        headers.append(COOKIE, HeaderValue::from_static("tollgate_session=abc"));
        assert_eq!(cookie(&headers, COOKIE_NAME), Some("abc"));
        assert_eq!(cookie(&headers, "a"), Some("1"));
        assert_eq!(cookie(&headers, "b"), None);
    }

    #[test]
    fn the_session_cookie_is_http_only_strict_and_secure_over_https() {
        let plain = session_cookie("ab12", 60, false);
        assert_eq!(
            plain.to_str().unwrap(),
            "tollgate_session=ab12; HttpOnly; SameSite=Strict; Path=/; Max-Age=60"
        );
        let secure = session_cookie("ab12", 60, true);
        assert!(secure.to_str().unwrap().ends_with("; Secure"));
    }
}
