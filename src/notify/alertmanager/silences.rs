//! Alertmanager as the home of silences, so that replicas share them: a silence made on
//! DumbMonit is created there (`POST /api/v2/silences`), expired there
//! (`DELETE /api/v2/silence/{id}`), and Alertmanager's silences are read back
//! (`GET /api/v2/silences`), those made in its own UI or with amtool included.

use http::Method;
use serde_json::Value;

use crate::notify::{Client, Notifier, PostError};

/// Why Alertmanager's silences could not be used.
#[derive(Debug, thiserror::Error)]
pub enum HomeError {
    #[error("Alertmanager {notifier} ({endpoint}) could not be reached: {source}")]
    Unreachable { notifier: String, endpoint: String, source: PostError },
    #[error("Alertmanager {notifier} ({endpoint}) answered what is not its silences: {detail}")]
    Unreadable { notifier: String, endpoint: String, detail: String },
}

fn unreachable(n: &Notifier, source: PostError) -> HomeError {
    HomeError::Unreachable { notifier: n.name.clone(), endpoint: n.shown.clone(), source }
}

fn unreadable(n: &Notifier, detail: String) -> HomeError {
    HomeError::Unreadable { notifier: n.name.clone(), endpoint: n.shown.clone(), detail }
}

/// Every silence Alertmanager holds, as it lists them.
pub async fn list(client: &Client, n: &Notifier) -> Result<Vec<Value>, HomeError> {
    let body = client.call(n, Method::GET, "/api/v2/silences", "").await.map_err(|e| unreachable(n, e))?;
    serde_json::from_slice(&body).map_err(|e| unreadable(n, e.to_string()))
}

/// Creates (or, with an `id`, changes) a silence; gives its id.
pub async fn create(client: &Client, n: &Notifier, silence: &Value) -> Result<String, HomeError> {
    let body =
        client.call(n, Method::POST, "/api/v2/silences", &silence.to_string()).await.map_err(|e| unreachable(n, e))?;
    let answer: Value = serde_json::from_slice(&body).map_err(|e| unreadable(n, e.to_string()))?;
    answer["silenceID"].as_str().map(str::to_string).ok_or_else(|| unreadable(n, "no silenceID".into()))
}

/// Expires a silence now.
pub async fn expire(client: &Client, n: &Notifier, id: &str) -> Result<(), HomeError> {
    let path = format!("/api/v2/silence/{}", form_urlencoded::byte_serialize(id.as_bytes()).collect::<String>());
    client.call(n, Method::DELETE, &path, "").await.map(drop).map_err(|e| unreachable(n, e))
}
