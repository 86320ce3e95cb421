//! Renderings of a [`SimulationResult`] for `schedscope simulate`: a human timeline
//! and JSON (events plus the final placement of every pod).

use std::collections::BTreeMap;
use std::fmt::Write;

use serde_json::{Value, json};

use crate::engine::queue::QueueName;
use crate::engine::scheduler::{Placement, SimEventKind, SimulationResult, StopReason};

use crate::report::format::{CELL_MAX, clip, pad, width};
use crate::report::offset as at;

fn plural(n: u32, one: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {one}s")
    }
}

fn stop_text(s: &StopReason) -> String {
    match s {
        StopReason::Settled => "settled".into(),
        StopReason::AttemptLimit { attempts } => {
            format!(
                "stopped after {attempts} attempt{} (attempt limit; not settled)",
                crate::report::plural(*attempts)
            )
        }
        StopReason::TimeLimit { limit } => {
            format!("stopped: next event beyond the {limit} time limit (not settled)")
        }
    }
}

/// One line of text for an event (without time and pod).
pub fn describe(kind: &SimEventKind) -> String {
    match kind {
        SimEventKind::Queued {
            queue: QueueName::Gated,
        } => "held before the queue (PreEnqueue rejected it)".into(),
        SimEventKind::Queued { queue } => format!("queued in {}", queue.as_str()),
        SimEventKind::Skipped { reason } => format!("skipped: {reason}"),
        SimEventKind::Attempt {
            attempt,
            pod_attempt,
            from,
        } => format!(
            "attempt {pod_attempt}, scheduling cycle #{} (from {})",
            attempt + 1,
            from.as_str()
        ),
        SimEventKind::Reserved { node } => format!("assumed and reserved on {node}"),
        SimEventKind::Waiting { node, waits } => {
            let w: Vec<String> = waits
                .iter()
                .map(|w| {
                    format!(
                        "{} up to {} (until {})",
                        w.plugin,
                        w.timeout,
                        at(w.deadline_ms)
                    )
                })
                .collect();
            format!("waiting at Permit on {node}: {}", w.join(", "))
        }
        SimEventKind::Allowed { node } => format!("allowed at Permit; binding to {node}"),
        SimEventKind::Rejected {
            node,
            plugin,
            message,
        } => {
            let by = if plugin.is_empty() {
                String::new()
            } else {
                format!(" by {plugin}")
            };
            format!("rejected at Permit{by} on {node}: {message}")
        }
        SimEventKind::Unreserved { node } => format!("unreserved and forgotten on {node}"),
        SimEventKind::Bound { node } => format!("bound to {node}"),
        SimEventKind::Failed {
            message,
            plugins,
            queue,
        } => {
            let by = if plugins.is_empty() {
                String::new()
            } else {
                format!(" (rejected by {})", plugins.join(", "))
            };
            format!("failed{by} → {}: {message}", queue.as_str())
        }
        SimEventKind::Nominated { node, victims } => {
            if victims.is_empty() {
                format!("nominated to {node}")
            } else {
                format!("nominated to {node}; evicting {}", victims.join(", "))
            }
        }
        SimEventKind::Evicted { by, node } => format!("evicted from {node} by {by}"),
        SimEventKind::NominationCleared { node } => {
            format!("nomination to {node} cleared (a higher-priority pod preempted there)")
        }
        SimEventKind::Moved { to, event } => {
            format!("moved to {} ({})", to.as_str(), event.as_str())
        }
        SimEventKind::Activated => "activated (moved to activeQ by a plugin)".into(),
        SimEventKind::Gated { plugin, message } => format!("gated by {plugin}: {message}"),
    }
}

/// The final state of a pod, in words.
pub fn describe_placement(p: &Placement) -> String {
    match p {
        Placement::Bound { node } => format!("bound to {node}"),
        Placement::Unschedulable {
            message,
            nominated_node,
            queue,
        } => {
            let mut notes = Vec::new();
            if let Some(n) = nominated_node {
                notes.push(format!("nominated to {n}"));
            }
            if *queue != QueueName::Unschedulable {
                notes.push(format!("in {}", queue.as_str()));
            }
            let notes = if notes.is_empty() {
                String::new()
            } else {
                format!(" ({})", notes.join(", "))
            };
            format!("unschedulable{notes}: {message}")
        }
        Placement::Gated { plugin, message } => format!("gated by {plugin}: {message}"),
        Placement::Waiting { node } => format!("still waiting at Permit on {node}"),
        Placement::Pending { queue } => format!("still pending in {}", queue.as_str()),
        Placement::Evicted { by } => format!("evicted by {by}"),
        Placement::Skipped { reason } => format!("skipped: {reason}"),
    }
}

/// The timeline: every event in order, then where each pod ended.
pub fn render_timeline(r: &SimulationResult) -> String {
    let mut out = String::new();
    put_line!(
        out,
        "simulation from {}: {} attempt{}, {} at {}",
        r.start,
        r.attempts.len(),
        crate::report::plural(r.attempts.len()),
        stop_text(&r.stop),
        at(r.end_ms)
    );
    let tw = r
        .events
        .iter()
        .map(|e| at(e.at_ms).len())
        .max()
        .unwrap_or(3)
        .max(4);
    let pw = r
        .events
        .iter()
        .map(|e| width(&cell(&e.pod)))
        .chain(r.pods.iter().map(|p| width(&cell(&p.pod))))
        .max()
        .unwrap_or(3)
        .max(3);
    let _ = writeln!(out);
    put_line!(out, "{}  {}  EVENT", pad("TIME", tw), pad("POD", pw));
    for e in &r.events {
        put_line!(
            out,
            "{}  {}  {}",
            pad(&at(e.at_ms), tw),
            pad(&cell(&e.pod), pw),
            cell(&describe(&e.kind))
        );
    }
    let _ = writeln!(out);
    put_line!(out, "{}  ATTEMPTS  RESULT", pad("POD", pw));
    for p in &r.pods {
        put_line!(
            out,
            "{}  {:<8}  {}",
            pad(&cell(&p.pod), pw),
            p.attempts,
            cell(&describe_placement(&p.placement))
        );
    }
    let bound = r
        .pods
        .iter()
        .filter(|p| matches!(p.placement, Placement::Bound { .. }))
        .count() as u32;
    put_line!(out, "\n{} of {} bound", plural(bound, "pod"), r.pods.len());
    out
}

/// `-o json`: the events (each with `at`, a Go duration since the start) and the
/// final placement of every pod, keyed by pod. With `traces`, every attempt's trace
/// in the fidelity schema too.
pub fn to_json(r: &SimulationResult, traces: bool) -> Value {
    let events: Vec<Value> = r
        .events
        .iter()
        .map(|e| {
            let mut v = serde_json::to_value(e).unwrap_or(Value::Null);
            if let Value::Object(m) = &mut v {
                m.insert("at".into(), Value::String(at(e.at_ms)));
            }
            v
        })
        .collect();
    let pods: BTreeMap<&str, Value> = r
        .pods
        .iter()
        .map(|p| {
            let mut v = serde_json::to_value(&p.placement).unwrap_or(Value::Null);
            if let Value::Object(m) = &mut v {
                m.insert("attempts".into(), json!(p.attempts));
            }
            (p.pod.as_str(), v)
        })
        .collect();
    let mut out = json!({
        "start": r.start.to_string(),
        "end": at(r.end_ms),
        "end_ms": r.end_ms,
        "stop": r.stop,
        "attempts": r.attempts.len(),
        "events": events,
        "pods": pods,
    });
    if traces && let Value::Object(m) = &mut out {
        let t: Vec<Value> = r
            .attempts
            .iter()
            .map(|a| {
                json!({
                    "pod": a.pod,
                    "at": at(a.at_ms),
                    "profile": a.profile,
                    "outcome": a.outcome,
                    "trace": a.trace.as_ref().map(crate::render::json::to_json),
                })
            })
            .collect();
        m.insert("traces".into(), Value::Array(t));
    }
    out
}

/// A pod column's cell: escaped as the whole text will be, then capped, so the
/// column's width is what the terminal shows.
fn cell(s: &str) -> String {
    clip(&super::escape::terminal_safe(s), CELL_MAX).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::queue::ClusterEvent;
    use crate::engine::scheduler::{PodResult, SimEvent, WaitInfo};
    use k8s_openapi::jiff::Timestamp;

    fn result() -> SimulationResult {
        let ev = |seq, at_ms, pod: &str, kind| SimEvent {
            seq,
            at_ms,
            pod: pod.into(),
            kind,
        };
        SimulationResult {
            start: Timestamp::new(1_767_225_600, 0).unwrap(),
            end_ms: 60_000,
            stop: StopReason::Settled,
            events: vec![
                ev(
                    0,
                    0,
                    "ns/a",
                    SimEventKind::Queued {
                        queue: QueueName::Active,
                    },
                ),
                ev(
                    1,
                    0,
                    "ns/a",
                    SimEventKind::Waiting {
                        node: "n1".into(),
                        waits: vec![WaitInfo {
                            plugin: "Coscheduling".into(),
                            timeout: "1m0s".into(),
                            deadline_ms: 60_000,
                        }],
                    },
                ),
                ev(
                    2,
                    60_000,
                    "ns/a",
                    SimEventKind::Failed {
                        message: "0/1 nodes are available: 1 x.".into(),
                        plugins: vec!["Coscheduling".into()],
                        queue: QueueName::Unschedulable,
                    },
                ),
                ev(
                    3,
                    60_000,
                    "ns/b",
                    SimEventKind::Moved {
                        to: QueueName::Backoff,
                        event: ClusterEvent::AssignedPodDelete,
                    },
                ),
            ],
            attempts: Vec::new(),
            pods: vec![
                PodResult {
                    pod: "ns/a".into(),
                    attempts: 1,
                    placement: Placement::Unschedulable {
                        message: "0/1 nodes are available: 1 x.".into(),
                        nominated_node: None,
                        queue: QueueName::Unschedulable,
                    },
                },
                PodResult {
                    pod: "ns/b".into(),
                    attempts: 2,
                    placement: Placement::Bound { node: "n2".into() },
                },
            ],
        }
    }

    #[test]
    fn timeline_text() {
        let want = "\
simulation from 2026-01-01T00:00:00Z: 0 attempts, settled at +1m0s

TIME   POD   EVENT
+0s    ns/a  queued in activeQ
+0s    ns/a  waiting at Permit on n1: Coscheduling up to 1m0s (until +1m0s)
+1m0s  ns/a  failed (rejected by Coscheduling) → unschedulablePods: 0/1 nodes are available: 1 x.
+1m0s  ns/b  moved to backoffQ (AssignedPodDelete)

POD   ATTEMPTS  RESULT
ns/a  1         unschedulable: 0/1 nodes are available: 1 x.
ns/b  2         bound to n2

1 pod of 2 bound
";
        assert_eq!(render_timeline(&result()), want);
    }

    #[test]
    fn json_has_events_with_times_and_placements_by_pod() {
        let j = to_json(&result(), false);
        assert_eq!(j["end"], "+1m0s");
        assert_eq!(j["stop"], json!({"kind": "settled"}));
        assert_eq!(
            j["events"][1],
            json!({"seq": 1, "at_ms": 0, "at": "+0s", "pod": "ns/a", "kind": "waiting", "node": "n1",
                   "waits": [{"plugin": "Coscheduling", "timeout": "1m0s", "deadline_ms": 60000}]})
        );
        assert_eq!(
            j["pods"]["ns/b"],
            json!({"kind": "bound", "node": "n2", "attempts": 2})
        );
        assert_eq!(j["pods"]["ns/a"]["queue"], "unschedulable");
        assert!(j.get("traces").is_none());
        assert_eq!(to_json(&result(), true)["traces"], json!([]));
    }
}
