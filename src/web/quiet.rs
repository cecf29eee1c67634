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

use axum::extract::{Path, RawQuery, State};
use axum::response::Response;
use bytes::Bytes;
use http::{HeaderMap, StatusCode};
use serde_json::json;

use super::events::QuietChanged;
use super::{Checked, JSON, respond};
use crate::auth::Role;
use crate::board::{AckError, Board, QuietError};
use crate::logs::Event;
use crate::silence::postable::{PostableSilence, PostableWindow};

fn error(status: StatusCode, message: &str) -> Response {
    respond(status, JSON, super::api::error(message))
}

/// Who asks, when it is an admin; else the answer.
fn admin(board: &Board, role: &Checked) -> Result<String, Response> {
    if !board.protection().has_admins() {
        return Err(error(
            StatusCode::FORBIDDEN,
            "this monitor is read-only: give admins in the configuration file's [auth.admin] section",
        ));
    }
    match &role.0 {
        Some(Role::Admin(who)) => Ok(who.clone()),
        _ => Err(error(StatusCode::FORBIDDEN, "this change needs the admin credentials of [auth.admin]")),
    }
}

/// The JSON body of a change, read into `T`; else the answer (415 for another type, 400 with
/// what is wrong).
fn body<T: serde::de::DeserializeOwned>(headers: &HeaderMap, body: &[u8]) -> Result<T, Response> {
    let json = headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json"));
    if !json {
        return Err(error(StatusCode::UNSUPPORTED_MEDIA_TYPE, "send the body as Content-Type: application/json"));
    }
    serde_json::from_slice(body).map_err(|e| error(StatusCode::BAD_REQUEST, &format!("the body cannot be read: {e}")))
}

fn refused(e: &QuietError) -> Response {
    let status = match e {
        QuietError::Silence(_) | QuietError::Window(_) => StatusCode::BAD_REQUEST,
        QuietError::NoSilence { .. } | QuietError::NoWindow { .. } => StatusCode::NOT_FOUND,
        QuietError::FromFile { .. } => StatusCode::CONFLICT,
        QuietError::NotKept(_) => StatusCode::INTERNAL_SERVER_ERROR,
    };
    error(status, &e.to_string())
}

/// `?force=true` (or `force=1`) confirms a silence of every alert.
fn forced(query: Option<&str>) -> bool {
    form_urlencoded::parse(query.unwrap_or("").as_bytes()).any(|(k, v)| k == "force" && (v == "true" || v == "1"))
}

/// `GET /api/v1/silences`
pub async fn silences(State(board): State<Arc<Board>>) -> Response {
    respond(StatusCode::OK, JSON, serde_json::Value::Array(board.silences_json()).to_string())
}

/// `POST /api/v1/silences`: Alertmanager's postable silence; answers `{"silenceID": …}`.
pub async fn post_silence(
    State(board): State<Arc<Board>>,
    axum::Extension(role): axum::Extension<Checked>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
    bytes: Bytes,
) -> Response {
    let who = match admin(&board, &role) {
        Ok(w) => w,
        Err(r) => return r,
    };
    let posted: PostableSilence = match body(&headers, &bytes) {
        Ok(p) => p,
        Err(r) => return r,
    };
    match board.post_silence(&posted, &who, forced(query.as_deref())) {
        Ok(id) => {
            QuietChanged { user: &who, action: "silence made or changed", id: &id }.emit();
            respond(StatusCode::OK, JSON, json!({"silenceID": id}).to_string())
        }
        Err(e) => refused(&e),
    }
}

/// `DELETE /api/v1/silences/{id}`: expires it now.
pub async fn delete_silence(
    State(board): State<Arc<Board>>,
    axum::Extension(role): axum::Extension<Checked>,
    Path(id): Path<String>,
) -> Response {
    let who = match admin(&board, &role) {
        Ok(w) => w,
        Err(r) => return r,
    };
    match board.expire_silence(&id, &who) {
        Ok(()) => {
            QuietChanged { user: &who, action: "silence expired", id: &id }.emit();
            respond(StatusCode::OK, JSON, "")
        }
        Err(e) => refused(&e),
    }
}

/// `GET /api/v1/maintenance`
pub async fn windows(State(board): State<Arc<Board>>) -> Response {
    respond(StatusCode::OK, JSON, serde_json::Value::Array(board.windows_json()).to_string())
}

/// `POST /api/v1/maintenance`: answers `{"id": …}`.
pub async fn post_window(
    State(board): State<Arc<Board>>,
    axum::Extension(role): axum::Extension<Checked>,
    headers: HeaderMap,
    bytes: Bytes,
) -> Response {
    let who = match admin(&board, &role) {
        Ok(w) => w,
        Err(r) => return r,
    };
    let posted: PostableWindow = match body(&headers, &bytes) {
        Ok(p) => p,
        Err(r) => return r,
    };
    match board.post_window(&posted, &who) {
        Ok(id) => {
            QuietChanged { user: &who, action: "maintenance window made or changed", id: &id }.emit();
            respond(StatusCode::OK, JSON, json!({"id": id}).to_string())
        }
        Err(e) => refused(&e),
    }
}

/// `DELETE /api/v1/maintenance/{id}`: ends it now.
pub async fn delete_window(
    State(board): State<Arc<Board>>,
    axum::Extension(role): axum::Extension<Checked>,
    Path(id): Path<String>,
) -> Response {
    let who = match admin(&board, &role) {
        Ok(w) => w,
        Err(r) => return r,
    };
    match board.end_window(&id, &who) {
        Ok(()) => {
            QuietChanged { user: &who, action: "maintenance window ended", id: &id }.emit();
            respond(StatusCode::OK, JSON, "")
        }
        Err(e) => refused(&e),
    }
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
) -> Response {
    let who = match admin(&board, &role) {
        Ok(w) => w,
        Err(r) => return r,
    };
    let posted: AckBody = match body(&headers, &bytes) {
        Ok(p) => p,
        Err(r) => return r,
    };
    match board.acknowledge(&print, &who, &posted.comment) {
        Ok(ack) => {
            QuietChanged { user: &who, action: "alert acknowledged", id: &print }.emit();
            respond(StatusCode::OK, JSON, serde_json::to_string(&ack).unwrap_or_default())
        }
        Err(e) => {
            let status = match e {
                AckError::NoAlert { .. } => StatusCode::NOT_FOUND,
                AckError::NotFiring { .. } => StatusCode::CONFLICT,
                AckError::NotKept(_) => StatusCode::INTERNAL_SERVER_ERROR,
            };
            error(status, &e.to_string())
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn force_is_a_query_parameter() {
        assert!(super::forced(Some("force=true")));
        assert!(super::forced(Some("a=b&force=1")));
        assert!(!super::forced(Some("force=false")));
        assert!(!super::forced(None));
    }
}
