//! A small Kubernetes API server for tests, on 127.0.0.1 only: list (with
//! resourceVersion, limit/continue, a simple fieldSelector), watch streams
//! (ADDED / MODIFIED / DELETED / BOOKMARK, `410 Gone` as an ERROR event for a
//! compacted resourceVersion) and faults: watch streams cut (cleanly or abruptly),
//! 500 answers, and a restart with new resourceVersions.

#![allow(dead_code)]

use std::collections::{BTreeMap, VecDeque};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use futures::SinkExt;
use futures::channel::mpsc as fmpsc;
use http_body_util::{BodyExt, Full, StreamBody, combinators::BoxBody};
use hyper::body::{Frame, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::net::TcpSocket;
use tokio::sync::broadcast;
use tokio::task::JoinHandle;

type Body = BoxBody<Bytes, std::io::Error>;

/// (group, version, plural, kind, namespaced)
pub const RESOURCES: &[(&str, &str, &str, &str, bool)] = &[
    ("", "v1", "nodes", "Node", false),
    ("", "v1", "pods", "Pod", true),
    ("", "v1", "events", "Event", true),
    ("", "v1", "persistentvolumes", "PersistentVolume", false),
    (
        "",
        "v1",
        "persistentvolumeclaims",
        "PersistentVolumeClaim",
        true,
    ),
    ("", "v1", "namespaces", "Namespace", false),
    ("", "v1", "services", "Service", true),
    (
        "",
        "v1",
        "replicationcontrollers",
        "ReplicationController",
        true,
    ),
    (
        "storage.k8s.io",
        "v1",
        "storageclasses",
        "StorageClass",
        false,
    ),
    ("storage.k8s.io", "v1", "csinodes", "CSINode", false),
    ("storage.k8s.io", "v1", "csidrivers", "CSIDriver", false),
    (
        "storage.k8s.io",
        "v1",
        "volumeattachments",
        "VolumeAttachment",
        false,
    ),
    (
        "policy",
        "v1",
        "poddisruptionbudgets",
        "PodDisruptionBudget",
        true,
    ),
    (
        "scheduling.k8s.io",
        "v1",
        "priorityclasses",
        "PriorityClass",
        false,
    ),
    ("apps", "v1", "replicasets", "ReplicaSet", true),
    ("apps", "v1", "statefulsets", "StatefulSet", true),
    ("coordination.k8s.io", "v1", "leases", "Lease", true),
    (
        "resource.k8s.io",
        "v1",
        "deviceclasses",
        "DeviceClass",
        false,
    ),
    (
        "resource.k8s.io",
        "v1",
        "resourceslices",
        "ResourceSlice",
        false,
    ),
    (
        "resource.k8s.io",
        "v1",
        "resourceclaims",
        "ResourceClaim",
        true,
    ),
    (
        "resource.k8s.io",
        "v1",
        "resourceclaimtemplates",
        "ResourceClaimTemplate",
        true,
    ),
    (
        "storage.k8s.io",
        "v1",
        "csistoragecapacities",
        "CSIStorageCapacity",
        true,
    ),
];

struct Res {
    api_version: String,
    kind: String,
    namespaced: bool,
    /// `namespace/name` or `name` → object.
    objects: BTreeMap<String, Value>,
    /// (resourceVersion, type, object) after `min_rv`.
    history: VecDeque<(u64, &'static str, Value)>,
}

#[derive(Clone, Debug)]
enum Msg {
    Event {
        plural: String,
        rv: u64,
        kind: &'static str,
        obj: Value,
    },
    Bookmark,
    Cut {
        abrupt: bool,
    },
}

struct State {
    rv: u64,
    /// Watches from below this resourceVersion are answered 410 Gone.
    min_rv: u64,
    /// Resources (plurals) whose list and watch are answered 403, as RBAC would.
    forbidden: std::collections::BTreeSet<String>,
    /// Resources (plurals) whose list is answered with a body that never ends.
    endless: std::collections::BTreeSet<String>,
    /// What `/version` says (`gitVersion`); `None`: 404, as before it was served.
    git_version: Option<String>,
    resources: BTreeMap<String, Res>,
    fail_next: u32,
    requests: u64,
    /// Resource (plural) of every request, in order.
    paths: Vec<String>,
    bus: broadcast::Sender<Msg>,
    /// Every request that is not a GET: (method, path), in order.
    writes: Vec<(String, String)>,
    /// Lease requests still to fail, and with which HTTP code.
    lease_failures: u32,
    lease_failure_code: u16,
    /// Every Lease request fails with this HTTP code until it is cleared.
    leases_down: Option<u16>,
}

pub struct FakeApi {
    state: Arc<Mutex<State>>,
    pub addr: SocketAddr,
    server: Mutex<Option<JoinHandle<()>>>,
    conns: Arc<Mutex<Vec<JoinHandle<()>>>>,
}

fn key_of(o: &Value) -> String {
    let m = &o["metadata"];
    let name = m["name"].as_str().unwrap_or_default();
    match m["namespace"].as_str() {
        Some(ns) => format!("{ns}/{name}"),
        None => name.to_string(),
    }
}

fn status(code: u16, reason: &str, message: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Status", "metadata": {}, "status": "Failure",
           "message": message, "reason": reason, "code": code})
}

/// A List response (`kind: PodList` ...), borrowing its items from the store.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct ListBody<'a> {
    api_version: &'a str,
    kind: String,
    metadata: Value,
    items: Vec<&'a Value>,
}

fn full(code: StatusCode, v: &Value) -> Response<Body> {
    full_bytes(code, v.to_string().into_bytes())
}

fn full_bytes(code: StatusCode, body: Vec<u8>) -> Response<Body> {
    let body = Full::new(Bytes::from(body))
        .map_err(|e: Infallible| match e {})
        .boxed();
    Response::builder()
        .status(code)
        .header("content-type", "application/json")
        .body(body)
        .expect("response")
}

impl FakeApi {
    pub async fn start() -> Arc<FakeApi> {
        let (bus, _) = broadcast::channel(1 << 16);
        let mut resources = BTreeMap::new();
        for (g, v, plural, kind, namespaced) in RESOURCES {
            let api_version = if g.is_empty() {
                v.to_string()
            } else {
                format!("{g}/{v}")
            };
            resources.insert(
                plural.to_string(),
                Res {
                    api_version,
                    kind: kind.to_string(),
                    namespaced: *namespaced,
                    objects: BTreeMap::new(),
                    history: VecDeque::new(),
                },
            );
        }
        let state = Arc::new(Mutex::new(State {
            rv: 1000,
            min_rv: 0,
            forbidden: Default::default(),
            endless: Default::default(),
            git_version: None,
            resources,
            fail_next: 0,
            requests: 0,
            paths: Vec::new(),
            bus,
            writes: Vec::new(),
            lease_failures: 0,
            lease_failure_code: 503,
            leases_down: None,
        }));
        let listener = bind("127.0.0.1:0".parse().expect("addr"));
        let addr = listener.local_addr().expect("local addr");
        let api = Arc::new(FakeApi {
            state,
            addr,
            server: Mutex::new(None),
            conns: Arc::new(Mutex::new(Vec::new())),
        });
        api.serve(listener);
        api
    }

    /// A cluster of `nodes` nodes (three zones) and `pods` pods, one in a thousand
    /// pending and the rest bound round-robin: the shape the live start-up is
    /// measured on (`examples/fake_apiserver.rs`, `benches/live.rs`).
    pub fn populate(&self, nodes: usize, pods: usize) {
        for ns in ["default", "kube-system", "team-a", "team-b"] {
            self.apply("namespaces", json!({"metadata": {"name": ns}}));
        }
        for i in 0..nodes {
            let zone = format!("zone-{}", i % 3);
            self.apply(
                "nodes",
                json!({"metadata": {"name": format!("node-{i:05}"), "labels": {
                    "kubernetes.io/hostname": format!("node-{i:05}"),
                    "topology.kubernetes.io/zone": zone}},
                  "status": {"allocatable": {"cpu": "32", "memory": "128Gi", "pods": "110"},
                             "capacity": {"cpu": "32", "memory": "128Gi", "pods": "110"},
                             "conditions": [{"type": "Ready", "status": "True"}],
                             "images": [{"names": ["registry.example.com/app:1.0"], "sizeBytes": 180000000}]}}),
            );
        }
        for i in 0..pods {
            let ns = ["default", "team-a", "team-b"][i % 3];
            let mut p = json!({"metadata": {"name": format!("pod-{i:06}"), "namespace": ns,
                    "uid": format!("uid-{i}"), "labels": {"app": format!("app-{}", i % 500), "tier": "web"},
                    "creationTimestamp": "2026-01-01T00:00:00Z"},
                "spec": {"schedulerName": "default-scheduler", "priority": 0,
                    "containers": [{"name": "main", "image": "registry.example.com/app:1.0",
                        "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
                        "ports": [{"containerPort": 8080}]}],
                    "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists",
                                     "effect": "NoExecute", "tolerationSeconds": 300}]},
                "status": {"phase": "Running"}});
            // Every 1000th pod pending.
            if i % 1000 == 0 {
                p["status"] = json!({"phase": "Pending"});
            } else {
                p["spec"]["nodeName"] = json!(format!("node-{:05}", i % nodes.max(1)));
            }
            self.apply("pods", p);
        }
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// A kubeconfig naming this server, written into `dir` (for the binary).
    pub fn write_kubeconfig(&self, dir: &std::path::Path) -> std::path::PathBuf {
        std::fs::create_dir_all(dir).expect("kubeconfig dir");
        let path = dir.join("kubeconfig");
        std::fs::write(
            &path,
            format!(
                "apiVersion: v1\nkind: Config\ncurrent-context: test\nclusters:\n- name: t\n  cluster:\n    server: {}\ncontexts:\n- name: test\n  context:\n    cluster: t\n    user: u\nusers:\n- name: u\n  user: {{}}\n",
                self.url()
            ),
        )
        .expect("kubeconfig");
        path
    }

    pub fn client(&self) -> kube::Client {
        let config = kube::Config::new(self.url().parse().expect("url"));
        kube::Client::try_from(config).expect("client")
    }

    fn serve(self: &Arc<Self>, listener: tokio::net::TcpListener) {
        let state = self.state.clone();
        let conns = self.conns.clone();
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let state = state.clone();
                let conn = tokio::spawn(async move {
                    let svc = service_fn(move |req: Request<Incoming>| {
                        let state = state.clone();
                        async move {
                            let path = req.uri().path().to_string();
                            if req.method() != hyper::Method::GET || object_route(&path).is_some() {
                                let method = req.method().to_string();
                                let body = req
                                    .into_body()
                                    .collect()
                                    .await
                                    .map(|b| b.to_bytes())
                                    .unwrap_or_default();
                                return Ok::<_, Infallible>(handle_object(
                                    &state, &method, &path, &body,
                                ));
                            }
                            Ok::<_, Infallible>(handle(state, req))
                        }
                    });
                    let _ = http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), svc)
                        .await;
                });
                let mut c = conns.lock().expect("conns");
                c.retain(|h| !h.is_finished());
                c.push(conn);
            }
        });
        *self.server.lock().expect("server") = Some(task);
    }

    /// Add or replace an object (ADDED or MODIFIED).
    pub fn apply(&self, plural: &str, mut obj: Value) {
        let mut st = self.state.lock().expect("state");
        st.rv += 1;
        let rv = st.rv;
        obj["metadata"]["resourceVersion"] = json!(rv.to_string());
        let res = st.resources.get_mut(plural).expect("resource");
        obj["apiVersion"] = json!(res.api_version);
        obj["kind"] = json!(res.kind);
        if res.namespaced && obj["metadata"]["namespace"].is_null() {
            obj["metadata"]["namespace"] = json!("default");
        }
        let key = key_of(&obj);
        let kind = if res.objects.insert(key, obj.clone()).is_some() {
            "MODIFIED"
        } else {
            "ADDED"
        };
        res.history.push_back((rv, kind, obj.clone()));
        let _ = st.bus.send(Msg::Event {
            plural: plural.into(),
            rv,
            kind,
            obj,
        });
    }

    pub fn delete(&self, plural: &str, key: &str) {
        let mut st = self.state.lock().expect("state");
        st.rv += 1;
        let rv = st.rv;
        let res = st.resources.get_mut(plural).expect("resource");
        if let Some(mut obj) = res.objects.remove(key) {
            obj["metadata"]["resourceVersion"] = json!(rv.to_string());
            res.history.push_back((rv, "DELETED", obj.clone()));
            let _ = st.bus.send(Msg::Event {
                plural: plural.into(),
                rv,
                kind: "DELETED",
                obj,
            });
        }
    }

    /// Serve a resource the default set lacks (a CRD).
    pub fn add_resource(&self, plural: &str, api_version: &str, kind: &str, namespaced: bool) {
        self.state.lock().expect("state").resources.insert(
            plural.into(),
            Res {
                api_version: api_version.into(),
                kind: kind.into(),
                namespaced,
                objects: BTreeMap::new(),
                history: VecDeque::new(),
            },
        );
    }

    pub fn objects(&self, plural: &str) -> BTreeMap<String, Value> {
        self.state.lock().expect("state").resources[plural]
            .objects
            .clone()
    }

    pub fn bookmark(&self) {
        let _ = self.state.lock().expect("state").bus.send(Msg::Bookmark);
    }

    /// End every open watch stream: cleanly (the response ends) or abruptly (the
    /// connection breaks mid-body).
    pub fn cut_watches(&self, abrupt: bool) {
        let _ = self
            .state
            .lock()
            .expect("state")
            .bus
            .send(Msg::Cut { abrupt });
    }

    /// Answer the next `n` requests with 500.
    pub fn fail_requests(&self, n: u32) {
        self.state.lock().expect("state").fail_next = n;
    }

    /// Answer the next `n` requests for Leases with `code` (403, 503, ...).
    pub fn fail_lease_requests(&self, n: u32, code: u16) {
        let mut st = self.state.lock().expect("state");
        st.lease_failures = n;
        st.lease_failure_code = code;
    }

    /// While `Some(code)`, every request for a Lease is answered with `code`.
    pub fn set_leases_down(&self, code: Option<u16>) {
        self.state.lock().expect("state").leases_down = code;
    }

    /// Resources (plurals) requested so far, deduplicated and sorted.
    pub fn resources_requested(&self) -> Vec<String> {
        let mut v = self.state.lock().expect("state").paths.clone();
        v.sort();
        v.dedup();
        v
    }

    /// Every non-GET request so far: (method, path).
    pub fn writes(&self) -> Vec<(String, String)> {
        self.state.lock().expect("state").writes.clone()
    }

    pub fn requests(&self) -> u64 {
        self.state.lock().expect("state").requests
    }

    /// Forget history older than now: watches from an older resourceVersion get
    /// 410 Gone.
    pub fn compact(&self) {
        let mut st = self.state.lock().expect("state");
        st.min_rv = st.rv;
        for r in st.resources.values_mut() {
            r.history.clear();
        }
    }

    /// Stop serving (every connection dropped), let `down` pass, then serve again on
    /// the same port with resourceVersions far above the old ones and no history,
    /// as an API server restored from a backup would. `while_down` changes the
    /// objects in between (no event is ever sent for those changes).
    pub async fn restart(self: &Arc<Self>, down: Duration, while_down: impl FnOnce(&FakeApi)) {
        let server = self.server.lock().expect("server").take();
        if let Some(t) = server {
            t.abort();
            let _ = t.await;
        }
        for c in self.conns.lock().expect("conns").drain(..) {
            c.abort();
        }
        while_down(self);
        {
            let mut st = self.state.lock().expect("state");
            st.rv += 1_000_000;
            st.min_rv = st.rv;
            let rv = st.rv;
            for r in st.resources.values_mut() {
                r.history.clear();
                for o in r.objects.values_mut() {
                    o["metadata"]["resourceVersion"] = json!(rv.to_string());
                }
            }
        }
        tokio::time::sleep(down).await;
        let listener = bind(self.addr);
        self.serve(listener);
    }

    /// Serve `/version` with this `gitVersion` (a real API server always does; the
    /// tests written before it was read keep a server that does not).
    pub fn serve_version(&self, git_version: &str) {
        self.state.lock().expect("state").git_version = Some(git_version.to_string());
    }

    /// Answer lists of `plural` with a body that never ends (`[[[[...`).
    pub fn endless_list(&self, plural: &str) {
        self.state
            .lock()
            .expect("state")
            .endless
            .insert(plural.to_string());
    }

    /// Answer list and watch of `plural` with 403 Forbidden (RBAC without it), or
    /// serve it again.
    pub fn forbid(&self, plural: &str, forbidden: bool) {
        let mut st = self.state.lock().expect("state");
        if forbidden {
            st.forbidden.insert(plural.to_string());
        } else {
            st.forbidden.remove(plural);
        }
    }

    /// Stop serving: every connection is dropped and new ones are refused until
    /// [`FakeApi::come_back`]. Objects may change meanwhile; no event is ever sent
    /// for those changes (the history is forgotten on the way back).
    pub async fn go_down(&self) {
        let server = self.server.lock().expect("server").take();
        if let Some(t) = server {
            t.abort();
            let _ = t.await;
        }
        for c in self.conns.lock().expect("conns").drain(..) {
            c.abort();
        }
    }

    /// Serve again on the same port after [`FakeApi::go_down`], with
    /// resourceVersions far above the old ones, as a restored API server has.
    pub fn come_back(self: &Arc<Self>) {
        {
            let mut st = self.state.lock().expect("state");
            st.rv += 1_000_000;
            st.min_rv = st.rv;
            let rv = st.rv;
            for r in st.resources.values_mut() {
                r.history.clear();
                for o in r.objects.values_mut() {
                    o["metadata"]["resourceVersion"] = json!(rv.to_string());
                }
            }
        }
        self.serve(bind(self.addr));
    }
}

fn bind(addr: SocketAddr) -> tokio::net::TcpListener {
    let sock = TcpSocket::new_v4().expect("socket");
    sock.set_reuseaddr(true).expect("reuseaddr");
    sock.bind(addr).expect("bind");
    sock.listen(1024).expect("listen")
}

fn query(req: &Request<Incoming>) -> BTreeMap<String, String> {
    req.uri()
        .query()
        .unwrap_or_default()
        .split('&')
        .filter(|s| !s.is_empty())
        .map(|kv| {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            (k.to_string(), percent_decode(v))
        })
        .collect()
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 2 < b.len()
            && let Ok(v) = u8::from_str_radix(&s[i + 1..i + 3], 16)
        {
            out.push(v);
            i += 3;
        } else if b[i] == b'+' {
            out.push(b' ');
            i += 1;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `(plural, namespace)` from `/api/v1/...` or `/apis/G/V/...`.
fn route(path: &str) -> Option<(String, Option<String>)> {
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    let rest = match segs.as_slice() {
        ["api", "v1", rest @ ..] => rest,
        ["apis", _, _, rest @ ..] => rest,
        _ => return None,
    };
    match rest {
        [plural] => Some((plural.to_string(), None)),
        ["namespaces", ns, plural] => Some((plural.to_string(), Some(ns.to_string()))),
        _ => None,
    }
}

/// `a=b,c=d` on top-level or dotted fields.
fn field_match(obj: &Value, selector: Option<&String>) -> bool {
    let Some(sel) = selector else { return true };
    sel.split(',').filter(|s| !s.is_empty()).all(|term| {
        let Some((path, want)) = term.split_once('=') else {
            return true;
        };
        let mut v = obj;
        for p in path.split('.') {
            v = &v[p];
        }
        v.as_str() == Some(want)
    })
}

fn handle(state: Arc<Mutex<State>>, req: Request<Incoming>) -> Response<Body> {
    // The server's release, as a real API server serves it (not counted as a
    // request of the resources: tests count and fail those).
    let served = state.lock().expect("state").git_version.clone();
    if req.uri().path() == "/version"
        && let Some(git_version) = served
    {
        return full(
            StatusCode::OK,
            &json!({
                "major": "1", "minor": "34", "gitVersion": git_version,
                "gitCommit": "0", "gitTreeState": "clean", "buildDate": "2025-01-01T00:00:00Z",
                "goVersion": "go1.24.0", "compiler": "gc", "platform": "linux/amd64",
            }),
        );
    }
    let q = query(&req);
    let mut st = state.lock().expect("state");
    st.requests += 1;
    if st.fail_next > 0 {
        st.fail_next -= 1;
        return full(
            StatusCode::INTERNAL_SERVER_ERROR,
            &status(500, "InternalError", "injected failure"),
        );
    }
    let routed = route(req.uri().path());
    if let Some((p, _)) = &routed {
        st.paths.push(p.clone());
    }
    let Some((plural, ns)) = routed else {
        return full(
            StatusCode::NOT_FOUND,
            &status(
                404,
                "NotFound",
                "the server could not find the requested resource",
            ),
        );
    };
    if st.forbidden.contains(&plural) {
        return forbidden(&st, &plural, &q);
    }
    if st.endless.contains(&plural) {
        let chunk = Bytes::from(vec![b'['; 64 << 10]);
        let frames = futures::stream::repeat_with(move || Ok(Frame::data(chunk.clone())));
        return Response::builder()
            .status(StatusCode::OK)
            .header("content-type", "application/json")
            .body(BodyExt::boxed(StreamBody::new(frames)))
            .expect("response");
    }
    let Some(res) = st.resources.get(&plural) else {
        return full(
            StatusCode::NOT_FOUND,
            &status(
                404,
                "NotFound",
                "the server could not find the requested resource",
            ),
        );
    };
    let selector = q.get("fieldSelector");
    let in_scope = |o: &Value| {
        ns.as_deref()
            .is_none_or(|n| o["metadata"]["namespace"].as_str() == Some(n))
            && field_match(o, selector)
    };
    let watch = matches!(q.get("watch").map(String::as_str), Some("true" | "1"));
    if !watch {
        let limit: usize = q
            .get("limit")
            .and_then(|c| c.parse().ok())
            .filter(|&l| l > 0)
            .unwrap_or(usize::MAX);
        // The continue token is the last key listed: each page starts where the
        // last ended, as the API server's is a position in its store, so that
        // paging through N objects costs N, not N x pages.
        let from = match q.get("continue") {
            Some(key) => std::ops::Bound::Excluded(key.clone()),
            None => std::ops::Bound::Unbounded,
        };
        let mut scoped = res
            .objects
            .range((from, std::ops::Bound::Unbounded))
            .filter(|(_, o)| in_scope(o));
        let page: Vec<(&String, &Value)> = scoped.by_ref().take(limit).collect();
        let items: Vec<&Value> = page.iter().map(|(_, o)| *o).collect();
        let mut meta = json!({"resourceVersion": st.rv.to_string()});
        if let Some((last, _)) = page.last()
            && scoped.next().is_some()
        {
            meta["continue"] = json!(last);
        }
        // Written straight from the stored objects: `json!` would first copy the
        // whole page into a new tree, which cost as much as the inspector's own
        // decoding when a bench lists 450,000 pods.
        let list = ListBody {
            api_version: &res.api_version,
            kind: format!("{}List", res.kind),
            metadata: meta,
            items,
        };
        let body = serde_json::to_vec(&list).expect("a list serializes");
        return full_bytes(StatusCode::OK, body);
    }

    // Watch.
    let from: u64 = q
        .get("resourceVersion")
        .and_then(|v| v.parse().ok())
        .unwrap_or(st.rv);
    let bookmarks = q.get("allowWatchBookmarks").map(String::as_str) == Some("true");
    let timeout = q
        .get("timeoutSeconds")
        .and_then(|t| t.parse().ok())
        .unwrap_or(300u64);
    let (mut tx, rx) = fmpsc::channel::<Result<Frame<Bytes>, std::io::Error>>(1024);
    let line = |v: Value| Ok(Frame::data(Bytes::from(format!("{v}\n"))));
    let mut first: Vec<Result<Frame<Bytes>, std::io::Error>> = Vec::new();
    let gone = from < st.min_rv || from > st.rv;
    if gone {
        first.push(line(
            json!({"type": "ERROR", "object": status(410, "Expired",
            &format!("too old resource version: {from} ({})", st.min_rv))}),
        ));
    } else {
        for (rv, kind, obj) in &res.history {
            if *rv > from && in_scope(obj) {
                first.push(line(json!({"type": kind, "object": obj})));
            }
        }
    }
    let api_version = res.api_version.clone();
    let kind_name = res.kind.clone();
    let mut sub = st.bus.subscribe();
    drop(st);
    let ns2 = ns.clone();
    let selector = selector.cloned();
    let state2 = state.clone();
    tokio::spawn(async move {
        for f in first {
            if tx.send(f).await.is_err() {
                return;
            }
        }
        if gone {
            return;
        }
        let deadline = tokio::time::sleep(Duration::from_secs(timeout));
        let mut deadline = std::pin::pin!(deadline);
        loop {
            let msg = tokio::select! {
                m = sub.recv() => m,
                _ = &mut deadline => return,
            };
            let out = match msg {
                Ok(Msg::Event {
                    plural: p,
                    kind,
                    obj,
                    ..
                }) => {
                    let ok = p == plural
                        && ns2
                            .as_deref()
                            .is_none_or(|n| obj["metadata"]["namespace"].as_str() == Some(n))
                        && field_match(&obj, selector.as_ref());
                    if !ok {
                        continue;
                    }
                    line(json!({"type": kind, "object": obj}))
                }
                Ok(Msg::Bookmark) => {
                    if !bookmarks {
                        continue;
                    }
                    let rv = state2.lock().expect("state").rv;
                    line(json!({"type": "BOOKMARK", "object": {
                        "apiVersion": api_version, "kind": kind_name,
                        "metadata": {"resourceVersion": rv.to_string()}}}))
                }
                Ok(Msg::Cut { abrupt: false }) => return,
                Ok(Msg::Cut { abrupt: true }) => {
                    let _ = tx.send(Err(std::io::Error::other("connection cut"))).await;
                    return;
                }
                // Fell behind the bus: end the stream; the client resumes from its
                // last resourceVersion.
                Err(_) => return,
            };
            if tx.send(out).await.is_err() {
                return;
            }
        }
    });
    let body = BodyExt::boxed(StreamBody::new(rx));
    Response::builder()
        .status(StatusCode::OK)
        .header("content-type", "application/json")
        .body(body)
        .expect("response")
}

/// 403 for `plural`, worded as the API server's authorizer words it.
fn forbidden(st: &State, plural: &str, q: &BTreeMap<String, String>) -> Response<Body> {
    let verb = if matches!(q.get("watch").map(String::as_str), Some("true" | "1")) {
        "watch"
    } else {
        "list"
    };
    let group = st
        .resources
        .get(plural)
        .and_then(|r| r.api_version.split_once('/').map(|(g, _)| g.to_string()))
        .unwrap_or_default();
    let resource = if group.is_empty() {
        plural.to_string()
    } else {
        format!("{plural}.{group}")
    };
    let msg = format!(
        "{resource} is forbidden: User \"system:serviceaccount:kube-system:schedscope\" cannot \
         {verb} resource \"{plural}\" in API group \"{group}\" at the cluster scope"
    );
    full(StatusCode::FORBIDDEN, &status(403, "Forbidden", &msg))
}

/// `(plural, namespace, name, subresource)` of a path naming one object.
fn object_route(path: &str) -> Option<(String, String, String, Option<String>)> {
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    let rest = match segs.as_slice() {
        ["api", "v1", rest @ ..] => rest,
        ["apis", _, _, rest @ ..] => rest,
        _ => return None,
    };
    match rest {
        ["namespaces", ns, plural, name] => {
            Some((plural.to_string(), ns.to_string(), name.to_string(), None))
        }
        ["namespaces", ns, plural, name, sub] => Some((
            plural.to_string(),
            ns.to_string(),
            name.to_string(),
            Some(sub.to_string()),
        )),
        _ => None,
    }
}

fn not_found(what: &str) -> Response<Body> {
    full(
        StatusCode::NOT_FOUND,
        &status(404, "NotFound", &format!("{what} not found")),
    )
}

/// Store `obj` under `plural` as [`FakeApi::apply`] does (new resourceVersion, a
/// watch event), returning the stored object.
fn store(st: &mut State, plural: &str, mut obj: Value) -> Value {
    if plural == "events" {
        core_event_fields(&mut obj);
    }
    st.rv += 1;
    let rv = st.rv;
    obj["metadata"]["resourceVersion"] = json!(rv.to_string());
    let Some(res) = st.resources.get_mut(plural) else {
        return obj;
    };
    obj["apiVersion"] = json!(res.api_version);
    obj["kind"] = json!(res.kind);
    let key = key_of(&obj);
    let kind = if res.objects.insert(key, obj.clone()).is_some() {
        "MODIFIED"
    } else {
        "ADDED"
    };
    res.history.push_back((rv, kind, obj.clone()));
    let _ = st.bus.send(Msg::Event {
        plural: plural.into(),
        rv,
        kind,
        obj: obj.clone(),
    });
    obj
}

/// One storage serves both Event APIs, as on a real API server: an
/// `events.k8s.io/v1` Event gets the `v1` names of its fields too, so that a
/// `v1` reader (the live source's FailedScheduling watch) sees it.
fn core_event_fields(obj: &mut Value) {
    for (new, old) in [
        ("regarding", "involvedObject"),
        ("related", "related"),
        ("note", "message"),
        ("reportingController", "reportingComponent"),
    ] {
        if let Some(v) = obj.get(new).cloned() {
            obj[old] = v;
        }
    }
}

/// Strategic merge of `patch` into `into`, enough for status conditions (merged by
/// `type`) and plain maps.
fn merge(into: &mut Value, patch: &Value) {
    match (into, patch) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in b {
                if k == "conditions"
                    && let (Some(have), Some(new)) =
                        (a.get_mut(k).and_then(Value::as_array_mut), v.as_array())
                {
                    for c in new {
                        match have.iter_mut().find(|h| h["type"] == c["type"]) {
                            Some(h) => merge(h, c),
                            None => have.push(c.clone()),
                        }
                    }
                    continue;
                }
                if v.is_null() {
                    a.remove(k);
                } else {
                    merge(a.entry(k.clone()).or_insert(Value::Null), v);
                }
            }
        }
        (a, b) => *a = b.clone(),
    }
}

/// GET of one object, and the writes schedscope's `--act` makes: POST (create, or
/// `pods/{name}/binding`), PUT (replace with a resourceVersion check), PATCH
/// (`pods/{name}/status`, strategic merge).
fn handle_object(state: &Mutex<State>, method: &str, path: &str, body: &[u8]) -> Response<Body> {
    let mut st = state.lock().expect("state");
    st.requests += 1;
    if method != "GET" {
        st.writes.push((method.to_string(), path.to_string()));
    }
    let body: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let plural_of = object_route(path)
        .map(|(p, ..)| p)
        .or_else(|| route(path).map(|(p, _)| p));
    if plural_of.as_deref() == Some("leases") && (st.leases_down.is_some() || st.lease_failures > 0)
    {
        let code = match st.leases_down {
            Some(code) => code,
            None => {
                st.lease_failures -= 1;
                st.lease_failure_code
            }
        };
        let reason = match code {
            403 => "Forbidden",
            503 => "ServiceUnavailable",
            _ => "InternalError",
        };
        let msg = format!("injected Lease failure ({code})");
        return full(
            StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            &status(code, reason, &msg),
        );
    }
    if let Some((plural, ns, name, sub)) = object_route(path) {
        st.paths.push(plural.clone());
        let key = format!("{ns}/{name}");
        let Some(current) = st
            .resources
            .get(&plural)
            .and_then(|r| r.objects.get(&key))
            .cloned()
        else {
            return not_found(&format!("{plural} {name:?}"));
        };
        return match (method, sub.as_deref()) {
            ("GET", None) => full(StatusCode::OK, &current),
            ("POST", Some("binding")) if plural == "pods" => {
                if current["spec"]["nodeName"]
                    .as_str()
                    .is_some_and(|n| !n.is_empty())
                {
                    let msg = format!(
                        "pod {name} is already assigned to node {}",
                        current["spec"]["nodeName"]
                    );
                    return full(StatusCode::CONFLICT, &status(409, "Conflict", &msg));
                }
                let Some(node) = body["target"]["name"].as_str() else {
                    return full(
                        StatusCode::BAD_REQUEST,
                        &status(400, "BadRequest", "no target"),
                    );
                };
                let mut pod = current;
                pod["spec"]["nodeName"] = json!(node);
                store(&mut st, "pods", pod);
                let ok = json!({"apiVersion": "v1", "kind": "Status", "metadata": {},
                                "status": "Success", "code": 201});
                full(StatusCode::CREATED, &ok)
            }
            ("PATCH", Some("status")) => {
                let mut obj = current;
                let patch = json!({"status": body["status"].clone()});
                merge(&mut obj, &patch);
                let stored = store(&mut st, &plural, obj);
                full(StatusCode::OK, &stored)
            }
            // Merge patch of a whole object (an Event's count).
            ("PATCH", None) => {
                let mut obj = current;
                merge(&mut obj, &body);
                let stored = store(&mut st, &plural, obj);
                full(StatusCode::OK, &as_served(path, stored))
            }
            ("DELETE", None) => {
                let want = body["preconditions"]["uid"].as_str();
                if want.is_some_and(|u| Some(u) != current["metadata"]["uid"].as_str()) {
                    let msg = format!("Precondition failed: UID in precondition: {want:?}");
                    return full(StatusCode::CONFLICT, &status(409, "Conflict", &msg));
                }
                st.rv += 1;
                let rv = st.rv;
                let mut obj = current;
                obj["metadata"]["resourceVersion"] = json!(rv.to_string());
                if let Some(res) = st.resources.get_mut(&plural) {
                    res.objects.remove(&key);
                    res.history.push_back((rv, "DELETED", obj.clone()));
                }
                let _ = st.bus.send(Msg::Event {
                    plural: plural.clone(),
                    rv,
                    kind: "DELETED",
                    obj: obj.clone(),
                });
                full(StatusCode::OK, &obj)
            }
            ("PUT", None) => {
                let want = body["metadata"]["resourceVersion"].as_str();
                if want.is_some_and(|v| Some(v) != current["metadata"]["resourceVersion"].as_str())
                {
                    let msg = format!(
                        "Operation cannot be fulfilled on {plural} {name:?}: the object has been modified"
                    );
                    return full(StatusCode::CONFLICT, &status(409, "Conflict", &msg));
                }
                let stored = store(&mut st, &plural, body);
                full(StatusCode::OK, &stored)
            }
            _ => full(
                StatusCode::METHOD_NOT_ALLOWED,
                &status(405, "MethodNotAllowed", "not served by the fake"),
            ),
        };
    }
    // POST to a collection: create.
    let Some((plural, ns)) = route(path) else {
        return not_found(path);
    };
    st.paths.push(plural.clone());
    if method != "POST" || !st.resources.contains_key(&plural) {
        return full(
            StatusCode::METHOD_NOT_ALLOWED,
            &status(405, "MethodNotAllowed", "not served by the fake"),
        );
    }
    let mut obj = body;
    if let Some(ns) = ns {
        obj["metadata"]["namespace"] = json!(ns);
    }
    let key = key_of(&obj);
    if st.resources[&plural].objects.contains_key(&key) {
        let msg = format!("{plural} {key:?} already exists");
        return full(StatusCode::CONFLICT, &status(409, "AlreadyExists", &msg));
    }
    let stored = store(&mut st, &plural, obj);
    full(StatusCode::CREATED, &as_served(path, stored))
}

/// An object as the API group of `path` serves it (an Event stored once is served
/// by `v1` and `events.k8s.io/v1`).
fn as_served(path: &str, mut obj: Value) -> Value {
    if path.starts_with("/apis/events.k8s.io/v1/") {
        obj["apiVersion"] = json!("events.k8s.io/v1");
    }
    obj
}
