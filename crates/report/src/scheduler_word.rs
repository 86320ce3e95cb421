//! The real scheduler's word on a pending pod (its PodScheduled=False condition or
//! latest FailedScheduling event, as a live source records them), set beside the
//! replay's FitError: where it came from, whether the replay agrees, how old it is.

use k8s_openapi::jiff::Timestamp;

use schedscope_engine::model::Pod;

pub use schedscope_engine::model::recorded::{SchedulingEvent, SchedulingEvents};

/// The real scheduler's word on a pending pod, set beside the replay.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchedulerWord {
    /// Where it came from: `FailedScheduling event` or `PodScheduled condition`.
    pub from: &'static str,
    pub message: String,
    /// The replay's FitError differs from it.
    pub differs: bool,
    /// The event's count and when it was last seen, so that an old word is told
    /// from a current disagreement (none for the condition).
    pub count: Option<i32>,
    pub last_seen: Option<Timestamp>,
}

impl SchedulerWord {
    /// The latest event wins over the condition (the condition is updated on the
    /// same failure, but events also carry the count). An event about another pod
    /// of the same name (an earlier incarnation: another uid) is not this pod's.
    /// `None` when the scheduler said nothing, or the pod is bound.
    pub fn of(
        pod: &Pod,
        event: Option<&SchedulingEvent>,
        replay_fit_error: Option<&str>,
    ) -> Option<SchedulerWord> {
        if pod.is_bound() {
            return None;
        }
        let event = event.filter(|e| {
            !e.message.is_empty() && (e.uid.is_empty() || pod.uid.is_empty() || e.uid == pod.uid)
        });
        let (from, message, count, last_seen) = match (event, pod.not_scheduled.as_deref()) {
            (Some(e), _) => (
                "FailedScheduling event",
                e.message.clone(),
                Some(e.count),
                e.last_seen,
            ),
            (_, Some((_, m))) if !m.is_empty() => ("PodScheduled condition", m.clone(), None, None),
            _ => return None,
        };
        let differs = replay_fit_error.is_none_or(|r| normalize(r) != normalize(&message));
        Some(SchedulerWord {
            from,
            message,
            differs,
            count,
            last_seen,
        })
    }

    /// One line for `explain` and the TUI; `now` dates the event.
    pub fn line(&self, now: Timestamp) -> String {
        let verdict = if self.differs {
            "differs from"
        } else {
            "agrees with"
        };
        format!(
            "real scheduler ({}) {verdict} the replay{}: {}",
            self.from,
            self.seen(now),
            crate::format::one_line(&self.message)
        )
    }

    /// What the real scheduler said, with no replay to set beside it.
    pub fn said(&self, now: Timestamp) -> String {
        format!(
            "real scheduler ({}){}: {}",
            self.from,
            self.seen(now),
            crate::format::one_line(&self.message)
        )
    }

    /// ` (3×, last 2m10s ago)` for an event; empty for the condition.
    pub fn seen(&self, now: Timestamp) -> String {
        let mut parts = Vec::new();
        if let Some(c) = self.count {
            parts.push(format!("{c}×"));
        }
        if let Some(t) = self.last_seen {
            let age = (now.as_second() - t.as_second()).max(0);
            parts.push(format!("last {} ago", age_text(age)));
        }
        if parts.is_empty() {
            String::new()
        } else {
            format!(" ({})", parts.join(", "))
        }
    }
}

/// Whitespace and a trailing period are not differences worth flagging.
fn normalize(s: &str) -> String {
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .trim_end_matches('.')
        .to_string()
}

/// An age in the largest units that keep it short: `5s`, `2m10s`, `3h05m`, `3d05h`.
pub fn age_text(secs: i64) -> String {
    match secs {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m{:02}s", s / 60, s % 60),
        s if s < 86_400 => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
        s => format!("{}d{:02}h", s / 86_400, (s % 86_400) / 3600),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pending(cond: Option<&str>) -> Pod {
        Pod {
            namespace: "default".into(),
            name: "p".into(),
            not_scheduled: cond.map(|m| Box::new(("Unschedulable".into(), m.into()))),
            ..Default::default()
        }
    }

    fn ev(m: &str) -> SchedulingEvent {
        SchedulingEvent {
            message: m.into(),
            count: 3,
            last_seen: None,
            uid: String::new(),
        }
    }

    /// (condition, event, replay, expected (from, differs))
    type Row<'a> = (
        Option<&'a str>,
        Option<&'a str>,
        Option<&'a str>,
        Option<(&'a str, bool)>,
    );

    #[test]
    fn word_table() {
        let fe = "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.";
        // (condition, event, replay, expected (from, differs))
        let rows: Vec<Row> = vec![
            (None, None, Some(fe), None),
            (
                Some(fe),
                None,
                Some(fe),
                Some(("PodScheduled condition", false)),
            ),
            (
                Some("old message"),
                Some(fe),
                Some(fe),
                Some(("FailedScheduling event", false)),
            ),
            (
                None,
                Some("0/3 nodes are available: 3 node(s) had untolerated taint(s)."),
                Some(fe),
                Some(("FailedScheduling event", true)),
            ),
            // The replay schedules the pod: the scheduler's failure differs.
            (Some(fe), None, None, Some(("PodScheduled condition", true))),
            // Whitespace only.
            (
                Some("0/3 nodes are available:  3 Insufficient cpu"),
                None,
                Some("0/3 nodes are available: 3 Insufficient cpu."),
                Some(("PodScheduled condition", false)),
            ),
        ];
        for (i, (cond, event, replay, want)) in rows.into_iter().enumerate() {
            let e = event.map(ev);
            let got = SchedulerWord::of(&pending(cond), e.as_ref(), replay);
            assert_eq!(got.as_ref().map(|w| (w.from, w.differs)), want, "row {i}");
        }
        let mut bound = pending(Some(fe));
        bound.node_name = Some("n1".into());
        assert_eq!(SchedulerWord::of(&bound, None, None), None);
    }

    /// A StatefulSet pod deleted and created again keeps its name: the old pod's
    /// FailedScheduling event is not the new pod's word. Its own event is, with its
    /// count and age beside it.
    #[test]
    fn an_earlier_incarnations_event_is_not_this_pods_word() {
        let fe = "0/3 nodes are available: 3 Insufficient cpu.";
        let mut pod = pending(None);
        pod.uid = "uid-new".into();
        let at = |s: i64| Timestamp::from_second(1_000 + s).unwrap();
        let old = SchedulingEvent {
            message: "0/3 nodes are available: 3 node(s) had untolerated taint(s).".into(),
            count: 7,
            last_seen: Some(at(0)),
            uid: "uid-old".into(),
        };
        assert_eq!(SchedulerWord::of(&pod, Some(&old), Some(fe)), None);
        // With a condition of its own, that is the word.
        pod.not_scheduled = Some(Box::new(("Unschedulable".into(), fe.into())));
        let w = SchedulerWord::of(&pod, Some(&old), Some(fe)).expect("word");
        assert_eq!((w.from, w.differs), ("PodScheduled condition", false));
        assert_eq!(
            w.line(at(130)),
            "real scheduler (PodScheduled condition) agrees with the replay: 0/3 nodes are \
             available: 3 Insufficient cpu."
        );
        let own = SchedulingEvent {
            uid: "uid-new".into(),
            message: "0/3 nodes are available: 3 node(s) didn't match pod affinity rules.".into(),
            ..old.clone()
        };
        let w = SchedulerWord::of(&pod, Some(&own), Some(fe)).expect("word");
        assert_eq!(
            w.line(at(130)),
            "real scheduler (FailedScheduling event) differs from the replay (7×, last 2m10s \
             ago): 0/3 nodes are available: 3 node(s) didn't match pod affinity rules."
        );
    }

    /// An old event's age in days, not thousands of hours.
    #[test]
    fn ages_read_in_their_largest_units() {
        assert_eq!(age_text(3 * 86_400 + 5 * 3600 + 7), "3d05h");
        assert_eq!(age_text(130), "2m10s");
    }
}
