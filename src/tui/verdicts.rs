//! The pods list's verdicts: every pending pod's replay answer, asked of the worker
//! in the background (newest pods first) for the current cluster version and profile
//! override, and dropped when either changes.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use k8s_openapi::jiff::Timestamp;

use crate::engine::Framework;
use crate::model::Cluster;
use crate::report::{PodVerdict, newest_first};

use super::whatif::WhatIf;
use super::worker::{CycleRunner, VerdictBatch, VerdictKey};

/// What the verdicts are wanted for.
pub struct VerdictsWant<'a> {
    pub cluster: &'a Arc<Cluster>,
    pub profiles: &'a Arc<Vec<Framework>>,
    pub profile_override: Option<usize>,
    pub generation: u64,
    pub now: Timestamp,
    /// The what-if edits (`cluster` has the cluster edits already; each pod's
    /// replay applies its pod edits).
    pub whatif: &'a WhatIf,
}

pub struct Verdicts {
    runner: Arc<dyn CycleRunner>,
    /// The cluster version and profile override the verdicts are for; `None` before
    /// the first batch.
    asked: Option<(u64, Option<usize>)>,
    /// Looked up by pod, never iterated for output.
    known: HashMap<String, PodVerdict>,
    /// Pending pods when the batch was made.
    total: usize,
    job: Option<VerdictBatch>,
}

impl Verdicts {
    pub fn new(runner: Arc<dyn CycleRunner>) -> Self {
        Verdicts {
            runner,
            asked: None,
            known: HashMap::new(),
            total: 0,
            job: None,
        }
    }

    pub fn get(&self, pod: &str) -> Option<&PodVerdict> {
        self.known.get(pod)
    }

    /// (known, pending pods) for the current version.
    pub fn progress(&self) -> (usize, usize) {
        (self.known.len(), self.total)
    }

    /// A batch for the worker when the cluster version or the profile override
    /// changed: the old verdicts are dropped, every pending pod is asked anew.
    pub fn want(&mut self, w: &VerdictsWant) {
        let now = (w.generation, w.profile_override);
        if self.asked == Some(now) {
            return;
        }
        self.asked = Some(now);
        self.known.clear();
        let mut pods: Vec<_> = w.cluster.pending_pods().cloned().collect();
        newest_first(&mut pods);
        self.total = pods.len();
        self.job = Some(VerdictBatch {
            generation: w.generation,
            profile_override: w.profile_override,
            pods: pods.iter().map(|p| p.key()).collect::<VecDeque<_>>(),
            cluster: w.cluster.clone(),
            profiles: w.profiles.clone(),
            now: w.now,
            runner: self.runner.clone(),
            whatif: w.whatif.is_active().then(|| Arc::new(w.whatif.clone())),
        });
    }

    pub fn take_job(&mut self) -> Option<VerdictBatch> {
        self.job.take()
    }

    /// A computed verdict: kept if it is for the current version and override.
    pub fn ready(&mut self, key: VerdictKey, verdict: PodVerdict) -> bool {
        if self.asked != Some((key.generation, key.profile_override)) {
            return false;
        }
        self.known.insert(key.pod, verdict);
        true
    }
}
