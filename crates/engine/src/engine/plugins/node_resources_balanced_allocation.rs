//! NodeResourcesBalancedAllocation (PreScore, Score): favours nodes whose utilisation
//! fractions of the configured resources are close to each other (1 − std·100).
//!
//! Uses real requests (no 100m / 200Mi defaults; pod-level requests honoured), and
//! skips pods requesting none of the resources (upstream issue 129138).

use std::collections::BTreeSet;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::node_resources_fit::{
    ResourceSpec, aggregate, allocatable_and_requested, child, decode_args, default_resource_spec,
    encode_args, nullable, pod_request,
};
use crate::config::field;
use crate::engine::framework::{
    Ctx, CycleState, MAX_NODE_SCORE, Plugin, PreScorePlugin, ScorePlugin,
};
use crate::engine::status::Status;
use crate::model::{NodeInfo, Pod};

pub const NAME: &str = "NodeResourcesBalancedAllocation";
const PRE_SCORE_STATE_KEY: &str = "PreScoreNodeResourcesBalancedAllocation";

/// `NodeResourcesBalancedAllocationArgs`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NodeResourcesBalancedAllocationArgs {
    #[serde(default, skip_serializing)]
    pub api_version: Option<String>,
    #[serde(default, skip_serializing)]
    pub kind: Option<String>,
    #[serde(default, deserialize_with = "nullable")]
    pub resources: Vec<ResourceSpec>,
}

impl NodeResourcesBalancedAllocationArgs {
    pub fn set_defaults(&mut self) {
        if self.resources.is_empty() {
            self.resources = default_resource_spec();
        }
        for r in &mut self.resources {
            if r.weight == 0 {
                r.weight = 1;
            }
        }
    }

    /// `ValidateNodeResourcesBalancedAllocationArgs`.
    pub fn validate(&self, path: &str) -> Vec<String> {
        let mut errs = Vec::new();
        let mut seen = BTreeSet::new();
        let rp = child(path, "resources");
        for (i, r) in self.resources.iter().enumerate() {
            if !seen.insert(r.name.as_str()) {
                errs.push(field::duplicate(
                    &format!("{rp}[{i}].name"),
                    r.name.as_str(),
                ));
            }
            if r.weight != 1 {
                errs.push(field::invalid(
                    &format!("{rp}[{i}].weight"),
                    r.weight,
                    "must be 1",
                ));
            }
        }
        errs
    }
}

/// Defaults, then config validation (registered properly for this plugin).
pub fn args(user: Option<&Value>, path: &str) -> Result<Value, Vec<String>> {
    let mut a: NodeResourcesBalancedAllocationArgs = decode_args(user, path)?;
    a.set_defaults();
    let errs = a.validate(path);
    if !errs.is_empty() {
        return Err(errs);
    }
    encode_args(&a, path)
}

pub fn new(args: &Value, fts: &crate::version::Features) -> Result<Arc<dyn Plugin>, String> {
    let mut a: NodeResourcesBalancedAllocationArgs =
        decode_args(Some(args), "").map_err(|e| aggregate(&e))?;
    a.set_defaults();
    let errs = a.validate("");
    if !errs.is_empty() {
        return Err(aggregate(&errs));
    }
    Ok(Arc::new(NodeResourcesBalancedAllocation {
        resources: a.resources,
        scores_best_effort: fts.balanced_allocation_scores_best_effort(),
    }))
}

pub struct NodeResourcesBalancedAllocation {
    resources: Vec<ResourceSpec>,
    /// 1.32 scores pods without requests too (from the nodes' own balance).
    scores_best_effort: bool,
}

#[derive(Clone)]
struct PreScoreState {
    pod_requests: Vec<i64>,
}

impl Plugin for NodeResourcesBalancedAllocation {
    fn name(&self) -> &str {
        NAME
    }
    fn as_pre_score(&self) -> Option<&dyn PreScorePlugin> {
        Some(self)
    }
    fn as_score(&self) -> Option<&dyn ScorePlugin> {
        Some(self)
    }
}

impl NodeResourcesBalancedAllocation {
    fn pod_requests(&self, pod: &Pod) -> Vec<i64> {
        self.resources
            .iter()
            .map(|r| pod_request(&pod.requests, &r.name))
            .collect()
    }

    fn score_node(&self, node: &NodeInfo, pod_requests: &[i64]) -> (i64, Status) {
        if self.resources.is_empty() {
            return (0, Status::error("resources not found"));
        }
        // Fractions are recomputed in the second pass instead of collected, to keep
        // the per-node path free of allocation; the float operations and their order
        // are the same as upstream's.
        let fraction = |i: usize| -> Option<f64> {
            let (alloc, req) =
                allocatable_and_requested(node, &self.resources[i].name, pod_requests[i], true);
            if alloc == 0 {
                return None;
            }
            Some((req as f64 / alloc as f64).min(1.0))
        };
        let n = self.resources.len().min(pod_requests.len());
        let mut count = 0usize;
        let mut total = 0.0f64;
        let mut first = 0.0f64;
        let mut second = 0.0f64;
        for f in (0..n).filter_map(fraction) {
            match count {
                0 => first = f,
                1 => second = f,
                _ => {}
            }
            total += f;
            count += 1;
        }
        let std = match count {
            0 | 1 => 0.0,
            2 => ((first - second) / 2.0).abs(),
            _ => {
                let mean = total / count as f64;
                let mut sum = 0.0f64;
                for f in (0..n).filter_map(fraction) {
                    sum += (f - mean) * (f - mean);
                }
                (sum / count as f64).sqrt()
            }
        };
        (
            ((1.0 - std) * MAX_NODE_SCORE as f64) as i64,
            Status::success(),
        )
    }
}

impl PreScorePlugin for NodeResourcesBalancedAllocation {
    fn pre_score(&self, _cx: &Ctx, state: &mut CycleState, pod: &Pod, _n: &[&NodeInfo]) -> Status {
        let pod_requests = self.pod_requests(pod);
        if !self.scores_best_effort && pod_requests.iter().all(|&r| r == 0) {
            // Best-effort pods would otherwise all pile onto the same node.
            return Status::skip();
        }
        state.write(PRE_SCORE_STATE_KEY, PreScoreState { pod_requests });
        Status::success()
    }
}

impl ScorePlugin for NodeResourcesBalancedAllocation {
    fn score(&self, _cx: &Ctx, state: &CycleState, pod: &Pod, node: &NodeInfo) -> (i64, Status) {
        match state.read::<PreScoreState>(PRE_SCORE_STATE_KEY) {
            Some(s) => self.score_node(node, &s.pod_requests),
            None => {
                // Upstream recomputes when PreScore did not run.
                let reqs = self.pod_requests(pod);
                if !self.scores_best_effort && reqs.iter().all(|&r| r == 0) {
                    return (0, Status::success());
                }
                self.score_node(node, &reqs)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Cluster;
    use crate::model::testing::{cluster, pod};
    use k8s_openapi::jiff::Timestamp;
    use serde_json::json;

    fn node(name: &str, alloc: Value) -> Value {
        json!({"metadata": {"name": name}, "status": {"allocatable": alloc}})
    }
    fn bound(name: &str, node: &str, req: Value) -> Value {
        json!({"metadata": {"name": name, "uid": name},
               "spec": {"nodeName": node,
                        "containers": [{"name": "c", "resources": {"requests": req}}]}})
    }
    fn pending(req: Value) -> Pod {
        pod(json!({"metadata": {"name": "pending"},
                   "spec": {"containers": [{"name": "c", "resources": {"requests": req}}]}}))
    }
    fn plugin(user: Option<Value>) -> Arc<dyn Plugin> {
        new(&args(user.as_ref(), "a").unwrap(), &Default::default()).unwrap()
    }

    /// PreScore status and per-node scores.
    fn run(pl: &Arc<dyn Plugin>, c: &Cluster, p: &Pod) -> (Status, Vec<i64>) {
        let cx = Ctx {
            cluster: c,
            now: Timestamp::UNIX_EPOCH,
        };
        let mut st = CycleState::default();
        let nodes: Vec<&NodeInfo> = c.nodes().iter().collect();
        let ps = pl
            .as_pre_score()
            .unwrap()
            .pre_score(&cx, &mut st, p, &nodes);
        let scores = c
            .nodes()
            .iter()
            .map(|n| pl.as_score().unwrap().score(&cx, &st, p, n).0)
            .collect();
        (ps, scores)
    }

    /// h01, h14, h16, h17, h18, h55 default (cpu, memory) scores.
    #[test]
    fn two_resource_scores_from_fidelity_scenarios() {
        let n = |name: &str, cpu: &str, mem: &str| {
            node(name, json!({"cpu": cpu, "memory": mem, "pods": "110"}))
        };
        // h01: n1 100, n2 75, n3 100, n4 100
        let c = cluster(
            vec![
                n("n1", "4", "8Gi"),
                n("n2", "8", "16Gi"),
                n("n3", "2", "4Gi"),
                n("n4", "16", "32Gi"),
            ],
            vec![
                bound("r1", "n1", json!({"cpu": "1", "memory": "2Gi"})),
                bound("r2", "n1", json!({"cpu": "500m", "memory": "1Gi"})),
                bound("r3", "n2", json!({"cpu": "6", "memory": "4Gi"})),
                bound("r4-0", "n4", json!({"cpu": "2", "memory": "4Gi"})),
                bound("r4-1", "n4", json!({"cpu": "2", "memory": "4Gi"})),
                bound("r4-2", "n4", json!({"cpu": "2", "memory": "4Gi"})),
                bound("r4-3", "n4", json!({"cpu": "2", "memory": "4Gi"})),
            ],
        );
        let (st, s) = run(
            &plugin(None),
            &c,
            &pending(json!({"cpu": "1", "memory": "2Gi"})),
        );
        assert!(st.is_success());
        assert_eq!(s, vec![100, 75, 100, 100]);

        // h18: n1 81, n2 78, n3 90, n4 78
        let c = cluster(
            vec![
                n("n1", "4", "8Gi"),
                n("n2", "8", "16Gi"),
                n("n3", "4", "16Gi"),
                n("n4", "16", "8Gi"),
            ],
            vec![
                bound("r1", "n1", json!({"cpu": "2", "memory": "2Gi"})),
                bound("r2", "n2", json!({"cpu": "1", "memory": "10Gi"})),
                bound("r3", "n4", json!({"cpu": "10", "memory": "1Gi"})),
            ],
        );
        let (_, s) = run(
            &plugin(None),
            &c,
            &pending(json!({"cpu": "1", "memory": "1Gi"})),
        );
        assert_eq!(s, vec![81, 78, 90, 78]);

        // h55: n2 100, n3 93, n4 67
        let c = cluster(
            vec![
                n("n2", "8", "8Gi"),
                n("n3", "4", "8Gi"),
                n("n4", "16", "32Gi"),
            ],
            vec![
                bound("r2", "n2", json!({"cpu": "2", "memory": "2Gi"})),
                bound("r4", "n4", json!({"cpu": "12", "memory": "4Gi"})),
            ],
        );
        let (_, s) = run(
            &plugin(None),
            &c,
            &pending(json!({"cpu": "1", "memory": "1Gi"})),
        );
        assert_eq!(s, vec![100, 93, 67]);

        // h16: sidecar + init container request (4 cpu, 1152Mi): n2 57, n3 82
        let c = cluster(
            vec![n("n2", "5", "8Gi"), n("n3", "8", "8Gi")],
            vec![bound("r2", "n2", json!({"cpu": "1"}))],
        );
        let p = pod(json!({"metadata": {"name": "pending"}, "spec": {
            "containers": [{"name": "main", "resources": {"requests": {"cpu": "1500m", "memory": "512Mi"}}}],
            "initContainers": [
                {"name": "sidecar", "restartPolicy": "Always",
                 "resources": {"requests": {"cpu": "1", "memory": "128Mi"}}},
                {"name": "migrate", "resources": {"requests": {"cpu": "3", "memory": "1Gi"}}}]}}));
        assert_eq!(run(&plugin(None), &c, &p).1, vec![57, 82]);

        // h17: overhead counts: n2 76, n3 91
        let c = cluster(
            vec![n("n2", "3", "4Gi"), n("n3", "4", "8Gi")],
            vec![bound("r2", "n2", json!({"cpu": "1"}))],
        );
        let p = pod(json!({"metadata": {"name": "pending"}, "spec": {
            "containers": [{"name": "c", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}],
            "overhead": {"cpu": "250m", "memory": "160Mi"}}}));
        assert_eq!(run(&plugin(None), &c, &p).1, vec![76, 91]);

        // h06/h11/h09: 100m pod on an empty 4 cpu / 8Gi node: 98
        let c = cluster(vec![n("n1", "4", "8Gi")], vec![]);
        assert_eq!(
            run(&plugin(None), &c, &pending(json!({"cpu": "100m"}))).1,
            vec![98]
        );
    }

    /// h20: three resources; a GPU the pod does not request is left out.
    #[test]
    fn h20_three_resources() {
        let n = |name: &str, cpu: &str, mem: &str, gpu: Option<&str>| {
            let mut a = json!({"cpu": cpu, "memory": mem, "pods": "110"});
            if let Some(g) = gpu {
                a["nvidia.com/gpu"] = json!(g);
            }
            node(name, a)
        };
        let c = cluster(
            vec![
                n("n1", "8", "16Gi", Some("4")),
                n("n2", "8", "16Gi", None),
                n("n3", "8", "32Gi", Some("2")),
                n("n4", "4", "16Gi", None),
            ],
            vec![
                bound(
                    "r1",
                    "n1",
                    json!({"cpu": "2", "memory": "8Gi", "nvidia.com/gpu": "1"}),
                ),
                bound("r2", "n2", json!({"cpu": "6", "memory": "2Gi"})),
                bound(
                    "r3",
                    "n3",
                    json!({"cpu": "1", "memory": "4Gi", "nvidia.com/gpu": "1"}),
                ),
            ],
        );
        let pl = plugin(Some(json!({"resources": [
            {"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1},
            {"name": "nvidia.com/gpu", "weight": 1}]})));
        let (_, s) = run(&pl, &c, &pending(json!({"cpu": "1", "memory": "2Gi"})));
        assert_eq!(s, vec![87, 68, 96, 93]);
        // When the pod requests the GPU, three fractions give the population std:
        // n1: cpu 3/8, mem 10/16, gpu 2/4 → std 0.1021 → 89.
        let (_, s) = run(
            &pl,
            &c,
            &pending(json!({"cpu": "1", "memory": "2Gi", "nvidia.com/gpu": "1"})),
        );
        assert_eq!(s[0], 89);
    }

    #[test]
    fn skips_best_effort_pods_and_caps_fractions() {
        let c = cluster(
            vec![node(
                "n1",
                json!({"cpu": "1", "memory": "1Gi", "pods": "10"}),
            )],
            vec![],
        );
        let be = pod(json!({"metadata": {"name": "be"}, "spec": {"containers": [{"name": "c"}]}}));
        assert!(run(&plugin(None), &c, &be).0.is_skip());
        // Over-committed cpu caps at 1: cpu 1, memory 0.5 → std 0.25 → 75.
        let (st, s) = run(
            &plugin(None),
            &c,
            &pending(json!({"cpu": "3", "memory": "512Mi"})),
        );
        assert!(st.is_success());
        assert_eq!(s, vec![75]);
        // A single participating resource has std 0.
        let (_, s) = run(&plugin(None), &c, &pending(json!({"cpu": "500m"})));
        assert_eq!(s, vec![75]); // cpu 0.5, memory 0 → |0.5 − 0| / 2
        let pl = plugin(Some(json!({"resources": [{"name": "cpu"}]})));
        assert_eq!(run(&pl, &c, &pending(json!({"cpu": "500m"}))).1, vec![100]);
    }

    #[test]
    fn args_defaults_and_validation() {
        assert_eq!(
            args(None, "p").unwrap(),
            json!({"resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]})
        );
        assert_eq!(
            args(
                Some(&json!({"resources": [{"name": "cpu", "weight": 0}]})),
                "p"
            )
            .unwrap(),
            json!({"resources": [{"name": "cpu", "weight": 1}]})
        );
        let errs = args(
            Some(
                &json!({"resources": [{"name": "cpu", "weight": 2}, {"name": "cpu", "weight": 1}]}),
            ),
            "profiles[0].pluginConfig[0].args",
        )
        .unwrap_err();
        assert_eq!(
            errs,
            vec![
                "profiles[0].pluginConfig[0].args.resources[0].weight: Invalid value: 2: must be 1",
                "profiles[0].pluginConfig[0].args.resources[1].name: Duplicate value: \"cpu\"",
            ]
        );
        match new(
            &json!({"resources": [{"name": "cpu", "weight": 3}]}),
            &Default::default(),
        ) {
            Err(e) => assert_eq!(e, "resources[0].weight: Invalid value: 3: must be 1"),
            Ok(_) => panic!("weight 3 accepted"),
        }
    }
}
