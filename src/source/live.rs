//! A live cluster → the model: one kube-rs watcher per kind the engine reads, all
//! feeding one [`Cluster`] through its incremental upsert/delete methods, with the
//! same per-object conversion and defaulting as snapshots ([`super::convert`]).
//!
//! Each watcher's initial list (`Init` … `InitDone`) replaces that kind in the model:
//! objects are upserted as they arrive and, at `InitDone`, whatever the list did not
//! name is deleted. A failing watch is retried with kube-rs's default backoff; the
//! last state is kept and published as stale until every watcher is healthy again.
//! Secrets are never read. Changes are published debounced, as owned
//! [`DataUpdate`]s, from a tokio runtime on its own thread.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Debug;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use futures::{Stream, StreamExt};
use k8s_openapi::api::apps::v1 as apps;
use k8s_openapi::api::core::v1 as core;
use k8s_openapi::api::policy::v1 as policy;
use k8s_openapi::api::scheduling::v1 as scheduling;
use k8s_openapi::api::storage::v1 as storage;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, ListParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};
use kube::{Client, Config, Resource, ResourceExt};
use serde::de::DeserializeOwned;
use tokio::sync::mpsc;

use super::DataUpdate;
use super::convert::{self, Priorities};
use super::{SchedulingEvent, SchedulingEvents, SourceStatus};
use crate::model::Cluster;

/// How long changes are collected before one update is published.
pub const DEBOUNCE: Duration = Duration::from_millis(250);

/// Where the cluster is and what to watch.
#[derive(Clone, Debug, Default)]
pub struct LiveOptions {
    /// `--kubeconfig`; otherwise `KUBECONFIG`, `~/.kube/config`, then in-cluster.
    pub kubeconfig: Option<PathBuf>,
    /// `--context`: a kubeconfig context other than the current one.
    pub context: Option<String>,
    /// `--namespace`: list only this namespace's pods (and their scheduling events).
    /// Nodes and cluster objects are always read whole.
    pub namespace: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum LiveError {
    #[error("cannot read kubeconfig {path}: {source}")]
    Kubeconfig {
        path: PathBuf,
        source: kube::config::KubeconfigError,
    },
    #[error("cannot use kubeconfig{}: {source}", context_suffix(.context))]
    Context {
        context: Option<String>,
        source: kube::config::KubeconfigError,
    },
    #[error(
        "no cluster configuration found (tried KUBECONFIG, ~/.kube/config and the \
         in-cluster service account): {0}; pass --kubeconfig FILE or --snapshot PATH"
    )]
    Infer(kube::config::InferConfigError),
    #[error("cannot create the API client: {0}")]
    Client(kube::Error),
    #[error("{what}: {}", super::api_error_text(.source))]
    Api { what: String, source: kube::Error },
    #[error("the cluster did not answer the initial lists within {0:?}: {1}")]
    Timeout(Duration, String),
    #[error("cannot start the async runtime: {0}")]
    Runtime(std::io::Error),
}

fn context_suffix(c: &Option<String>) -> String {
    c.as_ref()
        .map(|c| format!(" (context {c:?})"))
        .unwrap_or_default()
}

/// The client configuration: an explicit kubeconfig file (and context), the
/// default kubeconfig with another context, or kube-rs's inference (KUBECONFIG,
/// `~/.kube/config`, in-cluster).
pub async fn client_config(opts: &LiveOptions) -> Result<Config, LiveError> {
    let kopts = KubeConfigOptions {
        context: opts.context.clone(),
        ..Default::default()
    };
    if let Some(path) = &opts.kubeconfig {
        let kc = Kubeconfig::read_from(path).map_err(|source| LiveError::Kubeconfig {
            path: path.clone(),
            source,
        })?;
        return Config::from_custom_kubeconfig(kc, &kopts)
            .await
            .map_err(|source| LiveError::Context {
                context: opts.context.clone(),
                source,
            });
    }
    if opts.context.is_some() {
        return Config::from_kubeconfig(&kopts)
            .await
            .map_err(|source| LiveError::Context {
                context: opts.context.clone(),
                source,
            });
    }
    Config::infer().await.map_err(LiveError::Infer)
}

pub async fn connect(opts: &LiveOptions) -> Result<Client, LiveError> {
    let config = client_config(opts).await?;
    Client::try_from(config).map_err(LiveError::Client)
}

/// A short description of where the client points, for the status bar.
pub fn describe(config: &Config, opts: &LiveOptions) -> String {
    let mut s = format!("live {}", config.cluster_url);
    if let Some(c) = &opts.context {
        s.push_str(&format!(" ({c})"));
    }
    if let Some(ns) = &opts.namespace {
        s.push_str(&format!(" ns {ns}"));
    }
    s
}

// ---------------------------------------------------------------------------------
// The state the watchers feed

/// The model and what the watchers know about it. Owned by one task; watchers send
/// it changes as messages, so no lock is shared with the UI.
pub struct LiveState {
    pub cluster: Cluster,
    pub events: SchedulingEvents,
    /// Event object name → pod key, to forget an event on its deletion.
    event_pods: BTreeMap<String, String>,
    kinds: BTreeMap<&'static str, KindState>,
    /// The kinds being watched (PodGroup only when its CRD exists).
    expected: BTreeSet<&'static str>,
    /// Pods without `spec.priority` (or naming a class not seen yet: watchers race),
    /// admitted again when classes change. The API server sets `spec.priority`, so
    /// this stays empty on real clusters.
    unadmitted: BTreeMap<String, core::Pod>,
    /// The last time every watcher was healthy and synced.
    synced_at: Option<Timestamp>,
    changed: bool,
}

#[derive(Default)]
struct KindState {
    /// Keys listed since the current `Init`, while a (re)list runs.
    listing: Option<BTreeSet<String>>,
    synced: bool,
    error: Option<(Timestamp, String)>,
}

impl LiveState {
    pub fn new(expected: impl IntoIterator<Item = &'static str>) -> Self {
        LiveState {
            cluster: Cluster::new(),
            events: BTreeMap::new(),
            event_pods: BTreeMap::new(),
            unadmitted: BTreeMap::new(),
            kinds: BTreeMap::new(),
            expected: expected.into_iter().collect(),
            synced_at: None,
            changed: false,
        }
    }

    fn kind(&mut self, kind: &'static str) -> &mut KindState {
        self.kinds.entry(kind).or_default()
    }

    /// Every watched kind has completed a list and none is relisting.
    pub fn synced(&self) -> bool {
        self.expected.iter().all(|k| {
            self.kinds
                .get(k)
                .is_some_and(|s| s.synced && s.listing.is_none())
        })
    }

    pub fn status(&self) -> SourceStatus {
        let err = self
            .kinds
            .iter()
            .filter_map(|(k, s)| s.error.as_ref().map(|(t, e)| (*t, format!("{k}: {e}"))))
            .min_by_key(|(t, _)| *t);
        match (err, self.synced_at) {
            (Some((since, error)), Some(synced)) => SourceStatus::Reconnecting {
                since: synced.min(since),
                error,
            },
            (Some((_, error)), None) => SourceStatus::Connecting { error: Some(error) },
            (None, _) if !self.synced() => match self.synced_at {
                // A relist after a lost watch: the data is as old as the last sync.
                Some(since) => SourceStatus::Reconnecting {
                    since,
                    error: "relisting".into(),
                },
                None => SourceStatus::Connecting { error: None },
            },
            (None, _) => SourceStatus::Connected,
        }
    }

    fn readmit(&mut self) {
        for (_, p) in std::mem::take(&mut self.unadmitted) {
            p.upsert(self);
        }
    }

    fn ok(&mut self, kind: &'static str) {
        self.kind(kind).error = None;
    }

    fn failed(&mut self, kind: &'static str, error: String, now: Timestamp) {
        let k = self.kind(kind);
        let since = k.error.as_ref().map_or(now, |(t, _)| *t);
        k.error = Some((since, error));
    }

    fn after_change(&mut self, now: Timestamp) {
        if self.synced() && self.kinds.values().all(|k| k.error.is_none()) {
            self.synced_at = Some(now);
        }
    }
}

/// A kind the engine reads, and how it enters the model.
trait Watched:
    Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static
{
    const KIND: &'static str;
    fn model_key(&self) -> String {
        match self.namespace() {
            Some(ns) => format!("{ns}/{}", self.name_any()),
            None => self.name_any(),
        }
    }
    /// Keys of this kind in the model (for the diff at the end of a relist).
    fn keys(st: &LiveState) -> Vec<String>;
    fn upsert(self, st: &mut LiveState);
    fn remove(key: &str, st: &mut LiveState);
}

macro_rules! map_kind {
    ($ty:ty, $kind:literal, $field:ident $(, $fix:path)?) => {
        impl Watched for $ty {
            const KIND: &'static str = $kind;
            fn keys(st: &LiveState) -> Vec<String> {
                st.cluster.$field.keys().cloned().collect()
            }
            #[allow(unused_mut)]
            fn upsert(mut self, st: &mut LiveState) {
                self.metadata.managed_fields = None;
                $($fix(&mut self);)?
                let key = self.model_key();
                st.cluster.$field.insert(key, self);
            }
            fn remove(key: &str, st: &mut LiveState) {
                st.cluster.$field.remove(key);
            }
        }
    };
}

map_kind!(
    core::PersistentVolume,
    "PersistentVolume",
    persistent_volumes
);
map_kind!(
    core::PersistentVolumeClaim,
    "PersistentVolumeClaim",
    persistent_volume_claims
);
map_kind!(
    storage::StorageClass,
    "StorageClass",
    storage_classes,
    convert::storage_class_defaults
);
map_kind!(storage::CSINode, "CSINode", csi_nodes);
map_kind!(storage::CSIDriver, "CSIDriver", csi_drivers);
map_kind!(
    storage::VolumeAttachment,
    "VolumeAttachment",
    volume_attachments
);
map_kind!(
    core::Namespace,
    "Namespace",
    namespaces,
    convert::namespace_defaults
);
map_kind!(
    policy::PodDisruptionBudget,
    "PodDisruptionBudget",
    pod_disruption_budgets
);
map_kind!(
    scheduling::PriorityClass,
    "PriorityClass",
    priority_classes,
    convert::priority_class_defaults
);
map_kind!(core::Service, "Service", services);
map_kind!(apps::ReplicaSet, "ReplicaSet", replica_sets);
map_kind!(apps::StatefulSet, "StatefulSet", stateful_sets);
map_kind!(
    core::ReplicationController,
    "ReplicationController",
    replication_controllers
);

impl Watched for core::Node {
    const KIND: &'static str = "Node";
    fn keys(st: &LiveState) -> Vec<String> {
        st.cluster
            .nodes()
            .iter()
            .map(|n| n.name().to_string())
            .collect()
    }
    fn upsert(self, st: &mut LiveState) {
        // A node the model cannot read (a malformed quantity) is left out rather than
        // stopping the watch; the old version, if any, goes too.
        match crate::model::Node::from_k8s(&self) {
            Ok(n) => st.cluster.upsert_node(n),
            Err(_) => {
                st.cluster.delete_node(&self.name_any());
            }
        }
    }
    fn remove(key: &str, st: &mut LiveState) {
        st.cluster.delete_node(key);
    }
}

impl Watched for core::Pod {
    const KIND: &'static str = "Pod";
    fn keys(st: &LiveState) -> Vec<String> {
        st.cluster.pods().map(|p| p.key()).collect()
    }
    fn upsert(self, st: &mut LiveState) {
        let key = self.model_key();
        // The API server ran priority and RuntimeClass admission already; admitting
        // again keeps its values (they are explicit) and fills a class's policy.
        let converted = convert::convert_pod(&self);
        match converted {
            Ok(Some(mut c)) => {
                let priorities = Priorities::new(&st.cluster.priority_classes);
                let admitted = priorities
                    .admit(&mut c.pod, c.explicit_priority, c.explicit_policy)
                    .is_ok();
                // Without `spec.priority` the value depends on classes that may
                // arrive later (a globalDefault too), as the snapshot loader admits
                // only once every class is read.
                if admitted && c.explicit_priority {
                    st.unadmitted.remove(&key);
                } else {
                    st.unadmitted.insert(key, self);
                }
                st.cluster.upsert_pod(c.pod);
            }
            // Terminal (the scheduler ignores it) or unreadable.
            Ok(None) | Err(_) => {
                st.unadmitted.remove(&key);
                st.cluster.delete_pod(&key);
            }
        }
    }
    fn remove(key: &str, st: &mut LiveState) {
        st.unadmitted.remove(key);
        st.cluster.delete_pod(key);
    }
}

impl Watched for core::Event {
    const KIND: &'static str = "Event";
    fn keys(st: &LiveState) -> Vec<String> {
        st.event_pods.keys().cloned().collect()
    }
    fn upsert(self, st: &mut LiveState) {
        let obj = &self.involved_object;
        if obj.kind.as_deref() != Some("Pod") || self.reason.as_deref() != Some("FailedScheduling")
        {
            return;
        }
        let pod = format!(
            "{}/{}",
            obj.namespace.as_deref().unwrap_or("default"),
            obj.name.as_deref().unwrap_or_default()
        );
        let last_seen = self
            .series
            .as_ref()
            .and_then(|s| s.last_observed_time.as_ref().map(|t| t.0))
            .or(self.last_timestamp.as_ref().map(|t| t.0))
            .or(self.event_time.as_ref().map(|t| t.0))
            .or(self.metadata.creation_timestamp.as_ref().map(|t| t.0));
        let ev = SchedulingEvent {
            message: self.message.clone().unwrap_or_default(),
            count: self
                .series
                .as_ref()
                .and_then(|s| s.count)
                .or(self.count)
                .unwrap_or(1),
            last_seen,
            uid: obj.uid.clone().unwrap_or_default(),
        };
        // Keep the latest event per pod.
        let newer = st
            .events
            .get(&pod)
            .is_none_or(|old| old.last_seen <= ev.last_seen);
        st.event_pods.insert(self.model_key(), pod.clone());
        if newer {
            st.events.insert(pod, ev);
        }
    }
    fn remove(key: &str, st: &mut LiveState) {
        if let Some(pod) = st.event_pods.remove(key)
            && !st.event_pods.values().any(|p| *p == pod)
        {
            st.events.remove(&pod);
        }
    }
}

/// A cheap request that tells whether the API server answers again.
type Probe = Arc<dyn Fn() -> futures::future::BoxFuture<'static, bool> + Send + Sync>;

/// How often a failing watcher's resource is probed.
const PROBE_EVERY: Duration = Duration::from_secs(1);

fn prober<K>(api: Api<K>) -> Probe
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
{
    Arc::new(move || {
        let api = api.clone();
        Box::pin(async move {
            api.list_metadata(&ListParams::default().limit(1))
                .await
                .is_ok()
        })
    })
}

/// The next item of a watcher stream. While the watcher is failing, the resource
/// is probed: a resumed watch that sees no change yields nothing, so a successful
/// probe is what says the server is back (the watcher resumes from its last
/// resourceVersion, or relists on 410, so nothing is lost).
async fn next_or_recovered<S: Stream + Unpin>(
    stream: &mut S,
    failing: &mut bool,
    probe: &Probe,
) -> Option<Option<S::Item>> {
    if !*failing {
        return Some(stream.next().await).filter(|i| i.is_some());
    }
    tokio::select! {
        item = stream.next() => item.map(Some),
        ok = async {
            tokio::time::sleep(PROBE_EVERY).await;
            probe().await
        } => {
            if ok {
                *failing = false;
            }
            Some(None)
        }
    }
}

/// A watcher error in one line (kube's errors carry the whole Status).
fn short_error(e: &watcher::Error) -> String {
    let s = e.to_string();
    match s.find(" (Status {") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// A message from a watcher to the task that owns the state.
pub type Change = Box<dyn FnOnce(&mut LiveState, Timestamp) + Send>;

fn now() -> Timestamp {
    Timestamp::now()
}

fn classes_changed<K: Watched>(st: &mut LiveState) {
    if K::KIND == scheduling::PriorityClass::KIND && !st.unadmitted.is_empty() {
        st.readmit();
    }
}

/// Turn one watcher's stream into changes of the state.
async fn pump<K: Watched>(
    stream: impl Stream<Item = Result<Event<K>, watcher::Error>> + Send,
    tx: mpsc::UnboundedSender<Change>,
    probe: Probe,
) {
    let mut stream = std::pin::pin!(stream);
    let mut failing = false;
    while let Some(item) = next_or_recovered(&mut stream, &mut failing, &probe).await {
        let Some(item) = item else {
            if !failing && tx.send(Box::new(|st, _| st.ok(K::KIND))).is_err() {
                return;
            }
            continue;
        };
        failing = item.is_err();
        let change: Change = match item {
            Ok(Event::Init) => Box::new(|st, _| {
                st.ok(K::KIND);
                st.kind(K::KIND).listing = Some(BTreeSet::new());
            }),
            Ok(Event::InitApply(obj)) => Box::new(move |st, _| {
                st.ok(K::KIND);
                if let Some(l) = st.kind(K::KIND).listing.as_mut() {
                    l.insert(obj.model_key());
                }
                obj.upsert(st);
                classes_changed::<K>(st);
                st.changed = true;
            }),
            Ok(Event::InitDone) => Box::new(|st, _| {
                st.ok(K::KIND);
                let listed = st.kind(K::KIND).listing.take().unwrap_or_default();
                for key in K::keys(st) {
                    if !listed.contains(&key) {
                        K::remove(&key, st);
                    }
                }
                st.kind(K::KIND).synced = true;
                classes_changed::<K>(st);
                st.changed = true;
            }),
            Ok(Event::Apply(obj)) => Box::new(move |st, _| {
                st.ok(K::KIND);
                obj.upsert(st);
                classes_changed::<K>(st);
                st.changed = true;
            }),
            Ok(Event::Delete(obj)) => Box::new(move |st, _| {
                st.ok(K::KIND);
                K::remove(&obj.model_key(), st);
                st.changed = true;
            }),
            Err(e) => {
                let msg = short_error(&e);
                Box::new(move |st, now| st.failed(K::KIND, msg, now))
            }
        };
        if tx.send(change).is_err() {
            return;
        }
    }
}

fn spawn_watch<K: Watched>(
    api: Api<K>,
    config: watcher::Config,
    tx: &mpsc::UnboundedSender<Change>,
    tasks: &mut Vec<tokio::task::JoinHandle<()>>,
) {
    let probe = prober(api.clone());
    let stream = watcher::watcher(api, config).default_backoff();
    tasks.push(tokio::spawn(pump::<K>(stream, tx.clone(), probe)));
}

/// The coscheduling PodGroup CRD's resource.
pub(crate) fn pod_group_resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("scheduling.x-k8s.io", "v1alpha1", "PodGroup"),
        "podgroups",
    )
}

async fn pod_groups_served(client: &Client) -> bool {
    let api: Api<DynamicObject> = Api::all_with(client.clone(), &pod_group_resource());
    api.list_metadata(&ListParams::default().limit(1))
        .await
        .is_ok()
}

async fn pump_pod_groups(
    stream: impl Stream<Item = Result<Event<DynamicObject>, watcher::Error>> + Send,
    tx: mpsc::UnboundedSender<Change>,
    probe: Probe,
) {
    const KIND: &str = "PodGroup";
    fn key(o: &DynamicObject) -> String {
        format!(
            "{}/{}",
            o.namespace().unwrap_or_else(|| "default".into()),
            o.name_any()
        )
    }
    fn upsert(o: DynamicObject, st: &mut LiveState) {
        let k = key(&o);
        let group = serde_json::to_value(&o)
            .and_then(serde_json::from_value::<convert::PodGroupObject>)
            .ok()
            .and_then(|pg| convert::pod_group(pg).ok());
        match group {
            Some(g) => st.cluster.pod_groups.insert(k, g),
            None => st.cluster.pod_groups.remove(&k),
        };
    }
    let mut stream = std::pin::pin!(stream);
    let mut failing = false;
    while let Some(item) = next_or_recovered(&mut stream, &mut failing, &probe).await {
        let Some(item) = item else {
            if !failing && tx.send(Box::new(|st, _| st.ok(KIND))).is_err() {
                return;
            }
            continue;
        };
        failing = item.is_err();
        let change: Change = match item {
            Ok(Event::Init) => Box::new(|st, _| {
                st.ok(KIND);
                st.kind(KIND).listing = Some(BTreeSet::new());
            }),
            Ok(Event::InitApply(o)) => Box::new(move |st, _| {
                st.ok(KIND);
                if let Some(l) = st.kind(KIND).listing.as_mut() {
                    l.insert(key(&o));
                }
                upsert(o, st);
                st.changed = true;
            }),
            Ok(Event::InitDone) => Box::new(|st, _| {
                st.ok(KIND);
                let listed = st.kind(KIND).listing.take().unwrap_or_default();
                st.cluster.pod_groups.retain(|k, _| listed.contains(k));
                st.kind(KIND).synced = true;
                st.changed = true;
            }),
            Ok(Event::Apply(o)) => Box::new(move |st, _| {
                st.ok(KIND);
                upsert(o, st);
                st.changed = true;
            }),
            Ok(Event::Delete(o)) => Box::new(move |st, _| {
                st.ok(KIND);
                st.cluster.pod_groups.remove(&key(&o));
                st.changed = true;
            }),
            Err(e) => {
                let msg = short_error(&e);
                Box::new(move |st, now| st.failed(KIND, msg, now))
            }
        };
        if tx.send(change).is_err() {
            return;
        }
    }
}

/// Start one watcher per kind; returns the kinds watched and the tasks.
pub async fn start_watchers(
    client: &Client,
    opts: &LiveOptions,
    tx: &mpsc::UnboundedSender<Change>,
) -> (Vec<&'static str>, Vec<tokio::task::JoinHandle<()>>) {
    let mut tasks = Vec::new();
    let cfg = watcher::Config::default;
    let c = || client.clone();
    // Pods and their scheduling events: one namespace, or all of them.
    let pods: Api<core::Pod> = match &opts.namespace {
        Some(ns) => Api::namespaced(c(), ns),
        None => Api::all(c()),
    };
    let events: Api<core::Event> = match &opts.namespace {
        Some(ns) => Api::namespaced(c(), ns),
        None => Api::all(c()),
    };
    spawn_watch(Api::<core::Node>::all(c()), cfg(), tx, &mut tasks);
    spawn_watch(pods, cfg(), tx, &mut tasks);
    spawn_watch(
        events,
        cfg().fields("reason=FailedScheduling,involvedObject.kind=Pod"),
        tx,
        &mut tasks,
    );
    spawn_watch(
        Api::<core::PersistentVolume>::all(c()),
        cfg(),
        tx,
        &mut tasks,
    );
    spawn_watch(
        Api::<core::PersistentVolumeClaim>::all(c()),
        cfg(),
        tx,
        &mut tasks,
    );
    spawn_watch(
        Api::<storage::StorageClass>::all(c()),
        cfg(),
        tx,
        &mut tasks,
    );
    spawn_watch(Api::<storage::CSINode>::all(c()), cfg(), tx, &mut tasks);
    spawn_watch(Api::<storage::CSIDriver>::all(c()), cfg(), tx, &mut tasks);
    spawn_watch(
        Api::<storage::VolumeAttachment>::all(c()),
        cfg(),
        tx,
        &mut tasks,
    );
    spawn_watch(Api::<core::Namespace>::all(c()), cfg(), tx, &mut tasks);
    spawn_watch(
        Api::<policy::PodDisruptionBudget>::all(c()),
        cfg(),
        tx,
        &mut tasks,
    );
    spawn_watch(
        Api::<scheduling::PriorityClass>::all(c()),
        cfg(),
        tx,
        &mut tasks,
    );
    spawn_watch(Api::<core::Service>::all(c()), cfg(), tx, &mut tasks);
    spawn_watch(Api::<apps::ReplicaSet>::all(c()), cfg(), tx, &mut tasks);
    spawn_watch(Api::<apps::StatefulSet>::all(c()), cfg(), tx, &mut tasks);
    spawn_watch(
        Api::<core::ReplicationController>::all(c()),
        cfg(),
        tx,
        &mut tasks,
    );
    let mut kinds = vec![
        core::Node::KIND,
        core::Pod::KIND,
        core::Event::KIND,
        core::PersistentVolume::KIND,
        core::PersistentVolumeClaim::KIND,
        storage::StorageClass::KIND,
        storage::CSINode::KIND,
        storage::CSIDriver::KIND,
        storage::VolumeAttachment::KIND,
        core::Namespace::KIND,
        policy::PodDisruptionBudget::KIND,
        scheduling::PriorityClass::KIND,
        core::Service::KIND,
        apps::ReplicaSet::KIND,
        apps::StatefulSet::KIND,
        core::ReplicationController::KIND,
    ];
    if pod_groups_served(client).await {
        let api: Api<DynamicObject> = Api::all_with(c(), &pod_group_resource());
        let probe = prober(api.clone());
        let stream = watcher::watcher(api, cfg()).default_backoff();
        tasks.push(tokio::spawn(pump_pod_groups(stream, tx.clone(), probe)));
        kinds.push("PodGroup");
    }
    (kinds, tasks)
}

/// Watch the cluster and send a [`DataUpdate`] after each burst of changes
/// (debounced) and on every status change, until the receiver is dropped.
pub async fn run(client: Client, opts: LiveOptions, out: std::sync::mpsc::Sender<DataUpdate>) {
    let (tx, mut rx) = mpsc::unbounded_channel::<Change>();
    let (kinds, tasks) = start_watchers(&client, &opts, &tx).await;
    drop(tx);
    let mut st = LiveState::new(kinds);
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
                change(&mut st, now());
                st.after_change(now());
                // Event changes are cheap to publish and need no cluster copy.
                if st.events.len() != before || (st.changed && !was_changed) {
                    events_changed = true;
                }
                let status = st.status();
                let status_changed = last_status.as_ref() != Some(&status);
                if status_changed || st.changed {
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

/// Run [`run`] on a tokio runtime in its own thread.
pub fn spawn(
    client_opts: LiveOptions,
    config: Config,
) -> Result<std::sync::mpsc::Receiver<DataUpdate>, LiveError> {
    let (out, rx) = std::sync::mpsc::channel();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .map_err(LiveError::Runtime)?;
    let client = rt
        .block_on(async { Client::try_from(config) })
        .map_err(LiveError::Client)?;
    std::thread::Builder::new()
        .name("live-source".into())
        .spawn(move || rt.block_on(run(client, client_opts, out)))
        .map_err(LiveError::Runtime)?;
    Ok(rx)
}

/// List everything once (the watchers' initial lists), for `explain` and
/// `snapshot save` against a live cluster.
pub async fn load_once(
    client: Client,
    opts: &LiveOptions,
    timeout: Duration,
) -> Result<LiveState, LiveError> {
    let (tx, mut rx) = mpsc::unbounded_channel::<Change>();
    let (kinds, tasks) = start_watchers(&client, opts, &tx).await;
    drop(tx);
    let mut st = LiveState::new(kinds);
    let result = tokio::time::timeout(timeout, async {
        while let Some(change) = rx.recv().await {
            change(&mut st, now());
            if st.synced() {
                return true;
            }
        }
        false
    })
    .await;
    for t in tasks {
        t.abort();
    }
    match result {
        Ok(true) => Ok(st),
        _ => {
            let why = match st.status() {
                SourceStatus::Connecting { error: Some(e) }
                | SourceStatus::Reconnecting { error: e, .. } => e,
                _ => {
                    let missing: Vec<_> = st
                        .expected
                        .iter()
                        .filter(|k| !st.kinds.get(*k).is_some_and(|s| s.synced))
                        .copied()
                        .collect();
                    format!("still listing {}", missing.join(", "))
                }
            };
            Err(LiveError::Timeout(timeout, why))
        }
    }
}
