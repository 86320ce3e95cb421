//! PodTopologySpread (`pkg/scheduler/framework/plugins/podtopologyspread`): hard
//! constraints (`DoNotSchedule`) filter, soft ones (`ScheduleAnyway`) score. A pod
//! without constraints gets the profile's default constraints, whose selector is
//! deduced from the Services / ReplicationControllers / ReplicaSets / StatefulSets
//! selecting the pod.
//!
//! Split like upstream: this file holds the plugin, its args and what filtering and
//! scoring share (constraint building, inclusion policies); `filtering.rs` holds
//! PreFilter / AddPod / RemovePod / Filter, `scoring.rs` PreScore / Score / Normalize.

use std::sync::Arc;

use k8s_openapi::api::core::v1 as core;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::config::field;
use crate::engine::framework::*;
use crate::engine::plugins::FastMap;
use crate::model::labels::{Labels, NodeSelector, Selector, label_selector};
use crate::model::{Cluster, Node, NodeInfo, Pod, Sym};

pub mod filtering;
mod scoring;

pub const NAME: &str = "PodTopologySpread";

/// Filter reason when a node's domain is too full.
pub const ERR_REASON_CONSTRAINTS_NOT_MATCH: &str =
    "node(s) didn't match pod topology spread constraints";
/// Filter reason when a node lacks a hard constraint's topology key.
pub const ERR_REASON_NODE_LABEL_NOT_MATCH: &str =
    "node(s) didn't match pod topology spread constraints (missing required label)";

pub(crate) const LABEL_HOSTNAME: &str = "kubernetes.io/hostname";
const LABEL_ZONE: &str = "topology.kubernetes.io/zone";

const DO_NOT_SCHEDULE: &str = "DoNotSchedule";
const SCHEDULE_ANYWAY: &str = "ScheduleAnyway";
pub const SYSTEM_DEFAULTING: &str = "System";
const LIST_DEFAULTING: &str = "List";
const POLICY_HONOR: &str = "Honor";

/// `PodTopologySpreadArgs` (kubescheduler.config.k8s.io/v1).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodTopologySpreadArgs {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub default_constraints: Vec<DefaultConstraint>,
    /// `System` (default) or `List`.
    #[serde(default)]
    pub defaulting_type: String,
}

/// One entry of `defaultConstraints`: a `TopologySpreadConstraint` whose required
/// fields may be missing, so that validation (not decoding) reports them as upstream.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DefaultConstraint {
    #[serde(default)]
    pub max_skew: i32,
    #[serde(default)]
    pub topology_key: String,
    #[serde(default)]
    pub when_unsatisfiable: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_selector: Option<LabelSelector>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_domains: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_affinity_policy: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_taints_policy: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub match_label_keys: Vec<String>,
}

impl DefaultConstraint {
    fn to_k8s(&self) -> core::TopologySpreadConstraint {
        core::TopologySpreadConstraint {
            max_skew: self.max_skew,
            topology_key: self.topology_key.clone(),
            when_unsatisfiable: self.when_unsatisfiable.clone(),
            label_selector: self.label_selector.clone(),
            min_domains: self.min_domains,
            node_affinity_policy: self.node_affinity_policy.clone(),
            node_taints_policy: self.node_taints_policy.clone(),
            match_label_keys: (!self.match_label_keys.is_empty())
                .then(|| self.match_label_keys.clone()),
        }
    }
}

/// The system default constraints (`systemDefaultConstraints`).
fn system_default_constraints() -> Vec<core::TopologySpreadConstraint> {
    let c = |key: &str, skew| core::TopologySpreadConstraint {
        max_skew: skew,
        topology_key: key.into(),
        when_unsatisfiable: SCHEDULE_ANYWAY.into(),
        ..Default::default()
    };
    vec![c(LABEL_HOSTNAME, 3), c(LABEL_ZONE, 5)]
}

/// Registry hook: defaults (`defaultingType: System`) then validation, with errors
/// rendered at `path`.
pub fn default_args(user: Option<&Value>, path: &str) -> Result<Value, Vec<String>> {
    let args = decode_args(user, path)?;
    validate_args(&args, path)?;
    serde_json::to_value(&args).map_err(|e| vec![format!("{path}: {e}")])
}

fn decode_args(user: Option<&Value>, path: &str) -> Result<PodTopologySpreadArgs, Vec<String>> {
    let mut args: PodTopologySpreadArgs = match user {
        None | Some(Value::Null) => PodTopologySpreadArgs::default(),
        Some(v) => serde_json::from_value(v.clone())
            .map_err(|e| vec![format!("{path}: decoding PodTopologySpreadArgs: {e}")])?,
    };
    if args.defaulting_type.is_empty() {
        args.defaulting_type = SYSTEM_DEFAULTING.into();
    }
    Ok(args)
}

fn child(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}.{name}")
    }
}

/// `ValidatePodTopologySpreadArgs`.
pub fn validate_args(args: &PodTopologySpreadArgs, path: &str) -> Result<(), Vec<String>> {
    let mut errs = Vec::new();
    let dt_path = child(path, "defaultingType");
    let dt = args.defaulting_type.as_str();
    if dt != SYSTEM_DEFAULTING && dt != LIST_DEFAULTING {
        errs.push(field::not_supported(
            &dt_path,
            dt,
            &[SYSTEM_DEFAULTING, LIST_DEFAULTING],
        ));
    } else if dt == SYSTEM_DEFAULTING && !args.default_constraints.is_empty() {
        errs.push(field::invalid(
            &dt_path,
            dt,
            "when .defaultConstraints are not empty",
        ));
    }
    let dc_path = child(path, "defaultConstraints");
    for (i, c) in args.default_constraints.iter().enumerate() {
        let p = format!("{dc_path}[{i}]");
        if c.max_skew <= 0 {
            errs.push(field::invalid(
                &format!("{p}.maxSkew"),
                c.max_skew,
                "not in valid range (0, inf)",
            ));
        }
        let key_path = format!("{p}.topologyKey");
        if c.topology_key.is_empty() {
            errs.push(field::required(&key_path, "can not be empty"));
        } else {
            for msg in qualified_name_errors(&c.topology_key) {
                errs.push(field::invalid(&key_path, c.topology_key.as_str(), &msg));
            }
        }
        let wu_path = format!("{p}.whenUnsatisfiable");
        if c.when_unsatisfiable.is_empty() {
            errs.push(field::required(&wu_path, "can not be empty"));
        } else if c.when_unsatisfiable != DO_NOT_SCHEDULE && c.when_unsatisfiable != SCHEDULE_ANYWAY
        {
            errs.push(field::not_supported(
                &wu_path,
                c.when_unsatisfiable.as_str(),
                &[DO_NOT_SCHEDULE, SCHEDULE_ANYWAY],
            ));
        }
        if c.label_selector.is_some() {
            errs.push(field::forbidden(
                &format!("{p}.labelSelector"),
                "constraint must not define a selector, as they deduced for each pod",
            ));
        }
        let repeated = args.default_constraints[..i].iter().any(|o| {
            o.topology_key == c.topology_key && o.when_unsatisfiable == c.when_unsatisfiable
        });
        if repeated {
            errs.push(field::duplicate(
                &p,
                format!("{{{}, {}}}", c.topology_key, c.when_unsatisfiable),
            ));
        }
    }
    if errs.is_empty() { Ok(()) } else { Err(errs) }
}

const QUALIFIED_NAME_ERR: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const DNS1123_SUBDOMAIN_ERR: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

/// `validation.IsQualifiedName` (what `ValidateLabelName` reports for a topology key).
fn qualified_name_errors(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_string());
            } else {
                if prefix.len() > 253 {
                    errs.push("prefix part must be no more than 253 characters".to_string());
                }
                if !is_dns1123_subdomain(prefix) {
                    errs.push(format!("prefix part {DNS1123_SUBDOMAIN_ERR}"));
                }
            }
            *name
        }
        _ => {
            errs.push(format!(
                "a qualified name {QUALIFIED_NAME_ERR} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
            ));
            return errs;
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_string());
    } else if name.len() > 63 {
        errs.push("name part must be no more than 63 characters".to_string());
    }
    let alnum = |c: u8| c.is_ascii_alphanumeric();
    let bytes = name.as_bytes();
    let ok = !bytes.is_empty()
        && alnum(bytes[0])
        && alnum(bytes[bytes.len() - 1])
        && bytes
            .iter()
            .all(|&c| alnum(c) || c == b'-' || c == b'_' || c == b'.');
    if !ok {
        errs.push(format!("name part {QUALIFIED_NAME_ERR}"));
    }
    errs
}

fn is_dns1123_subdomain(s: &str) -> bool {
    let lower_alnum = |c: u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    s.split('.').all(|label| {
        let b = label.as_bytes();
        !b.is_empty()
            && lower_alnum(b[0])
            && lower_alnum(b[b.len() - 1])
            && b.iter().all(|&c| lower_alnum(c) || c == b'-')
    })
}

/// A constraint with its selector parsed (`topologySpreadConstraint`).
#[derive(Clone, Debug, PartialEq)]
pub struct Constraint {
    pub max_skew: i32,
    pub topology_key: String,
    pub selector: Selector,
    pub min_domains: i32,
    pub honor_node_affinity: bool,
    pub honor_node_taints: bool,
}

impl Constraint {
    pub fn is_hostname(&self) -> bool {
        self.topology_key == LABEL_HOSTNAME
    }
}

/// `countPodsMatchSelector`: pods of `namespace` matching the selector, terminating
/// pods excluded. **[QUIRK]** an empty selector (`{}`) counts nothing.
pub(crate) fn count_matching(pods: &[Arc<Pod>], selector: &Selector, namespace: &Sym) -> i64 {
    if selector.is_empty() {
        return 0;
    }
    pods.iter()
        .filter(|p| {
            p.deletion_timestamp.is_none()
                && p.namespace == *namespace
                && selector.matches(&p.labels)
        })
        .count() as i64
}

/// [`count_matching`] for every node at once, indexed like `cluster.nodes()`. Visits
/// only the pods the label index offers for the selector when it can.
pub(crate) fn counts_per_node(cluster: &Cluster, selector: &Selector, namespace: &Sym) -> Vec<i64> {
    let nodes = cluster.nodes();
    let mut out = vec![0; nodes.len()];
    if selector.is_empty() || selector.is_nothing() {
        return out;
    }
    match cluster.label_index().candidates(selector) {
        Some(candidates) => {
            for p in candidates {
                if p.deletion_timestamp.is_none()
                    && p.namespace == *namespace
                    && selector.matches(&p.labels)
                    && let Some(pos) = p
                        .node_name
                        .as_ref()
                        .and_then(|n| cluster.node_position_of(n))
                {
                    out[pos] += 1;
                }
            }
        }
        None => {
            for (slot, info) in out.iter_mut().zip(nodes) {
                *slot = count_matching(&info.pods, selector, namespace);
            }
        }
    }
    out
}

/// [`counts_per_node`] for each constraint; constraints with an identical selector
/// share one vector.
pub(crate) fn node_counts_by_selector(
    cluster: &Cluster,
    constraints: &[Constraint],
    namespace: &Sym,
) -> Vec<Arc<Vec<i64>>> {
    let mut out: Vec<Arc<Vec<i64>>> = Vec::with_capacity(constraints.len());
    for (i, c) in constraints.iter().enumerate() {
        let shared = constraints[..i]
            .iter()
            .position(|o| o.selector == c.selector)
            .map(|j| out[j].clone());
        out.push(
            shared.unwrap_or_else(|| Arc::new(counts_per_node(cluster, &c.selector, namespace))),
        );
    }
    out
}

/// Every node's value of one topology key, interned: `ids[pos]` (positions of
/// `cluster.nodes()`) indexes `names`, [`NO_DOMAIN`] when the node lacks the label.
/// Built once per set of nodes (pods coming and going keep it), so that a cycle
/// reads a domain per node from a vector instead of searching its labels.
#[derive(Debug, Default)]
pub(crate) struct NodeDomains {
    pub ids: Vec<u32>,
    pub names: Vec<Arc<str>>,
    /// value → id.
    pub index: FastMap<Arc<str>, u32>,
    /// Where a node without the label counts when it is read as the value `""` (as
    /// upstream reads a missing label): the id of a label set to `""`, else the slot
    /// after the names.
    pub empty_slot: usize,
}

impl NodeDomains {
    /// The node's domain slot, a missing label counting as `""` (`< names.len() + 1`).
    pub fn value_slot(&self, pos: usize) -> usize {
        match self.ids[pos] {
            NO_DOMAIN => self.empty_slot,
            id => id as usize,
        }
    }
}

pub(crate) const NO_DOMAIN: u32 = u32::MAX;

/// The cluster's [`NodeDomains`] for `key`.
pub(crate) fn node_domains(cluster: &Cluster, key: &str) -> Arc<NodeDomains> {
    cluster.node_derived(&domains_cache_key(key), |c| {
        NodeDomains::build(c.nodes().iter().map(|info| &*info.node), key)
    })
}

/// Where the cluster's node cache keeps the [`NodeDomains`] of `key`.
fn domains_cache_key(key: &str) -> String {
    format!("PodTopologySpread/domains/{key}")
}

impl NodeDomains {
    /// The domains of `key` over `nodes`, in the cluster's node order.
    fn build<'a>(nodes: impl ExactSizeIterator<Item = &'a Node>, key: &str) -> Self {
        let mut out = NodeDomains {
            ids: Vec::with_capacity(nodes.len()),
            ..Default::default()
        };
        for node in nodes {
            let id = match node.labels.get(key) {
                None => NO_DOMAIN,
                Some(v) => match out.index.get(v.as_str()) {
                    Some(&id) => id,
                    None => {
                        let name: Arc<str> = Arc::from(v.as_str());
                        let id = out.names.len() as u32;
                        out.index.insert(name.clone(), id);
                        out.names.push(name);
                        id
                    }
                },
            };
            out.ids.push(id);
        }
        out.empty_slot = out.index.get("").map_or(out.names.len(), |&id| id as usize);
        out
    }
}

/// The domains of the system default constraints' keys (hostname and zone), which
/// every pod without constraints of its own is spread by in PreScore, built from
/// `nodes` (the cluster's, in its order) ahead of the first cycle; see
/// [`crate::engine::prepare`].
pub(crate) fn default_domains(nodes: &[Arc<Node>]) -> Vec<(String, NodeDomains)> {
    system_default_constraints()
        .iter()
        .map(|c| {
            let key = &c.topology_key;
            let built = NodeDomains::build(nodes.iter().map(|n| &**n), key);
            (domains_cache_key(key), built)
        })
        .collect()
}

/// `nodeLabelsMatchSpreadConstraints`: the node has every constraint's key.
pub(crate) fn node_has_all_keys(node: &Node, constraints: &[Constraint]) -> bool {
    constraints
        .iter()
        .all(|c| node.labels.contains_key(&c.topology_key))
}

/// The pod's nodeSelector plus required node affinity
/// (`nodeaffinity.GetRequiredNodeAffinity`); parse errors never match.
#[derive(Clone, Debug, Default)]
pub(crate) struct RequiredNodeAffinity {
    node_selector: Option<Labels>,
    required: Option<NodeSelector>,
}

impl RequiredNodeAffinity {
    pub fn from_pod(pod: &Pod) -> Self {
        RequiredNodeAffinity {
            node_selector: pod.node_selector.as_ref().map(Labels::from),
            required: pod
                .affinity
                .as_ref()
                .and_then(|a| a.node_affinity.as_ref())
                .and_then(|na| {
                    na.required_during_scheduling_ignored_during_execution
                        .as_ref()
                })
                .map(NodeSelector::parse),
        }
    }

    /// Whether the pod has neither a nodeSelector nor required node affinity: then
    /// every node matches.
    pub fn is_empty(&self) -> bool {
        self.node_selector.as_ref().is_none_or(Labels::is_empty) && self.required.is_none()
    }

    pub fn matches(&self, node: &Node) -> bool {
        if let Some(sel) = &self.node_selector
            && !sel.iter().all(|(k, v)| node.labels.get(k) == Some(v))
        {
            return false;
        }
        match &self.required {
            Some(ns) => ns.matches(&node.name, &node.labels),
            None => true,
        }
    }
}

/// `v1.Toleration.ToleratesTaint` with the comparison operators' gate off.
fn tolerates(t: &core::Toleration, taint: &core::Taint) -> bool {
    if let Some(e) = t.effect.as_deref()
        && !e.is_empty()
        && e != taint.effect
    {
        return false;
    }
    if let Some(k) = t.key.as_deref()
        && !k.is_empty()
        && k != taint.key
    {
        return false;
    }
    match t.operator.as_deref().unwrap_or("") {
        "" | "Equal" => t.value.as_deref().unwrap_or("") == taint.value.as_deref().unwrap_or(""),
        "Exists" => true,
        _ => false,
    }
}

/// Whether some NoSchedule / NoExecute taint of the node is not tolerated.
pub(crate) fn has_untolerated_hard_taint(node: &Node, tolerations: &[core::Toleration]) -> bool {
    node.taints.iter().any(|taint| {
        (taint.effect == "NoSchedule" || taint.effect == "NoExecute")
            && !tolerations.iter().any(|t| tolerates(t, taint))
    })
}

/// `matchNodeInclusionPolicies`, with each policy's per-node result computed at most
/// once per node (both are properties of the pod and the node, not the constraint).
pub(crate) struct Inclusion<'a> {
    pod: &'a Pod,
    affinity: &'a RequiredNodeAffinity,
    node: &'a Node,
    affinity_ok: Option<bool>,
    taints_ok: Option<bool>,
}

impl<'a> Inclusion<'a> {
    pub fn new(pod: &'a Pod, affinity: &'a RequiredNodeAffinity, node: &'a Node) -> Self {
        Inclusion {
            pod,
            affinity,
            node,
            affinity_ok: None,
            taints_ok: None,
        }
    }

    /// Whether every node passes every constraint's inclusion policies: no constraint
    /// honors taints, and those honoring node affinity have none to honor. Then
    /// [`Inclusion::matches`] need not be asked node by node.
    pub fn includes_every_node(
        constraints: &[Constraint],
        affinity: &RequiredNodeAffinity,
    ) -> bool {
        constraints
            .iter()
            .all(|c| !c.honor_node_taints && (!c.honor_node_affinity || affinity.is_empty()))
    }

    pub fn matches(&mut self, c: &Constraint) -> bool {
        if c.honor_node_affinity
            && !*self
                .affinity_ok
                .get_or_insert_with(|| self.affinity.matches(self.node))
        {
            return false;
        }
        if c.honor_node_taints
            && !*self.taints_ok.get_or_insert_with(|| {
                !has_untolerated_hard_taint(self.node, &self.pod.tolerations)
            })
        {
            return false;
        }
        true
    }
}

/// `mergeLabelSetWithSelector`: `matchLabelKeys` values ANDed into the selector. A
/// nil selector (matches nothing) stays as it is.
fn merge_label_set(match_labels: Labels, selector: Selector) -> Selector {
    let Some(reqs) = selector.requirements else {
        return selector;
    };
    let mut merged = Selector::from_map(&match_labels);
    for r in reqs {
        merged.push(r);
    }
    merged
}

/// The plugin, as built from its args.
pub struct PodTopologySpread {
    /// Constraints given to pods without their own (`System` or `List` defaults).
    default_constraints: Vec<core::TopologySpreadConstraint>,
    system_defaulted: bool,
}

impl PodTopologySpread {
    pub fn new(args: &PodTopologySpreadArgs) -> Result<Self, String> {
        validate_args(args, "").map_err(|e| join_errors(&e))?;
        let system_defaulted = args.defaulting_type == SYSTEM_DEFAULTING;
        let default_constraints = if system_defaulted {
            system_default_constraints()
        } else {
            args.default_constraints
                .iter()
                .map(DefaultConstraint::to_k8s)
                .collect()
        };
        Ok(PodTopologySpread {
            default_constraints,
            system_defaulted,
        })
    }

    /// `filterTopologySpreadConstraints`: the constraints with `action`, selectors
    /// parsed, `matchLabelKeys` merged (MatchLabelKeysInPodTopologySpread is on).
    fn filter_constraints(
        constraints: &[core::TopologySpreadConstraint],
        pod_labels: &Labels,
        action: &str,
    ) -> Result<Vec<Constraint>, String> {
        let mut out = Vec::new();
        for c in constraints
            .iter()
            .filter(|c| c.when_unsatisfiable == action)
        {
            let mut selector = label_selector(c.label_selector.as_ref())?;
            let keys = c.match_label_keys.as_deref().unwrap_or_default();
            if !keys.is_empty() {
                let match_labels: Labels = keys
                    .iter()
                    .filter_map(|k| pod_labels.get(k).map(|v| (k.clone(), v.clone())))
                    .collect();
                if !match_labels.is_empty() {
                    selector = merge_label_set(match_labels, selector);
                }
            }
            out.push(Constraint {
                max_skew: c.max_skew,
                topology_key: c.topology_key.clone(),
                selector,
                min_domains: c.min_domains.unwrap_or(1),
                honor_node_affinity: c.node_affinity_policy.as_deref().unwrap_or(POLICY_HONOR)
                    == POLICY_HONOR,
                honor_node_taints: c.node_taints_policy.as_deref() == Some(POLICY_HONOR),
            });
        }
        Ok(out)
    }

    /// `buildDefaultConstraints`.
    fn build_default_constraints(
        &self,
        cluster: &Cluster,
        pod: &Pod,
        action: &str,
    ) -> Result<Vec<Constraint>, String> {
        let mut constraints =
            Self::filter_constraints(&self.default_constraints, &pod.labels, action)?;
        if constraints.is_empty() {
            return Ok(constraints);
        }
        let selector = default_selector(cluster, pod);
        if selector.is_empty() {
            return Ok(Vec::new());
        }
        for c in &mut constraints {
            c.selector = selector.clone();
        }
        Ok(constraints)
    }
}

fn join_errors(errs: &[String]) -> String {
    if errs.len() == 1 {
        errs[0].clone()
    } else {
        format!("[{}]", errs.join(", "))
    }
}

fn object_namespace(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> &str {
    meta.namespace.as_deref().unwrap_or("default")
}

/// `helper.DefaultSelector`: equality requirements merged from the Services selecting
/// the pod and a controlling ReplicationController, plus the requirements of a
/// controlling `apps/v1` ReplicaSet or StatefulSet.
pub(crate) fn default_selector(cluster: &Cluster, pod: &Pod) -> Selector {
    let mut label_set = Labels::new();
    for svc in cluster.services.values() {
        if object_namespace(&svc.metadata) != pod.namespace {
            continue;
        }
        // A nil service selector matches nothing (not everything).
        let Some(sel) = svc.spec.as_ref().and_then(|s| s.selector.as_ref()) else {
            continue;
        };
        if sel
            .iter()
            .all(|(k, v)| pod.labels.get(k).is_some_and(|x| x == v))
        {
            label_set.extend(sel.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
    }
    let mut selector = Selector::from_map(&label_set);

    let Some(owner) = pod
        .owner_references
        .iter()
        .find(|o| o.controller == Some(true))
    else {
        return selector;
    };
    let same = |meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta| {
        object_namespace(meta) == pod.namespace && meta.name.as_deref() == Some(&owner.name)
    };
    let add_requirements = |selector: &mut Selector, sel: Option<&LabelSelector>| {
        // A selector that fails to parse, or a nil one, adds nothing.
        if sel.is_none() {
            return;
        }
        if let Ok(parsed) = label_selector(sel)
            && let Some(reqs) = parsed.requirements
        {
            for r in reqs {
                selector.push(r);
            }
        }
    };
    match (owner.api_version.as_str(), owner.kind.as_str()) {
        ("v1", "ReplicationController") => {
            if let Some(rc) = cluster
                .replication_controllers
                .values()
                .find(|rc| same(&rc.metadata))
            {
                if let Some(sel) = rc.spec.as_ref().and_then(|s| s.selector.as_ref()) {
                    label_set.extend(sel.iter().map(|(k, v)| (k.clone(), v.clone())));
                }
                selector = Selector::from_map(&label_set);
            }
        }
        ("apps/v1", "ReplicaSet") => {
            if let Some(rs) = cluster.replica_sets.values().find(|rs| same(&rs.metadata)) {
                add_requirements(&mut selector, rs.spec.as_ref().map(|s| &s.selector));
            }
        }
        ("apps/v1", "StatefulSet") => {
            if let Some(ss) = cluster.stateful_sets.values().find(|ss| same(&ss.metadata)) {
                add_requirements(&mut selector, ss.spec.as_ref().map(|s| &s.selector));
            }
        }
        _ => {}
    }
    selector
}

impl Plugin for PodTopologySpread {
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

/// Registry constructor from defaulted args.
pub fn new(args: &Value, _fts: &crate::version::Features) -> Result<Arc<dyn Plugin>, String> {
    let args = decode_args(Some(args), "").map_err(|e| join_errors(&e))?;
    Ok(Arc::new(PodTopologySpread::new(&args)?))
}

#[cfg(test)]
pub(crate) mod tests;

/// CPU time of the current thread (ns), from `/proc/thread-self/schedstat`: timings on
/// a shared machine are otherwise dominated by waiting for a core.
#[cfg(test)]
pub(crate) fn thread_cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// A synthetic cluster for the performance checks: `nodes` nodes in 10 zones with
/// `per_node` pods each; every third pod has required anti-affinity on hostname and
/// every fifth preferred affinity, as deployments often do.
#[cfg(test)]
pub(crate) fn perf_cluster(nodes: usize, per_node: usize) -> Cluster {
    use k8s_openapi::api::core::v1 as core;
    let mut c = Cluster::new();
    for i in 0..nodes {
        let name = format!("node-{i:05}");
        let mut labels = Labels::new();
        labels.insert(LABEL_HOSTNAME.into(), name.clone());
        labels.insert(LABEL_ZONE.into(), format!("zone-{}", i % 10));
        labels.insert("topology.kubernetes.io/region".into(), "r".into());
        labels.insert("kubernetes.io/os".into(), "linux".into());
        c.upsert_node(Node {
            name: name.into(),
            labels,
            ..Default::default()
        });
    }
    let term = |app: &str, key: &str| core::PodAffinityTerm {
        topology_key: key.into(),
        label_selector: Some(LabelSelector {
            match_labels: Some([("app".to_string(), app.to_string())].into()),
            ..Default::default()
        }),
        ..Default::default()
    };
    for i in 0..nodes * per_node {
        let app = format!("app-{}", i % 500);
        let mut labels = Labels::new();
        labels.insert("app".into(), app.clone());
        labels.insert("pod-template-hash".into(), format!("h{}", i % 7));
        let mut affinity = core::Affinity::default();
        if i % 3 == 0 {
            affinity.pod_anti_affinity = Some(core::PodAntiAffinity {
                required_during_scheduling_ignored_during_execution: Some(vec![term(
                    &app,
                    LABEL_HOSTNAME,
                )]),
                ..Default::default()
            });
        }
        if i % 5 == 0 {
            affinity.pod_affinity = Some(core::PodAffinity {
                preferred_during_scheduling_ignored_during_execution: Some(vec![
                    core::WeightedPodAffinityTerm {
                        weight: 10,
                        pod_affinity_term: term(&app, LABEL_ZONE),
                    },
                ]),
                ..Default::default()
            });
        }
        let has = affinity.pod_affinity.is_some() || affinity.pod_anti_affinity.is_some();
        c.upsert_pod(Pod {
            uid: format!("uid-{i}"),
            namespace: "default".into(),
            name: format!("pod-{i}"),
            labels,
            node_name: Some(format!("node-{:05}", i % nodes).into()),
            affinity: has.then(|| Box::new(affinity)),
            ..Default::default()
        });
    }
    c
}
