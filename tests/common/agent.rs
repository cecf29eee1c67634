//! `serve` over TLS with a cluster read through an agent, and `dumbmonit agent` as a process.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::web::Served;

pub const AGENT_TOKEN: &str = "agent-token-edge-7f3a9c21b5d84e06";
pub const START: &str = "2026-11-30T03:00:00Z";

/// A serve over TLS (its certificate for localhost and 127.0.0.1), and its files.
pub struct Site {
    pub dir: tempfile::TempDir,
    pub ca: String,
    pub ca_file: PathBuf,
    pub token_file: PathBuf,
    pub config: PathBuf,
}

impl Site {
    /// `clusters` is TOML appended to the configuration; the agent's cluster "edge" is always there.
    pub fn new(edge: &str, clusters: &str) -> Site {
        super::register_secret(AGENT_TOKEN);
        let dir = tempfile::tempdir().unwrap();
        let pki =
            dumbmonit_sim::tls::Pki::generate(&["localhost".into(), "127.0.0.1".into(), "dumbmonit.test".into()], None)
                .unwrap();
        let (cert, key, ca_file) = (dir.path().join("tls.crt"), dir.path().join("tls.key"), dir.path().join("ca.crt"));
        std::fs::write(&cert, &pki.server_cert_pem).unwrap();
        std::fs::write(&key, &pki.server_key_pem).unwrap();
        std::fs::write(&ca_file, &pki.ca_pem).unwrap();
        let token_file = dir.path().join("edge.token");
        std::fs::write(&token_file, format!("{AGENT_TOKEN}\n")).unwrap();
        let config = dir.path().join("dumbmonit.toml");
        let text = format!(
            "listen = \"127.0.0.1:0\"\nstate_dir = {:?}\n\n[tls]\ncert_file = {:?}\nkey_file = {:?}\n\n\
             [[cluster]]\nname = \"edge\"\nagent_token_file = {:?}\n{edge}\n\n{clusters}",
            super::path(&dir.path().join("state")),
            super::path(&cert),
            super::path(&key),
            super::path(&token_file)
        );
        std::fs::write(&config, text).unwrap();
        Site { dir, ca: pki.ca_pem, ca_file, token_file, config }
    }

    pub fn serve(&self, env: &[(&str, &str)]) -> Served {
        let mut s = Served::start(&self.config, env);
        s.tls_ca = Some(self.ca.clone());
        assert!(s.log().contains("pages on https://"), "serve says it serves over TLS: {}", s.log());
        s
    }
}

/// `dumbmonit agent` as a real process; killed when dropped.
pub struct Agent {
    pub child: Child,
    pub log: PathBuf,
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if !std::thread::panicking() {
            super::assert_no_secret(&self.log(), "the agent's log");
        }
    }
}

impl Agent {
    pub fn start(site: &Site, h: &super::Harness, server: &str, extra: &[&str], env: &[(&str, &str)]) -> Agent {
        let log = h
            .dir
            .path()
            .join(format!("agent-{}.log", std::process::id() as u64 + Instant::now().elapsed().as_nanos() as u64));
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_dumbmonit"));
        cmd.args(["agent", "--server", server, "--agent-token-file", &super::path(&site.token_file)])
            .args(["--server-ca-file", &super::path(&site.ca_file)])
            .args([&h.sim.url(), "--token-file", &super::path(&h.token_file), "--ca-file", &super::path(&h.ca_file)])
            .args(extra)
            .env_remove("DUMBMONIT_TOKEN")
            .env_remove("HTTPS_PROXY")
            .env_remove("https_proxy")
            .env_remove("ALL_PROXY")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap());
        for (k, v) in env {
            cmd.env(k, v);
        }
        Agent { child: cmd.spawn().expect("the agent starts"), log }
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// GET on the agent's probe port (`--listen`), once it says where it is.
    pub fn probe(&self, path: &str) -> super::web::Response {
        let mut addr = None;
        wait_until(
            "the probe address",
            || {
                addr =
                    self.log().split("probes on http://").nth(1).and_then(|r| r.split('/').next()).map(str::to_string);
                addr.is_some()
            },
            || self.log(),
        );
        super::web::get(addr.unwrap().parse().unwrap(), "GET", path, None)
    }
}

pub fn server_url(s: &Served) -> String {
    format!("https://localhost:{}", s.addr.port())
}

pub fn wait_until(what: &str, mut check: impl FnMut() -> bool, context: impl Fn() -> String) {
    let deadline = Instant::now() + Duration::from_secs(40);
    while !check() {
        assert!(Instant::now() < deadline, "waited in vain for {what}:\n{}", context());
        std::thread::sleep(Duration::from_millis(50));
    }
}
