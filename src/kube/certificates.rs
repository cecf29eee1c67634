//! When the certificates of a connection expire: the API server's serving certificate, read
//! from each TLS handshake the client makes, and the client certificate a kubeconfig gives.

use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use base64::Engine;
use jiff::Timestamp;
use rustls_pki_types::CertificateDer;
use rustls_pki_types::pem::PemObject;
use serde::{Deserialize, Serialize};

/// The `notAfter` of the certificates a cycle's connection used.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Certificates {
    /// The API server's serving certificate, from the last TLS handshake (also when its
    /// verification is skipped: the server still presents it).
    pub serving: Option<Timestamp>,
    /// The client certificate DumbMonit authenticates with, when a kubeconfig gives one.
    pub client: Option<Timestamp>,
}

/// The `notAfter` of a DER certificate; None when it does not parse.
pub fn not_after(der: &[u8]) -> Option<Timestamp> {
    let (_, cert) = x509_parser::parse_x509_certificate(der).ok()?;
    Timestamp::from_second(cert.validity().not_after.timestamp()).ok()
}

/// The `notAfter` of the first certificate of a PEM text.
pub fn pem_not_after(pem: &[u8]) -> Option<Timestamp> {
    let first = CertificateDer::pem_slice_iter(pem).next()?.ok()?;
    not_after(&first)
}

/// The client certificate of a kubeconfig's user: `client-certificate-data` (base64 of the
/// PEM) or the file `client-certificate` names.
pub fn client_not_after(auth: &kube::config::AuthInfo) -> Option<Timestamp> {
    let pem = match (&auth.client_certificate_data, &auth.client_certificate) {
        (Some(data), _) => base64::engine::general_purpose::STANDARD.decode(data.trim()).ok()?,
        (None, Some(path)) => std::fs::read(path).ok()?,
        (None, None) => return None,
    };
    pem_not_after(&pem)
}

/// Where the serving certificate's `notAfter` of the last handshake is kept.
pub type Slot = Arc<Mutex<Option<Timestamp>>>;

/// A connector that notes the serving certificate of every TLS connection it makes.
#[derive(Clone)]
pub struct Noting<C> {
    pub inner: C,
    pub slot: Slot,
}

type Stream = hyper_rustls::MaybeHttpsStream<hyper_util::rt::TokioIo<tokio::net::TcpStream>>;
type BoxError = Box<dyn std::error::Error + Send + Sync>;

impl<C> tower::Service<http::Uri> for Noting<C>
where
    C: tower::Service<http::Uri, Response = Stream, Error = BoxError> + Send + 'static,
    C::Future: Send + 'static,
{
    type Response = Stream;
    type Error = BoxError;
    type Future = std::pin::Pin<Box<dyn Future<Output = Result<Stream, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, uri: http::Uri) -> Self::Future {
        let connecting = self.inner.call(uri);
        let slot = self.slot.clone();
        Box::pin(async move {
            let stream = connecting.await?;
            if let hyper_rustls::MaybeHttpsStream::Https(tls) = &stream {
                let (_, connection) = tls.inner().get_ref();
                let presented =
                    connection.peer_certificates().and_then(|chain| chain.first()).and_then(|c| not_after(c));
                if presented.is_some() {
                    *slot.lock().expect("certificate slot") = presented;
                }
            }
            Ok(stream)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_after_of_a_pem_certificate() {
        // A certificate made for the test, valid until 2027-01-01T00:00:00Z.
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::new(vec!["k3s.lan".to_string()]).unwrap();
        params.not_after = rcgen::date_time_ymd(2027, 1, 1);
        let cert = params.self_signed(&key).unwrap();
        assert_eq!(pem_not_after(cert.pem().as_bytes()), Some("2027-01-01T00:00:00Z".parse().unwrap()));
        assert_eq!(not_after(cert.der()), Some("2027-01-01T00:00:00Z".parse().unwrap()));
        assert_eq!(pem_not_after(b"not a certificate"), None);
        let auth = kube::config::AuthInfo {
            client_certificate_data: Some(base64::engine::general_purpose::STANDARD.encode(cert.pem())),
            ..Default::default()
        };
        assert_eq!(client_not_after(&auth), Some("2027-01-01T00:00:00Z".parse().unwrap()));
    }
}
