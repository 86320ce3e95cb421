//! Pods as listed: their state, a short reason, the queue order, and each pending
//! pod's replay verdict, alone or grouped by main reason.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use k8s_openapi::jiff::Timestamp;

use super::answer::{gated, not_replayed, not_replayed_by};
use super::trace::{GroupKind, TraceView};
use schedscope_engine::engine::framework::Framework;
use schedscope_engine::engine::plugins::coscheduling::group_full_name;
use schedscope_engine::engine::status::Code;
use schedscope_engine::engine::trace::{Outcome, Trace};
use schedscope_engine::engine::waiting::PendingPlugin;
use schedscope_engine::model::{Cluster, Pod};

/// A pod held at Permit: the plugins it waits for, each with its deadline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeldPod {
    /// `namespace/name`.
    pub pod: String,
    pub node: String,
    pub pending: Vec<PendingPlugin>,
}

/// The shown part of an engine waiting pod (its uid and start are not shown).
impl From<schedscope_engine::engine::waiting::WaitingPodView> for HeldPod {
    fn from(w: schedscope_engine::engine::waiting::WaitingPodView) -> Self {
        HeldPod {
            pod: w.pod,
            node: w.node,
            pending: w.pending,
        }
    }
}

impl HeldPod {
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

pub fn pod_state(pod: &Pod, waiting: &[HeldPod]) -> PodState {
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
        .as_deref()
        .is_some_and(|(r, _)| r == "Unschedulable" || r == "SchedulerError")
    {
        PodState::Unschedulable
    } else {
        PodState::Pending
    }
}

/// The short reason of a list (a waiting pod's countdown is added at draw time).
pub fn pod_reason(pod: &Pod, state: PodState, waiting: &[HeldPod]) -> String {
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
        PodState::Unschedulable => match pod.not_scheduled.as_deref() {
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
/// ([`schedscope_engine::engine::scheduler::queue_order`]) with bound pods after them in key
/// order, narrowed by namespace and filter text (matched case-insensitively against
/// key, state and reason).
pub fn pod_rows(cluster: &Cluster, waiting: &[HeldPod], q: &PodQuery) -> Vec<PodRow> {
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
    let ordered = schedscope_engine::engine::scheduler::queue_order(
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

/// A pods listing as every output shows it: the rows ([`pod_rows`]: pending pods in
/// the queue's order, bound ones after them when asked), each with its state; the
/// labels of its columns; and, with the verdicts, the listing grouped by main
/// reason. `schedscope pods` and the inspector's pods pane both draw one.
#[derive(Clone, Debug, Default)]
pub struct PodsList {
    pub rows: Vec<PodRow>,
}

/// A line of a pods list grouped by main reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ListEntry {
    /// A main reason and how many pods it holds.
    Group { reason: String, pods: usize },
    /// Index into the rows.
    Pod(usize),
}

/// Rows still without a verdict, and bound pods (which get none), are grouped under
/// these after the verdicts' groups.
pub const COMPUTING: &str = "… verdict being computed";
pub const BOUND: &str = "bound";

impl PodsList {
    pub fn new(cluster: &Cluster, waiting: &[HeldPod], q: &PodQuery) -> PodsList {
        PodsList {
            rows: pod_rows(cluster, waiting, q),
        }
    }

    /// The list grouped: each main reason's header then its pods (in list order),
    /// the most pods first; then pods still without a verdict, then bound pods.
    pub fn grouped<'v>(
        &self,
        verdict: impl Fn(usize, &PodRow) -> Option<&'v PodVerdict>,
    ) -> Vec<ListEntry> {
        let mut computing = Vec::new();
        let mut bound = Vec::new();
        let mut known = Vec::new();
        for (i, r) in self.rows.iter().enumerate() {
            if r.state == PodState::Bound {
                bound.push(i);
                continue;
            }
            match verdict(i, r) {
                Some(v) => known.push((i, v)),
                None => computing.push(i),
            }
        }
        let mut out = Vec::with_capacity(self.rows.len() + 8);
        let groups = group_by_reason(known)
            .into_iter()
            .map(|g| (g.reason, g.pods))
            .chain([
                (COMPUTING.to_string(), computing),
                (BOUND.to_string(), bound),
            ]);
        for (reason, pods) in groups {
            if pods.is_empty() {
                continue;
            }
            out.push(ListEntry::Group {
                reason,
                pods: pods.len(),
            });
            out.extend(pods.into_iter().map(ListEntry::Pod));
        }
        out
    }
}

impl PodRow {
    /// The state as one column says it: a nominated pod names its node (`nominated
    /// to n2`); the others their state.
    pub fn state_label(&self) -> String {
        match self.state {
            PodState::Nominated => pod_reason(&self.pod, PodState::Nominated, &[]),
            s => s.label().to_string(),
        }
    }
}

/// `N pods · reason`: a group's header.
pub fn group_header(pods: usize, reason: &str) -> String {
    format!(
        "{} · {reason}",
        super::format::thousands(pods) + if pods == 1 { " pod" } else { " pods" }
    )
}

/// A pending pod's replay answer in one line: the node it would land on, or the main
/// reason it lands nowhere. Derived from the trace's [`TraceView`], so the main reason
/// is the `explain` table's biggest rejection group, never a second grouping.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum PodVerdict {
    Schedulable {
        node: String,
    },
    /// It fits on `node`, but the binding dry run waits at Permit for `waits`
    /// (`Coscheduling up to 1m0s`): a gang member waits for its group (`gang`, from
    /// its pod-group label) and is not bound until Permit allows it.
    WaitsAtPermit {
        node: String,
        waits: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        gang: Option<String>,
    },
    /// `reason` rejected `nodes` nodes: the largest rejection group. `nominated` is the
    /// node preemption would nominate.
    Unschedulable {
        nodes: usize,
        reason: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        nominated: Option<String>,
        /// The replay's FitError, set beside the real scheduler's recorded word
        /// ([`super::recorded::verdict_differs`]); not listed.
        #[serde(skip)]
        fit_error: Option<String>,
    },
    /// Held before the queue (PreEnqueue).
    Gated {
        plugin: String,
        message: String,
    },
    /// Refused at PreFilter by a plugin that cannot read its objects from this
    /// source: no verdict ([`super::answer::not_replayed_by`]).
    NotReplayed {
        plugin: String,
    },
    /// No profile serves the pod's schedulerName: another scheduler's pod.
    NotServed {
        scheduler: String,
    },
    /// The cycle stopped on an error, or the pod could not be replayed.
    Error {
        message: String,
    },
}

impl PodVerdict {
    pub fn of(trace: &Trace, view: &TraceView) -> PodVerdict {
        match &trace.outcome {
            Outcome::Scheduled { node } => match super::answer::permit_wait(trace) {
                Some(waits) => PodVerdict::WaitsAtPermit {
                    node: node.clone(),
                    waits,
                    gang: None,
                },
                None => PodVerdict::Schedulable { node: node.clone() },
            },
            Outcome::Gated { plugin, message } => PodVerdict::Gated {
                plugin: plugin.clone(),
                message: message.clone(),
            },
            Outcome::Error { message } => PodVerdict::Error {
                message: message.clone(),
            },
            Outcome::Unschedulable { nominated_node } => match not_replayed_by(trace) {
                Some(plugin) => PodVerdict::NotReplayed {
                    plugin: plugin.to_string(),
                },
                None => {
                    let (nodes, reason) = main_rejection(trace, view);
                    PodVerdict::Unschedulable {
                        nodes,
                        reason,
                        nominated: nominated_node.clone(),
                        fit_error: trace.fit_error.clone(),
                    }
                }
            },
        }
    }

    /// The verdict on `pod`, named by its gang when it waits at Permit as one.
    pub fn of_pod(self, pod: &Pod) -> Self {
        match self {
            PodVerdict::WaitsAtPermit { node, waits, .. } => {
                let g = group_full_name(pod);
                PodVerdict::WaitsAtPermit {
                    node,
                    waits,
                    gang: (!g.is_empty()).then_some(g),
                }
            }
            other => other,
        }
    }

    /// What pods are grouped by: the main reason without its node count, so that
    /// `3 Insufficient cpu` and `5 Insufficient cpu` fall together.
    pub fn reason(&self) -> String {
        match self {
            PodVerdict::Schedulable { .. } => "schedulable".into(),
            PodVerdict::WaitsAtPermit { gang: Some(g), .. } => {
                format!("waits at Permit (gang {g})")
            }
            PodVerdict::WaitsAtPermit { .. } => "waits at Permit".into(),
            PodVerdict::Unschedulable { reason, .. } => reason.clone(),
            PodVerdict::Gated { message, .. } => message.clone(),
            PodVerdict::NotReplayed { plugin } => not_replayed(plugin),
            PodVerdict::NotServed { scheduler } => {
                format!("no profile for schedulerName {scheduler:?}")
            }
            PodVerdict::Error { message } => format!("error: {message}"),
        }
    }

    /// The short form a list cell shows: `on n3`, `3 Insufficient cpu`, the gate
    /// message, `error: ...`.
    pub fn short(&self) -> String {
        match self {
            PodVerdict::Schedulable { node } => format!("on {node}"),
            PodVerdict::WaitsAtPermit { node, .. } => format!("{} on {node}", self.reason()),
            PodVerdict::Unschedulable {
                nodes,
                reason,
                nominated,
                ..
            } => match nominated {
                Some(n) => format!("{}; preempt on {n}", counted(*nodes, reason)),
                None => counted(*nodes, reason),
            },
            PodVerdict::Gated { message, .. } => message.clone(),
            PodVerdict::NotReplayed { plugin } => not_replayed(plugin),
            PodVerdict::NotServed { scheduler } => format!("not served: {scheduler:?}"),
            PodVerdict::Error { message } => format!("error: {message}"),
        }
    }

    /// The sentence the CLI prints: `schedulable on n3`, `unschedulable: 3 Insufficient
    /// cpu`, ...
    pub fn label(&self) -> String {
        match self {
            PodVerdict::Schedulable { node } => format!("schedulable on {node}"),
            PodVerdict::WaitsAtPermit { node, waits, gang } => match gang {
                Some(g) => format!("waits at Permit on {node} (gang {g}: {waits})"),
                None => format!("waits at Permit on {node} ({waits})"),
            },
            PodVerdict::Unschedulable {
                nodes,
                reason,
                nominated,
                ..
            } => match nominated {
                Some(n) => format!(
                    "unschedulable: {}; preemption would nominate {n}",
                    counted(*nodes, reason)
                ),
                None => format!("unschedulable: {}", counted(*nodes, reason)),
            },
            PodVerdict::Gated { plugin, message } => gated(plugin, message),
            PodVerdict::NotReplayed { plugin } => not_replayed(plugin),
            PodVerdict::NotServed { scheduler } => {
                format!("not served: no profile for schedulerName {scheduler:?}")
            }
            PodVerdict::Error { message } => format!("error: {message}"),
        }
    }

    pub fn symbol(&self) -> &'static str {
        match self {
            PodVerdict::Schedulable { .. } => "✓",
            PodVerdict::WaitsAtPermit { .. } => "◷",
            PodVerdict::Unschedulable { .. } => "✗",
            PodVerdict::Gated { .. } => "⊘",
            PodVerdict::NotReplayed { .. } => "?",
            PodVerdict::NotServed { .. } => "∅",
            PodVerdict::Error { .. } => "!",
        }
    }
}

/// The largest rejection group (nodes, reason). Without one, what stopped the cycle
/// before Filter: a PreFilter rejection (every node), else the nodes left out by the
/// PreFilter node subset, else the headline (a cluster without nodes).
fn main_rejection(trace: &Trace, view: &TraceView) -> (usize, String) {
    // The summary is biggest first.
    if let Some(g) = view.summary.iter().find(|g| g.kind == GroupKind::Rejected) {
        return (g.rows.len(), g.reason.clone());
    }
    let pf = &trace.pre_filter;
    if pf
        .code
        .is_some_and(|c| c != Code::Success && c != Code::Skip)
    {
        return (trace.nodes_total, pf.reasons.join(", "));
    }
    if let Some(g) = view.summary.iter().find(|g| g.kind == GroupKind::Excluded) {
        return (g.rows.len(), g.reason.clone());
    }
    if trace.nodes_total == 0 {
        return (0, "no nodes in the cluster".into());
    }
    let short = short_fit_message(&view.headline);
    (0, short.strip_suffix('.').unwrap_or(short).to_string())
}

/// `3 Insufficient cpu`; a reason that names no nodes alone.
fn counted(nodes: usize, reason: &str) -> String {
    match nodes {
        0 => reason.to_string(),
        n => format!("{n} {reason}"),
    }
}

/// Pods sharing a main reason ([`PodVerdict::reason`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReasonGroup<T> {
    pub reason: String,
    /// In the order they were given.
    pub pods: Vec<T>,
}

/// Pods grouped by their verdict's main reason: the most pods first, then by reason.
pub fn group_by_reason<'v, T>(
    pods: impl IntoIterator<Item = (T, &'v PodVerdict)>,
) -> Vec<ReasonGroup<T>> {
    let mut groups: BTreeMap<String, Vec<T>> = BTreeMap::new();
    for (pod, verdict) in pods {
        groups.entry(verdict.reason()).or_default().push(pod);
    }
    let mut out: Vec<ReasonGroup<T>> = groups
        .into_iter()
        .map(|(reason, pods)| ReasonGroup { reason, pods })
        .collect();
    // Stable: equal counts stay in reason order.
    out.sort_by_key(|g| std::cmp::Reverse(g.pods.len()));
    out
}

/// The order verdicts are computed in the background: newest first (creation time
/// descending), pods without one last, then by key.
pub fn newest_first(pods: &mut [Arc<Pod>]) {
    pods.sort_by(|a, b| {
        b.creation_timestamp
            .cmp(&a.creation_timestamp)
            .then_with(|| a.namespace.cmp(&b.namespace))
            .then_with(|| a.name.cmp(&b.name))
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedscope_engine::engine::trace::NodeVerdict;

    fn unschedulable(nominated: Option<&str>) -> Trace {
        Trace::empty(
            "ns/p".into(),
            0,
            Outcome::Unschedulable {
                nominated_node: nominated.map(str::to_string),
            },
        )
    }

    fn rejected(node: &str, plugin: &str, reasons: &[&str]) -> NodeVerdict {
        NodeVerdict {
            node: node.into(),
            feasible: false,
            plugin: Some(plugin.into()),
            code: Code::Unschedulable,
            reasons: reasons.iter().map(|s| s.to_string()).collect(),
        }
    }

    fn excluded(node: &str) -> NodeVerdict {
        NodeVerdict {
            node: node.into(),
            feasible: false,
            plugin: None,
            code: Code::UnschedulableAndUnresolvable,
            reasons: Vec::new(),
        }
    }

    /// Three cpu rejections beat two taint rejections; a node rejected for cpu and
    /// memory is its own group, as in the `explain` table.
    fn mixed_rejections() -> Trace {
        let mut t = unschedulable(None);
        t.filter_plugins = vec!["TaintToleration".into(), "NodeResourcesFit".into()];
        let taint = ["node(s) had untolerated taint(s)"];
        t.filter = vec![
            rejected("a", "NodeResourcesFit", &["Insufficient cpu"]),
            rejected("b", "TaintToleration", &taint),
            rejected("c", "NodeResourcesFit", &["Insufficient cpu"]),
            rejected(
                "d",
                "NodeResourcesFit",
                &["Insufficient cpu", "Insufficient memory"],
            ),
            rejected("e", "TaintToleration", &taint),
            rejected("f", "NodeResourcesFit", &["Insufficient cpu"]),
        ];
        t.nodes_total = 6;
        t
    }

    #[test]
    fn a_verdict_names_the_node_or_the_largest_rejection_group() {
        let scheduled = Trace::empty("ns/p".into(), 0, Outcome::Scheduled { node: "n3".into() });
        let preempting = {
            let mut t = mixed_rejections();
            t.outcome = Outcome::Unschedulable {
                nominated_node: Some("b".into()),
            };
            t
        };
        let prefilter = {
            let mut t = unschedulable(None);
            t.nodes_total = 4;
            t.pre_filter.code = Some(Code::UnschedulableAndUnresolvable);
            t.pre_filter.plugin = Some("VolumeBinding".into());
            t.pre_filter.reasons = vec!["persistentvolumeclaim \"data\" not found".into()];
            t
        };
        let subset = {
            let mut t = unschedulable(None);
            t.filter_plugins = vec!["NodeResourcesFit".into()];
            t.filter = vec![excluded("a"), excluded("b")];
            t.pre_filter.code = Some(Code::Success);
            t.nodes_total = 2;
            t
        };
        let no_nodes = unschedulable(None);
        let gated = Trace::empty(
            "ns/p".into(),
            0,
            Outcome::Gated {
                plugin: "SchedulingGates".into(),
                message: "waiting for scheduling gates: [a]".into(),
            },
        );
        let error = Trace::empty(
            "ns/p".into(),
            0,
            Outcome::Error {
                message: "boom".into(),
            },
        );
        let cases: [(&str, Trace, &str, &str, &str); 7] = [
            (
                "scheduled",
                scheduled,
                "schedulable on n3",
                "on n3",
                "schedulable",
            ),
            (
                "largest group",
                mixed_rejections(),
                "unschedulable: 3 Insufficient cpu",
                "3 Insufficient cpu",
                "Insufficient cpu",
            ),
            (
                "preemption",
                preempting,
                "unschedulable: 3 Insufficient cpu; preemption would nominate b",
                "3 Insufficient cpu; preempt on b",
                "Insufficient cpu",
            ),
            (
                "prefilter",
                prefilter,
                "unschedulable: 4 persistentvolumeclaim \"data\" not found",
                "4 persistentvolumeclaim \"data\" not found",
                "persistentvolumeclaim \"data\" not found",
            ),
            (
                "node subset",
                subset,
                "unschedulable: 2 not evaluated: outside the PreFilter node subset",
                "2 not evaluated: outside the PreFilter node subset",
                "not evaluated: outside the PreFilter node subset",
            ),
            (
                "no nodes",
                no_nodes,
                "unschedulable: no nodes in the cluster",
                "no nodes in the cluster",
                "no nodes in the cluster",
            ),
            (
                "gated",
                gated,
                "gated by SchedulingGates: waiting for scheduling gates: [a]",
                "waiting for scheduling gates: [a]",
                "waiting for scheduling gates: [a]",
            ),
        ];
        for (name, trace, label, short, reason) in cases {
            let v = PodVerdict::of(&trace, &TraceView::new(&trace));
            assert_eq!(v.label(), label, "{name}");
            assert_eq!(v.short(), short, "{name}");
            assert_eq!(v.reason(), reason, "{name}");
        }
        let v = PodVerdict::of(&error, &TraceView::new(&error));
        assert_eq!(v.label(), "error: boom");
        assert_eq!(v.symbol(), "!");
    }

    #[test]
    fn pods_group_by_main_reason_most_pods_first_then_reason() {
        let cpu = |n| PodVerdict::Unschedulable {
            nodes: n,
            reason: "Insufficient cpu".into(),
            nominated: None,
            fit_error: None,
        };
        let on = |n: &str| PodVerdict::Schedulable { node: n.into() };
        let taint = PodVerdict::Unschedulable {
            nodes: 2,
            reason: "node(s) had untolerated taint(s)".into(),
            nominated: None,
            fit_error: None,
        };
        let verdicts = [
            ("p1", on("a")),
            ("p2", cpu(3)),
            ("p3", taint.clone()),
            ("p4", cpu(5)),
            ("p5", on("b")),
            ("p6", taint),
            ("p7", cpu(1)),
        ];
        let groups = group_by_reason(verdicts.iter().map(|(p, v)| (*p, v)));
        let got: Vec<(&str, Vec<&str>)> = groups
            .iter()
            .map(|g| (g.reason.as_str(), g.pods.clone()))
            .collect();
        assert_eq!(
            got,
            [
                ("Insufficient cpu", vec!["p2", "p4", "p7"]),
                // Two each: by reason.
                ("node(s) had untolerated taint(s)", vec!["p3", "p6"]),
                ("schedulable", vec!["p1", "p5"]),
            ]
        );
    }

    #[test]
    fn newest_pods_come_first_and_pods_without_a_time_last() {
        let pod = |name: &str, ts: Option<&str>| {
            Arc::new(Pod {
                namespace: "ns".into(),
                name: name.into(),
                creation_timestamp: ts.map(|t| t.parse().unwrap()),
                ..Pod::default()
            })
        };
        let mut pods = vec![
            pod("old", Some("2026-01-01T00:00:00Z")),
            pod("none", None),
            pod("new-b", Some("2026-03-01T00:00:00Z")),
            pod("new-a", Some("2026-03-01T00:00:00Z")),
        ];
        newest_first(&mut pods);
        let names: Vec<&str> = pods.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["new-a", "new-b", "old", "none"]);
    }
}
