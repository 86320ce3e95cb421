//! Remedies on the demo cluster: every suggestion for every pending pod, replayed
//! under its own edits, is schedulable (on the node it names, with the feasible count
//! and total it reports).

use std::path::Path;

use schedscope::engine::SchedulerConfig;
use schedscope::engine::cycle::CycleOptions;
use schedscope::engine::trace::Outcome;
use schedscope::report::remedies::{DEFAULT_LIMIT, Goal, suggest};
use schedscope::source::load_snapshot;
use schedscope_engine::whatif::{parse_edits, replay, replay_edited};

#[test]
fn every_suggestion_for_every_demo_pending_pod_replays_to_schedulable() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/demo-cluster.yaml");
    let snap = load_snapshot(&path).expect("demo loads");
    let cluster = &snap.cluster;
    let config = SchedulerConfig::defaults();
    let opts = CycleOptions {
        now: "2026-01-01T00:00:00Z".parse().unwrap(),
        ..Default::default()
    };
    let mut unschedulable = 0;
    let mut with_suggestions = 0;
    for pod in cluster.pending_pods() {
        let Some(trace) = replay(cluster, &config.profiles, pod, &opts) else {
            continue;
        };
        if matches!(trace.outcome, Outcome::Scheduled { .. }) {
            continue;
        }
        unschedulable += 1;
        let r = suggest(
            cluster,
            &config.profiles,
            pod,
            &trace,
            Goal::Schedulable,
            DEFAULT_LIMIT,
            &opts,
        );
        assert!(r.replays <= DEFAULT_LIMIT);
        if !r.suggestions.is_empty() {
            with_suggestions += 1;
        }
        for s in &r.suggestions {
            let edits = parse_edits(&s.edits).expect("suggested edits parse");
            assert!(edits.len() <= 2, "{}: {:?}", pod.key(), s.edits);
            let (_, after) = replay_edited(cluster, &config.profiles, pod, &edits, &opts).unwrap();
            let after = after.unwrap();
            let Outcome::Scheduled { node } = &after.outcome else {
                panic!(
                    "{}: {:?} does not schedule: {:?}",
                    pod.key(),
                    s.edits,
                    after.outcome
                );
            };
            assert_eq!(
                Some(node),
                s.selected_node.as_ref(),
                "{}: {:?}",
                pod.key(),
                s.edits
            );
            assert_eq!(
                after.feasible.len(),
                s.feasible,
                "{}: {:?}",
                pod.key(),
                s.edits
            );
            assert_eq!(after.total(node), s.total, "{}: {:?}", pod.key(), s.edits);
        }
        // Smallest first: never a pair before a single edit.
        let sizes: Vec<usize> = r.suggestions.iter().map(|s| s.edits.len()).collect();
        assert!(
            sizes.windows(2).all(|w| w[0] <= w[1]),
            "{}: {sizes:?}",
            pod.key()
        );
    }
    assert!(unschedulable > 0, "the demo has unschedulable pods");
    assert!(with_suggestions > 0, "some demo pod has a remedy");
}
