//! Scale benchmark: a synthetic 5,000-node / 150,000-pod cluster (override with
//! SCHEDSCOPE_BENCH_NODES / SCHEDSCOPE_BENCH_PODS), JSON snapshot load throughput and
//! `explain` latency for a plain pod, a pod with required anti-affinity and a pod with
//! topology spread constraints.
//!
//! Run: `cargo bench --bench scale`. With `SCHEDSCOPE_SCALE_FILE=PATH` it reads a
//! kubectl-shaped snapshot instead, such as `../shared/scale/gen_scale.py` writes
//! (images, labels, DaemonSets: the realistic shape), and explains its three pending
//! pods `default/plain`, `default/anti` and `default/spread`.
//! SCHEDSCOPE_SCALE_FACTOR=3 measures that file's shape at 3x instead (its nodes and
//! bound pods replicated under new names; built once, cached under `target/`).
//!
//! Then `simulate` throughput on the same cluster: every 15th running pod not owned
//! by a DaemonSet (at most SCHEDSCOPE_SCALE_UNBIND, default 10,000) is unbound in the
//! loaded model (no `nodeName`, phase Pending) and the scheduler puts them back.
//! SCHEDSCOPE_BENCH_PARALLELISM sets the engine's workers (0 = all cores, 1 =
//! sequential) for every measure.
//! SCHEDSCOPE_BENCH_EXPLAIN_RUNS sets how many times each pod is explained (20; the
//! median is reported). Normal and all-filters mode run in alternation, and the
//! median ratio of the pairs is reported too. SCHEDSCOPE_BENCH_ONLY=TEXT runs only
//! the explains whose label (`plain all_filters=true`, ...) contains TEXT, to
//! profile one.

mod support;

use std::time::Instant;

use schedscope::engine::SchedulerConfig;
use schedscope::engine::cycle::CycleOptions;
use schedscope::engine::scheduler::SimOptions;
use schedscope::model::Cluster;
use schedscope::source::{load_snapshot, load_snapshot_str};
use schedscope::testing::synthetic::{
    ANTI_AFFINITY_POD, PLAIN_POD, SPREAD_POD, SyntheticSpec, synthetic_cluster_json,
};
use support::{
    SimRun, env_usize, median, memory_mb, run_simulation, time_explain, time_explain_pair,
};

/// The load as `--snapshot PATH` does it (streaming for a JSON List), first in the
/// process so that the peak resident memory is this load's.
fn path_load(path: &str) {
    let before = memory_mb("self");
    let t = Instant::now();
    let s = load_snapshot(std::path::Path::new(path)).expect("the snapshot loads");
    let took = t.elapsed();
    let mb = s.stats.bytes as f64 / 1e6;
    println!(
        "snapshot load_snapshot(path) ({path}): {mb:.1} MB in {:.1} ms = {:.0} MB/s \
         (read {:.0} ms, decode {:.0} ms, model {:.0} ms, {} objects, streamed: {})",
        took.as_secs_f64() * 1e3,
        mb / took.as_secs_f64(),
        s.stats.read.as_secs_f64() * 1e3,
        s.stats.decode.as_secs_f64() * 1e3,
        s.stats.model.as_secs_f64() * 1e3,
        s.stats.objects,
        s.stats.streamed,
    );
    if let (Some((rss0, _)), Some((rss, hwm))) = (before, memory_mb("self")) {
        println!(
            "resident memory: {rss0:.0} MB before, {rss:.0} MB with the snapshot loaded \
             (VmRSS), peak {hwm:.0} MB (VmHWM)"
        );
    }
}

fn main() {
    schedscope::allocator::tune();
    // `cargo bench` passes `--bench`; ignore arguments.
    let scale_file = std::env::var("SCHEDSCOPE_SCALE_FILE").ok().map(|path| {
        match env_usize("SCHEDSCOPE_SCALE_FACTOR", 1) {
            0 | 1 => path,
            f => support::replicate::replicated(std::path::Path::new(&path), f)
                .display()
                .to_string(),
        }
    });
    if let Some(path) = &scale_file {
        path_load(path);
    }
    let (text, name, subjects) = match scale_file {
        Some(path) => (
            std::fs::read_to_string(&path).expect("SCHEDSCOPE_SCALE_FILE is readable"),
            path,
            ["default/plain", "default/anti", "default/spread"],
        ),
        None => {
            let spec = SyntheticSpec {
                nodes: env_usize("SCHEDSCOPE_BENCH_NODES", 5_000),
                pods: env_usize("SCHEDSCOPE_BENCH_PODS", 150_000),
                zones: 3,
            };
            (
                synthetic_cluster_json(&spec),
                "synthetic.json".to_string(),
                [PLAIN_POD, ANTI_AFFINITY_POD, SPREAD_POD],
            )
        }
    };
    let mb = text.len() as f64 / 1e6;

    let mut loads = Vec::new();
    let mut snapshot = None;
    for _ in 0..3 {
        let t = Instant::now();
        let s = load_snapshot_str(&text, &name).expect("the snapshot loads");
        loads.push(t.elapsed());
        snapshot = Some(s);
    }
    let load = median(loads);
    let snapshot = snapshot.unwrap();
    if let Some((rss, hwm)) = memory_mb("self") {
        println!(
            "resident memory after load_snapshot_str, text still held: {rss:.0} MB (VmRSS), \
             peak so far {hwm:.0} MB (VmHWM)"
        );
    }
    println!(
        "snapshot load ({name}): {} nodes, {} pods, {mb:.1} MB JSON in {:.1} ms = {:.0} MB/s",
        snapshot.cluster.nodes().len(),
        snapshot.cluster.pods().count(),
        load.as_secs_f64() * 1e3,
        mb / load.as_secs_f64()
    );
    let config = SchedulerConfig::defaults();
    let parallelism = env_usize("SCHEDSCOPE_BENCH_PARALLELISM", 0);
    let only = std::env::var("SCHEDSCOPE_BENCH_ONLY").unwrap_or_default();
    let runs = env_usize("SCHEDSCOPE_BENCH_EXPLAIN_RUNS", 20);
    let line = |label: &str, all_filters: bool, r: &support::ExplainRuns| {
        println!(
            "explain {label:<14} all_filters={all_filters:<5}: median {:>7.2} ms, cpu mean {:>7.2} ms ({outcome})",
            r.median.as_secs_f64() * 1e3,
            r.cpu_mean.as_secs_f64() * 1e3,
            outcome = r.outcome
        );
    };
    for (label, pod) in ["plain", "anti-affinity", "spread"]
        .into_iter()
        .zip(subjects)
    {
        let wanted =
            |all_filters: bool| format!("{label} all_filters={all_filters}").contains(&only);
        let opts = |all_filters| CycleOptions {
            all_filters,
            now: "2026-01-03T00:00:00Z".parse().unwrap(),
            parallelism,
            ..Default::default()
        };
        match (wanted(false), wanted(true)) {
            (true, true) => {
                let (normal, all, ratio) =
                    time_explain_pair(&snapshot.cluster, &config, pod, &opts(false), runs);
                line(label, false, &normal);
                line(label, true, &all);
                println!(
                    "explain {label:<14} all-filters / normal: {ratio:.2}x (median of {runs} alternated pairs)"
                );
            }
            (normal, all) => {
                for all_filters in [false, true]
                    .into_iter()
                    .filter(|&a| if a { all } else { normal })
                {
                    let r = time_explain(&snapshot.cluster, &config, pod, &opts(all_filters), runs);
                    line(label, all_filters, &r);
                }
            }
        }
    }
    simulate_unbound(
        &snapshot.cluster,
        &config,
        env_usize("SCHEDSCOPE_SCALE_UNBIND", 10_000),
        parallelism,
    );
}

/// Unbinds up to `count` running pods (every 15th in key order, DaemonSet pods left
/// alone as their controller pins them) and times the simulation that places them.
fn simulate_unbound(cluster: &Cluster, config: &SchedulerConfig, count: usize, parallelism: usize) {
    let mut cluster = cluster.clone();
    let unbind: Vec<_> = cluster
        .pods()
        .filter(|p| p.is_bound() && !p.owner_references.iter().any(|o| o.kind == "DaemonSet"))
        .step_by(15)
        .take(count)
        .map(|p| (**p).clone())
        .collect();
    for mut p in unbind {
        p.node_name = None;
        p.phase = "Pending".into();
        p.start_time = None;
        cluster.upsert_pod(p);
    }
    let pending = cluster.pending_pods().count();
    let opts = SimOptions {
        keep_traces: false,
        parallelism,
        ..Default::default()
    };
    let SimRun {
        result: r,
        stop,
        secs,
        cpu_secs,
        bound,
    } = run_simulation(cluster, config.clone(), opts);
    println!(
        "simulate {pending} pending pods: {} attempts, {bound} bound, {stop:?}, in {secs:.2} s = {:.0} pods/s (cpu {cpu_secs:.2} s = {:.0} pods per cpu-second)",
        r.attempts.len(),
        r.pods.len() as f64 / secs,
        r.pods.len() as f64 / cpu_secs,
    );
}
