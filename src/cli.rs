//! The command line: `check`, `rbac`, `demo`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use crate::collect::CycleOptions;
use crate::collect::reader::{self, Connected, SetUpError};
use crate::error::{ConfigError, FlagError, SizeError};
use crate::health::{self, Health};
use crate::kube::ConnectOptions;
use crate::lang::Lang;
use crate::redact::Redactor;
use crate::report::{self, Output};
use crate::{metrics, rbac};

pub use crate::error::EXIT_UNKNOWN;

#[derive(Parser, Debug)]
#[command(
    name = "dumbmonit",
    version,
    about = "Kubernetes cluster health through the API server alone",
    long_about = "Kubernetes cluster health through the API server alone: nodes, pods, workloads, \
                  claims and warning events, with a read-only token. No metrics-server, kubelet or node access."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Read the cluster once and report. Exit status: 0 healthy, 1 notice, 2 critical, 3 unreadable.
    Check(CheckArgs),
    /// Print the read-only ServiceAccount, ClusterRole, binding and token Secret to apply.
    Rbac(RbacArgs),
    /// The product tour: a simulated cluster running into trouble, watched by the status page.
    Demo(crate::demo::DemoArgs),
    /// Run recorded cycles through the built-in rules; print one JSON line per transition.
    Replay(ReplayArgs),
    /// Print the built-in rules as a Prometheus rule file over the dumbmonit_k8s_ metrics.
    Rules(RulesArgs),
    /// Watch the configured clusters: rules with durations, persisted state, notifications.
    Serve(ServeArgs),
    /// Read the cluster near it, as serve would, and push each cycle to DumbMonit servers over
    /// HTTPS (outbound only); cycles are kept while a server is away and delivered in order.
    Agent(AgentArgs),
    /// Print the objects to run something in a cluster, for `kubectl apply -f -`.
    #[command(subcommand)]
    Manifests(ManifestsCommand),
    /// CPU and memory used, like kubectl top, from the Metrics API; when it is not available,
    /// why, and what the pods request and limit instead (exit status 1).
    Top(TopArgs),
    /// The state of serve: carry a SQLite state directory into PostgreSQL.
    #[command(subcommand)]
    State(StateCommand),
}

#[derive(Subcommand, Debug)]
pub enum StateCommand {
    /// Carry a SQLite state (STATE_DIR) into PostgreSQL, for replicas that share it: clusters
    /// added on the pages, silences, windows, alerts and what the rules remember, history, the
    /// outbox and the audit list. Refused when the database already holds a state, unless --force.
    Migrate(MigrateArgs),
}

#[derive(Args, Debug)]
pub struct MigrateArgs {
    /// The state directory of a `serve` that kept its state in SQLite (stopped first)
    #[arg(long, value_name = "STATE_DIR")]
    pub from: PathBuf,
    /// The PostgreSQL database, as `[state] url`: postgres://USER@HOST:PORT/DATABASE
    #[arg(long, value_name = "URL")]
    pub to: String,
    /// The file holding the user's password
    #[arg(long, value_name = "FILE")]
    pub password_file: Option<PathBuf>,
    /// TLS as libpq spells it: disable, prefer, require, verify-ca, verify-full
    #[arg(long, value_name = "MODE", default_value = "prefer")]
    pub sslmode: String,
    /// The certificate authorities (PEM) the server's certificate is checked against
    #[arg(long, value_name = "FILE")]
    pub ca_file: Option<PathBuf>,
    /// Replace a state the database already holds
    #[arg(long)]
    pub force: bool,
}

#[derive(Args, Debug)]
pub struct ServeArgs {
    /// The configuration file (TOML)
    #[arg(long, value_name = "FILE")]
    pub config: PathBuf,
    /// Watch only this shard of the clusters, INDEX/COUNT (0/3 is the first of three); wins
    /// over `shard` in the file
    #[arg(long, value_name = "INDEX/COUNT")]
    pub shard: Option<crate::config::Shard>,
    /// How the log on standard error is written: text (a sentence a line) or json (an object a
    /// line, with the fields); RUST_LOG filters it (info and up by default)
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = crate::logs::Format::Text)]
    pub log_format: crate::logs::Format,
}

#[derive(Subcommand, Debug)]
pub enum ManifestsCommand {
    /// The relay agent (namespace, read-only RBAC, token Secret, Deployment, NetworkPolicy),
    /// from the same files as the kustomize base deploy/agent
    Agent(ManifestsAgentArgs),
}

#[derive(Args, Debug)]
pub struct ManifestsAgentArgs {
    /// The DumbMonit server the agent reports to
    #[arg(long, value_name = "URL")]
    pub server: String,
    /// The cluster's name on the server (its [[cluster]] name)
    #[arg(long, value_name = "NAME")]
    pub cluster: String,
    /// The cluster's agent token (the server's agent_token_file); without it a new one is made
    /// and written to ./NAME.agent-token (mode 0600)
    #[arg(long, value_name = "FILE")]
    pub agent_token_file: Option<PathBuf>,
    /// The image to run
    #[arg(long, value_name = "IMAGE", default_value = crate::manifests::DEFAULT_IMAGE)]
    pub image: String,
    /// Namespaced access (repeatable): the agent reads only this namespace, granted by a Role
    /// and RoleBinding in each (no ClusterRole, no Namespace object)
    #[arg(long = "namespace", value_name = "NS", conflicts_with = "watch")]
    pub namespaces: Vec<String>,
    /// The namespace to run it in [default: dumbmonit, made by the manifests; with --namespace,
    /// the first one given]
    #[arg(long, value_name = "NS")]
    pub service_account_namespace: Option<String>,
    /// Run the agent with --watch, its role granted the watch verb (never on the Metrics API)
    #[arg(long)]
    pub watch: bool,
}

#[derive(Args, Debug)]
pub struct AgentArgs {
    /// A DumbMonit server to report to (repeatable: each gets every cycle)
    #[arg(long = "server", value_name = "URL", required = true)]
    pub servers: Vec<String>,
    /// The file holding this cluster's agent token (the server's `agent_token_file`)
    #[arg(long, value_name = "FILE")]
    pub agent_token_file: PathBuf,
    /// The CA that signed the servers' certificates, when not among the system's roots
    #[arg(long, value_name = "FILE")]
    pub server_ca_file: Option<PathBuf>,
    /// The cluster's name on the servers (optional: the token names it too)
    #[arg(long, value_name = "NAME")]
    pub cluster: Option<String>,
    #[command(flatten)]
    pub connect: ConnectOptions,
    /// Keep unsent cycles in this directory (default: in memory)
    #[arg(long, value_name = "DIR")]
    pub buffer_dir: Option<PathBuf>,
    /// Drop kept cycles older than this before the newest (24h, 90m, 3600s)
    #[arg(long, value_name = "DURATION", default_value = "24h")]
    pub buffer_max_age: String,
    /// Drop the oldest kept cycles past this size (256MiB, 1GiB, bytes)
    #[arg(long, value_name = "SIZE", default_value = "256MiB")]
    pub buffer_max_size: String,
    /// Serve /healthz and /readyz here (for probes), e.g. 0.0.0.0:8081
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<std::net::SocketAddr>,
    /// Follow the cluster by list-then-watch (needs the watch verb: dumbmonit rbac --watch)
    /// instead of listing it every interval; changes are reported within a second
    #[arg(long)]
    pub watch: bool,
    /// How the log on standard error is written: text (a sentence a line) or json (an object a
    /// line, with the fields); RUST_LOG filters it (info and up by default)
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = crate::logs::Format::Text)]
    pub log_format: crate::logs::Format,
}

/// Bytes from `256MiB`, `1GiB`, `500MB`, `4096`.
fn parse_size(s: &str) -> Result<u64, SizeError> {
    let s = s.trim();
    let split = s.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(s.len());
    let (n, unit) = s.split_at(split);
    let n: f64 = n.trim().parse().map_err(|_| SizeError::NotASize { text: s.to_string() })?;
    let factor: f64 = match unit {
        "" | "B" => 1.0,
        "KB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        _ => return Err(SizeError::UnknownUnit { text: s.to_string() }),
    };
    Ok((n * factor) as u64)
}

impl AgentArgs {
    pub fn options(&self) -> Result<crate::agent::AgentOptions, ConfigError> {
        checked(&self.connect)?;
        let age = crate::config::parse_duration(&self.buffer_max_age)
            .map_err(|source| FlagError::Duration { flag: "--buffer-max-age", source })?;
        let max_bytes = parse_size(&self.buffer_max_size)
            .map_err(|source| FlagError::Size { flag: "--buffer-max-size", source })?;
        Ok(crate::agent::AgentOptions {
            servers: self.servers.clone(),
            token_file: self.agent_token_file.clone(),
            server_ca_file: self.server_ca_file.clone(),
            cluster: self.cluster.clone(),
            connect: self.connect.clone(),
            buffer_dir: self.buffer_dir.clone(),
            max_age: jiff::SignedDuration::from_secs_f64(age),
            max_bytes,
            listen: self.listen,
            watch: self.watch,
        })
    }
}

#[derive(Args, Debug)]
pub struct CheckArgs {
    #[command(flatten)]
    pub connect: ConnectOptions,
    /// What to print
    #[arg(long, value_enum, default_value = "text")]
    pub output: Output,
    /// Also write the cycle as read to FILE (JSON; gzip-compressed when FILE ends in .gz); not
    /// with --namespace (a recording keeps cluster-wide Lists)
    #[arg(long, value_name = "FILE", conflicts_with = "namespaces")]
    pub record: Option<PathBuf>,
    #[command(flatten)]
    pub lang: LangArg,
}

/// `--lang en|fr`: the language of a text output; by default the environment's (`LC_ALL`,
/// `LC_MESSAGES`, `LANG`: `fr_FR.UTF-8` is French, `C` or unset English). JSON and Prometheus
/// outputs are the same in every language.
#[derive(Args, Debug, Clone, Copy)]
pub struct LangArg {
    /// The language of the text: en or fr (default: from LC_ALL, LC_MESSAGES, LANG)
    #[arg(long = "lang", value_name = "LANG", value_parser = parse_lang)]
    lang: Option<Lang>,
}

impl LangArg {
    pub fn get(self) -> Lang {
        self.lang.unwrap_or_else(|| crate::lang::from_environment(|k| std::env::var(k).ok()))
    }
}

fn parse_lang(s: &str) -> Result<Lang, String> {
    match s {
        "en" => Ok(Lang::En),
        "fr" => Ok(Lang::Fr),
        _ => Err(format!("one of {} is expected", crate::lang::CODES)),
    }
}

#[derive(Args, Debug)]
pub struct RulesArgs {
    /// The language of the summaries and descriptions: en or fr (default: en, whatever the
    /// environment, as a rule file is shared)
    #[arg(long = "lang", value_name = "LANG", value_parser = parse_lang, default_value = "en")]
    pub lang: Lang,
    /// serve's configuration file: its [[rule]] entries tune the exported rules
    #[arg(long = "config", value_name = "FILE")]
    pub config: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// A directory of recorded cycles (*.json, *.json.gz)
    pub dir: PathBuf,
    /// Leave this namespace out, as live (repeatable)
    #[arg(long = "ignore-namespace", value_name = "NS")]
    pub ignore_namespace: Vec<String>,
    /// The `cluster` label of the alerts (default: the directory's name)
    #[arg(long, value_name = "NAME")]
    pub cluster: Option<String>,
}

#[derive(Args, Debug)]
pub struct RbacArgs {
    /// Grant only this namespace (repeatable): namespaced access, a Role and RoleBinding in each
    /// and nothing cluster-wide (no node is then visible)
    #[arg(long = "namespace", value_name = "NS", conflicts_with = "watch")]
    pub namespaces: Vec<String>,
    /// Namespace of the ServiceAccount and its token Secret [default: kube-system; with
    /// --namespace, the first one given]
    #[arg(long, value_name = "NS")]
    pub service_account_namespace: Option<String>,
    /// Name of the ServiceAccount (the ClusterRole and binding are NAME-read, the Secret NAME-token)
    #[arg(long, default_value = "dumbmonit")]
    pub name: String,
    /// Also grant the optional reads: APIServices, the Metrics API (nodes and pods), HPAs
    #[arg(long)]
    pub optional: bool,
    /// Also grant watch on the same resources, for watch mode (`watch = true`); never on the
    /// Metrics API, which is read every interval
    #[arg(long)]
    pub watch: bool,
}

#[derive(Args, Debug)]
pub struct TopArgs {
    /// What to show: nodes (the default) or pods. An address given alone here is ADDRESS, as
    /// `check` takes it (`top https://k3s.lan:6443` shows the nodes)
    #[arg(value_name = "WHAT")]
    pub what: Option<String>,
    #[command(flatten)]
    pub connect: ConnectOptions,
    #[command(flatten)]
    pub lang: LangArg,
}

impl TopArgs {
    /// What to show, and the connection: the two positionals as given (WHAT ADDRESS, ADDRESS
    /// alone, or ADDRESS WHAT) read into their checked form.
    pub fn resolve(&self) -> Result<(TopWhat, ConnectOptions), FlagError> {
        let word = |w: &str| match w {
            "nodes" => Some(TopWhat::Nodes),
            "pods" => Some(TopWhat::Pods),
            _ => None,
        };
        let (first, second) = (self.what.as_deref(), self.connect.address.as_deref());
        let mut connect = self.connect.clone();
        let what = match (first, first.and_then(word), second.and_then(word)) {
            (None, ..) => TopWhat::Nodes,
            (Some(_), Some(what), _) => what,
            // An address first: the second positional, if any, says what.
            (Some(address), None, what) if second.is_none() || what.is_some() => {
                connect.address = Some(address.to_string());
                what.unwrap_or(TopWhat::Nodes)
            }
            (Some(other), None, _) => return Err(FlagError::TopWhat { value: other.to_string() }),
        };
        Ok((what, connect))
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TopWhat {
    Nodes,
    Pods,
}

/// `rbac`'s YAML: cluster-wide, or namespaced with `--namespace`.
fn rbac_manifests(args: &RbacArgs) -> Result<String, ConfigError> {
    match (args.namespaces.first(), &args.service_account_namespace) {
        (None, sa) => rbac::manifests(sa.as_deref().unwrap_or("kube-system"), &args.name, args.optional, args.watch),
        (Some(first), sa) => {
            rbac::namespaced(&args.namespaces, sa.as_deref().unwrap_or(first), &args.name, args.optional)
        }
    }
}

/// The connection flags checked, and what a cycle leaves out.
fn checked(connect: &ConnectOptions) -> Result<CycleOptions, ConfigError> {
    let timeout = connect.timeout.0;
    if !(timeout.is_finite() && timeout > 0.0 && timeout <= 3600.0) {
        return Err(FlagError::Timeout { seconds: timeout }.into());
    }
    for ns in &connect.namespaces {
        crate::kube::check_name("--namespace", ns)?;
    }
    Ok(CycleOptions::of(connect))
}

/// What a check prints and how it ends.
pub struct CheckOutcome {
    pub stdout: String,
    pub stderr: String,
    pub exit: u8,
}

/// An outcome that is only an error line, the token taken out.
fn unreadable(message: &str, redactor: &Redactor) -> CheckOutcome {
    CheckOutcome { stdout: String::new(), stderr: format!("{}\n", redactor.clean(message)), exit: EXIT_UNKNOWN }
}

/// The cluster set up to be read, or the outcome that says why it cannot be.
async fn connected(connect: &ConnectOptions) -> Result<Connected, CheckOutcome> {
    reader::connect(connect).await.map_err(|e| match e {
        SetUpError::Settings(e) => {
            let mut r = Redactor::default();
            if let Some(t) = &connect.token {
                r.add(t);
            }
            unreadable(&e.to_string(), &r)
        }
        SetUpError::Client { connection, error } => unreadable(&error.to_string(), &connection.redactor),
    })
}

/// One cycle against the cluster, rendered as asked, and written to `record` when given.
pub async fn check(
    connect: &ConnectOptions,
    cycle_options: &CycleOptions,
    output: Output,
    record: Option<&Path>,
    lang: Lang,
) -> CheckOutcome {
    let cluster = match connected(connect).await {
        Ok(c) => c,
        Err(outcome) => return outcome,
    };
    let conn = &cluster.connection;
    let options = CycleOptions { record: record.is_some(), ..cycle_options.clone() };
    let mut cycle = cluster.read(&options, jiff::Timestamp::now()).await;
    let health: Option<Health> = cycle.result.as_mut().ok().map(|s| health::assess(std::mem::take(s)));
    let message = cycle.result.as_ref().err().map(|e| conn.redactor.clean(&e.to_string()));
    let mut warning = String::new();
    if let Some(path) = record {
        let outcome = match (&cycle.recording, &message) {
            (Some(rec), _) => Ok(rec),
            (None, Some(m)) => Err(m.as_str()),
            (None, None) => unreachable!("a successful recorded cycle has its recording"),
        };
        if let Err(e) = crate::record::write(path, &conn.redactor.clean(&crate::record::render(cycle.time, outcome))) {
            warning = format!("The cycle could not be recorded to {}: {e}\n", path.display());
        }
    }
    let stdout = match output {
        Output::Text => health.as_ref().map(|h| report::text::render(&conn.address, h, lang)).unwrap_or_default(),
        Output::Json => report::json::render(&conn.address, &cycle, health.as_ref(), message.as_deref()),
        Output::Prometheus => metrics::render(&cycle, health.as_ref()),
    };
    let (stderr, exit) = match (&health, message) {
        (Some(h), _) => (warning, h.severity() as u8),
        (None, Some(m)) => (format!("{m}\n{warning}"), EXIT_UNKNOWN),
        (None, None) => unreachable!("a cycle either succeeds or carries its error"),
    };
    CheckOutcome { stdout: conn.redactor.clean_owned(stdout), stderr, exit }
}

/// `dumbmonit top`: one cycle, then usage from the Metrics API, or why it is not available and
/// the requests and limits per node instead.
pub async fn top(connect: &ConnectOptions, cycle_options: &CycleOptions, what: TopWhat, lang: Lang) -> CheckOutcome {
    let cluster = match connected(connect).await {
        Ok(c) => c,
        Err(outcome) => return outcome,
    };
    let conn = &cluster.connection;
    let mut cycle = cluster.read(cycle_options, jiff::Timestamp::now()).await;
    let h = match cycle.result.as_mut() {
        Ok(s) => health::assess(std::mem::take(s)),
        Err(e) => return unreadable(&e.to_string(), &conn.redactor),
    };
    let (stdout, exit) = crate::report::top::render(&h, what == TopWhat::Pods, lang);
    CheckOutcome { stdout: conn.redactor.clean_owned(stdout), stderr: String::new(), exit }
}

fn replay(args: &ReplayArgs) -> ExitCode {
    let cycles = match crate::replay::read_dir(&args.dir) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(EXIT_UNKNOWN);
        }
    };
    let cluster = args.cluster.clone().unwrap_or_else(|| {
        let dir = args.dir.canonicalize().unwrap_or_else(|_| args.dir.clone());
        dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "replay".into())
    });
    let options = CycleOptions { ignored_namespaces: args.ignore_namespace.clone(), ..CycleOptions::default() };
    let mut out = std::io::stdout().lock();
    for t in crate::replay::replay(cycles, &cluster, &options) {
        let _ = writeln!(out, "{}", crate::replay::line(&t));
    }
    ExitCode::SUCCESS
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("the async runtime starts")
}

fn emit(outcome: CheckOutcome) -> ExitCode {
    let _ = std::io::stdout().write_all(outcome.stdout.as_bytes());
    let _ = std::io::stderr().write_all(outcome.stderr.as_bytes());
    ExitCode::from(outcome.exit)
}

/// The entry point of the binary.
/// `dumbmonit state migrate`.
fn migrate(args: &MigrateArgs) -> ExitCode {
    let settings = format!(
        "url = {:?}\nsslmode = {:?}\n{}{}",
        args.to,
        args.sslmode,
        args.password_file
            .as_ref()
            .map(|p| format!("password_file = {:?}\n", p.display().to_string()))
            .unwrap_or_default(),
        args.ca_file.as_ref().map(|p| format!("ca_file = {:?}\n", p.display().to_string())).unwrap_or_default(),
    );
    let config: crate::config::StateConfig = match toml::from_str(&settings) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("state migrate: {}", e.message());
            return ExitCode::from(EXIT_UNKNOWN);
        }
    };
    if let Err(e) = config.checked() {
        eprintln!("state migrate: --to: {e}");
        return ExitCode::from(EXIT_UNKNOWN);
    }
    if !args.from.join(crate::state::FILE).is_file() {
        eprintln!("state migrate: --from {}: no {} in it", args.from.display(), crate::state::FILE);
        return ExitCode::from(EXIT_UNKNOWN);
    }
    let outcome = crate::state::Store::open(&args.from).map_err(crate::state::migrate::MigrateError::from).and_then(
        |mut from| {
            let shared = crate::state::postgres::connect(&config).map_err(|e| {
                crate::state::migrate::MigrateError::State(crate::state::StateError::Start(e.to_string()))
            })?;
            let mut to = shared.store()?;
            crate::state::migrate::carry(&mut from, &mut to, args.force)
        },
    );
    match outcome {
        Ok(carried) => {
            let rows: Vec<String> = carried.iter().map(|(t, n)| format!("{t} {n}")).collect();
            println!("Carried {} into {}: {}.", args.from.display(), args.to, rows.join(", "));
            let pages = carried.iter().find(|(t, _)| *t == "page_clusters").map(|(_, n)| *n).unwrap_or(0);
            if pages > 0 {
                println!(
                    "The tokens of the {pages} cluster(s) added on the pages are sealed with the secret key of the old serve \
                     (secret_key_file, {} by default): give every replica that file as secret_key_file.",
                    args.from.join("secret.key").display()
                );
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("state migrate: {e}");
            ExitCode::from(EXIT_UNKNOWN)
        }
    }
}

pub fn main() -> ExitCode {
    crate::allocator::configure();
    // Exactly one crypto provider is compiled in; installing it makes that explicit.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { EXIT_UNKNOWN } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    match cli.command {
        Command::Check(args) => {
            let cycle = match checked(&args.connect) {
                Ok(o) => o,
                Err(e) => {
                    eprintln!("{e}");
                    return ExitCode::from(EXIT_UNKNOWN);
                }
            };
            emit(runtime().block_on(check(&args.connect, &cycle, args.output, args.record.as_deref(), args.lang.get())))
        }
        Command::Rbac(args) => match rbac_manifests(&args) {
            Ok(yaml) => {
                print!("{yaml}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("{e}");
                ExitCode::from(EXIT_UNKNOWN)
            }
        },
        Command::Demo(args) => crate::demo::main(&args),
        Command::Replay(args) => replay(&args),
        Command::Serve(args) => {
            crate::logs::init(args.log_format);
            crate::serve::main(&args.config, args.shard, crate::web::start)
        }
        Command::Manifests(ManifestsCommand::Agent(a)) => {
            let m = crate::manifests::AgentManifest {
                server: a.server,
                cluster: a.cluster,
                token_file: a.agent_token_file,
                image: a.image,
                namespace: a
                    .service_account_namespace
                    .or_else(|| a.namespaces.first().cloned())
                    .unwrap_or_else(|| crate::manifests::BASE_NAMESPACE.to_string()),
                watch: a.watch,
                namespaces: a.namespaces,
            };
            match crate::manifests::agent(&m) {
                Ok((yaml, written)) => {
                    print!("{yaml}");
                    if let Some(f) = written {
                        eprintln!(
                            "A new agent token is in {}: put it in the server's agent_token_file for [[cluster]] name = {:?}.",
                            f.display(),
                            m.cluster
                        );
                    }
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("{e}");
                    ExitCode::from(EXIT_UNKNOWN)
                }
            }
        }
        Command::Agent(args) => match args.options() {
            Ok(o) => {
                crate::logs::init(args.log_format);
                crate::agent::main(o)
            }
            Err(e) => {
                eprintln!("{e}");
                ExitCode::from(EXIT_UNKNOWN)
            }
        },
        Command::State(StateCommand::Migrate(args)) => migrate(&args),
        Command::Rules(args) => {
            // With the file: its tuning, and its runbooks (`runbook_base_url`, else the pages').
            let tuning = match &args.config {
                None => Ok((crate::rules::tune::Tuning::default(), None)),
                Some(path) => crate::config::Config::load(path).and_then(|c| {
                    let runbooks = crate::config::runbooks_at(c.runbook_base_url.as_deref(), &c.pages_url(), args.lang);
                    Ok((crate::rules::tune::Tuning::check(&c.rules, Some(path))?, Some(runbooks)))
                }),
            };
            match tuning {
                Ok((tuning, runbooks)) => {
                    let file = crate::rules::prometheus::rule_file_tuned(args.lang, &tuning, runbooks.as_deref());
                    print!("{file}");
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("{e}");
                    ExitCode::from(EXIT_UNKNOWN)
                }
            }
        }
        Command::Top(args) => {
            let (what, connect) = match args.resolve() {
                Ok(resolved) => resolved,
                Err(e) => {
                    eprintln!("{e}");
                    return ExitCode::from(EXIT_UNKNOWN);
                }
            };
            let cycle = match checked(&connect) {
                Ok(o) => o,
                Err(e) => {
                    eprintln!("{e}");
                    return ExitCode::from(EXIT_UNKNOWN);
                }
            };
            emit(runtime().block_on(top(&connect, &cycle, what, args.lang.get())))
        }
    }
}
