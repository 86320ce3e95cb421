//! The CLI's renderings of the presentation model: an explain answer as the fidelity
//! JSON schema (also as YAML) and a human table, the pods listing, the simulation
//! timeline; [`escape`] makes untrusted text safe to print on a terminal.

pub mod capacity;
pub mod escape;
pub mod json;
pub mod pods;
pub mod simulation;
pub mod table;
pub mod whatif;
