//! NodeVolumeLimits (PreFilter, Filter): per CSI driver, the unique volumes attached
//! to a node (pods' volumes and VolumeAttachments) plus the incoming pod's new ones
//! must not exceed the CSINode's allocatable count. In-tree volumes count under the
//! CSI driver they migrate to, as v1.35 does.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock};

use k8s_openapi::api::core::v1 as core;
use k8s_openapi::api::storage::v1::CSINode;

use super::csi_translation::{InTreePlugin, translate_inline, translate_pv};
use super::volume_util::{
    ephemeral_claim_name, lookup_pvc, pvc_class, pvc_not_found, pvc_volume_name, volume_is_for_pod,
};
use super::{FastMap, FastSet};
use crate::engine::framework::{
    Ctx, CycleState, FilterPlugin, Plugin, PreFilterPlugin, PreFilterResult,
};
use crate::engine::status::Status;
use crate::model::{Cluster, NodeInfo, Pod};

pub const NAME: &str = "NodeVolumeLimits";
const STATE_KEY: &str = "PreFilterNodeVolumeLimits";

pub const ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED: &str = "node(s) exceed max volume count";

/// Stands in for upstream's random per-plugin prefix of unbound claims' volume
/// handles: a claim gets the same handle in every pod, and never a real one.
const UNBOUND_HANDLE_PREFIX: &str = "\u{0}unbound";

/// A volume's identity, `<driver>/<handle>` upstream; borrowed from the cluster
/// except for unbound claims and translated in-tree volumes.
type Key<'a> = (Cow<'a, str>, Cow<'a, str>);

/// Per cycle, from PreFilter.
#[derive(Clone, Debug)]
struct State {
    index: Arc<VolumeIndex>,
    /// The pod's new volumes, on a node with a CSINode and on one without (`Err`:
    /// counting them failed, Filter reports it node by node).
    new_with_csi_node: Arc<Result<NewVolumes, Status>>,
    new_without_csi_node: Arc<Result<NewVolumes, Status>>,
}

/// The incoming pod's volumes as `new_pod_volumes` finds them, and their number
/// per driver.
#[derive(Debug)]
struct NewVolumes {
    keys: Vec<(String, String)>,
    per_driver: NewCount,
}

impl NewVolumes {
    fn of(cluster: &Cluster, pod: &Pod, has_csi_node: bool) -> Result<NewVolumes, Status> {
        let keys = new_pod_volumes(cluster, pod, has_csi_node)?;
        Ok(NewVolumes {
            per_driver: per_driver(&keys),
            keys: keys
                .into_iter()
                .map(|(d, h)| (d.into_owned(), h.into_owned()))
                .collect(),
        })
    }
}

/// What the plugin reads of each node besides its pods, by position in
/// [`Cluster::nodes`]: built once per state of the nodes and volume objects
/// ([`Cluster::volume_derived`]), as upstream keeps CSINodes and attachments in
/// informer caches, so that Filter does no cluster-wide work per cycle.
#[derive(Debug, Default)]
struct VolumeIndex {
    nodes: Vec<NodeVolumes>,
    /// Per node, what its pods attach as last counted ([`attached_for`]).
    attached: Vec<Mutex<Option<Arc<Attached>>>>,
}

/// What the pods of a node attach: kept with the pods it was counted from, so that
/// a node whose pods did not change since (the same `Arc`s, which the entry keeps
/// alive) is not walked again, as long as the volume objects stay (the index's own
/// lifetime). Upstream walks the node's pods in every Filter call; on a cluster with
/// a volume on every pod that walk (and, where the bound leaves no room, a claim and
/// PV lookup per pod volume) is most of the cycle.
#[derive(Debug)]
struct Attached {
    /// The [`NodeInfo::pods_stamp`] of the pods counted.
    pods_stamp: crate::model::node::PodsStamp,
    /// [`most_attached`] of the pods.
    most: Option<i64>,
    /// The exact count, made when the bound does not settle the node.
    exact: OnceLock<Exact>,
}

#[derive(Debug)]
struct Exact {
    /// `attached_volumes`, sorted and deduplicated.
    volumes: Result<Vec<(String, String)>, String>,
    /// Per driver, `volumes` and the node's CSI attachments not among them.
    counts: BTreeMap<String, i64>,
}

impl Attached {
    fn of(node: &NodeInfo) -> Attached {
        Attached {
            pods_stamp: node.pods_stamp,
            most: most_attached(node),
            exact: OnceLock::new(),
        }
    }

    /// The exact count; `node` has the pods this was made from.
    fn exact(&self, cluster: &Cluster, node: &NodeInfo, nv: &NodeVolumes) -> &Exact {
        self.exact.get_or_init(|| {
            let volumes = attached_volumes(cluster, node, nv.has_csi_node).map(|v| {
                v.into_iter()
                    .map(|(d, h)| (d.into_owned(), h.into_owned()))
                    .collect::<Vec<_>>()
            });
            let mut counts: BTreeMap<String, i64> = BTreeMap::new();
            if let Ok(attached) = &volumes {
                for (driver, _) in attached {
                    *counts.entry(driver.clone()).or_default() += 1;
                }
                for (attacher, handle) in &nv.attachments {
                    if find(attached, attacher, handle).is_err() {
                        *counts.entry(attacher.clone()).or_default() += 1;
                    }
                }
            }
            Exact { volumes, counts }
        })
    }

    /// Whether these are `node`'s pods: one number compared per node and cycle,
    /// where comparing the pods would touch every node's pod list.
    fn counted_from(&self, node: &NodeInfo) -> bool {
        self.pods_stamp == node.pods_stamp
    }
}

fn find(sorted: &[(String, String)], driver: &str, handle: &str) -> Result<usize, usize> {
    sorted.binary_search_by(|(d, h)| (d.as_str(), h.as_str()).cmp(&(driver, handle)))
}

/// The node's [`Attached`], from the index when its pods are the ones counted.
fn attached_for(index: &VolumeIndex, pos: Option<usize>, node: &NodeInfo) -> Arc<Attached> {
    let slot = pos.and_then(|i| index.attached.get(i));
    if let Some(slot) = slot {
        let cached = slot.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(a) = cached.as_ref().filter(|a| a.counted_from(node)) {
            return a.clone();
        }
    }
    let counted = Arc::new(Attached::of(node));
    if let Some(slot) = slot {
        *slot.lock().unwrap_or_else(|e| e.into_inner()) = Some(counted.clone());
    }
    counted
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct NodeVolumes {
    has_csi_node: bool,
    /// Allocatable volume counts per driver from the CSINode.
    limits: BTreeMap<String, i64>,
    /// VolumeAttachments to the node naming a PV: each can add at most one volume.
    /// With the pods' claim volumes this bounds what the node has attached, and a
    /// node whose bound leaves room for the pod's new volumes passes without
    /// resolving a single claim (the answer counting exactly would give).
    va_count: i64,
    /// Those whose PV is a CSI volume, `(attacher, handle)`, sorted, deduplicated.
    attachments: Vec<(String, String)>,
}

impl NodeVolumes {
    /// Straight from the cluster, for a node the index does not hold.
    fn of(cluster: &Cluster, node: &str) -> NodeVolumes {
        let only: FastSet<&str> = [node].into_iter().collect();
        let va_count = cluster
            .volume_attachments
            .values()
            .filter(|va| counts_as_attachment(va) && va.spec.node_name == node)
            .count() as i64;
        let csi_node = cluster.csi_nodes.get(node);
        NodeVolumes {
            has_csi_node: csi_node.is_some(),
            limits: owned_limits(csi_node),
            va_count,
            attachments: attachments_by_node(cluster, Some(&only))
                .remove(node)
                .unwrap_or_default(),
        }
    }
}

fn counts_as_attachment(va: &k8s_openapi::api::storage::v1::VolumeAttachment) -> bool {
    !va.spec.attacher.is_empty() && va.spec.source.persistent_volume_name.is_some()
}

fn owned_limits(csi_node: Option<&CSINode>) -> BTreeMap<String, i64> {
    volume_limits(csi_node)
        .into_iter()
        .map(|(d, n)| (d.to_string(), n))
        .collect()
}

fn volume_index(cluster: &Cluster) -> Arc<VolumeIndex> {
    cluster.volume_derived("NodeVolumeLimits/nodes", |c| {
        let mut va_count: FastMap<&str, i64> = FastMap::default();
        for va in c.volume_attachments.values() {
            if counts_as_attachment(va) {
                *va_count.entry(va.spec.node_name.as_str()).or_default() += 1;
            }
        }
        let mut attachments = attachments_by_node(c, None);
        let nodes = c
            .nodes()
            .iter()
            .map(|n| {
                let csi_node = c.csi_nodes.get(n.name());
                NodeVolumes {
                    has_csi_node: csi_node.is_some(),
                    limits: owned_limits(csi_node),
                    va_count: va_count.get(n.name()).copied().unwrap_or(0),
                    attachments: attachments.remove(n.name()).unwrap_or_default(),
                }
            })
            .collect::<Vec<_>>();
        VolumeIndex {
            attached: nodes.iter().map(|_| Mutex::new(None)).collect(),
            nodes,
        }
    })
}

/// The node's entry in the index, found by position (the cluster's own NodeInfo, or
/// a copy of it by name), else computed.
fn node_volumes<'i>(
    cluster: &Cluster,
    index: &'i VolumeIndex,
    node: &NodeInfo,
) -> (Option<usize>, Cow<'i, NodeVolumes>) {
    let pos = cluster
        .own_node_position(node)
        .or_else(|| cluster.node_position(node.name()))
        .filter(|&i| i < index.nodes.len());
    match pos {
        Some(i) => (pos, Cow::Borrowed(&index.nodes[i])),
        None => (None, Cow::Owned(NodeVolumes::of(cluster, node.name()))),
    }
}

/// New volumes per CSI driver.
type NewCount = BTreeMap<String, i64>;

pub struct NodeVolumeLimits;

pub fn new(
    _args: &serde_json::Value,
    _fts: &crate::version::Features,
) -> Result<Arc<dyn Plugin>, String> {
    Ok(Arc::new(NodeVolumeLimits))
}

impl Plugin for NodeVolumeLimits {
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

/// `isCSIMigrationOn`: a node with a CSINode object counts these in-tree plugins under
/// their CSI driver (their migration is GA; Portworx's gate is locked on in 1.35).
fn csi_migration_on(has_csi_node: bool, plugin: InTreePlugin) -> bool {
    has_csi_node
        && matches!(
            plugin,
            InTreePlugin::AwsEbs
                | InTreePlugin::Portworx
                | InTreePlugin::GcePd
                | InTreePlugin::AzureDisk
                | InTreePlugin::Cinder
        )
}

/// `VolumeAttachment`s of every node (of the nodes `only` names, when given) whose PV
/// is a CSI volume.
pub fn attachments_by_node(
    cluster: &Cluster,
    only: Option<&FastSet<&str>>,
) -> BTreeMap<String, Vec<(String, String)>> {
    let mut out: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    for va in cluster.volume_attachments.values() {
        let spec = &va.spec;
        if spec.attacher.is_empty() || only.is_some_and(|o| !o.contains(spec.node_name.as_str())) {
            continue;
        }

        let Some(pv_name) = spec.source.persistent_volume_name.as_deref() else {
            continue;
        };
        let Some(csi) = cluster
            .persistent_volumes
            .get(pv_name)
            .and_then(|pv| pv.spec.as_ref())
            .and_then(|s| s.csi.as_ref())
        else {
            continue;
        };
        out.entry(spec.node_name.clone())
            .or_default()
            .push((spec.attacher.clone(), csi.volume_handle.clone()));
    }
    for v in out.values_mut() {
        v.sort();
        v.dedup();
    }
    out
}

/// `getCSIDriverInfo`: the volume a claim uses, falling back to its storage class
/// when it is unbound or its PV is missing. `None`: not counted.
fn claim_key<'c>(
    cluster: &'c Cluster,
    pvc: &'c core::PersistentVolumeClaim,
    has_csi_node: bool,
) -> Option<Key<'c>> {
    let pv_name = pvc_volume_name(pvc);
    let pv = (!pv_name.is_empty())
        .then(|| cluster.persistent_volumes.get(pv_name))
        .flatten();
    if let Some(pv) = pv {
        if let Some(csi) = pv.spec.as_ref().and_then(|s| s.csi.as_ref()) {
            return Some((
                Cow::Borrowed(csi.driver.as_str()),
                Cow::Borrowed(csi.volume_handle.as_str()),
            ));
        }
        let plugin = InTreePlugin::of_pv(pv)?;
        if !csi_migration_on(has_csi_node, plugin) {
            return None;
        }
        // A PV that cannot be translated is not counted.
        let t = translate_pv(pv).ok()??;
        return Some((Cow::Borrowed(t.driver), Cow::Owned(t.handle)));
    }
    // `getCSIDriverInfoFromSC`. Without a class the claim binds immediately, so it is
    // bound before the pod schedules; not counting it is safe.
    let class_name = pvc_class(pvc);
    if class_name.is_empty() {
        return None;
    }
    let class = cluster.storage_classes.get(class_name)?;
    let handle = Cow::Owned(format!(
        "{UNBOUND_HANDLE_PREFIX}-{}/{}",
        pvc.metadata.namespace.as_deref().unwrap_or(""),
        pvc.metadata.name.as_deref().unwrap_or("")
    ));
    match InTreePlugin::from_in_tree_name(&class.provisioner) {
        Some(p) if !csi_migration_on(has_csi_node, p) => None,
        Some(p) => Some((Cow::Borrowed(p.csi_driver()), handle)),
        None => Some((Cow::Borrowed(class.provisioner.as_str()), handle)),
    }
}

/// `checkAttachableInlineVolume`: a migratable in-tree inline volume counts under its
/// CSI driver when migration is on for the node.
fn inline_key(
    v: &core::Volume,
    pod: &Pod,
    has_csi_node: bool,
) -> Result<Option<Key<'static>>, String> {
    let Some(plugin) = InTreePlugin::of_inline(v) else {
        return Ok(None);
    };
    if !csi_migration_on(has_csi_node, plugin) {
        return Ok(None);
    }
    match translate_inline(v, &pod.namespace) {
        Ok(Some((driver, handle))) => Ok(Some((Cow::Borrowed(driver), Cow::Owned(handle)))),
        Ok(None) => Ok(None),
        Err(e) => Err(format!(
            "converting volume({}) from inline to csi: {e}",
            v.name
        )),
    }
}

/// A pod volume that names a claim: its name and whether it is a generic ephemeral
/// volume.
fn claim_of<'p>(pod: &Pod, v: &'p core::Volume) -> Option<(Cow<'p, str>, bool)> {
    if let Some(c) = &v.persistent_volume_claim {
        Some((Cow::Borrowed(c.claim_name.as_str()), false))
    } else if v.ephemeral.is_some() {
        Some((Cow::Owned(ephemeral_claim_name(pod, v)), true))
    } else {
        None
    }
}

/// The incoming pod's volumes (`filterAttachableVolumes` with `newPod`): a missing
/// claim is fatal (UnschedulableAndUnresolvable), other problems are errors.
fn new_pod_volumes<'c>(
    cluster: &'c Cluster,
    pod: &Pod,
    has_csi_node: bool,
) -> Result<Vec<Key<'c>>, Status> {
    let mut out = Vec::new();
    let mut buf = String::new();
    for v in &pod.volumes {
        let Some((claim, ephemeral)) = claim_of(pod, v) else {
            match inline_key(v, pod, has_csi_node) {
                Ok(Some(k)) => out.push(k),
                Ok(None) => {}
                Err(e) => return Err(Status::error(e)),
            }
            continue;
        };
        if claim.is_empty() {
            return Err(Status::error("PersistentVolumeClaim had no name"));
        }
        let Some(pvc) = lookup_pvc(cluster, &mut buf, &pod.namespace, &claim) else {
            return Err(Status::unresolvable(format!(
                "looking up PVC {}/{claim}: {}",
                pod.namespace,
                pvc_not_found(&claim)
            )));
        };
        if ephemeral {
            volume_is_for_pod(pod, pvc).map_err(Status::error)?;
        }
        if let Some(k) = claim_key(cluster, pvc, has_csi_node) {
            out.push(k);
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// The volumes of the pods on the node (`filterAttachableVolumes` of existing pods):
/// claims that do not exist are skipped.
fn attached_volumes<'c>(
    cluster: &'c Cluster,
    node: &NodeInfo,
    has_csi_node: bool,
) -> Result<Vec<Key<'c>>, String> {
    let mut out = Vec::new();
    let mut buf = String::new();
    for pod in &node.pods {
        for v in &pod.volumes {
            let Some((claim, ephemeral)) = claim_of(pod, v) else {
                if let Some(k) = inline_key(v, pod, has_csi_node)? {
                    out.push(k);
                }
                continue;
            };
            if claim.is_empty() {
                return Err("PersistentVolumeClaim had no name".into());
            }
            let Some(pvc) = lookup_pvc(cluster, &mut buf, &pod.namespace, &claim) else {
                continue;
            };
            if ephemeral {
                volume_is_for_pod(pod, pvc)?;
            }
            if let Some(k) = claim_key(cluster, pvc, has_csi_node) {
                out.push(k);
            }
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// Allocatable volume counts per driver from the CSINode.
fn volume_limits(csi_node: Option<&CSINode>) -> BTreeMap<&str, i64> {
    csi_node
        .into_iter()
        .flat_map(|c| c.spec.drivers.iter())
        .filter_map(|d| {
            let count = d.allocatable.as_ref()?.count?;
            Some((d.name.as_str(), count as i64))
        })
        .collect()
}

impl PreFilterPlugin for NodeVolumeLimits {
    fn pre_filter(&self, cx: &Ctx, state: &mut CycleState, pod: &Pod) -> (PreFilterResult, Status) {
        let relevant = pod.volumes.iter().any(|v| {
            v.persistent_volume_claim.is_some()
                || v.ephemeral.is_some()
                || InTreePlugin::of_inline(v).is_some()
        });
        if !relevant {
            return (None, Status::skip());
        }
        // The pod's new volumes depend on the node only through whether it has a
        // CSINode.
        let s = State {
            index: volume_index(cx.cluster),
            new_with_csi_node: Arc::new(NewVolumes::of(cx.cluster, pod, true)),
            new_without_csi_node: Arc::new(NewVolumes::of(cx.cluster, pod, false)),
        };
        state.write(STATE_KEY, s);
        (None, Status::success())
    }
}

/// New volumes per driver.
fn per_driver(volumes: &[Key<'_>]) -> NewCount {
    let mut count = BTreeMap::new();
    for (driver, _) in volumes {
        *count.entry(driver.to_string()).or_default() += 1;
    }
    count
}

/// Whether `new_count` more volumes per driver stay within every driver's limit, with
/// `attached(driver)` volumes already there.
fn within_limits(
    new_count: &NewCount,
    limits: &BTreeMap<String, i64>,
    attached: impl Fn(&str) -> i64,
) -> bool {
    new_count.iter().all(|(driver, n)| {
        limits
            .get(driver.as_str())
            .is_none_or(|limit| attached(driver) + n <= *limit)
    })
}

/// Whether the node has room for the new volumes under every limit even if each of
/// its pods' volumes and each of its `va` VolumeAttachments counted, once, under
/// every driver.
fn has_room(
    most_attached: Option<i64>,
    va: i64,
    new_count: &NewCount,
    limits: &BTreeMap<String, i64>,
) -> bool {
    most_attached
        .is_some_and(|pods_volumes| within_limits(new_count, limits, |_| pods_volumes + va))
}

/// At most how many volumes the node's pods attach: their claim volumes, each
/// counted once. `None` when a pod has a volume whose counting can fail (a claim
/// with no name, a generic ephemeral volume, an in-tree volume that may translate):
/// Filter counts those exactly, errors included.
fn most_attached(node: &NodeInfo) -> Option<i64> {
    let mut n = 0;
    for pod in &node.pods {
        for v in &pod.volumes {
            match &v.persistent_volume_claim {
                Some(c) if !c.claim_name.is_empty() => n += 1,
                Some(_) => return None,
                None if v.ephemeral.is_some() || InTreePlugin::of_inline(v).is_some() => {
                    return None;
                }
                None => {}
            }
        }
    }
    Some(n)
}

/// Whether the bound alone settles the node (see [`NodeVolumes::va_count`]):
/// `false` whenever Filter must count, an error of the pod's own volumes included.
fn node_has_room(attached: &Attached, nv: &NodeVolumes, s: &State) -> bool {
    let new_count = if nv.has_csi_node {
        &s.new_with_csi_node
    } else {
        &s.new_without_csi_node
    };
    new_count
        .as_ref()
        .as_ref()
        .is_ok_and(|n| has_room(attached.most, nv.va_count, &n.per_driver, &nv.limits))
}

/// A driver whose volume limit the pod would exceed on a node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exceeded {
    pub driver: String,
    /// Volumes of the driver already attached to the node.
    pub attached: i64,
    /// The pod's volumes of the driver not attached yet.
    pub new: i64,
    pub limit: i64,
}

/// The Filter's decision: the first driver (by name) over its limit, if any.
/// `attachments` is [`attachments_by_node`] (computed here when absent).
pub fn first_exceeded(
    cluster: &Cluster,
    pod: &Pod,
    node: &NodeInfo,
    attachments: Option<&BTreeMap<String, Vec<(String, String)>>>,
) -> Result<Option<Exceeded>, Status> {
    if pod.volumes.is_empty() {
        return Ok(None);
    }
    let csi_node = cluster.csi_nodes.get(node.name());
    let computed;
    let attachments = match attachments {
        Some(a) => a,
        None => {
            let only: FastSet<&str> = [node.name()].into_iter().collect();
            computed = attachments_by_node(cluster, Some(&only));
            &computed
        }
    };
    let nv = NodeVolumes {
        has_csi_node: csi_node.is_some(),
        limits: owned_limits(csi_node),
        // Not read by the exact count.
        va_count: 0,
        attachments: attachments.get(node.name()).cloned().unwrap_or_default(),
    };
    let new = NewVolumes::of(cluster, pod, nv.has_csi_node);
    count_exactly(cluster, node, &new, &nv, || Arc::new(Attached::of(node)))
}

/// [`first_exceeded`] with the pod's new volumes, the node's CSINode limits and
/// attachments at hand, and what its pods attach when it comes to counting them.
fn count_exactly(
    cluster: &Cluster,
    node: &NodeInfo,
    new: &Result<NewVolumes, Status>,
    nv: &NodeVolumes,
    attached: impl FnOnce() -> Arc<Attached>,
) -> Result<Option<Exceeded>, Status> {
    let new = new.as_ref().map_err(Clone::clone)?;
    if new.keys.is_empty() || nv.limits.is_empty() {
        return Ok(None);
    }
    let attached = attached();
    let exact = attached.exact(cluster, node, nv);
    let volumes = exact.volumes.as_ref().map_err(Status::error)?;
    // Sharing a volume with a pod on the node only lowers the new count: when every
    // driver has room for all of the pod's volumes, it has room for those left after
    // sharing, and the per-volume search below is not needed.
    let current = |driver: &str| exact.counts.get(driver).copied().unwrap_or(0);
    if within_limits(&new.per_driver, &nv.limits, current) {
        return Ok(None);
    }
    // A volume shared with a pod already on the node is attached only once.
    let mut new_count: BTreeMap<&str, i64> = BTreeMap::new();
    for (driver, handle) in &new.keys {
        if find(volumes, driver, handle).is_err() {
            *new_count.entry(driver).or_default() += 1;
        }
    }
    for (driver, count) in new_count {
        if let Some(limit) = nv.limits.get(driver) {
            let current = current(driver);
            if current + count > *limit {
                return Ok(Some(Exceeded {
                    driver: driver.to_string(),
                    attached: current,
                    new: count,
                    limit: *limit,
                }));
            }
        }
    }
    Ok(None)
}

impl FilterPlugin for NodeVolumeLimits {
    fn filter(&self, cx: &Ctx, state: &CycleState, pod: &Pod, node: &NodeInfo) -> Status {
        if pod.volumes.is_empty() {
            return Status::success();
        }
        // Without PreFilter state, count exactly with what it would hold.
        let s = state.read::<State>(STATE_KEY);
        let index = match s {
            Some(s) => s.index.clone(),
            None => volume_index(cx.cluster),
        };
        let (pos, nv) = node_volumes(cx.cluster, &index, node);
        let attached = attached_for(&index, pos, node);
        if s.is_some_and(|s| node_has_room(&attached, &nv, s)) {
            return Status::success();
        }
        let computed;
        let new = match s {
            Some(s) if nv.has_csi_node => &*s.new_with_csi_node,
            Some(s) => &*s.new_without_csi_node,
            None => {
                computed = NewVolumes::of(cx.cluster, pod, nv.has_csi_node);
                &computed
            }
        };
        match count_exactly(cx.cluster, node, new, &nv, || attached) {
            Err(st) => st,
            Ok(Some(_)) => Status::unschedulable(ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED),
            Ok(None) => Status::success(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::status::Code;
    use crate::model::testing::{cluster, pod, simple_node};
    use serde_json::{Value, json};

    const EBS: &str = "ebs.csi.aws.com";

    fn csi_node(name: &str, drivers: &[(&str, Option<i32>)], migrated: Option<&str>) -> CSINode {
        let drivers: Vec<Value> = drivers
            .iter()
            .map(|(d, count)| {
                let mut v = json!({"name": d, "nodeID": format!("{name}-{d}")});
                if let Some(c) = count {
                    v["allocatable"] = json!({"count": c});
                }
                v
            })
            .collect();
        let mut v = json!({"metadata": {"name": name}, "spec": {"drivers": drivers}});
        if let Some(m) = migrated {
            v["metadata"]["annotations"] =
                json!({"storage.alpha.kubernetes.io/migrated-plugins": m});
        }
        serde_json::from_value(v).unwrap()
    }

    fn pvc_volumes(claims: &[&str]) -> Value {
        Value::Array(
            claims
                .iter()
                .map(|c| json!({"name": c, "persistentVolumeClaim": {"claimName": c}}))
                .collect(),
        )
    }

    fn pod_json(name: &str, node: Option<&str>, volumes: Value) -> Value {
        let mut p = json!({"metadata": {"name": name, "namespace": "default", "uid": format!("uid-{name}")},
            "spec": {"containers": [{"name": "c", "image": "i"}], "volumes": volumes}});
        if let Some(n) = node {
            p["spec"]["nodeName"] = json!(n);
        }
        p
    }

    /// Bound claim `c<i>` → CSI PV `pv<i>` of `driver`.
    fn bound(c: &mut Cluster, i: usize, driver: &str) {
        let pv: core::PersistentVolume = serde_json::from_value(json!({
            "metadata": {"name": format!("pv{i}")},
            "spec": {"csi": {"driver": driver, "volumeHandle": format!("vol-{i}")}}
        }))
        .unwrap();
        c.persistent_volumes.insert(format!("pv{i}"), pv);
        claim(c, &format!("c{i}"), Some(&format!("pv{i}")), None);
    }

    fn claim(c: &mut Cluster, name: &str, volume: Option<&str>, class: Option<&str>) {
        let mut v = json!({"metadata": {"name": name, "namespace": "default"}, "spec": {}});
        if let Some(pv) = volume {
            v["spec"]["volumeName"] = json!(pv);
        }
        if let Some(sc) = class {
            v["spec"]["storageClassName"] = json!(sc);
        }
        c.persistent_volume_claims.insert(
            format!("default/{name}"),
            serde_json::from_value(v).unwrap(),
        );
    }

    fn class(c: &mut Cluster, name: &str, provisioner: &str) {
        c.storage_classes.insert(
            name.into(),
            serde_json::from_value(json!({"metadata": {"name": name}, "provisioner": provisioner}))
                .unwrap(),
        );
    }

    fn run(c: &Cluster, p: &Pod) -> Result<Vec<Status>, Status> {
        let cx = Ctx {
            cluster: c,
            now: Default::default(),
        };
        let mut state = CycleState::default();
        let (_, pre) = NodeVolumeLimits.pre_filter(&cx, &mut state, p);
        if !pre.is_success() {
            return Err(pre);
        }
        Ok(c.nodes()
            .iter()
            .map(|n| NodeVolumeLimits.filter(&cx, &state, p, n))
            .collect())
    }

    /// A VolumeAttachment of `pv` to n1.
    fn va(name: &str, pv: &str) -> k8s_openapi::api::storage::v1::VolumeAttachment {
        serde_json::from_value(json!({"metadata": {"name": name}, "spec": {
            "attacher": EBS, "nodeName": "n1", "source": {"persistentVolumeName": pv}}}))
        .unwrap()
    }

    fn exceeded() -> Status {
        Status::unschedulable(ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED)
    }

    /// The bound PreFilter keeps (pods' volumes and VolumeAttachments, each counted
    /// once) only skips counting where counting would pass: with and without the
    /// PreFilter state, every node gets the same answer, on limits around the
    /// number of volumes, shared volumes, attachments, and a node that gained a pod
    /// after PreFilter (a nominated pod, as Filter sees it then).
    #[test]
    fn the_room_bound_agrees_with_counting() {
        for limit in 0..=5 {
            for shared in [false, true] {
                for attachments in [false, true] {
                    let mut c = cluster(
                        vec![simple_node("n1", "4", "8Gi"), simple_node("n2", "4", "8Gi")],
                        vec![
                            pod_json("r1", Some("n1"), pvc_volumes(&["c1", "c2"])),
                            // The same claim twice on a node attaches once.
                            pod_json("r2", Some("n1"), pvc_volumes(&["c2"])),
                            pod_json("r3", Some("n2"), pvc_volumes(&["c3"])),
                        ],
                    );
                    for i in 1..=6 {
                        bound(&mut c, i, EBS);
                    }
                    if attachments {
                        c.volume_attachments.insert("va5".into(), va("va5", "pv5"));
                    }
                    for n in ["n1", "n2"] {
                        c.csi_nodes
                            .insert(n.into(), csi_node(n, &[(EBS, Some(limit))], None));
                    }
                    let claims: &[&str] = if shared { &["c1", "c4"] } else { &["c4"] };
                    let p = pod(pod_json("new", None, pvc_volumes(claims)));
                    let cx = Ctx {
                        cluster: &c,
                        now: Default::default(),
                    };
                    let mut state = CycleState::default();
                    let (_, pre) = NodeVolumeLimits.pre_filter(&cx, &mut state, &p);
                    assert!(pre.is_success());
                    let case = format!("limit {limit} shared {shared} attachments {attachments}");
                    for n in c.nodes() {
                        let fast = NodeVolumeLimits.filter(&cx, &state, &p, n);
                        let exact = NodeVolumeLimits.filter(&cx, &CycleState::default(), &p, n);
                        assert_eq!(fast, exact, "{case} on {}", n.name());
                        // A nominated pod with another volume joins the node after
                        // PreFilter.
                        let mut grown = n.clone();
                        grown.add_pod(std::sync::Arc::new(pod(pod_json(
                            "nominated",
                            None,
                            pvc_volumes(&["c6"]),
                        ))));
                        let fast = NodeVolumeLimits.filter(&cx, &state, &p, &grown);
                        let exact =
                            NodeVolumeLimits.filter(&cx, &CycleState::default(), &p, &grown);
                        assert_eq!(fast, exact, "{case} on {} grown", n.name());
                    }
                }
            }
        }
    }

    /// The per-node index (CSINode limits, VolumeAttachment counts and handles)
    /// holds what reading the cluster gives, and Filter with it (PreFilter state,
    /// own nodes and copies) decides as the exact count without it (what causes
    /// call), on pods sharing PVs, ephemeral and in-tree volumes, missing claims;
    /// and after the objects change between cycles.
    #[test]
    fn the_node_index_agrees_with_the_cluster() {
        let mut c = cluster(
            vec![
                simple_node("n1", "4", "8Gi"),
                simple_node("n2", "4", "8Gi"),
                simple_node("n3", "4", "8Gi"),
            ],
            vec![
                pod_json("r1", Some("n1"), pvc_volumes(&["c1", "c2"])),
                pod_json("r2", Some("n1"), pvc_volumes(&["c2", "missing"])),
                pod_json(
                    "r3",
                    Some("n2"),
                    json!([{"name": "a", "awsElasticBlockStore": {"volumeID": "vol-a"}},
                        {"name": "eph", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}]),
                ),
            ],
        );
        for i in 1..=6 {
            bound(&mut c, i, EBS);
        }
        let intree: core::PersistentVolume = serde_json::from_value(json!({
            "metadata": {"name": "intree"},
            "spec": {"awsElasticBlockStore": {"volumeID": "aws://us-east-1a/vol-b"}}
        }))
        .unwrap();
        c.persistent_volumes.insert("intree".into(), intree);
        claim(&mut c, "intree", Some("intree"), None);
        // r3's generic ephemeral claim, not owned by it: counting n2 fails.
        claim(&mut c, "r3-eph", None, None);
        c.csi_nodes
            .insert("n1".into(), csi_node("n1", &[(EBS, Some(4))], None));
        c.csi_nodes.insert(
            "n2".into(),
            csi_node("n2", &[(EBS, Some(2)), ("other", None)], None),
        );
        c.volume_attachments.insert("va1".into(), va("va1", "pv1"));
        c.volume_attachments.insert("va5".into(), va("va5", "pv5"));
        // Attachments of a PV that is not CSI, of a missing PV, without attacher.
        c.volume_attachments
            .insert("va-intree".into(), va("va-intree", "intree"));
        c.volume_attachments
            .insert("va-ghost".into(), va("va-ghost", "ghost"));
        let mut no_attacher = va("va-none", "pv6");
        no_attacher.spec.attacher.clear();
        c.volume_attachments.insert("va-none".into(), no_attacher);
        let mut on_n2 = va("va-n2", "pv4");
        on_n2.spec.node_name = "n2".into();
        c.volume_attachments.insert("va-n2".into(), on_n2);

        let pods = [
            pvc_volumes(&["c3"]),
            pvc_volumes(&["c1", "c3", "c4"]),
            pvc_volumes(&["c2", "c5"]),
            pvc_volumes(&["intree", "c6"]),
            pvc_volumes(&["missing"]),
            json!([{"name": "x", "awsElasticBlockStore": {"volumeID": "vol-x"}}]),
            json!([{"name": "x", "csi": {"driver": EBS, "volumeHandle": "inline"}}]),
        ];
        let mut outcomes: BTreeMap<String, usize> = BTreeMap::new();
        for round in 0..3 {
            let index = volume_index(&c);
            let all = attachments_by_node(&c, None);
            assert_eq!(index.nodes.len(), 3);
            for (n, nv) in c.nodes().iter().zip(&index.nodes) {
                assert_eq!(
                    *nv,
                    NodeVolumes::of(&c, n.name()),
                    "round {round} {}",
                    n.name()
                );
                assert_eq!(
                    nv.attachments,
                    all.get(n.name()).cloned().unwrap_or_default(),
                    "round {round} {}",
                    n.name()
                );
            }
            for vols in &pods {
                let p = pod(pod_json("new", None, vols.clone()));
                let cx = Ctx {
                    cluster: &c,
                    now: Default::default(),
                };
                let mut state = CycleState::default();
                let (_, pre) = NodeVolumeLimits.pre_filter(&cx, &mut state, &p);
                if pre == Status::skip() {
                    // Nothing countable (an inline CSI volume): Filter does not run.
                    for n in c.nodes() {
                        assert_eq!(first_exceeded(&c, &p, n, None), Ok(None), "{vols}");
                    }
                    continue;
                }
                assert!(pre.is_success(), "{vols}");
                for n in c.nodes() {
                    let want = match first_exceeded(&c, &p, n, None) {
                        Err(st) => st,
                        Ok(Some(_)) => exceeded(),
                        Ok(None) => Status::success(),
                    };
                    *outcomes.entry(format!("{:?}", want.code)).or_insert(0) += 1;
                    let case = format!("round {round} {vols} on {}", n.name());
                    assert_eq!(NodeVolumeLimits.filter(&cx, &state, &p, n), want, "{case}");
                    let copy = n.clone();
                    assert_eq!(
                        NodeVolumeLimits.filter(&cx, &state, &p, &copy),
                        want,
                        "{case}"
                    );
                    let fresh = CycleState::default();
                    assert_eq!(NodeVolumeLimits.filter(&cx, &fresh, &p, n), want, "{case}");
                }
            }
            // Pods and objects change between cycles: the counts follow.
            c.upsert_pod(pod(pod_json("r4", Some("n1"), pvc_volumes(&["c4"]))));
            c.delete_pod("default/r2");
            if round == 0 {
                // Pods alone (the index stays, its per-node counts do not).
                continue;
            }
            c.volume_attachments.insert("va3".into(), va("va3", "pv3"));
            c.volume_attachments.insert("va4".into(), va("va4", "pv4"));
            c.csi_nodes
                .insert("n3".into(), csi_node("n3", &[(EBS, Some(0))], None));
        }
        // Every outcome was compared: passing, over the limit, unresolvable, error.
        assert_eq!(outcomes.len(), 4, "{outcomes:?}");
        let index = volume_index(&c);
        assert_eq!(index.nodes[0].va_count, 6);
        assert!(index.nodes[2].has_csi_node);
    }

    /// h29's shape: limits 2 / 1 / 5 / none; n1 runs two volumes, n3 one.
    #[test]
    fn csinode_limits_count_running_pods() {
        let mut c = cluster(
            vec![
                simple_node("n1", "4", "8Gi"),
                simple_node("n2", "4", "8Gi"),
                simple_node("n3", "4", "8Gi"),
                simple_node("n4", "4", "8Gi"),
            ],
            vec![
                pod_json("r1", Some("n1"), pvc_volumes(&["c1", "c2"])),
                pod_json("r3", Some("n3"), pvc_volumes(&["c3"])),
            ],
        );
        for i in 1..=4 {
            bound(&mut c, i, EBS);
        }
        c.csi_nodes
            .insert("n1".into(), csi_node("n1", &[(EBS, Some(2))], None));
        c.csi_nodes
            .insert("n2".into(), csi_node("n2", &[(EBS, Some(1))], None));
        c.csi_nodes
            .insert("n3".into(), csi_node("n3", &[(EBS, Some(5))], None));
        let p = pod(pod_json("new", None, pvc_volumes(&["c4"])));
        let got = run(&c, &p).unwrap();
        assert_eq!(
            got,
            vec![
                exceeded(),
                Status::success(),
                Status::success(),
                Status::success()
            ]
        );
        assert_eq!(got[0].code, Code::Unschedulable);

        // Sharing a volume already attached by a pod on the node adds nothing.
        let shared = pod(pod_json("new", None, pvc_volumes(&["c1"])));
        assert!(run(&c, &shared).unwrap()[0].is_success());
        // One shared and one new volume: only the new one counts (2 + 1 <= 3), though
        // both together would not fit; at a limit of 2 the new one is too many.
        let half_shared = pod(pod_json("new", None, pvc_volumes(&["c1", "c4"])));
        c.csi_nodes
            .insert("n1".into(), csi_node("n1", &[(EBS, Some(3))], None));
        assert!(run(&c, &half_shared).unwrap()[0].is_success());
        c.csi_nodes
            .insert("n1".into(), csi_node("n1", &[(EBS, Some(2))], None));
        assert_eq!(run(&c, &half_shared).unwrap()[0], exceeded());
        // Other drivers' limits do not apply.
        bound(&mut c, 5, "other.csi");
        let other = pod(pod_json("new", None, pvc_volumes(&["c5"])));
        assert!(run(&c, &other).unwrap()[0].is_success());
        // A driver without an allocatable count is unlimited.
        c.csi_nodes
            .insert("n1".into(), csi_node("n1", &[(EBS, None)], None));
        assert!(run(&c, &p).unwrap()[0].is_success());
    }

    #[test]
    fn volume_attachments_count_unless_a_pod_uses_them() {
        let mut c = cluster(
            vec![simple_node("n1", "4", "8Gi")],
            vec![pod_json("r1", Some("n1"), pvc_volumes(&["c1"]))],
        );
        for i in 1..=3 {
            bound(&mut c, i, EBS);
        }
        c.csi_nodes
            .insert("n1".into(), csi_node("n1", &[(EBS, Some(2))], None));
        // Attachment of the running pod's own volume: counted once.
        c.volume_attachments.insert("va1".into(), va("va1", "pv1"));
        let p = pod(pod_json("new", None, pvc_volumes(&["c3"])));
        assert!(run(&c, &p).unwrap()[0].is_success());
        // A lingering attachment of another volume counts: 2 + 1 > 2.
        c.volume_attachments.insert("va2".into(), va("va2", "pv2"));
        assert_eq!(run(&c, &p).unwrap()[0], exceeded());
        // An attachment of the new pod's own volume still counts as attached (the
        // new volume is not deduplicated against attachments): 3 > 2.
        c.volume_attachments.remove("va2");
        c.volume_attachments.insert("va3".into(), va("va3", "pv3"));
        assert_eq!(run(&c, &p).unwrap()[0], exceeded());
    }

    #[test]
    fn unbound_claims_count_by_class_provisioner() {
        let mut c = cluster(
            vec![simple_node("n1", "4", "8Gi")],
            vec![
                pod_json("r1", Some("n1"), pvc_volumes(&["pending"])),
                pod_json("r2", Some("n1"), pvc_volumes(&["pending"])),
            ],
        );
        class(&mut c, "sc", EBS);
        claim(&mut c, "pending", None, Some("sc"));
        claim(&mut c, "pending2", None, Some("sc"));
        claim(&mut c, "noclass", None, None);
        claim(&mut c, "missing-pv", Some("ghost"), Some("sc"));
        c.csi_nodes
            .insert("n1".into(), csi_node("n1", &[(EBS, Some(2))], None));
        // The same unbound claim in two pods is one volume: 1 + 1 ≤ 2.
        let p = pod(pod_json("new", None, pvc_volumes(&["pending2"])));
        assert!(run(&c, &p).unwrap()[0].is_success());
        // A claim bound to a missing PV falls back to its class: 1 + 2 > 2.
        let p = pod(pod_json(
            "new",
            None,
            pvc_volumes(&["pending2", "missing-pv"]),
        ));
        assert_eq!(run(&c, &p).unwrap()[0], exceeded());
        // A claim without class is not counted.
        let p = pod(pod_json("new", None, pvc_volumes(&["noclass"])));
        assert!(run(&c, &p).unwrap()[0].is_success());
    }

    #[test]
    fn in_tree_volumes_count_under_their_csi_driver() {
        let mut c = cluster(
            vec![simple_node("n1", "4", "8Gi"), simple_node("n2", "4", "8Gi")],
            vec![pod_json(
                "r1",
                Some("n1"),
                json!([{"name": "a", "awsElasticBlockStore": {"volumeID": "vol-a"}}]),
            )],
        );
        let pv: core::PersistentVolume = serde_json::from_value(json!({
            "metadata": {"name": "intree"},
            "spec": {"awsElasticBlockStore": {"volumeID": "aws://us-east-1a/vol-b"}}
        }))
        .unwrap();
        c.persistent_volumes.insert("intree".into(), pv);
        claim(&mut c, "intree", Some("intree"), None);
        class(&mut c, "gp2", "kubernetes.io/aws-ebs");
        claim(&mut c, "dyn", None, Some("gp2"));
        c.csi_nodes
            .insert("n1".into(), csi_node("n1", &[(EBS, Some(1))], None));
        // n2 has no CSINode: migration is off there and nothing is limited.
        let cases: [(Value, Status); 5] = [
            // inline EBS vs the running inline EBS volume: 1 + 1 > 1.
            (
                json!([{"name": "x", "awsElasticBlockStore": {"volumeID": "vol-x"}}]),
                exceeded(),
            ),
            // the same inline volume id is already attached: nothing new.
            (
                json!([{"name": "x", "awsElasticBlockStore": {"volumeID": "aws://z/vol-a"}}]),
                Status::success(),
            ),
            // an in-tree PV counts under ebs.csi.aws.com.
            (pvc_volumes(&["intree"]), exceeded()),
            // an unbound claim of the in-tree provisioner too.
            (pvc_volumes(&["dyn"]), exceeded()),
            // an inline volume that cannot be translated is an error.
            (
                json!([{"name": "x", "awsElasticBlockStore": {"volumeID": "aws://z/bad"}}]),
                Status::error(
                    "converting volume(x) from inline to csi: failed to translate Kubernetes ID to EBS Volume ID Invalid format for AWS volume (aws://z/bad)",
                ),
            ),
        ];
        for (vols, want) in cases {
            let p = pod(pod_json("new", None, vols.clone()));
            let got = run(&c, &p).unwrap();
            assert_eq!(got[0], want, "{vols}");
            assert!(got[1].is_success(), "{vols}");
        }
    }

    #[test]
    fn missing_claim_and_ephemeral_ownership() {
        let mut c = cluster(vec![simple_node("n1", "4", "8Gi")], vec![]);
        // Missing claim: unresolvable even on a node without limits.
        let p = pod(pod_json("new", None, pvc_volumes(&["nope"])));
        assert_eq!(
            run(&c, &p).unwrap()[0],
            Status::unresolvable(
                "looking up PVC default/nope: persistentvolumeclaim \"nope\" not found"
            )
        );
        // A claim volume without a claim name.
        let p = pod(pod_json("new", None, pvc_volumes(&[""])));
        assert_eq!(
            run(&c, &p).unwrap()[0],
            Status::error("PersistentVolumeClaim had no name")
        );
        // Ephemeral volume whose claim is not owned by the pod: an error.
        claim(&mut c, "new-eph", None, Some("sc"));
        let p = pod(pod_json(
            "new",
            None,
            json!([{"name": "eph", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}]),
        ));
        assert_eq!(
            run(&c, &p).unwrap()[0],
            Status::error(
                "PVC default/new-eph was not created for pod default/new (pod is not owner)"
            )
        );
        // Ephemeral claim not created yet.
        let p = pod(pod_json(
            "other",
            None,
            json!([{"name": "eph", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}]),
        ));
        assert_eq!(
            run(&c, &p).unwrap()[0],
            Status::unresolvable(
                "looking up PVC default/other-eph: persistentvolumeclaim \"other-eph\" not found"
            )
        );
    }

    #[test]
    fn prefilter_skips_without_countable_volumes() {
        let c = cluster(vec![simple_node("n1", "4", "8Gi")], vec![]);
        let cases = [
            (json!([]), true),
            (json!([{"name": "s", "secret": {"secretName": "s"}}]), true),
            (
                json!([{"name": "g", "gcePersistentDisk": {"pdName": "d"}}]),
                false,
            ),
            (
                json!([{"name": "f", "azureFile": {"secretName": "s", "shareName": "x"}}]),
                false,
            ),
            (
                json!([{"name": "i", "iscsi": {"iqn": "q", "lun": 0, "targetPortal": "p"}}]),
                true,
            ),
            (pvc_volumes(&["x"]), false),
        ];
        for (vols, skip) in cases {
            let p = pod(pod_json("new", None, vols.clone()));
            assert_eq!(run(&c, &p).err() == Some(Status::skip()), skip, "{vols}");
        }
    }
}
