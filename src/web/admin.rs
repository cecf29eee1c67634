//! Clusters added, tested, edited and removed on the pages, as the setup guide describes; the
//! audit list of those changes.
//!
//! Only admins (`[auth.admin]`) change anything; without admins the pages are a read-only
//! monitor and say how to enable changes. Every change is a POST that carries a CSRF token
//! signed with the secret key and bound to the session cookie (`SameSite=Strict`, `HttpOnly`),
//! and whose `Origin` (or `Sec-Fetch-Site`) is this server (tower-http's CSRF layer). No
//! JavaScript: the pages keep their Content-Security-Policy.
//!
//! Tokens are write-only: sealed with the secret key before they are stored, never put back in
//! a page, an answer, a log line or /metrics. An agent's token is shown once, in the answer that
//! made it.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use bytes::Bytes;
use maud::{Markup, html};
use serde::Deserialize;

use super::html::{clock, path_segment, still_page};
use super::{Checked, HTML, respond};
use crate::auth::Role;
use crate::board::Board;
use crate::clock::log;
use crate::config::{PageSettings, parse_duration};
use crate::error::{ReadErrorKind, Redactor};
use crate::secret::random_token;
use crate::state::AuditEntry;

pub const SESSION_COOKIE: &str = "dumbmonit_session";

/// Whether the server is reached over HTTPS (for the session cookie's `Secure` and the agent's
/// command).
#[derive(Clone, Copy)]
pub struct Https(pub bool);

/// The session a form belongs to: the cookie's when this server issued it (signed, not
/// expired, for the admin credentials of now, since this process started), or a new one set
/// with the answer.
struct Session {
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

fn session(board: &Board, headers: &HeaderMap, https: Https, now: i64) -> Session {
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
fn csrf_token(board: &Board, session: &Session) -> Option<String> {
    let fingerprint = board.protection().admin_fingerprint();
    board.secret_key().map(|k| k.sign(format!("csrf {} {fingerprint}", session.value).as_bytes()))
}

/// A page answer, with the session cookie when it is new.
fn with_session(mut r: Response, s: &Session, https: Https) -> Response {
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

fn now() -> i64 {
    jiff::Timestamp::now().as_second()
}

fn page_of(board: &Board, title: &str, body: Markup) -> String {
    still_page(title, board.banner(), body)
}

fn refused(board: &Board, status: StatusCode, message: &str) -> Response {
    respond(status, HTML, page_of(board, "Not allowed · DumbMonit", html! { h1 { "Not allowed" } p { (message) } }))
}

/// Why a change is refused: the status and the page's sentence.
struct Refusal(StatusCode, &'static str);

impl Refusal {
    fn answer(self, board: &Board) -> Response {
        let mut r = refused(board, self.0, self.1);
        if self.0 == StatusCode::UNAUTHORIZED
            && let Ok(v) = HeaderValue::from_str(board.protection().challenge())
        {
            r.headers_mut().insert(header::WWW_AUTHENTICATE, v);
        }
        r
    }
}

/// Who asks for a change, or why this request may not change anything.
fn may_change(board: &Board, headers: &HeaderMap, role: &Checked) -> Result<String, Refusal> {
    if !board.protection().has_admins() {
        return Err(Refusal(
            StatusCode::FORBIDDEN,
            "This monitor is read-only: clusters are added in its configuration file. To add them here, \
             give admins in the file's [auth.admin] section (bearer_token_file, or username with \
             password_hash), then reload.",
        ));
    }
    if board.secret_key().is_none() {
        return Err(Refusal(
            StatusCode::FORBIDDEN,
            "The secret key (secret_key_file) could not be read or made, so tokens cannot be stored; \
             the server's log says why.",
        ));
    }
    match &role.0 {
        Some(Role::Admin(who)) => Ok(who.clone()),
        // Without [auth] a browser sends no credentials until asked: ask, so an admin can log in.
        _ if !headers.contains_key(header::AUTHORIZATION) => {
            Err(Refusal(StatusCode::UNAUTHORIZED, "Adding, editing and removing clusters needs the admin role."))
        }
        _ => Err(Refusal(StatusCode::FORBIDDEN, "Adding, editing and removing clusters needs the admin role.")),
    }
}

/// The CSRF token of a POST, checked against its session cookie.
fn check_csrf(board: &Board, headers: &HeaderMap, https: Https, given: &str) -> Result<(), Refusal> {
    let s = session(board, headers, https, now());
    let expected = csrf_token(board, &s).unwrap_or_default();
    if s.new || expected.is_empty() || !crate::auth::constant_time_eq(expected.as_bytes(), given.as_bytes()) {
        log("web: a change was refused: its CSRF token is missing or not this session's");
        return Err(Refusal(
            StatusCode::FORBIDDEN,
            "This form is not from this session (or it expired). Open the page again and send it from there.",
        ));
    }
    Ok(())
}

/// A form that carries the CSRF token of its session.
trait Posted: serde::de::DeserializeOwned + Default {
    fn csrf(&self) -> &str;
}

/// A change asked for by a POST: who asks and what the form says, once the role and the CSRF
/// token are checked. A body that is not a form has no fields (and so no CSRF token: it is
/// refused like any POST without one).
fn change<T: Posted>(
    board: &Board,
    headers: &HeaderMap,
    https: Https,
    role: &Checked,
    body: &[u8],
) -> Result<(String, T), Refusal> {
    let who = may_change(board, headers, role)?;
    let f: T = serde_urlencoded::from_bytes(body).unwrap_or_default();
    check_csrf(board, headers, https, f.csrf())?;
    Ok((who, f))
}

/// The durations the forms take: (at least, at most, as said on the form).
const TIMEOUT_RANGE: (f64, f64, &str) = (0.1, 600.0, "100ms to 10m");
const INTERVAL_RANGE: (f64, f64, &str) = (1.0, 86400.0, "1s to 24h");

/// What the cluster form sends. Checkboxes are absent when not ticked.
#[derive(Debug, Default, Deserialize)]
pub struct ClusterForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    action: String,
    #[serde(default)]
    name: String,
    #[serde(default)]
    address: String,
    #[serde(default)]
    port: String,
    #[serde(default)]
    token: String,
    #[serde(default)]
    ca: String,
    insecure: Option<String>,
    #[serde(default)]
    timeout: String,
    #[serde(default)]
    ignored: String,
    #[serde(default)]
    interval: String,
    /// Editing a cluster read through its agent: no connection settings, no test.
    #[serde(skip)]
    agent: bool,
}

impl Posted for ClusterForm {
    fn csrf(&self) -> &str {
        &self.csrf
    }
}

impl ClusterForm {
    fn from_settings(name: &str, s: &PageSettings) -> ClusterForm {
        ClusterForm {
            name: name.to_string(),
            address: s.address.clone().unwrap_or_default(),
            port: s.port.to_string(),
            ca: s.ca.clone().unwrap_or_default(),
            insecure: s.insecure_skip_tls_verify.then(|| "on".to_string()),
            timeout: format!("{}s", s.timeout),
            ignored: s.ignored_namespaces.join(", "),
            interval: format!("{}s", s.interval),
            agent: s.address.is_none(),
            ..Default::default()
        }
    }

    /// The settings entered, or what is wrong with them (naming the field).
    fn settings(&self, agent: bool) -> Result<PageSettings, String> {
        let seconds = |field: &str, text: &str, default: f64, (min, max, range): (f64, f64, &str)| {
            if text.trim().is_empty() {
                return Ok(default);
            }
            match parse_duration(text) {
                Ok(s) if (min..=max).contains(&s) => Ok(s),
                _ => Err(format!("{field}: a duration from {range} is expected, such as 10s, 1m or 30")),
            }
        };
        let port = match self.port.trim() {
            "" => 6443,
            p => p.parse::<u16>().ok().filter(|p| *p > 0).ok_or("Port: a number from 1 to 65535 is expected")?,
        };
        let address = self.address.trim();
        if !agent && address.is_empty() {
            return Err("Address: the API server's address is needed, for example https://k3s.lan:6443".into());
        }
        // Saved only if a cycle could read it: the same parsing as `check`'s.
        if !agent && let Err(e) = crate::kube::address::parse_address(address, port) {
            return Err(format!("Address: {e}"));
        }
        let ca = self.ca.trim();
        Ok(PageSettings {
            address: (!agent).then(|| address.to_string()),
            port,
            ca: (!agent && !ca.is_empty()).then(|| ca.to_string()),
            insecure_skip_tls_verify: !agent && self.insecure.is_some(),
            timeout: seconds("Timeout per request", &self.timeout, 10.0, TIMEOUT_RANGE)?,
            interval: seconds("Interval", &self.interval, 60.0, INTERVAL_RANGE)?,
            ignored_namespaces: self
                .ignored
                .split(|c: char| c == ',' || c.is_whitespace())
                .filter(|n| !n.is_empty())
                .map(str::to_string)
                .collect(),
        })
    }
}

/// A word for a POSIX shell, whatever it holds.
fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// The rule for the names of clusters added on the pages, as the form says it.
const NAME_RULE: &str = "up to 100 letters (a-z, A-Z), digits, '-', '_' and '.', not starting with '-', \
                         not only dots, and not \"new\"";

/// A name the pages may give a cluster: what a Kubernetes-minded user expects (ASCII letters,
/// digits, `-`, `_`, `.`), so that no name looks like another (invisible or direction-changing
/// characters), breaks out of a YAML comment, resolves to another path (`..`) or reads as an
/// option of the agent's command (`--help`).
fn check_name(name: &str) -> Result<(), String> {
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    if name.is_empty()
        || name.len() > 100
        || !name.chars().all(allowed)
        || name.starts_with('-')
        || name.chars().all(|c| c == '.')
        || name == "new"
    {
        return Err(format!("Name: {NAME_RULE}"));
    }
    Ok(())
}

/// What a test cycle found.
enum Tested {
    Healthy { summary: String, counters: String },
    Failed { message: String, help: Option<Markup> },
}

/// The guide's help beside each error people meet.
fn help(kind: &ReadErrorKind) -> Option<Markup> {
    Some(match kind {
        ReadErrorKind::Unauthorized => html! {
            p.help {
                "A token made by " code { "kubectl create token" }
                " expires after an hour: use the token of the Secret that " code { "dumbmonit rbac" } " creates: "
                code { "kubectl -n kube-system get secret dumbmonit-token -o jsonpath='{.data.token}' | base64 -d" } "."
            }
        },
        ReadErrorKind::Forbidden { .. } => html! {
            p.help {
                "The service account may not read what the message names (403). Apply the read-only role again: "
                code { "dumbmonit rbac | kubectl apply -f -" } " (and " code { "dumbmonit rbac --optional" }
                " for the optional reads)."
            }
        },
        ReadErrorKind::UnknownAuthority => html! {
            p.help {
                "The cluster CA is missing, or it is not the one that signed the API server's certificate. Paste it as "
                "Cluster CA certificate: the " code { "ca.crt" } " of the token's Secret ("
                code { "kubectl -n kube-system get secret dumbmonit-token -o jsonpath='{.data.ca\\.crt}'" }
                ", base64 is fine), or on k3s " code { "/var/lib/rancher/k3s/server/tls/server-ca.crt" } "."
            }
        },
        ReadErrorKind::WrongName { host, names } => html! {
            p.help {
                "The address " code { (host) } " is not among the names in the API server's certificate, which lists "
                @for (i, n) in names.iter().enumerate() { @if i > 0 { ", " } code { (n) } }
                ". Use one of those, or add the address to the certificate: on k3s, start the server with "
                code { "--tls-san " (host) } "."
            }
        },
        ReadErrorKind::CertificateExpired => html! {
            p.help { "The API server's certificate has expired or is not yet valid: check the clocks, and renew the certificate (k3s renews those that expire within 90 days when it restarts)." }
        },
        ReadErrorKind::Refused | ReadErrorKind::ConnectTimeout | ReadErrorKind::Dns { .. } => html! {
            p.help { "Check the address and the port (6443 by default), and that this server can reach the API server." }
        },
        _ => return None,
    })
}

/// One cycle with what was entered; nothing is kept.
async fn test_cycle(name: &str, settings: &PageSettings, token: String) -> Tested {
    let mut redactor = Redactor::default();
    redactor.add(&token);
    let cluster = settings.to_cluster(name, token);
    let options = cluster.connect_options();
    let failed = |message: String, help: Option<Markup>| Tested::Failed { message: redactor.clean(&message), help };
    let conn = match crate::kube::connect(&options).await {
        Ok(c) => c,
        Err(e) => {
            return failed(
                e.to_string(),
                Some(
                    html! { p.help { "The cluster CA must be PEM (-----BEGIN CERTIFICATE-----), or the base64 of it." } },
                ),
            );
        }
    };
    let fetcher = match crate::kube::Fetcher::new(&conn, options.timeout) {
        Ok(f) => f,
        Err(e) => return failed(e.to_string(), None),
    };
    let cycle_options =
        crate::collect::CycleOptions { ignored_namespaces: settings.ignored_namespaces.clone(), record: false };
    let cycle = crate::collect::run(&fetcher, &cycle_options, jiff::Timestamp::now()).await;
    match cycle.result {
        Ok(snapshot) => {
            let h = crate::health::assess(snapshot);
            Tested::Healthy { summary: h.summary(), counters: h.counters() }
        }
        Err(e) => failed(e.to_string(), help(&e.kind)),
    }
}

/// The form: a cluster read directly (add or edit), and — when adding — one read through an
/// agent.
fn form_page(board: &Board, csrf: &str, f: &ClusterForm, editing: Option<&str>, outcome: Option<Markup>) -> String {
    let action = match editing {
        Some(name) => format!("/clusters/{}/edit", path_segment(name)),
        None => "/clusters/new".to_string(),
    };
    let title = match editing {
        Some(name) => format!("Edit {name}"),
        None => "Add a cluster".to_string(),
    };
    let body = html! {
        h1 { (title) }
        @if let Some(o) = outcome { (o) }
        form.cluster method="post" action=(action) {
            input type="hidden" name="csrf" value=(csrf);
            @if editing.is_some() {
                input type="hidden" name="name" value=(f.name);
            } @else {
                label { "Name" input type="text" name="name" value=(f.name) required placeholder="k3s-lab"; }
                p.muted { "Names: " (NAME_RULE) "." }
            }
            @if f.agent {
                p.muted { "Read through its agent: the agent holds the connection settings, and keeps its token." }
            } @else {
                label { "API server address" input type="text" name="address" value=(f.address) placeholder="https://k3s.lan:6443"; }
                label { "Port" input type="number" name="port" value=(f.port) placeholder="6443" min="1" max="65535"; }
                label {
                    "Service-account token"
                    input type="password" name="token" value="" autocomplete="off"
                        placeholder=(if editing.is_some() { "leave empty to keep the current token" } else { "" });
                }
                @if editing.is_some() {
                    p.muted { "The stored token is kept only while the address, port, CA and certificate choice stay as they are; when one changes, enter the token again." }
                }
                label { "Cluster CA certificate (base64 or PEM)" textarea name="ca" rows="5" { (f.ca) } }
                label.check { input type="checkbox" name="insecure" checked[f.insecure.is_some()]; " Accept an unverifiable certificate" }
            }
            label { "Timeout per request (100ms to 10m)" input type="text" name="timeout" value=(f.timeout) placeholder="10s"; }
            label { "Ignored namespaces" input type="text" name="ignored" value=(f.ignored) placeholder="ci, sandbox"; }
            label { "Interval (1s to 24h)" input type="text" name="interval" value=(f.interval) placeholder="60s"; }
            p.buttons {
                @if !f.agent {
                    button type="submit" name="action" value="test" { "Test" }
                    " "
                }
                button type="submit" name="action" value="save" { "Save" }
            }
        }
        @if let Some(name) = editing {
            form.remove method="post" action={ "/clusters/" (path_segment(name)) "/remove" } {
                input type="hidden" name="csrf" value=(csrf);
                button type="submit" { "Remove " (name) }
            }
        } @else {
            h2 { "Or read it through an agent" }
            p { "For a cluster this server cannot reach: an agent in the cluster reads it and pushes each cycle here. This makes the agent's token and shows, once, the command to run in the cluster." }
            form.cluster method="post" action="/clusters/new" {
                input type="hidden" name="csrf" value=(csrf);
                label { "Name" input type="text" name="name" value="" placeholder="edge-17"; }
                p.muted { "Names: " (NAME_RULE) "." }
                label { "Interval" input type="text" name="interval" value="" placeholder="60s"; }
                label { "Ignored namespaces" input type="text" name="ignored" value="" placeholder="ci, sandbox"; }
                p.buttons { button type="submit" name="action" value="agent" { "Create the agent's token" } }
            }
        }
    };
    page_of(board, &format!("{title} · DumbMonit"), body)
}

fn outcome_of(t: &Tested) -> Markup {
    match t {
        Tested::Healthy { summary, counters } => html! {
            div.tested {
                p { strong { "The cluster was read." } " " (summary) }
                p.counters { (counters) }
                p.muted { "Nothing is saved until Save." }
            }
        },
        Tested::Failed { message, help } => html! {
            div.error { strong { "Test failed." } " " (message) }
            @if let Some(h) = help { (h) }
        },
    }
}

fn problem(message: &str) -> Markup {
    html! { div.error { strong { "Not saved." } " " (message) } }
}

/// `GET /clusters/new`
pub async fn new_form(
    State(board): State<Arc<Board>>,
    https: axum::Extension<Https>,
    axum::Extension(role): axum::Extension<Checked>,
    headers: HeaderMap,
) -> Response {
    if let Err(r) = may_change(&board, &headers, &role) {
        return r.answer(&board);
    }
    let s = session(&board, &headers, https.0, now());
    let csrf = csrf_token(&board, &s).unwrap_or_default();
    let f = ClusterForm { port: "6443".into(), timeout: "10s".into(), interval: "60s".into(), ..Default::default() };
    with_session(respond(StatusCode::OK, HTML, form_page(&board, &csrf, &f, None, None)), &s, https.0)
}

/// `GET /clusters/{name}/edit`
pub async fn edit_form(
    State(board): State<Arc<Board>>,
    https: axum::Extension<Https>,
    axum::Extension(role): axum::Extension<Checked>,
    Path(name): Path<String>,
    headers: HeaderMap,
) -> Response {
    if let Err(r) = may_change(&board, &headers, &role) {
        return r.answer(&board);
    }
    let Some(settings) = board.stored_cluster(&name).map(|c| c.settings) else {
        return not_editable(&board, &name);
    };
    let s = session(&board, &headers, https.0, now());
    let csrf = csrf_token(&board, &s).unwrap_or_default();
    let f = ClusterForm::from_settings(&name, &settings);
    with_session(respond(StatusCode::OK, HTML, form_page(&board, &csrf, &f, Some(&name), None)), &s, https.0)
}

fn not_editable(board: &Board, name: &str) -> Response {
    let message = if board.cluster(name).is_some() {
        format!("Cluster {name} comes from the configuration file: it is changed there, not on the pages.")
    } else {
        format!("No cluster named {name} was added on the pages.")
    };
    refused(board, StatusCode::NOT_FOUND, &message)
}

/// `POST /clusters/new`: test, save, or make an agent's token.
pub async fn new_post(
    State(board): State<Arc<Board>>,
    https: axum::Extension<Https>,
    axum::Extension(role): axum::Extension<Checked>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let (who, f) = match change::<ClusterForm>(&board, &headers, https.0, &role, &body) {
        Ok(c) => c,
        Err(r) => return r.answer(&board),
    };
    let name = f.name.trim().to_string();
    let agent = f.action == "agent";
    let taken = board.cluster(&name).is_some() || board.stored_cluster(&name).is_some();
    let settings = check_name(&name)
        .and_then(|_| if taken { Err(format!("Name: a cluster named {name} is already watched")) } else { Ok(()) })
        .and_then(|_| f.settings(agent));
    let answer = |outcome: Markup| respond(StatusCode::OK, HTML, form_page(&board, &f.csrf, &f, None, Some(outcome)));
    let settings = match settings {
        Ok(s) => s,
        Err(e) => return answer(problem(&e)),
    };
    match f.action.as_str() {
        "test" => {
            if f.token.trim().is_empty() {
                return answer(problem("Service-account token: paste the token to test with"));
            }
            let tested = test_cycle(&name, &settings, f.token.trim().to_string()).await;
            answer(outcome_of(&tested))
        }
        "save" => {
            if f.token.trim().is_empty() {
                return answer(problem("Service-account token: paste the token the cluster is read with"));
            }
            match save(&board, &who, &name, &settings, f.token.trim(), "added") {
                Ok(()) => Redirect::to(&format!("/clusters/{}", path_segment(&name))).into_response(),
                Err(e) => answer(problem(&e)),
            }
        }
        "agent" => {
            let token = random_token(32);
            if let Err(e) = save(&board, &who, &name, &settings, &token, "added (read through an agent)") {
                return answer(problem(&e));
            }
            let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("DUMBMONIT-SERVER");
            let server = format!("{}://{host}", if https.0.0 { "https" } else { "http" });
            let file = format!("{name}.agent-token");
            let command = format!(
                "umask 077; printf '%s' {} > {file} && dumbmonit manifests agent --server {} --cluster={} --agent-token-file {file} | kubectl apply -f -",
                shell_quote(&token),
                shell_quote(&server),
                shell_quote(&name),
                file = shell_quote(&file),
            );
            let body = html! {
                h1 { "Agent for " (name) }
                p { "Run this where kubectl reaches the cluster. The token is in it and is shown only now: it is stored sealed, and no page shows it again." }
                pre.command { code { (command) } }
                p { a href={ "/clusters/" (path_segment(&name)) } { "The cluster's page" } " says when the agent's first report arrives." }
            };
            respond(StatusCode::OK, HTML, page_of(&board, &format!("Agent for {name} · DumbMonit"), body))
        }
        _ => answer(problem("Choose Test or Save")),
    }
}

/// `POST /clusters/{name}/edit`: test or save; an empty token keeps the stored one.
pub async fn edit_post(
    State(board): State<Arc<Board>>,
    https: axum::Extension<Https>,
    axum::Extension(role): axum::Extension<Checked>,
    Path(name): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let (who, mut f) = match change::<ClusterForm>(&board, &headers, https.0, &role, &body) {
        Ok(c) => c,
        Err(r) => return r.answer(&board),
    };
    let Some(stored) = board.stored_cluster(&name) else {
        return not_editable(&board, &name);
    };
    let old = stored.settings;
    f.name = name.clone();
    let agent = old.address.is_none();
    f.agent = agent;
    let answer = |f: &ClusterForm, outcome: Markup| {
        respond(StatusCode::OK, HTML, form_page(&board, &f.csrf, f, Some(&name), Some(outcome)))
    };
    let settings = match f.settings(agent) {
        Ok(s) => s,
        Err(e) => return answer(&f, problem(&e)),
    };
    // The stored token goes only where it was saved for: a changed address, port, CA or
    // certificate choice needs the token entered again, and nothing is sent before.
    let moved = settings.address != old.address
        || settings.port != old.port
        || settings.ca != old.ca
        || settings.insecure_skip_tls_verify != old.insecure_skip_tls_verify;
    if moved && f.token.trim().is_empty() {
        return answer(
            &f,
            problem(
                "Service-account token: the address, port, CA or certificate choice changed, so the stored token \
                 is not sent: enter the token again",
            ),
        );
    }
    let token = if f.token.trim().is_empty() {
        match stored.token {
            Ok(t) => t,
            Err(_) => return answer(&f, problem("The stored token cannot be unsealed: paste the token again")),
        }
    } else {
        f.token.trim().to_string()
    };
    match f.action.as_str() {
        "test" if !agent => {
            let tested = test_cycle(&name, &settings, token).await;
            answer(&f, outcome_of(&tested))
        }
        "save" => match save(&board, &who, &name, &settings, &token, "changed") {
            Ok(()) => Redirect::to(&format!("/clusters/{}", path_segment(&name))).into_response(),
            Err(e) => answer(&f, problem(&e)),
        },
        _ => answer(&f, problem("Choose Test or Save")),
    }
}

#[derive(Debug, Default, Deserialize)]
pub struct RemoveForm {
    #[serde(default)]
    csrf: String,
}

impl Posted for RemoveForm {
    fn csrf(&self) -> &str {
        &self.csrf
    }
}

/// `POST /clusters/{name}/remove`
pub async fn remove_post(
    State(board): State<Arc<Board>>,
    https: axum::Extension<Https>,
    axum::Extension(role): axum::Extension<Checked>,
    Path(name): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let (who, _) = match change::<RemoveForm>(&board, &headers, https.0, &role, &body) {
        Ok(c) => c,
        Err(r) => return r.answer(&board),
    };
    let entry = AuditEntry {
        time: jiff::Timestamp::now().as_second(),
        who: who.clone(),
        action: "removed".into(),
        cluster: name.clone(),
    };
    let removed = board.remove_page_cluster(&name, &entry);
    match removed {
        Ok(true) => {
            log(&format!("audit: {who} removed cluster {name}"));
            Redirect::to("/").into_response()
        }
        Ok(false) => not_editable(&board, &name),
        Err(e) => refused(&board, StatusCode::INTERNAL_SERVER_ERROR, &format!("Not removed: {e}")),
    }
}

/// Seals the token, stores the cluster with its audit entry, logs the change and tells serve.
fn save(
    board: &Board,
    who: &str,
    name: &str,
    settings: &PageSettings,
    token: &str,
    action: &str,
) -> Result<(), String> {
    let entry = AuditEntry {
        time: jiff::Timestamp::now().as_second(),
        who: who.to_string(),
        action: action.to_string(),
        cluster: name.to_string(),
    };
    board.save_page_cluster(name, settings, token, &entry)?;
    log(&format!("audit: {who} {action} cluster {name}"));
    Ok(())
}

/// `GET /audit`: who changed what and when.
pub async fn audit(State(board): State<Arc<Board>>) -> Response {
    let entries = board.reader().audit(500).unwrap_or_default();
    let body = html! {
        h1 { "Changes made on the pages" }
        @if entries.is_empty() {
            p { "No change yet." }
        } @else {
            div.scroll {
                table {
                    thead { tr { th { "When" } th { "Who" } th { "What" } th { "Cluster" } } }
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
    respond(StatusCode::OK, HTML, page_of(&board, "Changes · DumbMonit", body))
}
