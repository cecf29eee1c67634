//! `dumbmonit-sim`: the simulated API server on its own, for trying DumbMonit, kubectl or a
//! client library against it.
//!
//! dumbmonit-sim [--listen ADDR:PORT] [--scenario trouble|healthy] [--dir DIR]
//!
//! Writes DIR/ca.crt and DIR/token, prints the URL, and serves until killed.

use std::path::PathBuf;

use dumbmonit_sim::{Sim, SimOptions, scenario};

fn usage(message: &str) -> ! {
    eprintln!("{message}\nusage: dumbmonit-sim [--listen ADDR:PORT] [--scenario trouble|healthy] [--dir DIR]");
    std::process::exit(2)
}

#[tokio::main]
async fn main() {
    let mut options = SimOptions::default();
    let mut scenario_name = "trouble".to_string();
    let mut dir = PathBuf::from(".");
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().unwrap_or_else(|| usage(&format!("{flag} needs a value")));
        match flag.as_str() {
            "--listen" => options.bind = value.parse().unwrap_or_else(|_| usage(&format!("not an address: {value}"))),
            "--scenario" => scenario_name = value,
            "--dir" => dir = PathBuf::from(value),
            _ => usage(&format!("unknown flag {flag}")),
        }
    }
    let now = jiff::Timestamp::now();
    let cluster = match scenario_name.as_str() {
        "trouble" => scenario::trouble(now),
        "healthy" => scenario::healthy(now),
        other => usage(&format!("unknown scenario {other}")),
    };
    let sim = Sim::start(options, cluster).await.unwrap_or_else(|e| usage(&format!("cannot start: {e}")));
    let (ca, token) = (dir.join("ca.crt"), dir.join("token"));
    if let Err(e) = std::fs::write(&ca, sim.ca_pem()).and_then(|_| std::fs::write(&token, sim.token())) {
        usage(&format!("cannot write into {}: {e}", dir.display()));
    }
    println!(
        "{} (simulated, scenario {scenario_name}); CA in {}, token in {}",
        sim.url(),
        ca.display(),
        token.display()
    );
    std::future::pending::<()>().await;
}
