//! Loading what a subcommand runs on: a snapshot (with progress on a terminal and the
//! loader's notes on stderr), one list of a live cluster, the scheduler configuration.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};

use super::SourceArgs;
use crate::engine::SchedulerConfig;
use crate::model::Cluster;
use crate::source::live;
use crate::source::presets::Preset;
use crate::source::{DumpFacts, SchedulingEvents, Snapshot, load_snapshot};
use crate::version::{KubeVersion, Release, VersionSource};

/// How long a one-shot command waits for a live cluster's lists.
pub(super) const LIVE_LIST_TIMEOUT: Duration = Duration::from_secs(120);

/// A cluster to explain: a snapshot, or one list of a live cluster (with what the
/// real scheduler said about pending pods).
pub struct Loaded {
    pub cluster: Cluster,
    pub live: Option<SchedulingEvents>,
    /// What a snapshot's dump says about the cluster's scheduler (empty when live).
    pub dump: DumpFacts,
}

pub(super) fn runtime() -> Result<tokio::runtime::Runtime> {
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
            dump: s.report.dump,
        });
    }
    let opts = args.live_options();
    let rt = runtime()?;
    let config = rt.block_on(live::client_config(&opts))?;
    let server = config.cluster_url.to_string();
    let (st, version) = rt
        .block_on(async {
            let client = live::bounded::client(config).map_err(live::LiveError::Client)?;
            // The API server's release is the one replayed (unless --kube-version);
            // a server that does not say leaves v1.35.
            let version = client.apiserver_version().await.ok();
            let st = live::load_once(client, &opts, LIVE_LIST_TIMEOUT).await?;
            Ok::<_, live::LiveError>((st, version))
        })
        .with_context(|| format!("reading the live cluster at {server}"))?;
    let mut cluster = st.cluster;
    if let Some(info) = version {
        match KubeVersion::parse(&info.git_version) {
            Ok(v) => cluster.kube_version = Some(Release::new(v, VersionSource::ApiServer)),
            Err(e) if args.kube_version.is_none() => crate::render::escape::to_stderr(&format!(
                "warning: the API server is {}: {e}; replaying v1.35 (--kube-version chooses another)",
                info.git_version
            )),
            Err(_) => {}
        }
    }
    choose_version(&mut cluster, args);
    Ok(Loaded {
        cluster,
        live: Some(st.events),
        dump: DumpFacts::default(),
    })
}

/// The release the cluster is replayed by: `--kube-version`, else what the source
/// recorded (left as the loader set it), else none (v1.35, the default).
fn choose_version(cluster: &mut Cluster, args: &SourceArgs) {
    if let Some(v) = args.kube_version {
        cluster.kube_version = Some(Release::new(v, VersionSource::Flag));
    }
}

/// Loads the snapshot named on the command line.
pub fn load_source(args: &SourceArgs) -> Result<Snapshot> {
    let path = args.snapshot.as_deref().context(
        "no cluster given: pass --snapshot PATH (for example --snapshot examples/demo-cluster.yaml)",
    )?;
    let mut snapshot = load_with_progress(path)
        .with_context(|| format!("cannot load snapshot {}", path.display()))?;
    report_load(&snapshot.report);
    choose_version(&mut snapshot.cluster, args);
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
                crate::render::escape::raw_to_stderr(&format!(
                    "\r\x1b[Kloading: {:.0} of {:.0} MB, {what}",
                    mb(&progress.bytes_read),
                    mb(&progress.bytes_total)
                ));
                shown = true;
            }
            if shown {
                crate::render::escape::raw_to_stderr("\r\x1b[K");
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
        crate::render::escape::to_stderr(&line);
    }
}

/// The lines `report_load` prints, unescaped (the inspector prints them around its
/// screen).
pub(super) fn load_notes(report: &crate::source::LoadReport) -> Vec<String> {
    let mut lines = Vec::new();
    if report.from_directory {
        lines.push(report.to_string());
    }
    lines.extend(report.notes.iter().map(|n| format!("note: {n}")));
    lines.extend(report.warnings.iter().map(|w| format!("warning: {w}")));
    lines
}

/// The scheduler configuration: the file, the profile preset it stands for
/// (`--profile-preset` sets `preset:NAME`), or v1.35's defaults. The release replayed
/// is the cluster's ([`Cluster::kube_version`]): cycles re-build the profiles for it.
pub fn load_config(path: Option<&Path>) -> Result<SchedulerConfig> {
    match path {
        None => Ok(SchedulerConfig::defaults()),
        Some(p) => match Preset::of_path(p) {
            Some(preset) => preset
                .load()
                .with_context(|| format!("invalid profile preset {preset}")),
            None => crate::source::read_scheduler_config(p)
                .with_context(|| format!("invalid scheduler configuration {}", p.display())),
        },
    }
}

/// `config` (from [`load_config`]), unless neither --config nor --profile-preset was
/// given and the dump names its scheduler's profile (an OpenShift `Scheduler`
/// `cluster`): then that profile's preset, said on stderr.
pub fn with_dump_profile(
    config: SchedulerConfig,
    source: &SourceArgs,
    dump: &DumpFacts,
) -> Result<SchedulerConfig> {
    let (config, note) = dump_profile(config, source, dump)?;
    if let Some(n) = note {
        crate::render::escape::to_stderr(&n);
    }
    Ok(config)
}

/// [`with_dump_profile`] with the line it would print (`note: ...` or `warning: ...`).
pub(super) fn dump_profile(
    config: SchedulerConfig,
    source: &SourceArgs,
    dump: &DumpFacts,
) -> Result<(SchedulerConfig, Option<String>)> {
    if source.config.is_some() {
        return Ok((config, None));
    }
    match dump.profile_preset() {
        None => Ok((config, None)),
        Some(Ok((preset, note))) => {
            let c = preset
                .load()
                .with_context(|| format!("invalid profile preset {preset}"))?;
            Ok((c, Some(format!("note: {note}"))))
        }
        Some(Err(warning)) => Ok((config, Some(format!("warning: {warning}")))),
    }
}
