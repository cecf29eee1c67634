//! The Test button: one cycle with what was entered, through the chain every read takes
//! (`collect::reader::connect`, then a read), nothing kept; what it found, and the setup guide's
//! help beside each error people meet.

use maud::{Markup, html};

use crate::collect::CycleOptions;
use crate::collect::reader::{self, SetUpError};
use crate::config::PageSettings;
use crate::error::{ReadErrorKind, Redactor};

/// What a test cycle found.
pub(super) enum Tested {
    Healthy { summary: String, counters: String },
    Failed { message: String, help: Option<Markup> },
}

/// The guide's help beside each error people meet.
fn help(kind: &ReadErrorKind) -> Option<Markup> {
    Some(match kind {
        ReadErrorKind::Unauthorized => html! {
            p.help {
                "A token made by " code { "kubectl create token" }
                " expires after an hour: use the token of the Secret that " code { "dumbmonit rbac" } " creates: "
                code { "kubectl -n kube-system get secret dumbmonit-token -o jsonpath='{.data.token}' | base64 -d" } "."
            }
        },
        ReadErrorKind::Forbidden { .. } => html! {
            p.help {
                "The service account may not read what the message names (403). Apply the read-only role again: "
                code { "dumbmonit rbac | kubectl apply -f -" } " (and " code { "dumbmonit rbac --optional" }
                " for the optional reads)."
            }
        },
        ReadErrorKind::UnknownAuthority => html! {
            p.help {
                "The cluster CA is missing, or it is not the one that signed the API server's certificate. Paste it as "
                "Cluster CA certificate: the " code { "ca.crt" } " of the token's Secret ("
                code { "kubectl -n kube-system get secret dumbmonit-token -o jsonpath='{.data.ca\\.crt}'" }
                ", base64 is fine), or on k3s " code { "/var/lib/rancher/k3s/server/tls/server-ca.crt" } "."
            }
        },
        ReadErrorKind::WrongName { host, names } => html! {
            p.help {
                "The address " code { (host) } " is not among the names in the API server's certificate, which lists "
                @for (i, n) in names.iter().enumerate() { @if i > 0 { ", " } code { (n) } }
                ". Use one of those, or add the address to the certificate: on k3s, start the server with "
                code { "--tls-san " (host) } "."
            }
        },
        ReadErrorKind::CertificateExpired => html! {
            p.help { "The API server's certificate has expired or is not yet valid: check the clocks, and renew the certificate (k3s renews those that expire within 90 days when it restarts)." }
        },
        ReadErrorKind::Refused | ReadErrorKind::ConnectTimeout | ReadErrorKind::Dns { .. } => html! {
            p.help { "Check the address and the port (6443 by default), and that this server can reach the API server." }
        },
        _ => return None,
    })
}

/// One cycle with what was entered; nothing is kept.
pub(super) async fn test_cycle(name: &str, settings: &PageSettings, token: String) -> Tested {
    let mut redactor = Redactor::default();
    redactor.add(&token);
    let cluster = settings.to_cluster(name, token);
    let failed = |message: String, help: Option<Markup>| Tested::Failed { message: redactor.clean(&message), help };
    let connected = match reader::connect(&cluster.connect).await {
        Ok(c) => c,
        Err(SetUpError::Settings(e)) => {
            return failed(
                e.to_string(),
                Some(
                    html! { p.help { "The cluster CA must be PEM (-----BEGIN CERTIFICATE-----), or the base64 of it." } },
                ),
            );
        }
        Err(SetUpError::Client { error, .. }) => return failed(error.to_string(), None),
    };
    let cycle_options = CycleOptions::of(&settings.connect);
    let cycle = connected.read(&cycle_options, jiff::Timestamp::now()).await;
    match cycle.result {
        Ok(snapshot) => {
            let h = crate::health::assess(snapshot);
            Tested::Healthy { summary: h.summary(), counters: h.counters() }
        }
        Err(e) => failed(e.to_string(), help(&e.kind)),
    }
}

/// What the test found, as the form shows it above itself.
pub(super) fn outcome_of(t: &Tested) -> Markup {
    match t {
        Tested::Healthy { summary, counters } => html! {
            div.tested {
                p { strong { "The cluster was read." } " " (summary) }
                p.counters { (counters) }
                p.muted { "Nothing is saved until Save." }
            }
        },
        Tested::Failed { message, help } => html! {
            div.error { strong { "Test failed." } " " (message) }
            @if let Some(h) = help { (h) }
        },
    }
}
