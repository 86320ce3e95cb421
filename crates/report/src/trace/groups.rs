//! Rejection groups: nodes sharing one (first) rejection, and every plugin's own
//! rejections with all-filters data.

use std::collections::BTreeMap;

use schedscope_engine::engine::status::Code;
use schedscope_engine::engine::trace::Trace;

use super::{FilterRow, Group, GroupKind};

pub(super) fn summarize(trace: &Trace, rows: &[FilterRow], plugins: &[String]) -> Vec<Group> {
    // (kind, plugin, code, reason): one entry per node.
    type Key = (u8, Option<String>, Option<Code>, String);
    let mut groups: BTreeMap<Key, Vec<u32>> = BTreeMap::new();
    for (i, (r, v)) in rows.iter().zip(&trace.filter).enumerate() {
        let key = if r.feasible {
            (0, None, None, "feasible".to_string())
        } else if r.excluded {
            let reason = if v.reasons.is_empty() {
                "not evaluated: outside the PreFilter node subset".to_string()
            } else {
                r.reasons.clone()
            };
            (2, None, Some(v.code), reason)
        } else {
            (1, r.plugin.clone(), Some(v.code), r.reasons.clone())
        };
        groups.entry(key).or_default().push(i as u32);
    }
    let plugin_pos = |p: &Option<String>| {
        p.as_ref()
            .and_then(|p| plugins.iter().position(|x| x == p))
            .unwrap_or(usize::MAX)
    };
    let mut out: Vec<(u8, Group)> = groups
        .into_iter()
        .map(|((k, plugin, code, reason), rows)| {
            (
                k,
                Group {
                    kind: match k {
                        0 => GroupKind::Feasible,
                        1 => GroupKind::Rejected,
                        _ => GroupKind::Excluded,
                    },
                    plugin,
                    code,
                    reason,
                    rows,
                },
            )
        })
        .collect();
    // Biggest first, then plugin order (the profile's), then reason text.
    out.sort_by(|(ka, a), (kb, b)| {
        b.rows
            .len()
            .cmp(&a.rows.len())
            .then_with(|| ka.cmp(kb))
            .then_with(|| plugin_pos(&a.plugin).cmp(&plugin_pos(&b.plugin)))
            .then_with(|| a.plugin.cmp(&b.plugin))
            .then_with(|| a.reason.cmp(&b.reason))
            .then_with(|| a.code.map(Code::as_str).cmp(&b.code.map(Code::as_str)))
    });
    out.into_iter().map(|(_, g)| g).collect()
}

/// The all-filters groups: one per (plugin, code, joined reasons) of every
/// rejection (any answer but Success and Skip) in `trace.filter_all`.
pub(super) fn summarize_all(trace: &Trace, rows: &[FilterRow], plugins: &[String]) -> Vec<Group> {
    let Some(all) = &trace.filter_all else {
        return Vec::new();
    };
    type Key = (usize, String, Code, String);
    let mut groups: BTreeMap<Key, Vec<u32>> = BTreeMap::new();
    for (i, r) in rows.iter().enumerate() {
        let Some(verdicts) = r.all.and_then(|a| all.get(a)) else {
            continue;
        };
        for res in verdicts
            .results
            .iter()
            .filter(|res| !matches!(res.code, Code::Success | Code::Skip))
        {
            let pos = plugins
                .iter()
                .position(|p| *p == res.plugin)
                .unwrap_or(usize::MAX);
            groups
                .entry((
                    pos,
                    res.plugin.to_string(),
                    res.code,
                    res.reasons.join(", "),
                ))
                .or_default()
                .push(i as u32);
        }
    }
    let mut out: Vec<Group> = groups
        .into_iter()
        .map(|((_, plugin, code, reason), rows)| Group {
            kind: GroupKind::Rejected,
            plugin: Some(plugin),
            code: Some(code),
            reason,
            rows,
        })
        .collect();
    // Biggest first; the map's order (plugin order, plugin, code, reason) among equals.
    out.sort_by_key(|g| std::cmp::Reverse(g.rows.len()));
    out
}
