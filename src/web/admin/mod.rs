//! Clusters added, tested, edited and removed on the pages, as the setup guide describes; the
//! audit list of those changes.
//!
//! Only admins (`[auth.admin]`) change anything; without admins the pages are a read-only
//! monitor and say how to enable changes. Every change is a POST that carries a CSRF token
//! signed with the secret key and bound to the session cookie (`SameSite=Strict`, `HttpOnly`),
//! and whose `Origin` (or `Sec-Fetch-Site`) is this server (tower-http's CSRF layer). No
//! JavaScript: the pages keep their Content-Security-Policy.
//!
//! Tokens are write-only: sealed with the secret key before they are stored (in `state`), never put back in
//! a page, an answer, a log line or /metrics. An agent's token is shown once, in the answer that
//! made it.
//!
//! - `guard`: the session cookie, the CSRF token, and who may change anything;
//! - `form`: what the cluster form sends, its checks, and its page;
//! - `refusal`: why a change is refused, one variant each, with the sentence the page shows;
//! - `test_cycle`: the Test button, one cycle with what was entered, and the guide's help;
//! - `store`: a change kept in the state directory (its token sealed there), and audited;
//! - `actions`: the handlers of the routes, and the agent's command;
//! - `silences`: the silences' page and forms, and the acknowledgement's.

mod actions;
mod form;
mod guard;
pub mod notifiers;
mod refusal;
pub mod silences;
mod store;
mod test_cycle;

pub(crate) use actions::{audit, edit_form, edit_post, new_form, new_post, remove_post};
pub use guard::{Https, SESSION_COOKIE};

use maud::Markup;

use crate::board::Board;

/// A page of the forms, in the pages' frame.
fn page_of(board: &Board, title: &str, body: Markup) -> String {
    crate::web::html::still_page(title, board.banner(), body)
}
