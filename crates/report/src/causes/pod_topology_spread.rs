//! PodTopologySpread: the hard constraint the node fails (topologyKey, maxSkew), the
//! node's domain and the skew placing the pod there would reach, or the missing
//! topology label. Computed with the plugin's own PreFilter state, built with the
//! profile's arguments: a pod without constraints of its own gets the profile's
//! default constraints, and its causes say so.

use schedscope_engine::engine::Framework;
use schedscope_engine::engine::plugins::pod_topology_spread::filtering::PreFilterState;
use schedscope_engine::engine::plugins::pod_topology_spread::{
    NAME, PodTopologySpread, PodTopologySpreadArgs, SYSTEM_DEFAULTING,
};
use schedscope_engine::model::{Cluster, NodeInfo, Pod};

/// The plugin's PreFilter state for `pod`, and where its constraints came from.
pub struct State {
    plugin: PreFilterState,
    /// `Some(profile name)` when the constraints are the profile's defaults.
    defaults_of: Option<String>,
}

/// The plugin's PreFilter state for `pod` with `profile`'s arguments (the system
/// defaults, whose constraints are all soft, without one). `None` when no hard
/// constraint applies.
pub fn state(cluster: &Cluster, pod: &Pod, profile: Option<&Framework>) -> Option<State> {
    let args = profile
        .and_then(|fw| fw.plugin_args.get(NAME))
        .and_then(|v| serde_json::from_value::<PodTopologySpreadArgs>(v.clone()).ok())
        .unwrap_or_else(|| PodTopologySpreadArgs {
            defaulting_type: SYSTEM_DEFAULTING.into(),
            ..Default::default()
        });
    let plugin = PodTopologySpread::new(&args).ok()?;
    let plugin = plugin.pre_filter_state(cluster, pod).ok().flatten()?;
    let defaults_of = pod
        .topology_spread_constraints
        .is_empty()
        .then(|| profile.map_or_else(String::new, |fw| fw.profile_name.clone()));
    Some(State {
        plugin,
        defaults_of,
    })
}

/// The first constraint the node fails, as the Filter checks them.
pub fn causes(state: &State, node: &NodeInfo) -> Vec<String> {
    let st = &state.plugin;
    for (i, c) in st.fixed.constraints.iter().enumerate() {
        let key = &c.topology_key;
        let what = match &state.defaults_of {
            None => format!("topologyKey {key} (maxSkew {})", c.max_skew),
            Some(profile) => format!(
                "default constraint of profile {profile} (the pod has none): topologyKey {key} (maxSkew {}, pods {})",
                c.max_skew,
                super::selector_text(&c.selector)
            ),
        };
        let Some(value) = node.node.labels.get(key) else {
            return vec![format!("{what}: node lacks label {key}")];
        };
        let min = st.min_match_num(i, c.min_domains);
        let matching = st.domains[i].get(value) + i64::from(st.fixed.self_match[i]);
        let skew = matching - min;
        if skew > c.max_skew as i64 {
            return vec![format!(
                "{what}: {key}={value} would have {matching} matching pod{}, skew {skew} over the minimum {min}",
                crate::plural(matching.max(0) as usize)
            )];
        }
    }
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedscope_engine::model::testing::{cluster, pod};
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
        let s = state(&c, &p, None).expect("hard constraints");
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

    /// A pod without constraints gets the profile's default ones (List defaulting);
    /// the cause says they are the profile's, with the selector built from the
    /// Service that selects the pod.
    #[test]
    fn profile_default_constraints_are_named_as_the_profiles() {
        let mut plain = app_pod("new", None);
        plain["spec"]
            .as_object_mut()
            .unwrap()
            .remove("topologySpreadConstraints");
        let mut c = cluster(
            vec![
                node("a1", Some("a")),
                node("b1", Some("b")),
                node("x", None),
            ],
            vec![app_pod("w1", Some("a1")), app_pod("w2", Some("a1"))],
        );
        c.services.insert(
            "default/web".into(),
            serde_json::from_value(json!({"metadata": {"name": "web", "namespace": "default"},
                "spec": {"selector": {"app": "web"}}}))
            .unwrap(),
        );
        let fw = schedscope_engine::engine::Framework {
            profile_name: "spread-hard".into(),
            plugin_args: [(
                NAME.to_string(),
                json!({"defaultingType": "List", "defaultConstraints": [{"maxSkew": 1,
                    "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}]}),
            )]
            .into(),
            ..Default::default()
        };
        let p = pod(plain);
        assert!(state(&c, &p, None).is_none(), "system defaults are soft");
        let s = state(&c, &p, Some(&fw)).expect("the profile's hard default");
        let cases: Vec<(&str, Vec<&str>)> = vec![
            (
                "a1",
                vec![
                    "default constraint of profile spread-hard (the pod has none): topologyKey zone (maxSkew 1, pods app=web): zone=a would have 3 matching pods, skew 3 over the minimum 0",
                ],
            ),
            ("b1", vec![]),
            (
                "x",
                vec![
                    "default constraint of profile spread-hard (the pod has none): topologyKey zone (maxSkew 1, pods app=web): node lacks label zone",
                ],
            ),
        ];
        for (n, want) in cases {
            assert_eq!(causes(&s, c.node(n).unwrap()), want, "{n}");
        }
    }
}
