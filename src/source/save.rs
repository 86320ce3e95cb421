//! `schedscope snapshot save`: every object the engine reads, listed from a live
//! cluster (paged), written as multi-document YAML or, for a `.json` file, a `v1`
//! List, which `--snapshot` loads back. `managedFields` are dropped; `--redact`
//! also drops free text that may hold secrets while keeping every field the
//! scheduler reads.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use k8s_openapi::api::apps::v1 as apps;
use k8s_openapi::api::core::v1 as core;
use k8s_openapi::api::policy::v1 as policy;
use k8s_openapi::api::resource::v1 as resource;
use k8s_openapi::api::scheduling::v1 as scheduling;
use k8s_openapi::api::storage::v1 as storage;
use kube::api::{Api, DynamicObject, ListParams};
use kube::{Client, Resource};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::live::{LiveError, LiveOptions, resource_name};

const PAGE: u32 = 500;

/// The annotation `snapshot save` puts on the `kube-system` Namespace: the API
/// server's `gitVersion` (its `/version`), which `kubectl get` output does not carry.
/// The loader reads it back as the release to replay.
pub const VERSION_ANNOTATION: &str = "schedscope.dev/kube-version";
/// The Namespace that carries [`VERSION_ANNOTATION`].
pub const VERSION_NAMESPACE: &str = "kube-system";

/// Records `git_version` on the `kube-system` Namespace among `objects` (added when
/// the list has none).
pub fn record_version(objects: &mut Vec<Value>, git_version: &str) {
    let is_it = |v: &Value| v["kind"] == "Namespace" && v["metadata"]["name"] == VERSION_NAMESPACE;
    if !objects.iter().any(is_it) {
        objects.insert(
            0,
            serde_json::json!({
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {"name": VERSION_NAMESPACE},
            }),
        );
    }
    if let Some(ns) = objects.iter_mut().find(|v| is_it(v))
        && let Some(meta) = ns.get_mut("metadata").and_then(Value::as_object_mut)
    {
        let annotations = meta
            .entry("annotations")
            .or_insert_with(|| Value::Object(Default::default()));
        if let Some(a) = annotations.as_object_mut() {
            a.insert(VERSION_ANNOTATION.into(), git_version.into());
        }
    }
}

/// What a save wrote, per kind, and the optional kinds it could not list.
#[derive(Debug, Default)]
pub struct SaveReport {
    pub objects: BTreeMap<String, usize>,
    /// Optional kinds left out, each with why (`volumeattachments.storage.k8s.io:
    /// forbidden (list)`), in the order tried.
    pub left_out: Vec<String>,
}

impl std::fmt::Display for SaveReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = self
            .objects
            .iter()
            .map(|(k, n)| format!("{n} {k}"))
            .collect();
        write!(f, "{}", parts.join(", "))
    }
}

async fn list_all<K>(api: Api<K>, what: &str) -> Result<Vec<K>, LiveError>
where
    K: Resource + Clone + DeserializeOwned + std::fmt::Debug,
{
    let mut out = Vec::new();
    let mut lp = ListParams::default().limit(PAGE);
    loop {
        let page = api.list(&lp).await.map_err(|source| LiveError::Api {
            what: format!("listing {what}"),
            source,
        })?;
        out.extend(page.items);
        match page.metadata.continue_.filter(|c| !c.is_empty()) {
            Some(c) => lp = lp.continue_token(&c),
            None => return Ok(out),
        }
    }
}

fn to_values<K: Serialize>(
    items: Vec<K>,
    kind: &str,
    redact: bool,
    out: &mut Vec<Value>,
    report: &mut SaveReport,
) {
    let n = items.len();
    for item in items {
        if let Ok(mut v) = serde_json::to_value(&item)
            && clean(&mut v, redact)
        {
            out.push(v);
        }
    }
    if n > 0 {
        *report.objects.entry(kind.to_string()).or_default() += n;
    }
}

/// The items of an optional kind, or `None` when the server forbids listing it
/// (403) or does not serve it (404): then the kind is named in the report. Other
/// failures are errors, as for any kind.
fn optional_kind<K>(
    listed: Result<Vec<K>, LiveError>,
    resource: &str,
    report: &mut SaveReport,
) -> Result<Option<Vec<K>>, LiveError> {
    match listed {
        Ok(items) => Ok(Some(items)),
        Err(LiveError::Api {
            source: kube::Error::Api(e),
            ..
        }) if e.code == 403 || e.code == 404 => {
            let why = if e.code == 403 {
                "forbidden (list); grant get, list and watch on it to save it"
            } else {
                "not served by this cluster"
            };
            report.left_out.push(format!("{resource}: {why}"));
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// List every kind the engine reads. Pods (only) follow `--namespace`.
/// [`fetch_objects`] with the bounds of every other live path: a server that does
/// not answer within the first-answer bound is called silent, and the whole listing
/// must end within `timeout` (a server that accepts and never answers used to hold
/// `snapshot save` for minutes).
pub async fn fetch_objects_within(
    client: &Client,
    opts: &LiveOptions,
    redact: bool,
    timeout: std::time::Duration,
) -> Result<(Vec<Value>, SaveReport), LiveError> {
    super::live::probe(client, opts.first_answer()).await?;
    match tokio::time::timeout(timeout, fetch_objects(client, opts, redact)).await {
        Ok(r) => r,
        Err(_) => Err(LiveError::Timeout(
            timeout,
            "still listing the objects to save".into(),
        )),
    }
}

pub async fn fetch_objects(
    client: &Client,
    opts: &LiveOptions,
    redact: bool,
) -> Result<(Vec<Value>, SaveReport), LiveError> {
    let mut out = Vec::new();
    let mut report = SaveReport::default();
    let c = || client.clone();
    macro_rules! all {
        ($ty:ty, $kind:literal) => {
            to_values(
                list_all(Api::<$ty>::all(c()), $kind).await?,
                $kind,
                redact,
                &mut out,
                &mut report,
            )
        };
    }
    // Cluster-scoped first: the loader resolves pods against priority classes.
    all!(scheduling::PriorityClass, "PriorityClass");
    all!(core::Namespace, "Namespace");
    all!(core::Node, "Node");
    all!(storage::StorageClass, "StorageClass");
    all!(storage::CSINode, "CSINode");
    all!(storage::CSIDriver, "CSIDriver");
    all!(core::PersistentVolume, "PersistentVolume");
    all!(core::PersistentVolumeClaim, "PersistentVolumeClaim");
    all!(policy::PodDisruptionBudget, "PodDisruptionBudget");
    all!(core::Service, "Service");
    all!(apps::ReplicaSet, "ReplicaSet");
    all!(apps::StatefulSet, "StatefulSet");
    all!(core::ReplicationController, "ReplicationController");
    let pods: Api<core::Pod> = match &opts.namespace {
        Some(ns) => Api::namespaced(c(), ns),
        None => Api::all(c()),
    };
    to_values(
        list_all(pods, "Pod").await?,
        "Pod",
        redact,
        &mut out,
        &mut report,
    );
    // Optional kinds: a role without them, or a cluster that does not serve them,
    // still saves the rest; what is left out is said (the plugins that read them are
    // then marked "not modelled" when the snapshot is explained).
    macro_rules! optional {
        ($ty:ty, $kind:literal) => {
            let listed = list_all(Api::<$ty>::all(c()), $kind).await;
            if let Some(items) = optional_kind(listed, &resource_name::<$ty>(), &mut report)? {
                to_values(items, $kind, redact, &mut out, &mut report);
            }
        };
    }
    optional!(storage::VolumeAttachment, "VolumeAttachment");
    optional!(storage::CSIStorageCapacity, "CSIStorageCapacity");
    optional!(resource::DeviceClass, "DeviceClass");
    optional!(resource::ResourceSlice, "ResourceSlice");
    optional!(resource::ResourceClaim, "ResourceClaim");
    optional!(resource::ResourceClaimTemplate, "ResourceClaimTemplate");
    let pg = super::live::pod_group_resource();
    let api: Api<DynamicObject> = Api::all_with(c(), &pg);
    let listed = list_all(api, "PodGroup").await;
    let name = format!("{}.{}", pg.plural, pg.group);
    // Most clusters do not install the Coscheduling CRD: its absence is no news.
    let crd_missing =
        matches!(&listed, Err(LiveError::Api { source: kube::Error::Api(e), .. }) if e.code == 404);
    if !crd_missing && let Some(groups) = optional_kind(listed, &name, &mut report)? {
        let n = groups.len();
        for g in groups {
            if let Ok(mut v) = serde_json::to_value(&g) {
                if let Some(o) = v.as_object_mut() {
                    o.insert("apiVersion".into(), "scheduling.x-k8s.io/v1alpha1".into());
                    o.insert("kind".into(), "PodGroup".into());
                }
                if clean(&mut v, redact) {
                    out.push(v);
                }
            }
        }
        if n > 0 {
            report.objects.insert("PodGroup".into(), n);
        }
    }
    // The release, for replays of this snapshot (`--kube-version` overrides it); a
    // server that does not say leaves the default (v1.35) to the replay.
    if let Ok(info) = client.apiserver_version().await {
        record_version(&mut out, &info.git_version);
    }
    Ok((out, report))
}

/// Where `snapshot save` writes: a file, or stdout for `-o -`.
pub fn is_stdout(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// Whether `snapshot save` may write `path`: a regular file (or a symlink to one: the
/// link is replaced, its target untouched) or a path that does not exist yet.
/// Anything else is refused before a byte is written, since the save renames over
/// its target: a device node, a FIFO or a socket (directly or through a symlink, as
/// `/dev/stdout` is), a directory, and anything in `/dev`, `/proc` or `/sys`, whose
/// entries are never snapshot files. `-o -` writes to stdout.
pub fn check_target(path: &Path) -> anyhow::Result<()> {
    use std::io::ErrorKind;
    if is_stdout(path) {
        return Ok(());
    }
    let refuse = |what: &str| {
        anyhow::anyhow!(
            "cannot write {}: it is {what}; snapshot save writes only to a regular file or \
             a new path (-o - for stdout)",
            path.display()
        )
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if let Ok(real) = std::fs::canonicalize(dir)
        && ["/dev", "/proc", "/sys"]
            .iter()
            .any(|special| real.starts_with(special))
    {
        return Err(refuse(&format!("in {}", real.display())));
    }
    let link = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(()),
        Err(e) => {
            return Err(anyhow::Error::new(e).context(format!("cannot write {}", path.display())));
        }
    };
    let (meta, through) = if link.file_type().is_symlink() {
        match std::fs::metadata(path) {
            Ok(m) => (m, "a symlink to "),
            // A dangling link: the save creates a new file in its place.
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(()),
            Err(e) => {
                return Err(
                    anyhow::Error::new(e).context(format!("cannot write {}", path.display()))
                );
            }
        }
    } else {
        (link, "")
    };
    let ft = meta.file_type();
    if ft.is_file() {
        return Ok(());
    }
    let kind = if ft.is_dir() {
        "a directory"
    } else {
        special_kind(&ft)
    };
    Err(refuse(&format!("{through}{kind}")))
}

#[cfg(unix)]
fn special_kind(ft: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if ft.is_char_device() {
        "a character device"
    } else if ft.is_block_device() {
        "a block device"
    } else if ft.is_fifo() {
        "a FIFO"
    } else if ft.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

#[cfg(not(unix))]
fn special_kind(_: &std::fs::FileType) -> &'static str {
    "not a regular file"
}

/// Render objects as a `v1` List (`json`) or multi-document YAML.
pub fn render_objects(objects: &[Value], json: bool) -> anyhow::Result<String> {
    use anyhow::Context;
    Ok(if json {
        let list = serde_json::json!({
            "apiVersion": "v1",
            "kind": "List",
            "metadata": {},
            "items": objects,
        });
        let mut s = serde_json::to_string_pretty(&list)?;
        s.push('\n');
        s
    } else {
        let mut s = String::new();
        for o in objects {
            s.push_str("---\n");
            s.push_str(&serde_saphyr::to_string(o).context("cannot render YAML")?);
        }
        s
    })
}

/// Write objects as a `v1` List (a `.json` file) or multi-document YAML (any other
/// file, and stdout for `-o -`).
///
/// A file is written to a fresh, exclusively created temporary file in the target's
/// directory (so no planted file or symlink is ever opened), synced, then renamed
/// over the target: a failed save never leaves half a snapshot, and a target that is
/// a symlink is replaced, its target untouched. The file is readable by its owner
/// only, as the temporary file was created.
pub fn write_output(objects: &[Value], path: &Path, stdout: &mut dyn Write) -> anyhow::Result<()> {
    if is_stdout(path) {
        stdout.write_all(render_objects(objects, false)?.as_bytes())?;
        return Ok(stdout.flush()?);
    }
    write_objects(objects, path)
}

/// Write objects to a file: see [`write_output`].
pub fn write_objects(objects: &[Value], path: &Path) -> anyhow::Result<()> {
    use anyhow::Context;
    let json = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"));
    check_target(path)?;
    let text = render_objects(objects, json)?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let cannot = || format!("cannot write {}", path.display());
    let mut tmp = tempfile::NamedTempFile::new_in(dir).with_context(cannot)?;
    tmp.write_all(text.as_bytes()).with_context(cannot)?;
    tmp.as_file().sync_all().with_context(cannot)?;
    tmp.persist(path)
        .map_err(|e| e.error)
        .with_context(cannot)?;
    // The rename itself is durable once the directory is synced.
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// The objects of a snapshot file (or of the files of a directory `--snapshot` reads:
/// recursively, those holding Kubernetes objects), as JSON values, with `List`s
/// flattened: what `snapshot save --from` rewrites. The snapshot is loaded first, so
/// bad input is reported by the loader with file, document and field.
pub fn read_objects(path: &Path) -> anyhow::Result<Vec<Value>> {
    use anyhow::Context;
    // The loader checks every object and decides which files of a directory hold
    // any (recursively, as `--snapshot` reads it); those files are read again here.
    let snapshot = super::load_snapshot(path)
        .with_context(|| format!("cannot load snapshot {}", path.display()))?;
    let files: Vec<std::path::PathBuf> = snapshot
        .report
        .files
        .iter()
        .map(std::path::PathBuf::from)
        .collect();
    let mut out = Vec::new();
    for f in files {
        let bytes = std::fs::read(&f).with_context(|| format!("cannot read {}", f.display()))?;
        let text = super::snapshot::bytes_to_text(&bytes, &f.display().to_string())?;
        // A cluster-info dump's container logs, and an Insights archive's objects
        // without kind, as the loader reads them.
        let text = match super::snapshot::without_container_logs(&text) {
            Some(t) => std::borrow::Cow::Owned(t),
            None => text,
        };
        let implied = super::snapshot::implied_kind_at(path, &f);
        let trimmed = text.trim_start();
        let docs: Vec<Value> = if trimmed.starts_with('{') || trimmed.starts_with('[') {
            serde_json::Deserializer::from_str(trimmed)
                .into_iter::<Value>()
                .collect::<Result<_, _>>()
                .with_context(|| format!("cannot parse {}", f.display()))?
        } else {
            // The loader's own YAML limits and wording (it just read this file).
            super::snapshot::yaml_documents(&text, &f.display().to_string())?
        };
        for d in docs {
            flatten(d, implied, &mut out);
        }
    }
    Ok(out)
}

/// Push the objects of one document: itself, or a list's items (a typed list such
/// as `PodList` lends its kind and apiVersion to items that lack them).
fn flatten(doc: Value, list: Option<(&str, &str)>, out: &mut Vec<Value>) {
    match doc {
        Value::Array(items) => {
            for item in items {
                flatten(item, list, out);
            }
        }
        Value::Object(mut obj) => {
            let kind = obj.get("kind").and_then(Value::as_str).map(str::to_string);
            if let Some(k) = kind.as_deref()
                && let Some(item_kind) = k.strip_suffix("List")
                && let Some(Value::Array(items)) = obj.remove("items")
            {
                let av = obj
                    .get("apiVersion")
                    .and_then(Value::as_str)
                    .unwrap_or("v1")
                    .to_string();
                for item in items {
                    flatten(item, Some((item_kind, &av)), out);
                }
                return;
            }
            if let Some((k, av)) = list.filter(|(k, _)| !k.is_empty()) {
                obj.entry("kind").or_insert_with(|| k.into());
                obj.entry("apiVersion").or_insert_with(|| av.into());
            }
            out.push(Value::Object(obj));
        }
        _ => {}
    }
}

/// Drop `managedFields` from one object and, redacting, everything its kind's
/// allowlist does not name. False when the whole object must go (a kind the
/// scheduler never reads, under `--redact`).
pub fn clean(v: &mut Value, redact: bool) -> bool {
    if let Some(meta) = v.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("managedFields");
    }
    !redact || super::redact::redact_object(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_version_is_recorded_on_kube_system_and_survives_redaction() {
        let mut objects = vec![json!({"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": "n1"}})];
        record_version(&mut objects, "v1.34.1-eks-1");
        assert_eq!(objects[0]["kind"], "Namespace");
        let mut ns = objects[0].clone();
        assert!(clean(&mut ns, true));
        assert_eq!(
            ns["metadata"]["annotations"][VERSION_ANNOTATION],
            "v1.34.1-eks-1"
        );
        // An existing kube-system Namespace gets the annotation, not a second object.
        let mut objects = vec![json!({"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": "kube-system", "annotations": {"a": "b"}}})];
        record_version(&mut objects, "v1.33.3");
        assert_eq!(objects.len(), 1);
        assert_eq!(objects[0]["metadata"]["annotations"]["a"], "b");
        assert_eq!(
            objects[0]["metadata"]["annotations"][VERSION_ANNOTATION],
            "v1.33.3"
        );
    }

    #[test]
    fn redaction_keeps_what_the_scheduler_reads() {
        let mut pod = json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "namespace": "default", "labels": {"app": "web"},
                "managedFields": [{"manager": "kubectl"}],
                "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{secret}",
                                "team": "x"}},
            "spec": {"containers": [{"name": "c", "image": "nginx",
                "command": ["sh", "-c", "echo $TOKEN"], "args": ["--password=hunter2"],
                "env": [{"name": "TOKEN", "value": "hunter2"},
                        {"name": "FROM", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}],
                "ports": [{"containerPort": 80, "hostPort": 8080}],
                "resources": {"requests": {"cpu": "1"}}}],
                "nodeSelector": {"zone": "a"}},
            "status": {"phase": "Pending", "message": "free text",
                "conditions": [{"type": "PodScheduled", "status": "False", "message": "0/1 nodes"}]}
        });
        let mut plain = pod.clone();
        assert!(clean(&mut plain, false));
        assert!(plain["metadata"].get("managedFields").is_none());
        assert_eq!(
            plain["spec"]["containers"][0]["args"][0],
            "--password=hunter2"
        );

        assert!(clean(&mut pod, true));
        let text = pod.to_string();
        assert!(!text.contains("hunter2"), "{text}");
        assert!(!text.contains("last-applied"), "{text}");
        assert!(pod["metadata"].get("annotations").is_none());
        let c = &pod["spec"]["containers"][0];
        assert!(c.get("env").is_none(), "env is not read by the scheduler");
        assert!(c.get("command").is_none() && c.get("args").is_none());
        assert_eq!(c["ports"][0]["hostPort"], 8080);
        assert_eq!(c["resources"]["requests"]["cpu"], "1");
        assert_eq!(c["image"], "nginx");
        assert_eq!(pod["spec"]["nodeSelector"]["zone"], "a");
        assert_eq!(pod["metadata"]["labels"]["app"], "web");
        assert_eq!(
            pod["status"]["conditions"][0]["message"], "0/1 nodes",
            "the scheduler's own word is kept"
        );
    }

    #[test]
    fn pvc_binding_annotations_survive_redaction() {
        let mut pvc = json!({"kind": "PersistentVolumeClaim", "metadata": {"name": "c",
            "annotations": {"volume.kubernetes.io/selected-node": "n1", "note": "x"}}});
        assert!(clean(&mut pvc, true));
        assert_eq!(
            pvc["metadata"]["annotations"],
            json!({"volume.kubernetes.io/selected-node": "n1"})
        );
    }
}
