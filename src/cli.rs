//! Command-line interface: parsing (clap derive) and the thin glue from arguments to
//! the library. All decisions live in the engine; this only loads, runs and prints.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::engine::SchedulerConfig;
use crate::engine::cycle::{CycleOptions, Phase, PhaseClock};
use crate::explain::explain;
use crate::model::Cluster;
use crate::render::escape::terminal_safe;
use crate::render::{json, table};
use crate::report::TraceView;
use crate::report::needs::PodNeeds;
use crate::source::live::{self, LiveOptions};
use crate::source::{SchedulerWord, SchedulingEvents, Snapshot, load_snapshot, redact, save};
use std::sync::Arc;
use std::sync::atomic::{AtomicI32, Ordering as AtomicOrdering};
use std::time::Duration;

#[derive(Debug, Parser)]
#[command(
    name = "schedscope",
    version,
    about = "Shows exactly why the Kubernetes scheduler (v1.35) does, or will not, place a pod",
    long_about = "schedscope replays kube-scheduler v1.35's scheduling framework for a pending pod \
                  over a cluster snapshot: per-node filter verdicts, per-plugin scores, the \
                  FitError message and preemption victims.\n\nWith no subcommand it opens the \
                  terminal inspector."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// The inspector's flags, which source flags given before a subcommand share.
    #[command(flatten)]
    pub top: TuiCommand,
}

/// `schedscope tui`: the inspector's options, also accepted before the subcommand.
#[derive(Debug, Args, Clone, Default)]
pub struct TuiCommand {
    #[command(flatten)]
    pub source: SourceArgs,
    /// Colour theme for the inspector: a shipped name (dark, light, mono, colorblind) or a
    /// path to a theme YAML file.
    #[arg(long, value_name = "NAME|PATH")]
    pub theme: Option<String>,
    #[command(flatten)]
    pub tui: TuiArgs,
}

/// What the inspector runs with, from the top-level flags and `tui`'s own.
#[derive(Debug, Clone, Default)]
pub struct Inspector {
    pub source: SourceArgs,
    pub theme: Option<String>,
    pub tui: TuiArgs,
}

impl Cli {
    /// The inspector's options: `tui`'s own flags, else those given before it.
    pub fn inspector(&self) -> Result<Inspector> {
        let (source, theme, tui) = match &self.command {
            Some(Command::Tui(t)) => (
                t.source.clone().or(&self.top.source),
                t.theme.clone().or_else(|| self.top.theme.clone()),
                TuiArgs {
                    simulate: t.tui.simulate || self.top.tui.simulate,
                    act: t.tui.act || self.top.tui.act,
                    headless: t.tui.headless || self.top.tui.headless,
                    ..t.tui.clone()
                },
            ),
            _ => (
                self.top.source.clone(),
                self.top.theme.clone(),
                self.top.tui.clone(),
            ),
        };
        source.check()?;
        if tui.act && source.snapshot.is_some() {
            anyhow::bail!(
                "--act schedules on a live cluster (it writes bindings through the API); \
                 drop --snapshot"
            );
        }
        Ok(Inspector { source, theme, tui })
    }

    /// Where `snapshot save` lists from: its own flags, else those before it. A
    /// `--snapshot` there is a mistake (`--from FILE` rewrites a file).
    pub fn save_source(&self, args: &SaveArgs) -> Result<LiveArgs> {
        if self.top.source.snapshot.is_some() {
            anyhow::bail!(
                "snapshot save reads a live cluster, or a file given with --from FILE; \
                 drop --snapshot"
            );
        }
        let own = SourceArgs {
            live: args.live.clone(),
            ..SourceArgs::default()
        };
        Ok(own.or(&self.top.source).live)
    }

    /// The cluster source of a subcommand: its own flags, else those given before it
    /// (`schedscope -s demo.yaml explain web` works as `explain -s demo.yaml web`).
    pub fn source_for(&self, own: &SourceArgs) -> Result<SourceArgs> {
        let s = own.clone().or(&self.top.source);
        s.check()?;
        Ok(s)
    }
}

#[derive(Debug, Args, Clone, Default)]
pub struct TuiArgs {
    /// Step through the scheduler loop in the inspector: play/pause (space), one cycle
    /// (n), waiting pods with live countdowns, Allow/Reject, each pod's attempts.
    #[arg(long)]
    pub simulate: bool,
    /// Act as a scheduler on the live cluster: schedule the pods whose
    /// spec.schedulerName is --scheduler-name, binding them through the API and
    /// recording failures (PodScheduled=False, FailedScheduling events) and
    /// preempting as kube-scheduler does. Pods held at Permit appear in the Waiting
    /// tab with live countdowns: `a` allows, `r` rejects. Needs the rights of
    /// deploy/rbac/act-role.yaml.
    #[arg(long, conflicts_with = "snapshot")]
    pub act: bool,
    /// With --act: no inspector; log each write to stderr until Ctrl-C (the Lease is
    /// released on the way out).
    #[arg(long, requires = "act")]
    pub headless: bool,
    /// With --act: the schedulerName to serve (a profile of the configuration must
    /// have it) and the name of the leader-election Lease.
    #[arg(long, value_name = "NAME", default_value = crate::act::DEFAULT_SCHEDULER_NAME, requires = "act")]
    pub scheduler_name: String,
    /// With --act: the Lease's namespace.
    #[arg(long, value_name = "NAMESPACE", default_value = crate::act::DEFAULT_LEASE_NAMESPACE, requires = "act")]
    pub lease_namespace: String,
}

#[derive(Debug, Args, Clone, Default)]
pub struct SourceArgs {
    /// Snapshot file or directory (`kubectl get ... -o yaml|json`, multi-document or
    /// List; a directory is read with its sub-directories, as a must-gather).
    #[arg(long, short = 's', value_name = "PATH")]
    pub snapshot: Option<PathBuf>,
    /// KubeSchedulerConfiguration file (kubescheduler.config.k8s.io/v1); default: the
    /// v1.35 default profile.
    #[arg(
        long,
        short = 'c',
        visible_alias = "scheduler-config",
        value_name = "FILE"
    )]
    pub config: Option<PathBuf>,
    #[command(flatten)]
    pub live: LiveArgs,
}

/// Where a live cluster is, and which namespace is meant.
#[derive(Debug, Args, Clone, Default)]
pub struct LiveArgs {
    /// Live cluster: kubeconfig file (default: KUBECONFIG, ~/.kube/config, then the
    /// in-cluster service account).
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// Live cluster: kubeconfig context (default: the current context).
    #[arg(long, value_name = "NAME")]
    pub context: Option<String>,
    /// The namespace meant: where a bare pod name is looked up and whose pods are
    /// listed. Live, only its pods are read (nodes and cluster-wide objects always
    /// whole); a snapshot is read whole.
    #[arg(long, short = 'n', value_name = "NAMESPACE")]
    pub namespace: Option<String>,
}

impl LiveArgs {
    pub fn live_options(&self) -> LiveOptions {
        LiveOptions {
            kubeconfig: self.kubeconfig.clone(),
            context: self.context.clone(),
            namespace: self.namespace.clone(),
            first_answer: None,
        }
    }
}

impl SourceArgs {
    /// Each flag from `self`, else from `outer` (the flags before the subcommand).
    pub fn or(self, outer: &SourceArgs) -> SourceArgs {
        SourceArgs {
            snapshot: self.snapshot.or_else(|| outer.snapshot.clone()),
            config: self.config.or_else(|| outer.config.clone()),
            live: LiveArgs {
                kubeconfig: self
                    .live
                    .kubeconfig
                    .or_else(|| outer.live.kubeconfig.clone()),
                context: self.live.context.or_else(|| outer.live.context.clone()),
                namespace: self.live.namespace.or_else(|| outer.live.namespace.clone()),
            },
        }
    }

    /// `schedscope SUBCOMMAND` with these source flags, for hints that must work as
    /// printed.
    pub fn command_line(&self, subcommand: &str) -> String {
        let mut words = vec!["schedscope".to_string(), subcommand.to_string()];
        let quote = |s: &str| {
            if s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_./:=@".contains(c))
            {
                s.to_string()
            } else {
                format!("'{}'", s.replace('\'', r"'\''"))
            }
        };
        let mut flag = |name: &str, v: Option<String>| {
            if let Some(v) = v {
                words.push(format!("{name} {}", quote(&v)));
            }
        };
        let path = |p: &Option<PathBuf>| p.as_ref().map(|p| p.display().to_string());
        flag("--snapshot", path(&self.snapshot));
        flag("--kubeconfig", path(&self.live.kubeconfig));
        flag("--context", self.live.context.clone());
        flag("-n", self.live.namespace.clone());
        words.join(" ")
    }

    /// A snapshot and a live cluster's address together are a contradiction.
    pub fn check(&self) -> Result<()> {
        if self.snapshot.is_some() {
            if self.live.kubeconfig.is_some() {
                anyhow::bail!(
                    "--kubeconfig is for a live cluster; give it or --snapshot, not both"
                );
            }
            if self.live.context.is_some() {
                anyhow::bail!("--context is for a live cluster; give it or --snapshot, not both");
            }
        }
        Ok(())
    }

    /// `pod` as `namespace/name`: a bare name is in `--namespace`, else `default`.
    pub fn pod_key(&self, pod: &str) -> String {
        if pod.contains('/') {
            pod.to_string()
        } else {
            format!(
                "{}/{pod}",
                self.live.namespace.as_deref().unwrap_or("default")
            )
        }
    }

    pub fn live_options(&self) -> LiveOptions {
        self.live.live_options()
    }

    /// Which scheduler configuration is in use, in words.
    pub fn config_label(&self) -> String {
        match &self.config {
            Some(p) => format!("scheduler config {}", p.display()),
            None => "scheduler config: v1.35 defaults".into(),
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Open the terminal inspector (the default).
    Tui(TuiCommand),
    /// Explain one pod's scheduling: filter verdicts, scores, FitError, preemption.
    Explain(ExplainArgs),
    /// List pending pods in scheduling-queue order (priority, then age).
    Pods(PodsArgs),
    /// Run the scheduler loop over every pending pod until the queue settles: a
    /// timeline of attempts, waits at Permit, bindings and preemptions.
    Simulate(SimulateArgs),
    /// Snapshots of a live cluster.
    #[command(subcommand)]
    Snapshot(SnapshotCommand),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell) to stdout.
    Completions(CompletionsArgs),
    /// Print the manual page (roff) to stdout: `schedscope man > schedscope.1`.
    Man,
}

#[derive(Debug, Args, Clone)]
pub struct PodsArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    /// Replay each listed pod and add its verdict: the node it would land on, or the
    /// main reason it lands nowhere (the `explain` table's largest rejection group).
    /// Off by default: one scheduling cycle per pod (about 10 s for 1,000 pending
    /// pods on 5,000 nodes).
    #[arg(long)]
    pub verdicts: bool,
    /// One section per verdict reason, the most pods first, with its count (implies
    /// --verdicts).
    #[arg(long, value_enum, value_name = "KEY")]
    pub group_by: Option<PodsGroupBy>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PodsGroupBy {
    /// The verdict's main reason.
    Reason,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args, Clone)]
pub struct SimulateArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    /// Output format: a text timeline or JSON events.
    #[arg(long, short = 'o', value_enum, default_value_t = SimFormat::Text)]
    pub output: SimFormat,
    /// Include each attempt's full trace in the JSON output.
    #[arg(long)]
    pub traces: bool,
    /// Stop after this many scheduling attempts.
    #[arg(long)]
    pub max_attempts: Option<usize>,
    /// Stop when simulated time passes this many seconds after the start.
    #[arg(long, default_value_t = 3600)]
    pub max_seconds: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SimFormat {
    Text,
    Json,
}

#[derive(Debug, Subcommand)]
pub enum SnapshotCommand {
    /// Write every object the scheduler reads (no Secrets, no managedFields) to a
    /// file that --snapshot loads back: multi-document YAML, or a List for `.json`.
    Save(SaveArgs),
}

#[derive(Debug, Args, Clone)]
pub struct SaveArgs {
    #[command(flatten)]
    pub live: LiveArgs,
    /// Output file (`.json` for a JSON List, otherwise YAML; `-` for YAML on stdout).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: PathBuf,
    /// Rewrite a snapshot file (or directory) already on disk, such as `kubectl get
    /// -o yaml` output, instead of listing a cluster. Works offline.
    #[arg(long, value_name = "FILE")]
    pub from: Option<PathBuf>,
    /// Keep only the fields the scheduler reads, kind by kind; drop everything else
    /// (env, commands, annotations, messages, volume options, unknown fields) and
    /// every object of a kind the scheduler never reads.
    #[arg(long)]
    pub redact: bool,
    /// Also replace names, label keys and values (namespaces, pods, nodes, volumes,
    /// claims, owners, classes, images, taints, extended resources) with a keyed hash,
    /// the same one everywhere so references and selectors still match; implies
    /// --redact. Keys Kubernetes defines and integer label values are kept.
    #[arg(long)]
    pub redact_names: bool,
    /// The key of the --redact-names hash (HMAC-SHA256): the same key maps a name
    /// the same way in every run. Default: a random key per run.
    #[arg(long, value_name = "KEY", requires = "redact_names")]
    pub redact_key: Option<String>,
}

#[derive(Debug, Args, Clone)]
pub struct ExplainArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    /// The pod, as NAMESPACE/NAME (a bare NAME is in --namespace, else `default`).
    #[arg(value_name = "NAMESPACE/POD")]
    pub pod: String,
    /// Output format.
    #[arg(long, short = 'o', value_enum, default_value_t = Format::Table)]
    pub output: Format,
    /// Also run every filter plugin on every node (always on for json and yaml).
    #[arg(long)]
    pub all_filters: bool,
    /// How many top-scoring nodes the table shows.
    #[arg(long, default_value_t = 10)]
    pub top: usize,
    /// Print how long each phase took on stderr (load, scheduling cycle and its
    /// PreFilter, Filter and Score, render), one `phase: value unit` line each.
    #[arg(long)]
    pub timings: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Table,
    Json,
    Yaml,
}

/// How long a one-shot command waits for a live cluster's lists.
const LIVE_LIST_TIMEOUT: Duration = Duration::from_secs(120);

/// A cluster to explain: a snapshot, or one list of a live cluster (with what the
/// real scheduler said about pending pods).
pub struct Loaded {
    pub cluster: Cluster,
    pub live: Option<SchedulingEvents>,
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

/// Loads the snapshot named on the command line, or lists the live cluster when
/// no snapshot is named.
pub fn load_cluster(args: &SourceArgs) -> Result<Loaded> {
    if args.snapshot.is_some() {
        let s = load_source(args)?;
        return Ok(Loaded {
            cluster: s.cluster,
            live: None,
        });
    }
    let opts = args.live_options();
    let rt = runtime()?;
    let config = rt.block_on(live::client_config(&opts))?;
    let server = config.cluster_url.to_string();
    let st = rt
        .block_on(async {
            let client = kube::Client::try_from(config).map_err(live::LiveError::Client)?;
            live::load_once(client, &opts, LIVE_LIST_TIMEOUT).await
        })
        .with_context(|| format!("reading the live cluster at {server}"))?;
    Ok(Loaded {
        cluster: st.cluster,
        live: Some(st.events),
    })
}

/// Loads the snapshot named on the command line.
pub fn load_source(args: &SourceArgs) -> Result<Snapshot> {
    let path = args.snapshot.as_deref().context(
        "no cluster given: pass --snapshot PATH (for example --snapshot examples/demo-cluster.yaml)",
    )?;
    let snapshot = load_with_progress(path)
        .with_context(|| format!("cannot load snapshot {}", path.display()))?;
    report_load(&snapshot.report);
    Ok(snapshot)
}

/// Load a snapshot, showing bytes and objects read on stderr while it takes long, when
/// stderr is a terminal (never in pipes or logs).
fn load_with_progress(path: &std::path::Path) -> Result<Snapshot, crate::source::SnapshotError> {
    use std::io::IsTerminal;
    use std::sync::atomic::Ordering;
    if !std::io::stderr().is_terminal() {
        return load_snapshot(path);
    }
    let progress = crate::source::LoadProgress::default();
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| {
        let shown = scope.spawn(|| {
            let start = std::time::Instant::now();
            let mut shown = false;
            while !done.load(Ordering::Relaxed) {
                // Woken early when the load ends, so a quick load is not held up.
                std::thread::park_timeout(std::time::Duration::from_millis(100));
                // Small files load before anything would be worth showing.
                if done.load(Ordering::Relaxed)
                    || start.elapsed() < std::time::Duration::from_millis(500)
                {
                    continue;
                }
                let mb = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed) as f64 / 1e6;
                let what = if progress.building_model.load(Ordering::Relaxed) {
                    "building the model".to_string()
                } else {
                    format!("{} objects", progress.objects.load(Ordering::Relaxed))
                };
                eprint!(
                    "\r\x1b[Kloading: {:.0} of {:.0} MB, {what}",
                    mb(&progress.bytes_read),
                    mb(&progress.bytes_total)
                );
                shown = true;
            }
            if shown {
                eprint!("\r\x1b[K");
            }
        });
        let r = crate::source::load_snapshot_with_progress(path, Some(&progress));
        done.store(true, Ordering::Relaxed);
        shown.thread().unpark();
        let _ = shown.join();
        r
    })
}

/// Say on stderr what a directory load read, and every warning (stdout stays the
/// answer, for scripts).
fn report_load(report: &crate::source::LoadReport) {
    for line in load_notes(report) {
        eprintln!("{}", terminal_safe(&line));
    }
}

/// The lines `report_load` prints, unescaped (the inspector prints them around its
/// screen).
fn load_notes(report: &crate::source::LoadReport) -> Vec<String> {
    let mut lines = Vec::new();
    if report.from_directory {
        lines.push(report.to_string());
    }
    lines.extend(report.warnings.iter().map(|w| format!("warning: {w}")));
    lines
}

/// `snapshot save`: list the live cluster (or read `--from`) and write it.
pub fn run_snapshot_save(live: &LiveArgs, args: &SaveArgs, out: &mut dyn Write) -> Result<()> {
    let redact = args.redact || args.redact_names;
    let (mut objects, report) = match &args.from {
        Some(from) => {
            // The loader reports bad input with file, document and field.
            let mut objects = save::read_objects(from)?;
            let mut report = save::SaveReport::default();
            objects.retain_mut(|v| {
                let kind = v.get("kind").and_then(|k| k.as_str()).map(str::to_string);
                let kept = save::clean(v, redact);
                if kept && let Some(k) = kind {
                    *report.objects.entry(k).or_default() += 1;
                }
                kept
            });
            (objects, report)
        }
        None => {
            let opts = live.live_options();
            let rt = runtime()?;
            rt.block_on(async {
                let client = live::connect(&opts).await?;
                save::fetch_objects(&client, &opts, redact).await
            })?
        }
    };
    if args.redact_names {
        let key = match &args.redact_key {
            Some(k) => k.as_bytes().to_vec(),
            None => redact::random_key()
                .map_err(|e| anyhow::anyhow!("cannot draw a random key: {e}"))?,
        };
        redact::hash_names(&mut objects, &mut redact::NameHasher::new(&key));
    }
    let to_stdout = save::is_stdout(&args.output);
    let shown = args.output.display().to_string();
    let mut summary = Vec::new();
    save::write_output(&objects, &args.output, out)?;
    writeln!(
        summary,
        "wrote {} ({}{})",
        if to_stdout {
            "stdout".into()
        } else {
            terminal_safe(&shown)
        },
        report,
        match (args.redact_names, redact) {
            (true, _) => "; redacted, names hashed",
            (false, true) => "; redacted",
            _ => "",
        }
    )?;
    for kind in &report.left_out {
        writeln!(summary, "not saved: {}", terminal_safe(kind))?;
    }
    // The summary goes to stderr when the snapshot itself is on stdout.
    if to_stdout {
        std::io::stderr().write_all(&summary)?;
    } else {
        out.write_all(&summary)?;
    }
    Ok(())
}

pub fn load_config(path: Option<&Path>) -> Result<SchedulerConfig> {
    match path {
        None => Ok(SchedulerConfig::defaults()),
        Some(p) => crate::source::read_scheduler_config(p)
            .with_context(|| format!("invalid scheduler configuration {}", p.display())),
    }
}

pub fn run_explain(args: &ExplainArgs, out: &mut dyn Write) -> Result<()> {
    let source = &args.source;
    let timings = args.timings.then(|| Arc::new(Timings::new()));
    let loaded = match &timings {
        Some(t) => timed_load(source, t)?,
        None => load_cluster(source)?,
    };
    let config = load_config(source.config.as_deref())?;
    let opts = CycleOptions {
        all_filters: args.all_filters || args.output != Format::Table,
        now: crate::clock::wall_clock(),
        timer: timings
            .clone()
            .map(|t| crate::engine::cycle::PhaseTimer(t as Arc<dyn PhaseClock>)),
        ..Default::default()
    };
    let cycle_start = timings.as_ref().map(|t| t.now());
    let trace = explain(&loaded.cluster, &config, &source.pod_key(&args.pod), &opts).map_err(
        |e| match e {
            // Name the command that lists them, with this run's own source flags.
            crate::explain::ExplainError::PodNotFound { .. } => {
                let mut all = source.clone();
                all.live.namespace = None;
                anyhow::anyhow!("{e}; `{}` lists them", all.command_line("pods"))
            }
            e => e.into(),
        },
    )?;
    if let (Some(t), Some(start)) = (&timings, cycle_start) {
        t.add("scheduling cycle", t.now() - start);
    }
    let render_start = timings.as_ref().map(|t| t.now());
    // Live: the real scheduler's word beside the replay.
    let word = loaded.live.as_ref().and_then(|events| {
        let pod = loaded.cluster.pod(&trace.pod)?;
        SchedulerWord::of(pod, events.get(&trace.pod), trace.fit_error.as_deref())
    });
    // The rejections' exact causes, from the cluster the replay ran on.
    let view = TraceView::of_replay(&trace, &loaded.cluster, &config.profiles);
    let needs = loaded
        .cluster
        .pod(&trace.pod)
        .map(|pod| PodNeeds::of(pod, &loaded.cluster));
    match args.output {
        Format::Table => {
            let text = table::render_with_needs(
                &trace,
                &view,
                needs.as_ref(),
                &table::TableOptions {
                    top: args.top,
                    ..Default::default()
                },
            );
            out.write_all(terminal_safe(&text).as_bytes())?;
            if loaded.live.is_some() {
                writeln!(out, "\n{}", terminal_safe(&source.config_label()))?;
                if let Some(w) = &word {
                    writeln!(
                        out,
                        "{}",
                        terminal_safe(&w.line(crate::clock::wall_clock()))
                    )?;
                }
            }
        }
        Format::Json | Format::Yaml => {
            let mut v = json::to_json_view(&trace, &view);
            if let Some(n) = &needs {
                v["needs"] = json::needs_json(n);
            }
            if loaded.live.is_some()
                && let Some(o) = v.as_object_mut()
            {
                o.insert(
                    "realScheduler".into(),
                    match &word {
                        Some(w) => serde_json::json!({
                            "from": w.from, "message": w.message, "differs": w.differs,
                            "count": w.count,
                            "lastSeen": w.last_seen.map(|t| t.to_string()),
                        }),
                        None => serde_json::Value::Null,
                    },
                );
            }
            if args.output == Format::Json {
                serde_json::to_writer_pretty(&mut *out, &v)?;
                writeln!(out)?;
            } else {
                let text = serde_saphyr::to_string(&v).context("cannot render YAML")?;
                out.write_all(text.as_bytes())?;
            }
        }
    }
    if let (Some(t), Some(start)) = (&timings, render_start) {
        t.add("render", t.now() - start);
        eprint!("{}", t.report());
    }
    Ok(())
}

/// Phase durations of one `explain --timings` run: the clock the engine is given,
/// and the loader's and the CLI's own phases.
struct Timings {
    origin: std::time::Instant,
    phases: std::sync::Mutex<Vec<(String, Duration)>>,
}

impl Timings {
    fn new() -> Self {
        Timings {
            origin: std::time::Instant::now(),
            phases: Default::default(),
        }
    }
    /// Adds `took` to `phase` (a phase met twice, such as Filter in all-filters mode,
    /// sums up).
    fn add(&self, phase: &str, took: Duration) {
        let mut phases = self.phases.lock().unwrap_or_else(|e| e.into_inner());
        match phases.iter_mut().find(|(p, _)| p == phase) {
            Some((_, d)) => *d += took,
            None => phases.push((phase.to_string(), took)),
        }
    }
    /// One `phase: value unit` line per phase, in the order they were first met,
    /// except the engine's phases which follow `scheduling cycle`, which holds them.
    fn report(&self) -> String {
        let phases = self.phases.lock().unwrap_or_else(|e| e.into_inner());
        let engine = ["PreFilter", "Filter", "Score"];
        let line = |(p, d): &(String, Duration)| format!("{p}: {:.3} ms\n", d.as_secs_f64() * 1e3);
        let mut out = String::new();
        for entry in phases.iter().filter(|(p, _)| !engine.contains(&p.as_str())) {
            out.push_str(&line(entry));
            if entry.0 == "scheduling cycle" {
                for e in engine {
                    if let Some(entry) = phases.iter().find(|(p, _)| p == e) {
                        out.push_str(&line(entry));
                    }
                }
            }
        }
        out
    }
}

impl PhaseClock for Timings {
    fn now(&self) -> Duration {
        self.origin.elapsed()
    }
    fn record(&self, phase: Phase, took: Duration) {
        self.add(phase.as_str(), took);
    }
}

/// `load_cluster` with its phases timed. A single snapshot file is loaded as without
/// `--timings` (a large JSON List streamed, reads and decoding overlapping), its phases
/// as the loader measured them: `read` (time spent waiting for the file),
/// `decode+model` (the rest), with `load` the whole; a directory or a live cluster
/// gets `load` only.
fn timed_load(source: &SourceArgs, t: &Timings) -> Result<Loaded> {
    let start = t.now();
    let loaded = match source.snapshot.as_deref() {
        // The same load as without --timings (streaming for a large JSON List), its
        // phases as the loader measured them: reading and decoding overlap there.
        Some(_) => {
            let snapshot = load_source(source)?;
            let stats = snapshot.stats;
            t.add("read", stats.read);
            t.add("decode", stats.decode);
            t.add("model", stats.model);
            Loaded {
                cluster: snapshot.cluster,
                live: None,
            }
        }
        None => load_cluster(source)?,
    };
    t.add("load", t.now() - start);
    Ok(loaded)
}

pub fn run_simulate(args: &SimulateArgs, out: &mut dyn Write) -> Result<()> {
    let source = &args.source;
    use crate::engine::scheduler::{SimOptions, simulate};
    use crate::render::simulation;
    let snapshot = load_source(source)?;
    let config = load_config(source.config.as_deref())?;
    let opts = SimOptions {
        keep_traces: args.traces,
        max_attempts: args.max_attempts,
        max_duration: std::time::Duration::from_secs(args.max_seconds),
        ..SimOptions::default()
    };
    let result = simulate(snapshot.cluster, config, opts);
    match args.output {
        SimFormat::Text => {
            let text = simulation::render_timeline(&result);
            out.write_all(terminal_safe(&text).as_bytes())?
        }
        SimFormat::Json => {
            serde_json::to_writer_pretty(&mut *out, &simulation::to_json(&result, args.traces))?;
            writeln!(out)?;
        }
    }
    Ok(())
}

pub fn run_pods(args: &PodsArgs, out: &mut dyn Write) -> Result<()> {
    let source = &args.source;
    // The order is the configuration's QueueSort plugin's, so a bad --config is an
    // error here as in every other command.
    let config = load_config(source.config.as_deref())?;
    let snapshot = load_cluster(source)?;
    let pending: Vec<_> = snapshot
        .cluster
        .pending_pods()
        .filter(|p| {
            source
                .live
                .namespace
                .as_deref()
                .is_none_or(|ns| p.namespace == ns)
        })
        .cloned()
        .collect();
    let pending =
        crate::engine::scheduler::queue_order(&config.profiles, &snapshot.cluster, pending);
    let verdicts = (args.verdicts || args.group_by.is_some())
        .then(|| pod_verdicts(&snapshot.cluster, &config.profiles, &pending));
    // No waiting pods in a snapshot; the state is the inspector's.
    let states: Vec<String> = pending
        .iter()
        .map(|p| {
            use crate::report::{PodState, pod_reason, pod_state};
            match pod_state(p, &[]) {
                PodState::Nominated => pod_reason(p, PodState::Nominated, &[]),
                s => s.label().to_string(),
            }
        })
        .collect();
    let table = PodsTable::new(&pending, &states, verdicts.as_deref());
    match (&verdicts, args.group_by) {
        (Some(verdicts), Some(PodsGroupBy::Reason)) => {
            let groups = crate::report::group_by_reason((0..pending.len()).zip(verdicts));
            table.header(out, "  ")?;
            for g in groups {
                let n = g.pods.len();
                writeln!(
                    out,
                    "\n{} · {}",
                    crate::report::format::thousands(n) + if n == 1 { " pod" } else { " pods" },
                    terminal_safe(&g.reason)
                )?;
                for i in g.pods {
                    table.row(out, "  ", i)?;
                }
            }
        }
        _ => {
            table.header(out, "")?;
            for i in 0..pending.len() {
                table.row(out, "", i)?;
            }
        }
    }
    Ok(())
}

/// Each pod's verdict, through `explain` as `schedscope explain` does (first
/// rejections only, as kube-scheduler). The cycles are independent: they run on
/// rayon's workers (as the engine's node chunks do), and come back in the pods'
/// order.
fn pod_verdicts(
    cluster: &Cluster,
    profiles: &[crate::engine::Framework],
    pods: &[Arc<crate::model::Pod>],
) -> Vec<crate::report::PodVerdict> {
    let opts = CycleOptions {
        now: crate::clock::wall_clock(),
        ..Default::default()
    };
    let verdict = |p: &Arc<crate::model::Pod>| match crate::explain::explain_pod(
        cluster,
        profiles,
        &p.key(),
        None,
        &opts,
    ) {
        Ok(t) => crate::report::PodVerdict::of(&t, &TraceView::new(&t)),
        Err(e) => e.verdict(),
    };
    use rayon::prelude::*;
    pods.par_iter().map(verdict).collect()
}

/// The `pods` columns, as wide as their longest entry so long names keep the table
/// aligned; VERDICT only when verdicts were computed.
struct PodsTable<'a> {
    pods: &'a [Arc<crate::model::Pod>],
    states: &'a [String],
    verdicts: Option<&'a [crate::report::PodVerdict]>,
    pod_w: usize,
    sched_w: usize,
    state_w: usize,
}

impl<'a> PodsTable<'a> {
    fn new(
        pods: &'a [Arc<crate::model::Pod>],
        states: &'a [String],
        verdicts: Option<&'a [crate::report::PodVerdict]>,
    ) -> Self {
        let width = |s: &str| terminal_safe(s).chars().count();
        PodsTable {
            pods,
            states,
            verdicts,
            pod_w: pods
                .iter()
                .map(|p| width(&p.key()))
                .max()
                .unwrap_or(0)
                .max(48),
            sched_w: pods
                .iter()
                .map(|p| width(&p.scheduler_name))
                .max()
                .unwrap_or(0)
                .max(20),
            state_w: states.iter().map(|s| width(s)).max().unwrap_or(0).max(5),
        }
    }

    fn header(&self, out: &mut dyn Write, indent: &str) -> Result<()> {
        let (pod_w, sched_w, state_w) = (self.pod_w, self.sched_w, self.state_w);
        match self.verdicts {
            Some(_) => writeln!(
                out,
                "{indent}{:<pod_w$} {:>11}  {:<sched_w$} {:<state_w$}  VERDICT",
                "POD", "PRIORITY", "SCHEDULER", "STATE"
            )?,
            None => writeln!(
                out,
                "{indent}{:<pod_w$} {:>11}  {:<sched_w$} STATE",
                "POD", "PRIORITY", "SCHEDULER"
            )?,
        }
        Ok(())
    }

    fn row(&self, out: &mut dyn Write, indent: &str, i: usize) -> Result<()> {
        let (pod_w, sched_w, state_w) = (self.pod_w, self.sched_w, self.state_w);
        let p = &self.pods[i];
        let key = p.key();
        let (key, sched) = (terminal_safe(&key), terminal_safe(&p.scheduler_name));
        let state = terminal_safe(&self.states[i]);
        match self.verdicts.and_then(|v| v.get(i)) {
            Some(v) => writeln!(
                out,
                "{indent}{key:<pod_w$} {:>11}  {sched:<sched_w$} {state:<state_w$}  {}",
                p.priority,
                terminal_safe(&v.label())
            )?,
            None => writeln!(
                out,
                "{indent}{key:<pod_w$} {:>11}  {sched:<sched_w$} {state}",
                p.priority
            )?,
        }
        Ok(())
    }
}

/// `completions SHELL`: the completion script for every subcommand and flag.
pub fn run_completions(shell: clap_complete::Shell, out: &mut dyn Write) -> Result<()> {
    use clap::CommandFactory;
    let mut cmd = Cli::command();
    let name = cmd.get_name().to_string();
    clap_complete::generate(shell, &mut cmd, name, out);
    Ok(())
}

/// `man`: the manual page (options and the list of subcommands), generated from the
/// same definitions as `--help`.
pub fn run_man(out: &mut dyn Write) -> Result<()> {
    use clap::CommandFactory;
    clap_mangen::Man::new(Cli::command()).render(out)?;
    Ok(())
}

/// Opens the inspector on the snapshot, or on the live cluster.
pub fn run_tui(cli: &Cli) -> Result<()> {
    let ins = cli.inspector()?;
    if ins.tui.act {
        return run_act(&ins);
    }
    let Some(path) = ins.source.snapshot.clone() else {
        return run_live_tui(&ins);
    };
    let progress = Arc::new(crate::source::LoadProgress::default());
    let loading = crate::tui::loading::Loading {
        file: path.display().to_string(),
        progress: progress.clone(),
        theme: ins.theme.clone(),
    };
    let config_path = ins.source.config.clone();
    let simulate = ins.tui.simulate;
    // The same steps, messages and order as before the loading screen: the snapshot,
    // then the scheduler configuration, then the simulation over them.
    crate::tui::loading::run(loading, move || {
        let snapshot = crate::source::load_snapshot_with_progress(&path, Some(&progress))
            .with_context(|| format!("cannot load snapshot {}", path.display()))?;
        let notes = load_notes(&snapshot.report);
        let config = load_config(config_path.as_deref())?;
        let source = format!("snapshot {}", path.display());
        let simulation = simulate.then(|| {
            use crate::engine::scheduler::{Scheduler, SimOptions};
            let sim = Scheduler::new(
                snapshot.cluster.clone(),
                config.clone(),
                SimOptions {
                    keep_traces: true,
                    // The user drives: no attempt limit.
                    max_attempts: Some(usize::MAX),
                    ..SimOptions::default()
                },
            );
            crate::tui::Simulation::new(
                sim,
                format!("simulate {}", source.trim_start_matches("snapshot ")),
            )
        });
        let source = match &simulation {
            Some(s) => s.source().to_string(),
            None => source,
        };
        let mut opts = crate::tui::TuiOptions::new(snapshot.cluster, config.profiles, source);
        opts.simulation = simulation;
        Ok(crate::tui::loading::Loaded { opts, notes })
    })
}

/// `--act`: the acting scheduler on the live cluster, in the inspector or headless.
fn run_act(ins: &Inspector) -> Result<()> {
    use crate::act::{self, ActOptions};
    let args = &ins.tui;
    let config = load_config(ins.source.config.as_deref())?;
    let live_opts = ins.source.live_options();
    let opts = ActOptions::new(&args.scheduler_name, &args.lease_namespace);
    act::check_profile(&config, &opts)?;
    let rt = runtime()?;
    if args.headless {
        return rt.block_on(async {
            let client = live::connect(&live_opts).await?;
            // The signal's number; 0 while none came.
            let stop = Arc::new(AtomicI32::new(0));
            let flag = stop.clone();
            crate::signals::watch(move |s| {
                // A second signal while stopping does not wait for the Lease.
                flag.compare_exchange(0, s.signal, AtomicOrdering::SeqCst, AtomicOrdering::SeqCst)
                    .is_ok()
            })
            .context("watching for stop signals")?;
            let stopped = stop.clone();
            act::run(
                client,
                live_opts,
                config,
                opts,
                |line| eprintln!("{}", terminal_safe(&line)),
                move || stopped.load(AtomicOrdering::SeqCst) != 0,
            )
            .await?;
            eprintln!("stopped; Lease released");
            match stop.load(AtomicOrdering::SeqCst) {
                0 => Ok(()),
                signal => Err(crate::signals::Stopped { signal }.into()),
            }
        });
    }
    let client_config = rt.block_on(live::client_config(&live_opts))?;
    let label = format!(
        "act as {} · {} · {}",
        opts.scheduler_name,
        live::describe(&client_config, &live_opts),
        ins.source.config_label()
    );
    // The client's buffer task needs the runtime it will run on.
    let client = rt
        .block_on(async { kube::Client::try_from(client_config) })
        .context("building the API client")?;
    // A held Lease is a plain error before the terminal is taken over.
    rt.block_on(act::acquire_lease_retrying(&client, &opts))?;
    // A lost Lease stops the writes, not the inspector.
    let mut opts = opts;
    opts.watch_after_lease_lost = true;
    let stopped_label = format!("NOT ACTING (Lease lost) · {label}");
    let profiles = config.profiles.clone();
    let (handle, inputs) = act::session::channel();
    let (tx, rx) = std::sync::mpsc::channel();
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("act-session".into())
        .spawn(move || {
            let mut last = Arc::new(Cluster::new());
            let tell = tx.clone();
            let r = rt.block_on(act::run_session(
                client,
                live_opts,
                config,
                opts,
                inputs,
                |r| match r {
                    act::ActEvent::Data(u) => {
                        last = u.cluster.clone();
                        let _ = tx.send(u);
                    }
                    act::ActEvent::Line(text, error) => {
                        let _ =
                            tx.send(crate::source::DataUpdate::notice(last.clone(), text, error));
                    }
                    act::ActEvent::StoppedActing(why) => {
                        let text = format!("{why}; no more writes");
                        let mut u = crate::source::DataUpdate::notice(last.clone(), text, true);
                        u.source = Some(stopped_label.clone());
                        let _ = tx.send(u);
                    }
                },
                || false,
            ));
            if let Err(e) = &r {
                let text = format!("acting stopped: {e}");
                let _ = tell.send(crate::source::DataUpdate::notice(last, text, true));
            }
            let _ = done_tx.send(r);
        })
        .context("starting the acting session")?;
    let mut tui = crate::tui::TuiOptions::new(Cluster::new(), profiles, label);
    tui.theme = ins.theme.clone();
    tui.updates = Some(rx);
    tui.waiting = Some(Box::new(crate::tui::acting::ActWaiting::new(handle)));
    let shown = crate::tui::run(tui);
    // The inspector dropped its handle: the session stops and releases the Lease.
    let session = done_rx.recv_timeout(std::time::Duration::from_secs(10));
    shown?;
    match session {
        Ok(r) => r.context("acting session"),
        Err(_) => anyhow::bail!(
            "the acting session did not stop within 10 s (the Lease expires by itself)"
        ),
    }
}

/// The inspector on a live cluster: watchers on their own thread send updates.
fn run_live_tui(ins: &Inspector) -> Result<()> {
    let config = load_config(ins.source.config.as_deref())?;
    let opts = ins.source.live_options();
    let client_config = runtime()?.block_on(live::client_config(&opts))?;
    let label = format!(
        "{} · {}",
        live::describe(&client_config, &opts),
        ins.source.config_label()
    );
    let (updates, control) = live::spawn(opts, client_config)?;
    let mut tui = crate::tui::TuiOptions::new(Cluster::new(), config.profiles, label);
    tui.theme = ins.theme.clone();
    tui.updates = Some(updates);
    tui.live = Some(control);
    crate::tui::run(tui)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simulate_flag_on_tui_and_top_level() {
        let c = Cli::try_parse_from(["schedscope", "tui", "--simulate"]).expect("parses");
        assert!(matches!(
            c.command,
            Some(Command::Tui(TuiCommand {
                tui: TuiArgs { simulate: true, .. },
                ..
            }))
        ));
        let c = Cli::try_parse_from(["schedscope", "--simulate"]).expect("parses");
        assert!(c.top.tui.simulate && c.command.is_none());
        let c = Cli::try_parse_from(["schedscope"]).expect("parses");
        assert!(!c.top.tui.simulate);
        // Not a flag of the other subcommands.
        assert!(Cli::try_parse_from(["schedscope", "pods", "--simulate"]).is_err());
    }

    #[test]
    fn act_flags() {
        let c = Cli::try_parse_from(["schedscope", "--act"]).expect("parses");
        assert!(c.top.tui.act);
        assert_eq!(c.top.tui.scheduler_name, "schedscope");
        assert_eq!(c.top.tui.lease_namespace, "kube-system");
        let c = Cli::try_parse_from(["schedscope", "--act", "--scheduler-name", "gang"])
            .expect("parses");
        assert_eq!(c.top.tui.scheduler_name, "gang");
        // Without --act nothing acts: its options alone are refused.
        assert!(Cli::try_parse_from(["schedscope", "--scheduler-name", "gang"]).is_err());
        // A snapshot has no API server to write to, whichever side of `tui` it is on.
        assert!(Cli::try_parse_from(["schedscope", "--act", "--snapshot", "x.yaml"]).is_err());
        let c = Cli::try_parse_from(["schedscope", "-s", "x.yaml", "tui", "--act"]).unwrap();
        assert!(
            c.inspector()
                .unwrap_err()
                .to_string()
                .contains("drop --snapshot")
        );
    }

    #[test]
    fn source_flags_before_or_after_the_subcommand() {
        let c = Cli::try_parse_from(["schedscope", "-s", "a.yaml", "-n", "shop", "explain", "web"])
            .unwrap();
        let Some(Command::Explain(args)) = &c.command else {
            panic!("explain")
        };
        let s = c.source_for(&args.source).unwrap();
        assert_eq!(s.snapshot.as_deref(), Some(Path::new("a.yaml")));
        assert_eq!(s.pod_key(&args.pod), "shop/web");
        // The subcommand's own flag wins.
        let c =
            Cli::try_parse_from(["schedscope", "-s", "a.yaml", "pods", "-s", "b.yaml"]).unwrap();
        let Some(Command::Pods(args)) = &c.command else {
            panic!("pods")
        };
        let s = c.source_for(&args.source).unwrap();
        assert_eq!(s.snapshot.as_deref(), Some(Path::new("b.yaml")));
        // A snapshot and a kubeconfig together are refused.
        let c = Cli::try_parse_from(["schedscope", "--kubeconfig", "k", "pods", "-s", "b.yaml"])
            .unwrap();
        let Some(Command::Pods(args)) = &c.command else {
            panic!("pods")
        };
        assert!(c.source_for(&args.source).is_err());
    }

    /// Flags appear only where they mean something.
    #[test]
    fn help_lists_only_the_flags_that_apply() {
        use clap::CommandFactory;
        let cmd = Cli::command();
        let flags = |path: &[&str]| -> Vec<String> {
            let mut c = &cmd;
            for p in path {
                c = c.find_subcommand(p).unwrap();
            }
            c.get_arguments()
                .filter_map(|a| a.get_long().map(str::to_string))
                .collect()
        };
        for sub in [
            &["explain"][..],
            &["pods"],
            &["simulate"],
            &["snapshot", "save"],
        ] {
            assert!(!flags(sub).contains(&"theme".to_string()), "{sub:?}");
        }
        assert!(flags(&["tui"]).contains(&"theme".to_string()));
        assert!(!flags(&["snapshot", "save"]).contains(&"snapshot".to_string()));
        assert!(!flags(&["snapshot", "save"]).contains(&"config".to_string()));
        assert!(flags(&["explain"]).contains(&"snapshot".to_string()));
        cmd.debug_assert();
    }
}
