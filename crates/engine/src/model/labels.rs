//! Label selectors and node selectors, with Kubernetes' matching rules.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1 as core;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use super::sym::Sym;

/// A set of labels: interned key/value pairs sorted by key, the order a
/// `BTreeMap<String, String>` iterates in. Compact: a pod's three labels are one
/// small allocation plus shared strings.
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Labels(Box<[(Sym, Sym)]>);

impl Labels {
    pub fn new() -> Self {
        Labels::default()
    }

    fn find(&self, key: &str) -> Result<usize, usize> {
        self.0.binary_search_by(|(k, _)| k.as_str().cmp(key))
    }

    pub fn get(&self, key: &str) -> Option<&Sym> {
        self.find(key).ok().map(|i| &self.0[i].1)
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.find(key).is_ok()
    }

    /// Set `key` to `value`, replacing any value it had (a copy: labels are built
    /// once and rarely changed). Takes strings, as `BTreeMap<String, String>` did.
    pub fn insert(&mut self, key: String, value: String) -> Option<Sym> {
        let (key, value) = (Sym::from(key), Sym::from(value));
        let mut v = std::mem::take(&mut self.0).into_vec();
        let old = match v.binary_search_by(|(k, _)| k.cmp(&key)) {
            Ok(i) => Some(std::mem::replace(&mut v[i].1, value)),
            Err(i) => {
                v.insert(i, (key, value));
                None
            }
        };
        self.0 = v.into_boxed_slice();
        old
    }

    pub fn remove(&mut self, key: &str) -> Option<Sym> {
        let i = self.find(key).ok()?;
        let mut v = std::mem::take(&mut self.0).into_vec();
        let (_, old) = v.remove(i);
        self.0 = v.into_boxed_slice();
        Some(old)
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> LabelsIter<'_> {
        LabelsIter(self.0.iter())
    }

    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &Sym> + ExactSizeIterator {
        self.0.iter().map(|(k, _)| k)
    }

    pub fn values(&self) -> impl DoubleEndedIterator<Item = &Sym> + ExactSizeIterator {
        self.0.iter().map(|(_, v)| v)
    }

    /// As a map of owned strings (for the Kubernetes API types).
    pub fn to_map(&self) -> BTreeMap<String, String> {
        self.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }
}

/// Iterates labels in key order as `(&key, &value)`, like a `BTreeMap`'s `iter`.
#[derive(Clone)]
pub struct LabelsIter<'a>(std::slice::Iter<'a, (Sym, Sym)>);

impl<'a> Iterator for LabelsIter<'a> {
    type Item = (&'a Sym, &'a Sym);
    fn next(&mut self) -> Option<Self::Item> {
        self.0.next().map(|(k, v)| (k, v))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl DoubleEndedIterator for LabelsIter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.0.next_back().map(|(k, v)| (k, v))
    }
}

impl ExactSizeIterator for LabelsIter<'_> {}

impl<'a> IntoIterator for &'a Labels {
    type Item = (&'a Sym, &'a Sym);
    type IntoIter = LabelsIter<'a>;
    fn into_iter(self) -> LabelsIter<'a> {
        self.iter()
    }
}

impl<K: Into<Sym>, V: Into<Sym>> FromIterator<(K, V)> for Labels {
    /// As collecting into a `BTreeMap`: sorted by key, the last of a repeated key wins.
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        let mut v: Vec<(Sym, Sym)> = iter
            .into_iter()
            .map(|(k, v)| (k.into(), v.into()))
            .collect();
        // Stable: equal keys keep their input order, and the last one is kept.
        v.sort_by(|a, b| a.0.cmp(&b.0));
        let mut out: Vec<(Sym, Sym)> = Vec::with_capacity(v.len());
        for (k, val) in v {
            match out.last_mut() {
                Some(last) if last.0 == k => last.1 = val,
                _ => out.push((k, val)),
            }
        }
        Labels(out.into_boxed_slice())
    }
}

impl<K: Into<Sym>, V: Into<Sym>> Extend<(K, V)> for Labels {
    /// As extending a `BTreeMap`: a key already present takes the new value.
    fn extend<I: IntoIterator<Item = (K, V)>>(&mut self, iter: I) {
        let old = std::mem::take(&mut self.0).into_vec();
        let new = iter.into_iter().map(|(k, v)| (k.into(), v.into()));
        *self = old.into_iter().chain(new).collect();
    }
}

impl From<&BTreeMap<String, String>> for Labels {
    fn from(m: &BTreeMap<String, String>) -> Self {
        // Already sorted and unique.
        Labels(m.iter().map(|(k, v)| (Sym::new(k), Sym::new(v))).collect())
    }
}

impl<K: Into<Sym>, V: Into<Sym>, const N: usize> From<[(K, V); N]> for Labels {
    fn from(pairs: [(K, V); N]) -> Self {
        pairs.into_iter().collect()
    }
}

impl From<BTreeMap<String, String>> for Labels {
    fn from(m: BTreeMap<String, String>) -> Self {
        Labels::from(&m)
    }
}

impl std::ops::Index<&str> for Labels {
    type Output = Sym;
    /// As indexing a `BTreeMap`: panics when the key is missing.
    fn index(&self, key: &str) -> &Sym {
        self.get(key).expect("no such label")
    }
}

impl std::fmt::Debug for Labels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl serde::Serialize for Labels {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.iter())
    }
}

/// What a selector needs of a set of labels: the value of a key. Both the model's
/// [`Labels`] and the API types' maps have it.
pub trait LabelLookup {
    fn label(&self, key: &str) -> Option<&str>;
}

impl LabelLookup for Labels {
    fn label(&self, key: &str) -> Option<&str> {
        self.get(key).map(Sym::as_str)
    }
}

impl LabelLookup for BTreeMap<String, String> {
    fn label(&self, key: &str) -> Option<&str> {
        self.get(key).map(String::as_str)
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    In,
    NotIn,
    Exists,
    DoesNotExist,
    Gt,
    Lt,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Requirement {
    pub key: String,
    pub op: Op,
    pub values: Vec<String>,
}

impl Requirement {
    pub fn matches(&self, labels: &(impl LabelLookup + ?Sized)) -> bool {
        let v = labels.label(&self.key);
        match self.op {
            Op::In => v.is_some_and(|v| self.values.iter().any(|x| x == v)),
            Op::NotIn => v.is_none_or(|v| !self.values.iter().any(|x| x == v)),
            Op::Exists => v.is_some(),
            Op::DoesNotExist => v.is_none(),
            Op::Gt | Op::Lt => {
                let (Some(v), Some(bound)) = (v, self.values.first()) else {
                    return false;
                };
                let (Ok(v), Ok(bound)) = (v.parse::<i64>(), bound.parse::<i64>()) else {
                    return false;
                };
                if self.op == Op::Gt {
                    v > bound
                } else {
                    v < bound
                }
            }
        }
    }
}

/// A parsed selector. `None` requirements = matches nothing (a nil selector).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Selector {
    pub requirements: Option<Vec<Requirement>>,
}

impl Selector {
    pub fn nothing() -> Self {
        Selector { requirements: None }
    }
    pub fn from_map<'a, K, V>(m: impl IntoIterator<Item = (&'a K, &'a V)>) -> Self
    where
        K: AsRef<str> + ?Sized + 'a,
        V: AsRef<str> + ?Sized + 'a,
    {
        Selector {
            requirements: Some(
                m.into_iter()
                    .map(|(k, v)| Requirement {
                        key: k.as_ref().to_string(),
                        op: Op::In,
                        values: vec![v.as_ref().to_string()],
                    })
                    .collect(),
            ),
        }
    }
    pub fn matches(&self, labels: &(impl LabelLookup + ?Sized)) -> bool {
        match &self.requirements {
            None => false,
            Some(reqs) => reqs.iter().all(|r| r.matches(labels)),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.requirements.as_ref().is_some_and(|r| r.is_empty())
    }
    pub fn is_nothing(&self) -> bool {
        self.requirements.is_none()
    }
    pub fn push(&mut self, r: Requirement) {
        self.requirements.get_or_insert_with(Vec::new).push(r);
    }
}

/// `metav1.LabelSelectorAsSelector`: nil → nothing, `{}` → everything.
pub fn label_selector(sel: Option<&LabelSelector>) -> Result<Selector, String> {
    let Some(sel) = sel else {
        return Ok(Selector::nothing());
    };
    let mut reqs = Vec::new();
    for (k, v) in sel.match_labels.iter().flatten() {
        reqs.push(Requirement {
            key: k.clone(),
            op: Op::In,
            values: vec![v.clone()],
        });
    }
    for e in sel.match_expressions.iter().flatten() {
        let values = e.values.clone().unwrap_or_default();
        let op = match e.operator.as_str() {
            "In" => Op::In,
            "NotIn" => Op::NotIn,
            "Exists" => Op::Exists,
            "DoesNotExist" => Op::DoesNotExist,
            other => return Err(format!("{other:?} is not a valid label selector operator")),
        };
        match op {
            Op::In | Op::NotIn if values.is_empty() => {
                return Err("for 'in', 'notin' operators, values set can't be empty".into());
            }
            Op::Exists | Op::DoesNotExist if !values.is_empty() => {
                return Err("values set must be empty for exists and does not exist".into());
            }
            _ => {}
        }
        reqs.push(Requirement {
            key: e.key.clone(),
            op,
            values,
        });
    }
    Ok(Selector {
        requirements: Some(reqs),
    })
}

/// Parse one node selector requirement (labels or fields).
fn node_requirement(r: &core::NodeSelectorRequirement) -> Option<Requirement> {
    let values = r.values.clone().unwrap_or_default();
    let op = match r.operator.as_str() {
        "In" => Op::In,
        "NotIn" => Op::NotIn,
        "Exists" => Op::Exists,
        "DoesNotExist" => Op::DoesNotExist,
        "Gt" => Op::Gt,
        "Lt" => Op::Lt,
        _ => return None,
    };
    match op {
        Op::In | Op::NotIn if values.is_empty() => return None,
        Op::Exists | Op::DoesNotExist if !values.is_empty() => return None,
        Op::Gt | Op::Lt if values.len() != 1 || values[0].parse::<i64>().is_err() => return None,
        _ => {}
    }
    Some(Requirement {
        key: r.key.clone(),
        op,
        values,
    })
}

/// One node selector term, parsed. `None` parts mean the term failed to parse and
/// matches nothing (upstream drops it with an error).
#[derive(Clone, Debug)]
pub struct NodeTerm {
    pub labels: Vec<Requirement>,
    pub fields: Vec<Requirement>,
    pub valid: bool,
}

impl NodeTerm {
    pub fn parse(t: &core::NodeSelectorTerm) -> Option<NodeTerm> {
        let exprs = t.match_expressions.as_deref().unwrap_or_default();
        let fields = t.match_fields.as_deref().unwrap_or_default();
        if exprs.is_empty() && fields.is_empty() {
            return None; // an empty term matches nothing and is dropped
        }
        let mut valid = true;
        let mut lr = Vec::new();
        for e in exprs {
            match node_requirement(e) {
                Some(r) => lr.push(r),
                None => valid = false,
            }
        }
        let mut fr = Vec::new();
        for f in fields {
            // Only metadata.name with In/NotIn and exactly one value is supported.
            let ok = f.key == "metadata.name"
                && matches!(f.operator.as_str(), "In" | "NotIn")
                && f.values.as_ref().is_some_and(|v| v.len() == 1);
            match (ok, node_requirement(f)) {
                (true, Some(r)) => fr.push(r),
                _ => valid = false,
            }
        }
        Some(NodeTerm {
            labels: lr,
            fields: fr,
            valid,
        })
    }

    pub fn matches(&self, node_name: &str, labels: &(impl LabelLookup + ?Sized)) -> bool {
        if !self.valid {
            return false;
        }
        if !self.labels.iter().all(|r| r.matches(labels)) {
            return false;
        }
        if self.fields.is_empty() {
            return true;
        }
        let fields = NodeName(node_name);
        self.fields.iter().all(|r| r.matches(&fields))
    }
}

/// A node's fields as a node selector's `matchFields` reads them.
struct NodeName<'a>(&'a str);

impl LabelLookup for NodeName<'_> {
    fn label(&self, key: &str) -> Option<&str> {
        (key == "metadata.name").then_some(self.0)
    }
}

/// A required node selector: OR of terms.
#[derive(Clone, Debug)]
pub struct NodeSelector {
    pub terms: Vec<NodeTerm>,
}

impl NodeSelector {
    pub fn parse(s: &core::NodeSelector) -> NodeSelector {
        NodeSelector {
            terms: s
                .node_selector_terms
                .iter()
                .filter_map(NodeTerm::parse)
                .collect(),
        }
    }
    pub fn matches(&self, node_name: &str, labels: &(impl LabelLookup + ?Sized)) -> bool {
        self.terms.iter().any(|t| t.matches(node_name, labels))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> Labels {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn requirement_operators() {
        let l = labels(&[("a", "1"), ("n", "10")]);
        let req = |key: &str, op, vals: &[&str]| Requirement {
            key: key.into(),
            op,
            values: vals.iter().map(|s| s.to_string()).collect(),
        };
        let cases = [
            (req("a", Op::In, &["1", "2"]), true),
            (req("a", Op::In, &["2"]), false),
            (req("a", Op::NotIn, &["2"]), true),
            (req("missing", Op::NotIn, &["2"]), true),
            (req("a", Op::Exists, &[]), true),
            (req("a", Op::DoesNotExist, &[]), false),
            (req("n", Op::Gt, &["9"]), true),
            (req("n", Op::Gt, &["10"]), false),
            (req("n", Op::Lt, &["11"]), true),
            (req("a", Op::Lt, &["x"]), false),
        ];
        for (r, want) in cases {
            assert_eq!(r.matches(&l), want, "{r:?}");
        }
    }

    #[test]
    fn labels_behave_as_the_btree_map_they_replace() {
        type Map = BTreeMap<String, String>;
        let pairs = |p: &[(&str, &str)]| -> Vec<(String, String)> {
            p.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        // (input pairs in order, with repeats and unsorted keys)
        let cases: [&[(&str, &str)]; 5] = [
            &[],
            &[("b", "2"), ("a", "1")],
            &[("k", "1"), ("k", "2")],
            &[("z", ""), ("", "empty key"), ("a/b", "x"), ("A", "upper")],
            &[("app", "web"), ("tier", "fe"), ("app", "db"), ("zone", "a")],
        ];
        for input in cases {
            let want: Map = pairs(input).into_iter().collect();
            let got: Labels = pairs(input).into_iter().collect();
            let got_pairs: Vec<(&str, &str)> =
                got.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            let want_pairs: Vec<(&str, &str)> =
                want.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            assert_eq!(got_pairs, want_pairs, "{input:?}");
            assert_eq!(got.len(), want.len());
            assert_eq!(format!("{got:?}"), format!("{want:?}"));
            assert_eq!(
                serde_json::to_string(&got).unwrap(),
                serde_json::to_string(&want).unwrap()
            );
            assert_eq!(Labels::from(&want), got);
            assert_eq!(got.to_map(), want);
            for k in want.keys().map(String::as_str).chain(["missing"]) {
                assert_eq!(got.get(k).map(Sym::as_str), want.get(k).map(String::as_str));
                assert_eq!(got.label(k), want.label(k));
            }
            // insert, extend and remove keep the map's semantics.
            let (mut g, mut w) = (got.clone(), want.clone());
            assert_eq!(
                g.insert("m".into(), "new".into()).map(String::from),
                w.insert("m".into(), "new".into())
            );
            g.extend([("a", "over"), ("b2", "x")]);
            w.extend([
                ("a".to_string(), "over".to_string()),
                ("b2".into(), "x".into()),
            ]);
            assert_eq!(g.remove("b").map(String::from), w.remove("b"));
            assert_eq!(g.to_map(), w);
        }
    }

    #[test]
    fn nil_selector_matches_nothing_empty_matches_all() {
        let l = labels(&[("a", "1")]);
        assert!(!label_selector(None).unwrap().matches(&l));
        assert!(
            label_selector(Some(&LabelSelector::default()))
                .unwrap()
                .matches(&l)
        );
    }
}
