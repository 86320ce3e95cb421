//! A collection that knows when it may have changed: every mutable access gives it
//! a new generation, so an index derived from it can be kept until then. The
//! cluster's volume objects are public fields that sources, tests and benches
//! change in place; wrapping them keeps that code as it is while the volume plugins
//! build their indexes (attachments per node, volumes by claim) once per state of
//! the objects instead of once per scheduling cycle, as upstream keeps its PV cache
//! and CSINode informer up to date from events.

use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicU64, Ordering};

/// Generations are unique process-wide, so a generation names one content: a
/// clone shares its original's until either changes.
static NEXT_GENERATION: AtomicU64 = AtomicU64::new(1);

fn next_generation() -> u64 {
    NEXT_GENERATION.fetch_add(1, Ordering::Relaxed)
}

/// `T` with a generation that changes on every mutable access (whether or not the
/// access changes anything: conservative). Reads go through `Deref`.
pub struct Tracked<T> {
    value: T,
    generation: u64,
}

impl<T> Tracked<T> {
    pub fn new(value: T) -> Self {
        Tracked {
            value,
            generation: next_generation(),
        }
    }

    /// Equal generations mean equal contents.
    pub fn generation(&self) -> u64 {
        self.generation
    }
}

impl<T> Deref for Tracked<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.value
    }
}

impl<T> DerefMut for Tracked<T> {
    fn deref_mut(&mut self) -> &mut T {
        self.generation = next_generation();
        &mut self.value
    }
}

impl<T: Default> Default for Tracked<T> {
    fn default() -> Self {
        Tracked::new(T::default())
    }
}

impl<T: Clone> Clone for Tracked<T> {
    fn clone(&self) -> Self {
        Tracked {
            value: self.value.clone(),
            generation: self.generation,
        }
    }

    fn clone_from(&mut self, source: &Self) {
        self.value.clone_from(&source.value);
        self.generation = source.generation;
    }
}

impl<T: PartialEq> PartialEq for Tracked<T> {
    fn eq(&self, other: &Self) -> bool {
        self.value == other.value
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for Tracked<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.value.fmt(f)
    }
}

impl<T> From<T> for Tracked<T> {
    fn from(value: T) -> Self {
        Tracked::new(value)
    }
}

impl<T: IntoIterator> IntoIterator for Tracked<T> {
    type Item = T::Item;
    type IntoIter = T::IntoIter;
    fn into_iter(self) -> Self::IntoIter {
        self.value.into_iter()
    }
}

impl<'a, T> IntoIterator for &'a Tracked<T>
where
    &'a T: IntoIterator,
{
    type Item = <&'a T as IntoIterator>::Item;
    type IntoIter = <&'a T as IntoIterator>::IntoIter;
    fn into_iter(self) -> Self::IntoIter {
        (&self.value).into_iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn mutable_access_changes_the_generation_and_clones_share_it() {
        let mut a: Tracked<BTreeMap<String, u32>> = Tracked::default();
        let g0 = a.generation();
        assert_eq!(a.len(), 0);
        assert_eq!(a.generation(), g0, "reads keep it");
        a.insert("x".into(), 1);
        let g1 = a.generation();
        assert_ne!(g1, g0);
        let mut b = a.clone();
        assert_eq!(b.generation(), g1, "a clone has the same content");
        b.insert("y".into(), 2);
        assert_ne!(b.generation(), g1);
        assert_eq!(a.generation(), g1, "the original did not change");
        assert_ne!(a, b);
        a.clone_from(&b);
        assert_eq!(
            a.generation(),
            b.generation(),
            "copied content, copied generation"
        );
        assert_eq!(a, b);
        // Two collections built apart never share a generation.
        let c: Tracked<BTreeMap<String, u32>> = Tracked::default();
        assert_ne!(
            c.generation(),
            Tracked::<BTreeMap<String, u32>>::default().generation()
        );
        assert_eq!((&a).into_iter().count(), 2);
    }
}
