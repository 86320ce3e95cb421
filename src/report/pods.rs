//! Pods as listed: their state, a short reason, and the queue order.

use std::collections::BTreeSet;
use std::sync::Arc;

use k8s_openapi::jiff::Timestamp;

use crate::engine::framework::Framework;
use crate::engine::waiting::PendingPlugin;
use crate::model::{Cluster, Pod};

/// A pod held at Permit: the plugins it waits for, each with its deadline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WaitingPod {
    /// `namespace/name`.
    pub pod: String,
    pub node: String,
    pub pending: Vec<PendingPlugin>,
}

/// The shown part of an engine waiting pod (its uid and start are not shown).
impl From<crate::engine::waiting::WaitingPodView> for WaitingPod {
    fn from(w: crate::engine::waiting::WaitingPodView) -> Self {
        WaitingPod {
            pod: w.pod,
            node: w.node,
            pending: w.pending,
        }
    }
}

impl WaitingPod {
    /// The earliest deadline: when the pod is rejected unless every plugin allows first.
    pub fn next_deadline(&self) -> Option<Timestamp> {
        self.pending.iter().map(|p| p.deadline).min()
    }
}

/// A pod's state in a list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum PodState {
    Pending,
    Gated,
    Unschedulable,
    Nominated,
    Waiting,
    Bound,
}

impl PodState {
    pub fn label(self) -> &'static str {
        match self {
            PodState::Pending => "pending",
            PodState::Gated => "gated",
            PodState::Unschedulable => "unschedulable",
            PodState::Nominated => "nominated",
            PodState::Waiting => "waiting",
            PodState::Bound => "bound",
        }
    }
    pub fn symbol(self) -> &'static str {
        match self {
            PodState::Pending => "○",
            PodState::Gated => "⊘",
            PodState::Unschedulable => "✗",
            PodState::Nominated => "→",
            PodState::Waiting => "◷",
            PodState::Bound => "●",
        }
    }
}

/// One row of a pods list. Text (key, reason) is made at draw time for visible rows
/// only, so rebuilding the list at 150,000 pods allocates nothing per pod.
#[derive(Clone, Debug)]
pub struct PodRow {
    pub pod: Arc<Pod>,
    pub state: PodState,
}

impl PodRow {
    pub fn key(&self) -> String {
        self.pod.key()
    }
    /// Whether this is the pod `namespace/name`, without allocating.
    pub fn is(&self, key: &str) -> bool {
        is_key(&self.pod, key)
    }
}

pub fn is_key(pod: &Pod, key: &str) -> bool {
    key.len() == pod.namespace.len() + 1 + pod.name.len()
        && key.starts_with(pod.namespace.as_str())
        && key.as_bytes().get(pod.namespace.len()) == Some(&b'/')
        && key.ends_with(pod.name.as_str())
}

/// `0/5 nodes are available: 3 Insufficient cpu.` → `3 Insufficient cpu.`
pub fn short_fit_message(msg: &str) -> &str {
    if let Some(rest) = msg.strip_prefix("0/")
        && let Some(i) = rest.find(" nodes are available: ")
    {
        return &rest[i + " nodes are available: ".len()..];
    }
    msg
}

pub fn pod_state(pod: &Pod, waiting: &[WaitingPod]) -> PodState {
    if waiting.iter().any(|w| is_key(pod, &w.pod)) {
        PodState::Waiting
    } else if pod.is_bound() {
        PodState::Bound
    } else if !pod.scheduling_gates.is_empty() {
        PodState::Gated
    } else if pod.nominated_node_name.is_some() {
        PodState::Nominated
    } else if pod
        .not_scheduled
        .as_ref()
        .is_some_and(|(r, _)| r == "Unschedulable" || r == "SchedulerError")
    {
        PodState::Unschedulable
    } else {
        PodState::Pending
    }
}

/// The short reason of a list (a waiting pod's countdown is added at draw time).
pub fn pod_reason(pod: &Pod, state: PodState, waiting: &[WaitingPod]) -> String {
    match state {
        PodState::Waiting => waiting
            .iter()
            .find(|w| is_key(pod, &w.pod))
            .map(|w| format!("Permit on {}", w.node))
            .unwrap_or_default(),
        PodState::Bound => format!("on {}", pod.node_name.as_deref().unwrap_or_default()),
        PodState::Gated => format!(
            "waiting for scheduling gates: [{}]",
            pod.scheduling_gates.join(" ")
        ),
        PodState::Nominated => format!(
            "nominated to {}",
            pod.nominated_node_name.as_deref().unwrap_or_default()
        ),
        PodState::Unschedulable => match &pod.not_scheduled {
            Some((reason, msg)) => {
                let short = short_fit_message(msg);
                if short.is_empty() { reason } else { short }.to_string()
            }
            None => String::new(),
        },
        PodState::Pending => String::new(),
    }
}

/// Case-insensitive substring test; `needle` is already lowercase.
pub fn contains_ci(hay: &str, needle: &str) -> bool {
    if needle.is_empty() {
        return true;
    }
    if hay.is_ascii() && needle.is_ascii() {
        let (h, n) = (hay.as_bytes(), needle.as_bytes());
        return h
            .windows(n.len())
            .any(|w| w.iter().zip(n).all(|(a, b)| a.to_ascii_lowercase() == *b));
    }
    hay.to_lowercase().contains(needle)
}

pub struct PodQuery<'a> {
    pub all: bool,
    pub namespace: Option<&'a str>,
    pub filter: &'a str,
    /// Bound pods listed even without `all` (a simulation's pods stay in view as they
    /// bind).
    pub keep: Option<&'a BTreeSet<String>>,
    /// The profiles whose (first) QueueSort plugin orders the pending pods.
    pub profiles: &'a [Framework],
}

/// A pods list: pending pods (or all), in the queue's order
/// ([`crate::engine::scheduler::queue_order`]) with bound pods after them in key
/// order, narrowed by namespace and filter text (matched case-insensitively against
/// key, state and reason).
pub fn pod_rows(cluster: &Cluster, waiting: &[WaitingPod], q: &PodQuery) -> Vec<PodRow> {
    let needle = q.filter.to_lowercase();
    let (pending, bound): (Vec<PodRow>, Vec<PodRow>) = cluster
        .pods()
        .filter(|p| q.namespace.is_none_or(|ns| p.namespace == ns))
        .filter_map(|p| {
            let state = pod_state(p, waiting);
            if !q.all && state == PodState::Bound && !q.keep.is_some_and(|k| k.contains(&p.key())) {
                return None;
            }
            if !needle.is_empty() {
                let hit = contains_ci(&p.name, &needle)
                    || contains_ci(&p.namespace, &needle)
                    || (needle.contains('/') && contains_ci(&p.key(), &needle))
                    || state.label().contains(&needle)
                    || contains_ci(&pod_reason(p, state, waiting), &needle);
                if !hit {
                    return None;
                }
            }
            Some(PodRow {
                pod: p.clone(),
                state,
            })
        })
        .partition(|r| r.state != PodState::Bound);
    let ordered = crate::engine::scheduler::queue_order(
        q.profiles,
        cluster,
        pending.into_iter().map(|r| r.pod).collect(),
    );
    let mut rows: Vec<PodRow> = ordered
        .into_iter()
        .map(|pod| PodRow {
            state: pod_state(&pod, waiting),
            pod,
        })
        .collect();
    rows.extend(bound);
    rows
}
