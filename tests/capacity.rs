//! Capacity counts against the real scheduler: each `tests/capacity/<name>/` holds a
//! snapshot, the pod to copy (`pod.txt`) and the oracle's answer (`oracle.json`, made
//! by kube-scheduler v1.35's framework; see tests/capacity/README.md). The count must
//! match; the stop reason, FitError text and per-node split must match wherever the
//! oracle found them stable over its runs.

use std::path::Path;

use schedscope::engine::SchedulerConfig;
use schedscope::engine::cycle::CycleOptions;
use schedscope::source::load_snapshot;
use schedscope_engine::capacity::{Capacity, StoppedBy, capacity};
use serde_json::Value;

const SCENARIOS: &[&str] = &[
    "resources",
    "host-ports",
    "taints",
    "anti-affinity-hostname",
    "topology-spread",
    "shared-pvc",
    "gpu",
    "scheduling-gates",
    "preemption-only",
];

fn ours(dir: &Path, max: usize) -> Capacity {
    let snap = load_snapshot(&dir.join("snapshot.yaml")).expect("snapshot loads");
    let key = std::fs::read_to_string(dir.join("pod.txt")).unwrap();
    let pod = snap
        .cluster
        .pod(key.trim())
        .expect("pod in snapshot")
        .as_ref()
        .clone();
    let config = SchedulerConfig::defaults();
    let opts = CycleOptions {
        now: "2026-01-01T00:00:00Z".parse().unwrap(),
        ..Default::default()
    };
    capacity(&snap.cluster, &config.profiles, &pod, max, &opts).expect("capacity")
}

fn stopped_by(s: &StoppedBy) -> &'static str {
    match s {
        StoppedBy::FitError => "fit_error",
        StoppedBy::Max => "max",
        StoppedBy::PreEnqueue => "preenqueue",
        StoppedBy::Reserve => "reserve",
        StoppedBy::Error => "error",
    }
}

fn differences(name: &str) -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/capacity")
        .join(name);
    let oracle: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("oracle.json")).unwrap()).unwrap();
    let max = oracle["max"].as_u64().unwrap() as usize;
    let got = ours(&dir, max);
    let mut diffs = Vec::new();
    assert!(
        oracle["all_agree"].as_bool().unwrap(),
        "{name}: the oracle's runs disagree"
    );
    if oracle["count"].as_u64() != Some(got.count as u64) {
        diffs.push(format!(
            "count: oracle {} ours {}",
            oracle["count"], got.count
        ));
    }
    if let Some(s) = oracle["stopped_by"].as_str()
        && s != stopped_by(&got.stopped_by)
    {
        diffs.push(format!("stopped_by: oracle {s} ours {:?}", got.stopped_by));
    }
    if let Some(m) = oracle["stop_fit_error"].as_str()
        && Some(m) != got.stop_fit_error.as_deref()
    {
        diffs.push(format!(
            "stop_fit_error:\n  oracle {m}\n  ours   {:?}",
            got.stop_fit_error
        ));
    }
    // The stop message of a PreEnqueue/Reserve/error stop, when every run agrees.
    let messages: Vec<&Value> = oracle["runs_detail"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["stop_message"])
        .collect();
    if let Some(m) = messages[0].as_str()
        && messages.iter().all(|x| x.as_str() == Some(m))
        && Some(m) != got.stop_message.as_deref()
    {
        diffs.push(format!(
            "stop_message:\n  oracle {m}\n  ours   {:?}",
            got.stop_message
        ));
    }
    if let Some(per_node) = oracle["per_node"].as_object() {
        let want: std::collections::BTreeMap<String, usize> = per_node
            .iter()
            .map(|(k, v)| (k.clone(), v.as_u64().unwrap() as usize))
            .collect();
        if want != got.per_node {
            diffs.push(format!("per_node: oracle {want:?} ours {:?}", got.per_node));
        }
    }
    diffs
}

#[test]
fn capacity_counts_match_the_real_scheduler() {
    let mut failures = Vec::new();
    for name in SCENARIOS {
        let d = differences(name);
        if !d.is_empty() {
            failures.push(format!("{name}:\n{}", d.join("\n")));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn every_scenario_folder_is_checked() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/capacity");
    let mut found: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    found.sort();
    let mut listed: Vec<String> = SCENARIOS.iter().map(|s| s.to_string()).collect();
    listed.sort();
    assert_eq!(found, listed);
}
