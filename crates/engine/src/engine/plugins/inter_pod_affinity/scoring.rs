//! PreScore, Score and NormalizeScore (`interpodaffinity/scoring.go`).
//!
//! PreScore sums term weights per (topology key, value) of the node each existing pod
//! runs on; Score adds up the entries matching the node's labels.

use crate::engine::plugins::FastMap;
use std::sync::Arc;

use super::*;
use crate::engine::status::Status;
use crate::model::label_index::TermKind;
use crate::model::{Node, NodeInfo};

pub(crate) const PRE_SCORE_STATE_KEY: &str = "PreScoreInterPodAffinity";

/// `scoreMap`: topology key → value → summed weight (foldhash: read for every
/// node, only summed, so the order does not show).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct ScoreMap(pub FastMap<String, FastMap<String, i64>>);

impl ScoreMap {
    /// `processTerm` for a parsed term; returns whether an entry was touched.
    pub(crate) fn add(&mut self, key: &str, node: &Node, weight: i64) -> bool {
        let Some(value) = node.labels.get(key) else {
            return false;
        };
        let inner = match self.0.get_mut(key) {
            Some(m) => m,
            None => self.0.entry(key.to_string()).or_default(),
        };
        match inner.get_mut(value.as_str()) {
            Some(s) => *s += weight,
            None => {
                inner.insert(value.to_string(), weight);
            }
        }
        true
    }
}

/// `preScoreState` (shared by clones, as upstream's Clone returns itself).
#[derive(Clone, Debug)]
pub(crate) struct PreScoreState(pub Arc<ScoreMap>);

impl InterPodAffinity {
    /// PreScore's computation; `Ok(None)` = Skip.
    pub(crate) fn pre_score_state(
        &self,
        cluster: &Cluster,
        pod: &Pod,
    ) -> Result<Option<ScoreMap>, String> {
        let has_preferred = !preferred_affinity_terms(pod).is_empty()
            || !preferred_anti_affinity_terms(pod).is_empty();
        // Optionally ignore existing pods' preferences when the pod has none itself.
        if self.args.ignore_preferred_terms_of_existing_pods && !has_preferred {
            return Ok(None);
        }
        let mut terms = parse_pod_terms(pod).map_err(|e| format!("failed to parse pod: {e}"))?;
        for t in terms
            .preferred_affinity
            .iter_mut()
            .chain(terms.preferred_anti_affinity.iter_mut())
        {
            merge_namespaces(cluster, t);
        }
        let ns_labels = cluster.namespace_labels(&pod.namespace);
        let empty = Labels::new();
        let hard_weight = self.args.hard_pod_affinity_weight;

        let mut map = ScoreMap::default();
        let mut touched = false;
        let nodes = cluster.nodes();
        // The pod's preferred terms against every existing pod they may select.
        for (terms, sign) in [
            (&terms.preferred_affinity, 1),
            (&terms.preferred_anti_affinity, -1),
        ] {
            for t in terms {
                for_each_candidate(cluster, &t.selector, |pos, other| {
                    if t.matches(other, &empty) {
                        let w = sign * t.weight as i64;
                        touched |= map.add(&t.topology_key, &nodes[pos].node, w);
                    }
                });
            }
        }
        // Existing pods' terms against the pod: upstream walks the pods with
        // (anti-)affinity; the index offers only those with a term that may select it.
        let index = cluster.label_index();
        for other in index.pods_with_terms_selecting(TermKind::ScoringAffinity, &pod.labels) {
            let Some(pos) = other
                .node_name
                .as_ref()
                .and_then(|n| cluster.node_position_of(n))
            else {
                continue;
            };
            let node = &*nodes[pos].node;
            // Pods on a node without labels contribute nothing.
            if node.labels.is_empty() {
                continue;
            }
            if hard_weight > 0 {
                let req = required_affinity_terms(other);
                if raw_terms_valid(req) {
                    for t in req {
                        if raw_term_matches(t, other, pod, &ns_labels) {
                            touched |= map.add(&t.topology_key, node, hard_weight as i64);
                        }
                    }
                }
            }
            for (terms, sign) in [
                (preferred_affinity_terms(other), 1),
                (preferred_anti_affinity_terms(other), -1),
            ] {
                if !raw_terms_valid(terms.iter().map(|w| &w.pod_affinity_term)) {
                    continue;
                }
                for w in terms {
                    if raw_term_matches(&w.pod_affinity_term, other, pod, &ns_labels) {
                        touched |= map.add(
                            &w.pod_affinity_term.topology_key,
                            node,
                            sign * w.weight as i64,
                        );
                    }
                }
            }
        }
        Ok(touched.then_some(map))
    }
}

impl PreScorePlugin for InterPodAffinity {
    fn pre_score(
        &self,
        cx: &Ctx,
        state: &mut CycleState,
        pod: &Pod,
        _nodes: &[&NodeInfo],
    ) -> Status {
        match self.pre_score_state(cx.cluster, pod) {
            Err(e) => Status::error(e),
            Ok(None) => Status::skip(),
            Ok(Some(map)) => {
                state.write(PRE_SCORE_STATE_KEY, PreScoreState(Arc::new(map)));
                Status::success()
            }
        }
    }
}

fn read_state(state: &CycleState) -> Result<&ScoreMap, Status> {
    state
        .read::<PreScoreState>(PRE_SCORE_STATE_KEY)
        .map(|s| &*s.0)
        .ok_or_else(|| {
            Status::error(format!(
                "failed to read {PRE_SCORE_STATE_KEY:?} from cycleState: not found"
            ))
        })
}

impl ScorePlugin for InterPodAffinity {
    /// Σ over topology keys the node has of the weight summed at its value: positive
    /// for affinity, negative for anti-affinity.
    fn score(&self, _cx: &Ctx, state: &CycleState, _pod: &Pod, node: &NodeInfo) -> (i64, Status) {
        let map = match read_state(state) {
            Ok(m) => m,
            Err(st) => return (0, st),
        };
        let labels = &node.node.labels;
        let score = map
            .0
            .iter()
            .filter_map(|(k, values)| labels.get(k).and_then(|v| values.get(v.as_str())))
            .sum();
        (score, Status::success())
    }

    fn has_normalize(&self) -> bool {
        true
    }

    /// `int64(100·(s − min)/(max − min))` in float64; all equal → 0.
    fn normalize_score(
        &self,
        _cx: &Ctx,
        state: &CycleState,
        _pod: &Pod,
        scores: &mut [NodeScore],
    ) -> Status {
        let map = match read_state(state) {
            Ok(m) => m,
            Err(st) => return st,
        };
        if map.0.is_empty() {
            return Status::success();
        }
        let min = scores.iter().map(|s| s.score).min().unwrap_or(0);
        let max = scores.iter().map(|s| s.score).max().unwrap_or(0);
        let diff = max - min;
        for s in scores.iter_mut() {
            s.score = if diff > 0 {
                (MAX_NODE_SCORE as f64 * ((s.score - min) as f64 / diff as f64)) as i64
            } else {
                0
            };
        }
        Status::success()
    }
}
