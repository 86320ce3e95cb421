//! NodeResourcesFit (PreFilter, Filter, PreScore, Score).
//!
//! Filter: the pod's requests (as upstream's `resource.PodRequests`: containers, init containers, sidecars, overhead, pod-level requests honoured) must fit in allocatable minus
//! what the node's pods already request; a shortfall larger than the whole node is
//! unresolvable by preemption. Score: LeastAllocated, MostAllocated or
//! RequestedToCapacityRatio over the configured resources, using the node's
//! *non-zero* requested cpu/memory and the incoming pod's container-level request with
//! the 100m / 200Mi defaults (`Pod::score_requests`, a quirk: pod-level requests are
//! ignored there).
//!
//! Args quirk: kube-scheduler's config validation registers this plugin's validator
//! under the wrong name, so argument errors only surface when the plugin is built:
//! `initializing plugin "NodeResourcesFit": <errors with paths relative to the args>`.
//! Hence [`args`] only applies defaults and [`new`] validates.
//!
//! Also home of a few helpers shared by the resource plugins (args decoding, error
//! aggregation, qualified-name validation, allocatable/requested lookup).

use std::collections::BTreeSet;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::config::field;
use crate::engine::framework::{
    Ctx, CycleState, FilterPlugin, MAX_NODE_SCORE, Plugin, PreFilterPlugin, PreFilterResult,
    PreScorePlugin, ScorePlugin,
};
use crate::engine::status::{Code, Status};
use crate::model::resource::{
    CPU, EPHEMERAL_STORAGE, MEMORY, is_extended_resource_name, is_scalar_resource_name,
};
use crate::model::{NodeInfo, Pod, Resource};

pub const NAME: &str = "NodeResourcesFit";
const PRE_FILTER_STATE_KEY: &str = "PreFilterNodeResourcesFit";
const PRE_SCORE_STATE_KEY: &str = "PreScoreNodeResourcesFit";

pub const LEAST_ALLOCATED: &str = "LeastAllocated";
pub const MOST_ALLOCATED: &str = "MostAllocated";
pub const REQUESTED_TO_CAPACITY_RATIO: &str = "RequestedToCapacityRatio";
/// `config.MaxCustomPriorityScore`: shape scores are 0..10, scaled ×10 before use.
const MAX_CUSTOM_PRIORITY_SCORE: i64 = 10;
const MAX_UTILIZATION: i64 = 100;

// ---------------------------------------------------------------------------------
// Args

/// `{name, weight}` of a resource taking part in scoring (config `ResourceSpec`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResourceSpec {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub weight: i64,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UtilizationShapePoint {
    #[serde(default)]
    pub utilization: i32,
    #[serde(default)]
    pub score: i32,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequestedToCapacityRatioParam {
    #[serde(default, deserialize_with = "nullable")]
    pub shape: Vec<UtilizationShapePoint>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScoringStrategy {
    #[serde(default, rename = "type")]
    pub type_: String,
    #[serde(default, deserialize_with = "nullable")]
    pub resources: Vec<ResourceSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested_to_capacity_ratio: Option<RequestedToCapacityRatioParam>,
}

/// `NodeResourcesFitArgs` (kubescheduler.config.k8s.io/v1).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NodeResourcesFitArgs {
    #[serde(default, skip_serializing)]
    pub api_version: Option<String>,
    #[serde(default, skip_serializing)]
    pub kind: Option<String>,
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub ignored_resources: Vec<String>,
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub ignored_resource_groups: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scoring_strategy: Option<ScoringStrategy>,
}

pub(crate) fn default_resource_spec() -> Vec<ResourceSpec> {
    vec![
        ResourceSpec {
            name: CPU.into(),
            weight: 1,
        },
        ResourceSpec {
            name: MEMORY.into(),
            weight: 1,
        },
    ]
}

impl NodeResourcesFitArgs {
    /// `SetDefaults_NodeResourcesFitArgs`.
    pub fn set_defaults(&mut self) {
        let s = self
            .scoring_strategy
            .get_or_insert_with(|| ScoringStrategy {
                type_: LEAST_ALLOCATED.into(),
                resources: default_resource_spec(),
                requested_to_capacity_ratio: None,
            });
        if s.resources.is_empty() {
            s.resources = default_resource_spec();
        }
        for r in &mut s.resources {
            if r.weight == 0 {
                r.weight = 1;
            }
        }
    }

    /// `ValidateNodeResourcesFitArgs`, with `path` the args' field path ("" = none, as
    /// when the plugin validates in its constructor).
    pub fn validate(&self, path: &str) -> Vec<String> {
        let mut errs = Vec::new();
        let res_path = child(path, "ignoredResources");
        for (i, r) in self.ignored_resources.iter().enumerate() {
            let p = format!("{res_path}[{i}]");
            errs.extend(validate_label_name(r, &p));
        }
        let group_path = child(path, "ignoredResourceGroups");
        for (i, g) in self.ignored_resource_groups.iter().enumerate() {
            let p = format!("{group_path}[{i}]");
            if g.contains('/') {
                errs.push(field::invalid(
                    &p,
                    g.as_str(),
                    "resource group name can't contain '/'",
                ));
            }
            errs.extend(validate_label_name(g, &p));
        }
        let strategy_path = child(path, "scoringStrategy");
        if let Some(s) = &self.scoring_strategy {
            if ![LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO]
                .contains(&s.type_.as_str())
            {
                errs.push(field::not_supported(
                    &format!("{strategy_path}.type"),
                    s.type_.as_str(),
                    &[LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO],
                ));
            }
            let rp = format!("{strategy_path}.resources");
            for (i, r) in s.resources.iter().enumerate() {
                if r.weight <= 0 || r.weight > 100 {
                    errs.push(field::invalid(
                        &format!("{rp}[{i}].weight"),
                        r.weight,
                        &format!("resource weight of {} not in valid range (0, 100]", r.name),
                    ));
                }
            }
            if let Some(rtcr) = &s.requested_to_capacity_ratio {
                // Upstream reports the shape under `scoringStrategy.shape`.
                errs.extend(validate_function_shape(
                    &rtcr.shape,
                    &format!("{strategy_path}.shape"),
                ));
            }
        }
        errs
    }
}

/// `validateFunctionShape` (utilization 0..100 strictly increasing, score 0..10).
pub(crate) fn validate_function_shape(shape: &[UtilizationShapePoint], path: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if shape.is_empty() {
        errs.push(field::required(
            path,
            "at least one point must be specified",
        ));
        return errs;
    }
    for i in 1..shape.len() {
        if shape[i - 1].utilization >= shape[i].utilization {
            errs.push(field::invalid(
                &format!("{path}[{i}].utilization"),
                shape[i].utilization,
                "values must be sorted in increasing order",
            ));
            break;
        }
    }
    for (i, p) in shape.iter().enumerate() {
        if !(0..=100).contains(&p.utilization) {
            errs.push(field::invalid(
                &format!("{path}[{i}].utilization"),
                p.utilization,
                "not in valid range [0, 100]",
            ));
        }
        if !(0..=MAX_CUSTOM_PRIORITY_SCORE as i32).contains(&p.score) {
            errs.push(field::invalid(
                &format!("{path}[{i}].score"),
                p.score,
                "not in valid range [0, 10]",
            ));
        }
    }
    errs
}

/// Defaults of the args (no validation: see the module doc).
pub fn args(user: Option<&Value>, path: &str) -> Result<Value, Vec<String>> {
    let mut a: NodeResourcesFitArgs = decode_args(user, path)?;
    a.set_defaults();
    encode_args(&a, path)
}

pub fn new(args: &Value, fts: &crate::version::Features) -> Result<Arc<dyn Plugin>, String> {
    let mut a: NodeResourcesFitArgs = decode_args(Some(args), "").map_err(|e| aggregate(&e))?;
    a.set_defaults();
    let errs = a.validate("");
    if !errs.is_empty() {
        return Err(aggregate(&errs));
    }
    let Some(s) = a.scoring_strategy else {
        return Err("scoring strategy not specified".into());
    };
    let strategy = match s.type_.as_str() {
        LEAST_ALLOCATED => Strategy::Least,
        MOST_ALLOCATED => Strategy::Most,
        REQUESTED_TO_CAPACITY_RATIO => {
            // kube-scheduler v1.35 dereferences the missing block and crashes; say so.
            let Some(rtcr) = s.requested_to_capacity_ratio else {
                return Err(field::required(
                    "scoringStrategy.requestedToCapacityRatio",
                    "must be set for the RequestedToCapacityRatio scoring strategy \
                     (kube-scheduler v1.35 crashes without it)",
                ));
            };
            Strategy::RequestedToCapacityRatio(
                rtcr.shape
                    .iter()
                    .map(|p| {
                        (
                            i64::from(p.utilization),
                            i64::from(p.score) * (MAX_NODE_SCORE / MAX_CUSTOM_PRIORITY_SCORE),
                        )
                    })
                    .collect(),
            )
        }
        other => return Err(format!("scoring strategy {other} is not supported")),
    };
    Ok(Arc::new(NodeResourcesFit {
        ignored_resources: a.ignored_resources.into_iter().collect(),
        ignored_resource_groups: a.ignored_resource_groups.into_iter().collect(),
        strategy,
        resources: s.resources,
        over_allocatable_unresolvable: fts.fit_over_allocatable_unresolvable(),
    }))
}

// ---------------------------------------------------------------------------------
// Plugin

#[derive(Clone, Debug)]
enum Strategy {
    Least,
    Most,
    /// Broken-line shape as (utilization, score ×10) points.
    RequestedToCapacityRatio(Vec<(i64, i64)>),
}

pub struct NodeResourcesFit {
    /// A request over the node's whole allocatable is UnschedulableAndUnresolvable
    /// (from 1.34); before, every shortage is Unschedulable.
    over_allocatable_unresolvable: bool,
    ignored_resources: BTreeSet<String>,
    ignored_resource_groups: BTreeSet<String>,
    strategy: Strategy,
    resources: Vec<ResourceSpec>,
}

#[derive(Clone)]
struct PreFilterState {
    request: Resource,
}

#[derive(Clone)]
struct PreScoreState {
    /// Same order as the configured resources.
    pod_requests: Vec<i64>,
}

impl Plugin for NodeResourcesFit {
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
}

impl PreFilterPlugin for NodeResourcesFit {
    fn pre_filter(
        &self,
        _cx: &Ctx,
        state: &mut CycleState,
        pod: &Pod,
    ) -> (PreFilterResult, Status) {
        state.write(
            PRE_FILTER_STATE_KEY,
            PreFilterState {
                request: pod.requests.clone(),
            },
        );
        (None, Status::success())
    }
}

impl FilterPlugin for NodeResourcesFit {
    fn filter(&self, _cx: &Ctx, state: &CycleState, _pod: &Pod, node: &NodeInfo) -> Status {
        let Some(s) = state.read::<PreFilterState>(PRE_FILTER_STATE_KEY) else {
            return Status::error(format!(
                "error reading {PRE_FILTER_STATE_KEY:?} from cycleState: not found"
            ));
        };
        self.fits_request(&s.request, node)
    }
}

impl NodeResourcesFit {
    /// `fitsRequest`: reasons in upstream order; Unschedulable, or
    /// UnschedulableAndUnresolvable when the request exceeds the node's allocatable.
    fn fits_request(&self, req: &Resource, node: &NodeInfo) -> Status {
        let alloc = &node.node.allocatable;
        let used = &node.requested;
        let mut reasons: Vec<String> = Vec::new();
        let mut unresolvable = false;
        if node.pods.len() as i64 + 1 > alloc.allowed_pod_number {
            reasons.push("Too many pods".into());
        }
        if req.milli_cpu == 0
            && req.memory == 0
            && req.ephemeral_storage == 0
            && req.scalar.is_empty()
        {
            return status_of(reasons, unresolvable);
        }
        // Go's int64 arithmetic: a node whose sums wrapped compares as upstream's does.
        let mut check = |want: i64, have: i64, used: i64, reason: &str| {
            if want > 0 && want > have.wrapping_sub(used) {
                reasons.push(reason.to_string());
                unresolvable |= want > have;
            }
        };
        check(
            req.milli_cpu,
            alloc.milli_cpu,
            used.milli_cpu,
            "Insufficient cpu",
        );
        check(req.memory, alloc.memory, used.memory, "Insufficient memory");
        check(
            req.ephemeral_storage,
            alloc.ephemeral_storage,
            used.ephemeral_storage,
            "Insufficient ephemeral-storage",
        );
        // Upstream walks a Go map here (random order when several scalars fail); the
        // sorted order is one of the orders it can produce.
        for (name, &want) in &req.scalar {
            if want == 0 {
                continue;
            }
            if is_extended_resource_name(name) {
                let group = name.split('/').next().unwrap_or("");
                if self.ignored_resources.contains(name)
                    || (!self.ignored_resource_groups.is_empty()
                        && self.ignored_resource_groups.contains(group))
                {
                    continue;
                }
            }
            let have = alloc.scalar.get(name).copied().unwrap_or(0);
            let in_use = used.scalar.get(name).copied().unwrap_or(0);
            if want > have.wrapping_sub(in_use) {
                reasons.push(format!("Insufficient {name}"));
                unresolvable |= want > have;
            }
        }
        status_of(reasons, unresolvable && self.over_allocatable_unresolvable)
    }

    fn pod_requests(&self, pod: &Pod) -> Vec<i64> {
        self.resources
            .iter()
            .map(|r| pod_request(&pod.score_requests, &r.name))
            .collect()
    }

    fn score_node(&self, node: &NodeInfo, pod_requests: &[i64]) -> (i64, Status) {
        if self.resources.is_empty() {
            return (0, Status::error("resources not found"));
        }
        let mut node_score: i64 = 0;
        let mut weight_sum: i64 = 0;
        for (r, &pod_req) in self.resources.iter().zip(pod_requests) {
            let (alloc, req) = allocatable_and_requested(node, &r.name, pod_req, false);
            if alloc == 0 {
                continue;
            }
            let s = match &self.strategy {
                Strategy::Least => least_requested_score(req, alloc),
                Strategy::Most => most_requested_score(req, alloc),
                Strategy::RequestedToCapacityRatio(shape) => {
                    let u = if req > alloc {
                        MAX_UTILIZATION
                    } else {
                        req.wrapping_mul(MAX_UTILIZATION) / alloc
                    };
                    let s = broken_linear(shape, u);
                    // Resources scoring 0 count in neither sum.
                    if s <= 0 {
                        continue;
                    }
                    s
                }
            };
            node_score = node_score.wrapping_add(s.wrapping_mul(r.weight));
            weight_sum = weight_sum.wrapping_add(r.weight);
        }
        if weight_sum == 0 {
            return (0, Status::success());
        }
        let score = match self.strategy {
            Strategy::RequestedToCapacityRatio(_) => {
                round_half_away(node_score as f64 / weight_sum as f64)
            }
            _ => node_score / weight_sum,
        };
        (score, Status::success())
    }
}

fn status_of(reasons: Vec<String>, unresolvable: bool) -> Status {
    if reasons.is_empty() {
        return Status::success();
    }
    let code = if unresolvable {
        Code::UnschedulableAndUnresolvable
    } else {
        Code::Unschedulable
    };
    Status::new(code, reasons)
}

impl PreScorePlugin for NodeResourcesFit {
    fn pre_score(&self, _cx: &Ctx, state: &mut CycleState, pod: &Pod, _n: &[&NodeInfo]) -> Status {
        state.write(
            PRE_SCORE_STATE_KEY,
            PreScoreState {
                pod_requests: self.pod_requests(pod),
            },
        );
        Status::success()
    }
}

impl ScorePlugin for NodeResourcesFit {
    fn score(&self, _cx: &Ctx, state: &CycleState, pod: &Pod, node: &NodeInfo) -> (i64, Status) {
        match state.read::<PreScoreState>(PRE_SCORE_STATE_KEY) {
            Some(s) => self.score_node(node, &s.pod_requests),
            // Upstream recomputes when PreScore did not run.
            None => self.score_node(node, &self.pod_requests(pod)),
        }
    }
}

// ---------------------------------------------------------------------------------
// Score arithmetic shared with the other resource plugins

/// The pod's request for a named resource (cpu in millicores), 0 when absent. Only
/// cpu, memory, ephemeral-storage and scalar resources exist in a pod's request.
pub(crate) fn pod_request(r: &Resource, name: &str) -> i64 {
    match name {
        CPU => r.milli_cpu,
        MEMORY => r.memory,
        EPHEMERAL_STORAGE => r.ephemeral_storage,
        other => r.scalar.get(other).copied().unwrap_or(0),
    }
}

/// `calculateResourceAllocatableRequest`: (allocatable, node requested + pod request).
/// cpu/memory use the node's non-zero requested sums unless `use_requested`;
/// ephemeral and scalars always use the real sums. A scalar the pod does not request,
/// or one the node does not list, yields (0, 0) and is left out of the score.
pub(crate) fn allocatable_and_requested(
    node: &NodeInfo,
    name: &str,
    pod_request: i64,
    use_requested: bool,
) -> (i64, i64) {
    if pod_request == 0 && is_scalar_resource_name(name) {
        return (0, 0);
    }
    let alloc = &node.node.allocatable;
    let requested = if use_requested {
        &node.requested
    } else {
        &node.non_zero_requested
    };
    match name {
        CPU => (
            alloc.milli_cpu,
            requested.milli_cpu.wrapping_add(pod_request),
        ),
        MEMORY => (alloc.memory, requested.memory.wrapping_add(pod_request)),
        EPHEMERAL_STORAGE => (
            alloc.ephemeral_storage,
            node.requested.ephemeral_storage.wrapping_add(pod_request),
        ),
        other => match alloc.scalar.get(other) {
            Some(&a) => (
                a,
                node.requested
                    .scalar
                    .get(other)
                    .copied()
                    .unwrap_or(0)
                    .wrapping_add(pod_request),
            ),
            None => (0, 0),
        },
    }
}

fn least_requested_score(requested: i64, capacity: i64) -> i64 {
    if capacity == 0 || requested > capacity {
        return 0;
    }
    // Go's int64 arithmetic wraps on a huge allocatable; so does this.
    (capacity - requested).wrapping_mul(MAX_NODE_SCORE) / capacity
}

fn most_requested_score(requested: i64, capacity: i64) -> i64 {
    if capacity == 0 {
        return 0;
    }
    // Pods without requests count the defaults, so requested may exceed capacity.
    requested.min(capacity).wrapping_mul(MAX_NODE_SCORE) / capacity
}

/// `helper.BuildBrokenLinearFunction` evaluated at `p`.
fn broken_linear(shape: &[(i64, i64)], p: i64) -> i64 {
    for (i, &(u, s)) in shape.iter().enumerate() {
        if p <= u {
            if i == 0 {
                return s;
            }
            let (u0, s0) = shape[i - 1];
            return s0 + (s - s0) * (p - u0) / (u - u0);
        }
    }
    shape.last().map_or(0, |&(_, s)| s)
}

/// Go's `math.Round` (half away from zero), then `int64()`.
fn round_half_away(v: f64) -> i64 {
    v.round() as i64
}

// ---------------------------------------------------------------------------------
// Args helpers shared by the plugins of this crate

/// A JSON `null` becomes the default, as Go's decoder leaves a nil slice.
pub(crate) fn nullable<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// Decode user args (absent or `null` → defaults). Unknown fields are errors, as
/// kube-scheduler decodes its configuration strictly.
pub(crate) fn decode_args<T: DeserializeOwned + Default>(
    user: Option<&Value>,
    path: &str,
) -> Result<T, Vec<String>> {
    match user {
        None | Some(Value::Null) => Ok(T::default()),
        Some(v) => serde_json::from_value(v.clone()).map_err(|e| {
            let at = if path.is_empty() {
                String::new()
            } else {
                format!("{path}: ")
            };
            vec![format!("{at}decoding args: {e}")]
        }),
    }
}

pub(crate) fn encode_args<T: Serialize>(a: &T, path: &str) -> Result<Value, Vec<String>> {
    serde_json::to_value(a).map_err(|e| vec![format!("{path}: encoding args: {e}")])
}

/// `path.Child(name)` with an empty path meaning none.
pub(crate) fn child(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}.{name}")
    }
}

/// `utilerrors.NewAggregate(errs).Error()`: one message as is; several deduplicated,
/// joined by ", " inside brackets.
pub(crate) fn aggregate(errs: &[String]) -> String {
    let mut seen = BTreeSet::new();
    let uniq: Vec<&str> = errs
        .iter()
        .filter(|e| seen.insert(e.as_str()))
        .map(String::as_str)
        .collect();
    match uniq.as_slice() {
        [one] => one.to_string(),
        _ => format!("[{}]", uniq.join(", ")),
    }
}

const QUALIFIED_NAME_ERR: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const QUALIFIED_NAME_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const DNS1123_SUBDOMAIN_ERR: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_FMT: &str =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const LABEL_VALUE_ERR: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_FMT: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";

/// `validation.RegexError`.
fn regex_error(msg: &str, fmt: &str, examples: &[&str]) -> String {
    let mut s = format!("{msg} (e.g. ");
    for (i, e) in examples.iter().enumerate() {
        if i > 0 {
            s.push_str(" or ");
        }
        s.push_str(&format!("'{e}', "));
    }
    s.push_str(&format!("regex used for validation is '{fmt}')"));
    s
}

fn max_len_error(n: usize) -> String {
    format!("must be no more than {n} bytes")
}

fn is_qualified_name_part(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

fn is_dns1123_label(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && (b[0].is_ascii_lowercase() || b[0].is_ascii_digit())
        && (b[b.len() - 1].is_ascii_lowercase() || b[b.len() - 1].is_ascii_digit())
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
}

/// `validation.IsDNS1123Subdomain`.
fn dns1123_subdomain_errors(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 253 {
        errs.push(max_len_error(253));
    }
    if !s.split('.').all(is_dns1123_label) {
        errs.push(regex_error(
            DNS1123_SUBDOMAIN_ERR,
            DNS1123_SUBDOMAIN_FMT,
            &["example.com"],
        ));
    }
    errs
}

/// `validation.IsQualifiedName`: `[prefix/]name`.
pub(crate) fn qualified_name_errors(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_string());
            } else {
                errs.extend(
                    dns1123_subdomain_errors(prefix)
                        .into_iter()
                        .map(|m| format!("prefix part {m}")),
                );
            }
            *name
        }
        _ => {
            errs.push(format!(
                "a qualified name {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                regex_error(QUALIFIED_NAME_ERR, QUALIFIED_NAME_FMT, &["MyName", "my.name", "123-abc"])
            ));
            return errs;
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_string());
    } else if name.len() > 63 {
        errs.push(format!("name part {}", max_len_error(63)));
    }
    if !is_qualified_name_part(name) {
        errs.push(format!(
            "name part {}",
            regex_error(
                QUALIFIED_NAME_ERR,
                QUALIFIED_NAME_FMT,
                &["MyName", "my.name", "123-abc"]
            )
        ));
    }
    errs
}

/// `validation.IsValidLabelValue`.
pub(crate) fn label_value_errors(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 63 {
        errs.push(max_len_error(63));
    }
    if !value.is_empty() && !is_qualified_name_part(value) {
        errs.push(regex_error(
            LABEL_VALUE_ERR,
            LABEL_VALUE_FMT,
            &["MyValue", "my_value", "12345"],
        ));
    }
    errs
}

/// `metav1validation.ValidateLabelName`: one Invalid error per problem.
pub(crate) fn validate_label_name(name: &str, path: &str) -> Vec<String> {
    qualified_name_errors(name)
        .into_iter()
        .map(|m| field::invalid(path, name, &m))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Cluster;
    use crate::model::testing::{cluster, pod, simple_node};
    use k8s_openapi::jiff::Timestamp;
    use serde_json::json;

    fn node(name: &str, alloc: Value) -> Value {
        json!({"metadata": {"name": name}, "status": {"allocatable": alloc}})
    }

    /// A bound pod with one container requesting `req`.
    fn bound(name: &str, node: &str, req: Value) -> Value {
        json!({"metadata": {"name": name, "uid": name},
               "spec": {"nodeName": node,
                        "containers": [{"name": "c", "resources": {"requests": req}}]}})
    }

    fn pending(req: Value) -> Pod {
        pod(json!({"metadata": {"name": "pending"},
                   "spec": {"containers": [{"name": "c", "resources": {"requests": req}}]}}))
    }

    fn plugin(args: Value) -> Arc<dyn Plugin> {
        let defaulted = super::args(Some(&args), "a").unwrap();
        new(&defaulted, &Default::default()).unwrap()
    }

    fn filter_all(pl: &Arc<dyn Plugin>, c: &Cluster, p: &Pod) -> Vec<(String, Code, Vec<String>)> {
        let cx = Ctx {
            cluster: c,
            now: Timestamp::UNIX_EPOCH,
        };
        let mut st = CycleState::default();
        let (res, s) = pl.as_pre_filter().unwrap().pre_filter(&cx, &mut st, p);
        assert!(res.is_none() && s.is_success());
        c.nodes()
            .iter()
            .map(|n| {
                let s = pl.as_filter().unwrap().filter(&cx, &st, p, n);
                (n.name().to_string(), s.code, s.reasons)
            })
            .collect()
    }

    fn scores(pl: &Arc<dyn Plugin>, c: &Cluster, p: &Pod) -> Vec<i64> {
        let cx = Ctx {
            cluster: c,
            now: Timestamp::UNIX_EPOCH,
        };
        let mut st = CycleState::default();
        let nodes: Vec<&NodeInfo> = c.nodes().iter().collect();
        assert!(
            pl.as_pre_score()
                .unwrap()
                .pre_score(&cx, &mut st, p, &nodes)
                .is_success()
        );
        c.nodes()
            .iter()
            .map(|n| {
                let (s, status) = pl.as_score().unwrap().score(&cx, &st, p, n);
                assert!(status.is_success(), "{}", status.message());
                s
            })
            .collect()
    }

    /// h14: every reason string, U vs UU, several reasons on one node.
    #[test]
    fn h14_filter_reasons() {
        let n = |name: &str, cpu: &str, mem: &str, pods: &str, eph: &str| {
            node(
                name,
                json!({"cpu": cpu, "memory": mem, "pods": pods, "ephemeral-storage": eph}),
            )
        };
        let c = cluster(
            vec![
                n("n1", "2", "16Gi", "110", "100Gi"),
                n("n2", "8", "2Gi", "110", "100Gi"),
                n("n3", "8", "16Gi", "110", "5Gi"),
                n("n4", "8", "16Gi", "2", "100Gi"),
                n("n5", "8", "16Gi", "110", "100Gi"),
                n("n6", "1", "1Gi", "110", "100Gi"),
            ],
            vec![
                bound("r4a", "n4", json!({"cpu": "100m"})),
                bound("r4b", "n4", json!({"cpu": "100m"})),
                bound(
                    "r5",
                    "n5",
                    json!({"cpu": "1", "memory": "1Gi", "ephemeral-storage": "10Gi"}),
                ),
            ],
        );
        let p = pending(json!({"cpu": "2", "memory": "4Gi", "ephemeral-storage": "10Gi"}));
        let got = filter_all(&plugin(json!({})), &c, &p);
        let uu = Code::UnschedulableAndUnresolvable;
        let want: Vec<(&str, Code, Vec<&str>)> = vec![
            ("n1", Code::Success, vec![]),
            ("n2", uu, vec!["Insufficient memory"]),
            ("n3", uu, vec!["Insufficient ephemeral-storage"]),
            ("n4", Code::Unschedulable, vec!["Too many pods"]),
            ("n5", Code::Success, vec![]),
            ("n6", uu, vec!["Insufficient cpu", "Insufficient memory"]),
        ];
        for ((gn, gc, gr), (wn, wc, wr)) in got.iter().zip(&want) {
            assert_eq!(
                (
                    gn.as_str(),
                    *gc,
                    gr.iter().map(String::as_str).collect::<Vec<_>>()
                ),
                (*wn, *wc, wr.clone())
            );
        }
        // Scores: h14 NodeResourcesFit raw n1 37, n5 65.
        let c2 = cluster(
            vec![
                n("n1", "2", "16Gi", "110", "100Gi"),
                n("n5", "8", "16Gi", "110", "100Gi"),
            ],
            vec![bound(
                "r5",
                "n5",
                json!({"cpu": "1", "memory": "1Gi", "ephemeral-storage": "10Gi"}),
            )],
        );
        assert_eq!(scores(&plugin(json!({})), &c2, &p), vec![37, 65]);
    }

    #[test]
    fn resolvable_shortfall_is_unschedulable_and_all_reasons_are_kept() {
        let c = cluster(
            vec![node(
                "n",
                json!({"cpu": "4", "memory": "4Gi", "pods": "1", "example.com/foo": "2"}),
            )],
            vec![bound(
                "r",
                "n",
                json!({"cpu": "3", "memory": "3Gi", "example.com/foo": "1"}),
            )],
        );
        let p = pending(json!({"cpu": "2", "memory": "2Gi", "example.com/foo": "2"}));
        let got = filter_all(&plugin(json!({})), &c, &p);
        assert_eq!(got[0].1, Code::Unschedulable);
        assert_eq!(
            got[0].2,
            vec![
                "Too many pods",
                "Insufficient cpu",
                "Insufficient memory",
                "Insufficient example.com/foo"
            ]
        );
    }

    #[test]
    fn zero_request_only_checks_pod_count() {
        let c = cluster(vec![node("n", json!({"cpu": "0", "pods": "0"}))], vec![]);
        let p = pod(json!({"metadata": {"name": "be"}, "spec": {"containers": [{"name": "c"}]}}));
        let got = filter_all(&plugin(json!({})), &c, &p);
        assert_eq!(
            (got[0].1, got[0].2.clone()),
            (Code::Unschedulable, vec!["Too many pods".into()])
        );
        // A node without a `pods` allocatable always fails the pod count.
        let c = cluster(vec![node("n", json!({"cpu": "4"}))], vec![]);
        assert_eq!(
            filter_all(&plugin(json!({})), &c, &p)[0].2,
            vec!["Too many pods".to_string()]
        );
    }

    /// h15: extended resource; missing allocatable counts as 0.
    #[test]
    fn h15_extended_resources() {
        let n = |name: &str, gpu: Option<&str>| {
            let mut a = json!({"cpu": "16", "memory": "64Gi", "pods": "110"});
            if let Some(g) = gpu {
                a["nvidia.com/gpu"] = json!(g);
            }
            node(name, a)
        };
        let c = cluster(
            vec![
                n("n1", None),
                n("n2", Some("1")),
                n("n3", Some("4")),
                n("n4", Some("8")),
            ],
            vec![
                bound("g3", "n3", json!({"cpu": "1", "nvidia.com/gpu": "3"})),
                bound(
                    "g4",
                    "n4",
                    json!({"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": "2"}),
                ),
            ],
        );
        let p = pending(json!({"cpu": "2", "memory": "8Gi", "nvidia.com/gpu": "2"}));
        let got = filter_all(&plugin(json!({})), &c, &p);
        let gpu = vec!["Insufficient nvidia.com/gpu".to_string()];
        assert_eq!(got[0].1, Code::UnschedulableAndUnresolvable);
        assert_eq!(got[0].2, gpu);
        assert_eq!(got[1].1, Code::UnschedulableAndUnresolvable);
        assert_eq!(got[2].1, Code::Unschedulable);
        assert_eq!(got[2].2, gpu);
        assert_eq!(got[3].1, Code::Success);
        // GPU not in the default scoring resources: n4 raw 37.
        let c4 = cluster(
            vec![n("n4", Some("8"))],
            vec![bound(
                "g4",
                "n4",
                json!({"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": "2"}),
            )],
        );
        assert_eq!(scores(&plugin(json!({})), &c4, &p), vec![37]);
        // Ignored resources and groups skip extended resources only.
        for args in [
            json!({"ignoredResources": ["nvidia.com/gpu"]}),
            json!({"ignoredResourceGroups": ["nvidia.com"]}),
        ] {
            let got = filter_all(&plugin(args.clone()), &c, &p);
            assert!(got.iter().all(|g| g.1 == Code::Success), "{args}");
        }
    }

    /// h16 (sidecar + big init container) and h17 (overhead) in Filter and Score.
    #[test]
    fn h16_h17_effective_requests() {
        let c = cluster(
            vec![
                node("n1", json!({"cpu": "4", "memory": "8Gi", "pods": "110"})),
                node("n2", json!({"cpu": "5", "memory": "8Gi", "pods": "110"})),
                node("n3", json!({"cpu": "8", "memory": "8Gi", "pods": "110"})),
            ],
            vec![
                bound("r1", "n1", json!({"cpu": "500m"})),
                bound("r2", "n2", json!({"cpu": "1"})),
            ],
        );
        let p = pod(json!({"metadata": {"name": "pending"}, "spec": {
        "containers": [{"name": "main", "resources": {"requests": {"cpu": "1500m", "memory": "512Mi"}}}],
        "initContainers": [
            {"name": "sidecar", "restartPolicy": "Always",
             "resources": {"requests": {"cpu": "1", "memory": "128Mi"}}},
            {"name": "migrate", "resources": {"requests": {"cpu": "3", "memory": "1Gi"}}}
        ]}}));
        let pl = plugin(json!({}));
        let got = filter_all(&pl, &c, &p);
        assert_eq!(
            (got[0].1, got[0].2.clone()),
            (Code::Unschedulable, vec!["Insufficient cpu".into()])
        );
        assert_eq!((got[1].1, got[2].1), (Code::Success, Code::Success));
        assert_eq!(scores(&pl, &c, &p)[1..], [41, 67]);

        let c = cluster(
            vec![
                node("n1", json!({"cpu": "2", "memory": "4Gi", "pods": "110"})),
                node("n2", json!({"cpu": "3", "memory": "4Gi", "pods": "110"})),
                node("n3", json!({"cpu": "4", "memory": "8Gi", "pods": "110"})),
            ],
            vec![
                bound("r1", "n1", json!({"cpu": "1"})),
                bound("r2", "n2", json!({"cpu": "1"})),
            ],
        );
        let p = pod(json!({"metadata": {"name": "pending"}, "spec": {
            "containers": [{"name": "c", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}],
            "overhead": {"cpu": "250m", "memory": "160Mi"}}}));
        let got = filter_all(&pl, &c, &p);
        assert_eq!(
            (got[0].1, got[0].2.clone()),
            (Code::Unschedulable, vec!["Insufficient cpu".into()])
        );
        assert_eq!(scores(&pl, &c, &p)[1..], [45, 76]);
    }

    /// h01: LeastAllocated on heterogeneous nodes.
    #[test]
    fn h01_least_allocated() {
        let n = |name: &str, cpu: &str, mem: &str| {
            node(name, json!({"cpu": cpu, "memory": mem, "pods": "110"}))
        };
        let c = cluster(
            vec![
                n("n1", "4", "8Gi"),
                n("n2", "8", "16Gi"),
                n("n3", "2", "4Gi"),
                n("n4", "16", "32Gi"),
            ],
            vec![
                bound("r1", "n1", json!({"cpu": "1", "memory": "2Gi"})),
                bound("r2", "n1", json!({"cpu": "500m", "memory": "1Gi"})),
                bound("r3", "n2", json!({"cpu": "6", "memory": "4Gi"})),
                bound("r4-0", "n4", json!({"cpu": "2", "memory": "4Gi"})),
                bound("r4-1", "n4", json!({"cpu": "2", "memory": "4Gi"})),
                bound("r4-2", "n4", json!({"cpu": "2", "memory": "4Gi"})),
                bound("r4-3", "n4", json!({"cpu": "2", "memory": "4Gi"})),
            ],
        );
        let p = pending(json!({"cpu": "1", "memory": "2Gi"}));
        assert_eq!(scores(&plugin(json!({})), &c, &p), vec![37, 37, 50, 43]);
    }

    /// h18: MostAllocated, cpu weight 2, memory weight 1.
    #[test]
    fn h18_most_allocated() {
        let n = |name: &str, cpu: &str, mem: &str| {
            node(name, json!({"cpu": cpu, "memory": mem, "pods": "110"}))
        };
        let c = cluster(
            vec![
                n("n1", "4", "8Gi"),
                n("n2", "8", "16Gi"),
                n("n3", "4", "16Gi"),
                n("n4", "16", "8Gi"),
            ],
            vec![
                bound("r1", "n1", json!({"cpu": "2", "memory": "2Gi"})),
                bound("r2", "n2", json!({"cpu": "1", "memory": "10Gi"})),
                bound("r3", "n4", json!({"cpu": "10", "memory": "1Gi"})),
            ],
        );
        let pl = plugin(json!({"scoringStrategy": {"type": "MostAllocated",
            "resources": [{"name": "cpu", "weight": 2}, {"name": "memory", "weight": 1}]}}));
        let p = pending(json!({"cpu": "1", "memory": "1Gi"}));
        assert_eq!(scores(&pl, &c, &p), vec![62, 39, 18, 53]);
    }

    /// h19: RequestedToCapacityRatio, 3-point shape, cpu 3 / memory 1 / gpu 2.
    #[test]
    fn h19_requested_to_capacity_ratio() {
        let n = |name: &str, cpu: &str, mem: &str, gpu: Option<&str>| {
            let mut a = json!({"cpu": cpu, "memory": mem, "pods": "110"});
            if let Some(g) = gpu {
                a["nvidia.com/gpu"] = json!(g);
            }
            node(name, a)
        };
        let c = cluster(
            vec![
                n("n1", "4", "8Gi", Some("4")),
                n("n2", "8", "16Gi", Some("2")),
                n("n3", "6", "12Gi", None),
                n("n4", "10", "10Gi", Some("8")),
            ],
            vec![
                bound(
                    "r1",
                    "n1",
                    json!({"cpu": "1", "memory": "3Gi", "nvidia.com/gpu": "1"}),
                ),
                bound("r2", "n2", json!({"cpu": "5", "memory": "1Gi"})),
                bound(
                    "r3",
                    "n4",
                    json!({"cpu": "3", "memory": "7Gi", "nvidia.com/gpu": "5"}),
                ),
            ],
        );
        let pl = plugin(
            json!({"scoringStrategy": {"type": "RequestedToCapacityRatio",
            "resources": [{"name": "cpu", "weight": 3}, {"name": "memory", "weight": 1},
                          {"name": "nvidia.com/gpu", "weight": 2}],
            "requestedToCapacityRatio": {"shape": [
                {"utilization": 0, "score": 0}, {"utilization": 50, "score": 8},
                {"utilization": 100, "score": 10}]}}}),
        );
        let p = pending(json!({"cpu": "1", "memory": "1Gi"}));
        assert_eq!(scores(&pl, &c, &p), vec![80, 72, 22, 71]);
    }

    /// h21: a best-effort pod scores with the 100m / 200Mi defaults.
    #[test]
    fn h21_best_effort_defaults() {
        let c = cluster(vec![simple_node("n1", "4", "8Gi")], vec![]);
        let p = pod(json!({"metadata": {"name": "be"}, "spec": {"containers": [{"name": "c"}]}}));
        assert_eq!(scores(&plugin(json!({})), &c, &p), vec![97]);
    }

    /// h45/h55: two containers without memory requests count 2 × 200Mi; h55 n2..n4.
    #[test]
    fn h45_h55_scores() {
        let c = cluster(vec![simple_node("n1", "4", "8Gi")], vec![]);
        let p = pod(
            json!({"metadata": {"name": "pending"}, "spec": {"containers": [
            {"name": "a", "resources": {"requests": {"cpu": "100m"}}},
            {"name": "b", "resources": {"requests": {"cpu": "100m"}}}]}}),
        );
        assert_eq!(scores(&plugin(json!({})), &c, &p), vec![95]);
        let c = cluster(
            vec![
                simple_node("n2", "8", "8Gi"),
                simple_node("n3", "4", "8Gi"),
                simple_node("n4", "16", "32Gi"),
            ],
            vec![
                bound("r2", "n2", json!({"cpu": "2", "memory": "2Gi"})),
                bound("r4", "n4", json!({"cpu": "12", "memory": "4Gi"})),
            ],
        );
        let p = pending(json!({"cpu": "1", "memory": "1Gi"}));
        assert_eq!(scores(&plugin(json!({})), &c, &p), vec![62, 81, 51]);
    }

    #[test]
    fn pod_level_requests_are_ignored_by_scoring_but_not_by_filter() {
        let c = cluster(vec![simple_node("n1", "4", "8Gi")], vec![]);
        let p = pod(json!({"metadata": {"name": "pl"}, "spec": {
            "resources": {"requests": {"cpu": "3", "memory": "1Gi"}},
            "containers": [{"name": "c", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]}}));
        let pl = plugin(json!({}));
        // Score uses cpu 1 (container), not 3: (3000*100/4000 + 7*100/8) / 2 = (75 + 87) / 2.
        assert_eq!(scores(&pl, &c, &p), vec![81]);
        let p_big = pod(json!({"metadata": {"name": "pl"}, "spec": {
            "resources": {"requests": {"cpu": "5"}},
            "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}));
        let got = filter_all(&pl, &c, &p_big);
        assert_eq!(
            (got[0].1, got[0].2.clone()),
            (
                Code::UnschedulableAndUnresolvable,
                vec!["Insufficient cpu".into()]
            )
        );
    }

    #[test]
    fn score_helpers() {
        assert_eq!(least_requested_score(5, 4), 0);
        assert_eq!(least_requested_score(1, 4), 75);
        assert_eq!(most_requested_score(5, 4), 100);
        assert_eq!(most_requested_score(1, 3), 33);
        let shape = [(0, 0), (50, 80), (100, 100)];
        for (p, want) in [
            (0, 0),
            (16, 25),
            (8, 12),
            (50, 80),
            (75, 90),
            (100, 100),
            (120, 100),
        ] {
            assert_eq!(broken_linear(&shape, p), want, "{p}");
        }
        assert_eq!(broken_linear(&[(10, 50)], 0), 50);
        assert_eq!(round_half_away(21.75), 22);
        assert_eq!(round_half_away(2.5), 3);
    }

    #[test]
    fn args_defaults() {
        let cases = [
            (
                None,
                json!({"scoringStrategy": {"type": "LeastAllocated",
                "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]}}),
            ),
            (
                Some(json!({"scoringStrategy": {"type": "MostAllocated"}})),
                json!({"scoringStrategy": {"type": "MostAllocated",
                "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]}}),
            ),
            (
                Some(json!({"scoringStrategy": {"type": "MostAllocated",
                "resources": [{"name": "cpu", "weight": 0}]}})),
                json!({"scoringStrategy": {"type": "MostAllocated",
                "resources": [{"name": "cpu", "weight": 1}]}}),
            ),
            (
                Some(json!({"apiVersion": "kubescheduler.config.k8s.io/v1",
                         "kind": "NodeResourcesFitArgs", "ignoredResources": ["a.io/b"]})),
                json!({"ignoredResources": ["a.io/b"], "scoringStrategy": {"type": "LeastAllocated",
                "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]}}),
            ),
        ];
        for (user, want) in cases {
            assert_eq!(args(user.as_ref(), "p").unwrap(), want, "{user:?}");
        }
        assert!(args(Some(&json!({"bogus": 1})), "p").is_err());
    }

    /// Errors come from `new`, with paths relative to the args.
    #[test]
    fn args_validation_errors_from_new() {
        let err = |user: Value| match new(&args(Some(&user), "p").unwrap(), &Default::default()) {
            Err(e) => e,
            Ok(_) => panic!("{user} should fail"),
        };
        let cases = [
            (
                json!({"scoringStrategy": {"type": "Bogus"}}),
                "scoringStrategy.type: Unsupported value: \"Bogus\": supported values: \"LeastAllocated\", \"MostAllocated\", \"RequestedToCapacityRatio\"",
            ),
            (
                json!({"scoringStrategy": {"type": "LeastAllocated", "resources": [{"name": "cpu", "weight": 101}]}}),
                "scoringStrategy.resources[0].weight: Invalid value: 101: resource weight of cpu not in valid range (0, 100]",
            ),
            (
                json!({"ignoredResourceGroups": ["example.com/gpu"]}),
                "ignoredResourceGroups[0]: Invalid value: \"example.com/gpu\": resource group name can't contain '/'",
            ),
            (
                json!({"scoringStrategy": {"type": "RequestedToCapacityRatio",
                    "requestedToCapacityRatio": {"shape": []}}}),
                "scoringStrategy.shape: Required value: at least one point must be specified",
            ),
            (
                json!({"scoringStrategy": {"type": "RequestedToCapacityRatio",
                    "requestedToCapacityRatio": {"shape": [{"utilization": 50, "score": 11},
                                                           {"utilization": 40, "score": 1}]}}}),
                "[scoringStrategy.shape[1].utilization: Invalid value: 40: values must be sorted in increasing order, scoringStrategy.shape[0].score: Invalid value: 11: not in valid range [0, 10]]",
            ),
            (
                json!({"scoringStrategy": {"type": "RequestedToCapacityRatio"}}),
                "scoringStrategy.requestedToCapacityRatio: Required value: must be set for the RequestedToCapacityRatio scoring strategy (kube-scheduler v1.35 crashes without it)",
            ),
            (
                json!({"ignoredResources": ["bad name"]}),
                "ignoredResources[0]: Invalid value: \"bad name\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
            ),
        ];
        for (user, want) in cases {
            assert_eq!(err(user.clone()), want, "{user}");
        }
    }

    #[test]
    fn qualified_names() {
        assert!(qualified_name_errors("nvidia.com/gpu").is_empty());
        assert!(qualified_name_errors("cpu").is_empty());
        assert_eq!(
            qualified_name_errors("/x"),
            vec!["prefix part must be non-empty"]
        );
        assert_eq!(qualified_name_errors("Upper.com/x").len(), 1);
        assert_eq!(qualified_name_errors("a/b/c").len(), 1);
        assert!(qualified_name_errors(&"x".repeat(64))[0].contains("no more than 63 bytes"));
        assert!(label_value_errors("").is_empty());
        assert_eq!(label_value_errors("-x").len(), 1);
    }

    #[test]
    fn aggregate_dedups() {
        assert_eq!(aggregate(&["a".into()]), "a");
        assert_eq!(aggregate(&["a".into(), "a".into()]), "a");
        assert_eq!(aggregate(&["a".into(), "b".into(), "a".into()]), "[a, b]");
    }

    #[test]
    fn filter_without_state_is_an_error() {
        let c = cluster(vec![simple_node("n1", "4", "8Gi")], vec![]);
        let cx = Ctx {
            cluster: &c,
            now: Timestamp::UNIX_EPOCH,
        };
        let pl = plugin(json!({}));
        let s = pl.as_filter().unwrap().filter(
            &cx,
            &CycleState::default(),
            &pending(json!({})),
            &c.nodes()[0],
        );
        assert_eq!(s.code, Code::Error);
        assert_eq!(
            s.message(),
            "error reading \"PreFilterNodeResourcesFit\" from cycleState: not found"
        );
    }

    #[test]
    /// Two bound pods whose cpu requests sum past i64 (a fuzz input): the node's sum
    /// wraps to about i64::MIN, and `allocatable - requested` wraps again, as Go's
    /// int64 arithmetic does, leaving no room: "Insufficient cpu" (Unschedulable,
    /// since 1 cpu is within allocatable). Before, the subtraction panicked.
    fn wrapped_node_sums_filter_like_go() {
        let c = cluster(
            vec![node(
                "n1",
                json!({"cpu": "4", "memory": "8Gi", "pods": "110"}),
            )],
            vec![
                bound("a", "n1", json!({"cpu": "9223372036854775807m"})),
                bound("b", "n1", json!({"cpu": "2m"})),
            ],
        );
        let got = filter_all(&plugin(json!({})), &c, &pending(json!({"cpu": "1"})));
        assert_eq!(
            got,
            vec![(
                "n1".to_string(),
                Code::Unschedulable,
                vec!["Insufficient cpu".to_string()]
            )]
        );
    }
}

#[cfg(test)]
mod overflow_tests {
    use super::*;

    /// A node whose memory is i64::MAX bytes: Go's score arithmetic wraps; here it
    /// panicked in debug builds ("attempt to multiply with overflow").
    #[test]
    fn huge_allocatable_wraps_like_go() {
        let cap = i64::MAX;
        assert_eq!(
            least_requested_score(0, cap),
            cap.wrapping_mul(MAX_NODE_SCORE) / cap
        );
        assert_eq!(
            most_requested_score(cap, cap),
            cap.wrapping_mul(MAX_NODE_SCORE) / cap
        );
    }
}
