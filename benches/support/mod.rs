//! Shared by the benches: environment overrides and the synthetic cluster loader.
#![allow(dead_code)] // each bench uses part of it

pub mod replicate;

use std::time::{Duration, Instant};

/// The binary's allocator (`src/main.rs`), so the figures are the binary's; each
/// bench's `main` tunes it as the binary does (`schedscope::allocator::tune`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use schedscope::engine::SchedulerConfig;
use schedscope::engine::cycle::CycleOptions;
use schedscope::engine::scheduler::{
    Placement, Scheduler, SimOptions, SimulationResult, StopReason,
};
use schedscope::explain::explain;
use schedscope::model::{Cluster, Node, Pod};

/// `name` from the environment as a number, else `default`.
pub fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The synthetic `kind: List` into the model (nodes and pods only), each pod through
/// `adjust` before it is added.
pub fn load_synthetic(text: &str, adjust: impl Fn(&mut Pod)) -> Cluster {
    #[derive(serde::Deserialize)]
    struct List {
        items: Vec<serde_json::Value>,
    }
    let list: List = serde_json::from_str(text).expect("synthetic JSON parses");
    let mut c = Cluster::new();
    let mut pods = Vec::new();
    for item in list.items {
        match item["kind"].as_str() {
            Some("Node") => {
                let n: k8s_openapi::api::core::v1::Node =
                    serde_json::from_value(item).expect("node");
                c.upsert_node(Node::from_k8s(&n).expect("valid node"));
            }
            Some("Pod") => pods.push(item),
            _ => {}
        }
    }
    for item in pods {
        let p: k8s_openapi::api::core::v1::Pod = serde_json::from_value(item).expect("pod");
        let mut pod = Pod::from_k8s(&p).expect("valid pod");
        adjust(&mut pod);
        c.upsert_pod(pod);
    }
    c
}

/// `VmRSS` and `VmHWM` of a process (`"self"` or a pid) from /proc/PROCESS/status,
/// in MB (Linux only).
pub fn memory_mb(process: &str) -> Option<(f64, f64)> {
    let status = std::fs::read_to_string(format!("/proc/{process}/status")).ok()?;
    let field = |name: &str| {
        let line = status.lines().find(|l| l.starts_with(name))?;
        let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kb / 1024.0)
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}

/// CPU time this process has used so far, all threads together, from each thread's
/// `/proc/self/task/*/schedstat` (Linux only; zero elsewhere). On a shared machine the
/// wall time mostly measures the wait for a core; the CPU time is the work done.
pub fn process_cpu() -> Duration {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return Duration::ZERO;
    };
    let ns: u64 = tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .sum();
    Duration::from_nanos(ns)
}

pub fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// `runs` timed `explain`s of one pod: the median wall time, the mean CPU time
/// ([`process_cpu`]) and how the last one ended.
pub struct ExplainRuns {
    pub median: Duration,
    pub cpu_mean: Duration,
    pub outcome: String,
}

/// One timed explain: wall time, CPU time and how it ended. The CPU is read outside
/// the wall time (reading it walks `/proc`, which is not the explain's work).
fn time_one(
    cluster: &Cluster,
    config: &SchedulerConfig,
    pod: &str,
    opts: &CycleOptions,
) -> (Duration, Duration, String) {
    let c = process_cpu();
    let t = Instant::now();
    let trace = explain(cluster, config, pod, opts).expect("explain");
    let wall = t.elapsed();
    let cpu = process_cpu().saturating_sub(c);
    let outcome = match &trace.fit_error {
        Some(e) => e.clone(),
        None => format!(
            "{} feasible, selected {:?}",
            trace.feasible.len(),
            trace.selected_node
        ),
    };
    (wall, cpu, outcome)
}

fn summary(runs: Vec<(Duration, Duration, String)>) -> ExplainRuns {
    let n = runs.len().max(1) as u32;
    let outcome = runs.last().map(|r| r.2.clone()).unwrap_or_default();
    ExplainRuns {
        // The kernel accounts CPU time at scheduler ticks: single runs are
        // quantised, their mean is not biased.
        cpu_mean: runs.iter().map(|r| r.1).sum::<Duration>() / n,
        median: median(runs.into_iter().map(|r| r.0).collect()),
        outcome,
    }
}

pub fn time_explain(
    cluster: &Cluster,
    config: &SchedulerConfig,
    pod: &str,
    opts: &CycleOptions,
    runs: usize,
) -> ExplainRuns {
    summary(
        (0..runs)
            .map(|_| time_one(cluster, config, pod, opts))
            .collect(),
    )
}

/// Two explains timed in alternation, so both see the same machine (a shared
/// machine's speed drifts by up to 2× between seconds): each one's figures, and the
/// median of the second / first ratio of each pair.
pub fn time_alternated(
    cluster: &Cluster,
    config: &SchedulerConfig,
    first: (&str, &CycleOptions),
    second: (&str, &CycleOptions),
    runs: usize,
) -> (ExplainRuns, ExplainRuns, f64) {
    let mut pairs = Vec::with_capacity(runs);
    for _ in 0..runs {
        pairs.push((
            time_one(cluster, config, first.0, first.1),
            time_one(cluster, config, second.0, second.1),
        ));
    }
    let mut ratios: Vec<f64> = pairs
        .iter()
        .map(|(a, b)| b.0.as_secs_f64() / a.0.as_secs_f64().max(1e-9))
        .collect();
    ratios.sort_by(f64::total_cmp);
    let ratio = ratios.get(ratios.len() / 2).copied().unwrap_or(f64::NAN);
    let (a, b): (Vec<_>, Vec<_>) = pairs.into_iter().unzip();
    (summary(a), summary(b), ratio)
}

/// Normal and all-filters mode of one pod, [`time_alternated`].
pub fn time_explain_pair(
    cluster: &Cluster,
    config: &SchedulerConfig,
    pod: &str,
    opts: &CycleOptions,
    runs: usize,
) -> (ExplainRuns, ExplainRuns, f64) {
    let modes = |all_filters| CycleOptions {
        all_filters,
        ..opts.clone()
    };
    let (normal, all) = (modes(false), modes(true));
    time_alternated(cluster, config, (pod, &normal), (pod, &all), runs)
}

/// One timed `simulate` run to the end: the result, why it stopped, the seconds it
/// took and how many pods it bound.
pub struct SimRun {
    pub result: SimulationResult,
    pub stop: StopReason,
    pub secs: f64,
    /// CPU seconds of the run ([`process_cpu`]).
    pub cpu_secs: f64,
    pub bound: usize,
}

pub fn run_simulation(cluster: Cluster, config: SchedulerConfig, opts: SimOptions) -> SimRun {
    let t = Instant::now();
    let cpu = process_cpu();
    let mut sim = Scheduler::new(cluster, config, opts);
    let stop = sim.run();
    let secs = t.elapsed().as_secs_f64();
    let cpu_secs = process_cpu().saturating_sub(cpu).as_secs_f64();
    let result = sim.result();
    let bound = result
        .pods
        .iter()
        .filter(|p| matches!(p.placement, Placement::Bound { .. }))
        .count();
    SimRun {
        result,
        stop,
        secs,
        cpu_secs,
        bound,
    }
}
