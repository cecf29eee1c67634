//! The handlers of the forms' routes: the form to add or edit a cluster, its Test, Save and the
//! agent's token, removal, and the audit list; and the command that starts an agent.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use maud::{Markup, html};

use super::form::{ClusterForm, RemoveForm, check_name, form_page};
use super::guard::{Change, Https, csrf_token, may_change, session, with_session};
use super::page_of;
use super::refusal::FormError;
use super::store::{remove, save};
use super::test_cycle::{outcome_of, test_cycle};
use crate::board::Board;
use crate::secret::random_token;
use crate::web::html::{clock, path_segment, t, tr};
use crate::web::{Checked, HTML, respond};

/// `GET /clusters/new`
pub(crate) async fn new_form(
    State(board): State<Arc<Board>>,
    https: axum::Extension<Https>,
    axum::Extension(role): axum::Extension<Checked>,
    headers: HeaderMap,
) -> Response {
    if let Err(r) = may_change(&board, &headers, &role) {
        return r.answer(&board);
    }
    let s = session(&board, &headers, https.0);
    let csrf = csrf_token(&board, &s).unwrap_or_default();
    let f = ClusterForm::blank();
    with_session(respond(StatusCode::OK, HTML, form_page(&board, &csrf, &f, None, None)), &s, https.0)
}

/// `GET /clusters/{name}/edit`
pub(crate) async fn edit_form(
    State(board): State<Arc<Board>>,
    https: axum::Extension<Https>,
    axum::Extension(role): axum::Extension<Checked>,
    Path(name): Path<String>,
    headers: HeaderMap,
) -> Response {
    if let Err(r) = may_change(&board, &headers, &role) {
        return r.answer(&board);
    }
    let Some(settings) = board.page_clusters().stored_one(&name).map(|c| c.settings) else {
        return not_editable(&board, &name);
    };
    let s = session(&board, &headers, https.0);
    let csrf = csrf_token(&board, &s).unwrap_or_default();
    let f = ClusterForm::from_settings(&name, &settings);
    with_session(respond(StatusCode::OK, HTML, form_page(&board, &csrf, &f, Some(&name), None)), &s, https.0)
}

fn not_editable(board: &Board, name: &str) -> Response {
    let name = name.to_string();
    let e = if board.views().cluster(&name).is_some() {
        FormError::FromTheFile { name }
    } else {
        FormError::NotAdded { name }
    };
    e.answer(board)
}

/// `POST /clusters/new`: test, save, or make an agent's token.
pub(crate) async fn new_post(
    State(board): State<Arc<Board>>,
    https: axum::Extension<Https>,
    headers: HeaderMap,
    Change { who, form: f }: Change<ClusterForm>,
) -> Response {
    let name = f.name.trim().to_string();
    let agent = f.action == "agent";
    let taken = board.views().cluster(&name).is_some() || board.page_clusters().stored_one(&name).is_some();
    let settings = check_name(&name)
        .and_then(|_| if taken { Err(FormError::NameTaken { name: name.clone() }) } else { Ok(()) })
        .and_then(|_| f.settings(agent));
    let answer = |outcome: Markup| respond(StatusCode::OK, HTML, form_page(&board, &f.csrf, &f, None, Some(outcome)));
    let settings = match settings {
        Ok(s) => s,
        Err(e) => return answer(e.problem()),
    };
    match f.action.as_str() {
        "test" => {
            if f.token.trim().is_empty() {
                return answer(FormError::NoTokenToTest.problem());
            }
            let tested = test_cycle(&name, &settings, f.token.trim().to_string()).await;
            answer(outcome_of(&tested))
        }
        "save" => {
            if f.token.trim().is_empty() {
                return answer(FormError::NoTokenToSave.problem());
            }
            match save(&board, &who, &name, &settings, f.token.trim(), "added").await {
                Ok(()) => Redirect::to(&format!("/clusters/{}", path_segment(&name))).into_response(),
                Err(e) => answer(e.problem()),
            }
        }
        "agent" => {
            let token = random_token(32);
            if let Err(e) = save(&board, &who, &name, &settings, &token, "added (read through an agent)").await {
                return answer(e.problem());
            }
            let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("DUMBMONIT-SERVER");
            let server = format!("{}://{host}", if https.0.0 { "https" } else { "http" });
            let command = agent_command(&token, &server, &name, &settings.connect.namespaces);
            let body = html! {
                h1 { (tr("agent-for", &[("name", (&name).into())])) }
                p { (t("agent-run-this")) }
                pre.command { code { (command) } }
                p { a href={ "/clusters/" (path_segment(&name)) } { (t("agent-page")) } " " (t("agent-page.says")) }
            };
            let title = format!("{} · DumbMonit", tr("agent-for", &[("name", (&name).into())]));
            respond(StatusCode::OK, HTML, page_of(&board, &title, body))
        }
        _ => answer(FormError::NoAction.problem()),
    }
}

/// The command that starts the agent of cluster `name` in its cluster, its token in it: the
/// token written to a file only its user reads, then the agent's objects applied.
fn agent_command(token: &str, server: &str, name: &str, namespaces: &[String]) -> String {
    let file = format!("{name}.agent-token");
    // Namespaced access: the agent's Roles in those namespaces, and no ClusterRole.
    let namespaced: String = namespaces.iter().map(|ns| format!(" --namespace {}", shell_quote(ns))).collect();
    format!(
        "umask 077; printf '%s' {} > {file} && dumbmonit manifests agent --server {} --cluster={} --agent-token-file {file}{namespaced} | kubectl apply -f -",
        shell_quote(token),
        shell_quote(server),
        shell_quote(name),
        file = shell_quote(&file),
    )
}

/// A word for a POSIX shell, whatever it holds.
fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// `POST /clusters/{name}/edit`: test or save; an empty token keeps the stored one.
pub(crate) async fn edit_post(
    State(board): State<Arc<Board>>,
    Path(name): Path<String>,
    Change { who, form: mut f }: Change<ClusterForm>,
) -> Response {
    let Some(stored) = board.page_clusters().stored_one(&name) else {
        return not_editable(&board, &name);
    };
    let old = stored.settings.connect;
    f.name = name.clone();
    let agent = old.address.is_none();
    f.agent = agent;
    let answer = |f: &ClusterForm, outcome: Markup| {
        respond(StatusCode::OK, HTML, form_page(&board, &f.csrf, f, Some(&name), Some(outcome)))
    };
    let settings = match f.settings(agent) {
        Ok(s) => s,
        Err(e) => return answer(&f, e.problem()),
    };
    // The stored token goes only where it was saved for: a changed address, port, CA or
    // certificate choice needs the token entered again, and nothing is sent before.
    let new = &settings.connect;
    let moved = new.address != old.address
        || new.port != old.port
        || new.ca != old.ca
        || new.insecure_skip_tls_verify != old.insecure_skip_tls_verify;
    if moved && f.token.trim().is_empty() {
        return answer(&f, FormError::TokenAgain.problem());
    }
    let token = if f.token.trim().is_empty() {
        match stored.token {
            Ok(t) => t,
            Err(_) => return answer(&f, FormError::Unsealable.problem()),
        }
    } else {
        f.token.trim().to_string()
    };
    match f.action.as_str() {
        "test" if !agent => {
            let tested = test_cycle(&name, &settings, token).await;
            answer(&f, outcome_of(&tested))
        }
        "save" => match save(&board, &who, &name, &settings, &token, "changed").await {
            Ok(()) => Redirect::to(&format!("/clusters/{}", path_segment(&name))).into_response(),
            Err(e) => answer(&f, e.problem()),
        },
        _ => answer(&f, FormError::NoAction.problem()),
    }
}

/// `POST /clusters/{name}/remove`
pub(crate) async fn remove_post(
    State(board): State<Arc<Board>>,
    Path(name): Path<String>,
    Change { who, form: _ }: Change<RemoveForm>,
) -> Response {
    match remove(&board, &who, &name).await {
        Ok(true) => Redirect::to("/").into_response(),
        Ok(false) => not_editable(&board, &name),
        Err(e) => FormError::NotRemoved(e).answer(&board),
    }
}

/// `GET /audit`: who changed what and when.
pub(crate) async fn audit(State(board): State<Arc<Board>>) -> Response {
    let entries = board.reader().audit(500).unwrap_or_default();
    let body = html! {
        h1 { (t("audit-title")) }
        @if entries.is_empty() {
            p { (t("audit-none")) }
        } @else {
            div.scroll {
                table {
                    thead { tr { th { (t("col-when")) } th { (t("col-who")) } th { (t("col-what")) } th { (t("col-cluster")) } } }
                    tbody {
                        @for e in &entries {
                            @let when = jiff::Timestamp::from_second(e.time).unwrap_or_default();
                            tr {
                                td { (when.strftime("%Y-%m-%d").to_string()) " " (clock(when)) }
                                td { (e.who) }
                                td { (e.action) }
                                td { (e.cluster) }
                            }
                        }
                    }
                }
            }
        }
    };
    respond(StatusCode::OK, HTML, page_of(&board, &format!("{} · DumbMonit", t("audit-page")), body))
}
