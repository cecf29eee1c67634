//! The Test button: one cycle with what was entered, through the chain every read takes
//! (`collect::reader::connect`, then a read), nothing kept; what it found, and the setup guide's
//! help beside each error people meet.

use maud::{Markup, html};

use crate::collect::CycleOptions;
use crate::collect::reader::{self, SetUpError};
use crate::config::PageSettings;
use crate::error::{ReadErrorKind, Redactor};
use crate::lang::Lang;
use crate::web::html::{lang, t};

/// What a test cycle found.
pub(super) enum Tested {
    Healthy { summary: String, counters: String },
    Failed { message: String, help: Option<Markup> },
}

/// The guide's help beside each error people meet, in the reader's language.
fn help(kind: &ReadErrorKind) -> Option<Markup> {
    if lang() == Lang::Fr {
        return aide(kind);
    }
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

/// The help in French, in the words of the guide's « Dépannage », beside the error it explains
/// (the error itself stays in English, as the guide quotes it).
fn aide(kind: &ReadErrorKind) -> Option<Markup> {
    Some(match kind {
        ReadErrorKind::Unauthorized => html! {
            p.help {
                "Un jeton fait avec " code { "kubectl create token" }
                " expire (après une heure par défaut)\u{a0}: utilisez le jeton du Secret que " code { "dumbmonit rbac" }
                " crée, la forme longue durée\u{a0}: "
                code { "kubectl -n kube-system get secret dumbmonit-token -o jsonpath='{.data.token}' | base64 -d" } "."
            }
        },
        ReadErrorKind::Forbidden { .. } => html! {
            p.help {
                "Le ClusterRole ou sa liaison manque ou est incomplet. Le message nomme la ressource que le serveur d’API a refusée\u{a0}; appliquez à nouveau le manifeste\u{a0}: "
                code { "dumbmonit rbac | kubectl apply -f -" } " (et " code { "dumbmonit rbac --optional" }
                " pour les lectures facultatives)."
            }
        },
        ReadErrorKind::UnknownAuthority => html! {
            p.help {
                "La CA manque, ou ce n’est pas celle qui a signé le certificat de l’API server. Collez-la comme "
                "Certificat CA du cluster\u{a0}: la valeur base64 de " code { "ca.crt" } " du Secret du jeton ("
                code { "kubectl -n kube-system get secret dumbmonit-token -o jsonpath='{.data.ca\\.crt}'" }
                "), ou sur k3s " code { "/var/lib/rancher/k3s/server/tls/server-ca.crt" } "."
            }
        },
        ReadErrorKind::WrongName { host, names } => html! {
            p.help {
                "L’adresse " code { (host) } " n’est pas un des noms dans le certificat du serveur, qui liste "
                @for (i, n) in names.iter().enumerate() { @if i > 0 { ", " } code { (n) } }
                ". Utilisez-en un, ou ajoutez un autre nom avec " code { "--tls-san" }
                " (dans " code { "/etc/rancher/k3s/config.yaml" } "\u{a0}: " code { "tls-san: [" (host) "]" }
                ") et redémarrez k3s."
            }
        },
        ReadErrorKind::CertificateExpired => html! {
            p.help { "Le certificat de l’API server a expiré ou n’est pas encore valide\u{a0}: vérifiez les horloges, et renouvelez le certificat (k3s renouvelle à son redémarrage ceux qui expirent dans les 90\u{a0}jours)." }
        },
        ReadErrorKind::Refused | ReadErrorKind::ConnectTimeout | ReadErrorKind::Dns { .. } => html! {
            p.help { "Vérifiez l’adresse et le port (6443 par défaut), et que ce serveur peut joindre l’API server." }
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
            Tested::Healthy { summary: h.summary_in(lang()), counters: h.counters_in(lang()) }
        }
        Err(e) => failed(e.to_string(), help(&e.kind)),
    }
}

/// What the test found, as the form shows it above itself.
pub(super) fn outcome_of(tested: &Tested) -> Markup {
    match tested {
        Tested::Healthy { summary, counters } => html! {
            div.tested {
                p { strong { (t("tested-read")) } " " (summary) }
                p.counters { (counters) }
                p.muted { (t("tested-nothing-saved")) }
            }
        },
        Tested::Failed { message, help } => html! {
            div.error { strong { (t("tested-failed")) } " " (message) }
            @if let Some(h) = help { (h) }
        },
    }
}
