//! NodeResourcesAllocatable (scheduler-plugins; Score, NormalizeScore).
//!
//! Scores a node by the weighted mean of its *allocatable* resources (requests play no
//! part): negated in mode `Least` so that small nodes win, as is in mode `Most`. The
//! default weights make one millicore worth one MiB (cpu 1<<20, memory 1). Normalise
//! maps `[lowest, highest]` linearly onto `[0, 100]` (all equal → 0).
//!
//! Args are validated by the constructor, so errors read `initializing plugin
//! "NodeResourcesAllocatable": ...`.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::node_resources_fit::{ResourceSpec, aggregate, decode_args, encode_args, nullable};
use crate::config::field;
use crate::engine::framework::{
    Ctx, CycleState, MAX_NODE_SCORE, MIN_NODE_SCORE, NodeScore, Plugin, ScorePlugin,
};
use crate::engine::status::Status;
use crate::model::resource::{CPU, EPHEMERAL_STORAGE, MEMORY, is_scalar_resource_name};
use crate::model::{NodeInfo, Pod};

pub const NAME: &str = "NodeResourcesAllocatable";
pub const MODE_LEAST: &str = "Least";
pub const MODE_MOST: &str = "Most";

/// `NodeResourcesAllocatableArgs` (scheduler-plugins, kubescheduler.config.k8s.io/v1).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NodeResourcesAllocatableArgs {
    #[serde(default, skip_serializing)]
    pub api_version: Option<String>,
    #[serde(default, skip_serializing)]
    pub kind: Option<String>,
    #[serde(default, deserialize_with = "nullable")]
    pub resources: Vec<ResourceSpec>,
    #[serde(default)]
    pub mode: String,
}

impl NodeResourcesAllocatableArgs {
    /// `SetDefaults_NodeResourcesAllocatableArgs`.
    pub fn set_defaults(&mut self) {
        if self.resources.is_empty() {
            self.resources = vec![
                ResourceSpec {
                    name: CPU.into(),
                    weight: 1 << 20,
                },
                ResourceSpec {
                    name: MEMORY.into(),
                    weight: 1,
                },
            ];
        }
        if self.mode.is_empty() {
            self.mode = MODE_LEAST.into();
        }
    }

    /// `ValidateNodeResourcesAllocatableArgs` with a nil path.
    pub fn validate(&self) -> Vec<String> {
        let mut errs = Vec::new();
        for (i, r) in self.resources.iter().enumerate() {
            if r.weight <= 0 {
                errs.push(field::invalid(
                    &format!("resources[{i}].weight"),
                    r.weight,
                    &format!(
                        "resource weight of {} should be a positive value, got :{}",
                        r.name, r.weight
                    ),
                ));
            }
        }
        if self.mode != MODE_LEAST && self.mode != MODE_MOST {
            errs.push(field::invalid(
                "mode",
                self.mode.as_str(),
                "invalid support ModeType",
            ));
        }
        errs
    }
}

pub fn args(user: Option<&Value>, path: &str) -> Result<Value, Vec<String>> {
    let mut a: NodeResourcesAllocatableArgs = decode_args(user, path)?;
    a.set_defaults();
    encode_args(&a, path)
}

pub fn new(args: &Value, _fts: &crate::version::Features) -> Result<Arc<dyn Plugin>, String> {
    let mut a: NodeResourcesAllocatableArgs =
        decode_args(Some(args), "").map_err(|e| aggregate(&e))?;
    a.set_defaults();
    let errs = a.validate();
    if !errs.is_empty() {
        return Err(aggregate(&errs));
    }
    // Upstream keeps a map: a repeated name keeps its last weight.
    let weights: BTreeMap<String, i64> = a
        .resources
        .into_iter()
        .map(|r| (r.name, r.weight))
        .collect();
    Ok(Arc::new(NodeResourcesAllocatable {
        most: a.mode == MODE_MOST,
        weights: weights.into_iter().collect(),
    }))
}

pub struct NodeResourcesAllocatable {
    most: bool,
    weights: Vec<(String, i64)>,
}

impl Plugin for NodeResourcesAllocatable {
    fn name(&self) -> &str {
        NAME
    }
    fn as_score(&self) -> Option<&dyn ScorePlugin> {
        Some(self)
    }
}

/// Allocatable amount of a resource (cpu in millicores); 0 for names the scheduler
/// does not track.
fn allocatable(node: &NodeInfo, name: &str) -> i64 {
    let a = &node.node.allocatable;
    match name {
        CPU => a.milli_cpu,
        MEMORY => a.memory,
        EPHEMERAL_STORAGE => a.ephemeral_storage,
        other if is_scalar_resource_name(other) => a.scalar.get(other).copied().unwrap_or(0),
        _ => 0,
    }
}

impl ScorePlugin for NodeResourcesAllocatable {
    fn score(&self, _cx: &Ctx, _state: &CycleState, _pod: &Pod, node: &NodeInfo) -> (i64, Status) {
        let mut node_score: i64 = 0;
        let mut weight_sum: i64 = 0;
        for (name, weight) in &self.weights {
            let cap = allocatable(node, name);
            let s = if self.most { cap } else { cap.wrapping_neg() };
            // Go's int64 arithmetic wraps; keep it identical.
            node_score = node_score.wrapping_add(s.wrapping_mul(*weight));
            weight_sum = weight_sum.wrapping_add(*weight);
        }
        if weight_sum == 0 {
            return (0, Status::error("resources not found"));
        }
        (node_score.wrapping_div(weight_sum), Status::success())
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
        let highest = scores.iter().map(|s| s.score).fold(-i64::MAX, i64::max);
        let lowest = scores.iter().map(|s| s.score).fold(i64::MAX, i64::min);
        let old_range = highest.wrapping_sub(lowest);
        let new_range = MAX_NODE_SCORE - MIN_NODE_SCORE;
        for s in scores.iter_mut() {
            s.score = if old_range == 0 {
                MIN_NODE_SCORE
            } else {
                s.score
                    .wrapping_sub(lowest)
                    .wrapping_mul(new_range)
                    .wrapping_div(old_range)
                    + MIN_NODE_SCORE
            };
        }
        Status::success()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Cluster;
    use crate::model::testing::{cluster, simple_node, simple_pod};
    use k8s_openapi::jiff::Timestamp;
    use serde_json::json;

    fn run(pl: &Arc<dyn Plugin>, c: &Cluster) -> (Vec<i64>, Vec<i64>) {
        let cx = Ctx {
            cluster: c,
            now: Timestamp::UNIX_EPOCH,
        };
        let p = crate::model::testing::pod(simple_pod("pending", "1", "1Gi", None));
        let st = CycleState::default();
        let sp = pl.as_score().unwrap();
        let mut scores: Vec<NodeScore> = c
            .nodes()
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let (s, status) = sp.score(&cx, &st, &p, n);
                assert!(status.is_success());
                NodeScore { node: i, score: s }
            })
            .collect();
        let raw = scores.iter().map(|s| s.score).collect();
        assert!(sp.normalize_score(&cx, &st, &p, &mut scores).is_success());
        (raw, scores.iter().map(|s| s.score).collect())
    }

    /// h55: mode Least, cpu 1<<20 / memory 1 over the three feasible nodes (the
    /// requests on n2 and n4 play no part).
    #[test]
    fn h55_least() {
        let c = cluster(
            vec![
                simple_node("n2", "8", "8Gi"),
                simple_node("n3", "4", "8Gi"),
                simple_node("n4", "16", "32Gi"),
            ],
            vec![
                simple_pod("r2", "2", "2Gi", Some("n2")),
                simple_pod("r4", "12", "4Gi", Some("n4")),
            ],
        );
        let pl = new(
            &args(
                Some(&json!({"mode": "Least", "resources": [
                {"name": "cpu", "weight": 1048576}, {"name": "memory", "weight": 1}]})),
                "a",
            )
            .unwrap(),
            &Default::default(),
        )
        .unwrap();
        let (raw, norm) = run(&pl, &c);
        assert_eq!(raw, vec![-16191, -12191, -48767]);
        assert_eq!(norm, vec![89, 100, 0]);
        // The defaults are the same weights.
        let pl = new(&args(None, "a").unwrap(), &Default::default()).unwrap();
        assert_eq!(run(&pl, &c).0, vec![-16191, -12191, -48767]);
    }

    #[test]
    fn most_mode_and_ties() {
        let c = cluster(
            vec![simple_node("a", "2", "1Gi"), simple_node("b", "4", "1Gi")],
            vec![],
        );
        let pl = new(
            &json!({"mode": "Most", "resources": [{"name": "cpu", "weight": 1}]}),
            &Default::default(),
        )
        .unwrap();
        assert_eq!(run(&pl, &c), (vec![2000, 4000], vec![0, 100]));
        let c = cluster(
            vec![simple_node("a", "2", "1Gi"), simple_node("b", "2", "1Gi")],
            vec![],
        );
        assert_eq!(run(&pl, &c).1, vec![0, 0]);
        // Unknown resource names count as 0.
        let pl = new(
            &json!({"mode": "Most", "resources": [{"name": "example.com/x", "weight": 3}]}),
            &Default::default(),
        )
        .unwrap();
        assert_eq!(run(&pl, &c).0, vec![0, 0]);
    }

    #[test]
    fn args_defaults_and_errors() {
        assert_eq!(
            args(None, "p").unwrap(),
            json!({"mode": "Least", "resources": [
                {"name": "cpu", "weight": 1048576}, {"name": "memory", "weight": 1}]})
        );
        let err = |v: Value| match new(&args(Some(&v), "p").unwrap(), &Default::default()) {
            Err(e) => e,
            Ok(_) => panic!("{v} accepted"),
        };
        assert_eq!(
            err(json!({"mode": "Fast"})),
            "mode: Invalid value: \"Fast\": invalid support ModeType"
        );
        assert_eq!(
            err(json!({"resources": [{"name": "cpu", "weight": -1}], "mode": "Bad"})),
            "[resources[0].weight: Invalid value: -1: resource weight of cpu should be a positive value, got :-1, mode: Invalid value: \"Bad\": invalid support ModeType]"
        );
    }
}
