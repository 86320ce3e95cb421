//! The Remedies view's search, off the UI thread: [`crate::report::remedies::suggest`]
//! for the explained pod on the model the inspector shows (the what-if edits
//! already applied), each remedy verified by a full replay there.

use std::sync::Arc;

use k8s_openapi::jiff::Timestamp;

use crate::engine::Framework;
use crate::engine::cycle::CycleOptions;
use crate::engine::trace::Trace;
use crate::model::Cluster;
use crate::report::remedies::{DEFAULT_LIMIT, Goal, Remedies, suggest};
use crate::whatif::Edit;

use super::worker::with_pod_edits;

/// What a search is for: the pod, the model version, and the node it should land on
/// (`None`: any node).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RemediesKey {
    pub pod: String,
    pub generation: u64,
    pub target: Option<String>,
}

/// One search, with owned inputs so it can run on another thread.
pub struct RemediesJob {
    pub key: RemediesKey,
    /// The model shown (cluster edits applied); the pod's own edits go on top.
    pub cluster: Arc<Cluster>,
    pub pod_edits: Vec<Edit>,
    pub profiles: Arc<Vec<Framework>>,
    /// The pod's replay on that model (the one the panes show).
    pub trace: Arc<Trace>,
    pub now: Timestamp,
}

/// A search's answer (or why there is none).
pub struct Found {
    pub key: RemediesKey,
    pub remedies: Result<Remedies, String>,
}

impl RemediesJob {
    pub fn run(self) -> Found {
        let remedies = self.search();
        Found {
            key: self.key,
            remedies,
        }
    }

    fn search(&self) -> Result<Remedies, String> {
        let (cluster, _) = with_pod_edits(&self.cluster, &self.key.pod, &self.pod_edits)?;
        let pod = cluster
            .pod(&self.key.pod)
            .ok_or_else(|| format!("no pod {}", self.key.pod))?;
        let goal = match &self.key.target {
            Some(n) => Goal::Target(n),
            None => Goal::Schedulable,
        };
        let opts = CycleOptions {
            now: self.now,
            ..Default::default()
        };
        Ok(suggest(
            &cluster,
            &self.profiles,
            pod,
            &self.trace,
            goal,
            DEFAULT_LIMIT,
            &opts,
        ))
    }
}
