//! Stop signals (SIGTERM, SIGINT, SIGHUP, SIGQUIT) for the long-running modes: the
//! inspector and `--act --headless` end their loops on one, so the terminal is
//! restored and the Lease released, and the process then exits with the shell's code
//! for the signal (128 + its number). SIGTSTP (Ctrl-Z, `kill -TSTP`) suspends the
//! inspector: it puts the terminal back, stops, and takes it over again on SIGCONT,
//! as vim and htop do. One-shot commands keep the default actions: they hold nothing.

use std::io;

use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGSTOP, SIGTERM, SIGTSTP};
use signal_hook::iterator::Signals;

/// The signals that stop a long-running mode (`kill`, systemd and Kubernetes send
/// SIGTERM; a closed terminal SIGHUP; `kill -INT` SIGINT, `kill -QUIT` SIGQUIT; in raw
/// mode Ctrl-C and Ctrl-\ are keys).
pub const STOP_SIGNALS: [i32; 4] = [SIGTERM, SIGINT, SIGHUP, SIGQUIT];

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
        SIGQUIT => "SIGQUIT".into(),
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

/// Hands each SIGTSTP to `deliver` on a thread of its own, in place of the default
/// stop, so the terminal can be put back first. When `deliver` returns false (no
/// loop to hand it to), the process stops at once, as the default action would.
pub fn watch_suspend(mut deliver: impl FnMut() -> bool + Send + 'static) -> io::Result<()> {
    let mut signals = Signals::new([SIGTSTP])?;
    std::thread::Builder::new()
        .name("suspend-signal".into())
        .spawn(move || {
            for _ in signals.forever() {
                if !deliver() {
                    stop_self();
                }
            }
        })?;
    Ok(())
}

/// Stop this process as the job control of a shell does; it goes on from here on
/// SIGCONT (`fg`). SIGSTOP, which cannot be caught, so the handler of SIGTSTP does
/// not see it again.
pub fn stop_self() {
    let _ = signal_hook::low_level::raise(SIGSTOP);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_are_the_shells() {
        assert_eq!(Stopped { signal: SIGTERM }.exit_code(), 143);
        assert_eq!(Stopped { signal: SIGINT }.exit_code(), 130);
        assert_eq!(Stopped { signal: SIGHUP }.exit_code(), 129);
        assert_eq!(Stopped { signal: SIGQUIT }.exit_code(), 131);
        assert_eq!(
            Stopped { signal: SIGTERM }.to_string(),
            "stopped by SIGTERM"
        );
    }
}
