//! KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1): parsing, defaults,
//! merging with the default plugins, validation, and building each profile's
//! [`Framework`](crate::engine::Framework).

pub mod field;
