//! NodeAffinity (PreFilter, Filter, PreScore, Score, NormalizeScore).
//!
//! Filter: the profile's `addedAffinity` required selector, then the pod's
//! `nodeSelector` and required node affinity. PreFilter narrows the cycle to the nodes
//! named by `matchFields metadata.name In` when every term has one. Score: sum of the
//! weights of matching preferred terms (pod's and the profile's), default-normalised.
//!
//! Selectors are parsed here (not with `model::labels`) to keep upstream's parse
//! errors, their field paths for config validation, and the exact matching of
//! `matchFields` keys other than `metadata.name`.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use k8s_openapi::api::core::v1 as core;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::node_resources_fit::{
    aggregate, child, decode_args, encode_args, label_value_errors, qualified_name_errors,
};
use crate::config::field;
use crate::engine::framework::{
    Ctx, CycleState, FilterPlugin, MAX_NODE_SCORE, NodeScore, Plugin, PreFilterPlugin,
    PreFilterResult, PreScorePlugin, ScorePlugin, default_normalize_score,
};
use crate::engine::status::Status;
use crate::model::labels::{LabelLookup, Op, Requirement};
use crate::model::{NodeInfo, Pod};

pub const NAME: &str = "NodeAffinity";
const PRE_FILTER_STATE_KEY: &str = "PreFilterNodeAffinity";
const PRE_SCORE_STATE_KEY: &str = "PreScoreNodeAffinity";
pub const ERR_REASON_POD: &str = "node(s) didn't match Pod's node affinity/selector";
pub const ERR_REASON_ENFORCED: &str = "node(s) didn't match scheduler-enforced node affinity";
pub const ERR_REASON_CONFLICT: &str = "pod affinity terms conflict";
const OBJECT_NAME_FIELD: &str = "metadata.name";

// ---------------------------------------------------------------------------------
// Parsed selectors

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FieldOp {
    Equal,
    NotEqual,
}

/// One node selector term: ANDed label requirements and field requirements. A term
/// with parse errors never matches.
#[derive(Clone, Debug)]
pub struct Term {
    pub labels: Vec<Requirement>,
    pub fields: Vec<(String, FieldOp, String)>,
    pub errors: Vec<String>,
}

impl Term {
    fn is_empty(t: &core::NodeSelectorTerm) -> bool {
        t.match_expressions.as_ref().is_none_or(|v| v.is_empty())
            && t.match_fields.as_ref().is_none_or(|v| v.is_empty())
    }

    /// `newNodeSelectorTerm`, with `path` the term's field path for errors.
    fn parse(t: &core::NodeSelectorTerm, path: &str) -> Term {
        let mut term = Term {
            labels: Vec::new(),
            fields: Vec::new(),
            errors: Vec::new(),
        };
        let exprs = t.match_expressions.as_deref().unwrap_or_default();
        for (i, e) in exprs.iter().enumerate() {
            let p = format!("{}[{i}]", child(path, "matchExpressions"));
            match parse_label_requirement(e, &p) {
                Ok(r) => term.labels.push(r),
                Err(errs) => term.errors.extend(errs),
            }
        }
        let fields = t.match_fields.as_deref().unwrap_or_default();
        for (i, f) in fields.iter().enumerate() {
            let p = format!("{}[{i}]", child(path, "matchFields"));
            let op = match f.operator.as_str() {
                "In" => FieldOp::Equal,
                "NotIn" => FieldOp::NotEqual,
                other => {
                    term.errors.push(field::not_supported(
                        &child(&p, "operator"),
                        other,
                        &["In", "NotIn"],
                    ));
                    continue;
                }
            };
            match f.values.as_deref() {
                Some([v]) => term.fields.push((f.key.clone(), op, v.clone())),
                other => term.errors.push(invalid_values(
                    &child(&p, "values"),
                    other,
                    "must have one element",
                )),
            }
        }
        term
    }

    /// Field selectors see only `metadata.name` (a missing key reads as "").
    pub fn matches(&self, node_name: &str, labels: &(impl LabelLookup + ?Sized)) -> bool {
        if !self.errors.is_empty() {
            return false;
        }
        if !self.labels.iter().all(|r| r.matches(labels)) {
            return false;
        }
        self.fields.iter().all(|(key, op, value)| {
            let have = if key == OBJECT_NAME_FIELD {
                node_name
            } else {
                ""
            };
            match op {
                FieldOp::Equal => have == value,
                FieldOp::NotEqual => have != value,
            }
        })
    }
}

/// Go's `%#v` of a `[]string`, as field errors print slice values.
fn go_string_slice(values: Option<&[String]>) -> String {
    match values {
        None => "[]string(nil)".to_string(),
        Some(vs) => {
            let items: Vec<String> = vs.iter().map(|v| format!("{v:?}")).collect();
            format!("[]string{{{}}}", items.join(", "))
        }
    }
}

fn invalid_values(path: &str, values: Option<&[String]>, detail: &str) -> String {
    format!(
        "{path}: Invalid value: {}: {detail}",
        go_string_slice(values)
    )
}

/// `nodeSelectorRequirementsAsSelector` for one requirement (`labels.NewRequirement`).
fn parse_label_requirement(
    e: &core::NodeSelectorRequirement,
    path: &str,
) -> Result<Requirement, Vec<String>> {
    let op = match e.operator.as_str() {
        "In" => Op::In,
        "NotIn" => Op::NotIn,
        "Exists" => Op::Exists,
        "DoesNotExist" => Op::DoesNotExist,
        "Gt" => Op::Gt,
        "Lt" => Op::Lt,
        other => {
            return Err(vec![field::not_supported(
                &child(path, "operator"),
                other,
                &["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"],
            )]);
        }
    };
    let mut errs = Vec::new();
    let key_errs = qualified_name_errors(&e.key);
    if !key_errs.is_empty() {
        errs.push(field::invalid(
            &child(path, "key"),
            e.key.as_str(),
            &key_errs.join("; "),
        ));
    }
    let values = e.values.as_deref();
    let vals = values.unwrap_or_default();
    let values_path = child(path, "values");
    match op {
        Op::In | Op::NotIn if vals.is_empty() => errs.push(invalid_values(
            &values_path,
            values,
            "for 'in', 'notin' operators, values set can't be empty",
        )),
        Op::Exists | Op::DoesNotExist if !vals.is_empty() => errs.push(invalid_values(
            &values_path,
            values,
            "values set must be empty for exists and does not exist",
        )),
        Op::Gt | Op::Lt => {
            if vals.len() != 1 {
                errs.push(invalid_values(
                    &values_path,
                    values,
                    "for 'Gt', 'Lt' operators, exactly one value is required",
                ));
            }
            for (i, v) in vals.iter().enumerate() {
                if v.parse::<i64>().is_err() {
                    errs.push(field::invalid(
                        &format!("{values_path}[{i}]"),
                        v.as_str(),
                        "for 'Gt', 'Lt' operators, the value must be an integer",
                    ));
                }
            }
        }
        _ => {}
    }
    for (i, v) in vals.iter().enumerate() {
        let v_errs = label_value_errors(v);
        if !v_errs.is_empty() {
            errs.push(field::invalid(
                &format!("{values_path}[{i}][{}]", e.key),
                v.as_str(),
                &v_errs.join("; "),
            ));
        }
    }
    if !errs.is_empty() {
        return Err(errs);
    }
    Ok(Requirement {
        key: e.key.clone(),
        op,
        values: vals.to_vec(),
    })
}

/// A required node selector (OR of terms; empty terms dropped, so none left = no node).
#[derive(Clone, Debug)]
pub struct Selector {
    pub terms: Vec<Term>,
}

impl Selector {
    pub fn parse(ns: &core::NodeSelector, path: &str) -> Selector {
        let tp = child(path, "nodeSelectorTerms");
        Selector {
            terms: ns
                .node_selector_terms
                .iter()
                .enumerate()
                .filter(|(_, t)| !Term::is_empty(t))
                .map(|(i, t)| Term::parse(t, &format!("{tp}[{i}]")))
                .collect(),
        }
    }
    fn errors(&self) -> impl Iterator<Item = &String> {
        self.terms.iter().flat_map(|t| &t.errors)
    }
    fn matches(&self, node: &NodeInfo) -> bool {
        self.terms
            .iter()
            .any(|t| t.matches(node.name(), &node.node.labels))
    }
}

/// Preferred terms with their weights (weight-0 and empty terms dropped).
#[derive(Clone, Debug)]
struct Preferred {
    terms: Vec<(i64, Term)>,
}

impl Preferred {
    /// `NewPreferredSchedulingTerms`: any parse error fails the whole list.
    fn parse(
        terms: &[core::PreferredSchedulingTerm],
        path: &str,
    ) -> Result<Preferred, Vec<String>> {
        let mut out = Vec::new();
        let mut errs = Vec::new();
        for (i, t) in terms.iter().enumerate() {
            if t.weight == 0 || Term::is_empty(&t.preference) {
                continue;
            }
            let term = Term::parse(&t.preference, &format!("{path}[{i}].preference"));
            if term.errors.is_empty() {
                out.push((i64::from(t.weight), term));
            } else {
                errs.extend(term.errors);
            }
        }
        if !errs.is_empty() {
            return Err(errs);
        }
        Ok(Preferred { terms: out })
    }
    fn score(&self, node: &NodeInfo) -> i64 {
        self.terms
            .iter()
            .filter(|(_, t)| t.matches(node.name(), &node.node.labels))
            .map(|(w, _)| *w)
            .sum()
    }
}

// ---------------------------------------------------------------------------------
// Args

/// `NodeAffinityArgs`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NodeAffinityArgs {
    #[serde(default, skip_serializing)]
    pub api_version: Option<String>,
    #[serde(default, skip_serializing)]
    pub kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub added_affinity: Option<core::NodeAffinity>,
}

const REQUIRED_FIELD: &str = "requiredDuringSchedulingIgnoredDuringExecution";
const PREFERRED_FIELD: &str = "preferredDuringSchedulingIgnoredDuringExecution";

impl NodeAffinityArgs {
    /// `ValidateNodeAffinityArgs`.
    pub fn validate(&self, path: &str) -> Vec<String> {
        let Some(a) = &self.added_affinity else {
            return Vec::new();
        };
        let base = child(path, "addedAffinity");
        let mut errs = Vec::new();
        if let Some(ns) = &a.required_during_scheduling_ignored_during_execution {
            errs.extend(
                Selector::parse(ns, &child(&base, REQUIRED_FIELD))
                    .errors()
                    .cloned(),
            );
        }
        if let Some(terms) = &a.preferred_during_scheduling_ignored_during_execution
            && let Err(e) = Preferred::parse(terms, &child(&base, PREFERRED_FIELD))
        {
            errs.extend(e);
        }
        errs
    }
}

/// No defaults; validated by config validation (registered for this plugin).
pub fn args(user: Option<&Value>, path: &str) -> Result<Value, Vec<String>> {
    let a: NodeAffinityArgs = decode_args(user, path)?;
    let errs = a.validate(path);
    if !errs.is_empty() {
        return Err(errs);
    }
    encode_args(&a, path)
}

pub fn new(args: &Value, _fts: &crate::version::Features) -> Result<Arc<dyn Plugin>, String> {
    let a: NodeAffinityArgs = decode_args(Some(args), "").map_err(|e| aggregate(&e))?;
    let errs = a.validate("");
    if !errs.is_empty() {
        return Err(aggregate(&errs));
    }
    let mut pl = NodeAffinity {
        added_required: None,
        added_preferred: None,
    };
    if let Some(added) = &a.added_affinity {
        if let Some(ns) = &added.required_during_scheduling_ignored_during_execution {
            pl.added_required = Some(Selector::parse(ns, ""));
        }
        if let Some(terms) = &added.preferred_during_scheduling_ignored_during_execution
            && !terms.is_empty()
        {
            pl.added_preferred = Some(Preferred::parse(terms, "").map_err(|e| {
                format!("parsing addedAffinity.{PREFERRED_FIELD}: {}", aggregate(&e))
            })?);
        }
    }
    Ok(Arc::new(pl))
}

// ---------------------------------------------------------------------------------
// Plugin

pub struct NodeAffinity {
    added_required: Option<Selector>,
    added_preferred: Option<Preferred>,
}

/// `RequiredNodeAffinity`: the pod's nodeSelector (ANDed equalities) and its required
/// node affinity (lazily erroring: unparseable terms just never match).
#[derive(Clone, Debug)]
struct RequiredAffinity {
    node_selector: Option<BTreeMap<String, String>>,
    affinity: Option<Selector>,
}

impl RequiredAffinity {
    fn of(pod: &Pod) -> RequiredAffinity {
        RequiredAffinity {
            node_selector: pod.node_selector.clone().filter(|m| !m.is_empty()),
            affinity: required_node_affinity(pod).map(|ns| Selector::parse(ns, "")),
        }
    }
    fn matches(&self, node: &NodeInfo) -> bool {
        if let Some(sel) = &self.node_selector
            && !sel
                .iter()
                .all(|(k, v)| node.node.labels.get(k).is_some_and(|x| x == v))
        {
            return false;
        }
        match &self.affinity {
            Some(s) => s.matches(node),
            None => true,
        }
    }
}

pub fn required_node_affinity(pod: &Pod) -> Option<&core::NodeSelector> {
    pod.affinity
        .as_ref()?
        .node_affinity
        .as_ref()?
        .required_during_scheduling_ignored_during_execution
        .as_ref()
}

/// The pod's preferred terms; an empty list counts as none (the API server drops
/// empty lists, so the scheduler never sees one).
fn preferred_node_affinity(pod: &Pod) -> Option<&[core::PreferredSchedulingTerm]> {
    pod.affinity
        .as_ref()?
        .node_affinity
        .as_ref()?
        .preferred_during_scheduling_ignored_during_execution
        .as_deref()
        .filter(|t| !t.is_empty())
}

#[derive(Clone)]
struct PreScoreState {
    preferred: Option<Preferred>,
}

impl Plugin for NodeAffinity {
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

impl PreFilterPlugin for NodeAffinity {
    fn pre_filter(
        &self,
        _cx: &Ctx,
        state: &mut CycleState,
        pod: &Pod,
    ) -> (PreFilterResult, Status) {
        let required = required_node_affinity(pod);
        // An empty nodeSelector map is dropped by the API server: treat it as absent.
        let has_node_selector = pod.node_selector.as_ref().is_some_and(|m| !m.is_empty());
        if required.is_none() && self.added_required.is_none() && !has_node_selector {
            return (None, Status::skip());
        }
        state.write(PRE_FILTER_STATE_KEY, RequiredAffinity::of(pod));
        let Some(required) = required else {
            return (None, Status::success());
        };
        if required.node_selector_terms.is_empty() {
            return (None, Status::success());
        }
        // Affinity to specific nodes: union over terms of the intersection of each
        // term's `metadata.name In` lists. One term without such a field = all nodes.
        let mut node_names: BTreeSet<String> = BTreeSet::new();
        for t in &required.node_selector_terms {
            let mut term_names: Option<BTreeSet<String>> = None;
            for r in t.match_fields.iter().flatten() {
                if r.key == OBJECT_NAME_FIELD && r.operator == "In" {
                    let s: BTreeSet<String> = r.values.iter().flatten().cloned().collect();
                    term_names = Some(match term_names {
                        None => s,
                        Some(prev) => prev.intersection(&s).cloned().collect(),
                    });
                }
            }
            let Some(term_names) = term_names else {
                return (None, Status::success());
            };
            node_names.extend(term_names);
        }
        if node_names.is_empty() {
            return (None, Status::unresolvable(ERR_REASON_CONFLICT));
        }
        (Some(node_names), Status::success())
    }
}

impl FilterPlugin for NodeAffinity {
    fn filter(&self, _cx: &Ctx, state: &CycleState, pod: &Pod, node: &NodeInfo) -> Status {
        if let Some(added) = &self.added_required
            && !added.matches(node)
        {
            return Status::unresolvable(ERR_REASON_ENFORCED);
        }
        let matched = match state.read::<RequiredAffinity>(PRE_FILTER_STATE_KEY) {
            Some(s) => s.matches(node),
            // Upstream recomputes when PreFilter did not run.
            None => RequiredAffinity::of(pod).matches(node),
        };
        if !matched {
            return Status::unresolvable(ERR_REASON_POD);
        }
        Status::success()
    }
}

impl PreScorePlugin for NodeAffinity {
    fn pre_score(&self, _cx: &Ctx, state: &mut CycleState, pod: &Pod, _n: &[&NodeInfo]) -> Status {
        let preferred = match pod_preferred(pod) {
            Ok(p) => p,
            Err(e) => return Status::error(e),
        };
        if preferred.is_none() && self.added_preferred.is_none() {
            return Status::skip();
        }
        state.write(PRE_SCORE_STATE_KEY, PreScoreState { preferred });
        Status::success()
    }
}

fn pod_preferred(pod: &Pod) -> Result<Option<Preferred>, String> {
    match preferred_node_affinity(pod) {
        None => Ok(None),
        Some(terms) => Preferred::parse(terms, "")
            .map(Some)
            .map_err(|e| aggregate(&e)),
    }
}

impl ScorePlugin for NodeAffinity {
    fn score(&self, _cx: &Ctx, state: &CycleState, pod: &Pod, node: &NodeInfo) -> (i64, Status) {
        let mut count = self.added_preferred.as_ref().map_or(0, |p| p.score(node));
        match state.read::<PreScoreState>(PRE_SCORE_STATE_KEY) {
            Some(s) => {
                if let Some(p) = &s.preferred {
                    count += p.score(node);
                }
            }
            None => match pod_preferred(pod) {
                Ok(Some(p)) => count += p.score(node),
                Ok(None) => {}
                Err(e) => return (0, Status::error(e)),
            },
        }
        (count, Status::success())
    }
    fn has_normalize(&self) -> bool {
        true
    }
    fn normalize_score(
        &self,
        _cx: &Ctx,
        _state: &CycleState,
        _pod: &Pod,
        scores: &mut [NodeScore],
    ) -> Status {
        default_normalize_score(MAX_NODE_SCORE, false, scores);
        Status::success()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::status::Code;
    use crate::model::Cluster;
    use crate::model::testing::{cluster, pod};
    use k8s_openapi::jiff::Timestamp;
    use serde_json::json;

    fn node(name: &str, labels: Value) -> Value {
        json!({"metadata": {"name": name, "labels": labels},
               "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}})
    }

    fn pending(spec_extra: Value) -> Pod {
        let mut spec = json!({"containers": [{"name": "c"}]});
        for (k, v) in spec_extra.as_object().unwrap() {
            spec[k] = v.clone();
        }
        pod(json!({"metadata": {"name": "pending"}, "spec": spec}))
    }

    fn plugin(args: Option<Value>) -> Arc<dyn Plugin> {
        new(
            &super::args(args.as_ref(), "a").unwrap(),
            &Default::default(),
        )
        .unwrap()
    }

    fn cx(c: &Cluster) -> Ctx<'_> {
        Ctx {
            cluster: c,
            now: Timestamp::UNIX_EPOCH,
        }
    }

    fn required(terms: Value) -> Value {
        json!({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
            {"nodeSelectorTerms": terms}}}})
    }

    /// (prefilter result, status, filter codes per node)
    fn run_filter(
        pl: &Arc<dyn Plugin>,
        c: &Cluster,
        p: &Pod,
    ) -> (PreFilterResult, Status, Vec<Code>) {
        let mut st = CycleState::default();
        let (res, s) = pl.as_pre_filter().unwrap().pre_filter(&cx(c), &mut st, p);
        let codes = c
            .nodes()
            .iter()
            .map(|n| {
                let f = pl.as_filter().unwrap().filter(&cx(c), &st, p, n);
                if !f.is_success() {
                    assert!(f.message() == ERR_REASON_POD || f.message() == ERR_REASON_ENFORCED);
                }
                f.code
            })
            .collect();
        (res, s, codes)
    }

    const OK: Code = Code::Success;
    const UU: Code = Code::UnschedulableAndUnresolvable;

    #[test]
    fn prefilter_skip_conditions() {
        let c = cluster(vec![node("n1", json!({}))], vec![]);
        let pl = plugin(None);
        let cases = [
            (json!({}), true),
            (json!({"nodeSelector": {}}), true),
            (json!({"nodeSelector": {"a": "b"}}), false),
            (
                json!({"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": []}}}),
                true,
            ),
            (
                required(json!([{"matchExpressions": [{"key": "a", "operator": "Exists"}]}])),
                false,
            ),
        ];
        for (spec, skip) in cases {
            let (_, s, _) = run_filter(&pl, &c, &pending(spec.clone()));
            assert_eq!(s.is_skip(), skip, "{spec}");
        }
        // With addedAffinity required, PreFilter never skips.
        let pl = plugin(Some(
            json!({"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
            {"nodeSelectorTerms": [{"matchExpressions": [{"key": "pool", "operator": "Exists"}]}]}}}),
        ));
        assert!(!run_filter(&pl, &c, &pending(json!({}))).1.is_skip());
    }

    /// h07 (nodeSelector) and h08 (ORed terms, every operator).
    #[test]
    fn h07_h08_required_matching() {
        let c = cluster(
            vec![
                node("n1", json!({"disk": "ssd", "gen": "5", "zone": "a"})),
                node("n2", json!({"disk": "hdd", "gen": "3"})),
                node("n3", json!({"disk": "ssd", "gen": "2", "gpu": "true"})),
                node("n4", json!({"gen": "x"})),
            ],
            vec![],
        );
        let pl = plugin(None);
        let (_, _, codes) = run_filter(&pl, &c, &pending(json!({"nodeSelector": {"disk": "ssd"}})));
        assert_eq!(codes, vec![OK, UU, OK, UU]);
        let terms = json!([
            {"matchExpressions": [
                {"key": "disk", "operator": "In", "values": ["ssd"]},
                {"key": "gen", "operator": "Gt", "values": ["4"]},
                {"key": "gpu", "operator": "DoesNotExist"}]},
            {"matchExpressions": [
                {"key": "disk", "operator": "NotIn", "values": ["ssd"]},
                {"key": "gen", "operator": "Lt", "values": ["4"]},
                {"key": "gen", "operator": "Exists"}]}
        ]);
        let (res, s, codes) = run_filter(&pl, &c, &pending(required(terms.clone())));
        assert!(res.is_none() && s.is_success());
        // n4: gen "x" is not an integer → Lt fails.
        assert_eq!(codes, vec![OK, OK, UU, UU]);
        // nodeSelector AND affinity.
        let mut spec = required(terms);
        spec["nodeSelector"] = json!({"zone": "a"});
        assert_eq!(run_filter(&pl, &c, &pending(spec)).2, vec![OK, UU, UU, UU]);
        // Empty terms are dropped: no usable term ⇒ no node matches.
        let (_, _, codes) = run_filter(&pl, &c, &pending(required(json!([{}]))));
        assert_eq!(codes, vec![UU; 4]);
        // An unparseable term never matches, others still can.
        let bad = json!([{"matchExpressions": [{"key": "disk", "operator": "In", "values": []}]},
                         {"matchExpressions": [{"key": "gpu", "operator": "Exists"}]}]);
        assert_eq!(
            run_filter(&pl, &c, &pending(required(bad))).2,
            vec![UU, UU, OK, UU]
        );
    }

    /// h09/h10: matchFields metadata.name → PreFilter node subset; conflicts.
    #[test]
    fn h09_match_fields_subset() {
        let c = cluster(
            vec![
                node("n1", json!({})),
                node("n2", json!({})),
                node("n3", json!({})),
                node("n4", json!({})),
            ],
            vec![],
        );
        let pl = plugin(None);
        let names = |v: &[&str]| Some(v.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>());
        let f = |op: &str, vals: &[&str]| json!({"key": "metadata.name", "operator": op, "values": vals});
        let cases = [
            (
                json!([{"matchFields": [f("In", &["n2"])]}, {"matchFields": [f("In", &["n4"])]}]),
                names(&["n2", "n4"]),
                OK,
                vec![UU, OK, UU, OK],
            ),
            // Unknown node: the subset names it anyway.
            (
                json!([{"matchFields": [f("In", &["ghost"])]}]),
                names(&["ghost"]),
                OK,
                vec![UU; 4],
            ),
            // Intersection inside a term; empty union → conflict.
            (
                json!([{"matchFields": [f("In", &["n1"]), f("In", &["n2"])]}]),
                None,
                UU,
                vec![],
            ),
            // A term without a name field: no restriction.
            (
                json!([{"matchFields": [f("In", &["n1"])]},
                    {"matchExpressions": [{"key": "x", "operator": "DoesNotExist"}]}]),
                None,
                OK,
                vec![OK; 4],
            ),
            // NotIn does not restrict but filters.
            (
                json!([{"matchFields": [f("NotIn", &["n1"])]}]),
                None,
                OK,
                vec![UU, OK, OK, OK],
            ),
        ];
        for (terms, want_res, want_code, want_filter) in cases {
            let p = pending(required(terms.clone()));
            let mut st = CycleState::default();
            let (res, s) = pl.as_pre_filter().unwrap().pre_filter(&cx(&c), &mut st, &p);
            assert_eq!(res, want_res, "{terms}");
            assert_eq!(s.code, want_code, "{terms}");
            if want_code == UU {
                assert_eq!(s.message(), ERR_REASON_CONFLICT);
                continue;
            }
            let codes: Vec<Code> = c
                .nodes()
                .iter()
                .map(|n| pl.as_filter().unwrap().filter(&cx(&c), &st, &p, n).code)
                .collect();
            assert_eq!(codes, want_filter, "{terms}");
        }
    }

    /// h59: addedAffinity rejects with the enforced message before the pod's own.
    #[test]
    fn h59_added_affinity() {
        let c = cluster(
            vec![
                node("n1", json!({"pool": "general"})),
                node("n2", json!({"pool": "batch"})),
                node("n3", json!({"pool": "general"})),
            ],
            vec![],
        );
        let pl = plugin(Some(
            json!({"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
            {"nodeSelectorTerms": [{"matchExpressions": [
                {"key": "pool", "operator": "In", "values": ["general"]}]}]}}}),
        ));
        let (res, s, codes) = run_filter(&pl, &c, &pending(json!({})));
        assert!(res.is_none() && s.is_success());
        assert_eq!(codes, vec![OK, UU, OK]);
        let mut st = CycleState::default();
        let p = pending(json!({"nodeSelector": {"pool": "general"}}));
        pl.as_pre_filter().unwrap().pre_filter(&cx(&c), &mut st, &p);
        let msg = pl
            .as_filter()
            .unwrap()
            .filter(&cx(&c), &st, &p, c.node("n2").unwrap())
            .message();
        assert_eq!(msg, ERR_REASON_ENFORCED);
        let p = pending(json!({"nodeSelector": {"pool": "other"}}));
        pl.as_pre_filter().unwrap().pre_filter(&cx(&c), &mut st, &p);
        let msg = pl
            .as_filter()
            .unwrap()
            .filter(&cx(&c), &st, &p, c.node("n1").unwrap())
            .message();
        assert_eq!(msg, ERR_REASON_POD);
    }

    /// h11: preferred weights summed and normalised.
    #[test]
    fn h11_preferred_scores() {
        let c = cluster(
            vec![
                node(
                    "n1",
                    json!({"topology.kubernetes.io/zone": "a", "disk": "ssd", "team": "red"}),
                ),
                node("n2", json!({"topology.kubernetes.io/zone": "a"})),
                node(
                    "n3",
                    json!({"topology.kubernetes.io/zone": "b", "disk": "ssd"}),
                ),
                node(
                    "n4",
                    json!({"topology.kubernetes.io/zone": "b", "team": "red"}),
                ),
                node("n5", json!({"topology.kubernetes.io/zone": "c"})),
            ],
            vec![],
        );
        let pref = |w: i32, k: &str, v: &str| json!({"weight": w, "preference": {"matchExpressions": [{"key": k, "operator": "In", "values": [v]}]}});
        let p = pending(
            json!({"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            pref(80, "topology.kubernetes.io/zone", "a"), pref(20, "disk", "ssd"), pref(33, "team", "red"),
            pref(0, "team", "red"), {"weight": 50, "preference": {}}]}}}),
        );
        let pl = plugin(None);
        let mut st = CycleState::default();
        let nodes: Vec<&NodeInfo> = c.nodes().iter().collect();
        assert!(
            pl.as_pre_score()
                .unwrap()
                .pre_score(&cx(&c), &mut st, &p, &nodes)
                .is_success()
        );
        let mut scores: Vec<NodeScore> = c
            .nodes()
            .iter()
            .enumerate()
            .map(|(i, n)| NodeScore {
                node: i,
                score: pl.as_score().unwrap().score(&cx(&c), &st, &p, n).0,
            })
            .collect();
        assert_eq!(
            scores.iter().map(|s| s.score).collect::<Vec<_>>(),
            vec![133, 80, 20, 33, 0]
        );
        pl.as_score()
            .unwrap()
            .normalize_score(&cx(&c), &st, &p, &mut scores);
        assert_eq!(
            scores.iter().map(|s| s.score).collect::<Vec<_>>(),
            vec![100, 60, 15, 24, 0]
        );

        // Added preferred terms add to the pod's, and keep PreScore from skipping.
        let pl = plugin(Some(
            json!({"addedAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            pref(7, "disk", "ssd")]}}),
        ));
        let bare = pending(json!({}));
        let mut st = CycleState::default();
        assert!(
            pl.as_pre_score()
                .unwrap()
                .pre_score(&cx(&c), &mut st, &bare, &nodes)
                .is_success()
        );
        assert_eq!(
            pl.as_score()
                .unwrap()
                .score(&cx(&c), &st, &bare, &c.nodes()[0])
                .0,
            7
        );
        let mut st = CycleState::default();
        let pre = pl.as_pre_score().unwrap();
        assert!(pre.pre_score(&cx(&c), &mut st, &p, &nodes).is_success());
        let sp = pl.as_score().unwrap();
        // Without PreScore state, Score recomputes the pod's terms.
        assert_eq!(
            sp.score(&cx(&c), &CycleState::default(), &p, &c.nodes()[0])
                .0,
            140
        );
        assert_eq!(
            pl.as_score()
                .unwrap()
                .score(&cx(&c), &st, &p, &c.nodes()[0])
                .0,
            140
        );
        // No preferred terms anywhere → Skip.
        assert!(
            plugin(None)
                .as_pre_score()
                .unwrap()
                .pre_score(&cx(&c), &mut st, &bare, &nodes)
                .is_skip()
        );
    }

    #[test]
    fn args_validation_paths() {
        let path = "profiles[0].pluginConfig[0].args";
        let cases = [
            (
                json!({"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
                {"nodeSelectorTerms": [{"matchExpressions": [{"key": "a", "operator": "Foo"}]}]}}}),
                vec![format!(
                    "{path}.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator: Unsupported value: \"Foo\": supported values: \"In\", \"NotIn\", \"Exists\", \"DoesNotExist\", \"Gt\", \"Lt\""
                )],
            ),
            (
                json!({"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
                {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a", "b"]}]}]}}}),
                vec![format!(
                    "{path}.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchFields[0].values: Invalid value: []string{{\"a\", \"b\"}}: must have one element"
                )],
            ),
            (
                json!({"addedAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 1, "preference": {"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["x"]}]}}]}}),
                vec![format!(
                    "{path}.addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchExpressions[0].values[0]: Invalid value: \"x\": for 'Gt', 'Lt' operators, the value must be an integer"
                )],
            ),
            (
                json!({"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
                {"nodeSelectorTerms": [{"matchExpressions": [{"key": "a", "operator": "In"}]}]}}}),
                vec![format!(
                    "{path}.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty"
                )],
            ),
        ];
        for (user, want) in cases {
            assert_eq!(args(Some(&user), path).unwrap_err(), want, "{user}");
        }
        assert_eq!(args(None, path).unwrap(), json!({}));
    }
}
