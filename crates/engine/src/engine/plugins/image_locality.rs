//! ImageLocality (Score): favours nodes that already have the pod's images, scaled by
//! how widely each image is spread over the cluster (so that one node holding a
//! popular image does not attract everything).

use std::sync::Arc;

use crate::engine::framework::{Ctx, CycleState, MAX_NODE_SCORE, Plugin, ScorePlugin};
use crate::engine::status::Status;
use crate::model::{Cluster, ImageState, NodeInfo, Pod};

pub const NAME: &str = "ImageLocality";

const MB: i64 = 1024 * 1024;
const MIN_THRESHOLD: i64 = 23 * MB;
const MAX_CONTAINER_THRESHOLD: i64 = 1000 * MB;

pub struct ImageLocality;

pub fn new(
    _args: &serde_json::Value,
    _fts: &crate::version::Features,
) -> Result<Arc<dyn Plugin>, String> {
    Ok(Arc::new(ImageLocality))
}

impl Plugin for ImageLocality {
    fn name(&self) -> &str {
        NAME
    }
    fn as_score(&self) -> Option<&dyn ScorePlugin> {
        Some(self)
    }
}

/// Append `:latest` unless the image already has a tag (a `:` after the last `/`).
pub fn normalized_image_name(name: &str) -> String {
    if has_tag(name) {
        name.to_string()
    } else {
        format!("{name}:latest")
    }
}

/// Whether the image has a tag: a `:` after the last `/`.
fn has_tag(name: &str) -> bool {
    // Go compares LastIndex values, with -1 for "absent".
    match (name.rfind(':'), name.rfind('/')) {
        (Some(c), Some(s)) => c > s,
        (Some(_), None) => true,
        (None, _) => false,
    }
}

impl ScorePlugin for ImageLocality {
    fn score(&self, cx: &Ctx, _state: &CycleState, pod: &Pod, node: &NodeInfo) -> (i64, Status) {
        let total_nodes = cx.cluster.nodes().len();
        // The cluster's own NodeInfo holds its image slots; a copy (of a node in a
        // simulation) searches its own list.
        let own = cx.cluster.own_node_position(node).is_some();
        let mut sum: i64 = 0;
        for image in pod.init_images.iter().chain(&pod.images) {
            let state = if own {
                on_node(cx.cluster, node, image)
            } else {
                scan_node(node, image).and_then(|name| cx.cluster.image_state(name))
            };
            if let Some(st) = state {
                sum =
                    sum.wrapping_add(scaled_image_score(st.size_bytes, st.num_nodes, total_nodes));
            }
        }
        let containers = pod.init_images.len() + pod.images.len();
        (calculate_priority(sum, containers), Status::success())
    }
}

/// The summary of `image` (normalised) when `node`, one of the cluster's own, lists it.
fn on_node<'c>(cluster: &'c Cluster, node: &NodeInfo, image: &str) -> Option<&'c ImageState> {
    let slot = if has_tag(image) {
        cluster.image_slot(image)
    } else {
        cluster.image_slot(&normalized_image_name(image))
    }?;
    node.image_slots.binary_search(&slot).ok()?;
    cluster.image_state_at(slot)
}

/// The node's image name that equals the normalised `image`, searched in its list.
fn scan_node<'n>(node: &'n NodeInfo, image: &str) -> Option<&'n str> {
    // Whether the pod's image is tagged is asked once, not per node image name.
    let wanted = NormalizedName::of(image);
    node.node
        .images
        .iter()
        .flat_map(|img| img.names.iter())
        .find(|n| wanted.is(n))
        .map(|n| &**n)
}

/// `normalized_image_name(image)`, without building it: the image as written when it
/// has a tag, else the image with `:latest` appended.
struct NormalizedName<'a> {
    image: &'a str,
    tagged: bool,
}

impl<'a> NormalizedName<'a> {
    fn of(image: &'a str) -> Self {
        NormalizedName {
            image,
            tagged: has_tag(image),
        }
    }

    /// `candidate == normalized_image_name(image)`.
    fn is(&self, candidate: &str) -> bool {
        const LATEST: &str = ":latest";
        if self.tagged {
            candidate == self.image
        } else {
            candidate.len() == self.image.len() + LATEST.len()
                && candidate.ends_with(LATEST)
                && candidate.starts_with(self.image)
        }
    }
}

/// `int64(float64(size) * (numNodes / totalNodes))`, in Go's float64 order.
fn scaled_image_score(size: i64, num_nodes: usize, total_nodes: usize) -> i64 {
    let spread = num_nodes as f64 / total_nodes as f64;
    (size as f64 * spread) as i64
}

fn calculate_priority(sum: i64, containers: usize) -> i64 {
    let max_threshold = MAX_CONTAINER_THRESHOLD * containers as i64;
    let sum = if sum < MIN_THRESHOLD {
        MIN_THRESHOLD
    } else if sum > max_threshold {
        max_threshold
    } else {
        sum
    };
    // A pod without containers would divide by a negative range; upstream does the
    // same arithmetic (API validation forbids such pods).
    let range = max_threshold - MIN_THRESHOLD;
    if range == 0 {
        return 0;
    }
    MAX_NODE_SCORE * (sum - MIN_THRESHOLD) / range
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::testing::{cluster, pod};
    use k8s_openapi::jiff::Timestamp;
    use serde_json::{Value, json};

    #[test]
    fn image_name_normalisation() {
        let cases = [
            ("nginx", "nginx:latest"),
            ("nginx:1.25", "nginx:1.25"),
            ("localhost:5000/app", "localhost:5000/app:latest"),
            ("localhost:5000/app:v1", "localhost:5000/app:v1"),
            (
                "ghcr.io/example/big@sha256:abc",
                "ghcr.io/example/big@sha256:abc",
            ),
            ("docker.io/library/small:1", "docker.io/library/small:1"),
        ];
        for (input, want) in cases {
            assert_eq!(normalized_image_name(input), want, "{input}");
            assert!(NormalizedName::of(input).is(want), "{input}");
        }
        assert!(!NormalizedName::of("nginx").is("nginx:1.25"));
        assert!(!NormalizedName::of("nginx:1.25").is("nginx:latest"));
        assert!(!NormalizedName::of("nginx").is("nginy:latest"));
    }

    fn img_node(name: &str, images: Value) -> Value {
        json!({
            "metadata": {"name": name},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                       "images": images}
        })
    }

    /// h45: two containers; big image on 2/5 nodes, small image on 2/5 nodes.
    #[test]
    fn h45_scores() {
        let big = "ghcr.io/example/big:1.0";
        let small = "docker.io/library/small:1";
        let c = cluster(
            vec![
                img_node(
                    "n1",
                    json!([{"names": [big], "sizeBytes": 943718400},
                                      {"names": [small], "sizeBytes": 31457280}]),
                ),
                img_node("n2", json!([{"names": [small], "sizeBytes": 31457280}])),
                img_node("n3", json!([])),
                img_node(
                    "n4",
                    json!([{"names": [big, "ghcr.io/example/big@sha256:abc"],
                                       "sizeBytes": 943718400}]),
                ),
                img_node(
                    "n5",
                    json!([{"names": ["docker.io/library/unrelated:1"],
                                       "sizeBytes": 2097152000}]),
                ),
            ],
            vec![],
        );
        let cx = Ctx {
            cluster: &c,
            now: Timestamp::UNIX_EPOCH,
        };
        let p = pod(json!({"metadata": {"name": "pending"},
            "spec": {"containers": [{"name": "a", "image": big}, {"name": "b", "image": small}]}}));
        let got: Vec<i64> = c
            .nodes()
            .iter()
            .map(|n| ImageLocality.score(&cx, &CycleState::default(), &p, n).0)
            .collect();
        assert_eq!(got, vec![17, 0, 0, 17, 0]);
        // A copy of a node (not the cluster's own) searches its list: same answer.
        let copies: Vec<i64> = c
            .nodes()
            .iter()
            .map(|n| {
                let copy = n.clone();
                ImageLocality
                    .score(&cx, &CycleState::default(), &p, &copy)
                    .0
            })
            .collect();
        assert_eq!(copies, got);
    }

    #[test]
    fn priority_clamps_to_thresholds() {
        let cases = [
            (0, 1, 0),
            (MIN_THRESHOLD, 1, 0),
            (MAX_CONTAINER_THRESHOLD, 1, 100),
            (10 * MAX_CONTAINER_THRESHOLD, 1, 100),
            (MAX_CONTAINER_THRESHOLD, 2, 49), // 100·977/1977 (MiB)
        ];
        for (sum, n, want) in cases {
            assert_eq!(calculate_priority(sum, n), want, "{sum} {n}");
        }
        assert_eq!(scaled_image_score(943718400, 2, 5), 377487360);
    }

    #[test]
    fn untagged_image_matches_latest_and_init_containers_count() {
        let c = cluster(
            vec![img_node(
                "n1",
                json!([{"names": ["app:latest"], "sizeBytes": 1_000_000_000}]),
            )],
            vec![],
        );
        let cx = Ctx {
            cluster: &c,
            now: Timestamp::UNIX_EPOCH,
        };
        let p = pod(json!({"metadata": {"name": "p"},
            "spec": {"initContainers": [{"name": "i", "image": "app"}],
                     "containers": [{"name": "c", "image": "other"}]}}));
        // sum = 1e9 (1 of 1 nodes), max = 2000 MiB:
        // 100 * (1e9 - 23 MiB) / (2000 MiB - 23 MiB) = 47
        let (s, st) = ImageLocality.score(&cx, &CycleState::default(), &p, &c.nodes()[0]);
        assert!(st.is_success());
        assert_eq!(
            s,
            100 * (1_000_000_000 - MIN_THRESHOLD) / (2000 * MB - MIN_THRESHOLD)
        );
        assert_eq!(s, 47);
    }
}
