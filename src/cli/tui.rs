//! The inspector's entry points: on a snapshot (behind a loading screen), on a live
//! cluster, or acting as a scheduler on it (`--act`, in the inspector or headless).

use std::sync::Arc;
use std::sync::atomic::{AtomicI32, Ordering as AtomicOrdering};

use anyhow::{Context, Result};

use super::load::{dump_profile, load_config, load_notes, runtime};
use super::{Cli, Inspector};
use crate::model::Cluster;
use crate::source::live;

/// Opens the inspector on the snapshot, or on the live cluster.
pub fn run_tui(cli: &Cli) -> Result<()> {
    let ins = cli.inspector()?;
    // Before anything is loaded or the terminal touched: a bad edit is a plain error.
    let edits = what_if_edits(&ins.tui)?;
    if ins.tui.act {
        return run_act(&ins, edits);
    }
    let Some(path) = ins.source.snapshot.clone() else {
        return run_live_tui(&ins, edits);
    };
    let progress = Arc::new(crate::source::LoadProgress::default());
    let loading = crate::tui::loading::Loading {
        file: path.display().to_string(),
        progress: progress.clone(),
        theme: ins.theme.clone(),
    };
    let config_path = ins.source.config.clone();
    let source_args = ins.source.clone();
    let simulate = ins.tui.simulate;
    // The same steps, messages and order as before the loading screen: the snapshot,
    // then the scheduler configuration, then the simulation over them.
    crate::tui::loading::run(loading, move || {
        let snapshot = crate::source::load_snapshot_with_progress(&path, Some(&progress))
            .with_context(|| format!("cannot load snapshot {}", path.display()))?;
        let mut notes = load_notes(&snapshot.report);
        check_edits(&snapshot.cluster, &edits)?;
        let config = load_config(config_path.as_deref())?;
        let (config, profile_note) = dump_profile(config, &source_args, &snapshot.report.dump)?;
        notes.extend(profile_note);
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
        opts.what_if = edits;
        Ok(crate::tui::loading::Loaded { opts, notes })
    })
}

/// `--what-if`, parsed. Refused with `--headless`: it has no view to edit, and the
/// acting scheduler never schedules on edits.
fn what_if_edits(args: &super::TuiArgs) -> Result<Vec<crate::whatif::Edit>> {
    if args.what_if.is_empty() {
        return Ok(Vec::new());
    }
    if args.headless {
        anyhow::bail!(
            "--what-if edits what the inspector shows, and --headless has no inspector \
             (the acting scheduler never schedules on edits): drop --what-if or --headless"
        );
    }
    Ok(crate::whatif::parse_edits(&args.what_if)?)
}

/// The cluster edits applied to the snapshot once, so that one naming a node or pod
/// the snapshot lacks is an error before the inspector opens (pod edits wait for the
/// pod explained).
fn check_edits(cluster: &Cluster, edits: &[crate::whatif::Edit]) -> Result<()> {
    let on_cluster: Vec<_> = edits.iter().filter(|e| !e.is_pod_edit()).cloned().collect();
    if !on_cluster.is_empty() {
        crate::whatif::apply(cluster, None, &on_cluster)?;
    }
    Ok(())
}

/// `--act`: the acting scheduler on the live cluster, in the inspector or headless.
/// What-if `edits` change only what the inspector shows: the session schedules on
/// the real model it watches.
fn run_act(ins: &Inspector, edits: Vec<crate::whatif::Edit>) -> Result<()> {
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
                |line| crate::render::escape::to_stderr(&line),
                move || stopped.load(AtomicOrdering::SeqCst) != 0,
            )
            .await?;
            crate::render::escape::to_stderr("stopped; Lease released");
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
        .block_on(async { crate::source::live::bounded::client(client_config) })
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
    tui.what_if = edits;
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
fn run_live_tui(ins: &Inspector, edits: Vec<crate::whatif::Edit>) -> Result<()> {
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
    tui.what_if = edits;
    crate::tui::run(tui)
}
