//! Deterministic synthetic clusters for benchmarks and scale tests: a `kind: List`
//! JSON document as `kubectl get -o json` would print it.

use std::fmt::Write;

#[derive(Clone, Debug)]
pub struct SyntheticSpec {
    pub nodes: usize,
    /// Bound pods, spread round-robin over the nodes.
    pub pods: usize,
    pub zones: usize,
}

impl Default for SyntheticSpec {
    fn default() -> Self {
        SyntheticSpec {
            nodes: 5_000,
            pods: 150_000,
            zones: 3,
        }
    }
}

/// Pending pods the synthetic cluster always contains.
pub const PLAIN_POD: &str = "bench/pending-plain";
pub const ANTI_AFFINITY_POD: &str = "bench/pending-anti-affinity";
pub const SPREAD_POD: &str = "bench/pending-spread";

/// A small linear congruential generator: stable across platforms and runs.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}

pub fn synthetic_cluster_json(spec: &SyntheticSpec) -> String {
    synthetic_cluster_with_pending_json(spec, 0)
}

/// Name of the `i`-th extra plain pending pod (namespace `bench-sim`).
pub fn pending_pod_key(i: usize) -> String {
    format!("bench-sim/pending-{i:06}")
}

/// As [`synthetic_cluster_json`], plus `extra_pending` plain pending pods (for `simulate`):
/// `bench-sim/pending-NNNNNN`, one container each, 100–400m cpu and 128–512Mi.
pub fn synthetic_cluster_with_pending_json(spec: &SyntheticSpec, extra_pending: usize) -> String {
    let mut rng = Lcg(42);
    let mut s = String::with_capacity((spec.pods + extra_pending) * 900 + spec.nodes * 700);
    s.push_str(r#"{"apiVersion":"v1","kind":"List","items":["#);
    let mut first = true;
    let mut sep = |s: &mut String| {
        if !first {
            s.push(',');
        }
        first = false;
    };
    for i in 0..spec.nodes {
        sep(&mut s);
        let zone = i % spec.zones.max(1);
        let cpu = [16, 32, 64][i % 3];
        let taint = if i % 50 == 0 {
            r#","taints":[{"key":"dedicated","value":"infra","effect":"NoSchedule"}]"#
        } else {
            ""
        };
        let _ = write!(
            s,
            r#"{{"apiVersion":"v1","kind":"Node","metadata":{{"name":"node-{i:05}","labels":{{"kubernetes.io/hostname":"node-{i:05}","kubernetes.io/os":"linux","topology.kubernetes.io/zone":"zone-{zone}","node.kubernetes.io/instance-type":"m{cpu}"}}}},"spec":{{"unschedulable":{unsched}{taint}}},"status":{{"allocatable":{{"cpu":"{cpu}","memory":"{mem}Gi","pods":"110","ephemeral-storage":"200Gi"}},"capacity":{{"cpu":"{cpu}","memory":"{mem}Gi","pods":"110","ephemeral-storage":"200Gi"}},"images":[{{"names":["registry.example.com/app:{v}"],"sizeBytes":{size}}}],"conditions":[{{"type":"Ready","status":"True"}}]}}}}"#,
            unsched = i % 97 == 0,
            mem = cpu * 4,
            v = i % 7,
            size = 100_000_000 + (i % 7) * 50_000_000,
        );
    }
    for j in 0..spec.pods {
        sep(&mut s);
        let node = j % spec.nodes.max(1);
        let app = rng.next() % 200;
        let cpu = 100 + (rng.next() % 4) * 100;
        let mem = 128 + (rng.next() % 4) * 128;
        let anti = if j % 100 == 0 {
            format!(
                r#","affinity":{{"podAntiAffinity":{{"requiredDuringSchedulingIgnoredDuringExecution":[{{"labelSelector":{{"matchLabels":{{"app":"app-{app}"}}}},"topologyKey":"kubernetes.io/hostname"}}]}}}}"#
            )
        } else {
            String::new()
        };
        let _ = write!(
            s,
            r#"{{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"pod-{j:06}","namespace":"ns-{ns}","uid":"uid-{j}","labels":{{"app":"app-{app}","tier":"t{tier}"}},"creationTimestamp":"2026-01-01T00:00:00Z"}},"spec":{{"nodeName":"node-{node:05}","containers":[{{"name":"main","image":"registry.example.com/app:{v}","resources":{{"requests":{{"cpu":"{cpu}m","memory":"{mem}Mi"}}}}}}]{anti}}},"status":{{"phase":"Running","startTime":"2026-01-01T00:00:00Z"}}}}"#,
            ns = j % 20,
            tier = j % 3,
            v = j % 7,
        );
    }
    let pending = [
        (PLAIN_POD, String::new()),
        (
            ANTI_AFFINITY_POD,
            r#","affinity":{"podAntiAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[{"labelSelector":{"matchLabels":{"app":"app-7"}},"topologyKey":"kubernetes.io/hostname"}]}}"#.to_string(),
        ),
        (
            SPREAD_POD,
            r#","topologySpreadConstraints":[{"maxSkew":1,"topologyKey":"topology.kubernetes.io/zone","whenUnsatisfiable":"DoNotSchedule","labelSelector":{"matchLabels":{"app":"app-7"}}},{"maxSkew":2,"topologyKey":"kubernetes.io/hostname","whenUnsatisfiable":"ScheduleAnyway","labelSelector":{"matchLabels":{"app":"app-7"}}}]"#.to_string(),
        ),
    ];
    for (key, extra) in pending {
        sep(&mut s);
        let (ns, name) = key.split_once('/').unwrap_or(("bench", key));
        let _ = write!(
            s,
            r#"{{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"{name}","namespace":"{ns}","uid":"uid-{name}","labels":{{"app":"app-7"}},"creationTimestamp":"2026-01-02T00:00:00Z"}},"spec":{{"containers":[{{"name":"main","image":"registry.example.com/app:3","resources":{{"requests":{{"cpu":"500m","memory":"512Mi"}}}}}}]{extra}}},"status":{{"phase":"Pending"}}}}"#
        );
    }
    let mut rng = Lcg(7);
    for i in 0..extra_pending {
        sep(&mut s);
        let cpu = 100 + (rng.next() % 4) * 100;
        let mem = 128 + (rng.next() % 4) * 128;
        let key = pending_pod_key(i);
        let (ns, name) = key.split_once('/').unwrap_or(("bench-sim", &key));
        let _ = write!(
            s,
            r#"{{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"{name}","namespace":"{ns}","uid":"uid-sim-{i}","labels":{{"app":"sim-{app}"}},"creationTimestamp":"2026-01-03T00:00:00Z"}},"spec":{{"containers":[{{"name":"main","image":"registry.example.com/app:{v}","resources":{{"requests":{{"cpu":"{cpu}m","memory":"{mem}Mi"}}}}}}]}},"status":{{"phase":"Pending"}}}}"#,
            app = i % 50,
            v = i % 7,
        );
    }
    s.push_str("]}");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generates_valid_json_with_the_requested_counts() {
        let text = synthetic_cluster_json(&SyntheticSpec {
            nodes: 10,
            pods: 25,
            zones: 3,
        });
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        let items = v["items"].as_array().unwrap();
        let kinds = |k: &str| items.iter().filter(|i| i["kind"] == k).count();
        assert_eq!(kinds("Node"), 10);
        assert_eq!(kinds("Pod"), 25 + 3);
        let with = synthetic_cluster_with_pending_json(
            &SyntheticSpec {
                nodes: 10,
                pods: 25,
                zones: 3,
            },
            7,
        );
        let v: serde_json::Value = serde_json::from_str(&with).unwrap();
        let items = v["items"].as_array().unwrap();
        let pending = items
            .iter()
            .filter(|i| i["kind"] == "Pod" && i["spec"]["nodeName"].is_null())
            .count();
        assert_eq!(pending, 3 + 7);
        assert!(with.contains("\"bench-sim\"") && with.contains("pending-000006"));
        // Deterministic.
        assert_eq!(
            text,
            synthetic_cluster_json(&SyntheticSpec {
                nodes: 10,
                pods: 25,
                zones: 3
            })
        );
    }
}
