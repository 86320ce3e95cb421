//! schedscope: replays kube-scheduler v1.35's scheduling framework for one pod and
//! shows why it lands where it does, or nowhere.

// The pure layers live in their own crates, so the compiler keeps them free of the
// terminal, the network and files; they are re-exported under their module names.
pub use schedscope_engine::{capacity, config, engine, model, text, version, whatif};
pub use schedscope_report as report;

pub mod act;
pub mod allocator;
pub mod cli;
pub mod clock;
pub mod explain;
pub mod render;
pub mod signals;
pub mod source;
pub mod testing;
pub mod theme;
pub mod tui;
