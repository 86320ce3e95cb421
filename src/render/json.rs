//! The answer as JSON, in the schema of `tests/fidelity/README.md` (maps keyed by
//! node and plugin name, sorted), plus extra keys that never change the meaning of
//! the listed ones; and [`write_pretty`], the one writer every JSON output uses.

use std::collections::BTreeMap;
use std::io;

use serde::Serialize;
use serde_json::ser::{Formatter, PrettyFormatter};
use serde_json::{Value, json};

use super::escape::is_spoofing;

/// Writes `value` as pretty-printed JSON, as `serde_json::to_writer_pretty` does, but
/// with DEL, the C1 controls (U+0080–U+009F: CSI is U+009B) and the bidi and
/// zero-width characters of [`is_spoofing`] escaped (`\u009b`, `\u202e`) besides
/// what serde_json escapes (C0 controls, `"` and `\`): JSON printed on a terminal
/// or read by a person stays inert and shows what it holds. The values are the same
/// once parsed. Every JSON output (`-o json` of each subcommand) goes through it.
pub fn write_pretty<W: io::Write + ?Sized, T: Serialize + ?Sized>(
    out: &mut W,
    value: &T,
) -> serde_json::Result<()> {
    let mut ser = serde_json::Serializer::with_formatter(out, InertText(PrettyFormatter::new()));
    value.serialize(&mut ser)
}

/// Characters [`write_pretty`] escapes that serde_json leaves raw.
fn escaped(c: char) -> bool {
    matches!(c, '\u{7f}'..='\u{9f}') || is_spoofing(c)
}

/// serde_json's pretty formatter, with [`escaped`] characters written as `\uXXXX`.
struct InertText<'a>(PrettyFormatter<'a>);

impl Formatter for InertText<'_> {
    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        // Every escaped character is DEL or beyond ASCII: plain ASCII goes out whole.
        if fragment.bytes().all(|b| b < 0x7f) {
            return writer.write_all(fragment.as_bytes());
        }
        let mut start = 0;
        for (i, c) in fragment.char_indices() {
            if escaped(c) {
                writer.write_all(&fragment.as_bytes()[start..i])?;
                // Every escaped character is in the Basic Multilingual Plane.
                write!(writer, "\\u{:04x}", u32::from(c))?;
                start = i + c.len_utf8();
            }
        }
        writer.write_all(&fragment.as_bytes()[start..])
    }

    fn begin_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_array(w)
    }
    fn end_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_array(w)
    }
    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.0.begin_array_value(w, first)
    }
    fn end_array_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_array_value(w)
    }
    fn begin_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_object(w)
    }
    fn end_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object(w)
    }
    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.0.begin_object_key(w, first)
    }
    fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_object_value(w)
    }
    fn end_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object_value(w)
    }
}

use crate::engine::status::Code;
use crate::engine::trace::{PluginResult, Trace};
use crate::report::needs::PodNeeds;
use crate::report::{Answer, Causes, GroupKind, Recorded, RecordedWord, TraceView};

pub use super::answer_json::AnswerJson;

pub fn to_json(t: &Trace) -> Value {
    to_json_view(t, &TraceView::new(t))
}

/// [`to_json`] from a view already built, as a `Value` ([`trace_json`] writes it
/// without building one).
pub fn to_json_view(t: &Trace, view: &TraceView) -> Value {
    trace_json(t, view).to_value()
}

/// The trace's answer, ready to write. A view with causes adds `details` to each
/// rejection group: every distinct cause with the group's nodes it applies to
/// (`[{"cause", "nodes"}]`, the most shared first; a node with several causes is
/// listed under each). The other keys are the same either way. With all-filters
/// data, `all_filter_groups` holds every plugin's rejections grouped the same way.
pub fn trace_json<'a>(t: &'a Trace, view: &'a TraceView) -> AnswerJson<'a> {
    let mut v = AnswerJson::new(t, view);
    v.insert(
        "prefilter",
        json!({
            "code": t.pre_filter.code.unwrap_or(Code::Success).as_str(),
            "plugin": t.pre_filter.plugin,
            "reasons": t.pre_filter.reasons,
            "node_subset": t.pre_filter.node_subset,
        }),
    );
    let postfilter = t.post_filter.as_ref().map(|p| {
        json!({
            "nominated_node": p.nominated_node,
            "victims": p.victims,
            "message": p.message,
            "code": p.code.map(Code::as_str),
            "plugins": p.plugins.iter().map(plugin_result).collect::<Vec<_>>(),
        })
    });
    let small = [
        ("pod", json!(t.pod)),
        ("nodes_total", json!(t.nodes_total)),
        ("best_nodes", json!(t.best_nodes)),
        ("fit_error", json!(t.fit_error)),
        ("postfilter", json!(postfilter)),
        // Extra keys.
        ("profile", json!(t.profile)),
        ("priority", json!(t.priority)),
        ("selected_node", json!(t.selected_node)),
        ("outcome", json!(t.outcome)),
        (
            "nominated_node",
            json!(
                t.nominated_node
                    .as_ref()
                    .map(|(n, passed)| json!({"node": n, "passed_filters": passed}))
            ),
        ),
        ("num_nodes_to_find", json!(t.num_nodes_to_find)),
        (
            "prefilter_plugins",
            json!(
                t.pre_filter
                    .plugins
                    .iter()
                    .map(plugin_result)
                    .collect::<Vec<_>>()
            ),
        ),
        (
            "prescore",
            json!(t.pre_score.iter().map(plugin_result).collect::<Vec<_>>()),
        ),
        (
            "binding",
            t.binding
                .iter()
                .map(|ph| {
                    json!({
                        "point": ph.point,
                        "plugins": ph.plugins.iter().map(plugin_result).collect::<Vec<_>>(),
                    })
                })
                .collect(),
        ),
        ("not_modelled", json!(t.not_modelled)),
        ("upstream_behaviour", json!(t.upstream_behaviour)),
    ];
    for (key, value) in small {
        v.insert(key, value);
    }
    // What the table and the inspector show, from the same presentation model:
    // competition ranks (equal totals share a rank, [`AnswerJson`] adds them) and
    // the rejection groups (each rejected node in exactly one, largest first).
    let causes = view.causes.as_ref();
    v.insert_groups(
        "rejection_groups",
        view.summary
            .iter()
            .filter(|g| g.kind != GroupKind::Feasible)
            .map(|g| (g, causes.map(|c| c.group(view, g)))),
    );
    // With all-filters data: every plugin's rejections, grouped as the first ones
    // are (a node in several groups), with their causes when the view has them.
    if t.filter_all.is_some() {
        v.insert_groups(
            "all_filter_groups",
            view.all_groups
                .iter()
                .map(|g| (g, causes.map(|c| c.all_group(view, g)))),
        );
    }
    // Only a pod with claims gets the key (from a view with causes): every other
    // answer keeps its shape.
    let claims = causes.map(Causes::claims).unwrap_or_default();
    if !claims.is_empty() {
        v.insert("claims", json!(claims));
    }
    if let Some(node) = &t.bound_to {
        v.insert("bound_to", json!(node));
    }
    v
}

/// The JSON of an [`Answer`], as a `Value` ([`answer_json_of`] writes it without
/// building one).
pub fn answer_json(t: &Trace, answer: &Answer) -> Value {
    answer_json_of(t, answer).to_value()
}

/// [`trace_json`] of the answer's view, with `needs` when the pod was in the
/// cluster, and `realScheduler` when the source records what the real scheduler
/// said (`null` when it said nothing).
pub fn answer_json_of<'a>(t: &'a Trace, answer: &'a Answer) -> AnswerJson<'a> {
    let mut v = trace_json(t, &answer.view);
    if let Some(n) = &answer.needs {
        v.insert("needs", needs_json(n));
    }
    if let Some(r) = &answer.release {
        v.insert(
            "kube_version",
            json!({
                "version": r.release.version.to_string(),
                "replays": r.release.version.resolved().to_string(),
                "source": r.release.source,
                "from": r.release.source.phrase(),
                "notes": r.notes,
            }),
        );
    }
    if let Some(r) = &answer.recorded {
        v.insert("recorded", recorded_json(r));
    }
    let word = match &answer.word {
        RecordedWord::NotRecorded => return v,
        RecordedWord::Silent => Value::Null,
        RecordedWord::Said(w) => json!({
            "from": w.from, "message": w.message, "differs": w.differs,
            "count": w.count,
            "lastSeen": w.last_seen.map(|t| t.to_string()),
        }),
    };
    v.insert("realScheduler", word);
    v
}

/// A snapshot's record (the `recorded` key): the real scheduler's recorded word
/// beside the replay (`null` when the snapshot records none) and what the snapshot
/// lacks for the pod. Live answers keep `realScheduler` as before.
pub fn recorded_json(r: &Recorded) -> Value {
    let word = r.word.as_ref().map(|w| {
        json!({
            "from": w.word.from,
            "reason": w.reason,
            "message": w.word.message,
            "count": w.word.count,
            "at": w.at.map(|t| t.to_string()),
            "ageBeforeSnapshotSeconds": w.age_secs,
            "differs": w.word.differs,
            "likelyCauses": w.causes,
        })
    });
    json!({
        "word": word,
        "complete": r.completeness.is_complete(),
        "missing": r.completeness.missing,
    })
}

/// The pod's own needs (the `needs` key): every field, set or not, so the shape is
/// the same for every pod; the texts are those the table and the inspector print.
pub fn needs_json(n: &PodNeeds) -> Value {
    let amounts =
        |list: &[(String, String)]| -> BTreeMap<String, String> { list.iter().cloned().collect() };
    json!({
        "requests": amounts(&n.requests),
        "overhead": amounts(&n.overhead),
        "node_selector": n.node_selector,
        "node_affinity": {
            "required": n.required_node_affinity,
            "preferred": n.preferred_node_affinity,
        },
        "pod_affinity": {
            "required": n.required_pod_affinity,
            "preferred": n.preferred_pod_affinity,
        },
        "pod_anti_affinity": {
            "required": n.required_pod_anti_affinity,
            "preferred": n.preferred_pod_anti_affinity,
        },
        "tolerations": n.tolerations,
        "topology_spread_constraints": n.topology_spread,
        "host_ports": n.host_ports,
        "volumes": n.volumes,
        "resource_claims": n.resource_claims,
        "priority": n.priority,
        "priority_class": n.priority_class,
        "preemption_policy": n.preemption_policy,
        "scheduling_gates": n.scheduling_gates,
        "scheduler_name": n.scheduler_name,
    })
}

fn plugin_result(r: &PluginResult) -> Value {
    json!({"plugin": r.plugin, "code": r.code.as_str(), "reasons": r.reasons})
}

#[cfg(test)]
mod tests {
    use super::write_pretty;
    use serde_json::json;

    #[test]
    fn c1_bidi_and_zero_width_characters_are_escaped() {
        let v = json!({"name\u{202e}": "a\u{9b}2J\u{85}\u{7f}\x1b b\u{200b}\u{feff}\u{2066}é✓\n"});
        let mut out = Vec::new();
        write_pretty(&mut out, &v).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text,
            "{\n  \"name\\u202e\": \"a\\u009b2J\\u0085\\u007f\\u001b b\\u200b\\ufeff\\u2066é✓\\n\"\n}"
        );
        // The same value once parsed.
        assert_eq!(serde_json::from_str::<serde_json::Value>(&text).unwrap(), v);
        // Output is otherwise serde_json's own.
        let plain = json!({"a": [1, {"b": null}], "c": "ü"});
        let mut out = Vec::new();
        write_pretty(&mut out, &plain).unwrap();
        assert_eq!(out, serde_json::to_vec_pretty(&plain).unwrap());
    }
}
