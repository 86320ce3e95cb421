//! The writes the acting scheduler sends, shaped like kube-scheduler's: the binding
//! subresource, status patches (PodScheduled, nominatedNodeName, DisruptionTarget),
//! victim deletions, and core/v1 Events, with repeats of one message counted on a
//! single Event as client-go's event correlator does.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1 as core;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use k8s_openapi::jiff::Timestamp;
use kube::Client;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams, Preconditions};
use serde_json::{Value, json};

use super::{ActOptions, micro};
use crate::model::Pod;

/// Which pod a write is about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodRef {
    pub namespace: String,
    pub name: String,
    pub uid: String,
}

impl PodRef {
    pub fn of(p: &Pod) -> Self {
        PodRef {
            namespace: p.namespace.clone(),
            name: p.name.clone(),
            uid: p.uid.clone(),
        }
    }
    /// A pod known by key only.
    pub fn named(key: &str) -> Self {
        let (ns, name) = key.split_once('/').unwrap_or(("", key));
        PodRef {
            namespace: ns.into(),
            name: name.into(),
            uid: String::new(),
        }
    }
    pub fn key(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }
}

/// One write the acting scheduler owes the API server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Write {
    Bind {
        pod: PodRef,
        node: String,
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
    ClearNomination {
        pod: PodRef,
    },
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
        Write::Bind { pod, node } => format!("bound {} to {node}", pod.key()),
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

/// Events remembered for counting repeats (client-go's correlator keeps 4096).
const MAX_REMEMBERED_EVENTS: usize = 4096;

/// An Event already sent, for counting repeats.
#[derive(Clone, Debug)]
struct Sent {
    name: String,
    count: i32,
}

/// Sends writes; remembers Events so a repeated failure bumps a count instead of
/// creating another object.
pub struct Writer {
    client: Client,
    opts: ActOptions,
    /// (pod uid, reason, message) → the Event recording it.
    events: BTreeMap<(String, String, String), Sent>,
}

impl Writer {
    pub fn new(client: Client, opts: ActOptions) -> Self {
        Writer {
            client,
            opts,
            events: BTreeMap::new(),
        }
    }

    /// Send one write; `now` stamps conditions and events.
    pub async fn perform(&mut self, w: &Write, now: Timestamp) -> Result<(), kube::Error> {
        match w {
            Write::Bind { pod, node } => {
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
                // Its failures are history now.
                self.events.retain(|(uid, _, _), _| uid != &pod.uid);
                Ok(())
            }
            Write::Unschedulable {
                pod,
                message,
                nominated_node,
            } => {
                let mut status = json!({"conditions": [{
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": "Unschedulable",
                    "message": message,
                    "lastProbeTime": null,
                    "lastTransitionTime": Time(now),
                }]});
                if let Some(n) = nominated_node {
                    status["nominatedNodeName"] = json!(n);
                }
                self.patch_status(pod, json!({ "status": status })).await?;
                self.event(
                    pod,
                    "Warning",
                    "FailedScheduling",
                    "Scheduling",
                    message,
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
                let condition = json!({"status": {"conditions": [{
                    "type": "DisruptionTarget",
                    "status": "True",
                    "reason": "PreemptionByScheduler",
                    "message": format!("{scheduler_name}: preempting to accommodate a higher priority pod"),
                    "lastTransitionTime": Time(now),
                }]}});
                self.patch_status(victim, condition).await?;
                let api: Api<core::Pod> = Api::namespaced(self.client.clone(), &victim.namespace);
                let dp = DeleteParams {
                    preconditions: (!victim.uid.is_empty()).then(|| Preconditions {
                        uid: Some(victim.uid.clone()),
                        resource_version: None,
                    }),
                    ..Default::default()
                };
                api.delete(&victim.name, &dp).await?;
                let message = format!("Preempted by pod {} on node {node}", by.uid);
                self.event(victim, "Normal", "Preempted", "Preempting", &message, now)
                    .await
            }
            Write::ClearNomination { pod } => {
                self.patch_status(pod, json!({"status": {"nominatedNodeName": null}}))
                    .await
            }
        }
    }

    async fn patch_status(&self, pod: &PodRef, patch: Value) -> Result<(), kube::Error> {
        let api: Api<core::Pod> = Api::namespaced(self.client.clone(), &pod.namespace);
        api.patch_status(&pod.name, &PatchParams::default(), &Patch::Strategic(patch))
            .await?;
        Ok(())
    }

    /// Create the Event, or count a repeat of the same reason and message on the
    /// one already sent (count and lastTimestamp).
    async fn event(
        &mut self,
        pod: &PodRef,
        type_: &str,
        reason: &str,
        action: &str,
        message: &str,
        now: Timestamp,
    ) -> Result<(), kube::Error> {
        let api: Api<core::Event> = Api::namespaced(self.client.clone(), &pod.namespace);
        let key = (pod.uid.clone(), reason.to_string(), message.to_string());
        if let Some(sent) = self.events.get_mut(&key) {
            let patch = json!({"count": sent.count + 1, "lastTimestamp": Time(now)});
            match api
                .patch(&sent.name, &PatchParams::default(), &Patch::Merge(patch))
                .await
            {
                Ok(_) => {
                    sent.count += 1;
                    return Ok(());
                }
                // Expired or deleted meanwhile: record it afresh.
                Err(kube::Error::Api(s)) if s.code == 404 => {
                    self.events.remove(&key);
                }
                Err(e) => return Err(e),
            }
        }
        let name = format!("{}.{:x}", pod.name, now.as_nanosecond());
        let event = core::Event {
            metadata: ObjectMeta {
                name: Some(name.clone()),
                namespace: Some(pod.namespace.clone()),
                ..Default::default()
            },
            involved_object: core::ObjectReference {
                api_version: Some("v1".into()),
                kind: Some("Pod".into()),
                namespace: Some(pod.namespace.clone()),
                name: Some(pod.name.clone()),
                uid: Some(pod.uid.clone()),
                ..Default::default()
            },
            reason: Some(reason.into()),
            message: Some(message.into()),
            type_: Some(type_.into()),
            action: Some(action.into()),
            reporting_component: Some("schedscope".into()),
            reporting_instance: Some(self.opts.identity.clone()),
            source: Some(core::EventSource {
                component: Some(self.opts.scheduler_name.clone()),
                host: None,
            }),
            event_time: Some(micro(now)),
            first_timestamp: Some(Time(now)),
            last_timestamp: Some(Time(now)),
            count: Some(1),
            ..Default::default()
        };
        api.create(&PostParams::default(), &event).await?;
        // Pods that never bind would keep their records for ever: past a bound, start
        // over (a repeat then creates a new Event, as after client-go's cache expiry).
        if self.events.len() >= MAX_REMEMBERED_EVENTS {
            self.events.clear();
        }
        self.events.insert(key, Sent { name, count: 1 });
        Ok(())
    }
}
