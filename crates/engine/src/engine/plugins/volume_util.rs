//! Volume helpers the storage plugins share, as `k8s.io/component-helpers/storage`
//! (`volume`, `ephemeral`) and the listers' NotFound errors define them.

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1 as core;

use crate::model::labels::{Labels, NodeSelector, Op};
use crate::model::{Cluster, Pod, Quantity};

/// PVC annotation the PV controller sets once binding is complete.
pub const ANN_BIND_COMPLETED: &str = "pv.kubernetes.io/bind-completed";
/// PVC annotation naming the node chosen for dynamic provisioning.
pub const ANN_SELECTED_NODE: &str = "volume.kubernetes.io/selected-node";
/// Legacy storage-class annotation, preferred over `spec.storageClassName`.
pub const ANN_BETA_STORAGE_CLASS: &str = "volume.beta.kubernetes.io/storage-class";
/// Provisioner of classes that cannot provision dynamically.
pub const NOT_SUPPORTED_PROVISIONER: &str = "kubernetes.io/no-provisioner";
/// CSINode annotation listing the in-tree plugins migrated to CSI on that node.
pub const ANN_MIGRATED_PLUGINS: &str = "storage.alpha.kubernetes.io/migrated-plugins";

pub const LABEL_BETA_ZONE: &str = "failure-domain.beta.kubernetes.io/zone";
pub const LABEL_BETA_REGION: &str = "failure-domain.beta.kubernetes.io/region";
pub const LABEL_ZONE: &str = "topology.kubernetes.io/zone";
pub const LABEL_REGION: &str = "topology.kubernetes.io/region";

/// The listers' NotFound texts (`errors.NewNotFound(resource, name)`).
pub fn pvc_not_found(name: &str) -> String {
    format!("persistentvolumeclaim {name:?} not found")
}
pub fn pv_not_found(name: &str) -> String {
    format!("persistentvolume {name:?} not found")
}
pub fn storage_class_not_found(name: &str) -> String {
    format!("storageclass.storage.k8s.io {name:?} not found")
}

/// A PVC by namespace and name. `buf` is reused so lookups in hot loops do not
/// allocate.
pub fn lookup_pvc<'c>(
    cluster: &'c Cluster,
    buf: &mut String,
    namespace: &str,
    name: &str,
) -> Option<&'c core::PersistentVolumeClaim> {
    buf.clear();
    buf.push_str(namespace);
    buf.push('/');
    buf.push_str(name);
    cluster.persistent_volume_claims.get(buf.as_str())
}

/// `GetPersistentVolumeClaimClass`: the beta annotation wins over the field.
pub fn pvc_class(pvc: &core::PersistentVolumeClaim) -> &str {
    if let Some(c) = pvc
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(ANN_BETA_STORAGE_CLASS))
    {
        return c;
    }
    pvc.spec
        .as_ref()
        .and_then(|s| s.storage_class_name.as_deref())
        .unwrap_or("")
}

/// `GetPersistentVolumeClass`.
pub fn pv_class(pv: &core::PersistentVolume) -> &str {
    if let Some(c) = pv
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(ANN_BETA_STORAGE_CLASS))
    {
        return c;
    }
    pv.spec
        .as_ref()
        .and_then(|s| s.storage_class_name.as_deref())
        .unwrap_or("")
}

pub fn pvc_volume_name(pvc: &core::PersistentVolumeClaim) -> &str {
    pvc.spec
        .as_ref()
        .and_then(|s| s.volume_name.as_deref())
        .unwrap_or("")
}

pub fn pvc_name(pvc: &core::PersistentVolumeClaim) -> &str {
    pvc.metadata.name.as_deref().unwrap_or("")
}

pub fn pvc_namespace(pvc: &core::PersistentVolumeClaim) -> &str {
    pvc.metadata.namespace.as_deref().unwrap_or("")
}

pub fn has_annotation(
    meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
    key: &str,
) -> bool {
    meta.annotations
        .as_ref()
        .is_some_and(|a| a.contains_key(key))
}

/// `spec.resources.requests.storage`; `None` when absent (or unparsable, which the
/// API server would have refused).
pub fn pvc_request(pvc: &core::PersistentVolumeClaim) -> Option<Quantity> {
    let q = pvc
        .spec
        .as_ref()?
        .resources
        .as_ref()?
        .requests
        .as_ref()?
        .get("storage")?;
    Quantity::parse(&q.0).ok()
}

/// `spec.capacity.storage`, zero when absent.
pub fn pv_capacity(pv: &core::PersistentVolume) -> Quantity {
    pv.spec
        .as_ref()
        .and_then(|s| s.capacity.as_ref())
        .and_then(|c| c.get("storage"))
        .and_then(|q| Quantity::parse(&q.0).ok())
        .unwrap_or_default()
}

/// `ephemeral.VolumeClaimName`: `<pod>-<volume>`.
pub fn ephemeral_claim_name(pod: &Pod, vol: &core::Volume) -> String {
    format!("{}-{}", pod.name, vol.name)
}

/// `ephemeral.VolumeIsForPod`: the claim of a generic ephemeral volume must be
/// controlled by the pod.
pub fn volume_is_for_pod(pod: &Pod, pvc: &core::PersistentVolumeClaim) -> Result<(), String> {
    let controlled = pvc
        .metadata
        .owner_references
        .iter()
        .flatten()
        .any(|o| o.controller == Some(true) && o.uid == pod.uid);
    if controlled {
        Ok(())
    } else {
        Err(format!(
            "PVC {}/{} was not created for pod {}/{} (pod is not owner)",
            pvc_namespace(pvc),
            pvc_name(pvc),
            pod.namespace,
            pod.name
        ))
    }
}

/// A PV's required node affinity, parsed once (`volume.CheckNodeAffinity`).
#[derive(Clone, Debug)]
pub struct PvAffinity(Option<NodeSelector>);

impl PvAffinity {
    pub fn of(affinity: Option<&core::VolumeNodeAffinity>) -> PvAffinity {
        PvAffinity(
            affinity
                .and_then(|a| a.required.as_ref())
                .map(NodeSelector::parse),
        )
    }

    pub fn of_pv(pv: &core::PersistentVolume) -> PvAffinity {
        PvAffinity::of(pv.spec.as_ref().and_then(|s| s.node_affinity.as_ref()))
    }

    /// A label requirement every matching node must satisfy by having one of
    /// `values` under `key`: the first `In` of a single-term affinity.
    pub fn index_hint(&self) -> Option<(&str, &[String])> {
        let sel = self.0.as_ref()?;
        let [term] = sel.terms.as_slice() else {
            return None;
        };
        if !term.valid {
            return None;
        }
        term.labels
            .iter()
            .find(|r| r.op == Op::In)
            .map(|r| (r.key.as_str(), r.values.as_slice()))
    }

    /// Upstream matches against a node made of the labels only (no name), so a
    /// `metadata.name` field requirement never selects it.
    pub fn matches(&self, labels: &Labels) -> bool {
        match &self.0 {
            None => true,
            Some(sel) => sel.matches("", labels),
        }
    }
}

/// `volumehelpers.LabelZonesToSet`: `a__b` → {a, b}; an empty element makes the
/// whole label invalid (`None`).
pub fn label_zones_to_set(value: &str) -> Option<BTreeSet<String>> {
    let mut out = BTreeSet::new();
    for z in value.split("__") {
        let z = z.trim();
        if z.is_empty() {
            return None;
        }
        out.insert(z.to_string());
    }
    Some(out)
}

/// The in-tree plugins a CSINode says are migrated on its node.
pub fn migrated_plugins(csi_node: Option<&k8s_openapi::api::storage::v1::CSINode>) -> Vec<&str> {
    csi_node
        .and_then(|c| c.metadata.annotations.as_ref())
        .and_then(|a| a.get(ANN_MIGRATED_PLUGINS))
        .filter(|s| !s.is_empty())
        .map(|s| s.split(',').collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn class_annotation_wins_over_field() {
        let pvc: core::PersistentVolumeClaim = serde_json::from_value(json!({
            "metadata": {"name": "c", "annotations": {ANN_BETA_STORAGE_CLASS: "beta"}},
            "spec": {"storageClassName": "ga"}
        }))
        .unwrap();
        assert_eq!(pvc_class(&pvc), "beta");
        let pvc: core::PersistentVolumeClaim =
            serde_json::from_value(json!({"metadata": {"name": "c"}, "spec": {}})).unwrap();
        assert_eq!(pvc_class(&pvc), "");
    }

    #[test]
    fn zones_label_parsing() {
        let set = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>();
        assert_eq!(label_zones_to_set("a__ b "), Some(set(&["a", "b"])));
        assert_eq!(label_zones_to_set("a"), Some(set(&["a"])));
        assert_eq!(label_zones_to_set("a__"), None);
        assert_eq!(label_zones_to_set(""), None);
    }

    #[test]
    fn pv_affinity_matches_like_check_node_affinity() {
        let labels: Labels = [("zone".to_string(), "a".to_string())].into();
        assert!(PvAffinity::of(None).matches(&labels));
        let aff: core::VolumeNodeAffinity = serde_json::from_value(json!({"required": {
            "nodeSelectorTerms": [{"matchExpressions": [
                {"key": "zone", "operator": "In", "values": ["a"]}]}]}}))
        .unwrap();
        assert!(PvAffinity::of(Some(&aff)).matches(&labels));
        let other: Labels = [("zone".to_string(), "b".to_string())].into();
        assert!(!PvAffinity::of(Some(&aff)).matches(&other));
        // A name field requirement never matches: upstream's node has no name.
        let by_name: core::VolumeNodeAffinity = serde_json::from_value(json!({"required": {
            "nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}}))
        .unwrap();
        assert!(!PvAffinity::of(Some(&by_name)).matches(&labels));
        // No terms: nothing matches.
        let empty: core::VolumeNodeAffinity =
            serde_json::from_value(json!({"required": {"nodeSelectorTerms": []}})).unwrap();
        assert!(!PvAffinity::of(Some(&empty)).matches(&labels));
    }
}
