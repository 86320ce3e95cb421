//! Label selectors and node selectors, with Kubernetes' matching rules.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1 as core;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

pub type Labels = BTreeMap<String, String>;

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
    pub fn matches(&self, labels: &Labels) -> bool {
        let v = labels.get(&self.key);
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
    pub fn everything() -> Self {
        Selector {
            requirements: Some(Vec::new()),
        }
    }
    pub fn from_map(m: &Labels) -> Self {
        Selector {
            requirements: Some(
                m.iter()
                    .map(|(k, v)| Requirement {
                        key: k.clone(),
                        op: Op::In,
                        values: vec![v.clone()],
                    })
                    .collect(),
            ),
        }
    }
    pub fn matches(&self, labels: &Labels) -> bool {
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

    pub fn matches(&self, node_name: &str, labels: &Labels) -> bool {
        if !self.valid {
            return false;
        }
        if !self.labels.iter().all(|r| r.matches(labels)) {
            return false;
        }
        if self.fields.is_empty() {
            return true;
        }
        let mut fields = Labels::new();
        fields.insert("metadata.name".into(), node_name.into());
        self.fields.iter().all(|r| r.matches(&fields))
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
    pub fn matches(&self, node_name: &str, labels: &Labels) -> bool {
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
