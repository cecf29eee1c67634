//! The status pages: `/` (every cluster on one line) and `/clusters/{name}` (the Cluster panel).

use jiff::Timestamp;
use maud::{Markup, html};

use super::charts::{self, Series};
use super::html::{ago, clock, lang, page, path_segment, t, tr};
use crate::board::{Board, ClusterView};
use crate::health::extras::MetricsApi;
use crate::health::{Health, NodeHealth};
use crate::lang::Lang;

/// At most this many rows of a problem table; the rest are counted.
const MAX_ROWS: usize = 50;
/// Clusters with at most this many nodes list every node.
const ALL_NODES_UP_TO: usize = 20;

fn when(at: Option<Timestamp>, now: Timestamp) -> Markup {
    html! {
        @match at {
            Some(at) => { (clock(at)) " " span.muted { "(" (ago(at, now)) ")" } }
            None => span.muted { (t("never")) },
        }
    }
}

/// Clusters on one overview page.
pub const OVERVIEW_PAGE: usize = 100;

/// The statuses, most in need of attention first.
const STATUSES: [&str; 5] = ["unreachable", "critical", "notice", "waiting", "ok"];

/// What the overview is asked for: `?status=critical&q=edge&page=2`.
struct OverviewQuery {
    status: Option<&'static str>,
    name: String,
    page: usize,
}

impl OverviewQuery {
    fn parse(params: &super::Params) -> OverviewQuery {
        let mut q = OverviewQuery { status: None, name: String::new(), page: 1 };
        for (k, v) in params {
            match k.as_str() {
                "status" => q.status = STATUSES.iter().find(|s| **s == v).copied(),
                "q" => q.name = v.trim().chars().take(100).collect(),
                "page" => q.page = v.parse().unwrap_or(1).max(1),
                _ => {}
            }
        }
        q
    }

    /// This query's link, on another page or with another status.
    fn link(&self, status: Option<&str>, page: usize) -> String {
        let mut out = form_urlencoded::Serializer::new(String::new());
        if let Some(s) = status {
            out.append_pair("status", s);
        }
        if !self.name.is_empty() {
            out.append_pair("q", &self.name);
        }
        if page > 1 {
            out.append_pair("page", &page.to_string());
        }
        let q = out.finish();
        if q.is_empty() { "/".into() } else { format!("/?{q}") }
    }
}

/// Every cluster on one line, what needs attention first: the counts per status at the top
/// (each a filter), a filter by name, 100 clusters a page.
pub fn overview(board: &Board, query: &super::Params) -> String {
    // One clock for the whole page: the cycles' (the wall's, but in a test's stepped time).
    let now = board.now();
    let q = OverviewQuery::parse(query);
    let mut clusters = board.views().clusters();
    let rank = |c: &ClusterView| STATUSES.iter().position(|s| *s == c.status()).unwrap_or(STATUSES.len());
    clusters.sort_by(|a, b| rank(a).cmp(&rank(b)).then_with(|| a.name.cmp(&b.name)));
    let total = clusters.len();
    let counts: Vec<(&str, usize)> =
        STATUSES.iter().map(|s| (*s, clusters.iter().filter(|c| c.status() == *s).count())).collect();
    let needle = q.name.to_lowercase();
    let shown: Vec<&ClusterView> = clusters
        .iter()
        .filter(|c| q.status.is_none_or(|s| c.status() == s))
        .filter(|c| needle.is_empty() || c.name.to_lowercase().contains(&needle))
        .collect();
    let pages = shown.len().div_ceil(OVERVIEW_PAGE).max(1);
    let page = q.page.min(pages);
    let quiet = board.quieting().quiet();
    let body = html! {
        h1 { (t("overview-title")) }
        p.statuses {
            a href=(q.link(None, 1)) { (tr("count-clusters", &[("count", total.into())])) }
            @for (s, n) in &counts {
                @if *n > 0 {
                    " · "
                    a class=(s) href=(q.link(Some(s), 1)) aria-current=[(q.status == Some(*s)).then_some("true")] { (tr("count-status", &[("count", (*n).into()), ("status", (*s).into())])) }
                }
            }
        }
        @if total > OVERVIEW_PAGE || !q.name.is_empty() {
            form.filter method="get" action="/" {
                @if let Some(s) = q.status {
                    input type="hidden" name="status" value=(s);
                }
                input type="search" name="q" value=(q.name) placeholder=(t("filter-name.placeholder")) aria-label=(t("filter-name.label"));
                " "
                button type="submit" { (t("filter")) }
            }
        }
        div.scroll {
            table {
                thead { tr { th { (t("col-cluster")) } th { (t("col-status")) } th { (t("col-nodes-ready")) } th { (t("col-pods")) } th { (t("col-firing")) } th { (t("col-last-good")) } } }
                tbody {
                    @for c in shown.iter().skip((page - 1) * OVERVIEW_PAGE).take(OVERVIEW_PAGE) {
                        tr {
                            td { a href={ "/clusters/" (path_segment(&c.name)) } { (c.name) } }
                            td {
                                @match &c.error {
                                    Some(e) => { span.unreachable { (t("cannot-be-read")) } (t("colon")) (e) }
                                    None => span class=(c.status()) { (c.sentence_in(lang())) },
                                }
                                @if let Some((_, until)) = quiet.maintenance(now, &c.name) {
                                    br;
                                    span.muted.maintenance { (in_maintenance(until)) }
                                }
                            }
                            @match &c.health {
                                // Namespaced access without nodes: not visible, not 0/0.
                                Some(h) if !h.nodes_visible() => { td { "–" } td { (h.counts.pods) } }
                                Some(h) => { td { (h.counts.nodes_ready) "/" (h.counts.nodes) } td { (h.counts.pods) } }
                                None => { td { "–" } td { "–" } }
                            }
                            td { (c.firing()) }
                            td { (when(c.last_good, now)) }
                        }
                    }
                }
            }
        }
        @if total == 0 {
            p { (t("no-cluster")) }
        } @else if shown.is_empty() {
            p { (t("no-cluster-matches")) }
        }
        p.actions {
            a href="/clusters/new" { (t("add-cluster")) } " · " a href="/silences" { (t("silences-link")) }
            " · " a href="/notifiers" { (t("notifiers-title")) } " · " a href="/audit" { (t("audit-title")) }
        }
        @if pages > 1 {
            nav.pages {
                (tr("page-of", &[("page", page.into()), ("pages", pages.into())]))
                @if page > 1 { " · " a href=(q.link(q.status, page - 1)) rel="prev" { (t("previous")) } }
                @if page < pages { " · " a href=(q.link(q.status, page + 1)) rel="next" { (t("next")) } }
            }
        }
        (replicas(board, total))
    };
    page_of("DumbMonit", board, body)
}

/// With a shared state: which replica reads which cluster, each other replica's clusters linked
/// to its own pages, and the clusters only other replicas know.
fn replicas(board: &Board, owned: usize) -> Markup {
    let r = board.replicas();
    if r.me.is_empty() {
        return html! {};
    }
    let me = r.alive.iter().find(|s| s.name == r.me);
    let known = me.map(|s| s.clusters.len()).unwrap_or(owned);
    // Each cluster this replica's file does not hold, with the replicas that know it.
    let mut unknown: std::collections::BTreeMap<&str, Vec<&str>> = Default::default();
    for other in r.alive.iter().filter(|s| s.name != r.me) {
        for c in other.clusters.iter().filter(|c| me.is_some_and(|m| !m.clusters.contains(*c))) {
            unknown.entry(c.as_str()).or_default().push(other.name.as_str());
        }
    }
    let unknown: Vec<String> = unknown.into_iter().map(|(c, by)| format!("{c} ({})", by.join(", "))).collect();
    html! {
        h2 { (t("replicas-title")) }
        p.replica { (tr("replica-me", &[("name", r.me.as_str().into()), ("owned", owned.into()), ("known", known.into())])) }
        @for other in r.alive.iter().filter(|s| s.name != r.me) {
            p.replica {
                (tr("replica-other", &[("name", other.name.as_str().into()), ("count", other.owns.len().into())]))
                " "
                @for (i, c) in other.owns.iter().enumerate() {
                    @if i > 0 { ", " }
                    a href={ (other.pages) "/clusters/" (path_segment(c)) } { (c) }
                }
            }
        }
        @if !unknown.is_empty() {
            p.replica { (tr("replica-unknown", &[("names", unknown.join(", ").into())])) }
        }
        p.muted { (tr("replicas-freshness", &[("seconds", (r.renewed_every.as_secs_f64().ceil() as u64).into())])) }
    }
}

pub(super) fn page_of(title: &str, board: &Board, body: Markup) -> String {
    page(title, board.banner(), with_notices(board, body))
}

/// The page's body, after what the monitor must say about itself (the state cannot be saved, a
/// receiver refuses notifications).
fn with_notices(board: &Board, body: Markup) -> Markup {
    html! {
        @if let Some(p) = board.persistence_problem() {
            p.persistence { (p) }
        }
        @for line in board.refusals() {
            p.persistence { (line) }
        }
        (body)
    }
}

/// A table of problems: at most [`MAX_ROWS`] rows, then how many more.
fn table(title: &str, headers: &[&str], rows: Markup, more: Option<String>) -> Markup {
    html! {
        h2 { (title) }
        div.scroll {
            table {
                thead { tr { @for h in headers { th { (h) } } } }
                tbody { (rows) }
            }
        }
        @if let Some(m) = more {
            p.more { (m) }
        }
    }
}

/// A why, each reason a line, in the reader's language.
fn why(reasons: &[crate::lang::Message]) -> Markup {
    let lang = lang();
    html! { @for r in reasons { div { (lang.say(r)) } } }
}

/// "and N more" below a table that shows [`MAX_ROWS`] of `n` rows.
fn more_than_shown(n: usize) -> Option<String> {
    (n > MAX_ROWS).then(|| tr("and-more", &[("count", (n - MAX_ROWS).into())]))
}

fn node_needs_attention(n: &NodeHealth) -> bool {
    !n.ready || n.under_pressure() || n.unschedulable || n.kubelet_skew || n.ready_transitions > 0
}

/// The Cluster panel, or None for an unknown cluster.
pub fn cluster(board: &Board, name: &str, query: &super::Params) -> Option<String> {
    let c = board.views().cluster(name)?;
    let week = query.iter().any(|(k, v)| k == "range" && v == "7d");
    // One clock for the whole page: the cycles' (the wall's, but in a test's stepped time), on
    // which silences and windows are too.
    let (quiet, now) = (board.quieting().quiet(), board.now());
    let version = c.health.as_ref().map(|h| h.version.clone()).unwrap_or_default();
    let body = html! {
        h1 { (c.name) }
        p.muted {
            (c.address) " · "
            @if version.is_empty() { (t("version-unknown")) } @else { (version) }
            " · " (t("last-cycle")) " " (when(c.last_cycle, now))
        }
        p.muted.source {
            @if c.from_pages {
                (t("added-on-pages")) " · " a href={ "/clusters/" (path_segment(&c.name)) "/edit" } { (t("edit-or-remove")) }
            } @else {
                (t("from-file"))
            }
        }
        @if let Some(a) = &c.agent {
            p class="muted agent" { (t("through-agent")) " " (when(a.last_report, now)) }
            @for n in a.notes() {
                p class="stale agent" { (n) }
            }
        }
        p class={ "sentence " (c.status()) } { (c.sentence_in(lang())) }
        @if let Some((w, until)) = quiet.maintenance(now, &c.name) {
            p.maintenance {
                (in_maintenance(until)) " (" (w.created_by)
                @if !w.comment.is_empty() { (t("colon")) (w.comment) }
                ")" (t("colon")) (t("nothing-notified"))
            }
        }
        @if let Some(e) = &c.error {
            div.error { strong { (t("cannot-be-read-sentence")) } " " (e) }
            @match c.last_good {
                Some(good) => p.stale { (tr("last-good-data", &[("time", clock(good).into()), ("ago", ago(good, now).into())])) },
                None => p.stale { (t("never-read")) },
            }
        }
        @if let Some(h) = &c.health {
            p.counters { (h.counters_in(lang())) }
            @if h.severity() != crate::health::Grade::Ok {
                (problems(board, &c, h, now))
            }
            (capacity(h))
            (optional_reads(h))
        }
        (alerts(&c, now, &quiet))
        @if !c.alerts.is_empty() {
            p.actions { a href={ "/silences/new?" (silence_query(&[("cluster", &c.name)])) } { (t("silence-all")) } }
        }
        // On the cycles' clock, as the points are dated (the stepped test clock's, in tests).
        (history(board, &c, now, week))
    };
    Some(page(&format!("{} · DumbMonit", c.name), board.banner(), with_notices(board, body)))
}

fn problems(board: &Board, c: &ClusterView, h: &Health, now: Timestamp) -> Markup {
    let mut nodes: Vec<&NodeHealth> = if h.nodes.len() <= ALL_NODES_UP_TO {
        h.nodes.iter().map(|n| &**n).collect()
    } else {
        h.nodes.iter().map(|n| &**n).filter(|n| node_needs_attention(n)).collect()
    };
    // Not ready first, then under pressure, then cordoned, then the rest.
    nodes.sort_by_key(|n| (n.ready, !n.under_pressure(), !n.unschedulable));
    let more_nodes = h.nodes.len() - nodes.len();
    let more_nodes = (more_nodes > 0).then(|| tr("more-nodes", &[("count", more_nodes.into())]));
    let pods = h.problem_pods();
    let day_ago = now.as_second() - 86400;
    let workloads: Vec<_> = h.workloads.iter().filter(|w| w.unavailable > 0).collect();
    let stuck: Vec<_> = h.workloads.iter().filter(|w| w.rollout_stuck).collect();
    let claims: Vec<_> = h.pvcs.iter().filter(|p| p.stuck).collect();
    let top: Vec<(String, u64)> = h.events_by_reason.iter().take(20).cloned().collect();
    html! {
        @if !nodes.is_empty() {
            (table(&t("nodes-title"), &[&t("col-node"), "Ready", &t("col-pressure"), &t("col-scheduling"), &t("col-kubelet"), &t("col-why")], html! {
                @for n in &nodes {
                    @let pressure: Vec<&str> = n.pressure.iter().filter(|(_, on)| *on).map(|(c, _)| c.as_str()).collect();
                    tr {
                        td { (n.name) }
                        td class=(if n.ready { "ok" } else { "critical" }) { (n.ready_status) }
                        td { @if pressure.is_empty() { "–" } @else { (pressure.join(", ")) } }
                        td { @if n.unschedulable { (t("cordoned")) } @else { "–" } }
                        td { (n.kubelet_version) }
                        td.why { (why(&n.why)) }
                    }
                }
            }, more_nodes))
        }
        @if !pods.is_empty() {
            (table(&tr("pods-title", &[("count", pods.len().into())]), &[&t("col-pod"), &t("col-state"), &t("col-restarts"), &t("col-why")], {
                let mut store = board.reader();
                html! {
                    @for p in pods.iter().take(MAX_ROWS) {
                        @let history = store.pod_restarts(&c.name, &p.namespace, &p.name, day_ago).unwrap_or_default();
                        tr {
                            td { (p.namespace) "/" (p.name) }
                            td class=(if p.crashlooping { "critical" } else { "notice" }) { (p.problems_in(lang()).join(", ")) }
                            td {
                                (p.restarts) " "
                                @if history.len() > 1 {
                                    (charts::sparkline(&history, day_ago, now.as_second()))
                                }
                            }
                            td.why { (why(&p.why)) }
                        }
                    }
                }
            }, more_than_shown(pods.len())))
        }
        @if !workloads.is_empty() {
            (table(&tr("workloads-title", &[("count", workloads.len().into())]), &[&t("col-workload"), "Ready", &t("col-unavailable"), &t("col-why")], html! {
                @for w in workloads.iter().take(MAX_ROWS) {
                    tr {
                        td { (w.kind.as_str()) " " (w.namespace) "/" (w.name) }
                        td { (w.ready) "/" (w.desired) }
                        td { (w.unavailable) }
                        td.why { (why(&w.why)) }
                    }
                }
            }, more_than_shown(workloads.len())))
        }
        @if !stuck.is_empty() {
            (table(&tr("rollouts-title", &[("count", stuck.len().into())]), &[&t("col-workload"), &t("col-updated"), &t("col-why")], html! {
                @for w in stuck.iter().take(MAX_ROWS) {
                    tr {
                        td { (w.kind.as_str()) " " (w.namespace) "/" (w.name) }
                        td.critical { (w.updated) "/" (w.desired) }
                        td.why { (why(&w.why)) }
                    }
                }
            }, more_than_shown(stuck.len())))
        }
        @if !claims.is_empty() {
            (table(&tr("claims-title", &[("count", claims.len().into())]), &[&t("col-claim"), "Phase", &t("col-why")], html! {
                @for p in claims.iter().take(MAX_ROWS) {
                    tr {
                        td { (p.namespace) "/" (p.name) }
                        td { (p.phase) }
                        td.why { (why(&p.why)) }
                    }
                }
            }, more_than_shown(claims.len())))
        }
        @if !top.is_empty() {
            h2 { (t("events-title")) }
            figure { (charts::bars(&t("events-title"), &top)) }
            @if h.events_by_reason.len() > top.len() {
                p.more { (tr("more-reasons", &[("count", (h.events_by_reason.len() - top.len()).into())])) }
            }
        }
    }
}

/// What the optional reads say: aggregated APIs down, HPAs that cannot scale, the Metrics API's
/// diagnosis, and — once — what the service account may not read.
fn optional_reads(h: &Health) -> Markup {
    use crate::health::policy::Fullness;
    let x = &h.extras;
    let jobs: Vec<_> = x.jobs.iter().flatten().filter(|j| !j.superseded).collect();
    let missed: Vec<_> = x.cronjobs.iter().flatten().filter(|c| c.missed).collect();
    let down: Vec<_> = x.apiservices.iter().flatten().filter(|a| !a.available).collect();
    let hpas: Vec<_> = x.hpas.iter().flatten().filter(|a| !a.scaling_active || a.at_max || a.mismatch).collect();
    let stopped: Vec<_> = x.control_plane.iter().flatten().filter(|c| c.down).collect();
    let pdbs: Vec<_> = x.pdbs.iter().flatten().filter(|p| p.short).collect();
    let webhooks: Vec<_> = x.webhooks.iter().flatten().filter(|w| w.unavailable()).collect();
    let quotas: Vec<_> = x.quotas.iter().flatten().filter(|q| q.fullness.is_some()).collect();
    let volumes: Vec<_> = x.pvs.iter().flatten().filter(|v| v.in_error).map(|v| &v.volume).collect();
    html! {
        @for c in &stopped {
            div.error {
                (tr("text-control-plane", &[
                    ("component", c.component.into()),
                    ("seconds", c.age_seconds.into()),
                    ("what", tr("rule-control-plane-component-down.description", &[("component", c.component.into()), ("holder", (&c.holder).into())]).into()),
                ]))
            }
        }
        // A webhook that refuses what it intercepts is an error, one that lets it through a notice.
        @for w in webhooks.iter().filter(|w| w.fails_closed()) {
            div.error { (tr("text-webhook", &w.args())) }
        }
        @for w in webhooks.iter().filter(|w| !w.fails_closed()) {
            div.notice { (tr("text-webhook", &w.args())) }
        }
        @for e in h.expiring() {
            div class=(if e.days < 7 { "error" } else { "notice" }) {
                (tr("certificate-expires-on", &[
                    ("certificate", e.certificate.into()),
                    ("date", moment(e.not_after).into()),
                    ("when", crate::health::days_when(e.days).into()),
                    ("days", e.days.abs().into()),
                ]))
            }
        }
        @if !jobs.is_empty() {
            (table(&tr("jobs-title", &[("count", jobs.len().into())]), &["Job", "CronJob", &t("col-why")], html! {
                @for j in jobs.iter().take(MAX_ROWS) {
                    tr {
                        td { (j.namespace) "/" (j.name) }
                        td { @if j.owner.is_empty() { "–" } @else { (j.owner) } }
                        td.why { (j.why) }
                    }
                }
            }, more_than_shown(jobs.len())))
        }
        @if !missed.is_empty() {
            (table(&tr("cronjobs-title", &[("count", missed.len().into())]), &["CronJob", &t("col-schedule"), &t("col-why")], html! {
                @for c in missed.iter().take(MAX_ROWS) {
                    tr {
                        td { (c.namespace) "/" (c.name) }
                        td { code { (c.schedule) } }
                        td.why { (why(&c.why)) }
                    }
                }
            }, more_than_shown(missed.len())))
        }
        @if !down.is_empty() {
            (table(&t("apiservices-title"), &["APIService", "Service", &t("col-reason"), &t("col-message")], html! {
                @for a in down.iter().take(MAX_ROWS) {
                    tr {
                        td { (a.name) }
                        td { (a.service) }
                        td.critical { @if a.reason.is_empty() { (t("not-available")) } @else { (a.reason) } }
                        td.why { (a.message) }
                    }
                }
            }, None))
        }
        @match &x.metrics_api {
            MetricsApi::Unavailable(d) => div.error { (d) },
            MetricsApi::NotInstalled => p.muted { (x.metrics_api.sentence_in(lang())) },
            MetricsApi::Available | MetricsApi::NotGranted | MetricsApi::NotRead => {}
        }
        @if !hpas.is_empty() {
            (table(&tr("hpas-title", &[("count", hpas.len().into())]), &["HPA", &t("col-state"), &t("col-replicas-max"), &t("col-why")], html! {
                @for a in hpas.iter().take(MAX_ROWS) {
                    tr {
                        td { (a.namespace) "/" (a.name) }
                        td.notice {
                            @if !a.scaling_active { (t("hpa-cannot-scale")) (t("colon")) (a.reason) }
                            @else if a.mismatch { (tr("hpa-mismatch", &[("desired", a.desired_replicas.into())])) }
                            @else { (t("hpa-at-max")) }
                        }
                        td { (a.current_replicas) "/" (a.max_replicas) }
                        td.why { (a.message) }
                    }
                }
            }, more_than_shown(hpas.len())))
        }
        @for l in h.notice_lines(MAX_ROWS) {
            div.notice { (tr(&l.words, &l.args)) }
        }
        @if !pdbs.is_empty() {
            (table(&tr("pdbs-title", &[("count", pdbs.len().into())]), &["PodDisruptionBudget", &t("col-healthy"), &t("col-allowed")], html! {
                @for p in pdbs.iter().take(MAX_ROWS) {
                    tr {
                        td { (p.namespace) "/" (p.name) }
                        td.critical { (p.current_healthy) " / " (p.desired_healthy) }
                        td { (p.disruptions_allowed) }
                    }
                }
            }, more_than_shown(pdbs.len())))
        }
        @if !quotas.is_empty() {
            (table(&tr("quotas-title", &[("count", quotas.len().into())]), &["ResourceQuota", &t("col-resource"), &t("col-used"), &t("col-state")], html! {
                @for q in quotas.iter().take(MAX_ROWS) {
                    tr {
                        td { (q.namespace) "/" (q.quota) }
                        td { code { (q.resource) } }
                        td { (crate::lang::quantity(&q.resource, q.used)) " / " (crate::lang::quantity(&q.resource, q.hard)) }
                        @match q.fullness {
                            Some(Fullness::Exceeded) => td.critical { (t("quota-exceeded")) },
                            Some(Fullness::Full) => td.critical { (t("quota-full")) },
                            _ => td.notice { (t("quota-almost")) },
                        }
                    }
                }
            }, more_than_shown(quotas.len())))
        }
        @if !volumes.is_empty() {
            (table(&tr("volumes-title", &[("count", volumes.len().into())]), &["PersistentVolume", &t("col-phase"), &t("col-claim"), &t("col-why")], html! {
                @for v in volumes.iter().take(MAX_ROWS) {
                    tr {
                        td { (v.name) }
                        td.critical { (v.phase) }
                        td { @if v.claim.is_empty() { "–" } @else { (v.claim) } }
                        td.why { (v.why) }
                    }
                }
            }, more_than_shown(volumes.len())))
        }
        @for line in &x.unreadable {
            p.muted { (line) }
        }
        @if !x.not_granted.is_empty() {
            p.muted {
                (t("not-granted")) (t("colon")) (x.not_granted.join(", "))
                " (" (t("not-granted.optional")) " " code { "dumbmonit rbac --optional" } " " (t("not-granted.adds")) ")."
            }
        }
        @for f in &x.failed {
            p.muted { (t("optional-failed")) (t("colon")) (f) }
        }
        @for line in x.access_lines_in(lang()) {
            p.muted { (line) }
        }
        @if !x.watch_not_granted.is_empty() {
            p.muted {
                (x.watch_not_granted.join(", ")) (t("colon")) (t("watch-not-granted")) " ("
                code { "dumbmonit rbac --watch" } " " (t("watch-not-granted.grants")) ")."
            }
        }
    }
}

/// Requests and limits against allocatable, per node: every node of a small cluster; in a large
/// one, those overcommitted or with 90% or more of a resource requested.
fn capacity(h: &Health) -> Markup {
    let share = |used: i64, total: Option<i64>| total.filter(|t| *t > 0).map(|t| used as f64 / t as f64);
    let busy = |n: &NodeHealth| {
        n.overcommitted()
            || share(n.requested.cpu_requests, n.allocatable_cpu).is_some_and(|s| s >= 0.9)
            || share(n.requested.memory_requests, n.allocatable_memory).is_some_and(|s| s >= 0.9)
    };
    let mut nodes: Vec<&NodeHealth> = if h.nodes.len() <= ALL_NODES_UP_TO {
        h.nodes.iter().map(|n| &**n).collect()
    } else {
        h.nodes.iter().map(|n| &**n).filter(|n| busy(n)).collect()
    };
    if nodes.is_empty() {
        return html! {};
    }
    nodes.sort_by_key(|n| !n.overcommitted());
    let metrics = h.extras.metrics_available();
    let cell = |what: &str, used: i64, total: Option<i64>, shown: String| {
        html! {
            @match total {
                Some(t) if t > 0 => td {
                    (charts::usage_bar(what, used as f64, t as f64)) " " (shown) " "
                    span.muted { "(" (format!("{:.0}", used as f64 / t as f64 * 100.0)) "%)" }
                },
                _ => td { (shown) " " span.muted { "(" (t("allocatable-unknown")) ")" } },
            }
        }
    };
    let cores = |m: i64| crate::lang::decimal(lang(), m as f64 / 1000.0, 2);
    let gib = |b: i64| format!("{} GiB", crate::lang::decimal(lang(), b as f64 / (1u64 << 30) as f64, 1));
    let title = if h.nodes.len() <= ALL_NODES_UP_TO {
        t("capacity-title")
    } else {
        tr("capacity-busy-title", &[("count", nodes.len().into())])
    };
    let mut ids = vec!["col-node"];
    if metrics {
        ids.extend(["col-cpu-used", "col-memory-used"]);
    }
    ids.extend(["col-cpu-requests", "col-cpu-limits", "col-memory-requests", "col-memory-limits", "col-overcommit"]);
    let headers: Vec<String> = ids.into_iter().map(t).collect();
    let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
    let bar = |id: &str| t(&format!("{id}.bar"));
    let rows = html! {
        @for n in nodes.iter().take(MAX_ROWS) {
            @let r = &n.requested;
            tr {
                td { (n.name) }
                @match (n.usage_cpu, n.usage_memory) {
                    (Some(c), Some(m)) => {
                        (cell(&bar("col-cpu-used"), c, n.allocatable_cpu, cores(c)))
                        (cell(&bar("col-memory-used"), m, n.allocatable_memory, gib(m)))
                    }
                    _ => { @if metrics { td { "–" } td { "–" } } }
                }
                (cell(&bar("col-cpu-requests"), r.cpu_requests, n.allocatable_cpu, cores(r.cpu_requests)))
                (cell(&bar("col-cpu-limits"), r.cpu_limits, n.allocatable_cpu, cores(r.cpu_limits)))
                (cell(&bar("col-memory-requests"), r.memory_requests, n.allocatable_memory, gib(r.memory_requests)))
                (cell(&bar("col-memory-limits"), r.memory_limits, n.allocatable_memory, gib(r.memory_limits)))
                td { @if n.overcommitted() { span.critical { (t("top-overcommitted")) } } @else { "–" } }
            }
        }
    };
    table(&title, &headers, rows, more_than_shown(nodes.len()))
}

fn alerts(c: &ClusterView, now: Timestamp, quiet: &crate::silence::Quiet) -> Markup {
    if c.alerts.is_empty() {
        return html! {};
    }
    // Already in the order shown: firing first, then the most severe, then the oldest.
    let rows = html! {
        @for a in c.alerts.iter().take(MAX_ROWS) {
            @let object: Vec<String> = a
                .labels
                .iter()
                .filter(|(k, _)| !["alertname", "severity", "cluster"].contains(&k.as_str()))
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            @let (state, since) = match a.fired_at {
                Some(fired) => ("alert-firing", fired),
                None => ("alert-pending", a.active_at),
            };
            tr {
                td {
                    // French pages give the rule's title in the guide's words, and its name.
                    @match crate::rules::words_of(&a.alertname).filter(|_| lang() == Lang::Fr) {
                        Some(words) => { (t(&format!("{words}.title"))) br; span.muted { (a.alertname) } }
                        None => (a.alertname),
                    }
                }
                td class=(if a.severity >= crate::rules::Severity::Warning { "critical" } else { "notice" }) { (t(&format!("severity-{}", a.severity.as_str()))) }
                td { (object.join(" ")) }
                td {
                    (a.summary_in(lang()))
                    @for s in quiet.silencing(now, &a.labels) {
                        br;
                        span.muted { (silenced_line(s)) }
                    }
                    br;
                    span.actions {
                        a href={ "/silences/new?" (silence_query(&a.labels.iter().filter(|(k, _)| k.as_str() != "severity").map(|(k, v)| (k.as_str(), v.as_str())).collect::<Vec<_>>())) } { (t("silence-one")) }
                        @if a.firing() && a.acknowledged.is_none() {
                            " · " a href={ "/alerts/" (crate::notify::payload::fingerprint(&a.labels)) "/ack" } { (t("acknowledge-one")) }
                        }
                    }
                    @if let Some(ack) = &a.acknowledged {
                        br;
                        span.muted.acknowledged {
                            (tr("acknowledged-by", &[("by", (&ack.by).into()), ("at", moment(ack.at).into())]))
                            @if !ack.comment.is_empty() { (t("colon")) (ack.comment) }
                        }
                    }
                }
                td { (t(state)) }
                td { (clock(since)) " " span.muted { "(" (ago(since, now)) ")" } }
            }
        }
    };
    table(
        &tr("alerts-title", &[("count", c.alerts.len().into())]),
        &[&t("col-alert"), &t("col-severity"), &t("col-object"), &t("col-summary"), &t("col-state"), &t("col-since")],
        rows,
        None,
    )
}

/// The query of the new silence's page, pre-filled with these labels as equality matchers.
fn silence_query(labels: &[(&str, &str)]) -> String {
    let mut q = form_urlencoded::Serializer::new(String::new());
    for (k, v) in labels {
        q.append_pair("matcher", &format!("{k}={}", serde_json::to_string(v).unwrap_or_default()));
    }
    q.finish()
}

/// « silenced until … by … : comment »; a standing rule of the file has no end.
fn silenced_line(s: &crate::silence::Silence) -> String {
    let comment = if s.comment.is_empty() { String::new() } else { format!("{}{}", t("colon"), s.comment) };
    let said = match s.ends_at {
        Some(end) => tr("silenced-until", &[("until", moment(end).into()), ("by", (&s.created_by).into())]),
        None => tr("silenced-by", &[("by", (&s.created_by).into())]),
    };
    format!("{said}{comment}")
}

/// « in maintenance until … »
fn in_maintenance(until: Timestamp) -> String {
    tr("in-maintenance", &[("until", moment(until).into())])
}

/// A moment as the pages write one: `2026-12-01 06:35 UTC`, `1 déc. 2026 06:35 UTC`.
fn moment(at: Timestamp) -> String {
    crate::lang::date_time(lang(), at)
}

fn history(board: &Board, c: &ClusterView, now: Timestamp, week: bool) -> Markup {
    let span = if week { 7 * 86400 } else { 86400 };
    let to = now.as_second();
    let from = to - span;
    let points = board.reader().history(&c.name, from).unwrap_or_default();
    let line =
        |f: fn(&crate::state::HistoryPoint) -> i64| points.iter().map(|p| (p.time, f(p) as f64)).collect::<Vec<_>>();
    let names: Vec<String> = ["nodes", "ready", "running", "pending", "failed", "crash-looping", "warning-events"]
        .into_iter()
        .map(|n| t(&format!("series-{n}")))
        .collect();
    let charts = [
        (
            t("chart-nodes"),
            vec![
                Series { name: &names[0], color: "#8c959f", points: line(|p| p.nodes) },
                Series { name: &names[1], color: "#1a7f37", points: line(|p| p.nodes_ready) },
            ],
        ),
        (
            t("chart-pods"),
            vec![
                Series { name: &names[2], color: "#0969da", points: line(|p| p.pods_running) },
                Series { name: &names[3], color: "#bf8700", points: line(|p| p.pods_pending) },
                Series { name: &names[4], color: "#cf222e", points: line(|p| p.pods_failed) },
            ],
        ),
        (
            t("chart-crashlooping"),
            vec![Series { name: &names[5], color: "#cf222e", points: line(|p| p.pods_crashlooping) }],
        ),
        (t("chart-events"), vec![Series { name: &names[6], color: "#bf8700", points: line(|p| p.warning_events) }]),
    ];
    html! {
        h2 { (t(if week { "history-7d" } else { "history-24h" })) }
        nav.range { a href="?range=24h" { (t("range-24h")) } a href="?range=7d" { (t("range-7d")) } }
        div.charts {
            @for (title, series) in &charts {
                figure {
                    figcaption { (title) }
                    (charts::line_chart(title, from, to, series))
                }
            }
        }
    }
}
