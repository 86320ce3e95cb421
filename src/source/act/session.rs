//! The acting loop: take the Lease, watch the cluster, keep the [`Actor`] in step
//! with it, send the writes it calls for, apply the operator's Allow / Reject, renew
//! the Lease, and give it back on a clean stop. Its owner (the inspector, or the
//! headless log) hears [`Report`]s; the inspector reaches the loop through an
//! [`ActHandle`] (the waiting pods as of the last tick, and a command channel).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use k8s_openapi::jiff::Timestamp;
use kube::Client;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use super::actor::Actor;
use super::writes::{Write, Writer, describe};
use super::{ActError, ActOptions, RENEW_INTERVAL, acquire_lease, release_lease};
use crate::config::SchedulerConfig;
use crate::engine::waiting::WaitingPodView;
use crate::model::Cluster;
use crate::source::live::{self, LiveOptions};
use crate::source::{DataUpdate, SourceStatus};

/// How often the loop looks at the clock (Permit timeouts, backoffs, the Lease).
pub const TICK: Duration = Duration::from_millis(200);

/// An operator's decision on a waiting pod.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
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
pub enum Report {
    /// One line for the log; `true` when it is bad news.
    Line(String, bool),
    /// The model to show (the live model with the engine's assumed pods and
    /// nominations) and the live source's state.
    Data(DataUpdate),
}

/// The inspector's side of a running session.
#[derive(Clone)]
pub struct ActHandle {
    waiting: Arc<Mutex<Vec<WaitingPodView>>>,
    commands: UnboundedSender<Command>,
}

impl ActHandle {
    /// Pods held at Permit as of the loop's last tick, by key.
    pub fn waiting(&self) -> Vec<WaitingPodView> {
        self.waiting.lock().map(|w| w.clone()).unwrap_or_default()
    }
    /// False once the loop has stopped.
    pub fn send(&self, c: Command) -> bool {
        self.commands.send(c).is_ok()
    }
}

/// The loop's side of an [`ActHandle`].
pub struct Inputs {
    waiting: Arc<Mutex<Vec<WaitingPodView>>>,
    commands: UnboundedReceiver<Command>,
}

impl Inputs {
    /// Publish the waiting pods for the handles to read.
    pub fn publish_waiting(&self, waiting: Vec<WaitingPodView>) {
        if let Ok(mut shared) = self.waiting.lock() {
            *shared = waiting;
        }
    }
    /// A command sent by a handle, if one is queued.
    pub fn try_command(&mut self) -> Option<Command> {
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
/// `log`, until `stop()` says so (or the Lease is lost).
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
            if let Report::Line(l, _) = r {
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
}

impl Loop {
    async fn send_all(&mut self, writes: Vec<Write>, report: &mut impl FnMut(Report)) -> bool {
        let any = !writes.is_empty();
        for w in writes {
            let now = Timestamp::now();
            match self.writer.perform(&w, now).await {
                Ok(()) => report(Report::Line(describe(&w), false)),
                Err(e) => {
                    let msg = e.to_string();
                    report(Report::Line(
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

    fn command(&mut self, c: Command, report: &mut impl FnMut(Report)) -> Vec<Write> {
        let Some(a) = &mut self.actor else {
            report(Report::Line(
                "not acting yet: the cluster is still listing".into(),
                true,
            ));
            return Vec::new();
        };
        let (pod, found, writes, what) = match c {
            Command::Allow { pod, plugin } => {
                let (found, w) = a.allow(&pod, plugin.as_deref());
                (pod, found, w, "allowed")
            }
            Command::Reject { pod, message } => {
                let (found, w) = a.reject(&pod, &message);
                (pod, found, w, "rejected")
            }
        };
        if found {
            report(Report::Line(
                format!("{pod}: {what} by the operator"),
                false,
            ));
        } else {
            report(Report::Line(
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
        report: &mut impl FnMut(Report),
    ) {
        let Some(a) = &self.actor else {
            if changed {
                report(Report::Data(DataUpdate {
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
                        .remaining(Timestamp::now())
                        .map(|d| format!(" ({}s left)", d.as_secs()))
                        .unwrap_or_default();
                    report(Report::Line(
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
            report(Report::Data(DataUpdate {
                cluster: shown,
                source: None,
                status: self.status.clone(),
                events,
                notice: None,
            }));
        }
    }
}

/// Take the Lease, then every [`TICK`] (or at once on a command): feed the engine
/// the live model's changes, move it to wall-clock time, send the writes, renew the
/// Lease. Ends when `stop()` says so, when every [`ActHandle`] is dropped (the Lease
/// is released then), or with an error when the Lease is lost.
pub async fn run_session(
    client: Client,
    live_opts: LiveOptions,
    config: SchedulerConfig,
    mut opts: ActOptions,
    mut inputs: Inputs,
    mut report: impl FnMut(Report),
    stop: impl Fn() -> bool,
) -> Result<(), ActError> {
    acquire_lease(&client, &opts, Timestamp::now()).await?;
    report(Report::Line(
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
    };
    let mut renewed = Timestamp::now();
    let mut queued: Vec<Command> = Vec::new();
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
            None if connected => {
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
    if let Err(e) = release_lease(&client, &opts, Timestamp::now()).await {
        report(Report::Line(format!("releasing the Lease: {e}"), true));
    }
    result
}
