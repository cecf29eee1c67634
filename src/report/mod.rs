//! What `check` prints: the text report and the JSON document.

pub mod json;
pub mod text;
pub mod top;

/// `--output`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Output {
    Text,
    Json,
    Prometheus,
}
