//! `explain --timings`: how long each phase took, from the loader, the engine's phase
//! clock and the CLI's own steps.

use std::time::Duration;

use anyhow::Result;

use super::SourceArgs;
use super::load::{Loaded, load_cluster, load_source};
use crate::engine::cycle::{Phase, PhaseClock};

/// Phase durations of one `explain --timings` run: the clock the engine is given,
/// and the loader's and the CLI's own phases.
pub(super) struct Timings {
    origin: std::time::Instant,
    phases: std::sync::Mutex<Vec<(String, Duration)>>,
}

impl Timings {
    pub(super) fn new() -> Self {
        Timings {
            origin: std::time::Instant::now(),
            phases: Default::default(),
        }
    }
    /// Adds `took` to `phase` (a phase met twice, such as Filter in all-filters mode,
    /// sums up).
    pub(super) fn add(&self, phase: &str, took: Duration) {
        let mut phases = self.phases.lock().unwrap_or_else(|e| e.into_inner());
        match phases.iter_mut().find(|(p, _)| p == phase) {
            Some((_, d)) => *d += took,
            None => phases.push((phase.to_string(), took)),
        }
    }
    /// One `phase: value unit` line per phase, in the order they were first met,
    /// except the engine's phases which follow `scheduling cycle`, which holds them.
    pub(super) fn report(&self) -> String {
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
        if let Some(mb) = peak_memory_mb() {
            out.push_str(&format!("peak memory: {mb:.0} MB\n"));
        }
        out
    }
}

/// The process's peak resident memory so far (`VmHWM`), in MB; `None` where
/// /proc does not say.
fn peak_memory_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
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
pub(super) fn timed_load(source: &SourceArgs, t: &Timings) -> Result<Loaded> {
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
                dump: snapshot.report.dump,
            }
        }
        None => load_cluster(source)?,
    };
    t.add("load", t.now() - start);
    Ok(loaded)
}
