//! Shared by the benches: environment overrides and the synthetic cluster loader.
#![allow(dead_code)] // each bench uses part of it

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

pub fn time_explain(
    cluster: &Cluster,
    config: &SchedulerConfig,
    pod: &str,
    opts: &CycleOptions,
    runs: usize,
) -> ExplainRuns {
    let mut wall = Vec::new();
    let mut cpu = Vec::new();
    let mut outcome = String::new();
    for _ in 0..runs {
        let t = Instant::now();
        let c = process_cpu();
        let trace = explain(cluster, config, pod, opts).expect("explain");
        wall.push(t.elapsed());
        cpu.push(process_cpu().saturating_sub(c));
        outcome = match &trace.fit_error {
            Some(e) => e.clone(),
            None => format!(
                "{} feasible, selected {:?}",
                trace.feasible.len(),
                trace.selected_node
            ),
        };
    }
    ExplainRuns {
        median: median(wall),
        // The kernel accounts CPU time at scheduler ticks: single runs are
        // quantised, their mean is not biased.
        cpu_mean: cpu.iter().sum::<Duration>() / runs.max(1) as u32,
        outcome,
    }
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
