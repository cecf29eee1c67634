//! What the relay agent costs: `cargo bench --bench agent` (sizes with `BENCH_SIZES=1000`).
//! Prints a table; a figure it cannot measure (a push never seen, an agent or `serve` that ended)
//! stops it with an error naming it (exit status 1).
//!
//! For each size, the simulated API server serves a cluster in the envelope's proportions; a
//! real `serve` (TLS) takes the cluster from a real `dumbmonit agent`. Measured: the gzip bytes
//! of the first push (the whole snapshot) and of the following ones (only what changed; the
//! fixture does not change, so they show the floor), from the agent's /healthz; the agent's
//! resident memory at its peak and between cycles, and serve's, from /proc.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{Killed, Measured, above_zero, memory_mb};
use dumbmonit_sim::{Sim, SimOptions, scenario};

/// Waits until `f` gives a value, while both processes run.
fn wait_for<T>(
    what: &str,
    limit: Duration,
    running: &mut [(&mut Killed, &str)],
    mut f: impl FnMut() -> Option<T>,
) -> Measured<T> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(v) = f() {
            return Ok(v);
        }
        for (child, name) in running.iter_mut() {
            common::alive(&mut child.0, name, None)?;
        }
        if Instant::now() > deadline {
            return Err(format!("waited {} s in vain for {what}", limit.as_secs()));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

struct Row {
    pods: usize,
    whole: usize,
    steady: usize,
    agent_peak: f64,
    agent_idle: f64,
    serve_peak: f64,
}

fn measure(size: usize, dir: &Path) -> Measured<Row> {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let now = jiff::Timestamp::now();
    let sim = rt.block_on(Sim::start(SimOptions::default(), dumbmonit_sim::Cluster::default())).unwrap();
    scenario::envelope_into(size, now, &mut |resource, items| sim.extend(resource, items));
    let _ = sim.pages();
    let pki = dumbmonit_sim::tls::Pki::generate(&["localhost".into()], None).unwrap();
    let p = |name: &str| dir.join(name).to_str().unwrap().to_string();
    std::fs::write(dir.join("tls.crt"), &pki.server_cert_pem).unwrap();
    std::fs::write(dir.join("tls.key"), &pki.server_key_pem).unwrap();
    std::fs::write(dir.join("server-ca.crt"), &pki.ca_pem).unwrap();
    std::fs::write(dir.join("agent.token"), "bench-agent-token-0123456789").unwrap();
    std::fs::write(dir.join("token"), sim.token()).unwrap();
    std::fs::write(dir.join("ca.crt"), sim.ca_pem()).unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let interval = if size > 20_000 { "20s" } else { "2s" };
    std::fs::write(
        dir.join("dumbmonit.toml"),
        format!(
            "listen = \"127.0.0.1:{port}\"\nstate_dir = {:?}\n[tls]\ncert_file = {:?}\nkey_file = {:?}\n\
             [[cluster]]\nname = \"edge\"\nagent_token_file = {:?}\ninterval = \"{interval}\"\ntimeout = \"60s\"\n",
            p("state"),
            p("tls.crt"),
            p("tls.key"),
            p("agent.token")
        ),
    )
    .unwrap();
    let bin = env!("CARGO_BIN_EXE_dumbmonit");
    let quiet = || Stdio::null();
    let mut serve =
        Killed(Command::new(bin).args(["serve", "--config", &p("dumbmonit.toml")]).stderr(quiet()).spawn().unwrap());
    let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let mut agent = Killed(
        Command::new(bin)
            .args(["agent", "--server", &format!("https://localhost:{port}"), "--agent-token-file", &p("agent.token")])
            .args(["--server-ca-file", &p("server-ca.crt"), &sim.url(), "--token-file", &p("token")])
            .args(["--ca-file", &p("ca.crt"), "--listen", &probe.to_string()])
            .stderr(quiet())
            .spawn()
            .unwrap(),
    );
    let pushes = |kind: &str| -> Option<usize> {
        let (answer, _) = common::get(&probe.to_string(), "/healthz", false).ok()?;
        let text = String::from_utf8(answer.body().ok()?).ok()?;
        let rest = text.split("last push ").nth(1)?;
        rest.contains(kind).then(|| rest.split(' ').next().and_then(|n| n.parse().ok())).flatten()
    };
    let limit = Duration::from_secs(600);
    let mut running = [(&mut agent, "the agent"), (&mut serve, "serve")];
    let whole = wait_for("the first push", limit, &mut running, || pushes("(a whole snapshot)"))?;
    let steady =
        wait_for("a push of the difference", limit, &mut running, || pushes("(the difference from the last)"))?;
    // Between cycles: the interval's middle, after the last push.
    let mut idle = f64::MAX;
    for _ in 0..3 {
        std::thread::sleep(Duration::from_secs_f64(if size > 20_000 { 10.0 } else { 1.0 }));
        idle = idle.min(memory_mb(agent.0.id())?.1);
    }
    let row = Row {
        pods: size,
        whole: above_zero("the first push's size", whole as f64)? as usize,
        steady: above_zero("the next pushes' size", steady as f64)? as usize,
        agent_peak: above_zero("the agent's RSS peak", memory_mb(agent.0.id())?.0)?,
        agent_idle: above_zero("the agent's RSS between cycles", idle)?,
        serve_peak: above_zero("serve's RSS peak", memory_mb(serve.0.id())?.0)?,
    };
    drop(agent);
    drop(serve);
    drop(sim);
    Ok(row)
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    common::run("agent", || {
        let sizes = std::env::var("BENCH_SIZES")
            .unwrap_or_else(|_| "1000,150000".into())
            .split(',')
            .map(|s| s.trim().parse().map_err(|_| format!("BENCH_SIZES: {s:?} is not a number of pods")))
            .collect::<Measured<Vec<usize>>>()?;
        println!(
            "| pods | first push (whole snapshot, gzip) | next pushes (unchanged cluster, gzip) | agent RSS peak | agent RSS between cycles | serve RSS peak |"
        );
        println!("|---:|---:|---:|---:|---:|---:|");
        for size in sizes {
            let dir = tempfile::tempdir().unwrap();
            let r = measure(size, dir.path())?;
            println!(
                "| {} | {:.1} KB | {} B | {:.0} MB | {:.0} MB | {:.0} MB |",
                r.pods,
                r.whole as f64 / 1000.0,
                r.steady,
                r.agent_peak,
                r.agent_idle,
                r.serve_peak
            );
        }
        Ok(())
    });
}
