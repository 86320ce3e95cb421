//! Indexes the engine derives from the nodes alone (their labels, their images),
//! built on first use and dropped whenever a node is added, changed or removed.
//! Binding or deleting pods leaves them as they are, so a simulation that binds
//! thousands of pods builds each once instead of once per cycle, as upstream keeps
//! its image summary and node tree up to date from node events. Type-erased and
//! keyed by a name: the model knows no engine type.

use std::any::Any;
use std::sync::{Arc, RwLock};

/// Key, the stamp of the state it was built from (see
/// [`NodeCache::get_or_build_stamped`]), value.
type Entry = (String, Vec<u64>, Arc<dyn Any + Send + Sync>);

#[derive(Default)]
pub struct NodeCache(RwLock<Vec<Entry>>);

impl NodeCache {
    /// The value cached under `key`, else `build()`'s, cached. A value of another
    /// type under the same key is replaced.
    pub fn get_or_build<T: Any + Send + Sync>(
        &self,
        key: &str,
        build: impl FnOnce() -> T,
    ) -> Arc<T> {
        self.get_or_build_stamped(key, &[], build)
    }

    /// As [`get_or_build`](NodeCache::get_or_build), for an index that also depends
    /// on state outside the nodes: `stamp` names that state (generations of what it
    /// reads), and a value cached under another stamp is rebuilt.
    pub fn get_or_build_stamped<T: Any + Send + Sync>(
        &self,
        key: &str,
        stamp: &[u64],
        build: impl FnOnce() -> T,
    ) -> Arc<T> {
        let found = |entries: &[Entry]| {
            entries
                .iter()
                .find(|(k, s, _)| k == key && s == stamp)
                .and_then(|(_, _, v)| v.clone().downcast::<T>().ok())
        };
        if let Some(v) = found(&self.0.read().unwrap_or_else(|e| e.into_inner())) {
            return v;
        }
        // Built outside the lock: two threads may both build, the first stored wins.
        let built = Arc::new(build());
        let mut entries = self.0.write().unwrap_or_else(|e| e.into_inner());
        if let Some(v) = found(&entries) {
            return v;
        }
        entries.retain(|(k, _, _)| k != key);
        entries.push((key.to_string(), stamp.to_vec(), built.clone()));
        built
    }

    /// Drops every cached index (a node changed).
    pub fn clear(&mut self) {
        self.0.get_mut().unwrap_or_else(|e| e.into_inner()).clear();
    }
}

impl Clone for NodeCache {
    fn clone(&self) -> Self {
        NodeCache(RwLock::new(
            self.0.read().unwrap_or_else(|e| e.into_inner()).clone(),
        ))
    }
}

impl std::fmt::Debug for NodeCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let entries = self.0.read().unwrap_or_else(|e| e.into_inner());
        f.debug_list()
            .entries(entries.iter().map(|(k, _, _)| k))
            .finish()
    }
}
