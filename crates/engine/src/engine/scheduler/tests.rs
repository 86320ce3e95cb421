use super::*;
use crate::engine::plugins::coscheduling::POD_GROUP_LABEL;
use crate::engine::queue::ClusterEvent;
use crate::engine::trace::Outcome;
use crate::model::PodGroup;
use crate::model::testing::{cluster, node, pod, simple_node, simple_pod};
use serde_json::{Value, json};

fn t(s: i64) -> Timestamp {
    Timestamp::new(1_767_225_600 + s, 0).unwrap()
}

fn opts() -> SimOptions {
    SimOptions {
        start: Some(t(0)),
        ..Default::default()
    }
}

fn sim(nodes: Vec<Value>, pods: Vec<Value>) -> Scheduler {
    Scheduler::new(cluster(nodes, pods), SchedulerConfig::defaults(), opts())
}

#[test]
fn taken_events_leave_the_log_and_numbering_goes_on() {
    let mut s = sim(
        vec![simple_node("n1", "4", "8Gi")],
        vec![
            simple_pod("a", "1", "1Gi", None),
            simple_pod("b", "1", "1Gi", None),
        ],
    );
    assert!(s.schedule_one());
    let first = s.take_events();
    assert!(!first.is_empty());
    assert!(s.events().is_empty());
    assert!(s.schedule_one());
    let next = s.events();
    assert!(!next.is_empty());
    let last = first.last().expect("events").seq;
    assert_eq!(next[0].seq, last + 1, "seq numbers go on");
    assert!(next.iter().all(|e| e.pod == "default/b"), "{next:?}");
}

fn placement(sim: &Scheduler, key: &str) -> Placement {
    sim.result()
        .pods
        .into_iter()
        .find(|p| p.pod == key)
        .unwrap_or_else(|| panic!("{key} not in the result"))
        .placement
}

fn moves(sim: &Scheduler, key: &str) -> Vec<(QueueName, ClusterEvent)> {
    sim.events()
        .iter()
        .filter(|e| e.pod == key)
        .filter_map(|e| match e.kind {
            SimEventKind::Moved { to, event } => Some((to, event)),
            _ => None,
        })
        .collect()
}

fn requested_cpu(sim: &Scheduler, node: &str) -> i64 {
    sim.cluster().node(node).unwrap().requested.milli_cpu
}

fn tainted(name: &str) -> Value {
    let mut n = simple_node(name, "4", "8Gi");
    n["spec"] = json!({"taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}]});
    n
}

fn bound(name: &str, cpu: &str, node: &str) -> Pod {
    pod(simple_pod(name, cpu, "1Gi", Some(node)))
}

/// The pod was attempted once and parked with `rejector` among its rejectors.
fn assert_parked(sim: &Scheduler, key: &str, rejector: &str) {
    assert_eq!(
        sim.queue_position(key),
        Some(QueueName::Unschedulable),
        "{key}"
    );
    let uid = &sim.cluster().pod(key).unwrap().uid;
    let qp = sim.queue.parked().find(|q| q.uid() == uid).unwrap();
    assert!(qp.unschedulable_plugins.contains(rejector), "{qp:?}");
}

#[test]
fn a_bigger_node_added_moves_a_pod_rejected_for_resources() {
    let mut s = sim(
        vec![simple_node("small", "2", "8Gi")],
        vec![simple_pod("p", "3", "1Gi", None)],
    );
    s.run_until_idle();
    assert_parked(&s, "default/p", "NodeResourcesFit");
    s.upsert_node(node(simple_node("big", "4", "8Gi")));
    assert_eq!(
        moves(&s, "default/p"),
        [(QueueName::Backoff, ClusterEvent::NodeAdd)]
    );
    s.run_until_idle();
    assert_eq!(
        placement(&s, "default/p"),
        Placement::Bound { node: "big".into() }
    );
}

#[test]
fn a_taint_removed_by_a_node_update_moves_the_pod() {
    let mut s = sim(vec![tainted("n1")], vec![simple_pod("p", "1", "1Gi", None)]);
    s.run_until_idle();
    assert_parked(&s, "default/p", "TaintToleration");
    // Re-listing the same node is no event.
    s.upsert_node(node(tainted("n1")));
    assert!(moves(&s, "default/p").is_empty());
    s.upsert_node(node(simple_node("n1", "4", "8Gi")));
    assert_eq!(
        moves(&s, "default/p"),
        [(QueueName::Backoff, ClusterEvent::NodeUpdate)]
    );
    s.run_until_idle();
    assert_eq!(
        placement(&s, "default/p"),
        Placement::Bound { node: "n1".into() }
    );
}

#[test]
fn events_the_rejectors_do_not_register_move_nothing() {
    type Act = fn(&mut Scheduler);
    let image_only: Act = |s| {
        let mut n = simple_node("n1", "2", "8Gi");
        n["status"]["images"] = json!([{"names": ["img:1"], "sizeBytes": 10}]);
        s.upsert_node(node(n));
    };
    let node_deleted: Act = |s| {
        assert!(s.delete_node("other"));
    };
    let service_added: Act = |s| {
        let mut c = Cluster::new();
        c.services.insert(
            "default/svc".into(),
            serde_json::from_value(json!({"metadata": {"name": "svc"}})).unwrap(),
        );
        assert!(s.sync_objects(&c));
    };
    let pvc_added: Act = |s| {
        let mut c = Cluster::new();
        c.persistent_volume_claims.insert(
            "default/c".into(),
            serde_json::from_value(json!({"metadata": {"name": "c"}})).unwrap(),
        );
        assert!(s.sync_objects(&c));
    };
    let bound_pod_added: Act = |s| s.add_pod(bound("q", "1", "other")).unwrap();
    let bound_pod_deleted: Act = |s| assert!(s.remove_bound_pod("default/r"));
    // (what rejects p, what happens, rejector)
    let cases: [(&str, Act, &str); 7] = [
        // No plugin registers image changes: no event at all.
        ("resources", image_only, "NodeResourcesFit"),
        // Only PodTopologySpread registers Node/Delete.
        ("resources", node_deleted, "NodeResourcesFit"),
        // Nothing registers Services.
        ("resources", service_added, "NodeResourcesFit"),
        ("resources", pvc_added, "NodeResourcesFit"),
        // NodeResourcesFit registers Pod/Delete, not Add.
        ("resources", bound_pod_added, "NodeResourcesFit"),
        ("taint", bound_pod_deleted, "TaintToleration"),
        ("taint", pvc_added, "TaintToleration"),
    ];
    for (i, (kind, act, rejector)) in cases.into_iter().enumerate() {
        let n1 = match kind {
            "taint" => {
                let mut n = tainted("n1");
                n["status"]["allocatable"]["cpu"] = json!("2");
                n
            }
            _ => simple_node("n1", "2", "8Gi"),
        };
        let mut other = tainted("other");
        other["metadata"]["labels"] = json!({"x": "y"});
        let p_cpu = if kind == "resources" { "3" } else { "1" };
        let mut s = sim(
            vec![n1, other],
            vec![
                simple_pod("p", p_cpu, "1Gi", None),
                simple_pod("r", "1", "1Gi", Some("other")),
            ],
        );
        s.run_until_idle();
        assert_parked(&s, "default/p", rejector);
        act(&mut s);
        assert!(moves(&s, "default/p").is_empty(), "case {i}: {kind}");
        assert_eq!(
            s.queue_position("default/p"),
            Some(QueueName::Unschedulable),
            "case {i}"
        );
    }
}

#[test]
fn removing_the_gates_lets_the_pod_schedule() {
    let mut g = simple_pod("g", "1", "1Gi", None);
    g["spec"]["schedulingGates"] = json!([{"name": "a"}, {"name": "b"}]);
    let mut s = sim(vec![simple_node("n1", "4", "8Gi")], vec![g.clone()]);
    s.run_until_idle();
    assert_eq!(s.queue_position("default/g"), Some(QueueName::Gated));

    // One gate left: still gated, with the current message.
    g["spec"]["schedulingGates"] = json!([{"name": "b"}]);
    assert!(s.update_pod(pod(g.clone())));
    assert_eq!(
        placement(&s, "default/g"),
        Placement::Gated {
            plugin: "SchedulingGates".into(),
            message: "waiting for scheduling gates: [b]".into()
        }
    );
    assert!(moves(&s, "default/g").is_empty());

    g["spec"]["schedulingGates"] = json!([]);
    assert!(s.update_pod(pod(g)));
    assert_eq!(
        moves(&s, "default/g"),
        [(QueueName::Active, ClusterEvent::UnscheduledPodUpdate)]
    );
    s.run_until_idle();
    assert_eq!(
        placement(&s, "default/g"),
        Placement::Bound { node: "n1".into() }
    );
}

#[test]
fn a_parked_pod_moves_on_its_own_update_only_when_a_rejector_cares() {
    let mut s = sim(vec![tainted("n1")], vec![simple_pod("p", "1", "1Gi", None)]);
    s.run_until_idle();
    assert_parked(&s, "default/p", "TaintToleration");
    let mut p = simple_pod("p", "1", "1Gi", None);
    p["metadata"]["labels"] = json!({"a": "b"});
    assert!(s.update_pod(pod(p.clone())));
    assert!(moves(&s, "default/p").is_empty());
    assert_eq!(
        s.cluster()
            .pod("default/p")
            .unwrap()
            .labels
            .get("a")
            .map(|v| v.as_str()),
        Some("b")
    );
    p["spec"]["tolerations"] = json!([{"key": "k", "operator": "Exists"}]);
    assert!(s.update_pod(pod(p)));
    assert_eq!(
        moves(&s, "default/p"),
        [(QueueName::Backoff, ClusterEvent::UnscheduledPodUpdate)]
    );
    s.advance(Duration::from_secs(1));
    s.run_until_idle();
    assert_eq!(
        placement(&s, "default/p"),
        Placement::Bound { node: "n1".into() }
    );
    // Unknown pods are not updated.
    assert!(!s.update_pod(pod(simple_pod("nope", "1", "1Gi", None))));
}

#[test]
fn bound_elsewhere_leaves_the_queue_and_takes_room() {
    // w waits for room; p is bound by someone else while queued.
    let mut s = sim(
        vec![simple_node("n1", "4", "8Gi")],
        vec![
            simple_pod("big", "4", "1Gi", Some("n1")),
            simple_pod("p", "1", "1Gi", None),
        ],
    );
    s.run_until_idle();
    assert_parked(&s, "default/p", "NodeResourcesFit");
    assert!(s.remove_bound_pod("default/big"));
    assert_eq!(s.queue_position("default/p"), Some(QueueName::Backoff));
    assert!(s.update_pod(bound("p", "1", "n1")));
    assert_eq!(s.queue_position("default/p"), None);
    assert_eq!(requested_cpu(&s, "n1"), 1000);
    let attempts = s.attempts().len();
    s.advance(Duration::from_secs(10));
    s.run_until_idle();
    assert_eq!(s.attempts().len(), attempts);
    assert_eq!(
        placement(&s, "default/p"),
        Placement::Bound { node: "n1".into() }
    );
    // A label update of a bound pod is an assigned-pod update.
    let mut b = simple_pod("p", "1", "1Gi", Some("n1"));
    b["metadata"]["labels"] = json!({"app": "x"});
    s.add_pod(pod(simple_pod("q", "8", "1Gi", None))).unwrap();
    s.run_until_idle();
    assert_parked(&s, "default/q", "NodeResourcesFit");
    assert!(s.update_pod(pod(b)));
    assert_eq!(
        moves(&s, "default/q"),
        [(QueueName::Backoff, ClusterEvent::AssignedPodUpdate)]
    );
    // Finished: it leaves its node.
    let mut done = simple_pod("p", "1", "1Gi", Some("n1"));
    done["status"] = json!({"phase": "Succeeded"});
    assert!(s.update_pod(pod(done)));
    assert!(s.cluster().pod("default/p").is_none());
    assert_eq!(requested_cpu(&s, "n1"), 0);
}

/// Coscheduling as scheduler-plugins documents it, PostFilter preemption off.
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

fn member(name: &str) -> Value {
    let mut v = simple_pod(name, "3", "1Gi", None);
    v["metadata"]["labels"] = json!({ POD_GROUP_LABEL: "gang" });
    v["metadata"]["creationTimestamp"] = json!("2025-12-31T23:00:00Z");
    v
}

/// Two 4-cpu nodes, three 3-cpu members, minMember 3: a and b wait at Permit.
fn waiting_gang() -> Scheduler {
    let mut c = cluster(
        vec![
            simple_node("n1", "4", "16Gi"),
            simple_node("n2", "4", "16Gi"),
        ],
        vec![member("a"), member("b"), member("c")],
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
    let mut s = Scheduler::new(
        c,
        gang_config(json!({"permitWaitingTimeSeconds": 10, "podGroupRejectPercentage": 50})),
        opts(),
    );
    s.run_until_idle();
    let keys: Vec<String> = s.waiting().into_iter().map(|w| w.pod).collect();
    assert_eq!(keys, ["default/a", "default/b"]);
    s
}

#[test]
fn deleting_a_waiting_gang_member_rejects_it_and_its_siblings() {
    let mut s = waiting_gang();
    assert!(s.remove_pending_pod("default/a"));
    assert!(s.waiting().is_empty());
    assert!(s.cluster().pod("default/a").is_none());
    assert_eq!(s.queue_position("default/a"), None);
    let rejected = |key: &str| {
        s.events().iter().find_map(|e| match &e.kind {
            SimEventKind::Rejected {
                plugin, message, ..
            } if e.pod == key => Some((plugin.clone(), message.clone())),
            _ => None,
        })
    };
    assert_eq!(
        rejected("default/a"),
        Some((String::new(), "removed".into()))
    );
    assert_eq!(
        rejected("default/b"),
        Some(("Coscheduling".into(), "rejection in Unreserve".into()))
    );
    assert_eq!(requested_cpu(&s, "n1") + requested_cpu(&s, "n2"), 0);
    assert!(s.queue_position("default/b").is_some());
    // Bound or unknown pods are not removed here.
    assert!(!s.remove_pending_pod("default/a"));
    let mut s = sim(
        vec![simple_node("n1", "4", "8Gi")],
        vec![simple_pod("r", "1", "1Gi", Some("n1"))],
    );
    assert!(!s.remove_pending_pod("default/r"));
}

#[test]
fn a_refused_binding_requeues_with_backoff_and_frees_the_node() {
    let mut s = sim(
        vec![simple_node("n1", "4", "8Gi")],
        vec![simple_pod("p", "1", "1Gi", None)],
    );
    s.run_until_idle();
    assert_eq!(requested_cpu(&s, "n1"), 1000);
    let msg = "Operation cannot be fulfilled on pods/binding \"p\": pod p is already assigned to node \"x\"";
    assert!(s.binding_refused("default/p", msg));
    assert_eq!(requested_cpu(&s, "n1"), 0);
    assert_eq!(s.queue_position("default/p"), Some(QueueName::Backoff));
    assert_eq!(
        placement(&s, "default/p"),
        Placement::Unschedulable {
            message: msg.into(),
            nominated_node: None,
            queue: QueueName::Backoff
        }
    );
    let last = &s.events().last().unwrap().kind;
    assert_eq!(
        last,
        &SimEventKind::Failed {
            message: msg.into(),
            plugins: vec![],
            queue: QueueName::Backoff
        }
    );
    assert!(matches!(
        s.attempts()[0].outcome,
        Outcome::Error { ref message } if message == msg
    ));
    // Not bound any more; unknown.
    assert!(!s.binding_refused("default/p", msg));
    assert!(!s.binding_refused("default/nope", msg));
    // Error backoff is waited out (1 s), then it binds again.
    s.run_until_idle();
    assert_eq!(s.queue_position("default/p"), Some(QueueName::Backoff));
    s.advance(Duration::from_secs(1));
    s.run_until_idle();
    assert_eq!(
        placement(&s, "default/p"),
        Placement::Bound { node: "n1".into() }
    );
    // A pod this engine did not bind is not its to requeue.
    let mut s = sim(
        vec![simple_node("n1", "4", "8Gi")],
        vec![simple_pod("r", "1", "1Gi", Some("n1"))],
    );
    assert!(!s.binding_refused("default/r", msg));
}

fn object<T: serde::de::DeserializeOwned>(v: Value) -> T {
    serde_json::from_value(v).unwrap()
}

#[test]
fn storage_objects_changing_move_a_pod_rejected_by_volume_binding() {
    let claim = |class: &str, volume: Option<&str>| -> Value {
        let mut c = json!({"metadata": {"name": "data", "namespace": "default"},
            "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": class,
                "resources": {"requests": {"storage": "1Gi"}}},
            "status": {"phase": "Pending"}});
        if let Some(v) = volume {
            c["spec"]["volumeName"] = json!(v);
            c["metadata"]["annotations"] = json!({"pv.kubernetes.io/bind-completed": "yes"});
            c["status"]["phase"] = json!("Bound");
        }
        c
    };
    let pv = json!({"metadata": {"name": "pv1"},
        "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
            "storageClassName": "fast", "hostPath": {"path": "/mnt"}},
        "status": {"phase": "Bound"}});
    let class = json!({"metadata": {"name": "fast"}, "provisioner": "example.com/csi",
        "volumeBindingMode": "WaitForFirstConsumer"});
    type Fix = fn(&mut Cluster, Value, Value, Value);
    // The claim gets bound to a PV; or its (missing, so Immediate) class appears
    // as WaitForFirstConsumer.
    let bind_claim: Fix = |c, claim_bound, pv, _| {
        c.persistent_volume_claims
            .insert("default/data".into(), object(claim_bound));
        c.persistent_volumes.insert("pv1".into(), object(pv));
    };
    let add_class: Fix = |c, _, _, class| {
        c.storage_classes.insert("fast".into(), object(class));
    };
    for (i, fix) in [bind_claim, add_class].into_iter().enumerate() {
        let mut p = simple_pod("p", "1", "1Gi", None);
        p["spec"]["volumes"] =
            json!([{"name": "v", "persistentVolumeClaim": {"claimName": "data"}}]);
        let mut c = cluster(vec![simple_node("n1", "4", "8Gi")], vec![p]);
        c.persistent_volume_claims
            .insert("default/data".into(), object(claim("fast", None)));
        let mut s = Scheduler::new(c.clone(), SchedulerConfig::defaults(), opts());
        s.run_until_idle();
        assert_parked(&s, "default/p", "VolumeBinding");
        // Nothing changed: nothing to do.
        assert!(!s.sync_objects(&c));
        fix(
            &mut c,
            claim("fast", Some("pv1")),
            pv.clone(),
            class.clone(),
        );
        assert!(s.sync_objects(&c), "case {i}");
        assert_eq!(
            moves(&s, "default/p"),
            [(QueueName::Backoff, ClusterEvent::ObjectChange)],
            "case {i}"
        );
        s.advance(Duration::from_secs(1));
        s.run_until_idle();
        assert_eq!(
            placement(&s, "default/p"),
            Placement::Bound { node: "n1".into() },
            "case {i}"
        );
    }
}

#[test]
fn the_engines_nomination_outlives_updates_without_it() {
    let mut low = simple_pod("low", "3", "1Gi", Some("n1"));
    low["spec"]["priority"] = json!(0);
    let mut high = simple_pod("high", "3", "1Gi", None);
    high["spec"]["priority"] = json!(100);
    let mut s = sim(vec![simple_node("n1", "4", "8Gi")], vec![low, high.clone()]);
    // One cycle: preemption nominates n1 and evicts low.
    assert!(s.schedule_one());
    let nominated = |s: &Scheduler| {
        s.cluster()
            .pod("default/high")
            .unwrap()
            .nominated_node_name
            .clone()
    };
    assert_eq!(nominated(&s), Some("n1".into()));
    assert_eq!(
        s.cluster().nominated_pods("n1").count(),
        1,
        "indexed as nominated"
    );
    // An update without the nomination (the status write has not landed) keeps it.
    high["metadata"]["labels"] = json!({"v": "2"});
    assert!(s.update_pod(pod(high.clone())));
    assert_eq!(nominated(&s), Some("n1".into()));
    assert_eq!(
        s.cluster()
            .pod("default/high")
            .unwrap()
            .labels
            .get("v")
            .map(|v| v.as_str()),
        Some("2")
    );
    // Once an object carries it, the object rules: a later clear is honoured.
    high["status"] = json!({"nominatedNodeName": "n1"});
    assert!(s.update_pod(pod(high.clone())));
    high["status"] = json!({});
    assert!(s.update_pod(pod(high)));
    assert_eq!(nominated(&s), None);
    assert_eq!(s.cluster().nominated_pods("n1").count(), 0);
}

#[test]
fn a_deleted_node_moves_a_pod_rejected_by_topology_spread() {
    let zoned = |name: &str, zone: &str, cpu: &str| {
        let mut n = simple_node(name, cpu, "8Gi");
        n["metadata"]["labels"]["zone"] = json!(zone);
        n
    };
    let labelled = |name: &str, node: Option<&str>, cpu: &str| {
        let mut p = simple_pod(name, cpu, "100Mi", node);
        p["metadata"]["labels"] = json!({"app": "x"});
        p
    };
    let mut p = labelled("p", None, "2");
    p["spec"]["topologySpreadConstraints"] = json!([{"maxSkew": 1, "topologyKey": "zone",
        "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"app": "x"}}}]);
    // Zone a holds two matching pods; zone b's only node is too small for p.
    let mut s = sim(
        vec![zoned("n1", "a", "8"), zoned("n2", "b", "1")],
        vec![
            labelled("x1", Some("n1"), "100m"),
            labelled("x2", Some("n1"), "100m"),
            p,
        ],
    );
    s.run_until_idle();
    assert_parked(&s, "default/p", "PodTopologySpread");
    assert!(!s.delete_node("nope"));
    assert!(s.delete_node("n2"));
    assert!(s.cluster().node("n2").is_none());
    assert_eq!(
        moves(&s, "default/p"),
        [(QueueName::Backoff, ClusterEvent::NodeDelete)]
    );
    // Zone b is gone: the skew is counted over zone a alone.
    s.advance(Duration::from_secs(1));
    s.run_until_idle();
    assert_eq!(
        placement(&s, "default/p"),
        Placement::Bound { node: "n1".into() }
    );
}

/// A simulation that keeps no traces (cycles then skip the per-node verdicts when a
/// node fits) places, parks and reports every pod as one that keeps them.
#[test]
fn keeping_traces_or_not_gives_the_same_simulation() {
    let run = |keep_traces| {
        let nodes = vec![
            simple_node("n1", "2", "8Gi"),
            simple_node("n2", "3", "8Gi"),
            tainted("n3"),
        ];
        let pods = vec![
            simple_pod("a", "1", "1Gi", None),
            simple_pod("b", "2", "1Gi", None),
            simple_pod("c", "2", "1Gi", None),
            simple_pod("huge", "64", "1Gi", None),
        ];
        let opts = SimOptions {
            keep_traces,
            ..opts()
        };
        let mut s = Scheduler::new(cluster(nodes, pods), SchedulerConfig::defaults(), opts);
        s.run();
        assert_parked(&s, "default/huge", "NodeResourcesFit");
        let r = s.result();
        assert_eq!(
            r.attempts.iter().any(|a| a.trace.is_some()),
            keep_traces,
            "traces kept only when asked"
        );
        let outcomes: Vec<_> = r
            .attempts
            .iter()
            .map(|a| (a.pod.clone(), a.outcome.clone()))
            .collect();
        (r.pods, outcomes)
    };
    let (kept, lean) = (run(true), run(false));
    assert_eq!(kept, lean);
    assert!(
        kept.0
            .iter()
            .any(|p| matches!(p.placement, Placement::Bound { .. })),
        "{kept:?}"
    );
}
