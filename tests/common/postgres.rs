//! A real PostgreSQL server (Debian's package, `postgresql`), started as an unprivileged
//! cluster in a temporary directory on a loopback port, and stopped when dropped. When the
//! tests run as root, the server runs as `nobody` (PostgreSQL refuses root).
//!
//! Its superuser `postgres` logs in with a password over TCP (SCRAM), as a user's DumbMonit
//! does; the test's own administration goes through the Unix socket in the directory.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub const PASSWORD: &str = "pg-test-password-7c1e";

pub struct Postgres {
    pub dir: tempfile::TempDir,
    pub port: u16,
    bin: PathBuf,
    server: Option<Child>,
}

/// The newest PostgreSQL installed: its `bin` directory.
fn installed() -> PathBuf {
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| Some((e.file_name().to_str()?.parse().ok()?, e.path().join("bin"))))
        .filter(|(_, bin): &(u32, PathBuf)| bin.join("initdb").exists())
        .collect();
    found.sort();
    found
        .pop()
        .map(|(_, bin)| bin)
        .expect("PostgreSQL is needed: install the Debian package `postgresql` (scripts/test.sh does)")
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// A command of PostgreSQL's, as the server's own user.
fn as_owner(bin: &Path, name: &str) -> Command {
    if is_root() {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"]).arg(bin.join(name));
        c
    } else {
        Command::new(bin.join(name))
    }
}

impl Postgres {
    /// A new cluster, started.
    pub fn start() -> Postgres {
        let bin = installed();
        let dir = tempfile::tempdir().unwrap();
        if is_root() {
            std::os::unix::fs::chown(dir.path(), Some(65534), Some(65534)).unwrap();
        }
        let pwfile = dir.path().join("pwfile");
        std::fs::write(&pwfile, PASSWORD).unwrap();
        if is_root() {
            std::os::unix::fs::chown(&pwfile, Some(65534), Some(65534)).unwrap();
        }
        let out = as_owner(&bin, "initdb")
            .args(["-D"])
            .arg(dir.path().join("data"))
            .args(["-U", "postgres", "--auth-local=trust", "--auth-host=scram-sha-256", "--no-sync"])
            .arg(format!("--pwfile={}", pwfile.display()))
            .output()
            .expect("initdb runs");
        assert!(out.status.success(), "initdb: {}", String::from_utf8_lossy(&out.stderr));
        let port = super::free_port();
        let mut pg = Postgres { dir, port, bin, server: None };
        pg.resume();
        pg
    }

    /// Starts the server again (after [`Postgres::stop`]).
    pub fn resume(&mut self) {
        let log = std::fs::File::create(self.dir.path().join("server.log")).unwrap();
        if is_root() {
            std::os::unix::fs::chown(self.dir.path().join("server.log"), Some(65534), Some(65534)).unwrap();
        }
        let child = as_owner(&self.bin, "postgres")
            .arg("-D")
            .arg(self.dir.path().join("data"))
            .args(["-p", &self.port.to_string(), "-k"])
            .arg(self.dir.path())
            .args(["-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "max_connections=200"])
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("postgres starts");
        self.server = Some(child);
        let deadline = Instant::now() + Duration::from_secs(60);
        while !self.ready() {
            assert!(Instant::now() < deadline, "PostgreSQL did not start:\n{}", self.log());
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn ready(&self) -> bool {
        Command::new(self.bin.join("pg_isready"))
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string(), "-q"])
            .status()
            .is_ok_and(|s| s.success())
    }

    /// Stops the server (fast shutdown: the sessions are closed).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.server.take() {
            // SAFETY: signalling our own child.
            unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
            let _ = child.wait();
        }
    }

    /// The postmaster's process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.server.as_ref().map(Child::id)
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("server.log")).unwrap_or_default()
    }

    /// Runs SQL as the superuser (through the Unix socket), in `database`; what psql printed.
    pub fn psql(&self, database: &str, sql: &str) -> String {
        let out = Command::new(self.bin.join("psql"))
            .args(["-h"])
            .arg(self.dir.path())
            .args([
                "-p",
                &self.port.to_string(),
                "-U",
                "postgres",
                "-d",
                database,
                "-tA",
                "-v",
                "ON_ERROR_STOP=1",
                "-c",
                sql,
            ])
            .output()
            .expect("psql runs");
        assert!(out.status.success(), "psql {sql}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// An interactive psql session as the superuser in `database`: SQL written to its standard
    /// input runs as it comes, what it prints comes on its standard output (one value a line).
    pub fn session(&self, database: &str) -> Child {
        Command::new(self.bin.join("psql"))
            .args(["-h"])
            .arg(self.dir.path())
            .args(["-p", &self.port.to_string(), "-U", "postgres", "-d", database, "-tAq", "-v", "ON_ERROR_STOP=1"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("psql runs")
    }

    /// A new empty database; its URL (the user `postgres`, no password in it).
    pub fn database(&self, name: &str) -> String {
        self.psql("postgres", &format!("CREATE DATABASE {name}"));
        self.url(name)
    }

    pub fn url(&self, name: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{name}", self.port)
    }

    /// A `[state]` section for `database`, its password in a file under `dir`.
    pub fn section(&self, dir: &Path, database: &str, extra: &str) -> String {
        let file = dir.join("pg-password");
        std::fs::write(&file, format!("{PASSWORD}\n")).unwrap();
        format!(
            "[state]\nurl = {:?}\npassword_file = {:?}\nsslmode = \"disable\"\n{extra}\n",
            self.url(database),
            super::path(&file)
        )
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        self.stop();
    }
}
