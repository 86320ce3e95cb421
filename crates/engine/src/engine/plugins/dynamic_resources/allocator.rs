//! The structured allocator ("incubating" variant, gates AdminAccess and
//! PrioritizedList): a depth-first search over claims, requests and devices where the
//! first complete solution wins. Pool order is (driver, pool name), slices by name,
//! devices in slice order: upstream's pool order is Go map order, so only *which*
//! devices are picked can differ, never whether a node fits.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, OnceLock};

/// The allocator's maps are keyed by short strings and small integers, looked up
/// for every device of every node: SipHash's DoS resistance buys nothing here, and a
/// fixed seed keeps runs identical.
pub(super) use crate::engine::plugins::FastMap;

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
/// Names are interned: a cluster's 20,000 allocations name a few thousand pools and
/// a handful of device names, and a device is looked up without building its id.
#[derive(Clone, Debug, Default)]
pub struct DevicesInUse {
    names: FastMap<String, u32>,
    /// Each device in use, with the position of the claim holding it among the
    /// cluster's claims (in key order): its name is looked up only when shown.
    set: FastMap<(u32, u32, u32), u32>,
}

impl DevicesInUse {
    fn intern(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.names.get(s) {
            return i;
        }
        let i = self.names.len() as u32;
        self.names.insert(s.to_string(), i);
        i
    }

    /// The interned (driver, pool), if any device of it is in use: looked up once per
    /// pool, so that each device costs one lookup.
    fn pool(&self, driver: &str, pool: &str) -> Option<(u32, u32)> {
        Some((*self.names.get(driver)?, *self.names.get(pool)?))
    }

    fn contains_in(&self, (driver, pool): (u32, u32), device: &str) -> bool {
        self.names
            .get(device)
            .is_some_and(|&n| self.set.contains_key(&(driver, pool, n)))
    }

    /// The position (among the cluster's claims, in key order) of the claim
    /// holding the device.
    fn holder(&self, driver: &str, pool: &str, device: &str) -> Option<u32> {
        let (d, p) = self.pool(driver, pool)?;
        let n = self.names.get(device)?;
        self.set.get(&(d, p, *n)).copied()
    }
}

pub fn allocated_devices(cluster: &Cluster) -> DevicesInUse {
    let mut out = DevicesInUse::default();
    // Mostly one device per claim: sized once instead of growing through rehashes.
    out.set.reserve(cluster.resource_claims().len());
    // Claims come in key order, and neighbours mostly share driver and pool: the
    // last ids are reused without a lookup.
    let mut last_driver: Option<(&str, u32)> = None;
    let mut last_pool: Option<(&str, u32)> = None;
    for (position, claim) in cluster.resource_claims().values().enumerate() {
        let results = claim
            .status
            .as_ref()
            .and_then(|s| s.allocation.as_ref())
            .and_then(|a| a.devices.as_ref())
            .and_then(|d| d.results.as_ref());
        for r in results.into_iter().flatten() {
            if r.admin_access == Some(true) {
                continue;
            }
            let driver = match last_driver {
                Some((s, id)) if s == r.driver => id,
                _ => out.intern(&r.driver),
            };
            let pool = match last_pool {
                Some((s, id)) if s == r.pool => id,
                _ => out.intern(&r.pool),
            };
            last_driver = Some((&r.driver, driver));
            last_pool = Some((&r.pool, pool));
            let device = out.intern(&r.device);
            out.set.insert((driver, pool, device), position as u32);
        }
    }
    out
}

/// `(driver, pool, device)`.
pub type DeviceKey<'a> = (&'a str, &'a str, &'a str);

/// What every node's allocation reads: devices in use and the slices indexed by
/// node, so that a node's pools are found without a scan of all. Built once per state
/// of the cluster's claims and slices (`Cluster::dra_index`).
#[derive(Clone, Debug, Default)]
pub struct Inventory {
    in_use: DevicesInUse,
    /// `nodeName` slices, by node, in name order.
    by_node: FastMap<String, Vec<Arc<ResourceSlice>>>,
    /// `nodeSelector` and `allNodes` slices, in name order.
    shared: Vec<Arc<ResourceSlice>>,
    /// Every slice, for the generations of a pool that looks incomplete.
    all: Vec<Arc<ResourceSlice>>,
    /// Every slice's generation, by (driver, pool): built the first time a node sees
    /// a pool with fewer slices than it announces (rare: a driver is republishing).
    generations: OnceLock<FastMap<(String, String), Vec<i64>>>,
}

impl Inventory {
    /// The claims (`namespace/name`) holding the given devices; one walk over the
    /// claims' names, however many devices are asked about.
    pub fn holders<'c, 'd>(
        &self,
        cluster: &'c Cluster,
        devices: impl IntoIterator<Item = DeviceKey<'d>>,
    ) -> HashMap<DeviceKey<'d>, &'c str> {
        let mut wanted: Vec<(u32, DeviceKey<'d>)> = devices
            .into_iter()
            .filter_map(|d| Some((self.in_use.holder(d.0, d.1, d.2)?, d)))
            .collect();
        wanted.sort_unstable();
        let mut out = HashMap::new();
        let mut next = wanted.iter().peekable();
        for (position, key) in cluster.resource_claims().keys().enumerate() {
            while let Some((_, d)) = next.next_if(|(p, _)| *p as usize == position) {
                out.insert(*d, key.as_str());
            }
            if next.peek().is_none() {
                break;
            }
        }
        out
    }

    pub fn new(cluster: &Cluster) -> Self {
        let mut inv = Inventory {
            in_use: allocated_devices(cluster),
            ..Default::default()
        };
        inv.by_node.reserve(cluster.nodes().len());
        inv.all.reserve(cluster.resource_slices().len());
        // Slices come in name order, so every list built here is sorted.
        for slice in cluster.resource_slices().values() {
            let s = &slice.spec;
            match s.node_name.as_deref() {
                Some(n) => match inv.by_node.get_mut(n) {
                    Some(list) => list.push(slice.clone()),
                    None => {
                        inv.by_node.insert(n.to_string(), vec![slice.clone()]);
                    }
                },
                None if s.all_nodes == Some(true) || s.node_selector.is_some() => {
                    inv.shared.push(slice.clone())
                }
                None => {}
            }
            inv.all.push(slice.clone());
        }
        inv
    }

    fn generations(&self, driver: &str, pool: &str) -> &[i64] {
        let all = self.generations.get_or_init(|| {
            let mut by_pool: FastMap<(String, String), Vec<i64>> = FastMap::default();
            for s in &self.all {
                by_pool
                    .entry((s.spec.driver.clone(), s.spec.pool.name.clone()))
                    .or_default()
                    .push(s.spec.pool.generation);
            }
            by_pool
        });
        all.get(&(driver.to_string(), pool.to_string()))
            .map(Vec::as_slice)
            .unwrap_or_default()
    }
}

/// A device visible from the node, with where it came from.
pub(super) struct Candidate<'a> {
    pub(super) driver: &'a str,
    pub(super) pool: &'a str,
    slice: &'a ResourceSlice,
    pub(super) name: &'a str,
    pub(super) attributes: Option<&'a BTreeMap<String, DeviceAttribute>>,
    pub(super) capacity:
        Option<&'a BTreeMap<String, k8s_openapi::api::resource::v1::DeviceCapacity>>,
    /// Allocated to another claim when the cycle started.
    pub(super) in_use: bool,
}

struct PoolState<'a> {
    driver: &'a str,
    pool: &'a str,
    generation: i64,
    slices: Vec<&'a ResourceSlice>,
}

pub(super) enum PoolStatus {
    Usable,
    Incomplete,
    Invalid,
}

pub(super) struct Pools<'a> {
    pub(super) devices: Vec<Candidate<'a>>,
    /// (driver, pool) of unusable pools and why.
    pub(super) bad: Vec<(String, String, PoolStatus)>,
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
/// This runs for every node of every cycle, so it avoids ordered maps: a node sees a
/// handful of pools, kept in a small vector and sorted once.
pub(super) fn gather_pools<'a>(
    inventory: &'a Inventory,
    node: &str,
    labels: &Labels,
    use_incomplete: bool,
) -> Pools<'a> {
    let own = inventory
        .by_node
        .get(node)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let shared = inventory.shared.as_slice();
    let mut pools: Vec<PoolState<'a>> = Vec::new();
    let mut add = |slice: &'a ResourceSlice| {
        if !slice_matches(slice, node, labels) {
            return;
        }
        let (driver, pool) = (slice.spec.driver.as_str(), slice.spec.pool.name.as_str());
        let g = slice.spec.pool.generation;
        match pools
            .iter_mut()
            .find(|p| p.driver == driver && p.pool == pool)
        {
            Some(p) if g > p.generation => {
                p.generation = g;
                p.slices.clear();
                p.slices.push(slice);
            }
            Some(p) if g == p.generation => p.slices.push(slice),
            Some(_) => {}
            None => pools.push(PoolState {
                driver,
                pool,
                generation: g,
                slices: vec![slice],
            }),
        }
    };
    // Both lists are sorted: slices are visited in name order (merged only when a
    // node has both kinds, which is rare).
    if shared.is_empty() || own.is_empty() {
        own.iter().chain(shared).for_each(|s| add(s));
    } else {
        let mut slices: Vec<&'a ResourceSlice> =
            own.iter().chain(shared).map(Arc::as_ref).collect();
        slices.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
        slices.into_iter().for_each(&mut add);
    }
    pools.sort_by(|a, b| (a.driver, a.pool).cmp(&(b.driver, b.pool)));
    let mut out = Pools {
        devices: Vec::with_capacity(
            pools
                .iter()
                .flat_map(|p| &p.slices)
                .map(|s| s.spec.devices.as_ref().map_or(0, Vec::len))
                .sum(),
        ),
        bad: Vec::new(),
    };
    let mut names: Vec<&str> = Vec::new();
    for p in pools {
        let (driver, pool) = (p.driver, p.pool);
        let want = p.slices[0].spec.pool.resource_slice_count;
        let mut status = PoolStatus::Usable;
        if (p.slices.len() as i64) < want {
            let all = inventory.generations(driver, pool);
            if all.iter().any(|&g| g > p.generation) {
                continue; // obsolete: a newer generation is being published
            }
            let same = all.iter().filter(|&&g| g == p.generation).count() as i64;
            if same < want {
                status = PoolStatus::Incomplete;
            }
        }
        // Names are unique within a slice (the API server and the loader refuse
        // duplicates), so only a pool of several slices can repeat one.
        if p.slices.len() > 1 {
            names.clear();
            names.extend(
                p.slices
                    .iter()
                    .flat_map(|s| s.spec.devices.iter().flatten())
                    .map(|d| d.name.as_str()),
            );
            names.sort_unstable();
            if names.windows(2).any(|w| w[0] == w[1]) {
                status = PoolStatus::Invalid;
            }
        }
        if use_incomplete && matches!(status, PoolStatus::Incomplete) {
            out.bad
                .push((driver.to_string(), pool.to_string(), PoolStatus::Incomplete));
            status = PoolStatus::Usable;
        }
        match status {
            PoolStatus::Usable => {
                let used = inventory.in_use.pool(driver, pool);
                for slice in &p.slices {
                    for d in slice.spec.devices.iter().flatten() {
                        out.devices.push(Candidate {
                            driver,
                            pool,
                            slice,
                            name: &d.name,
                            attributes: d.attributes.as_ref(),
                            capacity: d.capacity.as_ref(),
                            in_use: used.is_some_and(|u| inventory.in_use.contains_in(u, &d.name)),
                        });
                    }
                }
            }
            s => out.bad.push((driver.to_string(), pool.to_string(), s)),
        }
    }
    out
}

/// One way of satisfying a request: the `exactly` request itself, or one
/// `firstAvailable` sub-request.
struct Alternative<'a> {
    /// What results carry: `<request>` or `<request>/<sub>`.
    name: Cow<'a, str>,
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

struct Constraint<'a> {
    attribute: String,
    requests: Vec<String>,
    value: Option<AttrValue<'a>>,
    users: usize,
}

impl Constraint<'_> {
    /// Whether the constraint covers a request (or one of its sub-requests).
    fn covers(&self, request: &str, alternative: &str) -> bool {
        self.requests.is_empty()
            || self
                .requests
                .iter()
                .any(|r| r == request || r == alternative)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AttrValue<'a> {
    Bool(bool),
    Int(i64),
    Str(&'a str),
    Version(&'a str),
}

struct ClaimPlan<'a> {
    key: ClaimKey<'a>,
    requests: Vec<Request<'a>>,
    constraints: Vec<Constraint<'a>>,
}

/// A device picked for a claim: by which request alternative, with admin access or not.
#[derive(Clone, Copy)]
struct Pick {
    ri: usize,
    ai: usize,
    d: usize,
    admin: bool,
}

/// Most compiled selectors kept per thread. Upstream keeps an LRU of 10 per cycle;
/// compilation is pure, so any cache size gives the same answers.
const SELECTOR_CACHE_SIZE: usize = 256;

type Compiled = std::rc::Rc<Result<Selector, String>>;

thread_local! {
    static COMPILED: std::cell::RefCell<FastMap<String, Compiled>> =
        std::cell::RefCell::new(FastMap::default());
}

/// The compiled selector, shared by every node (and cycle) on this thread.
pub(super) fn compiled_selector(expr: &str) -> Compiled {
    COMPILED.with(|cache| {
        let mut cache = cache.borrow_mut();
        if let Some(c) = cache.get(expr) {
            return c.clone();
        }
        if cache.len() >= SELECTOR_CACHE_SIZE {
            cache.clear();
        }
        let c = std::rc::Rc::new(cel::compile(expr));
        cache.insert(expr.to_string(), c.clone());
        c
    })
}

/// Evaluates one selector; `what` names it in an error (built only then: this runs
/// for every device of every node).
fn eval(
    what: &dyn Fn() -> String,
    sel: &DeviceSelector,
    view: &DeviceView<'_>,
) -> Result<bool, AllocError> {
    let Some(expr) = sel.cel.as_ref().map(|c| c.expression.as_str()) else {
        return Err(AllocError::Fatal(format!(
            "{}: CEL expression empty (unsupported selector type?)",
            what()
        )));
    };
    let compiled = compiled_selector(expr);
    let compiled = match compiled.as_ref() {
        Ok(c) => c,
        Err(e) => {
            return Err(AllocError::Fatal(format!(
                "{}: CEL compile error: {e}",
                what()
            )));
        }
    };
    cel::evaluate(compiled, view)
        .map_err(|e| AllocError::Fatal(format!("{}: CEL runtime error: {e}", what())))
}

pub struct Allocator<'a> {
    cluster: &'a Cluster,
    inventory: &'a Inventory,
    incomplete_pools: bool,
}

struct Search<'a, 'b> {
    alloc: &'b mut Allocator<'a>,
    devices: Vec<Candidate<'a>>,
    plans: Vec<ClaimPlan<'a>>,
    /// Per device: taken in this attempt (by earlier requests or claims).
    taken: Vec<bool>,
    /// Per claim, the devices picked so far.
    chosen: Vec<Vec<Pick>>,
    matches: FastMap<(usize, usize, usize, usize), bool>,
}

/// A claim's `namespace/name`, written only into error messages (a plan is made for
/// every node, so it is not built there).
#[derive(Clone, Copy)]
pub(super) struct ClaimKey<'a>(pub(super) &'a ResourceClaim);

impl std::fmt::Display for ClaimKey<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let m = &self.0.metadata;
        write!(
            f,
            "{}/{}",
            m.namespace.as_deref().unwrap_or("default"),
            m.name.as_deref().unwrap_or_default()
        )
    }
}

impl<'a> Allocator<'a> {
    pub fn new(cluster: &'a Cluster, inventory: &'a Inventory) -> Self {
        Allocator {
            cluster,
            inventory,
            incomplete_pools: false,
        }
    }

    /// Whether devices of incomplete pools may be allocated (1.34's allocator; 1.35's
    /// never does). A request for all devices still fails on such a pool.
    pub fn with_incomplete_pools(mut self, use_them: bool) -> Self {
        self.incomplete_pools = use_them;
        self
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
        let pools = gather_pools(self.inventory, node, labels, self.incomplete_pools);
        let mut search = Search {
            alloc: self,
            taken: vec![false; pools.devices.len()],
            devices: pools.devices,
            plans: Vec::new(),
            chosen: vec![Vec::new(); claims.len()],
            matches: FastMap::default(),
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
        let key = ClaimKey(claim);
        let devices = claim.spec.devices.as_ref();
        let mut requests = Vec::new();
        let mut min_devices = 0usize;
        for req in devices
            .and_then(|d| d.requests.as_ref())
            .into_iter()
            .flatten()
        {
            let mut alternatives = Vec::new();
            if let Some(ex) = &req.exactly {
                alternatives.push(Alternative {
                    name: Cow::Borrowed(&req.name),
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
                        name: Cow::Owned(format!("{}/{}", req.name, sub.name)),
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
            for alt in alternatives.iter_mut() {
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
                    if self.accepts(key, alt, d)? {
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

    /// Whether the alternative (by index) accepts the device, cached per search.
    fn device_matches(
        &mut self,
        ci: usize,
        (ri, ai): (usize, usize),
        d: usize,
    ) -> Result<bool, AllocError> {
        if let Some(&m) = self.matches.get(&(ci, ri, ai, d)) {
            return Ok(m);
        }
        let plan = &self.plans[ci];
        let ok = self.accepts(plan.key, &plan.requests[ri].alternatives[ai], d)?;
        self.matches.insert((ci, ri, ai, d), ok);
        Ok(ok)
    }

    /// Class selectors first, then the request's; errors abort the cycle.
    fn accepts(
        &self,
        claim_key: ClaimKey<'_>,
        alt: &Alternative<'_>,
        d: usize,
    ) -> Result<bool, AllocError> {
        let dev = &self.devices[d];
        let view = DeviceView {
            driver: dev.driver,
            attributes: dev.attributes,
            capacity: dev.capacity,
        };
        let class_selectors = self
            .alloc
            .class(alt.class)
            .and_then(|c| c.spec.selectors.as_deref())
            .unwrap_or_default();
        for (i, sel) in class_selectors.iter().enumerate() {
            let what = || format!("class {}: selector #{i}", alt.class);
            if !eval(&what, sel, &view)? {
                return Ok(false);
            }
        }
        for (i, sel) in alt.selectors.iter().enumerate() {
            let what = || format!("claim {claim_key}: selector #{i}");
            if !eval(&what, sel, &view)? {
                return Ok(false);
            }
        }
        Ok(true)
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
            if !self.device_matches(ci, (ri, ai), d)? {
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
        if self.chosen[ci].iter().any(|p| p.d == d) {
            return true;
        }
        if admin {
            return false;
        }
        self.taken[d] || self.devices[d].in_use
    }

    /// Adds the device if the claim's constraints allow it.
    fn take(&mut self, ci: usize, ri: usize, ai: usize, d: usize) -> bool {
        let ClaimPlan {
            requests,
            constraints,
            ..
        } = &mut self.plans[ci];
        let req_name = requests[ri].name;
        let alt = &requests[ri].alternatives[ai];
        let dev = &self.devices[d];
        for c in constraints.iter() {
            if !c.covers(req_name, &alt.name) {
                continue;
            }
            let Some(v) = lookup_attribute(dev, &c.attribute) else {
                return false;
            };
            if c.value.is_some_and(|cur| cur != v) {
                return false;
            }
        }
        for c in constraints.iter_mut() {
            if c.covers(req_name, &alt.name) {
                if c.value.is_none() {
                    c.value = lookup_attribute(dev, &c.attribute);
                }
                c.users += 1;
            }
        }
        let admin = alt.admin_access;
        if !admin {
            self.taken[d] = true;
        }
        self.chosen[ci].push(Pick { ri, ai, d, admin });
        true
    }

    fn untake(&mut self, ci: usize) {
        let Some(Pick { ri, ai, d, admin }) = self.chosen[ci].pop() else {
            return;
        };
        if !admin {
            self.taken[d] = false;
        }
        let ClaimPlan {
            requests,
            constraints,
            ..
        } = &mut self.plans[ci];
        let req_name = requests[ri].name;
        let alt_name = requests[ri].alternatives[ai].name.as_ref();
        for c in constraints.iter_mut() {
            if c.covers(req_name, alt_name) {
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
            for &Pick { ri, ai, d, admin } in chosen {
                let dev = &self.devices[d];
                devices.push(DeviceResult {
                    request: self.plans[ci].requests[ri].alternatives[ai]
                        .name
                        .to_string(),
                    driver: dev.driver.to_string(),
                    pool: dev.pool.to_string(),
                    device: dev.name.to_string(),
                    admin_access: admin,
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
fn lookup_attribute<'a>(dev: &Candidate<'a>, name: &str) -> Option<AttrValue<'a>> {
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
        Some(AttrValue::Str(s))
    } else {
        attr.version.as_deref().map(AttrValue::Version)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::dra;
    use serde_json::{Value, json};

    const GPU: &str = "gpu.example.com";

    fn device(name: &str, attrs: Value) -> Value {
        json!({"name": name, "attributes": attrs, "capacity": {"memory": {"value": "40Gi"}}})
    }

    fn slice(
        name: &str,
        pool: &str,
        generation: i64,
        count: i64,
        place: Value,
        devices: Vec<Value>,
    ) -> ResourceSlice {
        let mut spec = json!({"driver": GPU,
            "pool": {"name": pool, "generation": generation, "resourceSliceCount": count},
            "devices": devices});
        for (k, v) in place.as_object().unwrap() {
            spec[k] = v.clone();
        }
        let mut s: ResourceSlice =
            serde_json::from_value(json!({"metadata": {"name": name}, "spec": spec})).unwrap();
        dra::resource_slice_check(&mut s).unwrap();
        s
    }

    fn gpus(node: &str, n: usize) -> ResourceSlice {
        let devs = (0..n)
            .map(|i| device(&format!("gpu-{i}"), json!({"model": {"string": "a100"}})))
            .collect();
        slice(
            &format!("{node}-gpu"),
            node,
            1,
            1,
            json!({"nodeName": node}),
            devs,
        )
    }

    fn claim(name: &str, devices: Value) -> ResourceClaim {
        let mut c: ResourceClaim = serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"devices": devices}}))
        .unwrap();
        dra::resource_claim_check(&mut c).unwrap();
        c
    }

    fn exact(count: i64) -> Value {
        json!({"requests": [{"name": "gpu", "exactly": {"deviceClassName": GPU, "count": count}}]})
    }

    fn allocated(name: &str, devices: &[&str], pool: &str) -> ResourceClaim {
        let mut c = claim(name, exact(devices.len() as i64));
        let results: Vec<Value> = devices
            .iter()
            .map(|d| json!({"request": "gpu", "driver": GPU, "pool": pool, "device": d}))
            .collect();
        c.status = Some(
            serde_json::from_value(json!({"allocation": {"devices": {"results": results}}}))
                .unwrap(),
        );
        c
    }

    fn cluster_with(slices: Vec<ResourceSlice>, claims: Vec<ResourceClaim>) -> Cluster {
        let mut c = Cluster::new();
        c.device_classes.insert(
            GPU.into(),
            serde_json::from_value(json!({"metadata": {"name": GPU}, "spec": {"selectors": [
                {"cel": {"expression": "device.driver == \"gpu.example.com\""}}]}}))
            .unwrap(),
        );
        for s in slices {
            c.resource_slices_mut()
                .insert(s.metadata.name.clone().unwrap(), Arc::new(s));
        }
        for cl in claims {
            c.resource_claims_mut().insert(
                format!("default/{}", cl.metadata.name.as_deref().unwrap()),
                cl,
            );
        }
        c
    }

    fn run(
        c: &Cluster,
        node: &str,
        labels: &[(&str, &str)],
        claims: &[&ResourceClaim],
    ) -> Result<Option<Vec<ClaimAllocation>>, AllocError> {
        let inventory = Inventory::new(c);
        let labels: Labels = labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Allocator::new(c, &inventory).allocate(node, &labels, claims)
    }

    fn picked(r: &[ClaimAllocation]) -> Vec<Vec<String>> {
        r.iter()
            .map(|a| {
                a.devices
                    .iter()
                    .map(|d| format!("{}:{}/{}", d.request, d.pool, d.device))
                    .collect()
            })
            .collect()
    }

    #[test]
    fn exact_count_skips_devices_in_use_and_pins_the_node() {
        let c = cluster_with(
            vec![gpus("n1", 4)],
            vec![allocated("other", &["gpu-0"], "n1")],
        );
        let want = claim("want", exact(2));
        let r = run(&c, "n1", &[], &[&want]).unwrap().unwrap();
        assert_eq!(picked(&r), [["gpu:n1/gpu-1", "gpu:n1/gpu-2"]]);
        let sel = r[0].node_selector.as_ref().unwrap();
        let f = &sel.node_selector_terms[0].match_fields.as_ref().unwrap()[0];
        assert_eq!(
            (f.key.as_str(), f.values.as_deref()),
            ("metadata.name", Some(&["n1".to_string()][..]))
        );
        // Four devices, one in use: four cannot be had; another node has none.
        assert_eq!(run(&c, "n1", &[], &[&claim("w", exact(4))]), Ok(None));
        assert_eq!(run(&c, "n2", &[], &[&want]), Ok(None));
    }

    #[test]
    fn all_mode_takes_every_match_and_fails_when_one_is_in_use() {
        let all = json!({"requests": [{"name": "gpu", "exactly": {"deviceClassName": GPU, "allocationMode": "All"}}]});
        let c = cluster_with(
            vec![gpus("n1", 2), gpus("n2", 2)],
            vec![allocated("o", &["gpu-1"], "n2")],
        );
        let want = claim("want", all);
        let r = run(&c, "n1", &[], &[&want]).unwrap().unwrap();
        assert_eq!(picked(&r), [["gpu:n1/gpu-0", "gpu:n1/gpu-1"]]);
        assert_eq!(run(&c, "n2", &[], &[&want]), Ok(None));
        // No matching device at all: no solution either.
        assert_eq!(run(&c, "n3", &[], &[&want]), Ok(None));
    }

    #[test]
    fn first_available_falls_back_to_a_later_sub_request() {
        let fa = json!({"requests": [{"name": "gpu", "firstAvailable": [
            {"name": "big", "deviceClassName": GPU, "count": 4},
            {"name": "small", "deviceClassName": GPU, "count": 1}]}]});
        let c = cluster_with(vec![gpus("n1", 2), gpus("n2", 4)], vec![]);
        let want = claim("want", fa);
        let r = run(&c, "n1", &[], &[&want]).unwrap().unwrap();
        assert_eq!(picked(&r), [["gpu/small:n1/gpu-0"]]);
        let r = run(&c, "n2", &[], &[&want]).unwrap().unwrap();
        assert_eq!(r[0].devices.len(), 4);
        assert!(r[0].devices.iter().all(|d| d.request == "gpu/big"));
    }

    #[test]
    fn match_attribute_backtracks_past_a_wrong_first_device() {
        let root = |r: &str| json!({"resource.kubernetes.io/pcieRoot": {"string": r}, "model": {"string": "a100"}});
        let s = slice(
            "n1-gpu",
            "n1",
            1,
            1,
            json!({"nodeName": "n1"}),
            vec![
                device("gpu-0", root("pci0")),
                device("gpu-1", root("pci1")),
                device("gpu-2", json!({"model": {"string": "a100"}})),
            ],
        );
        let c = cluster_with(vec![s], vec![allocated("o", &["gpu-0"], "n1")]);
        // gpu-0 is in use; the constraint needs both on one root: none left.
        let two = json!({"requests": [{"name": "a", "exactly": {"deviceClassName": GPU}},
                                      {"name": "b", "exactly": {"deviceClassName": GPU}}],
                         "constraints": [{"matchAttribute": "resource.kubernetes.io/pcieRoot"}]});
        assert_eq!(run(&c, "n1", &[], &[&claim("w", two.clone())]), Ok(None));
        let free = cluster_with(
            c.resource_slices()
                .values()
                .map(|s| (**s).clone())
                .collect(),
            vec![],
        );
        // gpu-2 lacks the attribute: it never satisfies the constraint.
        let mut one_each = two.clone();
        one_each["constraints"][0]["requests"] = json!(["a"]);
        let r = run(&free, "n1", &[], &[&claim("w", one_each)])
            .unwrap()
            .unwrap();
        assert_eq!(picked(&r), [["a:n1/gpu-0", "b:n1/gpu-1"]]);
        assert_eq!(run(&free, "n1", &[], &[&claim("w", two)]), Ok(None));
        // The short name of an attribute in the driver's own domain also works.
        let short = json!({"requests": [{"name": "a", "exactly": {"deviceClassName": GPU, "count": 2}}],
                           "constraints": [{"matchAttribute": "gpu.example.com/model"}]});
        let r = run(&free, "n1", &[], &[&claim("w", short)])
            .unwrap()
            .unwrap();
        assert_eq!(picked(&r), [["a:n1/gpu-0", "a:n1/gpu-1"]]);
    }

    #[test]
    fn admin_access_may_take_a_device_in_use() {
        let admin = json!({"requests": [{"name": "gpu", "exactly": {"deviceClassName": GPU, "adminAccess": true}}]});
        let c = cluster_with(vec![gpus("n1", 1)], vec![allocated("o", &["gpu-0"], "n1")]);
        let r = run(&c, "n1", &[], &[&claim("w", admin)]).unwrap().unwrap();
        assert!(r[0].devices[0].admin_access);
        assert_eq!(run(&c, "n1", &[], &[&claim("w2", exact(1))]), Ok(None));
    }

    #[test]
    fn claims_of_one_call_do_not_share_devices() {
        let c = cluster_with(vec![gpus("n1", 1)], vec![]);
        let (a, b) = (claim("a", exact(1)), claim("b", exact(1)));
        assert_eq!(run(&c, "n1", &[], &[&a, &b]), Ok(None));
        assert!(run(&c, "n1", &[], &[&a]).unwrap().is_some());
    }

    #[test]
    fn pool_generations_and_incomplete_or_invalid_pools() {
        let dev = |n: &str| device(n, json!({}));
        let place = json!({"nodeName": "n1"});
        // Only the newest generation counts.
        let old = slice("a-old", "n1", 1, 1, place.clone(), vec![dev("old-0")]);
        let new = slice("b-new", "n1", 2, 1, place.clone(), vec![dev("new-0")]);
        let c = cluster_with(vec![old, new], vec![]);
        let r = run(&c, "n1", &[], &[&claim("w", exact(1))])
            .unwrap()
            .unwrap();
        assert_eq!(picked(&r), [["gpu:n1/new-0"]]);
        // Two slices announced, one published: incomplete, never used.
        let half = slice("half", "n1", 1, 2, place.clone(), vec![dev("g0")]);
        let c = cluster_with(vec![half], vec![]);
        assert_eq!(run(&c, "n1", &[], &[&claim("w", exact(1))]), Ok(None));
        let all = json!({"requests": [{"name": "gpu", "exactly": {"deviceClassName": GPU, "allocationMode": "All"}}]});
        assert_eq!(
            run(&c, "n1", &[], &[&claim("w", all)]),
            Err(AllocError::Fatal("claim default/w, request gpu: asks for all devices, but resource pool gpu.example.com/n1 is currently being updated".into()))
        );
        // The same device name twice in a pool: invalid.
        let s1 = slice("s1", "n1", 1, 2, place.clone(), vec![dev("g0")]);
        let s2 = slice("s2", "n1", 1, 2, place, vec![dev("g0")]);
        let c = cluster_with(vec![s1, s2], vec![]);
        assert_eq!(
            run(&c, "n1", &[], &[&claim("w", exact(1))]),
            Err(AllocError::OnNode(
                "invalid resource pools were encountered".into()
            ))
        );
    }

    #[test]
    fn node_selector_and_all_nodes_slices() {
        let rack = json!({"nodeSelector": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "rack", "operator": "In", "values": ["r1"]}]}]}});
        let s = slice("rack", "rack-r1", 1, 1, rack, vec![device("g0", json!({}))]);
        let c = cluster_with(vec![s], vec![]);
        let want = claim("w", exact(1));
        let r = run(&c, "n1", &[("rack", "r1")], &[&want]).unwrap().unwrap();
        let term = &r[0].node_selector.as_ref().unwrap().node_selector_terms[0];
        assert_eq!(term.match_expressions.as_ref().unwrap()[0].key, "rack");
        assert_eq!(run(&c, "n1", &[("rack", "r2")], &[&want]), Ok(None));
        let everywhere = slice(
            "net",
            "net",
            1,
            1,
            json!({"allNodes": true}),
            vec![device("g0", json!({}))],
        );
        let c = cluster_with(vec![everywhere], vec![]);
        let r = run(&c, "any", &[], &[&want]).unwrap().unwrap();
        assert!(r[0].node_selector.is_none());
    }

    #[test]
    fn cel_errors_abort_with_upstream_prefixes() {
        let c = cluster_with(vec![gpus("n1", 1)], vec![]);
        let bad = json!({"requests": [{"name": "gpu", "exactly": {"deviceClassName": GPU,
            "selectors": [{"cel": {"expression": "device.attributes[\"gpu.example.com\"].nope == 1"}}]}}]});
        assert_eq!(
            run(&c, "n1", &[], &[&claim("w", bad)]),
            Err(AllocError::Fatal(
                "claim default/w: selector #0: CEL runtime error: no such key: nope".into()
            ))
        );
        let syntax = json!({"requests": [{"name": "gpu", "exactly": {"deviceClassName": GPU,
            "selectors": [{"cel": {"expression": "device.driver =="}}]}}]});
        match run(&c, "n1", &[], &[&claim("w", syntax)]) {
            Err(AllocError::Fatal(m)) => assert!(
                m.starts_with("claim default/w: selector #0: CEL compile error: "),
                "{m}"
            ),
            other => panic!("{other:?}"),
        }
        let mut c2 = c.clone();
        c2.device_classes.get_mut(GPU).unwrap().spec.selectors = Some(
            serde_json::from_value(json!([{"cel": {"expression": "device.attributes[\"x\"].y"}}]))
                .unwrap(),
        );
        assert_eq!(
            run(&c2, "n1", &[], &[&claim("w", exact(1))]),
            Err(AllocError::Fatal(
                "class gpu.example.com: selector #0: CEL runtime error: no such key: y".into()
            ))
        );
        // A selector that matches nothing is just no solution.
        let none = json!({"requests": [{"name": "gpu", "exactly": {"deviceClassName": GPU,
            "selectors": [{"cel": {"expression": "device.attributes[\"gpu.example.com\"].model == \"h100\""}}]}}]});
        assert_eq!(run(&c, "n1", &[], &[&claim("w", none)]), Ok(None));
    }

    #[test]
    fn claim_limit_of_32_devices() {
        let c = cluster_with(vec![gpus("n1", 1)], vec![]);
        assert_eq!(
            run(&c, "n1", &[], &[&claim("w", exact(33))]),
            Err(AllocError::Fatal(
                "claim default/w: number of requested devices 33 exceeds the claim limit of 32"
                    .into()
            ))
        );
    }
}
