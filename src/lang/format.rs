//! Numbers and dates as each language writes them: a decimal comma and « 1 déc. 2026 06:35 UTC »
//! in French, a decimal point and « 2026-12-01 06:35 UTC » in English.

use jiff::Timestamp;
use jiff::tz::TimeZone;

use super::Lang;

/// `value` with `places` decimals: `1.5` in English, `1,5` in French.
pub fn decimal(lang: Lang, value: f64, places: usize) -> String {
    let text = format!("{value:.places$}");
    match lang {
        Lang::En => text,
        Lang::Fr => text.replace('.', ","),
    }
}

const MONTHS_FR: [&str; 12] =
    ["janv.", "févr.", "mars", "avr.", "mai", "juin", "juil.", "août", "sept.", "oct.", "nov.", "déc."];

/// A moment in UTC, to the minute, on a 24-hour clock.
pub fn date_time(lang: Lang, t: Timestamp) -> String {
    let d = t.to_zoned(TimeZone::UTC);
    match lang {
        Lang::En => d.strftime("%Y-%m-%d %H:%M UTC").to_string(),
        Lang::Fr => format!(
            "{} {} {} {:02}:{:02} UTC",
            d.day(),
            MONTHS_FR[usize::try_from(d.month() - 1).unwrap_or(0)],
            d.year(),
            d.hour(),
            d.minute()
        ),
    }
}

/// A quota's quantity as Kubernetes writes one: bytes of memory and storage in binary units
/// (`4Gi`, `512Mi`), other resources as a number (`1.5` cores, `11` pods).
pub fn quantity(resource: &str, value: f64) -> String {
    let number = |v: f64| {
        let text = format!("{v:.3}");
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    };
    if resource.ends_with("memory") || resource.ends_with("storage") {
        for (unit, size) in [("Ti", 1u64 << 40), ("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)] {
            if value >= size as f64 {
                return format!("{}{unit}", number(value / size as f64));
            }
        }
    }
    number(value)
}

#[cfg(test)]
mod tests {
    #[test]
    fn quantities_as_kubernetes_writes_them() {
        assert_eq!(super::quantity("requests.memory", 4.0 * 1024f64.powi(3)), "4Gi");
        assert_eq!(super::quantity("requests.storage", 1.5 * 1024f64.powi(2)), "1.5Mi");
        assert_eq!(super::quantity("limits.cpu", 1.5), "1.5");
        assert_eq!(super::quantity("pods", 11.0), "11");
        assert_eq!(super::quantity("memory", 100.0), "100");
    }
}
