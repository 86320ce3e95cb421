//! The inspector at the name lengths of real dumps (`tests/fixtures/real-names.yaml`:
//! EC2 node names, a 68-char node name, a 63-char pod name, a priority of
//! 2000001000), on the real engine, at 80×24 and 200×50 (issue 25 item 3).

use std::sync::Arc;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use insta::assert_snapshot;

use super::app::{App, AppInit};
use super::fixtures::{Fixture, screen, t0};
use super::waiting::{ManualClock, WaitingList};
use crate::theme::Theme;

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
    let config = crate::engine::SchedulerConfig::defaults();
    AppInit {
        cluster: Arc::new(cluster),
        profiles: config.profiles,
        runner: super::worker::engine_runner(),
        clock: clock.clone(),
        waiting: Box::new(WaitingList::default()),
        theme: Theme::builtin("dark").expect("builtin theme"),
        theme_loader: Box::new(|s| {
            Theme::builtin(s).ok_or_else(|| crate::theme::ThemeError::NotFound {
                name: s.to_string(),
                builtins: crate::theme::builtin_names(),
                searched: "(tests)".into(),
            })
        }),
        source: format!("snapshot {SNAPSHOT}"),
        pod: None,
        simulation: None,
    }
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
    let cluster = crate::source::load_snapshot(std::path::Path::new("examples/gang-demo.yaml"))
        .expect("gang demo loads")
        .cluster;
    let config = crate::source::read_scheduler_config(std::path::Path::new(
        "examples/coscheduling-config.yaml",
    ))
    .expect("coscheduling config builds");
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
