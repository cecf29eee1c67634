//! The notifiers: `GET /notifiers` lists each (its type, where it sends, what it is told, what
//! it sent, failed and had refused), with a "Send a test notification" button for admins
//! (`POST /notifiers/{name}/test`, the session's CSRF token), and the API's
//! `POST /api/v1/notifiers/{name}/test` (the admin's credentials): each sends the notifier a
//! test notification now, apart from the outbox, and says what the receiver answered.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use maud::{Markup, html};
use serde::Deserialize;
use serde_json::json;

use super::guard::{Change, Https, Posted, csrf_token, may_change, session, with_session};
use super::page_of;
use crate::board::Board;
use crate::notify::Notifier;
use crate::web::html::{path_segment, t, tr};
use crate::web::quiet::Refused;
use crate::web::{Checked, HTML, JSON, respond};

/// What the test button sends.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct TestForm {
    #[serde(default)]
    csrf: String,
}

impl Posted for TestForm {
    fn csrf(&self) -> &str {
        &self.csrf
    }
}

/// What a notifier is told, in words.
fn told(n: &Notifier) -> String {
    let mut parts = Vec::new();
    if !n.sink.kind().routed() {
        return t("notifiers-told-all");
    }
    if n.routing.matchers.is_empty() {
        parts.push(t("notifiers-told-rest"));
    } else {
        parts.push(n.routing.matchers.iter().map(|m| m.to_string()).collect::<Vec<_>>().join(", "));
    }
    if let Some(s) = n.routing.min_severity {
        parts.push(tr("notifiers-told-severity", &[("severity", t(&format!("severity-{}", s.as_str())).into())]));
    }
    parts.push(match &n.grouping {
        None => t("notifiers-each-change"),
        Some(g) => {
            let by = match &g.by {
                crate::config::GroupBy::Labels(labels) => labels.join(", "),
                crate::config::GroupBy::Each => "...".to_string(),
            };
            match g.repeat {
                Some(every) => {
                    let every = crate::clock::words(jiff::SignedDuration::try_from(every).unwrap_or_default());
                    tr("notifiers-grouped", &[("labels", by.into()), ("every", every.into())])
                }
                None => tr("notifiers-grouped-once", &[("labels", by.into())]),
            }
        }
    });
    parts.join(" · ")
}

/// The page, with the outcome of a test when there was one.
fn page(board: &Board, csrf: Option<&str>, outcome: Option<Markup>) -> String {
    let notifiers = board.notifiers_now();
    let counters = board.counters();
    let count = |m: &std::collections::HashMap<String, u64>, name: &str| m.get(name).copied().unwrap_or(0);
    let body = html! {
        h1 { (t("notifiers-title")) }
        @if let Some(o) = outcome { (o) }
        @for line in board.refusals() { div.error { (line) } }
        @if notifiers.is_empty() {
            p { (t("notifiers-none")) }
        } @else {
            div.scroll {
                table {
                    thead { tr {
                        th { (t("col-notifier")) } th { (t("col-type")) } th { (t("col-where")) } th { (t("col-told")) }
                        th { (t("col-sent")) } th { (t("col-failed")) } th { (t("col-refused")) }
                        @if csrf.is_some() { th {} }
                    } }
                    tbody {
                        @for n in notifiers.iter() {
                            tr {
                                td { (n.name) }
                                td { (n.sink.kind().as_str()) }
                                td { code { (n.shown) } }
                                td { (told(n)) }
                                td { (count(&counters.sent, &n.name)) }
                                td { (count(&counters.failed, &n.name)) }
                                td { (count(&counters.refused, &n.name)) }
                                @if let Some(csrf) = csrf {
                                    td {
                                        form.inline method="post" action={ "/notifiers/" (path_segment(&n.name)) "/test" } {
                                            input type="hidden" name="csrf" value=(csrf);
                                            button type="submit" { (t("notifiers-test")) }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    };
    page_of(board, &format!("{} · DumbMonit", t("notifiers-title")), body)
}

/// `GET /notifiers`
pub(crate) async fn list(
    State(board): State<Arc<Board>>,
    https: axum::Extension<Https>,
    axum::Extension(role): axum::Extension<Checked>,
    headers: HeaderMap,
) -> Response {
    if may_change(&board, &headers, &role).is_err() {
        return respond(StatusCode::OK, HTML, page(&board, None, None));
    }
    let s = session(&board, &headers, https.0);
    let csrf = csrf_token(&board, &s);
    with_session(respond(StatusCode::OK, HTML, page(&board, csrf.as_deref(), None)), &s, https.0)
}

/// Sends the test and puts it in the audit list; what the receiver answered, or why not.
async fn test(board: &Board, name: &str, who: &str) -> Result<Result<String, String>, Refused> {
    let notifiers = board.notifiers_now();
    let Some(n) = notifiers.iter().find(|n| n.name == name) else {
        return Err(Refused { status: StatusCode::NOT_FOUND, why: tr("notifiers-no-such", &[("name", name.into())]) });
    };
    let sent = crate::notify::Client::new().send_test(n, who, jiff::Timestamp::now()).await.map_err(|e| e.to_string());
    let said = match &sent {
        Ok(answer) => format!("test notification sent to {name}: {answer}"),
        Err(e) => format!("test notification to {name} not taken: {e}"),
    };
    board
        .quieting()
        .audit_change(who, said, String::new())
        .map_err(|e| Refused { status: StatusCode::INTERNAL_SERVER_ERROR, why: e.to_string() })?;
    Ok(sent)
}

/// `POST /notifiers/{name}/test`: the page again, saying what the receiver answered.
pub(crate) async fn test_post(
    State(board): State<Arc<Board>>,
    Path(name): Path<String>,
    Change { who, form }: Change<TestForm>,
) -> Response {
    let outcome = match test(&board, &name, &who).await {
        Ok(Ok(answer)) => {
            html! { div.tested { (tr("notifiers-test-ok", &[("name", (&name).into()), ("answer", answer.into())])) } }
        }
        Ok(Err(e)) => {
            html! { div.error { (tr("notifiers-test-failed", &[("name", (&name).into()), ("error", e.into())])) } }
        }
        Err(refused) => {
            return respond(
                refused.status,
                HTML,
                page(&board, Some(&form.csrf), Some(html! { div.error { (refused.why) } })),
            );
        }
    };
    respond(StatusCode::OK, HTML, page(&board, Some(&form.csrf), Some(outcome)))
}

/// `POST /api/v1/notifiers/{name}/test` with `{}`: `{"notifier", "sent": true, "answer"}`, or
/// 502 with `{"notifier", "sent": false, "error"}` when the receiver did not take it. Like every
/// change of the API, a JSON body, which no form of another site can send.
pub(crate) async fn api_test(
    State(board): State<Arc<Board>>,
    axum::Extension(role): axum::Extension<Checked>,
    Path(name): Path<String>,
    headers: HeaderMap,
    bytes: bytes::Bytes,
) -> Result<Response, Refused> {
    let (who, _): (String, serde_json::Map<String, serde_json::Value>) =
        crate::web::quiet::change(&board, &role, &headers, &bytes)?;
    Ok(match test(&board, &name, &who).await? {
        Ok(answer) => {
            respond(StatusCode::OK, JSON, json!({"notifier": name, "sent": true, "answer": answer}).to_string())
        }
        Err(error) => {
            respond(StatusCode::BAD_GATEWAY, JSON, json!({"notifier": name, "sent": false, "error": error}).to_string())
        }
    })
}
