//! Whether each admission webhook can be reached: its Service exists and has a ready endpoint
//! on the webhook's port. A webhook that cannot be reached refuses every request it intercepts
//! when its failure policy is `Fail` (the API server's default): nothing it covers can be
//! created or changed, often cluster-wide. With `Ignore`, the requests go through unchecked.

use serde::Serialize;

use crate::collect::backends::{self, EndpointSlice, Reach, Service};
use crate::collect::kinds::webhook::{Configuration, Target};
use crate::lang::{Arg, Message};

/// One webhook of a configuration.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WebhookHealth {
    /// `validating` or `mutating`.
    pub kind: &'static str,
    pub configuration: String,
    pub webhook: String,
    /// `Fail` or `Ignore`.
    pub failure_policy: String,
    /// Its Service and port (`policy/policy-webhook:443`); None for a URL.
    pub service: Option<String>,
    /// Its backend can take calls; None when not judged (a URL, an ExternalName Service, or the
    /// Services and EndpointSlices not read).
    pub ready: Option<bool>,
    /// What its call finds (`no-service`, `no-port`, `no-endpoint`, `ready`, `external`).
    #[serde(skip)]
    pub reach: Option<Reach>,
    pub operations: Vec<String>,
    pub resources: Vec<String>,
    /// Its namespace selector, empty for every namespace.
    pub namespaces: String,
}

impl WebhookHealth {
    /// It cannot be reached.
    pub fn unavailable(&self) -> bool {
        self.ready == Some(false)
    }

    /// Its requests are refused while it cannot be reached.
    pub fn fails_closed(&self) -> bool {
        self.failure_policy != "Ignore"
    }

    /// Why it cannot be reached and what that stops, in each language.
    pub fn description(&self) -> Message {
        Message::new("webhook-unavailable-why", &self.args())
    }

    /// The arguments of its messages.
    pub fn args(&self) -> Vec<(&'static str, Arg)> {
        let or_any = |v: &[String]| if v.is_empty() { "*".to_string() } else { v.join(", ") };
        vec![
            ("kind", self.kind.into()),
            ("configuration", (&self.configuration).into()),
            ("webhook", (&self.webhook).into()),
            ("policy", (&self.failure_policy).into()),
            ("service", self.service.clone().unwrap_or_default().into()),
            ("reach", self.reach.map_or("", Reach::as_str).into()),
            ("operations", or_any(&self.operations).into()),
            ("resources", or_any(&self.resources).into()),
            ("selector", (&self.namespaces).into()),
            ("scoped", if self.namespaces.is_empty() { "no" } else { "yes" }.into()),
        ]
    }
}

/// The webhooks of both kinds of configuration, judged against their backends when those were
/// read (`None`: not read, or refused); a webhook with neither a Service nor a URL makes a line
/// of `unreadable`.
pub fn webhooks(
    validating: &[&Configuration],
    mutating: &[&Configuration],
    backends: Option<(&[Service], &[EndpointSlice])>,
    unreadable: &mut Vec<String>,
) -> Vec<WebhookHealth> {
    let mut out = Vec::new();
    for (kind, list) in [("validating", validating), ("mutating", mutating)] {
        for c in list {
            for w in &c.webhooks {
                let (service, reach) = match &w.target {
                    Target::Service { namespace, name, port } => (
                        Some(format!("{namespace}/{name}:{port}")),
                        backends.map(|(s, e)| backends::judge(s, e, namespace, name, *port)),
                    ),
                    Target::Url => (None, None),
                    Target::Neither => {
                        unreadable.push(format!(
                            "{} webhook {}/{} has neither a service nor a url: it cannot be judged",
                            if kind == "validating" { "Validating" } else { "Mutating" },
                            c.name,
                            w.name
                        ));
                        continue;
                    }
                };
                let ready = reach.filter(|r| *r != Reach::External).map(|r| r == Reach::Ready);
                out.push(WebhookHealth {
                    kind,
                    configuration: c.name.clone(),
                    webhook: w.name.clone(),
                    failure_policy: w.failure_policy.clone(),
                    service,
                    ready,
                    reach,
                    operations: w.operations.clone(),
                    resources: w.resources.clone(),
                    namespaces: w.namespaces.clone(),
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collect::kinds::webhook::AdmissionWebhook;

    fn hook(name: &str, policy: &str, target: Target) -> AdmissionWebhook {
        AdmissionWebhook {
            name: name.into(),
            failure_policy: policy.into(),
            target,
            operations: vec!["CREATE".into()],
            resources: vec!["pods".into()],
            namespaces: String::new(),
        }
    }

    #[test]
    fn a_webhook_without_a_ready_backend_is_unavailable_and_a_url_is_not_judged() {
        let service = |name: &str| Target::Service { namespace: "policy".into(), name: name.into(), port: 443 };
        let c = Configuration {
            name: "policy".into(),
            webhooks: vec![
                hook("gone.example.com", "Fail", service("gone")),
                hook("up.example.com", "Ignore", service("up")),
                hook("far.example.com", "Fail", Target::Url),
                hook("broken.example.com", "Fail", Target::Neither),
            ],
        };
        let services = [Service {
            namespace: "policy".into(),
            name: "up".into(),
            external: false,
            ports: vec![(String::new(), 443)],
        }];
        let slices =
            [EndpointSlice { namespace: "policy".into(), service: "up".into(), ports: vec![String::new()], ready: 1 }];
        let mut unreadable = Vec::new();
        let judged = webhooks(&[&c], &[], Some((&services, &slices)), &mut unreadable);
        assert_eq!(judged.len(), 3);
        assert!(judged[0].unavailable() && judged[0].fails_closed());
        assert_eq!(judged[0].reach, Some(Reach::NoService));
        assert_eq!(judged[1].ready, Some(true));
        assert!(!judged[1].fails_closed());
        assert_eq!(judged[2].ready, None);
        assert_eq!(unreadable.len(), 1);
        assert!(unreadable[0].contains("policy/broken.example.com"), "{unreadable:?}");
        // The backends not read: nothing is judged.
        let unjudged = webhooks(&[], &[&c], None, &mut Vec::new());
        assert!(unjudged.iter().all(|w| w.ready.is_none() && w.kind == "mutating"));
    }
}
