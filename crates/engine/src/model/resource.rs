//! Resource vectors as the scheduler cache keeps them (`framework.Resource`).

use std::collections::BTreeMap;

pub const CPU: &str = "cpu";
pub const MEMORY: &str = "memory";
pub const EPHEMERAL_STORAGE: &str = "ephemeral-storage";
pub const PODS: &str = "pods";

/// Requests the scoring path assumes for a container that names no cpu / memory.
pub const DEFAULT_MILLI_CPU_REQUEST: i64 = 100;
pub const DEFAULT_MEMORY_REQUEST: i64 = 200 * 1024 * 1024;

/// cpu in millicores, everything else in whole units; scalar (extended, hugepages,
/// attachable-volumes) resources by name in a sorted map so iteration is stable.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Resource {
    pub milli_cpu: i64,
    pub memory: i64,
    pub ephemeral_storage: i64,
    pub allowed_pod_number: i64,
    pub scalar: BTreeMap<String, i64>,
}

impl Resource {
    /// Value of a named resource (cpu in milli); 0 when absent.
    pub fn get(&self, name: &str) -> i64 {
        match name {
            CPU => self.milli_cpu,
            MEMORY => self.memory,
            EPHEMERAL_STORAGE => self.ephemeral_storage,
            PODS => self.allowed_pod_number,
            other => self.scalar.get(other).copied().unwrap_or(0),
        }
    }

    pub fn set(&mut self, name: &str, value: i64) {
        match name {
            CPU => self.milli_cpu = value,
            MEMORY => self.memory = value,
            EPHEMERAL_STORAGE => self.ephemeral_storage = value,
            PODS => self.allowed_pod_number = value,
            other => {
                self.scalar.insert(other.to_string(), value);
            }
        }
    }

    /// Go's int64 arithmetic, as the scheduler cache's `Resource.Add` does: sums of
    /// absurd requests wrap instead of stopping the replay.
    pub fn add(&mut self, other: &Resource) {
        self.milli_cpu = self.milli_cpu.wrapping_add(other.milli_cpu);
        self.memory = self.memory.wrapping_add(other.memory);
        self.ephemeral_storage = self.ephemeral_storage.wrapping_add(other.ephemeral_storage);
        self.allowed_pod_number = self
            .allowed_pod_number
            .wrapping_add(other.allowed_pod_number);
        for (k, v) in &other.scalar {
            let sum = self.scalar.entry(k.clone()).or_insert(0);
            *sum = sum.wrapping_add(*v);
        }
    }

    /// The inverse of [`Resource::add`], wrapping the same way.
    pub fn sub(&mut self, other: &Resource) {
        self.milli_cpu = self.milli_cpu.wrapping_sub(other.milli_cpu);
        self.memory = self.memory.wrapping_sub(other.memory);
        self.ephemeral_storage = self.ephemeral_storage.wrapping_sub(other.ephemeral_storage);
        self.allowed_pod_number = self
            .allowed_pod_number
            .wrapping_sub(other.allowed_pod_number);
        for (k, v) in &other.scalar {
            let diff = self.scalar.entry(k.clone()).or_insert(0);
            *diff = diff.wrapping_sub(*v);
        }
    }

    pub fn is_zero(&self) -> bool {
        self.milli_cpu == 0
            && self.memory == 0
            && self.ephemeral_storage == 0
            && self.scalar.values().all(|v| *v == 0)
    }
}

/// `v1helper.IsScalarResourceName`: extended resources, hugepages, native
/// `kubernetes.io/` names and attachable volumes.
pub fn is_scalar_resource_name(name: &str) -> bool {
    is_extended_resource_name(name)
        || name.starts_with("hugepages-")
        || is_prefixed_native_resource(name)
        || name.starts_with("attachable-volumes-")
}

/// `v1helper.IsExtendedResourceName`: fully qualified, not in the kubernetes.io
/// namespace, not prefixed by `requests.`.
pub fn is_extended_resource_name(name: &str) -> bool {
    if is_native_resource(name) || name.starts_with("requests.") {
        return false;
    }
    // Must be a qualified name with a domain prefix.
    name.contains('/')
}

fn is_native_resource(name: &str) -> bool {
    !name.contains('/') || name.contains("kubernetes.io/")
}

fn is_prefixed_native_resource(name: &str) -> bool {
    name.contains("kubernetes.io/")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two pods whose requests sum past i64 (found by the fuzz test): the sum wraps
    /// as Go's does, and taking one pod away restores the other exactly.
    #[test]
    fn sums_wrap_like_go_and_sub_undoes_add() {
        let mut huge = Resource {
            milli_cpu: i64::MAX,
            memory: i64::MAX,
            ..Resource::default()
        };
        huge.scalar.insert("example.com/gpu".into(), i64::MAX);
        let mut node = huge.clone();
        node.add(&huge);
        assert_eq!(node.milli_cpu, i64::MAX.wrapping_add(i64::MAX));
        assert_eq!(node.get("example.com/gpu"), -2);
        node.sub(&huge);
        assert_eq!(node, huge);
    }
}
