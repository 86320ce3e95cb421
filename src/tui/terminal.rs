//! The one owner of the real terminal: raw mode, alternate screen, mouse capture, a
//! panic hook that puts the terminal back before the panic message prints, and
//! suspending (Ctrl-Z) with the terminal put back meanwhile.

use std::io::{self, Stdout};
use std::sync::Arc;

use crossterm::event::{DisableMouseCapture, EnableMouseCapture};
use crossterm::execute;
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;

use super::inert::InertBackend;

type PanicHook = Box<dyn Fn(&std::panic::PanicHookInfo<'_>) + Sync + Send + 'static>;

pub struct Tui {
    pub terminal: Terminal<InertBackend<CrosstermBackend<Stdout>>>,
    previous_hook: Option<Arc<PanicHook>>,
}

/// Put the terminal back; safe to call more than once.
pub fn restore() {
    let _ = disable_raw_mode();
    let _ = execute!(io::stdout(), DisableMouseCapture, LeaveAlternateScreen);
    let _ = execute!(io::stdout(), crossterm::cursor::Show);
}

impl Tui {
    pub fn enter() -> anyhow::Result<Tui> {
        let previous: Arc<PanicHook> = Arc::new(std::panic::take_hook());
        let prev = previous.clone();
        std::panic::set_hook(Box::new(move |info| {
            restore();
            prev(info);
        }));
        let mut tui = Tui {
            terminal: Terminal::new(InertBackend(CrosstermBackend::new(io::stdout())))?,
            previous_hook: Some(previous),
        };
        take_over()?;
        tui.terminal.clear()?;
        Ok(tui)
    }
}

/// Take the terminal over (again): raw mode, alternate screen, mouse reporting,
/// hidden cursor. The caller clears its `Terminal` so that all is drawn anew.
fn take_over() -> io::Result<()> {
    enable_raw_mode()?;
    execute!(
        io::stdout(),
        EnterAlternateScreen,
        EnableMouseCapture,
        crossterm::cursor::Hide
    )
}

/// Ctrl-Z or SIGTSTP: put the terminal back as the shell expects it, stop until
/// SIGCONT (`fg`), then take it over again; the caller redraws everything.
pub fn suspend() -> io::Result<()> {
    restore();
    crate::signals::stop_self();
    take_over()
}

/// Clear the screen and have the next draw write every cell, without
/// `Terminal::clear`, which asks the terminal for the cursor position: once the
/// input thread is reading, that answer never reaches it.
pub fn redraw_all<B: ratatui::backend::Backend>(
    terminal: &mut Terminal<B>,
) -> Result<(), B::Error> {
    let size = terminal.size()?;
    terminal.resize(ratatui::layout::Rect::new(0, 0, size.width, size.height))
}

impl Drop for Tui {
    fn drop(&mut self) {
        restore();
        if let Some(prev) = self.previous_hook.take() {
            let _ = std::panic::take_hook();
            std::panic::set_hook(Box::new(move |info| prev(info)));
        }
    }
}
