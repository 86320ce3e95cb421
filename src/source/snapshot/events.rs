//! A snapshot's Events (core/v1 and events.k8s.io/v1): the FailedScheduling ones are
//! what the real scheduler said of a pending pod, kept beside the objects so that
//! its word can be set beside the replay; the others are skipped as before.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, Time};
use serde::Deserialize;

use super::decode::{Body, Decoded};
use crate::model::recorded::SchedulingEvent;

/// Both Event schemas' fields that say which pod, what and when (every one
/// optional: an Event is read for display only, and a malformed one is skipped).
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct WireEvent {
    metadata: WireMeta,
    reason: Option<String>,
    /// core/v1
    message: Option<String>,
    involved_object: Option<WireRef>,
    count: Option<i32>,
    last_timestamp: Option<Time>,
    /// events.k8s.io/v1
    note: Option<String>,
    regarding: Option<WireRef>,
    deprecated_count: Option<i32>,
    deprecated_last_timestamp: Option<Time>,
    /// Both.
    event_time: Option<MicroTime>,
    series: Option<WireSeries>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct WireMeta {
    creation_timestamp: Option<Time>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct WireRef {
    kind: Option<String>,
    namespace: Option<String>,
    name: Option<String>,
    uid: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct WireSeries {
    count: Option<i32>,
    last_observed_time: Option<MicroTime>,
}

/// The API versions an Event is read at.
pub(super) fn is_event(kind: &str, api_version: Option<&str>) -> bool {
    kind == "Event"
        && matches!(
            api_version,
            None | Some("v1" | "events.k8s.io/v1" | "events.k8s.io/v1beta1")
        )
}

/// A FailedScheduling event about a pod as `(namespace/name, event)`; any other
/// Event, or one that does not decode, is skipped.
pub(super) fn decode_event(body: &Body<'_>) -> Decoded {
    match body.decode::<WireEvent>().ok().and_then(scheduling_event) {
        Some((pod, ev)) => Decoded::Event(Box::new((pod, ev))),
        None => Decoded::Skip("Event".into()),
    }
}

fn scheduling_event(e: WireEvent) -> Option<(String, SchedulingEvent)> {
    if e.reason.as_deref() != Some("FailedScheduling") {
        return None;
    }
    let obj = e.involved_object.or(e.regarding)?;
    if obj.kind.as_deref() != Some("Pod") {
        return None;
    }
    let pod = format!(
        "{}/{}",
        obj.namespace.as_deref().unwrap_or("default"),
        obj.name.as_deref()?
    );
    let series = e.series.unwrap_or_default();
    // The newest time the event names, as the live source reads it.
    let last_seen = series
        .last_observed_time
        .map(|t| t.0)
        .or(e
            .last_timestamp
            .or(e.deprecated_last_timestamp)
            .map(|t| t.0))
        .or(e.event_time.map(|t| t.0))
        .or(e.metadata.creation_timestamp.map(|t| t.0));
    let ev = SchedulingEvent {
        message: e.message.or(e.note).unwrap_or_default(),
        count: series.count.or(e.count).or(e.deprecated_count).unwrap_or(1),
        last_seen,
        uid: obj.uid.unwrap_or_default(),
    };
    Some((pod, ev))
}
