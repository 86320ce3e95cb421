//! The explain answer as JSON (and YAML), serialized straight to the writer: the
//! per-node parts (the filter verdicts, the score and total maps, the ranks, the
//! rejection groups' node lists) stream from the trace and its view without a
//! `serde_json::Value` tree, which cost a heap allocation per name and number at
//! 5,000 nodes. The small parts stay `Value`s. Keys come out sorted, as a `Value`
//! map sorts them, so the bytes are those of the tree it replaced
//! (`tests/json_output.rs` holds them).

use std::collections::BTreeMap;

use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use serde_json::Value;

use crate::engine::trace::{NodeAllVerdicts, NodeVerdict, PluginResult, PluginScores, Trace};
use crate::report::{CauseLine, Group, TraceView};

/// One explain answer, ready to serialize. Build it with [`AnswerJson::new`], add
/// keys with [`AnswerJson::insert`], and write it with
/// [`super::json::write_pretty`] (or any serde serializer).
pub struct AnswerJson<'a> {
    trace: &'a Trace,
    view: &'a TraceView,
    /// Every top-level key, sorted as a `Value` map sorts them.
    parts: BTreeMap<String, Part<'a>>,
    /// Feasible node indices in name order: every per-node map walks it.
    feasible_order: Vec<usize>,
}

/// A top-level value: small ones as `Value`s, the per-node ones drawn when written.
enum Part<'a> {
    Small(Value),
    Filter,
    FilterAll,
    Scores,
    Total,
    Ranks,
    Groups(Vec<GroupJson<'a>>),
}

/// One rejection group: `{code, details?, nodes, plugin, reason}`.
struct GroupJson<'a> {
    group: &'a Group,
    nodes: Vec<&'a str>,
    details: Option<Vec<CauseLine>>,
}

impl<'a> AnswerJson<'a> {
    pub(super) fn new(trace: &'a Trace, view: &'a TraceView) -> Self {
        let mut parts = BTreeMap::new();
        parts.insert("filter".into(), Part::Filter);
        parts.insert("filter_all".into(), Part::FilterAll);
        parts.insert("scores".into(), Part::Scores);
        parts.insert("total".into(), Part::Total);
        // Ranks only when every feasible node has a total (as the table shows them).
        if trace.totals.len() == trace.feasible.len() {
            parts.insert("ranks".into(), Part::Ranks);
        }
        let feasible = &trace.feasible;
        let mut feasible_order: Vec<usize> = (0..feasible.len()).collect();
        feasible_order.sort_unstable_by(|&a, &b| feasible[a].cmp(&feasible[b]));
        Self {
            trace,
            view,
            parts,
            feasible_order,
        }
    }

    /// Sets a small top-level key (replacing one of the same name).
    pub fn insert(&mut self, key: impl Into<String>, value: Value) {
        self.parts.insert(key.into(), Part::Small(value));
    }

    /// Sets `key` to the rejection groups `groups`, each with its cause lines when
    /// the view has causes.
    pub(super) fn insert_groups(
        &mut self,
        key: &str,
        groups: impl IntoIterator<Item = (&'a Group, Option<Vec<CauseLine>>)>,
    ) {
        let view = self.view;
        let groups = groups
            .into_iter()
            .map(|(group, details)| GroupJson {
                group,
                nodes: view.group_nodes(group),
                details,
            })
            .collect();
        self.parts.insert(key.into(), Part::Groups(groups));
    }

    /// The whole answer as a `Value` (tests and callers that edit it).
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).expect("an answer always serializes")
    }

    /// A map from feasible node name to `values[i]`, by name.
    fn per_feasible<S: Serializer, T: Serialize>(
        &self,
        s: S,
        values: &[T],
    ) -> Result<S::Ok, S::Error> {
        // Those below `values.len()`, as a `zip` with the list would pair them.
        let len = values.len().min(self.trace.feasible.len());
        let mut map = s.serialize_map(Some(len))?;
        for &i in self.feasible_order.iter().filter(|&&i| i < len) {
            map.serialize_entry(&self.trace.feasible[i], &values[i])?;
        }
        map.end()
    }
}

impl Serialize for AnswerJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.parts.len()))?;
        for (key, part) in &self.parts {
            map.serialize_entry(key, &Drawn(self, part))?;
        }
        map.end()
    }
}

/// A part with the answer it is drawn from.
struct Drawn<'s, 'a>(&'s AnswerJson<'a>, &'s Part<'a>);

impl Serialize for Drawn<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let Drawn(answer, part) = self;
        let trace = answer.trace;
        match part {
            Part::Small(v) => v.serialize(s),
            Part::Filter => sorted_map(s, &trace.filter, |v| v.node.as_str(), Verdict),
            Part::FilterAll => sorted_map(
                s,
                trace.filter_all.as_deref().unwrap_or(&[]),
                |n| n.node.as_str(),
                AllVerdicts,
            ),
            Part::Scores => sorted_map(
                s,
                &trace.scores,
                |p| p.plugin.as_str(),
                |p| ScoreJson(answer, p),
            ),
            Part::Total => answer.per_feasible(s, &trace.totals),
            Part::Ranks => answer.per_feasible(s, &answer.view.ranks),
            Part::Groups(groups) => s.collect_seq(groups),
        }
    }
}

/// A map of `items` keyed by `key`, in key order (a `Value` map's order; a later
/// item wins over an earlier one of the same key, as collecting into a map does).
fn sorted_map<'i, S, I, V>(
    s: S,
    items: &'i [I],
    key: impl Fn(&'i I) -> &'i str,
    value: impl Fn(&'i I) -> V,
) -> Result<S::Ok, S::Error>
where
    S: Serializer,
    V: Serialize,
{
    let mut order: Vec<usize> = (0..items.len()).collect();
    // Stable, so equal keys keep their order and the last is the one kept.
    order.sort_by(|&a, &b| key(&items[a]).cmp(key(&items[b])));
    order.dedup_by(|later, earlier| {
        let same = key(&items[*later]) == key(&items[*earlier]);
        if same {
            *earlier = *later;
        }
        same
    });
    let mut map = s.serialize_map(Some(order.len()))?;
    for i in order {
        map.serialize_entry(key(&items[i]), &value(&items[i]))?;
    }
    map.end()
}

/// One node's verdict: `{code, feasible, plugin, reasons}`.
struct Verdict<'a>(&'a NodeVerdict);

impl Serialize for Verdict<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let v = self.0;
        let mut map = s.serialize_map(Some(4))?;
        map.serialize_entry("code", v.code.as_str())?;
        map.serialize_entry("feasible", &v.feasible)?;
        map.serialize_entry("plugin", &v.plugin)?;
        map.serialize_entry("reasons", &v.reasons)?;
        map.end()
    }
}

/// One node's result from every filter plugin: `{plugin: {code, reasons}}`.
struct AllVerdicts<'a>(&'a NodeAllVerdicts);

impl Serialize for AllVerdicts<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        sorted_map(s, &self.0.results, |r| r.plugin.as_str(), CodeReasons)
    }
}

/// `{code, reasons}` of one plugin's result.
struct CodeReasons<'a>(&'a PluginResult);

impl Serialize for CodeReasons<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(2))?;
        map.serialize_entry("code", self.0.code.as_str())?;
        map.serialize_entry("reasons", &self.0.reasons)?;
        map.end()
    }
}

/// One score plugin: `{normalized: {node: n}, raw: {node: n}, weight}`.
struct ScoreJson<'s, 'a>(&'s AnswerJson<'a>, &'a PluginScores);

impl Serialize for ScoreJson<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let ScoreJson(answer, p) = self;
        let mut map = s.serialize_map(Some(3))?;
        map.serialize_entry("normalized", &PerFeasible(answer, &p.normalized))?;
        map.serialize_entry("raw", &PerFeasible(answer, &p.raw))?;
        map.serialize_entry("weight", &p.weight)?;
        map.end()
    }
}

/// A per-feasible-node list as a map by node name.
struct PerFeasible<'s, 'a, T>(&'s AnswerJson<'a>, &'s [T]);

impl<T: Serialize> Serialize for PerFeasible<'_, '_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.per_feasible(s, self.1)
    }
}

impl Serialize for GroupJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let group = self.group;
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("code", &group.code.map(|c| c.as_str()))?;
        if let Some(lines) = &self.details {
            map.serialize_entry("details", lines)?;
        }
        map.serialize_entry("nodes", &self.nodes)?;
        map.serialize_entry("plugin", &group.plugin)?;
        map.serialize_entry("reason", &group.reason)?;
        map.end()
    }
}
