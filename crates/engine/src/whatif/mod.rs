//! What-if edits: the pod being explained or the cluster changed in memory only
//! (`pod.cpu=2`, `node.uncordon=gen-a3`, `node.add=3:like=gpu-b1`, ...), then the full
//! framework replayed on the edited copy. Nothing here writes to a cluster; the
//! caller's model is never changed. No upstream counterpart: kube-scheduler has no
//! what-if mode; the replay is [`crate::engine::cycle`]'s, as `explain` runs it.

mod apply;
mod closest;
mod edit;
mod requests;
#[cfg(test)]
mod tests;

pub use apply::{Edited, UNSCHEDULABLE_TAINT, apply};
pub use closest::{closest, distance};
pub use edit::{Edit, EditError, GRAMMAR, Qty, RequestSpelling, TAINT_EFFECTS};
pub use requests::{set_effective_request, set_request_in_manifest, show};

use crate::engine::Framework;
use crate::engine::cycle::{CycleOptions, replay_as_pending, run_cycle};
use crate::engine::profile::profile_for;
use crate::engine::trace::Trace;
use crate::model::{Cluster, Pod};

/// Parse every edit, stopping at the first malformed one.
pub fn parse_edits<S: AsRef<str>>(texts: &[S]) -> Result<Vec<Edit>, EditError> {
    texts.iter().map(|t| t.as_ref().parse()).collect()
}

/// One scheduling cycle for `pod` on `cluster`, as `explain` runs it: a bound pod is
/// taken off its node first and placed anew. `None` when no profile serves the pod.
pub fn replay(
    cluster: &Cluster,
    profiles: &[Framework],
    pod: &Pod,
    opts: &CycleOptions,
) -> Option<Trace> {
    let fw = profile_for(profiles, pod).ok()?;
    Some(replay_as_pending(cluster, pod, |c, p| {
        run_cycle(fw, c, p, opts)
    }))
}

/// [`apply`] then [`replay`] of the edited pod: the trace of the edited model.
pub fn replay_edited(
    cluster: &Cluster,
    profiles: &[Framework],
    pod: &Pod,
    edits: &[Edit],
    opts: &CycleOptions,
) -> Result<(Edited, Option<Trace>), EditError> {
    let edited = apply(cluster, Some(pod), edits)?;
    let p = edited.pod.clone().unwrap_or_else(|| pod.clone());
    let trace = replay(&edited.cluster, profiles, &p, opts);
    Ok((edited, trace))
}
