//! `dumbmonit demo`: a simulated cluster in trouble, checked over HTTPS like a real one.

use std::time::Duration;

use dumbmonit_sim::{Sim, SimOptions, scenario};

use crate::cli::{CheckOutcome, EXIT_UNKNOWN, check};
use crate::collect::CycleOptions;
use crate::kube::ConnectOptions;
use crate::report::Output;

pub async fn run() -> CheckOutcome {
    let now = jiff::Timestamp::now();
    let sim = match Sim::start(SimOptions::default(), scenario::trouble(now)).await {
        Ok(s) => s,
        Err(e) => {
            return CheckOutcome {
                stdout: String::new(),
                stderr: format!("The simulated cluster could not start: {e}\n"),
                exit: EXIT_UNKNOWN,
            };
        }
    };
    let connect = ConnectOptions {
        address: Some(sim.url()),
        port: 6443,
        token: Some(sim.token().to_string()),
        ca: Some(sim.ca_pem().to_string()),
        timeout: Duration::from_secs(10),
        ..Default::default()
    };
    let outcome = check(&connect, &CycleOptions::default(), Output::Text, None).await;
    let banner = format!(
        "DumbMonit demo: this is a SIMULATED cluster (no real cluster is contacted).\n\
         A simulated API server at {} serves a cluster in trouble; DumbMonit reads it over HTTPS\n\
         with a read-only token and its CA, exactly as it reads a real one:\n\n  \
         dumbmonit check {} --token-file TOKEN --ca-file CA\n\n",
        sim.url(),
        sim.url()
    );
    let footer = format!(
        "\n(Simulated cluster. On a real one, `dumbmonit rbac` prints the read-only role to apply; \
         the check would have exited with status {}.)\n",
        outcome.exit
    );
    CheckOutcome { stdout: format!("{banner}{}{footer}", outcome.stdout), stderr: outcome.stderr, exit: 0 }
}
