//! A pod's resource requests as the scheduler counts them: upstream
//! `k8s.io/component-helpers/resource` `PodRequests` (containers summed, init
//! containers and sidecars, pod-level resources, overhead) with the scheduler's
//! resize-aware `determineContainerReqs` for bound pods.
//!
//! A pod is counted several ways (Filter, the scoring defaults, each release's
//! gates), so its quantities are parsed once into `PodQuantities`, keyed by the
//! manifest's own resource names, and every way of counting reads that.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1 as core;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as ApiQuantity;

use super::pod::{FieldError, resource_quantity};
use super::quantity::Quantity;
use super::resource::{
    CPU, DEFAULT_MEMORY_REQUEST, DEFAULT_MILLI_CPU_REQUEST, EPHEMERAL_STORAGE, MEMORY, Resource,
    is_scalar_resource_name,
};

/// Quantities by resource name, the names borrowed from the manifest, in name
/// order. A container names a handful of resources, and every pod is counted three
/// ways on load, so a sorted vector (one small allocation) replaces a tree here.
#[derive(Clone, Default)]
pub struct Quantities<'a>(Vec<(&'a str, Quantity)>);

impl<'a> Quantities<'a> {
    fn new() -> Self {
        Quantities(Vec::new())
    }

    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn iter(&self) -> impl Iterator<Item = (&'a str, Quantity)> + '_ {
        self.0.iter().copied()
    }

    fn keys(&self) -> impl Iterator<Item = &'a str> + '_ {
        self.0.iter().map(|(k, _)| *k)
    }

    fn contains_key(&self, name: &str) -> bool {
        self.0.binary_search_by(|(k, _)| (*k).cmp(name)).is_ok()
    }

    /// The quantity of `name`, inserted as `init` when absent.
    fn slot(&mut self, name: &'a str, init: Quantity) -> &mut Quantity {
        let i = match self.0.binary_search_by(|(k, _)| (*k).cmp(name)) {
            Ok(i) => i,
            Err(i) => {
                self.0.insert(i, (name, init));
                i
            }
        };
        &mut self.0[i].1
    }

    fn insert(&mut self, name: &'a str, q: Quantity) {
        *self.slot(name, q) = q;
    }
}

/// The feature gates a pod's request accounting follows.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) struct Gates {
    pub(super) pod_level: bool,
    pub(super) in_place: bool,
}

pub(super) const CURRENT_GATES: Gates = Gates {
    pod_level: true,
    in_place: true,
};

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum RequestMode {
    /// Real requests, pod-level honoured, resize-aware for bound pods.
    Filter,
    /// Per-container cpu/memory defaults, pod-level honoured.
    NonZero,
    /// Per-container defaults, pod-level ignored (NodeResourcesFit scoring quirk).
    ScoreIncoming,
}

/// One container's quantities.
struct ContainerQuantities<'a> {
    /// Requests after API defaulting: each limit without a request becomes it.
    spec: Quantities<'a>,
    /// `resources.requests` and `allocatedResources` of its status, when the pod is
    /// bound and the status names the container.
    status: Option<[Quantities<'a>; 2]>,
    /// A restartable init container (a sidecar).
    sidecar: bool,
}

/// Everything a pod's requests are counted from, parsed once.
pub(super) struct PodQuantities<'a> {
    containers: Vec<ContainerQuantities<'a>>,
    init_containers: Vec<ContainerQuantities<'a>>,
    /// `spec.resources`: pod-level requests and limits.
    pod_requests: Quantities<'a>,
    pod_limits: Quantities<'a>,
    /// Pod-level requests or limits name a resource pod-level resources support.
    pod_level_set: bool,
    overhead: Quantities<'a>,
    /// The bound pod's resize is Infeasible.
    infeasible: bool,
    /// The pod is bound with a status: resize-aware accounting applies.
    has_status: bool,
}

impl<'a> PodQuantities<'a> {
    /// Parses the spec (and a bound pod's container statuses) in the order the
    /// scheduler's first count reads them, so the first bad quantity is the one named.
    pub(super) fn parse(
        spec: &'a core::PodSpec,
        bound_status: Option<&'a core::PodStatus>,
    ) -> Result<Self, FieldError> {
        let infeasible = bound_status.is_some_and(resize_infeasible);
        let mut containers = Vec::with_capacity(spec.containers.len());
        for (i, c) in spec.containers.iter().enumerate() {
            let statuses = bound_status.and_then(|s| s.container_statuses.as_ref());
            containers.push(container(
                c,
                false,
                statuses,
                &|| format!("spec.containers[{i}]"),
                "status.containerStatuses",
            )?);
        }
        let mut init_containers = Vec::new();
        for (i, c) in spec.init_containers.iter().flatten().enumerate() {
            let sidecar = c.restart_policy.as_deref() == Some("Always");
            // Only a sidecar's status is read: a finished init container's is not.
            let statuses = bound_status
                .filter(|_| sidecar)
                .and_then(|s| s.init_container_statuses.as_ref());
            init_containers.push(container(
                c,
                sidecar,
                statuses,
                &|| format!("spec.initContainers[{i}]"),
                "status.initContainerStatuses",
            )?);
        }
        let res = spec.resources.as_ref();
        let pod_requests = parse_list(res.and_then(|r| r.requests.as_ref()), &|| {
            "spec.resources.requests".to_string()
        })?;
        let pod_limits = parse_list(res.and_then(|r| r.limits.as_ref()), &|| {
            "spec.resources.limits".to_string()
        })?;
        let overhead = parse_list(spec.overhead.as_ref(), &|| "spec.overhead".to_string())?;
        let pod_level_set = pod_requests
            .keys()
            .chain(pod_limits.keys())
            .any(pod_level_supported);
        Ok(PodQuantities {
            containers,
            init_containers,
            pod_requests,
            pod_limits,
            pod_level_set,
            overhead,
            infeasible,
            has_status: bound_status.is_some(),
        })
    }

    /// The pod's overhead.
    pub(super) fn overhead(&self) -> Resource {
        quantities_to_resource(&self.overhead)
    }

    /// Whether a container status records resources that resize-aware accounting
    /// reads.
    pub(super) fn resized(&self) -> bool {
        self.containers
            .iter()
            .chain(&self.init_containers)
            .filter_map(|c| c.status.as_ref())
            .any(|[actual, allocated]| !actual.is_empty() || !allocated.is_empty())
    }

    /// The requests counted one way under these gates.
    pub(super) fn count(&self, mode: RequestMode, gates: Gates) -> Resource {
        // With pod-level requests set, the scoring defaults apply only to what the
        // final result lacks, not per container.
        let pod_level = gates.pod_level && self.pod_level_set;
        let defaults =
            mode != RequestMode::Filter && (mode == RequestMode::ScoreIncoming || !pod_level);
        let status_aware = mode != RequestMode::ScoreIncoming && gates.in_place && self.has_status;
        let mut sum = Quantities::new();
        for c in &self.containers {
            let mut r = c.requests(status_aware, self.infeasible);
            if defaults {
                apply_non_zero_defaults(&mut r);
            }
            add_into(&mut sum, &r);
        }
        let mut restartable = Quantities::new();
        let mut init_max = Quantities::new();
        for c in &self.init_containers {
            let mut r = c.requests(status_aware, self.infeasible);
            if defaults {
                apply_non_zero_defaults(&mut r);
            }
            if c.sidecar {
                add_into(&mut sum, &r);
                add_into(&mut restartable, &r);
                max_into(&mut init_max, &restartable);
            } else {
                add_into(&mut r, &restartable);
                max_into(&mut init_max, &r);
            }
        }
        max_into(&mut sum, &init_max);
        if mode != RequestMode::ScoreIncoming && gates.pod_level {
            self.apply_pod_level(&mut sum, mode == RequestMode::NonZero);
        }
        add_into(&mut sum, &self.overhead);
        quantities_to_resource(&sum)
    }

    /// Pod-level requests replace the container aggregate (PodLevelResources).
    fn apply_pod_level(&self, sum: &mut Quantities<'a>, non_zero: bool) {
        let mut pod_req = Quantities(
            self.pod_requests
                .iter()
                .filter(|(k, _)| pod_level_supported(k))
                .collect(),
        );
        // API defaulting: cpu/memory from the containers, then anything from limits.
        for (k, v) in self.pod_limits.iter() {
            if !pod_level_supported(k) || pod_req.contains_key(k) {
                continue;
            }
            if (k == CPU || k == MEMORY) && sum.contains_key(k) {
                continue;
            }
            pod_req.insert(k, v);
        }
        if pod_req.is_empty() {
            return;
        }
        for (k, v) in pod_req.iter() {
            sum.insert(k, v);
        }
        if non_zero {
            apply_non_zero_defaults(sum);
        }
    }
}

impl<'a> ContainerQuantities<'a> {
    /// Resize-aware request of a bound container (upstream `determineContainerReqs`):
    /// max(spec, status.resources, status.allocatedResources) per resource; while the
    /// pod's resize is Infeasible, max(status.resources, status.allocatedResources)
    /// only (the spec asks for what the node will never give).
    fn requests(&self, status_aware: bool, infeasible: bool) -> Quantities<'a> {
        match &self.status {
            Some([actual, allocated]) if status_aware => {
                let mut r = if infeasible {
                    Quantities::new()
                } else {
                    self.spec.clone()
                };
                max_into(&mut r, actual);
                max_into(&mut r, allocated);
                r
            }
            _ => self.spec.clone(),
        }
    }
}

fn container<'a>(
    c: &'a core::Container,
    sidecar: bool,
    statuses: Option<&'a Vec<core::ContainerStatus>>,
    path: &dyn Fn() -> String,
    status_path: &str,
) -> Result<ContainerQuantities<'a>, FieldError> {
    let res = c.resources.as_ref();
    let mut spec = parse_list(res.and_then(|r| r.requests.as_ref()), &|| {
        format!("{}.resources.requests", path())
    })?;
    let limits = parse_list(res.and_then(|r| r.limits.as_ref()), &|| {
        format!("{}.resources.limits", path())
    })?;
    for (k, v) in limits.iter() {
        spec.slot(k, v);
    }
    let status = match statuses.and_then(|s| s.iter().find(|s| s.name == c.name)) {
        None => None,
        Some(cs) => {
            let path = || format!("{status_path}[{}]", c.name);
            let actual = parse_list(
                cs.resources.as_ref().and_then(|r| r.requests.as_ref()),
                &|| format!("{}.resources.requests", path()),
            )?;
            let allocated = parse_list(cs.allocated_resources.as_ref(), &|| {
                format!("{}.allocatedResources", path())
            })?;
            Some([actual, allocated])
        }
    };
    Ok(ContainerQuantities {
        spec,
        status,
        sidecar,
    })
}

fn parse_list<'a>(
    list: Option<&'a BTreeMap<String, ApiQuantity>>,
    path: &dyn Fn() -> String,
) -> Result<Quantities<'a>, FieldError> {
    let mut out = Quantities::new();
    for (k, v) in list.into_iter().flatten() {
        let q = resource_quantity(&v.0, || format!("{}.{k}", path()))?;
        out.insert(k.as_str(), q);
    }
    Ok(out)
}

/// `IsPodResizeInfeasible`: the pod's first `PodResizePending` condition says
/// `Infeasible`.
fn resize_infeasible(status: &core::PodStatus) -> bool {
    status
        .conditions
        .iter()
        .flatten()
        .find(|c| c.type_ == "PodResizePending")
        .is_some_and(|c| c.reason.as_deref() == Some("Infeasible"))
}

fn max_into<'a>(acc: &mut Quantities<'a>, other: &Quantities<'a>) {
    for (k, v) in other.iter() {
        let e = acc.slot(k, Quantity::default());
        if v > *e {
            *e = v;
        }
    }
}

fn add_into<'a>(acc: &mut Quantities<'a>, other: &Quantities<'a>) {
    for (k, v) in other.iter() {
        *acc.slot(k, Quantity::default()) += v;
    }
}

fn apply_non_zero_defaults(q: &mut Quantities) {
    q.slot(CPU, Quantity::from_milli(DEFAULT_MILLI_CPU_REQUEST));
    q.slot(MEMORY, Quantity::from_units(DEFAULT_MEMORY_REQUEST));
}

fn pod_level_supported(name: &str) -> bool {
    name == CPU || name == MEMORY || name.starts_with("hugepages-")
}

pub fn quantities_to_resource(q: &Quantities) -> Resource {
    let mut r = Resource::default();
    for (k, v) in q.iter() {
        match k {
            CPU => r.milli_cpu = v.milli_value(),
            MEMORY => r.memory = v.value(),
            EPHEMERAL_STORAGE => r.ephemeral_storage = v.value(),
            "pods" => r.allowed_pod_number = v.value(),
            other if is_scalar_resource_name(other) => {
                r.scalar.insert(other.to_string(), v.value());
            }
            _ => {}
        }
    }
    r
}
