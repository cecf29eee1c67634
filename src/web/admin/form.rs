//! The cluster form: what it sends, the settings it gives once checked (each problem naming its
//! field), the names the pages may give a cluster, and the form's page.

use maud::{Markup, html};
use serde::Deserialize;

use super::guard::Posted;
use super::page_of;
use super::refusal::FormError;
use crate::board::Board;
use crate::config::{PageSettings, parse_duration};
use crate::kube::{ConnectOptions, Seconds};
use crate::web::html::{path_segment, t, tr};

/// The durations the forms take: (at least, at most, as said on the form).
const TIMEOUT_RANGE: (f64, f64, &str) = (0.1, 600.0, "100ms to 10m");
const INTERVAL_RANGE: (f64, f64, &str) = (1.0, 86400.0, "1s to 24h");

/// What the cluster form sends. Checkboxes are absent when not ticked.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct ClusterForm {
    #[serde(default)]
    pub csrf: String,
    #[serde(default)]
    pub action: String,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    address: String,
    #[serde(default)]
    port: String,
    #[serde(default)]
    pub token: String,
    #[serde(default)]
    ca: String,
    insecure: Option<String>,
    /// Follow the cluster by list-then-watch (read directly only).
    watch: Option<String>,
    #[serde(default)]
    timeout: String,
    #[serde(default)]
    ignored: String,
    /// Namespaced access: the namespaces to read (empty: the whole cluster).
    #[serde(default)]
    namespaces: String,
    #[serde(default)]
    interval: String,
    /// Editing a cluster read through its agent: no connection settings, no test.
    #[serde(skip)]
    pub agent: bool,
}

impl Posted for ClusterForm {
    fn csrf(&self) -> &str {
        &self.csrf
    }
}

impl ClusterForm {
    /// The form of a new cluster: the defaults shown.
    pub fn blank() -> ClusterForm {
        ClusterForm { port: "6443".into(), timeout: "10s".into(), interval: "60s".into(), ..Default::default() }
    }

    pub fn from_settings(name: &str, s: &PageSettings) -> ClusterForm {
        let c = &s.connect;
        ClusterForm {
            name: name.to_string(),
            address: c.address.clone().unwrap_or_default(),
            port: c.port.to_string(),
            ca: c.ca.clone().unwrap_or_default(),
            insecure: c.insecure_skip_tls_verify.then(|| "on".to_string()),
            watch: s.watch.then(|| "on".to_string()),
            timeout: format!("{}s", c.timeout),
            ignored: c.ignored_namespaces.join(", "),
            namespaces: c.namespaces.join(", "),
            interval: format!("{}s", s.interval),
            agent: c.address.is_none(),
            ..Default::default()
        }
    }

    /// The settings entered, or what is wrong with them (naming the field).
    pub(super) fn settings(&self, agent: bool) -> Result<PageSettings, FormError> {
        let seconds = |field: &'static str, text: &str, default: f64, (min, max, range): (f64, f64, &'static str)| {
            if text.trim().is_empty() {
                return Ok(Seconds(default));
            }
            match parse_duration(text) {
                Ok(s) if (min..=max).contains(&s) => Ok(Seconds(s)),
                _ => Err(FormError::Duration { field, range }),
            }
        };
        let port = match self.port.trim() {
            "" => 6443,
            p => p.parse::<u16>().ok().filter(|p| *p > 0).ok_or(FormError::Port)?,
        };
        let address = self.address.trim();
        if !agent && address.is_empty() {
            return Err(FormError::NoAddress);
        }
        // Saved only if a cycle could read it: the same parsing as `check`'s.
        if !agent && let Err(e) = crate::kube::address::parse_address(address, port) {
            return Err(FormError::Address(e));
        }
        let ca = self.ca.trim();
        let names = |text: &str| -> Vec<String> {
            text.split(|c: char| c == ',' || c.is_whitespace()).filter(|n| !n.is_empty()).map(str::to_string).collect()
        };
        let namespaces = names(&self.namespaces);
        if namespaces.len() > crate::config::MAX_NAMESPACES {
            return Err(FormError::TooManyNamespaces { count: namespaces.len() });
        }
        if let Some(value) = namespaces.iter().find(|n| crate::kube::check_name("", n).is_err()) {
            return Err(FormError::Namespace { value: value.clone() });
        }
        let watch = !agent && self.watch.is_some();
        if watch && !namespaces.is_empty() {
            return Err(FormError::NamespacesWithWatch);
        }
        Ok(PageSettings {
            connect: ConnectOptions {
                address: (!agent).then(|| address.to_string()),
                port,
                ca: (!agent && !ca.is_empty()).then(|| ca.to_string()),
                insecure_skip_tls_verify: !agent && self.insecure.is_some(),
                timeout: seconds("form-timeout", &self.timeout, 10.0, TIMEOUT_RANGE)?,
                ignored_namespaces: names(&self.ignored),
                namespaces,
                ..ConnectOptions::default()
            },
            interval: seconds("form-interval", &self.interval, 60.0, INTERVAL_RANGE)?,
            watch,
        })
    }
}

/// What the remove button sends.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct RemoveForm {
    #[serde(default)]
    csrf: String,
}

impl Posted for RemoveForm {
    fn csrf(&self) -> &str {
        &self.csrf
    }
}

/// A name the pages may give a cluster: what a Kubernetes-minded user expects (ASCII letters,
/// digits, `-`, `_`, `.`), so that no name looks like another (invisible or direction-changing
/// characters), breaks out of a YAML comment, resolves to another path (`..`) or reads as an
/// option of the agent's command (`--help`).
pub(super) fn check_name(name: &str) -> Result<(), FormError> {
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    if name.is_empty()
        || name.len() > 100
        || !name.chars().all(allowed)
        || name.starts_with('-')
        || name.chars().all(|c| c == '.')
        || name == "new"
    {
        return Err(FormError::Name);
    }
    Ok(())
}

/// The form: a cluster read directly (add or edit), and — when adding — one read through an
/// agent.
pub(super) fn form_page(
    board: &Board,
    csrf: &str,
    f: &ClusterForm,
    editing: Option<&str>,
    outcome: Option<Markup>,
) -> String {
    let action = match editing {
        Some(name) => format!("/clusters/{}/edit", path_segment(name)),
        None => "/clusters/new".to_string(),
    };
    let title = match editing {
        Some(name) => tr("edit-cluster", &[("name", name.into())]),
        None => t("add-cluster"),
    };
    let body = html! {
        h1 { (title) }
        @if let Some(o) = outcome { (o) }
        form.cluster method="post" action=(action) {
            input type="hidden" name="csrf" value=(csrf);
            @if editing.is_some() {
                input type="hidden" name="name" value=(f.name);
            } @else {
                label { (t("form-name")) input type="text" name="name" value=(f.name) required placeholder="k3s-lab"; }
                p.muted { (t("form-names")) (t("colon")) (t("name-rule")) "." }
            }
            @if f.agent {
                p.muted { (t("form-through-agent")) }
            } @else {
                label { (t("form-address")) input type="text" name="address" value=(f.address) placeholder="https://k3s.lan:6443"; }
                label { "Port" input type="number" name="port" value=(f.port) placeholder="6443" min="1" max="65535"; }
                label {
                    (t("form-token"))
                    input type="password" name="token" value="" autocomplete="off"
                        placeholder=(if editing.is_some() { t("form-token.keep") } else { String::new() });
                }
                @if editing.is_some() {
                    p.muted { (t("form-token.kept-while")) }
                }
                label { (t("form-ca")) " " (t("form-ca.formats")) textarea name="ca" rows="5" { (f.ca) } }
                label.check { input type="checkbox" name="insecure" checked[f.insecure.is_some()]; " " (t("form-insecure")) }
                label.check { input type="checkbox" name="watch" checked[f.watch.is_some()]; " " (t("form-watch")) }
            }
            label { (t("form-timeout")) " " (t("form-timeout.range")) input type="text" name="timeout" value=(f.timeout) placeholder="10s"; }
            label { (t("form-ignored")) input type="text" name="ignored" value=(f.ignored) placeholder="ci, sandbox"; }
            label { (t("form-namespaces")) input type="text" name="namespaces" value=(f.namespaces) placeholder="team-a, team-b"; }
            label { (t("form-interval")) " " (t("form-interval.range")) input type="text" name="interval" value=(f.interval) placeholder="60s"; }
            p.buttons {
                @if !f.agent {
                    button type="submit" name="action" value="test" { (t("form-test")) }
                    " "
                }
                button type="submit" name="action" value="save" { (t("form-save")) }
            }
        }
        @if let Some(name) = editing {
            form.remove method="post" action={ "/clusters/" (path_segment(name)) "/remove" } {
                input type="hidden" name="csrf" value=(csrf);
                button type="submit" { (tr("form-remove", &[("name", name.into())])) }
            }
        } @else {
            h2 { (t("form-agent-title")) }
            p { (t("form-agent-why")) }
            form.cluster method="post" action="/clusters/new" {
                input type="hidden" name="csrf" value=(csrf);
                label { (t("form-name")) input type="text" name="name" value="" placeholder="edge-17"; }
                p.muted { (t("form-names")) (t("colon")) (t("name-rule")) "." }
                label { (t("form-interval")) input type="text" name="interval" value="" placeholder="60s"; }
                label { (t("form-ignored")) input type="text" name="ignored" value="" placeholder="ci, sandbox"; }
                label { (t("form-namespaces")) input type="text" name="namespaces" value="" placeholder="team-a, team-b"; }
                p.buttons { button type="submit" name="action" value="agent" { (t("form-agent-create")) } }
            }
        }
    };
    page_of(board, &format!("{title} · DumbMonit"), body)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::state::AuditEntry;

    /// A board on a state of its own in memory, with a secret key: what the pages store to.
    fn board(name: &str) -> Board {
        Board::in_memory(name, Some(Arc::new(crate::secret::SecretKey::random())))
    }

    /// What a browser sends.
    fn posted(body: &str) -> ClusterForm {
        serde_urlencoded::from_str(body).unwrap()
    }

    /// The cluster saved as the pages save it, and its settings as the state gives them back.
    fn saved_and_read_back(b: &Board, name: &str, settings: &PageSettings) -> PageSettings {
        let entry = AuditEntry { time: 0, who: "admin".into(), action: "added".into(), cluster: name.into() };
        // No serve here to take the change: nothing waits for it.
        let _change = b.page_clusters().save(name, settings, "tok-0123456789abcdef", &entry).unwrap();
        b.page_clusters().stored_one(name).expect("stored").settings
    }

    const DIRECT: &str = "action=save&name=lab&address=https%3A%2F%2Fk3s.lan%3A6443&port=6443&timeout=10s&interval=60s";

    #[test]
    fn namespaces_are_checked_stored_and_shown_again() {
        let b = board("form-namespaces");
        let s = posted(&format!("{DIRECT}&namespaces=team-a%2C+team-b")).settings(false).unwrap();
        assert_eq!(s.connect.namespaces, ["team-a", "team-b"]);
        let back = saved_and_read_back(&b, "lab", &s);
        assert_eq!(back.to_cluster("lab", "tok-0123456789abcdef".into()).connect.namespaces, ["team-a", "team-b"]);
        let page = form_page(&b, "csrf", &ClusterForm::from_settings("lab", &back), Some("lab"), None);
        assert!(page.contains(r#"name="namespaces" value="team-a, team-b""#), "{page}");
        let bad = posted(&format!("{DIRECT}&namespaces=Team_A")).settings(false).unwrap_err();
        assert!(bad.to_string().starts_with("Namespaces: \"Team_A\" is not a namespace name"), "{bad}");
        let both = posted(&format!("{DIRECT}&namespaces=team-a&watch=on")).settings(false).unwrap_err();
        assert!(matches!(both, FormError::NamespacesWithWatch));
        // An agent's cluster keeps them too: its agent reads them from the server.
        let agent = posted("action=agent&name=edge&interval=60s&namespaces=team-a").settings(true).unwrap();
        assert_eq!(agent.connect.namespaces, ["team-a"]);
    }

    #[test]
    fn the_watch_box_is_stored_and_shown_checked_again() {
        let b = board("form-watch-direct");
        let ticked = posted(&format!("{DIRECT}&watch=on")).settings(false).unwrap();
        assert!(ticked.watch);
        let back = saved_and_read_back(&b, "lab", &ticked);
        assert_eq!(back, ticked, "the stored settings come back as saved");
        assert!(back.to_cluster("lab", "tok-0123456789abcdef".into()).watch, "and the cluster is followed by watch");
        let page = form_page(&b, "csrf", &ClusterForm::from_settings("lab", &back), Some("lab"), None);
        assert!(page.contains(r#"<input type="checkbox" name="watch" checked>"#), "{page}");
        assert!(page.contains("Follow by watch (list-then-watch; needs the watch verb: dumbmonit rbac --watch)"));

        // Unticked: saved so, and shown unticked.
        let unticked = posted(DIRECT).settings(false).unwrap();
        assert!(!unticked.watch);
        let back = saved_and_read_back(&b, "lab", &unticked);
        assert!(!back.watch);
        let page = form_page(&b, "csrf", &ClusterForm::from_settings("lab", &back), Some("lab"), None);
        assert!(page.contains(r#"<input type="checkbox" name="watch">"#), "{page}");
        // The new cluster's form has the box, unticked.
        let page = form_page(&b, "csrf", &ClusterForm::blank(), None, None);
        assert!(page.contains(r#"<input type="checkbox" name="watch">"#), "{page}");
    }

    #[test]
    fn a_cluster_read_by_its_agent_is_never_followed_by_watch() {
        let b = board("form-watch-agent");
        // Sent by hand with the agent's button: the box is ignored.
        let agent = posted("action=agent&name=edge&interval=60s&watch=on").settings(true).unwrap();
        assert!(!agent.watch);
        let back = saved_and_read_back(&b, "edge", &agent);
        assert!(!back.watch);
        assert!(!back.to_cluster("edge", "agent-token-0123456789".into()).watch);
        // Its edit form has no box, and what is posted there is ignored too.
        let mut f = ClusterForm::from_settings("edge", &back);
        assert!(f.agent && f.watch.is_none());
        let page = form_page(&b, "csrf", &f, Some("edge"), None);
        assert!(!page.contains("name=\"watch\"") && !page.contains("Follow by watch"), "{page}");
        f.watch = Some("on".into());
        assert!(!f.settings(true).unwrap().watch);
    }
}
