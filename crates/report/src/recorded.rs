//! What a snapshot records of the real scheduler's last word on a pod (its
//! PodScheduled=False condition, the latest FailedScheduling Event the dump holds),
//! set beside the replay; and whether the snapshot holds everything the pod's
//! plugins read. A replay on an incomplete dump answers confidently all the same,
//! so every answer says what the snapshot misses, and a disagreement lists the
//! likely causes the snapshot itself shows.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::jiff::Timestamp;

use schedscope_engine::engine::trace::{Outcome, Trace};
use schedscope_engine::model::{Cluster, Pod};

use super::pods::PodVerdict;
use super::scheduler_word::{SchedulerWord, age_text};

/// A recorded word older than this before the snapshot's newest time is named as a
/// likely cause: the cluster may have changed after the scheduler spoke.
const STALE_SECS: i64 = 300;

/// The snapshot's record beside one replay.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recorded {
    /// The real scheduler's recorded word, when the snapshot holds one for the pod.
    pub word: Option<RecordedVerdict>,
    pub completeness: Completeness,
}

/// The recorded word and how it compares with the replay.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordedVerdict {
    pub word: SchedulerWord,
    /// The condition's reason (`Unschedulable`, `SchedulerError`, `SchedulingGated`).
    pub reason: Option<String>,
    /// When it was said: the event's last time, else the condition's
    /// lastTransitionTime.
    pub at: Option<Timestamp>,
    /// How long before the snapshot's newest timestamp it was said.
    pub age_secs: Option<i64>,
    /// When it differs from the replay: the likely causes the snapshot shows.
    pub causes: Vec<String>,
}

/// What the snapshot lacks that the pod's plugins read (empty: complete).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Completeness {
    pub missing: Vec<String>,
}

impl Completeness {
    /// `complete for this pod` or `missing: a; b`.
    pub fn line(&self) -> String {
        if self.missing.is_empty() {
            "complete for this pod".into()
        } else {
            format!("missing: {}", self.missing.join("; "))
        }
    }

    pub fn is_complete(&self) -> bool {
        self.missing.is_empty()
    }
}

impl Recorded {
    /// The record for `trace`'s pod in a snapshot `cluster` (its conditions and the
    /// Events it holds). `None` when the pod is not in the cluster.
    pub fn of(trace: &Trace, cluster: &Cluster) -> Option<Recorded> {
        let pod = cluster.pod(&trace.pod)?;
        let completeness = completeness(cluster, pod);
        let word = recorded_word(cluster, pod, trace).map(|word| {
            let event = word.count.is_some();
            let at = if event {
                word.last_seen
            } else {
                pod.not_scheduled_since
            };
            let age_secs = at
                .zip(newest_timestamp(cluster))
                .map(|(at, newest)| (newest.as_second() - at.as_second()).max(0));
            let causes = if word.differs {
                causes(cluster, &word.message, age_secs, &completeness)
            } else {
                Vec::new()
            };
            RecordedVerdict {
                reason: pod.not_scheduled.as_deref().map(|(r, _)| r.clone()),
                word,
                at,
                age_secs,
                causes,
            }
        });
        Some(Recorded { word, completeness })
    }

    /// Whether the table and the inspector have something to say: a recorded word,
    /// or something missing (a complete snapshot with no word adds no lines).
    pub fn worth_showing(&self) -> bool {
        self.word.is_some() || !self.completeness.is_complete()
    }
}

impl RecordedVerdict {
    /// `agrees with the replay` / `DIFFERS from the replay`.
    pub fn verdict(&self) -> &'static str {
        if self.word.differs {
            "DIFFERS from the replay"
        } else {
            "agrees with the replay"
        }
    }

    /// Where the word comes from and how old it is: `PodScheduled condition
    /// (Unschedulable), said 3h05m before the snapshot's newest timestamp`.
    pub fn source(&self) -> String {
        let mut s = self.word.from.to_string();
        match (&self.reason, self.word.count) {
            (_, Some(c)) => s += &format!(" ({c}×)"),
            (Some(r), None) if !r.is_empty() => s += &format!(" ({r})"),
            _ => {}
        }
        match self.age_secs {
            Some(0) => s += ", the snapshot's newest record",
            Some(age) => {
                s += &format!(
                    ", said {} before the snapshot's newest timestamp",
                    age_text(age)
                )
            }
            None => {}
        }
        s
    }

    /// The whole word in one line: verdict, source, message.
    pub fn line(&self) -> String {
        format!(
            "{}: {}: {}",
            self.verdict(),
            self.source(),
            crate::format::one_line(&self.word.message)
        )
    }

    /// The causes in one line (`likely causes: a; b`), for a disagreement.
    pub fn causes_line(&self) -> Option<String> {
        self.word
            .differs
            .then(|| format!("likely causes: {}", self.causes.join("; ")))
    }
}

/// The real scheduler's recorded word on a pending pod beside the replay: its
/// latest FailedScheduling Event in the snapshot, else its PodScheduled=False
/// condition. A gated pod recorded as `SchedulingGated` agrees with a gated replay.
pub fn recorded_word(cluster: &Cluster, pod: &Pod, trace: &Trace) -> Option<SchedulerWord> {
    let gated = matches!(trace.outcome, Outcome::Gated { .. });
    word_beside(cluster, pod, trace.fit_error.as_deref(), gated)
}

/// [`recorded_word`] from the replay's FitError alone (a pods list keeps no trace).
pub fn word_beside(
    cluster: &Cluster,
    pod: &Pod,
    fit_error: Option<&str>,
    gated: bool,
) -> Option<SchedulerWord> {
    let mut word = SchedulerWord::of(pod, cluster.recorded_events.get(&pod.key()), fit_error)?;
    let recorded_gated = word.count.is_none()
        && pod
            .not_scheduled
            .as_deref()
            .is_some_and(|(r, _)| r == "SchedulingGated");
    if recorded_gated {
        word.differs = !gated;
    }
    Some(word)
}

/// What a pods list marks a pod with when its verdict differs from the real
/// scheduler's recorded word.
pub const DIFFERS_MARK: &str = "≠ recorded";

/// Whether a pod's listed verdict differs from the real scheduler's recorded word
/// (its PodScheduled=False condition, or the snapshot's latest FailedScheduling
/// event). No word, or a verdict without a replay, is no difference.
pub fn verdict_differs(cluster: &Cluster, pod: &Pod, verdict: &PodVerdict) -> bool {
    let (fit_error, gated) = match verdict {
        PodVerdict::Schedulable { .. } => (None, false),
        PodVerdict::Unschedulable { fit_error, .. } => (fit_error.as_deref(), false),
        PodVerdict::Gated { .. } => (None, true),
        _ => return false,
    };
    word_beside(cluster, pod, fit_error, gated).is_some_and(|w| w.differs)
}

/// Likely causes of a disagreement: the node count the scheduler saw against the
/// snapshot's, what the snapshot misses, and the word's age.
fn causes(
    cluster: &Cluster,
    message: &str,
    age_secs: Option<i64>,
    completeness: &Completeness,
) -> Vec<String> {
    let mut out = Vec::new();
    let nodes = cluster.nodes().len();
    if let Some(seen) = counted_nodes(message)
        && seen != nodes
    {
        out.push(format!(
            "the real scheduler counted {seen} node{}, the snapshot has {nodes}",
            crate::format::plural(seen)
        ));
    }
    out.extend(completeness.missing.iter().cloned());
    if let Some(age) = age_secs.filter(|&a| a >= STALE_SECS) {
        out.push(format!(
            "the word is {} older than the snapshot's newest timestamp: the cluster may \
             have changed since",
            age_text(age)
        ));
    }
    if out.is_empty() {
        out.push(
            "none the snapshot shows (the cluster may have changed after the scheduler \
             spoke, or the replay differs from kube-scheduler)"
                .into(),
        );
    }
    out
}

/// `0/2 nodes are available: ...` → 2.
fn counted_nodes(message: &str) -> Option<usize> {
    let rest = message.trim_start().strip_prefix("0/")?;
    let (n, tail) = rest.split_once(' ')?;
    tail.starts_with("nodes are available")
        .then(|| n.parse().ok())
        .flatten()
}

/// The newest time the snapshot records (pods' creation, start, conditions and
/// deletion; Events): the moment it was taken, as near as it tells.
pub fn newest_timestamp(cluster: &Cluster) -> Option<Timestamp> {
    let pods = cluster.pods().flat_map(|p| {
        [
            p.creation_timestamp,
            p.start_time,
            p.not_scheduled_since,
            p.deletion_timestamp,
        ]
    });
    let events = cluster.recorded_events.values().map(|e| e.last_seen);
    pods.chain(events).flatten().max()
}

/// What the snapshot lacks that the pod's plugins read.
pub fn completeness(cluster: &Cluster, pod: &Pod) -> Completeness {
    let mut missing = Vec::new();
    missing.extend(absent_nodes(cluster));
    missing.extend(one_namespace(cluster));
    missing.extend(daemon_set_gaps(cluster));
    missing.extend(volume_objects(cluster, pod));
    missing.extend(dra_objects(cluster, pod));
    Completeness { missing }
}

/// Nodes that bound pods name but the snapshot lacks: the real scheduler saw them.
fn absent_nodes(cluster: &Cluster) -> Option<String> {
    let mut absent: BTreeMap<&str, usize> = BTreeMap::new();
    for p in cluster.pods_on_absent_nodes() {
        if let Some(n) = p.node_name.as_deref() {
            *absent.entry(n).or_default() += 1;
        }
    }
    if absent.is_empty() {
        return None;
    }
    let pods: usize = absent.values().sum();
    let names: Vec<&str> = absent.keys().copied().collect();
    Some(format!(
        "node{} {} (pods are bound to {}, {pods} pod{})",
        crate::format::plural(names.len()),
        crate::answer::some_nodes(&names.iter().map(|n| n.to_string()).collect::<Vec<_>>()),
        if names.len() == 1 { "it" } else { "them" },
        crate::format::plural(pods)
    ))
}

/// Every pod in one namespace: a namespace-scoped dump (other namespaces' pods use
/// resources and ports and match affinity terms too).
fn one_namespace(cluster: &Cluster) -> Option<String> {
    let mut namespaces = cluster.pods().map(|p| p.namespace.as_str());
    let first = namespaces.next()?;
    if cluster.pod_count() < 2 || namespaces.any(|ns| ns != first) {
        return None;
    }
    Some(format!(
        "pods of other namespaces (every pod is in namespace {first}: a namespace-scoped dump?)"
    ))
}

/// Nodes running no DaemonSet pod while most others run some: their pods are
/// likely missing from the dump.
fn daemon_set_gaps(cluster: &Cluster) -> Option<String> {
    let with: BTreeSet<&str> = cluster
        .pods()
        .filter(|p| {
            p.owner_references
                .iter()
                .any(|o| o.kind == "DaemonSet" && o.controller == Some(true))
        })
        .filter_map(|p| p.node_name.as_deref())
        .collect();
    let nodes = cluster.nodes();
    // Fewer than half the nodes: the DaemonSets may well select only those.
    if with.len() < 2 || with.len() * 2 < nodes.len() {
        return None;
    }
    let without: Vec<String> = nodes
        .iter()
        .map(|n| n.name())
        .filter(|n| !with.contains(n))
        .map(str::to_string)
        .collect();
    (!without.is_empty()).then(|| {
        format!(
            "pods of node{} {} (no DaemonSet pod there, while {} other nodes run some)",
            crate::format::plural(without.len()),
            crate::answer::some_nodes(&without),
            with.len()
        )
    })
}

/// The PVCs, PVs, StorageClasses and CSINodes the pod's volumes lead to.
fn volume_objects(cluster: &Cluster, pod: &Pod) -> Vec<String> {
    let mut out = Vec::new();
    let mut csi = false;
    for v in &pod.volumes {
        let claim = match (&v.persistent_volume_claim, &v.ephemeral) {
            (Some(c), _) => c.claim_name.clone(),
            (None, Some(_)) => format!("{}-{}", pod.name, v.name),
            _ => continue,
        };
        let Some(pvc) = cluster.pvc(&pod.namespace, &claim) else {
            out.push(format!("PersistentVolumeClaim {}/{claim}", pod.namespace));
            continue;
        };
        let spec = pvc.spec.as_ref();
        if let Some(pv) = spec
            .and_then(|s| s.volume_name.as_deref())
            .filter(|n| !n.is_empty())
        {
            match cluster.persistent_volumes.get(pv) {
                Some(p) => csi |= p.spec.as_ref().is_some_and(|s| s.csi.is_some()),
                None => out.push(format!("PersistentVolume {pv}")),
            }
        }
        if let Some(sc) = spec
            .and_then(|s| s.storage_class_name.as_deref())
            .filter(|n| !n.is_empty())
        {
            match cluster.storage_classes.get(sc) {
                Some(c) => csi |= !c.provisioner.starts_with("kubernetes.io/"),
                None => out.push(format!("StorageClass {sc}")),
            }
        }
    }
    if csi && cluster.csi_nodes.is_empty() && !cluster.nodes().is_empty() {
        out.push("CSINodes (none in the snapshot; NodeVolumeLimits reads them)".into());
    }
    out
}

/// The ResourceClaims, ResourceSlices and DeviceClasses a pod with claims needs.
fn dra_objects(cluster: &Cluster, pod: &Pod) -> Vec<String> {
    if pod.resource_claims.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for pc in &pod.resource_claims {
        // A template's claim is named in the pod's status once created (a claim not
        // created yet is not missing from the dump).
        let name = pc.resource_claim_name.clone().or_else(|| {
            pod.resource_claim_statuses
                .iter()
                .find(|s| s.name == pc.name)
                .and_then(|s| s.resource_claim_name.clone())
        });
        if let Some(n) = name
            && cluster.resource_claim(&pod.namespace, &n).is_none()
        {
            out.push(format!("ResourceClaim {}/{n}", pod.namespace));
        }
    }
    if cluster.resource_slices().is_empty() {
        out.push("ResourceSlices (none in the snapshot)".into());
    }
    if cluster.device_classes().is_empty() {
        out.push("DeviceClasses (none in the snapshot)".into());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedscope_engine::model::testing::{
        add_storage_objects, cluster, simple_node, simple_pod,
    };
    use serde_json::{Value, json};

    fn missing_for(c: &Cluster, key: &str) -> Vec<String> {
        completeness(c, c.pod(key).unwrap()).missing
    }

    fn in_namespace(mut p: Value, ns: &str) -> Value {
        p["metadata"]["namespace"] = json!(ns);
        p
    }

    fn daemon_pod(name: &str, node: &str) -> Value {
        let mut p = in_namespace(simple_pod(name, "10m", "10Mi", Some(node)), "kube-system");
        p["metadata"]["ownerReferences"] = json!([{"apiVersion": "apps/v1", "kind": "DaemonSet",
            "name": "proxy", "uid": "ds-1", "controller": true}]);
        p
    }

    /// A pod with a PVC whose PV and StorageClass are absent, another PVC absent,
    /// and a claim whose ResourceClaim is absent (no slices, no classes either).
    #[test]
    fn volume_and_dra_objects_a_pod_reads_are_named_when_missing() {
        let mut p = simple_pod("p", "1", "1Gi", None);
        p["spec"]["volumes"] = json!([
            {"name": "data", "persistentVolumeClaim": {"claimName": "data"}},
            {"name": "gone", "persistentVolumeClaim": {"claimName": "gone"}}
        ]);
        p["spec"]["resourceClaims"] = json!([{"name": "gpu", "resourceClaimName": "gpu-claim"}]);
        let other = in_namespace(simple_pod("q", "1", "1Gi", Some("n1")), "kube-system");
        let mut c = cluster(vec![simple_node("n1", "4", "8Gi")], vec![p, other]);
        add_storage_objects(
            &mut c,
            vec![
                json!({"kind": "PersistentVolumeClaim", "metadata": {"name": "data"},
                        "spec": {"volumeName": "pv-1", "storageClassName": "fast"}}),
            ],
        );
        assert_eq!(
            missing_for(&c, "default/p"),
            [
                "PersistentVolume pv-1",
                "StorageClass fast",
                "PersistentVolumeClaim default/gone",
                "ResourceClaim default/gpu-claim",
                "ResourceSlices (none in the snapshot)",
                "DeviceClasses (none in the snapshot)",
            ]
        );
    }

    /// DaemonSet pods on three of four nodes: the fourth's pods are likely missing.
    /// On one node of four, they may select only that one: nothing said.
    #[test]
    fn a_node_without_the_daemon_set_pods_most_nodes_run_is_named() {
        let nodes: Vec<Value> = ["n1", "n2", "n3", "n4"]
            .iter()
            .map(|n| simple_node(n, "4", "8Gi"))
            .collect();
        let pending = in_namespace(simple_pod("p", "1", "1Gi", None), "apps");
        let ds: Vec<Value> = ["n1", "n2", "n3"]
            .iter()
            .map(|n| daemon_pod(&format!("proxy-{n}"), n))
            .chain([pending.clone()])
            .collect();
        let c = cluster(nodes.clone(), ds);
        assert_eq!(
            missing_for(&c, "apps/p"),
            ["pods of node n4 (no DaemonSet pod there, while 3 other nodes run some)"]
        );
        let c = cluster(nodes, vec![daemon_pod("proxy-n1", "n1"), pending]);
        assert!(missing_for(&c, "apps/p").is_empty());
    }

    /// A gated pod recorded as SchedulingGated agrees with a gated replay; an old
    /// word that differs names its age as a cause.
    #[test]
    fn a_gated_record_agrees_with_a_gated_replay_and_an_old_word_says_its_age() {
        let mut p = simple_pod("p", "1", "1Gi", None);
        p["status"] = json!({"conditions": [{"type": "PodScheduled", "status": "False",
            "reason": "SchedulingGated", "message": "Scheduling is blocked due to non-empty scheduling gates",
            "lastTransitionTime": "2026-01-01T10:00:00Z"}]});
        let mut bound = in_namespace(simple_pod("q", "1", "1Gi", Some("n1")), "kube-system");
        bound["metadata"]["creationTimestamp"] = json!("2026-01-01T13:05:00Z");
        let c = cluster(vec![simple_node("n1", "4", "8Gi")], vec![p, bound]);
        let pod = c.pod("default/p").unwrap();
        assert!(!word_beside(&c, pod, None, true).unwrap().differs);
        let trace = Trace::empty(
            "default/p".into(),
            0,
            Outcome::Scheduled { node: "n1".into() },
        );
        let r = Recorded::of(&trace, &c).unwrap();
        let w = r.word.unwrap();
        assert!(w.word.differs);
        assert_eq!(w.age_secs, Some(3 * 3600 + 5 * 60));
        assert_eq!(
            w.causes,
            [
                "the word is 3h05m older than the snapshot's newest timestamp: the cluster may \
              have changed since"
            ]
        );
        assert_eq!(
            w.source(),
            "PodScheduled condition (SchedulingGated), said 3h05m before the snapshot's \
             newest timestamp"
        );
    }

    #[test]
    fn the_node_count_is_read_from_a_fit_error() {
        assert_eq!(
            counted_nodes("0/2 nodes are available: 2 Insufficient cpu."),
            Some(2)
        );
        assert_eq!(counted_nodes("running PreBind plugin"), None);
    }
}
