//! A kind that exists only in tests (`widgets.example.com`): added by this file and one line of
//! the registry, and nothing else, to show what that one line brings.

use serde::{Deserialize, Serialize};

use super::Kind;
use crate::collect::{FromApi, Meta};
use crate::collection::{About, Collection, Follow};

const ABOUT: About = About {
    name: "widgets",
    resource: "widgets.example.com",
    list_kind: "WidgetList",
    api_version: "example.com/v1",
    path: "/apis/example.com/v1/widgets",
    namespaced: true,
    optional: true,
    follow: Follow::Whole,
};

/// The compact record of a Widget.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Widget {
    pub namespace: String,
    pub name: String,
}

#[derive(Deserialize)]
pub struct RawWidget {
    #[serde(default)]
    metadata: Meta,
}

impl From<RawWidget> for Widget {
    fn from(raw: RawWidget) -> Widget {
        Widget { namespace: raw.metadata.namespace, name: raw.metadata.name }
    }
}

impl FromApi for Widget {
    type Raw = RawWidget;
}

impl Kind for Widget {
    const COLLECTION: Collection = Collection::of(&ABOUT);
    fn namespace(&self) -> &str {
        &self.namespace
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::time::Duration;

    use jiff::Timestamp;
    use serde_json::value::RawValue;

    use super::*;
    use crate::collect::follow::Followed;
    use crate::collect::optional::Optional;
    use crate::collect::{CycleOptions, RawList, ReadList, ReadOptions, Source, from_api, version};
    use crate::error::{ReadError, ReadErrorKind};
    use crate::kube::{Connection, Fetcher};

    /// An API server in memory: each collection's items by name; a collection it does not hold
    /// is refused (403).
    struct InMemory {
        fetcher: Fetcher,
        items: HashMap<&'static str, &'static str>,
    }

    impl InMemory {
        fn new(items: &[(&'static str, &'static str)]) -> InMemory {
            let _ = rustls::crypto::ring::default_provider().install_default();
            let address = "https://127.0.0.1:1".to_string();
            let config = kube::Config::new(address.parse().unwrap());
            let conn = Connection { address, config, redactor: Default::default() };
            let fetcher = Fetcher::new(&conn, Duration::from_secs(1)).unwrap();
            InMemory { fetcher, items: items.iter().copied().collect() }
        }
    }

    impl Source for InMemory {
        fn fetcher(&self) -> &Fetcher {
            &self.fetcher
        }

        async fn list<T: Followed>(&self, c: Collection, _: Option<&str>, how: ReadOptions) -> ReadList<T> {
            let Some(items) = self.items.get(c.name()) else {
                let kind = ReadErrorKind::Forbidden { message: format!("{} is forbidden", c.resource()) };
                return Err(ReadError { address: self.fetcher.address().into(), collection: c, kind });
            };
            let raw: Vec<Box<RawValue>> = serde_json::from_str(items).unwrap();
            let records = raw.iter().map(|r| from_api::<T>(r.get()).unwrap()).collect();
            let listed = how.record.then(|| RawList { collection: c, resource_version: "7".into(), items: raw });
            Ok((records, listed))
        }

        async fn version(&self, how: ReadOptions) -> Result<(version::Version, Option<Box<RawValue>>), ReadError> {
            let raw = RawValue::from_string(r#"{"gitVersion":"v1.31.4"}"#.into()).unwrap();
            Ok((serde_json::from_str(raw.get()).unwrap(), how.record.then_some(raw)))
        }
    }

    const CORE: [(&str, &str); 7] = [
        ("nodes", "[]"),
        ("pods", "[]"),
        ("deployments", "[]"),
        ("statefulsets", "[]"),
        ("daemonsets", "[]"),
        ("persistentvolumeclaims", "[]"),
        ("events", "[]"),
    ];

    const WIDGETS: &str = r#"[{"metadata":{"name":"w1","namespace":"shop"},"spec":{"size":3}},
        {"metadata":{"name":"w2","namespace":"kube-system"}}]"#;

    fn widget(namespace: &str, name: &str) -> Widget {
        Widget { namespace: namespace.into(), name: name.into() }
    }

    /// The one registry line is all it takes: a cycle reads the kind (with its stat), the
    /// ignored namespaces leave it out, a recording keeps it and reads it back, the agent's
    /// wire carries it, `rbac --optional` grants it, and a refusal is said as not granted.
    #[tokio::test]
    async fn a_kind_added_by_its_file_and_one_registry_line_goes_everywhere_a_kind_goes() {
        let now: Timestamp = "2026-12-03T10:00:00Z".parse().unwrap();
        let lists = InMemory::new(&[CORE.as_slice(), &[("widgets", WIDGETS)]].concat());
        let options =
            CycleOptions { ignored_namespaces: vec!["kube-system".into()], record: true, ..CycleOptions::default() };
        let cycle = crate::collect::run(&lists, &options, now).await;

        // Read by the cycle, through the one wrapper, its ignored namespace left out.
        let snapshot = cycle.result.expect("the cycle succeeds");
        assert_eq!(snapshot.extras.widgets, Optional::Read(vec![widget("shop", "w1")]));
        let stat = cycle.stats.iter().find(|s| s.collection == Widget::COLLECTION).expect("its stat");
        assert!(stat.ok);

        // Recorded under its name, and replayed.
        let recording = cycle.recording.expect("recorded");
        let text = crate::record::render(now, Ok(&recording));
        assert!(text.contains(r#""widgets":{"kind":"WidgetList","apiVersion":"example.com/v1""#), "{text}");
        let replayed = crate::record::parse(text.as_bytes(), "cycle.json").unwrap().outcome.unwrap();
        assert_eq!(replayed.extras.widgets.read().map(Vec::len), Some(2), "recorded as the server returned it");
        assert_eq!(replayed.into_snapshot(now, &options), snapshot, "replayed, the cycle read again");

        // Carried over the agent's wire.
        let (delta, _) = crate::wire::encode(&snapshot, &crate::wire::Acknowledged::default());
        let sent = serde_json::to_string(&delta).unwrap();
        assert!(sent.contains(r#""widgets":{"Read":[{"namespace":"shop","name":"w1"}]}"#), "{sent}");
        let taken = crate::wire::Held::default().apply(now, serde_json::from_str(&sent).unwrap()).unwrap();
        assert_eq!(taken.extras.widgets, snapshot.extras.widgets);
        let stats = crate::wire::Stat::to_stats(&crate::wire::Stat::from_stats(&cycle.stats));
        assert!(stats.iter().any(|s| s.collection == Widget::COLLECTION), "its stat too");

        // Granted by `rbac --optional`, and not by the guide's role.
        let granted = |rules: Vec<crate::rbac::Grant>| rules.contains(&("example.com", vec!["widgets"]));
        assert!(granted(crate::rbac::optional_rules()));
        assert!(!granted(crate::rbac::rules()));
        assert!(crate::rbac::manifests("kube-system", "dumbmonit", true, true).unwrap().contains("\"widgets\""));

        // Refused: the cycle still succeeds, and the page says what is not granted.
        let refused = crate::collect::run(&InMemory::new(&CORE), &CycleOptions::default(), now).await;
        let snapshot = refused.result.expect("an optional read refused leaves the cycle whole");
        assert_eq!(snapshot.extras.widgets, Optional::NotGranted);
        let health = crate::health::assess(snapshot);
        assert!(health.extras.not_granted.contains(&"widgets.example.com"), "{:?}", health.extras.not_granted);
        let stat = refused.stats.iter().find(|s| s.collection == Widget::COLLECTION).expect("its stat");
        assert!(!stat.ok, "a refused optional read failed");
    }
}
