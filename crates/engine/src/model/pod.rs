//! The scheduler's view of a pod: the fields kube-scheduler reads, with API-server
//! defaulting applied and requests precomputed once.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1 as core;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use k8s_openapi::jiff::Timestamp;

use super::labels::Labels;
use super::quantity::{Quantity, QuantityError};
use super::requests::{CURRENT_GATES, Gates, PodQuantities, RequestMode};
use super::resource::Resource;
use super::sym::{SharedLists, Sym};

/// `namespace/name`, the key users type and outputs print.
pub type PodKey = String;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PreemptionPolicy {
    #[default]
    PreemptLowerPriority,
    Never,
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct HostPort {
    pub ip: String,
    pub protocol: String,
    pub port: i32,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Pod {
    pub uid: String,
    pub namespace: Sym,
    pub name: String,
    pub labels: Labels,
    /// Shared between the pods that have the same list (see [`SharedLists`]).
    pub owner_references: Arc<[OwnerReference]>,
    pub creation_timestamp: Option<Timestamp>,
    pub deletion_timestamp: Option<Timestamp>,
    /// `spec.nodeName`: set for running (bound) pods. Interned, so that it is the
    /// node's own name handle and finding the node needs no string hashing
    /// ([`Cluster::node_position_of`](super::Cluster::node_position_of)).
    pub node_name: Option<Sym>,
    pub scheduler_name: String,
    pub priority_class_name: Option<String>,
    pub priority: i32,
    pub preemption_policy: PreemptionPolicy,
    pub nominated_node_name: Option<String>,
    pub phase: String,
    pub start_time: Option<Timestamp>,
    /// `DisruptionTarget=True` with reason `PreemptionByScheduler`.
    pub preemption_in_progress: bool,
    /// `PodScheduled=False` condition as (reason, message), e.g. `("Unschedulable",
    /// "0/3 nodes are available: ...")`: what the real scheduler last said (TUI list).
    /// Boxed, as `overhead`: rare, and a pod is kept for each of 150,000.
    pub not_scheduled: Option<Box<(String, String)>>,
    /// That condition's `lastTransitionTime`: how old the real scheduler's word is.
    pub not_scheduled_since: Option<Timestamp>,
    pub host_network: bool,
    /// Filter-time requests (containers, the largest init container, sidecars, pod-level
    /// requests, overhead, as upstream's `resource.PodRequests`); for a bound pod, the resize-aware effective requests.
    pub requests: Resource,
    /// cpu/memory with the 100m / 200Mi per-container defaults (node NonZeroRequested).
    pub non_zero_milli_cpu: i64,
    pub non_zero_memory: i64,
    /// The request NodeResourcesFit scores with: container aggregate with the
    /// per-container cpu/memory defaults, plus overhead; pod-level requests ignored.
    pub score_requests: Resource,
    /// `spec.overhead` (RuntimeClass); `None` when the pod has none ([`Pod::overhead`]
    /// reads it either way). Boxed: rare, and a pod is kept for each of 150,000.
    pub overhead_given: Option<Box<Resource>>,
    /// Ports of the containers, then of the sidecars (restartable init containers).
    pub host_ports: Vec<HostPort>,
    /// How many of `host_ports` (the last ones) are the sidecars': NodePorts ignores
    /// them before 1.34 (1.33.6). A `u32`, as `readiness_gates`: they pack with
    /// `priority` (a pod is kept for each of 150,000).
    pub sidecar_host_ports: u32,
    /// The filter-time requests as releases with PodLevelResources or
    /// InPlacePodVerticalScaling off count them, when they differ (rare: pod-level
    /// requests, or a pending or infeasible resize).
    pub older_accounting: Option<Arc<OlderAccounting>>,
    /// Shared between the pods that have the same list.
    pub tolerations: Arc<[core::Toleration]>,
    pub node_selector: Option<BTreeMap<String, String>>,
    /// Boxed: most pods have none, and the type is large.
    pub affinity: Option<Box<core::Affinity>>,
    /// Shared between the pods that have the same list.
    pub topology_spread_constraints: Arc<[core::TopologySpreadConstraint]>,
    pub scheduling_gates: Vec<String>,
    /// The volumes a scheduler plugin may read (see `scheduler_volume`).
    pub volumes: Vec<core::Volume>,
    /// Images of init containers then regular containers, as ImageLocality counts them.
    pub init_images: Vec<Sym>,
    pub images: Vec<Sym>,
    pub resource_claims: Vec<core::PodResourceClaim>,
    /// `status.resourceClaimStatuses`: the claims generated from templates.
    pub resource_claim_statuses: Vec<core::PodResourceClaimStatus>,
    pub readiness_gates: u32,
    /// `metadata.generation`: the scheduler's conditions carry it as their
    /// `observedGeneration`.
    pub generation: i64,
}

/// One way of counting a pod's requests (`requests`, `non_zero_*` of [`Pod`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Accounting {
    pub requests: Resource,
    pub non_zero_milli_cpu: i64,
    pub non_zero_memory: i64,
}

/// A pod's requests under each release's default gates (kept only when they differ).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OlderAccounting {
    /// Every gate on (1.34+).
    pub all_gates: Accounting,
    /// PodLevelResources off (1.33): `spec.resources` ignored.
    pub without_pod_level: Accounting,
    /// PodLevelResources and InPlacePodVerticalScaling off (1.32): spec only.
    pub without_pod_level_or_resize: Accounting,
}

static TOLERATIONS: SharedLists<core::Toleration> = SharedLists::new();
static OWNER_REFERENCES: SharedLists<OwnerReference> = SharedLists::new();
static SPREAD_CONSTRAINTS: SharedLists<core::TopologySpreadConstraint> = SharedLists::new();

impl Pod {
    pub fn key(&self) -> PodKey {
        format!("{}/{}", self.namespace, self.name)
    }

    /// The pod's overhead (zero without one).
    pub fn overhead(&self) -> &Resource {
        static NONE: Resource = Resource {
            milli_cpu: 0,
            memory: 0,
            ephemeral_storage: 0,
            allowed_pod_number: 0,
            scalar: BTreeMap::new(),
        };
        self.overhead_given.as_deref().unwrap_or(&NONE)
    }

    pub fn is_bound(&self) -> bool {
        self.node_name.as_deref().is_some_and(|n| !n.is_empty())
    }

    pub fn is_terminal(&self) -> bool {
        self.phase == "Succeeded" || self.phase == "Failed"
    }

    pub fn has_required_anti_affinity(&self) -> bool {
        self.affinity
            .as_ref()
            .and_then(|a| a.pod_anti_affinity.as_ref())
            .and_then(|a| {
                a.required_during_scheduling_ignored_during_execution
                    .as_ref()
            })
            .is_some_and(|t| !t.is_empty())
    }

    /// Pods with any pod affinity or anti-affinity (NodeInfo.PodsWithAffinity).
    pub fn has_pod_affinity(&self) -> bool {
        self.affinity
            .as_ref()
            .is_some_and(|a| a.pod_affinity.is_some() || a.pod_anti_affinity.is_some())
    }

    /// Convert a manifest into the scheduler's view, applying the API server's
    /// defaulting. Errors name the field path.
    pub fn from_k8s(p: &core::Pod) -> Result<Pod, FieldError> {
        let meta = &p.metadata;
        let spec = p.spec.as_ref().ok_or_else(|| FieldError::missing("spec"))?;
        let status = p.status.as_ref();
        let namespace = Sym::new(meta.namespace.as_deref().unwrap_or("default"));
        let name = meta
            .name
            .clone()
            .ok_or_else(|| FieldError::missing("metadata.name"))?;
        let uid = meta
            .uid
            .clone()
            .unwrap_or_else(|| format!("{namespace}/{name}"));

        let host_network = spec.host_network.unwrap_or(false);
        // Resize-aware requests (status.resources) only count for bound pods; the
        // incoming pod's Filter request uses its spec.
        let bound_status =
            status.filter(|_| spec.node_name.as_deref().is_some_and(|n| !n.is_empty()));
        let quantities = PodQuantities::parse(spec, bound_status)?;
        let requests = quantities.count(RequestMode::Filter, CURRENT_GATES);
        let score_requests = quantities.count(RequestMode::ScoreIncoming, CURRENT_GATES);
        let non_zero = quantities.count(RequestMode::NonZero, CURRENT_GATES);
        let current = Accounting {
            requests: requests.clone(),
            non_zero_milli_cpu: non_zero.milli_cpu,
            non_zero_memory: non_zero.memory,
        };
        let older_accounting = (spec.resources.is_some() || quantities.resized())
            .then(|| older_accounting(&quantities, &current))
            .flatten();
        let overhead = quantities.overhead();

        let (host_ports, sidecar_host_ports) = host_ports(spec, host_network);
        let preemption_in_progress = preemption_in_progress(status);
        let not_scheduled = not_scheduled(status);
        let not_scheduled_since = pod_scheduled_false(status)
            .and_then(|c| c.last_transition_time.as_ref())
            .map(|t| t.0);

        Ok(Pod {
            uid,
            namespace,
            name,
            labels: meta.labels.as_ref().map(Labels::from).unwrap_or_default(),
            owner_references: OWNER_REFERENCES
                .share(meta.owner_references.as_deref().unwrap_or_default()),
            creation_timestamp: meta.creation_timestamp.as_ref().map(|t| t.0),
            deletion_timestamp: meta.deletion_timestamp.as_ref().map(|t| t.0),
            node_name: spec
                .node_name
                .as_deref()
                .filter(|n| !n.is_empty())
                .map(Sym::new),
            scheduler_name: spec
                .scheduler_name
                .clone()
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| "default-scheduler".into()),
            priority_class_name: spec.priority_class_name.clone().filter(|s| !s.is_empty()),
            priority: spec.priority.unwrap_or(0),
            preemption_policy: match spec.preemption_policy.as_deref() {
                Some("Never") => PreemptionPolicy::Never,
                _ => PreemptionPolicy::PreemptLowerPriority,
            },
            nominated_node_name: status
                .and_then(|s| s.nominated_node_name.clone())
                .filter(|n| !n.is_empty()),
            phase: status.and_then(|s| s.phase.clone()).unwrap_or_default(),
            start_time: status.and_then(|s| s.start_time.as_ref()).map(|t| t.0),
            preemption_in_progress,
            not_scheduled,
            not_scheduled_since,
            host_network,
            non_zero_milli_cpu: non_zero.milli_cpu,
            non_zero_memory: non_zero.memory,
            requests,
            score_requests,
            overhead_given: (overhead != Resource::default()).then(|| Box::new(overhead)),
            host_ports,
            sidecar_host_ports: sidecar_host_ports as u32,
            older_accounting,
            tolerations: TOLERATIONS.share(spec.tolerations.as_deref().unwrap_or_default()),
            node_selector: spec.node_selector.clone(),
            affinity: spec.affinity.clone().map(Box::new),
            topology_spread_constraints: SPREAD_CONSTRAINTS.share(
                spec.topology_spread_constraints
                    .as_deref()
                    .unwrap_or_default(),
            ),
            scheduling_gates: spec
                .scheduling_gates
                .iter()
                .flatten()
                .map(|g| g.name.clone())
                .collect(),
            volumes: spec
                .volumes
                .iter()
                .flatten()
                .filter_map(scheduler_volume)
                .collect(),
            init_images: spec
                .init_containers
                .iter()
                .flatten()
                .map(|c| Sym::new(c.image.as_deref().unwrap_or_default()))
                .collect(),
            images: spec
                .containers
                .iter()
                .map(|c| Sym::new(c.image.as_deref().unwrap_or_default()))
                .collect(),
            resource_claims: spec.resource_claims.clone().unwrap_or_default(),
            resource_claim_statuses: p
                .status
                .as_ref()
                .and_then(|s| s.resource_claim_statuses.clone())
                .unwrap_or_default(),
            readiness_gates: spec.readiness_gates.as_ref().map_or(0, |g| g.len() as u32),
            generation: meta.generation.unwrap_or(0),
        })
    }
}

/// The host ports the pod asks for, of its containers and restartable init containers
/// (sidecars), with the API server's defaults.
fn host_ports(spec: &core::PodSpec, host_network: bool) -> (Vec<HostPort>, usize) {
    let mut host_ports = Vec::new();
    for c in &spec.containers {
        push_host_ports(&mut host_ports, c, host_network);
    }
    let of_containers = host_ports.len();
    let sidecars = spec
        .init_containers
        .iter()
        .flatten()
        .filter(|c| c.restart_policy.as_deref() == Some("Always"));
    for c in sidecars {
        push_host_ports(&mut host_ports, c, host_network);
    }
    let of_sidecars = host_ports.len() - of_containers;
    (host_ports, of_sidecars)
}

fn push_host_ports(host_ports: &mut Vec<HostPort>, c: &core::Container, host_network: bool) {
    for port in c.ports.iter().flatten() {
        // API defaulting: hostNetwork pods publish their container ports.
        let host_port = match port.host_port {
            Some(hp) if hp != 0 => hp,
            _ if host_network => port.container_port,
            _ => 0,
        };
        if host_port <= 0 {
            continue;
        }
        let ip = port.host_ip.clone().filter(|s| !s.is_empty());
        host_ports.push(HostPort {
            ip: ip.unwrap_or_else(|| "0.0.0.0".into()),
            protocol: port
                .protocol
                .clone()
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| "TCP".into()),
            port: host_port,
        });
    }
}

/// The requests under older releases' gates, where they differ from `current`.
fn older_accounting(q: &PodQuantities, current: &Accounting) -> Option<Arc<OlderAccounting>> {
    let account = |gates: Gates| {
        let requests = q.count(RequestMode::Filter, gates);
        let non_zero = q.count(RequestMode::NonZero, gates);
        Accounting {
            requests,
            non_zero_milli_cpu: non_zero.milli_cpu,
            non_zero_memory: non_zero.memory,
        }
    };
    let older = OlderAccounting {
        all_gates: current.clone(),
        without_pod_level: account(Gates {
            pod_level: false,
            in_place: true,
        }),
        without_pod_level_or_resize: account(Gates {
            pod_level: false,
            in_place: false,
        }),
    };
    let same = older.without_pod_level == *current && older.without_pod_level_or_resize == *current;
    (!same).then(|| Arc::new(older))
}

impl Pod {
    /// The pod as a release with these gates counts it: `None` when that is as now.
    pub fn accounted_as(&self, pod_level_resources: bool, in_place_resize: bool) -> Option<Pod> {
        let older = self.older_accounting.as_ref()?;
        // No release has PodLevelResources on and InPlacePodVerticalScaling off.
        let want = match (pod_level_resources, in_place_resize) {
            (true, _) => &older.all_gates,
            (false, true) => &older.without_pod_level,
            (false, false) => &older.without_pod_level_or_resize,
        };
        let current = Accounting {
            requests: self.requests.clone(),
            non_zero_milli_cpu: self.non_zero_milli_cpu,
            non_zero_memory: self.non_zero_memory,
        };
        if *want == current {
            return None;
        }
        let mut p = self.clone();
        p.requests = want.requests.clone();
        p.non_zero_milli_cpu = want.non_zero_milli_cpu;
        p.non_zero_memory = want.non_zero_memory;
        Some(p)
    }
}

/// A scheduler's preemption is evicting the pod (its DisruptionTarget condition).
fn preemption_in_progress(status: Option<&core::PodStatus>) -> bool {
    status
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|cs| {
            cs.iter().any(|c| {
                c.type_ == "DisruptionTarget"
                    && c.status == "True"
                    && c.reason.as_deref() == Some("PreemptionByScheduler")
            })
        })
}

/// The pod's `PodScheduled=False` condition.
fn pod_scheduled_false(status: Option<&core::PodStatus>) -> Option<&core::PodCondition> {
    status.and_then(|s| s.conditions.as_ref()).and_then(|cs| {
        cs.iter()
            .find(|c| c.type_ == "PodScheduled" && c.status == "False")
    })
}

/// The reason and message of the pod's `PodScheduled=False` condition.
fn not_scheduled(status: Option<&core::PodStatus>) -> Option<Box<(String, String)>> {
    pod_scheduled_false(status).map(|c| {
        Box::new((
            c.reason.clone().unwrap_or_default(),
            c.message.clone().unwrap_or_default(),
        ))
    })
}

/// The volume as scheduler plugins read it, or `None` when none does. Sources only
/// the kubelet reads (projected service account tokens, configMap, secret,
/// downwardAPI, emptyDir: nearly every pod has one) are dropped, and a volume with
/// nothing else is left out: a `core::Volume` is large even when empty.
fn scheduler_volume(v: &core::Volume) -> Option<core::Volume> {
    let mut kept = core::Volume {
        name: String::new(),
        projected: None,
        config_map: None,
        secret: None,
        downward_api: None,
        empty_dir: None,
        ..v.clone()
    };
    if kept == core::Volume::default() {
        return None;
    }
    kept.name = v.name.clone();
    Some(kept)
}

/// A field-level problem in a manifest: `path` is the JSON path inside the object.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct FieldError {
    pub path: String,
    pub message: String,
}

impl FieldError {
    pub fn missing(path: &str) -> Self {
        FieldError {
            path: path.into(),
            message: "required field is missing".into(),
        }
    }
    pub fn quantity(path: String, e: QuantityError) -> Self {
        FieldError {
            path,
            message: e.to_string(),
        }
    }
}

/// A resource quantity as the API server admits it: it parses and is not negative
/// (its validation says `Invalid value: "-2": must be greater than or equal to 0`).
/// `path` is built only on error.
pub fn resource_quantity(
    text: &str,
    path: impl FnOnce() -> String,
) -> Result<Quantity, FieldError> {
    match Quantity::parse(text) {
        Ok(q) if q.0 >= 0 => Ok(q),
        Ok(_) => Err(FieldError {
            path: path(),
            message: format!(
                "Invalid value: {:?}: must be greater than or equal to 0",
                text.trim()
            ),
        }),
        Err(_) if text.len() > 30 && text.bytes().all(|b| b.is_ascii_digit()) => {
            // An unquoted YAML number such as `1e30` reaches here written out in full;
            // name it as the user likely wrote it.
            let digits = text.trim_end_matches('0');
            let exponent = text.len() - 1;
            let short = match digits.len() {
                0 | 1 => format!("{digits}e{exponent}"),
                _ => format!("{}.{}e{exponent}", &digits[..1], &digits[1..]),
            };
            Err(FieldError {
                path: path(),
                message: format!(
                    "quantity {short} is too large (written out, this YAML number has {} digits; at most 30 are supported)",
                    text.len()
                ),
            })
        }
        Err(e) => Err(FieldError::quantity(path(), e)),
    }
}

#[cfg(test)]
mod tests {
    use crate::model::testing::pod;
    use serde_json::json;

    fn c(name: &str, cpu: Option<&str>, mem: Option<&str>) -> serde_json::Value {
        let mut req = serde_json::Map::new();
        if let Some(v) = cpu {
            req.insert("cpu".into(), json!(v));
        }
        if let Some(v) = mem {
            req.insert("memory".into(), json!(v));
        }
        json!({"name": name, "image": "i", "resources": {"requests": req}})
    }

    #[test]
    fn requests_follow_the_init_sidecar_and_overhead_rules() {
        // (spec, filter cpu milli, filter memory, non-zero cpu, non-zero memory)
        let mib = 1024 * 1024;
        let cases = [
            // Plain containers sum; a container without cpu counts 100m for scoring.
            (
                json!({"containers": [c("a", Some("1"), Some("1Gi")), c("b", None, Some("1Gi"))]}),
                1000,
                2048 * mib,
                1100,
                2048 * mib,
            ),
            // A big regular init container dominates.
            (
                json!({"containers": [c("a", Some("1"), Some("1Gi"))],
                    "initContainers": [c("i", Some("3"), Some("1Gi"))]}),
                3000,
                1024 * mib,
                3000,
                1024 * mib,
            ),
            // A sidecar adds to the sum and to every later init container.
            (
                json!({"containers": [c("a", Some("1"), Some("1Gi"))],
                    "initContainers": [
                        {"name": "s", "image": "i", "restartPolicy": "Always",
                         "resources": {"requests": {"cpu": "500m", "memory": "512Mi"}}},
                        c("i", Some("2"), Some("1Gi"))]}),
                2500,
                1536 * mib,
                2500,
                1536 * mib,
            ),
            // Overhead is added last.
            (
                json!({"containers": [c("a", Some("1"), Some("1Gi"))],
                    "overhead": {"cpu": "250m", "memory": "64Mi"}}),
                1250,
                1088 * mib,
                1250,
                1088 * mib,
            ),
            // Pod-level requests replace the aggregate; scoring defaults apply only to
            // what the result lacks.
            (
                json!({"containers": [c("a", None, None), c("b", None, None)],
                    "resources": {"requests": {"cpu": "2"}}}),
                2000,
                0,
                2000,
                200 * mib,
            ),
        ];
        for (i, (spec, cpu, mem, nz_cpu, nz_mem)) in cases.into_iter().enumerate() {
            let p = pod(json!({"metadata": {"name": "p"}, "spec": spec}));
            assert_eq!(p.requests.milli_cpu, cpu, "case {i} cpu");
            assert_eq!(p.requests.memory, mem, "case {i} memory");
            assert_eq!(p.non_zero_milli_cpu, nz_cpu, "case {i} non-zero cpu");
            assert_eq!(p.non_zero_memory, nz_mem, "case {i} non-zero memory");
        }
    }

    #[test]
    fn limits_default_requests_and_host_network_publishes_ports() {
        let p = pod(json!({"metadata": {"name": "p"}, "spec": {
            "hostNetwork": true,
            "containers": [{"name": "a", "image": "i",
                "resources": {"limits": {"cpu": "2", "nvidia.com/gpu": "1"}},
                "ports": [{"containerPort": 9100}, {"containerPort": 53, "protocol": "UDP"}]}]}}));
        assert_eq!(p.requests.milli_cpu, 2000);
        assert_eq!(p.requests.scalar.get("nvidia.com/gpu"), Some(&1));
        let ports: Vec<(i32, &str)> = p
            .host_ports
            .iter()
            .map(|h| (h.port, h.protocol.as_str()))
            .collect();
        assert_eq!(ports, vec![(9100, "TCP"), (53, "UDP")]);
    }
}
