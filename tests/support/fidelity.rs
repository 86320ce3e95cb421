//! The comparison of a fidelity scenario's answer with the real scheduler's, shared by
//! `tests/fidelity.rs` (v1.35) and `tests/fidelity_versions.rs` (one answer per
//! release), as `tests/fidelity/README.md` defines it; and the list of the scenarios.
#![allow(dead_code)]

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde_json::Value;

/// Each per-release answer file and the exact release that wrote it.
pub const RELEASES: [(&str, &str); 5] = [
    ("expected-1.32.json", "1.32.0"),
    ("expected-1.33.json", "1.33.3"),
    ("expected-1.34.json", "1.34.1"),
    ("expected-1.34.7.json", "1.34.7"),
    ("expected-1.35.json", "1.35.4"),
];

/// Every scenario directory of `tests/fidelity` (those with an `expected.json`), in
/// name order.
pub fn scenario_dirs() -> Vec<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fidelity");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("expected.json").exists())
        .collect();
    dirs.sort();
    dirs
}

/// Differences between expected and actual, as readable lines. Only the fields
/// present in `expected` are compared (the DRA scenarios carry only measured ones).
pub fn compare(expected: &Value, actual: &Value) -> Vec<String> {
    let mut diffs = Vec::new();
    let present = |key: &str| expected.get(key).is_some();
    for key in [
        "pod",
        "nodes_total",
        "prefilter",
        "filter",
        "scores",
        "total",
        "fit_error",
    ] {
        // Answers without raw scores (tests/fidelity-versions) compare the rest.
        let actual_value = if key == "scores" && !has_raw_scores(&expected[key]) {
            without_raw_scores(&actual[key])
        } else {
            actual[key].clone()
        };
        if present(key) && expected[key] != actual_value {
            diffs.push(format!(
                "{key}:\n  expected {}\n  actual   {}",
                expected[key], actual_value
            ));
        }
    }
    // best_nodes: as a set (order of ties is not meaningful).
    let set = |v: &Value| -> BTreeSet<String> {
        v.as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s.as_str().map(String::from))
            .collect()
    };
    if present("best_nodes") && set(&expected["best_nodes"]) != set(&actual["best_nodes"]) {
        diffs.push(format!(
            "best_nodes: expected {} actual {}",
            expected["best_nodes"], actual["best_nodes"]
        ));
    }
    // filter_all: Success entries may be omitted; every other entry must match.
    let empty = serde_json::Map::new();
    let e_all = expected["filter_all"].as_object().unwrap_or(&empty);
    let a_all = if present("filter_all") {
        actual["filter_all"].as_object().unwrap_or(&empty)
    } else {
        &empty
    };
    let nodes: BTreeSet<&String> = e_all.keys().chain(a_all.keys()).collect();
    for node in nodes {
        let e = e_all.get(node).and_then(Value::as_object).unwrap_or(&empty);
        let a = a_all.get(node).and_then(Value::as_object).unwrap_or(&empty);
        let plugins: BTreeSet<&String> = e.keys().chain(a.keys()).collect();
        for p in plugins {
            let ev = e.get(p);
            let av = a.get(p);
            let is_success = |v: Option<&Value>| v.is_none_or(|v| v["code"] == "Success");
            if is_success(ev) && is_success(av) {
                continue;
            }
            if ev != av {
                diffs.push(format!(
                    "filter_all[{node}][{p}]: expected {} actual {}",
                    ev.map_or("-".into(), Value::to_string),
                    av.map_or("-".into(), Value::to_string)
                ));
            }
        }
    }
    // postfilter: victims compared as a set.
    let (ep, ap) = (&expected["postfilter"], &actual["postfilter"]);
    if present("postfilter") && ep.is_null() != ap.is_null() {
        diffs.push(format!("postfilter: expected {ep} actual {ap}"));
    } else if present("postfilter") && !ep.is_null() {
        for k in ["nominated_node", "message"] {
            if ep[k] != ap[k] {
                diffs.push(format!(
                    "postfilter.{k}: expected {} actual {}",
                    ep[k], ap[k]
                ));
            }
        }
        if set(&ep["victims"]) != set(&ap["victims"]) {
            diffs.push(format!(
                "postfilter.victims: expected {} actual {}",
                ep["victims"], ap["victims"]
            ));
        }
    }
    diffs
}

/// Whether any plugin's scores in `scores` carry `raw`.
fn has_raw_scores(scores: &Value) -> bool {
    scores
        .as_object()
        .is_some_and(|m| m.values().any(|p| p.get("raw").is_some()))
}

/// `scores` with every plugin's `raw` left out.
fn without_raw_scores(scores: &Value) -> Value {
    let mut v = scores.clone();
    if let Some(m) = v.as_object_mut() {
        for p in m.values_mut() {
            if let Some(p) = p.as_object_mut() {
                p.remove("raw");
            }
        }
    }
    v
}
