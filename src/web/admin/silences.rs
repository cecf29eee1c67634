//! The pages of what keeps the notifiers quiet: `/silences` lists the silences (the file's
//! standing rules read-only) and the maintenance windows; admins make a silence (pre-filled from
//! an alert's or a cluster's labels), change its end or comment, expire it, and acknowledge an
//! alert. Every change is a POST of a form with the session's CSRF token, made where silences
//! live (Alertmanager when it is their home), as the API makes it (`web::quiet`).

use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use jiff::Timestamp;
use maud::{Markup, html};
use serde::Deserialize;

use super::guard::{Change, Https, Posted, csrf_token, may_change, session, with_session};
use super::page_of;
use crate::board::Board;
use crate::logs::Emit;
use crate::silence::postable::{ApiMatcher, PostableSilence};
use crate::silence::{Matcher, Silence, SilenceState};
use crate::web::html::{lang, path_segment, t, tr};
use crate::web::{Checked, HTML, respond};

fn moment(t: Option<Timestamp>) -> String {
    t.map(|at| crate::lang::date_time(lang(), at)).unwrap_or_else(|| "–".into())
}

/// The CSRF token of an admin's page, with the session it belongs to; None for viewers.
fn admin_token(
    board: &Board,
    headers: &HeaderMap,
    role: &Checked,
    https: Https,
) -> Option<(String, super::guard::Session)> {
    may_change(board, headers, role).ok()?;
    let s = session(board, headers, https);
    Some((csrf_token(board, &s)?, s))
}

/// An admin's form page: the role checked, then `body` given the session's CSRF token.
fn form_page(
    board: &Board,
    headers: &HeaderMap,
    role: &Checked,
    https: Https,
    title: &str,
    body: impl FnOnce(&str) -> Markup,
) -> Response {
    if let Err(r) = may_change(board, headers, role) {
        return r.answer(board);
    }
    let s = session(board, headers, https);
    let csrf = csrf_token(board, &s).unwrap_or_default();
    with_session(respond(StatusCode::OK, HTML, page_of(board, title, body(&csrf))), &s, https)
}

/// Silences, and maintenance windows, shown on one page of `/silences`.
const PER_PAGE: usize = 100;

/// `?page=N` (the silences') and `?windows=N` (the maintenance windows'), from 1; a value that
/// is not a number is the first page, as the overview takes it.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct Pages {
    #[serde(default)]
    page: Option<String>,
    #[serde(default)]
    windows: Option<String>,
}

impl Pages {
    fn number(p: &Option<String>) -> Option<usize> {
        p.as_deref().and_then(|p| p.trim().parse().ok())
    }
}

/// The items of page `n` (from 1) of a list, and the links to the pages beside it.
fn page_of_list<'a, T>(
    items: &'a [T],
    n: Option<usize>,
    param: &str,
    other: Option<(&str, usize)>,
) -> (&'a [T], Markup) {
    let pages = items.len().div_ceil(PER_PAGE).max(1);
    let n = n.unwrap_or(1).clamp(1, pages);
    let from = (n - 1) * PER_PAGE;
    let shown = &items[from..(from + PER_PAGE).min(items.len())];
    let link = |to: usize| match other {
        Some((name, at)) if at > 1 => format!("/silences?{param}={to}&{name}={at}"),
        _ => format!("/silences?{param}={to}"),
    };
    let nav = html! {
        @if pages > 1 {
            p.pages {
                (tr("q-page", &[("from", (from + 1).into()), ("to", (from + shown.len()).into()), ("total", items.len().into())]))
                @if n > 1 { " " a href=(link(n - 1)) { (t("q-previous")) } }
                @if n < pages { " " a href=(link(n + 1)) { (t("q-next")) } }
            }
        }
    };
    (shown, nav)
}

/// `GET /silences`
pub(crate) async fn list(
    State(board): State<Arc<Board>>,
    https: axum::Extension<Https>,
    axum::Extension(role): axum::Extension<Checked>,
    Query(pages): Query<Pages>,
    headers: HeaderMap,
) -> Response {
    let admin = admin_token(&board, &headers, &role, https.0);
    let csrf = admin.as_ref().map(|(c, _)| c.as_str());
    let now = board.now();
    let quiet = board.quieting().quiet();
    let home = board.quieting().silence_home().map(|(set, at)| set[at].name.clone());
    let mut silences: Vec<&Silence> = quiet.silences.iter().collect();
    silences.sort_by_key(|s| (s.state(now) == SilenceState::Expired, !s.from_file, s.ends_at));
    let windows = board.quieting().windows_json();
    let (page, windows_page) = (Pages::number(&pages.page), Pages::number(&pages.windows));
    let (silences_shown, silences_nav) =
        page_of_list(&silences, page, "page", Some(("windows", windows_page.unwrap_or(1))));
    let (windows_shown, windows_nav) =
        page_of_list(&windows, windows_page, "windows", Some(("page", page.unwrap_or(1))));
    let body = html! {
        h1 { (t("q-silences")) }
        @if let Some(name) = &home {
            p.muted { (tr("q-home", &[("name", name.into())])) }
        }
        @if let Some(problem) = board.quieting().home_problem() {
            div.error { strong { (t("q-home-unread")) } " " (problem) ". " (t("q-home-unread.kept")) }
        }
        @if silences.is_empty() {
            p { (t("q-no-silence")) }
        } @else {
            div.scroll {
                table.silences {
                    thead { tr { th { (t("col-state")) } th { (t("q-col-matchers")) } th { (t("q-col-until")) } th { (t("q-col-by")) } th { (t("q-col-comment")) } th {} } }
                    tbody {
                        @for s in silences_shown {
                            @let state = s.state(now).as_str();
                            tr data-silence=(s.id) {
                                td class=(state) { (t(&format!("q-state-{state}"))) }
                                td { code { (s.matchers_text()) } }
                                td { @if s.from_file { (t("q-no-end")) } @else { (moment(s.ends_at)) } }
                                td { (s.created_by) }
                                td { (s.comment) }
                                td {
                                    @if s.from_file {
                                        span.muted { (t("q-from-file")) }
                                    } @else if let (Some(csrf), false) = (csrf, state == "expired") {
                                        a href={ "/silences/" (path_segment(&s.id)) "/edit" } { (t("q-edit")) }
                                        " "
                                        form.inline method="post" action={ "/silences/" (path_segment(&s.id)) "/expire" } {
                                            input type="hidden" name="csrf" value=(csrf);
                                            button type="submit" { (t("q-expire")) }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        (silences_nav)
        @let refused = board.quieting().home_refused();
        @if !refused.is_empty() {
            h2 { (t("q-not-applied-title")) }
            div.scroll {
                table.silences {
                    thead { tr { th { (t("col-state")) } th { (t("q-col-matchers")) } th { (t("q-col-by")) } } }
                    tbody {
                        @for r in refused.iter().take(PER_PAGE) {
                            tr data-silence=(r.id) {
                                td.not-applied { (tr("q-not-applied", &[("why", r.why.clone().into())])) }
                                td { code { (r.matchers) } }
                                td { (r.created_by) }
                            }
                        }
                    }
                }
            }
        }
        @if csrf.is_some() {
            p.actions { a href="/silences/new" { (t("q-new-silence")) } }
        }
        h2 { (t("q-windows")) }
        @if windows.is_empty() {
            p { (t("q-no-window")) }
        } @else {
            div.scroll {
                table {
                    thead { tr { th { (t("col-state")) } th { (t("q-col-clusters")) } th { (t("col-when")) } th { (t("q-col-by")) } th { (t("q-col-comment")) } th {} } }
                    tbody {
                        @for w in windows_shown {
                            tr {
                                td { (t(&format!("q-state-{}", w["status"]["state"].as_str().unwrap_or("expired")))) }
                                td { code { (w["cluster"].as_str().unwrap_or("")) } }
                                td {
                                    @match (w["startsAt"].as_str(), w["schedule"].as_str()) {
                                        (Some(start), _) => { (start) " – " (w["endsAt"].as_str().unwrap_or("")) }
                                        (None, Some(schedule)) => {
                                            code { (schedule) } " " (w["timeZone"].as_str().unwrap_or("")) " " (t("q-for")) " " (w["duration"].as_str().unwrap_or(""))
                                        }
                                        _ => {}
                                    }
                                }
                                td { (w["createdBy"].as_str().unwrap_or("")) }
                                td { (w["comment"].as_str().unwrap_or("")) }
                                td {
                                    @if w["from_file"] == true {
                                        span.muted { (t("q-from-file")) }
                                    } @else if let Some(csrf) = csrf {
                                        form.inline method="post" action={ "/maintenance/" (path_segment(w["id"].as_str().unwrap_or(""))) "/end" } {
                                            input type="hidden" name="csrf" value=(csrf);
                                            button type="submit" { (t("q-end")) }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        (windows_nav)
        @if csrf.is_some() {
            p.actions { a href="/maintenance/new" { (t("q-new-window")) } }
        }
    };
    let page = respond(StatusCode::OK, HTML, page_of(&board, &format!("{} · DumbMonit", t("q-silences")), body));
    match &admin {
        Some((_, s)) => with_session(page, s, https.0),
        None => page,
    }
}

/// What the silence form sends: the matchers one a line, how long (or a new end), the comment.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct SilenceForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    matchers: String,
    /// From now: `2h`, `1d`.
    #[serde(default)]
    duration: String,
    #[serde(default)]
    comment: String,
    /// Confirms a silence of every alert.
    #[serde(default)]
    everything: Option<String>,
}

impl Posted for SilenceForm {
    fn csrf(&self) -> &str {
        &self.csrf
    }
}

impl SilenceForm {
    /// Alertmanager's body for it, as of `now`; `id` when it changes one. Why not, naming the
    /// field as the form says it.
    fn postable(&self, id: Option<&str>, now: Timestamp) -> Result<PostableSilence, String> {
        let mut matchers = Vec::new();
        let lines: Vec<&str> = self.matchers.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
        if lines.len() > crate::silence::cost::MAX_MATCHERS {
            let e = crate::silence::MatchersError::TooMany { count: lines.len() };
            return Err(format!("Matchers: {e}"));
        }
        // Read here, compiled where the silence is made (off the request threads).
        for line in lines {
            let m = Matcher::parse_inert(line).map_err(|e| format!("Matchers: {e}"))?;
            matchers.push(ApiMatcher {
                name: m.name.clone(),
                value: m.value.clone(),
                is_regex: m.is_regex(),
                is_equal: m.is_equal(),
            });
        }
        let d = crate::silence::maintenance::parse_duration(&self.duration).ok_or_else(|| {
            format!("Duration: {:?} is not a duration above 0 (such as 2h, 90m or 1d)", self.duration)
        })?;
        let end = now.checked_add(d).map_err(|_| "Duration: too long".to_string())?;
        Ok(PostableSilence {
            id: id.map(str::to_string),
            matchers,
            starts_at: None,
            ends_at: end.to_string(),
            created_by: None,
            comment: self.comment.clone(),
        })
    }
}

fn silence_form(csrf: &str, action: &str, f: &SilenceForm, fixed: bool, problem: Option<&str>) -> Markup {
    html! {
        @if let Some(p) = problem {
            div.error { strong { (t("not-saved")) } " " (p) }
        }
        form.silence method="post" action=(action) {
            input type="hidden" name="csrf" value=(csrf);
            label { (t("q-matchers"))
                textarea name="matchers" rows="5" readonly[fixed] { (f.matchers) }
            }
            label { (t("q-for-how-long")) input type="text" name="duration" value=(f.duration); }
            label { (t("q-col-comment")) input type="text" name="comment" value=(f.comment); }
            @if !fixed {
                label.check { input type="checkbox" name="everything"; " " (t("q-everything")) }
            }
            button type="submit" { (t("form-save")) }
        }
    }
}

/// `GET /silences/new?matcher=…&matcher=…`: pre-filled from an alert's or a cluster's labels.
pub(crate) async fn new(
    State(board): State<Arc<Board>>,
    https: axum::Extension<Https>,
    axum::Extension(role): axum::Extension<Checked>,
    Query(params): Query<crate::web::Params>,
    headers: HeaderMap,
) -> Response {
    let matchers: Vec<String> = params
        .iter()
        .filter(|(k, _)| k == "matcher")
        .map(|(_, v)| v.chars().filter(|c| !c.is_control()).take(500).collect())
        .collect();
    let f = SilenceForm { matchers: matchers.join("\n"), duration: "2h".into(), ..SilenceForm::default() };
    form_page(&board, &headers, &role, https.0, &format!("{} · DumbMonit", t("q-new-silence")), |csrf| {
        html! { h1 { (t("q-new-silence")) } (silence_form(csrf, "/silences", &f, false, None)) }
    })
}

/// `POST /silences`
pub(crate) async fn create(State(board): State<Arc<Board>>, Change { who, form: f }: Change<SilenceForm>) -> Response {
    let again = |problem: &str| {
        let body = html! { h1 { (t("q-new-silence")) } (silence_form(&f.csrf, "/silences", &f, false, Some(problem))) };
        respond(StatusCode::OK, HTML, page_of(&board, &format!("{} · DumbMonit", t("q-new-silence")), body))
    };
    let posted = match f.postable(None, board.now()) {
        Ok(p) => p,
        Err(why) => return again(&why),
    };
    match crate::web::quiet::make_silence(&board, &posted, &who, f.everything.is_some()).await {
        Ok(_) => Redirect::to("/silences").into_response(),
        Err(refused) => again(&refused.why),
    }
}

/// `GET /silences/{id}/edit`: a new end or comment.
pub(crate) async fn edit(
    State(board): State<Arc<Board>>,
    https: axum::Extension<Https>,
    axum::Extension(role): axum::Extension<Checked>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Response {
    let Some(silence) = board.quieting().quiet().silence(&id).filter(|s| !s.from_file).cloned() else {
        return not_found(&board, &id);
    };
    let f = SilenceForm {
        matchers: silence.matchers.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"),
        duration: "2h".into(),
        comment: silence.comment.clone(),
        ..SilenceForm::default()
    };
    let action = format!("/silences/{}/edit", path_segment(&id));
    form_page(&board, &headers, &role, https.0, &format!("{} · DumbMonit", t("q-silence")), |csrf| {
        html! {
            h1 { (tr("q-silence-until", &[("until", moment(silence.ends_at).into())])) }
            p.muted { (t("q-new-end")) }
            (silence_form(csrf, &action, &f, true, None))
        }
    })
}

fn not_found(board: &Board, id: &str) -> Response {
    let body = html! { h1 { (t("not-found")) } p { (tr("q-no-such-silence", &[("id", id.into())])) } };
    respond(StatusCode::NOT_FOUND, HTML, page_of(board, &format!("{} · DumbMonit", t("not-found")), body))
}

/// `POST /silences/{id}/edit`
pub(crate) async fn edit_post(
    State(board): State<Arc<Board>>,
    Path(id): Path<String>,
    Change { who, form: mut f }: Change<SilenceForm>,
) -> Response {
    let Some(silence) = board.quieting().quiet().silence(&id).filter(|s| !s.from_file).cloned() else {
        return not_found(&board, &id);
    };
    // The matchers stay the silence's.
    f.matchers = silence.matchers.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n");
    let action = format!("/silences/{}/edit", path_segment(&id));
    let again = |problem: &str| {
        let body = html! { h1 { (t("q-silence")) } (silence_form(&f.csrf, &action, &f, true, Some(problem))) };
        respond(StatusCode::OK, HTML, page_of(&board, &format!("{} · DumbMonit", t("q-silence")), body))
    };
    let mut posted = match f.postable(Some(&id), board.now()) {
        Ok(p) => p,
        Err(why) => return again(&why),
    };
    posted.starts_at = silence.starts_at.map(|t| t.to_string());
    posted.created_by = Some(silence.created_by.clone());
    match crate::web::quiet::make_silence(&board, &posted, &who, true).await {
        Ok(_) => Redirect::to("/silences").into_response(),
        Err(refused) => again(&refused.why),
    }
}

/// A form that carries its CSRF token only (expire), or a comment too (acknowledge).
#[derive(Debug, Default, Deserialize)]
pub(crate) struct ConfirmForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    comment: String,
}

impl Posted for ConfirmForm {
    fn csrf(&self) -> &str {
        &self.csrf
    }
}

/// `POST /silences/{id}/expire`
pub(crate) async fn expire(
    State(board): State<Arc<Board>>,
    Path(id): Path<String>,
    Change { who, form: _ }: Change<ConfirmForm>,
) -> Response {
    match crate::web::quiet::end_silence(&board, &id, &who).await {
        Ok(()) => Redirect::to("/silences").into_response(),
        Err(refused) => {
            let body = html! { h1 { (t("q-not-expired")) } p { (refused.why) } };
            respond(refused.status, HTML, page_of(&board, &format!("{} · DumbMonit", t("q-not-expired")), body))
        }
    }
}

/// `GET /alerts/{fingerprint}/ack`: the acknowledgement's form.
pub(crate) async fn ack_form(
    State(board): State<Arc<Board>>,
    https: axum::Extension<Https>,
    axum::Extension(role): axum::Extension<Checked>,
    Path(print): Path<String>,
    headers: HeaderMap,
) -> Response {
    let found = board.views().alert_by_fingerprint(&print);
    let Some((cluster, alert)) = found else {
        let body = html! { h1 { (t("not-found")) } p { (tr("q-no-such-alert", &[("print", (&print).into())])) } };
        return respond(StatusCode::NOT_FOUND, HTML, page_of(&board, &format!("{} · DumbMonit", t("not-found")), body));
    };
    form_page(&board, &headers, &role, https.0, &format!("{} · DumbMonit", t("q-acknowledge")), |csrf| {
        html! {
            h1 { (t("q-acknowledge")) }
            p { strong { (alert.alertname) } " · " (cluster) " · " (alert.summary_in(lang())) }
            p.muted { (t("q-acknowledge.meaning")) }
            form.ack method="post" action={ "/alerts/" (path_segment(&print)) "/ack" } {
                input type="hidden" name="csrf" value=(csrf);
                label { (t("q-col-comment")) input type="text" name="comment"; }
                button type="submit" { (t("q-acknowledge")) }
            }
        }
    })
}

/// `POST /alerts/{fingerprint}/ack`
pub(crate) async fn ack_post(
    State(board): State<Arc<Board>>,
    Path(print): Path<String>,
    Change { who, form: f }: Change<ConfirmForm>,
) -> Response {
    match board.quieting().acknowledge(&print, &who, &f.comment) {
        Ok((cluster, _)) => {
            crate::web::events::QuietChanged { user: &who, action: "alert acknowledged", id: &print }.emit();
            Redirect::to(&format!("/clusters/{}", path_segment(&cluster))).into_response()
        }
        Err(e) => {
            let body = html! { h1 { (t("q-not-acknowledged")) } p { (e.to_string()) } };
            respond(
                StatusCode::CONFLICT,
                HTML,
                page_of(&board, &format!("{} · DumbMonit", t("q-not-acknowledged")), body),
            )
        }
    }
}

/// What the maintenance window's form sends: a cluster (or `{cluster=~"…"}`), then a start and
/// an end, or a schedule, its time zone and a duration.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct WindowForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    cluster: String,
    #[serde(default)]
    start: String,
    #[serde(default)]
    end: String,
    #[serde(default)]
    schedule: String,
    #[serde(default)]
    time_zone: String,
    #[serde(default)]
    duration: String,
    #[serde(default)]
    comment: String,
}

impl Posted for WindowForm {
    fn csrf(&self) -> &str {
        &self.csrf
    }
}

impl WindowForm {
    fn postable(&self) -> crate::silence::postable::PostableWindow {
        let given = |v: &str| Some(v.trim().to_string()).filter(|v| !v.is_empty());
        crate::silence::postable::PostableWindow {
            cluster: self.cluster.trim().to_string(),
            starts_at: given(&self.start),
            ends_at: given(&self.end),
            schedule: given(&self.schedule),
            time_zone: given(&self.time_zone),
            duration: given(&self.duration),
            comment: self.comment.clone(),
            ..Default::default()
        }
    }
}

fn window_form(csrf: &str, f: &WindowForm, problem: Option<&str>) -> Markup {
    html! {
        @if let Some(p) = problem {
            div.error { strong { (t("not-saved")) } " " (p) }
        }
        form.silence method="post" action="/maintenance" {
            input type="hidden" name="csrf" value=(csrf);
            label { (t("q-window-cluster")) input type="text" name="cluster" value=(f.cluster); }
            p.muted { (t("q-window-kinds")) }
            label { (t("q-window-start")) input type="text" name="start" value=(f.start); }
            label { (t("q-window-end")) input type="text" name="end" value=(f.end); }
            label { (t("q-window-schedule")) input type="text" name="schedule" value=(f.schedule); }
            label { (t("q-window-time-zone")) input type="text" name="time_zone" value=(f.time_zone); }
            label { (t("q-window-duration")) input type="text" name="duration" value=(f.duration); }
            label { (t("q-col-comment")) input type="text" name="comment" value=(f.comment); }
            button type="submit" { (t("form-save")) }
        }
    }
}

/// `GET /maintenance/new`
pub(crate) async fn new_window(
    State(board): State<Arc<Board>>,
    https: axum::Extension<Https>,
    axum::Extension(role): axum::Extension<Checked>,
    headers: HeaderMap,
) -> Response {
    form_page(&board, &headers, &role, https.0, &format!("{} · DumbMonit", t("q-maintenance")), |csrf| {
        html! { h1 { (t("q-new-window")) } (window_form(csrf, &WindowForm::default(), None)) }
    })
}

/// `POST /maintenance`
pub(crate) async fn create_window(
    State(board): State<Arc<Board>>,
    Change { who, form: f }: Change<WindowForm>,
) -> Response {
    match board.quieting().post_window(&f.postable(), &who) {
        Ok(id) => {
            crate::web::events::QuietChanged { user: &who, action: "maintenance window made or changed", id: &id }
                .emit();
            Redirect::to("/silences").into_response()
        }
        Err(e) => {
            let body = html! { h1 { (t("q-new-window")) } (window_form(&f.csrf, &f, Some(&e.to_string()))) };
            respond(StatusCode::OK, HTML, page_of(&board, &format!("{} · DumbMonit", t("q-maintenance")), body))
        }
    }
}

/// `POST /maintenance/{id}/end`
pub(crate) async fn end_window(
    State(board): State<Arc<Board>>,
    Path(id): Path<String>,
    Change { who, form: _ }: Change<ConfirmForm>,
) -> Response {
    match board.quieting().end_window(&id, &who) {
        Ok(()) => {
            crate::web::events::QuietChanged { user: &who, action: "maintenance window ended", id: &id }.emit();
            Redirect::to("/silences").into_response()
        }
        Err(e) => {
            let refused = crate::web::quiet::Refused::from(e);
            let body = html! { h1 { (t("q-not-ended")) } p { (refused.why) } };
            respond(refused.status, HTML, page_of(&board, &format!("{} · DumbMonit", t("q-not-ended")), body))
        }
    }
}
