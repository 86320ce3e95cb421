//! PreFilter, AddPod / RemovePod and Filter (`interpodaffinity/filtering.go`).
//!
//! PreFilter counts, per (topology key, value): existing pods whose required
//! anti-affinity matches the incoming pod (only nodes' pods with required
//! anti-affinity are visited), and existing pods matching the incoming pod's required
//! affinity / anti-affinity terms (every pod, once). Filter is then lookups.

use crate::engine::plugins::FastMap;
use std::sync::Arc;

use super::*;
use crate::engine::status::Status;
use crate::model::label_index::TermKind;
use crate::model::{Node, NodeInfo};

pub(crate) const PRE_FILTER_STATE_KEY: &str = "PreFilterInterPodAffinity";

/// `topologyToMatchedTermCount`, nested so lookups take `&str`; hashed with foldhash
/// (looked up for every node; only ever read by key or summed, never listed).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TopologyCounts(FastMap<String, FastMap<String, i64>>);

impl TopologyCounts {
    pub fn get(&self, key: &str, value: &str) -> i64 {
        self.0
            .get(key)
            .and_then(|m| m.get(value))
            .copied()
            .unwrap_or(0)
    }

    /// No pair at all (`len(m) == 0`).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// `m[pair] += value` (PreFilter's merge: no removal).
    pub(crate) fn add(&mut self, key: &str, value: &str, n: i64) {
        let inner = match self.0.get_mut(key) {
            Some(m) => m,
            None => self.0.entry(key.to_string()).or_default(),
        };
        match inner.get_mut(value) {
            Some(c) => *c += n,
            None => {
                inner.insert(value.to_string(), n);
            }
        }
    }

    /// `update`: add at the node's value of `key`, dropping pairs that reach 0.
    fn update(&mut self, node: &Node, key: &str, n: i64) {
        let Some(value) = node.labels.get(key) else {
            return;
        };
        self.add(key, value, n);
        if let Some(inner) = self.0.get_mut(key)
            && inner.get(value.as_str()) == Some(&0)
        {
            inner.remove(value.as_str());
            if inner.is_empty() {
                self.0.remove(key);
            }
        }
    }

    /// Topology keys with at least one pair.
    pub fn keys(&self) -> impl Iterator<Item = &String> {
        self.0.keys()
    }
}

/// What PreFilter fixed for the cycle.
#[derive(Debug)]
pub struct Fixed {
    /// The incoming pod's required terms (namespace selectors merged).
    pub terms: PodTerms,
    /// Labels of the incoming pod's namespace.
    pub namespace_labels: Labels,
    /// The incoming pod matches all its own required affinity terms.
    pub self_matches_all: bool,
}

/// `preFilterState`.
#[derive(Clone, Debug)]
pub struct PreFilterState {
    pub fixed: Arc<Fixed>,
    pub existing_anti_affinity: TopologyCounts,
    pub affinity: TopologyCounts,
    pub anti_affinity: TopologyCounts,
}

impl PreFilterState {
    /// `updateWithPod`: `delta` = +1 for AddPod, −1 for RemovePod.
    fn update_with_pod(&mut self, incoming: &Pod, other: &Pod, node: &Node, delta: i64) {
        let fixed = &*self.fixed;
        let anti = required_anti_affinity_terms(other);
        if raw_terms_valid(anti) {
            for t in anti {
                if raw_term_matches(t, other, incoming, &fixed.namespace_labels) {
                    self.existing_anti_affinity
                        .update(node, &t.topology_key, delta);
                }
            }
        }
        let affinity = &fixed.terms.required_affinity;
        if pod_matches_all_terms(affinity, other) {
            for t in affinity {
                self.affinity.update(node, &t.topology_key, delta);
            }
        }
        let empty = Labels::new();
        for t in &fixed.terms.required_anti_affinity {
            if t.matches(other, &empty) {
                self.anti_affinity.update(node, &t.topology_key, delta);
            }
        }
    }

    /// `satisfyPodAffinity`.
    fn satisfies_pod_affinity(&self, node: &Node) -> bool {
        let mut pods_exist = true;
        for t in &self.fixed.terms.required_affinity {
            let Some(value) = node.labels.get(&t.topology_key) else {
                // Every topology key must exist on the node.
                return false;
            };
            if self.affinity.get(&t.topology_key, value) <= 0 {
                pods_exist = false;
            }
        }
        // The first pod of a group with affinity to itself: allowed when no pod
        // anywhere matches its terms and it matches them itself.
        pods_exist || (self.affinity.is_empty() && self.fixed.self_matches_all)
    }

    /// `satisfyPodAntiAffinity`.
    fn satisfies_pod_anti_affinity(&self, node: &Node) -> bool {
        if self.anti_affinity.is_empty() {
            return true;
        }
        !self.fixed.terms.required_anti_affinity.iter().any(|t| {
            node.labels
                .get(&t.topology_key)
                .is_some_and(|v| self.anti_affinity.get(&t.topology_key, v) > 0)
        })
    }

    /// `satisfyExistingPodsAntiAffinity`: no node label (k, v) with a positive count.
    /// Walking the counted keys (a few) finds the same pairs as walking the node's
    /// labels.
    fn satisfies_existing_pods_anti_affinity(&self, node: &Node) -> bool {
        !self.existing_anti_affinity.keys().any(|k| {
            node.labels
                .get(k)
                .is_some_and(|v| self.existing_anti_affinity.get(k, v) > 0)
        })
    }
}

impl InterPodAffinity {
    /// PreFilter's computation; `Ok(None)` = Skip, `Err` = the status to return.
    pub fn pre_filter_state(
        &self,
        cluster: &Cluster,
        pod: &Pod,
    ) -> Result<Option<PreFilterState>, Status> {
        let mut terms =
            parse_pod_terms(pod).map_err(|e| Status::unresolvable(format!("parsing pod: {e}")))?;
        // Preferred terms are only parsed here (a parse error rejects the pod).
        terms.preferred_affinity.clear();
        terms.preferred_anti_affinity.clear();
        for t in terms
            .required_affinity
            .iter_mut()
            .chain(terms.required_anti_affinity.iter_mut())
        {
            merge_namespaces(cluster, t);
        }
        let namespace_labels = cluster.namespace_labels(&pod.namespace);

        // Existing pods' required anti-affinity terms matching the incoming pod (upstream
        // walks every node's pods with required anti-affinity; the index offers only
        // those with a term that may select this pod).
        let mut existing_anti_affinity = TopologyCounts::default();
        let index = cluster.label_index();
        for other in index.pods_with_terms_selecting(TermKind::RequiredAntiAffinity, &pod.labels) {
            let Some(pos) = other
                .node_name
                .as_ref()
                .and_then(|n| cluster.node_position_of(n))
            else {
                continue;
            };
            let labels = &cluster.nodes()[pos].node.labels;
            let anti = required_anti_affinity_terms(other);
            if !raw_terms_valid(anti) {
                continue;
            }
            for t in anti {
                if raw_term_matches(t, other, pod, &namespace_labels)
                    && let Some(v) = labels.get(&t.topology_key)
                {
                    existing_anti_affinity.add(&t.topology_key, v, 1);
                }
            }
        }

        // Existing pods matching the incoming pod's required terms.
        let mut affinity = TopologyCounts::default();
        let mut anti_affinity = TopologyCounts::default();
        let has_required =
            !terms.required_affinity.is_empty() || !terms.required_anti_affinity.is_empty();
        if let Some(best) = most_selective(cluster, &terms.required_affinity) {
            let all = &terms.required_affinity;
            for_each_candidate(cluster, &all[best].selector, |pos, other| {
                if pod_matches_all_terms(all, other) {
                    let labels = &cluster.nodes()[pos].node.labels;
                    for t in all {
                        if let Some(v) = labels.get(&t.topology_key) {
                            affinity.add(&t.topology_key, v, 1);
                        }
                    }
                }
            });
        }
        let empty = Labels::new();
        for t in &terms.required_anti_affinity {
            for_each_candidate(cluster, &t.selector, |pos, other| {
                if t.matches(other, &empty)
                    && let Some(v) = cluster.nodes()[pos].node.labels.get(&t.topology_key)
                {
                    anti_affinity.add(&t.topology_key, v, 1);
                }
            });
        }

        if existing_anti_affinity.is_empty() && !has_required {
            return Ok(None);
        }
        let self_matches_all = pod_matches_all_terms(&terms.required_affinity, pod);
        Ok(Some(PreFilterState {
            fixed: Arc::new(Fixed {
                terms,
                namespace_labels,
                self_matches_all,
            }),
            existing_anti_affinity,
            affinity,
            anti_affinity,
        }))
    }
}

fn not_found() -> Status {
    Status::error(format!(
        "error reading {PRE_FILTER_STATE_KEY:?} from cycleState: not found"
    ))
}

impl PreFilterPlugin for InterPodAffinity {
    fn pre_filter(&self, cx: &Ctx, state: &mut CycleState, pod: &Pod) -> (PreFilterResult, Status) {
        match self.pre_filter_state(cx.cluster, pod) {
            Err(st) => (None, st),
            Ok(None) => (None, Status::skip()),
            Ok(Some(s)) => {
                state.write(PRE_FILTER_STATE_KEY, s);
                (None, Status::success())
            }
        }
    }

    fn has_extensions(&self) -> bool {
        true
    }

    fn add_pod(
        &self,
        _cx: &Ctx,
        state: &mut CycleState,
        pod_to_schedule: &Pod,
        pod_to_add: &Arc<Pod>,
        node: &NodeInfo,
    ) -> Status {
        match state.read_mut::<PreFilterState>(PRE_FILTER_STATE_KEY) {
            Some(s) => {
                s.update_with_pod(pod_to_schedule, pod_to_add, &node.node, 1);
                Status::success()
            }
            None => not_found(),
        }
    }

    fn remove_pod(
        &self,
        _cx: &Ctx,
        state: &mut CycleState,
        pod_to_schedule: &Pod,
        pod_to_remove: &Arc<Pod>,
        node: &NodeInfo,
    ) -> Status {
        match state.read_mut::<PreFilterState>(PRE_FILTER_STATE_KEY) {
            Some(s) => {
                s.update_with_pod(pod_to_schedule, pod_to_remove, &node.node, -1);
                Status::success()
            }
            None => not_found(),
        }
    }
}

impl FilterPlugin for InterPodAffinity {
    fn filter(&self, _cx: &Ctx, state: &CycleState, _pod: &Pod, node: &NodeInfo) -> Status {
        let Some(s) = state.read::<PreFilterState>(PRE_FILTER_STATE_KEY) else {
            return not_found();
        };
        let node = &*node.node;
        if !s.satisfies_pod_affinity(node) {
            return Status::unresolvable(ERR_REASON_AFFINITY_RULES_NOT_MATCH);
        }
        if !s.satisfies_pod_anti_affinity(node) {
            return Status::unschedulable(ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH);
        }
        if !s.satisfies_existing_pods_anti_affinity(node) {
            return Status::unschedulable(ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH);
        }
        Status::success()
    }
}
