//! A live cluster → the model: one kube-rs watcher per kind the engine reads, all
//! feeding one [`Cluster`] through its incremental upsert/delete methods, with the
//! same per-object conversion and defaulting as snapshots ([`super::convert`]).
//!
//! Each watcher's list (`Init` … `InitDone`) replaces that kind in the model:
//! objects are upserted as they arrive and, at `InitDone`, whatever the list did not
//! name is deleted. A failing watcher is dropped and, after a bounded backoff (or at
//! once on [`LiveControl::retry`]), started again with a fresh list, so the source
//! is "connected" only when every kind has listed since its last error. A 403 holds
//! that kind (listed again after the backoff, or on a retry; a 404 each minute): a
//! required kind cannot be done without, an optional one
//! (VolumeAttachment, CSIStorageCapacity, PodGroup, Event) is left out and the plugins
//! that read it say so ([`Cluster::unreadable_kinds`]). Secrets are never read. Changes
//! are published debounced, as owned [`DataUpdate`]s, from a tokio runtime on its
//! own thread; the per-kind state goes to a [`LiveControl`].
//!
//! [`Cluster`]: crate::model::Cluster
//! [`Cluster::unreadable_kinds`]: crate::model::Cluster::unreadable_kinds
//! [`DataUpdate`]: super::DataUpdate

pub mod bounded;
mod connection;
mod kinds;
mod state;
#[cfg(test)]
mod tests;
mod watchers;

pub use connection::{
    CONNECT_TIMEOUT, DEBOUNCE, FIRST_ANSWER, LiveError, LiveOptions, client_config, connect,
    describe, probe,
};
pub use state::{
    BACKOFF_CAP, BACKOFF_FIRST, KindHealth, KindPhase, LiveControl, LiveState, RECHECK_REFUSED,
};
pub(crate) use watchers::pod_group_resource;
pub(in crate::source) use watchers::resource_name;
pub use watchers::{Change, load_once, run, run_with, spawn};
