//! A live source's connection: while nothing is listed yet, why (the first error in
//! full, with a retry key) in place of the panes; and on `C`, each watched kind's
//! state over them.

use k8s_openapi::jiff::Timestamp;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Clear;

use super::super::action::Action;
use super::super::format;
use super::super::widgets::{Scroll, block, scroll_text, wrap};
use super::{Component, Handled, Hits, PaneCtx, scroll_by};
use crate::source::SourceStatus;
use crate::source::live::{KindHealth, KindPhase};
use crate::theme::Theme;

/// The heading and the error of the connection's state.
fn summary(status: Option<&SourceStatus>, kinds: &[KindHealth]) -> (String, Option<String>) {
    let listed = kinds.iter().filter(|k| k.is_done()).count();
    match status {
        None => ("not a live source".into(), None),
        Some(SourceStatus::Connecting { error: None }) => (
            format!(
                "connecting to the API server: {listed} of {} kinds listed",
                kinds.len()
            ),
            None,
        ),
        Some(SourceStatus::Connecting { error: Some(e) }) => {
            let head = if e.starts_with("cannot reach the API server") {
                "cannot reach the API server"
            } else {
                "cannot read the cluster"
            };
            (head.into(), Some(e.clone()))
        }
        Some(SourceStatus::Connected) => {
            let unreadable = unreadable(kinds);
            let mut s = "connected: every kind listed and watched".to_string();
            if unreadable > 0 {
                s.push_str(&format!(
                    "; {unreadable} optional kind{} not readable",
                    if unreadable == 1 { "" } else { "s" }
                ));
            }
            (s, None)
        }
        Some(SourceStatus::Reconnecting { error, .. }) => (
            format!(
                "reconnecting: the data shown is kept until every kind has listed again ({listed} of {})",
                kinds.len()
            ),
            Some(error.clone()),
        ),
    }
}

/// Optional kinds the source may not read.
pub fn unreadable(kinds: &[KindHealth]) -> usize {
    kinds
        .iter()
        .filter(|k| k.optional && matches!(k.phase, KindPhase::Forbidden { .. }))
        .count()
}

fn kind_style(t: &Theme, k: &KindHealth) -> Style {
    match (&k.phase, k.optional) {
        (KindPhase::Synced { .. }, _) => t.pass,
        (KindPhase::NotServed { .. }, true) => t.dim,
        (KindPhase::Forbidden { .. }, true) => t.warning,
        (
            KindPhase::Listing {
                last_error: None, ..
            },
            _,
        ) => t.dim,
        _ => t.error,
    }
}

fn lines(ctx: &PaneCtx, width: usize, keys: &str, now: Timestamp) -> Vec<Line<'static>> {
    let t = ctx.theme;
    let kinds = &ctx.source.live_kinds;
    let (head, error) = summary(ctx.source.live_status.as_ref(), kinds);
    let mut out = vec![Line::from(Span::styled(head, t.header))];
    if let Some(e) = error {
        for l in wrap(&e, width) {
            out.push(Line::from(Span::styled(l, t.error)));
        }
    }
    out.push(Line::default());
    out.push(Line::from(Span::styled(keys.to_string(), t.key)));
    if kinds.is_empty() {
        return out;
    }
    out.push(Line::default());
    let kind_w = kinds
        .iter()
        .map(|k| format::width(k.kind) + usize::from(k.optional) * 11)
        .max()
        .unwrap_or(10)
        + 2;
    for k in kinds {
        let name = if k.optional {
            format!("{} (optional)", k.kind)
        } else {
            k.kind.to_string()
        };
        let text_w = width.saturating_sub(kind_w).max(10);
        for (i, part) in wrap(&k.describe(now), text_w).into_iter().enumerate() {
            let label = if i == 0 { name.as_str() } else { "" };
            out.push(Line::from(vec![
                Span::styled(format::fit(label, kind_w), t.text),
                Span::styled(part, kind_style(t, k)),
            ]));
        }
    }
    out
}

/// In place of the panes while a live source has listed nothing yet.
pub fn draw_screen(ctx: &PaneCtx, f: &mut Frame, area: Rect) {
    let now = ctx.now;
    let b = block(ctx.theme, " Connection ", true);
    let inner = b.inner(area);
    f.render_widget(b, area);
    let keys = if ctx.source.can_retry {
        "R retry now · C details · q quit"
    } else {
        "retried with backoff · q quit"
    };
    let text = lines(
        ctx,
        inner.width.saturating_sub(1).max(10) as usize,
        keys,
        now,
    );
    let mut scroll = Scroll::default();
    scroll_text(f, inner, &ctx.theme.clone(), text, &mut scroll);
}

/// `C`: each watched kind's state, over the panes.
#[derive(Clone, Debug, Default)]
pub struct ConnectionPane {
    pub scroll: Scroll,
}

impl Component for ConnectionPane {
    scroll_keys!();

    fn draw(&mut self, ctx: &PaneCtx, f: &mut Frame, area: Rect, hits: &mut Hits) {
        draw(self, ctx, f, area, hits)
    }
}

fn draw(pane: &mut ConnectionPane, ctx: &PaneCtx, f: &mut Frame, area: Rect, _hits: &mut Hits) {
    let now = ctx.now;
    let t = ctx.theme.clone();
    let w = area.width.saturating_sub(4).clamp(20, 110);
    let keys = if ctx.source.can_retry {
        "R retry now · C or esc closes · j/k scroll"
    } else {
        "C or esc closes · j/k scroll"
    };
    let text = lines(ctx, w.saturating_sub(3) as usize, keys, now);
    let rect = crate::tui::widgets::overlay_rect(area, w, text.len());
    f.render_widget(Clear, rect);
    let b = block(&t, " Connection ", true).style(t.text);
    let inner = b.inner(rect);
    f.render_widget(b, rect);
    scroll_text(f, inner, &t, text, &mut pane.scroll);
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    use insta::assert_snapshot;

    use super::*;
    use crate::source::live::LiveControl;
    use crate::tui::action::{Action, DataUpdate};
    use crate::tui::fixtures::{Fixture, fixture, screen, t0};

    fn press(f: &mut Fixture, c: char) {
        let mods = if c.is_uppercase() {
            KeyModifiers::SHIFT
        } else {
            KeyModifiers::NONE
        };
        f.app.handle_key(&KeyEvent::new(KeyCode::Char(c), mods));
        f.settle();
    }

    fn kind(kind: &'static str, optional: bool, phase: KindPhase) -> KindHealth {
        KindHealth {
            kind,
            resource: kind.to_lowercase() + "s",
            optional,
            phase,
        }
    }

    fn at(s: i64) -> Timestamp {
        Timestamp::from_second(t0().as_second() + s).expect("time")
    }

    /// The live inspector, nothing received yet: an empty cluster and a status.
    fn live(kinds: Vec<KindHealth>, status: SourceStatus) -> (Fixture, LiveControl) {
        let mut f = fixture();
        let control = LiveControl::with_kinds(kinds);
        f.app.set_live(control.clone());
        status_update(&mut f, status, Some(Arc::new(crate::model::Cluster::new())));
        (f, control)
    }

    fn status_update(
        f: &mut Fixture,
        status: SourceStatus,
        cluster: Option<Arc<crate::model::Cluster>>,
    ) {
        let cluster = cluster.unwrap_or_else(|| f.app.shared.cluster.clone());
        f.app.update(Action::Data(DataUpdate {
            cluster,
            source: None,
            status: Some(status),
            events: None,
            notice: None,
        }));
        f.settle();
    }

    /// An API server that refuses connections: the first error in full, in place
    /// of "no pending pods", no "updated" time, and `R` asks the source to retry.
    #[test]
    fn unreachable_server_screen_with_retry() {
        let refused = "cannot reach the API server: client error (Connect): tcp connect \
                       error: Connection refused (os error 111)";
        let (mut f, control) = live(
            vec![
                kind(
                    "Node",
                    false,
                    KindPhase::Retrying {
                        since: at(-12),
                        failures: 4,
                        error: refused.into(),
                    },
                ),
                kind(
                    "Pod",
                    false,
                    KindPhase::Listing {
                        since: at(-1),
                        last_error: Some(refused.into()),
                    },
                ),
            ],
            SourceStatus::Connecting {
                error: Some(refused.into()),
            },
        );
        let s = screen(&mut f.app, 100, 16);
        assert_snapshot!("connection_unreachable", s);
        assert!(!s.contains("no pending pods"), "{s}");
        assert!(!s.contains("updated"), "{s}");
        assert!(f.app.needs_tick(), "ages move on the screen");
        assert_eq!(control.retries(), 0);
        press(&mut f, 'R');
        assert_eq!(control.retries(), 1);
    }

    /// Connected with an optional kind that cannot be read: said in the status bar
    /// and, on `C`, per kind; `esc` closes the view.
    #[test]
    fn connection_view_lists_every_kind() {
        let (mut f, _control) = live(
            vec![
                kind("Node", false, KindPhase::Synced { at: at(-5) }),
                kind(
                    "PodGroup",
                    true,
                    KindPhase::NotServed {
                        error: "404".into(),
                    },
                ),
                kind(
                    "VolumeAttachment",
                    true,
                    KindPhase::Forbidden {
                        verb: "list",
                        error: "cannot list volumeattachments.storage.k8s.io: forbidden: no".into(),
                    },
                ),
            ],
            SourceStatus::Connected,
        );
        let cluster = Arc::new(crate::tui::fixtures::cluster());
        status_update(&mut f, SourceStatus::Connected, Some(cluster));
        let s = screen(&mut f.app, 160, 20);
        assert!(s.contains("(connected · 1 kind not readable (C))"), "{s}");
        assert!(s.contains("updated 12:00:00Z"), "{s}");
        press(&mut f, 'C');
        assert!(f.app.panes.connection.is_some());
        assert_snapshot!("connection_view", screen(&mut f.app, 120, 20));
        f.app
            .handle_key(&KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE));
        assert!(f.app.panes.connection.is_none());
    }

    /// A long error never pushes the counts out of the status bar: it comes last.
    #[test]
    fn a_long_error_does_not_cut_the_counts() {
        let (mut f, _control) = live(Vec::new(), SourceStatus::Connected);
        let cluster = Arc::new(crate::tui::fixtures::cluster());
        status_update(&mut f, SourceStatus::Connected, Some(cluster));
        let long = format!("cannot list pods: {}", "very long reason ".repeat(20));
        status_update(
            &mut f,
            SourceStatus::Reconnecting {
                since: at(-3),
                error: long,
            },
            None,
        );
        for width in [120, 200] {
            let s = screen(&mut f.app, width, 20);
            let bar = s.lines().last().expect("status bar");
            assert!(bar.contains("(reconnecting (data 3s old))"), "{bar}");
            assert!(bar.contains("pods 11 · 7 pending │ nodes 5"), "{bar}");
            if width == 200 {
                assert!(bar.contains("│ cannot list pods: very long"), "{bar}");
            }
        }
    }

    /// The acting scheduler's watch has no retry: the screen does not offer one.
    #[test]
    fn without_a_retry_the_screen_does_not_offer_one() {
        let mut f = fixture();
        status_update(
            &mut f,
            SourceStatus::Connecting {
                error: Some("cannot list pods: forbidden: no".into()),
            },
            Some(Arc::new(crate::model::Cluster::new())),
        );
        let s = screen(&mut f.app, 100, 12);
        assert!(s.contains("cannot read the cluster"), "{s}");
        assert!(s.contains("retried with backoff"), "{s}");
        assert!(!s.contains("R retry now"), "{s}");
        press(&mut f, 'R');
        assert_eq!(
            f.app.shared.message.as_ref().map(|m| m.text.as_str()),
            Some("nothing to retry: not a live source")
        );
    }
}
