use std::collections::BTreeSet;

use fluent_syntax::ast::Entry;

use super::*;

/// Every message and attribute of one language's area file, as `id` and `id.attribute`.
fn keys(text: &str) -> BTreeSet<String> {
    let resource = FluentResource::try_new(text.to_string()).expect("the file parses");
    let mut keys = BTreeSet::new();
    for entry in resource.entries() {
        if let Entry::Message(m) = entry {
            if m.value.is_some() {
                keys.insert(m.id.name.to_string());
            }
            for a in &m.attributes {
                keys.insert(format!("{}.{}", m.id.name, a.id.name));
            }
        }
    }
    keys
}

#[test]
fn both_languages_have_the_same_messages() {
    for (area, en, fr) in AREAS {
        let (en, fr) = (keys(en), keys(fr));
        assert!(!en.is_empty(), "{area}: no message");
        let only_en: Vec<_> = en.difference(&fr).collect();
        let only_fr: Vec<_> = fr.difference(&en).collect();
        assert!(only_en.is_empty(), "locales/fr/{area}.ftl lacks {only_en:?}");
        assert!(only_fr.is_empty(), "locales/en/{area}.ftl lacks {only_fr:?}");
    }
    // And each bundle builds (no message given twice, every file parses).
    let _ = Lang::En.t("nav-clusters");
    let _ = Lang::Fr.t("nav-clusters");
}

#[test]
fn french_typography_holds_in_every_message() {
    // A non-breaking space before « : ; ? ! » ending a word (not `!=`, `!~` of a matcher's
    // syntax) and inside « », never a plain one.
    for (area, _, fr) in AREAS {
        for (n, line) in fr.lines().enumerate() {
            if line.trim_start().starts_with('#') {
                continue;
            }
            // What follows a Fluent `=` or a variant's key is the text.
            let prose = line.split_once(" = ").map(|(_, v)| v).unwrap_or(line);
            let prose = prose.trim_start_matches([' ', '*', '[']);
            let chars: Vec<char> = prose.chars().collect();
            for (i, w) in chars.windows(2).enumerate() {
                let ends_word = chars.get(i + 2).is_none_or(|c| c.is_whitespace());
                let bad = (w[0] == ' ' && ":;?!".contains(w[1]) && ends_word) || (w[0] == '«' && w[1] == ' ');
                let bad = bad || (w[0] == ' ' && w[1] == '»');
                assert!(!bad, "locales/fr/{area}.ftl line {}: a plain space in {:?}: {line}", n + 1, w);
            }
            assert!(!prose.contains('\''), "locales/fr/{area}.ftl line {}: a straight apostrophe: {line}", n + 1);
        }
    }
}

#[test]
fn accept_language_with_qualities() {
    assert_eq!(from_accept_language(Some("fr-CH,fr;q=0.9,en;q=0.5")), Lang::Fr);
    assert_eq!(from_accept_language(Some("de,en;q=0.8")), Lang::En);
    assert_eq!(from_accept_language(Some("de")), Lang::En);
    assert_eq!(from_accept_language(None), Lang::En);
    assert_eq!(from_accept_language(Some("en;q=0.4,fr;q=0.6")), Lang::Fr);
    assert_eq!(from_accept_language(Some("fr;q=0,en")), Lang::En, "q=0 is refused");
    assert_eq!(from_accept_language(Some("fr;q=2")), Lang::En, "not a quality");
    assert_eq!(from_accept_language(Some("FR-fr")), Lang::Fr);
    assert_eq!(from_accept_language(Some("*")), Lang::En);
    assert_eq!(from_accept_language(Some("en,fr")), Lang::En, "the earlier one on a tie");
}

#[test]
fn cookie_and_environment() {
    assert_eq!(from_cookie(Some("a=b; dumbmonit_lang=fr")), Some(Lang::Fr));
    assert_eq!(from_cookie(Some("dumbmonit_lang=de")), None);
    assert_eq!(from_cookie(None), None);
    let env = |pairs: &'static [(&'static str, &'static str)]| {
        move |k: &str| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string())
    };
    assert_eq!(from_environment(env(&[("LANG", "fr_FR.UTF-8")])), Lang::Fr);
    assert_eq!(from_environment(env(&[("LANG", "C")])), Lang::En);
    assert_eq!(from_environment(env(&[])), Lang::En);
    assert_eq!(from_environment(env(&[("LC_ALL", "C.UTF-8"), ("LANG", "fr_FR.UTF-8")])), Lang::En);
    assert_eq!(from_environment(env(&[("LC_ALL", ""), ("LC_MESSAGES", "fr_CA"), ("LANG", "C")])), Lang::Fr);
}

#[test]
fn plurals_follow_cldr() {
    assert_eq!(Lang::Fr.tr("count-nodes-not-ready", &[("count", 1.into())]), "1 nœud non prêt");
    assert_eq!(Lang::Fr.tr("count-nodes-not-ready", &[("count", 2.into())]), "2 nœuds non prêts");
    assert_eq!(Lang::Fr.tr("count-pods-crashlooping", &[("count", 3.into())]), "3 pods en boucle de crash");
    assert_eq!(Lang::En.tr("count-nodes-not-ready", &[("count", 1.into())]), "1 node not ready");
    assert_eq!(Lang::En.tr("count-nodes-not-ready", &[("count", 2.into())]), "2 nodes not ready");
}

#[test]
fn numbers_and_dates() {
    assert_eq!(decimal(Lang::Fr, 1.5, 1), "1,5");
    assert_eq!(decimal(Lang::En, 1.5, 1), "1.5");
    let t: jiff::Timestamp = "2026-12-01T06:35:10Z".parse().unwrap();
    assert_eq!(date_time(Lang::Fr, t), "1 déc. 2026 06:35 UTC");
    assert_eq!(date_time(Lang::En, t), "2026-12-01 06:35 UTC");
}

#[test]
fn arguments_are_neither_isolated_nor_escaped() {
    let hostile = "<script>alert(1)</script>";
    let said = Lang::Fr.tr("rule-node-not-ready.summary", &[("node", hostile.into())]);
    assert!(said.contains(hostile), "the page escapes, not Fluent: {said}");
    assert!(!said.contains('\u{2068}'), "no isolation marks");
}

#[test]
fn a_kept_message_is_said_again_in_each_language_and_the_clusters_words_as_they_are() {
    // The cluster's words as they are, ours (nested) in each language.
    let why = Message::list(
        &["app: OOMKilled".into(), Message::new("why-finalizers", &[("finalizers", "example.com/drain".into())])],
        "; ",
    );
    let m = Message::new("pod-description", &[("has_why", "yes".into()), ("why", why.into()), ("restarts", 14.into())]);
    assert_eq!(Lang::En.say(&m), "app: OOMKilled; waits for its finalizers: example.com/drain; restarts: 14");
    assert_eq!(
        Lang::Fr.say(&m),
        "app: OOMKilled; attend ses finalizers\u{a0}: example.com/drain; redémarrages\u{a0}: 14"
    );
    let v = Message::verbatim("NodeStatusUnknown: Kubelet stopped posting node status.".into());
    assert_eq!(Lang::Fr.say(&v), Lang::En.say(&v));
    assert!(v.is_verbatim());
    // Kept (in the state), read back the same.
    let back: Message = serde_json::from_str(&serde_json::to_string(&m).unwrap()).unwrap();
    assert_eq!(back, m);
    let when: jiff::Timestamp = "2026-12-01T06:35:00Z".parse().unwrap();
    let cert = Message::new(
        "rule-certificate-expiring.summary",
        &[
            ("certificate", "serving".into()),
            ("date", Arg::Moment(when.as_second())),
            ("when", "future".into()),
            ("days", 5.into()),
        ],
    );
    assert_eq!(Lang::En.say(&cert), "The API server's serving certificate expires on 2026-12-01 06:35 UTC (in 5 days)");
    assert_eq!(
        Lang::Fr.say(&cert),
        "Le certificat de service de l’API server expire le 1 déc. 2026 06:35 UTC (dans 5 jours)"
    );
}
