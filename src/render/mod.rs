//! Renderings of a [`Trace`](crate::engine::trace::Trace) for the CLI: the fidelity JSON
//! schema (also as YAML) and a human table; [`escape`] makes untrusted text safe to
//! print on a terminal.

pub mod escape;
pub mod json;
pub mod simulation;
pub mod table;
