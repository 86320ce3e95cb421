//! Why a pod's claims do not fit on a node, in numbers a person can act on: the
//! plugin itself only says "cannot allocate all claims" (upstream's message, kept
//! byte for byte in the FitError). For each rejected node and each request this
//! counts the node's devices, those of the request's class, those its selectors
//! accept and those still free, and names the claims holding the rest. It reads
//! the same pools and selectors the allocator does; it does not search, so when
//! every request has enough free devices on its own it says the requests do not
//! fit together (a constraint, or devices two requests both need).

use std::collections::HashMap;

use k8s_openapi::api::resource::v1 as r;

use super::allocator::{
    Allocator, ClaimKey, DeviceKey, Inventory, PoolStatus, compiled_selector, gather_pools,
};
use super::cel::{self, DeviceView};
use super::{is_allocated, pod_claims};
use crate::engine::framework::CycleState;
use crate::engine::status::Code;
use crate::engine::trace::{ClaimNodeTrace, ClaimTrace, Trace};
use crate::model::dra::ResourceClaim;
use crate::model::labels::{Labels, NodeSelector};
use crate::model::{Cluster, Pod};

/// Rejected nodes diagnosed per claim: the first ones in node order (a table shows
/// fewer; the rest are counted).
pub const NODES_DIAGNOSED: usize = 50;

/// One way to satisfy a request: the request itself or one `firstAvailable` entry.
struct Way<'a> {
    name: String,
    class: &'a str,
    selectors: &'a [r::DeviceSelector],
    all: bool,
    count: i64,
}

fn ways(req: &r::DeviceRequest) -> Vec<Way<'_>> {
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

fn expression(sel: &r::DeviceSelector) -> &str {
    sel.cel.as_ref().map_or("", |c| c.expression.as_str())
}

/// Whether every selector accepts the device; `Err` with the failing expression
/// and CEL's error.
fn accepts(selectors: &[r::DeviceSelector], view: &DeviceView<'_>) -> Result<bool, String> {
    for sel in selectors {
        let expr = expression(sel);
        let compiled = compiled_selector(expr);
        let compiled = compiled
            .as_ref()
            .as_ref()
            .map_err(|e| format!("`{expr}` does not compile: {e}"))?;
        if !cel::evaluate(compiled, view).map_err(|e| format!("`{expr}` fails: {e}"))? {
            return Ok(false);
        }
    }
    Ok(true)
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Why one way of a request finds too few devices on the node, or `None` when it
/// finds enough on its own.
fn way_shortfall(
    cluster: &Cluster,
    owners: &HashMap<DeviceKey<'_>, &str>,
    devices: &[super::allocator::Candidate<'_>],
    way: &Way<'_>,
) -> Option<String> {
    let Some(class) = cluster.device_classes.get(way.class) else {
        return Some(format!("device class {} does not exist", way.class));
    };
    if devices.is_empty() {
        return Some("no devices on this node (no ResourceSlice offers any here)".into());
    }
    let class_selectors = class.spec.selectors.as_deref().unwrap_or_default();
    let (mut in_class, mut matching) = (0usize, 0usize);
    // Devices of the class that pass the request's selectors 0..=i: the first
    // selector that leaves none is the one to name.
    let mut passing = vec![0usize; way.selectors.len()];
    let mut free = Vec::new();
    let mut held = Vec::new();
    for d in devices {
        let view = DeviceView {
            driver: d.driver,
            attributes: d.attributes,
            capacity: d.capacity,
        };
        match accepts(class_selectors, &view) {
            Err(e) => return Some(format!("class {} selector {e}", way.class)),
            Ok(false) => continue,
            Ok(true) => in_class += 1,
        }
        let mut all = true;
        for (i, sel) in way.selectors.iter().enumerate() {
            match accepts(std::slice::from_ref(sel), &view) {
                Err(e) => return Some(format!("selector {e}")),
                Ok(false) => {
                    all = false;
                    break;
                }
                Ok(true) => passing[i] += 1,
            }
        }
        if !all {
            continue;
        }
        matching += 1;
        if d.in_use {
            let by = owners
                .get(&(d.driver, d.pool, d.name))
                .copied()
                .unwrap_or("another claim");
            held.push(format!("{}/{} by {by}", d.pool, d.name));
        } else {
            free.push(d.name);
        }
    }
    let of_class = format!("of class {}", way.class);
    if in_class == 0 {
        return Some(format!(
            "none of the node's {} is {of_class}",
            plural(devices.len(), "device", "devices")
        ));
    }
    let selector = way
        .selectors
        .iter()
        .map(|s| format!("`{}`", expression(s)))
        .collect::<Vec<_>>()
        .join(" and ");
    if matching == 0 {
        let culprit = passing.iter().position(|&n| n == 0).unwrap_or(0);
        let earlier = if culprit == 0 {
            String::new()
        } else {
            format!(
                " ({} the selectors before it)",
                plural(passing[culprit - 1], "passes", "pass")
            )
        };
        return Some(format!(
            "none of the {} {of_class} matches `{}`{earlier}",
            plural(in_class, "device", "devices"),
            expression(&way.selectors[culprit])
        ));
    }
    let wanted = if way.all {
        "all".to_string()
    } else {
        way.count.to_string()
    };
    let enough = if way.all {
        held.is_empty()
    } else {
        free.len() as i64 >= way.count
    };
    if enough {
        return None;
    }
    let matched = if selector.is_empty() {
        String::new()
    } else {
        format!(" matching {selector}")
    };
    let mut why = format!(
        "needs {wanted} {of_class}{matched}: {} on the node, {} free",
        plural(matching, "matches", "match"),
        free.len()
    );
    if !held.is_empty() {
        let shown: Vec<&str> = held.iter().take(3).map(String::as_str).collect();
        why.push_str(&format!(" ({} in use: {}", held.len(), shown.join(", ")));
        if held.len() > 3 {
            why.push_str(&format!(" and {} more", held.len() - 3));
        }
        why.push(')');
    }
    Some(why)
}

/// Why `claim` cannot be allocated on `node`, one line per request that falls
/// short (or one line saying the requests only fail together).
pub fn node_reasons(
    cluster: &Cluster,
    inventory: &Inventory,
    owners: &HashMap<DeviceKey<'_>, &str>,
    node: &str,
    labels: &Labels,
    claim: &ResourceClaim,
) -> Vec<String> {
    if let Some(sel) = claim
        .status
        .as_ref()
        .and_then(|s| s.allocation.as_ref())
        .and_then(|a| a.node_selector.as_ref())
    {
        if !NodeSelector::parse(sel).matches(node, labels) {
            return vec!["allocated already, to devices this node cannot reach".into()];
        }
        return Vec::new();
    }
    if is_allocated(claim) {
        return Vec::new();
    }
    let pools = gather_pools(inventory, node, labels);
    // Pools the allocator passes over here, and why.
    let mut out: Vec<String> = pools
        .bad
        .iter()
        .map(|(driver, pool, status)| match status {
            PoolStatus::Incomplete => format!(
                "pool {driver}/{pool} is incomplete (fewer slices than it announces are \
                 published), so its devices are not used"
            ),
            _ => format!(
                "pool {driver}/{pool} is invalid (a device name appears in two of its \
                 slices), so no claim is allocated on this node"
            ),
        })
        .collect();
    // The allocator itself says whether the claim fits here on its own; when it does
    // not (or errs), the counts below say why in the request's terms.
    if let Ok(Some(_)) = Allocator::new(cluster, inventory).allocate(node, labels, &[claim]) {
        out.push(
            "fits here on its own: the node is rejected for the pod's other claims \
             (or for all of them together)"
                .into(),
        );
        return out;
    }
    let pool_lines = out.len();
    if pool_lines > 0 && pools.devices.is_empty() {
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
        let ways = ways(req);
        let shortfalls: Vec<(String, Option<String>)> = ways
            .iter()
            .map(|w| {
                let s = way_shortfall(cluster, owners, &pools.devices, w);
                (w.name.clone(), s)
            })
            .collect();
        // A request is short only when every alternative is.
        if shortfalls.iter().all(|(_, s)| s.is_some()) {
            let text = match shortfalls.as_slice() {
                [(name, Some(s))] => format!("request {name}: {s}"),
                _ => shortfalls
                    .iter()
                    .map(|(name, s)| format!("request {name}: {}", s.as_deref().unwrap_or("")))
                    .collect::<Vec<_>>()
                    .join("; "),
            };
            out.push(text);
        }
    }
    if out.len() == pool_lines {
        out.push(
            "each request finds enough free devices on its own, but not all together \
             (a constraint such as matchAttribute, or requests competing for the same \
             devices)"
                .into(),
        );
    }
    out
}

fn describe_request(req: &r::DeviceRequest) -> String {
    let ways = ways(req);
    let one = |w: &Way<'_>| {
        let amount = if w.all {
            "all devices".to_string()
        } else {
            plural(w.count.max(0) as usize, "device", "devices")
        };
        let sel = if w.selectors.is_empty() {
            String::new()
        } else {
            let all: Vec<String> = w
                .selectors
                .iter()
                .map(|s| format!("`{}`", expression(s)))
                .collect();
            format!(" where {}", all.join(" and "))
        };
        format!("{amount} of class {}{sel}", w.class)
    };
    match ways.as_slice() {
        [w] if req.exactly.is_some() => format!("{}: {}", req.name, one(w)),
        _ => format!(
            "{}: first available of {}",
            req.name,
            ways.iter()
                .map(|w| format!("[{}: {}]", w.name, one(w)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The pod's claims as the trace shows them: requests, constraints, allocation and,
/// for the nodes DynamicResources rejected, why.
pub fn claims_report(
    cluster: &Cluster,
    pod: &Pod,
    trace: &Trace,
    state: &CycleState,
) -> Vec<ClaimTrace> {
    if pod.resource_claims.is_empty() {
        return Vec::new();
    }
    let Ok(claims) = pod_claims(cluster, pod) else {
        return Vec::new(); // PreFilter said why, in upstream's words
    };
    // Nodes DynamicResources rejected, in model order.
    let rejected: Vec<&str> = match &trace.filter_all {
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
    };
    // PreFilter's inventory when it ran (the same cluster), else a fresh one.
    let inventory = state
        .read::<super::StateData>(super::STATE_KEY)
        .map(|s| s.inventory.clone())
        .unwrap_or_else(|| cluster.dra_index(Inventory::new));
    let diagnosed: Vec<&crate::model::NodeInfo> = rejected
        .iter()
        .take(NODES_DIAGNOSED)
        .filter_map(|n| cluster.node(n))
        .collect();
    let in_use: Vec<DeviceKey<'_>> = diagnosed
        .iter()
        .flat_map(|info| {
            gather_pools(&inventory, info.name(), &info.node.labels)
                .devices
                .into_iter()
                .filter(|d| d.in_use)
                .map(|d| (d.driver, d.pool, d.name))
        })
        .collect();
    let owners = inventory.holders(cluster, in_use);
    // What Reserve allocated on the chosen node (the binding dry run ran), by the
    // claim's position among the pod's claims.
    let reserved = state
        .read::<super::StateData>(super::STATE_KEY)
        .and_then(|s| {
            let (node, allocations) = s.allocations.lock().ok()?.clone()?;
            let by_claim: HashMap<usize, Vec<String>> = s
                .to_allocate
                .iter()
                .zip(allocations)
                .map(|(&i, a)| {
                    let devices = a
                        .devices
                        .iter()
                        .map(|d| format!("{}: {}/{}/{}", d.request, d.driver, d.pool, d.device))
                        .collect();
                    (i, devices)
                })
                .collect();
            Some((node, by_claim))
        });
    let mut out = Vec::new();
    for (i, (pc, claim)) in pod
        .resource_claims
        .iter()
        .filter(|pc| {
            pc.resource_claim_name.is_some()
                || pod
                    .resource_claim_statuses
                    .iter()
                    .any(|s| s.name == pc.name && s.resource_claim_name.is_some())
        })
        .zip(&claims)
        .enumerate()
    {
        let devices = claim.spec.devices.as_ref();
        let requests = devices
            .and_then(|d| d.requests.as_ref())
            .into_iter()
            .flatten()
            .map(describe_request)
            .collect();
        let constraints = devices
            .and_then(|d| d.constraints.as_ref())
            .into_iter()
            .flatten()
            .map(|c| {
                let over = c
                    .requests
                    .as_ref()
                    .filter(|r| !r.is_empty())
                    .map_or("all requests".to_string(), |r| r.join(", "));
                match (&c.match_attribute, &c.distinct_attribute) {
                    (Some(a), _) => format!("matchAttribute {a} over {over}"),
                    (_, Some(a)) => format!("distinctAttribute {a} over {over}"),
                    _ => format!("a constraint over {over}"),
                }
            })
            .collect();
        let status = claim.status.as_ref();
        let allocation = status
            .and_then(|s| s.allocation.as_ref())
            .and_then(|a| a.devices.as_ref())
            .and_then(|d| d.results.as_ref())
            .into_iter()
            .flatten()
            .map(|res| {
                format!(
                    "{}: {}/{}/{}",
                    res.request, res.driver, res.pool, res.device
                )
            })
            .collect();
        let reserved_for = status
            .and_then(|s| s.reserved_for.as_ref())
            .into_iter()
            .flatten()
            .map(|c| format!("{}/{}", c.resource, c.name))
            .collect();
        let (allocates, allocates_on) = match reserved
            .as_ref()
            .and_then(|(node, by)| Some((node, by.get(&i)?)))
        {
            Some((node, devices)) => (devices.clone(), Some(node.clone())),
            None => (Vec::new(), None),
        };
        let mut nodes = Vec::new();
        for info in &diagnosed {
            let node = info.name();
            let reasons =
                node_reasons(cluster, &inventory, &owners, node, &info.node.labels, claim);
            if !reasons.is_empty() {
                nodes.push(ClaimNodeTrace {
                    node: node.to_string(),
                    reasons,
                });
            }
        }
        out.push(ClaimTrace {
            name: pc.name.clone(),
            claim: ClaimKey(claim).to_string(),
            template: pc.resource_claim_template_name.clone(),
            requests,
            constraints,
            allocation,
            allocates,
            allocates_on,
            reserved_for,
            nodes,
            nodes_not_diagnosed: rejected.len().saturating_sub(NODES_DIAGNOSED),
        });
    }
    out
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
    let pools = gather_pools(&inventory, node, labels);
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
