//! Why a change on the pages is refused, one variant per refusal with the sentence the page
//! shows: a request that may not change anything is answered with its status and a page that
//! says why; what was entered that cannot be kept is shown above the form again ("Not saved.").

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use maud::{Markup, html};

use super::page_of;
use crate::board::Board;
use crate::error::AddressError;
use crate::lang::{Arg, Lang};
use crate::state::StateError;
use crate::web::html::{lang, t};
use crate::web::{HTML, respond};

/// Each refusal's sentence is a message of the pages (`form-error-…`), said in the reader's
/// language; its `Display` is the English one.
#[derive(Debug)]
pub(super) enum FormError {
    // The request may not change anything.
    ReadOnly,
    NoSecretKey,
    /// Credentials that are not an admin's; `ask`: none were sent, so the answer asks for them.
    NotAdmin {
        ask: bool,
    },
    NotThisSession,
    FromTheFile {
        name: String,
    },
    NotAdded {
        name: String,
    },
    NotRemoved(StateError),

    // What was entered cannot be kept.
    Name,
    NameTaken {
        name: String,
    },
    Port,
    Namespace {
        value: String,
    },
    NamespacesWithWatch,
    TooManyNamespaces {
        count: usize,
    },
    NoAddress,
    /// An address that a cycle could not read (the same parsing as `check`'s).
    Address(AddressError),
    /// A duration out of its range; `field` is the form's label (`form-timeout`,
    /// `form-interval`) and `range` as the form says it.
    Duration {
        field: &'static str,
        range: &'static str,
    },
    NoTokenToTest,
    NoTokenToSave,
    TokenAgain,
    Unsealable,
    NoAction,
    /// The cluster could not be stored: why, as the store says it.
    NotStored(crate::board::NotStored),
}

impl From<crate::board::NotStored> for FormError {
    fn from(e: crate::board::NotStored) -> FormError {
        FormError::NotStored(e)
    }
}

impl std::fmt::Display for FormError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.said_in(Lang::En))
    }
}

impl std::error::Error for FormError {}

impl FormError {
    /// The sentence in `lang`. What it quotes of an error below (an address that cannot be read,
    /// a store that failed) stays as that error says it.
    pub(super) fn said_in(&self, lang: Lang) -> String {
        use FormError::*;
        let with = |id: &str, args: &[(&str, Arg)]| lang.tr(&format!("form-error-{id}"), args);
        let quoted = |id: &str, error: String| with(id, &[("error", error.into())]);
        match self {
            ReadOnly => with("read-only", &[]),
            NoSecretKey => with("no-secret-key", &[]),
            NotAdmin { .. } => with("not-admin", &[]),
            NotThisSession => with("not-this-session", &[]),
            FromTheFile { name } => with("from-the-file", &[("name", name.into())]),
            NotAdded { name } => with("not-added", &[("name", name.into())]),
            NotRemoved(e) => quoted("not-removed", e.to_string()),
            Name => with("name", &[("rule", lang.t("name-rule").into())]),
            NameTaken { name } => with("name-taken", &[("name", name.into())]),
            Port => with("port", &[]),
            Namespace { value } => with("namespace", &[("value", format!("{value:?}").into())]),
            NamespacesWithWatch => with("namespaces-with-watch", &[]),
            TooManyNamespaces { count } => with(
                "too-many-namespaces",
                &[("count", (*count as i64).into()), ("most", (crate::config::MAX_NAMESPACES as i64).into())],
            ),
            NoAddress => with("no-address", &[]),
            Address(e) => quoted("address", e.to_string()),
            Duration { field, range } => {
                with("duration", &[("field", lang.t(field).into()), ("range", (*range).into())])
            }
            NoTokenToTest => with("no-token-to-test", &[]),
            NoTokenToSave => with("no-token-to-save", &[]),
            TokenAgain => with("token-again", &[]),
            Unsealable => with("unsealable", &[]),
            NoAction => with("no-action", &[]),
            NotStored(e) => e.to_string(),
        }
    }

    /// The status of a refused request; None for what was entered, which the form shows again.
    fn status(&self) -> Option<StatusCode> {
        use FormError::*;
        Some(match self {
            ReadOnly | NoSecretKey | NotThisSession | NotAdmin { ask: false } => StatusCode::FORBIDDEN,
            NotAdmin { ask: true } => StatusCode::UNAUTHORIZED,
            FromTheFile { .. } | NotAdded { .. } => StatusCode::NOT_FOUND,
            NotRemoved(_) => StatusCode::INTERNAL_SERVER_ERROR,
            Name
            | NameTaken { .. }
            | Port
            | Namespace { .. }
            | NamespacesWithWatch
            | TooManyNamespaces { .. }
            | NoAddress
            | Address(_)
            | Duration { .. }
            | NoTokenToTest
            | NoTokenToSave
            | TokenAgain
            | Unsealable
            | NoAction
            | NotStored(_) => return None,
        })
    }

    /// The answer to a refused request: its status, and a page that says why (asking for
    /// credentials on a 401).
    pub(super) fn answer(&self, board: &Board) -> Response {
        let status = self.status().unwrap_or(StatusCode::OK);
        let body = html! { h1 { (t("refused")) } p { (self.said_in(lang())) } };
        let mut r = respond(status, HTML, page_of(board, &format!("{} · DumbMonit", t("refused")), body));
        if status == StatusCode::UNAUTHORIZED
            && let Ok(v) = HeaderValue::from_str(board.protection().challenge())
        {
            r.headers_mut().insert(header::WWW_AUTHENTICATE, v);
        }
        r
    }

    /// What was entered and not kept, as the form shows it above itself.
    pub(super) fn problem(&self) -> Markup {
        html! { div.error { strong { (t("not-saved")) } " " (self.said_in(lang())) } }
    }
}
