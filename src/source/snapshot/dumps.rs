//! Dumps that are not plain `kubectl get` output, and what they say about the
//! cluster's own scheduler:
//! - `kubectl cluster-info dump` on stdout: `*List` objects interleaved with
//!   `==== START logs for container C of pod NS/P ====` … `==== END logs … ====`
//!   blocks (kubectl's `clusterinfo_dump.go`); its `--output-directory` layout is
//!   `nodes.json`, `<ns>/{pods,services,events,...}.json` and `<ns>/<pod>/logs.txt`.
//! - OpenShift Insights archives: objects stored without `kind`/`apiVersion`, the
//!   kind implied by the path (openshift/insights-operator `docs/gathered-data.md`).
//! - OpenShift objects (must-gather, Insights) naming the release and the scheduler
//!   profile: `ClusterOperator` `kube-scheduler` (its `kube-scheduler` version),
//!   `ClusterVersion` `version` and `Scheduler` `cluster` (`spec.profile`).

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use super::decode::{Body, Decoded};
use crate::model::Cluster;
use crate::source::presets::Preset;
use crate::version::{KubeVersion, Release, VersionSource};

// ---------------------------------------------------------------------------------
// `kubectl cluster-info dump` on stdout

const LOG_START: &str = "==== START logs for container ";

/// `text` without a `kubectl cluster-info dump`'s container logs (for rewriting a
/// dump's objects: `snapshot save --from`).
pub(crate) fn without_container_logs(text: &str) -> Option<String> {
    strip_container_logs(text).map(|(t, _)| t)
}

/// The kind and apiVersion the path of `file` under `root` implies for its objects
/// that lack one (an Insights archive's layout).
pub(crate) fn implied_kind_at(root: &Path, file: &Path) -> Option<(&'static str, &'static str)> {
    if root.is_file() {
        return None;
    }
    implied_kind(&relative_parts(root, file)).map(|k| (k.kind, k.api_version))
}

/// What [`strip_container_logs`] took out.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct StrippedLogs {
    /// Log blocks (one per container).
    pub(super) blocks: usize,
    /// The last block had no END line (a cut-off dump): the rest of the file was
    /// taken as its log.
    pub(super) unterminated: bool,
}

/// The text with every container log block of a `kubectl cluster-info dump` blanked
/// (each of its lines left empty, so line numbers in errors still point into the
/// file), or `None` when there is none. kubectl writes a log's bytes as they come:
/// the END marker may follow the last log line on the same line.
pub(super) fn strip_container_logs(text: &str) -> Option<(String, StrippedLogs)> {
    let first = line_start_of(text, LOG_START)?;
    let mut out = String::with_capacity(text.len());
    out.push_str(&text[..first]);
    let mut rest = &text[first..];
    let mut stripped = StrippedLogs {
        blocks: 0,
        unterminated: false,
    };
    while let Some(at) = line_start_of(rest, LOG_START) {
        out.push_str(&rest[..at]);
        let block = &rest[at..];
        let line_end = block.find('\n').map_or(block.len(), |i| i + 1);
        let start_line = block[..line_end].trim_end();
        // `==== START logs for container C of pod NS/P ====` ends as `==== END ...`.
        let end_marker = start_line.replacen("==== START", "==== END", 1);
        stripped.blocks += 1;
        let end = match block[line_end..].find(&end_marker) {
            Some(i) => {
                let after = line_end + i + end_marker.len();
                after
                    + block[after..]
                        .find('\n')
                        .map_or(block.len() - after, |j| j + 1)
            }
            None => {
                stripped.unterminated = true;
                block.len()
            }
        };
        out.extend(block[..end].bytes().filter(|&b| b == b'\n').map(|_| '\n'));
        rest = &block[end..];
    }
    out.push_str(rest);
    Some((out, stripped))
}

/// Byte offset of the first line of `text` that starts with `prefix`.
fn line_start_of(text: &str, prefix: &str) -> Option<usize> {
    if text.starts_with(prefix) {
        return Some(0);
    }
    text.match_indices(prefix)
        .map(|(i, _)| i)
        .find(|&i| text.as_bytes()[i - 1] == b'\n')
}

// ---------------------------------------------------------------------------------
// Directory layouts

/// What kind of dump a directory is, told by its layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DumpKind {
    /// `oc adm must-gather` / `oc adm inspect`: `cluster-scoped-resources/`, `namespaces/`.
    MustGather,
    /// `kubectl cluster-info dump` (stdout, or `--output-directory`).
    ClusterInfoDump,
    /// An OpenShift Insights operator archive: `config/node/`, `config/pod/`, ...
    InsightsArchive,
}

impl DumpKind {
    /// "the must-gather's", for "v1.34 (from the must-gather's ClusterVersion)".
    pub fn possessive(self) -> &'static str {
        match self {
            DumpKind::MustGather => "the must-gather's",
            DumpKind::ClusterInfoDump => "the cluster-info dump's",
            DumpKind::InsightsArchive => "the Insights archive's",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            DumpKind::MustGather => "an OpenShift must-gather",
            DumpKind::ClusterInfoDump => "a `kubectl cluster-info dump`",
            DumpKind::InsightsArchive => "an OpenShift Insights archive",
        }
    }
}

/// The dump a directory's files (paths relative to it) make, if any.
pub(super) fn directory_kind<'a>(files: impl Iterator<Item = &'a [String]>) -> Option<DumpKind> {
    let mut pods_json = false;
    let mut nodes_json = false;
    for parts in files {
        let has = |a: &str, b: &str| parts.windows(2).any(|w| w[0] == a && w[1] == b);
        if parts.iter().any(|p| p == "cluster-scoped-resources") {
            return Some(DumpKind::MustGather);
        }
        if has("config", "node") || has("config", "pod") || has("insights-operator", "gathers.json")
        {
            return Some(DumpKind::InsightsArchive);
        }
        match parts {
            [n] if n == "nodes.json" || n == "nodes.yaml" => nodes_json = true,
            [_, p] if p == "pods.json" || p == "pods.yaml" => pods_json = true,
            _ => {}
        }
    }
    (nodes_json && pods_json).then_some(DumpKind::ClusterInfoDump)
}

/// Why a file that is not YAML or JSON by name is left out: logs are named as such.
pub(super) fn other_file_reason(parts: &[String]) -> &'static str {
    let name = parts.last().map(String::as_str).unwrap_or_default();
    let in_logs = parts.iter().any(|p| p == "logs");
    if name == "logs.txt" || name.ends_with(".log") || in_logs {
        CONTAINER_LOG
    } else {
        "not YAML or JSON"
    }
}

/// The reason a container log file is left out (counted apart from other files).
pub(super) const CONTAINER_LOG: &str = "a container log";

/// A kind implied by where an Insights archive stores objects that lack one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct ImpliedKind {
    pub(super) kind: &'static str,
    pub(super) api_version: &'static str,
    /// The path pattern, for the note (`config/node/*.json`).
    pub(super) pattern: &'static str,
}

/// The kind an Insights archive's path implies (the archive stores the API object
/// without `kind`/`apiVersion`), for the kinds the scheduler reads and the OpenShift
/// objects naming the release and profile. `parts` is the path relative to the
/// directory read.
pub(super) fn implied_kind(parts: &[String]) -> Option<ImpliedKind> {
    let n = parts.len();
    let name = parts.last()?;
    if !name.ends_with(".json") {
        return None;
    }
    let at = |i: usize| parts.get(n.wrapping_sub(i)).map(String::as_str);
    let k = |kind, api_version, pattern| {
        Some(ImpliedKind {
            kind,
            api_version,
            pattern,
        })
    };
    match (at(4), at(3), at(2)) {
        (_, Some("config"), Some("pod")) => None,
        (_, _, Some("node")) if at(3) == Some("config") => k("Node", "v1", "config/node/*.json"),
        (_, Some("config"), Some("persistentvolumes")) => {
            k("PersistentVolume", "v1", "config/persistentvolumes/*.json")
        }
        (_, Some("storage"), Some("storageclasses")) if at(4) == Some("config") => k(
            "StorageClass",
            "storage.k8s.io/v1",
            "config/storage/storageclasses/*.json",
        ),
        (_, Some("config"), Some("clusteroperator")) => k(
            "ClusterOperator",
            "config.openshift.io/v1",
            "config/clusteroperator/*.json",
        ),
        (_, Some("config"), Some("schedulers")) => k(
            "Scheduler",
            "config.openshift.io/v1",
            "config/schedulers/*.json",
        ),
        (Some("config"), Some("pod"), Some(_)) => k("Pod", "v1", "config/pod/<namespace>/*.json"),
        (Some("config"), Some("pdbs"), Some(_)) => k(
            "PodDisruptionBudget",
            "policy/v1",
            "config/pdbs/<namespace>/*.json",
        ),
        _ if n >= 2 && at(2) == Some("config") && name == "version.json" => k(
            "ClusterVersion",
            "config.openshift.io/v1",
            "config/version.json",
        ),
        // conditional/namespaces/<ns>/pods/<pod>/<pod>.json
        _ if n >= 6
            && at(6) == Some("conditional")
            && at(5) == Some("namespaces")
            && at(3) == Some("pods")
            && at(2).map(|p| format!("{p}.json")).as_deref() == Some(name.as_str()) =>
        {
            k(
                "Pod",
                "v1",
                "conditional/namespaces/<namespace>/pods/<pod>/<pod>.json",
            )
        }
        _ => None,
    }
}

// ---------------------------------------------------------------------------------
// OpenShift objects that name the release and the profile

/// What one OpenShift object says about the cluster's scheduler.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Fact {
    /// `ClusterOperator` NAME's `status.versions` entry named NAME (`kube-scheduler`,
    /// `kube-apiserver`): the Kubernetes release of that component.
    OperatorVersion { operator: String, version: String },
    /// `ClusterVersion`'s OpenShift release (`status.desired.version`).
    OpenShiftVersion(String),
    /// `Scheduler` `cluster`'s `spec.profile` (empty: the default).
    SchedulerProfile(String),
}

/// The OpenShift kinds read for [`Fact`]s (others of their group are skipped).
pub(super) fn fact_kind(kind: &str, api_version: Option<&str>) -> bool {
    matches!(kind, "ClusterOperator" | "ClusterVersion" | "Scheduler")
        && api_version.is_none_or(|av| av.starts_with("config.openshift.io/"))
}

/// The fact an OpenShift object states, if it is one that names the scheduler's
/// release or profile (else it is skipped like any unknown kind).
pub(super) fn decode_fact(kind: &str, body: &Body<'_>) -> Decoded {
    let v: Value = match body {
        Body::Json(s) => serde_json::from_str(s).unwrap_or(Value::Null),
        Body::Value(v) => v.clone(),
    };
    let name = v.pointer("/metadata/name").and_then(Value::as_str);
    let text = |p: &str| v.pointer(p).and_then(Value::as_str).map(str::to_string);
    let fact = match (kind, name) {
        ("ClusterOperator", Some(op @ ("kube-scheduler" | "kube-apiserver"))) => v
            .pointer("/status/versions")
            .and_then(Value::as_array)
            .and_then(|vs| {
                vs.iter()
                    .find(|e| e.get("name").and_then(Value::as_str) == Some(op))
            })
            .and_then(|e| e.get("version").and_then(Value::as_str))
            .map(|version| Fact::OperatorVersion {
                operator: op.to_string(),
                version: version.to_string(),
            }),
        ("ClusterVersion", Some("version")) => text("/status/desired/version")
            .or_else(|| {
                // The newest completed update, when nothing is desired.
                v.pointer("/status/history/0/version")
                    .and_then(Value::as_str)
                    .map(str::to_string)
            })
            .map(Fact::OpenShiftVersion),
        ("Scheduler", Some("cluster")) => Some(Fact::SchedulerProfile(
            text("/spec/profile").unwrap_or_default(),
        )),
        _ => None,
    };
    match fact {
        Some(f) => Decoded::Fact(f),
        None => Decoded::Skip(format!("{kind} (config.openshift.io)")),
    }
}

/// What a dump holds about the cluster's own scheduler, gathered as it is read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DumpFacts {
    /// The dump's kind, when its layout or content tells.
    pub kind: Option<DumpKind>,
    /// `kube-scheduler` / `kube-apiserver` → the release its ClusterOperator reports.
    pub operator_versions: BTreeMap<String, String>,
    /// The OpenShift release of the `ClusterVersion`.
    pub openshift_version: Option<String>,
    /// `Scheduler` `cluster`'s `spec.profile` (`Some("")`: the object, no profile).
    pub scheduler_profile: Option<String>,
    /// Nodes' `status.nodeInfo.kubeletVersion`, counted (not the control plane's).
    pub kubelet_versions: BTreeMap<String, usize>,
    /// Container log blocks or files skipped.
    pub container_logs: usize,
    /// A cluster-info dump cut off inside a log block.
    pub logs_unterminated: bool,
    /// Objects whose kind was taken from their path: `Kind (pattern)` → count.
    pub implied_kinds: BTreeMap<String, usize>,
}

impl DumpFacts {
    pub(super) fn apply(&mut self, fact: Fact) {
        match fact {
            Fact::OperatorVersion { operator, version } => {
                self.operator_versions.insert(operator, version);
            }
            Fact::OpenShiftVersion(v) => self.openshift_version = Some(v),
            Fact::SchedulerProfile(p) => self.scheduler_profile = Some(p),
        }
    }

    /// Take over what a trial loader read.
    pub(super) fn merge(&mut self, other: DumpFacts) {
        self.kind = self.kind.or(other.kind);
        self.operator_versions.extend(other.operator_versions);
        self.openshift_version = other.openshift_version.or(self.openshift_version.take());
        self.scheduler_profile = other.scheduler_profile.or(self.scheduler_profile.take());
        for (k, n) in other.kubelet_versions {
            *self.kubelet_versions.entry(k).or_default() += n;
        }
        self.container_logs += other.container_logs;
        self.logs_unterminated |= other.logs_unterminated;
        for (k, n) in other.implied_kinds {
            *self.implied_kinds.entry(k).or_default() += n;
        }
    }

    /// The profile preset the dump's `Scheduler` `cluster` selects (no profile: the
    /// default, LowNodeUtilization), with the sentence saying so; a profile without a
    /// preset is an error sentence.
    pub fn profile_preset(&self) -> Option<Result<(Preset, String), String>> {
        let profile = self.scheduler_profile.as_deref()?;
        let whose = self.possessive();
        Some(if profile.is_empty() {
            let p = Preset::LowNodeUtilization;
            Ok((
                p,
                format!(
                    "{whose} Scheduler cluster names no profile: replaying {p}, OpenShift's \
                     default ({}); --config or --profile-preset overrides it",
                    p.file().display()
                ),
            ))
        } else {
            match profile.parse::<Preset>() {
                Ok(p) => Ok((
                    p,
                    format!(
                        "replaying scheduler profile {p} (from {whose} Scheduler cluster; {}); \
                         --config or --profile-preset overrides it",
                        p.file().display()
                    ),
                )),
                Err(_) => Err(format!(
                    "{whose} Scheduler cluster names profile {profile:?}, which schedscope has \
                     no preset for; replaying the default profile (--config or \
                     --profile-preset chooses another)"
                )),
            }
        })
    }

    fn possessive(&self) -> &'static str {
        self.kind.map_or("the snapshot's", DumpKind::possessive)
    }

    /// The release the dump records, the most exact source first: the kube-scheduler
    /// operator's own version, the API server's (one OpenShift payload ships both),
    /// the OpenShift release's Kubernetes minor, and (in a cluster-info dump) the
    /// kube-scheduler pod's image tag. Nodes' kubelet versions are never used: a
    /// kubelet may be up to three minors older than the control plane. Also what the
    /// user should hear: the source of a version that is not replayed, or why none
    /// was found.
    pub(super) fn release(&self, cluster: &Cluster) -> (Option<Release>, Vec<String>) {
        let mut notes = Vec::new();
        let whose = self.possessive();
        let mut candidates: Vec<(String, String)> = Vec::new();
        for op in ["kube-scheduler", "kube-apiserver"] {
            if let Some(v) = self.operator_versions.get(op) {
                candidates.push((v.clone(), format!("from {whose} ClusterOperator {op}")));
            }
        }
        if let Some(ocp) = &self.openshift_version {
            match openshift_kube_minor(ocp) {
                Some(minor) => candidates.push((
                    format!("1.{minor}"),
                    format!("from {whose} ClusterVersion: OpenShift {ocp}"),
                )),
                None => notes.push(format!(
                    "{whose} ClusterVersion names OpenShift {ocp}, whose Kubernetes release \
                     schedscope does not know"
                )),
            }
        }
        if self.kind == Some(DumpKind::ClusterInfoDump)
            && let Some(tag) = scheduler_image_tag(cluster)
        {
            candidates.push((tag, format!("from {whose} kube-scheduler pod image")));
        }
        for (text, source) in candidates {
            match KubeVersion::parse(&text) {
                Ok(v) => return (Some(Release::new(v, VersionSource::Dump(source))), notes),
                Err(e) => notes.push(format!(
                    "kube-scheduler {text} ({source}): {e}; replaying v1.35 \
                     (--kube-version chooses another)"
                )),
            }
        }
        if self.kind.is_some() && notes.is_empty() {
            let kubelets: Vec<&str> = self.kubelet_versions.keys().map(String::as_str).collect();
            let seen = match kubelets.as_slice() {
                [] => String::new(),
                [one] => format!(" (its nodes' kubelets are {one}, which may be older)"),
                many => format!(
                    " (its nodes' kubelets are {} to {}, which may be older)",
                    many[0],
                    many[many.len() - 1]
                ),
            };
            notes.push(format!(
                "{whose} objects do not record the control plane's release{seen}; replaying \
                 v1.35 (--kube-version chooses another)"
            ));
        }
        (None, notes)
    }
}

/// The Kubernetes minor an OpenShift 4.y release ships: 1.(y+13) (4.19 → 1.32,
/// 4.20 → 1.33, 4.21 → 1.34, 4.22 → 1.35; the rule holds since 4.6 → 1.19).
fn openshift_kube_minor(ocp: &str) -> Option<u32> {
    let t = ocp.trim().trim_start_matches('v');
    let mut parts = t.split(['.', '-', '+']);
    let (major, minor) = (parts.next()?, parts.next()?);
    let minor: u32 = minor.parse().ok()?;
    (major == "4" && minor >= 6).then_some(minor + 13)
}

/// The tag of the kube-scheduler static pod's image (`registry.k8s.io/kube-scheduler:
/// v1.34.1`), the newest when several differ (during an upgrade).
fn scheduler_image_tag(cluster: &Cluster) -> Option<String> {
    let mut tags: Vec<KubeVersion> = Vec::new();
    let mut texts = BTreeMap::new();
    for p in cluster.pods() {
        if p.namespace != "kube-system" || !p.name.starts_with("kube-scheduler") {
            continue;
        }
        for image in &p.images {
            let last = image.as_str().rsplit('/').next().unwrap_or_default();
            if let Some(tag) = last.strip_prefix("kube-scheduler:")
                && let Ok(v) = KubeVersion::parse(tag)
            {
                tags.push(v);
                texts.insert(v, tag.to_string());
            }
        }
    }
    let newest = tags.into_iter().max()?;
    texts.remove(&newest)
}

/// The lines a load says about a dump's layout (not warnings: nothing is missing
/// because of them).
pub(super) fn notes(facts: &DumpFacts, single_file: bool) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(kind) = facts.kind {
        out.push(format!("read as {}", kind.name()));
    }
    if facts.container_logs > 0 {
        let n = facts.container_logs;
        let what = if single_file {
            format!(
                "the logs of {n} container{} (`==== START logs` … `==== END logs` blocks)",
                if n == 1 { "" } else { "s" }
            )
        } else {
            format!("{n} container log file{}", if n == 1 { "" } else { "s" })
        };
        out.push(format!("skipped {what}"));
    }
    if facts.logs_unterminated {
        out.push(
            "the last container log has no `==== END logs` line: the dump may be cut off"
                .to_string(),
        );
    }
    if !facts.implied_kinds.is_empty() {
        let list: Vec<String> = facts
            .implied_kinds
            .iter()
            .map(|(k, n)| format!("{n} {k}"))
            .collect();
        out.push(format!(
            "objects without `kind` took it from their path: {}",
            list.join(", ")
        ));
    }
    out
}

/// Path components of `file` under `root` (all of them when it is not under it).
pub(super) fn relative_parts(root: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(root).unwrap_or(file);
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(p: &str) -> Vec<String> {
        p.split('/').map(str::to_string).collect()
    }

    #[test]
    fn log_blocks_are_blanked_line_for_line() {
        let text = "{\"kind\": \"NodeList\"}\n\
            ==== START logs for container c of pod ns/p ====\n\
            {\"kind\": \"Pod\"}\n\
            last line without newline==== END logs for container c of pod ns/p ====\n\
            {\"kind\": \"PodList\"}\n";
        let (out, s) = strip_container_logs(text).unwrap();
        assert_eq!(
            out,
            "{\"kind\": \"NodeList\"}\n\n\n\n{\"kind\": \"PodList\"}\n"
        );
        assert_eq!(
            s,
            StrippedLogs {
                blocks: 1,
                unterminated: false
            }
        );
        let cut = "==== START logs for container c of pod ns/p ====\nx\ny";
        let (out, s) = strip_container_logs(cut).unwrap();
        assert_eq!(out, "\n\n");
        assert!(s.unterminated);
        // Only at a line's start.
        assert_eq!(
            strip_container_logs("msg: \"==== START logs for container \"\n"),
            None
        );
    }

    #[test]
    fn insights_paths_imply_kinds() {
        let kind = |p: &str| implied_kind(&parts(p)).map(|k| k.kind);
        assert_eq!(kind("config/node/worker-0.json"), Some("Node"));
        assert_eq!(kind("archive/config/node/worker-0.json"), Some("Node"));
        assert_eq!(
            kind("config/pod/openshift-ingress/router-1.json"),
            Some("Pod")
        );
        assert_eq!(
            kind("conditional/namespaces/ns/pods/p-1/p-1.json"),
            Some("Pod")
        );
        assert_eq!(
            kind("config/persistentvolumes/pv.json"),
            Some("PersistentVolume")
        );
        assert_eq!(
            kind("config/storage/storageclasses/standard-csi.json"),
            Some("StorageClass")
        );
        assert_eq!(kind("config/version.json"), Some("ClusterVersion"));
        assert_eq!(kind("config/schedulers/cluster.json"), Some("Scheduler"));
        assert_eq!(
            kind("config/clusteroperator/kube-scheduler.json"),
            Some("ClusterOperator")
        );
        assert_eq!(
            kind("config/pdbs/ns/guard.json"),
            Some("PodDisruptionBudget")
        );
        assert_eq!(kind("config/pod/openshift-ingress/logs/x.log"), None);
        assert_eq!(kind("config/node/logs/x.json"), None);
        assert_eq!(kind("config/alerts.json"), None);
        assert_eq!(kind("nodes.json"), None);
    }

    #[test]
    fn openshift_releases_map_to_kubernetes_minors() {
        assert_eq!(openshift_kube_minor("4.21.3"), Some(34));
        assert_eq!(openshift_kube_minor("4.19.0-rc.1"), Some(32));
        assert_eq!(openshift_kube_minor("4.7.16"), Some(20));
        assert_eq!(openshift_kube_minor("5.0.0"), None);
    }

    #[test]
    fn layouts_tell_the_dump() {
        let kind = |files: &[&str]| {
            let v: Vec<Vec<String>> = files.iter().map(|f| parts(f)).collect();
            directory_kind(v.iter().map(Vec::as_slice))
        };
        assert_eq!(
            kind(&["nodes.json", "default/pods.json", "default/web/logs.txt"]),
            Some(DumpKind::ClusterInfoDump)
        );
        assert_eq!(
            kind(&["mg/cluster-scoped-resources/core/nodes/n1.yaml"]),
            Some(DumpKind::MustGather)
        );
        assert_eq!(
            kind(&["config/node/n1.json"]),
            Some(DumpKind::InsightsArchive)
        );
        assert_eq!(kind(&["nodes.yaml", "pods.yaml"]), None);
    }
}
