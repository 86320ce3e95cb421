//! Nodes and the per-node aggregate the scheduler cache keeps (`framework.NodeInfo`).

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1 as core;

use super::labels::Labels;
use super::pod::{FieldError, HostPort, Pod};
use super::resource::{CPU, EPHEMERAL_STORAGE, MEMORY, PODS, Resource, is_scalar_resource_name};
use super::sym::Sym;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ImageEntry {
    /// Shared between the nodes holding the same image when a snapshot is loaded
    /// (thousands of nodes list the same few hundred images).
    pub names: Vec<Arc<str>>,
    pub size_bytes: i64,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Node {
    /// Shared with every trace that names the node.
    pub name: Sym,
    pub uid: String,
    pub labels: Labels,
    pub taints: Vec<core::Taint>,
    pub unschedulable: bool,
    pub allocatable: Resource,
    pub capacity: Resource,
    pub images: Vec<ImageEntry>,
    pub ready: Option<bool>,
}

impl Node {
    /// Convert a manifest, applying the defaulting the API server and kubelet would:
    /// allocatable = capacity where allocatable is missing.
    pub fn from_k8s(n: &core::Node) -> Result<Node, FieldError> {
        let name = n
            .metadata
            .name
            .clone()
            .ok_or_else(|| FieldError::missing("metadata.name"))?;
        let spec = n.spec.as_ref();
        let status = n.status.as_ref();
        let capacity = resource_list(status.and_then(|s| s.capacity.as_ref()), "status.capacity")?;
        let allocatable = match status.and_then(|s| s.allocatable.as_ref()) {
            Some(a) => {
                let mut r = resource_list(Some(a), "status.allocatable")?;
                // A resource listed in capacity but not in allocatable defaults to capacity.
                for name in [CPU, MEMORY, EPHEMERAL_STORAGE, PODS] {
                    if !a.contains_key(name) {
                        r.set(name, capacity.get(name));
                    }
                }
                for (k, v) in &capacity.scalar {
                    r.scalar.entry(k.clone()).or_insert(*v);
                }
                r
            }
            None => capacity.clone(),
        };
        let images = status
            .and_then(|s| s.images.as_ref())
            .map(|imgs| {
                imgs.iter()
                    .map(|i| ImageEntry {
                        names: i
                            .names
                            .iter()
                            .flatten()
                            .map(|n| Arc::from(n.as_str()))
                            .collect(),
                        size_bytes: i.size_bytes.unwrap_or(0),
                    })
                    .collect()
            })
            .unwrap_or_default();
        let ready = status
            .and_then(|s| s.conditions.as_ref())
            .and_then(|cs| cs.iter().find(|c| c.type_ == "Ready"))
            .map(|c| c.status == "True");
        Ok(Node {
            name: name.into(),
            uid: n.metadata.uid.clone().unwrap_or_default(),
            labels: n
                .metadata
                .labels
                .as_ref()
                .map(Labels::from)
                .unwrap_or_default(),
            taints: spec.and_then(|s| s.taints.clone()).unwrap_or_default(),
            unschedulable: spec.and_then(|s| s.unschedulable).unwrap_or(false),
            allocatable,
            capacity,
            images,
            ready,
        })
    }
}

fn resource_list(
    list: Option<&BTreeMap<String, k8s_openapi::apimachinery::pkg::api::resource::Quantity>>,
    path: &str,
) -> Result<Resource, FieldError> {
    let mut r = Resource::default();
    for (k, v) in list.into_iter().flatten() {
        let q = super::pod::resource_quantity(&v.0, || format!("{path}.{k}"))?;
        match k.as_str() {
            CPU => r.milli_cpu = q.milli_value(),
            MEMORY => r.memory = q.value(),
            EPHEMERAL_STORAGE => r.ephemeral_storage = q.value(),
            PODS => r.allowed_pod_number = q.value(),
            other if is_scalar_resource_name(other) => {
                r.scalar.insert(other.to_string(), q.value());
            }
            _ => {}
        }
    }
    Ok(r)
}

/// Aggregated state of one node, as kube-scheduler's cache keeps it.
#[derive(Clone, Debug, Default)]
pub struct NodeInfo {
    pub node: Arc<Node>,
    pub pods: Vec<Arc<Pod>>,
    /// Indices into `pods` of pods with pod (anti-)affinity.
    pub pods_with_affinity: Vec<usize>,
    /// Indices into `pods` of pods with required anti-affinity.
    pub pods_with_required_anti_affinity: Vec<usize>,
    pub requested: Resource,
    /// cpu and memory with per-container defaults (scoring).
    pub non_zero_requested: Resource,
    /// Host ports in use, with the number of pods using each.
    pub used_ports: BTreeMap<HostPort, u32>,
    /// `namespace/claim` → number of pods on the node using it.
    pub pvc_ref_counts: BTreeMap<String, u32>,
    /// Names this list of `pods`: a fresh number from a process-wide counter each
    /// time it changes, so two NodeInfos (a copy with nominated pods added, say)
    /// with the same stamp have the same pods. Caches of what a node's pods hold
    /// compare it instead of the pods.
    pub pods_stamp: PodsStamp,
    /// The cluster's slots ([`crate::model::Cluster::image_slot`]) of every image name
    /// the node lists, sorted: set when the node joins a cluster, so ImageLocality
    /// asks one slot per pod image instead of comparing names.
    pub image_slots: Vec<u32>,
}

/// See [`NodeInfo::pods_stamp`]. An identity, not content: two models built alike
/// have different stamps, so it prints as `PodsStamp(..)` and model dumps compare.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub struct PodsStamp(u64);

impl std::fmt::Debug for PodsStamp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PodsStamp(..)")
    }
}

/// The next [`NodeInfo::pods_stamp`]; the default is an empty list's.
fn next_pods_stamp() -> PodsStamp {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    PodsStamp(NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
}

impl NodeInfo {
    pub fn new(node: Arc<Node>) -> Self {
        NodeInfo {
            node,
            ..Default::default()
        }
    }

    pub fn name(&self) -> &str {
        &self.node.name
    }

    pub fn add_pod(&mut self, pod: Arc<Pod>) {
        self.requested.add(&pod.requests);
        // Go's int64 arithmetic, as in Resource::add.
        let nz = &mut self.non_zero_requested;
        nz.milli_cpu = nz.milli_cpu.wrapping_add(pod.non_zero_milli_cpu);
        nz.memory = nz.memory.wrapping_add(pod.non_zero_memory);
        for hp in &pod.host_ports {
            *self.used_ports.entry(hp.clone()).or_insert(0) += 1;
        }
        for claim in pvc_names(&pod) {
            *self.pvc_ref_counts.entry(claim).or_insert(0) += 1;
        }
        let idx = self.pods.len();
        if pod.has_pod_affinity() {
            self.pods_with_affinity.push(idx);
        }
        if pod.has_required_anti_affinity() {
            self.pods_with_required_anti_affinity.push(idx);
        }
        self.pods.push(pod);
        self.pods_stamp = next_pods_stamp();
    }

    /// Remove by uid; returns whether the pod was on this node.
    pub fn remove_pod(&mut self, uid: &str) -> bool {
        let Some(idx) = self.pods.iter().position(|p| p.uid == uid) else {
            return false;
        };
        let pod = self.pods.remove(idx);
        self.pods_stamp = next_pods_stamp();
        self.requested.sub(&pod.requests);
        let nz = &mut self.non_zero_requested;
        nz.milli_cpu = nz.milli_cpu.wrapping_sub(pod.non_zero_milli_cpu);
        nz.memory = nz.memory.wrapping_sub(pod.non_zero_memory);
        for hp in &pod.host_ports {
            if let Some(c) = self.used_ports.get_mut(hp) {
                *c -= 1;
                if *c == 0 {
                    self.used_ports.remove(hp);
                }
            }
        }
        for claim in pvc_names(&pod) {
            if let Some(c) = self.pvc_ref_counts.get_mut(&claim) {
                *c -= 1;
                if *c == 0 {
                    self.pvc_ref_counts.remove(&claim);
                }
            }
        }
        self.reindex();
        true
    }

    fn reindex(&mut self) {
        self.pods_with_affinity.clear();
        self.pods_with_required_anti_affinity.clear();
        for (i, p) in self.pods.iter().enumerate() {
            if p.has_pod_affinity() {
                self.pods_with_affinity.push(i);
            }
            if p.has_required_anti_affinity() {
                self.pods_with_required_anti_affinity.push(i);
            }
        }
    }

    pub fn pods_with_affinity(&self) -> impl Iterator<Item = &Arc<Pod>> {
        self.pods_with_affinity.iter().map(|&i| &self.pods[i])
    }

    pub fn pods_with_required_anti_affinity(&self) -> impl Iterator<Item = &Arc<Pod>> {
        self.pods_with_required_anti_affinity
            .iter()
            .map(|&i| &self.pods[i])
    }
}

/// `namespace/claim` for each PVC-backed volume (including generic ephemeral volumes,
/// whose claim is named `<pod>-<volume>`).
pub fn pvc_names(pod: &Pod) -> Vec<String> {
    pod.volumes
        .iter()
        .filter_map(|v| {
            if let Some(pvc) = &v.persistent_volume_claim {
                Some(format!("{}/{}", pod.namespace, pvc.claim_name))
            } else if v.ephemeral.is_some() {
                Some(format!("{}/{}-{}", pod.namespace, pod.name, v.name))
            } else {
                None
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::NodeInfo;
    use crate::model::testing::{cluster, simple_node, simple_pod};

    /// Equal stamps mean the same pods: every change gets a number no other list
    /// had, copies keep theirs until they change.
    #[test]
    fn pods_stamp_changes_with_the_pods_and_only_then() {
        let c = cluster(
            vec![simple_node("n1", "4", "8Gi")],
            vec![
                simple_pod("a", "1", "1Gi", Some("n1")),
                simple_pod("b", "1", "1Gi", None),
            ],
        );
        let node = &c.nodes()[0];
        let pending = Arc::clone(c.pod("default/b").unwrap());
        assert_ne!(node.pods_stamp, NodeInfo::default().pods_stamp);
        let mut copy = node.clone();
        assert_eq!(copy.pods_stamp, node.pods_stamp);
        copy.add_pod(pending.clone());
        let grown = copy.pods_stamp;
        assert_ne!(grown, node.pods_stamp);
        // Back to the same pods is still a new list as far as stamps go.
        assert!(copy.remove_pod(&pending.uid));
        assert!(copy.pods_stamp != grown && copy.pods_stamp != node.pods_stamp);
        // Another copy grown the same way is told apart too.
        let mut other = node.clone();
        other.add_pod(pending);
        assert_ne!(other.pods_stamp, grown);
        assert!(!other.remove_pod("no-such-uid"));
        assert_ne!(other.pods_stamp, node.pods_stamp);
    }

    /// Two bound pods whose requests sum past i64 on one node (found by a fuzz run):
    /// the node's totals wrap as the Go cache's do, and the model still builds.
    #[test]
    fn huge_requests_on_one_node_wrap_instead_of_panicking() {
        let huge = "9223372036854775807";
        let c = cluster(
            vec![simple_node("n1", "4", "8Gi")],
            vec![
                simple_pod("a", huge, huge, Some("n1")),
                simple_pod("b", huge, huge, Some("n1")),
            ],
        );
        let info = c.node("n1").expect("n1");
        assert_eq!(info.pods.len(), 2);
        assert!(info.requested.memory < 0, "wrapped: {:?}", info.requested);
    }
}
