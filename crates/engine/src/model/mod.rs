//! The cluster model: nodes, pods and the objects scheduling reads.

pub mod cluster;
pub mod dra;
pub mod label_index;
pub mod labels;
pub mod node;
pub mod node_cache;
pub mod pod;
pub mod quantity;
pub mod recorded;
pub mod requests;
pub mod resource;
pub mod sym;
pub mod testing;
pub mod tracked;

pub use cluster::{Cluster, ImageState, PodGroup};
pub use node::{Node, NodeInfo};
pub use pod::{FieldError, HostPort, Pod, PodKey, PreemptionPolicy};
pub use quantity::Quantity;
pub use resource::Resource;
pub use sym::Sym;
