//! The acting scheduler's engine (`--act`) on a large live model: how long it takes
//! to start, to follow one informer update, to schedule a burst of its pods, and to
//! build the inspector's model with its assumed pods. Defaults: 5,000 nodes, 150,000
//! bound pods, 200 pending pods for scheduler `schedscope` (override with
//! SCHEDSCOPE_ACT_NODES, SCHEDSCOPE_ACT_BOUND, SCHEDSCOPE_ACT_PENDING).
//!
//! Run: `cargo bench --bench act`

mod support;

use std::sync::Arc;
use std::time::Instant;

use k8s_openapi::jiff::Timestamp;
use schedscope::act::{ActOptions, Actor, Write};
use schedscope::engine::SchedulerConfig;
use schedscope::model::Pod;
use schedscope::testing::synthetic::{SyntheticSpec, synthetic_cluster_with_pending_json};
use support::{env_usize, load_synthetic};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn main() {
    schedscope::allocator::tune();
    let spec = SyntheticSpec {
        nodes: env_usize("SCHEDSCOPE_ACT_NODES", 5_000),
        pods: env_usize("SCHEDSCOPE_ACT_BOUND", 150_000),
        zones: 3,
    };
    let pending = env_usize("SCHEDSCOPE_ACT_PENDING", 200);
    // Pending pods are owned by `schedscope`.
    let live = Arc::new(load_synthetic(
        &synthetic_cluster_with_pending_json(&spec, pending),
        |p| {
            if !p.is_bound() {
                p.scheduler_name = "schedscope".into();
            }
        },
    ));
    let config = SchedulerConfig::from_str(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: schedscope\n",
        "bench",
    )
    .expect("config");
    let pending = live.pending_pods().count();
    let now = Timestamp::now();
    let opts = ActOptions::new("schedscope", "kube-system");

    let t = Instant::now();
    let mut actor = Actor::new(live.clone(), config, opts, now).expect("actor");
    println!(
        "start: {} nodes, {} pods in {:.0} ms",
        spec.nodes,
        live.pod_count(),
        t.elapsed().as_secs_f64() * 1e3
    );

    let t = Instant::now();
    let writes = actor.step(now);
    let binds = writes
        .iter()
        .filter(|w| matches!(w, Write::Bind { .. }))
        .count();
    let secs = t.elapsed().as_secs_f64();
    println!(
        "schedule: {binds} of {pending} pods bound in {:.0} ms = {:.0} pods/s",
        secs * 1e3,
        binds as f64 / secs
    );

    let t = Instant::now();
    let shown = actor.overlay();
    println!(
        "inspector model with {} assumed pods: {:.0} ms",
        binds,
        t.elapsed().as_secs_f64() * 1e3
    );
    drop(shown);

    // One informer update: a bound pod's labels change (a new model from the watch,
    // sharing every other object, as the live source publishes it).
    let mut samples = Vec::new();
    let mut current = live;
    for i in 0..7 {
        let mut next = (*current).clone();
        let key = next
            .pods()
            .find(|p| p.is_bound())
            .map(|p| p.key())
            .expect("a bound pod");
        let mut p = Pod::clone(next.pod(&key).expect("pod"));
        p.labels.insert("bench".into(), i.to_string());
        next.upsert_pod(p);
        let next = Arc::new(next);
        let t = Instant::now();
        actor.observe(next.clone());
        samples.push(t.elapsed().as_secs_f64() * 1e3);
        current = next;
    }
    println!(
        "follow one pod update ({} pods, {} nodes): median {:.1} ms",
        current.pod_count(),
        spec.nodes,
        median(samples)
    );
}
