//! The loading screen: while a large snapshot loads on its own thread, the inspector
//! shows how far it is (bytes read of the file's size, objects decoded, the phase,
//! the time spent) instead of a blank terminal, and `q` or Ctrl-C cancels.
//!
//! A load that ends within [`SHOW_AFTER`] (the demo, a missing file, a syntax error
//! near the top) never touches the terminal: its error prints as a plain message and
//! its inspector starts as it always did. Only a load a person would notice waiting
//! for takes the terminal over early, and its error is shown once the terminal is
//! back, with the same message and exit status.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use k8s_openapi::jiff::Timestamp;
use ratatui::backend::Backend;
use ratatui::layout::{Constraint, Flex, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph};
use ratatui::{Frame, Terminal};

use super::action::Action;
use super::format;
use super::runner::{Event, Events};
use super::waiting::Clock;
use super::widgets::block;
use super::{TuiOptions, env_var, inspect, terminal};
use crate::render::escape::terminal_safe;
use crate::source::LoadProgress;
use crate::theme::Theme;

/// How long a load may take before the loading screen appears. Under it nobody
/// perceives a wait, and a frame shown for a few milliseconds before the inspector
/// replaces it would only flicker.
pub const SHOW_AFTER: Duration = Duration::from_millis(150);

/// How often the screen checks the load's progress (it redraws only when what it
/// shows changed: at most ten times a second, as the elapsed time counts tenths).
const TICK: Duration = Duration::from_millis(100);

/// How far the load is, as the phase words say it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoadPhase {
    /// Reading the file and decoding its objects.
    Reading,
    /// Every object decoded; the cluster model is being built from them.
    BuildingModel,
}

impl LoadPhase {
    pub fn label(self) -> &'static str {
        match self {
            LoadPhase::Reading => "reading",
            LoadPhase::BuildingModel => "building the model",
        }
    }
}

/// Everything the loading screen shows: drawing is a function of this alone.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadView {
    /// The snapshot as named on the command line (escaped when drawn).
    pub file: String,
    pub bytes_read: u64,
    /// The file's size; `None` when not known (a directory, a pipe).
    pub bytes_total: Option<u64>,
    pub objects: u64,
    pub phase: LoadPhase,
    /// Time since the load started, in whole tenths of a second (so a view compares
    /// equal until the shown time changes).
    pub elapsed: Duration,
}

impl LoadView {
    /// The view of `progress` after `elapsed`.
    pub fn of(file: &str, progress: &LoadProgress, elapsed: Duration) -> LoadView {
        let total = progress.bytes_total.load(Ordering::Relaxed);
        LoadView {
            file: file.to_string(),
            bytes_read: progress.bytes_read.load(Ordering::Relaxed),
            bytes_total: (total > 0).then_some(total),
            objects: progress.objects.load(Ordering::Relaxed),
            phase: if progress.building_model.load(Ordering::Relaxed) {
                LoadPhase::BuildingModel
            } else {
                LoadPhase::Reading
            },
            elapsed: tenths(elapsed),
        }
    }

    /// The share of the file read, in 0..=1; `None` when the size is unknown. Building
    /// the model comes after the whole file is read.
    pub fn fraction(&self) -> Option<f64> {
        if self.phase == LoadPhase::BuildingModel {
            return Some(1.0);
        }
        let total = self.bytes_total?;
        Some((self.bytes_read as f64 / total as f64).clamp(0.0, 1.0))
    }
}

fn tenths(d: Duration) -> Duration {
    Duration::from_millis(d.as_millis().saturating_sub(d.as_millis() % 100) as u64)
}

/// Megabytes (10^6 bytes, as the CLI's progress line): a decimal under ten.
fn megabytes(bytes: u64) -> String {
    let mb = bytes as f64 / 1e6;
    if mb < 10.0 {
        format!("{mb:.1}")
    } else {
        format!("{mb:.0}")
    }
}

/// The box: two cells from the screen's sides, up to a width where the bar still
/// reads as one line of progress; five lines inside.
const BOX_MAX_WIDTH: u16 = 100;
const BOX_HEIGHT: u16 = 7;

/// Draw the loading screen of `view` over the whole frame.
pub fn draw(f: &mut Frame, view: &LoadView, theme: &Theme) {
    let area = f.area();
    f.render_widget(Block::default().style(theme.text), area);
    let [row] = Layout::vertical([Constraint::Length(BOX_HEIGHT.min(area.height))])
        .flex(Flex::Center)
        .areas(area);
    let box_width = area
        .width
        .saturating_sub(4)
        .clamp(area.width.min(20), BOX_MAX_WIDTH);
    let [boxed] = Layout::horizontal([Constraint::Length(box_width)])
        .flex(Flex::Center)
        .areas(row);
    f.render_widget(Clear, boxed);
    // Two cells of the border and one space either side of the title.
    let title_room = (boxed.width as usize).saturating_sub(4);
    let file = terminal_safe(&view.file);
    let prefix = "schedscope · loading ";
    let title = if format::width(prefix) + format::width(&file) <= title_room {
        format!("{prefix}{file}")
    } else {
        let room = title_room.saturating_sub(format::width(prefix));
        format!("{prefix}{}", format::middle(&file, room))
    };
    let outer = block(theme, format!(" {title} "), true);
    let inner = outer.inner(boxed);
    f.render_widget(outer, boxed);
    let inner = Rect {
        x: inner.x + 1,
        width: inner.width.saturating_sub(2),
        ..inner
    };
    let width = inner.width as usize;

    let bar_line = match view.fraction() {
        Some(fr) => {
            let percent = format!("{:>4}", format!("{:.0}%", fr * 100.0));
            let bar_w = width.saturating_sub(format::width(&percent) + 1);
            let bar = format::bar((fr * 10_000.0).round() as i64, 10_000, bar_w);
            Line::from(vec![
                Span::styled(bar, theme.gauge),
                Span::styled(format!(" {percent}"), theme.text),
            ])
        }
        None => Line::from(Span::styled("size not known in advance", theme.dim)),
    };
    let amount = match view.bytes_total {
        Some(total) => format!("{} of {} MB", megabytes(view.bytes_read), megabytes(total)),
        None => format!("{} MB read", megabytes(view.bytes_read)),
    };
    let objects = usize::try_from(view.objects).unwrap_or(usize::MAX);
    let counts = format!(
        "{amount} · {} object{}",
        format::thousands(objects),
        if objects == 1 { "" } else { "s" }
    );
    let phase = format!(
        "{} · {:.1} s",
        view.phase.label(),
        view.elapsed.as_secs_f64()
    );
    let lines = vec![
        bar_line,
        Line::from(Span::styled(format::truncate(&counts, width), theme.text)),
        Line::from(Span::styled(format::truncate(&phase, width), theme.text)),
        Line::default(),
        Line::from(vec![
            Span::styled("q", theme.key),
            Span::styled(" / ", theme.dim),
            Span::styled("Ctrl-C", theme.key),
            Span::styled(": cancel", theme.dim),
        ]),
    ];
    f.render_widget(Paragraph::new(lines), inner);
}

/// How the loading screen ended.
#[derive(Debug)]
pub enum LoadingEnd<T> {
    /// The load's result.
    Loaded(T),
    /// `q` or Ctrl-C before the load ended.
    Cancelled,
}

fn is_cancel(k: &KeyEvent) -> bool {
    match k.code {
        KeyCode::Char('q') => k.modifiers.difference(KeyModifiers::SHIFT).is_empty(),
        KeyCode::Char('c') => k.modifiers.contains(KeyModifiers::CONTROL),
        _ => false,
    }
}

/// Show the loading screen on `terminal` until the load sends [`Event::Loaded`] (its
/// result then waits on `done`), a cancel key, or a stop signal (an error, as in the
/// inspector). `view` says how far the load is after a given time; the time comes
/// from `clock`, counted from `start`. Redraws only when the view changed or the
/// terminal was resized.
pub fn show<B, T>(
    terminal: &mut Terminal<B>,
    events: &Receiver<Event>,
    done: &Receiver<T>,
    view: impl Fn(Duration) -> LoadView,
    clock: &dyn Clock,
    start: Timestamp,
    theme: &Theme,
) -> anyhow::Result<LoadingEnd<T>>
where
    B: Backend,
    B::Error: Send + Sync + 'static,
{
    let mut shown: Option<LoadView> = None;
    loop {
        let elapsed = Duration::try_from(clock.now().duration_since(start)).unwrap_or_default();
        let now = view(elapsed);
        if shown.as_ref() != Some(&now) {
            terminal.draw(|f| draw(f, &now, theme))?;
            shown = Some(now);
        }
        let ev = match events.recv_timeout(TICK) {
            Ok(ev) => ev,
            Err(RecvTimeoutError::Timeout) => continue,
            Err(RecvTimeoutError::Disconnected) => {
                anyhow::bail!("the loading screen lost its events")
            }
        };
        match ev {
            Event::Loaded => {
                let r = done
                    .recv()
                    .map_err(|_| anyhow::anyhow!("the snapshot load ended without a result"))?;
                return Ok(LoadingEnd::Loaded(r));
            }
            Event::Key(k) if is_cancel(&k) => return Ok(LoadingEnd::Cancelled),
            Event::Action(Action::Resize(..)) => shown = None,
            Event::InputError(e) => anyhow::bail!("reading terminal input: {e}"),
            Event::Stop(stopped) => return Err(stopped.into()),
            Event::Suspend => {
                super::terminal::suspend()?;
                super::terminal::redraw_all(terminal)?;
                shown = None;
            }
            Event::Key(k) if super::runner::is_suspend_key(&k) => {
                super::terminal::suspend()?;
                super::terminal::redraw_all(terminal)?;
                shown = None;
            }
            // Other keys, the mouse: nothing to act on yet (not kept for the inspector,
            // where they would act on a screen nobody saw).
            Event::Key(_)
            | Event::Action(_)
            | Event::Trace(..)
            | Event::Verdict(..)
            | Event::Remedies(..) => {}
        }
    }
}

/// A snapshot to load behind the loading screen.
pub struct Loading {
    /// The snapshot as named on the command line.
    pub file: String,
    /// What the load updates as it goes.
    pub progress: Arc<LoadProgress>,
    /// `--theme NAME|PATH`, for the loading screen and the inspector.
    pub theme: Option<String>,
}

/// What a load produced: the inspector's options, and lines for stderr (the loader's
/// warnings), printed before the terminal is taken over or after it is restored so
/// they never scribble over the screen.
pub struct Loaded {
    pub opts: TuiOptions,
    pub notes: Vec<String>,
}

fn print_notes(notes: &[String]) {
    for n in notes {
        crate::render::escape::to_stderr(n);
    }
}

/// Run `load` on its own thread, then the inspector on what it produced. A load that
/// outlasts [`SHOW_AFTER`] gets the loading screen. Cancelling returns `Ok` (exit 0,
/// as quitting the inspector does); the load's thread is left to the process's exit.
pub fn run(
    loading: Loading,
    load: impl FnOnce() -> anyhow::Result<Loaded> + Send + 'static,
) -> anyhow::Result<()> {
    // Before the terminal is touched, so a broken theme file is a plain message.
    let theme = Theme::resolve(loading.theme.as_deref(), &env_var)?;
    let clock = super::SystemClock;
    let start = clock.now();
    let mut events = Events::new()?;
    let (done_tx, done_rx) = mpsc::channel();
    let loaded_tx = events.tx.clone();
    std::thread::Builder::new()
        .name("snapshot-load".into())
        .spawn(move || {
            // A panic is a bug, but the screen must still end: the panic hook has put
            // the terminal back and printed the message; the error gives the status.
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(load))
                .unwrap_or_else(|_| Err(anyhow::anyhow!("loading the snapshot panicked")));
            if done_tx.send(r).is_ok() {
                let _ = loaded_tx.send(Event::Loaded);
            }
        })?;
    let quick = match events.rx.recv_timeout(SHOW_AFTER) {
        Ok(Event::Loaded) => Some(done_rx.recv()?),
        Ok(Event::Stop(stopped)) => return Err(stopped.into()),
        // Nothing else feeds the channel before the terminal is taken over.
        Ok(_) | Err(RecvTimeoutError::Timeout) => None,
        Err(RecvTimeoutError::Disconnected) => anyhow::bail!("the snapshot load stopped"),
    };
    if let Some(r) = quick {
        let loaded = r?;
        print_notes(&loaded.notes);
        let mut tui = terminal::Tui::enter()?;
        let res = inspect(&mut tui, loaded.opts, theme, events);
        drop(tui);
        return res;
    }
    let mut tui = terminal::Tui::enter()?;
    events.start_input();
    let file = loading.file;
    let progress = loading.progress;
    let outcome = show(
        &mut tui.terminal,
        &events.rx,
        &done_rx,
        |elapsed| LoadView::of(&file, &progress, elapsed),
        &clock,
        start,
        &theme,
    );
    let loaded = match outcome {
        Ok(LoadingEnd::Loaded(Ok(loaded))) => loaded,
        Ok(LoadingEnd::Cancelled) => return Ok(()),
        Ok(LoadingEnd::Loaded(Err(e))) | Err(e) => {
            drop(tui);
            return Err(e);
        }
    };
    let res = inspect(&mut tui, loaded.opts, theme, events);
    drop(tui);
    print_notes(&loaded.notes);
    res
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::fixtures::{screen as app_screen, t0};
    use crate::tui::waiting::ManualClock;
    use insta::assert_snapshot;
    use ratatui::backend::TestBackend;
    use std::path::PathBuf;

    fn theme() -> Theme {
        Theme::builtin("dark").expect("dark")
    }

    fn view(read: u64, total: Option<u64>, objects: u64, phase: LoadPhase, ms: u64) -> LoadView {
        LoadView {
            file: "/tmp/c.json".into(),
            bytes_read: read,
            bytes_total: total,
            objects,
            phase,
            elapsed: Duration::from_millis(ms),
        }
    }

    fn screen(v: &LoadView, w: u16, h: u16) -> String {
        let mut t = Terminal::new(TestBackend::new(w, h)).expect("test terminal");
        t.draw(|f| draw(f, v, &theme())).expect("draw");
        t.backend().to_string()
    }

    const MB: u64 = 1_000_000;

    #[test]
    fn start_at_80x24() {
        let v = view(0, Some(753 * MB), 0, LoadPhase::Reading, 0);
        assert_snapshot!("loading_start_80x24", screen(&v, 80, 24));
    }

    #[test]
    fn midway_at_80x24_and_wide() {
        let v = view(
            318 * MB,
            Some(753 * MB),
            1_234_567,
            LoadPhase::Reading,
            2_300,
        );
        assert_snapshot!("loading_mid_80x24", screen(&v, 80, 24));
        assert_snapshot!("loading_mid_wide", screen(&v, 160, 40));
    }

    #[test]
    fn building_the_model() {
        let v = view(
            753 * MB,
            Some(753 * MB),
            2_500_000,
            LoadPhase::BuildingModel,
            3_900,
        );
        assert_snapshot!("loading_building_80x24", screen(&v, 80, 24));
    }

    /// A directory's or a pipe's size is not known in advance: no bar, the bytes read.
    #[test]
    fn unknown_size() {
        let v = view(4_200_000, None, 812, LoadPhase::Reading, 600);
        assert_snapshot!("loading_unknown_size", screen(&v, 80, 12));
    }

    /// A long path keeps both ends (the directory it starts with, the file name).
    #[test]
    fn long_file_name_is_cut_in_the_middle() {
        let mut v = view(1, Some(1), 1, LoadPhase::Reading, 100);
        v.file = format!(
            "/home/admin/must-gather/{}/cluster-dump.json",
            "x".repeat(120)
        );
        let s = screen(&v, 80, 12);
        assert_snapshot!("loading_long_name", s);
        assert!(
            s.contains("/home/admin/must-gather/") && s.contains("cluster-dump.json"),
            "{s}"
        );
        let wide = screen(&v, 200, 12);
        assert!(
            wide.contains("…") && wide.contains("cluster-dump.json"),
            "{wide}"
        );
    }

    /// A file name with terminal sequences is drawn spelled out, as the CLI prints it.
    #[test]
    fn control_characters_in_the_file_name_are_spelled_out() {
        let mut v = view(0, Some(10), 0, LoadPhase::Reading, 0);
        v.file = "snap\x1b]0;pwned\x07\u{9b}2J.json".into();
        let s = screen(&v, 80, 12);
        assert_snapshot!("loading_control_chars", s);
        assert!(s.contains(r"snap\x1b]0;pwned\x07\u{9b}2J.json"), "{s}");
    }

    #[test]
    fn tiny_terminal_does_not_panic() {
        let v = view(5, Some(10), 3, LoadPhase::Reading, 100);
        for (w, h) in [(1, 1), (10, 3), (30, 5)] {
            screen(&v, w, h);
        }
    }

    #[test]
    fn view_of_progress_and_fraction() {
        let p = LoadProgress::default();
        let v = LoadView::of("f.json", &p, Duration::from_millis(1_234));
        assert_eq!(v.bytes_total, None, "size not set yet");
        assert_eq!(v.fraction(), None);
        assert_eq!(v.elapsed, Duration::from_millis(1_200), "whole tenths");
        p.bytes_total.store(400, Ordering::Relaxed);
        p.bytes_read.store(100, Ordering::Relaxed);
        p.objects.store(7, Ordering::Relaxed);
        let v = LoadView::of("f.json", &p, Duration::ZERO);
        assert_eq!(
            (v.bytes_total, v.objects, v.phase),
            (Some(400), 7, LoadPhase::Reading)
        );
        assert_eq!(v.fraction(), Some(0.25));
        // Read past the size given at the start (a file that grew): never past full.
        p.bytes_read.store(500, Ordering::Relaxed);
        assert_eq!(
            LoadView::of("f.json", &p, Duration::ZERO).fraction(),
            Some(1.0)
        );
        p.building_model.store(true, Ordering::Relaxed);
        let v = LoadView::of("f.json", &p, Duration::ZERO);
        assert_eq!(
            (v.phase, v.fraction()),
            (LoadPhase::BuildingModel, Some(1.0))
        );
        // The same progress at the same tenth is the same view: no redraw.
        assert_eq!(
            LoadView::of("f.json", &p, Duration::from_millis(1_210)),
            LoadView::of("f.json", &p, Duration::from_millis(1_290))
        );
    }

    #[test]
    fn cancel_keys() {
        let key = |c, m| KeyEvent::new(c, m);
        let cases = [
            (key(KeyCode::Char('q'), KeyModifiers::NONE), true),
            (key(KeyCode::Char('c'), KeyModifiers::CONTROL), true),
            (key(KeyCode::Char('c'), KeyModifiers::NONE), false),
            (key(KeyCode::Char('q'), KeyModifiers::CONTROL), false),
            (key(KeyCode::Esc, KeyModifiers::NONE), false),
            (key(KeyCode::Enter, KeyModifiers::NONE), false),
        ];
        for (k, want) in cases {
            assert_eq!(is_cancel(&k), want, "{k:?}");
        }
    }

    fn demo() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/demo-cluster.yaml")
    }

    /// The load runs on its own thread behind the screen; when it ends, its cluster
    /// goes to the inspector, which lists the demo's pods.
    #[test]
    fn load_then_inspector_on_the_demo() {
        let (tx, rx) = mpsc::channel();
        let (done_tx, done_rx) = mpsc::channel();
        let progress = Arc::new(LoadProgress::default());
        let p = progress.clone();
        let worker = std::thread::spawn(move || {
            let r = crate::source::load_snapshot_with_progress(&demo(), Some(&p));
            done_tx.send(r).expect("screen waits");
            tx.send(Event::Loaded).expect("screen waits");
        });
        let clock = ManualClock::new(t0());
        let mut terminal = Terminal::new(TestBackend::new(80, 24)).expect("terminal");
        let shown = show(
            &mut terminal,
            &rx,
            &done_rx,
            |elapsed| LoadView::of("examples/demo-cluster.yaml", &progress, elapsed),
            &clock,
            t0(),
            &theme(),
        )
        .expect("no error");
        worker.join().expect("load thread");
        // The screen was drawn before the load's end was read.
        let first = terminal.backend().to_string();
        assert!(
            first.contains("loading examples/demo-cluster.yaml"),
            "{first}"
        );
        assert!(first.contains("q / Ctrl-C: cancel"), "{first}");
        let LoadingEnd::Loaded(Ok(snapshot)) = shown else {
            panic!("the demo loads: {shown:?}")
        };
        let config = crate::engine::SchedulerConfig::defaults();
        let opts = TuiOptions::new(snapshot.cluster, config.profiles, "snapshot demo");
        let (mut app, updates) = super::super::app_of(opts, theme(), Arc::new(clock));
        assert!(updates.is_none());
        let s = app_screen(&mut app, 130, 30);
        assert!(s.contains("batch/quarterly-report"), "{s}");
        assert!(s.contains("snapshot demo"), "{s}");
    }

    fn never_loads() -> (mpsc::Sender<Event>, Receiver<Event>, Receiver<()>) {
        let (tx, rx) = mpsc::channel();
        let (_done_tx, done_rx) = mpsc::channel();
        (tx, rx, done_rx)
    }

    fn show_until_stopped(
        rx: &Receiver<Event>,
        done: &Receiver<()>,
    ) -> anyhow::Result<LoadingEnd<()>> {
        let mut terminal = Terminal::new(TestBackend::new(80, 24)).expect("terminal");
        show_on(&mut terminal, rx, done)
    }

    fn show_on(
        terminal: &mut Terminal<TestBackend>,
        rx: &Receiver<Event>,
        done: &Receiver<()>,
    ) -> anyhow::Result<LoadingEnd<()>> {
        let progress = LoadProgress::default();
        show(
            terminal,
            rx,
            done,
            |elapsed| LoadView::of("big.json", &progress, elapsed),
            &ManualClock::new(t0()),
            t0(),
            &theme(),
        )
    }

    #[test]
    fn q_and_ctrl_c_cancel_other_keys_do_not() {
        for cancel in [
            KeyEvent::new(KeyCode::Char('q'), KeyModifiers::NONE),
            KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL),
        ] {
            let (tx, rx, done) = never_loads();
            tx.send(Event::Key(KeyEvent::new(
                KeyCode::Char('j'),
                KeyModifiers::NONE,
            )))
            .unwrap();
            tx.send(Event::Action(Action::Resize(100, 30))).unwrap();
            tx.send(Event::Key(cancel)).unwrap();
            let r = show_until_stopped(&rx, &done).expect("no error");
            assert!(matches!(r, LoadingEnd::Cancelled), "{cancel:?}: {r:?}");
        }
    }

    /// Keys that do nothing and an unchanged load draw nothing; a resize redraws.
    #[test]
    fn redraws_only_on_change_or_resize() {
        let (tx, rx, done) = never_loads();
        let key = |c| Event::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
        for ev in [
            key('j'),
            key('x'),
            Event::Action(Action::Resize(80, 24)),
            key('k'),
            key('q'),
        ] {
            tx.send(ev).unwrap();
        }
        let mut terminal = Terminal::new(TestBackend::new(80, 24)).expect("terminal");
        let r = show_on(&mut terminal, &rx, &done).expect("no error");
        assert!(matches!(r, LoadingEnd::Cancelled), "{r:?}");
        assert_eq!(
            terminal.get_frame().count(),
            2,
            "the first frame and the resize"
        );
    }

    /// A stop signal ends the screen as it ends the inspector: an error carrying the
    /// signal, for the exit status.
    #[test]
    fn stop_signal_is_the_inspectors_error() {
        let (tx, rx, done) = never_loads();
        let stopped = crate::signals::Stopped { signal: 15 };
        tx.send(Event::Stop(stopped)).unwrap();
        let e = show_until_stopped(&rx, &done).expect_err("stopped");
        assert_eq!(e.downcast_ref::<crate::signals::Stopped>(), Some(&stopped));
    }

    /// A load that fails hands its error back as is (the caller restores the terminal
    /// and prints it as the CLI always did).
    #[test]
    fn a_failed_load_returns_its_error() {
        let (tx, rx) = mpsc::channel();
        let (done_tx, done_rx) = mpsc::channel();
        done_tx
            .send(crate::source::load_snapshot(std::path::Path::new(
                "/nonexistent/x.json",
            )))
            .unwrap();
        tx.send(Event::Loaded).unwrap();
        let mut terminal = Terminal::new(TestBackend::new(80, 24)).expect("terminal");
        let progress = LoadProgress::default();
        let r = show(
            &mut terminal,
            &rx,
            &done_rx,
            |elapsed| LoadView::of("x.json", &progress, elapsed),
            &ManualClock::new(t0()),
            t0(),
            &theme(),
        )
        .expect("the screen itself did not fail");
        let LoadingEnd::Loaded(Err(e)) = r else {
            panic!("{r:?}")
        };
        assert!(e.to_string().contains("/nonexistent/x.json"), "{e}");
    }
}
