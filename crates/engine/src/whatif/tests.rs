use serde_json::json;

use super::*;
use crate::engine::SchedulerConfig;
use crate::engine::trace::Outcome;
use crate::model::testing::{cluster, pod, simple_node, simple_pod};

#[test]
fn every_spelling_parses_and_prints_back_the_same() {
    let cases = [
        "pod.cpu=2500m",
        "pod.memory=4Gi",
        "pod.request.nvidia.com/gpu=1",
        "pod.request.ephemeral-storage=10Gi",
        "pod.drop-node-selector=disktype",
        "pod.drop-node-affinity",
        "pod.drop-pod-affinity=0",
        "pod.drop-pod-anti-affinity=1",
        "pod.drop-spread=2",
        "pod.tolerate=dedicated=gpu:NoSchedule",
        "pod.tolerate=example.com/maint:NoExecute",
        "pod.priority=-5",
        "pod.drop-gate=example.com/wait",
        "node.cordon=gen-a1",
        "node.uncordon=gen-a3",
        "node.untaint=gpu-b1:dedicated",
        "node.untaint=gpu-b1:dedicated:NoSchedule",
        "node.label=gen-a1:disktype=ssd",
        "node.label=gen-a1:empty=",
        "node.add=10:like=gpu-b1",
        "pod.evict=batch/filler-1",
    ];
    for text in cases {
        let e: Edit = text.parse().unwrap_or_else(|err| panic!("{text}: {err}"));
        assert_eq!(e.to_string(), text);
        assert_eq!(e.to_string().parse::<Edit>().unwrap(), e, "{text}");
    }
    // Effects are matched without regard to case and printed canonically.
    let e: Edit = "pod.tolerate=k:noschedule".parse().unwrap();
    assert_eq!(e.to_string(), "pod.tolerate=k:NoSchedule");
    assert_eq!(GRAMMAR.len(), 17);
}

#[test]
fn malformed_edits_name_the_edit_and_what_was_expected() {
    let cases = [
        ("pod.cpu=lots", "pod.cpu=QTY"),
        ("pod.cpu=", "pod.cpu=QTY"),
        ("pod.cpu=-1", "pod.cpu=QTY"),
        ("pod.memory", "pod.memory=QTY"),
        ("pod.request.=1", "pod.request.RESOURCE=QTY"),
        ("pod.drop-node-affinity=0", "no value"),
        ("pod.drop-pod-affinity=x", "pod.drop-pod-affinity=N"),
        ("pod.drop-spread=-1", "pod.drop-spread=N"),
        ("pod.tolerate=key", "pod.tolerate=KEY[=VALUE]:EFFECT"),
        ("pod.tolerate=key:Sometimes", "EFFECT one of NoSchedule"),
        ("pod.priority=high", "pod.priority=N"),
        ("pod.evict=just-a-name", "pod.evict=NS/NAME"),
        ("node.cordon=", "node.cordon=NODE"),
        ("node.untaint=n1", "node.untaint=NODE:KEY[:EFFECT]"),
        (
            "node.untaint=n1:k:NoSchedule:x",
            "node.untaint=NODE:KEY[:EFFECT]",
        ),
        ("node.label=n1:k", "node.label=NODE:KEY=VALUE"),
        ("node.add=0:like=n1", "N at least 1"),
        ("node.add=3", "node.add=N:like=NODE"),
        ("node.delete=n1", "one of: pod.cpu=QTY"),
    ];
    for (text, expected) in cases {
        let err = text.parse::<Edit>().expect_err(text);
        let msg = err.to_string();
        assert!(matches!(err, EditError::Malformed { .. }), "{text}: {msg}");
        assert!(msg.contains(&format!("{text:?}")), "{text}: {msg}");
        assert!(msg.contains(expected), "{text}: {msg}");
    }
}

fn tainted(name: &str, key: &str, effect: &str) -> serde_json::Value {
    let mut n = simple_node(name, "4", "8Gi");
    n["spec"] = json!({"taints": [{"key": key, "value": "x", "effect": effect}]});
    n
}

fn base() -> crate::model::Cluster {
    let mut ds = simple_pod("agent-x7k2p", "100m", "64Mi", Some("n1"));
    ds["metadata"]["ownerReferences"] =
        json!([{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent", "uid": "d"}]);
    let mut gpu = simple_node("g1", "4", "8Gi");
    gpu["status"]["allocatable"]["example.com/gpu"] = json!("4");
    gpu["spec"] = json!({"taints": [{"key": "gpu", "effect": "NoSchedule"}]});
    cluster(
        vec![
            gpu,
            simple_node("n1", "4", "8Gi"),
            tainted("n2", "dedicated", "NoSchedule"),
            simple_node("n3", "2", "4Gi"),
        ],
        vec![
            ds,
            simple_pod("web", "1", "1Gi", Some("n1")),
            simple_pod("pending", "3", "1Gi", None),
        ],
    )
}

fn subject() -> crate::model::Pod {
    pod(
        json!({"metadata": {"name": "subject", "namespace": "default", "uid": "s"},
        "spec": {
            "containers": [{"name": "c", "image": "i",
                "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}],
            "nodeSelector": {"disktype": "ssd", "zone": "a"},
            "schedulingGates": [{"name": "example.com/wait"}],
            "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone",
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": "x"}}}],
            "affinity": {
                "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": [
                        {"key": "zone", "operator": "In", "values": ["a"]}]}]}},
                "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                    {"topologyKey": "kubernetes.io/hostname",
                     "labelSelector": {"matchLabels": {"app": "x"}}}]}}}}),
    )
}

#[test]
fn each_edit_changes_the_copy_and_never_the_callers_model() {
    let c = base();
    let p = subject();
    let apply1 = |text: &str| {
        let e: Edit = text.parse().unwrap();
        apply(&c, Some(&p), &[e]).unwrap_or_else(|err| panic!("{text}: {err}"))
    };
    type Check = fn(&Edited);
    let cases: Vec<(&str, Check)> = vec![
        ("pod.cpu=2500m", |e| {
            let p = e.pod.as_ref().unwrap();
            assert_eq!(p.requests.milli_cpu, 2500);
            assert_eq!(
                (p.non_zero_milli_cpu, p.score_requests.milli_cpu),
                (2500, 2500)
            );
        }),
        ("pod.memory=2Gi", |e| {
            assert_eq!(e.pod.as_ref().unwrap().requests.memory, 2 << 30)
        }),
        ("pod.request.example.com/gpu=2", |e| {
            let p = e.pod.as_ref().unwrap();
            assert_eq!(p.requests.scalar.get("example.com/gpu"), Some(&2));
        }),
        ("pod.drop-node-selector=disktype", |e| {
            let sel = e.pod.as_ref().unwrap().node_selector.clone().unwrap();
            assert_eq!(sel.keys().collect::<Vec<_>>(), ["zone"]);
        }),
        ("pod.drop-node-affinity", |e| {
            let a = e.pod.as_ref().unwrap().affinity.as_ref().unwrap();
            let na = a.node_affinity.as_ref().unwrap();
            assert!(
                na.required_during_scheduling_ignored_during_execution
                    .is_none()
            );
        }),
        ("pod.drop-pod-anti-affinity=0", |e| {
            assert!(!e.pod.as_ref().unwrap().has_required_anti_affinity())
        }),
        ("pod.drop-spread=0", |e| {
            assert!(
                e.pod
                    .as_ref()
                    .unwrap()
                    .topology_spread_constraints
                    .is_empty()
            )
        }),
        ("pod.tolerate=dedicated=x:NoSchedule", |e| {
            let t = &e.pod.as_ref().unwrap().tolerations;
            assert_eq!(t.len(), 1);
            assert_eq!(t[0].operator.as_deref(), Some("Equal"));
        }),
        ("pod.priority=1000", |e| {
            assert_eq!(e.pod.as_ref().unwrap().priority, 1000)
        }),
        ("pod.drop-gate=example.com/wait", |e| {
            assert!(e.pod.as_ref().unwrap().scheduling_gates.is_empty())
        }),
        ("node.cordon=n1", |e| {
            let n = &e.cluster.node("n1").unwrap().node;
            assert!(n.unschedulable);
            assert!(n.taints.iter().any(|t| t.key == UNSCHEDULABLE_TAINT));
            assert_eq!(e.cluster.node("n1").unwrap().pods.len(), 2, "pods stay");
        }),
        ("node.untaint=n2:dedicated", |e| {
            assert!(e.cluster.node("n2").unwrap().node.taints.is_empty())
        }),
        ("node.untaint=n2:dedicated:NoSchedule", |e| {
            assert!(e.cluster.node("n2").unwrap().node.taints.is_empty())
        }),
        ("node.label=n3:disktype=ssd", |e| {
            let l = &e.cluster.node("n3").unwrap().node.labels;
            assert_eq!(l.get("disktype").map(|s| &**s), Some("ssd"));
        }),
        ("node.add=2:like=n1", |e| {
            let names: Vec<&str> = e.cluster.nodes().iter().map(|n| n.name()).collect();
            assert_eq!(
                names,
                ["g1", "n1", "n1-whatif-1", "n1-whatif-2", "n2", "n3"]
            );
            let new = e.cluster.node("n1-whatif-2").unwrap();
            let host = new.node.labels.get("kubernetes.io/hostname").unwrap();
            assert_eq!(&**host, "n1-whatif-2");
            assert_eq!(new.node.allocatable.milli_cpu, 4000);
            // Only the DaemonSet pod came along, bound and counted.
            assert_eq!(new.pods.len(), 1);
            assert_eq!(new.pods[0].name, "agent-n1-whatif-2");
            assert_eq!(new.requested.milli_cpu, 100);
            assert!(
                e.cluster
                    .pod("default/agent-n1-whatif-1")
                    .unwrap()
                    .is_bound()
            );
            assert_eq!(e.cluster.pod_count(), 5);
            assert!(e.notes[0].1.contains("1 DaemonSet pod(s)"), "{:?}", e.notes);
        }),
        ("pod.evict=default/web", |e| {
            assert!(e.cluster.pod("default/web").is_none());
            let n1 = e.cluster.node("n1").unwrap();
            assert_eq!((n1.pods.len(), n1.requested.milli_cpu), (1, 100));
        }),
    ];
    let before = format!("{:?}", c.nodes());
    for (text, check) in cases {
        let edited = apply1(text);
        check(&edited);
        // The edited pod is the one a replay finds when it is in the cluster.
        assert_eq!(
            format!("{:?}", c.nodes()),
            before,
            "{text} changed the input"
        );
        assert_eq!(c.pod_count(), 3, "{text}");
    }
    assert_eq!(subject().requests.milli_cpu, p.requests.milli_cpu);
}

#[test]
fn uncordon_clears_the_flag_and_its_taint() {
    let mut n = simple_node("n1", "4", "8Gi");
    n["spec"] = json!({"unschedulable": true, "taints": [
        {"key": UNSCHEDULABLE_TAINT, "effect": "NoSchedule"}]});
    let c = cluster(vec![n], vec![]);
    let e = apply(&c, None, &["node.uncordon=n1".parse().unwrap()]).unwrap();
    let node = &e.cluster.node("n1").unwrap().node;
    assert!(!node.unschedulable && node.taints.is_empty());
    assert!(c.node("n1").unwrap().node.unschedulable);
}

#[test]
fn unknown_names_are_errors_with_a_did_you_mean() {
    let c = base();
    let p = subject();
    let cases = [
        ("node.cordon=n4", "no node \"n4\"; did you mean \"n1\"?"),
        (
            "node.add=1:like=nn3",
            "no node \"nn3\"; did you mean \"n3\"?",
        ),
        (
            "node.untaint=n2:dedicate",
            "no taint \"dedicate\"; did you mean \"dedicated\"?",
        ),
        ("node.untaint=n1:dedicated", "no taint \"dedicated\""),
        (
            "node.untaint=n2:dedicated:NoExecute",
            "has taint dedicated with another effect",
        ),
        (
            "pod.evict=default/wbe",
            "no pod \"default/wbe\"; did you mean \"default/web\"?",
        ),
        ("pod.evict=default/pending", "is not running on a node"),
        (
            "pod.drop-node-selector=disktyp",
            "did you mean \"disktype\"?",
        ),
        (
            "pod.drop-gate=example.com/wiat",
            "did you mean \"example.com/wait\"?",
        ),
        (
            "pod.request.example.com/gpx=1",
            "did you mean \"example.com/gpu\"?",
        ),
        (
            "pod.request.cpuu=1",
            "no resource \"cpuu\"; did you mean \"cpu\"?",
        ),
        (
            "pod.drop-pod-affinity=0",
            "the pod has no required pod affinity term",
        ),
        (
            "pod.drop-pod-anti-affinity=3",
            "1 required pod anti-affinity term (index 0), not 3",
        ),
        ("pod.drop-spread=1", "1 topology spread term"),
        ("node.uncordon=n1", "node n1 is not cordoned"),
    ];
    for (text, want) in cases {
        let err = apply(&c, Some(&p), &[text.parse().unwrap()]).expect_err(text);
        let msg = err.to_string();
        assert!(msg.contains(want), "{text}: {msg}");
        assert!(msg.contains(&format!("{text:?}")), "{text}: {msg}");
    }
    let err = apply(&c, None, &["pod.cpu=1".parse().unwrap()]).unwrap_err();
    assert!(err.to_string().contains("needs a pod"), "{err}");
}

#[test]
fn request_edits_below_the_overhead_are_refused() {
    let p = pod(json!({"metadata": {"name": "p"}, "spec": {
        "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "1"}}}],
        "overhead": {"cpu": "250m"}}}));
    let c = cluster(vec![simple_node("n1", "4", "8Gi")], vec![]);
    let err = apply(&c, Some(&p), &["pod.cpu=100m".parse().unwrap()]).unwrap_err();
    assert!(
        err.to_string().contains("below the pod's overhead of 250m"),
        "{err}"
    );
    let ok = apply(&c, Some(&p), &["pod.cpu=2".parse().unwrap()]).unwrap();
    assert!(
        ok.notes[0].1.contains("overhead 250m included"),
        "{:?}",
        ok.notes
    );
}

/// The effective request after spreading equals the asked value, recomputed from the
/// manifest by the model's own rules (containers, init, sidecars, pod-level, overhead).
#[test]
fn manifest_requests_spread_over_containers_and_recompute_to_the_target() {
    let c = |name: &str, cpu: &str| {
        json!({"name": name, "image": "i",
        "resources": {"requests": {"cpu": cpu}}})
    };
    // (spec, resource, target, expected milli, note fragment)
    let cases = [
        (
            json!({"containers": [c("a", "1")]}),
            "cpu",
            "2500m",
            2500,
            "a=2500m",
        ),
        (
            json!({"containers": [c("a", "1"), c("b", "3")]}),
            "cpu",
            "2",
            2000,
            "a=500m, b=1500m",
        ),
        (
            json!({"containers": [{"name": "a", "image": "i"}, {"name": "b", "image": "i"}]}),
            "cpu",
            "1",
            1000,
            "a=500m, b=500m",
        ),
        (
            json!({"containers": [c("a", "1")], "initContainers": [c("init", "4")]}),
            "cpu",
            "2",
            2000,
            "init containers lowered: init=2",
        ),
        (
            json!({"containers": [c("a", "1")], "initContainers": [
            {"name": "s", "image": "i", "restartPolicy": "Always",
             "resources": {"requests": {"cpu": "500m"}}}]}),
            "cpu",
            "2",
            2000,
            "sidecars keep 500m",
        ),
        (
            json!({"containers": [c("a", "1")], "overhead": {"cpu": "250m"}}),
            "cpu",
            "1250m",
            1250,
            "overhead 250m included",
        ),
        (
            json!({"containers": [c("a", "1")], "resources": {"requests": {"cpu": "1"}}}),
            "cpu",
            "3",
            3000,
            "pod-level resources.requests.cpu = 3",
        ),
        (
            json!({"containers": [{"name": "a", "image": "i",
            "resources": {"requests": {"cpu": "1"}, "limits": {"cpu": "1"}}}]}),
            "cpu",
            "2",
            2000,
            "a=2",
        ),
    ];
    for (i, (spec, r, target, want, note)) in cases.into_iter().enumerate() {
        let mut k: k8s_openapi::api::core::v1::Pod =
            serde_json::from_value(json!({"metadata": {"name": "p"}, "spec": spec})).unwrap();
        let q = crate::model::Quantity::parse(target).unwrap();
        let got = set_request_in_manifest(&mut k, r, q).unwrap_or_else(|e| panic!("{i}: {e}"));
        assert!(got.contains(note), "case {i}: {got}");
        let p = crate::model::Pod::from_k8s(&k).unwrap_or_else(|e| panic!("{i}: {e}"));
        assert_eq!(p.requests.get(r), want, "case {i}");
    }
    let mut k: k8s_openapi::api::core::v1::Pod = serde_json::from_value(json!({
        "metadata": {"name": "p"}, "spec": {"containers": [c("a", "1")], "initContainers": [
            {"name": "s", "image": "i", "restartPolicy": "Always",
             "resources": {"requests": {"cpu": "2"}}}]}}))
    .unwrap();
    let err = set_request_in_manifest(&mut k, "cpu", crate::model::Quantity::parse("1").unwrap());
    assert!(err.unwrap_err().contains("sidecars alone"));
}

/// Replays on edited models: an uncordon makes room, the cordon and a taint take it
/// away, and the caller's model answers as before.
#[test]
fn replays_of_edited_models_follow_the_edits() {
    let config = SchedulerConfig::defaults();
    let opts = crate::engine::cycle::CycleOptions::default();
    let c = base();
    let p = c.pod("default/pending").unwrap().as_ref().clone();
    let scheduled = |edits: &[&str]| -> Option<String> {
        let edits = parse_edits(edits).unwrap();
        let (_, trace) = replay_edited(&c, &config.profiles, &p, &edits, &opts).unwrap();
        match trace.unwrap().outcome {
            Outcome::Scheduled { node } => Some(node),
            _ => None,
        }
    };
    // 3 cpu: n1 has 4 with 1.1 used, n2 is tainted, n3 has 2.
    assert_eq!(scheduled(&[]), None);
    assert_eq!(scheduled(&["pod.evict=default/web"]), Some("n1".into()));
    assert_eq!(
        scheduled(&["pod.tolerate=dedicated:NoSchedule"]),
        Some("n2".into())
    );
    assert_eq!(scheduled(&["node.untaint=n2:dedicated"]), Some("n2".into()));
    assert!(scheduled(&["pod.cpu=2"]).is_some());
    let added = scheduled(&["node.add=1:like=n1"]);
    assert_eq!(added.as_deref(), Some("n1-whatif-1"));
    assert_eq!(
        scheduled(&["node.untaint=n2:dedicated", "node.cordon=n2"]),
        None
    );
    let plain = replay(&c, &config.profiles, &p, &opts).unwrap();
    assert!(matches!(plain.outcome, Outcome::Unschedulable { .. }));
}
