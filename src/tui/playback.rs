//! Simulation mode (`--simulate`): the engine's step-through [`Scheduler`] behind the
//! TUI's [`PermitGate`] trait. The app owns it (no thread, no sharing): keys step or
//! play it, the runner's 1 Hz ticks move its clock while playing, and every change of
//! its model reaches the panes as a [`DataUpdate`], like a reload from a data source.
//!
//! Time: the simulator's clock only moves when told. Paused, it is frozen (countdowns
//! stand still); playing, each tick moves it by the wall-clock time elapsed since play
//! started (from the injected [`Clock`](super::Clock)) and runs one scheduling cycle.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use k8s_openapi::jiff::{SignedDuration, Timestamp};

use crate::engine::queue::QueueName;
use crate::engine::scheduler::{Attempt, Scheduler, SimEvent, SimEventKind};
use crate::model::Cluster;
use crate::render::simulation::describe;

use super::action::DataUpdate;
use super::waiting::{PermitGate, WaitingEvent};
use crate::report::HeldPod;

/// How an attempt ended (so far: a waiting pod's attempt is still open).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttemptOutcome {
    /// Popped; the cycle has not reported yet.
    Scheduling,
    Reserved,
    Waiting,
    Allowed,
    Bound,
    /// Rejected at Permit (a plugin, a timeout, preemption, the operator).
    Rejected,
    /// The cycle (or its binding half) failed; the pod went back to a queue.
    Failed,
    Gated,
}

impl AttemptOutcome {
    pub fn label(self) -> &'static str {
        match self {
            AttemptOutcome::Scheduling => "scheduling",
            AttemptOutcome::Reserved => "reserved",
            AttemptOutcome::Waiting => "waiting",
            AttemptOutcome::Allowed => "allowed",
            AttemptOutcome::Bound => "bound",
            AttemptOutcome::Rejected => "rejected",
            AttemptOutcome::Failed => "failed",
            AttemptOutcome::Gated => "gated",
        }
    }
}

/// One scheduling attempt of a pod, as the History tab lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HistoryEntry {
    /// Index into [`Scheduler::attempts`] (the scheduling cycle's number, from 0).
    pub attempt: usize,
    /// The pod's own attempt number, from 1.
    pub pod_attempt: u32,
    pub at_ms: u64,
    pub from: QueueName,
    pub outcome: AttemptOutcome,
    /// The last thing that happened in this attempt, in the timeline's words.
    pub message: String,
}

/// Pods per queue, for the status bar.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueCounts {
    pub active: usize,
    pub backoff: usize,
    pub unschedulable: usize,
    pub gated: usize,
}

/// What a step did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// One scheduling cycle ran for this pod.
    Cycle { pod: String },
    /// Nothing could be popped; time jumped to the next deadline.
    Jumped { to: Timestamp },
    /// Nothing to schedule and nothing time could change.
    Settled,
}

struct Anchor {
    wall: Timestamp,
    sim: Timestamp,
}

pub struct Simulation {
    sim: Scheduler,
    source: String,
    playing: Option<Anchor>,
    /// Events already folded into `history` and the displayed cluster.
    seen: usize,
    history: BTreeMap<String, Vec<HistoryEntry>>,
    /// Pods the simulation schedules (pending at the start, or added).
    tracked: BTreeSet<String>,
    counts: QueueCounts,
    /// Each pod's latest failure message, until it binds.
    last_failure: BTreeMap<String, String>,
    /// The model the panes show: the simulator's, with each failed pod's
    /// `PodScheduled=False` condition set as kube-scheduler does after a failure.
    cluster: Arc<Cluster>,
    changed: bool,
}

impl Simulation {
    /// `source` labels the status bar (`simulate gang-demo.yaml`).
    pub fn new(sim: Scheduler, source: impl Into<String>) -> Self {
        let cluster = Arc::new(sim.cluster().clone());
        let mut s = Simulation {
            sim,
            source: source.into(),
            playing: None,
            seen: 0,
            history: BTreeMap::new(),
            tracked: BTreeSet::new(),
            counts: QueueCounts::default(),
            last_failure: BTreeMap::new(),
            cluster,
            changed: false,
        };
        s.absorb();
        s.changed = false;
        s
    }

    pub fn source(&self) -> &str {
        &self.source
    }
    pub fn now(&self) -> Timestamp {
        self.sim.now()
    }
    pub fn start(&self) -> Timestamp {
        self.sim.start()
    }
    /// Simulated time since the start, `+m:ss`.
    pub fn elapsed(&self) -> String {
        offset(self.sim.now().duration_since(self.sim.start()).as_millis() as u64)
    }
    pub fn cluster(&self) -> Arc<Cluster> {
        self.cluster.clone()
    }
    pub fn is_playing(&self) -> bool {
        self.playing.is_some()
    }
    pub fn attempts(&self) -> &[Attempt] {
        self.sim.attempts()
    }
    pub fn counts(&self) -> QueueCounts {
        self.counts
    }
    pub fn tracked(&self) -> &BTreeSet<String> {
        &self.tracked
    }
    pub fn is_settled(&self) -> bool {
        self.sim.is_settled()
    }
    pub fn queue_of(&self, key: &str) -> Option<QueueName> {
        self.sim.queue_position(key)
    }
    /// The pod's attempts, oldest first.
    pub fn history(&self, key: &str) -> &[HistoryEntry] {
        self.history.get(key).map_or(&[], |v| v.as_slice())
    }
    pub fn events(&self) -> &[SimEvent] {
        self.sim.events()
    }

    /// Start or stop playing; `wall` is the injected clock's time.
    pub fn toggle_play(&mut self, wall: Timestamp) -> bool {
        self.playing = match self.playing {
            Some(_) => None,
            None => Some(Anchor {
                wall,
                sim: self.sim.now(),
            }),
        };
        self.playing.is_some()
    }

    pub fn pause(&mut self) {
        self.playing = None;
    }

    /// One scheduling cycle at the current time (due timeouts and backoffs fire
    /// first); with nothing to pop, time jumps to the next deadline instead. `wall` is
    /// the injected clock's time (playing goes on from the jump).
    pub fn step(&mut self, wall: Timestamp) -> Step {
        self.sim.advance_to(self.sim.now());
        let before = self.sim.attempts().len();
        let step = if self.sim.schedule_one() {
            match self.sim.attempts().get(before) {
                Some(a) => Step::Cycle { pod: a.pod.clone() },
                // A popped pod that needed no cycle (deleted or bound meanwhile).
                None => return self.step(wall),
            }
        } else if let Some(to) = self.sim.next_deadline() {
            self.sim.advance_to(to);
            // Playing goes on from the jump: now on the wall clock is the new time.
            if self.playing.is_some() {
                self.playing = Some(Anchor { wall, sim: to });
            }
            Step::Jumped { to }
        } else {
            Step::Settled
        };
        self.absorb();
        step
    }

    /// Every cycle possible at the current time. Returns how many ran.
    pub fn run_until_idle(&mut self) -> usize {
        let n = self.sim.run_until_idle();
        self.absorb();
        n
    }

    /// A runner tick while playing: simulated time follows the wall clock, then one
    /// cycle runs if a pod can be popped. Paused: nothing.
    pub fn tick(&mut self, wall: Timestamp) -> Option<Step> {
        let a = self.playing.as_ref()?;
        let elapsed = wall.duration_since(a.wall).max(SignedDuration::ZERO);
        let target = a.sim.checked_add(elapsed).unwrap_or(a.sim);
        self.sim.advance_to(target);
        let before = self.sim.attempts().len();
        let step = if self.sim.schedule_one() {
            self.sim
                .attempts()
                .get(before)
                .map(|a| Step::Cycle { pod: a.pod.clone() })
        } else {
            None
        };
        self.absorb();
        step
    }

    /// The model after a change, once per change.
    pub fn take_update(&mut self) -> Option<DataUpdate> {
        if !std::mem::take(&mut self.changed) {
            return None;
        }
        Some(DataUpdate {
            cluster: self.cluster.clone(),
            source: None,
            status: None,
            events: None,
            notice: None,
        })
    }

    /// Events since `seq`.
    pub fn events_since(&self, seq: usize) -> &[SimEvent] {
        self.sim.events().get(seq..).unwrap_or(&[])
    }

    /// Fold new events into the history and refresh the displayed model.
    fn absorb(&mut self) {
        let events = self.sim.events();
        if self.seen >= events.len() {
            return;
        }
        for ev in &events[self.seen..] {
            self.tracked.insert(ev.pod.clone());
            let entries = self.history.entry(ev.pod.clone()).or_default();
            if let SimEventKind::Attempt {
                attempt,
                pod_attempt,
                from,
            } = &ev.kind
            {
                entries.push(HistoryEntry {
                    attempt: *attempt,
                    pod_attempt: *pod_attempt,
                    at_ms: ev.at_ms,
                    from: *from,
                    outcome: AttemptOutcome::Scheduling,
                    message: describe(&ev.kind),
                });
                continue;
            }
            match &ev.kind {
                SimEventKind::Failed { message, .. } => {
                    self.last_failure.insert(ev.pod.clone(), message.clone());
                }
                SimEventKind::Bound { .. } => {
                    self.last_failure.remove(&ev.pod);
                }
                _ => {}
            }
            let Some(e) = entries.last_mut() else {
                continue;
            };
            let outcome = match &ev.kind {
                SimEventKind::Reserved { .. } => Some(AttemptOutcome::Reserved),
                SimEventKind::Waiting { .. } => Some(AttemptOutcome::Waiting),
                SimEventKind::Allowed { .. } => Some(AttemptOutcome::Allowed),
                SimEventKind::Bound { .. } => Some(AttemptOutcome::Bound),
                SimEventKind::Rejected { .. } => Some(AttemptOutcome::Rejected),
                SimEventKind::Failed { .. } => Some(AttemptOutcome::Failed),
                SimEventKind::Gated { .. } => Some(AttemptOutcome::Gated),
                // Follow-ups that do not end an attempt add to its message.
                SimEventKind::Nominated { .. } | SimEventKind::Evicted { .. } => {
                    e.message = format!("{}; {}", e.message, describe(&ev.kind));
                    None
                }
                _ => None,
            };
            if let Some(o) = outcome {
                // The rejection says why; "failed" after it only repeats that the pod
                // went back to a queue, so keep the rejection's text and add where.
                if o == AttemptOutcome::Failed && e.outcome == AttemptOutcome::Rejected {
                    e.message = format!("{} → {}", e.message, queue_of_failed(&ev.kind));
                } else {
                    e.outcome = o;
                    e.message = describe(&ev.kind);
                }
            }
        }
        self.seen = events.len();
        self.changed = true;
        self.refresh_cluster();
    }

    fn refresh_cluster(&mut self) {
        let mut c = self.sim.cluster().clone();
        // The latest failure of every failed pod that is still pending, like the
        // PodScheduled condition kube-scheduler writes (display only: no plugin reads it).
        for (key, msg) in &self.last_failure {
            if let Some(p) = c.pod(key)
                && !p.is_bound()
            {
                let mut p = (**p).clone();
                p.not_scheduled = Some(Box::new(("Unschedulable".into(), msg.clone())));
                c.upsert_pod(p);
            }
        }
        self.cluster = Arc::new(c);
        let mut counts = QueueCounts::default();
        for key in &self.tracked {
            match self.sim.queue_position(key) {
                Some(QueueName::Active) => counts.active += 1,
                Some(QueueName::Backoff) => counts.backoff += 1,
                Some(QueueName::Unschedulable) => counts.unschedulable += 1,
                Some(QueueName::Gated) => counts.gated += 1,
                None => {}
            }
        }
        self.counts = counts;
    }

    /// What happened since `seq`, as one status-bar message; `true` when it is bad news
    /// (a rejection or a failure).
    pub fn summary_since(&self, seq: usize) -> Option<(String, bool)> {
        let events = self.events_since(seq);
        let mut parts = Vec::new();
        let mut rejected: Vec<(&String, &String, usize, Vec<String>)> = Vec::new();
        let mut bad = false;
        for ev in events {
            let text = match &ev.kind {
                SimEventKind::Attempt { attempt, .. } => {
                    // The cycle's pod: say where its attempt ended.
                    let last = events
                        .iter()
                        .rev()
                        .find(|e| {
                            e.pod == ev.pod && !matches!(e.kind, SimEventKind::Attempt { .. })
                        })
                        .map(|e| describe(&e.kind))
                        .unwrap_or_default();
                    Some(format!("cycle #{} {}: {last}", attempt + 1, ev.pod))
                }
                SimEventKind::Allowed { node } => Some(
                    WaitingEvent::Allowed {
                        pod: ev.pod.clone(),
                        node: node.clone(),
                    }
                    .describe(),
                ),
                SimEventKind::Rejected {
                    plugin, message, ..
                } => {
                    bad = true;
                    // Pods rejected together for the same reason (a gang timing out at
                    // once) share one part that names them all: the status line would
                    // cut all but the first otherwise.
                    let pods = match rejected
                        .iter_mut()
                        .find(|(p, m, _, _)| *p == plugin && *m == message)
                    {
                        Some((_, _, at, pods)) => {
                            pods.push(ev.pod.clone());
                            Some((*at, pods.join(", ")))
                        }
                        None => {
                            rejected.push((plugin, message, parts.len(), vec![ev.pod.clone()]));
                            None
                        }
                    };
                    let describe = |pod: String| {
                        WaitingEvent::Rejected {
                            pod,
                            plugin: plugin.clone(),
                            message: message.clone(),
                        }
                        .describe()
                    };
                    match pods {
                        Some((at, pods)) => {
                            parts[at] = describe(pods);
                            None
                        }
                        None => Some(describe(ev.pod.clone())),
                    }
                }
                SimEventKind::Evicted { .. } => Some(format!("{}: {}", ev.pod, describe(&ev.kind))),
                SimEventKind::Failed { .. } => {
                    bad = true;
                    None
                }
                _ => None,
            };
            if let Some(t) = text {
                parts.push(t);
            }
        }
        (!parts.is_empty()).then(|| (parts.join(" · "), bad))
    }

    fn waiting_event_since(&self, seq: usize, pod: &str) -> Option<WaitingEvent> {
        self.events_since(seq)
            .iter()
            .filter(|e| e.pod == pod)
            .find_map(|e| match &e.kind {
                SimEventKind::Allowed { node } => Some(WaitingEvent::Allowed {
                    pod: pod.to_string(),
                    node: node.clone(),
                }),
                SimEventKind::Rejected {
                    plugin, message, ..
                } => Some(WaitingEvent::Rejected {
                    pod: pod.to_string(),
                    plugin: plugin.clone(),
                    message: message.clone(),
                }),
                _ => None,
            })
    }
}

fn queue_of_failed(kind: &SimEventKind) -> &'static str {
    match kind {
        SimEventKind::Failed { queue, .. } => queue.as_str(),
        _ => "",
    }
}

/// Time since the start, as every output writes it (`+1m30s`).
pub use crate::report::offset;

impl PermitGate for Simulation {
    fn list(&self) -> Vec<HeldPod> {
        let mut v: Vec<HeldPod> = self.sim.waiting().into_iter().map(HeldPod::from).collect();
        v.sort_by(|a, b| a.pod.cmp(&b.pod));
        v
    }

    fn allow(&mut self, pod: &str, plugin: &str) -> Option<WaitingEvent> {
        let seq = self.sim.events().len();
        self.sim.allow(pod, Some(plugin));
        let ev = self.waiting_event_since(seq, pod);
        self.absorb();
        ev
    }

    fn reject(&mut self, pod: &str, plugin: &str, message: &str) -> Option<WaitingEvent> {
        let seq = self.sim.events().len();
        self.sim.reject(pod, plugin, message);
        let ev = self.waiting_event_since(seq, pod);
        self.absorb();
        ev
    }

    /// `now` is simulated time (the deadlines' clock).
    fn expire(&mut self, now: Timestamp) -> Vec<WaitingEvent> {
        let seq = self.sim.events().len();
        self.sim.advance_to(now);
        let out = self
            .events_since(seq)
            .iter()
            .filter_map(|e| match &e.kind {
                SimEventKind::Rejected {
                    plugin, message, ..
                } => Some(WaitingEvent::Rejected {
                    pod: e.pod.clone(),
                    plugin: plugin.clone(),
                    message: message.clone(),
                }),
                _ => None,
            })
            .collect();
        self.absorb();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::fixtures::{gang_demo, t0};

    fn sim() -> Simulation {
        let (cluster, config) = gang_demo();
        Simulation::new(
            Scheduler::new(cluster, config, Default::default()),
            "simulate",
        )
    }

    fn at(t: Timestamp, secs: i64) -> Timestamp {
        t.checked_add(SignedDuration::from_secs(secs)).expect("ts")
    }

    #[test]
    fn offsets() {
        assert_eq!(offset(0), "+0s");
        assert_eq!(offset(90_000), "+1m30s");
        assert_eq!(offset(1_500), "+1.5s");
        assert_eq!(offset(3_723_000), "+1h2m3s");
    }

    #[test]
    fn paused_is_frozen_playing_follows_the_wall_clock_and_jumps_re_anchor() {
        let mut s = sim();
        let start = s.now();
        assert!(s.take_update().is_none(), "nothing changed yet");
        assert_eq!(s.counts().active, 6);
        // Paused: a tick does nothing.
        assert_eq!(s.tick(at(t0(), 30)), None);
        assert_eq!(s.now(), start);
        assert_eq!(s.run_until_idle(), 6);
        assert!(s.take_update().is_some());
        assert!(s.take_update().is_none(), "one update per change");
        assert_eq!(s.list().len(), 2);
        assert!(s.toggle_play(t0()));
        // Ten wall seconds later the simulation is ten seconds on; nothing to pop.
        assert_eq!(s.tick(at(t0(), 10)), None);
        assert_eq!(s.now(), at(start, 10));
        // A step with nothing to pop jumps to the deadline (+1m30s) and playing goes
        // on from there.
        assert_eq!(s.step(at(t0(), 11)), Step::Jumped { to: at(start, 90) });
        assert!(s.list().is_empty());
        s.tick(at(t0(), 16));
        assert_eq!(s.now(), at(start, 95));
        assert!(!s.toggle_play(at(t0(), 17)));
        s.tick(at(t0(), 100));
        assert_eq!(s.now(), at(start, 95), "paused again: frozen");
        // The timed-out pods are unschedulable, with the condition kube-scheduler sets.
        assert_eq!(
            s.queue_of("training/bert-worker-0"),
            Some(QueueName::Unschedulable)
        );
        let c = s.cluster();
        let p = c.pod("training/bert-worker-0").expect("pod");
        assert_eq!(
            p.not_scheduled.as_deref(),
            Some(&(
                "Unschedulable".into(),
                "0/1 nodes are available: 1 rejected due to timeout after waiting 1m30s at plugin Coscheduling.".into()
            ))
        );
        let h = s.history("training/bert-worker-0");
        assert_eq!(h.len(), 1);
        assert_eq!(h[0].outcome, AttemptOutcome::Rejected);
        assert!(
            h[0].message.ends_with("→ unschedulablePods"),
            "{}",
            h[0].message
        );
        assert_eq!(
            s.history("training/resnet-worker-2")[0].outcome,
            AttemptOutcome::Bound
        );
        assert_eq!(s.step(at(t0(), 200)), Step::Settled);
    }
}
