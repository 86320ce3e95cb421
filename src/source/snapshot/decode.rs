//! One object's body decoded into its k8s-openapi type and the model, with errors
//! pointing at file, document, item and line.

use k8s_openapi::api::apps::v1 as apps;
use k8s_openapi::api::core::v1 as core;
use k8s_openapi::api::node::v1 as nodev1;
use k8s_openapi::api::policy::v1 as policy;
use k8s_openapi::api::scheduling::v1 as scheduling;
use k8s_openapi::api::storage::v1 as storage;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::text::line_col;
use super::yaml::{is_marker, never_read, strip_location};
use crate::model::{FieldError, Node, Pod, PodGroup, dra};
use crate::source::convert::{self};
use crate::source::lean_pod::LeanPod;
use crate::source::{Origin, SnapshotError};

/// Decode an object of any kind; a missing kind is an error.
pub(super) fn decode_any(
    kind: Option<&str>,
    api_version: Option<&str>,
    body: &Body<'_>,
    loc: &Loc<'_>,
    file_idx: usize,
) -> Result<Decoded, SnapshotError> {
    let Some(kind) = kind.filter(|k| !k.is_empty()) else {
        let (ns, name) = body.name();
        // `kind: null` or `kind: 5` is there but not a kind: say what was found.
        let found = match body {
            Body::Value(v) => v.get("kind").cloned(),
            Body::Json(s) => serde_json::from_str::<Value>(s)
                .ok()
                .and_then(|v| v.get("kind").cloned()),
        };
        if let Some(found) = found.filter(|v| !v.is_string()) {
            return Err(SnapshotError::InvalidObject {
                at: loc.field_origin("kind"),
                object: object_name("object", ns.as_deref(), name.as_deref()),
                field: Some("kind".into()),
                message: format!(
                    "expected the object's kind as a string (such as Pod), found {found}"
                ),
            });
        }
        return Err(SnapshotError::MissingKind {
            at: loc.origin(),
            name: name.map(|n| match ns {
                Some(ns) => format!("{ns}/{n}"),
                None => n,
            }),
        });
    };
    decode_object(kind, api_version, body, loc, file_idx)
}

// ---------------------------------------------------------------------------------
// One object's body and its typed decoding

pub(super) enum Body<'a> {
    /// The object's own JSON text.
    Json(&'a str),
    Value(Value),
}

pub(super) struct DecodeError {
    pub(super) path: Option<String>,
    pub(super) message: String,
    /// Line/column inside the body (JSON only).
    pub(super) line: Option<u64>,
    pub(super) column: Option<u64>,
}

pub(super) fn path_string(p: &serde_path_to_error::Path) -> Option<String> {
    let s = p.to_string();
    (s != "." && !s.is_empty()).then_some(s)
}

/// The last instant the timestamp type holds (it keeps a day's margin for offsets
/// below the year 10000), to the second.
pub(super) const LATEST_TIMESTAMP: &str = "9999-12-30T22:00:00Z";

/// Replace timestamps later than [`LATEST_TIMESTAMP`] (valid RFC 3339, such as
/// `9999-12-31T23:59:59Z`, which the API server accepts) by it. Whether any was
/// replaced. Ordering by such a time moves by at most a day, in the year 9999.
pub(super) fn clamp_far_timestamps(v: &mut Value) -> bool {
    match v {
        Value::String(s) => {
            let far = s.len() >= LATEST_TIMESTAMP.len() - 1
                && s.starts_with("9999-12-3")
                && matches!(s.get(8..10), Some("30" | "31"))
                && s.as_str() > &LATEST_TIMESTAMP[..LATEST_TIMESTAMP.len() - 1];
            if far {
                *s = LATEST_TIMESTAMP.to_string();
            }
            far
        }
        Value::Array(a) => a
            .iter_mut()
            .fold(false, |any, x| clamp_far_timestamps(x) | any),
        Value::Object(o) => o
            .values_mut()
            .fold(false, |any, x| clamp_far_timestamps(x) | any),
        _ => false,
    }
}

impl Body<'_> {
    /// The body with `apiVersion` set to `api_version` (an older version read as the
    /// current one: the typed decoder checks the field).
    pub(super) fn at_api_version(&self, api_version: &str) -> Body<'static> {
        let mut v = match self {
            Body::Json(s) => serde_json::from_str::<Value>(s).unwrap_or(Value::Null),
            Body::Value(v) => v.clone(),
        };
        if let Some(o) = v.as_object_mut() {
            o.insert("apiVersion".into(), Value::String(api_version.into()));
        }
        Body::Value(v)
    }

    /// [`Body::decode`], an older apiVersion of the same schema (`older`) read as
    /// `current`.
    pub(super) fn decode_as<T: DeserializeOwned>(
        &self,
        older: bool,
        current: &str,
    ) -> Result<T, DecodeError> {
        if older {
            self.at_api_version(current).decode()
        } else {
            self.decode()
        }
    }

    pub(super) fn decode<T: DeserializeOwned>(&self) -> Result<T, DecodeError> {
        self.decode_exact().or_else(|e| {
            // Only a timestamp past the type's range is worth a second attempt.
            if !e.message.contains("timestamp") {
                return Err(e);
            }
            let mut v = match self {
                Body::Json(s) => match serde_json::from_str::<Value>(s) {
                    Ok(v) => v,
                    Err(_) => return Err(e),
                },
                Body::Value(v) => v.clone(),
            };
            if !clamp_far_timestamps(&mut v) {
                return Err(e);
            }
            Body::Value(v).decode_exact()
        })
    }

    pub(super) fn decode_exact<T: DeserializeOwned>(&self) -> Result<T, DecodeError> {
        match self {
            Body::Json(s) => serde_json::from_str::<T>(s).map_err(|_| {
                // Again, slowly, to learn the field path.
                let mut de = serde_json::Deserializer::from_str(s);
                match serde_path_to_error::deserialize::<_, T>(&mut de) {
                    Ok(_) => DecodeError {
                        path: None,
                        message: "invalid object".into(),
                        line: None,
                        column: None,
                    },
                    Err(e) => {
                        let path = path_string(e.path());
                        let inner = e.into_inner();
                        DecodeError {
                            path,
                            line: Some(inner.line() as u64),
                            column: Some(inner.column() as u64),
                            message: strip_location(inner.to_string()),
                        }
                    }
                }
            }),
            Body::Value(v) => {
                T::deserialize(v).map_err(|_| match serde_path_to_error::deserialize::<_, T>(v) {
                    Ok(_) => DecodeError {
                        path: None,
                        message: "invalid object".into(),
                        line: None,
                        column: None,
                    },
                    Err(e) => DecodeError {
                        path: path_string(e.path()),
                        message: yaml_hint(e.into_inner().to_string()),
                        line: None,
                        column: None,
                    },
                })
            }
        }
    }

    /// `(namespace, name)` read leniently, for messages about objects that did not
    /// decode.
    pub(super) fn name(&self) -> (Option<String>, Option<String>) {
        #[derive(Deserialize, Default)]
        struct Meta {
            #[serde(default)]
            metadata: Option<Value>,
        }
        let meta = match self {
            Body::Json(s) => serde_json::from_str::<Meta>(s)
                .ok()
                .and_then(|m| m.metadata),
            Body::Value(v) => v.get("metadata").cloned(),
        };
        let get = |k: &str| {
            meta.as_ref()
                .and_then(|m| m.get(k))
                .and_then(|v| v.as_str())
                .map(str::to_string)
        };
        (get("namespace"), get("name"))
    }
}

/// YAML reads unquoted `1.10` or `true` as a number or boolean; say how to keep text.
pub(super) fn yaml_hint(msg: String) -> String {
    if msg.starts_with("invalid type: ") && msg.ends_with("expected a string") {
        format!("{msg} (quote the value in YAML to keep it as text)")
    } else {
        msg
    }
}

/// Where an object is, resolved to an [`Origin`] only when something is wrong.
#[derive(Clone, Copy)]
pub(super) struct Loc<'a> {
    pub(super) file: &'a str,
    pub(super) text: &'a str,
    pub(super) document: usize,
    pub(super) item: Option<usize>,
    /// Items are elements of a bare JSON array.
    pub(super) array: bool,
    pub(super) start: Start,
}

#[derive(Clone, Copy)]
pub(super) enum Start {
    /// Byte offset of the object's JSON text in the file.
    Offset(usize),
    Line(Option<u64>),
}

impl Loc<'_> {
    pub(super) fn origin(&self) -> Box<Origin> {
        let (line, column) = match self.start {
            Start::Offset(o) => {
                let (l, c) = line_col(self.text, o);
                (Some(l), Some(c))
            }
            Start::Line(l) => (l, None),
        };
        Box::new(Origin {
            file: self.file.to_string(),
            document: Some(self.document),
            item: self.item,
            array: self.array,
            line,
            column,
        })
    }

    /// The line of the field at `path` (`spec.containers[1].resources.requests.cpu`) in
    /// a YAML object's text, found by following its keys and list indexes down from
    /// the object's first line; the object's own line when the text does not show it
    /// plainly. Keys may hold dots (`example.com/gpu`); the search ends where the
    /// object does (the next document or List item).
    pub(super) fn field_origin(&self, path: &str) -> Box<Origin> {
        let mut o = self.origin();
        if let Start::Line(Some(start)) = self.start
            && let Some(line) = find_field_line(self.text, start, self.item.is_some(), path)
        {
            o.line = Some(line);
        }
        o
    }

    /// The position of an error found at `line`/`column` inside the object's body.
    pub(super) fn origin_at(&self, line: Option<u64>, column: Option<u64>) -> Box<Origin> {
        let mut o = self.origin();
        if let (Start::Offset(off), Some(l), Some(c)) = (self.start, line, column) {
            let (l0, c0) = line_col(self.text, off);
            o.line = Some((l0 + l).saturating_sub(1));
            o.column = Some(if l <= 1 {
                (c0 + c).saturating_sub(1)
            } else {
                c
            });
        }
        o
    }

    pub(super) fn compact(&self, file_idx: usize) -> CompactLoc {
        CompactLoc {
            file: file_idx as u32,
            document: self.document as u32,
            item: self.item.map(|i| i as u32),
            array: self.array,
        }
    }
}

/// See [`Loc::field_origin`]. `start` is the object's first line (1-based).
pub(super) fn find_field_line(text: &str, start: u64, item: bool, path: &str) -> Option<u64> {
    let lines: Vec<(u64, &str)> = (1u64..)
        .zip(text.lines())
        .skip(start.saturating_sub(1) as usize)
        .enumerate()
        .take_while(|(k, (_, l))| {
            *k == 0 || !(is_marker(l, "---") || is_marker(l, "...") || (item && l.starts_with('-')))
        })
        .map(|(_, x)| x)
        .collect();
    let spaces = |l: &str| l.len() - l.trim_start_matches(' ').len();
    // Column of a line's key, after any `- ` of a list entry.
    let key_col = |l: &str| l.len() - l.trim_start_matches([' ', '-']).len();
    let blank = |l: &str| {
        let t = l.trim();
        t.is_empty() || t.starts_with('#')
    };
    // The lines below `k` that belong to the key on it (a compact list may sit at
    // the key's own column).
    let key_block_end = |k: usize, end: usize| {
        let c = key_col(lines[k].1);
        (k + 1..end)
            .find(|&m| {
                let l = lines[m].1;
                !blank(l) && (spaces(l) < c || (spaces(l) == c && !l.trim_start().starts_with('-')))
            })
            .unwrap_or(end)
    };
    let key_at = |l: &str, key: &str| {
        let t = l
            .trim_start_matches([' ', '-'])
            .trim_start_matches(['"', '\'']);
        t.strip_prefix(key)
            .is_some_and(|rest| rest.trim_start_matches(['"', '\'']).starts_with(':'))
            || ["{", " ", ","]
                .iter()
                .any(|p| l.contains(&format!("{p}{key}:")))
    };
    let segments: Vec<&str> = path.split('.').collect();
    let (mut from, mut end, mut i) = (0usize, lines.len(), 0usize);
    let mut found = None;
    while i < segments.len() {
        // The longest run of segments that is one key (`example.com/gpu`).
        let mut step = None;
        for j in (i + 1..=segments.len()).rev() {
            let joined = segments[i..j].join(".");
            let (key, index) = match joined.strip_suffix(']').and_then(|j| j.rsplit_once('[')) {
                Some((k, n)) => (k.to_string(), Some(n.parse::<usize>().ok()?)),
                None if joined.contains('[') => continue,
                None => (joined.clone(), None),
            };
            if let Some(k) = (from..end).find(|&k| key_at(lines[k].1, &key)) {
                step = Some((j, k, index));
                break;
            }
        }
        let (j, k, index) = step?;
        let block_end = key_block_end(k, end);
        let (mut at, mut stop) = (k, block_end);
        if let Some(n) = index {
            // The n-th `- ` entry of the key's block, at the first entry's column.
            let dashes: Vec<usize> = (k + 1..block_end)
                .filter(|&m| lines[m].1.trim_start().starts_with('-'))
                .collect();
            let column = dashes.first().map(|&m| spaces(lines[m].1));
            let entries: Vec<usize> = dashes
                .into_iter()
                .filter(|&m| Some(spaces(lines[m].1)) == column)
                .collect();
            let m = *entries.get(n)?;
            let d = spaces(lines[m].1);
            at = m;
            stop = (m + 1..block_end)
                .find(|&x| !blank(lines[x].1) && spaces(lines[x].1) <= d)
                .unwrap_or(block_end);
        }
        found = Some(lines[at].0);
        // The next key may share the line (flow style or `- key:`).
        from = at;
        end = stop.max(at + 1);
        i = j;
    }
    found
}

/// Enough to name a pod's place in errors raised after all files are read.
#[derive(Clone, Copy, Debug)]
pub(super) struct CompactLoc {
    pub(super) file: u32,
    pub(super) document: u32,
    pub(super) item: Option<u32>,
    pub(super) array: bool,
}

pub(super) fn object_name(kind: &str, namespace: Option<&str>, name: Option<&str>) -> String {
    // Namespaced objects without a namespace land in `default`, as with kubectl.
    let namespace = namespace.or(namespaced(kind).then_some("default"));
    match (namespace, name) {
        (Some(ns), Some(n)) => format!("{kind} {ns}/{n}"),
        (None, Some(n)) => format!("{kind} {n}"),
        _ => kind.to_string(),
    }
}

// ---------------------------------------------------------------------------------
// Kinds

/// The apiVersion each kind is read at.
pub(super) fn expected_api_version(kind: &str) -> Option<&'static str> {
    crate::source::kinds::lookup(kind).map(|k| k.api_version)
}

/// An older apiVersion of `kind` whose schema is the one read, so it loads as is.
/// policy/v1beta1 differs from v1 only in what an empty selector matches (nothing,
/// where v1 matches every pod), and the scheduler's preemption skips a PDB with an
/// empty selector either way.
pub(super) fn older_same_schema(kind: &str, api_version: &str) -> bool {
    matches!(
        (kind, api_version),
        ("PriorityClass", "scheduling.k8s.io/v1beta1") | ("PodDisruptionBudget", "policy/v1beta1")
    )
}

pub(super) fn namespaced(kind: &str) -> bool {
    crate::source::kinds::namespaced(kind)
}

pub(super) fn api_group(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(g, _)| g)
}

pub(super) struct PodEntry {
    pub(super) pod: Pod,
    /// Kept only for pods naming a RuntimeClass without `spec.overhead`: the class's
    /// overhead enters the requests, so the pod is converted again once classes are
    /// known.
    pub(super) raw: Option<Box<core::Pod>>,
    pub(super) explicit_priority: bool,
    pub(super) explicit_policy: bool,
    pub(super) loc: CompactLoc,
}

impl PodEntry {
    fn new(c: convert::ConvertedPod, raw: Box<core::Pod>, loc: CompactLoc) -> Box<Self> {
        Box::new(PodEntry {
            explicit_priority: c.explicit_priority,
            explicit_policy: c.explicit_policy,
            raw: c.needs_overhead.then_some(raw),
            pod: c.pod,
            loc,
        })
    }
}

pub(super) enum Decoded {
    Skip(String),
    /// A pod that ran to completion: `namespace/name` and its phase.
    TerminalPod(String, String),
    /// A node and its kubelet's version (`status.nodeInfo.kubeletVersion`).
    Node(Box<Node>, Option<String>),
    Pod(Box<PodEntry>),
    PersistentVolume(Box<core::PersistentVolume>),
    PersistentVolumeClaim(Box<core::PersistentVolumeClaim>),
    StorageClass(Box<storage::StorageClass>),
    CSINode(Box<storage::CSINode>),
    CSIDriver(Box<storage::CSIDriver>),
    VolumeAttachment(Box<storage::VolumeAttachment>),
    CSIStorageCapacity(Box<storage::CSIStorageCapacity>),
    Namespace(Box<core::Namespace>),
    /// `true` when read at policy/v1beta1.
    PodDisruptionBudget(Box<policy::PodDisruptionBudget>, bool),
    /// `true` when read at scheduling.k8s.io/v1beta1.
    PriorityClass(Box<scheduling::PriorityClass>, bool),
    Service(Box<core::Service>),
    ReplicaSet(Box<apps::ReplicaSet>),
    StatefulSet(Box<apps::StatefulSet>),
    ReplicationController(Box<core::ReplicationController>),
    RuntimeClass(Box<nodev1::RuntimeClass>),
    PodGroup(Box<PodGroup>),
    DeviceClass(Box<dra::DeviceClass>),
    ResourceSlice(Box<dra::ResourceSlice>),
    ResourceClaim(Box<dra::ResourceClaim>),
    ResourceClaimTemplate(Box<dra::ResourceClaimTemplate>),
    /// A FailedScheduling event: the pod's `namespace/name` and what it says.
    Event(Box<(String, crate::model::recorded::SchedulingEvent)>),
    /// What an OpenShift object says about the cluster's scheduler.
    Fact(super::dumps::Fact),
}

/// Decode one object. Pure, so it could run on any thread.
pub(super) fn decode_object(
    kind: &str,
    api_version: Option<&str>,
    body: &Body<'_>,
    loc: &Loc<'_>,
    file_idx: usize,
) -> Result<Decoded, SnapshotError> {
    if never_read(kind) {
        return Ok(Decoded::Skip(kind.to_string()));
    }
    // Counted as an unknown kind it would make an empty cluster: a likely mix-up of
    // --snapshot and --config.
    if kind == crate::config::v1::KIND {
        return Err(SnapshotError::InvalidObject {
            at: loc.origin(),
            object: kind.to_string(),
            field: None,
            message:
                "this is a scheduler configuration, not a cluster object; pass it with --config"
                    .into(),
        });
    }
    if super::events::is_event(kind, api_version) {
        return Ok(super::events::decode_event(body));
    }
    if super::dumps::fact_kind(kind, api_version) {
        return Ok(super::dumps::decode_fact(kind, body));
    }
    let Some(expected) = expected_api_version(kind) else {
        return Ok(Decoded::Skip(kind.to_string()));
    };
    // scheduling.k8s.io/v1beta1 PriorityClass has v1's schema (still printed by old
    // clusters and tools); read it as v1 and say so.
    let older = api_version.is_some_and(|av| older_same_schema(kind, av));
    if let Some(av) = api_version
        && av != expected
        && !older
    {
        if api_group(av) != api_group(expected) {
            // Another API group's kind of the same name (a Knative Service, say).
            return Ok(Decoded::Skip(format!("{kind} ({av})")));
        }
        let (ns, name) = body.name();
        return Err(SnapshotError::UnsupportedApiVersion {
            at: loc.origin(),
            object: object_name(kind, ns.as_deref(), name.as_deref()),
            kind: kind.to_string(),
            api_version: av.to_string(),
            expected,
        });
    }
    decode_known(kind, expected, older, body, loc, file_idx)
}

/// Decode an object of a kind the model reads, at its expected API version (or, with
/// `older`, an older one of the same schema).
fn decode_known(
    kind: &str,
    expected: &'static str,
    older: bool,
    body: &Body<'_>,
    loc: &Loc<'_>,
    file_idx: usize,
) -> Result<Decoded, SnapshotError> {
    let bad_body = |e: DecodeError| {
        let (ns, name) = body.name();
        SnapshotError::InvalidObject {
            at: loc.origin_at(e.line, e.column),
            object: object_name(kind, ns.as_deref(), name.as_deref()),
            field: e.path,
            message: e.message,
        }
    };
    let bad_field = |meta: &ObjectMeta, e: FieldError| SnapshotError::InvalidObject {
        at: loc.field_origin(&e.path),
        object: object_name(kind, meta.namespace.as_deref(), meta.name.as_deref()),
        field: Some(e.path),
        message: e.message,
    };
    // Every object needs a name: it is the key the model stores it under.
    let named = |meta: &ObjectMeta| match meta.name.as_deref() {
        Some(n) if !n.is_empty() => Ok(()),
        _ => Err(bad_field(meta, FieldError::missing("metadata.name"))),
    };

    macro_rules! plain {
        ($variant:ident, $ty:ty) => {{
            let o: $ty = body.decode().map_err(bad_body)?;
            named(&o.metadata)?;
            Decoded::$variant(Box::new(o))
        }};
    }

    Ok(match kind {
        "Node" => {
            let n: core::Node = body.decode().map_err(bad_body)?;
            named(&n.metadata)?;
            let node = Node::from_k8s(&n).map_err(|e| bad_field(&n.metadata, e))?;
            let kubelet = n
                .status
                .as_ref()
                .and_then(|s| s.node_info.as_ref())
                .map(|i| i.kubelet_version.clone())
                .filter(|v| !v.is_empty());
            Decoded::Node(Box::new(node), kubelet)
        }
        "Pod" => {
            // Only the scheduler's fields are built (see `LeanPod`).
            let p: Box<core::Pod> = body.decode::<LeanPod>().map_err(bad_body)?.0;
            named(&p.metadata)?;
            let Some(c) = convert::convert_pod(&p).map_err(|e| bad_field(&p.metadata, e))? else {
                let (ns, name) = (
                    p.metadata.namespace.as_deref().unwrap_or("default"),
                    p.metadata.name.as_deref().unwrap_or_default(),
                );
                let phase = p.status.as_ref().and_then(|s| s.phase.clone());
                return Ok(Decoded::TerminalPod(
                    format!("{ns}/{name}"),
                    phase.unwrap_or_default(),
                ));
            };
            Decoded::Pod(PodEntry::new(c, p, loc.compact(file_idx)))
        }
        "PersistentVolume" => plain!(PersistentVolume, core::PersistentVolume),
        "PersistentVolumeClaim" => plain!(PersistentVolumeClaim, core::PersistentVolumeClaim),
        "StorageClass" => {
            let mut sc: storage::StorageClass = body.decode().map_err(bad_body)?;
            named(&sc.metadata)?;
            convert::storage_class_defaults(&mut sc);
            Decoded::StorageClass(Box::new(sc))
        }
        "CSINode" => plain!(CSINode, storage::CSINode),
        "CSIDriver" => plain!(CSIDriver, storage::CSIDriver),
        "VolumeAttachment" => plain!(VolumeAttachment, storage::VolumeAttachment),
        "CSIStorageCapacity" => plain!(CSIStorageCapacity, storage::CSIStorageCapacity),
        "Namespace" => {
            let mut ns: core::Namespace = body.decode().map_err(bad_body)?;
            named(&ns.metadata)?;
            convert::namespace_defaults(&mut ns);
            Decoded::Namespace(Box::new(ns))
        }
        "PodDisruptionBudget" => {
            let pdb: policy::PodDisruptionBudget =
                body.decode_as(older, expected).map_err(bad_body)?;
            named(&pdb.metadata)?;
            Decoded::PodDisruptionBudget(Box::new(pdb), older)
        }
        "PriorityClass" => {
            let mut pc: scheduling::PriorityClass =
                body.decode_as(older, expected).map_err(bad_body)?;
            named(&pc.metadata)?;
            convert::priority_class_defaults(&mut pc);
            Decoded::PriorityClass(Box::new(pc), older)
        }
        "Service" => plain!(Service, core::Service),
        "ReplicaSet" => plain!(ReplicaSet, apps::ReplicaSet),
        "StatefulSet" => plain!(StatefulSet, apps::StatefulSet),
        "ReplicationController" => plain!(ReplicationController, core::ReplicationController),
        "RuntimeClass" => {
            let rc: nodev1::RuntimeClass = body.decode().map_err(bad_body)?;
            named(&rc.metadata)?;
            convert::runtime_class_check(&rc).map_err(|e| bad_field(&rc.metadata, e))?;
            Decoded::RuntimeClass(Box::new(rc))
        }
        "PodGroup" => {
            let pg: convert::PodGroupObject = body.decode().map_err(bad_body)?;
            named(&pg.metadata)?;
            let meta = pg.metadata.clone();
            let group = convert::pod_group(pg).map_err(|e| bad_field(&meta, e))?;
            Decoded::PodGroup(Box::new(group))
        }
        "DeviceClass" => {
            let mut o: dra::DeviceClass = body.decode().map_err(bad_body)?;
            named(&o.metadata)?;
            dra::device_class_defaults(&mut o);
            Decoded::DeviceClass(Box::new(o))
        }
        "ResourceSlice" => {
            let mut o: dra::ResourceSlice = body.decode().map_err(bad_body)?;
            named(&o.metadata)?;
            dra::resource_slice_check(&mut o).map_err(|e| bad_field(&o.metadata, e))?;
            Decoded::ResourceSlice(Box::new(o))
        }
        "ResourceClaim" => {
            let mut o: dra::ResourceClaim = body.decode().map_err(bad_body)?;
            named(&o.metadata)?;
            dra::resource_claim_check(&mut o).map_err(|e| bad_field(&o.metadata, e))?;
            Decoded::ResourceClaim(Box::new(o))
        }
        "ResourceClaimTemplate" => {
            let mut o: dra::ResourceClaimTemplate = body.decode().map_err(bad_body)?;
            named(&o.metadata)?;
            dra::resource_claim_template_check(&mut o).map_err(|e| bad_field(&o.metadata, e))?;
            Decoded::ResourceClaimTemplate(Box::new(o))
        }
        _ => Decoded::Skip(kind.to_string()),
    })
}
