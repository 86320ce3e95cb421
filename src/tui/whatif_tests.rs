//! What-if edits and the Remedies view in the inspector, on the demo snapshot with
//! the engine's own cycle: the banner, the before/after line, undo, the edits made
//! from the Needs and Node tabs, edits re-applied to a new model, and the Remedies
//! view's search and Enter.

use std::sync::Arc;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use insta::assert_snapshot;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use super::action::{Action, DataUpdate, Tab};
use super::app::App;
use super::fixtures::{engine_init, settle, t0};
use super::waiting::ManualClock;
use crate::engine::trace::Outcome;
use crate::model::Cluster;
use crate::report::PodVerdict;

fn demo() -> Cluster {
    crate::source::load_snapshot(std::path::Path::new("examples/demo-cluster.yaml"))
        .expect("demo snapshot")
        .cluster
}

fn app(cluster: Cluster) -> App {
    let mut app = App::new(engine_init(
        cluster,
        "snapshot examples/demo-cluster.yaml",
        Arc::new(ManualClock::new(t0())),
    ));
    settle(&mut app);
    app
}

fn press(app: &mut App, code: KeyCode) {
    app.handle_key(&KeyEvent::new(code, KeyModifiers::NONE));
}

fn keys(app: &mut App, s: &str) {
    for c in s.chars() {
        let code = if c == '\n' {
            KeyCode::Enter
        } else {
            KeyCode::Char(c)
        };
        press(app, code);
        settle(app);
    }
}

fn screen(app: &mut App, w: u16, h: u16) -> String {
    let mut t = Terminal::new(TestBackend::new(w, h)).expect("test terminal");
    t.draw(|f| app.draw(f)).expect("draw");
    t.backend().to_string()
}

fn scheduled_on(app: &App) -> Option<String> {
    match &app.shared.traces.current.as_ref()?.trace.outcome {
        Outcome::Scheduled { node } => Some(node.clone()),
        _ => None,
    }
}

fn message(app: &App) -> String {
    app.shared
        .message
        .as_ref()
        .map(|m| m.text.clone())
        .unwrap_or_default()
}

const REPORT: &str = "batch/quarterly-report";

fn on_report() -> App {
    let mut a = app(demo());
    keys(&mut a, &format!(":pod {REPORT}\n"));
    assert_eq!(a.selected_pod_key(), Some(REPORT));
    assert_eq!(scheduled_on(&a), None, "unschedulable on the real model");
    a
}

#[test]
fn a_typed_edit_replays_the_edited_model_under_a_banner_and_u_undoes_it() {
    let mut a = on_report();
    let real = a.shared.cluster.clone();
    keys(&mut a, "wpod.cpu=2\n");
    assert_eq!(a.shared.whatif.edits().len(), 1);
    assert_eq!(scheduled_on(&a).as_deref(), Some("gen-b1"));
    assert!(Arc::ptr_eq(&a.shared.base, &real), "the real model is kept");
    let cmp = a
        .shared
        .traces
        .current
        .as_ref()
        .and_then(|c| c.whatif.clone());
    let cmp = cmp.expect("a before/after comparison");
    assert_eq!(cmp.edits, ["pod.cpu=2"]);
    assert_eq!(
        (cmp.before.verdict.as_str(), cmp.after.verdict.as_str()),
        ("Unschedulable", "Scheduled")
    );
    // The pods list's verdict follows the edited pod.
    assert!(matches!(
        a.shared.verdicts.get(REPORT),
        Some(PodVerdict::Schedulable { node }) if node == "gen-b1"
    ));
    let s = screen(&mut a, 160, 30);
    assert!(
        s.contains("what-if pod.cpu=2 (nothing is written; u undoes)"),
        "{s}"
    );
    // Past the message, the status line keeps saying it.
    keys(&mut a, "h");
    let s = screen(&mut a, 160, 30);
    assert!(s.contains("WHAT-IF 1 edit · u undo"), "{s}");
    assert!(
        s.contains(" WHAT-IF  pod.cpu=2 (batch/quarterly-report)"),
        "{s}"
    );
    assert!(
        s.contains(
            "what-if: real Unschedulable, 0 feasible → edited Scheduled, 1 feasible, on gen-b1"
        ),
        "{s}"
    );
    assert_snapshot!("whatif_banner", s);

    keys(&mut a, "u");
    assert!(!a.shared.whatif.is_active());
    assert_eq!(scheduled_on(&a), None);
    assert!(
        a.shared
            .traces
            .current
            .as_ref()
            .is_some_and(|c| c.whatif.is_none()),
        "no comparison without edits"
    );
    assert!(
        Arc::ptr_eq(&a.shared.cluster, &real),
        "the real model again"
    );
    assert!(message(&a).contains("undid pod.cpu=2"), "{}", message(&a));
    let s = screen(&mut a, 160, 30);
    assert!(!s.contains("WHAT-IF"), "{s}");
    keys(&mut a, "u");
    assert_eq!(message(&a), "no what-if edit to undo");
}

#[test]
fn an_invalid_edit_is_an_error_in_the_status_line_and_changes_nothing() {
    let mut a = on_report();
    let generation = a.shared.generation;
    keys(&mut a, "wnode.uncordon=gen-a33\n");
    assert!(!a.shared.whatif.is_active());
    assert_eq!(a.shared.generation, generation, "no new model version");
    let m = message(&a);
    assert!(
        m.contains("no node \"gen-a33\"; did you mean \"gen-a3\"?"),
        "{m}"
    );
    assert!(a.shared.message.as_ref().is_some_and(|m| m.error));
    keys(&mut a, "wpod.bogus=1\n");
    assert!(
        message(&a).contains("expected one of: pod.cpu=QTY"),
        "{}",
        message(&a)
    );
    // Several at once are all or none.
    keys(&mut a, ":what-if node.uncordon=gen-a3 node.cordon=gen-zz\n");
    assert!(
        !a.shared.whatif.is_active(),
        "{:?}",
        a.shared.whatif.edits()
    );
    assert!(
        a.shared
            .cluster
            .node("gen-a3")
            .expect("a3")
            .node
            .unschedulable
    );
    keys(&mut a, ":what-if node.uncordon=gen-a3 node.cordon=gen-b2\n");
    assert_eq!(a.shared.whatif.edits().len(), 2);
    assert!(
        !a.shared
            .cluster
            .node("gen-a3")
            .expect("a3")
            .node
            .unschedulable
    );
    keys(&mut a, "U");
    assert!(!a.shared.whatif.is_active());
    assert!(message(&a).contains("undid 2 edits"), "{}", message(&a));
    assert!(
        a.shared
            .cluster
            .node("gen-a3")
            .expect("a3")
            .node
            .unschedulable
    );
}

#[test]
fn needs_tab_turns_a_need_off_or_asks_for_a_new_request() {
    let mut a = on_report();
    keys(&mut a, "0");
    assert_eq!(a.shared.tab, Tab::Needs);
    let s = screen(&mut a, 160, 40);
    assert!(s.contains("› pod.cpu=…  requests cpu 6"), "{s}");
    assert!(
        s.contains("pod.drop-node-selector=topology.kubernetes.io/zone  nodeSelector"),
        "{s}"
    );
    assert!(
        s.contains("pod.tolerate=nvidia.com/gpu=present:NoSchedule"),
        "{s}"
    );
    // Enter on the request: a prompt to complete.
    keys(&mut a, "\n");
    let p = a.shared.prompt.as_ref().expect("the what-if prompt");
    assert_eq!(p.text, "pod.cpu=");
    keys(&mut a, "2\n");
    assert_eq!(scheduled_on(&a).as_deref(), Some("gen-b1"));
    keys(&mut a, "u");
    // Two down: the nodeSelector, turned off at once.
    keys(&mut a, "jj\n");
    let edits: Vec<String> = a
        .shared
        .whatif
        .edits()
        .iter()
        .map(|e| e.edit.to_string())
        .collect();
    assert_eq!(
        edits,
        ["pod.drop-node-selector=topology.kubernetes.io/zone"]
    );
    let s = screen(&mut a, 160, 40);
    assert!(s.contains("what-if: the pod as edited"), "{s}");
    assert!(
        !s.contains("nodeSelector  topology"),
        "the need is off: {s}"
    );
}

#[test]
fn node_tab_cordons_uncordons_and_clones_the_node_shown() {
    let mut a = on_report();
    keys(&mut a, ":node gen-a3\n");
    assert_eq!(a.shared.tab, Tab::Node);
    keys(&mut a, "x");
    let edits = |a: &App| -> Vec<String> {
        a.shared
            .whatif
            .edits()
            .iter()
            .map(|e| e.edit.to_string())
            .collect()
    };
    assert_eq!(edits(&a), ["node.uncordon=gen-a3"]);
    keys(&mut a, "x");
    assert_eq!(edits(&a), ["node.uncordon=gen-a3", "node.cordon=gen-a3"]);
    keys(&mut a, "+");
    assert_eq!(a.shared.whatif.edits().len(), 3);
    assert_eq!(
        a.shared.cluster.nodes().len(),
        a.shared.base.nodes().len() + 1
    );
    keys(&mut a, ":node gpu-b1\nt");
    let p = a.shared.prompt.as_ref().expect("the untaint prompt");
    assert_eq!(p.text, "node.untaint=gpu-b1:nvidia.com/gpu:NoSchedule");
}

#[test]
fn a_new_model_gets_the_edits_again_and_keeps_those_that_do_not_apply_unapplied() {
    let mut a = on_report();
    keys(
        &mut a,
        ":what-if node.uncordon=gen-a3 node.label=gen-b2:tier=x\n",
    );
    assert_eq!(a.shared.whatif.edits().len(), 2);
    let data = |c: Cluster| {
        Action::Data(DataUpdate {
            cluster: Arc::new(c),
            source: None,
            status: None,
            events: None,
            notice: None,
        })
    };
    let mut next = demo();
    next.delete_node("gen-b2");
    a.update(data(next));
    settle(&mut a);
    assert_eq!(a.shared.whatif.edits().len(), 2, "the list is the state");
    assert!(a.shared.whatif.is_applied(0) && !a.shared.whatif.is_applied(1));
    assert!(
        !a.shared
            .cluster
            .node("gen-a3")
            .expect("a3")
            .node
            .unschedulable
    );
    assert!(a.shared.base.node("gen-a3").expect("a3").node.unschedulable);
    assert!(
        message(&a).contains("not applied to this model: what-if edit \"node.label=gen-b2:tier=x\": no node \"gen-b2\""),
        "{}",
        message(&a)
    );
    keys(&mut a, "h");
    let s = screen(&mut a, 160, 30);
    assert!(
        s.contains("node.uncordon=gen-a3 · ✗ node.label=gen-b2:tier=x"),
        "{s}"
    );
    // The node back: the edit applies again.
    a.update(data(demo()));
    settle(&mut a);
    assert!(a.shared.whatif.is_applied(1));
    let b2 = a.shared.cluster.node("gen-b2").expect("b2").node.clone();
    assert_eq!(
        b2.labels.get("tier").map(|v| v.to_string()).as_deref(),
        Some("x")
    );
    assert_eq!(message(&a), "every what-if edit applies to the new model");
}

#[test]
fn remedies_view_searches_off_the_ui_then_enter_applies_one() {
    let mut a = on_report();
    press(&mut a, KeyCode::Char('S'));
    let s = screen(&mut a, 160, 40);
    assert!(s.contains("searching…"), "{s}");
    settle(&mut a);
    let pane = a.panes.remedies.as_ref().expect("the Remedies view");
    let r = pane.found.clone().expect("found").expect("no error");
    assert!(!r.suggestions.is_empty());
    let s = screen(&mut a, 160, 40);
    assert_snapshot!("remedies_quarterly_report", s);
    let first = r.suggestions[0].clone();
    keys(&mut a, "\n");
    assert!(a.panes.remedies.is_none(), "closed once applied");
    let edits: Vec<String> = a
        .shared
        .whatif
        .edits()
        .iter()
        .map(|e| e.edit.to_string())
        .collect();
    assert_eq!(edits, first.edits);
    assert_eq!(scheduled_on(&a), first.selected_node, "the remedy holds");
    // Esc closes the view without applying.
    keys(&mut a, "US");
    assert!(a.panes.remedies.is_some());
    press(&mut a, KeyCode::Esc);
    assert!(a.panes.remedies.is_none());
    assert!(!a.shared.whatif.is_active());
}

#[test]
fn remedies_of_a_schedulable_pod_aim_at_the_node_tab_node() {
    let mut a = app(demo());
    let pod = a
        .shared
        .cluster
        .pending_pods()
        .map(|p| p.key())
        .find(|k| {
            matches!(
                a.shared.verdicts.get(k),
                Some(PodVerdict::Schedulable { .. })
            )
        })
        .expect("a schedulable pending pod");
    keys(&mut a, &format!(":pod {pod}\n"));
    let chosen = scheduled_on(&a).expect("scheduled");
    a.panes.node.node = Some(chosen.clone());
    keys(&mut a, "S");
    assert!(a.panes.remedies.is_none());
    assert!(message(&a).contains("is schedulable"), "{}", message(&a));
    let other = a
        .shared
        .cluster
        .nodes()
        .iter()
        .map(|n| n.name().to_string())
        .find(|n| *n != chosen)
        .expect("another node");
    a.panes.node.node = Some(other.clone());
    keys(&mut a, "S");
    let pane = a.panes.remedies.as_ref().expect("open");
    assert_eq!(pane.key.target.as_deref(), Some(other.as_str()));
    assert!(pane.found.is_some(), "searched");
}

/// `--what-if`: active before the first replay is shown; a pod edit changes each
/// pod's own replay (its trace and its verdict in the pods list).
#[test]
fn command_line_edits_apply_from_the_first_frame_to_each_pod() {
    let mut a = app(demo());
    let edits = ["pod.cpu=2", "node.uncordon=gen-a3"]
        .iter()
        .map(|e| e.parse().expect("edit"))
        .collect();
    a.start_with_edits(edits);
    settle(&mut a);
    assert!(matches!(
        a.shared.verdicts.get(REPORT),
        Some(PodVerdict::Schedulable { node }) if node == "gen-b1"
    ));
    assert!(
        !a.shared
            .cluster
            .node("gen-a3")
            .expect("a3")
            .node
            .unschedulable
    );
    keys(&mut a, &format!(":pod {REPORT}\n"));
    assert_eq!(scheduled_on(&a).as_deref(), Some("gen-b1"));
    let s = screen(&mut a, 160, 30);
    assert!(
        s.contains(" WHAT-IF  pod.cpu=2 · node.uncordon=gen-a3 "),
        "{s}"
    );
}
