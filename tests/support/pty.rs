//! The real binary in a pseudo-terminal, its screen read back through a terminal
//! emulator (vt100), for end-to-end tests of the inspector.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::num::NonZeroU16;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{CommandBuilder, PtySize, native_pty_system};

pub struct Session {
    pub parser: Arc<Mutex<vt100::Parser>>,
    writer: Arc<Mutex<Box<dyn Write + Send>>>,
    child: Box<dyn portable_pty::Child + Send + Sync>,
    /// The terminal device the program runs on.
    tty: Option<std::path::PathBuf>,
    /// Set once the program's output has ended (every writer of the terminal closed).
    output_ended: Arc<AtomicBool>,
    /// Every byte the program wrote, escape sequences included.
    raw: Arc<Mutex<Vec<u8>>>,
}

impl Session {
    pub fn start(args: &[&str]) -> Session {
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
        let tty = pty.master.tty_name();
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
        let output_ended = Arc::new(AtomicBool::new(false));
        let ended = output_ended.clone();
        let raw = Arc::new(Mutex::new(Vec::new()));
        let raw_sink = raw.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let chunk = &buf[..n];
                raw_sink.lock().unwrap().extend_from_slice(chunk);
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
            ended.store(true, Ordering::SeqCst);
        });
        // Keep the master alive as long as the session: dropping it hangs up the child.
        std::mem::forget(pty.master);
        Session {
            parser,
            writer,
            child,
            tty,
            output_ended,
            raw,
        }
    }

    /// The program's process id (to read its memory from `/proc`).
    pub fn process_id(&self) -> Option<u32> {
        self.child.process_id()
    }

    /// What the program wrote so far, byte for byte.
    pub fn raw_output(&self) -> Vec<u8> {
        self.raw.lock().unwrap().clone()
    }

    /// After the program exited: waits until the emulator has read all it wrote.
    pub fn wait_output_end(&self) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while !self.output_ended.load(Ordering::SeqCst) {
            assert!(Instant::now() < deadline, "the output did not end");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Sends `signal` (a name `kill -s` knows: TERM, INT, HUP) to the program.
    pub fn signal(&self, signal: &str) {
        let pid = self.child.process_id().expect("pid").to_string();
        let st = std::process::Command::new("kill")
            .args(["-s", signal, &pid])
            .status()
            .expect("kill");
        assert!(st.success(), "kill -s {signal} {pid}: {st}");
    }

    /// Whether the terminal is still in raw mode (no canonical input, no echo).
    pub fn tty_is_raw(&self) -> bool {
        let tty = self.tty.as_ref().expect("the pty has a device name");
        let out = std::process::Command::new("stty")
            .arg("-a")
            .arg("-F")
            .arg(tty)
            .output()
            .expect("stty");
        assert!(out.status.success(), "stty: {out:?}");
        let flags = String::from_utf8_lossy(&out.stdout);
        flags.split_whitespace().any(|f| f == "-icanon")
    }

    pub fn screen(&self) -> String {
        self.parser.lock().unwrap().screen().contents()
    }

    /// Waits until the screen shows `text` (the program redraws asynchronously).
    pub fn wait_for(&self, text: &str) -> String {
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

    pub fn wait_until_gone(&self, text: &str) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while self.screen().contains(text) {
            assert!(Instant::now() < deadline, "screen kept showing {text:?}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn keys(&mut self, keys: &str) {
        let mut w = self.writer.lock().unwrap();
        w.write_all(keys.as_bytes()).unwrap();
        w.flush().unwrap();
    }

    /// Sends `keys` and times the redraw they cause: from the send to the last byte
    /// of the output that follows, once the output has been quiet for `quiet` (a
    /// frame is written in one burst). `None` if nothing is written within `limit`.
    pub fn redraw_after(
        &mut self,
        keys: &str,
        quiet: Duration,
        limit: Duration,
    ) -> Option<Duration> {
        let raw = self.raw.clone();
        let len = move || raw.lock().unwrap().len();
        let before = len();
        let sent = Instant::now();
        self.keys(keys);
        let (mut seen, mut last) = (before, None);
        loop {
            let now_len = len();
            let now = Instant::now();
            if now_len != seen {
                seen = now_len;
                last = Some(now);
            }
            match last {
                Some(at) if now - at >= quiet => return Some(at - sent),
                None if now - sent >= limit => return None,
                _ => std::thread::sleep(Duration::from_micros(200)),
            }
        }
    }

    /// Waits for the program to exit and for the emulator to have read all it wrote:
    /// the exit can be seen before the last bytes (leaving the alternate screen, say)
    /// reach the reader thread.
    pub fn wait_exit(&mut self) -> portable_pty::ExitStatus {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(st) = self.child.try_wait().unwrap() {
                self.wait_output_end();
                return st;
            }
            assert!(Instant::now() < deadline, "program did not exit");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}
