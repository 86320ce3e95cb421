//! Bound pods by label (key → value → pods), kept up to date by [`Cluster`]'s
//! upserts and deletes, so that a selector with an equality (`In` / `Exists`)
//! requirement visits only the pods it can match instead of all 150,000.
//!
//! The reverse question, "which existing pods have a pod (anti-)affinity term that may
//! select this pod", is indexed too: each term is filed under a label its selector
//! requires (`matchLabels` entry or `In` values), so only pods with a term keyed by one
//! of the pod's own labels (and the few terms with no such requirement) are offered.
//!
//! [`Cluster`]: super::Cluster

use std::collections::HashMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1 as core;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use super::labels::{Labels, Op, Selector};
use super::pod::Pod;

type ByLabel = HashMap<String, HashMap<String, Vec<Arc<Pod>>>>;

/// Which terms of existing pods a reverse lookup is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TermKind {
    /// `podAntiAffinity.requiredDuringScheduling…` (Filter's symmetry check).
    RequiredAntiAffinity,
    /// Required pod affinity and both preferred lists (scoring's symmetry).
    ScoringAffinity,
}

#[derive(Clone, Debug, Default)]
struct TermIndex {
    keyed: ByLabel,
    /// Pods with a term that requires no particular label.
    unkeyed: Vec<Arc<Pod>>,
}

#[derive(Clone, Debug, Default)]
pub struct LabelIndex {
    by_label: ByLabel,
    bound: usize,
    terms: [TermIndex; 2],
}

fn push(map: &mut ByLabel, k: &str, v: &str, pod: &Arc<Pod>) {
    map.entry(k.to_string())
        .or_default()
        .entry(v.to_string())
        .or_default()
        .push(pod.clone());
}

fn pull(map: &mut ByLabel, k: &str, v: &str, uid: &str) {
    let Some(values) = map.get_mut(k) else { return };
    if let Some(list) = values.get_mut(v) {
        if let Some(i) = list.iter().position(|p| p.uid == uid) {
            list.swap_remove(i);
        }
        if list.is_empty() {
            values.remove(v);
        }
    }
    if values.is_empty() {
        map.remove(k);
    }
}

/// Labels a term's selector requires, any of which a selected pod carries: the first
/// `matchLabels` entry, else the values of the first `In` expression. `None` when the
/// selector requires no particular label.
fn term_keys(sel: Option<&LabelSelector>) -> Option<Vec<(&str, &str)>> {
    let sel = sel?;
    if let Some((k, v)) = sel.match_labels.as_ref().and_then(|m| m.iter().next()) {
        return Some(vec![(k.as_str(), v.as_str())]);
    }
    let e = sel
        .match_expressions
        .iter()
        .flatten()
        .find(|e| e.operator == "In" && e.values.as_ref().is_some_and(|v| !v.is_empty()))?;
    Some(
        e.values
            .iter()
            .flatten()
            .map(|v| (e.key.as_str(), v.as_str()))
            .collect(),
    )
}

fn kind_terms(pod: &Pod, kind: TermKind) -> Vec<&core::PodAffinityTerm> {
    let Some(a) = pod.affinity.as_ref() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    match kind {
        TermKind::RequiredAntiAffinity => {
            if let Some(anti) = &a.pod_anti_affinity {
                out.extend(
                    anti.required_during_scheduling_ignored_during_execution
                        .iter()
                        .flatten(),
                );
            }
        }
        TermKind::ScoringAffinity => {
            if let Some(aff) = &a.pod_affinity {
                out.extend(
                    aff.required_during_scheduling_ignored_during_execution
                        .iter()
                        .flatten(),
                );
                out.extend(
                    aff.preferred_during_scheduling_ignored_during_execution
                        .iter()
                        .flatten()
                        .map(|w| &w.pod_affinity_term),
                );
            }
            if let Some(anti) = &a.pod_anti_affinity {
                out.extend(
                    anti.preferred_during_scheduling_ignored_during_execution
                        .iter()
                        .flatten()
                        .map(|w| &w.pod_affinity_term),
                );
            }
        }
    }
    out
}

/// Where a pod's terms of `kind` are filed: `None` = unkeyed, else distinct keys.
fn pod_term_keys(pod: &Pod, kind: TermKind) -> Option<Vec<(&str, &str)>> {
    let mut keys = Vec::new();
    for t in kind_terms(pod, kind) {
        keys.extend(term_keys(t.label_selector.as_ref())?);
    }
    keys.sort_unstable();
    keys.dedup();
    Some(keys)
}

impl LabelIndex {
    /// Index a bound pod under each of its labels, and its affinity terms.
    pub(crate) fn insert(&mut self, pod: &Arc<Pod>) {
        for (k, v) in &pod.labels {
            push(&mut self.by_label, k, v, pod);
        }
        self.bound += 1;
        if !pod.has_pod_affinity() {
            return;
        }
        for (i, kind) in [TermKind::RequiredAntiAffinity, TermKind::ScoringAffinity]
            .into_iter()
            .enumerate()
        {
            if kind_terms(pod, kind).is_empty() {
                continue;
            }
            let idx = &mut self.terms[i];
            match pod_term_keys(pod, kind) {
                None => idx.unkeyed.push(pod.clone()),
                Some(keys) => {
                    for (k, v) in keys {
                        push(&mut idx.keyed, k, v, pod);
                    }
                }
            }
        }
    }

    /// Remove a pod indexed by [`insert`](Self::insert) (matched by uid).
    pub(crate) fn remove(&mut self, pod: &Pod) {
        for (k, v) in &pod.labels {
            pull(&mut self.by_label, k, v, &pod.uid);
        }
        self.bound = self.bound.saturating_sub(1);
        if !pod.has_pod_affinity() {
            return;
        }
        for (i, kind) in [TermKind::RequiredAntiAffinity, TermKind::ScoringAffinity]
            .into_iter()
            .enumerate()
        {
            if kind_terms(pod, kind).is_empty() {
                continue;
            }
            let idx = &mut self.terms[i];
            match pod_term_keys(pod, kind) {
                None => {
                    if let Some(i) = idx.unkeyed.iter().position(|p| p.uid == pod.uid) {
                        idx.unkeyed.swap_remove(i);
                    }
                }
                Some(keys) => {
                    for (k, v) in keys {
                        pull(&mut idx.keyed, k, v, &pod.uid);
                    }
                }
            }
        }
    }

    /// Bound pods having a term of `kind` that may select a pod labelled `labels`
    /// (every pod whose term does select it is included), each once, in no
    /// particular order.
    pub fn pods_with_terms_selecting(&self, kind: TermKind, labels: &Labels) -> Vec<&Arc<Pod>> {
        let idx = &self.terms[kind as usize];
        let mut out: Vec<&Arc<Pod>> = idx.unkeyed.iter().collect();
        if !idx.keyed.is_empty() {
            for (k, v) in labels {
                if let Some(list) = idx.keyed.get(k.as_str()).and_then(|m| m.get(v.as_str())) {
                    out.extend(list);
                }
            }
        }
        out.sort_unstable_by_key(|p| Arc::as_ptr(p));
        out.dedup_by(|a, b| Arc::ptr_eq(a, b));
        out
    }

    /// Number of bound pods indexed.
    pub fn bound_pods(&self) -> usize {
        self.bound
    }

    /// Bound pods labelled `key=value`, in no particular order.
    pub fn pods_with(&self, key: &str, value: &str) -> &[Arc<Pod>] {
        self.by_label
            .get(key)
            .and_then(|m| m.get(value))
            .map_or(&[], Vec::as_slice)
    }

    /// Bound pods carrying `key`, whatever the value.
    pub fn pods_with_key<'a>(&'a self, key: &str) -> impl Iterator<Item = &'a Arc<Pod>> + 'a {
        self.by_label
            .get(key)
            .into_iter()
            .flat_map(|m| m.values().flatten())
    }

    fn count_with_key(&self, key: &str) -> usize {
        self.by_label
            .get(key)
            .map_or(0, |m| m.values().map(Vec::len).sum())
    }

    /// Bound pods that may match `selector`: those of its most selective `In` or
    /// `Exists` requirement (every match carries that label). `None` when no such
    /// requirement exists (an empty or nil selector, or only `NotIn` /
    /// `DoesNotExist`): the caller must look at every pod. Order is unspecified.
    pub fn candidates(&self, selector: &Selector) -> Option<Vec<&Arc<Pod>>> {
        let reqs = selector.requirements.as_ref()?;
        let mut best: Option<(usize, usize)> = None; // (size, requirement index)
        for (i, r) in reqs.iter().enumerate() {
            let size = match r.op {
                Op::In => r
                    .values
                    .iter()
                    .map(|v| self.pods_with(&r.key, v).len())
                    .sum(),
                Op::Exists | Op::Gt | Op::Lt => self.count_with_key(&r.key),
                Op::NotIn | Op::DoesNotExist => continue,
            };
            if best.is_none_or(|(s, _)| size < s) {
                best = Some((size, i));
            }
        }
        let (size, i) = best?;
        let r = &reqs[i];
        let mut out = Vec::with_capacity(size);
        match r.op {
            Op::In => {
                // A pod has one value per key, so the lists are disjoint; values
                // listed twice must not be visited twice.
                for (j, v) in r.values.iter().enumerate() {
                    if !r.values[..j].contains(v) {
                        out.extend(self.pods_with(&r.key, v));
                    }
                }
            }
            _ => out.extend(self.pods_with_key(&r.key)),
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::labels::label_selector;
    use crate::model::testing::{cluster, simple_node};

    fn bound(name: &str, labels: serde_json::Value) -> serde_json::Value {
        serde_json::json!({"metadata": {"name": name, "namespace": "default", "uid": name, "labels": labels},
                           "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "i"}]}})
    }

    fn names(v: Option<Vec<&Arc<Pod>>>) -> Option<Vec<String>> {
        v.map(|v| {
            let mut n: Vec<String> = v.iter().map(|p| p.name.clone()).collect();
            n.sort();
            n
        })
    }

    #[test]
    fn candidates_follow_the_most_selective_requirement() {
        let mut c = cluster(
            vec![simple_node("n1", "1", "1Gi")],
            vec![
                bound("a", serde_json::json!({"app": "web", "tier": "fe"})),
                bound("b", serde_json::json!({"app": "web", "tier": "be"})),
                bound("c", serde_json::json!({"app": "db"})),
            ],
        );
        let sel = |v: serde_json::Value| {
            label_selector(Some(&serde_json::from_value(v).unwrap())).unwrap()
        };
        let cases: Vec<(serde_json::Value, Option<Vec<&str>>)> = vec![
            (
                serde_json::json!({"matchLabels": {"app": "web", "tier": "fe"}}),
                Some(vec!["a"]),
            ),
            (
                serde_json::json!({"matchLabels": {"app": "web"}}),
                Some(vec!["a", "b"]),
            ),
            (
                serde_json::json!({"matchExpressions": [{"key": "app", "operator": "In", "values": ["web", "db", "web"]}]}),
                Some(vec!["a", "b", "c"]),
            ),
            (
                serde_json::json!({"matchExpressions": [{"key": "tier", "operator": "Exists"}]}),
                Some(vec!["a", "b"]),
            ),
            (
                serde_json::json!({"matchExpressions": [{"key": "tier", "operator": "DoesNotExist"}]}),
                None,
            ),
            (serde_json::json!({}), None),
            (
                serde_json::json!({"matchLabels": {"app": "none"}}),
                Some(vec![]),
            ),
        ];
        for (s, want) in cases {
            let want = want.map(|w| w.iter().map(|s| s.to_string()).collect());
            assert_eq!(
                names(c.label_index().candidates(&sel(s.clone()))),
                want,
                "{s}"
            );
        }
        assert_eq!(c.label_index().bound_pods(), 3);
        c.delete_pod("default/a");
        assert_eq!(c.label_index().pods_with("tier", "fe").len(), 0);
        assert_eq!(c.label_index().pods_with("app", "web").len(), 1);
        assert_eq!(c.label_index().bound_pods(), 2);
        // Replacing a pod re-indexes it under its new labels.
        c.upsert_pod(crate::model::testing::pod(bound(
            "b",
            serde_json::json!({"app": "db"}),
        )));
        assert_eq!(c.label_index().pods_with("app", "db").len(), 2);
        assert_eq!(c.label_index().pods_with("tier", "be").len(), 0);
    }

    #[test]
    fn terms_filed_under_the_labels_they_require() {
        let with_anti = |name: &str, selector: serde_json::Value| {
            let mut v = bound(name, serde_json::json!({"app": name}));
            v["spec"]["affinity"] = serde_json::json!({"podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [{"topologyKey": "k", "labelSelector": selector}]}});
            v
        };
        let mut c = cluster(
            vec![simple_node("n1", "1", "1Gi")],
            vec![
                with_anti("eq", serde_json::json!({"matchLabels": {"app": "web"}})),
                with_anti(
                    "in",
                    serde_json::json!({"matchExpressions": [{"key": "app", "operator": "In", "values": ["web", "db"]}]}),
                ),
                with_anti(
                    "exists",
                    serde_json::json!({"matchExpressions": [{"key": "app", "operator": "Exists"}]}),
                ),
                bound("plain", serde_json::json!({"app": "web"})),
            ],
        );
        let offered = |c: &crate::model::Cluster, labels: &[(&str, &str)]| {
            let l: Labels = labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            let mut n: Vec<String> = c
                .label_index()
                .pods_with_terms_selecting(TermKind::RequiredAntiAffinity, &l)
                .iter()
                .map(|p| p.name.clone())
                .collect();
            n.sort();
            n
        };
        assert_eq!(offered(&c, &[("app", "web")]), vec!["eq", "exists", "in"]);
        assert_eq!(offered(&c, &[("app", "db")]), vec!["exists", "in"]);
        assert_eq!(offered(&c, &[("other", "x")]), vec!["exists"]);
        assert!(
            c.label_index()
                .pods_with_terms_selecting(TermKind::ScoringAffinity, &Labels::new())
                .is_empty()
        );
        c.delete_pod("default/in");
        c.delete_pod("default/exists");
        assert_eq!(offered(&c, &[("app", "web")]), vec!["eq"]);
        assert!(offered(&c, &[("app", "db")]).is_empty());
    }
}
