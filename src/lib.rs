//! schedscope: replays kube-scheduler v1.35's scheduling framework for one pod and
//! shows why it lands where it does, or nowhere.

pub mod act;
pub mod allocator;
pub mod cli;
pub mod clock;
pub mod config;
pub mod engine;
pub mod explain;
pub mod model;
pub mod render;
pub mod report;
pub mod signals;
pub mod source;
pub mod testing;
pub mod text;
pub mod theme;
pub mod tui;
