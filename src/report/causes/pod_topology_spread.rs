//! PodTopologySpread: the hard constraint the node fails (topologyKey, maxSkew), the
//! node's domain and the skew placing the pod there would reach, or the missing
//! topology label. Computed with the plugin's own PreFilter state.

use crate::engine::plugins::pod_topology_spread::filtering::PreFilterState;
use crate::engine::plugins::pod_topology_spread::{
    PodTopologySpread, PodTopologySpreadArgs, SYSTEM_DEFAULTING,
};
use crate::model::{Cluster, NodeInfo, Pod};

/// The plugin's PreFilter state for `pod`, when it can be had without the profile:
/// only the pod's own constraints (defaulted constraints come from the profile's
/// arguments, which the trace does not carry).
pub fn state(cluster: &Cluster, pod: &Pod) -> Option<PreFilterState> {
    if pod.topology_spread_constraints.is_empty() {
        return None;
    }
    let args = PodTopologySpreadArgs {
        defaulting_type: SYSTEM_DEFAULTING.into(),
        ..Default::default()
    };
    let plugin = PodTopologySpread::new(&args).ok()?;
    plugin.pre_filter_state(cluster, pod).ok().flatten()
}

/// The first constraint the node fails, as the Filter checks them.
pub fn causes(state: &PreFilterState, node: &NodeInfo) -> Vec<String> {
    for (i, c) in state.fixed.constraints.iter().enumerate() {
        let key = &c.topology_key;
        let Some(value) = node.node.labels.get(key) else {
            return vec![format!(
                "topologyKey {key} (maxSkew {}): node lacks label {key}",
                c.max_skew
            )];
        };
        let min = state.min_match_num(i, c.min_domains);
        let matching = state.domains[i].get(value) + i64::from(state.fixed.self_match[i]);
        let skew = matching - min;
        if skew > c.max_skew as i64 {
            return vec![format!(
                "topologyKey {key} (maxSkew {}): {key}={value} would have {matching} matching pod{}, skew {skew} over the minimum {min}",
                c.max_skew,
                crate::report::plural(matching.max(0) as usize)
            )];
        }
    }
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::testing::{cluster, pod};
    use serde_json::{Value, json};

    fn node(name: &str, zone: Option<&str>) -> Value {
        let mut n = json!({"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}});
        if let Some(z) = zone {
            n["metadata"]["labels"]["zone"] = json!(z);
        }
        n
    }
    fn app_pod(name: &str, node: Option<&str>) -> Value {
        let mut p = json!({"metadata": {"name": name, "namespace": "default", "uid": name,
                "labels": {"app": "web"}},
            "spec": {"containers": [{"name": "c", "image": "i"}],
                "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone",
                    "whenUnsatisfiable": "DoNotSchedule",
                    "labelSelector": {"matchLabels": {"app": "web"}}}]}});
        if let Some(n) = node {
            p["spec"]["nodeName"] = json!(n);
        }
        p
    }

    #[test]
    fn names_the_constraint_domain_and_skew() {
        let c = cluster(
            vec![
                node("a1", Some("a")),
                node("b1", Some("b")),
                node("x", None),
            ],
            vec![app_pod("w1", Some("a1")), app_pod("w2", Some("a1"))],
        );
        let p = pod(app_pod("new", None));
        let s = state(&c, &p).expect("hard constraints");
        let cases: Vec<(&str, Vec<&str>)> = vec![
            (
                "a1",
                vec![
                    "topologyKey zone (maxSkew 1): zone=a would have 3 matching pods, skew 3 over the minimum 0",
                ],
            ),
            ("b1", vec![]),
            (
                "x",
                vec!["topologyKey zone (maxSkew 1): node lacks label zone"],
            ),
        ];
        for (n, want) in cases {
            assert_eq!(causes(&s, c.node(n).unwrap()), want, "{n}");
        }
    }
}
