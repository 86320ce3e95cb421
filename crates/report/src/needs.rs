//! The pod's own needs: everything in its spec that kube-scheduler's plugins read,
//! written the way `kubectl describe` writes it, in a stable order. Derived once from
//! the model (requests are the model's, as NodeResourcesFit filters with them) and
//! the cluster (a volume's claim and its binding, a ResourceClaim's allocation), and
//! drawn alike by the `explain` table, its JSON and the inspector.

use k8s_openapi::api::core::v1 as core;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use schedscope_engine::engine::plugins::volume_util::{
    ephemeral_claim_name, pvc_class, pvc_volume_name,
};
use schedscope_engine::model::pod::PreemptionPolicy;
use schedscope_engine::model::resource::{CPU, EPHEMERAL_STORAGE, MEMORY, PODS};
use schedscope_engine::model::{Cluster, Pod, Resource};

use super::format::exact_amount;

/// What the pod asks of a node and of the scheduler. Lists are empty when the pod
/// sets nothing; every text is ready to print.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PodNeeds {
    /// The requests NodeResourcesFit filters with (containers, the largest init
    /// container, sidecars, pod-level requests, overhead): `(resource, amount)`.
    pub requests: Vec<(String, String)>,
    /// The part of `requests` that is `spec.overhead`.
    pub overhead: Vec<(String, String)>,
    /// `key=value`, by key.
    pub node_selector: Vec<String>,
    /// One entry per node selector term (the terms are ORed).
    pub required_node_affinity: Vec<String>,
    /// `weight N: expressions`.
    pub preferred_node_affinity: Vec<String>,
    pub required_pod_affinity: Vec<String>,
    pub preferred_pod_affinity: Vec<String>,
    pub required_pod_anti_affinity: Vec<String>,
    pub preferred_pod_anti_affinity: Vec<String>,
    /// `key=value:Effect`, as kubectl writes them.
    pub tolerations: Vec<String>,
    pub topology_spread: Vec<String>,
    /// `port/protocol`, with the host IP when it is not the wildcard.
    pub host_ports: Vec<String>,
    /// The volumes a scheduler plugin reads: `name: what`.
    pub volumes: Vec<String>,
    /// `name: claim …`.
    pub resource_claims: Vec<String>,
    pub priority: i32,
    pub priority_class: Option<String>,
    pub preemption_policy: &'static str,
    pub scheduling_gates: Vec<String>,
    pub scheduler_name: String,
}

/// One labelled line of the needs as the table and the inspector print them: the
/// label, then its entries (several entries: one under another).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NeedLine {
    pub label: &'static str,
    pub entries: Vec<String>,
}

/// The scheduler name pods get when they name none.
const DEFAULT_SCHEDULER: &str = "default-scheduler";

impl PodNeeds {
    pub fn of(pod: &Pod, cluster: &Cluster) -> PodNeeds {
        let affinity = pod.affinity.as_ref();
        let node_affinity = affinity.and_then(|a| a.node_affinity.as_ref());
        let pod_affinity = affinity.and_then(|a| a.pod_affinity.as_ref());
        let anti_affinity = affinity.and_then(|a| a.pod_anti_affinity.as_ref());
        PodNeeds {
            requests: resource_list(&pod.requests),
            overhead: resource_list(pod.overhead()),
            node_selector: pod
                .node_selector
                .iter()
                .flatten()
                .map(|(k, v)| format!("{k}={v}"))
                .collect(),
            required_node_affinity: required_node_terms(node_affinity.and_then(|n| {
                n.required_during_scheduling_ignored_during_execution
                    .as_ref()
            })),
            preferred_node_affinity: node_affinity
                .and_then(|n| {
                    n.preferred_during_scheduling_ignored_during_execution
                        .as_ref()
                })
                .into_iter()
                .flatten()
                .map(|p| format!("weight {}: {}", p.weight, node_term(&p.preference)))
                .collect(),
            required_pod_affinity: pod_terms(pod_affinity.and_then(|a| {
                a.required_during_scheduling_ignored_during_execution
                    .as_ref()
            })),
            preferred_pod_affinity: weighted_pod_terms(pod_affinity.and_then(|a| {
                a.preferred_during_scheduling_ignored_during_execution
                    .as_ref()
            })),
            required_pod_anti_affinity: pod_terms(anti_affinity.and_then(|a| {
                a.required_during_scheduling_ignored_during_execution
                    .as_ref()
            })),
            preferred_pod_anti_affinity: weighted_pod_terms(anti_affinity.and_then(|a| {
                a.preferred_during_scheduling_ignored_during_execution
                    .as_ref()
            })),
            tolerations: pod.tolerations.iter().map(toleration).collect(),
            topology_spread: pod
                .topology_spread_constraints
                .iter()
                .map(spread_constraint)
                .collect(),
            host_ports: pod
                .host_ports
                .iter()
                .map(|h| {
                    if h.ip == "0.0.0.0" {
                        format!("{}/{}", h.port, h.protocol)
                    } else {
                        format!("{}:{}/{}", h.ip, h.port, h.protocol)
                    }
                })
                .collect(),
            volumes: pod
                .volumes
                .iter()
                .map(|v| volume(pod, cluster, v))
                .collect(),
            resource_claims: pod
                .resource_claims
                .iter()
                .map(|c| resource_claim(pod, cluster, c))
                .collect(),
            priority: pod.priority,
            priority_class: pod.priority_class_name.clone(),
            preemption_policy: match pod.preemption_policy {
                PreemptionPolicy::PreemptLowerPriority => "PreemptLowerPriority",
                PreemptionPolicy::Never => "Never",
            },
            scheduling_gates: pod.scheduling_gates.clone(),
            scheduler_name: pod.scheduler_name.clone(),
        }
    }

    /// The lines worth printing, in a fixed order: only what the pod sets (a priority
    /// line when it has a priority, a class or the Never policy; a schedulerName line
    /// when it is not the default one).
    pub fn lines(&self) -> Vec<NeedLine> {
        let mut out = Vec::new();
        // A line when there is anything to say.
        let mut line = |label: &'static str, entries: Vec<String>| {
            if !entries.is_empty() {
                out.push(NeedLine { label, entries });
            }
        };
        // Short items share one entry; long ones (terms, constraints, volumes) get one
        // each.
        let joined = |items: &[String]| -> Vec<String> {
            (!items.is_empty())
                .then(|| items.join(", "))
                .into_iter()
                .collect()
        };
        let kinds = |required: &[String], preferred: &[String]| -> Vec<String> {
            let required = required.iter().map(|t| format!("required: {t}"));
            required
                .chain(preferred.iter().map(|t| format!("preferred {t}")))
                .collect()
        };
        let pairs = |list: &[(String, String)]| -> Vec<String> {
            list.iter().map(|(k, v)| format!("{k} {v}")).collect()
        };
        let mut requests = joined(&pairs(&self.requests));
        if let Some(r) = requests.first_mut()
            && !self.overhead.is_empty()
        {
            r.push_str(&format!(
                " (incl. overhead {})",
                pairs(&self.overhead).join(", ")
            ));
        }
        line("requests", requests);
        line("nodeSelector", joined(&self.node_selector));
        line(
            "node affinity",
            kinds(&self.required_node_affinity, &self.preferred_node_affinity),
        );
        line(
            "pod affinity",
            kinds(&self.required_pod_affinity, &self.preferred_pod_affinity),
        );
        line(
            "pod anti-affinity",
            kinds(
                &self.required_pod_anti_affinity,
                &self.preferred_pod_anti_affinity,
            ),
        );
        line("tolerations", self.tolerations.clone());
        line("topology spread", self.topology_spread.clone());
        line("host ports", joined(&self.host_ports));
        line("volumes", self.volumes.clone());
        line("resource claims", self.resource_claims.clone());
        let set = self.priority != 0 || self.priority_class.is_some();
        if set || self.preemption_policy == "Never" {
            line("priority", vec![self.priority_text()]);
        }
        line("scheduling gates", joined(&self.scheduling_gates));
        if self.scheduler_name != DEFAULT_SCHEDULER {
            line("schedulerName", vec![self.scheduler_name.clone()]);
        }
        out
    }

    /// `1000 (class high), preemptionPolicy Never`.
    pub fn priority_text(&self) -> String {
        let mut s = self.priority.to_string();
        if let Some(c) = &self.priority_class {
            s.push_str(&format!(" (class {c})"));
        }
        s.push_str(&format!(", preemptionPolicy {}", self.preemption_policy));
        s
    }
}

/// A resource vector as `(name, amount)`: cpu, memory, ephemeral-storage, pods,
/// then the scalar resources by name; zero amounts left out.
fn resource_list(r: &Resource) -> Vec<(String, String)> {
    let named = [CPU, MEMORY, EPHEMERAL_STORAGE, PODS]
        .into_iter()
        .map(|n| (n.to_string(), r.get(n)));
    named
        .chain(r.scalar.iter().map(|(k, v)| (k.clone(), *v)))
        .filter(|(_, v)| *v != 0)
        .map(|(k, v)| {
            let a = exact_amount(&k, v);
            (k, a)
        })
        .collect()
}

/// `key Op [v1, v2]`, or `key Op` for the operators without values.
fn expression(key: &str, op: &str, values: Option<&Vec<String>>) -> String {
    match values {
        Some(v) if !v.is_empty() => format!("{key} {op} [{}]", v.join(", ")),
        _ => format!("{key} {op}"),
    }
}

/// A node selector term: its label expressions then its field expressions (named as
/// a field selector: `metadata.name` is the node's name, not a label), ANDed.
fn node_term(t: &core::NodeSelectorTerm) -> String {
    let labels = t
        .match_expressions
        .iter()
        .flatten()
        .map(|e| expression(&e.key, &e.operator, e.values.as_ref()));
    let fields = t.match_fields.iter().flatten().map(|e| {
        format!(
            "field selector {}",
            expression(&e.key, &e.operator, e.values.as_ref())
        )
    });
    let parts: Vec<String> = labels.chain(fields).collect();
    if parts.is_empty() {
        // An empty term matches no node.
        "(empty term: matches no node)".into()
    } else {
        parts.join(", ")
    }
}

fn required_node_terms(sel: Option<&core::NodeSelector>) -> Vec<String> {
    let terms = sel.map(|s| s.node_selector_terms.as_slice()).unwrap_or(&[]);
    let many = terms.len() > 1;
    terms
        .iter()
        .enumerate()
        .map(|(i, t)| {
            if many {
                format!("term {} of {}: {}", i + 1, terms.len(), node_term(t))
            } else {
                node_term(t)
            }
        })
        .collect()
}

/// A label selector as `app=web, tier In [db]`; a nil one selects nothing, an empty
/// one everything.
fn label_selector(sel: Option<&LabelSelector>) -> String {
    let Some(sel) = sel else {
        return "no pods (no selector)".into();
    };
    let parts: Vec<String> = sel
        .match_labels
        .iter()
        .flatten()
        .map(|(k, v)| format!("{k}={v}"))
        .chain(
            sel.match_expressions
                .iter()
                .flatten()
                .map(|e| expression(&e.key, &e.operator, e.values.as_ref())),
        )
        .collect();
    if parts.is_empty() {
        "all pods".into()
    } else {
        parts.join(", ")
    }
}

/// `app=web (topologyKey zone, namespaces a, b)`.
fn pod_term(t: &core::PodAffinityTerm) -> String {
    let mut scope = vec![format!("topologyKey {}", t.topology_key)];
    if let Some(ns) = t.namespaces.as_ref().filter(|n| !n.is_empty()) {
        scope.push(format!("namespaces {}", ns.join(", ")));
    }
    if let Some(sel) = &t.namespace_selector {
        scope.push(format!("namespaceSelector {}", namespace_selector(sel)));
    }
    if let Some(keys) = t.match_label_keys.as_ref().filter(|k| !k.is_empty()) {
        scope.push(format!("matchLabelKeys {}", keys.join(", ")));
    }
    if let Some(keys) = t.mismatch_label_keys.as_ref().filter(|k| !k.is_empty()) {
        scope.push(format!("mismatchLabelKeys {}", keys.join(", ")));
    }
    format!(
        "{} ({})",
        label_selector(t.label_selector.as_ref()),
        scope.join(", ")
    )
}

fn namespace_selector(sel: &LabelSelector) -> String {
    let text = label_selector(Some(sel));
    if text == "all pods" {
        "all namespaces".into()
    } else {
        text
    }
}

fn pod_terms(terms: Option<&Vec<core::PodAffinityTerm>>) -> Vec<String> {
    terms.into_iter().flatten().map(pod_term).collect()
}

fn weighted_pod_terms(terms: Option<&Vec<core::WeightedPodAffinityTerm>>) -> Vec<String> {
    terms
        .into_iter()
        .flatten()
        .map(|w| format!("weight {}: {}", w.weight, pod_term(&w.pod_affinity_term)))
        .collect()
}

/// As `kubectl describe` writes a toleration: `key=value:Effect`, `key:Effect
/// op=Exists`, `op=Exists` alone for one that tolerates every taint, and `for Ns`.
fn toleration(t: &core::Toleration) -> String {
    let key = t.key.as_deref().unwrap_or("");
    let value = t.value.as_deref().unwrap_or("");
    let effect = t.effect.as_deref().unwrap_or("");
    let mut s = key.to_string();
    if !value.is_empty() {
        s.push('=');
        s.push_str(value);
    }
    if !effect.is_empty() {
        s.push(':');
        s.push_str(effect);
    }
    if t.operator.as_deref() == Some("Exists") {
        if !s.is_empty() {
            s.push(' ');
        }
        s.push_str("op=Exists");
    }
    if let Some(secs) = t.toleration_seconds {
        s.push_str(&format!(" for {secs}s"));
    }
    s
}

/// `maxSkew 1, topologyKey zone, DoNotSchedule, selector app=web`, then the
/// optional fields the pod sets.
fn spread_constraint(c: &core::TopologySpreadConstraint) -> String {
    let mut parts = vec![
        format!("maxSkew {}", c.max_skew),
        format!("topologyKey {}", c.topology_key),
        c.when_unsatisfiable.clone(),
        format!("selector {}", label_selector(c.label_selector.as_ref())),
    ];
    if let Some(m) = c.min_domains {
        parts.push(format!("minDomains {m}"));
    }
    if let Some(keys) = c.match_label_keys.as_ref().filter(|k| !k.is_empty()) {
        parts.push(format!("matchLabelKeys {}", keys.join(", ")));
    }
    if let Some(p) = &c.node_affinity_policy {
        parts.push(format!("nodeAffinityPolicy {p}"));
    }
    if let Some(p) = &c.node_taints_policy {
        parts.push(format!("nodeTaintsPolicy {p}"));
    }
    parts.join(", ")
}

/// A claim as the volume plugins find it: bound to a PV, or pending with its class.
fn claim_state(cluster: &Cluster, namespace: &str, name: &str) -> String {
    let Some(pvc) = cluster.pvc(namespace, name) else {
        return format!("pvc {name} (not found)");
    };
    let mut parts = Vec::new();
    match pvc_volume_name(pvc) {
        "" => parts.push("unbound".to_string()),
        pv => parts.push(format!("bound to {pv}")),
    }
    match pvc_class(pvc) {
        "" => {}
        class => parts.push(format!("storageClass {class}")),
    }
    format!("pvc {name} ({})", parts.join(", "))
}

fn volume(pod: &Pod, cluster: &Cluster, v: &core::Volume) -> String {
    if let Some(c) = &v.persistent_volume_claim {
        let ro = if c.read_only == Some(true) {
            ", read-only"
        } else {
            ""
        };
        return format!(
            "{}: {}{ro}",
            v.name,
            claim_state(cluster, &pod.namespace, &c.claim_name)
        );
    }
    if let Some(e) = &v.ephemeral {
        let name = ephemeral_claim_name(pod, v);
        if cluster.pvc(&pod.namespace, &name).is_some() {
            return format!(
                "{}: ephemeral, {}",
                v.name,
                claim_state(cluster, &pod.namespace, &name)
            );
        }
        // Not created yet: what the template asks for.
        let spec = e.volume_claim_template.as_ref().map(|t| &t.spec);
        let mut parts = vec![format!("pvc {name} not created yet")];
        if let Some(class) = spec.and_then(|s| s.storage_class_name.as_deref()) {
            parts.push(format!("storageClass {class}"));
        }
        if let Some(q) = spec
            .and_then(|s| s.resources.as_ref())
            .and_then(|r| r.requests.as_ref())
            .and_then(|r| r.get("storage"))
        {
            parts.push(format!("storage {}", q.0));
        }
        return format!("{}: ephemeral, {}", v.name, parts.join(", "));
    }
    // Any other source the model keeps (those kubelet alone reads are left out: see
    // `model::pod`): hostPath, the cloud disks, CSI inline volumes, iSCSI, RBD…; its
    // field name says what it is.
    format!("{}: {}", v.name, volume_kind(v))
}

/// The name of the volume's source field (`gcePersistentDisk`, `csi`, …).
fn volume_kind(v: &core::Volume) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::Object(m)) => m
            .keys()
            .find(|k| k.as_str() != "name")
            .cloned()
            .unwrap_or_else(|| "volume".into()),
        _ => "volume".into(),
    }
}

fn resource_claim(pod: &Pod, cluster: &Cluster, c: &core::PodResourceClaim) -> String {
    let name = if let Some(n) = &c.resource_claim_name {
        n.clone()
    } else if let Some(t) = &c.resource_claim_template_name {
        let generated = pod
            .resource_claim_statuses
            .iter()
            .find(|s| s.name == c.name)
            .and_then(|s| s.resource_claim_name.clone());
        match generated {
            Some(n) => return format!("{}: template {t}, {}", c.name, claim(cluster, pod, &n)),
            None => return format!("{}: template {t}, claim not created yet", c.name),
        }
    } else {
        return format!("{}: names neither a claim nor a template", c.name);
    };
    format!("{}: {}", c.name, claim(cluster, pod, &name))
}

fn claim(cluster: &Cluster, pod: &Pod, name: &str) -> String {
    match cluster.resource_claim(&pod.namespace, name) {
        None if !cluster.dra_objects_known => format!("claim {name}"),
        None => format!("claim {name} (not found)"),
        Some(rc) if rc.status.as_ref().is_some_and(|s| s.allocation.is_some()) => {
            format!("claim {name} (allocated)")
        }
        Some(_) => format!("claim {name} (not allocated)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedscope_engine::model::testing::{cluster, pod};
    use serde_json::{Value, json};

    fn needs_of(spec: Value) -> PodNeeds {
        needs_in(&Cluster::new(), spec)
    }

    fn needs_in(c: &Cluster, spec: Value) -> PodNeeds {
        let mut p = json!({"metadata": {"name": "p", "namespace": "default", "uid": "uid-p"},
            "spec": {"containers": [{"name": "c", "image": "i"}]}});
        for (k, v) in spec.as_object().expect("spec object") {
            p["spec"][k] = v.clone();
        }
        PodNeeds::of(&pod(p), c)
    }

    fn lines(n: &PodNeeds) -> Vec<(&'static str, Vec<String>)> {
        n.lines()
            .into_iter()
            .map(|l| (l.label, l.entries))
            .collect()
    }

    #[test]
    fn a_bare_pod_needs_nothing_worth_a_line() {
        assert_eq!(lines(&needs_of(json!({}))), vec![]);
    }

    #[test]
    fn each_need_is_written_like_kubectl() {
        // (case, spec, the lines: label and entries)
        type Lines<'a> = Vec<(&'a str, Vec<&'a str>)>;
        let cases: Vec<(&str, Value, Lines)> = vec![
            (
                "requests: the largest init container wins, overhead is added",
                json!({"containers": [{"name": "a", "image": "i",
                        "resources": {"requests": {"cpu": "500m", "memory": "1Gi", "nvidia.com/gpu": "1"},
                                      "limits": {"nvidia.com/gpu": "1"}}}],
                    "initContainers": [{"name": "i", "image": "i",
                        "resources": {"requests": {"cpu": "2"}}}],
                    "overhead": {"cpu": "250m", "memory": "64Mi"}}),
                vec![(
                    "requests",
                    vec![
                        "cpu 2250m, memory 1088Mi, nvidia.com/gpu 1 (incl. overhead cpu 250m, memory 64Mi)",
                    ],
                )],
            ),
            (
                "requests: a sidecar adds to the containers",
                json!({"containers": [{"name": "a", "image": "i",
                        "resources": {"requests": {"cpu": "1"}}}],
                    "initContainers": [{"name": "s", "image": "i", "restartPolicy": "Always",
                        "resources": {"requests": {"cpu": "500m"}}}]}),
                vec![("requests", vec!["cpu 1500m"])],
            ),
            (
                "nodeSelector, sorted by key",
                json!({"nodeSelector": {"zone": "a", "disk": "ssd"}}),
                vec![("nodeSelector", vec!["disk=ssd, zone=a"])],
            ),
            (
                "node affinity: one required term, a preferred one",
                json!({"affinity": {"nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                        {"matchExpressions": [
                            {"key": "zone", "operator": "In", "values": ["a", "b"]},
                            {"key": "gpu", "operator": "Exists"}]}]},
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": 20, "preference": {"matchExpressions": [
                            {"key": "disk", "operator": "NotIn", "values": ["hdd"]}]}}]}}}),
                vec![(
                    "node affinity",
                    vec![
                        "required: zone In [a, b], gpu Exists",
                        "preferred weight 20: disk NotIn [hdd]",
                    ],
                )],
            ),
            (
                "node affinity: ORed terms are numbered; fields and empty terms",
                json!({"affinity": {"nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]},
                        {}]}}}}),
                vec![(
                    "node affinity",
                    vec![
                        "required: term 1 of 2: field selector metadata.name In [n1]",
                        "required: term 2 of 2: (empty term: matches no node)",
                    ],
                )],
            ),
            (
                "pod affinity and anti-affinity",
                json!({"affinity": {
                    "podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": 50, "podAffinityTerm": {"topologyKey": "zone",
                            "labelSelector": {"matchLabels": {"app": "cache"}},
                            "namespaces": ["shop", "db"]}}]},
                    "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                        {"topologyKey": "kubernetes.io/hostname",
                         "labelSelector": {"matchExpressions": [
                            {"key": "app", "operator": "In", "values": ["web"]}]},
                         "namespaceSelector": {},
                         "matchLabelKeys": ["pod-template-hash"]}]}}}),
                vec![
                    (
                        "pod affinity",
                        vec![
                            "preferred weight 50: app=cache (topologyKey zone, namespaces shop, db)",
                        ],
                    ),
                    (
                        "pod anti-affinity",
                        vec![
                            "required: app In [web] (topologyKey kubernetes.io/hostname, namespaceSelector all namespaces, matchLabelKeys pod-template-hash)",
                        ],
                    ),
                ],
            ),
            (
                "tolerations",
                json!({"tolerations": [
                    {"key": "gpu", "value": "true", "effect": "NoSchedule"},
                    {"key": "node.kubernetes.io/not-ready", "operator": "Exists",
                     "effect": "NoExecute", "tolerationSeconds": 300},
                    {"operator": "Exists"}]}),
                vec![(
                    "tolerations",
                    vec![
                        "gpu=true:NoSchedule",
                        "node.kubernetes.io/not-ready:NoExecute op=Exists for 300s",
                        "op=Exists",
                    ],
                )],
            ),
            (
                "topology spread",
                json!({"topologySpreadConstraints": [
                    {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
                     "labelSelector": {"matchLabels": {"app": "web"}}, "minDomains": 3,
                     "nodeTaintsPolicy": "Honor"},
                    {"maxSkew": 2, "topologyKey": "kubernetes.io/hostname",
                     "whenUnsatisfiable": "ScheduleAnyway"}]}),
                vec![(
                    "topology spread",
                    vec![
                        "maxSkew 1, topologyKey zone, DoNotSchedule, selector app=web, minDomains 3, nodeTaintsPolicy Honor",
                        "maxSkew 2, topologyKey kubernetes.io/hostname, ScheduleAnyway, selector no pods (no selector)",
                    ],
                )],
            ),
            (
                "host ports, the wildcard address left out",
                json!({"containers": [{"name": "a", "image": "i", "ports": [
                    {"containerPort": 80, "hostPort": 8080},
                    {"containerPort": 53, "hostPort": 53, "protocol": "UDP", "hostIP": "10.0.0.1"},
                    {"containerPort": 9090}]}]}),
                vec![("host ports", vec!["8080/TCP, 10.0.0.1:53/UDP"])],
            ),
            (
                "priority, class and policy; gates; another scheduler",
                json!({"priority": 1000, "priorityClassName": "high",
                    "preemptionPolicy": "Never",
                    "schedulingGates": [{"name": "example.com/quota"}, {"name": "b"}],
                    "schedulerName": "batch"}),
                vec![
                    (
                        "priority",
                        vec!["1000 (class high), preemptionPolicy Never"],
                    ),
                    ("scheduling gates", vec!["example.com/quota, b"]),
                    ("schedulerName", vec!["batch"]),
                ],
            ),
        ];
        for (name, spec, want) in cases {
            let got = lines(&needs_of(spec));
            let want: Vec<(&str, Vec<String>)> = want
                .into_iter()
                .map(|(l, e)| (l, e.into_iter().map(String::from).collect()))
                .collect();
            assert_eq!(got, want, "{name}");
        }
    }

    #[test]
    fn volumes_and_claims_are_looked_up_in_the_cluster() {
        let mut c = cluster(vec![], vec![]);
        for (name, class, pv) in [
            ("data", Some("fast"), Some("pv-1")),
            ("logs", None, None),
            ("p-scratch", Some("local"), None),
        ] {
            let pvc: core::PersistentVolumeClaim = serde_json::from_value(json!({
                "metadata": {"name": name, "namespace": "default"},
                "spec": {"storageClassName": class, "volumeName": pv}}))
            .expect("pvc");
            c.persistent_volume_claims
                .insert(format!("default/{name}"), pvc);
        }
        let claim: schedscope_engine::model::dra::ResourceClaim = serde_json::from_value(json!({
            "metadata": {"name": "gpu-claim", "namespace": "default"},
            "spec": {}, "status": {"allocation": {}}}))
        .expect("claim");
        c.resource_claims_mut()
            .insert("default/gpu-claim".into(), claim);
        c.dra_objects_known = true;
        let n = needs_in(
            &c,
            json!({
                "volumes": [
                    {"name": "data", "persistentVolumeClaim": {"claimName": "data", "readOnly": true}},
                    {"name": "logs", "persistentVolumeClaim": {"claimName": "logs"}},
                    {"name": "gone", "persistentVolumeClaim": {"claimName": "gone"}},
                    {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}},
                    {"name": "tmp", "ephemeral": {"volumeClaimTemplate": {"spec": {
                        "storageClassName": "local",
                        "resources": {"requests": {"storage": "10Gi"}}}}}},
                    {"name": "disk", "gcePersistentDisk": {"pdName": "d1"}},
                    {"name": "config", "configMap": {"name": "cm"}}],
                "resourceClaims": [
                    {"name": "gpu", "resourceClaimName": "gpu-claim"},
                    {"name": "nic", "resourceClaimName": "nic-claim"},
                    {"name": "fpga", "resourceClaimTemplateName": "fpga-tmpl"}]}),
        );
        assert_eq!(
            n.volumes,
            vec![
                "data: pvc data (bound to pv-1, storageClass fast), read-only",
                "logs: pvc logs (unbound)",
                "gone: pvc gone (not found)",
                "scratch: ephemeral, pvc p-scratch (unbound, storageClass local)",
                "tmp: ephemeral, pvc p-tmp not created yet, storageClass local, storage 10Gi",
                "disk: gcePersistentDisk",
            ]
        );
        assert_eq!(
            n.resource_claims,
            vec![
                "gpu: claim gpu-claim (allocated)",
                "nic: claim nic-claim (not found)",
                "fpga: template fpga-tmpl, claim not created yet",
            ]
        );
    }
}
