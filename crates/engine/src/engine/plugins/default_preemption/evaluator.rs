//! The preemption evaluator (`pkg/scheduler/framework/preemption`): eligibility,
//! dry runs over the potential nodes, and the choice among candidates.
//!
//! Two upstream sources of randomness are fixed here:
//! * the dry run starts at a random offset into the potential nodes and stops once
//!   enough candidates are found; this replay starts at offset 0 and visits nodes in
//!   snapshot order, one at a time (Go runs 16 at once, so a few more may be tried).
//!   While `numCandidates` ≥ the number of potential nodes (below 100 potential nodes
//!   with default args) every node is examined either way and only the order differs;
//! * the last tie-break between equally good candidates takes the first of a Go map
//!   iteration (random); this replay takes the first candidate in dry-run order
//!   (non-PDB-violating first, then snapshot order).

use std::sync::Arc;

use k8s_openapi::jiff::Timestamp;

use super::{DefaultPreemption, pod_disruption_budgets, pod_start_time};
use crate::engine::fit_error::fit_error_message;
use crate::engine::framework::{Ctx, CycleState, Framework, NodeToStatus, PostFilterResult};
use crate::engine::status::{Code, Status};
use crate::model::Pod;

/// A node where preemption would let the pod in, with the pods to evict there.
#[derive(Clone, Debug)]
pub struct Candidate {
    /// Index into `Ctx::cluster.nodes()`.
    pub node: usize,
    /// Most important first.
    pub victims: Vec<Arc<Pod>>,
    pub num_pdb_violations: i64,
}

/// What the dry run found: candidates (non-violating first) and the status of every
/// examined node that is not a candidate.
#[derive(Clone, Debug, Default)]
pub struct DryRun {
    pub candidates: Vec<Candidate>,
    pub statuses: NodeToStatus,
    /// Messages of Error statuses met on the way.
    pub errors: Vec<String>,
}

/// `Evaluator.Preempt`.
pub fn preempt(
    pl: &DefaultPreemption,
    fw: &Framework,
    cx: &Ctx,
    state: &CycleState,
    pod: &Pod,
    m: &NodeToStatus,
) -> (Option<PostFilterResult>, Status) {
    // Upstream re-reads the pod from the informer first; the pod handed to the cycle
    // is already the current object here.

    // 1) Eligibility.
    let nominated_status = pod
        .nominated_node_name
        .as_deref()
        .and_then(|n| cx.cluster.node_position(n))
        .map_or(&m.absent, |i| m.get(i));
    if let Err(msg) = pl.pod_eligible_to_preempt_others(cx.cluster, pod, nominated_status) {
        return (None, Status::unschedulable(msg));
    }

    // 2) Candidates.
    let num_all_nodes = cx.cluster.nodes().len();
    if num_all_nodes == 0 {
        return (None, Status::error("no nodes available"));
    }
    let dry = find_candidates(pl, fw, cx, state, pod, m);
    if !dry.errors.is_empty() && dry.candidates.is_empty() {
        return (None, Status::error(aggregate(&dry.errors)));
    }
    if dry.candidates.is_empty() {
        let mut statuses = dry.statuses;
        statuses.absent = Status::unresolvable("Preemption is not helpful for scheduling");
        let msg = fit_error_message(num_all_nodes, &statuses, "", "");
        // A result with no node clears any earlier nomination.
        return (
            Some(PostFilterResult::default()),
            Status::unschedulable(msg),
        );
    }

    // 3) Extenders: schedscope models none.
    // 4) The best candidate.
    let Some(best) = select_candidate(&dry.candidates, cx.now) else {
        return (
            None,
            Status::unschedulable("no candidate node for preemption"),
        );
    };
    // 5) Upstream now evicts the victims (asynchronously) and clears lower-priority
    //    nominations on that node; a replay only reports them.
    let result = PostFilterResult {
        nominated_node: Some(cx.cluster.nodes()[best.node].name().to_string()),
        victims: best.victims.iter().map(|p| p.key()).collect(),
    };
    (Some(result), Status::success())
}

/// `findCandidates` + `DryRunPreemption`.
pub fn find_candidates(
    pl: &DefaultPreemption,
    fw: &Framework,
    cx: &Ctx,
    state: &CycleState,
    pod: &Pod,
    m: &NodeToStatus,
) -> DryRun {
    let nodes = cx.cluster.nodes();
    let mut dry = DryRun {
        candidates: Vec::new(),
        statuses: NodeToStatus {
            statuses: vec![None; nodes.len()],
            absent: Status::new(Code::UnschedulableAndUnresolvable, Vec::<String>::new()),
        },
        errors: Vec::new(),
    };
    // Only nodes whose rejection removing pods could fix: UnschedulableAndUnresolvable
    // (and any other code) rules a node out.
    let potential: Vec<usize> = (0..nodes.len())
        .filter(|&i| m.get(i).code == Code::Unschedulable)
        .collect();
    if potential.is_empty() {
        return dry;
    }
    let pdbs = pod_disruption_budgets(cx.cluster);
    let offset = 0usize;
    let num_candidates = pl.calculate_num_candidates(potential.len());

    // Upstream keeps two bounded lists; additions past `num_candidates` are dropped.
    let mut non_violating: Vec<Candidate> = Vec::new();
    let mut violating: Vec<Candidate> = Vec::new();
    for i in 0..potential.len() {
        let idx = potential[(offset + i) % potential.len()];
        let mut node_copy = nodes[idx].clone();
        let mut state_copy = state.clone();
        let (victims, num_pdb, mut status) =
            pl.select_victims_on_node(fw, cx, &mut state_copy, pod, &mut node_copy, &pdbs);
        if status.is_success() && !victims.is_empty() {
            let c = Candidate {
                node: idx,
                victims,
                num_pdb_violations: num_pdb as i64,
            };
            let list = if num_pdb == 0 {
                &mut non_violating
            } else {
                &mut violating
            };
            if list.len() < num_candidates {
                list.push(c);
            }
            if !non_violating.is_empty() && non_violating.len() + violating.len() >= num_candidates
            {
                break;
            }
            continue;
        }
        if status.is_success() {
            status = Status::error(format!(
                "expected at least one victim pod on node {:?}",
                nodes[idx].name()
            ));
        }
        if status.code == Code::Error {
            dry.errors.push(status.message());
        }
        dry.statuses.statuses[idx] = Some(status);
    }
    non_violating.extend(violating);
    dry.candidates = non_violating;
    dry
}

/// `utilerrors.NewAggregate(errs).Error()`: one message as is, several (deduplicated)
/// in brackets.
fn aggregate(errs: &[String]) -> String {
    let mut seen: Vec<&str> = Vec::new();
    for e in errs {
        if !seen.contains(&e.as_str()) {
            seen.push(e);
        }
    }
    if errs.len() == 1 || seen.len() == 1 {
        return seen[0].to_string();
    }
    format!("[{}]", seen.join(", "))
}

/// `SelectCandidate`: a single candidate is taken as is; otherwise
/// `pickOneNodeForPreemption`.
pub fn select_candidate(candidates: &[Candidate], now: Timestamp) -> Option<&Candidate> {
    match candidates.len() {
        0 => None,
        1 => Some(&candidates[0]),
        _ => Some(&candidates[pick_one_node_for_preemption(candidates, now)]),
    }
}

/// `pickOneNodeForPreemption` with the default score functions; each keeps the
/// candidates with the highest score and the next one breaks the remaining tie.
/// Returns an index into `candidates`.
pub fn pick_one_node_for_preemption(candidates: &[Candidate], now: Timestamp) -> usize {
    type ScoreFn = fn(&Candidate, Timestamp) -> i64;
    let score_fns: [ScoreFn; 5] = [
        // Fewest PDB violations.
        |c, _| -c.num_pdb_violations,
        // Lowest priority of the most important victim.
        |c, _| -i64::from(c.victims.first().map_or(0, |p| p.priority)),
        // Lowest sum of priorities, each shifted to be non-negative so that several
        // negative-priority victims do not beat fewer of them.
        |c, _| {
            -c.victims
                .iter()
                .map(|p| i64::from(p.priority) + i64::from(i32::MAX) + 1)
                .sum::<i64>()
        },
        // Fewest victims.
        |c, _| -(c.victims.len() as i64),
        // Latest start among the highest-priority victims.
        |c, now| match earliest_start_of_highest_priority(&c.victims, now) {
            Some(t) => i64::try_from(t.as_nanosecond()).unwrap_or(i64::MIN),
            None => i64::MIN,
        },
    ];
    let mut remaining: Vec<usize> = (0..candidates.len()).collect();
    for f in score_fns {
        let mut best = i64::MIN;
        let mut selected: Vec<usize> = Vec::new();
        for &i in &remaining {
            let s = f(&candidates[i], now);
            if s > best {
                best = s;
                selected.clear();
            }
            if s == best {
                selected.push(i);
            }
        }
        if selected.len() == 1 {
            return selected[0];
        }
        remaining = selected;
    }
    remaining.first().copied().unwrap_or(0)
}

/// `util.GetEarliestPodStartTime`: the earliest start time among the victims that
/// share the highest priority.
pub fn earliest_start_of_highest_priority(
    victims: &[Arc<Pod>],
    now: Timestamp,
) -> Option<Timestamp> {
    let first = victims.first()?;
    let mut earliest = pod_start_time(first, now);
    let mut max_priority = first.priority;
    for p in victims {
        if p.priority == max_priority {
            let t = pod_start_time(p, now);
            if t < earliest {
                earliest = t;
            }
        } else if p.priority > max_priority {
            max_priority = p.priority;
            earliest = pod_start_time(p, now);
        }
    }
    Some(earliest)
}
