//! The structured allocator ("incubating" variant, gates AdminAccess and
//! PrioritizedList): a depth-first search over claims, requests and devices where the
//! first complete solution wins. Pool order is (driver, pool name), slices by name,
//! devices in slice order: upstream's pool order is Go map order, so only *which*
//! devices are picked can differ, never whether a node fits.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use k8s_openapi::api::core::v1 as core;
use k8s_openapi::api::resource::v1::{
    DeviceAttribute, DeviceClass, DeviceSelector, ResourceClaim, ResourceSlice,
};

use super::cel::{self, DeviceView, Selector};
use crate::model::Cluster;
use crate::model::dra::MODE_ALL;
use crate::model::labels::{Labels, NodeSelector};

/// `resource.AllocationResultsMaxSize`.
pub const MAX_DEVICES_PER_CLAIM: usize = 32;

/// driver/pool/device.
pub type DeviceId = (String, String, String);

/// How an allocation attempt failed, other than "no solution".
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AllocError {
    /// Aborts the scheduling cycle (Filter returns Error).
    Fatal(String),
    /// Wraps `ErrFailedAllocationOnNode`: the node is rejected (UU).
    OnNode(String),
}

/// One allocated device of a claim.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceResult {
    /// The request, or `<request>/<sub-request>`.
    pub request: String,
    pub driver: String,
    pub pool: String,
    pub device: String,
    pub admin_access: bool,
}

/// The allocation of one claim on one node.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClaimAllocation {
    pub devices: Vec<DeviceResult>,
    /// None = available on every node (only `allNodes` slices were used).
    pub node_selector: Option<core::NodeSelector>,
}

/// Devices allocated to any claim in the cluster (admin-access results excluded).
pub fn allocated_devices(cluster: &Cluster) -> BTreeSet<DeviceId> {
    let mut out = BTreeSet::new();
    for claim in cluster.resource_claims.values() {
        let results = claim
            .status
            .as_ref()
            .and_then(|s| s.allocation.as_ref())
            .and_then(|a| a.devices.as_ref())
            .and_then(|d| d.results.as_ref());
        for r in results.into_iter().flatten() {
            if r.admin_access != Some(true) {
                out.insert((r.driver.clone(), r.pool.clone(), r.device.clone()));
            }
        }
    }
    out
}

/// A device visible from the node, with where it came from.
struct Candidate<'a> {
    driver: &'a str,
    pool: &'a str,
    slice: &'a ResourceSlice,
    name: &'a str,
    attributes: Option<&'a BTreeMap<String, DeviceAttribute>>,
    capacity: Option<&'a BTreeMap<String, k8s_openapi::api::resource::v1::DeviceCapacity>>,
}

#[derive(Default)]
struct PoolState<'a> {
    generation: i64,
    slices: Vec<&'a ResourceSlice>,
}

enum PoolStatus {
    Usable,
    Incomplete,
    Invalid,
}

struct Pools<'a> {
    devices: Vec<Candidate<'a>>,
    /// (driver, pool) of unusable pools and why.
    bad: Vec<(String, String, PoolStatus)>,
}

fn slice_matches(slice: &ResourceSlice, node: &str, labels: &Labels) -> bool {
    let s = &slice.spec;
    if let Some(n) = s.node_name.as_deref() {
        return n == node;
    }
    if s.all_nodes == Some(true) {
        return true;
    }
    if let Some(sel) = &s.node_selector {
        return NodeSelector::parse(sel).matches(node, labels);
    }
    false
}

/// `GatherPools`: the newest generation of each pool with a slice for this node.
fn gather_pools<'a>(cluster: &'a Cluster, node: &str, labels: &Labels) -> Pools<'a> {
    let mut pools: BTreeMap<(&str, &str), PoolState<'a>> = BTreeMap::new();
    for slice in cluster.resource_slices.values() {
        if !slice_matches(slice, node, labels) {
            continue;
        }
        let key = (slice.spec.driver.as_str(), slice.spec.pool.name.as_str());
        let p = pools.entry(key).or_default();
        let g = slice.spec.pool.generation;
        if p.slices.is_empty() || g > p.generation {
            p.generation = g;
            p.slices = vec![slice];
        } else if g == p.generation {
            p.slices.push(slice);
        }
    }
    let mut out = Pools {
        devices: Vec::new(),
        bad: Vec::new(),
    };
    for ((driver, pool), p) in pools {
        let want = p.slices[0].spec.pool.resource_slice_count;
        let mut status = PoolStatus::Usable;
        if (p.slices.len() as i64) < want {
            let all: Vec<&ResourceSlice> = cluster
                .resource_slices
                .values()
                .filter(|s| s.spec.driver == driver && s.spec.pool.name == pool)
                .collect();
            if all.iter().any(|s| s.spec.pool.generation > p.generation) {
                continue; // obsolete: a newer generation is being published
            }
            let same = all
                .iter()
                .filter(|s| s.spec.pool.generation == p.generation)
                .count() as i64;
            if same < want {
                status = PoolStatus::Incomplete;
            }
        }
        let mut names = BTreeSet::new();
        let mut devs = Vec::new();
        for slice in &p.slices {
            for d in slice.spec.devices.iter().flatten() {
                if !names.insert(d.name.as_str()) {
                    status = PoolStatus::Invalid;
                }
                devs.push(Candidate {
                    driver,
                    pool,
                    slice,
                    name: &d.name,
                    attributes: d.attributes.as_ref(),
                    capacity: d.capacity.as_ref(),
                });
            }
        }
        match status {
            PoolStatus::Usable => out.devices.extend(devs),
            s => out.bad.push((driver.to_string(), pool.to_string(), s)),
        }
    }
    out
}

/// One way of satisfying a request: the `exactly` request itself, or one
/// `firstAvailable` sub-request.
struct Alternative<'a> {
    /// What results carry: `<request>` or `<request>/<sub>`.
    name: String,
    class: &'a str,
    selectors: &'a [DeviceSelector],
    all: bool,
    count: usize,
    admin_access: bool,
    /// Fixed device set of an `All` alternative (indices into the candidates).
    all_devices: Vec<usize>,
}

struct Request<'a> {
    name: &'a str,
    alternatives: Vec<Alternative<'a>>,
}

struct Constraint {
    attribute: String,
    requests: Vec<String>,
    value: Option<AttrValue>,
    users: usize,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum AttrValue {
    Bool(bool),
    Int(i64),
    Str(String),
    Version(String),
}

struct ClaimPlan<'a> {
    key: String,
    requests: Vec<Request<'a>>,
    constraints: Vec<Constraint>,
}

/// Compiled selectors, shared by every node of a cycle. Upstream keeps an LRU of 10;
/// compilation is pure, so caching all is equivalent.
#[derive(Default)]
pub struct SelectorCache {
    compiled: HashMap<String, std::rc::Rc<Result<Selector, String>>>,
}

impl SelectorCache {
    fn get(&mut self, expr: &str) -> std::rc::Rc<Result<Selector, String>> {
        self.compiled
            .entry(expr.to_string())
            .or_insert_with(|| std::rc::Rc::new(cel::compile(expr)))
            .clone()
    }
}

pub struct Allocator<'a> {
    cluster: &'a Cluster,
    in_use: &'a BTreeSet<DeviceId>,
    cache: SelectorCache,
}

struct Search<'a, 'b> {
    alloc: &'b mut Allocator<'a>,
    devices: Vec<Candidate<'a>>,
    plans: Vec<ClaimPlan<'a>>,
    /// Device indices taken in this attempt (by earlier requests or claims).
    taken: BTreeSet<usize>,
    /// Per claim: (request name, device index, admin access).
    chosen: Vec<Vec<(String, usize, bool)>>,
    matches: HashMap<(usize, usize, usize, usize), bool>,
}

fn claim_key(c: &ResourceClaim) -> String {
    format!(
        "{}/{}",
        c.metadata.namespace.as_deref().unwrap_or("default"),
        c.metadata.name.as_deref().unwrap_or_default()
    )
}

impl<'a> Allocator<'a> {
    pub fn new(cluster: &'a Cluster, in_use: &'a BTreeSet<DeviceId>) -> Self {
        Allocator {
            cluster,
            in_use,
            cache: SelectorCache::default(),
        }
    }

    fn class(&self, name: &str) -> Option<&'a DeviceClass> {
        self.cluster.device_classes.get(name)
    }

    /// Allocates `claims` on the node: `Ok(None)` when no solution exists.
    pub fn allocate(
        &mut self,
        node: &str,
        labels: &Labels,
        claims: &[&'a ResourceClaim],
    ) -> Result<Option<Vec<ClaimAllocation>>, AllocError> {
        let pools = gather_pools(self.cluster, node, labels);
        let mut search = Search {
            alloc: self,
            devices: pools.devices,
            plans: Vec::new(),
            taken: BTreeSet::new(),
            chosen: vec![Vec::new(); claims.len()],
            matches: HashMap::new(),
        };
        for claim in claims {
            let plan = search.plan(claim, &pools.bad)?;
            search.plans.push(plan);
        }
        if search.claim(0)? {
            return search.results(node).map(Some);
        }
        if pools
            .bad
            .iter()
            .any(|(_, _, s)| matches!(s, PoolStatus::Invalid))
        {
            return Err(AllocError::OnNode(
                "invalid resource pools were encountered".into(),
            ));
        }
        Ok(None)
    }
}

impl<'a> Search<'a, '_> {
    fn plan(
        &mut self,
        claim: &'a ResourceClaim,
        bad: &[(String, String, PoolStatus)],
    ) -> Result<ClaimPlan<'a>, AllocError> {
        let key = claim_key(claim);
        let devices = claim.spec.devices.as_ref();
        let mut requests = Vec::new();
        let mut min_devices = 0usize;
        let ci = self.plans.len();
        for (ri, req) in devices
            .and_then(|d| d.requests.as_ref())
            .into_iter()
            .flatten()
            .enumerate()
        {
            let mut alternatives = Vec::new();
            if let Some(ex) = &req.exactly {
                alternatives.push(Alternative {
                    name: req.name.clone(),
                    class: &ex.device_class_name,
                    selectors: ex.selectors.as_deref().unwrap_or_default(),
                    all: ex.allocation_mode.as_deref() == Some(MODE_ALL),
                    count: ex.count.unwrap_or(1).max(0) as usize,
                    admin_access: ex.admin_access == Some(true),
                    all_devices: Vec::new(),
                });
            } else if let Some(subs) = &req.first_available {
                for sub in subs {
                    alternatives.push(Alternative {
                        name: format!("{}/{}", req.name, sub.name),
                        class: &sub.device_class_name,
                        selectors: sub.selectors.as_deref().unwrap_or_default(),
                        all: sub.allocation_mode.as_deref() == Some(MODE_ALL),
                        count: sub.count.unwrap_or(1).max(0) as usize,
                        admin_access: false,
                        all_devices: Vec::new(),
                    });
                }
            }
            for alt in &alternatives {
                for (si, sel) in alt.selectors.iter().enumerate() {
                    if sel.cel.is_none() {
                        return Err(AllocError::Fatal(format!(
                            "claim {key}, request {}, selector #{si}: CEL expression empty (unsupported selector type?)",
                            alt.name
                        )));
                    }
                }
                if self.alloc.class(alt.class).is_none() {
                    return Err(AllocError::Fatal(format!(
                        "claim {key}, request {}: could not retrieve device class {}: deviceclass.resource.k8s.io \"{}\" not found",
                        alt.name, alt.class, alt.class
                    )));
                }
            }
            // `All` sets are fixed before the search, in-use devices included.
            for (ai, alt) in alternatives.iter_mut().enumerate() {
                if !alt.all {
                    continue;
                }
                if let Some((driver, pool, status)) = bad.first() {
                    let why = match status {
                        PoolStatus::Invalid => "is currently invalid",
                        _ => "is currently being updated",
                    };
                    return Err(AllocError::Fatal(format!(
                        "claim {key}, request {}: asks for all devices, but resource pool {driver}/{pool} {why}",
                        alt.name
                    )));
                }
                let mut set = Vec::new();
                for d in 0..self.devices.len() {
                    if self.device_matches(ci, &key, alt, (ri, ai), d)? {
                        set.push(d);
                    }
                }
                alt.all_devices = set;
            }
            let min = alternatives
                .iter()
                .map(|a| if a.all { a.all_devices.len() } else { a.count })
                .min()
                .unwrap_or(0);
            min_devices += min;
            requests.push(Request {
                name: &req.name,
                alternatives,
            });
        }
        if min_devices > MAX_DEVICES_PER_CLAIM {
            return Err(AllocError::Fatal(format!(
                "claim {key}: number of requested devices {min_devices} exceeds the claim limit of {MAX_DEVICES_PER_CLAIM}"
            )));
        }
        let mut constraints = Vec::new();
        for (i, c) in devices
            .and_then(|d| d.constraints.as_ref())
            .into_iter()
            .flatten()
            .enumerate()
        {
            let Some(attr) = c.match_attribute.clone() else {
                return Err(AllocError::Fatal(format!(
                    "claim {key}, constraint #{i}: empty constraint (unsupported constraint type?)"
                )));
            };
            constraints.push(Constraint {
                attribute: attr,
                requests: c.requests.clone().unwrap_or_default(),
                value: None,
                users: 0,
            });
        }
        Ok(ClaimPlan {
            key,
            requests,
            constraints,
        })
    }

    /// Class selectors first, then the request's; errors abort the cycle.
    fn device_matches(
        &mut self,
        ci: usize,
        claim_key: &str,
        alt: &Alternative<'_>,
        (ri, ai): (usize, usize),
        d: usize,
    ) -> Result<bool, AllocError> {
        if let Some(&m) = self.matches.get(&(ci, ri, ai, d)) {
            return Ok(m);
        }
        let dev = &self.devices[d];
        let view = DeviceView {
            driver: dev.driver,
            attributes: dev.attributes,
            capacity: dev.capacity,
        };
        let class = self.alloc.class(alt.class);
        let class_selectors = class
            .and_then(|c| c.spec.selectors.as_deref())
            .unwrap_or_default();
        let mut ok = true;
        for (i, sel) in class_selectors.iter().enumerate() {
            let what = format!("class {}: selector #{i}", alt.class);
            if !self.eval(&what, sel, &view)? {
                ok = false;
                break;
            }
        }
        if ok {
            for (i, sel) in alt.selectors.iter().enumerate() {
                let what = format!("claim {claim_key}: selector #{i}");
                if !self.eval(&what, sel, &view)? {
                    ok = false;
                    break;
                }
            }
        }
        self.matches.insert((ci, ri, ai, d), ok);
        Ok(ok)
    }

    fn eval(
        &mut self,
        what: &str,
        sel: &DeviceSelector,
        view: &DeviceView<'_>,
    ) -> Result<bool, AllocError> {
        let Some(expr) = sel.cel.as_ref().map(|c| c.expression.as_str()) else {
            return Err(AllocError::Fatal(format!(
                "{what}: CEL expression empty (unsupported selector type?)"
            )));
        };
        let compiled = self.alloc.cache.get(expr);
        let compiled = match compiled.as_ref() {
            Ok(c) => c,
            Err(e) => return Err(AllocError::Fatal(format!("{what}: CEL compile error: {e}"))),
        };
        cel::evaluate(compiled, view)
            .map_err(|e| AllocError::Fatal(format!("{what}: CEL runtime error: {e}")))
    }

    fn claim(&mut self, ci: usize) -> Result<bool, AllocError> {
        if ci == self.plans.len() {
            return Ok(true);
        }
        self.request(ci, 0)
    }

    fn request(&mut self, ci: usize, ri: usize) -> Result<bool, AllocError> {
        if ri == self.plans[ci].requests.len() {
            return self.claim(ci + 1);
        }
        for ai in 0..self.plans[ci].requests[ri].alternatives.len() {
            let alt = &self.plans[ci].requests[ri].alternatives[ai];
            let (all, count) = (alt.all, alt.count);
            let have = self.chosen[ci].len();
            if all {
                let set = alt.all_devices.clone();
                if set.is_empty() || have + set.len() > MAX_DEVICES_PER_CLAIM {
                    continue;
                }
                if set.iter().any(|d| self.unavailable(ci, *d, false)) {
                    continue;
                }
                let mut added = 0;
                let mut failed = None;
                for &d in &set {
                    if !self.take(ci, ri, ai, d) {
                        failed = Some(d);
                        break;
                    }
                    added += 1;
                }
                if let Some(d) = failed {
                    for _ in 0..added {
                        self.untake(ci);
                    }
                    let dev = &self.devices[d];
                    return Err(AllocError::Fatal(format!(
                        "claim {}, request {}: cannot add device {}/{}/{} because a claim constraint would not be satisfied",
                        self.plans[ci].key,
                        self.plans[ci].requests[ri].alternatives[ai].name,
                        dev.driver,
                        dev.pool,
                        dev.name
                    )));
                }
                if self.request(ci, ri + 1)? {
                    return Ok(true);
                }
                for _ in 0..added {
                    self.untake(ci);
                }
            } else {
                if have + count > MAX_DEVICES_PER_CLAIM {
                    continue;
                }
                if self.devices_for(ci, ri, ai, count, 0)? {
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }

    /// Picks `remaining` more devices for an ExactCount alternative, from index
    /// `from` on (sets, not sequences: the first solution found is the same).
    fn devices_for(
        &mut self,
        ci: usize,
        ri: usize,
        ai: usize,
        remaining: usize,
        from: usize,
    ) -> Result<bool, AllocError> {
        if remaining == 0 {
            return self.request(ci, ri + 1);
        }
        let admin = self.plans[ci].requests[ri].alternatives[ai].admin_access;
        for d in from..self.devices.len() {
            if self.unavailable(ci, d, admin) {
                continue;
            }
            let key = self.plans[ci].key.clone();
            let alt = &self.plans[ci].requests[ri].alternatives[ai];
            // Matching needs `&mut self`: copy what it reads of the alternative.
            let alt_copy = Alternative {
                name: alt.name.clone(),
                class: alt.class,
                selectors: alt.selectors,
                all: alt.all,
                count: alt.count,
                admin_access: alt.admin_access,
                all_devices: Vec::new(),
            };
            if !self.device_matches(ci, &key, &alt_copy, (ri, ai), d)? {
                continue;
            }
            if !self.take(ci, ri, ai, d) {
                continue;
            }
            if self.devices_for(ci, ri, ai, remaining - 1, d + 1)? {
                return Ok(true);
            }
            self.untake(ci);
        }
        Ok(false)
    }

    /// In use elsewhere, or already taken in this attempt. Admin access ignores
    /// allocations of other claims, not a second use within its own claim.
    fn unavailable(&self, ci: usize, d: usize, admin: bool) -> bool {
        if self.chosen[ci].iter().any(|(_, x, _)| *x == d) {
            return true;
        }
        if admin {
            return false;
        }
        if self.taken.contains(&d) {
            return true;
        }
        let dev = &self.devices[d];
        self.alloc.in_use.contains(&(
            dev.driver.to_string(),
            dev.pool.to_string(),
            dev.name.to_string(),
        ))
    }

    /// Adds the device if the claim's constraints allow it.
    fn take(&mut self, ci: usize, ri: usize, ai: usize, d: usize) -> bool {
        let plan = &self.plans[ci];
        let req_name = plan.requests[ri].name;
        let alt_name = plan.requests[ri].alternatives[ai].name.clone();
        let admin = plan.requests[ri].alternatives[ai].admin_access;
        let dev = &self.devices[d];
        let mut values = Vec::new();
        for (k, c) in plan.constraints.iter().enumerate() {
            if !c.requests.is_empty() && !c.requests.iter().any(|r| r == req_name || *r == alt_name)
            {
                continue;
            }
            let Some(v) = lookup_attribute(dev, &c.attribute) else {
                return false;
            };
            if let Some(cur) = &c.value
                && *cur != v
            {
                return false;
            }
            values.push((k, v));
        }
        let plan = &mut self.plans[ci];
        for (k, v) in values {
            let c = &mut plan.constraints[k];
            c.value.get_or_insert(v);
            c.users += 1;
        }
        if !admin {
            self.taken.insert(d);
        }
        self.chosen[ci].push((alt_name, d, admin));
        true
    }

    fn untake(&mut self, ci: usize) {
        let Some((alt_name, d, admin)) = self.chosen[ci].pop() else {
            return;
        };
        if !admin {
            self.taken.remove(&d);
        }
        let req_name = alt_name.split('/').next().unwrap_or_default().to_string();
        let dev_has = |c: &Constraint| {
            c.requests.is_empty() || c.requests.iter().any(|r| *r == req_name || *r == alt_name)
        };
        for c in &mut self.plans[ci].constraints {
            if dev_has(c) {
                c.users = c.users.saturating_sub(1);
                if c.users == 0 {
                    c.value = None;
                }
            }
        }
    }

    fn results(&self, node: &str) -> Result<Vec<ClaimAllocation>, AllocError> {
        let mut out = Vec::new();
        for (ci, chosen) in self.chosen.iter().enumerate() {
            let mut devices = Vec::new();
            let mut node_name = false;
            let mut reqs: Vec<core::NodeSelectorRequirement> = Vec::new();
            let mut fields: Vec<core::NodeSelectorRequirement> = Vec::new();
            let mut any_selector = false;
            for (name, d, admin) in chosen {
                let dev = &self.devices[*d];
                devices.push(DeviceResult {
                    request: name.clone(),
                    driver: dev.driver.to_string(),
                    pool: dev.pool.to_string(),
                    device: dev.name.to_string(),
                    admin_access: *admin,
                });
                let s = &dev.slice.spec;
                if s.node_name.is_some() {
                    node_name = true;
                } else if let Some(sel) = &s.node_selector {
                    if sel.node_selector_terms.len() != 1 {
                        return Err(AllocError::Fatal(format!(
                            "claim {}: unsupported node selector with {} terms in ResourceSlice {}",
                            self.plans[ci].key,
                            sel.node_selector_terms.len(),
                            dev.slice.metadata.name.as_deref().unwrap_or_default()
                        )));
                    }
                    any_selector = true;
                    let t = &sel.node_selector_terms[0];
                    reqs.extend(t.match_expressions.iter().flatten().cloned());
                    fields.extend(t.match_fields.iter().flatten().cloned());
                }
            }
            let node_selector = if node_name {
                Some(core::NodeSelector {
                    node_selector_terms: vec![core::NodeSelectorTerm {
                        match_fields: Some(vec![core::NodeSelectorRequirement {
                            key: "metadata.name".into(),
                            operator: "In".into(),
                            values: Some(vec![node.to_string()]),
                        }]),
                        ..Default::default()
                    }],
                })
            } else if any_selector {
                Some(core::NodeSelector {
                    node_selector_terms: vec![core::NodeSelectorTerm {
                        match_expressions: (!reqs.is_empty()).then_some(reqs),
                        match_fields: (!fields.is_empty()).then_some(fields),
                    }],
                })
            } else {
                None
            };
            out.push(ClaimAllocation {
                devices,
                node_selector,
            });
        }
        Ok(out)
    }
}

/// The fully qualified name first; a short name when the domain is the driver's.
fn lookup_attribute(dev: &Candidate<'_>, name: &str) -> Option<AttrValue> {
    let attrs = dev.attributes?;
    let attr = attrs.get(name).or_else(|| {
        let (dom, id) = name.split_once('/')?;
        (dom == dev.driver).then(|| attrs.get(id)).flatten()
    })?;
    if let Some(b) = attr.bool {
        Some(AttrValue::Bool(b))
    } else if let Some(i) = attr.int {
        Some(AttrValue::Int(i))
    } else if let Some(s) = &attr.string {
        Some(AttrValue::Str(s.clone()))
    } else {
        attr.version.clone().map(AttrValue::Version)
    }
}
