//! A notifier that exists only in tests (`type = "echo"`): one line of text per transition.
//! It shows what adding a kind of notifier takes: this folder, its line in `notify::sink`, and
//! its variant of `config::NotifierKind`; nothing else in the house names it.

use jiff::Timestamp;

use super::{Sink, Voice};
use crate::config::NotifierKind;
use crate::lang::Lang;
use crate::rules::{Alert, Transition};

pub struct Echo;

impl Sink for Echo {
    fn kind(&self) -> NotifierKind {
        NotifierKind::Echo
    }

    fn endpoint(&self, url: &str) -> String {
        format!("{url}/echo")
    }

    fn base<'a>(&self, endpoint: &'a str) -> &'a str {
        endpoint.strip_suffix("/echo").unwrap_or(endpoint)
    }

    fn bodies(
        &self,
        receiver: &str,
        transitions: &[Transition],
        _: std::time::Duration,
        voice: Voice<'_>,
    ) -> Vec<String> {
        transitions.iter().map(|t| format!("{receiver}: {:?} {}", t.state, t.alert.summary_in(voice.lang))).collect()
    }

    fn heartbeat_body(
        &self,
        receiver: &str,
        now: Timestamp,
        _every: std::time::Duration,
        _lang: Lang,
    ) -> Option<String> {
        Some(format!("{receiver}: alive at {now}"))
    }

    fn resend(&self, firing: &mut dyn Iterator<Item = (&Alert, Timestamp)>, _voice: Voice<'_>) -> Option<String> {
        let names: Vec<&str> = firing.map(|(a, _)| a.alertname.as_str()).collect();
        (!names.is_empty()).then(|| format!("still firing: {}", names.join(", ")))
    }

    fn deduplicates(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use crate::config::{NotifierKind, NotifierSettings};
    use crate::notify::payload::tests::alert;
    use crate::notify::{Notifier, sink};
    use crate::rules::{Transition, TransitionState};

    #[test]
    fn a_kind_added_by_its_folder_and_its_registry_line_is_configured_and_sends() {
        // Configured as any kind is: the file's `type`, the name it is given by default.
        let file = "state_dir = \"/tmp\"\n\n[[cluster]]\nname = \"lab\"\nkubeconfig = \"/dev/null\"\n\n[[notifier]]\ntype = \"echo\"\nurl = \"http://127.0.0.1:9/x/\"\nheartbeat = \"1m\"\n";
        let dir = tempfile::tempdir().unwrap();
        let load = |text: &str| {
            let path = dir.path().join("dumbmonit.toml");
            std::fs::write(&path, text).unwrap();
            crate::config::Config::load(&path)
        };
        let config = load(file).unwrap();
        let c: &NotifierSettings = &config.notifiers[0];
        assert_eq!((c.given.kind, c.name.as_str()), (NotifierKind::Echo, "echo"));
        let n = Notifier::from_config(c).unwrap();
        assert_eq!(n.shown, "http://127.0.0.1:9/x/echo");
        assert_eq!(n.at("/other").unwrap().to_string(), "http://127.0.0.1:9/x/other");
        let t = Transition {
            time: "2026-11-30T03:20:00Z".parse().unwrap(),
            state: TransitionState::Firing,
            alert: alert(),
            previous_labels: None,
        };
        assert_eq!(n.bodies(&[t], std::time::Duration::from_secs(60)), ["echo: Firing Pod shop/x is crash-looping"]);
        assert_eq!(
            n.heartbeat_body("2026-11-30T03:20:00Z".parse().unwrap(), std::time::Duration::from_secs(60)).as_deref(),
            Some("echo: alive at 2026-11-30T03:20:00Z")
        );
        assert_eq!(
            n.resend([alert()].iter().map(|a| (a, jiff::Timestamp::UNIX_EPOCH))).as_deref(),
            Some("still firing: KubernetesPodCrashLooping")
        );
        // Its `heartbeat_url` is refused, as for every kind whose heartbeat has no URL of its own.
        let refused = load(&format!("{file}heartbeat_url = \"http://127.0.0.1:9/ping\"\n"));
        let refused = refused.unwrap_err().to_string();
        assert!(refused.contains("field `heartbeat_url` goes with a webhook"), "{refused}");
    }

    #[test]
    fn every_kind_of_the_configuration_has_its_sink() {
        for kind in NotifierKind::ALL {
            assert_eq!(sink(*kind).kind(), *kind, "{}", kind.as_str());
        }
        assert_eq!(
            NotifierKind::ALL.len(),
            7,
            "webhook, alertmanager, slack, teams, email, pagerduty and the test-only echo"
        );
    }
}
