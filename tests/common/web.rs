//! `dumbmonit serve` as a real process, and a plain HTTP client for its pages.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A serve configuration for simulated clusters: (name, harness, interval).
pub fn write_config(dir: &Path, extra: &str, clusters: &[(&str, &super::Harness, &str)]) -> PathBuf {
    let p = |p: &Path| p.to_str().unwrap().to_string();
    let cfg = dir.join("dumbmonit.toml");
    let mut text = format!("listen = \"127.0.0.1:0\"\nstate_dir = {:?}\n{extra}\n", p(&dir.join("state")));
    for (name, h, interval) in clusters {
        text.push_str(&format!(
            "[[cluster]]\nname = {name:?}\naddress = {:?}\ntoken_file = {:?}\nca_file = {:?}\ninterval = {interval:?}\n\n",
            h.sim.url(),
            p(&h.token_file),
            p(&h.ca_file)
        ));
    }
    std::fs::write(&cfg, text).unwrap();
    cfg
}

pub struct Served {
    pub child: Child,
    pub addr: SocketAddr,
    pub log: PathBuf,
    /// The CA (PEM) of serve's certificate when it serves over TLS.
    pub tls_ca: Option<String>,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if !std::thread::panicking() {
            super::assert_no_secret(&self.log(), "the log of serve");
        }
    }
}

impl Served {
    /// Starts `serve --config FILE` and waits until it says where its pages are.
    pub fn start(config: &Path, env: &[(&str, &str)]) -> Served {
        let log = config.with_extension("log");
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_dumbmonit"));
        cmd.args(["serve", "--config", config.to_str().unwrap()])
            .env_remove("DUMBMONIT_TOKEN")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap());
        for (k, v) in env {
            cmd.env(k, v);
        }
        // Held by the guard from the start, so that a failed start still reaps the process.
        let mut served = Served {
            child: cmd.spawn().expect("dumbmonit serve starts"),
            addr: SocketAddr::from(([0, 0, 0, 0], 0)),
            log: log.clone(),
            tls_ca: None,
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            let after = text.split("pages on http://").nth(1).or_else(|| text.split("pages on https://").nth(1));
            if let Some(addr) = after.and_then(|r| r.split_whitespace().next()) {
                served.addr = addr.parse().unwrap();
                return served;
            }
            assert!(Instant::now() < deadline, "serve did not start:\n{text}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn get(&self, path: &str) -> Response {
        match &self.tls_ca {
            Some(ca) => get_tls(self.addr, path, ca),
            None => get(self.addr, "GET", path, None),
        }
    }

    pub fn get_with(&self, path: &str, authorization: &str) -> Response {
        get(self.addr, "GET", path, Some(authorization))
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Polls `path` until `check` holds.
    pub fn wait_for(&self, path: &str, what: &str, check: impl Fn(&Response) -> bool) -> Response {
        self.poll(|| self.get(path), path, what, check)
    }

    /// Polls `path`, with these credentials, until `check` holds.
    pub fn wait_for_with(
        &self,
        path: &str,
        authorization: &str,
        what: &str,
        check: impl Fn(&Response) -> bool,
    ) -> Response {
        self.poll(|| self.get_with(path, authorization), path, what, check)
    }

    /// Polls the log until `check` holds of it; the log then.
    pub fn wait_for_log(&self, what: &str, check: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let log = self.log();
            if check(&log) {
                return log;
            }
            assert!(Instant::now() < deadline, "waited in vain for {what} in the log:\n{log}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn poll(&self, get: impl Fn() -> Response, path: &str, what: &str, check: impl Fn(&Response) -> bool) -> Response {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let r = get();
            if check(&r) {
                return r;
            }
            assert!(
                Instant::now() < deadline,
                "waited in vain for {what} at {path}; last answer:\n{}\nlog:\n{}",
                r.body,
                self.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

#[derive(Debug)]
pub struct Response {
    pub status: u16,
    /// Lower-cased names.
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }
}

/// A GET with extra header lines (each ending in CRLF); the head as text, the body as bytes.
pub fn get_raw(addr: SocketAddr, path: &str, headers: &str) -> (String, Vec<u8>) {
    let mut s = TcpStream::connect(addr).expect("serve accepts connections");
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(s, "GET {path} HTTP/1.0\r\nHost: {addr}\r\n{headers}\r\n").unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let end = raw.windows(4).position(|w| w == b"\r\n\r\n").expect("a head") + 4;
    super::assert_no_secret(&String::from_utf8_lossy(&raw), &format!("the answer to {path}"));
    (String::from_utf8(raw[..end].to_vec()).expect("a text head"), raw[end..].to_vec())
}

/// A plain HTTP/1.0 request on loopback.
pub fn get(addr: SocketAddr, method: &str, path: &str, authorization: Option<&str>) -> Response {
    let mut s = TcpStream::connect(addr).expect("serve accepts connections");
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let auth = authorization.map(|a| format!("Authorization: {a}\r\n")).unwrap_or_default();
    write!(s, "{method} {path} HTTP/1.0\r\nHost: {addr}\r\n{auth}\r\n").unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    parse_answer(raw, path)
}

/// Any plain HTTP/1.0 request on loopback, with extra headers (Host included unless given) and
/// a body.
pub fn request(addr: SocketAddr, method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Response {
    let mut s = TcpStream::connect(addr).expect("serve accepts connections");
    // A report that inflates past its bound takes a while in a debug build.
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let mut head = format!("{method} {path} HTTP/1.0\r\n");
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        head.push_str(&format!("Host: {addr}\r\n"));
    }
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("content-length")) {
        head.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    let _ = s.write_all(head.as_bytes()).and_then(|_| s.write_all(body));
    let mut raw = Vec::new();
    // A server that ends the connection without an answer (a panic) gives status 0.
    let _ = s.read_to_end(&mut raw);
    parse_answer(raw, path)
}

/// Parses an HTTP/1.0 answer.
fn parse_answer(raw: Vec<u8>, path: &str) -> Response {
    let text = String::from_utf8(raw).expect("UTF-8 answers");
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let mut lines = head.lines();
    let status = lines.next().and_then(|l| l.split_whitespace().nth(1)).and_then(|s| s.parse().ok()).unwrap_or(0);
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    super::assert_no_secret(&text, &format!("the answer to {path}"));
    Response { status, headers, body: body.to_string() }
}

/// A GET over TLS, the server verified against `ca_pem` as `localhost`.
pub fn get_tls(addr: SocketAddr, path: &str, ca_pem: &str) -> Response {
    request_tls(addr, "GET", path, &[], b"", ca_pem)
}

/// Any request over TLS, with extra headers and a body.
pub fn request_tls(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
    ca_pem: &str,
) -> Response {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    for c in CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
        roots.add(c.unwrap()).unwrap();
    }
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let conn = rustls::ClientConnection::new(std::sync::Arc::new(config), "localhost".try_into().unwrap()).unwrap();
    let tcp = TcpStream::connect(addr).expect("serve accepts connections");
    tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut tls = rustls::StreamOwned::new(conn, tcp);
    let mut head = format!("{method} {path} HTTP/1.0\r\nHost: localhost\r\n");
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("content-length")) {
        head.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    tls.write_all(head.as_bytes()).unwrap();
    // A server that refuses early may close before the body is all sent: its answer still counts.
    let _ = tls.write_all(body);
    let mut raw = Vec::new();
    // A server that closes without close_notify still gave its whole answer (HTTP/1.0).
    let _ = tls.read_to_end(&mut raw);
    parse_answer(raw, path)
}
