//! Who may change clusters on the pages, and whether a POST comes from this server's own form:
//! the session cookie (signed, for the admin credentials of now, since this process started), the
//! CSRF token of the form (signed with the session), and the admin role.

use std::sync::Arc;

use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;

use super::refusal::FormError;
use crate::auth::Role;
use crate::board::Board;
use crate::logs::Emit;
use crate::secret::random_token;
use crate::web::Checked;
use crate::web::events::ChangeRefused;

pub const SESSION_COOKIE: &str = "dumbmonit_session";

/// Whether the server is reached over HTTPS (for the session cookie's `Secure` and the agent's
/// command).
#[derive(Clone, Copy)]
pub struct Https(pub bool);

/// The session a form belongs to: the cookie's when this server issued it (signed, not
/// expired, for the admin credentials of now, since this process started), or a new one set
/// with the answer.
pub(super) struct Session {
    /// `ID.EXPIRES.SIGNATURE`, as the cookie holds it.
    value: String,
    new: bool,
}

/// How long a session lasts.
const SESSION_SECONDS: i64 = 12 * 3600;

/// The session cookie's name: with the `__Host-` prefix over HTTPS (Secure, for this host only).
fn cookie_name(https: Https) -> &'static str {
    if https.0 { "__Host-dumbmonit_session" } else { SESSION_COOKIE }
}

/// Random for each start of the process: the sessions of a previous start are not taken.
fn boot() -> &'static str {
    static BOOT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    BOOT.get_or_init(|| random_token(16))
}

fn session_signature(board: &Board, id: &str, expires: i64) -> Option<String> {
    let fingerprint = board.protection().admin_fingerprint();
    let key = board.secret_key()?;
    Some(key.sign(format!("session {id} {expires} {} {fingerprint}", boot()).as_bytes()))
}

fn now() -> i64 {
    jiff::Timestamp::now().as_second()
}

/// The session of a request (see [`Session`]).
pub(super) fn session(board: &Board, headers: &HeaderMap, https: Https) -> Session {
    let now = now();
    let name = cookie_name(https);
    let valid = |value: &str| {
        let mut parts = value.split('.');
        let (Some(id), Some(expires), Some(signature), None) = (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return false;
        };
        let Ok(expires) = expires.parse::<i64>() else { return false };
        let expected = session_signature(board, id, expires).unwrap_or_default();
        id.len() == 43
            && expires > now
            && expires <= now + SESSION_SECONDS
            && !expected.is_empty()
            && crate::auth::constant_time_eq(expected.as_bytes(), signature.as_bytes())
    };
    let found = headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|c| c.trim().split_once('='))
        .find(|(k, v)| *k == name && valid(v))
        .map(|(_, v)| v.to_string());
    match found {
        Some(value) => Session { value, new: false },
        None => {
            let (id, expires) = (random_token(32), now + SESSION_SECONDS);
            let signature = session_signature(board, &id, expires).unwrap_or_default();
            Session { value: format!("{id}.{expires}.{signature}"), new: true }
        }
    }
}

/// The form's CSRF token: the session's, and the admin credentials' fingerprint (a changed
/// password or token makes it invalid).
pub(super) fn csrf_token(board: &Board, session: &Session) -> Option<String> {
    let fingerprint = board.protection().admin_fingerprint();
    board.secret_key().map(|k| k.sign(format!("csrf {} {fingerprint}", session.value).as_bytes()))
}

/// A page answer, with the session cookie when it is new.
pub(super) fn with_session(mut r: Response, s: &Session, https: Https) -> Response {
    if s.new {
        let secure = if https.0 { "; Secure" } else { "" };
        let cookie = format!(
            "{}={}; Path=/; Max-Age={SESSION_SECONDS}; HttpOnly; SameSite=Strict{secure}",
            cookie_name(https),
            s.value
        );
        if let Ok(v) = HeaderValue::from_str(&cookie) {
            r.headers_mut().append(header::SET_COOKIE, v);
        }
    }
    r
}

/// Who asks for a change, or why this request may not change anything.
pub(super) fn may_change(board: &Board, headers: &HeaderMap, role: &Checked) -> Result<String, FormError> {
    if !board.protection().has_admins() {
        return Err(FormError::ReadOnly);
    }
    if board.secret_key().is_none() {
        return Err(FormError::NoSecretKey);
    }
    match &role.0 {
        Some(Role::Admin(who)) => Ok(who.clone()),
        // Without [auth] a browser sends no credentials until asked: ask, so an admin can log in.
        _ => Err(FormError::NotAdmin { ask: !headers.contains_key(header::AUTHORIZATION) }),
    }
}

/// The CSRF token of a POST, checked against its session cookie.
fn check_csrf(board: &Board, headers: &HeaderMap, https: Https, given: &str) -> Result<(), FormError> {
    let s = session(board, headers, https);
    let expected = csrf_token(board, &s).unwrap_or_default();
    if s.new || expected.is_empty() || !crate::auth::constant_time_eq(expected.as_bytes(), given.as_bytes()) {
        ChangeRefused::Csrf.emit();
        return Err(FormError::NotThisSession);
    }
    Ok(())
}

/// A form that carries the CSRF token of its session.
pub(crate) trait Posted: serde::de::DeserializeOwned + Default {
    fn csrf(&self) -> &str;
}

/// A change asked for by a POST of the admins' forms, as a handler's argument: who asks and
/// what the form says, once the role and the CSRF token are checked; refused with the page
/// that says why. A body that is not a form has no fields (and so no CSRF token: it is refused
/// like any POST without one).
pub(crate) struct Change<T> {
    pub who: String,
    pub form: T,
}

impl<T: Posted + Send> axum::extract::FromRequest<Arc<Board>> for Change<T> {
    type Rejection = Response;

    async fn from_request(request: axum::extract::Request, board: &Arc<Board>) -> Result<Self, Response> {
        let https = request.extensions().get::<Https>().copied().unwrap_or(Https(false));
        let role = request.extensions().get::<Checked>().cloned().unwrap_or(Checked(None));
        let headers = request.headers().clone();
        let who = may_change(board, &headers, &role).map_err(|e| e.answer(board))?;
        let body = <Bytes as axum::extract::FromRequest<_>>::from_request(request, board)
            .await
            .map_err(IntoResponse::into_response)?;
        let form: T = serde_urlencoded::from_bytes(&body).unwrap_or_default();
        check_csrf(board, &headers, https, form.csrf()).map_err(|e| e.answer(board))?;
        Ok(Change { who, form })
    }
}
