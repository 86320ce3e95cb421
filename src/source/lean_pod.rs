//! A Pod decoded with only the fields kube-scheduler reads.
//!
//! Pods are nine tenths of a cluster's bytes, and most of each pod is what the
//! scheduler never looks at: probes, environment, volume mounts, container statuses'
//! states, managed fields, annotations, projected service-account volumes. Decoding
//! them into `k8s_openapi` types allocates every string only to drop it. [`LeanPod`]
//! walks the same JSON/YAML shape, skips those subtrees without building values, and
//! fills a [`core::Pod`] with the rest, so the conversion into the model
//! ([`crate::model::Pod::from_k8s`]) is unchanged. Both the snapshot loader and the
//! live pod watcher decode through it.
//!
//! What is kept matches the redaction allowlist (`redact.rs`): the fields a plugin,
//! the queue or the model reads. Decoding follows `k8s_openapi`'s leniency: every
//! field may be missing or `null`, and a present field of the wrong type is an error
//! at its path.

use std::borrow::Cow;
use std::collections::BTreeMap;

use k8s_openapi::api::core::v1 as core;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference, Time};
use serde::de::{self, IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};

/// A pod with the scheduler's fields only; the rest are left at their defaults.
/// Boxed: `core::Pod` is large even when sparse, and lists of them are moved around
/// (a live list page is a `Vec` of these).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LeanPod(pub Box<core::Pod>);

impl<'de> Deserialize<'de> for LeanPod {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let w = WirePod::deserialize(d)?;
        Ok(LeanPod(Box::new(core::Pod {
            metadata: w.metadata.map(WireMeta::into_meta).unwrap_or_default(),
            spec: w.spec.map(WireSpec::into_spec),
            status: w.status.map(WireStatus::into_status),
        })))
    }
}

/// The live watcher lists and watches pods as [`LeanPod`]s: the same API resource.
impl kube::Resource for LeanPod {
    type DynamicType = ();
    type Scope = kube::core::NamespaceResourceScope;

    fn kind(_: &()) -> Cow<'_, str> {
        Cow::Borrowed("Pod")
    }
    fn group(_: &()) -> Cow<'_, str> {
        Cow::Borrowed("")
    }
    fn version(_: &()) -> Cow<'_, str> {
        Cow::Borrowed("v1")
    }
    fn plural(_: &()) -> Cow<'_, str> {
        Cow::Borrowed("pods")
    }
    fn meta(&self) -> &ObjectMeta {
        &self.0.metadata
    }
    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.0.metadata
    }
}

// Unknown fields (everything not named here) are skipped by serde's derive without
// building values; `apiVersion` and `kind` were checked before the body is decoded.

#[derive(Deserialize)]
struct WirePod {
    metadata: Option<WireMeta>,
    spec: Option<WireSpec>,
    status: Option<WireStatus>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireMeta {
    name: Option<String>,
    namespace: Option<String>,
    uid: Option<String>,
    /// The live watcher resumes from the last object's version.
    resource_version: Option<String>,
    generation: Option<i64>,
    labels: Option<BTreeMap<String, String>>,
    owner_references: Option<Vec<OwnerReference>>,
    creation_timestamp: Option<Time>,
    deletion_timestamp: Option<Time>,
}

impl WireMeta {
    fn into_meta(self) -> ObjectMeta {
        ObjectMeta {
            name: self.name,
            namespace: self.namespace,
            uid: self.uid,
            resource_version: self.resource_version,
            generation: self.generation,
            labels: self.labels,
            owner_references: self.owner_references,
            creation_timestamp: self.creation_timestamp,
            deletion_timestamp: self.deletion_timestamp,
            ..ObjectMeta::default()
        }
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireSpec {
    node_name: Option<String>,
    scheduler_name: Option<String>,
    priority_class_name: Option<String>,
    priority: Option<i32>,
    preemption_policy: Option<String>,
    runtime_class_name: Option<String>,
    overhead: Option<BTreeMap<String, Quantity>>,
    host_network: Option<bool>,
    node_selector: Option<BTreeMap<String, String>>,
    affinity: Option<core::Affinity>,
    tolerations: Option<Vec<core::Toleration>>,
    topology_spread_constraints: Option<Vec<core::TopologySpreadConstraint>>,
    scheduling_gates: Option<Vec<core::PodSchedulingGate>>,
    readiness_gates: Option<Vec<core::PodReadinessGate>>,
    resource_claims: Option<Vec<core::PodResourceClaim>>,
    /// Pod-level resources.
    resources: Option<core::ResourceRequirements>,
    containers: Option<Vec<WireContainer>>,
    init_containers: Option<Vec<WireContainer>>,
    volumes: Option<Vec<WireVolume>>,
}

impl WireSpec {
    fn into_spec(self) -> core::PodSpec {
        let containers = |list: Option<Vec<WireContainer>>| {
            list.map(|l| l.into_iter().map(WireContainer::into_container).collect())
        };
        core::PodSpec {
            node_name: self.node_name,
            scheduler_name: self.scheduler_name,
            priority_class_name: self.priority_class_name,
            priority: self.priority,
            preemption_policy: self.preemption_policy,
            runtime_class_name: self.runtime_class_name,
            overhead: self.overhead,
            host_network: self.host_network,
            node_selector: self.node_selector,
            affinity: self.affinity,
            tolerations: self.tolerations,
            topology_spread_constraints: self.topology_spread_constraints,
            scheduling_gates: self.scheduling_gates,
            readiness_gates: self.readiness_gates,
            resource_claims: self.resource_claims,
            resources: self.resources,
            containers: containers(self.containers).unwrap_or_default(),
            init_containers: containers(self.init_containers),
            volumes: self
                .volumes
                .map(|v| v.into_iter().filter_map(|v| v.0).collect()),
            ..core::PodSpec::default()
        }
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireContainer {
    name: Option<String>,
    image: Option<String>,
    ports: Option<Vec<core::ContainerPort>>,
    resources: Option<core::ResourceRequirements>,
    /// `Always` makes an init container a sidecar.
    restart_policy: Option<String>,
}

impl WireContainer {
    fn into_container(self) -> core::Container {
        core::Container {
            name: self.name.unwrap_or_default(),
            image: self.image,
            ports: self.ports,
            resources: self.resources,
            restart_policy: self.restart_policy,
            ..core::Container::default()
        }
    }
}

/// A volume, or `None` when its only source is one the kubelet alone reads
/// (projected service-account tokens, configMap, secret, downwardAPI, emptyDir):
/// nearly every pod has one, and no scheduler plugin looks at them. These are the
/// sources the model drops from a decoded volume (`scheduler_volume` in
/// `model/pod.rs`); skipping them here only saves building them.
struct WireVolume(Option<core::Volume>);

const KUBELET_ONLY_SOURCES: [&str; 5] = [
    "projected",
    "configMap",
    "secret",
    "downwardAPI",
    "emptyDir",
];

impl<'de> Deserialize<'de> for WireVolume {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = WireVolume;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("Volume")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<WireVolume, A::Error> {
                let mut name: Option<String> = None;
                // The other sources, kept as values and typed once at the end: they
                // are rare and small, and there are thirty kinds of them.
                let mut read = serde_json::Map::new();
                while let Some(key) = map.next_key::<String>()? {
                    if KUBELET_ONLY_SOURCES.contains(&key.as_str()) {
                        map.next_value::<IgnoredAny>()?;
                    } else if key == "name" {
                        name = map.next_value()?;
                    } else {
                        read.insert(key, map.next_value()?);
                    }
                }
                if read.is_empty() {
                    return Ok(WireVolume(None));
                }
                if let Some(n) = name {
                    read.insert("name".into(), serde_json::Value::String(n));
                }
                let value = serde_json::Value::Object(read);
                serde_path_to_error::deserialize::<_, core::Volume>(value)
                    .map(|v| WireVolume(Some(v)))
                    .map_err(|e| {
                        let path = e.path().to_string();
                        de::Error::custom(format!("{path}: {}", e.into_inner()))
                    })
            }
        }
        d.deserialize_map(V)
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireStatus {
    phase: Option<String>,
    nominated_node_name: Option<String>,
    start_time: Option<Time>,
    conditions: Option<Vec<WireCondition>>,
    container_statuses: Option<Vec<WireContainerStatus>>,
    init_container_statuses: Option<Vec<WireContainerStatus>>,
    resource_claim_statuses: Option<Vec<core::PodResourceClaimStatus>>,
}

impl WireStatus {
    fn into_status(self) -> core::PodStatus {
        let statuses = |list: Option<Vec<WireContainerStatus>>| {
            list.map(|l| {
                l.into_iter()
                    .map(WireContainerStatus::into_status)
                    .collect()
            })
        };
        core::PodStatus {
            phase: self.phase,
            nominated_node_name: self.nominated_node_name,
            start_time: self.start_time,
            conditions: self
                .conditions
                .map(|l| l.into_iter().map(WireCondition::into_condition).collect()),
            container_statuses: statuses(self.container_statuses),
            init_container_statuses: statuses(self.init_container_statuses),
            resource_claim_statuses: self.resource_claim_statuses,
            ..core::PodStatus::default()
        }
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireCondition {
    #[serde(rename = "type")]
    type_: Option<String>,
    status: Option<String>,
    reason: Option<String>,
    message: Option<String>,
    last_transition_time: Option<Time>,
}

impl WireCondition {
    fn into_condition(self) -> core::PodCondition {
        core::PodCondition {
            type_: self.type_.unwrap_or_default(),
            status: self.status.unwrap_or_default(),
            reason: self.reason,
            message: self.message,
            last_transition_time: self.last_transition_time,
            ..core::PodCondition::default()
        }
    }
}

/// Resize-aware requests read a bound container's status resources.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireContainerStatus {
    name: Option<String>,
    resources: Option<core::ResourceRequirements>,
    allocated_resources: Option<BTreeMap<String, Quantity>>,
}

impl WireContainerStatus {
    fn into_status(self) -> core::ContainerStatus {
        core::ContainerStatus {
            name: self.name.unwrap_or_default(),
            resources: self.resources,
            allocated_resources: self.allocated_resources,
            ..core::ContainerStatus::default()
        }
    }
}
