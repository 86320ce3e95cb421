//! `--redact-names`: a keyed hash of names and label values, at the paths the
//! allowlist keeps ([`NAMES`], a table per kind like the allowlist's).

use std::collections::BTreeMap;

use serde_json::Value;

use super::Part::{self, Group, Paths};
use super::{Entry, Table, expand, parts_of, segments};
use How::*;

/// Maps names and label values to `x` + 20 hex digits of HMAC-SHA256 under a key:
/// the same input always gives the same output, so every reference (a pod's
/// nodeName and the node, a claim and its volume, a selector and the labels it
/// matches, a namespace and its `kubernetes.io/metadata.name` label) still matches,
/// and the output is a valid DNS label and label value.
///
/// [`hash_names`] first ranks every name it will hash; a ranked name maps to `x`,
/// its rank in 6 base-36 digits, then 14 hex digits of the HMAC: the pseudonyms sort
/// as the originals do, so every order the scheduler reads from names (ties between
/// nodes broken by name order, claims, devices, queue order) is the same, and the
/// same key and input give the same output.
pub struct NameHasher {
    key: Vec<u8>,
    /// Every mapping made, hashed → original, so a caller holding the key can read
    /// answers back.
    pub seen: BTreeMap<String, String>,
    /// Each name's place among all the names of the input, in byte order.
    ranks: BTreeMap<String, usize>,
    /// While ranking: every name asked for.
    recording: Option<std::collections::BTreeSet<String>>,
}

/// Digits of a rank: 36^6, over two billion distinct names.
const RANK_DIGITS: usize = 6;

/// `n` in `RANK_DIGITS` lowercase base-36 digits, which sort as the numbers do.
fn base36(mut n: usize) -> String {
    let mut digits = [b'0'; RANK_DIGITS];
    for d in digits.iter_mut().rev() {
        *d = b"0123456789abcdefghijklmnopqrstuvwxyz"[n % 36];
        n /= 36;
    }
    String::from_utf8_lossy(&digits).into_owned()
}

/// A random key for one run (the default of `--redact-names`).
pub fn random_key() -> Result<Vec<u8>, getrandom::Error> {
    let mut key = vec![0u8; 32];
    getrandom::fill(&mut key)?;
    Ok(key)
}

fn hmac_sha256(key: &[u8], msg: &[u8]) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    const BLOCK: usize = 64;
    let mut k = [0u8; BLOCK];
    if key.len() > BLOCK {
        k[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        k[..key.len()].copy_from_slice(key);
    }
    let pad = |b: u8| k.map(|x| x ^ b);
    let inner = Sha256::new()
        .chain_update(pad(0x36))
        .chain_update(msg)
        .finalize();
    Sha256::new()
        .chain_update(pad(0x5c))
        .chain_update(inner)
        .finalize()
        .into()
}

impl NameHasher {
    pub fn new(key: &[u8]) -> Self {
        NameHasher {
            key: key.to_vec(),
            seen: BTreeMap::new(),
            ranks: BTreeMap::new(),
            recording: None,
        }
    }

    pub fn hash(&mut self, s: &str) -> String {
        if s.is_empty() {
            return String::new();
        }
        if let Some(names) = &mut self.recording {
            names.insert(s.to_string());
        }
        let mac = hmac_sha256(&self.key, s.as_bytes());
        let hex: String = mac[..10].iter().map(|b| format!("{b:02x}")).collect();
        let out = match self.ranks.get(s) {
            Some(&rank) => format!("x{}{}", base36(rank), &hex[..20 - RANK_DIGITS]),
            None => format!("x{hex}"),
        };
        self.seen.insert(out.clone(), s.to_string());
        out
    }

    /// A label, taint or extended-resource key the cluster chose, hashed part by part
    /// so a prefixed key stays prefixed; well-known keys stay.
    fn key(&mut self, key: &str) -> String {
        if well_known_key(key) {
            return key.to_string();
        }
        let parts: Vec<String> = key.split('/').map(|p| self.hash(p)).collect();
        parts.join("/")
    }

    /// A resource name: the native ones (`cpu`, `hugepages-2Mi`, ...) and those of a
    /// `kubernetes.io/` prefix stay; any other, an extended resource, is hashed (a
    /// prefixed one keeps its prefix, so it stays extended).
    fn resource_key(&mut self, name: &str) -> String {
        const NATIVE: &[&str] = &["cpu", "memory", "ephemeral-storage", "pods", "storage"];
        let native = NATIVE.contains(&name)
            || name.starts_with("hugepages-")
            || name.starts_with("attachable-volumes-");
        if native {
            name.to_string()
        } else {
            self.key(name)
        }
    }

    /// A label value, hashed; integers stay (node affinity `Gt`/`Lt` compare them as
    /// numbers), and multi-zone values (`a__b`, which VolumeZone splits) are hashed
    /// zone by zone, so they still hold the zones a node's label names.
    fn label_value(&mut self, value: &str) -> String {
        if value.parse::<i64>().is_ok() {
            return value.to_string();
        }
        let parts: Vec<String> = value.split("__").map(|p| self.hash(p)).collect();
        parts.join("__")
    }

    fn value(&mut self, v: &mut Value, how: How) {
        match (how, v) {
            (_, Value::Array(items)) => {
                for item in items {
                    self.value(item, how);
                }
            }
            (How::Name, Value::String(s)) => *s = self.hash(s),
            // Built-in classes (system-node-critical, ...) are known by name.
            (How::ClassName, Value::String(s)) if !s.starts_with("system-") => *s = self.hash(s),
            // ImageLocality looks a pod's image up, normalized (`:latest` added when
            // untagged), among a node's image names as they are. Hash the pod's name
            // normalized and the node's as is, each with a tag so normalizing the
            // hash changes nothing: the same images still match, and no others.
            (How::Image, Value::String(s)) => {
                let normalized = crate::engine::plugins::image_locality::normalized_image_name(s);
                *s = format!("{}:h", self.hash(&normalized));
            }
            (How::NodeImage, Value::String(s)) => *s = format!("{}:h", self.hash(s)),
            (How::Request, Value::String(s)) => {
                let parts: Vec<String> = s.split('/').map(|p| self.hash(p)).collect();
                *s = parts.join("/");
            }
            (How::Labels, Value::Object(map)) => {
                let labels = std::mem::take(map);
                for (k, mut val) in labels {
                    if let Value::String(s) = &mut val {
                        *s = self.label_value(s);
                    }
                    map.insert(self.key(&k), val);
                }
            }
            (How::Selectors, v @ Value::Object(_)) => self.selectors(v),
            (How::Taints, Value::Object(t)) => {
                if let Some(Value::String(s)) = t.get_mut("key") {
                    *s = self.key(s);
                }
                if let Some(Value::String(s)) = t.get_mut("value") {
                    *s = self.hash(s);
                }
            }
            (How::LabelKey, Value::String(s)) => *s = self.key(s),
            (How::Resources, Value::Object(map)) => {
                let resources = std::mem::take(map);
                for (k, val) in resources {
                    map.insert(self.resource_key(&k), val);
                }
            }
            (How::NameKeys, Value::Object(map)) => {
                let named = std::mem::take(map);
                for (k, val) in named {
                    map.insert(self.hash(&k), val);
                }
            }
            // The wildcard addresses mean "every address" to NodePorts: they stay.
            (How::Address, Value::String(s)) if !matches!(s.as_str(), "" | "0.0.0.0" | "::") => {
                *s = self.hash(s)
            }
            _ => {}
        }
    }

    /// Every label selector, node selector term and namespace list under `v`.
    fn selectors(&mut self, v: &mut Value) {
        match v {
            Value::Array(items) => items.iter_mut().for_each(|i| self.selectors(i)),
            Value::Object(map) => {
                for (k, child) in map.iter_mut() {
                    match k.as_str() {
                        "matchLabels" => self.value(child, How::Labels),
                        "matchExpressions" | "matchLabelExpressions" => {
                            for e in child.as_array_mut().into_iter().flatten() {
                                for val in e
                                    .get_mut("values")
                                    .and_then(Value::as_array_mut)
                                    .into_iter()
                                    .flatten()
                                {
                                    if let Value::String(s) = val {
                                        *s = self.label_value(s);
                                    }
                                }
                                if let Some(Value::String(k)) = e.get_mut("key") {
                                    *k = self.key(k);
                                }
                            }
                        }
                        // Label keys named on their own: the domain a term or
                        // constraint spreads over, and keys whose values are copied.
                        "topologyKey" | "matchLabelKeys" | "mismatchLabelKeys" => {
                            self.value(child, How::LabelKey)
                        }
                        // Node fields: metadata.name, the node's name.
                        "matchFields" => {
                            for e in child.as_array_mut().into_iter().flatten() {
                                if let Some(vals) = e.get_mut("values") {
                                    self.value(vals, How::Name);
                                }
                            }
                        }
                        "namespaces" => self.value(child, How::Name),
                        _ => self.selectors(child),
                    }
                }
            }
            _ => {}
        }
    }
}

/// Keys Kubernetes itself defines (`kubernetes.io/hostname`,
/// `topology.kubernetes.io/zone`, `node.kubernetes.io/unschedulable`,
/// `scheduling.x-k8s.io/pod-group`, ...): the scheduler reads them by name, and they
/// say nothing about the cluster.
fn well_known_key(key: &str) -> bool {
    let Some((prefix, _)) = key.rsplit_once('/') else {
        return false;
    };
    prefix == "kubernetes.io"
        || prefix == "k8s.io"
        || prefix.ends_with(".kubernetes.io")
        || prefix.ends_with(".k8s.io")
        || prefix.ends_with("x-k8s.io")
}

#[derive(Clone, Copy, Debug)]
enum How {
    Name,
    ClassName,
    Image,
    NodeImage,
    Labels,
    Selectors,
    Taints,
    /// A label key (or a list of them), standing alone.
    LabelKey,
    /// A map of resource names: extended resources (`example.com/gpu`) are hashed,
    /// native ones (`cpu`, `hugepages-2Mi`) stay.
    Resources,
    /// A map keyed by names (a PodDisruptionBudget's `disruptedPods`).
    NameKeys,
    /// An IP address a host port binds.
    Address,
    /// A DRA request reference, `request` or `request/subrequest`: each part
    /// hashed, so a subrequest still names its parent.
    Request,
}

impl Entry for (&'static str, How) {
    type Out = (String, How);
    fn under(self, prefix: &str) -> (String, How) {
        (format!("{prefix}{}", self.0), self.1)
    }
}

const VOLUME_IDS: &[(&str, How)] = &[
    ("gcePersistentDisk.pdName", Name),
    ("awsElasticBlockStore.volumeID", Name),
    ("rbd.monitors", Name),
    ("rbd.pool", Name),
    ("rbd.image", Name),
    ("iscsi.targetPortal", Name),
    ("iscsi.iqn", Name),
    ("azureDisk.diskName", Name),
    ("azureDisk.diskURI", Name),
    ("azureFile.shareName", Name),
    ("azureFile.secretName", Name),
    ("azureFile.secretNamespace", Name),
    ("cinder.volumeID", Name),
    ("vsphereVolume.volumePath", Name),
    ("portworxVolume.volumeID", Name),
];

const PVC: &[(&str, How)] = &[
    ("storageClassName", ClassName),
    ("volumeAttributesClassName", ClassName),
    ("resources.requests", Resources),
    ("resources.limits", Resources),
    ("volumeName", Name),
    ("selector", Selectors),
    ("dataSource.name", Name),
    ("dataSourceRef.name", Name),
    ("dataSourceRef.namespace", Name),
];

// A claim request names its device class, directly or among alternatives.
const DEVICE_CLASSES: &[(&str, How)] = &[
    ("requests.name", Name),
    ("requests.firstAvailable.name", Name),
    ("constraints.requests", Request),
    ("requests.exactly.deviceClassName", ClassName),
    ("requests.firstAvailable.deviceClassName", ClassName),
    ("requests.exactly.tolerations", Taints),
    ("requests.firstAvailable.tolerations", Taints),
];

const POD_TEMPLATE: &[Part<(&str, How)>] = &[
    Paths("metadata.", &[("labels", Labels)]),
    Paths(
        "spec.",
        &[
            ("nodeName", Name),
            ("priorityClassName", ClassName),
            ("runtimeClassName", ClassName),
            ("nodeSelector", Labels),
            ("affinity", Selectors),
            ("topologySpreadConstraints", Selectors),
            ("tolerations", Taints),
            ("schedulingGates.name", Name),
            ("readinessGates.conditionType", Name),
            ("resourceClaims.name", Name),
            ("resourceClaims.resourceClaimName", Name),
            ("resourceClaims.resourceClaimTemplateName", Name),
            ("containers.name", Name),
            ("containers.image", Image),
            ("containers.resources.claims.name", Name),
            ("containers.resources.claims.request", Name),
            ("containers.resources.requests", Resources),
            ("containers.resources.limits", Resources),
            ("containers.ports.hostIP", Address),
            ("initContainers.name", Name),
            ("initContainers.image", Image),
            ("initContainers.resources.claims.name", Name),
            ("initContainers.resources.claims.request", Name),
            ("initContainers.resources.requests", Resources),
            ("initContainers.resources.limits", Resources),
            ("initContainers.ports.hostIP", Address),
            ("overhead", Resources),
            ("volumes.name", Name),
            ("volumes.persistentVolumeClaim.claimName", Name),
            (
                "volumes.ephemeral.volumeClaimTemplate.metadata.labels",
                Labels,
            ),
        ],
    ),
    Paths("spec.volumes.ephemeral.volumeClaimTemplate.spec.", PVC),
    Paths("spec.volumes.", VOLUME_IDS),
];

const PV: &[Part<(&str, How)>] = &[
    Paths(
        "",
        &[
            ("storageClassName", ClassName),
            ("claimRef.name", Name),
            ("claimRef.namespace", Name),
            ("claimRef.uid", Name),
            ("csi.volumeHandle", Name),
            ("local.path", Name),
            ("nodeAffinity", Selectors),
            ("capacity", Resources),
            ("volumeAttributesClassName", ClassName),
        ],
    ),
    Paths("", VOLUME_IDS),
];

const CONTAINER_STATUSES: &[(&str, How)] = &[
    ("name", Name),
    ("image", Name),
    ("imageID", Name),
    ("allocatedResources", Resources),
    ("resources.requests", Resources),
    ("resources.limits", Resources),
];

const SETS: &[Part<(&str, How)>] = &[
    Paths("spec.", &[("selector", Selectors), ("serviceName", Name)]),
    Group("spec.template.", POD_TEMPLATE),
    Paths(
        "spec.volumeClaimTemplates.",
        &[("metadata.name", Name), ("metadata.labels", Labels)],
    ),
    Paths("spec.volumeClaimTemplates.spec.", PVC),
];

/// Where names and label values sit, kind by kind (paths as in the allowlist),
/// besides the metadata every kind has (see [`name_paths`]).
const NAMES: Table<(&str, How)> = &[
    (
        "Pod",
        &[
            Group("", POD_TEMPLATE),
            Paths("", &[("status.nominatedNodeName", Name)]),
            Paths(
                "status.resourceClaimStatuses.",
                &[("name", Name), ("resourceClaimName", Name)],
            ),
            Paths("status.containerStatuses.", CONTAINER_STATUSES),
            Paths("status.initContainerStatuses.", CONTAINER_STATUSES),
        ],
    ),
    (
        "Node",
        &[Paths(
            "",
            &[
                ("spec.taints", Taints),
                ("status.images.names", NodeImage),
                ("status.allocatable", Resources),
                ("status.capacity", Resources),
            ],
        )],
    ),
    ("PersistentVolume", &[Group("spec.", PV)]),
    (
        "PersistentVolumeClaim",
        &[
            Paths("spec.", PVC),
            Paths(
                "status.",
                &[("allocatedResources", Resources), ("capacity", Resources)],
            ),
        ],
    ),
    (
        "StorageClass",
        &[Paths("", &[("allowedTopologies", Selectors)])],
    ),
    (
        "CSINode",
        &[Paths(
            "spec.drivers.",
            &[("nodeID", Name), ("topologyKeys", LabelKey)],
        )],
    ),
    (
        "CSIStorageCapacity",
        &[Paths(
            "",
            &[("storageClassName", ClassName), ("nodeTopology", Selectors)],
        )],
    ),
    (
        "VolumeAttachment",
        &[
            Paths(
                "spec.",
                &[("nodeName", Name), ("source.persistentVolumeName", Name)],
            ),
            Group("spec.source.inlineVolumeSpec.", PV),
        ],
    ),
    (
        "PodDisruptionBudget",
        &[Paths(
            "",
            &[
                ("spec.selector", Selectors),
                ("status.disruptedPods", NameKeys),
            ],
        )],
    ),
    ("Service", &[Paths("spec.", &[("selector", Labels)])]),
    (
        "ReplicationController",
        &[
            Paths("spec.", &[("selector", Labels)]),
            Group("spec.template.", POD_TEMPLATE),
        ],
    ),
    ("ReplicaSet", SETS),
    ("StatefulSet", SETS),
    (
        "RuntimeClass",
        &[Paths(
            "",
            &[
                ("handler", Name),
                ("scheduling.nodeSelector", Labels),
                ("scheduling.tolerations", Taints),
                ("overhead.podFixed", Resources),
            ],
        )],
    ),
    (
        "ResourceSlice",
        &[Paths(
            "spec.",
            &[
                ("nodeName", Name),
                ("nodeSelector", Selectors),
                ("pool.name", Name),
                ("devices.name", Name),
                ("devices.nodeName", Name),
                ("devices.nodeSelector", Selectors),
                ("devices.taints", Taints),
            ],
        )],
    ),
    (
        "ResourceClaim",
        &[
            Paths("spec.devices.", DEVICE_CLASSES),
            Paths(
                "status.",
                &[
                    ("allocation.nodeSelector", Selectors),
                    ("allocation.devices.results.request", Request),
                    ("allocation.devices.results.pool", Name),
                    ("allocation.devices.results.device", Name),
                    ("allocation.devices.results.shareID", Name),
                    ("allocation.devices.results.tolerations", Taints),
                    ("reservedFor.name", Name),
                    ("reservedFor.uid", Name),
                ],
            ),
        ],
    ),
    (
        "ResourceClaimTemplate",
        &[
            Paths("spec.spec.devices.", DEVICE_CLASSES),
            Paths("", &[("spec.metadata.labels", Labels)]),
        ],
    ),
    (
        "PodGroup",
        &[Paths("spec.", &[("minResources", Resources)])],
    ),
];

/// Where names and label values sit in an object of `kind`: its [`NAMES`] entry,
/// then its own name, labels and the metadata every kind has.
fn name_paths(kind: &str) -> Vec<(String, How)> {
    let mut paths = Vec::new();
    expand("", parts_of(NAMES, kind).unwrap_or_default(), &mut paths);
    // Names of classes and drivers are what other objects call them by; a CSI
    // driver's name is software, not the cluster's (translation and limits read it).
    let own_name = match kind {
        "PriorityClass" | "StorageClass" | "RuntimeClass" | "DeviceClass" => Some(ClassName),
        "CSIDriver" => None,
        _ => Some(Name),
    };
    if let Some(how) = own_name {
        paths.push(("metadata.name".into(), how));
    }
    // A pod's labels are already listed as its template's.
    if kind != "Pod" {
        paths.push(("metadata.labels".into(), Labels));
    }
    expand(
        "metadata.",
        &[Paths(
            "",
            &[
                ("namespace", Name),
                ("uid", Name),
                ("ownerReferences.name", Name),
                ("ownerReferences.uid", Name),
                ("annotations.[volume.kubernetes.io/selected-node]", Name),
            ],
        )],
        &mut paths,
    );
    paths
}

/// Apply `f` to the value at `path`, walking arrays element by element.
fn at_path(v: &mut Value, path: &[String], f: &mut dyn FnMut(&mut Value)) {
    match v {
        Value::Array(items) => items.iter_mut().for_each(|i| at_path(i, path, f)),
        Value::Object(map) => match path.split_first() {
            None => f(v),
            Some((first, rest)) => {
                if let Some(child) = map.get_mut(first.as_str()) {
                    at_path(child, rest, f);
                }
            }
        },
        _ if path.is_empty() => f(v),
        _ => {}
    }
}

/// Hash names and label values in redacted objects (apply [`redact_object`] first:
/// only the fields it keeps are covered). A PodScheduled message quotes names, so
/// it goes too.
pub fn hash_names(objects: &mut [Value], hasher: &mut NameHasher) {
    // Every name first, on a copy, so the pseudonyms can keep the names' order.
    let mut ranking = NameHasher::new(&hasher.key);
    ranking.recording = Some(Default::default());
    hash_each(&mut objects.to_vec(), &mut ranking);
    let names = ranking.recording.take().unwrap_or_default();
    hasher
        .ranks
        .extend(names.into_iter().enumerate().map(|(i, n)| (n, i)));
    hash_each(objects, hasher);
}

fn hash_each(objects: &mut [Value], hasher: &mut NameHasher) {
    for o in objects {
        let kind = o["kind"].as_str().unwrap_or_default().to_string();
        // A namespaced object without a namespace is in `default`, which must hash
        // like every `default` spelled out.
        if crate::source::kinds::namespaced(&kind)
            && let Some(meta) = o.get_mut("metadata").and_then(Value::as_object_mut)
        {
            meta.entry("namespace").or_insert_with(|| "default".into());
        }
        let paths = name_paths(&kind);
        debug_assert!(
            paths
                .iter()
                .enumerate()
                .all(|(i, (p, _))| !paths[..i].iter().any(|(q, _)| q == p)),
            "a path listed twice would be hashed twice"
        );
        for (path, how) in paths {
            at_path(o, &segments(&path), &mut |v| hasher.value(v, how));
        }
        if let Some(Value::Array(conds)) = o.pointer_mut("/status/conditions") {
            for c in conds.iter_mut().filter_map(Value::as_object_mut) {
                c.remove("message");
            }
        }
    }
}

#[cfg(test)]
mod name_tests {
    use super::super::kinds;
    use super::*;

    #[test]
    fn no_kind_lists_a_name_path_twice() {
        for k in kinds() {
            let paths = name_paths(k);
            let mut seen = std::collections::BTreeSet::new();
            for (p, _) in &paths {
                assert!(seen.insert(p.clone()), "{k}: {p} twice");
            }
        }
    }

    #[test]
    fn hmac_matches_rfc_4231_case_2() {
        let mac = hmac_sha256(b"Jefe", b"what do ya want for nothing?");
        let hex: String = mac.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(
            hex,
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }
}
