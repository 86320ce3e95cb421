//! Rendered-screen tests (ratatui `TestBackend` + insta snapshots) of every pane and
//! the main flows, plus behaviour tests of the app core.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use insta::assert_snapshot;
use k8s_openapi::jiff::Timestamp;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::style::{Color, Modifier};

use super::action::{Action, DataUpdate, Focus, MouseKind, Tab};
use super::app::{App, AppInit};
use super::fixtures::*;
use super::traces::TraceStatus;
use crate::engine::Framework;
use crate::model::{Cluster, Pod};
use crate::theme::Theme;

fn key(f: &mut Fixture, code: KeyCode) {
    f.app.handle_key(&KeyEvent::new(code, KeyModifiers::NONE));
    f.settle();
}

/// Type keys: plain characters, with `<enter>`, `<esc>`, `<tab>`, `<down>` etc.
fn keys(f: &mut Fixture, s: &str) {
    let mut rest = s;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('<')
            && let Some(end) = r.find('>')
        {
            let code = match &r[..end] {
                "enter" => KeyCode::Enter,
                "esc" => KeyCode::Esc,
                "tab" => KeyCode::Tab,
                "down" => KeyCode::Down,
                "up" => KeyCode::Up,
                "left" => KeyCode::Left,
                "right" => KeyCode::Right,
                "bs" => KeyCode::Backspace,
                "pgdn" => KeyCode::PageDown,
                other => panic!("unknown key <{other}>"),
            };
            key(f, code);
            rest = &r[end + 1..];
            continue;
        }
        let c = rest.chars().next().expect("char");
        let mods = if c.is_ascii_uppercase() {
            KeyModifiers::SHIFT
        } else {
            KeyModifiers::NONE
        };
        f.app.handle_key(&KeyEvent::new(KeyCode::Char(c), mods));
        f.settle();
        rest = &rest[c.len_utf8()..];
    }
}

fn open_pod(f: &mut Fixture, pod: &str) {
    keys(f, &format!(":pod {pod}<enter>"));
    assert_eq!(f.app.selected_pod_key(), Some(pod));
}

// ----- panes -----

#[test]
fn pods_in_queue_order_with_pipeline() {
    let mut f = fixture();
    let keys_in_order: Vec<String> = f.app.panes.pods.list.rows.iter().map(|r| r.key()).collect();
    assert_eq!(
        keys_in_order,
        [
            "default/big",
            "team-a/retry",
            "default/nominated",
            "default/other-sched",
            "default/web",
            "team-a/gated",
            "team-a/job-1",
        ],
        // PrioritySort over the queue as a fresh scheduler fills it: priority
        // first, then the order pods were listed (by key), as `simulate` queues them.
        "priority first, then list order"
    );
    assert_snapshot!("pods_pipeline", screen(&mut f.app, 130, 30));
}

#[test]
fn pipeline_of_a_scheduled_pod_walks_every_point() {
    let mut f = fixture();
    open_pod(&mut f, "default/web");
    assert_eq!(f.app.shared.tab, Tab::Pipeline);
    keys(&mut f, "jj");
    assert_snapshot!("pipeline_prefilter", screen(&mut f.app, 130, 30));
    // Enter on Filter opens the Filters tab.
    keys(&mut f, "j<enter>");
    assert_eq!(f.app.shared.tab, Tab::Filters);
}

#[test]
fn pipeline_of_a_gated_pod() {
    let mut f = fixture();
    open_pod(&mut f, "team-a/gated");
    assert_snapshot!("pipeline_gated", screen(&mut f.app, 130, 24));
}

#[test]
fn filters_matrix_highlights_first_rejection() {
    let mut f = fixture();
    open_pod(&mut f, "default/web");
    keys(&mut f, "2jjjj");
    // Column cursor onto NodeResourcesFit (6th plugin → column 6).
    keys(&mut f, "llllll");
    assert_snapshot!("filters_matrix", screen(&mut f.app, 130, 24));
    // The first rejecting plugin of n5 is TaintToleration; NodeResourcesFit rejects too.
    let t = term(&mut f.app, 130, 24);
    let buf = t.backend().buffer();
    let theme = Theme::builtin("dark").expect("dark");
    let row_y = (0..24)
        .find(|&y| {
            (0..130)
                .map(|x| buf[(x, y)].symbol())
                .collect::<String>()
                .contains("n5 ")
        })
        .expect("n5 row");
    let cells: Vec<(u16, &str, ratatui::style::Style)> = (0..130)
        .map(|x| (x, buf[(x, row_y)].symbol(), buf[(x, row_y)].style()))
        .filter(|(_, s, _)| *s == "✗")
        .collect();
    assert_eq!(cells.len(), 2, "two rejecting plugins on n5");
    assert!(cells[0].2.add_modifier.contains(Modifier::REVERSED));
    assert_eq!(cells[0].2.fg, theme.reject_first.fg);
    assert!(!cells[1].2.add_modifier.contains(Modifier::REVERSED));
}

#[test]
fn filters_sort_and_filter() {
    let mut f = fixture();
    open_pod(&mut f, "default/web");
    // Sort by the first-rejection column: rejected nodes first.
    keys(&mut f, "2");
    for _ in 0..14 {
        keys(&mut f, "l");
    }
    keys(&mut f, "s");
    let order: Vec<String> = f
        .app
        .panes
        .filters
        .table
        .order
        .iter()
        .map(|&i| {
            f.app
                .shared
                .traces
                .current
                .as_ref()
                .expect("trace")
                .view
                .rows[i as usize]
                .node
                .clone()
        })
        .collect();
    assert_eq!(order, ["n5", "n4", "n1", "n2", "n3"]);
    keys(&mut f, "s");
    assert_eq!(f.app.panes.filters.table.sort, Some((14, true)));
    keys(&mut f, "/insuff");
    assert_eq!(
        f.app.panes.filters.table.order.len(),
        1,
        "only n4 says Insufficient"
    );
    keys(&mut f, "<enter>");
    assert_snapshot!("filters_filtered", screen(&mut f.app, 130, 20));
    keys(&mut f, "<esc>");
    assert_eq!(f.app.panes.filters.table.order.len(), 5);
}

#[test]
fn filters_summary_groups_by_reason_then_drills_down() {
    let mut f = fixture();
    open_pod(&mut f, "default/big");
    keys(&mut f, "2v");
    assert_snapshot!("filters_summary", screen(&mut f.app, 130, 20));
    keys(&mut f, "<enter>");
    assert!(!f.app.panes.filters.summary);
    assert_eq!(
        f.app.panes.filters.table.order.len(),
        4,
        "the 4 Insufficient cpu nodes"
    );
    assert_snapshot!("filters_group", screen(&mut f.app, 130, 20));
    keys(&mut f, "<esc>");
    assert!(f.app.panes.filters.summary, "esc returns to the summary");
}

#[test]
fn scores_with_ranks_bars_and_ties() {
    let mut f = fixture();
    open_pod(&mut f, "default/web");
    keys(&mut f, "3");
    assert_snapshot!("scores", screen(&mut f.app, 130, 26));
}

#[test]
fn preemption_nominated_node_and_victims() {
    let mut f = fixture();
    open_pod(&mut f, "default/big");
    keys(&mut f, "6");
    assert_snapshot!("preemption", screen(&mut f.app, 130, 24));
    keys(&mut f, "<enter>");
    assert_eq!(f.app.shared.tab, Tab::Node);
    assert_eq!(f.app.panes.node.node.as_deref(), Some("n1"));
}

#[test]
fn preemption_not_run_for_a_schedulable_pod() {
    let mut f = fixture();
    open_pod(&mut f, "default/web");
    keys(&mut f, "6");
    assert_snapshot!("preemption_not_run", screen(&mut f.app, 100, 12));
}

#[test]
fn profile_tab_lists_plugins_weights_args() {
    let mut f = fixture();
    open_pod(&mut f, "default/web");
    keys(&mut f, "8");
    assert_snapshot!("profile", screen(&mut f.app, 130, 36));
}

#[test]
fn help_lists_every_key() {
    let mut f = fixture();
    keys(&mut f, "?");
    let s = screen(&mut f.app, 120, 80);
    for b in super::keymap::BINDINGS {
        let head: String = b.help.chars().take(40).collect();
        assert!(s.contains(&head), "help misses {:?}", b.help);
        assert!(s.contains(b.label), "help misses key {:?}", b.label);
    }
    assert_snapshot!("help", s);
    keys(&mut f, "<esc>");
    assert!(f.app.panes.help.is_none());
    // With a pod open, help spells out its Filters and Scores column headers
    // (paper cut 6: the abbreviations were explained nowhere).
    open_pod(&mut f, "default/web");
    keys(&mut f, "?");
    let s = screen(&mut f.app, 120, 100);
    assert!(s.contains("NRF = NodeResourcesFit"), "{s}");
    assert!(s.contains("IPA = InterPodAffinity"), "{s}");
    assert!(s.contains("Scores columns"), "{s}");
    assert!(s.contains("TT = TaintToleration"), "{s}");
}

#[test]
fn status_bar_prompt_and_messages() {
    let mut f = fixture();
    keys(&mut f, ":ns nosuch<enter>");
    assert!(f.app.shared.message.as_ref().is_some_and(|m| m.error));
    assert_snapshot!("status_error", screen(&mut f.app, 100, 10));
    keys(&mut f, ":ns team-a");
    assert_snapshot!("prompt_command", screen(&mut f.app, 100, 10));
    keys(&mut f, "<enter>");
    assert_eq!(f.app.panes.pods.namespace.as_deref(), Some("team-a"));
    assert!(
        f.app
            .panes
            .pods
            .list
            .rows
            .iter()
            .all(|r| r.pod.namespace == "team-a")
    );
    keys(&mut f, "<esc>");
    assert_eq!(f.app.panes.pods.namespace, None, "esc clears the namespace");
}

#[test]
fn pods_filter_and_all_pods() {
    let mut f = fixture();
    keys(&mut f, "/team");
    assert_eq!(f.app.panes.pods.list.rows.len(), 3);
    keys(&mut f, "<enter>");
    assert_snapshot!("pods_filtered", screen(&mut f.app, 130, 14));
    keys(&mut f, "<esc>A");
    assert_eq!(
        f.app.panes.pods.list.rows.len(),
        11,
        "all pods, bound included"
    );
    assert_snapshot!("pods_all", screen(&mut f.app, 130, 18));
}

#[test]
fn pod_without_profile_and_bound_pod() {
    let mut f = fixture();
    open_pod(&mut f, "default/other-sched");
    assert_eq!(
        f.app.shared.traces.status,
        TraceStatus::NoProfile("my-scheduler".into())
    );
    assert_snapshot!("no_profile", screen(&mut f.app, 130, 12));
    // p replays it with the first profile.
    keys(&mut f, "p");
    assert_eq!(f.app.shared.traces.status, TraceStatus::Ready);
    // A bound pod is replayed as pending, as `schedscope explain` replays it.
    open_pod(&mut f, "default/low-1");
    assert_eq!(f.app.shared.traces.status, TraceStatus::Ready);
    let cur = f
        .app
        .shared
        .traces
        .current
        .clone()
        .expect("a bound pod's replay");
    assert_eq!(cur.trace.bound_to.as_deref(), Some("n1"));
    keys(&mut f, "4");
    assert_eq!(f.app.panes.node.node.as_deref(), Some("n1"));
    // Its node, without counting it twice.
    assert_snapshot!("node_of_bound_pod", screen(&mut f.app, 130, 24));
}

/// A pod whose schedulerName no profile serves, on a live source: the detail pane
/// (Pipeline, and the Node tab's verdict line) says what `explain` says, and what
/// the real scheduler said of the pod, with its count and age.
#[test]
fn unserved_pod_says_what_explain_says() {
    use crate::source::{SchedulingEvent, SourceStatus};
    let mut f = fixture();
    open_pod(&mut f, "default/other-sched");
    let now = f.app.now();
    let mut events = std::collections::BTreeMap::new();
    events.insert(
        "default/other-sched".to_string(),
        SchedulingEvent {
            message:
                "0/5 nodes are available: 5 node(s) didn't match Pod's node affinity/selector."
                    .into(),
            count: 3,
            last_seen: Timestamp::from_second(now.as_second() - 90).ok(),
            uid: String::new(),
        },
    );
    f.app.update(Action::Data(DataUpdate {
        cluster: f.app.shared.cluster.clone(),
        source: None,
        status: Some(SourceStatus::Connected),
        events: Some(Arc::new(events)),
        notice: None,
    }));
    f.settle();
    assert_eq!(
        f.app.shared.traces.status,
        TraceStatus::NoProfile("my-scheduler".into())
    );
    let note = super::components::no_profile_note(&f.app.ctx(), "my-scheduler");
    assert_eq!(
        note,
        "pod default/other-sched asks for schedulerName \"my-scheduler\", which no profile \
         serves (profiles: default-scheduler, gang); a scheduler with these profiles leaves it \
         alone. p replays it with another profile · real scheduler (FailedScheduling event) \
         (3×, last 1m30s ago): 0/5 nodes are available: 5 node(s) didn't match Pod's node \
         affinity/selector."
    );
    assert_snapshot!("unserved_pod_live", screen(&mut f.app, 130, 14));
    f.app.panes.node.node = Some("n1".into());
    keys(&mut f, "4");
    let s = screen(&mut f.app, 200, 8);
    assert!(
        s.contains("pod default/other-sched asks for schedulerName \"my-scheduler\""),
        "{s}"
    );
    assert!(!s.contains("only pending pods are replayed"), "{s}");
}

// ----- flows -----

#[test]
fn flow_select_pod_verdicts_scores_node_compare() {
    let mut f = fixture();
    // Select web in the list (5th) and open it.
    keys(&mut f, "jjjj<enter>");
    assert_eq!(f.app.selected_pod_key(), Some("default/web"));
    assert_eq!(f.app.shared.focus, Focus::Detail);
    // Verdicts: n4 rejected, open it.
    keys(&mut f, "2jjj<enter>");
    assert_eq!(f.app.shared.tab, Tab::Node);
    assert_eq!(f.app.panes.node.node.as_deref(), Some("n4"));
    assert_snapshot!("flow_node_n4", screen(&mut f.app, 130, 30));
    // Back to the verdicts, then scores.
    keys(&mut f, "<esc>");
    assert_eq!(f.app.shared.tab, Tab::Filters);
    keys(&mut f, "3");
    // Mark the winner, then the runner-up: Compare opens.
    keys(&mut f, "c");
    assert!(f.app.shared.message.is_some());
    keys(&mut f, "jc");
    assert_eq!(f.app.shared.tab, Tab::Compare);
    assert_eq!(f.app.panes.compare.a.as_deref(), Some("n2"));
    assert_eq!(f.app.panes.compare.b.as_deref(), Some("n3"));
    assert_snapshot!("flow_compare_tie", screen(&mut f.app, 130, 34));
    // Once A and B are set, c starts a new pair: the runner-up against the loser.
    keys(&mut f, "3c");
    assert_eq!(f.app.panes.compare.a.as_deref(), Some("n3"));
    assert_eq!(f.app.panes.compare.b, None);
    keys(&mut f, "jc");
    assert_eq!(f.app.panes.compare.b.as_deref(), Some("n1"));
    let s = screen(&mut f.app, 130, 34);
    assert!(s.contains("n3 beats n1 by 62"), "{s}");
    // And a feasible node against a rejected one, marked in the verdicts.
    keys(&mut f, "2gcGc");
    assert_eq!(f.app.shared.tab, Tab::Compare);
    let s = screen(&mut f.app, 130, 34);
    assert!(
        s.contains("n1 passes every filter; n5 is rejected by TaintToleration"),
        "{s}"
    );
    assert_snapshot!("flow_compare_rejected", s);
}

#[test]
fn flow_waiting_pod_countdown_allow() {
    let mut f = fixture();
    keys(&mut f, "7");
    assert!(f.app.needs_tick(), "a countdown runs");
    assert_snapshot!("waiting", screen(&mut f.app, 120, 14));
    f.clock.advance(Duration::from_secs(5));
    f.app.update(Action::Tick);
    assert!(f.app.take_dirty());
    let s = screen(&mut f.app, 120, 14);
    assert!(s.contains("7s") && s.contains("55s"), "{s}");
    // Urgent countdowns are styled differently.
    let t = term(&mut f.app, 120, 14);
    let buf = t.backend().buffer();
    let theme = Theme::builtin("dark").expect("dark");
    let urgent = (0..14u16).any(|y| {
        (0..120u16).any(|x| {
            buf[(x, y)].symbol() == "7"
                && buf[(x, y)].fg == theme.countdown_urgent.fg.unwrap_or(Color::Reset)
        })
    });
    assert!(urgent, "7s uses countdown_urgent");
    keys(&mut f, "a");
    assert!(f.app.shared.session.waiting.is_empty());
    assert!(!f.app.needs_tick(), "no countdown: no tick");
    assert_snapshot!("waiting_allowed", screen(&mut f.app, 120, 14));
}

#[test]
fn flow_waiting_pod_reject_with_reason() {
    let mut f = fixture();
    keys(&mut f, "7r");
    assert_snapshot!("waiting_reject_prompt", screen(&mut f.app, 120, 12));
    keys(&mut f, "quota exceeded<enter>");
    assert!(f.app.shared.session.waiting.is_empty());
    let m = f.app.shared.message.clone().expect("message");
    assert!(m.error);
    assert_eq!(
        m.text,
        "team-a/job-1: rejected: quota exceeded (0/1 nodes are available: 1 quota exceeded.)"
    );
}

#[test]
fn waiting_pod_times_out_at_the_first_deadline() {
    let mut f = fixture();
    keys(&mut f, "7");
    f.clock.advance(Duration::from_secs(12));
    f.app.update(Action::Tick);
    assert!(f.app.shared.session.waiting.is_empty());
    let m = f.app.shared.message.clone().expect("message");
    assert!(
        m.text
            .contains("rejected due to timeout after waiting 12s at plugin Quota"),
        "{}",
        m.text
    );
}

// ----- layout -----

#[test]
fn narrow_terminal_shows_one_pane() {
    let mut f = fixture();
    assert_snapshot!("narrow_pods", screen(&mut f.app, 80, 20));
    keys(&mut f, "<enter>2");
    assert_snapshot!("narrow_filters", screen(&mut f.app, 80, 20));
}

/// Paper cuts 2 and 3: generated names that differ only at their end (a pool's
/// nodes, a workload's pods) must not look identical when there is no room for
/// them whole: they are cut in the middle.
#[test]
fn long_names_that_differ_at_the_end_stay_distinct() {
    let mut c = Cluster::new();
    let node = |i: usize| format!("gke-prod-general-pool-2265b1f5-a1b2c3d4-{i:04}");
    let pod = |i: usize| format!("resnet-distributed-training-worker-7d9f8c6b5-{i}");
    for i in 0..3 {
        let v = serde_json::json!({
            "metadata": {"name": node(i), "labels": {"kubernetes.io/hostname": node(i)}},
            "status": {"allocatable": {"cpu": "1", "memory": "1Gi", "pods": "110"}}
        });
        let n: k8s_openapi::api::core::v1::Node = serde_json::from_value(v).expect("node");
        c.upsert_node(crate::model::Node::from_k8s(&n).expect("node"));
    }
    for i in 0..3 {
        let v = serde_json::json!({
            "metadata": {"name": pod(i), "namespace": "training", "uid": format!("uid-{i}"),
                "creationTimestamp": t0().to_string()},
            "spec": {"containers": [{"name": "c", "image": "trainer:1",
                "resources": {"requests": {"cpu": "2"}}}]},
            "status": {"phase": "Pending"}
        });
        let p: k8s_openapi::api::core::v1::Pod = serde_json::from_value(v).expect("pod");
        c.upsert_pod(Pod::from_k8s(&p).expect("pod"));
    }
    let clock = Arc::new(super::waiting::ManualClock::new(t0()));
    let app = App::new(AppInit {
        runner: super::worker::engine_runner(),
        ..app_init(c, "dark", clock.clone())
    });
    let mut f = Fixture { app, clock };
    f.settle();
    let distinct_rows = |screen: &str, names: &[String]| {
        for name in names {
            // Each row shows its name whole or cut in the middle: the end stays.
            let tail = &name[name.len() - 6..];
            assert!(
                screen.lines().any(|l| l.contains(tail)),
                "{tail} shown:\n{screen}"
            );
        }
    };
    let pods: Vec<String> = (0..3).map(pod).collect();
    let nodes: Vec<String> = (0..3).map(node).collect();
    for (w, h) in [(80, 24), (130, 24), (200, 30)] {
        let s = screen(&mut f.app, w, h);
        distinct_rows(&s, &pods);
    }
    open_pod(&mut f, &format!("training/{}", pod(0)));
    keys(&mut f, "2");
    for (w, h) in [(80, 24), (130, 24), (200, 30)] {
        let s = screen(&mut f.app, w, h);
        distinct_rows(&s, &nodes);
    }
}

#[test]
fn tiny_terminal_says_so() {
    let mut f = fixture();
    assert_snapshot!("tiny", screen(&mut f.app, 24, 5));
    // Every tab survives odd sizes.
    open_pod(&mut f, "default/web");
    for t in Tab::ALL {
        f.app.update(Action::SelectTab(t));
        for (w, h) in [(30, 8), (31, 9), (45, 12), (200, 8), (30, 60)] {
            screen(&mut f.app, w, h);
        }
    }
}

#[test]
fn resize_keeps_the_selection_visible() {
    let mut f = fixture();
    open_pod(&mut f, "default/web");
    keys(&mut f, "2G");
    screen(&mut f.app, 130, 40);
    screen(&mut f.app, 130, 10);
    let c = f.app.panes.filters.table.cursor;
    assert!(c.selected >= c.offset && c.selected < c.offset + c.page);
}

// ----- themes -----

#[test]
fn monochrome_theme_relies_on_symbols_and_reverse_video() {
    let mut f = app_with(cluster(), "mono");
    open_pod(&mut f, "default/web");
    keys(&mut f, "2j");
    let t = term(&mut f.app, 130, 24);
    let buf = t.backend().buffer();
    for y in 0..24 {
        for x in 0..130 {
            let c = &buf[(x, y)];
            assert!(
                matches!(c.fg, Color::Reset) && matches!(c.bg, Color::Reset),
                "colour at {x},{y}"
            );
        }
    }
    let (sx, sy) = (0..24u16)
        .flat_map(|y| (0..130u16).map(move |x| (x, y)))
        // Below the tab bar, whose › says more tabs are to the right.
        .find(|&(x, y)| x > 46 && y > 1 && buf[(x, y)].symbol() == "›")
        .expect("a selected row in the detail pane");
    assert!(
        buf[(sx + 2, sy)].modifier.contains(Modifier::REVERSED),
        "selection is reverse video"
    );
    let s = t.backend().to_string();
    for sym in ["✓", "✗", "∅", "›"] {
        assert!(s.contains(sym), "symbol {sym} on screen");
    }
}

#[test]
fn every_theme_renders_and_cycles() {
    let mut f = fixture();
    open_pod(&mut f, "default/web");
    keys(&mut f, "2");
    let mut seen = Vec::new();
    for _ in 0..crate::theme::BUILTIN.len() {
        keys(&mut f, "T");
        seen.push(f.app.shared.theme.name.clone());
        screen(&mut f.app, 100, 20);
    }
    seen.sort();
    assert_eq!(seen, ["colorblind", "dark", "light", "mono"]);
    keys(&mut f, ":theme nosuch<enter>");
    assert!(f.app.shared.message.as_ref().is_some_and(|m| m.error));
}

// ----- core behaviour -----

/// Counts the detail panes' cycles and the verdicts' apart.
struct CountingRunner {
    traces: Arc<AtomicUsize>,
    verdicts: Arc<AtomicUsize>,
}

impl super::worker::CycleRunner for CountingRunner {
    fn run(
        &self,
        fw: &Framework,
        _c: &Cluster,
        p: &Pod,
        _now: Timestamp,
    ) -> crate::engine::trace::Trace {
        self.traces.fetch_add(1, Ordering::SeqCst);
        trace_for(fw, p)
    }

    fn run_for_verdict(
        &self,
        fw: &Framework,
        _c: &Cluster,
        p: &Pod,
        _now: Timestamp,
    ) -> crate::engine::trace::Trace {
        self.verdicts.fetch_add(1, Ordering::SeqCst);
        trace_for(fw, p)
    }
}

#[test]
fn redraws_only_on_change_and_never_recomputes_on_draw() {
    let calls = Arc::new(AtomicUsize::new(0));
    let verdict_calls = Arc::new(AtomicUsize::new(0));
    let clock = Arc::new(super::waiting::ManualClock::new(t0()));
    let app = App::new(AppInit {
        cluster: Arc::new(cluster()),
        profiles: vec![profile("default-scheduler")],
        runner: Arc::new(CountingRunner {
            traces: calls.clone(),
            verdicts: verdict_calls.clone(),
        }),
        clock,
        waiting: Box::new(super::waiting::WaitingList::default()),
        theme: Theme::builtin("dark").expect("dark"),
        theme_loader: Box::new(|_| {
            Err(crate::theme::ThemeError::NotFound {
                name: String::new(),
                builtins: String::new(),
                searched: String::new(),
            })
        }),
        source: "test".into(),
        pod: Some("default/web".into()),
        simulation: None,
    });
    let mut f = Fixture {
        app,
        clock: Arc::new(super::waiting::ManualClock::new(t0())),
    };
    f.settle();
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(
        verdict_calls.load(Ordering::SeqCst),
        6,
        "one verdict per pending pod with a profile (default/other-sched has none)"
    );
    assert!(f.app.take_dirty());
    assert!(!f.app.take_dirty(), "nothing changed");
    assert!(!f.app.needs_tick(), "idle: no timer");
    for tab in Tab::ALL {
        f.app.update(Action::SelectTab(tab));
        for _ in 0..5 {
            screen(&mut f.app, 130, 30);
        }
    }
    assert_eq!(
        calls.load(Ordering::SeqCst),
        1,
        "drawing never runs a cycle"
    );
    assert_eq!(verdict_calls.load(Ordering::SeqCst), 6, "nor a verdict");
    // An unbound key changes nothing.
    f.app.take_dirty();
    f.app
        .handle_key(&KeyEvent::new(KeyCode::Char('z'), KeyModifiers::NONE));
    assert!(!f.app.take_dirty());
    // Away and back: the cache answers.
    keys(&mut f, "<tab>k");
    let after_move = calls.load(Ordering::SeqCst);
    keys(&mut f, "j");
    assert_eq!(calls.load(Ordering::SeqCst), after_move, "cached");
    // Another profile is another trace; a new cluster version is too.
    keys(&mut f, "p");
    assert_eq!(
        calls.load(Ordering::SeqCst),
        after_move,
        "override = same profile 0"
    );
    f.app.update(Action::Data(DataUpdate {
        cluster: Arc::new(cluster()),
        source: Some("snapshot v2".into()),
        status: None,
        events: None,
        notice: None,
    }));
    f.settle();
    assert_eq!(calls.load(Ordering::SeqCst), after_move + 1);
    // Verdicts: again for the override (under which default/other-sched replays too),
    // and again for the new cluster version.
    assert_eq!(verdict_calls.load(Ordering::SeqCst), 6 + 7 + 7);
    assert_eq!(
        f.app.selected_pod_key(),
        Some("default/web"),
        "selection kept"
    );
    assert_eq!(f.app.shared.source.source, "snapshot v2");
}

#[test]
fn stale_traces_are_dropped() {
    let mut f = fixture();
    open_pod(&mut f, "default/web");
    // Ask for big, but deliver an old web trace for a previous generation.
    keys(&mut f, "<tab>");
    f.app.update(Action::Data(DataUpdate {
        cluster: Arc::new(cluster()),
        source: None,
        status: None,
        events: None,
        notice: None,
    }));
    let job = f.app.take_job().expect("recompute after data change");
    let mut old_key = job.key.clone();
    old_key.generation = 0;
    // Delivered as the worker delivers every trace: with its view, causes included.
    let old = web_trace("default/web");
    let view = crate::report::TraceView::of_replay(&old, &job.cluster, &job.profiles);
    f.app.trace_ready(old_key, Arc::new(old), Arc::new(view));
    assert_eq!(f.app.shared.traces.status, TraceStatus::Computing);
    let (k, t, v) = job.run_with_view();
    f.app.trace_ready(k, t, v);
    assert_eq!(f.app.shared.traces.status, TraceStatus::Ready);
}

#[test]
fn mouse_selects_and_scrolls() {
    let mut f = fixture();
    screen(&mut f.app, 130, 30);
    // Pods rows start under the border and the header: row 2 is the first pod.
    f.app.update(Action::Mouse {
        kind: MouseKind::Click,
        column: 5,
        row: 6,
    });
    f.settle();
    assert_eq!(f.app.selected_pod_key(), Some("default/web"));
    // Clicking a tab switches to it.
    screen(&mut f.app, 130, 30);
    let (rect, _) = *f
        .app
        .hits
        .rects
        .iter()
        .find(|(_, h)| *h == super::components::Hit::Tab(Tab::Scores))
        .expect("scores tab hit");
    f.app.update(Action::Mouse {
        kind: MouseKind::Click,
        column: rect.x + 1,
        row: rect.y,
    });
    assert_eq!(f.app.shared.tab, Tab::Scores);
    // The wheel over the pods list moves down.
    screen(&mut f.app, 130, 30);
    let before = f.app.panes.pods.table.cursor.selected;
    f.app.update(Action::Mouse {
        kind: MouseKind::ScrollDown,
        column: 5,
        row: 8,
    });
    f.settle();
    assert!(f.app.panes.pods.table.cursor.selected >= before);
    // Clicking the selected filter row again opens the node.
    keys(&mut f, "2");
    screen(&mut f.app, 130, 30);
    let (rows, _) = *f
        .app
        .hits
        .rects
        .iter()
        .find(|(_, h)| *h == super::components::Hit::DetailRows)
        .expect("filter rows");
    for _ in 0..2 {
        f.app.update(Action::Mouse {
            kind: MouseKind::Click,
            column: rows.x + 3,
            row: rows.y + 1,
        });
    }
    assert_eq!(f.app.shared.tab, Tab::Node);
    assert_eq!(f.app.panes.node.node.as_deref(), Some("n2"));
}

/// A bound pod gets in the TUI the answer `schedscope explain` gives: replayed as
/// pending (taken off its node first), with the profile its schedulerName names.
#[test]
fn bound_pod_gets_the_answer_explain_gives() {
    let config = crate::engine::SchedulerConfig::defaults();
    let clock = Arc::new(super::waiting::ManualClock::new(t0()));
    let mut f = Fixture {
        app: App::new(AppInit {
            profiles: config.profiles.clone(),
            runner: super::worker::engine_runner(),
            pod: Some("default/low-1".into()),
            ..app_init(cluster(), "dark", clock.clone())
        }),
        clock,
    };
    f.settle();
    assert_eq!(f.app.shared.traces.status, TraceStatus::Ready);
    let cur = f
        .app
        .shared
        .traces
        .current
        .clone()
        .expect("a bound pod's replay");
    let opts = crate::engine::cycle::CycleOptions {
        all_filters: true,
        now: t0(),
        ..Default::default()
    };
    let cli = crate::explain::explain(&cluster(), &config, "default/low-1", &opts)
        .expect("explain answers");
    assert_eq!(*cur.trace, cli);
    assert_eq!(cur.trace.bound_to.as_deref(), Some("n1"));
    // The pod is off its node in the replay: n1 has room for it again.
    assert!(
        cur.trace.feasible.iter().any(|n| n == "n1"),
        "{:?}",
        cur.trace.feasible
    );
}

/// The profile override the TUI cycles through goes through the same door: a pod
/// no profile serves is explain's NoProfile error, unless a profile is picked.
#[test]
fn explain_pod_takes_a_profile_override() {
    let config = crate::engine::SchedulerConfig::defaults();
    let c = cluster();
    let opts = crate::engine::cycle::CycleOptions::default();
    let err = crate::explain::explain_pod(&c, &config.profiles, "default/other-sched", None, &opts);
    assert!(
        matches!(err, Err(crate::explain::ExplainError::NoProfile { .. })),
        "{err:?}"
    );
    let t =
        crate::explain::explain_pod(&c, &config.profiles, "default/other-sched", Some(0), &opts)
            .expect("replayed with profile 0");
    assert_eq!(t.profile, config.profiles[0].profile_name);
    let missing = crate::explain::explain_pod(&c, &config.profiles, "default/nope", None, &opts);
    assert!(matches!(
        missing,
        Err(crate::explain::ExplainError::PodNotFound { .. })
    ));
}

#[test]
fn real_engine_cycle_drives_the_panes() {
    let config = crate::engine::SchedulerConfig::defaults();
    let clock = Arc::new(super::waiting::ManualClock::new(t0()));
    let mut f = Fixture {
        app: App::new(AppInit {
            cluster: Arc::new(cluster()),
            profiles: config.profiles.clone(),
            runner: super::worker::engine_runner(),
            clock: clock.clone(),
            waiting: Box::new(super::waiting::WaitingList::default()),
            theme: Theme::builtin("dark").expect("dark"),
            theme_loader: Box::new(|_| {
                Err(crate::theme::ThemeError::NotFound {
                    name: String::new(),
                    builtins: String::new(),
                    searched: String::new(),
                })
            }),
            source: "real engine".into(),
            pod: Some("default/web".into()),
            simulation: None,
        }),
        clock,
    };
    f.settle();
    assert_eq!(f.app.shared.traces.status, TraceStatus::Ready);
    let cur = f.app.shared.traces.current.clone().expect("trace");
    assert_eq!(cur.trace.nodes_total, 5);
    assert!(
        cur.trace.filter_all.is_some(),
        "the TUI asks for every filter"
    );
    // n5 is tainted and web does not tolerate it.
    let n5 = cur.trace.verdict("n5").expect("n5 evaluated");
    assert_eq!(n5.plugin.as_deref(), Some("TaintToleration"));
    for tab in Tab::ALL {
        f.app.update(Action::SelectTab(tab));
        let s = screen(&mut f.app, 130, 30);
        assert!(!s.contains("replaying the scheduling cycle"), "{s}");
    }
    // The gated pod stops at PreEnqueue.
    open_pod(&mut f, "team-a/gated");
    let cur = f.app.shared.traces.current.clone().expect("trace");
    assert!(matches!(
        cur.trace.outcome,
        crate::engine::trace::Outcome::Gated { .. }
    ));
}

/// Frame time at scale: 5,000 nodes, 150,000 pods, a 5,000-node all-filters trace,
/// drawn into a 200x50 `TestBackend`. Run with
/// `cargo test --release --lib frame_time -- --ignored --nocapture`.
#[test]
#[ignore]
fn frame_time_5000_nodes() {
    use std::time::Instant;
    let t_build = Instant::now();
    let c = big_cluster(5_000, 150_000);
    let build = t_build.elapsed();
    let pending = c.pending_pods().count();
    let trace_calls = Arc::new(AtomicUsize::new(0));
    let counter = trace_calls.clone();
    let clock = Arc::new(super::waiting::ManualClock::new(t0()));
    let mut app = App::new(AppInit {
        cluster: Arc::new(c),
        profiles: vec![profile("default-scheduler")],
        runner: Arc::new(
            move |_fw: &Framework, c: &Cluster, p: &Pod, _n: Timestamp| {
                counter.fetch_add(1, Ordering::SeqCst);
                scale_trace(&p.key(), c.nodes().len())
            },
        ),
        clock,
        waiting: Box::new(super::waiting::WaitingList::default()),
        theme: Theme::builtin("dark").expect("dark"),
        theme_loader: Box::new(|_| {
            Err(crate::theme::ThemeError::NotFound {
                name: String::new(),
                builtins: String::new(),
                searched: String::new(),
            })
        }),
        source: "scale".into(),
        pod: None,
        simulation: None,
    });
    let t_trace = Instant::now();
    while let Some(job) = app.take_job() {
        let (k, t, v) = job.run_with_view();
        app.trace_ready(k, t, v);
    }
    let trace_time = t_trace.elapsed();
    let t_all = Instant::now();
    app.update(Action::ToggleAllPods);
    let all_pods = t_all.elapsed();
    let mut terminal = Terminal::new(TestBackend::new(200, 50)).expect("terminal");
    let mut report = Vec::new();
    for (label, tab, summary) in [
        ("filters matrix", Tab::Filters, false),
        ("filters summary", Tab::Filters, true),
        ("scores", Tab::Scores, false),
        ("node detail", Tab::Node, false),
        ("pipeline", Tab::Pipeline, false),
    ] {
        app.update(Action::SelectTab(tab));
        app.panes.filters.summary = summary;
        let frames = 200;
        let start = Instant::now();
        for i in 0..frames {
            // Scroll every frame, alternating panes, as a user holding j would.
            if i % 2 == 0 {
                app.update(Action::PageDown);
            } else {
                app.update(Action::Down);
            }
            terminal.draw(|f| app.draw(f)).expect("draw");
        }
        let per = start.elapsed() / frames;
        report.push(format!("{label:16} {per:>10.2?}/frame"));
    }
    assert_eq!(
        trace_calls.load(Ordering::SeqCst),
        1,
        "scrolling and drawing never recompute the trace"
    );
    println!(
        "scale: 5000 nodes, 150000 pods ({pending} pending), pods list of {} rows\n\
         build cluster {build:.2?}, first trace + view {trace_time:.2?}, all-pods list {all_pods:.2?}\n{}",
        app.panes.pods.list.rows.len(),
        report.join("\n")
    );
}

/// The same at scale with the engine's real cycle: the synthetic 5,000-node /
/// 150,000-pod cluster, the default profile, every filter on every node. Run with
/// `cargo test --release --lib frame_time_real -- --ignored --nocapture`.
#[test]
#[ignore]
fn frame_time_real_engine_5000_nodes() {
    use crate::testing::synthetic::{
        ANTI_AFFINITY_POD, PLAIN_POD, SyntheticSpec, synthetic_cluster_json,
    };
    use std::time::Instant;
    let text = synthetic_cluster_json(&SyntheticSpec::default());
    let v: serde_json::Value = serde_json::from_str(&text).expect("json");
    let mut c = Cluster::new();
    let items = v["items"].as_array().expect("items");
    for it in items.iter().filter(|i| i["kind"] == "Node") {
        let n: k8s_openapi::api::core::v1::Node = serde_json::from_value(it.clone()).expect("node");
        c.upsert_node(crate::model::Node::from_k8s(&n).expect("node"));
    }
    for it in items.iter().filter(|i| i["kind"] == "Pod") {
        let p: k8s_openapi::api::core::v1::Pod = serde_json::from_value(it.clone()).expect("pod");
        c.upsert_pod(Pod::from_k8s(&p).expect("pod"));
    }
    drop(v);
    let config = crate::engine::SchedulerConfig::defaults();
    let clock = Arc::new(super::waiting::ManualClock::new(t0()));
    let mut app = App::new(AppInit {
        cluster: Arc::new(c),
        profiles: config.profiles.clone(),
        runner: super::worker::engine_runner(),
        clock,
        waiting: Box::new(super::waiting::WaitingList::default()),
        theme: Theme::builtin("dark").expect("dark"),
        theme_loader: Box::new(|_| {
            Err(crate::theme::ThemeError::NotFound {
                name: String::new(),
                builtins: String::new(),
                searched: String::new(),
            })
        }),
        source: "synthetic".into(),
        pod: Some(PLAIN_POD.into()),
        simulation: None,
    });
    let mut terminal = Terminal::new(TestBackend::new(200, 50)).expect("terminal");
    for pod in [PLAIN_POD, ANTI_AFFINITY_POD] {
        app.update(Action::StartCommand);
        for ch in format!("pod {pod}").chars() {
            app.update(Action::InputChar(ch));
        }
        app.update(Action::InputSubmit);
        let start = Instant::now();
        while let Some(job) = app.take_job() {
            let (k, t, v) = job.run_with_view();
            app.trace_ready(k, t, v);
        }
        let cycle = start.elapsed();
        let cur = app.shared.traces.current.clone().expect("trace");
        let mut report = Vec::new();
        for (label, tab, summary) in [
            ("filters matrix", Tab::Filters, false),
            ("filters summary", Tab::Filters, true),
            ("scores", Tab::Scores, false),
            ("node detail", Tab::Node, false),
        ] {
            app.update(Action::SelectTab(tab));
            app.panes.filters.summary = summary;
            let frames = 100;
            let t = Instant::now();
            for i in 0..frames {
                app.update(if i % 2 == 0 {
                    Action::PageDown
                } else {
                    Action::Down
                });
                terminal.draw(|f| app.draw(f)).expect("draw");
            }
            report.push(format!(
                "  {label:16} {:>10.2?}/frame",
                t.elapsed() / frames
            ));
        }
        println!(
            "{pod}: cycle (all filters) + view {cycle:.2?}; {} feasible of {}; {}\n{}",
            cur.trace.feasible.len(),
            cur.trace.nodes_total,
            cur.view.headline,
            report.join("\n")
        );
    }
}

// ----- simulation mode -----

fn waiting_keys(f: &Fixture) -> Vec<String> {
    f.app
        .shared
        .session
        .waiting
        .iter()
        .map(|w| w.pod.clone())
        .collect()
}

fn node_of(f: &Fixture, pod: &str) -> Option<String> {
    f.app
        .shared
        .cluster
        .pod(pod)
        .and_then(|p| p.node_name.as_deref().map(str::to_string))
}

#[test]
fn sim_gang_demo_step_until_two_wait_then_allow_binds() {
    let mut f = sim_fixture();
    assert!(!f.app.needs_tick(), "paused: no timer");
    assert_snapshot!("sim_start", screen(&mut f.app, 140, 16));
    keys(&mut f, "n");
    assert_eq!(waiting_keys(&f), ["training/resnet-worker-0"]);
    keys(&mut f, "n");
    assert_eq!(
        waiting_keys(&f),
        ["training/resnet-worker-0", "training/resnet-worker-1"]
    );
    // The step selects the cycle's pod and shows its attempt's trace.
    assert_eq!(f.app.selected_pod_key(), Some("training/resnet-worker-1"));
    let cur = f.app.shared.traces.current.clone().expect("attempt trace");
    assert_eq!(cur.key.attempt, Some(1));
    assert_snapshot!("sim_two_waiting", screen(&mut f.app, 140, 16));
    keys(&mut f, "7");
    let s = screen(&mut f.app, 140, 16);
    assert!(s.contains("Coscheduling 1m0s/1m0s"), "{s}");
    assert_snapshot!("sim_waiting_countdown", s);
    // Paused: the wall clock moves, the countdown does not.
    f.clock.advance(Duration::from_secs(20));
    f.app.update(Action::Tick);
    assert!(screen(&mut f.app, 140, 16).contains("Coscheduling 1m0s/1m0s"));
    // Allow the first waiting pod: it binds alone, its sibling keeps waiting.
    keys(&mut f, "a");
    assert_eq!(waiting_keys(&f), ["training/resnet-worker-1"]);
    assert_eq!(
        node_of(&f, "training/resnet-worker-0").as_deref(),
        Some("gpu-node-1")
    );
    let m = f.app.shared.message.clone().expect("message");
    assert!(
        m.text.contains(
            "training/resnet-worker-0: allowed by every plugin; binding to gpu-node-1 goes on"
        ),
        "{}",
        m.text
    );
    assert_snapshot!("sim_allowed", screen(&mut f.app, 140, 16));
    // Its history: one attempt, bound.
    keys(&mut f, ":pod training/resnet-worker-0<enter>9");
    assert_eq!(f.app.shared.tab, Tab::History);
    assert_snapshot!("sim_history_bound", screen(&mut f.app, 140, 12));
}

#[test]
fn sim_countdown_expires_and_rejects_with_the_timeout_message() {
    let mut f = sim_fixture();
    keys(&mut f, "nnnnnn");
    assert_eq!(
        waiting_keys(&f),
        ["training/bert-worker-0", "training/bert-worker-1"]
    );
    for w in 0..3 {
        assert!(
            node_of(&f, &format!("training/resnet-worker-{w}")).is_some(),
            "resnet-worker-{w} bound"
        );
    }
    keys(&mut f, "7 ");
    assert!(f.app.needs_tick(), "playing: the runner ticks");
    // Simulated time follows the (injected) wall clock.
    f.clock.advance(Duration::from_secs(30));
    f.app.update(Action::Tick);
    let s = screen(&mut f.app, 140, 14);
    assert!(s.contains("Coscheduling 1m0s/1m30s"), "{s}");
    f.clock.advance(Duration::from_secs(52));
    f.app.update(Action::Tick);
    let t = term(&mut f.app, 140, 14);
    let buf = t.backend().buffer();
    let theme = Theme::builtin("dark").expect("dark");
    let urgent = (0..14u16).any(|y| {
        (0..140u16).any(|x| {
            buf[(x, y)].symbol() == "8"
                && buf[(x, y)].fg == theme.countdown_urgent.fg.unwrap_or(Color::Reset)
        })
    });
    assert!(urgent, "8s uses countdown_urgent");
    assert_snapshot!("sim_countdown_urgent", t.backend().to_string());
    f.clock.advance(Duration::from_secs(8));
    f.app.update(Action::Tick);
    assert!(f.app.shared.session.waiting.is_empty());
    let m = f.app.shared.message.clone().expect("message");
    assert!(m.error);
    assert!(
        m.text.contains(
            // Both pods timed out together: the status line names both (paper cut 6).
            "training/bert-worker-0, training/bert-worker-1: rejected by Coscheduling: rejected due to timeout after waiting 1m30s at plugin Coscheduling"
        ),
        "{}",
        m.text
    );
    // Nothing left to do: the simulation pauses itself.
    assert!(m.text.contains("settled at +1m30s: paused"), "{}", m.text);
    assert!(!f.app.needs_tick());
    assert_eq!(node_of(&f, "training/bert-worker-0"), None, "unreserved");
    assert_snapshot!("sim_timed_out", screen(&mut f.app, 140, 14));
    keys(&mut f, ":pod training/bert-worker-0<enter>9");
    assert_snapshot!("sim_history_rejected", screen(&mut f.app, 140, 10));
}

#[test]
fn sim_reject_then_history_lists_attempts_and_shows_an_older_trace() {
    let mut f = sim_fixture();
    keys(&mut f, "nn7rnope<enter>");
    // Coscheduling's Unreserve rejects the waiting sibling too.
    let m = f.app.shared.message.clone().expect("message");
    assert!(m.error);
    assert!(
        m.text.starts_with(
            "training/resnet-worker-0: rejected: nope (0/1 nodes are available: 1 nope.)"
        ),
        "{}",
        m.text
    );
    assert!(
        m.text
            .contains("training/resnet-worker-1: rejected by Coscheduling"),
        "{}",
        m.text
    );
    assert!(f.app.shared.session.waiting.is_empty());
    // Steps until resnet-worker-0's second attempt binds it.
    keys(&mut f, "nnnnnn");
    assert_eq!(
        node_of(&f, "training/resnet-worker-0").as_deref(),
        Some("gpu-node-1")
    );
    keys(&mut f, ":pod training/resnet-worker-0<enter>9");
    let cur = f.app.shared.traces.current.clone().expect("trace");
    assert_eq!(cur.key.attempt, Some(6), "the latest attempt (cycle #7)");
    assert_snapshot!("sim_history_two_attempts", screen(&mut f.app, 150, 10));
    // The older attempt: its trace fills the panes.
    keys(&mut f, "j");
    let cur = f.app.shared.traces.current.clone().expect("trace");
    assert_eq!(cur.key.attempt, Some(0));
    let s = screen(&mut f.app, 190, 10);
    assert!(s.contains("attempt 1 (cycle #1, +0s)"), "{s}");
    // A new cycle does not move the picked attempt.
    keys(&mut f, "n");
    keys(&mut f, ":pod training/resnet-worker-0<enter>9");
    keys(&mut f, "j<enter>");
    assert_eq!(f.app.shared.tab, Tab::Pipeline);
    assert_eq!(
        f.app
            .shared
            .traces
            .current
            .clone()
            .expect("trace")
            .key
            .attempt,
        Some(0)
    );
    // Back to the top row: follows the latest again.
    keys(&mut f, "9k");
    assert_eq!(
        f.app
            .shared
            .traces
            .current
            .clone()
            .expect("trace")
            .key
            .attempt,
        Some(6)
    );
}

#[test]
fn sim_keys_without_a_simulation_say_how_to_start_one() {
    let mut f = fixture();
    keys(&mut f, "n");
    let m = f.app.shared.message.clone().expect("message");
    assert!(m.error && m.text.contains("--simulate"), "{}", m.text);
    keys(&mut f, "9");
    assert_ne!(f.app.shared.tab, Tab::History);
    assert!(!screen(&mut f.app, 130, 10).contains("9:Hist"));
}

#[test]
fn sim_step_jumps_to_the_next_deadline_and_run_until_idle() {
    let mut f = sim_fixture();
    keys(&mut f, "N");
    let m = f.app.shared.message.clone().expect("message");
    assert_eq!(m.text, "6 cycles at +0s; 2 waiting at Permit");
    assert_eq!(f.app.sim().expect("sim").attempts().len(), 6);
    keys(&mut f, "n");
    let m = f.app.shared.message.clone().expect("message");
    assert!(
        m.text.starts_with("nothing to schedule; time jumps to +1m30s: training/bert-worker-0, training/bert-worker-1: rejected by Coscheduling"),
        "{}",
        m.text
    );
    keys(&mut f, "n");
    let m = f.app.shared.message.clone().expect("message");
    assert_eq!(
        m.text,
        "settled at +1m30s: nothing left to schedule, nothing waits"
    );
}

#[test]
fn live_status_and_the_real_schedulers_word() {
    use crate::source::{SchedulingEvent, SourceStatus};
    let mut f = fixture();
    open_pod(&mut f, "default/big");
    assert!(f.app.take_job().is_none());
    let now = f.app.now();
    let since = Timestamp::from_second(now.as_second() - 45).expect("time");
    let mut events = std::collections::BTreeMap::new();
    events.insert(
        "default/big".to_string(),
        SchedulingEvent {
            message: "0/5 nodes are available: 5 Insufficient memory.".into(),
            count: 4,
            last_seen: Some(since),
            uid: String::new(),
        },
    );
    let generation = f.app.shared.generation;
    // Status-only update: the same cluster, so no recompute.
    f.app.update(Action::Data(DataUpdate {
        cluster: f.app.shared.cluster.clone(),
        source: None,
        status: Some(SourceStatus::Reconnecting {
            since,
            error: "Pod: connection refused".into(),
        }),
        events: Some(Arc::new(events)),
        notice: None,
    }));
    f.settle();
    assert!(
        f.app.take_job().is_none(),
        "no recompute on a status change"
    );
    assert_eq!(f.app.shared.generation, generation);
    assert!(f.app.needs_tick(), "the data's age moves on");
    let s = screen(&mut f.app, 160, 30);
    assert!(s.contains("stale: data 45s old"), "{s}");
    assert!(
        s.contains("real scheduler (FailedScheduling event) differs from the replay"),
        "{s}"
    );
    assert!(
        s.contains("differs from the replay (4×, last 45s ago)"),
        "{s}"
    );

    f.app.update(Action::Data(DataUpdate {
        cluster: f.app.shared.cluster.clone(),
        source: None,
        status: Some(SourceStatus::Connected),
        events: None,
        notice: None,
    }));
    assert_eq!(
        f.app.needs_tick(),
        !f.app.shared.session.waiting.is_empty(),
        "connected: ticks only for countdowns"
    );
    let s = screen(&mut f.app, 160, 30);
    assert!(s.contains("(connected)"), "{s}");
}

// ----- acting scheduler (--act) -----

/// The Waiting tab over a running acting session: the session publishes its
/// waiting pods with a notice, the tab lists them with countdowns, and `a` / `r`
/// become commands to the session (the engine owns the timers).
#[test]
fn act_waiting_pods_come_from_the_session_and_keys_become_commands() {
    use crate::act::{PermitDecision, session};
    use crate::engine::waiting::{PendingPlugin, WaitingPodView};
    let (handle, mut inputs) = session::channel();
    let clock = Arc::new(super::waiting::ManualClock::new(t0()));
    let cluster = Arc::new(cluster());
    let mut app = App::new(AppInit {
        cluster: cluster.clone(),
        waiting: Box::new(super::acting::ActWaiting::new(handle)),
        source: "act as schedscope · test".into(),
        ..app_init(Cluster::new(), "dark", clock.clone())
    });
    assert!(app.shared.session.waiting.is_empty());
    let deadline = |s: i64| {
        t0().checked_add(k8s_openapi::jiff::SignedDuration::from_secs(s))
            .expect("ts")
    };
    inputs.publish_waiting(vec![WaitingPodView {
        pod: "team-a/job-1".into(),
        uid: "u1".into(),
        node: "n1".into(),
        since: t0(),
        pending: vec![
            PendingPlugin {
                plugin: "Coscheduling".into(),
                timeout: Duration::from_secs(60),
                deadline: deadline(60),
            },
            PendingPlugin {
                plugin: "Quota".into(),
                timeout: Duration::from_secs(12),
                deadline: deadline(12),
            },
        ],
    }]);
    app.update(Action::Data(DataUpdate::notice(
        cluster.clone(),
        "team-a/job-1 waiting at Permit on n1 (60s left)".into(),
        false,
    )));
    assert_eq!(app.shared.session.waiting.len(), 1);
    assert!(app.needs_tick(), "a countdown runs");
    assert_eq!(
        app.shared.message.as_ref().map(|m| m.text.as_str()),
        Some("team-a/job-1 waiting at Permit on n1 (60s left)")
    );
    for c in "7".chars() {
        app.handle_key(&KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
    }
    clock.advance(Duration::from_secs(5));
    app.update(Action::Tick);
    let s = screen(&mut app, 120, 14);
    assert!(s.contains("7s") && s.contains("55s"), "{s}");
    assert_snapshot!("act_waiting", s);
    // A tick past a deadline rejects nothing here: the session's engine does that.
    clock.advance(Duration::from_secs(10));
    app.update(Action::Tick);
    assert_eq!(app.shared.session.waiting.len(), 1);
    app.handle_key(&KeyEvent::new(KeyCode::Char('a'), KeyModifiers::NONE));
    let mut got = Vec::new();
    while let Some(c) = inputs.try_command() {
        got.push(c);
    }
    assert_eq!(
        got,
        [
            PermitDecision::Allow {
                pod: "team-a/job-1".into(),
                plugin: Some("Coscheduling".into())
            },
            PermitDecision::Allow {
                pod: "team-a/job-1".into(),
                plugin: Some("Quota".into())
            },
        ]
    );
    let m = app.shared.message.clone().expect("message");
    assert_eq!(
        m.text,
        "team-a/job-1: allowed by every plugin; binding to n1 goes on"
    );
    // Reject prompts for a reason and sends it.
    app.handle_key(&KeyEvent::new(KeyCode::Char('r'), KeyModifiers::NONE));
    for c in "no quota".chars() {
        app.handle_key(&KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
    }
    app.handle_key(&KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    assert_eq!(
        inputs.try_command(),
        Some(PermitDecision::Reject {
            pod: "team-a/job-1".into(),
            message: "no quota".into()
        })
    );
    // The session publishes the pod gone.
    inputs.publish_waiting(Vec::new());
    app.update(Action::Data(DataUpdate::notice(
        cluster,
        "bound team-a/job-1 to n1".into(),
        false,
    )));
    assert!(app.shared.session.waiting.is_empty());
    assert!(!app.needs_tick());
}

/// DRA in the Node tab: the node's devices (attributes, capacity, which claim holds
/// each) and why the pod's claim does not fit there, in numbers.
#[test]
fn node_tab_lists_devices_and_why_the_claim_does_not_fit() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fidelity/d08-devices-in-use/snapshot.yaml"
    );
    let cluster = crate::source::load_snapshot(std::path::Path::new(path))
        .expect("d08")
        .cluster;
    // The real engine, not the fixtures' canned traces.
    let clock = Arc::new(super::waiting::ManualClock::new(t0()));
    let mut init = app_init(cluster, "dark", clock.clone());
    init.runner = crate::tui::worker::engine_runner();
    init.profiles = crate::engine::SchedulerConfig::defaults().profiles;
    let mut f = Fixture {
        app: App::new(init),
        clock,
    };
    f.settle();
    open_pod(&mut f, "default/pending");
    f.app.panes.node.node = Some("n1".into());
    keys(&mut f, "4");
    let s = screen(&mut f.app, 200, 30);
    assert!(s.contains("Devices (2, 0 free)"), "{s}");
    assert!(
        s.contains("rejected by DynamicResources: cannot allocate all claims"),
        "{s}"
    );
    assert!(s.contains("→ default/train-a-gpu"), "{s}");
    assert!(
        s.contains("gpu: request gpu: needs 1 of class gpu.example.com: 2 match on the"),
        "{s}"
    );
    assert_snapshot!("node_dra_devices", s);
}

// ----- verdicts in the pods list -----

fn bare_app() -> App {
    let clock = Arc::new(super::waiting::ManualClock::new(t0()));
    App::new(app_init(cluster(), "dark", clock))
}

fn apply_done(app: &mut App, done: super::worker::Done) {
    match done {
        super::worker::Done::Trace(r) => app.replay_ready(*r),
        super::worker::Done::Verdict(k, v) => app.verdict_ready(k, v),
        super::worker::Done::Remedies(f) => app.remedies_ready(*f),
    }
}

/// The worker's order, stepped inline: verdicts newest pod first, one per step; a
/// trace the user asks for comes before the next verdict. Until its verdict arrives a
/// pod shows `…`.
#[test]
fn verdicts_fill_in_newest_first_and_a_trace_request_jumps_the_queue() {
    use super::worker::{Done, Work, WorkQueue};
    let mut app = bare_app();
    let trace = app.take_job().expect("the selected pod's trace");
    let batch = app.take_verdict_job().expect("every pending pod's verdict");
    assert_eq!(
        Vec::from(batch.pods.clone()),
        [
            "team-a/gated",
            "default/big",
            "team-a/job-1",
            "default/web",
            "team-a/retry",
            "default/nominated",
            "default/other-sched",
        ],
        "newest first"
    );
    assert!(app.take_verdict_job().is_none(), "asked once per version");
    let mut q = WorkQueue::default();
    q.push(Work::Verdicts(batch));
    for want in ["team-a/gated", "default/big"] {
        match q.step() {
            Some(Done::Verdict(k, v)) => {
                assert_eq!(k.pod, want);
                app.verdict_ready(k, v);
            }
            _ => panic!("a verdict"),
        }
    }
    q.push(Work::Trace(trace));
    match q.step() {
        Some(d @ Done::Trace(..)) => apply_done(&mut app, d),
        _ => panic!("the trace asked for comes first"),
    }
    assert_eq!(app.shared.verdicts.progress(), (2, 7));
    assert_snapshot!("pods_verdicts_partial", screen(&mut app, 130, 12));
    while !q.is_idle() {
        if let Some(d) = q.step() {
            apply_done(&mut app, d);
        }
    }
    assert_eq!(app.shared.verdicts.progress(), (7, 7));
    let v = |k: &str| app.shared.verdicts.get(k).map(|v| v.label());
    assert_eq!(v("default/web").as_deref(), Some("schedulable on n2"));
    assert_eq!(
        v("default/other-sched").as_deref(),
        Some("not served: no profile for schedulerName \"my-scheduler\"")
    );
    assert_eq!(
        v("team-a/gated").as_deref(),
        Some("gated by SchedulingGates: waiting for scheduling gates: [example.com/quota]")
    );
}

/// A new model (a live update) drops the verdicts and asks again; a verdict of the
/// old version arriving late is not kept.
#[test]
fn a_new_model_invalidates_the_verdicts() {
    let mut f = fixture();
    assert_eq!(f.app.shared.verdicts.progress(), (7, 7));
    let mut stale = {
        let mut app = bare_app();
        app.take_verdict_job().expect("a batch")
    };
    f.app.update(Action::Data(DataUpdate {
        cluster: Arc::new(cluster()),
        source: None,
        status: None,
        events: None,
        notice: None,
    }));
    assert_eq!(f.app.shared.verdicts.progress(), (0, 7), "dropped");
    let (k, v) = stale.next_verdict().expect("a verdict");
    assert_eq!(k.generation, 0);
    f.app.verdict_ready(k, v);
    assert_eq!(f.app.shared.verdicts.progress(), (0, 7), "an old version's");
    assert!(screen(&mut f.app, 130, 12).contains("verdicts 0/7"));
    f.settle();
    assert_eq!(f.app.shared.verdicts.progress(), (7, 7));
}

/// `v`: the pods grouped by their verdict's main reason, the most pods first, with
/// a header per reason; the cursor keeps the selected pod; on a header no pod is
/// selected; `v` again goes back to queue order.
#[test]
fn pods_group_by_verdict_reason() {
    let mut f = fixture();
    assert_eq!(f.app.selected_pod_key(), Some("default/big"));
    keys(&mut f, "v");
    assert!(f.app.panes.pods.grouped);
    assert_eq!(f.app.selected_pod_key(), Some("default/big"), "kept");
    assert_snapshot!("pods_grouped", screen(&mut f.app, 130, 16));
    // One pane: the state, the verdict and the reason (the pod status) side by side.
    assert_snapshot!("pods_grouped_wide", screen(&mut f.app, 90, 16));
    keys(&mut f, "g");
    assert_eq!(f.app.selected_pod_key(), None, "a header selects no pod");
    keys(&mut f, "j");
    assert!(f.app.selected_pod_key().is_some());
    let first = f.app.selected_pod_key().map(str::to_string);
    keys(&mut f, "v");
    assert!(!f.app.panes.pods.grouped);
    assert_eq!(f.app.selected_pod_key(), first.as_deref(), "kept");
    // The key is in the help.
    keys(&mut f, "?");
    assert!(screen(&mut f.app, 130, 80).contains("grouped by verdict reason"));
}

/// Grouped while verdicts arrive: the cursor stays on the header of the pods still
/// being computed as groups form above it; when that group empties, the cursor is
/// on another line, and the selection is what it is on (the detail panes follow).
#[test]
fn a_header_that_goes_away_leaves_a_selected_pod() {
    let mut app = bare_app();
    app.take_job_sync();
    let mut batch = app.take_verdict_job().expect("a batch");
    app.update(Action::ToggleView);
    assert!(app.panes.pods.grouped);
    let header = |app: &App| match app.panes.pods.table.selected() {
        Some(i) => app.panes.pods.entries.get(i).cloned(),
        None => None,
    };
    app.update(Action::Down);
    assert_eq!(
        header(&app),
        Some(crate::report::ListEntry::Group {
            reason: "… verdict being computed".into(),
            pods: 6
        })
    );
    assert_eq!(app.selected_pod_key(), None);
    let (k, v) = batch.next_verdict().expect("a verdict");
    app.verdict_ready(k, v);
    assert_eq!(
        header(&app),
        Some(crate::report::ListEntry::Group {
            reason: "… verdict being computed".into(),
            pods: 5
        }),
        "followed"
    );
    while let Some((k, v)) = batch.next_verdict() {
        app.verdict_ready(k, v);
    }
    assert!(!format!("{:?}", app.panes.pods.entries).contains("being computed"));
    assert_eq!(
        app.selected_pod_key().map(str::to_string),
        app.panes.pods.row_key()
    );
}

/// Issue 25 item 3: a large priority is never cut from the left (it read `0001k`
/// for system-node-critical's 2000001000): the column is as wide as its values.
#[test]
fn large_priorities_show_whole() {
    let mut c = cluster();
    let v = serde_json::json!({
        "metadata": {"name": "critical", "namespace": "kube-system", "uid": "uid-crit",
            "creationTimestamp": t0().to_string()},
        "spec": {"priority": 2000001000, "containers": [{"name": "c", "image": "x"}]},
        "status": {"phase": "Pending"}
    });
    let p: k8s_openapi::api::core::v1::Pod = serde_json::from_value(v).expect("pod");
    c.upsert_pod(Pod::from_k8s(&p).expect("pod"));
    let mut f = app_with(c, "mono");
    for w in [80, 130] {
        let s = screen(&mut f.app, w, 30);
        assert!(s.contains("2000001000"), "{w} columns:\n{s}");
    }
}
