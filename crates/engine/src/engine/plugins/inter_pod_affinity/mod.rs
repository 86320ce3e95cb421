//! InterPodAffinity (`pkg/scheduler/framework/plugins/interpodaffinity`): required pod
//! affinity / anti-affinity of the incoming pod and required anti-affinity of existing
//! pods filter; preferred terms of both sides (and existing pods' required affinity,
//! weighted by `hardPodAffinityWeight`) score.
//!
//! The incoming pod's terms are parsed once per cycle; existing pods' terms are matched
//! straight from their specs without allocating, since a cycle may visit 150,000 pods.
//! `filtering.rs` holds PreFilter / AddPod / RemovePod / Filter, `scoring.rs` PreScore /
//! Score / Normalize.

use std::collections::BTreeSet;
use std::sync::Arc;

use k8s_openapi::api::core::v1 as core;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::config::field;
use crate::engine::framework::*;
use crate::model::labels::{Labels, Op, Requirement, Selector, label_selector};
use crate::model::{Cluster, Pod, Sym};

pub mod filtering;
mod scoring;

pub const NAME: &str = "InterPodAffinity";

pub const ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH: &str =
    "node(s) didn't satisfy existing pods anti-affinity rules";
pub const ERR_REASON_AFFINITY_RULES_NOT_MATCH: &str = "node(s) didn't match pod affinity rules";
pub const ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH: &str =
    "node(s) didn't match pod anti-affinity rules";

const DEFAULT_HARD_POD_AFFINITY_WEIGHT: i32 = 1;

/// `InterPodAffinityArgs` (kubescheduler.config.k8s.io/v1).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InterPodAffinityArgs {
    /// Score weight of an existing pod's required affinity term matching the incoming
    /// pod; 0..=100, default 1.
    #[serde(default = "default_hard_weight")]
    pub hard_pod_affinity_weight: i32,
    #[serde(default)]
    pub ignore_preferred_terms_of_existing_pods: bool,
}

fn default_hard_weight() -> i32 {
    DEFAULT_HARD_POD_AFFINITY_WEIGHT
}

impl Default for InterPodAffinityArgs {
    fn default() -> Self {
        InterPodAffinityArgs {
            hard_pod_affinity_weight: DEFAULT_HARD_POD_AFFINITY_WEIGHT,
            ignore_preferred_terms_of_existing_pods: false,
        }
    }
}

fn decode_args(user: Option<&Value>, path: &str) -> Result<InterPodAffinityArgs, Vec<String>> {
    match user {
        None | Some(Value::Null) => Ok(InterPodAffinityArgs::default()),
        Some(v) => serde_json::from_value(v.clone())
            .map_err(|e| vec![format!("{path}: decoding InterPodAffinityArgs: {e}")]),
    }
}

/// `ValidateInterPodAffinityArgs`.
pub fn validate_args(args: &InterPodAffinityArgs, path: &str) -> Result<(), Vec<String>> {
    let w = args.hard_pod_affinity_weight;
    if !(0..=100).contains(&w) {
        let p = if path.is_empty() {
            "hardPodAffinityWeight".to_string()
        } else {
            format!("{path}.hardPodAffinityWeight")
        };
        return Err(vec![field::invalid(&p, w, "not in valid range [0, 100]")]);
    }
    Ok(())
}

/// Registry hook: defaults then validation, errors rendered at `path`.
pub fn default_args(user: Option<&Value>, path: &str) -> Result<Value, Vec<String>> {
    let args = decode_args(user, path)?;
    validate_args(&args, path)?;
    serde_json::to_value(&args).map_err(|e| vec![format!("{path}: {e}")])
}

/// Registry constructor from defaulted args.
pub fn new(args: &Value, _fts: &crate::version::Features) -> Result<Arc<dyn Plugin>, String> {
    let args = decode_args(Some(args), "").map_err(|e| e.join(", "))?;
    validate_args(&args, "").map_err(|e| e.join(", "))?;
    Ok(Arc::new(InterPodAffinity { args }))
}

pub struct InterPodAffinity {
    args: InterPodAffinityArgs,
}

impl InterPodAffinity {
    pub fn with_args(args: InterPodAffinityArgs) -> Self {
        InterPodAffinity { args }
    }
}

impl Plugin for InterPodAffinity {
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

// ---------------------------------------------------------------------------
// Terms of the incoming pod (parsed, `fwk.AffinityTerm`)
// ---------------------------------------------------------------------------

/// A parsed term of the incoming pod.
#[derive(Clone, Debug, PartialEq)]
pub struct AffinityTerm {
    pub namespaces: BTreeSet<String>,
    pub namespace_selector: Selector,
    pub selector: Selector,
    pub topology_key: String,
    pub weight: i32,
}

impl AffinityTerm {
    /// `AffinityTerm.Matches`: the pod's namespace is listed or the namespace selector
    /// matches `ns_labels`, and the label selector matches the pod.
    pub fn matches(&self, pod: &Pod, ns_labels: &Labels) -> bool {
        (self.namespaces.contains(pod.namespace.as_str())
            || self.namespace_selector.matches(ns_labels))
            && self.selector.matches(&pod.labels)
    }
}

/// The incoming pod's four term lists.
#[derive(Clone, Debug, Default)]
pub struct PodTerms {
    pub required_affinity: Vec<AffinityTerm>,
    pub required_anti_affinity: Vec<AffinityTerm>,
    pub preferred_affinity: Vec<AffinityTerm>,
    pub preferred_anti_affinity: Vec<AffinityTerm>,
}

pub(crate) fn required_affinity_terms(pod: &Pod) -> &[core::PodAffinityTerm] {
    pod.affinity
        .as_ref()
        .and_then(|a| a.pod_affinity.as_ref())
        .and_then(|a| {
            a.required_during_scheduling_ignored_during_execution
                .as_deref()
        })
        .unwrap_or_default()
}

pub fn required_anti_affinity_terms(pod: &Pod) -> &[core::PodAffinityTerm] {
    pod.affinity
        .as_ref()
        .and_then(|a| a.pod_anti_affinity.as_ref())
        .and_then(|a| {
            a.required_during_scheduling_ignored_during_execution
                .as_deref()
        })
        .unwrap_or_default()
}

pub(crate) fn preferred_affinity_terms(pod: &Pod) -> &[core::WeightedPodAffinityTerm] {
    pod.affinity
        .as_ref()
        .and_then(|a| a.pod_affinity.as_ref())
        .and_then(|a| {
            a.preferred_during_scheduling_ignored_during_execution
                .as_deref()
        })
        .unwrap_or_default()
}

pub(crate) fn preferred_anti_affinity_terms(pod: &Pod) -> &[core::WeightedPodAffinityTerm] {
    pod.affinity
        .as_ref()
        .and_then(|a| a.pod_anti_affinity.as_ref())
        .and_then(|a| {
            a.preferred_during_scheduling_ignored_during_execution
                .as_deref()
        })
        .unwrap_or_default()
}

/// `newAffinityTerm`, with the API server's `matchLabelKeys` / `mismatchLabelKeys`
/// merge applied (MatchLabelKeysInPodAffinity is GA; merging again what the API server
/// already merged adds an identical requirement, so it is harmless).
fn parse_term(owner: &Pod, t: &core::PodAffinityTerm, weight: i32) -> Result<AffinityTerm, String> {
    let mut selector = label_selector(t.label_selector.as_ref())?;
    if t.label_selector.is_some() {
        for (key, op) in label_key_requirements(t) {
            if let Some(v) = owner.labels.get(key) {
                selector.push(Requirement {
                    key: key.clone(),
                    op,
                    values: vec![v.to_string()],
                });
            }
        }
    }
    let namespace_selector = label_selector(t.namespace_selector.as_ref())?;
    let listed = t.namespaces.as_deref().unwrap_or_default();
    let namespaces = if listed.is_empty() && t.namespace_selector.is_none() {
        BTreeSet::from([owner.namespace.to_string()])
    } else {
        listed.iter().cloned().collect()
    };
    Ok(AffinityTerm {
        namespaces,
        namespace_selector,
        selector,
        topology_key: t.topology_key.clone(),
        weight,
    })
}

fn label_key_requirements(t: &core::PodAffinityTerm) -> impl Iterator<Item = (&String, Op)> {
    t.match_label_keys
        .iter()
        .flatten()
        .map(|k| (k, Op::In))
        .chain(
            t.mismatch_label_keys
                .iter()
                .flatten()
                .map(|k| (k, Op::NotIn)),
        )
}

/// `framework.NewPodInfo` for the incoming pod: every list parsed; errors are joined
/// like a Go error aggregate.
pub(crate) fn parse_pod_terms(pod: &Pod) -> Result<PodTerms, String> {
    let mut errs = Vec::new();
    let mut required = |name: &str, terms: &[core::PodAffinityTerm]| {
        terms
            .iter()
            .map(|t| parse_term(pod, t, 0))
            .collect::<Result<Vec<_>, _>>()
            .unwrap_or_else(|e| {
                errs.push(format!("{name}: {e}"));
                Vec::new()
            })
    };
    let required_affinity = required("requiredAffinityTerms", required_affinity_terms(pod));
    let required_anti_affinity = required(
        "requiredAntiAffinityTerms",
        required_anti_affinity_terms(pod),
    );
    let mut weighted = |name: &str, terms: &[core::WeightedPodAffinityTerm]| {
        terms
            .iter()
            .map(|t| parse_term(pod, &t.pod_affinity_term, t.weight))
            .collect::<Result<Vec<_>, _>>()
            .unwrap_or_else(|e| {
                errs.push(format!("{name}: {e}"));
                Vec::new()
            })
    };
    let preferred_affinity = weighted("preferredAffinityTerms", preferred_affinity_terms(pod));
    let preferred_anti_affinity = weighted(
        "preferredAntiAffinityTerms",
        preferred_anti_affinity_terms(pod),
    );
    match errs.len() {
        0 => Ok(PodTerms {
            required_affinity,
            required_anti_affinity,
            preferred_affinity,
            preferred_anti_affinity,
        }),
        1 => Err(errs.remove(0)),
        _ => Err(format!("[{}]", errs.join(", "))),
    }
}

/// `mergeAffinityTermNamespacesIfNotEmpty`: namespaces selected by a non-empty
/// namespace selector are added to the term's namespaces.
///
/// **[QUIRK]** upstream (1.35) merges into a copy of the term, so the selector is not
/// reset to "nothing": it stays and is later matched against an *empty* label set,
/// which a selector of only `NotIn` / `DoesNotExist` requirements matches.
pub(crate) fn merge_namespaces(cluster: &Cluster, term: &mut AffinityTerm) {
    if term.namespace_selector.is_empty() || term.namespace_selector.is_nothing() {
        return;
    }
    for (key, ns) in &cluster.namespaces {
        let name = ns.metadata.name.as_deref().unwrap_or(key);
        if term
            .namespace_selector
            .matches(&cluster.namespace_labels(name))
        {
            term.namespaces.insert(name.to_string());
        }
    }
}

/// `podMatchesAllAffinityTerms`: false for no terms. The incoming pod's selectors were
/// merged into namespaces, so no namespace labels are passed.
pub(crate) fn pod_matches_all_terms(terms: &[AffinityTerm], pod: &Pod) -> bool {
    let empty = Labels::new();
    !terms.is_empty() && terms.iter().all(|t| t.matches(pod, &empty))
}

/// Calls `f(node position, pod)` for every bound pod on a snapshot node that may
/// match `selector`: the label index's candidates when it has some, else every pod.
/// A nil selector matches nothing and visits nothing.
pub fn for_each_candidate<'c>(
    cluster: &'c Cluster,
    selector: &Selector,
    mut f: impl FnMut(usize, &'c Arc<Pod>),
) {
    if selector.is_nothing() {
        return;
    }
    match cluster.label_index().candidates(selector) {
        Some(candidates) => {
            for p in candidates {
                if let Some(pos) = p
                    .node_name
                    .as_ref()
                    .and_then(|n| cluster.node_position_of(n))
                {
                    f(pos, p);
                }
            }
        }
        None => {
            for (pos, info) in cluster.nodes().iter().enumerate() {
                for p in &info.pods {
                    f(pos, p);
                }
            }
        }
    }
}

/// The term whose selector narrows the pods most (all terms must match a pod).
pub(crate) fn most_selective(cluster: &Cluster, terms: &[AffinityTerm]) -> Option<usize> {
    terms
        .iter()
        .enumerate()
        .min_by_key(|(_, t)| {
            if t.selector.is_nothing() {
                return 0;
            }
            cluster
                .label_index()
                .candidates(&t.selector)
                .map_or(usize::MAX, |c| c.len())
        })
        .map(|(i, _)| i)
}

// ---------------------------------------------------------------------------
// Terms of existing pods, matched in place
// ---------------------------------------------------------------------------

/// Whether a raw selector parses (`metav1.LabelSelectorAsSelector` succeeds).
fn raw_selector_valid(sel: Option<&LabelSelector>) -> bool {
    let Some(sel) = sel else { return true };
    sel.match_expressions.iter().flatten().all(|e| {
        let n = e.values.as_ref().map_or(0, Vec::len);
        match e.operator.as_str() {
            "In" | "NotIn" => n > 0,
            "Exists" | "DoesNotExist" => n == 0,
            _ => false,
        }
    })
}

/// A raw, valid selector against labels; nil matches nothing, `{}` everything.
fn raw_selector_matches(sel: Option<&LabelSelector>, labels: &Labels) -> bool {
    let Some(sel) = sel else { return false };
    for (k, v) in sel.match_labels.iter().flatten() {
        if labels.get(k).map(Sym::as_str) != Some(v.as_str()) {
            return false;
        }
    }
    for e in sel.match_expressions.iter().flatten() {
        let got = labels.get(&e.key);
        let values = e.values.as_deref().unwrap_or_default();
        let ok = match e.operator.as_str() {
            "In" => got.is_some_and(|g| values.iter().any(|x| x == g)),
            "NotIn" => got.is_none_or(|g| !values.iter().any(|x| x == g)),
            "Exists" => got.is_some(),
            "DoesNotExist" => got.is_none(),
            _ => false,
        };
        if !ok {
            return false;
        }
    }
    true
}

/// An existing pod's term list as upstream's PodInfo holds it: a list with any term
/// that fails to parse is dropped whole.
pub fn raw_terms_valid<'a>(terms: impl IntoIterator<Item = &'a core::PodAffinityTerm>) -> bool {
    terms.into_iter().all(|t| {
        raw_selector_valid(t.label_selector.as_ref())
            && raw_selector_valid(t.namespace_selector.as_ref())
    })
}

/// `AffinityTerm.Matches` for a term of `owner` (an existing pod) against `target`,
/// without building the term. `target_ns_labels` are the labels of `target`'s
/// namespace.
pub fn raw_term_matches(
    t: &core::PodAffinityTerm,
    owner: &Pod,
    target: &Pod,
    target_ns_labels: &Labels,
) -> bool {
    let listed = t.namespaces.as_deref().unwrap_or_default();
    let ns_ok = if listed.is_empty() && t.namespace_selector.is_none() {
        owner.namespace == target.namespace
    } else {
        listed.iter().any(|n| *n == target.namespace)
            || raw_selector_matches(t.namespace_selector.as_ref(), target_ns_labels)
    };
    if !ns_ok || !raw_selector_matches(t.label_selector.as_ref(), &target.labels) {
        return false;
    }
    if t.label_selector.is_some() {
        for (key, op) in label_key_requirements(t) {
            if let Some(v) = owner.labels.get(key) {
                let same = target.labels.get(key) == Some(v);
                if (op == Op::In) != same {
                    return false;
                }
            }
        }
    }
    true
}

#[cfg(test)]
mod tests;
