//! Renderings of a [`Trace`](crate::trace::Trace) for the CLI: the fidelity JSON
//! schema (also as YAML) and a human table.

pub mod json;
pub mod simulation;
pub mod table;
