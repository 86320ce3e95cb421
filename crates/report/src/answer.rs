//! One pod's answer as read: the headline (what the replay says about the pod), the
//! rejection groups and their causes (the [`TraceView`]), the pod's needs, and the
//! real scheduler's word beside it. Decided here once; the `explain` table, its JSON
//! and the inspector draw these values, never their own.

use schedscope_engine::engine::Framework;
use schedscope_engine::engine::status::Code;
use schedscope_engine::engine::trace::{Outcome, Trace};
use schedscope_engine::model::{Cluster, Pod};
use schedscope_engine::version::Release;

use super::needs::PodNeeds;
use super::scheduler_word::{SchedulerWord, SchedulingEvents};
use super::trace::TraceView;

/// What the replay says about the pod, before any detail.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Headline {
    /// It fits: `node` is this replay's pick, `ties` every node sharing the best total
    /// (empty or one node when there is no tie).
    Schedulable {
        node: String,
        total: i64,
        ties: Vec<String>,
        /// The binding dry run stops at Permit: what it waits for (`Coscheduling up
        /// to 1m0s`), as a gang member waits for its group; it is not bound yet.
        waits: Option<String>,
    },
    /// No node fits now; preemption would nominate `node` after evicting `victims`.
    Preempting {
        node: String,
        victims: Vec<String>,
    },
    Unschedulable,
    /// A plugin that cannot read its objects from this source refused the pod at
    /// PreFilter: no verdict on the pod ([`not_replayed_by`]).
    NotReplayed {
        plugin: String,
    },
    /// Held before the queue (PreEnqueue).
    Gated {
        plugin: String,
        message: String,
    },
    Error {
        message: String,
    },
}

/// What the binding dry run waits for at Permit (`Coscheduling up to 1m0s`), when a
/// Permit plugin answered Wait.
pub fn permit_wait(trace: &Trace) -> Option<String> {
    let permit = trace.binding.iter().find(|p| p.point == "Permit")?;
    let waits: Vec<String> = permit
        .plugins
        .iter()
        .filter(|r| r.code == Code::Wait)
        .map(|r| {
            let how = r.reasons.join("; ");
            let how = how.strip_prefix("wait ").unwrap_or(&how);
            if how.is_empty() {
                r.plugin.to_string()
            } else {
                format!("{} {how}", r.plugin)
            }
        })
        .collect();
    (!waits.is_empty()).then(|| waits.join(", "))
}

impl Headline {
    pub fn of(trace: &Trace, view: &TraceView) -> Headline {
        match &trace.outcome {
            Outcome::Scheduled { node } => Headline::Schedulable {
                node: node.clone(),
                total: trace.total(node).unwrap_or(0),
                ties: view
                    .ties
                    .iter()
                    .map(|&i| trace.feasible[i].clone())
                    .collect(),
                waits: permit_wait(trace),
            },
            Outcome::Unschedulable {
                nominated_node: Some(n),
            } => Headline::Preempting {
                node: n.clone(),
                victims: trace
                    .post_filter
                    .as_ref()
                    .map(|p| p.victims.clone())
                    .unwrap_or_default(),
            },
            Outcome::Unschedulable {
                nominated_node: None,
            } => match not_replayed_by(trace) {
                Some(plugin) => Headline::NotReplayed {
                    plugin: plugin.to_string(),
                },
                None => Headline::Unschedulable,
            },
            Outcome::Gated { plugin, message } => Headline::Gated {
                plugin: plugin.clone(),
                message: message.clone(),
            },
            Outcome::Error { message } => Headline::Error {
                message: message.clone(),
            },
        }
    }

    /// The full sentence (the `explain` table's Verdict line).
    pub fn sentence(&self) -> String {
        match self {
            Headline::Schedulable {
                node,
                waits: Some(w),
                ..
            } => format!("waits at Permit on {node} ({w}): not bound until Permit allows it"),
            Headline::Schedulable {
                node, total, ties, ..
            } if ties.len() > 1 => format!(
                "schedulable: best total {total} shared by {} nodes ({}); this replay picks {node}",
                ties.len(),
                some_nodes(ties)
            ),
            Headline::Schedulable { node, total, .. } => {
                format!("schedulable on {node} (total score {total})")
            }
            Headline::Preempting { node, victims } => format!(
                "unschedulable now; preemption would nominate {node} after evicting {}",
                victims.join(", ")
            ),
            Headline::Unschedulable => "unschedulable".into(),
            Headline::NotReplayed { plugin } => format!(
                "{} (see Not modelled); the real scheduler's answer is unknown",
                not_replayed(plugin)
            ),
            Headline::Gated { plugin, message } => gated(plugin, message),
            Headline::Error { message } => format!("scheduling error: {message}"),
        }
    }

    /// The short form a pane's first line shows (the inspector's Pipeline).
    pub fn short(&self) -> String {
        match self {
            Headline::Schedulable {
                node,
                waits: Some(w),
                ..
            } => format!("waits at Permit on {node} ({w})"),
            Headline::Schedulable { node, .. } => format!("would be bound to {node}"),
            Headline::Preempting { node, .. } => {
                format!("unschedulable; preemption nominates {node}")
            }
            Headline::Unschedulable => "unschedulable".into(),
            Headline::NotReplayed { plugin } => not_replayed(plugin),
            Headline::Gated { plugin, message } => gated(plugin, message),
            Headline::Error { message } => format!("error: {message}"),
        }
    }

    pub fn symbol(&self) -> &'static str {
        match self {
            Headline::Schedulable { waits: Some(_), .. } => "◷",
            Headline::Schedulable { .. } => "★",
            Headline::Preempting { .. } | Headline::Unschedulable => "✗",
            Headline::NotReplayed { .. } => "?",
            Headline::Gated { .. } => "⊘",
            Headline::Error { .. } => "!",
        }
    }
}

/// The plugin that refused the pod at PreFilter when it is one that cannot read what
/// it needs from this source (it is listed as not modelled): that refusal is no
/// verdict on the pod, so every output says "not replayed" rather than
/// "unschedulable".
pub fn not_replayed_by(trace: &Trace) -> Option<&str> {
    if !matches!(
        trace.outcome,
        Outcome::Unschedulable {
            nominated_node: None
        }
    ) {
        return None;
    }
    let plugin = trace.pre_filter.plugin.as_deref()?;
    trace
        .not_modelled
        .iter()
        .any(|n| n.plugin == plugin)
        .then_some(plugin)
}

/// The one phrase for a pod that was not replayed ([`not_replayed_by`]).
pub fn not_replayed(plugin: &str) -> String {
    format!("not replayed: {plugin} cannot read what it needs from this source")
}

/// The one phrase for a pod held before the queue by a PreEnqueue plugin.
pub fn gated(plugin: &str, message: &str) -> String {
    format!("gated by {plugin}: {message}")
}

/// Node names for a sentence: the first few, then how many more (`-o json` has all).
pub fn some_nodes(nodes: &[String]) -> String {
    const SHOWN: usize = 8;
    if nodes.len() <= SHOWN {
        return nodes.join(", ");
    }
    format!(
        "{}, and {} more (all in -o json)",
        nodes[..SHOWN].join(", "),
        nodes.len() - SHOWN
    )
}

/// What the real scheduler said, as far as the source can tell.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RecordedWord {
    /// A snapshot: nothing recorded to set beside the replay.
    NotRecorded,
    /// A live source, and the scheduler said nothing about this pod.
    Silent,
    Said(SchedulerWord),
}

impl RecordedWord {
    /// The real scheduler's word on the replayed pod beside the replay's FitError,
    /// from a live source's recorded events (`None`: a snapshot, nothing recorded).
    pub fn of(trace: &Trace, cluster: &Cluster, events: Option<&SchedulingEvents>) -> RecordedWord {
        let Some(events) = events else {
            return RecordedWord::NotRecorded;
        };
        cluster
            .pod(&trace.pod)
            .and_then(|pod| {
                SchedulerWord::of(pod, events.get(&trace.pod), trace.fit_error.as_deref())
            })
            .map_or(RecordedWord::Silent, RecordedWord::Said)
    }

    pub fn word(&self) -> Option<&SchedulerWord> {
        match self {
            RecordedWord::Said(w) => Some(w),
            _ => None,
        }
    }
}

/// One pod's answer: everything `explain` prints, computed once.
pub struct Answer {
    pub headline: Headline,
    /// Rejection groups with their causes, ranks, stages.
    pub view: TraceView,
    /// The pod's own needs, when the pod is in the cluster the replay ran on.
    pub needs: Option<PodNeeds>,
    pub word: RecordedWord,
    /// A snapshot's record of the real scheduler's word and what it lacks for the
    /// pod (`None`: not a snapshot, or the answer is about an edited model).
    pub recorded: Option<super::recorded::Recorded>,
    /// The kube-scheduler release replayed, when the cluster names one (else the
    /// frameworks' own, v1.35 by default), with what it means for this pod.
    pub release: Option<ReleaseNote>,
}

/// The release replayed and what differs for the pod because of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReleaseNote {
    pub release: Release,
    /// Sentences, e.g. that the pod's resource claims are ignored.
    pub notes: Vec<String>,
}

impl ReleaseNote {
    /// `release` replayed for `pod` (when the pod is known).
    pub fn of(release: &Release, pod: Option<&Pod>) -> ReleaseNote {
        let fts = release.version.features();
        let minor = format!("1.{}", release.version.minor);
        let mut notes = Vec::new();
        if let Some(pod) = pod {
            if !fts.dynamic_resource_allocation && !pod.resource_claims.is_empty() {
                notes.push(format!(
                    "DRA (DynamicResourceAllocation) is off by default in {minor}: kube-scheduler ignores the pod's resource claims and allocates no devices"
                ));
            }
            if !fts.pod_level_resources && pod.older_accounting.is_some() {
                notes.push(format!(
                    "pod-level resources (PodLevelResources) are off by default in {minor}: requests are the containers' sum"
                ));
            }
        }
        ReleaseNote {
            release: release.clone(),
            notes,
        }
    }

    /// `v1.33 (from --kube-version)`, then the notes.
    pub fn line(&self) -> String {
        let mut s = self.release.to_string();
        for n in &self.notes {
            s += "; ";
            s += n;
        }
        s
    }
}

impl Answer {
    /// The answer to a replay on `cluster` with `profiles` (causes and needs from the
    /// cluster the cycle ran on); the real scheduler's word is set with
    /// [`Answer::with_word`].
    pub fn of_replay(trace: &Trace, cluster: &Cluster, profiles: &[Framework]) -> Answer {
        let view = TraceView::of_replay(trace, cluster, profiles);
        Answer {
            headline: Headline::of(trace, &view),
            needs: cluster
                .pod(&trace.pod)
                .map(|pod| PodNeeds::of(pod, cluster)),
            view,
            word: RecordedWord::NotRecorded,
            recorded: None,
            release: cluster
                .kube_version
                .as_ref()
                .map(|r| ReleaseNote::of(r, cluster.pod(&trace.pod).map(|p| p.as_ref()))),
        }
    }

    /// The answer drawn from a view alone (no cluster: no needs, no word).
    pub fn of_view(trace: &Trace, view: TraceView) -> Answer {
        Answer {
            headline: Headline::of(trace, &view),
            view,
            needs: None,
            word: RecordedWord::NotRecorded,
            recorded: None,
            release: None,
        }
    }

    pub fn with_word(mut self, word: RecordedWord) -> Answer {
        self.word = word;
        self
    }

    /// With a snapshot's record beside the replay ([`super::recorded::Recorded::of`]
    /// on the cluster the replay ran on).
    pub fn with_recorded(mut self, trace: &Trace, cluster: &Cluster) -> Answer {
        self.recorded = super::recorded::Recorded::of(trace, cluster);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedscope_engine::engine::trace::NotModelled;

    /// A pod refused at PreFilter only because its plugin cannot read its objects
    /// from this source gets no verdict, but says why.
    #[test]
    fn a_pod_refused_for_want_of_objects_is_not_called_unschedulable() {
        let mut t = Trace::empty(
            "ns/p".into(),
            0,
            Outcome::Unschedulable {
                nominated_node: None,
            },
        );
        t.pre_filter.plugin = Some("DynamicResources".into());
        let headline = |t: &Trace| Headline::of(t, &TraceView::new(t));
        assert_eq!(headline(&t), Headline::Unschedulable);
        t.not_modelled.push(NotModelled {
            plugin: "DynamicResources".into(),
            what: "claims resolved without ResourceClaims (not readable: forbidden)".into(),
        });
        assert_eq!(
            headline(&t).sentence(),
            "not replayed: DynamicResources cannot read what it needs from this source (see Not modelled); the real scheduler's answer is unknown"
        );
        assert_eq!(
            headline(&t).short(),
            "not replayed: DynamicResources cannot read what it needs from this source"
        );
    }
}
