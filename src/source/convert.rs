//! Per-object conversion and API-server defaulting, shared by the snapshot loader and
//! the live watchers: whichever way an object arrives, it enters the model the same
//! way.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1 as core;
use k8s_openapi::api::node::v1 as nodev1;
use k8s_openapi::api::scheduling::v1 as scheduling;
use k8s_openapi::api::storage::v1 as storage;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as K8sQuantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::Deserialize;

use crate::model::pod::resource_quantity;
use crate::model::{FieldError, Pod, PodGroup, PreemptionPolicy};

/// StorageClass API defaulting.
pub fn storage_class_defaults(sc: &mut storage::StorageClass) {
    sc.volume_binding_mode
        .get_or_insert_with(|| "Immediate".to_string());
    sc.reclaim_policy
        .get_or_insert_with(|| "Delete".to_string());
}

/// The API server always sets the `kubernetes.io/metadata.name` label
/// (NamespaceDefaultLabelName).
pub fn namespace_defaults(ns: &mut core::Namespace) {
    let name = ns.metadata.name.clone().unwrap_or_default();
    ns.metadata
        .labels
        .get_or_insert_with(BTreeMap::new)
        .insert("kubernetes.io/metadata.name".into(), name);
}

/// PriorityClass API defaulting.
pub fn priority_class_defaults(pc: &mut scheduling::PriorityClass) {
    pc.preemption_policy
        .get_or_insert_with(|| "PreemptLowerPriority".to_string());
}

/// A RuntimeClass's overhead must parse: it enters pod requests.
pub fn runtime_class_check(rc: &nodev1::RuntimeClass) -> Result<(), FieldError> {
    for (k, v) in rc
        .overhead
        .as_ref()
        .and_then(|o| o.pod_fixed.as_ref())
        .into_iter()
        .flatten()
    {
        resource_quantity(&v.0, || format!("overhead.podFixed.{k}"))?;
    }
    Ok(())
}

/// A coscheduling PodGroup (scheduler-plugins CRD), as read from the API or a file.
#[derive(Deserialize, Default)]
pub struct PodGroupObject {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: Option<PodGroupSpec>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct PodGroupSpec {
    pub min_member: Option<i32>,
    pub schedule_timeout_seconds: Option<i32>,
    pub min_resources: Option<BTreeMap<String, K8sQuantity>>,
}

pub fn pod_group(pg: PodGroupObject) -> Result<PodGroup, FieldError> {
    let spec = pg.spec.unwrap_or_default();
    let mut min_resources = BTreeMap::new();
    for (k, v) in spec.min_resources.unwrap_or_default() {
        resource_quantity(&v.0, || format!("spec.minResources.{k}"))?;
        min_resources.insert(k, v.0);
    }
    Ok(PodGroup {
        namespace: pg
            .metadata
            .namespace
            .clone()
            .unwrap_or_else(|| "default".into()),
        name: pg.metadata.name.clone().unwrap_or_default(),
        min_member: spec.min_member.unwrap_or(0),
        schedule_timeout_seconds: spec.schedule_timeout_seconds,
        min_resources,
        creation_timestamp: pg.metadata.creation_timestamp.as_ref().map(|t| t.0),
    })
}

/// A pod converted to the scheduler's view, before priority admission (which needs
/// every PriorityClass, and a snapshot may list them after the pods).
pub struct ConvertedPod {
    pub pod: Pod,
    pub explicit_priority: bool,
    pub explicit_policy: bool,
    /// Names a RuntimeClass but has no `spec.overhead`: RuntimeClass admission has not
    /// run (a hand-written manifest), so the class's overhead must be added.
    pub needs_overhead: bool,
}

/// Convert a pod manifest; `None` for a terminal pod (Succeeded/Failed), which the
/// scheduler ignores.
pub fn convert_pod(p: &core::Pod) -> Result<Option<ConvertedPod>, FieldError> {
    let phase = p.status.as_ref().and_then(|s| s.phase.as_deref());
    if matches!(phase, Some("Succeeded" | "Failed")) {
        return Ok(None);
    }
    let pod = Pod::from_k8s(p)?;
    let spec = p.spec.as_ref();
    Ok(Some(ConvertedPod {
        pod,
        explicit_priority: spec.is_some_and(|s| s.priority.is_some()),
        explicit_policy: spec.is_some_and(|s| s.preemption_policy.is_some()),
        needs_overhead: spec.is_some_and(|s| {
            s.runtime_class_name
                .as_deref()
                .is_some_and(|r| !r.is_empty())
                && s.overhead.is_none()
        }),
    }))
}

/// RuntimeClass admission: the class's overhead becomes the pod's. True when it
/// changed the pod (it must then be converted again).
pub fn apply_runtime_overhead(
    raw: &mut core::Pod,
    classes: &BTreeMap<String, nodev1::RuntimeClass>,
) -> bool {
    if let Some(spec) = raw.spec.as_mut()
        && spec.overhead.is_none()
        && let Some(rc) = spec
            .runtime_class_name
            .as_deref()
            .and_then(|n| classes.get(n))
        && let Some(fixed) = rc.overhead.as_ref().and_then(|o| o.pod_fixed.clone())
    {
        spec.overhead = Some(fixed);
        return true;
    }
    false
}

// ---------------------------------------------------------------------------------
// Priority admission

/// The built-in classes the API server creates at start-up.
const SYSTEM_CLASSES: [(&str, i32); 2] = [
    ("system-cluster-critical", 2_000_000_000),
    ("system-node-critical", 2_000_001_000),
];

pub struct Priorities<'a> {
    classes: &'a BTreeMap<String, scheduling::PriorityClass>,
    /// The globalDefault class; with several, the lowest value (as admission picks).
    default: Option<&'a scheduling::PriorityClass>,
}

fn policy_of(s: Option<&str>) -> PreemptionPolicy {
    match s {
        Some("Never") => PreemptionPolicy::Never,
        _ => PreemptionPolicy::PreemptLowerPriority,
    }
}

impl<'a> Priorities<'a> {
    pub fn new(classes: &'a BTreeMap<String, scheduling::PriorityClass>) -> Self {
        let mut default: Option<&scheduling::PriorityClass> = None;
        for pc in classes.values() {
            if pc.global_default == Some(true) && default.is_none_or(|d| pc.value < d.value) {
                default = Some(pc);
            }
        }
        Priorities { classes, default }
    }

    /// The Priority admission plugin: the class's value (an explicit `spec.priority`
    /// is kept: the pod was admitted already) and its preemption policy when the pod
    /// has none. Err(class name) when the pod names a class that does not exist.
    pub fn admit(
        &self,
        pod: &mut Pod,
        explicit_priority: bool,
        explicit_policy: bool,
    ) -> Result<(), String> {
        let (value, policy) = match pod.priority_class_name.as_deref() {
            Some(name) => match self.classes.get(name) {
                Some(pc) => (pc.value, Some(policy_of(pc.preemption_policy.as_deref()))),
                None => match SYSTEM_CLASSES.iter().find(|(n, _)| *n == name) {
                    Some(&(_, v)) => (v, Some(PreemptionPolicy::PreemptLowerPriority)),
                    None if explicit_priority => return Ok(()),
                    None => return Err(name.to_string()),
                },
            },
            None => match self.default {
                Some(pc) => {
                    if !explicit_priority {
                        pod.priority_class_name = pc.metadata.name.clone();
                    }
                    (pc.value, Some(policy_of(pc.preemption_policy.as_deref())))
                }
                None => (0, None),
            },
        };
        if !explicit_priority {
            pod.priority = value;
        }
        if !explicit_policy && let Some(p) = policy {
            pod.preemption_policy = p;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pc(name: &str, value: i32, global: bool, policy: Option<&str>) -> scheduling::PriorityClass {
        scheduling::PriorityClass {
            metadata: ObjectMeta {
                name: Some(name.into()),
                ..Default::default()
            },
            value,
            global_default: Some(global),
            preemption_policy: policy.map(str::to_string),
            ..Default::default()
        }
    }

    #[test]
    fn priority_admission_table() {
        use PreemptionPolicy::*;
        let mut classes = BTreeMap::new();
        for c in [
            pc("low", 10, false, Some("PreemptLowerPriority")),
            pc("never", 500, false, Some("Never")),
            pc("default-a", 300, true, Some("Never")),
            pc("default-b", 200, true, None),
        ] {
            classes.insert(c.metadata.name.clone().unwrap(), c);
        }
        let with_default = Priorities::new(&classes);
        let no_classes = BTreeMap::new();
        let without_default = Priorities::new(&no_classes);
        // (classes, class name, spec.priority, spec.preemptionPolicy,
        //  expected priority, policy, class name after)
        type Row<'a> = (
            &'a Priorities<'a>,
            Option<&'a str>,
            Option<i32>,
            Option<PreemptionPolicy>,
            i32,
            PreemptionPolicy,
            Option<&'a str>,
        );
        let rows: Vec<Row> = vec![
            (
                &with_default,
                Some("low"),
                None,
                None,
                10,
                PreemptLowerPriority,
                Some("low"),
            ),
            (
                &with_default,
                Some("never"),
                None,
                None,
                500,
                Never,
                Some("never"),
            ),
            (
                &with_default,
                Some("never"),
                None,
                Some(PreemptLowerPriority),
                500,
                PreemptLowerPriority,
                Some("never"),
            ),
            // globalDefault: the lowest-valued default class, its name and policy.
            (
                &with_default,
                None,
                None,
                None,
                200,
                PreemptLowerPriority,
                Some("default-b"),
            ),
            (
                &without_default,
                None,
                None,
                None,
                0,
                PreemptLowerPriority,
                None,
            ),
            (
                &without_default,
                Some("system-cluster-critical"),
                None,
                None,
                2_000_000_000,
                PreemptLowerPriority,
                Some("system-cluster-critical"),
            ),
            (
                &with_default,
                Some("system-node-critical"),
                None,
                None,
                2_000_001_000,
                PreemptLowerPriority,
                Some("system-node-critical"),
            ),
            // An explicit spec.priority wins over the class value.
            (
                &with_default,
                Some("low"),
                Some(7),
                None,
                7,
                PreemptLowerPriority,
                Some("low"),
            ),
            (
                &with_default,
                Some("never"),
                Some(7),
                None,
                7,
                Never,
                Some("never"),
            ),
            (
                &with_default,
                None,
                Some(7),
                None,
                7,
                PreemptLowerPriority,
                None,
            ),
            (
                &without_default,
                Some("gone"),
                Some(7),
                None,
                7,
                PreemptLowerPriority,
                Some("gone"),
            ),
        ];
        for (i, (pr, class, prio, policy, want_prio, want_policy, want_class)) in
            rows.into_iter().enumerate()
        {
            let mut pod = Pod {
                priority_class_name: class.map(str::to_string),
                priority: prio.unwrap_or(0),
                preemption_policy: policy.unwrap_or_default(),
                ..Default::default()
            };
            pr.admit(&mut pod, prio.is_some(), policy.is_some())
                .unwrap_or_else(|e| panic!("row {i}: {e}"));
            assert_eq!(pod.priority, want_prio, "row {i}");
            assert_eq!(pod.preemption_policy, want_policy, "row {i}");
            assert_eq!(pod.priority_class_name.as_deref(), want_class, "row {i}");
        }
        let mut pod = Pod {
            priority_class_name: Some("gone".into()),
            ..Default::default()
        };
        assert_eq!(
            without_default.admit(&mut pod, false, false),
            Err("gone".into())
        );
    }
}
