//! PreScore, Score, NormalizeScore and the weighted totals over the feasible nodes
//! (upstream: pkg/scheduler/schedule_one.go, `prioritizeNodes`, and
//! framework/runtime/framework.go, `RunPreScorePlugins` / `RunScorePlugins`).

use super::options::{CycleOptions, par_chunks};
use crate::engine::framework::{
    Ctx, CycleState, Framework, MAX_NODE_SCORE, MIN_NODE_SCORE, NodeScore, ScorePlugin,
};
use crate::engine::status::Status;
use crate::engine::trace::{NotModelled, Outcome, PluginResult, PluginScores, Trace};
use crate::model::{NodeInfo, Pod};

/// PreScore, Score and NormalizeScore over the feasible nodes (upstream
/// `prioritizeNodes`), totals written to `trace`. False when a plugin failed (the
/// cycle ends with `trace.outcome` an error).
#[allow(clippy::too_many_arguments)]
pub(super) fn prioritize_nodes(
    fw: &Framework,
    cx: &Ctx,
    opts: &CycleOptions,
    state: &mut CycleState,
    pod: &Pod,
    nodes: &[NodeInfo],
    feasible: &[usize],
    trace: &mut Trace,
) -> bool {
    let feasible_infos: Vec<&NodeInfo> = feasible.iter().map(|&i| &nodes[i]).collect();
    match prioritize(fw, cx, opts, state, pod, feasible, &feasible_infos, trace) {
        Ok(totals) => trace.totals = totals,
        Err(message) => {
            trace.upstream_behaviour = fw
                .score
                .iter()
                .filter_map(|w| {
                    w.plugin
                        .upstream_behaviour(&message)
                        .map(|what| NotModelled {
                            plugin: w.plugin.name().to_string(),
                            what,
                        })
                })
                .collect();
            trace.outcome = Outcome::Error { message };
            return false;
        }
    }
    true
}

/// PreScore, Score, NormalizeScore and weights; fills `trace.pre_score` and
/// `trace.scores`, returns totals over the feasible nodes.
#[allow(clippy::too_many_arguments)]
fn prioritize(
    fw: &Framework,
    cx: &Ctx,
    opts: &CycleOptions,
    state: &mut CycleState,
    pod: &Pod,
    feasible: &[usize],
    infos: &[&NodeInfo],
    trace: &mut Trace,
) -> Result<Vec<i64>, String> {
    if fw.score.is_empty() {
        // The sum over no plugins. (Upstream's `prioritizeNodes` puts a placeholder 1
        // in its list here, which nothing reads but host selection, where every node
        // ties either way; the reference oracle reports 0.)
        return Ok(vec![0; feasible.len()]);
    }
    for p in &fw.pre_score {
        let Some(ps) = p.as_pre_score() else { continue };
        let st = ps.pre_score(cx, state, pod, infos);
        trace.pre_score.push(PluginResult::new(p.name(), &st));
        if st.is_skip() {
            state.skip_score_plugins.insert(p.name().to_string());
        } else if !st.is_success() {
            return Err(format!(
                "running PreScore plugin {:?}: {}",
                p.name(),
                st.message()
            ));
        }
    }
    let mut totals = vec![0i64; feasible.len()];
    // Every Score call of every plugin first, over node chunks in parallel (Score
    // only reads the state); then plugin by plugin in order, as upstream reports
    // them: the first failure (plugin order, then node order) ends the cycle.
    let scorers: Vec<(&str, i64, &dyn ScorePlugin)> = fw
        .score
        .iter()
        .filter(|wp| !state.skip_score_plugins.contains(wp.plugin.name()))
        .filter_map(|wp| Some((wp.plugin.name(), wp.weight, wp.plugin.as_score()?)))
        .collect();
    let shared: &CycleState = state;
    let chunks = par_chunks(
        opts.workers(feasible.len()),
        opts.min_chunk(),
        feasible.len(),
        |r| {
            scorers
                .iter()
                .map(|(_, _, sp)| {
                    r.clone()
                        .map(|k| sp.score(cx, shared, pod, infos[k]))
                        .collect::<Vec<_>>()
                })
                .collect::<Vec<_>>()
        },
    );
    let mut chunks: Vec<std::vec::IntoIter<Vec<(i64, Status)>>> =
        chunks.into_iter().map(Vec::into_iter).collect();
    for &(name, weight, sp) in &scorers {
        let mut scores: Vec<NodeScore> = Vec::with_capacity(feasible.len());
        let mut idxs = feasible.iter();
        for chunk in &mut chunks {
            for (s, st) in chunk.next().unwrap_or_default() {
                if !st.is_success() {
                    return Err(format!(
                        "running Score plugins: plugin {name:?} failed with: {}",
                        st.message()
                    ));
                }
                scores.push(NodeScore {
                    node: idxs.next().copied().unwrap_or_default(),
                    score: s,
                });
            }
        }
        let raw: Vec<i64> = scores.iter().map(|s| s.score).collect();
        if sp.has_normalize() {
            let st = sp.normalize_score(cx, state, pod, &mut scores);
            if !st.is_success() {
                return Err(format!(
                    "running Normalize on Score plugins: plugin {name:?} failed with: {}",
                    st.message()
                ));
            }
        }
        for s in &scores {
            if !(MIN_NODE_SCORE..=MAX_NODE_SCORE).contains(&s.score) {
                return Err(format!(
                    "applying score defaultWeights on Score plugins: plugin {name:?} returns an invalid score {}, it should in the range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing",
                    s.score
                ));
            }
        }
        let normalized: Vec<i64> = scores.iter().map(|s| s.score).collect();
        for (t, s) in totals.iter_mut().zip(&normalized) {
            *t += s * weight;
        }
        trace.scores.push(PluginScores {
            plugin: name.to_string(),
            weight,
            raw,
            normalized,
        });
    }
    Ok(totals)
}
