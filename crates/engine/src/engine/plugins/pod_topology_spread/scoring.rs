//! PreScore, Score and NormalizeScore (`podtopologyspread/scoring.go`).
//!
//! PreScore counts matching pods per domain of every soft non-hostname constraint
//! over all nodes, but only into domains some feasible node lies in; hostname counts
//! are the node's own pods, taken in Score.

use std::sync::Arc;

use super::*;
use crate::engine::status::Status;

pub(crate) const PRE_SCORE_STATE_KEY: &str = "PreScorePodTopologySpread";

/// `preScoreState`. Upstream's Clone shares it, so an `Arc` does too.
#[derive(Clone, Debug)]
pub(crate) struct PreScoreState(pub Arc<PreScoreData>);

#[derive(Debug, Default)]
pub(crate) struct PreScoreData {
    pub constraints: Vec<Constraint>,
    /// Each constraint's domains of the cluster's nodes.
    pub domains: Vec<Arc<NodeDomains>>,
    /// Feasible nodes lacking some topology key (only when all keys are required),
    /// indexed like `cluster.nodes()`.
    pub ignored: Vec<bool>,
    pub ignored_count: usize,
    /// Per constraint, indexed by domain id: matching pods, `None` for a domain no
    /// feasible node lies in (hostname constraints: all `None`).
    pub counts: Vec<Vec<Option<i64>>>,
    /// `ln(#domains + 2)` per constraint.
    pub weights: Vec<f64>,
    /// Matching pods per node (indexed like `cluster.nodes()`), per constraint.
    pub per_node: Vec<Arc<Vec<i64>>>,
}

impl PreScoreData {
    /// Matching pods counted for constraint `i`'s domain `value`; `None` when no
    /// feasible node lies in it.
    #[cfg(test)]
    pub fn count(&self, i: usize, value: &str) -> Option<i64> {
        let d = &self.domains[i];
        let slot = d.names.iter().position(|n| &**n == value);
        let slot = slot.or((value.is_empty()).then_some(d.empty_slot))?;
        self.counts[i][slot]
    }
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

        let nodes = cluster.nodes();
        let domains: Vec<Arc<NodeDomains>> = constraints
            .iter()
            .map(|c| node_domains(cluster, &c.topology_key))
            .collect();
        let has_all_keys = |pos: usize| domains.iter().all(|d| d.ids[pos] != NO_DOMAIN);
        let mut data = PreScoreData {
            ignored: vec![false; nodes.len()],
            counts: domains
                .iter()
                .map(|d| vec![None; d.names.len() + 1])
                .collect(),
            ..Default::default()
        };
        let mut sizes = vec![0usize; constraints.len()];
        for info in feasible {
            let Some(pos) = cluster
                .own_node_position(info)
                .or_else(|| cluster.node_position(info.name()))
            else {
                continue;
            };
            if require_all && !has_all_keys(pos) {
                if !data.ignored[pos] {
                    data.ignored[pos] = true;
                    data.ignored_count += 1;
                }
                continue;
            }
            for (i, c) in constraints.iter().enumerate() {
                if c.is_hostname() {
                    continue;
                }
                let slot = &mut data.counts[i][domains[i].value_slot(pos)];
                if slot.is_none() {
                    *slot = Some(0);
                    sizes[i] += 1;
                }
            }
        }
        data.weights = constraints
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let size = if c.is_hostname() {
                    feasible.len() - data.ignored_count
                } else {
                    sizes[i]
                };
                normalizing_weight(size)
            })
            .collect();

        let required_affinity = RequiredNodeAffinity::from_pod(pod);
        data.per_node = node_counts_by_selector(cluster, &constraints, &pod.namespace);
        // Every node is visited: the loop reads the nodes themselves only when some
        // inclusion policy depends on them, and dense per-node vectors otherwise.
        let counted: Vec<usize> = (0..constraints.len())
            .filter(|&i| !constraints[i].is_hostname())
            .collect();
        let every_node_included = Inclusion::includes_every_node(&constraints, &required_affinity);
        if !counted.is_empty() {
            for (pos, info) in nodes.iter().enumerate() {
                if require_all && !has_all_keys(pos) {
                    continue;
                }
                let mut inclusion = Inclusion::new(pod, &required_affinity, &info.node);
                for &i in &counted {
                    if !every_node_included && !inclusion.matches(&constraints[i]) {
                        continue;
                    }
                    // Domains no feasible node lies in are not counted.
                    if let Some(n) = &mut data.counts[i][domains[i].value_slot(pos)] {
                        *n += data.per_node[i][pos];
                    }
                }
            }
        }
        data.domains = domains;
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
        // The per-node counts of PreScore describe the cluster's own NodeInfos; a copy
        // (with pods added or removed) is counted afresh, and found by name.
        let own = cx.cluster.own_node_position(node);
        let at = own.or_else(|| cx.cluster.node_position(node.name()));
        if at.is_some_and(|p| s.ignored[p]) {
            return (0, Status::success());
        }
        let mut score = 0.0;
        for (i, c) in s.constraints.iter().enumerate() {
            let d = &s.domains[i];
            let slot = match at {
                Some(p) if d.ids[p] == NO_DOMAIN => continue,
                Some(p) => d.ids[p] as usize,
                // Not a node of the cluster: its own label, looked up.
                None => {
                    let Some(value) = node.node.labels.get(&c.topology_key) else {
                        continue;
                    };
                    d.names
                        .iter()
                        .position(|n| **n == **value)
                        .unwrap_or(d.names.len() + 1)
                }
            };
            let cnt = if c.is_hostname() {
                match own {
                    Some(p) => s.per_node[i][p],
                    None => count_matching(&node.pods, &c.selector, &pod.namespace),
                }
            } else {
                s.counts[i].get(slot).copied().flatten().unwrap_or(0)
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
        _cx: &Ctx,
        state: &CycleState,
        _pod: &Pod,
        scores: &mut [NodeScore],
    ) -> Status {
        let s = match read_state(state) {
            Ok(s) => s,
            Err(st) => return st,
        };
        let ignored = |ns: &NodeScore| s.ignored_count > 0 && s.ignored.get(ns.node) == Some(&true);
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
