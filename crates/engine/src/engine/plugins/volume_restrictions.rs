//! VolumeRestrictions (PreFilter + AddPod/RemovePod, Filter): a GCE PD / AWS EBS /
//! iSCSI / RBD disk already mounted by a pod on the node, and ReadWriteOncePod claims
//! already in use by any scheduled pod.

use std::collections::BTreeSet;
use std::sync::Arc;

use k8s_openapi::api::core::v1 as core;

use super::volume_util::{lookup_pvc, pvc_not_found};
use crate::engine::framework::{
    Ctx, CycleState, FilterPlugin, Plugin, PreFilterPlugin, PreFilterResult,
};
use crate::engine::status::Status;
use crate::model::{Cluster, NodeInfo, Pod};

pub const NAME: &str = "VolumeRestrictions";
const STATE_KEY: &str = "PreFilterVolumeRestrictions";

pub const ERR_REASON_DISK_CONFLICT: &str = "node(s) had no available disk";
pub const ERR_REASON_RWOP_CONFLICT: &str = "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another pod";

#[derive(Clone, Debug, Default)]
struct PreFilterState {
    /// Claim names (in the pod's namespace) with the ReadWriteOncePod access mode.
    rwop_claims: Arc<BTreeSet<String>>,
    /// References to those claims by scheduled pods.
    conflicting: i64,
}

impl PreFilterState {
    /// Upstream compares claim names only, not namespaces, when pods are added or
    /// removed during preemption and nominated-pod evaluation.
    fn update_with_pod(&mut self, pod: &Pod, multiplier: i64) {
        let n = pod
            .volumes
            .iter()
            .filter_map(|v| v.persistent_volume_claim.as_ref())
            .filter(|c| self.rwop_claims.contains(&c.claim_name))
            .count() as i64;
        self.conflicting += multiplier * n;
    }
}

#[derive(Default)]
pub struct VolumeRestrictions {
    /// The ReadWriteOncePod reason before 1.34.
    old_rwop_reason: bool,
}

/// `ErrReasonReadWriteOncePodConflict` before 1.34.
pub const ERR_REASON_RWOP_CONFLICT_1_33: &str =
    "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode";

pub fn new(
    _args: &serde_json::Value,
    fts: &crate::version::Features,
) -> Result<Arc<dyn Plugin>, String> {
    Ok(Arc::new(VolumeRestrictions {
        old_rwop_reason: fts.old_read_write_once_pod_reason(),
    }))
}

impl Plugin for VolumeRestrictions {
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

/// Volumes whose sharing rules this plugin checks.
pub fn needs_restrictions_check(v: &core::Volume) -> bool {
    v.gce_persistent_disk.is_some()
        || v.aws_elastic_block_store.is_some()
        || v.rbd.is_some()
        || v.iscsi.is_some()
}

/// `IsPVCUsedByPods`: a pod assigned to a node references `namespace/claim` through a
/// persistentVolumeClaim volume.
fn pvc_used_by_pods(cluster: &Cluster, key: &str, namespace: &str, claim: &str) -> bool {
    cluster.nodes().iter().any(|n| {
        // The node's ref counts also include generic ephemeral claims, which upstream's
        // do not; confirm with the pods themselves on a hit.
        n.pvc_ref_counts.contains_key(key)
            && n.pods.iter().any(|p| {
                p.namespace == namespace
                    && p.volumes.iter().any(|v| {
                        v.persistent_volume_claim
                            .as_ref()
                            .is_some_and(|c| c.claim_name == claim)
                    })
            })
    })
}

fn rbd_pool(r: &core::RBDVolumeSource) -> &str {
    // API defaulting: an RBD volume without a pool uses "rbd".
    r.pool.as_deref().unwrap_or("rbd")
}

/// `isVolumeConflict`: `volume` of the incoming pod against every volume of `pod`.
pub fn is_volume_conflict(volume: &core::Volume, pod: &Pod) -> bool {
    pod.volumes.iter().any(|ev| {
        if let (Some(d), Some(ed)) = (&volume.gce_persistent_disk, &ev.gce_persistent_disk)
            && d.pd_name == ed.pd_name
            && !(d.read_only.unwrap_or(false) && ed.read_only.unwrap_or(false))
        {
            return true;
        }
        if let (Some(d), Some(ed)) = (&volume.aws_elastic_block_store, &ev.aws_elastic_block_store)
            && d.volume_id == ed.volume_id
        {
            return true;
        }
        if let (Some(d), Some(ed)) = (&volume.iscsi, &ev.iscsi)
            && d.iqn == ed.iqn
            && !(d.read_only.unwrap_or(false) && ed.read_only.unwrap_or(false))
        {
            return true;
        }
        if let (Some(d), Some(ed)) = (&volume.rbd, &ev.rbd)
            && d.monitors.iter().any(|m| ed.monitors.contains(m))
            && rbd_pool(d) == rbd_pool(ed)
            && d.image == ed.image
            && !(d.read_only.unwrap_or(false) && ed.read_only.unwrap_or(false))
        {
            return true;
        }
        false
    })
}

impl PreFilterPlugin for VolumeRestrictions {
    fn pre_filter(&self, cx: &Ctx, state: &mut CycleState, pod: &Pod) -> (PreFilterResult, Status) {
        let needs_check = pod.volumes.iter().any(needs_restrictions_check);
        let mut buf = String::new();
        let mut rwop = BTreeSet::new();
        for v in &pod.volumes {
            let Some(claim) = &v.persistent_volume_claim else {
                continue;
            };
            let Some(pvc) = lookup_pvc(cx.cluster, &mut buf, &pod.namespace, &claim.claim_name)
            else {
                return (None, Status::unresolvable(pvc_not_found(&claim.claim_name)));
            };
            let modes = pvc.spec.as_ref().and_then(|s| s.access_modes.as_ref());
            if modes.is_some_and(|m| m.iter().any(|m| m == "ReadWriteOncePod")) {
                rwop.insert(pvc.metadata.name.clone().unwrap_or_default());
            }
        }
        let mut conflicting = 0;
        for claim in &rwop {
            let key = format!("{}/{claim}", pod.namespace);
            if pvc_used_by_pods(cx.cluster, &key, &pod.namespace, claim) {
                // At most one pod can use a ReadWriteOncePod claim.
                conflicting += 1;
            }
        }
        if !needs_check && conflicting == 0 {
            return (None, Status::skip());
        }
        state.write(
            STATE_KEY,
            PreFilterState {
                rwop_claims: Arc::new(rwop),
                conflicting,
            },
        );
        (None, Status::success())
    }

    fn has_extensions(&self) -> bool {
        true
    }

    fn add_pod(
        &self,
        _cx: &Ctx,
        state: &mut CycleState,
        _pod: &Pod,
        to_add: &Arc<Pod>,
        _node: &NodeInfo,
    ) -> Status {
        match state.read_mut::<PreFilterState>(STATE_KEY) {
            Some(s) => {
                s.update_with_pod(to_add, 1);
                Status::success()
            }
            None => state_error(),
        }
    }

    fn remove_pod(
        &self,
        _cx: &Ctx,
        state: &mut CycleState,
        _pod: &Pod,
        to_remove: &Arc<Pod>,
        _node: &NodeInfo,
    ) -> Status {
        match state.read_mut::<PreFilterState>(STATE_KEY) {
            Some(s) => {
                s.update_with_pod(to_remove, -1);
                Status::success()
            }
            None => state_error(),
        }
    }
}

fn state_error() -> Status {
    Status::error(format!("cannot read {STATE_KEY:?} from cycleState"))
}

impl FilterPlugin for VolumeRestrictions {
    fn filter(&self, _cx: &Ctx, state: &CycleState, pod: &Pod, node: &NodeInfo) -> Status {
        for v in pod.volumes.iter().filter(|v| needs_restrictions_check(v)) {
            if node.pods.iter().any(|ev| is_volume_conflict(v, ev)) {
                return Status::unschedulable(ERR_REASON_DISK_CONFLICT);
            }
        }
        let Some(s) = state.read::<PreFilterState>(STATE_KEY) else {
            return state_error();
        };
        if s.conflicting > 0 {
            return Status::unschedulable(if self.old_rwop_reason {
                ERR_REASON_RWOP_CONFLICT_1_33
            } else {
                ERR_REASON_RWOP_CONFLICT
            });
        }
        Status::success()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::status::Code;
    use crate::model::testing::{cluster, pod, simple_node};
    use k8s_openapi::api::core::v1::PersistentVolumeClaim;
    use serde_json::{Value, json};

    fn pod_with(name: &str, node: Option<&str>, volumes: Value) -> Value {
        let mut p = json!({
            "metadata": {"name": name, "namespace": "default", "uid": format!("uid-{name}")},
            "spec": {"containers": [{"name": "c", "image": "i"}], "volumes": volumes}
        });
        if let Some(n) = node {
            p["spec"]["nodeName"] = json!(n);
        }
        p
    }

    fn pvc(name: &str, modes: &[&str]) -> PersistentVolumeClaim {
        serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"accessModes": modes}
        }))
        .unwrap()
    }

    fn add_pvc(c: &mut crate::model::Cluster, p: PersistentVolumeClaim) {
        let key = format!("default/{}", p.metadata.name.clone().unwrap());
        c.persistent_volume_claims.insert(key, p);
    }

    fn run(c: &crate::model::Cluster, incoming: &Pod) -> (Status, Vec<Status>) {
        let cx = Ctx {
            cluster: c,
            now: Default::default(),
        };
        let mut state = CycleState::default();
        let (_, pre) = VolumeRestrictions::default().pre_filter(&cx, &mut state, incoming);
        if !pre.is_success() {
            return (pre, Vec::new());
        }
        let per_node = c
            .nodes()
            .iter()
            .map(|n| VolumeRestrictions::default().filter(&cx, &state, incoming, n))
            .collect();
        (pre, per_node)
    }

    #[test]
    fn disk_conflicts() {
        let gce = |pd: &str, ro: bool| json!({"name": "g", "gcePersistentDisk": {"pdName": pd, "readOnly": ro}});
        let ebs = |id: &str| json!({"name": "e", "awsElasticBlockStore": {"volumeID": id}});
        let iscsi = |iqn: &str, ro: bool| {
            json!({"name": "i", "iscsi": {"iqn": iqn, "lun": 0,
            "targetPortal": "p", "readOnly": ro}})
        };
        let rbd = |mons: &[&str], pool: Option<&str>, image: &str, ro: bool| {
            let mut v =
                json!({"name": "r", "rbd": {"monitors": mons, "image": image, "readOnly": ro}});
            if let Some(p) = pool {
                v["rbd"]["pool"] = json!(p);
            }
            v
        };
        // (existing volume, incoming volume, conflict?)
        let cases = [
            (gce("d1", false), gce("d1", false), true),
            (gce("d1", true), gce("d1", false), true),
            (gce("d1", true), gce("d1", true), false),
            (gce("d1", false), gce("d2", false), false),
            (ebs("v1"), ebs("v1"), true),
            (ebs("v1"), ebs("v2"), false),
            (iscsi("iqn.a", false), iscsi("iqn.a", false), true),
            (iscsi("iqn.a", true), iscsi("iqn.a", true), false),
            (iscsi("iqn.a", false), iscsi("iqn.b", false), false),
            (
                rbd(&["m1", "m2"], None, "img", false),
                rbd(&["m2"], Some("rbd"), "img", false),
                true,
            ),
            (
                rbd(&["m1"], None, "img", false),
                rbd(&["m2"], None, "img", false),
                false,
            ),
            (
                rbd(&["m1"], Some("p1"), "img", false),
                rbd(&["m1"], Some("p2"), "img", false),
                false,
            ),
            (
                rbd(&["m1"], None, "img", false),
                rbd(&["m1"], None, "other", false),
                false,
            ),
            (
                rbd(&["m1"], None, "img", true),
                rbd(&["m1"], None, "img", true),
                false,
            ),
            (gce("d1", false), ebs("d1"), false),
        ];
        for (existing, incoming, conflict) in cases {
            let c = cluster(
                vec![simple_node("n1", "4", "8Gi"), simple_node("n2", "4", "8Gi")],
                vec![pod_with("old", Some("n1"), json!([existing.clone()]))],
            );
            let p = pod(pod_with("new", None, json!([incoming.clone()])));
            let (pre, nodes) = run(&c, &p);
            assert!(pre.is_success(), "{incoming}");
            let want = if conflict {
                Status::unschedulable(ERR_REASON_DISK_CONFLICT)
            } else {
                Status::success()
            };
            assert_eq!(nodes[0], want, "{existing} vs {incoming}");
            assert_eq!(nodes[1], Status::success());
        }
    }

    #[test]
    fn read_write_once_pod_in_use() {
        let claim = json!([{"name": "s", "persistentVolumeClaim": {"claimName": "shared"}}]);
        let mut c = cluster(
            vec![simple_node("n1", "4", "8Gi"), simple_node("n2", "4", "8Gi")],
            vec![pod_with("holder", Some("n2"), claim.clone())],
        );
        add_pvc(&mut c, pvc("shared", &["ReadWriteOncePod"]));
        add_pvc(&mut c, pvc("rwo", &["ReadWriteOnce"]));
        let incoming = pod(pod_with("new", None, claim.clone()));
        let (pre, nodes) = run(&c, &incoming);
        assert!(pre.is_success());
        // Every node is rejected, Unschedulable so that preemption may help.
        for st in &nodes {
            assert_eq!(*st, Status::unschedulable(ERR_REASON_RWOP_CONFLICT));
            assert_eq!(st.code, Code::Unschedulable);
        }

        // Removing the holder (preemption dry run) clears the conflict; adding it back
        // restores it.
        let cx = Ctx {
            cluster: &c,
            now: Default::default(),
        };
        let mut state = CycleState::default();
        VolumeRestrictions::default().pre_filter(&cx, &mut state, &incoming);
        let n2 = c.node("n2").unwrap();
        let holder = n2.pods[0].clone();
        assert!(
            VolumeRestrictions::default()
                .remove_pod(&cx, &mut state, &incoming, &holder, n2)
                .is_success()
        );
        assert!(
            VolumeRestrictions::default()
                .filter(&cx, &state, &incoming, n2)
                .is_success()
        );
        VolumeRestrictions::default().add_pod(&cx, &mut state, &incoming, &holder, n2);
        assert_eq!(
            VolumeRestrictions::default().filter(&cx, &state, &incoming, n2),
            Status::unschedulable(ERR_REASON_RWOP_CONFLICT)
        );

        // A ReadWriteOnce claim in use is no conflict, and with nothing else to check
        // the plugin skips.
        let other = pod(pod_with(
            "new2",
            None,
            json!([{"name": "s", "persistentVolumeClaim": {"claimName": "rwo"}}]),
        ));
        let (pre, _) = run(&c, &other);
        assert_eq!(pre, Status::skip());
    }

    #[test]
    fn unused_rwop_claim_skips() {
        let mut c = cluster(vec![simple_node("n1", "4", "8Gi")], vec![]);
        add_pvc(&mut c, pvc("shared", &["ReadWriteOncePod"]));
        let p = pod(pod_with(
            "new",
            None,
            json!([{"name": "s", "persistentVolumeClaim": {"claimName": "shared"}}]),
        ));
        assert_eq!(run(&c, &p).0, Status::skip());
    }

    #[test]
    fn rwop_in_other_namespace_is_not_in_use() {
        let mut c = cluster(
            vec![simple_node("n1", "4", "8Gi")],
            vec![json!({
                "metadata": {"name": "holder", "namespace": "other", "uid": "u"},
                "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "i"}],
                    "volumes": [{"name": "s", "persistentVolumeClaim": {"claimName": "shared"}}]}
            })],
        );
        add_pvc(&mut c, pvc("shared", &["ReadWriteOncePod"]));
        let p = pod(pod_with(
            "new",
            None,
            json!([{"name": "s", "persistentVolumeClaim": {"claimName": "shared"}}]),
        ));
        assert_eq!(run(&c, &p).0, Status::skip());
    }

    #[test]
    fn missing_pvc_is_unresolvable() {
        let c = cluster(vec![simple_node("n1", "4", "8Gi")], vec![]);
        let p = pod(pod_with(
            "new",
            None,
            json!([{"name": "s", "persistentVolumeClaim": {"claimName": "nope"}}]),
        ));
        assert_eq!(
            run(&c, &p).0,
            Status::unresolvable("persistentvolumeclaim \"nope\" not found")
        );
    }

    #[test]
    fn no_volumes_skip() {
        let c = cluster(vec![simple_node("n1", "4", "8Gi")], vec![]);
        let p = pod(pod_with(
            "new",
            None,
            json!([{"name": "e", "emptyDir": {}}]),
        ));
        assert_eq!(run(&c, &p).0, Status::skip());
    }
}
