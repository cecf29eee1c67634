//! `dumbmonit demo`: the product tour. A simulated cluster whose trouble unfolds on a timeline
//! (a rolling update, a crash loop, a node lost, a stuck claim, an image that cannot be pulled),
//! watched by `serve` on 127.0.0.1, over HTTPS with a token and CA like a real cluster. Every page
//! says that the cluster is simulated.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use dumbmonit_sim::{Sim, SimOptions, scenario};

use crate::config::{AuthConfig, ClusterConfig, Config, Seconds};
use crate::kube::ConnectOptions;
use crate::serve::{ServeOptions, run};

/// The steps of the tour (0 is healthy; the last one holds every problem).
const STEPS: u32 = 8;

/// The banner on every page of the demo: a message of the pages (`demo-banner`), said in the
/// reader's language.
pub const BANNER: &str = "demo-banner";

#[derive(clap::Args, Debug)]
pub struct DemoArgs {
    /// Where to serve the pages (another free port is taken when 8080 is busy)
    #[arg(long, value_name = "ADDR:PORT")]
    pub listen: Option<SocketAddr>,
    /// Seconds between two steps of the story
    #[arg(long, value_name = "SECONDS", default_value_t = 10.0)]
    pub pace: f64,
    /// Seconds between two cycles
    #[arg(long, value_name = "SECONDS", default_value_t = 5.0)]
    pub interval: f64,
}

fn listen_address(args: &DemoArgs) -> SocketAddr {
    args.listen.unwrap_or_else(|| {
        let preferred = SocketAddr::from(([127, 0, 0, 1], 8080));
        match std::net::TcpListener::bind(preferred) {
            Ok(_) => preferred,
            Err(_) => SocketAddr::from(([127, 0, 0, 1], 0)),
        }
    })
}

pub fn main(args: &DemoArgs) -> ExitCode {
    if !(args.pace > 0.0 && args.interval > 0.0 && args.pace.is_finite() && args.interval.is_finite()) {
        eprintln!("--pace and --interval take seconds above 0");
        return ExitCode::from(crate::error::EXIT_UNKNOWN);
    }
    crate::logs::init(crate::logs::Format::Text);
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("the async runtime starts");
    match runtime.block_on(tour(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(crate::error::EXIT_UNKNOWN)
        }
    }
}

/// Why the demo stopped.
#[derive(Debug, thiserror::Error)]
enum DemoError {
    #[error("{}: {source}", .dir.display())]
    Dir { dir: PathBuf, source: std::io::Error },
    #[error("The simulated cluster could not start: {0}")]
    Sim(std::io::Error),
    /// The simulated cluster's token or CA could not be written.
    #[error("{0}")]
    Write(std::io::Error),
    /// `serve` stopped, with its message.
    #[error("{0}")]
    Serve(crate::serve::ServeError),
}

async fn tour(args: &DemoArgs) -> Result<(), DemoError> {
    let dir = std::env::temp_dir().join(format!("dumbmonit-demo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|source| DemoError::Dir { dir: dir.clone(), source })?;
    let result = tour_in(args, dir.clone()).await;
    let _ = std::fs::remove_dir_all(&dir);
    result
}

async fn tour_in(args: &DemoArgs, dir: PathBuf) -> Result<(), DemoError> {
    let sim =
        Sim::start(SimOptions::default(), scenario::tour(0, jiff::Timestamp::now())).await.map_err(DemoError::Sim)?;
    let (token_file, ca_file) = (dir.join("token"), dir.join("ca.crt"));
    std::fs::write(&token_file, sim.token()).map_err(DemoError::Write)?;
    std::fs::write(&ca_file, sim.ca_pem()).map_err(DemoError::Write)?;

    // The story: one step every `pace` seconds; the objects are rebuilt often so that their
    // events stay recent.
    let pace = Duration::from_secs_f64(args.pace);
    let refresh = pace.min(Duration::from_secs(5));
    let started = Instant::now();
    let story = {
        let sim = std::sync::Arc::new(sim);
        let handle = sim.clone();
        let task = tokio::spawn(async move {
            loop {
                let step = ((started.elapsed().as_secs_f64() / pace.as_secs_f64()) as u32).min(STEPS - 1);
                handle.set_cluster(scenario::tour(step, jiff::Timestamp::now()));
                tokio::time::sleep(refresh).await;
            }
        });
        (sim, task)
    };
    let url = story.0.url();

    let cluster = ClusterConfig {
        name: "demo".into(),
        agent_token_file: None,
        from_pages: false,
        agent_token_value: None,
        connect: ConnectOptions {
            address: Some(url.clone()),
            token_file: Some(token_file.clone()),
            ca_file: Some(ca_file.clone()),
            ..ConnectOptions::default()
        },
        interval: Seconds(args.interval),
        record_dir: None,
        record_retention: Seconds(86400.0),
        watch: false,
        namespace_labels: Vec::new(),
    };
    let config = Config {
        listen: listen_address(args),
        state_dir: dir.join("state"),
        state: None,
        auth: AuthConfig::default(),
        allowed_hosts: Vec::new(),
        clusters: vec![cluster],
        notifier_sections: Vec::new(),
        notifiers: Vec::new(),
        silences: Vec::new(),
        maintenance: Vec::new(),
        rules: Vec::new(),
        tls: None,
        shard: None,
        secret_key_file: None,
        language: Default::default(),
        external_url: None,
        runbook_base_url: None,
    };
    let pace_s = args.pace;
    let check = format!("dumbmonit check {url} --token-file {} --ca-file {}", token_file.display(), ca_file.display());
    let options = ServeOptions {
        banner: Some(BANNER.into()),
        config_path: None,
        shard: None,
        pages: Some(crate::web::start),
        on_listening: Some(Box::new(move |addr| {
            println!("DumbMonit demo: a SIMULATED cluster (no real cluster is contacted).");
            println!();
            println!("  Open http://{addr}/");
            println!();
            println!("A simulated API server at {url} serves a cluster that is healthy at first;");
            println!("then, one step every {pace_s} s: a rolling update, a crash-looping pod, a node lost,");
            println!("a claim that never binds, an image that cannot be pulled. DumbMonit reads it over HTTPS");
            println!("with a read-only token and its CA, as it reads a real cluster. Alerts fire after their");
            println!("durations (5 to 15 minutes), as in production. The same cluster from the command line:");
            println!();
            println!("  {check}");
            println!();
            println!("Ctrl-C stops the demo.");
        })),
    };
    let result = run(config, options).await;
    story.1.abort();
    result.map_err(DemoError::Serve)
}
