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
