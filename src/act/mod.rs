//! The opt-in acting scheduler (`--act`): schedscope schedules the pods whose
//! `spec.schedulerName` is its name, through the same [`Scheduler`] loop the
//! simulation uses, with the model fed from the live watch and the clock on wall
//! time, and writes what kube-scheduler writes:
//! * a pod bound in the engine → `POST pods/{name}/binding`;
//! * a failed attempt (a Filter failure, a Permit rejection or timeout) →
//!   `PodScheduled=False` (reason `Unschedulable`, the FitError as message, and the
//!   nominated node after preemption) by a strategic-merge patch of
//!   `pods/{name}/status`, and an `events.k8s.io/v1` `FailedScheduling` Warning
//!   Event (repeats counted on the Event's `series`);
//! * a binding → a `Scheduled` Event ("Successfully assigned NS/POD to NODE");
//! * preemption → the victim's `DisruptionTarget` condition, its deletion and a
//!   `Preempted` Event; lower-priority nominations on the node cleared.
//!
//! Conditions carry `observedGeneration` (the pod's `metadata.generation`), as
//! PodObservedGenerationTracking (GA and locked on in v1.35) has the scheduler do.
//!
//! Parts: [`Actor`] (the engine kept in step with the live model, pure and
//! synchronous), [`Writer`] (the writes), [`session`] (the loop: Lease, watch, engine,
//! writes, operator commands). A `coordination.k8s.io/v1` Lease named after the
//! scheduler name keeps two acting instances of the same name apart; it is released
//! on a clean stop. Nothing here runs unless `--act` is given.
//!
//! [`Scheduler`]: crate::engine::scheduler::Scheduler

mod actor;
pub mod session;
mod writes;

pub use actor::Actor;
pub use session::{ActEvent, ActHandle, PermitDecision, run, run_session};
pub use writes::{CLAIM_FINALIZER, ClaimWrite, PodRef, Write, Writer, describe};

use std::time::Duration;

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::Client;
use kube::api::{Api, PostParams};

pub use crate::source::api_error_text;

/// `--scheduler-name` default.
pub const DEFAULT_SCHEDULER_NAME: &str = "schedscope";
/// `--lease-namespace` default (kube-scheduler's).
pub const DEFAULT_LEASE_NAMESPACE: &str = "kube-system";
/// kube-scheduler's leader-election defaults.
pub const LEASE_DURATION: Duration = Duration::from_secs(15);
/// How long the holder keeps retrying a failed renewal before it gives up acting.
pub const RENEW_DEADLINE: Duration = Duration::from_secs(10);
/// How often the Lease is renewed (and a failed renewal retried).
pub const RETRY_PERIOD: Duration = Duration::from_secs(2);

#[derive(Clone, Debug)]
pub struct ActOptions {
    pub scheduler_name: String,
    pub lease_namespace: String,
    /// This instance's holder identity (host name and process id).
    pub identity: String,
    /// Its Events' `reportingInstance`: the scheduler name and the host name, as
    /// client-go's event recorder names its instance.
    pub reporting_instance: String,
    pub lease_duration: Duration,
    /// A renewal failing for this long after the last success ends the acting.
    pub renew_deadline: Duration,
    pub retry_period: Duration,
    /// After the Lease is lost: keep watching (the inspector stays live, read-only)
    /// rather than end the session with [`ActError::LeaseLost`] (headless).
    pub watch_after_lease_lost: bool,
    /// `--namespace`: schedule only this namespace's pods (the engine still sees
    /// every bound pod, or its node accounting would be wrong).
    pub namespace: Option<String>,
}

/// The machine's host name, as Go's `os.Hostname` reads it (kube-scheduler puts it in
/// its Lease identity and Events); `$HOSTNAME` is a shell variable, rarely exported.
fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "schedscope".into())
}

impl ActOptions {
    pub fn new(scheduler_name: &str, lease_namespace: &str) -> Self {
        let host = host_name();
        ActOptions {
            scheduler_name: scheduler_name.into(),
            lease_namespace: lease_namespace.into(),
            identity: format!("{host}_{}", std::process::id()),
            reporting_instance: format!("{scheduler_name}-{host}"),
            lease_duration: LEASE_DURATION,
            renew_deadline: RENEW_DEADLINE,
            retry_period: RETRY_PERIOD,
            watch_after_lease_lost: false,
            namespace: None,
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
    // The cause is written out, not chained as a source: an error chain printed
    // with `{:#}` would repeat it.
    #[error("Lease {namespace}/{name}: {}", api_error_text(.cause))]
    Lease {
        namespace: String,
        name: String,
        cause: kube::Error,
    },
    #[error("Lease {namespace}/{name}: no answer within {after:?}")]
    LeaseNoAnswer {
        namespace: String,
        name: String,
        after: Duration,
    },
    #[error(
        "stopped acting as scheduler {name:?}: the Lease {namespace}/{name} was not renewed \
         within {deadline:?} (last error: {last_error})"
    )]
    LeaseLost {
        namespace: String,
        name: String,
        deadline: Duration,
        last_error: String,
    },
    #[error("the acting session stopped unexpectedly: {0}")]
    Session(String),
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

/// The Lease's API, name and namespace (named after the scheduler name).
fn lease_api<'a>(client: &Client, opts: &'a ActOptions) -> (Api<Lease>, &'a str, &'a str) {
    let ns = opts.lease_namespace.as_str();
    let api = Api::namespaced(client.clone(), ns);
    (api, opts.scheduler_name.as_str(), ns)
}

fn lease_error(opts: &ActOptions, cause: kube::Error) -> ActError {
    ActError::Lease {
        namespace: opts.lease_namespace.clone(),
        name: opts.scheduler_name.clone(),
        cause,
    }
}

/// Acquire or renew the Lease named after the scheduler name at `now`. Held by
/// another identity whose renewTime + leaseDurationSeconds is still ahead: refused.
/// A conflicting write (another instance raced us) is reported as held too.
pub async fn acquire_lease(
    client: &Client,
    opts: &ActOptions,
    now: Timestamp,
) -> Result<(), ActError> {
    let (api, name, ns) = lease_api(client, opts);
    let err = |cause| lease_error(opts, cause);
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

/// The configuration must have a profile named as the scheduler acts (checked
/// before anything is written, so that the mistake is told at once).
pub fn check_profile(
    config: &crate::engine::SchedulerConfig,
    opts: &ActOptions,
) -> Result<(), ActError> {
    if config
        .profiles
        .iter()
        .any(|p| p.profile_name == opts.scheduler_name)
    {
        return Ok(());
    }
    let names: Vec<&str> = config
        .profiles
        .iter()
        .map(|p| p.profile_name.as_str())
        .collect();
    Err(ActError::NoProfile(
        opts.scheduler_name.clone(),
        names.join(", "),
    ))
}

/// Take the Lease at start-up as the leader elector does: a failure other than
/// another holder (an API server restarting, a transient 403) is retried every
/// retry period until the renew deadline has passed.
pub async fn acquire_lease_retrying(client: &Client, opts: &ActOptions) -> Result<(), ActError> {
    let start = crate::clock::wall_clock();
    loop {
        let now = crate::clock::wall_clock();
        let left = opts.renew_deadline.saturating_sub(elapsed(start, now));
        match acquire_lease_within(client, opts, now, left).await {
            Ok(()) => return Ok(()),
            Err(e @ ActError::LeaseHeld { .. }) => return Err(e),
            Err(e) if elapsed(start, now) >= opts.renew_deadline => return Err(e),
            Err(_) => tokio::time::sleep(opts.retry_period).await,
        }
    }
}

/// [`acquire_lease`] given at most `limit` (at least a retry period): the client
/// retries 503s by itself with a growing backoff, which must not outlast the renew
/// deadline.
pub async fn acquire_lease_within(
    client: &Client,
    opts: &ActOptions,
    now: Timestamp,
    limit: Duration,
) -> Result<(), ActError> {
    let limit = limit.max(opts.retry_period);
    match tokio::time::timeout(limit, acquire_lease(client, opts, now)).await {
        Ok(r) => r,
        Err(_) => Err(ActError::LeaseNoAnswer {
            namespace: opts.lease_namespace.clone(),
            name: opts.scheduler_name.clone(),
            after: limit,
        }),
    }
}

/// Time from `since` to `now` (zero when the clock went back).
pub(crate) fn elapsed(since: Timestamp, now: Timestamp) -> Duration {
    Duration::try_from(now.duration_since(since)).unwrap_or(Duration::ZERO)
}

/// Give the Lease up on a clean stop, as client-go's `ReleaseOnCancel` does: no
/// holder, a one-second duration, so the next instance takes over at once. A Lease
/// that another identity holds by now is left alone.
pub async fn release_lease(
    client: &Client,
    opts: &ActOptions,
    now: Timestamp,
) -> Result<(), ActError> {
    let (api, name, _) = lease_api(client, opts);
    let err = |cause| lease_error(opts, cause);
    let Some(mut lease) = api.get_opt(name).await.map_err(err)? else {
        return Ok(());
    };
    let spec = lease.spec.get_or_insert_with(Default::default);
    if spec.holder_identity.as_deref() != Some(opts.identity.as_str()) {
        return Ok(());
    }
    spec.holder_identity = None;
    spec.lease_duration_seconds = Some(1);
    spec.renew_time = Some(micro(now));
    spec.acquire_time = Some(micro(now));
    api.replace(name, &PostParams::default(), &lease)
        .await
        .map_err(err)?;
    Ok(())
}
