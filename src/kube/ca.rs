//! The cluster CA, in the shapes users paste it.

use base64::Engine;
use base64::engine::general_purpose::STANDARD as B64;

use crate::error::{CaProblem, ConfigError, ConnectionError};

const BEGIN: &str = "-----BEGIN CERTIFICATE-----";
const END: &str = "-----END CERTIFICATE-----";

/// Reads a CA given as PEM (also PEM pasted on one line, with its line breaks lost or turned
/// into spaces), as the base64 of `ca.crt` (what `kubectl get secret … -o jsonpath='{.data.ca\.crt}'`
/// prints), or as base64 DER. Returns the DER certificates. `source` names where it came from.
pub fn parse_ca(value: &[u8], source: &str) -> Result<Vec<Vec<u8>>, ConfigError> {
    let wrong = |problem| ConfigError::from(ConnectionError::Ca { given: source.to_string(), problem });
    let text = String::from_utf8_lossy(value);
    let text = text.trim();
    if text.is_empty() {
        return Err(wrong(CaProblem::Empty));
    }
    let certs = if text.contains(BEGIN) {
        pem_certificates(text, source)?
    } else {
        let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
        let decoded = B64.decode(compact.as_bytes()).map_err(|_| wrong(CaProblem::Neither))?;
        let inner = String::from_utf8_lossy(&decoded);
        if inner.contains(BEGIN) { pem_certificates(&inner, source)? } else { vec![decoded] }
    };
    for der in &certs {
        let mut store = rustls::RootCertStore::empty();
        store
            .add(rustls_pki_types::CertificateDer::from(der.as_slice()))
            .map_err(|e| wrong(CaProblem::Unreadable(e)))?;
    }
    Ok(certs)
}

/// Every CERTIFICATE block of a PEM text, whatever became of its line breaks.
fn pem_certificates(text: &str, source: &str) -> Result<Vec<Vec<u8>>, ConfigError> {
    let wrong = |problem| ConfigError::from(ConnectionError::Ca { given: source.to_string(), problem });
    let mut certs = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find(BEGIN) {
        let after = &rest[start + BEGIN.len()..];
        let end = after.find(END).ok_or_else(|| wrong(CaProblem::Unterminated))?;
        let body: String = after[..end].chars().filter(|c| !c.is_whitespace()).collect();
        let der = B64.decode(body.as_bytes()).map_err(|_| wrong(CaProblem::NotBase64))?;
        certs.push(der);
        rest = &after[end + END.len()..];
    }
    if certs.is_empty() {
        return Err(wrong(CaProblem::NoCertificate));
    }
    Ok(certs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample_pem() -> String {
        dumbmonit_sim_pem()
    }

    // A real CA from the simulator's generator, so the parser sees real DER.
    fn dumbmonit_sim_pem() -> String {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let sim = dumbmonit_sim::Sim::start(Default::default(), Default::default()).await.unwrap();
            sim.ca_pem().to_string()
        })
    }

    #[test]
    fn pem_base64_and_one_line_pem_give_the_same_certificate() {
        let pem = sample_pem();
        let expected = parse_ca(pem.as_bytes(), "--ca").unwrap();
        assert_eq!(expected.len(), 1);
        assert_eq!(expected[0][0], 0x30, "DER starts with a SEQUENCE");

        let b64 = B64.encode(pem.as_bytes());
        assert_eq!(parse_ca(b64.as_bytes(), "--ca").unwrap(), expected);

        let one_line_spaces = pem.replace('\n', " ");
        assert_eq!(parse_ca(one_line_spaces.as_bytes(), "--ca").unwrap(), expected);
        let one_line_glued = pem.replace('\n', "");
        assert_eq!(parse_ca(one_line_glued.as_bytes(), "--ca").unwrap(), expected);
        let crlf = pem.replace('\n', "\r\n");
        assert_eq!(parse_ca(crlf.as_bytes(), "--ca").unwrap(), expected);

        let der_b64 = B64.encode(&expected[0]);
        assert_eq!(parse_ca(der_b64.as_bytes(), "--ca").unwrap(), expected);

        let two = format!("{pem}{pem}");
        assert_eq!(parse_ca(two.as_bytes(), "--ca").unwrap().len(), 2);
    }

    #[test]
    fn garbage_names_its_source() {
        assert!(
            parse_ca(b"", "--ca-file ca.crt").unwrap_err().to_string().starts_with("--ca-file ca.crt: the CA is empty")
        );
        assert!(parse_ca(b"not a cert!", "--ca").unwrap_err().to_string().contains("neither PEM nor base64"));
        let broken = format!("{BEGIN}\nAAAA\n");
        assert!(parse_ca(broken.as_bytes(), "--ca").unwrap_err().to_string().contains("never ends"));
        let b64_of_text = B64.encode("hello world");
        assert!(parse_ca(b64_of_text.as_bytes(), "--ca").unwrap_err().to_string().contains("cannot be read"));
    }
}
