//! The watchers: one kube-rs watcher per kind, pumping changes to the task that
//! owns the state, and the runs built on them (live, once).

use std::sync::Arc;
use std::time::Duration;

use futures::{Stream, StreamExt};
use k8s_openapi::api::apps::v1 as apps;
use k8s_openapi::api::core::v1 as core;
use k8s_openapi::api::policy::v1 as policy;
use k8s_openapi::api::resource::v1 as resource;
use k8s_openapi::api::scheduling::v1 as scheduling;
use k8s_openapi::api::storage::v1 as storage;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind};
use kube::runtime::watcher::{self, Event};
use kube::{Client, Config, Resource, ResourceExt};
use tokio::sync::{mpsc, watch};

use super::connection::{DEBOUNCE, LiveError, LiveOptions, probe};
use super::kinds::Watched;
use super::state::{
    BACKOFF_CAP, BACKOFF_FIRST, Backoff, Failure, KindSpec, LiveControl, LiveState,
    RECHECK_REFUSED, classify,
};
use crate::model::Cluster;
use crate::source::DataUpdate;
use crate::source::convert::{self};
use crate::source::lean_pod::LeanPod;
use crate::source::{SchedulingEvents, SourceStatus};

/// A message from a watcher to the task that owns the state.
pub type Change = Box<dyn FnOnce(&mut LiveState, Timestamp) + Send>;

pub(super) fn now() -> Timestamp {
    crate::clock::wall_clock()
}

pub(super) fn classes_changed<K: Watched>(st: &mut LiveState) {
    if K::KIND == scheduling::PriorityClass::KIND && !st.unadmitted.is_empty() {
        st.readmit();
    }
}

/// How objects of one kind enter the model.
pub(super) struct Ops<K> {
    pub(super) kind: &'static str,
    pub(super) key: fn(&K) -> String,
    pub(super) upsert: fn(K, &mut LiveState),
    pub(super) remove: fn(&str, &mut LiveState),
    pub(super) keys: fn(&LiveState) -> Vec<String>,
}

impl<K> Clone for Ops<K> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<K> Copy for Ops<K> {}

pub(super) fn ops<K: Watched>() -> Ops<K> {
    Ops {
        kind: K::KIND,
        key: |o| o.model_key(),
        upsert: |o, st| {
            o.upsert(st);
            classes_changed::<K>(st);
        },
        remove: K::remove,
        keys: K::keys,
    }
}

/// The change one watcher event makes.
pub(super) fn change<K: Send + 'static>(ops: Ops<K>, ev: Event<K>) -> Change {
    let kind = ops.kind;
    match ev {
        Event::Init => Box::new(move |st, now| st.list_started(kind, now)),
        Event::InitApply(obj) => Box::new(move |st, _| {
            if let Some(l) = st.entry(kind).and_then(|e| e.listing.as_mut()) {
                l.insert((ops.key)(&obj));
            }
            (ops.upsert)(obj, st);
            st.changed = true;
        }),
        Event::InitDone => Box::new(move |st, now| {
            let listed = st.list_done(kind, now);
            for key in (ops.keys)(st) {
                if !listed.contains(&key) {
                    (ops.remove)(&key, st);
                }
            }
            st.changed = true;
        }),
        Event::Apply(obj) => Box::new(move |st, _| {
            (ops.upsert)(obj, st);
            st.changed = true;
        }),
        Event::Delete(obj) => Box::new(move |st, _| {
            (ops.remove)(&(ops.key)(&obj), st);
            st.changed = true;
        }),
    }
}

/// One kind's watcher, for as long as anyone listens: on a failure the watcher is
/// dropped and a new one lists afresh after the backoff (at once on a 410, or when
/// a retry is asked for); after a 404, a minute later.
pub(super) async fn pump<K, S>(
    make: impl Fn() -> S + Send,
    ops: Ops<K>,
    resource: String,
    tx: mpsc::UnboundedSender<Change>,
    mut retry: watch::Receiver<u64>,
) where
    K: Send + 'static,
    S: Stream<Item = Result<Event<K>, watcher::Error>> + Send,
{
    let kind = ops.kind;
    let mut backoff = Backoff::new();
    loop {
        let failure = {
            let mut stream = std::pin::pin!(make());
            loop {
                match stream.next().await {
                    Some(Ok(ev)) => {
                        if matches!(ev, Event::InitDone) {
                            backoff.reset();
                        }
                        if tx.send(change(ops, ev)).is_err() {
                            return;
                        }
                    }
                    Some(Err(e)) => break classify(&e, &resource),
                    // kube's watcher does not end; if it did, list again.
                    None => break Failure::Desync,
                }
            }
        };
        let wait = match &failure {
            Failure::Desync => Duration::ZERO,
            // A 403 is retried like any failure: a restarted API server answers 403
            // until its RBAC caches are filled (seen against a real kube-apiserver),
            // and client-go's reflectors do not tell them apart either.
            Failure::Retry(_) | Failure::Forbidden { .. } => backoff.wait(),
            Failure::NotServed(_) => RECHECK_REFUSED,
        };
        if tx
            .send(Box::new(move |st, now| st.failed(kind, failure, now)))
            .is_err()
        {
            return;
        }
        retry.borrow_and_update();
        tokio::select! {
            _ = tokio::time::sleep(wait) => {}
            r = retry.changed() => if r.is_err() { return },
        }
    }
}

/// `plural.group` of a kind, as RBAC and API errors name it.
pub(in crate::source) fn resource_name<K: Resource<DynamicType = ()>>() -> String {
    let group = K::group(&());
    if group.is_empty() {
        K::plural(&()).into_owned()
    } else {
        format!("{}.{group}", K::plural(&()))
    }
}

/// The coscheduling PodGroup CRD's resource.
pub(crate) fn pod_group_resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("scheduling.x-k8s.io", "v1alpha1", "PodGroup"),
        "podgroups",
    )
}

pub(super) const POD_GROUP: &str = "PodGroup";

pub(super) fn pod_group_ops() -> Ops<DynamicObject> {
    fn key(o: &DynamicObject) -> String {
        format!(
            "{}/{}",
            o.namespace().unwrap_or_else(|| "default".into()),
            o.name_any()
        )
    }
    Ops {
        kind: POD_GROUP,
        key,
        upsert: |o, st| {
            let k = key(&o);
            let group = serde_json::to_value(&o)
                .and_then(serde_json::from_value::<convert::PodGroupObject>)
                .ok()
                .and_then(|pg| convert::pod_group(pg).ok());
            match group {
                Some(g) => st.cluster.pod_groups.insert(k, g),
                None => st.cluster.pod_groups.remove(&k),
            };
        },
        remove: |k, st| {
            st.cluster.pod_groups.remove(k);
        },
        keys: |st| st.cluster.pod_groups.keys().cloned().collect(),
    }
}

/// Start one watcher per kind; returns the kinds watched and the tasks.
pub(super) fn start_watchers(
    client: &Client,
    opts: &LiveOptions,
    tx: &mpsc::UnboundedSender<Change>,
    retry: &watch::Receiver<u64>,
) -> (Vec<KindSpec>, Vec<tokio::task::JoinHandle<()>>) {
    let mut tasks = Vec::new();
    let mut specs = Vec::new();
    fn watch_kind<K: Watched>(
        api: Api<K>,
        cfg: watcher::Config,
        optional: bool,
        tx: &mpsc::UnboundedSender<Change>,
        retry: &watch::Receiver<u64>,
        specs: &mut Vec<KindSpec>,
        tasks: &mut Vec<tokio::task::JoinHandle<()>>,
    ) {
        let resource = resource_name::<K>();
        specs.push(KindSpec {
            kind: K::KIND,
            resource: resource.clone(),
            optional,
        });
        let make = move || watcher::watcher(api.clone(), cfg.clone());
        tasks.push(tokio::spawn(pump(
            make,
            ops::<K>(),
            resource,
            tx.clone(),
            retry.clone(),
        )));
    }
    let cfg = watcher::Config::default;
    let c = || client.clone();
    macro_rules! watch {
        ($api:expr) => {
            watch_kind($api, cfg(), false, tx, retry, &mut specs, &mut tasks)
        };
        ($api:expr, optional) => {
            watch_kind($api, cfg(), true, tx, retry, &mut specs, &mut tasks)
        };
    }
    // Pods and their scheduling events: one namespace, or all of them.
    let pods: Api<LeanPod> = match &opts.namespace {
        Some(ns) => Api::namespaced(c(), ns),
        None => Api::all(c()),
    };
    let events: Api<core::Event> = match &opts.namespace {
        Some(ns) => Api::namespaced(c(), ns),
        None => Api::all(c()),
    };
    watch!(Api::<core::Node>::all(c()));
    watch!(pods);
    // Only the real scheduler's word beside the replay; no plugin reads them.
    watch_kind(
        events,
        cfg().fields("reason=FailedScheduling,involvedObject.kind=Pod"),
        true,
        tx,
        retry,
        &mut specs,
        &mut tasks,
    );
    watch!(Api::<core::PersistentVolume>::all(c()));
    watch!(Api::<core::PersistentVolumeClaim>::all(c()));
    watch!(Api::<storage::StorageClass>::all(c()));
    watch!(Api::<storage::CSINode>::all(c()));
    watch!(Api::<storage::CSIDriver>::all(c()));
    // Read by one plugin each, which says so when they cannot be read.
    watch!(Api::<storage::VolumeAttachment>::all(c()), optional);
    watch!(Api::<storage::CSIStorageCapacity>::all(c()), optional);
    watch!(Api::<core::Namespace>::all(c()));
    watch!(Api::<policy::PodDisruptionBudget>::all(c()));
    watch!(Api::<scheduling::PriorityClass>::all(c()));
    watch!(Api::<core::Service>::all(c()));
    watch!(Api::<apps::ReplicaSet>::all(c()));
    watch!(Api::<apps::StatefulSet>::all(c()));
    watch!(Api::<core::ReplicationController>::all(c()));
    // Read by DynamicResources only, which says so when they cannot be read.
    watch!(Api::<resource::DeviceClass>::all(c()), optional);
    watch!(Api::<resource::ResourceSlice>::all(c()), optional);
    watch!(Api::<resource::ResourceClaim>::all(c()), optional);
    watch!(Api::<resource::ResourceClaimTemplate>::all(c()), optional);
    // The coscheduling CRD: a 404 when it is not installed.
    let api: Api<DynamicObject> = Api::all_with(c(), &pod_group_resource());
    let resource = "podgroups.scheduling.x-k8s.io".to_string();
    specs.push(KindSpec {
        kind: POD_GROUP,
        resource: resource.clone(),
        optional: true,
    });
    let make = move || watcher::watcher(api.clone(), cfg());
    tasks.push(tokio::spawn(pump(
        make,
        pod_group_ops(),
        resource,
        tx.clone(),
        retry.clone(),
    )));
    (specs, tasks)
}

/// Watch the cluster and send a [`DataUpdate`] after each burst of changes
/// (debounced) and on every status change, until the receiver is dropped.
pub async fn run(client: Client, opts: LiveOptions, out: std::sync::mpsc::Sender<DataUpdate>) {
    run_with(client, opts, out, LiveControl::default()).await
}

/// [`run`], publishing the per-kind state to `control` and retrying when asked.
pub async fn run_with(
    client: Client,
    opts: LiveOptions,
    out: std::sync::mpsc::Sender<DataUpdate>,
    control: LiveControl,
) {
    // A server that never answers would leave every kind "listing" with no error to
    // show: say so, and ask again until it answers.
    let mut wait = BACKOFF_FIRST;
    while let Err(e) = probe(&client, opts.first_answer()).await {
        let update = DataUpdate {
            cluster: Arc::new(Cluster::new()),
            source: None,
            status: Some(SourceStatus::Connecting {
                error: Some(e.to_string()),
            }),
            events: None,
            notice: None,
        };
        if out.send(update).is_err() {
            return;
        }
        tokio::time::sleep(wait).await;
        wait = (wait * 2).min(BACKOFF_CAP);
    }
    let (tx, mut rx) = mpsc::unbounded_channel::<Change>();
    let (specs, tasks) = start_watchers(&client, &opts, &tx, &control.subscribe());
    drop(tx);
    let mut st = LiveState::new(specs, now());
    let mut published: Option<Arc<Cluster>> = None;
    let mut events_published: Option<Arc<SchedulingEvents>> = None;
    let mut last_status: Option<SourceStatus> = None;
    let mut deadline: Option<tokio::time::Instant> = None;
    let mut events_changed = false;
    loop {
        let msg = match deadline {
            Some(d) => tokio::select! {
                m = rx.recv() => m.map(Some),
                _ = tokio::time::sleep_until(d) => Some(None),
            },
            None => rx.recv().await.map(Some),
        };
        let Some(msg) = msg else { break };
        match msg {
            Some(change) => {
                let before = st.events.len();
                let was_changed = st.changed;
                let at = now();
                change(&mut st, at);
                st.after_change(at);
                // Event changes are cheap to publish and need no cluster copy.
                if st.events.len() != before || (st.changed && !was_changed) {
                    events_changed = true;
                }
                let status = st.status();
                let status_changed = last_status.as_ref() != Some(&status);
                if status_changed || st.changed || st.phases_changed {
                    deadline.get_or_insert_with(|| tokio::time::Instant::now() + DEBOUNCE);
                }
            }
            None => {
                deadline = None;
                // A half-done relist is not published: the last whole state stays.
                let ready = !st.kinds.values().any(|k| k.listing.is_some());
                let cluster = if st.changed && ready {
                    st.changed = false;
                    Arc::new(st.cluster.clone())
                } else {
                    // Status only: the same Arc, so the UI keeps its traces. Before the
                    // first whole list that is an empty cluster.
                    published
                        .get_or_insert_with(|| Arc::new(Cluster::new()))
                        .clone()
                };
                let fresh = !published.as_ref().is_some_and(|p| Arc::ptr_eq(p, &cluster));
                if fresh || events_changed || events_published.is_none() {
                    events_published = Some(Arc::new(st.events.clone()));
                    events_changed = false;
                }
                let status = st.status();
                last_status = Some(status.clone());
                published = Some(cluster.clone());
                // The per-kind state first: the UI reads it when the update lands.
                control.publish(st.health());
                st.phases_changed = false;
                let update = DataUpdate {
                    cluster,
                    source: None,
                    status: Some(status),
                    events: events_published.clone(),
                    notice: None,
                };
                if out.send(update).is_err() {
                    break;
                }
            }
        }
    }
    for t in tasks {
        t.abort();
    }
}

/// Run [`run_with`] on a tokio runtime in its own thread.
pub fn spawn(
    client_opts: LiveOptions,
    config: Config,
) -> Result<(std::sync::mpsc::Receiver<DataUpdate>, LiveControl), LiveError> {
    let (out, rx) = std::sync::mpsc::channel();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .map_err(LiveError::Runtime)?;
    let client = rt
        .block_on(async { super::bounded::client(config) })
        .map_err(LiveError::Client)?;
    let control = LiveControl::default();
    let shared = control.clone();
    std::thread::Builder::new()
        .name("live-source".into())
        .spawn(move || rt.block_on(run_with(client, client_opts, out, shared)))
        .map_err(LiveError::Runtime)?;
    Ok((rx, control))
}

/// List everything once (the watchers' initial lists), for `explain` and
/// `snapshot save` against a live cluster. The first failure ends it, in full (as
/// kubectl does); a 403 or 404 of an optional kind leaves that kind out, named in
/// [`Cluster::unreadable_kinds`].
pub async fn load_once(
    client: Client,
    opts: &LiveOptions,
    timeout: Duration,
) -> Result<LiveState, LiveError> {
    probe(&client, opts.first_answer()).await?;
    let control = LiveControl::default();
    let (tx, mut rx) = mpsc::unbounded_channel::<Change>();
    let (specs, tasks) = start_watchers(&client, opts, &tx, &control.subscribe());
    drop(tx);
    let mut st = LiveState::new(specs, now());
    let result = tokio::time::timeout(timeout, async {
        while let Some(change) = rx.recv().await {
            change(&mut st, now());
            if let Some(e) = st.fatal() {
                return Err(e);
            }
            if st.synced() {
                return Ok(());
            }
        }
        Ok(())
    })
    .await;
    for t in tasks {
        t.abort();
    }
    match result {
        Ok(Ok(())) if st.synced() => Ok(st),
        Ok(Err(e)) => Err(e),
        _ => {
            let missing: Vec<&str> = st
                .kinds
                .values()
                .filter(|e| !e.health.is_done())
                .map(|e| e.health.kind)
                .collect();
            Err(LiveError::Timeout(
                timeout,
                format!("still listing {}", missing.join(", ")),
            ))
        }
    }
}
