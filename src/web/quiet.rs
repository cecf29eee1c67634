//! The API of what keeps the notifiers quiet, in the ecosystem's shapes: silences as
//! Alertmanager's API v2 takes and lists them (`GET/POST /api/v1/silences`,
//! `DELETE /api/v1/silences/{id}`), maintenance windows beside them (`GET/POST
//! /api/v1/maintenance`, `DELETE /api/v1/maintenance/{id}`), and acknowledgements
//! (`POST /api/v1/alerts/{fingerprint}/ack`).
//!
//! Changes take the admin credentials of `[auth.admin]` as a bearer token or basic auth, and a
//! JSON body (`Content-Type: application/json`, which no form of another site can send): no
//! CSRF token is asked. Each change is in the audit list.

use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use http::{HeaderMap, StatusCode};
use serde_json::json;

use super::events::QuietChanged;
use super::{Checked, JSON, respond};
use crate::auth::Role;
use crate::board::{AckError, Board, QuietError};
use crate::logs::Emit;
use crate::silence::postable::{PostableSilence, PostableWindow};

/// A refused request of the API: its status, and why, answered as `{"error": why}`. Every
/// handler of this file returns it, so that a refusal is answered in one place.
#[derive(Debug)]
pub struct Refused {
    pub status: StatusCode,
    pub why: String,
}

impl Refused {
    fn new(status: StatusCode, why: impl Into<String>) -> Refused {
        Refused { status, why: why.into() }
    }
}

impl IntoResponse for Refused {
    fn into_response(self) -> Response {
        respond(self.status, JSON, super::api::error(&self.why))
    }
}

impl From<QuietError> for Refused {
    fn from(e: QuietError) -> Refused {
        let status = match e {
            QuietError::Silence(_) | QuietError::Window(_) => StatusCode::BAD_REQUEST,
            QuietError::NoSilence { .. } | QuietError::NoWindow { .. } => StatusCode::NOT_FOUND,
            QuietError::FromFile { .. } => StatusCode::CONFLICT,
            QuietError::NotKept(_) => StatusCode::INTERNAL_SERVER_ERROR,
            QuietError::TooManySilences | QuietError::OverTotal | QuietError::TooManyWindows => StatusCode::BAD_REQUEST,
        };
        Refused::new(status, e.to_string())
    }
}

impl From<AckError> for Refused {
    fn from(e: AckError) -> Refused {
        let status = match e {
            AckError::NoAlert { .. } => StatusCode::NOT_FOUND,
            AckError::NotFiring { .. } => StatusCode::CONFLICT,
            AckError::NotKept(_) => StatusCode::INTERNAL_SERVER_ERROR,
            AckError::CommentTooLong { .. } => StatusCode::BAD_REQUEST,
        };
        Refused::new(status, e.to_string())
    }
}

/// Who asks, when it is an admin; else why not.
pub(crate) fn admin(board: &Board, role: &Checked) -> Result<String, Refused> {
    if !board.protection().has_admins() {
        return Err(Refused::new(
            StatusCode::FORBIDDEN,
            "this monitor is read-only: give admins in the configuration file's [auth.admin] section",
        ));
    }
    match &role.0 {
        Some(Role::Admin(who)) => Ok(who.clone()),
        _ => Err(Refused::new(StatusCode::FORBIDDEN, "this change needs the admin credentials of [auth.admin]")),
    }
}

/// The JSON body of a change, read into `T`; else why not (415 for another type, 400 with what
/// is wrong).
fn body<T: serde::de::DeserializeOwned>(headers: &HeaderMap, body: &[u8]) -> Result<T, Refused> {
    let json = headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json"));
    if !json {
        return Err(Refused::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "send the body as Content-Type: application/json",
        ));
    }
    serde_json::from_slice(body)
        .map_err(|e| Refused::new(StatusCode::BAD_REQUEST, format!("the body cannot be read: {e}")))
}

/// Who asks and what the JSON body says, once the role and the body's type are checked.
pub(crate) fn change<T: serde::de::DeserializeOwned>(
    board: &Board,
    role: &Checked,
    headers: &HeaderMap,
    bytes: &[u8],
) -> Result<(String, T), Refused> {
    let who = admin(board, role)?;
    Ok((who, body(headers, bytes)?))
}

/// `?force=true` (or `force=1`) confirms a silence of every alert.
fn forced(params: &super::Params) -> bool {
    params.iter().any(|(k, v)| k == "force" && (v == "true" || v == "1"))
}

/// `GET /api/v1/silences`
pub async fn silences(State(board): State<Arc<Board>>) -> Response {
    respond(StatusCode::OK, JSON, serde_json::Value::Array(board.quieting().silences_json()).to_string())
}

/// `POST /api/v1/silences`: Alertmanager's postable silence; answers `{"silenceID": …}`.
pub async fn post_silence(
    State(board): State<Arc<Board>>,
    axum::Extension(role): axum::Extension<Checked>,
    Query(params): Query<super::Params>,
    headers: HeaderMap,
    bytes: Bytes,
) -> Result<Response, Refused> {
    let (who, posted) = change::<PostableSilence>(&board, &role, &headers, &bytes)?;
    let id = make_silence(&board, &posted, &who, forced(&params)).await?;
    Ok(respond(StatusCode::OK, JSON, json!({"silenceID": id}).to_string()))
}

/// Makes (or changes) a silence where silences live: in Alertmanager when it is their home,
/// else here. Gives its id, or the status and why not.
pub async fn make_silence(
    board: &Arc<Board>,
    posted: &PostableSilence,
    who: &str,
    everything: bool,
) -> Result<String, Refused> {
    let id = match board.quieting().silence_home() {
        Some((set, at)) => post_home_silence(board, &set[at], posted, who, everything).await?,
        None => {
            // Its regular expressions are compiled off the request threads.
            let (b, posted, who_) = (board.clone(), posted.clone(), who.to_string());
            tokio::task::spawn_blocking(move || b.quieting().post_silence(&posted, &who_, everything))
                .await
                .map_err(|_| Refused::new(StatusCode::INTERNAL_SERVER_ERROR, "the silence was not made"))??
        }
    };
    QuietChanged { user: who, action: "silence made or changed", id: &id }.emit();
    Ok(id)
}

/// Expires a silence where it lives.
pub async fn end_silence(board: &Arc<Board>, id: &str, who: &str) -> Result<(), Refused> {
    if let Some((set, at)) = board.quieting().silence_home().filter(|_| board.quieting().is_home_silence(id)) {
        let n = &set[at];
        let client = crate::notify::Client::new();
        crate::notify::alertmanager::silences::expire(&client, n, id)
            .await
            .map_err(|e| Refused::new(StatusCode::BAD_GATEWAY, e.to_string()))?;
        let cluster = board.quieting().quiet().silence(id).map(crate::board::cluster_of).unwrap_or_default();
        board
            .quieting()
            .audit_change(who, format!("silence {id} expired in Alertmanager {}", n.name), cluster)
            .map_err(|e| Refused::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
        refresh_home(board, &client, n).await;
    } else {
        board.quieting().expire_silence(id, who)?;
    }
    QuietChanged { user: who, action: "silence expired", id }.emit();
    Ok(())
}

/// `DELETE /api/v1/silences/{id}`: expires it now.
pub async fn delete_silence(
    State(board): State<Arc<Board>>,
    axum::Extension(role): axum::Extension<Checked>,
    Path(id): Path<String>,
) -> Result<Response, Refused> {
    let who = admin(&board, &role)?;
    end_silence(&board, &id, &who).await?;
    Ok(respond(StatusCode::OK, JSON, ""))
}

/// Alertmanager is the home of silences: checked here, made there, read back at once.
async fn post_home_silence(
    board: &Arc<Board>,
    n: &crate::notify::Notifier,
    posted: &PostableSilence,
    who: &str,
    everything: bool,
) -> Result<String, Refused> {
    let (b, checked, who_) = (board.clone(), posted.clone(), who.to_string());
    let silence = tokio::task::spawn_blocking(move || b.quieting().check_home_silence(&checked, &who_, everything))
        .await
        .map_err(|_| Refused::new(StatusCode::INTERNAL_SERVER_ERROR, "the silence was not checked"))??;
    let client = crate::notify::Client::new();
    let id =
        crate::notify::alertmanager::silences::create(&client, n, &crate::silence::postable::postable_json(&silence))
            .await
            .map_err(|e| Refused::new(StatusCode::BAD_GATEWAY, e.to_string()))?;
    let verb = if silence.id.is_empty() { "created" } else { "changed" };
    let until = silence.ends_at.map(|e| e.to_string()).unwrap_or_default();
    let action = format!("silence {id} {verb} in Alertmanager {}: {} until {until}", n.name, silence.matchers_text());
    board
        .quieting()
        .audit_change(who, action, crate::board::cluster_of(&silence))
        .map_err(|e| Refused::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
    refresh_home(board, &client, n).await;
    Ok(id)
}

/// Reads Alertmanager's silences again, after a change made there (compiled off the request
/// threads).
async fn refresh_home(board: &Arc<Board>, client: &crate::notify::Client, n: &crate::notify::Notifier) {
    let read = crate::notify::alertmanager::silences::list(client, n).await.map_err(|e| e.to_string());
    let b = board.clone();
    let _ = tokio::task::spawn_blocking(move || b.quieting().set_home_silences(read)).await;
}

/// `GET /api/v1/maintenance`
pub async fn windows(State(board): State<Arc<Board>>) -> Response {
    respond(StatusCode::OK, JSON, serde_json::Value::Array(board.quieting().windows_json()).to_string())
}

/// `POST /api/v1/maintenance`: answers `{"id": …}`.
pub async fn post_window(
    State(board): State<Arc<Board>>,
    axum::Extension(role): axum::Extension<Checked>,
    headers: HeaderMap,
    bytes: Bytes,
) -> Result<Response, Refused> {
    let (who, posted) = change::<PostableWindow>(&board, &role, &headers, &bytes)?;
    let id = board.quieting().post_window(&posted, &who)?;
    QuietChanged { user: &who, action: "maintenance window made or changed", id: &id }.emit();
    Ok(respond(StatusCode::OK, JSON, json!({"id": id}).to_string()))
}

/// `DELETE /api/v1/maintenance/{id}`: ends it now.
pub async fn delete_window(
    State(board): State<Arc<Board>>,
    axum::Extension(role): axum::Extension<Checked>,
    Path(id): Path<String>,
) -> Result<Response, Refused> {
    let who = admin(&board, &role)?;
    board.quieting().end_window(&id, &who)?;
    QuietChanged { user: &who, action: "maintenance window ended", id: &id }.emit();
    Ok(respond(StatusCode::OK, JSON, ""))
}

/// What `POST /api/v1/alerts/{fingerprint}/ack` takes.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct AckBody {
    #[serde(default)]
    comment: String,
}

/// `POST /api/v1/alerts/{fingerprint}/ack` with `{"comment": …}`: answers the acknowledgement.
pub async fn acknowledge(
    State(board): State<Arc<Board>>,
    axum::Extension(role): axum::Extension<Checked>,
    Path(print): Path<String>,
    headers: HeaderMap,
    bytes: Bytes,
) -> Result<Response, Refused> {
    let (who, posted) = change::<AckBody>(&board, &role, &headers, &bytes)?;
    let (_, ack) = board.quieting().acknowledge(&print, &who, &posted.comment)?;
    QuietChanged { user: &who, action: "alert acknowledged", id: &print }.emit();
    Ok(respond(StatusCode::OK, JSON, serde_json::to_string(&ack).unwrap_or_default()))
}

#[cfg(test)]
mod tests {
    #[test]
    fn force_is_a_query_parameter() {
        let forced = |query: &str| super::forced(&form_urlencoded::parse(query.as_bytes()).into_owned().collect());
        assert!(forced("force=true"));
        assert!(forced("a=b&force=1"));
        assert!(!forced("force=false"));
        assert!(!forced(""));
    }
}
