//! The live source against a test API server on 127.0.0.1: the real kube `Client`
//! over HTTP, watch streams, and faults (streams cut, 500s, a restart with new
//! resourceVersions). Every wait is bounded.

mod support {
    pub mod fake_api;
    pub mod pty;
}

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, TryRecvError};
use std::time::{Duration, Instant};

use schedscope::model::Cluster;
use schedscope::source::live::{self, LiveOptions};
use schedscope::source::{SchedulerWord, SourceStatus, load_snapshot, save};
use schedscope::tui::DataUpdate;
use serde_json::{Value, json};
use support::fake_api::FakeApi;

const WAIT: Duration = Duration::from_secs(30);

fn node(name: &str, cpu: &str) -> Value {
    json!({"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
           "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"},
                      "capacity": {"cpu": cpu, "memory": "8Gi", "pods": "110"}}})
}

fn pod(name: &str, node: Option<&str>, version: u32) -> Value {
    let mut p = json!({"metadata": {"name": name, "namespace": "default", "uid": format!("uid-{name}"),
                                   "labels": {"app": "web", "v": version.to_string()}},
                      "spec": {"containers": [{"name": "c", "image": "nginx",
                               "resources": {"requests": {"cpu": "100m"}}}]},
                      "status": {"phase": "Pending"}});
    if let Some(n) = node {
        p["spec"]["nodeName"] = json!(n);
        p["status"]["phase"] = json!("Running");
    }
    p
}

/// What must match between the server and the model: pods with their labels and
/// node, node names, PVC and namespace keys.
fn server_view(api: &FakeApi) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    for (k, p) in api.objects("pods") {
        if matches!(p["status"]["phase"].as_str(), Some("Succeeded" | "Failed")) {
            continue;
        }
        let labels: BTreeMap<String, String> =
            serde_json::from_value(p["metadata"]["labels"].clone()).unwrap_or_default();
        m.insert(
            format!("pod {k}"),
            format!("{labels:?} {:?}", p["spec"]["nodeName"].as_str()),
        );
    }
    for k in api.objects("nodes").keys() {
        m.insert(format!("node {k}"), String::new());
    }
    for k in api.objects("persistentvolumeclaims").keys() {
        m.insert(format!("pvc {k}"), String::new());
    }
    for k in api.objects("namespaces").keys() {
        m.insert(format!("ns {k}"), String::new());
    }
    m
}

fn model_view(c: &Cluster) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    for p in c.pods() {
        m.insert(
            format!("pod {}", p.key()),
            format!("{:?} {:?}", p.labels, p.node_name.as_deref()),
        );
    }
    for n in c.nodes() {
        m.insert(format!("node {}", n.name()), String::new());
        // The node's own pod list must agree with the pods' nodeName.
        for p in &n.pods {
            assert_eq!(p.node_name.as_deref(), Some(n.name()), "{}", p.key());
        }
    }
    for k in c.persistent_volume_claims.keys() {
        m.insert(format!("pvc {k}"), String::new());
    }
    for k in c.namespaces.keys() {
        m.insert(format!("ns {k}"), String::new());
    }
    m
}

/// Drain updates until `pred` holds for the latest one, or fail after `WAIT`.
async fn wait_for(
    rx: &Receiver<DataUpdate>,
    last: &mut Option<DataUpdate>,
    what: &str,
    pred: impl Fn(&DataUpdate) -> bool,
) -> DataUpdate {
    let start = Instant::now();
    loop {
        loop {
            match rx.try_recv() {
                Ok(u) => *last = Some(u),
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => {
                    panic!("live source ended while waiting for {what}")
                }
            }
        }
        if let Some(u) = last.as_ref()
            && pred(u)
        {
            return u.clone();
        }
        assert!(
            start.elapsed() < WAIT,
            "timed out waiting for {what}; last status {:?}",
            last.as_ref().and_then(|u| u.status.clone())
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn converged(
    api: &FakeApi,
    rx: &Receiver<DataUpdate>,
    last: &mut Option<DataUpdate>,
    step: &str,
) {
    let want = server_view(api);
    wait_for(rx, last, step, |u| {
        u.status == Some(SourceStatus::Connected) && model_view(&u.cluster) == want
    })
    .await;
}

/// `schedscope explain POD --kubeconfig KC` run as a user would, off the runtime's
/// worker threads (the test API server answers on them).
async fn explain_live(kc: std::path::PathBuf, pod: &str, extra: &[&str]) -> std::process::Output {
    let mut args: Vec<String> = vec!["explain".into(), pod.into()];
    args.extend(extra.iter().map(|s| s.to_string()));
    tokio::task::spawn_blocking(move || {
        std::process::Command::new(env!("CARGO_BIN_EXE_schedscope"))
            .args(&args)
            .arg("--kubeconfig")
            .arg(&kc)
            .env_remove("KUBECONFIG")
            .output()
            .expect("run")
    })
    .await
    .unwrap()
}

fn seed(api: &FakeApi) {
    for ns in ["default", "kube-system"] {
        api.apply("namespaces", json!({"metadata": {"name": ns}}));
    }
    for i in 0..3 {
        api.apply("nodes", node(&format!("n{i}"), "4"));
    }
    for i in 0..10 {
        let bound = format!("n{}", i % 3);
        api.apply(
            "pods",
            pod(&format!("p{i}"), (i % 2 == 0).then_some(bound.as_str()), 0),
        );
    }
    api.apply(
        "persistentvolumeclaims",
        json!({"metadata": {"name": "data", "namespace": "default"},
               "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}),
    );
    api.apply(
        "priorityclasses",
        json!({"metadata": {"name": "high"}, "value": 1000}),
    );
}

fn start_live(
    api: &FakeApi,
    opts: LiveOptions,
) -> (Receiver<DataUpdate>, tokio::task::JoinHandle<()>) {
    let (tx, rx) = std::sync::mpsc::channel();
    let task = tokio::spawn(live::run(api.client(), opts, tx));
    (rx, task)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn model_follows_the_server_through_faults() {
    let api = FakeApi::start().await;
    seed(&api);
    let (rx, task) = start_live(&api, LiveOptions::default());
    let mut last = None;
    converged(&api, &rx, &mut last, "initial list").await;
    let first = last.clone().expect("update");
    assert_eq!(first.cluster.nodes().len(), 3);
    assert_eq!(first.cluster.pod_count(), 10);
    assert_eq!(
        first.cluster.priority_classes["high"]
            .preemption_policy
            .as_deref(),
        Some("PreemptLowerPriority"),
        "defaulting shared with the snapshot loader"
    );
    assert_eq!(
        first.cluster.namespace_labels("kube-system")["kubernetes.io/metadata.name"],
        "kube-system"
    );

    // Plain add / update / delete, with a bookmark in between.
    api.apply("pods", pod("p1", Some("n1"), 1));
    api.bookmark();
    api.delete("pods", "default/p2");
    api.apply("nodes", node("n3", "8"));
    api.apply("pods", pod("p20", Some("n3"), 0));
    converged(&api, &rx, &mut last, "add/update/delete").await;
    assert_eq!(
        last.as_ref()
            .unwrap()
            .cluster
            .node("n3")
            .unwrap()
            .pods
            .len(),
        1
    );

    // A terminal pod leaves the model.
    let mut done = pod("p3", Some("n0"), 0);
    done["status"]["phase"] = json!("Succeeded");
    api.apply("pods", done);
    converged(&api, &rx, &mut last, "terminal pod").await;
    assert!(last.as_ref().unwrap().cluster.pod("default/p3").is_none());

    // Watch streams cut abruptly mid-way, changes right after: none may be lost.
    for round in 0..3u32 {
        api.cut_watches(round % 2 == 0);
        for i in 0..10 {
            if api.objects("pods").contains_key(&format!("default/p{i}")) {
                api.apply("pods", pod(&format!("p{i}"), None, 10 + round));
            }
        }
        converged(&api, &rx, &mut last, &format!("cut round {round}")).await;
    }

    // 500s: the watches are cut and the next requests fail; retried with backoff.
    api.fail_requests(6);
    api.cut_watches(true);
    api.apply("pods", pod("p30", None, 0));
    api.delete("nodes", "n3");
    converged(&api, &rx, &mut last, "after 500s").await;

    // History compacted: resuming watches get 410 Gone and relist.
    api.compact();
    api.cut_watches(false);
    api.apply("pods", pod("p31", None, 0));
    converged(&api, &rx, &mut last, "after 410").await;

    // Restart with new resourceVersions; objects changed while it was down are
    // only seen through the relist.
    api.restart(Duration::from_millis(1500), |api| {
        api.delete("pods", "default/p0");
        api.apply("pods", pod("p40", Some("n1"), 0));
        api.apply("pods", pod("p4", Some("n2"), 99));
        api.delete("persistentvolumeclaims", "default/data");
    })
    .await;
    converged(&api, &rx, &mut last, "after restart").await;
    let c = &last.as_ref().unwrap().cluster;
    assert!(c.pod("default/p0").is_none());
    assert_eq!(c.pod("default/p4").unwrap().labels["v"], "99");
    assert!(c.persistent_volume_claims.is_empty());
    task.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_goes_stale_and_recovers() {
    let api = FakeApi::start().await;
    seed(&api);
    let (rx, task) = start_live(&api, LiveOptions::default());
    let mut last = None;
    converged(&api, &rx, &mut last, "initial list").await;
    let before = last.as_ref().unwrap().cluster.clone();

    // Every request fails for a while: the last state is kept, marked reconnecting.
    api.fail_requests(1_000_000);
    api.cut_watches(true);
    let u = wait_for(&rx, &mut last, "reconnecting", |u| {
        matches!(u.status, Some(SourceStatus::Reconnecting { .. }))
    })
    .await;
    assert!(
        Arc::ptr_eq(&u.cluster, &before),
        "a failure keeps the last state (same model, no recompute)"
    );
    let Some(SourceStatus::Reconnecting { error, .. }) = &u.status else {
        unreachable!()
    };
    assert!(
        error.contains("500") || error.contains("injected"),
        "{error}"
    );

    api.fail_requests(0);
    api.apply("pods", pod("late", None, 0));
    converged(&api, &rx, &mut last, "recovered").await;
    task.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn namespace_limits_pods_only() {
    let api = FakeApi::start().await;
    seed(&api);
    let mut other = pod("elsewhere", Some("n0"), 0);
    other["metadata"]["namespace"] = json!("kube-system");
    api.apply("pods", other);
    let opts = LiveOptions {
        namespace: Some("kube-system".into()),
        ..Default::default()
    };
    let st = live::load_once(api.client(), &opts, WAIT)
        .await
        .expect("list");
    let pods: Vec<String> = st.cluster.pods().map(|p| p.key()).collect();
    assert_eq!(pods, ["kube-system/elsewhere"]);
    assert_eq!(st.cluster.nodes().len(), 3, "nodes are always whole");
    assert_eq!(st.cluster.persistent_volume_claims.len(), 1);
}

/// More pods than a list page holds (the watcher asks for 500 at a time): every
/// page is read, each object once, with the fake server's continue tokens.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lists_longer_than_a_page_are_read_whole() {
    let api = FakeApi::start().await;
    seed(&api);
    let before = live::load_once(api.client(), &LiveOptions::default(), WAIT)
        .await
        .expect("list")
        .cluster
        .pods()
        .count();
    for i in 0..1_203 {
        api.apply("pods", pod(&format!("many-{i:04}"), None, 0));
    }
    let st = live::load_once(api.client(), &LiveOptions::default(), WAIT)
        .await
        .expect("list");
    let keys: Vec<String> = st.cluster.pods().map(|p| p.key()).collect();
    assert_eq!(keys.len(), before + 1_203);
    let many: Vec<&String> = keys.iter().filter(|k| k.contains("/many-")).collect();
    assert_eq!(many.len(), 1_203);
    assert!(many.windows(2).all(|w| w[0] < w[1]), "each pod once");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_scheduling_events_beside_the_replay() {
    let api = FakeApi::start().await;
    seed(&api);
    let mut p = pod("stuck", None, 0);
    p["status"]["conditions"] = json!([{"type": "PodScheduled", "status": "False",
        "reason": "Unschedulable", "message": "0/3 nodes are available: old."}]);
    api.apply("pods", p);
    let msg = "0/3 nodes are available: 3 Insufficient cpu.";
    for (name, reason, when) in [
        ("e1", "FailedScheduling", "2025-01-01T00:00:00Z"),
        ("e2", "FailedScheduling", "2025-01-01T00:05:00Z"),
        ("e3", "Scheduled", "2025-01-01T00:09:00Z"),
    ] {
        api.apply(
            "events",
            json!({"metadata": {"name": name, "namespace": "default"},
                   "involvedObject": {"kind": "Pod", "namespace": "default", "name": "stuck"},
                   "reason": reason, "count": 2, "lastTimestamp": when,
                   "message": if name == "e2" { msg.to_string() } else { format!("{name} text") }}),
        );
    }
    let (rx, task) = start_live(&api, LiveOptions::default());
    let mut last = None;
    let u = wait_for(&rx, &mut last, "events", |u| {
        u.events
            .as_ref()
            .is_some_and(|e| e.contains_key("default/stuck"))
            && u.status == Some(SourceStatus::Connected)
    })
    .await;
    let ev = &u.events.as_ref().unwrap()["default/stuck"];
    assert_eq!(ev.message, msg, "the latest FailedScheduling event wins");
    let pod = u.cluster.pod("default/stuck").unwrap();
    let same = SchedulerWord::of(pod, Some(ev), Some(msg)).unwrap();
    assert!(!same.differs);
    let differs = SchedulerWord::of(
        pod,
        Some(ev),
        Some("0/3 nodes are available: 3 node(s) had untolerated taint(s)."),
    )
    .unwrap();
    assert!(differs.differs);

    // The event goes away: the pod's condition is what remains.
    api.delete("events", "default/e2");
    api.delete("events", "default/e1");
    wait_for(&rx, &mut last, "event deleted", |u| {
        u.events
            .as_ref()
            .is_some_and(|e| !e.contains_key("default/stuck"))
    })
    .await;
    task.abort();
}

/// Objects of a YAML snapshot file as JSON values (for the server to serve).
fn yaml_objects(path: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(path).expect("read");
    text.split("\n---")
        .filter_map(|doc| {
            let v: Value = serde_saphyr::from_str(doc).ok()?;
            v.is_object().then_some(v)
        })
        .collect()
}

fn plural_of(kind: &str) -> &'static str {
    support::fake_api::RESOURCES
        .iter()
        .find(|r| r.3 == kind)
        .map(|r| r.2)
        .unwrap_or_else(|| panic!("no resource for {kind}"))
}

/// Everything the engine reads, comparable (resourceVersions left out).
fn digest(c: &Cluster) -> Vec<String> {
    digest_with(c, false)
}

/// The digest with the stored API objects cut to the `--redact` allowlist (the
/// scheduler's own view, nodes and pods, is compared whole either way).
fn digest_redacted(c: &Cluster) -> Vec<String> {
    digest_with(c, true)
}

fn digest_with(c: &Cluster, redacted: bool) -> Vec<String> {
    fn strip<T: serde::Serialize>(m: &BTreeMap<String, T>, redacted: bool) -> String {
        let mut v = serde_json::to_value(m).unwrap();
        for o in v.as_object_mut().unwrap().values_mut() {
            if let Some(meta) = o.get_mut("metadata").and_then(Value::as_object_mut) {
                meta.remove("resourceVersion");
            }
            if redacted {
                schedscope::source::redact::redact_object(o);
            }
        }
        v.to_string()
    }
    let mut out = Vec::new();
    for n in c.nodes() {
        let mut pods: Vec<String> = n.pods.iter().map(|p| p.key()).collect();
        pods.sort();
        out.push(format!("{:?} {pods:?} {:?}", n.node, n.requested));
    }
    for p in c.pods() {
        out.push(format!("{p:?}"));
    }
    out.push(strip(&c.persistent_volumes, redacted));
    out.push(strip(&c.persistent_volume_claims, redacted));
    out.push(strip(&c.storage_classes, redacted));
    out.push(strip(&c.namespaces, redacted));
    out.push(strip(&c.pod_disruption_budgets, redacted));
    out.push(strip(&c.priority_classes, redacted));
    out.push(strip(&c.services, redacted));
    out.push(strip(&c.replica_sets, redacted));
    out
}

/// Equal digests, or the first difference.
fn same(a: &[String], b: &[String], what: &str) {
    for (x, y) in a.iter().zip(b) {
        assert_eq!(x, y, "{what}");
    }
    assert_eq!(a.len(), b.len(), "{what}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn snapshot_save_round_trips_the_model() {
    let demo = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/demo-cluster.yaml");
    let original = load_snapshot(std::path::Path::new(demo)).expect("demo");
    let api = FakeApi::start().await;
    for o in yaml_objects(demo) {
        let kind = o["kind"].as_str().unwrap().to_string();
        let mut o = o;
        o["metadata"]["managedFields"] = json!([{"manager": "kubectl", "operation": "Apply"}]);
        api.apply(plural_of(&kind), o);
    }
    // Tricky YAML scalars must survive the writer.
    let mut tricky = pod("tricky", None, 0);
    tricky["metadata"]["labels"] = json!({"flag": "true", "ver": "010", "empty": "", "n": "null"});
    tricky["spec"]["containers"][0]["ports"] = json!([{"containerPort": 80, "hostPort": 8080}]);
    tricky["spec"]["containers"][0]["env"] = json!([{"name": "PASSWORD", "value": "hunter2"}]);
    tricky["spec"]["affinity"] = json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
        {"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "1.10"]}]}]}}});
    api.apply("pods", tricky);

    let live_model = live::load_once(api.client(), &LiveOptions::default(), WAIT)
        .await
        .expect("list");
    let dir = std::env::temp_dir().join(format!("schedscope-save-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (file, redact) in [("s.yaml", false), ("s.json", false), ("r.yaml", true)] {
        let (objects, report) = save::fetch_objects(&api.client(), &LiveOptions::default(), redact)
            .await
            .expect("fetch");
        assert_eq!(report.objects["Pod"], api.objects("pods").len());
        let path = dir.join(file);
        save::write_objects(&objects, &path).expect("write");
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains("managedFields"), "{file}");
        assert_eq!(text.contains("hunter2"), !redact, "{file}");
        let loaded = load_snapshot(&path).unwrap_or_else(|e| panic!("{file}: {e}"));
        // Redacted, the stored objects lose what the scheduler never reads (a
        // PriorityClass description, say); everything else must be equal.
        let digest = if redact { digest_redacted } else { digest };
        same(
            &digest(&loaded.cluster),
            &digest(&live_model.cluster),
            &format!("{file} vs live model"),
        );
        // And back to the original file's model, but for the extra pod.
        let mut back = loaded.cluster.clone();
        back.delete_pod("default/tricky");
        same(
            &digest(&back),
            &digest(&original.cluster),
            &format!("{file} vs demo"),
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every resource the live source and `snapshot save` request is granted by the
/// read-only ClusterRole, with get/list/watch, and the role grants nothing more
/// than get/list/watch (and never Secrets).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rbac_inspect_role_covers_exactly_what_is_read() {
    let api = FakeApi::start().await;
    seed(&api);
    live::load_once(api.client(), &LiveOptions::default(), WAIT)
        .await
        .expect("list");
    save::fetch_objects(&api.client(), &LiveOptions::default(), false)
        .await
        .expect("save");
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/deploy/rbac/inspect-clusterrole.yaml"
    );
    let text = std::fs::read_to_string(path).expect("role");
    let mut granted = Vec::new();
    for doc in text.split("\n---") {
        let v: Value = serde_saphyr::from_str(doc).expect("yaml");
        if v["kind"] != "ClusterRole" {
            continue;
        }
        for rule in v["rules"].as_array().expect("rules") {
            let verbs: Vec<&str> = rule["verbs"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(Value::as_str)
                .collect();
            assert_eq!(verbs, ["get", "list", "watch"], "read-only verbs only");
            for r in rule["resources"].as_array().unwrap() {
                granted.push(r.as_str().unwrap().to_string());
            }
        }
    }
    assert!(!granted.iter().any(|r| r == "secrets" || r == "configmaps"));
    let requested = api.resources_requested();
    for r in &requested {
        assert!(granted.contains(r), "{r} is read but not granted");
    }
    // Nothing granted that is never read (podgroups: read when the CRD exists).
    for g in &granted {
        assert!(
            requested.contains(g) || g == "podgroups",
            "{g} is granted but never read"
        );
    }
    assert!(requested.contains(&"podgroups".to_string()), "CRD probe");
}

/// `schedscope explain` against a live cluster (a kubeconfig naming the test
/// server): the replay, which configuration is in use, and the real scheduler's
/// word beside it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn explain_live_sets_the_real_scheduler_beside_the_replay() {
    let api = FakeApi::start().await;
    seed(&api);
    let mut big = pod("big", None, 0);
    big["spec"]["containers"][0]["resources"]["requests"]["cpu"] = json!("64");
    // What a real scheduler said earlier, on a cluster that has changed since.
    big["status"]["conditions"] = json!([{"type": "PodScheduled", "status": "False",
        "reason": "Unschedulable",
        "message": "0/2 nodes are available: 2 node(s) had untolerated taint(s). preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."}]);
    api.apply("pods", big);
    let dir = std::env::temp_dir().join(format!("schedscope-kc-{}", std::process::id()));
    let kc = api.write_kubeconfig(&dir);
    let out = explain_live(kc, "default/big", &[]).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("FitError   0/3 nodes are available: 3 Insufficient cpu."),
        "{stdout}"
    );
    assert!(
        stdout.contains("scheduler config: v1.35 defaults"),
        "{stdout}"
    );
    assert!(
        stdout
            .contains("real scheduler (PodScheduled condition) differs from the replay: 0/2 nodes"),
        "{stdout}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// After an outage the source says "connected" only once every kind has listed
/// again: the first connected update already has what changed while the server
/// was down (a deleted pod gone, a new one there), and never an older model.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connected_again_only_after_every_kind_listed_again() {
    let api = FakeApi::start().await;
    seed(&api);
    let control = live::LiveControl::default();
    let (tx, rx) = std::sync::mpsc::channel();
    let task = tokio::spawn(live::run_with(
        api.client(),
        LiveOptions::default(),
        tx,
        control.clone(),
    ));
    let mut last = None;
    converged(&api, &rx, &mut last, "initial list").await;
    let kinds = control.kinds();
    assert!(
        kinds
            .iter()
            .filter(|k| k.kind != "PodGroup")
            .all(|k| matches!(k.phase, live::KindPhase::Synced { .. })),
        "{kinds:?}"
    );
    let pg = kinds
        .iter()
        .find(|k| k.kind == "PodGroup")
        .expect("PodGroup");
    assert!(
        pg.optional && matches!(pg.phase, live::KindPhase::NotServed { .. }),
        "no CRD: {pg:?}"
    );

    let before_outage = k8s_openapi::jiff::Timestamp::now();
    api.go_down().await;
    api.delete("pods", "default/p1");
    api.apply("pods", pod("born-in-outage", None, 0));
    let u = wait_for(&rx, &mut last, "reconnecting", |u| {
        matches!(u.status, Some(SourceStatus::Reconnecting { .. }))
    })
    .await;
    let Some(SourceStatus::Reconnecting { since, error }) = &u.status else {
        unreachable!()
    };
    assert!(
        since.as_second() >= before_outage.as_second(),
        "the data is as old as the outage, not as the last change"
    );
    assert!(error.contains("cannot reach the API server"), "{error}");
    assert!(
        control
            .kinds()
            .iter()
            .any(|k| matches!(k.phase, live::KindPhase::Retrying { .. })),
        "{:?}",
        control.kinds()
    );

    api.come_back();
    // The first update that says connected after the outage.
    let want = server_view(&api);
    let start = Instant::now();
    let first_connected = loop {
        match rx.recv_timeout(Duration::from_millis(50)) {
            Ok(u) if u.status == Some(SourceStatus::Connected) => break u,
            Ok(_) | Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(e) => panic!("live source ended: {e}"),
        }
        assert!(start.elapsed() < WAIT, "never connected again");
    };
    assert_eq!(
        model_view(&first_connected.cluster),
        want,
        "connected with a model that misses the outage's changes"
    );
    assert!(
        control
            .kinds()
            .iter()
            .filter(|k| k.kind != "PodGroup")
            .all(|k| matches!(k.phase, live::KindPhase::Synced { .. }))
    );
    task.abort();
}

/// A 403 on a kind the engine needs ends a one-shot load at once, naming the
/// resource and the verb; a retry of the live source lists it once granted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forbidden_required_kind_is_said_at_once() {
    let api = FakeApi::start().await;
    seed(&api);
    api.forbid("pods", true);
    let err = match live::load_once(api.client(), &LiveOptions::default(), WAIT).await {
        Ok(_) => panic!("loaded without pods"),
        Err(e) => e,
    };
    assert!(
        matches!(err, live::LiveError::Read { kind: "Pod", .. }),
        "{err:?}"
    );
    let msg = err.to_string();
    assert!(
        msg.starts_with("cannot list pods: forbidden: pods is forbidden: User"),
        "{msg}"
    );
    assert!(msg.contains("needs get, list and watch on pods"), "{msg}");

    // The inspector's source: connecting, with the 403 as its error, until a retry
    // after the grant.
    let control = live::LiveControl::default();
    let (tx, rx) = std::sync::mpsc::channel();
    let task = tokio::spawn(live::run_with(
        api.client(),
        LiveOptions::default(),
        tx,
        control.clone(),
    ));
    let mut last = None;
    wait_for(&rx, &mut last, "the 403 as the error", |u| {
        matches!(&u.status, Some(SourceStatus::Connecting { error: Some(e) })
            if e.starts_with("cannot list pods: forbidden"))
    })
    .await;
    let pods = control
        .kinds()
        .into_iter()
        .find(|k| k.kind == "Pod")
        .unwrap();
    assert!(
        matches!(pods.phase, live::KindPhase::Forbidden { verb: "list", .. }),
        "{pods:?}"
    );
    api.forbid("pods", false);
    control.retry();
    converged(&api, &rx, &mut last, "after the grant and a retry").await;
    task.abort();
}

/// A 403 that goes away (a restarted kube-apiserver answers 403 until its RBAC
/// caches fill) is listed again after the ordinary backoff, without being asked:
/// the source reaches "connected" on its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transient_403_is_retried_unasked() {
    let api = FakeApi::start().await;
    seed(&api);
    api.forbid("pods", true);
    let control = live::LiveControl::default();
    let (tx, rx) = std::sync::mpsc::channel();
    let task = tokio::spawn(live::run_with(
        api.client(),
        LiveOptions::default(),
        tx,
        control.clone(),
    ));
    let mut last = None;
    wait_for(&rx, &mut last, "the 403 as the error", |u| {
        matches!(&u.status, Some(SourceStatus::Connecting { error: Some(e) })
            if e.starts_with("cannot list pods: forbidden"))
    })
    .await;
    api.forbid("pods", false);
    converged(&api, &rx, &mut last, "after the grant, unasked").await;
    assert_eq!(control.retries(), 0, "nobody asked for a retry");
    task.abort();
}

/// Optional kinds that cannot be read (VolumeAttachments, Events) do not block: the
/// load completes without it, the model says it is unreadable, and `explain`
/// marks the plugin that reads it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forbidden_optional_kind_degrades_and_marks_its_plugin() {
    let api = FakeApi::start().await;
    seed(&api);
    api.forbid("volumeattachments", true);
    // Events are only the real scheduler's word: optional too.
    api.forbid("events", true);
    let st = live::load_once(api.client(), &LiveOptions::default(), WAIT)
        .await
        .expect("an optional kind does not block");
    assert_eq!(st.cluster.pod_count(), 10);
    let why = &st.cluster.unreadable_kinds["VolumeAttachment"];
    assert!(
        why.starts_with("cannot list volumeattachments.storage.k8s.io: forbidden"),
        "{why}"
    );
    assert_eq!(
        st.cluster.unreadable_kinds.keys().collect::<Vec<_>>(),
        ["Event", "VolumeAttachment"]
    );

    // The live source: connected, the kind marked not readable.
    let control = live::LiveControl::default();
    let (tx, rx) = std::sync::mpsc::channel();
    let task = tokio::spawn(live::run_with(
        api.client(),
        LiveOptions::default(),
        tx,
        control.clone(),
    ));
    let mut last = None;
    let u = wait_for(&rx, &mut last, "connected without VolumeAttachments", |u| {
        u.status == Some(SourceStatus::Connected) && u.cluster.pod_count() == 10
    })
    .await;
    assert!(u.cluster.unreadable_kinds.contains_key("VolumeAttachment"));
    let va = control
        .kinds()
        .into_iter()
        .find(|k| k.kind == "VolumeAttachment")
        .unwrap();
    assert!(va.optional && matches!(va.phase, live::KindPhase::Forbidden { .. }));
    task.abort();

    let dir = std::env::temp_dir().join(format!("schedscope-kc403-{}", std::process::id()));
    let kc = api.write_kubeconfig(&dir);
    let out = explain_live(kc, "default/p1", &[]).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("NodeVolumeLimits")
            && stdout.contains("attached volumes counted without VolumeAttachments"),
        "{stdout}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `explain` against an API server that refuses connections: exit 2 with the
/// whole first error, not a wait for the list timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unreachable_api_server_is_an_error_at_once() {
    let api = FakeApi::start().await;
    let dir = std::env::temp_dir().join(format!("schedscope-kcdown-{}", std::process::id()));
    let kc = api.write_kubeconfig(&dir);
    api.go_down().await;
    let out = explain_live(kc, "default/p1", &[]).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "reading the live cluster at {}/: cannot reach the API server: ",
            api.url()
        )),
        "{stderr}"
    );
    assert!(stderr.contains("Connection refused"), "{stderr}");
    assert!(!stderr.contains("did not answer"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The inspector on a live cluster, end to end: an API server that refuses
/// connections is said in place of the panes; once it answers but forbids pods,
/// that 403 is; `R` after the grant lists them at once (unasked, after the backoff).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inspector_says_why_it_cannot_connect_and_retries_on_r() {
    let api = FakeApi::start().await;
    seed(&api);
    let dir = std::env::temp_dir().join(format!("schedscope-kctui-{}", std::process::id()));
    let kc = api.write_kubeconfig(&dir);
    api.go_down().await;
    let kc_arg = kc.display().to_string();
    let mut s = tokio::task::block_in_place(|| {
        let s = support::pty::Session::start(&["--kubeconfig", &kc_arg]);
        s.wait_for("cannot reach the API server: ");
        s.wait_for("Connection refused");
        s.wait_for("R retry now");
        // (A frame may be read half drawn: wait for the rest of it.)
        s.wait_until_gone("no pending pods");
        s
    });
    api.forbid("pods", true);
    api.come_back();
    tokio::task::block_in_place(|| {
        // Once every other kind has listed again, the 403 is what is left.
        s.wait_for("cannot read the cluster");
        s.wait_for("cannot list pods: forbidden");
        api.forbid("pods", false);
        s.keys("R");
        s.wait_for("default/p1");
        // Any key clears the "listing again" message from the status bar.
        s.keys("j");
        s.wait_for("(connected)");
        s.keys("q");
        assert!(s.wait_exit().success());
    });
    let _ = std::fs::remove_dir_all(&dir);
}

/// `explain -o json` of `pod` against the fake API server.
async fn explain_live_json(api: &FakeApi, pod: &str, tag: &str) -> Value {
    let dir = std::env::temp_dir().join(format!("schedscope-{tag}-{}", std::process::id()));
    let kc = api.write_kubeconfig(&dir);
    let out = explain_live(kc, pod, &["-o", "json"]).await;
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("json")
}

/// The DRA kinds are watched: a pod with a claim is explained live with the verdict
/// a snapshot of the same objects gives; with a DRA kind unreadable it is not
/// modelled, and the reason is said.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pod_with_claims_explained_live_as_from_a_snapshot() {
    for scenario in ["d01-single-gpu-fits", "d02-no-matching-devices"] {
        let snap = format!(
            "{}/tests/fidelity/{scenario}/snapshot.yaml",
            env!("CARGO_MANIFEST_DIR")
        );
        let api = FakeApi::start().await;
        for o in yaml_objects(&snap) {
            let kind = o["kind"].as_str().unwrap().to_string();
            api.apply(plural_of(&kind), o);
        }
        let mut live_json = explain_live_json(&api, "default/pending", "dra").await;
        // Only a live source has the real scheduler's word to set beside the replay.
        assert_eq!(
            live_json.as_object_mut().unwrap().remove("realScheduler"),
            Some(Value::Null)
        );
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_schedscope"))
            .args(["explain", "-s", &snap, "default/pending", "-o", "json"])
            .output()
            .expect("run");
        assert!(out.status.success(), "{scenario}");
        let mut snap_json: Value = serde_json::from_slice(&out.stdout).expect("json");
        // A snapshot has its record instead (no word recorded in these scenarios).
        let recorded = snap_json.as_object_mut().unwrap().remove("recorded");
        assert_eq!(recorded.as_ref().map(|r| &r["word"]), Some(&Value::Null));
        assert_eq!(live_json, snap_json, "{scenario}");
        assert_eq!(live_json["not_modelled"], json!([]), "{scenario}");

        // `snapshot save` keeps the DRA objects: the saved file explains the same.
        let (objects, report) = save::fetch_objects(&api.client(), &LiveOptions::default(), false)
            .await
            .expect("fetch");
        assert_eq!(report.objects["ResourceClaim"], 1, "{scenario}");
        let saved = std::env::temp_dir().join(format!(
            "schedscope-dra-{scenario}-{}.yaml",
            std::process::id()
        ));
        save::write_objects(&objects, &saved).expect("write");
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_schedscope"))
            .args(["explain", "default/pending", "-o", "json", "-s"])
            .arg(&saved)
            .output()
            .expect("run");
        let _ = std::fs::remove_file(&saved);
        let mut saved_json: Value = serde_json::from_slice(&out.stdout).expect("json");
        let saved_recorded = saved_json.as_object_mut().unwrap().remove("recorded");
        assert_eq!(saved_recorded, recorded, "{scenario}: saved");
        assert_eq!(saved_json, snap_json, "{scenario}: saved");

        // Without ResourceClaims the claims cannot be resolved: not modelled.
        api.forbid("resourceclaims", true);
        // And a role without them still saves the rest.
        let (_, report) = save::fetch_objects(&api.client(), &LiveOptions::default(), false)
            .await
            .expect("fetch without resourceclaims");
        assert!(!report.objects.contains_key("ResourceClaim"), "{scenario}");
        assert!(report.objects.contains_key("ResourceSlice"), "{scenario}");
        let v = explain_live_json(&api, "default/pending", "dra403").await;
        let nm = v["not_modelled"].to_string();
        assert!(
            nm.contains("DynamicResources")
                && nm.contains("claims resolved without ResourceClaims (not readable: cannot list resourceclaims.resource.k8s.io: forbidden"),
            "{scenario}: {nm}"
        );
        assert_eq!(
            v["prefilter"]["plugin"], "DynamicResources",
            "{scenario}: {v}"
        );
        assert!(
            v["prefilter"]["reasons"]
                .to_string()
                .contains("dynamic resource allocation is not modelled for this source"),
            "{scenario}: {v}"
        );
    }
}

/// `snapshot save` leaves out an optional kind it may not list (or that the cluster
/// does not serve) and says which; a required kind refused is still an error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn save_leaves_out_forbidden_optional_kinds_and_names_them() {
    let api = FakeApi::start().await;
    seed(&api);
    api.serve_version("v1.34.1-fake");
    api.forbid("volumeattachments", true);
    let (objects, report) = save::fetch_objects(&api.client(), &LiveOptions::default(), false)
        .await
        .expect("an optional kind does not fail the save");
    assert_eq!(report.objects["Pod"], 10);
    assert_eq!(objects.iter().filter(|o| o["kind"] == "Pod").count(), 10);
    // The server's release is recorded on kube-system's Namespace.
    let kube_system = objects
        .iter()
        .find(|o| o["kind"] == "Namespace" && o["metadata"]["name"] == "kube-system")
        .expect("kube-system carries the version");
    assert_eq!(
        kube_system["metadata"]["annotations"][save::VERSION_ANNOTATION],
        "v1.34.1-fake"
    );
    // (The test API server has no Coscheduling CRD: a missing CRD is no news.)
    assert_eq!(
        report.left_out,
        [
            "volumeattachments.storage.k8s.io: forbidden (list); grant get, list and watch on it to save it"
        ]
    );
    api.forbid("nodes", true);
    let err = save::fetch_objects(&api.client(), &LiveOptions::default(), false)
        .await
        .expect_err("nodes are required");
    assert!(err.to_string().contains("Node"), "{err}");
}

/// A server that accepts the connection and never answers is called that within
/// the first-answer bound, by `explain`'s one-shot load and by the inspector's live
/// source, instead of a silent wait of minutes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_server_is_an_error_within_the_first_answer_bound() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let held = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((stream, _)) = listener.accept().await {
            open.push(stream); // held open, never written to
        }
    });
    let client = kube::Client::try_from(kube::Config::new(url.parse().unwrap())).unwrap();
    let opts = LiveOptions {
        first_answer: Some(Duration::from_millis(500)),
        ..Default::default()
    };
    // `snapshot save` too (issue 26 item 6: it waited for minutes).
    let started = Instant::now();
    let Err(err) =
        schedscope::source::save::fetch_objects_within(&client, &opts, false, WAIT).await
    else {
        panic!("a silent server was saved");
    };
    assert!(
        err.to_string()
            .starts_with("the API server did not answer within 500ms"),
        "{err}"
    );
    assert!(
        started.elapsed() < WAIT,
        "save gave up at the first-answer bound"
    );
    let started = Instant::now();
    let Err(err) = live::load_once(client.clone(), &opts, WAIT).await else {
        panic!("a silent server loaded");
    };
    assert!(
        err.to_string()
            .starts_with("the API server did not answer within 500ms: no connection, or a connection that stays silent"),
        "{err}"
    );
    assert!(
        started.elapsed() < WAIT,
        "it gave up at the first-answer bound"
    );

    let (tx, rx) = std::sync::mpsc::channel();
    let task = tokio::spawn(live::run_with(
        client,
        opts,
        tx,
        live::LiveControl::default(),
    ));
    let mut last = None;
    let u = wait_for(&rx, &mut last, "the silent-server status", |u| {
        matches!(&u.status, Some(SourceStatus::Connecting { error: Some(e) })
            if e.contains("did not answer within 500ms"))
    })
    .await;
    assert_eq!(u.cluster.pod_count(), 0);
    task.abort();
    held.abort();
}

/// Live, the API server's `/version` is the release replayed and named as such; a
/// snapshot `snapshot save` wrote records it and replays the same; `--kube-version`
/// wins over both.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_servers_version_is_replayed_live_and_recorded_by_save() {
    let dir = format!(
        "{}/tests/fidelity-versions/v13-dra-claim-gate-off-1.33",
        env!("CARGO_MANIFEST_DIR")
    );
    let expected = |file: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(format!("{dir}/{file}")).unwrap()).unwrap()
    };
    let api = FakeApi::start().await;
    for o in yaml_objects(&format!("{dir}/snapshot.yaml")) {
        let kind = o["kind"].as_str().unwrap().to_string();
        api.apply(plural_of(&kind), o);
    }
    api.serve_version("v1.33.3+k3s1");
    let live = explain_live_json(&api, "default/pending", "version").await;
    assert_eq!(live["kube_version"]["version"], "v1.33.3");
    assert_eq!(live["kube_version"]["source"], "api_server");
    assert_eq!(
        live["best_nodes"],
        expected("expected-1.33.json")["best_nodes"]
    );

    let (objects, _) = save::fetch_objects(&api.client(), &LiveOptions::default(), false)
        .await
        .expect("save");
    let file = std::env::temp_dir().join(format!("schedscope-version-{}.yaml", std::process::id()));
    save::write_objects(&objects, &file).unwrap();
    let run = |extra: &[&str]| -> Value {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_schedscope"))
            .args([
                "explain",
                "-s",
                file.to_str().unwrap(),
                "default/pending",
                "-o",
                "json",
            ])
            .args(extra)
            .output()
            .expect("run");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).expect("json")
    };
    let saved = run(&[]);
    assert_eq!(saved["kube_version"]["source"], "snapshot");
    assert_eq!(saved["best_nodes"], live["best_nodes"]);
    let flagged = run(&["--kube-version", "1.35"]);
    assert_eq!(flagged["kube_version"]["source"], "flag");
    assert_eq!(
        flagged["best_nodes"],
        expected("expected-1.35.json")["best_nodes"]
    );
    let _ = std::fs::remove_file(file);
}

/// An endless list body (issue 26 item 5) fails the load and the save with the
/// resource and the bound, instead of growing until memory runs out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endless_list_body_is_refused_at_its_bound() {
    let api = FakeApi::start().await;
    seed(&api);
    api.endless_list("pods");
    let client = live::bounded::client(kube::Config::new(api.url().parse().unwrap())).unwrap();
    let opts = LiveOptions::default();
    let bound = format!(
        "passed {} MiB",
        live::bounded::MAX_LIST_RESPONSE_BYTES >> 20
    );
    let Err(err) = live::load_once(client.clone(), &opts, WAIT).await else {
        panic!("an endless list loaded");
    };
    let err = err.to_string();
    assert!(
        err.contains("/api/v1/pods") && err.contains(&bound),
        "{err}"
    );
    let Err(err) = save::fetch_objects_within(&client, &opts, false, WAIT).await else {
        panic!("an endless list was saved");
    };
    let err = err.to_string();
    assert!(err.contains("pods") && err.contains(&bound), "{err}");
}
