//! The state the watchers feed, and its per-kind state machine: listing, done,
//! failing, refused; the failures a watcher stops with and the backoff before it
//! lists again.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Debug;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use k8s_openapi::jiff::Timestamp;
use kube::runtime::watcher::{self};
use tokio::sync::watch;

use super::connection::LiveError;
use super::kinds::{DRA_KINDS, Watched};
use crate::model::Cluster;
use crate::source::lean_pod::LeanPod;
use crate::source::{SchedulingEvents, SourceStatus};

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

pub(super) fn age_text(secs: i64) -> String {
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
    pub(super) kinds: Arc<Mutex<Vec<KindHealth>>>,
    pub(super) retry: Arc<watch::Sender<u64>>,
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

    pub(super) fn subscribe(&self) -> watch::Receiver<u64> {
        self.retry.subscribe()
    }

    pub(super) fn publish(&self, kinds: Vec<KindHealth>) {
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
pub(super) struct KindSpec {
    pub(super) kind: &'static str,
    pub(super) resource: String,
    pub(super) optional: bool,
}

pub(super) struct KindEntry {
    pub(super) health: KindHealth,
    /// Keys listed since the current `Init`, while a (re)list runs.
    pub(super) listing: Option<BTreeSet<String>>,
    /// The current run of failures (reset by a complete list).
    pub(super) failing_since: Option<Timestamp>,
    pub(super) failures: u32,
    pub(super) last_error: Option<String>,
}

/// The model and what the watchers know about it. Owned by one task; watchers send
/// it changes as messages, so no lock is shared with the UI.
pub struct LiveState {
    pub cluster: Cluster,
    pub events: SchedulingEvents,
    /// Event object name → pod key, to forget an event on its deletion.
    pub(super) event_pods: BTreeMap<String, String>,
    pub(super) kinds: BTreeMap<&'static str, KindEntry>,
    /// Pods without `spec.priority` (or naming a class not seen yet: watchers race),
    /// admitted again when classes change. The API server sets `spec.priority`, so
    /// this stays empty on real clusters.
    pub(super) unadmitted: BTreeMap<String, LeanPod>,
    /// Every kind was done once: a failure now is a reconnection.
    pub(super) was_ready: bool,
    /// When the model stopped being known current: the first failure (or relist)
    /// after it was. The data is as old as this, however long ago it last changed.
    pub(super) outage_since: Option<Timestamp>,
    pub(super) changed: bool,
    /// A kind's phase changed since the last publish.
    pub(super) phases_changed: bool,
    /// The DRA kinds are among those watched (all of them or none).
    pub(super) dra_watched: bool,
}

impl LiveState {
    pub(super) fn new(specs: impl IntoIterator<Item = KindSpec>, now: Timestamp) -> Self {
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

    pub(super) fn entry(&mut self, kind: &'static str) -> Option<&mut KindEntry> {
        self.kinds.get_mut(kind)
    }

    pub(super) fn set_phase(&mut self, kind: &'static str, phase: KindPhase) {
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
    pub(super) fn first_error(&self) -> Option<String> {
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
    pub(super) fn fatal(&self) -> Option<LiveError> {
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

    pub(super) fn readmit(&mut self) {
        for (_, p) in std::mem::take(&mut self.unadmitted) {
            p.upsert(self);
        }
    }

    pub(super) fn list_started(&mut self, kind: &'static str, now: Timestamp) {
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

    pub(super) fn list_done(&mut self, kind: &'static str, now: Timestamp) -> BTreeSet<String> {
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

    pub(super) fn failed(&mut self, kind: &'static str, failure: Failure, now: Timestamp) {
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

    pub(super) fn after_change(&mut self, now: Timestamp) {
        if self.synced() {
            self.was_ready = true;
            self.outage_since = None;
        } else if self.was_ready && self.outage_since.is_none() {
            self.outage_since = Some(now);
        }
    }
}

/// Why a watcher stopped.
#[derive(Debug)]
pub(super) enum Failure {
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
pub(super) fn chain(e: &dyn std::error::Error) -> String {
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
pub(super) fn status_text(s: &kube::core::Status) -> String {
    let code = match s.reason.as_str() {
        "" => format!("HTTP {}", s.code),
        reason => format!("{reason}, HTTP {}", s.code),
    };
    match s.message.as_str() {
        "" => code,
        message => format!("{message} ({code})"),
    }
}

pub(super) fn from_status(verb: &'static str, resource: &str, s: &kube::core::Status) -> Failure {
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
pub(super) fn classify(e: &watcher::Error, resource: &str) -> Failure {
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
pub(super) struct Backoff {
    pub(super) next: Duration,
    pub(super) rng: u64,
}

impl Backoff {
    pub(super) fn new() -> Self {
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

    pub(super) fn reset(&mut self) {
        self.next = BACKOFF_FIRST;
    }

    pub(super) fn wait(&mut self) -> Duration {
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
