//! Scale benchmark: a synthetic 5,000-node / 150,000-pod cluster (override with
//! SCHEDSCOPE_BENCH_NODES / SCHEDSCOPE_BENCH_PODS), JSON snapshot load throughput and
//! `explain` latency for a plain pod, a pod with required anti-affinity and a pod with
//! topology spread constraints.
//!
//! Run: `cargo bench --bench scale`

mod support;

use std::time::{Duration, Instant};

use schedscope::config::SchedulerConfig;
use schedscope::engine::cycle::CycleOptions;
use schedscope::explain::explain;
use schedscope::source::load_snapshot_str;
use schedscope::testing::synthetic::{
    ANTI_AFFINITY_POD, PLAIN_POD, SPREAD_POD, SyntheticSpec, synthetic_cluster_json,
};
use support::env_usize;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    // `cargo bench` passes `--bench`; ignore arguments.
    let spec = SyntheticSpec {
        nodes: env_usize("SCHEDSCOPE_BENCH_NODES", 5_000),
        pods: env_usize("SCHEDSCOPE_BENCH_PODS", 150_000),
        zones: 3,
    };
    let text = synthetic_cluster_json(&spec);
    let mb = text.len() as f64 / 1e6;

    let mut loads = Vec::new();
    let mut snapshot = None;
    for _ in 0..3 {
        let t = Instant::now();
        let s = load_snapshot_str(&text, "synthetic.json").expect("synthetic snapshot loads");
        loads.push(t.elapsed());
        snapshot = Some(s);
    }
    let load = median(loads);
    println!(
        "snapshot load: {} nodes, {} pods, {mb:.1} MB JSON in {:.1} ms = {:.0} MB/s",
        spec.nodes,
        spec.pods,
        load.as_secs_f64() * 1e3,
        mb / load.as_secs_f64()
    );
    let snapshot = snapshot.unwrap();
    let config = SchedulerConfig::defaults();
    for (label, pod) in [
        ("plain", PLAIN_POD),
        ("anti-affinity", ANTI_AFFINITY_POD),
        ("spread", SPREAD_POD),
    ] {
        for all_filters in [false, true] {
            let opts = CycleOptions {
                all_filters,
                now: "2026-01-03T00:00:00Z".parse().unwrap(),
            };
            let mut runs = Vec::new();
            let mut outcome = String::new();
            for _ in 0..7 {
                let t = Instant::now();
                let trace = explain(&snapshot.cluster, &config, pod, &opts).expect("explain");
                runs.push(t.elapsed());
                outcome = format!(
                    "{} feasible, selected {:?}",
                    trace.feasible.len(),
                    trace.selected_node
                );
            }
            println!(
                "explain {label:<14} all_filters={all_filters:<5}: median {:>7.2} ms ({outcome})",
                median(runs).as_secs_f64() * 1e3
            );
        }
    }
}
