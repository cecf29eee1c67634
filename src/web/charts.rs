//! Charts drawn on the server as SVG: no script, no external resource. Colours are presentation
//! attributes, so the strict Content-Security-Policy needs no inline style.

use std::fmt::Write;

use maud::{Markup, html};

use super::html::{lang, t, tr};
/// One line of a chart.
pub struct Series<'a> {
    pub name: &'a str,
    pub color: &'a str,
    /// (Unix seconds, value), oldest first.
    pub points: Vec<(i64, f64)>,
}

const W: f64 = 480.0;
const H: f64 = 190.0;
const LEFT: f64 = 44.0;
const RIGHT: f64 = 470.0;
const TOP: f64 = 12.0;
const BOTTOM: f64 = 150.0;
/// At most this many points per line; more are folded (the maximum of each bucket).
const MAX_POINTS: usize = 360;

/// A ceiling for the y axis: 1, 2, 5, 10, 20, 50 …
fn nice_max(v: f64) -> f64 {
    if v <= 1.0 {
        return 1.0;
    }
    let mag = 10f64.powf(v.log10().floor());
    [1.0, 2.0, 5.0, 10.0].into_iter().map(|m| m * mag).find(|c| *c >= v).unwrap_or(10.0 * mag)
}

fn fold(points: &[(i64, f64)], from: i64, to: i64) -> Vec<(i64, f64)> {
    if points.len() <= MAX_POINTS {
        return points.to_vec();
    }
    let width = ((to - from) as f64 / MAX_POINTS as f64).max(1.0);
    let mut out: Vec<(i64, f64)> = Vec::with_capacity(MAX_POINTS);
    let mut bucket = i64::MIN;
    for &(t, v) in points {
        let b = ((t - from) as f64 / width) as i64;
        match out.last_mut() {
            Some(last) if b == bucket => last.1 = last.1.max(v),
            _ => {
                bucket = b;
                out.push((t, v));
            }
        }
    }
    out
}

fn label_time(t: i64, span: i64) -> String {
    let ts = jiff::Timestamp::from_second(t).unwrap_or_default();
    if span > 2 * 86400 { ts.strftime("%a %d").to_string() } else { ts.strftime("%H:%M").to_string() }
}

/// An axis' value as the reader's language writes it: `2.5`, « 2,5 ».
fn number(v: f64) -> String {
    let text = v.to_string();
    if lang() == crate::lang::Lang::Fr { text.replace('.', ",") } else { text }
}

/// A number with one decimal, as the charts' coordinates are written.
fn d1(v: f64) -> String {
    format!("{v:.1}")
}

/// A line chart of `series` over [from, to].
pub fn line_chart(title: &str, from: i64, to: i64, series: &[Series]) -> Markup {
    let span = (to - from).max(1);
    let x = |t: i64| LEFT + (t - from) as f64 / span as f64 * (RIGHT - LEFT);
    let max = nice_max(series.iter().flat_map(|s| s.points.iter().map(|p| p.1)).fold(0.0, f64::max));
    let y = |v: f64| BOTTOM - v / max * (BOTTOM - TOP);
    let ticks = if span > 2 * 86400 { 7 } else { 4 };
    let empty = series.iter().all(|s| s.points.is_empty());
    // Steps: a value holds until the next sample.
    let path = |pts: &[(i64, f64)]| {
        let mut d = String::new();
        for (i, (t, v)) in pts.iter().enumerate() {
            if i == 0 {
                let _ = write!(d, "{:.1},{:.1}", x(*t), y(*v));
            } else {
                let _ = write!(d, " {:.1},{:.1} {:.1},{:.1}", x(*t), y(pts[i - 1].1), x(*t), y(*v));
            }
        }
        d
    };
    let mut legend = Vec::new();
    let mut lx = LEFT;
    for s in series {
        legend.push((lx, s));
        lx += 24.0 + 7.0 * s.name.chars().count() as f64;
    }
    html! {
        svg viewBox={ "0 0 " (W) " " (H) } width=(W) height=(H) role="img" aria-label=(title) xmlns="http://www.w3.org/2000/svg" {
            title { (title) }
            // Axes and grid.
            @for frac in [0.0, 0.5, 1.0] {
                @let v = max * frac;
                line x1=(LEFT) x2=(RIGHT) y1=(d1(y(v))) y2=(d1(y(v))) stroke="#d0d7de" stroke-width="1" {}
                text x=(LEFT - 6.0) y=(d1(y(v) + 4.0)) font-size="11" text-anchor="end" fill="#57606a" { (number(v)) }
            }
            @for i in 0..=ticks {
                @let t = from + span * i / ticks;
                text x=(d1(x(t).clamp(LEFT + 14.0, RIGHT - 14.0))) y=(BOTTOM + 15.0) font-size="11" text-anchor="middle" fill="#57606a" { (label_time(t, span)) }
            }
            @if empty {
                text x=((LEFT + RIGHT) / 2.0) y=((TOP + BOTTOM) / 2.0) font-size="13" text-anchor="middle" fill="#57606a" { (t("chart-no-data")) }
            }
            @for s in series {
                @let pts = fold(&s.points, from, to);
                @if !pts.is_empty() {
                    polyline points=(path(&pts)) fill="none" stroke=(s.color) stroke-width="1.8" { title { (s.name) } }
                }
            }
            // Legend.
            @for (lx, s) in &legend {
                rect x=(d1(*lx)) y=(H - 16.0) width="10" height="10" fill=(s.color) {}
                text x=(d1(lx + 14.0)) y=(H - 7.0) font-size="11" fill="#1f2328" { (s.name) }
            }
        }
    }
}

/// Horizontal bars: one per (label, count), largest first as given.
pub fn bars(title: &str, items: &[(String, u64)]) -> Markup {
    let row = 20.0;
    let height = TOP + row * items.len() as f64 + 6.0;
    let max = items.iter().map(|i| i.1).max().unwrap_or(1).max(1) as f64;
    let label_w = 200.0;
    html! {
        svg viewBox={ "0 0 " (W) " " (height) } width=(W) height=(height) role="img" aria-label=(title) xmlns="http://www.w3.org/2000/svg" {
            title { (title) }
            @for (i, (label, n)) in items.iter().enumerate() {
                @let yy = TOP + row * i as f64;
                @let w = (*n as f64 / max * (W - label_w - 50.0)).max(1.0);
                @let shown: String = label.chars().take(30).collect();
                text x=(d1(label_w - 6.0)) y=(d1(yy + 11.0)) font-size="12" text-anchor="end" fill="#1f2328" { (shown) }
                rect x=(label_w) y=(d1(yy)) width=(d1(w)) height="14" fill="#bf8700" {}
                text x=(d1(label_w + w + 5.0)) y=(d1(yy + 11.0)) font-size="12" fill="#57606a" { (n) }
            }
        }
    }
}

/// A small step line of a pod's restarts over [from, to].
pub fn sparkline(points: &[(i64, i64)], from: i64, to: i64) -> Markup {
    let (w, h) = (90.0, 18.0);
    let span = (to - from).max(1) as f64;
    let min = points.iter().map(|p| p.1).min().unwrap_or(0);
    let max = points.iter().map(|p| p.1).max().unwrap_or(0);
    let range = ((max - min) as f64).max(1.0);
    let x = |t: i64| ((t.max(from) - from) as f64 / span * w).clamp(0.0, w);
    let y = |v: i64| h - 2.0 - (v - min) as f64 / range * (h - 4.0);
    let mut d = String::new();
    for (i, (t, v)) in points.iter().enumerate() {
        if i > 0 {
            let _ = write!(d, " {:.1},{:.1}", x(*t), y(points[i - 1].1));
        }
        let _ = write!(d, " {:.1},{:.1}", x(*t), y(*v));
    }
    if let Some((_, v)) = points.last() {
        let _ = write!(d, " {w:.1},{:.1}", y(*v));
    }
    html! {
        svg viewBox={ "0 0 " (w) " " (h) } width=(w) height=(h) role="img" aria-label=(t("sparkline")) xmlns="http://www.w3.org/2000/svg" {
            title { (tr("sparkline.range", &[("min", min.into()), ("max", max.into())])) }
            polyline points=(d.trim()) fill="none" stroke="#cf222e" stroke-width="1.5" {}
        }
    }
}

/// A bar of `used` against `total`: filled to the share (red past 100%), with the percentage
/// as its accessible name.
pub fn usage_bar(what: &str, used: f64, total: f64) -> Markup {
    let (w, h) = (120.0, 10.0);
    let share = if total > 0.0 { used / total } else { 0.0 };
    let fill = if share > 1.0 { "#cf222e" } else { "#0969da" };
    let label = tr("usage-bar", &[("what", what.into()), ("percent", format!("{:.0}", share * 100.0).into())]);
    html! {
        svg viewBox={ "0 0 " (w) " " (h) } width=(w) height=(h) role="img" aria-label=(label) xmlns="http://www.w3.org/2000/svg" {
            title { (label) }
            rect width=(w) height=(h) fill="#eaeef2" {}
            rect width=(d1(share.clamp(0.0, 1.0) * w)) height=(h) fill=(fill) {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_bars_fill_to_the_share_and_turn_red_past_the_whole() {
        let half = usage_bar("CPU requests", 1.0, 2.0).into_string();
        assert!(half.contains("<rect width=\"60.0\" height=\"10\" fill=\"#0969da\"></rect>"), "{half}");
        assert!(half.contains("CPU requests: 50% of allocatable"));
        let over = usage_bar("memory limits", 3.0, 2.0).into_string();
        assert!(over.contains("<rect width=\"120.0\" height=\"10\" fill=\"#cf222e\"></rect>"), "{over}");
        assert!(over.contains("150% of allocatable"));
    }

    #[test]
    fn axes_are_rounded_and_labels_escaped() {
        assert_eq!(nice_max(0.0), 1.0);
        assert_eq!(nice_max(3.0), 5.0);
        assert_eq!(nice_max(42.0), 50.0);
        assert_eq!(nice_max(100.0), 100.0);
        let svg =
            line_chart("<b>", 0, 3600, &[Series { name: "a\"b", color: "#000", points: vec![(0, 1.0), (1800, 3.0)] }])
                .into_string();
        assert!(svg.contains("<title>&lt;b&gt;</title>") && svg.contains("a&quot;b") && !svg.contains("<b>"));
        assert!(svg.contains("<polyline"));
        assert!(line_chart("t", 0, 10, &[]).into_string().contains("no data yet"));
        assert!(bars("r", &[("<script>".into(), 3)]).into_string().contains("&lt;script&gt;"));
    }

    #[test]
    fn many_points_are_folded() {
        let points: Vec<(i64, f64)> = (0..10_000).map(|i| (i * 60, (i % 7) as f64)).collect();
        assert!(fold(&points, 0, 600_000).len() <= MAX_POINTS + 1);
    }
}
