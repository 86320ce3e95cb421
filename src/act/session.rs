//! The acting loop: take the Lease, watch the cluster, keep the [`Actor`] in step
//! with it, send the writes it calls for, apply the operator's Allow / Reject, renew
//! the Lease, and give it back on a clean stop. Its owner (the inspector, or the
//! headless log) hears [`ActEvent`]s; the inspector reaches the loop through an
//! [`ActHandle`] (the waiting pods as of the last tick, and a channel for the
//! operator's [`PermitDecision`]s).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use k8s_openapi::jiff::Timestamp;
use kube::Client;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use super::actor::Actor;
use super::writes::{Write, Writer, describe};
use super::{
    ActError, ActOptions, acquire_lease_retrying, acquire_lease_within, api_error_text, elapsed,
    release_lease,
};
use crate::engine::SchedulerConfig;
use crate::engine::waiting::WaitingPodView;
use crate::model::Cluster;
use crate::source::live::{self, LiveOptions};
use crate::source::{DataUpdate, SourceStatus};

/// How often the loop looks at the clock (Permit timeouts, backoffs, the Lease).
pub const TICK: Duration = Duration::from_millis(200);

/// An operator's decision on a waiting pod.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PermitDecision {
    /// Allow at `plugin`, or at every plugin the pod waits on.
    Allow {
        pod: String,
        plugin: Option<String>,
    },
    Reject {
        pod: String,
        message: String,
    },
}

/// What the loop tells its owner.
#[derive(Clone, Debug)]
pub enum ActEvent {
    /// One line for the log; `true` when it is bad news.
    Line(String, bool),
    /// The model to show (the live model with the engine's assumed pods and
    /// nominations) and the live source's state.
    Data(DataUpdate),
    /// The Lease was lost: no more writes, the session only watches from now on.
    /// Why, in words. (Without [`ActOptions::watch_after_lease_lost`] the session
    /// ends with [`ActError::LeaseLost`] instead.)
    StoppedActing(String),
}

/// The inspector's side of a running session.
#[derive(Clone)]
pub struct ActHandle {
    waiting: Arc<Mutex<Vec<WaitingPodView>>>,
    commands: UnboundedSender<PermitDecision>,
}

impl ActHandle {
    /// Pods held at Permit as of the loop's last tick, by key.
    pub fn waiting(&self) -> Vec<WaitingPodView> {
        self.waiting.lock().map(|w| w.clone()).unwrap_or_default()
    }
    /// False once the loop has stopped.
    pub fn send(&self, c: PermitDecision) -> bool {
        self.commands.send(c).is_ok()
    }
}

/// The loop's side of an [`ActHandle`].
pub struct Inputs {
    waiting: Arc<Mutex<Vec<WaitingPodView>>>,
    commands: UnboundedReceiver<PermitDecision>,
}

impl Inputs {
    /// Publish the waiting pods for the handles to read.
    pub fn publish_waiting(&self, waiting: Vec<WaitingPodView>) {
        if let Ok(mut shared) = self.waiting.lock() {
            *shared = waiting;
        }
    }
    /// A command sent by a handle, if one is queued.
    pub fn try_command(&mut self) -> Option<PermitDecision> {
        self.commands.try_recv().ok()
    }
}

/// A handle and the inputs of the session it controls. Dropping every handle stops
/// the session (and releases the Lease).
pub fn channel() -> (ActHandle, Inputs) {
    let waiting = Arc::new(Mutex::new(Vec::new()));
    let (tx, rx) = unbounded_channel();
    (
        ActHandle {
            waiting: waiting.clone(),
            commands: tx,
        },
        Inputs {
            waiting,
            commands: rx,
        },
    )
}

/// The headless loop: [`run_session`] without an operator, logging lines through
/// `log`, until `stop()` says so (or the Lease is lost: [`ActError::LeaseLost`]).
pub async fn run(
    client: Client,
    live_opts: LiveOptions,
    config: SchedulerConfig,
    opts: ActOptions,
    mut log: impl FnMut(String),
    stop: impl Fn() -> bool,
) -> Result<(), ActError> {
    let (handle, inputs) = channel();
    let r = run_session(
        client,
        live_opts,
        config,
        opts,
        inputs,
        |r| {
            if let ActEvent::Line(l, _) = r {
                log(l)
            }
        },
        stop,
    )
    .await;
    drop(handle);
    r
}

/// Everything the loop keeps between ticks.
struct Loop {
    writer: Writer,
    actor: Option<Actor>,
    config: SchedulerConfig,
    opts: ActOptions,
    live: Arc<Cluster>,
    status: Option<SourceStatus>,
    shown: Option<Arc<Cluster>>,
    waiting: Vec<WaitingPodView>,
    /// Why the session stopped acting (the Lease was lost), once it has.
    stopped: Option<String>,
}

impl Loop {
    async fn send_all(&mut self, writes: Vec<Write>, report: &mut impl FnMut(ActEvent)) -> bool {
        let any = !writes.is_empty();
        for w in writes {
            let now = crate::clock::wall_clock();
            match self.writer.perform(&w, now).await {
                Ok(()) => report(ActEvent::Line(describe(&w), false)),
                Err(e) => {
                    let msg = api_error_text(&e);
                    report(ActEvent::Line(
                        format!("{} failed: {msg}", describe(&w)),
                        true,
                    ));
                    if let Some(a) = &mut self.actor {
                        a.refused(&w, &msg);
                    }
                }
            }
        }
        any
    }

    fn command(&mut self, c: PermitDecision, report: &mut impl FnMut(ActEvent)) -> Vec<Write> {
        let Some(a) = &mut self.actor else {
            let why = match &self.stopped {
                Some(why) => format!("not acting: {why}"),
                None => "not acting yet: the cluster is still listing".into(),
            };
            report(ActEvent::Line(why, true));
            return Vec::new();
        };
        let (pod, found, writes, what) = match c {
            PermitDecision::Allow { pod, plugin } => {
                let (found, w) = a.allow(&pod, plugin.as_deref());
                (pod, found, w, "allowed")
            }
            PermitDecision::Reject { pod, message } => {
                let (found, w) = a.reject(&pod, &message);
                (pod, found, w, "rejected")
            }
        };
        if found {
            report(ActEvent::Line(
                format!("{pod}: {what} by the operator"),
                false,
            ));
        } else {
            report(ActEvent::Line(
                format!("{pod} is not waiting at Permit"),
                true,
            ));
        }
        writes
    }

    /// After a change: publish the waiting pods, log new waits, and the model to show.
    fn publish(
        &mut self,
        inputs: &Inputs,
        changed: bool,
        events: Option<Arc<crate::source::SchedulingEvents>>,
        report: &mut impl FnMut(ActEvent),
    ) {
        let Some(a) = &self.actor else {
            if changed {
                report(ActEvent::Data(DataUpdate {
                    cluster: self.live.clone(),
                    source: None,
                    status: self.status.clone(),
                    events,
                    notice: None,
                }));
            }
            return;
        };
        let waiting = a.waiting();
        let moved = waiting != self.waiting;
        if moved {
            for w in &waiting {
                if !self.waiting.iter().any(|o| o.uid == w.uid) {
                    let left = w
                        .remaining(crate::clock::wall_clock())
                        .map(|d| format!(" ({}s left)", d.as_secs()))
                        .unwrap_or_default();
                    report(ActEvent::Line(
                        format!("{} waiting at Permit on {}{left}", w.pod, w.node),
                        false,
                    ));
                }
            }
            inputs.publish_waiting(waiting.clone());
            self.waiting = waiting;
        }
        if changed || moved || self.shown.is_none() {
            let shown = a
                .overlay()
                .map(Arc::new)
                .unwrap_or_else(|| self.live.clone());
            self.shown = Some(shown.clone());
            report(ActEvent::Data(DataUpdate {
                cluster: shown,
                source: None,
                status: self.status.clone(),
                events,
                notice: None,
            }));
        }
    }
}

/// The Lease as the loop keeps it: renewed every retry period; a failed renewal is
/// retried every retry period until the renew deadline has passed since the last
/// success, as client-go's leader elector does, and only then given up.
struct Renewal {
    renewed: Timestamp,
    tried: Timestamp,
    failing: bool,
}

/// What one renewal attempt means for the session.
enum Renewed {
    Ok,
    /// Renewed after failures.
    Recovered,
    /// The first failure of a run: the line to log (still acting).
    Failing(String),
    /// Another failure within the deadline (already said).
    Failed,
    /// The deadline passed: stop acting.
    Lost(ActError),
}

impl Renewal {
    fn new(now: Timestamp) -> Self {
        Renewal {
            renewed: now,
            tried: now,
            failing: false,
        }
    }

    fn due(&self, now: Timestamp, opts: &ActOptions) -> bool {
        elapsed(self.tried, now) >= opts.retry_period
    }

    fn record(
        &mut self,
        outcome: Result<(), ActError>,
        now: Timestamp,
        opts: &ActOptions,
    ) -> Renewed {
        self.tried = now;
        let e = match outcome {
            Ok(()) => {
                self.renewed = now;
                let was_failing = std::mem::replace(&mut self.failing, false);
                return if was_failing {
                    Renewed::Recovered
                } else {
                    Renewed::Ok
                };
            }
            Err(e) => e,
        };
        if elapsed(self.renewed, now) >= opts.renew_deadline {
            return Renewed::Lost(ActError::LeaseLost {
                namespace: opts.lease_namespace.clone(),
                name: opts.scheduler_name.clone(),
                deadline: opts.renew_deadline,
                last_error: e.to_string(),
            });
        }
        if std::mem::replace(&mut self.failing, true) {
            return Renewed::Failed;
        }
        Renewed::Failing(format!(
            "renewing the Lease failed (still acting; retrying for up to {:?} after the \
             last renewal): {e}",
            opts.renew_deadline
        ))
    }
}

/// Take the Lease, then every [`TICK`] (or at once on a command): feed the engine
/// the live model's changes, move it to wall-clock time, send the writes, renew the
/// Lease. Ends when `stop()` says so, when every [`ActHandle`] is dropped (the Lease
/// is released then), or with [`ActError::LeaseLost`] when renewals failed past the
/// renew deadline (unless [`ActOptions::watch_after_lease_lost`]: then it goes on
/// watching without writing).
pub async fn run_session(
    client: Client,
    live_opts: LiveOptions,
    config: SchedulerConfig,
    mut opts: ActOptions,
    mut inputs: Inputs,
    mut report: impl FnMut(ActEvent),
    stop: impl Fn() -> bool,
) -> Result<(), ActError> {
    super::check_profile(&config, &opts)?;
    acquire_lease_retrying(&client, &opts).await?;
    report(ActEvent::Line(
        format!(
            "acting as scheduler {:?} (Lease {}/{}, identity {})",
            opts.scheduler_name, opts.lease_namespace, opts.scheduler_name, opts.identity
        ),
        false,
    ));
    // The engine needs every bound pod; --namespace only narrows what it schedules.
    opts.namespace = live_opts.namespace.clone();
    let watch_opts = LiveOptions {
        namespace: None,
        ..live_opts
    };
    let (tx, rx) = std::sync::mpsc::channel::<DataUpdate>();
    let watch = tokio::spawn(live::run(client.clone(), watch_opts, tx));
    let mut lp = Loop {
        writer: Writer::new(client.clone(), opts.clone()),
        actor: None,
        config,
        opts: opts.clone(),
        live: Arc::new(Cluster::new()),
        status: None,
        shown: None,
        waiting: Vec::new(),
        stopped: None,
    };
    let mut lease = Renewal::new(crate::clock::wall_clock());
    let mut queued: Vec<PermitDecision> = Vec::new();
    let result = loop {
        if stop() {
            break Ok(());
        }
        let now = crate::clock::wall_clock();
        if lp.stopped.is_none() && lease.due(now, &opts) {
            let left = opts
                .renew_deadline
                .saturating_sub(elapsed(lease.renewed, now));
            let outcome = acquire_lease_within(&client, &opts, now, left).await;
            match lease.record(outcome, now, &opts) {
                Renewed::Ok => {}
                Renewed::Recovered => {
                    report(ActEvent::Line("the Lease is renewed again".into(), false))
                }
                Renewed::Failing(line) => report(ActEvent::Line(line, true)),
                Renewed::Failed => {}
                Renewed::Lost(e) => {
                    // Headless, the error itself is the last word (printed once).
                    if !opts.watch_after_lease_lost {
                        break Err(e);
                    }
                    let why = e.to_string();
                    report(ActEvent::StoppedActing(why.clone()));
                    // The engine's assumed pods and waits are void: show the cluster as
                    // it is, and keep showing it.
                    lp.actor = None;
                    lp.stopped = Some(why);
                    lp.shown = None;
                    lp.waiting.clear();
                    inputs.publish_waiting(Vec::new());
                    report(ActEvent::Data(DataUpdate {
                        cluster: lp.live.clone(),
                        source: None,
                        status: lp.status.clone(),
                        events: None,
                        notice: None,
                    }));
                }
            }
        }
        // Any update from the watch (a new model, its status, or the real
        // scheduler's events) is passed on.
        let mut received = false;
        let mut events = None;
        // (Empty, or the watch task ended: it only ends with the session.)
        while let Ok(u) = rx.try_recv() {
            received = true;
            if u.status.is_some() {
                lp.status = u.status;
            }
            if u.events.is_some() {
                events = u.events;
            }
            lp.live = u.cluster;
        }
        let connected = matches!(lp.status, Some(SourceStatus::Connected));
        match &mut lp.actor {
            Some(a) => a.observe(lp.live.clone()),
            None if connected && lp.stopped.is_none() => {
                match Actor::new(lp.live.clone(), lp.config.clone(), lp.opts.clone(), now) {
                    Ok(a) => lp.actor = Some(a),
                    Err(e) => break Err(e),
                }
            }
            None => {}
        }
        let mut writes = Vec::new();
        for c in queued.drain(..) {
            writes.extend(lp.command(c, &mut report));
        }
        if let Some(a) = &mut lp.actor {
            writes.extend(a.step(now));
        }
        let wrote = lp.send_all(writes, &mut report).await;
        if lp.actor.is_some() {
            for e in lp.writer.flush(now).await {
                let line = format!("writing an Event series failed: {}", api_error_text(&e));
                report(ActEvent::Line(line, true));
            }
        }
        for line in lp.writer.take_failed_events() {
            report(ActEvent::Line(line, true));
        }
        lp.publish(&inputs, received || wrote, events, &mut report);
        tokio::select! {
            _ = tokio::time::sleep(TICK) => {}
            c = inputs.commands.recv() => match c {
                Some(c) => queued.push(c),
                // Every handle dropped: the owner is done.
                None => break Ok(()),
            },
        }
    };
    watch.abort();
    // A lost Lease may be someone else's by now; release_lease leaves such a one alone.
    if let Err(e) = release_lease(&client, &opts, crate::clock::wall_clock()).await {
        report(ActEvent::Line(format!("releasing the Lease: {e}"), true));
    }
    result
}
