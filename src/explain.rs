//! Explaining one pod: pick its profile, make it pending if it is bound, run a cycle.

use k8s_openapi::jiff::Timestamp;

use crate::engine::cycle::{CycleOptions, replay_as_pending, run_cycle};
use crate::engine::profile::profile_for;
use crate::engine::trace::Trace;
use crate::engine::{Framework, SchedulerConfig};
use crate::model::{Cluster, Pod};
use crate::report::remedies::{Goal, Remedies, suggest};
use crate::report::whatif::{WhatIfComparison, compare};
use crate::report::{PodQuery, PodVerdict, PodsList, TraceView};
use crate::whatif::{Edit, EditError, Edited, apply, closest};

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ExplainError {
    #[error("pod {key:?} is not in the snapshot{hint}")]
    PodNotFound { key: String, hint: String },
    #[error(
        "pod {key} has finished (phase {phase}); the scheduler does not place pods that \
         ran to completion"
    )]
    PodFinished { key: String, phase: String },
    #[error(
        "pod {key} asks for schedulerName {scheduler:?}, which no profile serves (profiles: {profiles})"
    )]
    NoProfile {
        key: String,
        scheduler: String,
        profiles: String,
    },
    #[error(transparent)]
    Edit(#[from] EditError),
    #[error("--target {node:?}: no such node{}", .suggestion.as_ref().map(|s| format!("; did you mean {s:?}?")).unwrap_or_default())]
    NoTargetNode {
        node: String,
        suggestion: Option<String>,
    },
}

impl ExplainError {
    /// A pods list's verdict for a pod that could not be replayed: another
    /// scheduler's pod (no profile serves it), or the error.
    pub fn verdict(&self) -> PodVerdict {
        match self {
            ExplainError::NoProfile { scheduler, .. } => PodVerdict::NotServed {
                scheduler: scheduler.clone(),
            },
            e => PodVerdict::Error {
                message: e.to_string(),
            },
        }
    }
}

/// The `namespace/name` key of a pod as a person names it: `ns/name` as given, a bare
/// name in `namespace` (the `--namespace` flag) or else `default`, as kubectl reads
/// it. Every command that takes a pod name goes through here.
pub fn pod_key(pod: &str, namespace: Option<&str>) -> String {
    if pod.contains('/') {
        pod.to_string()
    } else {
        format!("{}/{pod}", namespace.unwrap_or("default"))
    }
}

/// Replay `key` (`namespace/name`, or a bare name in `default`: see [`pod_key`]) with
/// the profile its schedulerName names. A bound pod is replayed as if it were pending
/// again: it is taken off its node first.
pub fn explain(
    cluster: &Cluster,
    config: &SchedulerConfig,
    key: &str,
    opts: &CycleOptions,
) -> Result<Trace, ExplainError> {
    // Pods counted as the replayed release counts them (PodLevelResources, resizes).
    let accounted = cluster.accounted_for(&config.version.features());
    let cluster = accounted.as_ref().unwrap_or(cluster);
    explain_pod(cluster, &config.profiles, &pod_key(key, None), None, opts)
}

/// The profile a pod replays with: `profile` (an index into `profiles`, as the TUI
/// lets the user pick one) when it exists, else the one its schedulerName names.
pub fn choose_profile(profiles: &[Framework], pod: &Pod, profile: Option<usize>) -> Option<usize> {
    match profile {
        Some(i) if i < profiles.len() => Some(i),
        _ => profiles
            .iter()
            .position(|f| f.profile_name == pod.scheduler_name),
    }
}

/// The one way a pod's answer is computed, for the CLI and the TUI alike: look the pod
/// up by its full key, choose its profile ([`choose_profile`]), replay a bound pod as
/// pending, run the cycle.
pub fn explain_pod(
    cluster: &Cluster,
    profiles: &[Framework],
    key: &str,
    profile: Option<usize>,
    opts: &CycleOptions,
) -> Result<Trace, ExplainError> {
    explain_with(cluster, profiles, key, profile, &|fw, c, p| {
        run_cycle(fw, c, p, opts)
    })
}

/// [`explain_pod`] with the cycle itself injected (the TUI's tests hand-make traces);
/// everything around the cycle is the same.
pub fn explain_with(
    cluster: &Cluster,
    profiles: &[Framework],
    key: &str,
    profile: Option<usize>,
    cycle: &dyn Fn(&Framework, &Cluster, &Pod) -> Trace,
) -> Result<Trace, ExplainError> {
    let key = key.to_string();
    let Some(pod) = cluster.pod(&key) else {
        if let Some(phase) = cluster.finished_pods.get(&key) {
            return Err(ExplainError::PodFinished {
                key,
                phase: phase.clone(),
            });
        }
        return Err(ExplainError::PodNotFound {
            hint: not_found_hint(cluster, &key),
            key,
        });
    };
    let fw = match profile.filter(|&i| i < profiles.len()) {
        Some(i) => &profiles[i],
        None => profile_for(profiles, pod).map_err(|e| ExplainError::NoProfile {
            key: key.clone(),
            scheduler: e.scheduler,
            profiles: e.profiles,
        })?,
    };
    Ok(replay_as_pending(cluster, pod, |c, p| cycle(fw, c, p)))
}

/// A pod's answer under what-if edits: the replay on the model as loaded, the replay
/// on the edited copy (pod edits change the pod being explained), and their
/// comparison. Nothing is written anywhere: the edits live in the copy.
pub struct WhatIfRun {
    pub edited: Edited,
    pub before: Trace,
    pub after: Trace,
    pub comparison: WhatIfComparison,
}

/// [`explain_pod`] of `key` before and after `edits`.
pub fn explain_what_if(
    cluster: &Cluster,
    profiles: &[Framework],
    key: &str,
    edits: &[Edit],
    opts: &CycleOptions,
) -> Result<WhatIfRun, ExplainError> {
    let before = explain_pod(cluster, profiles, key, None, opts)?;
    let pod = cluster.pod(key).map(|p| p.as_ref());
    let edited = apply(cluster, pod, edits)?;
    let after = explain_pod(&edited.cluster, profiles, key, None, opts)?;
    let written: Vec<String> = edits.iter().map(Edit::to_string).collect();
    let notes = edited.note_lines();
    let comparison = compare(&written, &notes, &before, &after);
    Ok(WhatIfRun {
        edited,
        before,
        after,
        comparison,
    })
}

/// What `--suggest` answers for `key` on `cluster` (already edited, when what-if
/// edits are active): the remedies of [`suggest`], searched from a replay that ran
/// every filter on every node (so each rejected node's every reason yields its
/// candidates, and the answer is the same whatever the output format), or `None`
/// when the pod is already placed where the goal asks.
pub fn remedies_for(
    cluster: &Cluster,
    profiles: &[Framework],
    key: &str,
    target: Option<&str>,
    limit: usize,
    now: Timestamp,
) -> Result<Option<Remedies>, ExplainError> {
    if let Some(t) = target
        && cluster.node(t).is_none()
    {
        return Err(ExplainError::NoTargetNode {
            node: t.to_string(),
            suggestion: closest(t, cluster.nodes().iter().map(|n| &*n.node.name)),
        });
    }
    let opts = CycleOptions {
        all_filters: true,
        now,
        ..Default::default()
    };
    let trace = explain_pod(cluster, profiles, key, None, &opts)?;
    let goal = match target {
        Some(t) => Goal::Target(t),
        None => Goal::Schedulable,
    };
    let placed = match (&trace.outcome, goal) {
        (crate::engine::trace::Outcome::Scheduled { node }, Goal::Target(t)) => node == t,
        (crate::engine::trace::Outcome::Scheduled { .. }, Goal::Schedulable) => true,
        _ => false,
    };
    if placed {
        return Ok(None);
    }
    let Some(pod) = cluster.pod(key) else {
        return Ok(None);
    };
    let replays = CycleOptions {
        now,
        ..Default::default()
    };
    Ok(Some(suggest(
        cluster, profiles, pod, &trace, goal, limit, &replays,
    )))
}

/// A pods list's verdict on one pod: its replay through [`explain_with`] (first
/// rejections are enough), or what stopped the replay. The CLI's `pods --verdicts`
/// and the inspector's background verdicts both come from here.
pub fn pod_verdict(
    cluster: &Cluster,
    profiles: &[Framework],
    key: &str,
    profile: Option<usize>,
    cycle: &dyn Fn(&Framework, &Cluster, &Pod) -> Trace,
) -> PodVerdict {
    match explain_with(cluster, profiles, key, profile, cycle) {
        Ok(trace) => {
            let v = PodVerdict::of(&trace, &TraceView::new(&trace));
            match cluster.pod(key) {
                Some(pod) => v.of_pod(pod),
                None => v,
            }
        }
        Err(e) => e.verdict(),
    }
}

/// What `schedscope pods` lists: the pending pods of `namespace` (all when `None`) as
/// a [`PodsList`] (no waiting pods in a one-shot listing), and with `verdicts_at` (the
/// time the cycles run at) each one's [`pod_verdict`] (first rejections only, as
/// kube-scheduler). The cycles are
/// independent: they run on rayon's workers (as the engine's node chunks do), and
/// come back in the list's order.
pub fn pods_listing(
    cluster: &Cluster,
    profiles: &[Framework],
    namespace: Option<&str>,
    verdicts_at: Option<Timestamp>,
) -> (PodsList, Option<Vec<PodVerdict>>) {
    let list = PodsList::new(
        cluster,
        &[],
        &PodQuery {
            all: false,
            namespace,
            filter: "",
            keep: None,
            profiles,
        },
    );
    let verdicts = verdicts_at.map(|now| {
        let opts = CycleOptions {
            now,
            ..Default::default()
        };
        let cycle = |fw: &Framework, c: &Cluster, p: &Pod| run_cycle(fw, c, p, &opts);
        use rayon::prelude::*;
        list.rows
            .par_iter()
            .map(|r| pod_verdict(cluster, profiles, &r.key(), None, &cycle))
            .collect()
    });
    (list, verdicts)
}

/// Suggest pods with the same name in other namespaces, or similar names.
fn not_found_hint(cluster: &Cluster, key: &str) -> String {
    let name = key.rsplit('/').next().unwrap_or(key);
    let same_name: Vec<String> = cluster
        .pods()
        .filter(|p| p.name == name)
        .take(5)
        .map(|p| p.key())
        .collect();
    if !same_name.is_empty() {
        return format!("; did you mean {}?", same_name.join(" or "));
    }
    let pending: Vec<String> = cluster.pending_pods().take(5).map(|p| p.key()).collect();
    if pending.is_empty() {
        "; the snapshot has no pending pods".into()
    } else {
        format!("; pending pods include {}", pending.join(", "))
    }
}
