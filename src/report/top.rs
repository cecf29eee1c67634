//! `dumbmonit top`: usage per node or pod as `kubectl top` prints it, from the Metrics API; when
//! that API cannot be read, why, and what the pods request and limit per node instead.

use std::fmt::Write;

use crate::health::Health;
use crate::health::extras::MetricsApi;

fn cpu(millicores: i64) -> String {
    format!("{millicores}m")
}

fn mem(bytes: i64) -> String {
    format!("{}Mi", bytes / (1024 * 1024))
}

fn percent(used: i64, total: Option<i64>) -> String {
    match total {
        Some(t) if t > 0 => format!("{}%", used * 100 / t),
        _ => "<unknown>".into(),
    }
}

/// Left-aligned columns, three spaces apart, as kubectl prints them.
fn columns(out: &mut String, rows: &[Vec<String>]) {
    let widths: Vec<usize> = (0..rows.first().map_or(0, Vec::len))
        .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    for r in rows {
        let line: Vec<String> = r.iter().zip(&widths).map(|(c, w)| format!("{c:<w$}")).collect();
        let _ = writeln!(out, "{}", line.join("   ").trim_end());
    }
}

/// The text and the exit status: 0 with usage, 1 without.
pub fn render(h: &Health, pods: bool, lang: crate::lang::Lang) -> (String, u8) {
    let mut out = String::new();
    if h.extras.metrics_api == MetricsApi::Available {
        let mut rows = Vec::new();
        if pods {
            rows.push(["NAMESPACE", "NAME", "CPU(cores)", "MEMORY(bytes)"].map(String::from).to_vec());
            let mut usage: Vec<_> = h.extras.pod_usage.iter().collect();
            usage.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
            for p in usage {
                rows.push(vec![p.namespace.clone(), p.name.clone(), cpu(p.cpu), mem(p.memory)]);
            }
        } else {
            rows.push(["NAME", "CPU(cores)", "CPU(%)", "MEMORY(bytes)", "MEMORY(%)"].map(String::from).to_vec());
            for n in &h.nodes {
                match (n.usage_cpu, n.usage_memory) {
                    (Some(c), Some(m)) => rows.push(vec![
                        n.name.clone(),
                        cpu(c),
                        percent(c, n.allocatable_cpu),
                        mem(m),
                        percent(m, n.allocatable_memory),
                    ]),
                    _ => rows.push(vec![
                        n.name.clone(),
                        "<unknown>".into(),
                        "<unknown>".into(),
                        "<unknown>".into(),
                        "<unknown>".into(),
                    ]),
                }
            }
        }
        columns(&mut out, &rows);
        return (out, 0);
    }
    let _ = writeln!(out, "{}", h.extras.metrics_api.sentence_in(lang));
    let _ = writeln!(out);
    let _ = writeln!(out, "{}", lang.t("top-requests"));
    let mut rows = vec![
        ["NAME", "CPU REQUESTS", "CPU LIMITS", "MEMORY REQUESTS", "MEMORY LIMITS", "ALLOCATABLE"]
            .map(String::from)
            .to_vec(),
    ];
    for n in &h.nodes {
        let r = &n.requested;
        let allocatable = format!(
            "{}, {}",
            n.allocatable_cpu.map(cpu).unwrap_or_else(|| "<unknown>".into()),
            n.allocatable_memory.map(mem).unwrap_or_else(|| "<unknown>".into())
        );
        let over = if n.overcommitted() { format!("   {}", lang.t("top-overcommitted")) } else { String::new() };
        rows.push(vec![
            n.name.clone(),
            format!("{} ({})", cpu(r.cpu_requests), percent(r.cpu_requests, n.allocatable_cpu)),
            format!("{} ({})", cpu(r.cpu_limits), percent(r.cpu_limits, n.allocatable_cpu)),
            format!("{} ({})", mem(r.memory_requests), percent(r.memory_requests, n.allocatable_memory)),
            format!("{} ({})", mem(r.memory_limits), percent(r.memory_limits, n.allocatable_memory)),
            format!("{allocatable}{over}"),
        ]);
    }
    columns(&mut out, &rows);
    (out, 1)
}
