//! Simulation throughput: plain pending pods scheduled one by one onto a synthetic
//! cluster with kube-scheduler's default configuration. Defaults: 10,000 pending
//! pods, 5,000 nodes, no bound pods (override with SCHEDSCOPE_SIM_PENDING,
//! SCHEDSCOPE_SIM_NODES, SCHEDSCOPE_SIM_BOUND). Target: ≥ 500 pods/s.
//!
//! Run: `cargo bench --bench simulate`

mod support;

use std::time::Instant;

use schedscope::engine::SchedulerConfig;
use schedscope::engine::scheduler::SimOptions;
use schedscope::testing::synthetic::{SyntheticSpec, synthetic_cluster_with_pending_json};
use support::{SimRun, env_usize, load_synthetic, run_simulation};

fn main() {
    schedscope::allocator::tune();
    let pending = env_usize("SCHEDSCOPE_SIM_PENDING", 10_000);
    let spec = SyntheticSpec {
        nodes: env_usize("SCHEDSCOPE_SIM_NODES", 5_000),
        pods: env_usize("SCHEDSCOPE_SIM_BOUND", 0),
        zones: 3,
    };
    let t = Instant::now();
    let cluster = load_synthetic(&synthetic_cluster_with_pending_json(&spec, pending), |_| {});
    println!(
        "setup: {} nodes, {} bound pods, {} pending pods in {:.1} s",
        spec.nodes,
        spec.pods,
        cluster.pending_pods().count(),
        t.elapsed().as_secs_f64()
    );
    let config = SchedulerConfig::defaults();
    let opts = SimOptions {
        keep_traces: false,
        ..Default::default()
    };
    let SimRun {
        result: r,
        stop,
        secs,
        bound,
        ..
    } = run_simulation(cluster, config, opts);
    println!(
        "simulate: {} attempts, {} of {} pods bound, {:?}, in {:.2} s = {:.0} pods/s ({:.0} attempts/s)",
        r.attempts.len(),
        bound,
        r.pods.len(),
        stop,
        secs,
        r.pods.len() as f64 / secs,
        r.attempts.len() as f64 / secs
    );
}
