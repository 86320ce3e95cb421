//! TaintToleration: every NoSchedule/NoExecute taint of the node the pod does not
//! tolerate, as `key=value:Effect`.

use schedscope_engine::engine::plugins::taint_toleration::{
    EFFECT_NO_EXECUTE, EFFECT_NO_SCHEDULE, tolerations_tolerate_taint,
};
use schedscope_engine::model::{NodeInfo, Pod};

pub fn causes(pod: &Pod, node: &NodeInfo) -> Vec<String> {
    node.node
        .taints
        .iter()
        .filter(|t| {
            (t.effect == EFFECT_NO_SCHEDULE || t.effect == EFFECT_NO_EXECUTE)
                && !tolerations_tolerate_taint(&pod.tolerations, t)
        })
        .map(|t| {
            format!(
                "untolerated taint {}:{}",
                super::key_value(&t.key, t.value.as_deref()),
                t.effect
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::testing::on_node;
    use super::*;
    use serde_json::{Value, json};

    #[test]
    fn lists_each_untolerated_blocking_taint() {
        let cases: Vec<(&str, Value, Value, Vec<&str>)> = vec![
            (
                "value and no value",
                json!([{"key": "gpu", "value": "true", "effect": "NoSchedule"},
                       {"key": "maint", "effect": "NoExecute"}]),
                json!([]),
                vec![
                    "untolerated taint gpu=true:NoSchedule",
                    "untolerated taint maint:NoExecute",
                ],
            ),
            (
                "tolerated and PreferNoSchedule left out",
                json!([{"key": "gpu", "value": "true", "effect": "NoSchedule"},
                       {"key": "soft", "effect": "PreferNoSchedule"},
                       {"key": "maint", "effect": "NoExecute"}]),
                json!([{"key": "gpu", "operator": "Exists"}]),
                vec!["untolerated taint maint:NoExecute"],
            ),
        ];
        for (name, taints, tols, want) in cases {
            let (p, n) = on_node(
                json!({"metadata": {"name": "n1"}, "spec": {"taints": taints}}),
                vec![],
                json!({"metadata": {"name": "p", "namespace": "default"},
                    "spec": {"containers": [{"name": "c", "image": "i"}], "tolerations": tols}}),
            );
            assert_eq!(causes(&p, &n), want, "{name}");
        }
    }
}
