//! Snapshot file bytes to text: the format by name, encodings, line endings and
//! positions.

use std::borrow::Cow;

use crate::source::SnapshotError;

// ---------------------------------------------------------------------------------
// Formats and documents

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Format {
    Json,
    Yaml,
}

impl Format {
    pub(super) fn from_name(name: &str) -> Option<Format> {
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

/// [`crate::text::bytes_to_text`], with the file named in the error.
pub(crate) fn bytes_to_text<'a>(
    bytes: &'a [u8],
    file: &str,
) -> Result<Cow<'a, str>, SnapshotError> {
    crate::text::bytes_to_text(bytes).map_err(|e| SnapshotError::NotText {
        file: file.to_string(),
        offset: e.offset,
    })
}

/// YAML reads a lone CR (old Mac line ends) as a line break; documents are split and
/// lines counted on LF, so each lone CR becomes an LF (same length: offsets hold).
pub(super) fn lone_cr_to_lf(text: &str) -> Cow<'_, str> {
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
pub(super) fn line_col(text: &str, offset: usize) -> (u64, u64) {
    let offset = offset.min(text.len());
    let before = text.get(..offset).unwrap_or("");
    let line = before.bytes().filter(|&b| b == b'\n').count() as u64 + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() as u64 + 1;
    (line, column)
}
