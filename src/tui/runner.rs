//! The thin event loop: input, trace worker, data-source and stop-signal threads send
//! owned events into one channel; the loop updates the app and redraws only when it
//! changed. With no countdown running, it blocks on the channel and uses no CPU.

use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use crossterm::event::{self, Event as CtEvent, KeyEventKind, MouseButton, MouseEventKind};

use super::action::{Action, DataUpdate, MouseKind};
use super::app::App;
use super::remedies::Found;
use super::terminal::{self, Tui};
use super::worker::{Done, Replayed, VerdictKey, Work, WorkQueue};
use crate::report::PodVerdict;
use crate::signals::{self, Stopped};

pub enum Event {
    Key(crossterm::event::KeyEvent),
    /// The snapshot load behind the loading screen ended (its result waits on the
    /// load's own channel).
    Loaded,
    Action(Action),
    Trace(Box<Replayed>),
    Verdict(VerdictKey, PodVerdict),
    Remedies(Box<Found>),
    InputError(String),
    /// SIGTERM, SIGINT, SIGHUP or SIGQUIT: end the loop so the terminal is restored.
    Stop(Stopped),
    /// SIGTSTP or the Ctrl-Z key: put the terminal back, stop, take it over on SIGCONT.
    Suspend,
}

/// Ctrl-Z: in raw mode the terminal sends it as a key rather than SIGTSTP.
pub(super) fn is_suspend_key(k: &crossterm::event::KeyEvent) -> bool {
    use crossterm::event::{KeyCode, KeyModifiers};
    k.code == KeyCode::Char('z') && k.modifiers.contains(KeyModifiers::CONTROL)
}

fn spawn_input(tx: Sender<Event>) {
    // Blocks in read(): no polling interval, so an idle app sleeps.
    std::thread::spawn(move || {
        loop {
            let ev = match event::read() {
                Ok(CtEvent::Key(k)) if k.kind == KeyEventKind::Press => Event::Key(k),
                Ok(CtEvent::Mouse(m)) => {
                    let kind = match m.kind {
                        MouseEventKind::Down(MouseButton::Left) => MouseKind::Click,
                        MouseEventKind::ScrollUp => MouseKind::ScrollUp,
                        MouseEventKind::ScrollDown => MouseKind::ScrollDown,
                        // Moves and drags would only cost redraws.
                        _ => continue,
                    };
                    Event::Action(Action::Mouse {
                        kind,
                        column: m.column,
                        row: m.row,
                    })
                }
                Ok(CtEvent::Resize(w, h)) => Event::Action(Action::Resize(w, h)),
                Ok(_) => continue,
                Err(e) => Event::InputError(e.to_string()),
            };
            let stop = matches!(ev, Event::InputError(_));
            if tx.send(ev).is_err() || stop {
                return;
            }
        }
    });
}

/// The one stop-signal watcher of the process: every later phase (loading screen,
/// inspector) reads its events from the same channel, since a second watcher would
/// exit the process once the first one's channel is gone.
fn spawn_signals(tx: Sender<Event>) -> anyhow::Result<()> {
    let suspend = tx.clone();
    signals::watch_suspend(move || suspend.send(Event::Suspend).is_ok())?;
    signals::watch(move |stopped| {
        if tx.send(Event::Stop(stopped)).is_ok() {
            return true;
        }
        // The loop is over; the process exits at once, the terminal put back first.
        terminal::restore();
        false
    })?;
    Ok(())
}

fn spawn_worker(tx: Sender<Event>) -> Sender<Work> {
    let (work_tx, work_rx) = mpsc::channel::<Work>();
    std::thread::spawn(move || {
        let mut queue = WorkQueue::default();
        loop {
            // Idle: sleep until asked. Busy: take what is queued, then one step, so a
            // trace the user asks for jumps the verdicts.
            if queue.is_idle() {
                match work_rx.recv() {
                    Ok(w) => queue.push(w),
                    Err(_) => return,
                }
            }
            while let Ok(w) = work_rx.try_recv() {
                queue.push(w);
            }
            let ev = match queue.step() {
                Some(Done::Trace(r)) => Event::Trace(r),
                Some(Done::Verdict(key, verdict)) => Event::Verdict(key, verdict),
                Some(Done::Remedies(f)) => Event::Remedies(f),
                None => continue,
            };
            if tx.send(ev).is_err() {
                return;
            }
        }
    });
    work_tx
}

fn spawn_updates(tx: Sender<Event>, updates: Receiver<DataUpdate>) {
    std::thread::spawn(move || {
        while let Ok(u) = updates.recv() {
            if tx.send(Event::Action(Action::Data(u))).is_err() {
                return;
            }
        }
    });
}

fn apply(app: &mut App, ev: Event) -> anyhow::Result<()> {
    match ev {
        Event::Key(k) => app.handle_key(&k),
        Event::Action(a) => app.update(a),
        Event::Trace(r) => app.replay_ready(*r),
        Event::Verdict(key, verdict) => app.verdict_ready(key, verdict),
        Event::Remedies(f) => app.remedies_ready(*f),
        Event::InputError(e) => anyhow::bail!("reading terminal input: {e}"),
        Event::Stop(stopped) => return Err(stopped.into()),
        // The load's result was taken before the inspector started; the loop
        // suspends before it applies events (it owns the terminal).
        Event::Loaded | Event::Suspend => {}
    }
    Ok(())
}

/// The event channel and what already feeds it: the stop signals from the start, the
/// terminal's input once the terminal is taken over.
pub struct Events {
    pub(super) tx: Sender<Event>,
    pub(super) rx: Receiver<Event>,
    input: bool,
}

impl Events {
    /// A channel with the stop-signal watcher on it.
    pub fn new() -> anyhow::Result<Events> {
        let (tx, rx) = mpsc::channel::<Event>();
        spawn_signals(tx.clone())?;
        Ok(Events {
            tx,
            rx,
            input: false,
        })
    }

    /// Read the terminal's keys, mouse and resizes into the channel (once).
    pub fn start_input(&mut self) {
        if !self.input {
            spawn_input(self.tx.clone());
            self.input = true;
        }
    }
}

pub fn run_loop(
    tui: &mut Tui,
    app: &mut App,
    updates: Option<Receiver<DataUpdate>>,
    mut events: Events,
) -> anyhow::Result<()> {
    events.start_input();
    let Events { tx, rx, .. } = events;
    let jobs = spawn_worker(tx.clone());
    if let Some(u) = updates {
        spawn_updates(tx.clone(), u);
    }
    drop(tx);
    let mut next_tick: Option<Instant> = None;
    loop {
        if let Some(job) = app.take_job() {
            let _ = jobs.send(Work::Trace(job));
        }
        if let Some(job) = app.take_remedies_job() {
            let _ = jobs.send(Work::Remedies(job));
        }
        if let Some(batch) = app.take_verdict_job() {
            let _ = jobs.send(Work::Verdicts(batch));
        }
        if app.take_dirty() {
            tui.terminal.draw(|f| app.draw(f))?;
        }
        if app.should_quit() {
            return Ok(());
        }
        let ev = if app.needs_tick() {
            let due = *next_tick.get_or_insert_with(|| Instant::now() + Duration::from_secs(1));
            match rx.recv_timeout(due.saturating_duration_since(Instant::now())) {
                Ok(ev) => ev,
                Err(RecvTimeoutError::Timeout) => {
                    next_tick = Some(due + Duration::from_secs(1));
                    Event::Action(Action::Tick)
                }
                Err(RecvTimeoutError::Disconnected) => return Ok(()),
            }
        } else {
            next_tick = None;
            match rx.recv() {
                Ok(ev) => ev,
                Err(_) => return Ok(()),
            }
        };
        if suspends(tui, app, &ev)? {
            continue;
        }
        apply(app, ev)?;
        // Take everything already queued before drawing (fast scrolling, key repeat).
        while let Ok(ev) = rx.try_recv() {
            if suspends(tui, app, &ev)? {
                continue;
            }
            apply(app, ev)?;
            if app.should_quit() {
                return Ok(());
            }
        }
    }
}

/// Suspend on SIGTSTP or Ctrl-Z (true), with everything redrawn on the way back.
fn suspends(tui: &mut Tui, app: &mut App, ev: &Event) -> anyhow::Result<bool> {
    let suspend = match ev {
        Event::Suspend => true,
        Event::Key(k) => is_suspend_key(k),
        _ => false,
    };
    if suspend {
        terminal::suspend()?;
        terminal::redraw_all(&mut tui.terminal)?;
        app.mark_dirty();
    }
    Ok(suspend)
}
