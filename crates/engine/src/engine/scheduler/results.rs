//! What a simulation is given and gives back: options, events, attempts, results.
//! schedscope's own (upstream's outputs are the API writes and events it makes).

use std::time::Duration;

use k8s_openapi::jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::engine::queue::{ClusterEvent, QueueName};
use crate::engine::trace::{Outcome, Trace};

/// How a simulation runs.
#[derive(Clone, Debug)]
pub struct SimOptions {
    /// Simulated start time; default: the latest creation or start time in the
    /// snapshot (pods and PodGroups), else the Unix epoch.
    pub start: Option<Timestamp>,
    /// Keep every attempt's full [`Trace`] (memory grows with nodes × attempts).
    pub keep_traces: bool,
    /// Stop after this many scheduling attempts; default 20 per pending pod + 100.
    pub max_attempts: Option<usize>,
    /// Stop when simulated time would pass this far beyond the start.
    pub max_duration: Duration,
    /// Preemption victims stay on their node as terminating pods (deletionTimestamp
    /// and DisruptionTarget set) until [`super::Scheduler::remove_bound_pod`] says their
    /// deletion landed, as on a real cluster (the acting scheduler). Off: they
    /// vanish at once.
    pub victims_terminate: bool,
    /// Workers for Filter and Score ([`crate::engine::cycle::CycleOptions::parallelism`]):
    /// 0 = available parallelism, 1 = sequential; the result is the same for any value.
    pub parallelism: usize,
    /// See [`crate::engine::cycle::CycleOptions::min_nodes_per_worker`].
    pub min_nodes_per_worker: usize,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions {
            start: None,
            keep_traces: true,
            max_attempts: None,
            max_duration: Duration::from_secs(3600),
            victims_terminate: false,
            parallelism: 0,
            min_nodes_per_worker: crate::engine::cycle::CycleOptions::default()
                .min_nodes_per_worker,
        }
    }
}

/// Why the run ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum StopReason {
    /// Only unschedulable or gated pods left, no waiting pods, nothing backing off.
    Settled,
    /// The attempt limit was reached (e.g. a gang that keeps failing).
    AttemptLimit { attempts: usize },
    /// The next event lies beyond the simulated-time limit.
    TimeLimit { limit: String },
}

/// One timed wait of a waiting pod.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WaitInfo {
    pub plugin: String,
    /// Go duration, e.g. `1m0s`.
    pub timeout: String,
    /// Offset of the deadline from the simulation start.
    pub deadline_ms: u64,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SimEventKind {
    /// Added to the queue at the start.
    Queued {
        queue: QueueName,
    },
    /// Not scheduled by this simulation.
    Skipped {
        reason: String,
    },
    /// Popped for its `pod_attempt`-th attempt; `attempt` indexes
    /// [`SimulationResult::attempts`] (the scheduling cycle's number, from 0).
    Attempt {
        attempt: usize,
        pod_attempt: u32,
        from: QueueName,
    },
    /// Assumed on the node and reserved.
    Reserved {
        node: String,
    },
    /// Held at Permit.
    Waiting {
        node: String,
        waits: Vec<WaitInfo>,
    },
    /// Every waiting plugin allowed.
    Allowed {
        node: String,
    },
    /// A waiting pod was rejected (a plugin, a timeout, preemption, an operator).
    Rejected {
        node: String,
        plugin: String,
        message: String,
    },
    /// Unreserve ran and the assumed pod was forgotten.
    Unreserved {
        node: String,
    },
    Bound {
        node: String,
    },
    /// The attempt failed; the pod went to `queue`.
    Failed {
        message: String,
        plugins: Vec<String>,
        queue: QueueName,
    },
    /// Preemption nominated the node; the victims are evicted.
    Nominated {
        node: String,
        victims: Vec<String>,
    },
    /// Deleted as a preemption victim.
    Evicted {
        by: String,
        node: String,
    },
    /// A nomination was cleared (a higher-priority pod preempted on that node).
    NominationCleared {
        node: String,
    },
    /// Moved by a cluster event.
    Moved {
        to: QueueName,
        event: ClusterEvent,
    },
    /// Moved to activeQ by a plugin (PodsToActivate).
    Activated,
    /// The pod became gated at its cycle's PreEnqueue.
    Gated {
        plugin: String,
        message: String,
    },
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SimEvent {
    pub seq: usize,
    /// Milliseconds since the simulation start.
    pub at_ms: u64,
    pub pod: String,
    #[serde(flatten)]
    pub kind: SimEventKind,
}

/// One scheduling attempt (one cycle, plus its binding half when it got there).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attempt {
    pub pod: String,
    pub at_ms: u64,
    pub profile: String,
    /// The cycle's full trace (its binding phases as they really ran), when kept.
    pub trace: Option<Trace>,
    pub outcome: Outcome,
}

/// Where a pod ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Placement {
    Bound {
        node: String,
    },
    Unschedulable {
        message: String,
        nominated_node: Option<String>,
        queue: QueueName,
    },
    Gated {
        plugin: String,
        message: String,
    },
    /// Still waiting at Permit when the run stopped.
    Waiting {
        node: String,
    },
    /// Still queued (never attempted, or backing off) when the run stopped.
    Pending {
        queue: QueueName,
    },
    /// Evicted by preemption.
    Evicted {
        by: String,
    },
    Skipped {
        reason: String,
    },
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PodResult {
    pub pod: String,
    pub attempts: u32,
    pub placement: Placement,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SimulationResult {
    pub start: Timestamp,
    /// Simulated time at the end, since the start.
    pub end_ms: u64,
    pub stop: StopReason,
    pub events: Vec<SimEvent>,
    pub attempts: Vec<Attempt>,
    /// Every pod pending at the start in queue order ([`super::queue_order`]), then
    /// every pod that came later (evicted, added) by key.
    pub pods: Vec<PodResult>,
}
