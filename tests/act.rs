//! The acting scheduler (`--act`) against the test API server on 127.0.0.1: a gang
//! waiting at Permit bound through `pods/binding` after Allow, a Permit timeout
//! written back as `PodScheduled=False` plus a `FailedScheduling` Event, the Lease
//! keeping a second instance out, and no write at all from the read-only source.
//! The engine's clock is injected (timestamps passed in); every wait is bounded.

mod support {
    pub mod fake_api;
    pub mod pty;
}

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::jiff::Timestamp;
use schedscope::act::{self, ActError, ActOptions, Actor, Write, Writer};
use schedscope::engine::SchedulerConfig;
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
                                   "generation": 1,
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

/// Make the gang one short: w2 cannot fit anywhere, so w0 and w1 wait at Permit.
fn gang_one_short(api: &FakeApi) {
    let mut big = pod("w2", "schedscope", Some("g"));
    big["spec"]["containers"][0]["resources"]["requests"]["cpu"] = json!("64");
    api.apply("pods", big);
}

fn t0() -> Timestamp {
    "2026-01-10T10:00:00Z".parse().expect("ts")
}

async fn actor(api: &FakeApi) -> (Actor, ActOptions) {
    let st = live::load_once(api.client(), &LiveOptions::default(), WAIT)
        .await
        .expect("live list");
    let opts = ActOptions::new("schedscope", "kube-system");
    let actor = Actor::new(Arc::new(st.cluster), config(), opts.clone(), t0()).expect("actor");
    (actor, opts)
}

fn binds(ws: &[Write]) -> Vec<(String, String)> {
    ws.iter()
        .filter_map(|w| match w {
            Write::Bind { pod, node, .. } => Some((pod.name.clone(), node.clone())),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn gang_waits_then_binds_through_the_api_after_allow() {
    let api = cluster().await;
    gang_one_short(&api);
    let (mut actor, opts) = actor(&api).await;
    let client = api.client();

    let ws = actor.step(t0());
    assert!(
        binds(&ws).is_empty(),
        "nothing binds while the gang waits: {ws:?}"
    );
    let waiting = actor.scheduler().waiting();
    let keys: Vec<&str> = waiting.iter().map(|w| w.pod.as_str()).collect();
    assert_eq!(keys, ["default/w0", "default/w1"]);
    // Live countdown: wall-clock deadlines, 60 s (permitWaitingTimeSeconds) from now.
    let later = t0() + Duration::from_secs(20);
    actor.step(later);
    let left = actor.scheduler().waiting()[0].remaining(later);
    assert_eq!(left, Some(Duration::from_secs(40)));
    // The pod of another scheduler is never touched.
    assert!(actor.scheduler().cluster().pod("default/other").is_none());

    let (found, mut ws) = actor.allow("default/w0", None);
    assert!(found);
    ws.extend(actor.allow("default/w1", None).1);
    let mut b = binds(&ws);
    b.sort();
    assert_eq!(b.len(), 2, "{ws:?}");
    assert_eq!(b[0].0, "w0");
    assert_eq!(b[1].0, "w1");
    let mut writer = Writer::new(client, opts);
    for w in &ws {
        if matches!(w, Write::Bind { .. }) {
            writer.perform(w, later).await.expect("bind");
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
    gang_one_short(&api);
    let (mut actor, opts) = actor(&api).await;
    let client = api.client();
    // w2's own Filter failure is written at once.
    let first = actor.step(t0());
    assert!(
        first
            .iter()
            .any(|w| matches!(w, Write::Unschedulable { pod, .. } if pod.name == "w2")),
        "{first:?}"
    );
    let at = t0() + Duration::from_secs(61);
    let ws = actor.step(at);
    assert!(binds(&ws).is_empty());
    let failed: Vec<&Write> = ws
        .iter()
        .filter(|w| matches!(w, Write::Unschedulable { pod, .. } if pod.name == "w0"))
        .collect();
    assert_eq!(failed.len(), 1, "{ws:?}");
    let Write::Unschedulable { message, .. } = failed[0] else {
        unreachable!()
    };
    assert!(message.contains("timeout"), "{message}");
    Writer::new(client, opts)
        .perform(failed[0], at)
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
    // The pod's metadata.generation, as PodObservedGenerationTracking (GA in 1.35) has it.
    assert_eq!(c["observedGeneration"], 1);
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
    gang_one_short(&api);
    let (mut actor, _) = actor(&api).await;
    actor.step(t0());
    let (found, ws) = actor.reject("default/w0", "rejected by the operator");
    assert!(found);
    assert!(binds(&ws).is_empty());
    assert!(
        ws.iter()
            .any(|w| matches!(w, Write::Unschedulable { pod, .. } if pod.name == "w0")),
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
    // A clean stop gives the Lease back.
    let lease = &api.objects("leases")["kube-system/schedscope"];
    assert!(lease["spec"]["holderIdentity"].is_null(), "{lease}");
    assert_eq!(lease["spec"]["leaseDurationSeconds"], 1);
    // While another instance holds it, the loop itself refuses to act.
    let mut other = ActOptions::new("schedscope", "kube-system");
    other.identity = "someone-else".into();
    act::acquire_lease(&api.client(), &other, Timestamp::now())
        .await
        .expect("other takes the released Lease");
    let r = act::run(
        api.client(),
        LiveOptions::default(),
        config(),
        ActOptions::new("schedscope", "kube-system"),
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
            .any(|w| matches!(w, Write::Unschedulable { pod, .. } if pod.name == "p")),
        "{ws:?}"
    );
    api.delete("pods", "default/hog");
    let st = live::load_once(api.client(), &LiveOptions::default(), WAIT)
        .await
        .expect("list");
    actor.observe(Arc::new(st.cluster));
    let ws = actor.step(t0() + Duration::from_secs(1));
    assert_eq!(binds(&ws), [("p".to_string(), "n1".to_string())], "{ws:?}");
}

/// Wait (bounded) until `f` holds, polling.
async fn until(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + WAIT;
    while !f() {
        assert!(std::time::Instant::now() < deadline, "timed out: {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The inspector's path: the session publishes the waiting gang (countdowns from
/// wall-clock deadlines) and the model with the assumed pods on their nodes; the
/// Waiting tab's Allow reaches the engine and both pods are bound through the API.
#[tokio::test]
async fn inspector_allow_binds_a_waiting_gang_through_the_session() {
    use schedscope::tui::PermitGate;
    use schedscope::tui::acting::ActWaiting;
    let api = cluster().await;
    gang_one_short(&api);
    let (handle, inputs) = act::session::channel();
    let reports = Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = reports.clone();
    let session = tokio::spawn(act::run_session(
        api.client(),
        LiveOptions::default(),
        config(),
        ActOptions::new("schedscope", "kube-system"),
        inputs,
        move |r| sink.lock().expect("reports").push(r),
        || false,
    ));
    let mut waiting = ActWaiting::new(handle);
    until("two pods waiting at Permit", || waiting.list().len() == 2).await;
    let list = waiting.list();
    assert_eq!(list[0].pod, "default/w0");
    assert_eq!(list[1].pod, "default/w1");
    let left = list[0].pending[0].deadline.duration_since(Timestamp::now());
    assert!(
        left.as_secs() > 50 && left.as_secs() <= 60,
        "a live countdown from 60 s: {left:?}"
    );
    // What the inspector shows: the waiting pods assumed on their nodes, while the
    // server still has them pending.
    until("a model with the assumed pods", || {
        reports.lock().expect("reports").iter().any(|r| {
            matches!(r, act::ActEvent::Data(u)
                if u.cluster.pod("default/w0").is_some_and(|p| p.is_bound()))
        })
    })
    .await;
    assert!(api.objects("pods")["default/w0"]["spec"]["nodeName"].is_null());
    assert!(api.writes().iter().all(|(_, p)| !p.ends_with("/binding")));

    for w in &list {
        let plugins: Vec<String> = w.pending.iter().map(|p| p.plugin.clone()).collect();
        let mut last = None;
        for p in &plugins {
            last = waiting.allow(&w.pod, p);
        }
        assert!(
            matches!(last, Some(schedscope::tui::WaitingEvent::Allowed { .. })),
            "{last:?}"
        );
    }
    until("both bound on the server", || {
        let pods = api.objects("pods");
        pods["default/w0"]["spec"]["nodeName"].is_string()
            && pods["default/w1"]["spec"]["nodeName"].is_string()
    })
    .await;
    until("the waiting list emptied", || waiting.list().is_empty()).await;
    let lines: Vec<String> = reports
        .lock()
        .expect("reports")
        .iter()
        .filter_map(|r| match r {
            act::ActEvent::Line(l, _) => Some(l.clone()),
            _ => None,
        })
        .collect();
    assert!(
        lines
            .iter()
            .any(|l| l == "default/w0: allowed by the operator"),
        "{lines:?}"
    );
    assert!(lines.iter().any(|l| l.starts_with("bound default/w1 to ")));
    // Dropping the inspector's handle ends the session and gives the Lease back.
    drop(waiting);
    tokio::time::timeout(WAIT, session)
        .await
        .expect("stops")
        .expect("joins")
        .expect("clean stop");
    let lease = &api.objects("leases")["kube-system/schedscope"];
    assert!(lease["spec"]["holderIdentity"].is_null(), "{lease}");
    let mut next = ActOptions::new("schedscope", "kube-system");
    next.identity = "next".into();
    act::acquire_lease(&api.client(), &next, Timestamp::now())
        .await
        .expect("the next instance takes over at once");
    assert_writes_granted(&api);
}

/// The engine follows node changes: a pod too big for every node binds once a big
/// enough node joins.
#[tokio::test]
async fn a_node_added_later_takes_the_pod_that_did_not_fit() {
    let api = FakeApi::start().await;
    api.apply("namespaces", json!({"metadata": {"name": "default"}}));
    api.apply("nodes", node("n1"));
    let mut p = pod("p", "schedscope", None);
    p["spec"]["containers"][0]["resources"]["requests"]["cpu"] = json!("6");
    api.apply("pods", p);
    let (mut actor, _) = actor(&api).await;
    let ws = actor.step(t0());
    assert!(binds(&ws).is_empty(), "{ws:?}");
    let mut big = node("n-big");
    big["status"]["allocatable"]["cpu"] = json!("16");
    big["status"]["capacity"]["cpu"] = json!("16");
    api.apply("nodes", big);
    let st = live::load_once(api.client(), &LiveOptions::default(), WAIT)
        .await
        .expect("list");
    actor.observe(Arc::new(st.cluster));
    let ws = actor.step(t0() + Duration::from_secs(1));
    assert_eq!(
        binds(&ws),
        [("p".to_string(), "n-big".to_string())],
        "{ws:?}"
    );
}

/// A gang member deleted on the server while waiting at Permit is rejected; its
/// sibling is rejected with it and nothing is bound.
#[tokio::test]
async fn a_waiting_pod_deleted_on_the_server_leaves_the_engine() {
    let api = cluster().await;
    gang_one_short(&api);
    let (mut actor, _) = actor(&api).await;
    actor.step(t0());
    assert_eq!(actor.waiting().len(), 2);
    api.delete("pods", "default/w0");
    let st = live::load_once(api.client(), &LiveOptions::default(), WAIT)
        .await
        .expect("list");
    actor.observe(Arc::new(st.cluster));
    let ws = actor.step(t0() + Duration::from_secs(1));
    assert!(binds(&ws).is_empty(), "{ws:?}");
    assert!(actor.scheduler().cluster().pod("default/w0").is_none());
    let left: Vec<String> = actor.waiting().into_iter().map(|w| w.pod).collect();
    assert!(!left.contains(&"default/w0".to_string()), "{left:?}");
}

/// A binding the server refuses (someone bound the pod first) is taken back: the
/// engine follows the server's placement and binds nothing more.
#[tokio::test]
async fn a_refused_binding_is_taken_back() {
    let api = FakeApi::start().await;
    api.apply("namespaces", json!({"metadata": {"name": "default"}}));
    api.apply("nodes", node("n1"));
    api.apply("nodes", node("n2"));
    api.apply("pods", pod("p", "schedscope", None));
    let (mut actor, opts) = actor(&api).await;
    let ws = actor.step(t0());
    let [(_, node)] = binds(&ws).try_into().expect("one binding");
    // Meanwhile another scheduler bound it elsewhere.
    let other = if node == "n1" { "n2" } else { "n1" };
    let mut p = pod("p", "schedscope", None);
    p["spec"]["nodeName"] = json!(other);
    api.apply("pods", p);
    let mut writer = Writer::new(api.client(), opts);
    let bind = ws
        .iter()
        .find(|w| matches!(w, Write::Bind { .. }))
        .expect("bind");
    let err = writer.perform(bind, t0()).await.expect_err("409");
    actor.refused(bind, &err.to_string());
    let sim_node = |a: &Actor| {
        a.scheduler()
            .cluster()
            .pod("default/p")
            .and_then(|p| p.node_name.clone())
    };
    assert_eq!(sim_node(&actor), None, "taken back");
    let st = live::load_once(api.client(), &LiveOptions::default(), WAIT)
        .await
        .expect("list");
    actor.observe(Arc::new(st.cluster));
    assert_eq!(sim_node(&actor).as_deref(), Some(other));
    let ws = actor.step(t0() + Duration::from_secs(20));
    assert!(binds(&ws).is_empty(), "{ws:?}");
}

/// The same failure repeated is one `events.k8s.io/v1` Event with a series, as
/// client-go's event broadcaster records it: the first repeat writes `series`
/// (count 2), later ones are counted and written when the series ends (six quiet
/// minutes), after which a repeat starts a new Event. The condition carries the
/// pod's generation as its `observedGeneration`.
#[tokio::test]
async fn a_repeated_failure_is_a_series_on_one_event() {
    let api = cluster().await;
    let opts = ActOptions::new("schedscope", "kube-system");
    let mut writer = Writer::new(api.client(), opts);
    let w = Write::Unschedulable {
        pod: act::PodRef {
            namespace: "default".into(),
            name: "w0".into(),
            uid: "uid-w0".into(),
            generation: 3,
        },
        message: "0/2 nodes are available: 2 Insufficient cpu.".into(),
        nominated_node: None,
    };
    let at = |s: u64| t0() + Duration::from_secs(s);
    writer.perform(&w, at(0)).await.expect("first");
    writer.perform(&w, at(5)).await.expect("second");
    writer.perform(&w, at(9)).await.expect("third");
    let mine = |api: &FakeApi| -> Vec<Value> {
        api.objects("events")
            .into_values()
            .filter(|e| e["regarding"]["name"] == "w0")
            .collect()
    };
    let events = mine(&api);
    assert_eq!(events.len(), 1, "{events:?}");
    let e = &events[0];
    assert_eq!(e["reason"], "FailedScheduling");
    assert_eq!(e["type"], "Warning");
    assert_eq!(e["action"], "Scheduling");
    assert_eq!(e["note"], "0/2 nodes are available: 2 Insufficient cpu.");
    assert_eq!(e["regarding"]["uid"], "uid-w0");
    assert_eq!(e["reportingController"], "schedscope");
    assert!(
        e["reportingInstance"]
            .as_str()
            .is_some_and(|i| i.starts_with("schedscope-")),
        "{e}"
    );
    assert_eq!(e["eventTime"], "2026-01-10T10:00:00.000000Z");
    assert_eq!(e["series"]["count"], 2, "the third is only counted: {e}");
    assert_eq!(
        e["series"]["lastObservedTime"],
        "2026-01-10T10:00:05.000000Z"
    );
    assert!(e.get("count").is_none(), "no core/v1 count: {e}");
    let cond = &api.objects("pods")["default/w0"]["status"]["conditions"][0];
    assert_eq!(cond["type"], "PodScheduled");
    assert_eq!(cond["observedGeneration"], 3);

    // Still within six minutes of the last repeat: nothing to write.
    assert!(writer.flush(at(9 + 300)).await.is_empty());
    assert_eq!(mine(&api)[0]["series"]["count"], 2);
    // Six quiet minutes end the series with its final count.
    assert!(writer.flush(at(9 + 360)).await.is_empty());
    let events = mine(&api);
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["series"]["count"], 3);
    assert_eq!(
        events[0]["series"]["lastObservedTime"],
        "2026-01-10T10:00:09.000000Z"
    );
    // A repeat after that is a new Event.
    writer.perform(&w, at(400)).await.expect("later");
    assert_eq!(mine(&api).len(), 2);
    assert_writes_granted(&api);
}

/// Preemption as kube-scheduler does it: the victim gets DisruptionTarget and is
/// deleted, the preemptor is nominated; once the deletion lands it binds there.
#[tokio::test]
async fn preemption_evicts_the_victim_through_the_api_then_binds() {
    let api = FakeApi::start().await;
    api.apply("namespaces", json!({"metadata": {"name": "default"}}));
    api.apply("nodes", node("n1"));
    let mut low = pod("low", "default-scheduler", None);
    low["spec"]["nodeName"] = json!("n1");
    low["status"]["phase"] = json!("Running");
    low["spec"]["containers"][0]["resources"]["requests"]["cpu"] = json!("4");
    api.apply("pods", low);
    let mut high = pod("high", "schedscope", None);
    high["spec"]["priority"] = json!(1000);
    high["spec"]["containers"][0]["resources"]["requests"]["cpu"] = json!("2");
    api.apply("pods", high);
    let (mut actor, opts) = actor(&api).await;
    let ws = actor.step(t0());
    assert!(
        ws.iter()
            .any(|w| matches!(w, Write::Evict { victim, .. } if victim.name == "low")),
        "{ws:?}"
    );
    assert!(
        ws.iter().any(
            |w| matches!(w, Write::Unschedulable { pod, nominated_node: Some(n), .. }
            if pod.name == "high" && n == "n1")
        ),
        "{ws:?}"
    );
    assert!(
        binds(&ws).is_empty(),
        "the preemptor waits until the victim's deletion lands: {ws:?}"
    );
    let mut writer = Writer::new(api.client(), opts);
    for w in &ws {
        writer.perform(w, t0()).await.expect("write");
    }
    let pods = api.objects("pods");
    assert!(!pods.contains_key("default/low"), "victim deleted");
    assert_eq!(pods["default/high"]["status"]["nominatedNodeName"], "n1");
    let events = api.objects("events");
    assert!(events.values().any(|e| e["reason"] == "Preempted"
        && e["involvedObject"]["name"] == "low"
        && e["message"] == "Preempted by pod uid-high on node n1"));
    let st = live::load_once(api.client(), &LiveOptions::default(), WAIT)
        .await
        .expect("list");
    actor.observe(Arc::new(st.cluster));
    let ws = actor.step(t0() + Duration::from_secs(2));
    assert_eq!(
        binds(&ws),
        [("high".to_string(), "n1".to_string())],
        "{ws:?}"
    );
    let bind = ws
        .iter()
        .find(|w| matches!(w, Write::Bind { .. }))
        .expect("bind");
    writer
        .perform(bind, t0() + Duration::from_secs(2))
        .await
        .expect("bind");
    assert_eq!(writer.take_failed_events(), Vec::<String>::new());
    // The binding is recorded as kube-scheduler records it.
    let events = api.objects("events");
    let scheduled: Vec<&Value> = events
        .values()
        .filter(|e| e["reason"] == "Scheduled")
        .collect();
    assert_eq!(scheduled.len(), 1, "{events:?}");
    let e = scheduled[0];
    assert_eq!(e["note"], "Successfully assigned default/high to n1");
    assert_eq!(e["type"], "Normal");
    assert_eq!(e["action"], "Binding");
    assert_eq!(e["regarding"]["uid"], "uid-high");
    // The Preempted Event names the preemptor as its related object.
    let preempted = events
        .values()
        .find(|e| e["reason"] == "Preempted")
        .expect("Preempted");
    assert_eq!(preempted["action"], "Preempting");
    assert_eq!(preempted["related"]["uid"], "uid-high");
    assert_writes_granted(&api);
}

/// Every write the test server saw is granted by `deploy/rbac/act-role.yaml` (the
/// ClusterRole for pods and events, the Role for the Lease).
fn assert_writes_granted(api: &FakeApi) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/deploy/rbac/act-role.yaml");
    let text = std::fs::read_to_string(path).expect("role");
    let mut granted: Vec<(String, String, String)> = Vec::new();
    for doc in text.split("\n---") {
        let v: Value = serde_saphyr::from_str(doc).expect("yaml");
        if v["kind"] != "ClusterRole" && v["kind"] != "Role" {
            continue;
        }
        for rule in v["rules"].as_array().expect("rules") {
            for g in rule["apiGroups"].as_array().expect("groups") {
                for r in rule["resources"].as_array().expect("resources") {
                    for verb in rule["verbs"].as_array().expect("verbs") {
                        granted.push((
                            g.as_str().unwrap_or_default().into(),
                            r.as_str().unwrap_or_default().into(),
                            verb.as_str().unwrap_or_default().into(),
                        ));
                    }
                }
            }
        }
    }
    for (method, path) in api.writes() {
        let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
        let (group, rest) = match segs.as_slice() {
            ["api", "v1", rest @ ..] => ("", rest),
            ["apis", g, _, rest @ ..] => (*g, rest),
            _ => panic!("unexpected path {path}"),
        };
        let resource = match rest {
            ["namespaces", _, plural] | ["namespaces", _, plural, _] => plural.to_string(),
            ["namespaces", _, plural, _, sub] => format!("{plural}/{sub}"),
            _ => panic!("unexpected path {path}"),
        };
        let verb = match method.as_str() {
            "POST" => "create",
            "PATCH" => "patch",
            "PUT" => "update",
            "DELETE" => "delete",
            m => panic!("unexpected method {m}"),
        };
        assert!(
            granted
                .iter()
                .any(|(g, r, v)| g == group && r == &resource && v == verb),
            "{method} {path} ({group}/{resource} {verb}) is not granted by act-role.yaml"
        );
    }
}

/// End to end: `schedscope --act` in a pseudo-terminal against the test server. The
/// gang waits at Permit, the Waiting tab counts down, `a` allows each pod and both
/// are bound through the API; `q` quits, restores the terminal and releases the
/// Lease.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn act_in_the_inspector_end_to_end() {
    let api = cluster().await;
    gang_one_short(&api);
    let dir = std::env::temp_dir().join(format!("schedscope-act-e2e-{}", std::process::id()));
    let kc = api.write_kubeconfig(&dir);
    let cfg = dir.join("scheduler.yaml");
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/coscheduling-config.yaml"
    ))
    .expect("config")
    .replace(
        "schedulerName: default-scheduler",
        "schedulerName: schedscope",
    );
    std::fs::write(&cfg, text).expect("config file");
    let (kc, cfg) = (kc.display().to_string(), cfg.display().to_string());
    let watcher = api.clone();
    let status = tokio::task::spawn_blocking(move || {
        let mut s = support::pty::Session::start(&["--act", "--kubeconfig", &kc, "--config", &cfg]);
        s.wait_for("default/w1 waiting at Permit");
        s.keys("7");
        let screen = s.wait_for("2 pods waiting at Permit");
        assert!(screen.contains("default/w0"), "{screen}");
        s.keys("a");
        s.wait_for("1 pod waiting at Permit");
        s.keys("a");
        let deadline = std::time::Instant::now() + WAIT;
        loop {
            let pods = watcher.objects("pods");
            if pods["default/w0"]["spec"]["nodeName"].is_string()
                && pods["default/w1"]["spec"]["nodeName"].is_string()
            {
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "not bound; screen:\n{}",
                s.screen()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        s.wait_for("bound default/w1 to ");
        s.keys("q");
        let status = s.wait_exit();
        let parser = s.parser.lock().expect("parser");
        assert!(!parser.screen().alternate_screen(), "terminal restored");
        status
    })
    .await
    .expect("pty session");
    assert!(status.success(), "exit status {status:?}");
    let lease = &api.objects("leases")["kube-system/schedscope"];
    assert!(
        lease["spec"]["holderIdentity"].is_null(),
        "released: {lease}"
    );
    assert!(api.objects("pods")["default/other"]["spec"]["nodeName"].is_null());
    assert_writes_granted(&api);
}

/// One node, no pods: the acting loop's quiet start.
async fn one_node() -> Arc<FakeApi> {
    let api = FakeApi::start().await;
    api.apply("namespaces", json!({"metadata": {"name": "default"}}));
    api.apply("nodes", node("n1"));
    api
}

fn lines_of(reports: &std::sync::Mutex<Vec<act::ActEvent>>) -> Vec<String> {
    reports
        .lock()
        .expect("reports")
        .iter()
        .filter_map(|r| match r {
            act::ActEvent::Line(l, _) => Some(l.clone()),
            _ => None,
        })
        .collect()
}

/// A transient 403 on the Lease at start-up, then failed renewals that recover
/// within the renew deadline: the session keeps acting (a pod added afterwards is
/// bound), says so, and never stops.
#[tokio::test]
async fn lease_renewal_failures_within_the_deadline_keep_acting() {
    let api = one_node().await;
    api.fail_lease_requests(1, 403);
    let mut opts = ActOptions::new("schedscope", "kube-system");
    opts.retry_period = Duration::from_millis(50);
    let (handle, inputs) = act::session::channel();
    let reports = Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = reports.clone();
    let session = tokio::spawn(act::run_session(
        api.client(),
        LiveOptions::default(),
        config(),
        opts,
        inputs,
        move |r| sink.lock().expect("reports").push(r),
        || false,
    ));
    until("acting", || {
        lines_of(&reports)
            .iter()
            .any(|l| l.starts_with("acting as scheduler"))
    })
    .await;
    api.fail_lease_requests(3, 403);
    until("renewed again", || {
        lines_of(&reports)
            .iter()
            .any(|l| l == "the Lease is renewed again")
    })
    .await;
    api.apply("pods", pod("p", "schedscope", None));
    until("p bound", || {
        api.objects("pods")["default/p"]["spec"]["nodeName"] == "n1"
    })
    .await;
    let lines = lines_of(&reports);
    assert!(
        lines.iter().any(|l| l.starts_with(
            "renewing the Lease failed (still acting; retrying for up to 10s after the last \
             renewal): Lease kube-system/schedscope: Forbidden: injected Lease failure (403) \
             (HTTP 403)"
        )),
        "{lines:?}"
    );
    // One line per run of failures, not one per failed attempt.
    assert_eq!(
        lines
            .iter()
            .filter(|l| l.starts_with("renewing the Lease failed"))
            .count(),
        1,
        "{lines:?}"
    );
    assert!(
        !reports
            .lock()
            .expect("reports")
            .iter()
            .any(|r| matches!(r, act::ActEvent::StoppedActing(_))),
        "{lines:?}"
    );
    drop(handle);
    tokio::time::timeout(WAIT, session)
        .await
        .expect("bounded")
        .expect("joined")
        .expect("a clean stop");
}

/// Headless, renewals failing past the renew deadline end the session with an error
/// that says why once, in words (no Rust debug of the API status).
#[tokio::test]
async fn headless_lease_lost_past_the_deadline_stops_with_a_clear_error() {
    let api = one_node().await;
    let mut opts = ActOptions::new("schedscope", "kube-system");
    opts.retry_period = Duration::from_millis(50);
    opts.renew_deadline = Duration::from_millis(300);
    let acting = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let seen = acting.clone();
    let down = api.clone();
    let run = act::run(
        api.client(),
        LiveOptions::default(),
        config(),
        opts,
        move |l| {
            if l.starts_with("acting as scheduler") {
                seen.store(true, std::sync::atomic::Ordering::SeqCst);
                down.set_leases_down(Some(403));
            }
        },
        || false,
    );
    let r = tokio::time::timeout(WAIT, run).await.expect("bounded");
    assert!(acting.load(std::sync::atomic::Ordering::SeqCst));
    let e = r.expect_err("the Lease is lost");
    assert!(matches!(e, ActError::LeaseLost { .. }), "{e:?}");
    assert_eq!(
        format!("{:#}", anyhow::Error::new(e)),
        "stopped acting as scheduler \"schedscope\": the Lease kube-system/schedscope was not \
         renewed within 300ms (last error: Lease kube-system/schedscope: Forbidden: injected \
         Lease failure (403) (HTTP 403))"
    );
}

/// In the inspector, renewals failing past the deadline stop the writes but not
/// the session: it says so, keeps the model live, and answers commands with why.
#[tokio::test]
async fn inspector_lease_lost_stops_writing_but_keeps_watching() {
    let api = one_node().await;
    let mut opts = ActOptions::new("schedscope", "kube-system");
    opts.retry_period = Duration::from_millis(50);
    opts.renew_deadline = Duration::from_millis(300);
    opts.watch_after_lease_lost = true;
    let (handle, inputs) = act::session::channel();
    let reports = Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = reports.clone();
    let session = tokio::spawn(act::run_session(
        api.client(),
        LiveOptions::default(),
        config(),
        opts,
        inputs,
        move |r| sink.lock().expect("reports").push(r),
        || false,
    ));
    until("acting", || {
        lines_of(&reports)
            .iter()
            .any(|l| l.starts_with("acting as scheduler"))
    })
    .await;
    // 503s, which the client retries by itself: the renew deadline still holds.
    api.set_leases_down(Some(503));
    until("stopped acting", || {
        reports
            .lock()
            .expect("reports")
            .iter()
            .any(|r| matches!(r, act::ActEvent::StoppedActing(_)))
    })
    .await;
    // The API server answers again, but the session does not take the Lease back.
    api.set_leases_down(None);
    api.apply("pods", pod("p", "schedscope", None));
    until("p in the model shown", || {
        reports
            .lock()
            .expect("reports")
            .iter()
            .any(|r| matches!(r, act::ActEvent::Data(u) if u.cluster.pod("default/p").is_some()))
    })
    .await;
    assert!(handle.send(act::PermitDecision::Allow {
        pod: "default/p".into(),
        plugin: None,
    }));
    until("the command answered", || {
        lines_of(&reports)
            .iter()
            .any(|l| l.starts_with("not acting: stopped acting as scheduler"))
    })
    .await;
    assert!(api.objects("pods")["default/p"]["spec"]["nodeName"].is_null());
    assert!(
        api.writes().iter().all(|(_, p)| !p.contains("/pods/p")),
        "{:?}",
        api.writes()
    );
    drop(handle);
    tokio::time::timeout(WAIT, session)
        .await
        .expect("bounded")
        .expect("joined")
        .expect("a clean stop");
}

/// A StatefulSet pod recreated under its name: the live source's FailedScheduling
/// event of the old pod (another uid) is not taken for the new pod's word; once the
/// new pod has one of its own, that is shown, with its count and age.
#[tokio::test]
async fn a_recreated_pods_old_event_is_not_its_word() {
    use schedscope::source::SchedulerWord;
    let api = one_node().await;
    api.apply("pods", pod("web-0", "default-scheduler", None));
    let event = |name: &str, uid: &str, message: &str, count: i32| {
        json!({"metadata": {"name": name, "namespace": "default"},
               "involvedObject": {"kind": "Pod", "namespace": "default", "name": "web-0", "uid": uid},
               "reason": "FailedScheduling", "type": "Warning", "message": message,
               "count": count, "lastTimestamp": "2026-01-10T09:58:00Z"})
    };
    api.apply(
        "events",
        event(
            "web-0.old",
            "uid-web-0-before",
            "0/1 nodes are available: 1 node(s) had untolerated taint(s).",
            9,
        ),
    );
    let fit_error = "0/1 nodes are available: 1 Insufficient cpu.";
    let word = |st: &live::LiveState| {
        let pod = st.cluster.pod("default/web-0").expect("pod");
        SchedulerWord::of(pod, st.events.get("default/web-0"), Some(fit_error))
    };
    let st = live::load_once(api.client(), &LiveOptions::default(), WAIT)
        .await
        .expect("list");
    assert_eq!(word(&st), None);

    api.delete("events", "default/web-0.old");
    api.apply(
        "events",
        event(
            "web-0.new",
            "uid-web-0",
            "0/1 nodes are available: 1 Insufficient cpu.",
            2,
        ),
    );
    let st = live::load_once(api.client(), &LiveOptions::default(), WAIT)
        .await
        .expect("list");
    let w = word(&st).expect("its own event");
    assert!(!w.differs, "{w:?}");
    assert_eq!(
        w.line(t0()),
        "real scheduler (FailedScheduling event) agrees with the replay (2×, last 2m00s ago): \
         0/1 nodes are available: 1 Insufficient cpu."
    );
}

/// An Event that cannot be recorded does not undo the write it records: the bind
/// stands (the engine must not take it back), and the failure is told once, in
/// words.
#[tokio::test]
async fn a_failed_event_does_not_fail_the_binding() {
    let api = cluster().await;
    let mut writer = Writer::new(api.client(), ActOptions::new("schedscope", "kube-system"));
    let w0 = act::PodRef {
        namespace: "default".into(),
        name: "w0".into(),
        uid: "uid-w0".into(),
        generation: 1,
    };
    writer
        .perform(
            &Write::Unschedulable {
                pod: w0.clone(),
                message: "0/2 nodes are available: 2 Insufficient cpu.".into(),
                nominated_node: None,
            },
            t0(),
        )
        .await
        .expect("failure recorded");
    // The same instant names the next Event of w0 the same: the API server refuses it.
    writer
        .perform(
            &Write::Bind {
                pod: w0,
                node: "n1".into(),
                claims: vec![],
            },
            t0(),
        )
        .await
        .expect("the binding itself succeeded");
    assert_eq!(api.objects("pods")["default/w0"]["spec"]["nodeName"], "n1");
    let failed = writer.take_failed_events();
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert!(
        failed[0].starts_with(
            "recording the Scheduled Event of default/w0 failed: AlreadyExists: events \"default/w0."
        ) && failed[0].ends_with("\" already exists (HTTP 409)"),
        "{failed:?}"
    );
}

/// `--act --headless` when the Lease cannot be taken (403 on every try, retried
/// until the renew deadline): the error is printed once, the API status in words,
/// and the exit code is 2.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn headless_act_prints_a_lease_error_once() {
    let api = one_node().await;
    api.set_leases_down(Some(403));
    let dir = std::env::temp_dir().join(format!("schedscope-act-403-{}", std::process::id()));
    let kc = api.write_kubeconfig(&dir);
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(env!("CARGO_BIN_EXE_schedscope"))
            .args([
                "--act",
                "--headless",
                "--scheduler-name",
                "default-scheduler",
                "--kubeconfig",
            ])
            .arg(&kc)
            .env_remove("KUBECONFIG")
            .output()
            .expect("run")
    })
    .await
    .expect("joined");
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "error: Lease kube-system/default-scheduler: Forbidden: injected Lease failure (403) \
         (HTTP 403)\n"
    );
}

/// `--act` with a configuration that has no profile of the scheduler name: told at
/// once, before the Lease or anything else is written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn act_without_a_profile_of_its_name_writes_nothing() {
    let api = one_node().await;
    let dir = std::env::temp_dir().join(format!("schedscope-act-noprof-{}", std::process::id()));
    let kc = api.write_kubeconfig(&dir);
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(env!("CARGO_BIN_EXE_schedscope"))
            .args(["--act", "--headless", "--kubeconfig"])
            .arg(&kc)
            .env_remove("KUBECONFIG")
            .output()
            .expect("run")
    })
    .await
    .expect("joined");
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "error: the scheduler configuration has no profile with schedulerName \"schedscope\" \
         (its profiles: default-scheduler); name one so, or pass --scheduler-name\n"
    );
    assert_eq!(api.writes(), Vec::<(String, String)>::new());
}

/// The inspector when the Lease cannot be renewed for the renew deadline (10 s):
/// it says so, the status bar keeps saying so, the waiting gang is dropped (no
/// writes any more), and the view stays responsive until `q`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn act_in_the_inspector_survives_a_lost_lease() {
    let api = cluster().await;
    gang_one_short(&api);
    let dir = std::env::temp_dir().join(format!("schedscope-act-lost-{}", std::process::id()));
    let kc = api.write_kubeconfig(&dir);
    let cfg = dir.join("scheduler.yaml");
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/coscheduling-config.yaml"
    ))
    .expect("config")
    .replace(
        "schedulerName: default-scheduler",
        "schedulerName: schedscope",
    );
    std::fs::write(&cfg, text).expect("config file");
    let (kc, cfg) = (kc.display().to_string(), cfg.display().to_string());
    let server = api.clone();
    let status = tokio::task::spawn_blocking(move || {
        let mut s = support::pty::Session::start(&["--act", "--kubeconfig", &kc, "--config", &cfg]);
        s.wait_for("default/w1 waiting at Permit");
        server.set_leases_down(Some(403));
        s.wait_for("stopped acting as scheduler");
        let writes = server.writes().len();
        // A key clears the message: the status bar still says it.
        s.keys("7");
        s.wait_for("NOT ACTING (Lease lost)");
        s.wait_for("no pod is waiting at Permit");
        s.keys("a");
        s.wait_for("no waiting pod selected");
        // Still live: a pod added now shows up (and is not scheduled).
        server.apply("pods", pod("late", "schedscope", None));
        s.keys("1");
        s.wait_for("default/late");
        assert_eq!(server.writes().len(), writes, "{:?}", server.writes());
        s.keys("q");
        s.wait_exit()
    })
    .await
    .expect("pty session");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(status.success(), "exit status {status:?}");
    assert!(api.objects("pods")["default/late"]["spec"]["nodeName"].is_null());
}

/// `explain -o json` on a live source carries the real scheduler's word with the
/// event's count and when it was last seen; an event about an earlier pod of the
/// same name (another uid) is not taken for it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn explain_json_carries_the_events_count_and_age() {
    let api = one_node().await;
    let mut p = pod("web-0", "default-scheduler", None);
    p["spec"]["containers"][0]["resources"]["requests"]["cpu"] = json!("64");
    api.apply("pods", p);
    let event = |name: &str, uid: &str, message: &str| {
        json!({"metadata": {"name": name, "namespace": "default"},
               "involvedObject": {"kind": "Pod", "namespace": "default", "name": "web-0", "uid": uid},
               "reason": "FailedScheduling", "type": "Warning", "message": message,
               "series": {"count": 4, "lastObservedTime": "2026-01-10T09:58:00.000000Z"},
               "eventTime": "2026-01-10T09:50:00.000000Z"})
    };
    api.apply(
        "events",
        event(
            "web-0.a",
            "uid-web-0",
            "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",
        ),
    );
    let dir = std::env::temp_dir().join(format!("schedscope-explain-ev-{}", std::process::id()));
    let kc = api.write_kubeconfig(&dir);
    let run = |kc: std::path::PathBuf| {
        tokio::task::spawn_blocking(move || {
            std::process::Command::new(env!("CARGO_BIN_EXE_schedscope"))
                .args(["explain", "default/web-0", "-o", "json", "--kubeconfig"])
                .arg(&kc)
                .env_remove("KUBECONFIG")
                .output()
                .expect("run")
        })
    };
    let out = run(kc.clone()).await.expect("joined");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&out.stderr));
    });
    let word = &v["realScheduler"];
    assert_eq!(word["from"], "FailedScheduling event", "{word}");
    assert_eq!(word["count"], 4, "{word}");
    assert_eq!(word["lastSeen"], "2026-01-10T09:58:00Z", "{word}");

    // The pod recreated (a new uid): the old event is not its word.
    let mut p = pod("web-0", "default-scheduler", None);
    p["metadata"]["uid"] = json!("uid-web-0-again");
    p["spec"]["containers"][0]["resources"]["requests"]["cpu"] = json!("64");
    api.apply("pods", p);
    let out = run(kc).await.expect("joined");
    let _ = std::fs::remove_dir_all(&dir);
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert!(v["realScheduler"].is_null(), "{}", v["realScheduler"]);
}

/// DynamicResources' PreBind under `--act`: the claim the engine allocated gets the
/// delete-protection finalizer, then its allocation and the pod in `reservedFor`,
/// before the binding, as kube-scheduler writes them.
#[tokio::test]
async fn a_pod_with_a_claim_gets_its_allocation_written_before_the_binding() {
    let api = FakeApi::start().await;
    api.apply("namespaces", json!({"metadata": {"name": "default"}}));
    api.apply("nodes", node("n1"));
    api.apply(
        "deviceclasses",
        json!({"metadata": {"name": "gpu"},
               "spec": {"selectors": [{"cel": {"expression": "device.driver == \"gpu.example.com\""}}]}}),
    );
    api.apply(
        "resourceslices",
        json!({"metadata": {"name": "n1-gpus"},
               "spec": {"driver": "gpu.example.com", "nodeName": "n1",
                        "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1},
                        "devices": [{"name": "gpu-0"}, {"name": "gpu-1"}]}}),
    );
    api.apply(
        "resourceclaims",
        json!({"metadata": {"name": "c1", "namespace": "default", "uid": "uid-c1"},
               "spec": {"devices": {"requests": [{"name": "g", "exactly": {"deviceClassName": "gpu"}}]}}}),
    );
    let mut p = pod("p", "schedscope", None);
    p["spec"]["resourceClaims"] = json!([{"name": "g", "resourceClaimName": "c1"}]);
    api.apply("pods", p);
    let (mut actor, opts) = actor(&api).await;
    let ws = actor.step(t0());
    let bind = ws
        .iter()
        .find(|w| matches!(w, Write::Bind { .. }))
        .unwrap_or_else(|| panic!("no binding: {ws:?}"));
    let Write::Bind { claims, node, .. } = bind else {
        unreachable!()
    };
    assert_eq!(node, "n1");
    assert_eq!(claims.len(), 1, "{claims:?}");
    assert_eq!(
        claims[0].finalizers.as_deref(),
        Some(&[act::CLAIM_FINALIZER.to_string()][..])
    );
    assert!(
        act::describe(bind).contains("claims c1 allocated and reserved"),
        "{}",
        act::describe(bind)
    );
    let mut writer = Writer::new(api.client(), opts);
    writer.perform(bind, t0()).await.expect("written");
    let claim = &api.objects("resourceclaims")["default/c1"];
    assert_eq!(
        claim["metadata"]["finalizers"],
        json!([act::CLAIM_FINALIZER]),
        "{claim}"
    );
    let result = &claim["status"]["allocation"]["devices"]["results"][0];
    assert_eq!(result["driver"], "gpu.example.com", "{claim}");
    assert_eq!(result["pool"], "n1");
    assert_eq!(
        result["device"], "gpu-0",
        "the first device, as the allocator picks"
    );
    assert_eq!(result["request"], "g");
    assert_eq!(
        claim["status"]["reservedFor"],
        json!([{"resource": "pods", "name": "p", "uid": "uid-p"}])
    );
    assert_eq!(api.objects("pods")["default/p"]["spec"]["nodeName"], "n1");
    // Claim writes come before the binding.
    let order: Vec<String> = api
        .writes()
        .into_iter()
        .map(|(m, p)| format!("{m} {p}"))
        .collect();
    let claim_at = order
        .iter()
        .position(|w| w.contains("resourceclaims/c1/status"))
        .unwrap();
    let bind_at = order.iter().position(|w| w.ends_with("/binding")).unwrap();
    assert!(claim_at < bind_at, "{order:?}");
    assert_writes_granted(&api);
}
