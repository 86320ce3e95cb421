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
    for (signal, code) in [("TERM", 143), ("INT", 130), ("HUP", 129), ("QUIT", 131)] {
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

/// Whether the process is stopped (job control), from /proc.
fn is_stopped(s: &Session) -> bool {
    let pid = s.process_id().expect("pid");
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The state follows the command name in parentheses.
    let state = stat.rsplit(')').next().unwrap_or("").trim_start();
    state.starts_with('T')
}

fn wait_until(what: &str, f: impl Fn() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !f() {
        assert!(std::time::Instant::now() < deadline, "timed out: {what}");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Ctrl-Z (a key in raw mode) and `kill -TSTP` suspend the inspector as vim and htop
/// do: the terminal is put back for the shell (raw mode off, alternate screen left,
/// cursor shown, mouse reporting off) and the process stops; on SIGCONT (`fg`) it
/// takes the terminal over again, redraws, and keys work. Issue 26, item 7.
#[test]
fn suspend_puts_the_terminal_back_and_resume_takes_it_over() {
    for how in ["key", "TSTP"] {
        let mut s = Session::start(&["--snapshot", "examples/demo-cluster.yaml"]);
        s.wait_for("batch/quarterly-report");
        assert!(s.tty_is_raw());
        if how == "key" {
            s.keys("\x1a");
        } else {
            s.signal("TSTP");
        }
        wait_until(&format!("{how}: stopped"), || is_stopped(&s));
        // What it wrote before stopping may still be on its way through the pty.
        wait_until(&format!("{how}: terminal put back"), || {
            let parser = s.parser.lock().unwrap();
            let screen = parser.screen();
            !screen.alternate_screen()
                && !screen.hide_cursor()
                && screen.mouse_protocol_mode() == vt100::MouseProtocolMode::None
        });
        assert!(!s.tty_is_raw(), "{how}: terminal left raw while stopped");

        s.signal("CONT");
        wait_until(&format!("{how}: raw again"), || s.tty_is_raw());
        wait_until(&format!("{how}: alternate screen again"), || {
            s.parser.lock().unwrap().screen().alternate_screen()
        });
        s.wait_for("batch/quarterly-report");
        // Keys act again: the help opens and closes, then q quits.
        s.keys("?");
        s.wait_for("Everywhere");
        s.keys("?");
        s.wait_until_gone("Everywhere");
        s.keys("q");
        let status = s.wait_exit();
        assert!(status.success(), "{how}: exit status {status:?}");
        assert_restored(&s, how);
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

/// A named pipe as the snapshot: its load waits until the test writes it, so the
/// loading screen is sure to show (a load that ends within 150 ms never shows it).
fn fifo(dir: &std::path::Path, name: &str) -> String {
    let path = dir.join(name);
    let st = std::process::Command::new("mkfifo")
        .arg(&path)
        .status()
        .expect("mkfifo");
    assert!(st.success(), "mkfifo: {st}");
    path.to_str().expect("utf-8 path").to_string()
}

fn assert_restored(s: &Session, what: &str) {
    s.wait_output_end();
    let parser = s.parser.lock().unwrap();
    let screen = parser.screen();
    assert!(!screen.alternate_screen(), "{what}: alternate screen");
    assert!(!screen.hide_cursor(), "{what}: cursor hidden");
    assert_eq!(
        screen.mouse_protocol_mode(),
        vt100::MouseProtocolMode::None,
        "{what}: mouse reporting on"
    );
    drop(parser);
    assert!(!s.tty_is_raw(), "{what}: terminal left raw");
}

/// While a slow snapshot loads, the inspector shows the loading screen; `q` and
/// Ctrl-C cancel it as they quit the inspector (status 0, terminal restored).
#[test]
fn loading_screen_shows_and_cancels() {
    for (key, what) in [("q", "q"), ("\x03", "Ctrl-C")] {
        let dir = tempfile::tempdir().expect("tempdir");
        let snap = fifo(dir.path(), "big.json");
        let mut s = Session::start(&["--snapshot", &snap]);
        let screen = s.wait_for("q / Ctrl-C: cancel");
        assert!(screen.contains("schedscope · loading"), "{screen}");
        assert!(screen.contains("big.json"), "{screen}");
        assert!(screen.contains("reading"), "{screen}");
        assert!(s.parser.lock().unwrap().screen().alternate_screen());
        assert!(s.tty_is_raw());
        s.keys(key);
        let status = s.wait_exit();
        assert!(status.success(), "{what}: exit status {status:?}");
        assert_restored(&s, what);
    }
}

/// A stop signal during the load ends it as it ends the inspector: terminal
/// restored, the shell's status for the signal.
#[test]
fn stop_signal_during_the_load_restores_the_terminal() {
    let dir = tempfile::tempdir().expect("tempdir");
    let snap = fifo(dir.path(), "big.json");
    let mut s = Session::start(&["--snapshot", &snap]);
    s.wait_for("q / Ctrl-C: cancel");
    s.signal("TERM");
    let status = s.wait_exit();
    assert_eq!(status.exit_code(), 143, "{status:?}");
    assert_restored(&s, "SIGTERM");
}

/// When the load ends, the inspector takes over the screen with the loaded cluster.
#[test]
fn loading_screen_hands_over_to_the_inspector() {
    let dir = tempfile::tempdir().expect("tempdir");
    // The demo as a JSON List (kubectl's `-o json`), the streaming loader's input.
    let json = dir.path().join("demo.json");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_schedscope"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "snapshot",
            "save",
            "--from",
            "examples/demo-cluster.yaml",
            "-o",
        ])
        .arg(&json)
        .output()
        .expect("snapshot save");
    assert!(out.status.success(), "{out:?}");
    let snap = fifo(dir.path(), "big.json");
    let mut s = Session::start(&["--snapshot", &snap]);
    s.wait_for("q / Ctrl-C: cancel");
    // Opening the pipe for writing meets the loader's open for reading.
    std::fs::write(&snap, std::fs::read(&json).expect("demo.json")).expect("write the pipe");
    let screen = s.wait_for("batch/quarterly-report");
    assert!(!screen.contains("q / Ctrl-C: cancel"), "{screen}");
    s.keys("q");
    let status = s.wait_exit();
    assert!(status.success(), "exit status {status:?}");
    assert_restored(&s, "after the handover");
}

/// A load that fails prints its error once the terminal is back, with the message
/// and status of a failed load elsewhere (2), whether it failed before the loading
/// screen showed (a quick load never shows it) or after.
#[test]
fn load_error_prints_after_the_terminal_is_restored() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("big.json");
    // Enough nodes to take a while to read, the bad one last.
    let mut items: Vec<String> = (0..20_000)
        .map(|i| {
            format!(
                r#"{{"kind":"Node","apiVersion":"v1","metadata":{{"name":"n{i}"}},"status":{{"allocatable":{{"cpu":"4","memory":"8Gi","pods":"110"}}}}}}"#
            )
        })
        .collect();
    items.push(
        r#"{"kind":"Node","apiVersion":"v1","metadata":{"name":"bad"},"status":{"allocatable":{"cpu":"lots"}}}"#
            .into(),
    );
    let text = format!(
        r#"{{"kind":"List","apiVersion":"v1","items":[{}]}}"#,
        items.join(",\n")
    );
    std::fs::write(&path, text).expect("write");
    let snap = path.to_str().expect("utf-8 path");
    let mut s = Session::start(&["--snapshot", snap]);
    let status = s.wait_exit();
    assert_eq!(status.exit_code(), 2, "{status:?}");
    assert_restored(&s, "load error");
    let screen = s.screen();
    assert!(
        screen.contains("error: cannot load snapshot")
            && screen.contains("unknown quantity \"lots\""),
        "{screen}"
    );
}
