//! Explanations: the reasons of a why, what an exit code means, and one clean line from
//! untrusted text.
//!
//! A why is a list of reasons, each the cluster's own words (an event's or a condition's
//! message, kept as they are in every language) or ours (a message of `locales/*/reports.ftl`,
//! said in the reader's language): [`Message::verbatim`] and [`Message::new`]. The JSON of
//! `check` and of the API says a why in English, as it always has ([`english`]).

use crate::lang::{Arg, Lang, Message};

/// A why: its reasons, in order.
pub type Why = Vec<Message>;

/// A why as JSON: its reasons said in English, one string each.
pub fn english<S: serde::Serializer>(why: &[Message], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(why.iter().map(|m| Lang::En.say(m)))
}

/// A why said in `lang`, one line per reason.
pub fn said(why: &[Message], lang: Lang) -> Vec<String> {
    why.iter().map(|m| lang.say(m)).collect()
}

/// Ours: a message of `reports.ftl` and its arguments.
pub fn ours(id: &str, args: &[(&str, Arg)]) -> Message {
    Message::new(id, args)
}

/// What a container's exit code says, as an operator reads it (`exit-meaning`).
pub fn exit_meaning(code: i64, reason: &str) -> Message {
    let kind = match code {
        0 => "ok",
        1 => "error",
        2 => "usage",
        126 => "noexec",
        127 => "notfound",
        137 if reason == "OOMKilled" => "oom",
        137 => "kill",
        143 => "term",
        139 => "segv",
        134 => "abrt",
        130 => "int",
        255 => "range",
        c if c > 128 && c < 160 => "signal",
        _ => "other",
    };
    ours("exit-meaning", &[("kind", kind.into()), ("signal", (code - 128).to_string().into())])
}

/// What a container's exit code says, in English.
pub fn exit_code_meaning(code: i64, reason: &str) -> String {
    Lang::En.say(&exit_meaning(code, reason))
}

/// One line of at most `max` characters, control characters (terminal escapes, line breaks)
/// turned into spaces: cluster text is untrusted.
pub fn clean_line(s: &str, max: usize) -> String {
    let flat: String = s.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    let flat = flat.trim();
    if flat.chars().count() > max {
        let cut: String = flat.chars().take(max.saturating_sub(1)).collect();
        format!("{}…", cut.trim_end())
    } else {
        flat.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_have_meanings_in_both_languages() {
        assert!(exit_code_meaning(137, "OOMKilled").contains("out of memory"));
        assert!(exit_code_meaning(143, "Error").contains("liveness probe"));
        assert_eq!(exit_code_meaning(129, "Error"), "killed by signal 1");
        assert_eq!(exit_code_meaning(3, "Error"), "application error");
        assert_eq!(Lang::Fr.say(&exit_meaning(129, "Error")), "tué par le signal 1");
        assert!(Lang::Fr.say(&exit_meaning(137, "OOMKilled")).contains("mémoire"));
    }

    #[test]
    fn a_why_is_english_in_json_and_each_reason_in_its_language_on_pages() {
        let why: Why = vec![
            Message::verbatim("BackOff: Back-off restarting failed container app".into()),
            ours("why-finalizers", &[("finalizers", "example.com/drain".into())]),
        ];
        #[derive(serde::Serialize)]
        struct Row<'a> {
            #[serde(serialize_with = "english")]
            why: &'a [Message],
        }
        assert_eq!(
            serde_json::to_string(&Row { why: &why }).unwrap(),
            r#"{"why":["BackOff: Back-off restarting failed container app","waits for its finalizers: example.com/drain"]}"#
        );
        assert_eq!(
            said(&why, Lang::Fr),
            ["BackOff: Back-off restarting failed container app", "attend ses finalizers\u{a0}: example.com/drain"]
        );
        // In an alert's description, the whole list is said in the notifier's language.
        let list = Message::list(&why, "; ");
        assert_eq!(
            Lang::En.say(&list),
            "BackOff: Back-off restarting failed container app; waits for its finalizers: example.com/drain"
        );
        assert!(Lang::Fr.say(&list).ends_with("attend ses finalizers\u{a0}: example.com/drain"));
        let cluster_only = Message::list(&why[..1], "; ");
        assert!(cluster_only.is_verbatim(), "kept as before lists were");
    }

    #[test]
    fn untrusted_text_becomes_one_clean_line() {
        assert_eq!(clean_line("a\nb\x1b[31mc\r\n", 100), "a b [31mc");
        assert_eq!(clean_line("abcdef", 4), "abc…");
    }
}
