//! What a live source observes beside the objects: its connection state, and what the
//! real scheduler said about pending pods (the PodScheduled=False condition and the
//! latest FailedScheduling event), to set beside the replay's FitError.

use std::collections::BTreeMap;

use k8s_openapi::jiff::Timestamp;

use crate::model::{Pod, PodKey};

/// An API status in one line: `Forbidden: leases "x" is forbidden (HTTP 403)`.
pub fn status_text(s: &kube::core::Status) -> String {
    let reason = if s.reason.is_empty() {
        "Failure"
    } else {
        &s.reason
    };
    match (s.message.is_empty(), s.code) {
        (true, 0) => reason.to_string(),
        (true, c) => format!("{reason} (HTTP {c})"),
        (false, 0) => format!("{reason}: {}", s.message),
        (false, c) => format!("{reason}: {} (HTTP {c})", s.message),
    }
}

/// A client error in one line, without repeats: an API status as [`status_text`]
/// (kube's own text carries the status's Rust debug form), anything else as its
/// message followed by those of its causes that it does not already include.
pub fn api_error_text(e: &kube::Error) -> String {
    if let kube::Error::Api(s) = e {
        return status_text(s);
    }
    let mut text = e.to_string();
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        let more = c.to_string();
        if !text.contains(&more) {
            text = format!("{text}: {more}");
        }
        cause = c.source();
    }
    text
}

/// An error and its causes in one line, each cause once: a cause whose text the
/// line already holds (an error whose message includes its source) is not repeated,
/// and API errors read as [`api_error_text`].
pub fn error_chain_text<'a>(
    chain: impl IntoIterator<Item = &'a (dyn std::error::Error + 'static)>,
) -> String {
    let mut text = String::new();
    for c in chain {
        let part = if let Some(k) = c.downcast_ref::<kube::Error>() {
            api_error_text(k)
        } else if let Some(s) = c.downcast_ref::<kube::core::Status>() {
            status_text(s)
        } else if let Some(s) = c.downcast_ref::<Box<kube::core::Status>>() {
            // kube::Error::Api's source is the boxed status.
            status_text(s)
        } else {
            c.to_string()
        };
        if part.is_empty() || text.contains(&part) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&part);
    }
    text
}

/// A live source's connection state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SourceStatus {
    /// Before the first complete list; the last error, if a list failed.
    Connecting { error: Option<String> },
    /// Every watcher listed and is watching.
    Connected,
    /// A watch or list failed and is being retried; the data shown is as of `since`.
    Reconnecting { since: Timestamp, error: String },
}

/// After this long without a healthy connection the data is called stale.
pub const STALE_AFTER_SECONDS: i64 = 30;

impl SourceStatus {
    /// `connected`, `reconnecting (data 5s old)`, `stale: data 2m10s old (error)`.
    pub fn describe(&self, now: Timestamp) -> String {
        match self {
            SourceStatus::Connecting { error: None } => "connecting".into(),
            SourceStatus::Connecting { error: Some(e) } => format!("connecting: {e}"),
            SourceStatus::Connected => "connected".into(),
            SourceStatus::Reconnecting { since, error } => {
                let age = (now.as_second() - since.as_second()).max(0);
                if age < STALE_AFTER_SECONDS {
                    format!("reconnecting (data {} old): {error}", age_text(age))
                } else {
                    format!("stale: data {} old ({error})", age_text(age))
                }
            }
        }
    }

    pub fn is_healthy(&self) -> bool {
        matches!(self, SourceStatus::Connected)
    }
}

fn age_text(secs: i64) -> String {
    match secs {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m{:02}s", s / 60, s % 60),
        s if s < 86_400 => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
        s => format!("{}d{:02}h", s / 86_400, (s % 86_400) / 3600),
    }
}

/// The latest FailedScheduling event of a pod.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchedulingEvent {
    pub message: String,
    pub count: i32,
    pub last_seen: Option<Timestamp>,
    /// `involvedObject.uid` (`regarding.uid`): which incarnation of the pod it is
    /// about. A pod deleted and created again under the same name (a StatefulSet's)
    /// has a new uid, and the old one's events still name it.
    pub uid: String,
}

pub type SchedulingEvents = BTreeMap<PodKey, SchedulingEvent>;

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
        let (from, message, count, last_seen) = match (event, &pod.not_scheduled) {
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
            self.message
        )
    }

    /// What the real scheduler said, with no replay to set beside it.
    pub fn said(&self, now: Timestamp) -> String {
        format!(
            "real scheduler ({}){}: {}",
            self.from,
            self.seen(now),
            self.message
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

#[cfg(test)]
mod tests {
    use super::*;

    fn pending(cond: Option<&str>) -> Pod {
        Pod {
            namespace: "default".into(),
            name: "p".into(),
            not_scheduled: cond.map(|m| ("Unschedulable".into(), m.into())),
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
        pod.not_scheduled = Some(("Unschedulable".into(), fe.into()));
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

    /// An error whose message includes its source, under a context, with an API
    /// status at the bottom: each cause once, the status in words.
    #[test]
    fn error_chains_say_each_cause_once() {
        #[derive(Debug, thiserror::Error)]
        #[error("listing pods: {}", api_error_text(.source))]
        struct Listing {
            source: kube::Error,
        }
        let status = kube::core::Status {
            code: 403,
            reason: "Forbidden".into(),
            message: "pods is forbidden".into(),
            ..Default::default()
        };
        let e = anyhow::Error::new(Listing {
            source: kube::Error::Api(Box::new(status)),
        })
        .context("acting session");
        // anyhow's own `{:#}` repeats the cause, with the status's debug form.
        let plain = format!("{e:#}");
        assert!(plain.contains("Status {"), "{plain}");
        assert_eq!(
            error_chain_text(e.chain()),
            "acting session: listing pods: Forbidden: pods is forbidden (HTTP 403)"
        );
        let e = anyhow::Error::new(std::io::Error::other("disk full"))
            .context("theme file t.yaml: cannot read it: disk full");
        assert_eq!(
            error_chain_text(e.chain()),
            "theme file t.yaml: cannot read it: disk full"
        );
    }

    #[test]
    fn status_text() {
        let t0 = Timestamp::from_second(1_000).unwrap();
        let at = |s: i64| Timestamp::from_second(1_000 + s).unwrap();
        let r = SourceStatus::Reconnecting {
            since: t0,
            error: "Pod: connection refused".into(),
        };
        assert_eq!(
            r.describe(at(5)),
            "reconnecting (data 5s old): Pod: connection refused"
        );
        assert_eq!(
            r.describe(at(130)),
            "stale: data 2m10s old (Pod: connection refused)"
        );
        assert_eq!(SourceStatus::Connected.describe(at(0)), "connected");
        // An old event's age in days, not thousands of hours.
        assert_eq!(age_text(3 * 86_400 + 5 * 3600 + 7), "3d05h");
        assert_eq!(
            SourceStatus::Connecting { error: None }.describe(at(0)),
            "connecting"
        );
    }
}
