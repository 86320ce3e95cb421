//! Indexes the plugins derive from the nodes alone, built ahead of the first cycle.
//!
//! A cycle builds them on first use and the cluster keeps them until a node changes,
//! so only the first cycle after a load pays for them: PodTopologySpread's domains of
//! every node (hostname and zone) were most of a spread pod's first PreFilter at
//! 5,000 nodes. A snapshot load builds them on the core that stays idle while it
//! indexes the pods (`NodeIndexes::build` on a thread of its own), then hands them
//! to the cluster.

use std::sync::Arc;

use crate::engine::plugins::pod_topology_spread::{NodeDomains, default_domains};
use crate::model::{Cluster, Node};

/// What [`NodeIndexes::build`] derived, with the nodes it was derived from.
pub struct NodeIndexes {
    nodes: Vec<Arc<Node>>,
    domains: Vec<(String, NodeDomains)>,
}

impl NodeIndexes {
    /// From the nodes as the cluster lists them (`Cluster::nodes`, in its order).
    pub fn build(nodes: Vec<Arc<Node>>) -> Self {
        let domains = default_domains(&nodes);
        NodeIndexes { nodes, domains }
    }

    /// Hands the indexes to `cluster`'s node cache when its nodes are still the ones
    /// they were built from (the same objects, in the same order); else drops them,
    /// and the first cycle builds its own. Returns whether they were handed over.
    pub fn install(self, cluster: &Cluster) -> bool {
        let same = cluster.nodes().len() == self.nodes.len()
            && cluster
                .nodes()
                .iter()
                .zip(&self.nodes)
                .all(|(info, built_from)| Arc::ptr_eq(&info.node, built_from));
        if !same {
            return false;
        }
        for (key, domains) in self.domains {
            cluster.node_derived(&key, move |_| domains);
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::plugins::pod_topology_spread::node_domains;
    use crate::model::testing::{cluster, node, simple_node};

    fn zoned(name: &str, zone: Option<&str>) -> serde_json::Value {
        let mut n = simple_node(name, "1", "1Gi");
        n["metadata"]["labels"] = serde_json::json!({"kubernetes.io/hostname": name});
        if let Some(z) = zone {
            n["metadata"]["labels"]["topology.kubernetes.io/zone"] = z.into();
        }
        n
    }

    fn listed(c: &Cluster, key: &str) -> (Vec<u32>, Vec<String>, usize) {
        let d = node_domains(c, key);
        let names = d.names.iter().map(|n| n.to_string()).collect();
        (d.ids.clone(), names, d.empty_slot)
    }

    #[test]
    fn indexes_built_ahead_are_the_ones_a_cycle_builds() {
        let nodes = vec![
            zoned("a", Some("z1")),
            zoned("b", Some("z2")),
            zoned("c", None),
            zoned("d", Some("z1")),
        ];
        let built_on_use = cluster(nodes.clone(), vec![]);
        let ahead = cluster(nodes, vec![]);
        let from: Vec<Arc<Node>> = ahead.nodes().iter().map(|i| i.node.clone()).collect();
        assert!(NodeIndexes::build(from).install(&ahead));
        for key in ["kubernetes.io/hostname", "topology.kubernetes.io/zone"] {
            assert_eq!(listed(&ahead, key), listed(&built_on_use, key), "{key}");
        }
        // Installed: the cache hands back the very index built ahead.
        let first = node_domains(&ahead, "topology.kubernetes.io/zone");
        assert!(Arc::ptr_eq(
            &first,
            &node_domains(&ahead, "topology.kubernetes.io/zone")
        ));
    }

    #[test]
    fn indexes_of_other_nodes_are_not_installed() {
        let mut c = cluster(vec![zoned("a", Some("z1")), zoned("c", Some("z2"))], vec![]);
        let from: Vec<Arc<Node>> = c.nodes().iter().map(|i| i.node.clone()).collect();
        let built = NodeIndexes::build(from);
        // A node arrives after the build: the positions moved.
        c.upsert_node(node(zoned("b", Some("z3"))));
        assert!(!built.install(&c));
        let (ids, names, _) = listed(&c, "topology.kubernetes.io/zone");
        assert_eq!(ids, [0, 1, 2]);
        assert_eq!(names, ["z1", "z3", "z2"]);
    }
}
