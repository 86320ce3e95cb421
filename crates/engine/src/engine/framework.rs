//! Extension-point traits, cycle state and the built profile (upstream:
//! pkg/scheduler/framework/interface.go, `Plugin`, the extension-point interfaces and
//! `Framework`; framework/cycle_state.go, `CycleState`; framework/runtime/framework.go
//! for running PreFilter's AddPod and Filter with nominated pods).
//!
//! A plugin is one struct implementing [`Plugin`] plus the extension-point traits it
//! supports; [`Plugin`]'s accessors tell the framework which ones, the way a Go type
//! assertion does upstream.

use std::any::Any;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::jiff::Timestamp;

use super::status::Status;
use crate::model::{Cluster, NodeInfo, Pod};

/// What every plugin call may read besides its arguments: the cluster as the
/// scheduler's snapshot and listers see it, and the time the cycle runs at.
#[derive(Clone, Copy)]
pub struct Ctx<'a> {
    pub cluster: &'a Cluster,
    /// Injected time (used where upstream calls `time.Now()`).
    pub now: Timestamp,
}

/// Per-cycle plugin data that can be cloned for preemption's dry runs.
pub trait StateData: Any + Send + Sync {
    fn clone_box(&self) -> Box<dyn StateData>;
    fn as_any(&self) -> &dyn Any;
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

impl<T: Any + Clone + Send + Sync> StateData for T {
    fn clone_box(&self) -> Box<dyn StateData> {
        Box::new(self.clone())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

/// `framework.CycleState`.
#[derive(Default)]
pub struct CycleState {
    /// A handful of entries (one per plugin at most): a linear scan beats hashing,
    /// and reads happen once per plugin per node.
    data: Vec<(String, Box<dyn StateData>)>,
    /// Plugins whose PreFilter returned Skip: their Filter and AddPod/RemovePod are
    /// not called this cycle.
    pub skip_filter_plugins: NameSet,
    /// Plugins whose PreScore returned Skip.
    pub skip_score_plugins: NameSet,
}

impl Clone for CycleState {
    fn clone(&self) -> Self {
        CycleState {
            data: self
                .data
                .iter()
                .map(|(k, v)| (k.clone(), (**v).clone_box()))
                .collect(),
            skip_filter_plugins: self.skip_filter_plugins.clone(),
            skip_score_plugins: self.skip_score_plugins.clone(),
        }
    }
}

impl CycleState {
    pub fn write<T: StateData>(&mut self, key: &str, value: T) {
        match self.data.iter_mut().find(|(k, _)| k == key) {
            Some(entry) => entry.1 = Box::new(value),
            None => self.data.push((key.to_string(), Box::new(value))),
        }
    }
    pub fn read<T: 'static>(&self, key: &str) -> Option<&T> {
        let (_, v) = self.data.iter().find(|(k, _)| k == key)?;
        (**v).as_any().downcast_ref::<T>()
    }
    pub fn read_mut<T: 'static>(&mut self, key: &str) -> Option<&mut T> {
        let (_, v) = self.data.iter_mut().find(|(k, _)| k == key)?;
        (**v).as_any_mut().downcast_mut::<T>()
    }
    pub fn contains(&self, key: &str) -> bool {
        self.data.iter().any(|(k, _)| k == key)
    }
    /// Nothing written and nothing skipped: the state a cycle starts from.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
            && self.skip_filter_plugins.is_empty()
            && self.skip_score_plugins.is_empty()
    }
}

/// A small set of plugin names. Checked once per plugin per node, so a linear scan
/// (mostly a length compare) beats a tree or a hash.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NameSet(Vec<String>);

impl NameSet {
    pub fn insert(&mut self, name: String) -> bool {
        if self.contains(&name) {
            return false;
        }
        self.0.push(name);
        true
    }
    pub fn contains(&self, name: &str) -> bool {
        self.0.iter().any(|n| n == name)
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    /// Names in insertion order.
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(String::as_str)
    }
}

/// Message of a plugin whose state is missing, as upstream's `not found` error.
pub fn state_not_found(key: &str) -> Status {
    Status::error(format!("reading {key:?} from cycleState: not found"))
}

/// Node names a PreFilter restricts the cycle to; `None` = all nodes.
pub type PreFilterResult = Option<BTreeSet<String>>;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeScore {
    /// Index into `Ctx::cluster.nodes()`.
    pub node: usize,
    pub score: i64,
}

pub const MAX_NODE_SCORE: i64 = 100;
pub const MIN_NODE_SCORE: i64 = 0;

/// `helper.DefaultNormalizeScore`: scale to `[0, max_priority]` by the largest score
/// (integer division); `reverse` flips the result. All zero: unchanged, or all
/// `max_priority` when reversed.
pub fn default_normalize_score(max_priority: i64, reverse: bool, scores: &mut [NodeScore]) {
    let max_count = scores.iter().map(|s| s.score).fold(0, i64::max);
    if max_count == 0 {
        if reverse {
            for s in scores.iter_mut() {
                s.score = max_priority;
            }
        }
        return;
    }
    for s in scores.iter_mut() {
        let v = max_priority.wrapping_mul(s.score) / max_count;
        s.score = if reverse { max_priority - v } else { v };
    }
}

/// Queue entry as the queue-sort plugin sees it (`framework.QueuedPodInfo`).
#[derive(Clone, Debug)]
pub struct QueuedPodInfo {
    pub pod: Arc<Pod>,
    /// Last time the pod was added to the queue.
    pub timestamp: Timestamp,
    pub initial_attempt_timestamp: Option<Timestamp>,
    pub attempts: u32,
}

/// Filter verdicts of one cycle: an explicit status per rejected node, and the status
/// that every other node gets (`framework.NodeToStatus`).
#[derive(Clone, Debug, Default)]
pub struct NodeToStatus {
    /// Indexed like `cluster.nodes()`; `None` = no explicit status.
    pub statuses: Vec<Option<Status>>,
    pub absent: Status,
}

impl NodeToStatus {
    pub fn get(&self, node: usize) -> &Status {
        self.statuses
            .get(node)
            .and_then(|s| s.as_ref())
            .unwrap_or(&self.absent)
    }
}

/// What a PostFilter decided. `victims` are only informational for a dry run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PostFilterResult {
    pub nominated_node: Option<String>,
    pub victims: Vec<String>,
}

pub trait Plugin: Send + Sync {
    fn name(&self) -> &str;
    /// Set when this plugin cannot give kube-scheduler's answer for `pod`; the trace
    /// reports it instead of pretending.
    fn not_modelled(&self, _pod: &Pod) -> Option<String> {
        None
    }
    /// Set when `error` (an Error this plugin returned) is a known bug of
    /// kube-scheduler v1.35 that the replay reproduces on purpose; the trace says so.
    fn upstream_behaviour(&self, _error: &str) -> Option<String> {
        None
    }
    fn as_pre_enqueue(&self) -> Option<&dyn PreEnqueuePlugin> {
        None
    }
    fn as_queue_sort(&self) -> Option<&dyn QueueSortPlugin> {
        None
    }
    fn as_pre_filter(&self) -> Option<&dyn PreFilterPlugin> {
        None
    }
    fn as_filter(&self) -> Option<&dyn FilterPlugin> {
        None
    }
    fn as_post_filter(&self) -> Option<&dyn PostFilterPlugin> {
        None
    }
    fn as_pre_score(&self) -> Option<&dyn PreScorePlugin> {
        None
    }
    fn as_score(&self) -> Option<&dyn ScorePlugin> {
        None
    }
    fn as_reserve(&self) -> Option<&dyn ReservePlugin> {
        None
    }
    fn as_permit(&self) -> Option<&dyn PermitPlugin> {
        None
    }
    fn as_pre_bind(&self) -> Option<&dyn PreBindPlugin> {
        None
    }
    fn as_bind(&self) -> Option<&dyn BindPlugin> {
        None
    }
    fn as_post_bind(&self) -> Option<&dyn PostBindPlugin> {
        None
    }
}

pub trait PreEnqueuePlugin {
    fn pre_enqueue(&self, cx: &Ctx, pod: &Pod) -> Status;
}

pub trait QueueSortPlugin {
    /// `a` should be popped before `b`.
    fn less(&self, a: &QueuedPodInfo, b: &QueuedPodInfo) -> bool;
    /// `less` inside a running scheduler: `cx.cluster` holds the queued pods' world
    /// and `state` the scheduler's handle (`engine::handle`). Plugins whose order
    /// depends on other objects or their own history (Coscheduling: PodGroups and
    /// their last failure) override this; the default is `less`.
    fn less_in(
        &self,
        _cx: &Ctx,
        _state: &CycleState,
        a: &QueuedPodInfo,
        b: &QueuedPodInfo,
    ) -> bool {
        self.less(a, b)
    }
}

pub trait PreFilterPlugin {
    fn pre_filter(&self, cx: &Ctx, state: &mut CycleState, pod: &Pod) -> (PreFilterResult, Status);
    /// Whether AddPod/RemovePod are implemented (`PreFilterExtensions() != nil`).
    fn has_extensions(&self) -> bool {
        false
    }
    fn add_pod(
        &self,
        _cx: &Ctx,
        _state: &mut CycleState,
        _pod_to_schedule: &Pod,
        _pod_to_add: &Arc<Pod>,
        _node: &NodeInfo,
    ) -> Status {
        Status::success()
    }
    fn remove_pod(
        &self,
        _cx: &Ctx,
        _state: &mut CycleState,
        _pod_to_schedule: &Pod,
        _pod_to_remove: &Arc<Pod>,
        _node: &NodeInfo,
    ) -> Status {
        Status::success()
    }
}

/// Called from several threads at once (nodes are filtered in parallel).
pub trait FilterPlugin: Send + Sync {
    fn filter(&self, cx: &Ctx, state: &CycleState, pod: &Pod, node: &NodeInfo) -> Status;
}

pub trait PostFilterPlugin {
    fn post_filter(
        &self,
        fw: &Framework,
        cx: &Ctx,
        state: &CycleState,
        pod: &Pod,
        statuses: &NodeToStatus,
    ) -> (Option<PostFilterResult>, Status);
}

pub trait PreScorePlugin {
    fn pre_score(&self, cx: &Ctx, state: &mut CycleState, pod: &Pod, nodes: &[&NodeInfo])
    -> Status;
}

/// Called from several threads at once (nodes are scored in parallel).
pub trait ScorePlugin: Send + Sync {
    fn score(&self, cx: &Ctx, state: &CycleState, pod: &Pod, node: &NodeInfo) -> (i64, Status);
    /// Whether NormalizeScore exists (`ScoreExtensions() != nil`).
    fn has_normalize(&self) -> bool {
        false
    }
    fn normalize_score(
        &self,
        _cx: &Ctx,
        _state: &CycleState,
        _pod: &Pod,
        _scores: &mut [NodeScore],
    ) -> Status {
        Status::success()
    }
}

pub trait ReservePlugin {
    fn reserve(&self, cx: &Ctx, state: &mut CycleState, pod: &Pod, node: &str) -> Status;
    fn unreserve(&self, cx: &Ctx, state: &mut CycleState, pod: &Pod, node: &str);
}

pub trait PermitPlugin {
    /// Success, a rejection, or Wait with how long to wait.
    fn permit(&self, cx: &Ctx, state: &mut CycleState, pod: &Pod, node: &str)
    -> (Status, Duration);
}

pub trait PreBindPlugin {
    /// `PreBindPreFlight`: Skip when PreBind has nothing to do for this pod.
    fn pre_bind_pre_flight(
        &self,
        _cx: &Ctx,
        _state: &CycleState,
        _pod: &Pod,
        _node: &str,
    ) -> Status {
        Status::success()
    }
    fn pre_bind(&self, cx: &Ctx, state: &mut CycleState, pod: &Pod, node: &str) -> Status;
}

pub trait BindPlugin {
    fn bind(&self, cx: &Ctx, state: &mut CycleState, pod: &Pod, node: &str) -> Status;
}

pub trait PostBindPlugin {
    fn post_bind(&self, cx: &Ctx, state: &mut CycleState, pod: &Pod, node: &str);
}

/// A plugin at a score point, with its weight.
#[derive(Clone)]
pub struct WeightedPlugin {
    pub plugin: Arc<dyn Plugin>,
    pub weight: i64,
}

/// One built profile: the plugins of each extension point, in order.
#[derive(Clone, Default)]
pub struct Framework {
    pub profile_name: String,
    /// Effective `percentageOfNodesToScore`: the profile's, else the global value.
    pub percentage_of_nodes_to_score: Option<i32>,
    pub pre_enqueue: Vec<Arc<dyn Plugin>>,
    pub queue_sort: Vec<Arc<dyn Plugin>>,
    pub pre_filter: Vec<Arc<dyn Plugin>>,
    pub filter: Vec<Arc<dyn Plugin>>,
    pub post_filter: Vec<Arc<dyn Plugin>>,
    pub pre_score: Vec<Arc<dyn Plugin>>,
    pub score: Vec<WeightedPlugin>,
    pub reserve: Vec<Arc<dyn Plugin>>,
    pub permit: Vec<Arc<dyn Plugin>>,
    pub pre_bind: Vec<Arc<dyn Plugin>>,
    pub bind: Vec<Arc<dyn Plugin>>,
    pub post_bind: Vec<Arc<dyn Plugin>>,
    /// Effective (defaulted) args of every enabled plugin that has an args kind.
    pub plugin_args: BTreeMap<String, serde_json::Value>,
}

impl Framework {
    /// The filter plugins a cycle runs: those whose PreFilter did not Skip, in order.
    /// Taken once per cycle, so that the search over every node does not compare
    /// plugin names for each.
    pub fn active_filters(&self, state: &CycleState) -> ActiveFilters<'_> {
        ActiveFilters(
            self.filter
                .iter()
                .filter(|p| !state.skip_filter_plugins.contains(p.name()))
                .filter_map(|p| Some((p.name(), p.as_filter()?)))
                .collect(),
        )
    }

    /// `RunPreFilterExtensionAddPod` over the non-skipped PreFilter plugins.
    pub fn run_pre_filter_add_pod(
        &self,
        cx: &Ctx,
        state: &mut CycleState,
        pod: &Pod,
        to_add: &Arc<Pod>,
        node: &NodeInfo,
    ) -> Status {
        self.run_pre_filter_extension(state, "AddPod", |pf, state| {
            pf.add_pod(cx, state, pod, to_add, node)
        })
    }

    /// `RunPreFilterExtensionRemovePod` over the non-skipped PreFilter plugins.
    pub fn run_pre_filter_remove_pod(
        &self,
        cx: &Ctx,
        state: &mut CycleState,
        pod: &Pod,
        to_remove: &Arc<Pod>,
        node: &NodeInfo,
    ) -> Status {
        self.run_pre_filter_extension(state, "RemovePod", |pf, state| {
            pf.remove_pod(cx, state, pod, to_remove, node)
        })
    }

    fn run_pre_filter_extension(
        &self,
        state: &mut CycleState,
        what: &str,
        mut call: impl FnMut(&dyn PreFilterPlugin, &mut CycleState) -> Status,
    ) -> Status {
        for p in &self.pre_filter {
            if state.skip_filter_plugins.contains(p.name()) {
                continue;
            }
            let Some(pf) = p.as_pre_filter() else {
                continue;
            };
            if !pf.has_extensions() {
                continue;
            }
            let st = call(pf, state);
            if !st.is_success() {
                return Status::error(format!(
                    "running {what} on PreFilter plugin {:?}: {}",
                    p.name(),
                    st.message()
                ));
            }
        }
        Status::success()
    }

    /// `RunFilterPluginsWithNominatedPods`: pods nominated to `node` with priority at
    /// least the incoming pod's are added first; if any were, the filters must pass
    /// both with and without them.
    pub fn run_filter_plugins_with_nominated_pods(
        &self,
        cx: &Ctx,
        state: &CycleState,
        pod: &Pod,
        node: &NodeInfo,
    ) -> Status {
        self.run_filters_with_nominated_pods(&self.active_filters(state), cx, state, pod, node)
    }

    /// [`Framework::run_filter_plugins_with_nominated_pods`] with the cycle's
    /// [`Framework::active_filters`] (the skipped plugins are the same in the state's
    /// copy).
    pub fn run_filters_with_nominated_pods(
        &self,
        filters: &ActiveFilters,
        cx: &Ctx,
        state: &CycleState,
        pod: &Pod,
        node: &NodeInfo,
    ) -> Status {
        let nominated: Vec<&Arc<Pod>> = nominated_pods_for(cx.cluster, pod, node.name());
        if nominated.is_empty() {
            return run_filters(filters, cx, state, pod, node);
        }
        let mut node_copy = node.clone();
        let mut state_copy = state.clone();
        for p in &nominated {
            node_copy.add_pod((*p).clone());
            let st = self.run_pre_filter_add_pod(cx, &mut state_copy, pod, p, &node_copy);
            if !st.is_success() {
                return st;
            }
        }
        let st = run_filters(filters, cx, &state_copy, pod, &node_copy);
        if !st.is_success() {
            return st;
        }
        run_filters(filters, cx, state, pod, node)
    }
}

/// The filter plugins a cycle runs, with their names, in order
/// ([`Framework::active_filters`]).
pub struct ActiveFilters<'a>(Vec<(&'a str, &'a dyn FilterPlugin)>);

/// `RunFilterPlugins` over `filters`: the first rejection stops, with the plugin
/// named; statuses other than Success/rejection become Errors.
fn run_filters(
    filters: &ActiveFilters,
    cx: &Ctx,
    state: &CycleState,
    pod: &Pod,
    node: &NodeInfo,
) -> Status {
    for &(name, f) in &filters.0 {
        let st = f.filter(cx, state, pod, node);
        if !st.is_success() {
            return filter_failure(name, st);
        }
    }
    Status::success()
}

/// A filter plugin's answer other than Success as `RunFilterPlugins` reports it: a
/// rejection with the plugin named, anything else an Error naming it.
pub fn filter_failure(name: &str, st: Status) -> Status {
    if st.is_rejected() {
        return st.with_plugin(name);
    }
    Status::error(format!("running {name:?} filter plugin: {}", st.message())).with_plugin(name)
}

/// Pending pods nominated to `node` with priority ≥ the pod's, other than the pod.
pub fn nominated_pods_for<'c>(cluster: &'c Cluster, pod: &Pod, node: &str) -> Vec<&'c Arc<Pod>> {
    cluster
        .nominated_pods(node)
        .filter(|p| p.uid != pod.uid && p.priority >= pod.priority)
        .collect()
}
