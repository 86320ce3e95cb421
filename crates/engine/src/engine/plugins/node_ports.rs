//! NodePorts (PreFilter, Filter): the pod's host ports must be free on the node.
//!
//! Wanted ports are those with `hostPort > 0` of containers and of restartable
//! (sidecar) init containers; `Pod::host_ports` holds them already normalised (ip
//! `""` → `0.0.0.0`, protocol `""` → `TCP`, hostNetwork defaulting applied).

use std::sync::Arc;

use crate::engine::framework::{
    Ctx, CycleState, FilterPlugin, Plugin, PreFilterPlugin, PreFilterResult, state_not_found,
};
use crate::engine::status::Status;
use crate::model::{HostPort, NodeInfo, Pod};

pub const NAME: &str = "NodePorts";
const PRE_FILTER_STATE_KEY: &str = "PreFilterNodePorts";
pub const ERR_REASON: &str = "node(s) didn't have free ports for the requested pod ports";
const BIND_ALL: &str = "0.0.0.0";

pub struct NodePorts {
    /// Sidecars' host ports count, the incoming pod's and those in use (1.34,
    /// 1.33.6+); before, only regular containers' do.
    sidecars: bool,
}

pub fn new(
    _args: &serde_json::Value,
    fts: &crate::version::Features,
) -> Result<Arc<dyn Plugin>, String> {
    Ok(Arc::new(NodePorts {
        sidecars: fts.sidecar_host_ports(),
    }))
}

/// The host ports of a pod that count: all, or only its containers' (not sidecars').
fn counted_ports(pod: &Pod, sidecars: bool) -> &[HostPort] {
    if sidecars {
        &pod.host_ports
    } else {
        &pod.host_ports[..pod.host_ports.len() - pod.sidecar_host_ports as usize]
    }
}

#[derive(Clone)]
struct PreFilterState {
    wanted: Vec<HostPort>,
}

impl Plugin for NodePorts {
    fn name(&self) -> &str {
        NAME
    }
    fn as_pre_filter(&self) -> Option<&dyn PreFilterPlugin> {
        Some(self)
    }
    fn as_filter(&self) -> Option<&dyn FilterPlugin> {
        Some(self)
    }
}

impl PreFilterPlugin for NodePorts {
    fn pre_filter(
        &self,
        _cx: &Ctx,
        state: &mut CycleState,
        pod: &Pod,
    ) -> (PreFilterResult, Status) {
        let wanted = counted_ports(pod, self.sidecars);
        if wanted.is_empty() {
            return (None, Status::skip());
        }
        state.write(
            PRE_FILTER_STATE_KEY,
            PreFilterState {
                wanted: wanted.to_vec(),
            },
        );
        (None, Status::success())
    }
}

impl FilterPlugin for NodePorts {
    fn filter(&self, _cx: &Ctx, state: &CycleState, _pod: &Pod, node: &NodeInfo) -> Status {
        let Some(s) = state.read::<PreFilterState>(PRE_FILTER_STATE_KEY) else {
            return state_not_found(PRE_FILTER_STATE_KEY);
        };
        let conflict = if self.sidecars {
            s.wanted.iter().any(|hp| conflicts(node, hp))
        } else {
            // The node's used ports include sidecars'; recount without them.
            node.pods.iter().any(|p| {
                counted_ports(p, false)
                    .iter()
                    .any(|u| s.wanted.iter().any(|w| port_conflicts(u, w)))
            })
        };
        if conflict {
            return Status::unschedulable(ERR_REASON);
        }
        Status::success()
    }
}

/// `HostPortInfo.CheckConflict`: a wildcard ip conflicts with the same protocol/port on
/// any ip; a specific ip conflicts with the same protocol/port on itself or on the
/// wildcard.
/// Whether one port already in use on a node blocks `want`: the pairwise form of
/// `conflicts`, for explanations that name the pod holding the port.
pub fn port_conflicts(used: &HostPort, want: &HostPort) -> bool {
    want.port > 0
        && used.port == want.port
        && used.protocol == want.protocol
        && (want.ip == BIND_ALL || used.ip == BIND_ALL || used.ip == want.ip)
}

fn conflicts(node: &NodeInfo, want: &HostPort) -> bool {
    if want.port <= 0 {
        return false;
    }
    if want.ip == BIND_ALL {
        return node
            .used_ports
            .keys()
            .any(|u| u.port == want.port && u.protocol == want.protocol);
    }
    let wildcard = HostPort {
        ip: BIND_ALL.to_string(),
        protocol: want.protocol.clone(),
        port: want.port,
    };
    node.used_ports.contains_key(&wildcard) || node.used_ports.contains_key(want)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// v1.35's.
    const NODE_PORTS: NodePorts = NodePorts { sidecars: true };
    use crate::engine::status::Code;
    use crate::model::testing::{cluster, pod, simple_node};
    use k8s_openapi::jiff::Timestamp;
    use serde_json::{Value, json};

    /// The pairwise rule the explanations use says what `conflicts` says, for every
    /// pairing of addresses, protocols and ports.
    #[test]
    fn port_conflicts_agrees_with_conflicts() {
        let hp = |ip: &str, protocol: &str, port: i32| HostPort {
            ip: ip.into(),
            protocol: protocol.into(),
            port,
        };
        let all: Vec<HostPort> = ["0.0.0.0", "10.0.0.1", "10.0.0.2"]
            .iter()
            .flat_map(|ip| {
                ["TCP", "UDP"]
                    .iter()
                    .flat_map(move |pr| [0, 80, 81].map(|port| hp(ip, pr, port)))
            })
            .collect();
        for used in &all {
            let mut node = NodeInfo::new(std::sync::Arc::new(crate::model::testing::node(
                simple_node("n1", "1", "1Gi"),
            )));
            node.used_ports.insert(used.clone(), 1);
            for want in &all {
                assert_eq!(
                    port_conflicts(used, want),
                    conflicts(&node, want),
                    "{used:?} {want:?}"
                );
            }
        }
    }

    fn port_pod(name: &str, node: Option<&str>, ports: Value) -> Value {
        let mut v = json!({
            "metadata": {"name": name, "uid": name},
            "spec": {"containers": [{"name": "c", "ports": ports}]}
        });
        if let Some(n) = node {
            v["spec"]["nodeName"] = json!(n);
        }
        v
    }

    #[test]
    fn prefilter_skips_without_host_ports() {
        let c = cluster(vec![], vec![]);
        let cx = Ctx {
            cluster: &c,
            now: Timestamp::UNIX_EPOCH,
        };
        let cases = [
            (json!([{"containerPort": 80}]), true),
            (json!([{"containerPort": 80, "hostPort": 0}]), true),
            (json!([{"containerPort": 80, "hostPort": 8080}]), false),
        ];
        for (ports, skip) in cases {
            let p = pod(port_pod("p", None, ports.clone()));
            let mut st = CycleState::default();
            let (res, s) = NODE_PORTS.pre_filter(&cx, &mut st, &p);
            assert!(res.is_none());
            assert_eq!(s.is_skip(), skip, "{ports}");
            assert_eq!(st.contains(PRE_FILTER_STATE_KEY), !skip);
        }
        // Sidecar init containers count; plain init containers do not.
        let init = |restart: Option<&str>| {
            let mut c = json!({"name": "i", "ports": [{"containerPort": 1, "hostPort": 9000}]});
            if let Some(r) = restart {
                c["restartPolicy"] = json!(r);
            }
            pod(json!({"metadata": {"name": "p"},
                       "spec": {"containers": [{"name": "c"}], "initContainers": [c]}}))
        };
        let mut st = CycleState::default();
        assert!(NODE_PORTS.pre_filter(&cx, &mut st, &init(None)).1.is_skip());
        assert!(
            NODE_PORTS
                .pre_filter(&cx, &mut st, &init(Some("Always")))
                .1
                .is_success()
        );
    }

    /// h12/h13/h62-style conflicts.
    #[test]
    fn conflict_rules() {
        let existing = |ip: Option<&str>, proto: &str, port: i32| {
            let mut p = json!({"containerPort": port, "hostPort": port, "protocol": proto});
            if let Some(ip) = ip {
                p["hostIP"] = json!(ip);
            }
            p
        };
        let c = cluster(
            vec![
                simple_node("any-8080", "4", "8Gi"),
                simple_node("ip-8080", "4", "8Gi"),
                simple_node("udp-8080", "4", "8Gi"),
                simple_node("empty", "4", "8Gi"),
            ],
            vec![
                port_pod("a", Some("any-8080"), json!([existing(None, "TCP", 8080)])),
                port_pod(
                    "b",
                    Some("ip-8080"),
                    json!([existing(Some("10.0.0.1"), "TCP", 8080)]),
                ),
                port_pod("c", Some("udp-8080"), json!([existing(None, "UDP", 8080)])),
            ],
        );
        let cx = Ctx {
            cluster: &c,
            now: Timestamp::UNIX_EPOCH,
        };
        // (wanted port, node, code)
        let cases = [
            (existing(None, "TCP", 8080), "any-8080", Code::Unschedulable),
            (existing(None, "TCP", 8080), "ip-8080", Code::Unschedulable), // wildcard vs any ip
            (existing(None, "TCP", 8080), "udp-8080", Code::Success),      // other protocol
            (existing(None, "TCP", 8080), "empty", Code::Success),
            (
                existing(Some("10.0.0.1"), "TCP", 8080),
                "ip-8080",
                Code::Unschedulable,
            ),
            (
                existing(Some("10.0.0.2"), "TCP", 8080),
                "ip-8080",
                Code::Success,
            ), // other ip
            (
                existing(Some("10.0.0.2"), "TCP", 8080),
                "any-8080",
                Code::Unschedulable,
            ),
            (existing(None, "TCP", 8081), "any-8080", Code::Success),
        ];
        for (want, node, code) in cases {
            let p = pod(port_pod("pending", None, json!([want.clone()])));
            let mut st = CycleState::default();
            assert!(NODE_PORTS.pre_filter(&cx, &mut st, &p).1.is_success());
            let s = NODE_PORTS.filter(&cx, &st, &p, c.node(node).unwrap());
            assert_eq!(s.code, code, "{want} on {node}");
            if code != Code::Success {
                assert_eq!(s.message(), ERR_REASON);
            }
        }
    }

    #[test]
    fn host_network_defaults_host_port() {
        // h62: hostNetwork publishes containerPort as hostPort.
        let c = cluster(
            vec![simple_node("n1", "4", "8Gi")],
            vec![port_pod(
                "a",
                Some("n1"),
                json!([{"containerPort": 80, "hostPort": 80}]),
            )],
        );
        let cx = Ctx {
            cluster: &c,
            now: Timestamp::UNIX_EPOCH,
        };
        let p = pod(json!({"metadata": {"name": "hn"},
            "spec": {"hostNetwork": true, "containers": [{"name": "c", "ports": [{"containerPort": 80}]}]}}));
        let mut st = CycleState::default();
        assert!(NODE_PORTS.pre_filter(&cx, &mut st, &p).1.is_success());
        assert_eq!(
            NODE_PORTS.filter(&cx, &st, &p, &c.nodes()[0]).code,
            Code::Unschedulable
        );
    }

    #[test]
    fn filter_without_state_is_an_error() {
        let c = cluster(vec![simple_node("n1", "4", "8Gi")], vec![]);
        let cx = Ctx {
            cluster: &c,
            now: Timestamp::UNIX_EPOCH,
        };
        let p = pod(port_pod("p", None, json!([])));
        let s = NODE_PORTS.filter(&cx, &CycleState::default(), &p, &c.nodes()[0]);
        assert_eq!(s.code, Code::Error);
        assert_eq!(
            s.message(),
            "reading \"PreFilterNodePorts\" from cycleState: not found"
        );
    }
}
