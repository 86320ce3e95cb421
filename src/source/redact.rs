//! `--redact`: an allowlist per kind. Each kind names the fields the scheduler (and
//! the loader rebuilding its model) reads; everything else is dropped, so a field
//! Kubernetes adds later is dropped by default. Objects of kinds not listed are
//! dropped whole.
//!
//! Paths are dotted; `*` stands for any key of a map; a path ending at a field keeps
//! that field's whole subtree; arrays are walked element by element. A segment in
//! brackets is taken literally (annotation keys hold dots).

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde_json::Value;

/// What every kind keeps of its envelope and metadata.
const META: &[&str] = &[
    "apiVersion",
    "kind",
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
    "metadata.labels",
    "metadata.ownerReferences.apiVersion",
    "metadata.ownerReferences.kind",
    "metadata.ownerReferences.name",
    "metadata.ownerReferences.uid",
    "metadata.ownerReferences.controller",
    "metadata.creationTimestamp",
    "metadata.deletionTimestamp",
    // Read by volume binding and CSI migration.
    "metadata.annotations.[volume.kubernetes.io/selected-node]",
    "metadata.annotations.[volume.kubernetes.io/storage-provisioner]",
    "metadata.annotations.[volume.beta.kubernetes.io/storage-provisioner]",
    "metadata.annotations.[pv.kubernetes.io/bind-completed]",
    "metadata.annotations.[pv.kubernetes.io/provisioned-by]",
    "metadata.annotations.[storage.alpha.kubernetes.io/migrated-plugins]",
];

/// Volume sources the volume plugins read (conflicts, zones, limits, CSI
/// translation), with only their identifying fields; every other source (gitRepo,
/// flexVolume, secrets, inline CSI attributes, ...) goes.
const VOLUME_SOURCES: &[&str] = &[
    "gcePersistentDisk.pdName",
    "gcePersistentDisk.readOnly",
    "gcePersistentDisk.fsType",
    "gcePersistentDisk.partition",
    "awsElasticBlockStore.volumeID",
    "awsElasticBlockStore.readOnly",
    "awsElasticBlockStore.fsType",
    "awsElasticBlockStore.partition",
    "rbd.monitors",
    "rbd.pool",
    "rbd.image",
    "rbd.readOnly",
    "iscsi.targetPortal",
    "iscsi.iqn",
    "iscsi.lun",
    "iscsi.readOnly",
    "azureDisk.diskName",
    "azureDisk.diskURI",
    "azureDisk.kind",
    "azureDisk.readOnly",
    "azureFile.shareName",
    "azureFile.secretName",
    "azureFile.secretNamespace",
    "azureFile.readOnly",
    "cinder.volumeID",
    "cinder.readOnly",
    "vsphereVolume.volumePath",
    "portworxVolume.volumeID",
    "portworxVolume.readOnly",
];

/// A pod spec (also a pod template's).
const POD_SPEC: &[&str] = &[
    "nodeName",
    "schedulerName",
    "priorityClassName",
    "priority",
    "preemptionPolicy",
    "runtimeClassName",
    "overhead",
    "hostNetwork",
    "nodeSelector",
    "affinity",
    "tolerations",
    "topologySpreadConstraints",
    "schedulingGates.name",
    "readinessGates.conditionType",
    "resourceClaims.name",
    "resourceClaims.resourceClaimName",
    "resourceClaims.resourceClaimTemplateName",
    "containers.name",
    "containers.image",
    "containers.resources",
    "containers.ports.containerPort",
    "containers.ports.hostPort",
    "containers.ports.hostIP",
    "containers.ports.protocol",
    "initContainers.name",
    "initContainers.image",
    "initContainers.resources",
    "initContainers.restartPolicy",
    "initContainers.ports.containerPort",
    "initContainers.ports.hostPort",
    "initContainers.ports.hostIP",
    "initContainers.ports.protocol",
    "volumes.name",
    "volumes.persistentVolumeClaim.claimName",
    "volumes.persistentVolumeClaim.readOnly",
    "volumes.ephemeral.volumeClaimTemplate.metadata.labels",
    "volumes.ephemeral.volumeClaimTemplate.spec.accessModes",
    "volumes.ephemeral.volumeClaimTemplate.spec.resources",
    "volumes.ephemeral.volumeClaimTemplate.spec.storageClassName",
    "volumes.ephemeral.volumeClaimTemplate.spec.volumeMode",
    "volumes.ephemeral.volumeClaimTemplate.spec.selector",
    "volumes.csi.driver",
    "volumes.csi.readOnly",
];

/// Container statuses: names and the resize-aware requests of bound pods (plus the
/// fields the API type requires).
const CONTAINER_STATUS: &[&str] = &[
    "name",
    "image",
    "imageID",
    "ready",
    "restartCount",
    "resources.requests",
    "resources.limits",
    "allocatedResources",
];

/// A persistent volume's spec (also a VolumeAttachment's inline volume).
const PV_SPEC: &[&str] = &[
    "capacity",
    "accessModes",
    "storageClassName",
    "volumeMode",
    "nodeAffinity",
    "persistentVolumeReclaimPolicy",
    "volumeAttributesClassName",
    "claimRef.apiVersion",
    "claimRef.kind",
    "claimRef.name",
    "claimRef.namespace",
    "claimRef.uid",
    "csi.driver",
    "csi.volumeHandle",
    "csi.readOnly",
    "csi.fsType",
    // A local volume's source is required by the API type; its node affinity is
    // what the scheduler reads.
    "local.path",
    "local.fsType",
];

const PVC_SPEC: &[&str] = &[
    "accessModes",
    "resources",
    "storageClassName",
    "volumeName",
    "volumeMode",
    "selector",
    "volumeAttributesClassName",
    "dataSource.apiGroup",
    "dataSource.kind",
    "dataSource.name",
    "dataSourceRef.apiGroup",
    "dataSourceRef.kind",
    "dataSourceRef.name",
    "dataSourceRef.namespace",
];

/// A claim's device requests, as the allocator reads them (not `config`).
const DEVICE_CLAIM: &[&str] = &["requests", "constraints"];

/// The kinds the loader reads and, for each, its kept paths beyond [`META`].
fn kind_paths(kind: &str) -> Option<Vec<String>> {
    let with = |prefix: &str, paths: &[&str]| -> Vec<String> {
        paths.iter().map(|p| format!("{prefix}{p}")).collect()
    };
    let pod_template = |prefix: &str| -> Vec<String> {
        let mut v = with(&format!("{prefix}metadata."), &["labels"]);
        v.extend(with(&format!("{prefix}spec."), POD_SPEC));
        v.extend(with(&format!("{prefix}spec.volumes."), VOLUME_SOURCES));
        v
    };
    let pv_spec = |prefix: &str| -> Vec<String> {
        let mut v = with(prefix, PV_SPEC);
        v.extend(with(prefix, VOLUME_SOURCES));
        v
    };
    let mut paths: Vec<String> = match kind {
        "Pod" => {
            let mut v = pod_template("");
            v.extend(with(
                "status.",
                &[
                    "phase",
                    "nominatedNodeName",
                    "startTime",
                    "conditions.type",
                    "conditions.status",
                    "conditions.reason",
                    // Only a PodScheduled=False message survives; see `redact_object`.
                    "conditions.message",
                ],
            ));
            v.extend(with(
                "status.resourceClaimStatuses.",
                &["name", "resourceClaimName"],
            ));
            v.extend(with("status.containerStatuses.", CONTAINER_STATUS));
            v.extend(with("status.initContainerStatuses.", CONTAINER_STATUS));
            v
        }
        "Node" => with(
            "",
            &[
                "spec.taints",
                "spec.unschedulable",
                "status.capacity",
                "status.allocatable",
                "status.images.names",
                "status.images.sizeBytes",
                "status.conditions.type",
                "status.conditions.status",
            ],
        ),
        "PersistentVolume" => {
            let mut v = pv_spec("spec.");
            v.push("status.phase".into());
            v
        }
        "PersistentVolumeClaim" => {
            let mut v = with("spec.", PVC_SPEC);
            v.extend(with(
                "status.",
                &["phase", "capacity", "accessModes", "allocatedResources"],
            ));
            v
        }
        "StorageClass" => with(
            "",
            &[
                "provisioner",
                "volumeBindingMode",
                "allowedTopologies",
                "reclaimPolicy",
                "allowVolumeExpansion",
            ],
        ),
        "CSINode" => with(
            "spec.drivers.",
            &["name", "nodeID", "topologyKeys", "allocatable"],
        ),
        "CSIDriver" => with(
            "spec.",
            &[
                "attachRequired",
                "storageCapacity",
                "volumeLifecycleModes",
                "podInfoOnMount",
                "fsGroupPolicy",
                "requiresRepublish",
                "seLinuxMount",
                "nodeAllocatableUpdatePeriodSeconds",
            ],
        ),
        // VolumeBinding's capacity check for drivers that track storage capacity.
        "CSIStorageCapacity" => with(
            "",
            &[
                "storageClassName",
                "nodeTopology",
                "capacity",
                "maximumVolumeSize",
            ],
        ),
        "VolumeAttachment" => {
            let mut v = with(
                "spec.",
                &["attacher", "nodeName", "source.persistentVolumeName"],
            );
            v.extend(pv_spec("spec.source.inlineVolumeSpec."));
            v.push("status.attached".into());
            v
        }
        "Namespace" => vec!["status.phase".into()],
        "PodDisruptionBudget" => with(
            "",
            &[
                "spec.selector",
                "spec.minAvailable",
                "spec.maxUnavailable",
                "spec.unhealthyPodEvictionPolicy",
                "status.disruptionsAllowed",
                "status.currentHealthy",
                "status.desiredHealthy",
                "status.expectedPods",
                "status.disruptedPods",
                "status.observedGeneration",
            ],
        ),
        "PriorityClass" => with("", &["value", "globalDefault", "preemptionPolicy"]),
        "Service" => vec!["spec.selector".into()],
        "ReplicaSet" | "ReplicationController" => {
            let mut v = with("spec.", &["selector", "replicas"]);
            v.extend(pod_template("spec.template."));
            v
        }
        "StatefulSet" => {
            let mut v = with("spec.", &["selector", "replicas", "serviceName"]);
            v.extend(pod_template("spec.template."));
            v.extend(with(
                "spec.volumeClaimTemplates.",
                &["apiVersion", "kind", "metadata.name", "metadata.labels"],
            ));
            v.extend(with("spec.volumeClaimTemplates.spec.", PVC_SPEC));
            v
        }
        "RuntimeClass" => with("", &["handler", "overhead", "scheduling"]),
        "PodGroup" => with(
            "spec.",
            &["minMember", "scheduleTimeoutSeconds", "minResources"],
        ),
        // DRA: what the structured allocator reads. Opaque driver configuration
        // (`config`) is the driver's business, never the scheduler's, and goes, as
        // does a claim's driver-reported `status.devices` (free text and addresses).
        "DeviceClass" => with("spec.", &["selectors", "extendedResourceName"]),
        "ResourceSlice" => with(
            "spec.",
            &[
                "driver",
                "pool",
                "nodeName",
                "nodeSelector",
                "allNodes",
                "perDeviceNodeSelection",
                "devices",
                "sharedCounters",
            ],
        ),
        "ResourceClaim" => {
            let mut v = with("spec.devices.", DEVICE_CLAIM);
            v.extend(with(
                "status.",
                &[
                    "allocation.devices.results",
                    "allocation.nodeSelector",
                    "allocation.allocationTimestamp",
                    "reservedFor",
                ],
            ));
            v
        }
        "ResourceClaimTemplate" => {
            let mut v = with("spec.spec.devices.", DEVICE_CLAIM);
            v.push("spec.metadata.labels".into());
            v
        }
        _ => return None,
    };
    paths.extend(META.iter().map(|p| p.to_string()));
    Some(paths)
}

/// A tree of kept paths.
#[derive(Debug, Default)]
enum Keep {
    /// The whole subtree.
    #[default]
    All,
    /// Only these children (`*`: any key).
    Fields(BTreeMap<String, Keep>),
}

fn segments(path: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = path;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('[') {
            let end = r.find(']').unwrap_or(r.len());
            out.push(r[..end].to_string());
            rest = r.get(end + 1..).unwrap_or("");
        } else {
            let end = rest.find('.').unwrap_or(rest.len());
            out.push(rest[..end].to_string());
            rest = &rest[end..];
        }
        rest = rest.strip_prefix('.').unwrap_or(rest);
    }
    out
}

impl Keep {
    fn from_paths(paths: &[String]) -> Keep {
        let mut root = Keep::Fields(BTreeMap::new());
        for p in paths {
            let mut node = &mut root;
            let segs = segments(p);
            for (i, seg) in segs.iter().enumerate() {
                let last = i + 1 == segs.len();
                let Keep::Fields(children) = node else {
                    break; // already kept whole
                };
                node = children.entry(seg.clone()).or_insert_with(|| {
                    if last {
                        Keep::All
                    } else {
                        Keep::Fields(BTreeMap::new())
                    }
                });
                if last {
                    *node = Keep::All;
                }
            }
        }
        root
    }

    /// Prune `v` to this tree; false when nothing of `v` is kept.
    fn apply(&self, v: &mut Value) -> bool {
        let Keep::Fields(children) = self else {
            return true;
        };
        match v {
            // A map or list left empty by pruning goes too (an `annotations: {}` of
            // dropped keys says nothing the scheduler reads).
            Value::Object(map) => {
                let had = !map.is_empty();
                map.retain(|k, child| {
                    match children.get(k.as_str()).or_else(|| children.get("*")) {
                        Some(keep) => keep.apply(child),
                        None => false,
                    }
                });
                !(had && map.is_empty())
            }
            Value::Array(items) => {
                let had = !items.is_empty();
                items.retain_mut(|item| self.apply(item));
                !(had && items.is_empty())
            }
            // A scalar where an object belongs: not something the scheduler reads.
            _ => false,
        }
    }
}

fn rules(kind: &str) -> Option<&'static Keep> {
    static RULES: OnceLock<BTreeMap<&'static str, Keep>> = OnceLock::new();
    RULES
        .get_or_init(|| {
            kinds()
                .filter_map(|k| Some((k, Keep::from_paths(&kind_paths(k)?))))
                .collect()
        })
        .get(kind)
}

/// Every kind `--redact` keeps (the kinds the snapshot loader reads).
fn kinds() -> impl Iterator<Item = &'static str> {
    crate::source::kinds::KINDS.iter().map(|k| k.name)
}

/// Prune one object to its kind's allowlist. False when the object must be dropped
/// (a kind the scheduler never reads).
pub fn redact_object(v: &mut Value) -> bool {
    let kind = v.get("kind").and_then(Value::as_str).unwrap_or_default();
    let Some(keep) = rules(kind) else {
        return false;
    };
    let is_pod = kind == "Pod";
    keep.apply(v);
    if is_pod {
        // The scheduler's own PodScheduled=False message is what the inspector shows
        // beside our verdict; any other condition's message and reason is free text.
        if let Some(Value::Array(conds)) = v.pointer_mut("/status/conditions") {
            for c in conds.iter_mut().filter_map(Value::as_object_mut) {
                let kind = c.get("type").and_then(Value::as_str).map(str::to_string);
                let scheduler_said = kind.as_deref() == Some("PodScheduled")
                    && c.get("status").and_then(Value::as_str) == Some("False");
                if !scheduler_said {
                    c.remove("message");
                }
                // The model reads the reason of these two only (a pending pod's, and
                // a victim's PreemptionByScheduler).
                if !matches!(kind.as_deref(), Some("PodScheduled" | "DisruptionTarget")) {
                    c.remove("reason");
                }
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bracketed_segments_keep_dots() {
        assert_eq!(
            segments("metadata.annotations.[a.b/c].x"),
            vec!["metadata", "annotations", "a.b/c", "x"]
        );
    }

    #[test]
    fn every_kind_has_rules() {
        for k in kinds() {
            assert!(rules(k).is_some(), "{k}");
        }
        assert!(rules("Secret").is_none());
    }
}

// ---------------------------------------------------------------------------------
// `--redact-names`: a keyed hash of names and label values.

/// Maps names and label values to `x` + 20 hex digits of HMAC-SHA256 under a key:
/// the same input always gives the same output, so every reference (a pod's
/// nodeName and the node, a claim and its volume, a selector and the labels it
/// matches, a namespace and its `kubernetes.io/metadata.name` label) still matches,
/// and the output is a valid DNS label and label value.
pub struct NameHasher {
    key: Vec<u8>,
    /// Every mapping made, hashed → original, so a caller holding the key can read
    /// answers back.
    pub seen: BTreeMap<String, String>,
}

/// A random key for one run (the default of `--redact-names`).
pub fn random_key() -> Result<Vec<u8>, getrandom::Error> {
    let mut key = vec![0u8; 32];
    getrandom::fill(&mut key)?;
    Ok(key)
}

fn hmac_sha256(key: &[u8], msg: &[u8]) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    const BLOCK: usize = 64;
    let mut k = [0u8; BLOCK];
    if key.len() > BLOCK {
        k[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        k[..key.len()].copy_from_slice(key);
    }
    let pad = |b: u8| k.map(|x| x ^ b);
    let inner = Sha256::new()
        .chain_update(pad(0x36))
        .chain_update(msg)
        .finalize();
    Sha256::new()
        .chain_update(pad(0x5c))
        .chain_update(inner)
        .finalize()
        .into()
}

impl NameHasher {
    pub fn new(key: &[u8]) -> Self {
        NameHasher {
            key: key.to_vec(),
            seen: BTreeMap::new(),
        }
    }

    pub fn hash(&mut self, s: &str) -> String {
        if s.is_empty() {
            return String::new();
        }
        let mac = hmac_sha256(&self.key, s.as_bytes());
        let hex: String = mac[..10].iter().map(|b| format!("{b:02x}")).collect();
        let out = format!("x{hex}");
        self.seen.insert(out.clone(), s.to_string());
        out
    }

    /// A label, taint or extended-resource key the cluster chose, hashed part by part
    /// so a prefixed key stays prefixed; well-known keys stay.
    fn key(&mut self, key: &str) -> String {
        if well_known_key(key) {
            return key.to_string();
        }
        let parts: Vec<String> = key.split('/').map(|p| self.hash(p)).collect();
        parts.join("/")
    }

    /// A resource name: the native ones (`cpu`, `hugepages-2Mi`, ...) and those of a
    /// `kubernetes.io/` prefix stay; any other, an extended resource, is hashed (a
    /// prefixed one keeps its prefix, so it stays extended).
    fn resource_key(&mut self, name: &str) -> String {
        const NATIVE: &[&str] = &["cpu", "memory", "ephemeral-storage", "pods", "storage"];
        let native = NATIVE.contains(&name)
            || name.starts_with("hugepages-")
            || name.starts_with("attachable-volumes-");
        if native {
            name.to_string()
        } else {
            self.key(name)
        }
    }

    /// A label value, hashed; integers stay (node affinity `Gt`/`Lt` compare them as
    /// numbers), and multi-zone values (`a__b`, which VolumeZone splits) are hashed
    /// zone by zone, so they still hold the zones a node's label names.
    fn label_value(&mut self, value: &str) -> String {
        if value.parse::<i64>().is_ok() {
            return value.to_string();
        }
        let parts: Vec<String> = value.split("__").map(|p| self.hash(p)).collect();
        parts.join("__")
    }

    fn value(&mut self, v: &mut Value, how: How) {
        match (how, v) {
            (_, Value::Array(items)) => {
                for item in items {
                    self.value(item, how);
                }
            }
            (How::Name, Value::String(s)) => *s = self.hash(s),
            // Built-in classes (system-node-critical, ...) are known by name.
            (How::ClassName, Value::String(s)) if !s.starts_with("system-") => *s = self.hash(s),
            // ImageLocality looks a pod's image up, normalized (`:latest` added when
            // untagged), among a node's image names as they are. Hash the pod's name
            // normalized and the node's as is, each with a tag so normalizing the
            // hash changes nothing: the same images still match, and no others.
            (How::Image, Value::String(s)) => {
                let normalized = crate::engine::plugins::image_locality::normalized_image_name(s);
                *s = format!("{}:h", self.hash(&normalized));
            }
            (How::NodeImage, Value::String(s)) => *s = format!("{}:h", self.hash(s)),
            (How::Request, Value::String(s)) => {
                let parts: Vec<String> = s.split('/').map(|p| self.hash(p)).collect();
                *s = parts.join("/");
            }
            (How::Labels, Value::Object(map)) => {
                let labels = std::mem::take(map);
                for (k, mut val) in labels {
                    if let Value::String(s) = &mut val {
                        *s = self.label_value(s);
                    }
                    map.insert(self.key(&k), val);
                }
            }
            (How::Selectors, v @ Value::Object(_)) => self.selectors(v),
            (How::Taints, Value::Object(t)) => {
                if let Some(Value::String(s)) = t.get_mut("key") {
                    *s = self.key(s);
                }
                if let Some(Value::String(s)) = t.get_mut("value") {
                    *s = self.hash(s);
                }
            }
            (How::LabelKey, Value::String(s)) => *s = self.key(s),
            (How::Resources, Value::Object(map)) => {
                let resources = std::mem::take(map);
                for (k, val) in resources {
                    map.insert(self.resource_key(&k), val);
                }
            }
            (How::NameKeys, Value::Object(map)) => {
                let named = std::mem::take(map);
                for (k, val) in named {
                    map.insert(self.hash(&k), val);
                }
            }
            // The wildcard addresses mean "every address" to NodePorts: they stay.
            (How::Address, Value::String(s)) if !matches!(s.as_str(), "" | "0.0.0.0" | "::") => {
                *s = self.hash(s)
            }
            _ => {}
        }
    }

    /// Every label selector, node selector term and namespace list under `v`.
    fn selectors(&mut self, v: &mut Value) {
        match v {
            Value::Array(items) => items.iter_mut().for_each(|i| self.selectors(i)),
            Value::Object(map) => {
                for (k, child) in map.iter_mut() {
                    match k.as_str() {
                        "matchLabels" => self.value(child, How::Labels),
                        "matchExpressions" | "matchLabelExpressions" => {
                            for e in child.as_array_mut().into_iter().flatten() {
                                for val in e
                                    .get_mut("values")
                                    .and_then(Value::as_array_mut)
                                    .into_iter()
                                    .flatten()
                                {
                                    if let Value::String(s) = val {
                                        *s = self.label_value(s);
                                    }
                                }
                                if let Some(Value::String(k)) = e.get_mut("key") {
                                    *k = self.key(k);
                                }
                            }
                        }
                        // Label keys named on their own: the domain a term or
                        // constraint spreads over, and keys whose values are copied.
                        "topologyKey" | "matchLabelKeys" | "mismatchLabelKeys" => {
                            self.value(child, How::LabelKey)
                        }
                        // Node fields: metadata.name, the node's name.
                        "matchFields" => {
                            for e in child.as_array_mut().into_iter().flatten() {
                                if let Some(vals) = e.get_mut("values") {
                                    self.value(vals, How::Name);
                                }
                            }
                        }
                        "namespaces" => self.value(child, How::Name),
                        _ => self.selectors(child),
                    }
                }
            }
            _ => {}
        }
    }
}

/// Keys Kubernetes itself defines (`kubernetes.io/hostname`,
/// `topology.kubernetes.io/zone`, `node.kubernetes.io/unschedulable`,
/// `scheduling.x-k8s.io/pod-group`, ...): the scheduler reads them by name, and they
/// say nothing about the cluster.
fn well_known_key(key: &str) -> bool {
    let Some((prefix, _)) = key.rsplit_once('/') else {
        return false;
    };
    prefix == "kubernetes.io"
        || prefix == "k8s.io"
        || prefix.ends_with(".kubernetes.io")
        || prefix.ends_with(".k8s.io")
        || prefix.ends_with("x-k8s.io")
}

#[derive(Clone, Copy, Debug)]
enum How {
    Name,
    ClassName,
    Image,
    NodeImage,
    Labels,
    Selectors,
    Taints,
    /// A label key (or a list of them), standing alone.
    LabelKey,
    /// A map of resource names: extended resources (`example.com/gpu`) are hashed,
    /// native ones (`cpu`, `hugepages-2Mi`) stay.
    Resources,
    /// A map keyed by names (a PodDisruptionBudget's `disruptedPods`).
    NameKeys,
    /// An IP address a host port binds.
    Address,
    /// A DRA request reference, `request` or `request/subrequest`: each part
    /// hashed, so a subrequest still names its parent.
    Request,
}

/// Where names and label values sit, kind by kind (paths as in the allowlist).
fn name_paths(kind: &str) -> Vec<(String, How)> {
    use How::*;
    let with = |prefix: &str, paths: &[(&str, How)]| -> Vec<(String, How)> {
        paths
            .iter()
            .map(|(p, h)| (format!("{prefix}{p}"), *h))
            .collect()
    };
    const VOLUME_IDS: &[(&str, How)] = &[
        ("gcePersistentDisk.pdName", Name),
        ("awsElasticBlockStore.volumeID", Name),
        ("rbd.monitors", Name),
        ("rbd.pool", Name),
        ("rbd.image", Name),
        ("iscsi.targetPortal", Name),
        ("iscsi.iqn", Name),
        ("azureDisk.diskName", Name),
        ("azureDisk.diskURI", Name),
        ("azureFile.shareName", Name),
        ("azureFile.secretName", Name),
        ("azureFile.secretNamespace", Name),
        ("cinder.volumeID", Name),
        ("vsphereVolume.volumePath", Name),
        ("portworxVolume.volumeID", Name),
    ];
    const PVC: &[(&str, How)] = &[
        ("storageClassName", ClassName),
        ("volumeAttributesClassName", ClassName),
        ("resources.requests", Resources),
        ("resources.limits", Resources),
        ("volumeName", Name),
        ("selector", Selectors),
        ("dataSource.name", Name),
        ("dataSourceRef.name", Name),
        ("dataSourceRef.namespace", Name),
    ];
    // A claim request names its device class, directly or among alternatives.
    const DEVICE_CLASSES: &[(&str, How)] = &[
        ("requests.name", Name),
        ("requests.firstAvailable.name", Name),
        ("constraints.requests", Request),
        ("requests.exactly.deviceClassName", ClassName),
        ("requests.firstAvailable.deviceClassName", ClassName),
        ("requests.exactly.tolerations", Taints),
        ("requests.firstAvailable.tolerations", Taints),
    ];
    let pod_template = |prefix: &str| -> Vec<(String, How)> {
        let mut v = with(&format!("{prefix}metadata."), &[("labels", Labels)]);
        let spec = format!("{prefix}spec.");
        v.extend(with(
            &spec,
            &[
                ("nodeName", Name),
                ("priorityClassName", ClassName),
                ("runtimeClassName", ClassName),
                ("nodeSelector", Labels),
                ("affinity", Selectors),
                ("topologySpreadConstraints", Selectors),
                ("tolerations", Taints),
                ("schedulingGates.name", Name),
                ("readinessGates.conditionType", Name),
                ("resourceClaims.name", Name),
                ("resourceClaims.resourceClaimName", Name),
                ("resourceClaims.resourceClaimTemplateName", Name),
                ("containers.name", Name),
                ("containers.image", Image),
                ("containers.resources.claims.name", Name),
                ("containers.resources.claims.request", Name),
                ("containers.resources.requests", Resources),
                ("containers.resources.limits", Resources),
                ("containers.ports.hostIP", Address),
                ("initContainers.name", Name),
                ("initContainers.image", Image),
                ("initContainers.resources.claims.name", Name),
                ("initContainers.resources.claims.request", Name),
                ("initContainers.resources.requests", Resources),
                ("initContainers.resources.limits", Resources),
                ("initContainers.ports.hostIP", Address),
                ("overhead", Resources),
                ("volumes.name", Name),
                ("volumes.persistentVolumeClaim.claimName", Name),
                (
                    "volumes.ephemeral.volumeClaimTemplate.metadata.labels",
                    Labels,
                ),
            ],
        ));
        v.extend(with(
            &format!("{spec}volumes.ephemeral.volumeClaimTemplate.spec."),
            PVC,
        ));
        v.extend(with(&format!("{spec}volumes."), VOLUME_IDS));
        v
    };
    let pv_spec = |prefix: &str| -> Vec<(String, How)> {
        let mut v = with(
            prefix,
            &[
                ("storageClassName", ClassName),
                ("claimRef.name", Name),
                ("claimRef.namespace", Name),
                ("claimRef.uid", Name),
                ("csi.volumeHandle", Name),
                ("local.path", Name),
                ("nodeAffinity", Selectors),
                ("capacity", Resources),
                ("volumeAttributesClassName", ClassName),
            ],
        );
        v.extend(with(prefix, VOLUME_IDS));
        v
    };
    let statuses = |prefix: &str| -> Vec<(String, How)> {
        with(
            prefix,
            &[
                ("name", Name),
                ("image", Name),
                ("imageID", Name),
                ("allocatedResources", Resources),
                ("resources.requests", Resources),
                ("resources.limits", Resources),
            ],
        )
    };
    let mut paths = match kind {
        "Pod" => {
            let mut v = pod_template("");
            v.push(("status.nominatedNodeName".into(), Name));
            v.extend(with(
                "status.resourceClaimStatuses.",
                &[("name", Name), ("resourceClaimName", Name)],
            ));
            v.extend(statuses("status.containerStatuses."));
            v.extend(statuses("status.initContainerStatuses."));
            v
        }
        "Node" => with(
            "",
            &[
                ("spec.taints", Taints),
                ("status.images.names", NodeImage),
                ("status.allocatable", Resources),
                ("status.capacity", Resources),
            ],
        ),
        "PersistentVolume" => pv_spec("spec."),
        "PersistentVolumeClaim" => {
            let mut v = with("spec.", PVC);
            v.extend(with(
                "status.",
                &[("allocatedResources", Resources), ("capacity", Resources)],
            ));
            v
        }
        "StorageClass" => with("", &[("allowedTopologies", Selectors)]),
        "CSINode" => with(
            "spec.drivers.",
            &[("nodeID", Name), ("topologyKeys", LabelKey)],
        ),
        "CSIStorageCapacity" => with(
            "",
            &[("storageClassName", ClassName), ("nodeTopology", Selectors)],
        ),
        "VolumeAttachment" => {
            let mut v = with(
                "spec.",
                &[("nodeName", Name), ("source.persistentVolumeName", Name)],
            );
            v.extend(pv_spec("spec.source.inlineVolumeSpec."));
            v
        }
        "PodDisruptionBudget" => with(
            "",
            &[
                ("spec.selector", Selectors),
                ("status.disruptedPods", NameKeys),
            ],
        ),
        "Service" => with("spec.", &[("selector", Labels)]),
        "ReplicationController" => {
            let mut v = with("spec.", &[("selector", Labels)]);
            v.extend(pod_template("spec.template."));
            v
        }
        "ReplicaSet" | "StatefulSet" => {
            let mut v = with("spec.", &[("selector", Selectors), ("serviceName", Name)]);
            v.extend(pod_template("spec.template."));
            v.extend(with(
                "spec.volumeClaimTemplates.",
                &[("metadata.name", Name), ("metadata.labels", Labels)],
            ));
            v.extend(with("spec.volumeClaimTemplates.spec.", PVC));
            v
        }
        "RuntimeClass" => with(
            "",
            &[
                ("handler", Name),
                ("scheduling.nodeSelector", Labels),
                ("scheduling.tolerations", Taints),
                ("overhead.podFixed", Resources),
            ],
        ),
        "ResourceSlice" => with(
            "spec.",
            &[
                ("nodeName", Name),
                ("nodeSelector", Selectors),
                ("pool.name", Name),
                ("devices.name", Name),
                ("devices.nodeName", Name),
                ("devices.nodeSelector", Selectors),
                ("devices.taints", Taints),
            ],
        ),
        "ResourceClaim" => {
            let mut v = with("spec.devices.", DEVICE_CLASSES);
            v.extend(with(
                "status.",
                &[
                    ("allocation.nodeSelector", Selectors),
                    ("allocation.devices.results.request", Request),
                    ("allocation.devices.results.pool", Name),
                    ("allocation.devices.results.device", Name),
                    ("allocation.devices.results.shareID", Name),
                    ("allocation.devices.results.tolerations", Taints),
                    ("reservedFor.name", Name),
                    ("reservedFor.uid", Name),
                ],
            ));
            v
        }
        "ResourceClaimTemplate" => {
            let mut v = with("spec.spec.devices.", DEVICE_CLASSES);
            v.push(("spec.metadata.labels".into(), Labels));
            v
        }
        "PodGroup" => with("spec.", &[("minResources", Resources)]),
        _ => Vec::new(),
    };
    // Names of classes and drivers are what other objects call them by; a CSI
    // driver's name is software, not the cluster's (translation and limits read it).
    let own_name = match kind {
        "PriorityClass" | "StorageClass" | "RuntimeClass" | "DeviceClass" => Some(ClassName),
        "CSIDriver" => None,
        _ => Some(Name),
    };
    if let Some(how) = own_name {
        paths.push(("metadata.name".into(), how));
    }
    // A pod's labels are already listed as its template's.
    if kind != "Pod" {
        paths.push(("metadata.labels".into(), Labels));
    }
    paths.extend(with(
        "metadata.",
        &[
            ("namespace", Name),
            ("uid", Name),
            ("ownerReferences.name", Name),
            ("ownerReferences.uid", Name),
            ("annotations.[volume.kubernetes.io/selected-node]", Name),
        ],
    ));
    paths
}

/// Apply `f` to the value at `path`, walking arrays element by element.
fn at_path(v: &mut Value, path: &[String], f: &mut dyn FnMut(&mut Value)) {
    match v {
        Value::Array(items) => items.iter_mut().for_each(|i| at_path(i, path, f)),
        Value::Object(map) => match path.split_first() {
            None => f(v),
            Some((first, rest)) => {
                if let Some(child) = map.get_mut(first.as_str()) {
                    at_path(child, rest, f);
                }
            }
        },
        _ if path.is_empty() => f(v),
        _ => {}
    }
}

/// Hash names and label values in redacted objects (apply [`redact_object`] first:
/// only the fields it keeps are covered). A PodScheduled message quotes names, so
/// it goes too.
pub fn hash_names(objects: &mut [Value], hasher: &mut NameHasher) {
    for o in objects {
        let kind = o["kind"].as_str().unwrap_or_default().to_string();
        // A namespaced object without a namespace is in `default`, which must hash
        // like every `default` spelled out.
        if crate::source::kinds::namespaced(&kind)
            && let Some(meta) = o.get_mut("metadata").and_then(Value::as_object_mut)
        {
            meta.entry("namespace").or_insert_with(|| "default".into());
        }
        let paths = name_paths(&kind);
        debug_assert!(
            paths
                .iter()
                .enumerate()
                .all(|(i, (p, _))| !paths[..i].iter().any(|(q, _)| q == p)),
            "a path listed twice would be hashed twice"
        );
        for (path, how) in paths {
            at_path(o, &segments(&path), &mut |v| hasher.value(v, how));
        }
        if let Some(Value::Array(conds)) = o.pointer_mut("/status/conditions") {
            for c in conds.iter_mut().filter_map(Value::as_object_mut) {
                c.remove("message");
            }
        }
    }
}

#[cfg(test)]
mod name_tests {
    use super::*;

    #[test]
    fn no_kind_lists_a_name_path_twice() {
        for k in kinds() {
            let paths = name_paths(k);
            let mut seen = std::collections::BTreeSet::new();
            for (p, _) in &paths {
                assert!(seen.insert(p.clone()), "{k}: {p} twice");
            }
        }
    }

    #[test]
    fn hmac_matches_rfc_4231_case_2() {
        let mac = hmac_sha256(b"Jefe", b"what do ya want for nothing?");
        let hex: String = mac.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(
            hex,
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }
}
