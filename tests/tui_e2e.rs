//! End to end: the real binary in a pseudo-terminal. Keys go in, the screen is read
//! back through a terminal emulator, and the terminal must be restored on exit.

use std::io::{Read, Write};
use std::num::NonZeroU16;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{CommandBuilder, PtySize, native_pty_system};

struct Session {
    parser: Arc<Mutex<vt100::Parser>>,
    writer: Arc<Mutex<Box<dyn Write + Send>>>,
    child: Box<dyn portable_pty::Child + Send + Sync>,
}

impl Session {
    fn start(args: &[&str]) -> Session {
        let pty = native_pty_system()
            .openpty(PtySize {
                rows: 40,
                cols: 140,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("pty");
        let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_schedscope"));
        cmd.args(args);
        cmd.cwd(env!("CARGO_MANIFEST_DIR"));
        cmd.env("TERM", "xterm-256color");
        cmd.env_remove("NO_COLOR");
        let child = pty.slave.spawn_command(cmd).expect("spawn");
        drop(pty.slave);
        let mut reader = pty.master.try_clone_reader().expect("reader");
        let writer = Arc::new(Mutex::new(pty.master.take_writer().expect("writer")));
        let parser = Arc::new(Mutex::new(vt100::Parser::new(
            NonZeroU16::new(40).unwrap(),
            NonZeroU16::new(140).unwrap(),
            0,
        )));
        let p = parser.clone();
        let answer = writer.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let chunk = &buf[..n];
                let mut p = p.lock().unwrap();
                p.process(chunk);
                // Answer cursor-position queries as a real terminal would.
                if chunk.windows(4).any(|w| w == b"\x1b[6n") {
                    let (row, col) = p.screen().cursor_position();
                    let mut w = answer.lock().unwrap();
                    let _ = write!(w, "\x1b[{};{}R", row + 1, col + 1);
                    let _ = w.flush();
                }
            }
        });
        // Keep the master alive as long as the session: dropping it hangs up the child.
        std::mem::forget(pty.master);
        Session {
            parser,
            writer,
            child,
        }
    }

    fn screen(&self) -> String {
        self.parser.lock().unwrap().screen().contents()
    }

    /// Waits until the screen shows `text` (the program redraws asynchronously).
    fn wait_for(&self, text: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let s = self.screen();
            if s.contains(text) {
                return s;
            }
            assert!(
                Instant::now() < deadline,
                "screen never showed {text:?}; it shows:\n{s}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn wait_until_gone(&self, text: &str) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while self.screen().contains(text) {
            assert!(Instant::now() < deadline, "screen kept showing {text:?}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn keys(&mut self, keys: &str) {
        let mut w = self.writer.lock().unwrap();
        w.write_all(keys.as_bytes()).unwrap();
        w.flush().unwrap();
    }

    fn wait_exit(&mut self) -> portable_pty::ExitStatus {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(st) = self.child.try_wait().unwrap() {
                return st;
            }
            assert!(Instant::now() < deadline, "program did not exit");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

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
    assert!(screen.contains("Coscheduling 1:00/1m0s"), "{screen}");
    s.keys("a");
    s.wait_for("training/resnet-worker-0: allowed by every plugin");
    s.keys("q");
    let status = s.wait_exit();
    assert!(status.success(), "exit status {status:?}");
}
