//! VolumeZone (PreFilter, Filter): the zone/region labels of the PVs a pod's bound
//! claims use must match the node's.

use std::collections::BTreeSet;
use std::sync::Arc;

use super::volume_util::{
    LABEL_BETA_REGION, LABEL_BETA_ZONE, LABEL_REGION, LABEL_ZONE, label_zones_to_set, lookup_pvc,
    pv_not_found, pvc_class, pvc_not_found, pvc_volume_name, storage_class_not_found,
};
use crate::engine::framework::{
    Ctx, CycleState, FilterPlugin, Plugin, PreFilterPlugin, PreFilterResult,
};
use crate::engine::status::Status;
use crate::model::{Cluster, NodeInfo, Pod};

pub const NAME: &str = "VolumeZone";
const STATE_KEY: &str = "PreFilterVolumeZone";

pub const ERR_REASON_CONFLICT: &str = "node(s) had no available volume zone";

/// The PV labels considered, in upstream's order.
const TOPOLOGY_LABELS: [&str; 4] = [LABEL_BETA_ZONE, LABEL_BETA_REGION, LABEL_ZONE, LABEL_REGION];

/// One topology label of one PV.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PvTopology {
    /// The PV's name (for causes).
    pub pv: String,
    pub key: &'static str,
    pub values: BTreeSet<String>,
}

#[derive(Clone, Debug, Default)]
struct State {
    topologies: Arc<Vec<PvTopology>>,
}

pub struct VolumeZone;

pub fn new(
    _args: &serde_json::Value,
    _fts: &crate::version::Features,
) -> Result<Arc<dyn Plugin>, String> {
    Ok(Arc::new(VolumeZone))
}

impl Plugin for VolumeZone {
    fn name(&self) -> &str {
        NAME
    }
    fn as_pre_filter(&self) -> Option<&dyn PreFilterPlugin> {
        Some(self)
    }
    fn as_filter(&self) -> Option<&dyn FilterPlugin> {
        Some(self)
    }
}

/// The first PV topology the node's labels do not satisfy (a beta label falls back
/// to its GA name on the node).
pub fn first_conflict<'t>(topologies: &'t [PvTopology], node: &NodeInfo) -> Option<&'t PvTopology> {
    let labels = &node.node.labels;
    // A node without any zone/region label (single-zone clusters) always fits.
    if !TOPOLOGY_LABELS.iter().any(|k| labels.contains_key(k)) {
        return None;
    }
    topologies.iter().find(|t| {
        let value = labels.get(t.key).or_else(|| labels.get(ga_label(t.key)));
        !value.is_some_and(|v| t.values.contains(v.as_str()))
    })
}

/// Beta labels fall back to their GA names on the node.
pub fn ga_label(key: &str) -> &str {
    match key {
        LABEL_BETA_REGION => LABEL_REGION,
        LABEL_BETA_ZONE => LABEL_ZONE,
        other => other,
    }
}

/// `getPVbyPod`: the topologies of the PVs bound to the pod's PVC volumes. Claims of
/// a WaitForFirstConsumer class that are not bound yet are left to VolumeBinding.
pub fn pv_topologies(cluster: &Cluster, pod: &Pod) -> Result<Vec<PvTopology>, Status> {
    let mut out = Vec::new();
    let mut buf = String::new();
    for v in &pod.volumes {
        let Some(claim) = &v.persistent_volume_claim else {
            continue;
        };
        let name = &claim.claim_name;
        if name.is_empty() {
            return Err(Status::unresolvable("PersistentVolumeClaim had no name"));
        }
        let Some(pvc) = lookup_pvc(cluster, &mut buf, &pod.namespace, name) else {
            return Err(Status::unresolvable(pvc_not_found(name)));
        };
        let pv_name = pvc_volume_name(pvc);
        if pv_name.is_empty() {
            let class_name = pvc_class(pvc);
            if class_name.is_empty() {
                return Err(Status::unresolvable(
                    "PersistentVolumeClaim had no pv name and storageClass name",
                ));
            }
            let Some(class) = cluster.storage_classes.get(class_name) else {
                return Err(Status::unresolvable(storage_class_not_found(class_name)));
            };
            match class.volume_binding_mode.as_deref() {
                None => {
                    return Err(Status::unresolvable(format!(
                        "VolumeBindingMode not set for StorageClass {class_name:?}"
                    )));
                }
                Some("WaitForFirstConsumer") => continue,
                Some(_) => return Err(Status::unresolvable("PersistentVolume had no name")),
            }
        }
        let Some(pv) = cluster.persistent_volumes.get(pv_name) else {
            return Err(Status::unresolvable(pv_not_found(pv_name)));
        };
        let Some(labels) = pv.metadata.labels.as_ref() else {
            continue;
        };
        for key in TOPOLOGY_LABELS {
            if let Some(value) = labels.get(key)
                // An unparsable value (an empty zone in the list) is ignored.
                && let Some(values) = label_zones_to_set(value)
            {
                out.push(PvTopology {
                    pv: pv_name.to_string(),
                    key,
                    values,
                });
            }
        }
    }
    Ok(out)
}

impl PreFilterPlugin for VolumeZone {
    fn pre_filter(&self, cx: &Ctx, state: &mut CycleState, pod: &Pod) -> (PreFilterResult, Status) {
        match pv_topologies(cx.cluster, pod) {
            Err(st) => (None, st),
            Ok(t) if t.is_empty() => (None, Status::skip()),
            Ok(t) => {
                state.write(
                    STATE_KEY,
                    State {
                        topologies: Arc::new(t),
                    },
                );
                (None, Status::success())
            }
        }
    }
}

impl FilterPlugin for VolumeZone {
    fn filter(&self, cx: &Ctx, state: &CycleState, pod: &Pod, node: &NodeInfo) -> Status {
        if pod.volumes.is_empty() {
            return Status::success();
        }
        // Without PreFilter state upstream recomputes it here.
        let computed;
        let topologies = match state.read::<State>(STATE_KEY) {
            Some(s) => s.topologies.as_slice(),
            None => match pv_topologies(cx.cluster, pod) {
                Ok(t) => {
                    computed = t;
                    computed.as_slice()
                }
                Err(st) => return st,
            },
        };
        if first_conflict(topologies, node).is_some() {
            return Status::unresolvable(ERR_REASON_CONFLICT);
        }
        Status::success()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::testing::{add_storage_objects as add, cluster, pod};
    use serde_json::{Value, json};

    fn node(name: &str, labels: Value) -> Value {
        json!({"metadata": {"name": name, "labels": labels},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}})
    }

    fn incoming(claims: &[&str]) -> Pod {
        let vols: Vec<Value> = claims
            .iter()
            .map(|c| json!({"name": c, "persistentVolumeClaim": {"claimName": c}}))
            .collect();
        pod(json!({"metadata": {"name": "p", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "i"}], "volumes": vols}}))
    }

    fn pvc(name: &str, volume: Option<&str>, class: Option<&str>) -> Value {
        let mut v = json!({"kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": "default"}, "spec": {}});
        if let Some(pv) = volume {
            v["spec"]["volumeName"] = json!(pv);
        }
        if let Some(c) = class {
            v["spec"]["storageClassName"] = json!(c);
        }
        v
    }

    fn pv(name: &str, labels: Value) -> Value {
        json!({"kind": "PersistentVolume", "metadata": {"name": name, "labels": labels}, "spec": {}})
    }

    fn class(name: &str, mode: Option<&str>) -> Value {
        let mut v = json!({"kind": "StorageClass", "metadata": {"name": name},
            "provisioner": "x"});
        if let Some(m) = mode {
            v["volumeBindingMode"] = json!(m);
        }
        v
    }

    fn base() -> Cluster {
        cluster(
            vec![
                node("a", json!({LABEL_ZONE: "zone-a", LABEL_REGION: "r1"})),
                node("b", json!({LABEL_ZONE: "zone-b", LABEL_REGION: "r1"})),
                node("beta-a", json!({LABEL_BETA_ZONE: "zone-a"})),
                node("plain", json!({"kubernetes.io/hostname": "plain"})),
            ],
            vec![],
        )
    }

    fn run(c: &Cluster, p: &Pod) -> Result<Vec<Status>, Status> {
        let cx = Ctx {
            cluster: c,
            now: Default::default(),
        };
        let mut state = CycleState::default();
        let (_, pre) = VolumeZone.pre_filter(&cx, &mut state, p);
        if !pre.is_success() {
            return Err(pre);
        }
        Ok(c.nodes()
            .iter()
            .map(|n| VolumeZone.filter(&cx, &state, p, n))
            .collect())
    }

    #[test]
    fn prefilter_statuses() {
        let mut c = base();
        add(
            &mut c,
            vec![
                pvc("noclass", None, None),
                pvc("nomode", None, Some("nomode")),
                class("nomode", None),
                pvc("wffc", None, Some("wffc")),
                class("wffc", Some("WaitForFirstConsumer")),
                pvc("imm", None, Some("imm")),
                class("imm", Some("Immediate")),
                pvc("ghostclass", None, Some("ghost")),
                pvc("ghostpv", Some("ghost"), None),
                pvc("unlabelled", Some("pv0"), None),
                pv("pv0", json!({})),
            ],
        );
        let cases: [(&[&str], Status); 9] = [
            (
                &[""],
                Status::unresolvable("PersistentVolumeClaim had no name"),
            ),
            (
                &["missing"],
                Status::unresolvable("persistentvolumeclaim \"missing\" not found"),
            ),
            (
                &["noclass"],
                Status::unresolvable("PersistentVolumeClaim had no pv name and storageClass name"),
            ),
            (
                &["nomode"],
                Status::unresolvable("VolumeBindingMode not set for StorageClass \"nomode\""),
            ),
            (&["wffc"], Status::skip()),
            (
                &["imm"],
                Status::unresolvable("PersistentVolume had no name"),
            ),
            (
                &["ghostclass"],
                Status::unresolvable("storageclass.storage.k8s.io \"ghost\" not found"),
            ),
            (
                &["ghostpv"],
                Status::unresolvable("persistentvolume \"ghost\" not found"),
            ),
            (&["unlabelled"], Status::skip()),
        ];
        for (claims, want) in cases {
            assert_eq!(run(&c, &incoming(claims)).unwrap_err(), want, "{claims:?}");
        }
    }

    #[test]
    fn zone_matching() {
        let mut c = base();
        add(
            &mut c,
            vec![
                pvc("multi", Some("pv-multi"), None),
                pv(
                    "pv-multi",
                    json!({LABEL_ZONE: "zone-a__zone-c", LABEL_REGION: "r1"}),
                ),
                pvc("beta", Some("pv-beta"), None),
                pv("pv-beta", json!({LABEL_BETA_ZONE: "zone-b"})),
                pvc("bad", Some("pv-bad"), None),
                pv("pv-bad", json!({LABEL_ZONE: "zone-a__"})),
            ],
        );
        let ok = Status::success();
        let no = Status::unresolvable(ERR_REASON_CONFLICT);
        // Nodes: a, b, beta-a, plain (no zone labels: always fits).
        let got = run(&c, &incoming(&["multi"])).unwrap();
        assert_eq!(got, vec![ok.clone(), no.clone(), no.clone(), ok.clone()]);
        // A beta PV label falls back to the node's GA label; the beta node has no region
        // label so a GA zone key is looked up on it in vain.
        let got = run(&c, &incoming(&["beta"])).unwrap();
        assert_eq!(got, vec![no.clone(), ok.clone(), no.clone(), ok.clone()]);
        // An invalid label value is ignored: nothing to check.
        assert_eq!(run(&c, &incoming(&["bad"])).unwrap_err(), Status::skip());
    }

    #[test]
    fn wffc_claims_ignored_alongside_bound_ones() {
        let mut c = base();
        add(
            &mut c,
            vec![
                pvc("wffc", None, Some("wffc")),
                class("wffc", Some("WaitForFirstConsumer")),
                pvc("multi", Some("pv-multi"), None),
                pv("pv-multi", json!({LABEL_ZONE: "zone-b"})),
            ],
        );
        let got = run(&c, &incoming(&["wffc", "multi"])).unwrap();
        assert_eq!(got[1], Status::success());
        assert_eq!(got[0], Status::unresolvable(ERR_REASON_CONFLICT));
    }
}
