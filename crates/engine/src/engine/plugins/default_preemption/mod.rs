//! DefaultPreemption (PostFilter, PreEnqueue): when no node fits, find the node where
//! evicting lower-priority pods would make room, and the fewest such pods.
//!
//! The engine is pure: nothing is evicted. A successful PostFilter reports the node
//! the pod would be nominated to and the victims kube-scheduler would delete.
//!
//! Result convention (`PostFilterResult`): `None` leaves the pod's nomination as it
//! is (upstream's nil result); `Some` with `nominated_node: None` clears it (upstream's
//! `NewPostFilterResultWithNominatedNode("")`, returned when preemption cannot help).

use std::collections::BTreeSet;
use std::sync::Arc;

use k8s_openapi::jiff::Timestamp;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::config::field;
use crate::engine::framework::{
    Ctx, CycleState, Framework, NodeToStatus, Plugin, PostFilterPlugin, PostFilterResult,
    PreEnqueuePlugin,
};
use crate::engine::status::{Code, Status};
use crate::model::labels::{Selector, label_selector};
use crate::model::{Cluster, NodeInfo, Pod, PreemptionPolicy};

pub mod evaluator;
pub mod go_sort;

pub const NAME: &str = "DefaultPreemption";

/// `DefaultPreemptionArgs` (kubescheduler.config.k8s.io/v1).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DefaultPreemptionArgs {
    /// Minimum share of potential nodes to dry-run, in percent (default 10).
    pub min_candidate_nodes_percentage: i32,
    /// Minimum number of potential nodes to dry-run (default 100).
    pub min_candidate_nodes_absolute: i32,
}

impl Default for DefaultPreemptionArgs {
    fn default() -> Self {
        DefaultPreemptionArgs {
            min_candidate_nodes_percentage: 10,
            min_candidate_nodes_absolute: 100,
        }
    }
}

/// The args as a user may write them: every field optional (nil → default).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct UserArgs {
    #[serde(default)]
    min_candidate_nodes_percentage: Option<i32>,
    #[serde(default)]
    min_candidate_nodes_absolute: Option<i32>,
}

impl DefaultPreemptionArgs {
    /// Decode the user's args and apply `SetDefaults_DefaultPreemptionArgs`.
    fn from_user(user: Option<&Value>) -> Result<Self, String> {
        let defaults = DefaultPreemptionArgs::default();
        let Some(v) = user.filter(|v| !v.is_null()) else {
            return Ok(defaults);
        };
        let u: UserArgs = serde_json::from_value(strip_type_meta(v))
            .map_err(|e| format!("decoding DefaultPreemptionArgs: {e}"))?;
        Ok(DefaultPreemptionArgs {
            min_candidate_nodes_percentage: u
                .min_candidate_nodes_percentage
                .unwrap_or(defaults.min_candidate_nodes_percentage),
            min_candidate_nodes_absolute: u
                .min_candidate_nodes_absolute
                .unwrap_or(defaults.min_candidate_nodes_absolute),
        })
    }

    /// `ValidateDefaultPreemptionArgs`; `path` is the args' field path ("" for none).
    pub fn validate(&self, path: &str) -> Vec<String> {
        let child = |name: &str| {
            if path.is_empty() {
                name.to_string()
            } else {
                format!("{path}.{name}")
            }
        };
        let pct_path = child("minCandidateNodesPercentage");
        let abs_path = child("minCandidateNodesAbsolute");
        let pct = self.min_candidate_nodes_percentage;
        let abs = self.min_candidate_nodes_absolute;
        let mut errs = Vec::new();
        if !(0..=100).contains(&pct) {
            errs.push(field::invalid(
                &pct_path,
                pct,
                "not in valid range [0, 100]",
            ));
        }
        if abs < 0 {
            errs.push(field::invalid(
                &abs_path,
                abs,
                "not in valid range [0, inf)",
            ));
        }
        if pct == 0 && abs == 0 {
            errs.push(field::invalid(
                &pct_path,
                pct,
                "cannot be zero at the same time as minCandidateNodesAbsolute",
            ));
            errs.push(field::invalid(
                &abs_path,
                abs,
                "cannot be zero at the same time as minCandidateNodesPercentage",
            ));
        }
        errs
    }
}

/// `apiVersion`/`kind` may accompany args in a pluginConfig entry.
fn strip_type_meta(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| k.as_str() != "apiVersion" && k.as_str() != "kind")
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Registry hook: defaulted args as JSON, or rendered field errors.
pub fn default_args(user: Option<&Value>, path: &str) -> Result<Value, Vec<String>> {
    let args = DefaultPreemptionArgs::from_user(user).map_err(|e| vec![format!("{path}: {e}")])?;
    let errs = args.validate(path);
    if !errs.is_empty() {
        return Err(errs);
    }
    serde_json::to_value(&args).map_err(|e| vec![format!("{path}: {e}")])
}

/// Registry hook: builds the plugin from defaulted args (validated again, as `New`
/// does; errors joined like a Go `field.ErrorList` aggregate).
pub fn new(args: &Value, _fts: &crate::version::Features) -> Result<Arc<dyn Plugin>, String> {
    let args = DefaultPreemptionArgs::from_user(Some(args))?;
    let errs = args.validate("");
    match errs.len() {
        0 => Ok(Arc::new(DefaultPreemption { args })),
        1 => Err(errs[0].clone()),
        _ => Err(format!("[{}]", errs.join(", "))),
    }
}

pub struct DefaultPreemption {
    pub args: DefaultPreemptionArgs,
}

impl Plugin for DefaultPreemption {
    fn name(&self) -> &str {
        NAME
    }
    fn as_pre_enqueue(&self) -> Option<&dyn PreEnqueuePlugin> {
        Some(self)
    }
    fn as_post_filter(&self) -> Option<&dyn PostFilterPlugin> {
        Some(self)
    }
}

impl PreEnqueuePlugin for DefaultPreemption {
    /// Upstream holds back a pod while its own asynchronous preemption is still
    /// deleting victims (UU `waiting for the preemption for this pod to be finished`).
    /// That is in-memory state of a running scheduler; a replayed cycle starts with no
    /// preemption in flight, so the pod is never held here.
    fn pre_enqueue(&self, _cx: &Ctx, _pod: &Pod) -> Status {
        Status::success()
    }
}

impl PostFilterPlugin for DefaultPreemption {
    fn post_filter(
        &self,
        fw: &Framework,
        cx: &Ctx,
        state: &CycleState,
        pod: &Pod,
        statuses: &NodeToStatus,
    ) -> (Option<PostFilterResult>, Status) {
        let (result, st) = evaluator::preempt(self, fw, cx, state, pod, statuses);
        let msg = st.message();
        if msg.is_empty() {
            return (result, st);
        }
        (result, Status::new(st.code, [format!("preemption: {msg}")]))
    }
}

impl DefaultPreemption {
    /// `calculateNumCandidates`: how many candidates the dry run must produce.
    pub fn calculate_num_candidates(&self, num_nodes: usize) -> usize {
        let n = num_nodes as i64;
        let mut c = n * i64::from(self.args.min_candidate_nodes_percentage) / 100;
        c = c.max(i64::from(self.args.min_candidate_nodes_absolute));
        c.min(n).max(0) as usize
    }

    /// `PodEligibleToPreemptOthers`: `Err` carries the reason.
    pub fn pod_eligible_to_preempt_others(
        &self,
        cluster: &Cluster,
        pod: &Pod,
        nominated_node_status: &Status,
    ) -> Result<(), &'static str> {
        if pod.preemption_policy == PreemptionPolicy::Never {
            return Err("not eligible due to preemptionPolicy=Never.");
        }
        let Some(nominated) = pod.nominated_node_name.as_deref().filter(|n| !n.is_empty()) else {
            return Ok(());
        };
        // Filters now rule the nominated node out for good: preempt again elsewhere.
        if nominated_node_status.code == Code::UnschedulableAndUnresolvable {
            return Ok(());
        }
        if let Some(node) = cluster.node(nominated) {
            let waiting_on_victims = node.pods.iter().any(|p| {
                is_preemption_allowed(p, pod)
                    && p.deletion_timestamp.is_some()
                    && p.preemption_in_progress
            });
            if waiting_on_victims {
                return Err("not eligible due to a terminating pod on the nominated node.");
            }
        }
        Ok(())
    }

    /// `SelectVictimsOnNode`: the fewest lower-priority pods whose removal lets `pod`
    /// pass the filters on `node`. `node` and `state` are the caller's copies and are
    /// left in the "victims removed" state. Returns (victims, number of victims whose
    /// eviction violates a PDB, status).
    pub fn select_victims_on_node(
        &self,
        fw: &Framework,
        cx: &Ctx,
        state: &mut CycleState,
        pod: &Pod,
        node: &mut NodeInfo,
        pdbs: &[Pdb],
    ) -> (Vec<Arc<Pod>>, usize, Status) {
        let mut potential: Vec<Arc<Pod>> = node
            .pods
            .iter()
            .filter(|p| is_preemption_allowed(p, pod))
            .cloned()
            .collect();
        for p in &potential {
            let st = remove_pod(fw, cx, state, pod, p, node);
            if !st.is_success() {
                return (Vec::new(), 0, st);
            }
        }
        if potential.is_empty() {
            return (
                Vec::new(),
                0,
                Status::unresolvable("No preemption victims found for incoming pod"),
            );
        }
        // If the pod does not fit even with every lower-priority pod gone, this node
        // cannot help (affinity to a victim is deliberately not considered).
        let st = fw.run_filter_plugins_with_nominated_pods(cx, state, pod, node);
        if !st.is_success() {
            return (Vec::new(), 0, st);
        }
        let now = cx.now;
        go_sort::sort_slice(&mut potential, |a, b| more_important_pod(a, b, now));
        let (violating, non_violating) = filter_pods_with_pdb_violation(&potential, pdbs);

        // Reprieve the most important pods first, PDB-protected ones before the rest.
        let mut victims: Vec<Arc<Pod>> = Vec::new();
        let mut num_violating_victims = 0usize;
        for (group, is_violating) in [(&violating, true), (&non_violating, false)] {
            for p in group.iter() {
                node.add_pod(p.clone());
                let st = fw.run_pre_filter_add_pod(cx, state, pod, p, node);
                if !st.is_success() {
                    return (Vec::new(), 0, st);
                }
                let fits = fw
                    .run_filter_plugins_with_nominated_pods(cx, state, pod, node)
                    .is_success();
                if !fits {
                    let st = remove_pod(fw, cx, state, pod, p, node);
                    if !st.is_success() {
                        return (Vec::new(), 0, st);
                    }
                    victims.push(p.clone());
                    if is_violating {
                        num_violating_victims += 1;
                    }
                }
            }
        }
        // Victims came out of two separately sorted groups: restore importance order.
        if !violating.is_empty() && !non_violating.is_empty() {
            go_sort::sort_slice(&mut victims, |a, b| more_important_pod(a, b, now));
        }
        (victims, num_violating_victims, Status::success())
    }
}

fn remove_pod(
    fw: &Framework,
    cx: &Ctx,
    state: &mut CycleState,
    pod: &Pod,
    victim: &Arc<Pod>,
    node: &mut NodeInfo,
) -> Status {
    if !node.remove_pod(&victim.uid) {
        return Status::error(format!(
            "no corresponding pod {} in pods of node {}",
            victim.name,
            node.name()
        ));
    }
    fw.run_pre_filter_remove_pod(cx, state, pod, victim, node)
}

/// Victims must have strictly lower priority than the preemptor.
pub fn is_preemption_allowed(victim: &Pod, preemptor: &Pod) -> bool {
    victim.priority < preemptor.priority
}

/// `util.GetPodStartTime`: a pod that has not started counts as starting now.
pub fn pod_start_time(p: &Pod, now: Timestamp) -> Timestamp {
    p.start_time.unwrap_or(now)
}

/// `util.MoreImportantPod`: higher priority, then earlier start.
pub fn more_important_pod(a: &Pod, b: &Pod, now: Timestamp) -> bool {
    if a.priority != b.priority {
        return a.priority > b.priority;
    }
    pod_start_time(a, now) < pod_start_time(b, now)
}

/// A PodDisruptionBudget as preemption reads it. Only budgets whose selector can
/// match a pod are kept (nil, empty or invalid selectors match nothing).
#[derive(Clone, Debug)]
pub struct Pdb {
    pub namespace: String,
    pub selector: Selector,
    pub disruptions_allowed: i32,
    pub disrupted_pods: BTreeSet<String>,
}

/// All PDBs of the cluster, parsed once per preemption attempt, sorted by namespace
/// (the order of budgets does not change the split).
pub fn pod_disruption_budgets(cluster: &Cluster) -> Vec<Pdb> {
    let mut out = Vec::new();
    for (key, pdb) in &cluster.pod_disruption_budgets {
        let namespace = pdb
            .metadata
            .namespace
            .clone()
            .or_else(|| key.split_once('/').map(|(ns, _)| ns.to_string()))
            .unwrap_or_else(|| "default".into());
        let Ok(selector) = label_selector(pdb.spec.as_ref().and_then(|s| s.selector.as_ref()))
        else {
            continue;
        };
        if selector.is_empty() || selector.is_nothing() {
            continue;
        }
        let status = pdb.status.as_ref();
        out.push(Pdb {
            namespace,
            selector,
            disruptions_allowed: status.map_or(0, |s| s.disruptions_allowed),
            disrupted_pods: status
                .and_then(|s| s.disrupted_pods.as_ref())
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default(),
        });
    }
    out.sort_by(|a, b| a.namespace.cmp(&b.namespace));
    out
}

/// `filterPodsWithPDBViolation`: splits `pods` (order kept) into those whose eviction
/// would exceed a matching budget's `disruptionsAllowed`, walking them in order and
/// spending the budgets as it goes, and the rest. `pdbs` must be sorted by namespace,
/// as [`pod_disruption_budgets`] returns them.
pub fn filter_pods_with_pdb_violation(
    pods: &[Arc<Pod>],
    pdbs: &[Pdb],
) -> (Vec<Arc<Pod>>, Vec<Arc<Pod>>) {
    let mut allowed: Vec<i32> = pdbs.iter().map(|p| p.disruptions_allowed).collect();
    let mut violating = Vec::new();
    let mut non_violating = Vec::new();
    for pod in pods {
        let mut violated = false;
        // A pod without labels matches no budget.
        if !pod.labels.is_empty() {
            // `pdbs` is sorted by namespace: only the pod's namespace's slice.
            let start = pdbs.partition_point(|p| *p.namespace < *pod.namespace);
            let end = start + pdbs[start..].partition_point(|p| p.namespace == pod.namespace);
            for (i, pdb) in pdbs.iter().enumerate().take(end).skip(start) {
                if !pdb.selector.matches(&pod.labels) {
                    continue;
                }
                // Already being disrupted through the eviction API: budget spent.
                if pdb.disrupted_pods.contains(&pod.name) {
                    continue;
                }
                allowed[i] -= 1;
                if allowed[i] < 0 {
                    violated = true;
                }
            }
        }
        if violated {
            violating.push(pod.clone());
        } else {
            non_violating.push(pod.clone());
        }
    }
    (violating, non_violating)
}

#[cfg(test)]
mod tests;
