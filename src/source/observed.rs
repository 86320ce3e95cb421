//! What a live source observes beside the objects: its connection state, and what the
//! real scheduler said about pending pods (the PodScheduled=False condition and the
//! latest FailedScheduling event), to set beside the replay's FitError.

use k8s_openapi::jiff::Timestamp;

pub use crate::report::scheduler_word::{
    SchedulerWord, SchedulingEvent, SchedulingEvents, age_text,
};

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

#[cfg(test)]
mod tests {
    use super::*;

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
