//! The writes the acting scheduler sends, shaped like kube-scheduler's: the binding
//! subresource, status patches (PodScheduled, nominatedNodeName, DisruptionTarget,
//! each condition with its `observedGeneration`), victim deletions, and
//! `events.k8s.io/v1` Events recorded as client-go's event broadcaster records them
//! (a repeat turns the Event into a series; the count is written on the first repeat
//! and again when the series ends or is refreshed).

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::core::v1 as core;
use k8s_openapi::api::events::v1 as events;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use k8s_openapi::jiff::Timestamp;
use kube::Client;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams, Preconditions};
use serde_json::{Value, json};

use super::{ActOptions, elapsed, micro};
use crate::model::Pod;

/// Which pod a write is about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodRef {
    pub namespace: String,
    pub name: String,
    pub uid: String,
    /// `metadata.generation` (0: unknown, and no `observedGeneration` is written).
    pub generation: i64,
}

impl PodRef {
    pub fn of(p: &Pod) -> Self {
        PodRef {
            namespace: p.namespace.to_string(),
            name: p.name.clone(),
            uid: p.uid.clone(),
            generation: p.generation,
        }
    }
    /// A pod known by key only.
    pub fn named(key: &str) -> Self {
        let (ns, name) = key.split_once('/').unwrap_or(("", key));
        PodRef {
            namespace: ns.into(),
            name: name.into(),
            uid: String::new(),
            generation: 0,
        }
    }
    /// The Event's `regarding` / `related` reference.
    fn reference(&self) -> core::ObjectReference {
        core::ObjectReference {
            api_version: Some("v1".into()),
            kind: Some("Pod".into()),
            namespace: Some(self.namespace.clone()),
            name: Some(self.name.clone()),
            uid: (!self.uid.is_empty()).then(|| self.uid.clone()),
            ..Default::default()
        }
    }
    pub fn key(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }
}

/// What DynamicResources' PreBind writes for one of the pod's claims before the
/// binding, as kube-scheduler's `bindClaim` does: a claim allocated in this cycle
/// first gets the delete-protection finalizer, then its status gets the allocation;
/// every claim gets the pod in `reservedFor`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClaimWrite {
    pub namespace: String,
    pub name: String,
    /// The claim's version as last seen: a claim changed meanwhile is not written
    /// over (the binding then fails and the pod is retried, as upstream).
    pub resource_version: Option<String>,
    /// The finalizers to set, when the claim is allocated now.
    pub finalizers: Option<Vec<String>>,
    /// `status.allocation` and `status.reservedFor`, whole.
    pub status: Value,
}

/// The finalizer that keeps an allocated claim from being deleted while in use.
pub const CLAIM_FINALIZER: &str = "resource.kubernetes.io/delete-protection";

/// One write the acting scheduler owes the API server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Write {
    /// PreBind's claim writes, then the binding; a failed claim write stops it.
    Bind {
        pod: PodRef,
        node: String,
        claims: Vec<ClaimWrite>,
    },
    /// A failed attempt: `PodScheduled=False` (and the nominated node, after
    /// preemption) plus a `FailedScheduling` Event.
    Unschedulable {
        pod: PodRef,
        message: String,
        nominated_node: Option<String>,
    },
    /// A preemption victim: `DisruptionTarget` condition, deletion, `Preempted` Event.
    Evict {
        victim: PodRef,
        by: PodRef,
        node: String,
        scheduler_name: String,
    },
    /// A lower-priority pod's nomination on a node a preemptor took.
    ClearNomination { pod: PodRef },
}

impl Write {
    pub fn pod(&self) -> &PodRef {
        match self {
            Write::Bind { pod, .. }
            | Write::Unschedulable { pod, .. }
            | Write::ClearNomination { pod } => pod,
            Write::Evict { victim, .. } => victim,
        }
    }
}

/// One line for the log.
pub fn describe(w: &Write) -> String {
    match w {
        Write::Bind { pod, node, claims } if claims.is_empty() => {
            format!("bound {} to {node}", pod.key())
        }
        Write::Bind { pod, node, claims } => {
            let names: Vec<&str> = claims.iter().map(|c| c.name.as_str()).collect();
            format!(
                "bound {} to {node} (claims {} allocated and reserved)",
                pod.key(),
                names.join(", ")
            )
        }
        Write::Unschedulable {
            pod,
            message,
            nominated_node,
        } => {
            let nom = nominated_node
                .as_ref()
                .map(|n| format!(" (nominated to {n})"))
                .unwrap_or_default();
            format!("{} unschedulable{nom}: {message}", pod.key())
        }
        Write::Evict {
            victim, by, node, ..
        } => format!("preempted {} on {node} for {}", victim.key(), by.key()),
        Write::ClearNomination { pod } => format!("cleared the nomination of {}", pod.key()),
    }
}

/// An Event's note is cut to the API's limit, as the scheduler cuts its messages.
const NOTE_LENGTH_LIMIT: usize = 1024;
/// A series not repeated for this long is finished: its count written a last time
/// and forgotten (a singleton is just forgotten), as client-go's broadcaster does.
const FINISH_SERIES_AFTER: Duration = Duration::from_secs(6 * 60);
/// Ongoing series have their count written this often.
const REFRESH_SERIES_EVERY: Duration = Duration::from_secs(30 * 60);

/// `message` within the note limit, cut with ` ...` as kube-scheduler cuts it.
fn truncate_note(message: &str) -> String {
    if message.len() <= NOTE_LENGTH_LIMIT {
        return message.to_string();
    }
    const SUFFIX: &str = " ...";
    let mut cut = NOTE_LENGTH_LIMIT - SUFFIX.len();
    while !message.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}{SUFFIX}", &message[..cut])
}

/// What makes two Events one series: client-go's key (type, action, reason,
/// reporting controller and instance, regarding, related). `regarding` there
/// includes the pod's resourceVersion, which changes when a new failure message is
/// written to its PodScheduled condition; the note stands in for it here.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct EventKey {
    type_: &'static str,
    action: &'static str,
    reason: &'static str,
    regarding: (String, String, String),
    related: Option<(String, String, String)>,
    note: String,
}

/// One Event as recorded, for counting its repeats.
#[derive(Clone, Debug)]
struct Recorded {
    event: events::Event,
    /// The series count the API server has seen last.
    written_count: i32,
}

/// Sends writes; remembers Events so a repeated failure becomes a series on one
/// Event instead of another object.
pub struct Writer {
    client: Client,
    opts: ActOptions,
    events: BTreeMap<EventKey, Recorded>,
    refreshed: Option<Timestamp>,
    /// Events that could not be recorded since last asked: an Event is a record of
    /// a write, and its failure does not undo the write.
    failed_events: Vec<String>,
}

fn pod_key(p: &PodRef) -> (String, String, String) {
    (p.namespace.clone(), p.name.clone(), p.uid.clone())
}

/// A condition patch entry, with `observedGeneration` when the generation is known.
fn condition(
    pod: &PodRef,
    type_: &str,
    status: &str,
    reason: &str,
    message: &str,
    now: Timestamp,
) -> Value {
    let mut c = json!({
        "type": type_,
        "status": status,
        "reason": reason,
        "message": message,
        "lastTransitionTime": Time(now),
    });
    if pod.generation > 0 {
        c["observedGeneration"] = json!(pod.generation);
    }
    c
}

impl Writer {
    pub fn new(client: Client, opts: ActOptions) -> Self {
        Writer {
            client,
            opts,
            events: BTreeMap::new(),
            refreshed: None,
            failed_events: Vec::new(),
        }
    }

    /// Send one write; `now` stamps conditions and events.
    pub async fn perform(&mut self, w: &Write, now: Timestamp) -> Result<(), kube::Error> {
        match w {
            Write::Bind { pod, node, claims } => {
                for c in claims {
                    self.write_claim(c).await?;
                }
                let api: Api<core::Pod> = Api::namespaced(self.client.clone(), &pod.namespace);
                let binding = core::Binding {
                    metadata: ObjectMeta {
                        name: Some(pod.name.clone()),
                        namespace: Some(pod.namespace.clone()),
                        uid: Some(pod.uid.clone()),
                        ..Default::default()
                    },
                    target: core::ObjectReference {
                        kind: Some("Node".into()),
                        name: Some(node.clone()),
                        ..Default::default()
                    },
                };
                let _: Value = api
                    .create_subresource("binding", &pod.name, &PostParams::default(), &binding)
                    .await?;
                let note = format!(
                    "Successfully assigned {}/{} to {node}",
                    pod.namespace, pod.name
                );
                self.event(pod, None, "Normal", "Scheduled", "Binding", &note, now)
                    .await
            }
            Write::Unschedulable {
                pod,
                message,
                nominated_node,
            } => {
                let mut cond =
                    condition(pod, "PodScheduled", "False", "Unschedulable", message, now);
                cond["lastProbeTime"] = Value::Null;
                let mut status = json!({ "conditions": [cond] });
                if let Some(n) = nominated_node {
                    status["nominatedNodeName"] = json!(n);
                }
                self.patch_status(pod, json!({ "status": status })).await?;
                let note = truncate_note(message);
                self.event(
                    pod,
                    None,
                    "Warning",
                    "FailedScheduling",
                    "Scheduling",
                    &note,
                    now,
                )
                .await
            }
            Write::Evict {
                victim,
                by,
                node,
                scheduler_name,
            } => {
                let message =
                    format!("{scheduler_name}: preempting to accommodate a higher priority pod");
                let cond = condition(
                    victim,
                    "DisruptionTarget",
                    "True",
                    "PreemptionByScheduler",
                    &message,
                    now,
                );
                self.patch_status(victim, json!({"status": {"conditions": [cond]}}))
                    .await?;
                let api: Api<core::Pod> = Api::namespaced(self.client.clone(), &victim.namespace);
                let dp = DeleteParams {
                    preconditions: (!victim.uid.is_empty()).then(|| Preconditions {
                        uid: Some(victim.uid.clone()),
                        resource_version: None,
                    }),
                    ..Default::default()
                };
                api.delete(&victim.name, &dp).await?;
                let note = format!("Preempted by pod {} on node {node}", by.uid);
                self.event(
                    victim,
                    Some(by),
                    "Normal",
                    "Preempted",
                    "Preempting",
                    &note,
                    now,
                )
                .await
            }
            Write::ClearNomination { pod } => {
                self.patch_status(pod, json!({"status": {"nominatedNodeName": null}}))
                    .await
            }
        }
    }

    /// One claim's PreBind write: the finalizer (for a new allocation), then status.
    async fn write_claim(&self, c: &ClaimWrite) -> Result<(), kube::Error> {
        use k8s_openapi::api::resource::v1::ResourceClaim;
        let api: Api<ResourceClaim> = Api::namespaced(self.client.clone(), &c.namespace);
        let mut version = c.resource_version.clone();
        if let Some(finalizers) = &c.finalizers {
            let patch = json!({"metadata": {"finalizers": finalizers, "resourceVersion": version}});
            let updated = api
                .patch(&c.name, &PatchParams::default(), &Patch::Merge(&patch))
                .await?;
            version = updated.metadata.resource_version;
        }
        let patch = json!({"metadata": {"resourceVersion": version}, "status": c.status});
        api.patch_status(&c.name, &PatchParams::default(), &Patch::Merge(&patch))
            .await?;
        Ok(())
    }

    async fn patch_status(&self, pod: &PodRef, patch: Value) -> Result<(), kube::Error> {
        let api: Api<core::Pod> = Api::namespaced(self.client.clone(), &pod.namespace);
        api.patch_status(&pod.name, &PatchParams::default(), &Patch::Strategic(patch))
            .await?;
        Ok(())
    }

    /// Events that failed to be recorded since the last call, one line each.
    pub fn take_failed_events(&mut self) -> Vec<String> {
        std::mem::take(&mut self.failed_events)
    }

    /// [`Writer::record`], a failure kept for [`Writer::take_failed_events`].
    #[allow(clippy::too_many_arguments)]
    async fn event(
        &mut self,
        regarding: &PodRef,
        related: Option<&PodRef>,
        type_: &'static str,
        reason: &'static str,
        action: &'static str,
        note: &str,
        now: Timestamp,
    ) -> Result<(), kube::Error> {
        if let Err(e) = self
            .record(regarding, related, type_, reason, action, note, now)
            .await
        {
            self.failed_events.push(format!(
                "recording the {reason} Event of {} failed: {}",
                regarding.key(),
                super::api_error_text(&e)
            ));
        }
        Ok(())
    }

    /// Record an Event. A repeat of one already recorded becomes a series on it: the
    /// first repeat writes `series` (count 2); later ones only count here, and
    /// [`Writer::flush`] writes the count when the series ends or is refreshed.
    #[allow(clippy::too_many_arguments)]
    async fn record(
        &mut self,
        regarding: &PodRef,
        related: Option<&PodRef>,
        type_: &'static str,
        reason: &'static str,
        action: &'static str,
        note: &str,
        now: Timestamp,
    ) -> Result<(), kube::Error> {
        let key = EventKey {
            type_,
            action,
            reason,
            regarding: pod_key(regarding),
            related: related.map(pod_key),
            note: note.to_string(),
        };
        if let Some(rec) = self.events.get_mut(&key) {
            let first_repeat = rec.event.series.is_none();
            let series = rec.event.series.get_or_insert(events::EventSeries {
                count: 1,
                last_observed_time: micro(now),
            });
            series.count += 1;
            series.last_observed_time = micro(now);
            if !first_repeat {
                return Ok(());
            }
            let event = rec.event.clone();
            return self.write_series(&key, event).await;
        }
        let event = events::Event {
            metadata: ObjectMeta {
                name: Some(format!("{}.{:x}", regarding.name, now.as_nanosecond())),
                namespace: Some(regarding.namespace.clone()),
                ..Default::default()
            },
            event_time: Some(micro(now)),
            regarding: Some(regarding.reference()),
            related: related.map(PodRef::reference),
            note: Some(note.to_string()),
            reason: Some(reason.into()),
            type_: Some(type_.into()),
            action: Some(action.into()),
            reporting_controller: Some(self.opts.scheduler_name.clone()),
            reporting_instance: Some(self.opts.reporting_instance.clone()),
            ..Default::default()
        };
        self.events.insert(
            key,
            Recorded {
                event: event.clone(),
                written_count: 1,
            },
        );
        self.api(&regarding.namespace)
            .create(&PostParams::default(), &event)
            .await?;
        Ok(())
    }

    fn api(&self, namespace: &str) -> Api<events::Event> {
        Api::namespaced(self.client.clone(), namespace)
    }

    /// Write a series' count: a patch of `series`, or the whole Event again when it
    /// has expired or been deleted meanwhile.
    async fn write_series(
        &mut self,
        key: &EventKey,
        event: events::Event,
    ) -> Result<(), kube::Error> {
        let Some(series) = &event.series else {
            return Ok(());
        };
        let namespace = event.metadata.namespace.clone().unwrap_or_default();
        let name = event.metadata.name.clone().unwrap_or_default();
        let patch = json!({ "series": series });
        let count = series.count;
        let api = self.api(&namespace);
        match api
            .patch(&name, &PatchParams::default(), &Patch::Strategic(patch))
            .await
        {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.code == 404 => {
                api.create(&PostParams::default(), &event).await?;
            }
            Err(e) => return Err(e),
        }
        if let Some(rec) = self.events.get_mut(key) {
            rec.written_count = count;
        }
        Ok(())
    }

    /// The broadcaster's housekeeping, due at `now`: a series quiet for six minutes
    /// gets its final count written and is forgotten, a singleton that old is
    /// forgotten; every thirty minutes the ongoing series' counts are written.
    /// Returns the writes that failed, for the log.
    pub async fn flush(&mut self, now: Timestamp) -> Vec<kube::Error> {
        // The refresh period counts from the first housekeeping.
        let refresh = self
            .refreshed
            .is_some_and(|t| elapsed(t, now) >= REFRESH_SERIES_EVERY);
        if self.refreshed.is_none() || refresh {
            self.refreshed = Some(now);
        }
        let mut due = Vec::new();
        let mut forget = Vec::new();
        for (key, rec) in &self.events {
            match &rec.event.series {
                Some(s) => {
                    let finished = elapsed(s.last_observed_time.0, now) >= FINISH_SERIES_AFTER;
                    if finished || (refresh && s.count != rec.written_count) {
                        due.push((key.clone(), rec.event.clone(), finished));
                    }
                }
                None => {
                    let at = rec.event.event_time.as_ref().map_or(now, |t| t.0);
                    if elapsed(at, now) >= FINISH_SERIES_AFTER {
                        forget.push(key.clone());
                    }
                }
            }
        }
        let mut failed = Vec::new();
        for (key, event, finished) in due {
            let unchanged = self
                .events
                .get(&key)
                .is_some_and(|r| r.event.series.as_ref().map(|s| s.count) == Some(r.written_count));
            let r = if unchanged {
                Ok(())
            } else {
                self.write_series(&key, event).await
            };
            match r {
                Ok(()) if finished => forget.push(key),
                Ok(()) => {}
                Err(e) => failed.push(e),
            }
        }
        for key in forget {
            self.events.remove(&key);
        }
        failed
    }
}
