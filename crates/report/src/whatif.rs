//! Before and after a what-if edit: the verdict, how many nodes fit, the node chosen
//! and its total, and the rejection groups (plugin and reason) whose node counts
//! changed. Computed from the two traces alone, for every output to draw
//! (`what_if: {edits, before, after, changed}` in JSON).

use std::collections::BTreeMap;

use schedscope_engine::engine::trace::{Outcome, Trace};
use serde::Serialize;

use crate::PodVerdict;

/// One side of the comparison.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct WhatIfSide {
    /// `Scheduled`, `Unschedulable`, `Gated` or `Error`.
    pub verdict: String,
    pub feasible: usize,
    pub selected_node: Option<String>,
    pub total: Option<i64>,
    pub fit_error: Option<String>,
}

/// A rejection group whose node count changed (0 when absent on one side).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GroupChange {
    pub plugin: String,
    pub reason: String,
    pub before: usize,
    pub after: usize,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct WhatIfComparison {
    /// The edits in their `--what-if` spelling.
    pub edits: Vec<String>,
    /// What the edits had to say (how a request was spread, nodes added, ...).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    pub before: WhatIfSide,
    pub after: WhatIfSide,
    /// In plugin, then reason order.
    pub changed: Vec<GroupChange>,
}

pub fn verdict(trace: &Trace) -> &'static str {
    match trace.outcome {
        Outcome::Scheduled { .. } => "Scheduled",
        Outcome::Unschedulable { .. } => "Unschedulable",
        Outcome::Gated { .. } => "Gated",
        Outcome::Error { .. } => "Error",
    }
}

impl WhatIfSide {
    pub fn of(trace: &Trace) -> WhatIfSide {
        let selected = match &trace.outcome {
            Outcome::Scheduled { node } => Some(node.clone()),
            _ => None,
        };
        WhatIfSide {
            verdict: verdict(trace).into(),
            feasible: trace.feasible.len(),
            total: selected.as_deref().and_then(|n| trace.total(n)),
            selected_node: selected,
            fit_error: trace.fit_error.clone(),
        }
    }
}

/// Nodes rejected per (plugin, reason): each rejected node counts once for each of
/// its reasons; a PreFilter rejection counts every node.
pub fn rejection_groups(trace: &Trace) -> BTreeMap<(String, String), usize> {
    let mut groups = BTreeMap::new();
    if let Some(plugin) = &trace.pre_filter.plugin
        && !matches!(trace.outcome, Outcome::Gated { .. })
    {
        for r in &trace.pre_filter.reasons {
            *groups.entry((plugin.clone(), r.clone())).or_insert(0) += trace.nodes_total;
        }
    }
    for v in trace.filter.iter().filter(|v| !v.feasible) {
        let plugin = v.plugin.clone().unwrap_or_else(|| "PreFilter".into());
        for r in &v.reasons {
            *groups.entry((plugin.clone(), r.clone())).or_insert(0) += 1;
        }
    }
    groups
}

/// The comparison of `before` and `after` under `edits` (with their notes).
pub fn compare(
    edits: &[String],
    notes: &[String],
    before: &Trace,
    after: &Trace,
) -> WhatIfComparison {
    let b = rejection_groups(before);
    let a = rejection_groups(after);
    let mut keys: Vec<&(String, String)> = b.keys().chain(a.keys()).collect();
    keys.sort();
    keys.dedup();
    let changed = keys
        .into_iter()
        .filter_map(|k| {
            let (x, y) = (
                b.get(k).copied().unwrap_or(0),
                a.get(k).copied().unwrap_or(0),
            );
            (x != y).then(|| GroupChange {
                plugin: k.0.clone(),
                reason: k.1.clone(),
                before: x,
                after: y,
            })
        })
        .collect();
    WhatIfComparison {
        edits: edits.to_vec(),
        notes: notes.to_vec(),
        before: WhatIfSide::of(before),
        after: WhatIfSide::of(after),
        changed,
    }
}

/// What cluster edits change for the pending pods, each replayed alone before and
/// after (`pods --verdicts --what-if`): which become schedulable and which stop being
/// so. The pods compete for the same room; each is judged as if it came first.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PodsChange {
    pub edits: Vec<String>,
    pub became_schedulable: Vec<String>,
    pub no_longer_schedulable: Vec<String>,
    /// Pods listed on both sides.
    pub compared: usize,
}

impl PodsChange {
    /// `before` and `after` are `(pod key, verdict)` in list order.
    pub fn of(
        edits: &[String],
        before: &[(String, PodVerdict)],
        after: &[(String, PodVerdict)],
    ) -> PodsChange {
        let was: BTreeMap<&str, bool> = before
            .iter()
            .map(|(k, v)| (k.as_str(), schedulable(v)))
            .collect();
        let mut out = PodsChange {
            edits: edits.to_vec(),
            became_schedulable: Vec::new(),
            no_longer_schedulable: Vec::new(),
            compared: 0,
        };
        for (key, v) in after {
            let Some(&was) = was.get(key.as_str()) else {
                continue;
            };
            out.compared += 1;
            match (was, schedulable(v)) {
                (false, true) => out.became_schedulable.push(key.clone()),
                (true, false) => out.no_longer_schedulable.push(key.clone()),
                _ => {}
            }
        }
        out
    }

    /// `node.uncordon=gen-a3 → 4 pods become schedulable: a, b, c, d`, and a line
    /// for pods that stop being schedulable when there are any.
    pub fn lines(&self) -> Vec<String> {
        let edits = self.edits.join(" + ");
        let list = |keys: &[String]| {
            if keys.is_empty() {
                String::new()
            } else {
                format!(": {}", keys.join(", "))
            }
        };
        let n = self.became_schedulable.len();
        let mut lines = vec![format!(
            "{edits} → {n} pod{} become{} schedulable{}",
            if n == 1 { "" } else { "s" },
            if n == 1 { "s" } else { "" },
            list(&self.became_schedulable)
        )];
        let m = self.no_longer_schedulable.len();
        if m > 0 {
            lines.push(format!(
                "{edits} → {m} pod{} no longer schedulable{}",
                if m == 1 { "" } else { "s" },
                list(&self.no_longer_schedulable)
            ));
        }
        lines
    }
}

fn schedulable(v: &PodVerdict) -> bool {
    matches!(
        v,
        PodVerdict::Schedulable { .. } | PodVerdict::WaitsAtPermit { .. }
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedscope_engine::engine::SchedulerConfig;
    use schedscope_engine::engine::cycle::CycleOptions;
    use schedscope_engine::model::testing::{cluster, simple_node, simple_pod};
    use schedscope_engine::whatif::{parse_edits, replay, replay_edited};

    #[test]
    fn an_uncordon_that_unblocks_shows_in_every_field() {
        let mut cordoned = simple_node("n2", "8", "8Gi");
        cordoned["spec"] = serde_json::json!({"unschedulable": true});
        let c = cluster(
            vec![simple_node("n1", "2", "8Gi"), cordoned],
            vec![simple_pod("big", "4", "1Gi", None)],
        );
        let cfg = SchedulerConfig::defaults();
        let opts = CycleOptions::default();
        let pod = c.pod("default/big").unwrap().as_ref().clone();
        let before = replay(&c, &cfg.profiles, &pod, &opts).unwrap();
        let edits = parse_edits(&["node.uncordon=n2"]).unwrap();
        let (_, after) = replay_edited(&c, &cfg.profiles, &pod, &edits, &opts).unwrap();
        let cmp = compare(&["node.uncordon=n2".into()], &[], &before, &after.unwrap());
        assert_eq!(cmp.before.verdict, "Unschedulable");
        assert_eq!(
            (cmp.before.feasible, cmp.before.selected_node.clone()),
            (0, None)
        );
        assert_eq!(cmp.after.verdict, "Scheduled");
        assert_eq!(cmp.after.selected_node.as_deref(), Some("n2"));
        assert!(cmp.after.total.is_some());
        let changed: Vec<(&str, usize, usize)> = cmp
            .changed
            .iter()
            .map(|g| (g.plugin.as_str(), g.before, g.after))
            .collect();
        assert_eq!(changed, [("NodeUnschedulable", 1, 0)]);
        let json = serde_json::to_value(&cmp).unwrap();
        assert_eq!(json["edits"][0], "node.uncordon=n2");
        assert_eq!(json["after"]["selected_node"], "n2");
        assert_eq!(json["changed"][0]["reason"], "node(s) were unschedulable");
    }

    #[test]
    fn pods_change_counts_each_direction_and_reads_as_a_sentence() {
        let yes = |n: &str| PodVerdict::Schedulable { node: n.into() };
        let no = PodVerdict::Unschedulable {
            nodes: 3,
            reason: "x".into(),
            nominated: None,
            fit_error: None,
        };
        let before = vec![
            ("a/1".to_string(), no.clone()),
            ("a/2".to_string(), yes("n1")),
            ("a/3".to_string(), no.clone()),
            ("a/gone".to_string(), no.clone()),
        ];
        let after = vec![
            ("a/1".to_string(), yes("n2")),
            ("a/2".to_string(), no.clone()),
            ("a/3".to_string(), no.clone()),
        ];
        let c = PodsChange::of(&["node.cordon=n1".into()], &before, &after);
        assert_eq!(c.became_schedulable, ["a/1"]);
        assert_eq!(c.no_longer_schedulable, ["a/2"]);
        assert_eq!(c.compared, 3);
        assert_eq!(
            c.lines(),
            [
                "node.cordon=n1 → 1 pod becomes schedulable: a/1",
                "node.cordon=n1 → 1 pod no longer schedulable: a/2"
            ]
        );
        let none = PodsChange::of(&["node.uncordon=x".into()], &before, &before);
        assert_eq!(
            none.lines(),
            ["node.uncordon=x → 0 pods become schedulable"]
        );
    }
}
