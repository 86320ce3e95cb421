//! Why a pod's claims do not fit on a node, as data a person can act on once the
//! report phrases it (`schedscope-report`'s `claims`): the plugin itself only says
//! "cannot allocate all claims" (upstream's message, kept byte for byte in the
//! FitError). For each rejected node and each request this counts the node's devices,
//! those of the request's class, those its selectors accept and those still free, and
//! names the claims holding the rest. It reads the same pools and selectors the
//! allocator does; it does not search, so when every request has enough free devices
//! on its own it says the requests do not fit together (a constraint, or devices two
//! requests both need). Not part of upstream's plugin: the cycle never runs it, an
//! output that shows a pod's claims does ([`diagnose`]).

use std::collections::HashMap;
use std::sync::Arc;

use k8s_openapi::api::resource::v1 as r;

use super::allocator::{
    Allocator, Candidate, ClaimKey, DeviceKey, Inventory, PoolStatus, compiled_selector,
    gather_pools,
};
use super::cel::{self, DeviceView};
use super::{is_allocated, pod_claims};
use crate::engine::status::Code;
use crate::engine::trace::{ReservedDevice, Trace};
use crate::model::dra::ResourceClaim;
use crate::model::labels::{Labels, NodeSelector};
use crate::model::{Cluster, NodeInfo, Pod};

/// Rejected nodes diagnosed per claim: the first ones in node order (a table shows
/// fewer; the rest are counted).
pub const NODES_DIAGNOSED: usize = 50;

/// One way to satisfy a request: the request itself or one `firstAvailable` entry.
pub struct Way<'a> {
    /// The request's name, or `request/sub-request`.
    pub name: String,
    pub class: &'a str,
    pub selectors: &'a [r::DeviceSelector],
    /// `allocationMode: All`.
    pub all: bool,
    pub count: i64,
}

/// The ways to satisfy `req`, in the order the allocator tries them.
pub fn ways(req: &r::DeviceRequest) -> Vec<Way<'_>> {
    if let Some(e) = &req.exactly {
        return vec![Way {
            name: req.name.clone(),
            class: &e.device_class_name,
            selectors: e.selectors.as_deref().unwrap_or_default(),
            all: e.allocation_mode.as_deref() == Some("All"),
            count: e.count.unwrap_or(1),
        }];
    }
    req.first_available
        .iter()
        .flatten()
        .map(|s| Way {
            name: format!("{}/{}", req.name, s.name),
            class: &s.device_class_name,
            selectors: s.selectors.as_deref().unwrap_or_default(),
            all: s.allocation_mode.as_deref() == Some("All"),
            count: s.count.unwrap_or(1),
        })
        .collect()
}

/// A selector's CEL expression (empty when it has none).
pub fn expression(sel: &r::DeviceSelector) -> &str {
    sel.cel.as_ref().map_or("", |c| c.expression.as_str())
}

/// How a CEL selector failed: CEL's own error text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CelFailure {
    Compile(String),
    Evaluate(String),
}

/// A selector that could not be applied to a device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SelectorError {
    pub expression: String,
    pub failure: CelFailure,
}

/// How many devices a way asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wanted {
    All,
    Count(i64),
}

/// A device a way accepts that another claim holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeldDevice {
    pub pool: String,
    pub device: String,
    /// The claim holding it, `namespace/name`, when known.
    pub by: Option<String>,
}

/// Why one way of a request finds too few devices on a node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Shortfall {
    /// Its device class does not exist.
    UnknownClass,
    /// No ResourceSlice offers a device on the node.
    NoDevices,
    /// A selector of the device class could not be applied.
    ClassSelector(SelectorError),
    /// A selector of the request could not be applied.
    Selector(SelectorError),
    /// None of the node's `devices` is of the class.
    NoneOfClass { devices: usize },
    /// None of the `in_class` devices passes `selector`, the first selector that
    /// leaves none; `passing_before` pass the selectors before it (when it is not the
    /// first).
    NoneMatch {
        in_class: usize,
        selector: String,
        passing_before: Option<usize>,
    },
    /// `matching` devices pass every selector but only `free` are free: `held` (all
    /// of them, in node order) are allocated to other claims.
    TooFew {
        wanted: Wanted,
        /// The way's selectors' expressions.
        selectors: Vec<String>,
        matching: usize,
        free: usize,
        held: Vec<HeldDevice>,
    },
}

/// One way of a request, and why it falls short.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WayShortfall {
    /// [`Way::name`].
    pub way: String,
    pub class: String,
    pub shortfall: Shortfall,
}

/// One thing that keeps a claim off a node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NodeFinding {
    /// Allocated already, to devices the node cannot reach (its node selector).
    AllocatedUnreachable,
    /// A pool with fewer slices published than it announces: its devices are not used.
    PoolIncomplete { driver: String, pool: String },
    /// A pool naming a device in two slices: nothing is allocated on the node.
    PoolInvalid { driver: String, pool: String },
    /// The claim fits on its own: the pod's other claims (or all together) do not.
    FitsAlone,
    /// A request every way of which falls short.
    RequestShort(Vec<WayShortfall>),
    /// Each request finds enough free devices on its own, but not all together (a
    /// constraint, or requests competing for the same devices).
    NotTogether,
}

/// Why a claim cannot be allocated on one node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeDiagnosis {
    pub node: String,
    pub findings: Vec<NodeFinding>,
}

/// One of the pod's claims, and why DynamicResources rejected the nodes it did.
#[derive(Clone, Debug)]
pub struct ClaimDiagnosis<'c> {
    /// The pod's name for it (`spec.resourceClaims[].name`).
    pub name: String,
    pub claim: &'c ResourceClaim,
    /// The claim, `namespace/name`.
    pub key: String,
    /// The template it was made from, if any.
    pub template: Option<String>,
    /// The devices Reserve allocated to it (a claim it had to allocate) ...
    pub allocates: Vec<ReservedDevice>,
    /// ... on this node.
    pub allocates_on: Option<String>,
    /// Rejected nodes with why, in node order (the first [`NODES_DIAGNOSED`]).
    pub nodes: Vec<NodeDiagnosis>,
    /// Rejected nodes past those diagnosed.
    pub nodes_not_diagnosed: usize,
}

/// Whether every selector accepts the device; `Err` with the failing expression
/// and CEL's error.
fn accepts(selectors: &[r::DeviceSelector], view: &DeviceView<'_>) -> Result<bool, SelectorError> {
    for sel in selectors {
        let expr = expression(sel);
        let error = |failure| SelectorError {
            expression: expr.to_string(),
            failure,
        };
        let compiled = compiled_selector(expr);
        let compiled = compiled
            .as_ref()
            .as_ref()
            .map_err(|e| error(CelFailure::Compile(e.to_string())))?;
        if !cel::evaluate(compiled, view).map_err(|e| error(CelFailure::Evaluate(e)))? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The node's devices of a way's class that its selectors accept, counted.
#[derive(Default)]
struct Tally<'a> {
    in_class: usize,
    matching: usize,
    /// Devices of the class that pass the way's selectors 0..=i: the first selector
    /// that leaves none is the one to name.
    passing: Vec<usize>,
    free: usize,
    held: Vec<&'a Candidate<'a>>,
}

fn tally<'a>(
    class_selectors: &[r::DeviceSelector],
    devices: &'a [Candidate<'a>],
    way: &Way<'_>,
) -> Result<Tally<'a>, Shortfall> {
    let mut t = Tally {
        passing: vec![0; way.selectors.len()],
        ..Default::default()
    };
    for d in devices {
        let view = DeviceView {
            driver: d.driver,
            attributes: d.attributes,
            capacity: d.capacity,
        };
        match accepts(class_selectors, &view) {
            Err(e) => return Err(Shortfall::ClassSelector(e)),
            Ok(false) => continue,
            Ok(true) => t.in_class += 1,
        }
        let mut all = true;
        for (i, sel) in way.selectors.iter().enumerate() {
            match accepts(std::slice::from_ref(sel), &view) {
                Err(e) => return Err(Shortfall::Selector(e)),
                Ok(false) => {
                    all = false;
                    break;
                }
                Ok(true) => t.passing[i] += 1,
            }
        }
        if !all {
            continue;
        }
        t.matching += 1;
        if d.in_use {
            t.held.push(d);
        } else {
            t.free += 1;
        }
    }
    Ok(t)
}

/// Why one way of a request finds too few devices on the node, or `None` when it
/// finds enough on its own.
fn way_shortfall(
    cluster: &Cluster,
    owners: &HashMap<DeviceKey<'_>, &str>,
    devices: &[Candidate<'_>],
    way: &Way<'_>,
) -> Option<Shortfall> {
    let Some(class) = cluster.device_classes.get(way.class) else {
        return Some(Shortfall::UnknownClass);
    };
    if devices.is_empty() {
        return Some(Shortfall::NoDevices);
    }
    let class_selectors = class.spec.selectors.as_deref().unwrap_or_default();
    let t = match tally(class_selectors, devices, way) {
        Ok(t) => t,
        Err(s) => return Some(s),
    };
    if t.in_class == 0 {
        return Some(Shortfall::NoneOfClass {
            devices: devices.len(),
        });
    }
    if t.matching == 0 {
        let culprit = t.passing.iter().position(|&n| n == 0).unwrap_or(0);
        return Some(Shortfall::NoneMatch {
            in_class: t.in_class,
            selector: expression(&way.selectors[culprit]).to_string(),
            passing_before: culprit.checked_sub(1).map(|i| t.passing[i]),
        });
    }
    let enough = if way.all {
        t.held.is_empty()
    } else {
        t.free as i64 >= way.count
    };
    if enough {
        return None;
    }
    Some(Shortfall::TooFew {
        wanted: if way.all {
            Wanted::All
        } else {
            Wanted::Count(way.count)
        },
        selectors: way
            .selectors
            .iter()
            .map(|s| expression(s).to_string())
            .collect(),
        matching: t.matching,
        free: t.free,
        held: t
            .held
            .iter()
            .map(|d| HeldDevice {
                pool: d.pool.to_string(),
                device: d.name.to_string(),
                by: owners
                    .get(&(d.driver, d.pool, d.name))
                    .map(|c| c.to_string()),
            })
            .collect(),
    })
}

/// Why `claim` cannot be allocated on `node`: one finding per short request (or one
/// saying the requests only fail together), after the pools the allocator passes
/// over. Empty when the claim is no reason to reject the node.
pub fn node_findings(
    cluster: &Cluster,
    inventory: &Inventory,
    owners: &HashMap<DeviceKey<'_>, &str>,
    node: &str,
    labels: &Labels,
    claim: &ResourceClaim,
) -> Vec<NodeFinding> {
    if let Some(sel) = claim
        .status
        .as_ref()
        .and_then(|s| s.allocation.as_ref())
        .and_then(|a| a.node_selector.as_ref())
    {
        if !NodeSelector::parse(sel).matches(node, labels) {
            return vec![NodeFinding::AllocatedUnreachable];
        }
        return Vec::new();
    }
    if is_allocated(claim) {
        return Vec::new();
    }
    let pools = gather_pools(inventory, node, labels, false);
    // Pools the allocator passes over here, and why.
    let mut out: Vec<NodeFinding> = pools
        .bad
        .iter()
        .map(|(driver, pool, status)| {
            let (driver, pool) = (driver.clone(), pool.clone());
            match status {
                PoolStatus::Incomplete => NodeFinding::PoolIncomplete { driver, pool },
                _ => NodeFinding::PoolInvalid { driver, pool },
            }
        })
        .collect();
    // The allocator itself says whether the claim fits here on its own; when it does
    // not (or errs), the counts below say why in the request's terms.
    if let Ok(Some(_)) = Allocator::new(cluster, inventory).allocate(node, labels, &[claim]) {
        out.push(NodeFinding::FitsAlone);
        return out;
    }
    let pool_findings = out.len();
    if pool_findings > 0 && pools.devices.is_empty() {
        return out; // the pools above are all the node has
    }
    for req in claim
        .spec
        .devices
        .as_ref()
        .and_then(|d| d.requests.as_ref())
        .into_iter()
        .flatten()
    {
        let mut shortfalls = Vec::new();
        for w in ways(req) {
            // A request is short only when every alternative is.
            let Some(shortfall) = way_shortfall(cluster, owners, &pools.devices, &w) else {
                shortfalls.clear();
                break;
            };
            shortfalls.push(WayShortfall {
                way: w.name,
                class: w.class.to_string(),
                shortfall,
            });
        }
        if !shortfalls.is_empty() {
            out.push(NodeFinding::RequestShort(shortfalls));
        }
    }
    if out.len() == pool_findings {
        out.push(NodeFinding::NotTogether);
    }
    out
}

/// Nodes DynamicResources rejected, in model order.
fn rejected_nodes(trace: &Trace) -> Vec<&str> {
    match &trace.filter_all {
        Some(all) => all
            .iter()
            .filter(|n| {
                n.results.iter().any(|r| {
                    r.plugin == super::NAME && !matches!(r.code, Code::Success | Code::Skip)
                })
            })
            .map(|n| n.node.as_str())
            .collect(),
        None => trace
            .filter
            .iter()
            .filter(|v| v.plugin.as_deref() == Some(super::NAME))
            .map(|v| v.node.as_str())
            .collect(),
    }
}

/// The inventory the cycle's PreFilter held: none when DynamicResources' PreFilter
/// rejected the pod (it stops before building one), or when no claim needed
/// allocating (then nothing reads it).
fn pre_filter_inventory(cluster: &Cluster, trace: &Trace) -> Arc<Inventory> {
    let rejected = trace
        .pre_filter
        .plugins
        .iter()
        .any(|r| r.plugin == super::NAME && !matches!(r.code, Code::Success | Code::Skip));
    if rejected {
        Arc::new(Inventory::default())
    } else {
        cluster.dra_index(Inventory::new)
    }
}

/// The pod's entries that name a claim (directly or, for a template, through its
/// status), in order: those `pod_claims` resolves.
fn named_entries(pod: &Pod) -> impl Iterator<Item = &k8s_openapi::api::core::v1::PodResourceClaim> {
    pod.resource_claims.iter().filter(|pc| {
        pc.resource_claim_name.is_some()
            || pod
                .resource_claim_statuses
                .iter()
                .any(|s| s.name == pc.name && s.resource_claim_name.is_some())
    })
}

/// The pod's claims as the trace shows them: for the nodes DynamicResources rejected
/// in `trace` (the cycle that ran on `cluster`), why; and what Reserve allocated.
pub fn diagnose<'c>(cluster: &'c Cluster, pod: &Pod, trace: &Trace) -> Vec<ClaimDiagnosis<'c>> {
    if pod.resource_claims.is_empty() {
        return Vec::new();
    }
    let Ok(claims) = pod_claims(cluster, pod) else {
        return Vec::new(); // PreFilter said why, in upstream's words
    };
    let rejected = rejected_nodes(trace);
    let inventory = pre_filter_inventory(cluster, trace);
    let diagnosed: Vec<&NodeInfo> = rejected
        .iter()
        .take(NODES_DIAGNOSED)
        .filter_map(|n| cluster.node(n))
        .collect();
    let in_use: Vec<DeviceKey<'_>> = diagnosed
        .iter()
        .flat_map(|info| {
            gather_pools(&inventory, info.name(), &info.node.labels, false)
                .devices
                .into_iter()
                .filter(|d| d.in_use)
                .map(|d| (d.driver, d.pool, d.name))
        })
        .collect();
    let owners = inventory.holders(cluster, in_use);
    let reserved = trace.reserved_devices.as_ref();
    named_entries(pod)
        .zip(claims.iter().copied())
        .enumerate()
        .map(|(i, (pc, claim))| {
            let (allocates, allocates_on) = match reserved
                .and_then(|r| Some((&r.node, &r.claims.iter().find(|(c, _)| *c == i)?.1)))
            {
                Some((node, devices)) => (devices.clone(), Some(node.clone())),
                None => (Vec::new(), None),
            };
            let nodes = diagnosed
                .iter()
                .map(|info| NodeDiagnosis {
                    node: info.name().to_string(),
                    findings: node_findings(
                        cluster,
                        &inventory,
                        &owners,
                        info.name(),
                        &info.node.labels,
                        claim,
                    ),
                })
                .filter(|n| !n.findings.is_empty())
                .collect();
            ClaimDiagnosis {
                name: pc.name.clone(),
                claim,
                key: ClaimKey(claim).to_string(),
                template: pc.resource_claim_template_name.clone(),
                allocates,
                allocates_on,
                nodes,
                nodes_not_diagnosed: rejected.len().saturating_sub(NODES_DIAGNOSED),
            }
        })
        .collect()
}

/// A device a node can use, for the node's detail view.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeDevice {
    pub driver: String,
    pub pool: String,
    pub name: String,
    /// `name=value`, in attribute name order.
    pub attributes: Vec<String>,
    /// `name=quantity`, in capacity name order.
    pub capacity: Vec<String>,
    /// The claim it is allocated to, `namespace/name`.
    pub allocated_to: Option<String>,
}

/// The devices of the pools the allocator would gather for `node`, in pool order.
pub fn node_devices(cluster: &Cluster, node: &str, labels: &Labels) -> Vec<NodeDevice> {
    if cluster.resource_slices().is_empty() {
        return Vec::new();
    }
    let inventory = cluster.dra_index(Inventory::new);
    let pools = gather_pools(&inventory, node, labels, false);
    let owners = inventory.holders(
        cluster,
        pools
            .devices
            .iter()
            .filter(|d| d.in_use)
            .map(|d| (d.driver, d.pool, d.name)),
    );
    pools
        .devices
        .iter()
        .map(|d| {
            let attributes = d
                .attributes
                .into_iter()
                .flatten()
                .map(|(k, a)| {
                    let v = a
                        .string
                        .clone()
                        .or_else(|| a.version.clone())
                        .or_else(|| a.int.map(|i| i.to_string()))
                        .or_else(|| a.bool.map(|b| b.to_string()))
                        .unwrap_or_default();
                    format!("{k}={v}")
                })
                .collect();
            let capacity = d
                .capacity
                .into_iter()
                .flatten()
                .map(|(k, c)| format!("{k}={}", c.value.0))
                .collect();
            let id = (d.driver, d.pool, d.name);
            NodeDevice {
                driver: d.driver.to_string(),
                pool: d.pool.to_string(),
                name: d.name.to_string(),
                attributes,
                capacity,
                allocated_to: owners.get(&id).map(|c| c.to_string()),
            }
        })
        .collect()
}
