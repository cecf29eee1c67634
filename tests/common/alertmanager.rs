//! A real Alertmanager (Debian's `prometheus-alertmanager`) on loopback, and a plain client.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::{Killed, free_port, path};

/// A plain HTTP/1.0 GET on loopback: (status, body).
pub fn get(port: u16, path: &str) -> Option<(u16, String)> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(s, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
    let mut text = String::new();
    s.read_to_string(&mut text).ok()?;
    let status = text.split_whitespace().nth(1)?.parse().ok()?;
    let body = text.split_once("\r\n\r\n").map(|(_, b)| b.to_string()).unwrap_or_default();
    Some((status, body))
}

pub fn alertmanager(dir: &Path) -> (Killed, u16) {
    let binary = ["prometheus-alertmanager", "alertmanager"]
        .into_iter()
        .find(|b| Command::new(b).arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok())
        .expect("Alertmanager is needed: install the Debian package `prometheus-alertmanager` (scripts/test.sh does)");
    let config = dir.join("alertmanager.yml");
    std::fs::write(&config, "route:\n  receiver: blackhole\nreceivers:\n  - name: blackhole\n").unwrap();
    let port = free_port();
    let child = Command::new(binary)
        .args([
            format!("--config.file={}", path(&config)),
            format!("--storage.path={}", path(&dir.join("am-data"))),
            format!("--web.listen-address=127.0.0.1:{port}"),
            "--cluster.listen-address=".to_string(),
        ])
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.join("alertmanager.log")).unwrap())
        .spawn()
        .expect("Alertmanager starts");
    let child = Killed(child);
    let deadline = Instant::now() + Duration::from_secs(30);
    while get(port, "/-/ready").map(|(s, _)| s) != Some(200) {
        assert!(Instant::now() < deadline, "Alertmanager never became ready");
        std::thread::sleep(Duration::from_millis(100));
    }
    (child, port)
}

/// Any plain HTTP/1.0 request with a JSON body: (status, body).
pub fn send(port: u16, method: &str, path: &str, body: &str) -> (u16, String) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("Alertmanager accepts connections");
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(
        s,
        "{method} {path} HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let status = text.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    (status, text.split_once("\r\n\r\n").map(|(_, b)| b.to_string()).unwrap_or_default())
}
