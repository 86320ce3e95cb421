//! DynamicResources (PreEnqueue, PreFilter, Filter, PostFilter, Score, Normalize,
//! Reserve, PreBind) — on by default in v1.35.
//!
//! The pod's claims are resolved as upstream's `foreachPodResourceClaim`; claims that
//! need an allocation go through the structured allocator ([`allocator`]) per node,
//! with device selectors in the Kubernetes DRA CEL environment ([`cel`]). Pods
//! without claims Skip at PreFilter, score 0 and get `no new claims to deallocate`
//! at PostFilter (which is why default FitErrors end with that text).
//!
//! Not modelled: in-flight allocations of other pods' cycles (a replay has one
//! cycle), the filter timeout, and writing allocations back (PreBind is a dry run).
//!
//! Args quirk: `DynamicResourcesArgs` is not in kube-scheduler's config-validation
//! table, so its errors surface from the constructor (`initializing plugin
//! "DynamicResources": filterTimeout: ...`).

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::node_resources_fit::{aggregate, decode_args, encode_args};
use crate::config::field;
use crate::engine::framework::{
    Ctx, CycleState, FilterPlugin, Framework, MAX_NODE_SCORE, NodeScore, NodeToStatus, Plugin,
    PostFilterPlugin, PostFilterResult, PreBindPlugin, PreEnqueuePlugin, PreFilterPlugin,
    PreFilterResult, ReservePlugin, ScorePlugin, default_normalize_score,
};
use crate::engine::status::Status;
use crate::engine::trace::{ReservedDevice, ReservedDevices};
use crate::model::dra::ResourceClaim;
use crate::model::labels::{Labels, NodeSelector};
use crate::model::{Cluster, NodeInfo, Pod};

pub mod allocator;
pub mod cel;
pub mod diagnose;

use allocator::{AllocError, Allocator, ClaimAllocation, ClaimKey, FastMap, Inventory};

pub const NAME: &str = "DynamicResources";
const STATE_KEY: &str = NAME;
const FILTER_TIMEOUT_DEFAULT: &str = "10s";
pub const NO_NEW_CLAIMS: &str = "no new claims to deallocate";

// ---------------------------------------------------------------------------------
// Args

/// `DynamicResourcesArgs`. Durations are kept as Go duration strings.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DynamicResourcesArgs {
    #[serde(default, skip_serializing)]
    pub api_version: Option<String>,
    #[serde(default, skip_serializing)]
    pub kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filter_timeout: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binding_timeout: Option<String>,
}

impl DynamicResourcesArgs {
    /// `DRASchedulerFilterTimeout` is on: `filterTimeout` defaults to 10s.
    /// `bindingTimeout` needs gates that are off, so it gets no default.
    pub fn set_defaults(&mut self) {
        if self.filter_timeout.is_none() {
            self.filter_timeout = Some(FILTER_TIMEOUT_DEFAULT.into());
        }
    }

    /// `ValidateDynamicResourcesArgs` with v1.35's default gates (path "" = relative).
    pub fn validate(&self) -> Vec<String> {
        let mut errs = Vec::new();
        if let Some(t) = &self.filter_timeout {
            match parse_go_duration(t) {
                Ok(d) if d < 0 => errs.push(format!(
                    "filterTimeout: Invalid value: {}: must be zero or positive",
                    format_go_duration(d)
                )),
                Ok(_) => {}
                Err(e) => errs.push(field::invalid("filterTimeout", t.as_str(), &e)),
            }
        }
        if self.binding_timeout.is_some() {
            errs.push(field::forbidden(
                "bindingTimeout",
                "DRADeviceBindingConditions or DRAResourceClaimDeviceStatus feature gate is disabled",
            ));
        }
        errs
    }
}

/// Defaults only; validation happens in [`new`] (see the module doc).
pub fn args(user: Option<&Value>, path: &str) -> Result<Value, Vec<String>> {
    let mut a: DynamicResourcesArgs = decode_args(user, path)?;
    a.set_defaults();
    encode_args(&a, path)
}

pub fn new(args: &Value, fts: &crate::version::Features) -> Result<Arc<dyn Plugin>, String> {
    let mut a: DynamicResourcesArgs = decode_args(Some(args), "").map_err(|e| aggregate(&e))?;
    a.set_defaults();
    let errs = a.validate();
    if !errs.is_empty() {
        return Err(aggregate(&errs));
    }
    Ok(Arc::new(DynamicResources {
        enabled: fts.dynamic_resource_allocation,
        scores: fts.dra_score(),
        incomplete_pools: !fts.dra_skips_incomplete_pools(),
    }))
}

/// Go's `time.ParseDuration`, in nanoseconds.
pub fn parse_go_duration(s: &str) -> Result<i128, String> {
    let bad = || format!("time: invalid duration {s:?}");
    let (neg, mut rest) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if rest == "0" {
        return Ok(0);
    }
    if rest.is_empty() {
        return Err(bad());
    }
    let mut total: i128 = 0;
    while !rest.is_empty() {
        let int_end = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let (int_part, after) = rest.split_at(int_end);
        let (frac_part, after) = match after.strip_prefix('.') {
            Some(a) => {
                let e = a.find(|c: char| !c.is_ascii_digit()).unwrap_or(a.len());
                a.split_at(e)
            }
            None => ("", after),
        };
        if int_part.is_empty() && frac_part.is_empty() {
            return Err(bad());
        }
        let unit_end = after
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(after.len());
        let (unit, after) = after.split_at(unit_end);
        let scale: i128 = match unit {
            "ns" => 1,
            "us" | "µs" | "μs" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            "" => return Err(format!("time: missing unit in duration {s:?}")),
            _ => return Err(format!("time: unknown unit {unit:?} in duration {s:?}")),
        };
        let int: i128 = if int_part.is_empty() {
            0
        } else {
            int_part.parse().map_err(|_| bad())?
        };
        let mut v = int.checked_mul(scale).ok_or_else(bad)?;
        // Fractions are truncated to whole nanoseconds, as Go does.
        let mut div = 1i128;
        let mut frac = 0i128;
        for d in frac_part.bytes().take(30) {
            frac = frac * 10 + i128::from(d - b'0');
            div *= 10;
        }
        v += frac * scale / div;
        total = total.checked_add(v).ok_or_else(bad)?;
        if total > i128::from(i64::MAX) {
            return Err(bad());
        }
        rest = after;
    }
    Ok(if neg { -total } else { total })
}

/// Go's `time.Duration.String()`: `1h2m3.5s`, `500ms`, `1.5µs`, `0s`.
pub fn format_go_duration(nanos: i128) -> String {
    if nanos == 0 {
        return "0s".into();
    }
    let sign = if nanos < 0 { "-" } else { "" };
    let u = nanos.unsigned_abs();
    let frac = |v: u128, unit: u128| -> String {
        let whole = v / unit;
        let mut rem = v % unit;
        if rem == 0 {
            return whole.to_string();
        }
        let mut digits = String::new();
        let mut d = unit / 10;
        while rem > 0 && d > 0 {
            digits.push(char::from(b'0' + (rem / d) as u8));
            rem %= d;
            d /= 10;
        }
        format!("{whole}.{}", digits.trim_end_matches('0'))
    };
    if u < 1_000_000_000 {
        let (unit, name) = if u < 1_000 {
            (1, "ns")
        } else if u < 1_000_000 {
            (1_000, "µs")
        } else {
            (1_000_000, "ms")
        };
        return format!("{sign}{}{name}", frac(u, unit));
    }
    let h = u / 3_600_000_000_000;
    let m = (u / 60_000_000_000) % 60;
    let s = frac(u % 60_000_000_000, 1_000_000_000);
    let mut out = sign.to_string();
    if h > 0 {
        out.push_str(&format!("{h}h"));
    }
    if h > 0 || m > 0 {
        out.push_str(&format!("{m}m"));
    }
    out.push_str(&format!("{s}s"));
    out
}

// ---------------------------------------------------------------------------------
// Plugin

pub struct DynamicResources {
    /// The DynamicResourceAllocation gate (off in 1.32, 1.33: a plugin configured
    /// anyway does nothing, as upstream's).
    enabled: bool,
    /// Score (firstAvailable ranks): new in 1.35.
    scores: bool,
    /// Allocates from incomplete pools (1.34; 1.35 never does).
    incomplete_pools: bool,
}

impl Default for DynamicResources {
    /// v1.35's.
    fn default() -> Self {
        DynamicResources {
            enabled: true,
            scores: true,
            incomplete_pools: false,
        }
    }
}

/// `FirstAvailableDeviceRequestMaxSize`: Score adds `8 - index` per sub-request used.
const FIRST_AVAILABLE_MAX: i64 = 8;

/// Reserve's allocation: the node and one allocation per claim it allocated.
type Reserved = (String, Vec<ClaimAllocation>);

/// What PreFilter recorded.
#[derive(Clone, Default)]
struct StateData {
    /// The pod's claims in `spec.resourceClaims` order (skipped template entries
    /// left out), cloned at PreFilter.
    claims: Vec<Arc<ResourceClaim>>,
    /// Indices into `claims` of those without an allocation.
    to_allocate: Vec<usize>,
    /// Whether an allocator was built (some claim needs allocation).
    has_allocator: bool,
    /// Devices allocated to any claim when the cycle started, and the slices by node.
    inventory: Arc<Inventory>,
    /// Per node that passed Filter, what Score will say (Filter only gets a shared
    /// state, hence the lock). The allocations themselves are not kept for every
    /// node: the allocator is deterministic, so Reserve allocates again on the one
    /// node chosen and gets what Filter found there.
    scores: Arc<Mutex<FastMap<String, Result<i64, usize>>>>,
    /// Reserve's allocation on the chosen node: (node, one per claim in `to_allocate`).
    allocations: Arc<Mutex<Option<Reserved>>>,
    /// The claim (index into `claims`) PostFilter deallocated, which upstream writes
    /// through the API; a simulation applies it with [`apply_deallocation`].
    deallocated: Arc<Mutex<Option<usize>>>,
    /// Indices of allocated claims whose node selector rejected some node.
    unavailable: Arc<Mutex<BTreeSet<usize>>>,
    /// The allocator may use incomplete pools (1.34).
    incomplete_pools: bool,
}

impl StateData {
    /// Allocates the claims that need it on `node`: what Filter checks on every node
    /// and Reserve repeats on the chosen one (the allocator is deterministic).
    fn allocate_on(
        &self,
        cluster: &Cluster,
        node: &str,
        labels: &Labels,
    ) -> Result<Option<Vec<ClaimAllocation>>, AllocError> {
        let claims: Vec<&ResourceClaim> = self
            .to_allocate
            .iter()
            .map(|&i| self.claims[i].as_ref())
            .collect();
        Allocator::new(cluster, &self.inventory)
            .with_incomplete_pools(self.incomplete_pools)
            .allocate(node, labels, &claims)
    }
}

/// Upstream returns the bare `not found` of `CycleState.Read` when PreFilter never ran
/// (e.g. an earlier PreFilter plugin rejected the pod).
fn read_state(state: &CycleState) -> Result<&StateData, Status> {
    state
        .read::<StateData>(STATE_KEY)
        .ok_or_else(|| Status::error("not found"))
}

fn is_allocated(c: &ResourceClaim) -> bool {
    c.status.as_ref().is_some_and(|s| s.allocation.is_some())
}

/// The claims of the pod, as `foreachPodResourceClaim` resolves them: the first
/// failing entry ends the walk with upstream's error text.
pub fn pod_claims<'c>(cluster: &'c Cluster, pod: &Pod) -> Result<Vec<&'c ResourceClaim>, String> {
    let mut out = Vec::new();
    for pc in &pod.resource_claims {
        let (name, must_own) = if let Some(n) = pc.resource_claim_name.as_deref() {
            (n.to_string(), false)
        } else if pc.resource_claim_template_name.is_some() {
            let status = pod
                .resource_claim_statuses
                .iter()
                .find(|s| s.name == pc.name);
            match status {
                None => {
                    return Err(format!(
                        "pod \"{}/{}\": ResourceClaim not created yet",
                        pod.namespace, pod.name
                    ));
                }
                Some(s) => match s.resource_claim_name.as_deref() {
                    None => continue,
                    Some(n) => (n.to_string(), true),
                },
            }
        } else {
            return Err(format!(
                "pod \"{}/{}\", spec.resourceClaim \"{}\": none of the supported fields are set",
                pod.namespace, pod.name, pc.name
            ));
        };
        let Some(claim) = cluster.resource_claim(&pod.namespace, &name) else {
            return Err(format!(
                "could not find ResourceClaim \"{}/{name}\"",
                pod.namespace
            ));
        };
        if claim.metadata.deletion_timestamp.is_some() {
            return Err(format!("resourceclaim \"{name}\" is being deleted"));
        }
        if must_own {
            let owned = claim
                .metadata
                .owner_references
                .iter()
                .flatten()
                .any(|o| o.controller == Some(true) && o.uid == pod.uid);
            if !owned {
                return Err(format!(
                    "ResourceClaim {}/{name} was not created for pod {}/{} (pod is not owner)",
                    pod.namespace, pod.namespace, pod.name
                ));
            }
        }
        out.push(claim);
    }
    Ok(out)
}

impl Plugin for DynamicResources {
    fn name(&self) -> &str {
        NAME
    }
    fn upstream_behaviour(&self, error: &str) -> Option<String> {
        error.contains(SCORE_BUG_SUFFIX).then(|| {
            "kube-scheduler v1.35.4 itself fails here: its Score indexes the per-node \
             allocations (only the claims it had to allocate) by the position of every \
             claim of the pod, so a pod with an allocated claim and an unallocated one \
             aborts the cycle whenever two or more nodes are feasible; schedscope \
             reproduces that error on purpose"
                .to_string()
        })
    }
    fn as_pre_enqueue(&self) -> Option<&dyn PreEnqueuePlugin> {
        Some(self)
    }
    fn as_pre_filter(&self) -> Option<&dyn PreFilterPlugin> {
        Some(self)
    }
    fn as_filter(&self) -> Option<&dyn FilterPlugin> {
        Some(self)
    }
    fn as_post_filter(&self) -> Option<&dyn PostFilterPlugin> {
        Some(self)
    }
    fn as_score(&self) -> Option<&dyn ScorePlugin> {
        self.scores.then_some(self as &dyn ScorePlugin)
    }
    fn as_reserve(&self) -> Option<&dyn ReservePlugin> {
        Some(self)
    }
    fn as_pre_bind(&self) -> Option<&dyn PreBindPlugin> {
        Some(self)
    }
}

/// For a source without DRA objects (live watch), pods with claims are rejected
/// explicitly rather than reported as missing their claims.
const DRA_OBJECTS_UNKNOWN: &str = "dynamic resource allocation is not modelled for this source \
     (it does not deliver ResourceClaims, ResourceSlices and DeviceClasses)";

fn objects_unknown(cx: &Ctx, pod: &Pod) -> bool {
    !cx.cluster.dra_objects_known && !pod.resource_claims.is_empty()
}

impl PreEnqueuePlugin for DynamicResources {
    fn pre_enqueue(&self, cx: &Ctx, pod: &Pod) -> Status {
        if !self.enabled || objects_unknown(cx, pod) {
            return Status::success();
        }
        match pod_claims(cx.cluster, pod) {
            Ok(_) => Status::success(),
            Err(e) => Status::unresolvable(e),
        }
    }
}

/// The classes every unallocated request names must exist.
fn check_classes(cluster: &Cluster, claim: &ResourceClaim) -> Result<(), Status> {
    let key = ClaimKey(claim);
    let requests = claim
        .spec
        .devices
        .as_ref()
        .and_then(|d| d.requests.as_ref());
    for req in requests.into_iter().flatten() {
        let check = |name: String, class: &str| {
            if class.is_empty() {
                return Err(Status::error(format!(
                    "request {name}: unsupported request type"
                )));
            }
            if !cluster.device_classes.contains_key(class) {
                return Err(Status::unresolvable(format!(
                    "request {name}: device class {class} does not exist"
                )));
            }
            Ok(())
        };
        if let Some(ex) = &req.exactly {
            check(req.name.clone(), &ex.device_class_name)?;
        } else if let Some(subs) = &req.first_available {
            for sub in subs {
                check(format!("{}/{}", req.name, sub.name), &sub.device_class_name)?;
            }
        } else {
            return Err(Status::unresolvable(format!(
                "resource claim {key}, request {}: unknown request type",
                req.name
            )));
        }
    }
    Ok(())
}

impl PreFilterPlugin for DynamicResources {
    fn pre_filter(&self, cx: &Ctx, state: &mut CycleState, pod: &Pod) -> (PreFilterResult, Status) {
        state.write(STATE_KEY, StateData::default());
        if !self.enabled {
            return (None, Status::skip());
        }
        if objects_unknown(cx, pod) {
            return (None, Status::unresolvable(DRA_OBJECTS_UNKNOWN));
        }
        let claims = match pod_claims(cx.cluster, pod) {
            Ok(c) => c,
            Err(e) => return (None, Status::unresolvable(e)),
        };
        if claims.is_empty() {
            return (None, Status::skip());
        }
        let mut to_allocate = Vec::new();
        for (i, c) in claims.iter().enumerate() {
            if is_allocated(c) {
                continue;
            }
            if let Err(s) = check_classes(cx.cluster, c) {
                return (None, s);
            }
            to_allocate.push(i);
        }
        let has_allocator = !to_allocate.is_empty();
        // Built once per state of the cluster's claims and slices, as upstream keeps
        // its allocated-devices tracker and slice informer current between cycles.
        let inventory = if has_allocator {
            cx.cluster.dra_index(Inventory::new)
        } else {
            Arc::new(Inventory::default())
        };
        state.write(
            STATE_KEY,
            StateData {
                claims: claims.into_iter().map(|c| Arc::new(c.clone())).collect(),
                to_allocate,
                has_allocator,
                inventory,
                incomplete_pools: self.incomplete_pools,
                ..Default::default()
            },
        );
        (None, Status::success())
    }
}

impl FilterPlugin for DynamicResources {
    fn filter(&self, cx: &Ctx, state: &CycleState, _pod: &Pod, node: &NodeInfo) -> Status {
        let s = match read_state(state) {
            Err(e) => return e,
            Ok(s) => s,
        };
        if s.claims.is_empty() {
            return Status::success();
        }
        let labels = &node.node.labels;
        let mut unavailable = Vec::new();
        for (i, c) in s.claims.iter().enumerate() {
            let sel = c
                .status
                .as_ref()
                .and_then(|st| st.allocation.as_ref())
                .and_then(|a| a.node_selector.as_ref());
            if let Some(sel) = sel
                && !NodeSelector::parse(sel).matches(node.name(), labels)
            {
                unavailable.push(i);
            }
        }
        if s.has_allocator {
            match s.allocate_on(cx.cluster, node.name(), labels) {
                Err(AllocError::Fatal(e)) => return Status::error(e),
                Err(AllocError::OnNode(e)) => return Status::unresolvable(e),
                Ok(None) => return Status::unresolvable(CANNOT_ALLOCATE),
                Ok(Some(result)) => {
                    if unavailable.is_empty()
                        && let Ok(mut m) = s.scores.lock()
                    {
                        m.insert(node.name().to_string(), first_available_score(s, &result));
                    }
                }
            }
        }
        if !unavailable.is_empty() {
            if let Ok(mut u) = s.unavailable.lock() {
                u.extend(unavailable);
            }
            return Status::unresolvable(NOT_AVAILABLE_ON_NODE);
        }
        Status::success()
    }
}

const SCORE_BUG_SUFFIX: &str = "is smaller than number of claims";
const CANNOT_ALLOCATE: &str = "cannot allocate all claims";
const NOT_AVAILABLE_ON_NODE: &str = "resourceclaim not available on the node";
pub const DEALLOCATED: &str = "deallocation of ResourceClaim completed";
pub const STILL_NOT_SCHEDULABLE: &str = "still not schedulable";

impl PostFilterPlugin for DynamicResources {
    fn post_filter(
        &self,
        _fw: &Framework,
        _cx: &Ctx,
        state: &CycleState,
        pod: &Pod,
        _statuses: &NodeToStatus,
    ) -> (Option<PostFilterResult>, Status) {
        if !self.enabled {
            return (None, Status::unschedulable("plugin disabled"));
        }
        let s = match read_state(state) {
            Err(e) => return (None, e),
            Ok(s) => s,
        };
        if s.claims.is_empty() {
            return (None, Status::unschedulable(NO_NEW_CLAIMS));
        }
        // Upstream walks the set in Go map order; any claim it could free gives the
        // same status, so the lowest index stands for it. The replay reports the
        // deallocation without applying it (that happens through the API).
        let unavailable = s.unavailable.lock().map(|u| u.clone()).unwrap_or_default();
        for i in unavailable {
            let c = &s.claims[i];
            let reserved = c
                .status
                .as_ref()
                .and_then(|st| st.reserved_for.as_ref())
                .map(Vec::as_slice)
                .unwrap_or_default();
            if reserved.is_empty() || (reserved.len() == 1 && reserved[0].uid == pod.uid) {
                if let Ok(mut d) = s.deallocated.lock() {
                    *d = Some(i);
                }
                return (None, Status::unschedulable(DEALLOCATED));
            }
        }
        (None, Status::unschedulable(STILL_NOT_SCHEDULABLE))
    }
}

/// Score's sum over the claims: `8 - index` for every `firstAvailable` sub-request
/// the allocation used. Upstream walks every claim by its index into the results,
/// which only cover the claims that needed allocation: with an allocated claim among
/// them the index runs past the end and scoring fails (a v1.35.4 bug, reproduced):
/// `Err(number of results)`.
fn first_available_score(s: &StateData, results: &[ClaimAllocation]) -> Result<i64, usize> {
    let mut score = 0;
    for (i, claim) in s.claims.iter().enumerate() {
        let result = results.get(i).ok_or(results.len())?;
        let requests = claim
            .spec
            .devices
            .as_ref()
            .and_then(|d| d.requests.as_ref());
        for req in requests.into_iter().flatten() {
            for (j, sub) in req.first_available.iter().flatten().enumerate() {
                let used = result.devices.iter().any(|d| {
                    d.request
                        .strip_prefix(req.name.as_str())
                        .and_then(|rest| rest.strip_prefix('/'))
                        == Some(sub.name.as_str())
                });
                if used {
                    score += FIRST_AVAILABLE_MAX - j as i64;
                }
            }
        }
    }
    Ok(score)
}

impl ScorePlugin for DynamicResources {
    fn score(&self, _cx: &Ctx, state: &CycleState, _pod: &Pod, node: &NodeInfo) -> (i64, Status) {
        let s = match read_state(state) {
            Err(e) => return (0, e),
            Ok(s) => s,
        };
        if s.claims.is_empty() || !s.has_allocator {
            return (0, Status::success());
        }
        let outcome = s
            .scores
            .lock()
            .ok()
            .and_then(|m| m.get(node.name()).copied());
        match outcome {
            None => (0, Status::success()),
            Some(Ok(score)) => (score, Status::success()),
            Some(Err(n)) => (
                0,
                Status::error(format!("number of allocations {n} {SCORE_BUG_SUFFIX}")),
            ),
        }
    }
    fn has_normalize(&self) -> bool {
        true
    }
    fn normalize_score(
        &self,
        _cx: &Ctx,
        _state: &CycleState,
        _pod: &Pod,
        scores: &mut [NodeScore],
    ) -> Status {
        default_normalize_score(MAX_NODE_SCORE, false, scores);
        Status::success()
    }
}

impl ReservePlugin for DynamicResources {
    fn reserve(&self, cx: &Ctx, state: &mut CycleState, _pod: &Pod, node: &str) -> Status {
        let s = match read_state(state) {
            Err(e) => return e,
            Ok(s) => s,
        };
        if s.to_allocate.is_empty() {
            return Status::success();
        }
        let passed = s.scores.lock().is_ok_and(|m| m.contains_key(node));
        let labels = cx.cluster.node(node).map(|n| &n.node.labels);
        let found = match (passed, labels) {
            (true, Some(labels)) => s.allocate_on(cx.cluster, node, labels).ok().flatten(),
            _ => None,
        };
        match found {
            None => Status::error("claim allocation not found for node"),
            Some(a) if a.len() != s.to_allocate.len() => Status::error(format!(
                "internal error, have {} allocations, need {}",
                a.len(),
                s.to_allocate.len()
            )),
            Some(a) => {
                if let Ok(mut r) = s.allocations.lock() {
                    *r = Some((node.to_string(), a));
                }
                Status::success()
            }
        }
    }
    fn unreserve(&self, _cx: &Ctx, _state: &mut CycleState, _pod: &Pod, _node: &str) {}
}

/// What PostFilter's deallocation writes through the API, applied to a simulated
/// model: the claim loses its allocation and `reservedFor`, so the pod's next attempt
/// may allocate it anew. Returns whether a claim changed.
pub fn apply_deallocation(cluster: &mut Cluster, state: &CycleState) -> bool {
    let Some(s) = state.read::<StateData>(STATE_KEY) else {
        return false;
    };
    let Some(i) = s.deallocated.lock().ok().and_then(|d| *d) else {
        return false;
    };
    let Some(original) = s.claims.get(i) else {
        return false;
    };
    let key = ClaimKey(original).to_string();
    let Some(status) = cluster
        .resource_claims_mut()
        .get_mut(&key)
        .and_then(|c| c.status.as_mut())
    else {
        return false;
    };
    status.allocation = None;
    status.reserved_for = None;
    true
}

/// Reserve's allocation, if it was made on `node`.
fn reserved_on(s: &StateData, node: &str) -> Vec<ClaimAllocation> {
    s.allocations
        .lock()
        .ok()
        .and_then(|r| {
            r.as_ref()
                .filter(|(n, _)| n == node)
                .map(|(_, a)| a.clone())
        })
        .unwrap_or_default()
}

/// Reserve's allocation as the trace records it (the state ends with the cycle): the
/// node, and per claim it allocated, by the claim's position among the pod's claims,
/// the devices. `None` when Reserve allocated nothing.
pub fn reserved_devices(state: &CycleState) -> Option<ReservedDevices> {
    let s = state.read::<StateData>(STATE_KEY)?;
    let (node, allocations) = s.allocations.lock().ok()?.clone()?;
    let claims = s
        .to_allocate
        .iter()
        .zip(allocations)
        .map(|(&i, a)| {
            let devices = a
                .devices
                .iter()
                .map(|d| ReservedDevice {
                    request: d.request.clone(),
                    driver: d.driver.clone(),
                    pool: d.pool.clone(),
                    device: d.device.clone(),
                })
                .collect();
            (i, devices)
        })
        .collect();
    Some(ReservedDevices { node, claims })
}

/// What PreBind writes through the API, applied to the model once a simulated pod is
/// bound: the new claims' allocations (devices and node selector; already there
/// since Reserve, see [`assume_allocations`]) and the pod in every claim's
/// `reservedFor`.
pub fn record_binding(cluster: &mut Cluster, state: &CycleState, pod: &Pod, node: &str) {
    let Some(s) = state.read::<StateData>(STATE_KEY) else {
        return;
    };
    let allocations = reserved_on(s, node);
    for (i, original) in s.claims.iter().enumerate() {
        let key = ClaimKey(original).to_string();
        let Some(claim) = cluster.resource_claims_mut().get_mut(&key) else {
            continue;
        };
        let status = claim.status.get_or_insert_with(Default::default);
        if let Some(j) = s.to_allocate.iter().position(|&x| x == i)
            && let Some(a) = allocations.get(j)
            && status.allocation.is_none()
        {
            status.allocation = Some(to_allocation_result(a));
        }
        let reserved = status.reserved_for.get_or_insert_with(Vec::new);
        if !reserved.iter().any(|r| r.uid == pod.uid) {
            reserved.push(
                k8s_openapi::api::resource::v1::ResourceClaimConsumerReference {
                    api_group: None,
                    resource: "pods".into(),
                    name: pod.name.clone(),
                    uid: pod.uid.clone(),
                },
            );
        }
    }
}

/// Reserve's in-flight allocations applied to a simulated model: each claim this
/// cycle allocated gets its allocation (not yet `reservedFor`, which PreBind
/// writes). Returns the claims' statuses before, for [`restore_claims`].
pub fn assume_allocations(
    cluster: &mut Cluster,
    state: &CycleState,
    node: &str,
) -> Vec<(
    String,
    Option<k8s_openapi::api::resource::v1::ResourceClaimStatus>,
)> {
    let Some(s) = state.read::<StateData>(STATE_KEY) else {
        return Vec::new();
    };
    let allocations = reserved_on(s, node);
    let mut saved = Vec::new();
    for (j, &i) in s.to_allocate.iter().enumerate() {
        let (Some(original), Some(a)) = (s.claims.get(i), allocations.get(j)) else {
            continue;
        };
        let key = ClaimKey(original).to_string();
        let Some(claim) = cluster.resource_claims_mut().get_mut(&key) else {
            continue;
        };
        saved.push((key, claim.status.clone()));
        let status = claim.status.get_or_insert_with(Default::default);
        if status.allocation.is_none() {
            status.allocation = Some(to_allocation_result(a));
        }
    }
    saved
}

/// Undo [`assume_allocations`] for a pod that is forgotten (Unreserve).
pub fn restore_claims(
    cluster: &mut Cluster,
    saved: Vec<(
        String,
        Option<k8s_openapi::api::resource::v1::ResourceClaimStatus>,
    )>,
) {
    for (key, status) in saved {
        if let Some(claim) = cluster.resource_claims_mut().get_mut(&key) {
            claim.status = status;
        }
    }
}

fn to_allocation_result(a: &ClaimAllocation) -> k8s_openapi::api::resource::v1::AllocationResult {
    use k8s_openapi::api::resource::v1 as r;
    r::AllocationResult {
        devices: Some(r::DeviceAllocationResult {
            results: Some(
                a.devices
                    .iter()
                    .map(|d| r::DeviceRequestAllocationResult {
                        request: d.request.clone(),
                        driver: d.driver.clone(),
                        pool: d.pool.clone(),
                        device: d.device.clone(),
                        admin_access: d.admin_access.then_some(true),
                        ..Default::default()
                    })
                    .collect(),
            ),
            config: None,
        }),
        node_selector: a.node_selector.clone(),
        allocation_timestamp: None,
    }
}

impl PreBindPlugin for DynamicResources {
    fn pre_bind_pre_flight(
        &self,
        _cx: &Ctx,
        state: &CycleState,
        _pod: &Pod,
        _node: &str,
    ) -> Status {
        match read_state(state) {
            Err(e) => e,
            Ok(s) if s.claims.is_empty() => Status::skip(),
            Ok(_) => Status::success(),
        }
    }
    /// A dry run of `bindClaim` for each claim not yet reserved for the pod: the writes
    /// themselves happen only under `--act`. What it can already tell is the failure
    /// upstream meets when a pod names the same claim twice (the API server accepts
    /// such a pod): the second write of the claim conflicts with the first and, retried
    /// on the fresh object, either finds its allocation replaced (the claim was
    /// allocated in this cycle) or appends the pod to `reservedFor` a second time,
    /// which the API server refuses.
    fn pre_bind(&self, _cx: &Ctx, state: &mut CycleState, pod: &Pod, _node: &str) -> Status {
        let s = match read_state(state) {
            Err(e) => return e,
            Ok(s) => s,
        };
        let mut bound: Vec<(&str, &str)> = Vec::new();
        for claim in &s.claims {
            let reserved = claim
                .status
                .as_ref()
                .and_then(|st| st.reserved_for.as_ref());
            if reserved
                .into_iter()
                .flatten()
                .any(|r| r.uid == pod.uid && r.resource == "pods")
            {
                continue;
            }
            let namespace = claim.metadata.namespace.as_deref().unwrap_or("default");
            let name = claim.metadata.name.as_deref().unwrap_or_default();
            if !bound.contains(&(namespace, name)) {
                bound.push((namespace, name));
                continue;
            }
            if !is_allocated(claim) {
                return Status::error(format!(
                    "claim {namespace}/{name} got allocated elsewhere in the meantime"
                ));
            }
            let index = reserved.map_or(0, Vec::len) + 1;
            return Status::error(format!(
                "add reservation to claim {namespace}/{name}: ResourceClaim.resource.k8s.io \"{name}\" \
                 is invalid: status.reservedFor[{index}]: Duplicate value: \"{}\"",
                pod.uid
            ));
        }
        Status::success()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::status::Code;
    use crate::model::testing::{cluster, pod, simple_node, simple_pod};
    use k8s_openapi::jiff::Timestamp;
    use serde_json::json;

    fn claim_pod() -> Pod {
        pod(json!({"metadata": {"name": "dra"}, "spec": {
            "containers": [{"name": "c", "resources": {"claims": [{"name": "gpu"}]}}],
            "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpu-tmpl"}]}}))
    }

    #[test]
    fn pod_without_claims() {
        let c = cluster(vec![simple_node("n1", "4", "8Gi")], vec![]);
        let cx = Ctx {
            cluster: &c,
            now: Timestamp::UNIX_EPOCH,
        };
        let pl = new(&args(None, "a").unwrap(), &Default::default()).unwrap();
        let p = pod(simple_pod("p", "1", "1Gi", None));
        assert!(
            pl.as_pre_enqueue()
                .unwrap()
                .pre_enqueue(&cx, &p)
                .is_success()
        );
        let mut st = CycleState::default();
        let (res, s) = pl.as_pre_filter().unwrap().pre_filter(&cx, &mut st, &p);
        assert!(res.is_none() && s.is_skip());
        assert!(
            st.contains(STATE_KEY),
            "PreFilter must write its (empty) state"
        );
        let n = &c.nodes()[0];
        assert!(pl.as_filter().unwrap().filter(&cx, &st, &p, n).is_success());
        let (score, s) = pl.as_score().unwrap().score(&cx, &st, &p, n);
        assert_eq!((score, s.code), (0, Code::Success));
        let mut scores = vec![NodeScore { node: 0, score: 0 }];
        pl.as_score()
            .unwrap()
            .normalize_score(&cx, &st, &p, &mut scores);
        assert_eq!(scores[0].score, 0);
        let (r, s) = pl.as_post_filter().unwrap().post_filter(
            &Framework::default(),
            &cx,
            &st,
            &p,
            &NodeToStatus::default(),
        );
        assert!(r.is_none());
        assert_eq!(
            (s.code, s.message()),
            (Code::Unschedulable, NO_NEW_CLAIMS.to_string())
        );
        assert!(
            pl.as_reserve()
                .unwrap()
                .reserve(&cx, &mut st, &p, "n1")
                .is_success()
        );
        assert!(
            pl.as_pre_bind()
                .unwrap()
                .pre_bind_pre_flight(&cx, &st, &p, "n1")
                .is_skip()
        );
    }

    /// A live source has no DRA objects: the pod is rejected as not modelled, never
    /// as missing its claims.
    #[test]
    fn source_without_dra_objects_is_not_modelled() {
        let c = cluster(vec![simple_node("n1", "4", "8Gi")], vec![]);
        let cx = Ctx {
            cluster: &c,
            now: Timestamp::UNIX_EPOCH,
        };
        let p = claim_pod();
        assert!(
            DynamicResources::default()
                .pre_enqueue(&cx, &p)
                .is_success()
        );
        let mut st = CycleState::default();
        let (_, s) = DynamicResources::default().pre_filter(&cx, &mut st, &p);
        assert_eq!(
            (s.code, s.message()),
            (
                Code::UnschedulableAndUnresolvable,
                DRA_OBJECTS_UNKNOWN.to_string()
            )
        );
    }

    /// h26/h27: an earlier PreFilter rejected the pod, so no state: `not found`.
    #[test]
    fn post_filter_without_state_errors_not_found() {
        let c = cluster(vec![], vec![]);
        let cx = Ctx {
            cluster: &c,
            now: Timestamp::UNIX_EPOCH,
        };
        let p = pod(simple_pod("p", "1", "1Gi", None));
        let (_, s) = DynamicResources::default().post_filter(
            &Framework::default(),
            &cx,
            &CycleState::default(),
            &p,
            &NodeToStatus::default(),
        );
        assert_eq!(
            (s.code, s.message()),
            (Code::Error, "not found".to_string())
        );
    }

    /// A template claim without a pod status entry: PreEnqueue and PreFilter give
    /// upstream's text (UU), and PostFilter then has no claims to deallocate.
    #[test]
    fn template_claim_not_created_yet() {
        let mut c = cluster(vec![simple_node("n1", "4", "8Gi")], vec![]);
        c.dra_objects_known = true;
        let cx = Ctx {
            cluster: &c,
            now: Timestamp::UNIX_EPOCH,
        };
        let p = claim_pod();
        let s = DynamicResources::default().pre_enqueue(&cx, &p);
        assert_eq!(
            (s.code, s.message()),
            (
                Code::UnschedulableAndUnresolvable,
                "pod \"default/dra\": ResourceClaim not created yet".to_string()
            )
        );
        let mut st = CycleState::default();
        let (_, s) = DynamicResources::default().pre_filter(&cx, &mut st, &p);
        assert_eq!(s.code, Code::UnschedulableAndUnresolvable);
        let (_, s) = DynamicResources::default().post_filter(
            &Framework::default(),
            &cx,
            &st,
            &p,
            &NodeToStatus::default(),
        );
        assert_eq!(
            (s.code, s.message()),
            (Code::Unschedulable, NO_NEW_CLAIMS.to_string())
        );
    }

    #[test]
    fn args_defaults_and_errors() {
        assert_eq!(args(None, "p").unwrap(), json!({"filterTimeout": "10s"}));
        assert_eq!(
            args(Some(&json!({"filterTimeout": "0s"})), "p").unwrap(),
            json!({"filterTimeout": "0s"})
        );
        let err = |v: Value| match new(&args(Some(&v), "p").unwrap(), &Default::default()) {
            Err(e) => e,
            Ok(_) => panic!("{v} accepted"),
        };
        assert_eq!(
            err(json!({"filterTimeout": "-1s"})),
            "filterTimeout: Invalid value: -1s: must be zero or positive"
        );
        assert_eq!(
            err(json!({"filterTimeout": "-1.5m"})),
            "filterTimeout: Invalid value: -1m30s: must be zero or positive"
        );
        assert_eq!(
            err(json!({"bindingTimeout": "10m"})),
            "bindingTimeout: Forbidden: DRADeviceBindingConditions or DRAResourceClaimDeviceStatus feature gate is disabled"
        );
        assert!(err(json!({"filterTimeout": "10"})).contains("missing unit"));
    }

    #[test]
    fn go_durations() {
        let cases: [(&str, i128, &str); 9] = [
            ("10s", 10_000_000_000, "10s"),
            ("0", 0, "0s"),
            ("1m", 60_000_000_000, "1m0s"),
            ("15m", 900_000_000_000, "15m0s"),
            ("1.5s", 1_500_000_000, "1.5s"),
            ("500ms", 500_000_000, "500ms"),
            ("1h2m3s", 3_723_000_000_000, "1h2m3s"),
            ("1.5us", 1_500, "1.5µs"),
            ("-2h", -7_200_000_000_000, "-2h0m0s"),
        ];
        for (text, nanos, shown) in cases {
            assert_eq!(parse_go_duration(text), Ok(nanos), "{text}");
            assert_eq!(format_go_duration(nanos), shown, "{text}");
        }
        for bad in ["", "s", "1x", "1.2.3s", "-"] {
            assert!(parse_go_duration(bad).is_err(), "{bad}");
        }
    }
}
