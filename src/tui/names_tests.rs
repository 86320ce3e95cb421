//! The inspector at the name lengths of real dumps (`tests/fixtures/real-names.yaml`:
//! EC2 node names, a 68-char node name, a 63-char pod name, a priority of
//! 2000001000), on the real engine, at 80×24 and 200×50 (issue 25 item 3).

use std::sync::Arc;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use insta::assert_snapshot;

use super::app::{App, AppInit};
use super::fixtures::{Fixture, engine_init, gang_demo, screen, sim_of, t0};
use super::waiting::ManualClock;

const SNAPSHOT: &str = "tests/fixtures/real-names.yaml";

fn real_names() -> Fixture {
    let cluster = crate::source::load_snapshot(std::path::Path::new(SNAPSHOT))
        .expect("real-names snapshot loads")
        .cluster;
    let clock = Arc::new(ManualClock::new(t0()));
    let app = App::new(real_names_init(cluster, clock.clone()));
    let mut f = Fixture { app, clock };
    f.settle();
    f
}

/// The app on the real engine and the default profile, over `cluster`.
fn real_names_init(cluster: crate::model::Cluster, clock: Arc<ManualClock>) -> AppInit {
    engine_init(cluster, &format!("snapshot {SNAPSHOT}"), clock)
}

#[test]
fn pods_list_at_real_name_lengths() {
    let mut f = real_names();
    assert_snapshot!("real_names_pods_80x24", screen(&mut f.app, 80, 24));
    assert_snapshot!("real_names_pods_200x50", screen(&mut f.app, 200, 50));
}

/// A name wider than its column is cut in the middle, the title says `←/→`, and
/// `→` scrolls it sideways to its end (and `←` back); numbers are never cut.
#[test]
fn long_names_scroll_sideways_and_numbers_show_whole() {
    let mut f = real_names();
    let name = "observability-opentelemetry-collector-gateway-75f9c8d6b5d-x2kqz";
    let s = screen(&mut f.app, 80, 24);
    assert!(s.contains("←/→ long names"), "{s}");
    assert!(!s.contains(name), "cut at 80 columns:\n{s}");
    for _ in 0..20 {
        f.app
            .handle_key(&KeyEvent::new(KeyCode::Right, KeyModifiers::NONE));
    }
    let s = screen(&mut f.app, 80, 24);
    assert!(s.contains("-collector-gateway-75f9c8d6b5d-x2kqz"), "{s}");
    for _ in 0..20 {
        f.app
            .handle_key(&KeyEvent::new(KeyCode::Left, KeyModifiers::NONE));
    }
    assert_eq!(
        screen(&mut f.app, 80, 24),
        screen(&mut real_names().app, 80, 24)
    );
    // Wide enough, every number shows whole (system-node-critical).
    let s = screen(&mut f.app, 130, 30);
    assert!(s.contains("2000001000"), "{s}");
}

/// A gang member whose binding dry run waits at Permit reads so in the pods list, with
/// its gang, and in the Pipeline's first line; not "schedulable".
#[test]
fn a_gang_member_waiting_at_permit_says_so() {
    let (cluster, config) = gang_demo();
    let clock = Arc::new(ManualClock::new(t0()));
    let app = App::new(AppInit {
        profiles: config.profiles,
        source: "snapshot examples/gang-demo.yaml".into(),
        ..real_names_init(cluster, clock.clone())
    });
    let mut f = Fixture { app, clock };
    f.settle();
    // The list alone (narrower than the split).
    let s = screen(&mut f.app, 109, 30);
    assert!(
        s.contains("◷ waits at Permit (gang training/resnet) on gpu-node-1"),
        "{s}"
    );
    let s = screen(&mut f.app, 200, 30);
    assert!(
        s.contains("◷ waits at Permit on gpu-node-1 (Coscheduling up to 1m0s)"),
        "{s}"
    );
}

/// The Filters summary wraps a long cause instead of cutting it at the pane's edge.
#[test]
fn filter_causes_wrap_at_the_pane_edge() {
    let mut f = real_names();
    keys(
        &mut f,
        ":pod openshift-ingress/router-default-6c9f8d7b5-xdlnq\n",
    );
    keys(&mut f, "2v");
    let s = screen(&mut f.app, 80, 24);
    // Wrapped at a space: the label key whole, the count on the next line.
    assert!(s.contains("node-role.kubernetes.io/infra  (2"), "{s}");
    assert!(s.contains("lacks label"), "{s}");
    assert_snapshot!("real_names_filters_summary_80x24", s);
}

/// The score table keeps its columns aligned with long node names (a 68-char one
/// among EC2 names) at 80, 130 and 200 columns.
#[test]
fn score_table_aligns_with_long_node_names() {
    let mut f = real_names();
    keys(&mut f, ":pod openshift-monitoring/prometheus-k8s-0\n");
    keys(&mut f, "3");
    for (w, h) in [(80, 24), (130, 30), (200, 50)] {
        let s = screen(&mut f.app, w, h);
        totals_end_under_the_header(&s, w);
        assert_snapshot!(format!("real_names_scores_{w}x{h}"), s);
    }
}

/// Every scoring plugin weighted in the millions (`tests/fixtures/real-names-weights.yaml`):
/// weighted scores of 10 digits and totals of 10 show whole, and stay aligned beside
/// long node names, in the score table and breakdown at 80, 130 and 200 columns, the
/// Node tab's score lines and the Compare tab's differences.
#[test]
fn large_scores_show_whole_and_aligned() {
    let config = crate::source::read_scheduler_config(std::path::Path::new(
        "tests/fixtures/real-names-weights.yaml",
    ))
    .expect("weights config builds");
    let cluster = crate::source::load_snapshot(std::path::Path::new(SNAPSHOT))
        .expect("real-names snapshot loads")
        .cluster;
    let clock = Arc::new(ManualClock::new(t0()));
    let app = App::new(AppInit {
        profiles: config.profiles,
        ..real_names_init(cluster, clock.clone())
    });
    let mut f = Fixture { app, clock };
    f.settle();
    keys(&mut f, ":pod openshift-monitoring/prometheus-k8s-0\n");
    keys(&mut f, "3");
    for (w, h) in [(80, 24), (130, 30), (200, 50)] {
        let s = screen(&mut f.app, w, h);
        totals_end_under_the_header(&s, w);
        // The chosen node's total and its breakdown's weighted TaintToleration score.
        for number in ["4970000000", "=3000000000", "×30000000"] {
            assert!(s.contains(number), "{number} whole at {w}:\n{s}");
        }
        assert_snapshot!(format!("real_names_large_scores_{w}x{h}"), s);
    }

    // The Node tab: each weighted score, and the total, end in one column.
    keys(&mut f, "\n");
    let s = screen(&mut f.app, 130, 60);
    let lines: Vec<&str> = s.lines().collect();
    let from = lines
        .iter()
        .position(|l| l.contains("Score plugins"))
        .unwrap_or_else(|| panic!("score lines:\n{s}"));
    let ends: Vec<usize> = lines[from + 1..]
        .iter()
        .take_while(|l| l.contains(" → ") || l.contains(" total "))
        .map(|l| {
            let chars: Vec<char> = l.chars().collect();
            chars
                .iter()
                .rposition(|c| c.is_ascii_digit())
                .expect("a number")
        })
        .collect();
    assert_eq!(ends.len(), 6, "five plugins and the total:\n{s}");
    assert!(ends.iter().all(|e| *e == ends[0]), "{ends:?}:\n{s}");
    assert!(s.contains("4970000000"), "{s}");
    assert_snapshot!("real_names_large_scores_node", s);

    // Compare the first two nodes: the differences whole (the scrollbar beside them).
    keys(&mut f, "\x1b3gcjc");
    let s = screen(&mut f.app, 130, 34);
    assert!(s.contains("Δ"), "{s}");
    for delta in ["+40000000", "+50000000"] {
        assert!(s.contains(&format!(" {delta}")), "{delta} whole:\n{s}");
    }
    assert_snapshot!("real_names_large_scores_compare", s);
}

/// Every node row of the score table ends its total in the header's `total` column,
/// and the EC2 names (which differ in the middle) show whole.
fn totals_end_under_the_header(s: &str, w: u16) {
    let lines: Vec<&str> = s.lines().collect();
    let header = lines
        .iter()
        .find(|l| l.contains(" total "))
        .unwrap_or_else(|| panic!("a header at {w}:\n{s}"));
    let col = |l: &str, word: &str| {
        l.find(word)
            .map(|i| l[..i].chars().count() + word.chars().count())
    };
    let end = col(header, "total").expect("total");
    // The score table's part of each line (the pods list may be beside it).
    let from = header
        .find(" rank")
        .map_or(0, |i| header[..i].chars().count());
    let table = |l: &str| l.chars().skip(from).collect::<String>();
    let rows: Vec<&&str> = lines
        .iter()
        .filter(|l| {
            let t = table(l);
            t.contains(".internal ") && !t.contains("chosen") && !l.contains('─')
        })
        .collect();
    assert_eq!(rows.len(), 4, "four node rows at {w}: {rows:?}\n{s}");
    for node in ["ip-10-0-20-143", "ip-10-0-31-207", "ip-10-0-47-19"] {
        assert!(rows.iter().any(|r| r.contains(node)), "{node} at {w}:\n{s}");
    }
    for (node, row) in rows.iter().enumerate() {
        let chars: Vec<char> = row.chars().collect();
        assert!(
            chars[end - 1].is_ascii_digit() && !chars[end].is_ascii_digit(),
            "{node}'s total ends under the header's at {w}:\n{s}"
        );
    }
}

/// The real-names snapshot in simulation mode (default profile), every pending pod
/// attempted once.
fn real_names_sim() -> Fixture {
    let cluster = crate::source::load_snapshot(std::path::Path::new(SNAPSHOT))
        .expect("real-names snapshot loads")
        .cluster;
    let mut f = sim_of(
        cluster,
        crate::engine::SchedulerConfig::defaults(),
        &format!("simulate {SNAPSHOT}"),
    );
    keys(&mut f, "nnnnnn");
    f
}

/// History wraps an attempt's message (its FitError, whose causes name the plugins
/// and counts) under the attempt instead of cutting it at the pane's edge: read back
/// from the message column, it is the whole message, at 80 and 200 columns.
#[test]
fn history_messages_wrap_at_the_pane_edge() {
    let mut f = real_names_sim();
    let pod = "openshift-ingress/router-default-6c9f8d7b5-xdlnq";
    keys(&mut f, &format!(":pod {pod}\n9"));
    let message = {
        let sim = f.app.shared.session.sim().expect("simulation");
        sim.history(pod).last().expect("an attempt").message.clone()
    };
    assert!(message.len() > 200, "a long message: {message}");
    for (w, h) in [(80, 24), (200, 50)] {
        let s = screen(&mut f.app, w, h);
        let lines: Vec<Vec<char>> = s.lines().map(|l| l.chars().collect()).collect();
        let (head, col) = lines
            .iter()
            .enumerate()
            .find_map(|(i, l)| {
                let text: String = l.iter().collect();
                text.find(" message")
                    .map(|b| (i, text[..b].chars().count() + 1))
            })
            .unwrap_or_else(|| panic!("a header at {w}:\n{s}"));
        // The message column, line by line, up to the pane's border.
        let read: Vec<String> = lines[head + 1..]
            .iter()
            .map(|l| {
                l[col..]
                    .iter()
                    .take_while(|c| **c != '┃')
                    .collect::<String>()
                    .trim()
                    .to_string()
            })
            .take_while(|part| !part.is_empty())
            .collect();
        assert!(read.len() > 1, "wrapped at {w}:\n{s}");
        assert_eq!(read.join(" "), message, "at {w}:\n{s}");
        assert_snapshot!(format!("real_names_history_{w}x{h}"), s);
    }
    // The cursor walks the message's lines; each picks the attempt they belong to.
    let attempt = |f: &Fixture| f.app.shared.traces.current.as_ref().map(|c| c.key.attempt);
    let before = attempt(&f);
    keys(&mut f, "jj");
    assert_eq!(f.app.panes.history.cursor.selected, 2);
    assert_eq!(attempt(&f), before);
}

fn keys(f: &mut Fixture, s: &str) {
    for c in s.chars() {
        let code = match c {
            '\n' => KeyCode::Enter,
            '\x1b' => KeyCode::Esc,
            c => KeyCode::Char(c),
        };
        f.app.handle_key(&KeyEvent::new(code, KeyModifiers::NONE));
        f.settle();
    }
}
