//! Tests with small test-only plugins (a cpu filter, an unresolvable "taint" filter and
//! a PreFilter with AddPod/RemovePod state) in a hand-built framework.

use std::collections::BTreeSet;
use std::sync::Arc;

use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use serde_json::{Value, json};

use super::evaluator::{Candidate, pick_one_node_for_preemption, select_candidate};
use super::*;
use crate::engine::framework::{FilterPlugin, PreFilterPlugin, PreFilterResult};
use crate::model::testing::{node, pod};
use crate::model::{Cluster, NodeInfo, Pod};

const NOW: &str = "2025-01-01T01:00:00Z";

fn now() -> Timestamp {
    NOW.parse().unwrap()
}

// ---------- test plugins ----------

/// Rejects with U `Insufficient cpu` when the pod's cpu does not fit.
struct CpuFit;
impl Plugin for CpuFit {
    fn name(&self) -> &str {
        "CpuFit"
    }
    fn as_filter(&self) -> Option<&dyn FilterPlugin> {
        Some(self)
    }
}
impl FilterPlugin for CpuFit {
    fn filter(&self, _cx: &Ctx, _s: &CycleState, pod: &Pod, n: &NodeInfo) -> Status {
        if n.requested.milli_cpu + pod.requests.milli_cpu > n.node.allocatable.milli_cpu {
            Status::unschedulable("Insufficient cpu")
        } else {
            Status::success()
        }
    }
}

/// Rejects nodes labelled `tainted` with UU (like an untolerated taint).
struct Tainted;
impl Plugin for Tainted {
    fn name(&self) -> &str {
        "Tainted"
    }
    fn as_filter(&self) -> Option<&dyn FilterPlugin> {
        Some(self)
    }
}
impl FilterPlugin for Tainted {
    fn filter(&self, _cx: &Ctx, _s: &CycleState, _pod: &Pod, n: &NodeInfo) -> Status {
        if n.node.labels.contains_key("tainted") {
            Status::unresolvable("node(s) had untolerated taint(s)")
        } else {
            Status::success()
        }
    }
}

/// Like VolumeRestrictions' ReadWriteOncePod check: PreFilter records every pod
/// labelled `holder` and rejects with U while any exists; RemovePod/AddPod keep the
/// record current, and Filter rejects while it is non-empty.
struct Holder;
const HOLDER_KEY: &str = "PreFilterHolder";
impl Plugin for Holder {
    fn name(&self) -> &str {
        "Holder"
    }
    fn as_pre_filter(&self) -> Option<&dyn PreFilterPlugin> {
        Some(self)
    }
    fn as_filter(&self) -> Option<&dyn FilterPlugin> {
        Some(self)
    }
}
impl PreFilterPlugin for Holder {
    fn pre_filter(&self, cx: &Ctx, s: &mut CycleState, _p: &Pod) -> (PreFilterResult, Status) {
        let holders: BTreeSet<String> = cx
            .cluster
            .pods()
            .filter(|p| p.is_bound() && p.labels.contains_key("holder"))
            .map(|p| p.uid.clone())
            .collect();
        let empty = holders.is_empty();
        s.write(HOLDER_KEY, holders);
        if empty {
            (None, Status::success())
        } else {
            (None, Status::unschedulable("claim in use"))
        }
    }
    fn has_extensions(&self) -> bool {
        true
    }
    fn add_pod(
        &self,
        _cx: &Ctx,
        s: &mut CycleState,
        _p: &Pod,
        add: &Arc<Pod>,
        _n: &NodeInfo,
    ) -> Status {
        if add.labels.contains_key("holder") {
            s.read_mut::<BTreeSet<String>>(HOLDER_KEY)
                .unwrap()
                .insert(add.uid.clone());
        }
        Status::success()
    }
    fn remove_pod(
        &self,
        _cx: &Ctx,
        s: &mut CycleState,
        _p: &Pod,
        rm: &Arc<Pod>,
        _n: &NodeInfo,
    ) -> Status {
        s.read_mut::<BTreeSet<String>>(HOLDER_KEY)
            .unwrap()
            .remove(&rm.uid);
        Status::success()
    }
}
impl FilterPlugin for Holder {
    fn filter(&self, _cx: &Ctx, s: &CycleState, _p: &Pod, _n: &NodeInfo) -> Status {
        match s.read::<BTreeSet<String>>(HOLDER_KEY) {
            Some(h) if !h.is_empty() => Status::unschedulable("claim in use"),
            _ => Status::success(),
        }
    }
}

// ---------- builders ----------

fn framework_with(args: Value, pre_filter: bool) -> Framework {
    let dp = new(&args, &Default::default()).expect("valid args");
    let mut fw = Framework {
        profile_name: "default-scheduler".into(),
        filter: vec![Arc::new(Tainted), Arc::new(CpuFit)],
        post_filter: vec![dp.clone()],
        pre_enqueue: vec![dp],
        ..Default::default()
    };
    if pre_filter {
        let h: Arc<dyn Plugin> = Arc::new(Holder);
        fw.pre_filter.push(h.clone());
        fw.filter.push(h);
    }
    fw
}

fn framework() -> Framework {
    framework_with(Value::Null, false)
}

fn cpu_node(name: &str, cpu: &str) -> Value {
    json!({"metadata": {"name": name}, "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}}})
}

fn tainted_node(name: &str, cpu: &str) -> Value {
    let mut n = cpu_node(name, cpu);
    n["metadata"]["labels"] = json!({"tainted": "yes"});
    n
}

/// A pod of `cpu` with `priority`; bound to `node` when given, started at
/// `00:00:<start>` when given.
fn ppod(name: &str, cpu: &str, priority: i32, node: Option<&str>, start: Option<u32>) -> Value {
    let mut v = json!({
        "metadata": {"name": name, "namespace": "default", "uid": format!("uid-{name}")},
        "spec": {"priority": priority, "containers": [{"name": "c", "image": "i",
            "resources": {"requests": {"cpu": cpu}}}]}
    });
    if let Some(n) = node {
        v["spec"]["nodeName"] = json!(n);
    }
    if let Some(s) = start {
        v["status"] = json!({"startTime": format!("2025-01-01T00:{:02}:{:02}Z", s / 60, s % 60)});
    }
    v
}

fn with_labels(mut v: Value, labels: Value) -> Value {
    v["metadata"]["labels"] = labels;
    v
}

fn pdb(
    name: &str,
    ns: &str,
    selector: Value,
    allowed: i32,
    disrupted: &[&str],
) -> PodDisruptionBudget {
    let disrupted: serde_json::Map<String, Value> = disrupted
        .iter()
        .map(|p| (p.to_string(), json!("2025-01-01T00:00:00Z")))
        .collect();
    serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": ns},
        "spec": {"selector": selector},
        "status": {"disruptionsAllowed": allowed, "currentHealthy": 0, "desiredHealthy": 0,
                   "expectedPods": 0, "disruptedPods": disrupted}
    }))
    .unwrap()
}

fn build(nodes: Vec<Value>, pods: Vec<Value>) -> Cluster {
    let mut c = Cluster::new();
    for n in nodes {
        c.upsert_node(node(n));
    }
    for p in pods {
        c.upsert_pod(pod(p));
    }
    c
}

fn add_pdb(c: &mut Cluster, p: PodDisruptionBudget) {
    let key = format!(
        "{}/{}",
        p.metadata.namespace.clone().unwrap(),
        p.metadata.name.clone().unwrap()
    );
    c.pod_disruption_budgets.insert(key, p);
}

/// PreFilter, Filter on every node, then DefaultPreemption's PostFilter, as the
/// cycle would run them. Returns the filter statuses too.
fn run_cycle(
    c: &Cluster,
    fw: &Framework,
    pending: &str,
) -> (NodeToStatus, Option<PostFilterResult>, Status) {
    let cx = Ctx {
        cluster: c,
        now: now(),
    };
    let p = c.pod(pending).expect("pending pod").clone();
    let mut state = CycleState::default();
    let mut pre_filter_status = Status::success();
    for pl in &fw.pre_filter {
        let (_r, st) = pl.as_pre_filter().unwrap().pre_filter(&cx, &mut state, &p);
        if !st.is_success() {
            pre_filter_status = st.with_plugin(pl.name());
        }
    }
    let m = if pre_filter_status.is_success() {
        NodeToStatus {
            statuses: c
                .nodes()
                .iter()
                .map(|n| {
                    let st = fw.run_filter_plugins_with_nominated_pods(&cx, &state, &p, n);
                    (!st.is_success()).then_some(st)
                })
                .collect(),
            absent: Status::new(Code::UnschedulableAndUnresolvable, Vec::<String>::new()),
        }
    } else {
        NodeToStatus {
            statuses: Vec::new(),
            absent: pre_filter_status,
        }
    };
    let (r, st) = fw.post_filter[0]
        .as_post_filter()
        .unwrap()
        .post_filter(fw, &cx, &state, &p, &m);
    (m, r, st)
}

fn victims_of(r: &Option<PostFilterResult>) -> Vec<String> {
    r.as_ref().map(|r| r.victims.clone()).unwrap_or_default()
}

// ---------- args ----------

#[test]
fn args_defaults_and_validation() {
    let p = "profiles[0].pluginConfig[0].args";
    assert_eq!(
        default_args(None, p).unwrap(),
        json!({"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100})
    );
    assert_eq!(
        default_args(
            Some(&json!({"apiVersion": "kubescheduler.config.k8s.io/v1",
                          "kind": "DefaultPreemptionArgs", "minCandidateNodesAbsolute": 5})),
            p
        )
        .unwrap(),
        json!({"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 5})
    );
    let cases: Vec<(Value, Vec<String>)> = vec![
        (
            json!({"minCandidateNodesPercentage": 101}),
            vec![format!(
                "{p}.minCandidateNodesPercentage: Invalid value: 101: not in valid range [0, 100]"
            )],
        ),
        (
            json!({"minCandidateNodesPercentage": -1}),
            vec![format!(
                "{p}.minCandidateNodesPercentage: Invalid value: -1: not in valid range [0, 100]"
            )],
        ),
        (
            json!({"minCandidateNodesAbsolute": -1}),
            vec![format!(
                "{p}.minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, inf)"
            )],
        ),
        (
            json!({"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0}),
            vec![
                format!(
                    "{p}.minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the same time as minCandidateNodesAbsolute"
                ),
                format!(
                    "{p}.minCandidateNodesAbsolute: Invalid value: 0: cannot be zero at the same time as minCandidateNodesPercentage"
                ),
            ],
        ),
    ];
    for (user, want) in cases {
        assert_eq!(default_args(Some(&user), p).unwrap_err(), want, "{user}");
    }
    // Zero in one field alone is fine.
    assert!(default_args(Some(&json!({"minCandidateNodesPercentage": 0})), p).is_ok());
    assert!(default_args(Some(&json!({"minCandidateNodesAbsolute": 0})), p).is_ok());
    // Unknown fields and wrong types are decoding errors.
    let e = default_args(Some(&json!({"minCandidates": 1})), p).unwrap_err();
    assert!(
        e[0].starts_with(&format!("{p}: decoding DefaultPreemptionArgs")),
        "{e:?}"
    );
    assert!(default_args(Some(&json!({"minCandidateNodesAbsolute": "x"})), p).is_err());
}

#[test]
fn new_validates_like_upstream_new() {
    assert!(
        new(
            &json!({"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100}),
            &Default::default()
        )
        .is_ok()
    );
    assert_eq!(
        new(
            &json!({"minCandidateNodesPercentage": 200, "minCandidateNodesAbsolute": 1}),
            &Default::default()
        )
        .err(),
        Some("minCandidateNodesPercentage: Invalid value: 200: not in valid range [0, 100]".into())
    );
    assert_eq!(
        new(
            &json!({"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0}),
            &Default::default()
        )
        .err(),
        Some(
            "[minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the same time as \
             minCandidateNodesAbsolute, minCandidateNodesAbsolute: Invalid value: 0: cannot be \
             zero at the same time as minCandidateNodesPercentage]"
                .into()
        )
    );
}

#[test]
fn num_candidates() {
    let cases = [
        // (pct, abs, potential nodes, want)
        (10, 100, 3, 3),
        (10, 100, 100, 100),
        (10, 100, 500, 100),
        (10, 100, 5000, 500),
        (50, 10, 100, 50),
        (0, 10, 100, 10),
        (100, 0, 7, 7),
        (1, 0, 50, 0),
        (40, 3, 5, 3),
    ];
    for (pct, abs, n, want) in cases {
        let pl = DefaultPreemption {
            args: DefaultPreemptionArgs {
                min_candidate_nodes_percentage: pct,
                min_candidate_nodes_absolute: abs,
            },
        };
        assert_eq!(pl.calculate_num_candidates(n), want, "{pct} {abs} {n}");
    }
}

// ---------- eligibility ----------

#[test]
fn eligibility() {
    let pl = DefaultPreemption {
        args: DefaultPreemptionArgs::default(),
    };
    let terminating = |name: &str, prio: i32, cond: bool| {
        let mut v = ppod(name, "1", prio, Some("n1"), Some(1));
        v["metadata"]["deletionTimestamp"] = json!("2025-01-01T00:30:00Z");
        if cond {
            v["status"]["conditions"] = json!([{"type": "DisruptionTarget", "status": "True",
                "reason": "PreemptionByScheduler"}]);
        }
        v
    };
    let mut never = ppod("p", "1", 100, None, None);
    never["spec"]["preemptionPolicy"] = json!("Never");
    let mut nominated = ppod("p", "1", 100, None, None);
    nominated["status"] = json!({"nominatedNodeName": "n1"});
    let mut nominated_elsewhere = ppod("p", "1", 100, None, None);
    nominated_elsewhere["status"] = json!({"nominatedNodeName": "ghost"});

    let u = Status::unschedulable("Insufficient cpu");
    let uu = Status::unresolvable("node(s) had untolerated taint(s)");
    let never_msg = Err("not eligible due to preemptionPolicy=Never.");
    let term_msg = Err("not eligible due to a terminating pod on the nominated node.");
    // (case, pod, other pods on n1, status of the nominated node, verdict)
    type Case<'a> = (&'a str, Value, Vec<Value>, &'a Status, Result<(), &'a str>);
    let cases: Vec<Case> = vec![
        ("policy Never", never.clone(), vec![], &u, never_msg),
        (
            "no nomination",
            ppod("p", "1", 100, None, None),
            vec![terminating("t", 1, true)],
            &u,
            Ok(()),
        ),
        (
            "victim terminating by preemption",
            nominated.clone(),
            vec![terminating("t", 1, true)],
            &u,
            term_msg,
        ),
        (
            "nominated node now UU",
            nominated.clone(),
            vec![terminating("t", 1, true)],
            &uu,
            Ok(()),
        ),
        (
            "terminating, not by preemption",
            nominated.clone(),
            vec![terminating("t", 1, false)],
            &u,
            Ok(()),
        ),
        (
            "terminating pod of higher priority",
            nominated.clone(),
            vec![terminating("t", 200, true)],
            &u,
            Ok(()),
        ),
        (
            "terminating pod of equal priority",
            nominated.clone(),
            vec![terminating("t", 100, true)],
            &u,
            Ok(()),
        ),
        (
            "nominated node gone",
            nominated_elsewhere,
            vec![terminating("t", 1, true)],
            &u,
            Ok(()),
        ),
    ];
    for (name, p, others, st, want) in cases {
        let mut pods = others;
        pods.push(p);
        let c = build(vec![cpu_node("n1", "2")], pods);
        let p = c.pod("default/p").unwrap();
        assert_eq!(pl.pod_eligible_to_preempt_others(&c, p, st), want, "{name}");
    }
}

#[test]
fn policy_never_is_reported_with_prefix() {
    // h50.
    let mut pending = ppod("pending", "1", 100_000, None, None);
    pending["spec"]["preemptionPolicy"] = json!("Never");
    let c = build(
        vec![cpu_node("n1", "1"), cpu_node("n2", "1")],
        vec![
            ppod("a", "1", 10, Some("n1"), Some(1)),
            ppod("b", "1", 10, Some("n2"), Some(2)),
            pending,
        ],
    );
    let (_, r, st) = run_cycle(&c, &framework(), "default/pending");
    assert_eq!(r, None);
    assert_eq!(st.code, Code::Unschedulable);
    assert_eq!(
        st.message(),
        "preemption: not eligible due to preemptionPolicy=Never."
    );
}

// ---------- whole PostFilter ----------

#[test]
fn picks_node_with_lowest_highest_victim_priority() {
    // h47: n1's victim has priority 1000, n2's 100, n3 is tainted (UU).
    let c = build(
        vec![
            cpu_node("n1", "2"),
            cpu_node("n2", "2"),
            tainted_node("n3", "2"),
        ],
        vec![
            ppod("a", "1500m", 1000, Some("n1"), Some(10)),
            ppod("b", "1500m", 100, Some("n2"), Some(20)),
            ppod("c", "1500m", 100, Some("n3"), Some(30)),
            ppod("pending", "1", 10000, None, None),
        ],
    );
    let (m, r, st) = run_cycle(&c, &framework(), "default/pending");
    assert_eq!(
        crate::engine::fit_error::fit_error_message(3, &m, "", ""),
        "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu."
    );
    assert!(st.is_success(), "{st:?}");
    assert_eq!(st.message(), "");
    assert_eq!(
        r,
        Some(PostFilterResult {
            nominated_node: Some("n2".into()),
            victims: vec!["default/b".into()],
        })
    );
}

#[test]
fn fewest_pdb_violations_wins() {
    // h48: evicting `guarded` (priority 100) breaks its PDB; `plain` (1000) is free.
    let mut c = build(
        vec![cpu_node("n1", "2"), cpu_node("n2", "2")],
        vec![
            with_labels(
                ppod("guarded", "1500m", 100, Some("n1"), Some(10)),
                json!({"app": "guarded"}),
            ),
            with_labels(
                ppod("plain", "1500m", 1000, Some("n2"), Some(20)),
                json!({"app": "plain"}),
            ),
            ppod("pending", "1", 10000, None, None),
        ],
    );
    add_pdb(
        &mut c,
        pdb(
            "g",
            "default",
            json!({"matchLabels": {"app": "guarded"}}),
            0,
            &[],
        ),
    );
    let (_, r, st) = run_cycle(&c, &framework(), "default/pending");
    assert!(st.is_success());
    let r = r.unwrap();
    assert_eq!(r.nominated_node.as_deref(), Some("n2"));
    assert_eq!(r.victims, vec!["default/plain"]);

    // With a budget of 1 the PDB is not violated and the lower priority wins.
    let mut c2 = c.clone();
    add_pdb(
        &mut c2,
        pdb(
            "g",
            "default",
            json!({"matchLabels": {"app": "guarded"}}),
            1,
            &[],
        ),
    );
    let (_, r, _) = run_cycle(&c2, &framework(), "default/pending");
    assert_eq!(r.unwrap().nominated_node.as_deref(), Some("n1"));
}

#[test]
fn reprieve_keeps_most_important_pods() {
    // h49: four 1-cpu pods per 4-cpu node; the 2-cpu pod needs two evictions.
    let c = build(
        vec![cpu_node("n1", "4"), cpu_node("n2", "4")],
        vec![
            ppod("n1-p1", "1", 10, Some("n1"), Some(100)),
            ppod("n1-p4", "1", 40, Some("n1"), Some(101)),
            ppod("n1-p2", "1", 20, Some("n1"), Some(102)),
            ppod("n1-p3", "1", 30, Some("n1"), Some(103)),
            ppod("n2-p2", "1", 20, Some("n2"), Some(200)),
            ppod("n2-p5", "1", 50, Some("n2"), Some(201)),
            ppod("n2-p3", "1", 30, Some("n2"), Some(202)),
            ppod("n2-p4", "1", 40, Some("n2"), Some(203)),
            ppod("pending", "2", 1000, None, None),
        ],
    );
    let (_, r, st) = run_cycle(&c, &framework(), "default/pending");
    assert!(st.is_success());
    let r = r.unwrap();
    assert_eq!(r.nominated_node.as_deref(), Some("n1"));
    // Ordered by importance: p2 before p1.
    assert_eq!(r.victims, vec!["default/n1-p2", "default/n1-p1"]);
}

#[test]
fn no_victims_gives_nested_fit_error() {
    // h52: equal priority pods cannot be preempted; the cordoned-like node is UU.
    let c = build(
        vec![
            cpu_node("n1", "2"),
            cpu_node("n2", "2"),
            tainted_node("n3", "2"),
        ],
        vec![
            ppod("a", "1500m", 100, Some("n1"), Some(1)),
            ppod("b", "1500m", 100, Some("n2"), Some(2)),
            ppod("pending", "1", 100, None, None),
        ],
    );
    let (_, r, st) = run_cycle(&c, &framework(), "default/pending");
    assert_eq!(st.code, Code::Unschedulable);
    assert_eq!(
        st.message(),
        "preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, \
         2 No preemption victims found for incoming pod."
    );
    // The nomination is cleared.
    assert_eq!(r, Some(PostFilterResult::default()));
}

#[test]
fn dry_run_filter_statuses_appear_in_nested_message() {
    // Even with every lower-priority pod gone the pod does not fit on n1 (a pod of
    // higher priority stays), and n2 has none to evict.
    let c = build(
        vec![
            cpu_node("n1", "2"),
            cpu_node("n2", "1"),
            tainted_node("n3", "8"),
        ],
        vec![
            ppod("big", "1500m", 5000, Some("n1"), Some(1)),
            ppod("small", "500m", 1, Some("n1"), Some(2)),
            ppod("peer", "1", 100, Some("n2"), Some(3)),
            ppod("pending", "1", 100, None, None),
        ],
    );
    let (_, r, st) = run_cycle(&c, &framework(), "default/pending");
    assert_eq!(
        st.message(),
        "preemption: 0/3 nodes are available: 1 Insufficient cpu, \
         1 No preemption victims found for incoming pod, \
         1 Preemption is not helpful for scheduling."
    );
    assert_eq!(r, Some(PostFilterResult::default()));
}

#[test]
fn nothing_potential_when_all_unresolvable() {
    // h10/h57: every node is UU; nothing is dry-run.
    let c = build(
        vec![tainted_node("n1", "2"), tainted_node("n2", "2")],
        vec![
            ppod("a", "1", 1, Some("n1"), Some(1)),
            ppod("pending", "1", 100, None, None),
        ],
    );
    let (_, r, st) = run_cycle(&c, &framework(), "default/pending");
    assert_eq!(
        st.message(),
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    );
    assert_eq!(r, Some(PostFilterResult::default()));
}

#[test]
fn pre_filter_rejection_makes_every_node_potential() {
    // h22: a PreFilter Unschedulable becomes every node's status; removing the holder
    // through RemovePod is what lets the pod fit.
    let c = build(
        vec![
            cpu_node("n1", "2"),
            cpu_node("n2", "2"),
            cpu_node("n3", "2"),
        ],
        vec![
            with_labels(
                ppod("holder", "100m", 0, Some("n2"), Some(1)),
                json!({"holder": "x"}),
            ),
            ppod("other", "100m", 0, Some("n1"), Some(2)),
            ppod("pending", "100m", 1000, None, None),
        ],
    );
    let fw = framework_with(Value::Null, true);
    let (m, r, st) = run_cycle(&c, &fw, "default/pending");
    assert_eq!(m.absent.code, Code::Unschedulable);
    assert!(st.is_success(), "{st:?}");
    let r = r.unwrap();
    // Removing `other` from n1 does not release the claim, so n1 fails its dry run;
    // n3 has no lower-priority pods; only n2 is a candidate.
    assert_eq!(r.nominated_node.as_deref(), Some("n2"));
    assert_eq!(r.victims, vec!["default/holder"]);
}

#[test]
fn reprieve_uses_add_pod_on_state() {
    // The holder and a plain pod are both lower priority on n1: the plain one is
    // reprieved; re-adding the holder through AddPod makes the filter fail again, so
    // the holder alone is the victim.
    let c = build(
        vec![cpu_node("n1", "4")],
        vec![
            with_labels(
                ppod("holder", "100m", 0, Some("n1"), Some(1)),
                json!({"holder": "x"}),
            ),
            ppod("plain", "100m", 5, Some("n1"), Some(2)),
            ppod("pending", "100m", 1000, None, None),
        ],
    );
    let fw = framework_with(Value::Null, true);
    let (_, r, st) = run_cycle(&c, &fw, "default/pending");
    assert!(st.is_success());
    assert_eq!(victims_of(&r), vec!["default/holder"]);
}

#[test]
fn nominated_pods_take_room_in_dry_run() {
    // A pending pod of higher priority than the preemptor is nominated to n1 and
    // holds 1 cpu there during the dry run too.
    let mut nominated = ppod("nominee", "1", 2000, None, None);
    nominated["status"] = json!({"nominatedNodeName": "n1"});
    let c = build(
        vec![cpu_node("n1", "3"), cpu_node("n2", "2")],
        vec![
            ppod("a1", "1", 10, Some("n1"), Some(1)),
            ppod("a2", "1", 10, Some("n1"), Some(2)),
            ppod("b1", "1500m", 10, Some("n2"), Some(3)),
            nominated,
            ppod("pending", "1", 1000, None, None),
        ],
    );
    let (_, r, st) = run_cycle(&c, &framework(), "default/pending");
    assert!(st.is_success());
    let r = r.unwrap();
    // n1: the nominee (2000 ≥ 1000) counts, so only one of a1/a2 can be kept:
    // victims [a2] (a1 started earlier, more important, reprieved first).
    // n2: victims [b1]. Same priority 10, same sum, same count; latest start wins:
    // n2's b1 started at 3s, n1's a2 at 2s.
    assert_eq!(r.nominated_node.as_deref(), Some("n2"));
    assert_eq!(r.victims, vec!["default/b1"]);
}

#[test]
fn lower_priority_nominated_pods_are_ignored() {
    let mut nominated = ppod("nominee", "2", 1, None, None);
    nominated["status"] = json!({"nominatedNodeName": "n1"});
    let c = build(
        vec![cpu_node("n1", "2")],
        vec![
            ppod("a1", "2", 10, Some("n1"), Some(1)),
            nominated,
            ppod("pending", "1", 1000, None, None),
        ],
    );
    let (_, r, _) = run_cycle(&c, &framework(), "default/pending");
    assert_eq!(victims_of(&r), vec!["default/a1"]);
}

#[test]
fn node_rejected_but_fitting_is_an_error() {
    // A status map claiming Unschedulable for a node where the pod fits once the
    // dry run starts: every lower-priority pod is reprieved, so there is no victim.
    let c = build(
        vec![cpu_node("n1", "4")],
        vec![
            ppod("a", "1", 1, Some("n1"), Some(1)),
            ppod("pending", "1", 1000, None, None),
        ],
    );
    let fw = framework();
    let cx = Ctx {
        cluster: &c,
        now: now(),
    };
    let m = NodeToStatus {
        statuses: vec![Some(Status::unschedulable("made up"))],
        absent: Status::new(Code::UnschedulableAndUnresolvable, Vec::<String>::new()),
    };
    let p = c.pod("default/pending").unwrap();
    let (r, st) = fw.post_filter[0].as_post_filter().unwrap().post_filter(
        &fw,
        &cx,
        &CycleState::default(),
        p,
        &m,
    );
    assert_eq!(r, None);
    assert_eq!(st.code, Code::Error);
    assert_eq!(
        st.message(),
        "preemption: expected at least one victim pod on node \"n1\""
    );
}

#[test]
fn candidate_search_stops_at_num_candidates() {
    // minCandidateNodesAbsolute 1: the first non-violating candidate ends the search,
    // so n2's (better) candidate is never seen.
    let c = build(
        vec![cpu_node("n1", "2"), cpu_node("n2", "2")],
        vec![
            ppod("a", "2", 500, Some("n1"), Some(1)),
            ppod("b", "2", 5, Some("n2"), Some(2)),
            ppod("pending", "1", 1000, None, None),
        ],
    );
    let fw = framework_with(
        json!({"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 1}),
        false,
    );
    let (_, r, _) = run_cycle(&c, &fw, "default/pending");
    assert_eq!(r.unwrap().nominated_node.as_deref(), Some("n1"));
    // Default args look at both and choose the lower victim priority.
    let (_, r, _) = run_cycle(&c, &framework(), "default/pending");
    assert_eq!(r.unwrap().nominated_node.as_deref(), Some("n2"));
}

#[test]
fn violating_candidates_do_not_end_the_search() {
    // n1's only candidate violates a PDB: with numCandidates 1 the search goes on
    // until a non-violating one (n2) is found, and that one is preferred.
    let mut c = build(
        vec![cpu_node("n1", "2"), cpu_node("n2", "2")],
        vec![
            with_labels(ppod("a", "2", 5, Some("n1"), Some(1)), json!({"app": "a"})),
            ppod("b", "2", 500, Some("n2"), Some(2)),
            ppod("pending", "1", 1000, None, None),
        ],
    );
    add_pdb(
        &mut c,
        pdb(
            "pa",
            "default",
            json!({"matchLabels": {"app": "a"}}),
            0,
            &[],
        ),
    );
    let fw = framework_with(
        json!({"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 1}),
        false,
    );
    let (_, r, _) = run_cycle(&c, &fw, "default/pending");
    assert_eq!(r.unwrap().nominated_node.as_deref(), Some("n2"));
}

#[test]
fn pre_enqueue_admits() {
    let c = build(
        vec![cpu_node("n1", "1")],
        vec![ppod("p", "1", 1, None, None)],
    );
    let cx = Ctx {
        cluster: &c,
        now: now(),
    };
    let fw = framework();
    let st = fw.pre_enqueue[0]
        .as_pre_enqueue()
        .unwrap()
        .pre_enqueue(&cx, c.pod("default/p").unwrap());
    assert!(st.is_success());
}

// ---------- victims on one node ----------

fn victims_on(
    c: &Cluster,
    fw: &Framework,
    node_name: &str,
    pending: &str,
) -> (Vec<String>, usize, Status) {
    let pl = DefaultPreemption {
        args: DefaultPreemptionArgs::default(),
    };
    let cx = Ctx {
        cluster: c,
        now: now(),
    };
    let mut n = c.node(node_name).unwrap().clone();
    let mut state = CycleState::default();
    let p = c.pod(pending).unwrap();
    let pdbs = pod_disruption_budgets(c);
    let (v, k, st) = pl.select_victims_on_node(fw, &cx, &mut state, p, &mut n, &pdbs);
    (v.iter().map(|p| p.name.clone()).collect(), k, st)
}

#[test]
fn reprieve_order_violating_first_then_resorted() {
    // 4-cpu node, pending needs 2: two of four 1-cpu pods must go. The PDB-protected
    // pods (v-*) are reprieved first, so the unprotected ones become victims even
    // though v-low has the lowest priority.
    let mut c = build(
        vec![cpu_node("n1", "4")],
        vec![
            with_labels(
                ppod("v-low", "1", 1, Some("n1"), Some(1)),
                json!({"app": "v"}),
            ),
            with_labels(
                ppod("v-high", "1", 40, Some("n1"), Some(2)),
                json!({"app": "v"}),
            ),
            ppod("n-mid", "1", 20, Some("n1"), Some(3)),
            ppod("n-mid2", "1", 30, Some("n1"), Some(4)),
            ppod("pending", "2", 1000, None, None),
        ],
    );
    add_pdb(
        &mut c,
        pdb("v", "default", json!({"matchLabels": {"app": "v"}}), 0, &[]),
    );
    let (v, k, st) = victims_on(&c, &framework(), "n1", "default/pending");
    assert!(st.is_success());
    assert_eq!(v, vec!["n-mid2", "n-mid"]);
    assert_eq!(k, 0);

    // Needing 3 cpu: one violating pod has to go too; victims re-sorted by importance.
    let mut c3 = c.clone();
    c3.upsert_pod(pod(ppod("pending", "3", 1000, None, None)));
    let (v, k, _) = victims_on(&c3, &framework(), "n1", "default/pending");
    assert_eq!(v, vec!["n-mid2", "n-mid", "v-low"]);
    assert_eq!(k, 1);
}

#[test]
fn equal_priority_earlier_start_is_more_important() {
    // Same priority: the earliest-started pod is reprieved first; nil start = now
    // (latest of all).
    let c = build(
        vec![cpu_node("n1", "2")],
        vec![
            ppod("late", "1", 5, Some("n1"), Some(50)),
            ppod("never-started", "1", 5, Some("n1"), None),
            ppod("early", "1", 5, Some("n1"), Some(10)),
            ppod("pending", "1", 1000, None, None),
        ],
    );
    // Only 2 cpu: remove all three (3 cpu > 2 anyway), reprieve early first.
    let (v, _, _) = victims_on(&c, &framework(), "n1", "default/pending");
    assert_eq!(v, vec!["late", "never-started"]);
}

#[test]
fn select_victims_reports_filter_failure_and_empty() {
    let c = build(
        vec![
            cpu_node("n1", "2"),
            tainted_node("n2", "2"),
            cpu_node("n3", "2"),
        ],
        vec![
            ppod("hi", "2", 5000, Some("n1"), Some(1)),
            ppod("lo", "1", 1, Some("n1"), Some(2)),
            ppod("lo2", "1", 1, Some("n2"), Some(2)),
            ppod("pending", "1", 1000, None, None),
        ],
    );
    let fw = framework();
    let (v, _, st) = victims_on(&c, &fw, "n1", "default/pending");
    assert!(v.is_empty());
    assert_eq!(
        st,
        Status::unschedulable("Insufficient cpu").with_plugin("CpuFit")
    );
    let (_, _, st) = victims_on(&c, &fw, "n2", "default/pending");
    assert_eq!(st.code, Code::UnschedulableAndUnresolvable);
    assert_eq!(st.message(), "node(s) had untolerated taint(s)");
    let (_, _, st) = victims_on(&c, &fw, "n3", "default/pending");
    assert_eq!(
        st,
        Status::unresolvable("No preemption victims found for incoming pod")
    );
}

// ---------- PDB split ----------

#[test]
fn pdb_violation_split() {
    let p = |name: &str, ns: &str, labels: Value| {
        let mut v = ppod(name, "1", 1, Some("n1"), Some(1));
        v["metadata"]["namespace"] = json!(ns);
        if !labels.is_null() {
            v["metadata"]["labels"] = labels;
        }
        Arc::new(pod(v))
    };
    let mut c = Cluster::new();
    // Budget of 1 for app=a in ns1: the first matching pod spends it, the second
    // violates it.
    add_pdb(
        &mut c,
        pdb("a", "ns1", json!({"matchLabels": {"app": "a"}}), 1, &[]),
    );
    // Budget 0, but `already` is listed in disruptedPods: not counted.
    add_pdb(
        &mut c,
        pdb(
            "b",
            "ns1",
            json!({"matchLabels": {"app": "b"}}),
            0,
            &["already"],
        ),
    );
    // Empty selector: matches nothing.
    add_pdb(&mut c, pdb("all", "ns1", json!({}), 0, &[]));
    // Invalid selector: ignored.
    add_pdb(
        &mut c,
        pdb(
            "bad",
            "ns1",
            json!({"matchExpressions": [{"key": "app", "operator": "In", "values": []}]}),
            0,
            &[],
        ),
    );
    // Expression selector in another namespace.
    add_pdb(
        &mut c,
        pdb(
            "other",
            "ns2",
            json!({"matchExpressions": [{"key": "app", "operator": "Exists"}]}),
            0,
            &[],
        ),
    );
    let pdbs = pod_disruption_budgets(&c);
    assert_eq!(pdbs.len(), 3);

    let pods = vec![
        p("a1", "ns1", json!({"app": "a"})),
        p("a2", "ns1", json!({"app": "a"})),
        p("already", "ns1", json!({"app": "b"})),
        p("b2", "ns1", json!({"app": "b"})),
        p("unlabelled", "ns1", Value::Null),
        p("x", "ns1", json!({"app": "x"})),
        p("y", "ns2", json!({"app": "y"})),
        p("z", "ns3", json!({"app": "a"})),
    ];
    let (violating, non_violating) = filter_pods_with_pdb_violation(&pods, &pdbs);
    let names = |v: &[Arc<Pod>]| v.iter().map(|p| p.name.clone()).collect::<Vec<_>>();
    assert_eq!(names(&violating), vec!["a2", "b2", "y"]);
    assert_eq!(
        names(&non_violating),
        vec!["a1", "already", "unlabelled", "x", "z"]
    );
}

// ---------- candidate ranking ----------

fn cand(node: usize, pdb: i64, victims: &[(i32, Option<u32>)]) -> Candidate {
    Candidate {
        node,
        num_pdb_violations: pdb,
        victims: victims
            .iter()
            .enumerate()
            .map(|(i, (prio, start))| {
                Arc::new(pod(ppod(
                    &format!("v{node}-{i}"),
                    "1",
                    *prio,
                    Some("n"),
                    *start,
                )))
            })
            .collect(),
    }
}

#[test]
fn ranking_steps() {
    let cases: Vec<(&str, Vec<Candidate>, usize)> = vec![
        (
            "fewest PDB violations beats lower priority",
            vec![cand(0, 1, &[(1, Some(1))]), cand(1, 0, &[(100, Some(1))])],
            1,
        ),
        (
            "lowest highest-victim priority",
            vec![
                cand(0, 0, &[(50, Some(1))]),
                cand(1, 0, &[(40, Some(1)), (40, Some(1))]),
            ],
            1,
        ),
        (
            "lowest priority sum",
            vec![
                cand(0, 0, &[(50, Some(1)), (40, Some(1))]),
                cand(1, 0, &[(50, Some(1)), (10, Some(1))]),
            ],
            1,
        ),
        (
            "sum is shifted: fewer negative-priority victims win",
            vec![
                cand(0, 0, &[(-10, Some(1)), (-10, Some(1))]),
                cand(1, 0, &[(-10, Some(1))]),
            ],
            1,
        ),
        (
            // The shifted sums tie only when a victim has the minimum priority
            // (-2^31 + 2^31 = 0).
            "fewest victims",
            vec![
                cand(0, 0, &[(0, Some(1)), (i32::MIN, Some(1))]),
                cand(1, 0, &[(0, Some(1))]),
            ],
            1,
        ),
        (
            "latest start among the highest-priority victims",
            vec![
                cand(0, 0, &[(10, Some(30)), (10, Some(5))]),
                cand(1, 0, &[(10, Some(20)), (10, Some(10))]),
            ],
            1,
        ),
        (
            "lower-priority victims' start times do not count",
            vec![
                cand(0, 0, &[(10, Some(20)), (5, Some(1))]),
                cand(1, 0, &[(10, Some(10)), (5, Some(50))]),
            ],
            0,
        ),
        (
            "nil start time counts as now",
            vec![cand(0, 0, &[(10, Some(59))]), cand(1, 0, &[(10, None)])],
            1,
        ),
        (
            "complete tie: the first",
            vec![cand(0, 0, &[(10, Some(1))]), cand(1, 0, &[(10, Some(1))])],
            0,
        ),
    ];
    for (name, cands, want) in cases {
        assert_eq!(pick_one_node_for_preemption(&cands, now()), want, "{name}");
    }
    // A single candidate is returned without scoring; none gives none.
    let one = vec![cand(7, 3, &[(99, None)])];
    assert_eq!(select_candidate(&one, now()).unwrap().node, 7);
    assert!(select_candidate(&[], now()).is_none());
}

#[test]
fn more_important_pod_order() {
    let a = pod(ppod("a", "1", 10, None, Some(5)));
    let b = pod(ppod("b", "1", 10, None, Some(6)));
    let c = pod(ppod("c", "1", 11, None, Some(59)));
    let d = pod(ppod("d", "1", 10, None, None));
    assert!(more_important_pod(&c, &a, now()));
    assert!(more_important_pod(&a, &b, now()));
    assert!(!more_important_pod(&b, &a, now()));
    assert!(more_important_pod(&b, &d, now()));
    assert!(!more_important_pod(&a, &a, now()));
}

// ---------- through the config layer ----------

#[test]
fn config_defaults_and_errors_end_to_end() {
    use crate::config::ConfigError;
    use crate::engine::SchedulerConfig;
    let header = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n";
    let c = SchedulerConfig::defaults();
    let fw = c.profile("default-scheduler").unwrap();
    assert_eq!(
        fw.plugin_args["DefaultPreemption"],
        json!({"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100})
    );
    assert!(fw.post_filter.iter().any(|p| p.name() == NAME));

    let body = "profiles:\n- pluginConfig:\n  - name: DefaultPreemption\n    args:\n      \
                minCandidateNodesPercentage: 0\n      minCandidateNodesAbsolute: 0\n";
    match SchedulerConfig::from_str(&format!("{header}{body}"), "t.yaml") {
        Err(ConfigError::Invalid { errors, .. }) => assert_eq!(
            errors,
            vec![
                "profiles[0].pluginConfig[0].args.minCandidateNodesPercentage: Invalid value: 0: \
                 cannot be zero at the same time as minCandidateNodesAbsolute",
                "profiles[0].pluginConfig[0].args.minCandidateNodesAbsolute: Invalid value: 0: \
                 cannot be zero at the same time as minCandidateNodesPercentage",
            ]
        ),
        Err(e) => panic!("expected validation errors, got {e}"),
        Ok(_) => panic!("expected validation errors"),
    }
}
