//! The Remedies view's search, off the UI thread: `explain --suggest`'s own search
//! ([`crate::explain::remedies_for`]) for the explained pod on the model the
//! inspector shows (the what-if edits already applied), so the view and the CLI
//! list the same remedies.

use std::sync::Arc;

use k8s_openapi::jiff::Timestamp;

use crate::engine::Framework;
use crate::explain::remedies_for;
use crate::model::Cluster;
use crate::report::remedies::{DEFAULT_LIMIT, Remedies};
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
        let target = self.key.target.as_deref();
        let found = remedies_for(
            &cluster,
            &self.profiles,
            &self.key.pod,
            target,
            DEFAULT_LIMIT,
            self.now,
        );
        match found {
            Ok(Some(r)) => Ok(r),
            Ok(None) => Err(match target {
                Some(t) => format!("none needed: the pod already lands on {t}"),
                None => "none needed: the pod is schedulable".into(),
            }),
            Err(e) => Err(e.to_string()),
        }
    }
}
