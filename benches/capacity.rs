//! Capacity throughput: how long `capacity` takes to place up to 10,000 copies
//! (SCHEDSCOPE_CAPACITY_MAX) of a pod, one full scheduling cycle each, on the
//! realistic 5,000-node shape of `../shared/scale` (kubectl-shaped, images, labels,
//! DaemonSets, 150,000 running pods). Target: 10,000 copies in ≤ 10 s on 2 cores.
//!
//! Run: `python3 ../shared/scale/gen_scale.py --out /tmp/c.json` once, then
//! `SCHEDSCOPE_SCALE_FILE=/tmp/c.json cargo bench --bench capacity`. Without the file
//! it uses the synthetic 5,000-node cluster of `schedscope::testing::synthetic`.
//! SCHEDSCOPE_CAPACITY_PODS lists the pods to size (default: `default/plain`,
//! `default/anti`, `default/spread` of the scale file).

mod support;

use std::time::Instant;

use schedscope::capacity::capacity;
use schedscope::engine::SchedulerConfig;
use schedscope::engine::cycle::CycleOptions;
use schedscope::source::{load_snapshot, load_snapshot_str};
use schedscope::testing::synthetic::{SyntheticSpec, synthetic_cluster_json};
use support::{env_usize, process_cpu};

fn main() {
    schedscope::allocator::tune();
    let max = env_usize("SCHEDSCOPE_CAPACITY_MAX", 10_000);
    let t = Instant::now();
    let (cluster, source) = match std::env::var("SCHEDSCOPE_SCALE_FILE") {
        Ok(path) => {
            let s = load_snapshot(std::path::Path::new(&path)).expect("the snapshot loads");
            (s.cluster, path)
        }
        Err(_) => {
            let spec = SyntheticSpec {
                nodes: 5_000,
                pods: 150_000,
                zones: 3,
            };
            let s = load_snapshot_str(&synthetic_cluster_json(&spec), "synthetic")
                .expect("synthetic loads");
            (s.cluster, "synthetic 5,000 nodes / 150,000 pods".into())
        }
    };
    println!(
        "setup: {source}: {} nodes, {} pods, loaded in {:.1} s",
        cluster.nodes().len(),
        cluster.pod_count(),
        t.elapsed().as_secs_f64()
    );
    let pods = std::env::var("SCHEDSCOPE_CAPACITY_PODS")
        .unwrap_or_else(|_| "default/plain,default/anti,default/spread".into());
    let config = SchedulerConfig::defaults();
    let opts = CycleOptions {
        now: "2026-01-01T00:00:00Z".parse().unwrap(),
        ..Default::default()
    };
    for key in pods.split(',') {
        let Some(pod) = cluster.pod(key) else {
            println!("{key}: not in the cluster, skipped");
            continue;
        };
        let cpu = process_cpu();
        let t = Instant::now();
        let cap =
            capacity(&cluster, &config.profiles, pod, max, &opts).expect("a profile serves it");
        let secs = t.elapsed().as_secs_f64();
        let cpu = (process_cpu() - cpu).as_secs_f64();
        println!(
            "capacity {key}: {} copies (max {max}, stopped by {:?}) on {} nodes in {secs:.2} s \
             = {:.0} copies/s, {:.2} ms per copy; cpu {cpu:.1} s ({:.1} cores busy)",
            cap.count,
            cap.stopped_by,
            cap.per_node.len(),
            cap.count as f64 / secs,
            secs * 1e3 / cap.count.max(1) as f64,
            cpu / secs
        );
    }
}
