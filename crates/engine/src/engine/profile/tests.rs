//! The configuration pipeline end to end (parse, defaults, merging, validation, then
//! building each profile): every validation and construction error.

use std::sync::Arc;

use serde_json::{Value, json};

use super::*;
use crate::config::*;
use crate::engine::framework::{
    Ctx, CycleState, Plugin, QueueSortPlugin, QueuedPodInfo, ScorePlugin,
};
use crate::engine::plugins::PluginFactory;
use crate::engine::status::Status;
use crate::model::{NodeInfo, Pod};

const HEADER: &str =
    "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n";

fn load(body: &str) -> Result<SchedulerConfig, ConfigError> {
    SchedulerConfig::from_str(&format!("{HEADER}{body}"), "test.yaml")
}

fn load_with(body: &str, reg: &Registry) -> Result<SchedulerConfig, ConfigError> {
    SchedulerConfig::from_str_with_registry(&format!("{HEADER}{body}"), "test.yaml", reg)
}

fn ok(body: &str) -> SchedulerConfig {
    match load(body) {
        Ok(c) => c,
        Err(e) => panic!("config should load: {e}"),
    }
}

fn invalid(body: &str) -> Vec<String> {
    match load(body) {
        Err(ConfigError::Invalid { errors, .. }) => errors,
        Err(e) => panic!("expected validation errors, got {e}"),
        Ok(_) => panic!("expected validation errors, config loaded"),
    }
}

fn framework_error(r: Result<SchedulerConfig, ConfigError>) -> String {
    match r {
        Err(ConfigError::Framework { message, .. }) => message,
        Err(e) => panic!("expected a framework error, got {e}"),
        Ok(_) => panic!("expected a framework error, config loaded"),
    }
}

fn names(l: &[Arc<dyn Plugin>]) -> Vec<&str> {
    l.iter().map(|p| p.name()).collect()
}

fn scores(fw: &Framework) -> Vec<(&str, i64)> {
    fw.score
        .iter()
        .map(|w| (w.plugin.name(), w.weight))
        .collect()
}

const PRE_FILTER: [&str; 10] = [
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

fn default_filter() -> Vec<&'static str> {
    let mut v = vec!["NodeUnschedulable", "NodeName", "TaintToleration"];
    v.extend(PRE_FILTER);
    v
}

const DEFAULT_SCORE: [(&str, i64); 9] = [
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodeResourcesFit", 1),
    ("VolumeBinding", 1),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("DynamicResources", 2),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
];

/// The v1.35 default profile (upstream: pkg/scheduler/apis/config/v1/default_plugins.go).
fn assert_default_profile(fw: &Framework) {
    assert_eq!(
        names(&fw.pre_enqueue),
        ["SchedulingGates", "DynamicResources", "DefaultPreemption"]
    );
    assert_eq!(names(&fw.queue_sort), ["PrioritySort"]);
    assert_eq!(names(&fw.pre_filter), PRE_FILTER);
    assert_eq!(names(&fw.filter), default_filter());
    assert_eq!(
        names(&fw.post_filter),
        ["DynamicResources", "DefaultPreemption"]
    );
    assert_eq!(
        names(&fw.pre_score),
        [
            "TaintToleration",
            "NodeAffinity",
            "NodeResourcesFit",
            "VolumeBinding",
            "PodTopologySpread",
            "InterPodAffinity",
            "NodeResourcesBalancedAllocation"
        ]
    );
    assert_eq!(scores(fw), DEFAULT_SCORE);
    assert_eq!(names(&fw.reserve), ["VolumeBinding", "DynamicResources"]);
    assert_eq!(names(&fw.pre_bind), ["VolumeBinding", "DynamicResources"]);
    assert_eq!(names(&fw.bind), ["DefaultBinder"]);
    assert!(fw.permit.is_empty());
    assert!(fw.post_bind.is_empty());
}

#[test]
fn defaults_are_v1_35() {
    let c = SchedulerConfig::defaults();
    assert_eq!(c.source, ConfigSource::Defaults);
    assert_eq!(c.parallelism, 16);
    assert_eq!(c.percentage_of_nodes_to_score, Some(0));
    assert_eq!(c.pod_initial_backoff_seconds, 1);
    assert_eq!(c.pod_max_backoff_seconds, 10);
    assert!(c.extenders.is_empty());
    assert_eq!(c.profiles.len(), 1);
    let fw = c.profile("default-scheduler").expect("default profile");
    assert_eq!(fw.profile_name, "default-scheduler");
    // The profile carries the effective value: the global default, 0 = adaptive.
    assert_eq!(fw.percentage_of_nodes_to_score, Some(0));
    assert_default_profile(fw);
    // Every enabled plugin with an args kind has materialised args.
    let with_args: Vec<&str> = fw.plugin_args.keys().map(String::as_str).collect();
    assert_eq!(
        with_args,
        [
            "DefaultPreemption",
            "DynamicResources",
            "InterPodAffinity",
            "NodeAffinity",
            "NodeResourcesBalancedAllocation",
            "NodeResourcesFit",
            "PodTopologySpread",
            "VolumeBinding"
        ]
    );
    assert!(c.profile("other").is_none());
}

#[test]
fn empty_file_body_equals_defaults() {
    let c = ok("");
    assert_eq!(c.source, ConfigSource::File("test.yaml".into()));
    assert_default_profile(&c.profiles[0]);
    let c = ok("profiles:\n- schedulerName: mine\n  percentageOfNodesToScore: 30\n");
    assert_eq!(c.profiles[0].profile_name, "mine");
    assert_eq!(c.profiles[0].percentage_of_nodes_to_score, Some(30));
    assert_default_profile(&c.profiles[0]);
}

#[test]
fn json_is_accepted() {
    let c = SchedulerConfig::from_str(
        r#"{"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "parallelism": 4, "percentageOfNodesToScore": 50,
            "podInitialBackoffSeconds": 2, "podMaxBackoffSeconds": 20}"#,
        "c.json",
    )
    .unwrap();
    assert_eq!(c.parallelism, 4);
    assert_eq!(c.percentage_of_nodes_to_score, Some(50));
    // A profile without its own value uses the global one.
    assert_eq!(c.profiles[0].percentage_of_nodes_to_score, Some(50));
    assert_eq!(
        (c.pod_initial_backoff_seconds, c.pod_max_backoff_seconds),
        (2, 20)
    );
}

#[test]
fn disable_everywhere_via_multi_point_and_score_only() {
    // h53.
    let c = ok("profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      disabled:
      - name: TaintToleration
    score:
      disabled:
      - name: NodeResourcesBalancedAllocation
      - name: ImageLocality
");
    let fw = &c.profiles[0];
    assert_eq!(
        names(&fw.filter),
        default_filter()
            .into_iter()
            .filter(|n| *n != "TaintToleration")
            .collect::<Vec<_>>()
    );
    assert!(!names(&fw.pre_score).contains(&"TaintToleration"));
    // Disabled at Score only: PreScore keeps it.
    assert!(names(&fw.pre_score).contains(&"NodeResourcesBalancedAllocation"));
    assert_eq!(
        scores(fw),
        [
            ("NodeAffinity", 2),
            ("NodeResourcesFit", 1),
            ("VolumeBinding", 1),
            ("PodTopologySpread", 2),
            ("InterPodAffinity", 2),
            ("DynamicResources", 2)
        ]
    );
}

#[test]
fn custom_weights_replace_in_place() {
    // h54.
    let c = ok("profiles:
- plugins:
    multiPoint:
      enabled:
      - name: NodeResourcesFit
        weight: 5
      - name: TaintToleration
        weight: 1
      - name: NodeResourcesBalancedAllocation
        weight: 2
");
    let fw = &c.profiles[0];
    assert_eq!(
        scores(fw),
        [
            ("TaintToleration", 1),
            ("NodeAffinity", 2),
            ("NodeResourcesFit", 5),
            ("VolumeBinding", 1),
            ("PodTopologySpread", 2),
            ("InterPodAffinity", 2),
            ("DynamicResources", 2),
            ("NodeResourcesBalancedAllocation", 2),
            ("ImageLocality", 1)
        ]
    );
    assert_eq!(names(&fw.filter), default_filter());
}

#[test]
fn score_enabled_overrides_multi_point_order_and_weight() {
    let c = ok("profiles:
- plugins:
    score:
      enabled:
      - name: ImageLocality
        weight: 5
      - name: TaintToleration
");
    let fw = &c.profiles[0];
    // Overrides first in the point's order; weight from Score.enabled, 0/unset → 1.
    assert_eq!(
        scores(fw),
        [
            ("ImageLocality", 5),
            ("TaintToleration", 1),
            ("NodeAffinity", 2),
            ("NodeResourcesFit", 1),
            ("VolumeBinding", 1),
            ("PodTopologySpread", 2),
            ("InterPodAffinity", 2),
            ("DynamicResources", 2),
            ("NodeResourcesBalancedAllocation", 1)
        ]
    );
}

#[test]
fn zero_weight_becomes_one() {
    let c = ok("profiles:
- plugins:
    multiPoint:
      enabled:
      - name: TaintToleration
        weight: 0
");
    assert_eq!(scores(&c.profiles[0])[0], ("TaintToleration", 1));
}

#[test]
fn add_plugin_at_a_point() {
    // h55: an out-of-tree score plugin enabled at Score only comes after the
    // MultiPoint plugins.
    let c = ok("profiles:
- schedulerName: default-scheduler
  plugins:
    score:
      enabled:
      - name: NodeResourcesAllocatable
        weight: 3
  pluginConfig:
  - name: NodeResourcesAllocatable
    args:
      mode: Least
");
    let fw = &c.profiles[0];
    let mut want = DEFAULT_SCORE.to_vec();
    want.push(("NodeResourcesAllocatable", 3));
    assert_eq!(scores(fw), want);
    assert_eq!(fw.plugin_args["NodeResourcesAllocatable"]["mode"], "Least");
    // Only Score was touched.
    assert_eq!(names(&fw.filter), default_filter());
}

#[test]
fn point_override_moves_first() {
    let c = ok("profiles:
- plugins:
    filter:
      enabled:
      - name: TaintToleration
      - name: NodeName
");
    let fw = &c.profiles[0];
    let mut want = vec!["TaintToleration", "NodeName", "NodeUnschedulable"];
    want.extend(PRE_FILTER);
    assert_eq!(names(&fw.filter), want);
}

#[test]
fn disable_at_one_point_only() {
    let c = ok("profiles:
- plugins:
    filter:
      disabled:
      - name: NodeUnschedulable
    preFilter:
      disabled:
      - name: NodePorts
");
    let fw = &c.profiles[0];
    assert_eq!(names(&fw.filter)[0], "NodeName");
    assert!(!names(&fw.pre_filter).contains(&"NodePorts"));
    assert!(names(&fw.filter).contains(&"NodePorts"));
}

#[test]
fn star_at_a_point() {
    let c = ok("profiles:
- plugins:
    score:
      disabled:
      - name: '*'
      enabled:
      - name: ImageLocality
        weight: 4
");
    let fw = &c.profiles[0];
    assert_eq!(scores(fw), [("ImageLocality", 4)]);
    // Other points are untouched.
    assert_eq!(names(&fw.pre_score).len(), 7);
    assert_eq!(names(&fw.filter), default_filter());
}

#[test]
fn star_in_multi_point() {
    let c = ok("profiles:
- plugins:
    multiPoint:
      disabled:
      - name: '*'
      enabled:
      - name: PrioritySort
      - name: NodeName
      - name: DefaultBinder
");
    let fw = &c.profiles[0];
    assert_eq!(names(&fw.queue_sort), ["PrioritySort"]);
    assert_eq!(names(&fw.filter), ["NodeName"]);
    assert_eq!(names(&fw.bind), ["DefaultBinder"]);
    assert!(fw.score.is_empty() && fw.pre_filter.is_empty() && fw.pre_enqueue.is_empty());
    // Disabled plugins get no args.
    assert!(fw.plugin_args.is_empty());
}

#[test]
fn disabled_then_reenabled_in_multi_point_moves_last() {
    let c = ok("profiles:
- plugins:
    multiPoint:
      disabled:
      - name: NodeName
      enabled:
      - name: NodeName
");
    let fw = &c.profiles[0];
    let mut want = vec!["NodeUnschedulable", "TaintToleration"];
    want.extend(PRE_FILTER);
    want.push("NodeName");
    assert_eq!(names(&fw.filter), want);
}

#[test]
fn plugin_args_are_kept_per_profile() {
    // h56.
    let c = ok("profiles:
- schedulerName: default-scheduler
- schedulerName: bin-packing
  plugins:
    score:
      disabled:
      - name: NodeResourcesBalancedAllocation
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
");
    let bp = c.profile("bin-packing").unwrap();
    assert_eq!(
        bp.plugin_args["NodeResourcesFit"]["scoringStrategy"]["type"],
        "MostAllocated"
    );
    assert!(!scores(bp).contains(&("NodeResourcesBalancedAllocation", 1)));
    let d = c.profile("default-scheduler").unwrap();
    assert_default_profile(d);
    assert_ne!(
        d.plugin_args["NodeResourcesFit"].pointer("/scoringStrategy/type"),
        Some(&json!("MostAllocated"))
    );
}

#[test]
fn args_apiversion_and_kind_are_checked_and_stripped() {
    let c = ok("profiles:
- pluginConfig:
  - name: InterPodAffinity
    args:
      apiVersion: kubescheduler.config.k8s.io/v1
      kind: InterPodAffinityArgs
      hardPodAffinityWeight: 5
");
    let args = &c.profiles[0].plugin_args["InterPodAffinity"];
    assert_eq!(args["hardPodAffinityWeight"], 5);
    assert!(args.get("kind").is_none());

    assert_eq!(
        invalid(
            "profiles:
- pluginConfig:
  - name: DefaultPreemption
    args:
      kind: InterPodAffinityArgs
"
        ),
        [
            "decoding .profiles[0].pluginConfig[0]: args for plugin DefaultPreemption were not of type DefaultPreemptionArgs.kubescheduler.config.k8s.io, got InterPodAffinityArgs.kubescheduler.config.k8s.io"
        ]
    );
    assert_eq!(
        invalid(
            "profiles:
- pluginConfig:
  - name: DefaultPreemption
    args: [1]
"
        ),
        ["profiles[0].pluginConfig[0].args: Invalid value: [1]: has to match plugin args"]
    );
}

#[test]
fn validation_messages() {
    let removed = r#"was invalid in version "kubescheduler.config.k8s.io/v1" (KubeSchedulerConfiguration is version "kubescheduler.config.k8s.io/v1")"#;
    let cases: Vec<(&str, Vec<String>)> = vec![
        (
            "parallelism: 0\n",
            vec!["parallelism: Invalid value: 0: should be an integer value greater than zero".into()],
        ),
        (
            "percentageOfNodesToScore: 101\n",
            vec!["percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]".into()],
        ),
        (
            "profiles:\n- percentageOfNodesToScore: -1\n",
            vec!["profiles[0].percentageOfNodesToScore: Invalid value: -1: not in valid range [0-100]".into()],
        ),
        (
            "podInitialBackoffSeconds: 0\n",
            vec!["podInitialBackoffSeconds: Invalid value: 0: must be greater than 0".into()],
        ),
        (
            "podInitialBackoffSeconds: 5\npodMaxBackoffSeconds: 4\n",
            vec!["podMaxBackoffSeconds: Invalid value: 4: must be greater than or equal to PodInitialBackoffSeconds".into()],
        ),
        (
            "profiles:\n- schedulerName: ''\n",
            vec!["profiles[0].schedulerName: Required value".into()],
        ),
        (
            // Two unnamed profiles: both required, and the empty names collide.
            "profiles:\n- {}\n- {}\n",
            vec![
                "profiles[0].schedulerName: Required value".into(),
                "profiles[1].schedulerName: Required value".into(),
                "profiles[1].schedulerName: Duplicate value: profiles[0].schedulerName".into(),
            ],
        ),
        (
            "profiles:\n- schedulerName: a\n- schedulerName: b\n- schedulerName: a\n",
            vec!["profiles[2].schedulerName: Duplicate value: profiles[0].schedulerName".into()],
        ),
        (
            "profiles:\n- pluginConfig:\n  - name: NodeAffinity\n  - name: NodeAffinity\n",
            vec![r#"profiles[0].pluginConfig[1]: Duplicate value: "NodeAffinity""#.into()],
        ),
        (
            "profiles:\n- plugins:\n    filter:\n      enabled:\n      - name: NodeName\n      - name: AzureDiskLimits\n",
            vec![format!(r#"profiles[0].plugins.filter.enabled[1]: Invalid value: "AzureDiskLimits": {removed}"#)],
        ),
        (
            "profiles:\n- pluginConfig:\n  - name: EBSLimits\n    args: {}\n",
            vec![format!(r#"profiles[0].pluginConfig[0]: Invalid value: "EBSLimits": {removed}"#)],
        ),
        (
            "profiles:\n- schedulerName: a\n  plugins:\n    queueSort:\n      enabled:\n      - name: PrioritySort\n- schedulerName: b\n",
            vec!["profiles[1].plugins.queueSort: Invalid value: config.PluginSet{Enabled:[]config.Plugin(nil), Disabled:[]config.Plugin(nil)}: must be the same for all profiles".into()],
        ),
        (
            "profiles:\n- plugins:\n    queueSort:\n      enabled:\n      - name: PrioritySort\n      - name: PrioritySort\n",
            vec!["profiles[0].plugins.queueSort.Enabled: Invalid value: 2: only one queue sort plugin can be enabled".into()],
        ),
        (
            "extenders:\n- urlPrefix: http://a\n  prioritizeVerb: prioritize\n- urlPrefix: http://b\n  bindVerb: bind\n- urlPrefix: http://c\n  bindVerb: bind\n  weight: 1\n",
            vec![
                "extenders[0].weight: Invalid value: 0: must have a positive weight applied to it".into(),
                r#"extenders: Invalid value: "found 2 extenders implementing bind": only one extender can implement bind"#.into(),
            ],
        ),
        (
            "extenders:\n- urlPrefix: http://a\n  managedResources:\n  - name: example.com/gpu\n  - name: example.com/gpu\n  - name: cpu\n",
            vec![
                r#"extenders[0].managedResources[1].name: Invalid value: "example.com/gpu": duplicate extender managed resource name"#.into(),
                r#"extenders[0].managedResources[2].name: Invalid value: "cpu": is an invalid extended resource name"#.into(),
            ],
        ),
        (
            "leaderElection:\n  resourceLock: endpoints\n",
            vec![r#"leaderElection.resourceLock: Invalid value: "endpoints": resourceLock value must be "leases""#.into()],
        ),
        (
            "leaderElection:\n  leaseDuration: 5s\n",
            vec!["leaderElection.leaseDuration: Invalid value: 10s: must be greater than `RenewDeadline`".into()],
        ),
        (
            "leaderElection:\n  retryPeriod: -2s\n",
            vec!["leaderElection.retryPeriod: Invalid value: -2s: must be greater than zero".into()],
        ),
        (
            "clientConnection:\n  burst: -1\n",
            vec!["clientConnection.burst: Invalid value: -1: must be non-negative".into()],
        ),
    ];
    for (body, want) in cases {
        assert_eq!(invalid(body), want, "{body}");
    }
}

#[test]
fn validation_errors_come_all_at_once_in_upstream_order() {
    let errs = invalid(
        "parallelism: -1
percentageOfNodesToScore: 200
podInitialBackoffSeconds: 0
profiles:
- schedulerName: ''
  percentageOfNodesToScore: 300
",
    );
    assert_eq!(
        errs,
        [
            "parallelism: Invalid value: -1: should be an integer value greater than zero",
            "profiles[0].schedulerName: Required value",
            "profiles[0].percentageOfNodesToScore: Invalid value: 300: not in valid range [0-100]",
            "percentageOfNodesToScore: Invalid value: 200: not in valid range [0-100]",
            "podInitialBackoffSeconds: Invalid value: 0: must be greater than 0",
        ]
    );
    let e = load("parallelism: 0\nprofiles:\n- schedulerName: ''\n").unwrap_err();
    assert_eq!(
        e.to_string(),
        "test.yaml: invalid configuration:\n  parallelism: Invalid value: 0: should be an integer value greater than zero\n  profiles[0].schedulerName: Required value"
    );
}

#[test]
fn leader_election_off_skips_its_checks() {
    ok("leaderElection:\n  leaderElect: false\n  resourceLock: endpoints\n");
}

#[test]
fn construction_errors() {
    let prefix = "creating profile for scheduler name default-scheduler: ";
    let cases = [
        (
            "profiles:\n- plugins:\n    filter:\n      enabled:\n      - name: Foo\n",
            r#"FilterPlugin "Foo" does not exist"#,
        ),
        (
            // A MultiPoint-only unknown name is found while expanding PreFilter.
            "profiles:\n- plugins:\n    multiPoint:\n      enabled:\n      - name: Foo\n",
            r#"PreFilterPlugin "Foo" does not exist"#,
        ),
        (
            // Validation does not look at MultiPoint for removed plugins.
            "profiles:\n- plugins:\n    multiPoint:\n      enabled:\n      - name: AzureDiskLimits\n",
            r#"PreFilterPlugin "AzureDiskLimits" does not exist"#,
        ),
        (
            "profiles:\n- plugins:\n    filter:\n      enabled:\n      - name: ImageLocality\n",
            r#"plugin "ImageLocality" does not extend FilterPlugin plugin"#,
        ),
        (
            "profiles:\n- plugins:\n    postBind:\n      enabled:\n      - name: VolumeBinding\n",
            r#"plugin "VolumeBinding" does not extend PostBindPlugin plugin"#,
        ),
        (
            "profiles:\n- plugins:\n    filter:\n      enabled:\n      - name: NodeName\n      - name: NodeName\n",
            r#"plugin "NodeName" already registered as "FilterPlugin""#,
        ),
        (
            // Repeated in MultiPoint: merging keeps both, expansion rejects the second.
            "profiles:\n- plugins:\n    multiPoint:\n      enabled:\n      - name: NodeName\n      - name: NodeName\n",
            r#"plugin "NodeName" already registered as "FilterPlugin""#,
        ),
        (
            "profiles:\n- plugins:\n    bind:\n      disabled:\n      - name: '*'\n",
            r#"at least one bind plugin is needed for profile with scheduler name "default-scheduler""#,
        ),
        (
            "profiles:\n- plugins:\n    multiPoint:\n      disabled:\n      - name: '*'\n",
            r#"only one queue sort plugin required for profile with scheduler name "default-scheduler", but got 0"#,
        ),
    ];
    for (body, want) in cases {
        assert_eq!(
            framework_error(load(body)),
            format!("{prefix}{want}"),
            "{body}"
        );
    }
}

// --- A registry with plugins that exercise the remaining construction paths. ---

struct Fake {
    name: &'static str,
    queue_sort: bool,
    score: bool,
}

impl Plugin for Fake {
    fn name(&self) -> &str {
        self.name
    }
    fn as_queue_sort(&self) -> Option<&dyn QueueSortPlugin> {
        self.queue_sort.then_some(self as _)
    }
    fn as_score(&self) -> Option<&dyn ScorePlugin> {
        self.score.then_some(self as _)
    }
}

impl QueueSortPlugin for Fake {
    fn less(&self, _a: &QueuedPodInfo, _b: &QueuedPodInfo) -> bool {
        false
    }
}

impl ScorePlugin for Fake {
    fn score(&self, _cx: &Ctx, _s: &CycleState, _p: &Pod, _n: &NodeInfo) -> (i64, Status) {
        (0, Status::success())
    }
}

fn other_sort(_: &Value, _: &crate::version::Features) -> Result<Arc<dyn Plugin>, String> {
    Ok(Arc::new(Fake {
        name: "OtherSort",
        queue_sort: true,
        score: false,
    }))
}

fn misnamed(_: &Value, _: &crate::version::Features) -> Result<Arc<dyn Plugin>, String> {
    Ok(Arc::new(Fake {
        name: "RealName",
        queue_sort: false,
        score: true,
    }))
}

fn broken(_: &Value, _: &crate::version::Features) -> Result<Arc<dyn Plugin>, String> {
    Err("boom".into())
}

fn scorer(args: &Value, _: &crate::version::Features) -> Result<Arc<dyn Plugin>, String> {
    // Upstream's NodeResourcesFit checks its args in its factory.
    if args["bad"] == json!(true) {
        return Err("args say bad".into());
    }
    Ok(Arc::new(Fake {
        name: "Checked",
        queue_sort: false,
        score: true,
    }))
}

fn checked_args(user: Option<&Value>, path: &str) -> Result<Value, Vec<String>> {
    let v = user.cloned().unwrap_or_else(|| json!({}));
    if let Some(w) = v.get("weight").and_then(Value::as_i64)
        && w > 100
    {
        return Err(vec![
            field::invalid(&format!("{path}.weight"), w, "not in valid range [0, 100]"),
            field::required(&format!("{path}.name"), ""),
        ]);
    }
    Ok(v)
}

fn test_registry() -> Registry {
    let mut r = registry();
    for f in [
        PluginFactory {
            name: "OtherSort",
            new: other_sort,
            args: None,
            out_of_tree: true,
        },
        PluginFactory {
            name: "Misnamed",
            new: misnamed,
            args: None,
            out_of_tree: true,
        },
        PluginFactory {
            name: "Broken",
            new: broken,
            args: None,
            out_of_tree: true,
        },
        PluginFactory {
            name: "Checked",
            new: scorer,
            args: Some(checked_args),
            out_of_tree: true,
        },
    ] {
        r.insert(f.name, f);
    }
    // A config-validated args kind that fails (stand-ins accept anything).
    if let Some(f) = r.get_mut("InterPodAffinity") {
        f.args = Some(checked_args);
    }
    r
}

#[test]
fn construction_errors_with_test_plugins() {
    let reg = test_registry();
    let prefix = "creating profile for scheduler name default-scheduler: ";
    let cases = [
        (
            "profiles:\n- plugins:\n    multiPoint:\n      enabled:\n      - name: OtherSort\n",
            r#"only one queue sort plugin required for profile with scheduler name "default-scheduler", but got 2"#,
        ),
        (
            "profiles:\n- plugins:\n    score:\n      enabled:\n      - name: Broken\n",
            r#"initializing plugin "Broken": boom"#,
        ),
        (
            "profiles:\n- plugins:\n    score:\n      enabled:\n      - name: Misnamed\n",
            r#"score plugin "RealName" is not configured with weight"#,
        ),
        (
            "profiles:\n- plugins:\n    score:\n      enabled:\n      - name: Checked\n  pluginConfig:\n  - name: Checked\n    args:\n      bad: true\n",
            r#"initializing plugin "Checked": args say bad"#,
        ),
        (
            // Args checked only by the factory: no field path, Go aggregate form.
            "profiles:\n- plugins:\n    score:\n      enabled:\n      - name: Checked\n  pluginConfig:\n  - name: Checked\n    args:\n      weight: 200\n",
            r#"initializing plugin "Checked": [weight: Invalid value: 200: not in valid range [0, 100], name: Required value]"#,
        ),
    ];
    for (body, want) in cases {
        assert_eq!(
            framework_error(load_with(body, &reg)),
            format!("{prefix}{want}"),
            "{body}"
        );
    }

    // Factory-checked args of a plugin that is not enabled are never looked at.
    let c = load_with(
        "profiles:\n- pluginConfig:\n  - name: Checked\n    args:\n      weight: 200\n",
        &reg,
    )
    .unwrap();
    assert!(!c.profiles[0].plugin_args.contains_key("Checked"));

    // Config-validated args fail validation, with the full path, enabled or not.
    let e = load_with(
        "profiles:\n- pluginConfig:\n  - name: InterPodAffinity\n    args:\n      weight: 200\n",
        &reg,
    )
    .unwrap_err();
    assert_eq!(
        e.messages(),
        [
            "profiles[0].pluginConfig[0].args.weight: Invalid value: 200: not in valid range [0, 100]",
            "profiles[0].pluginConfig[0].args.name: Required value"
        ]
    );
}

#[test]
fn queue_sort_must_match_across_built_profiles() {
    let reg = test_registry();
    let e = load_with(
        "profiles:
- schedulerName: a
- schedulerName: b
  plugins:
    multiPoint:
      disabled:
      - name: PrioritySort
      enabled:
      - name: OtherSort
",
        &reg,
    )
    .unwrap_err();
    assert_eq!(
        e.messages(),
        [r#"different queue sort plugins for profile "b": "OtherSort", first: "PrioritySort""#]
    );
}

#[test]
fn repeated_plugin_config_at_construction() {
    // Validation reports duplicates first; the framework's own check remains.
    let plugins = defaults::merge_plugins(None);
    let cfg = vec![
        ("NodeAffinity".to_string(), Args::Ready(json!({}))),
        ("NodeAffinity".to_string(), Args::Ready(json!({}))),
    ];
    let spec = ProfileSpec {
        name: "p",
        percentage_of_nodes_to_score: None,
        plugins: &plugins,
        plugin_config: &cfg,
        features: Default::default(),
    };
    assert_eq!(
        new_framework(&registry(), &spec).err().as_deref(),
        Some("repeated config for plugin NodeAffinity")
    );
}

#[test]
fn load_errors_name_the_file_and_field() {
    let e = SchedulerConfig::from_str(
        "apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\n",
        "sched.yaml",
    )
    .unwrap_err();
    assert!(matches!(e, ConfigError::UnsupportedVersion { .. }));
    assert!(
        e.to_string().starts_with(
            r#"sched.yaml: apiVersion "kubescheduler.config.k8s.io/v1beta3", kind "KubeSchedulerConfiguration" is not supported"#
        ),
        "{e}"
    );
    let e = SchedulerConfig::from_str("apiVersion: v1\nkind: Pod\n", "pod.yaml").unwrap_err();
    assert!(matches!(e, ConfigError::UnsupportedVersion { .. }), "{e}");

    let e = load("profiles:\n- schedulerName: a\n  plugins:\n    score:\n      enabled:\n      - name: X\n        wieght: 2\n")
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        r#"test.yaml: profiles[0].plugins.score.enabled[0].wieght: unknown field (did you mean "weight"?)"#
    );
    let e = load("parallelism: many\n").unwrap_err();
    assert_eq!(
        e.to_string(),
        r#"test.yaml: parallelism: expected an integer, got string "many""#
    );
    let e = load("profiles: [\n").unwrap_err();
    assert!(matches!(e, ConfigError::Syntax { .. }), "{e}");
    assert!(
        e.to_string()
            .starts_with("test.yaml: not valid YAML/JSON: ")
    );
}

#[test]
fn describe_lists_every_point_with_weights() {
    let c = SchedulerConfig::defaults();
    let d = describe(&c.profiles[0]);
    assert_eq!(d.len(), 12);
    let (point, score) = &d[5];
    assert_eq!(*point, ExtensionPoint::Score);
    assert_eq!(
        score[0],
        PluginEntry {
            name: "TaintToleration".into(),
            weight: Some(3)
        }
    );
    let (point, bind) = &d[7];
    assert_eq!(*point, ExtensionPoint::Bind);
    assert_eq!(
        bind,
        &[PluginEntry {
            name: "DefaultBinder".into(),
            weight: None
        }]
    );
}

#[test]
fn fidelity_configs_load() {
    // The repository's copies of the fidelity scenarios; their configurations are
    // read as text here, since building from a file is the application's part.
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fidelity");
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let mut paths: Vec<_> = entries
        .filter_map(Result::ok)
        .map(|e| e.path().join("config.yaml"))
        .filter(|p| p.exists())
        .collect();
    paths.sort();
    assert!(paths.len() >= 9, "found {}", paths.len());
    for p in &paths {
        let text = std::fs::read_to_string(p).unwrap();
        let c = SchedulerConfig::from_str(&text, &p.display().to_string())
            .unwrap_or_else(|e| panic!("{e}"));
        let scenario = p
            .parent()
            .and_then(|d| d.file_name())
            .unwrap()
            .to_string_lossy()
            .to_string();
        let fw = c
            .profile("default-scheduler")
            .expect("default-scheduler profile");
        match scenario.as_str() {
            "h53-config-disable-plugins" => {
                assert!(!names(&fw.filter).contains(&"TaintToleration"));
                assert!(!scores(fw).iter().any(|(n, _)| *n == "ImageLocality"));
            }
            "h54-config-weights" => {
                assert!(scores(fw).contains(&("NodeResourcesFit", 5)));
                assert!(scores(fw).contains(&("TaintToleration", 1)));
                assert!(scores(fw).contains(&("NodeResourcesBalancedAllocation", 2)));
            }
            "h55-config-add-plugin" => {
                assert_eq!(scores(fw).last(), Some(&("NodeResourcesAllocatable", 3)));
            }
            "h56-config-multi-profile" => {
                let bp = c.profile("bin-packing").expect("bin-packing profile");
                assert!(
                    !scores(bp)
                        .iter()
                        .any(|(n, _)| *n == "NodeResourcesBalancedAllocation")
                );
                assert_default_profile(fw);
            }
            "h18-scoring-most-allocated" => {
                assert_eq!(
                    fw.plugin_args["NodeResourcesFit"]["scoringStrategy"]["type"],
                    "MostAllocated"
                );
            }
            "h58-config-pts-default-constraints-list" => {
                assert_eq!(
                    fw.plugin_args["PodTopologySpread"]["defaultingType"],
                    "List"
                );
            }
            _ => assert_default_profile(fw),
        }
    }
}

#[test]
fn empty_or_non_object_text_is_an_unsupported_document() {
    for text in ["", "- a\n- b\n", "42\n", "{}"] {
        match SchedulerConfig::from_str(text, "x.yaml") {
            Err(ConfigError::UnsupportedVersion {
                api_version, kind, ..
            }) => {
                assert_eq!((api_version.as_str(), kind.as_str()), ("", ""), "{text:?}");
            }
            Err(ConfigError::Syntax { .. }) => {}
            other => panic!("{text:?}: {:?}", other.map(|_| ())),
        }
    }
}

#[test]
fn duplicate_yaml_keys_are_rejected() {
    assert!(load("parallelism: 1\nparallelism: 2\n").is_err());
}

/// kube-scheduler v1.35 range-checks no Score weight; a negative one is multiplied
/// in, and any Score plugin after it trips the (wrapping) overflow guard. This panicked
/// with "attempt to subtract with overflow" in debug builds.
#[test]
fn negative_weight_fails_like_kube_scheduler() {
    let msg = framework_error(load(
        "profiles:
- plugins:
    score:
      enabled:
      - name: TaintToleration
        weight: -1
",
    ));
    assert!(
        msg.ends_with("total score of Score plugins could overflow (a Score plugin before this one has a negative weight: kube-scheduler does not range-check weights, and a negative one wraps its running total)"),
        "{msg}"
    );
    // The only Score plugin: accepted, as upstream.
    let c = ok("profiles:
- plugins:
    score:
      disabled:
      - name: '*'
      enabled:
      - name: TaintToleration
        weight: -1
    multiPoint:
      disabled:
      - name: '*'
      enabled:
      - name: PrioritySort
      - name: DefaultBinder
");
    assert_eq!(scores(&c.profiles[0]), vec![("TaintToleration", -1)]);
}

/// kube-scheduler's decoder reads the first document, so a trailing `---` (an empty
/// document) is accepted; a second document with content is refused in plain words,
/// not with the YAML library's advice to its programmers.
#[test]
fn trailing_document_marker_is_accepted() {
    let c = ok("parallelism: 4\n---\n");
    assert_eq!(c.parallelism, 4);
    let e = load("parallelism: 4\n---\nparallelism: 5\n")
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "test.yaml: not valid YAML/JSON: holds more than one YAML document with content; a KubeSchedulerConfiguration file holds one"
    );
}

/// Syntax snippets name the file, not `<input>`.
#[test]
fn syntax_snippets_name_the_file() {
    let e = load("parallelism: [\n").unwrap_err().to_string();
    assert!(e.contains("--> test.yaml:3:14"), "{e}");
    assert!(
        e.starts_with("test.yaml: not valid YAML/JSON: line 3 column 14: "),
        "{e}"
    );
    assert!(!e.contains("<input>"), "{e}");
}

/// An alias bomb is refused before it is built, naming the file.
#[test]
fn alias_bomb_config_is_refused() {
    let big = "x".repeat(64 << 10);
    let mut body = format!("x-big: &big {big}\nx-refs:\n");
    for _ in 0..5000 {
        body.push_str("- *big\n");
    }
    let e = load(&body).unwrap_err().to_string();
    assert!(
        e.starts_with("test.yaml: not valid YAML/JSON: "),
        "{}",
        &e[..200.min(e.len())]
    );
    assert!(
        e.contains(
            "its aliases (*name) expand it beyond its own size plus 16 MiB \
             (counted over every document of the input); refusing to build it"
        ),
        "{}",
        &e[..400.min(e.len())]
    );
}
