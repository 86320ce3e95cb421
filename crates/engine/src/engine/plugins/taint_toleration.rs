//! TaintToleration (Filter, PreScore, Score, NormalizeScore).
//!
//! Filter rejects nodes with an untolerated `NoSchedule`/`NoExecute` taint; Score
//! counts untolerated `PreferNoSchedule` taints, normalised in reverse so that fewer
//! is better. The toleration helpers are public for other plugins (NodeUnschedulable,
//! PodTopologySpread's `nodeTaintsPolicy`).

use std::sync::Arc;

use k8s_openapi::api::core::v1::{Taint, Toleration};

use crate::engine::framework::{
    Ctx, CycleState, FilterPlugin, MAX_NODE_SCORE, NodeScore, Plugin, PreScorePlugin, ScorePlugin,
    default_normalize_score,
};
use crate::engine::status::Status;
use crate::model::{NodeInfo, Pod};

pub const NAME: &str = "TaintToleration";
const PRE_SCORE_STATE_KEY: &str = "PreScoreTaintToleration";
pub const ERR_REASON_NOT_MATCH: &str = "node(s) had untolerated taint(s)";

pub const EFFECT_NO_SCHEDULE: &str = "NoSchedule";
pub const EFFECT_NO_EXECUTE: &str = "NoExecute";
pub const EFFECT_PREFER_NO_SCHEDULE: &str = "PreferNoSchedule";

/// `Toleration.ToleratesTaint` with `TaintTolerationComparisonOperators` off: effect
/// and key match when empty or equal; `""`/`Equal` compare values, `Exists` always
/// tolerates, anything else (including `Lt`/`Gt`) never does.
pub fn tolerates(tol: &Toleration, taint: &Taint) -> bool {
    let effect = tol.effect.as_deref().unwrap_or("");
    if !effect.is_empty() && effect != taint.effect {
        return false;
    }
    let key = tol.key.as_deref().unwrap_or("");
    if !key.is_empty() && key != taint.key {
        return false;
    }
    match tol.operator.as_deref().unwrap_or("") {
        "" | "Equal" => tol.value.as_deref().unwrap_or("") == taint.value.as_deref().unwrap_or(""),
        "Exists" => true,
        _ => false,
    }
}

/// `v1helper.TolerationsTolerateTaint`.
pub fn tolerations_tolerate_taint(tols: &[Toleration], taint: &Taint) -> bool {
    tols.iter().any(|t| tolerates(t, taint))
}

/// The first `NoSchedule`/`NoExecute` taint not tolerated
/// (`FindMatchingUntoleratedTaint` with `DoNotScheduleTaintsFilterFunc`).
pub fn find_untolerated_do_not_schedule_taint<'a>(
    taints: &'a [Taint],
    tols: &[Toleration],
) -> Option<&'a Taint> {
    taints.iter().find(|t| {
        (t.effect == EFFECT_NO_SCHEDULE || t.effect == EFFECT_NO_EXECUTE)
            && !tolerations_tolerate_taint(tols, t)
    })
}

#[derive(Default)]
pub struct TaintToleration {
    /// Before 1.34.2 the reason names the taint (`{key: value}`).
    names_taint: bool,
}

pub fn new(
    _args: &serde_json::Value,
    fts: &crate::version::Features,
) -> Result<Arc<dyn Plugin>, String> {
    Ok(Arc::new(TaintToleration {
        names_taint: fts.taint_reason_names_taint(),
    }))
}

/// Tolerations that may tolerate a `PreferNoSchedule` taint (effect empty or equal).
#[derive(Clone)]
struct PreScoreState {
    tolerations_prefer_no_schedule: Vec<Toleration>,
}

impl Plugin for TaintToleration {
    fn name(&self) -> &str {
        NAME
    }
    fn as_filter(&self) -> Option<&dyn FilterPlugin> {
        Some(self)
    }
    fn as_pre_score(&self) -> Option<&dyn PreScorePlugin> {
        Some(self)
    }
    fn as_score(&self) -> Option<&dyn ScorePlugin> {
        Some(self)
    }
}

impl FilterPlugin for TaintToleration {
    fn filter(&self, _cx: &Ctx, _state: &CycleState, pod: &Pod, node: &NodeInfo) -> Status {
        match find_untolerated_do_not_schedule_taint(&node.node.taints, &pod.tolerations) {
            // From 1.34.2 the reason no longer names the taint.
            Some(t) if self.names_taint => Status::unresolvable(format!(
                "node(s) had untolerated taint {{{}: {}}}",
                t.key,
                t.value.as_deref().unwrap_or("")
            )),
            Some(_) => Status::unresolvable(ERR_REASON_NOT_MATCH),
            None => Status::success(),
        }
    }
}

impl PreScorePlugin for TaintToleration {
    fn pre_score(
        &self,
        _cx: &Ctx,
        state: &mut CycleState,
        pod: &Pod,
        _nodes: &[&NodeInfo],
    ) -> Status {
        let tolerations_prefer_no_schedule = pod
            .tolerations
            .iter()
            .filter(|t| {
                let e = t.effect.as_deref().unwrap_or("");
                e.is_empty() || e == EFFECT_PREFER_NO_SCHEDULE
            })
            .cloned()
            .collect();
        state.write(
            PRE_SCORE_STATE_KEY,
            PreScoreState {
                tolerations_prefer_no_schedule,
            },
        );
        Status::success()
    }
}

impl ScorePlugin for TaintToleration {
    fn score(&self, _cx: &Ctx, state: &CycleState, _pod: &Pod, node: &NodeInfo) -> (i64, Status) {
        let Some(s) = state.read::<PreScoreState>(PRE_SCORE_STATE_KEY) else {
            return (
                0,
                Status::error(format!(
                    "failed to read {PRE_SCORE_STATE_KEY:?} from cycleState: not found"
                )),
            );
        };
        let count = node
            .node
            .taints
            .iter()
            .filter(|t| {
                t.effect == EFFECT_PREFER_NO_SCHEDULE
                    && !tolerations_tolerate_taint(&s.tolerations_prefer_no_schedule, t)
            })
            .count();
        (count as i64, Status::success())
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
        default_normalize_score(MAX_NODE_SCORE, true, scores);
        Status::success()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::status::Code;
    use crate::model::testing::{cluster, pod};
    use k8s_openapi::jiff::Timestamp;
    use serde_json::{Value, json};

    fn taint(key: &str, value: &str, effect: &str) -> Value {
        json!({"key": key, "value": value, "effect": effect})
    }

    fn node_with(name: &str, taints: Vec<Value>) -> Value {
        json!({
            "metadata": {"name": name},
            "spec": {"taints": taints},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}
        })
    }

    fn pod_with(tolerations: Value) -> Pod {
        pod(json!({
            "metadata": {"name": "pending"},
            "spec": {"containers": [{"name": "c"}], "tolerations": tolerations}
        }))
    }

    fn tol(v: Value) -> Toleration {
        serde_json::from_value(v).unwrap()
    }
    fn tnt(v: Value) -> Taint {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn toleration_matching_rules() {
        let t = tnt(taint("k", "v", "NoSchedule"));
        let cases = [
            (
                json!({"key": "k", "operator": "Equal", "value": "v", "effect": "NoSchedule"}),
                true,
            ),
            (json!({"key": "k", "value": "v"}), true), // empty operator = Equal, empty effect = all
            (json!({"key": "k", "value": "x"}), false),
            (json!({"key": "k", "operator": "Exists"}), true),
            (json!({"operator": "Exists"}), true), // empty key + Exists tolerates everything
            (json!({"key": "other", "operator": "Exists"}), false),
            (
                json!({"key": "k", "operator": "Exists", "effect": "NoExecute"}),
                false,
            ),
            (json!({"key": "k", "operator": "Lt", "value": "5"}), false), // gate off
            (
                json!({"key": "k", "operator": "Bogus", "value": "v"}),
                false,
            ),
        ];
        for (tv, want) in cases {
            assert_eq!(tolerates(&tol(tv.clone()), &t), want, "{tv}");
        }
    }

    #[test]
    fn filter_rejects_untolerated_no_schedule_and_no_execute() {
        let c = cluster(
            vec![
                node_with("clean", vec![]),
                node_with("ns", vec![taint("dedicated", "gpu", "NoSchedule")]),
                node_with(
                    "ne",
                    vec![taint("node.kubernetes.io/not-ready", "", "NoExecute")],
                ),
                node_with("pref", vec![taint("a", "1", "PreferNoSchedule")]),
                node_with("tolerated", vec![taint("x", "1", "NoSchedule")]),
            ],
            vec![],
        );
        let cx = Ctx {
            cluster: &c,
            now: Timestamp::UNIX_EPOCH,
        };
        let p = pod_with(json!([{"key": "x", "operator": "Exists"}]));
        let st = CycleState::default();
        let want = [
            ("clean", Code::Success),
            ("ne", Code::UnschedulableAndUnresolvable),
            ("ns", Code::UnschedulableAndUnresolvable),
            ("pref", Code::Success),
            ("tolerated", Code::Success),
        ];
        for (name, code) in want {
            let s = TaintToleration::default().filter(&cx, &st, &p, c.node(name).unwrap());
            assert_eq!(s.code, code, "{name}");
            if code != Code::Success {
                assert_eq!(s.reasons, vec![ERR_REASON_NOT_MATCH.to_string()]);
            }
        }
    }

    /// h06: counts of untolerated PreferNoSchedule taints, reverse-normalised.
    #[test]
    fn h06_prefer_no_schedule_scores() {
        let c = cluster(
            vec![
                node_with("n1", vec![]),
                node_with("n2", vec![taint("a", "1", "PreferNoSchedule")]),
                node_with(
                    "n3",
                    vec![
                        taint("a", "1", "PreferNoSchedule"),
                        taint("b", "1", "PreferNoSchedule"),
                    ],
                ),
                node_with(
                    "n4",
                    vec![
                        taint("a", "1", "PreferNoSchedule"),
                        taint("b", "1", "PreferNoSchedule"),
                        taint("spot", "true", "PreferNoSchedule"),
                    ],
                ),
                node_with("n5", vec![taint("dedicated", "x", "NoSchedule")]),
                node_with("n6", vec![taint("spot", "true", "PreferNoSchedule")]),
            ],
            vec![],
        );
        let cx = Ctx {
            cluster: &c,
            now: Timestamp::UNIX_EPOCH,
        };
        let p = pod_with(json!([
            {"operator": "Equal", "key": "spot", "value": "true", "effect": "PreferNoSchedule"},
            {"operator": "Equal", "key": "dedicated", "value": "x", "effect": "NoSchedule"}
        ]));
        let mut state = CycleState::default();
        let nodes: Vec<&NodeInfo> = c.nodes().iter().collect();
        assert!(
            TaintToleration::default()
                .pre_score(&cx, &mut state, &p, &nodes)
                .is_success()
        );
        let mut scores: Vec<NodeScore> = c
            .nodes()
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let (s, st) = TaintToleration::default().score(&cx, &state, &p, n);
                assert!(st.is_success());
                NodeScore { node: i, score: s }
            })
            .collect();
        let raw: Vec<i64> = scores.iter().map(|s| s.score).collect();
        assert_eq!(raw, vec![0, 1, 2, 2, 0, 0]);
        TaintToleration::default().normalize_score(&cx, &state, &p, &mut scores);
        let norm: Vec<i64> = scores.iter().map(|s| s.score).collect();
        assert_eq!(norm, vec![100, 50, 0, 0, 100, 100]);
    }

    #[test]
    fn normalize_all_zero_reversed_gives_max() {
        let mut scores = vec![
            NodeScore { node: 0, score: 0 },
            NodeScore { node: 1, score: 0 },
        ];
        default_normalize_score(MAX_NODE_SCORE, true, &mut scores);
        assert!(scores.iter().all(|s| s.score == 100));
        let mut scores = vec![
            NodeScore { node: 0, score: 0 },
            NodeScore { node: 1, score: 0 },
        ];
        default_normalize_score(MAX_NODE_SCORE, false, &mut scores);
        assert!(scores.iter().all(|s| s.score == 0));
        let mut scores = vec![
            NodeScore { node: 0, score: 1 },
            NodeScore { node: 1, score: 3 },
        ];
        default_normalize_score(MAX_NODE_SCORE, false, &mut scores);
        assert_eq!((scores[0].score, scores[1].score), (33, 100));
    }

    #[test]
    fn score_without_pre_score_state_is_an_error() {
        let c = cluster(vec![node_with("n1", vec![])], vec![]);
        let cx = Ctx {
            cluster: &c,
            now: Timestamp::UNIX_EPOCH,
        };
        let (_, st) = TaintToleration::default().score(
            &cx,
            &CycleState::default(),
            &pod_with(json!([])),
            &c.nodes()[0],
        );
        assert_eq!(st.code, Code::Error);
        assert_eq!(
            st.message(),
            "failed to read \"PreScoreTaintToleration\" from cycleState: not found"
        );
    }
}
