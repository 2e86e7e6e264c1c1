//! The approvals page over plain HTTP: sign-in, the session cookie, escaping, CSRF, the
//! same-origin check and decisions through channel `web`.

use reqwest::header::{HeaderMap, LOCATION, ORIGIN, SET_COOKIE};
use serde_json::json;
use tollgate_approval::{Decision, Status, Verdict};

use crate::{CI, DBA, OPS, Server};

/// A client that follows no redirect, so each answer is seen as sent.
fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

/// An answer: status, headers, body.
struct Answer {
    status: u16,
    headers: HeaderMap,
    body: String,
}

impl Answer {
    async fn from(response: reqwest::Response) -> Self {
        Self {
            status: response.status().as_u16(),
            headers: response.headers().clone(),
            body: response.text().await.unwrap(),
        }
    }

    fn header(&self, name: impl reqwest::header::AsHeaderName) -> &str {
        self.headers.get(name).map_or("", |v| v.to_str().unwrap())
    }
}

/// `POST /approvals/login` with `token`.
async fn sign_in(server: &Server, token: &str) -> Answer {
    let response = client()
        .post(format!("{}/approvals/login", server.url))
        .form(&[("token", token)])
        .send()
        .await
        .unwrap();
    Answer::from(response).await
}

/// The session id the answer's cookie holds.
fn session_of(answer: &Answer) -> String {
    let cookie = answer.header(SET_COOKIE);
    let value = cookie.strip_prefix("tollgate_session=").unwrap();
    value.split(';').next().unwrap().to_owned()
}

/// A signed-in browser: its session id, and the CSRF token its page carries.
async fn signed_in(server: &Server, token: &str) -> (String, String) {
    let answer = sign_in(server, token).await;
    assert_eq!(answer.status, 303, "{}", answer.body);
    let session = session_of(&answer);
    let page = get_page(server, Some(&session)).await;
    (session, csrf_of(&page.body))
}

fn csrf_of(page: &str) -> String {
    let at = page.find(r#"name="csrf" value=""#).unwrap() + r#"name="csrf" value=""#.len();
    page[at..].split('"').next().unwrap().to_owned()
}

async fn get_page(server: &Server, session: Option<&str>) -> Answer {
    let mut request = client().get(format!("{}/approvals", server.url));
    if let Some(session) = session {
        request = request.header("cookie", format!("tollgate_session={session}"));
    }
    Answer::from(request.send().await.unwrap()).await
}

/// `POST path` as a form with `fields`, the session cookie and `origin` when given.
async fn post(
    server: &Server,
    path: &str,
    session: Option<&str>,
    fields: &[(&str, &str)],
    origin: Option<&str>,
) -> Answer {
    let mut request = client().post(format!("{}{path}", server.url)).form(fields);
    if let Some(session) = session {
        request = request.header("cookie", format!("tollgate_session={session}"));
    }
    if let Some(origin) = origin {
        request = request.header(ORIGIN, origin);
    }
    Answer::from(request.send().await.unwrap()).await
}

async fn status_of(server: &Server, id: &str) -> Status {
    server.store.get(id).await.unwrap().unwrap().status
}

#[tokio::test]
async fn sign_in_sets_an_http_only_strict_cookie_holding_a_session_id_not_the_token() {
    let server = Server::start(None).await;
    let answer = sign_in(&server, OPS).await;
    assert_eq!(answer.status, 303);
    assert_eq!(answer.header(LOCATION), "/approvals");
    let cookie = answer.header(SET_COOKIE);
    for attribute in [
        "; HttpOnly",
        "; SameSite=Strict",
        "; Path=/",
        "; Max-Age=43200",
    ] {
        assert!(cookie.contains(attribute), "{cookie}");
    }
    assert!(!cookie.contains("Secure"), "plain http: {cookie}");
    assert!(!cookie.contains(OPS), "{cookie}");
    assert_eq!(session_of(&answer).len(), 64);
    let page = get_page(&server, Some(&session_of(&answer))).await;
    assert_eq!(page.status, 200);
    assert!(page.body.contains(r#"<strong id="who">ops-lead</strong>"#));
}

#[tokio::test]
async fn the_cookie_is_secure_when_the_public_url_is_https() {
    let server = Server::start(Some("https://approvals.example.com")).await;
    let answer = sign_in(&server, OPS).await;
    assert!(answer.header(SET_COOKIE).ends_with("; Secure"));
}

#[tokio::test]
async fn the_page_lists_a_pending_request_with_its_arguments_escaped() {
    let server = Server::start(None).await;
    let arguments = json!({"sql": "<script>alert(1)</script>", "note": "a & b \"quoted\""});
    let id = server.file(arguments, &["ops-lead"]).await;
    let (session, _) = signed_in(&server, OPS).await;
    let page = get_page(&server, Some(&session)).await;
    assert_eq!(page.status, 200);
    assert!(page.header("content-type").starts_with("text/html"));
    assert!(
        page.header("content-security-policy")
            .contains("default-src 'none'")
    );
    assert!(!page.body.contains("<script"), "{}", page.body);
    assert!(page.body.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(page.body.contains("a &amp; b \\&quot;quoted\\&quot;"));
    for shown in [
        id.as_str(),
        "sql_execute",
        "permission_gate",
        "run-7",
        "calls of `sql_execute` need confirmation",
        "Expires in",
    ] {
        assert!(page.body.contains(shown), "{shown}: {}", page.body);
    }
    assert!(page.body.contains(&format!("/approvals/{id}/approve")));
    assert!(page.body.contains(&format!("/approvals/{id}/reject")));
}

#[tokio::test]
async fn approving_through_the_form_records_the_token_name_and_channel_web() {
    let server = Server::start(None).await;
    let id = server.file(json!({"sql": "DELETE"}), &["ops-lead"]).await;
    let (session, csrf) = signed_in(&server, OPS).await;
    let path = format!("/approvals/{id}/approve");
    let fields = [("note", "ticket OPS-12"), ("csrf", csrf.as_str())];
    let answer = post(&server, &path, Some(&session), &fields, Some(&server.url)).await;
    assert_eq!(answer.status, 303, "{}", answer.body);
    assert_eq!(answer.header(LOCATION), "/approvals");
    let request = server.store.get(&id).await.unwrap().unwrap();
    assert_eq!(request.status, Status::Approved);
    assert_eq!(request.responded_by.as_deref(), Some("ops-lead"));
    assert_eq!(request.channel.as_deref(), Some("web"));
    assert_eq!(request.response_note.as_deref(), Some("ticket OPS-12"));
    let page = get_page(&server, Some(&session)).await;
    assert!(
        page.body.contains(&format!("{id} approved.")),
        "{}",
        page.body
    );
    assert!(page.body.contains("ticket OPS-12"));
}

#[tokio::test]
async fn rejecting_through_the_form_records_a_rejection() {
    let server = Server::start(None).await;
    let id = server.file(json!({"sql": "DROP"}), &["ops-lead"]).await;
    let (session, csrf) = signed_in(&server, OPS).await;
    let path = format!("/approvals/{id}/reject");
    let answer = post(
        &server,
        &path,
        Some(&session),
        &[("csrf", csrf.as_str())],
        None,
    )
    .await;
    assert_eq!(answer.status, 303);
    assert_eq!(status_of(&server, &id).await, Status::Rejected);
}

#[tokio::test]
async fn a_post_without_or_with_a_wrong_csrf_token_is_refused_403() {
    let server = Server::start(None).await;
    let id = server.file(json!({}), &["ops-lead"]).await;
    let (session, csrf) = signed_in(&server, OPS).await;
    let (_, other_csrf) = signed_in(&server, OPS).await;
    let path = format!("/approvals/{id}/approve");
    for fields in [
        vec![("note", "x")],
        vec![("csrf", "")],
        vec![("csrf", "0123")],
        vec![("csrf", other_csrf.as_str())],
        vec![("csrf", &csrf[..63])],
    ] {
        let answer = post(&server, &path, Some(&session), &fields, None).await;
        assert_eq!(answer.status, 403, "{fields:?}");
    }
    let logout = post(&server, "/approvals/logout", Some(&session), &[], None).await;
    assert_eq!(logout.status, 403);
    assert_eq!(status_of(&server, &id).await, Status::Pending);
}

#[tokio::test]
async fn a_forged_or_missing_cookie_is_refused() {
    let server = Server::start(None).await;
    let id = server.file(json!({}), &["ops-lead"]).await;
    let (session, csrf) = signed_in(&server, OPS).await;
    let forged = "f".repeat(64);
    let page = get_page(&server, Some(&forged)).await;
    assert_eq!(page.status, 303);
    assert_eq!(page.header(LOCATION), "/approvals/login");
    assert_eq!(
        get_page(&server, None).await.header(LOCATION),
        "/approvals/login"
    );
    let path = format!("/approvals/{id}/approve");
    let fields = [("csrf", csrf.as_str())];
    for cookie in [Some(forged.as_str()), Some(&csrf), None] {
        let answer = post(&server, &path, cookie, &fields, None).await;
        assert_eq!(answer.status, 401, "{cookie:?}");
    }
    assert_eq!(status_of(&server, &id).await, Status::Pending);
    assert_eq!(get_page(&server, Some(&session)).await.status, 200);
}

#[tokio::test]
async fn a_runner_token_or_an_unknown_one_cannot_sign_in() {
    let server = Server::start(None).await;
    let runner = sign_in(&server, CI).await;
    assert_eq!(runner.status, 403);
    assert!(
        runner.body.contains("lacks the approver role"),
        "{}",
        runner.body
    );
    assert!(runner.headers.get(SET_COOKIE).is_none());
    let unknown = sign_in(&server, "not-a-token-0123456789").await;
    assert_eq!(unknown.status, 401);
    assert!(unknown.headers.get(SET_COOKIE).is_none());
    let admin = sign_in(&server, DBA).await;
    assert_eq!(admin.status, 303, "an admin may sign in");
}

#[tokio::test]
async fn a_cross_origin_post_is_refused_403() {
    let server = Server::start(None).await;
    let id = server.file(json!({}), &["ops-lead"]).await;
    let (session, csrf) = signed_in(&server, OPS).await;
    let path = format!("/approvals/{id}/approve");
    let fields = [("csrf", csrf.as_str())];
    for origin in ["http://evil.example", "null", "http://127.0.0.1:1"] {
        let answer = post(&server, &path, Some(&session), &fields, Some(origin)).await;
        assert_eq!(answer.status, 403, "{origin}");
    }
    let login = post(
        &server,
        "/approvals/login",
        None,
        &[("token", OPS)],
        Some("http://evil.example"),
    )
    .await;
    assert_eq!(login.status, 403);
    assert!(login.headers.get(SET_COOKIE).is_none());
    assert_eq!(status_of(&server, &id).await, Status::Pending);
}

#[tokio::test]
async fn a_decided_request_says_by_whom_and_a_non_approver_is_told_so() {
    let server = Server::start(None).await;
    let taken = server.file(json!({}), &["ops-lead", "dba"]).await;
    let theirs = server.file(json!({}), &["dba"]).await;
    let decision = Decision {
        verdict: Verdict::Reject,
        by: "dba".into(),
        channel: "cli".into(),
        note: None,
    };
    server.store.decide(&taken, &decision).await.unwrap();
    let (session, csrf) = signed_in(&server, OPS).await;

    let path = format!("/approvals/{taken}/approve");
    post(
        &server,
        &path,
        Some(&session),
        &[("csrf", csrf.as_str())],
        None,
    )
    .await;
    let page = get_page(&server, Some(&session)).await;
    assert!(
        page.body
            .contains(&format!("{taken} is already rejected by dba at ")),
        "{}",
        page.body
    );
    assert!(
        page.body
            .contains("You (ops-lead) are not among its approvers.")
    );

    let path = format!("/approvals/{theirs}/approve");
    post(
        &server,
        &path,
        Some(&session),
        &[("csrf", csrf.as_str())],
        None,
    )
    .await;
    let page = get_page(&server, Some(&session)).await;
    assert!(
        page.body.contains("`ops-lead` may not decide"),
        "{}",
        page.body
    );
    assert_eq!(status_of(&server, &theirs).await, Status::Pending);
}

#[tokio::test]
async fn signing_out_ends_the_session() {
    let server = Server::start(None).await;
    let (session, csrf) = signed_in(&server, OPS).await;
    let answer = post(
        &server,
        "/approvals/logout",
        Some(&session),
        &[("csrf", csrf.as_str())],
        None,
    )
    .await;
    assert_eq!(answer.status, 303);
    assert_eq!(answer.header(LOCATION), "/approvals/login");
    assert!(answer.header(SET_COOKIE).contains("Max-Age=0"));
    let page = get_page(&server, Some(&session)).await;
    assert_eq!(page.header(LOCATION), "/approvals/login");
}

#[tokio::test]
async fn a_decision_through_the_page_adds_its_wait_to_the_latency_histogram() {
    let server = Server::start(None).await;
    let id = server.file(json!({"sql": "DELETE"}), &["ops-lead"]).await;
    let (session, csrf) = signed_in(&server, OPS).await;
    let path = format!("/approvals/{id}/reject");
    let fields = [("csrf", csrf.as_str())];
    let answer = post(&server, &path, Some(&session), &fields, Some(&server.url)).await;
    assert_eq!(answer.status, 303, "{}", answer.body);
    let request = server.store.get(&id).await.unwrap().unwrap();
    let waited = (request.responded_at.unwrap() - request.created_at) as f64 / 1000.0;
    let text = crate::metrics::scrape(&server).await;
    let name = "tollgate_approval_decision_latency_seconds";
    let labels = [("decision", "rejected"), ("channel", "web")];
    let sample = |suffix| crate::metrics::sample(&text, &format!("{name}_{suffix}"), &labels);
    assert_eq!(sample("count"), Some(1.0), "{text}");
    assert_eq!(sample("sum"), Some(waited), "{text}");
}
