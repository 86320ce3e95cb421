//! A live cluster → the model: one kube-rs watcher per kind the engine reads, all
//! feeding one [`Cluster`] through its incremental upsert/delete methods, with the
//! same per-object conversion and defaulting as snapshots ([`super::convert`]).
//!
//! Each watcher's list (`Init` … `InitDone`) replaces that kind in the model:
//! objects are upserted as they arrive and, at `InitDone`, whatever the list did not
//! name is deleted. A failing watcher is dropped and, after a bounded backoff (or at
//! once on [`LiveControl::retry`]), started again with a fresh list, so the source
//! is "connected" only when every kind has listed since its last error. A 403 holds
//! that kind (listed again after the backoff, or on a retry; a 404 each minute): a
//! required kind cannot be done without, an optional one
//! (VolumeAttachment, CSIStorageCapacity, PodGroup, Event) is left out and the plugins
//! that read it say so ([`Cluster::unreadable_kinds`]). Secrets are never read. Changes
//! are published debounced, as owned [`DataUpdate`]s, from a tokio runtime on its
//! own thread; the per-kind state goes to a [`LiveControl`].

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Debug;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
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
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::runtime::watcher::{self, Event};
use kube::{Client, Config, Resource, ResourceExt};
use serde::de::DeserializeOwned;
use tokio::sync::{mpsc, watch};

use super::DataUpdate;
use super::convert::{self, Priorities};
use super::{SchedulingEvent, SchedulingEvents, SourceStatus};
use crate::model::Cluster;
use crate::model::dra;

/// How long changes are collected before one update is published.
pub const DEBOUNCE: Duration = Duration::from_millis(250);

/// How long a TCP (and TLS) connection to the API server may take. kube's default
/// is 30 s; an unreachable server should be said at once, as kubectl does.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

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
    /// How long a server that accepted the connection may stay silent before it is
    /// called unresponsive; `None` is [`FIRST_ANSWER`].
    pub first_answer: Option<Duration>,
}

/// How long the API server may take to answer its first request. Go's clients give a
/// TLS handshake 10 s; a server past that is not going to answer a list either.
pub const FIRST_ANSWER: Duration = Duration::from_secs(10);

impl LiveOptions {
    fn first_answer(&self) -> Duration {
        self.first_answer.unwrap_or(FIRST_ANSWER)
    }
}

/// Ask the server for its version, bounded: a server that accepted the connection
/// but never answers (a wrong port, a stuck proxy) is an error after `within`
/// instead of a silent wait for the watchers' 5-minute read timeout, and one that
/// cannot be reached is said once, plainly. An answer, even a refusal, is left to
/// the watchers, which name the kind and the verb.
pub async fn probe(client: &Client, within: Duration) -> Result<(), LiveError> {
    match tokio::time::timeout(within, client.apiserver_version()).await {
        Ok(Ok(_)) | Ok(Err(kube::Error::Api(_))) => Ok(()),
        Ok(Err(e @ (kube::Error::HyperError(_) | kube::Error::Service(_)))) => {
            // The connect timeout covers the TLS handshake: a listener that accepts
            // and stays silent ends here, not in the timeout above.
            let timed_out =
                std::iter::successors(Some(&e as &dyn std::error::Error), |c| c.source()).any(
                    |c| {
                        c.downcast_ref::<std::io::Error>()
                            .is_some_and(|io| io.kind() == std::io::ErrorKind::TimedOut)
                            || c.to_string() == "deadline has elapsed"
                    },
                );
            Err(if timed_out {
                LiveError::Silent(CONNECT_TIMEOUT)
            } else {
                LiveError::Unreachable(chain(&e))
            })
        }
        Ok(Err(_)) => Ok(()),
        Err(_) => Err(LiveError::Silent(within)),
    }
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
    /// The first failure of a kind the engine needs (or any failure but a 403 or
    /// 404 of an optional one), in full.
    #[error("{message}")]
    Read { kind: &'static str, message: String },
    #[error("the cluster did not answer the initial lists within {0:?}: {1}")]
    Timeout(Duration, String),
    #[error(
        "the API server did not answer within {0:?}: no connection, or a connection \
         that stays silent (check the server address and any proxy in between)"
    )]
    Silent(Duration),
    #[error("cannot reach the API server: {0}")]
    Unreachable(String),
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
/// `~/.kube/config`, in-cluster); connecting may take [`CONNECT_TIMEOUT`] at most.
pub async fn client_config(opts: &LiveOptions) -> Result<Config, LiveError> {
    let mut config = read_client_config(opts).await?;
    config.connect_timeout = Some(
        config
            .connect_timeout
            .map_or(CONNECT_TIMEOUT, |t| t.min(CONNECT_TIMEOUT)),
    );
    Ok(config)
}

async fn read_client_config(opts: &LiveOptions) -> Result<Config, LiveError> {
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
// Per-kind state

/// What one kind's watcher is doing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KindPhase {
    /// Listing, since `since`; `last_error` while a failure is being retried.
    Listing {
        since: Timestamp,
        last_error: Option<String>,
    },
    /// Listed at `at`, and watching since.
    Synced { at: Timestamp },
    /// `failures` failures in a row since `since`; listed again after a backoff.
    Retrying {
        since: Timestamp,
        failures: u32,
        error: String,
    },
    /// The identity may not `verb` this kind (403); listed again after the backoff.
    Forbidden { verb: &'static str, error: String },
    /// The API server does not serve this kind (404: a CRD that is not installed).
    NotServed { error: String },
}

/// One watched kind, for the connection detail.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KindHealth {
    pub kind: &'static str,
    /// As RBAC names it: `pods`, `volumeattachments.storage.k8s.io`.
    pub resource: String,
    /// The engine can do without it: the plugins that read it are marked instead.
    pub optional: bool,
    pub phase: KindPhase,
}

impl KindHealth {
    /// Whether the model is current as far as this kind goes: listed and watching,
    /// or an optional kind that cannot be read (403) or does not exist (404).
    pub fn is_done(&self) -> bool {
        match self.phase {
            KindPhase::Synced { .. } => true,
            KindPhase::Forbidden { .. } | KindPhase::NotServed { .. } => self.optional,
            KindPhase::Listing { .. } | KindPhase::Retrying { .. } => false,
        }
    }

    /// The error that keeps this kind from being done, if any.
    pub fn error(&self) -> Option<&str> {
        match &self.phase {
            KindPhase::Listing { last_error, .. } => last_error.as_deref(),
            KindPhase::Retrying { error, .. } => Some(error),
            KindPhase::Forbidden { error, .. } | KindPhase::NotServed { error }
                if !self.optional =>
            {
                Some(error)
            }
            _ => None,
        }
    }

    /// `synced 5s ago`, `retrying (3 failures in 12s): …`, `not readable: …`.
    pub fn describe(&self, now: Timestamp) -> String {
        let ago = |t: &Timestamp| age_text((now.as_second() - t.as_second()).max(0));
        match &self.phase {
            KindPhase::Listing {
                since,
                last_error: None,
            } => format!("listing ({})", ago(since)),
            KindPhase::Listing {
                since,
                last_error: Some(e),
            } => format!("listing again ({}); last error: {e}", ago(since)),
            KindPhase::Synced { at } => format!("synced {} ago, watching", ago(at)),
            KindPhase::Retrying {
                since,
                failures,
                error,
            } => format!(
                "retrying ({failures} failure{} in {}): {error}",
                if *failures == 1 { "" } else { "s" },
                ago(since)
            ),
            KindPhase::Forbidden { error, .. } if self.optional => {
                format!("not readable: plugins that need it are marked ({error})")
            }
            KindPhase::Forbidden { error, .. } => format!("forbidden: {error}"),
            KindPhase::NotServed { .. } if self.optional => {
                "not served by this API server (none exist)".into()
            }
            KindPhase::NotServed { error } => error.clone(),
        }
    }
}

fn age_text(secs: i64) -> String {
    match secs {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m{:02}s", s / 60, s % 60),
        s => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}

/// The live source's per-kind state, and the way to make it retry at once; shared
/// between the source and the UI.
#[derive(Clone)]
pub struct LiveControl {
    kinds: Arc<Mutex<Vec<KindHealth>>>,
    retry: Arc<watch::Sender<u64>>,
}

impl Default for LiveControl {
    fn default() -> Self {
        LiveControl {
            kinds: Arc::default(),
            retry: Arc::new(watch::Sender::new(0)),
        }
    }
}

impl LiveControl {
    /// A control that shows `kinds` (for the UI's tests).
    pub fn with_kinds(kinds: Vec<KindHealth>) -> Self {
        let c = LiveControl::default();
        c.publish(kinds);
        c
    }

    /// Every watched kind, in name order, as of the last published update.
    pub fn kinds(&self) -> Vec<KindHealth> {
        self.kinds.lock().map(|k| k.clone()).unwrap_or_default()
    }

    /// List every failed, forbidden or unserved kind again now, without waiting
    /// for its backoff.
    pub fn retry(&self) {
        self.retry.send_modify(|n| *n += 1);
    }

    /// How many retries were asked for.
    pub fn retries(&self) -> u64 {
        *self.retry.borrow()
    }

    fn subscribe(&self) -> watch::Receiver<u64> {
        self.retry.subscribe()
    }

    fn publish(&self, kinds: Vec<KindHealth>) {
        if let Ok(mut k) = self.kinds.lock() {
            *k = kinds;
        }
    }
}

// ---------------------------------------------------------------------------------
// The state the watchers feed

/// A watched kind: its name, its resource as RBAC names it, and whether the engine
/// can do without it.
#[derive(Clone, Debug)]
struct KindSpec {
    kind: &'static str,
    resource: String,
    optional: bool,
}

struct KindEntry {
    health: KindHealth,
    /// Keys listed since the current `Init`, while a (re)list runs.
    listing: Option<BTreeSet<String>>,
    /// The current run of failures (reset by a complete list).
    failing_since: Option<Timestamp>,
    failures: u32,
    last_error: Option<String>,
}

/// The model and what the watchers know about it. Owned by one task; watchers send
/// it changes as messages, so no lock is shared with the UI.
pub struct LiveState {
    pub cluster: Cluster,
    pub events: SchedulingEvents,
    /// Event object name → pod key, to forget an event on its deletion.
    event_pods: BTreeMap<String, String>,
    kinds: BTreeMap<&'static str, KindEntry>,
    /// Pods without `spec.priority` (or naming a class not seen yet: watchers race),
    /// admitted again when classes change. The API server sets `spec.priority`, so
    /// this stays empty on real clusters.
    unadmitted: BTreeMap<String, core::Pod>,
    /// Every kind was done once: a failure now is a reconnection.
    was_ready: bool,
    /// When the model stopped being known current: the first failure (or relist)
    /// after it was. The data is as old as this, however long ago it last changed.
    outage_since: Option<Timestamp>,
    changed: bool,
    /// A kind's phase changed since the last publish.
    phases_changed: bool,
    /// The DRA kinds are among those watched (all of them or none).
    dra_watched: bool,
}

impl LiveState {
    fn new(specs: impl IntoIterator<Item = KindSpec>, now: Timestamp) -> Self {
        let kinds: BTreeMap<&'static str, KindEntry> = specs
            .into_iter()
            .map(|s| {
                let health = KindHealth {
                    kind: s.kind,
                    resource: s.resource,
                    optional: s.optional,
                    phase: KindPhase::Listing {
                        since: now,
                        last_error: None,
                    },
                };
                let entry = KindEntry {
                    health,
                    listing: None,
                    failing_since: None,
                    failures: 0,
                    last_error: None,
                };
                (s.kind, entry)
            })
            .collect();
        let dra_watched = DRA_KINDS.iter().all(|k| kinds.contains_key(k));
        let mut cluster = Cluster::new();
        cluster.dra_objects_known = dra_watched;
        LiveState {
            cluster,
            events: BTreeMap::new(),
            event_pods: BTreeMap::new(),
            unadmitted: BTreeMap::new(),
            kinds,
            was_ready: false,
            outage_since: None,
            changed: false,
            phases_changed: true,
            dra_watched,
        }
    }

    fn entry(&mut self, kind: &'static str) -> Option<&mut KindEntry> {
        self.kinds.get_mut(kind)
    }

    fn set_phase(&mut self, kind: &'static str, phase: KindPhase) {
        let Some(e) = self.kinds.get_mut(kind) else {
            return;
        };
        let optional = e.health.optional;
        let unreadable = match &phase {
            KindPhase::Forbidden { error, .. } if optional => Some(Some(error.clone())),
            KindPhase::NotServed { error } if DRA_KINDS.contains(&kind) => {
                Some(Some(error.clone()))
            }
            KindPhase::Synced { .. } | KindPhase::NotServed { .. } => Some(None),
            _ => None,
        };
        e.health.phase = phase;
        self.phases_changed = true;
        // An optional kind that cannot be read is left out of the model, and the
        // plugins that read it say so in their traces.
        match unreadable {
            Some(Some(why)) => {
                self.cluster.unreadable_kinds.insert(kind.to_string(), why);
                self.changed = true;
            }
            Some(None) if self.cluster.unreadable_kinds.remove(kind).is_some() => {
                self.changed = true;
            }
            _ => {}
        }
        self.cluster.dra_objects_known = self.dra_watched
            && !DRA_KINDS
                .iter()
                .any(|k| self.cluster.unreadable_kinds.contains_key(*k));
    }

    /// Every kind has listed since its last failure (optional kinds may be
    /// unreadable or absent): the model is current.
    pub fn synced(&self) -> bool {
        self.kinds.values().all(|e| e.health.is_done())
    }

    /// Every watched kind, in name order.
    pub fn health(&self) -> Vec<KindHealth> {
        self.kinds.values().map(|e| e.health.clone()).collect()
    }

    /// The error to show first: a required kind's before an optional one's, the
    /// oldest first.
    fn first_error(&self) -> Option<String> {
        self.kinds
            .values()
            .filter(|e| !e.health.is_done())
            .filter_map(|e| {
                let err = e.health.error()?;
                Some((e.health.optional, e.failing_since, e.health.kind, err))
            })
            .min_by(|a, b| (a.0, a.1, a.2).cmp(&(b.0, b.1, b.2)))
            .map(|(.., err)| err.to_string())
    }

    pub fn status(&self) -> SourceStatus {
        if self.synced() {
            return SourceStatus::Connected;
        }
        let error = self.first_error();
        match self.outage_since {
            Some(since) => SourceStatus::Reconnecting {
                since,
                error: error.unwrap_or_else(|| "listing again".into()),
            },
            None => SourceStatus::Connecting { error },
        }
    }

    /// What ends a one-shot load: any failure of a kind but a 403 or 404 of an
    /// optional one, required kinds first.
    fn fatal(&self) -> Option<LiveError> {
        let mut entries: Vec<&KindEntry> = self.kinds.values().collect();
        entries.sort_by_key(|e| e.health.optional);
        entries.into_iter().find_map(|e| {
            let h = &e.health;
            let message = match &h.phase {
                KindPhase::Retrying { error, .. } => error.clone(),
                KindPhase::Forbidden { error, .. } if !h.optional => format!(
                    "{error}; schedscope needs get, list and watch on {} \
                     (deploy/rbac/inspect-clusterrole.yaml grants them)",
                    h.resource
                ),
                KindPhase::NotServed { error } if !h.optional => error.clone(),
                _ => return None,
            };
            Some(LiveError::Read {
                kind: h.kind,
                message,
            })
        })
    }

    fn readmit(&mut self) {
        for (_, p) in std::mem::take(&mut self.unadmitted) {
            p.upsert(self);
        }
    }

    fn list_started(&mut self, kind: &'static str, now: Timestamp) {
        let Some(e) = self.entry(kind) else { return };
        e.listing = Some(BTreeSet::new());
        let last_error = e.last_error.clone();
        self.set_phase(
            kind,
            KindPhase::Listing {
                since: now,
                last_error,
            },
        );
    }

    fn list_done(&mut self, kind: &'static str, now: Timestamp) -> BTreeSet<String> {
        let Some(e) = self.entry(kind) else {
            return BTreeSet::new();
        };
        let listed = e.listing.take().unwrap_or_default();
        e.failing_since = None;
        e.failures = 0;
        e.last_error = None;
        self.set_phase(kind, KindPhase::Synced { at: now });
        listed
    }

    fn failed(&mut self, kind: &'static str, failure: Failure, now: Timestamp) {
        let Some(e) = self.entry(kind) else { return };
        // A half-done list is abandoned; the next one diffs against the model.
        e.listing = None;
        let phase = match failure {
            Failure::Desync => KindPhase::Listing {
                since: now,
                last_error: e.last_error.clone(),
            },
            Failure::Retry(error) => {
                let since = *e.failing_since.get_or_insert(now);
                e.failures += 1;
                e.last_error = Some(error.clone());
                KindPhase::Retrying {
                    since,
                    failures: e.failures,
                    error,
                }
            }
            Failure::Forbidden { verb, error } => {
                e.failing_since.get_or_insert(now);
                e.last_error = Some(error.clone());
                KindPhase::Forbidden { verb, error }
            }
            Failure::NotServed(error) => {
                e.failing_since.get_or_insert(now);
                KindPhase::NotServed { error }
            }
        };
        self.set_phase(kind, phase);
    }

    fn after_change(&mut self, now: Timestamp) {
        if self.synced() {
            self.was_ready = true;
            self.outage_since = None;
        } else if self.was_ready && self.outage_since.is_none() {
            self.outage_since = Some(now);
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
    storage::CSIStorageCapacity,
    "CSIStorageCapacity",
    csi_storage_capacities
);
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

/// The DRA kinds: optional (a cluster without `resource.k8s.io/v1`, or RBAC
/// without it), and unlike the other optional kinds a 404 is unreadable too: the
/// claims of a pod exist whatever the API server serves, so without these objects
/// DynamicResources cannot be replayed.
const DRA_KINDS: [&str; 4] = [
    "DeviceClass",
    "ResourceSlice",
    "ResourceClaim",
    "ResourceClaimTemplate",
];

/// A DRA kind entering the model as the snapshot loader takes it: defaulted and
/// checked; an object the allocator could not read is left out (the old version
/// too) rather than stopping the watch.
macro_rules! dra_kind {
    ($ty:ty, $kind:literal, $field:ident, $fix:expr) => {
        impl Watched for $ty {
            const KIND: &'static str = $kind;
            fn keys(st: &LiveState) -> Vec<String> {
                st.cluster.$field.keys().cloned().collect()
            }
            fn upsert(mut self, st: &mut LiveState) {
                self.metadata.managed_fields = None;
                let key = self.model_key();
                let fix: fn(&mut $ty) -> Result<(), crate::model::pod::FieldError> = $fix;
                match fix(&mut self) {
                    // `into`: the slices are kept behind an Arc, the other kinds as they are.
                    Ok(()) => st.cluster.$field.insert(key, self.into()),
                    Err(_) => st.cluster.$field.remove(&key),
                };
            }
            fn remove(key: &str, st: &mut LiveState) {
                st.cluster.$field.remove(key);
            }
        }
    };
}

dra_kind!(resource::DeviceClass, "DeviceClass", device_classes, |c| {
    dra::device_class_defaults(c);
    Ok(())
});
dra_kind!(
    resource::ResourceSlice,
    "ResourceSlice",
    resource_slices,
    dra::resource_slice_check
);
dra_kind!(
    resource::ResourceClaim,
    "ResourceClaim",
    resource_claims,
    dra::resource_claim_check
);
dra_kind!(
    resource::ResourceClaimTemplate,
    "ResourceClaimTemplate",
    resource_claim_templates,
    dra::resource_claim_template_check
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

/// Why a watcher stopped.
#[derive(Debug)]
enum Failure {
    /// Listed again after a backoff.
    Retry(String),
    /// The watch's resourceVersion is gone (410): listed again at once.
    Desync,
    /// 403: listed again after the backoff, or when asked.
    Forbidden { verb: &'static str, error: String },
    /// 404: listed again after [`RECHECK_REFUSED`], or when asked.
    NotServed(String),
}

/// An error and its causes in one line, each cause once.
fn chain(e: &dyn std::error::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut cur = Some(e);
    while let Some(c) = cur {
        let s = c.to_string();
        let s = s
            .trim_start_matches("ServiceError: ")
            .trim_start_matches("HyperError: ")
            .to_string();
        if !parts.iter().any(|p| p.contains(&s)) {
            parts.push(s);
        }
        cur = c.source();
    }
    parts.join(": ")
}

/// `message (Reason, HTTP code)`, without the parts the server left empty.
fn status_text(s: &kube::core::Status) -> String {
    let code = match s.reason.as_str() {
        "" => format!("HTTP {}", s.code),
        reason => format!("{reason}, HTTP {}", s.code),
    };
    match s.message.as_str() {
        "" => code,
        message => format!("{message} ({code})"),
    }
}

fn from_status(verb: &'static str, resource: &str, s: &kube::core::Status) -> Failure {
    match s.code {
        403 => Failure::Forbidden {
            verb,
            error: format!("cannot {verb} {resource}: forbidden: {}", status_text(s)),
        },
        404 => Failure::NotServed(format!(
            "cannot {verb} {resource}: the API server does not serve it: {}",
            status_text(s)
        )),
        410 => Failure::Desync,
        _ => Failure::Retry(format!("cannot {verb} {resource}: {}", status_text(s))),
    }
}

/// What a watcher error means for the kind: its verb, and whether a retry can
/// help. kube's own texts carry the whole Status in Debug form; these do not.
fn classify(e: &watcher::Error, resource: &str) -> Failure {
    let (verb, err) = match e {
        watcher::Error::InitialListFailed(k) => ("list", k),
        watcher::Error::WatchStartFailed(k) => ("watch", k),
        watcher::Error::WatchError(s) => return from_status("watch", resource, s),
        watcher::Error::WatchFailed(k) => {
            return Failure::Retry(format!("the watch of {resource} broke: {}", chain(k)));
        }
        watcher::Error::NoResourceVersion => {
            return Failure::Retry(format!("cannot watch {resource}: {e}"));
        }
    };
    match err {
        kube::Error::Api(s) => from_status(verb, resource, s),
        kube::Error::HyperError(_) | kube::Error::Service(_) => {
            Failure::Retry(format!("cannot reach the API server: {}", chain(err)))
        }
        other => Failure::Retry(format!("cannot {verb} {resource}: {}", chain(other))),
    }
}

/// The first wait after a failure; it doubles up to [`BACKOFF_CAP`].
pub const BACKOFF_FIRST: Duration = Duration::from_millis(800);
/// The longest wait between two lists of a failing kind. client-go's reflector
/// waits up to 30 s; a lower cap brings the model back within seconds of an outage
/// (one list per kind per 5 s against a server that is down is cheap).
pub const BACKOFF_CAP: Duration = Duration::from_secs(5);

/// How long a kind refused with a 403 or 404 waits before it is listed again
/// unasked (RBAC granted, a CRD installed); [`LiveControl::retry`] does it at once.
pub const RECHECK_REFUSED: Duration = Duration::from_secs(60);

/// Bounded exponential backoff with jitter: each wait is drawn from [d/2, d] so
/// that the kinds do not retry in lockstep. Reset by a complete list.
struct Backoff {
    next: Duration,
    rng: u64,
}

impl Backoff {
    fn new() -> Self {
        use std::hash::{BuildHasher, Hasher};
        // Only the jitter is random; nothing shown depends on it.
        let seed = std::collections::hash_map::RandomState::new()
            .build_hasher()
            .finish();
        Backoff {
            next: BACKOFF_FIRST,
            rng: seed | 1,
        }
    }

    fn reset(&mut self) {
        self.next = BACKOFF_FIRST;
    }

    fn wait(&mut self) -> Duration {
        let d = self.next;
        self.next = (d * 2).min(BACKOFF_CAP);
        // xorshift64
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        let half = d.as_millis() as u64 / 2;
        Duration::from_millis(half + self.rng % (half + 1))
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

/// How objects of one kind enter the model.
struct Ops<K> {
    kind: &'static str,
    key: fn(&K) -> String,
    upsert: fn(K, &mut LiveState),
    remove: fn(&str, &mut LiveState),
    keys: fn(&LiveState) -> Vec<String>,
}

impl<K> Clone for Ops<K> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<K> Copy for Ops<K> {}

fn ops<K: Watched>() -> Ops<K> {
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
fn change<K: Send + 'static>(ops: Ops<K>, ev: Event<K>) -> Change {
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
async fn pump<K, S>(
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
pub(super) fn resource_name<K: Resource<DynamicType = ()>>() -> String {
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

const POD_GROUP: &str = "PodGroup";

fn pod_group_ops() -> Ops<DynamicObject> {
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
fn start_watchers(
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
    let pods: Api<core::Pod> = match &opts.namespace {
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
        .block_on(async { Client::try_from(config) })
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

#[cfg(test)]
mod tests {
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
}
