//! A capacity answer as a person reads it: how many more copies fit, what stops the
//! next one (its FitError and the rejection groups behind it), the per-node split
//! (most copies first) and whether that split may vary between runs. Drawn by the
//! `capacity` table and JSON alike.

use schedscope_engine::capacity::{Capacity, StoppedBy};
use serde::Serialize;

use crate::whatif::rejection_groups;

/// Nodes rejecting the copy that did not fit, for one plugin and reason.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StopGroup {
    pub nodes: usize,
    pub plugin: String,
    pub reason: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NodeCopies {
    pub node: String,
    pub copies: usize,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CapacityAnswer {
    pub pod: String,
    /// Copies that fit.
    pub count: usize,
    pub max: usize,
    pub stopped_by: StoppedBy,
    /// One sentence: what stopped the next copy.
    pub stop: String,
    /// The FitError of the next copy, when that is what stopped it.
    pub fit_error: Option<String>,
    /// The rejection groups of the next copy's cycle, the most nodes first.
    pub stop_groups: Vec<StopGroup>,
    /// The most copies first, then by node name.
    pub per_node: Vec<NodeCopies>,
    /// Why the per-node split may differ between runs (the count does not).
    pub split_note: Option<String>,
}

impl CapacityAnswer {
    pub fn of(c: &Capacity) -> CapacityAnswer {
        let next = c.count + 1;
        let stop = match c.stopped_by {
            StoppedBy::Max => format!(
                "stopped at --max {}: at least {} {} fit{}; raise --max to count further",
                c.max,
                c.count,
                if c.count == 1 { "copy" } else { "copies" },
                if c.count == 1 { "s" } else { "" }
            ),
            StoppedBy::FitError => format!("copy {next} fits on no node"),
            StoppedBy::PreEnqueue => format!(
                "the pod is held before the queue: {}",
                c.stop_message.as_deref().unwrap_or("")
            ),
            StoppedBy::Reserve => format!(
                "copy {next} was refused at Reserve: {}",
                c.stop_message.as_deref().unwrap_or("")
            ),
            StoppedBy::Error => format!(
                "copy {next}'s cycle ended on an error: {}",
                c.stop_message.as_deref().unwrap_or("")
            ),
        };
        let mut stop_groups: Vec<StopGroup> = c
            .stop_trace
            .as_ref()
            .filter(|_| c.stopped_by == StoppedBy::FitError)
            .map(rejection_groups)
            .unwrap_or_default()
            .into_iter()
            .map(|((plugin, reason), nodes)| StopGroup {
                nodes,
                plugin,
                reason,
            })
            .collect();
        // Stable: plugin and reason order breaks ties.
        stop_groups.sort_by_key(|g| std::cmp::Reverse(g.nodes));
        let mut per_node: Vec<NodeCopies> = c
            .per_node
            .iter()
            .map(|(node, &copies)| NodeCopies {
                node: node.clone(),
                copies,
            })
            .collect();
        per_node.sort_by_key(|n| std::cmp::Reverse(n.copies));
        CapacityAnswer {
            pod: c.pod.clone(),
            count: c.count,
            max: c.max,
            stopped_by: c.stopped_by.clone(),
            stop,
            fit_error: c.stop_fit_error.clone(),
            stop_groups,
            per_node,
            split_note: split_note(c),
        }
    }

    /// `18 more copies of shop/web-0 fit`.
    pub fn headline(&self) -> String {
        let at_least = if self.stopped_by == StoppedBy::Max {
            "at least "
        } else {
            ""
        };
        format!(
            "{at_least}{} more cop{} of {} fit{}",
            self.count,
            if self.count == 1 { "y" } else { "ies" },
            self.pod,
            if self.count == 1 { "s" } else { "" }
        )
    }
}

fn split_note(c: &Capacity) -> Option<String> {
    let mut why = Vec::new();
    if c.tied_placements > 0 {
        why.push(format!(
            "{} of the {} placements had several nodes tied for the best total \
             (kube-scheduler picks one of them at random)",
            c.tied_placements, c.count
        ));
    }
    if c.sampled_placements > 0 {
        why.push(format!(
            "{} searched only part of the nodes (percentageOfNodesToScore), which part \
             depending on the node order",
            c.sampled_placements
        ));
    }
    (!why.is_empty()).then(|| {
        format!(
            "the per-node split may differ between runs: {}; the count does not depend on it \
             in any scenario checked against kube-scheduler",
            why.join("; ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedscope_engine::capacity::capacity;
    use schedscope_engine::engine::SchedulerConfig;
    use schedscope_engine::engine::cycle::CycleOptions;
    use schedscope_engine::model::testing::{cluster, simple_node, simple_pod};

    #[test]
    fn a_fit_error_stop_names_the_next_copy_and_its_groups() {
        let c = cluster(
            vec![simple_node("n1", "2", "8Gi"), simple_node("n2", "1", "8Gi")],
            vec![simple_pod("p", "1", "1Gi", None)],
        );
        let cfg = SchedulerConfig::defaults();
        let pod = c.pod("default/p").unwrap().as_ref().clone();
        let cap = capacity(&c, &cfg.profiles, &pod, 100, &CycleOptions::default()).unwrap();
        let a = CapacityAnswer::of(&cap);
        assert_eq!(a.count, 3);
        assert_eq!(a.headline(), "3 more copies of default/p fit");
        assert_eq!(a.stop, "copy 4 fits on no node");
        assert_eq!(
            a.stop_groups,
            [StopGroup {
                nodes: 2,
                plugin: "NodeResourcesFit".into(),
                reason: "Insufficient cpu".into()
            }]
        );
        assert_eq!(
            a.per_node,
            [
                NodeCopies {
                    node: "n1".into(),
                    copies: 2
                },
                NodeCopies {
                    node: "n2".into(),
                    copies: 1
                }
            ]
        );
        let capped = capacity(&c, &cfg.profiles, &pod, 2, &CycleOptions::default()).unwrap();
        let a = CapacityAnswer::of(&capped);
        assert_eq!(a.headline(), "at least 2 more copies of default/p fit");
        assert!(a.stop.contains("--max 2"), "{}", a.stop);
        assert!(a.stop_groups.is_empty());
    }
}
