//! The two languages DumbMonit speaks: English (the default, and the language of everything that
//! is scripted against: metric names, JSON, logs, the error messages the guide quotes) and
//! French, in the words of the guide. The words are Project Fluent messages in `locales/`,
//! compiled into the binary; CLDR plural rules come with Fluent.
//!
//! Interpolated arguments are not isolated (no Unicode isolation marks) and not escaped here:
//! pages escape them as they escape everything else (maud), and text outputs are plain text.

mod choose;
mod format;

use std::borrow::Cow;
use std::sync::LazyLock;

use fluent_bundle::concurrent::FluentBundle;
use fluent_bundle::{FluentArgs, FluentResource, FluentValue};
use serde::{Deserialize, Serialize};

pub use choose::{COOKIE, from_accept_language, from_cookie, from_environment};
pub use format::{date_time, decimal, quantity};

/// A language DumbMonit speaks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Lang {
    #[default]
    En,
    Fr,
}

/// The language codes accepted by `--lang` and `language =`.
pub const CODES: &str = "en, fr";

impl Lang {
    pub fn code(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::Fr => "fr",
        }
    }

    /// `en` or `fr` (any case, with or without a region: `fr-CA`, `fr_FR.UTF-8`).
    pub fn parse(s: &str) -> Option<Lang> {
        let primary = s.split(['-', '_', '.', '@']).next().unwrap_or("").trim();
        match primary.to_ascii_lowercase().as_str() {
            "en" => Some(Lang::En),
            "fr" => Some(Lang::Fr),
            _ => None,
        }
    }

    fn bundle(self) -> &'static FluentBundle<FluentResource> {
        match self {
            Lang::En => &ENGLISH,
            Lang::Fr => &FRENCH,
        }
    }

    /// Whether the message files of this language have `id` (or `id.attribute`) themselves:
    /// what [`Lang::t`] would otherwise fall back from.
    pub fn has(self, id: &str) -> bool {
        let (name, attribute) = match id.split_once('.') {
            Some((n, a)) => (n, Some(a)),
            None => (id, None),
        };
        self.bundle().get_message(name).is_some_and(|m| match attribute {
            Some(a) => m.get_attribute(a).is_some(),
            None => m.value().is_some(),
        })
    }

    /// A message without arguments.
    pub fn t(self, id: &str) -> String {
        self.format(id, None)
    }

    /// A message with arguments.
    pub fn tr(self, id: &str, args: &[(&str, Arg)]) -> String {
        let mut fa = FluentArgs::with_capacity(args.len());
        for (k, v) in args {
            fa.set(*k, v.value(self));
        }
        self.format(id, Some(&fa))
    }

    /// A message kept for later (an alert's summary), in this language.
    pub fn say(self, m: &Message) -> String {
        if let Some(text) = m.text() {
            return text.to_string();
        }
        if m.id == VERBATIM {
            return String::new();
        }
        if m.id == LIST {
            let sep = m.args.iter().find_map(|(k, v)| match v {
                Arg::Text(t) if k == "sep" => Some(t.as_str()),
                _ => None,
            });
            let parts: Vec<String> = m
                .args
                .iter()
                .filter_map(|(_, v)| match v {
                    Arg::Said(part) => Some(self.say(part)),
                    _ => None,
                })
                .collect();
            return parts.join(sep.unwrap_or("; "));
        }
        let args: Vec<(&str, Arg)> = m.args.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
        self.tr(&m.id, &args)
    }

    /// `id` or `id.attribute`.
    fn format(self, id: &str, args: Option<&FluentArgs>) -> String {
        let bundle = self.bundle();
        let (name, attribute) = match id.split_once('.') {
            Some((n, a)) => (n, Some(a)),
            None => (id, None),
        };
        let pattern = bundle.get_message(name).and_then(|m| match attribute {
            Some(a) => m.get_attribute(a).map(|a| a.value()),
            None => m.value(),
        });
        let Some(pattern) = pattern else {
            // The key-parity test keeps both languages to the same messages; a message missing
            // in both is a mistake of the code that a test run shows at once.
            debug_assert!(false, "no message {id:?} in {}", self.code());
            return id.to_string();
        };
        let mut errors = Vec::new();
        let text = bundle.format_pattern(pattern, args, &mut errors);
        debug_assert!(errors.is_empty(), "message {id:?} in {}: {errors:?}", self.code());
        text.into_owned()
    }
}

/// An argument of a message: a text (never translated), a count (which chooses the plural
/// form), or a moment (seconds since the epoch, written as the language writes dates).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Arg {
    Count(i64),
    Text(String),
    Moment(i64),
    /// A message of its own, said in the language of the one it is in (our words inside a
    /// why, a why inside an alert's description).
    Said(Box<Message>),
}

impl Arg {
    fn value(&self, lang: Lang) -> FluentValue<'_> {
        match self {
            Arg::Said(m) => FluentValue::String(Cow::Owned(lang.say(m))),
            Arg::Count(n) => FluentValue::from(*n),
            Arg::Text(s) => FluentValue::String(Cow::Borrowed(s)),
            Arg::Moment(s) => FluentValue::String(Cow::Owned(
                jiff::Timestamp::from_second(*s).map(|t| date_time(lang, t)).unwrap_or_default(),
            )),
        }
    }
}

impl From<Message> for Arg {
    fn from(m: Message) -> Arg {
        Arg::Said(Box::new(m))
    }
}

impl From<&str> for Arg {
    fn from(s: &str) -> Arg {
        Arg::Text(s.to_string())
    }
}

impl From<&String> for Arg {
    fn from(s: &String) -> Arg {
        Arg::Text(s.clone())
    }
}

impl From<&std::sync::Arc<str>> for Arg {
    fn from(s: &std::sync::Arc<str>) -> Arg {
        Arg::Text(s.to_string())
    }
}

impl From<String> for Arg {
    fn from(s: String) -> Arg {
        Arg::Text(s)
    }
}

macro_rules! count_from {
    ($($t:ty),*) => {$(
        impl From<$t> for Arg {
            fn from(n: $t) -> Arg {
                Arg::Count(i64::try_from(n).unwrap_or(i64::MAX))
            }
        }
    )*};
}
count_from!(i32, i64, u32, u64, usize);

/// A message to be said later in whichever language is asked: an alert's summary is made once
/// and told on English pages, French pages and notifiers of either language.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    pub id: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<(String, Arg)>,
}

/// The id of a message that is its text in every language: what a cluster says (an event's
/// message, a condition's), which is never translated.
pub const VERBATIM: &str = "verbatim";

/// The id of a message that is others said one after the other, `sep` between them.
pub const LIST: &str = "list";

impl Message {
    pub fn new(id: &str, args: &[(&str, Arg)]) -> Message {
        Message { id: id.to_string(), args: args.iter().map(|(k, v)| (k.to_string(), v.clone())).collect() }
    }

    /// A text said as it is in every language.
    pub fn verbatim(text: String) -> Message {
        Message { id: VERBATIM.into(), args: vec![("text".into(), Arg::Text(text))] }
    }

    pub fn is_verbatim(&self) -> bool {
        self.id == VERBATIM
    }

    /// The text of a verbatim message, as said in every language.
    pub fn text(&self) -> Option<&str> {
        if !self.is_verbatim() {
            return None;
        }
        self.args.iter().find(|(k, _)| k == "text").map(|(_, v)| match v {
            Arg::Text(t) => t.as_str(),
            _ => "",
        })
    }

    /// Whether this is the message that `Message::new` would make of the id `id` followed by
    /// `attribute` and of `args`, without making it.
    pub fn is(&self, id: &str, attribute: &str, args: &[(&str, Arg)]) -> bool {
        self.id.strip_prefix(id) == Some(attribute)
            && self.args.len() == args.len()
            && self.args.iter().zip(args).all(|((k, v), (key, value))| k == key && v == value)
    }

    /// `parts` said one after the other, `sep` between them; verbatim when they all are (as
    /// such a list was kept before lists were).
    pub fn list(parts: &[Message], sep: &str) -> Message {
        if parts.iter().all(Message::is_verbatim) {
            return Message::verbatim(parts.iter().map(|p| Lang::En.say(p)).collect::<Vec<_>>().join(sep));
        }
        let mut args = vec![("sep".to_string(), Arg::Text(sep.to_string()))];
        args.extend(parts.iter().map(|p| ("part".to_string(), Arg::Said(Box::new(p.clone())))));
        Message { id: LIST.into(), args }
    }
}

/// The cluster's own words, said as they are.
impl From<String> for Message {
    fn from(text: String) -> Message {
        Message::verbatim(text)
    }
}

impl From<&str> for Message {
    fn from(text: &str) -> Message {
        Message::verbatim(text.to_string())
    }
}

/// The areas, one file each per language.
const AREAS: &[(&str, &str, &str)] = &[
    ("pages", include_str!("../../locales/en/pages.ftl"), include_str!("../../locales/fr/pages.ftl")),
    ("rules", include_str!("../../locales/en/rules.ftl"), include_str!("../../locales/fr/rules.ftl")),
    ("reports", include_str!("../../locales/en/reports.ftl"), include_str!("../../locales/fr/reports.ftl")),
];

fn bundle_of(lang: Lang) -> FluentBundle<FluentResource> {
    let id: unic_langid::LanguageIdentifier = lang.code().parse().expect("a language identifier");
    let mut bundle = FluentBundle::new_concurrent(vec![id]);
    bundle.set_use_isolating(false);
    for (area, en, fr) in AREAS {
        let text = if lang == Lang::En { en } else { fr };
        let resource = FluentResource::try_new(text.to_string())
            .unwrap_or_else(|(_, e)| panic!("locales/{}/{area}.ftl does not parse: {e:?}", lang.code()));
        bundle
            .add_resource(resource)
            .unwrap_or_else(|e| panic!("locales/{}/{area}.ftl: a message given twice: {e:?}", lang.code()));
    }
    bundle
}

static ENGLISH: LazyLock<FluentBundle<FluentResource>> = LazyLock::new(|| bundle_of(Lang::En));
static FRENCH: LazyLock<FluentBundle<FluentResource>> = LazyLock::new(|| bundle_of(Lang::Fr));

#[cfg(test)]
mod tests;
