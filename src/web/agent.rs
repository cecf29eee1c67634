//! The agents' door: `POST /api/v1/agent/cycles` takes a cycle report, `GET /api/v1/agent/settings`
//! tells an agent its cluster's settings. Both need the agent's token (`Authorization: Bearer`),
//! not the pages' credentials; a `DumbMonit-Cluster` header, when given, names the cluster.
//!
//! | answer | when |
//! |---|---|
//! | 200 `taken` | the cycle was evaluated and saved |
//! | 200 `duplicate` | the server already has this cycle or a later one: dropped |
//! | 400 | the body is not a cycle report |
//! | 401 | the token is missing or not the cluster's (whatever cluster is named); nothing is stored |
//! | 404 | the named cluster is not read through an agent here (said to a valid agent token only) |
//! | 409 `unknown_base` | the report is a difference from a cycle this server does not hold |
//! | 413 | the body is larger than 64 MiB (256 MiB once inflated) |
//! | 503 | the reports being received hold 128 MiB already, or this cluster's 64 MiB: the agent tries again |
//! | 422 | the cycle is refused (from the far future) |
//!
//! Every refusal is one line in the server's log; tokens appear in none.

use std::sync::{Arc, OnceLock};

use axum::extract::{Request, State};
use axum::response::Response;
use http::{Method, StatusCode};
use http_body_util::{BodyExt, Limited};
use tokio::sync::Semaphore;
use tracing::Instrument;

use super::events::{AgentRefused, WholeSnapshotAsked, agent_request};
use super::{JSON, respond};
use crate::board::{Board, Knock, Push, Reply};
use crate::logs::Emit;
use crate::logs::shortened;
use crate::wire::{Answer, CLUSTER_HEADER, Report, ReportError, Settings};

/// At most this many bytes of a path or header are put in a log line.
const SHOWN: usize = 200;

/// The largest report taken, as sent (gzip) and once inflated.
pub const MAX_BODY: usize = 64 * 1024 * 1024;
pub const MAX_INFLATED: u64 = 256 * 1024 * 1024;

/// The bytes all the reports being received may hold together (two of the largest).
pub const MAX_IN_FLIGHT: usize = 2 * MAX_BODY;

/// The share of them the reports of one agent's cluster may hold (one of the largest): an agent
/// that sends slow bodies slows its own cluster's reports, never the other clusters'.
pub const MAX_IN_FLIGHT_PER_AGENT: usize = MAX_IN_FLIGHT / 2;

/// Reports inflated and parsed at once (each a core's work).
const PARSED_AT_ONCE: usize = 2;

fn in_flight() -> &'static Arc<Semaphore> {
    static BUDGET: OnceLock<Arc<Semaphore>> = OnceLock::new();
    BUDGET.get_or_init(|| Arc::new(Semaphore::new(MAX_IN_FLIGHT)))
}

/// The share of the budget of one agent's cluster, by its name.
fn share_of(cluster: &str) -> Arc<Semaphore> {
    static SHARES: OnceLock<std::sync::Mutex<std::collections::HashMap<String, Arc<Semaphore>>>> = OnceLock::new();
    let mut shares = SHARES.get_or_init(Default::default).lock().expect("shares lock");
    // Only clusters whose token opened the door are named here: as many as are configured.
    shares.entry(cluster.to_string()).or_insert_with(|| Arc::new(Semaphore::new(MAX_IN_FLIGHT_PER_AGENT))).clone()
}

fn parsing() -> &'static Arc<Semaphore> {
    static SLOTS: OnceLock<Arc<Semaphore>> = OnceLock::new();
    SLOTS.get_or_init(|| Arc::new(Semaphore::new(PARSED_AT_ONCE)))
}

/// A body's chunks, read in order without being joined.
struct Chunks(std::collections::VecDeque<bytes::Bytes>);

impl std::io::Read for Chunks {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        use bytes::Buf;
        while let Some(front) = self.0.front_mut() {
            if front.is_empty() {
                self.0.pop_front();
                continue;
            }
            let n = out.len().min(front.len());
            out[..n].copy_from_slice(&front[..n]);
            front.advance(n);
            return Ok(n);
        }
        Ok(0)
    }
}

/// The answer to a report that cannot be read: 413 for one too large once inflated, 400 for
/// anything else that is not a report this server reads.
fn status_of(e: &ReportError) -> StatusCode {
    match e {
        ReportError::TooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
        ReportError::Unreadable { .. }
        | ReportError::NotGzip { .. }
        | ReportError::NotJson { .. }
        | ReportError::NotReport { .. }
        | ReportError::Format { .. }
        | ReportError::UnknownBase { .. } => StatusCode::BAD_REQUEST,
    }
}

fn answer(status: StatusCode, word: &str, message: Option<String>, settings: Option<Settings>) -> Response {
    let body = Answer { status: word.into(), message, settings };
    respond(status, JSON, serde_json::to_string(&body).expect("an answer serializes"))
}

fn refuse(status: StatusCode, message: String) -> Response {
    AgentRefused { status: status.as_u16(), reason: &message }.emit();
    answer(status, "refused", Some(message), None)
}

/// Every line logged about a request carries the cluster it named (`agent`) and the one its
/// token opened (`cluster`).
pub async fn handle(State(board): State<Arc<Board>>, req: Request) -> Response {
    let named =
        req.headers().get(CLUSTER_HEADER).and_then(|v| v.to_str().ok()).map(|c| shortened(c, SHOWN).into_owned());
    let span = agent_request(named.as_deref());
    take(board, req).instrument(span).await
}

async fn take(board: Arc<Board>, req: Request) -> Response {
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
    let (settings, inbox) = match board.views().knock(cluster.as_deref(), &token) {
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
    tracing::Span::current().record("cluster", name.as_str());
    if !is_push {
        return answer(StatusCode::OK, "ok", None, Some(settings));
    }
    let declared = header("content-length").and_then(|l| l.trim().parse::<u64>().ok());
    let too_large = || {
        refuse(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("cluster {name}: the report is larger than {} MiB", MAX_BODY / (1024 * 1024)),
        )
    };
    if declared.is_some_and(|l| l > MAX_BODY as u64) {
        return too_large();
    }
    // Every byte held is taken from the cluster's share and from the one budget of all bodies
    // in flight: past either, a report is answered 503 (the agent tries again) instead of
    // filling the memory.
    let share = share_of(&name);
    let mut held: Option<tokio::sync::OwnedSemaphorePermit> = None;
    let mut held_share: Option<tokio::sync::OwnedSemaphorePermit> = None;
    let mut chunks = std::collections::VecDeque::new();
    let mut body = Limited::new(body, MAX_BODY);
    while let Some(frame) = body.frame().await {
        let data = match frame {
            Ok(frame) => match frame.into_data() {
                Ok(data) => data,
                Err(_) => continue,
            },
            Err(e) if e.downcast_ref::<http_body_util::LengthLimitError>().is_some() => return too_large(),
            Err(e) => {
                return refuse(StatusCode::BAD_REQUEST, format!("cluster {name}: the report could not be read: {e}"));
            }
        };
        let Ok(mine) = share.clone().try_acquire_many_owned(data.len() as u32) else {
            return refuse(
                StatusCode::SERVICE_UNAVAILABLE,
                format!(
                    "cluster {name}: the server holds as many reports as it takes at once from this cluster ({} MiB); try again",
                    MAX_IN_FLIGHT_PER_AGENT / (1024 * 1024)
                ),
            );
        };
        let Ok(permit) = in_flight().clone().try_acquire_many_owned(data.len() as u32) else {
            return refuse(
                StatusCode::SERVICE_UNAVAILABLE,
                format!("cluster {name}: the server holds as many reports as it takes at once; try again"),
            );
        };
        for (held, permit) in [(&mut held, permit), (&mut held_share, mine)] {
            match held {
                Some(h) => h.merge(permit),
                None => *held = Some(permit),
            }
        }
        chunks.push_back(data);
    }
    // Inflated and parsed as a stream, off the request threads, a few at a time.
    let parsing = match parsing().clone().acquire_owned().await {
        Ok(p) => p,
        Err(_) => return refuse(StatusCode::SERVICE_UNAVAILABLE, format!("cluster {name}: the server is stopping")),
    };
    let parsed = tokio::task::spawn_blocking(move || {
        let _held = (held, held_share, parsing);
        Report::read(Chunks(chunks), MAX_INFLATED)
    })
    .await;
    let report = match parsed {
        Ok(Ok(r)) => r,
        Ok(Err(e @ ReportError::TooLarge { .. })) => {
            return refuse(status_of(&e), format!("cluster {name}: the report is {e}"));
        }
        Ok(Err(e)) => return refuse(status_of(&e), format!("cluster {name}: {e}")),
        Err(_) => return refuse(StatusCode::INTERNAL_SERVER_ERROR, format!("cluster {name}: the report was not read")),
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
            WholeSnapshotAsked { cluster: &name, reason: &m }.emit();
            answer(StatusCode::CONFLICT, "unknown_base", Some(m), Some(settings))
        }
        Ok(Reply::Refused(m)) => refuse(StatusCode::UNPROCESSABLE_ENTITY, format!("cluster {name}: {m}")),
        Err(_) => refuse(StatusCode::SERVICE_UNAVAILABLE, format!("cluster {name} is being reconfigured")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_too_large_is_413_and_any_other_unreadable_one_400() {
        let bomb = {
            use std::io::Write;
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            gz.write_all(&vec![b' '; 4 << 20]).unwrap();
            gz.finish().unwrap()
        };
        let e = Report::parse(&bomb, 1 << 20).unwrap_err();
        assert_eq!(e, ReportError::TooLarge { limit: 1 << 20 });
        assert_eq!(status_of(&e), StatusCode::PAYLOAD_TOO_LARGE);
        for body in [&b"nope"[..], b"{}", b"{\"format\": 7", &[0x1f, 0x8b, 0, 1, 2]] {
            let e = Report::parse(body, 1 << 20).unwrap_err();
            assert_eq!(status_of(&e), StatusCode::BAD_REQUEST, "{e}");
        }
        // Only the variant decides: a message that says "larger than" is no reason for a 413.
        let e = ReportError::NotReport { detail: "larger than 1 MiB once inflated".into() };
        assert_eq!(status_of(&e), StatusCode::BAD_REQUEST);
    }
}
