//! The FitError message: `0/N nodes are available: ...` (kube-scheduler's
//! `FitError.Error()`).

use std::collections::BTreeMap;

use super::framework::NodeToStatus;

/// Builds the message byte for byte as upstream: PreFilter message if any, else the
/// reason histogram sorted as strings, then the PostFilter message.
pub fn fit_error_message(
    num_all_nodes: usize,
    statuses: &NodeToStatus,
    pre_filter_msg: &str,
    post_filter_msg: &str,
) -> String {
    let mut msg = format!("0/{num_all_nodes} nodes are available:");
    if !pre_filter_msg.is_empty() {
        msg.push_str(&format!(" {pre_filter_msg}."));
    } else {
        let mut histogram: BTreeMap<&str, usize> = BTreeMap::new();
        let mut explicit = 0usize;
        for st in statuses.statuses.iter().flatten() {
            explicit += 1;
            for r in &st.reasons {
                *histogram.entry(r.as_str()).or_insert(0) += 1;
            }
        }
        if explicit < num_all_nodes {
            let absent = num_all_nodes - explicit;
            for r in &statuses.absent.reasons {
                *histogram.entry(r.as_str()).or_insert(0) += absent;
            }
        }
        let mut parts: Vec<String> = histogram
            .into_iter()
            .map(|(reason, count)| format!("{count} {reason}"))
            .collect();
        // Sorted as strings, so "10 x" comes before "2 y".
        parts.sort();
        if !parts.is_empty() {
            msg.push_str(&format!(" {}.", parts.join(", ")));
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

    #[test]
    fn histogram_is_sorted_as_strings() {
        let mut statuses = vec![Some(Status::unresolvable("node(s) had untolerated taint(s)")); 10];
        statuses.push(Some(Status::unschedulable("Insufficient cpu")));
        statuses.push(Some(Status::unschedulable("Insufficient cpu")));
        statuses.push(Some(Status::unresolvable("node(s) were unschedulable")));
        let nts = NodeToStatus {
            statuses,
            absent: Status::success(),
        };
        assert_eq!(
            fit_error_message(13, &nts, "", ""),
            "0/13 nodes are available: 1 node(s) were unschedulable, 10 node(s) had untolerated taint(s), 2 Insufficient cpu."
        );
    }

    #[test]
    fn absent_status_counts_for_every_node_without_an_explicit_one() {
        let nts = NodeToStatus {
            statuses: vec![None, None, None],
            absent: Status::unresolvable("node(s) didn't satisfy plugin(s) [NodeAffinity]"),
        };
        assert_eq!(
            fit_error_message(3, &nts, "", "tail"),
            "0/3 nodes are available: 3 node(s) didn't satisfy plugin(s) [NodeAffinity]. tail"
        );
    }

    #[test]
    fn prefilter_message_replaces_histogram() {
        let nts = NodeToStatus::default();
        assert_eq!(
            fit_error_message(
                2,
                &nts,
                "pod has unbound immediate PersistentVolumeClaims",
                "not found"
            ),
            "0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims. not found"
        );
    }
}
