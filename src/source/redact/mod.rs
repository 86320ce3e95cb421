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

mod names;
use Part::{Group, Paths};
pub use names::{NameHasher, hash_names, random_key};

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
    // The release `snapshot save` recorded (on kube-system's Namespace).
    "metadata.annotations.[schedscope.dev/kube-version]",
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
/// fields the API type requires; `image` and `imageID` blanked, see `blanked`).
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
    // A local volume's source is required by the API type (its path is blanked, see
    // `blanked`); its node affinity is what the scheduler reads.
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

/// One group of a kind's paths: each of `paths` under `prefix`, or a group several
/// kinds share (a pod template, a volume's spec) under `prefix`. Paths are built by
/// concatenation, in table order.
enum Part<P: 'static> {
    Paths(&'static str, &'static [P]),
    Group(&'static str, &'static [Part<P>]),
}

/// A table entry that can be put under a prefix.
trait Entry: Copy {
    type Out;
    fn under(self, prefix: &str) -> Self::Out;
}

impl Entry for &'static str {
    type Out = String;
    fn under(self, prefix: &str) -> String {
        format!("{prefix}{self}")
    }
}

/// `parts` under `prefix`, appended to `out` in order.
fn expand<P: Entry>(prefix: &str, parts: &[Part<P>], out: &mut Vec<P::Out>) {
    for part in parts {
        match part {
            Part::Paths(p, paths) => {
                let at = format!("{prefix}{p}");
                out.extend(paths.iter().map(|e| e.under(&at)));
            }
            Part::Group(p, group) => expand(&format!("{prefix}{p}"), group, out),
        }
    }
}

/// Kinds with their parts.
type Table<P> = &'static [(&'static str, &'static [Part<P>])];

/// A kind's parts in a table, if the table lists it.
fn parts_of<P>(table: Table<P>, kind: &str) -> Option<&'static [Part<P>]> {
    table
        .iter()
        .find(|(k, _)| *k == kind)
        .map(|(_, parts)| *parts)
}

/// A pod template's kept paths (a Pod is one at the root).
const POD_TEMPLATE: &[Part<&str>] = &[
    Paths("metadata.", &["labels"]),
    Paths("spec.", POD_SPEC),
    Paths("spec.volumes.", VOLUME_SOURCES),
];

/// A PersistentVolume's spec (also inline in a VolumeAttachment).
const PV: &[Part<&str>] = &[Paths("", PV_SPEC), Paths("", VOLUME_SOURCES)];

/// A ReplicaSet's or ReplicationController's kept paths.
const REPLICAS: &[Part<&str>] = &[
    Paths("spec.", &["selector", "replicas"]),
    Group("spec.template.", POD_TEMPLATE),
];

/// The kinds the loader reads and, for each, its kept paths beyond [`META`].
const KEPT: Table<&str> = &[
    (
        "Pod",
        &[
            Group("", POD_TEMPLATE),
            Paths(
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
            ),
            Paths(
                "status.resourceClaimStatuses.",
                &["name", "resourceClaimName"],
            ),
            Paths("status.containerStatuses.", CONTAINER_STATUS),
            Paths("status.initContainerStatuses.", CONTAINER_STATUS),
        ],
    ),
    (
        "Node",
        &[Paths(
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
        )],
    ),
    (
        "PersistentVolume",
        &[Group("spec.", PV), Paths("", &["status.phase"])],
    ),
    (
        "PersistentVolumeClaim",
        &[
            Paths("spec.", PVC_SPEC),
            Paths(
                "status.",
                &["phase", "capacity", "accessModes", "allocatedResources"],
            ),
        ],
    ),
    (
        "StorageClass",
        &[Paths(
            "",
            &[
                "provisioner",
                "volumeBindingMode",
                "allowedTopologies",
                "reclaimPolicy",
                "allowVolumeExpansion",
            ],
        )],
    ),
    (
        "CSINode",
        &[Paths(
            "spec.drivers.",
            &["name", "nodeID", "topologyKeys", "allocatable"],
        )],
    ),
    (
        "CSIDriver",
        &[Paths(
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
        )],
    ),
    // VolumeBinding's capacity check for drivers that track storage capacity.
    (
        "CSIStorageCapacity",
        &[Paths(
            "",
            &[
                "storageClassName",
                "nodeTopology",
                "capacity",
                "maximumVolumeSize",
            ],
        )],
    ),
    (
        "VolumeAttachment",
        &[
            Paths(
                "spec.",
                &["attacher", "nodeName", "source.persistentVolumeName"],
            ),
            Group("spec.source.inlineVolumeSpec.", PV),
            Paths("", &["status.attached"]),
        ],
    ),
    ("Namespace", &[Paths("", &["status.phase"])]),
    (
        "PodDisruptionBudget",
        &[Paths(
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
        )],
    ),
    (
        "PriorityClass",
        &[Paths("", &["value", "globalDefault", "preemptionPolicy"])],
    ),
    ("Service", &[Paths("", &["spec.selector"])]),
    ("ReplicaSet", REPLICAS),
    ("ReplicationController", REPLICAS),
    (
        "StatefulSet",
        &[
            Paths("spec.", &["selector", "replicas", "serviceName"]),
            Group("spec.template.", POD_TEMPLATE),
            Paths(
                "spec.volumeClaimTemplates.",
                &["apiVersion", "kind", "metadata.name", "metadata.labels"],
            ),
            Paths("spec.volumeClaimTemplates.spec.", PVC_SPEC),
        ],
    ),
    (
        "RuntimeClass",
        &[Paths("", &["handler", "overhead", "scheduling"])],
    ),
    (
        "PodGroup",
        &[Paths(
            "spec.",
            &["minMember", "scheduleTimeoutSeconds", "minResources"],
        )],
    ),
    // DRA: what the structured allocator reads. Opaque driver configuration
    // (`config`) is the driver's business, never the scheduler's, and goes, as
    // does a claim's driver-reported `status.devices` (free text and addresses).
    (
        "DeviceClass",
        &[Paths("spec.", &["selectors", "extendedResourceName"])],
    ),
    (
        "ResourceSlice",
        &[Paths(
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
        )],
    ),
    (
        "ResourceClaim",
        &[
            Paths("spec.devices.", DEVICE_CLAIM),
            Paths(
                "status.",
                &[
                    "allocation.devices.results",
                    "allocation.nodeSelector",
                    "allocation.allocationTimestamp",
                    "reservedFor",
                ],
            ),
        ],
    ),
    (
        "ResourceClaimTemplate",
        &[
            Paths("spec.spec.devices.", DEVICE_CLAIM),
            Paths("", &["spec.metadata.labels"]),
        ],
    ),
];

/// A kind's kept paths, [`META`] last; `None` for a kind `--redact` drops.
fn kind_paths(kind: &str) -> Option<Vec<String>> {
    let mut paths = Vec::new();
    expand("", parts_of(KEPT, kind)?, &mut paths);
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
    let blanked = blanked(kind);
    keep.apply(v);
    for path in blanked {
        blank(v, path);
    }
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

/// Fields the API type requires but no plugin reads, whose values identify the
/// cluster: kept as empty strings so the object still loads, their text dropped. A
/// CSINode driver's `nodeID` (a cloud instance id), a container status's `image` and
/// `imageID` (ImageLocality reads the node's image list, not these), a local
/// volume's `path` (its node affinity is what VolumeBinding reads).
fn blanked(kind: &str) -> &'static [&'static [&'static str]] {
    match kind {
        "Pod" => &[
            &["status", "containerStatuses", "*", "image"],
            &["status", "containerStatuses", "*", "imageID"],
            &["status", "initContainerStatuses", "*", "image"],
            &["status", "initContainerStatuses", "*", "imageID"],
        ],
        "CSINode" => &[&["spec", "drivers", "*", "nodeID"]],
        "PersistentVolume" => &[&["spec", "local", "path"]],
        "VolumeAttachment" => &[&["spec", "source", "inlineVolumeSpec", "local", "path"]],
        _ => &[],
    }
}

/// Sets the string at `path` (`*`: every item of an array) to `""`.
fn blank(v: &mut Value, path: &[&str]) {
    match path {
        [] => {
            if v.is_string() {
                *v = Value::String(String::new());
            }
        }
        ["*", rest @ ..] => {
            if let Value::Array(items) = v {
                for item in items {
                    blank(item, rest);
                }
            }
        }
        [key, rest @ ..] => {
            if let Some(child) = v.get_mut(*key) {
                blank(child, rest);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifying_required_fields_are_blanked() {
        let mut pod = serde_json::json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "namespace": "d"},
            "spec": {"containers": [{"name": "c", "image": "registry.corp/app:1"}]},
            "status": {
                "containerStatuses": [{"name": "c", "image": "registry.corp/app:1",
                    "imageID": "sha256:abc", "ready": true, "restartCount": 0}],
                "initContainerStatuses": [{"name": "i", "image": "x", "imageID": "y",
                    "ready": true, "restartCount": 0}],
                "conditions": [
                    {"type": "PodScheduled", "status": "False", "message": "0/3 nodes"},
                    {"type": "Ready", "status": "False", "message": "secret text"}]
            }
        });
        assert!(redact_object(&mut pod));
        let st = &pod["status"]["containerStatuses"][0];
        assert_eq!(
            (st["image"].as_str(), st["imageID"].as_str()),
            (Some(""), Some(""))
        );
        assert_eq!(pod["status"]["initContainerStatuses"][0]["imageID"], "");
        assert_eq!(pod["status"]["conditions"][0]["message"], "0/3 nodes");
        assert!(pod["status"]["conditions"][1].get("message").is_none());
        let mut csinode = serde_json::json!({
            "apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": "n"},
            "spec": {"drivers": [{"name": "ebs.csi.aws.com", "nodeID": "i-0abc123"}]}
        });
        assert!(redact_object(&mut csinode));
        assert_eq!(csinode["spec"]["drivers"][0]["nodeID"], "");
        assert_eq!(csinode["spec"]["drivers"][0]["name"], "ebs.csi.aws.com");
        let mut pv = serde_json::json!({
            "apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "v"},
            "spec": {"capacity": {"storage": "1Gi"}, "local": {"path": "/mnt/disks/ssd1"}}
        });
        assert!(redact_object(&mut pv));
        assert_eq!(pv["spec"]["local"]["path"], "");
    }

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
