//! `GET /v1/openapi.json`: the document names every route of the router (read from the
//! crate's sources, so a new route cannot be left out), every route it names is served, and
//! its schemas match what the server answers.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::{Value, json};

use crate::{CI, OPS, Server};

const METHODS: [&str; 5] = ["get", "post", "put", "patch", "delete"];
/// The routes that take no token.
const OPEN: [&str; 2] = ["/healthz", "/v1/openapi.json"];
/// The channel callbacks: no bearer token, the platform's signature instead.
const CALLBACKS: [&str; 2] = [
    "/v1/channels/feishu/callback",
    "/v1/channels/slack/interactions",
];

async fn document(server: &Server) -> Value {
    let response = reqwest::get(format!("{}/v1/openapi.json", server.url))
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 200, "no token needed");
    serde_json::from_str(&response.text().await.unwrap()).unwrap()
}

/// Every (method, path) of the document.
fn operations(doc: &Value) -> BTreeSet<(String, String)> {
    let mut found = BTreeSet::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for method in item.as_object().unwrap().keys() {
            if METHODS.contains(&method.as_str()) {
                found.insert((method.clone(), path.clone()));
            }
        }
    }
    found
}

/// Every (method, path) that a `.route("PATH", METHOD(…)…)` call registers in the crate's
/// sources, but the approvals page's (`src/web/`, HTML for people, not the API).
fn routes_in_sources() -> BTreeSet<(String, String)> {
    let mut found = BTreeSet::new();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).unwrap();
            for call in route_calls(&text) {
                let (route, methods) = parse_route(call).unwrap_or_else(|| {
                    panic!("{}: a route without a literal path: {call}", path.display())
                });
                for method in methods {
                    found.insert((method, route.clone()));
                }
            }
        }
    }
    found
}

/// The argument text of every `.route(…)` call.
fn route_calls(text: &str) -> Vec<&str> {
    let mut calls = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find(".route(") {
        let args = &rest[at + ".route(".len()..];
        let mut depth = 1;
        let end = args
            .char_indices()
            .find(|(_, c)| {
                match c {
                    '(' => depth += 1,
                    ')' => depth -= 1,
                    _ => {}
                }
                depth == 0
            })
            .unwrap()
            .0;
        calls.push(&args[..end]);
        rest = &args[end..];
    }
    calls
}

/// The path and the methods of one call's arguments: `"/v1/runs", post(a).get(b)`.
fn parse_route(args: &str) -> Option<(String, Vec<String>)> {
    let path = args
        .trim_start()
        .strip_prefix('"')?
        .split('"')
        .next()?
        .to_owned();
    let handlers = args.split_once(',')?.1;
    let methods = METHODS
        .iter()
        .filter(|m| {
            handlers.match_indices(&format!("{m}(")).any(|(at, _)| {
                at == 0
                    || !handlers.as_bytes()[at - 1].is_ascii_alphanumeric()
                        && handlers.as_bytes()[at - 1] != b'_'
            })
        })
        .map(|m| (*m).to_owned())
        .collect();
    Some((path, methods))
}

#[test]
fn the_source_scan_reads_a_route_with_two_methods() {
    let text = r#"Router::new().route("/v1/runs", post(runs::create).get(runs::list)).route("/x/{id}", get(show))"#;
    let calls = route_calls(text);
    assert_eq!(calls.len(), 2);
    let (path, methods) = parse_route(calls[0]).unwrap();
    assert_eq!(path, "/v1/runs");
    assert_eq!(methods, ["get", "post"]);
    assert_eq!(parse_route(calls[1]).unwrap().0, "/x/{id}");
}

#[tokio::test]
async fn every_route_of_the_router_is_in_the_document_and_nothing_else() {
    let server = Server::start(None).await;
    let doc = document(&server).await;
    let routes = routes_in_sources();
    assert!(routes.len() >= 12, "the scan found too little: {routes:?}");
    assert_eq!(
        operations(&doc),
        routes,
        "the document (left) and the routes of `src/` (right) differ"
    );
    let ids: Vec<&str> = operations(&doc)
        .iter()
        .map(|(method, path)| doc["paths"][path][method]["operationId"].as_str().unwrap())
        .collect();
    let unique: BTreeSet<&str> = ids.iter().copied().collect();
    assert_eq!(unique.len(), ids.len(), "operation ids repeat: {ids:?}");
}

#[tokio::test]
async fn every_route_of_the_document_is_served() {
    let server = Server::start(None).await;
    let doc = document(&server).await;
    let http = reqwest::Client::new();
    for (method, path) in operations(&doc) {
        let url = format!("{}{}", server.url, path.replace("{id}", "cr_unknown"));
        let method = reqwest::Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
        let response = http.request(method.clone(), &url).send().await.unwrap();
        let status = response.status().as_u16();
        let body = response.text().await.unwrap();
        // Without a token: 401 for the API, 200 for the open routes, 404 naming the missing
        // channel for the callbacks (this server has none); never the router's own 404 (no
        // such route) or 405.
        assert!(
            !body.contains("no such route") && status != 405,
            "{method} {path}: {status} {body}"
        );
        let expected = if OPEN.contains(&path.as_str()) {
            200
        } else if CALLBACKS.contains(&path.as_str()) {
            assert!(body.contains("channel is configured"), "{path}: {body}");
            404
        } else {
            401
        };
        assert_eq!(status, expected, "{method} {path}: {body}");
    }
}

#[tokio::test]
async fn the_document_declares_the_bearer_scheme_and_which_routes_need_it() {
    let server = Server::start(None).await;
    let doc = document(&server).await;
    assert_eq!(
        doc["components"]["securitySchemes"]["bearer"],
        json!({"type": "http", "scheme": "bearer",
               "description": "A token of the server's configuration; the route says which role it needs"})
    );
    let needs_token =
        |method: &str, path: &str| doc["paths"][path][method].get("security").is_some();
    assert!(!needs_token("get", "/healthz"));
    assert!(!needs_token("get", "/v1/openapi.json"));
    for path in CALLBACKS {
        assert!(
            !needs_token("post", path),
            "{path} is signed by its platform"
        );
    }
    for (method, path) in operations(&doc) {
        if !OPEN.contains(&path.as_str()) && !CALLBACKS.contains(&path.as_str()) {
            assert_eq!(
                doc["paths"][&path][&method]["security"],
                json!([{"bearer": []}]),
                "{method} {path}"
            );
        }
    }
}

/// The property names of schema `name`.
fn properties(doc: &Value, name: &str) -> BTreeSet<String> {
    doc["components"]["schemas"][name]["properties"]
        .as_object()
        .unwrap_or_else(|| panic!("no schema {name}"))
        .keys()
        .cloned()
        .collect()
}

fn keys(value: &Value) -> BTreeSet<String> {
    value.as_object().unwrap().keys().cloned().collect()
}

#[tokio::test]
async fn the_schemas_of_the_approvals_bodies_match_the_answers() {
    let server = Server::start(None).await;
    let doc = document(&server).await;
    let schemas = &doc["components"]["schemas"];
    assert_eq!(
        schemas["ErrorBody"]["required"],
        json!(["error", "message"])
    );
    assert_eq!(
        properties(&doc, "ApproveBody"),
        BTreeSet::from(["note".into(), "edit".into()])
    );
    let statuses: BTreeSet<&str> = schemas["Status"]["enum"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(
        statuses,
        BTreeSet::from(["pending", "approved", "rejected", "expired", "cancelled"])
    );

    let id = server.file(json!({"sql": "DELETE"}), &["ops-lead"]).await;
    let http = reqwest::Client::new();
    let get = |path: String| {
        let request = http.get(format!("{}{path}", server.url)).bearer_auth(OPS);
        async move {
            let text = request.send().await.unwrap().text().await.unwrap();
            serde_json::from_str::<Value>(&text).unwrap()
        }
    };
    let detail = get(format!("/v1/approvals/{id}")).await;
    assert_eq!(keys(&detail), properties(&doc, "RequestDetail"));
    assert_eq!(keys(&detail["request"]), properties(&doc, "Request"));
    assert_eq!(keys(&detail["history"][0]), properties(&doc, "AuditEvent"));
    let list = get("/v1/approvals".into()).await;
    assert_eq!(keys(&list), properties(&doc, "RequestList"));
    let error = get("/v1/approvals/cr_unknown".into()).await;
    assert!(
        keys(&error).is_subset(&properties(&doc, "ErrorBody")),
        "{error}"
    );

    let body = json!({"agent": "codex", "session_id": "s", "tool_name": "Bash",
        "tool_use_id": "call_1", "arguments": {"command": "ls"}, "reasons": [],
        "asked_by": "guard", "approvers": ["ops-lead"], "timeout_seconds": 60});
    assert_eq!(keys(&body), properties(&doc, "NewApproval"));
    let filed = http
        .post(format!("{}/v1/approvals", server.url))
        .bearer_auth(CI)
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    let filed: Value = serde_json::from_str(&filed.text().await.unwrap()).unwrap();
    assert_eq!(keys(&filed), properties(&doc, "FiledApproval"));
    assert_eq!(keys(&filed["request"]), properties(&doc, "Request"));
}

#[tokio::test]
async fn the_schemas_of_the_runs_bodies_match_the_answers() {
    let server = Server::start_with(|dir| {
        let agents = dir.join("agents");
        std::fs::create_dir_all(&agents).unwrap();
        std::fs::write(
            agents.join("ops.yaml"),
            "name: ops\nmodel: scripted:ops.jsonl\ntools: [write_file]\nworkspace: ws\n\
             model_config_json:\n  hooks:\n    confirmation_tools: [write_file]\n",
        )
        .unwrap();
        // A call that waits for approval, so the run is still going when it is cancelled.
        let call = json!({"role": "assistant", "content": null, "tool_calls": [{"id": "c1",
            "type": "function", "function": {"name": "write_file",
            "arguments": {"path": "a.txt", "content": "x"}}}]});
        std::fs::write(agents.join("ops.jsonl"), format!("{call}\n")).unwrap();
        "agents_dir: agents\n".into()
    })
    .await;
    let doc = document(&server).await;
    assert_eq!(
        properties(&doc, "NewRun"),
        BTreeSet::from(["agent", "prompt", "skills", "model", "metadata"].map(String::from))
    );
    assert_eq!(
        doc["components"]["schemas"]["NewRun"]["required"],
        json!(["agent", "prompt"])
    );

    let http = reqwest::Client::new();
    let send = |request: reqwest::RequestBuilder| async move {
        let response = request.bearer_auth(CI).send().await.unwrap();
        let status = response.status().as_u16();
        let text = response.text().await.unwrap();
        (status, serde_json::from_str::<Value>(&text).unwrap())
    };
    let (status, created) = send(
        http.post(format!("{}/v1/runs", server.url))
            .header("content-type", "application/json")
            .body(json!({"agent": "ops", "prompt": "go"}).to_string()),
    )
    .await;
    assert_eq!(status, 201, "{created}");
    assert_eq!(keys(&created), properties(&doc, "RunCreated"));
    let run_id = created["run_id"].as_str().unwrap();
    let (_, list) = send(http.get(format!("{}/v1/runs", server.url))).await;
    assert_eq!(keys(&list), properties(&doc, "RunList"));
    let (_, view) = send(http.get(format!("{}/v1/runs/{run_id}", server.url))).await;
    assert_eq!(keys(&view), properties(&doc, "RunView"));
    let (status, cancelled) =
        send(http.post(format!("{}/v1/runs/{run_id}/cancel", server.url))).await;
    assert_eq!(status, 200, "{cancelled}");
    assert_eq!(keys(&cancelled), properties(&doc, "Cancelled"));
}
