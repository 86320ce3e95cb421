//! Invariants of the copy loop; the expected counts themselves come from the real
//! scheduler (tests/capacity.rs against the oracle's answers).

use serde_json::json;

use super::*;
use crate::engine::SchedulerConfig;
use crate::model::testing::{cluster, pod, simple_node, simple_pod};

fn run(c: &Cluster, p: &Pod, max: usize) -> Capacity {
    let config = SchedulerConfig::defaults();
    capacity(c, &config.profiles, p, max, &CycleOptions::default()).unwrap()
}

#[test]
fn copies_stop_at_max_or_the_first_that_fits_nowhere_and_the_input_is_untouched() {
    let c = cluster(
        vec![simple_node("n1", "4", "8Gi"), simple_node("n2", "2", "8Gi")],
        vec![simple_pod("web", "1", "1Gi", None)],
    );
    let p = c.pod("default/web").unwrap().as_ref().clone();
    let capped = run(&c, &p, 2);
    assert_eq!((capped.count, &capped.stopped_by), (2, &StoppedBy::Max));
    assert!(capped.stop_trace.is_none());
    let all = run(&c, &p, 100);
    assert_eq!(all.stopped_by, StoppedBy::FitError);
    assert_eq!(all.count, all.per_node.values().sum::<usize>());
    let msg = all.stop_fit_error.as_deref().unwrap();
    assert!(
        msg.starts_with("0/2 nodes are available: 2 Insufficient cpu."),
        "{msg}"
    );
    assert!(!msg.contains("preemption"), "PostFilter never runs: {msg}");
    // The caller's model still has no copy.
    assert_eq!(c.pod_count(), 1);
    assert!(c.nodes().iter().all(|n| n.pods.is_empty()));
}

#[test]
fn a_gated_pod_stops_at_pre_enqueue_and_a_missing_profile_is_an_error() {
    let c = cluster(vec![simple_node("n1", "4", "8Gi")], vec![]);
    let gated = pod(json!({"metadata": {"name": "g"}, "spec": {
        "containers": [{"name": "c", "image": "i"}],
        "schedulingGates": [{"name": "example.com/wait"}]}}));
    let cap = run(&c, &gated, 10);
    assert_eq!((cap.count, &cap.stopped_by), (0, &StoppedBy::PreEnqueue));
    let m = cap.stop_message.unwrap();
    assert!(m.starts_with("PreEnqueue SchedulingGates: "), "{m}");
    let mut other = gated.clone();
    other.scheduler_name = "custom".into();
    let config = SchedulerConfig::defaults();
    let err = capacity(&c, &config.profiles, &other, 1, &CycleOptions::default()).unwrap_err();
    assert!(err.to_string().contains("custom"), "{err}");
}

#[test]
fn copies_are_fresh_pending_pods() {
    let mut t = simple_pod("web", "1", "1Gi", Some("n1"));
    t["status"] = json!({"phase": "Running", "nominatedNodeName": "n2"});
    let t = pod(t);
    let c = clone_of(&t, 3);
    assert_eq!(
        (c.name.as_str(), c.namespace.as_str()),
        ("web-clone-3", "default")
    );
    assert!(c.node_name.is_none() && c.nominated_node_name.is_none());
    assert_eq!(c.phase, "Pending");
    assert_ne!(c.uid, t.uid);
}
