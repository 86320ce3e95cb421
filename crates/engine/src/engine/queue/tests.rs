use super::*;
use crate::model::testing::{pod, simple_pod};
use serde_json::Value;

fn t(s: i64) -> Timestamp {
    Timestamp::new(1_700_000_000 + s, 0).unwrap()
}

fn qp(name: &str, prio: i32, added: Timestamp) -> QueuedPod {
    let mut v = simple_pod(name, "1", "1Gi", None);
    v["spec"]["priority"] = prio.into();
    QueuedPod::new(Arc::new(pod(v)), added)
}

/// PrioritySort's order.
fn prio(a: &QueuedPodInfo, b: &QueuedPodInfo) -> bool {
    a.pod.priority > b.pod.priority
        || (a.pod.priority == b.pod.priority && a.timestamp < b.timestamp)
}

fn q() -> SchedulingQueue {
    SchedulingQueue::new(Duration::from_secs(1), Duration::from_secs(10))
}

fn rejected(p: &str) -> Failure {
    Failure::Rejected {
        unschedulable: [p.to_string()].into(),
        pending: BTreeSet::new(),
    }
}

#[test]
fn active_queue_follows_queue_sort() {
    let mut q = q();
    q.add(qp("low", 0, t(0)), None, &prio);
    q.add(qp("high", 10, t(5)), None, &prio);
    q.add(qp("low-late", 0, t(3)), None, &prio);
    let order: Vec<String> = std::iter::from_fn(|| q.pop(t(10), &prio))
        .map(|(p, _)| p.info.pod.name.clone())
        .collect();
    assert_eq!(order, ["high", "low", "low-late"]);
}

#[test]
fn go_heap_breaks_ties_like_container_heap() {
    // All equal: container/heap pops 0, then the last pushed moves to the root
    // and sifts down (no swaps on equal keys): 0, 4, 3, 2, 1.
    let mut q = q();
    for i in 0..5 {
        q.add(qp(&format!("p{i}"), 0, t(0)), None, &prio);
    }
    let order: Vec<String> = std::iter::from_fn(|| q.pop(t(0), &prio))
        .map(|(p, _)| p.info.pod.name.clone())
        .collect();
    assert_eq!(order, ["p0", "p4", "p3", "p2", "p1"]);
}

#[test]
fn backoff_doubles_up_to_the_max() {
    let q = q();
    let mut p = qp("a", 0, t(0));
    let secs: Vec<u64> = (0..7)
        .map(|n| {
            p.unschedulable_count = n;
            q.backoff_duration(&p).as_secs()
        })
        .collect();
    assert_eq!(secs, [0, 1, 2, 4, 8, 10, 10]);
    p.consecutive_errors = 2;
    assert_eq!(q.backoff_duration(&p).as_secs(), 2);
    let q2 = SchedulingQueue::new(Duration::from_secs(3), Duration::from_secs(5));
    p.consecutive_errors = 0;
    p.unschedulable_count = 2;
    assert_eq!(q2.backoff_duration(&p).as_secs(), 5);
}

#[test]
fn rejected_without_events_parks_then_event_moves_to_backoff() {
    let mut q = q();
    q.add(qp("a", 0, t(0)), None, &prio);
    let (a, _) = q.pop(t(0), &prio).unwrap();
    assert_eq!(
        q.requeue_failed(a, rejected("NodeResourcesFit"), t(0), &prio),
        QueueName::Unschedulable
    );
    // A bound pod does not concern NodeResourcesFit.
    assert!(
        q.move_all(ClusterEvent::AssignedPodAdd, t(0), None, &prio)
            .is_empty()
    );
    let moved = q.move_all(ClusterEvent::AssignedPodDelete, t(0), None, &prio);
    assert_eq!(moved, [("default/a".to_string(), QueueName::Backoff)]);
    // activeQ empty: the backoffQ head is popped anyway.
    let (a, from) = q.pop(t(0), &prio).unwrap();
    assert_eq!(from, QueueName::Backoff);
    assert_eq!(a.info.attempts, 2);
}

#[test]
fn event_during_the_attempt_requeues_instead_of_parking() {
    let mut q = q();
    q.add(qp("a", 0, t(0)), None, &prio);
    q.add(qp("b", 0, t(1)), None, &prio);
    let (a, _) = q.pop(t(0), &prio).unwrap();
    q.move_all(ClusterEvent::AssignedPodDelete, t(0), None, &prio);
    assert_eq!(
        q.requeue_failed(a, rejected("NodePorts"), t(0), &prio),
        QueueName::Backoff
    );
    // b is still in activeQ and goes first; a's backoff (1 s) completes at t=1.
    assert_eq!(q.pop(t(0), &prio).unwrap().0.info.pod.name, "b");
    q.done("uid-b");
    assert_eq!(q.flush_backoff_completed(t(1), &prio), ["default/a"]);
    assert_eq!(q.len(QueueName::Active), 1);
}

#[test]
fn errors_park_until_any_event_and_use_error_backoff() {
    let mut q = q();
    q.add(qp("a", 0, t(0)), None, &prio);
    let (a, _) = q.pop(t(0), &prio).unwrap();
    assert_eq!(
        q.requeue_failed(a, Failure::Error, t(0), &prio),
        QueueName::Unschedulable
    );
    let moved = q.move_all(ClusterEvent::AssignedPodAdd, t(0), None, &prio);
    assert_eq!(moved, [("default/a".to_string(), QueueName::Backoff)]);
    // Error backoff is not popped early.
    assert!(q.pop(t(0), &prio).is_none());
    assert!(!q.is_idle());
    assert_eq!(q.next_error_backoff(), Some(t(1)));
    assert!(q.pop(t(1), &prio).is_some());
}

#[test]
fn gated_pods_stay_gated_and_activate_moves_parked_pods() {
    let mut q = q();
    let g = Gate {
        plugin: "SchedulingGates".into(),
        message: "waiting for scheduling gates: [x]".into(),
    };
    assert_eq!(q.add(qp("g", 0, t(0)), Some(g), &prio), QueueName::Gated);
    q.add(qp("a", 0, t(0)), None, &prio);
    let (a, _) = q.pop(t(0), &prio).unwrap();
    q.requeue_failed(a, rejected("Coscheduling"), t(0), &prio);
    assert!(
        q.move_all(ClusterEvent::AssignedPodDelete, t(0), None, &prio)
            .is_empty()
    );
    let moved = q.activate(&["uid-a".into(), "uid-g".into()], &prio);
    assert_eq!(moved, ["default/a"]);
    assert_eq!(q.position("uid-g"), Some(QueueName::Gated));
    assert_eq!(q.position("uid-a"), Some(QueueName::Active));
}

#[test]
fn backoff_expiry_is_truncated_to_the_second() {
    let q = q();
    let mut p = qp("a", 0, Timestamp::new(1_700_000_000, 700_000_000).unwrap());
    p.unschedulable_count = 1;
    assert_eq!(q.backoff_time(&p), t(1));
}

#[test]
fn plugin_event_table_follows_events_to_register() {
    use ClusterEvent::*;
    let all = [
        AssignedPodAdd,
        AssignedPodDelete,
        NodeAdd,
        NodeUpdate,
        NodeDelete,
        AssignedPodUpdate,
        UnscheduledPodUpdate,
        ObjectChange,
    ];
    let cases: [(&str, &[ClusterEvent]); 16] = [
        (
            "NodeResourcesFit",
            &[
                AssignedPodDelete,
                NodeAdd,
                NodeUpdate,
                AssignedPodUpdate,
                UnscheduledPodUpdate,
            ],
        ),
        ("NodePorts", &[AssignedPodDelete, NodeAdd]),
        (
            "VolumeRestrictions",
            &[AssignedPodDelete, NodeAdd, ObjectChange],
        ),
        ("NodeVolumeLimits", &[AssignedPodDelete, ObjectChange]),
        (
            "InterPodAffinity",
            &[
                AssignedPodAdd,
                AssignedPodDelete,
                NodeAdd,
                NodeUpdate,
                AssignedPodUpdate,
            ],
        ),
        (
            "PodTopologySpread",
            &[
                AssignedPodAdd,
                AssignedPodDelete,
                NodeAdd,
                NodeUpdate,
                NodeDelete,
                AssignedPodUpdate,
                UnscheduledPodUpdate,
            ],
        ),
        ("Coscheduling", &[AssignedPodAdd, ObjectChange]),
        (
            "NodeUnschedulable",
            &[NodeAdd, NodeUpdate, UnscheduledPodUpdate],
        ),
        (
            "TaintToleration",
            &[NodeAdd, NodeUpdate, UnscheduledPodUpdate],
        ),
        ("NodeName", &[NodeAdd]),
        ("NodeAffinity", &[NodeAdd, NodeUpdate]),
        ("VolumeBinding", &[NodeAdd, NodeUpdate, ObjectChange]),
        ("VolumeZone", &[NodeAdd, NodeUpdate, ObjectChange]),
        ("SchedulingGates", &[UnscheduledPodUpdate]),
        // ResourceClaim, ResourceSlice, DeviceClass Add|Update are object changes.
        ("DynamicResources", &[UnscheduledPodUpdate, ObjectChange]),
        ("OutOfTree", &all),
    ];
    for (plugin, cares) in cases {
        for e in all {
            assert_eq!(
                plugin_cares(plugin, e),
                cares.contains(&e),
                "{plugin} {}",
                e.as_str()
            );
        }
    }
}

#[test]
fn pod_change_and_the_plugins_it_concerns() {
    let base = qp("a", 0, t(0)).info.pod;
    let with = |f: &dyn Fn(&mut Value)| {
        let mut v = simple_pod("a", "1", "1Gi", None);
        f(&mut v);
        pod(v)
    };
    let labels = with(&|v| v["metadata"]["labels"] = serde_json::json!({"x": "y"}));
    let smaller =
        with(&|v| v["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "500m".into());
    let bigger = with(&|v| v["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "2".into());
    let tolerant = with(&|v| {
        v["spec"]["tolerations"] = serde_json::json!([{"key": "k", "operator": "Exists"}])
    });
    let c = |new: &Pod| PodChange::between(&base, new);
    assert_eq!(
        c(&labels),
        PodChange {
            labels: true,
            ..Default::default()
        }
    );
    assert!(c(&smaller).scale_down);
    assert!(!c(&bigger).scale_down);
    assert!(c(&tolerant).tolerations);
    let cares = |plugin: &str, new: &Pod| plugin_cares_pod_update(plugin, &c(new), new);
    assert!(cares("TaintToleration", &tolerant));
    assert!(!cares("TaintToleration", &labels));
    assert!(cares("PodTopologySpread", &labels));
    assert!(cares("NodeResourcesFit", &smaller));
    assert!(!cares("NodeResourcesFit", &bigger));
    assert!(!cares("InterPodAffinity", &labels));
    assert!(!cares("NodeAffinity", &tolerant));
    assert!(cares("OutOfTree", &labels));
}

#[test]
fn delete_removes_the_pod_from_any_sub_queue() {
    let mut q = q();
    q.add(qp("act", 0, t(0)), None, &prio);
    let g = Gate {
        plugin: "SchedulingGates".into(),
        message: "m".into(),
    };
    q.add(qp("gated", 0, t(0)), Some(g), &prio);
    q.add(qp("parked", 0, t(0)), None, &prio);
    q.add(qp("backing", 0, t(0)), None, &prio);
    let popped: Vec<QueuedPod> = std::iter::from_fn(|| q.pop(t(0), &prio))
        .map(|(p, _)| p)
        .filter(|p| p.info.pod.name != "act")
        .collect();
    q.add(qp("act", 0, t(0)), None, &prio);
    for p in popped {
        let name = p.info.pod.name.clone();
        if name == "parked" {
            q.requeue_failed(p, rejected("NodeAffinity"), t(0), &prio);
        } else {
            q.requeue_error(p, t(0), &prio);
        }
    }
    assert_eq!(q.position("uid-parked"), Some(QueueName::Unschedulable));
    assert_eq!(q.position("uid-backing"), Some(QueueName::Backoff));
    for name in ["act", "gated", "parked", "backing"] {
        let uid = format!("uid-{name}");
        assert_eq!(
            q.delete(&uid, &prio).map(|p| p.info.pod.name.clone()),
            Some(name.to_string())
        );
        assert_eq!(q.position(&uid), None);
        assert!(q.delete(&uid, &prio).is_none());
    }
    assert!(q.is_idle());
    assert_eq!(q.next_error_backoff(), None);
}

#[test]
fn update_moves_parked_pods_only_when_a_rejector_cares() {
    let mut q = q();
    q.add(qp("a", 0, t(0)), None, &prio);
    let (a, _) = q.pop(t(0), &prio).unwrap();
    q.requeue_failed(a, rejected("TaintToleration"), t(0), &prio);
    let mut never = |_: &Pod| -> Option<Gate> { panic!("not gated") };
    let label = PodChange {
        labels: true,
        ..Default::default()
    };
    let pod_a = qp("a", 0, t(0)).info.pod;
    assert_eq!(
        q.update(pod_a.clone(), &label, &mut never, t(0), &prio),
        None
    );
    assert_eq!(q.position("uid-a"), Some(QueueName::Unschedulable));
    let tol = PodChange {
        tolerations: true,
        ..Default::default()
    };
    // Still backing off (1 s after its first failure).
    assert_eq!(
        q.update(pod_a.clone(), &tol, &mut never, t(0), &prio),
        Some(QueueName::Backoff)
    );
    // A gated pod re-runs PreEnqueue only when its gates changed.
    let g = Gate {
        plugin: "SchedulingGates".into(),
        message: "m".into(),
    };
    q.add(qp("g", 0, t(0)), Some(g.clone()), &prio);
    let pod_g = qp("g", 0, t(0)).info.pod;
    let mut open = |_: &Pod| None;
    assert_eq!(
        q.update(pod_g.clone(), &label, &mut open, t(0), &prio),
        None
    );
    assert_eq!(q.position("uid-g"), Some(QueueName::Gated));
    let gates = PodChange {
        gates: true,
        ..Default::default()
    };
    let mut still = |_: &Pod| Some(g.clone());
    assert_eq!(
        q.update(pod_g.clone(), &gates, &mut still, t(0), &prio),
        None
    );
    assert_eq!(
        q.update(pod_g, &gates, &mut open, t(0), &prio),
        Some(QueueName::Active)
    );
}
