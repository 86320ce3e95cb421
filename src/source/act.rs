//! The opt-in acting scheduler (`--act`): schedscope schedules the pods whose
//! `spec.schedulerName` is its name, through the same [`Simulator`] loop the
//! simulation uses, with the model fed from the live watch and the clock on wall
//! time, and writes what kube-scheduler writes:
//! * a pod bound in the engine → `POST pods/{name}/binding`;
//! * a failed attempt (a Filter failure, a Permit rejection or timeout) →
//!   `PodScheduled=False` (reason `Unschedulable`, the FitError as message) by a
//!   strategic-merge patch of `pods/{name}/status`, and a core/v1 `FailedScheduling`
//!   Warning Event with reportingComponent `schedscope`.
//!
//! A `coordination.k8s.io/v1` Lease named after the scheduler name keeps two acting
//! instances of the same name apart. Nothing here runs unless `--act` is given.

use std::time::Duration;

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::api::core::v1 as core;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta, Time};
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::Client;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

use crate::config::SchedulerConfig;
use crate::engine::scheduler::{SimEventKind, SimOptions, Simulator};
use crate::model::{Cluster, Pod};

/// `--scheduler-name` default.
pub const DEFAULT_SCHEDULER_NAME: &str = "schedscope";
/// `--lease-namespace` default (kube-scheduler's).
pub const DEFAULT_LEASE_NAMESPACE: &str = "kube-system";
/// kube-scheduler's leader-election defaults.
pub const LEASE_DURATION: Duration = Duration::from_secs(15);
pub const RENEW_INTERVAL: Duration = Duration::from_secs(2);

#[derive(Clone, Debug)]
pub struct ActOptions {
    pub scheduler_name: String,
    pub lease_namespace: String,
    /// This instance's holder identity (host name and process id).
    pub identity: String,
    pub lease_duration: Duration,
}

impl ActOptions {
    pub fn new(scheduler_name: &str, lease_namespace: &str) -> Self {
        let host = std::env::var("HOSTNAME").unwrap_or_else(|_| "schedscope".into());
        ActOptions {
            scheduler_name: scheduler_name.into(),
            lease_namespace: lease_namespace.into(),
            identity: format!("{host}_{}", std::process::id()),
            lease_duration: LEASE_DURATION,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ActError {
    #[error(
        "another schedscope instance is acting as scheduler {name:?}: Lease {namespace}/{name} \
         is held by {holder:?} until {until}; refusing to act (stop it, or pick another \
         --scheduler-name)"
    )]
    LeaseHeld {
        namespace: String,
        name: String,
        holder: String,
        until: Timestamp,
    },
    #[error("Lease {namespace}/{name}: {source}")]
    Lease {
        namespace: String,
        name: String,
        source: kube::Error,
    },
    #[error(
        "the scheduler configuration has no profile with schedulerName {0:?} (its profiles: \
         {1}); name one so, or pass --scheduler-name"
    )]
    NoProfile(String, String),
}

fn micro(t: Timestamp) -> MicroTime {
    MicroTime(t)
}

fn add(t: Timestamp, d: Duration) -> Timestamp {
    SignedDuration::try_from(d)
        .ok()
        .and_then(|sd| t.checked_add(sd).ok())
        .unwrap_or(Timestamp::MAX)
}

/// Acquire or renew the Lease named after the scheduler name at `now`. Held by
/// another identity whose renewTime + leaseDurationSeconds is still ahead: refused.
/// A conflicting write (another instance raced us) is reported as held too.
pub async fn acquire_lease(
    client: &Client,
    opts: &ActOptions,
    now: Timestamp,
) -> Result<(), ActError> {
    let name = opts.scheduler_name.as_str();
    let ns = opts.lease_namespace.as_str();
    let api: Api<Lease> = Api::namespaced(client.clone(), ns);
    let err = |source| ActError::Lease {
        namespace: ns.into(),
        name: name.into(),
        source,
    };
    let duration_s = i32::try_from(opts.lease_duration.as_secs()).unwrap_or(i32::MAX);
    let current = api.get_opt(name).await.map_err(err)?;
    let Some(mut lease) = current else {
        let lease = Lease {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some(ns.into()),
                ..Default::default()
            },
            spec: Some(LeaseSpec {
                holder_identity: Some(opts.identity.clone()),
                lease_duration_seconds: Some(duration_s),
                acquire_time: Some(micro(now)),
                renew_time: Some(micro(now)),
                lease_transitions: Some(0),
                ..Default::default()
            }),
        };
        return match api.create(&PostParams::default(), &lease).await {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(s)) if s.code == 409 => {
                // Created by someone else in between: look again once.
                Box::pin(acquire_lease(client, opts, now)).await
            }
            Err(e) => Err(err(e)),
        };
    };
    let spec = lease.spec.get_or_insert_with(Default::default);
    let holder = spec.holder_identity.clone().unwrap_or_default();
    let ours = holder == opts.identity;
    if !holder.is_empty() && !ours {
        let held_for = Duration::from_secs(
            u64::try_from(spec.lease_duration_seconds.unwrap_or(0)).unwrap_or(0),
        );
        let renewed = spec
            .renew_time
            .as_ref()
            .or(spec.acquire_time.as_ref())
            .map(|t| t.0);
        if let Some(r) = renewed {
            let until = add(r, held_for);
            if until > now {
                return Err(ActError::LeaseHeld {
                    namespace: ns.into(),
                    name: name.into(),
                    holder,
                    until,
                });
            }
        }
    }
    if !ours {
        spec.holder_identity = Some(opts.identity.clone());
        spec.acquire_time = Some(micro(now));
        spec.lease_transitions = Some(spec.lease_transitions.unwrap_or(0) + 1);
    }
    spec.lease_duration_seconds = Some(duration_s);
    spec.renew_time = Some(micro(now));
    match api.replace(name, &PostParams::default(), &lease).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.code == 409 => Err(ActError::LeaseHeld {
            namespace: ns.into(),
            name: name.into(),
            holder: "another instance (the Lease changed while renewing)".into(),
            until: add(now, opts.lease_duration),
        }),
        Err(e) => Err(err(e)),
    }
}

/// One write the acting scheduler owes the API server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Write {
    Bind {
        namespace: String,
        name: String,
        uid: String,
        node: String,
    },
    Unschedulable {
        namespace: String,
        name: String,
        uid: String,
        message: String,
    },
}

/// The engine, fed from the live model, in wall-clock time.
pub struct Actor {
    sim: Simulator,
    opts: ActOptions,
    /// Simulator events already turned into writes.
    seen: usize,
}

/// Only the pods this scheduler owns are queued; other pending pods take no
/// resources, so leaving them out changes no verdict.
fn own_cluster(cluster: &Cluster, name: &str) -> Cluster {
    let mut c = cluster.clone();
    let foreign: Vec<String> = c
        .pending_pods()
        .filter(|p| p.scheduler_name != name)
        .map(|p| p.key())
        .collect();
    for k in foreign {
        c.delete_pod(&k);
    }
    c
}

impl Actor {
    pub fn new(
        cluster: &Cluster,
        config: SchedulerConfig,
        opts: ActOptions,
        now: Timestamp,
    ) -> Result<Self, ActError> {
        if !config
            .profiles
            .iter()
            .any(|p| p.profile_name == opts.scheduler_name)
        {
            let names: Vec<&str> = config
                .profiles
                .iter()
                .map(|p| p.profile_name.as_str())
                .collect();
            return Err(ActError::NoProfile(
                opts.scheduler_name.clone(),
                names.join(", "),
            ));
        }
        let sim_opts = SimOptions {
            start: Some(now),
            keep_traces: false,
            max_attempts: Some(usize::MAX),
            max_duration: Duration::MAX,
        };
        let sim = Simulator::new(own_cluster(cluster, &opts.scheduler_name), config, sim_opts);
        Ok(Actor { sim, opts, seen: 0 })
    }

    pub fn simulator(&self) -> &Simulator {
        &self.sim
    }

    pub fn simulator_mut(&mut self) -> &mut Simulator {
        &mut self.sim
    }

    /// New pods of the live model join the engine: pending ones of this scheduler
    /// are queued, bound ones take their node's resources.
    pub fn observe(&mut self, live: &Cluster) {
        let new: Vec<Pod> = live
            .pods()
            .filter(|p| self.sim.cluster().pod(&p.key()).is_none())
            .filter(|p| p.is_bound() || p.scheduler_name == self.opts.scheduler_name)
            .map(|p| Pod::clone(p))
            .collect();
        for p in new {
            // Already present (a race with our own binding) is not an error.
            let _ = self.sim.add_pod(p);
        }
        // Bound pods gone from the live model (deleted, or finished) free their room.
        let gone: Vec<String> = self
            .sim
            .cluster()
            .pods()
            .filter(|p| p.is_bound() && live.pod(&p.key()).is_none())
            .map(|p| p.key())
            .collect();
        for k in gone {
            self.sim.remove_bound_pod(&k);
        }
    }

    /// Move the engine's clock to `now`, fire due Permit timeouts, run every
    /// cycle that can run, and return the writes they call for.
    pub fn step(&mut self, now: Timestamp) -> Vec<Write> {
        self.sim.advance_to(now);
        self.sim.run_until_idle();
        self.drain()
    }

    /// Operator's Allow / Reject of a waiting pod, with the writes that follow.
    pub fn allow(&mut self, pod: &str) -> Vec<Write> {
        self.sim.allow(pod, None);
        self.sim.run_until_idle();
        self.drain()
    }

    pub fn reject(&mut self, pod: &str, message: &str) -> Vec<Write> {
        self.sim.reject(pod, "", message);
        self.sim.run_until_idle();
        self.drain()
    }

    fn drain(&mut self) -> Vec<Write> {
        let events = &self.sim.events()[self.seen..];
        self.seen = self.sim.events().len();
        let mut out = Vec::new();
        for e in events {
            let Some(pod) = self.sim.cluster().pod(&e.pod) else {
                continue;
            };
            let (namespace, name, uid) = (pod.namespace.clone(), pod.name.clone(), pod.uid.clone());
            match &e.kind {
                SimEventKind::Bound { node } => out.push(Write::Bind {
                    namespace,
                    name,
                    uid,
                    node: node.clone(),
                }),
                SimEventKind::Failed { message, .. } => out.push(Write::Unschedulable {
                    namespace,
                    name,
                    uid,
                    message: message.clone(),
                }),
                _ => {}
            }
        }
        out
    }
}

/// Send one write. `now` stamps the condition and the event.
pub async fn perform(
    client: &Client,
    opts: &ActOptions,
    w: &Write,
    now: Timestamp,
) -> Result<(), kube::Error> {
    match w {
        Write::Bind {
            namespace,
            name,
            uid,
            node,
        } => {
            let api: Api<core::Pod> = Api::namespaced(client.clone(), namespace);
            let binding = core::Binding {
                metadata: ObjectMeta {
                    name: Some(name.clone()),
                    namespace: Some(namespace.clone()),
                    uid: Some(uid.clone()),
                    ..Default::default()
                },
                target: core::ObjectReference {
                    kind: Some("Node".into()),
                    name: Some(node.clone()),
                    ..Default::default()
                },
            };
            let _: Value = api
                .create_subresource("binding", name, &PostParams::default(), &binding)
                .await?;
            Ok(())
        }
        Write::Unschedulable {
            namespace,
            name,
            uid,
            message,
        } => {
            let api: Api<core::Pod> = Api::namespaced(client.clone(), namespace);
            // Strategic merge: conditions merge by type, as kube-scheduler's patch.
            let patch = json!({"status": {"conditions": [{
                "type": "PodScheduled",
                "status": "False",
                "reason": "Unschedulable",
                "message": message,
                "lastProbeTime": null,
                "lastTransitionTime": Time(now),
            }]}});
            api.patch_status(name, &PatchParams::default(), &Patch::Strategic(patch))
                .await?;
            let events: Api<core::Event> = Api::namespaced(client.clone(), namespace);
            let ts = now.as_nanosecond();
            let event = core::Event {
                metadata: ObjectMeta {
                    name: Some(format!("{name}.{ts:x}")),
                    namespace: Some(namespace.clone()),
                    ..Default::default()
                },
                involved_object: core::ObjectReference {
                    api_version: Some("v1".into()),
                    kind: Some("Pod".into()),
                    namespace: Some(namespace.clone()),
                    name: Some(name.clone()),
                    uid: Some(uid.clone()),
                    ..Default::default()
                },
                reason: Some("FailedScheduling".into()),
                message: Some(message.clone()),
                type_: Some("Warning".into()),
                action: Some("Scheduling".into()),
                reporting_component: Some("schedscope".into()),
                reporting_instance: Some(opts.identity.clone()),
                source: Some(core::EventSource {
                    component: Some(opts.scheduler_name.clone()),
                    host: None,
                }),
                event_time: Some(micro(now)),
                first_timestamp: Some(Time(now)),
                last_timestamp: Some(Time(now)),
                count: Some(1),
                ..Default::default()
            };
            events.create(&PostParams::default(), &event).await?;
            Ok(())
        }
    }
}

/// How often the acting loop looks at the live model and the clock.
pub const TICK: Duration = Duration::from_millis(200);

/// The headless acting loop: take the Lease, wait for the live model's first whole
/// list, then every [`TICK`] feed the engine the new pods, move it to wall-clock
/// time, send the writes it calls for, and renew the Lease. `log` gets one line per
/// write, per failed write and per pod starting to wait at Permit. Returns on a lost
/// Lease or when `stop()` says so.
pub async fn run(
    client: Client,
    live_opts: super::live::LiveOptions,
    config: SchedulerConfig,
    opts: ActOptions,
    mut log: impl FnMut(String),
    stop: impl Fn() -> bool,
) -> Result<(), ActError> {
    acquire_lease(&client, &opts, Timestamp::now()).await?;
    log(format!(
        "acting as scheduler {:?} (Lease {}/{}, identity {})",
        opts.scheduler_name, opts.lease_namespace, opts.scheduler_name, opts.identity
    ));
    let (tx, rx) = std::sync::mpsc::channel::<crate::tui::DataUpdate>();
    let watch = tokio::spawn(super::live::run(client.clone(), live_opts, tx));
    let mut actor: Option<Actor> = None;
    let mut renewed = Timestamp::now();
    let mut waiting_logged = std::collections::BTreeSet::new();
    let result = loop {
        if stop() {
            break Ok(());
        }
        let now = Timestamp::now();
        if now.duration_since(renewed).unsigned_abs() >= RENEW_INTERVAL {
            if let Err(e) = acquire_lease(&client, &opts, now).await {
                break Err(e);
            }
            renewed = now;
        }
        let mut latest = None;
        while let Ok(u) = rx.try_recv() {
            if matches!(u.status, Some(super::SourceStatus::Connected)) {
                latest = Some(u.cluster);
            }
        }
        if let Some(cluster) = latest {
            match &mut actor {
                Some(a) => a.observe(&cluster),
                None => match Actor::new(&cluster, config.clone(), opts.clone(), now) {
                    Ok(a) => actor = Some(a),
                    Err(e) => break Err(e),
                },
            }
        }
        if let Some(a) = &mut actor {
            for w in a.step(now) {
                match perform(&client, &opts, &w, now).await {
                    Ok(()) => log(describe(&w)),
                    Err(e) => log(format!("{} failed: {e}", describe(&w))),
                }
            }
            for wp in a.simulator().waiting() {
                if waiting_logged.insert(wp.uid.clone()) {
                    let left = wp
                        .remaining(now)
                        .map(|d| format!(" ({}s left)", d.as_secs()))
                        .unwrap_or_default();
                    log(format!("{} waiting at Permit on {}{left}", wp.pod, wp.node));
                }
            }
        }
        tokio::time::sleep(TICK).await;
    };
    watch.abort();
    result
}

/// One line for the log.
pub fn describe(w: &Write) -> String {
    match w {
        Write::Bind {
            namespace,
            name,
            node,
            ..
        } => format!("bound {namespace}/{name} to {node}"),
        Write::Unschedulable {
            namespace,
            name,
            message,
            ..
        } => format!("{namespace}/{name} unschedulable: {message}"),
    }
}
