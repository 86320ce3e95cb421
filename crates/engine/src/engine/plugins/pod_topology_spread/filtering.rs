//! PreFilter, AddPod / RemovePod and Filter (`podtopologyspread/filtering.go`).
//!
//! PreFilter counts matching pods per domain of every hard constraint over all nodes
//! once; Filter is then a lookup per constraint. Domains are interned per constraint
//! (value → slot) in an immutable table shared by clones, so the clones preemption
//! makes per candidate node copy only a vector of counts.

use std::sync::Arc;

use super::*;
use crate::engine::status::Status;

pub(crate) const PRE_FILTER_STATE_KEY: &str = "PreFilterPodTopologySpread";

/// Per constraint: the domains seen in PreFilter and their matching-pod counts.
#[derive(Clone, Debug, Default)]
pub struct DomainCounts {
    /// The cluster's domains of the constraint's key (value → id), built once per
    /// set of nodes rather than hashed again in every cycle.
    node_domains: Arc<NodeDomains>,
    /// Domain id → slot, fixed after PreFilter (`None`: no node of it counted).
    slot_of: Arc<Vec<Option<usize>>>,
    names: Arc<Vec<Arc<str>>>,
    counts: Vec<i64>,
    /// Domains first met in AddPod / RemovePod (rare: only nodes counted in PreFilter
    /// normally get pods added).
    extra: Vec<(Arc<str>, i64)>,
}

impl DomainCounts {
    fn new(
        node_domains: Arc<NodeDomains>,
        slot_of: Vec<Option<usize>>,
        names: Vec<Arc<str>>,
        counts: Vec<i64>,
    ) -> Self {
        DomainCounts {
            node_domains,
            slot_of: Arc::new(slot_of),
            names: Arc::new(names),
            counts,
            extra: Vec::new(),
        }
    }

    /// The slot of the domain `value`, when PreFilter counted it.
    fn slot(&self, value: &str) -> Option<usize> {
        let id = *self.node_domains.index.get(value)?;
        self.slot_of[id as usize]
    }

    /// Number of domains (`len(TpValueToMatchNum[i])`).
    pub fn len(&self) -> usize {
        self.counts.len() + self.extra.len()
    }

    /// Whether no domain is counted.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Matching pods in a domain; 0 for an unknown one.
    pub fn get(&self, value: &str) -> i64 {
        match self.slot(value) {
            Some(slot) => self.counts[slot],
            None => self.extra_count(value),
        }
    }

    /// Matching pods in the domain of the cluster's node at `pos` (read from the
    /// vectors, not its labels); `None` when the node lacks the key.
    fn get_at(&self, pos: usize) -> Option<i64> {
        let id = self.node_domains.ids[pos];
        if id == NO_DOMAIN {
            return None;
        }
        Some(match self.slot_of[id as usize] {
            Some(slot) => self.counts[slot],
            None => self.extra_count(&self.node_domains.names[id as usize]),
        })
    }

    /// A domain PreFilter did not count: what AddPod / RemovePod added to it.
    fn extra_count(&self, value: &str) -> i64 {
        self.extra
            .iter()
            .find(|(n, _)| &**n == value)
            .map_or(0, |(_, c)| *c)
    }

    /// Adds `delta` (creating the domain) and returns the domain's name and new count.
    fn add(&mut self, value: &str, delta: i64) -> (Arc<str>, i64) {
        if let Some(slot) = self.slot(value) {
            self.counts[slot] += delta;
            return (self.names[slot].clone(), self.counts[slot]);
        }
        if let Some(e) = self.extra.iter_mut().find(|(n, _)| &**n == value) {
            e.1 += delta;
            return (e.0.clone(), e.1);
        }
        let name: Arc<str> = Arc::from(value);
        self.extra.push((name.clone(), delta));
        (name, delta)
    }
}

/// `criticalPaths`: two (domain, count) pairs; `[0]` always holds the minimum.
/// Reproduces upstream's update rule exactly, including that the initial entries
/// carry the value `""`.
#[derive(Clone, Debug, PartialEq)]
pub struct CriticalPaths(pub [(Arc<str>, i64); 2]);

impl CriticalPaths {
    pub(crate) fn new() -> Self {
        let init = (Arc::<str>::from(""), i32::MAX as i64);
        CriticalPaths([init.clone(), init])
    }

    pub(crate) fn update(&mut self, value: &Arc<str>, num: i64) {
        let p = &mut self.0;
        let i = if *p[0].0 == **value {
            Some(0)
        } else if *p[1].0 == **value {
            Some(1)
        } else {
            None
        };
        match i {
            Some(i) => {
                p[i].1 = num;
                if p[0].1 > p[1].1 {
                    p.swap(0, 1);
                }
            }
            None => {
                if num < p[0].1 {
                    p[1] = p[0].clone();
                    p[0] = (value.clone(), num);
                } else if num < p[1].1 {
                    p[1] = (value.clone(), num);
                }
            }
        }
    }
}

/// What does not change once PreFilter has run.
#[derive(Debug)]
pub struct Fixed {
    pub constraints: Vec<Constraint>,
    /// Whether the incoming pod matches each constraint's selector.
    pub self_match: Vec<bool>,
    required_affinity: RequiredNodeAffinity,
    /// Which node list the positions are of (its address and length).
    nodes_identity: (usize, usize),
}

/// The identity of a cluster's node list: positions taken from one are only read
/// against the same list.
fn nodes_identity(cluster: &Cluster) -> (usize, usize) {
    (cluster.nodes().as_ptr() as usize, cluster.nodes().len())
}

/// `preFilterState`.
#[derive(Clone, Debug)]
pub struct PreFilterState {
    pub fixed: Arc<Fixed>,
    pub domains: Vec<DomainCounts>,
    pub critical_paths: Vec<CriticalPaths>,
}

impl PreFilterState {
    /// Global minimum for a constraint: 0 when there are fewer domains than
    /// `minDomains` (`minMatchNum`).
    pub fn min_match_num(&self, i: usize, min_domains: i32) -> i64 {
        if (self.domains[i].len() as i64) < min_domains as i64 {
            0
        } else {
            self.critical_paths[i].0[0].1
        }
    }

    /// `updateWithPod`.
    fn update_with_pod(&mut self, updated: &Pod, preemptor: &Pod, node: &Node, delta: i64) {
        if updated.namespace != preemptor.namespace {
            return;
        }
        let fixed = self.fixed.clone();
        if !node_has_all_keys(node, &fixed.constraints) {
            return;
        }
        let mut inclusion = Inclusion::new(preemptor, &fixed.required_affinity, node);
        for (i, c) in fixed.constraints.iter().enumerate() {
            if !c.selector.matches(&updated.labels) || !inclusion.matches(c) {
                continue;
            }
            let value = node.labels.get(&c.topology_key).map_or("", Sym::as_str);
            let (name, num) = self.domains[i].add(value, delta);
            self.critical_paths[i].update(&name, num);
        }
    }
}

impl PodTopologySpread {
    /// `calPreFilterState`; `None` when the pod has no hard constraints.
    pub fn pre_filter_state(
        &self,
        cluster: &Cluster,
        pod: &Pod,
    ) -> Result<Option<PreFilterState>, String> {
        let constraints = if pod.topology_spread_constraints.is_empty() {
            self.build_default_constraints(cluster, pod, DO_NOT_SCHEDULE)
                .map_err(|e| format!("setting default hard topology spread constraints: {e}"))?
        } else {
            Self::filter_constraints(
                &pod.topology_spread_constraints,
                &pod.labels,
                DO_NOT_SCHEDULE,
            )
            .map_err(|e| format!("obtaining pod's hard topology spread constraints: {e}"))?
        };
        if constraints.is_empty() {
            return Ok(None);
        }
        let required_affinity = RequiredNodeAffinity::from_pod(pod);
        // Matching pods per node, once per distinct selector.
        let per_node = node_counts_by_selector(cluster, &constraints, &pod.namespace);

        let key_domains: Vec<Arc<NodeDomains>> = constraints
            .iter()
            .map(|c| node_domains(cluster, &c.topology_key))
            .collect();
        // Per constraint: a domain's slot (in order of first sight), by domain id.
        let mut slot_of: Vec<Vec<Option<usize>>> = key_domains
            .iter()
            .map(|d| vec![None; d.names.len()])
            .collect();
        let mut names: Vec<Vec<Arc<str>>> = vec![Vec::new(); constraints.len()];
        let mut counts: Vec<Vec<i64>> = vec![Vec::new(); constraints.len()];
        let every_node_included = Inclusion::includes_every_node(&constraints, &required_affinity);
        for (pos, info) in cluster.nodes().iter().enumerate() {
            // Every constraint's key on the node (`nodeLabelsMatchSpreadConstraints`).
            if key_domains.iter().any(|d| d.ids[pos] == NO_DOMAIN) {
                continue;
            }
            let mut inclusion = Inclusion::new(pod, &required_affinity, &info.node);
            for (i, c) in constraints.iter().enumerate() {
                if !every_node_included && !inclusion.matches(c) {
                    continue;
                }
                let id = key_domains[i].ids[pos] as usize;
                let slot = *slot_of[i][id].get_or_insert_with(|| {
                    let name = key_domains[i].names[id].clone();
                    let s = names[i].len();
                    names[i].push(name);
                    counts[i].push(0);
                    s
                });
                counts[i][slot] += per_node[i][pos];
            }
        }

        let mut domains = Vec::with_capacity(constraints.len());
        let mut critical_paths = Vec::with_capacity(constraints.len());
        for (((node_domains, slot_of), names), counts) in
            key_domains.into_iter().zip(slot_of).zip(names).zip(counts)
        {
            let mut paths = CriticalPaths::new();
            for (name, &n) in names.iter().zip(&counts) {
                paths.update(name, n);
            }
            critical_paths.push(paths);
            domains.push(DomainCounts::new(node_domains, slot_of, names, counts));
        }
        let self_match = constraints
            .iter()
            .map(|c| c.selector.matches(&pod.labels))
            .collect();
        Ok(Some(PreFilterState {
            fixed: Arc::new(Fixed {
                constraints,
                self_match,
                required_affinity,
                nodes_identity: nodes_identity(cluster),
            }),
            domains,
            critical_paths,
        }))
    }
}

fn read_state(state: &CycleState) -> Result<&PreFilterState, Status> {
    state
        .read::<PreFilterState>(PRE_FILTER_STATE_KEY)
        .ok_or_else(|| state_not_found(PRE_FILTER_STATE_KEY))
}

impl PreFilterPlugin for PodTopologySpread {
    fn pre_filter(&self, cx: &Ctx, state: &mut CycleState, pod: &Pod) -> (PreFilterResult, Status) {
        match self.pre_filter_state(cx.cluster, pod) {
            Err(e) => (None, Status::error(e)),
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
                s.update_with_pod(pod_to_add, pod_to_schedule, &node.node, 1);
                Status::success()
            }
            None => state_not_found(PRE_FILTER_STATE_KEY),
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
                s.update_with_pod(pod_to_remove, pod_to_schedule, &node.node, -1);
                Status::success()
            }
            None => state_not_found(PRE_FILTER_STATE_KEY),
        }
    }
}

impl FilterPlugin for PodTopologySpread {
    fn filter(&self, cx: &Ctx, state: &CycleState, _pod: &Pod, node: &NodeInfo) -> Status {
        let s = match read_state(state) {
            Ok(s) => s,
            Err(st) => return st,
        };
        let fixed = &*s.fixed;
        // One of the PreFilter cluster's own nodes: its domains by position. A copy
        // (preemption's, with pods removed) reads its labels.
        let pos = cx
            .cluster
            .own_node_position(node)
            .filter(|_| nodes_identity(cx.cluster) == fixed.nodes_identity);
        for (i, c) in fixed.constraints.iter().enumerate() {
            let count = match pos {
                // Each constraint's domains of the cluster's nodes: vectors, not
                // labels and maps.
                Some(p) => match s.domains[i].get_at(p) {
                    Some(count) => count,
                    None => return Status::unresolvable(ERR_REASON_NODE_LABEL_NOT_MATCH),
                },
                None => {
                    let Some(value) = node.node.labels.get(&c.topology_key) else {
                        return Status::unresolvable(ERR_REASON_NODE_LABEL_NOT_MATCH);
                    };
                    s.domains[i].get(value)
                }
            };
            let min = s.min_match_num(i, c.min_domains);
            let self_match = i64::from(fixed.self_match[i]);
            let skew = count + self_match - min;
            if skew > c.max_skew as i64 {
                return Status::unschedulable(ERR_REASON_CONSTRAINTS_NOT_MATCH);
            }
        }
        Status::success()
    }
}
