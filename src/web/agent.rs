//! The agents' door: `POST /api/v1/agent/cycles` takes a cycle report, `GET /api/v1/agent/settings`
//! tells an agent its cluster's settings. Both need the agent's token (`Authorization: Bearer`),
//! not the pages' credentials; a `DumbMonit-Cluster` header, when given, names the cluster.
//!
//! | answer | when |
//! |---|---|
//! | 200 `taken` | the cycle was evaluated and saved |
//! | 200 `duplicate` | the server already has this cycle or a later one: dropped |
//! | 400 | the body is not a cycle report |
//! | 401 | the token is missing or not the cluster's; nothing is stored |
//! | 404 | the named cluster is not read through an agent here |
//! | 409 `unknown_base` | the report is a difference from a cycle this server does not hold |
//! | 413 | the body is larger than 64 MiB (512 MiB once inflated) |
//! | 422 | the cycle is refused (from the far future) |
//!
//! Every refusal is one line in the server's log; tokens appear in none.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::response::Response;
use http::{Method, StatusCode};
use http_body_util::{BodyExt, Limited};

use super::{JSON, respond};
use crate::board::{Board, Knock, Push, Reply};
use crate::clock::{log, shortened};

/// At most this many bytes of a path or header are put in a log line.
const SHOWN: usize = 200;
use crate::collect::wire::{Answer, Report};

/// The largest report taken, as sent (gzip) and once inflated.
pub const MAX_BODY: usize = 64 * 1024 * 1024;
pub const MAX_INFLATED: u64 = 512 * 1024 * 1024;

use crate::collect::wire::CLUSTER_HEADER;

fn answer(
    status: StatusCode,
    word: &str,
    message: Option<String>,
    settings: Option<crate::collect::wire::Settings>,
) -> Response {
    let body = Answer { status: word.into(), message, settings };
    respond(status, JSON, serde_json::to_string(&body).expect("an answer serializes"))
}

fn refuse(status: StatusCode, message: String) -> Response {
    log(&format!("agent request refused ({}): {message}", status.as_u16()));
    answer(status, "refused", Some(message), None)
}

pub async fn handle(State(board): State<Arc<Board>>, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    let header = |name: &str| parts.headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_string);
    let token = header("authorization")
        .and_then(|a| a.strip_prefix("Bearer ").map(|t| t.trim().to_string()))
        .unwrap_or_default();
    let cluster = header(CLUSTER_HEADER);
    let route = (parts.method.clone(), parts.uri.path().to_string());
    // What is logged from the request is cut short: anyone may send a long path or header.
    let (shown_path, shown_cluster) =
        (shortened(&route.1, SHOWN).into_owned(), cluster.as_deref().map(|c| shortened(c, SHOWN)));
    let is_push = match (&route.0, route.1.as_str()) {
        (&Method::POST, "/api/v1/agent/cycles") => true,
        (&Method::GET, "/api/v1/agent/settings") => false,
        (_, "/api/v1/agent/cycles" | "/api/v1/agent/settings") => {
            return refuse(StatusCode::METHOD_NOT_ALLOWED, format!("{} {shown_path} is not served", route.0));
        }
        _ => return refuse(StatusCode::NOT_FOUND, format!("nothing at {shown_path}")),
    };
    let (settings, inbox) = match board.knock(cluster.as_deref(), &token) {
        Knock::Open { settings, inbox } => (settings, inbox),
        Knock::WrongToken if token.is_empty() => {
            return refuse(StatusCode::UNAUTHORIZED, "no agent token (Authorization: Bearer) given".into());
        }
        Knock::WrongToken => {
            let which = shown_cluster.map(|c| format!("cluster {c:?}")).unwrap_or_else(|| "any agent's cluster".into());
            return refuse(StatusCode::UNAUTHORIZED, format!("the agent token is not the one of {which}"));
        }
        Knock::NotConfigured(name) => {
            let name = shortened(&name, SHOWN);
            return refuse(StatusCode::NOT_FOUND, format!("no cluster {name:?} is read through an agent here"));
        }
    };
    let name = settings.cluster.clone();
    if !is_push {
        return answer(StatusCode::OK, "ok", None, Some(settings));
    }
    let declared = header("content-length").and_then(|l| l.trim().parse::<u64>().ok());
    if declared.is_some_and(|l| l > MAX_BODY as u64) {
        return refuse(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("cluster {name}: the report is larger than {} MiB", MAX_BODY / (1024 * 1024)),
        );
    }
    let body = match Limited::new(body, MAX_BODY).collect().await {
        Ok(b) => b.to_bytes(),
        Err(e) if e.downcast_ref::<http_body_util::LengthLimitError>().is_some() => {
            return refuse(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("cluster {name}: the report is larger than {} MiB", MAX_BODY / (1024 * 1024)),
            );
        }
        Err(e) => return refuse(StatusCode::BAD_REQUEST, format!("cluster {name}: the report could not be read: {e}")),
    };
    let report = match Report::parse(&body, MAX_INFLATED) {
        Ok(r) => r,
        Err(e) if e.starts_with("larger than") => {
            return refuse(StatusCode::PAYLOAD_TOO_LARGE, format!("cluster {name}: the report is {e}"));
        }
        Err(e) => return refuse(StatusCode::BAD_REQUEST, format!("cluster {name}: {e}")),
    };
    let (tx, rx) = tokio::sync::oneshot::channel();
    let push = Push { report, received: jiff::Timestamp::now(), reply: tx };
    if inbox.send(push).await.is_err() {
        return refuse(StatusCode::NOT_FOUND, format!("cluster {name} is no longer configured"));
    }
    match rx.await {
        Ok(Reply::Taken) => answer(StatusCode::OK, "taken", None, Some(settings)),
        Ok(Reply::Duplicate) => answer(StatusCode::OK, "duplicate", None, Some(settings)),
        Ok(Reply::UnknownBase(m)) => {
            log(&format!("cluster {name}: {m}; the agent sends the whole snapshot"));
            answer(StatusCode::CONFLICT, "unknown_base", Some(m), Some(settings))
        }
        Ok(Reply::Refused(m)) => refuse(StatusCode::UNPROCESSABLE_ENTITY, format!("cluster {name}: {m}")),
        Err(_) => refuse(StatusCode::SERVICE_UNAVAILABLE, format!("cluster {name} is being reconfigured")),
    }
}
