//! Reaching PostgreSQL (`[state]`): the pool, TLS as `sslmode` asks, the server's version, and
//! the schema; the stores of one replica share the pool.

use std::sync::Arc;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};

use super::db::{Conn, DbError, DbRuntime, Postgres};
use super::{Replica, StateError, Store};
use crate::config::{SslMode, StateConfig};

/// The oldest PostgreSQL taken: 13 (`server_version_num` 130000).
pub const MIN_VERSION: i64 = 130_000;

/// A replica's way to PostgreSQL: its stores are made from it.
#[derive(Clone)]
pub struct Database {
    postgres: Postgres,
    /// The address as said in errors and on the pages (there is never a password in it).
    pub place: String,
    pub replica: Replica,
}

/// Why PostgreSQL could not be used at start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// Settings that cannot work, or a server that answers but cannot be used (the wrong
    /// password, not PostgreSQL, too old, a newer schema, missing rights): exit 3.
    #[error("[state]: {0}")]
    Refused(String),
    /// The server could not be reached (now): a replica starts anyway, and says so.
    #[error("[state]: {0}")]
    Unreachable(String),
}

impl StartError {
    pub fn is_unreachable(&self) -> bool {
        matches!(self, StartError::Unreachable(_))
    }
}

/// Connects, checks the server, and brings the schema up to date.
pub fn connect(config: &StateConfig) -> Result<Database, StartError> {
    let shared = open(config)?;
    shared.check()?;
    Ok(shared)
}

/// The pool, made from the settings without reaching the server yet ([`Database::check`] does).
pub fn open(config: &StateConfig) -> Result<Database, StartError> {
    let place = config.url.clone();
    let refused = |why: String| StartError::Refused(why);
    let mut pg = config.parsed().map_err(|e| refused(format!("url: {e}")))?;
    if let Some(path) = &config.password_file {
        let password =
            std::fs::read_to_string(path).map_err(|e| refused(format!("password_file {}: {e}", path.display())))?;
        let password = password.trim_end_matches(['\n', '\r']);
        // Kept out of every line the process writes, whatever says it.
        crate::redact::know_secret(password);
        pg.password(password);
    }
    pg.connect_timeout(config.connect_timeout());
    pg.application_name("dumbmonit");
    pg.options(format!("-c statement_timeout={}", config.statement_timeout().as_millis()));
    pg.ssl_mode(match config.sslmode {
        SslMode::Disable => tokio_postgres::config::SslMode::Disable,
        SslMode::Prefer => tokio_postgres::config::SslMode::Prefer,
        _ => tokio_postgres::config::SslMode::Require,
    });
    let tls = tls(config).map_err(|e| refused(format!("ca_file: {e}")))?;
    let manager = Manager::from_config(pg, tls, ManagerConfig { recycling_method: RecyclingMethod::Fast });
    let runtime = DbRuntime::new().map_err(|e| refused(format!("its connections cannot run: {e}")))?;
    let timeout = Some(config.connect_timeout());
    let pool = Pool::builder(manager)
        .max_size(config.pool() as usize)
        .runtime(deadpool_postgres::Runtime::Tokio1)
        .wait_timeout(timeout)
        .create_timeout(timeout)
        .recycle_timeout(timeout)
        .build()
        .map_err(|e| refused(format!("the connection pool: {e}")))?;
    let postgres = Postgres::new(pool, runtime);
    let replica = Replica { name: config.replica(), lease: config.lease() };
    Ok(Database { postgres, place, replica })
}

/// A server that never answered is away (for now); one that answered and refused, or a name
/// that does not resolve, is a setting to fix.
fn classify(place: &str, e: DbError) -> StartError {
    let said = format!("{place}: {e}");
    let away = match &e {
        DbError::Pool(_) => true,
        // The network's answers: nothing listens, nothing answers in time, the way is cut. A
        // server that answers what PostgreSQL would not ("bytes remaining on stream") is not
        // away: it is not PostgreSQL.
        DbError::Postgres(p) => {
            use std::io::ErrorKind::*;
            p.as_db_error().is_none()
                && std::error::Error::source(p).and_then(|c| c.downcast_ref::<std::io::Error>()).is_some_and(|io| {
                    matches!(
                        io.kind(),
                        ConnectionRefused
                            | TimedOut
                            | HostUnreachable
                            | NetworkUnreachable
                            | ConnectionAborted
                            | ConnectionReset
                            | NotConnected
                            | AddrNotAvailable
                    )
                })
        }
        _ => false,
    };
    match (away, e.sqlstate()) {
        // 42501: insufficient privilege; 28P01/28000: authentication.
        (_, Some(code)) if code.starts_with("28") || code == "42501" => StartError::Refused(said),
        (true, _) => StartError::Unreachable(said),
        _ => StartError::Refused(said),
    }
}

impl Database {
    /// Reaches the server: checks its version and brings the schema up to date.
    pub fn check(&self) -> Result<(), StartError> {
        let place = &self.place;
        let mut conn = Conn::Postgres(self.postgres.clone());
        let version = match conn.query_one("SHOW server_version_num", &[]) {
            Ok(row) => row.and_then(|r| r.text(0).ok()).and_then(|v| v.trim().parse::<i64>().ok()).unwrap_or(0),
            Err(e) => return Err(classify(place, e)),
        };
        if version < MIN_VERSION {
            return Err(StartError::Refused(format!(
                "{place}: PostgreSQL {}.{} is too old: DumbMonit needs PostgreSQL 13 or later",
                version / 10_000,
                version % 10_000 / 100
            )));
        }
        Store::with(conn, place.clone(), Some(self.replica.clone())).map(drop).map_err(|e| match e {
            StateError::Db { source, .. } => classify(place, *source),
            other => StartError::Refused(other.to_string()),
        })
    }

    /// A store on the shared pool.
    pub fn store(&self) -> Result<Store, StateError> {
        Ok(Store {
            conn: Conn::Postgres(self.postgres.clone()),
            place: self.place.clone(),
            replica: Some(self.replica.clone()),
            written_pods: Default::default(),
            written_alerts: Default::default(),
            unsaved: Default::default(),
        })
    }
}

/// The TLS connector `sslmode` asks for (none with `disable`).
fn tls(config: &StateConfig) -> Result<tokio_postgres_rustls::MakeRustlsConnect, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = rustls::RootCertStore::empty();
    match &config.ca_file {
        Some(path) => {
            let pem = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
            let mut any = false;
            for cert in CertificateDer::pem_slice_iter(&pem) {
                let cert = cert.map_err(|e| format!("{}: {e}", path.display()))?;
                roots.add(cert).map_err(|e| format!("{}: {e}", path.display()))?;
                any = true;
            }
            if !any {
                return Err(format!("{}: no certificate in it", path.display()));
            }
        }
        None => {
            for cert in rustls_native_certs::load_native_certs().certs {
                let _ = roots.add(cert);
            }
        }
    }
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?;
    let tls = match config.sslmode {
        SslMode::VerifyFull => builder.with_root_certificates(roots).with_no_client_auth(),
        mode => {
            let chain = match mode {
                SslMode::VerifyCa => Some(
                    rustls::client::WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
                        .build()
                        .map_err(|e| e.to_string())?,
                ),
                _ => None,
            };
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(Lenient { chain, provider }))
                .with_no_client_auth()
        }
    };
    Ok(tokio_postgres_rustls::MakeRustlsConnect::new(tls))
}

/// `prefer` and `require` (no check of the certificate, as libpq), and `verify-ca` (the chain
/// checked, not the host name). The handshake's signatures are always checked.
#[derive(Debug)]
struct Lenient {
    chain: Option<Arc<rustls::client::WebPkiServerVerifier>>,
    provider: Arc<rustls::crypto::CryptoProvider>,
}

impl ServerCertVerifier for Lenient {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some(chain) = &self.chain else { return Ok(ServerCertVerified::assertion()) };
        match chain.verify_server_cert(end_entity, intermediates, server_name, ocsp, now) {
            Err(rustls::Error::InvalidCertificate(rustls::CertificateError::NotValidForName))
            | Err(rustls::Error::InvalidCertificate(rustls::CertificateError::NotValidForNameContext { .. })) => {
                Ok(ServerCertVerified::assertion())
            }
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.provider.signature_verification_algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.provider.signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider.signature_verification_algorithms.supported_schemes()
    }
}
