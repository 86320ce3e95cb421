//! How each watched kind enters the model: the same conversion and defaulting as
//! snapshots, one [`Watched`] implementation per kind.

use std::fmt::Debug;

use k8s_openapi::api::apps::v1 as apps;
use k8s_openapi::api::core::v1 as core;
use k8s_openapi::api::policy::v1 as policy;
use k8s_openapi::api::resource::v1 as resource;
use k8s_openapi::api::scheduling::v1 as scheduling;
use k8s_openapi::api::storage::v1 as storage;
use kube::{Resource, ResourceExt};
use serde::de::DeserializeOwned;

use super::state::LiveState;
use crate::model::dra;
use crate::source::SchedulingEvent;
use crate::source::convert::{self, Priorities};
use crate::source::lean_pod::LeanPod;

/// A kind the engine reads, and how it enters the model.
pub(super) trait Watched:
    Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static
{
    const KIND: &'static str;
    fn model_key(&self) -> String {
        match self.namespace() {
            Some(ns) => format!("{ns}/{}", self.name_any()),
            None => self.name_any(),
        }
    }
    /// Keys of this kind in the model (for the diff at the end of a relist).
    fn keys(st: &LiveState) -> Vec<String>;
    fn upsert(self, st: &mut LiveState);
    fn remove(key: &str, st: &mut LiveState);
}

macro_rules! map_kind {
    ($ty:ty, $kind:literal, $field:ident $(, $fix:path)?) => {
        impl Watched for $ty {
            const KIND: &'static str = $kind;
            fn keys(st: &LiveState) -> Vec<String> {
                st.cluster.$field.keys().cloned().collect()
            }
            #[allow(unused_mut)]
            fn upsert(mut self, st: &mut LiveState) {
                self.metadata.managed_fields = None;
                $($fix(&mut self);)?
                let key = self.model_key();
                st.cluster.$field.insert(key, self);
            }
            fn remove(key: &str, st: &mut LiveState) {
                st.cluster.$field.remove(key);
            }
        }
    };
}

map_kind!(
    core::PersistentVolume,
    "PersistentVolume",
    persistent_volumes
);
map_kind!(
    core::PersistentVolumeClaim,
    "PersistentVolumeClaim",
    persistent_volume_claims
);
map_kind!(
    storage::StorageClass,
    "StorageClass",
    storage_classes,
    convert::storage_class_defaults
);
map_kind!(storage::CSINode, "CSINode", csi_nodes);
map_kind!(storage::CSIDriver, "CSIDriver", csi_drivers);
map_kind!(
    storage::CSIStorageCapacity,
    "CSIStorageCapacity",
    csi_storage_capacities
);
map_kind!(
    storage::VolumeAttachment,
    "VolumeAttachment",
    volume_attachments
);
map_kind!(
    core::Namespace,
    "Namespace",
    namespaces,
    convert::namespace_defaults
);
map_kind!(
    policy::PodDisruptionBudget,
    "PodDisruptionBudget",
    pod_disruption_budgets
);
map_kind!(
    scheduling::PriorityClass,
    "PriorityClass",
    priority_classes,
    convert::priority_class_defaults
);
map_kind!(core::Service, "Service", services);
map_kind!(apps::ReplicaSet, "ReplicaSet", replica_sets);
map_kind!(apps::StatefulSet, "StatefulSet", stateful_sets);
map_kind!(
    core::ReplicationController,
    "ReplicationController",
    replication_controllers
);

/// The DRA kinds: optional (a cluster without `resource.k8s.io/v1`, or RBAC
/// without it), and unlike the other optional kinds a 404 is unreadable too: the
/// claims of a pod exist whatever the API server serves, so without these objects
/// DynamicResources cannot be replayed.
pub(super) const DRA_KINDS: [&str; 4] = [
    "DeviceClass",
    "ResourceSlice",
    "ResourceClaim",
    "ResourceClaimTemplate",
];

/// A DRA kind entering the model as the snapshot loader takes it: defaulted and
/// checked; an object the allocator could not read is left out (the old version
/// too) rather than stopping the watch.
macro_rules! dra_kind {
    ($ty:ty, $kind:literal, $field:ident, $field_mut:ident, $fix:expr) => {
        impl Watched for $ty {
            const KIND: &'static str = $kind;
            fn keys(st: &LiveState) -> Vec<String> {
                st.cluster.$field().keys().cloned().collect()
            }
            fn upsert(mut self, st: &mut LiveState) {
                self.metadata.managed_fields = None;
                let key = self.model_key();
                let fix: fn(&mut $ty) -> Result<(), crate::model::pod::FieldError> = $fix;
                match fix(&mut self) {
                    // `into`: the slices are kept behind an Arc, the other kinds as they are.
                    Ok(()) => st.cluster.$field_mut().insert(key, self.into()),
                    Err(_) => st.cluster.$field_mut().remove(&key),
                };
            }
            fn remove(key: &str, st: &mut LiveState) {
                st.cluster.$field_mut().remove(key);
            }
        }
    };
}

dra_kind!(
    resource::DeviceClass,
    "DeviceClass",
    device_classes,
    device_classes_mut,
    |c| {
        dra::device_class_defaults(c);
        Ok(())
    }
);
dra_kind!(
    resource::ResourceSlice,
    "ResourceSlice",
    resource_slices,
    resource_slices_mut,
    dra::resource_slice_check
);
dra_kind!(
    resource::ResourceClaim,
    "ResourceClaim",
    resource_claims,
    resource_claims_mut,
    dra::resource_claim_check
);
dra_kind!(
    resource::ResourceClaimTemplate,
    "ResourceClaimTemplate",
    resource_claim_templates,
    resource_claim_templates_mut,
    dra::resource_claim_template_check
);

impl Watched for core::Node {
    const KIND: &'static str = "Node";
    fn keys(st: &LiveState) -> Vec<String> {
        st.cluster
            .nodes()
            .iter()
            .map(|n| n.name().to_string())
            .collect()
    }
    fn upsert(self, st: &mut LiveState) {
        // A node the model cannot read (a malformed quantity) is left out rather than
        // stopping the watch; the old version, if any, goes too.
        match crate::model::Node::from_k8s(&self) {
            Ok(n) => st.cluster.upsert_node(n),
            Err(_) => {
                st.cluster.delete_node(&self.name_any());
            }
        }
    }
    fn remove(key: &str, st: &mut LiveState) {
        st.cluster.delete_node(key);
    }
}

/// Pods are watched with the scheduler's fields only (see [`LeanPod`]).
impl Watched for LeanPod {
    const KIND: &'static str = "Pod";
    fn keys(st: &LiveState) -> Vec<String> {
        st.cluster.pods().map(|p| p.key()).collect()
    }
    fn upsert(self, st: &mut LiveState) {
        let key = self.model_key();
        // The API server ran priority and RuntimeClass admission already; admitting
        // again keeps its values (they are explicit) and fills a class's policy.
        let converted = convert::convert_pod(&self.0);
        match converted {
            Ok(Some(mut c)) => {
                let priorities = Priorities::new(&st.cluster.priority_classes);
                let admitted = priorities
                    .admit(&mut c.pod, c.explicit_priority, c.explicit_policy)
                    .is_ok();
                // Without `spec.priority` the value depends on classes that may
                // arrive later (a globalDefault too), as the snapshot loader admits
                // only once every class is read.
                if admitted && c.explicit_priority {
                    st.unadmitted.remove(&key);
                } else {
                    st.unadmitted.insert(key, self);
                }
                st.cluster.upsert_pod(c.pod);
            }
            // Terminal (the scheduler ignores it) or unreadable.
            Ok(None) | Err(_) => {
                st.unadmitted.remove(&key);
                st.cluster.delete_pod(&key);
            }
        }
    }
    fn remove(key: &str, st: &mut LiveState) {
        st.unadmitted.remove(key);
        st.cluster.delete_pod(key);
    }
}

impl Watched for core::Event {
    const KIND: &'static str = "Event";
    fn keys(st: &LiveState) -> Vec<String> {
        st.event_pods.keys().cloned().collect()
    }
    fn upsert(self, st: &mut LiveState) {
        let obj = &self.involved_object;
        if obj.kind.as_deref() != Some("Pod") || self.reason.as_deref() != Some("FailedScheduling")
        {
            return;
        }
        let pod = format!(
            "{}/{}",
            obj.namespace.as_deref().unwrap_or("default"),
            obj.name.as_deref().unwrap_or_default()
        );
        let last_seen = self
            .series
            .as_ref()
            .and_then(|s| s.last_observed_time.as_ref().map(|t| t.0))
            .or(self.last_timestamp.as_ref().map(|t| t.0))
            .or(self.event_time.as_ref().map(|t| t.0))
            .or(self.metadata.creation_timestamp.as_ref().map(|t| t.0));
        let ev = SchedulingEvent {
            message: self.message.clone().unwrap_or_default(),
            count: self
                .series
                .as_ref()
                .and_then(|s| s.count)
                .or(self.count)
                .unwrap_or(1),
            last_seen,
            uid: obj.uid.clone().unwrap_or_default(),
        };
        // Keep the latest event per pod.
        let newer = st
            .events
            .get(&pod)
            .is_none_or(|old| old.last_seen <= ev.last_seen);
        st.event_pods.insert(self.model_key(), pod.clone());
        if newer {
            st.events.insert(pod, ev);
        }
    }
    fn remove(key: &str, st: &mut LiveState) {
        if let Some(pod) = st.event_pods.remove(key)
            && !st.event_pods.values().any(|p| *p == pod)
        {
            st.events.remove(&pod);
        }
    }
}
