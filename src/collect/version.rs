//! `GET /version`.

use serde::Deserialize;

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Version {
    #[serde(deserialize_with = "super::nullable")]
    pub git_version: String,
}
