//! Text the loaders share, below every layer that reads files: bytes to text (the
//! encodings kubectl and PowerShell write) and the YAML alias-expansion guard. Both
//! the snapshot loader (`source`) and the configuration parser (`config`) use them,
//! so they live here rather than in either.

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, MapAccess, SeqAccess, Visitor};

/// Bytes that are not text: the offset of the first byte that cannot be decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("not UTF-8 or UTF-16 text (invalid byte at offset {offset})")]
pub struct NotText {
    pub offset: usize,
}

/// Decode file bytes to text: UTF-8 (with or without BOM), or UTF-16 with a BOM (what
/// PowerShell's `>` writes).
pub fn bytes_to_text(bytes: &[u8]) -> Result<Cow<'_, str>, NotText> {
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
        String::from_utf16(&units).map_err(|_| NotText { offset: 0 })
    };
    match bytes {
        [0xEF, 0xBB, 0xBF, rest @ ..] => {
            std::str::from_utf8(rest)
                .map(Cow::Borrowed)
                .map_err(|e| NotText {
                    offset: e.valid_up_to() + 3,
                })
        }
        [0xFF, 0xFE, ..] => utf16(false).map(Cow::Owned),
        [0xFE, 0xFF, ..] => utf16(true).map(Cow::Owned),
        _ => std::str::from_utf8(bytes)
            .map(Cow::Borrowed)
            .map_err(|e| NotText {
                offset: e.valid_up_to(),
            }),
    }
}

/// Text an alias may add to a YAML document beyond the document's own length.
/// kubectl output has no anchors, so its expansion is the text itself; hand-written
/// files reuse a few blocks. A million-fold expansion (one large anchored scalar
/// under thousands of aliases) would otherwise be built in memory before any limit
/// trips.
pub(crate) const ALIAS_EXPANSION_ALLOWANCE: usize = 16 << 20;

thread_local! {
    /// Bytes the metered document may still expand to (see [`check_alias_expansion`]).
    static EXPANSION_LEFT: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// The allowance beyond each document's own size, shared by every document of
    /// one input (see [`AliasAllowance`]); the meter draws from it when its document
    /// has spent its own size.
    static EXPANSION_POOL: std::cell::RefCell<Option<AliasAllowance>> =
        const { std::cell::RefCell::new(None) };
}

/// What aliases may add beyond the text itself, for a whole input: every document of
/// a multi-document file (and every file of a directory) draws from the one
/// allowance, so many documents cannot each expand by the full amount. Documents
/// are parsed on several threads; the allowance is shared between them.
#[derive(Clone, Debug)]
pub struct AliasAllowance(std::sync::Arc<std::sync::atomic::AtomicUsize>);

impl Default for AliasAllowance {
    fn default() -> Self {
        AliasAllowance::new(ALIAS_EXPANSION_ALLOWANCE)
    }
}

impl AliasAllowance {
    pub fn new(bytes: usize) -> Self {
        AliasAllowance(std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(
            bytes,
        )))
    }

    /// Bytes left.
    pub fn left(&self) -> usize {
        self.0.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Give back to `bytes` left (a parse that is done again from the start).
    pub fn reset(&self, bytes: usize) {
        self.0.store(bytes, std::sync::atomic::Ordering::Relaxed);
    }

    fn draw(&self, bytes: usize) -> bool {
        use std::sync::atomic::Ordering;
        self.0
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
                left.checked_sub(bytes)
            })
            .is_ok()
    }
}

/// Walks a YAML document without keeping anything, charging each scalar's bytes
/// (aliases replay theirs) against [`EXPANSION_LEFT`].
pub(crate) struct ExpansionMeter;

impl ExpansionMeter {
    pub(crate) fn charge<E: de::Error>(bytes: usize) -> Result<ExpansionMeter, E> {
        // A node costs at least a few bytes, so aliases of empty values count too.
        let cost = bytes.saturating_add(8);
        EXPANSION_LEFT.with(|left| {
            if let Some(rest) = left.get().checked_sub(cost) {
                left.set(rest);
                return Ok(ExpansionMeter);
            }
            // The document's own size is spent: draw the rest, and a margin so that
            // the shared counter is not touched for every scalar, from the input's
            // allowance.
            let need = cost - left.get();
            let drawn = EXPANSION_POOL.with(|pool| {
                let pool = pool.borrow();
                let pool = pool.as_ref()?;
                let margin = need.saturating_add(64 << 10);
                if pool.draw(margin) {
                    Some(margin)
                } else {
                    pool.draw(need).then_some(need)
                }
            });
            match drawn {
                Some(d) => {
                    left.set(left.get() + d - cost);
                    Ok(ExpansionMeter)
                }
                None => Err(E::custom(EXPANSION_EXCEEDED)),
            }
        })
    }
}

pub(crate) const EXPANSION_EXCEEDED: &str = "its aliases (*name) expand it beyond its own size plus 16 MiB \
     (counted over every document of the input); refusing to build it";

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
pub fn check_alias_expansion(
    text: &str,
    options: serde_saphyr::Options,
) -> Result<(), serde_saphyr::Error> {
    check_alias_expansion_within(text, options, &AliasAllowance::default())
}

/// [`check_alias_expansion`] for one document of a larger input: beyond its own size
/// it draws from `allowance`, which every document of the input shares.
pub fn check_alias_expansion_within(
    text: &str,
    options: serde_saphyr::Options,
    allowance: &AliasAllowance,
) -> Result<(), serde_saphyr::Error> {
    if !text.contains('&') {
        return Ok(());
    }
    EXPANSION_LEFT.with(|left| left.set(text.len()));
    EXPANSION_POOL.with(|pool| *pool.borrow_mut() = Some(allowance.clone()));
    // Multi-document text is metered as one stream (the config and theme loaders).
    // Any other problem is left for the real parse to report in its own words.
    let r = serde_saphyr::from_multiple_with_options::<ExpansionMeter>(text, options);
    EXPANSION_POOL.with(|pool| *pool.borrow_mut() = None);
    match r {
        Err(e) if e.to_string().contains(EXPANSION_EXCEEDED) => Err(e),
        _ => Ok(()),
    }
}
