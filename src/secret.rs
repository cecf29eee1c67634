//! The server's secret key (`secret_key_file`): it seals the tokens of clusters added on the
//! pages, so that a copied database alone does not leak them, and it signs the pages' CSRF tokens.
//! Like Grafana's `secret_key`: made on first start (32 random bytes, mode 0600) when the file
//! is absent, and needed to read what was sealed with it.

use std::io::Write;
use std::path::Path;

use base64::Engine;
use chacha20poly1305::aead::{Aead, AeadCore, KeyInit, OsRng, rand_core::RngCore};
use chacha20poly1305::{ChaCha20Poly1305, Key, Nonce};
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// 32 bytes, kept in the file as 64 hexadecimal digits.
pub struct SecretKey([u8; 32]);

impl std::fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretKey(…)")
    }
}

const NONCE: usize = 12;

/// The key of `secret_key_file` cannot be read or made.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    /// The file cannot be read, or made where it is missing.
    #[error("field `secret_key_file` {}: {source}", .path.display())]
    File { path: std::path::PathBuf, source: std::io::Error },
    /// The file holds something else than a key.
    #[error("field `secret_key_file` {}: not a key: 64 hexadecimal digits expected", .path.display())]
    NotAKey { path: std::path::PathBuf },
}

/// What is given to [`SecretKey::open`] was not sealed with this key, or was damaged since.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("sealed with another key, or damaged")]
pub struct OpenError;

impl SecretKey {
    /// Reads the key, or makes it (mode 0600, never overwriting) when the file does not exist.
    pub fn load_or_create(path: &Path) -> Result<SecretKey, KeyError> {
        let at = |source| KeyError::File { path: path.to_path_buf(), source };
        match std::fs::read_to_string(path) {
            Ok(text) => Self::parse(text.trim()).ok_or_else(|| KeyError::NotAKey { path: path.to_path_buf() }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let key = Self::random();
                if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                    std::fs::create_dir_all(dir).map_err(at)?;
                }
                let mut file = {
                    use std::os::unix::fs::OpenOptionsExt;
                    std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path).map_err(at)?
                };
                let hex: String = key.0.iter().map(|b| format!("{b:02x}")).collect();
                file.write_all(format!("{hex}\n").as_bytes()).and_then(|_| file.sync_all()).map_err(at)?;
                Ok(key)
            }
            Err(e) => Err(at(e)),
        }
    }

    /// The key of 64 hexadecimal digits; None for anything else.
    fn parse(hex: &str) -> Option<SecretKey> {
        if hex.len() != 64 || !hex.is_ascii() {
            return None;
        }
        let mut key = [0u8; 32];
        for (i, b) in key.iter_mut().enumerate() {
            *b = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok()?;
        }
        Some(SecretKey(key))
    }

    /// A key of random bytes (tests, and the file's first start).
    pub fn random() -> SecretKey {
        let mut key = [0u8; 32];
        OsRng.fill_bytes(&mut key);
        SecretKey(key)
    }

    /// `plain` encrypted and authenticated (ChaCha20-Poly1305, a random nonce before it).
    pub fn seal(&self, plain: &[u8]) -> Vec<u8> {
        let cipher = ChaCha20Poly1305::new(Key::from_slice(&self.0));
        let nonce = ChaCha20Poly1305::generate_nonce(&mut OsRng);
        let mut out = nonce.to_vec();
        out.extend(cipher.encrypt(&nonce, plain).expect("sealing in memory"));
        out
    }

    /// What [`Self::seal`] sealed with this key; an error for anything else.
    pub fn open(&self, sealed: &[u8]) -> Result<Vec<u8>, OpenError> {
        if sealed.len() < NONCE {
            return Err(OpenError);
        }
        let cipher = ChaCha20Poly1305::new(Key::from_slice(&self.0));
        cipher.decrypt(Nonce::from_slice(&sealed[..NONCE]), &sealed[NONCE..]).map_err(|_| OpenError)
    }

    /// HMAC-SHA-256 of `message`, URL-safe base64.
    pub fn sign(&self, message: &[u8]) -> String {
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&self.0).expect("any key length");
        mac.update(message);
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes())
    }
}

/// `n` random bytes, URL-safe base64 (session ids, agent tokens).
pub fn random_token(n: usize) -> String {
    let mut bytes = vec![0u8; n];
    OsRng.fill_bytes(&mut bytes);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealed_text_opens_only_with_its_key() {
        let key = SecretKey::random();
        let sealed = key.seal(b"the-token");
        assert!(!sealed.windows(9).any(|w| w == b"the-token"), "no clear text in it");
        assert_eq!(key.open(&sealed).unwrap(), b"the-token");
        assert_ne!(key.seal(b"the-token"), sealed, "a new nonce each time");
        assert!(SecretKey::random().open(&sealed).is_err());
        let mut damaged = sealed.clone();
        damaged[NONCE + 1] ^= 1;
        assert!(key.open(&damaged).is_err());
        assert!(key.open(b"short").is_err());
    }

    #[test]
    fn the_key_file_is_made_once_with_mode_0600_and_read_after() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join("secret.key");
        let made = SecretKey::load_or_create(&path).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        let read = SecretKey::load_or_create(&path).unwrap();
        assert_eq!(read.open(&made.seal(b"x")).unwrap(), b"x");
        std::fs::write(&path, "nope").unwrap();
        let e = SecretKey::load_or_create(&path).unwrap_err().to_string();
        assert!(e.contains("field `secret_key_file`") && e.contains("64 hexadecimal digits"), "{e}");
        assert_eq!(format!("{made:?}"), "SecretKey(…)", "never printed");
    }

    #[test]
    fn signatures_depend_on_key_and_message() {
        let key = SecretKey::random();
        assert_eq!(key.sign(b"a"), key.sign(b"a"));
        assert_ne!(key.sign(b"a"), key.sign(b"b"));
        assert_ne!(SecretKey::random().sign(b"a"), key.sign(b"a"));
        assert_ne!(random_token(32), random_token(32));
        assert_eq!(random_token(32).len(), 43);
    }
}
