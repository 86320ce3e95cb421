//! The object kinds schedscope reads, in one table: the apiVersion each is read at and
//! whether it is namespaced. The snapshot decoder and redaction look kinds up here, so
//! a kind added once is known to both.

/// One kind the loader reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Kind {
    pub name: &'static str,
    pub api_version: &'static str,
    pub namespaced: bool,
}

const fn kind(name: &'static str, api_version: &'static str, namespaced: bool) -> Kind {
    Kind {
        name,
        api_version,
        namespaced,
    }
}

/// Every kind read, in the order `snapshot save` and `--redact` list them.
pub const KINDS: &[Kind] = &[
    kind("Pod", "v1", true),
    kind("Node", "v1", false),
    kind("PersistentVolume", "v1", false),
    kind("PersistentVolumeClaim", "v1", true),
    kind("StorageClass", "storage.k8s.io/v1", false),
    kind("CSINode", "storage.k8s.io/v1", false),
    kind("CSIDriver", "storage.k8s.io/v1", false),
    kind("VolumeAttachment", "storage.k8s.io/v1", false),
    kind("CSIStorageCapacity", "storage.k8s.io/v1", true),
    kind("Namespace", "v1", false),
    kind("PodDisruptionBudget", "policy/v1", true),
    kind("PriorityClass", "scheduling.k8s.io/v1", false),
    kind("Service", "v1", true),
    kind("ReplicaSet", "apps/v1", true),
    kind("StatefulSet", "apps/v1", true),
    kind("ReplicationController", "v1", true),
    kind("RuntimeClass", "node.k8s.io/v1", false),
    kind("PodGroup", "scheduling.x-k8s.io/v1alpha1", true),
    kind("DeviceClass", "resource.k8s.io/v1", false),
    kind("ResourceSlice", "resource.k8s.io/v1", false),
    kind("ResourceClaim", "resource.k8s.io/v1", true),
    kind("ResourceClaimTemplate", "resource.k8s.io/v1", true),
];

/// The kind named `name`, when it is read.
pub fn lookup(name: &str) -> Option<&'static Kind> {
    KINDS.iter().find(|k| k.name == name)
}

/// Whether objects of `name` live in a namespace (unknown kinds do not).
pub fn namespaced(name: &str) -> bool {
    lookup(name).is_some_and(|k| k.namespaced)
}
