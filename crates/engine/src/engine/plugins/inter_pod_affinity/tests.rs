//! Table-driven tests; scenarios h39–h44 are rebuilt with the model builders and
//! checked against the real scheduler's verdicts and scores.

use std::sync::Arc;

use serde_json::{Value, json};

use super::filtering::{PRE_FILTER_STATE_KEY, PreFilterState};
use super::*;
use crate::engine::status::{Code, Status};
use crate::model::NodeInfo;
use crate::model::testing::{cluster, pod};

fn now() -> k8s_openapi::jiff::Timestamp {
    k8s_openapi::jiff::Timestamp::UNIX_EPOCH
}

fn node(name: &str, zone: Option<&str>) -> Value {
    let mut labels = json!({"kubernetes.io/hostname": name});
    if let Some(z) = zone {
        labels["topology.kubernetes.io/zone"] = z.into();
    }
    json!({"metadata": {"name": name, "labels": labels},
           "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}})
}

fn six_nodes() -> Vec<Value> {
    ["a1", "a2", "b1", "b2", "c1", "c2"]
        .iter()
        .map(|n| node(n, Some(&format!("zone-{}", &n[..1]))))
        .collect()
}

/// A pod in `ns` with labels and optional affinity, bound to `node` when given.
fn p(ns: &str, name: &str, labels: Value, node: Option<&str>, affinity: Value) -> Value {
    let mut v = json!({"metadata": {"name": name, "namespace": ns, "uid": format!("{ns}/{name}"), "labels": labels},
                       "spec": {"containers": [{"name": "c", "image": "i"}]}});
    if let Some(n) = node {
        v["spec"]["nodeName"] = n.into();
    }
    if !affinity.is_null() {
        v["spec"]["affinity"] = affinity;
    }
    v
}

fn app(a: &str) -> Value {
    json!({"app": a})
}

fn term(key: &str, selector: Value) -> Value {
    json!({"topologyKey": key, "labelSelector": selector})
}

fn sel(a: &str) -> Value {
    json!({"matchLabels": {"app": a}})
}

const ZONE: &str = "topology.kubernetes.io/zone";
const HOST: &str = "kubernetes.io/hostname";

fn required(kind: &str, terms: Value) -> Value {
    json!({kind: {"requiredDuringSchedulingIgnoredDuringExecution": terms}})
}

fn plugin(args: Option<Value>) -> InterPodAffinity {
    let v = default_args(args.as_ref(), "args").expect("valid args");
    InterPodAffinity::with_args(serde_json::from_value(v).expect("args"))
}

/// PreFilter, then Filter on every node; `Err` = the PreFilter status.
fn filter_all(
    pl: &InterPodAffinity,
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

fn verdicts(r: &[(String, Status)]) -> Vec<String> {
    r.iter()
        .map(|(n, s)| {
            let v = match (s.code, s.reasons.first().map(String::as_str)) {
                (Code::Success, _) => "ok",
                (Code::UnschedulableAndUnresolvable, Some(ERR_REASON_AFFINITY_RULES_NOT_MATCH)) => {
                    "affinity"
                }
                (Code::Unschedulable, Some(ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH)) => "anti",
                (Code::Unschedulable, Some(ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH)) => {
                    "existing"
                }
                _ => "other",
            };
            format!("{n}:{v}")
        })
        .collect()
}

fn strs(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// PreScore, Score, NormalizeScore over all nodes: `None` = PreScore skipped.
fn score_all(pl: &InterPodAffinity, c: &Cluster, p: &Pod) -> Option<Vec<(String, i64, i64)>> {
    let cx = Ctx {
        cluster: c,
        now: now(),
    };
    let mut state = CycleState::default();
    let nodes: Vec<&NodeInfo> = c.nodes().iter().collect();
    let st = pl.pre_score(&cx, &mut state, p, &nodes);
    if st.is_skip() {
        return None;
    }
    assert!(st.is_success(), "{st:?}");
    let mut scores: Vec<NodeScore> = nodes
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let (s, st) = pl.score(&cx, &state, p, n);
            assert!(st.is_success());
            NodeScore { node: i, score: s }
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

#[test]
fn h39_required_affinity_same_zone() {
    let c = cluster(
        six_nodes(),
        vec![
            p("default", "db", app("db"), Some("b2"), Value::Null),
            p("default", "web", app("web"), Some("a1"), Value::Null),
        ],
    );
    let pending = pod(p(
        "default",
        "pending",
        app("api"),
        None,
        required("podAffinity", json!([term(ZONE, sel("db"))])),
    ));
    let r = filter_all(&plugin(None), &c, &pending).expect("prefilter");
    assert_eq!(
        verdicts(&r),
        strs(&[
            "a1:affinity",
            "a2:affinity",
            "b1:ok",
            "b2:ok",
            "c1:affinity",
            "c2:affinity"
        ])
    );
    // No preferred terms anywhere and no existing pod with affinity: PreScore skips.
    assert!(score_all(&plugin(None), &c, &pending).is_none());
}

#[test]
fn h40_required_anti_affinity_hostname() {
    let c = cluster(
        ["n1", "n2", "n3", "n4"]
            .iter()
            .map(|n| node(n, None))
            .collect(),
        vec![
            p("default", "w1", app("web"), Some("n1"), Value::Null),
            p("default", "w2", app("web"), Some("n2"), Value::Null),
            p("default", "o1", app("other"), Some("n3"), Value::Null),
        ],
    );
    let pending = pod(p(
        "default",
        "pending",
        app("web"),
        None,
        required("podAntiAffinity", json!([term(HOST, sel("web"))])),
    ));
    let r = filter_all(&plugin(None), &c, &pending).expect("prefilter");
    assert_eq!(
        verdicts(&r),
        strs(&["n1:anti", "n2:anti", "n3:ok", "n4:ok"])
    );
}

#[test]
fn h41_existing_pods_anti_affinity_blocks_zone() {
    let c = cluster(
        six_nodes(),
        vec![p(
            "default",
            "loner",
            app("loner"),
            Some("b1"),
            required("podAntiAffinity", json!([term(ZONE, sel("web"))])),
        )],
    );
    let web = pod(p("default", "pending", app("web"), None, Value::Null));
    let r = filter_all(&plugin(None), &c, &web).expect("prefilter");
    assert_eq!(
        verdicts(&r),
        strs(&[
            "a1:ok",
            "a2:ok",
            "b1:existing",
            "b2:existing",
            "c1:ok",
            "c2:ok"
        ])
    );
    // A pod the loner's term does not select: nothing to check, PreFilter skips.
    let other = pod(p("default", "pending", app("other"), None, Value::Null));
    let cx = Ctx {
        cluster: &c,
        now: now(),
    };
    let (_, st) = plugin(None).pre_filter(&cx, &mut CycleState::default(), &other);
    assert!(st.is_skip());
}

fn h42_cluster() -> Cluster {
    let preferred = |kind: &str, w: i64, t: Value| json!({kind: {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": w, "podAffinityTerm": t}]}});
    cluster(
        six_nodes(),
        vec![
            p("default", "cache1", app("cache"), Some("a1"), Value::Null),
            p("default", "cache2", app("cache"), Some("b1"), Value::Null),
            p("default", "web1", app("web"), Some("b2"), Value::Null),
            p(
                "default",
                "fan",
                app("fan"),
                Some("c1"),
                preferred("podAffinity", 30, term(HOST, sel("api"))),
            ),
            p(
                "default",
                "hard",
                app("hard"),
                Some("c2"),
                required("podAffinity", json!([term(ZONE, sel("api"))])),
            ),
        ],
    )
}

fn h42_pending() -> Pod {
    pod(p(
        "default",
        "pending",
        app("api"),
        None,
        json!({
            "podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 80, "podAffinityTerm": term(HOST, sel("cache"))}]},
            "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 50, "podAffinityTerm": term(ZONE, sel("web"))}]}
        }),
    ))
}

#[test]
fn h42_preferred_terms_both_directions_and_hard_weight() {
    let c = h42_cluster();
    let pending = h42_pending();
    type Case<'a> = (Value, Vec<(&'a str, i64, i64)>);
    let cases: Vec<Case> = vec![
        (
            json!({}),
            vec![
                ("a1", 80, 100),
                ("a2", 0, 38),
                ("b1", 30, 61),
                ("b2", -50, 0),
                ("c1", 31, 62),
                ("c2", 1, 39),
            ],
        ),
        // hardPodAffinityWeight 0: the existing required term no longer counts.
        (
            json!({"hardPodAffinityWeight": 0}),
            vec![
                ("a1", 80, 100),
                ("a2", 0, 38),
                ("b1", 30, 61),
                ("b2", -50, 0),
                ("c1", 30, 61),
                ("c2", 0, 38),
            ],
        ),
        // Weight 10 for it: zone-c +10.
        (
            json!({"hardPodAffinityWeight": 10}),
            vec![
                ("a1", 80, 100),
                ("a2", 0, 38),
                ("b1", 30, 61),
                ("b2", -50, 0),
                ("c1", 40, 69),
                ("c2", 10, 46),
            ],
        ),
        // The pod has preferred terms, so existing pods' terms still count.
        (
            json!({"ignorePreferredTermsOfExistingPods": true}),
            vec![
                ("a1", 80, 100),
                ("a2", 0, 38),
                ("b1", 30, 61),
                ("b2", -50, 0),
                ("c1", 31, 62),
                ("c2", 1, 39),
            ],
        ),
    ];
    for (args, want) in cases {
        let got = score_all(&plugin(Some(args.clone())), &c, &pending).expect("scored");
        assert_eq!(got, triples(&want), "{args}");
    }
}

#[test]
fn existing_pods_terms_alone_and_ignore_flag() {
    let c = h42_cluster();
    // A plain api pod: only fan (+30 on c1) and hard (+1 on zone-c) count.
    let plain = pod(p("default", "pending", app("api"), None, Value::Null));
    let got = score_all(&plugin(None), &c, &plain).expect("scored");
    assert_eq!(
        got,
        triples(&[
            ("a1", 0, 0),
            ("a2", 0, 0),
            ("b1", 0, 0),
            ("b2", 0, 0),
            ("c1", 31, 100),
            ("c2", 1, 3)
        ])
    );
    let ignoring = plugin(Some(json!({"ignorePreferredTermsOfExistingPods": true})));
    assert!(score_all(&ignoring, &c, &plain).is_none());
    // Nothing matches a "db" pod: no entry at all, PreScore skips.
    let db = pod(p("default", "pending", app("db"), None, Value::Null));
    assert!(score_all(&plugin(None), &c, &db).is_none());
}

#[test]
fn normalize_equal_scores_to_zero() {
    // Every node gets +5 through its own zone: min == max → all 0.
    let c = cluster(
        vec![node("a1", Some("z")), node("a2", Some("z"))],
        vec![p("default", "x", app("x"), Some("a1"), Value::Null)],
    );
    let pending = pod(p(
        "default",
        "pending",
        app("api"),
        None,
        json!({"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 5, "podAffinityTerm": term(ZONE, sel("x"))}]}}),
    ));
    let got = score_all(&plugin(None), &c, &pending).expect("scored");
    assert_eq!(got, triples(&[("a1", 5, 0), ("a2", 5, 0)]));
}

fn h43_cluster() -> Cluster {
    let mut c = cluster(
        six_nodes(),
        vec![
            p("dev", "db-dev", app("db"), Some("a1"), Value::Null),
            p("prod", "db-prod", app("db"), Some("c2"), Value::Null),
            p("default", "db-default", app("db"), Some("b1"), Value::Null),
        ],
    );
    for (name, env) in [("prod", "prod"), ("dev", "dev")] {
        let ns: k8s_openapi::api::core::v1::Namespace =
            serde_json::from_value(json!({"metadata": {"name": name, "labels": {"env": env}}}))
                .expect("ns");
        c.namespaces.insert(name.into(), ns);
    }
    c
}

#[test]
fn h43_namespace_selection() {
    let c = h43_cluster();
    let with = |extra: Value| {
        let mut t = term(ZONE, sel("db"));
        for (k, v) in extra.as_object().expect("obj") {
            t[k] = v.clone();
        }
        pod(p(
            "default",
            "pending",
            app("api"),
            None,
            required("podAffinity", json!([t])),
        ))
    };
    let a = "a1:ok,a2:ok";
    let b = "b1:ok,b2:ok";
    let cc = "c1:ok,c2:ok";
    let cases: Vec<(&str, Value, Vec<&str>)> = vec![
        (
            "h43 env=prod",
            json!({"namespaceSelector": {"matchLabels": {"env": "prod"}}}),
            vec![cc],
        ),
        ("own namespace", json!({}), vec![b]),
        ("listed", json!({"namespaces": ["dev"]}), vec![a]),
        (
            "listed + selector",
            json!({"namespaces": ["dev"], "namespaceSelector": {"matchLabels": {"env": "prod"}}}),
            vec![a, cc],
        ),
        ("{} = all", json!({"namespaceSelector": {}}), vec![a, b, cc]),
        // [QUIRK] the kept selector matches the empty label set: every namespace.
        (
            "NotIn quirk",
            json!({"namespaceSelector": {"matchExpressions": [{"key": "env", "operator": "NotIn", "values": ["prod"]}]}}),
            vec![a, b, cc],
        ),
        (
            "metadata.name",
            json!({"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "dev"}}}),
            vec![a],
        ),
        (
            "no match",
            json!({"namespaceSelector": {"matchLabels": {"env": "qa"}}}),
            vec![],
        ),
    ];
    for (name, extra, ok) in cases {
        let r = filter_all(&plugin(None), &c, &with(extra)).expect("prefilter");
        let ok: Vec<&str> = ok.iter().flat_map(|s| s.split(',')).collect();
        let got: Vec<String> = verdicts(&r)
            .into_iter()
            .filter(|v| v.ends_with(":ok"))
            .collect();
        assert_eq!(got, strs(&ok), "{name}");
    }
}

#[test]
fn existing_anti_affinity_namespace_rules() {
    // An existing pod in `prod` with anti-affinity to app=web selecting namespaces by
    // label: the incoming pod's namespace labels decide.
    let c = h43_cluster();
    let anti = |extra: Value| {
        let mut t = term(ZONE, sel("web"));
        for (k, v) in extra.as_object().expect("obj") {
            t[k] = v.clone();
        }
        required("podAntiAffinity", json!([t]))
    };
    let cases: Vec<(&str, Value, &str, bool)> = vec![
        ("own ns only, incoming in dev", json!({}), "dev", false),
        ("own ns only, incoming in prod", json!({}), "prod", true),
        (
            "selector env=dev",
            json!({"namespaceSelector": {"matchLabels": {"env": "dev"}}}),
            "dev",
            true,
        ),
        (
            "selector env=dev, incoming in prod",
            json!({"namespaceSelector": {"matchLabels": {"env": "dev"}}}),
            "prod",
            false,
        ),
        (
            "selector {}",
            json!({"namespaceSelector": {}}),
            "default",
            true,
        ),
        (
            "listed",
            json!({"namespaces": ["default"]}),
            "default",
            true,
        ),
        // A namespace that does not exist still has its metadata.name label.
        (
            "by name",
            json!({"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "default"}}}),
            "default",
            true,
        ),
    ];
    for (name, extra, incoming_ns, blocked) in cases {
        let mut c = c.clone();
        c.upsert_pod(pod(p(
            "prod",
            "guard",
            app("guard"),
            Some("a1"),
            anti(extra),
        )));
        let incoming = pod(p(incoming_ns, "pending", app("web"), None, Value::Null));
        let verdict = match filter_all(&plugin(None), &c, &incoming) {
            Err(st) => {
                assert!(st.is_skip(), "{name}");
                "a1:ok".to_string()
            }
            Ok(r) => verdicts(&r)[0].clone(),
        };
        let want = if blocked { "a1:existing" } else { "a1:ok" };
        assert_eq!(verdict, want, "{name}");
    }
}

#[test]
fn h44_first_pod_of_a_self_affine_group() {
    let c = cluster(six_nodes(), vec![]);
    let solo = |labels: Value| {
        pod(p(
            "default",
            "pending",
            labels,
            None,
            required("podAffinity", json!([term(ZONE, sel("solo"))])),
        ))
    };
    let r = filter_all(&plugin(None), &c, &solo(app("solo"))).expect("prefilter");
    assert!(verdicts(&r).iter().all(|v| v.ends_with(":ok")), "{r:?}");
    // Not matching its own term: no exception.
    let r = filter_all(&plugin(None), &c, &solo(app("other"))).expect("prefilter");
    assert!(
        verdicts(&r).iter().all(|v| v.ends_with(":affinity")),
        "{r:?}"
    );
    // A matching pod exists elsewhere (zone-a): the exception no longer applies, and a
    // node without the topology key always fails.
    let mut nodes = six_nodes();
    nodes.push(node("x1", None));
    let c = cluster(
        nodes,
        vec![p("default", "s", app("solo"), Some("a2"), Value::Null)],
    );
    let r = filter_all(&plugin(None), &c, &solo(app("solo"))).expect("prefilter");
    assert_eq!(
        verdicts(&r),
        strs(&[
            "a1:ok",
            "a2:ok",
            "b1:affinity",
            "b2:affinity",
            "c1:affinity",
            "c2:affinity",
            "x1:affinity"
        ])
    );
}

#[test]
fn affinity_needs_one_pod_matching_all_terms() {
    let c = cluster(
        six_nodes(),
        vec![
            p(
                "default",
                "db",
                json!({"app": "db"}),
                Some("a1"),
                Value::Null,
            ),
            p(
                "default",
                "cache",
                json!({"tier": "cache"}),
                Some("a1"),
                Value::Null,
            ),
            p(
                "default",
                "both",
                json!({"app": "db", "tier": "cache"}),
                Some("c1"),
                Value::Null,
            ),
        ],
    );
    let terms = json!([
        term(ZONE, sel("db")),
        term(HOST, json!({"matchLabels": {"tier": "cache"}}))
    ]);
    let pending = pod(p(
        "default",
        "pending",
        app("api"),
        None,
        required("podAffinity", terms),
    ));
    let r = filter_all(&plugin(None), &c, &pending).expect("prefilter");
    assert_eq!(
        verdicts(&r),
        strs(&[
            "a1:affinity",
            "a2:affinity",
            "b1:affinity",
            "b2:affinity",
            "c1:ok",
            "c2:affinity"
        ])
    );
}

#[test]
fn match_label_keys_on_both_sides() {
    // Incoming anti-affinity on hostname with matchLabelKeys [rev]: only pods of the
    // same revision repel; mismatchLabelKeys: only pods of other revisions.
    let rev = |r: &str| json!({"app": "web", "rev": r});
    let c = cluster(
        ["n1", "n2", "n3"].iter().map(|n| node(n, None)).collect(),
        vec![
            p("default", "old", rev("1"), Some("n1"), Value::Null),
            p("default", "new", rev("2"), Some("n2"), Value::Null),
        ],
    );
    let cases: Vec<(&str, Vec<&str>)> = vec![
        ("matchLabelKeys", vec!["n1:ok", "n2:anti", "n3:ok"]),
        ("mismatchLabelKeys", vec!["n1:anti", "n2:ok", "n3:ok"]),
    ];
    for (field, want) in cases {
        let mut t = term(HOST, sel("web"));
        t[field] = json!(["rev"]);
        let pending = pod(p(
            "default",
            "pending",
            rev("2"),
            None,
            required("podAntiAffinity", json!([t.clone()])),
        ));
        let r = filter_all(&plugin(None), &c, &pending).expect("prefilter");
        assert_eq!(verdicts(&r), strs(&want), "incoming {field}");

        // The same term on an existing pod (rev 2, on n3) against incoming pods.
        let mut c2 = c.clone();
        c2.upsert_pod(pod(p(
            "default",
            "guard",
            rev("2"),
            Some("n3"),
            required("podAntiAffinity", json!([t])),
        )));
        for (r, blocked) in [
            ("1", field == "mismatchLabelKeys"),
            ("2", field == "matchLabelKeys"),
        ] {
            let incoming = pod(p("default", "pending", rev(r), None, Value::Null));
            let got = match filter_all(&plugin(None), &c2, &incoming) {
                Err(st) => {
                    assert!(st.is_skip());
                    "n3:ok".to_string()
                }
                Ok(v) => verdicts(&v)[2].clone(),
            };
            let want = if blocked { "n3:existing" } else { "n3:ok" };
            assert_eq!(got, want, "existing {field}, incoming rev {r}");
        }
    }
}

#[test]
fn add_and_remove_pod() {
    let c = cluster(
        six_nodes(),
        vec![p("default", "db", app("db"), Some("b1"), Value::Null)],
    );
    let pending = pod(p(
        "default",
        "pending",
        app("api"),
        None,
        json!({
            "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term(ZONE, sel("db"))]},
            "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term(HOST, sel("cache"))]}
        }),
    ));
    let pl = plugin(None);
    let cx = Ctx {
        cluster: &c,
        now: now(),
    };
    let mut state = CycleState::default();
    assert!(pl.pre_filter(&cx, &mut state, &pending).1.is_success());
    let node = |n: &str| c.node(n).expect("node");
    let verdict = |state: &CycleState, n: &str| {
        verdicts(&[(n.to_string(), pl.filter(&cx, state, &pending, node(n)))])[0].clone()
    };
    assert_eq!(verdict(&state, "a1"), "a1:affinity");
    assert_eq!(verdict(&state, "b2"), "b2:ok");

    // A nominated db pod in zone-a satisfies affinity there.
    let db2 = Arc::new(pod(p("default", "db2", app("db"), Some("a1"), Value::Null)));
    assert!(
        pl.add_pod(&cx, &mut state, &pending, &db2, node("a1"))
            .is_success()
    );
    assert_eq!(verdict(&state, "a2"), "a2:ok");
    // A cache pod on b2 repels (incoming anti-affinity).
    let cache = Arc::new(pod(p(
        "default",
        "cache",
        app("cache"),
        Some("b2"),
        Value::Null,
    )));
    assert!(
        pl.add_pod(&cx, &mut state, &pending, &cache, node("b2"))
            .is_success()
    );
    assert_eq!(verdict(&state, "b2"), "b2:anti");
    // A pod whose anti-affinity selects api pods blocks zone-c.
    let guard = Arc::new(pod(p(
        "default",
        "guard",
        app("guard"),
        Some("c1"),
        required("podAntiAffinity", json!([term(ZONE, sel("api"))])),
    )));
    assert!(
        pl.add_pod(&cx, &mut state, &pending, &guard, node("c1"))
            .is_success()
    );
    let s = state
        .read::<PreFilterState>(PRE_FILTER_STATE_KEY)
        .expect("state");
    assert_eq!(s.existing_anti_affinity.get(ZONE, "zone-c"), 1);
    assert_eq!(s.affinity.get(ZONE, "zone-a"), 1);

    // Removing all of them: counts drop back, zero entries are deleted.
    for (pd, n) in [(&db2, "a1"), (&cache, "b2"), (&guard, "c1")] {
        assert!(
            pl.remove_pod(&cx, &mut state, &pending, pd, node(n))
                .is_success()
        );
    }
    let s = state
        .read::<PreFilterState>(PRE_FILTER_STATE_KEY)
        .expect("state");
    assert!(s.existing_anti_affinity.is_empty());
    assert!(s.anti_affinity.is_empty());
    assert_eq!(s.affinity.get(ZONE, "zone-b"), 1);
    assert_eq!(verdict(&state, "a2"), "a2:affinity");

    // Removing the only db pod empties the affinity counts: the pod does not match
    // its own term, so every node fails.
    let db = c.pod("default/db").expect("db").clone();
    assert!(
        pl.remove_pod(&cx, &mut state, &pending, &db, node("b1"))
            .is_success()
    );
    let s = state
        .read::<PreFilterState>(PRE_FILTER_STATE_KEY)
        .expect("state");
    assert!(s.affinity.is_empty());
    assert_eq!(verdict(&state, "b1"), "b1:affinity");

    let mut empty = CycleState::default();
    let st = pl.add_pod(&cx, &mut empty, &pending, &db, node("b1"));
    assert_eq!(
        (st.code, st.message()),
        (
            Code::Error,
            "error reading \"PreFilterInterPodAffinity\" from cycleState: not found".to_string()
        )
    );
}

#[test]
fn parse_errors() {
    let c = cluster(six_nodes(), vec![]);
    let bad = json!({"matchExpressions": [{"key": "app", "operator": "In", "values": []}]});
    let cases: Vec<(Value, &str)> = vec![
        (
            required("podAffinity", json!([term(ZONE, bad.clone())])),
            "parsing pod: requiredAffinityTerms: for 'in', 'notin' operators, values set can't be empty",
        ),
        (
            json!({"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 1, "podAffinityTerm": term(ZONE, bad.clone())}]}}),
            "parsing pod: preferredAntiAffinityTerms: for 'in', 'notin' operators, values set can't be empty",
        ),
        (
            json!({"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term(ZONE, bad.clone())]},
                   "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term(ZONE, json!({"matchExpressions": [{"key": "a", "operator": "Is"}]}))]}}),
            "parsing pod: [requiredAffinityTerms: for 'in', 'notin' operators, values set can't be empty, requiredAntiAffinityTerms: \"Is\" is not a valid label selector operator]",
        ),
    ];
    for (affinity, want) in cases {
        let pending = pod(p("default", "pending", app("api"), None, affinity));
        let st = filter_all(&plugin(None), &c, &pending).expect_err("rejected");
        assert_eq!(st.code, Code::UnschedulableAndUnresolvable);
        assert_eq!(st.message(), want);
    }
    // An existing pod's invalid anti-affinity list is ignored (as upstream's PodInfo
    // drops it), not an error.
    let c = cluster(
        six_nodes(),
        vec![p(
            "default",
            "x",
            app("x"),
            Some("a1"),
            required("podAntiAffinity", json!([term(ZONE, bad)])),
        )],
    );
    let pending = pod(p("default", "pending", app("api"), None, Value::Null));
    let st = filter_all(&plugin(None), &c, &pending).expect_err("skip");
    assert!(st.is_skip());
}

#[test]
fn args_defaults_and_validation() {
    assert_eq!(
        default_args(None, "p").expect("default"),
        json!({"hardPodAffinityWeight": 1, "ignorePreferredTermsOfExistingPods": false})
    );
    assert_eq!(
        default_args(Some(&json!({"hardPodAffinityWeight": 0})), "p").expect("zero ok")["hardPodAffinityWeight"],
        0
    );
    let cases: Vec<(Value, &str)> = vec![
        (
            json!({"hardPodAffinityWeight": 101}),
            "p.hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]",
        ),
        (
            json!({"hardPodAffinityWeight": -1}),
            "p.hardPodAffinityWeight: Invalid value: -1: not in valid range [0, 100]",
        ),
    ];
    for (args, want) in cases {
        assert_eq!(
            default_args(Some(&args), "p").expect_err("invalid"),
            vec![want.to_string()]
        );
    }
    assert_eq!(
        new(&json!({"hardPodAffinityWeight": 200}), &Default::default())
            .err()
            .expect("rejected"),
        "hardPodAffinityWeight: Invalid value: 200: not in valid range [0, 100]"
    );
    assert!(new(&json!({"hardPodAffinityWeight": 2}), &Default::default()).is_ok());
}

/// The label index only narrows which pods are visited: the counts and the score map
/// must equal a walk over every pod, as upstream does it, on a varied cluster.
#[test]
fn indexed_results_equal_a_full_walk() {
    use super::filtering::TopologyCounts;
    use super::scoring::ScoreMap;
    let mut seed = 7u64;
    let mut next = |n: u64| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) % n
    };
    let apps = ["a", "b", "c"];
    let selectors = |i: u64| match i {
        0 => json!({"matchLabels": {"app": "a"}}),
        1 => json!({"matchExpressions": [{"key": "app", "operator": "In", "values": ["b", "c"]}]}),
        2 => json!({"matchExpressions": [{"key": "tier", "operator": "Exists"}]}),
        3 => json!({}),
        4 => json!({"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["a"]}]}),
        _ => json!({"matchLabels": {"app": "b", "tier": "x"}}),
    };
    let keys = [HOST, ZONE, "missing"];
    let term_of = |sel: u64, key: u64, ns: u64| {
        let mut t = term(keys[key as usize], selectors(sel));
        match ns {
            0 => {}
            1 => t["namespaces"] = json!(["dev"]),
            _ => t["namespaceSelector"] = json!({"matchLabels": {"env": "prod"}}),
        }
        t
    };
    let mut pods = Vec::new();
    for i in 0..300u64 {
        let mut labels = json!({"app": apps[next(3) as usize]});
        if next(2) == 0 {
            labels["tier"] = "x".into();
        }
        let mut affinity = json!({});
        if next(3) == 0 {
            affinity["podAntiAffinity"] = json!({"requiredDuringSchedulingIgnoredDuringExecution": [term_of(next(6), next(3), next(3))]});
        }
        if next(3) == 0 {
            affinity["podAffinity"] = json!({
                "requiredDuringSchedulingIgnoredDuringExecution": [term_of(next(6), next(3), next(3))],
                "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1 + next(9) as i64, "podAffinityTerm": term_of(next(6), next(3), next(3))}]});
        }
        if next(4) == 0 {
            let anti = affinity
                .get("podAntiAffinity")
                .cloned()
                .unwrap_or(json!({}));
            let mut anti = anti;
            anti["preferredDuringSchedulingIgnoredDuringExecution"] = json!([{"weight": 1 + next(9) as i64, "podAffinityTerm": term_of(next(6), next(3), next(3))}]);
            affinity["podAntiAffinity"] = anti;
        }
        let ns = ["default", "dev", "prod"][next(3) as usize];
        let node = format!("{}{}", ["a", "b", "c"][next(3) as usize], 1 + next(2));
        let aff = if affinity.as_object().is_some_and(|o| o.is_empty()) {
            Value::Null
        } else {
            affinity
        };
        pods.push(p(ns, &format!("p{i}"), labels, Some(&node), aff));
    }
    let mut c = cluster(six_nodes(), pods);
    for (name, env) in [("prod", "prod"), ("dev", "dev")] {
        let ns: k8s_openapi::api::core::v1::Namespace =
            serde_json::from_value(json!({"metadata": {"name": name, "labels": {"env": env}}}))
                .expect("ns");
        c.namespaces.insert(name.into(), ns);
    }
    // Remove a few pods so the index's deletions are exercised too.
    for i in (0..300).step_by(7) {
        let ns = c
            .pods()
            .find(|p| p.name == format!("p{i}"))
            .map(|p| p.key());
        if let Some(k) = ns {
            c.delete_pod(&k);
        }
    }

    let pl = plugin(None);
    let (mut anti_seen, mut scores_seen) = (0, 0);
    for app_label in apps {
        for ns in ["default", "dev", "prod"] {
            let incoming = pod(p(
                ns,
                "pending",
                json!({"app": app_label, "tier": "x"}),
                None,
                json!({"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 3, "podAffinityTerm": term_of(1, 1, 0)}]}}),
            ));
            let ns_labels = c.namespace_labels(ns);
            // Full walk, as upstream.
            let mut anti = TopologyCounts::default();
            let mut scores = ScoreMap::default();
            for info in c.nodes() {
                for other in info.pods_with_required_anti_affinity() {
                    for t in required_anti_affinity_terms(other) {
                        if raw_terms_valid(required_anti_affinity_terms(other))
                            && raw_term_matches(t, other, &incoming, &ns_labels)
                            && let Some(v) = info.node.labels.get(&t.topology_key)
                        {
                            anti.add(&t.topology_key, v, 1);
                        }
                    }
                }
                for other in &info.pods {
                    let mut terms = parse_pod_terms(&incoming).expect("terms");
                    merge_namespaces(&c, &mut terms.preferred_affinity[0]);
                    if terms.preferred_affinity[0].matches(other, &Labels::new()) {
                        scores.add(ZONE, &info.node, 3);
                    }
                    for t in required_affinity_terms(other) {
                        if raw_term_matches(t, other, &incoming, &ns_labels) {
                            scores.add(&t.topology_key, &info.node, 1);
                        }
                    }
                    for (list, sign) in [
                        (preferred_affinity_terms(other), 1),
                        (preferred_anti_affinity_terms(other), -1),
                    ] {
                        for w in list {
                            if raw_term_matches(&w.pod_affinity_term, other, &incoming, &ns_labels)
                            {
                                scores.add(
                                    &w.pod_affinity_term.topology_key,
                                    &info.node,
                                    sign * w.weight as i64,
                                );
                            }
                        }
                    }
                }
            }
            let got = pl
                .pre_filter_state(&c, &incoming)
                .expect("ok")
                .map(|s| s.existing_anti_affinity)
                .unwrap_or_default();
            assert_eq!(got, anti, "existing anti, app {app_label} in {ns}");
            let got = pl
                .pre_score_state(&c, &incoming)
                .expect("ok")
                .unwrap_or_default();
            assert_eq!(got, scores, "scores, app {app_label} in {ns}");
            anti_seen += usize::from(!anti.is_empty());
            scores_seen += usize::from(!scores.0.is_empty());
        }
    }
    // The walk found something to compare in most cases.
    assert!(
        anti_seen >= 6 && scores_seen >= 6,
        "{anti_seen} {scores_seen}"
    );
}

/// `cargo test --release --lib plugins::perf -- --ignored --nocapture`: PreFilter,
/// Filter on every node, PreScore, Score and Normalize of both plugins on a 5,000-node,
/// 150,000-pod cluster.
#[test]
#[ignore]
fn perf_large_cluster() {
    use std::time::Instant;
    let t0 = Instant::now();
    let c = crate::engine::plugins::pod_topology_spread::perf_cluster(5000, 30);
    eprintln!("built cluster in {:?}", t0.elapsed());
    let cx = Ctx {
        cluster: &c,
        now: now(),
    };
    let pl = plugin(None);
    let cases = [
        (
            "required anti",
            required("podAntiAffinity", json!([term(HOST, sel("app-7"))])),
        ),
        (
            "required affinity",
            required("podAffinity", json!([term(ZONE, sel("app-7"))])),
        ),
        (
            "preferred",
            json!({"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 10, "podAffinityTerm": term(ZONE, sel("app-9"))}]}}),
        ),
        ("none", Value::Null),
    ];
    for (name, affinity) in cases {
        let pending = pod(p("default", "pending", app("app-7"), None, affinity));
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
                for (i, n) in feasible.iter().enumerate() {
                    scores.push(NodeScore {
                        node: i,
                        score: pl.score(&cx, &state, &pending, n).0,
                    });
                }
                pl.normalize_score(&cx, &state, &pending, &mut scores);
            }
            eprintln!(
                "InterPodAffinity {name}: prefilter {t_pre:?}, +filter {t_filter:?}, total {:?} ({} feasible) cpu {} ms, prescore {:?}",
                t.elapsed(),
                feasible.len(),
                (crate::engine::plugins::pod_topology_spread::thread_cpu_ns() - cpu0) / 1_000_000,
                st.code
            );
        }
    }
}
