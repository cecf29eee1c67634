//! From the user's flags to a kube `Config`: a direct address with token and CA, a
//! kubeconfig (exec plugins included), or the in-cluster service account.

use std::path::PathBuf;
use std::time::Duration;

use secrecy::{ExposeSecret, SecretString};

use super::address::parse_address;
use super::ca::parse_ca;
use crate::error::{AddressError, ConfigError, ConnectionError, FlagError};
use crate::redact::Redactor;

/// The environment variable that may carry the token.
pub const TOKEN_ENV: &str = "DUMBMONIT_TOKEN";

/// A duration in seconds, as the settings give it: a flag's number (`--timeout 2.5`), a file's
/// number or string (`timeout = "10s"`: how the file reads it is `config`'s), the pages' field.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Seconds(pub f64);

impl Seconds {
    pub fn duration(self) -> Duration {
        Duration::from_secs_f64(self.0)
    }
}

/// As a flag's default is shown (`10`).
impl std::fmt::Display for Seconds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// As a flag is read: a number of seconds, checked by the command that takes it.
impl std::str::FromStr for Seconds {
    type Err = std::num::ParseFloatError;

    fn from_str(s: &str) -> Result<Seconds, Self::Err> {
        s.parse().map(Seconds)
    }
}

/// The port when an address names none.
pub fn default_port() -> u16 {
    6443
}

/// The deadline of each request when none is given.
pub fn default_timeout() -> Seconds {
    Seconds(10.0)
}

crate::flat::group! { $
    /// How to reach one cluster, and what of it to leave out: the one set of connection settings
    /// of the command line (its flags, by clap), of a `[[cluster]]` in the configuration file
    /// (`config::ClusterConfig`, its keys flat beside the cluster's own) and of a cluster added
    /// on the pages (`config::PageSettings`).
    #[derive(Clone, Debug, PartialEq, clap::Args)]
    pub struct ConnectOptions in kube as connect => connect_table {
        /// The API server: https://HOST:PORT, HOST, HOST:PORT, IP or [IPv6]
        struct[] file[]
        address: Option<String>,
        /// The port when ADDRESS names none
        struct[#[arg(long, default_value_t = default_port())]]
        file[#[serde(default = "crate::kube::connect::default_port")]]
        port: u16,
        /// The bearer token (prefer --token-file: arguments are visible to other users of the machine)
        struct[#[arg(long, conflicts_with = "token_file")]] file[]
        token: Option<String>,
        /// A file holding the bearer token
        struct[#[arg(long, value_name = "FILE")]] file[]
        token_file: Option<PathBuf>,
        /// The cluster CA: PEM (also on one line) or the base64 of ca.crt
        struct[#[arg(long, value_name = "VALUE", conflicts_with = "ca_file", allow_hyphen_values = true)]] file[]
        ca: Option<String>,
        /// A file holding the cluster CA (PEM, or the base64 of it)
        struct[#[arg(long, value_name = "FILE")]] file[]
        ca_file: Option<PathBuf>,
        /// Skip every certificate check (trusted networks only)
        struct[#[arg(long)]] file[#[serde(default)]]
        insecure_skip_tls_verify: bool,
        /// Deadline of each whole request, body included, in seconds
        struct[#[arg(long, value_name = "SECONDS", default_value_t = default_timeout())]]
        file[#[serde(default = "crate::kube::connect::default_timeout")]]
        timeout: Seconds,
        /// Leave this namespace out everywhere (repeatable); events about Nodes are kept
        struct[#[arg(long = "ignore-namespace", value_name = "NS")]] file[#[serde(default)]]
        ignored_namespaces: Vec<String>,
        /// Read only this namespace (repeatable): namespaced access, for a token with rights in
        /// some namespaces and nothing cluster-wide
        struct[#[arg(long = "namespace", value_name = "NS")]] file[#[serde(default)]]
        namespaces: Vec<String>,
        /// A kubeconfig file (exec credential plugins included)
        struct[#[arg(long, value_name = "FILE")]] file[]
        kubeconfig: Option<PathBuf>,
        /// The kubeconfig context to use
        struct[#[arg(long, value_name = "NAME")]] file[]
        context: Option<String>,
        /// Use the mounted service-account token and CA (when running in a pod)
        struct[#[arg(long)]] file[#[serde(default)]]
        in_cluster: bool,
    }
}

impl Default for ConnectOptions {
    /// Nothing given: the defaults of the flags and the file.
    fn default() -> ConnectOptions {
        ConnectOptions {
            address: None,
            port: default_port(),
            token: None,
            token_file: None,
            ca: None,
            ca_file: None,
            insecure_skip_tls_verify: false,
            timeout: default_timeout(),
            ignored_namespaces: Vec::new(),
            namespaces: Vec::new(),
            kubeconfig: None,
            context: None,
            in_cluster: false,
        }
    }
}

/// A cluster ready to be read.
pub struct Connection {
    /// The API server's URL, as shown in messages.
    pub address: String,
    pub config: kube::Config,
    /// Secrets that must never leave the process in any text.
    pub redactor: Redactor,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection").field("address", &self.address).finish_non_exhaustive()
    }
}

/// Resolves the options. Precedence: `--in-cluster`; else an ADDRESS; else `--kubeconfig`
/// and/or `--context`; else `$KUBECONFIG` or `~/.kube/config` when present.
pub async fn connect(o: &ConnectOptions) -> Result<Connection, ConfigError> {
    let direct_flags = o.token.is_some()
        || o.token_file.is_some()
        || o.ca.is_some()
        || o.ca_file.is_some()
        || o.insecure_skip_tls_verify;
    let kubeconfig_flags = o.kubeconfig.is_some() || o.context.is_some();
    let mut conn = if o.in_cluster {
        if o.address.is_some() || kubeconfig_flags || direct_flags {
            return Err(ConnectionError::InClusterWithOthers.into());
        }
        let config = kube::Config::incluster().map_err(ConnectionError::InCluster)?;
        from_config(config)
    } else if let Some(address) = &o.address {
        if kubeconfig_flags {
            return Err(ConnectionError::AddressAndKubeconfig.into());
        }
        direct(address, o)?
    } else if kubeconfig_flags || default_kubeconfig_exists() {
        if direct_flags {
            return Err(ConnectionError::DirectWithKubeconfig.into());
        }
        kubeconfig(o).await?
    } else {
        return Err(ConnectionError::NoCluster.into());
    };
    let c = &mut conn.config;
    // A monitor must see outages: no retries of 429/503/504 behind its back.
    c.default_retry = false;
    c.connect_timeout = Some(o.timeout.duration());
    c.write_timeout = Some(o.timeout.duration());
    // The whole-request deadline is enforced around each request; see `fetch`.
    c.read_timeout = None;
    c.disable_compression = false;
    Ok(conn)
}

fn default_kubeconfig_exists() -> bool {
    std::env::var_os("KUBECONFIG").is_some_and(|v| !v.is_empty())
        || std::env::var_os("HOME").is_some_and(|h| PathBuf::from(h).join(".kube/config").is_file())
}

fn from_config(config: kube::Config) -> Connection {
    let mut redactor = Redactor::default();
    if let Some(t) = &config.auth_info.token {
        redactor.add(t.expose_secret());
    }
    let address = config.cluster_url.to_string().trim_end_matches('/').to_string();
    Connection { address, config, redactor }
}

fn direct(address: &str, o: &ConnectOptions) -> Result<Connection, ConfigError> {
    let url = parse_address(address, o.port)?;
    let token = read_token(o)?;
    let ca = match (&o.ca, &o.ca_file) {
        (Some(v), None) => Some(parse_ca(v.as_bytes(), "--ca")?),
        (None, Some(f)) => {
            let bytes = std::fs::read(f).map_err(|source| FlagError::FlagFile {
                flag: "--ca-file",
                path: f.clone(),
                source,
            })?;
            Some(parse_ca(&bytes, &format!("--ca-file {}", f.display()))?)
        }
        (None, None) => None,
        (Some(_), Some(_)) => return Err(ConnectionError::CaTwice.into()),
    };
    if ca.is_some() && o.insecure_skip_tls_verify {
        return Err(ConnectionError::InsecureWithCa.into());
    }
    let uri: http::Uri = url.parse().map_err(|source| AddressError::Invalid { text: url.clone(), source })?;
    let mut config = kube::Config::new(uri);
    config.root_cert = ca;
    config.accept_invalid_certs = o.insecure_skip_tls_verify;
    let mut redactor = Redactor::default();
    redactor.add(&token);
    config.auth_info.token = Some(SecretString::from(token));
    Ok(Connection { address: url, config, redactor })
}

/// `--token-file`, else `--token`, else `$DUMBMONIT_TOKEN`.
fn read_token(o: &ConnectOptions) -> Result<String, ConfigError> {
    let token = match (&o.token_file, &o.token) {
        (Some(_), Some(_)) => return Err(ConnectionError::TokenTwice.into()),
        (Some(f), None) => std::fs::read_to_string(f)
            .map_err(|source| FlagError::FlagFile { flag: "--token-file", path: f.clone(), source })?
            .trim()
            .to_string(),
        (None, Some(t)) => t.trim().to_string(),
        (None, None) => std::env::var(TOKEN_ENV).unwrap_or_default().trim().to_string(),
    };
    if token.is_empty() {
        return Err(ConnectionError::NoToken { env: TOKEN_ENV }.into());
    }
    if token.chars().any(|c| c.is_control() || c == ' ') {
        return Err(ConnectionError::TokenCharacters.into());
    }
    Ok(token)
}

async fn kubeconfig(o: &ConnectOptions) -> Result<Connection, ConfigError> {
    let options = kube::config::KubeConfigOptions { context: o.context.clone(), cluster: None, user: None };
    let config = match &o.kubeconfig {
        Some(path) => {
            let failed = |source| ConnectionError::Kubeconfig { path: Some(path.clone()), source };
            let kc = kube::config::Kubeconfig::read_from(path).map_err(failed)?;
            kube::Config::from_custom_kubeconfig(kc, &options).await.map_err(failed)?
        }
        None => kube::Config::from_kubeconfig(&options)
            .await
            .map_err(|source| ConnectionError::Kubeconfig { path: None, source })?,
    };
    Ok(from_config(config))
}
