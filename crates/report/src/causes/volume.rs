//! The volume plugins: VolumeBinding (which claim, and why no PV binds or gets
//! provisioned on the node), VolumeZone (which PV's zone), VolumeRestrictions (the
//! disk or ReadWriteOncePod claim in use, and by which pod), NodeVolumeLimits (the
//! driver, attached + new against its limit). Each through the plugin's own check.

use std::collections::BTreeMap;

use crate::format::bytes;
use k8s_openapi::api::core::v1 as core;
use schedscope_engine::engine::plugins::node_volume_limits::{attachments_by_node, first_exceeded};
use schedscope_engine::engine::plugins::volume_binding::{Culprit, node_culprits};
use schedscope_engine::engine::plugins::volume_restrictions::{
    is_volume_conflict, needs_restrictions_check,
};
use schedscope_engine::engine::plugins::volume_util::lookup_pvc;
use schedscope_engine::engine::plugins::volume_zone::{first_conflict, ga_label, pv_topologies};
use schedscope_engine::model::{Cluster, NodeInfo, Pod};

pub fn binding(cluster: &Cluster, pod: &Pod, node: &NodeInfo) -> Vec<String> {
    node_culprits(cluster, pod, node)
        .into_iter()
        .map(|c| match c {
            Culprit::BoundPvAffinity { claim, pv } => {
                format!("claim {claim}: bound PV {pv} has node affinity the node does not match")
            }
            Culprit::BoundPvMissing { claim, pv } => {
                format!("claim {claim}: bound to PV {pv}, which does not exist")
            }
            Culprit::SelectedElsewhere { claim, node } => format!(
                "claim {claim}: provisioning already started for node {node} (selected-node annotation)"
            ),
            Culprit::NoVolume {
                claim,
                class,
                request,
                candidates,
                reachable,
                unsupported,
            } => {
                let request = bytes(request);
                let pvs = match (candidates, reachable) {
                    (0, _) => format!("no available PV of class {class} holds {request}"),
                    (1, 0) => format!(
                        "the one available PV of class {class} holding {request} has node affinity the node does not match"
                    ),
                    (n, 0) => format!(
                        "none of the {n} available PVs of class {class} holding {request} has node affinity the node matches"
                    ),
                    (_, k) => format!(
                        "the {k} available PV{} of class {class} holding {request} on the node go{} to the pod's other claims",
                        crate::plural(k),
                        if k == 1 { "es" } else { "" }
                    ),
                };
                let provision = if unsupported {
                    format!("class {class} cannot provision (no provisioner)")
                } else {
                    format!("class {class}'s allowedTopologies exclude the node")
                };
                format!("claim {claim} (unbound): {pvs}, and {provision}")
            }
            Culprit::NoCapacity {
                claim,
                class,
                request,
            } => format!(
                "claim {claim} (unbound): no CSIStorageCapacity of class {class} with room for {} covers the node",
                bytes(request)
            ),
        })
        .collect()
}

pub fn zone(cluster: &Cluster, pod: &Pod, node: &NodeInfo) -> Vec<String> {
    let Ok(topologies) = pv_topologies(cluster, pod) else {
        return Vec::new();
    };
    let Some(t) = first_conflict(&topologies, node) else {
        return Vec::new();
    };
    let labels = &node.node.labels;
    let has = match labels.get(t.key).map(|v| (t.key, v)).or_else(|| {
        let ga = ga_label(t.key);
        labels.get(ga).map(|v| (ga, v))
    }) {
        Some((k, v)) => format!("node has {k}={v}"),
        None => format!("node lacks label {}", t.key),
    };
    let values: Vec<&str> = t.values.iter().map(String::as_str).collect();
    vec![format!(
        "PV {} {} in [{}]: {has}",
        t.pv,
        t.key,
        values.join(", ")
    )]
}

pub fn restrictions(cluster: &Cluster, pod: &Pod, node: &NodeInfo) -> Vec<String> {
    for v in pod.volumes.iter().filter(|v| needs_restrictions_check(v)) {
        if let Some(other) = node.pods.iter().find(|ev| is_volume_conflict(v, ev)) {
            return vec![format!(
                "volume {} ({}): in use by {} on the node",
                v.name,
                disk(v),
                other.key()
            )];
        }
    }
    // ReadWriteOncePod claims of the pod used by a pod placed anywhere (or nominated
    // to this node).
    let mut out = Vec::new();
    let mut buf = String::new();
    for v in &pod.volumes {
        let Some(c) = &v.persistent_volume_claim else {
            continue;
        };
        let Some(pvc) = lookup_pvc(cluster, &mut buf, &pod.namespace, &c.claim_name) else {
            continue;
        };
        let modes = pvc.spec.as_ref().and_then(|s| s.access_modes.as_ref());
        if !modes.is_some_and(|m| m.iter().any(|m| m == "ReadWriteOncePod")) {
            continue;
        }
        let uses = |p: &Pod| {
            p.uid != pod.uid
                && p.namespace == pod.namespace
                && p.volumes.iter().any(|pv| {
                    pv.persistent_volume_claim
                        .as_ref()
                        .is_some_and(|x| x.claim_name == c.claim_name)
                })
        };
        let user = node
            .pods
            .iter()
            .find(|p| uses(p))
            .map(|p| (p.key().to_string(), node.name().to_string()))
            .or_else(|| {
                cluster.nodes().iter().find_map(|n| {
                    n.pods
                        .iter()
                        .find(|p| uses(p))
                        .map(|p| (p.key().to_string(), n.name().to_string()))
                })
            });
        if let Some((p, n)) = user {
            out.push(format!(
                "claim {}/{} (ReadWriteOncePod): in use by {p} on {n}",
                pod.namespace, c.claim_name
            ));
        }
    }
    out
}

/// The disk a volume names, as its source identifies it.
fn disk(v: &core::Volume) -> String {
    if let Some(d) = &v.gce_persistent_disk {
        format!("GCE PD {}", d.pd_name)
    } else if let Some(d) = &v.aws_elastic_block_store {
        format!("AWS EBS {}", d.volume_id)
    } else if let Some(d) = &v.iscsi {
        format!("iSCSI {}", d.iqn)
    } else if let Some(d) = &v.rbd {
        format!("RBD image {}", d.image)
    } else {
        "disk".into()
    }
}

/// VolumeAttachments by node, as NodeVolumeLimits' PreFilter computes them once per
/// cycle.
pub type Attachments = BTreeMap<String, Vec<(String, String)>>;

pub fn attachments(cluster: &Cluster) -> Attachments {
    attachments_by_node(cluster, None)
}

pub fn limits(
    cluster: &Cluster,
    pod: &Pod,
    node: &NodeInfo,
    attachments: Option<&Attachments>,
) -> Vec<String> {
    match first_exceeded(cluster, pod, node, attachments) {
        Ok(Some(e)) => vec![format!(
            "driver {}: {} attached + {} new > limit {}",
            e.driver, e.attached, e.new, e.limit
        )],
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedscope_engine::model::testing::{add_storage_objects as add, cluster, pod};
    use serde_json::{Value, json};

    const ZONE: &str = "topology.kubernetes.io/zone";

    fn node(name: &str, zone: &str) -> Value {
        json!({"metadata": {"name": name,
                "labels": {"kubernetes.io/hostname": name, ZONE: zone}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}})
    }

    fn pod_with(name: &str, node: Option<&str>, volumes: Value) -> Value {
        let mut p = json!({"metadata": {"name": name, "namespace": "default", "uid": name},
            "spec": {"containers": [{"name": "c", "image": "i"}], "volumes": volumes}});
        if let Some(n) = node {
            p["spec"]["nodeName"] = json!(n);
        }
        p
    }
    fn claims(names: &[&str]) -> Value {
        names
            .iter()
            .map(|c| json!({"name": c, "persistentVolumeClaim": {"claimName": c}}))
            .collect()
    }
    fn bound_pvc(name: &str, pv: &str, modes: &[&str]) -> Value {
        json!({"kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": "default",
                "annotations": {"pv.kubernetes.io/bind-completed": "yes"}},
            "spec": {"accessModes": modes, "volumeName": pv,
                "resources": {"requests": {"storage": "1Gi"}}},
            "status": {"phase": "Bound"}})
    }
    fn unbound_pvc(name: &str, class: &str) -> Value {
        json!({"kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": class,
                "resources": {"requests": {"storage": "10Gi"}}},
            "status": {"phase": "Pending"}})
    }
    fn pv(name: &str, class: &str, host: Option<&str>, labels: Value, phase: &str) -> Value {
        let mut v = json!({"kind": "PersistentVolume",
            "metadata": {"name": name, "labels": labels},
            "spec": {"capacity": {"storage": "20Gi"}, "accessModes": ["ReadWriteOnce"],
                "storageClassName": class, "csi": {"driver": "csi.example.com",
                    "volumeHandle": name}},
            "status": {"phase": phase}});
        if let Some(h) = host {
            v["spec"]["nodeAffinity"] = json!({"required": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In",
                    "values": [h]}]}]}});
        }
        v
    }

    fn demo() -> Cluster {
        let mut c = cluster(
            vec![node("n1", "a"), node("n2", "b")],
            vec![
                pod_with("holder", Some("n2"), claims(&["solo"])),
                pod_with(
                    "disk-user",
                    Some("n1"),
                    json!([{"name": "d", "gcePersistentDisk": {"pdName": "pd-1"}}]),
                ),
            ],
        );
        add(
            &mut c,
            vec![
                json!({"kind": "StorageClass", "metadata": {"name": "local"},
                    "provisioner": "kubernetes.io/no-provisioner",
                    "volumeBindingMode": "WaitForFirstConsumer"}),
                json!({"kind": "StorageClass", "metadata": {"name": "topo"},
                    "provisioner": "csi.example.com",
                    "volumeBindingMode": "WaitForFirstConsumer",
                    "allowedTopologies": [{"matchLabelExpressions": [
                        {"key": ZONE, "values": ["b"]}]}]}),
                unbound_pvc("data", "local"),
                unbound_pvc("data2", "local"),
                unbound_pvc("dyn", "topo"),
                bound_pvc("old", "pv-old", &["ReadWriteOnce"]),
                bound_pvc("lost", "pv-gone", &["ReadWriteOnce"]),
                bound_pvc("zoned", "pv-zoned", &["ReadWriteOnce"]),
                bound_pvc("solo", "pv-solo", &["ReadWriteOncePod"]),
                bound_pvc("att", "pv-att", &["ReadWriteOnce"]),
                pv("pv-local", "local", Some("n2"), json!({}), "Available"),
                pv("pv-old", "", Some("n2"), json!({}), "Bound"),
                pv("pv-zoned", "", None, json!({ZONE: "b"}), "Bound"),
                pv("pv-solo", "", None, json!({}), "Bound"),
                pv("pv-att", "", None, json!({}), "Bound"),
                json!({"kind": "CSINode", "metadata": {"name": "n1"},
                    "spec": {"drivers": [{"name": "csi.example.com", "nodeID": "n1",
                        "allocatable": {"count": 0}}]}}),
            ],
        );
        c
    }

    type Check = fn(&Cluster, &Pod, &NodeInfo) -> Vec<String>;

    fn limits(c: &Cluster, p: &Pod, n: &NodeInfo) -> Vec<String> {
        super::limits(c, p, n, Some(&attachments(c)))
    }

    #[test]
    fn names_the_claim_volume_or_driver_that_fails() {
        let c = demo();
        let cases: Vec<(&str, Check, Value, &str, Vec<&str>)> = vec![
            (
                "binding: no PV reachable, class cannot provision",
                binding,
                claims(&["data"]),
                "n1",
                vec![
                    "claim default/data (unbound): the one available PV of class local holding 10Gi has node affinity the node does not match, and class local cannot provision (no provisioner)",
                ],
            ),
            (
                "binding: the PV's node",
                binding,
                claims(&["data"]),
                "n2",
                vec![],
            ),
            (
                "binding: the PV on the node goes to the other claim",
                binding,
                claims(&["data", "data2"]),
                "n2",
                vec![
                    "claim default/data2 (unbound): the 1 available PV of class local holding 10Gi on the node goes to the pod's other claims, and class local cannot provision (no provisioner)",
                ],
            ),
            (
                "binding: provisioning outside allowedTopologies",
                binding,
                claims(&["dyn"]),
                "n1",
                vec![
                    "claim default/dyn (unbound): no available PV of class topo holds 10Gi, and class topo's allowedTopologies exclude the node",
                ],
            ),
            (
                "binding: bound PV pinned elsewhere",
                binding,
                claims(&["old"]),
                "n1",
                vec![
                    "claim default/old: bound PV pv-old has node affinity the node does not match",
                ],
            ),
            (
                "binding: bound PV missing",
                binding,
                claims(&["lost"]),
                "n1",
                vec!["claim default/lost: bound to PV pv-gone, which does not exist"],
            ),
            (
                "zone: PV in zone b, node in a",
                zone,
                claims(&["zoned"]),
                "n1",
                vec![
                    "PV pv-zoned topology.kubernetes.io/zone in [b]: node has topology.kubernetes.io/zone=a",
                ],
            ),
            ("zone: same zone", zone, claims(&["zoned"]), "n2", vec![]),
            (
                "restrictions: ReadWriteOncePod claim held by a pod elsewhere",
                restrictions,
                claims(&["solo"]),
                "n1",
                vec!["claim default/solo (ReadWriteOncePod): in use by default/holder on n2"],
            ),
            (
                "restrictions: disk mounted by a pod on the node",
                restrictions,
                json!([{"name": "mine", "gcePersistentDisk": {"pdName": "pd-1"}}]),
                "n1",
                vec!["volume mine (GCE PD pd-1): in use by default/disk-user on the node"],
            ),
            (
                "limits: driver at its limit",
                limits,
                claims(&["att"]),
                "n1",
                vec!["driver csi.example.com: 0 attached + 1 new > limit 0"],
            ),
            (
                "limits: no CSINode, no limit",
                limits,
                claims(&["att"]),
                "n2",
                vec![],
            ),
        ];
        for (name, check, volumes, n, want) in cases {
            let p = pod(pod_with("new", None, volumes));
            assert_eq!(check(&c, &p, c.node(n).unwrap()), want, "{name}");
        }
    }
}
