//! Snapshot files → [`Cluster`].
//!
//! Input is what `kubectl get nodes,pods,pv,pvc,sc,... -A -o yaml` (or `-o json`)
//! prints: one or more files (a directory is read non-recursively, `*.yaml`, `*.yml`,
//! `*.json` in name order), each holding multi-document YAML, a `kind: List` (or a
//! typed list such as `PodList`), a stream of JSON objects or a JSON array.
//!
//! Each object is peeked at for `apiVersion`/`kind` and then deserialised straight from
//! its own text (JSON) or from the parsed YAML tree into the k8s-openapi type, then
//! converted into the scheduler's view. Secrets and ConfigMaps are never materialised.
//! JSON List items, YAML documents and groups of YAML List items are decoded on all
//! cores; results are applied in input order, so the outcome and the first error
//! reported never depend on timing.
//!
//! YAML scalars follow YAML 1.2 (only `true`/`false` are booleans) and digits with
//! leading zeros stay strings; otherwise an unquoted number where Kubernetes wants a
//! string is an error, as `kubectl apply` would report it.
//!
//! What the API server would have applied before the scheduler sees the objects
//! (priority admission, RuntimeClass overhead, StorageClass and PriorityClass
//! defaults, the namespace name label) is applied once everything is read, since a
//! PriorityClass may come after the pods that name it. Container requests from limits,
//! port defaults and node allocatable are applied by the model's `from_k8s`.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use k8s_openapi::api::apps::v1 as apps;
use k8s_openapi::api::core::v1 as core;
use k8s_openapi::api::node::v1 as nodev1;
use k8s_openapi::api::policy::v1 as policy;
use k8s_openapi::api::scheduling::v1 as scheduling;
use k8s_openapi::api::storage::v1 as storage;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::Deserialize;
use serde::de::{self, DeserializeOwned, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::convert::{self, Priorities};
use super::{LoadReport, Origin, SnapshotError};
use crate::model::{Cluster, FieldError, Node, Pod, PodGroup, dra};

/// A loaded snapshot: the cluster as the scheduler would see it, and what was read.
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    pub cluster: Cluster,
    pub report: LoadReport,
}

/// Load a snapshot file, or every `*.yaml`/`*.yml`/`*.json` file of a directory (in
/// file-name order, sub-directories not read).
pub fn load_snapshot(path: &Path) -> Result<Snapshot, SnapshotError> {
    let io = |e| SnapshotError::Io {
        path: path.to_path_buf(),
        error: e,
    };
    let meta = std::fs::metadata(path).map_err(io)?;
    let mut loader = Loader::default();
    if meta.is_dir() {
        let mut files = Vec::new();
        for entry in std::fs::read_dir(path).map_err(io)? {
            let p = entry.map_err(io)?.path();
            if p.is_file() && Format::from_name(&p.to_string_lossy()).is_some() {
                files.push(p);
            }
        }
        if files.is_empty() {
            return Err(SnapshotError::EmptyDirectory {
                dir: path.to_path_buf(),
            });
        }
        files.sort_by(|a, b| a.file_name().cmp(&b.file_name()));
        for f in files {
            let bytes = std::fs::read(&f).map_err(|e| SnapshotError::Io {
                path: f.clone(),
                error: e,
            })?;
            loader.add_bytes(&bytes, &f.display().to_string())?;
        }
    } else {
        let bytes = std::fs::read(path).map_err(io)?;
        loader.add_bytes(&bytes, &path.display().to_string())?;
    }
    loader.finish()
}

/// Load a snapshot from text; `origin_name` names it in errors and, by its extension
/// (`.json`), may select the format (otherwise it is sniffed).
pub fn load_snapshot_str(text: &str, origin_name: &str) -> Result<Snapshot, SnapshotError> {
    let mut loader = Loader::default();
    loader.report.files.push(origin_name.to_string());
    loader.report.bytes += text.len() as u64;
    loader.add_text(text, origin_name)?;
    loader.finish()
}

// ---------------------------------------------------------------------------------
// Formats and documents

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    Json,
    Yaml,
}

impl Format {
    fn from_name(name: &str) -> Option<Format> {
        let lower = name.to_ascii_lowercase();
        if lower.ends_with(".json") {
            Some(Format::Json)
        } else if lower.ends_with(".yaml") || lower.ends_with(".yml") {
            Some(Format::Yaml)
        } else {
            None
        }
    }
}

/// Decode file bytes to text: UTF-8 (with or without BOM), or UTF-16 with a BOM (what
/// PowerShell's `>` writes).
pub(crate) fn bytes_to_text<'a>(
    bytes: &'a [u8],
    file: &str,
) -> Result<Cow<'a, str>, SnapshotError> {
    let utf16 = |be: bool| {
        let units: Vec<u16> = bytes[2..]
            .chunks(2)
            .map(|c| {
                let pair = [c[0], *c.get(1).unwrap_or(&0)];
                if be {
                    u16::from_be_bytes(pair)
                } else {
                    u16::from_le_bytes(pair)
                }
            })
            .collect();
        String::from_utf16(&units).map_err(|_| SnapshotError::NotText {
            file: file.to_string(),
            offset: 0,
        })
    };
    match bytes {
        [0xEF, 0xBB, 0xBF, rest @ ..] => {
            std::str::from_utf8(rest)
                .map(Cow::Borrowed)
                .map_err(|e| SnapshotError::NotText {
                    file: file.to_string(),
                    offset: e.valid_up_to() + 3,
                })
        }
        [0xFF, 0xFE, ..] => utf16(false).map(Cow::Owned),
        [0xFE, 0xFF, ..] => utf16(true).map(Cow::Owned),
        _ => std::str::from_utf8(bytes)
            .map(Cow::Borrowed)
            .map_err(|e| SnapshotError::NotText {
                file: file.to_string(),
                offset: e.valid_up_to(),
            }),
    }
}

/// YAML reads a lone CR (old Mac line ends) as a line break; documents are split and
/// lines counted on LF, so each lone CR becomes an LF (same length: offsets hold).
fn lone_cr_to_lf(text: &str) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    let lone = |i: usize| bytes[i] == b'\r' && bytes.get(i + 1) != Some(&b'\n');
    if !(0..bytes.len()).any(lone) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find('\r') {
        out.push_str(&rest[..i]);
        let crlf = rest[i + 1..].starts_with('\n');
        out.push_str(if crlf { "\r" } else { "\n" });
        rest = &rest[i + 1..];
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// 1-based line and column (in characters) of a byte offset.
fn line_col(text: &str, offset: usize) -> (u64, u64) {
    let offset = offset.min(text.len());
    let before = text.get(..offset).unwrap_or("");
    let line = before.bytes().filter(|&b| b == b'\n').count() as u64 + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() as u64 + 1;
    (line, column)
}

/// A YAML document: its text and the line it starts on.
struct YamlChunk<'a> {
    text: &'a str,
    start_line: u64,
    /// First line holding content (not blank, comment, directive or marker).
    content_line: Option<u64>,
}

fn is_marker(line: &str, marker: &str) -> bool {
    line.strip_prefix(marker)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t', '\r']))
}

/// Split a YAML stream at `---` / `...` lines. A marker at column 0 always ends the
/// previous document (YAML forbids it inside scalars), so this is exact, and it gives
/// each document its own index and line offset even when documents are empty.
fn split_yaml(text: &str) -> Vec<YamlChunk<'_>> {
    let mut chunks = Vec::new();
    let mut start = 0usize;
    let mut start_line = 1u64;
    let mut content_line = None;
    let mut offset = 0usize;
    for (line_no, line) in (1u64..).zip(text.split_inclusive('\n')) {
        let bare = line.trim_end_matches(['\n', '\r']);
        if is_marker(bare, "---") {
            if offset > start {
                chunks.push(YamlChunk {
                    text: &text[start..offset],
                    start_line,
                    content_line,
                });
            }
            start = offset;
            start_line = line_no;
            // Content may follow the marker on the same line (`--- {a: 1}`).
            let rest = bare[3..].trim();
            content_line = (!rest.is_empty() && !rest.starts_with('#')).then_some(line_no);
        } else if is_marker(bare, "...") {
            let end = offset + line.len();
            chunks.push(YamlChunk {
                text: &text[start..end],
                start_line,
                content_line,
            });
            start = end;
            start_line = line_no + 1;
            content_line = None;
        } else if content_line.is_none() {
            let t = bare.trim_start();
            if !t.is_empty() && !t.starts_with('#') && !bare.starts_with('%') {
                content_line = Some(line_no);
            }
        }
        offset += line.len();
    }
    if offset > start {
        chunks.push(YamlChunk {
            text: &text[start..offset],
            start_line,
            content_line,
        });
    }
    chunks
}

fn yaml_options() -> serde_saphyr::Options {
    // Snapshots of large clusters are far bigger than the defaults allow (they guard
    // configuration files); alias expansion stays limited by its own ratio check.
    let budget = serde_saphyr::budget! {
        max_reader_input_bytes: None,
        max_events: usize::MAX,
        max_nodes: usize::MAX,
        max_total_scalar_bytes: usize::MAX,
        max_total_comment_bytes: usize::MAX,
        max_documents: usize::MAX,
        max_depth: 128,
        // Kubernetes output has no anchors; hand-written files use a few at most.
        max_aliases: 10_000,
        max_recorded_anchor_events: 100_000,
    };
    // YAML 1.2 booleans only: `n`, `yes` or `off` stay strings (a label value, a
    // node named `n`), and so do digits with leading zeros (an id like `0042`).
    // kubectl quotes anything ambiguous when it prints YAML.
    serde_saphyr::options! {
        budget: budget,
        with_snippet: false,
        strict_booleans: true,
        leading_zero_numbers_as_strings: true,
    }
}

/// Text an alias may add to a YAML document beyond the document's own length.
/// kubectl output has no anchors, so its expansion is the text itself; hand-written
/// files reuse a few blocks. A million-fold expansion (one large anchored scalar
/// under thousands of aliases) would otherwise be built in memory before any limit
/// trips.
const ALIAS_EXPANSION_ALLOWANCE: usize = 16 << 20;

thread_local! {
    /// Bytes the metered document may still expand to (see [`check_alias_expansion`]).
    static EXPANSION_LEFT: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Walks a YAML document without keeping anything, charging each scalar's bytes
/// (aliases replay theirs) against [`EXPANSION_LEFT`].
struct ExpansionMeter;

impl ExpansionMeter {
    fn charge<E: de::Error>(bytes: usize) -> Result<ExpansionMeter, E> {
        // A node costs at least a few bytes, so aliases of empty values count too.
        let cost = bytes.saturating_add(8);
        EXPANSION_LEFT.with(|left| match left.get().checked_sub(cost) {
            Some(rest) => {
                left.set(rest);
                Ok(ExpansionMeter)
            }
            None => Err(E::custom(EXPANSION_EXCEEDED)),
        })
    }
}

const EXPANSION_EXCEEDED: &str =
    "its aliases (*name) expand it beyond its own size plus 16 MiB; refusing to build it";

impl<'de> Deserialize<'de> for ExpansionMeter {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ExpansionMeter)
    }
}

impl<'de> Visitor<'de> for ExpansionMeter {
    type Value = ExpansionMeter;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML value")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self, E> {
        Self::charge(0)
    }
    fn visit_none<E: de::Error>(self) -> Result<Self, E> {
        Self::charge(0)
    }
    fn visit_some<D: de::Deserializer<'de>>(self, d: D) -> Result<Self, D::Error> {
        ExpansionMeter::deserialize(d)
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self, E> {
        Self::charge(0)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self, E> {
        Self::charge(8)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self, E> {
        Self::charge(8)
    }
    fn visit_i128<E: de::Error>(self, _: i128) -> Result<Self, E> {
        Self::charge(16)
    }
    fn visit_u128<E: de::Error>(self, _: u128) -> Result<Self, E> {
        Self::charge(16)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self, E> {
        Self::charge(8)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self, E> {
        Self::charge(v.len())
    }
    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Self, E> {
        Self::charge(v.len())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self, A::Error> {
        Self::charge::<A::Error>(0)?;
        while seq.next_element::<ExpansionMeter>()?.is_some() {}
        Ok(ExpansionMeter)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self, A::Error> {
        Self::charge::<A::Error>(0)?;
        while map.next_key::<ExpansionMeter>()?.is_some() {
            map.next_value::<ExpansionMeter>()?;
        }
        Ok(ExpansionMeter)
    }
}

/// Refuse a YAML document whose aliases expand it far beyond its own size, before
/// anything is built from it. A document without `&` has no anchor to expand and is
/// not walked twice.
pub(crate) fn check_alias_expansion(
    text: &str,
    options: serde_saphyr::Options,
) -> Result<(), serde_saphyr::Error> {
    if !text.contains('&') {
        return Ok(());
    }
    EXPANSION_LEFT.with(|left| left.set(text.len().saturating_add(ALIAS_EXPANSION_ALLOWANCE)));
    // Multi-document text is metered as one stream (the config and theme loaders).
    // Any other problem is left for the real parse to report in its own words.
    match serde_saphyr::from_multiple_with_options::<ExpansionMeter>(text, options) {
        Err(e) if e.to_string().contains(EXPANSION_EXCEEDED) => Err(e),
        _ => Ok(()),
    }
}

/// [`check_alias_expansion`], then the real parse with the snapshot options.
fn parse_yaml<T: DeserializeOwned>(text: &str) -> Result<T, serde_saphyr::Error> {
    check_alias_expansion(text, yaml_options())?;
    serde_saphyr::from_str_with_options(text, yaml_options())
}

/// Strip the parser's own " at line L, column C ..." suffix (the location is
/// reported separately, relative to the whole file) and advice meant for programmers.
fn strip_location(mut msg: String) -> String {
    if let Some(i) = msg.find(" at line ") {
        msg.truncate(i);
        // An error inside an alias's replay also says where the anchor was defined.
        if let Some(stem) = msg.strip_suffix(" (defined") {
            msg.truncate(stem.len());
        }
    }
    if let Some(i) = msg.find(", set DuplicateKeyPolicy") {
        msg.truncate(i);
    }
    if let Some(i) = msg.find("; use from_str_multiple") {
        msg.truncate(i);
    }
    if let Some(what) = msg.strip_prefix("budget breached: ") {
        let limit = match what.split([' ', '{', '(']).next().unwrap_or("") {
            "Depth" => "it is nested more than 128 levels deep".to_string(),
            "Aliases" => "it has more than 10000 aliases (*name)".to_string(),
            "AliasAnchorRatio" => {
                "it has far more aliases (*name) than anchors (&name), as an alias bomb does"
                    .to_string()
            }
            "Events" | "Nodes" => "it has more YAML nodes than the parser allows".to_string(),
            "Anchors" => "it defines more anchors (&name) than the parser allows".to_string(),
            "Documents" => "it has more documents (---) than the parser allows".to_string(),
            "ScalarBytes" | "InputBytes" => "it is larger than the parser allows".to_string(),
            "CommentBytes" => "its comments are larger than the parser allows".to_string(),
            "MergeKeys" => "it has more merge keys (<<) than the parser allows".to_string(),
            "RecordedAnchorEvents" | "RecordedAnchorBytes" => {
                "its anchored (&name) values are larger than the parser keeps for aliases"
                    .to_string()
            }
            "SequenceUnbalanced" => "its structure is unbalanced (truncated?)".to_string(),
            other => format!("it exceeds the YAML parser's {other} limit"),
        };
        msg = format!("refusing to parse: {limit}");
    }
    msg
}

// ---------------------------------------------------------------------------------
// YAML tree: a document or List item, with Secret/ConfigMap contents never kept.

/// Kinds whose contents are never read (they may hold credentials).
fn never_read(kind: &str) -> bool {
    kind == "Secret" || kind == "ConfigMap"
}

/// Top-level fields of Secret/ConfigMap payloads; no kind loaded here has them, so
/// they are skipped before `kind` is known (kubectl sorts `data` before `kind`).
fn payload_field(key: &str) -> bool {
    matches!(key, "data" | "stringData" | "binaryData")
}

enum YamlNode {
    Null,
    Obj(YamlObj),
    Other(&'static str),
}

#[derive(Default)]
struct YamlObj {
    kind: Option<String>,
    api_version: Option<String>,
    map: Map<String, Value>,
    items: Option<Vec<serde_saphyr::Spanned<YamlNode>>>,
}

impl<'de> Deserialize<'de> for YamlNode {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NodeVisitor)
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = YamlNode;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a Kubernetes object")
    }
    fn visit_unit<E>(self) -> Result<YamlNode, E> {
        Ok(YamlNode::Null)
    }
    fn visit_none<E>(self) -> Result<YamlNode, E> {
        Ok(YamlNode::Null)
    }
    fn visit_bool<E>(self, _: bool) -> Result<YamlNode, E> {
        Ok(YamlNode::Other("a boolean"))
    }
    fn visit_i64<E>(self, _: i64) -> Result<YamlNode, E> {
        Ok(YamlNode::Other("a number"))
    }
    fn visit_u64<E>(self, _: u64) -> Result<YamlNode, E> {
        Ok(YamlNode::Other("a number"))
    }
    fn visit_f64<E>(self, _: f64) -> Result<YamlNode, E> {
        Ok(YamlNode::Other("a number"))
    }
    fn visit_str<E>(self, _: &str) -> Result<YamlNode, E> {
        Ok(YamlNode::Other("a string"))
    }
    fn visit_bytes<E>(self, _: &[u8]) -> Result<YamlNode, E> {
        Ok(YamlNode::Other("binary data"))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<YamlNode, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(YamlNode::Other("a list"))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<YamlNode, A::Error> {
        let mut obj = YamlObj::default();
        let mut skip_rest = false;
        while let Some(key) = map.next_key::<String>()? {
            if skip_rest || payload_field(&key) {
                map.next_value::<IgnoredAny>()?;
                continue;
            }
            match key.as_str() {
                "kind" => {
                    let v: Value = map.next_value()?;
                    if let Value::String(s) = &v {
                        if never_read(s) {
                            skip_rest = true;
                            obj.map.clear();
                        }
                        obj.kind = Some(s.clone());
                    }
                    obj.map.insert(key, v);
                }
                "apiVersion" => {
                    let v: Value = map.next_value()?;
                    if let Value::String(s) = &v {
                        obj.api_version = Some(s.clone());
                    }
                    obj.map.insert(key, v);
                }
                "items" => obj.items = map.next_value()?,
                _ => {
                    let v: Value = map.next_value()?;
                    obj.map.insert(key, v);
                }
            }
        }
        Ok(YamlNode::Obj(obj))
    }
}

// ---------------------------------------------------------------------------------
// JSON peeks

#[derive(Deserialize)]
struct JsonTop<'a> {
    #[serde(borrow, rename = "apiVersion")]
    api_version: Option<Cow<'a, str>>,
    #[serde(borrow)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow)]
    items: Option<Vec<&'a RawValue>>,
}

#[derive(Deserialize)]
struct JsonPeek<'a> {
    #[serde(borrow, rename = "apiVersion")]
    api_version: Option<Cow<'a, str>>,
    #[serde(borrow)]
    kind: Option<Cow<'a, str>>,
}

/// `apiVersion` and `kind` of a JSON object. kubectl prints them first (its keys are
/// sorted), so that prefix is matched by hand before falling back to a full scan.
/// `(apiVersion, kind)` as found.
type Peeked<'a> = (Option<Cow<'a, str>>, Option<Cow<'a, str>>);

fn peek_json(s: &str) -> Result<Peeked<'_>, serde_json::Error> {
    if let Some((av, kind)) = kubectl_prefix(s) {
        return Ok((Some(Cow::Borrowed(av)), Some(Cow::Borrowed(kind))));
    }
    let p: JsonPeek = serde_json::from_str(s)?;
    Ok((p.api_version, p.kind))
}

/// Matches `{ "apiVersion": "<plain>", "kind": "<plain>",` at the start of `s`.
fn kubectl_prefix(s: &str) -> Option<(&str, &str)> {
    fn ws(s: &str) -> &str {
        s.trim_start_matches([' ', '\n', '\r', '\t'])
    }
    fn string_field<'a>(s: &'a str, key: &str) -> Option<(&'a str, &'a str)> {
        let s = ws(s)
            .strip_prefix('"')?
            .strip_prefix(key)?
            .strip_prefix('"')?;
        let s = ws(ws(s).strip_prefix(':')?).strip_prefix('"')?;
        let end = s.find(['"', '\\'])?;
        if s.as_bytes()[end] != b'"' {
            return None;
        }
        Some((&s[..end], &s[end + 1..]))
    }
    let s = s.strip_prefix('{')?;
    let (av, s) = string_field(s, "apiVersion")?;
    let s = ws(s).strip_prefix(',')?;
    let (kind, s) = string_field(s, "kind")?;
    let s = ws(s);
    // The object must go on (or end) validly; the typed pass checks the rest.
    if !(s.starts_with(',') || s.starts_with('}')) {
        return None;
    }
    Some((av, kind))
}

fn json_found(s: &str) -> &'static str {
    match s.as_bytes().first() {
        Some(b'[') => "a list",
        Some(b'"') => "a string",
        Some(b't' | b'f') => "a boolean",
        Some(b'n') => "null",
        _ => "a number",
    }
}

/// JSON List items are decoded in parallel in chunks of this many.
const CHUNK: usize = 256;
const MAX_THREADS: usize = 8;
const WORKER_STACK: usize = 16 << 20;

/// Decode item `i` of a JSON List.
fn json_item(
    raw: &RawValue,
    i: usize,
    item_kind: Option<&str>,
    list_api_version: Option<&str>,
    list_loc: &Loc<'_>,
    file_idx: usize,
) -> Result<Decoded, SnapshotError> {
    let s = raw.get();
    let loc = Loc {
        item: Some(i),
        start: Start::Offset(s.as_ptr() as usize - list_loc.text.as_ptr() as usize),
        ..*list_loc
    };
    if !s.starts_with('{') {
        return Err(SnapshotError::NotAnObject {
            at: loc.origin(),
            found: json_found(s).into(),
        });
    }
    let (api_version, kind) = peek_json(s).map_err(|e| SnapshotError::InvalidObject {
        at: loc.origin_at(Some(e.line() as u64), Some(e.column() as u64)),
        object: "object".into(),
        field: None,
        message: strip_location(e.to_string()),
    })?;
    let (kind, api_version) = match kind {
        Some(k) => (Some(k), api_version),
        None => (
            item_kind.map(Cow::Borrowed),
            api_version.or(list_api_version.map(Cow::Borrowed)),
        ),
    };
    decode_any(
        kind.as_deref(),
        api_version.as_deref(),
        &Body::Json(s),
        &loc,
        file_idx,
    )
}

/// Decode an object of any kind; a missing kind is an error.
fn decode_any(
    kind: Option<&str>,
    api_version: Option<&str>,
    body: &Body<'_>,
    loc: &Loc<'_>,
    file_idx: usize,
) -> Result<Decoded, SnapshotError> {
    let Some(kind) = kind.filter(|k| !k.is_empty()) else {
        let (ns, name) = body.name();
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

/// `f(0..n)` on up to `MAX_THREADS` worker threads, results in index
/// order. Work is taken one index at a time, so uneven units balance out.
fn par_map<T: Send>(n: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |t| t.get())
        .min(MAX_THREADS)
        .min(n);
    if n == 0 {
        return Vec::new();
    }
    let next = AtomicUsize::new(0);
    let work = || {
        let mut done = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= n {
                return done;
            }
            done.push((i, f(i)));
        }
    };
    let mut slots: Vec<Option<T>> = (0..n).map(|_| None).collect();
    std::thread::scope(|scope| {
        // Every unit is parsed on a worker with an explicit stack, never on the
        // caller's (a test thread or a UI thread may have 2 MiB): YAML nested to
        // the depth limit recurses deeply, and far more so in a debug build.
        let mut handles = Vec::new();
        for _ in 0..threads.max(1) {
            let builder = std::thread::Builder::new().stack_size(WORKER_STACK);
            if let Ok(h) = builder.spawn_scoped(scope, work) {
                handles.push(h);
            }
        }
        let mut all = if handles.is_empty() {
            work()
        } else {
            Vec::new()
        };
        for h in handles {
            match h.join() {
                Ok(done) => all.extend(done),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        for (i, t) in all {
            slots[i] = Some(t);
        }
    });
    slots.into_iter().flatten().collect()
}

/// A piece of a YAML file parsed on its own: a whole document, or a group of the
/// items of a kubectl-style List (`items:` at column 0, one `- ` per item).
struct YamlUnit<'a> {
    text: &'a str,
    start_line: u64,
    /// 1-based document number.
    document: usize,
    first_of_document: bool,
    kind: UnitKind,
}

enum UnitKind {
    Document {
        content_line: u64,
    },
    Items {
        first_item: usize,
        item_kind: Option<String>,
        list_api_version: Option<String>,
    },
}

/// Items per parallel unit when a YAML List is split.
const YAML_GROUP: usize = 64;

fn yaml_units(text: &str, split_lists: bool) -> Vec<YamlUnit<'_>> {
    let mut units = Vec::new();
    let mut document = 0;
    for chunk in split_yaml(text) {
        let Some(content_line) = chunk.content_line else {
            continue;
        };
        document += 1;
        if split_lists && let Some(groups) = split_list_items(&chunk, document) {
            units.extend(groups);
            continue;
        }
        units.push(YamlUnit {
            text: chunk.text,
            start_line: chunk.start_line,
            document,
            first_of_document: true,
            kind: UnitKind::Document { content_line },
        });
    }
    units
}

/// Split a List document's `items:` block at its `- ` lines, in groups. None when the
/// document is not laid out that way (it is then parsed whole).
fn split_list_items<'a>(chunk: &YamlChunk<'a>, document: usize) -> Option<Vec<YamlUnit<'a>>> {
    let text = chunk.text;
    // Byte offsets and lines of each line.
    let mut lines = Vec::new();
    let mut off = 0;
    for (n, l) in (chunk.start_line..).zip(text.split_inclusive('\n')) {
        lines.push((off, n, l));
        off += l.len();
    }
    let items_at = lines
        .iter()
        .position(|(_, _, l)| l.trim_end() == "items:")?;
    // The block: lines that are items (`- `), more indented, blank or comments.
    let mut starts = Vec::new();
    let mut end = lines.len();
    for (i, (_, _, l)) in lines.iter().enumerate().skip(items_at + 1) {
        let bare = l.trim_end_matches(['\n', '\r']);
        if bare.starts_with("- ") || bare == "-" {
            starts.push(i);
        } else if bare.starts_with([' ', '\t']) || bare.trim().is_empty() || bare.starts_with('#') {
            if starts.is_empty() && !bare.trim().is_empty() && !bare.starts_with('#') {
                return None; // indented sequence style: parse whole
            }
        } else {
            end = i;
            break;
        }
    }
    if starts.len() < 2 * YAML_GROUP {
        return None; // small: not worth it
    }
    // The document without its items must say it is a List.
    let block_start = lines[items_at].0;
    let block_end = lines.get(end).map_or(text.len(), |l| l.0);
    let header = format!("{}{}", &text[..block_start], &text[block_end..]);
    // On a worker, as every parse: the header may be nested deep too.
    let head: YamlNode = par_map(1, |_| parse_yaml(&header).ok()).pop().flatten()?;
    let YamlNode::Obj(head) = head else {
        return None;
    };
    let list_kind = head.kind.as_deref().filter(|k| k.ends_with("List"))?;
    let item_kind = list_kind
        .strip_suffix("List")
        .filter(|k| !k.is_empty())
        .map(str::to_string);
    let mut units = Vec::new();
    for (g, group) in starts.chunks(YAML_GROUP).enumerate() {
        let first = group[0];
        let stop = starts.get((g + 1) * YAML_GROUP).copied().unwrap_or(end);
        let from = lines[first].0;
        let to = lines.get(stop).map_or(text.len(), |l| l.0);
        units.push(YamlUnit {
            text: &text[from..to],
            start_line: lines[first].1,
            document,
            first_of_document: g == 0,
            kind: UnitKind::Items {
                first_item: g * YAML_GROUP,
                item_kind: item_kind.clone(),
                list_api_version: head.api_version.clone(),
            },
        });
    }
    Some(units)
}

struct YamlCtx<'a> {
    file: &'a str,
    text: &'a str,
    file_idx: usize,
}

impl YamlCtx<'_> {
    /// Parse and decode one unit. None when a group of List items does not parse on
    /// its own (the caller then parses whole documents).
    fn run(&self, unit: &YamlUnit<'_>) -> Option<Vec<Result<Decoded, SnapshotError>>> {
        let loc = Loc {
            file: self.file,
            text: self.text,
            document: unit.document,
            item: None,
            start: Start::Line(None),
        };
        let syntax = |e: serde_saphyr::Error| {
            let at = e.location();
            SnapshotError::Syntax {
                at: Box::new(Origin {
                    file: self.file.to_string(),
                    document: Some(unit.document),
                    item: None,
                    line: at.map(|l| (unit.start_line + l.line()).saturating_sub(1)),
                    column: at.map(|l| l.column()),
                }),
                format: "YAML",
                message: strip_location(e.to_string()),
            }
        };
        match &unit.kind {
            UnitKind::Items {
                first_item,
                item_kind,
                list_api_version,
            } => {
                let items: Vec<serde_saphyr::Spanned<YamlNode>> = parse_yaml(unit.text).ok()?;
                Some(self.items(
                    items,
                    *first_item,
                    unit.start_line,
                    item_kind.as_deref(),
                    list_api_version.as_deref(),
                    &loc,
                ))
            }
            UnitKind::Document { content_line } => {
                let loc = Loc {
                    start: Start::Line(Some(*content_line)),
                    ..loc
                };
                let node: YamlNode = match parse_yaml(unit.text) {
                    Ok(n) => n,
                    Err(e) => return Some(vec![Err(syntax(e))]),
                };
                let obj = match node {
                    YamlNode::Null => return Some(Vec::new()),
                    YamlNode::Obj(o) => o,
                    YamlNode::Other(found) => {
                        return Some(vec![Err(SnapshotError::NotAnObject {
                            at: loc.origin(),
                            found: found.into(),
                        })]);
                    }
                };
                let list_kind = obj.kind.as_deref().filter(|k| k.ends_with("List"));
                if let (Some(list_kind), Some(items)) = (list_kind, obj.items) {
                    let item_kind = list_kind.strip_suffix("List").filter(|k| !k.is_empty());
                    return Some(self.items(
                        items,
                        0,
                        unit.start_line,
                        item_kind,
                        obj.api_version.as_deref(),
                        &loc,
                    ));
                }
                let body = Body::Value(Value::Object(obj.map));
                Some(vec![decode_any(
                    obj.kind.as_deref(),
                    obj.api_version.as_deref(),
                    &body,
                    &loc,
                    self.file_idx,
                )])
            }
        }
    }

    fn items(
        &self,
        items: Vec<serde_saphyr::Spanned<YamlNode>>,
        first_item: usize,
        start_line: u64,
        item_kind: Option<&str>,
        list_api_version: Option<&str>,
        loc: &Loc<'_>,
    ) -> Vec<Result<Decoded, SnapshotError>> {
        let mut out = Vec::with_capacity(items.len());
        for (k, item) in items.into_iter().enumerate() {
            let item_loc = Loc {
                item: Some(first_item + k),
                start: Start::Line(Some(
                    (start_line + item.referenced.line()).saturating_sub(1),
                )),
                ..*loc
            };
            let r = match item.value {
                YamlNode::Obj(o) => {
                    let (kind, api_version) = match o.kind {
                        Some(k) => (Some(k), o.api_version),
                        None => (
                            item_kind.map(str::to_string),
                            o.api_version
                                .or_else(|| list_api_version.map(str::to_string)),
                        ),
                    };
                    decode_any(
                        kind.as_deref(),
                        api_version.as_deref(),
                        &Body::Value(Value::Object(o.map)),
                        &item_loc,
                        self.file_idx,
                    )
                }
                YamlNode::Null => Err(SnapshotError::NotAnObject {
                    at: item_loc.origin(),
                    found: "null".into(),
                }),
                YamlNode::Other(found) => Err(SnapshotError::NotAnObject {
                    at: item_loc.origin(),
                    found: found.into(),
                }),
            };
            let failed = r.is_err();
            out.push(r);
            if failed {
                break;
            }
        }
        out
    }
}

// ---------------------------------------------------------------------------------
// One object's body and its typed decoding

enum Body<'a> {
    /// The object's own JSON text.
    Json(&'a str),
    Value(Value),
}

struct DecodeError {
    path: Option<String>,
    message: String,
    /// Line/column inside the body (JSON only).
    line: Option<u64>,
    column: Option<u64>,
}

fn path_string(p: &serde_path_to_error::Path) -> Option<String> {
    let s = p.to_string();
    (s != "." && !s.is_empty()).then_some(s)
}

/// The last instant the timestamp type holds (it keeps a day's margin for offsets
/// below the year 10000), to the second.
const LATEST_TIMESTAMP: &str = "9999-12-30T22:00:00Z";

/// Replace timestamps later than [`LATEST_TIMESTAMP`] (valid RFC 3339, such as
/// `9999-12-31T23:59:59Z`, which the API server accepts) by it. Whether any was
/// replaced. Ordering by such a time moves by at most a day, in the year 9999.
fn clamp_far_timestamps(v: &mut Value) -> bool {
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
    fn decode<T: DeserializeOwned>(&self) -> Result<T, DecodeError> {
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

    fn decode_exact<T: DeserializeOwned>(&self) -> Result<T, DecodeError> {
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
    fn name(&self) -> (Option<String>, Option<String>) {
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
fn yaml_hint(msg: String) -> String {
    if msg.starts_with("invalid type: ") && msg.ends_with("expected a string") {
        format!("{msg} (quote the value in YAML to keep it as text)")
    } else {
        msg
    }
}

/// Where an object is, resolved to an [`Origin`] only when something is wrong.
#[derive(Clone, Copy)]
struct Loc<'a> {
    file: &'a str,
    text: &'a str,
    document: usize,
    item: Option<usize>,
    start: Start,
}

#[derive(Clone, Copy)]
enum Start {
    /// Byte offset of the object's JSON text in the file.
    Offset(usize),
    Line(Option<u64>),
}

impl Loc<'_> {
    fn origin(&self) -> Box<Origin> {
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
            line,
            column,
        })
    }

    /// The line of the field at `path` (`spec.containers[1].resources.requests.cpu`) in
    /// a YAML object's text, found by following its keys and list indexes down from
    /// the object's first line; the object's own line when the text does not show it
    /// plainly. Keys may hold dots (`example.com/gpu`); the search ends where the
    /// object does (the next document or List item).
    fn field_origin(&self, path: &str) -> Box<Origin> {
        let mut o = self.origin();
        if let Start::Line(Some(start)) = self.start
            && let Some(line) = find_field_line(self.text, start, self.item.is_some(), path)
        {
            o.line = Some(line);
        }
        o
    }

    /// The position of an error found at `line`/`column` inside the object's body.
    fn origin_at(&self, line: Option<u64>, column: Option<u64>) -> Box<Origin> {
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

    fn compact(&self, file_idx: usize) -> CompactLoc {
        CompactLoc {
            file: file_idx as u32,
            document: self.document as u32,
            item: self.item.map(|i| i as u32),
        }
    }
}

/// See [`Loc::field_origin`]. `start` is the object's first line (1-based).
fn find_field_line(text: &str, start: u64, item: bool, path: &str) -> Option<u64> {
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
struct CompactLoc {
    file: u32,
    document: u32,
    item: Option<u32>,
}

fn object_name(kind: &str, namespace: Option<&str>, name: Option<&str>) -> String {
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
fn expected_api_version(kind: &str) -> Option<&'static str> {
    Some(match kind {
        "Node"
        | "Pod"
        | "PersistentVolume"
        | "PersistentVolumeClaim"
        | "Namespace"
        | "Service"
        | "ReplicationController" => "v1",
        "StorageClass" | "CSINode" | "CSIDriver" | "VolumeAttachment" => "storage.k8s.io/v1",
        "PodDisruptionBudget" => "policy/v1",
        "PriorityClass" => "scheduling.k8s.io/v1",
        "ReplicaSet" | "StatefulSet" => "apps/v1",
        "RuntimeClass" => "node.k8s.io/v1",
        "PodGroup" => "scheduling.x-k8s.io/v1alpha1",
        "DeviceClass" | "ResourceSlice" | "ResourceClaim" | "ResourceClaimTemplate" => {
            "resource.k8s.io/v1"
        }
        _ => return None,
    })
}

fn namespaced(kind: &str) -> bool {
    matches!(
        kind,
        "Pod"
            | "PersistentVolumeClaim"
            | "PodDisruptionBudget"
            | "Service"
            | "ReplicaSet"
            | "StatefulSet"
            | "ReplicationController"
            | "PodGroup"
            | "ResourceClaim"
            | "ResourceClaimTemplate"
    )
}

fn api_group(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(g, _)| g)
}

struct PodEntry {
    pod: Pod,
    /// Kept only for pods naming a RuntimeClass without `spec.overhead`: the class's
    /// overhead enters the requests, so the pod is converted again once classes are
    /// known.
    raw: Option<Box<core::Pod>>,
    explicit_priority: bool,
    explicit_policy: bool,
    loc: CompactLoc,
}

enum Decoded {
    Skip(String),
    TerminalPod,
    Node(Box<Node>),
    Pod(Box<PodEntry>),
    PersistentVolume(Box<core::PersistentVolume>),
    PersistentVolumeClaim(Box<core::PersistentVolumeClaim>),
    StorageClass(Box<storage::StorageClass>),
    CSINode(Box<storage::CSINode>),
    CSIDriver(Box<storage::CSIDriver>),
    VolumeAttachment(Box<storage::VolumeAttachment>),
    Namespace(Box<core::Namespace>),
    PodDisruptionBudget(Box<policy::PodDisruptionBudget>),
    PriorityClass(Box<scheduling::PriorityClass>),
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
}

/// Decode one object. Pure, so it could run on any thread.
fn decode_object(
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
    let Some(expected) = expected_api_version(kind) else {
        return Ok(Decoded::Skip(kind.to_string()));
    };
    if let Some(av) = api_version
        && av != expected
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
            Decoded::Node(Box::new(node))
        }
        "Pod" => {
            let p: core::Pod = body.decode().map_err(bad_body)?;
            named(&p.metadata)?;
            let Some(c) = convert::convert_pod(&p).map_err(|e| bad_field(&p.metadata, e))? else {
                return Ok(Decoded::TerminalPod);
            };
            Decoded::Pod(Box::new(PodEntry {
                explicit_priority: c.explicit_priority,
                explicit_policy: c.explicit_policy,
                raw: c.needs_overhead.then(|| Box::new(p)),
                pod: c.pod,
                loc: loc.compact(file_idx),
            }))
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
        "Namespace" => {
            let mut ns: core::Namespace = body.decode().map_err(bad_body)?;
            named(&ns.metadata)?;
            convert::namespace_defaults(&mut ns);
            Decoded::Namespace(Box::new(ns))
        }
        "PodDisruptionBudget" => plain!(PodDisruptionBudget, policy::PodDisruptionBudget),
        "PriorityClass" => {
            let mut pc: scheduling::PriorityClass = body.decode().map_err(bad_body)?;
            named(&pc.metadata)?;
            convert::priority_class_defaults(&mut pc);
            Decoded::PriorityClass(Box::new(pc))
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

// ---------------------------------------------------------------------------------
// The loader

#[derive(Default)]
struct Loader {
    report: LoadReport,
    nodes: Vec<Node>,
    pods: Vec<PodEntry>,
    runtime_classes: BTreeMap<String, nodev1::RuntimeClass>,
    cluster: Cluster,
}

fn ns_key(meta: &ObjectMeta) -> String {
    format!(
        "{}/{}",
        meta.namespace.as_deref().unwrap_or("default"),
        meta.name.as_deref().unwrap_or_default()
    )
}

fn name_key(meta: &ObjectMeta) -> String {
    meta.name.clone().unwrap_or_default()
}

impl Loader {
    fn add_bytes(&mut self, bytes: &[u8], file: &str) -> Result<(), SnapshotError> {
        self.report.files.push(file.to_string());
        self.report.bytes += bytes.len() as u64;
        let text = bytes_to_text(bytes, file)?;
        self.add_text(&text, file)
    }

    fn add_text(&mut self, text: &str, file: &str) -> Result<(), SnapshotError> {
        let file_idx = self.report.files.len().saturating_sub(1);
        let text = lone_cr_to_lf(text);
        let body = text.trim_start_matches('\u{feff}');
        if body.trim().is_empty() {
            return Err(SnapshotError::EmptyFile {
                file: file.to_string(),
            });
        }
        let by_name = Format::from_name(file);
        let looks_json = body.trim_start().starts_with(['{', '[']);
        if by_name == Some(Format::Json) {
            return self.add_json(body, file, file_idx);
        }
        if looks_json {
            // A `.yaml` file holding JSON (JSON is YAML): take the fast path, unless
            // it is really YAML flow style that JSON cannot parse.
            let mut trial = Loader::default();
            trial.report.files = self.report.files.clone();
            match trial.add_json(body, file, file_idx) {
                Ok(()) => {
                    self.merge(trial);
                    return Ok(());
                }
                Err(SnapshotError::Syntax { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        self.add_yaml(body, file, file_idx)
    }

    /// Take over what a trial loader read.
    fn merge(&mut self, other: Loader) {
        self.report.documents += other.report.documents;
        self.report.duplicates += other.report.duplicates;
        self.report.terminal_pods += other.report.terminal_pods;
        for (k, v) in other.report.skipped_kinds {
            *self.report.skipped_kinds.entry(k).or_default() += v;
        }
        self.nodes.extend(other.nodes);
        self.pods.extend(other.pods);
        for (_, rc) in other.runtime_classes {
            self.apply(Decoded::RuntimeClass(Box::new(rc)));
        }
        let c = other.cluster;
        macro_rules! take {
            ($($field:ident),*) => {$(
                for (k, v) in c.$field {
                    if self.cluster.$field.insert(k, v).is_some() {
                        self.report.duplicates += 1;
                    }
                }
            )*};
        }
        take!(
            persistent_volumes,
            persistent_volume_claims,
            storage_classes,
            csi_nodes,
            csi_drivers,
            volume_attachments,
            namespaces,
            pod_disruption_budgets,
            priority_classes,
            services,
            replica_sets,
            stateful_sets,
            replication_controllers,
            pod_groups
        );
    }

    fn add_json(&mut self, text: &str, file: &str, file_idx: usize) -> Result<(), SnapshotError> {
        let base = text.as_ptr() as usize;
        let syntax = |e: serde_json::Error, document: Option<usize>| SnapshotError::Syntax {
            at: Box::new(Origin {
                file: file.to_string(),
                document,
                item: None,
                line: Some(e.line() as u64),
                column: Some(e.column() as u64),
            }),
            format: "JSON",
            message: strip_location(e.to_string()),
        };
        let stream = serde_json::Deserializer::from_str(text).into_iter::<&RawValue>();
        let mut document = 0;
        for raw in stream {
            let raw = raw.map_err(|e| syntax(e, Some(document + 1)))?;
            document += 1;
            self.report.documents += 1;
            let s = raw.get();
            let loc = Loc {
                file,
                text,
                document,
                item: None,
                start: Start::Offset(s.as_ptr() as usize - base),
            };
            match s.as_bytes().first() {
                Some(b'{') => {}
                Some(b'[') => {
                    let items: Vec<&RawValue> =
                        serde_json::from_str(s).map_err(|e| syntax(e, Some(document)))?;
                    self.json_items(&items, None, None, &loc, file_idx)?;
                    continue;
                }
                _ => {
                    return Err(SnapshotError::NotAnObject {
                        at: loc.origin(),
                        found: json_found(s).into(),
                    });
                }
            }
            let (api_version, kind) = match kubectl_prefix(s) {
                Some((av, kind)) if !kind.ends_with("List") => {
                    (Some(Cow::Borrowed(av)), Some(Cow::Borrowed(kind)))
                }
                _ => {
                    let top: JsonTop = serde_json::from_str(s).map_err(|e| {
                        let (ns, name) = Body::Json(s).name();
                        SnapshotError::InvalidObject {
                            at: loc.origin_at(Some(e.line() as u64), Some(e.column() as u64)),
                            object: object_name("object", ns.as_deref(), name.as_deref()),
                            field: None,
                            message: strip_location(e.to_string()),
                        }
                    })?;
                    if let Some(items) = &top.items
                        && let Some(k) = top.kind.as_deref()
                        && k.ends_with("List")
                    {
                        let item_kind = k.strip_suffix("List").filter(|k| !k.is_empty());
                        self.json_items(
                            items,
                            item_kind,
                            top.api_version.as_deref(),
                            &loc,
                            file_idx,
                        )?;
                        continue;
                    }
                    (top.api_version, top.kind)
                }
            };
            self.object(
                kind.as_deref(),
                api_version.as_deref(),
                Body::Json(s),
                &loc,
                file_idx,
            )?;
        }
        if document == 0 {
            return Err(SnapshotError::EmptyFile {
                file: file.to_string(),
            });
        }
        Ok(())
    }

    /// Items of a List. `item_kind`/`list_api_version` fill in for items of a typed
    /// list (`PodList`), which the API server prints without kind and apiVersion.
    /// Large lists are decoded on several threads; results are applied in input order,
    /// so the outcome (and the first error reported) does not depend on timing.
    fn json_items(
        &mut self,
        items: &[&RawValue],
        item_kind: Option<&str>,
        list_api_version: Option<&str>,
        list_loc: &Loc<'_>,
        file_idx: usize,
    ) -> Result<(), SnapshotError> {
        let chunks = items.len().div_ceil(CHUNK);
        let outs = par_map(chunks, |c| {
            let mut out = Vec::with_capacity(CHUNK);
            let from = c * CHUNK;
            let chunk = &items[from..((c + 1) * CHUNK).min(items.len())];
            for (k, raw) in chunk.iter().enumerate() {
                let r = json_item(
                    raw,
                    from + k,
                    item_kind,
                    list_api_version,
                    list_loc,
                    file_idx,
                );
                let failed = r.is_err();
                out.push(r);
                if failed {
                    break;
                }
            }
            out
        });
        for r in outs.into_iter().flatten() {
            self.apply(r?);
        }
        Ok(())
    }

    fn add_yaml(&mut self, text: &str, file: &str, file_idx: usize) -> Result<(), SnapshotError> {
        // Documents, and the items of kubectl-style Lists in groups, are parsed and
        // decoded in parallel, then applied in input order.
        let units = yaml_units(text, true);
        if units.is_empty() {
            return Err(SnapshotError::EmptyFile {
                file: file.to_string(),
            });
        }
        let ctx = YamlCtx {
            file,
            text,
            file_idx,
        };
        let outs = par_map(units.len(), |u| ctx.run(&units[u]));
        if outs.iter().any(|o| o.is_none()) {
            // A List split into groups did not parse group by group (anchors shared
            // between items, unusual layout): parse whole documents instead, which
            // also reports any real error in the right place.
            let units = yaml_units(text, false);
            let outs = par_map(units.len(), |u| ctx.run(&units[u]));
            return self.apply_yaml(&units, outs);
        }
        self.apply_yaml(&units, outs)
    }

    fn apply_yaml(
        &mut self,
        units: &[YamlUnit<'_>],
        outs: Vec<Option<Vec<Result<Decoded, SnapshotError>>>>,
    ) -> Result<(), SnapshotError> {
        for (unit, out) in units.iter().zip(outs) {
            if unit.first_of_document {
                self.report.documents += 1;
            }
            for r in out.into_iter().flatten() {
                self.apply(r?);
            }
        }
        Ok(())
    }

    fn object(
        &mut self,
        kind: Option<&str>,
        api_version: Option<&str>,
        body: Body<'_>,
        loc: &Loc<'_>,
        file_idx: usize,
    ) -> Result<(), SnapshotError> {
        let decoded = decode_any(kind, api_version, &body, loc, file_idx)?;
        self.apply(decoded);
        Ok(())
    }

    fn apply(&mut self, d: Decoded) {
        fn put<V>(map: &mut BTreeMap<String, V>, key: String, v: V, dups: &mut usize) {
            if map.insert(key, v).is_some() {
                *dups += 1;
            }
        }
        let dups = &mut self.report.duplicates;
        let c = &mut self.cluster;
        match d {
            Decoded::Skip(kind) => *self.report.skipped_kinds.entry(kind).or_default() += 1,
            Decoded::TerminalPod => self.report.terminal_pods += 1,
            Decoded::Node(n) => self.nodes.push(*n),
            Decoded::Pod(p) => self.pods.push(*p),
            Decoded::PersistentVolume(o) => {
                put(&mut c.persistent_volumes, name_key(&o.metadata), *o, dups)
            }
            Decoded::PersistentVolumeClaim(o) => put(
                &mut c.persistent_volume_claims,
                ns_key(&o.metadata),
                *o,
                dups,
            ),
            Decoded::StorageClass(o) => {
                put(&mut c.storage_classes, name_key(&o.metadata), *o, dups)
            }
            Decoded::CSINode(o) => put(&mut c.csi_nodes, name_key(&o.metadata), *o, dups),
            Decoded::CSIDriver(o) => put(&mut c.csi_drivers, name_key(&o.metadata), *o, dups),
            Decoded::VolumeAttachment(o) => {
                put(&mut c.volume_attachments, name_key(&o.metadata), *o, dups)
            }
            Decoded::Namespace(o) => put(&mut c.namespaces, name_key(&o.metadata), *o, dups),
            Decoded::PodDisruptionBudget(o) => {
                put(&mut c.pod_disruption_budgets, ns_key(&o.metadata), *o, dups)
            }
            Decoded::PriorityClass(o) => {
                put(&mut c.priority_classes, name_key(&o.metadata), *o, dups)
            }
            Decoded::Service(o) => put(&mut c.services, ns_key(&o.metadata), *o, dups),
            Decoded::ReplicaSet(o) => put(&mut c.replica_sets, ns_key(&o.metadata), *o, dups),
            Decoded::StatefulSet(o) => put(&mut c.stateful_sets, ns_key(&o.metadata), *o, dups),
            Decoded::ReplicationController(o) => put(
                &mut c.replication_controllers,
                ns_key(&o.metadata),
                *o,
                dups,
            ),
            Decoded::RuntimeClass(o) => {
                put(&mut self.runtime_classes, name_key(&o.metadata), *o, dups)
            }
            Decoded::PodGroup(o) => {
                let key = format!("{}/{}", o.namespace, o.name);
                put(&mut c.pod_groups, key, *o, dups)
            }
            Decoded::DeviceClass(o) => put(&mut c.device_classes, name_key(&o.metadata), *o, dups),
            Decoded::ResourceSlice(o) => {
                put(&mut c.resource_slices, name_key(&o.metadata), *o, dups)
            }
            Decoded::ResourceClaim(o) => put(&mut c.resource_claims, ns_key(&o.metadata), *o, dups),
            Decoded::ResourceClaimTemplate(o) => put(
                &mut c.resource_claim_templates,
                ns_key(&o.metadata),
                *o,
                dups,
            ),
        }
    }

    fn origin_of(&self, loc: CompactLoc) -> Box<Origin> {
        Box::new(Origin {
            file: self
                .report
                .files
                .get(loc.file as usize)
                .cloned()
                .unwrap_or_default(),
            document: Some(loc.document as usize),
            item: loc.item.map(|i| i as usize),
            line: None,
            column: None,
        })
    }

    fn finish(mut self) -> Result<Snapshot, SnapshotError> {
        let mut cluster = std::mem::take(&mut self.cluster);
        cluster.dra_objects_known = true;

        // Nodes in name order (the model keeps them sorted; inserting in order is
        // cheap), the later of two same-named nodes winning.
        let mut nodes = std::mem::take(&mut self.nodes);
        let nodes_read = nodes.len();
        nodes.reverse();
        nodes.sort_by(|a, b| a.name.cmp(&b.name));
        nodes.dedup_by(|later, earlier| {
            // `dedup_by` keeps the first of equal neighbours: after the reverse and
            // stable sort, that is the last one read.
            later.name == earlier.name
        });
        let node_count = nodes.len();
        for n in nodes {
            cluster.upsert_node(n);
        }
        self.report.duplicates += nodes_read - node_count;

        let classes = std::mem::take(&mut cluster.priority_classes);
        let priorities = Priorities::new(&classes);
        let pods = std::mem::take(&mut self.pods);
        for entry in pods {
            let object = |p: &Pod| format!("Pod {}/{}", p.namespace, p.name);
            let mut pod = match entry.raw {
                Some(mut raw) => {
                    convert::apply_runtime_overhead(&mut raw, &self.runtime_classes);
                    Pod::from_k8s(&raw).map_err(|e| SnapshotError::InvalidObject {
                        at: self.origin_of(entry.loc),
                        object: object(&entry.pod),
                        field: Some(e.path),
                        message: e.message,
                    })?
                }
                None => entry.pod,
            };
            priorities
                .admit(&mut pod, entry.explicit_priority, entry.explicit_policy)
                .map_err(|class| SnapshotError::MissingPriorityClass {
                    at: self.origin_of(entry.loc),
                    object: object(&pod),
                    class,
                })?;
            let before = cluster.pod_count();
            cluster.upsert_pod(pod);
            if cluster.pod_count() == before {
                self.report.duplicates += 1; // replaced a pod with the same key
            }
        }
        cluster.priority_classes = classes;

        let r = &mut self.report;
        let mut count = |kind: &str, n: usize| {
            if n > 0 {
                r.objects.insert(kind.to_string(), n);
            }
        };
        count("Node", node_count);
        count("Pod", cluster.pod_count());
        count("PersistentVolume", cluster.persistent_volumes.len());
        count(
            "PersistentVolumeClaim",
            cluster.persistent_volume_claims.len(),
        );
        count("StorageClass", cluster.storage_classes.len());
        count("CSINode", cluster.csi_nodes.len());
        count("CSIDriver", cluster.csi_drivers.len());
        count("VolumeAttachment", cluster.volume_attachments.len());
        count("Namespace", cluster.namespaces.len());
        count("PodDisruptionBudget", cluster.pod_disruption_budgets.len());
        count("PriorityClass", cluster.priority_classes.len());
        count("Service", cluster.services.len());
        count("ReplicaSet", cluster.replica_sets.len());
        count("StatefulSet", cluster.stateful_sets.len());
        count(
            "ReplicationController",
            cluster.replication_controllers.len(),
        );
        count("RuntimeClass", self.runtime_classes.len());
        count("PodGroup", cluster.pod_groups.len());
        count("DeviceClass", cluster.device_classes.len());
        count("ResourceSlice", cluster.resource_slices.len());
        count("ResourceClaim", cluster.resource_claims.len());
        count(
            "ResourceClaimTemplate",
            cluster.resource_claim_templates.len(),
        );
        Ok(Snapshot {
            cluster,
            report: self.report,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_yaml_counts_lines_and_skips_empty_documents() {
        let text = "---\n# comment\n---\na: 1\n---\n\nb: 2\n...\nc: 3\n--- {d: 4}\n";
        let chunks = split_yaml(text);
        let got: Vec<_> = chunks
            .iter()
            .map(|c| (c.start_line, c.content_line))
            .collect();
        assert_eq!(
            got,
            vec![
                (1, None),
                (3, Some(4)),
                (5, Some(7)),
                (9, Some(9)),
                (10, Some(10))
            ]
        );
        assert_eq!(chunks[2].text, "---\n\nb: 2\n...\n");
    }

    /// `Cluster::upsert_node` re-indexes only the moved positions (changed for bulk
    /// loads): lookups must stay right for out-of-order inserts too.
    #[test]
    fn node_index_after_out_of_order_inserts() {
        let mut c = Cluster::new();
        for name in ["n3", "n1", "n4", "n2", "n0", "n1"] {
            c.upsert_node(Node {
                name: name.into(),
                ..Default::default()
            });
        }
        let names: Vec<_> = c.nodes().iter().map(|n| n.name().to_string()).collect();
        assert_eq!(names, ["n0", "n1", "n2", "n3", "n4"]);
        for (i, n) in names.iter().enumerate() {
            assert_eq!(c.node_position(n), Some(i), "{n}");
            assert_eq!(c.node(n).map(|x| x.name()), Some(n.as_str()));
        }
    }

    #[test]
    fn marker_needs_whitespace_after() {
        assert!(is_marker("---", "---"));
        assert!(is_marker("--- |", "---"));
        assert!(!is_marker("----", "---"));
        assert!(!is_marker("---x", "---"));
        assert!(!is_marker(" ---", "---"));
    }

    #[test]
    fn kubectl_prefix_fast_path() {
        let s = "{\n    \"apiVersion\": \"v1\",\n    \"kind\": \"Pod\",\n    \"metadata\": {}}";
        assert_eq!(kubectl_prefix(s), Some(("v1", "Pod")));
        assert_eq!(
            kubectl_prefix("{\"kind\": \"Pod\", \"apiVersion\": \"v1\"}"),
            None
        );
        assert_eq!(
            kubectl_prefix("{\"apiVersion\": \"v\\u0031\", \"kind\": \"Pod\"}"),
            None
        );
        assert_eq!(
            kubectl_prefix("{\"apiVersion\":\"v1\",\"kind\":\"Pod\"}"),
            Some(("v1", "Pod"))
        );
    }

    #[test]
    fn line_col_of_offsets() {
        let t = "ab\ncdé\nf";
        assert_eq!(line_col(t, 0), (1, 1));
        assert_eq!(line_col(t, 3), (2, 1));
        assert_eq!(line_col(t, 8), (3, 1));
        assert_eq!(line_col(t, 100), (3, 2));
    }

    #[test]
    fn utf16_with_bom_is_decoded() {
        let mut bytes = vec![0xFF, 0xFE];
        for u in "kind: Pod".encode_utf16() {
            bytes.extend_from_slice(&u.to_le_bytes());
        }
        assert_eq!(bytes_to_text(&bytes, "f").unwrap(), "kind: Pod");
        assert!(matches!(
            bytes_to_text(&[b'a', 0xC3, 0x28], "f"),
            Err(SnapshotError::NotText { offset: 1, .. })
        ));
    }
}
