use k8s_openapi::jiff::Timestamp;

use crate::source::SourceStatus;

use super::kinds::DRA_KINDS;
use super::state::{Backoff, Failure, KindSpec, from_status};
use super::*;

fn at(s: i64) -> Timestamp {
    Timestamp::from_second(1_000_000 + s).unwrap()
}

fn state() -> LiveState {
    let spec = |kind, resource: &str, optional| KindSpec {
        kind,
        resource: resource.into(),
        optional,
    };
    LiveState::new(
        [
            spec("Pod", "pods", false),
            spec("VolumeAttachment", "volumeattachments.storage.k8s.io", true),
        ],
        at(0),
    )
}

fn step(st: &mut LiveState, now: Timestamp, f: impl FnOnce(&mut LiveState)) {
    f(st);
    st.after_change(now);
}

fn listed(st: &mut LiveState, kind: &'static str, now: Timestamp) {
    step(st, now, |st| {
        st.list_started(kind, now);
        st.list_done(kind, now);
    });
}

/// The data is as old as the outage, however long the cluster was quiet
/// before it; "connected" comes back only with a complete list of every kind.
#[test]
fn reconnecting_counts_from_the_outage_and_ends_with_a_complete_list() {
    let mut st = state();
    assert_eq!(st.status(), SourceStatus::Connecting { error: None });
    listed(&mut st, "Pod", at(0));
    assert_eq!(st.status(), SourceStatus::Connecting { error: None });
    listed(&mut st, "VolumeAttachment", at(1));
    assert_eq!(st.status(), SourceStatus::Connected);

    // Quiet for 50 s, then the server goes away.
    let refused = "cannot reach the API server: connection refused".to_string();
    step(&mut st, at(51), |st| {
        st.failed("Pod", Failure::Retry(refused.clone()), at(51))
    });
    assert_eq!(
        st.status(),
        SourceStatus::Reconnecting {
            since: at(51),
            error: refused.clone()
        }
    );
    // Back: the relist runs, the error stays until it completes.
    step(&mut st, at(55), |st| st.list_started("Pod", at(55)));
    assert_eq!(
        st.status(),
        SourceStatus::Reconnecting {
            since: at(51),
            error: refused.clone()
        }
    );
    let pod = &st.health()[0];
    assert_eq!(
        pod.describe(at(57)),
        format!("listing again (2s); last error: {refused}")
    );
    step(&mut st, at(56), |st| {
        st.list_done("Pod", at(56));
    });
    assert_eq!(st.status(), SourceStatus::Connected);
}

/// A DRA kind is unreadable when forbidden and when not served (a 404): either
/// way pods with claims cannot be replayed. A state without DRA watchers never
/// claims to know the DRA objects.
#[test]
fn dra_kinds_not_served_are_unreadable() {
    assert!(!state().cluster.dra_objects_known);
    let spec = |kind| KindSpec {
        kind,
        resource: format!("{}s.resource.k8s.io", kind.to_lowercase()),
        optional: true,
    };
    let mut st = LiveState::new(DRA_KINDS.map(spec), at(0));
    assert!(st.cluster.dra_objects_known);
    for k in DRA_KINDS {
        listed(&mut st, k, at(1));
    }
    assert!(st.cluster.dra_objects_known && st.cluster.unreadable_kinds.is_empty());
    let error = "the server could not find the requested resource".to_string();
    step(&mut st, at(2), |st| {
        st.failed("ResourceSlice", Failure::NotServed(error.clone()), at(2))
    });
    assert_eq!(st.status(), SourceStatus::Connected);
    assert!(!st.cluster.dra_objects_known);
    assert_eq!(st.cluster.unreadable_kinds["ResourceSlice"], error);
    listed(&mut st, "ResourceSlice", at(3));
    assert!(st.cluster.dra_objects_known && st.cluster.unreadable_kinds.is_empty());
}

/// A 403 of an optional kind leaves it out and names it in the model; of a
/// required one, it is the error, and ends a one-shot load.
#[test]
fn forbidden_kinds() {
    let mut st = state();
    listed(&mut st, "Pod", at(0));
    let error = "cannot list volumeattachments.storage.k8s.io: forbidden: no".to_string();
    step(&mut st, at(1), |st| {
        st.failed(
            "VolumeAttachment",
            Failure::Forbidden {
                verb: "list",
                error: error.clone(),
            },
            at(1),
        )
    });
    assert_eq!(st.status(), SourceStatus::Connected);
    assert!(st.fatal().is_none());
    assert_eq!(st.cluster.unreadable_kinds["VolumeAttachment"], error);
    assert!(
        st.health()[1]
            .describe(at(2))
            .starts_with("not readable: plugins that need it are marked")
    );
    // Granted later and listed: no longer unreadable.
    listed(&mut st, "VolumeAttachment", at(3));
    assert!(st.cluster.unreadable_kinds.is_empty());

    let mut st = state();
    let error = "cannot list pods: forbidden: no".to_string();
    step(&mut st, at(1), |st| {
        st.failed(
            "Pod",
            Failure::Forbidden {
                verb: "list",
                error: error.clone(),
            },
            at(1),
        )
    });
    assert_eq!(
        st.status(),
        SourceStatus::Connecting {
            error: Some(error.clone())
        }
    );
    let fatal = st.fatal().expect("fatal").to_string();
    assert!(fatal.starts_with(&error), "{fatal}");
    assert!(
        fatal.contains("needs get, list and watch on pods"),
        "{fatal}"
    );
}

#[test]
fn backoff_doubles_to_its_cap_with_jitter_and_resets() {
    let mut b = Backoff::new();
    let mut bound = BACKOFF_FIRST;
    for _ in 0..10 {
        let w = b.wait();
        assert!(
            w <= bound && w >= bound / 2,
            "{w:?} outside [{bound:?}/2, {bound:?}]"
        );
        bound = (bound * 2).min(BACKOFF_CAP);
    }
    assert_eq!(bound, BACKOFF_CAP);
    b.reset();
    assert!(b.wait() <= BACKOFF_FIRST);
}

#[test]
fn statuses_in_one_line() {
    let status = kube::core::Status {
        code: 500,
        reason: "InternalError".into(),
        message: "etcd is sad".into(),
        ..Default::default()
    };
    let Failure::Retry(e) = from_status("list", "pods", &status) else {
        panic!()
    };
    assert_eq!(e, "cannot list pods: etcd is sad (InternalError, HTTP 500)");
    let forbidden = kube::core::Status {
        code: 403,
        message: "x is forbidden".into(),
        ..Default::default()
    };
    assert!(matches!(
        from_status("watch", "nodes", &forbidden),
        Failure::Forbidden { verb: "watch", error } if error == "cannot watch nodes: forbidden: x is forbidden (HTTP 403)"
    ));
    let gone = kube::core::Status {
        code: 410,
        ..Default::default()
    };
    assert!(matches!(
        from_status("watch", "nodes", &gone),
        Failure::Desync
    ));
    let not_found = kube::core::Status {
        code: 404,
        ..Default::default()
    };
    assert!(matches!(
        from_status("list", "pods", &not_found),
        Failure::NotServed(e) if e == "cannot list pods: the API server does not serve it: HTTP 404"
    ));
}
