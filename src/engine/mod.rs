//! The pure scheduling engine: cluster model in, trace out. No terminal, network,
//! clock or files here.

pub mod cycle;
pub mod fit_error;
pub mod framework;
pub mod plugins;
pub mod status;

pub use framework::{Ctx, CycleState, Framework};
pub use status::{Code, Status};
