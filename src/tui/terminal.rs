//! The one owner of the real terminal: raw mode, alternate screen, mouse capture, and
//! a panic hook that puts the terminal back before the panic message prints.

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
        enable_raw_mode()?;
        execute!(io::stdout(), EnterAlternateScreen, EnableMouseCapture)?;
        tui.terminal.hide_cursor()?;
        tui.terminal.clear()?;
        Ok(tui)
    }
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
