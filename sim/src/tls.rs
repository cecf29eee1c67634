//! A cluster CA and a serving certificate made at start, as kubeadm or k3s would make them.

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

/// The PKI of one simulated cluster.
pub struct Pki {
    /// The cluster CA, PEM (what `ca.crt` of a service-account Secret holds).
    pub ca_pem: String,
    /// The serving certificate and its key, PEM (for a server other than the simulator).
    pub server_cert_pem: String,
    pub server_key_pem: String,
    pub(crate) server_chain: Vec<CertificateDer<'static>>,
    pub(crate) server_key: PrivatePkcs8KeyDer<'static>,
}

impl Pki {
    /// A new CA and a server certificate for `sans` (DNS names or IP addresses), valid from an
    /// hour ago for `lifetime` from now (a year when None).
    pub fn generate(sans: &[String], lifetime: Option<std::time::Duration>) -> Result<Pki, rcgen::Error> {
        let ca_key = KeyPair::generate()?;
        let mut ca_params = CertificateParams::new(Vec::<String>::new())?;
        ca_params.distinguished_name.push(DnType::CommonName, "dumbmonit-sim-server-ca");
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params.key_usages =
            vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign, KeyUsagePurpose::DigitalSignature];
        let ca_cert = ca_params.self_signed(&ca_key)?;
        let issuer = Issuer::new(ca_params, ca_key);

        let server_key = KeyPair::generate()?;
        let mut params = CertificateParams::new(sans.to_vec())?;
        params.distinguished_name.push(DnType::CommonName, "kube-apiserver");
        let now = time::OffsetDateTime::now_utc();
        params.not_before = now - time::Duration::hours(1);
        params.not_after = now + lifetime.unwrap_or(std::time::Duration::from_secs(365 * 86400));
        let server_cert = params.signed_by(&server_key, &issuer)?;

        Ok(Pki {
            ca_pem: ca_cert.pem(),
            server_cert_pem: server_cert.pem(),
            server_key_pem: server_key.serialize_pem(),
            server_chain: vec![server_cert.der().clone()],
            server_key: PrivatePkcs8KeyDer::from(server_key.serialize_der()),
        })
    }

    pub(crate) fn server_config(&self) -> Result<rustls::ServerConfig, rustls::Error> {
        let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()?
            .with_no_client_auth()
            .with_single_cert(self.server_chain.clone(), PrivateKeyDer::Pkcs8(self.server_key.clone_key()))?;
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(config)
    }
}
