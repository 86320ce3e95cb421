//! Coscheduling (kubernetes-sigs/scheduler-plugins, `pkg/coscheduling`): all-or-nothing
//! scheduling of a PodGroup (scheduler-plugins: pkg/coscheduling). Out of tree: enabled through a
//! KubeSchedulerConfiguration, as scheduler-plugins users do.
//!
//! Pods name their group with the label `scheduling.x-k8s.io/pod-group`; the group is
//! `<namespace>/<label>` and its PodGroup object gives `minMember`,
//! `scheduleTimeoutSeconds` and `minResources`.
//!
//! * QueueSort: priority, then the group's creation time (or its last failure time),
//!   then `<namespace>/<pod name>`.
//! * PreFilter (UU): group backed off, fewer pods than `minMember`, gated siblings,
//!   cluster-wide `minResources` gap.
//! * PostFilter: when the group cannot reach its quorum any more, rejects its waiting
//!   pods (`optimistic rejection in PostFilter`).
//! * Permit: waits until `minMember` pods are assumed, then allows the whole group;
//!   the first waiting member activates its siblings.
//! * Unreserve: rejects the rest of the group (`rejection in Unreserve`).
//!
//! State that upstream keeps in the long-lived plugin (permitted and backed-off
//! groups, last failure times) lives in the scheduler's [`Handle`]; without one (a
//! single `explain` cycle) the plugin behaves as in a freshly started scheduler. The
//! set of assigned pods is read from the cluster model (bound and assumed pods of the
//! group), which is what upstream's `assignedPodsByPG` holds in every sequence a
//! simulation can produce.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::config::field;
use crate::engine::framework::*;
use crate::engine::handle::Handle;
use crate::engine::status::Status;
use crate::model::resource::{CPU, EPHEMERAL_STORAGE, MEMORY, PODS};
use crate::model::{Cluster, Pod, PodGroup, Sym};

pub const NAME: &str = "Coscheduling";
/// `v1alpha1.PodGroupLabel`.
pub const POD_GROUP_LABEL: &str = "scheduling.x-k8s.io/pod-group";
const PERMIT_STATE_KEY: &str = "PermitCoscheduling";
/// `util.DefaultWaitTime`.
const DEFAULT_WAIT_TIME: Duration = Duration::from_secs(60);

/// `CoschedulingArgs` (scheduler-plugins `config/v1`), defaulted.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CoschedulingArgs {
    pub permit_waiting_time_seconds: i64,
    pub pod_group_backoff_seconds: i64,
    pub pod_group_reject_percentage: i32,
}

impl Default for CoschedulingArgs {
    fn default() -> Self {
        CoschedulingArgs {
            permit_waiting_time_seconds: 60,
            pod_group_backoff_seconds: 0,
            pod_group_reject_percentage: 10,
        }
    }
}

/// The args as written: every field optional.
#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RawArgs {
    #[serde(default)]
    permit_waiting_time_seconds: Option<i64>,
    #[serde(default)]
    pod_group_backoff_seconds: Option<i64>,
    #[serde(default)]
    pod_group_reject_percentage: Option<i32>,
    #[serde(default)]
    #[allow(dead_code)]
    api_version: Option<String>,
    #[serde(default)]
    #[allow(dead_code)]
    kind: Option<String>,
}

fn decode(user: Option<&Value>, path: &str) -> Result<CoschedulingArgs, Vec<String>> {
    let raw: RawArgs = match user {
        None | Some(Value::Null) => RawArgs::default(),
        Some(v) => serde_json::from_value(v.clone()).map_err(|e| {
            let at = if path.is_empty() {
                String::new()
            } else {
                format!("{path}: ")
            };
            vec![format!("{at}decoding args: {e}")]
        })?,
    };
    // `SetDefaults_CoschedulingArgs`.
    let d = CoschedulingArgs::default();
    Ok(CoschedulingArgs {
        permit_waiting_time_seconds: raw
            .permit_waiting_time_seconds
            .unwrap_or(d.permit_waiting_time_seconds),
        pod_group_backoff_seconds: raw
            .pod_group_backoff_seconds
            .unwrap_or(d.pod_group_backoff_seconds),
        pod_group_reject_percentage: raw
            .pod_group_reject_percentage
            .unwrap_or(d.pod_group_reject_percentage),
    })
}

impl CoschedulingArgs {
    /// `ValidateCoschedulingArgs`: paths are relative to the args (a nil path), as
    /// the plugin validates in `New`.
    pub fn validate(&self) -> Vec<String> {
        let mut errs = Vec::new();
        if self.permit_waiting_time_seconds < 0 {
            errs.push(field::invalid(
                "permitWaitingTimeSeconds",
                self.permit_waiting_time_seconds,
                "must be greater than 0",
            ));
        }
        if self.pod_group_backoff_seconds < 0 {
            errs.push(field::invalid(
                "podGroupBackoffSeconds",
                self.pod_group_backoff_seconds,
                "must be greater than 0",
            ));
        }
        if !(0..=100).contains(&self.pod_group_reject_percentage) {
            errs.push(field::invalid(
                "podGroupRejectPercentage",
                self.pod_group_reject_percentage,
                "must be between 0 and 100",
            ));
        }
        errs
    }
}

/// `utilerrors.NewAggregate(errs).Error()`.
fn aggregate(errs: &[String]) -> String {
    match errs {
        [one] => one.clone(),
        _ => format!("[{}]", errs.join(", ")),
    }
}

/// Registry args hook: defaults only. Out-of-tree args are validated when the plugin
/// is built (`New`), so a bad value is a construction error, not a config field error.
pub fn args(user: Option<&Value>, path: &str) -> Result<Value, Vec<String>> {
    let a = decode(user, path)?;
    serde_json::to_value(a).map_err(|e| vec![format!("{path}: encoding args: {e}")])
}

pub fn new(args: &Value, _fts: &crate::version::Features) -> Result<Arc<dyn Plugin>, String> {
    let a = decode(Some(args), "").map_err(|e| aggregate(&e))?;
    let errs = a.validate();
    if !errs.is_empty() {
        return Err(aggregate(&errs));
    }
    Ok(Arc::new(Coscheduling {
        schedule_timeout: Duration::from_secs(a.permit_waiting_time_seconds as u64),
        reject_threshold: f64::from(a.pod_group_reject_percentage) / 100.0,
        pg_backoff: (a.pod_group_backoff_seconds > 0)
            .then(|| Duration::from_secs(a.pod_group_backoff_seconds as u64)),
    }))
}

pub struct Coscheduling {
    /// `permitWaitingTimeSeconds`: the default wait, and the permitted-group TTL.
    schedule_timeout: Duration,
    /// `podGroupRejectPercentage / 100`.
    reject_threshold: f64,
    /// `podGroupBackoffSeconds` when > 0.
    pg_backoff: Option<Duration>,
}

/// The PodGroupManager's time-based caches, kept across cycles in the handle.
#[derive(Clone, Debug, Default)]
struct Manager {
    /// `permittedPG`: group → expiry.
    permitted: BTreeMap<String, Timestamp>,
    /// `backedOffPG`: group → expiry.
    backed_off: BTreeMap<String, Timestamp>,
    /// `lastFailedSchedulePG`.
    last_failed: BTreeMap<String, Timestamp>,
}

fn add(t: Timestamp, d: Duration) -> Timestamp {
    SignedDuration::try_from(d)
        .ok()
        .and_then(|sd| t.checked_add(sd).ok())
        .unwrap_or(Timestamp::MAX)
}

/// A go-cache `Get`: present and not expired.
fn live(cache: &BTreeMap<String, Timestamp>, key: &str, now: Timestamp) -> bool {
    cache.get(key).is_some_and(|&exp| exp > now)
}

/// A go-cache `Add`: only when absent or expired.
fn cache_add(cache: &mut BTreeMap<String, Timestamp>, key: &str, ttl: Duration, now: Timestamp) {
    if !live(cache, key, now) {
        cache.insert(key.to_string(), add(now, ttl));
    }
}

/// The pod's group label (`util.GetPodGroupLabel`).
fn group_label(pod: &Pod) -> &str {
    pod.labels.get(POD_GROUP_LABEL).map_or("", Sym::as_str)
}

/// `<namespace>/<label>`, or "" without the label (`util.GetPodGroupFullName`).
pub fn group_full_name(pod: &Pod) -> String {
    let l = group_label(pod);
    if l.is_empty() {
        String::new()
    } else {
        format!("{}/{}", pod.namespace, l)
    }
}

/// `GetPodGroup`: the full name (empty without the label) and the PodGroup, if any.
fn get_pod_group<'c>(cluster: &'c Cluster, pod: &Pod) -> (String, Option<&'c PodGroup>) {
    let full = group_full_name(pod);
    if full.is_empty() {
        return (full, None);
    }
    let pg = cluster.pod_groups.get(&full);
    (full, pg)
}

/// Pods of the group in the pod's namespace (the pod lister: every non-terminal pod).
fn group_pods<'c>(cluster: &'c Cluster, namespace: &str, label: &str) -> Vec<&'c Arc<Pod>> {
    cluster
        .pods()
        .filter(|p| p.namespace == namespace && group_label(p) == label)
        .collect()
}

/// Names of the group's assumed or bound pods, plus `extra`.
fn assigned_count(cluster: &Cluster, namespace: &str, label: &str, extra: Option<&str>) -> usize {
    let mut names: std::collections::BTreeSet<&str> = cluster
        .pods()
        .filter(|p| p.namespace == namespace && group_label(p) == label && p.is_bound())
        .map(|p| p.name.as_str())
        .collect();
    if let Some(e) = extra {
        names.insert(e);
    }
    names.len()
}

#[derive(Clone, Debug)]
struct PermitState {
    activate: bool,
}

impl Coscheduling {
    fn with_manager<R>(&self, state: &CycleState, f: impl FnOnce(&mut Manager) -> R) -> R {
        match Handle::from_state(state) {
            Some(h) => h.with_plugin_data::<Manager, R>(NAME, f),
            None => f(&mut Manager::default()),
        }
    }

    /// `GetCreationTimestamp`: the group's last failure, else its creation time; the
    /// pod's initial attempt time without a group.
    fn creation_timestamp(
        &self,
        cluster: Option<&Cluster>,
        mgr: Option<&Manager>,
        info: &QueuedPodInfo,
    ) -> Timestamp {
        let ts = info.initial_attempt_timestamp.unwrap_or(info.timestamp);
        let label = group_label(&info.pod);
        if label.is_empty() {
            return ts;
        }
        let full = format!("{}/{}", info.pod.namespace, label);
        if let Some(t) = mgr.and_then(|m| m.last_failed.get(&full)) {
            return *t;
        }
        match cluster.and_then(|c| c.pod_groups.get(&full)) {
            // Go's zero time when the PodGroup has no creationTimestamp.
            Some(pg) => pg.creation_timestamp.unwrap_or(Timestamp::MIN),
            None => ts,
        }
    }

    fn less_with(
        &self,
        cluster: Option<&Cluster>,
        mgr: Option<&Manager>,
        a: &QueuedPodInfo,
        b: &QueuedPodInfo,
    ) -> bool {
        if a.pod.priority != b.pod.priority {
            return a.pod.priority > b.pod.priority;
        }
        let t1 = self.creation_timestamp(cluster, mgr, a);
        let t2 = self.creation_timestamp(cluster, mgr, b);
        if t1 == t2 {
            return a.pod.key() < b.pod.key();
        }
        t1 < t2
    }

    /// `PodGroupManager.PreFilter`.
    fn pre_filter_check(&self, cx: &Ctx, mgr: &mut Manager, pod: &Pod) -> Result<(), String> {
        let (full, pg) = get_pod_group(cx.cluster, pod);
        let Some(pg) = pg else { return Ok(()) };
        if live(&mgr.backed_off, &full, cx.now) {
            return Err(format!("podGroup {full} failed recently"));
        }
        let pods = group_pods(cx.cluster, &pod.namespace, group_label(pod));
        let mut quorum_gap = i64::from(pg.min_member) - pods.len() as i64;
        if quorum_gap > 0 {
            return Err(format!(
                "pre-filter pod {} cannot find enough sibling pods, current pods number: {}, minMember of group: {}",
                pod.name,
                pods.len(),
                pg.min_member
            ));
        }
        // How many gated pods the group tolerates: minMember may be below the pods.
        for p in &pods {
            if !p.scheduling_gates.is_empty() {
                quorum_gap += 1;
            }
            if quorum_gap > 0 {
                return Err(format!(
                    "pre-filter pod {} cannot proceed due to gated pods in the same PodGroup",
                    pod.name
                ));
            }
        }
        if pg.min_resources.is_empty() {
            return Ok(());
        }
        if live(&mgr.permitted, &full, cx.now) {
            return Ok(());
        }
        check_cluster_resource(cx.cluster, pg, &full)?;
        cache_add(&mut mgr.permitted, &full, self.schedule_timeout, cx.now);
        Ok(())
    }

    /// `GetWaitTimeDuration` with Permit's "0 keeps the args value".
    fn wait_time(&self, pg: &PodGroup) -> Duration {
        let from_pg = match pg.schedule_timeout_seconds {
            Some(s) => Duration::from_secs(u64::try_from(s).unwrap_or(0)),
            None if !self.schedule_timeout.is_zero() => self.schedule_timeout,
            None => DEFAULT_WAIT_TIME,
        };
        if from_pg.is_zero() {
            self.schedule_timeout
        } else {
            from_pg
        }
    }

    /// Reject every waiting pod of the group (same namespace and label).
    fn reject_waiting(state: &CycleState, namespace: &str, label: &str, message: &str) {
        let Some(h) = Handle::from_state(state) else {
            return;
        };
        let mut w = h.waiting();
        for uid in w.uids_by_key() {
            let matches = w
                .get(&uid)
                .is_some_and(|wp| wp.pod.namespace == namespace && group_label(&wp.pod) == label);
            if matches {
                w.reject(&uid, NAME, message);
            }
        }
    }
}

impl Plugin for Coscheduling {
    fn name(&self) -> &str {
        NAME
    }
    fn as_queue_sort(&self) -> Option<&dyn QueueSortPlugin> {
        Some(self)
    }
    fn as_pre_filter(&self) -> Option<&dyn PreFilterPlugin> {
        Some(self)
    }
    fn as_post_filter(&self) -> Option<&dyn PostFilterPlugin> {
        Some(self)
    }
    fn as_reserve(&self) -> Option<&dyn ReservePlugin> {
        Some(self)
    }
    fn as_permit(&self) -> Option<&dyn PermitPlugin> {
        Some(self)
    }
}

impl QueueSortPlugin for Coscheduling {
    /// Without a scheduler's context the PodGroup is unknown: priority, then the
    /// initial attempt time, then the key.
    fn less(&self, a: &QueuedPodInfo, b: &QueuedPodInfo) -> bool {
        self.less_with(None, None, a, b)
    }
    fn less_in(&self, cx: &Ctx, state: &CycleState, a: &QueuedPodInfo, b: &QueuedPodInfo) -> bool {
        match Handle::from_state(state) {
            Some(h) => h.with_plugin_data::<Manager, bool>(NAME, |m| {
                self.less_with(Some(cx.cluster), Some(m), a, b)
            }),
            None => self.less_with(Some(cx.cluster), None, a, b),
        }
    }
}

impl PreFilterPlugin for Coscheduling {
    fn pre_filter(&self, cx: &Ctx, state: &mut CycleState, pod: &Pod) -> (PreFilterResult, Status) {
        // UU: no preemption attempt can fix a group problem.
        match self.with_manager(state, |m| self.pre_filter_check(cx, m, pod)) {
            Ok(()) => (None, Status::success()),
            Err(msg) => (None, Status::unresolvable(msg)),
        }
    }
}

impl PostFilterPlugin for Coscheduling {
    fn post_filter(
        &self,
        _fw: &Framework,
        cx: &Ctx,
        state: &CycleState,
        pod: &Pod,
        _statuses: &NodeToStatus,
    ) -> (Option<PostFilterResult>, Status) {
        let (full, pg) = get_pod_group(cx.cluster, pod);
        let Some(pg) = pg else {
            return (
                Some(PostFilterResult::default()),
                Status::unschedulable("can not find pod group"),
            );
        };
        let label = group_label(pod);
        // Enough pods already assigned: do not reject the whole group.
        let assigned = assigned_count(cx.cluster, &pod.namespace, label, None);
        if assigned as i64 >= i64::from(pg.min_member) {
            return (
                Some(PostFilterResult::default()),
                Status::new(crate::engine::Code::Unschedulable, Vec::<String>::new()),
            );
        }
        // A small gap: later pods may still complete the quorum.
        let not_assigned = (f64::from(pg.min_member) - assigned as f64) / f64::from(pg.min_member);
        if not_assigned <= self.reject_threshold {
            return (
                Some(PostFilterResult::default()),
                Status::new(crate::engine::Code::Unschedulable, Vec::<String>::new()),
            );
        }
        Self::reject_waiting(
            state,
            &pod.namespace,
            &pg.name,
            "optimistic rejection in PostFilter",
        );
        let pods = group_pods(cx.cluster, &pod.namespace, label).len();
        self.with_manager(state, |m| {
            if let Some(b) = self.pg_backoff
                && pods as i64 >= i64::from(pg.min_member)
            {
                cache_add(&mut m.backed_off, &full, b, cx.now);
            }
            m.permitted.remove(&full);
            m.last_failed.insert(full.clone(), cx.now);
        });
        (
            Some(PostFilterResult::default()),
            Status::unschedulable(format!(
                "PodGroup {full} gets rejected due to Pod {} is unschedulable even after PostFilter",
                pod.name
            )),
        )
    }
}

impl ReservePlugin for Coscheduling {
    fn reserve(&self, _cx: &Ctx, _state: &mut CycleState, _pod: &Pod, _node: &str) -> Status {
        Status::success()
    }
    /// Rejects the rest of the group (one member failing dooms the quorum).
    fn unreserve(&self, cx: &Ctx, state: &mut CycleState, pod: &Pod, _node: &str) {
        let (full, pg) = get_pod_group(cx.cluster, pod);
        let Some(pg) = pg else { return };
        // The pod leaves the assigned set when the caller forgets it.
        Self::reject_waiting(state, &pod.namespace, &pg.name, "rejection in Unreserve");
        self.with_manager(state, |m| {
            m.permitted.remove(&full);
            m.last_failed.insert(full, cx.now);
        });
    }
}

impl PermitPlugin for Coscheduling {
    fn permit(
        &self,
        cx: &Ctx,
        state: &mut CycleState,
        pod: &Pod,
        _node: &str,
    ) -> (Status, Duration) {
        let (full, pg) = get_pod_group(cx.cluster, pod);
        if full.is_empty() {
            return (Status::success(), Duration::ZERO);
        }
        let Some(pg) = pg else {
            return (Status::unschedulable("PodGroup not found"), Duration::ZERO);
        };
        let label = group_label(pod);
        // The pod counts as assigned from here on (it is assumed).
        let assigned = assigned_count(cx.cluster, &pod.namespace, label, Some(&pod.name));
        if assigned as i64 >= i64::from(pg.min_member) {
            self.with_manager(state, |m| {
                m.last_failed.remove(&full);
            });
            if let Some(h) = Handle::from_state(state) {
                let mut w = h.waiting();
                for uid in w.uids_by_key() {
                    if w.get(&uid)
                        .is_some_and(|wp| group_full_name(&wp.pod) == full)
                    {
                        w.allow(&uid, NAME);
                    }
                }
            }
            return (Status::success(), Duration::ZERO);
        }
        if assigned == 1 {
            // The group's first assumed member activates its siblings.
            state.write(PERMIT_STATE_KEY, PermitState { activate: true });
        }
        let wait = self.wait_time(pg);
        // `ActivateSiblings`.
        if state
            .read::<PermitState>(PERMIT_STATE_KEY)
            .is_some_and(|s| s.activate)
            && let Some(h) = Handle::from_state(state)
        {
            let siblings: Vec<String> = group_pods(cx.cluster, &pod.namespace, label)
                .into_iter()
                .filter(|p| p.uid != pod.uid)
                .map(|p| p.key())
                .collect();
            h.activate(siblings);
        }
        (
            Status::new(crate::engine::Code::Wait, Vec::<String>::new()),
            wait,
        )
    }
}

// ---------------------------------------------------------------------------------
// minResources: `CheckClusterResource`, with Go's rendering of the gap.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum GoFormat {
    DecimalSI,
    BinarySI,
    DecimalExponent,
}

impl GoFormat {
    fn as_str(self) -> &'static str {
        match self {
            GoFormat::DecimalSI => "DecimalSI",
            GoFormat::BinarySI => "BinarySI",
            GoFormat::DecimalExponent => "DecimalExponent",
        }
    }
}

/// A `resource.Quantity` on its int64 fast path: `value · 10^scale`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct GoQuantity {
    value: i64,
    scale: i32,
    format: GoFormat,
}

impl GoQuantity {
    fn new(value: i64, scale: i32, format: GoFormat) -> Self {
        GoQuantity {
            value,
            scale,
            format,
        }
    }

    /// `ParseQuantity` when it takes the int64 fast path; `None` otherwise (upstream
    /// then keeps an `inf.Dec`, whose `%v` shows a pointer).
    fn parse(s: &str) -> Option<GoQuantity> {
        let b = s.as_bytes();
        let mut pos = 0;
        let mut positive = true;
        if let Some(&c) = b.first() {
            if c == b'-' {
                positive = false;
                pos += 1;
            } else if c == b'+' {
                pos += 1;
            }
        }
        while pos < b.len() && b[pos] == b'0' {
            pos += 1;
        }
        let start = pos;
        while pos < b.len() && b[pos].is_ascii_digit() {
            pos += 1;
        }
        let mut num = &s[start..pos];
        if num.is_empty() {
            num = "0";
        }
        let mut denom = "";
        if pos < b.len() && b[pos] == b'.' {
            pos += 1;
            let ds = pos;
            while pos < b.len() && b[pos].is_ascii_digit() {
                pos += 1;
            }
            denom = &s[ds..pos];
        }
        let suffix = &s[pos..];
        let (base2, exponent, format) = match suffix {
            "" => (false, 0, GoFormat::DecimalSI),
            "n" => (false, -9, GoFormat::DecimalSI),
            "u" => (false, -6, GoFormat::DecimalSI),
            "m" => (false, -3, GoFormat::DecimalSI),
            "k" => (false, 3, GoFormat::DecimalSI),
            "M" => (false, 6, GoFormat::DecimalSI),
            "G" => (false, 9, GoFormat::DecimalSI),
            "T" => (false, 12, GoFormat::DecimalSI),
            "P" => (false, 15, GoFormat::DecimalSI),
            "E" => (false, 18, GoFormat::DecimalSI),
            "Ki" => (true, 10, GoFormat::BinarySI),
            "Mi" => (true, 20, GoFormat::BinarySI),
            "Gi" => (true, 30, GoFormat::BinarySI),
            "Ti" => (true, 40, GoFormat::BinarySI),
            "Pi" => (true, 50, GoFormat::BinarySI),
            "Ei" => (true, 60, GoFormat::BinarySI),
            e if e.len() > 1 && (e.starts_with('e') || e.starts_with('E')) => (
                false,
                e[1..].parse::<i32>().ok()?,
                GoFormat::DecimalExponent,
            ),
            _ => return None,
        };
        let digits = (num.len() + denom.len()) as i32;
        let (mut scale, precision, mantissa) = if base2 {
            if denom.is_empty() {
                (
                    0,
                    15 - num.len() as i32 - exponent * 3 / 10 - 1,
                    1i64 << exponent,
                )
            } else {
                (0, -1, 1)
            }
        } else {
            (exponent, 18 - digits, 1)
        };
        if precision < 0 {
            return None;
        }
        scale -= denom.len() as i32;
        if scale < -9 {
            return None;
        }
        let v: i64 = format!("{num}{denom}").parse().ok()?;
        let v = v.checked_mul(mantissa)?;
        Some(GoQuantity::new(
            if positive { v } else { -v },
            scale,
            format,
        ))
    }

    /// `int64Amount.Add` (false on overflow).
    fn add_amount(&mut self, value: i64, scale: i32) -> bool {
        if value == 0 {
            return true;
        }
        if self.value == 0 {
            self.value = value;
            self.scale = scale;
            return true;
        }
        let pow = |v: i64, by: i32| -> Option<i64> {
            let mut out = v;
            for _ in 0..by {
                out = out.checked_mul(10)?;
            }
            Some(out)
        };
        let (v, s) = if self.scale == scale {
            (self.value.checked_add(value), self.scale)
        } else if self.scale > scale {
            (
                pow(self.value, self.scale - scale).and_then(|c| c.checked_add(value)),
                scale,
            )
        } else {
            (
                pow(value, scale - self.scale).and_then(|c| self.value.checked_add(c)),
                self.scale,
            )
        };
        match v {
            Some(v) => {
                self.value = v;
                self.scale = s;
                true
            }
            None => false,
        }
    }

    /// `Quantity.Sub` on the fast path.
    fn sub(&mut self, y: GoQuantity) -> bool {
        if self.value == 0 {
            self.format = y.format;
        }
        self.add_amount(-y.value, y.scale)
    }

    /// `%v` of the struct (its cached string is cleared by `Sub`).
    fn go_v(&self) -> String {
        format!(
            "{{{{{} {}}} {{<nil>}}  {}}}",
            self.value,
            self.scale,
            self.format.as_str()
        )
    }
}

/// Free resources of a node, the group's own pods not counted (`getNodeResource`),
/// as `util.ResourceList` quantities.
fn node_free(node: &crate::model::NodeInfo, group: &str) -> BTreeMap<String, GoQuantity> {
    let mut requested = node.requested.clone();
    let mut pods = node.pods.len() as i64;
    for p in &node.pods {
        if group_full_name(p) == group {
            requested.sub(&p.requests);
            pods -= 1;
        }
    }
    let a = &node.node.allocatable;
    let mut out = BTreeMap::new();
    out.insert(
        CPU.to_string(),
        GoQuantity::new(a.milli_cpu - requested.milli_cpu, -3, GoFormat::DecimalSI),
    );
    out.insert(
        MEMORY.to_string(),
        GoQuantity::new(a.memory - requested.memory, 0, GoFormat::BinarySI),
    );
    out.insert(
        PODS.to_string(),
        GoQuantity::new(a.allowed_pod_number - pods, 0, GoFormat::BinarySI),
    );
    out.insert(
        EPHEMERAL_STORAGE.to_string(),
        GoQuantity::new(
            a.ephemeral_storage - requested.ephemeral_storage,
            0,
            GoFormat::BinarySI,
        ),
    );
    for (k, v) in &a.scalar {
        let free = v - requested.scalar.get(k).copied().unwrap_or(0);
        let format = if k.starts_with("hugepages-") {
            GoFormat::BinarySI
        } else {
            GoFormat::DecimalSI
        };
        out.insert(k.clone(), GoQuantity::new(free, 0, format));
    }
    out
}

/// `CheckClusterResource` over every node: Err(`resource gap: map[...]`) when the
/// cluster's free resources (the group's pods not counted) cannot cover
/// `minResources` plus `pods: minMember`.
fn check_cluster_resource(cluster: &Cluster, pg: &PodGroup, full: &str) -> Result<(), String> {
    let mut want: BTreeMap<String, GoQuantity> = BTreeMap::new();
    for (k, v) in &pg.min_resources {
        // Values off the int64 fast path are approximated by their integer value.
        let q = GoQuantity::parse(v).unwrap_or_else(|| {
            let units = crate::model::Quantity::parse(v).map_or(0, |q| q.value());
            GoQuantity::new(units, 0, GoFormat::DecimalSI)
        });
        want.insert(k.clone(), q);
    }
    want.insert(
        PODS.to_string(),
        GoQuantity::new(i64::from(pg.min_member), 0, GoFormat::DecimalSI),
    );
    for node in cluster.nodes() {
        let free = node_free(node, full);
        let names: Vec<String> = want.keys().cloned().collect();
        for name in names {
            let Some(q) = want.get_mut(&name) else {
                continue;
            };
            let y = free
                .get(&name)
                .copied()
                .unwrap_or(GoQuantity::new(0, 0, GoFormat::DecimalSI));
            q.sub(y);
            if q.value <= 0 {
                want.remove(&name);
            }
        }
        if want.is_empty() {
            return Ok(());
        }
    }
    let parts: Vec<String> = want
        .iter()
        .map(|(k, q)| format!("{k}:{}", q.go_v()))
        .collect();
    Err(format!("resource gap: map[{}]", parts.join(" ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Code;
    use crate::model::testing::{cluster, pod, simple_node, simple_pod};
    use serde_json::json;

    fn member(name: &str, group: &str, node: Option<&str>) -> Value {
        let mut v = simple_pod(name, "1", "1Gi", node);
        v["metadata"]["labels"] = json!({ POD_GROUP_LABEL: group });
        v
    }

    fn pg(name: &str, min: i32) -> PodGroup {
        PodGroup {
            namespace: "default".into(),
            name: name.into(),
            min_member: min,
            ..Default::default()
        }
    }

    fn plugin(args: Value) -> Coscheduling {
        let a = decode(Some(&args), "").unwrap();
        Coscheduling {
            schedule_timeout: Duration::from_secs(a.permit_waiting_time_seconds as u64),
            reject_threshold: f64::from(a.pod_group_reject_percentage) / 100.0,
            pg_backoff: (a.pod_group_backoff_seconds > 0)
                .then(|| Duration::from_secs(a.pod_group_backoff_seconds as u64)),
        }
    }

    fn ctx(c: &Cluster) -> Ctx<'_> {
        Ctx {
            cluster: c,
            now: Timestamp::new(1_700_000_000, 0).unwrap(),
        }
    }

    #[test]
    fn args_defaults_and_validation() {
        let d = args(None, "profiles[0].pluginConfig[0].args").unwrap();
        assert_eq!(
            d,
            json!({"permitWaitingTimeSeconds": 60, "podGroupBackoffSeconds": 0, "podGroupRejectPercentage": 10})
        );
        let d = args(Some(&json!({"permitWaitingTimeSeconds": 10})), "p").unwrap();
        assert_eq!(d["permitWaitingTimeSeconds"], 10);
        assert_eq!(d["podGroupRejectPercentage"], 10);
        assert!(
            args(Some(&json!({"bogus": 1})), "p").unwrap_err()[0]
                .starts_with("p: decoding args: unknown field `bogus`")
        );
        assert!(args(Some(&json!({"kind": "CoschedulingArgs", "apiVersion": "kubescheduler.config.k8s.io/v1"})), "p").is_ok());
        let err = new(
            &json!({"permitWaitingTimeSeconds": -1}),
            &Default::default(),
        )
        .err()
        .unwrap();
        assert_eq!(
            err,
            "permitWaitingTimeSeconds: Invalid value: -1: must be greater than 0"
        );
        let err = new(
            &json!({"podGroupBackoffSeconds": -2, "podGroupRejectPercentage": 101}),
            &Default::default(),
        )
        .err()
        .unwrap();
        assert_eq!(
            err,
            "[podGroupBackoffSeconds: Invalid value: -2: must be greater than 0, podGroupRejectPercentage: Invalid value: 101: must be between 0 and 100]"
        );
        assert!(new(&json!({}), &Default::default()).is_ok());
    }

    #[test]
    fn pre_filter_messages() {
        let nodes = vec![simple_node("n1", "4", "8Gi")];
        let mut gated = member("g", "gang", None);
        gated["spec"]["schedulingGates"] = json!([{"name": "wait"}]);
        // (case, pods, minMember, pod to check, expected UU message)
        type Case<'a> = (&'a str, Vec<Value>, i32, &'a str, Option<&'a str>);
        let cases: Vec<Case> = vec![
            (
                "no label",
                vec![simple_pod("a", "1", "1Gi", None)],
                2,
                "default/a",
                None,
            ),
            (
                "no PodGroup object",
                vec![member("a", "other", None)],
                2,
                "default/a",
                None,
            ),
            (
                "too few pods",
                vec![member("a", "gang", None), member("b", "gang", None)],
                3,
                "default/a",
                Some(
                    "pre-filter pod a cannot find enough sibling pods, current pods number: 2, minMember of group: 3",
                ),
            ),
            (
                "enough pods",
                vec![member("a", "gang", None), member("b", "gang", Some("n1"))],
                2,
                "default/a",
                None,
            ),
            (
                "gated sibling",
                vec![
                    member("a", "gang", None),
                    member("b", "gang", None),
                    gated.clone(),
                ],
                3,
                "default/a",
                Some("pre-filter pod a cannot proceed due to gated pods in the same PodGroup"),
            ),
            (
                "gated sibling tolerated above minMember",
                vec![member("a", "gang", None), member("b", "gang", None), gated],
                2,
                "default/a",
                None,
            ),
        ];
        for (name, pods, min, key, want) in cases {
            let mut c = cluster(nodes.clone(), pods);
            c.pod_groups.insert("default/gang".into(), pg("gang", min));
            let p = c.pod(key).unwrap().clone();
            let pl = plugin(json!({}));
            let (_, st) = pl.pre_filter(&ctx(&c), &mut CycleState::default(), &p);
            match want {
                None => assert!(st.is_success(), "{name}: {st:?}"),
                Some(msg) => {
                    assert_eq!(st.code, Code::UnschedulableAndUnresolvable, "{name}");
                    assert_eq!(st.message(), msg, "{name}");
                }
            }
        }
    }

    #[test]
    fn pre_filter_backed_off_group() {
        let mut c = cluster(
            vec![simple_node("n1", "4", "8Gi")],
            vec![member("a", "gang", None), member("b", "gang", None)],
        );
        c.pod_groups.insert("default/gang".into(), pg("gang", 3));
        let h = Handle::new();
        let mut st = CycleState::default();
        h.attach(&mut st);
        let pl = plugin(json!({"podGroupBackoffSeconds": 30, "podGroupRejectPercentage": 0}));
        let p = c.pod("default/a").unwrap().clone();
        // Three pods needed, two exist: PostFilter cannot back the group off (it backs
        // off only when enough pods exist); add the third.
        c.upsert_pod(pod(member("c", "gang", None)));
        let (_, s) = pl.post_filter(
            &Framework::default(),
            &ctx(&c),
            &st,
            &p,
            &NodeToStatus::default(),
        );
        assert_eq!(
            s.message(),
            "PodGroup default/gang gets rejected due to Pod a is unschedulable even after PostFilter"
        );
        let (_, s) = pl.pre_filter(&ctx(&c), &mut st, &p);
        assert_eq!(s.message(), "podGroup default/gang failed recently");
        // The backoff expires.
        let later = Ctx {
            cluster: &c,
            now: Timestamp::new(1_700_000_030, 0).unwrap(),
        };
        let (_, s) = pl.pre_filter(&later, &mut st, &p);
        assert!(s.is_success(), "{s:?}");
    }

    #[test]
    fn pre_filter_min_resources_gap() {
        let mut c = cluster(
            vec![simple_node("n1", "4", "8Gi"), simple_node("n2", "2", "4Gi")],
            vec![
                member("a", "gang", None),
                member("b", "gang", None),
                // Another workload uses 1 cpu of n1; the group's own pods do not count.
                simple_pod("other", "1", "1Gi", Some("n1")),
                member("c", "gang", Some("n2")),
            ],
        );
        let mut group = pg("gang", 3);
        group.min_resources = [
            ("cpu".to_string(), "8".to_string()),
            ("memory".to_string(), "4Gi".to_string()),
            ("nvidia.com/gpu".to_string(), "2".to_string()),
        ]
        .into();
        c.pod_groups.insert("default/gang".into(), group);
        let p = c.pod("default/a").unwrap().clone();
        let (_, st) = plugin(json!({})).pre_filter(&ctx(&c), &mut CycleState::default(), &p);
        // cpu: 8 − 3 (n1: 4 − 1) − 2 (n2, the group's pod not counted) = 3 = 3000m.
        assert_eq!(
            st.message(),
            "resource gap: map[cpu:{{3000 -3} {<nil>}  DecimalSI} nvidia.com/gpu:{{2 0} {<nil>}  DecimalSI}]"
        );
        assert_eq!(st.code, Code::UnschedulableAndUnresolvable);
    }

    #[test]
    fn go_quantity_parse_fast_path() {
        let cases = [
            ("16", Some((16, 0, GoFormat::DecimalSI))),
            ("500m", Some((500, -3, GoFormat::DecimalSI))),
            ("1.5", Some((15, -1, GoFormat::DecimalSI))),
            ("2k", Some((2, 3, GoFormat::DecimalSI))),
            ("4Gi", Some((4 << 30, 0, GoFormat::BinarySI))),
            ("1e3", Some((1, 3, GoFormat::DecimalExponent))),
            ("0.5", Some((5, -1, GoFormat::DecimalSI))),
            ("1.5Gi", None),
        ];
        for (s, want) in cases {
            let got = GoQuantity::parse(s).map(|q| (q.value, q.scale, q.format));
            assert_eq!(got, want, "{s}");
        }
        let mut q = GoQuantity::parse("16").unwrap();
        q.sub(GoQuantity::new(15_000, -3, GoFormat::DecimalSI));
        assert_eq!(q.go_v(), "{{1000 -3} {<nil>}  DecimalSI}");
    }

    fn info(c: &Cluster, key: &str, ts: i64) -> QueuedPodInfo {
        QueuedPodInfo {
            pod: c.pod(key).unwrap().clone(),
            timestamp: Timestamp::new(1_700_000_000 + ts, 0).unwrap(),
            initial_attempt_timestamp: None,
            attempts: 0,
        }
    }

    #[test]
    fn queue_sort_uses_group_creation_then_failure_time() {
        let mut hi = simple_pod("hi", "1", "1Gi", None);
        hi["spec"]["priority"] = json!(5);
        let mut c = cluster(
            vec![],
            vec![
                member("g-b", "gang", None),
                member("g-a", "gang", None),
                simple_pod("solo", "1", "1Gi", None),
                hi,
            ],
        );
        let mut group = pg("gang", 2);
        group.creation_timestamp = Some(Timestamp::new(1_700_000_005, 0).unwrap());
        c.pod_groups.insert("default/gang".into(), group);
        let pl = plugin(json!({}));
        let h = Handle::new();
        let mut st = CycleState::default();
        h.attach(&mut st);
        let cx = ctx(&c);
        let less = |a: &QueuedPodInfo, b: &QueuedPodInfo| pl.less_in(&cx, &st, a, b);
        let (ga, gb) = (info(&c, "default/g-a", 9), info(&c, "default/g-b", 1));
        let solo_early = info(&c, "default/solo", 2);
        let solo_late = info(&c, "default/solo", 7);
        // Priority first.
        assert!(less(&info(&c, "default/hi", 50), &ga));
        // Same group: same time, then by key (not by the pods' own timestamps).
        assert!(less(&ga, &gb));
        assert!(!less(&gb, &ga));
        // Group created at +5: after a pod queued at +2, before one queued at +7.
        assert!(less(&solo_early, &ga));
        assert!(less(&ga, &solo_late));
        // A failure at +10 moves the group behind the late pod.
        h.with_plugin_data::<Manager, _>(NAME, |m| {
            m.last_failed.insert(
                "default/gang".into(),
                Timestamp::new(1_700_000_010, 0).unwrap(),
            );
        });
        assert!(less(&solo_late, &ga));
        // Without context: the pods' own times.
        assert!(pl.less(&gb, &ga));
    }

    #[test]
    fn permit_waits_then_allows_the_group() {
        let mut c = cluster(
            vec![simple_node("n1", "8", "16Gi")],
            vec![
                member("a", "gang", Some("n1")),
                member("b", "gang", None),
                member("c", "gang", None),
                simple_pod("solo", "1", "1Gi", None),
                member("lost", "nogroup", None),
            ],
        );
        let mut group = pg("gang", 3);
        group.schedule_timeout_seconds = Some(30);
        c.pod_groups.insert("default/gang".into(), group);
        let pl = plugin(json!({}));
        let cx = ctx(&c);
        let mut st = CycleState::default();
        let solo = c.pod("default/solo").unwrap().clone();
        assert_eq!(
            pl.permit(&cx, &mut st, &solo, "n1"),
            (Status::success(), Duration::ZERO)
        );
        let lost = c.pod("default/lost").unwrap().clone();
        let (s, _) = pl.permit(&cx, &mut st, &lost, "n1");
        assert_eq!(
            (s.code, s.message()),
            (Code::Unschedulable, "PodGroup not found".into())
        );

        // b: a (bound) + b = 2 < 3: wait 30 s (the PodGroup's timeout wins).
        let h = Handle::new();
        let mut st = CycleState::default();
        h.attach(&mut st);
        let b = c.pod("default/b").unwrap().clone();
        let (s, d) = pl.permit(&cx, &mut st, &b, "n1");
        assert_eq!((s.code, d), (Code::Wait, Duration::from_secs(30)));
        // Not the first assigned member: no activation.
        assert!(h.take_activations().is_empty());
        h.waiting()
            .add(b.clone(), "n1", &[(NAME.into(), d)], cx.now);
        // b is assumed on n1 while it waits.
        c.upsert_pod(pod(member("b", "gang", Some("n1"))));

        // c: 3 ≥ 3 → Success, and b is allowed.
        let cx = ctx(&c);
        let cpod = c.pod("default/c").unwrap().clone();
        let mut st2 = CycleState::default();
        h.attach(&mut st2);
        assert_eq!(
            pl.permit(&cx, &mut st2, &cpod, "n1"),
            (Status::success(), Duration::ZERO)
        );
        let sigs = h.waiting().take_signals();
        assert_eq!(sigs.len(), 1);
        assert_eq!(sigs[0].pod, "default/b");
        assert_eq!(sigs[0].signal, crate::engine::waiting::Signal::Allowed);
    }

    #[test]
    fn first_member_activates_siblings_and_uses_args_timeout() {
        let mut c = cluster(
            vec![],
            vec![
                member("a", "gang", None),
                member("b", "gang", None),
                member("c", "gang", None),
            ],
        );
        c.pod_groups.insert("default/gang".into(), pg("gang", 4));
        let pl = plugin(json!({"permitWaitingTimeSeconds": 10}));
        let h = Handle::new();
        let mut st = CycleState::default();
        h.attach(&mut st);
        let a = c.pod("default/a").unwrap().clone();
        let cx = ctx(&c);
        let (s, d) = pl.permit(&cx, &mut st, &a, "n1");
        assert_eq!((s.code, d), (Code::Wait, Duration::from_secs(10)));
        let act: Vec<String> = h.take_activations().into_iter().collect();
        assert_eq!(act, ["default/b", "default/c"]);
    }

    #[test]
    fn post_filter_rejects_waiting_members_past_the_threshold() {
        let mut c = cluster(
            vec![simple_node("n1", "8", "16Gi")],
            vec![
                member("a", "gang", Some("n1")),
                member("b", "gang", None),
                member("c", "gang", None),
                member("x", "other", Some("n1")),
            ],
        );
        c.pod_groups.insert("default/gang".into(), pg("gang", 3));
        c.pod_groups.insert("default/other".into(), pg("other", 1));
        let b = c.pod("default/b").unwrap().clone();
        let h = Handle::new();
        let mut st = CycleState::default();
        h.attach(&mut st);
        let a = c.pod("default/a").unwrap().clone();
        let x = c.pod("default/x").unwrap().clone();
        let now = ctx(&c).now;
        h.waiting()
            .add(a, "n1", &[(NAME.into(), Duration::from_secs(60))], now);
        h.waiting()
            .add(x, "n1", &[(NAME.into(), Duration::from_secs(60))], now);

        // Threshold 50 %: gap (3 − 1) / 3 = 0.67 > 0.5 → reject.
        // Threshold 70 %: 0.67 ≤ 0.7 → plain Unschedulable, nobody rejected.
        let (r, s) = plugin(json!({"podGroupRejectPercentage": 70})).post_filter(
            &Framework::default(),
            &ctx(&c),
            &st,
            &b,
            &NodeToStatus::default(),
        );
        assert_eq!(r, Some(PostFilterResult::default()));
        assert_eq!((s.code, s.message()), (Code::Unschedulable, String::new()));
        assert!(h.waiting().take_signals().is_empty());

        let (_, s) = plugin(json!({"podGroupRejectPercentage": 50})).post_filter(
            &Framework::default(),
            &ctx(&c),
            &st,
            &b,
            &NodeToStatus::default(),
        );
        assert_eq!(
            s.message(),
            "PodGroup default/gang gets rejected due to Pod b is unschedulable even after PostFilter"
        );
        let sigs = h.waiting().take_signals();
        assert_eq!(sigs.len(), 1, "only the group's waiting pod: {sigs:?}");
        assert_eq!(sigs[0].pod, "default/a");
        assert_eq!(
            sigs[0].signal,
            crate::engine::waiting::Signal::Rejected {
                plugin: NAME.into(),
                message: "optimistic rejection in PostFilter".into()
            }
        );

        // No group: `can not find pod group`; quorum already met: plain U.
        let solo = pod(simple_pod("solo", "1", "1Gi", None));
        let (_, s) = plugin(json!({})).post_filter(
            &Framework::default(),
            &ctx(&c),
            &st,
            &solo,
            &NodeToStatus::default(),
        );
        assert_eq!(s.message(), "can not find pod group");
        let y = pod(member("y", "other", None));
        let (_, s) = plugin(json!({})).post_filter(
            &Framework::default(),
            &ctx(&c),
            &st,
            &y,
            &NodeToStatus::default(),
        );
        assert_eq!((s.code, s.message()), (Code::Unschedulable, String::new()));
    }

    #[test]
    fn unreserve_rejects_the_rest_of_the_group() {
        let mut c = cluster(
            vec![],
            vec![
                member("a", "gang", Some("n1")),
                member("b", "gang", Some("n1")),
            ],
        );
        c.pod_groups.insert("default/gang".into(), pg("gang", 3));
        let h = Handle::new();
        let mut st = CycleState::default();
        h.attach(&mut st);
        let a = c.pod("default/a").unwrap().clone();
        let b = c.pod("default/b").unwrap().clone();
        let cx = ctx(&c);
        h.waiting()
            .add(b, "n1", &[(NAME.into(), Duration::from_secs(60))], cx.now);
        plugin(json!({})).unreserve(&cx, &mut st, &a, "n1");
        let sigs = h.waiting().take_signals();
        assert_eq!(sigs.len(), 1);
        assert_eq!(
            sigs[0].signal,
            crate::engine::waiting::Signal::Rejected {
                plugin: NAME.into(),
                message: "rejection in Unreserve".into()
            }
        );
        // The failure time now orders the group.
        assert!(
            h.with_plugin_data::<Manager, _>(NAME, |m| m.last_failed.contains_key("default/gang"))
        );
    }
}
