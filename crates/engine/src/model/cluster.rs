//! The one cluster model that snapshots and live watches both feed.

use std::any::Any;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, OnceLock};

use k8s_openapi::api::apps::v1 as apps;
use k8s_openapi::api::core::v1 as core;
use k8s_openapi::api::policy::v1 as policy;
use k8s_openapi::api::scheduling::v1 as scheduling;
use k8s_openapi::api::storage::v1 as storage;

use super::label_index::LabelIndex;
use super::labels::Labels;
use super::node::{Node, NodeInfo};
use super::node_cache::NodeCache;
use super::pod::{Pod, PodKey};
use super::sym::Sym;
use super::tracked::Tracked;

/// How many nodes list an image, and its size (first recorded), as the scheduler
/// cache's `ImageStateSummary`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ImageState {
    pub size_bytes: i64,
    pub num_nodes: usize,
}

/// Image names with a slot each and the summary per slot. A slot is never reused,
/// so the slots a node holds stay valid while other nodes come and go; a name no
/// node lists any more keeps its slot with no nodes.
#[derive(Clone, Debug, Default)]
struct ImageTable {
    /// Keyed by the nodes' own shared names (no copy per node); a fast hash, as
    /// every image name of every node passes through it at load.
    slots: HashMap<Arc<str>, u32, foldhash::fast::FixedState>,
    states: Vec<ImageState>,
}

impl ImageTable {
    /// Counts one more node listing `name`; its size is the first recorded since
    /// no node listed it.
    fn add(&mut self, name: &Arc<str>, size_bytes: i64) -> u32 {
        let next = self.states.len() as u32;
        let slot = *self.slots.entry(name.clone()).or_insert(next);
        if slot == next {
            self.states.push(ImageState::default());
        }
        let st = &mut self.states[slot as usize];
        if st.num_nodes == 0 {
            st.size_bytes = size_bytes;
        }
        st.num_nodes += 1;
        slot
    }

    fn remove(&mut self, name: &str) {
        if let Some(&slot) = self.slots.get(name) {
            let st = &mut self.states[slot as usize];
            st.num_nodes = st.num_nodes.saturating_sub(1);
        }
    }
}

/// A PodGroup of scheduler-plugins' coscheduling (`scheduling.x-k8s.io/v1alpha1`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PodGroup {
    pub namespace: String,
    pub name: String,
    pub min_member: i32,
    pub schedule_timeout_seconds: Option<i32>,
    pub min_resources: BTreeMap<String, String>,
    pub creation_timestamp: Option<k8s_openapi::jiff::Timestamp>,
}

/// Everything kube-scheduler would see. Iteration order is always by name, never by
/// hash, so outputs are stable.
#[derive(Clone, Debug, Default)]
pub struct Cluster {
    /// Sorted by node name.
    nodes: Vec<NodeInfo>,
    /// Looked up per pod and per node in every cycle: a fast hash, not SipHash.
    node_index: HashMap<Sym, usize, foldhash::fast::FixedState>,
    /// The same positions by the address of the node's interned name: a bound pod's
    /// `node_name` is that very handle, so PodTopologySpread's count over thousands
    /// of matching pods per cycle finds their nodes without hashing any name.
    node_by_handle: HashMap<usize, usize, foldhash::fast::FixedState>,
    /// Every non-terminal pod, bound or pending.
    pods: BTreeMap<PodKey, Arc<Pod>>,
    /// The pods an older release may count differently (`Pod::older_accounting`):
    /// the only ones [`Cluster::accounted_for`] looks at, where scanning every pod
    /// on every cycle cost 15-20 ms at 150,000 pods.
    older_accounted: BTreeSet<PodKey>,
    /// Pending pods by `status.nominatedNodeName`, in key order.
    nominated: BTreeMap<String, BTreeMap<PodKey, Arc<Pod>>>,
    /// Every image name the nodes list, each with its summary.
    images: ImageTable,
    /// Kinds a live source could not read (403), each with why: the plugins that
    /// read them report it as not modelled.
    pub unreadable_kinds: BTreeMap<String, String>,
    pub persistent_volumes: Tracked<BTreeMap<String, core::PersistentVolume>>,
    /// Keyed `namespace/name`.
    pub persistent_volume_claims: Tracked<BTreeMap<String, core::PersistentVolumeClaim>>,
    pub storage_classes: Tracked<BTreeMap<String, storage::StorageClass>>,
    pub csi_nodes: Tracked<BTreeMap<String, storage::CSINode>>,
    pub csi_drivers: Tracked<BTreeMap<String, storage::CSIDriver>>,
    pub volume_attachments: Tracked<BTreeMap<String, storage::VolumeAttachment>>,
    /// Keyed `namespace/name`; VolumeBinding checks them for drivers that opt into
    /// storage capacity tracking.
    pub csi_storage_capacities: Tracked<BTreeMap<String, storage::CSIStorageCapacity>>,
    pub namespaces: BTreeMap<String, core::Namespace>,
    pub pod_disruption_budgets: BTreeMap<String, policy::PodDisruptionBudget>,
    pub priority_classes: BTreeMap<String, scheduling::PriorityClass>,
    pub services: BTreeMap<String, core::Service>,
    pub replica_sets: BTreeMap<String, apps::ReplicaSet>,
    pub stateful_sets: BTreeMap<String, apps::StatefulSet>,
    pub replication_controllers: BTreeMap<String, core::ReplicationController>,
    pub pod_groups: BTreeMap<String, PodGroup>,
    /// DRA objects (`resource.k8s.io/v1`), checked and defaulted by [`super::dra`].
    pub device_classes: BTreeMap<String, super::dra::DeviceClass>,
    /// By name: the order the allocator visits slices in. Shared, so that a cycle's
    /// index of slices by node costs a reference count, not a copy.
    resource_slices: BTreeMap<String, Arc<super::dra::ResourceSlice>>,
    /// Keyed `namespace/name`.
    resource_claims: BTreeMap<String, super::dra::ResourceClaim>,
    /// What the engine derives from the claims and slices (DynamicResources' devices
    /// in use and slices by node), built on first use and dropped whenever either
    /// changes: upstream keeps the same up to date from informer events rather than
    /// walking every claim in each cycle. Type-erased: the model knows no engine type.
    dra_index: OnceLock<Arc<dyn Any + Send + Sync>>,
    /// Keyed `namespace/name`; the scheduler never reads them (kept for display).
    pub resource_claim_templates: BTreeMap<String, super::dra::ResourceClaimTemplate>,
    /// The source delivers DRA objects (snapshots do; the live watchers do not yet):
    /// without them a pod's claims cannot be resolved, and DRA reports that.
    pub dra_objects_known: bool,
    /// Pods that ran to completion (phase Succeeded or Failed), `namespace/name` →
    /// phase: the scheduler ignores them, but a user asking about one is told so.
    pub finished_pods: BTreeMap<String, String>,
    /// A snapshot's FailedScheduling events, the latest per pod: the real
    /// scheduler's word, kept for display (no plugin reads them; a live source keeps
    /// its own).
    pub recorded_events: super::recorded::SchedulingEvents,
    /// The kube-scheduler release the cluster runs, when known or chosen
    /// (`--kube-version`, a snapshot's record, the API server): cycles replay that
    /// release (the engine re-builds its plugins for it). `None`: the frameworks as
    /// built.
    pub kube_version: Option<crate::version::Release>,
    /// Bound pods by label.
    label_index: LabelIndex,
    /// What the engine derives from the nodes alone (see [`Cluster::node_derived`]).
    node_cache: NodeCache,
}

impl Cluster {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn nodes(&self) -> &[NodeInfo] {
        &self.nodes
    }

    pub fn node(&self, name: &str) -> Option<&NodeInfo> {
        self.node_index.get(name).map(|&i| &self.nodes[i])
    }

    pub fn node_position(&self, name: &str) -> Option<usize> {
        self.node_index.get(name).copied()
    }

    /// [`Cluster::node_position`] of an interned name, such as a pod's `node_name`.
    pub fn node_position_of(&self, name: &Sym) -> Option<usize> {
        // A handle alive in a node is the only one for its string (interning), so
        // a hit is that node; a miss is a node the cluster does not have.
        self.node_by_handle.get(&name.handle()).copied()
    }

    pub fn pods(&self) -> impl Iterator<Item = &Arc<Pod>> {
        self.pods.values()
    }

    /// Pods naming a node the cluster does not have, in key order. A pod naming a
    /// node the cluster has is on that node's list, so when the counts agree (the
    /// usual case) no pod's node is looked up by name.
    pub fn pods_on_absent_nodes(&self) -> Vec<&Arc<Pod>> {
        let on_nodes: usize = self.nodes.iter().map(|n| n.pods.len()).sum();
        let naming_nodes = self.pods().filter(|p| p.node_name.is_some()).count();
        if naming_nodes == on_nodes {
            return Vec::new();
        }
        self.pods()
            .filter(|p| {
                p.node_name
                    .as_deref()
                    .is_some_and(|n| self.node(n).is_none())
            })
            .collect()
    }

    /// Pods with their `namespace/name` keys, in key order (no key is built).
    pub fn pod_entries(&self) -> impl Iterator<Item = (&PodKey, &Arc<Pod>)> {
        self.pods.iter()
    }

    pub fn pod(&self, key: &str) -> Option<&Arc<Pod>> {
        self.pods.get(key)
    }

    pub fn pod_count(&self) -> usize {
        self.pods.len()
    }

    /// Pods without a node, in key order.
    pub fn pending_pods(&self) -> impl Iterator<Item = &Arc<Pod>> {
        self.pods.values().filter(|p| !p.is_bound())
    }

    /// Pending pods nominated to `node`, in key order.
    pub fn nominated_pods(&self, node: &str) -> impl Iterator<Item = &Arc<Pod>> {
        self.nominated
            .get(node)
            .into_iter()
            .flat_map(|m| m.values())
    }

    /// Bound pods by label (for selectors with an equality requirement).
    pub fn label_index(&self) -> &LabelIndex {
        &self.label_index
    }

    /// The summary of the image named `name`, when a node lists it.
    pub fn image_state(&self, name: &str) -> Option<&ImageState> {
        self.image_slot(name)
            .and_then(|slot| self.image_state_at(slot))
    }

    /// The slot of an image name some node lists or listed: what
    /// [`NodeInfo::image_slots`] hold.
    pub fn image_slot(&self, name: &str) -> Option<u32> {
        self.images.slots.get(name).copied()
    }

    /// The summary of the image in `slot`, when a node still lists it.
    pub fn image_state_at(&self, slot: u32) -> Option<&ImageState> {
        self.images
            .states
            .get(slot as usize)
            .filter(|st| st.num_nodes > 0)
    }

    /// Add or replace a node, keeping the pods already bound to it.
    pub fn upsert_node(&mut self, node: Node) {
        self.node_cache.clear();
        let node = Arc::new(node);
        match self.node_index.get(&node.name) {
            Some(&i) => {
                self.remove_node_images(i);
                // Interning gives the new node the old one's handle; entered again
                // so that the map never depends on it.
                self.node_by_handle
                    .remove(&self.nodes[i].node.name.handle());
                self.node_by_handle.insert(node.name.handle(), i);
                self.nodes[i].node = node;
                self.add_node_images(i);
            }
            None => {
                let pos = self
                    .nodes
                    .binary_search_by(|n| n.node.name.as_str().cmp(&node.name))
                    .unwrap_err();
                let mut info = NodeInfo::new(node);
                // Bound pods that arrived before their node.
                for p in self.pods.values() {
                    if p.node_name.as_deref() == Some(info.name()) {
                        info.add_pod(p.clone());
                    }
                }
                self.nodes.insert(pos, info);
                // Only the positions from `pos` on moved: appending in name order (as
                // a snapshot load does) stays O(1) per node.
                for i in pos..self.nodes.len() {
                    let name = &self.nodes[i].node.name;
                    self.node_index.insert(name.clone(), i);
                    self.node_by_handle.insert(name.handle(), i);
                }
                self.add_node_images(pos);
            }
        }
    }

    pub fn delete_node(&mut self, name: &str) -> bool {
        let Some(&i) = self.node_index.get(name) else {
            return false;
        };
        self.node_cache.clear();
        self.remove_node_images(i);
        self.nodes.remove(i);
        self.rebuild_index();
        true
    }

    /// Add or replace a pod (by `namespace/name`). Terminal pods are dropped, as the
    /// scheduler ignores them.
    pub fn upsert_pod(&mut self, pod: Pod) {
        let key = pod.key();
        self.delete_pod(&key);
        if pod.is_terminal() {
            return;
        }
        let pod = self.index_pod(&key, Arc::new(pod));
        self.pods.insert(key, pod);
    }

    /// Pods under keys that are all different and none in the cluster yet, put in
    /// as [`Cluster::upsert_pod`] on each in turn would put them, with the key map
    /// built at once: a snapshot's load of 150,000 pods spent a fifth of its model
    /// phase searching that map.
    pub fn add_new_pods(&mut self, pods: Vec<(PodKey, Arc<Pod>)>) {
        let mut entries = Vec::with_capacity(pods.len());
        for (key, pod) in pods {
            debug_assert!(!self.pods.contains_key(&key), "{key} is new");
            if pod.is_terminal() {
                continue;
            }
            let pod = self.index_pod(&key, pod);
            entries.push((key, pod));
        }
        if self.pods.is_empty() {
            self.pods = entries.into_iter().collect();
        } else {
            self.pods.extend(entries);
        }
    }

    /// Enter a pod in the indexes a pod under `key` is found by.
    fn index_pod(&mut self, key: &PodKey, pod: Arc<Pod>) -> Arc<Pod> {
        if !pod.is_bound()
            && let Some(n) = &pod.nominated_node_name
        {
            self.nominated
                .entry(n.clone())
                .or_default()
                .insert(key.clone(), pod.clone());
        }
        if let Some(node) = &pod.node_name
            && let Some(i) = self.node_position_of(node)
        {
            self.nodes[i].add_pod(pod.clone());
        }
        if pod.is_bound() {
            self.label_index.insert(&pod);
        }
        if pod.older_accounting.is_some() {
            self.older_accounted.insert(key.clone());
        }
        pod
    }

    /// The cluster as release `fts` counts its pods' requests (PodLevelResources,
    /// InPlacePodVerticalScaling): `None` when no pod counts differently from now.
    pub fn accounted_for(&self, fts: &crate::version::Features) -> Option<Cluster> {
        let changed: Vec<Pod> = self
            .older_accounted
            .iter()
            .filter_map(|key| self.pods.get(key))
            .filter_map(|p| {
                p.accounted_as(fts.pod_level_resources, fts.in_place_pod_vertical_scaling)
            })
            .collect();
        if changed.is_empty() {
            return None;
        }
        let mut c = self.clone();
        for p in changed {
            c.upsert_pod(p);
        }
        Some(c)
    }

    pub fn delete_pod(&mut self, key: &str) -> Option<Arc<Pod>> {
        let old = self.pods.remove(key)?;
        self.older_accounted.remove(key);
        if old.is_bound() {
            self.label_index.remove(&old);
        }
        if let Some(n) = &old.nominated_node_name
            && let Some(m) = self.nominated.get_mut(n)
        {
            m.remove(key);
            if m.is_empty() {
                self.nominated.remove(n);
            }
        }
        if let Some(node) = &old.node_name
            && let Some(i) = self.node_position_of(node)
        {
            self.nodes[i].remove_pod(&old.uid);
        }
        Some(old)
    }

    fn rebuild_index(&mut self) {
        self.node_index.clear();
        self.node_by_handle.clear();
        for (i, n) in self.nodes.iter().enumerate() {
            self.node_index.insert(n.node.name.clone(), i);
            self.node_by_handle.insert(n.node.name.handle(), i);
        }
    }

    fn add_node_images(&mut self, i: usize) {
        let mut slots = Vec::new();
        for img in &self.nodes[i].node.images {
            for name in &img.names {
                slots.push(self.images.add(name, img.size_bytes));
            }
        }
        slots.sort_unstable();
        slots.dedup();
        self.nodes[i].image_slots = slots;
    }

    fn remove_node_images(&mut self, i: usize) {
        for img in &self.nodes[i].node.images {
            for name in &img.names {
                self.images.remove(name);
            }
        }
    }

    /// Labels of a namespace (`kubernetes.io/metadata.name` is always present, as the
    /// API server sets it).
    pub fn namespace_labels(&self, name: &str) -> Labels {
        let mut labels: Labels = self
            .namespaces
            .get(name)
            .and_then(|ns| ns.metadata.labels.as_ref())
            .map(Labels::from)
            .unwrap_or_default();
        if !labels.contains_key("kubernetes.io/metadata.name") {
            labels.insert("kubernetes.io/metadata.name".into(), name.to_string());
        }
        labels
    }

    /// Copy every object collection other than pods and nodes from `other` where it
    /// differs (image states are node-derived and stay). Returns whether anything
    /// changed.
    pub fn copy_objects_from(&mut self, other: &Cluster) -> bool {
        !self.copy_changed_objects_from(other).is_empty()
    }

    /// [`copy_objects_from`](Cluster::copy_objects_from), naming the collections that
    /// changed (field names, e.g. `persistent_volume_claims`), in field order.
    pub fn copy_changed_objects_from(&mut self, other: &Cluster) -> Vec<&'static str> {
        let mut changed = Vec::new();
        macro_rules! sync {
            ($($field:ident),* $(,)?) => {$(
                if self.$field != other.$field {
                    self.$field.clone_from(&other.$field);
                    changed.push(stringify!($field));
                }
            )*};
        }
        let dra_before = changed.len();
        sync!(resource_slices, resource_claims,);
        if changed.len() > dra_before {
            self.dra_index = OnceLock::new();
        }
        sync!(
            unreadable_kinds,
            persistent_volumes,
            persistent_volume_claims,
            storage_classes,
            csi_nodes,
            csi_drivers,
            volume_attachments,
            csi_storage_capacities,
            namespaces,
            pod_disruption_budgets,
            priority_classes,
            services,
            replica_sets,
            stateful_sets,
            replication_controllers,
            pod_groups,
            device_classes,
            resource_claim_templates,
            finished_pods,
        );
        changed
    }

    /// ResourceSlices by name.
    pub fn resource_slices(&self) -> &BTreeMap<String, Arc<super::dra::ResourceSlice>> {
        &self.resource_slices
    }
    /// To change the slices (the derived DRA index is dropped).
    pub fn resource_slices_mut(&mut self) -> &mut BTreeMap<String, Arc<super::dra::ResourceSlice>> {
        self.dra_index = OnceLock::new();
        &mut self.resource_slices
    }
    /// ResourceClaims by `namespace/name`.
    pub fn resource_claims(&self) -> &BTreeMap<String, super::dra::ResourceClaim> {
        &self.resource_claims
    }
    /// To change the claims (the derived DRA index is dropped).
    pub fn resource_claims_mut(&mut self) -> &mut BTreeMap<String, super::dra::ResourceClaim> {
        self.dra_index = OnceLock::new();
        &mut self.resource_claims
    }
    /// DeviceClasses by name (for code generic over the DRA kinds).
    pub fn device_classes(&self) -> &BTreeMap<String, super::dra::DeviceClass> {
        &self.device_classes
    }
    pub fn device_classes_mut(&mut self) -> &mut BTreeMap<String, super::dra::DeviceClass> {
        &mut self.device_classes
    }
    /// ResourceClaimTemplates by `namespace/name` (for code generic over the DRA kinds).
    pub fn resource_claim_templates(&self) -> &BTreeMap<String, super::dra::ResourceClaimTemplate> {
        &self.resource_claim_templates
    }
    pub fn resource_claim_templates_mut(
        &mut self,
    ) -> &mut BTreeMap<String, super::dra::ResourceClaimTemplate> {
        &mut self.resource_claim_templates
    }

    /// The index `build` derives from the nodes alone (labels, images, positions),
    /// cached under `key` until a node is added, changed or removed; pods coming and
    /// going keep it.
    pub fn node_derived<T: Any + Send + Sync>(
        &self,
        key: &str,
        build: impl FnOnce(&Cluster) -> T,
    ) -> Arc<T> {
        self.node_cache.get_or_build(key, || build(self))
    }

    /// The index `build` derives from the nodes and the volume objects (PVs, PVCs,
    /// StorageClasses, CSINodes, CSIDrivers, VolumeAttachments, CSIStorageCapacities;
    /// not the pods), cached under `key` until a node or one of those collections
    /// changes: the volume plugins' per-node attachments and PVs by claim, built
    /// once per state instead of once per cycle.
    pub fn volume_derived<T: Any + Send + Sync>(
        &self,
        key: &str,
        build: impl FnOnce(&Cluster) -> T,
    ) -> Arc<T> {
        let stamp = [
            self.persistent_volumes.generation(),
            self.persistent_volume_claims.generation(),
            self.storage_classes.generation(),
            self.csi_nodes.generation(),
            self.csi_drivers.generation(),
            self.volume_attachments.generation(),
            self.csi_storage_capacities.generation(),
        ];
        self.node_cache
            .get_or_build_stamped(key, &stamp, || build(self))
    }

    /// The position in [`Cluster::nodes`] of `info` when it is one of this cluster's
    /// own `NodeInfo`s (not a copy), found from its address: no name is hashed.
    pub fn own_node_position(&self, info: &NodeInfo) -> Option<usize> {
        let base = self.nodes.as_ptr() as usize;
        let addr = info as *const NodeInfo as usize;
        let size = std::mem::size_of::<NodeInfo>().max(1);
        let pos = addr.checked_sub(base)? / size;
        self.nodes
            .get(pos)
            .filter(|n| std::ptr::eq(*n, info))
            .map(|_| pos)
    }

    /// The index `build` derives from the DRA claims and slices, built once per
    /// state of them.
    pub fn dra_index<T: Any + Send + Sync>(&self, build: impl Fn(&Cluster) -> T) -> Arc<T> {
        let cached = self
            .dra_index
            .get_or_init(|| Arc::new(build(self)) as Arc<dyn Any + Send + Sync>);
        match cached.clone().downcast::<T>() {
            Ok(index) => index,
            // Another type asked first: build without caching.
            Err(_) => Arc::new(build(self)),
        }
    }

    pub fn resource_claim(
        &self,
        namespace: &str,
        name: &str,
    ) -> Option<&super::dra::ResourceClaim> {
        self.resource_claims.get(&format!("{namespace}/{name}"))
    }

    pub fn pvc(&self, namespace: &str, name: &str) -> Option<&core::PersistentVolumeClaim> {
        self.persistent_volume_claims
            .get(&format!("{namespace}/{name}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::testing::{cluster, simple_node, simple_pod};

    #[test]
    fn copy_objects_from_copies_what_differs_and_nothing_else() {
        let mut mine = cluster(
            vec![simple_node("n1", "1", "1Gi")],
            vec![simple_pod("p", "1", "1Gi", None)],
        );
        let mut live = cluster(vec![simple_node("n2", "1", "1Gi")], vec![]);
        assert!(!mine.copy_objects_from(&live));
        live.storage_classes.insert(
            "fast".into(),
            serde_json::from_value(serde_json::json!({"metadata": {"name": "fast"},
                "provisioner": "x"}))
            .unwrap(),
        );
        live.pod_groups
            .insert("default/g".into(), PodGroup::default());
        assert_eq!(
            mine.copy_changed_objects_from(&live),
            ["storage_classes", "pod_groups"]
        );
        assert!(mine.storage_classes.contains_key("fast"));
        // Pods and nodes are not objects.
        assert!(mine.node("n1").is_some() && mine.node("n2").is_none());
        assert_eq!(mine.pod_count(), 1);
        assert!(!mine.copy_objects_from(&live));
        live.storage_classes.clear();
        assert!(mine.copy_objects_from(&live));
        assert!(mine.storage_classes.is_empty());
    }

    #[test]
    fn the_dra_index_is_built_once_and_dropped_when_claims_or_slices_change() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let builds = AtomicUsize::new(0);
        let build = |c: &Cluster| {
            builds.fetch_add(1, Ordering::SeqCst);
            c.resource_claims().len() + c.resource_slices().len()
        };
        let mut c = Cluster::new();
        assert_eq!(*c.dra_index(build), 0);
        assert_eq!(*c.dra_index(build), 0);
        assert_eq!(builds.load(Ordering::SeqCst), 1, "cached");
        c.resource_claims_mut()
            .insert("ns/a".into(), Default::default());
        assert_eq!(*c.dra_index(build), 1, "claims changed");
        c.resource_slices_mut()
            .insert("s".into(), Arc::new(Default::default()));
        assert_eq!(*c.dra_index(build), 2, "slices changed");
        let mut other = c.clone();
        other.resource_claims_mut().clear();
        assert!(c.copy_objects_from(&other));
        assert_eq!(*c.dra_index(build), 1, "copied from a live model");
        assert_eq!(builds.load(Ordering::SeqCst), 4);
    }

    #[test]
    fn node_derived_indexes_survive_pods_and_drop_with_node_changes() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let builds = AtomicUsize::new(0);
        let build = |c: &Cluster| {
            builds.fetch_add(1, Ordering::SeqCst);
            c.nodes().len()
        };
        let mut c = cluster(vec![simple_node("n1", "1", "1Gi")], vec![]);
        assert_eq!(*c.node_derived("count", build), 1);
        c.upsert_pod(crate::model::testing::pod(simple_pod(
            "p",
            "1",
            "1Gi",
            Some("n1"),
        )));
        assert!(c.delete_pod("default/p").is_some());
        assert_eq!(*c.node_derived("count", build), 1);
        assert_eq!(builds.load(Ordering::SeqCst), 1, "pods keep it");
        c.upsert_node(crate::model::testing::node(simple_node("n2", "1", "1Gi")));
        assert_eq!(*c.node_derived("count", build), 2, "a node added");
        c.upsert_node(crate::model::testing::node(simple_node("n2", "2", "1Gi")));
        assert_eq!(*c.node_derived("count", build), 2);
        assert_eq!(builds.load(Ordering::SeqCst), 3, "a node changed");
        assert!(c.delete_node("n1"));
        assert_eq!(*c.node_derived("count", build), 1, "a node removed");
        let copy = c.clone();
        assert_eq!(*copy.node_derived("count", build), 1);
        assert_eq!(builds.load(Ordering::SeqCst), 4, "clones share it");
    }

    /// Only pods an older release counts differently are looked at, and a pod
    /// deleted or replaced leaves that set.
    #[test]
    fn accounted_for_follows_the_pods_an_older_release_counts_differently() {
        let before_pod_level: crate::version::KubeVersion = "1.33".parse().unwrap();
        let fts = before_pod_level.features();
        let mut c = cluster(vec![simple_node("n1", "4", "4Gi")], vec![]);
        let mut pod_level = simple_pod("p", "1", "1Gi", Some("n1"));
        pod_level["spec"]["resources"] = serde_json::json!({"requests": {"cpu": "3"}});
        c.upsert_pod(crate::model::testing::pod(pod_level));
        c.upsert_pod(crate::model::testing::pod(simple_pod(
            "q",
            "1",
            "1Gi",
            Some("n1"),
        )));
        let older = c
            .accounted_for(&fts)
            .expect("1.33 ignores pod-level requests");
        assert_eq!(older.pod("default/p").unwrap().requests.milli_cpu, 1000);
        assert_eq!(c.pod("default/p").unwrap().requests.milli_cpu, 3000);
        assert!(
            c.accounted_for(&crate::version::KubeVersion::default().features())
                .is_none()
        );
        // Replaced by a pod without pod-level resources, then deleted: nothing left.
        c.upsert_pod(crate::model::testing::pod(simple_pod(
            "p",
            "1",
            "1Gi",
            Some("n1"),
        )));
        assert!(c.accounted_for(&fts).is_none());
        let mut again = simple_pod("p", "1", "1Gi", Some("n1"));
        again["spec"]["resources"] = serde_json::json!({"requests": {"cpu": "3"}});
        c.upsert_pod(crate::model::testing::pod(again));
        assert!(c.accounted_for(&fts).is_some());
        assert!(c.delete_pod("default/p").is_some());
        assert!(c.accounted_for(&fts).is_none());
    }

    /// Pods naming a node the cluster lacks are found, pending pods are not, and a
    /// cluster whose bound pods are all on their nodes has none.
    #[test]
    fn pods_on_absent_nodes_are_those_whose_node_is_missing() {
        let keys = |c: &Cluster| -> Vec<String> {
            c.pods_on_absent_nodes().iter().map(|p| p.key()).collect()
        };
        let mut c = cluster(
            vec![simple_node("n1", "4", "4Gi")],
            vec![
                simple_pod("on", "1", "1Gi", Some("n1")),
                simple_pod("pending", "1", "1Gi", None),
            ],
        );
        assert!(keys(&c).is_empty());
        c.upsert_pod(crate::model::testing::pod(simple_pod(
            "lost",
            "1",
            "1Gi",
            Some("gone"),
        )));
        assert_eq!(keys(&c), ["default/lost"]);
    }

    #[test]
    fn own_node_position_knows_its_nodes_not_copies() {
        let c = cluster(
            vec![simple_node("a", "1", "1Gi"), simple_node("b", "1", "1Gi")],
            vec![],
        );
        for (i, n) in c.nodes().iter().enumerate() {
            assert_eq!(c.own_node_position(n), Some(i));
        }
        let copy = c.nodes()[1].clone();
        assert_eq!(c.own_node_position(&copy), None);
    }

    #[test]
    fn a_pods_node_name_finds_its_node_as_nodes_come_and_go() {
        let mut c = cluster(
            vec![simple_node("b", "1", "1Gi"), simple_node("d", "1", "1Gi")],
            vec![
                simple_pod("on-b", "1", "1Gi", Some("b")),
                simple_pod("on-c", "1", "1Gi", Some("c")),
                simple_pod("on-d", "1", "1Gi", Some("d")),
            ],
        );
        let pos_of = |c: &Cluster, pod: &str| {
            let p = c.pod(pod).unwrap();
            c.node_position_of(p.node_name.as_ref().unwrap())
        };
        assert_eq!(pos_of(&c, "default/on-b"), Some(0));
        assert_eq!(pos_of(&c, "default/on-c"), None);
        assert_eq!(pos_of(&c, "default/on-d"), Some(1));
        // A node arriving in the middle moves the ones after it; its waiting pod
        // finds it.
        c.upsert_node(crate::model::testing::node(simple_node("c", "1", "1Gi")));
        assert_eq!(pos_of(&c, "default/on-c"), Some(1));
        assert_eq!(pos_of(&c, "default/on-d"), Some(2));
        assert_eq!(c.nodes()[1].pods.len(), 1);
        assert!(c.delete_node("b"));
        assert_eq!(pos_of(&c, "default/on-b"), None);
        assert_eq!(pos_of(&c, "default/on-c"), Some(0));
        assert_eq!(pos_of(&c, "default/on-d"), Some(1));
        // A name interned apart from any pod (as an edit or a bind writes it).
        assert_eq!(c.node_position_of(&Sym::new("d")), Some(1));
        assert_eq!(c.node_position_of(&Sym::new("b")), None);
    }
}
