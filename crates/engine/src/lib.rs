//! schedscope-engine: kube-scheduler's scheduling framework replayed in pure Rust.
//!
//! A [`model::Cluster`] goes in; [`engine::cycle`] runs one scheduling cycle for a pod
//! (every extension point, the default plugins, any `KubeSchedulerConfiguration`
//! from [`config`]) and returns an [`engine::trace::Trace`]: per-node Filter verdicts
//! with their statuses, per-plugin scores, the chosen node, the FitError and the
//! preemption victims. [`engine::scheduler::Scheduler`] runs the queue, Permit and
//! binding cycles over many pods.
//!
//! Pure by construction: no terminal, network, async runtime, clock or file access;
//! times come in as arguments. The layers inside point one way: `text` and `model` at
//! the bottom, `config` above them, `engine` above those.
//!
//! The crate's README follows, with an example that runs as a doc test.
#![doc = include_str!("../README.md")]

pub mod capacity;
pub mod config;
pub mod engine;
pub mod model;
pub mod text;
pub mod version;
pub mod whatif;
