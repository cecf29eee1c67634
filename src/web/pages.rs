//! The status pages: `/` (every cluster on one line) and `/clusters/{name}` (the Cluster panel).

use std::fmt::Write;

use jiff::Timestamp;

use super::charts::{self, Series};
use super::html::{ago, clock, esc, page, path_segment};
use crate::board::{Board, ClusterView};
use crate::health::extras::MetricsApi;
use crate::health::{Health, NodeHealth, plural};

/// At most this many rows of a problem table; the rest are counted.
const MAX_ROWS: usize = 50;
/// Clusters with at most this many nodes list every node.
const ALL_NODES_UP_TO: usize = 20;

fn when(t: Option<Timestamp>, now: Timestamp) -> String {
    match t {
        Some(t) => format!("{} <span class=\"muted\">({})</span>", clock(t), ago(t, now)),
        None => "<span class=\"muted\">never</span>".into(),
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
    fn parse(query: &str) -> OverviewQuery {
        let mut q = OverviewQuery { status: None, name: String::new(), page: 1 };
        for (k, v) in form_urlencoded::parse(query.as_bytes()) {
            match k.as_ref() {
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
pub fn overview(board: &Board, query: &str) -> String {
    let now = Timestamp::now();
    let q = OverviewQuery::parse(query);
    let mut clusters = board.clusters();
    let rank = |c: &ClusterView| STATUSES.iter().position(|s| *s == c.status()).unwrap_or(STATUSES.len());
    clusters.sort_by(|a, b| rank(a).cmp(&rank(b)).then_with(|| a.name.cmp(&b.name)));
    let total = clusters.len();
    let mut body = String::from("<h1>Clusters</h1>\n");
    let counts: Vec<(&str, usize)> =
        STATUSES.iter().map(|s| (*s, clusters.iter().filter(|c| c.status() == *s).count())).collect();
    let _ = write!(
        body,
        "<p class=\"statuses\"><a href=\"{}\">{}</a>",
        esc(&q.link(None, 1)),
        plural(total as u64, "cluster", "clusters")
    );
    for (s, n) in &counts {
        if *n > 0 {
            let current = if q.status == Some(*s) { " aria-current=\"true\"" } else { "" };
            let _ = write!(body, " · <a class=\"{s}\" href=\"{}\"{current}>{n} {s}</a>", esc(&q.link(Some(s), 1)));
        }
    }
    body.push_str("</p>\n");
    if total > OVERVIEW_PAGE || !q.name.is_empty() {
        let _ = writeln!(
            body,
            "<form class=\"filter\" method=\"get\" action=\"/\">{}<input type=\"search\" name=\"q\" value=\"{}\" placeholder=\"cluster name contains\" aria-label=\"Cluster name contains\"> <button type=\"submit\">Filter</button></form>",
            q.status.map(|s| format!("<input type=\"hidden\" name=\"status\" value=\"{s}\">")).unwrap_or_default(),
            esc(&q.name)
        );
    }
    let needle = q.name.to_lowercase();
    let shown: Vec<&ClusterView> = clusters
        .iter()
        .filter(|c| q.status.is_none_or(|s| c.status() == s))
        .filter(|c| needle.is_empty() || c.name.to_lowercase().contains(&needle))
        .collect();
    let pages = shown.len().div_ceil(OVERVIEW_PAGE).max(1);
    let page = q.page.min(pages);
    body.push_str(
        "<div class=\"scroll\"><table>\n<thead><tr><th>Cluster</th><th>Status</th><th>Nodes ready</th><th>Pods</th><th>Firing alerts</th><th>Last good cycle</th></tr></thead>\n<tbody>\n",
    );
    for c in shown.iter().skip((page - 1) * OVERVIEW_PAGE).take(OVERVIEW_PAGE) {
        let (nodes, pods) = match &c.health {
            Some(h) => (format!("{}/{}", h.counts.nodes_ready, h.counts.nodes), h.counts.pods.to_string()),
            None => ("–".into(), "–".into()),
        };
        let status = match &c.error {
            Some(e) => format!("<span class=\"unreachable\">Cannot be read</span>: {}", esc(e)),
            None => format!("<span class=\"{}\">{}</span>", c.status(), esc(&c.sentence())),
        };
        let _ = writeln!(
            body,
            "<tr><td><a href=\"/clusters/{}\">{}</a></td><td>{status}</td><td>{nodes}</td><td>{pods}</td><td>{}</td><td>{}</td></tr>",
            path_segment(&c.name),
            esc(&c.name),
            c.firing(),
            when(c.last_good, now)
        );
    }
    body.push_str("</tbody></table></div>\n");
    if total == 0 {
        body.push_str("<p>No cluster is configured.</p>\n");
    } else if shown.is_empty() {
        body.push_str("<p>No cluster matches.</p>\n");
    }
    if pages > 1 {
        let _ = write!(body, "<nav class=\"pages\">Page {page} of {pages}");
        if page > 1 {
            let _ = write!(body, " · <a href=\"{}\" rel=\"prev\">previous</a>", esc(&q.link(q.status, page - 1)));
        }
        if page < pages {
            let _ = write!(body, " · <a href=\"{}\" rel=\"next\">next</a>", esc(&q.link(q.status, page + 1)));
        }
        body.push_str("</nav>\n");
    }
    page_of("DumbMonit", board, body)
}

fn page_of(title: &str, board: &Board, body: String) -> String {
    page(title, board.banner.as_deref(), &with_notices(board, body))
}

/// The page's body, after what the monitor must say about itself (the state cannot be saved).
fn with_notices(board: &Board, body: String) -> String {
    match board.persistence_problem() {
        Some(p) => format!("<p class=\"persistence\">{}</p>\n{body}", esc(&p)),
        None => body,
    }
}

fn table(out: &mut String, title: &str, headers: &[&str], rows: &[String], more: Option<String>) {
    let _ = write!(out, "<h2>{}</h2>\n<div class=\"scroll\"><table>\n<thead><tr>", esc(title));
    for h in headers {
        let _ = write!(out, "<th>{h}</th>");
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for r in rows {
        out.push_str(r);
        out.push('\n');
    }
    out.push_str("</tbody></table></div>\n");
    if let Some(m) = more {
        let _ = writeln!(out, "<p class=\"more\">{}</p>", esc(&m));
    }
}

fn why(lines: &[String]) -> String {
    lines.iter().map(|l| format!("<div>{}</div>", esc(l))).collect()
}

fn node_needs_attention(n: &NodeHealth) -> bool {
    !n.ready || n.under_pressure() || n.unschedulable || n.kubelet_skew || n.ready_transitions > 0
}

/// The Cluster panel, or None for an unknown cluster.
pub fn cluster(board: &Board, name: &str, query: &str) -> Option<String> {
    let c = board.cluster(name)?;
    let now = Timestamp::now();
    let week = query.split('&').any(|p| p == "range=7d");
    let mut body = String::new();
    let _ = writeln!(body, "<h1>{}</h1>", esc(&c.name));
    let version = c.health.as_ref().map(|h| h.version.clone()).unwrap_or_default();
    let _ = writeln!(
        body,
        "<p class=\"muted\">{} · {} · last cycle {}</p>",
        esc(&c.address),
        if version.is_empty() { "version unknown".into() } else { esc(&version) },
        when(c.last_cycle, now)
    );
    if let Some(a) = &c.agent {
        let _ = writeln!(
            body,
            "<p class=\"muted agent\">Read through its agent · last report {}</p>",
            when(a.last_report, now)
        );
        for n in a.notes() {
            let _ = writeln!(body, "<p class=\"stale agent\">{}</p>", esc(&n));
        }
    }
    let _ = writeln!(body, "<p class=\"sentence {}\">{}</p>", c.status(), esc(&c.sentence()));
    if let Some(e) = &c.error {
        let _ = writeln!(body, "<div class=\"error\"><strong>Cannot be read.</strong> {}</div>", esc(e));
        match c.last_good {
            Some(t) => {
                let _ = writeln!(
                    body,
                    "<p class=\"stale\">The data below is the last good data, from {} ({}).</p>",
                    clock(t),
                    ago(t, now)
                );
            }
            None => body.push_str("<p class=\"stale\">No cycle has read this cluster yet.</p>\n"),
        }
    }
    if let Some(h) = &c.health {
        let _ = writeln!(body, "<p class=\"counters\">{}</p>", esc(&h.counters()));
        if h.severity() != crate::health::Severity::Ok {
            problems(&mut body, board, &c, h, now);
        }
    }
    if let Some(h) = &c.health {
        capacity(&mut body, h);
        optional_reads(&mut body, h);
    }
    alerts(&mut body, &c, now);
    history(&mut body, board, &c, now, week);
    Some(page(&format!("{} · DumbMonit", c.name), board.banner.as_deref(), &with_notices(board, body)))
}

fn problems(body: &mut String, board: &Board, c: &ClusterView, h: &Health, now: Timestamp) {
    let mut nodes: Vec<&NodeHealth> = if h.nodes.len() <= ALL_NODES_UP_TO {
        h.nodes.iter().collect()
    } else {
        h.nodes.iter().filter(|n| node_needs_attention(n)).collect()
    };
    // Not ready first, then under pressure, then cordoned, then the rest.
    nodes.sort_by_key(|n| (n.ready, !n.under_pressure(), !n.unschedulable));
    if !nodes.is_empty() {
        let rows: Vec<String> = nodes
            .iter()
            .map(|n| {
                let pressure: Vec<&str> = n.pressure.iter().filter(|(_, on)| *on).map(|(c, _)| c.as_str()).collect();
                format!(
                    "<tr><td>{}</td><td class=\"{}\">{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"why\">{}</td></tr>",
                    esc(&n.name),
                    if n.ready { "ok" } else { "critical" },
                    esc(&n.ready_status),
                    if pressure.is_empty() { "–".into() } else { esc(&pressure.join(", ")) },
                    if n.unschedulable { "cordoned" } else { "–" },
                    esc(&n.kubelet_version),
                    why(&n.why)
                )
            })
            .collect();
        let more = h.nodes.len() - nodes.len();
        let more = (more > 0)
            .then(|| format!("and {} Ready, without pressure", plural(more as u64, "more node", "more nodes")));
        table(body, "Nodes", &["Node", "Ready", "Pressure", "Scheduling", "Kubelet", "Why"], &rows, more);
    }

    let pods = h.problem_pods();
    if !pods.is_empty() {
        let day_ago = now.as_second() - 86400;
        let store = board.reader();
        let rows: Vec<String> = pods
            .iter()
            .take(MAX_ROWS)
            .map(|p| {
                let history = store.pod_restarts(&c.name, &p.namespace, &p.name, day_ago).unwrap_or_default();
                let spark = if history.len() > 1 {
                    charts::sparkline(&history, day_ago, now.as_second())
                } else {
                    String::new()
                };
                format!(
                    "<tr><td>{}/{}</td><td class=\"{}\">{}</td><td>{} {spark}</td><td class=\"why\">{}</td></tr>",
                    esc(&p.namespace),
                    esc(&p.name),
                    if p.crashlooping { "critical" } else { "notice" },
                    esc(&p.problems().join(", ")),
                    p.restarts,
                    why(&p.why)
                )
            })
            .collect();
        drop(store);
        let more = (pods.len() > MAX_ROWS).then(|| format!("and {} more", pods.len() - MAX_ROWS));
        table(
            body,
            &format!("Pods needing attention ({})", pods.len()),
            &["Pod", "State", "Restarts", "Why"],
            &rows,
            more,
        );
    }

    let workloads: Vec<_> = h.workloads.iter().filter(|w| w.unavailable > 0).collect();
    if !workloads.is_empty() {
        let rows: Vec<String> = workloads
            .iter()
            .take(MAX_ROWS)
            .map(|w| {
                format!(
                    "<tr><td>{} {}/{}</td><td>{}/{}</td><td>{}</td><td class=\"why\">{}</td></tr>",
                    w.kind.as_str(),
                    esc(&w.namespace),
                    esc(&w.name),
                    w.ready,
                    w.desired,
                    w.unavailable,
                    why(&w.why)
                )
            })
            .collect();
        let more = (workloads.len() > MAX_ROWS).then(|| format!("and {} more", workloads.len() - MAX_ROWS));
        table(
            body,
            &format!("Workloads missing replicas ({})", workloads.len()),
            &["Workload", "Ready", "Unavailable", "Why"],
            &rows,
            more,
        );
    }

    let stuck: Vec<_> = h.workloads.iter().filter(|w| w.rollout_stuck).collect();
    if !stuck.is_empty() {
        let rows: Vec<String> = stuck
            .iter()
            .take(MAX_ROWS)
            .map(|w| {
                format!(
                    "<tr><td>{} {}/{}</td><td class=\"critical\">{}/{}</td><td class=\"why\">{}</td></tr>",
                    w.kind.as_str(),
                    esc(&w.namespace),
                    esc(&w.name),
                    w.updated,
                    w.desired,
                    why(&w.why)
                )
            })
            .collect();
        let more = (stuck.len() > MAX_ROWS).then(|| format!("and {} more", stuck.len() - MAX_ROWS));
        table(body, &format!("Stuck rollouts ({})", stuck.len()), &["Workload", "Updated", "Why"], &rows, more);
    }

    let claims: Vec<_> = h.pvcs.iter().filter(|p| p.stuck).collect();
    if !claims.is_empty() {
        let rows: Vec<String> = claims
            .iter()
            .take(MAX_ROWS)
            .map(|p| {
                format!(
                    "<tr><td>{}/{}</td><td>{}</td><td class=\"why\">{}</td></tr>",
                    esc(&p.namespace),
                    esc(&p.name),
                    esc(&p.phase),
                    why(&p.why)
                )
            })
            .collect();
        let more = (claims.len() > MAX_ROWS).then(|| format!("and {} more", claims.len() - MAX_ROWS));
        table(body, &format!("Stuck claims ({})", claims.len()), &["Claim", "Phase", "Why"], &rows, more);
    }

    if !h.events_by_reason.is_empty() {
        let top: Vec<(String, u64)> = h.events_by_reason.iter().take(20).cloned().collect();
        let _ = writeln!(
            body,
            "<h2>Warning events in the last hour, by reason</h2>\n<figure>{}</figure>",
            charts::bars("Warning events in the last hour, by reason", &top)
        );
        if h.events_by_reason.len() > top.len() {
            let _ = writeln!(body, "<p class=\"more\">and {} more reasons</p>", h.events_by_reason.len() - top.len());
        }
    }
}

/// What the optional reads say: aggregated APIs down, HPAs that cannot scale, the Metrics API's
/// diagnosis, and — once — what the service account may not read.
fn optional_reads(body: &mut String, h: &Health) {
    for e in h.expiring() {
        let which =
            if e.certificate == "serving" { "The API server's serving certificate" } else { "The client certificate" };
        let _ = writeln!(
            body,
            "<div class=\"{}\">{which} expires on {} ({}).</div>",
            if e.days < 7 { "error" } else { "notice" },
            esc(&e.not_after.strftime("%Y-%m-%d %H:%M UTC").to_string()),
            esc(&crate::health::in_days(e.days))
        );
    }
    let x = &h.extras;
    let jobs: Vec<_> = x.jobs.iter().flatten().filter(|j| !j.superseded).collect();
    if !jobs.is_empty() {
        let rows: Vec<String> = jobs
            .iter()
            .take(MAX_ROWS)
            .map(|j| {
                format!(
                    "<tr><td>{}/{}</td><td>{}</td><td class=\"why\">{}</td></tr>",
                    esc(&j.namespace),
                    esc(&j.name),
                    if j.owner.is_empty() { "–".to_string() } else { esc(&j.owner) },
                    esc(&j.why)
                )
            })
            .collect();
        let more = (jobs.len() > MAX_ROWS).then(|| format!("and {} more", jobs.len() - MAX_ROWS));
        table(body, &format!("Failed jobs ({})", jobs.len()), &["Job", "CronJob", "Why"], &rows, more);
    }
    let missed: Vec<_> = x.cronjobs.iter().flatten().filter(|c| c.missed).collect();
    if !missed.is_empty() {
        let rows: Vec<String> = missed
            .iter()
            .take(MAX_ROWS)
            .map(|c| {
                format!(
                    "<tr><td>{}/{}</td><td><code>{}</code></td><td class=\"why\">{}</td></tr>",
                    esc(&c.namespace),
                    esc(&c.name),
                    esc(&c.schedule),
                    why(&c.why)
                )
            })
            .collect();
        let more = (missed.len() > MAX_ROWS).then(|| format!("and {} more", missed.len() - MAX_ROWS));
        table(
            body,
            &format!("Cron jobs that missed their runs ({})", missed.len()),
            &["CronJob", "Schedule", "Why"],
            &rows,
            more,
        );
    }
    let down: Vec<_> = x.apiservices.iter().flatten().filter(|a| !a.available).collect();
    if !down.is_empty() {
        let rows: Vec<String> = down
            .iter()
            .take(MAX_ROWS)
            .map(|a| {
                format!(
                    "<tr><td>{}</td><td>{}</td><td class=\"critical\">{}</td><td class=\"why\">{}</td></tr>",
                    esc(&a.name),
                    esc(&a.service),
                    esc(if a.reason.is_empty() { "not available" } else { &a.reason }),
                    esc(&a.message)
                )
            })
            .collect();
        table(body, "Aggregated APIs not available", &["APIService", "Service", "Reason", "Message"], &rows, None);
    }
    match &x.metrics_api {
        MetricsApi::Unavailable(d) => {
            let _ = writeln!(body, "<div class=\"error\">{}</div>", esc(d));
        }
        MetricsApi::NotInstalled => {
            let _ = writeln!(body, "<p class=\"muted\">{}</p>", esc(&x.metrics_api.sentence()));
        }
        MetricsApi::Available | MetricsApi::NotGranted | MetricsApi::NotRead => {}
    }
    let hpas: Vec<_> = x.hpas.iter().flatten().filter(|a| !a.scaling_active || a.at_max).collect();
    if !hpas.is_empty() {
        let rows: Vec<String> = hpas
            .iter()
            .take(MAX_ROWS)
            .map(|a| {
                let state = match (a.scaling_active, a.at_max) {
                    (false, _) => format!("cannot scale: {}", a.reason),
                    (true, _) => "at maxReplicas".to_string(),
                };
                format!(
                    "<tr><td>{}/{}</td><td class=\"notice\">{}</td><td>{}/{}</td><td class=\"why\">{}</td></tr>",
                    esc(&a.namespace),
                    esc(&a.name),
                    esc(&state),
                    a.current_replicas,
                    a.max_replicas,
                    esc(&a.message)
                )
            })
            .collect();
        let more = (hpas.len() > MAX_ROWS).then(|| format!("and {} more", hpas.len() - MAX_ROWS));
        table(body, &format!("Autoscalers ({})", hpas.len()), &["HPA", "State", "Replicas / max", "Why"], &rows, more);
    }
    if !x.not_granted.is_empty() {
        let _ = writeln!(
            body,
            "<p class=\"muted\">Not granted to this service account: {} (optional; <code>dumbmonit rbac --optional</code> adds them).</p>",
            esc(&x.not_granted.join(", "))
        );
    }
    for f in &x.failed {
        let _ = writeln!(body, "<p class=\"muted\">Optional read failed: {}</p>", esc(f));
    }
}

/// Requests and limits against allocatable, per node: every node of a small cluster; in a large
/// one, those overcommitted or with 90% or more of a resource requested.
fn capacity(body: &mut String, h: &Health) {
    let share = |used: i64, total: Option<i64>| total.filter(|t| *t > 0).map(|t| used as f64 / t as f64);
    let busy = |n: &NodeHealth| {
        n.overcommitted()
            || share(n.requested.cpu_requests, n.allocatable_cpu).is_some_and(|s| s >= 0.9)
            || share(n.requested.memory_requests, n.allocatable_memory).is_some_and(|s| s >= 0.9)
    };
    let mut nodes: Vec<&NodeHealth> = if h.nodes.len() <= ALL_NODES_UP_TO {
        h.nodes.iter().collect()
    } else {
        h.nodes.iter().filter(|n| busy(n)).collect()
    };
    if nodes.is_empty() {
        return;
    }
    nodes.sort_by_key(|n| !n.overcommitted());
    let metrics = h.extras.metrics_available();
    let cell = |what: &str, used: i64, total: Option<i64>, shown: String| match total {
        Some(t) if t > 0 => format!(
            "<td>{} {shown} <span class=\"muted\">({:.0}%)</span></td>",
            charts::usage_bar(what, used as f64, t as f64),
            used as f64 / t as f64 * 100.0
        ),
        _ => format!("<td>{shown} <span class=\"muted\">(allocatable unknown)</span></td>"),
    };
    let cores = |m: i64| format!("{:.2}", m as f64 / 1000.0);
    let gib = |b: i64| format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64);
    let rows: Vec<String> = nodes
        .iter()
        .take(MAX_ROWS)
        .map(|n| {
            let r = &n.requested;
            let used = match (n.usage_cpu, n.usage_memory) {
                (Some(c), Some(m)) => {
                    format!(
                        "{}{}",
                        cell("CPU used", c, n.allocatable_cpu, cores(c)),
                        cell("memory used", m, n.allocatable_memory, gib(m))
                    )
                }
                _ if metrics => "<td>–</td><td>–</td>".to_string(),
                _ => String::new(),
            };
            format!(
                "<tr><td>{}</td>{used}{}{}{}{}<td>{}</td></tr>",
                esc(&n.name),
                cell("CPU requests", r.cpu_requests, n.allocatable_cpu, cores(r.cpu_requests)),
                cell("CPU limits", r.cpu_limits, n.allocatable_cpu, cores(r.cpu_limits)),
                cell("memory requests", r.memory_requests, n.allocatable_memory, gib(r.memory_requests)),
                cell("memory limits", r.memory_limits, n.allocatable_memory, gib(r.memory_limits)),
                if n.overcommitted() { "<span class=\"critical\">limits overcommitted</span>" } else { "–" }
            )
        })
        .collect();
    let more = (nodes.len() > MAX_ROWS).then(|| format!("and {} more", nodes.len() - MAX_ROWS));
    let title = if h.nodes.len() <= ALL_NODES_UP_TO {
        "Requests and limits against allocatable".to_string()
    } else {
        format!("Nodes overcommitted or 90% requested ({})", nodes.len())
    };
    let mut headers = vec!["Node"];
    if metrics {
        headers.extend(["CPU used", "Memory used"]);
    }
    headers.extend(["CPU requests", "CPU limits", "Memory requests", "Memory limits", "Overcommit"]);
    table(body, &title, &headers, &rows, more);
}

fn alerts(body: &mut String, c: &ClusterView, now: Timestamp) {
    if c.alerts.is_empty() {
        return;
    }
    // Already in the order shown: firing first, then the most severe, then the oldest.
    let rows: Vec<String> = c
        .alerts
        .iter()
        .take(MAX_ROWS)
        .map(|a| {
            let object: Vec<String> = a
                .labels
                .iter()
                .filter(|(k, _)| !["alertname", "severity", "cluster"].contains(&k.as_str()))
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            let (state, since) = match a.fired_at {
                Some(t) => ("firing", t),
                None => ("pending", a.active_at),
            };
            format!(
                "<tr><td>{}</td><td class=\"{}\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{} <span class=\"muted\">({})</span></td></tr>",
                esc(&a.alertname),
                if a.severity == crate::rules::Severity::Warning { "critical" } else { "notice" },
                a.severity.as_str(),
                esc(&object.join(" ")),
                esc(&a.summary),
                state,
                clock(since),
                ago(since, now)
            )
        })
        .collect();
    table(
        body,
        &format!("Alerts ({})", c.alerts.len()),
        &["Alert", "Severity", "Object", "Summary", "State", "Since"],
        &rows,
        None,
    );
}

fn history(body: &mut String, board: &Board, c: &ClusterView, now: Timestamp, week: bool) {
    let span = if week { 7 * 86400 } else { 86400 };
    let to = now.as_second();
    let from = to - span;
    let points = board.reader().history(&c.name, from).unwrap_or_default();
    let line =
        |f: fn(&crate::state::HistoryPoint) -> i64| points.iter().map(|p| (p.time, f(p) as f64)).collect::<Vec<_>>();
    let _ = writeln!(
        body,
        "<h2>History, last {}</h2>\n<nav class=\"range\"><a href=\"?range=24h\">24 hours</a><a href=\"?range=7d\">7 days</a></nav>\n<div class=\"charts\">",
        if week { "7 days" } else { "24 hours" }
    );
    let charts = [
        (
            "Nodes ready",
            vec![
                Series { name: "nodes", color: "#8c959f", points: line(|p| p.nodes) },
                Series { name: "ready", color: "#1a7f37", points: line(|p| p.nodes_ready) },
            ],
        ),
        (
            "Pods by state",
            vec![
                Series { name: "running", color: "#0969da", points: line(|p| p.pods_running) },
                Series { name: "pending", color: "#bf8700", points: line(|p| p.pods_pending) },
                Series { name: "failed", color: "#cf222e", points: line(|p| p.pods_failed) },
            ],
        ),
        (
            "Crash-looping pods",
            vec![Series { name: "crash-looping", color: "#cf222e", points: line(|p| p.pods_crashlooping) }],
        ),
        (
            "Warning events in the last hour",
            vec![Series { name: "warning events", color: "#bf8700", points: line(|p| p.warning_events) }],
        ),
    ];
    for (title, series) in charts {
        let _ = writeln!(
            body,
            "<figure><figcaption>{title}</figcaption>{}</figure>",
            charts::line_chart(title, from, to, &series)
        );
    }
    body.push_str("</div>\n");
}
