//! Dynamic Resource Allocation at scale: 5,000 nodes with 8 GPUs each published in
//! ResourceSlices (40,000 devices), 20,000 allocated claims (the first 2,500 nodes
//! full), and `explain` of a pod asking for one GPU and of a pod asking for 8 GPUs
//! on one PCIe root (a `matchAttribute` constraint). Targets (issue: 2-core machine):
//! one GPU ≤ 20 ms, 8 GPUs with matchAttribute ≤ 50 ms.
//!
//! Run: `cargo bench --bench dra` (SCHEDSCOPE_BENCH_NODES overrides the node count;
//! SCHEDSCOPE_BENCH_RUNS the repetitions, median reported).

mod support;

use std::time::{Duration, Instant};

use schedscope::engine::SchedulerConfig;
use schedscope::engine::cycle::CycleOptions;
use schedscope::engine::plugins::dynamic_resources::allocator::Inventory;
use schedscope::explain::explain;
use schedscope::report::claims;
use schedscope::source::load_snapshot_str;
use serde_json::{Value, json};
use support::env_usize;

const GPUS_PER_NODE: usize = 8;

fn cluster_json(nodes: usize) -> String {
    let mut items: Vec<Value> = Vec::new();
    items.push(
        json!({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
        "metadata": {"name": "gpu.example.com"},
        "spec": {"selectors": [{"cel": {"expression": "device.driver == \"gpu.example.com\""}}]}}),
    );
    let full = nodes / 2;
    for n in 0..nodes {
        let name = format!("node-{n:05}");
        items.push(json!({"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name,
                "topology.kubernetes.io/zone": format!("zone-{}", n % 3)}},
            "status": {"capacity": {"cpu": "96", "memory": "768Gi", "pods": "110"},
                       "allocatable": {"cpu": "95", "memory": "760Gi", "pods": "110"}}}));
        let devices: Vec<Value> = (0..GPUS_PER_NODE)
            .map(|i| {
                json!({"name": format!("gpu-{i}"),
                "attributes": {"model": {"string": "a100"}, "index": {"int": i},
                               "resource.kubernetes.io/pcieRoot": {"string": format!("pci-{n}")}},
                "capacity": {"memory": {"value": "80Gi"}}})
            })
            .collect();
        items.push(
            json!({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": format!("{name}-gpus")},
            "spec": {"driver": "gpu.example.com", "nodeName": name,
                     "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                     "devices": devices}}),
        );
        // The first half of the nodes is full: one claim per GPU, each held by a pod.
        if n < full {
            for i in 0..GPUS_PER_NODE {
                let claim = format!("held-{n}-{i}");
                let pod = format!("worker-{n}-{i}");
                items.push(json!({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                    "metadata": {"name": claim, "namespace": "ml", "uid": format!("uid-{claim}")},
                    "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}},
                    "status": {"allocation": {"devices": {"results": [{"request": "gpu",
                        "driver": "gpu.example.com", "pool": name, "device": format!("gpu-{i}")}]},
                        "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name",
                            "operator": "In", "values": [name]}]}]}},
                        "reservedFor": [{"resource": "pods", "name": pod, "uid": format!("uid-{pod}")}]}}));
                items.push(json!({"apiVersion": "v1", "kind": "Pod",
                    "metadata": {"name": pod, "namespace": "ml", "uid": format!("uid-{pod}")},
                    "spec": {"nodeName": name, "containers": [{"name": "c", "image": "trainer:1",
                        "resources": {"requests": {"cpu": "8", "memory": "64Gi"}, "claims": [{"name": "gpu"}]}}],
                        "resourceClaims": [{"name": "gpu", "resourceClaimName": claim}]},
                    "status": {"phase": "Running"}}));
            }
        }
    }
    // The pods explained, and their claims.
    items.push(json!({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": "one-gpu", "namespace": "ml"},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com",
            "selectors": [{"cel": {"expression": "device.attributes[\"gpu.example.com\"].model == \"a100\""}}]}}]}}}));
    items.push(json!({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": "eight-gpus", "namespace": "ml"},
        "spec": {"devices": {"requests": [{"name": "gpus", "exactly": {"deviceClassName": "gpu.example.com",
                "allocationMode": "ExactCount", "count": GPUS_PER_NODE}}],
            "constraints": [{"requests": ["gpus"], "matchAttribute": "resource.kubernetes.io/pcieRoot"}]}}}));
    // The same kind of pod without a claim: what the rest of the cycle costs here.
    items.push(json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "no-claim", "namespace": "ml", "uid": "uid-no-claim"},
        "spec": {"containers": [{"name": "c", "image": "trainer:1",
            "resources": {"requests": {"cpu": "8", "memory": "64Gi"}}}]},
        "status": {"phase": "Pending"}}));
    for (pod, claim) in [("one-gpu", "one-gpu"), ("eight-gpus", "eight-gpus")] {
        items.push(json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": pod, "namespace": "ml", "uid": format!("uid-{pod}")},
            "spec": {"containers": [{"name": "c", "image": "trainer:1",
                "resources": {"requests": {"cpu": "8", "memory": "64Gi"}, "claims": [{"name": "gpu"}]}}],
                "resourceClaims": [{"name": "gpu", "resourceClaimName": claim}]},
            "status": {"phase": "Pending"}}));
    }
    serde_json::to_string(&json!({"apiVersion": "v1", "kind": "List", "items": items})).unwrap()
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    schedscope::allocator::tune();
    let nodes = env_usize("SCHEDSCOPE_BENCH_NODES", 5_000);
    let runs = env_usize("SCHEDSCOPE_BENCH_RUNS", 20);
    let text = cluster_json(nodes);
    let t = Instant::now();
    let snapshot = load_snapshot_str(&text, "dra.json").expect("the DRA cluster loads");
    println!(
        "load: {nodes} nodes, {} devices, {} claims, {:.1} MB in {:.0} ms",
        nodes * GPUS_PER_NODE,
        snapshot.cluster.resource_claims().len(),
        text.len() as f64 / 1e6,
        t.elapsed().as_secs_f64() * 1e3
    );
    // What the first cycle of a pod with a claim to allocate builds on a model (later
    // cycles reuse it until a claim or slice changes): the devices in use and the
    // slices by node.
    let mut times = Vec::new();
    for _ in 0..runs {
        let t = Instant::now();
        let inventory = Inventory::new(&snapshot.cluster);
        times.push(t.elapsed());
        drop(inventory);
    }
    println!(
        "inventory (devices in use, slices by node): {:.1} ms (median of {runs})",
        median(times).as_secs_f64() * 1e3
    );
    let config = SchedulerConfig::defaults();
    for (label, pod, target_ms) in [
        ("no claim (baseline)", "ml/no-claim", f64::NAN),
        ("one GPU", "ml/one-gpu", 20.0),
        ("8 GPUs, matchAttribute", "ml/eight-gpus", 50.0),
    ] {
        for all_filters in [false, true] {
            let opts = CycleOptions {
                all_filters,
                now: "2026-01-10T10:00:00Z".parse().unwrap(),
                ..Default::default()
            };
            let mut times = Vec::new();
            let mut verdict = String::new();
            let mut last = None;
            for _ in 0..runs {
                let t = Instant::now();
                let trace = explain(&snapshot.cluster, &config, pod, &opts).expect("explained");
                times.push(t.elapsed());
                verdict = format!(
                    "{} feasible, best {:?}",
                    trace.feasible.len(),
                    trace.best_nodes.first()
                );
                last = Some(trace);
            }
            let m = median(times).as_secs_f64() * 1e3;
            // What the Claims section adds when it is shown (the table, the JSON, the
            // inspector; the cycle does not run it): why each of the first rejected
            // nodes falls short.
            let trace = last.expect("runs ≥ 1");
            let bench_pod = snapshot.cluster.pod(pod).expect("the bench's pod");
            let mut diagnosis = Vec::new();
            let mut diagnosed = 0;
            for _ in 0..runs {
                let t = Instant::now();
                let claims = claims::of_trace(&trace, &snapshot.cluster, bench_pod);
                diagnosis.push(t.elapsed());
                diagnosed = claims.iter().map(|c| c.nodes.len()).sum::<usize>();
            }
            let d = median(diagnosis).as_secs_f64() * 1e3;
            // The first explain on a freshly loaded model also builds the DRA index
            // (devices in use, slices by node) that later explains reuse: what a
            // one-shot `schedscope explain` pays. Measured on copies of the model.
            let mut cold = Vec::new();
            for _ in 0..runs.min(7) {
                let mut fresh = snapshot.cluster.clone();
                // A copy shares the built index; taking the claims for change drops it.
                let _ = fresh.resource_claims_mut();
                let t = Instant::now();
                explain(&fresh, &config, pod, &opts).expect("explained");
                cold.push(t.elapsed());
            }
            let c = median(cold).as_secs_f64() * 1e3;
            let target = if target_ms.is_nan() {
                String::new()
            } else {
                format!("; target ≤ {target_ms} ms")
            };
            println!(
                "explain {label}{}: {m:.1} ms, first on a fresh model {c:.1} ms (medians of {runs} and {}{target}) — {verdict}; \
                 its Claims section {d:.1} ms ({diagnosed} node diagnoses)",
                if all_filters { ", all filters" } else { "" },
                runs.min(7)
            );
        }
    }
}
