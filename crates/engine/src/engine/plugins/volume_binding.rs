//! VolumeBinding (PreFilter, Filter, Reserve, PreBind, PreScore, Score): bound claims
//! must have their PV's node affinity satisfied by the node; unbound claims of a
//! WaitForFirstConsumer class need a matching available PV on the node or dynamic
//! provisioning allowed there. Reserve records the bindings that would be made and
//! PreBind reports them; nothing is written anywhere.
//!
//! With `StorageCapacityScoring` off (1.35 default) there is no scorer, so PreScore
//! always skips.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1 as core;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::csi_translation::{InTreePlugin, translate_pv};
use super::volume_util::{
    ANN_BIND_COMPLETED, ANN_SELECTED_NODE, NOT_SUPPORTED_PROVISIONER, PvAffinity,
    ephemeral_claim_name, has_annotation, lookup_pvc, migrated_plugins, pv_capacity, pv_class,
    pvc_class, pvc_not_found, pvc_request, pvc_volume_name, volume_is_for_pod,
};
use crate::config::field;
use crate::engine::framework::{
    Ctx, CycleState, FilterPlugin, NodeScore, Plugin, PreBindPlugin, PreFilterPlugin,
    PreFilterResult, PreScorePlugin, ReservePlugin, ScorePlugin,
};
use crate::engine::go_duration;
use crate::engine::status::Status;
use crate::model::labels::{Labels, Selector, label_selector};
use crate::model::{Cluster, NodeInfo, Pod, Quantity};

pub const NAME: &str = "VolumeBinding";
const STATE_KEY: &str = "VolumeBinding";

pub const ERR_REASON_NODE_CONFLICT: &str = "node(s) didn't match PersistentVolume's node affinity";
pub const ERR_REASON_BIND_CONFLICT: &str =
    "node(s) didn't find available persistent volumes to bind";
pub const ERR_REASON_NOT_ENOUGH_SPACE: &str = "node(s) did not have enough free storage";
pub const ERR_REASON_PV_NOT_EXIST: &str =
    "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)";
pub const ERR_REASON_UNBOUND_IMMEDIATE: &str = "pod has unbound immediate PersistentVolumeClaims";

const DEFAULT_BIND_TIMEOUT_SECONDS: i64 = 600;

/// `VolumeBindingArgs` (kubescheduler.config.k8s.io/v1).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VolumeBindingArgs {
    /// Defaults to 600.
    pub bind_timeout_seconds: Option<i64>,
    /// Only allowed with the `StorageCapacityScoring` gate, which is off in 1.35.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shape: Option<Vec<UtilizationShapePoint>>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UtilizationShapePoint {
    pub utilization: i32,
    pub score: i32,
}

/// Decodes the user's args strictly (unknown fields and wrong types name the field).
fn decode_args(user: &Value, path: &str) -> Result<VolumeBindingArgs, Vec<String>> {
    let Value::Object(map) = user else {
        return Err(vec![format!("{path}: expected an object")]);
    };
    let mut args = VolumeBindingArgs::default();
    let mut errs = Vec::new();
    for (k, v) in map {
        let p = format!("{path}.{k}");
        match k.as_str() {
            // TypeMeta of an args object; its kind is checked with the pluginConfig.
            "apiVersion" | "kind" => {}
            "bindTimeoutSeconds" => match v {
                Value::Null => {}
                _ => match v.as_i64() {
                    Some(n) => args.bind_timeout_seconds = Some(n),
                    None => errs.push(format!("{p}: expected an integer, got {v}")),
                },
            },
            "shape" => match v {
                Value::Null => {}
                Value::Array(items) => {
                    let mut shape = Vec::new();
                    for (i, item) in items.iter().enumerate() {
                        match decode_point(item, &format!("{p}[{i}]")) {
                            Ok(pt) => shape.push(pt),
                            Err(e) => errs.push(e),
                        }
                    }
                    args.shape = Some(shape);
                }
                _ => errs.push(format!("{p}: expected a list, got {v}")),
            },
            _ => errs.push(format!("{p}: unknown field")),
        }
    }
    if errs.is_empty() { Ok(args) } else { Err(errs) }
}

fn decode_point(v: &Value, path: &str) -> Result<UtilizationShapePoint, String> {
    let Value::Object(map) = v else {
        return Err(format!("{path}: expected an object, got {v}"));
    };
    let mut pt = UtilizationShapePoint::default();
    for (k, v) in map {
        let n = v
            .as_i64()
            .and_then(|n| i32::try_from(n).ok())
            .ok_or_else(|| format!("{path}.{k}: expected an int32, got {v}"));
        match k.as_str() {
            "utilization" => pt.utilization = n?,
            "score" => pt.score = n?,
            _ => return Err(format!("{path}.{k}: unknown field")),
        }
    }
    Ok(pt)
}

/// Go's `%#v` of the internal shape, which is how field errors print it.
fn go_shape(shape: &[UtilizationShapePoint]) -> String {
    let pts: Vec<String> = shape
        .iter()
        .map(|p| {
            format!(
                "config.UtilizationShapePoint{{Utilization:{}, Score:{}}}",
                p.utilization, p.score
            )
        })
        .collect();
    format!("[]config.UtilizationShapePoint{{{}}}", pts.join(", "))
}

/// `ValidateVolumeBindingArgsWithOptions` with the `StorageCapacityScoring` gate off.
fn validate_args(args: &VolumeBindingArgs, path: &str) -> Vec<String> {
    let child = |f: &str| {
        if path.is_empty() {
            f.to_string()
        } else {
            format!("{path}.{f}")
        }
    };
    let mut errs = Vec::new();
    let timeout = args
        .bind_timeout_seconds
        .unwrap_or(DEFAULT_BIND_TIMEOUT_SECONDS);
    if timeout < 0 {
        errs.push(field::invalid(
            &child("bindTimeoutSeconds"),
            timeout,
            "invalid BindTimeoutSeconds, should not be a negative value",
        ));
    }
    if let Some(shape) = &args.shape {
        errs.push(format!(
            "{}: Invalid value: {}: unexpected field `shape`, remove it or turn on the feature gate StorageCapacityScoring",
            child("shape"),
            go_shape(shape)
        ));
    }
    errs
}

/// Registry args hook: defaults (`bindTimeoutSeconds: 600`) and validation.
pub fn default_args(user: Option<&Value>, path: &str) -> Result<Value, Vec<String>> {
    let mut args = match user {
        None | Some(Value::Null) => VolumeBindingArgs::default(),
        Some(v) => decode_args(v, path)?,
    };
    args.bind_timeout_seconds
        .get_or_insert(DEFAULT_BIND_TIMEOUT_SECONDS);
    let errs = validate_args(&args, path);
    if !errs.is_empty() {
        return Err(errs);
    }
    serde_json::to_value(&args).map_err(|e| vec![format!("{path}: {e}")])
}

pub struct VolumeBinding {
    bind_timeout: Duration,
    /// VolumeAttributesClass gate (on from 1.34).
    vac_enabled: bool,
    /// 1.32's wording of a bound PV's node-affinity conflict.
    old_node_conflict_reason: bool,
}

/// `ErrReasonNodeConflict` up to 1.32.
pub const ERR_REASON_NODE_CONFLICT_1_32: &str = "node(s) had volume node affinity conflict";

pub fn new(args: &Value, fts: &crate::version::Features) -> Result<Arc<dyn Plugin>, String> {
    let args = match args {
        Value::Null => VolumeBindingArgs::default(),
        v => decode_args(v, "").map_err(|e| e.join(", "))?,
    };
    let errs = validate_args(&args, "");
    if !errs.is_empty() {
        return Err(errs.join(", "));
    }
    let secs = args
        .bind_timeout_seconds
        .unwrap_or(DEFAULT_BIND_TIMEOUT_SECONDS);
    Ok(Arc::new(VolumeBinding {
        bind_timeout: Duration::from_secs(secs.max(0) as u64),
        vac_enabled: fts.volume_attributes_class,
        old_node_conflict_reason: fts.old_pv_node_affinity_reason(),
    }))
}

impl Plugin for VolumeBinding {
    fn name(&self) -> &str {
        NAME
    }
    fn as_pre_filter(&self) -> Option<&dyn PreFilterPlugin> {
        Some(self)
    }
    fn as_filter(&self) -> Option<&dyn FilterPlugin> {
        Some(self)
    }
    fn as_pre_score(&self) -> Option<&dyn PreScorePlugin> {
        Some(self)
    }
    fn as_score(&self) -> Option<&dyn ScorePlugin> {
        Some(self)
    }
    fn as_reserve(&self) -> Option<&dyn ReservePlugin> {
        Some(self)
    }
    fn as_pre_bind(&self) -> Option<&dyn PreBindPlugin> {
        Some(self)
    }
}

/// A PVC chosen to be bound to an existing PV.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StaticBinding {
    /// `namespace/name` of the claim.
    pub claim: String,
    pub pv: String,
}

/// A PVC that would be provisioned on the chosen node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DynamicProvision {
    pub claim: String,
    pub storage_class: String,
    pub provisioner: String,
}

/// What binding the pod's volumes on a node would do (`PodVolumes`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PodVolumes {
    pub static_bindings: Vec<StaticBinding>,
    pub dynamic_provisions: Vec<DynamicProvision>,
}

/// A bound claim's PV, with its node affinity parsed once.
#[derive(Debug)]
struct BoundPv {
    affinity: PvAffinity,
    /// In-tree PVs whose plugin migrates: the plugin's in-tree name and the affinity
    /// after translation to CSI, used on nodes where the plugin is migrated.
    migrated: Option<(&'static str, Result<PvAffinity, String>)>,
}

#[derive(Debug)]
struct BoundClaim {
    /// `namespace/name` of the claim and the PV it is bound to (for causes).
    key: String,
    pv_name: String,
    /// `None`: the PV does not exist.
    pv: Option<BoundPv>,
}

/// A PV that may be bound to an unbound claim, after every node-independent check of
/// `FindMatchingVolume`.
#[derive(Debug)]
struct Candidate {
    name: String,
    capacity: Quantity,
    /// Pre-bound to this claim by its claimRef: decides the match by itself.
    prebound: bool,
    affinity: PvAffinity,
}

/// One allowedTopologies term: every key must have one of its values.
type TopologyTerm = Vec<(String, Vec<String>)>;

/// A claim's candidate PVs, indexed so that a node only looks at the PVs its labels
/// can match (local PVs pinned to one host are the common case).
#[derive(Debug, Default)]
struct Candidates {
    all: Vec<Candidate>,
    /// Pre-bound candidates, in order.
    prebound: Vec<usize>,
    /// Others whose affinity has a single term with an `In` requirement: by that
    /// requirement's key, then value.
    by_label: BTreeMap<String, BTreeMap<String, Vec<usize>>>,
    /// Others, checked on every node.
    scan: Vec<usize>,
}

impl Candidates {
    fn new(all: Vec<Candidate>) -> Candidates {
        let mut c = Candidates::default();
        for (i, cand) in all.iter().enumerate() {
            if cand.prebound {
                c.prebound.push(i);
            } else if let Some((key, values)) = cand.affinity.index_hint() {
                let by_value = c.by_label.entry(key.to_string()).or_default();
                for v in values {
                    by_value.entry(v.clone()).or_default().push(i);
                }
            } else {
                c.scan.push(i);
            }
        }
        c.all = all;
        c
    }
}

/// How a claim without a matching PV would be provisioned (`checkVolumeProvisions`),
/// minus the node-dependent checks.
#[derive(Debug)]
enum Provisioning {
    Error(String),
    Unsupported,
    Possible {
        class: String,
        provisioner: String,
        /// `None`: no allowedTopologies, any node. Terms that select nothing are
        /// dropped.
        topology: Option<Vec<TopologyTerm>>,
        /// `None`: capacity is not tracked for this claim.
        capacity: Option<Vec<Selector>>,
    },
}

#[derive(Debug)]
struct DelayClaim {
    key: String,
    /// The claim's storage class (for causes).
    class: String,
    request: Quantity,
    selected_node: Option<String>,
    candidates: Result<Candidates, String>,
    provisioning: Provisioning,
}

#[derive(Debug, Default)]
struct PodClaims {
    bound: Vec<BoundClaim>,
    delay: Vec<DelayClaim>,
}

#[derive(Clone, Debug, Default)]
struct State {
    /// `None` when the pod has no claim (PreFilter skipped).
    claims: Option<Arc<PodClaims>>,
    all_bound: bool,
    reserved: Option<(String, PodVolumes)>,
}

/// The bindings Reserve recorded for `node`, if any (for display).
pub fn reserved_volumes<'s>(state: &'s CycleState, node: &str) -> Option<&'s PodVolumes> {
    let s = state.read::<State>(STATE_KEY)?;
    s.reserved
        .as_ref()
        .filter(|(n, _)| n == node)
        .map(|(_, v)| v)
}

fn not_found() -> Status {
    // `CycleState.Read`'s ErrNotFound.
    Status::error("not found")
}

fn is_volume_bound_to_claim(
    pv: &core::PersistentVolume,
    pvc: &core::PersistentVolumeClaim,
) -> bool {
    let Some(r) = pv.spec.as_ref().and_then(|s| s.claim_ref.as_ref()) else {
        return false;
    };
    if r.name.as_deref() != pvc.metadata.name.as_deref()
        || r.namespace.as_deref().unwrap_or("") != pvc.metadata.namespace.as_deref().unwrap_or("")
    {
        return false;
    }
    match r.uid.as_deref() {
        None | Some("") => true,
        Some(uid) => pvc.metadata.uid.as_deref() == Some(uid),
    }
}

fn volume_mode(m: Option<&String>) -> &str {
    m.map_or("Filesystem", |s| s.as_str())
}

/// `FindMatchingVolume`'s node-independent part: the PVs a claim may bind to, in
/// listing order.
fn candidates(
    cluster: &Cluster,
    pvc: &core::PersistentVolumeClaim,
    key: &str,
    class: &str,
    request: Quantity,
    vac_enabled: bool,
) -> Result<Vec<Candidate>, String> {
    let spec = pvc.spec.as_ref();
    let claim_vac = spec
        .and_then(|s| s.volume_attributes_class_name.as_deref())
        .unwrap_or("");
    if !vac_enabled && !claim_vac.is_empty() {
        return Err(format!(
            "unsupported volumeAttributesClassName is set on claim {key} when the feature-gate VolumeAttributesClass is disabled"
        ));
    }
    let selector = match spec.and_then(|s| s.selector.as_ref()) {
        None => None,
        Some(sel) => Some(label_selector(Some(sel)).map_err(|e| {
            format!("error creating internal label selector for claim: {key}: {e}")
        })?),
    };
    let claim_mode = volume_mode(spec.and_then(|s| s.volume_mode.as_ref()));
    let claim_modes = spec.and_then(|s| s.access_modes.as_ref());
    let empty = std::collections::BTreeMap::new();
    let mut out = Vec::new();
    // The PV cache lists a class's PVs in no particular order; name order here. Of
    // those, only the PVs without a claimRef or with one naming this claim can match.
    let index = pv_index(cluster);
    let unclaimed = index.unclaimed.get(class).map_or(&[][..], Vec::as_slice);
    let claim_ref = (
        pvc.metadata.namespace.clone().unwrap_or_default(),
        pvc.metadata.name.clone(),
    );
    let prebound_to_claim = index
        .by_claim
        .get(&claim_ref)
        .map_or(&[][..], Vec::as_slice);
    let names = merge_sorted(unclaimed, prebound_to_claim);
    for pv in names
        .iter()
        .filter_map(|n| cluster.persistent_volumes.get(n.as_str()))
    {
        if pv_class(pv) != class {
            continue;
        }
        let Some(pv_spec) = pv.spec.as_ref() else {
            continue;
        };
        let prebound = is_volume_bound_to_claim(pv, pvc);
        if pv_spec.claim_ref.is_some() && !prebound {
            continue;
        }
        let capacity = pv_capacity(pv);
        if capacity < request {
            continue;
        }
        if volume_mode(pv_spec.volume_mode.as_ref()) != claim_mode {
            continue;
        }
        if pv.metadata.deletion_timestamp.is_some() {
            continue;
        }
        if !prebound {
            let phase = pv.status.as_ref().and_then(|s| s.phase.as_deref());
            if phase != Some("Available") {
                continue;
            }
            let labels = pv.metadata.labels.as_ref().unwrap_or(&empty);
            if selector.as_ref().is_some_and(|s| !s.matches(labels)) {
                continue;
            }
            let vac = pv_spec
                .volume_attributes_class_name
                .as_deref()
                .unwrap_or("");
            if vac != claim_vac {
                continue;
            }
            let pv_modes = pv_spec.access_modes.as_deref().unwrap_or_default();
            if !claim_modes
                .into_iter()
                .flatten()
                .all(|m| pv_modes.contains(m))
            {
                continue;
            }
        }
        out.push(Candidate {
            name: pv.metadata.name.clone().unwrap_or_default(),
            capacity,
            prebound,
            affinity: PvAffinity::of_pv(pv),
        });
    }
    Ok(out)
}

/// The PVs [`candidates`] looks at, built once per state of the volume objects
/// ([`Cluster::volume_derived`]): upstream's PV cache lists every PV of the class
/// and drops those claimed by other claims one by one, which on a cluster with a
/// bound PV per pod costs a walk of them all in every cycle.
#[derive(Debug, Default)]
struct PvIndex {
    /// Names of the PVs without a claimRef, by class, in name order.
    unclaimed: BTreeMap<String, Vec<String>>,
    /// Names of the PVs with a claimRef, by its namespace ("" when unset) and name,
    /// in name order.
    by_claim: BTreeMap<(String, Option<String>), Vec<String>>,
}

fn pv_index(cluster: &Cluster) -> Arc<PvIndex> {
    cluster.volume_derived("VolumeBinding/pvs", |c| {
        let mut index = PvIndex::default();
        for (name, pv) in c.persistent_volumes.iter() {
            match pv.spec.as_ref().and_then(|s| s.claim_ref.as_ref()) {
                Some(r) => index
                    .by_claim
                    .entry((r.namespace.clone().unwrap_or_default(), r.name.clone()))
                    .or_default()
                    .push(name.clone()),
                None => index
                    .unclaimed
                    .entry(pv_class(pv).to_string())
                    .or_default()
                    .push(name.clone()),
            }
        }
        index
    })
}

/// Two name-ordered lists as one (a PV is in at most one of them).
fn merge_sorted<'a>(a: &'a [String], b: &'a [String]) -> Vec<&'a String> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if a[i] <= b[j] {
            out.push(&a[i]);
            i += 1;
        } else {
            out.push(&b[j]);
            j += 1;
        }
    }
    out.extend(&a[i..]);
    out.extend(&b[j..]);
    out
}

/// `checkVolumeProvisions`' node-independent part for one claim.
fn provisioning(
    cluster: &Cluster,
    pvc: &core::PersistentVolumeClaim,
    key: &str,
    class_name: &str,
) -> Provisioning {
    if class_name.is_empty() {
        return Provisioning::Error(format!("no class for claim {key:?}"));
    }
    let Some(class) = cluster.storage_classes.get(class_name) else {
        return Provisioning::Error(format!("failed to find storage class {class_name:?}"));
    };
    let provisioner = class.provisioner.clone();
    if provisioner.is_empty() || provisioner == NOT_SUPPORTED_PROVISIONER {
        return Provisioning::Unsupported;
    }
    let topology = match class.allowed_topologies.as_deref() {
        None | Some([]) => None,
        Some(terms) => Some(
            terms
                .iter()
                .filter_map(|t| {
                    let reqs = t.match_label_expressions.as_deref().unwrap_or_default();
                    // An empty term, or one with a requirement without values (an
                    // invalid `In`), selects nothing.
                    if reqs.is_empty() || reqs.iter().any(|r| r.values.is_empty()) {
                        return None;
                    }
                    Some(
                        reqs.iter()
                            .map(|r| (r.key.clone(), r.values.clone()))
                            .collect(),
                    )
                })
                .collect(),
        ),
    };
    Provisioning::Possible {
        class: class_name.to_string(),
        capacity: capacity_check(cluster, pvc, &provisioner, class_name),
        provisioner,
        topology,
    }
}

/// `hasEnoughCapacity`'s node-independent part: `None` when capacity is not
/// checked, else the node selectors of the CSIStorageCapacity objects that would be
/// large enough.
fn capacity_check(
    cluster: &Cluster,
    pvc: &core::PersistentVolumeClaim,
    provisioner: &str,
    class_name: &str,
) -> Option<Vec<Selector>> {
    let size = pvc_request(pvc)?.value();
    // Only CSI drivers that opt into storage capacity tracking are checked.
    let driver = cluster.csi_drivers.get(provisioner)?;
    if driver.spec.storage_capacity != Some(true) {
        return None;
    }
    let mut out = Vec::new();
    for cap in cluster.csi_storage_capacities.values() {
        if cap.storage_class_name != class_name {
            continue;
        }
        // MaximumVolumeSize, when set, is more precise than the total capacity.
        let limit = cap.maximum_volume_size.as_ref().or(cap.capacity.as_ref());
        let Some(limit) = limit.and_then(|q| Quantity::parse(&q.0).ok()) else {
            continue;
        };
        if limit.value() < size {
            continue;
        }
        let Some(topology) = cap.node_topology.as_ref() else {
            continue;
        };
        if let Ok(sel) = label_selector(Some(topology)) {
            out.push(sel);
        }
    }
    Some(out)
}

/// `MatchTopologySelectorTerms`.
fn topology_matches(terms: &[TopologyTerm], labels: &Labels) -> bool {
    terms.iter().any(|reqs| {
        reqs.iter()
            .all(|(k, vals)| labels.get(k).is_some_and(|v| vals.iter().any(|x| x == v)))
    })
}

/// PreFilter's `podHasPVCs`: whether the pod uses claims, and the first claim that
/// makes the pod unschedulable.
fn pod_has_pvcs(cluster: &Cluster, pod: &Pod) -> Result<bool, String> {
    let mut has = false;
    let mut buf = String::new();
    for v in &pod.volumes {
        let (name, ephemeral) = if let Some(c) = &v.persistent_volume_claim {
            (c.claim_name.clone(), false)
        } else if v.ephemeral.is_some() {
            (ephemeral_claim_name(pod, v), true)
        } else {
            continue;
        };
        has = true;
        let Some(pvc) = lookup_pvc(cluster, &mut buf, &pod.namespace, &name) else {
            return Err(if ephemeral {
                format!(
                    "waiting for ephemeral volume controller to create the persistentvolumeclaim {name:?}"
                )
            } else {
                pvc_not_found(&name)
            });
        };
        if pvc.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Lost") {
            return Err(format!(
                "persistentvolumeclaim {:?} bound to non-existent persistentvolume {:?}",
                pvc.metadata.name.as_deref().unwrap_or(""),
                pvc_volume_name(pvc)
            ));
        }
        if pvc.metadata.deletion_timestamp.is_some() {
            return Err(format!(
                "persistentvolumeclaim {:?} is being deleted",
                pvc.metadata.name.as_deref().unwrap_or("")
            ));
        }
        if ephemeral {
            volume_is_for_pod(pod, pvc)?;
        }
    }
    Ok(has)
}

/// `volume.IsDelayBindingMode`: a missing class counts as Immediate.
fn is_delay_binding(cluster: &Cluster, pvc: &core::PersistentVolumeClaim) -> Result<bool, String> {
    let class_name = pvc_class(pvc);
    if class_name.is_empty() {
        return Ok(false);
    }
    let Some(class) = cluster.storage_classes.get(class_name) else {
        return Ok(false);
    };
    match class.volume_binding_mode.as_deref() {
        None => Err(format!(
            "VolumeBindingMode not set for StorageClass {class_name:?}"
        )),
        Some(m) => Ok(m == "WaitForFirstConsumer"),
    }
}

enum ClaimsOutcome {
    Ok(PodClaims),
    UnboundImmediate,
    Error(String),
}

/// `GetPodVolumeClaims`, plus the per-claim precomputation Filter needs.
fn pod_volume_claims(cluster: &Cluster, pod: &Pod, vac_enabled: bool) -> ClaimsOutcome {
    let mut claims = PodClaims::default();
    let mut unbound_immediate = false;
    let mut buf = String::new();
    for v in &pod.volumes {
        let name = if let Some(c) = &v.persistent_volume_claim {
            c.claim_name.clone()
        } else if v.ephemeral.is_some() {
            ephemeral_claim_name(pod, v)
        } else {
            continue;
        };
        let key = format!("{}/{name}", pod.namespace);
        let Some(pvc) = lookup_pvc(cluster, &mut buf, &pod.namespace, &name) else {
            return ClaimsOutcome::Error(format!("error getting PVC {key:?}: not found"));
        };
        if v.ephemeral.is_some()
            && let Err(e) = volume_is_for_pod(pod, pvc)
        {
            return ClaimsOutcome::Error(e);
        }
        let pv_name = pvc_volume_name(pvc);
        if !pv_name.is_empty() && has_annotation(&pvc.metadata, ANN_BIND_COMPLETED) {
            let pv = cluster.persistent_volumes.get(pv_name).map(|pv| BoundPv {
                affinity: PvAffinity::of_pv(pv),
                migrated: InTreePlugin::of_pv(pv)
                    .filter(|p| {
                        matches!(
                            p,
                            InTreePlugin::AwsEbs
                                | InTreePlugin::GcePd
                                | InTreePlugin::AzureDisk
                                | InTreePlugin::Cinder
                                | InTreePlugin::Portworx
                        )
                    })
                    .map(|p| {
                        let t = translate_pv(pv)
                            .map(|t| PvAffinity::of(t.and_then(|t| t.node_affinity).as_ref()))
                            .map_err(|e| format!("could not translate pv: {e}"));
                        (p.in_tree_name(), t)
                    }),
            });
            claims.bound.push(BoundClaim {
                key,
                pv_name: pv_name.to_string(),
                pv,
            });
            continue;
        }
        let delay = match is_delay_binding(cluster, pvc) {
            Ok(d) => d,
            Err(e) => return ClaimsOutcome::Error(e),
        };
        // A claim pre-bound to a PV (volumeName set) is left to the PV controller.
        if !delay || !pv_name.is_empty() {
            unbound_immediate = true;
            continue;
        }
        let class = pvc_class(pvc);
        let request = pvc_request(pvc).unwrap_or_default();
        claims.delay.push(DelayClaim {
            selected_node: pvc
                .metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get(ANN_SELECTED_NODE))
                .cloned(),
            candidates: candidates(cluster, pvc, &key, class, request, vac_enabled)
                .map(Candidates::new),
            provisioning: provisioning(cluster, pvc, &key, class),
            class: class.to_string(),
            request,
            key,
        });
    }
    if unbound_immediate {
        return ClaimsOutcome::UnboundImmediate;
    }
    ClaimsOutcome::Ok(claims)
}

/// The result of `FindPodVolumes` on one node, by claim index into
/// `PodClaims::delay` (names are only materialised for the reserved node).
struct Found<'c> {
    static_bindings: Vec<(usize, &'c str)>,
    dynamic_provisions: Vec<usize>,
    reasons: Vec<&'static str>,
    /// The claim behind each failed check (for causes).
    culprits: Vec<Culprit>,
}

/// Which claim failed which check of `FindPodVolumes` on a node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Culprit {
    /// A bound claim's PV has node affinity the node does not satisfy.
    BoundPvAffinity { claim: String, pv: String },
    /// A bound claim's PV does not exist.
    BoundPvMissing { claim: String, pv: String },
    /// Provisioning of the claim already started for another node.
    SelectedElsewhere { claim: String, node: String },
    /// No available PV of the class can be bound on this node, and the class cannot
    /// provision one here: it has no provisioner (`unsupported`), or its
    /// allowedTopologies exclude the node.
    NoVolume {
        claim: String,
        class: String,
        /// The claim's storage request, in bytes.
        request: i64,
        /// Available PVs of the class large enough for the claim, on any node.
        candidates: usize,
        /// Those of them whose node affinity the node satisfies (taken by the pod's
        /// other claims, then).
        reachable: usize,
        unsupported: bool,
    },
    /// No CSIStorageCapacity of the class with room for the claim covers the node.
    NoCapacity {
        claim: String,
        class: String,
        request: i64,
    },
}

/// What failed for each of the pod's claims on `node`, as VolumeBinding's Filter
/// decides it (empty when it passes, or when PreFilter would not let Filter run).
pub fn node_culprits(cluster: &Cluster, pod: &Pod, node: &NodeInfo) -> Vec<Culprit> {
    if !matches!(pod_has_pvcs(cluster, pod), Ok(true)) {
        return Vec::new();
    }
    let ClaimsOutcome::Ok(claims) = pod_volume_claims(cluster, pod, true) else {
        return Vec::new();
    };
    find_pod_volumes(cluster, &claims, node, true)
        .map(|f| f.culprits)
        .unwrap_or_default()
}

impl Found<'_> {
    fn pod_volumes(&self, claims: &PodClaims) -> PodVolumes {
        PodVolumes {
            static_bindings: self
                .static_bindings
                .iter()
                .map(|&(i, pv)| StaticBinding {
                    claim: claims.delay[i].key.clone(),
                    pv: pv.to_string(),
                })
                .collect(),
            dynamic_provisions: self
                .dynamic_provisions
                .iter()
                .filter_map(|&i| match &claims.delay[i].provisioning {
                    Provisioning::Possible {
                        class, provisioner, ..
                    } => Some(DynamicProvision {
                        claim: claims.delay[i].key.clone(),
                        storage_class: class.clone(),
                        provisioner: provisioner.clone(),
                    }),
                    _ => None,
                })
                .collect(),
        }
    }
}

/// `FindPodVolumes`: `Err` aborts the cycle with an Error status. `with_culprits`
/// also names the claim behind each failed check (for causes; Filter does not need
/// it, and counting each claim's reachable PVs on every node would cost it).
fn find_pod_volumes<'c>(
    cluster: &Cluster,
    claims: &'c PodClaims,
    node: &NodeInfo,
    with_culprits: bool,
) -> Result<Found<'c>, String> {
    let labels = &node.node.labels;
    let mut bound_satisfied = true;
    let mut unbound_satisfied = true;
    let mut sufficient_storage = true;
    let mut pvs_found = true;
    let mut static_bindings = Vec::new();
    let mut dynamic_provisions = Vec::new();
    let mut culprits = Vec::new();

    'find: {
        if !claims.bound.is_empty() {
            let failed;
            (bound_satisfied, pvs_found, failed) =
                check_bound_claims(cluster, &claims.bound, node)?;
            if let Some(i) = failed.filter(|_| with_culprits) {
                let (claim, pv) = (claims.bound[i].key.clone(), claims.bound[i].pv_name.clone());
                culprits.push(if pvs_found {
                    Culprit::BoundPvAffinity { claim, pv }
                } else {
                    Culprit::BoundPvMissing { claim, pv }
                });
            }
        }
        if claims.delay.is_empty() {
            break 'find;
        }
        let mut to_provision = Vec::new();
        let mut to_match = Vec::new();
        for (i, c) in claims.delay.iter().enumerate() {
            match &c.selected_node {
                // Provisioning already started for another node.
                Some(n) if n != node.name() => {
                    unbound_satisfied = false;
                    if with_culprits {
                        culprits.push(Culprit::SelectedElsewhere {
                            claim: c.key.clone(),
                            node: n.clone(),
                        });
                    }
                    break 'find;
                }
                Some(_) => to_provision.push(i),
                None => to_match.push(i),
            }
        }
        if !to_match.is_empty() {
            // Smallest requests first, so each gets the smallest fitting PV.
            to_match.sort_by_key(|&i| claims.delay[i].request);
            let mut chosen: BTreeSet<&str> = BTreeSet::new();
            let mut found_all = true;
            for i in to_match {
                let c = &claims.delay[i];
                match find_matching_volume(c, labels, &chosen)? {
                    Some(pv) => {
                        chosen.insert(pv);
                        static_bindings.push((i, pv));
                    }
                    None => {
                        found_all = false;
                        to_provision.push(i);
                    }
                }
            }
            unbound_satisfied = found_all;
        }
        if !to_provision.is_empty() {
            let (satisfied, sufficient, provisions) =
                check_volume_provisions(claims, &to_provision, labels)?;
            unbound_satisfied = satisfied;
            sufficient_storage = sufficient;
            dynamic_provisions = provisions;
            if with_culprits && (!satisfied || !sufficient) {
                // The first claim to provision that failed, as the check stops there.
                if let Some(&i) = to_provision.iter().find(|&&i| {
                    check_volume_provisions(claims, &[i], labels)
                        .is_ok_and(|(sat, suf, _)| !sat || !suf)
                }) {
                    let c = &claims.delay[i];
                    let (claim, class, request) =
                        (c.key.clone(), c.class.clone(), c.request.value());
                    culprits.push(if satisfied {
                        Culprit::NoCapacity {
                            claim,
                            class,
                            request,
                        }
                    } else {
                        Culprit::NoVolume {
                            claim,
                            class,
                            request,
                            candidates: c.candidates.as_ref().map_or(0, |cs| cs.all.len()),
                            reachable: c.candidates.as_ref().map_or(0, |cs| {
                                cs.all.iter().filter(|p| p.affinity.matches(labels)).count()
                            }),
                            unsupported: matches!(c.provisioning, Provisioning::Unsupported),
                        }
                    });
                }
            }
        }
    }

    let mut reasons = Vec::new();
    if !bound_satisfied {
        reasons.push(ERR_REASON_NODE_CONFLICT);
    }
    if !unbound_satisfied {
        reasons.push(ERR_REASON_BIND_CONFLICT);
    }
    if !sufficient_storage {
        reasons.push(ERR_REASON_NOT_ENOUGH_SPACE);
    }
    if !pvs_found {
        reasons.push(ERR_REASON_PV_NOT_EXIST);
    }
    Ok(Found {
        static_bindings,
        dynamic_provisions,
        reasons,
        culprits,
    })
}

/// `checkBoundClaims`: (node affinity satisfied, every PV exists, the index of the
/// claim that failed).
fn check_bound_claims(
    cluster: &Cluster,
    bound: &[BoundClaim],
    node: &NodeInfo,
) -> Result<(bool, bool, Option<usize>), String> {
    // Only in-tree PVs need the node's migrated plugins.
    let migrated = if bound
        .iter()
        .any(|c| c.pv.as_ref().is_some_and(|pv| pv.migrated.is_some()))
    {
        migrated_plugins(cluster.csi_nodes.get(node.name()))
    } else {
        Vec::new()
    };
    for (i, c) in bound.iter().enumerate() {
        let Some(pv) = &c.pv else {
            return Ok((true, false, Some(i)));
        };
        // On a node where its plugin is migrated, an in-tree PV is checked with the
        // topology of its CSI translation.
        let affinity = match &pv.migrated {
            Some((plugin, translated)) if migrated.contains(plugin) => translated.as_ref()?,
            _ => &pv.affinity,
        };
        if !affinity.matches(&node.node.labels) {
            return Ok((false, true, Some(i)));
        }
    }
    Ok((true, true, None))
}

/// `FindMatchingVolume` on one node: the pre-bound PV decides alone; otherwise the
/// smallest available PV whose node affinity the node satisfies.
fn find_matching_volume<'c>(
    claim: &'c DelayClaim,
    labels: &Labels,
    chosen: &BTreeSet<&str>,
) -> Result<Option<&'c str>, String> {
    let cands = claim.candidates.as_ref().map_err(Clone::clone)?;
    // The first pre-bound PV in listing order decides, whatever comes before it.
    for &i in &cands.prebound {
        let c = &cands.all[i];
        if !chosen.contains(c.name.as_str()) {
            return Ok(c.affinity.matches(labels).then_some(c.name.as_str()));
        }
    }
    // The smallest fitting PV; among equals the first listed.
    let mut best: Option<usize> = None;
    let mut consider = |i: usize| {
        let c = &cands.all[i];
        if chosen.contains(c.name.as_str()) || !c.affinity.matches(labels) {
            return;
        }
        let better = best.is_none_or(|b| {
            let bc = &cands.all[b];
            c.capacity < bc.capacity || (c.capacity == bc.capacity && i < b)
        });
        if better {
            best = Some(i);
        }
    };
    cands.scan.iter().for_each(|&i| consider(i));
    for (key, by_value) in &cands.by_label {
        if let Some(list) = labels.get(key).and_then(|v| by_value.get(v.as_str())) {
            list.iter().for_each(|&i| consider(i));
        }
    }
    Ok(best.map(|i| cands.all[i].name.as_str()))
}

/// `checkVolumeProvisions`: (provisioning possible, storage sufficient, provisions).
fn check_volume_provisions(
    claims: &PodClaims,
    to_provision: &[usize],
    labels: &Labels,
) -> Result<(bool, bool, Vec<usize>), String> {
    let mut out = Vec::new();
    for &i in to_provision {
        let c = &claims.delay[i];
        match &c.provisioning {
            Provisioning::Error(e) => return Err(e.clone()),
            Provisioning::Unsupported => return Ok((false, true, Vec::new())),
            Provisioning::Possible {
                topology, capacity, ..
            } => {
                if topology
                    .as_ref()
                    .is_some_and(|t| !topology_matches(t, labels))
                {
                    return Ok((false, true, Vec::new()));
                }
                if capacity
                    .as_ref()
                    .is_some_and(|sels| !sels.iter().any(|s| s.matches(labels)))
                {
                    return Ok((true, false, Vec::new()));
                }
                out.push(i);
            }
        }
    }
    Ok((true, true, out))
}

impl PreFilterPlugin for VolumeBinding {
    fn pre_filter(&self, cx: &Ctx, state: &mut CycleState, pod: &Pod) -> (PreFilterResult, Status) {
        match pod_has_pvcs(cx.cluster, pod) {
            Err(e) => return (None, Status::unresolvable(e)),
            Ok(false) => {
                state.write(STATE_KEY, State::default());
                return (None, Status::skip());
            }
            Ok(true) => {}
        }
        match pod_volume_claims(cx.cluster, pod, self.vac_enabled) {
            ClaimsOutcome::Error(e) => (None, Status::error(e)),
            // The PV controller binds these; the pod is retried once it has.
            ClaimsOutcome::UnboundImmediate => {
                (None, Status::unresolvable(ERR_REASON_UNBOUND_IMMEDIATE))
            }
            ClaimsOutcome::Ok(claims) => {
                state.write(
                    STATE_KEY,
                    State {
                        claims: Some(Arc::new(claims)),
                        ..State::default()
                    },
                );
                (None, Status::success())
            }
        }
    }
}

impl FilterPlugin for VolumeBinding {
    fn filter(&self, cx: &Ctx, state: &CycleState, _pod: &Pod, node: &NodeInfo) -> Status {
        let Some(s) = state.read::<State>(STATE_KEY) else {
            return not_found();
        };
        let Some(claims) = &s.claims else {
            return Status::success();
        };
        match find_pod_volumes(cx.cluster, claims, node, false) {
            Err(e) => Status::error(e),
            Ok(f) if f.reasons.is_empty() => Status::success(),
            Ok(f) => Status::new(
                crate::engine::status::Code::UnschedulableAndUnresolvable,
                f.reasons
                    .into_iter()
                    .map(|r| match r {
                        ERR_REASON_NODE_CONFLICT if self.old_node_conflict_reason => {
                            ERR_REASON_NODE_CONFLICT_1_32
                        }
                        r => r,
                    })
                    .collect::<Vec<_>>(),
            ),
        }
    }
}

impl PreScorePlugin for VolumeBinding {
    fn pre_score(&self, _cx: &Ctx, _s: &mut CycleState, _p: &Pod, _n: &[&NodeInfo]) -> Status {
        // No scorer without the StorageCapacityScoring gate.
        Status::skip()
    }
}

impl ScorePlugin for VolumeBinding {
    fn score(&self, _cx: &Ctx, _s: &CycleState, _p: &Pod, _n: &NodeInfo) -> (i64, Status) {
        (0, Status::success())
    }
    fn normalize_score(
        &self,
        _cx: &Ctx,
        _state: &CycleState,
        _pod: &Pod,
        _scores: &mut [NodeScore],
    ) -> Status {
        Status::success()
    }
}

impl ReservePlugin for VolumeBinding {
    fn reserve(&self, cx: &Ctx, state: &mut CycleState, _pod: &Pod, node: &str) -> Status {
        let Some(s) = state.read_mut::<State>(STATE_KEY) else {
            return not_found();
        };
        // Filter's answer for the node, as upstream keeps it per node.
        let found = s.claims.as_ref().and_then(|claims| {
            let info = cx.cluster.node(node)?;
            find_pod_volumes(cx.cluster, claims, info, false)
                .ok()
                .filter(|f| f.reasons.is_empty())
                .map(|f| (claims.delay.is_empty(), f.pod_volumes(claims)))
        });
        match found {
            // No volumes recorded for the node (the pod has no claims).
            None => s.all_bound = true,
            // `AssumePodVolumes`: nothing to do when every claim is bound.
            Some((true, _)) => {
                s.all_bound = true;
                s.reserved = Some((node.to_string(), PodVolumes::default()));
            }
            Some((false, volumes)) => {
                s.all_bound = false;
                s.reserved = Some((node.to_string(), volumes));
            }
        }
        Status::success()
    }

    fn unreserve(&self, _cx: &Ctx, state: &mut CycleState, _pod: &Pod, node: &str) {
        if let Some(s) = state.read_mut::<State>(STATE_KEY)
            && s.reserved.as_ref().is_some_and(|(n, _)| n == node)
        {
            s.reserved = None;
        }
    }
}

impl PreBindPlugin for VolumeBinding {
    fn pre_bind_pre_flight(&self, _cx: &Ctx, state: &CycleState, _pod: &Pod, node: &str) -> Status {
        let Some(s) = state.read::<State>(STATE_KEY) else {
            return not_found();
        };
        if s.all_bound {
            return Status::skip();
        }
        if s.reserved.as_ref().is_none_or(|(n, _)| n != node) {
            return Status::error(format!("no pod volumes found for node {node:?}"));
        }
        Status::success()
    }

    /// Reports what `BindPodVolumes` would do; nothing is bound.
    fn pre_bind(&self, _cx: &Ctx, state: &mut CycleState, _pod: &Pod, node: &str) -> Status {
        let Some(s) = state.read::<State>(STATE_KEY) else {
            return not_found();
        };
        if s.all_bound {
            return Status::success();
        }
        let Some((_, volumes)) = s.reserved.as_ref().filter(|(n, _)| n == node) else {
            return Status::error(format!("no pod volumes found for node {node:?}"));
        };
        let mut reasons: Vec<String> = volumes
            .static_bindings
            .iter()
            .map(|b| {
                format!(
                    "would bind PersistentVolumeClaim {} to PersistentVolume {}",
                    b.claim, b.pv
                )
            })
            .chain(volumes.dynamic_provisions.iter().map(|p| {
                format!(
                    "would provision PersistentVolumeClaim {} on node {node} (StorageClass {}, provisioner {})",
                    p.claim, p.storage_class, p.provisioner
                )
            }))
            .collect();
        reasons.push(format!(
            "would wait up to {} for the claims to be bound",
            go_duration(self.bind_timeout)
        ));
        Status {
            reasons,
            ..Status::success()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::status::Code;
    use crate::model::testing::{add_storage_objects as add, cluster, pod};
    use serde_json::json;

    fn node(name: &str, extra: Value) -> Value {
        let mut labels = json!({"kubernetes.io/hostname": name});
        if let Value::Object(m) = extra {
            for (k, v) in m {
                labels[k] = v;
            }
        }
        json!({"metadata": {"name": name, "labels": labels},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}})
    }

    fn nodes(names: &[&str]) -> Vec<Value> {
        names.iter().map(|n| node(n, json!({}))).collect()
    }

    fn incoming(claims: &[&str]) -> Pod {
        let vols: Vec<Value> = claims
            .iter()
            .map(|c| json!({"name": c, "persistentVolumeClaim": {"claimName": c}}))
            .collect();
        pod(
            json!({"metadata": {"name": "p", "namespace": "default", "uid": "uid-p"},
            "spec": {"containers": [{"name": "c", "image": "i"}], "volumes": vols}}),
        )
    }

    fn class(name: &str, provisioner: &str, mode: &str) -> Value {
        json!({"kind": "StorageClass", "metadata": {"name": name},
            "provisioner": provisioner, "volumeBindingMode": mode})
    }

    /// A claim bound to `pv` (`volumeName` + bind-completed).
    fn bound_pvc(name: &str, pv: &str) -> Value {
        json!({"kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": "default",
                "annotations": {ANN_BIND_COMPLETED: "yes"}},
            "spec": {"accessModes": ["ReadWriteOnce"], "volumeName": pv,
                "resources": {"requests": {"storage": "1Gi"}}},
            "status": {"phase": "Bound"}})
    }

    fn unbound_pvc(name: &str, class: &str, size: &str) -> Value {
        json!({"kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": class,
                "resources": {"requests": {"storage": size}}},
            "status": {"phase": "Pending"}})
    }

    fn local_pv(name: &str, class: &str, size: &str, host: &str) -> Value {
        json!({"kind": "PersistentVolume", "metadata": {"name": name},
            "spec": {"capacity": {"storage": size}, "accessModes": ["ReadWriteOnce"],
                "storageClassName": class, "local": {"path": "/mnt"},
                "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                    {"key": "kubernetes.io/hostname", "operator": "In", "values": [host]}]}]}}},
            "status": {"phase": "Available"}})
    }

    fn run(c: &Cluster, p: &Pod) -> Result<Vec<Status>, Status> {
        let (state, pre) = prefilter(c, p);
        if !pre.is_success() {
            return Err(pre);
        }
        let cx = Ctx {
            cluster: c,
            now: Default::default(),
        };
        Ok(c.nodes()
            .iter()
            .map(|n| VolumeBinding::plugin().filter(&cx, &state, p, n))
            .collect())
    }

    fn prefilter(c: &Cluster, p: &Pod) -> (CycleState, Status) {
        let cx = Ctx {
            cluster: c,
            now: Default::default(),
        };
        let mut state = CycleState::default();
        let (_, st) = VolumeBinding::plugin().pre_filter(&cx, &mut state, p);
        (state, st)
    }

    impl VolumeBinding {
        fn plugin() -> VolumeBinding {
            VolumeBinding {
                bind_timeout: Duration::from_secs(600),
                vac_enabled: true,
                old_node_conflict_reason: false,
            }
        }
    }

    fn uu(reasons: &[&str]) -> Status {
        Status::new(Code::UnschedulableAndUnresolvable, reasons.iter().copied())
    }

    #[test]
    fn prefilter_statuses() {
        let mut c = cluster(nodes(&["n1"]), vec![]);
        add(
            &mut c,
            vec![
                class("imm", "example.com/csi", "Immediate"),
                class("wffc", "example.com/csi", "WaitForFirstConsumer"),
                json!({"kind": "StorageClass", "metadata": {"name": "nomode"}, "provisioner": "x"}),
                unbound_pvc("imm", "imm", "1Gi"),
                unbound_pvc("ghostclass", "ghost", "1Gi"),
                unbound_pvc("nomode", "nomode", "1Gi"),
                unbound_pvc("wffc", "wffc", "1Gi"),
                json!({"kind": "PersistentVolumeClaim",
                    "metadata": {"name": "lost", "namespace": "default"},
                    "spec": {"volumeName": "gone"}, "status": {"phase": "Lost"}}),
                json!({"kind": "PersistentVolumeClaim",
                    "metadata": {"name": "deleting", "namespace": "default",
                        "deletionTimestamp": "2025-01-01T00:00:00Z"}, "spec": {}}),
                // Pre-bound by volumeName but not bind-completed: still the PV
                // controller's, even with a WaitForFirstConsumer class.
                json!({"kind": "PersistentVolumeClaim",
                    "metadata": {"name": "prebound", "namespace": "default"},
                    "spec": {"volumeName": "pv", "storageClassName": "wffc"}}),
            ],
        );
        let cases: [(&[&str], Status); 9] = [
            (&[], Status::skip()),
            (
                &["nope"],
                Status::unresolvable("persistentvolumeclaim \"nope\" not found"),
            ),
            (&["imm"], Status::unresolvable(ERR_REASON_UNBOUND_IMMEDIATE)),
            // A class that does not exist counts as Immediate.
            (
                &["ghostclass"],
                Status::unresolvable(ERR_REASON_UNBOUND_IMMEDIATE),
            ),
            (
                &["prebound"],
                Status::unresolvable(ERR_REASON_UNBOUND_IMMEDIATE),
            ),
            (
                &["nomode"],
                Status::error("VolumeBindingMode not set for StorageClass \"nomode\""),
            ),
            (
                &["lost"],
                Status::unresolvable(
                    "persistentvolumeclaim \"lost\" bound to non-existent persistentvolume \"gone\"",
                ),
            ),
            (
                &["deleting"],
                Status::unresolvable("persistentvolumeclaim \"deleting\" is being deleted"),
            ),
            (&["wffc"], Status::success()),
        ];
        for (claims, want) in cases {
            assert_eq!(prefilter(&c, &incoming(claims)).1, want, "{claims:?}");
        }
    }

    #[test]
    fn ephemeral_claims() {
        let mut c = cluster(nodes(&["n1"]), vec![]);
        add(
            &mut c,
            vec![json!({"kind": "PersistentVolumeClaim",
                "metadata": {"name": "p-other", "namespace": "default"}, "spec": {}})],
        );
        let eph = |vol: &str| {
            pod(
                json!({"metadata": {"name": "p", "namespace": "default", "uid": "uid-p"},
                "spec": {"containers": [{"name": "c", "image": "i"}],
                    "volumes": [{"name": vol, "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}]}}),
            )
        };
        assert_eq!(
            prefilter(&c, &eph("scratch")).1,
            Status::unresolvable(
                "waiting for ephemeral volume controller to create the persistentvolumeclaim \"p-scratch\""
            )
        );
        assert_eq!(
            prefilter(&c, &eph("other")).1,
            Status::unresolvable(
                "PVC default/p-other was not created for pod default/p (pod is not owner)"
            )
        );
    }

    #[test]
    fn bound_claim_checks_pv_node_affinity() {
        let mut c = cluster(nodes(&["n1", "n2", "n3"]), vec![]);
        add(
            &mut c,
            vec![
                local_pv("pv-local", "local", "10Gi", "n2"),
                bound_pvc("data", "pv-local"),
                bound_pvc("ghost", "missing-pv"),
            ],
        );
        let got = run(&c, &incoming(&["data"])).unwrap();
        let conflict = uu(&[ERR_REASON_NODE_CONFLICT]);
        assert_eq!(got, vec![conflict.clone(), Status::success(), conflict]);
        // A bound claim whose PV is gone.
        let got = run(&c, &incoming(&["ghost"])).unwrap();
        assert_eq!(got[0], uu(&[ERR_REASON_PV_NOT_EXIST]));
    }

    /// h25's shape: only n1 has an available PV that is large enough, of the class.
    #[test]
    fn wffc_static_matching() {
        let mut c = cluster(nodes(&["n1", "n2", "n3", "n4"]), vec![]);
        add(
            &mut c,
            vec![
                class(
                    "local-wffc",
                    NOT_SUPPORTED_PROVISIONER,
                    "WaitForFirstConsumer",
                ),
                class("other", NOT_SUPPORTED_PROVISIONER, "WaitForFirstConsumer"),
                local_pv("pv-a", "local-wffc", "10Gi", "n1"),
                local_pv("pv-b", "local-wffc", "2Gi", "n2"),
                local_pv("pv-c", "other", "20Gi", "n3"),
                unbound_pvc("data", "local-wffc", "5Gi"),
            ],
        );
        let got = run(&c, &incoming(&["data"])).unwrap();
        let no = uu(&[ERR_REASON_BIND_CONFLICT]);
        assert_eq!(got, vec![Status::success(), no.clone(), no.clone(), no]);
    }

    #[test]
    fn static_matching_rules() {
        // One node; each case adds one PV and says whether it may be chosen.
        let pv = |patch: Value| {
            let mut v = local_pv("pv", "sc", "10Gi", "n1");
            if let Value::Object(m) = patch {
                for (k, val) in m {
                    match k.as_str() {
                        "labels" => v["metadata"]["labels"] = val,
                        "phase" => v["status"]["phase"] = val,
                        "deletionTimestamp" => v["metadata"]["deletionTimestamp"] = val,
                        _ => v["spec"][k] = val,
                    }
                }
            }
            v
        };
        let cases = [
            (pv(json!({})), true),
            (pv(json!({"capacity": {"storage": "1Gi"}})), false),
            (pv(json!({"accessModes": ["ReadOnlyMany"]})), false),
            (
                pv(json!({"accessModes": ["ReadWriteOnce", "ReadOnlyMany"]})),
                true,
            ),
            (pv(json!({"volumeMode": "Block"})), false),
            (pv(json!({"phase": "Released"})), false),
            (
                pv(json!({"deletionTimestamp": "2025-01-01T00:00:00Z"})),
                false,
            ),
            (
                pv(json!({"claimRef": {"namespace": "default", "name": "someone-else"}})),
                false,
            ),
            (pv(json!({"volumeAttributesClassName": "gold"})), false),
            (pv(json!({"storageClassName": "other"})), false),
            (pv(json!({"labels": {"tier": "fast"}})), true),
            (pv(json!({"labels": {"tier": "slow"}})), false),
            (
                pv(
                    json!({"nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                {"key": "kubernetes.io/hostname", "operator": "In", "values": ["n9"]}]}]}}}),
                ),
                false,
            ),
            // Pre-bound to this claim: chosen even if Released and not Available.
            (
                pv(json!({"phase": "Released",
                "claimRef": {"namespace": "default", "name": "data"}})),
                true,
            ),
        ];
        for (pvj, want) in cases {
            let mut c = cluster(nodes(&["n1"]), vec![]);
            let mut claim = unbound_pvc("data", "sc", "5Gi");
            if pvj["metadata"]["labels"].is_object() {
                claim["spec"]["selector"] = json!({"matchLabels": {"tier": "fast"}});
            }
            add(
                &mut c,
                vec![
                    class("sc", NOT_SUPPORTED_PROVISIONER, "WaitForFirstConsumer"),
                    pvj.clone(),
                    claim,
                ],
            );
            let got = run(&c, &incoming(&["data"])).unwrap();
            let expect = if want {
                Status::success()
            } else {
                uu(&[ERR_REASON_BIND_CONFLICT])
            };
            assert_eq!(got[0], expect, "{pvj}");
        }
    }

    #[test]
    fn prebound_pv_with_wrong_node_decides_alone() {
        let mut c = cluster(nodes(&["n1"]), vec![]);
        let mut pre = local_pv("a-pre", "sc", "10Gi", "n9");
        pre["spec"]["claimRef"] = json!({"namespace": "default", "name": "data"});
        add(
            &mut c,
            vec![
                class("sc", NOT_SUPPORTED_PROVISIONER, "WaitForFirstConsumer"),
                pre,
                local_pv("b-free", "sc", "10Gi", "n1"),
                unbound_pvc("data", "sc", "5Gi"),
            ],
        );
        assert_eq!(
            run(&c, &incoming(&["data"])).unwrap()[0],
            uu(&[ERR_REASON_BIND_CONFLICT])
        );
    }

    #[test]
    fn smallest_fitting_pv_and_no_reuse() {
        let mut c = cluster(nodes(&["n1"]), vec![]);
        add(
            &mut c,
            vec![
                class("sc", NOT_SUPPORTED_PROVISIONER, "WaitForFirstConsumer"),
                local_pv("big", "sc", "100Gi", "n1"),
                local_pv("small", "sc", "6Gi", "n1"),
                unbound_pvc("a", "sc", "5Gi"),
                unbound_pvc("b", "sc", "50Gi"),
                unbound_pvc("c", "sc", "1Gi"),
            ],
        );
        let (state, _) = prefilter(&c, &incoming(&["b", "a"]));
        let claims = state
            .read::<State>(STATE_KEY)
            .unwrap()
            .claims
            .clone()
            .unwrap();
        let f = find_pod_volumes(&c, &claims, &c.nodes()[0], false).unwrap();
        assert!(f.reasons.is_empty());
        assert_eq!(
            f.pod_volumes(&claims).static_bindings,
            vec![
                StaticBinding {
                    claim: "default/a".into(),
                    pv: "small".into()
                },
                StaticBinding {
                    claim: "default/b".into(),
                    pv: "big".into()
                },
            ]
        );
        // Three claims, two PVs: one claim is left without a volume.
        assert_eq!(
            run(&c, &incoming(&["a", "b", "c"])).unwrap()[0],
            uu(&[ERR_REASON_BIND_CONFLICT])
        );
    }

    /// The PV index drops exactly the PVs the listing would: claimed by another
    /// claim (name, namespace, uid) or of another class; and sees PVs added after a
    /// cycle built it.
    #[test]
    fn candidates_from_the_pv_index_match_the_listing_rules() {
        let mut c = cluster(nodes(&["n1"]), vec![]);
        let claimed = |name: &str, class: &str, claim_ref: Value| {
            let mut pv = local_pv(name, class, "8Gi", "n1");
            pv["spec"]["claimRef"] = claim_ref;
            pv["status"]["phase"] = json!("Bound");
            pv
        };
        add(
            &mut c,
            vec![
                class("sc", NOT_SUPPORTED_PROVISIONER, "WaitForFirstConsumer"),
                local_pv("a-free", "sc", "8Gi", "n1"),
                claimed(
                    "b-mine",
                    "sc",
                    json!({"namespace": "default", "name": "data"}),
                ),
                claimed(
                    "c-other",
                    "sc",
                    json!({"namespace": "default", "name": "other"}),
                ),
                claimed(
                    "d-other-ns",
                    "sc",
                    json!({"namespace": "ns2", "name": "data"}),
                ),
                claimed(
                    "e-other-uid",
                    "sc",
                    json!({"namespace": "default", "name": "data", "uid": "u1"}),
                ),
                claimed(
                    "f-mine-other-class",
                    "gold",
                    json!({"namespace": "default", "name": "data"}),
                ),
                claimed("g-no-namespace", "sc", json!({"name": "data"})),
                local_pv("h-free-other-class", "gold", "8Gi", "n1"),
                local_pv("i-free", "sc", "8Gi", "n1"),
                unbound_pvc("data", "sc", "5Gi"),
            ],
        );
        let names = |c: &Cluster| {
            let pvc = &c.persistent_volume_claims["default/data"];
            let request = pvc_request(pvc).unwrap();
            candidates(c, pvc, "default/data", "sc", request, true)
                .unwrap()
                .into_iter()
                .map(|cand| (cand.name, cand.prebound))
                .collect::<Vec<_>>()
        };
        let want = vec![
            ("a-free".to_string(), false),
            ("b-mine".to_string(), true),
            ("i-free".to_string(), false),
        ];
        assert_eq!(names(&c), want);
        assert_eq!(names(&c), want, "from the cached index");
        add(&mut c, vec![local_pv("0-new", "sc", "8Gi", "n1")]);
        c.persistent_volumes.remove("a-free");
        let want = vec![
            ("0-new".to_string(), false),
            ("b-mine".to_string(), true),
            ("i-free".to_string(), false),
        ];
        assert_eq!(names(&c), want, "PVs changed since");
    }

    #[test]
    fn indexed_and_scanned_candidates_pick_the_same_pv() {
        let mut c = cluster(nodes(&["n1", "n2"]), vec![]);
        let mut anywhere = local_pv("c-anywhere", "sc", "8Gi", "n1");
        anywhere["spec"]
            .as_object_mut()
            .unwrap()
            .remove("nodeAffinity");
        let mut two_terms = local_pv("d-two-terms", "sc", "7Gi", "n1");
        two_terms["spec"]["nodeAffinity"] = json!({"required": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": ["n2"]}]},
            {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": ["n9"]}]}]}});
        add(
            &mut c,
            vec![
                class("sc", NOT_SUPPORTED_PROVISIONER, "WaitForFirstConsumer"),
                local_pv("a-n1", "sc", "9Gi", "n1"),
                local_pv("b-n1", "sc", "9Gi", "n1"),
                anywhere,
                two_terms,
                unbound_pvc("data", "sc", "5Gi"),
            ],
        );
        let (state, _) = prefilter(&c, &incoming(&["data"]));
        let claims = state
            .read::<State>(STATE_KEY)
            .unwrap()
            .claims
            .clone()
            .unwrap();
        let pick = |node: usize| {
            let f = find_pod_volumes(&c, &claims, &c.nodes()[node], false).unwrap();
            f.pod_volumes(&claims).static_bindings[0].pv.clone()
        };
        // n1: a-n1, b-n1 (9Gi, indexed) and c-anywhere (8Gi, scanned): the smallest.
        assert_eq!(pick(0), "c-anywhere");
        // n2: d-two-terms (7Gi, scanned, first term matches).
        assert_eq!(pick(1), "d-two-terms");
        // Without the smaller ones, equal sizes go to the first listed.
        c.persistent_volumes.remove("c-anywhere");
        let (state, _) = prefilter(&c, &incoming(&["data"]));
        let claims = state
            .read::<State>(STATE_KEY)
            .unwrap()
            .claims
            .clone()
            .unwrap();
        let f = find_pod_volumes(&c, &claims, &c.nodes()[0], false).unwrap();
        assert_eq!(f.pod_volumes(&claims).static_bindings[0].pv, "a-n1");
    }

    #[test]
    fn dynamic_provisioning_topology_and_capacity() {
        let mut c = cluster(
            vec![
                node("za", json!({"topology.kubernetes.io/zone": "a"})),
                node("zb", json!({"topology.kubernetes.io/zone": "b"})),
            ],
            vec![],
        );
        let mut topo = class("topo", "example.com/csi", "WaitForFirstConsumer");
        topo["allowedTopologies"] = json!([{"matchLabelExpressions": [
            {"key": "topology.kubernetes.io/zone", "values": ["a"]}]}]);
        let mut cap = class("cap", "cap.csi", "WaitForFirstConsumer");
        cap["allowedTopologies"] = json!([]);
        add(
            &mut c,
            vec![
                topo,
                cap,
                class("any", "example.com/csi", "WaitForFirstConsumer"),
                unbound_pvc("t", "topo", "5Gi"),
                unbound_pvc("k", "cap", "5Gi"),
                unbound_pvc("big", "cap", "50Gi"),
                unbound_pvc("x", "any", "5Gi"),
                json!({"kind": "CSIDriver", "metadata": {"name": "cap.csi"},
                    "spec": {"storageCapacity": true}}),
                json!({"kind": "CSIStorageCapacity", "metadata": {"name": "cap-b", "namespace": "kube-system"},
                    "storageClassName": "cap", "capacity": "100Gi", "maximumVolumeSize": "10Gi",
                    "nodeTopology": {"matchLabels": {"topology.kubernetes.io/zone": "b"}}}),
            ],
        );
        let ok = Status::success();
        assert_eq!(
            run(&c, &incoming(&["t"])).unwrap(),
            vec![ok.clone(), uu(&[ERR_REASON_BIND_CONFLICT])]
        );
        assert_eq!(
            run(&c, &incoming(&["k"])).unwrap(),
            vec![uu(&[ERR_REASON_NOT_ENOUGH_SPACE]), ok.clone()]
        );
        // maximumVolumeSize (10Gi) is below the request: no node has room.
        assert_eq!(
            run(&c, &incoming(&["big"])).unwrap(),
            vec![
                uu(&[ERR_REASON_NOT_ENOUGH_SPACE]),
                uu(&[ERR_REASON_NOT_ENOUGH_SPACE])
            ]
        );
        assert_eq!(run(&c, &incoming(&["x"])).unwrap(), vec![ok.clone(), ok]);
    }

    #[test]
    fn selected_node_and_combined_reasons() {
        let mut c = cluster(nodes(&["n1", "n2"]), vec![]);
        let mut sel = unbound_pvc("sel", "sc", "1Gi");
        sel["metadata"]["annotations"] = json!({ANN_SELECTED_NODE: "n2"});
        add(
            &mut c,
            vec![
                class("sc", "example.com/csi", "WaitForFirstConsumer"),
                sel,
                local_pv("pv-local", "local", "10Gi", "n2"),
                bound_pvc("data", "pv-local"),
            ],
        );
        assert_eq!(
            run(&c, &incoming(&["data", "sel"])).unwrap(),
            vec![
                uu(&[ERR_REASON_NODE_CONFLICT, ERR_REASON_BIND_CONFLICT]),
                Status::success()
            ]
        );
    }

    #[test]
    fn migrated_in_tree_pv_uses_csi_topology() {
        let mut c = cluster(
            vec![
                node(
                    "legacy",
                    json!({"topology.kubernetes.io/zone": "us-east-1a"}),
                ),
                node(
                    "csi",
                    json!({"topology.ebs.csi.aws.com/zone": "us-east-1a"}),
                ),
            ],
            vec![],
        );
        add(
            &mut c,
            vec![
                json!({"kind": "PersistentVolume", "metadata": {"name": "ebs"},
                    "spec": {"awsElasticBlockStore": {"volumeID": "vol-1"},
                        "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                            {"key": "topology.kubernetes.io/zone", "operator": "In",
                             "values": ["us-east-1a"]}]}]}}}}),
                bound_pvc("data", "ebs"),
                json!({"kind": "CSINode", "metadata": {"name": "csi",
                    "annotations": {"storage.alpha.kubernetes.io/migrated-plugins": "kubernetes.io/aws-ebs"}},
                    "spec": {"drivers": []}}),
            ],
        );
        assert_eq!(
            run(&c, &incoming(&["data"])).unwrap(),
            vec![Status::success(), Status::success()]
        );
        // Without the translation the CSI-labelled node (first by name) would not
        // match.
        c.csi_nodes.clear();
        assert_eq!(
            run(&c, &incoming(&["data"])).unwrap(),
            vec![uu(&[ERR_REASON_NODE_CONFLICT]), Status::success()]
        );
    }

    #[test]
    fn filter_errors() {
        let mut c = cluster(nodes(&["n1"]), vec![]);
        let mut bad_sel = unbound_pvc("badsel", "sc", "1Gi");
        bad_sel["spec"]["selector"] =
            json!({"matchExpressions": [{"key": "k", "operator": "Foo", "values": ["v"]}]});
        add(
            &mut c,
            vec![
                class("sc", NOT_SUPPORTED_PROVISIONER, "WaitForFirstConsumer"),
                bad_sel,
                json!({"kind": "PersistentVolume", "metadata": {"name": "azure"},
                    "spec": {"azureDisk": {"diskName": "d", "diskURI": "uri"}}}),
                bound_pvc("azure", "azure"),
                json!({"kind": "CSINode", "metadata": {"name": "n1",
                    "annotations": {"storage.alpha.kubernetes.io/migrated-plugins":
                        "kubernetes.io/azure-disk,kubernetes.io/gce-pd"}},
                    "spec": {"drivers": []}}),
            ],
        );
        assert_eq!(
            run(&c, &incoming(&["badsel"])).unwrap()[0],
            Status::error(
                "error creating internal label selector for claim: default/badsel: \"Foo\" is not a valid label selector operator"
            )
        );
        // An Azure disk without kind defaults to Shared, which does not translate.
        assert_eq!(
            run(&c, &incoming(&["azure"])).unwrap()[0],
            Status::error("could not translate pv: kind(Shared) is not supported in csi migration")
        );
    }

    #[test]
    fn reserve_prebind_report_the_plan() {
        let mut c = cluster(nodes(&["n1"]), vec![]);
        add(
            &mut c,
            vec![
                class("local", NOT_SUPPORTED_PROVISIONER, "WaitForFirstConsumer"),
                class("dyn", "example.com/csi", "WaitForFirstConsumer"),
                local_pv("pv-a", "local", "10Gi", "n1"),
                unbound_pvc("data", "local", "5Gi"),
                unbound_pvc("scratch", "dyn", "1Gi"),
            ],
        );
        let cx = Ctx {
            cluster: &c,
            now: Default::default(),
        };
        let pl = VolumeBinding::plugin();
        let p = incoming(&["data", "scratch"]);
        let (mut state, st) = prefilter(&c, &p);
        assert!(st.is_success());
        assert!(pl.reserve(&cx, &mut state, &p, "n1").is_success());
        assert_eq!(
            reserved_volumes(&state, "n1"),
            Some(&PodVolumes {
                static_bindings: vec![StaticBinding {
                    claim: "default/data".into(),
                    pv: "pv-a".into()
                }],
                dynamic_provisions: vec![DynamicProvision {
                    claim: "default/scratch".into(),
                    storage_class: "dyn".into(),
                    provisioner: "example.com/csi".into()
                }],
            })
        );
        assert!(pl.pre_bind_pre_flight(&cx, &state, &p, "n1").is_success());
        assert_eq!(
            pl.pre_bind_pre_flight(&cx, &state, &p, "n2"),
            Status::error("no pod volumes found for node \"n2\"")
        );
        let st = pl.pre_bind(&cx, &mut state, &p, "n1");
        assert!(st.is_success());
        assert_eq!(
            st.reasons,
            vec![
                "would bind PersistentVolumeClaim default/data to PersistentVolume pv-a",
                "would provision PersistentVolumeClaim default/scratch on node n1 (StorageClass dyn, provisioner example.com/csi)",
                "would wait up to 10m0s for the claims to be bound",
            ]
        );
        pl.unreserve(&cx, &mut state, &p, "n1");
        assert_eq!(reserved_volumes(&state, "n1"), None);

        // All claims bound: PreBind has nothing to do.
        add(
            &mut c,
            vec![
                local_pv("pv-b", "local", "10Gi", "n1"),
                bound_pvc("done", "pv-b"),
            ],
        );
        let cx = Ctx {
            cluster: &c,
            now: Default::default(),
        };
        let p = incoming(&["done"]);
        let (mut state, _) = prefilter(&c, &p);
        assert!(pl.reserve(&cx, &mut state, &p, "n1").is_success());
        assert_eq!(
            pl.pre_bind_pre_flight(&cx, &state, &p, "n1"),
            Status::skip()
        );
        // No claims at all: likewise.
        let p = incoming(&[]);
        let (mut state, st) = prefilter(&c, &p);
        assert_eq!(st, Status::skip());
        assert!(pl.reserve(&cx, &mut state, &p, "n1").is_success());
        assert_eq!(
            pl.pre_bind_pre_flight(&cx, &state, &p, "n1"),
            Status::skip()
        );
    }

    #[test]
    fn prescore_skips_without_storage_capacity_scoring() {
        let c = cluster(nodes(&["n1"]), vec![]);
        let cx = Ctx {
            cluster: &c,
            now: Default::default(),
        };
        let mut state = CycleState::default();
        let p = incoming(&[]);
        assert_eq!(
            VolumeBinding::plugin().pre_score(&cx, &mut state, &p, &[]),
            Status::skip()
        );
    }

    #[test]
    fn args_defaults_and_validation() {
        let path = "profiles[0].pluginConfig[0].args";
        assert_eq!(
            default_args(None, path).unwrap(),
            json!({"bindTimeoutSeconds": 600})
        );
        assert_eq!(
            default_args(Some(&json!({"bindTimeoutSeconds": 30})), path).unwrap(),
            json!({"bindTimeoutSeconds": 30})
        );
        assert_eq!(
            default_args(
                Some(&json!({"apiVersion": "kubescheduler.config.k8s.io/v1",
                    "kind": "VolumeBindingArgs", "bindTimeoutSeconds": 0})),
                path
            )
            .unwrap(),
            json!({"bindTimeoutSeconds": 0})
        );
        assert_eq!(
            default_args(Some(&json!({"bindTimeoutSeconds": -1})), path).unwrap_err(),
            vec![format!(
                "{path}.bindTimeoutSeconds: Invalid value: -1: invalid BindTimeoutSeconds, should not be a negative value"
            )]
        );
        assert_eq!(
            default_args(
                Some(&json!({"shape": [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]})),
                path
            )
            .unwrap_err(),
            vec![format!(
                "{path}.shape: Invalid value: []config.UtilizationShapePoint{{config.UtilizationShapePoint{{Utilization:0, Score:10}}, config.UtilizationShapePoint{{Utilization:100, Score:0}}}}: unexpected field `shape`, remove it or turn on the feature gate StorageCapacityScoring"
            )]
        );
        assert_eq!(
            default_args(Some(&json!({"bindTimeout": 1})), path).unwrap_err(),
            vec![format!("{path}.bindTimeout: unknown field")]
        );
        assert!(default_args(Some(&json!({"bindTimeoutSeconds": "x"})), path).is_err());
        // The plugin is built from defaulted args.
        assert!(new(&json!({"bindTimeoutSeconds": 600}), &Default::default()).is_ok());
        assert!(new(&json!({"bindTimeoutSeconds": -5}), &Default::default()).is_err());
    }
}
