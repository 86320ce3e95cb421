//! PreScore, Score and NormalizeScore (`podtopologyspread/scoring.go`).
//!
//! PreScore counts matching pods per domain of every soft non-hostname constraint
//! over all nodes, but only into domains some feasible node lies in; hostname counts
//! are the node's own pods, taken in Score.

use std::sync::Arc;

use super::*;
use crate::engine::plugins::{FastMap, FastSet};
use crate::engine::status::Status;

pub(crate) const PRE_SCORE_STATE_KEY: &str = "PreScorePodTopologySpread";

/// `preScoreState`. Upstream's Clone shares it, so an `Arc` does too.
#[derive(Clone, Debug)]
pub(crate) struct PreScoreState(pub Arc<PreScoreData>);

#[derive(Debug, Default)]
pub(crate) struct PreScoreData {
    pub constraints: Vec<Constraint>,
    /// Feasible nodes lacking some topology key (only when all keys are required).
    pub ignored_nodes: FastSet<String>,
    /// Per constraint: domain value → matching pods (hostname constraints: empty).
    pub counts: Vec<FastMap<String, i64>>,
    /// `ln(#domains + 2)` per constraint.
    pub weights: Vec<f64>,
    /// Matching pods per node (indexed like `cluster.nodes()`), per constraint.
    pub per_node: Vec<Arc<Vec<i64>>>,
}

/// `topologyNormalizingWeight`.
fn normalizing_weight(size: usize) -> f64 {
    ((size + 2) as f64).ln()
}

/// `scoreForCount`.
fn score_for_count(cnt: i64, max_skew: i32, weight: f64) -> f64 {
    cnt as f64 * weight + (max_skew as f64 - 1.0)
}

impl PodTopologySpread {
    /// `initPreScoreState` + the counting of PreScore; `None` = Skip.
    pub(crate) fn pre_score_state(
        &self,
        cluster: &Cluster,
        pod: &Pod,
        feasible: &[&NodeInfo],
    ) -> Result<Option<PreScoreData>, String> {
        if cluster.nodes().is_empty() {
            return Ok(None);
        }
        // Only user constraints or List defaults require every key on a node; with
        // System defaults a node without a zone still gets hostname spreading.
        let require_all = !pod.topology_spread_constraints.is_empty() || !self.system_defaulted;
        let constraints = if pod.topology_spread_constraints.is_empty() {
            self.build_default_constraints(cluster, pod, SCHEDULE_ANYWAY)
                .map_err(|e| {
                    format!(
                        "calculating preScoreState: setting default soft topology spread constraints: {e}"
                    )
                })?
        } else {
            Self::filter_constraints(&pod.topology_spread_constraints, &pod.labels, SCHEDULE_ANYWAY)
                .map_err(|e| {
                    format!(
                        "calculating preScoreState: obtaining pod's soft topology spread constraints: {e}"
                    )
                })?
        };
        if constraints.is_empty() {
            return Ok(None);
        }

        let mut data = PreScoreData {
            counts: vec![FastMap::default(); constraints.len()],
            ..Default::default()
        };
        for info in feasible {
            let node = &*info.node;
            if require_all && !node_has_all_keys(node, &constraints) {
                data.ignored_nodes.insert(node.name.clone());
                continue;
            }
            for (i, c) in constraints.iter().enumerate() {
                if c.is_hostname() {
                    continue;
                }
                let value = node.labels.get(&c.topology_key).map_or("", Sym::as_str);
                if !data.counts[i].contains_key(value) {
                    data.counts[i].insert(value.to_string(), 0);
                }
            }
        }
        data.weights = constraints
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let size = if c.is_hostname() {
                    feasible.len() - data.ignored_nodes.len()
                } else {
                    data.counts[i].len()
                };
                normalizing_weight(size)
            })
            .collect();

        let required_affinity = RequiredNodeAffinity::from_pod(pod);
        data.per_node = node_counts_by_selector(cluster, &constraints, &pod.namespace);
        if constraints.iter().any(|c| !c.is_hostname()) {
            for (pos, info) in cluster.nodes().iter().enumerate() {
                let node = &*info.node;
                if require_all && !node_has_all_keys(node, &constraints) {
                    continue;
                }
                let mut inclusion = Inclusion::new(pod, &required_affinity, node);
                for (i, c) in constraints.iter().enumerate() {
                    if c.is_hostname() || !inclusion.matches(c) {
                        continue;
                    }
                    let value = node.labels.get(&c.topology_key).map_or("", Sym::as_str);
                    // Domains no feasible node lies in are not counted.
                    if let Some(slot) = data.counts[i].get_mut(value) {
                        *slot += data.per_node[i][pos];
                    }
                }
            }
        }
        data.constraints = constraints;
        Ok(Some(data))
    }
}

impl PreScorePlugin for PodTopologySpread {
    fn pre_score(
        &self,
        cx: &Ctx,
        state: &mut CycleState,
        pod: &Pod,
        nodes: &[&NodeInfo],
    ) -> Status {
        match self.pre_score_state(cx.cluster, pod, nodes) {
            Err(e) => Status::error(e),
            Ok(None) => Status::skip(),
            Ok(Some(data)) => {
                state.write(PRE_SCORE_STATE_KEY, PreScoreState(Arc::new(data)));
                Status::success()
            }
        }
    }
}

fn read_state(state: &CycleState) -> Result<&PreScoreData, Status> {
    state
        .read::<PreScoreState>(PRE_SCORE_STATE_KEY)
        .map(|s| &*s.0)
        .ok_or_else(|| {
            Status::error(format!(
                "error reading {PRE_SCORE_STATE_KEY:?} from cycleState: not found"
            ))
        })
}

impl ScorePlugin for PodTopologySpread {
    fn score(&self, cx: &Ctx, state: &CycleState, pod: &Pod, node: &NodeInfo) -> (i64, Status) {
        let s = match read_state(state) {
            Ok(s) => s,
            Err(st) => return (0, st),
        };
        if s.ignored_nodes.contains(node.name()) {
            return (0, Status::success());
        }
        // The per-node counts of PreScore describe the cluster's own NodeInfos; a copy
        // (with pods added or removed) is counted afresh.
        let pos = cx
            .cluster
            .node_position(node.name())
            .filter(|&p| std::ptr::eq(&cx.cluster.nodes()[p], node));
        let mut score = 0.0;
        for (i, c) in s.constraints.iter().enumerate() {
            let Some(value) = node.node.labels.get(&c.topology_key) else {
                continue;
            };
            let cnt = if c.is_hostname() {
                match pos {
                    Some(p) => s.per_node[i][p],
                    None => count_matching(&node.pods, &c.selector, &pod.namespace),
                }
            } else {
                s.counts[i].get(value.as_str()).copied().unwrap_or(0)
            };
            score += score_for_count(cnt, c.max_skew, s.weights[i]);
        }
        (score.round() as i64, Status::success())
    }

    fn has_normalize(&self) -> bool {
        true
    }

    /// Fewer matching pods → higher score: `100·(max + min − s)/max` over the nodes
    /// not ignored; ignored nodes get 0.
    fn normalize_score(
        &self,
        cx: &Ctx,
        state: &CycleState,
        _pod: &Pod,
        scores: &mut [NodeScore],
    ) -> Status {
        let s = match read_state(state) {
            Ok(s) => s,
            Err(st) => return st,
        };
        let nodes = cx.cluster.nodes();
        let ignored = |ns: &NodeScore| {
            !s.ignored_nodes.is_empty()
                && nodes
                    .get(ns.node)
                    .is_some_and(|n| s.ignored_nodes.contains(n.name()))
        };
        let mut min = i64::MAX;
        let mut max = 0i64;
        for ns in scores.iter() {
            if ignored(ns) {
                continue;
            }
            min = min.min(ns.score);
            max = max.max(ns.score);
        }
        for ns in scores.iter_mut() {
            if ignored(ns) {
                ns.score = 0;
            } else if max == 0 {
                ns.score = MAX_NODE_SCORE;
            } else {
                ns.score = MAX_NODE_SCORE * (max + min - ns.score) / max;
            }
        }
        Status::success()
    }
}
