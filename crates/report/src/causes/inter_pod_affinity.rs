//! InterPodAffinity: the required (anti-)affinity term a node fails, with the existing
//! pod that decides it (the first by key in the node's topology domain), or the
//! missing topology label; or the existing pod whose own required anti-affinity term
//! selects the incoming pod. Counts are the plugin's own PreFilter state; only the
//! naming of the deciding pod is done here.

use std::collections::BTreeMap;

use schedscope_engine::engine::plugins::inter_pod_affinity::filtering::PreFilterState;
use schedscope_engine::engine::plugins::inter_pod_affinity::{
    AffinityTerm, InterPodAffinity, InterPodAffinityArgs, for_each_candidate, raw_term_matches,
    raw_terms_valid, required_anti_affinity_terms,
};
use schedscope_engine::model::label_index::TermKind;
use schedscope_engine::model::labels::{Labels, label_selector};
use schedscope_engine::model::{Cluster, NodeInfo, Pod};

use super::selector_text;

/// An existing pod deciding a (key, value) domain: the first by pod key.
#[derive(Clone, Debug)]
struct Witness {
    pod: String,
    node: String,
    /// The existing pod's term, as text (existing pods' anti-affinity only).
    term: String,
}

/// The plugin's PreFilter state, with the pods behind its counts named.
pub struct State {
    plugin: PreFilterState,
    /// Per anti-affinity term of the incoming pod: topology value → its first
    /// matching pod.
    anti: Vec<BTreeMap<String, Witness>>,
    /// (topology key, value) → the first existing pod whose required anti-affinity
    /// term matches the incoming pod there.
    existing: BTreeMap<(String, String), Witness>,
    namespace: String,
}

/// The plugin's state for `pod` (`None` when PreFilter skips or fails: Filter then
/// rejects nothing, or the cycle stopped before it).
pub fn state(cluster: &Cluster, pod: &Pod) -> Option<State> {
    let plugin = InterPodAffinity::with_args(InterPodAffinityArgs::default())
        .pre_filter_state(cluster, pod)
        .ok()
        .flatten()?;
    let empty = Labels::new();
    let keep_first = |m: &mut BTreeMap<String, Witness>, value: &str, w: Witness| match m.get(value)
    {
        Some(old) if old.pod <= w.pod => {}
        _ => {
            m.insert(value.to_string(), w);
        }
    };
    let anti = plugin
        .fixed
        .terms
        .required_anti_affinity
        .iter()
        .map(|t| {
            let mut by_value = BTreeMap::new();
            for_each_candidate(cluster, &t.selector, |pos, other| {
                let info = &cluster.nodes()[pos];
                if let Some(v) = info.node.labels.get(&t.topology_key)
                    && t.matches(other, &empty)
                {
                    let w = Witness {
                        pod: other.key().to_string(),
                        node: info.name().to_string(),
                        term: String::new(),
                    };
                    keep_first(&mut by_value, v, w);
                }
            });
            by_value
        })
        .collect();
    let mut existing: BTreeMap<(String, String), Witness> = BTreeMap::new();
    let ns_labels = cluster.namespace_labels(&pod.namespace);
    let index = cluster.label_index();
    for other in index.pods_with_terms_selecting(TermKind::RequiredAntiAffinity, &pod.labels) {
        let Some(info) = other.node_name.as_deref().and_then(|n| cluster.node(n)) else {
            continue;
        };
        let terms = required_anti_affinity_terms(other);
        if !raw_terms_valid(terms) {
            continue;
        }
        let other_key = other.key().to_string();
        for t in terms {
            let Some(v) = info.node.labels.get(&t.topology_key) else {
                continue;
            };
            if !raw_term_matches(t, other, pod, &ns_labels) {
                continue;
            }
            let key = (t.topology_key.clone(), v.to_string());
            if existing.get(&key).is_some_and(|w| w.pod <= other_key) {
                continue;
            }
            let selector = label_selector(t.label_selector.as_ref())
                .map(|s| selector_text(&s))
                .unwrap_or_default();
            existing.insert(
                key,
                Witness {
                    pod: other_key.clone(),
                    node: info.name().to_string(),
                    term: format!("topologyKey={}, {selector}", t.topology_key),
                },
            );
        }
    }
    Some(State {
        plugin,
        anti,
        existing,
        namespace: pod.namespace.to_string(),
    })
}

/// Why the node fails, in the Filter's order: the pod's affinity, its anti-affinity,
/// then existing pods' anti-affinity.
pub fn causes(s: &State, node: &NodeInfo) -> Vec<String> {
    let labels = &node.node.labels;
    let st = &s.plugin;
    let terms = &st.fixed.terms;

    // satisfyPodAffinity: every key on the node and a matching pod in every domain,
    // unless no pod anywhere matches and the pod matches its own terms.
    let first_of_group = st.affinity.is_empty() && st.fixed.self_matches_all;
    let mut out = Vec::new();
    for t in &terms.required_affinity {
        let what = format!("pod affinity term {}", term_text(t, &s.namespace));
        match labels.get(&t.topology_key) {
            // Every topology key must be on the node: the first missing decides.
            None => return vec![format!("{what}: node lacks label {}", t.topology_key)],
            Some(v) if st.affinity.get(&t.topology_key, v) <= 0 => out.push(format!(
                "{what}: no pod matching all affinity terms in {}={v}",
                t.topology_key
            )),
            Some(_) => {}
        }
    }
    if !out.is_empty() && !first_of_group {
        return out;
    }
    out.clear();

    if !st.anti_affinity.is_empty() {
        for (i, t) in terms.required_anti_affinity.iter().enumerate() {
            let Some(v) = labels.get(&t.topology_key) else {
                continue;
            };
            let n = st.anti_affinity.get(&t.topology_key, v);
            if n <= 0 {
                continue;
            }
            let what = format!("pod anti-affinity term {}", term_text(t, &s.namespace));
            let line = match s.anti.get(i).and_then(|m| m.get(v.as_str())) {
                Some(w) => format!(
                    "{what}: matches {} on {}{} in {}={v}",
                    w.pod,
                    w.node,
                    more(n),
                    t.topology_key
                ),
                None => format!(
                    "{what}: {n} matching pod{} in {}={v}",
                    crate::plural(n.max(0) as usize),
                    t.topology_key
                ),
            };
            out.push(line);
        }
        if !out.is_empty() {
            return out;
        }
    }

    for k in st.existing_anti_affinity.keys() {
        let Some(v) = labels.get(k) else { continue };
        let n = st.existing_anti_affinity.get(k, v);
        if n <= 0 {
            continue;
        }
        out.push(match s.existing.get(&(k.clone(), v.to_string())) {
            // The key before the colon (the subject), the domain and its pods after it.
            Some(w) => format!(
                "existing pods' anti-affinity (topologyKey {k}): {} on {}{} has term {} matching this pod, in {k}={v}",
                w.pod,
                w.node,
                more(n),
                w.term
            ),
            None => format!(
                "existing pods' anti-affinity (topologyKey {k}): {n} with a term matching this pod in {k}={v}"
            ),
        });
    }
    // The counts' keys come from a hash map: one order for every output.
    out.sort();
    out
}

fn more(n: i64) -> String {
    if n > 1 {
        format!(" (+{} more)", n - 1)
    } else {
        String::new()
    }
}

/// `topologyKey=zone, app=db`, with the namespaces when they are not just the pod's.
fn term_text(t: &AffinityTerm, own_namespace: &str) -> String {
    let mut s = format!(
        "topologyKey={}, {}",
        t.topology_key,
        selector_text(&t.selector)
    );
    let only_own = t.namespaces.len() == 1 && t.namespaces.contains(own_namespace);
    if t.namespace_selector.is_empty() {
        s.push_str(", all namespaces");
    } else if !only_own && !t.namespaces.is_empty() {
        let ns: Vec<&str> = t.namespaces.iter().map(String::as_str).collect();
        s.push_str(&format!(", namespaces {}", ns.join(", ")));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedscope_engine::model::testing::{cluster, pod};
    use serde_json::{Value, json};

    fn node(name: &str, zone: &str) -> Value {
        json!({"metadata": {"name": name,
                "labels": {"kubernetes.io/hostname": name, "zone": zone}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}})
    }
    fn app_pod(name: &str, app: &str, node: Option<&str>, affinity: Value) -> Value {
        let mut p = json!({"metadata": {"name": name, "namespace": "shop", "uid": name,
                "labels": {"app": app}},
            "spec": {"containers": [{"name": "c", "image": "i"}]}});
        if let Some(n) = node {
            p["spec"]["nodeName"] = json!(n);
        }
        if !affinity.is_null() {
            p["spec"]["affinity"] = affinity;
        }
        p
    }
    fn term(app: &str, key: &str) -> Value {
        json!({"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": key})
    }

    #[test]
    fn names_the_term_and_the_pod_that_decides() {
        let existing = vec![
            app_pod("db-1", "db", Some("n3"), Value::Null),
            app_pod("db-0", "db", Some("n3"), Value::Null),
            app_pod("cache-0", "cache", Some("n2"), Value::Null),
            app_pod(
                "loner",
                "loner",
                Some("n4"),
                json!({"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
                    [term("web", "zone")]}}),
            ),
        ];
        let nodes = vec![
            node("n1", "us-a"),
            node("n2", "us-b"),
            node("n3", "us-a"),
            node("n4", "us-c"),
        ];
        let c = cluster(nodes, existing);
        // (incoming pod's affinity, node, expected causes)
        let cases: Vec<(&str, Value, &str, Vec<&str>)> = vec![
            (
                "anti-affinity: two db pods in the zone, first by key named",
                json!({"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
                    [term("db", "zone")]}}),
                "n1",
                vec![
                    "pod anti-affinity term topologyKey=zone, app=db: matches shop/db-0 on n3 (+1 more) in zone=us-a",
                ],
            ),
            (
                "anti-affinity: other zone passes",
                json!({"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
                    [term("db", "zone")]}}),
                "n2",
                vec![],
            ),
            (
                "affinity: no matching pod in the domain",
                json!({"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
                    [term("cache", "zone")]}}),
                "n1",
                vec![
                    "pod affinity term topologyKey=zone, app=cache: no pod matching all affinity terms in zone=us-a",
                ],
            ),
            (
                "affinity: node lacks the topology key",
                json!({"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
                    [term("cache", "rack")]}}),
                "n2",
                vec!["pod affinity term topologyKey=rack, app=cache: node lacks label rack"],
            ),
            (
                "existing pod's anti-affinity against the incoming web pod",
                Value::Null,
                "n4",
                vec![
                    "existing pods' anti-affinity (topologyKey zone): shop/loner on n4 has term topologyKey=zone, app=web matching this pod, in zone=us-c",
                ],
            ),
        ];
        for (name, affinity, n, want) in cases {
            let p = pod(app_pod("new", "web", None, affinity));
            let s = state(&c, &p).expect(name);
            assert_eq!(causes(&s, c.node(n).unwrap()), want, "{name}");
        }
    }
}
