//! Why a change on the pages is refused, one variant per refusal with the sentence the page
//! shows: a request that may not change anything is answered with its status and a page that
//! says why; what was entered that cannot be kept is shown above the form again ("Not saved.").

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use maud::{Markup, html};

use super::form::NAME_RULE;
use super::page_of;
use crate::board::Board;
use crate::error::AddressError;
use crate::state::StateError;
use crate::web::html::t;
use crate::web::{HTML, respond};

#[derive(Debug, thiserror::Error)]
pub(super) enum FormError {
    // The request may not change anything.
    #[error(
        "This monitor is read-only: clusters are added in its configuration file. To add them here, \
         give admins in the file's [auth.admin] section (bearer_token_file, or username with \
         password_hash), then reload."
    )]
    ReadOnly,
    #[error(
        "The secret key (secret_key_file) could not be read or made, so tokens cannot be stored; \
         the server's log says why."
    )]
    NoSecretKey,
    /// Credentials that are not an admin's; `ask`: none were sent, so the answer asks for them.
    #[error("Adding, editing and removing clusters needs the admin role.")]
    NotAdmin { ask: bool },
    #[error("This form is not from this session (or it expired). Open the page again and send it from there.")]
    NotThisSession,
    #[error("Cluster {name} comes from the configuration file: it is changed there, not on the pages.")]
    FromTheFile { name: String },
    #[error("No cluster named {name} was added on the pages.")]
    NotAdded { name: String },
    #[error("Not removed: {0}")]
    NotRemoved(StateError),

    // What was entered cannot be kept.
    #[error("Name: {}", NAME_RULE)]
    Name,
    #[error("Name: a cluster named {name} is already watched")]
    NameTaken { name: String },
    #[error("Port: a number from 1 to 65535 is expected")]
    Port,
    #[error(
        "Namespaces: {value:?} is not a namespace name (lower-case letters, digits and '-', at most 63, starting and ending with a letter or digit)"
    )]
    Namespace { value: String },
    #[error("Namespaces: namespaced access is read every interval, not followed by watch: untick one of them")]
    NamespacesWithWatch,
    #[error("Address: the API server's address is needed, for example https://k3s.lan:6443")]
    NoAddress,
    /// An address that a cycle could not read (the same parsing as `check`'s).
    #[error("Address: {0}")]
    Address(AddressError),
    /// A duration out of its range; `field` and `range` as the form says them.
    #[error("{field}: a duration from {range} is expected, such as 10s, 1m or 30")]
    Duration { field: &'static str, range: &'static str },
    #[error("Service-account token: paste the token to test with")]
    NoTokenToTest,
    #[error("Service-account token: paste the token the cluster is read with")]
    NoTokenToSave,
    #[error(
        "Service-account token: the address, port, CA or certificate choice changed, so the stored token \
         is not sent: enter the token again"
    )]
    TokenAgain,
    #[error("The stored token cannot be unsealed: paste the token again")]
    Unsealable,
    #[error("Choose Test or Save")]
    NoAction,
    /// The cluster could not be stored: why, as the store says it.
    #[error("{0}")]
    NotStored(#[from] crate::board::NotStored),
}

impl FormError {
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
        let why = match self {
            FormError::NotAdmin { .. } => t("refused-not-admin"),
            _ => self.to_string(),
        };
        let body = html! { h1 { (t("refused")) } p { (why) } };
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
        html! { div.error { strong { (t("not-saved")) } " " (self.to_string()) } }
    }
}
