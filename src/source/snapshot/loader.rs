//! The loader: decoded objects applied in input order, then what the API server
//! would have defaulted or admitted, into one [`Cluster`].

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::node::v1 as nodev1;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::value::RawValue;

use super::Snapshot;
use super::decode::{Body, CompactLoc, Decoded, Loc, PodEntry, Start, decode_any, object_name};
use super::dumps::{self, DumpKind, ImpliedKind};
use super::json::{JsonTop, json_found, json_item, kubectl_prefix};
use super::parallel::{CHUNK, par_map};
use super::text::{Format, bytes_to_text, lone_cr_to_lf};
use super::warnings::{dump_warnings, warnings};
use super::yaml::{YamlCtx, YamlUnit, strip_location, yaml_units};
use crate::engine::prepare::NodeIndexes;
use crate::model::{Cluster, Node, Pod};
use crate::source::convert::{self, Priorities};
use crate::source::{LoadReport, Origin, SnapshotError};

// ---------------------------------------------------------------------------------
// The loader

#[derive(Default)]
pub(super) struct Loader {
    pub(super) report: LoadReport,
    pub(super) nodes: Vec<Node>,
    /// Boxed: each is freed as the model takes it, so the pods are not held twice.
    #[allow(clippy::vec_box)]
    pub(super) pods: Vec<Box<PodEntry>>,
    pub(super) runtime_classes: BTreeMap<String, nodev1::RuntimeClass>,
    pub(super) cluster: Cluster,
    /// Objects decoded and applied (of every kind, skipped ones too).
    pub(super) decoded: u64,
    /// What YAML aliases may add beyond the text, over every document and file.
    pub(super) alias_allowance: crate::text::AliasAllowance,
    /// The kind the current file's path implies for objects without one (an
    /// Insights archive's `config/node/*.json`).
    pub(super) implied: Option<ImpliedKind>,
    /// In an Insights archive, a file whose objects lack `kind` and whose path
    /// implies none is another record of the archive, left out, not an error.
    pub(super) kindless_files_skipped: bool,
}

/// How the load report counts the FailedScheduling events read (other Events are
/// skipped).
/// Below this many nodes the first cycle builds its node indexes in well under a
/// millisecond, less than starting a thread to build them ahead.
const BUILD_AHEAD_MIN_NODES: usize = 1_000;

const SCHEDULING_EVENTS: &str = "Event (FailedScheduling)";

pub(super) fn ns_key(meta: &ObjectMeta) -> String {
    format!(
        "{}/{}",
        meta.namespace.as_deref().unwrap_or("default"),
        meta.name.as_deref().unwrap_or_default()
    )
}

/// Whether a file mentions the key every object the loader reads must have. UTF-16
/// text holds it as wide characters, so such files are always held to the rules.
pub(super) fn mentions_kind(bytes: &[u8]) -> bool {
    let wide = bytes.starts_with(&[0xff, 0xfe]) || bytes.starts_with(&[0xfe, 0xff]);
    wide || bytes.windows(4).any(|w| w == b"kind")
}

/// Counts an object read at an older apiVersion of the same schema, for the load
/// report to say so.
fn count_older(report: &mut LoadReport, older: bool, what: &str) {
    if older {
        *report.older_versions.entry(what.into()).or_default() += 1;
    }
}

/// A DRA object into the model (the cluster keeps them behind its DRA index); `apply`
/// passes only these variants.
fn put_dra(c: &mut Cluster, d: Decoded, report: &mut LoadReport) {
    match d {
        Decoded::DeviceClass(o) => put(
            c.device_classes_mut(),
            "DeviceClass",
            name_key(&o.metadata),
            *o,
            report,
        ),
        Decoded::ResourceSlice(o) => put(
            c.resource_slices_mut(),
            "ResourceSlice",
            name_key(&o.metadata),
            std::sync::Arc::new(*o),
            report,
        ),
        Decoded::ResourceClaim(o) => put(
            c.resource_claims_mut(),
            "ResourceClaim",
            ns_key(&o.metadata),
            *o,
            report,
        ),
        Decoded::ResourceClaimTemplate(o) => put(
            &mut c.resource_claim_templates,
            "ResourceClaimTemplate",
            ns_key(&o.metadata),
            *o,
            report,
        ),
        _ => {}
    }
}

/// Insert an object by key; a different object already there is replaced and named
/// in the report, an identical one is counted as read twice.
fn put<V: PartialEq>(
    map: &mut BTreeMap<String, V>,
    kind: &str,
    key: String,
    v: V,
    report: &mut LoadReport,
) {
    match map.entry(key) {
        std::collections::btree_map::Entry::Vacant(e) => {
            e.insert(v);
        }
        std::collections::btree_map::Entry::Occupied(mut e) => {
            if *e.get() == v {
                report.repeated += 1;
            } else {
                report.replaced.push(format!("{kind} {}", e.key()));
                e.insert(v);
            }
        }
    }
}

pub(super) fn name_key(meta: &ObjectMeta) -> String {
    meta.name.clone().unwrap_or_default()
}

impl Loader {
    pub(super) fn add_bytes(&mut self, bytes: &[u8], file: &str) -> Result<(), SnapshotError> {
        self.report.files.push(file.to_string());
        self.report.bytes += bytes.len() as u64;
        let text = bytes_to_text(bytes, file)?;
        self.add_text(&text, file)
    }

    /// A file met in a directory: read as [`Loader::add_bytes`] does, but a file that
    /// holds no Kubernetes objects (empty, binary, or YAML/JSON without a `kind`
    /// anywhere) is left out and listed in the report. A file that names
    /// them is held to the usual rules: a truncated `pods.yaml` is an error, not a
    /// silently missing namespace.
    pub(super) fn add_directory_file(
        &mut self,
        bytes: &[u8],
        file: &str,
    ) -> Result<(), SnapshotError> {
        let before = (
            self.report.files.len(),
            self.report.bytes,
            self.report.documents,
        );
        let why = match self.add_bytes(bytes, file) {
            Err(SnapshotError::EmptyFile { .. }) => "empty",
            Err(SnapshotError::NotText { .. }) => "not text",
            Err(
                SnapshotError::Syntax { .. }
                | SnapshotError::NotAnObject { .. }
                | SnapshotError::MissingKind { .. },
            ) if !mentions_kind(bytes) => "no Kubernetes objects",
            Err(SnapshotError::MissingKind { .. }) if self.kindless_files_skipped => {
                "no `kind`, and its path implies none"
            }
            // A configuration kept beside the dump (as in `examples/`).
            Err(SnapshotError::InvalidObject { object, .. })
                if object == crate::config::v1::KIND =>
            {
                "a scheduler configuration (pass it with --config)"
            }
            r => return r,
        };
        // Nothing of the file was applied: every object needs a `kind`.
        self.report.files.truncate(before.0);
        self.report.bytes = before.1;
        self.report.documents = before.2;
        self.report
            .skipped_files
            .push((file.to_string(), why.to_string()));
        Ok(())
    }

    pub(super) fn add_text(&mut self, text: &str, file: &str) -> Result<(), SnapshotError> {
        let file_idx = self.report.files.len().saturating_sub(1);
        // A `kubectl cluster-info dump` on stdout: its container logs are blanked.
        let without_logs = dumps::strip_container_logs(text).map(|(t, stripped)| {
            let facts = &mut self.report.dump;
            facts.kind.get_or_insert(DumpKind::ClusterInfoDump);
            facts.container_logs += stripped.blocks;
            facts.logs_unterminated |= stripped.unterminated;
            t
        });
        let text = lone_cr_to_lf(without_logs.as_deref().unwrap_or(text));
        let body = text.trim_start_matches('\u{feff}');
        if body.trim().is_empty() {
            return Err(SnapshotError::EmptyFile {
                file: file.to_string(),
            });
        }
        let by_name = Format::from_name(file);
        let looks_json = body.trim_start().starts_with(['{', '[']);
        if by_name == Some(Format::Json) {
            return self.add_json(body, file, file_idx);
        }
        if looks_json {
            // A `.yaml` file holding JSON (JSON is YAML): take the fast path, unless
            // it is really YAML flow style that JSON cannot parse.
            let mut trial = Loader {
                implied: self.implied,
                ..Loader::default()
            };
            trial.report.files = self.report.files.clone();
            match trial.add_json(body, file, file_idx) {
                Ok(()) => {
                    self.merge(trial);
                    return Ok(());
                }
                Err(SnapshotError::Syntax { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        self.add_yaml(body, file, file_idx)
    }

    /// Take over what a trial loader read.
    pub(super) fn merge(&mut self, mut other: Loader) {
        self.report.documents += other.report.documents;
        self.report.replaced.extend(other.report.replaced);
        self.report.repeated += other.report.repeated;
        for (k, v) in other.report.older_versions {
            *self.report.older_versions.entry(k).or_default() += v;
        }
        self.report.terminal_pods += other.report.terminal_pods;
        self.report.dump.merge(other.report.dump);
        for (k, v) in other.report.skipped_kinds {
            *self.report.skipped_kinds.entry(k).or_default() += v;
        }
        self.nodes.extend(other.nodes);
        self.pods.extend(other.pods);
        if let Some(n) = other.report.objects.get(SCHEDULING_EVENTS) {
            *self
                .report
                .objects
                .entry(SCHEDULING_EVENTS.into())
                .or_default() += n;
        }
        for (pod, ev) in std::mem::take(&mut other.cluster.recorded_events) {
            crate::model::recorded::keep_latest(&mut self.cluster.recorded_events, pod, ev);
        }
        let decoded = self.decoded + other.decoded;
        for (_, rc) in other.runtime_classes {
            self.apply(Decoded::RuntimeClass(Box::new(rc)));
        }
        self.decoded = decoded;
        let mut c = other.cluster;
        // The two kinds the model keeps behind accessors (changing them drops an index).
        for (k, v) in std::mem::take(c.resource_slices_mut()) {
            put(
                self.cluster.resource_slices_mut(),
                "ResourceSlice",
                k,
                v,
                &mut self.report,
            );
        }
        for (k, v) in std::mem::take(c.resource_claims_mut()) {
            put(
                self.cluster.resource_claims_mut(),
                "ResourceClaim",
                k,
                v,
                &mut self.report,
            );
        }
        macro_rules! take {
            ($($field:ident: $kind:literal),*) => {$(
                for (k, v) in c.$field {
                    put(&mut self.cluster.$field, $kind, k, v, &mut self.report);
                }
            )*};
        }
        take!(
            persistent_volumes: "PersistentVolume",
            persistent_volume_claims: "PersistentVolumeClaim",
            storage_classes: "StorageClass",
            csi_nodes: "CSINode",
            csi_drivers: "CSIDriver",
            volume_attachments: "VolumeAttachment",
            csi_storage_capacities: "CSIStorageCapacity",
            namespaces: "Namespace",
            pod_disruption_budgets: "PodDisruptionBudget",
            priority_classes: "PriorityClass",
            services: "Service",
            replica_sets: "ReplicaSet",
            stateful_sets: "StatefulSet",
            replication_controllers: "ReplicationController",
            pod_groups: "PodGroup",
            device_classes: "DeviceClass",
            resource_claim_templates: "ResourceClaimTemplate"
        );
    }

    pub(super) fn add_json(
        &mut self,
        text: &str,
        file: &str,
        file_idx: usize,
    ) -> Result<(), SnapshotError> {
        let base = text.as_ptr() as usize;
        let syntax = |e: serde_json::Error, document: Option<usize>| SnapshotError::Syntax {
            at: Box::new(Origin {
                file: file.to_string(),
                document,
                item: None,
                array: false,
                line: Some(e.line() as u64),
                column: Some(e.column() as u64),
            }),
            format: "JSON",
            message: strip_location(e.to_string()),
        };
        let stream = serde_json::Deserializer::from_str(text).into_iter::<&RawValue>();
        let mut document = 0;
        for raw in stream {
            let raw = raw.map_err(|e| syntax(e, Some(document + 1)))?;
            document += 1;
            self.report.documents += 1;
            let s = raw.get();
            let loc = Loc {
                file,
                text,
                document,
                item: None,
                array: false,
                start: Start::Offset(s.as_ptr() as usize - base),
            };
            match s.as_bytes().first() {
                Some(b'{') => {}
                Some(b'[') => {
                    let items: Vec<&RawValue> =
                        serde_json::from_str(s).map_err(|e| syntax(e, Some(document)))?;
                    let loc = Loc { array: true, ..loc };
                    self.json_items(&items, None, None, &loc, file_idx)?;
                    continue;
                }
                _ => {
                    return Err(SnapshotError::NotAnObject {
                        at: loc.origin(),
                        found: json_found(s).into(),
                    });
                }
            }
            let (api_version, kind) = match kubectl_prefix(s) {
                Some((av, kind)) if !kind.ends_with("List") => {
                    (Some(Cow::Borrowed(av)), Some(Cow::Borrowed(kind)))
                }
                _ => {
                    let top: JsonTop = serde_json::from_str(s).map_err(|e| {
                        let (ns, name) = Body::Json(s).name();
                        SnapshotError::InvalidObject {
                            at: loc.origin_at(Some(e.line() as u64), Some(e.column() as u64)),
                            object: object_name("object", ns.as_deref(), name.as_deref()),
                            field: None,
                            message: strip_location(e.to_string()),
                        }
                    })?;
                    if let Some(items) = &top.items
                        && let Some(k) = top.kind.as_deref()
                        && k.ends_with("List")
                    {
                        let item_kind = k.strip_suffix("List").filter(|k| !k.is_empty());
                        self.json_items(
                            items,
                            item_kind,
                            top.api_version.as_deref(),
                            &loc,
                            file_idx,
                        )?;
                        continue;
                    }
                    match (top.kind, self.implied) {
                        (None, Some(implied)) => {
                            let label = format!("{} ({})", implied.kind, implied.pattern);
                            *self.report.dump.implied_kinds.entry(label).or_default() += 1;
                            (
                                Some(Cow::Borrowed(implied.api_version)),
                                Some(Cow::Borrowed(implied.kind)),
                            )
                        }
                        (kind, _) => (top.api_version, kind),
                    }
                }
            };
            self.object(
                kind.as_deref(),
                api_version.as_deref(),
                Body::Json(s),
                &loc,
                file_idx,
            )?;
        }
        if document == 0 {
            return Err(SnapshotError::EmptyFile {
                file: file.to_string(),
            });
        }
        Ok(())
    }

    /// Items of a List. `item_kind`/`list_api_version` fill in for items of a typed
    /// list (`PodList`), which the API server prints without kind and apiVersion.
    /// Large lists are decoded on several threads; results are applied in input order,
    /// so the outcome (and the first error reported) does not depend on timing.
    pub(super) fn json_items(
        &mut self,
        items: &[&RawValue],
        item_kind: Option<&str>,
        list_api_version: Option<&str>,
        list_loc: &Loc<'_>,
        file_idx: usize,
    ) -> Result<(), SnapshotError> {
        let chunks = items.len().div_ceil(CHUNK);
        let outs = par_map(chunks, |c| {
            let mut out = Vec::with_capacity(CHUNK);
            let from = c * CHUNK;
            let chunk = &items[from..((c + 1) * CHUNK).min(items.len())];
            for (k, raw) in chunk.iter().enumerate() {
                let r = json_item(
                    raw.get(),
                    from + k,
                    item_kind,
                    list_api_version,
                    list_loc,
                    file_idx,
                );
                let failed = r.is_err();
                out.push(r);
                if failed {
                    break;
                }
            }
            out
        });
        for r in outs.into_iter().flatten() {
            self.apply(r?);
        }
        Ok(())
    }

    pub(super) fn add_yaml(
        &mut self,
        text: &str,
        file: &str,
        file_idx: usize,
    ) -> Result<(), SnapshotError> {
        // Documents, and the items of kubectl-style Lists in groups, are parsed and
        // decoded in parallel, then applied in input order.
        let units = yaml_units(text, true);
        if units.is_empty() {
            return Err(SnapshotError::EmptyFile {
                file: file.to_string(),
            });
        }
        let allowance = self.alias_allowance.clone();
        let before = allowance.left();
        let ctx = YamlCtx {
            file,
            allowance: &allowance,
            text,
            file_idx,
        };
        let outs = par_map(units.len(), |u| ctx.run(&units[u]));
        if outs.iter().any(|o| o.is_none()) {
            // The same text is parsed again: what the first pass drew is given back.
            allowance.reset(before);
            // A List split into groups did not parse group by group (anchors shared
            // between items, unusual layout): parse whole documents instead, which
            // also reports any real error in the right place.
            let units = yaml_units(text, false);
            let outs = par_map(units.len(), |u| ctx.run(&units[u]));
            return self.apply_yaml(&units, outs);
        }
        self.apply_yaml(&units, outs)
    }

    pub(super) fn apply_yaml(
        &mut self,
        units: &[YamlUnit<'_>],
        outs: Vec<Option<Vec<Result<Decoded, SnapshotError>>>>,
    ) -> Result<(), SnapshotError> {
        for (unit, out) in units.iter().zip(outs) {
            if unit.first_of_document {
                self.report.documents += 1;
            }
            for r in out.into_iter().flatten() {
                self.apply(r?);
            }
        }
        Ok(())
    }

    pub(super) fn object(
        &mut self,
        kind: Option<&str>,
        api_version: Option<&str>,
        body: Body<'_>,
        loc: &Loc<'_>,
        file_idx: usize,
    ) -> Result<(), SnapshotError> {
        let decoded = decode_any(kind, api_version, &body, loc, file_idx)?;
        self.apply(decoded);
        Ok(())
    }

    pub(super) fn apply(&mut self, d: Decoded) {
        self.decoded += 1;
        let report = &mut self.report;
        let c = &mut self.cluster;
        match d {
            Decoded::Skip(kind) => *self.report.skipped_kinds.entry(kind).or_default() += 1,
            Decoded::TerminalPod(key, phase) => {
                self.report.terminal_pods += 1;
                c.finished_pods.insert(key, phase);
            }
            Decoded::Node(n, kubelet) => {
                if let Some(v) = kubelet {
                    *self.report.dump.kubelet_versions.entry(v).or_default() += 1;
                }
                self.nodes.push(*n)
            }
            Decoded::Fact(f) => self.report.dump.apply(f),
            Decoded::Pod(p) => self.pods.push(p),
            Decoded::PersistentVolume(o) => put(
                &mut c.persistent_volumes,
                "PersistentVolume",
                name_key(&o.metadata),
                *o,
                report,
            ),
            Decoded::PersistentVolumeClaim(o) => put(
                &mut c.persistent_volume_claims,
                "PersistentVolumeClaim",
                ns_key(&o.metadata),
                *o,
                report,
            ),
            Decoded::StorageClass(o) => put(
                &mut c.storage_classes,
                "StorageClass",
                name_key(&o.metadata),
                *o,
                report,
            ),
            Decoded::CSINode(o) => put(
                &mut c.csi_nodes,
                "CSINode",
                name_key(&o.metadata),
                *o,
                report,
            ),
            Decoded::CSIDriver(o) => put(
                &mut c.csi_drivers,
                "CSIDriver",
                name_key(&o.metadata),
                *o,
                report,
            ),
            Decoded::CSIStorageCapacity(o) => put(
                &mut c.csi_storage_capacities,
                "CSIStorageCapacity",
                ns_key(&o.metadata),
                *o,
                report,
            ),
            Decoded::VolumeAttachment(o) => put(
                &mut c.volume_attachments,
                "VolumeAttachment",
                name_key(&o.metadata),
                *o,
                report,
            ),
            Decoded::Namespace(o) => put(
                &mut c.namespaces,
                "Namespace",
                name_key(&o.metadata),
                *o,
                report,
            ),
            Decoded::PodDisruptionBudget(o, older) => {
                count_older(report, older, "PodDisruptionBudget (policy/v1beta1)");
                put(
                    &mut c.pod_disruption_budgets,
                    "PodDisruptionBudget",
                    ns_key(&o.metadata),
                    *o,
                    report,
                )
            }
            Decoded::PriorityClass(o, older) => {
                count_older(report, older, "PriorityClass (scheduling.k8s.io/v1beta1)");
                put(
                    &mut c.priority_classes,
                    "PriorityClass",
                    name_key(&o.metadata),
                    *o,
                    report,
                )
            }
            Decoded::Service(o) => put(&mut c.services, "Service", ns_key(&o.metadata), *o, report),
            Decoded::ReplicaSet(o) => put(
                &mut c.replica_sets,
                "ReplicaSet",
                ns_key(&o.metadata),
                *o,
                report,
            ),
            Decoded::StatefulSet(o) => put(
                &mut c.stateful_sets,
                "StatefulSet",
                ns_key(&o.metadata),
                *o,
                report,
            ),
            Decoded::ReplicationController(o) => put(
                &mut c.replication_controllers,
                "ReplicationController",
                ns_key(&o.metadata),
                *o,
                report,
            ),
            Decoded::RuntimeClass(o) => put(
                &mut self.runtime_classes,
                "RuntimeClass",
                name_key(&o.metadata),
                *o,
                report,
            ),
            Decoded::PodGroup(o) => {
                let key = format!("{}/{}", o.namespace, o.name);
                put(&mut c.pod_groups, "PodGroup", key, *o, report)
            }
            d @ (Decoded::DeviceClass(_)
            | Decoded::ResourceSlice(_)
            | Decoded::ResourceClaim(_)
            | Decoded::ResourceClaimTemplate(_)) => put_dra(c, d, report),
            Decoded::Event(e) => {
                let (pod, ev) = *e;
                *report.objects.entry(SCHEDULING_EVENTS.into()).or_default() += 1;
                crate::model::recorded::keep_latest(&mut c.recorded_events, pod, ev);
            }
        }
    }

    pub(super) fn origin_of(&self, loc: CompactLoc) -> Box<Origin> {
        Box::new(Origin {
            file: self
                .report
                .files
                .get(loc.file as usize)
                .cloned()
                .unwrap_or_default(),
            document: Some(loc.document as usize),
            item: loc.item.map(|i| i as usize),
            array: loc.array,
            line: None,
            column: None,
        })
    }

    pub(super) fn finish(mut self) -> Result<Snapshot, SnapshotError> {
        let mut cluster = std::mem::take(&mut self.cluster);
        cluster.dra_objects_known = true;

        // Nodes in name order (the model keeps them sorted; inserting in order is
        // cheap), the later of two same-named nodes winning.
        let mut nodes = std::mem::take(&mut self.nodes);
        nodes.reverse();
        nodes.sort_by(|a, b| a.name.cmp(&b.name));
        let report = &mut self.report;
        nodes.dedup_by(|dropped, kept| {
            // `dedup_by` keeps the first of equal neighbours: after the reverse and
            // stable sort, that is the last one read.
            if dropped.name != kept.name {
                return false;
            }
            if dropped == kept {
                report.repeated += 1;
            } else {
                report.replaced.push(format!("Node {}", kept.name));
            }
            true
        });
        share_image_names(&mut nodes);
        let node_count = nodes.len();
        for n in nodes {
            cluster.upsert_node(n);
        }
        // What the first cycle would build from the nodes alone, built meanwhile on
        // the core the pods' indexing below leaves idle.
        let ahead = (node_count >= BUILD_AHEAD_MIN_NODES).then(|| {
            let nodes = cluster.nodes().iter().map(|n| n.node.clone()).collect();
            std::thread::spawn(move || NodeIndexes::build(nodes))
        });

        let classes = std::mem::take(&mut cluster.priority_classes);
        let priorities = Priorities::new(&classes);
        let pods = std::mem::take(&mut self.pods);
        let mut admitted = Vec::with_capacity(pods.len());
        for entry in pods {
            let object = |p: &Pod| format!("Pod {}/{}", p.namespace, p.name);
            let mut pod = match entry.raw {
                Some(mut raw) => {
                    convert::apply_runtime_overhead(&mut raw, &self.runtime_classes);
                    Arc::new(
                        Pod::from_k8s(&raw).map_err(|e| SnapshotError::InvalidObject {
                            at: self.origin_of(entry.loc),
                            object: object(&entry.pod),
                            field: Some(e.path),
                            message: e.message,
                        })?,
                    )
                }
                // Shared from here on: a pod is 736 bytes, and moving it through
                // the steps below cost this serial phase as much as the indexing.
                None => Arc::new(entry.pod),
            };
            // The only reference yet: no copy is made.
            let admitted_pod = Arc::make_mut(&mut pod);
            priorities
                .admit(admitted_pod, entry.explicit_priority, entry.explicit_policy)
                .map_err(|class| SnapshotError::MissingPriorityClass {
                    at: self.origin_of(entry.loc),
                    object: object(&pod),
                    class,
                })?;
            admitted.push((pod.key(), pod));
        }
        let kept = last_of_each_key(admitted, &mut self.report);
        cluster.add_new_pods(kept);
        if let Some(Ok(indexes)) = ahead.map(std::thread::JoinHandle::join) {
            indexes.install(&cluster);
        }
        cluster.priority_classes = classes;

        let r = &mut self.report;
        let mut count = |kind: &str, n: usize| {
            if n > 0 {
                r.objects.insert(kind.to_string(), n);
            }
        };
        count("Node", node_count);
        count("Pod", cluster.pod_count());
        count("PersistentVolume", cluster.persistent_volumes.len());
        count(
            "PersistentVolumeClaim",
            cluster.persistent_volume_claims.len(),
        );
        count("StorageClass", cluster.storage_classes.len());
        count("CSINode", cluster.csi_nodes.len());
        count("CSIDriver", cluster.csi_drivers.len());
        count("VolumeAttachment", cluster.volume_attachments.len());
        count("CSIStorageCapacity", cluster.csi_storage_capacities.len());
        count("Namespace", cluster.namespaces.len());
        count("PodDisruptionBudget", cluster.pod_disruption_budgets.len());
        count("PriorityClass", cluster.priority_classes.len());
        count("Service", cluster.services.len());
        count("ReplicaSet", cluster.replica_sets.len());
        count("StatefulSet", cluster.stateful_sets.len());
        count(
            "ReplicationController",
            cluster.replication_controllers.len(),
        );
        count("RuntimeClass", self.runtime_classes.len());
        count("PodGroup", cluster.pod_groups.len());
        count("DeviceClass", cluster.device_classes.len());
        count("ResourceSlice", cluster.resource_slices().len());
        count("ResourceClaim", cluster.resource_claims().len());
        count(
            "ResourceClaimTemplate",
            cluster.resource_claim_templates.len(),
        );
        self.report.warnings = warnings(&self.report, &cluster);
        if let Some(w) = read_recorded_version(&mut cluster) {
            self.report.warnings.push(w);
        }
        self.report
            .warnings
            .extend(dump_warnings(&self.report.dump, &cluster));
        self.report.notes = dumps::notes(&self.report.dump, !self.report.from_directory);
        if cluster.kube_version.is_none() {
            let (release, notes) = self.report.dump.release(&cluster);
            self.report.notes.extend(notes);
            if let Some(r) = release {
                self.report.notes.push(format!(
                    "kube-scheduler release {r}; --kube-version overrides it"
                ));
                cluster.kube_version = Some(r);
            }
        }
        Ok(Snapshot {
            cluster,
            report: self.report,
            stats: super::LoadStats::default(),
        })
    }
}

/// One allocation per distinct image name across all nodes.
fn share_image_names(nodes: &mut [Node]) {
    let mut seen: std::collections::HashSet<std::sync::Arc<str>> = Default::default();
    for n in nodes {
        for img in &mut n.images {
            for name in &mut img.names {
                match seen.get(name) {
                    Some(shared) => *name = std::sync::Arc::clone(shared),
                    None => {
                        seen.insert(std::sync::Arc::clone(name));
                    }
                }
            }
        }
    }
}

/// The pods read, in the order read, reduced to the last one under each
/// `namespace/name`, with the earlier ones counted as repeated (the same) or replaced
/// (different) the way upserting them in turn would count them. None is terminal:
/// decoding sets those aside (`Decoded::TerminalPod`).
fn last_of_each_key(
    pods: Vec<(String, Arc<Pod>)>,
    report: &mut LoadReport,
) -> Vec<(String, Arc<Pod>)> {
    let mut order: Vec<usize> = (0..pods.len()).collect();
    // Stable: a name read twice keeps its reading order. kubectl prints pods in
    // name order, which this sort finds already done.
    order.sort_by(|&a, &b| pods[a].0.cmp(&pods[b].0));
    let mut superseded = vec![false; pods.len()];
    let mut replaced = Vec::new();
    for run in order.chunk_by(|&a, &b| pods[a].0 == pods[b].0) {
        for pair in run.windows(2) {
            let (earlier, later) = (&pods[pair[0]].1, &pods[pair[1]].1);
            superseded[pair[0]] = true;
            if earlier == later {
                report.repeated += 1;
            } else {
                replaced.push((pair[1], format!("Pod {}", pods[pair[1]].0)));
            }
        }
    }
    replaced.sort_by_key(|(at, _)| *at);
    report
        .replaced
        .extend(replaced.into_iter().map(|(_, what)| what));
    pods.into_iter()
        .zip(superseded)
        .filter_map(|(p, gone)| (!gone).then_some(p))
        .collect()
}

/// The release `snapshot save` recorded (see [`crate::source::save::VERSION_ANNOTATION`])
/// becomes the cluster's. A release schedscope does not replay is said (as a
/// warning), and v1.35 is replayed.
fn read_recorded_version(cluster: &mut Cluster) -> Option<String> {
    use crate::source::save::{VERSION_ANNOTATION, VERSION_NAMESPACE};
    use crate::version::{KubeVersion, Release, VersionSource};
    let recorded = cluster
        .namespaces
        .get(VERSION_NAMESPACE)?
        .metadata
        .annotations
        .as_ref()?
        .get(VERSION_ANNOTATION)?;
    match KubeVersion::parse(recorded) {
        Ok(v) => {
            cluster.kube_version = Some(Release::new(v, VersionSource::Snapshot));
            None
        }
        Err(e) => Some(format!(
            "the snapshot records kube-scheduler {recorded:?}: {e}; replaying v1.35 (--kube-version chooses another)"
        )),
    }
}
