//! The what-if edit grammar: each [`Edit`] parses from the spelling a user types
//! (`pod.cpu=2`, `node.cordon=gen-a3`, ...) and prints back to the same spelling, so
//! a suggested edit can be pasted as a `--what-if` argument.

use std::fmt;
use std::str::FromStr;

use crate::model::Quantity;

/// A quantity as the user wrote it (kept for display) and its exact value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Qty {
    pub text: String,
    pub value: Quantity,
}

impl Qty {
    pub fn parse(text: &str) -> Option<Qty> {
        let value = Quantity::parse(text).ok().filter(|q| q.0 >= 0)?;
        Some(Qty {
            text: text.to_string(),
            value,
        })
    }
}

/// One change to the in-memory model or to the pod being explained. Nothing is ever
/// written to a cluster.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Edit {
    /// `pod.cpu=QTY`, `pod.memory=QTY`, `pod.request.RESOURCE=QTY`: the pod's
    /// effective request of `resource` (as NodeResourcesFit computes it) becomes QTY.
    /// `spelling` says which of the three forms was written.
    Request {
        resource: String,
        qty: Qty,
        spelling: RequestSpelling,
    },
    DropNodeSelector(String),
    DropNodeAffinity,
    DropPodAffinity(usize),
    DropPodAntiAffinity(usize),
    DropSpread(usize),
    /// `pod.tolerate=KEY[=VALUE]:EFFECT`: `Equal` with a value, `Exists` without.
    Tolerate {
        key: String,
        value: Option<String>,
        effect: String,
    },
    Priority(i32),
    DropGate(String),
    Cordon(String),
    Uncordon(String),
    Untaint {
        node: String,
        key: String,
        effect: Option<String>,
    },
    Label {
        node: String,
        key: String,
        value: String,
    },
    /// `node.add=N:like=NODE`.
    AddNodes {
        count: usize,
        like: String,
    },
    /// `pod.evict=NS/NAME`.
    Evict(String),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequestSpelling {
    Cpu,
    Memory,
    Generic,
}

impl Edit {
    /// Whether the edit changes the pod being explained (rather than the cluster).
    pub fn is_pod_edit(&self) -> bool {
        !matches!(
            self,
            Edit::Cordon(_)
                | Edit::Uncordon(_)
                | Edit::Untaint { .. }
                | Edit::Label { .. }
                | Edit::AddNodes { .. }
                | Edit::Evict(_)
        )
    }

    /// `pod.request.RESOURCE=QTY` in its shortest spelling (`pod.cpu=` for cpu).
    pub fn request(resource: &str, qty: Qty) -> Edit {
        let spelling = match resource {
            "cpu" => RequestSpelling::Cpu,
            "memory" => RequestSpelling::Memory,
            _ => RequestSpelling::Generic,
        };
        Edit::Request {
            resource: resource.to_string(),
            qty,
            spelling,
        }
    }
}

/// The grammar, one line per edit kind (for `--help` and error messages).
pub const GRAMMAR: &[&str] = &[
    "pod.cpu=QTY",
    "pod.memory=QTY",
    "pod.request.RESOURCE=QTY",
    "pod.drop-node-selector=KEY",
    "pod.drop-node-affinity",
    "pod.drop-pod-affinity=N",
    "pod.drop-pod-anti-affinity=N",
    "pod.drop-spread=N",
    "pod.tolerate=KEY[=VALUE]:EFFECT",
    "pod.priority=N",
    "pod.drop-gate=NAME",
    "pod.evict=NS/NAME",
    "node.cordon=NODE",
    "node.uncordon=NODE",
    "node.untaint=NODE:KEY[:EFFECT]",
    "node.label=NODE:KEY=VALUE",
    "node.add=N:like=NODE",
];

/// Why an edit could not be parsed or applied. Every variant names the edit as written.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EditError {
    #[error("what-if edit {edit:?}: expected {expected}")]
    Malformed { edit: String, expected: String },
    #[error("what-if edit {edit:?}: no {what} {name:?}{}", hint(.suggestion))]
    Unknown {
        edit: String,
        what: &'static str,
        name: String,
        suggestion: Option<String>,
    },
    #[error("what-if edit {edit:?}: {reason}")]
    NotApplicable { edit: String, reason: String },
}

fn hint(s: &Option<String>) -> String {
    s.as_ref()
        .map(|s| format!("; did you mean {s:?}?"))
        .unwrap_or_default()
}

pub const TAINT_EFFECTS: [&str; 3] = ["NoSchedule", "PreferNoSchedule", "NoExecute"];

fn malformed(edit: &str, expected: &str) -> EditError {
    EditError::Malformed {
        edit: edit.to_string(),
        expected: expected.to_string(),
    }
}

/// A label key or value part that cannot carry the grammar's separators.
fn plain(s: &str) -> bool {
    !s.is_empty() && !s.contains([':', '=', ' ', ','])
}

fn effect(edit: &str, s: &str, expected: &str) -> Result<String, EditError> {
    match TAINT_EFFECTS.iter().find(|e| e.eq_ignore_ascii_case(s)) {
        Some(e) => Ok(e.to_string()),
        None => Err(malformed(
            edit,
            &format!(
                "{expected}, with EFFECT one of {}",
                TAINT_EFFECTS.join(", ")
            ),
        )),
    }
}

impl FromStr for Edit {
    type Err = EditError;

    fn from_str(s: &str) -> Result<Edit, EditError> {
        let edit = s.trim();
        let (head, arg) = match edit.split_once('=') {
            Some((h, a)) => (h, Some(a)),
            None => (edit, None),
        };
        let need = |expected: &str| -> Result<&str, EditError> {
            arg.filter(|a| !a.is_empty())
                .ok_or_else(|| malformed(edit, expected))
        };
        let index = |expected: &str| -> Result<usize, EditError> {
            need(expected)?
                .parse::<usize>()
                .map_err(|_| malformed(edit, &format!("{expected} (N a term's 0-based index)")))
        };
        let node = |expected: &str| -> Result<String, EditError> {
            let a = need(expected)?;
            if plain(a) {
                Ok(a.to_string())
            } else {
                Err(malformed(edit, expected))
            }
        };
        let qty = |expected: &str| -> Result<Qty, EditError> {
            Qty::parse(need(expected)?).ok_or_else(|| {
                malformed(
                    edit,
                    &format!("{expected} (QTY a non-negative quantity such as 500m, 2, 4Gi)"),
                )
            })
        };
        Ok(match head {
            "pod.cpu" => Edit::Request {
                resource: "cpu".into(),
                qty: qty("pod.cpu=QTY")?,
                spelling: RequestSpelling::Cpu,
            },
            "pod.memory" => Edit::Request {
                resource: "memory".into(),
                qty: qty("pod.memory=QTY")?,
                spelling: RequestSpelling::Memory,
            },
            h if h.starts_with("pod.request.") => {
                let resource = &h["pod.request.".len()..];
                if !plain(resource) {
                    return Err(malformed(edit, "pod.request.RESOURCE=QTY"));
                }
                Edit::Request {
                    resource: resource.to_string(),
                    qty: qty("pod.request.RESOURCE=QTY")?,
                    spelling: RequestSpelling::Generic,
                }
            }
            "pod.drop-node-selector" => Edit::DropNodeSelector(node("pod.drop-node-selector=KEY")?),
            "pod.drop-node-affinity" if arg.is_none() => Edit::DropNodeAffinity,
            "pod.drop-node-affinity" => {
                return Err(malformed(edit, "pod.drop-node-affinity (no value)"));
            }
            "pod.drop-pod-affinity" => Edit::DropPodAffinity(index("pod.drop-pod-affinity=N")?),
            "pod.drop-pod-anti-affinity" => {
                Edit::DropPodAntiAffinity(index("pod.drop-pod-anti-affinity=N")?)
            }
            "pod.drop-spread" => Edit::DropSpread(index("pod.drop-spread=N")?),
            "pod.tolerate" => parse_toleration(edit, need("pod.tolerate=KEY[=VALUE]:EFFECT")?)?,
            "pod.priority" => Edit::Priority(
                need("pod.priority=N")?
                    .parse()
                    .map_err(|_| malformed(edit, "pod.priority=N (N a 32-bit integer)"))?,
            ),
            "pod.drop-gate" => Edit::DropGate(node("pod.drop-gate=NAME")?),
            "pod.evict" => {
                let a = need("pod.evict=NS/NAME")?;
                match a.split_once('/') {
                    Some((ns, name)) if plain(ns) && plain(name) && !name.contains('/') => {
                        Edit::Evict(a.to_string())
                    }
                    _ => return Err(malformed(edit, "pod.evict=NS/NAME")),
                }
            }
            "node.cordon" => Edit::Cordon(node("node.cordon=NODE")?),
            "node.uncordon" => Edit::Uncordon(node("node.uncordon=NODE")?),
            "node.untaint" => parse_untaint(edit, need("node.untaint=NODE:KEY[:EFFECT]")?)?,
            "node.label" => {
                let expected = "node.label=NODE:KEY=VALUE";
                // `head` ends at the first '=': the rest is `NODE:KEY=VALUE`.
                let (n, kv) = need(expected)?
                    .split_once(':')
                    .ok_or_else(|| malformed(edit, expected))?;
                let (k, v) = kv
                    .split_once('=')
                    .ok_or_else(|| malformed(edit, expected))?;
                if !plain(n) || !plain(k) || v.contains([':', '=', ' ', ',']) {
                    return Err(malformed(edit, expected));
                }
                Edit::Label {
                    node: n.into(),
                    key: k.into(),
                    value: v.into(),
                }
            }
            "node.add" => {
                let expected = "node.add=N:like=NODE";
                let a = need(expected)?;
                let (n, like) = a
                    .split_once(":like=")
                    .ok_or_else(|| malformed(edit, expected))?;
                let count: usize = n
                    .parse()
                    .ok()
                    .filter(|&c| c > 0)
                    .ok_or_else(|| malformed(edit, &format!("{expected} (N at least 1)")))?;
                if !plain(like) {
                    return Err(malformed(edit, expected));
                }
                Edit::AddNodes {
                    count,
                    like: like.into(),
                }
            }
            _ => {
                return Err(malformed(edit, &format!("one of: {}", GRAMMAR.join(", "))));
            }
        })
    }
}

fn parse_toleration(edit: &str, a: &str) -> Result<Edit, EditError> {
    let expected = "pod.tolerate=KEY[=VALUE]:EFFECT";
    let (kv, eff) = a
        .rsplit_once(':')
        .ok_or_else(|| malformed(edit, expected))?;
    let effect = effect(edit, eff, expected)?;
    let (key, value) = match kv.split_once('=') {
        Some((k, v)) => (k, Some(v)),
        None => (kv, None),
    };
    if !plain(key) || value.is_some_and(|v| v.contains([':', '=', ' ', ','])) {
        return Err(malformed(edit, expected));
    }
    Ok(Edit::Tolerate {
        key: key.into(),
        value: value.map(String::from),
        effect,
    })
}

fn parse_untaint(edit: &str, a: &str) -> Result<Edit, EditError> {
    let expected = "node.untaint=NODE:KEY[:EFFECT]";
    let mut parts = a.split(':');
    let (Some(node), Some(key)) = (parts.next(), parts.next()) else {
        return Err(malformed(edit, expected));
    };
    let eff = parts
        .next()
        .map(|e| effect(edit, e, expected))
        .transpose()?;
    if parts.next().is_some() || !plain(node) || !plain(key) {
        return Err(malformed(edit, expected));
    }
    Ok(Edit::Untaint {
        node: node.into(),
        key: key.into(),
        effect: eff,
    })
}

impl fmt::Display for Edit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Edit::Request {
                resource,
                qty,
                spelling,
            } => match spelling {
                RequestSpelling::Cpu => write!(f, "pod.cpu={}", qty.text),
                RequestSpelling::Memory => write!(f, "pod.memory={}", qty.text),
                RequestSpelling::Generic => write!(f, "pod.request.{resource}={}", qty.text),
            },
            Edit::DropNodeSelector(k) => write!(f, "pod.drop-node-selector={k}"),
            Edit::DropNodeAffinity => f.write_str("pod.drop-node-affinity"),
            Edit::DropPodAffinity(i) => write!(f, "pod.drop-pod-affinity={i}"),
            Edit::DropPodAntiAffinity(i) => write!(f, "pod.drop-pod-anti-affinity={i}"),
            Edit::DropSpread(i) => write!(f, "pod.drop-spread={i}"),
            Edit::Tolerate { key, value, effect } => match value {
                Some(v) => write!(f, "pod.tolerate={key}={v}:{effect}"),
                None => write!(f, "pod.tolerate={key}:{effect}"),
            },
            Edit::Priority(p) => write!(f, "pod.priority={p}"),
            Edit::DropGate(g) => write!(f, "pod.drop-gate={g}"),
            Edit::Cordon(n) => write!(f, "node.cordon={n}"),
            Edit::Uncordon(n) => write!(f, "node.uncordon={n}"),
            Edit::Untaint { node, key, effect } => match effect {
                Some(e) => write!(f, "node.untaint={node}:{key}:{e}"),
                None => write!(f, "node.untaint={node}:{key}"),
            },
            Edit::Label { node, key, value } => write!(f, "node.label={node}:{key}={value}"),
            Edit::AddNodes { count, like } => write!(f, "node.add={count}:like={like}"),
            Edit::Evict(k) => write!(f, "pod.evict={k}"),
        }
    }
}
