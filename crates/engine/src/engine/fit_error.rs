//! The text of a `FitError` (upstream: pkg/scheduler/framework/types.go,
//! `FitError.Error()`):
//! `0/<N> nodes are available: <reasons>. <post-filter message>`.

use std::collections::BTreeMap;

use super::framework::NodeToStatus;

/// Builds the FitError message the scheduler reports when no node fits.
///
/// * `pre_filter_msg` non-empty: it replaces the per-node histogram (PreFilter
///   rejections already gave every node the same status; counting them would repeat it).
/// * Otherwise every reason of every explicit node status counts once for that node,
///   and the absent status's reasons count once for each node without an explicit
///   status; entries `"<count> <reason>"` are sorted as strings (`"10 x"` < `"2 y"`).
/// * `post_filter_msg` is appended as is (it carries its own punctuation).
pub fn fit_error_message(
    num_all_nodes: usize,
    statuses: &NodeToStatus,
    pre_filter_msg: &str,
    post_filter_msg: &str,
) -> String {
    let mut msg = format!("0/{num_all_nodes} nodes are available:");
    if !pre_filter_msg.is_empty() {
        msg.push(' ');
        msg.push_str(pre_filter_msg);
        msg.push('.');
    } else {
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        let mut explicit = 0usize;
        for st in statuses.statuses.iter().flatten() {
            explicit += 1;
            for r in &st.reasons {
                *counts.entry(r.as_str()).or_insert(0) += 1;
            }
        }
        if explicit < num_all_nodes {
            let absent = num_all_nodes - explicit;
            for r in &statuses.absent.reasons {
                *counts.entry(r.as_str()).or_insert(0) += absent;
            }
        }
        // Go sorts the formatted strings, so the count is part of the sort key.
        let mut entries: Vec<String> = counts
            .into_iter()
            .map(|(reason, n)| format!("{n} {reason}"))
            .collect();
        entries.sort_unstable();
        if !entries.is_empty() {
            msg.push(' ');
            msg.push_str(&entries.join(", "));
            msg.push('.');
        }
    }
    if !post_filter_msg.is_empty() {
        msg.push(' ');
        msg.push_str(post_filter_msg);
    }
    msg
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::status::Status;

    fn statuses(explicit: Vec<Option<Status>>, absent: Status) -> NodeToStatus {
        NodeToStatus {
            statuses: explicit,
            absent,
        }
    }

    fn uu() -> Status {
        Status::new(
            crate::engine::status::Code::UnschedulableAndUnresolvable,
            Vec::<String>::new(),
        )
    }

    #[test]
    fn histogram_is_sorted_as_strings() {
        // h57: 10 tainted, 2 short of cpu, 1 cordoned.
        let mut v = Vec::new();
        for _ in 0..10 {
            v.push(Some(Status::unresolvable(
                "node(s) had untolerated taint(s)",
            )));
        }
        v.push(Some(Status::unresolvable("Insufficient cpu")));
        v.push(Some(Status::unresolvable("Insufficient cpu")));
        v.push(Some(Status::unresolvable("node(s) were unschedulable")));
        let m = statuses(v, uu());
        assert_eq!(
            fit_error_message(13, &m, "", ""),
            "0/13 nodes are available: 1 node(s) were unschedulable, \
             10 node(s) had untolerated taint(s), 2 Insufficient cpu."
        );
    }

    #[test]
    fn every_reason_of_a_status_counts() {
        let m = statuses(
            vec![
                Some(Status::new(
                    crate::engine::status::Code::Unschedulable,
                    ["Insufficient cpu", "Insufficient memory"],
                )),
                Some(Status::unschedulable("Insufficient cpu")),
            ],
            uu(),
        );
        assert_eq!(
            fit_error_message(2, &m, "", ""),
            "0/2 nodes are available: 1 Insufficient memory, 2 Insufficient cpu."
        );
    }

    #[test]
    fn absent_status_counts_for_every_node_without_one() {
        // Two explicit statuses (one a None slot), five nodes: the absent reason
        // counts 3 times.
        let m = statuses(
            vec![
                Some(Status::unschedulable("Insufficient cpu")),
                None,
                Some(Status::unschedulable("Insufficient cpu")),
            ],
            Status::unresolvable("Preemption is not helpful for scheduling"),
        );
        assert_eq!(
            fit_error_message(5, &m, "", ""),
            "0/5 nodes are available: 2 Insufficient cpu, \
             3 Preemption is not helpful for scheduling."
        );
    }

    #[test]
    fn all_absent_and_shorter_vec() {
        // h10: PreFilter restricted the cycle to a node that does not exist.
        let m = statuses(
            Vec::new(),
            Status::unresolvable("node(s) didn't satisfy plugin(s) [NodeAffinity]"),
        );
        assert_eq!(
            fit_error_message(3, &m, "", ""),
            "0/3 nodes are available: 3 node(s) didn't satisfy plugin(s) [NodeAffinity]."
        );
    }

    #[test]
    fn absent_without_reasons_adds_nothing() {
        let m = statuses(vec![Some(Status::unschedulable("Insufficient cpu"))], uu());
        assert_eq!(
            fit_error_message(3, &m, "", ""),
            "0/3 nodes are available: 1 Insufficient cpu."
        );
        let empty = statuses(Vec::new(), uu());
        assert_eq!(
            fit_error_message(3, &empty, "", ""),
            "0/3 nodes are available:"
        );
        assert_eq!(
            fit_error_message(3, &empty, "", "preemption: x."),
            "0/3 nodes are available: preemption: x."
        );
    }

    #[test]
    fn pre_filter_message_replaces_histogram() {
        let m = statuses(
            Vec::new(),
            Status::unschedulable(
                "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)",
            ),
        );
        assert_eq!(
            fit_error_message(
                2,
                &m,
                "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)",
                "not found"
            ),
            "0/2 nodes are available: node(s) unavailable due to one or more pvc(s) \
             bound to non-existent pv(s). not found"
        );
    }

    #[test]
    fn post_filter_message_appended_without_period() {
        // h52's outer message.
        let m = statuses(
            vec![
                Some(Status::unschedulable("Insufficient cpu")),
                Some(Status::unschedulable("Insufficient cpu")),
                Some(Status::unresolvable("node(s) were unschedulable")),
            ],
            uu(),
        );
        assert_eq!(
            fit_error_message(
                3,
                &m,
                "",
                "no new claims to deallocate, preemption: 0/3 nodes are available: \
                 1 Preemption is not helpful for scheduling, 2 No preemption victims \
                 found for incoming pod."
            ),
            "0/3 nodes are available: 1 node(s) were unschedulable, 2 Insufficient cpu. \
             no new claims to deallocate, preemption: 0/3 nodes are available: \
             1 Preemption is not helpful for scheduling, 2 No preemption victims found \
             for incoming pod."
        );
    }
}
