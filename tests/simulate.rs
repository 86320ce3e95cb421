//! The step-through scheduler: gang scheduling with a driven clock, waiting pods,
//! preemption's effects, determinism.

use std::time::Duration;

use k8s_openapi::jiff::Timestamp;
use schedscope::engine::SchedulerConfig;
use schedscope::engine::plugins::coscheduling::POD_GROUP_LABEL;
use schedscope::engine::queue::QueueName;
use schedscope::engine::scheduler::{
    Placement, Scheduler, SimEventKind, SimOptions, SimulationResult, StopReason, simulate,
};
use schedscope::model::testing::{cluster, simple_node, simple_pod};
use schedscope::model::{Cluster, PodGroup};
use schedscope::render::simulation::{render_timeline, to_json};
use serde_json::{Value, json};

const START: i64 = 1_767_225_600; // 2026-01-01T00:00:00Z

fn t(secs: i64) -> Timestamp {
    Timestamp::new(START + secs, 0).unwrap()
}

fn opts() -> SimOptions {
    SimOptions {
        start: Some(t(0)),
        ..Default::default()
    }
}

/// Coscheduling enabled as scheduler-plugins documents it. DefaultPreemption is off
/// at PostFilter so that these tests do not depend on it.
fn gang_config(args: Value) -> SchedulerConfig {
    let cfg = json!({
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{
            "schedulerName": "default-scheduler",
            "plugins": {
                "multiPoint": {"enabled": [{"name": "Coscheduling"}]},
                "queueSort": {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "*"}]},
                "postFilter": {"disabled": [{"name": "DefaultPreemption"}]}
            },
            "pluginConfig": [{"name": "Coscheduling", "args": args}]
        }]
    });
    SchedulerConfig::from_str(&cfg.to_string(), "test-config").expect("config builds")
}

fn member(name: &str, cpu: &str) -> Value {
    let mut v = simple_pod(name, cpu, "1Gi", None);
    v["metadata"]["labels"] = json!({ POD_GROUP_LABEL: "gang" });
    v["metadata"]["creationTimestamp"] = json!("2025-12-31T23:00:00Z");
    v
}

/// Nodes of 4 cpu; three members of 3 cpu each (one per node); PodGroup minMember 3.
fn gang_cluster(nodes: usize) -> Cluster {
    let ns: Vec<Value> = (1..=nodes)
        .map(|i| simple_node(&format!("n{i}"), "4", "16Gi"))
        .collect();
    let mut c = cluster(
        ns,
        vec![member("a", "3"), member("b", "3"), member("c", "3")],
    );
    c.pod_groups.insert(
        "default/gang".into(),
        PodGroup {
            namespace: "default".into(),
            name: "gang".into(),
            min_member: 3,
            ..Default::default()
        },
    );
    c
}

fn placement<'r>(r: &'r SimulationResult, pod: &str) -> &'r Placement {
    &r.pods
        .iter()
        .find(|p| p.pod == pod)
        .unwrap_or_else(|| panic!("{pod} not in the result"))
        .placement
}

fn events_of<'r>(r: &'r SimulationResult, pod: &str) -> Vec<&'r SimEventKind> {
    r.events
        .iter()
        .filter(|e| e.pod == pod)
        .map(|e| &e.kind)
        .collect()
}

#[test]
fn gang_of_three_placeable_pods_binds_together() {
    let r = simulate(gang_cluster(3), gang_config(json!({})), opts());
    assert_eq!(r.stop, StopReason::Settled);
    let mut nodes = Vec::new();
    for p in ["default/a", "default/b", "default/c"] {
        match placement(&r, p) {
            Placement::Bound { node } => nodes.push(node.clone()),
            other => panic!("{p}: {other:?}"),
        }
    }
    nodes.sort();
    assert_eq!(nodes, ["n1", "n2", "n3"]);
    // a and b waited at Permit until c completed the quorum; all bound at +0s.
    for p in ["default/a", "default/b"] {
        let evs = events_of(&r, p);
        assert!(
            evs.iter().any(|e| matches!(e, SimEventKind::Waiting { waits, .. }
                if waits.len() == 1 && waits[0].plugin == "Coscheduling" && waits[0].timeout == "1m0s")),
            "{p}: {evs:?}"
        );
        assert!(
            evs.iter()
                .any(|e| matches!(e, SimEventKind::Allowed { .. }))
        );
    }
    assert!(
        !events_of(&r, "default/c")
            .iter()
            .any(|e| matches!(e, SimEventKind::Waiting { .. }))
    );
    let bound_at: Vec<u64> = r
        .events
        .iter()
        .filter(|e| matches!(e.kind, SimEventKind::Bound { .. }))
        .map(|e| e.at_ms)
        .collect();
    assert_eq!(bound_at, [0, 0, 0]);
    // c binds first (it was allowed at Permit), then the waiting pods resume.
    let order: Vec<&str> = r
        .events
        .iter()
        .filter(|e| matches!(e.kind, SimEventKind::Bound { .. }))
        .map(|e| e.pod.as_str())
        .collect();
    assert_eq!(order, ["default/c", "default/a", "default/b"]);
    // Each attempt's trace has its real binding phases.
    let a = r.attempts.iter().find(|a| a.pod == "default/a").unwrap();
    let points: Vec<&str> = a
        .trace
        .as_ref()
        .unwrap()
        .binding
        .iter()
        .map(|p| p.point.as_str())
        .collect();
    assert_eq!(points, ["Reserve", "Permit", "PreBind", "Bind", "PostBind"]);
}

/// Two nodes: the third member does not fit. With a 50 % reject threshold the
/// PostFilter gap (1/3) is tolerated, so a and b keep waiting until the timeout.
fn two_placeable() -> Scheduler {
    Scheduler::new(
        gang_cluster(2),
        gang_config(json!({"permitWaitingTimeSeconds": 10, "podGroupRejectPercentage": 50})),
        opts(),
    )
}

#[test]
fn gang_short_of_a_node_waits_times_out_and_frees_resources() {
    let mut sim = two_placeable();
    sim.run_until_idle();
    let waiting = sim.waiting();
    let keys: Vec<&str> = waiting.iter().map(|w| w.pod.as_str()).collect();
    assert_eq!(keys, ["default/a", "default/b"]);
    assert_eq!(waiting[0].next_deadline(), Some(t(10)));
    assert_eq!(waiting[0].remaining(t(4)), Some(Duration::from_secs(6)));
    // Assumed: the model counts their cpu.
    let used: i64 = sim
        .cluster()
        .nodes()
        .iter()
        .map(|n| n.requested.milli_cpu)
        .sum();
    assert_eq!(used, 6000);
    assert_eq!(
        sim.queue_position("default/c"),
        Some(QueueName::Unschedulable)
    );
    let r = sim.result();
    match placement(&r, "default/c") {
        Placement::Unschedulable { message, .. } => {
            // DynamicResources' PostFilter message; Coscheduling tolerates the gap
            // (its Unschedulable has no message).
            assert_eq!(
                message,
                "0/2 nodes are available: 2 Insufficient cpu. no new claims to deallocate"
            )
        }
        other => panic!("{other:?}"),
    }

    // Just before the deadline nothing happens.
    sim.advance_to(t(9));
    assert_eq!(sim.waiting().len(), 2);

    sim.advance_to(t(10));
    assert!(sim.waiting().is_empty());
    let r = sim.result();
    for p in ["default/a", "default/b"] {
        let evs = events_of(&r, p);
        assert!(
            evs.iter().any(
                |e| matches!(e, SimEventKind::Rejected { plugin, message, .. }
                if plugin == "Coscheduling"
                && message == "rejected due to timeout after waiting 10s at plugin Coscheduling")
            ),
            "{p}: {evs:?}"
        );
        assert!(
            evs.iter()
                .any(|e| matches!(e, SimEventKind::Unreserved { .. }))
        );
        assert!(evs.iter().any(|e| matches!(e, SimEventKind::Failed { message, .. }
            if message == "0/1 nodes are available: 1 rejected due to timeout after waiting 10s at plugin Coscheduling.")));
        assert!(matches!(placement(&r, p), Placement::Unschedulable { .. }));
    }
    // Resources are free again.
    let used: i64 = sim
        .cluster()
        .nodes()
        .iter()
        .map(|n| n.requested.milli_cpu)
        .sum();
    assert_eq!(used, 0);
    assert!(sim.cluster().pods().all(|p| !p.is_bound()));
    // The freed cpu concerns NodeResourcesFit: c is retried (it was parked).
    assert!(
        events_of(&r, "default/c")
            .iter()
            .any(|e| matches!(e, SimEventKind::Moved { .. }))
    );
}

#[test]
fn allow_before_the_timeout_binds_the_pod() {
    let mut sim = two_placeable();
    sim.run_until_idle();
    sim.advance(Duration::from_secs(3));
    assert!(sim.allow("default/a", Some("Coscheduling")));
    let r = sim.result();
    assert!(matches!(
        placement(&r, "default/a"),
        Placement::Bound { .. }
    ));
    let bound = r
        .events
        .iter()
        .find(|e| e.pod == "default/a" && matches!(e.kind, SimEventKind::Bound { .. }))
        .unwrap();
    assert_eq!(bound.at_ms, 3000);
    // b still waits; allowing a again is a no-op.
    let keys: Vec<String> = sim.waiting().into_iter().map(|w| w.pod).collect();
    assert_eq!(keys, ["default/b"]);
    assert!(!sim.allow("default/a", None));
    // b times out at +10s; a stays bound.
    sim.advance_to(t(10));
    let r = sim.result();
    assert!(matches!(
        placement(&r, "default/a"),
        Placement::Bound { .. }
    ));
    assert!(matches!(
        placement(&r, "default/b"),
        Placement::Unschedulable { .. }
    ));
}

#[test]
fn reject_of_one_member_rejects_the_rest_in_unreserve() {
    let mut sim = two_placeable();
    sim.run_until_idle();
    assert!(sim.reject("default/a", "", "removed"));
    let r = sim.result();
    assert!(
        events_of(&r, "default/a")
            .iter()
            .any(|e| matches!(e, SimEventKind::Rejected { message, .. } if message == "removed"))
    );
    assert!(
        events_of(&r, "default/b").iter().any(
            |e| matches!(e, SimEventKind::Rejected { plugin, message, .. }
                if plugin == "Coscheduling" && message == "rejection in Unreserve")
        ),
        "{:?}",
        events_of(&r, "default/b")
    );
    assert!(sim.waiting().is_empty());
    // Allow after the rejection: no-op.
    assert!(!sim.allow("default/b", None));
}

#[test]
fn default_threshold_rejects_waiting_members_in_post_filter() {
    let mut sim = Scheduler::new(gang_cluster(2), gang_config(json!({})), opts());
    sim.run_until_idle();
    let r = sim.result();
    let c_failed = events_of(&r, "default/c")
        .into_iter()
        .find_map(|e| match e {
            SimEventKind::Failed { message, .. } => Some(message.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        c_failed,
        "0/2 nodes are available: 2 Insufficient cpu. no new claims to deallocate, PodGroup default/gang gets rejected due to Pod c is unschedulable even after PostFilter"
    );
    for p in ["default/a", "default/b"] {
        assert!(
            events_of(&r, p)
                .iter()
                .any(|e| matches!(e, SimEventKind::Rejected { message, .. }
                if message == "optimistic rejection in PostFilter")),
            "{p}"
        );
    }
}

#[test]
fn a_gang_that_never_fits_stops_at_a_limit() {
    let mut o = opts();
    o.max_attempts = Some(40);
    o.keep_traces = false;
    let r = simulate(
        gang_cluster(2),
        gang_config(json!({"permitWaitingTimeSeconds": 10, "podGroupRejectPercentage": 50})),
        o,
    );
    assert!(
        matches!(
            r.stop,
            StopReason::AttemptLimit { .. } | StopReason::TimeLimit { .. }
        ),
        "{:?}",
        r.stop
    );
    assert!(r.attempts.iter().all(|a| a.trace.is_none()));
}

#[test]
fn plain_pods_fill_the_cluster_and_the_rest_is_unschedulable() {
    let c = cluster(
        vec![
            simple_node("n1", "4", "16Gi"),
            simple_node("n2", "4", "16Gi"),
        ],
        vec![
            simple_pod("p1", "3", "1Gi", None),
            simple_pod("p2", "3", "1Gi", None),
            simple_pod("p3", "3", "1Gi", None),
        ],
    );
    let r = simulate(c, SchedulerConfig::defaults(), opts());
    assert_eq!(r.stop, StopReason::Settled);
    let bound = r
        .pods
        .iter()
        .filter(|p| matches!(p.placement, Placement::Bound { .. }))
        .count();
    assert_eq!(bound, 2);
    // Queued in key order; the next cycle sees the assumed pods: p3 finds no room.
    match placement(&r, "default/p3") {
        Placement::Unschedulable { message, .. } => {
            assert!(
                message.starts_with("0/2 nodes are available: 2 Insufficient cpu."),
                "{message}"
            )
        }
        other => panic!("{other:?}"),
    }
    let text = render_timeline(&r);
    assert!(text.contains("default/p1"), "{text}");
    assert!(text.contains("2 pods of 3 bound"), "{text}");
    let j = to_json(&r, false);
    assert_eq!(j["pods"]["default/p1"]["kind"], "bound");
    assert_eq!(j["pods"]["default/p3"]["kind"], "unschedulable");
    assert_eq!(j["stop"]["kind"], "settled");
    assert!(
        j["events"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["at"] == "+0s")
    );
}

#[test]
fn gated_pods_stay_gated() {
    let mut g = simple_pod("gated", "1", "1Gi", None);
    g["spec"]["schedulingGates"] = json!([{"name": "example.com/wait"}]);
    let c = cluster(vec![simple_node("n1", "4", "16Gi")], vec![g]);
    let r = simulate(c, SchedulerConfig::defaults(), opts());
    assert_eq!(r.stop, StopReason::Settled);
    assert_eq!(
        placement(&r, "default/gated"),
        &Placement::Gated {
            plugin: "SchedulingGates".into(),
            message: "waiting for scheduling gates: [example.com/wait]".into()
        }
    );
    assert!(r.attempts.is_empty());
}

fn load_yaml(path: &str) -> Cluster {
    schedscope::source::load_snapshot(std::path::Path::new(path))
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .cluster
}

#[test]
fn gang_demo_example_behaves_as_documented() {
    let config = SchedulerConfig::from_str(
        &std::fs::read_to_string("examples/coscheduling-config.yaml").unwrap(),
        "examples/coscheduling-config.yaml",
    )
    .expect("example config builds");
    let mut sim = Scheduler::new(
        load_yaml("examples/gang-demo.yaml"),
        config.clone(),
        SimOptions::default(),
    );
    sim.run_until_idle();
    let waiting: Vec<(String, Option<Duration>)> = sim
        .waiting()
        .into_iter()
        .map(|w| (w.pod.clone(), w.remaining(sim.now())))
        .collect();
    assert_eq!(
        waiting,
        [
            (
                "training/bert-worker-0".to_string(),
                Some(Duration::from_secs(90))
            ),
            (
                "training/bert-worker-1".to_string(),
                Some(Duration::from_secs(90))
            )
        ]
    );
    let r = simulate(
        load_yaml("examples/gang-demo.yaml"),
        config,
        SimOptions::default(),
    );
    assert_eq!(r.stop, StopReason::Settled);
    assert_eq!(r.end_ms, 90_000);
    let mut gpu_nodes = Vec::new();
    for w in 0..3 {
        match placement(&r, &format!("training/resnet-worker-{w}")) {
            Placement::Bound { node } => gpu_nodes.push(node.clone()),
            other => panic!("resnet-worker-{w}: {other:?}"),
        }
    }
    gpu_nodes.sort();
    assert_eq!(gpu_nodes, ["gpu-node-1", "gpu-node-2", "gpu-node-3"]);
    for w in 0..2 {
        match placement(&r, &format!("training/bert-worker-{w}")) {
            Placement::Unschedulable { message, .. } => assert_eq!(
                message,
                "0/1 nodes are available: 1 rejected due to timeout after waiting 1m30s at plugin Coscheduling."
            ),
            other => panic!("bert-worker-{w}: {other:?}"),
        }
    }
    match placement(&r, "training/bert-worker-2") {
        Placement::Unschedulable { message, .. } => assert!(
            message.starts_with(
                "0/4 nodes are available: 4 node(s) didn't match Pod's node affinity/selector."
            ),
            "{message}"
        ),
        other => panic!("{other:?}"),
    }
    let text = render_timeline(&r);
    assert!(text.contains("waiting at Permit on gpu-node-"), "{text}");
}

#[test]
fn demo_cluster_simulation_is_deterministic_and_complete() {
    let c = load_yaml("examples/demo-cluster.yaml");
    let a = simulate(
        c.clone(),
        SchedulerConfig::defaults(),
        SimOptions::default(),
    );
    let b = simulate(c, SchedulerConfig::defaults(), SimOptions::default());
    assert_eq!(render_timeline(&a), render_timeline(&b));
    assert_eq!(to_json(&a, true), to_json(&b, true));
    assert_eq!(a.stop, StopReason::Settled);
    for p in &a.pods {
        match &p.placement {
            Placement::Bound { .. } | Placement::Gated { .. } | Placement::Evicted { .. } => {}
            Placement::Unschedulable { message, .. } => {
                assert!(!message.is_empty(), "{}: no reason", p.pod)
            }
            other => panic!("{}: {other:?}", p.pod),
        }
    }
}

#[test]
fn node_search_stops_at_num_nodes_to_find_and_rotates() {
    // 200 nodes: numNodesToFind = max(200·(50 − 200/125)/100, 100) = 100.
    let nodes: Vec<Value> = (0..200)
        .map(|i| simple_node(&format!("n{i:03}"), "4", "16Gi"))
        .collect();
    let c = cluster(
        nodes,
        vec![
            simple_pod("p1", "1", "1Gi", None),
            simple_pod("p2", "1", "1Gi", None),
        ],
    );
    let r = simulate(c, SchedulerConfig::defaults(), opts());
    let t1 = r.attempts[0].trace.as_ref().unwrap();
    let t2 = r.attempts[1].trace.as_ref().unwrap();
    assert_eq!(t1.num_nodes_to_find, 100);
    assert_eq!(t1.feasible.len(), 100);
    assert_eq!(t1.filter.len(), 100);
    assert_eq!(t1.feasible.first().map(String::as_str), Some("n000"));
    // The second search starts where the first stopped.
    assert_eq!(t2.feasible.first().map(String::as_str), Some("n100"));
    assert_eq!(t2.feasible.last().map(String::as_str), Some("n199"));
}

/// A test Permit plugin: pods labelled `wait: "yes"` wait 60 s.
struct WaitForLabel;
impl schedscope::engine::framework::Plugin for WaitForLabel {
    fn name(&self) -> &str {
        "WaitForLabel"
    }
    fn as_permit(&self) -> Option<&dyn schedscope::engine::framework::PermitPlugin> {
        Some(self)
    }
}
impl schedscope::engine::framework::PermitPlugin for WaitForLabel {
    fn permit(
        &self,
        _cx: &schedscope::engine::Ctx,
        _state: &mut schedscope::engine::CycleState,
        pod: &schedscope::model::Pod,
        _node: &str,
    ) -> (schedscope::engine::Status, Duration) {
        if pod.labels.get("wait").map(|v| v.as_str()) == Some("yes") {
            (
                schedscope::engine::Status::new(
                    schedscope::engine::Code::Wait,
                    Vec::<String>::new(),
                ),
                Duration::from_secs(60),
            )
        } else {
            (schedscope::engine::Status::success(), Duration::ZERO)
        }
    }
}

#[test]
fn preempting_a_waiting_pod_rejects_it_and_the_preemptor_binds() {
    let mut config = SchedulerConfig::defaults();
    config.profiles[0]
        .permit
        .push(std::sync::Arc::new(WaitForLabel));
    let mut w = simple_pod("w", "3", "1Gi", None);
    w["metadata"]["labels"] = json!({"wait": "yes"});
    let c = cluster(vec![simple_node("n1", "4", "16Gi")], vec![w]);
    let mut sim = Scheduler::new(c, config, opts());
    sim.run_until_idle();
    assert_eq!(sim.waiting().len(), 1);

    let mut h = simple_pod("h", "3", "1Gi", None);
    h["spec"]["priority"] = json!(100);
    sim.add_pod(schedscope::model::testing::pod(h)).unwrap();
    assert!(
        sim.add_pod(schedscope::model::testing::pod(simple_pod(
            "h", "1", "1Gi", None
        )))
        .is_err()
    );
    sim.run_until_idle();

    let r = sim.result();
    let w_events = events_of(&r, "default/w");
    assert!(
        w_events.iter().any(
            |e| matches!(e, SimEventKind::Rejected { plugin, message, .. }
            if plugin == "DefaultPreemption" && message == "preempted")
        ),
        "{w_events:?}"
    );
    assert!(
        events_of(&r, "default/h")
            .iter()
            .any(|e| matches!(e, SimEventKind::Nominated { node, victims } if node == "n1" && victims == &["default/w".to_string()]))
    );
    assert_eq!(
        placement(&r, "default/h"),
        &Placement::Bound { node: "n1".into() }
    );
    // The waiting victim was not deleted: it is back in the queue, unschedulable.
    match placement(&r, "default/w") {
        Placement::Unschedulable { message, .. } => {
            assert!(
                message.starts_with("0/1 nodes are available: 1 Insufficient cpu."),
                "{message}"
            )
        }
        other => panic!("{other:?}"),
    }
    assert!(sim.waiting().is_empty());
}

/// DynamicResources holds the devices it allocated from Reserve on, as upstream's
/// in-flight claims do: a gang member waiting at Permit keeps its GPU from the next
/// member, and gives it back when it is rejected.
#[test]
fn a_pod_waiting_at_permit_holds_its_devices() {
    let member = |name: &str| {
        format!(
            r#"---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {{name: {name}-gpu, namespace: default}}
spec: {{devices: {{requests: [{{name: gpu, exactly: {{deviceClassName: gpu.example.com}}}}]}}}}
---
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  namespace: default
  uid: uid-{name}
  creationTimestamp: "2025-12-31T23:00:00Z"
  labels: {{{POD_GROUP_LABEL}: gang}}
spec:
  containers: [{{name: c, image: x, resources: {{requests: {{cpu: "1"}}, claims: [{{name: gpu}}]}}}}]
  resourceClaims: [{{name: gpu, resourceClaimName: {name}-gpu}}]
"#
        )
    };
    let text = format!(
        r#"apiVersion: v1
kind: Node
metadata: {{name: n1, labels: {{kubernetes.io/hostname: n1}}}}
status: {{allocatable: {{cpu: "4", memory: 16Gi, pods: "110"}}}}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {{name: gpu.example.com}}
spec: {{selectors: [{{cel: {{expression: 'device.driver == "gpu.example.com"'}}}}]}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {{name: n1-gpus}}
spec:
  driver: gpu.example.com
  nodeName: n1
  pool: {{name: n1, generation: 1, resourceSliceCount: 1}}
  devices: [{{name: gpu-0}}]
---
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {{name: gang, namespace: default}}
spec: {{minMember: 2}}
{}{}"#,
        member("a"),
        member("b")
    );
    let cluster = schedscope::source::load_snapshot_str(&text, "dra-gang.yaml")
        .expect("loads")
        .cluster;
    let mut sim = Scheduler::new(
        cluster,
        gang_config(json!({"permitWaitingTimeSeconds": 10, "podGroupRejectPercentage": 50})),
        opts(),
    );
    sim.run_until_idle();
    let keys: Vec<String> = sim.waiting().into_iter().map(|w| w.pod).collect();
    assert_eq!(keys, ["default/a"]);
    let allocated = |sim: &Scheduler, claim: &str| {
        sim.cluster().resource_claims()[claim]
            .status
            .as_ref()
            .and_then(|s| s.allocation.as_ref())
            .is_some()
    };
    assert!(
        allocated(&sim, "default/a-gpu"),
        "a holds gpu-0 while it waits"
    );
    assert!(!allocated(&sim, "default/b-gpu"));
    let r = sim.result();
    match placement(&r, "default/b") {
        Placement::Unschedulable { message, .. } => {
            assert!(message.contains("cannot allocate all claims"), "{message}")
        }
        other => panic!("b must not get the GPU a holds: {other:?}"),
    }
    // a times out, is unreserved, and its GPU is free again.
    sim.advance_to(t(10));
    assert!(!allocated(&sim, "default/a-gpu"), "released at Unreserve");
}

/// Over 100 nodes the search stops after `numFeasibleNodesToFind` feasible nodes and
/// starts where the previous one stopped: Filter and Score in parallel batches must
/// cut exactly where the sequential search does (same attempts, verdicts, scores,
/// placements, byte for byte).
#[test]
fn parallel_search_cuts_where_the_sequential_one_does() {
    use schedscope::testing::synthetic::{SyntheticSpec, synthetic_cluster_with_pending_json};
    let spec = SyntheticSpec {
        nodes: 300,
        pods: 3_000,
        zones: 3,
    };
    let text = synthetic_cluster_with_pending_json(&spec, 60);
    let snap = schedscope::source::load_snapshot_str(&text, "synthetic.json").expect("loads");
    let sim = |parallelism: usize, min_nodes_per_worker: usize| {
        simulate(
            snap.cluster.clone(),
            SchedulerConfig::defaults(),
            SimOptions {
                parallelism,
                min_nodes_per_worker,
                ..opts()
            },
        )
    };
    let run =
        |parallelism, min| serde_json::to_string(&to_json(&sim(parallelism, min), true)).unwrap();
    let r = sim(1, 1);
    // The case under test happened: searches stopped before the last node, and pods
    // were bound.
    assert!(
        r.attempts
            .iter()
            .filter_map(|a| a.trace.as_ref())
            .any(|t| !t.filter.is_empty() && t.filter.len() < spec.nodes),
        "no partial search"
    );
    assert!(
        r.pods
            .iter()
            .any(|p| matches!(p.placement, Placement::Bound { .. })),
        "nothing bound"
    );
    let sequential = serde_json::to_string(&to_json(&r, true)).unwrap();
    for (n, min) in [(2, 1), (3, 1), (7, 1), (2, 64)] {
        assert!(
            run(n, min) == sequential,
            "simulation differs with parallelism {n} (min {min} nodes per worker)"
        );
    }
}
