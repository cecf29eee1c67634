//! `dumbmonit-sim`: the simulated API server on its own, for trying DumbMonit, kubectl or a
//! client library against it.
//!
//! dumbmonit-sim [--listen ADDR:PORT] [--scenario trouble|healthy|coverage|envelope:PODS] [--dir DIR]
//!
//! `envelope:150000` is a cluster in the proportions of Kubernetes' scalability envelope (one
//! node per 30 pods, 5 KB per pod, a share of them in trouble), as the benchmark uses.
//!
//! Writes DIR/ca.crt and DIR/token, prints the URL, and serves until killed.

use std::path::PathBuf;

use dumbmonit_sim::{Sim, SimOptions, scenario};

fn usage(message: &str) -> ! {
    eprintln!(
        "{message}\nusage: dumbmonit-sim [--listen ADDR:PORT] [--scenario trouble|healthy|coverage|envelope:PODS] [--dir DIR]"
    );
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
    let envelope = scenario_name
        .strip_prefix("envelope:")
        .map(|n| n.parse::<usize>().unwrap_or_else(|_| usage(&format!("not a number of pods: {n}"))));
    let cluster = match scenario_name.as_str() {
        _ if envelope.is_some() => dumbmonit_sim::Cluster::default(),
        "trouble" => scenario::trouble(now),
        "healthy" => scenario::healthy(now),
        "coverage" => scenario::coverage(now),
        other => usage(&format!("unknown scenario {other}")),
    };
    let sim = Sim::start(options, cluster).await.unwrap_or_else(|e| usage(&format!("cannot start: {e}")));
    if let Some(pods) = envelope {
        scenario::envelope_into(pods, now, &mut |resource, items| sim.extend(resource, items));
    }
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
