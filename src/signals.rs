//! Stop signals (SIGTERM, SIGINT, SIGHUP) for the long-running modes: the inspector
//! and `--act --headless` end their loops on one, so the terminal is restored and the
//! Lease released, and the process then exits with the shell's code for the signal
//! (128 + its number). One-shot commands keep the default action: they hold nothing.

use std::io;

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

/// The signals that stop a long-running mode (`kill`, systemd and Kubernetes send
/// SIGTERM; a closed terminal SIGHUP; `kill -INT` SIGINT; in raw mode Ctrl-C is a key).
pub const STOP_SIGNALS: [i32; 3] = [SIGTERM, SIGINT, SIGHUP];

/// A mode stopped by a signal after cleaning up; not a failure worth a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("stopped by {}", name(*.signal))]
pub struct Stopped {
    pub signal: i32,
}

impl Stopped {
    /// The status a shell reports for a process ended by the signal.
    pub fn exit_code(&self) -> u8 {
        u8::try_from(128 + self.signal).unwrap_or(u8::MAX)
    }
}

fn name(signal: i32) -> String {
    match signal {
        SIGTERM => "SIGTERM".into(),
        SIGINT => "SIGINT".into(),
        SIGHUP => "SIGHUP".into(),
        n => format!("signal {n}"),
    }
}

/// Hands each stop signal to `deliver` on a thread of its own. When `deliver` returns
/// false (its loop has already ended, or a second signal came while it stops), the
/// process exits at once with the signal's code, as if no handler were installed:
/// the handler stays for the life of the process, since removing it would leave the
/// signal ignored rather than fatal.
pub fn watch(mut deliver: impl FnMut(Stopped) -> bool + Send + 'static) -> io::Result<()> {
    let mut signals = Signals::new(STOP_SIGNALS)?;
    std::thread::Builder::new()
        .name("stop-signals".into())
        .spawn(move || {
            for signal in signals.forever() {
                let stopped = Stopped { signal };
                if !deliver(stopped) {
                    std::process::exit(i32::from(stopped.exit_code()));
                }
            }
        })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_are_the_shells() {
        assert_eq!(Stopped { signal: SIGTERM }.exit_code(), 143);
        assert_eq!(Stopped { signal: SIGINT }.exit_code(), 130);
        assert_eq!(Stopped { signal: SIGHUP }.exit_code(), 129);
        assert_eq!(
            Stopped { signal: SIGTERM }.to_string(),
            "stopped by SIGTERM"
        );
    }
}
