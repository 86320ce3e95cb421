//! The pod's ResourceClaims as a person reads them: what each asks for, its
//! allocation, and, per node DynamicResources rejected, why the claim falls short
//! there in numbers. The engine's diagnosis ([`diagnose`]) is data; this phrases it.
//! Computed for a view that shows it (the `explain` table and JSON, the inspector),
//! never by the scheduling cycle.

use serde::Serialize;

use k8s_openapi::api::resource::v1 as r;
use schedscope_engine::engine::plugins::dynamic_resources::diagnose::{
    self, CelFailure, ClaimDiagnosis, NodeFinding, SelectorError, Shortfall, Wanted, Way,
    WayShortfall, expression, ways,
};
use schedscope_engine::engine::trace::{ReservedDevice, Trace};
use schedscope_engine::model::{Cluster, Pod};

/// One of the pod's ResourceClaims, in words (the `claims` key of the JSON has these
/// fields).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ClaimView {
    /// The pod's name for it (`spec.resourceClaims[].name`).
    pub name: String,
    /// The claim, `namespace/name`.
    pub claim: String,
    /// The template it was made from, if any.
    pub template: Option<String>,
    /// Each request in words: `gpu: 2 devices of class gpu.example.com where `...``.
    pub requests: Vec<String>,
    pub constraints: Vec<String>,
    /// `request: driver/pool/device` of an allocated claim.
    pub allocation: Vec<String>,
    /// `request: driver/pool/device` the allocator picked for a claim it allocates,
    /// on the node Reserve ran on (`allocates_on`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub allocates: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allocates_on: Option<String>,
    /// Consumers in `status.reservedFor`, `resource/name`.
    pub reserved_for: Vec<String>,
    /// Rejected nodes with why, in node order (the first ones).
    pub nodes: Vec<ClaimNodeView>,
    /// Rejected nodes past those diagnosed.
    pub nodes_not_diagnosed: usize,
}

/// Why a claim cannot be allocated on one node: one line per short request.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ClaimNodeView {
    pub node: String,
    pub reasons: Vec<String>,
}

/// The pod's claims, for the trace of a cycle that ran on `cluster`: empty for a pod
/// without claims (or whose claims PreFilter could not resolve: it said why).
pub fn of_trace(trace: &Trace, cluster: &Cluster, pod: &Pod) -> Vec<ClaimView> {
    diagnose::diagnose(cluster, pod, trace)
        .into_iter()
        .map(claim_view)
        .collect()
}

fn claim_view(d: ClaimDiagnosis<'_>) -> ClaimView {
    let devices = d.claim.spec.devices.as_ref();
    let status = d.claim.status.as_ref();
    ClaimView {
        requests: devices
            .and_then(|d| d.requests.as_ref())
            .into_iter()
            .flatten()
            .map(request)
            .collect(),
        constraints: devices
            .and_then(|d| d.constraints.as_ref())
            .into_iter()
            .flatten()
            .map(constraint)
            .collect(),
        allocation: status
            .and_then(|s| s.allocation.as_ref())
            .and_then(|a| a.devices.as_ref())
            .and_then(|d| d.results.as_ref())
            .into_iter()
            .flatten()
            .map(|res| {
                device(&ReservedDevice {
                    request: res.request.clone(),
                    driver: res.driver.clone(),
                    pool: res.pool.clone(),
                    device: res.device.clone(),
                })
            })
            .collect(),
        allocates: d.allocates.iter().map(device).collect(),
        allocates_on: d.allocates_on,
        reserved_for: status
            .and_then(|s| s.reserved_for.as_ref())
            .into_iter()
            .flatten()
            .map(|c| format!("{}/{}", c.resource, c.name))
            .collect(),
        nodes: d
            .nodes
            .iter()
            .map(|n| ClaimNodeView {
                node: n.node.clone(),
                reasons: n.findings.iter().map(finding).collect(),
            })
            .collect(),
        nodes_not_diagnosed: d.nodes_not_diagnosed,
        name: d.name,
        claim: d.key,
        template: d.template,
    }
}

/// `request: driver/pool/device`.
fn device(d: &ReservedDevice) -> String {
    format!("{}: {}/{}/{}", d.request, d.driver, d.pool, d.device)
}

/// `n thing` or `n things`.
fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `gpu: 2 devices of class gpu.example.com where `...``, or `gpu: first available
/// of [gpu/big: ...], [gpu/small: ...]`.
fn request(req: &r::DeviceRequest) -> String {
    let ways = ways(req);
    let one = |w: &Way<'_>| {
        let amount = if w.all {
            "all devices".to_string()
        } else {
            count(w.count.max(0) as usize, "device", "devices")
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

/// `matchAttribute a over gpu, nic` (or over all requests).
fn constraint(c: &r::DeviceConstraint) -> String {
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
}

/// One line of why a claim does not fit on a node.
fn finding(f: &NodeFinding) -> String {
    match f {
        NodeFinding::AllocatedUnreachable => {
            "allocated already, to devices this node cannot reach".into()
        }
        NodeFinding::PoolIncomplete { driver, pool } => format!(
            "pool {driver}/{pool} is incomplete (fewer slices than it announces are \
             published), so its devices are not used"
        ),
        NodeFinding::PoolInvalid { driver, pool } => format!(
            "pool {driver}/{pool} is invalid (a device name appears in two of its \
             slices), so no claim is allocated on this node"
        ),
        NodeFinding::FitsAlone => "fits here on its own: the node is rejected for the pod's \
                                   other claims (or for all of them together)"
            .into(),
        NodeFinding::RequestShort(ways) => ways
            .iter()
            .map(|w| format!("request {}: {}", w.way, shortfall(w)))
            .collect::<Vec<_>>()
            .join("; "),
        NodeFinding::NotTogether => "each request finds enough free devices on its own, but \
                                     not all together (a constraint such as matchAttribute, \
                                     or requests competing for the same devices)"
            .into(),
    }
}

/// `` `expr` does not compile: ... `` or `` `expr` fails: ... ``.
fn selector_error(e: &SelectorError) -> String {
    match &e.failure {
        CelFailure::Compile(m) => format!("`{}` does not compile: {m}", e.expression),
        CelFailure::Evaluate(m) => format!("`{}` fails: {m}", e.expression),
    }
}

/// Why one way of a request finds too few devices on the node.
fn shortfall(w: &WayShortfall) -> String {
    let class = &w.class;
    match &w.shortfall {
        Shortfall::UnknownClass => format!("device class {class} does not exist"),
        Shortfall::NoDevices => "no devices on this node (no ResourceSlice offers any here)".into(),
        Shortfall::ClassSelector(e) => format!("class {class} selector {}", selector_error(e)),
        Shortfall::Selector(e) => format!("selector {}", selector_error(e)),
        Shortfall::NoneOfClass { devices } => format!(
            "none of the node's {} is of class {class}",
            count(*devices, "device", "devices")
        ),
        Shortfall::NoneMatch {
            in_class,
            selector,
            passing_before,
        } => {
            let earlier = passing_before.map_or(String::new(), |n| {
                format!(" ({} the selectors before it)", count(n, "passes", "pass"))
            });
            format!(
                "none of the {} of class {class} matches `{selector}`{earlier}",
                count(*in_class, "device", "devices")
            )
        }
        Shortfall::TooFew {
            wanted,
            selectors,
            matching,
            free,
            held,
        } => {
            let wanted = match wanted {
                Wanted::All => "all".to_string(),
                Wanted::Count(n) => n.to_string(),
            };
            let matched = if selectors.is_empty() {
                String::new()
            } else {
                let all: Vec<String> = selectors.iter().map(|s| format!("`{s}`")).collect();
                format!(" matching {}", all.join(" and "))
            };
            let mut why = format!(
                "needs {wanted} of class {class}{matched}: {} on the node, {free} free",
                count(*matching, "matches", "match")
            );
            if !held.is_empty() {
                let shown: Vec<String> = held
                    .iter()
                    .take(3)
                    .map(|h| {
                        let by = h.by.as_deref().unwrap_or("another claim");
                        format!("{}/{} by {by}", h.pool, h.device)
                    })
                    .collect();
                why.push_str(&format!(" ({} in use: {}", held.len(), shown.join(", ")));
                if held.len() > 3 {
                    why.push_str(&format!(" and {} more", held.len() - 3));
                }
                why.push(')');
            }
            why
        }
    }
}
