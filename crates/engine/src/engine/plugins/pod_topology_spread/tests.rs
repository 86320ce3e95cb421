//! Table-driven tests; the clusters of scenarios h30–h38 and h58 are rebuilt with the
//! model builders and checked against the real scheduler's numbers.

use std::sync::Arc;

use serde_json::{Value, json};

use super::filtering::{CriticalPaths, PRE_FILTER_STATE_KEY, PreFilterState};
use super::*;
use crate::engine::status::{Code, Status};
use crate::model::testing::{cluster, pod};

fn now() -> k8s_openapi::jiff::Timestamp {
    k8s_openapi::jiff::Timestamp::UNIX_EPOCH
}

/// A node with `kubernetes.io/hostname` plus the given labels.
fn node(name: &str, labels: &[(&str, &str)]) -> Value {
    let mut l = serde_json::Map::new();
    l.insert("kubernetes.io/hostname".into(), name.into());
    for (k, v) in labels {
        l.insert((*k).into(), (*v).into());
    }
    json!({"metadata": {"name": name, "labels": l},
           "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}})
}

fn zone_node(name: &str, zone: &str) -> Value {
    node(name, &[("topology.kubernetes.io/zone", zone)])
}

/// A pod in `default` with labels, bound to `node` when given.
fn bound(name: &str, labels: Value, node: Option<&str>) -> Value {
    let mut v = json!({"metadata": {"name": name, "namespace": "default", "uid": name, "labels": labels},
                       "spec": {"containers": [{"name": "c", "image": "i"}]}});
    if let Some(n) = node {
        v["spec"]["nodeName"] = n.into();
    }
    v
}

fn constraint(key: &str, skew: i32, action: &str, selector: Value) -> Value {
    json!({"maxSkew": skew, "topologyKey": key, "whenUnsatisfiable": action, "labelSelector": selector})
}

/// The incoming pod with the given spec fields merged in.
fn incoming(labels: Value, spec: Value) -> Pod {
    let mut v = bound("pending", labels, None);
    for (k, val) in spec.as_object().expect("spec object") {
        v["spec"][k] = val.clone();
    }
    pod(v)
}

fn plugin(args: Option<Value>) -> PodTopologySpread {
    let v = default_args(args.as_ref(), "args").expect("valid args");
    let args: PodTopologySpreadArgs = serde_json::from_value(v).expect("args");
    PodTopologySpread::new(&args).expect("plugin")
}

/// PreFilter then Filter on every node: `None` = PreFilter status, else per node.
fn filter_all(
    pl: &PodTopologySpread,
    c: &Cluster,
    p: &Pod,
) -> Result<Vec<(String, Status)>, Status> {
    let cx = Ctx {
        cluster: c,
        now: now(),
    };
    let mut state = CycleState::default();
    let (_, st) = pl.pre_filter(&cx, &mut state, p);
    if !st.is_success() {
        return Err(st);
    }
    Ok(c.nodes()
        .iter()
        .map(|n| (n.name().to_string(), pl.filter(&cx, &state, p, n)))
        .collect())
}

fn verdicts(r: &[(String, Status)]) -> Vec<(String, &'static str)> {
    r.iter()
        .map(|(n, s)| {
            let v = match (s.code, s.reasons.first().map(String::as_str)) {
                (Code::Success, _) => "ok",
                (Code::Unschedulable, Some(ERR_REASON_CONSTRAINTS_NOT_MATCH)) => "skew",
                (Code::UnschedulableAndUnresolvable, Some(ERR_REASON_NODE_LABEL_NOT_MATCH)) => {
                    "label"
                }
                _ => "other",
            };
            (n.clone(), v)
        })
        .collect()
}

fn expect(pairs: &[(&str, &'static str)]) -> Vec<(String, &'static str)> {
    pairs.iter().map(|(n, v)| (n.to_string(), *v)).collect()
}

/// PreScore, Score and NormalizeScore over `feasible` (all nodes when empty):
/// `None` when PreScore skipped, else (node, raw, normalized).
fn score_all(
    pl: &PodTopologySpread,
    c: &Cluster,
    p: &Pod,
    feasible: &[&str],
) -> Option<Vec<(String, i64, i64)>> {
    let cx = Ctx {
        cluster: c,
        now: now(),
    };
    let mut state = CycleState::default();
    let nodes: Vec<&NodeInfo> = c
        .nodes()
        .iter()
        .filter(|n| feasible.is_empty() || feasible.contains(&n.name()))
        .collect();
    let st = pl.pre_score(&cx, &mut state, p, &nodes);
    if st.is_skip() {
        return None;
    }
    assert!(st.is_success(), "{st:?}");
    let mut scores: Vec<NodeScore> = nodes
        .iter()
        .map(|n| {
            let (s, st) = pl.score(&cx, &state, p, n);
            assert!(st.is_success());
            NodeScore {
                node: c.node_position(n.name()).expect("node"),
                score: s,
            }
        })
        .collect();
    let raw: Vec<i64> = scores.iter().map(|s| s.score).collect();
    assert!(pl.normalize_score(&cx, &state, p, &mut scores).is_success());
    Some(
        nodes
            .iter()
            .zip(raw)
            .zip(scores)
            .map(|((n, r), s)| (n.name().to_string(), r, s.score))
            .collect(),
    )
}

fn triples(v: &[(&str, i64, i64)]) -> Vec<(String, i64, i64)> {
    v.iter().map(|(n, r, s)| (n.to_string(), *r, *s)).collect()
}

fn six_zone_nodes() -> Vec<Value> {
    vec![
        zone_node("a1", "zone-a"),
        zone_node("a2", "zone-a"),
        zone_node("b1", "zone-b"),
        zone_node("b2", "zone-b"),
        zone_node("c1", "zone-c"),
        zone_node("c2", "zone-c"),
    ]
}

fn web() -> Value {
    json!({"app": "web"})
}

#[test]
fn h30_hard_zone_max_skew_1() {
    let c = cluster(
        six_zone_nodes(),
        vec![
            bound("w1", web(), Some("a1")),
            bound("w2", web(), Some("a2")),
            bound("w3", web(), Some("a1")),
            bound("w4", web(), Some("b1")),
            bound("x1", json!({"app": "other"}), Some("c1")),
        ],
    );
    let p = incoming(
        web(),
        json!({"topologySpreadConstraints": [constraint("topology.kubernetes.io/zone", 1, "DoNotSchedule", json!({"matchLabels": {"app": "web"}}))]}),
    );
    let r = filter_all(&plugin(None), &c, &p).expect("prefilter");
    assert_eq!(
        verdicts(&r),
        expect(&[
            ("a1", "skew"),
            ("a2", "skew"),
            ("b1", "skew"),
            ("b2", "skew"),
            ("c1", "ok"),
            ("c2", "ok")
        ])
    );
    assert_eq!(r[0].1.code, Code::Unschedulable);
    // No soft constraint: PreScore skips.
    assert!(score_all(&plugin(None), &c, &p, &[]).is_none());
}

#[test]
fn h32_min_domains_above_domain_count_makes_global_min_zero() {
    let pods = vec![
        bound("w1", web(), Some("a1")),
        bound("w2", web(), Some("b1")),
        bound("w3", web(), Some("c2")),
    ];
    let c = cluster(six_zone_nodes(), pods);
    let spec = |min: i64| {
        json!({"topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
            "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"app": "web"}}, "minDomains": min}]})
    };
    let cases = [(4, "skew"), (3, "ok")];
    for (min, want) in cases {
        let r = filter_all(&plugin(None), &c, &incoming(web(), spec(min))).expect("prefilter");
        assert!(
            verdicts(&r).iter().all(|(_, v)| *v == want),
            "minDomains {min}: {r:?}"
        );
    }
}

fn policy_nodes() -> Vec<Value> {
    vec![
        node(
            "n1",
            &[("topology.kubernetes.io/zone", "zone-a"), ("team", "red")],
        ),
        node(
            "n2",
            &[("topology.kubernetes.io/zone", "zone-a"), ("team", "red")],
        ),
        node(
            "n3",
            &[("topology.kubernetes.io/zone", "zone-b"), ("team", "blue")],
        ),
        node(
            "n4",
            &[("topology.kubernetes.io/zone", "zone-b"), ("team", "blue")],
        ),
        {
            let mut n = node(
                "n5",
                &[("topology.kubernetes.io/zone", "zone-c"), ("team", "red")],
            );
            n["spec"] =
                json!({"taints": [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]});
            n
        },
    ]
}

/// h33 (defaults: affinity Honor, taints Ignore), h34 (taints Honor), h35 (affinity
/// Ignore + taints Honor), plus a toleration making the tainted zone count again.
#[test]
fn node_inclusion_policies() {
    let c = cluster(
        policy_nodes(),
        vec![bound("x1", json!({"app": "x"}), Some("n1"))],
    );
    let spec = |extra: Value, tolerations: Value| {
        let mut con = json!({"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
            "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"app": "x"}}});
        for (k, v) in extra.as_object().expect("obj") {
            con[k] = v.clone();
        }
        json!({"topologySpreadConstraints": [con], "nodeSelector": {"team": "red"}, "tolerations": tolerations})
    };
    let all_but_a = [
        ("n1", "skew"),
        ("n2", "skew"),
        ("n3", "ok"),
        ("n4", "ok"),
        ("n5", "ok"),
    ];
    type Case<'a> = (&'a str, Value, Value, Vec<(&'a str, &'a str)>);
    let cases: Vec<Case> = vec![
        ("h33 defaults", json!({}), json!([]), all_but_a.to_vec()),
        (
            "h34 taints honor",
            json!({"nodeTaintsPolicy": "Honor"}),
            json!([]),
            vec![
                ("n1", "ok"),
                ("n2", "ok"),
                ("n3", "ok"),
                ("n4", "ok"),
                ("n5", "ok"),
            ],
        ),
        (
            "h35 affinity ignore",
            json!({"nodeAffinityPolicy": "Ignore", "nodeTaintsPolicy": "Honor"}),
            json!([]),
            all_but_a.to_vec(),
        ),
        (
            "taints honor, tolerated",
            json!({"nodeTaintsPolicy": "Honor"}),
            json!([{"key": "dedicated", "operator": "Exists"}]),
            all_but_a.to_vec(),
        ),
        (
            "taints honor, wrong value",
            json!({"nodeTaintsPolicy": "Honor"}),
            json!([{"key": "dedicated", "operator": "Equal", "value": "y"}]),
            vec![
                ("n1", "ok"),
                ("n2", "ok"),
                ("n3", "ok"),
                ("n4", "ok"),
                ("n5", "ok"),
            ],
        ),
        (
            "affinity ignore only",
            json!({"nodeAffinityPolicy": "Ignore"}),
            json!([]),
            all_but_a.to_vec(),
        ),
    ];
    for (name, extra, tol, want) in cases {
        let p = incoming(json!({"app": "x"}), spec(extra, tol));
        let r = filter_all(&plugin(None), &c, &p).expect("prefilter");
        let want: Vec<(String, &str)> = want.iter().map(|(n, v)| (n.to_string(), *v)).collect();
        assert_eq!(verdicts(&r), want, "{name}");
    }
}

/// h35 in detail: with affinity Ignore the blue zone (0 pods) is a domain, so min is 0.
#[test]
fn affinity_ignore_counts_excluded_zone_as_domain() {
    let c = cluster(
        policy_nodes(),
        vec![bound("x1", json!({"app": "x"}), Some("n1"))],
    );
    let spec = |policy: &str| {
        json!({"topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
            "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"app": "x"}},
            "nodeAffinityPolicy": policy, "nodeTaintsPolicy": "Honor"}], "nodeSelector": {"team": "red"}})
    };
    let pl = plugin(None);
    let domains = |policy: &str| {
        let p = incoming(json!({"app": "x"}), spec(policy));
        let s = pl.pre_filter_state(&c, &p).expect("ok").expect("state");
        let d = &s.domains[0];
        let mut v: Vec<(String, i64)> = ["zone-a", "zone-b", "zone-c"]
            .iter()
            .map(|z| (z.to_string(), d.get(z)))
            .collect();
        v.push(("domains".into(), d.len() as i64));
        v.push(("min".into(), s.min_match_num(0, 1)));
        v
    };
    let got = domains("Ignore");
    assert_eq!(got[3], ("domains".into(), 2));
    assert_eq!(got[0], ("zone-a".into(), 1));
    assert_eq!(got[4], ("min".into(), 0));
    let got = domains("Honor");
    // Honor: only zone-a (red, untainted) is a domain; min = its count.
    assert_eq!(got[3], ("domains".into(), 1));
    assert_eq!(got[4], ("min".into(), 1));
}

#[test]
fn h36_match_label_keys_counts_only_same_revision() {
    let rev = |h: &str| json!({"app": "web", "pod-template-hash": h});
    let c = cluster(
        six_zone_nodes(),
        vec![
            bound("old-0", rev("aaa"), Some("a1")),
            bound("old-1", rev("aaa"), Some("a2")),
            bound("old-2", rev("aaa"), Some("a1")),
            bound("new-0", rev("bbb"), Some("b1")),
            bound("new-1", rev("bbb"), Some("b2")),
            bound("new-2", rev("bbb"), Some("b1")),
        ],
    );
    let spec = |keys: Value| {
        json!({"topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
            "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"app": "web"}},
            "matchLabelKeys": keys}]})
    };
    let r = filter_all(
        &plugin(None),
        &c,
        &incoming(rev("bbb"), spec(json!(["pod-template-hash"]))),
    )
    .expect("prefilter");
    assert_eq!(
        verdicts(&r),
        expect(&[
            ("a1", "ok"),
            ("a2", "ok"),
            ("b1", "skew"),
            ("b2", "skew"),
            ("c1", "ok"),
            ("c2", "ok")
        ])
    );
    // A key the pod lacks adds nothing: all six web pods count, zone-c (0) is min.
    let r = filter_all(
        &plugin(None),
        &c,
        &incoming(rev("bbb"), spec(json!(["missing"]))),
    )
    .expect("prefilter");
    assert_eq!(
        verdicts(&r),
        expect(&[
            ("a1", "skew"),
            ("a2", "skew"),
            ("b1", "skew"),
            ("b2", "skew"),
            ("c1", "ok"),
            ("c2", "ok")
        ])
    );
}

#[test]
fn h38_missing_topology_label_is_unresolvable() {
    let c = cluster(
        vec![
            node("n1", &[("rack", "r1")]),
            node("n2", &[("rack", "r2")]),
            node("n3", &[]),
            node("n4", &[("rack", "r2")]),
        ],
        vec![bound("w1", json!({"app": "db"}), Some("n1"))],
    );
    let p = incoming(
        json!({"app": "db"}),
        json!({"topologySpreadConstraints": [constraint("rack", 1, "DoNotSchedule", json!({"matchLabels": {"app": "db"}}))]}),
    );
    let r = filter_all(&plugin(None), &c, &p).expect("prefilter");
    assert_eq!(
        verdicts(&r),
        expect(&[("n1", "skew"), ("n2", "ok"), ("n3", "label"), ("n4", "ok")])
    );
    assert_eq!(r[2].1.code, Code::UnschedulableAndUnresolvable);
}

#[test]
fn h31_soft_scoring_numbers() {
    let pods = vec![
        bound("w-a1-0", web(), Some("a1")),
        bound("w-a1-1", web(), Some("a1")),
        bound("w-a1-2", web(), Some("a1")),
        bound("w-a2-0", web(), Some("a2")),
        bound("w-b1-0", web(), Some("b1")),
        bound("w-b1-1", web(), Some("b1")),
        bound("w-c1-0", web(), Some("c1")),
    ];
    let mut nodes = six_zone_nodes();
    nodes.push(zone_node("c3", "zone-c"));
    let c = cluster(nodes, pods);
    let sel = json!({"matchLabels": {"app": "web"}});
    let p = incoming(
        web(),
        json!({"topologySpreadConstraints": [
            constraint("kubernetes.io/hostname", 1, "ScheduleAnyway", sel.clone()),
            constraint("topology.kubernetes.io/zone", 2, "ScheduleAnyway", sel)]}),
    );
    let pl = plugin(None);
    // Only soft constraints: PreFilter skips.
    let cx = Ctx {
        cluster: &c,
        now: now(),
    };
    let (_, st) = pl.pre_filter(&cx, &mut CycleState::default(), &p);
    assert!(st.is_skip());
    let got = score_all(&pl, &c, &p, &[]).expect("scored");
    assert_eq!(
        got,
        triples(&[
            ("a1", 14, 21),
            ("a2", 10, 50),
            ("b1", 9, 57),
            ("b2", 4, 92),
            ("c1", 5, 85),
            ("c2", 3, 100),
            ("c3", 3, 100)
        ])
    );
}

fn h37_cluster(owner: Value) -> Cluster {
    let mut pods = Vec::new();
    for (i, n) in ["a1", "a1", "a1", "a2", "b1", "b1", "c1"]
        .iter()
        .enumerate()
    {
        let mut p = bound(&format!("web-{i}"), web(), Some(n));
        p["metadata"]["ownerReferences"] = owner.clone();
        pods.push(p);
    }
    let mut c = cluster(six_zone_nodes(), pods);
    let rs: k8s_openapi::api::apps::v1::ReplicaSet = serde_json::from_value(json!({
        "metadata": {"name": "web-rs", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}}
    }))
    .expect("rs");
    c.replica_sets.insert("default/web-rs".into(), rs);
    let svc: k8s_openapi::api::core::v1::Service = serde_json::from_value(json!({
        "metadata": {"name": "web", "namespace": "default"}, "spec": {"selector": {"app": "web"}}
    }))
    .expect("svc");
    c.services.insert("default/web".into(), svc);
    c
}

fn rs_owner() -> Value {
    json!([{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-rs", "uid": "u", "controller": true}])
}

#[test]
fn h37_system_default_constraints_scoring() {
    let c = h37_cluster(rs_owner());
    let mut p = bound("pending", web(), None);
    p["metadata"]["ownerReferences"] = rs_owner();
    let p = pod(p);
    let pl = plugin(None);
    let cx = Ctx {
        cluster: &c,
        now: now(),
    };
    // System defaults are soft only: PreFilter skips.
    let (_, st) = pl.pre_filter(&cx, &mut CycleState::default(), &p);
    assert!(st.is_skip());
    let got = score_all(&pl, &c, &p, &[]).expect("scored");
    assert_eq!(
        got,
        triples(&[
            ("a1", 19, 42),
            ("a2", 15, 63),
            ("b1", 13, 73),
            ("b2", 9, 94),
            ("c1", 10, 89),
            ("c2", 8, 100)
        ])
    );
}

#[test]
fn system_defaults_without_selecting_objects_skip() {
    // No service or controller selects the pod: empty selector, no constraints.
    let c = cluster(six_zone_nodes(), vec![bound("w", web(), Some("a1"))]);
    let p = pod(bound("pending", web(), None));
    assert!(score_all(&plugin(None), &c, &p, &[]).is_none());
}

#[test]
fn default_selector_sources() {
    let add_svc = |c: &mut Cluster, name: &str, sel: Value| {
        let svc: k8s_openapi::api::core::v1::Service = serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": "default"}, "spec": {"selector": sel}
        }))
        .expect("svc");
        c.services.insert(format!("default/{name}"), svc);
    };
    let base = || cluster(vec![zone_node("a1", "zone-a")], vec![]);
    let p = |owner: Value| {
        let mut v = bound("p", json!({"app": "web", "tier": "fe"}), None);
        v["metadata"]["ownerReferences"] = owner;
        pod(v)
    };
    let render = |s: &Selector| {
        let mut v: Vec<String> = s
            .requirements
            .iter()
            .flatten()
            .map(|r| format!("{}{:?}{:?}", r.key, r.op, r.values))
            .collect();
        v.sort();
        v
    };

    // Two matching services merge; one not matching, one with nil selector, one in
    // another namespace are ignored.
    let mut c = base();
    add_svc(&mut c, "a", json!({"app": "web"}));
    add_svc(&mut c, "b", json!({"tier": "fe"}));
    add_svc(&mut c, "c", json!({"app": "db"}));
    let nil: k8s_openapi::api::core::v1::Service = serde_json::from_value(
        json!({"metadata": {"name": "d", "namespace": "default"}, "spec": {}}),
    )
    .expect("svc");
    c.services.insert("default/d".into(), nil);
    let other: k8s_openapi::api::core::v1::Service = serde_json::from_value(
        json!({"metadata": {"name": "e", "namespace": "other"}, "spec": {"selector": {"x": "y"}}}),
    )
    .expect("svc");
    c.services.insert("other/e".into(), other);
    assert_eq!(
        render(&default_selector(&c, &p(json!([])))),
        vec!["appIn[\"web\"]", "tierIn[\"fe\"]"]
    );

    // ReplicationController (core v1), StatefulSet with an expression, and an RS that
    // is not the controller.
    let mut c = base();
    let rc: k8s_openapi::api::core::v1::ReplicationController = serde_json::from_value(json!({
        "metadata": {"name": "rc", "namespace": "default"}, "spec": {"selector": {"app": "web"}}
    }))
    .expect("rc");
    c.replication_controllers.insert("default/rc".into(), rc);
    let ss: k8s_openapi::api::apps::v1::StatefulSet = serde_json::from_value(json!({
        "metadata": {"name": "ss", "namespace": "default"},
        "spec": {"serviceName": "s", "template": {}, "selector": {"matchExpressions": [{"key": "tier", "operator": "Exists"}]}}
    }))
    .expect("ss");
    c.stateful_sets.insert("default/ss".into(), ss);
    let owner = |api: &str, kind: &str, name: &str, controller: bool| json!([{"apiVersion": api, "kind": kind, "name": name, "uid": "u", "controller": controller}]);
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (
            owner("v1", "ReplicationController", "rc", true),
            vec!["appIn[\"web\"]"],
        ),
        (
            owner("apps/v1", "StatefulSet", "ss", true),
            vec!["tierExists[]"],
        ),
        (owner("apps/v1", "StatefulSet", "ss", false), vec![]),
        (owner("apps/v1", "StatefulSet", "missing", true), vec![]),
        (
            owner("extensions/v1beta1", "ReplicaSet", "ss", true),
            vec![],
        ),
    ];
    for (o, want) in cases {
        let got = default_selector(&c, &p(o.clone()));
        assert_eq!(render(&got), want, "{o}");
        assert!(!got.is_nothing());
    }
}

#[test]
fn h58_list_default_constraints_hard_hostname() {
    let args = json!({"defaultingType": "List", "defaultConstraints": [
        {"maxSkew": 1, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "DoNotSchedule"}]});
    let pl = plugin(Some(args));
    let api = json!({"app": "api"});
    let owner = json!([{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "api-rs", "uid": "u", "controller": true}]);
    let mut pods = Vec::new();
    for (name, n) in [
        ("api-0", Some("n1")),
        ("api-1", Some("n1")),
        ("pending", None),
    ] {
        let mut v = bound(name, api.clone(), n);
        v["metadata"]["ownerReferences"] = owner.clone();
        pods.push(v);
    }
    let mut c = cluster(
        vec![
            zone_node("n1", "a"),
            zone_node("n2", "a"),
            zone_node("n3", "b"),
        ],
        pods,
    );
    let rs: k8s_openapi::api::apps::v1::ReplicaSet = serde_json::from_value(json!({
        "metadata": {"name": "api-rs", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "api"}}}
    }))
    .expect("rs");
    c.replica_sets.insert("default/api-rs".into(), rs);
    let p = c.pod("default/pending").expect("pending").clone();
    let r = filter_all(&pl, &c, &p).expect("prefilter");
    assert_eq!(
        verdicts(&r),
        expect(&[("n1", "skew"), ("n2", "ok"), ("n3", "ok")])
    );
    // No soft default: PreScore skips.
    assert!(score_all(&pl, &c, &p, &[]).is_none());
}

/// **[QUIRK]** `{}` counts no pod but matches the pod itself; a nil selector matches
/// nothing, also with matchLabelKeys.
#[test]
fn empty_and_nil_selectors() {
    let c = cluster(
        vec![zone_node("a1", "zone-a"), zone_node("b1", "zone-b")],
        vec![
            bound("w1", web(), Some("a1")),
            bound("w2", web(), Some("a1")),
            bound("w3", web(), Some("a1")),
        ],
    );
    let pl = plugin(None);
    let spec = |sel: Value, keys: Value| {
        let mut con = json!({"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule", "matchLabelKeys": keys});
        if !sel.is_null() {
            con["labelSelector"] = sel;
        }
        json!({"topologySpreadConstraints": [con]})
    };
    let cases: Vec<(Value, Value, i64, bool)> = vec![
        // selector, matchLabelKeys, zone-a count, self match
        (json!({}), json!([]), 0, true),
        (Value::Null, json!([]), 0, false),
        (Value::Null, json!(["app"]), 0, false),
        (json!({}), json!(["app"]), 3, true),
    ];
    for (sel, keys, count, self_match) in cases {
        let p = incoming(web(), spec(sel.clone(), keys.clone()));
        let s = pl.pre_filter_state(&c, &p).expect("ok").expect("state");
        assert_eq!(s.domains[0].get("zone-a"), count, "{sel} {keys}");
        let r = filter_all(&pl, &c, &p).expect("prefilter");
        // With skew = count + self − min(0): a1 fails only when 3 pods count.
        let want = if count + i64::from(self_match) > 1 {
            "skew"
        } else {
            "ok"
        };
        assert_eq!(verdicts(&r)[0].1, want, "{sel} {keys}");
    }
}

#[test]
fn terminating_and_foreign_namespace_pods_are_not_counted() {
    let mut term = bound("t", web(), Some("a1"));
    term["metadata"]["deletionTimestamp"] = "2025-01-01T00:00:00Z".into();
    let mut foreign = bound("f", web(), Some("a1"));
    foreign["metadata"]["namespace"] = "other".into();
    let c = cluster(
        vec![zone_node("a1", "zone-a"), zone_node("b1", "zone-b")],
        vec![term, foreign, bound("w", web(), Some("a1"))],
    );
    let p = incoming(
        web(),
        json!({"topologySpreadConstraints": [constraint("topology.kubernetes.io/zone", 1, "DoNotSchedule", json!({"matchLabels": {"app": "web"}}))]}),
    );
    let s = plugin(None)
        .pre_filter_state(&c, &p)
        .expect("ok")
        .expect("state");
    assert_eq!(s.domains[0].get("zone-a"), 1);
    assert_eq!(s.domains[0].get("zone-b"), 0);
}

#[test]
fn add_and_remove_pod_update_counts_and_critical_paths() {
    let c = cluster(
        vec![
            zone_node("a1", "zone-a"),
            zone_node("b1", "zone-b"),
            zone_node("c1", "zone-c"),
        ],
        vec![
            bound("w1", web(), Some("a1")),
            bound("w2", web(), Some("b1")),
        ],
    );
    let p = incoming(
        web(),
        json!({"topologySpreadConstraints": [constraint("topology.kubernetes.io/zone", 1, "DoNotSchedule", json!({"matchLabels": {"app": "web"}}))]}),
    );
    let pl = plugin(None);
    let cx = Ctx {
        cluster: &c,
        now: now(),
    };
    let mut state = CycleState::default();
    assert!(pl.pre_filter(&cx, &mut state, &p).1.is_success());
    let c1 = c.node("c1").expect("c1");
    let a1 = c.node("a1").expect("a1");
    // min 0 (zone-c): a1 fails (1+1−0), c1 passes.
    assert!(!pl.filter(&cx, &state, &p, a1).is_success());
    assert!(pl.filter(&cx, &state, &p, c1).is_success());

    // A nominated web pod on c1: every zone has 1, a1 passes now.
    let extra = Arc::new(pod(bound("n", web(), Some("c1"))));
    assert!(pl.add_pod(&cx, &mut state, &p, &extra, c1).is_success());
    let s = state
        .read::<PreFilterState>(PRE_FILTER_STATE_KEY)
        .expect("state");
    assert_eq!(s.domains[0].get("zone-c"), 1);
    assert_eq!(s.critical_paths[0].0[0].1, 1);
    assert!(pl.filter(&cx, &state, &p, a1).is_success());

    // Pods that do not count: other namespace, non-matching labels.
    let mut other_ns = bound("o", web(), Some("c1"));
    other_ns["metadata"]["namespace"] = "x".into();
    for other in [
        pod(other_ns),
        pod(bound("q", json!({"app": "q"}), Some("c1"))),
    ] {
        assert!(
            pl.add_pod(&cx, &mut state, &p, &Arc::new(other), c1)
                .is_success()
        );
    }
    let s = state
        .read::<PreFilterState>(PRE_FILTER_STATE_KEY)
        .expect("state");
    assert_eq!(s.domains[0].get("zone-c"), 1);

    // Removing the existing pod of a1 (preemption): zone-a drops to 0.
    let w1 = c.pod("default/w1").expect("w1").clone();
    assert!(pl.remove_pod(&cx, &mut state, &p, &w1, a1).is_success());
    let s = state
        .read::<PreFilterState>(PRE_FILTER_STATE_KEY)
        .expect("state");
    assert_eq!(s.domains[0].get("zone-a"), 0);
    assert_eq!(s.critical_paths[0].0[0].1, 0);
    assert_eq!(&*s.critical_paths[0].0[0].0, "zone-a");

    // Extension points without PreFilter state report the upstream error.
    let mut empty = CycleState::default();
    let st = pl.add_pod(&cx, &mut empty, &p, &extra, c1);
    assert_eq!(st.code, Code::Error);
    assert_eq!(
        st.message(),
        "reading \"PreFilterPodTopologySpread\" from cycleState: not found"
    );
    assert_eq!(pl.filter(&cx, &empty, &p, c1).code, Code::Error);
}

#[test]
fn critical_paths_update_rule() {
    let v = |s: &str| Arc::<str>::from(s);
    // (updates, expected [(value, num); 2])
    type Case<'a> = (Vec<(&'a str, i64)>, [(&'a str, i64); 2]);
    let cases: Vec<Case> = vec![
        (vec![("a", 3), ("b", 1), ("c", 2)], [("b", 1), ("c", 2)]),
        (vec![("a", 1), ("b", 2), ("a", 5)], [("b", 2), ("a", 5)]),
        (vec![("a", 1), ("b", 2), ("c", 3)], [("a", 1), ("b", 2)]),
        // An existing path updated above the other swaps them.
        (vec![("a", 1), ("b", 2), ("b", 0)], [("b", 0), ("a", 1)]),
        // The initial entries carry "", so a "" domain updates one in place.
        (vec![("", 4)], [("", 4), ("", i32::MAX as i64)]),
    ];
    for (updates, want) in cases {
        let mut p = CriticalPaths::new();
        for (val, n) in &updates {
            p.update(&v(val), *n);
        }
        let got: Vec<(String, i64)> = p.0.iter().map(|(s, n)| (s.to_string(), *n)).collect();
        let want: Vec<(String, i64)> = want.iter().map(|(s, n)| (s.to_string(), *n)).collect();
        assert_eq!(got, want, "{updates:?}");
    }
}

#[test]
fn soft_constraints_require_all_keys_for_pod_constraints_only() {
    // n3 has no zone label.
    let c = cluster(
        vec![
            zone_node("n1", "z1"),
            zone_node("n2", "z2"),
            node("n3", &[]),
        ],
        vec![
            bound("w1", web(), Some("n1")),
            bound("w2", web(), Some("n3")),
        ],
    );
    let sel = json!({"matchLabels": {"app": "web"}});
    let p = incoming(
        web(),
        json!({"topologySpreadConstraints": [
            constraint("kubernetes.io/hostname", 1, "ScheduleAnyway", sel.clone()),
            constraint("topology.kubernetes.io/zone", 1, "ScheduleAnyway", sel)]}),
    );
    // Pod constraints: n3 ignored (raw 0, normalized 0); hostname size = 2 nodes.
    // n1: 1·ln4 + 0 + 1·ln4 + 0 = 2.77 → 3; n2: 0.
    let got = score_all(&plugin(None), &c, &p, &[]).expect("scored");
    assert_eq!(got, triples(&[("n1", 3, 0), ("n2", 0, 100), ("n3", 0, 0)]));

    // System defaults: n3 is scored on hostname; its zone "" is a domain of size 1.
    let mut c = c;
    let svc: k8s_openapi::api::core::v1::Service = serde_json::from_value(json!({
        "metadata": {"name": "web", "namespace": "default"}, "spec": {"selector": {"app": "web"}}
    }))
    .expect("svc");
    c.services.insert("default/web".into(), svc);
    let p = pod(bound("pending", web(), None));
    // hostname w = ln5 (3 nodes), zone w = ln5 (z1, z2, ""):
    // n1: 1·ln5 + 2 + 1·ln5 + 4 = 9.22 → 9; n2: 0 + 2 + 0 + 4 = 6; n3: ln5 + 2 = 3.6 → 4;
    // normalized 100·(9 + 4 − s)/9.
    let got = score_all(&plugin(None), &c, &p, &[]).expect("scored");
    assert_eq!(
        got,
        triples(&[("n1", 9, 44), ("n2", 6, 77), ("n3", 4, 100)])
    );
}

#[test]
fn prescore_counts_only_domains_of_feasible_nodes() {
    let c = cluster(
        vec![
            zone_node("a1", "zone-a"),
            zone_node("a2", "zone-a"),
            zone_node("b1", "zone-b"),
        ],
        vec![
            bound("w1", web(), Some("a1")),
            bound("w2", web(), Some("b1")),
        ],
    );
    let p = incoming(
        web(),
        json!({"topologySpreadConstraints": [constraint("topology.kubernetes.io/zone", 1, "ScheduleAnyway", json!({"matchLabels": {"app": "web"}}))]}),
    );
    let pl = plugin(None);
    // Only a2 feasible: zone-a counts w1 (from a1, infeasible but same domain); size 1.
    let data = pl
        .pre_score_state(&c, &p, &[c.node("a2").expect("a2")])
        .expect("ok")
        .expect("state");
    assert_eq!(data.count(0, "zone-a"), Some(1));
    assert_eq!(data.count(0, "zone-b"), None);
    assert!((data.weights[0] - 3f64.ln()).abs() < 1e-12);
}

#[test]
fn normalize_all_zero_gives_max() {
    let c = cluster(
        vec![zone_node("a1", "zone-a"), zone_node("b1", "zone-b")],
        vec![],
    );
    let p = incoming(
        web(),
        json!({"topologySpreadConstraints": [constraint("topology.kubernetes.io/zone", 1, "ScheduleAnyway", json!({"matchLabels": {"app": "web"}}))]}),
    );
    let got = score_all(&plugin(None), &c, &p, &[]).expect("scored");
    assert_eq!(got, triples(&[("a1", 0, 100), ("b1", 0, 100)]));
}

#[test]
fn bad_selector_is_an_error() {
    let c = cluster(vec![zone_node("a1", "zone-a")], vec![]);
    let bad = json!({"matchExpressions": [{"key": "app", "operator": "Foo"}]});
    let cases = [
        (
            "DoNotSchedule",
            "obtaining pod's hard topology spread constraints: \"Foo\" is not a valid label selector operator",
        ),
        (
            "ScheduleAnyway",
            "calculating preScoreState: obtaining pod's soft topology spread constraints: \"Foo\" is not a valid label selector operator",
        ),
    ];
    let pl = plugin(None);
    let cx = Ctx {
        cluster: &c,
        now: now(),
    };
    for (action, want) in cases {
        let p = incoming(
            web(),
            json!({"topologySpreadConstraints": [constraint("topology.kubernetes.io/zone", 1, action, bad.clone())]}),
        );
        let st = if action == "DoNotSchedule" {
            pl.pre_filter(&cx, &mut CycleState::default(), &p).1
        } else {
            let nodes: Vec<&NodeInfo> = c.nodes().iter().collect();
            pl.pre_score(&cx, &mut CycleState::default(), &p, &nodes)
        };
        assert_eq!(st.code, Code::Error, "{action}");
        assert_eq!(st.message(), want);
    }
}

#[test]
fn args_defaults_and_validation() {
    let ok = default_args(None, "p").expect("default");
    assert_eq!(ok, json!({"defaultingType": "System"}));
    let list = json!({"defaultingType": "List", "defaultConstraints": [
        {"maxSkew": 2, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway"}]});
    assert_eq!(
        default_args(Some(&list), "p").expect("list")["defaultingType"],
        "List"
    );
    let empty_list = json!({"defaultingType": "List"});
    assert!(default_args(Some(&empty_list), "p").is_ok());

    let c = |skew: i64, key: &str, action: &str| json!({"maxSkew": skew, "topologyKey": key, "whenUnsatisfiable": action});
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (
            json!({"defaultingType": "Other"}),
            vec![
                r#"p.defaultingType: Unsupported value: "Other": supported values: "System", "List""#,
            ],
        ),
        (
            json!({"defaultConstraints": [c(1, "zone", "DoNotSchedule")]}),
            vec![
                r#"p.defaultingType: Invalid value: "System": when .defaultConstraints are not empty"#,
            ],
        ),
        (
            json!({"defaultingType": "List", "defaultConstraints": [c(0, "zone", "DoNotSchedule")]}),
            vec!["p.defaultConstraints[0].maxSkew: Invalid value: 0: not in valid range (0, inf)"],
        ),
        (
            json!({"defaultingType": "List", "defaultConstraints": [c(1, "", "DoNotSchedule")]}),
            vec!["p.defaultConstraints[0].topologyKey: Required value: can not be empty"],
        ),
        (
            json!({"defaultingType": "List", "defaultConstraints": [c(1, "bad key", "DoNotSchedule")]}),
            vec![
                "p.defaultConstraints[0].topologyKey: Invalid value: \"bad key\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
            ],
        ),
        (
            json!({"defaultingType": "List", "defaultConstraints": [c(1, "Bad_/zone", "DoNotSchedule")]}),
            vec![
                "p.defaultConstraints[0].topologyKey: Invalid value: \"Bad_/zone\": prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
            ],
        ),
        (
            json!({"defaultingType": "List", "defaultConstraints": [c(1, "zone", "")]}),
            vec!["p.defaultConstraints[0].whenUnsatisfiable: Required value: can not be empty"],
        ),
        (
            json!({"defaultingType": "List", "defaultConstraints": [c(1, "zone", "Maybe")]}),
            vec![
                r#"p.defaultConstraints[0].whenUnsatisfiable: Unsupported value: "Maybe": supported values: "DoNotSchedule", "ScheduleAnyway""#,
            ],
        ),
        (
            json!({"defaultingType": "List", "defaultConstraints": [
                {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {}}]}),
            vec![
                "p.defaultConstraints[0].labelSelector: Forbidden: constraint must not define a selector, as they deduced for each pod",
            ],
        ),
        (
            json!({"defaultingType": "List", "defaultConstraints": [
                c(1, "zone", "DoNotSchedule"), c(2, "zone", "ScheduleAnyway"), c(3, "zone", "DoNotSchedule")]}),
            vec![r#"p.defaultConstraints[2]: Duplicate value: "{zone, DoNotSchedule}""#],
        ),
        (
            json!({"defaultingType": "List", "defaultConstraints": [c(-1, "", "")]}),
            vec![
                "p.defaultConstraints[0].maxSkew: Invalid value: -1: not in valid range (0, inf)",
                "p.defaultConstraints[0].topologyKey: Required value: can not be empty",
                "p.defaultConstraints[0].whenUnsatisfiable: Required value: can not be empty",
            ],
        ),
    ];
    for (args, want) in cases {
        let got = default_args(Some(&args), "p").expect_err("invalid");
        assert_eq!(got, want, "{args}");
    }
    // The constructor validates too (path-less, as upstream's New).
    let bad = json!({"defaultingType": "Other"});
    let err = new(&bad, &Default::default()).err().expect("rejected");
    assert_eq!(
        err,
        r#"defaultingType: Unsupported value: "Other": supported values: "System", "List""#
    );
    assert!(new(&json!({"defaultingType": "System"}), &Default::default()).is_ok());
}

#[test]
fn qualified_names() {
    let long = "a".repeat(64);
    let cases: Vec<(&str, usize)> = vec![
        ("kubernetes.io/hostname", 0),
        ("topology.kubernetes.io/zone", 0),
        ("rack", 0),
        ("My.Name_1", 0),
        ("-bad", 1),
        ("a/b/c", 1),
        ("/x", 1),
        ("x/", 2),
        (&long, 1),
    ];
    for (v, n) in cases {
        assert_eq!(
            qualified_name_errors(v).len(),
            n,
            "{v}: {:?}",
            qualified_name_errors(v)
        );
    }
}

/// Counting through the label index equals counting every node's pods.
#[test]
fn indexed_counts_equal_a_full_walk() {
    let mut pods = Vec::new();
    for i in 0..120 {
        let app = ["web", "db", "x"][i % 3];
        let mut labels = json!({ "app": app });
        if i % 4 == 0 {
            labels["tier"] = "fe".into();
        }
        let mut v = bound(
            &format!("p{i}"),
            labels,
            Some(["a1", "a2", "b1", "b2", "c1", "gone"][i % 6]),
        );
        if i % 5 == 0 {
            v["metadata"]["namespace"] = "other".into();
        }
        if i % 11 == 0 {
            v["metadata"]["deletionTimestamp"] = "2025-01-01T00:00:00Z".into();
        }
        pods.push(v);
    }
    let c = cluster(six_zone_nodes(), pods);
    let selectors = [
        json!({"matchLabels": {"app": "web"}}),
        json!({"matchLabels": {"app": "web", "tier": "fe"}}),
        json!({"matchExpressions": [{"key": "app", "operator": "In", "values": ["db", "x"]}]}),
        json!({"matchExpressions": [{"key": "tier", "operator": "Exists"}]}),
        json!({"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["db"]}]}),
        json!({}),
    ];
    for sel in selectors {
        let s = label_selector(Some(&serde_json::from_value(sel.clone()).expect("sel")))
            .expect("parse");
        let want: Vec<i64> = c
            .nodes()
            .iter()
            .map(|n| count_matching(&n.pods, &s, &Sym::new("default")))
            .collect();
        assert_eq!(counts_per_node(&c, &s, &Sym::new("default")), want, "{sel}");
    }
}

/// `cargo test --release --lib plugins::perf -- --ignored --nocapture`.
#[test]
#[ignore]
fn perf_large_cluster() {
    use std::time::Instant;
    let t0 = Instant::now();
    let c = perf_cluster(5000, 30);
    eprintln!("built cluster in {:?}", t0.elapsed());
    let cx = Ctx {
        cluster: &c,
        now: now(),
    };
    let pl = plugin(None);
    let sel = json!({"matchLabels": {"app": "app-7"}});
    let cases = [
        (
            "hard zone",
            json!([constraint(
                "topology.kubernetes.io/zone",
                1,
                "DoNotSchedule",
                sel.clone()
            )]),
        ),
        (
            "hard hostname",
            json!([constraint(
                "kubernetes.io/hostname",
                1,
                "DoNotSchedule",
                sel.clone()
            )]),
        ),
        (
            "soft zone+hostname",
            json!([
                constraint("kubernetes.io/hostname", 1, "ScheduleAnyway", sel.clone()),
                constraint(
                    "topology.kubernetes.io/zone",
                    1,
                    "ScheduleAnyway",
                    sel.clone()
                )
            ]),
        ),
    ];
    for (name, tsc) in cases {
        let pending = incoming(
            json!({"app": "app-7"}),
            json!({"topologySpreadConstraints": tsc}),
        );
        for _ in 0..4 {
            let t = Instant::now();
            let cpu0 = crate::engine::plugins::pod_topology_spread::thread_cpu_ns();
            let mut state = CycleState::default();
            let (_, st) = pl.pre_filter(&cx, &mut state, &pending);
            let t_pre = t.elapsed();
            let mut feasible = Vec::new();
            if st.is_success() {
                for n in c.nodes() {
                    if pl.filter(&cx, &state, &pending, n).is_success() {
                        feasible.push(n);
                    }
                }
            } else {
                feasible.extend(c.nodes());
            }
            let t_filter = t.elapsed();
            let st = pl.pre_score(&cx, &mut state, &pending, &feasible);
            let mut scores = Vec::new();
            if st.is_success() {
                for n in &feasible {
                    let i = c.node_position(n.name()).expect("node");
                    scores.push(NodeScore {
                        node: i,
                        score: pl.score(&cx, &state, &pending, n).0,
                    });
                }
                pl.normalize_score(&cx, &state, &pending, &mut scores);
            }
            eprintln!(
                "PodTopologySpread {name}: prefilter {t_pre:?}, +filter {t_filter:?}, total {:?} ({} feasible) cpu {} ms",
                t.elapsed(),
                feasible.len(),
                (crate::engine::plugins::pod_topology_spread::thread_cpu_ns() - cpu0) / 1_000_000
            );
        }
    }
}

#[test]
#[ignore]
fn perf_baseline_scan() {
    use std::time::Instant;
    let c = perf_cluster(5000, 30);
    for _ in 0..4 {
        let t = Instant::now();
        let cpu0 = thread_cpu_ns();
        let mut n = 0usize;
        for info in c.nodes() {
            for p in &info.pods {
                n += p.labels.len();
            }
        }
        let t1 = t.elapsed();
        let mut m = 0usize;
        for info in c.nodes() {
            for p in &info.pods {
                m += usize::from(p.labels.get("app").is_some_and(|v| v == "app-7"));
            }
        }
        eprintln!(
            "touch all pods: {t1:?} ({n}); label lookup: {:?} ({m}); cpu {} ms",
            t.elapsed() - t1,
            (thread_cpu_ns() - cpu0) / 1_000_000
        );
    }
}

/// Filter and Score read a node's domain by its position when it is one of the
/// cluster's own nodes, and its labels when it is a copy (preemption's): both must
/// agree, for nodes without the key and with the key set to "" too.
#[test]
fn own_nodes_and_copies_get_the_same_filter_and_score() {
    let c = cluster(
        vec![
            zone_node("a1", "zone-a"),
            zone_node("a2", "zone-a"),
            zone_node("b1", "zone-b"),
            zone_node("e1", ""),
            node("none", &[]),
        ],
        vec![
            bound("w1", web(), Some("a1")),
            bound("w2", web(), Some("a2")),
            bound("w3", web(), Some("e1")),
            bound("w4", web(), Some("none")),
        ],
    );
    let zone = "topology.kubernetes.io/zone";
    let host = "kubernetes.io/hostname";
    let sel = json!({"matchLabels": {"app": "web"}});
    let cases = [
        (
            "hard zone",
            json!([constraint(zone, 1, "DoNotSchedule", sel.clone())]),
        ),
        (
            "soft zone",
            json!([constraint(zone, 1, "ScheduleAnyway", sel.clone())]),
        ),
        (
            "soft zone and hostname",
            json!([
                constraint(zone, 2, "ScheduleAnyway", sel.clone()),
                constraint(host, 1, "ScheduleAnyway", sel.clone())
            ]),
        ),
    ];
    let pl = plugin(None);
    let cx = Ctx {
        cluster: &c,
        now: now(),
    };
    for (name, constraints) in cases {
        let p = incoming(web(), json!({"topologySpreadConstraints": constraints}));
        let mut state = CycleState::default();
        let (_, pre) = pl.pre_filter(&cx, &mut state, &p);
        let nodes: Vec<&NodeInfo> = c.nodes().iter().collect();
        let pre_score = pl.pre_score(&cx, &mut state, &p, &nodes);
        for n in c.nodes() {
            let copy = n.clone();
            if pre.is_success() {
                assert_eq!(
                    pl.filter(&cx, &state, &p, n),
                    pl.filter(&cx, &state, &p, &copy),
                    "{name}: filter on {}",
                    n.name()
                );
            }
            if pre_score.is_success() {
                assert_eq!(
                    pl.score(&cx, &state, &p, n),
                    pl.score(&cx, &state, &p, &copy),
                    "{name}: score on {}",
                    n.name()
                );
            }
        }
    }
}

#[test]
fn node_domains_intern_values_and_read_a_missing_label_as_empty() {
    let c = cluster(
        vec![
            zone_node("a1", "zone-a"),
            node("none", &[]),
            zone_node("b1", "zone-b"),
            zone_node("a2", "zone-a"),
        ],
        vec![],
    );
    let d = node_domains(&c, "topology.kubernetes.io/zone");
    let names: Vec<&str> = d.names.iter().map(|n| &**n).collect();
    assert_eq!(names, ["zone-a", "zone-b"]);
    assert_eq!(d.ids, [0, 0, 1, NO_DOMAIN]); // nodes in name order: a1 a2 b1 none
    assert_eq!(d.value_slot(3), 2, "no label: the slot after the names");
    let with_empty = cluster(vec![zone_node("e", ""), node("none", &[])], vec![]);
    let d = node_domains(&with_empty, "topology.kubernetes.io/zone");
    assert_eq!(
        d.value_slot(0),
        d.value_slot(1),
        "a missing label reads as \"\""
    );
}

/// Nodes are asked one by one only when an inclusion policy can exclude some: a
/// constraint honoring taints, or one honoring node affinity for a pod that has some.
#[test]
fn every_node_is_included_only_without_a_policy_to_apply() {
    let c = |affinity: bool, taints: bool| Constraint {
        max_skew: 1,
        topology_key: LABEL_ZONE.into(),
        selector: Selector::default(),
        min_domains: 1,
        honor_node_affinity: affinity,
        honor_node_taints: taints,
    };
    let free = RequiredNodeAffinity::from_pod(&pod(json!({"metadata": {"name": "p"},
        "spec": {"containers": []}})));
    let selecting = RequiredNodeAffinity::from_pod(&pod(json!({"metadata": {"name": "p"},
        "spec": {"containers": [], "nodeSelector": {"disk": "ssd"}}})));
    let empty_selector = RequiredNodeAffinity::from_pod(&pod(json!({"metadata": {"name": "p"},
        "spec": {"containers": [], "nodeSelector": {}}})));
    let required = RequiredNodeAffinity::from_pod(&pod(json!({"metadata": {"name": "p"},
        "spec": {"containers": [], "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
            {"nodeSelectorTerms": [{"matchExpressions": [
                {"key": "disk", "operator": "In", "values": ["ssd"]}]}]}}}}})));
    for (row, constraints, affinity, want) in [
        (0, vec![c(true, false)], &free, true),
        (1, vec![c(true, false)], &empty_selector, true),
        (2, vec![c(true, false)], &selecting, false),
        (3, vec![c(true, false)], &required, false),
        (4, vec![c(false, false)], &selecting, true),
        (5, vec![c(false, false), c(false, true)], &free, false),
        (6, vec![], &selecting, true),
    ] {
        assert_eq!(
            Inclusion::includes_every_node(&constraints, affinity),
            want,
            "row {row}"
        );
    }
}
