//! Test data: a small cluster, two profiles, hand-made traces (the engine's cycle is
//! not needed to test the views), and a 5,000-node / 150,000-pod scale case.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::jiff::Timestamp;
use serde_json::json;

use crate::engine::Framework;
use crate::engine::framework::{Plugin, WeightedPlugin};
use crate::engine::status::Code;
use crate::engine::trace::*;
use crate::model::testing::{node, pod};
use crate::model::{Cluster, Node, Pod, Resource};
use crate::theme::Theme;

use super::app::{App, AppInit};
use super::waiting::{ManualClock, WaitingList};

pub fn t0() -> Timestamp {
    // 2025-01-01T12:00:00Z
    Timestamp::new(1_735_732_800, 0).expect("valid timestamp")
}

struct Named(&'static str);

impl Plugin for Named {
    fn name(&self) -> &str {
        self.0
    }
}

fn plugins(names: &[&'static str]) -> Vec<Arc<dyn Plugin>> {
    names
        .iter()
        .map(|n| Arc::new(Named(n)) as Arc<dyn Plugin>)
        .collect()
}

pub const FILTERS: [&str; 13] = [
    "NodeUnschedulable",
    "NodeName",
    "TaintToleration",
    "NodeAffinity",
    "NodePorts",
    "NodeResourcesFit",
    "VolumeRestrictions",
    "NodeVolumeLimits",
    "VolumeBinding",
    "VolumeZone",
    "PodTopologySpread",
    "InterPodAffinity",
    "DynamicResources",
];

pub const SCORES: [(&str, i64); 7] = [
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodeResourcesFit", 1),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
];

pub fn profile(name: &str) -> Framework {
    let mut args = BTreeMap::new();
    args.insert(
        "NodeResourcesFit".to_string(),
        json!({"scoringStrategy": {"type": "LeastAllocated",
            "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]}}),
    );
    args.insert(
        "DefaultPreemption".to_string(),
        json!({"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100}),
    );
    Framework {
        profile_name: name.to_string(),
        percentage_of_nodes_to_score: None,
        pre_enqueue: plugins(&["SchedulingGates"]),
        queue_sort: plugins(&["PrioritySort"]),
        pre_filter: plugins(&[
            "NodeAffinity",
            "NodePorts",
            "NodeResourcesFit",
            "VolumeRestrictions",
            "VolumeBinding",
            "PodTopologySpread",
            "InterPodAffinity",
            "DynamicResources",
        ]),
        filter: plugins(&FILTERS),
        post_filter: plugins(&["DynamicResources", "DefaultPreemption"]),
        pre_score: plugins(&[
            "TaintToleration",
            "NodeAffinity",
            "NodeResourcesFit",
            "PodTopologySpread",
            "InterPodAffinity",
            "NodeResourcesBalancedAllocation",
        ]),
        score: SCORES
            .iter()
            .map(|(n, w)| WeightedPlugin {
                plugin: Arc::new(Named(n)),
                weight: *w,
            })
            .collect(),
        reserve: plugins(&["VolumeBinding", "DynamicResources"]),
        permit: plugins(if name == "gang" {
            &["Coscheduling"]
        } else {
            &[]
        }),
        pre_bind: plugins(&["VolumeBinding", "DynamicResources"]),
        bind: plugins(&["DefaultBinder"]),
        post_bind: Vec::new(),
        plugin_args: args,
    }
}

pub fn cluster() -> Cluster {
    let ts = |secs_before: i64| {
        Timestamp::new(t0().as_second() - secs_before, 0)
            .expect("ts")
            .to_string()
    };
    let mut nodes = Vec::new();
    for (name, cpu, mem, zone) in [
        ("n1", "4", "8Gi", "a"),
        ("n2", "8", "16Gi", "a"),
        ("n3", "8", "16Gi", "b"),
        ("n4", "2", "4Gi", "b"),
    ] {
        nodes.push(json!({
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name,
                "topology.kubernetes.io/zone": zone}},
            "status": {"allocatable": {"cpu": cpu, "memory": mem, "pods": "110"}}
        }));
    }
    nodes.push(json!({
        "metadata": {"name": "n5", "labels": {"kubernetes.io/hostname": "n5",
            "topology.kubernetes.io/zone": "b", "accelerator": "gpu"}},
        "spec": {"taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]},
        "status": {"allocatable": {"cpu": "8", "memory": "2Gi", "pods": "110",
            "nvidia.com/gpu": "4"}}
    }));
    let p = |ns: &str, name: &str, cpu: &str, prio: i32, age: i64, node: Option<&str>| {
        let mut v = json!({
            "metadata": {"name": name, "namespace": ns, "uid": format!("uid-{ns}-{name}"),
                "creationTimestamp": ts(age)},
            "spec": {"priority": prio, "containers": [{"name": "c", "image": "nginx:1.27",
                "resources": {"requests": {"cpu": cpu, "memory": "512Mi"}}}]},
            "status": {"phase": "Pending"}
        });
        if let Some(n) = node {
            v["spec"]["nodeName"] = json!(n);
            v["status"]["phase"] = json!("Running");
        }
        v
    };
    let mut pods = vec![
        p("default", "low-1", "2", 0, 9000, Some("n1")),
        p("default", "db-0", "1", 1000, 9000, Some("n2")),
        p(
            "kube-system",
            "coredns-1",
            "100m",
            2_000_000_000,
            9000,
            Some("n3"),
        ),
        p("default", "batch-7", "1500m", 0, 9000, Some("n4")),
        p("default", "web", "500m", 0, 300, None),
        p("default", "big", "6", 1000, 100, None),
        p("team-a", "job-1", "1", 0, 200, None),
    ];
    let mut gated = p("team-a", "gated", "1", 0, 50, None);
    gated["spec"]["schedulingGates"] = json!([{"name": "example.com/quota"}]);
    pods.push(gated);
    let mut retry = p("team-a", "retry", "16", 500, 400, None);
    retry["status"]["conditions"] = json!([{"type": "PodScheduled", "status": "False",
        "reason": "Unschedulable",
        "message": "0/5 nodes are available: 5 Insufficient cpu. preemption: 0/5 nodes are available: 5 No preemption victims found for incoming pod."}]);
    pods.push(retry);
    let mut nom = p("default", "nominated", "1", 100, 500, None);
    nom["status"]["nominatedNodeName"] = json!("n3");
    pods.push(nom);
    let mut other = p("default", "other-sched", "1", 0, 600, None);
    other["spec"]["schedulerName"] = json!("my-scheduler");
    pods.push(other);

    let mut c = Cluster::new();
    for n in nodes {
        c.upsert_node(node(n));
    }
    for v in pods {
        c.upsert_pod(pod(v));
    }
    c
}

fn ok(plugin: &str) -> PluginResult {
    PluginResult {
        plugin: plugin.into(),
        code: Code::Success,
        reasons: vec![],
    }
}

fn res(plugin: &str, code: Code, reasons: &[&str]) -> PluginResult {
    PluginResult {
        plugin: plugin.into(),
        code,
        reasons: reasons.iter().map(|s| s.to_string()).collect(),
    }
}

const PREFILTER_SKIPS: [&str; 7] = [
    "NodeAffinity",
    "NodePorts",
    "VolumeRestrictions",
    "VolumeBinding",
    "PodTopologySpread",
    "InterPodAffinity",
    "DynamicResources",
];

fn prefilter_ok() -> PreFilterTrace {
    let mut plugins = Vec::new();
    for p in [
        "NodeAffinity",
        "NodePorts",
        "NodeResourcesFit",
        "VolumeRestrictions",
        "VolumeBinding",
        "PodTopologySpread",
        "InterPodAffinity",
        "DynamicResources",
    ] {
        plugins.push(if PREFILTER_SKIPS.contains(&p) {
            res(p, Code::Skip, &[])
        } else {
            ok(p)
        });
    }
    PreFilterTrace {
        code: Some(Code::Success),
        plugin: None,
        reasons: vec![],
        node_subset: None,
        plugins,
        subsets: vec![],
    }
}

/// Every filter's answer on a node: Skip for PreFilter-skipped plugins, the given
/// rejections, Success otherwise.
fn all_on(node: &str, rejects: &[(&str, Code, &str)]) -> NodeAllVerdicts {
    NodeAllVerdicts {
        node: node.into(),
        results: FILTERS
            .iter()
            .map(|p| {
                if let Some((_, c, r)) = rejects.iter().find(|(x, _, _)| x == p) {
                    res(p, *c, &[r])
                } else if PREFILTER_SKIPS.contains(p) {
                    res(p, Code::Skip, &[])
                } else {
                    ok(p)
                }
            })
            .collect(),
    }
}

fn verdict(node: &str, reject: Option<(&str, Code, &str)>) -> NodeVerdict {
    match reject {
        None => NodeVerdict {
            node: node.into(),
            feasible: true,
            plugin: None,
            code: Code::Success,
            reasons: vec![],
        },
        Some((p, c, r)) => NodeVerdict {
            node: node.into(),
            feasible: false,
            plugin: Some(p.into()),
            code: c,
            reasons: vec![r.into()],
        },
    }
}

const TAINT: &str = "node(s) had untolerated taint(s)";

fn base(pod: &str, priority: i32) -> Trace {
    Trace {
        profile: "default-scheduler".into(),
        nodes_total: 5,
        pre_enqueue: vec![ok("SchedulingGates")],
        queue_sort: vec!["PrioritySort".into()],
        pre_filter: prefilter_ok(),
        filter_plugins: FILTERS.iter().map(|s| s.to_string()).collect(),
        num_nodes_to_find: 100,
        ..Trace::empty(
            pod.into(),
            priority,
            Outcome::Error {
                message: "unset".into(),
            },
        )
    }
}

/// Schedulable: n4 short of cpu, n5 tainted (and short of memory); n2 and n3 tie.
pub fn web_trace(pod: &str) -> Trace {
    let mut t = base(pod, 0);
    let n4 = ("NodeResourcesFit", Code::Unschedulable, "Insufficient cpu");
    let n5 = ("TaintToleration", Code::UnschedulableAndUnresolvable, TAINT);
    t.filter = vec![
        verdict("n1", None),
        verdict("n2", None),
        verdict("n3", None),
        verdict("n4", Some(n4)),
        verdict("n5", Some(n5)),
    ];
    t.filter_all = Some(vec![
        all_on("n1", &[]),
        all_on("n2", &[]),
        all_on("n3", &[]),
        all_on("n4", &[n4]),
        all_on(
            "n5",
            &[
                n5,
                (
                    "NodeResourcesFit",
                    Code::Unschedulable,
                    "Insufficient memory",
                ),
            ],
        ),
    ]);
    t.feasible = vec!["n1".into(), "n2".into(), "n3".into()];
    t.pre_score = vec![
        ok("TaintToleration"),
        res("NodeAffinity", Code::Skip, &[]),
        ok("NodeResourcesFit"),
        res("PodTopologySpread", Code::Skip, &[]),
        res("InterPodAffinity", Code::Skip, &[]),
        ok("NodeResourcesBalancedAllocation"),
    ];
    let sc = |p: &str, w: i64, raw: [i64; 3], norm: [i64; 3]| PluginScores {
        plugin: p.into(),
        weight: w,
        raw: raw.to_vec(),
        normalized: norm.to_vec(),
    };
    t.scores = vec![
        sc("TaintToleration", 3, [0, 0, 0], [100, 100, 100]),
        sc("NodeResourcesFit", 1, [25, 81, 75], [25, 81, 75]),
        sc(
            "NodeResourcesBalancedAllocation",
            1,
            [90, 96, 93],
            [90, 96, 93],
        ),
        sc("ImageLocality", 1, [0, 0, 9], [0, 0, 9]),
    ];
    t.totals = vec![415, 477, 477];
    t.best_nodes = vec!["n2".into(), "n3".into()];
    t.selected_node = Some("n2".into());
    t.binding = vec![
        PhaseTrace {
            point: "Reserve".into(),
            plugins: vec![ok("VolumeBinding"), ok("DynamicResources")],
        },
        PhaseTrace {
            point: "Permit".into(),
            plugins: vec![],
        },
        PhaseTrace {
            point: "PreBind".into(),
            plugins: vec![
                res("VolumeBinding", Code::Skip, &[]),
                res("DynamicResources", Code::Skip, &[]),
            ],
        },
        PhaseTrace {
            point: "Bind".into(),
            plugins: vec![ok("DefaultBinder")],
        },
        PhaseTrace {
            point: "PostBind".into(),
            plugins: vec![],
        },
    ];
    t.outcome = Outcome::Scheduled { node: "n2".into() };
    t
}

/// Unschedulable in normal mode (no all-filters data); preemption nominates n1.
pub fn big_trace(pod: &str) -> Trace {
    let mut t = base(pod, 1000);
    let cpu = ("NodeResourcesFit", Code::Unschedulable, "Insufficient cpu");
    t.filter = vec![
        verdict("n1", Some(cpu)),
        verdict("n2", Some(cpu)),
        verdict("n3", Some(cpu)),
        verdict("n4", Some(cpu)),
        verdict(
            "n5",
            Some(("TaintToleration", Code::UnschedulableAndUnresolvable, TAINT)),
        ),
    ];
    t.fit_error = Some(format!(
        "0/5 nodes are available: 1 {TAINT}, 4 Insufficient cpu."
    ));
    t.post_filter = Some(PostFilterTrace {
        plugins: vec![
            res(
                "DynamicResources",
                Code::Unschedulable,
                &["no new claims to deallocate"],
            ),
            ok("DefaultPreemption"),
        ],
        code: Some(Code::Success),
        nominated_node: Some("n1".into()),
        victims: vec!["default/low-1".into()],
        message: String::new(),
    });
    t.not_modelled = vec![NotModelled {
        plugin: "DynamicResources".into(),
        what: "resource claims are not modelled".into(),
    }];
    t.outcome = Outcome::Unschedulable {
        nominated_node: Some("n1".into()),
    };
    t
}

pub fn gated_trace(pod: &str) -> Trace {
    let mut t = base(pod, 0);
    let msg = "waiting for scheduling gates: [example.com/quota]";
    t.pre_enqueue = vec![res(
        "SchedulingGates",
        Code::UnschedulableAndUnresolvable,
        &[msg],
    )];
    t.pre_filter = PreFilterTrace::default();
    t.outcome = Outcome::Gated {
        plugin: "SchedulingGates".into(),
        message: msg.into(),
    };
    t
}

/// The hand-made trace of each test pod (what the lead's `run_cycle` will compute).
pub fn trace_for(fw: &Framework, p: &Pod) -> Trace {
    let key = p.key();
    let mut t = match key.as_str() {
        "default/big" | "team-a/retry" => big_trace(&key),
        "team-a/gated" => gated_trace(&key),
        _ => web_trace(&key),
    };
    if key == "team-a/job-1"
        && let Some(ph) = t.binding.iter_mut().find(|p| p.point == "Permit")
    {
        ph.plugins = vec![res(
            "Coscheduling",
            Code::Wait,
            &["waiting for 3 more pods of team-a/job"],
        )];
    }
    t.profile = fw.profile_name.clone();
    t.priority = p.priority;
    t
}

pub struct Fixture {
    pub app: App,
    pub clock: Arc<ManualClock>,
}

pub fn waiting_list() -> WaitingList {
    let mut w = WaitingList::default();
    w.add(
        "team-a/job-1",
        "n1",
        &[
            ("Coscheduling", Duration::from_secs(60)),
            ("Quota", Duration::from_secs(12)),
        ],
        t0(),
    );
    w
}

/// The app as the tests build it: the fixture profiles, an inline runner, `clock`,
/// the named built-in theme, and the sample waiting pods.
pub fn app_init(cluster: Cluster, theme: &str, clock: Arc<ManualClock>) -> AppInit {
    AppInit {
        cluster: Arc::new(cluster),
        profiles: vec![profile("default-scheduler"), profile("gang")],
        runner: Arc::new(|fw: &Framework, _c: &Cluster, p: &Pod, _now: Timestamp| trace_for(fw, p)),
        clock,
        waiting: Box::new(waiting_list()),
        theme: Theme::builtin(theme).expect("builtin theme"),
        theme_loader: theme_loader(),
        source: "snapshot testdata/cluster.yaml".into(),
        pod: None,
        simulation: None,
    }
}

/// The built-in themes, as the tests load them.
fn theme_loader() -> super::shared::ThemeLoader {
    Box::new(|s| {
        Theme::builtin(s).ok_or_else(|| crate::theme::ThemeError::NotFound {
            name: s.to_string(),
            builtins: crate::theme::builtin_names(),
            searched: "(tests)".into(),
        })
    })
}

/// The app on the real engine and the default profile over `cluster` (`source`
/// names it), dark theme, no waiting pods.
pub fn engine_init(cluster: Cluster, source: &str, clock: Arc<ManualClock>) -> AppInit {
    AppInit {
        cluster: Arc::new(cluster),
        profiles: crate::engine::SchedulerConfig::defaults().profiles,
        runner: super::worker::engine_runner(),
        clock,
        waiting: Box::new(WaitingList::default()),
        theme: Theme::builtin("dark").expect("builtin theme"),
        theme_loader: theme_loader(),
        source: source.into(),
        pod: None,
        simulation: None,
    }
}

/// The app drawn once on a `w`×`h` test terminal.
pub fn term(app: &mut App, w: u16, h: u16) -> ratatui::Terminal<ratatui::backend::TestBackend> {
    let mut t =
        ratatui::Terminal::new(ratatui::backend::TestBackend::new(w, h)).expect("test terminal");
    t.draw(|f| app.draw(f)).expect("draw");
    t
}

/// What the app shows on a `w`×`h` screen, as text.
pub fn screen(app: &mut App, w: u16, h: u16) -> String {
    term(app, w, h).backend().to_string()
}

pub fn app_with(cluster: Cluster, theme: &str) -> Fixture {
    let clock = Arc::new(ManualClock::new(t0()));
    let app = App::new(app_init(cluster, theme, clock.clone()));
    let mut f = Fixture { app, clock };
    f.settle();
    f
}

pub fn fixture() -> Fixture {
    app_with(cluster(), "dark")
}

impl Fixture {
    /// Run pending trace jobs, then every pending pod's verdict, inline (the runner
    /// does it on a worker thread).
    pub fn settle(&mut self) {
        settle(&mut self.app);
    }
}

/// Every job the worker would run, inline, and the verdicts and remedies waited for.
pub fn settle(app: &mut App) {
    while let Some(job) = app.take_job() {
        app.replay_ready(job.run());
    }
    app.take_verdicts_sync();
    app.take_remedies_sync();
}

// ----- scale -----

/// `nodes` nodes and `pods` pods built directly (no JSON), for the frame-time test.
pub fn big_cluster(nodes: usize, pods: usize) -> Cluster {
    let mut c = Cluster::new();
    for i in 0..nodes {
        let mut labels = BTreeMap::new();
        labels.insert("kubernetes.io/hostname".to_string(), format!("node-{i:05}"));
        labels.insert(
            "topology.kubernetes.io/zone".to_string(),
            format!("zone-{}", i % 3),
        );
        c.upsert_node(Node {
            name: format!("node-{i:05}").into(),
            uid: format!("uid-node-{i}"),
            labels: labels.into(),
            allocatable: Resource {
                milli_cpu: 32_000,
                memory: 128 << 30,
                ephemeral_storage: 0,
                allowed_pod_number: 110,
                scalar: BTreeMap::new(),
            },
            ..Default::default()
        });
    }
    for i in 0..pods {
        let bound = i % 50 != 0;
        let ns = format!("ns-{:03}", i % 200);
        c.upsert_pod(Pod {
            uid: format!("uid-{i}"),
            namespace: ns.into(),
            name: format!("pod-{i:06}"),
            node_name: bound.then(|| format!("node-{:05}", i % nodes.max(1)).into()),
            scheduler_name: "default-scheduler".into(),
            priority: (i % 7) as i32 * 100,
            creation_timestamp: Timestamp::new(t0().as_second() - (i as i64 % 86_400), 0).ok(),
            phase: if bound { "Running" } else { "Pending" }.into(),
            requests: Resource {
                milli_cpu: 250,
                memory: 256 << 20,
                ..Default::default()
            },
            non_zero_milli_cpu: 250,
            non_zero_memory: 256 << 20,
            ..Default::default()
        });
    }
    c
}

/// A trace over `nodes` nodes with all-filters data: a third feasible, the rest
/// rejected for a handful of reasons.
pub fn scale_trace(pod: &str, nodes: usize) -> Trace {
    let mut t = base(pod, 0);
    t.nodes_total = nodes;
    let reasons = [
        ("NodeResourcesFit", Code::Unschedulable, "Insufficient cpu"),
        ("TaintToleration", Code::UnschedulableAndUnresolvable, TAINT),
        (
            "NodeAffinity",
            Code::UnschedulableAndUnresolvable,
            "node(s) didn't match Pod's node affinity/selector",
        ),
        (
            "PodTopologySpread",
            Code::Unschedulable,
            "node(s) didn't match pod topology spread constraints",
        ),
    ];
    let mut all = Vec::with_capacity(nodes);
    for i in 0..nodes {
        let name = format!("node-{i:05}");
        if i % 3 == 0 {
            t.filter.push(verdict(&name, None));
            all.push(all_on(&name, &[]));
            t.feasible.push(name);
        } else {
            let r = reasons[i % reasons.len()];
            t.filter.push(verdict(&name, Some(r)));
            all.push(all_on(&name, &[r]));
        }
    }
    t.filter_all = Some(all);
    let n = t.feasible.len();
    t.scores = SCORES
        .iter()
        .map(|(p, w)| PluginScores {
            plugin: p.to_string(),
            weight: *w,
            raw: (0..n).map(|i| ((i * 37 + p.len()) % 101) as i64).collect(),
            normalized: (0..n).map(|i| ((i * 37 + p.len()) % 101) as i64).collect(),
        })
        .collect();
    t.totals = (0..n)
        .map(|i| t.scores.iter().map(|s| s.normalized[i] * s.weight).sum())
        .collect();
    let max = t.totals.iter().copied().max().unwrap_or(0);
    t.best_nodes = t
        .feasible
        .iter()
        .zip(&t.totals)
        .filter(|(_, v)| **v == max)
        .map(|(n, _)| n.clone())
        .collect();
    t.selected_node = t.best_nodes.first().cloned();
    t.outcome = Outcome::Scheduled {
        node: t.selected_node.clone().unwrap_or_default(),
    };
    t
}

// ----- simulation -----

/// `examples/gang-demo.yaml` and the coscheduling configuration it is meant for.
pub fn gang_demo() -> (Cluster, crate::engine::SchedulerConfig) {
    let cluster = crate::source::load_snapshot(std::path::Path::new("examples/gang-demo.yaml"))
        .expect("gang demo loads")
        .cluster;
    let config = crate::source::read_scheduler_config(std::path::Path::new(
        "examples/coscheduling-config.yaml",
    ))
    .expect("coscheduling config builds");
    (cluster, config)
}

/// The gang demo (`examples/gang-demo.yaml` with `examples/coscheduling-config.yaml`)
/// in simulation mode, on the real engine, with a hand-moved wall clock.
pub fn sim_fixture() -> Fixture {
    let (cluster, config) = gang_demo();
    sim_of(cluster, config, "simulate examples/gang-demo.yaml")
}

/// `cluster` in simulation mode under `config`, on the real engine (every attempt's
/// trace kept), with a hand-moved wall clock; `source` names it.
pub fn sim_of(cluster: Cluster, config: crate::engine::SchedulerConfig, source: &str) -> Fixture {
    use crate::engine::scheduler::{Scheduler, SimOptions};
    let sim = Scheduler::new(
        cluster.clone(),
        config.clone(),
        SimOptions {
            keep_traces: true,
            max_attempts: Some(usize::MAX),
            ..SimOptions::default()
        },
    );
    let clock = Arc::new(ManualClock::new(t0()));
    let app = App::new(AppInit {
        profiles: config.profiles,
        simulation: Some(super::playback::Simulation::new(sim, source)),
        ..engine_init(cluster, source, clock.clone())
    });
    let mut f = Fixture { app, clock };
    f.settle();
    f
}

/// A pending pod that sets a little of everything the scheduler reads.
pub fn rich_pod() -> serde_json::Value {
    json!({
        "metadata": {"name": "rich", "namespace": "default", "uid": "uid-rich"},
        "spec": {
            "priority": 1000, "priorityClassName": "high", "preemptionPolicy": "Never",
            "containers": [{"name": "app", "image": "app:1",
                "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}},
                "ports": [{"containerPort": 80, "hostPort": 8080}]}],
            "initContainers": [{"name": "setup", "image": "setup:1",
                "resources": {"requests": {"cpu": "2", "memory": "256Mi"}}}],
            "overhead": {"cpu": "100m", "memory": "64Mi"},
            "nodeSelector": {"disk": "ssd"},
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "topology.kubernetes.io/zone",
                            "operator": "In", "values": ["a", "b"]}]}]},
                    "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 10,
                        "preference": {"matchExpressions": [
                            {"key": "accelerator", "operator": "DoesNotExist"}]}}]},
                "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                    {"topologyKey": "kubernetes.io/hostname",
                     "labelSelector": {"matchLabels": {"app": "rich"}}}]}},
            "tolerations": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}],
            "topologySpreadConstraints": [{"maxSkew": 1,
                "topologyKey": "topology.kubernetes.io/zone",
                "whenUnsatisfiable": "ScheduleAnyway",
                "labelSelector": {"matchLabels": {"app": "rich"}}}],
            "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "rich-data"}}]
        },
        "status": {"phase": "Pending"}
    })
}
