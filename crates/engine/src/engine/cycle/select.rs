//! Host selection (upstream: pkg/scheduler/schedule_one.go, `selectHost`): the best
//! nodes and the one kube-scheduler's heap puts on top.

use crate::engine::trace::{Outcome, Trace};

/// The best nodes and the one chosen among them (upstream `selectHost`).
pub(super) fn choose_host(trace: &mut Trace) {
    let max = trace.totals.iter().copied().max().unwrap_or(0);
    let mut best: Vec<String> = trace
        .feasible
        .iter()
        .zip(&trace.totals)
        .filter(|(_, t)| **t == max)
        .map(|(n, _)| n.clone())
        .collect();
    best.sort();
    trace.best_nodes = best;
    let host = select_host(&trace.totals).map(|i| trace.feasible[i].clone());
    trace.selected_node = host.clone();
    if let Some(node) = host {
        trace.outcome = Outcome::Scheduled { node };
    }
}

/// kube-scheduler's host selection: heapify the scored list (feasible order) and take
/// the root. Ties go to whichever the heap puts on top; with no extenders the
/// tie-break value is 0 for every node.
fn select_host(totals: &[i64]) -> Option<usize> {
    if totals.is_empty() {
        return None;
    }
    let mut heap: Vec<usize> = (0..totals.len()).collect();
    let before = |a: usize, b: usize| totals[a] > totals[b];
    let len = heap.len();
    for start in (0..len / 2).rev() {
        let mut i = start;
        loop {
            let l = 2 * i + 1;
            if l >= len {
                break;
            }
            let mut c = l;
            if l + 1 < len && before(heap[l + 1], heap[l]) {
                c = l + 1;
            }
            if !before(heap[c], heap[i]) {
                break;
            }
            heap.swap(i, c);
            i = c;
        }
    }
    Some(heap[0])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heap_selection_matches_go_container_heap() {
        // [5, 9a, 9b] → 9a; [9a, 5, 9b] → 9a (upstream: schedule_one.go, selectHost).
        assert_eq!(select_host(&[5, 9, 9]), Some(1));
        assert_eq!(select_host(&[9, 5, 9]), Some(0));
        assert_eq!(select_host(&[1, 2, 3, 4, 5]), Some(4));
        assert_eq!(select_host(&[]), None);
    }
}
