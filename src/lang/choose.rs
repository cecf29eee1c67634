//! Which language a reader gets: a page's from its cookie, then `Accept-Language`; a command's
//! from `LC_ALL`, `LC_MESSAGES` and `LANG`, as command-line tools read them.

use super::Lang;

/// The cookie a page's « English · Français » link sets: a preference, nothing more.
pub const COOKIE: &str = "dumbmonit_lang";

/// The language of an `Accept-Language` header (RFC 9110 §12.5.4): the one with the highest
/// quality among those DumbMonit speaks, the earlier one on a tie; English when none is
/// spoken or the header is absent. `fr-CH,fr;q=0.9,en;q=0.5` is French; `de,en;q=0.8` English.
pub fn from_accept_language(header: Option<&str>) -> Lang {
    let Some(header) = header else { return Lang::En };
    let mut best: Option<(Lang, u16)> = None;
    for item in header.split(',') {
        let mut parts = item.split(';');
        let range = parts.next().unwrap_or("").trim();
        let quality = parts
            .filter_map(|p| p.trim().strip_prefix("q=").or_else(|| p.trim().strip_prefix("Q=")))
            .map(quality)
            .next()
            .unwrap_or(Some(1000));
        let (Some(lang), Some(q)) = (Lang::parse(range), quality) else { continue };
        if q > 0 && best.is_none_or(|(_, b)| q > b) {
            best = Some((lang, q));
        }
    }
    best.map(|(l, _)| l).unwrap_or(Lang::En)
}

/// A quality value in thousandths (`1`, `0.9`, `0.125`); `None` when it is not one.
fn quality(v: &str) -> Option<u16> {
    let v = v.trim();
    let (whole, fraction) = v.split_once('.').unwrap_or((v, ""));
    if fraction.len() > 3 || !fraction.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let thousandths = format!("{fraction:0<3}").parse::<u16>().ok()?;
    match whole {
        "0" => Some(thousandths),
        "1" if thousandths == 0 => Some(1000),
        _ => None,
    }
}

/// The language the `dumbmonit_lang` cookie of a `Cookie` header names, if it names one.
pub fn from_cookie(header: Option<&str>) -> Option<Lang> {
    header?.split(';').filter_map(|c| c.trim().split_once('=')).find(|(k, _)| *k == COOKIE).and_then(|(_, v)| {
        match v.trim() {
            "en" => Some(Lang::En),
            "fr" => Some(Lang::Fr),
            _ => None,
        }
    })
}

/// A command's language from its environment: the first of `LC_ALL`, `LC_MESSAGES`, `LANG`
/// that is set and not empty decides (`fr_FR.UTF-8` is French; `C`, `POSIX` and anything else
/// English), as gettext reads them.
pub fn from_environment(get: impl Fn(&str) -> Option<String>) -> Lang {
    ["LC_ALL", "LC_MESSAGES", "LANG"]
        .into_iter()
        .filter_map(get)
        .find(|v| !v.is_empty())
        .and_then(|v| Lang::parse(&v))
        .unwrap_or(Lang::En)
}
