//! The text report: first line the one sentence, then what needs attention and why.

use crate::health::why::said;
use std::fmt::Write;

use crate::health::{Health, PodHealth};
use crate::lang::Lang;

/// At most this many rows of a problem table; the rest are counted.
const MAX_ROWS: usize = 50;
/// Clusters with at most this many nodes list every node; larger ones only those that need attention.
const ALL_NODES_UP_TO: usize = 20;

pub fn render(address: &str, h: &Health, lang: Lang) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", h.summary_in(lang));
    let version = if h.version.is_empty() { lang.t("text-version-unknown") } else { h.version.clone() };
    let _ = writeln!(
        out,
        "{}",
        lang.tr(
            "text-cluster",
            &[("address", address.into()), ("version", version.into()), ("counters", h.counters_in(lang).into())]
        )
    );
    extras(&mut out, h, lang);
    if h.severity() == crate::health::Grade::Ok {
        return out;
    }

    let attention = |n: &&std::sync::Arc<crate::health::NodeHealth>| {
        !n.ready
            || n.under_pressure()
            || n.unschedulable
            || n.kubelet_skew
            || n.ready_transitions > 0
            || !n.taints.is_empty()
            || n.too_many_pods()
    };
    let nodes: Vec<_> = if h.nodes.len() <= ALL_NODES_UP_TO {
        h.nodes.iter().collect()
    } else {
        h.nodes.iter().filter(attention).collect()
    };
    if !nodes.is_empty() {
        let rows = nodes
            .iter()
            .map(|n| {
                let pressure: Vec<&str> = n.pressure.iter().filter(|(_, on)| *on).map(|(c, _)| c.as_str()).collect();
                Row {
                    cells: vec![
                        n.name.clone(),
                        n.ready_status.clone(),
                        if pressure.is_empty() { "-".into() } else { pressure.join(",") },
                        if n.unschedulable { lang.t("cordoned") } else { "-".into() },
                        n.kubelet_version.clone(),
                    ],
                    why: said(&n.why, lang),
                }
            })
            .collect();
        let more = h.nodes.len() - nodes.len();
        let more = (more > 0).then(|| lang.tr("more-nodes", &[("count", more.into())]));
        let headers =
            ["text-col-name", "text-col-ready", "text-col-pressure", "text-col-scheduling", "text-col-kubelet"];
        table(&mut out, &lang.t("nodes-title"), &headers.map(|h| lang.t(h)), rows, more, lang);
    }

    let pods: Vec<&PodHealth> = h.problem_pods().iter().map(|p| &**p).collect();
    if !pods.is_empty() {
        let title = lang.tr("pods-title", &[("count", pods.len().into())]);
        let (rows, more) = capped(&pods, lang, |p| Row {
            cells: vec![format!("{}/{}", p.namespace, p.name), p.problems_in(lang).join(", "), p.restarts.to_string()],
            why: said(&p.why, lang),
        });
        let headers = ["text-col-pod", "text-col-state", "text-col-restarts"];
        table(&mut out, &title, &headers.map(|h| lang.t(h)), rows, more, lang);
    }

    let workloads: Vec<_> = h.workloads.iter().filter(|w| w.unavailable > 0).collect();
    if !workloads.is_empty() {
        let title = lang.tr("workloads-title", &[("count", workloads.len().into())]);
        let (rows, more) = capped(&workloads, lang, |w| Row {
            cells: vec![
                format!("{} {}/{}", w.kind.as_str(), w.namespace, w.name),
                format!("{}/{}", w.ready, w.desired),
                w.unavailable.to_string(),
            ],
            why: said(&w.why, lang),
        });
        let headers = ["text-col-workload", "text-col-ready", "text-col-unavailable"];
        table(&mut out, &title, &headers.map(|h| lang.t(h)), rows, more, lang);
    }

    let stuck: Vec<_> = h.workloads.iter().filter(|w| w.rollout_stuck).collect();
    if !stuck.is_empty() {
        let title = lang.tr("rollouts-title", &[("count", stuck.len().into())]);
        let (rows, more) = capped(&stuck, lang, |w| Row {
            cells: vec![
                format!("{} {}/{}", w.kind.as_str(), w.namespace, w.name),
                format!("{}/{}", w.updated, w.desired),
            ],
            why: said(&w.why, lang),
        });
        let headers = ["text-col-workload", "text-col-updated"];
        table(&mut out, &title, &headers.map(|h| lang.t(h)), rows, more, lang);
    }

    let claims: Vec<_> = h.pvcs.iter().filter(|c| c.stuck).collect();
    if !claims.is_empty() {
        let title = lang.tr("claims-title", &[("count", claims.len().into())]);
        let (rows, more) = capped(&claims, lang, |c| Row {
            cells: vec![format!("{}/{}", c.namespace, c.name), c.phase.clone()],
            why: said(&c.why, lang),
        });
        let headers = ["text-col-claim", "text-col-phase"];
        table(&mut out, &title, &headers.map(|h| lang.t(h)), rows, more, lang);
    }

    if !h.events_by_reason.is_empty() {
        let _ = writeln!(out, "\n{}", lang.t("events-title"));
        let width = h.events_by_reason.iter().map(|(_, n)| n.to_string().len()).max().unwrap_or(1);
        for (reason, n) in h.events_by_reason.iter().take(MAX_ROWS) {
            let _ = writeln!(out, "  {n:>width$}  {}", crate::health::why::clean_line(reason, 80));
        }
        if h.events_by_reason.len() > MAX_ROWS {
            let _ = writeln!(
                out,
                "  {}",
                lang.tr("more-reasons", &[("count", (h.events_by_reason.len() - MAX_ROWS).into())])
            );
        }
    }
    out
}

/// The optional reads' findings: aggregated APIs down, the Metrics API's diagnosis, HPAs that
/// cannot scale. Nothing when all is well (or not read).
fn extras(out: &mut String, h: &Health, lang: Lang) {
    use crate::health::policy::Fullness;
    let x = &h.extras;
    for line in x.access_lines_in(lang) {
        let _ = writeln!(out, "{line}");
    }
    for a in x.apiservices.iter().flatten().filter(|a| !a.available) {
        let args = [("name", (&a.name).into()), ("service", (&a.service).into()), ("why", a.why().into())];
        let _ = writeln!(out, "{}", lang.tr("text-apiservice", &args));
    }
    if let crate::health::extras::MetricsApi::Unavailable(d) = &x.metrics_api {
        let _ = writeln!(out, "{d}");
    }
    for a in x.hpas.iter().flatten().filter(|a| !a.scaling_active) {
        let args = [
            ("namespace", (&a.namespace).into()),
            ("name", (&a.name).into()),
            ("reason", (&a.reason).into()),
            ("message", (&a.message).into()),
        ];
        let _ = writeln!(out, "{}", lang.tr("text-hpa", &args));
    }
    for e in h.expiring() {
        let args = [
            ("certificate", e.certificate.into()),
            ("date", crate::lang::Arg::Moment(e.not_after.as_second())),
            ("when", crate::health::days_when(e.days).into()),
            ("days", e.days.abs().into()),
        ];
        let _ = writeln!(out, "{}", lang.tr("text-certificate", &args));
    }
    for j in x.jobs.iter().flatten().filter(|j| !j.superseded) {
        let args = [
            ("namespace", (&j.namespace).into()),
            ("name", (&j.name).into()),
            ("of", if j.owner.is_empty() { "none" } else { "cronjob" }.into()),
            ("owner", (&j.owner).into()),
            ("why", (&j.why).into()),
        ];
        let _ = writeln!(out, "{}", lang.tr("text-job", &args));
    }
    for c in x.cronjobs.iter().flatten().filter(|c| c.missed) {
        let args = [
            ("namespace", (&c.namespace).into()),
            ("name", (&c.name).into()),
            ("why", said(&c.why, lang).join("; ").into()),
        ];
        let _ = writeln!(out, "{}", lang.tr("text-cronjob", &args));
    }
    for c in x.control_plane.iter().flatten().filter(|c| c.down) {
        let what = lang.tr(
            "rule-control-plane-component-down.description",
            &[("component", c.component.into()), ("holder", (&c.holder).into())],
        );
        let args = [("component", c.component.into()), ("seconds", c.age_seconds.into()), ("what", what.into())];
        let _ = writeln!(out, "{}", lang.tr("text-control-plane", &args));
    }
    // Those that refuse what they intercept first.
    let mut webhooks: Vec<_> = x.webhooks.iter().flatten().filter(|w| w.unavailable()).collect();
    webhooks.sort_by_key(|w| !w.fails_closed());
    for w in webhooks {
        let _ = writeln!(out, "{}", lang.tr("text-webhook", &w.args()));
    }
    for p in x.pdbs.iter().flatten().filter(|p| p.short) {
        let args = [
            ("namespace", (&p.namespace).into()),
            ("name", (&p.name).into()),
            ("current", p.current_healthy.into()),
            ("desired", p.desired_healthy.into()),
        ];
        let _ = writeln!(out, "{}", lang.tr("text-pdb", &args));
    }
    for q in x.quotas.iter().flatten() {
        let level = match q.fullness {
            Some(Fullness::Exceeded) => "exceeded",
            Some(Fullness::Full) => "full",
            Some(Fullness::AlmostFull) => "almost",
            None => continue,
        };
        let args = [
            ("namespace", (&q.namespace).into()),
            ("name", (&q.quota).into()),
            ("resource", (&q.resource).into()),
            ("level", level.into()),
            ("used", crate::lang::quantity(&q.resource, q.used).into()),
            ("hard", crate::lang::quantity(&q.resource, q.hard).into()),
        ];
        let _ = writeln!(out, "{}", lang.tr("text-quota", &args));
    }
    for v in x.pvs.iter().flatten().filter(|v| v.in_error).map(|v| &v.volume) {
        let said = lang.tr("text-pv", &[("name", (&v.name).into()), ("phase", (&v.phase).into())]);
        match v.why.is_empty() {
            true => writeln!(out, "{said}"),
            false => writeln!(out, "{said}{}{}", lang.t("colon"), v.why),
        }
        .ok();
    }
    for l in h.notice_lines(usize::MAX) {
        let _ = writeln!(out, "{}", lang.tr(&l.words, &l.args));
    }
    for line in &x.unreadable {
        let _ = writeln!(out, "{line}");
    }
    if !x.not_granted.is_empty() {
        let _ = writeln!(out, "{}", lang.tr("text-not-granted", &[("resources", x.not_granted.join(", ").into())]));
    }
}

/// The first `MAX_ROWS` items as rows, and the line that counts the rest.
fn capped<T>(items: &[&T], lang: Lang, row: impl Fn(&T) -> Row) -> (Vec<Row>, Option<String>) {
    let rows = items.iter().take(MAX_ROWS).map(|i| row(i)).collect();
    (rows, (items.len() > MAX_ROWS).then(|| lang.tr("and-more", &[("count", (items.len() - MAX_ROWS).into())])))
}

struct Row {
    cells: Vec<String>,
    why: Vec<String>,
}

/// A titled table whose last column, WHY, may hold several lines.
fn table(out: &mut String, title: &str, headers: &[String], rows: Vec<Row>, more: Option<String>, lang: Lang) {
    let _ = writeln!(out, "\n{title}");
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for r in &rows {
        for (w, c) in widths.iter_mut().zip(&r.cells) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: &[String]| -> String {
        let mut s = String::from("  ");
        for (c, w) in cells.iter().zip(&widths) {
            let _ = write!(s, "{c}{}  ", " ".repeat(w - c.chars().count()));
        }
        s
    };
    let _ = writeln!(out, "{}{}", line(headers), lang.t("text-col-why"));
    let indent = " ".repeat(2 + widths.iter().map(|w| w + 2).sum::<usize>());
    for r in rows {
        let cells = line(&r.cells);
        match r.why.first() {
            Some(first) => {
                let _ = writeln!(out, "{cells}{first}");
            }
            None => {
                let _ = writeln!(out, "{}", cells.trim_end());
            }
        }
        for w in r.why.iter().skip(1) {
            let _ = writeln!(out, "{indent}{w}");
        }
    }
    if let Some(m) = more {
        let _ = writeln!(out, "  {m}");
    }
}
