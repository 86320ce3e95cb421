//! Volume-heavy benchmark: the scale cluster with a persistent volume on every running
//! pod (not DaemonSet pods), as a StatefulSet-heavy cluster has them: a CSI
//! PersistentVolume pinned to its node's zone, its bound claim, a VolumeAttachment to
//! the node, and a CSINode per node with the driver's attach limit. Then `explain`
//! for the plain pod as it is, with a bound claim of its own, and with an unbound
//! WaitForFirstConsumer claim (VolumeBinding's provisioning path), so NodeVolumeLimits,
//! VolumeBinding, VolumeZone and VolumeRestrictions run against every node.
//!
//! Run: `cargo bench --bench volumes`; `SCHEDSCOPE_SCALE_FILE=PATH` reads a
//! kubectl-shaped snapshot (`../shared/scale/gen_scale.py`) instead of the synthetic
//! cluster; SCHEDSCOPE_BENCH_PARALLELISM, SCHEDSCOPE_BENCH_EXPLAIN_RUNS (default 7 here)
//! and SCHEDSCOPE_BENCH_ONLY (`bound claim all_filters=false`, ...; the plain pod, the
//! ratios' base, always runs) as in `scale`. Each claim pod's normal mode runs in
//! alternation with the plain pod's, and the ratio is the median of those pairs.

mod support;

use std::time::Instant;

use k8s_openapi::api::core::v1 as core;
use k8s_openapi::api::storage::v1 as storage;
use schedscope::engine::SchedulerConfig;
use schedscope::engine::cycle::CycleOptions;
use schedscope::model::{Cluster, Pod};
use schedscope::source::{load_snapshot, load_snapshot_str};
use schedscope::testing::synthetic::{PLAIN_POD, SyntheticSpec, synthetic_cluster_json};
use serde_json::json;
use support::{env_usize, time_alternated, time_explain};

const DRIVER: &str = "pd.csi.storage.gke.io";
const CLASS: &str = "standard-rwo";
const ZONE: &str = "topology.kubernetes.io/zone";

fn from<T: serde::de::DeserializeOwned>(v: serde_json::Value) -> T {
    serde_json::from_value(v).expect("a valid object")
}

fn pv(name: &str, zone: &str, claim_ns: &str, claim: &str) -> core::PersistentVolume {
    from(json!({
        "metadata": {"name": name},
        "spec": {
            "capacity": {"storage": "10Gi"},
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": CLASS,
            "csi": {"driver": DRIVER, "volumeHandle": format!("projects/p/zones/{zone}/disks/{name}")},
            "claimRef": {"namespace": claim_ns, "name": claim},
            "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                {"key": ZONE, "operator": "In", "values": [zone]}]}]}}
        },
        "status": {"phase": "Bound"}
    }))
}

fn pvc(ns: &str, name: &str, volume: Option<&str>) -> core::PersistentVolumeClaim {
    let mut v = json!({
        "metadata": {"namespace": ns, "name": name},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": CLASS,
            "resources": {"requests": {"storage": "10Gi"}}
        },
        "status": {"phase": "Pending"}
    });
    if let Some(pv) = volume {
        // What the PV controller sets when it has bound the pair; without it the
        // scheduler takes a claim naming a volume as not bound yet.
        v["metadata"]["annotations"] = json!({"pv.kubernetes.io/bind-completed": "yes"});
        v["spec"]["volumeName"] = json!(pv);
        v["status"]["phase"] = json!("Bound");
    }
    from(v)
}

fn claim_volume(claim: &str) -> core::Volume {
    from(json!({"name": "data", "persistentVolumeClaim": {"claimName": claim}}))
}

/// Gives every running pod not owned by a DaemonSet a volume of its own; returns how
/// many.
fn add_volumes(c: &mut Cluster) -> usize {
    c.storage_classes.insert(
        CLASS.into(),
        from(json!({"metadata": {"name": CLASS}, "provisioner": DRIVER,
            "volumeBindingMode": "WaitForFirstConsumer"})),
    );
    let names: Vec<String> = c.nodes().iter().map(|n| n.name().to_string()).collect();
    for n in &names {
        let csi: storage::CSINode = from(json!({
            "metadata": {"name": n},
            "spec": {"drivers": [{"name": DRIVER, "nodeID": n, "allocatable": {"count": 127}}]}
        }));
        c.csi_nodes.insert(n.clone(), csi);
    }
    let pods: Vec<Pod> = c
        .pods()
        .filter(|p| p.is_bound() && !p.owner_references.iter().any(|o| o.kind == "DaemonSet"))
        .map(|p| (**p).clone())
        .collect();
    let count = pods.len();
    for (i, mut p) in pods.into_iter().enumerate() {
        let node = p.node_name.clone().expect("bound");
        let zone = c
            .node(&node)
            .and_then(|n| n.node.labels.get(ZONE).cloned())
            .unwrap_or_else(|| "zone-a".into());
        let (pv_name, claim) = (format!("pv-{i:06}"), format!("data-{}", p.name));
        c.persistent_volumes
            .insert(pv_name.clone(), pv(&pv_name, &zone, &p.namespace, &claim));
        c.persistent_volume_claims.insert(
            format!("{}/{claim}", p.namespace),
            pvc(&p.namespace, &claim, Some(&pv_name)),
        );
        let va: storage::VolumeAttachment = from(json!({
            "metadata": {"name": format!("csi-{pv_name}")},
            "spec": {"attacher": DRIVER, "nodeName": node,
                "source": {"persistentVolumeName": pv_name}},
            "status": {"attached": true}
        }));
        c.volume_attachments.insert(format!("csi-{pv_name}"), va);
        p.volumes.push(claim_volume(&claim));
        c.upsert_pod(p);
    }
    count
}

/// `plain` again as `<plain>-pvc` (a claim bound to a volume in the first node's zone)
/// and `<plain>-wffc` (an unbound WaitForFirstConsumer claim).
fn add_subjects(c: &mut Cluster, plain: &str) -> [String; 2] {
    let base = (**c.pod(plain).expect("the plain pod is in the snapshot")).clone();
    let zone = c.nodes()[0]
        .node
        .labels
        .get(ZONE)
        .cloned()
        .unwrap_or_else(|| "zone-a".into());
    let ns = base.namespace.clone();
    let mut keys = Vec::new();
    for (suffix, bound) in [("pvc", true), ("wffc", false)] {
        let mut p = base.clone();
        p.name = format!("{}-{suffix}", base.name);
        p.uid = format!("{}-{suffix}", base.uid);
        let claim = format!("claim-{}", p.name);
        let volume = bound.then(|| format!("pv-subject-{suffix}"));
        if let Some(v) = &volume {
            c.persistent_volumes
                .insert(v.clone(), pv(v, &zone, &ns, &claim));
        }
        c.persistent_volume_claims
            .insert(format!("{ns}/{claim}"), pvc(&ns, &claim, volume.as_deref()));
        p.volumes.push(claim_volume(&claim));
        keys.push(p.key().to_string());
        c.upsert_pod(p);
    }
    [keys[0].clone(), keys[1].clone()]
}

fn main() {
    schedscope::allocator::tune();
    let (mut cluster, plain) = match std::env::var("SCHEDSCOPE_SCALE_FILE") {
        Ok(path) => {
            let s = load_snapshot(std::path::Path::new(&path)).expect("the snapshot loads");
            (s.cluster, "default/plain".to_string())
        }
        Err(_) => {
            let spec = SyntheticSpec {
                nodes: env_usize("SCHEDSCOPE_BENCH_NODES", 5_000),
                pods: env_usize("SCHEDSCOPE_BENCH_PODS", 150_000),
                zones: 3,
            };
            let text = synthetic_cluster_json(&spec);
            let s = load_snapshot_str(&text, "synthetic.json").expect("the snapshot loads");
            (s.cluster, PLAIN_POD.to_string())
        }
    };
    let t = Instant::now();
    let volumes = add_volumes(&mut cluster);
    let [with_pvc, with_wffc] = add_subjects(&mut cluster, &plain);
    println!(
        "volume-heavy cluster: {} nodes, {volumes} pods with a CSI volume each \
         ({} PVs, {} VolumeAttachments), built in {:.1} s",
        cluster.nodes().len(),
        cluster.persistent_volumes.len(),
        cluster.volume_attachments.len(),
        t.elapsed().as_secs_f64()
    );
    let config = SchedulerConfig::defaults();
    let parallelism = env_usize("SCHEDSCOPE_BENCH_PARALLELISM", 0);
    let only = std::env::var("SCHEDSCOPE_BENCH_ONLY").unwrap_or_default();
    let runs = env_usize("SCHEDSCOPE_BENCH_EXPLAIN_RUNS", 7);
    let opts = |all_filters| CycleOptions {
        all_filters,
        now: "2026-01-03T00:00:00Z".parse().unwrap(),
        parallelism,
        ..Default::default()
    };
    let line = |label: &str, all_filters: bool, r: &support::ExplainRuns, ratio: &str| {
        println!(
            "explain {label:<12} all_filters={all_filters:<5}: median {:>8.2} ms{ratio} ({})",
            r.median.as_secs_f64() * 1e3,
            r.outcome
        );
    };
    let normal = opts(false);
    // The plain pod is the ratios' base: timed alone first, then in alternation
    // with each claim pod, so a ratio compares runs on the same machine state.
    line(
        "plain",
        false,
        &time_explain(&cluster, &config, &plain, &normal, runs),
        "",
    );
    line(
        "plain",
        true,
        &time_explain(&cluster, &config, &plain, &opts(true), runs),
        "",
    );
    for (label, pod) in [
        ("bound claim", with_pvc.as_str()),
        ("WFFC claim", with_wffc.as_str()),
    ] {
        if format!("{label} all_filters=false").contains(&only) {
            let (_, claim, ratio) =
                time_alternated(&cluster, &config, (&plain, &normal), (pod, &normal), runs);
            let ratio = format!(" = {ratio:.2}x plain (median of {runs} alternated pairs)");
            line(label, false, &claim, &ratio);
        }
        if format!("{label} all_filters=true").contains(&only) {
            line(
                label,
                true,
                &time_explain(&cluster, &config, pod, &opts(true), runs),
                "",
            );
        }
    }
}
