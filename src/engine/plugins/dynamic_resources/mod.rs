//! DynamicResources (PreEnqueue, PreFilter, Filter, PostFilter, Score, Normalize,
//! Reserve, PreBind) — on by default in v1.35.
//!
//! Only pods *without* resource claims are modelled: PreFilter records an empty state
//! and Skips, Score gives 0, PostFilter answers `no new claims to deallocate` (which is
//! why default FitErrors end with that text). DRA allocation itself (ResourceClaims,
//! ResourceSlices, DeviceClasses) is outside schedscope's model: for a pod with claims
//! the plugin reports [`Plugin::not_modelled`] and rejects at PreFilter, never passing
//! silently.
//!
//! Args quirk: `DynamicResourcesArgs` is not in kube-scheduler's config-validation
//! table, so its errors surface from the constructor (`initializing plugin
//! "DynamicResources": filterTimeout: ...`).

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::node_resources_fit::{aggregate, decode_args, encode_args};
use crate::config::field;
use crate::engine::framework::{
    Ctx, CycleState, FilterPlugin, Framework, MAX_NODE_SCORE, NodeScore, NodeToStatus, Plugin,
    PostFilterPlugin, PostFilterResult, PreBindPlugin, PreEnqueuePlugin, PreFilterPlugin,
    PreFilterResult, ReservePlugin, ScorePlugin, default_normalize_score,
};
use crate::engine::status::Status;
use crate::model::{NodeInfo, Pod};

pub const NAME: &str = "DynamicResources";
const STATE_KEY: &str = NAME;
const FILTER_TIMEOUT_DEFAULT: &str = "10s";
pub const NO_NEW_CLAIMS: &str = "no new claims to deallocate";
const NOT_MODELLED: &str =
    "dynamic resource allocation (ResourceClaims) is not modelled by schedscope";

// ---------------------------------------------------------------------------------
// Args

/// `DynamicResourcesArgs`. Durations are kept as Go duration strings.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DynamicResourcesArgs {
    #[serde(default, skip_serializing)]
    pub api_version: Option<String>,
    #[serde(default, skip_serializing)]
    pub kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filter_timeout: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binding_timeout: Option<String>,
}

impl DynamicResourcesArgs {
    /// `DRASchedulerFilterTimeout` is on: `filterTimeout` defaults to 10s.
    /// `bindingTimeout` needs gates that are off, so it gets no default.
    pub fn set_defaults(&mut self) {
        if self.filter_timeout.is_none() {
            self.filter_timeout = Some(FILTER_TIMEOUT_DEFAULT.into());
        }
    }

    /// `ValidateDynamicResourcesArgs` with v1.35's default gates (path "" = relative).
    pub fn validate(&self) -> Vec<String> {
        let mut errs = Vec::new();
        if let Some(t) = &self.filter_timeout {
            match parse_go_duration(t) {
                Ok(d) if d < 0 => errs.push(format!(
                    "filterTimeout: Invalid value: {}: must be zero or positive",
                    format_go_duration(d)
                )),
                Ok(_) => {}
                Err(e) => errs.push(field::invalid("filterTimeout", t.as_str(), &e)),
            }
        }
        if self.binding_timeout.is_some() {
            errs.push(field::forbidden(
                "bindingTimeout",
                "DRADeviceBindingConditions or DRAResourceClaimDeviceStatus feature gate is disabled",
            ));
        }
        errs
    }
}

/// Defaults only; validation happens in [`new`] (see the module doc).
pub fn args(user: Option<&Value>, path: &str) -> Result<Value, Vec<String>> {
    let mut a: DynamicResourcesArgs = decode_args(user, path)?;
    a.set_defaults();
    encode_args(&a, path)
}

pub fn new(args: &Value) -> Result<Arc<dyn Plugin>, String> {
    let mut a: DynamicResourcesArgs = decode_args(Some(args), "").map_err(|e| aggregate(&e))?;
    a.set_defaults();
    let errs = a.validate();
    if !errs.is_empty() {
        return Err(aggregate(&errs));
    }
    Ok(Arc::new(DynamicResources))
}

/// Go's `time.ParseDuration`, in nanoseconds.
pub fn parse_go_duration(s: &str) -> Result<i128, String> {
    let bad = || format!("time: invalid duration {s:?}");
    let (neg, mut rest) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if rest == "0" {
        return Ok(0);
    }
    if rest.is_empty() {
        return Err(bad());
    }
    let mut total: i128 = 0;
    while !rest.is_empty() {
        let int_end = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let (int_part, after) = rest.split_at(int_end);
        let (frac_part, after) = match after.strip_prefix('.') {
            Some(a) => {
                let e = a.find(|c: char| !c.is_ascii_digit()).unwrap_or(a.len());
                a.split_at(e)
            }
            None => ("", after),
        };
        if int_part.is_empty() && frac_part.is_empty() {
            return Err(bad());
        }
        let unit_end = after
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(after.len());
        let (unit, after) = after.split_at(unit_end);
        let scale: i128 = match unit {
            "ns" => 1,
            "us" | "µs" | "μs" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            "" => return Err(format!("time: missing unit in duration {s:?}")),
            _ => return Err(format!("time: unknown unit {unit:?} in duration {s:?}")),
        };
        let int: i128 = if int_part.is_empty() {
            0
        } else {
            int_part.parse().map_err(|_| bad())?
        };
        let mut v = int.checked_mul(scale).ok_or_else(bad)?;
        // Fractions are truncated to whole nanoseconds, as Go does.
        let mut div = 1i128;
        let mut frac = 0i128;
        for d in frac_part.bytes().take(30) {
            frac = frac * 10 + i128::from(d - b'0');
            div *= 10;
        }
        v += frac * scale / div;
        total = total.checked_add(v).ok_or_else(bad)?;
        if total > i128::from(i64::MAX) {
            return Err(bad());
        }
        rest = after;
    }
    Ok(if neg { -total } else { total })
}

/// Go's `time.Duration.String()`: `1h2m3.5s`, `500ms`, `1.5µs`, `0s`.
pub fn format_go_duration(nanos: i128) -> String {
    if nanos == 0 {
        return "0s".into();
    }
    let sign = if nanos < 0 { "-" } else { "" };
    let u = nanos.unsigned_abs();
    let frac = |v: u128, unit: u128| -> String {
        let whole = v / unit;
        let mut rem = v % unit;
        if rem == 0 {
            return whole.to_string();
        }
        let mut digits = String::new();
        let mut d = unit / 10;
        while rem > 0 && d > 0 {
            digits.push(char::from(b'0' + (rem / d) as u8));
            rem %= d;
            d /= 10;
        }
        format!("{whole}.{}", digits.trim_end_matches('0'))
    };
    if u < 1_000_000_000 {
        let (unit, name) = if u < 1_000 {
            (1, "ns")
        } else if u < 1_000_000 {
            (1_000, "µs")
        } else {
            (1_000_000, "ms")
        };
        return format!("{sign}{}{name}", frac(u, unit));
    }
    let h = u / 3_600_000_000_000;
    let m = (u / 60_000_000_000) % 60;
    let s = frac(u % 60_000_000_000, 1_000_000_000);
    let mut out = sign.to_string();
    if h > 0 {
        out.push_str(&format!("{h}h"));
    }
    if h > 0 || m > 0 {
        out.push_str(&format!("{m}m"));
    }
    out.push_str(&format!("{s}s"));
    out
}

// ---------------------------------------------------------------------------------
// Plugin

pub struct DynamicResources;

/// What PreFilter recorded: whether the pod references claims.
#[derive(Clone)]
struct StateData {
    has_claims: bool,
}

fn has_claims(pod: &Pod) -> bool {
    !pod.resource_claims.is_empty()
}

/// Upstream returns the bare `not found` of `CycleState.Read` when PreFilter never ran
/// (e.g. an earlier PreFilter plugin rejected the pod).
fn read_state(state: &CycleState) -> Result<&StateData, Status> {
    state
        .read::<StateData>(STATE_KEY)
        .ok_or_else(|| Status::error("not found"))
}

impl Plugin for DynamicResources {
    fn name(&self) -> &str {
        NAME
    }
    fn not_modelled(&self, pod: &Pod) -> Option<String> {
        has_claims(pod).then(|| {
            format!(
                "the pod references {} resource claim(s); {NOT_MODELLED}, so its DRA \
                 filter, score, reserve and bind results are unknown",
                pod.resource_claims.len()
            )
        })
    }
    fn as_pre_enqueue(&self) -> Option<&dyn PreEnqueuePlugin> {
        Some(self)
    }
    fn as_pre_filter(&self) -> Option<&dyn PreFilterPlugin> {
        Some(self)
    }
    fn as_filter(&self) -> Option<&dyn FilterPlugin> {
        Some(self)
    }
    fn as_post_filter(&self) -> Option<&dyn PostFilterPlugin> {
        Some(self)
    }
    fn as_score(&self) -> Option<&dyn ScorePlugin> {
        Some(self)
    }
    fn as_reserve(&self) -> Option<&dyn ReservePlugin> {
        Some(self)
    }
    fn as_pre_bind(&self) -> Option<&dyn PreBindPlugin> {
        Some(self)
    }
}

impl PreEnqueuePlugin for DynamicResources {
    /// Upstream checks that the claims exist; the model has no ResourceClaims, so the
    /// verdict is left to PreFilter (which rejects pods with claims).
    fn pre_enqueue(&self, _cx: &Ctx, _pod: &Pod) -> Status {
        Status::success()
    }
}

impl PreFilterPlugin for DynamicResources {
    fn pre_filter(
        &self,
        _cx: &Ctx,
        state: &mut CycleState,
        pod: &Pod,
    ) -> (PreFilterResult, Status) {
        let claims = has_claims(pod);
        state.write(STATE_KEY, StateData { has_claims: claims });
        if !claims {
            return (None, Status::skip());
        }
        (None, Status::unresolvable(NOT_MODELLED))
    }
}

impl FilterPlugin for DynamicResources {
    fn filter(&self, _cx: &Ctx, state: &CycleState, _pod: &Pod, _node: &NodeInfo) -> Status {
        match read_state(state) {
            Err(e) => e,
            Ok(s) if !s.has_claims => Status::success(),
            Ok(_) => Status::unresolvable(NOT_MODELLED),
        }
    }
}

impl PostFilterPlugin for DynamicResources {
    fn post_filter(
        &self,
        _fw: &Framework,
        _cx: &Ctx,
        state: &CycleState,
        _pod: &Pod,
        _statuses: &NodeToStatus,
    ) -> (Option<PostFilterResult>, Status) {
        match read_state(state) {
            Err(e) => (None, e),
            Ok(s) if !s.has_claims => (None, Status::unschedulable(NO_NEW_CLAIMS)),
            Ok(_) => (
                None,
                Status::unschedulable(format!("claim deallocation: {NOT_MODELLED}")),
            ),
        }
    }
}

impl ScorePlugin for DynamicResources {
    fn score(&self, _cx: &Ctx, state: &CycleState, _pod: &Pod, _node: &NodeInfo) -> (i64, Status) {
        match read_state(state) {
            Err(e) => (0, e),
            Ok(s) if !s.has_claims => (0, Status::success()),
            Ok(_) => (0, Status::error(NOT_MODELLED)),
        }
    }
    fn has_normalize(&self) -> bool {
        true
    }
    fn normalize_score(
        &self,
        _cx: &Ctx,
        _state: &CycleState,
        _pod: &Pod,
        scores: &mut [NodeScore],
    ) -> Status {
        default_normalize_score(MAX_NODE_SCORE, false, scores);
        Status::success()
    }
}

impl ReservePlugin for DynamicResources {
    fn reserve(&self, _cx: &Ctx, state: &mut CycleState, _pod: &Pod, _node: &str) -> Status {
        match read_state(state) {
            Err(e) => e,
            Ok(s) if !s.has_claims => Status::success(),
            Ok(_) => Status::error(NOT_MODELLED),
        }
    }
    fn unreserve(&self, _cx: &Ctx, _state: &mut CycleState, _pod: &Pod, _node: &str) {}
}

impl PreBindPlugin for DynamicResources {
    fn pre_bind_pre_flight(
        &self,
        _cx: &Ctx,
        state: &CycleState,
        _pod: &Pod,
        _node: &str,
    ) -> Status {
        match read_state(state) {
            Err(e) => e,
            Ok(s) if !s.has_claims => Status::skip(),
            Ok(_) => Status::error(NOT_MODELLED),
        }
    }
    fn pre_bind(&self, _cx: &Ctx, state: &mut CycleState, _pod: &Pod, _node: &str) -> Status {
        match read_state(state) {
            Err(e) => e,
            Ok(s) if !s.has_claims => Status::success(),
            Ok(_) => Status::error(NOT_MODELLED),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::status::Code;
    use crate::model::testing::{cluster, pod, simple_node, simple_pod};
    use k8s_openapi::jiff::Timestamp;
    use serde_json::json;

    fn claim_pod() -> Pod {
        pod(json!({"metadata": {"name": "dra"}, "spec": {
            "containers": [{"name": "c", "resources": {"claims": [{"name": "gpu"}]}}],
            "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpu-tmpl"}]}}))
    }

    #[test]
    fn pod_without_claims() {
        let c = cluster(vec![simple_node("n1", "4", "8Gi")], vec![]);
        let cx = Ctx {
            cluster: &c,
            now: Timestamp::UNIX_EPOCH,
        };
        let pl = new(&args(None, "a").unwrap()).unwrap();
        let p = pod(simple_pod("p", "1", "1Gi", None));
        assert!(pl.not_modelled(&p).is_none());
        assert!(
            pl.as_pre_enqueue()
                .unwrap()
                .pre_enqueue(&cx, &p)
                .is_success()
        );
        let mut st = CycleState::default();
        let (res, s) = pl.as_pre_filter().unwrap().pre_filter(&cx, &mut st, &p);
        assert!(res.is_none() && s.is_skip());
        assert!(
            st.contains(STATE_KEY),
            "PreFilter must write its (empty) state"
        );
        let n = &c.nodes()[0];
        assert!(pl.as_filter().unwrap().filter(&cx, &st, &p, n).is_success());
        let (score, s) = pl.as_score().unwrap().score(&cx, &st, &p, n);
        assert_eq!((score, s.code), (0, Code::Success));
        let mut scores = vec![NodeScore { node: 0, score: 0 }];
        pl.as_score()
            .unwrap()
            .normalize_score(&cx, &st, &p, &mut scores);
        assert_eq!(scores[0].score, 0);
        let (r, s) = pl.as_post_filter().unwrap().post_filter(
            &Framework::default(),
            &cx,
            &st,
            &p,
            &NodeToStatus::default(),
        );
        assert!(r.is_none());
        assert_eq!(
            (s.code, s.message()),
            (Code::Unschedulable, NO_NEW_CLAIMS.to_string())
        );
        assert!(
            pl.as_reserve()
                .unwrap()
                .reserve(&cx, &mut st, &p, "n1")
                .is_success()
        );
        assert!(
            pl.as_pre_bind()
                .unwrap()
                .pre_bind_pre_flight(&cx, &st, &p, "n1")
                .is_skip()
        );
    }

    /// h26/h27: an earlier PreFilter rejected the pod, so no state: `not found`.
    #[test]
    fn post_filter_without_state_errors_not_found() {
        let c = cluster(vec![], vec![]);
        let cx = Ctx {
            cluster: &c,
            now: Timestamp::UNIX_EPOCH,
        };
        let p = pod(simple_pod("p", "1", "1Gi", None));
        let (_, s) = DynamicResources.post_filter(
            &Framework::default(),
            &cx,
            &CycleState::default(),
            &p,
            &NodeToStatus::default(),
        );
        assert_eq!(
            (s.code, s.message()),
            (Code::Error, "not found".to_string())
        );
    }

    #[test]
    fn pod_with_claims_is_rejected_explicitly() {
        let c = cluster(vec![simple_node("n1", "4", "8Gi")], vec![]);
        let cx = Ctx {
            cluster: &c,
            now: Timestamp::UNIX_EPOCH,
        };
        let p = claim_pod();
        assert!(
            DynamicResources
                .not_modelled(&p)
                .unwrap()
                .contains("1 resource claim(s)")
        );
        let mut st = CycleState::default();
        let (_, s) = DynamicResources.pre_filter(&cx, &mut st, &p);
        assert_eq!(s.code, Code::UnschedulableAndUnresolvable);
        assert!(s.message().contains("not modelled by schedscope"));
        let (_, s) = DynamicResources.post_filter(
            &Framework::default(),
            &cx,
            &st,
            &p,
            &NodeToStatus::default(),
        );
        assert_eq!(s.code, Code::Unschedulable);
        assert!(s.message().contains("not modelled"));
    }

    #[test]
    fn args_defaults_and_errors() {
        assert_eq!(args(None, "p").unwrap(), json!({"filterTimeout": "10s"}));
        assert_eq!(
            args(Some(&json!({"filterTimeout": "0s"})), "p").unwrap(),
            json!({"filterTimeout": "0s"})
        );
        let err = |v: Value| match new(&args(Some(&v), "p").unwrap()) {
            Err(e) => e,
            Ok(_) => panic!("{v} accepted"),
        };
        assert_eq!(
            err(json!({"filterTimeout": "-1s"})),
            "filterTimeout: Invalid value: -1s: must be zero or positive"
        );
        assert_eq!(
            err(json!({"filterTimeout": "-1.5m"})),
            "filterTimeout: Invalid value: -1m30s: must be zero or positive"
        );
        assert_eq!(
            err(json!({"bindingTimeout": "10m"})),
            "bindingTimeout: Forbidden: DRADeviceBindingConditions or DRAResourceClaimDeviceStatus feature gate is disabled"
        );
        assert!(err(json!({"filterTimeout": "10"})).contains("missing unit"));
    }

    #[test]
    fn go_durations() {
        let cases: [(&str, i128, &str); 9] = [
            ("10s", 10_000_000_000, "10s"),
            ("0", 0, "0s"),
            ("1m", 60_000_000_000, "1m0s"),
            ("15m", 900_000_000_000, "15m0s"),
            ("1.5s", 1_500_000_000, "1.5s"),
            ("500ms", 500_000_000, "500ms"),
            ("1h2m3s", 3_723_000_000_000, "1h2m3s"),
            ("1.5us", 1_500, "1.5µs"),
            ("-2h", -7_200_000_000_000, "-2h0m0s"),
        ];
        for (text, nanos, shown) in cases {
            assert_eq!(parse_go_duration(text), Ok(nanos), "{text}");
            assert_eq!(format_go_duration(nanos), shown, "{text}");
        }
        for bad in ["", "s", "1x", "1.2.3s", "-"] {
            assert!(parse_go_duration(bad).is_err(), "{bad}");
        }
    }
}
