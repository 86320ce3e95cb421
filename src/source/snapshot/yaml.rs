//! YAML snapshot text: documents, parser limits, the tree an object is peeked at
//! through, and the units (documents or groups of List items) decoded in parallel.

use std::fmt;

use serde::Deserialize;
use serde::de::{self, DeserializeOwned, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::decode::{Body, Decoded, Loc, Start, decode_any};
use super::parallel::par_map;
use crate::source::{Origin, SnapshotError};
use crate::text::{AliasAllowance, check_alias_expansion_within};

/// A YAML document: its text and the line it starts on.
pub(super) struct YamlChunk<'a> {
    pub(super) text: &'a str,
    pub(super) start_line: u64,
    /// First line holding content (not blank, comment, directive or marker).
    pub(super) content_line: Option<u64>,
}

pub(super) fn is_marker(line: &str, marker: &str) -> bool {
    line.strip_prefix(marker)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t', '\r']))
}

/// Split a YAML stream at `---` / `...` lines. A marker at column 0 always ends the
/// previous document (YAML forbids it inside scalars), so this is exact, and it gives
/// each document its own index and line offset even when documents are empty.
pub(super) fn split_yaml(text: &str) -> Vec<YamlChunk<'_>> {
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

pub(super) fn yaml_options() -> serde_saphyr::Options {
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

/// [`check_alias_expansion_within`] the input's `allowance`, then the real parse
/// with the snapshot options.
pub(super) fn parse_yaml<T: DeserializeOwned>(
    text: &str,
    allowance: &AliasAllowance,
) -> Result<T, serde_saphyr::Error> {
    check_alias_expansion_within(text, yaml_options(), allowance)?;
    serde_saphyr::from_str_with_options(text, yaml_options())
}

/// Every document of a YAML text as JSON values, with the loader's own limits
/// (alias allowance, depth, no document or scalar-size caps a large snapshot would
/// hit) and its error wording, for the paths that need raw objects
/// (`snapshot save --from`): one set of limits for every reader of a snapshot.
pub(crate) fn yaml_documents(text: &str, file: &str) -> Result<Vec<Value>, SnapshotError> {
    let allowance = AliasAllowance::default();
    let mut out = Vec::new();
    let mut document = 0;
    for chunk in split_yaml(text) {
        if chunk.content_line.is_none() {
            continue;
        }
        document += 1;
        let v: Value = parse_yaml(chunk.text, &allowance)
            .map_err(|e| syntax_error(file, document, chunk.start_line, e))?;
        out.push(v);
    }
    Ok(out)
}

/// Whether a YAML document is a `kind: ...List` (its top-level `kind:` line).
fn is_list_document(text: &str) -> bool {
    text.lines().any(|l| {
        l.strip_prefix("kind:")
            .is_some_and(|k| k.trim().trim_matches(['"', '\'']).ends_with("List"))
    })
}

/// The longest run of text between two top-level sequence items (`- ` at column 0
/// or under `items:`, as kubectl prints a List): the largest item's size.
fn largest_item(text: &str) -> usize {
    let mut largest = 0;
    let mut start: Option<usize> = None;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if line.starts_with("- ") || line.trim_end() == "-" {
            if let Some(s) = start {
                largest = largest.max(offset - s);
            }
            start = Some(offset);
        }
        offset += line.len();
    }
    match start {
        Some(s) => largest.max(offset - s),
        None => 0,
    }
}

/// A parse error of `document` (starting at `start_line` of `file`), located in the
/// file, in the loader's words.
fn syntax_error(
    file: &str,
    document: usize,
    start_line: u64,
    e: serde_saphyr::Error,
) -> SnapshotError {
    let at = e.location();
    SnapshotError::Syntax {
        at: Box::new(Origin {
            file: file.to_string(),
            document: Some(document),
            item: None,
            array: false,
            line: at.map(|l| (start_line + l.line()).saturating_sub(1)),
            column: at.map(|l| l.column()),
        }),
        format: "YAML",
        message: strip_location(e.to_string()),
    }
}

/// Strip the parser's own " at line L, column C ..." suffix (the location is
/// reported separately, relative to the whole file) and advice meant for programmers.
pub(super) fn strip_location(mut msg: String) -> String {
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
pub(super) fn never_read(kind: &str) -> bool {
    kind == "Secret" || kind == "ConfigMap"
}

/// Top-level fields of Secret/ConfigMap payloads; no kind loaded here has them, so
/// they are skipped before `kind` is known (kubectl sorts `data` before `kind`).
pub(super) fn payload_field(key: &str) -> bool {
    matches!(key, "data" | "stringData" | "binaryData")
}

pub(super) enum YamlNode {
    Null,
    Obj(YamlObj),
    Other(&'static str),
}

#[derive(Default)]
pub(super) struct YamlObj {
    pub(super) kind: Option<String>,
    pub(super) api_version: Option<String>,
    pub(super) map: Map<String, Value>,
    pub(super) items: Option<Vec<serde_saphyr::Spanned<YamlNode>>>,
}

impl<'de> Deserialize<'de> for YamlNode {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NodeVisitor)
    }
}

pub(super) struct NodeVisitor;

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

/// A piece of a YAML file parsed on its own: a whole document, or a group of the
/// items of a kubectl-style List (`items:` at column 0, one `- ` per item).
pub(super) struct YamlUnit<'a> {
    pub(super) text: &'a str,
    pub(super) start_line: u64,
    /// 1-based document number.
    pub(super) document: usize,
    pub(super) first_of_document: bool,
    pub(super) kind: UnitKind,
}

pub(super) enum UnitKind {
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
pub(super) const YAML_GROUP: usize = 64;

pub(super) fn yaml_units(text: &str, split_lists: bool) -> Vec<YamlUnit<'_>> {
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
pub(super) fn split_list_items<'a>(
    chunk: &YamlChunk<'a>,
    document: usize,
) -> Option<Vec<YamlUnit<'a>>> {
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
    // On a worker, as every parse: the header may be nested deep too. A probe:
    // metered on its own, the document is charged when it is parsed.
    let head: YamlNode = par_map(1, |_| parse_yaml(&header, &AliasAllowance::default()).ok())
        .pop()
        .flatten()?;
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

pub(super) struct YamlCtx<'a> {
    pub(super) file: &'a str,
    /// What aliases may add, for the whole input.
    pub(super) allowance: &'a AliasAllowance,
    pub(super) text: &'a str,
    pub(super) file_idx: usize,
}

impl YamlCtx<'_> {
    /// Parse and decode one unit. None when a group of List items does not parse on
    /// its own (the caller then parses whole documents).
    pub(super) fn run(&self, unit: &YamlUnit<'_>) -> Option<Vec<Result<Decoded, SnapshotError>>> {
        let loc = Loc {
            file: self.file,
            text: self.text,
            document: unit.document,
            item: None,
            array: false,
            start: Start::Line(None),
        };
        let syntax = |e| syntax_error(self.file, unit.document, unit.start_line, e);
        // One object past what any cluster can hold is refused before it is parsed
        // (a List is many objects: its items are measured one by one).
        let largest = match &unit.kind {
            UnitKind::Items { .. } => largest_item(unit.text),
            UnitKind::Document { .. } if is_list_document(unit.text) => largest_item(unit.text),
            UnitKind::Document { .. } => unit.text.len(),
        };
        if largest > super::json::MAX_OBJECT_BYTES {
            return Some(vec![Err(super::json::too_large(loc.origin(), largest))]);
        }
        match &unit.kind {
            UnitKind::Items {
                first_item,
                item_kind,
                list_api_version,
            } => {
                let items: Vec<serde_saphyr::Spanned<YamlNode>> =
                    parse_yaml(unit.text, self.allowance).ok()?;
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
                let node: YamlNode = match parse_yaml(unit.text, self.allowance) {
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

    pub(super) fn items(
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
