//! A snapshot's recorded word in the inspector (issue 25, item 1): the Pipeline's
//! head sets the real scheduler's recorded word beside the replay, with the likely
//! causes and what the snapshot lacks, and the pods list marks a verdict that
//! contradicts it; a snapshot without a word shows neither.

use std::sync::Arc;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use insta::assert_snapshot;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use super::app::App;
use super::fixtures::{engine_init, settle, t0};
use super::waiting::ManualClock;

fn app(path: &str) -> App {
    let cluster = crate::source::load_snapshot(std::path::Path::new(path))
        .expect("snapshot loads")
        .cluster;
    let mut app = App::new(engine_init(
        cluster,
        &format!("snapshot {path}"),
        Arc::new(ManualClock::new(t0())),
    ));
    settle(&mut app);
    app
}

fn open(app: &mut App, pod: &str) {
    for c in format!(":pod {pod}").chars() {
        app.handle_key(&KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
    }
    app.handle_key(&KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    settle(app);
    assert_eq!(app.selected_pod_key(), Some(pod));
}

fn screen(app: &mut App, w: u16, h: u16) -> String {
    let mut t = Terminal::new(TestBackend::new(w, h)).expect("test terminal");
    t.draw(|f| app.draw(f)).expect("draw");
    t.backend().to_string()
}

/// The k3s dump: the recorded word counted two nodes, the dump holds one.
#[test]
fn the_pipeline_sets_the_recorded_word_beside_the_replay() {
    let mut app = app("tests/fixtures/recorded/k3s-dump.yaml");
    open(&mut app, "default/stress-5c8d7f9b6-qmz4t");
    let s = screen(&mut app, 160, 30);
    assert!(
        s.contains("≠ recorded: DIFFERS from the replay · FailedScheduling event (4×)"),
        "{s}"
    );
    assert!(
        s.contains("  0/2 nodes are available: 2 Insufficient cpu."),
        "{s}"
    );
    assert!(
        s.contains("· the real scheduler counted 2 nodes, the snapshot has 1"),
        "{s}"
    );
    assert!(
        s.contains("snapshot missing: node k3s-agent-1 (pods are bound to it, 1 pod)"),
        "{s}"
    );
    // The pods list marks the verdict the recorded word contradicts.
    assert!(s.contains("≠✗ 1 node(s) ha"), "{s}");
    assert_snapshot!("recorded_word_differs", s);
}

/// The demo snapshot records no word and lacks nothing: no record lines, no marks.
#[test]
fn a_snapshot_without_a_word_shows_no_record() {
    let mut app = app("examples/demo-cluster.yaml");
    open(&mut app, "batch/quarterly-report");
    let s = screen(&mut app, 160, 30);
    assert!(
        !s.contains("recorded") && !s.contains("snapshot missing"),
        "{s}"
    );
}
