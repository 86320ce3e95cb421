//! End to end: the real binary in a pseudo-terminal. Keys go in, the screen is read
//! back through a terminal emulator, and the terminal must be restored on exit.

mod support {
    pub mod pty;
}

use support::pty::Session;

#[test]
fn inspector_select_pod_filters_scores_and_quit() {
    let mut s = Session::start(&["--snapshot", "examples/demo-cluster.yaml"]);
    s.wait_for("batch/quarterly-report");
    assert!(s.parser.lock().unwrap().screen().alternate_screen());

    // Filter the pod list to the web pod and open its Filters tab.
    s.keys("/web-7d9f");
    s.wait_for("web-7d9f-5");
    s.keys("\r");
    s.keys("2");
    s.wait_for("6/12 nodes are available");
    // Scores tab: the best node is listed with its total.
    s.keys("3");
    let screen = s.wait_for("604");
    assert!(screen.contains("gen-c1"), "{screen}");

    // Help overlay lists keys.
    s.keys("?");
    s.wait_for("this help");
    s.keys("\x1b");
    // Wait for ESC to be handled: a lone ESC read together with the next key would
    // be taken as Alt+key.
    s.wait_until_gone("this help");

    s.keys("q");
    let status = s.wait_exit();
    assert!(status.success(), "exit status {status:?}");
    // The terminal is restored: out of the alternate screen, cursor shown.
    let parser = s.parser.lock().unwrap();
    assert!(
        !parser.screen().alternate_screen(),
        "still in the alternate screen"
    );
    assert!(!parser.screen().hide_cursor(), "cursor still hidden");
}

#[test]
fn broken_theme_is_a_clear_error_before_the_terminal_is_touched() {
    let mut s = Session::start(&[
        "--snapshot",
        "examples/demo-cluster.yaml",
        "--theme",
        "/nonexistent/theme.yaml",
    ]);
    let status = s.wait_exit();
    assert!(!status.success());
    let screen = s.wait_for("theme");
    assert!(screen.contains("/nonexistent/theme.yaml"), "{screen}");
    assert!(!s.parser.lock().unwrap().screen().alternate_screen());
}

#[test]
fn simulate_steps_the_gang_demo_and_allows_a_waiting_pod() {
    let mut s = Session::start(&[
        "tui",
        "--simulate",
        "--snapshot",
        "examples/gang-demo.yaml",
        "--config",
        "examples/coscheduling-config.yaml",
    ]);
    s.wait_for("activeQ 6");
    s.keys("nn7");
    let screen = s.wait_for("2 pods waiting at Permit");
    assert!(screen.contains("Coscheduling 1m0s/1m0s"), "{screen}");
    s.keys("a");
    s.wait_for("training/resnet-worker-0: allowed by every plugin");
    s.keys("q");
    let status = s.wait_exit();
    assert!(status.success(), "exit status {status:?}");
}

/// `kill -TERM`, `-INT` or `-HUP` (systemd, a closed terminal, a script) ends the
/// inspector as `q` does: the terminal is put back (raw mode off, alternate screen
/// left, cursor shown, mouse reporting off) and the exit status is the shell's code
/// for the signal.
#[test]
fn stop_signals_restore_the_terminal() {
    for (signal, code) in [("TERM", 143), ("INT", 130), ("HUP", 129)] {
        let mut s = Session::start(&["--snapshot", "examples/demo-cluster.yaml"]);
        s.wait_for("batch/quarterly-report");
        {
            let parser = s.parser.lock().unwrap();
            let screen = parser.screen();
            assert!(screen.alternate_screen() && screen.hide_cursor());
            assert_ne!(screen.mouse_protocol_mode(), vt100::MouseProtocolMode::None);
        }
        assert!(s.tty_is_raw());

        s.signal(signal);
        let status = s.wait_exit();
        assert_eq!(
            (status.exit_code(), status.signal()),
            (code, None),
            "SIG{signal}: {status:?}"
        );
        s.wait_output_end();
        let parser = s.parser.lock().unwrap();
        let screen = parser.screen();
        assert!(!screen.alternate_screen(), "SIG{signal}: alternate screen");
        assert!(!screen.hide_cursor(), "SIG{signal}: cursor hidden");
        assert_eq!(
            screen.mouse_protocol_mode(),
            vt100::MouseProtocolMode::None,
            "SIG{signal}: mouse reporting on"
        );
        drop(parser);
        assert!(!s.tty_is_raw(), "SIG{signal}: terminal left raw");
    }
}

/// In raw mode Ctrl-C is a key, not a signal: it quits like `q`, with success.
#[test]
fn ctrl_c_key_quits_cleanly() {
    let mut s = Session::start(&["--snapshot", "examples/demo-cluster.yaml"]);
    s.wait_for("batch/quarterly-report");
    s.keys("\x03");
    let status = s.wait_exit();
    assert!(status.success(), "exit status {status:?}");
    s.wait_output_end();
    assert!(!s.parser.lock().unwrap().screen().alternate_screen());
    assert!(!s.tty_is_raw());
}
