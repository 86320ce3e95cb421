//! The acting scheduler (`--act`) against the test API server on 127.0.0.1: a gang
//! waiting at Permit bound through `pods/binding` after Allow, a Permit timeout
//! written back as `PodScheduled=False` plus a `FailedScheduling` Event, the Lease
//! keeping a second instance out, and no write at all from the read-only source.
//! The engine's clock is injected (timestamps passed in); every wait is bounded.

mod support {
    pub mod fake_api;
}

use std::time::Duration;

use k8s_openapi::jiff::Timestamp;
use schedscope::config::SchedulerConfig;
use schedscope::source::act::{self, ActError, ActOptions, Actor, Write};
use schedscope::source::live::{self, LiveOptions};
use serde_json::{Value, json};
use support::fake_api::FakeApi;

const WAIT: Duration = Duration::from_secs(30);

fn node(name: &str) -> Value {
    json!({"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
           "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                      "capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}}})
}

fn pod(name: &str, scheduler: &str, group: Option<&str>) -> Value {
    let mut p = json!({"metadata": {"name": name, "namespace": "default", "uid": format!("uid-{name}"),
                                   "creationTimestamp": "2026-01-10T09:00:00Z", "labels": {}},
                      "spec": {"schedulerName": scheduler, "priority": 0,
                               "containers": [{"name": "c", "image": "nginx",
                               "resources": {"requests": {"cpu": "1"}}}]},
                      "status": {"phase": "Pending"}});
    if let Some(g) = group {
        p["metadata"]["labels"]["scheduling.x-k8s.io/pod-group"] = json!(g);
    }
    p
}

fn config() -> SchedulerConfig {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/coscheduling-config.yaml"
    ))
    .expect("config");
    let text = text.replace(
        "schedulerName: default-scheduler",
        "schedulerName: schedscope",
    );
    SchedulerConfig::from_str(&text, "coscheduling-config.yaml").expect("valid config")
}

/// Two nodes, a gang of three (minMember 3) for schedscope, one pod for another
/// scheduler.
async fn cluster() -> std::sync::Arc<FakeApi> {
    let api = FakeApi::start().await;
    api.add_resource(
        "podgroups",
        "scheduling.x-k8s.io/v1alpha1",
        "PodGroup",
        true,
    );
    api.apply("namespaces", json!({"metadata": {"name": "default"}}));
    api.apply("nodes", node("n1"));
    api.apply("nodes", node("n2"));
    api.apply(
        "podgroups",
        json!({"metadata": {"name": "g", "namespace": "default",
                            "creationTimestamp": "2026-01-10T09:00:00Z"},
               "spec": {"minMember": 3}}),
    );
    for i in 0..3 {
        api.apply("pods", pod(&format!("w{i}"), "schedscope", Some("g")));
    }
    api.apply("pods", pod("other", "default-scheduler", None));
    api
}

fn t0() -> Timestamp {
    "2026-01-10T10:00:00Z".parse().expect("ts")
}

async fn actor(api: &FakeApi) -> (Actor, ActOptions) {
    let st = live::load_once(api.client(), &LiveOptions::default(), WAIT)
        .await
        .expect("live list");
    let opts = ActOptions::new("schedscope", "kube-system");
    let actor = Actor::new(&st.cluster, config(), opts.clone(), t0()).expect("actor");
    (actor, opts)
}

fn binds(ws: &[Write]) -> Vec<(String, String)> {
    ws.iter()
        .filter_map(|w| match w {
            Write::Bind { name, node, .. } => Some((name.clone(), node.clone())),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn gang_waits_then_binds_through_the_api_after_allow() {
    let api = cluster().await;
    // Make the gang one short: w2 cannot fit anywhere, so w0 and w1 wait.
    let mut big = pod("w2", "schedscope", Some("g"));
    big["spec"]["containers"][0]["resources"]["requests"]["cpu"] = json!("64");
    api.apply("pods", big);
    let (mut actor, opts) = actor(&api).await;
    let client = api.client();

    let ws = actor.step(t0());
    assert!(
        binds(&ws).is_empty(),
        "nothing binds while the gang waits: {ws:?}"
    );
    let waiting = actor.simulator().waiting();
    let keys: Vec<&str> = waiting.iter().map(|w| w.pod.as_str()).collect();
    assert_eq!(keys, ["default/w0", "default/w1"]);
    // Live countdown: wall-clock deadlines, 60 s (permitWaitingTimeSeconds) from now.
    let later = t0() + Duration::from_secs(20);
    actor.step(later);
    let left = actor.simulator().waiting()[0].remaining(later);
    assert_eq!(left, Some(Duration::from_secs(40)));
    // The pod of another scheduler is never touched.
    assert!(actor.simulator().cluster().pod("default/other").is_none());

    let mut ws = actor.allow("default/w0");
    ws.extend(actor.allow("default/w1"));
    let mut b = binds(&ws);
    b.sort();
    assert_eq!(b.len(), 2, "{ws:?}");
    assert_eq!(b[0].0, "w0");
    assert_eq!(b[1].0, "w1");
    for w in &ws {
        if matches!(w, Write::Bind { .. }) {
            act::perform(&client, &opts, w, later).await.expect("bind");
        }
    }
    let pods = api.objects("pods");
    for (name, node) in &b {
        assert_eq!(
            pods[&format!("default/{name}")]["spec"]["nodeName"],
            json!(node)
        );
    }
    assert!(pods["default/other"]["spec"]["nodeName"].is_null());
    let writes = api.writes();
    assert!(
        writes
            .iter()
            .any(|(m, p)| m == "POST" && p == "/api/v1/namespaces/default/pods/w0/binding"),
        "{writes:?}"
    );
}

#[tokio::test]
async fn permit_timeout_writes_condition_and_event() {
    let api = cluster().await;
    let mut big = pod("w2", "schedscope", Some("g"));
    big["spec"]["containers"][0]["resources"]["requests"]["cpu"] = json!("64");
    api.apply("pods", big);
    let (mut actor, opts) = actor(&api).await;
    let client = api.client();
    // w2's own Filter failure is written at once.
    let first = actor.step(t0());
    assert!(
        first
            .iter()
            .any(|w| matches!(w, Write::Unschedulable { name, .. } if name == "w2")),
        "{first:?}"
    );
    let at = t0() + Duration::from_secs(61);
    let ws = actor.step(at);
    assert!(binds(&ws).is_empty());
    let failed: Vec<&Write> = ws
        .iter()
        .filter(|w| matches!(w, Write::Unschedulable { name, .. } if name == "w0"))
        .collect();
    assert_eq!(failed.len(), 1, "{ws:?}");
    let Write::Unschedulable { message, .. } = failed[0] else {
        unreachable!()
    };
    assert!(message.contains("timeout"), "{message}");
    act::perform(&client, &opts, failed[0], at)
        .await
        .expect("status + event");

    let w0 = &api.objects("pods")["default/w0"];
    assert!(w0["spec"]["nodeName"].is_null(), "still pending");
    let conds = w0["status"]["conditions"].as_array().expect("conditions");
    let c = conds
        .iter()
        .find(|c| c["type"] == "PodScheduled")
        .expect("PodScheduled");
    assert_eq!(c["status"], "False");
    assert_eq!(c["reason"], "Unschedulable");
    assert_eq!(c["message"], json!(message));
    let events = api.objects("events");
    let e = events
        .values()
        .find(|e| e["involvedObject"]["name"] == "w0")
        .expect("event");
    assert_eq!(e["reason"], "FailedScheduling");
    assert_eq!(e["type"], "Warning");
    assert_eq!(e["reportingComponent"], "schedscope");
    assert_eq!(e["message"], json!(message));
}

#[tokio::test]
async fn reject_leaves_the_pod_pending_with_a_failure() {
    let api = cluster().await;
    let mut big = pod("w2", "schedscope", Some("g"));
    big["spec"]["containers"][0]["resources"]["requests"]["cpu"] = json!("64");
    api.apply("pods", big);
    let (mut actor, _) = actor(&api).await;
    actor.step(t0());
    let ws = actor.reject("default/w0", "rejected by the operator");
    assert!(binds(&ws).is_empty());
    assert!(
        ws.iter()
            .any(|w| matches!(w, Write::Unschedulable { name, .. } if name == "w0")),
        "{ws:?}"
    );
}

#[tokio::test]
async fn lease_keeps_a_second_instance_out() {
    let api = FakeApi::start().await;
    let client = api.client();
    let mut a = ActOptions::new("schedscope", "kube-system");
    a.identity = "a".into();
    let mut b = a.clone();
    b.identity = "b".into();
    act::acquire_lease(&client, &a, t0())
        .await
        .expect("a acquires");
    let held = act::acquire_lease(&client, &b, t0() + Duration::from_secs(1)).await;
    match held {
        Err(e @ ActError::LeaseHeld { .. }) => {
            let msg = e.to_string();
            assert!(
                msg.contains("\"a\"") && msg.contains("refusing to act"),
                "{msg}"
            );
        }
        other => panic!("expected LeaseHeld, got {other:?}"),
    }
    // The holder renews; the other is still refused within the duration.
    act::acquire_lease(&client, &a, t0() + Duration::from_secs(10))
        .await
        .expect("a renews");
    assert!(
        act::acquire_lease(&client, &b, t0() + Duration::from_secs(20))
            .await
            .is_err()
    );
    // A lease not renewed for its duration is taken over.
    act::acquire_lease(&client, &b, t0() + Duration::from_secs(26))
        .await
        .expect("b takes over an expired lease");
    let lease = &api.objects("leases")["kube-system/schedscope"];
    assert_eq!(lease["spec"]["holderIdentity"], "b");
    assert_eq!(lease["spec"]["leaseTransitions"], 1);
}

#[tokio::test]
async fn the_read_only_source_never_writes() {
    let api = cluster().await;
    let st = live::load_once(api.client(), &LiveOptions::default(), WAIT)
        .await
        .expect("list");
    assert!(st.cluster.pod("default/w0").is_some());
    let (tx, rx) = std::sync::mpsc::channel();
    let task = tokio::spawn(live::run(api.client(), LiveOptions::default(), tx));
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        if let Ok(u) = rx.try_recv()
            && u.cluster.pod("default/w0").is_some()
        {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "no update");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    task.abort();
    assert!(api.requests() > 0);
    assert_eq!(api.writes(), Vec::<(String, String)>::new());
}

/// The whole loop: Lease, live watch, engine, writes. A complete gang binds
/// without an operator, all three members through `pods/binding`.
#[tokio::test]
async fn acting_loop_binds_a_complete_gang() {
    let api = cluster().await;
    let opts = ActOptions::new("schedscope", "kube-system");
    let done = {
        let api = api.clone();
        move || {
            let pods = api.objects("pods");
            (0..3).all(|i| pods[&format!("default/w{i}")]["spec"]["nodeName"].is_string())
        }
    };
    let mut lines = Vec::new();
    let run = act::run(
        api.client(),
        LiveOptions::default(),
        config(),
        opts,
        |l| lines.push(l),
        done,
    );
    tokio::time::timeout(WAIT, run)
        .await
        .expect("bounded")
        .expect("acts");
    assert!(
        lines.iter().any(|l| l.starts_with("bound default/w2 to ")),
        "{lines:?}"
    );
    let pods = api.objects("pods");
    assert!(pods["default/other"]["spec"]["nodeName"].is_null());
    let lease = &api.objects("leases")["kube-system/schedscope"];
    assert!(lease["spec"]["holderIdentity"].is_string());
    // A second instance of the same name is refused by the loop itself.
    let mut other = ActOptions::new("schedscope", "kube-system");
    other.identity = "someone-else".into();
    let r = act::run(
        api.client(),
        LiveOptions::default(),
        config(),
        other,
        |_| {},
        || true,
    )
    .await;
    assert!(matches!(r, Err(ActError::LeaseHeld { .. })), "{r:?}");
}

/// The engine follows the live model: a bound pod deleted on the server frees its
/// node, and the pod that did not fit binds.
#[tokio::test]
async fn deleted_bound_pod_frees_room_for_a_waiting_one() {
    let api = FakeApi::start().await;
    api.add_resource(
        "podgroups",
        "scheduling.x-k8s.io/v1alpha1",
        "PodGroup",
        true,
    );
    api.apply("namespaces", json!({"metadata": {"name": "default"}}));
    api.apply("nodes", node("n1"));
    let mut hog = pod("hog", "default-scheduler", None);
    hog["spec"]["nodeName"] = json!("n1");
    hog["status"]["phase"] = json!("Running");
    hog["spec"]["containers"][0]["resources"]["requests"]["cpu"] = json!("4");
    api.apply("pods", hog);
    api.apply("pods", pod("p", "schedscope", None));
    let (mut actor, _) = actor(&api).await;
    let ws = actor.step(t0());
    assert!(
        ws.iter()
            .any(|w| matches!(w, Write::Unschedulable { name, .. } if name == "p")),
        "{ws:?}"
    );
    api.delete("pods", "default/hog");
    let st = live::load_once(api.client(), &LiveOptions::default(), WAIT)
        .await
        .expect("list");
    actor.observe(&st.cluster);
    let ws = actor.step(t0() + Duration::from_secs(1));
    assert_eq!(binds(&ws), [("p".to_string(), "n1".to_string())], "{ws:?}");
}
