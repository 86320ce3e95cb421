//! The volume plugins: VolumeBinding (which claim, and why no PV binds or gets
//! provisioned on the node), VolumeZone (which PV's zone), VolumeRestrictions (the
//! disk or ReadWriteOncePod claim in use, and by which pod), NodeVolumeLimits (the
//! driver, attached + new against its limit). Each through the plugin's own check.

use crate::engine::plugins::node_volume_limits::first_exceeded;
use crate::engine::plugins::volume_binding::{Culprit, node_culprits};
use crate::engine::plugins::volume_restrictions::{is_volume_conflict, needs_restrictions_check};
use crate::engine::plugins::volume_util::lookup_pvc;
use crate::engine::plugins::volume_zone::{first_conflict, ga_label, pv_topologies};
use crate::model::{Cluster, NodeInfo, Pod};
use crate::report::format::bytes;
use k8s_openapi::api::core::v1 as core;

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
                unsupported,
            } => {
                let request = bytes(request);
                let pvs = match candidates {
                    0 => format!("no available PV of class {class} holds {request}"),
                    1 => format!(
                        "the one available PV of class {class} holding {request} has node affinity the node does not match"
                    ),
                    n => format!(
                        "none of the {n} available PV{} of class {class} holding {request} has node affinity the node matches",
                        crate::report::plural(n)
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
                "volume {} ({}) already in use by {} on the node",
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
                "claim {}/{} (ReadWriteOncePod) in use by {p} on {n}",
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

pub fn limits(cluster: &Cluster, pod: &Pod, node: &NodeInfo) -> Vec<String> {
    match first_exceeded(cluster, pod, node, None) {
        Ok(Some(e)) => vec![format!(
            "driver {}: {} attached + {} new > limit {}",
            e.driver, e.attached, e.new, e.limit
        )],
        _ => Vec::new(),
    }
}
