//! JSON snapshot text: `apiVersion`/`kind` peeks and List items.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::decode::{Body, Decoded, Loc, Start, decode_any};
use super::yaml::strip_location;
use crate::source::SnapshotError;

// ---------------------------------------------------------------------------------
// JSON peeks

#[derive(Deserialize)]
pub(super) struct JsonTop<'a> {
    #[serde(borrow, rename = "apiVersion")]
    pub(super) api_version: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub(super) kind: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub(super) items: Option<Vec<&'a RawValue>>,
}

#[derive(Deserialize)]
pub(super) struct JsonPeek<'a> {
    #[serde(borrow, rename = "apiVersion")]
    pub(super) api_version: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub(super) kind: Option<Cow<'a, str>>,
}

/// `apiVersion` and `kind` of a JSON object. kubectl prints them first (its keys are
/// sorted), so that prefix is matched by hand before falling back to a full scan.
/// `(apiVersion, kind)` as found.
pub(super) type Peeked<'a> = (Option<Cow<'a, str>>, Option<Cow<'a, str>>);

pub(super) fn peek_json(s: &str) -> Result<Peeked<'_>, serde_json::Error> {
    if let Some((av, kind)) = kubectl_prefix(s) {
        return Ok((Some(Cow::Borrowed(av)), Some(Cow::Borrowed(kind))));
    }
    let p: JsonPeek = serde_json::from_str(s)?;
    Ok((p.api_version, p.kind))
}

/// Matches `{ "apiVersion": "<plain>", "kind": "<plain>",` at the start of `s`.
pub(super) fn kubectl_prefix(s: &str) -> Option<(&str, &str)> {
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

pub(super) fn json_found(s: &str) -> &'static str {
    match s.as_bytes().first() {
        Some(b'[') => "a list",
        Some(b'"') => "a string",
        Some(b't' | b'f') => "a boolean",
        Some(b'n') => "null",
        _ => "a number",
    }
}

/// Decode item `i` of a JSON List.
/// The most text one object may take. The API server accepts requests of at most
/// 3 MiB, and etcd stores values of at most 1.5 MiB, so no cluster holds a larger
/// object; YAML's indentation can double an object's size, hence the margin. Past it,
/// decoding (a pod with a million containers took 15 s and 3 GB) is refused.
pub(crate) const MAX_OBJECT_BYTES: usize = 8 << 20;

pub(super) fn too_large(at: Box<crate::source::Origin>, bytes: usize) -> SnapshotError {
    SnapshotError::InvalidObject {
        at,
        object: "object".into(),
        field: None,
        message: format!(
            "{:.1} MiB of text; the API server accepts at most 3 MiB per object (etcd \
             stores at most 1.5 MiB), so no cluster holds it: refusing to decode more \
             than {} MiB",
            bytes as f64 / (1 << 20) as f64,
            MAX_OBJECT_BYTES >> 20
        ),
    }
}

pub(super) fn json_item(
    s: &str,
    i: usize,
    item_kind: Option<&str>,
    list_api_version: Option<&str>,
    list_loc: &Loc<'_>,
    file_idx: usize,
) -> Result<Decoded, SnapshotError> {
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
    if s.len() > MAX_OBJECT_BYTES {
        return Err(too_large(loc.origin(), s.len()));
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
