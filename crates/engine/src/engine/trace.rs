//! The plain result of replaying one scheduling cycle. `explain`, `simulate` and every
//! TUI pane render from a [`Trace`]; nothing in them decides anything. schedscope's
//! own: upstream acts on a cycle's result instead of recording it (what it keeps is
//! the FailedScheduling event and the pod's condition, whose texts are here too).

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::engine::status::{Code, Status};
use crate::model::sym::Sym;

/// One plugin's answer at one extension point.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PluginResult {
    /// Shared: all-filters mode makes one per node and plugin.
    pub plugin: Sym,
    pub code: Code,
    pub reasons: Vec<String>,
}

impl PluginResult {
    pub fn new(plugin: &str, st: &Status) -> Self {
        Self::of(Sym::new(plugin), st)
    }

    /// [`PluginResult::new`] with the name already interned, for the per-node loops.
    pub fn of(plugin: Sym, st: &Status) -> Self {
        PluginResult {
            plugin,
            code: st.code,
            reasons: st.reasons.clone(),
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PreFilterTrace {
    /// Overall status of the PreFilter phase.
    pub code: Option<Code>,
    /// Plugin that rejected (the last Unschedulable, or the UU that stopped it).
    pub plugin: Option<String>,
    pub reasons: Vec<String>,
    /// Merged PreFilterResult; `None` = all nodes.
    pub node_subset: Option<Vec<String>>,
    /// Each PreFilter plugin that ran, in order.
    pub plugins: Vec<PluginResult>,
    /// Plugins that returned a node subset, with it.
    pub subsets: Vec<(String, Vec<String>)>,
}

/// Normal-mode Filter verdict of one node.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeVerdict {
    pub node: Sym,
    pub feasible: bool,
    /// First rejecting plugin; `None` for feasible nodes and for nodes excluded before
    /// Filter by a PreFilter node subset.
    pub plugin: Option<String>,
    pub code: Code,
    pub reasons: Vec<String>,
}

/// All-filters mode: every filter plugin's own answer on one node, in profile order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeAllVerdicts {
    pub node: Sym,
    /// Shared by the nodes every plugin passes (most of them).
    pub results: Arc<[PluginResult]>,
}

/// Scores of one Score plugin over the feasible nodes (same order as `Trace::feasible`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PluginScores {
    pub plugin: String,
    pub weight: i64,
    pub raw: Vec<i64>,
    pub normalized: Vec<i64>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PostFilterTrace {
    pub plugins: Vec<PluginResult>,
    pub code: Option<Code>,
    pub nominated_node: Option<String>,
    pub victims: Vec<String>,
    pub message: String,
}

/// An extension point of the binding half, as the dry run would go.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PhaseTrace {
    pub point: String,
    pub plugins: Vec<PluginResult>,
}

/// Something this replay does not model; the answer may differ from kube-scheduler's.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NotModelled {
    pub plugin: String,
    pub what: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Outcome {
    /// Held before the queue (PreEnqueue rejected it).
    Gated { plugin: String, message: String },
    /// A node was chosen.
    Scheduled { node: String },
    /// No node fits; `nominated_node` is set when preemption would make room.
    Unschedulable { nominated_node: Option<String> },
    /// The cycle stopped on an Error status.
    Error { message: String },
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Trace {
    pub pod: String,
    pub profile: String,
    pub priority: i32,
    /// All snapshot nodes, in model order.
    pub nodes_total: usize,
    pub pre_enqueue: Vec<PluginResult>,
    pub queue_sort: Vec<String>,
    pub pre_filter: PreFilterTrace,
    /// `status.nominatedNodeName` and whether it passed every filter (then it is the
    /// only node evaluated).
    pub nominated_node: Option<(String, bool)>,
    /// Normal-mode verdicts of evaluated nodes, in model order.
    pub filter: Vec<NodeVerdict>,
    /// All-filters mode, when requested.
    pub filter_all: Option<Vec<NodeAllVerdicts>>,
    /// Filter plugins of the profile, in order.
    pub filter_plugins: Vec<String>,
    /// Feasible node names, in evaluation order.
    pub feasible: Vec<String>,
    /// How many feasible nodes kube-scheduler would look for before it stops
    /// searching (`numFeasibleNodesToFind`); this replay always filters every node.
    pub num_nodes_to_find: usize,
    pub pre_score: Vec<PluginResult>,
    pub scores: Vec<PluginScores>,
    /// Totals over `feasible` (same order).
    pub totals: Vec<i64>,
    /// Every node with the maximal total, in model order.
    pub best_nodes: Vec<String>,
    /// The node kube-scheduler's heap would pop for this feasible order; among ties
    /// the real pick depends on goroutine completion order.
    pub selected_node: Option<String>,
    pub fit_error: Option<String>,
    pub post_filter: Option<PostFilterTrace>,
    /// Reserve, Permit, PreBind, Bind, PostBind as a dry run on the selected node.
    pub binding: Vec<PhaseTrace>,
    pub not_modelled: Vec<NotModelled>,
    /// Errors that are kube-scheduler's own (known upstream bugs reproduced on
    /// purpose), explained.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub upstream_behaviour: Vec<NotModelled>,
    pub outcome: Outcome,
    /// The devices DynamicResources' Reserve allocated in the binding dry run (why
    /// nodes reject the pod's claims is not recorded: the report diagnoses it when
    /// shown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reserved_devices: Option<ReservedDevices>,
    /// The node a bound pod runs on: the replay took it off and placed it anew.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bound_to: Option<String>,
}

impl Trace {
    /// The trace of a pod before anything ran: every stage empty, with `outcome`.
    pub fn empty(pod: String, priority: i32, outcome: Outcome) -> Trace {
        Trace {
            pod,
            profile: String::new(),
            priority,
            nodes_total: 0,
            pre_enqueue: Vec::new(),
            queue_sort: Vec::new(),
            pre_filter: PreFilterTrace::default(),
            nominated_node: None,
            filter: Vec::new(),
            filter_all: None,
            filter_plugins: Vec::new(),
            feasible: Vec::new(),
            num_nodes_to_find: 0,
            pre_score: Vec::new(),
            scores: Vec::new(),
            totals: Vec::new(),
            best_nodes: Vec::new(),
            selected_node: None,
            fit_error: None,
            post_filter: None,
            binding: Vec::new(),
            not_modelled: Vec::new(),
            upstream_behaviour: Vec::new(),
            outcome,
            reserved_devices: None,
            bound_to: None,
        }
    }
}

/// What DynamicResources' Reserve allocated on the chosen node.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReservedDevices {
    pub node: String,
    /// Per claim it allocated (by position among the pod's claims), the devices.
    pub claims: Vec<(usize, Vec<ReservedDevice>)>,
}

/// One allocated device: a request's result.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReservedDevice {
    pub request: String,
    pub driver: String,
    pub pool: String,
    pub device: String,
}

impl Trace {
    pub fn verdict(&self, node: &str) -> Option<&NodeVerdict> {
        self.filter.iter().find(|v| v.node == node)
    }
    pub fn total(&self, node: &str) -> Option<i64> {
        self.feasible
            .iter()
            .position(|n| n == node)
            .and_then(|i| self.totals.get(i).copied())
    }
}
