//! NodePorts: each host port the pod wants that a pod on the node already holds,
//! with that pod.

use schedscope_engine::engine::plugins::node_ports::port_conflicts;
use schedscope_engine::model::{NodeInfo, Pod};

pub fn causes(pod: &Pod, node: &NodeInfo) -> Vec<String> {
    let mut out = Vec::new();
    for want in &pod.host_ports {
        let holders: Vec<String> = node
            .pods
            .iter()
            .filter(|p| p.uid != pod.uid)
            .filter(|p| p.host_ports.iter().any(|u| port_conflicts(u, want)))
            .map(|p| p.key().to_string())
            .collect();
        if holders.is_empty() {
            continue;
        }
        out.push(format!(
            "hostPort {}/{} ({}): in use by {}",
            want.port,
            want.protocol,
            want.ip,
            holders.join(", ")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::testing::on_node;
    use super::*;
    use schedscope_engine::model::testing::simple_node;
    use serde_json::{Value, json};

    fn with_port(name: &str, ip: Option<&str>, port: i32, node: Option<&str>) -> Value {
        let mut p = json!({"metadata": {"name": name, "namespace": "default", "uid": name},
            "spec": {"containers": [{"name": "c", "image": "i",
                "ports": [{"containerPort": port, "hostPort": port}]}]}});
        if let Some(ip) = ip {
            p["spec"]["containers"][0]["ports"][0]["hostIP"] = json!(ip);
        }
        if let Some(n) = node {
            p["spec"]["nodeName"] = json!(n);
        }
        p
    }

    #[test]
    fn names_the_pod_holding_the_port() {
        // (case, the holder's hostIP, the wanted hostIP, causes)
        type Case<'a> = (&'a str, Option<&'a str>, Option<&'a str>, Vec<&'a str>);
        let cases: Vec<Case> = vec![
            (
                "both on all addresses",
                None,
                None,
                vec!["hostPort 8080/TCP (0.0.0.0): in use by default/web"],
            ),
            (
                "held on one address, wanted on all",
                Some("10.0.0.1"),
                None,
                vec!["hostPort 8080/TCP (0.0.0.0): in use by default/web"],
            ),
            (
                "different addresses",
                Some("10.0.0.1"),
                Some("10.0.0.2"),
                vec![],
            ),
        ];
        for (name, held_ip, want_ip, want) in cases {
            let (p, n) = on_node(
                simple_node("n1", "4", "8Gi"),
                vec![with_port("web", held_ip, 8080, Some("n1"))],
                with_port("new", want_ip, 8080, None),
            );
            assert_eq!(causes(&p, &n), want, "{name}");
        }
    }
}
