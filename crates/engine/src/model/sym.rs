//! Interned strings: a cluster repeats the same label keys and values, image names
//! and namespaces on thousands of objects; each distinct string is stored once and
//! every holder keeps a shared handle to it.
//!
//! A [`Sym`] reads as the string it holds (`Deref<Target = str>`, `Borrow<str>`) and
//! orders, compares and hashes as that string, so maps keyed by it keep the same order
//! and lookups by `&str` work.

use std::borrow::Borrow;
use std::cmp::Ordering;
use std::collections::HashSet;
use std::fmt;
use std::hash::{BuildHasher, Hash, Hasher};
use std::ops::Deref;
use std::sync::{Arc, Mutex, OnceLock};

/// An interned, shared, immutable string.
#[derive(Clone)]
pub struct Sym(Arc<str>);

impl Sym {
    /// The shared handle for `s`, allocating it only the first time it is seen.
    pub fn new(s: &str) -> Sym {
        intern(s)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The address of the shared string: while this handle lives, no other
    /// string has it, and every live `Sym` of the same string has it (interning).
    pub fn handle(&self) -> usize {
        Arc::as_ptr(&self.0) as *const u8 as usize
    }
}

impl Default for Sym {
    fn default() -> Self {
        intern("")
    }
}

impl Deref for Sym {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for Sym {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for Sym {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl PartialEq for Sym {
    fn eq(&self, other: &Sym) -> bool {
        // Interned: the same string is almost always the same allocation.
        Arc::ptr_eq(&self.0, &other.0) || *self.0 == *other.0
    }
}

impl Eq for Sym {}

impl PartialOrd for Sym {
    fn partial_cmp(&self, other: &Sym) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Sym {
    fn cmp(&self, other: &Sym) -> Ordering {
        self.0.cmp(&other.0)
    }
}

impl Hash for Sym {
    // As `str` hashes, as `Borrow<str>` requires.
    fn hash<H: Hasher>(&self, state: &mut H) {
        (*self.0).hash(state)
    }
}

impl PartialEq<str> for Sym {
    fn eq(&self, other: &str) -> bool {
        &*self.0 == other
    }
}

impl PartialEq<&str> for Sym {
    fn eq(&self, other: &&str) -> bool {
        &*self.0 == *other
    }
}

impl PartialEq<String> for Sym {
    fn eq(&self, other: &String) -> bool {
        *self.0 == **other
    }
}

impl PartialEq<Sym> for str {
    fn eq(&self, other: &Sym) -> bool {
        self == &*other.0
    }
}

impl PartialEq<Sym> for &str {
    fn eq(&self, other: &Sym) -> bool {
        *self == &*other.0
    }
}

impl PartialEq<Sym> for String {
    fn eq(&self, other: &Sym) -> bool {
        **self == *other.0
    }
}

impl fmt::Debug for Sym {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl fmt::Display for Sym {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&*self.0, f)
    }
}

impl From<&str> for Sym {
    fn from(s: &str) -> Sym {
        intern(s)
    }
}

impl From<&String> for Sym {
    fn from(s: &String) -> Sym {
        intern(s)
    }
}

impl From<String> for Sym {
    fn from(s: String) -> Sym {
        intern(&s)
    }
}

impl From<Sym> for String {
    fn from(s: Sym) -> String {
        s.0.to_string()
    }
}

impl serde::Serialize for Sym {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl<'de> serde::Deserialize<'de> for Sym {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Sym, D::Error> {
        let s = std::borrow::Cow::<'de, str>::deserialize(d)?;
        Ok(intern(&s))
    }
}

/// Shards of the table, chosen by hash, so that decoding threads rarely wait on one
/// another.
const SHARDS: usize = 16;

#[derive(Default)]
struct SymShard {
    set: HashSet<Arc<str>, foldhash::fast::FixedState>,
    /// Size of the set after its last sweep: it is swept again once it doubles.
    swept_at: usize,
}

fn table() -> &'static [Mutex<SymShard>; SHARDS] {
    static TABLE: OnceLock<[Mutex<SymShard>; SHARDS]> = OnceLock::new();
    TABLE.get_or_init(|| std::array::from_fn(|_| Mutex::new(SymShard::default())))
}

/// The shared handle for `s`.
pub fn intern(s: &str) -> Sym {
    let hash = foldhash::fast::FixedState::default().hash_one(s);
    let shard = &table()[(hash as usize) % SHARDS];
    // A poisoned lock only means another thread panicked mid-insert; the set is
    // still a valid set.
    let mut shard = shard.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(found) = shard.set.get(s) {
        return Sym(Arc::clone(found));
    }
    // Strings no one holds any more (a live cluster's pods come and go) are dropped
    // from time to time, so the table stays the size of what is in use.
    if shard.set.len() >= 2 * shard.swept_at.max(512) {
        shard.set.retain(|a| Arc::strong_count(a) > 1);
        shard.swept_at = shard.set.len();
    }
    let a: Arc<str> = Arc::from(s);
    shard.set.insert(Arc::clone(&a));
    Sym(a)
}

/// One shared copy of each distinct list (told apart by its JSON form): most pods
/// carry one of a few lists of tolerations, and the pods of one ReplicaSet the same
/// owner reference.
pub struct SharedLists<T> {
    table: OnceLock<Mutex<Shard<T>>>,
}

struct Shard<T> {
    lists: std::collections::HashMap<String, Arc<[T]>, foldhash::fast::FixedState>,
    swept_at: usize,
}

impl<T: Clone + serde::Serialize> SharedLists<T> {
    pub const fn new() -> Self {
        SharedLists {
            table: OnceLock::new(),
        }
    }

    /// The shared copy of `items`.
    pub fn share(&self, items: &[T]) -> Arc<[T]> {
        // Serializing the API types cannot fail (string keys, no custom errors);
        // should it, the list is simply not shared.
        let Ok(key) = serde_json::to_string(items) else {
            return Arc::from(items);
        };
        let table = self.table.get_or_init(|| {
            Mutex::new(Shard {
                lists: Default::default(),
                swept_at: 0,
            })
        });
        let mut shard = table.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(found) = shard.lists.get(&key) {
            return Arc::clone(found);
        }
        if shard.lists.len() >= 2 * shard.swept_at.max(512) {
            shard.lists.retain(|_, a| Arc::strong_count(a) > 1);
            shard.swept_at = shard.lists.len();
        }
        let a: Arc<[T]> = Arc::from(items);
        shard.lists.insert(key, Arc::clone(&a));
        a
    }
}

impl<T: Clone + serde::Serialize> Default for SharedLists<T> {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn interned_strings_share_one_allocation_and_order_as_strings() {
        let a = Sym::new("zone-a");
        let b = Sym::from(String::from("zone-a"));
        assert!(Arc::ptr_eq(&a.0, &b.0));
        let mut words: Vec<Sym> = ["b", "a", "", "ab", "B"]
            .into_iter()
            .map(Sym::new)
            .collect();
        words.sort();
        let as_str: Vec<&str> = words.iter().map(Sym::as_str).collect();
        assert_eq!(as_str, ["", "B", "a", "ab", "b"]);
        let mut m = BTreeMap::new();
        m.insert(Sym::new("k"), 1);
        assert_eq!(m.get("k"), Some(&1));
        assert_eq!(format!("{a:?} {a}"), "\"zone-a\" zone-a");
        let owned = String::from("zone-a");
        assert_eq!(a, "zone-a");
        assert_eq!(a, owned);
        assert_eq!(owned, a);
    }

    #[test]
    fn unused_strings_are_swept() {
        // Enough distinct strings to trigger sweeps: none is held, so every shard
        // stays far below the number made.
        for i in 0..200_000 {
            drop(intern(&format!("sweep-test-{i}")));
        }
        let held: usize = table()
            .iter()
            .map(|s| s.lock().map_or(0, |s| s.set.len()))
            .sum();
        assert!(held < 100_000, "{held} strings left in the table");
    }

    #[test]
    fn equal_lists_share_one_copy() {
        static LISTS: SharedLists<String> = SharedLists::new();
        let a = LISTS.share(&["x".to_string(), "y".to_string()]);
        let b = LISTS.share(&["x".to_string(), "y".to_string()]);
        let c = LISTS.share(&["x".to_string()]);
        assert!(Arc::ptr_eq(&a, &b));
        assert!(!Arc::ptr_eq(&a, &c));
        assert_eq!(&*c, ["x".to_string()]);
    }
}
