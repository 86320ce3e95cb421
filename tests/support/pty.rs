//! The real binary in a pseudo-terminal, its screen read back through a terminal
//! emulator (vt100), for end-to-end tests of the inspector.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::num::NonZeroU16;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{CommandBuilder, PtySize, native_pty_system};

pub struct Session {
    pub parser: Arc<Mutex<vt100::Parser>>,
    writer: Arc<Mutex<Box<dyn Write + Send>>>,
    child: Box<dyn portable_pty::Child + Send + Sync>,
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

    pub fn wait_exit(&mut self) -> portable_pty::ExitStatus {
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
